/* search.h - the search driver: one loop for every strategy and any
 * number of workers.
 *
 * Overview
 * --------
 * A strategy decides which schedules to run (explore.h's depth-first
 * search is one), workers run them (worker.h), and the driver between
 * them keeps every worker busy, counts, applies the limits and saves the
 * first failing trace:
 *
 *     struct ploom_strategy *dfs = NULL;
 *     struct ploom_search_opts opts = {workers, nworkers, ...};
 *     struct ploom_search_result res;
 *
 *     ploom_explore_strategy_new(&dfs, max_preemptions, &err);
 *     r = ploom_search_run(&res, dfs, &opts, &err);    // takes dfs
 *     ...minimize res.failure on workers[res.idle_worker], print res...
 *     ploom_search_result_release(&res);
 *
 * One worker runs one schedule after another: the strategy's prefix is
 * sent, the run comes back, the strategy moves on.  With N workers each
 * runs a part of the search of its own: the first gets the strategy the
 * caller gave, and a worker that has none takes a part split from the
 * part of another (the one whose split is the shallowest), as long as
 * one has something to give.  For a strategy that splits into disjoint
 * parts (depth-first search does) N workers run exactly the schedules one
 * worker runs, in another order.
 *
 * The driver never prints: what the caller may want to say as the search
 * goes comes through one callback (struct ploom_search_event).
 *
 * Limits.  With max_schedules, exactly that many runs (sleep-blocked ones
 * and probes included) are sent and
 * the runs in flight are awaited; with a time limit, no schedule is sent
 * once it has passed, and the runs in flight are awaited too, so a limit
 * never discards a run that was started.  Either makes the search
 * incomplete when the strategies had schedules left, and always when the
 * strategy samples (struct ploom_strategy_ops' samples).  A failure
 * stops the search unless keep_going: the runs still in flight on other
 * workers are then discarded and those workers killed.  A schedule that
 * reaches the step limit is counted (res->step_limited) and leaves the
 * search incomplete; it stops a search that could otherwise be complete
 * as a failure does, since nothing after it can make that search a pass
 * and the schedules near a loop that never ends mostly loop too, each at
 * the cost of the limit; a sample goes on to its next schedule, since a
 * sample is never complete and the next one may find a failure.
 */
#ifndef PLOOM_SEARCH_H
#define PLOOM_SEARCH_H

#include <signal.h>
#include <stddef.h>

#include "err.h"
#include "estimate.h"
#include "policy.h"
#include "trace.h"
#include "worker.h"

/* ---- strategies ----
 *
 * A strategy is a struct whose first member is a struct ploom_strategy,
 * so that the driver reaches its functions through ops and the strategy
 * casts self back to its own struct.  The driver calls them from one
 * thread, and only in this order for each part: prefix() and sleep() for
 * the next schedule, then, once its run is back, next(); split() and
 * split_depth() may come at any time in between (a run in flight
 * included). */
struct ploom_strategy;

struct ploom_strategy_ops {
	/* In messages: "dfs". */
	const char *name;

	/* The choices the next schedule makes at its first *out_len branch
	 * points; the defaults after them.  Owned by the strategy, valid
	 * until its next next() or free(). */
	const int *(*prefix)(const struct ploom_strategy *self, size_t *out_len);

	/* The sleep set to send with the next schedule beside its prefix
	 * (event.h's `run` command), or NULL with *out_len 0 when there is
	 * none.  Owned as prefix()'s.  May be NULL: never any. */
	const int *(*sleep)(const struct ploom_strategy *self, size_t *out_len);

	/* Takes the run that followed the prefix (read during the call only)
	 * and moves on.  Returns 1 when there is a next schedule, 0 when this
	 * part of the search is complete (the driver then frees it), -1 with
	 * err filled: kind PLOOM_ERR_DIVERGENCE when the run did not make the
	 * choices of the prefix, else another kind (PLOOM_ERR_NOMEM). */
	int (*next)(struct ploom_strategy *self, const struct ploom_run *run,
		    struct ploom_err *err);

	/* Both or neither; NULL: the strategy cannot be split, and
	 * ploom_search_run() refuses more than one worker.
	 *
	 * split_depth() says how deep in the tree of schedules the part
	 * split() would give starts, or -1 when there is nothing to give:
	 * the driver splits the part with the smallest, usually the one with
	 * the most schedules.  split() moves part of self's remaining
	 * schedules into a new strategy with the same ops, disjoint from what
	 * self keeps, without changing self's prefix (its run may be in
	 * flight).  Returns 1 with *out set (the driver owns it), 0 with
	 * *out NULL when there is nothing to give, -1 with err filled. */
	long (*split_depth)(const struct ploom_strategy *self);
	int (*split)(struct ploom_strategy **out, struct ploom_strategy *self,
		     struct ploom_err *err);

	/* Frees the strategy. */
	void (*free)(struct ploom_strategy *self);

	/* The weight of the schedules this part has still to complete (the
	 * one under way included), as a share of the whole search's tree
	 * (estimate.h): 1 for a whole search before its first run, and
	 * what a part gives away by split() it no longer has.  May be NULL:
	 * the strategy cannot tell, and the search's estimate has a rate
	 * but no fraction or total. */
	double (*left)(const struct ploom_strategy *self);

	/* 1 when the next schedule is a probe, run only for the strategy to
	 * learn the tree: the driver neither counts it nor reports its
	 * outcome, a failure included (a shard's search, shard.h); else 0.
	 * Asked when its run is back, before next().  May be NULL: every
	 * schedule counts. */
	int (*probe)(const struct ploom_strategy *self);

	/* How the next schedule picks past its prefix (policy.h), sent in
	 * its `run` command; owned as prefix()'s.  May be NULL: the
	 * default. */
	const struct ploom_policy_spec *(*policy)(const struct ploom_strategy *self);

	/* 1: the strategy samples schedules (policy.h's random or pct)
	 * rather than searching a tree: the search is never complete.  It
	 * needs max_schedules or a time limit (ploom_search_run() refuses
	 * it otherwise), a part that ends has run its share of
	 * max_schedules, and a search whose parts all ended is stopped by
	 * that limit. */
	int samples;
};

struct ploom_strategy {
	const struct ploom_strategy_ops *ops;
};

/* Frees a strategy through its ops; accepts NULL. */
void ploom_strategy_free(struct ploom_strategy *s);

/* ---- the driver ---- */

/* At most this many workers at once: as many as one process runs
 * (worker.h). */
#define PLOOM_SEARCH_MAX_WORKERS PLOOM_WORKER_MAX

/* At most this many distinct outcomes are tallied (res->outcomes). */
#define PLOOM_SEARCH_MAX_OUTCOMES 1000

struct ploom_search_result;

/* The driver's state during ploom_search_run(), for ploom_search_estimate(). */
struct ploom_search;

enum ploom_search_event_kind {
	/* The first failing schedule: its trace was saved at path (NULL when
	 * it could not be, see save_err in the result, or with no trace_dir). */
	PLOOM_SEARCH_FAILURE,
	/* The first schedule that reached the step limit, when no failure
	 * came before it: its trace was saved at path (NULL when it could not
	 * be); the outcome's stacks say where each task was. */
	PLOOM_SEARCH_STEP_LIMIT,
	/* A schedule's outcome is a divergence: the search ends, and
	 * ploom_search_run() returns 1. */
	PLOOM_SEARCH_DIVERGENCE,
	/* Runs came back, or a second passed without any, and the search
	 * goes on: none once a failure or a limit is stopping it. */
	PLOOM_SEARCH_PROGRESS,
};

struct ploom_search_event {
	enum ploom_search_event_kind kind;
	/* The counts so far; res->schedules is also the number (from 1) of
	 * the schedule a failure, step-limit or divergence is about. */
	const struct ploom_search_result *res;
	const struct ploom_outcome *outcome; /* failure, step-limit, divergence */
	const struct ploom_run *run;    /* failure, step-limit: the trace's run */
	const char *path;               /* failure, step-limit */
	double elapsed_s;               /* since the search started */
	const struct ploom_search *search;
};

/* How far the search is at the time of ev, during any event's call:
 * its counts and rate, and the fraction done, the total and the ETA that
 * the strategy's left() gives (unknown when it has none).  Computed on
 * each call, from every part's current path: a caller that shows it
 * once a second pays for nothing more. */
void ploom_search_estimate(struct ploom_estimate *out, const struct ploom_search_event *ev);

/* Called by the driver as the search goes; everything the event points to
 * is valid during the call only. */
typedef void (*ploom_search_event_fn)(void *ctx, const struct ploom_search_event *ev);

struct ploom_search_opts {
	/* nworkers started workers of the scenario (1 to
	 * PLOOM_SEARCH_MAX_WORKERS), with no run in flight; borrowed: the
	 * caller frees them after ploom_search_run(). */
	struct ploom_worker *const *workers;
	int nworkers;
	const char *hash_seed;          /* the workers' PYTHONHASHSEED, for traces */
	/* max_steps and schedule_timeout_s of every schedule; recorded, with
	 * the rest, in the traces */
	const struct ploom_config *config;
	/* where traces are saved (ploom_trace_save()); NULL: nowhere, and a
	 * trace is the worker's record of the run only (ploom_worker_trace()),
	 * without fingerprints or id, for a caller that completes it itself
	 * (the minimizer) */
	const char *trace_dir;
	long max_schedules;             /* 0: no limit */
	double time_limit_s;            /* 0: no limit */
	int keep_going;                 /* 1: failures and step limits do not stop the search */
	/* Optional: the failures the search is after (the minimizer's: the
	 * same failure as a trace's).  A run whose outcome it returns 0 for
	 * counts as a schedule and nothing more, a failure or a step limit
	 * included: not failing, no trace, no event, no stop. */
	int (*wanted)(void *ctx, const struct ploom_outcome *outcome);
	void *wanted_ctx;
	int tally_outcomes;             /* 1: fill res->outcomes */
	/* Optional: a flag a signal handler sets.  Once it is set the
	 * driver stops as soon as it notices, kills the workers with a run
	 * in flight and returns 0 (install the handler without SA_RESTART,
	 * so that it interrupts the driver's waits). */
	const volatile sig_atomic_t *interrupted;
	ploom_search_event_fn event;    /* optional */
	void *event_ctx;
	/* Optional: called on each trace the driver makes, before it is
	 * saved, with annotate_ctx, to record what the caller knows of the
	 * search (ploom-explore --shard records the shard) */
	void (*annotate)(void *ctx, struct ploom_trace *trace);
	void *annotate_ctx;
};

/* How many schedules had one outcome, told apart by kind and summary. */
struct ploom_search_outcome {
	enum ploom_outcome_kind kind;
	char *summary;
	long schedules;
};

/* What a search did.  Everything is owned by the result and freed by
 * ploom_search_result_release(). */
struct ploom_search_result {
	long schedules;                 /* runs that came back, complete */
	/* runs that a partial-order reduction stopped half way, all enabled
	 * tasks asleep (outcome sleep-blocked): not schedules, the cost of
	 * the reduction */
	long sleep_blocked;
	long failing;
	/* schedules that reached the step limit: never a pass, so that a
	 * search with any is incomplete (stopped_by set) */
	long step_limited;
	long max_depth;                 /* the most steps of one schedule */
	/* NULL when the search is complete; else why it is not, a static
	 * string: "failure", "max-steps" (a schedule reached the step limit,
	 * even with keep_going), "max-schedules", "time-limit", "refine",
	 * "setup" or "internal-error" */
	const char *stopped_by;
	/* when stopped by "refine": the keys of the access sites of plain
	 * state that must be points (outcome refine, event.h), space-
	 * separated; the caller starts the search again with them */
	char *refine;
	double elapsed_s;               /* of the search, in seconds */
	/* how far it got, as ploom_search_estimate() tells it, with done set:
	 * fraction 1 when nothing was left, whatever stopped it */
	struct ploom_estimate estimate;
	/* the first failing schedule's trace, saved at failure_path; NULL
	 * when no schedule failed */
	struct ploom_trace *failure;
	char *failure_path;
	/* the path of the trace of the first schedule that reached the step
	 * limit, when it came before any failure; else NULL */
	char *limit_path;
	/* after an internal error of the strategy (stopped_by
	 * "internal-error", ploom_search_run() -1 with err of kind
	 * PLOOM_ERR_INTERNAL): the trace of the run it was taking, or NULL
	 * when it could not be saved */
	char *internal_path;
	/* when a schedule stopped at a setup mistake (stopped_by "setup",
	 * ploom_outcome_is_setup()): "TYPE: MESSAGE" of its exception.  No
	 * trace of it is saved */
	char *setup;
	/* code 0, or why the trace of the failure or step limit could not
	 * be saved ("cannot save the trace: ..."): its path is then NULL, and
	 * the search stopped there (stopped_by "failure" or "max-steps"), even
	 * with keep_going, so that the caller can still report the schedule
	 * and the counts before it reports the error */
	struct ploom_err save_err;
	/* with tally_outcomes: the distinct outcomes in the order they first
	 * came, the first PLOOM_SEARCH_MAX_OUTCOMES of them (outcomes_truncated
	 * is 1 when more came); their schedules add up to schedules when
	 * not truncated */
	struct ploom_search_outcome *outcomes;
	size_t noutcomes;
	int outcomes_truncated;
	/* the index in opts->workers of a worker with no run in flight, for
	 * what the caller runs next (the minimizer), or -1: set whenever
	 * ploom_search_run() returns 0 and was not interrupted.  The others
	 * may have been killed: the caller frees them. */
	int idle_worker;
};

/* Runs the search of strategy (which the driver owns from the call on,
 * and frees) on opts->workers as described above.  *out is overwritten
 * (not released) and filled in every case; the caller releases it with
 * ploom_search_result_release().  Returns 0 when the search is over:
 * complete, stopped by a failure or a limit (out->stopped_by), or
 * interrupted; 1 after the event PLOOM_SEARCH_DIVERGENCE; -1 with err
 * filled when a worker fails, a trace cannot be made (one that cannot be
 * saved is out->save_err instead, with 0), the strategy fails (kind
 * PLOOM_ERR_DIVERGENCE when a run did not follow its prefix), or the
 * options are not usable: more than one worker for a strategy that cannot
 * be split, or a strategy that samples without a limit (kind
 * PLOOM_ERR_INPUT). */
int ploom_search_run(struct ploom_search_result *out, struct ploom_strategy *strategy,
		     const struct ploom_search_opts *opts, struct ploom_err *err);

/* Frees what the result owns and zeroes it; safe on a zeroed result. */
void ploom_search_result_release(struct ploom_search_result *res);

#endif
