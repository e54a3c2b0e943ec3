/* dpor.h - dynamic partial-order reduction: source sets with sleep sets
 * (Abdulla, Aronis, Jonsson, Sagonas, "Optimal dynamic partial order
 * reduction", POPL 2014, Algorithm 1).
 *
 * Overview
 * --------
 * The same loop as the depth-first search (explore.h), with a sleep set
 * sent along with each prefix:
 *
 *     ploom_dpor_new(&d, &err);
 *     do {
 *         choices = ploom_dpor_prefix(d, &n);
 *         sleep = ploom_dpor_sleep(d, &m);
 *         ...run a schedule: `run ... n choices m sleep` (event.h)...
 *     } while ((r = ploom_dpor_next(d, &run, &err)) == 1);
 *
 * Two schedules that differ only in the order of adjacent steps that do
 * not conflict (ploom_conflicts(): different objects, or two reads) end
 * in the same state; the search runs at least one schedule of every such
 * class (Mazurkiewicz trace) and, thanks to the sleep sets, seldom more.
 * Where a run's step races with an earlier step of another task (they
 * conflict and nothing else orders them: hb.h), the search adds, at the
 * state before the earlier step, a task that starts a reordering in which
 * the later one goes first.  The order of two critical sections of one lock
 * is such a race: a blocking acquire (and a join) races with the last
 * step on its object before which it could have run, not with the
 * release (or exit) that let it run; an acquire that waits for more than
 * its lock (a queue's get, a semaphore's acquire: one step) could run
 * only where the run's enabled sets say it could.  A run that ends in a failure (an
 * exception, a crash) ends every task at once, so the next operation of
 * every other task races with its last step; at a deadlock, the blocked
 * acquires race as if they ran.
 *
 * The sleep sets live on both sides: the search sends the tasks asleep
 * where the prefix ends, and the worker keeps them past it (event.h's
 * `run`), so a schedule never starts a reordering that is already
 * covered.  When every enabled task is asleep the worker stops the
 * schedule (outcome sleep-blocked): it is no schedule of its own, only
 * the cost of the reduction, and ploom-explore counts it apart.
 *
 * What it guarantees, and the tests show (tests/c/test_dpor.c against
 * the plain search on thousands of generated programs, and
 * tests/python/test_differential.py through the real worker): the
 * outcomes reached (each failure, deadlock and final state) are those
 * of the depth-first search, in no more schedules.
 *
 * Several workers (-j).  split() makes a new view of the same search: the
 * views share one tree of nodes (backtrack, done and sleep sets), each
 * with its own path and its own run in flight.  A view takes its run into
 * the tree (its races may add tasks to the backtrack set of any node of
 * its path, above where it started included), then claims the deepest
 * task of its path that no view has claimed; split() gives an idle
 * worker the shallowest one.  A node stays while a view holds it on its
 * path or a node below it lives; when the last goes, its subtree is
 * explored and its parent counts it done.  Tasks are only ever added to
 * nodes that the adding view holds, and a view lets go of a node only
 * when nothing is left to claim there, so a view that ends leaves no
 * unclaimed task behind: the search is complete when every view has
 * ended.
 *
 * Sleep sets with views.  A view that claims task t at a node sends as
 * asleep the node's sleep set and every task claimed there before t,
 * explored or still under way: exactly what the serial search sends when
 * it explores the siblings in the order they were claimed.  The serial
 * argument holds in that order: a sibling in the sleep set is, once its
 * view is done, explored completely, with what its own races add to the
 * nodes above (which are only more tasks to claim); nothing in its
 * subtree depends on the later sibling's.  The views only change the
 * order, so the outcomes stay those of the serial search; the schedules
 * may differ a little in number (the sleep sets follow the order of the
 * claims), which tests/c/test_dpor.c and scripts/bench measure.
 *
 * Shards (--shard K/N, shard.h).  A shard's search enumerates its first D
 * branch points fully: every enabled task there is in the backtrack set,
 * with the sleep sets of the serial search, which depend only on the
 * steps and pending operations of the prefix and so are the same in every
 * shard.  A work unit is the subtree below the D-th branch point (a
 * schedule with fewer is a unit on its own); units are numbered in the
 * order the walk enters them, and below one the reduction runs as usual.
 * A race reversed at the enumerated levels adds nothing there: every task
 * is in already.  One view (the first) walks the units and runs the
 * probes; the views split from it stay inside a unit it owns.  A search
 * with more backtrack entries than the reduction asks for still reaches
 * every outcome, so the N shards together reach those of the whole search.
 *
 * With a preemption bound (ploom_dpor_new_bounded()), only schedules
 * that make at most that many preemptions run, and every schedule within
 * the bound has an equivalent one that runs (bounded POR: Coons,
 * Musuvathi, McKinley, "Bounded partial-order reduction", OOPSLA 2013).
 * Reversing a race where the later task would preempt one that could go
 * on may cost a preemption beyond the bound, so the reordering is also
 * started at the switch points above the race, where the path switches
 * tasks already and another task costs no more.  Sleep sets are left
 * out: the schedule a sleep set prunes is equivalent to one explored, but
 * that one may lie beyond the bound.  tests/c/test_dpor.c holds the bounded search to the
 * bounded depth-first search (explore.h) for the bounds 0, 1 and 2 as it
 * holds the unbounded one to the unbounded.  So the search over the
 * bounds 0, 1, 2, ... in turn finds a failure with the fewest
 * preemptions first, as the minimizer (minimize.h) uses it.
 *
 * A bound composes with the views and the shards: each node keeps the
 * preemptions above it, and no view claims, nor shard enumerates, a task
 * beyond the bound.
 *
 * Wakeup trees (optimal DPOR: Abdulla, Aronis, Jonsson, Sagonas, "Source
 * sets", JACM 2017), on unless ploom_dpor_set_wakeup_trees() turns them
 * off (the tests compare both).  A race puts the whole reordering v (the steps after the
 * earlier one that do not follow it, then the later one) into the
 * wakeup tree of the node before the earlier step, unless a task asleep
 * there (or explored, or under way) is a weak initial of v, or a branch
 * of the tree already covers it; a node runs the tree's leftmost branch
 * first, and its child gets the subtree below that step.  The steps of a
 * branch go to the worker as forced steps (event.h's `run`), since which
 * of them will be branch points is not known before they run.  A
 * reordering that may not run as it is goes in as its first step alone,
 * as with source sets: one whose later step may wait (an acquire, a
 * join: what let it run may be left out of v) or never ran (the run
 * ended first).  A step not known to pass (a task's next step where it
 * sleeps or was explored, which may fail and end the run, so conflicts
 * with every step after it) counts as a weak initial of v only by a step
 * in v, never by conflicting with none.  Views take the tree along; a
 * bound or a shard keeps source sets alone.
 */
#ifndef PLOOM_DPOR_H
#define PLOOM_DPOR_H

#include <stddef.h>

#include "err.h"
#include "trace.h"

struct ploom_dpor;

/* A new search.  On success the caller owns *out (ploom_dpor_free()). */
int ploom_dpor_new(struct ploom_dpor **out, struct ploom_err *err);

/* A search of the schedules with at most max_preemptions preemptions
 * (explore.h's count); max_preemptions < 0: no bound, ploom_dpor_new(). */
int ploom_dpor_new_bounded(struct ploom_dpor **out, int max_preemptions, struct ploom_err *err);

/* Turns the wakeup trees of optimal DPOR (the overview above) on or off
 * for d, before its first run; a bounded search or a shard's never has
 * them.  On by default; off, the search is source-set DPOR, which
 * tests/c/test_dpor.c runs beside them on the generated programs. */
void ploom_dpor_set_wakeup_trees(struct ploom_dpor *d, int on);

/* Frees the search; accepts NULL. */
void ploom_dpor_free(struct ploom_dpor *d);

/* The choices of the next schedule at its first *n branch points, and
 * the tasks asleep where the last of them is made (empty for the first
 * schedule).  Owned by the search, valid until ploom_dpor_next(). */
const int *ploom_dpor_prefix(const struct ploom_dpor *d, size_t *n);
const int *ploom_dpor_sleep(const struct ploom_dpor *d, size_t *n);

/* Takes the run that followed the prefix and sleep set (its steps,
 * pending operations and outcome are read during the call) and computes
 * the next.  Returns 1 when there is a next schedule, 0 when the search
 * is complete, -1 with err filled (PLOOM_ERR_DIVERGENCE when the run did
 * not make the prefix's choices; PLOOM_ERR_INTERNAL when it ran a task
 * that the search takes for asleep, which the worker never does;
 * PLOOM_ERR_NOMEM when out of memory). */
int ploom_dpor_next(struct ploom_dpor *d, const struct ploom_run *run, struct ploom_err *err);

/* Moves a task of d's path that no view has claimed (the shallowest) into
 * a new view *out of the same search, without changing d's prefix (its
 * run may be in flight).  Returns 1 with *out set (the caller frees it),
 * 0 with *out NULL when d has nothing to give (a shard's walker past a
 * probe never does), -1 with err filled. */
int ploom_dpor_split(struct ploom_dpor **out, struct ploom_dpor *d, struct ploom_err *err);

/* A new search of shard's part (shard.h), with a preemption bound (< 0:
 * none): the shard outlives it, and its counts are filled as the search
 * goes. */
struct ploom_shard;
int ploom_dpor_new_shard(struct ploom_dpor **out, struct ploom_shard *shard,
			 int max_preemptions, struct ploom_err *err);

/* The same searches as strategies of the search driver (search.h), named
 * "dpor", split as ploom_dpor_split(); a shard's says which runs are
 * probes. */
struct ploom_strategy;
int ploom_dpor_strategy_new(struct ploom_strategy **out, struct ploom_err *err);
/* The same with a preemption bound (< 0: none), as ploom_dpor_new_bounded(). */
int ploom_dpor_strategy_new_bounded(struct ploom_strategy **out, int max_preemptions,
				    struct ploom_err *err);
int ploom_dpor_strategy_new_shard(struct ploom_strategy **out, struct ploom_shard *shard,
				  int max_preemptions, struct ploom_err *err);

/* Counters of this view, for tests and statistics: races found and reversed, and
 * races whose reversal started with no task enabled before the earlier
 * step, so every enabled task was added there instead. */
struct ploom_dpor_stats {
	long races;
	long fallbacks;
};
void ploom_dpor_get_stats(const struct ploom_dpor *d, struct ploom_dpor_stats *out);

#endif
