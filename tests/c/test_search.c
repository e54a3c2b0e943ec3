/* Tests of lib/search, the search driver, over real worker processes that
 * run no Python: each is this program again, the stand-in of simworker.h,
 * started by ploom_worker_start().  So the driver's processes, pipes and
 * polls are the real ones, and REFERENCE.md's counts must come out for
 * any number of workers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/event.h"
#include "../../lib/search/explore.h"
#include "../../lib/json.h"
#include "../../lib/search/sample.h"
#include "../../lib/search.h"
#include "../../lib/shard.h"
#include "../../lib/trace.h"
#include "../../lib/worker.h"
#include "check.h"
#include "fake.h"
#include "sim.h"
#include "simworker.h"

/* ---- a strategy of the tests: schedule i has the prefix [i] ---- */

struct count {
	struct ploom_strategy base;
	int i, n;               /* schedule i of n */
	int sleep[1];
};

static const int *count_prefix(const struct ploom_strategy *self, size_t *out_len)
{
	*out_len = 1;
	return &((const struct count *)self)->i;
}

static const int *count_sleep(const struct ploom_strategy *self, size_t *out_len)
{
	*out_len = 1;
	return ((const struct count *)self)->sleep;
}

static int count_next(struct ploom_strategy *self, const struct ploom_run *run,
		      struct ploom_err *err)
{
	struct count *c = (struct count *)self;

	(void)run;
	(void)err;
	return ++c->i < c->n;
}

static void count_free(struct ploom_strategy *self)
{
	free(self);
}

static const struct ploom_strategy_ops count_ops = {
	"count", count_prefix, NULL, count_next, NULL, NULL, count_free, NULL, NULL, NULL, 0,
};
static const struct ploom_strategy_ops count_sleep_ops = {
	"count", count_prefix, count_sleep, count_next, NULL, NULL, count_free, NULL, NULL, NULL, 0,
};

/* As count_next(), but the third run trips an internal error. */
static int count_next_trips(struct ploom_strategy *self, const struct ploom_run *run,
			    struct ploom_err *err)
{
	struct count *c = (struct count *)self;

	if (c->i == 2)
		return ploom_err_set(err, PLOOM_ERR_INTERNAL, "run %d contradicts the search", c->i);
	return count_next(self, run, err);
}

static const struct ploom_strategy_ops count_trips_ops = {
	"count", count_prefix, NULL, count_next_trips, NULL, NULL, count_free, NULL, NULL, NULL, 0,
};

/* n schedules, one after another (n < 0: without end). */
static struct ploom_strategy *count_new(int n, const struct ploom_strategy_ops *ops)
{
	struct count *c = calloc(1, sizeof(*c));

	if (!c)
		abort();
	c->base.ops = ops;
	c->n = n < 0 ? 1 << 30 : n;
	c->sleep[0] = 7;
	return &c->base;
}

/* ---- the tests ---- */

static const char *self;
static char *dir;

/* What the events said, and a flag the progress event may raise. */
struct events {
	int failures, step_limits, divergences, progress;
	long failure_schedule, last_progress;
	int progress_went_back;
	/* the estimates of the progress events: known ones, those out of
	 * [0, 1) or below the one before (by more than rounding), or not of
	 * the event's counts */
	int estimates, estimate_bad;
	double last_fraction;
	char path[4096];
	long interrupt_at;              /* raise the flag at this many schedules */
	volatile sig_atomic_t flag;
};

static void on_event(void *ctx, const struct ploom_search_event *ev)
{
	struct events *e = ctx;
	struct ploom_estimate est;

	switch (ev->kind) {
	case PLOOM_SEARCH_FAILURE:
		e->failures++;
		e->failure_schedule = ev->res->schedules;
		snprintf(e->path, sizeof(e->path), "%s", ev->path ? ev->path : "");
		CHECK(ev->outcome && ploom_outcome_is_failure(ev->outcome->kind));
		break;
	case PLOOM_SEARCH_STEP_LIMIT:
		e->step_limits++;
		snprintf(e->path, sizeof(e->path), "%s", ev->path ? ev->path : "");
		CHECK(ev->outcome && ev->outcome->kind == PLOOM_OUTCOME_STEP_LIMIT);
		break;
	case PLOOM_SEARCH_DIVERGENCE:
		e->divergences++;
		CHECK_STR(ev->outcome->summary, "divergence: task 9 is not enabled");
		break;
	case PLOOM_SEARCH_PROGRESS:
		ploom_search_estimate(&est, ev);
		if (est.schedules != ev->res->schedules || est.failing != ev->res->failing ||
		    est.done)
			e->estimate_bad = 1;
		if (est.fraction != -1) {
			e->estimates++;
			/* work is left: never 1 */
			if (est.fraction < 0 || est.fraction >= 1 ||
			    est.fraction < e->last_fraction - 1e-12)
				e->estimate_bad = 1;
			if (est.total != -1 && est.total < (double)est.schedules)
				e->estimate_bad = 1;
			e->last_fraction = est.fraction;
		}
		e->progress++;
		if (ev->res->schedules < e->last_progress)
			e->progress_went_back = 1;
		e->last_progress = ev->res->schedules;
		if (e->interrupt_at && ev->res->schedules >= e->interrupt_at)
			e->flag = 1;
		break;
	}
}

/* A search as ploom-explore runs it, unless a test changes it. */
struct setup {
	const char *target;
	int nworkers;
	struct ploom_config config;
	struct ploom_search_opts opts;
	struct events ev;
	struct ploom_worker *w[PLOOM_SEARCH_MAX_WORKERS];
};

/* setup_init() of a search whose config instruments the modules of the
 * static list instrument (n of them), and the scenario when scenario is
 * set: the workers are started with them, as ploom-explore starts its. */
static void setup_init_instrumented(struct setup *t, const char *target, int nworkers,
				    const char *const *instrument, size_t n, int scenario)
{
	struct ploom_worker_opts wopts = {.python = self, .target = target, .hash_seed = "0",
					  .instrument = instrument, .ninstrument = n,
					  .instrument_scenario = scenario};
	struct ploom_err err = {0, ""};
	int i;

	memset(t, 0, sizeof(*t));
	t->target = target;
	t->nworkers = nworkers;
	/* the config only lends the lists: nothing frees them */
	t->config = (struct ploom_config){.max_preemptions = -1, .kind = NULL,
					  .max_steps = 10000, .schedule_timeout_s = 10.0,
					  .instrument = (char **)instrument, .ninstrument = n,
					  .instrument_scenario = scenario};
	for (i = 0; i < nworkers; i++)
		if (ploom_worker_start(&t->w[i], &wopts, &err) < 0) {
			printf("cannot start the stand-in worker: %s\n", err.msg);
			abort();
		}
	t->opts = (struct ploom_search_opts){
		.workers = t->w,
		.nworkers = nworkers,
		.hash_seed = "0",
		.config = &t->config,
		.trace_dir = dir,
		.event = on_event,
		.event_ctx = &t->ev,
	};
}

/* A search as ploom-explore runs it, instrumenting nothing. */
static void setup_init(struct setup *t, const char *target, int nworkers)
{
	setup_init_instrumented(t, target, nworkers, NULL, 0, 0);
}

/* Stops the idle workers cleanly, frees the others. */
static void setup_release(struct setup *t)
{
	struct ploom_err err = {0, ""};
	int i;

	CHECK_INT(t->ev.progress_went_back, 0);
	CHECK_INT(t->ev.estimate_bad, 0);
	for (i = 0; i < t->nworkers; i++) {
		if (ploom_worker_busy(t->w[i]))
			ploom_worker_free(t->w[i]);
		else
			CHECK_INT(ploom_worker_stop(t->w[i], &err), 0);
	}
}

/* Runs a depth-first search (bound: max_preemptions) on the setup. */
static int search_dfs(struct ploom_search_result *res, struct setup *t, int bound,
		      struct ploom_err *err)
{
	struct ploom_strategy *dfs = NULL;

	if (ploom_explore_strategy_new(&dfs, bound, err) < 0)
		abort();
	t->ev.last_progress = 0;
	t->ev.last_fraction = 0;
	return ploom_search_run(res, dfs, &t->opts, err);
}

static long sum_outcomes(const struct ploom_search_result *res, int failures_only)
{
	long sum = 0;
	size_t i;

	for (i = 0; i < res->noutcomes; i++)
		if (!failures_only || ploom_outcome_is_failure(res->outcomes[i].kind))
			sum += res->outcomes[i].schedules;
	return sum;
}

static void counts_match_reference_for_any_number_of_workers(void)
{
	static const int nworkers[] = {1, 2, 4};
	size_t i, j;
	int b;

	for (j = 0; j < sizeof(nworkers) / sizeof(nworkers[0]); j++) {
		for (i = 0; i < sim_nscenarios; i++) {
			const struct sim_scenario *sc = &sim_scenarios[i];
			struct setup t;

			setup_init(&t, sc->name, nworkers[j]);
			t.opts.keep_going = 1;
			t.opts.tally_outcomes = 1;
			for (b = 0; b < 4; b++) {
				struct ploom_search_result res;
				struct ploom_err err = {0, ""};

				/* counter3 without a bound is too long for a unit test */
				if (sc->want[b][0] > 5000)
					continue;
				CHECK_INT(search_dfs(&res, &t, b - 1, &err), 0);
				if (!CHECK_INT(res.schedules, sc->want[b][0]) ||
				    !CHECK_INT(res.failing, sc->want[b][1]))
					printf("  (%s, max_preemptions %d, %d workers: %s)\n", sc->name,
					       b - 1, nworkers[j], err.msg);
				CHECK_STR(res.stopped_by, NULL);
				/* all of it, and the estimate is the count */
				if (!CHECK(res.estimate.fraction == 1) ||
				    !CHECK(res.estimate.total == (double)res.schedules) ||
				    !CHECK(res.estimate.eta_s == 0 && res.estimate.done))
					printf("  (%s, max_preemptions %d, %d workers)\n", sc->name,
					       b - 1, nworkers[j]);
				CHECK_INT(sum_outcomes(&res, 0), res.schedules);
				CHECK_INT(sum_outcomes(&res, 1), res.failing);
				CHECK(res.idle_worker >= 0 && res.idle_worker < nworkers[j]);
				CHECK((res.failure != NULL) == (res.failing > 0));
				ploom_search_result_release(&res);
			}
			setup_release(&t);
		}
	}
}

static void outcomes_are_tallied_in_order_of_first_occurrence(void)
{
	struct ploom_search_result res;
	struct ploom_err err = {0, ""};
	struct setup t;
	int n;

	for (n = 1; n <= 3; n += 2) {
		setup_init(&t, "bank without the lock", n);
		t.opts.keep_going = 1;
		t.opts.tally_outcomes = 1;
		CHECK_INT(search_dfs(&res, &t, -1, &err), 0);
		CHECK_INT(res.schedules, 221);
		if (CHECK_INT(res.noutcomes, 2)) {
			/* the first schedule, default choices everywhere, passes */
			CHECK_INT(res.outcomes[0].kind, PLOOM_OUTCOME_PASS);
			CHECK_STR(res.outcomes[0].summary, "pass");
			CHECK_INT(res.outcomes[0].schedules, 146);
			CHECK_INT(res.outcomes[1].kind, PLOOM_OUTCOME_FAILURE);
			CHECK_STR(res.outcomes[1].summary,
				  "builtins.AssertionError: the account is overdrawn");
			CHECK_INT(res.outcomes[1].schedules, 75);
		}
		CHECK_INT(res.outcomes_truncated, 0);
		/* one failure event and one trace, however many schedules fail */
		CHECK_INT(t.ev.failures, 1);
		ploom_search_result_release(&res);
		setup_release(&t);
	}
	/* not asked for: none */
	setup_init(&t, "bank without the lock", 1);
	t.opts.keep_going = 1;
	CHECK_INT(search_dfs(&res, &t, -1, &err), 0);
	CHECK_INT(res.failing, 75);
	CHECK(res.outcomes == NULL && res.noutcomes == 0);
	ploom_search_result_release(&res);
	setup_release(&t);
}

static void outcomes_past_the_cap_are_counted_as_truncated(void)
{
	struct ploom_search_result res;
	struct ploom_err err = {0, ""};
	struct setup t;

	setup_init(&t, "numbered", 1);
	t.opts.keep_going = 1;
	t.opts.tally_outcomes = 1;
	CHECK_INT(ploom_search_run(&res, count_new(PLOOM_SEARCH_MAX_OUTCOMES + 5, &count_ops),
				   &t.opts, &err), 0);
	CHECK_INT(res.schedules, PLOOM_SEARCH_MAX_OUTCOMES + 5);
	CHECK_INT(res.failing, PLOOM_SEARCH_MAX_OUTCOMES + 5);
	CHECK_INT(res.noutcomes, PLOOM_SEARCH_MAX_OUTCOMES);
	CHECK_INT(res.outcomes_truncated, 1);
	CHECK_INT(sum_outcomes(&res, 0), PLOOM_SEARCH_MAX_OUTCOMES);
	CHECK_STR(res.outcomes[0].summary, "builtins.AssertionError: run 0");
	CHECK_STR(res.outcomes[PLOOM_SEARCH_MAX_OUTCOMES - 1].summary,
		  "builtins.AssertionError: run 999");
	ploom_search_result_release(&res);
	setup_release(&t);
}

/* The schedules depth-first search runs up to and with the first one
 * that fails. */
static long schedules_to_first_failure(const struct sim_scenario *sc)
{
	struct ploom_explore *ex = NULL;
	struct ploom_run run;
	const int *prefix;
	size_t n;
	long schedules = 0;
	int failed;

	if (ploom_explore_new(&ex, -1, NULL) < 0)
		abort();
	do {
		prefix = ploom_explore_prefix(ex, &n);
		sim_run(&run, sc, prefix, n);
		schedules++;
		failed = ploom_outcome_is_failure(run.outcome.kind);
		ploom_explore_next(ex, &run, NULL);
		ploom_run_release(&run);
	} while (!failed);
	ploom_explore_free(ex);
	return schedules;
}

static void the_first_failure_stops_the_search_and_is_saved(void)
{
	const struct sim_scenario *sc = sim_find("bank without the lock");
	struct ploom_search_result res;
	struct ploom_err err = {0, ""};
	struct ploom_trace *saved = NULL;
	struct ploom_run run = {0};
	struct setup t;
	int n;

	for (n = 1; n <= 3; n += 2) {
		setup_init(&t, sc->name, n);
		CHECK_INT(search_dfs(&res, &t, -1, &err), 0);
		CHECK_STR(res.stopped_by, "failure");
		CHECK_INT(res.failing, 1);
		/* one worker: exactly the schedules of depth-first search */
		if (n == 1)
			CHECK_INT(res.schedules, schedules_to_first_failure(sc));
		/* the failing run is the last one taken */
		CHECK_INT(t.ev.failures, 1);
		CHECK_INT(t.ev.failure_schedule, res.schedules);
		CHECK(res.failure != NULL && res.failure_path != NULL);
		CHECK_STR(t.ev.path, res.failure_path);
		CHECK(!strncmp(res.failure_path, dir, strlen(dir)));
		if (res.failure_path &&
		    CHECK_INT(ploom_trace_read_file(&saved, res.failure_path, &err), 0)) {
			CHECK_STR(saved->run.outcome.summary, res.failure->run.outcome.summary);
			CHECK_STR(saved->id, res.failure->id);
			CHECK_STR(saved->scenario.qualname, sc->name);
		}
		ploom_trace_free(saved);
		saved = NULL;
		CHECK(res.limit_path == NULL);
		/* the idle worker runs what comes next; the others were killed */
		if (CHECK(res.idle_worker >= 0)) {
			struct ploom_worker *w = t.w[res.idle_worker];
			CHECK(!ploom_worker_busy(w));
			CHECK_INT(ploom_worker_run(w, &run, NULL, 0, 0, 0, &err), 0);
			CHECK_INT(run.outcome.kind, PLOOM_OUTCOME_PASS);
			ploom_run_release(&run);
		}
		ploom_search_result_release(&res);
		setup_release(&t);
	}
}

static int fails(const struct ploom_run *run, int arg)
{
	(void)arg;
	return ploom_outcome_is_failure(run->outcome.kind);
}

/* The workers get the config's modules to instrument, and the trace of
 * the failure records them, so that its replay instruments the same. */
static void a_saved_trace_records_what_the_search_instrumented(void)
{
	static const char *const instrument[] = {"mylib.pool", "other"};
	const struct sim_scenario *sc = sim_find("bank without the lock");
	struct ploom_search_result res;
	struct ploom_err err = {0, ""};
	struct ploom_trace *saved = NULL;
	struct setup t;

	setup_init_instrumented(&t, sc->name, 2, instrument, 2, 1);
	CHECK_INT(search_dfs(&res, &t, -1, &err), 0);
	CHECK_INT(res.failing, 1);
	if (CHECK(res.failure_path != NULL) &&
	    CHECK_INT(ploom_trace_read_file(&saved, res.failure_path, &err), 0) &&
	    CHECK_INT(saved->config.ninstrument, 2)) {
		CHECK_STR(saved->config.instrument[0], "mylib.pool");
		CHECK_STR(saved->config.instrument[1], "other");
		CHECK_INT(saved->config.instrument_scenario, 1);
	}
	ploom_trace_free(saved);
	ploom_search_result_release(&res);
	setup_release(&t);
}

/* The stand-in takes the worker's command line it knows and nothing
 * else: another one exits at once, and the start fails as a real worker
 * that exits does. */
static void the_stand_in_refuses_a_command_line_it_does_not_know(void)
{
	static const char *const patch[] = {"mylib.pool"};
	struct ploom_worker_opts wopts = {.python = self, .target = "bank with the lock",
					  .hash_seed = "0", .patch = patch, .npatch = 1};
	struct ploom_worker *w = NULL;
	struct ploom_err err = {0, ""};

	CHECK_INT(ploom_worker_start(&w, &wopts, &err), -1);
	CHECK(w == NULL);
	CHECK_STR(err.msg, "the worker died before it loaded the scenario (exit status 2)");
}

/* N shards through the driver, each on its own workers as ploom-explore
 * --shard runs them: their counts add up to the whole search's, a failing
 * probe neither counts nor stops a shard, and the first failure by unit is
 * the whole search's first, its trace marked with the shard. */
static void shards_add_up_to_the_whole_search(void)
{
	const struct sim_scenario *sc = sim_find("bank without the lock");
	struct ploom_trace *saved = NULL;
	struct ploom_err err = {0, ""};
	struct ploom_run first = {0};
	long schedules, failing, best_unit;
	int keep_going, n, k, count = 3, best = -1;
	char best_choices[512] = "", want[512] = "";
	size_t i;

	for (keep_going = 0; keep_going <= 1; keep_going++) {
		for (n = 1; n <= 2; n++) {
			schedules = failing = 0;
			best_unit = -1;
			for (k = 0; k < count; k++) {
				struct ploom_strategy *s = NULL;
				struct ploom_search_result res;
				struct ploom_shard shard;
				struct setup t;

				setup_init(&t, sc->name, n);
				t.opts.keep_going = keep_going;
				ploom_shard_init(&shard, k, count);
				t.opts.annotate = ploom_shard_annotate;
				t.opts.annotate_ctx = &shard;
				if (ploom_explore_strategy_new_shard(&s, -1, &shard, &err) < 0)
					abort();
				CHECK_INT(ploom_search_run(&res, s, &t.opts, &err), 0);
				schedules += res.schedules;
				failing += res.failing;
				/* a probe's failure is another shard's: none stops this one
				 * unless it owns it */
				CHECK((res.failure != NULL) == (shard.failure_unit >= 0));
				CHECK(keep_going ? res.stopped_by == NULL
						 : (res.stopped_by == NULL) == (res.failure == NULL));
				if (res.failure && CHECK(res.failure_path != NULL) &&
				    CHECK_INT(ploom_trace_read_file(&saved, res.failure_path, &err), 0)) {
					CHECK_INT(saved->shard.index, k);
					CHECK_INT(saved->shard.count, count);
					CHECK_INT(saved->shard.depth, shard.depth);
					CHECK_INT(saved->shard.unit, shard.failure_unit);
					CHECK_INT(saved->shard.unit % count, k);
					if (best_unit < 0 || shard.failure_unit < best_unit) {
						best_unit = shard.failure_unit;
						best = k;
						best_choices[0] = '\0';
						for (i = 0; i < saved->run.nchoices && i < 100; i++)
							snprintf(best_choices + strlen(best_choices), 5, "%d,",
								 saved->run.choices[i]);
					}
					ploom_trace_free(saved);
					saved = NULL;
				}
				ploom_search_result_release(&res);
				setup_release(&t);
			}
			if (keep_going) {
				CHECK_INT(schedules, 221);
				CHECK_INT(failing, 75);
			}
			CHECK(best >= 0);
			/* on one worker, the whole search's first failure */
			if (n == 1 && CHECK_INT(sim_first(&first, sc, fails, 0), 0)) {
				want[0] = '\0';
				for (i = 0; i < first.nchoices && i < 100; i++)
					snprintf(want + strlen(want), 5, "%d,", first.choices[i]);
				CHECK_STR(best_choices, want);
				ploom_run_release(&first);
			}
		}
	}
}

static void max_schedules_runs_exactly_that_many(void)
{
	struct ploom_search_result res;
	struct ploom_err err = {0, ""};
	struct setup t;
	int n;

	for (n = 1; n <= 3; n += 2) {
		setup_init(&t, "bank with the lock", n);
		t.opts.max_schedules = 5;
		CHECK_INT(search_dfs(&res, &t, -1, &err), 0);
		CHECK_INT(res.schedules, 5);
		CHECK_STR(res.stopped_by, "max-schedules");
		/* part of the tree done, too few schedules to tell its size */
		CHECK(res.estimate.fraction > 0 && res.estimate.fraction < 1);
		CHECK(res.estimate.total == -1 && res.estimate.done);
		CHECK_INT(res.estimate.schedules, 5);
		ploom_search_result_release(&res);
		/* the whole search within the limit is complete */
		t.opts.max_schedules = 127;
		CHECK_INT(search_dfs(&res, &t, -1, &err), 0);
		CHECK_INT(res.schedules, 127);
		CHECK_STR(res.stopped_by, NULL);
		ploom_search_result_release(&res);
		setup_release(&t);
	}
}

static void the_step_limit_saves_one_trace_and_leaves_the_search_incomplete(void)
{
	struct ploom_search_result res;
	struct ploom_err err = {0, ""};
	struct ploom_trace *saved = NULL;
	struct setup t;
	int keep_going;

	for (keep_going = 0; keep_going <= 1; keep_going++) {
		setup_init(&t, "bank with the lock", 2);
		t.config.max_steps = 5;
		t.opts.keep_going = keep_going;
		t.opts.tally_outcomes = 1;
		CHECK_INT(search_dfs(&res, &t, -1, &err), 0);
		CHECK_STR(res.stopped_by, "max-steps");
		if (!keep_going)
			CHECK_INT(res.schedules, 1);
		else
			CHECK(res.schedules > 1);
		CHECK_INT(res.failing, 0);
		/* "bank with the lock" takes more than 5 steps in every schedule */
		CHECK_INT(res.step_limited, res.schedules);
		CHECK_INT(t.ev.step_limits, 1);
		CHECK(res.failure == NULL && res.failure_path == NULL);
		CHECK(res.limit_path != NULL);
		CHECK_STR(t.ev.path, res.limit_path);
		if (res.limit_path &&
		    CHECK_INT(ploom_trace_read_file(&saved, res.limit_path, &err), 0)) {
			CHECK_INT(saved->run.nsteps, 5);
			CHECK_INT(saved->run.outcome.kind, PLOOM_OUTCOME_STEP_LIMIT);
		}
		ploom_trace_free(saved);
		saved = NULL;
		if (CHECK_INT(res.noutcomes, 1)) {
			CHECK_INT(res.outcomes[0].kind, PLOOM_OUTCOME_STEP_LIMIT);
			CHECK_INT(res.outcomes[0].schedules, res.schedules);
		}
		ploom_search_result_release(&res);
		setup_release(&t);
	}
}

static void a_trace_that_cannot_be_saved_stops_the_search_with_the_reason(void)
{
	/* the trace folder's parent is a file: the failure, or the step
	 * limit, is still reported, its path NULL, and the search stops there
	 * even with keep_going, returning 0 so that the caller can show what
	 * it found before the error */
	struct ploom_search_result res;
	struct ploom_err err = {0, ""};
	struct setup t;
	char *file = fake_write(dir, "in-the-way", "x", 0), *sub = NULL, *want = NULL;
	int keep_going;

	if (asprintf(&sub, "%s/traces", file) < 0 ||
	    asprintf(&want, "cannot save the trace: cannot create directory '%s': File exists",
		     file) < 0)
		abort();
	for (keep_going = 0; keep_going <= 1; keep_going++) {
		setup_init(&t, "bank without the lock", 1);
		t.opts.trace_dir = sub;
		t.opts.keep_going = keep_going;
		CHECK_INT(search_dfs(&res, &t, -1, &err), 0);
		CHECK_STR(res.stopped_by, "failure");
		CHECK_INT(res.failing, 1);
		CHECK_INT(t.ev.failures, 1);
		CHECK_STR(t.ev.path, "");
		CHECK(res.failure != NULL && res.failure_path == NULL);
		CHECK_INT(res.save_err.kind, PLOOM_ERR_SYSTEM);
		CHECK_STR(res.save_err.msg, want);
		CHECK(res.idle_worker >= 0);
		ploom_search_result_release(&res);
		setup_release(&t);

		setup_init(&t, "bank with the lock", 1);
		t.config.max_steps = 5;
		t.opts.trace_dir = sub;
		t.opts.keep_going = keep_going;
		CHECK_INT(search_dfs(&res, &t, -1, &err), 0);
		CHECK_STR(res.stopped_by, "max-steps");
		CHECK_INT(res.schedules, 1);
		CHECK_INT(t.ev.step_limits, 1);
		CHECK(res.limit_path == NULL);
		CHECK_STR(res.save_err.msg, want);
		ploom_search_result_release(&res);
		setup_release(&t);
	}
	free(want);
	free(sub);
	free(file);
}

static void a_divergence_ends_the_search(void)
{
	struct ploom_search_result res;
	struct ploom_err err = {0, ""};
	struct setup t;

	setup_init(&t, "diverge", 2);
	CHECK_INT(search_dfs(&res, &t, -1, &err), 1);
	CHECK_INT(t.ev.divergences, 1);
	CHECK_INT(res.schedules, 1);
	CHECK_INT(res.idle_worker, -1);
	ploom_search_result_release(&res);
	setup_release(&t);
}

static void an_internal_error_keeps_the_counts_and_the_trace_of_its_run(void)
{
	struct ploom_search_result res;
	struct ploom_err err = {0, ""};
	struct ploom_trace *t2 = NULL;
	struct setup t;

	setup_init(&t, "numbered", 1);
	t.opts.keep_going = 1;
	CHECK_INT(ploom_search_run(&res, count_new(5, &count_trips_ops), &t.opts, &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_INTERNAL);
	CHECK_STR(err.msg, "run 2 contradicts the search");
	/* the run that tripped it is a schedule the search ran */
	CHECK_INT(res.schedules, 3);
	CHECK_STR(res.stopped_by, "internal-error");
	CHECK(res.internal_path != NULL);
	if (res.internal_path) {
		CHECK_INT(ploom_trace_read_file(&t2, res.internal_path, &err), 0);
		if (t2)
			CHECK_STR(t2->run.outcome.exc_message, "run 2");
	}
	ploom_trace_free(t2);
	ploom_search_result_release(&res);
	setup_release(&t);
}

static int is_run_3(void *ctx, const struct ploom_outcome *o)
{
	(void)ctx;
	return o->exc_message && !strcmp(o->exc_message, "run 3");
}

/* With wanted(), the failures it refuses are schedules and nothing more;
 * without a trace folder the failure it wants is kept, not saved. */
static void only_the_wanted_failure_stops_the_search(void)
{
	struct ploom_search_result res;
	struct ploom_err err = {0, ""};
	struct setup t;

	setup_init(&t, "numbered", 1);
	t.opts.wanted = is_run_3;
	t.opts.trace_dir = NULL;
	CHECK_INT(ploom_search_run(&res, count_new(6, &count_ops), &t.opts, &err), 0);
	CHECK_INT(res.schedules, 4);
	CHECK_INT(res.failing, 1);
	CHECK_STR(res.stopped_by, "failure");
	CHECK_INT(t.ev.failures, 1);
	CHECK(res.failure_path == NULL);
	CHECK_INT(res.save_err.kind, PLOOM_ERR_NONE);
	if (CHECK(res.failure != NULL)) {
		CHECK_STR(res.failure->run.outcome.exc_message, "run 3");
		/* the caller's to complete */
		CHECK(res.failure->id == NULL);
		CHECK_INT((int)res.failure->nfingerprints, 0);
	}
	ploom_search_result_release(&res);
	setup_release(&t);

	/* none wanted: the search is complete, and a pass */
	setup_init(&t, "numbered", 1);
	t.opts.wanted = is_run_3;
	CHECK_INT(ploom_search_run(&res, count_new(3, &count_ops), &t.opts, &err), 0);
	CHECK_INT(res.schedules, 3);
	CHECK_INT(res.failing, 0);
	CHECK(res.stopped_by == NULL && res.failure == NULL);
	CHECK_INT(t.ev.failures, 0);
	ploom_search_result_release(&res);
	setup_release(&t);
}

static void a_strategy_that_cannot_split_runs_on_one_worker_only(void)
{
	struct ploom_search_result res;
	struct ploom_err err = {0, ""};
	struct setup t;

	setup_init(&t, "numbered", 1);
	t.opts.keep_going = 1;
	CHECK_INT(ploom_search_run(&res, count_new(3, &count_ops), &t.opts, &err), 0);
	CHECK_INT(res.schedules, 3);
	CHECK_STR(res.stopped_by, NULL);
	/* a strategy without left(): no fraction while it runs, and all of
	 * it once it is complete */
	CHECK_INT(t.ev.estimates, 0);
	CHECK(t.ev.progress > 0);
	CHECK(res.estimate.fraction == 1 && res.estimate.total == 3);
	ploom_search_result_release(&res);
	setup_release(&t);

	setup_init(&t, "numbered", 2);
	CHECK_INT(ploom_search_run(&res, count_new(3, &count_ops), &t.opts, &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_INPUT);
	CHECK_STR(err.msg, "the 'count' search cannot be split: it runs on one worker only");
	CHECK_INT(res.schedules, 0);
	ploom_search_result_release(&res);
	setup_release(&t);
}

static void the_sleep_set_reaches_the_worker(void)
{
	struct ploom_search_result res;
	struct ploom_err err = {0, ""};
	struct setup t;

	setup_init(&t, "numbered", 1);
	CHECK_INT(ploom_search_run(&res, count_new(3, &count_sleep_ops), &t.opts, &err), 0);
	CHECK(res.failure != NULL);
	if (res.failure)
		CHECK_STR(res.failure->run.outcome.exc_message, "run 0 sleep 7");
	ploom_search_result_release(&res);
	setup_release(&t);
}

static void the_time_limit_stops_the_search(void)
{
	const struct sim_scenario *sc = sim_find("counter3");
	struct ploom_search_result res;
	struct ploom_err err = {0, ""};
	struct setup t;

	setup_init(&t, sc->name, 2);
	t.opts.time_limit_s = 0.2;
	CHECK_INT(search_dfs(&res, &t, -1, &err), 0);
	CHECK_STR(res.stopped_by, "time-limit");
	CHECK(res.elapsed_s >= 0.2);
	CHECK(res.schedules > 0 && res.schedules < sc->want[0][0]);
	CHECK(t.ev.progress > 0);
	/* on two workers, each event told how far the search was */
	CHECK(t.ev.estimates == t.ev.progress);
	CHECK(res.estimate.fraction > 0 && res.estimate.fraction < 1);
	CHECK(res.estimate.fraction >= t.ev.last_fraction - 1e-12);
	/* the runs in flight at the limit were awaited */
	CHECK(!ploom_worker_busy(t.w[0]) && !ploom_worker_busy(t.w[1]));
	ploom_search_result_release(&res);
	setup_release(&t);
}

static void the_interrupted_flag_stops_the_search(void)
{
	struct ploom_search_result res;
	struct ploom_err err = {0, ""};
	struct setup t;

	setup_init(&t, "numbered", 1);
	t.opts.keep_going = 1;
	t.ev.interrupt_at = 10;
	t.opts.interrupted = &t.ev.flag;
	CHECK_INT(ploom_search_run(&res, count_new(-1, &count_ops), &t.opts, &err), 0);
	CHECK_INT(res.schedules, 10);
	CHECK_INT(t.ev.progress, 10);
	ploom_search_result_release(&res);
	setup_release(&t);
}

/* ---- samples (lib/search/sample) ---- */

/* Runs a sample of kind (seed 7, depth 3) on the setup. */
static int search_sample(struct ploom_search_result *res, struct setup *t,
			 enum ploom_policy_kind kind, struct ploom_err *err)
{
	struct ploom_sample_opts o = {kind, 7, 3, t->opts.max_schedules, t->nworkers};
	struct ploom_strategy *s = NULL;

	if (ploom_sample_strategy_new(&s, &o, err) < 0)
		abort();
	t->config.kind = ploom_search_kind_find(ploom_policy_name(kind), NULL);
	t->config.seed = 7;
	t->config.pct_depth = kind == PLOOM_POLICY_PCT ? 3 : 0;
	t->ev.last_progress = 0;
	t->ev.last_fraction = 0;
	return ploom_search_run(res, s, &t->opts, err);
}

/* The failing schedules among the first m of a pct sample (seed 7, depth
 * 3) split into parts, as sample.h defines them, computed here with the
 * simulator alone: what the driver, its workers and the protocol must
 * give. */
static long sample_failing(const struct sim_scenario *sc, long m, int parts)
{
	struct ploom_seed_stream st;
	long i, failing = 0, k[PLOOM_SEARCH_MAX_WORKERS] = {0}, branch;
	size_t j;

	ploom_seed_stream_init(&st, 7);
	for (i = 0; i < m; i++) {
		struct ploom_policy_spec p = {.kind = PLOOM_POLICY_PCT,
					      .seed = ploom_seed_stream_next(&st), .depth = 3,
					      .k = k[i % parts]};
		struct ploom_run run;

		sim_exec_policy(&run, sc, NULL, NULL, 0, &p);
		failing += ploom_outcome_is_failure(run.outcome.kind);
		for (branch = 0, j = 0; j < run.nsteps; j++)
			branch += run.steps[j].nenabled > 1;
		if (branch > k[i % parts])
			k[i % parts] = branch;
		ploom_run_release(&run);
	}
	return failing;
}

static void a_sample_runs_the_schedules_its_seed_and_parts_give(void)
{
	const struct sim_scenario *sc = sim_find("bank without the lock");
	static const int nworkers[] = {1, 3};
	size_t j;
	int again;

	for (j = 0; j < sizeof(nworkers) / sizeof(nworkers[0]); j++) {
		long want = sample_failing(sc, 300, nworkers[j]);

		for (again = 0; again < 2; again++) {
			struct ploom_search_result res;
			struct ploom_err err = {0, ""};
			struct setup t;

			setup_init(&t, sc->name, nworkers[j]);
			t.opts.keep_going = 1;
			t.opts.max_schedules = 300;
			CHECK_INT(search_sample(&res, &t, PLOOM_POLICY_PCT, &err), 0);
			CHECK_INT(res.schedules, 300);
			/* the same schedules whatever the timing of the workers */
			if (!CHECK_INT(res.failing, want))
				printf("  (%d workers)\n", nworkers[j]);
			CHECK(res.failing > 0);
			/* never complete: a sample is not a pass */
			CHECK_STR(res.stopped_by, "max-schedules");
			/* the schedule limit is the sample's size */
			CHECK(res.estimate.fraction == 1 && res.estimate.total == 300);
			CHECK(t.ev.estimates > 0 || t.ev.progress == 0);
			/* the trace says how to sample again */
			if (CHECK(res.failure != NULL)) {
				CHECK_STR(ploom_config_kind(&res.failure->config)->search, "pct");
				CHECK_INT(res.failure->config.seed, 7);
				CHECK_INT(res.failure->config.pct_depth, 3);
			}
			ploom_search_result_release(&res);
			setup_release(&t);
		}
	}
}

static void a_sample_counts_step_limits_and_goes_on(void)
{
	static const int nworkers[] = {1, 2};
	static const enum ploom_policy_kind kinds[] = {PLOOM_POLICY_PCT, PLOOM_POLICY_RANDOM};
	size_t j, k;

	/* every schedule reaches the limit: each one is counted, the first
	 * is saved and reported, and the sample runs its size */
	for (j = 0; j < sizeof(nworkers) / sizeof(nworkers[0]); j++)
		for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			struct ploom_search_result res;
			struct ploom_err err = {0, ""};
			struct setup t;

			setup_init(&t, "bank with the lock", nworkers[j]);
			t.config.max_steps = 5;
			t.opts.max_schedules = 20;
			CHECK_INT(search_sample(&res, &t, kinds[k], &err), 0);
			CHECK_INT(res.schedules, 20);
			CHECK_INT(res.step_limited, 20);
			CHECK_INT(res.failing, 0);
			CHECK_STR(res.stopped_by, "max-schedules");
			CHECK_INT(t.ev.step_limits, 1);
			CHECK(res.limit_path != NULL);
			ploom_search_result_release(&res);
			setup_release(&t);
		}
}

static void a_sample_stops_at_its_first_failure_or_its_limits(void)
{
	struct ploom_search_result res;
	struct ploom_err err = {0, ""};
	struct setup t;

	/* random finds the overdraft, and the search stops there */
	setup_init(&t, "bank without the lock", 2);
	t.opts.max_schedules = 5000;
	CHECK_INT(search_sample(&res, &t, PLOOM_POLICY_RANDOM, &err), 0);
	CHECK_STR(res.stopped_by, "failure");
	CHECK_INT(res.failing, 1);
	CHECK(res.schedules < 5000);
	if (CHECK(res.failure != NULL)) {
		CHECK_STR(ploom_config_kind(&res.failure->config)->search, "random");
		CHECK_INT(res.failure->run.outcome.kind, PLOOM_OUTCOME_FAILURE);
	}
	ploom_search_result_release(&res);
	setup_release(&t);
	/* nothing to find: the limit stops it, never a pass */
	setup_init(&t, "bank with the lock", 2);
	t.opts.max_schedules = 50;
	CHECK_INT(search_sample(&res, &t, PLOOM_POLICY_PCT, &err), 0);
	CHECK_INT(res.schedules, 50);
	CHECK_STR(res.stopped_by, "max-schedules");
	ploom_search_result_release(&res);
	setup_release(&t);
	/* a time limit alone: no size, so no fraction */
	setup_init(&t, "bank with the lock", 1);
	t.opts.time_limit_s = 0.2;
	CHECK_INT(search_sample(&res, &t, PLOOM_POLICY_PCT, &err), 0);
	CHECK_STR(res.stopped_by, "time-limit");
	CHECK(res.schedules > 0);
	CHECK(res.estimate.fraction == -1);
	ploom_search_result_release(&res);
	setup_release(&t);
	/* without either it would never end: refused */
	setup_init(&t, "bank with the lock", 1);
	CHECK_INT(search_sample(&res, &t, PLOOM_POLICY_RANDOM, &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_INPUT);
	CHECK_STR(err.msg, "the 'random' search samples schedules without end: it needs a schedule "
			   "limit or a time limit");
	ploom_search_result_release(&res);
	setup_release(&t);
}

int main(int argc, char **argv)
{
	/* any argument makes a worker, or an exit: never the tests again,
	 * whose workers would each start them over */
	simworker_main(argc, argv);
	self = simworker_self();
	dir = fake_dir("search");
	counts_match_reference_for_any_number_of_workers();
	outcomes_are_tallied_in_order_of_first_occurrence();
	outcomes_past_the_cap_are_counted_as_truncated();
	the_first_failure_stops_the_search_and_is_saved();
	a_saved_trace_records_what_the_search_instrumented();
	the_stand_in_refuses_a_command_line_it_does_not_know();
	shards_add_up_to_the_whole_search();
	max_schedules_runs_exactly_that_many();
	the_step_limit_saves_one_trace_and_leaves_the_search_incomplete();
	a_trace_that_cannot_be_saved_stops_the_search_with_the_reason();
	a_divergence_ends_the_search();
	a_strategy_that_cannot_split_runs_on_one_worker_only();
	only_the_wanted_failure_stops_the_search();
	an_internal_error_keeps_the_counts_and_the_trace_of_its_run();
	the_sleep_set_reaches_the_worker();
	the_time_limit_stops_the_search();
	the_interrupted_flag_stops_the_search();
	a_sample_runs_the_schedules_its_seed_and_parts_give();
	a_sample_stops_at_its_first_failure_or_its_limits();
	a_sample_counts_step_limits_and_goes_on();
	fake_dir_remove(dir);
	free(dir);
	return check_report();
}
