/* Blob ids through libgit2; fingerprint.h documents the API. */
#include "fingerprint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
		return ploom_err_set(err, PLOOM_ERR_SYSTEM, "cannot initialise libgit2");
	return 0;
}

/* libgit2's message lives in thread-local storage until the next call:
 * copy it at once. */
static int git_fail(struct ploom_err *err, const char *what)
{
	const git_error *e = git_error_last();

	return ploom_err_set(err, PLOOM_ERR_SYSTEM, "%s: %s", what,
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
	struct stat st;
	char *data = NULL;
	size_t len = 0;
	int fd, ret = -1;

	/* non-blocking, and regular files only: a trace names this path, and
	 * a FIFO or a device there must not hang or flood the reader */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return ploom_err_set(err, PLOOM_ERR_SYSTEM, "cannot hash '%s': %s", path,
				     strerror(errno));
	if (fstat(fd, &st) < 0) {
		ploom_err_set(err, PLOOM_ERR_SYSTEM, "cannot hash '%s': %s", path, strerror(errno));
		goto done;
	}
	if (!S_ISREG(st.st_mode)) {
		ploom_err_set(err, PLOOM_ERR_INPUT, "cannot hash '%s': not a regular file", path);
		goto done;
	}
	if (st.st_size > PLOOM_FINGERPRINT_MAX) {
		ploom_err_set(err, PLOOM_ERR_INPUT, "cannot hash '%s': larger than %d MiB", path,
			      PLOOM_FINGERPRINT_MAX >> 20);
		goto done;
	}
	data = malloc((size_t)st.st_size + 1);
	if (!data) {
		ploom_err_oom(err);
		goto done;
	}
	/* to the end of the file as it is now, within the size it had */
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, data + len, (size_t)st.st_size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ploom_err_set(err, PLOOM_ERR_SYSTEM, "cannot hash '%s': %s", path,
				      strerror(errno));
			goto done;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	ret = ploom_fingerprint_data(out, data, len, err);
done:
	free(data);
	close(fd);
	return ret;
}
