/* The words a person reads for a run's steps, waits, files and config;
 * labels.h documents the API. */
#include "labels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kind.h"
#include "plural.h"

struct short_name {
	const char *file;       /* a file of the run's where */
	const char *shown;      /* into file, or owned (owned != 0) */
	int owned;
};

struct ploom_short_names {
	struct short_name *e;   /* one per distinct file, sorted by file */
	size_t n;
};

static const char *last_component(const char *file)
{
	const char *slash = strrchr(file, '/');

	return slash && slash[1] ? slash + 1 : file;
}

/* 1 if the component c[0..len) is "pythonX.Y", or "pythonX.Yt" (a
 * free-threaded build): the folder of a standard library. */
static int is_python_folder(const char *c, size_t len)
{
	size_t i = 6;

	if (len < 9 || strncmp(c, "python", 6))
		return 0;
	if (c[len - 1] == 't')
		len--;
	while (i < len && c[i] >= '0' && c[i] <= '9')
		i++;
	if (i == 6 || i >= len || c[i++] != '.' || i == len)
		return 0;
	while (i < len && c[i] >= '0' && c[i] <= '9')
		i++;
	return i == len;
}

/* The form of file relative to the installation folder of Python it
 * comes from, "<site-packages>/REST" ("<dist-packages>/REST" on Debian's
 * Pythons) after the last such component, else "<stdlib>/REST" after
 * "lib/pythonX.Y/" (or lib64); NULL for neither (or out of memory: *oom
 * set).  Brackets, as Python's own "<string>", so that no path relative
 * to a root reads the same. */
static char *python_relative(const char *file, int *oom)
{
	const char *p = file, *comp, *pkgs = NULL, *std = NULL, *prev = NULL;
	size_t prevlen = 0;
	char *out = NULL;
	int n;

	while (*p) {
		size_t len;

		while (*p == '/')
			p++;
		comp = p;
		while (*p && *p != '/')
			p++;
		len = (size_t)(p - comp);
		if (!*p)
			break; /* the file's own name */
		if ((len == 13 && !strncmp(comp, "site-packages", 13)) ||
		    (len == 13 && !strncmp(comp, "dist-packages", 13)))
			pkgs = comp;
		else if (!pkgs && prev && is_python_folder(comp, len) &&
			 ((prevlen == 3 && !strncmp(prev, "lib", 3)) ||
			  (prevlen == 5 && !strncmp(prev, "lib64", 5))))
			std = comp;
		prev = comp;
		prevlen = len;
	}
	if (pkgs)
		n = asprintf(&out, "<%.13s>%s", pkgs, pkgs + 13);
	else if (std)
		n = asprintf(&out, "<stdlib>%s", strchr(std, '/'));
	else
		return NULL;
	if (n < 0) {
		*oom = 1;
		return NULL;
	}
	return out;
}

static int cmp_short_file(const void *a, const void *b)
{
	return strcmp(((const struct short_name *)a)->file, ((const struct short_name *)b)->file);
}

int ploom_short_names_new(struct ploom_short_names **out, const struct ploom_run *run,
			  struct ploom_err *err)
{
	struct ploom_short_names *sn = calloc(1, sizeof(*sn));
	struct short_name *e = NULL;
	size_t i, j, k, n = 0, nframes = 0;
	int oom = 0;

	*out = NULL;
	if (!sn)
		return ploom_err_oom(err);
	for (i = 0; i < run->outcome.nstacks; i++)
		nframes += run->outcome.stacks[i].nframes;
	e = calloc(run->nsteps + run->outcome.nwaits + nframes + 1, sizeof(*e));
	if (!e) {
		free(sn);
		return ploom_err_oom(err);
	}
	for (i = 0; i < run->nsteps; i++)
		if (run->steps[i].where.file)
			e[n++].file = run->steps[i].where.file;
	for (i = 0; i < run->outcome.nwaits; i++)
		if (run->outcome.waits[i].where.file)
			e[n++].file = run->outcome.waits[i].where.file;
	for (i = 0; i < run->outcome.nstacks; i++)
		for (k = 0; k < run->outcome.stacks[i].nframes; k++)
			if (run->outcome.stacks[i].frames[k].file)
				e[n++].file = run->outcome.stacks[i].frames[k].file;
	qsort(e, n, sizeof(*e), cmp_short_file);
	for (i = j = 0; i < n; i++)
		if (!j || strcmp(e[j - 1].file, e[i].file))
			e[j++] = e[i];
	sn->e = e;
	sn->n = n = j;
	/* a file of a Python installation relative to its folder there; one
	 * relative to the trace's root as it is; an absolute one, or a name
	 * such as "<string>", by its last component, for now */
	for (i = 0; i < n; i++) {
		char *py = python_relative(e[i].file, &oom);
		if (oom) {
			ploom_short_names_free(sn);
			return ploom_err_oom(err);
		}
		if (py)
			e[i] = (struct short_name){e[i].file, py, 1};
		else
			e[i].shown = e[i].file[0] == '/' ? last_component(e[i].file) : e[i].file;
	}
	/* an absolute file whose last component another file shows as well
	 * is shown whole, so that one name means one file */
	for (i = 0; i < n; i++) {
		if (e[i].owned || e[i].file[0] != '/' || e[i].shown == e[i].file)
			continue;
		for (j = 0; j < n; j++)
			if (j != i && (!strcmp(e[j].shown, e[i].shown) ||
				       !strcmp(last_component(e[j].shown), e[i].shown)))
				break;
		if (j < n)
			e[i].shown = e[i].file;
	}
	*out = sn;
	return 0;
}

const char *ploom_short_name(const struct ploom_short_names *sn, const char *file)
{
	struct short_name key = {file, NULL, 0}, *found;

	found = sn ? bsearch(&key, sn->e, sn->n, sizeof(*sn->e), cmp_short_file) : NULL;
	if (found)
		return found->shown;
	return file[0] == '/' ? last_component(file) : file;
}

void ploom_short_names_free(struct ploom_short_names *sn)
{
	size_t i;

	if (!sn)
		return;
	for (i = 0; i < sn->n; i++)
		if (sn->e[i].owned)
			free((char *)sn->e[i].shown);
	free(sn->e);
	free(sn);
}

/* ---- labels a person reads ---- */

char *ploom_run_step_label(const struct ploom_run *run, const struct ploom_step *s)
{
	const char *op = ploom_op_name(s->op);
	const char *mode = "";
	char *text = NULL, *obj = NULL;

	if (s->label)
		return strdup(s->label);
	if (s->op == PLOOM_OP_ACQUIRE && s->mode == PLOOM_ACQUIRE_NONBLOCKING)
		mode = " (nonblocking)";
	else if (s->mode == PLOOM_ACQUIRE_TIMED)
		mode = " (timeout)"; /* a timed acquire or join */
	if (s->obj.kind != PLOOM_OBJ_NONE && !(obj = ploom_run_display_name(run, s->obj)))
		return NULL;
	if (asprintf(&text, "%s%s%s%s", op, obj ? " " : "", obj ? obj : "", mode) < 0)
		text = NULL;
	free(obj);
	return text;
}

char *ploom_run_wait_object(const struct ploom_run *run, const char *object)
{
	struct ploom_obj obj;

	if (!object)
		return strdup("?");
	if (ploom_obj_parse(&obj, object, strlen(object)) == 0 && obj.kind != PLOOM_OBJ_NONE)
		return ploom_run_display_name(run, obj);
	return strdup(object);
}

char *ploom_run_wait_label(const struct ploom_run *run, const struct ploom_wait *wt, int brief)
{
	char *text = NULL, *obj = ploom_run_wait_object(run, wt->object), *holder = NULL;

	if (obj && (wt->holder < 0 || (holder = ploom_run_task_name(run, wt->holder))))
		text = ploom_wait_words(wt, obj, holder, brief);
	free(obj);
	free(holder);
	return text;
}

int ploom_where_label(char **out, const struct ploom_short_names *sn,
		      const struct ploom_where *w)
{
	*out = NULL;
	if (!w->file)
		return 0;
	if (asprintf(out, "%s:%d %s", ploom_short_name(sn, w->file), w->line,
		     w->function ? w->function : "?") < 0) {
		*out = NULL;
		return -1;
	}
	return 0;
}

char *ploom_config_label(const struct ploom_config *c)
{
	char *text = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fprintf(f, "reduction %s", ploom_config_kind(c)->reduction);
	if (c->max_preemptions < 0)
		fputs(", max_preemptions none", f);
	else
		fprintf(f, ", max_preemptions %d", c->max_preemptions);
	if (c->max_steps > 0)
		fprintf(f, ", max_steps %ld", c->max_steps);
	else
		/* the worker caps every schedule there (lib/worker.c) */
		fprintf(f, ", max_steps 0 (the most, %ld)", PLOOM_MAX_STEPS);
	if (c->schedule_timeout_s > 0)
		fprintf(f, ", schedule_timeout %g s", c->schedule_timeout_s);
	else
		fputs(", schedule_timeout none", f);
	/* the project first, as the default adds it (no module is called
	 * "the project"); the names only when there are some */
	if (c->patch_project)
		fputs(", patch the project", f);
	for (i = 0; i < c->npatch; i++)
		fprintf(f, "%s%s", i || c->patch_project ? "," : ", patch ", c->patch[i]);
	/* the scenario first, as the search's default adds it; a module
	 * could be called "scenario", but not "the scenario" */
	if (c->instrument_scenario)
		fputs(", instrument the scenario", f);
	for (i = 0; i < c->ninstrument; i++)
		fprintf(f, "%s%s", i || c->instrument_scenario ? "," : ", instrument ",
			c->instrument[i]);
	/* only the stress model's, which a reader must know to read a
	 * timeout: the idle model is the default */
	if (c->timeouts == PLOOM_TIMEOUTS_ANY)
		fputs(", timeouts any", f);
	if (c->nplain_points)
		fprintf(f, ", %zu plain point%s", c->nplain_points,
			ploom_s((long)c->nplain_points));
	/* a sample's, which says how to run the same schedules again */
	if (ploom_config_kind(c)->flags & PLOOM_KIND_SAMPLE) {
		fprintf(f, ", search %s, seed %lu", ploom_config_kind(c)->search, c->seed);
		if (ploom_config_kind(c)->flags & PLOOM_KIND_PCT_DEPTH)
			fprintf(f, ", pct_depth %d", c->pct_depth);
	}
	if (ferror(f)) {
		fclose(f);
		free(text);
		return NULL;
	}
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

const char *ploom_outcome_detail(const struct ploom_outcome *o)
{
	const char *s = o->summary ? o->summary : "";
	const char *name = ploom_outcome_kind_name(o->kind);
	size_t n = strlen(name);

	/* the rendering says the kind already */
	if (!strncmp(s, name, n) && !strncmp(s + n, ": ", 2))
		s += n + 2;
	return s;
}
