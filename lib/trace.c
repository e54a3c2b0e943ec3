/* The run and trace model; trace.h documents the API. */
#include "trace.h"

#include <assert.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "fingerprint.h"

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

void ploom_trace_release_import_paths(struct ploom_trace *t)
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
	ploom_trace_release_import_paths(trace);
	for (size_t i = 0; i < trace->nmodule_files; i++)
		free(trace->module_files[i]);
	free(trace->module_files);
	free(trace->project_root);
	free(trace->source.root);
	free(trace->source.commit);
	free(trace->python.implementation);
	free(trace->python.version);
	free(trace->hash_seed);
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

void ploom_trace_release_source(struct ploom_trace *t)
{
	fingerprints_release(t);
	ploom_trace_release_import_paths(t);
	free(t->scenario.relpath);
	free(t->source.root);
	free(t->source.commit);
	t->scenario.relpath = NULL;
	memset(&t->source, 0, sizeof(t->source));
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
