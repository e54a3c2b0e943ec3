/* Source-set DPOR with sleep sets; dpor.h documents it.
 *
 * The search keeps one node per step of the current path: the enabled
 * tasks there, the task that ran, the sleep set on arrival, the backtrack
 * set (tasks to run there) and the done set (tasks whose subtree is
 * explored).  Each run returns the whole path; its new steps are analysed
 * for races with vector clocks built from ploom_conflicts(), which only
 * ever adds tasks to backtrack sets of nodes above; then the search
 * backtracks to the deepest node with a task left to run. */
#include "dpor.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"

/* ---- task sets ---- */

struct tset {
	uint64_t *w;
	size_t nw;
};

static int tset_has(const struct tset *s, int t)
{
	size_t i = (size_t)t / 64;

	return t >= 0 && i < s->nw && (s->w[i] >> (t % 64) & 1);
}

static int tset_add(struct tset *s, int t)
{
	size_t i = (size_t)t / 64;

	if (i >= s->nw) {
		uint64_t *w = realloc(s->w, (i + 1) * sizeof(*w));
		if (!w)
			return -1;
		memset(w + s->nw, 0, (i + 1 - s->nw) * sizeof(*w));
		s->w = w;
		s->nw = i + 1;
	}
	s->w[i] |= (uint64_t)1 << (t % 64);
	return 0;
}

static void tset_clear(struct tset *s)
{
	if (s->nw)
		memset(s->w, 0, s->nw * sizeof(*s->w));
}

static void tset_free(struct tset *s)
{
	free(s->w);
	s->w = NULL;
	s->nw = 0;
}

/* ---- the search state ---- */

struct node {
	int chosen;
	int *enabled;
	size_t nenabled, enabled_cap;
	struct tset sleep;      /* asleep on arrival */
	struct tset backtrack;
	struct tset done;
};

/* A step of the current run, as the race analysis sees it. */
struct ev {
	int task;
	int prev;               /* the task's previous event, or -1 */
	struct ploom_access acc[2];
	int nacc;
};

struct read {
	long ev;
	int free;
};

/* What the analysis tracks of each object along the run.  "Free" is what
 * a blocking operation waits for: a lock not held, a thread not started
 * or finished (joining an unstarted thread raises at once). */
struct obj_state {
	struct ploom_obj obj;
	int used;
	long last_write;        /* event index, -1: none */
	int last_write_free;
	struct read *reads;     /* events that read it since last_write */
	size_t nreads, reads_cap;
	long last_free;         /* last event that accessed it while free, -1: none */
	long last_free_write;   /* last event that wrote it while free, -1: none */
	int held;               /* lock */
	int started, finished;  /* thread */
};

static const struct ploom_strategy_ops dpor_ops;

struct ploom_dpor {
	struct ploom_strategy base;     /* first: a search is a strategy (search.h) */
	struct node *nodes;
	size_t nnodes, nodes_cap;
	size_t nodes_init;      /* nodes[0..nodes_init) are initialised (own memory) */
	size_t depth;           /* the node whose choice the next run changes */
	int first;              /* no run yet */
	int *prefix;
	size_t nprefix, prefix_cap;
	int *sleep;
	size_t nsleep, sleep_cap;
	/* scratch for one run */
	struct ev *ev;
	size_t ev_cap;
	int *vc;                /* vc[j * ntasks + t]: last event of t before or at j, plus 1 */
	size_t vc_cap;
	int ntasks;
	int *last_of;           /* per task: its latest event so far, -1 */
	int *first_in_v;        /* scratch of reverse_race(), per task */
	size_t tasks_cap, first_in_v_cap;
	struct obj_state *objs;
	size_t objs_cap;        /* a power of two: open addressing */
	size_t objs_used;
	struct ploom_dpor_stats stats;
};

int ploom_dpor_new(struct ploom_dpor **out, struct ploom_err *err)
{
	struct ploom_dpor *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (!d)
		return ploom_err_oom(err);
	d->base.ops = &dpor_ops;
	d->first = 1;
	*out = d;
	return 0;
}

static void objs_free(struct ploom_dpor *d)
{
	size_t i;

	for (i = 0; i < d->objs_cap; i++)
		free(d->objs[i].reads);
	free(d->objs);
	d->objs = NULL;
	d->objs_cap = 0;
}

void ploom_dpor_free(struct ploom_dpor *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->nodes_init; i++) {
		free(d->nodes[i].enabled);
		tset_free(&d->nodes[i].sleep);
		tset_free(&d->nodes[i].backtrack);
		tset_free(&d->nodes[i].done);
	}
	free(d->nodes);
	free(d->prefix);
	free(d->sleep);
	free(d->ev);
	free(d->vc);
	free(d->last_of);
	free(d->first_in_v);
	objs_free(d);
	free(d);
}

const int *ploom_dpor_prefix(const struct ploom_dpor *d, size_t *n)
{
	*n = d->nprefix;
	return d->prefix;
}

const int *ploom_dpor_sleep(const struct ploom_dpor *d, size_t *n)
{
	*n = d->nsleep;
	return d->sleep;
}

void ploom_dpor_get_stats(const struct ploom_dpor *d, struct ploom_dpor_stats *out)
{
	*out = d->stats;
}

/* Grows *p (of *cap elements of size sz) to hold n; 0 or -1. */
static int grow(void **p, size_t *cap, size_t n, size_t sz)
{
	size_t c = *cap ? *cap : 16;
	void *q;

	if (n <= *cap)
		return 0;
	while (c < n)
		c *= 2;
	q = realloc(*p, c * sz);
	if (!q)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

/* ---- objects ---- */

static size_t obj_hash(struct ploom_obj o)
{
	uint64_t h = ((uint64_t)o.kind << 56) ^ (uint64_t)o.id;

	h *= 0x9E3779B97F4A7C15ULL;
	return (size_t)(h >> 20);
}

static void objs_reset(struct ploom_dpor *d)
{
	size_t i;

	for (i = 0; i < d->objs_cap; i++)
		d->objs[i].used = 0;
	d->objs_used = 0;
}

/* The state of obj, created (fresh) on first use; NULL when out of memory. */
static struct obj_state *obj_get(struct ploom_dpor *d, struct ploom_obj obj)
{
	size_t i;
	struct obj_state *o;

	if (2 * (d->objs_used + 1) > d->objs_cap) {
		/* rehash into a table twice as big; reads lists move along */
		size_t cap = d->objs_cap ? 2 * d->objs_cap : 16, k;
		struct obj_state *t = calloc(cap, sizeof(*t)), *old = d->objs;

		if (!t)
			return NULL;
		for (k = 0; k < d->objs_cap; k++) {
			if (old[k].used) {
				size_t h = obj_hash(old[k].obj) & (cap - 1);
				while (t[h].used)
					h = (h + 1) & (cap - 1);
				t[h] = old[k];
			} else {
				free(old[k].reads);
			}
		}
		free(old);
		d->objs = t;
		d->objs_cap = cap;
	}
	i = obj_hash(obj) & (d->objs_cap - 1);
	while (d->objs[i].used && (d->objs[i].obj.kind != obj.kind || d->objs[i].obj.id != obj.id))
		i = (i + 1) & (d->objs_cap - 1);
	o = &d->objs[i];
	if (!o->used) {
		struct read *r = o->reads;
		size_t rc = o->reads_cap;

		memset(o, 0, sizeof(*o));
		o->reads = r;
		o->reads_cap = rc;
		o->used = 1;
		d->objs_used++;
		o->obj = obj;
		o->last_write = -1;
		o->last_free = -1;
		o->last_free_write = -1;
	}
	return o;
}

/* Whether the object is free before an access of op (or of the exit of
 * the thread it names), and its new state after. */
static int obj_step(struct obj_state *o, enum ploom_op op, int exit_access)
{
	int free_before;

	if (o->obj.kind == PLOOM_OBJ_LOCK) {
		free_before = !o->held;
		if (op == PLOOM_OP_ACQUIRE)
			o->held = 1; /* held after, whether it was taken now or before */
		else if (op == PLOOM_OP_RELEASE)
			o->held = 0;
	} else if (o->obj.kind == PLOOM_OBJ_THREAD) {
		free_before = !o->started || o->finished;
		if (exit_access)
			o->finished = 1;
		else if (op == PLOOM_OP_START)
			o->started = 1;
		else if (op == PLOOM_OP_BEGIN)
			o->started = 1;
	} else {
		free_before = 1;
	}
	return free_before;
}

/* ---- vector clocks ---- */

static int *vc_of(struct ploom_dpor *d, long j)
{
	return d->vc + (size_t)j * (size_t)d->ntasks;
}

/* 1 if event i happens before the event whose clock is vc (i included). */
static int before(const struct ploom_dpor *d, const int *vc, long i)
{
	return vc[d->ev[i].task] >= i + 1;
}

static void vc_join(int *to, const int *from, int n)
{
	int t;

	for (t = 0; t < n; t++)
		if (from[t] > to[t])
			to[t] = from[t];
}

/* ---- races ---- */

/* The race candidates of an event of task q (its clock vc, the clock of
 * q's previous event prev_vc or NULL) among the accesses a[0..na), as the
 * objects stand before it: for each access, the writes and reads it
 * conflicts with that nothing else orders before it.  A blocking event
 * takes only those it could have run before, else the last event on its
 * object that it could have run before.  Writes up to 8 candidates into
 * out; returns how many. */
static int candidates(struct ploom_dpor *d, int q, const int *prev_vc,
		      const struct ploom_access *a, int na, int blocking, long *out)
{
	int k, n = 0;

	for (k = 0; k < na; k++) {
		struct obj_state *o = obj_get(d, a[k].obj);
		long c[8];
		int cf[8], nc = 0, kept = 0, i;
		size_t r;

		if (!o)
			return -1;
		if (a[k].write && o->nreads) {
			for (r = 0; r < o->nreads && nc < 8; r++) {
				c[nc] = o->reads[r].ev;
				cf[nc++] = o->reads[r].free;
			}
		} else if (o->last_write >= 0) {
			c[nc] = o->last_write;
			cf[nc++] = o->last_write_free;
		}
		for (i = 0; i < nc; i++) {
			if (blocking && k == 0 && !cf[i])
				continue;
			kept++;
			if (n < 8)
				out[n++] = c[i];
		}
		if (blocking && k == 0 && !kept && n < 8) {
			/* a read conflicts with writes only */
			long f = a[k].write ? o->last_free : o->last_free_write;
			if (f >= 0)
				out[n++] = f;
		}
	}
	/* drop the candidates of q itself and those already before q */
	for (k = 0; k < n;) {
		long c = out[k];
		if (d->ev[c].task == q || (prev_vc && before(d, prev_vc, c)))
			out[k] = out[--n];
		else
			k++;
	}
	return n;
}

/* Among the candidates, those that happen before another are not races
 * with the later event: it is ordered after them through the other. */
static int keep_maximal(struct ploom_dpor *d, long *c, int n)
{
	int i, j, m = 0;

	for (i = 0; i < n; i++) {
		int dominated = 0;
		for (j = 0; j < n && !dominated; j++)
			if (j != i && c[j] != c[i] && before(d, vc_of(d, c[j]), c[i]))
				dominated = 1;
		if (!dominated)
			c[m++] = c[i];
	}
	return m;
}

/* The race (i, j), j an event of task q with clock vc_j at position j
 * (j may be the end of the run: a virtual event): at node i, make sure
 * some task that can start the reordering "j before i" is in backtrack. */
static int reverse_race(struct ploom_dpor *d, long i, long j, int q, const int *vc_j)
{
	struct node *ni = &d->nodes[i];
	int t, pick = -1, any = 0;
	long k;
	size_t e;

	d->stats.races++;
	for (t = 0; t < d->ntasks; t++)
		d->first_in_v[t] = -1;
	/* v: the events after i not ordered after it, then j; its initials
	 * are the tasks whose first event in v has no predecessor in v */
	for (k = i + 1; k <= j; k++) {
		const int *vk;
		int tk, initial = 1;

		if (k == j) {
			vk = vc_j;
			tk = q;
		} else {
			vk = vc_of(d, k);
			tk = d->ev[k].task;
			if (before(d, vk, i))
				continue;
		}
		if (d->first_in_v[tk] >= 0)
			continue;
		for (t = 0; t < d->ntasks && initial; t++)
			if (d->first_in_v[t] >= 0 && vk[t] >= d->first_in_v[t] + 1)
				initial = 0;
		d->first_in_v[tk] = (int)k;
		if (!initial)
			continue;
		for (e = 0; e < ni->nenabled; e++)
			if (ni->enabled[e] == tk)
				break;
		if (e == ni->nenabled)
			continue;
		any = 1;
		if (tset_has(&ni->backtrack, tk) || tset_has(&ni->sleep, tk))
			return 0;
		if (pick < 0 || tk == q)
			pick = tk;
	}
	if (any)
		return tset_add(&ni->backtrack, pick);
	/* nothing enabled at i starts the reordering: try every task there */
	d->stats.fallbacks++;
	for (e = 0; e < ni->nenabled; e++)
		if (!tset_has(&ni->sleep, ni->enabled[e]) &&
		    tset_add(&ni->backtrack, ni->enabled[e]) < 0)
			return -1;
	return 0;
}

/* The clock an event of task q with accesses a[0..na) gets, as the
 * objects stand; extra: one more event it is ordered after, or -1. */
static void clock_for(struct ploom_dpor *d, int *vc, int q, const struct ploom_access *a,
		      int na, long extra)
{
	int k;
	size_t r;

	memset(vc, 0, (size_t)d->ntasks * sizeof(*vc));
	if (d->last_of[q] >= 0)
		vc_join(vc, vc_of(d, d->last_of[q]), d->ntasks);
	for (k = 0; k < na; k++) {
		struct obj_state *o = obj_get(d, a[k].obj);
		if (!o)
			continue;
		if (o->last_write >= 0)
			vc_join(vc, vc_of(d, o->last_write), d->ntasks);
		if (a[k].write)
			for (r = 0; r < o->nreads; r++)
				vc_join(vc, vc_of(d, o->reads[r].ev), d->ntasks);
	}
	if (extra >= 0)
		vc_join(vc, vc_of(d, extra), d->ntasks);
}

/* Races of a pending operation that did not run (the run ended first),
 * as if it ran next: op of task q, `after` a step it must follow (the
 * failing step) or -1, blocking if it waits for its object. */
static int virtual_races(struct ploom_dpor *d, long n, int q, enum ploom_op op,
			 struct ploom_obj obj, long after, int blocking, int *vc)
{
	struct ploom_access a[2];
	long c[9];
	int na = ploom_pending_accesses(a, q, op, obj), nc, i;
	const int *prev_vc = d->last_of[q] >= 0 ? vc_of(d, d->last_of[q]) : NULL;

	clock_for(d, vc, q, a, na, after);
	vc[q] = (int)n + 1;
	nc = candidates(d, q, prev_vc, a, na, blocking, c);
	if (nc < 0)
		return -1;
	if (after >= 0 && d->ev[after].task != q && !(prev_vc && before(d, prev_vc, after)))
		c[nc++] = after;
	nc = keep_maximal(d, c, nc);
	for (i = 0; i < nc; i++)
		if (reverse_race(d, c[i], n, q, vc) < 0)
			return -1;
	return 0;
}

/* ---- taking a run ---- */

/* 1 if task t is unfinished at step s: it runs it or waits in it. */
static int unfinished_at(const struct ploom_step *s, int t)
{
	size_t i;

	if (s->task == t)
		return 1;
	for (i = 0; i < s->npending; i++)
		if (s->pending[i].task == t)
			return 1;
	return 0;
}

/* Whether the task of the last step finished after it. */
static int last_step_exits(const struct ploom_run *run)
{
	const struct ploom_outcome *o = &run->outcome;
	int t = run->steps[run->nsteps - 1].task;
	size_t i;

	if (o->kind == PLOOM_OUTCOME_PASS)
		return 1;
	if (o->kind == PLOOM_OUTCOME_DEADLOCK) {
		for (i = 0; i < o->nwaits; i++)
			if (o->waits[i].task == t)
				return 0;
		return 1;
	}
	return 0;
}

static int node_init(struct node *nd, const struct ploom_step *s)
{
	if (grow((void **)&nd->enabled, &nd->enabled_cap, s->nenabled, sizeof(int)) < 0)
		return -1;
	memcpy(nd->enabled, s->enabled, s->nenabled * sizeof(int));
	nd->nenabled = s->nenabled;
	nd->chosen = s->task;
	tset_clear(&nd->sleep);
	tset_clear(&nd->backtrack);
	tset_clear(&nd->done);
	return tset_add(&nd->backtrack, s->task);
}

/* The prefix and sleep set that make the next run choose
 * nodes[depth].chosen at node depth. */
static int set_prefix(struct ploom_dpor *d)
{
	const struct node *nd = &d->nodes[d->depth];
	size_t k;
	int t;

	d->nprefix = d->nsleep = 0;
	for (k = 0; k <= d->depth; k++) {
		if (d->nodes[k].nenabled < 2)
			continue;
		if (grow((void **)&d->prefix, &d->prefix_cap, d->nprefix + 1, sizeof(int)) < 0)
			return -1;
		d->prefix[d->nprefix++] = d->nodes[k].chosen;
	}
	for (t = 0; (size_t)t < 64 * (nd->sleep.nw > nd->done.nw ? nd->sleep.nw : nd->done.nw); t++) {
		if (!tset_has(&nd->sleep, t) && !tset_has(&nd->done, t))
			continue;
		if (grow((void **)&d->sleep, &d->sleep_cap, d->nsleep + 1, sizeof(int)) < 0)
			return -1;
		d->sleep[d->nsleep++] = t;
	}
	return 0;
}

int ploom_dpor_next(struct ploom_dpor *d, const struct ploom_run *run, struct ploom_err *err)
{
	size_t n = run->nsteps, k, e, from = d->first ? 0 : d->depth;
	int maxtask = 0, t;
	long j;

	/* the path down to the changed node must be the one asked for */
	if (!d->first && n <= d->depth)
		return ploom_err_set(err, PLOOM_ERR_DIVERGENCE,
				     "the schedule ended after %zu steps, before the choice asked "
				     "for at step %zu", n, d->depth);
	for (k = 0; !d->first && k <= d->depth; k++)
		if (run->steps[k].task != d->nodes[k].chosen)
			return ploom_err_set(err, PLOOM_ERR_DIVERGENCE,
					     "the schedule picked task %d at step %zu where task %d "
					     "was asked for", run->steps[k].task, k,
					     d->nodes[k].chosen);
	for (k = 0; k < n; k++) {
		const struct ploom_step *s = &run->steps[k];
		if (s->task > maxtask)
			maxtask = s->task;
		for (e = 0; e < s->npending; e++)
			if (s->pending[e].task > maxtask)
				maxtask = s->pending[e].task;
	}
	for (k = 0; k < run->outcome.nwaits; k++)
		if (run->outcome.waits[k].task > maxtask)
			maxtask = run->outcome.waits[k].task;
	d->ntasks = maxtask + 1;
	if (grow((void **)&d->nodes, &d->nodes_cap, n, sizeof(*d->nodes)) < 0 ||
	    grow((void **)&d->ev, &d->ev_cap, n + 1, sizeof(*d->ev)) < 0 ||
	    grow((void **)&d->vc, &d->vc_cap, (n + 1) * (size_t)d->ntasks, sizeof(int)) < 0 ||
	    grow((void **)&d->last_of, &d->tasks_cap, (size_t)d->ntasks, sizeof(int)) < 0 ||
	    grow((void **)&d->first_in_v, &d->first_in_v_cap, (size_t)d->ntasks, sizeof(int)) < 0)
		return ploom_err_oom(err);
	/* grow() leaves the new part of the node array uninitialised */
	memset(d->nodes + d->nodes_init, 0, (d->nodes_cap - d->nodes_init) * sizeof(*d->nodes));
	d->nodes_init = d->nodes_cap;
	/* the new nodes, with their sleep sets */
	for (k = d->first ? 0 : d->depth + 1; k < n; k++) {
		struct node *nd = &d->nodes[k];
		if (node_init(nd, &run->steps[k]) < 0)
			return ploom_err_oom(err);
		if (k == 0)
			continue;
		{
			const struct node *up = &d->nodes[k - 1];
			const struct ploom_step *s = &run->steps[k - 1];
			struct ploom_access la[2], pa[2];
			int nla = ploom_op_accesses(la, s->task, s->op, s->obj,
						    !unfinished_at(&run->steps[k], s->task));

			for (e = 0; e < s->npending; e++) {
				const struct ploom_pending *p = &s->pending[e];
				int np;
				if (!tset_has(&up->sleep, p->task) && !tset_has(&up->done, p->task))
					continue;
				np = ploom_pending_accesses(pa, p->task, p->op, p->obj);
				if (!ploom_conflicts(la, nla, pa, np) && tset_add(&nd->sleep, p->task) < 0)
					return ploom_err_oom(err);
			}
		}
		if (tset_has(&nd->sleep, nd->chosen))
			return ploom_err_set(err, PLOOM_ERR_DIVERGENCE,
					     "the schedule ran task %d at step %zu, which was asleep",
					     nd->chosen, k);
	}
	d->nnodes = n;

	/* events, clocks, and the races of the new ones */
	objs_reset(d);
	for (t = 0; t < d->ntasks; t++)
		d->last_of[t] = -1;
	for (j = 0; (size_t)j < n; j++) {
		const struct ploom_step *s = &run->steps[j];
		struct ev *ev = &d->ev[j];
		int exits = (size_t)j + 1 < n ? !unfinished_at(&run->steps[j + 1], s->task)
					      : last_step_exits(run);
		int *vc = vc_of(d, j), a, blocking, free_before;
		long c[8];
		int nc, i;

		ev->task = s->task;
		ev->prev = d->last_of[s->task];
		ev->nacc = ploom_op_accesses(ev->acc, s->task, s->op, s->obj, exits);
		/* a nonblocking or timed acquire runs whether the lock is free
		 * or not, a timed join whether the thread has ended or not: they
		 * wait for nothing, so their races are those of any read or
		 * write (a timed join's, those of is_alive) */
		blocking = (s->op == PLOOM_OP_ACQUIRE || s->op == PLOOM_OP_JOIN) &&
			   s->mode == PLOOM_ACQUIRE_BLOCKING;
		clock_for(d, vc, s->task, ev->acc, ev->nacc, -1);
		vc[s->task] = (int)j + 1;
		if ((size_t)j >= from) {
			const int *prev_vc = ev->prev >= 0 ? vc_of(d, ev->prev) : NULL;
			nc = candidates(d, s->task, prev_vc, ev->acc, ev->nacc, blocking, c);
			if (nc < 0)
				return ploom_err_oom(err);
			nc = keep_maximal(d, c, nc);
			for (i = 0; i < nc; i++)
				if (reverse_race(d, c[i], j, s->task, vc) < 0)
					return ploom_err_oom(err);
		}
		/* then the event changes its objects */
		for (a = 0; a < ev->nacc; a++) {
			struct obj_state *o = obj_get(d, ev->acc[a].obj);
			int exit_access = exits && a == ev->nacc - 1 &&
					  ev->acc[a].obj.kind == PLOOM_OBJ_THREAD &&
					  ev->acc[a].obj.id == s->task;
			if (!o)
				return ploom_err_oom(err);
			free_before = obj_step(o, s->op, exit_access);
			if (free_before) {
				o->last_free = j;
				if (ev->acc[a].write)
					o->last_free_write = j;
			}
			if (ev->acc[a].write) {
				o->last_write = j;
				o->last_write_free = free_before;
				o->nreads = 0;
			} else {
				if (grow((void **)&o->reads, &o->reads_cap, o->nreads + 1,
					 sizeof(*o->reads)) < 0)
					return ploom_err_oom(err);
				o->reads[o->nreads++] = (struct read){j, free_before};
			}
		}
		d->last_of[s->task] = (int)j;
	}
	/* what did not run because the run ended */
	if (n && ploom_outcome_is_failure(run->outcome.kind) &&
	    run->outcome.kind != PLOOM_OUTCOME_DEADLOCK) {
		const struct ploom_step *s = &run->steps[n - 1];
		for (e = 0; e < s->npending; e++) {
			const struct ploom_pending *p = &s->pending[e];
			int enabled = ploom_step_is_enabled(s, p->task);
			if (virtual_races(d, (long)n, p->task, p->op, p->obj, enabled ? (long)n - 1 : -1,
					  !enabled, vc_of(d, (long)n)) < 0)
				return ploom_err_oom(err);
		}
	} else if (run->outcome.kind == PLOOM_OUTCOME_DEADLOCK ||
		   run->outcome.kind == PLOOM_OUTCOME_SLEEP_BLOCKED) {
		for (k = 0; k < run->outcome.nwaits; k++) {
			const struct ploom_wait *w = &run->outcome.waits[k];
			struct ploom_obj obj = {PLOOM_OBJ_NONE, 0};
			if (w->object)
				ploom_obj_parse(&obj, w->object, strlen(w->object));
			if (virtual_races(d, (long)n, w->task, w->op, obj, -1, 1, vc_of(d, (long)n)) < 0)
				return ploom_err_oom(err);
		}
	}
	d->first = 0;

	/* backtrack to the deepest node with a task left to run */
	for (k = n; k-- > 0;) {
		struct node *nd = &d->nodes[k];
		int pick = -1;

		if (tset_add(&nd->done, nd->chosen) < 0)
			return ploom_err_oom(err);
		for (e = 0; e < nd->nenabled && pick < 0; e++) {
			t = nd->enabled[e];
			if (tset_has(&nd->backtrack, t) && !tset_has(&nd->done, t) &&
			    !tset_has(&nd->sleep, t))
				pick = t;
		}
		if (pick >= 0) {
			nd->chosen = pick;
			d->depth = k;
			d->nnodes = k + 1;
			if (set_prefix(d) < 0)
				return ploom_err_oom(err);
			return 1;
		}
	}
	d->nnodes = 0;
	d->nprefix = d->nsleep = 0;
	return 0;
}

/* ---- the strategy: the functions above behind struct ploom_strategy ---- */

static const int *dpor_prefix(const struct ploom_strategy *self, size_t *out_len)
{
	return ploom_dpor_prefix((const struct ploom_dpor *)self, out_len);
}

static const int *dpor_sleep(const struct ploom_strategy *self, size_t *out_len)
{
	return ploom_dpor_sleep((const struct ploom_dpor *)self, out_len);
}

static int dpor_next(struct ploom_strategy *self, const struct ploom_run *run,
		     struct ploom_err *err)
{
	return ploom_dpor_next((struct ploom_dpor *)self, run, err);
}

static void dpor_free(struct ploom_strategy *self)
{
	ploom_dpor_free((struct ploom_dpor *)self);
}

static const struct ploom_strategy_ops dpor_ops = {
	.name = "dpor",
	.prefix = dpor_prefix,
	.sleep = dpor_sleep,
	.next = dpor_next,
	.split_depth = NULL,
	.split = NULL,
	.free = dpor_free,
	/* no estimate: each race found adds schedules to run above the
	 * current path, so a fraction of the tree known so far would run
	 * backwards as the search goes */
	.left = NULL,
};

int ploom_dpor_strategy_new(struct ploom_strategy **out, struct ploom_err *err)
{
	struct ploom_dpor *d = NULL;

	*out = NULL;
	if (ploom_dpor_new(&d, err) < 0)
		return -1;
	*out = &d->base;
	return 0;
}
