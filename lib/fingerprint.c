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

/* The real path of repo's work tree with a final '/', malloc'd, or NULL
 * with err filled.  Resolved like the files compared with it, so that a
 * symbolic link on the way (/tmp, say) does not hide the prefix. */
static char *real_workdir(git_repository *repo, struct ploom_err *err)
{
	char *real = realpath(git_repository_workdir(repo), NULL);
	char *out;
	size_t n;

	if (!real) {
		ploom_err_set(err, PLOOM_ERR_SYSTEM, "cannot resolve '%s': %s",
			      git_repository_workdir(repo), strerror(errno));
		return NULL;
	}
	n = strlen(real);
	out = realloc(real, n + 2);
	if (!out) {
		free(real);
		ploom_err_oom(err);
		return NULL;
	}
	if (n == 0 || out[n - 1] != '/') {
		out[n] = '/';
		out[n + 1] = '\0';
	}
	return out;
}

/* The real path of dir's nearest folder, itself included, that holds a
 * ".git" (a folder, a gitlink file or a link), looking up as git does and
 * stopping where the file system changes, as git and libgit2 do by
 * default; malloc'd, or NULL when there is none.  Nothing from the
 * environment (GIT_DIR, GIT_WORK_TREE, GIT_CEILING_DIRECTORIES) steers
 * it: a replay's current folder may be an unpacked artifact, and what
 * it trusts must not be widened by what was packed with it. */
static char *dotgit_holder(const char *dir, struct ploom_err *err)
{
	struct stat st, here;
	char *p, *probe = NULL, *slash;
	dev_t dev;

	p = realpath(dir, NULL);
	if (!p) {
		ploom_err_set(err, PLOOM_ERR_SYSTEM, "cannot resolve '%s': %s", dir, strerror(errno));
		return NULL;
	}
	if (stat(p, &here) < 0)
		goto none;
	dev = here.st_dev;
	for (;;) {
		free(probe);
		if (asprintf(&probe, "%s%s.git", p, strcmp(p, "/") ? "/" : "") < 0) {
			probe = NULL;
			ploom_err_oom(err);
			goto none;
		}
		if (lstat(probe, &st) == 0) {
			free(probe);
			return p;
		}
		if (!strcmp(p, "/"))
			goto none;
		slash = strrchr(p, '/');
		slash[slash == p] = '\0';
		if (stat(p, &here) < 0 || here.st_dev != dev)
			goto none;
	}
none:
	free(probe);
	free(p);
	return NULL;
}

/* The repository whose work tree holds the folder dir: the one of the
 * nearest ".git" above it (dotgit_holder()), whose work tree must be the
 * folder that holds that ".git".  A repository that puts its work tree
 * elsewhere (core.worktree, or a worktree's link back to another folder)
 * is not trusted: a ".git" planted in a replay's folder with
 * core.worktree=/ would make the whole disk "the repository".  A gitlink
 * file ("gitdir: PATH", as worktrees and submodules have) is accepted
 * when PATH is a repository libgit2 opens and its work tree is that same
 * folder.  Any failure to open one counts as none: a checkout that
 * libgit2 refuses (GIT_EOWNER, a damaged .git) must not stop a
 * recording, which then simply records no repository.  Returns 1 with
 * *out and *workdir (its real path ending in '/', malloc'd) set; 0 when
 * there is none; -2 with why filled (kind PLOOM_ERR_INPUT) when the
 * nearest repository puts its work tree elsewhere; -1 with why filled. */
static int open_worktree_repo(git_repository **out, char **workdir, const char *dir,
			      struct ploom_err *why)
{
	struct ploom_err ignored = {0, ""};
	char *holder = dotgit_holder(dir, why), *wd = NULL;
	size_t n;
	int ret = 0;

	*out = NULL;
	*workdir = NULL;
	if (!holder)
		return why->kind == PLOOM_ERR_NOMEM ? -1 : 0;
	/* NO_SEARCH: holder is where git would look, and libgit2 must not
	 * look anywhere else; without GIT_REPOSITORY_OPEN_FROM_ENV it reads
	 * no GIT_DIR or GIT_WORK_TREE */
	if (git_repository_open_ext(out, holder, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		*out = NULL;
		goto done;
	}
	if (git_repository_is_bare(*out) || !git_repository_workdir(*out))
		goto done;
	wd = real_workdir(*out, &ignored);
	if (!wd) {
		ret = ignored.kind == PLOOM_ERR_NOMEM ? ploom_err_oom(why) : 0;
		goto done;
	}
	n = strlen(holder);
	if (strncmp(wd, holder, n) || strcmp(wd + n, strcmp(holder, "/") ? "/" : "")) {
		ploom_err_set(why, PLOOM_ERR_INPUT,
			      "the repository of '%s/.git' puts its work tree at '%s' "
			      "(core.worktree?), not the folder that holds it: ploom trusts only "
			      "that folder",
			      strcmp(holder, "/") ? holder : "", wd);
		ret = -2;
		goto done;
	}
	*workdir = wd;
	wd = NULL;
	ret = 1;
done:
	if (ret != 1) {
		git_repository_free(*out);
		*out = NULL;
	}
	free(wd);
	free(holder);
	return ret;
}

int ploom_repo_workdir(char **out, const char *dir, struct ploom_err *err)
{
	struct ploom_err why = {0, ""};
	git_repository *repo = NULL;
	int r;

	*out = NULL;
	if (ensure_init(err) < 0)
		return -1;
	r = open_worktree_repo(&repo, out, dir, &why);
	git_repository_free(repo);
	if (r < 0) {
		if (err)
			*err = why;
		return -1;
	}
	return r;
}

void ploom_repo_file_release(struct ploom_repo_file *f)
{
	free(f->workdir);
	free(f->relpath);
	memset(f, 0, sizeof(*f));
}

int ploom_repo_file_find(struct ploom_repo_file *out, const char *path,
			 struct ploom_err *err)
{
	struct ploom_err why = {0, ""};
	git_repository *repo = NULL;
	unsigned int flags = 0;
	git_oid oid;
	char *real = NULL, *dir = NULL, *slash;
	size_t n;
	int ret = -1, r;

	memset(out, 0, sizeof(*out));
	if (ensure_init(err) < 0)
		return -1;
	real = realpath(path, NULL);
	if (!real)
		return ploom_err_set(err, PLOOM_ERR_SYSTEM, "cannot resolve '%s': %s", path,
				     strerror(errno));
	dir = strdup(real);
	if (!dir) {
		ploom_err_oom(err);
		goto done;
	}
	slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir] = '\0'; /* "/f.py" lives in "/" */
	/* a repository that is not trusted to replay is none to record in:
	 * the trace then records its folder */
	r = open_worktree_repo(&repo, &out->workdir, dir, &why);
	if (r == -1) {
		if (err)
			*err = why;
		goto done;
	}
	if (r != 1) {
		ret = 0;
		goto done;
	}
	n = strlen(out->workdir);
	/* a file under .git, or reached through a link out of the tree, is
	 * not part of the work tree */
	if (strncmp(real, out->workdir, n) || !real[n] || !strncmp(real + n, ".git/", 5)) {
		ploom_repo_file_release(out);
		ret = 0;
		goto done;
	}
	out->relpath = strdup(real + n);
	if (!out->relpath) {
		ploom_err_oom(err);
		goto done;
	}
	if (git_repository_head_unborn(repo) == 1) {
		out->commit[0] = '\0';
	} else {
		if (git_reference_name_to_id(&oid, repo, "HEAD") < 0) {
			git_fail(err, "cannot read the repository's HEAD");
			goto done;
		}
		git_oid_tostr(out->commit, sizeof(out->commit), &oid);
	}
	if (git_status_file(&flags, repo, out->relpath) < 0) {
		git_fail(err, "cannot read the file's git status");
		goto done;
	}
	out->dirty = flags != GIT_STATUS_CURRENT;
	ret = 1;
done:
	if (ret < 0)
		ploom_repo_file_release(out);
	git_repository_free(repo);
	free(dir);
	free(real);
	return ret;
}
