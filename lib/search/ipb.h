/* ipb.h - iterative preemption bounding: the schedules by their number of
 * preemptions, fewest first.
 *
 * Overview
 * --------
 * The search runs every schedule with no preemption, then every one with
 * exactly 1, then exactly 2, and so on up to a bound or until none is left
 * (Musuvathi and Qadeer, "Iterative context bounding for systematic
 * testing of multithreaded programs", PLDI 2007).  Those are the schedules
 * of a depth-first search with the same bound (explore.h), each run once,
 * so the first failing schedule it runs has the fewest preemptions of any
 * failing schedule: a failure found at level L proves that no schedule
 * with fewer preemptions fails.  It is driven as a depth-first search is:
 *
 *     ploom_ipb_new(&s, max_preemptions, &err);
 *     do {
 *         prefix = ploom_ipb_prefix(s, &n);
 *         ...run a schedule following prefix, defaults after it...
 *     } while ((r = ploom_ipb_next(s, &run, &err)) == 1);
 *
 * Branch points, default choices and preemptions are explore.h's.  A
 * schedule with exactly L preemptions (L > 0) has a last one: its choices
 * down to that one are its *work item*, of level L, and after it the
 * schedule makes none.  Level 0 has one work item, the empty prefix.  The
 * schedules of a work item are what a depth-first search below it reaches
 * without a preemption: the default at every branch point, and the other
 * enabled tasks where the task of the previous step is no longer enabled
 * (switching from a blocked or finished task is no preemption).  Where it
 * is still enabled, every other choice is a preemption: each is a work
 * item of level L + 1, recorded the first time a run reaches that branch
 * point, so that each is recorded once (the work list of Musuvathi and
 * Qadeer's ICB).  A level's work items run after every schedule of the
 * level before is back.  The search keeps the work items of the level
 * under way and of the next one, the frontier, and nothing of the levels
 * done: a work item is its choices, so memory grows with the frontier
 * times the depth of the branch points.
 *
 * Within a level the schedules run in the order explore.h's search with
 * that level as its bound runs them, the schedules with fewer preemptions
 * left out (the work items are sorted in depth-first order when their
 * level starts).  So to its first failure, at level L, this search runs no
 * more schedules than the searches with the bounds 0, 1, ..., L one after
 * another until one fails, and fewer when L > 0: those run again every
 * schedule of the levels below, and this one runs each once.
 *
 * The module only looks at runs' steps, so it works the same for runs
 * from a worker and for runs from a simulator in the tests.
 */
#ifndef PLOOM_IPB_H
#define PLOOM_IPB_H

#include <stddef.h>

#include "err.h"
#include "trace.h"

struct ploom_ipb;

/* Creates a search; max_preemptions < 0 means no bound (levels go on
 * while work items are left).  On success the caller owns *out and frees
 * it with ploom_ipb_free(). */
int ploom_ipb_new(struct ploom_ipb **out, int max_preemptions, struct ploom_err *err);

/* Frees the search, or a part split from one; accepts NULL. */
void ploom_ipb_free(struct ploom_ipb *s);

/* The choices the next schedule must make at its first *out_len branch
 * points (empty for the first schedule).  Owned by the search, valid until
 * the next ploom_ipb_next(). */
const int *ploom_ipb_prefix(const struct ploom_ipb *s, size_t *out_len);

/* The preemptions the next schedule makes: the level under way. */
int ploom_ipb_level(const struct ploom_ipb *s);

/* Limits what the next level's work list holds to max_bytes (its
 * items' choices and their records; the arrays may have room for up to
 * twice as much; 0: no limit), for a caller whose
 * memory must not grow with the schedules run: a run of a level records
 * a work item at every branch point where it could preempt, so a level of
 * long runs records about (branch points)^2 choices per run.  Items past
 * the limit are left out, and the levels from
 * ploom_ipb_dropped_level() on are then searched only in part. */
void ploom_ipb_limit_bytes(struct ploom_ipb *s, size_t max_bytes);

/* The lowest level some of whose work items the limit left out, or -1:
 * a schedule found at a level up to that one still has the fewest
 * preemptions, one found above it may not. */
int ploom_ipb_dropped_level(const struct ploom_ipb *s);

/* Takes the run that followed the current prefix (only its steps are
 * read, and only during the call) and computes the next prefix.  Returns
 * 1 when there is a next schedule, 0 when the search (or this part of it)
 * is complete, -1 with err filled (kind PLOOM_ERR_DIVERGENCE) when the
 * run did not make the choices of the prefix, or out of memory. */
int ploom_ipb_next(struct ploom_ipb *s, const struct ploom_run *run, struct ploom_err *err);

/* The weight of the schedules s has still to complete, the one under way
 * included, in the whole search's tree (estimate.h; the tree of
 * explore.h's search with the same bound): 1 before the first run of a
 * search from ploom_ipb_new(), 0 once it is complete.  The work items not
 * started are shared by the parts of a search, each of which counts its
 * share, so that the parts' weights add up to the search's. */
double ploom_ipb_left(const struct ploom_ipb *s);

/* ---- splitting a search, for several workers at once ----
 *
 * A search gives a new part a work item of its level that no part has
 * started, or else, as explore.h's split does, the last untried
 * alternative at the shallowest branch point of its own work item's path
 * that has one: the new part searches below that choice and never above
 * it.  The parts share the search's work lists.  A part whose work item is
 * done takes the next one of the level; when none is left, the part is
 * complete (ploom_ipb_next() returns 0) unless it is the last part still
 * running a schedule of that level: it then goes on with the next level,
 * which the other workers split again.  So the parts explore disjoint sets
 * of schedules whose union is the search's, and no schedule of a level
 * starts before every schedule of the level before is back: whatever the
 * number of workers, the first failing run to come back has the fewest
 * preemptions.  Parts may be freed in any order. */

/* Where ploom_ipb_split() would split s: 0 when it would give a work item
 * no part has started, else the index of the branch point where the part
 * it gives starts, or -1 when it has nothing to give. */
long ploom_ipb_split_depth(const struct ploom_ipb *s);

/* Moves part of s's remaining schedules into a new part, without changing
 * s's prefix.  Returns 1 with *out set (the caller owns it and frees it
 * with ploom_ipb_free(); its first schedule is ploom_ipb_prefix()), 0 with
 * *out NULL when s has nothing to give, -1 with err filled when out of
 * memory. */
int ploom_ipb_split(struct ploom_ipb **out, struct ploom_ipb *s, struct ploom_err *err);

/* ---- the search as a strategy of the driver (search.h) ----
 *
 * Its ops are the functions above ("ipb"; no sleep set; split; left).  On
 * success the caller owns *out and frees it with ploom_strategy_free(), or
 * hands it to ploom_search_run(), which frees it. */
struct ploom_strategy;
int ploom_ipb_strategy_new(struct ploom_strategy **out, int max_preemptions,
			   struct ploom_err *err);

#endif
