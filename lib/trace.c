/* The run and trace model; trace.h documents the API. */
#include "trace.h"

#include <assert.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "fingerprint.h"
#include "kind.h"
#include "plural.h"

/* the bound's milliseconds fit a `run` command's TIMEOUT_MS */
_Static_assert(LONG_MAX / 2 / 1000 >= (long)PLOOM_MAX_TIMEOUT_S, "long too small");

int ploom_timeout_ms(long *out, double seconds)
{
	/* written so that NaN fails too: every comparison with it is false */
	if (!(seconds >= 0 && seconds <= PLOOM_MAX_TIMEOUT_S))
		return -1;
	*out = (long)(seconds * 1000.0 + 0.5);
	return 0;
}

double ploom_timeout_min(double a, double b)
{
	if (a <= 0)
		return b;
	if (b <= 0)
		return a;
	return a < b ? a : b;
}

char *ploom_strdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

void ploom_where_release(struct ploom_where *w)
{
	free(w->file);
	free(w->function);
	memset(w, 0, sizeof(*w));
}

int ploom_where_copy(struct ploom_where *to, const struct ploom_where *from, int line,
		     struct ploom_err *err)
{
	memset(to, 0, sizeof(*to));
	if (!from->file)
		return 0;
	to->file = strdup(from->file);
	to->function = strdup(from->function ? from->function : "?");
	if (!to->file || !to->function) {
		ploom_where_release(to);
		return ploom_err_oom(err);
	}
	to->line = line;
	return 0;
}

void ploom_outcome_release_stacks(struct ploom_outcome *o)
{
	size_t i, k;

	for (i = 0; i < o->nstacks; i++) {
		for (k = 0; k < o->stacks[i].nframes; k++)
			ploom_where_release(&o->stacks[i].frames[k]);
		free(o->stacks[i].frames);
	}
	free(o->stacks);
	o->stacks = NULL;
	o->nstacks = 0;
}

static void step_release(struct ploom_step *s)
{
	free(s->object);
	free(s->enabled);
	free(s->value);
	free(s->label);
	free(s->pending);
	ploom_where_release(&s->where);
}

static void outcome_release(struct ploom_outcome *o)
{
	size_t i;

	free(o->summary);
	free(o->exc_type);
	free(o->exc_message);
	free(o->traceback);
	for (i = 0; i < o->nwaits; i++) {
		free(o->waits[i].object);
		free(o->waits[i].on);
		ploom_where_release(&o->waits[i].where);
	}
	free(o->waits);
	ploom_outcome_release_stacks(o);
	free(o->divergence_message);
	free(o->sites);
	free(o->output);
}

void ploom_run_release(struct ploom_run *run)
{
	size_t i;

	for (i = 0; i < run->nsteps; i++)
		step_release(&run->steps[i]);
	free(run->steps);
	free(run->choices);
	outcome_release(&run->outcome);
	for (i = 0; i < run->nnames; i++)
		free(run->names[i].name);
	free(run->names);
	for (i = 0; i < run->ncodes; i++)
		ploom_where_release(&run->codes[i]);
	free(run->codes);
	memset(run, 0, sizeof(*run));
}

static int same_obj(struct ploom_obj a, struct ploom_obj b)
{
	return a.kind == b.kind && a.id == b.id;
}

int ploom_run_set_name(struct ploom_run *run, struct ploom_obj obj, const char *name,
		       struct ploom_err *err)
{
	struct ploom_name *names;
	char *copy = strdup(name);
	size_t i;

	assert(obj.kind != PLOOM_OBJ_NONE);
	if (!copy)
		return ploom_err_oom(err);
	for (i = 0; i < run->nnames; i++) {
		if (same_obj(run->names[i].obj, obj)) {
			free(run->names[i].name);
			run->names[i].name = copy;
			return 0;
		}
	}
	names = realloc(run->names, (run->nnames + 1) * sizeof(*names));
	if (!names) {
		free(copy);
		return ploom_err_oom(err);
	}
	run->names = names;
	names[run->nnames++] = (struct ploom_name){obj, copy};
	return 0;
}

const char *ploom_run_name(const struct ploom_run *run, struct ploom_obj obj)
{
	size_t i;

	for (i = 0; i < run->nnames; i++)
		if (same_obj(run->names[i].obj, obj))
			return run->names[i].name;
	return NULL;
}

size_t ploom_obj_default_name(char *out, size_t cap, struct ploom_obj obj)
{
	if (obj.kind == PLOOM_OBJ_THREAD && obj.id == 0) {
		snprintf(out, cap, "MainThread");
		return cap > 10 ? 10 : cap ? cap - 1 : 0;
	}
	return ploom_obj_format(out, cap, obj);
}

/* Objects a step's operation tells apart: a lock (acquire, release,
 * locked) from data (read, write: a cell, plain state); a thread is named
 * where no operation says what it is (a column, a race's actor), so it is
 * told from nothing. */
static int obj_family(enum ploom_obj_kind kind)
{
	return kind == PLOOM_OBJ_LOCK ? 1 : kind == PLOOM_OBJ_CELL || kind == PLOOM_OBJ_PLAIN ? 2 : 0;
}

static int told_apart(struct ploom_obj a, struct ploom_obj b)
{
	int fa = obj_family(a.kind), fb = obj_family(b.kind);

	return fa && fb && fa != fb;
}

/* 1 if another object of run than obj goes by name, one that obj's
 * operations do not tell it from (the plain state Pool._cond, the
 * attribute, and the lock Pool._cond it holds read apart): a second
 * object of that name, or one whose default name it is. */
static int name_is_shared(const struct ploom_run *run, struct ploom_obj obj, const char *name)
{
	struct ploom_obj other;
	size_t i;

	for (i = 0; i < run->nnames; i++)
		if (!same_obj(run->names[i].obj, obj) && !strcmp(run->names[i].name, name) &&
		    !told_apart(run->names[i].obj, obj))
			return 1;
	if (!strcmp(name, "MainThread"))
		return !(obj.kind == PLOOM_OBJ_THREAD && obj.id == 0);
	return ploom_obj_parse(&other, name, strlen(name)) == 0 &&
	       other.kind != PLOOM_OBJ_NONE && !same_obj(other, obj);
}

char *ploom_run_display_name(const struct ploom_run *run, struct ploom_obj obj)
{
	const char *name = obj.kind == PLOOM_OBJ_NONE ? NULL : ploom_run_name(run, obj);
	char def[32], *out;

	ploom_obj_format(def, sizeof(def), obj);
	if (!name) {
		ploom_obj_default_name(def, sizeof(def), obj);
		return strdup(def);
	}
	if (!name_is_shared(run, obj, name))
		return strdup(name);
	if (asprintf(&out, "%s (%s)", name, def) < 0)
		return NULL;
	return out;
}

char *ploom_run_task_name(const struct ploom_run *run, int task)
{
	return ploom_run_display_name(run, (struct ploom_obj){PLOOM_OBJ_THREAD, task});
}

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

void ploom_run_move(struct ploom_run *to, struct ploom_run *from)
{
	*to = *from;
	memset(from, 0, sizeof(*from));
}

struct ploom_step *ploom_run_add_step(struct ploom_run *run)
{
	struct ploom_step *s;

	if (run->nsteps == run->capsteps) {
		size_t cap = run->capsteps ? 2 * run->capsteps : 64;
		s = realloc(run->steps, cap * sizeof(*s));
		if (!s)
			return NULL;
		run->steps = s;
		run->capsteps = cap;
	}
	s = &run->steps[run->nsteps++];
	memset(s, 0, sizeof(*s));
	return s;
}

int ploom_step_is_enabled(const struct ploom_step *s, int task)
{
	size_t i;

	for (i = 0; i < s->nenabled; i++)
		if (s->enabled[i] == task)
			return 1;
	return 0;
}

int ploom_run_finish(struct ploom_run *run, struct ploom_err *err)
{
	size_t i, n = 0;

	free(run->choices);
	run->choices = NULL;
	run->nchoices = 0;
	run->preemptions = 0;
	for (i = 0; i < run->nsteps; i++)
		if (run->steps[i].nenabled > 1)
			n++;
	if (n) {
		run->choices = malloc(n * sizeof(*run->choices));
		if (!run->choices)
			return ploom_err_oom(err);
	}
	for (i = 0; i < run->nsteps; i++) {
		const struct ploom_step *s = &run->steps[i];
		if (s->nenabled > 1)
			run->choices[run->nchoices++] = s->task;
		run->preemptions += ploom_run_is_preemption(run, i);
	}
	if (!run->outcome.summary) {
		run->outcome.summary = ploom_outcome_summary(&run->outcome);
		if (!run->outcome.summary)
			return ploom_err_oom(err);
	}
	return 0;
}

static const char *const kind_names[] = {
	[PLOOM_OUTCOME_NONE] = "none",
	[PLOOM_OUTCOME_PASS] = "pass",
	[PLOOM_OUTCOME_FAILURE] = "failure",
	[PLOOM_OUTCOME_DEADLOCK] = "deadlock",
	[PLOOM_OUTCOME_STEP_LIMIT] = "step-limit",
	[PLOOM_OUTCOME_CRASH] = "crash",
	[PLOOM_OUTCOME_EXIT] = "exit",
	[PLOOM_OUTCOME_TIMEOUT] = "timeout",
	[PLOOM_OUTCOME_DIVERGENCE] = "divergence",
	[PLOOM_OUTCOME_SLEEP_BLOCKED] = "sleep-blocked",
	[PLOOM_OUTCOME_REFINE] = "refine",
};

const char *ploom_outcome_kind_name(enum ploom_outcome_kind kind)
{
	if ((size_t)kind >= sizeof(kind_names) / sizeof(kind_names[0]))
		return "none";
	return kind_names[kind];
}

int ploom_outcome_kind_parse(const char *name)
{
	size_t i;

	/* "none" is internal and never read back */
	for (i = 1; i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
		if (!strcmp(name, kind_names[i]))
			return (int)i;
	return -1;
}

int ploom_outcome_is_setup(const struct ploom_outcome *o)
{
	return o->kind == PLOOM_OUTCOME_FAILURE && o->exc_type &&
	       strcmp(o->exc_type, PLOOM_SETUP_ERROR_TYPE) == 0;
}

int ploom_outcome_is_failure(enum ploom_outcome_kind kind)
{
	switch (kind) {
	case PLOOM_OUTCOME_FAILURE:
	case PLOOM_OUTCOME_DEADLOCK:
	case PLOOM_OUTCOME_CRASH:
	case PLOOM_OUTCOME_EXIT:
	case PLOOM_OUTCOME_TIMEOUT:
		return 1;
	default:
		return 0;
	}
}

char *ploom_wait_words(const struct ploom_wait *wt, const char *object, const char *holder,
		       int brief)
{
	const char *on = wt->on && *wt->on ? wt->on : NULL;
	const char *why = "";
	char *s;
	int n;

	switch (wt->waits_for) {
	case PLOOM_WAIT_NOTIFY:
		why = "; no task can notify it";
		if (on)
			n = asprintf(&s, "waits on %s (a Condition)%s", on, brief ? "" : why);
		else
			n = asprintf(&s, "waits on a Condition over %s%s", object, brief ? "" : why);
		break;
	case PLOOM_WAIT_STATE:
		/* the lock is free: what it guards keeps the task waiting (a
		 * queue's item, a semaphore's unit, an event's flag) */
		why = "; no task can change it";
		n = asprintf(&s, "waits on %s for the state %s guards%s", on ? on : object,
			     on ? "its lock" : "it", brief ? "" : why);
		break;
	case PLOOM_WAIT_JOIN:
		/* the holder is the joined thread itself: saying it again
		 * would read oddly */
		n = asprintf(&s, "waits to join %s", object);
		break;
	default:
		if (!holder)
			n = asprintf(&s, "waits to acquire %s", object);
		else if (wt->holder == wt->task)
			n = asprintf(&s, "waits to acquire %s held by %s itself%s", object, holder,
				     brief ? "" : "; no other task can release it");
		else
			n = asprintf(&s, "waits to acquire %s held by %s", object, holder);
		break;
	}
	return n < 0 ? NULL : s;
}

static void add_wait(struct ploom_buf *b, const struct ploom_wait *w)
{
	char holder[32], *words;

	snprintf(holder, sizeof(holder), "task %d", w->holder);
	words = ploom_wait_words(w, w->object ? w->object : "?", w->holder >= 0 ? holder : NULL,
				 0);
	ploom_buf_addf(b, "task %d %s", w->task, words ? words : "waits");
	free(words);
}

char *ploom_outcome_summary(const struct ploom_outcome *o)
{
	struct ploom_buf b = {0};
	const char *abbrev;
	size_t i;

	switch (o->kind) {
	case PLOOM_OUTCOME_NONE:
		ploom_buf_addf(&b, "none");
		break;
	case PLOOM_OUTCOME_PASS:
		ploom_buf_addf(&b, "pass");
		break;
	case PLOOM_OUTCOME_FAILURE:
		ploom_buf_addf(&b, "%s", o->exc_type ? o->exc_type : "unknown");
		if (o->exc_message && *o->exc_message)
			ploom_buf_addf(&b, ": %s", o->exc_message);
		break;
	case PLOOM_OUTCOME_DEADLOCK:
		ploom_buf_addf(&b, "deadlock");
		for (i = 0; i < o->nwaits; i++) {
			ploom_buf_addf(&b, i ? "; " : ": ");
			add_wait(&b, &o->waits[i]);
		}
		break;
	case PLOOM_OUTCOME_STEP_LIMIT:
		ploom_buf_addf(&b, "step-limit: the schedule reached %ld steps", o->limit);
		break;
	case PLOOM_OUTCOME_CRASH:
		abbrev = sigabbrev_np(o->signal);
		if (abbrev)
			ploom_buf_addf(&b, "crash: killed by signal %d (SIG%s)", o->signal, abbrev);
		else
			ploom_buf_addf(&b, "crash: killed by signal %d", o->signal);
		break;
	case PLOOM_OUTCOME_EXIT:
		ploom_buf_addf(&b, "exit: the scenario exited with status %d", o->status);
		break;
	case PLOOM_OUTCOME_TIMEOUT:
		ploom_buf_addf(&b, "timeout: the schedule ran longer than %g s",
			       (double)o->timeout_ms / 1000.0);
		break;
	case PLOOM_OUTCOME_DIVERGENCE:
		ploom_buf_addf(&b, "divergence: %s",
			       o->divergence_message ? o->divergence_message : "");
		break;
	case PLOOM_OUTCOME_SLEEP_BLOCKED:
		ploom_buf_addf(&b, "sleep-blocked: every task enabled at step %ld was asleep",
			       o->divergence_index);
		break;
	case PLOOM_OUTCOME_REFINE:
		ploom_buf_addf(&b, "refine: shared plain state at %s", o->sites ? o->sites : "");
		break;
	}
	return b.data;
}

struct ploom_trace *ploom_trace_new(void)
{
	struct ploom_trace *t = calloc(1, sizeof(*t));

	if (t) {
		t->config.max_preemptions = -1;
		t->minimized_from = -1;
	}
	return t;
}

static int is_ident_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static int is_ident_char(char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

/* the reason below spells the bound out */
_Static_assert(PLOOM_MODULE_NAME_MAX == 200, "update ploom_module_problem()'s message");

const char *ploom_module_problem(const char *module)
{
	static const char not_name[] = "not a module name (Python identifiers joined by '.')";
	size_t i, len = strlen(module);

	/* ASCII identifiers only: enough for the modules one names, and
	 * the names then travel safely on the worker's command line */
	for (i = 0; i < len; i++) {
		int starts_part = i == 0 || module[i - 1] == '.';
		if (starts_part ? !is_ident_start(module[i])
				: !is_ident_char(module[i]) && module[i] != '.')
			return not_name;
	}
	if (!len || module[len - 1] == '.')
		return not_name;
	if (len > PLOOM_MODULE_NAME_MAX)
		return "longer than 200 bytes";
	return NULL;
}

/* Appends a copy of module to the list *names of *n, as
 * ploom_config_add_patch() documents. */
static int add_module(char ***names, size_t *n, const char *module, struct ploom_err *err)
{
	const char *problem = ploom_module_problem(module);
	char **list, *copy;

	if (problem)
		return ploom_err_set(err, PLOOM_ERR_INPUT, "%s", problem);
	if (*n >= PLOOM_MODULES_MAX)
		return ploom_err_set(err, PLOOM_ERR_INPUT, "more than %d modules",
				     PLOOM_MODULES_MAX);
	copy = strdup(module);
	list = copy ? realloc(*names, (*n + 1) * sizeof(*list)) : NULL;
	if (!list) {
		free(copy);
		return ploom_err_oom(err);
	}
	list[(*n)++] = copy;
	*names = list;
	return 0;
}

static void release_list(char ***names, size_t *n)
{
	size_t i;

	for (i = 0; i < *n; i++)
		free((*names)[i]);
	free(*names);
	*names = NULL;
	*n = 0;
}

static int listed(char *const *names, size_t n, const char *module)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], module))
			return 1;
	return 0;
}

int ploom_config_add_patch(struct ploom_config *config, const char *module,
			   struct ploom_err *err)
{
	return add_module(&config->patch, &config->npatch, module, err);
}

int ploom_config_add_instrument(struct ploom_config *config, const char *module,
				struct ploom_err *err)
{
	/* a module is rewritten once however often it is named: the
	 * default may name one the options named already */
	if (listed(config->instrument, config->ninstrument, module))
		return 0;
	return add_module(&config->instrument, &config->ninstrument, module, err);
}

int ploom_config_module_defaults(struct ploom_config *config, int patch_listed_only,
				 int instrument_listed_only, struct ploom_err *err)
{
	size_t i;

	/* a scenario file that calls threading.Thread means a ploom task, and
	 * the project's own code beside it is under test as much as it is */
	if (!patch_listed_only)
		config->patch_project = 1;
	if (instrument_listed_only)
		return 0;
	/* the modules patched are library code the scenario drives: under
	 * test as much as the scenario itself */
	for (i = 0; i < config->npatch; i++)
		if (ploom_config_add_instrument(config, config->patch[i], err) < 0)
			return -1;
	config->instrument_scenario = 1;
	return 0;
}

int ploom_config_copy_modules(struct ploom_config *to, const struct ploom_config *from,
			      struct ploom_err *err)
{
	struct ploom_config copy = {0};
	size_t i;

	for (i = 0; i < from->npatch; i++)
		if (add_module(&copy.patch, &copy.npatch, from->patch[i], err) < 0)
			goto fail;
	for (i = 0; i < from->ninstrument; i++)
		if (add_module(&copy.instrument, &copy.ninstrument, from->instrument[i], err) < 0)
			goto fail;
	ploom_config_release_modules(to);
	to->patch = copy.patch;
	to->npatch = copy.npatch;
	to->instrument = copy.instrument;
	to->ninstrument = copy.ninstrument;
	to->instrument_scenario = from->instrument_scenario;
	to->patch_project = from->patch_project;
	return 0;
fail:
	ploom_config_release_modules(&copy);
	return -1;
}

void ploom_config_release_modules(struct ploom_config *config)
{
	release_list(&config->patch, &config->npatch);
	release_list(&config->instrument, &config->ninstrument);
	config->instrument_scenario = 0;
	config->patch_project = 0;
}

const char *ploom_plain_point_problem(const char *key)
{
	const char *colon = strrchr(key, ':');
	char module[PLOOM_MODULE_NAME_MAX + 1];
	size_t n, i;

	if (!colon || !colon[1])
		return "not a site key (MODULE:K)";
	n = (size_t)(colon - key);
	if (n > PLOOM_MODULE_NAME_MAX)
		return "a module name longer than 200 bytes";
	memcpy(module, key, n);
	module[n] = 0;
	if (ploom_module_problem(module))
		return "not a site key (MODULE:K)";
	for (i = 1; colon[i]; i++)
		if (colon[i] < '0' || colon[i] > '9' || i > 9)
			return "not a site key (MODULE:K)";
	if (colon[1] == '0' && colon[2])
		return "not a site key (MODULE:K)";
	return NULL;
}

int ploom_config_watches_plain(const struct ploom_config *config)
{
	return !config->reduction || !strcmp(config->reduction, PLOOM_SEARCH_UNSAID->reduction);
}

/* A site key as a slice of the caller's text. */
struct key_span {
	const char *p;
	size_t len;
};

static uint64_t key_hash(const char *p, size_t len)
{
	uint64_t h = 14695981039346656037ULL;   /* FNV-1a */
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
	return h;
}

/* The slot of keys[] in table (mask + 1 slots of 1 + index, 0 empty)
 * that holds key, or the empty slot where it would go. */
static size_t key_slot(const size_t *table, size_t mask, char *const *keys, const char *key,
		       size_t len)
{
	size_t at = (size_t)key_hash(key, len) & mask;

	while (table[at] && !(strlen(keys[table[at] - 1]) == len &&
			      !memcmp(keys[table[at] - 1], key, len)))
		at = (at + 1) & mask;
	return at;
}

/* Adds keys[0..n) to config's plain points, each once, after checking
 * them all: one hash set of the list and the new keys, so that reading a
 * trace's points (up to PLOOM_PLAIN_POINTS_MAX) costs time in proportion
 * to their number.  Returns as ploom_config_add_plain_points(). */
static int add_plain_keys(struct ploom_config *config, const struct key_span *keys, size_t n,
			  struct ploom_err *err)
{
	size_t have = config->nplain_points, i, mask = 15, at;
	size_t *table = NULL;
	char **list;
	int added = 0;

	for (i = 0; i < n; i++) {
		char key[PLOOM_MODULE_NAME_MAX + 16];
		const char *problem = "not a site key (MODULE:K)";

		if (keys[i].len < sizeof(key) && !memchr(keys[i].p, 0, keys[i].len)) {
			memcpy(key, keys[i].p, keys[i].len);
			key[keys[i].len] = 0;
			problem = ploom_plain_point_problem(key);
		}
		if (problem)
			return ploom_err_set(err, PLOOM_ERR_INPUT, "bad site key '%.*s': %s",
					     (int)(keys[i].len < 220 ? keys[i].len : 220), keys[i].p,
					     problem);
	}
	if (!n)
		return 0;
	while (mask / 2 < have + n)
		mask = mask * 2 + 1;
	table = calloc(mask + 1, sizeof(*table));
	if (!table)
		return ploom_err_oom(err);
	for (i = 0; i < have; i++) {
		const char *k = config->plain_points[i];
		table[key_slot(table, mask, config->plain_points, k, strlen(k))] = i + 1;
	}
	/* room for every key at once: the list is never grown one by one */
	list = realloc(config->plain_points, (have + n) * sizeof(*list));
	if (!list) {
		free(table);
		return ploom_err_oom(err);
	}
	config->plain_points = list;
	for (i = 0; i < n; i++) {
		at = key_slot(table, mask, config->plain_points, keys[i].p, keys[i].len);
		if (table[at])
			continue;
		if (config->nplain_points >= PLOOM_PLAIN_POINTS_MAX) {
			free(table);
			return ploom_err_set(err, PLOOM_ERR_INPUT, "more than %d plain points",
					     PLOOM_PLAIN_POINTS_MAX);
		}
		list[config->nplain_points] = strndup(keys[i].p, keys[i].len);
		if (!list[config->nplain_points]) {
			free(table);
			return ploom_err_oom(err);
		}
		table[at] = ++config->nplain_points;
		added++;
	}
	free(table);
	return added;
}

int ploom_config_add_plain_points(struct ploom_config *config, const char *keys, size_t len,
				  struct ploom_err *err)
{
	struct key_span *spans;
	size_t i = 0, j, n = 0;
	int r;

	/* at most one key per two bytes (a key and a separator) */
	spans = malloc((len / 2 + 1) * sizeof(*spans));
	if (!spans)
		return ploom_err_oom(err);
	while (i < len) {
		while (i < len && (keys[i] == ' ' || keys[i] == ','))
			i++;
		for (j = i; j < len && keys[j] != ' ' && keys[j] != ','; j++)
			;
		if (j == i)
			break;
		spans[n++] = (struct key_span){keys + i, j - i};
		i = j;
	}
	r = add_plain_keys(config, spans, n, err);
	free(spans);
	return r;
}

int ploom_config_add_plain_point_list(struct ploom_config *config, const char *const *keys,
				      size_t n, struct ploom_err *err)
{
	struct key_span *spans = malloc((n ? n : 1) * sizeof(*spans));
	size_t i;
	int r;

	if (!spans)
		return ploom_err_oom(err);
	for (i = 0; i < n; i++)
		spans[i] = (struct key_span){keys[i], strlen(keys[i])};
	r = add_plain_keys(config, spans, n, err);
	free(spans);
	return r;
}

int ploom_config_copy_plain_points(struct ploom_config *to, const struct ploom_config *from,
				   struct ploom_err *err)
{
	struct ploom_config copy = {0};

	if (ploom_config_add_plain_point_list(&copy, (const char *const *)from->plain_points,
					      from->nplain_points, err) < 0) {
		ploom_config_release_plain_points(&copy);
		return -1;
	}
	ploom_config_release_plain_points(to);
	to->plain_points = copy.plain_points;
	to->nplain_points = copy.nplain_points;
	return 0;
}

void ploom_config_release_plain_points(struct ploom_config *config)
{
	size_t i;

	for (i = 0; i < config->nplain_points; i++)
		free(config->plain_points[i]);
	free(config->plain_points);
	config->plain_points = NULL;
	config->nplain_points = 0;
}

int ploom_config_own_lists(struct ploom_config *to, const struct ploom_config *from,
			   struct ploom_err *err)
{
	to->patch = NULL;
	to->npatch = 0;
	to->instrument = NULL;
	to->ninstrument = 0;
	to->plain_points = NULL;
	to->nplain_points = 0;
	if (ploom_config_copy_modules(to, from, err) < 0 ||
	    ploom_config_copy_plain_points(to, from, err) < 0)
		return -1;
	return 0;
}

void ploom_config_release_lists(struct ploom_config *config)
{
	ploom_config_release_modules(config);
	ploom_config_release_plain_points(config);
}

static void fingerprints_release(struct ploom_trace *t)
{
	size_t i;

	for (i = 0; i < t->nfingerprints; i++) {
		free(t->fingerprints[i].path);
		free(t->fingerprints[i].blob);
		free(t->fingerprints[i].relpath);
	}
	free(t->fingerprints);
	t->fingerprints = NULL;
	t->nfingerprints = 0;
}

static void import_paths_release(struct ploom_trace *t)
{
	size_t i;

	for (i = 0; i < t->scenario.nimport_paths; i++)
		free(t->scenario.import_paths[i]);
	free(t->scenario.import_paths);
	free(t->scenario.cwd);
	t->scenario.import_paths = NULL;
	t->scenario.nimport_paths = 0;
	t->scenario.cwd = NULL;
}

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

void ploom_trace_free(struct ploom_trace *trace)
{
	if (!trace)
		return;
	fingerprints_release(trace);
	free(trace->id);
	free(trace->scenario.target);
	free(trace->scenario.module);
	free(trace->scenario.qualname);
	free(trace->scenario.file);
	free(trace->scenario.relpath);
	import_paths_release(trace);
	for (size_t i = 0; i < trace->nmodule_files; i++)
		free(trace->module_files[i]);
	free(trace->module_files);
	free(trace->source.root);
	free(trace->source.commit);
	free(trace->python.implementation);
	free(trace->python.version);
	free(trace->hash_seed);
	free(trace->config.reduction);
	free(trace->config.search);
	ploom_config_release_lists(&trace->config);
	ploom_run_release(&trace->run);
	free(trace);
}

int ploom_trace_failure_id(char out[17], const struct ploom_trace *trace,
			   struct ploom_err *err)
{
	const struct ploom_outcome *o = &trace->run.outcome;
	struct ploom_buf b = {0};
	char hex[PLOOM_OID_HEXSZ + 1];
	char *summary = NULL;
	int ret = -1;

	ploom_buf_addf(&b, "%s:%s\n%s\n",
		       trace->scenario.module ? trace->scenario.module : "",
		       trace->scenario.qualname ? trace->scenario.qualname : "",
		       ploom_outcome_kind_name(o->kind));
	if (o->kind == PLOOM_OUTCOME_FAILURE) {
		ploom_buf_addf(&b, "%s\n%s\n", o->exc_type ? o->exc_type : "",
			       o->exc_message ? o->exc_message : "");
	} else {
		summary = o->summary ? NULL : ploom_outcome_summary(o);
		ploom_buf_addf(&b, "\n%s\n", o->summary ? o->summary : summary ? summary : "");
	}
	if (ploom_fingerprint_data(hex, b.data, b.len, err) < 0)
		goto done;
	memcpy(out, hex, 16);
	out[16] = '\0';
	ret = 0;
done:
	free(summary);
	ploom_buf_release(&b);
	return ret;
}

int ploom_outcome_has_id(enum ploom_outcome_kind kind)
{
	return ploom_outcome_is_failure(kind) || kind == PLOOM_OUTCOME_STEP_LIMIT;
}

int ploom_trace_set_id(struct ploom_trace *trace, struct ploom_err *err)
{
	char id[17];

	if (trace->id || !ploom_outcome_has_id(trace->run.outcome.kind))
		return 0;
	if (ploom_trace_failure_id(id, trace, err) < 0)
		return -1;
	trace->id = strdup(id);
	if (!trace->id)
		return ploom_err_oom(err);
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

static void source_release(struct ploom_trace *t)
{
	import_paths_release(t);
	free(t->scenario.relpath);
	free(t->source.root);
	free(t->source.commit);
	t->scenario.relpath = NULL;
	memset(&t->source, 0, sizeof(t->source));
}

/* Sets the source and the relative paths of the trace's one fingerprint,
 * that of scenario.file. */
static int locate_source(struct ploom_trace *trace, struct ploom_err *err)
{
	struct ploom_repo_file rf;
	const char *name;
	int r;

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
	} else {
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

	import_paths_release(t);
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

	fingerprints_release(trace);
	source_release(trace);
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
	fingerprints_release(to);
	source_release(to);
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

int ploom_run_is_preemption(const struct ploom_run *run, size_t i)
{
	const struct ploom_step *s;
	int prev;

	if (i >= run->nsteps)
		return 0;
	s = &run->steps[i];
	prev = i ? run->steps[i - 1].task : 0;
	return s->nenabled > 1 && s->task != prev && ploom_step_is_enabled(s, prev);
}

int ploom_run_count_preemptions(const struct ploom_run *run)
{
	size_t i;
	int n = 0;

	for (i = 0; i < run->nsteps; i++)
		n += ploom_run_is_preemption(run, i);
	return n;
}

long ploom_run_failing_step(const struct ploom_run *run)
{
	const struct ploom_outcome *o = &run->outcome;
	size_t i;

	switch (o->kind) {
	case PLOOM_OUTCOME_FAILURE:
		for (i = run->nsteps; i-- > 0;)
			if (run->steps[i].task == o->task)
				return (long)i;
		return -1;
	case PLOOM_OUTCOME_CRASH:
	case PLOOM_OUTCOME_EXIT:
	case PLOOM_OUTCOME_TIMEOUT:
		return run->nsteps ? (long)run->nsteps - 1 : -1;
	default:
		return -1;
	}
}

const char *ploom_run_mark_legend(const struct ploom_run *run)
{
	const struct ploom_outcome *o = &run->outcome;

	if (o->kind == PLOOM_OUTCOME_DEADLOCK && o->nwaits)
		return "wait: what each blocked task waits for (the deadlock)";
	if (ploom_run_failing_step(run) < 0)
		return NULL;
	switch (o->kind) {
	case PLOOM_OUTCOME_FAILURE:
		return "the failing step: the last step of the task that raised";
	case PLOOM_OUTCOME_CRASH:
		return "the last step before the crash";
	case PLOOM_OUTCOME_EXIT:
		return "the last step before the exit";
	case PLOOM_OUTCOME_TIMEOUT:
		return "the last step before the timeout";
	default:
		return NULL;
	}
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int ploom_run_tasks(int **out, size_t *nout, const struct ploom_run *run,
		    struct ploom_err *err)
{
	const struct ploom_outcome *o = &run->outcome;
	size_t i, k, n = 2 + o->nwaits + run->nnames;
	int *ids;

	*out = NULL;
	*nout = 0;
	for (i = 0; i < run->nsteps; i++)
		n += 1 + run->steps[i].nenabled;
	ids = malloc(n * sizeof(*ids));
	if (!ids)
		return ploom_err_oom(err);
	n = 0;
	ids[n++] = 0;
	if (o->kind == PLOOM_OUTCOME_FAILURE)
		ids[n++] = o->task;
	for (i = 0; i < o->nwaits; i++)
		ids[n++] = o->waits[i].task;
	for (i = 0; i < run->nnames; i++)
		if (run->names[i].obj.kind == PLOOM_OBJ_THREAD && run->names[i].obj.id <= INT_MAX)
			ids[n++] = (int)run->names[i].obj.id;
	for (i = 0; i < run->nsteps; i++) {
		ids[n++] = run->steps[i].task;
		for (k = 0; k < run->steps[i].nenabled; k++)
			ids[n++] = run->steps[i].enabled[k];
	}
	qsort(ids, n, sizeof(*ids), cmp_int);
	for (i = 1, k = 1; i < n; i++)
		if (ids[i] != ids[k - 1])
			ids[k++] = ids[i];
	*out = ids;
	*nout = k;
	return 0;
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
	fprintf(f, "reduction %s", c->reduction ? c->reduction : "?");
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
	if (ploom_search_flags(c->search) & PLOOM_KIND_SAMPLE) {
		fprintf(f, ", search %s, seed %lu", c->search, c->seed);
		if (ploom_search_flags(c->search) & PLOOM_KIND_PCT_DEPTH)
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
