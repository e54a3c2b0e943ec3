/* The failing schedules saved in a trace folder; saved.h documents them. */
#include "saved.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define ID_LEN 16
#define MINIMIZED "-minimized.json"
#define ORIGINAL "-original.json"

struct entry {
	char *path;
	char id[ID_LEN + 1];
	int minimized;
	struct timespec mtime;
};

/* The id of a trace file's name, and whether it is a minimized trace:
 * 1, or 0 when the name is no saved trace's. */
static int parse_name(char id[ID_LEN + 1], int *minimized, const char *name)
{
	size_t i;

	for (i = 0; i < ID_LEN; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return 0;
	if (!strcmp(name + ID_LEN, MINIMIZED))
		*minimized = 1;
	else if (!strcmp(name + ID_LEN, ORIGINAL))
		*minimized = 0;
	else
		return 0;
	memcpy(id, name, ID_LEN);
	id[ID_LEN] = '\0';
	return 1;
}

static int by_id(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->id, y->id);

	/* the minimized one of a pair first */
	return c ? c : y->minimized - x->minimized;
}

static int newest_first(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec > y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec > y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->path, y->path);
}

int ploom_saved_list(struct ploom_saved_list *out, const char *dir, size_t max,
		     struct ploom_err *err)
{
	struct entry *v = NULL, *p;
	struct dirent *de;
	struct stat st;
	size_t n = 0, cap = 0, i, k;
	DIR *d;
	int ret = -1;

	out->paths = NULL;
	out->n = 0;
	d = opendir(dir);
	if (!d) {
		/* no folder there yet, or a file in the way, which saving a
		 * trace will report */
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return ploom_err_set(err, PLOOM_ERR_SYSTEM, "cannot read the folder '%s': %s", dir,
				     strerror(errno));
	}
	/* one thread reads this stream: readdir() is safe here, and readdir_r()
	 * is deprecated */
	/* cppcheck-suppress readdirCalled */
	while ((errno = 0, de = readdir(d))) {
		struct entry e = {0};

		if (!parse_name(e.id, &e.minimized, de->d_name))
			continue;
		if (asprintf(&e.path, "%s/%s", dir, de->d_name) < 0) {
			ploom_err_oom(err);
			goto done;
		}
		/* a link or a pipe planted in the folder is not read: only a
		 * file ploom-explore could have written */
		if (lstat(e.path, &st) < 0 || !S_ISREG(st.st_mode)) {
			free(e.path);
			continue;
		}
		e.mtime = st.st_mtim;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			p = realloc(v, cap * sizeof(*v));
			if (!p) {
				free(e.path);
				ploom_err_oom(err);
				goto done;
			}
			v = p;
		}
		v[n++] = e;
	}
	if (errno) {
		ploom_err_set(err, PLOOM_ERR_SYSTEM, "cannot read the folder '%s': %s", dir,
			      strerror(errno));
		goto done;
	}
	/* one file per id, the minimized one when there are both */
	if (n)
		qsort(v, n, sizeof(*v), by_id);
	for (i = k = 0; i < n; i++) {
		if (k && !strcmp(v[k - 1].id, v[i].id)) {
			free(v[i].path);
			continue;
		}
		v[k++] = v[i];
	}
	n = k;
	if (n)
		qsort(v, n, sizeof(*v), newest_first);
	out->paths = calloc(n < max ? (n ? n : 1) : (max ? max : 1), sizeof(*out->paths));
	if (!out->paths) {
		ploom_err_oom(err);
		goto done;
	}
	for (i = 0; i < n && i < max; i++) {
		out->paths[i] = v[i].path;
		v[i].path = NULL;
	}
	out->n = i;
	ret = 0;
done:
	for (i = 0; i < n; i++)
		free(v[i].path);
	free(v);
	closedir(d);
	return ret;
}

void ploom_saved_list_release(struct ploom_saved_list *list)
{
	size_t i;

	for (i = 0; list->paths && i < list->n; i++)
		free(list->paths[i]);
	free(list->paths);
	list->paths = NULL;
	list->n = 0;
}

static int same(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

int ploom_saved_of_scenario(const struct ploom_trace *trace, const struct ploom_hello *hello)
{
	return ploom_outcome_is_failure(trace->run.outcome.kind) &&
	       !ploom_outcome_is_setup(&trace->run.outcome) &&
	       same(trace->scenario.module, hello->module) &&
	       same(trace->scenario.qualname, hello->qualname);
}
