/* A trace's source: its fingerprints, its root and the paths relative to
 * it; source.h documents the API. */
#include "source.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fingerprint.h"

int ploom_import_path_is_safe(const char *path)
{
	return !strcmp(path, ".") || ploom_relpath_is_safe(path);
}

int ploom_trace_add_import_path(struct ploom_trace *trace, const char *rel,
				struct ploom_err *err)
{
	struct ploom_scenario *sc = &trace->scenario;
	char **grown, *copy;
	size_t i;

	for (i = 0; i < sc->nimport_paths; i++)
		if (!strcmp(sc->import_paths[i], rel))
			return 0;
	if (sc->nimport_paths >= PLOOM_IMPORT_PATHS_MAX)
		return ploom_err_set(err, PLOOM_ERR_INPUT, "more than %d import paths",
				     PLOOM_IMPORT_PATHS_MAX);
	copy = strdup(rel);
	grown = copy ? realloc(sc->import_paths, (sc->nimport_paths + 1) * sizeof(*grown)) : NULL;
	if (!grown) {
		free(copy);
		return ploom_err_oom(err);
	}
	grown[sc->nimport_paths++] = copy;
	sc->import_paths = grown;
	return 0;
}

int ploom_trace_add_fingerprint(struct ploom_trace *trace, const char *path,
				const char *blob, struct ploom_err *err)
{
	struct ploom_fingerprint *f;

	f = realloc(trace->fingerprints, (trace->nfingerprints + 1) * sizeof(*f));
	if (!f)
		return ploom_err_oom(err);
	trace->fingerprints = f;
	f = &f[trace->nfingerprints];
	f->path = strdup(path);
	f->blob = strdup(blob);
	f->relpath = NULL;
	if (!f->path || !f->blob) {
		free(f->path);
		free(f->blob);
		return ploom_err_oom(err);
	}
	trace->nfingerprints++;
	return 0;
}

int ploom_trace_set_last_relpath(struct ploom_trace *trace, const char *relpath,
				 struct ploom_err *err)
{
	struct ploom_fingerprint *f;

	assert(trace->nfingerprints > 0);
	f = &trace->fingerprints[trace->nfingerprints - 1];
	free(f->relpath);
	f->relpath = NULL;
	if (relpath && !(f->relpath = strdup(relpath)))
		return ploom_err_oom(err);
	return 0;
}

int ploom_relpath_is_safe(const char *relpath)
{
	const char *p = relpath, *end;
	size_t n;

	if (!*p || *p == '/')
		return 0;
	for (;;) {
		end = strchr(p, '/');
		n = end ? (size_t)(end - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		if (!end)
			return 1;
		p = end + 1;
	}
}

/* root: path without its last len bytes when they are "/" + rel, with
 * the '/'; NULL otherwise (or when out of memory: *oom). */
static char *strip_relpath(const char *path, const char *rel, int *oom)
{
	size_t n = strlen(path), r = strlen(rel);
	char *root;

	if (n <= r + 1 || strcmp(path + n - r, rel) || path[n - r - 1] != '/')
		return NULL;
	root = strndup(path, n - r);
	*oom = !root;
	return root;
}

/* file below dir: the rest of file after dir and a '/', when that is a
 * safe relative path; else NULL.  Malloc'd; *oom set when memory ran
 * out. */
static char *below(const char *dir, const char *file, int *oom)
{
	size_t n = strlen(dir);
	char *out;

	while (n && dir[n - 1] == '/')
		n--;
	if (strncmp(file, dir, n) || file[n] != '/' || !ploom_relpath_is_safe(file + n + 1))
		return NULL;
	out = strdup(file + n + 1);
	*oom = !out;
	return out;
}

/* The scenario file relative to the project root its worker found, when
 * that root lies above the file's own folder (the relative path has a
 * folder in it) and the file's path, as the trace names it, ends in that
 * relative path; else NULL.  The root and the file are compared as
 * named, then with symbolic links resolved.  Malloc'd; *oom set when
 * memory ran out. */
static char *project_relpath(const struct ploom_trace *t, int *oom)
{
	const char *file = t->scenario.file;
	char *rel, *real, *real_root, *root;

	if (!t->project_root || !file)
		return NULL;
	rel = below(t->project_root, file, oom);
	if (!rel && !*oom && (real = realpath(file, NULL))) {
		if ((real_root = realpath(t->project_root, NULL)))
			rel = below(real_root, real, oom);
		free(real_root);
		free(real);
	}
	if (!rel || !strchr(rel, '/'))
		goto none;
	/* the root is the file without its relative path (trace_roots()) */
	root = strip_relpath(file, rel, oom);
	if (!root)
		goto none;
	free(root);
	return rel;
none:
	free(rel);
	return NULL;
}

/* Sets the source and the relative paths of the trace's one fingerprint,
 * that of scenario.file. */
static int locate_source(struct ploom_trace *trace, struct ploom_err *err)
{
	struct ploom_repo_file rf;
	const char *name;
	int r, oom = 0;

	r = ploom_repo_file_find(&rf, trace->scenario.file, err);
	if (r < 0)
		return -1;
	if (r == 1) {
		trace->source.root = strdup("repository");
		trace->source.commit = rf.commit[0] ? strdup(rf.commit) : NULL;
		trace->source.dirty = rf.dirty;
		trace->scenario.relpath = strdup(rf.relpath);
		r = !trace->source.root || (rf.commit[0] && !trace->source.commit) ||
		    !trace->scenario.relpath;
		ploom_repo_file_release(&rf);
		if (r)
			return ploom_err_oom(err);
	} else if ((trace->scenario.relpath = project_relpath(trace, &oom))) {
		/* the project's root, as the search's worker resolved
		 * imports from it (python/ploom/_project.py) */
		trace->source.root = strdup("project");
		if (!trace->source.root)
			return ploom_err_oom(err);
	} else {
		if (oom)
			return ploom_err_oom(err);
		name = strrchr(trace->scenario.file, '/');
		name = name ? name + 1 : trace->scenario.file;
		if (!*name)
			return 0;
		trace->source.root = strdup("folder");
		trace->scenario.relpath = strdup(name);
		if (!trace->source.root || !trace->scenario.relpath)
			return ploom_err_oom(err);
	}
	return ploom_trace_set_last_relpath(trace, trace->scenario.relpath, err);
}

/* What a file of a where becomes: one seen before and its new name
 * (NULL: it stays), both owned here. */
struct rel_cache {
	struct {
		char *from;
		char *to;
	} *e;
	size_t n;
};

/* file relative to root (ending in '/'), or to real_root when the real
 * path of file lies below it; NULL when it lies below neither.  The
 * result is malloc'd; *oom set when memory ran out. */
static char *relative_to(const char *root, const char *real_root, const char *file, int *oom)
{
	size_t n;
	char *real, *out = NULL;

	if (file[0] != '/')
		return NULL;
	n = strlen(root);
	if (!strncmp(file, root, n) && ploom_relpath_is_safe(file + n)) {
		out = strdup(file + n);
		*oom = !out;
		return out;
	}
	if (!real_root || !(real = realpath(file, NULL)))
		return NULL;
	n = strlen(real_root);
	if (!strncmp(real, real_root, n) && ploom_relpath_is_safe(real + n)) {
		out = strdup(real + n);
		*oom = !out;
	}
	free(real);
	return out;
}

static int relativize(struct ploom_where *w, const char *root, const char *real_root,
		      struct rel_cache *cache, struct ploom_err *err)
{
	size_t i;
	char *to;
	int oom = 0;

	if (!w->file)
		return 0;
	for (i = 0; i < cache->n; i++)
		if (!strcmp(cache->e[i].from, w->file))
			break;
	if (i == cache->n) {
		void *e = realloc(cache->e, (cache->n + 1) * sizeof(*cache->e));
		if (!e)
			return ploom_err_oom(err);
		cache->e = e;
		cache->e[i].from = strdup(w->file);
		if (!cache->e[i].from)
			return ploom_err_oom(err);
		cache->e[i].to = relative_to(root, real_root, w->file, &oom);
		cache->n++;
		if (oom)
			return ploom_err_oom(err);
	}
	if (!cache->e[i].to)
		return 0;
	to = strdup(cache->e[i].to);
	if (!to)
		return ploom_err_oom(err);
	free(w->file);
	w->file = to;
	return 0;
}

/* The trace's root as the scenario's path names it (*root) and as its
 * real path does (*real_root, NULL when the file has none), both malloc'd;
 * *root NULL when the trace has no root, or out of memory (*oom set). */
static void trace_roots(const struct ploom_trace *t, char **root, char **real_root, int *oom)
{
	char *real;

	*root = *real_root = NULL;
	if (!t->source.root || !t->scenario.relpath || !t->scenario.file)
		return;
	*root = strip_relpath(t->scenario.file, t->scenario.relpath, oom);
	if (!*root)
		return;
	real = realpath(t->scenario.file, NULL);
	if (real)
		*real_root = strip_relpath(real, t->scenario.relpath, oom);
	free(real);
}

/* The files of the run's where below the trace's root become relative
 * to it: the root is scenario.file without its relpath, and, when a
 * symbolic link lies on the way, its real path too. */
static int relativize_where(struct ploom_trace *t, struct ploom_err *err)
{
	struct rel_cache cache = {NULL, 0};
	struct ploom_run *run = &t->run;
	char *root, *real_root;
	int oom = 0, ret = -1;
	size_t i, k;

	trace_roots(t, &root, &real_root, &oom);
	if (!root) {
		ret = oom ? ploom_err_oom(err) : 0;
		goto done;
	}
	if (oom) {
		ploom_err_oom(err);
		goto done;
	}
	for (i = 0; i < run->nsteps; i++)
		if (relativize(&run->steps[i].where, root, real_root, &cache, err) < 0)
			goto done;
	for (i = 0; i < run->outcome.nwaits; i++)
		if (relativize(&run->outcome.waits[i].where, root, real_root, &cache, err) < 0)
			goto done;
	for (i = 0; i < run->outcome.nstacks; i++)
		for (k = 0; k < run->outcome.stacks[i].nframes; k++)
			if (relativize(&run->outcome.stacks[i].frames[k], root, real_root, &cache,
				       err) < 0)
				goto done;
	ret = 0;
done:
	for (i = 0; i < cache.n; i++) {
		free(cache.e[i].from);
		free(cache.e[i].to);
	}
	free(cache.e);
	free(root);
	free(real_root);
	return ret;
}

/* folder (absolute) relative to root (ending in '/'), "." for the root
 * itself; NULL when it lies outside, or the result would not be a safe
 * import path.  Malloc'd; *oom set when memory ran out. */
static char *rel_in(const char *root, const char *folder, int *oom)
{
	size_t n = strlen(root), k = strlen(folder);
	char *out;

	while (k > 1 && folder[k - 1] == '/')
		k--;
	if (n && k == n - 1 && !strncmp(folder, root, k))
		out = strdup(".");
	else if (k > n && !strncmp(folder, root, n))
		out = strndup(folder + n, k - n);
	else
		return NULL;
	*oom = !out;
	if (out && !ploom_import_path_is_safe(out)) {
		free(out);
		out = NULL;
	}
	return out;
}

/* rel_in() of root, else of real_root (the root's real path, or NULL)
 * for folder's real path. */
static char *import_rel(const char *root, const char *real_root, const char *folder, int *oom)
{
	char *out = rel_in(root, folder, oom), *real;

	if (out || *oom || !real_root || !(real = realpath(folder, NULL)))
		return out;
	out = rel_in(real_root, real, oom);
	free(real);
	return out;
}

/* The scenario's cwd and import_paths (struct ploom_scenario): this
 * process's current folder and PYTHONPATH, which the workers it starts
 * inherit, as far as they lie in the trace's root. */
static int record_import_paths(struct ploom_trace *t, struct ploom_err *err)
{
	char *root, *real_root, *cwd = NULL, *list = NULL;
	const char *env = getenv("PYTHONPATH");
	int oom = 0, ret = -1;

	ploom_trace_release_import_paths(t);
	trace_roots(t, &root, &real_root, &oom);
	if (!root)
		return oom ? ploom_err_oom(err) : 0;
	cwd = getcwd(NULL, 0);
	if (!oom && cwd)
		t->scenario.cwd = import_rel(root, real_root, cwd, &oom);
	if (!oom && env && *env && !(list = strdup(env)))
		oom = 1;
	for (char *save = NULL, *entry = list ? strtok_r(list, ":", &save) : NULL; entry && !oom;
	     entry = strtok_r(NULL, ":", &save)) {
		char *abs = NULL, *rel;

		/* a relative entry is taken from the current folder, as Python does */
		if (entry[0] != '/') {
			if (!cwd || asprintf(&abs, "%s/%s", cwd, entry) < 0)
				continue;
		}
		rel = import_rel(root, real_root, abs ? abs : entry, &oom);
		free(abs);
		if (rel && ploom_trace_add_import_path(t, rel, err) < 0) {
			free(rel);
			goto done;
		}
		free(rel);
	}
	ret = oom ? ploom_err_oom(err) : 0;
done:
	free(root);
	free(real_root);
	free(cwd);
	free(list);
	return ret;
}

/* Fingerprints the trace's module_files that lie in its root, each with
 * its path relative to it. */
static int fingerprint_modules(struct ploom_trace *t, struct ploom_err *err)
{
	char *root, *real_root, *rel;
	char blob[PLOOM_OID_HEXSZ + 1];
	struct ploom_err why = {0, ""};
	int oom = 0, ret = -1;
	size_t i, k;

	if (!t->nmodule_files)
		return 0;
	trace_roots(t, &root, &real_root, &oom);
	if (!root)
		return oom ? ploom_err_oom(err) : 0;
	for (i = 0; i < t->nmodule_files && !oom; i++) {
		const char *file = t->module_files[i];

		for (k = 0; k < t->nfingerprints && strcmp(t->fingerprints[k].path, file); k++)
			;
		if (k < t->nfingerprints)
			continue;
		rel = import_rel(root, real_root, file, &oom);
		if (!rel || !strcmp(rel, ".") || ploom_fingerprint_file(blob, file, &why) < 0) {
			free(rel);
			continue;
		}
		if (ploom_trace_add_fingerprint(t, file, blob, err) < 0 ||
		    ploom_trace_set_last_relpath(t, rel, err) < 0) {
			free(rel);
			goto done;
		}
		free(rel);
	}
	ret = oom ? ploom_err_oom(err) : 0;
done:
	free(root);
	free(real_root);
	return ret;
}

int ploom_trace_fingerprint_source(struct ploom_trace *trace, struct ploom_err *err)
{
	char blob[PLOOM_OID_HEXSZ + 1];

	ploom_trace_release_source(trace);
	if (!trace->scenario.file)
		return 0;
	if (ploom_fingerprint_file(blob, trace->scenario.file, err) < 0)
		return -1;
	if (ploom_trace_add_fingerprint(trace, trace->scenario.file, blob, err) < 0 ||
	    locate_source(trace, err) < 0 || record_import_paths(trace, err) < 0 ||
	    fingerprint_modules(trace, err) < 0)
		return -1;
	return relativize_where(trace, err);
}

int ploom_trace_copy_fingerprints(struct ploom_trace *to, const struct ploom_trace *from,
				  struct ploom_err *err)
{
	size_t i;

	if (to == from)
		return 0;
	ploom_trace_release_source(to);
	for (i = 0; i < from->nfingerprints; i++)
		if (ploom_trace_add_fingerprint(to, from->fingerprints[i].path,
						from->fingerprints[i].blob, err) < 0 ||
		    ploom_trace_set_last_relpath(to, from->fingerprints[i].relpath, err) < 0)
			return -1;
	to->source.dirty = from->source.dirty;
	for (i = 0; i < from->scenario.nimport_paths; i++)
		if (ploom_trace_add_import_path(to, from->scenario.import_paths[i], err) < 0)
			return -1;
	if ((from->scenario.cwd && !(to->scenario.cwd = strdup(from->scenario.cwd))) ||
	    (from->scenario.relpath &&
	     !(to->scenario.relpath = strdup(from->scenario.relpath))) ||
	    (from->source.root && !(to->source.root = strdup(from->source.root))) ||
	    (from->source.commit && !(to->source.commit = strdup(from->source.commit))))
		return ploom_err_oom(err);
	return relativize_where(to, err);
}
