/* store.h - files written whole or not at all.
 *
 * A file is written under a name of its own beside its final one, then
 * renamed over it, so that a reader never sees half a file: the next tool
 * in a pipeline, or a person looking at a folder while ploom-explore
 * saves a trace, sees the old file, no file, or the whole new one.  The
 * trace codec saves traces through it (json.h); it knows nothing of what
 * the bytes mean.
 */
#ifndef PLOOM_STORE_H
#define PLOOM_STORE_H

#include <stddef.h>

#include "err.h"

/* Writes the len bytes at data to a new file beside path under a name of
 * its own (PATH.XXXXXX.tmp, created with O_EXCL and O_NOFOLLOW, mode 0644
 * less the umask), then renames it to path, so that writers at once into
 * one folder do not collide, and a link planted in the folder redirects
 * nothing.  Returns 0, or -1 with err filled with the reason, naming path
 * ("cannot create 'PATH': ...", "cannot write 'PATH': ..."); the temporary
 * file is then removed. */
int ploom_store_write(const char *path, const char *data, size_t len, struct ploom_err *err);

/* Creates the folder dir and its missing parents, as mkdir -p: a folder
 * that exists, or a link to one, is fine; a file in the way is an error
 * ("cannot create directory 'PART': File exists").  Returns 0, or -1 with
 * err filled. */
int ploom_store_make_dirs(const char *dir, struct ploom_err *err);

/* Refuses a folder that is a symbolic link (the last part of dir, a
 * trailing '/' aside; a link on the way to it is the user's own path): a
 * .ploom committed as a link to another place would have its traces
 * written and its saved ones read there.  Returns 0 for a folder, a
 * missing one or anything else that is no link (saving then says what is
 * wrong), or -1 with err filled (PLOOM_ERR_INPUT, "the trace folder 'DIR'
 * is a symbolic link (to 'TARGET') ...") */
int ploom_store_check_dir(const char *dir, struct ploom_err *err);

#endif
