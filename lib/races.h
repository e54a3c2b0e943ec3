/* races.h - the racing pairs of a trace, and the one its failure rests on.
 *
 * Overview
 * --------
 * Two steps of different tasks race when they conflict (ploom_conflicts()
 * of event.h: one object, and at least one of them writes it) and no
 * other step orders them in the happens-before order of hb.h, the one
 * the partial-order reduction (dpor.h) reverses races by.  So another
 * schedule could run the two in the other order, and a failure that rests
 * on their order is a race.
 *
 * As in the reduction, a step that waits for its object (a blocking
 * acquire, a blocking join) races with the last step on the object before
 * which it could have run, not with the release or the end of the thread
 * that let it run, which no schedule can reverse: so two critical sections
 * of one lock race as their acquires.  A thread's begin never races with
 * its start.  After a deadlock, each blocked operation (a wait of the
 * outcome) races as if it ran next: "lucas acquired lock_a before mathieu
 * could acquire it".
 *
 *     struct ploom_race *races = NULL;
 *     size_t n;
 *     ploom_trace_races(&races, &n, trace, &err);
 *     long key = ploom_races_key(trace, races, n);
 *     char *line = key >= 0 ? ploom_race_explain(trace, &races[key]) : NULL;
 *     ...
 *     free(line);
 *     free(races);
 *
 * Nothing here prints; ploom-show's text (render.h) and any other
 * rendering of a trace call these.  The trace is only read.
 */
#ifndef PLOOM_RACES_H
#define PLOOM_RACES_H

#include <stddef.h>

#include "err.h"
#include "event.h"
#include "labels.h"
#include "trace.h"

struct ploom_race {
	long first;             /* the index of the earlier step */
	/* the index of the later step; -1 when the later one is an operation
	 * that never ran, blocked at a deadlock: then wait is its index in
	 * the trace's outcome.waits (else -1) */
	long second;
	long wait;
	struct ploom_obj obj;   /* the object both touch */
};

/* The most a trace's analysis holds: its steps and waits times its tasks,
 * one clock entry each (4 bytes).  A larger trace has no races found. */
#define PLOOM_RACES_MAX_CLOCKS (16L << 20)

/* Finds the races of trace's run.  On success returns 0 and the caller
 * owns *out (free()), n races ordered by their first step, then by their
 * second (a wait's after every step, in the order of the waits); *out is
 * NULL when n is 0.  Returns -1 with err filled when out of memory, or
 * (kind PLOOM_ERR_INPUT) when the trace is larger than
 * PLOOM_RACES_MAX_CLOCKS allows; *out is then NULL and *n 0. */
int ploom_trace_races(struct ploom_race **out, size_t *n, const struct ploom_trace *trace,
		      struct ploom_err *err);

/* The index in races[0..n) of the race the failure rests on most
 * directly, or -1 when the outcome is not a failure or no race fits.
 * The rule:
 *   - a deadlock: among the races of a blocked operation (wait >= 0), the
 *     one whose first step is the latest (then the first such wait);
 *   - another failure: the races whose steps both come before or at the
 *     failing step (ploom_run_failing_step() of trace.h), on an object the failing
 *     step touches if any race is, else on any object; among them a lost
 *     update if there is one, a read of task A before a write of task B
 *     after which A writes the object too (A writes back what it read
 *     before B changed it); then the race whose later step is the latest,
 *     and of those the one whose earlier step is.
 * The explanation is then that race's ploom_race_explain(). */
long ploom_races_key(const struct ploom_trace *trace, const struct ploom_race *races,
		     size_t n);

/* One line of plain language for a race, as ploom-show prints it above
 * its table:
 *   lucas read balance (bank_account.py:20) before mathieu wrote it (bank_account.py:21)
 *   lucas acquired lock_a (transfer.py:8) before mathieu could acquire it (transfer.py:12)
 * Tasks and objects by ploom_run_display_name(), places by
 * ploom_short_name() and line, left out where a step has none.  Control
 * characters of the trace's strings are not replaced: the caller prints
 * the line as it prints the trace's strings.  Newly malloc'd (the caller
 * frees it), NULL when out of memory. */
char *ploom_race_explain(const struct ploom_trace *trace, const struct ploom_race *race);

/* ploom_race_explain() with the short names of sn (ploom_short_names_new()
 * of trace's run), which a rendering that explains many races builds
 * once: collecting them reads every step, so building them per race
 * would make the whole quadratic in the steps. */
char *ploom_race_explain_with(const struct ploom_trace *trace, const struct ploom_race *race,
			      const struct ploom_short_names *sn);

#endif
