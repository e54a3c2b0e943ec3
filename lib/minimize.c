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

/* One search over the schedules with fewer preemptions than the
 * original: iterative preemption bounding (ipb.h) or the bounded
 * reduction (dpor.h) with the bounds 0, 1, ... in turn. */
struct search {
	int use_dpor;
	int bound;              /* the bound of the DPOR under way */
	int last;               /* the highest bound searched */
	struct ploom_ipb *ipb;
	struct ploom_dpor *dpor;
	size_t max_bytes;       /* ploom_ipb_limit_bytes()'s */
};

static void search_free(struct search *s)
{
	ploom_ipb_free(s->ipb);
	ploom_dpor_free(s->dpor);
	s->ipb = NULL;
	s->dpor = NULL;
}

/* Starts the search over (from bound 0), with the reduction or without. */
static int search_start(struct search *s, int use_dpor, struct ploom_err *err)
{
	search_free(s);
	s->use_dpor = use_dpor;
	s->bound = 0;
	if (use_dpor)
		return ploom_dpor_new_bounded(&s->dpor, 0, err);
	if (ploom_ipb_new(&s->ipb, s->last, err) < 0)
		return -1;
	ploom_ipb_limit_bytes(s->ipb, s->max_bytes);
	return 0;
}

/* ploom_ipb_dropped_level()'s, -1 with the reduction. */
static int search_dropped(const struct search *s)
{
	return s->ipb ? ploom_ipb_dropped_level(s->ipb) : -1;
}

static const int *search_prefix(const struct search *s, size_t *n)
{
	return s->use_dpor ? ploom_dpor_prefix(s->dpor, n) : ploom_ipb_prefix(s->ipb, n);
}

/* The bound of the next schedule: at most that many preemptions (exactly,
 * without the reduction). */
static int search_bound(const struct search *s)
{
	return s->use_dpor ? s->bound : ploom_ipb_level(s->ipb);
}

/* Takes a run; 1 when there is a next schedule, 0 when the search is
 * over, -1 with err filled.  The reduction goes on with the next bound
 * when one is over. */
static int search_next(struct search *s, const struct ploom_run *run, struct ploom_err *err)
{
	int more;

	if (!s->use_dpor)
		return ploom_ipb_next(s->ipb, run, err);
	more = ploom_dpor_next(s->dpor, run, err);
	if (more != 0)
		return more;
	if (s->bound >= s->last)
		return 0;
	ploom_dpor_free(s->dpor);
	s->dpor = NULL;
	return ploom_dpor_new_bounded(&s->dpor, ++s->bound, err) < 0 ? -1 : 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Why the search must stop before the next schedule, or NULL. */
static const char *budget_spent(const struct ploom_minimize_result *res, long max_schedules,
				double deadline)
{
	if (res->schedules >= max_schedules)
		return "max-schedules";
	if (deadline > 0 && now_s() >= deadline)
		return "time";
	return NULL;
}

int ploom_minimize_search(struct ploom_run *out, struct ploom_minimize_result *res,
			  const struct ploom_run *original,
			  const struct ploom_minimize_opts *opts, ploom_minimize_run_fn run,
			  void *ctx, struct ploom_err *err)
{
	struct search s = {0};
	struct ploom_run r = {0};
	long budget = opts && opts->max_schedules > 0 ? opts->max_schedules
						      : PLOOM_MINIMIZE_DEFAULT_BUDGET;
	double seconds = opts && opts->max_seconds ? opts->max_seconds
						   : PLOOM_MINIMIZE_DEFAULT_SECONDS;
	/* the clock starts with the search: the original's run counts */
	double deadline = seconds > 0 ? now_s() + seconds : 0;
	size_t max_bytes = opts && opts->max_work_bytes ? opts->max_work_bytes
							: PLOOM_MINIMIZE_MAX_WORK_BYTES;
	const char *why;
	const int *prefix;
	size_t n;
	int bound, more, ret = -1;

	memset(res, 0, sizeof(*res));
	res->from = res->to = ploom_run_count_preemptions(original);
	if (!ploom_outcome_is_failure(original->outcome.kind))
		return ploom_err_set(err, PLOOM_ERR_INPUT, "the trace does not record a failure");
	if (opts && opts->reproduce_first) {
		/* else a trace whose failure is gone (or was never there) would
		 * come back unchanged, as if it were the shortest */
		if (run(ctx, &r, original->choices, original->nchoices, err) < 0)
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
	ret = -1;
	s.last = res->from - 1;
	s.max_bytes = max_bytes;
	if (search_start(&s, opts && opts->reduce, err) < 0)
		goto done;
	do {
		why = budget_spent(res, budget, deadline);
		if (why) {
			res->exhausted = 1;
			res->stopped_by = why;
			ret = 0;
			goto done;
		}
		prefix = search_prefix(&s, &n);
		bound = search_bound(&s);
		ploom_run_release(&r);
		if (run(ctx, &r, prefix, n, err) < 0)
			goto done;
		res->schedules++;
		if (opts && opts->progress)
			opts->progress(opts->progress_ctx, res->schedules, bound);
		if (r.outcome.kind == PLOOM_OUTCOME_DIVERGENCE) {
			ploom_err_set(err, PLOOM_ERR_DIVERGENCE,
				      "a schedule did not follow its choices: %s",
				      r.outcome.summary ? r.outcome.summary : "");
			goto done;
		}
		if (ploom_minimize_same_failure(&original->outcome, &r.outcome)) {
			res->to = r.preemptions;
			/* a level below this one was searched in part */
			if (search_dropped(&s) >= 0 && search_dropped(&s) < bound)
				res->stopped_by = "memory";
			ploom_run_move(out, &r);
			ret = 1;
			goto done;
		}
		if (s.use_dpor && r.outcome.kind == PLOOM_OUTCOME_REFINE) {
			/* plain state the reduction did not see as shared: its
			 * classes are wrong, and this worker cannot be given the
			 * points; the search without it needs none */
			if (search_start(&s, 0, err) < 0)
				goto done;
			more = 1;
			continue;
		}
		more = search_next(&s, &r, err);
		if (more < 0)
			goto done;
	} while (more);
	/* no schedule failed of those kept: the others may have */
	if (search_dropped(&s) >= 0) {
		res->exhausted = 1;
		res->stopped_by = "memory";
	}
	ret = 0;
done:
	ploom_run_release(&r);
	search_free(&s);
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

struct worker_ctx {
	struct ploom_worker *w;
	long max_steps;
	long timeout_ms;
};

static int run_on_worker(void *ctx, struct ploom_run *out, const int *choices, size_t n,
			 struct ploom_err *err)
{
	struct worker_ctx *c = ctx;

	return ploom_worker_run(c->w, out, choices, n, c->max_steps, c->timeout_ms, err);
}

int ploom_minimize_trace(struct ploom_trace **out, struct ploom_minimize_result *res,
			 const struct ploom_trace *original, struct ploom_worker *w,
			 const struct ploom_minimize_opts *opts, struct ploom_err *err)
{
	struct ploom_trace *t = NULL;
	struct ploom_run found = {0};
	/* shallow: its lists stay original's */
	struct ploom_config config = original->config;
	struct worker_ctx ctx;
	struct ploom_minimize_opts mopts = {0};
	char id[17];
	int r, ret = -1;

	*out = NULL;
	ctx.w = w;
	ctx.max_steps = original->config.max_steps;
	/* the trace is untrusted: the caller's limit holds whatever it says */
	if (opts && opts->schedule_timeout_s > 0)
		config.schedule_timeout_s = ploom_timeout_min(config.schedule_timeout_s,
							      opts->schedule_timeout_s);
	if (ploom_timeout_ms(&ctx.timeout_ms, config.schedule_timeout_s) < 0) {
		ploom_err_set(err, PLOOM_ERR_INPUT, "invalid schedule timeout %g s",
			      config.schedule_timeout_s);
		goto done;
	}
	if (opts)
		mopts = *opts;
	/* a worker of a search with the reduction makes the scenario's shared
	 * state visible to it (config.h's instrumentation); another's does not,
	 * and the reduction would take its steps for independent */
	mopts.reduce = strcmp(ploom_config_kind(&original->config)->reduction,
			      PLOOM_SEARCH_UNSAID->reduction) != 0;
	r = ploom_minimize_search(&found, res, &original->run, &mopts, run_on_worker, &ctx, err);
	if (r < 0)
		goto done;
	if (r == 1) {
		if (ploom_worker_trace(&t, w, original->hash_seed, &config, &found, err) < 0)
			goto done;
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
	ploom_run_release(&found);
	ploom_trace_free(t);
	return ret;
}
