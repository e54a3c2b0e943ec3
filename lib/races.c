/* The racing pairs of a trace; races.h documents what they are.
 *
 * One pass over the steps, then the waits of a deadlock, through the
 * happens-before analysis (hb.h) that the partial-order reduction uses
 * too: the races it reverses are those shown here.  Its tasks are the
 * trace's task ids made dense. */
#include "races.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hb.h"

struct ev {
	struct ploom_access acc[PLOOM_ACCESS_MAX];
	int nacc;
};

struct analysis {
	const struct ploom_run *run;
	int *tasks;             /* the task ids, ascending */
	size_t ntasks;
	struct ev *ev;          /* per step: its accesses */
	struct ploom_hb *hb;    /* events: the steps, then the waits */
	struct ploom_race *races;
	size_t nraces, races_cap;
};

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int dense(const struct analysis *an, int task)
{
	const int *p = bsearch(&task, an->tasks, an->ntasks, sizeof(int), cmp_int);

	return p ? (int)(p - an->tasks) : -1;
}

static int add_race(struct analysis *an, long first, long second, long wait,
		    const struct ploom_access *b, int nb)
{
	const struct ev *e = &an->ev[first];
	struct ploom_race *r;
	int i, k;

	/* the object they conflict on; two starts conflict on the task
	 * counter only for the names their order gives the tasks, which is
	 * no race a person needs to see */
	for (i = 0; i < e->nacc; i++)
		for (k = 0; k < nb; k++)
			if (ploom_conflicts(&e->acc[i], 1, &b[k], 1) &&
			    !ploom_obj_is_spawn(e->acc[i].obj))
				goto found;
	return 0; /* not a conflict after all: no race */
found:
	if (an->nraces == an->races_cap) {
		size_t cap = an->races_cap ? 2 * an->races_cap : 16;
		r = realloc(an->races, cap * sizeof(*r));
		if (!r)
			return -1;
		an->races = r;
		an->races_cap = cap;
	}
	an->races[an->nraces++] = (struct ploom_race){first, second, wait, e->acc[i].obj};
	return 0;
}

/* 1 if step s is a thread's begin and step c the start of that thread:
 * never reversed, as begin cannot run before its start. */
static int start_and_begin(const struct ploom_step *c, const struct ploom_step *s)
{
	return s->op == PLOOM_OP_BEGIN && c->op == PLOOM_OP_START &&
	       c->obj.kind == PLOOM_OBJ_THREAD && c->obj.id == s->task;
}

/* Which tasks the run shows finished after their last step: every one of
 * a pass, those not blocked at a deadlock, and those a blocking join
 * waited for. */
static void finished_tasks(char *out, const struct analysis *an)
{
	const struct ploom_run *run = an->run;
	const struct ploom_outcome *o = &run->outcome;
	size_t i;
	int t;

	memset(out, o->kind == PLOOM_OUTCOME_PASS || o->kind == PLOOM_OUTCOME_DEADLOCK,
	       an->ntasks);
	for (i = 0; i < o->nwaits && o->kind == PLOOM_OUTCOME_DEADLOCK; i++)
		if ((t = dense(an, o->waits[i].task)) >= 0)
			out[t] = 0;
	for (i = 0; i < run->nsteps; i++) {
		const struct ploom_step *s = &run->steps[i];
		if (s->op == PLOOM_OP_JOIN && s->mode == PLOOM_ACQUIRE_BLOCKING &&
		    s->obj.kind == PLOOM_OBJ_THREAD && s->obj.id != s->task &&
		    s->obj.id <= INT_MAX && (t = dense(an, (int)s->obj.id)) >= 0)
			out[t] = 1;
	}
}

static int collect_tasks(struct analysis *an)
{
	const struct ploom_run *run = an->run;
	size_t i, k, n = run->nsteps + run->outcome.nwaits;
	int *ids = malloc((n ? n : 1) * sizeof(*ids));

	if (!ids)
		return -1;
	n = 0;
	for (i = 0; i < run->nsteps; i++)
		ids[n++] = run->steps[i].task;
	for (i = 0; i < run->outcome.nwaits; i++)
		ids[n++] = run->outcome.waits[i].task;
	qsort(ids, n, sizeof(*ids), cmp_int);
	for (i = 1, k = n ? 1 : 0; i < n; i++)
		if (ids[i] != ids[k - 1])
			ids[k++] = ids[i];
	an->tasks = ids;
	an->ntasks = k;
	return 0;
}

/* The races of the steps, then those of the blocked operations of a
 * deadlock as if each ran next. */
static int analyse(struct analysis *an, const char *finished)
{
	const struct ploom_run *run = an->run;
	const struct ploom_outcome *oc = &run->outcome;
	size_t n = run->nsteps, k;
	long j, *c;
	long *last_of_task = NULL;
	int nc, i, ret = -1;

	last_of_task = malloc((an->ntasks ? an->ntasks : 1) * sizeof(*last_of_task));
	if (!last_of_task)
		return -1;
	for (k = 0; k < an->ntasks; k++)
		last_of_task[k] = -1;
	for (k = 0; k < n; k++)
		last_of_task[dense(an, run->steps[k].task)] = (long)k;
	for (j = 0; (size_t)j < n; j++) {
		const struct ploom_step *s = &run->steps[j];
		struct ev *ev = &an->ev[j];
		int q = dense(an, s->task);
		int exits = last_of_task[q] == j && finished[q];

		ev->nacc = ploom_op_accesses(ev->acc, s->task, s->op, s->obj, s->mode, exits);
		if (s->idle)
			ploom_hb_barrier(an->hb, j);
		if (ploom_hb_clock(an->hb, j, q, ev->acc, ev->nacc, -1) < 0)
			goto done;
		nc = ploom_hb_candidates(an->hb, &c, q, ev->acc, ev->nacc,
					 ploom_hb_waits(s->op, s->mode));
		if (nc < 0)
			goto done;
		nc = ploom_hb_maximal(an->hb, c, nc);
		for (i = 0; i < nc; i++)
			if (!start_and_begin(&run->steps[c[i]], s) &&
			    add_race(an, c[i], j, -1, ev->acc, ev->nacc) < 0)
				goto done;
		if (ploom_hb_step(an->hb, j, q, s->op, ev->acc, ev->nacc, exits) < 0)
			goto done;
	}
	for (k = 0; oc->kind == PLOOM_OUTCOME_DEADLOCK && k < oc->nwaits; k++) {
		const struct ploom_wait *w = &oc->waits[k];
		struct ploom_obj obj = {PLOOM_OBJ_NONE, 0};
		struct ploom_access acc[PLOOM_ACCESS_MAX];
		int q = dense(an, w->task), na;

		if (w->object && ploom_obj_parse(&obj, w->object, strlen(w->object)) < 0)
			continue;
		/* as if it ran, not as if the task then ended */
		/* a blocked operation: no timed one */
		na = ploom_op_accesses(acc, w->task, w->op, obj, PLOOM_ACQUIRE_BLOCKING, 0);
		if (ploom_hb_clock(an->hb, (long)(n + k), q, acc, na, -1) < 0)
			goto done;
		nc = ploom_hb_candidates(an->hb, &c, q, acc, na, 1);
		if (nc < 0)
			goto done;
		nc = ploom_hb_maximal(an->hb, c, nc);
		for (i = 0; i < nc; i++)
			if (add_race(an, c[i], -1, (long)k, acc, na) < 0)
				goto done;
	}
	ret = 0;
done:
	free(last_of_task);
	return ret;
}

/* a wait's race after every step's */
static long second_key(const struct ploom_race *r, const struct ploom_run *run)
{
	return r->second >= 0 ? r->second : (long)run->nsteps + r->wait;
}

static int cmp_races(const void *a, const void *b, void *run)
{
	const struct ploom_race *x = a, *y = b;
	long kx = second_key(x, run), ky = second_key(y, run);

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return (kx > ky) - (kx < ky);
}

int ploom_trace_races(struct ploom_race **out, size_t *n, const struct ploom_trace *trace,
		      struct ploom_err *err)
{
	const struct ploom_run *run = &trace->run;
	struct analysis an;
	size_t events = run->nsteps + run->outcome.nwaits, i, k;
	char *finished = NULL;
	int ret = -1;

	*out = NULL;
	*n = 0;
	memset(&an, 0, sizeof(an));
	an.run = run;
	if (collect_tasks(&an) < 0) {
		ploom_err_oom(err);
		goto done;
	}
	if (an.ntasks && events > (size_t)PLOOM_RACES_MAX_CLOCKS / an.ntasks) {
		ploom_err_set(err, PLOOM_ERR_INPUT,
			      "the trace is too large to find its races (%zu steps and waits, %zu tasks)",
			      events, an.ntasks);
		goto done;
	}
	an.ev = calloc(events ? events : 1, sizeof(*an.ev));
	finished = calloc(an.ntasks ? an.ntasks : 1, 1);
	if (!an.ev || !finished || ploom_hb_new(&an.hb) < 0 ||
	    ploom_hb_reset(an.hb, (int)an.ntasks, events) < 0) {
		ploom_err_oom(err);
		goto done;
	}
	finished_tasks(finished, &an);
	if (analyse(&an, finished) < 0) {
		ploom_err_oom(err);
		goto done;
	}
	/* a pair found through two of its objects counts once */
	if (an.nraces)
		qsort_r(an.races, an.nraces, sizeof(*an.races), cmp_races, (void *)run);
	for (i = 0, k = 0; i < an.nraces; i++)
		if (!k || cmp_races(&an.races[k - 1], &an.races[i], (void *)run))
			an.races[k++] = an.races[i];
	*out = k ? an.races : NULL;
	*n = k;
	if (k)
		an.races = NULL;
	ret = 0;
done:
	ploom_hb_free(an.hb);
	free(an.races);
	free(an.tasks);
	free(an.ev);
	free(finished);
	return ret;
}

/* ---- which race the failure rests on ---- */

/* The last write of a task to an object. */
struct last_write {
	int task;
	struct ploom_obj obj;
	long step;
};

static int cmp_last_write(const void *a, const void *b)
{
	const struct last_write *x = a, *y = b;

	if (x->task != y->task)
		return x->task < y->task ? -1 : 1;
	if (x->obj.kind != y->obj.kind)
		return x->obj.kind < y->obj.kind ? -1 : 1;
	return (x->obj.id > y->obj.id) - (x->obj.id < y->obj.id);
}

static int same_obj(struct ploom_obj a, struct ploom_obj b)
{
	return a.kind == b.kind && a.id == b.id;
}

/* 1 if race r is a lost update: a read by task A, then a write by task B,
 * and A writes the object again after B (writes[0..n) sorted, each
 * task's last write to each object). */
static int lost_update(const struct ploom_run *run, const struct ploom_race *r,
		       const struct last_write *writes, size_t n)
{
	const struct ploom_step *a = &run->steps[r->first], *b = &run->steps[r->second];
	struct last_write key = {a->task, r->obj, 0};
	const struct last_write *w;

	if (a->op != PLOOM_OP_READ || b->op != PLOOM_OP_WRITE || !writes)
		return 0;
	w = bsearch(&key, writes, n, sizeof(*writes), cmp_last_write);
	return w && w->step > r->second;
}

long ploom_races_key(const struct ploom_trace *trace, const struct ploom_race *races,
		     size_t n)
{
	const struct ploom_run *run = &trace->run;
	struct last_write *writes = NULL;
	struct ploom_obj fobj;
	size_t i, nw = 0, k;
	long f, best = -1;
	int on_failing = 0, best_lost = 0;

	if (!ploom_outcome_is_failure(run->outcome.kind))
		return -1;
	if (run->outcome.kind == PLOOM_OUTCOME_DEADLOCK) {
		for (i = 0; i < n; i++)
			if (races[i].second < 0 && (best < 0 || races[i].first > races[best].first))
				best = (long)i;
		return best;
	}
	f = ploom_run_failing_step(&trace->run);
	if (f < 0)
		return -1;
	fobj = run->steps[f].obj;
	for (i = 0; i < n && !on_failing; i++)
		on_failing = races[i].second >= 0 && races[i].second <= f &&
			     fobj.kind != PLOOM_OBJ_NONE && same_obj(races[i].obj, fobj);
	/* each task's last write to each object; without the memory for
	 * them, no race counts as a lost update */
	writes = malloc((size_t)(f + 1) * sizeof(*writes));
	for (i = 0; writes && i <= (size_t)f; i++)
		if (run->steps[i].op == PLOOM_OP_WRITE)
			writes[nw++] = (struct last_write){run->steps[i].task, run->steps[i].obj,
							   (long)i};
	if (writes) {
		/* stable enough: of equal keys the later step wins below */
		qsort(writes, nw, sizeof(*writes), cmp_last_write);
		for (i = 0, k = 0; i < nw; i++) {
			if (k && !cmp_last_write(&writes[k - 1], &writes[i])) {
				if (writes[i].step > writes[k - 1].step)
					writes[k - 1].step = writes[i].step;
				continue;
			}
			writes[k++] = writes[i];
		}
		nw = k;
	}
	for (i = 0; i < n; i++) {
		const struct ploom_race *r = &races[i];
		int lost;

		if (r->second < 0 || r->second > f)
			continue;
		if (on_failing && !same_obj(r->obj, fobj))
			continue;
		lost = lost_update(run, r, writes, nw);
		if (best >= 0) {
			const struct ploom_race *b = &races[best];
			if (lost != best_lost) {
				if (lost < best_lost)
					continue;
			} else if (r->second != b->second ? r->second < b->second
							  : r->first <= b->first) {
				continue;
			}
		}
		best = (long)i;
		best_lost = lost;
	}
	free(writes);
	return best;
}

/* ---- the explanation ---- */

/* What a step did to obj, in the past tense, and the verb for "could
 * ... it": its operation's, or "finished" for the end of its own thread. */
static void verbs(const struct ploom_step *s, struct ploom_obj obj, const char **past,
		  const char **plain)
{
	static const struct {
		const char *past, *plain;
	} v[PLOOM_NOPS] = {
		[PLOOM_OP_BEGIN] = {"began", "begin"},
		[PLOOM_OP_START] = {"started", "start"},
		[PLOOM_OP_JOIN] = {"joined", "join"},
		[PLOOM_OP_IS_ALIVE] = {"checked", "check"},
		[PLOOM_OP_ACQUIRE] = {"acquired", "acquire"},
		[PLOOM_OP_RELEASE] = {"released", "release"},
		[PLOOM_OP_LOCKED] = {"checked", "check"},
		[PLOOM_OP_READ] = {"read", "read"},
		[PLOOM_OP_WRITE] = {"wrote", "write"},
		[PLOOM_OP_YIELD_NOW] = {"yielded", "yield"},
		[PLOOM_OP_SLEEP] = {"slept", "sleep"},
	};

	if (obj.kind == PLOOM_OBJ_CLOCK && s->op != PLOOM_OP_SLEEP && s->op != PLOOM_OP_READ) {
		/* a timed acquire or join: the clock is its second object */
		*past = "timed out";
		*plain = "time out";
		return;
	}
	if (s->op != PLOOM_OP_BEGIN && !same_obj(s->obj, obj)) {
		*past = "finished";
		*plain = "finish";
		return;
	}
	*past = (unsigned)s->op < PLOOM_NOPS ? v[s->op].past : "?";
	*plain = (unsigned)s->op < PLOOM_NOPS ? v[s->op].plain : "?";
}

/* " (bank_account.py:20)", or nothing for a place that is not known. */
static void add_place(struct ploom_buf *b, const struct ploom_short_names *sn,
		      const struct ploom_where *w)
{
	if (w->file)
		ploom_buf_addf(b, " (%s:%d)", ploom_short_name(sn, w->file), w->line);
}

char *ploom_race_explain(const struct ploom_trace *trace, const struct ploom_race *race)
{
	struct ploom_short_names *sn = NULL;
	char *line;

	if (ploom_short_names_new(&sn, &trace->run, NULL) < 0)
		return NULL;
	line = ploom_race_explain_with(trace, race, sn);
	ploom_short_names_free(sn);
	return line;
}

char *ploom_race_explain_with(const struct ploom_trace *trace, const struct ploom_race *race,
			      const struct ploom_short_names *sn)
{
	const struct ploom_run *run = &trace->run;
	const struct ploom_step *a = &run->steps[race->first];
	const struct ploom_step *b = race->second >= 0 ? &run->steps[race->second] : NULL;
	const struct ploom_wait *w = b ? NULL : &run->outcome.waits[race->wait];
	const struct ploom_where *bw = b ? &b->where : &w->where;
	struct ploom_buf out = {0};
	char *ta = NULL, *tb = NULL, *obj = NULL;
	const char *past_a, *plain_a, *past_b, *plain_b;
	struct ploom_step as_step;

	ta = ploom_run_task_name(run, a->task);
	tb = ploom_run_task_name(run, b ? b->task : w->task);
	obj = ploom_run_display_name(run, race->obj);
	if (!ta || !tb || !obj)
		goto done;
	verbs(a, race->obj, &past_a, &plain_a);
	if (b) {
		verbs(b, race->obj, &past_b, &plain_b);
	} else {
		memset(&as_step, 0, sizeof(as_step));
		as_step.op = w->op;
		as_step.obj = race->obj;
		verbs(&as_step, race->obj, &past_b, &plain_b);
	}
	/* "mathieu finished before lucas joined mathieu": a thread's end
	 * names no object of its own */
	if (!strcmp(past_a, "finished"))
		ploom_buf_addf(&out, "%s finished", ta);
	else
		ploom_buf_addf(&out, "%s %s %s", ta, past_a, obj);
	add_place(&out, sn, &a->where);
	if (!b)
		ploom_buf_addf(&out, " before %s could %s it", tb, plain_b);
	else if (!strcmp(past_b, "finished"))
		ploom_buf_addf(&out, " before %s finished", tb);
	else if (!strcmp(past_a, "finished"))
		ploom_buf_addf(&out, " before %s %s %s", tb, past_b, obj);
	else
		ploom_buf_addf(&out, " before %s %s it", tb, past_b);
	add_place(&out, sn, bw);
done:
	free(ta);
	free(tb);
	free(obj);
	if (out.data && (!ta || !tb || !obj)) {
		ploom_buf_release(&out);
		return NULL;
	}
	return out.data;
}
