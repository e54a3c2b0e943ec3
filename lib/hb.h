/* hb.h - happens-before over a run: the vector clocks of its events and
 * the earlier events each one races with.
 *
 * Overview
 * --------
 * The partial-order reduction (dpor.h), which reverses races, and the
 * racing pairs of a trace (races.h), which shows them, read a run the
 * same way, through this one analysis.  Its events are the steps of the
 * run, in order, then any operations that never ran (pending when the run
 * ended, or blocked at a deadlock) taken as if each ran next; each is
 * described by the task that runs it and its accesses (ploom_op_accesses()
 * of event.h, whose ploom_conflicts() is the dependence).
 *
 * One event happens before another when program order and conflicting
 * accesses order them: a read after the last write of its object and the
 * adds since, an add after that write and the reads since, a write after
 * that write and the reads and adds since.  Each event's vector clock holds,
 * per task, the index plus 1 of the latest of that task's events that
 * happens before it (0: none), itself included.
 *
 * An event's race candidates are the conflicting earlier events of other tasks
 * that nothing else orders before it (an event before another candidate
 * is ordered before it through that one): those another schedule could
 * run after it.  An event that waits for its object to be free (a
 * blocking acquire of a lock not held, a blocking join of a thread not
 * running) takes only the conflicting events it could have run before,
 * else the last event on its object before which it could have run; never
 * the release, or the end of the thread, that let it run, which no
 * schedule can reverse.  So two critical sections of one lock race as
 * their acquires.
 *
 * The events are numbered 0, 1, 2... and the tasks 0..ntasks-1 (a caller
 * with other task ids maps them).  One pass, event by event:
 *
 *     struct ploom_hb *hb = NULL;
 *     long *c;
 *
 *     ploom_hb_new(&hb);
 *     ploom_hb_reset(hb, ntasks, nevents);
 *     for each step j, of task q:
 *         na = ploom_op_accesses(a, task, op, obj, mode, exits);
 *         ploom_hb_clock(hb, j, q, a, na, -1);
 *         nc = ploom_hb_candidates(hb, &c, q, a, na, ploom_hb_waits(op, mode));
 *         nc = ploom_hb_maximal(hb, c, nc);
 *         ...the races (c[i], j)...
 *         ploom_hb_step(hb, j, q, op, a, na, exits);
 *     for each operation that never ran, as event n (or n + k), of task q:
 *         ...the same, without ploom_hb_step()...
 *     ploom_hb_free(hb);
 *
 * An analysis is reused from run to run (ploom_hb_reset()), so that a
 * search that runs it once per schedule allocates only when a run is
 * longer, or has more tasks or objects, than every one before.  The run
 * itself is never read: the caller passes what each event does.  Nothing
 * here prints; functions that allocate return -1 when out of memory.
 */
#ifndef PLOOM_HB_H
#define PLOOM_HB_H

#include <stddef.h>

#include "event.h"

struct ploom_hb;

/* A new, empty analysis.  Returns 0 and the caller owns *out
 * (ploom_hb_free()), or -1 when out of memory (*out NULL). */
int ploom_hb_new(struct ploom_hb **out);

/* Frees the analysis and everything it holds; accepts NULL. */
void ploom_hb_free(struct ploom_hb *hb);

/* Starts a run of ntasks tasks and at most nevents events: no object
 * accessed yet, no event of any task.  The memory of earlier runs is
 * kept.  Returns 0, or -1 when out of memory (or when nevents * ntasks
 * clock entries cannot be counted); the analysis is then empty, to be
 * reset again or freed. */
int ploom_hb_reset(struct ploom_hb *hb, int ntasks, size_t nevents);

/* 1 if an operation of op in mode waits for its object to be free: a
 * blocking acquire or join.  A nonblocking or timed acquire runs whether
 * the lock is free or not, a timed join whether the thread has ended or
 * not: they wait for nothing, so their races are those of any read or
 * write (a timed join's, those of is_alive). */
int ploom_hb_waits(enum ploom_op op, enum ploom_acquire_mode mode);

/* Event j (j < nevents) of task q with accesses a[0..na): computes its
 * clock from q's latest event, the objects as the events so far left
 * them, and `after`, one more event it is ordered after (-1: none).
 * Call it first for each event, then ploom_hb_candidates() and
 * ploom_hb_step() if at all.  Returns 0, or -1 when out of memory. */
int ploom_hb_clock(struct ploom_hb *hb, long j, int q, const struct ploom_access *a, int na,
		   long after);

/* Event j, before its ploom_hb_clock(), ran when no other task could
 * (a step with event.h's `idle`: the first step after the clock jumped,
 * or a fair yield): it happens after every event before it, and has no
 * race candidate.  No schedule runs it before one of them: at it every
 * other task was blocked or yielding, so any earlier event was either
 * already run or could not run there; its enabledness depends on every
 * other task's steps, which this dependence says.  The events after it
 * keep their own order and races: what was blocked at it may have run
 * before earlier events in another schedule (docs/guarantees.rst).  Since
 * no race reverses the choice made at it, the reduction takes every task
 * enabled there as a branch of its own (search/dpor.c's new nodes). */
void ploom_hb_barrier(struct ploom_hb *hb, long j);

/* The race candidates of an event of task q with accesses a[0..na), as
 * the earlier events left the objects, waits (ploom_hb_waits(), or 1 for
 * an operation that was not enabled) if it waits for the object of a[0]:
 * the conflicting earlier events, but for those of q itself and those
 * that happen before q's latest event (ploom_hb_ordered()); still with
 * those ordered before another candidate (ploom_hb_maximal() drops them).
 * All of them, however many: *out points to them, in no particular
 * order, in an array owned by the analysis with room for one more, which
 * the caller may reorder, shorten or append that one to; valid until the
 * next ploom_hb_candidates(), ploom_hb_reset() or ploom_hb_free().
 * Returns how many; -1 when out of memory (*out NULL). */
int ploom_hb_candidates(struct ploom_hb *hb, long **out, int q,
			const struct ploom_access *a, int na, int waits);

/* Keeps, of the events c[0..n), those that happen before no other of
 * them, in their order; returns how many.  Takes time linear in n (and
 * quadratic in the tasks at most), using scratch memory of the
 * analysis. */
int ploom_hb_maximal(struct ploom_hb *hb, long *c, int n);

/* Then event j changes its objects, as an operation op of task q with
 * accesses a[0..na) (those of its ploom_hb_clock()), and becomes q's
 * latest event; exits when the task finished after it (a[na-1] is then
 * the end of its thread, as ploom_op_accesses() puts it).  Returns 0, or
 * -1 when out of memory. */
int ploom_hb_step(struct ploom_hb *hb, long j, int q, enum ploom_op op,
		  const struct ploom_access *a, int na, int exits);

/* The clock of event j: ntasks entries, owned by the analysis, valid
 * until its next ploom_hb_reset() or ploom_hb_clock() of event j. */
const int *ploom_hb_vc(const struct ploom_hb *hb, long j);

/* The task of event i, as ploom_hb_clock() was given it. */
int ploom_hb_task(const struct ploom_hb *hb, long i);

/* 1 if event i happens before the event whose clock is vc (an event is
 * before itself). */
int ploom_hb_before(const struct ploom_hb *hb, const int *vc, long i);

/* 1 if event i, one ploom_hb_step() took, is of task q or happens before
 * q's latest event: it comes before q's next event whatever that does,
 * so the two never race. */
int ploom_hb_ordered(const struct ploom_hb *hb, long i, int q);

/* The latest event of task q that ploom_hb_step() took, or -1. */
long ploom_hb_latest(const struct ploom_hb *hb, int q);

/* 1 if event i, one ploom_hb_step() took, found the object of its first
 * access free: a lock not held, a thread not running (what waits in
 * ploom_hb_candidates() looks for). */
int ploom_hb_was_free(const struct ploom_hb *hb, long i);

#endif
