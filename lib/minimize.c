/* The minimizer: the fewest preemptions first; minimize.h documents it. */
#include "minimize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "search/dpor.h"
#include "search/ipb.h"
#include "json.h"
#include "replay.h"
#include "search.h"
#include "source.h"

int ploom_minimize_same_failure(const struct ploom_outcome *want,
				const struct ploom_outcome *got)
{
	if (want->kind != got->kind || !ploom_outcome_is_failure(want->kind))
		return 0;
	/* deadlock, timeout: which tasks wait, or how long, may differ in a
	 * shorter schedule and it is still the bug */
	if (want->kind == PLOOM_OUTCOME_DEADLOCK || want->kind == PLOOM_OUTCOME_TIMEOUT)
		return 1;
	/* failure, crash, exit: what a replay compares */
	return ploom_replay_same_outcome(want, got);
}

/* The schedules with fewer preemptions than the original, as a strategy
 * of the search driver (search.h): iterative preemption bounding (ipb.h),
 * or the bounded reduction (dpor.h) with the bounds 0, 1, ... in turn. */
struct fewer {
	struct ploom_strategy base;
	int use_dpor;
	int bound;              /* the bound of the DPOR under way */
	int last;               /* the highest bound searched */
	struct ploom_ipb *ipb;
	struct ploom_dpor *dpor;
	struct watch *watch;    /* the caller's */
};

/* The minimizer's view of its search, which the strategy and the driver's
 * events fill in as it goes (the driver owns the strategy, and frees it
 * when it ends). */
struct watch {
	const struct ploom_outcome *want;
	const struct ploom_minimize_opts *opts;
	long runs;              /* schedules run, the searches before this one's included */
	int bound;              /* of the schedule last sent: at most that many preemptions */
	int dropped;            /* ploom_ipb_dropped_level() after the last run; -1: none */
	char *diverged;         /* a divergence's summary */
};

static const int *fewer_prefix(const struct ploom_strategy *self, size_t *n)
{
	const struct fewer *f = (const struct fewer *)self;

	/* exactly that many without the reduction */
	f->watch->bound = f->use_dpor ? f->bound : ploom_ipb_level(f->ipb);
	return f->use_dpor ? ploom_dpor_prefix(f->dpor, n) : ploom_ipb_prefix(f->ipb, n);
}

/* The reduction goes on with the next bound when one is over. */
static int fewer_next(struct ploom_strategy *self, const struct ploom_run *run,
		      struct ploom_err *err)
{
	struct fewer *f = (struct fewer *)self;
	const struct ploom_minimize_opts *opts = f->watch->opts;
	int more;

	/* after every schedule, the one that fails as the original included */
	f->watch->runs++;
	if (opts && opts->progress)
		opts->progress(opts->progress_ctx, f->watch->runs, f->watch->bound);
	if (!f->use_dpor) {
		more = ploom_ipb_next(f->ipb, run, err);
		f->watch->dropped = ploom_ipb_dropped_level(f->ipb);
		return more;
	}
	more = ploom_dpor_next(f->dpor, run, err);
	if (more != 0 || f->bound >= f->last)
		return more;
	ploom_dpor_free(f->dpor);
	f->dpor = NULL;
	return ploom_dpor_new_bounded(&f->dpor, ++f->bound, err) < 0 ? -1 : 1;
}

static void fewer_free(struct ploom_strategy *self)
{
	struct fewer *f = (struct fewer *)self;

	ploom_ipb_free(f->ipb);
	ploom_dpor_free(f->dpor);
	free(f);
}

static const struct ploom_strategy_ops fewer_ops = {
	.name = "minimize",
	.prefix = fewer_prefix,
	.next = fewer_next,
	.free = fewer_free,
};

/* The strategy searching the schedules with at most last preemptions,
 * with the reduction or without (max_bytes: ploom_ipb_limit_bytes()'s). */
static int fewer_new(struct ploom_strategy **out, int last, int use_dpor, size_t max_bytes,
		     struct watch *watch, struct ploom_err *err)
{
	struct fewer *f = calloc(1, sizeof(*f));
	int r;

	*out = NULL;
	if (!f)
		return ploom_err_oom(err);
	f->base.ops = &fewer_ops;
	f->use_dpor = use_dpor;
	f->last = last;
	f->watch = watch;
	watch->dropped = -1;
	r = use_dpor ? ploom_dpor_new_bounded(&f->dpor, 0, err) : ploom_ipb_new(&f->ipb, last, err);
	if (r < 0) {
		free(f);
		return -1;
	}
	if (f->ipb)
		ploom_ipb_limit_bytes(f->ipb, max_bytes);
	*out = &f->base;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int same_as_original(void *ctx, const struct ploom_outcome *got)
{
	const struct watch *w = ctx;

	return ploom_minimize_same_failure(w->want, got);
}

static void on_event(void *ctx, const struct ploom_search_event *ev)
{
	struct watch *w = ctx;

	if (ev->kind == PLOOM_SEARCH_DIVERGENCE) {
		free(w->diverged);
		w->diverged = ploom_strdup(ev->outcome->summary ? ev->outcome->summary : "");
	}
}

/* The limits of one search from its options: the budget left of the
 * whole minimization, and the seconds left until its deadline (0: none).
 * Returns NULL, or the reason there is nothing left ("max-schedules",
 * "time"). */
static const char *limits(struct ploom_search_opts *so, long budget, long spent,
			  double deadline)
{
	if (spent >= budget)
		return "max-schedules";
	so->max_schedules = budget - spent;
	so->time_limit_s = 0;
	if (deadline > 0) {
		so->time_limit_s = deadline - now_s();
		if (so->time_limit_s <= 0)
			return "time";
	}
	return NULL;
}

int ploom_minimize_search(struct ploom_trace **out, struct ploom_minimize_result *res,
			  const struct ploom_run *original, struct ploom_worker *w,
			  const char *hash_seed, const struct ploom_config *config,
			  const struct ploom_minimize_opts *opts, struct ploom_err *err)
{
	struct ploom_run r = {0};
	struct ploom_search_result sres = {0};
	struct ploom_strategy *strategy = NULL;
	struct watch watch = {.want = &original->outcome, .opts = opts};
	struct ploom_search_opts so = {
		.workers = &w, .nworkers = 1, .hash_seed = hash_seed, .config = config,
		.wanted = same_as_original, .wanted_ctx = &watch,
		.event = on_event, .event_ctx = &watch,
	};
	long budget = opts && opts->max_schedules > 0 ? opts->max_schedules
						      : PLOOM_MINIMIZE_DEFAULT_BUDGET;
	double seconds = opts && opts->max_seconds ? opts->max_seconds
						   : PLOOM_MINIMIZE_DEFAULT_SECONDS;
	/* the clock starts with the search: the original's run counts */
	double deadline = seconds > 0 ? now_s() + seconds : 0;
	size_t max_bytes = opts && opts->max_work_bytes ? opts->max_work_bytes
							: PLOOM_MINIMIZE_MAX_WORK_BYTES;
	long timeout_ms;
	int reduce = opts && opts->reduce, ret = -1;

	*out = NULL;
	memset(res, 0, sizeof(*res));
	res->from = res->to = ploom_run_count_preemptions(original);
	if (!ploom_outcome_is_failure(original->outcome.kind))
		return ploom_err_set(err, PLOOM_ERR_INPUT, "the trace does not record a failure");
	if (ploom_timeout_ms(&timeout_ms, config->schedule_timeout_s) < 0)
		return ploom_err_set(err, PLOOM_ERR_INPUT, "invalid schedule timeout %g s",
				     config->schedule_timeout_s);
	if (opts && opts->reproduce_first) {
		/* else a trace whose failure is gone (or was never there) would
		 * come back unchanged, as if it were the shortest */
		if (ploom_worker_run(w, &r, original->choices, original->nchoices,
				     config->max_steps, timeout_ms, err) < 0)
			goto done;
		res->schedules++;
		if (!ploom_minimize_same_failure(&original->outcome, &r.outcome)) {
			ploom_err_set(err, PLOOM_ERR_DIVERGENCE,
				      "the recorded failure did not reproduce: recorded %s, got %s",
				      original->outcome.summary ? original->outcome.summary : "?",
				      r.outcome.summary ? r.outcome.summary : "?");
			goto done;
		}
	}
	ret = 0;
	if (res->from == 0)
		goto done;
	for (;;) {
		res->stopped_by = limits(&so, budget, res->schedules, deadline);
		if (res->stopped_by) {
			res->exhausted = 1;
			break;
		}
		ret = -1;
		if (fewer_new(&strategy, res->from - 1, reduce, max_bytes, &watch, err) < 0)
			goto done;
		watch.runs = res->schedules;
		ploom_search_result_release(&sres);
		ret = ploom_search_run(&sres, strategy, &so, err);
		strategy = NULL;
		res->schedules += sres.schedules;
		if (ret == 1) {
			ret = ploom_err_set(err, PLOOM_ERR_DIVERGENCE,
					    "a schedule did not follow its choices: %s",
					    watch.diverged ? watch.diverged : "");
			goto done;
		}
		if (ret < 0)
			goto done;
		if (sres.failure) {
			res->to = sres.failure->run.preemptions;
			/* a level below this one was searched in part */
			if (watch.dropped >= 0 && watch.dropped < watch.bound)
				res->stopped_by = "memory";
			*out = sres.failure;
			sres.failure = NULL;
			ret = 1;
			goto done;
		}
		if (!sres.stopped_by || strcmp(sres.stopped_by, "refine") || !reduce)
			break;
		/* plain state the reduction did not see as shared: its classes
		 * are wrong, and this worker cannot be given the points; the
		 * search without it needs none.  The run that asked counts. */
		res->schedules++;
		reduce = 0;
	}
	if (sres.stopped_by && !strcmp(sres.stopped_by, "setup")) {
		ret = ploom_err_set(err, PLOOM_ERR_INPUT,
				    "a schedule stopped at the scenario's setup: %s", sres.setup);
	} else if (sres.stopped_by && !res->stopped_by) {
		/* a budget ran out: wanted() lets nothing else stop the search,
		 * and a worker without the reduction never asks for points */
		res->exhausted = 1;
		res->stopped_by = !strcmp(sres.stopped_by, "time-limit") ? "time" : "max-schedules";
		if (strcmp(sres.stopped_by, "time-limit") && strcmp(sres.stopped_by, "max-schedules"))
			ret = ploom_err_set(err, PLOOM_ERR_INTERNAL,
					    "the minimizer's search stopped by %s", sres.stopped_by);
	} else if (!res->stopped_by && watch.dropped >= 0) {
		/* no schedule failed of those kept: the others may have */
		res->exhausted = 1;
		res->stopped_by = "memory";
	}
done:
	ploom_run_release(&r);
	ploom_search_result_release(&sres);
	ploom_strategy_free(strategy);
	free(watch.diverged);
	return ret;
}

/* A copy of original with its id. */
static int copy_original(struct ploom_trace **out, const struct ploom_trace *original,
			 struct ploom_err *err)
{
	if (ploom_trace_clone(out, original, err) < 0)
		return -1;
	if (ploom_trace_set_id(*out, err) < 0) {
		ploom_trace_free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* The minimized_from of a trace made from original by a search that
 * ended (none shorter found, or t is the shorter run). */
static int minimized_from(const struct ploom_trace *original,
			  const struct ploom_minimize_result *res)
{
	return original->minimized_from >= 0 ? original->minimized_from : res->from;
}

int ploom_minimize_known_minimal(struct ploom_trace **out, struct ploom_minimize_result *res,
				 const struct ploom_trace *original, struct ploom_err *err)
{
	*out = NULL;
	memset(res, 0, sizeof(*res));
	res->from = res->to = ploom_run_count_preemptions(&original->run);
	if (!ploom_outcome_is_failure(original->run.outcome.kind))
		return ploom_err_set(err, PLOOM_ERR_INPUT, "the trace does not record a failure");
	if (copy_original(out, original, err) < 0)
		return -1;
	if ((*out)->minimized_from < 0)
		(*out)->minimized_from = minimized_from(original, res);
	return 0;
}

int ploom_minimize_trace(struct ploom_trace **out, struct ploom_minimize_result *res,
			 const struct ploom_trace *original, struct ploom_worker *w,
			 const struct ploom_minimize_opts *opts, struct ploom_err *err)
{
	struct ploom_trace *t = NULL;
	/* shallow: its lists stay original's */
	struct ploom_config config = original->config;
	struct ploom_minimize_opts mopts = {0};
	char id[17];
	int r, ret = -1;

	*out = NULL;
	/* the trace is untrusted: the caller's limit holds whatever it says */
	if (opts && opts->schedule_timeout_s > 0)
		config.schedule_timeout_s = ploom_timeout_min(config.schedule_timeout_s,
							      opts->schedule_timeout_s);
	if (opts)
		mopts = *opts;
	/* a worker of a search with the reduction makes the scenario's shared
	 * state visible to it (config.h's instrumentation); another's does not,
	 * and the reduction would take its steps for independent */
	mopts.reduce = strcmp(ploom_config_kind(&original->config)->reduction,
			      PLOOM_SEARCH_UNSAID->reduction) != 0;
	r = ploom_minimize_search(&t, res, &original->run, w, original->hash_seed, &config,
				  &mopts, err);
	if (r < 0)
		goto done;
	if (r == 1) {
		/* the worker may have been given an absolute form of the
		 * target: keep the user's spelling */
		free(t->scenario.target);
		t->scenario.target = ploom_strdup(original->scenario.target);
		if (!t->scenario.target) {
			ploom_err_oom(err);
			goto done;
		}
		/* the search ran the source the original was recorded from
		 * (the caller checked it, or it is the same worker) */
		if (ploom_trace_copy_fingerprints(t, original, err) < 0)
			goto done;
		/* the original's id even if the run's own would differ: a
		 * shorter deadlock may wait on other locks, and its id comes
		 * from its summary */
		if (original->id)
			snprintf(id, sizeof(id), "%s", original->id);
		else if (ploom_trace_failure_id(id, original, err) < 0)
			goto done;
		t->id = strdup(id);
		if (!t->id) {
			ploom_err_oom(err);
			goto done;
		}
	} else if (copy_original(&t, original, err) < 0) {
		goto done;
	}
	if (!res->exhausted && t->minimized_from < 0)
		t->minimized_from = minimized_from(original, res);
	*out = t;
	t = NULL;
	ret = 0;
done:
	ploom_trace_free(t);
	return ret;
}
