/* fingerprint.h - git blob ids, computed with libgit2.
 *
 * The failure id of a trace and (issue 3) the fingerprints of a
 * scenario's source files are git blob ids, so that `git hash-object`
 * gives the same answer.  This is the only part of ploom that uses
 * libgit2; it initialises the library once, on first use.
 */
#ifndef PLOOM_FINGERPRINT_H
#define PLOOM_FINGERPRINT_H

#include <stddef.h>

#include "err.h"

/* Length of a hex blob id and the buffer that holds it with its NUL. */
#define PLOOM_OID_HEXSZ 40

/* Writes the hex blob id of the len bytes at data into out (41 bytes,
 * NUL-terminated).  Returns 0, or -1 with err filled. */
int ploom_fingerprint_data(char out[PLOOM_OID_HEXSZ + 1], const void *data,
			   size_t len, struct ploom_err *err);

/* The largest file ploom_fingerprint_file() hashes. */
#define PLOOM_FINGERPRINT_MAX (256 << 20)

/* Writes the hex blob id of the file at path into out, equal to
 * `git hash-object PATH`.  Only a regular file of at most
 * PLOOM_FINGERPRINT_MAX bytes: anything else (a FIFO, a device) is an
 * error at once, never a wait.  Returns 0, or -1 with err filled (naming
 * the file). */
int ploom_fingerprint_file(char out[PLOOM_OID_HEXSZ + 1], const char *path,
			   struct ploom_err *err);

#endif
