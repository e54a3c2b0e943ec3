/* The view of a trace that both drawings emit; view.h documents it. */
#include "view.h"
#include "labels.h"
#include "plural.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char ploom_view_race_tag(size_t k)
{
	if (k < 26)
		return (char)('a' + k);
	if (k < 52)
		return (char)('A' + k - 26);
	return '+';
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

size_t ploom_view_lane_of(const struct ploom_view *v, int task)
{
	const int *p = bsearch(&task, v->tasks, v->nlanes, sizeof(int), cmp_int);

	return p ? (size_t)(p - v->tasks) : 0;
}

size_t ploom_view_text_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			n++;
	return n;
}

size_t ploom_view_prefix(const char *s, size_t n)
{
	size_t i, k = 0;

	for (i = 0; s[i]; i++) {
		if (((unsigned char)s[i] & 0xC0) != 0x80) {
			if (k == n)
				break;
			k++;
		}
	}
	return i;
}

static void wait_release(struct ploom_view_wait *wt)
{
	free(wt->label);
	free(wt->where);
	free(wt->who);
	free(wt->who_name);
	free(wt->object);
	free(wt->holder);
	free(wt->words);
	free(wt->named);
	memset(wt, 0, sizeof(*wt));
}

void ploom_view_release(struct ploom_view *v)
{
	size_t i;

	for (i = 0; v->names && i < v->nlanes; i++)
		free(v->names[i]);
	for (i = 0; v->rows && i < v->nrows; i++) {
		free(v->rows[i].label);
		free(v->rows[i].where);
	}
	for (i = 0; v->waits && i < v->nwaits; i++)
		wait_release(&v->waits[i]);
	for (i = 0; v->facts && i < v->nfacts; i++)
		free(v->facts[i].value);
	for (i = 0; v->stacks && i < v->nstacks; i++)
		free(v->stacks[i]);
	for (i = 0; v->stacks_named && i < v->nstacks; i++)
		free(v->stacks_named[i]);
	free(v->stacks);
	free(v->stacks_named);
	free(v->tasks);
	free(v->names);
	free(v->rows);
	free(v->waits);
	free(v->outcome_words);
	free(v->outcome_named);
	free(v->summary_named);
	free(v->stalls);
	free(v->facts);
	free(v->races);
	ploom_short_names_free(v->sn);
	memset(v, 0, sizeof(*v));
}

/* Adds tag c to tags unless it is there: up to PLOOM_VIEW_TAGS_MAX of
 * them, then a '+' that says there are more. */
static void add_tag(char *tags, char c)
{
	size_t n = strlen(tags);

	if (n < PLOOM_VIEW_TAGS_MAX && !strchr(tags, c))
		tags[n] = c;
	else if (n == PLOOM_VIEW_TAGS_MAX && c != tags[n - 1] && !strchr(tags, c))
		tags[n] = '+';
}

/* The races, their tags and the one the failure rests on.  Returns 0, or
 * -1 when out of memory. */
static int view_races(struct ploom_view *v)
{
	struct ploom_err why = {0, ""};
	size_t k;

	v->key = -1;
	if (ploom_trace_races(&v->races, &v->nraces, v->trace, &why) < 0)
		return why.kind == PLOOM_ERR_NOMEM ? -1 : 0;
	v->key = ploom_races_key(v->trace, v->races, v->nraces);
	for (k = 0; k < v->nraces; k++) {
		const struct ploom_race *r = &v->races[k];
		char tag = ploom_view_race_tag(k);
		add_tag(v->rows[r->first].tags, tag);
		add_tag(r->second >= 0 ? v->rows[r->second].tags : v->wait_tags, tag);
	}
	return 0;
}

/* The lanes and the rows of the steps.  Returns 0, or -1 when out of
 * memory. */
static int view_rows(struct ploom_view *v)
{
	const struct ploom_run *run = &v->trace->run;
	size_t i, l;
	long long clock_ns = 0;

	if (ploom_run_tasks(&v->tasks, &v->nlanes, run, NULL) < 0)
		return -1;
	v->names = calloc(v->nlanes ? v->nlanes : 1, sizeof(*v->names));
	/* one row more than the steps, so that a race's index always has
	 * a row to tag, even in a trace of no steps */
	v->rows = calloc(run->nsteps + 1, sizeof(*v->rows));
	if (!v->names || !v->rows)
		return -1;
	v->nrows = run->nsteps;
	for (l = 0; l < v->nlanes; l++) {
		v->names[l] = ploom_run_task_name(run, v->tasks[l]);
		if (!v->names[l])
			return -1;
	}
	for (i = 0; i < run->nsteps; i++) {
		const struct ploom_step *s = &run->steps[i];
		struct ploom_view_row *r = &v->rows[i];
		r->lane = ploom_view_lane_of(v, s->task);
		r->label = ploom_run_step_label(run, s);
		/* where the clock moved (event.h's idle): the seconds since the
		 * schedule's start, before the step it let run */
		if (r->label && s->idle && s->clock_ns > clock_ns) {
			char *moved;
			clock_ns = s->clock_ns;
			if (asprintf(&moved, "clock +%g s: %s", (double)clock_ns / 1e9, r->label) < 0)
				moved = NULL;
			free(r->label);
			r->label = moved;
		}
		r->value = s->value;
		r->preempted = ploom_run_is_preemption(run, i);
		v->any_preempted |= r->preempted;
		if (!r->label || ploom_where_label(&r->where, v->sn, &s->where) < 0)
			return -1;
	}
	return 0;
}

/* "task N", then " (NAME)" when the scenario named its thread;
 * NULL when out of memory. */
static char *task_words(const struct ploom_run *run, int task)
{
	const char *name = ploom_run_name(run, (struct ploom_obj){PLOOM_OBJ_THREAD, task});
	char *s;

	if ((name ? asprintf(&s, "task %d (%s)", task, name) : asprintf(&s, "task %d", task)) < 0)
		return NULL;
	return s;
}

/* The outcome's words, but for a deadlock's waits. */
static int view_outcome(struct ploom_view *v)
{
	const struct ploom_outcome *o = &v->trace->run.outcome;
	char *who, *name;

	switch (o->kind) {
	case PLOOM_OUTCOME_FAILURE:
		who = task_words(&v->trace->run, o->task);
		name = ploom_run_task_name(&v->trace->run, o->task);
		if (!who || asprintf(&v->outcome_words, "%s raised %s", who,
				     o->exc_type ? o->exc_type : "?") < 0)
			v->outcome_words = NULL;
		if (!name || asprintf(&v->outcome_named, "%s raised %s", name,
				      o->exc_type ? o->exc_type : "?") < 0)
			v->outcome_named = NULL;
		free(who);
		free(name);
		return v->outcome_words && v->outcome_named ? 0 : -1;
	case PLOOM_OUTCOME_DEADLOCK:
		return 0;
	case PLOOM_OUTCOME_PASS:
		v->outcome_words = strdup("every task finished");
		break;
	case PLOOM_OUTCOME_DIVERGENCE:
		if (asprintf(&v->outcome_words, "at step %ld: %s", o->divergence_index,
			     o->divergence_message ? o->divergence_message : "") < 0)
			v->outcome_words = NULL;
		break;
	default:
		v->outcome_words = strdup(ploom_outcome_detail(o));
		break;
	}
	if (v->outcome_words)
		v->outcome_named = strdup(v->outcome_words);
	return v->outcome_named ? 0 : -1;
}

/* A deadlock's waits, in words. */
static int view_waits(struct ploom_view *v)
{
	const struct ploom_run *run = &v->trace->run;
	const struct ploom_outcome *o = &run->outcome;
	size_t i;

	if (o->kind != PLOOM_OUTCOME_DEADLOCK || !o->nwaits)
		return 0;
	v->waits = calloc(o->nwaits, sizeof(*v->waits));
	if (!v->waits)
		return -1;
	for (i = 0; i < o->nwaits; i++) {
		const struct ploom_wait *w = &o->waits[i];
		struct ploom_view_wait *r = &v->waits[i];
		r->lane = ploom_view_lane_of(v, w->task);
		v->nwaits++;
		r->label = ploom_run_wait_label(run, w, 1);
		r->named = ploom_run_wait_label(run, w, 0);
		r->who = task_words(run, w->task);
		r->who_name = ploom_run_task_name(run, w->task);
		r->object = ploom_run_wait_object(run, w->object);
		if (!r->label || !r->named || !r->who || !r->who_name || !r->object ||
		    ploom_where_label(&r->where, v->sn, &w->where) < 0)
			return -1;
		if (w->holder >= 0 && !(r->holder = task_words(run, w->holder)))
			return -1;
		if (!(r->words = ploom_wait_words(w, r->object, r->holder, 0)))
			return -1;
	}
	return 0;
}

/* A string that grows, and remembers running out of memory (then NULL). */
struct text {
	char *s;
	size_t len;
	int oom;
};

static void __attribute__((format(printf, 2, 3))) text_addf(struct text *t, const char *fmt, ...)
{
	va_list ap;
	char *more, *s;
	int n;

	if (t->oom)
		return;
	va_start(ap, fmt);
	n = vasprintf(&more, fmt, ap);
	va_end(ap);
	s = n < 0 ? NULL : realloc(t->s, t->len + (size_t)n + 1);
	if (!s) {
		if (n >= 0)
			free(more);
		free(t->s);
		t->s = NULL;
		t->oom = 1;
		return;
	}
	memcpy(s + t->len, more, (size_t)n + 1);
	free(more);
	t->s = s;
	t->len += (size_t)n;
}

char *ploom_view_stack_line(const struct ploom_run *run, const struct ploom_stack *st,
			    const char *who, const struct ploom_short_names *sn)
{
	struct ploom_obj obj = {PLOOM_OBJ_THREAD, st->task};
	const char *name = ploom_run_name(run, obj);
	char def[32];
	struct text b = {NULL, 0, 0};
	size_t k;

	ploom_obj_format(def, sizeof(def), obj);
	if (who) {
		text_addf(&b, "%s", who);
	} else if (name) {
		text_addf(&b, "%s (%s)", def, name);
	} else {
		ploom_obj_default_name(def, sizeof(def), obj);
		text_addf(&b, "%s", def);
	}
	switch (st->state) {
	case PLOOM_STACK_RUNNING:
		if (!st->nframes) {
			text_addf(&b, " was in no Python code");
			break;
		}
		text_addf(&b, " was in: ");
		for (k = 0; k < st->nframes && k < PLOOM_VIEW_STACK_FRAMES; k++) {
			const struct ploom_where *w = &st->frames[k];
			const char *file = w->file ? ploom_short_name(sn, w->file) : "?";
			if (k)
				text_addf(&b, " <- ");
			if (w->line > 0)
				text_addf(&b, "%s:%d in %s", file, w->line,
					       w->function ? w->function : "?");
			else
				text_addf(&b, "%s in %s", file, w->function ? w->function : "?");
		}
		if (st->depth > (long)k)
			text_addf(&b, " <- ...");
		break;
	case PLOOM_STACK_FINISHED:
		text_addf(&b, " had finished");
		break;
	case PLOOM_STACK_UNSTARTED:
		text_addf(&b, " had not run yet");
		break;
	default:
		text_addf(&b, " is not known (the dump of the stacks was cut short)");
		break;
	}
	return b.s;
}

/* More tasks than this that had not run yet (or had finished) share one
 * line: a pool of hundreds of threads would otherwise bury the few that
 * ran. */
#define FOLD_OVER 3

/* Folds lines[0..n), the lines of stacks[0..n): the tasks in one state of
 * those above, when more than FOLD_OVER, on one line at the first one's
 * place ("thread#1, thread#2, thread#3 and 247 more had not run yet").
 * The lines left close up; their number goes to *left when asked.  0, or
 * -1 when out of memory. */
static int fold_stacks(char **lines, const struct ploom_stack *stacks, size_t n, size_t *left)
{
	static const struct {
		enum ploom_stack_state state;
		const char *ending;
	} folds[] = {
		{PLOOM_STACK_UNSTARTED, " had not run yet"},
		{PLOOM_STACK_FINISHED, " had finished"},
	};
	size_t f, i, k, m, first;

	for (f = 0; f < sizeof(folds) / sizeof(folds[0]); f++) {
		struct text b = {NULL, 0, 0};
		size_t end = strlen(folds[f].ending);

		for (i = m = 0, first = n; i < n; i++)
			if (lines[i] && stacks[i].state == folds[f].state && m++ == 0)
				first = i;
		if (m <= FOLD_OVER)
			continue;
		for (i = first, k = 0; i < n; i++) {
			if (!lines[i] || stacks[i].state != folds[f].state)
				continue;
			if (k < FOLD_OVER)
				text_addf(&b, "%s%.*s", k ? ", " : "",
					  (int)(strlen(lines[i]) - end), lines[i]);
			k++;
			free(lines[i]);
			lines[i] = NULL;
		}
		text_addf(&b, " and %zu more%s", m - FOLD_OVER, folds[f].ending);
		if (!b.s)
			return -1;
		lines[first] = b.s;
	}
	for (i = k = 0; i < n; i++)
		if (lines[i])
			lines[k++] = lines[i];
	for (i = k; i < n; i++)
		lines[i] = NULL;
	if (left)
		*left = k;
	return 0;
}

/* A timeout's or a step limit's stacks, a line each. */
static int view_stacks(struct ploom_view *v)
{
	const struct ploom_run *run = &v->trace->run;
	const struct ploom_outcome *o = &run->outcome;
	size_t i;

	if ((o->kind != PLOOM_OUTCOME_TIMEOUT && o->kind != PLOOM_OUTCOME_STEP_LIMIT) ||
	    !o->nstacks)
		return 0;
	v->stacks = calloc(o->nstacks, sizeof(*v->stacks));
	v->stacks_named = calloc(o->nstacks, sizeof(*v->stacks_named));
	if (!v->stacks || !v->stacks_named)
		return -1;
	for (i = 0; i < o->nstacks; i++) {
		char *name = ploom_run_task_name(run, o->stacks[i].task);
		v->nstacks++;
		v->stacks[i] = ploom_view_stack_line(run, &o->stacks[i], NULL, v->sn);
		v->stacks_named[i] = name ? ploom_view_stack_line(run, &o->stacks[i], name, v->sn)
					  : NULL;
		free(name);
		if (!v->stacks[i] || !v->stacks_named[i])
			return -1;
	}
	if (fold_stacks(v->stacks, o->stacks, o->nstacks, NULL) < 0 ||
	    fold_stacks(v->stacks_named, o->stacks, o->nstacks, &v->nstacks) < 0)
		return -1;
	return 0;
}

/* The summary by the lanes' names: a deadlock's waits told again from
 * the view's, the trace's summary for the other kinds (which name no
 * task). */
static int view_summary(struct ploom_view *v)
{
	const struct ploom_outcome *o = &v->trace->run.outcome;
	struct text b = {NULL, 0, 0};
	size_t i;

	if (o->kind != PLOOM_OUTCOME_DEADLOCK || !v->nwaits) {
		v->summary_named =
			strdup(o->summary ? o->summary : ploom_outcome_kind_name(o->kind));
		return v->summary_named ? 0 : -1;
	}
	text_addf(&b, "%s", ploom_outcome_kind_name(o->kind));
	for (i = 0; i < v->nwaits; i++) {
		const struct ploom_view_wait *wt = &v->waits[i];
		text_addf(&b, "%s%s %s", i ? "; " : ": ", wt->who_name, wt->named);
	}
	v->summary_named = b.s;
	return v->summary_named ? 0 : -1;
}

/* The tasks a stall of step s held up: the one it waited for, or every
 * other task enabled there (a Condition's waiter waits for anyone). */
static void stalled_tasks(struct text *b, const struct ploom_run *run,
			  const struct ploom_step *s)
{
	size_t e;
	int n = 0;

	for (e = 0; e < s->nenabled; e++) {
		int t = s->enabled[e];
		char *name;

		if (t == s->task || (s->stall_of >= 0 && t != s->stall_of))
			continue;
		name = ploom_run_task_name(run, t);
		text_addf(b, "%s%s", n++ ? " and " : "", name ? name : "?");
		free(name);
	}
	if (!n) {
		char *name = ploom_run_task_name(run, s->stall_of);
		text_addf(b, "%s", name ? name : "?");
		free(name);
	}
}

char *ploom_view_stalls(const struct ploom_run *run, int *oom)
{
	struct text b = {NULL, 0, 0};
	size_t k;

	*oom = 0;
	for (k = 0; k < run->nsteps; k++) {
		const struct ploom_step *s = &run->steps[k];
		char *who, *obj, *held;
		struct text them = {NULL, 0, 0};

		if (!s->stalled)
			continue;
		stalled_tasks(&them, run, s);
		who = ploom_run_task_name(run, s->task);
		obj = ploom_run_display_name(run, s->obj);
		/* whole seconds as "1.0 s", as a timeout is usually written */
		held = them.s;
		text_addf(&b, s->stall_ns % 1000000000 ? "%sa stall of %s for %g s"
							: "%sa stall of %s for %.1f s",
			  b.len ? "; " : "", held ? held : "?", (double)s->stall_ns / 1e9);
		text_addf(&b, " (%s's %s of %s timed out at step %zu while %s could still run)",
			  who ? who : "?", ploom_op_name(s->op), obj ? obj : "?", k,
			  held ? held : "?");
		if (!who || !obj || them.oom)
			b.oom = 1;
		free(who);
		free(obj);
		free(held);
	}
	if (b.oom) {
		free(b.s);
		*oom = 1;
		return NULL;
	}
	return b.s;
}

static int add_fact(struct ploom_view *v, const char *name, char *value)
{
	v->facts[v->nfacts].name = name;
	v->facts[v->nfacts++].value = value;
	return value ? 0 : -1;
}

static char *dup_or(const char *s)
{
	return strdup(s ? s : "?");
}

static char *joined(const char *a, const char *sep, const char *b)
{
	char *s;

	if (asprintf(&s, "%s%s%s", a ? a : "?", sep, b ? b : "?") < 0)
		return NULL;
	return s;
}

/* The header facts both drawings have.  A config's label that cannot be
 * made reads "?", as the drawings always had it. */
#define MAX_FACTS 10
static int view_facts(struct ploom_view *v)
{
	const struct ploom_trace *tr = v->trace;
	const struct ploom_run *run = &tr->run;
	const struct ploom_python *py = &tr->python;
	char *s = NULL;

	v->facts = calloc(MAX_FACTS, sizeof(*v->facts));
	if (!v->facts ||
	    add_fact(v, "scenario", joined(tr->scenario.module, ":", tr->scenario.qualname)) < 0 ||
	    add_fact(v, "target", dup_or(tr->scenario.target)) < 0)
		return -1;
	if (asprintf(&s, "%s %s, GIL %s", py->implementation ? py->implementation : "?",
		     py->version ? py->version : "?", py->gil ? "enabled" : "disabled") < 0)
		s = NULL;
	if (add_fact(v, "python", s) < 0 || add_fact(v, "hash seed", dup_or(tr->hash_seed)) < 0)
		return -1;
	s = ploom_config_label(&tr->config);
	if (add_fact(v, "config", s ? s : strdup("?")) < 0)
		return -1;
	if (asprintf(&s, "%zu (%zu choice%s)", run->nsteps, run->nchoices,
		     ploom_s((long)run->nchoices)) < 0)
		s = NULL;
	if (add_fact(v, "steps", s) < 0 || (tr->id && add_fact(v, "id", strdup(tr->id)) < 0))
		return -1;
	if ((tr->minimized_from >= 0
		     ? asprintf(&s, "%d (minimized from %d)", run->preemptions, tr->minimized_from)
		     : asprintf(&s, "%d", run->preemptions)) < 0)
		s = NULL;
	if (add_fact(v, "preemptions", s) < 0 ||
	    add_fact(v, "outcome", strdup(run->outcome.summary ? run->outcome.summary
					  : ploom_outcome_kind_name(run->outcome.kind))) < 0)
		return -1;
	if (v->key >= 0) {
		/* without the memory for it the drawing says less, not wrong */
		s = ploom_race_explain_with(tr, &v->races[v->key], v->sn);
		if (s)
			add_fact(v, "race", s);
	}
	return 0;
}

int ploom_view_build(struct ploom_view *out, const struct ploom_trace *trace,
		     struct ploom_err *err)
{
	struct ploom_view *v = out;

	memset(v, 0, sizeof(*v));
	v->trace = trace;
	v->key = -1;
	if (ploom_short_names_new(&v->sn, &trace->run, NULL) < 0 || view_rows(v) < 0 ||
	    view_waits(v) < 0 || view_stacks(v) < 0 || view_outcome(v) < 0 ||
	    view_summary(v) < 0 || view_races(v) < 0 || view_facts(v) < 0) {
		ploom_err_oom(err);
		return -1;
	}
	if (ploom_outcome_is_failure(trace->run.outcome.kind)) {
		int oom;

		v->stalls = ploom_view_stalls(&trace->run, &oom);
		if (oom) {
			ploom_err_oom(err);
			return -1;
		}
	}
	v->failing = ploom_run_failing_step(&trace->run);
	v->mark_legend = ploom_run_mark_legend(&trace->run);
	return 0;
}
