/* Depth-first search over schedules; explore.h documents the rules.
 *
 * The search keeps, for every branch point of the current path from the
 * search's root down, the alternatives not tried there yet, in the order
 * they will be tried.  Backtracking takes the first one at the deepest
 * branch point that has one; a split (ploom_explore_split) takes the last
 * one at the shallowest, so a search and the searches split from it share
 * no schedule.
 *
 * A shard's search (shard.h) is the same search with a filter on
 * backtracking: a step back above the unit depth enters a new unit, and
 * one the shard does not own is skipped, after its probe, by stepping back
 * only above the unit depth.  Its splits are taken below the unit depth,
 * inside a unit it owns, so that one part alone walks from unit to unit
 * and numbers them as every other shard does. */
#include "explore.h"

#include <stdlib.h>
#include <string.h>

#include "estimate.h"
#include "kinds.h"
#include "plan.h"
#include "search.h"
#include "shard.h"

/* The untried alternatives at one branch point: a[head..n).  children
 * counts the default and every alternative as listed, those a split has
 * given away included: the branch point's share of the estimate's
 * weights (estimate.h) never changes. */
struct alts {
	int *a;
	size_t head, n, cap;
	size_t children;
};

static const struct ploom_strategy_ops dfs_ops, shard_ops;

static int enter_unit(struct ploom_explore *ex, size_t n);

struct ploom_explore {
	struct ploom_strategy base;     /* first: a search is a strategy (search.h) */
	int bound;
	int *prefix;            /* the next schedule's choices; the current path while reading a run */
	size_t nprefix;
	size_t prefix_cap;
	struct alts *alts;      /* alts[i] for the branch points root <= i < nprefix */
	size_t alts_cap;
	size_t root;            /* branch points above it are fixed: never backtracked to */
	double weight;          /* of the subtree at root, in the whole search's tree */
	int complete;
	struct ploom_shard *shard;  /* NULL: the whole search */
	long unit;              /* a shard's: the next schedule's unit */
	int owned;              /* 1: the shard owns it, else the next schedule is a probe */
};

int ploom_explore_new(struct ploom_explore **out, int max_preemptions,
		      struct ploom_err *err)
{
	struct ploom_explore *ex = calloc(1, sizeof(*ex));

	*out = NULL;
	if (!ex)
		return ploom_err_oom(err);
	ex->base.ops = &dfs_ops;
	ex->bound = max_preemptions;
	ex->weight = 1;
	*out = ex;
	return 0;
}

int ploom_explore_new_shard(struct ploom_explore **out, int max_preemptions,
			    struct ploom_shard *shard, struct ploom_err *err)
{
	if (ploom_explore_new(out, max_preemptions, err) < 0)
		return -1;
	(*out)->base.ops = &shard_ops;
	(*out)->shard = shard;
	/* the first schedule is in unit 0 */
	shard->units = shard->owned = shard->probes = 0;
	shard->last_unit = shard->failure_unit = -1;
	enter_unit(*out, 0);
	return 0;
}

int ploom_explore_probe(const struct ploom_explore *ex)
{
	return ex->shard && !ex->owned;
}

void ploom_explore_free(struct ploom_explore *ex)
{
	size_t i;

	if (!ex)
		return;
	for (i = 0; i < ex->alts_cap; i++)
		free(ex->alts[i].a);
	free(ex->alts);
	free(ex->prefix);
	free(ex);
}

const int *ploom_explore_prefix(const struct ploom_explore *ex, size_t *out_len)
{
	*out_len = ex->nprefix;
	return ex->prefix;
}

/* The alternative tried after `c` at a branch point s whose previous task
 * is prev, or -1 if none is left: the order is the default first, then
 * the others ascending. */
static int next_alternative(const struct ploom_step *s, int prev, int c)
{
	int d = ploom_step_is_enabled(s, prev) ? prev : s->enabled[0];
	size_t i;

	for (i = 0; i < s->nenabled; i++) {
		int a = s->enabled[i];
		if (a == d)
			continue;
		if (c == d || a > c)
			return a;
	}
	return -1;
}

/* Room for n branch points in prefix and alts. */
static int reserve(struct ploom_explore *ex, size_t n)
{
	if (n > ex->prefix_cap) {
		size_t cap = ex->prefix_cap ? 2 * ex->prefix_cap : 64;
		int *p;
		while (cap < n)
			cap *= 2;
		p = realloc(ex->prefix, cap * sizeof(*p));
		if (!p)
			return -1;
		ex->prefix = p;
		ex->prefix_cap = cap;
	}
	if (n > ex->alts_cap) {
		size_t cap = ex->alts_cap ? 2 * ex->alts_cap : 64;
		struct alts *a;
		while (cap < n)
			cap *= 2;
		a = realloc(ex->alts, cap * sizeof(*a));
		if (!a)
			return -1;
		memset(a + ex->alts_cap, 0, (cap - ex->alts_cap) * sizeof(*a));
		ex->alts = a;
		ex->alts_cap = cap;
	}
	return 0;
}

/* Fills *l with the alternatives after the choice s->task at branch point
 * s, within the bound. */
static int list_alternatives(struct alts *l, const struct ploom_step *s, int prev, int pre,
			     int bound)
{
	int prev_enabled = ploom_step_is_enabled(s, prev);
	int a = s->task;

	l->head = l->n = 0;
	while ((a = next_alternative(s, prev, a)) >= 0) {
		int cost = pre + (a != prev && prev_enabled);
		if (bound >= 0 && cost > bound)
			continue;
		if (l->n == l->cap) {
			size_t cap = l->cap ? 2 * l->cap : 4;
			int *p = realloc(l->a, cap * sizeof(*p));
			if (!p)
				return -1;
			l->a = p;
			l->cap = cap;
		}
		l->a[l->n++] = a;
	}
	l->children = 1 + l->n;
	return 0;
}

/* Enters the next unit, whose first choice below the unit depth is the
 * one just put at branch point n.  Returns 1 when the next schedule is to
 * run: the shard owns the unit, or it must probe it to learn the branch
 * points below n; 0 when a unit at the unit depth's last branch point is
 * skipped without a run. */
static int enter_unit(struct ploom_explore *ex, size_t n)
{
	struct ploom_shard *sh = ex->shard;

	ex->unit = sh->units++;
	ex->owned = ploom_shard_owns(sh, ex->unit);
	if (ex->owned)
		sh->owned++;
	return ex->owned || n + 1 < (size_t)sh->depth;
}

/* A shard's search took the run of its next schedule, which has n branch
 * points: counts it, and returns how many of them backtracking may use
 * (after a probe only those above the unit depth: the rest belongs to a
 * unit that another shard owns). */
static size_t shard_took(struct ploom_explore *ex, const struct ploom_run *run, size_t n)
{
	struct ploom_shard *sh = ex->shard;

	if (!ex->owned) {
		sh->probes++;
		return n < (size_t)sh->depth ? n : (size_t)sh->depth;
	}
	sh->last_unit = ex->unit;
	if (sh->failure_unit < 0 && ploom_outcome_is_failure(run->outcome.kind))
		sh->failure_unit = ex->unit;
	return n;
}

int ploom_explore_next(struct ploom_explore *ex, const struct ploom_run *run,
		       struct ploom_err *err)
{
	size_t i, n = 0;
	int prev = 0, pre = 0;

	for (i = 0; i < run->nsteps; i++) {
		const struct ploom_step *s = &run->steps[i];
		if (s->nenabled > 1) {
			if (n < ex->nprefix) {
				if (s->task != ex->prefix[n])
					return ploom_err_set(err, PLOOM_ERR_DIVERGENCE,
							     "the schedule picked task %d at step %zu where "
							     "task %d was asked for",
							     s->task, i, ex->prefix[n]);
			} else {
				/* a branch point below the prefix: the run took its
				 * default, the others are still to try */
				if (reserve(ex, n + 1) < 0 ||
				    list_alternatives(&ex->alts[n], s, prev, pre, ex->bound) < 0)
					return ploom_err_oom(err);
				ex->prefix[n] = s->task;
			}
			if (s->task != prev && ploom_step_is_enabled(s, prev))
				pre++;
			n++;
		}
		prev = s->task;
	}
	if (n < ex->nprefix)
		return ploom_err_set(err, PLOOM_ERR_DIVERGENCE,
				     "the schedule ended after %zu of the %zu requested choices",
				     n, ex->nprefix);
	if (ex->shard)
		n = shard_took(ex, run, n);
	while (n-- > ex->root) {
		struct alts *l = &ex->alts[n];
		while (l->head < l->n) {
			ex->prefix[n] = l->a[l->head++];
			if (!ex->shard || n >= (size_t)ex->shard->depth || enter_unit(ex, n)) {
				ex->nprefix = n + 1;
				return 1;
			}
		}
	}
	ex->nprefix = 0;
	ex->complete = 1;
	return 0;
}

double ploom_explore_left(const struct ploom_explore *ex)
{
	struct ploom_weight_walk walk;
	size_t i;

	if (ex->complete)
		return 0;
	ploom_weight_walk_init(&walk, ex->weight);
	for (i = ex->root; i < ex->nprefix; i++)
		ploom_weight_walk_step(&walk, ex->alts[i].children,
				       ex->alts[i].n - ex->alts[i].head);
	return ploom_weight_walk_left(&walk);
}

/* The shallowest branch point of the next schedule's path that has an
 * untried alternative, or -1. */
static long shallowest(const struct ploom_explore *ex)
{
	size_t i = ex->root;

	if (ex->shard) {
		if (!ex->owned)
			return -1;
		if (i < (size_t)ex->shard->depth)
			i = (size_t)ex->shard->depth;
	}
	for (; i < ex->nprefix; i++)
		if (ex->alts[i].head < ex->alts[i].n)
			return (long)i;
	return -1;
}

long ploom_explore_split_depth(const struct ploom_explore *ex)
{
	return shallowest(ex);
}

int ploom_explore_split(struct ploom_explore **out, struct ploom_explore *ex,
			struct ploom_err *err)
{
	struct ploom_explore *sub = NULL;
	struct ploom_weight_walk walk;
	long d = shallowest(ex);
	struct alts *l;
	size_t i;

	*out = NULL;
	if (d < 0)
		return 0;
	if (ploom_explore_new(&sub, ex->bound, err) < 0)
		return -1;
	sub->base.ops = ex->base.ops;
	sub->shard = ex->shard;
	sub->unit = ex->unit;
	sub->owned = ex->owned;
	if (reserve(sub, (size_t)d + 1) < 0) {
		ploom_explore_free(sub);
		return ploom_err_oom(err);
	}
	l = &ex->alts[d];
	memcpy(sub->prefix, ex->prefix, (size_t)d * sizeof(*sub->prefix));
	sub->prefix[d] = l->a[--l->n];
	sub->nprefix = sub->root = (size_t)d + 1;
	/* the weight of the child given away: what ex has left loses it */
	ploom_weight_walk_init(&walk, ex->weight);
	for (i = ex->root; i <= (size_t)d; i++)
		ploom_weight_walk_step(&walk, ex->alts[i].children, 0);
	sub->weight = walk.weight;
	*out = sub;
	return 1;
}

/* ---- the strategy: the functions above behind struct ploom_strategy ---- */

static const int *dfs_prefix(const struct ploom_strategy *self, size_t *out_len)
{
	return ploom_explore_prefix((const struct ploom_explore *)self, out_len);
}

static int dfs_next(struct ploom_strategy *self, const struct ploom_run *run,
		    struct ploom_err *err)
{
	return ploom_explore_next((struct ploom_explore *)self, run, err);
}

static long dfs_split_depth(const struct ploom_strategy *self)
{
	return ploom_explore_split_depth((const struct ploom_explore *)self);
}

static int dfs_split(struct ploom_strategy **out, struct ploom_strategy *self,
		     struct ploom_err *err)
{
	struct ploom_explore *sub = NULL;
	int r = ploom_explore_split(&sub, (struct ploom_explore *)self, err);

	*out = sub ? &sub->base : NULL;
	return r;
}

static double dfs_left(const struct ploom_strategy *self)
{
	return ploom_explore_left((const struct ploom_explore *)self);
}

static void dfs_free(struct ploom_strategy *self)
{
	ploom_explore_free((struct ploom_explore *)self);
}

static int dfs_probe(const struct ploom_strategy *self)
{
	return ploom_explore_probe((const struct ploom_explore *)self);
}

static const struct ploom_strategy_ops dfs_ops = {
	.name = "dfs",
	.prefix = dfs_prefix,
	.sleep = NULL,
	.next = dfs_next,
	.split_depth = dfs_split_depth,
	.split = dfs_split,
	.left = dfs_left,
	.free = dfs_free,
};

/* A shard cannot weigh what it has left: the units it skips are not its
 * own, and it learns which they are only as it goes. */
static const struct ploom_strategy_ops shard_ops = {
	.name = "dfs",
	.prefix = dfs_prefix,
	.sleep = NULL,
	.next = dfs_next,
	.split_depth = dfs_split_depth,
	.split = dfs_split,
	.left = NULL,
	.free = dfs_free,
	.probe = dfs_probe,
};

int ploom_explore_strategy_new(struct ploom_strategy **out, int max_preemptions,
			       struct ploom_err *err)
{
	struct ploom_explore *ex = NULL;

	*out = NULL;
	if (ploom_explore_new(&ex, max_preemptions, err) < 0)
		return -1;
	*out = &ex->base;
	return 0;
}

int ploom_explore_strategy_new_shard(struct ploom_strategy **out, int max_preemptions,
				     struct ploom_shard *shard, struct ploom_err *err)
{
	struct ploom_explore *ex = NULL;

	*out = NULL;
	if (ploom_explore_new_shard(&ex, max_preemptions, shard, err) < 0)
		return -1;
	*out = &ex->base;
	return 0;
}

/* ---- the kind ---- */

int ploom_search_dfs_new(struct ploom_strategy **out, struct ploom_plan *plan,
			 struct ploom_err *err)
{
	if (plan->shard_count)
		return ploom_explore_strategy_new_shard(out, plan->max_preemptions, &plan->shard,
							err);
	return ploom_explore_strategy_new(out, plan->max_preemptions, err);
}

/* plain depth-first search takes every option */
const struct ploom_refusal ploom_search_dfs_refusals[] = {{0, NULL}};
