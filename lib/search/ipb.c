/* Iterative preemption bounding; ipb.h documents the rules.
 *
 * A part of the search runs one work item at a time as explore.c runs its
 * whole search: the alternatives not tried yet at each branch point of the
 * current path below the item, backtracking to the deepest.  Only the
 * alternatives that add no preemption go there; those that add one go to
 * the work list of the next level, which the parts split from one search
 * share with the work list of the level under way (struct pool).
 *
 * A work item keeps its choices as sort keys: a choice that was the
 * default at its branch point as -1 - task, any other as its task.  Where
 * two items' keys first differ both are at the same branch point, so
 * comparing them there puts the items in the order the depth-first search
 * tries them: the default first, then the others by increasing id. */
#include "ipb.h"

#include <stdlib.h>
#include <string.h>

#include "estimate.h"
#include "kinds.h"
#include "plan.h"
#include "search.h"

/* The work items of one level: items[head..n) are not started yet.  Their
 * keys lie end to end in one array, so that an item costs its choices and
 * little more. */
struct item {
	size_t off, len;        /* its keys: keys[off..off + len) */
	double weight;          /* of its subtree, in the whole search's tree */
};

struct worklist {
	int *keys;
	size_t nkeys, keys_cap;
	struct item *items;
	size_t head, n, cap;
};

/* What the parts of one search share. */
struct pool {
	int bound;              /* -1: none */
	int level;              /* the preemptions of every schedule under way */
	struct worklist cur;    /* level `level`, the items not given to a part yet */
	struct worklist next;   /* level `level` + 1, as recorded */
	/* the weight of the items not started, in cur and next: kept as a
	 * sum, which is set again when a level starts and is 0 exactly when
	 * both lists are empty */
	double pending;
	int parts;              /* parts not freed */
	int running;            /* parts with a work item of the level */
	size_t max_bytes;       /* of the next level's work list; 0: no limit */
	int dropped_level;      /* the lowest level with items left out, or -1 */
};

/* The untried alternatives at one branch point: a[head..n), none of which
 * adds a preemption.  children counts the default and every alternative
 * within the bound, those that became work items of the next level and
 * those a split has given away included, for the estimate's weights. */
struct alts {
	int *a;
	size_t head, n, cap;
	size_t children;
};

static const struct ploom_strategy_ops ipb_ops;

struct ploom_ipb {
	struct ploom_strategy base;     /* first: a search is a strategy (search.h) */
	struct pool *pool;
	int *prefix;            /* the next schedule's choices; the current path while reading a run */
	int *keys;              /* the current path's keys, while reading a run */
	size_t nprefix, prefix_cap;
	struct alts *alts;      /* alts[i] for the branch points root <= i < nprefix */
	size_t alts_cap;
	size_t root;            /* the work item's length: branch points above it are fixed */
	double weight;          /* of the subtree at root */
	int done;               /* ploom_ipb_next() returned 0 */
};

static void worklist_release(struct worklist *l)
{
	free(l->keys);
	free(l->items);
	memset(l, 0, sizeof(*l));
}

/* What l's items take, with one more of len keys. */
static size_t worklist_bytes(const struct worklist *l, size_t len)
{
	return (l->nkeys + len) * sizeof(*l->keys) + (l->n + 1) * sizeof(*l->items);
}

/* The key of the choice c at a branch point whose default is d. */
static int key_of(int c, int d)
{
	return c == d ? -1 - c : c;
}

static int choice_of(int key)
{
	return key < 0 ? -1 - key : key;
}

/* Appends the item of keys[0..len) and then the task last, which is not
 * the default of its branch point. */
static int worklist_add(struct worklist *l, const int *keys, size_t len, int last,
			double weight)
{
	struct item *it;

	if (l->nkeys + len + 1 > l->keys_cap) {
		size_t cap = l->keys_cap ? 2 * l->keys_cap : 1024;
		int *k;
		while (cap < l->nkeys + len + 1)
			cap *= 2;
		k = realloc(l->keys, cap * sizeof(*k));
		if (!k)
			return -1;
		l->keys = k;
		l->keys_cap = cap;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		it = realloc(l->items, cap * sizeof(*it));
		if (!it)
			return -1;
		l->items = it;
		l->cap = cap;
	}
	it = &l->items[l->n++];
	it->off = l->nkeys;
	it->len = len + 1;
	it->weight = weight;
	memcpy(l->keys + l->nkeys, keys, len * sizeof(*keys));
	l->keys[l->nkeys + len] = last;
	l->nkeys += len + 1;
	return 0;
}

/* The depth-first order of two items of the list whose keys ctx is. */
static int item_cmp(const void *a, const void *b, void *ctx)
{
	const struct item *x = a, *y = b;
	const int *keys = ctx;
	size_t i;

	for (i = 0; i < x->len && i < y->len; i++)
		if (keys[x->off + i] != keys[y->off + i])
			return keys[x->off + i] < keys[y->off + i] ? -1 : 1;
	return x->len < y->len ? -1 : x->len > y->len;
}

static void pool_release(struct pool *p)
{
	worklist_release(&p->cur);
	worklist_release(&p->next);
	free(p);
}

/* Room for n branch points in prefix, keys and alts. */
static int reserve(struct ploom_ipb *s, size_t n)
{
	if (n > s->prefix_cap) {
		size_t cap = s->prefix_cap ? 2 * s->prefix_cap : 64;
		int *p;
		while (cap < n)
			cap *= 2;
		p = realloc(s->prefix, cap * sizeof(*p));
		if (!p)
			return -1;
		s->prefix = p;
		p = realloc(s->keys, cap * sizeof(*p));
		if (!p)
			return -1;
		s->keys = p;
		s->prefix_cap = cap;
	}
	if (n > s->alts_cap) {
		size_t cap = s->alts_cap ? 2 * s->alts_cap : 64;
		struct alts *a;
		while (cap < n)
			cap *= 2;
		a = realloc(s->alts, cap * sizeof(*a));
		if (!a)
			return -1;
		memset(a + s->alts_cap, 0, (cap - s->alts_cap) * sizeof(*a));
		s->alts = a;
		s->alts_cap = cap;
	}
	return 0;
}

/* A part of pool's search with no work item yet. */
static struct ploom_ipb *part_new(struct pool *pool)
{
	struct ploom_ipb *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->base.ops = &ipb_ops;
	s->pool = pool;
	pool->parts++;
	pool->running++;
	return s;
}

int ploom_ipb_new(struct ploom_ipb **out, int max_preemptions, struct ploom_err *err)
{
	struct pool *pool = calloc(1, sizeof(*pool));
	struct ploom_ipb *s = pool ? part_new(pool) : NULL;

	*out = NULL;
	if (!s) {
		free(pool);
		return ploom_err_oom(err);
	}
	pool->bound = max_preemptions < 0 ? -1 : max_preemptions;
	pool->dropped_level = -1;
	/* level 0's one work item, the empty prefix, is this part's */
	s->weight = 1;
	*out = s;
	return 0;
}

void ploom_ipb_free(struct ploom_ipb *s)
{
	size_t i;

	if (!s)
		return;
	if (!s->done)
		s->pool->running--;
	if (--s->pool->parts == 0)
		pool_release(s->pool);
	for (i = 0; i < s->alts_cap; i++)
		free(s->alts[i].a);
	free(s->alts);
	free(s->prefix);
	free(s->keys);
	free(s);
}

const int *ploom_ipb_prefix(const struct ploom_ipb *s, size_t *out_len)
{
	*out_len = s->nprefix;
	return s->prefix;
}

int ploom_ipb_level(const struct ploom_ipb *s)
{
	return s->pool->level;
}

void ploom_ipb_limit_bytes(struct ploom_ipb *s, size_t max_bytes)
{
	s->pool->max_bytes = max_bytes;
}

int ploom_ipb_dropped_level(const struct ploom_ipb *s)
{
	return s->pool->dropped_level;
}

/* Gives s the next work item of the level under way. */
static int take_item(struct ploom_ipb *s)
{
	struct pool *p = s->pool;
	const struct item *it = &p->cur.items[p->cur.head++];
	size_t i;

	if (reserve(s, it->len) < 0)
		return -1;
	for (i = 0; i < it->len; i++)
		s->prefix[i] = choice_of(p->cur.keys[it->off + i]);
	s->nprefix = s->root = it->len;
	s->weight = it->weight;
	p->pending -= it->weight;
	if (p->cur.head == p->cur.n && !p->next.n)
		p->pending = 0;
	return 0;
}

/* The next level's work list becomes the one under way, in depth-first
 * order: the level's schedules then run in the order of a depth-first
 * search with the level as its bound, the others left out. */
static void next_level(struct pool *p)
{
	size_t i;

	worklist_release(&p->cur);
	p->cur = p->next;
	memset(&p->next, 0, sizeof(p->next));
	qsort_r(p->cur.items, p->cur.n, sizeof(*p->cur.items), item_cmp, p->cur.keys);
	p->level++;
	p->pending = 0;
	for (i = 0; i < p->cur.n; i++)
		p->pending += p->cur.items[i].weight;
}

/* The default choice at the branch point st after a step of prev (the
 * enabled tasks are ascending). */
static int default_task(const struct ploom_step *st, int prev)
{
	return ploom_step_is_enabled(st, prev) ? prev : st->enabled[0];
}

/* Records the branch point st of a run, reached for the first time at
 * index n with pre preemptions before it, prev the task of the step
 * before: its alternatives that add no preemption go to alts[n], those
 * that add one (within the bound) to the next level's work list, each
 * with the weight of one child of the node of weight w.  The run took the
 * default there, st->task.  Sets *out_child to that weight. */
static int record_branch(struct ploom_ipb *s, const struct ploom_step *st, size_t n, int prev,
			 int pre, double w, double *out_child)
{
	struct pool *p = s->pool;
	struct alts *l = &s->alts[n];
	int preempts = ploom_step_is_enabled(st, prev);
	size_t i, children = 1;
	double child;

	l->head = l->n = 0;
	if (!preempts || p->bound < 0 || pre + 1 <= p->bound)
		children = st->nenabled;
	child = w / (double)children;
	l->children = children;
	*out_child = child;
	if (children == 1)
		return 0;
	for (i = 0; i < st->nenabled; i++) {
		int a = st->enabled[i];
		if (a == st->task)
			continue;
		if (preempts) {
			/* every run of a level adds as many items as its path
			 * has branch points, each as long as its place there:
			 * past the limit the next level is searched in part */
			if (p->max_bytes && worklist_bytes(&p->next, n + 1) > p->max_bytes) {
				if (p->dropped_level < 0 || p->dropped_level > p->level + 1)
					p->dropped_level = p->level + 1;
				continue;
			}
			if (worklist_add(&p->next, s->keys, n, a, child) < 0)
				return -1;
			p->pending += child;
			continue;
		}
		if (l->n == l->cap) {
			size_t cap = l->cap ? 2 * l->cap : 4;
			int *q = realloc(l->a, cap * sizeof(*q));
			if (!q)
				return -1;
			l->a = q;
			l->cap = cap;
		}
		l->a[l->n++] = a;
	}
	return 0;
}

int ploom_ipb_next(struct ploom_ipb *s, const struct ploom_run *run, struct ploom_err *err)
{
	struct pool *p = s->pool;
	double w = s->weight;
	size_t i, n = 0;
	int prev = 0, pre = 0;

	for (i = 0; i < run->nsteps; i++) {
		const struct ploom_step *st = &run->steps[i];
		if (st->nenabled > 1) {
			if (n < s->nprefix) {
				if (st->task != s->prefix[n])
					return ploom_err_set(err, PLOOM_ERR_DIVERGENCE,
							     "the schedule picked task %d at step %zu where "
							     "task %d was asked for",
							     st->task, i, s->prefix[n]);
				if (n >= s->root)
					w /= (double)s->alts[n].children;
				s->keys[n] = key_of(st->task, default_task(st, prev));
			} else {
				/* a branch point below the prefix: the run took its
				 * default, the others are still to try */
				if (reserve(s, n + 1) < 0)
					return ploom_err_oom(err);
				s->prefix[n] = st->task;
				s->keys[n] = key_of(st->task, default_task(st, prev));
				if (record_branch(s, st, n, prev, pre, w, &w) < 0)
					return ploom_err_oom(err);
			}
			if (st->task != prev && ploom_step_is_enabled(st, prev))
				pre++;
			n++;
		}
		prev = st->task;
	}
	if (n < s->nprefix)
		return ploom_err_set(err, PLOOM_ERR_DIVERGENCE,
				     "the schedule ended after %zu of the %zu requested choices",
				     n, s->nprefix);
	while (n-- > s->root) {
		struct alts *l = &s->alts[n];
		if (l->head < l->n) {
			s->prefix[n] = l->a[l->head++];
			s->nprefix = n + 1;
			return 1;
		}
	}
	/* the work item is done: the next one of the level, or the next
	 * level once no other part runs this one */
	if (p->cur.head == p->cur.n) {
		if (p->running > 1 || !p->next.n) {
			p->running--;
			s->done = 1;
			s->nprefix = 0;
			return 0;
		}
		next_level(p);
	}
	if (take_item(s) < 0)
		return ploom_err_oom(err);
	return 1;
}

double ploom_ipb_left(const struct ploom_ipb *s)
{
	const struct pool *p = s->pool;
	struct ploom_weight_walk walk;
	size_t i;

	if (s->done)
		return 0;
	ploom_weight_walk_init(&walk, s->weight);
	for (i = s->root; i < s->nprefix; i++)
		ploom_weight_walk_step(&walk, s->alts[i].children, s->alts[i].n - s->alts[i].head);
	/* the sum may be a hair below 0 when the true weight is 0 */
	return ploom_weight_walk_left(&walk) + (p->pending > 0 ? p->pending / p->running : 0);
}

/* The shallowest branch point of the next schedule's path below the work
 * item that has an untried alternative, or -1. */
static long shallowest(const struct ploom_ipb *s)
{
	size_t i;

	for (i = s->root; i < s->nprefix; i++)
		if (s->alts[i].head < s->alts[i].n)
			return (long)i;
	return -1;
}

long ploom_ipb_split_depth(const struct ploom_ipb *s)
{
	if (s->done)
		return -1;
	if (s->pool->cur.head < s->pool->cur.n)
		return 0;
	return shallowest(s);
}

int ploom_ipb_split(struct ploom_ipb **out, struct ploom_ipb *s, struct ploom_err *err)
{
	struct ploom_weight_walk walk;
	struct ploom_ipb *sub;
	long d = ploom_ipb_split_depth(s);
	struct alts *l;
	size_t i;

	*out = NULL;
	if (d < 0)
		return 0;
	sub = part_new(s->pool);
	if (!sub)
		return ploom_err_oom(err);
	if (s->pool->cur.head < s->pool->cur.n) {
		if (take_item(sub) < 0)
			goto oom;
		*out = sub;
		return 1;
	}
	if (reserve(sub, (size_t)d + 1) < 0)
		goto oom;
	l = &s->alts[d];
	memcpy(sub->prefix, s->prefix, (size_t)d * sizeof(*sub->prefix));
	sub->prefix[d] = l->a[--l->n];
	sub->nprefix = sub->root = (size_t)d + 1;
	/* the weight of the child given away: what s has left loses it */
	ploom_weight_walk_init(&walk, s->weight);
	for (i = s->root; i <= (size_t)d; i++)
		ploom_weight_walk_step(&walk, s->alts[i].children, 0);
	sub->weight = walk.weight;
	*out = sub;
	return 1;
oom:
	ploom_ipb_free(sub);
	return ploom_err_oom(err);
}

/* ---- the strategy: the functions above behind struct ploom_strategy ---- */

static const int *ipb_prefix(const struct ploom_strategy *self, size_t *out_len)
{
	return ploom_ipb_prefix((const struct ploom_ipb *)self, out_len);
}

static int ipb_next(struct ploom_strategy *self, const struct ploom_run *run,
		    struct ploom_err *err)
{
	return ploom_ipb_next((struct ploom_ipb *)self, run, err);
}

static long ipb_split_depth(const struct ploom_strategy *self)
{
	return ploom_ipb_split_depth((const struct ploom_ipb *)self);
}

static int ipb_split(struct ploom_strategy **out, struct ploom_strategy *self,
		     struct ploom_err *err)
{
	struct ploom_ipb *sub = NULL;
	int r = ploom_ipb_split(&sub, (struct ploom_ipb *)self, err);

	*out = sub ? &sub->base : NULL;
	return r;
}

static double ipb_left(const struct ploom_strategy *self)
{
	return ploom_ipb_left((const struct ploom_ipb *)self);
}

static void ipb_free(struct ploom_strategy *self)
{
	ploom_ipb_free((struct ploom_ipb *)self);
}

static const struct ploom_strategy_ops ipb_ops = {
	.name = "ipb",
	.prefix = ipb_prefix,
	.sleep = NULL,
	.next = ipb_next,
	.split_depth = ipb_split_depth,
	.split = ipb_split,
	.left = ipb_left,
	.free = ipb_free,
};

int ploom_ipb_strategy_new(struct ploom_strategy **out, int max_preemptions,
			   struct ploom_err *err)
{
	struct ploom_ipb *s = NULL;

	*out = NULL;
	if (ploom_ipb_new(&s, max_preemptions, err) < 0)
		return -1;
	*out = &s->base;
	return 0;
}

/* ---- the kind ---- */

int ploom_search_ipb_new(struct ploom_strategy **out, struct ploom_plan *plan,
			 struct ploom_err *err)
{
	return ploom_ipb_strategy_new(out, plan->max_preemptions, err);
}

const struct ploom_refusal ploom_search_ipb_refusals[] = {
	{PLOOM_PLAN_OPT_REDUCTION,
	 "the reduction keeps one schedule of each class of equivalent ones, not always the "
	 "one with the fewest preemptions, so the search by preemptions could miss the "
	 "failure with the fewest; --reduction=dpor with --max-preemptions searches the "
	 "classes within a bound"},
	{PLOOM_PLAN_OPT_SHARD,
	 "a shard walks the work units of the depth-first search, and ipb's levels are not "
	 "split into them"},
	{0, NULL},
};
