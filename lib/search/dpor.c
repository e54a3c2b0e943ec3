/* Source-set DPOR with sleep sets; dpor.h documents it.
 *
 * The search is a tree of nodes, one per state reached: the enabled
 * tasks there, the sleep set on arrival, the backtrack set (tasks to run
 * there), the done set (tasks whose subtree is explored) and the busy set
 * (tasks whose subtree a view explores now).  A view (struct ploom_dpor)
 * holds the nodes of its current path and the task it runs at each; the
 * whole search is one view, and split() makes more, sharing the tree.
 * Each run returns the whole path; its new steps are analysed for races by
 * happens-before (hb.h), which only ever adds tasks to backtrack sets of
 * nodes of the view's path; then the view backtracks to the deepest node
 * of its path with a task nobody has claimed.  A node lives while a view
 * holds it or it has a live child; when the last goes, its subtree is
 * complete and its parent counts it done. */
#include "dpor.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dpor-state.h"
#include "hb.h"
#include "kinds.h"
#include "plan.h"
#include "search.h"
#include "shard.h"

static const struct ploom_strategy_ops dpor_ops;

int ploom_dpor_new(struct ploom_dpor **out, struct ploom_err *err)
{
	struct ploom_dpor *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (!d || ploom_hb_new(&d->hb) < 0) {
		free(d);
		return ploom_err_oom(err);
	}
	d->base.ops = &dpor_ops;
	d->first = 1;
	d->walker = 1;
	d->owned = 1;
	d->bound = -1;
	d->wakeup = 1;
	*out = d;
	return 0;
}

void ploom_dpor_set_wakeup_trees(struct ploom_dpor *d, int on)
{
	if (d->first && d->bound < 0 && !d->shard)
		d->wakeup = on;
}

int ploom_dpor_new_bounded(struct ploom_dpor **out, int max_preemptions, struct ploom_err *err)
{
	if (ploom_dpor_new(out, err) < 0)
		return -1;
	(*out)->bound = max_preemptions < 0 ? -1 : max_preemptions;
	/* a bound keeps no sleep sets, which wakeup trees rely on */
	if (max_preemptions >= 0)
		(*out)->wakeup = 0;
	return 0;
}

/* The branch of nd's wakeup tree that starts with t is explored: it goes. */
static void branch_done(struct node *nd, int t)
{
	struct wut **p;

	for (p = &nd->wut; *p; p = &(*p)->next) {
		if ((*p)->task == t) {
			struct wut *b = *p;

			*p = b->next;
			b->next = NULL;
			wut_free(b);
			return;
		}
	}
}

/* Drops one hold on nd (a view's or a child's).  The last one frees it:
 * its subtree is then explored when complete (its parent counts it
 * done), or abandoned with the search. */
static void node_release(struct node *nd, int complete)
{
	while (nd && --nd->refs == 0) {
		struct node *up = nd->parent;

		if (up) {
			tset_del(&up->busy, nd->via);
			/* out of memory, the task is left to claim again: a
			 * subtree run twice, none lost */
			if (complete && tset_add(&up->done, nd->via) < 0)
				complete = 0;
			if (complete)
				branch_done(up, nd->via);
		}
		free(nd->enabled);
		wut_free(nd->wut);
		free(nd->ops);
		tset_free(&nd->sleep);
		tset_free(&nd->backtrack);
		tset_free(&nd->done);
		tset_free(&nd->busy);
		free(nd);
		nd = up;
	}
}

void ploom_dpor_free(struct ploom_dpor *d)
{
	if (!d)
		return;
	while (d->npath)
		node_release(d->path[--d->npath], 0);
	free(d->path);
	free(d->chosen);
	tset_free(&d->sent);
	tset_free(&d->chain_sleep);
	free(d->prefix);
	free(d->sleep);
	free(d->first_in_v);
	free(d->rvc);
	free(d->acc);
	free(d->vev);
	free(d->vgone);
	ploom_hb_free(d->hb);
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

/* ---- the preemption bound ---- */

/* 1 if running task t at nd keeps the path within the bound: the
 * preemptions before nd, plus one if t switches away from the task of the
 * step before while that task could go on (trace.h's preemption). */
static int affordable(const struct ploom_dpor *d, const struct node *nd, int t)
{
	int prev = nd->parent ? nd->via : 0;
	int pre = nd->pre;
	size_t e;

	if (d->bound < 0)
		return 1;
	for (e = 0; e < nd->nenabled && nd->nenabled > 1 && t != prev; e++)
		if (nd->enabled[e] == prev)
			pre++;
	return pre <= d->bound;
}

/* The node where the run of steps of node i's task began: where the path
 * switches to that task, i itself when it switches at i.  Choosing
 * another task there costs no more preemptions than the path's own
 * choice does. */
static long free_switch_point(const struct ploom_dpor *d, long i)
{
	while (i > 0 && d->chosen[i - 1] == d->chosen[i])
		i--;
	return i;
}

/* ---- races ---- */

/* The clock of j, of task q, in v (d->rvc): ordered after the events of v
 * that come before it in its task or conflict with it, and after what
 * those are ordered after.  Its own clock orders it after i too, which v
 * leaves out, and so after everything i follows. */
static const int *within_v(struct ploom_dpor *d, long i, long j, int q)
{
	const struct evacc *aj = &d->acc[j];
	int t;
	long k;

	for (t = 0; t < d->ntasks; t++)
		d->rvc[t] = 0;
	d->rvc[q] = (int)j + 1;
	for (k = i + 1; k < j; k++) {
		const int *vk = ploom_hb_vc(d->hb, k);
		const struct evacc *ak = &d->acc[k];

		if (ploom_hb_before(d->hb, vk, i))
			continue;
		if (ploom_hb_task(d->hb, k) != q && !ploom_conflicts(ak->a, ak->n, aj->a, aj->n))
			continue;
		for (t = 0; t < d->ntasks; t++)
			if (vk[t] > d->rvc[t])
				d->rvc[t] = vk[t];
	}
	return d->rvc;
}

/* The race (i, j), j an event of task q with clock vc_j at position j
 * (j may be the end of the run: a virtual event): at node i, make sure
 * some task that can start the reordering "j before i" is in backtrack.
 * When none enabled at i can, every task enabled there is added if
 * fallback, else none.  With wakeup trees and exact (the reordering v
 * can run as it is: dpor.h), v itself goes into node i's tree; without
 * exact, a leaf of the task picked.  A j that may wait (an acquire, a
 * join) or never ran is not exact: what let it run may follow i, so v
 * forced as it is could find it disabled. */
static int reverse_race(struct ploom_dpor *d, long i, long j, int q, const int *vc_j,
			int fallback, int exact)
{
	const struct ploom_hb *hb = d->hb;
	struct node *ni = d->path[i];
	int t, pick = -1, any = 0, covered = 0, wakeup = d->wakeup && exact;
	long k;
	size_t e;

	d->stats.races++;
	/* a thread's first step never runs before its start: no reordering
	 * to run (source sets take it as any race, at the cost of a branch) */
	if (wakeup && d->run->steps[i].op == PLOOM_OP_START &&
	    d->run->steps[i].obj.kind == PLOOM_OBJ_THREAD && d->run->steps[i].obj.id == q)
		return 0;
	for (t = 0; t < d->ntasks; t++)
		d->first_in_v[t] = -1;
	d->nv = 0;
	/* a sleep or a timed wait in v may have waited for its deadline (the
	 * idle time model), which v forced earlier may not reach: v is then
	 * no exact sequence */
	for (k = i + 1; k < j && wakeup; k++)
		if (!ploom_hb_before(hb, ploom_hb_vc(hb, k), i) &&
		    (d->run->steps[k].op == PLOOM_OP_SLEEP ||
		     d->run->steps[k].mode == PLOOM_ACQUIRE_TIMED))
			wakeup = 0;
	/* v: the events after i not ordered after it, then j; its initials
	 * are the tasks whose first event in v has no predecessor in v */
	if (wakeup)
		vc_j = within_v(d, i, j, q);
	for (k = i + 1; k <= j; k++) {
		const int *vk;
		int tk, initial = 1;

		if (k == j) {
			vk = vc_j;
			tk = q;
		} else {
			vk = ploom_hb_vc(hb, k);
			tk = ploom_hb_task(hb, k);
			if (ploom_hb_before(hb, vk, i))
				continue;
		}
		if (wakeup)
			d->vev[d->nv++] = k;
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
		if (e == ni->nenabled || !affordable(d, ni, tk))
			continue;
		/* under a bound, a task whose steps in v are independent of j
		 * starts a reordering that may need preemptions beyond it to
		 * bring j first: only q and the tasks j depends on count (the
		 * set E of Flanagan and Godefroid's DPOR) */
		if (d->bound >= 0 && tk != q && !ploom_hb_before(hb, vc_j, (long)k))
			continue;
		any = 1;
		if (tset_has(&ni->backtrack, tk) || tset_has(&ni->sleep, tk)) {
			if (!wakeup)
				return 0;
			covered = 1;
		}
		if (pick < 0 || tk == q)
			pick = tk;
	}
	if (any && wakeup) {
		int r;

		memset(d->vgone, 0, d->nv);
		d->vleft = d->nv;
		r = insert(d, ni);
		if (r <= 0)
			return r;
	}
	if (any) {
		const struct evacc *ev;

		if (covered)
			return 0;
		ev = &d->acc[d->first_in_v[pick]];
		return add_leaf(d, ni, pick, ev->a, ev->n);
	}
	if (!fallback)
		return 0;
	/* nothing enabled at i starts the reordering: try every task there */
	d->stats.fallbacks++;
	for (e = 0; e < ni->nenabled; e++) {
		struct ploom_access a[PLOOM_ACCESS_MAX];
		int na, te = ni->enabled[e];

		if (tset_has(&ni->sleep, te) || !affordable(d, ni, te))
			continue;
		na = next_accesses(ni, te, a);
		if (na < 0 ? tset_add(&ni->backtrack, te) < 0 : add_leaf(d, ni, te, a, na) < 0)
			return -1;
	}
	return 0;
}

/* reverse_race(), and with a bound the same at the switch points above i.
 *
 * Bounded POR (Coons, Musuvathi, McKinley, OOPSLA 2013): starting the
 * reordering at i may cost a preemption beyond the bound, since the task
 * of node i could go on there, so it is also started where that task's
 * run of steps began (free_switch_point()), where another task costs no
 * more.  That is not always enough: the task that runs there may find
 * the state changed by then (a thread it waits for already finished, so
 * it no longer blocks and lets the others run for free), so the
 * reordering is started at every switch point above i, each adding at
 * most one task of the set E (reverse_race()). */
static int race(struct ploom_dpor *d, long i, long j, int q, const int *vc_j, int exact)
{
	long b, first;

	if (reverse_race(d, i, j, q, vc_j, 1, exact) < 0)
		return -1;
	if (d->bound < 0)
		return 0;
	first = free_switch_point(d, i);
	for (b = first; b >= 0; b = b ? free_switch_point(d, b - 1) : -1)
		if (b < i && reverse_race(d, b, j, q, vc_j, b == first, 0) < 0)
			return -1;
	return 0;
}

/* The race candidates c[0..nc) of a waiting operation (hb.h's waits: a
 * blocking acquire or join) of task q, whose first access a[0] is of the
 * object it waits for, at event j: hb.h takes the last event before which
 * it could have run as judged by its object alone, the lock free.  An
 * acquire may wait for more than its lock (a queue's get for an item, a
 * semaphore's for a unit: one step, enabled when both hold), which only
 * the enabled sets of the run tell.  Where q already waited in the
 * operation and was not enabled, it could not have run, so its race is
 * with the latest conflicting event before that where it was enabled; and
 * before it reached the operation, which may have been enabled there for
 * all the run says, with the latest one that found the object free.
 * Returns how many are left in c. */
static int wait_candidates(struct ploom_dpor *d, long *c, int nc, int q,
			   const struct ploom_access *a)
{
	long p = ploom_hb_latest(d->hb, q), k, r;
	int i, m = 0;

	for (i = 0; i < nc; i++) {
		r = c[i];
		if (r > p && !ploom_step_is_enabled(&d->run->steps[r], q)) {
			r = -1;
			for (k = c[i] - 1; k > p && r < 0; k--)
				if (ploom_hb_task(d->hb, k) != q &&
				    ploom_conflicts(a, 1, d->acc[k].a, d->acc[k].n) &&
				    ploom_step_is_enabled(&d->run->steps[k], q))
					r = k;
			for (k = p; k >= 0 && r < 0; k--) {
				if (ploom_hb_task(d->hb, k) == q ||
				    !ploom_conflicts(a, 1, d->acc[k].a, d->acc[k].n))
					continue;
				/* the events on one object are ordered: those
				 * before one q follows are before it too */
				if (ploom_hb_ordered(d->hb, k, q))
					break;
				if (ploom_hb_was_free(d->hb, k))
					r = k;
			}
		}
		if (r >= 0)
			c[m++] = r;
	}
	return m;
}

/* Races of a pending operation that did not run (the run ended first),
 * as if it ran next: op of task q, `after` the failing step that ended
 * the run while q could have run instead, or -1; blocking if it waits
 * for its object.
 *
 * Only real conflicts order the operation after earlier events here.
 * Whether it would end its task is not known, so it is taken once as the
 * operation alone and once as the operation then the task's exit; and
 * the failing step is a race of its own.  One event with all of these
 * would be wrong: a speculative exit conflicts with joins and is_alive
 * of the task, and the failing step follows everything its task did, so
 * either orders the operation after events it does not depend on, and a
 * real race with an earlier event (a lock acquired before a join, a
 * thread's end before an is_alive of it) then looks covered by a later
 * one that cannot start the reordering. */
static int virtual_races(struct ploom_dpor *d, long n, int q, enum ploom_op op,
			 struct ploom_obj obj, long after, int blocking)
{
	struct ploom_access a[PLOOM_ACCESS_MAX];
	/* a blocked operation is no timed one, which never blocks; the mode
	 * of one that was enabled is not recorded (event.h) */
	enum ploom_acquire_mode mode = blocking ? PLOOM_ACQUIRE_BLOCKING : ploom_pending_mode(op);
	long *c;
	int exits, na, nc, i;

	/* as a step of a wakeup sequence, it is taken as it is taken asleep:
	 * erring towards conflicts */
	d->acc[n].n = ploom_pending_accesses(d->acc[n].a, q, op, obj);
	/* an operation that did not run may not run at the end of v either
	 * (a blocked acquire or join waits for what only follows i; the mode
	 * of an enabled one is not known): only v's first task goes into a
	 * wakeup tree */
	for (exits = 0; exits <= 1; exits++) {
		na = ploom_op_accesses(a, q, op, obj, mode, exits);
		if (ploom_hb_clock(d->hb, n, q, a, na, -1) < 0)
			return -1;
		nc = ploom_hb_candidates(d->hb, &c, q, a, na, blocking);
		if (nc < 0)
			return -1;
		if (blocking)
			nc = wait_candidates(d, c, nc, q, a);
		nc = ploom_hb_maximal(d->hb, c, nc);
		for (i = 0; i < nc; i++)
			if (race(d, c[i], n, q, ploom_hb_vc(d->hb, n), 0) < 0)
				return -1;
	}
	/* the failing step conflicts with the operation only by ending the
	 * run, which no access says: its task's step there would pass for a
	 * weak initial */
	if (after >= 0 && !ploom_hb_ordered(d->hb, after, q)) {
		na = ploom_op_accesses(a, q, op, obj, mode, 0);
		if (ploom_hb_clock(d->hb, n, q, a, na, after) < 0 ||
		    race(d, after, n, q, ploom_hb_vc(d->hb, n), 0) < 0)
			return -1;
	}
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

/* 1 when nd is one of a shard's first D branch points or above the
 * last of them, where every enabled task is run. */
static int above_units(const struct ploom_dpor *d, const struct node *nd)
{
	return d->shard && nd->bp < (size_t)d->shard->depth;
}

/* A new node for step s below up (NULL: the root), held by the view. */
static struct node *node_new(const struct ploom_dpor *d, struct node *up,
			     const struct ploom_step *s, int via)
{
	struct node *nd = calloc(1, sizeof(*nd));
	size_t e;

	if (!nd)
		return NULL;
	nd->refs = 1;
	nd->bp = up ? up->bp + (up->nenabled > 1) : 0;
	nd->enabled = malloc((s->nenabled ? s->nenabled : 1) * sizeof(int));
	if (!nd->enabled || tset_add(&nd->backtrack, s->task) < 0 ||
	    tset_add(&nd->busy, s->task) < 0)
		goto fail;
	/* memcpy's pointers must not be NULL even for 0 bytes, and a
	 * worker's step without pending operations has none */
	if (s->nenabled)
		memcpy(nd->enabled, s->enabled, s->nenabled * sizeof(int));
	nd->nenabled = s->nenabled;
	if (d->wakeup) {
		nd->ops = malloc((s->npending + 1) * sizeof(*nd->ops));
		if (!nd->ops)
			goto fail;
		nd->ops[0] = (struct ploom_pending){s->task, s->op, s->obj};
		if (s->npending)
			memcpy(nd->ops + 1, s->pending, s->npending * sizeof(*nd->ops));
		nd->nops = s->npending + 1;
	}
	/* the levels above a shard's units are enumerated fully, and so is
	 * a choice among tasks that ran only once nothing else could (hb.h's
	 * barrier): which one runs there decides what every other task may
	 * do before the next idle point (one back from a fair yield is
	 * disabled again), an order no race between their steps reverses */
	if (above_units(d, nd) || s->idle)
		for (e = 0; e < nd->nenabled; e++)
			if (tset_add(&nd->backtrack, nd->enabled[e]) < 0)
				goto fail;
	if (up) {
		nd->parent = up;
		nd->via = via;
		up->refs++;
	}
	return nd;
fail:
	node_release(nd, 0);
	return NULL;
}

/* 1 when task t was asleep where the view's path leaves path[k]: the set
 * sent with the prefix at the node it changes, else the node's own. */
static int asleep_below(const struct ploom_dpor *d, size_t k, int t)
{
	if (!d->first && k == d->depth)
		return tset_has(&d->sent, t);
	return tset_has(&d->path[k]->sleep, t);
}

/* 1 when task t is in the sleep set sent with the prefix, which holds
 * where its forced steps end (wakeup_steps()): there the worker wakes
 * the tasks that the steps it was sent may conflict with, which may be
 * more than those they turned out to conflict with. */
static int sent_asleep(const struct ploom_dpor *d, int t)
{
	size_t k;

	for (k = 0; k < d->nsleep; k++)
		if (d->sleep[k] == t)
			return 1;
	return 0;
}

/* The first task that nobody has claimed at nd, within the bound, or -1:
 * with wakeup trees, the first branch of the tree's. */
static int unclaimed(const struct ploom_dpor *d, const struct node *nd)
{
	const struct wut *b;
	size_t e;
	int t;

	for (b = nd->wut; b; b = b->next)
		if (!tset_has(&nd->done, b->task) && !tset_has(&nd->busy, b->task) &&
		    !tset_has(&nd->sleep, b->task))
			return b->task;

	for (e = 0; e < nd->nenabled; e++) {
		t = nd->enabled[e];
		if (tset_has(&nd->backtrack, t) && !tset_has(&nd->done, t) &&
		    !tset_has(&nd->busy, t) && !tset_has(&nd->sleep, t) && affordable(d, nd, t))
			return t;
	}
	return -1;
}

/* Appends the forced steps of the wakeup sequence that continues the
 * branch b taken at nd (the leftmost, to its leaf) to the prefix, and
 * sets the sleep set sent to the one where the last of them is taken: the
 * tasks asleep at nd (d->sent), each woken by the first step that
 * conflicts with what it does next, as the worker and ploom_dpor_next()
 * wake them.  A step of a task still asleep ends the sequence there: what
 * is left of it would only repeat a class already covered. */
static int wakeup_steps(struct ploom_dpor *d, const struct node *nd, const struct wut *b)
{
	struct ploom_access pa[PLOOM_ACCESS_MAX];
	const struct wut *prev = b, *c;
	size_t k, nchosen = d->nprefix;
	int np, t;

	tset_clear(&d->chain_sleep);
	for (k = 0; k < d->nsleep; k++)
		if (tset_add(&d->chain_sleep, d->sleep[k]) < 0)
			return -1;
	for (c = b->child; c; prev = c, c = c->child) {
		for (k = 0; k < nd->nops; k++) {
			t = nd->ops[k].task;
			if (!tset_has(&d->chain_sleep, t))
				continue;
			np = ploom_pending_accesses(pa, t, nd->ops[k].op, nd->ops[k].obj);
			if (conflicts_at(prev->known, prev->acc, prev->nacc, pa, np))
				tset_del(&d->chain_sleep, t);
		}
		if (tset_has(&d->chain_sleep, c->task))
			break;
		if (grow((void **)&d->prefix, &d->prefix_cap, d->nprefix + 1, sizeof(int)) < 0)
			return -1;
		d->prefix[d->nprefix++] = -1 - c->task;
	}
	if (c == b->child)
		return 0;
	d->sleep_at = d->depth + (d->nprefix - nchosen);
	d->nsleep = 0;
	for (k = 0; k < nd->nops; k++) {
		t = nd->ops[k].task;
		if (!tset_has(&d->chain_sleep, t))
			continue;
		if (grow((void **)&d->sleep, &d->sleep_cap, d->nsleep + 1, sizeof(int)) < 0)
			return -1;
		d->sleep[d->nsleep++] = t;
	}
	return 0;
}

/* The prefix and sleep set that make the next run choose chosen[depth]
 * at path[depth], and then follow the wakeup tree's leftmost branch from
 * there.  The tasks explored or under way there go to sleep, as the
 * siblings before it: each is, or will be, explored completely. */
static int set_prefix(struct ploom_dpor *d)
{
	const struct node *nd = d->path[d->depth];
	const struct wut *b;
	size_t k, nw = nd->sleep.nw;
	int t;

	if (nd->done.nw > nw)
		nw = nd->done.nw;
	if (nd->busy.nw > nw)
		nw = nd->busy.nw;
	tset_clear(&d->sent);
	d->nprefix = d->nsleep = 0;
	d->sleep_at = d->depth;
	for (k = 0; k <= d->depth; k++) {
		if (d->path[k]->nenabled < 2)
			continue;
		if (grow((void **)&d->prefix, &d->prefix_cap, d->nprefix + 1, sizeof(int)) < 0)
			return -1;
		d->prefix[d->nprefix++] = d->chosen[k];
	}
	/* sleep sets are left out under a bound: a schedule they prune is
	 * equivalent to one explored, but that one may have more preemptions
	 * and lie beyond the bound */
	for (t = 0; d->bound < 0 && (size_t)t < 64 * nw; t++) {
		if (t == d->chosen[d->depth] ||
		    (!tset_has(&nd->sleep, t) && !tset_has(&nd->done, t) && !tset_has(&nd->busy, t)))
			continue;
		if (grow((void **)&d->sleep, &d->sleep_cap, d->nsleep + 1, sizeof(int)) < 0 ||
		    tset_add(&d->sent, t) < 0)
			return -1;
		d->sleep[d->nsleep++] = t;
	}
	b = d->wakeup ? wut_branch(nd->wut, d->chosen[d->depth]) : NULL;
	return b && b->child ? wakeup_steps(d, nd, b) : 0;
}

/* The view claims task t at path[k], its next run's changed choice. */
static int claim(struct ploom_dpor *d, size_t k, int t)
{
	if (tset_add(&d->path[k]->busy, t) < 0)
		return -1;
	d->chosen[k] = t;
	d->depth = k;
	d->npath = k + 1;
	return set_prefix(d);
}

/* Enters a shard's next unit, first run at path[k] with task t: returns
 * 1 when the next run is to be made (the shard owns the unit, or must
 * probe it to learn the branch points below), 0 when it is skipped
 * without one (entered at the last of the first D branch points). */
static int enter_unit(struct ploom_dpor *d, const struct node *nd)
{
	struct ploom_shard *sh = d->shard;

	d->unit = sh->units++;
	d->owned = ploom_shard_owns(sh, d->unit);
	if (d->owned)
		sh->owned++;
	return d->owned || nd->bp + 1 < (size_t)sh->depth;
}

/* Moves the view up its path to the deepest node with a task nobody has
 * claimed, and claims it.  Returns 1, or 0 when the view's path has none
 * left (the view holds no node then), or -1 out of memory.  A shard's
 * walker takes the tasks of the levels above the units, and past a probe
 * leaves the unit's nodes (another shard's) unexplored; the other views
 * stay below them. */
static int backtrack(struct ploom_dpor *d)
{
	while (d->npath) {
		size_t k = d->npath - 1;
		struct node *nd = d->path[k];
		int t;

		if (!d->shard || (above_units(d, nd) ? d->walker : d->owned)) {
			while ((t = unclaimed(d, nd)) >= 0) {
				if (!above_units(d, nd) || enter_unit(d, nd))
					return claim(d, k, t) < 0 ? -1 : 1;
				/* another shard's unit, skipped */
				if (tset_add(&nd->done, t) < 0)
					return -1;
			}
		}
		d->npath--;
		node_release(nd, 1);
	}
	d->nprefix = d->nsleep = 0;
	return 0;
}

/* Raises known[kind] to the numbers of the objects step s and the
 * operations pending there name. */
static void know(long *known, const struct ploom_step *s)
{
	size_t i;

	if (s->obj.id > known[s->obj.kind])
		known[s->obj.kind] = s->obj.id;
	for (i = 0; i < s->npending; i++)
		if (s->pending[i].obj.id > known[s->pending[i].obj.kind])
			known[s->pending[i].obj.kind] = s->pending[i].obj.id;
}

/* A shard's search took the run of its next schedule: counts it. */
static void shard_took(struct ploom_dpor *d, const struct ploom_run *run)
{
	struct ploom_shard *sh = d->shard;

	if (run->outcome.kind == PLOOM_OUTCOME_SLEEP_BLOCKED)
		return;
	if (!d->owned) {
		sh->probes++;
		return;
	}
	sh->last_unit = d->unit;
	if (sh->failure_unit < 0 && ploom_outcome_is_failure(run->outcome.kind))
		sh->failure_unit = d->unit;
}

/* Takes the steps of run below the view's changed node into new nodes of
 * its path, with their sleep sets and, with wakeup trees, what was left of
 * the tree below each step taken.  Returns 0, or -1 with err filled (out
 * of memory; a task run where it was asleep, which the worker never
 * does). */
static int new_nodes(struct ploom_dpor *d, const struct ploom_run *run, struct ploom_err *err)
{
	size_t n = run->nsteps, k, e;
	long known[PLOOM_OBJ_CLOCK + 1];

	for (e = 0; e <= PLOOM_OBJ_CLOCK; e++)
		known[e] = -1;
	for (k = 0; k < n; k++) {
		struct node *up = k ? d->path[k - 1] : NULL, *nd;

		know(known, &run->steps[k]);
		if (!d->first && k <= d->depth)
			continue;
		nd = node_new(d, up, &run->steps[k], k ? run->steps[k - 1].task : -1);
		if (!nd)
			return ploom_err_oom(err);
		memcpy(nd->known, known, sizeof(known));
		/* the wakeup tree here: what was left below the step taken above */
		if (up && up->wut) {
			struct wut *b = wut_branch(up->wut, d->chosen[k - 1]);

			if (b) {
				nd->wut = b->child;
				b->child = NULL;
			}
		}
		d->path[k] = nd;
		d->chosen[k] = run->steps[k].task;
		d->npath = k + 1;
		nd->pre = up ? up->pre + ploom_run_is_preemption(run, k - 1) : 0;
		if (k == 0 || d->bound >= 0)
			continue;
		{
			const struct ploom_step *s = &run->steps[k - 1];
			struct ploom_access la[PLOOM_ACCESS_MAX], pa[PLOOM_ACCESS_MAX];
			int nla = ploom_op_accesses(la, s->task, s->op, s->obj, s->mode,
						    !unfinished_at(&run->steps[k], s->task));

			for (e = 0; e < s->npending; e++) {
				const struct ploom_pending *p = &s->pending[e];
				int np;
				/* an idle step (hb.h's barrier) wakes every sleeper:
				 * the state it leaves is no sibling's, as the
				 * worker's sleep sets take it too */
				if (s->idle || !asleep_below(d, k - 1, p->task) ||
				    (!d->first && k == d->sleep_at && k > d->depth &&
				     !sent_asleep(d, p->task)))
					continue;
				np = ploom_pending_accesses(pa, p->task, p->op, p->obj);
				if (!ploom_conflicts(la, nla, pa, np) && tset_add(&nd->sleep, p->task) < 0)
					return ploom_err_oom(err);
			}
		}
		if (tset_has(&nd->sleep, d->chosen[k]))
			return ploom_err_set(err, PLOOM_ERR_INTERNAL,
					     "the schedule ran task %d at step %zu, which was asleep",
					     d->chosen[k], k);
	}
	return 0;
}

/* The races of what did not run because run ended: after a failure, the
 * next operation of every other task; at a deadlock or with every
 * enabled task asleep, the blocked operations, as if they ran.  Returns
 * 0, or -1 when out of memory. */
static int end_races(struct ploom_dpor *d, const struct ploom_run *run)
{
	size_t n = run->nsteps, k, e;

	if (n && ploom_outcome_is_failure(run->outcome.kind) &&
	    run->outcome.kind != PLOOM_OUTCOME_DEADLOCK) {
		const struct ploom_step *s = &run->steps[n - 1];
		for (e = 0; e < s->npending; e++) {
			const struct ploom_pending *p = &s->pending[e];
			int enabled = ploom_step_is_enabled(s, p->task);
			if (virtual_races(d, (long)n, p->task, p->op, p->obj, enabled ? (long)n - 1 : -1,
					  !enabled) < 0)
				return -1;
		}
	} else if (run->outcome.kind == PLOOM_OUTCOME_DEADLOCK ||
		   run->outcome.kind == PLOOM_OUTCOME_SLEEP_BLOCKED) {
		for (k = 0; k < run->outcome.nwaits; k++) {
			const struct ploom_wait *w = &run->outcome.waits[k];
			struct ploom_obj obj = {PLOOM_OBJ_NONE, 0};
			if (w->object)
				ploom_obj_parse(&obj, w->object, strlen(w->object));
			if (virtual_races(d, (long)n, w->task, w->op, obj, -1, 1) < 0)
				return -1;
		}
	}
	return 0;
}

int ploom_dpor_next(struct ploom_dpor *d, const struct ploom_run *run, struct ploom_err *err)
{
	size_t n = run->nsteps, k, e, from = d->first ? 0 : d->depth;
	int maxtask = 0, r;
	long j;

	/* the path down to the changed node must be the one asked for */
	if (!d->first && n <= d->depth)
		return ploom_err_set(err, PLOOM_ERR_DIVERGENCE,
				     "the schedule ended after %zu steps, before the choice asked "
				     "for at step %zu", n, d->depth);
	for (k = 0; !d->first && k <= d->depth; k++)
		if (run->steps[k].task != d->chosen[k])
			return ploom_err_set(err, PLOOM_ERR_DIVERGENCE,
					     "the schedule picked task %d at step %zu where task %d "
					     "was asked for", run->steps[k].task, k, d->chosen[k]);
	if (d->shard)
		shard_took(d, run);
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
	if (grow((void **)&d->path, &d->path_cap, n, sizeof(*d->path)) < 0 ||
	    grow((void **)&d->chosen, &d->chosen_cap, n, sizeof(*d->chosen)) < 0 ||
	    grow((void **)&d->first_in_v, &d->first_in_v_cap, (size_t)d->ntasks, sizeof(int)) < 0 ||
	    grow((void **)&d->rvc, &d->rvc_cap, (size_t)d->ntasks, sizeof(int)) < 0 ||
	    grow((void **)&d->acc, &d->acc_cap, n + 1, sizeof(*d->acc)) < 0 ||
	    ploom_hb_reset(d->hb, d->ntasks, n + 1) < 0)
		return ploom_err_oom(err);
	if (d->wakeup && (grow((void **)&d->vev, &d->vev_cap, n + 1, sizeof(*d->vev)) < 0 ||
			  grow((void **)&d->vgone, &d->vgone_cap, n + 1, 1) < 0))
		return ploom_err_oom(err);
	d->nsteps = n;
	d->run = run;
	d->cut_fail = n && ploom_outcome_is_failure(run->outcome.kind) &&
		      run->outcome.kind != PLOOM_OUTCOME_DEADLOCK;
	/* the new nodes, with their sleep sets */
	if (new_nodes(d, run, err) < 0)
		return -1;

	/* events, clocks, and the races of the new ones */
	for (j = 0; (size_t)j < n; j++) {
		const struct ploom_step *s = &run->steps[j];
		int exits = (size_t)j + 1 < n ? !unfinished_at(&run->steps[j + 1], s->task)
					      : last_step_exits(run);
		struct ploom_access acc[PLOOM_ACCESS_MAX];
		int nacc = ploom_op_accesses(acc, s->task, s->op, s->obj, s->mode, exits);
		long *c;
		int nc, i, exact;

		if (s->idle)
			ploom_hb_barrier(d->hb, j);
		if (ploom_hb_clock(d->hb, j, s->task, acc, nacc, -1) < 0)
			return ploom_err_oom(err);
		d->acc[j].n = nacc;
		memcpy(d->acc[j].a, acc, sizeof(acc));
		if ((size_t)j >= from) {
			nc = ploom_hb_candidates(d->hb, &c, s->task, acc, nacc,
						 ploom_hb_waits(s->op, s->mode));
			if (nc < 0)
				return ploom_err_oom(err);
			if (ploom_hb_waits(s->op, s->mode))
				nc = wait_candidates(d, c, nc, s->task, acc);
			nc = ploom_hb_maximal(d->hb, c, nc);
			/* a sleep or a timed wait may have waited for its
			 * deadline (the idle time model): forced earlier as it
			 * is, it could find itself disabled */
			exact = !ploom_hb_waits(s->op, s->mode) && s->op != PLOOM_OP_SLEEP &&
				s->mode != PLOOM_ACQUIRE_TIMED;
			for (i = 0; i < nc; i++)
				if (race(d, c[i], j, s->task, ploom_hb_vc(d->hb, j), exact) < 0)
					return ploom_err_oom(err);
		}
		if (ploom_hb_step(d->hb, j, s->task, s->op, acc, nacc, exits) < 0)
			return ploom_err_oom(err);
	}
	/* what did not run because the run ended */
	if (end_races(d, run) < 0)
		return ploom_err_oom(err);
	d->first = 0;

	/* the last step's subtree is that step alone */
	if (n) {
		struct node *last = d->path[n - 1];
		tset_del(&last->busy, d->chosen[n - 1]);
		if (tset_add(&last->done, d->chosen[n - 1]) < 0)
			return ploom_err_oom(err);
		branch_done(last, d->chosen[n - 1]);
	}
	r = backtrack(d);
	return r < 0 ? ploom_err_oom(err) : r;
}

/* The shallowest node of the view's path with a task nobody has claimed
 * that split() may give away, or -1: not past a probe, and for a shard
 * only inside the unit (the walker alone enters units). */
static long shallowest(const struct ploom_dpor *d)
{
	size_t k;

	if (d->first || (d->shard && !d->owned))
		return -1;
	for (k = 0; k < d->npath; k++)
		if (!above_units(d, d->path[k]) && unclaimed(d, d->path[k]) >= 0)
			return (long)k;
	return -1;
}

int ploom_dpor_split(struct ploom_dpor **out, struct ploom_dpor *d, struct ploom_err *err)
{
	struct ploom_dpor *v = NULL;
	long at = shallowest(d);
	size_t k;

	*out = NULL;
	if (at < 0)
		return 0;
	if (ploom_dpor_new(&v, err) < 0)
		return -1;
	v->base.ops = d->base.ops;
	v->first = 0;
	v->bound = d->bound;
	v->wakeup = d->wakeup;
	v->shard = d->shard;
	v->walker = 0;
	v->unit = d->unit;
	v->owned = 1;
	if (grow((void **)&v->path, &v->path_cap, (size_t)at + 1, sizeof(*v->path)) < 0 ||
	    grow((void **)&v->chosen, &v->chosen_cap, (size_t)at + 1, sizeof(*v->chosen)) < 0) {
		ploom_dpor_free(v);
		return ploom_err_oom(err);
	}
	for (k = 0; k <= (size_t)at; k++) {
		v->path[k] = d->path[k];
		v->path[k]->refs++;
		v->chosen[k] = d->chosen[k];
		v->npath = k + 1;
	}
	if (claim(v, (size_t)at, unclaimed(v, v->path[at])) < 0) {
		ploom_dpor_free(v);
		return ploom_err_oom(err);
	}
	*out = v;
	return 1;
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

static long dpor_split_depth(const struct ploom_strategy *self)
{
	return shallowest((const struct ploom_dpor *)self);
}

static int dpor_split(struct ploom_strategy **out, struct ploom_strategy *self,
		      struct ploom_err *err)
{
	struct ploom_dpor *v = NULL;
	int r = ploom_dpor_split(&v, (struct ploom_dpor *)self, err);

	*out = v ? &v->base : NULL;
	return r;
}

static void dpor_free(struct ploom_strategy *self)
{
	ploom_dpor_free((struct ploom_dpor *)self);
}

static int dpor_probe(const struct ploom_strategy *self)
{
	const struct ploom_dpor *d = (const struct ploom_dpor *)self;

	return d->shard && !d->owned;
}

static const struct ploom_strategy_ops dpor_ops = {
	.name = "dpor",
	.prefix = dpor_prefix,
	.sleep = dpor_sleep,
	.next = dpor_next,
	.split_depth = dpor_split_depth,
	.split = dpor_split,
	.free = dpor_free,
	/* no estimate: each race found adds schedules to run above the
	 * current path, so a fraction of the tree known so far would run
	 * backwards as the search goes */
	.left = NULL,
	.probe = dpor_probe,
};

int ploom_dpor_new_shard(struct ploom_dpor **out, struct ploom_shard *shard,
			 int max_preemptions, struct ploom_err *err)
{
	if (ploom_dpor_new_bounded(out, max_preemptions, err) < 0)
		return -1;
	(*out)->shard = shard;
	/* the units are numbered by a walk of the enumerated levels, the
	 * same in every shard: wakeup trees would change what the probes
	 * see below them */
	(*out)->wakeup = 0;
	/* the first schedule is in unit 0 */
	shard->units = shard->owned = shard->probes = 0;
	shard->last_unit = shard->failure_unit = -1;
	(*out)->unit = shard->units++;
	(*out)->owned = ploom_shard_owns(shard, (*out)->unit);
	if ((*out)->owned)
		shard->owned++;
	return 0;
}

int ploom_dpor_strategy_new(struct ploom_strategy **out, struct ploom_err *err)
{
	return ploom_dpor_strategy_new_bounded(out, -1, err);
}

int ploom_dpor_strategy_new_bounded(struct ploom_strategy **out, int max_preemptions,
				    struct ploom_err *err)
{
	struct ploom_dpor *d = NULL;

	*out = NULL;
	if (ploom_dpor_new_bounded(&d, max_preemptions, err) < 0)
		return -1;
	*out = &d->base;
	return 0;
}

int ploom_dpor_strategy_new_shard(struct ploom_strategy **out, struct ploom_shard *shard,
				  int max_preemptions, struct ploom_err *err)
{
	struct ploom_dpor *d = NULL;

	*out = NULL;
	if (ploom_dpor_new_shard(&d, shard, max_preemptions, err) < 0)
		return -1;
	*out = &d->base;
	return 0;
}

/* ---- the kind ---- */

int ploom_search_dpor_new(struct ploom_strategy **out, struct ploom_plan *plan,
			  struct ploom_err *err)
{
	if (plan->shard_count)
		return ploom_dpor_strategy_new_shard(out, &plan->shard, plan->max_preemptions, err);
	return ploom_dpor_strategy_new_bounded(out, plan->max_preemptions, err);
}

/* the reduction takes a bound, workers and shards */
const struct ploom_refusal ploom_search_dpor_refusals[] = {{0, NULL}};
