/* explore.h - depth-first search over schedules (no reduction).
 *
 * Overview
 * --------
 * The search is a loop between this module and whoever runs schedules:
 *
 *     ploom_explore_new(&ex, max_preemptions, &err);
 *     do {
 *         prefix = ploom_explore_prefix(ex, &n);
 *         ...run a schedule following prefix, defaults after it...
 *     } while ((r = ploom_explore_next(ex, &run, &err)) == 1);
 *
 * A branch point is a step with more than one enabled task.  The default
 * choice there is the task that ran the previous step if it is still
 * enabled, else the lowest enabled id (step 0's previous task is 0).  The
 * first schedule takes the default everywhere; the search then
 * backtracks to the deepest branch point with an untried alternative,
 * trying the default first and then the other enabled tasks in
 * increasing id order.  A preemption is a choice that switches away from
 * the task that ran the previous step while that task is still enabled;
 * with a bound k, alternatives that would make more than k preemptions
 * are skipped.  These rules are DESIGN.md's and /tmp/proto/sim.py's.
 *
 * The module only looks at runs' steps, so it works the same for runs
 * from a worker and for runs from a simulator in the tests.
 */
#ifndef PLOOM_EXPLORE_H
#define PLOOM_EXPLORE_H

#include <stddef.h>

#include "err.h"
#include "trace.h"

struct ploom_explore;

/* Creates a search; max_preemptions < 0 means no bound.  On success the
 * caller owns *out and frees it with ploom_explore_free(). */
int ploom_explore_new(struct ploom_explore **out, int max_preemptions,
		      struct ploom_err *err);

/* A shard's search (shard.h): as ploom_explore_new(), but it walks the
 * units of the whole search and runs to the end only those that shard
 * owns.  shard's index, count and depth must be set; the search resets
 * its counts and fills them as it goes.  Borrowed: the caller frees it
 * after the search and every search split from it. */
struct ploom_shard;
int ploom_explore_new_shard(struct ploom_explore **out, int max_preemptions,
			    struct ploom_shard *shard, struct ploom_err *err);

/* 1 when the next schedule is a shard's probe: a run of a unit it does
 * not own, only to learn the branch points, which the caller must not
 * count nor report; else 0 (always, for a search that is not a shard's). */
int ploom_explore_probe(const struct ploom_explore *ex);

/* Frees the search; accepts NULL. */
void ploom_explore_free(struct ploom_explore *ex);

/* The choices the next schedule must make at its first *out_len branch
 * points (empty for the first schedule).  Owned by the search, valid
 * until the next ploom_explore_next(). */
const int *ploom_explore_prefix(const struct ploom_explore *ex, size_t *out_len);

/* Takes the run that followed the current prefix (only its steps are
 * read, and only during the call) and computes the next prefix.  Returns
 * 1 when there is a next schedule, 0 when the search is complete, -1
 * with err filled (kind PLOOM_ERR_DIVERGENCE) when the run did not make
 * the choices of the prefix, or out of memory. */
int ploom_explore_next(struct ploom_explore *ex, const struct ploom_run *run,
		       struct ploom_err *err);

/* The weight of the schedules ex has still to complete, the one under
 * way included, in the whole search's tree (estimate.h): 1 before the
 * first run of a search from ploom_explore_new(), 0 once it is complete.
 * A branch point's children are the default and the alternatives within
 * the preemption bound, so the tree weighed is the one the search
 * explores. */
double ploom_explore_left(const struct ploom_explore *ex);

/* ---- splitting a search, for several workers at once ----
 *
 * A search can give part of the schedules still ahead of it to a new
 * search: the subtree under one untried alternative.  The two then
 * explore disjoint sets of schedules whose union is what the one search
 * would have explored, in any interleaving of their runs; a search split
 * from another splits the same way.  A driver with N workers gives each a
 * search: it starts with one from ploom_explore_new(), and a worker that
 * has none takes one split from a search that another worker is running
 * (its run in flight: ploom_explore_prefix() was sent and the run is not
 * back yet; the split does not change that prefix).
 *
 * The split takes the shallowest branch point of the next schedule's path
 * that still has an untried alternative (within the preemption bound), and
 * moves the last of them, in the order the search would try them, into the
 * new search, whose root is that choice: it runs the prefix down to it
 * first, then searches depth first below it and never backtracks above
 * it.  A search has nothing to give before its first run is back, nor
 * once it is complete.  What the new search has left
 * (ploom_explore_left()) is what ex had left less what ex keeps.
 *
 * A shard's search splits only below its unit depth, inside a unit it
 * owns, so that the walk from unit to unit stays in one search; a search
 * split from it counts every schedule (all are the shard's).  Its
 * ploom_explore_left() means nothing. */

/* The depth (index of the branch point) where ploom_explore_split() would
 * split ex, or -1 when it has nothing to give: the smallest is the split
 * with the most schedules under it, usually. */
long ploom_explore_split_depth(const struct ploom_explore *ex);

/* Moves part of ex's remaining schedules into a new search.  Returns 1
 * with *out set (the caller owns it and frees it with
 * ploom_explore_free(); its first schedule is ploom_explore_prefix()), 0
 * with *out NULL when ex has nothing to give, -1 with err filled when out
 * of memory. */
int ploom_explore_split(struct ploom_explore **out, struct ploom_explore *ex,
			struct ploom_err *err);

/* ---- the search as a strategy of the driver (search.h) ----
 *
 * Its ops are the functions above ("dfs"; no sleep set; split; left).  On
 * success the caller owns *out and frees it with ploom_strategy_free(),
 * or hands it to ploom_search_run(), which frees it. */
struct ploom_strategy;
int ploom_explore_strategy_new(struct ploom_strategy **out, int max_preemptions,
			       struct ploom_err *err);

/* A shard's search as a strategy: the same, with ops->probe
 * (ploom_explore_probe()) and no ops->left. */
int ploom_explore_strategy_new_shard(struct ploom_strategy **out, int max_preemptions,
				     struct ploom_shard *shard, struct ploom_err *err);

#endif
