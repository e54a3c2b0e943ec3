/* Blob ids through libgit2; fingerprint.h documents the API. */
#include "fingerprint.h"

#include <git2.h>
#include <pthread.h>
#include <stdio.h>

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_result;

/* libgit2 keeps its own global state; init it once and never shut it
 * down, since the process ends soon after anyway. */
static void init_libgit2(void)
{
	init_result = git_libgit2_init();
}

static int ensure_init(struct ploom_err *err)
{
	pthread_once(&init_once, init_libgit2);
	if (init_result < 0)
		return ploom_err_set(err, PLOOM_EXIT_USAGE, "cannot initialise libgit2");
	return 0;
}

/* libgit2's message lives in thread-local storage until the next call:
 * copy it at once. */
static int git_fail(struct ploom_err *err, const char *what)
{
	const git_error *e = git_error_last();

	return ploom_err_set(err, PLOOM_EXIT_USAGE, "%s: %s", what,
			     e && e->message ? e->message : "unknown libgit2 error");
}

int ploom_fingerprint_data(char out[PLOOM_OID_HEXSZ + 1], const void *data,
			   size_t len, struct ploom_err *err)
{
	git_oid oid;

	if (ensure_init(err) < 0)
		return -1;
	if (git_odb_hash(&oid, data, len, GIT_OBJECT_BLOB) < 0)
		return git_fail(err, "cannot hash data");
	git_oid_tostr(out, PLOOM_OID_HEXSZ + 1, &oid);
	return 0;
}

int ploom_fingerprint_file(char out[PLOOM_OID_HEXSZ + 1], const char *path,
			   struct ploom_err *err)
{
	git_oid oid;
	char what[200];

	if (ensure_init(err) < 0)
		return -1;
	if (git_odb_hashfile(&oid, path, GIT_OBJECT_BLOB) < 0) {
		snprintf(what, sizeof(what), "cannot hash '%s'", path);
		return git_fail(err, what);
	}
	git_oid_tostr(out, PLOOM_OID_HEXSZ + 1, &oid);
	return 0;
}
