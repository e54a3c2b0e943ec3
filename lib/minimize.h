/* minimize.h - find the same failure with fewer preemptions.
 *
 * Overview
 * --------
 * A failing schedule found by depth-first search often switches tasks
 * more than the bug needs.  Given a failing run with P preemptions, the
 * minimizer runs the schedules with at most P-1 preemptions fewest first
 * and stops at the first whose outcome is the same failure
 * (ploom_minimize_same_failure()), so the run found has the fewest
 * preemptions of every schedule that fails that way; when none is found,
 * the original already had the fewest.  Two searches do that:
 *
 *   - iterative preemption bounding (ipb.h): every schedule with 0
 *     preemptions, then exactly 1, ..., each run once;
 *   - with opts->reduce, the bounded reduction (dpor.h) with the bounds
 *     0, 1, ..., P-1 in turn: each covers every schedule within its bound
 *     up to equivalence, and equivalent schedules fail alike, so the first
 *     bound with a schedule failing that way finds one, with at most that
 *     many preemptions and, the bounds below having none, exactly that
 *     many.  It runs far fewer schedules (three dining philosophers: 19
 *     against 140), but needs every access to shared state to be a step,
 *     as a worker of a search with the reduction makes it.  A run that
 *     asks for more points (outcome refine) starts the search again
 *     without it.
 *
 * The search is a strategy of the search driver (search.h) on one worker,
 * which stops at the first failure that is the same as the original's
 * (its wanted()): ploom_minimize_search() on a run, ploom_minimize_trace()
 * on a trace, for ploom-minimize and for ploom-explore with its running
 * worker.
 *
 * Budgets bound the schedules run and the seconds the search takes.
 * When one runs out before the search is over, the best run found so far
 * is the original (fewer preemptions come first and the first match ends
 * the search), and the result says so (exhausted, stopped_by).
 *
 * Memory: the search without the reduction keeps the work items of the
 * next level (ipb.h), and each run of a level adds one at every branch
 * point where it could preempt, as long as its place there: on a failing
 * run of 10,000 steps, hundreds of megabytes per schedule.  They are
 * limited (max_work_bytes), so that the memory is bounded by the runs'
 * length and not by the schedules run; past the limit the next levels
 * are searched in part: a run found may then not have the fewest
 * preemptions, and none found proves nothing (stopped_by "memory").
 */
#ifndef PLOOM_MINIMIZE_H
#define PLOOM_MINIMIZE_H

#include <stddef.h>

#include "err.h"
#include "trace.h"
#include "worker.h"

/* The default budgets of ploom-minimize and of ploom-explore's minimizer:
 * schedules, seconds, and bytes of the next level's work list (its
 * arrays grow by doubling, and two levels' lists are kept: at most four
 * times as much). */
#define PLOOM_MINIMIZE_DEFAULT_BUDGET 100000L
#define PLOOM_MINIMIZE_DEFAULT_SECONDS 60.0
#define PLOOM_MINIMIZE_MAX_WORK_BYTES ((size_t)64 << 20)

/* Called after every schedule with the schedules run so far and the
 * preemptions of the level searched (at most that many, with the
 * reduction), e.g. for progress lines. */
typedef void (*ploom_minimize_progress_fn)(void *ctx, long schedules, int bound);

struct ploom_minimize_opts {
	long max_schedules;     /* budget; <= 0: PLOOM_MINIMIZE_DEFAULT_BUDGET */
	ploom_minimize_progress_fn progress;    /* may be NULL */
	void *progress_ctx;
	/* 1: before searching, run the original's choices and require its
	 * failure, for a trace that comes from a file rather than from a
	 * search that has just run it (a failure that no longer happens has
	 * no minimized trace) */
	int reproduce_first;
	/* seconds per schedule at most, when shorter than the trace's
	 * schedule_timeout_s (ploom_timeout_min()); <= 0: the trace's */
	double schedule_timeout_s;
	/* 1: search with the bounded reduction (dpor.h), which needs every
	 * access to shared state to be a step; ploom_minimize_trace() sets it
	 * when the trace's search ran with the reduction */
	int reduce;
	/* seconds from the start of the search: no schedule starts after
	 * them; 0: PLOOM_MINIMIZE_DEFAULT_SECONDS, < 0: no limit */
	double max_seconds;
	/* ploom_ipb_limit_bytes(); 0: PLOOM_MINIMIZE_MAX_WORK_BYTES */
	size_t max_work_bytes;
};

struct ploom_minimize_result {
	long schedules;         /* schedules run by the search */
	int from;               /* preemptions of the original run */
	int to;                 /* preemptions of the result (from when none shorter) */
	int exhausted;          /* 1 if a budget ran out before the search ended */
	/* NULL: the search ended, and the result has the fewest preemptions;
	 * else why it may not: "max-schedules" or "time" (a budget ran out,
	 * exhausted), "memory" (the work lists were limited: exhausted when
	 * none was found) */
	const char *stopped_by;
};

/* 1 if got is the same failure as want, else 0: the same kind, and for a
 * failure the same exception type and message, for a crash the same
 * signal, for an exit the same status; any deadlock matches a deadlock
 * and any timeout a timeout.  Outcomes that are not failures (pass,
 * step-limit, divergence) never match. */
int ploom_minimize_same_failure(const struct ploom_outcome *want,
				const struct ploom_outcome *got);

/* Searches as described above for original's failure (original's
 * preemptions are counted from its steps) on the worker w, which must run
 * original's scenario, with config's max_steps and schedule timeout and
 * the workers' hash_seed.  Returns 1 when a run with fewer preemptions
 * fails the same way: *out is the worker's trace of it
 * (ploom_worker_trace(), made with hash_seed and config: no fingerprints,
 * no id), which the caller frees with ploom_trace_free(); 0 when there is
 * none or a budget ran out first (res->exhausted), *out NULL; -1 with err
 * filled and *out NULL when the worker failed, a schedule did not follow
 * its choices (kind PLOOM_ERR_DIVERGENCE), with reproduce_first the
 * original's choices did not fail the same way (kind
 * PLOOM_ERR_DIVERGENCE: "the recorded failure did not reproduce:
 * recorded SUMMARY, got SUMMARY"), or the original is not a failure
 * (PLOOM_ERR_INPUT).  The run of reproduce_first counts among the
 * schedules and the budget.  *res is filled in every case.  opts may be NULL. */
int ploom_minimize_search(struct ploom_trace **out, struct ploom_minimize_result *res,
			  const struct ploom_run *original, struct ploom_worker *w,
			  const char *hash_seed, const struct ploom_config *config,
			  const struct ploom_minimize_opts *opts, struct ploom_err *err);

/* Minimizes a trace with a running worker, which must run original's
 * scenario with original's hash seed.  Schedules run with original's
 * max_steps and schedule timeout, or opts' when shorter.  On success
 * returns 0 and the caller owns *out (ploom_trace_free()):
 *   - a shorter run found: a trace of it made with the worker's hello and
 *     original's target, hash seed, configuration (with the schedule
 *     timeout it ran under) and fingerprints, with
 *     original's id, and minimized_from = original's minimized_from if
 *     set, else its preemptions;
 *   - none shorter: a copy of original with the same minimized_from;
 *   - a budget ran out, or none was found in a search the memory limit
 *     left in part (res->exhausted): an unchanged copy of original.
 * On error returns -1 with err filled and *out NULL. */
int ploom_minimize_trace(struct ploom_trace **out, struct ploom_minimize_result *res,
			 const struct ploom_trace *original, struct ploom_worker *w,
			 const struct ploom_minimize_opts *opts, struct ploom_err *err);

/* What ploom_minimize_trace() makes when no schedule with fewer
 * preemptions fails as original does, without searching for one: a copy
 * of original with minimized_from set (as above), and *res with no
 * schedule run and from = to = original's preemptions.  For a failure
 * that a search running the schedules by increasing preemptions
 * (ipb.h) found first: every schedule with fewer preemptions passed.  On
 * success returns 0 and the caller owns *out (ploom_trace_free()); on
 * error returns -1 with err filled (PLOOM_ERR_INPUT when original is not
 * a failure) and *out NULL. */
int ploom_minimize_known_minimal(struct ploom_trace **out, struct ploom_minimize_result *res,
				 const struct ploom_trace *original, struct ploom_err *err);

#endif
