/* session.h - one exploration of a scenario, as ploom-explore runs it.
 *
 * A session runs, on workers the caller's start() makes:
 *
 *   1. the scenario's failing schedules saved in the trace folder (saved.h),
 *      the newest first, until one fails again: a regression fails at
 *      once, and the search is then not run unless keep_going;
 *   2. the plan's search through the driver (search.h), started again
 *      from scratch, with more scheduling points, while a run finds plain
 *      state shared at access sites that were no points (refine);
 *   3. the choice of the failure reported: a saved schedule's, which came
 *      first, else the search's;
 *   4. its minimization (minimize.h) on a worker the search left idle.
 *
 *     struct ploom_session_opts opts = {.plan = &plan, .config = &config,
 *                                       .start = start, ...};
 *     struct ploom_session_result res = {0};
 *
 *     r = ploom_session_run(&res, &opts, &err);
 *     ...report res (stats.h makes its statistics)...
 *     ploom_session_result_release(&res);
 *
 * Like the driver it never prints: what a caller may say as it goes comes
 * through callbacks, all called with opts->ctx. */
#ifndef PLOOM_SESSION_H
#define PLOOM_SESSION_H

#include <signal.h>

#include "err.h"
#include "minimize.h"
#include "plan.h"
#include "search.h"
#include "trace.h"
#include "worker.h"

/* What the saved schedules did, one call each (saved_event). */
enum ploom_session_saved_kind {
	/* the folder could not be listed: why; no saved schedule runs */
	PLOOM_SESSION_SAVED_UNLISTED,
	/* the trace at path is not run: why (it cannot be read, or a replay's
	 * trust rules refuse it) */
	PLOOM_SESSION_SAVED_SKIPPED,
	/* the trace at path (saved) failed again (again), with departures
	 * from its order of tasks; again was saved at trace_path (NULL when
	 * it could not be: the result's save_err says why) */
	PLOOM_SESSION_SAVED_FAILED,
};

struct ploom_session_saved_event {
	enum ploom_session_saved_kind kind;
	const char *path;
	const char *why;                    /* unlisted, skipped */
	const struct ploom_trace *saved;    /* failed */
	const struct ploom_trace *again;    /* failed */
	int departures;                     /* failed */
	const char *trace_path;             /* failed */
};

/* When a search or a minimization starts and ends (phase). */
enum ploom_session_phase {
	PLOOM_SESSION_SEARCH_START,
	PLOOM_SESSION_SEARCH_END,       /* res->search is the search's */
	PLOOM_SESSION_MINIMIZE_START,
	/* whether it made a trace (res->minimized) or failed */
	PLOOM_SESSION_MINIMIZE_END,
};

struct ploom_session_result;

struct ploom_session_opts {
	/* The search's plan and the workers' config, checked and configured
	 * (plan.h).  A refinement changes them (a search that makes every
	 * access a point, or more plain points): at the end they tell the
	 * search that ran. */
	struct ploom_plan *plan;
	struct ploom_config *config;
	/* Starts a worker of the scenario with config (the session's, or one
	 * with a saved trace's points too).  Returns 0, or -1 with err
	 * filled. */
	int (*start)(void *ctx, struct ploom_worker **out, const struct ploom_config *config,
		     struct ploom_err *err);
	void *start_ctx;
	const char *hash_seed;          /* the workers' PYTHONHASHSEED */
	const char *trace_dir;          /* saved traces are read and written there */
	int keep_going;                 /* search.h's, and the search runs after a saved failure */
	int saved;                      /* 1: run the saved failing schedules first */
	int minimize;                   /* 1: minimize the failure reported */
	double minimize_seconds;        /* minimize.h's max_seconds */
	/* Optional, as search.h's: a flag a signal handler sets */
	const volatile sig_atomic_t *interrupted;
	/* Optional callbacks, each with ctx: the search's events (search.h),
	 * the saved schedules', the phases, and the minimizer's progress */
	ploom_search_event_fn event;
	void (*saved_event)(void *ctx, const struct ploom_session_saved_event *ev);
	void (*phase)(void *ctx, enum ploom_session_phase phase,
		      const struct ploom_session_result *res);
	ploom_minimize_progress_fn minimize_progress;
	void *ctx;
};

/* What a session did.  Everything is owned by the result and freed by
 * ploom_session_result_release(). */
struct ploom_session_result {
	/* the last search's (the one after the last refinement); when the
	 * failure reported is a saved schedule's (saved_failing), failure
	 * and failure_path are its */
	struct ploom_search_result search;
	/* how many times the search started again after refine, and the
	 * schedules the rounds before the last one ran */
	long refined;
	long refined_schedules;
	/* the saved failing schedules run before the search, and how many
	 * of them failed again (0 or 1: the first ends them) and are the
	 * failure reported; no schedules of the search */
	long saved_runs;
	long saved_failing;
	/* a saved schedule that failed again but is not the failure reported
	 * (a signal or a divergence came first), and its trace's path */
	struct ploom_trace *saved_failure;
	char *saved_path;
	/* the search stopped at an internal error: ploom_session_run()
	 * returned -1 with err of kind PLOOM_ERR_INTERNAL, and search and
	 * seen are what it found so far */
	int internal;
	/* what the workers said they instrumented (their hello): the
	 * instrument list and instrument_scenario only */
	struct ploom_config seen;
	/* the minimization: whether it made a trace, its result, whether the
	 * search's order made the failure the fewest by construction, and
	 * where the trace was saved (NULL: not minimized, or save_err) */
	int minimized;
	struct ploom_minimize_result minimize;
	int minimal;
	char *minimized_path;
	/* code 0, or why a trace (the failure's, or the minimized one)
	 * could not be saved: the session then ends as after a search with
	 * save_err, and the caller reports it after the statistics */
	struct ploom_err save_err;
};

/* Runs the session of opts into *out (zeroed before).  Returns 0 when it
 * is over: a pass, a failure, a limit, a setup mistake
 * (out->search.setup, not minimized) or interrupted (not minimized); 1
 * when a schedule diverged (the search's event said which; not
 * minimized); -1 with err filled when a worker fails, the search does
 * (out->internal for an internal error) or a refinement cannot be made
 * (PLOOM_ERR_INPUT: a shard cannot start again on its own).  The caller
 * releases *out in every case. */
int ploom_session_run(struct ploom_session_result *out, const struct ploom_session_opts *opts,
		      struct ploom_err *err);

void ploom_session_result_release(struct ploom_session_result *res);

#endif
