/* Files written whole or not at all; store.h documents it.  No JSON
 * here: the codec hands over the bytes. */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Opens a new file beside path, under a name no one else has: path with
 * ".XXXXXX.tmp" appended, six characters that differ from try to try.
 * O_EXCL makes the name ours alone (two saves of one trace at once must not
 * share it) and, with O_NOFOLLOW, refuses a link that anyone who can write
 * the folder may have planted there, which would redirect the write.  The
 * mode is 0644 less the umask, as for any file the user creates.  On success
 * the caller owns *tmp_out (malloc'd) and the descriptor returned. */
static int open_temp_beside(char **tmp_out, const char *path, struct ploom_err *err)
{
	static const char letters[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	struct timespec ts;
	uint64_t x;
	char *tmp;
	size_t len = strlen(path);
	int attempt, fd, i;

	*tmp_out = NULL;
	if (asprintf(&tmp, "%s.XXXXXX.tmp", path) < 0)
		return ploom_err_oom(err);
	clock_gettime(CLOCK_REALTIME, &ts);
	/* not a secret: O_EXCL keeps the name ours; varied so that another
	 * process's names rarely collide with ours */
	x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 12) ^
	    (uint64_t)(uintptr_t)&ts;
	for (attempt = 0; attempt < 1000; attempt++) {
		/* splitmix64: every bit of x reaches each letter */
		uint64_t z = (x += 0x9e3779b97f4a7c15ULL);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		z ^= z >> 31;
		for (i = 0; i < 6; i++, z /= 62)
			tmp[len + 1 + i] = letters[z % 62];
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0) {
			*tmp_out = tmp;
			return fd;
		}
		if (errno != EEXIST)
			break;
	}
	/* named by the file asked for: the temporary name is ours, and lies in
	 * the same folder, so the reason is the same */
	ploom_err_set(err, PLOOM_ERR_SYSTEM, "cannot create '%s': %s", path,
		      errno == EEXIST ? "every temporary name tried exists" : strerror(errno));
	free(tmp);
	return -1;
}


int ploom_store_write(const char *path, const char *data, size_t len, struct ploom_err *err)
{
	char *tmp = NULL;
	FILE *f = NULL;
	int fd, ret = -1;

	fd = open_temp_beside(&tmp, path, err);
	if (fd < 0)
		goto done;
	f = fdopen(fd, "w");
	if (!f) {
		ploom_err_set(err, PLOOM_ERR_SYSTEM, "cannot write '%s': %s", path, strerror(errno));
		close(fd);
		goto done;
	}
	if (fwrite(data, 1, len, f) != len || fflush(f) == EOF) {
		ploom_err_set(err, PLOOM_ERR_SYSTEM, "cannot write '%s': %s", path, strerror(errno));
		goto done;
	}
	if (fclose(f) == EOF) {
		f = NULL;
		ploom_err_set(err, PLOOM_ERR_SYSTEM, "cannot write '%s': %s", path, strerror(errno));
		goto done;
	}
	f = NULL;
	/* rename replaces whatever is at path, a link included, without
	 * following it */
	if (rename(tmp, path) < 0) {
		ploom_err_set(err, PLOOM_ERR_SYSTEM, "cannot rename '%s' to '%s': %s", tmp, path,
			      strerror(errno));
		goto done;
	}
	ret = 0;
done:
	if (f)
		fclose(f);
	if (ret < 0 && tmp)
		unlink(tmp);
	free(tmp);
	return ret;
}

/* 1 when path is a directory or a link to one. */
static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Each missing component in turn. */
int ploom_store_make_dirs(const char *dir, struct ploom_err *err)
{
	char *p, *q;
	int ret = 0;

	if (!*dir)
		return ploom_err_set(err, PLOOM_ERR_INPUT, "empty directory name");
	p = strdup(dir);
	if (!p)
		return ploom_err_oom(err);
	for (q = p + 1; ret == 0; q++) {
		if (*q && *q != '/')
			continue;
		{
			char c = *q;
			*q = '\0';
			if (mkdir(p, 0777) < 0 && errno != EEXIST)
				ret = ploom_err_set(err, PLOOM_ERR_SYSTEM,
						    "cannot create directory '%s': %s", p,
						    strerror(errno));
			else if (!is_dir(p))
				/* what mkdir -p says of a file in the way */
				ret = ploom_err_set(err, PLOOM_ERR_SYSTEM,
						    "cannot create directory '%s': %s", p,
						    strerror(EEXIST));
			*q = c;
			if (!c)
				break;
		}
	}
	free(p);
	return ret;
}

int ploom_store_check_dir(const char *dir, struct ploom_err *err)
{
	char *p = strdup(dir), target[256];
	size_t n;
	ssize_t len;
	struct stat st;
	int ret = 0;

	if (!p)
		return ploom_err_oom(err);
	/* "DIR/" names what the link points to: lstat() must see the link */
	for (n = strlen(p); n > 1 && p[n - 1] == '/'; n--)
		p[n - 1] = '\0';
	if (lstat(p, &st) == 0 && S_ISLNK(st.st_mode)) {
		len = readlink(p, target, sizeof(target) - 1);
		if (len < 0)
			len = 0;
		target[len] = '\0';
		ret = ploom_err_set(err, PLOOM_ERR_INPUT,
				    "the trace folder '%s' is a symbolic link (to '%s%s'): "
				    "traces are not written or read through a link; give "
				    "--trace-dir the folder itself",
				    dir, target, (size_t)len == sizeof(target) - 1 ? "..." : "");
	}
	free(p);
	return ret;
}
