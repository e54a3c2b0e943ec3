/* The task sets and the wakeup trees of the DPOR search, and the
 * insertion of a reordering into a tree; dpor.c's header says how the
 * search uses them, dpor-state.h declares them. */
#include "dpor-state.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- task sets ---- */

int tset_has(const struct tset *s, int t)
{
	size_t i = (size_t)t / 64;

	return t >= 0 && i < s->nw && (s->w[i] >> (t % 64) & 1);
}

int tset_add(struct tset *s, int t)
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

void tset_del(struct tset *s, int t)
{
	size_t i = (size_t)t / 64;

	if (t >= 0 && i < s->nw)
		s->w[i] &= ~((uint64_t)1 << (t % 64));
}

void tset_clear(struct tset *s)
{
	if (s->nw)
		memset(s->w, 0, s->nw * sizeof(*s->w));
}

void tset_free(struct tset *s)
{
	free(s->w);
	s->w = NULL;
	s->nw = 0;
}

/* Frees a list of branches and everything below them, without recursion
 * (a branch is as deep as a run is long). */
void wut_free(struct wut *w)
{
	while (w) {
		struct wut *n;

		if (w->child) {
			struct wut *c = w->child, *last = c;

			while (last->next)
				last = last->next;
			last->next = w->next;
			w->next = c;
			w->child = NULL;
		}
		n = w->next;
		free(w);
		w = n;
	}
}

/* The branch of the list *w that starts with task t, or NULL. */
struct wut *wut_branch(struct wut *w, int t)
{
	for (; w; w = w->next)
		if (w->task == t)
			return w;
	return NULL;
}

/* ---- wakeup trees: inserting a sequence ---- */

/* 1 if the accesses a[0..na) and b[0..nb), of steps of two runs that
 * both pass through a node where the run knew the objects numbered up to
 * known[kind], may conflict.  The worker numbers cells, locks and plain
 * objects in the order a run makes or first touches them, so a number
 * not known there may name another object in each run below it: two such
 * are taken as one object.  Numbers known there name the same object in
 * every run through that node (the same steps made them), and never one
 * that either run met only below it.  A step of a wakeup tree keeps the
 * numbers known where it went in: the run it came from passes through
 * that node, not through those its subtree moves down to. */
int conflicts_at(const long *known, const struct ploom_access *a, int na,
		 const struct ploom_access *b, int nb)
{
	int i, k;

	for (i = 0; i < na; i++) {
		for (k = 0; k < nb; k++) {
			struct ploom_access x = a[i], y = b[k];
			enum ploom_obj_kind kind = x.obj.kind;

			if (kind == y.obj.kind && (kind == PLOOM_OBJ_CELL || kind == PLOOM_OBJ_LOCK ||
						   kind == PLOOM_OBJ_PLAIN) &&
			    x.obj.id > known[kind] && y.obj.id > known[kind])
				y.obj.id = x.obj.id;
			/* threads are numbered as they start, and the highest
			 * number known there may be the one a pending start
			 * is about to give, to whichever start runs first: from
			 * it up, two numbers are taken as one thread */
			if (kind == y.obj.kind && kind == PLOOM_OBJ_THREAD && x.obj.id >= 0 &&
			    y.obj.id >= 0 && x.obj.id >= known[kind] && y.obj.id >= known[kind])
				y.obj.id = x.obj.id;
			if (ploom_access_conflict(&x, &y))
				return 1;
		}
	}
	return 0;
}

/* 1 if task t, whose step at this point of a branch makes the accesses
 * a[0..na), is a weak initial of what is left of the sequence v (the
 * scratch d->vev): its first step in v follows no other step of v in
 * happens-before, or it has none in v and conflicts with none there.
 * A branch that starts with a weak initial of v has v (extended) among
 * its continuations.  The second way needs the step known not to end
 * the run (ends_not): a failing step conflicts with every step after it
 * by ending the run, which no access says, so a task asleep or explored
 * at the node, whose next step has never been seen to pass, counts only
 * by its steps in v. */
static int weak_initial(const struct ploom_dpor *d, const long *known, int t,
			const struct ploom_access *a, int na, int ends_not)
{
	size_t x, y;

	for (x = 0; x < d->nv; x++) {
		const int *vc;

		if (d->vgone[x] || ploom_hb_task(d->hb, d->vev[x]) != t)
			continue;
		vc = x + 1 == d->nv ? d->rvc : ploom_hb_vc(d->hb, d->vev[x]);
		for (y = 0; y < x; y++)
			if (!d->vgone[y] && ploom_hb_before(d->hb, vc, d->vev[y]))
				return 0;
		return 1;
	}
	if (!ends_not)
		return 0;
	for (x = 0; x < d->nv; x++) {
		const struct evacc *ev = &d->acc[d->vev[x]];

		if (!d->vgone[x] && conflicts_at(known, a, na, ev->a, ev->n))
			return 0;
	}
	return 1;
}

/* Appends a leaf t (its step's accesses a[0..na)) to nd's wakeup tree,
 * unless a branch there starts with t; t joins the backtrack set. */
int add_leaf(const struct ploom_dpor *d, struct node *nd, int t,
	     const struct ploom_access *a, int na)
{
	struct wut *w, **p;

	if (tset_add(&nd->backtrack, t) < 0)
		return -1;
	if (!d->wakeup || tset_has(&nd->busy, t) || tset_has(&nd->done, t) ||
	    wut_branch(nd->wut, t))
		return 0;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -1;
	w->task = t;
	w->nacc = na;
	if (na > 0)
		memcpy(w->acc, a, (size_t)na * sizeof(*a));
	memcpy(w->known, nd->known, sizeof(w->known));
	for (p = &nd->wut; *p; p = &(*p)->next)
		;
	*p = w;
	return 0;
}

/* The accesses of what task t does next at nd, as a pending operation
 * (ploom_pending_accesses()), in a[]; how many, or -1 when nd does not
 * know t (finished there). */
int next_accesses(const struct node *nd, int t, struct ploom_access *a)
{
	size_t k;

	for (k = 0; k < nd->nops; k++)
		if (nd->ops[k].task == t)
			return ploom_pending_accesses(a, t, nd->ops[k].op, nd->ops[k].obj);
	return -1;
}

/* Inserts the sequence v (d->vev, all of it there) into the wakeup tree
 * of nd, JACM 2017's insert: nothing when a task asleep at nd, or
 * explored or under way there, is a weak initial of v by a step in v (v
 * is then redundant), else down the tree through the first branch of each level
 * that starts with a weak initial of what is left of v, taking that step
 * off v, until a leaf (v is covered) or a level with no such branch, which
 * gets what is left of v as its last branch.  Returns 0, 1 when that
 * branch would start at nd with a task not enabled there (nothing done),
 * or -1 out of memory. */
int insert(struct ploom_dpor *d, struct node *nd)
{
	struct ploom_access a[PLOOM_ACCESS_MAX];
	struct wut **level = &nd->wut, *b, *chain = NULL, **tail = &chain;
	size_t k, x;
	int top = 1, na;

	for (k = 0; k < nd->nops; k++) {
		int t = nd->ops[k].task;

		if (!tset_has(&nd->sleep, t) && !tset_has(&nd->done, t) && !tset_has(&nd->busy, t))
			continue;
		na = ploom_pending_accesses(a, t, nd->ops[k].op, nd->ops[k].obj);
		if (weak_initial(d, nd->known, t, a, na, 0))
			return 0;
	}
	for (;;) {
		for (b = *level; b; b = b->next) {
			if (top && (tset_has(&nd->busy, b->task) || tset_has(&nd->done, b->task)))
				continue;
			if (weak_initial(d, b->known, b->task, b->acc, b->nacc, b->ends_not))
				break;
		}
		if (!b)
			break;
		for (x = 0; x < d->nv; x++) {
			if (!d->vgone[x] && ploom_hb_task(d->hb, d->vev[x]) == b->task) {
				d->vgone[x] = 1;
				d->vleft--;
				break;
			}
		}
		if (!b->child || !d->vleft)
			return 0;
		level = &b->child;
		top = 0;
	}
	for (x = 0; x < d->nv && d->vgone[x]; x++)
		;
	if (top) {
		int t = ploom_hb_task(d->hb, d->vev[x]);

		for (k = 0; k < nd->nenabled && nd->enabled[k] != t; k++)
			;
		if (k == nd->nenabled)
			return 1;
		if (tset_add(&nd->backtrack, t) < 0)
			return -1;
	}
	for (; x < d->nv; x++) {
		const struct evacc *ev = &d->acc[d->vev[x]];
		struct wut *w;

		if (d->vgone[x])
			continue;
		w = calloc(1, sizeof(*w));
		if (!w) {
			wut_free(chain);
			return -1;
		}
		w->task = ploom_hb_task(d->hb, d->vev[x]);
		w->ends_not = !(d->cut_fail && d->vev[x] + 1 >= (long)d->nsteps);
		w->nacc = ev->n;
		memcpy(w->acc, ev->a, sizeof(w->acc));
		memcpy(w->known, nd->known, sizeof(w->known));
		*tail = w;
		tail = &w->child;
	}
	while (*level)
		level = &(*level)->next;
	*level = chain;
	return 0;
}
