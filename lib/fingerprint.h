/* fingerprint.h - git blob ids and repositories, through libgit2.
 *
 * The failure id of a trace and the fingerprints of a scenario's source
 * files are git blob ids, so that `git hash-object` gives the same
 * answer.  A fingerprinted file's place in its repository (the path
 * relative to the work tree, the HEAD commit, whether the file differs
 * from it) lets a trace find its files again in another clone.  This is
 * the only part of ploom that uses libgit2; it initialises the library
 * once, on first use.
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

/* Where a file sits in a git work tree. */
struct ploom_repo_file {
	char *workdir;  /* the work tree's root, absolute, ending in '/' */
	char *relpath;  /* the file relative to workdir */
	char commit[PLOOM_OID_HEXSZ + 1]; /* HEAD's commit id, "" for an unborn HEAD */
	int dirty;      /* the file differs from HEAD in the index or the work
			 * tree, or git does not track it */
};

/* The repository of a folder, for recording and replay alike, is the one
 * of the nearest ".git" (a folder, a gitlink file or a link) at or above
 * it, not past a change of file system, opened by libgit2 there and
 * nowhere else, reading nothing from the environment (GIT_DIR,
 * GIT_WORK_TREE); it counts only when its work tree is the folder that
 * holds that ".git" (not core.worktree elsewhere, nor the folder of
 * another worktree whose gitdir a planted .git file names).  What a replay
 * trusts is that folder and nothing wider. */

/* Finds the repository of the file at path (absolute; symbolic links are
 * resolved) by looking up from its folder (above).  Returns 1 with
 * *out filled (the caller releases it with ploom_repo_file_release());
 * 0 when the file is in no repository with a work tree, in one that
 * libgit2 will not open (not owned by this user, say), or in one whose
 * work tree is elsewhere: the caller then records no repository rather
 * than failing; -1 with err filled. */
int ploom_repo_file_find(struct ploom_repo_file *out, const char *path,
			 struct ploom_err *err);

/* Frees what ploom_repo_file_find() filled in f and zeroes it; safe on a
 * zeroed struct. */
void ploom_repo_file_release(struct ploom_repo_file *f);

/* The work tree root (absolute, ending in '/') of the repository that
 * holds the folder dir, looking up from it (above).  Returns 1 and the
 * caller owns *out (free()); 0 when there is none, or none libgit2 will
 * open (*out NULL); -1 with err filled: kind PLOOM_ERR_INPUT when the
 * nearest repository puts its work tree elsewhere,
 *   the repository of '/art/.git' puts its work tree at '/' (core.worktree?), not the folder that holds it: ploom trusts only that folder */
int ploom_repo_workdir(char **out, const char *dir, struct ploom_err *err);

#endif
