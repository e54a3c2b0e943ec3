/* One exploration of a scenario; session.h documents it. */
#include "session.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "replay.h"
#include "saved.h"
#include "shard.h"
#include "source.h"

/* The state of one ploom_session_run(). */
struct session {
	const struct ploom_session_opts *o;
	struct ploom_session_result *res;
	struct ploom_worker *workers[PLOOM_SEARCH_MAX_WORKERS];
	/* the worker of its own a saved failure ran on, for the minimizer,
	 * and its config (own_config set), or NULL: it ran on the search's */
	struct ploom_worker *saved_worker;
	struct ploom_config saved_config;
	int own_config;
	struct ploom_err saved_save_err;    /* why the saved failure's trace was not saved */
	/* a signal came during the saved schedules: their failure, if any,
	 * is not reported, and counts beside the search's (saved_failure) */
	int cut;
};

static int interrupted(const struct session *s)
{
	return s->o->interrupted && *s->o->interrupted;
}

static void saved_event(struct session *s, const struct ploom_session_saved_event *ev)
{
	if (s->o->saved_event)
		s->o->saved_event(s->o->ctx, ev);
}

static void phase(struct session *s, enum ploom_session_phase p)
{
	if (s->o->phase)
		s->o->phase(s->o->ctx, p, s->res);
}

static void free_workers(struct session *s)
{
	int i;

	for (i = 0; i < PLOOM_SEARCH_MAX_WORKERS; i++) {
		ploom_worker_free(s->workers[i]);
		s->workers[i] = NULL;
	}
}

/* Copies what hello says was instrumented into seen.  Returns 0, or -1
 * with err filled. */
static int copy_seen(struct ploom_config *seen, const struct ploom_hello *hello,
		     struct ploom_err *err)
{
	const struct ploom_config said = {
		.instrument = hello->instrumented,
		.ninstrument = hello->ninstrumented,
		.instrument_scenario = hello->scenario_instrumented,
	};

	return ploom_config_copy_modules(seen, &said, err);
}

/* ---- the saved failing schedules ---- */

/* Fills *own with the config of a worker of a saved trace's own: the
 * search's, and as points the plain access sites that trace's search had
 * found too.  A search that finds its points as it goes has none of them
 * before its first schedule, and without them a saved schedule could not
 * run its order of tasks; the search's own workers keep their points, and
 * so its counts.  The caller releases *own with ploom_config_release_lists()
 * whatever this returns.  Returns 0, or -1 with err filled
 * (PLOOM_ERR_INPUT: the trace's keys are no keys). */
static int own_config_init(struct ploom_config *own, const struct ploom_trace *trace,
			   const struct session *s, struct ploom_err *err)
{
	*own = *s->o->config;
	if (ploom_config_own_lists(own, s->o->config, err) < 0 ||
	    ploom_config_add_plain_point_list(own, (const char *const *)trace->config.plain_points,
					      trace->config.nplain_points, err) < 0)
		return -1;
	return 0;
}

/* The follow of a saved trace (ploom_replay_follow_in_search()) on the
 * search's worker, or on one of its own (*own, config *own_config, set
 * with *has_own) when the trace's search found points at plain state or
 * a run asks for more: each such run adds its sites and starts the own
 * worker again, as the search does, until the run needs none.  Returns
 * as ploom_replay_follow_in_search(), never 1. */
static int follow_saved(struct ploom_trace **out, const struct ploom_trace *t,
			struct ploom_worker *worker, struct ploom_worker **own,
			struct ploom_config *own_config, int *has_own, const struct session *s,
			int *departures, struct ploom_err *err)
{
	const struct ploom_session_opts *o = s->o;
	char *refine = NULL;
	int r, n;

	if (t->config.nplain_points) {
		*has_own = 1;
		if (own_config_init(own_config, t, s, err) < 0 ||
		    o->start(o->start_ctx, own, own_config, err) < 0)
			return -1;
	}
	for (;;) {
		r = ploom_replay_follow_in_search(out, t, *own ? *own : worker,
						  *own ? own_config : o->config, o->hash_seed,
						  departures, &refine, err);
		if (r <= 0)
			return r;
		if (!*has_own) {
			*has_own = 1;
			if (own_config_init(own_config, t, s, err) < 0)
				break;
		}
		/* each round adds a site, so the rounds end */
		n = ploom_config_add_plain_points(own_config, refine, strlen(refine), err);
		if (n <= 0) {
			if (n == 0)
				ploom_err_set(err, PLOOM_ERR_WORKER,
					      "the worker asked again for points it has: %s", refine);
			break;
		}
		free(refine);
		refine = NULL;
		ploom_worker_free(*own);
		*own = NULL;
		if (o->start(o->start_ctx, own, own_config, err) < 0)
			return -1;
	}
	free(refine);
	return -1;
}

/* The saved trace at path is not run, for the reason why: an event, and
 * 0; or, when why is out of memory, which ends the run as a search's
 * would, -1 with *err that. */
static int skip_saved(struct session *s, const char *path, const struct ploom_err *why,
		      struct ploom_err *err)
{
	const struct ploom_session_saved_event ev = {
		.kind = PLOOM_SESSION_SAVED_SKIPPED, .path = path, .why = why->msg,
	};

	if (why->kind == PLOOM_ERR_NOMEM) {
		*err = *why;
		return -1;
	}
	saved_event(s, &ev);
	return 0;
}

/* 1 when the trace and the worker name different scenario files. */
static int other_file(const struct ploom_trace *t, const struct ploom_hello *hello)
{
	return t->scenario.file && hello->file && strcmp(t->scenario.file, hello->file);
}

/* 1 when run has more preemptions than bound (< 0: none). */
static int beyond(const struct ploom_run *run, int bound)
{
	return bound >= 0 && ploom_run_count_preemptions(run) > bound;
}

/* The saved trace t at path failed again as *again, which the session
 * takes: its trace saved as the search's would be, the event, and the
 * own worker and config it ran on kept for the minimizer.  Returns 0, or
 * -1 with err filled. */
static int saved_failed(struct session *s, const char *path, const struct ploom_trace *t,
			struct ploom_trace **again, int departures, struct ploom_worker **own,
			struct ploom_config *own_config, int *has_own, struct ploom_err *err)
{
	struct ploom_session_result *res = s->res;
	struct ploom_session_saved_event ev = {
		.kind = PLOOM_SESSION_SAVED_FAILED, .path = path, .saved = t,
		.departures = departures,
	};
	struct ploom_err why = {0, ""};

	if (ploom_trace_fingerprint_source(*again, err) < 0 || ploom_trace_set_id(*again, err) < 0)
		return -1;
	if (ploom_trace_save(&res->saved_path, *again, s->o->trace_dir, "original", &why) < 0)
		ploom_err_set(&s->saved_save_err, why.kind ? why.kind : PLOOM_ERR_SYSTEM,
			      "cannot save the trace: %s", why.msg);
	ev.again = *again;
	ev.trace_path = res->saved_path;
	saved_event(s, &ev);
	res->saved_failure = *again;
	*again = NULL;
	/* the minimizer runs it again, on a worker with its points */
	s->saved_worker = *own;
	*own = NULL;
	if (*has_own) {
		s->saved_config = *own_config;
		s->own_config = 1;
		*has_own = 0;
	}
	return 0;
}

/* Reads the saved trace at path into *t for the worker of hello.
 * Returns 1 to run it, 0 to go on to the next (skipped, with an event or
 * quietly), -1 with err filled. */
static int saved_to_run(struct ploom_trace **t, struct session *s, const char *path,
			const struct ploom_hello *hello, int bound, struct ploom_err *err)
{
	struct ploom_err why = {0, ""};

	if (ploom_trace_read_file(t, path, &why) < 0)
		return skip_saved(s, path, &why, err);
	/* a bounded search answers for its bound: a schedule with more
	 * preemptions is not its to report */
	if (!ploom_saved_of_scenario(*t, hello) || beyond(&(*t)->run, bound))
		return 0;
	/* a trace saved in another clone: its files here, if it may run
	 * here at all; then it must be this very scenario's file */
	if (other_file(*t, hello)) {
		if (ploom_replay_place(*t, &why) < 0)
			return skip_saved(s, path, &why, err);
		if (other_file(*t, hello))
			return 0;
	}
	return 1;
}

/* Runs the scenario's failing schedules saved in the trace folder on
 * worker, the newest first, each followed leniently on the current source
 * with the search's config, until one fails again (saved_failed()).
 * Those with more preemptions than the search's bound (-p, or pct's
 * depth less 1) are not run, and a run that takes more is no failure.  A
 * trace that cannot be read, or that the trust rules of a replay refuse,
 * is skipped with an event; one of another scenario quietly.  Returns 0,
 * or -1 with err filled when the worker fails (the run then fails as a
 * search's would). */
static int run_saved(struct session *s, struct ploom_worker *worker, struct ploom_err *err)
{
	const struct ploom_session_opts *o = s->o;
	const struct ploom_hello *hello = ploom_worker_hello(worker);
	struct ploom_saved_list list = {0};
	struct ploom_trace *t = NULL, *again = NULL;
	struct ploom_worker *own = NULL;
	struct ploom_config own_config = {0};
	struct ploom_err why = {0, ""};
	size_t i;
	int bound = o->config->max_preemptions, departures = 0, ret = -1, has_own = 0, r;

	/* pct's depth d bounds its schedules to d - 1 preemptions */
	if (o->plan->kind->flags & PLOOM_KIND_PCT_DEPTH)
		bound = o->config->pct_depth - 1;

	if (ploom_saved_list(&list, o->trace_dir, PLOOM_SAVED_MAX_LISTED, &why) < 0) {
		const struct ploom_session_saved_event ev = {
			.kind = PLOOM_SESSION_SAVED_UNLISTED, .why = why.msg,
		};

		if (why.kind == PLOOM_ERR_NOMEM) {
			*err = why;
			goto done;
		}
		saved_event(s, &ev);
	}
	for (i = 0; i < list.n && s->res->saved_runs < PLOOM_SAVED_MAX_RUN && !interrupted(s);
	     i++) {
		ploom_trace_free(t);
		t = NULL;
		r = saved_to_run(&t, s, list.paths[i], hello, bound, err);
		if (r < 0)
			goto done;
		if (!r)
			continue;
		ploom_worker_free(own);
		own = NULL;
		if (has_own)
			ploom_config_release_lists(&own_config);
		has_own = 0;
		why.kind = 0;
		if (follow_saved(&again, t, worker, &own, &own_config, &has_own, s, &departures,
				 &why) < 0) {
			/* the trace's fault (another Python, say), not the worker's */
			if (why.kind != PLOOM_ERR_INPUT && why.kind != PLOOM_ERR_DIVERGENCE) {
				*err = why;
				goto done;
			}
			skip_saved(s, list.paths[i], &why, err);
			continue;
		}
		s->res->saved_runs++;
		/* a setup mistake is the search's to report, without a trace */
		if (!ploom_outcome_is_failure(again->run.outcome.kind) ||
		    ploom_outcome_is_setup(&again->run.outcome) || beyond(&again->run, bound)) {
			ploom_trace_free(again);
			again = NULL;
			continue;
		}
		if (saved_failed(s, list.paths[i], t, &again, departures, &own, &own_config,
				 &has_own, err) < 0)
			goto done;
		break;
	}
	ret = 0;
done:
	ploom_worker_free(own);
	if (has_own)
		ploom_config_release_lists(&own_config);
	ploom_trace_free(t);
	ploom_trace_free(again);
	ploom_saved_list_release(&list);
	return ret;
}

/* ---- the search, and its refinement ---- */

/* One search of the plan on the session's workers, as ploom_search_run(). */
static int run_search(struct session *s, struct ploom_err *err)
{
	const struct ploom_session_opts *o = s->o;
	struct ploom_search_opts sopts = {
		.workers = s->workers,
		.nworkers = o->plan->jobs,
		.hash_seed = o->hash_seed,
		.config = o->config,
		.trace_dir = o->trace_dir,
		.max_schedules = o->plan->max_schedules,
		.time_limit_s = o->plan->time_limit_s,
		.keep_going = o->keep_going,
		.tally_outcomes = o->keep_going,
		.interrupted = o->interrupted,
		.event = o->event,
		.event_ctx = o->ctx,
		.annotate = o->plan->shard_count ? ploom_shard_annotate : NULL,
		.annotate_ctx = &o->plan->shard,
	};
	struct ploom_strategy *strategy = NULL;
	int r;

	if (ploom_plan_strategy_new(&strategy, o->plan, err) < 0)
		return -1;
	phase(s, PLOOM_SESSION_SEARCH_START);
	r = ploom_search_run(&s->res->search, strategy, &sopts, err);
	phase(s, PLOOM_SESSION_SEARCH_END);
	return r;
}

/* The search found plain state shared at the access sites res->refine,
 * which were no points: the default search turns to the reduction, which
 * makes every access a point; else those sites become points.  Returns 0,
 * or -1 with err filled. */
static int refine(struct session *s, struct ploom_err *err)
{
	const struct ploom_session_opts *o = s->o;
	const char *sites = s->res->search.refine;

	/* the shards of one search must make the same points, or their
	 * parts would not add up to one search */
	if (o->plan->shard_count)
		return ploom_err_set(err, PLOOM_ERR_INPUT,
				     "plain state that tasks share is touched at access sites "
				     "that were no scheduling points (%.300s), and a shard cannot "
				     "start the search again on its own: run every shard with "
				     "--reduction=dpor, which makes every access a point, or run "
				     "the search without --shard",
				     sites);
	if (ploom_plan_default_on_shared_plain_state(o->plan)) {
		ploom_plan_configure(o->plan, o->config);
		return 0;
	}
	if (ploom_config_add_plain_points(o->config, sites, strlen(sites), err) <= 0) {
		if (err->kind == 0)
			ploom_err_set(err, PLOOM_ERR_WORKER,
				      "the worker asked again for points it has: %s", sites);
		return -1;
	}
	return 0;
}

/* The search stopped at an internal error: what the first worker said it
 * instrumented (every worker loads the same scenario with the same
 * options) goes with what it found; the internal error stays the error
 * reported, even when that copy fails.  Returns -1. */
static int internal_error(struct session *s)
{
	struct ploom_err why = {0, ""};

	s->res->internal = 1;
	if (s->workers[0])
		copy_seen(&s->res->seen, ploom_worker_hello(s->workers[0]), &why);
	return -1;
}

/* The saved failures first, once, then the search, started again on new
 * workers as long as a run asks for more points: what it ran so far had
 * too few points to count.  Each round adds a site, so the rounds end.
 * Returns as ploom_session_run(). */
static int search_rounds(struct session *s, struct ploom_err *err)
{
	const struct ploom_session_opts *o = s->o;
	struct ploom_session_result *res = s->res;
	int i, r, saved_tried = 0;

	for (;;) {
		for (i = 0; i < o->plan->jobs; i++)
			if (o->start(o->start_ctx, &s->workers[i], o->config, err) < 0)
				return -1;
		/* the saved failures first, once: a regression fails at once.
		 * Of a search's shards only shard 0 runs them, so that
		 * ploom-merge counts each once */
		if (o->saved && !saved_tried && !(o->plan->shard_count && o->plan->shard_index)) {
			saved_tried = 1;
			if (run_saved(s, s->workers[0], err) < 0)
				return -1;
			if (interrupted(s)) {
				s->cut = 1;
				return 0;
			}
			/* the search is not run: what it would find first is
			 * no news until this failure is fixed */
			if (res->saved_failure && !o->keep_going) {
				res->search.stopped_by = "failure";
				res->search.idle_worker = 0;
				if (o->plan->shard_count) {
					o->plan->shard.units = -1;
					o->plan->shard.failure_unit = -1;
				}
				return 0;
			}
		}
		r = run_search(s, err);
		if (r < 0 && err->kind == PLOOM_ERR_INTERNAL)
			return internal_error(s);
		if (r != 0 || !res->search.refine || interrupted(s))
			return r;
		if (refine(s, err) < 0)
			return -1;
		res->refined_schedules += res->search.schedules;
		res->refined++;
		free_workers(s);
		ploom_search_result_release(&res->search);
	}
}

/* ---- the failure reported, and its minimization ---- */

/* The failure reported is the saved schedule's, which came first; with
 * keep_going the search's failures still count in failing. */
static void report_saved(struct session *s)
{
	struct ploom_session_result *res = s->res;

	ploom_trace_free(res->search.failure);
	free(res->search.failure_path);
	res->search.failure = res->saved_failure;
	res->search.failure_path = res->saved_path;
	res->saved_failure = NULL;
	res->saved_path = NULL;
	res->saved_failing = 1;
	if (!res->search.save_err.kind)
		res->search.save_err = s->saved_save_err;
}

/* Minimizes the failure reported on worker and saves the result.
 * Returns 0, or -1 with err filled; a trace that cannot be saved is no
 * failure of the run: it fills res->save_err. */
static int minimize(struct session *s, struct ploom_worker *worker, struct ploom_err *err)
{
	const struct ploom_session_opts *o = s->o;
	struct ploom_session_result *res = s->res;
	struct ploom_minimize_opts mopts = {
		.max_seconds = o->minimize_seconds,
		.progress = o->minimize_progress,
		.progress_ctx = o->ctx,
	};
	struct ploom_trace *min = NULL;
	int r;

	/* a saved schedule's failure came before the search's order; else
	 * the search ran every schedule with fewer preemptions, and the
	 * minimizer would run them again to find none */
	res->minimal = (o->plan->kind->flags & PLOOM_KIND_MINIMAL) && !res->saved_failing;
	phase(s, PLOOM_SESSION_MINIMIZE_START);
	if (res->minimal)
		r = ploom_minimize_known_minimal(&min, &res->minimize, res->search.failure, err);
	else
		r = ploom_minimize_trace(&min, &res->minimize, res->search.failure, worker, &mopts,
					 err);
	res->minimized = r == 0;
	if (r == 0 && ploom_trace_save(&res->minimized_path, min, o->trace_dir, "minimized",
				       err) < 0)
		ploom_err_set(&res->save_err, err->kind, "cannot save the minimized trace: %s",
			      err->msg);
	phase(s, PLOOM_SESSION_MINIMIZE_END);
	ploom_trace_free(min);
	return r;
}

/* After the search: minimizes the failure reported on the idle worker,
 * or on the saved failure's own (the others go first), then stops it.
 * Returns 0, or -1 with err filled. */
static int finish(struct session *s, struct ploom_err *err)
{
	struct ploom_session_result *res = s->res;
	struct ploom_worker *worker;
	int r = -1;

	if (res->saved_failing && s->saved_worker) {
		worker = s->saved_worker;
		s->saved_worker = NULL;
	} else {
		worker = s->workers[res->search.idle_worker];
		s->workers[res->search.idle_worker] = NULL;
	}
	free_workers(s);
	/* a trace that cannot be saved ends the run after the statistics,
	 * which still tell what the search found; minimizing would only fail
	 * to save too.  After the search, so that its statistics measure the
	 * search only */
	res->save_err = res->search.save_err;
	if (res->search.failure && s->o->minimize && !res->save_err.kind &&
	    minimize(s, worker, err) < 0)
		goto done;
	if (worker && copy_seen(&res->seen, ploom_worker_hello(worker), err) < 0)
		goto done;
	r = ploom_worker_stop(worker, err);
	worker = NULL;
done:
	ploom_worker_free(worker);
	return r;
}

int ploom_session_run(struct ploom_session_result *out, const struct ploom_session_opts *opts,
		      struct ploom_err *err)
{
	struct session s = {.o = opts, .res = out};
	int r;

	memset(out, 0, sizeof(*out));
	r = search_rounds(&s, err);
	if (out->saved_failure && r == 0 && !s.cut)
		report_saved(&s);
	if (r == 0 && !out->search.setup && !interrupted(&s))
		r = finish(&s, err);
	free_workers(&s);
	ploom_worker_free(s.saved_worker);
	if (s.own_config)
		ploom_config_release_lists(&s.saved_config);
	return r;
}

void ploom_session_result_release(struct ploom_session_result *res)
{
	ploom_search_result_release(&res->search);
	ploom_trace_free(res->saved_failure);
	free(res->saved_path);
	ploom_config_release_lists(&res->seen);
	free(res->minimized_path);
	memset(res, 0, sizeof(*res));
}
