/* Tests of lib/minimize: the same-failure predicate, the search driven by
 * the simulator (sim.h) on REFERENCE.md's scenarios, its budget and
 * errors, and the trace it makes with a (stand-in) worker. */
#include <stdlib.h>
#include <string.h>

#include "../../lib/search/explore.h"
#include "../../lib/json.h"
#include "../../lib/minimize.h"
#include "../../lib/source.h"
#include "../../lib/trace.h"
#include "../../lib/worker.h"
#include "check.h"
#include "fake.h"
#include "sim.h"
#include "simworker.h"
#include "testenv.h"

/* PLOOM_MINIMIZE_PROGRAMS (testenv.h), read first in main() */
static long env_programs;

/* ---- runners ---- */

/* this program, whose workers are the stand-in of simworker.h */
static const char *self;
static char *runs_dir;

/* What the stand-in worker of a minimization runs. */
struct sim_ctx {
	const struct sim_scenario *sc;
	int rename_below;       /* failures with fewer preemptions get another message */
	int ignore_choices;     /* run the default schedule whatever is asked */
	int fail_after;         /* the worker dies after this many runs (0: never) */
	int runs;               /* the runs the workers made, added up by minimize() */
	const struct sim_prog *prog;    /* a generated program instead of sc */
	unsigned long seed;             /* prog's */
};

/* The lines of the file at path (0 when there is none), which it removes. */
static int count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	int c, n = 0;

	if (!f)
		return 0;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	remove(path);
	return n;
}

/* The stand-in worker of the last minimization and its target: the next
 * one of the same target reuses it, as ploom-explore's minimizer takes
 * the idle worker of its search. */
static struct ploom_worker *kept;
static char kept_target[1024];

static void drop_kept(void)
{
	ploom_worker_free(kept);
	kept = NULL;
	kept_target[0] = '\0';
}

/* ploom_minimize_search() of original on a stand-in worker of ctx's
 * scenario (the kept one when it runs that target); the run found is
 * moved into *out. */
static int minimize(struct ploom_run *out, struct ploom_minimize_result *res,
		    const struct ploom_run *original, const struct ploom_minimize_opts *opts,
		    struct sim_ctx *ctx, struct ploom_err *err)
{
	struct ploom_config config = {.max_preemptions = -1, .max_steps = 100000,
				      .schedule_timeout_s = 10.0};
	struct ploom_worker_opts wopts = {.python = self, .hash_seed = "0"};
	struct ploom_worker *w = NULL;
	struct ploom_trace *found = NULL;
	struct ploom_err own = {0, ""};
	char target[1024], log[512];
	int r;

	if (!err)
		err = &own;
	snprintf(log, sizeof(log), "%s/runs", runs_dir);
	if (ctx->prog)
		snprintf(target, sizeof(target), "gen:%lu|log=%s", ctx->seed, log);
	else
		snprintf(target, sizeof(target), "%s|log=%s", ctx->sc->name, log);
	if (ctx->rename_below)
		snprintf(target + strlen(target), sizeof(target) - strlen(target), "|rename=%d",
			 ctx->rename_below);
	if (ctx->ignore_choices)
		snprintf(target + strlen(target), sizeof(target) - strlen(target), "|ignore");
	if (ctx->fail_after)
		snprintf(target + strlen(target), sizeof(target) - strlen(target), "|die=%d",
			 ctx->fail_after);
	wopts.target = target;
	if (kept && strcmp(kept_target, target) == 0) {
		w = kept;
	} else {
		drop_kept();
		if (ploom_worker_start(&w, &wopts, err) < 0) {
			printf("cannot start the stand-in worker: %s\n", err->msg);
			abort();
		}
		kept = w;
		snprintf(kept_target, sizeof(kept_target), "%s", target);
	}
	r = ploom_minimize_search(&found, res, original, w, "0", &config, opts, err);
	if (found)
		ploom_run_move(out, &found->run);
	ploom_trace_free(found);
	/* after an error the worker may be dead or busy */
	if (r < 0)
		drop_kept();
	ctx->runs += count_lines(log);
	return r;
}

static int fails_with_at_least(const struct ploom_run *run, int min_preemptions)
{
	return ploom_outcome_is_failure(run->outcome.kind) && run->preemptions >= min_preemptions;
}

/* The first failing run of an unbounded search of sc with at least
 * min_preemptions preemptions, into *out; 0 if found. */
static int find_failure(struct ploom_run *out, const struct sim_scenario *sc, int min_preemptions)
{
	return sim_first(out, sc, fails_with_at_least, min_preemptions);
}

/* ---- the predicate ---- */

static void same_failure_compares_what_identifies_the_bug(void)
{
	struct ploom_outcome a, b;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.kind = b.kind = PLOOM_OUTCOME_FAILURE;
	a.exc_type = b.exc_type = (char *)"builtins.AssertionError";
	a.exc_message = (char *)"the account is overdrawn";
	b.exc_message = (char *)"the account is overdrawn";
	a.task = 0;
	b.task = 2;
	CHECK_INT(ploom_minimize_same_failure(&a, &b), 1);
	b.exc_message = (char *)"lost update";
	CHECK_INT(ploom_minimize_same_failure(&a, &b), 0);
	b.exc_message = a.exc_message;
	b.exc_type = (char *)"builtins.ValueError";
	CHECK_INT(ploom_minimize_same_failure(&a, &b), 0);
	b.kind = PLOOM_OUTCOME_DEADLOCK;
	CHECK_INT(ploom_minimize_same_failure(&a, &b), 0);

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.kind = b.kind = PLOOM_OUTCOME_DEADLOCK;
	a.summary = (char *)"deadlock: task 1 waits to acquire lock#0 held by task 2";
	b.summary = (char *)"deadlock: task 2 waits to acquire lock#1 held by task 1";
	CHECK_INT(ploom_minimize_same_failure(&a, &b), 1);
	a.kind = b.kind = PLOOM_OUTCOME_CRASH;
	a.signal = b.signal = 11;
	CHECK_INT(ploom_minimize_same_failure(&a, &b), 1);
	b.signal = 6;
	CHECK_INT(ploom_minimize_same_failure(&a, &b), 0);
	a.kind = b.kind = PLOOM_OUTCOME_EXIT;
	a.status = b.status = 3;
	CHECK_INT(ploom_minimize_same_failure(&a, &b), 1);
	b.status = 4;
	CHECK_INT(ploom_minimize_same_failure(&a, &b), 0);
	a.kind = b.kind = PLOOM_OUTCOME_TIMEOUT;
	a.timeout_ms = 1000;
	b.timeout_ms = 2000;
	CHECK_INT(ploom_minimize_same_failure(&a, &b), 1);
	a.kind = b.kind = PLOOM_OUTCOME_PASS;
	CHECK_INT(ploom_minimize_same_failure(&a, &b), 0);
	a.kind = b.kind = PLOOM_OUTCOME_STEP_LIMIT;
	CHECK_INT(ploom_minimize_same_failure(&a, &b), 0);
	a.kind = b.kind = PLOOM_OUTCOME_DIVERGENCE;
	CHECK_INT(ploom_minimize_same_failure(&a, &b), 0);
}

/* ---- the search ---- */

static void the_bank_failure_found_first_minimizes_to_one_preemption(void)
{
	struct sim_ctx ctx = {sim_find("bank without the lock"), 0, 0, 0, 0, NULL, 0};
	struct ploom_minimize_result res;
	struct ploom_run orig = {0}, min = {0}, again;
	struct ploom_err err = {0, ""};

	CHECK_INT(find_failure(&orig, ctx.sc, 0), 0);
	/* the same schedule ploom-explore finds first on the real bank */
	CHECK_INT(orig.preemptions, 2);
	CHECK_INT(minimize(&min, &res, &orig, NULL, &ctx, &err), 1);
	CHECK_STR(err.msg, "");
	CHECK_INT(res.from, 2);
	CHECK_INT(res.to, 1);
	CHECK_INT(res.exhausted, 0);
	CHECK_INT(min.preemptions, 1);
	CHECK_STR(min.outcome.exc_message, "the account is overdrawn");
	/* bound 0 has 3 schedules and no failure, then bound 1 finds it */
	CHECK(res.schedules > 3 && res.schedules <= 3 + 14);
	CHECK_INT(res.schedules, ctx.runs);
	/* the minimized run's choices give it again */
	sim_run(&again, ctx.sc, min.choices, min.nchoices);
	CHECK_INT(again.outcome.kind, PLOOM_OUTCOME_FAILURE);
	CHECK_INT(again.preemptions, 1);
	CHECK_INT(again.nsteps, min.nsteps);
	ploom_run_release(&again);
	ploom_run_release(&min);
	ploom_run_release(&orig);
}

/* Every failing schedule of each scenario, minimized, has the fewest
 * preemptions that any schedule failing that way has: REFERENCE.md says
 * bound 0 has no failure and bound 1 has some, for all three. */
static void every_failing_schedule_minimizes_to_the_fewest_preemptions(int reduce)
{
	static const char *const names[] = {"bank without the lock", "abba", "racy_counter2"};
	struct ploom_minimize_opts opts = {0};
	size_t i;

	opts.reduce = reduce;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct sim_ctx ctx = {sim_find(names[i]), 0, 0, 0, 0, NULL, 0};
		struct ploom_explore *ex = NULL;
		struct ploom_run run;
		const int *prefix;
		size_t n;
		long failing = 0;
		int r = 1;

		CHECK_INT(ctx.sc->want[1][1], 0);
		CHECK(ctx.sc->want[2][1] > 0);
		ploom_explore_new(&ex, -1, NULL);
		while (r == 1) {
			prefix = ploom_explore_prefix(ex, &n);
			sim_run(&run, ctx.sc, prefix, n);
			r = ploom_explore_next(ex, &run, NULL);
			if (ploom_outcome_is_failure(run.outcome.kind)) {
				struct ploom_minimize_result res;
				struct ploom_run min = {0};
				int want = run.preemptions > 1 ? 1 : run.preemptions;
				int got = minimize(&min, &res, &run, &opts, &ctx,
								NULL);
				failing++;
				if (!CHECK_INT(got, run.preemptions > 1 ? 1 : 0) ||
				    !CHECK_INT(res.to, want))
					printf("  (%s, a failure with %d preemptions, reduce %d)\n",
					       names[i], run.preemptions, reduce);
				CHECK(res.to <= res.from);
				if (got == 1) {
					CHECK_INT(min.preemptions, want);
					CHECK(ploom_minimize_same_failure(&run.outcome, &min.outcome));
				}
				ploom_run_release(&min);
			}
			ploom_run_release(&run);
		}
		ploom_explore_free(ex);
		CHECK_INT(failing, ctx.sc->want[0][1]);
	}
}

/* With the bounded reduction the search finds the bank's failure with
 * one preemption too, in fewer schedules than without it. */
static void the_reduction_searches_fewer_schedules_for_the_same_result(void)
{
	struct sim_ctx ctx = {sim_find("bank without the lock"), 0, 0, 0, 0, NULL, 0};
	struct ploom_minimize_opts opts = {0};
	struct ploom_minimize_result plain, reduced;
	struct ploom_run orig = {0}, min = {0};

	CHECK_INT(find_failure(&orig, ctx.sc, 2), 0);
	CHECK_INT(minimize(&min, &plain, &orig, NULL, &ctx, NULL), 1);
	ploom_run_release(&min);
	memset(&min, 0, sizeof(min));
	opts.reduce = 1;
	CHECK_INT(minimize(&min, &reduced, &orig, &opts, &ctx, NULL), 1);
	CHECK_INT(reduced.to, 1);
	CHECK_INT(min.preemptions, 1);
	CHECK(reduced.schedules < plain.schedules);
	printf("bank: minimized from %d preemptions in %ld schedules, %ld with the reduction\n",
	       plain.from, plain.schedules, reduced.schedules);
	ploom_run_release(&min);
	ploom_run_release(&orig);
}

/* The fewest preemptions of a schedule of ctx's program that fails as
 * want does: bounded depth-first searches with the bounds 0, 1, ... until
 * one finds it (at most max), or -1. */
static int fewest_preemptions(struct sim_ctx *ctx, const struct ploom_outcome *want, int max)
{
	int bound;

	for (bound = 0; bound <= max; bound++) {
		struct ploom_explore *ex = NULL;
		struct ploom_run run;
		const int *prefix;
		size_t n;
		int more, found = 0;

		ploom_explore_new(&ex, bound, NULL);
		do {
			prefix = ploom_explore_prefix(ex, &n);
			sim_exec(&run, NULL, ctx->prog, prefix, n, NULL, 0, NULL);
			found = ploom_minimize_same_failure(want, &run.outcome);
			more = found ? 0 : ploom_explore_next(ex, &run, NULL);
			ploom_run_release(&run);
		} while (more == 1);
		ploom_explore_free(ex);
		if (found)
			return bound;
	}
	return -1;
}

/* On generated programs (PLOOM_MINIMIZE_PROGRAMS, 300 by default), the
 * first failing schedule of each kind that an unbounded DFS finds, with 2
 * preemptions or more, minimizes to the fewest preemptions of any
 * schedule failing that way (bounded DFS tells), with the reduction and
 * without. */
static void generated_failures_minimize_to_the_fewest_preemptions(void)
{
	long nprog = env_programs, i, tried = 0, shorter = 0, failed = 0, limited = 0;
	long schedules[2] = {0, 0};

	for (i = 0; i < nprog && failed < 5; i++) {
		struct sim_prog p;
		struct sim_ctx ctx = {NULL, 0, 0, 0, 0, &p, (unsigned long)i};
		struct ploom_explore *ex = NULL;
		struct ploom_run run;
		const int *prefix;
		size_t n;
		int more, k = 0;

		sim_prog_generate(&p, (unsigned long)i, 12);
		ploom_explore_new(&ex, -1, NULL);
		do {
			prefix = ploom_explore_prefix(ex, &n);
			sim_exec(&run, NULL, &p, prefix, n, NULL, 0, NULL);
			more = ploom_explore_next(ex, &run, NULL);
			if (ploom_outcome_is_failure(run.outcome.kind) && run.preemptions >= 2) {
				int want = fewest_preemptions(&ctx, &run.outcome, run.preemptions);
				int reduce;

				tried++;
				shorter += want < run.preemptions;
				for (reduce = 0; reduce <= 1; reduce++) {
					struct ploom_minimize_opts opts = {0};
					struct ploom_minimize_result res;
					struct ploom_run min = {0};
					int ok;

					opts.reduce = reduce;
					minimize(&min, &res, &run, &opts, &ctx, NULL);
					schedules[reduce] += res.schedules;
					ok = CHECK_INT(res.to, want);
					if (min.steps)
						ok &= CHECK_INT(min.preemptions, want);
					if (!ok) {
						printf("  program %ld, reduce %d: %s with %d preemptions\n", i,
						       reduce, run.outcome.summary, run.preemptions);
						sim_prog_print(stdout, &p);
						failed++;
					}
					ploom_run_release(&min);
				}
				/* with little room for work items: the fewest when it
				 * says nothing, else fewer than the original or none */
				{
					struct ploom_minimize_opts opts = {0};
					struct ploom_minimize_result res;
					struct ploom_run min = {0};
					int r, ok = 1;

					opts.max_work_bytes = 100;
					r = minimize(&min, &res, &run, &opts, &ctx,
								  NULL);
					if (!res.stopped_by) {
						ok &= CHECK_INT(res.to, want);
					} else {
						limited++;
						ok &= CHECK_STR(res.stopped_by, "memory");
						ok &= CHECK(res.to >= want);
						ok &= CHECK_INT(res.exhausted, r == 0);
						if (r == 1)
							ok &= CHECK(min.preemptions < run.preemptions &&
								    ploom_minimize_same_failure(&run.outcome,
												&min.outcome));
					}
					if (!ok) {
						printf("  program %ld, limited: %s with %d preemptions\n", i,
						       run.outcome.summary, run.preemptions);
						failed++;
					}
					ploom_run_release(&min);
				}
				/* one failure a program: the next ones are mostly the same */
				more = 0;
			}
			ploom_run_release(&run);
			k++;
		} while (more == 1 && k < 2000);
		ploom_explore_free(ex);
	}
	CHECK_INT(failed, 0);
	/* worth it: failures that do have a shorter schedule */
	CHECK(shorter * 2 >= tried && tried * 10 >= nprog);
	/* the limit did leave work out, and not always */
	CHECK(limited > 0 && limited < tried);
	printf("generated programs: %ld, %ld failures minimized (%ld to fewer preemptions): "
	       "%ld schedules without the reduction, %ld with; %ld of them searched in part "
	       "with 100 bytes of work items\n",
	       nprog, tried, shorter, schedules[0], schedules[1], limited);
}

static void a_minimal_run_is_left_alone_after_the_lower_bounds(void)
{
	struct sim_ctx ctx = {sim_find("bank without the lock"), 0, 0, 0, 0, NULL, 0};
	struct ploom_minimize_result res;
	struct ploom_run orig = {0}, min = {0}, out = {0};

	find_failure(&orig, ctx.sc, 0);
	CHECK_INT(minimize(&min, &res, &orig, NULL, &ctx, NULL), 1);
	ctx.runs = 0;
	CHECK_INT(minimize(&out, &res, &min, NULL, &ctx, NULL), 0);
	CHECK_INT(res.from, 1);
	CHECK_INT(res.to, 1);
	CHECK_INT(res.exhausted, 0);
	/* all of bound 0, REFERENCE.md's 3 schedules, and nothing else */
	CHECK_INT(res.schedules, 3);
	CHECK(out.steps == NULL);
	ploom_run_release(&min);
	ploom_run_release(&orig);
}

static void a_failure_that_does_not_reproduce_is_a_divergence(void)
{
	struct sim_ctx ctx = {sim_find("bank without the lock"), 0, 0, 0, 0, NULL, 0};
	struct ploom_minimize_opts opts = {0};
	struct ploom_minimize_result res;
	struct ploom_run orig = {0}, forged, out = {0};
	struct ploom_err err = {0, ""};

	/* the default schedule passes; its trace is edited to say it failed */
	sim_run(&forged, ctx.sc, NULL, 0);
	CHECK_INT(forged.outcome.kind, PLOOM_OUTCOME_PASS);
	free(forged.outcome.summary);
	forged.outcome.kind = PLOOM_OUTCOME_FAILURE;
	forged.outcome.exc_type = strdup("builtins.AssertionError");
	forged.outcome.exc_message = strdup("the account is overdrawn");
	forged.outcome.summary = strdup("builtins.AssertionError: the account is overdrawn");
	/* without reproduce_first it would come back as the shortest */
	CHECK_INT(minimize(&out, &res, &forged, NULL, &ctx, &err), 0);
	CHECK_INT(res.schedules, 0);
	opts.reproduce_first = 1;
	CHECK_INT(minimize(&out, &res, &forged, &opts, &ctx, &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_DIVERGENCE);
	CHECK_STR(err.msg, "the recorded failure did not reproduce: recorded "
			   "builtins.AssertionError: the account is overdrawn, got pass");
	CHECK_INT(res.schedules, 1);
	CHECK_INT(ctx.runs, 1);
	CHECK(out.steps == NULL);
	ploom_run_release(&forged);

	/* a real failure, in a scenario that has changed since */
	find_failure(&orig, ctx.sc, 0);
	ctx.sc = sim_find("bank with the lock");
	CHECK_INT(minimize(&out, &res, &orig, &opts, &ctx, &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_DIVERGENCE);
	CHECK(strncmp(err.msg, "the recorded failure did not reproduce: ", 40) == 0);

	/* a failure that does reproduce costs one schedule more, and the
	 * search is the same */
	ctx.sc = sim_find("bank without the lock");
	ctx.runs = 0;
	CHECK_INT(minimize(&out, &res, &orig, &opts, &ctx, &err), 1);
	CHECK_INT(res.to, 1);
	CHECK_INT(res.schedules, ctx.runs);
	ploom_run_release(&out);
	ploom_run_release(&orig);
}

static void only_the_same_failure_counts(void)
{
	/* failures with fewer than 2 preemptions get another message, so
	 * the one with 2 is the fewest that fails the same way */
	struct sim_ctx ctx = {sim_find("bank without the lock"), 2, 0, 0, 0, NULL, 0};
	struct ploom_minimize_result res;
	struct ploom_run orig = {0}, min = {0};

	CHECK_INT(find_failure(&orig, ctx.sc, 3), 0);
	CHECK(orig.preemptions >= 3);
	CHECK_INT(minimize(&min, &res, &orig, NULL, &ctx, NULL), 1);
	CHECK_INT(res.to, 2);
	CHECK_INT(min.preemptions, 2);
	CHECK_STR(min.outcome.exc_message, "the account is overdrawn");
	ploom_run_release(&min);
	ploom_run_release(&orig);
}

static void progress_counts(void *ctx, long schedules, int bound)
{
	long *calls = ctx;

	CHECK_INT(schedules, calls[0] + 1);
	CHECK(bound >= 0 && bound <= 1);
	calls[0]++;
}

static void the_budget_stops_the_search_and_says_so(void)
{
	struct sim_ctx ctx = {sim_find("bank without the lock"), 0, 0, 0, 0, NULL, 0};
	struct ploom_minimize_opts opts = {0};
	struct ploom_minimize_result res;
	struct ploom_run orig = {0}, min = {0};
	long calls[1] = {0};

	opts.max_schedules = 2;
	opts.progress = progress_counts;
	opts.progress_ctx = calls;
	find_failure(&orig, ctx.sc, 0);
	CHECK_INT(minimize(&min, &res, &orig, &opts, &ctx, NULL), 0);
	CHECK_INT(res.exhausted, 1);
	CHECK_STR(res.stopped_by, "max-schedules");
	CHECK_INT(res.schedules, 2);
	CHECK_INT(res.to, res.from);
	CHECK_INT(calls[0], 2);
	CHECK_INT(ctx.runs, 2);
	CHECK(min.steps == NULL);
	ploom_run_release(&orig);
}

/* No schedule starts once the seconds are spent: with reproduce_first,
 * the original's run is the only one, and the result is the original. */
static void the_time_budget_stops_the_search_and_says_so(void)
{
	struct sim_ctx ctx = {sim_find("bank without the lock"), 0, 0, 0, 0, NULL, 0};
	struct ploom_minimize_opts opts = {0};
	struct ploom_minimize_result res;
	struct ploom_run orig = {0}, min = {0};
	struct ploom_err err = {0, ""};

	opts.max_seconds = 1e-9;
	opts.reproduce_first = 1;
	find_failure(&orig, ctx.sc, 0);
	CHECK_INT(minimize(&min, &res, &orig, &opts, &ctx, &err), 0);
	CHECK_STR(err.msg, "");
	CHECK_INT(res.exhausted, 1);
	CHECK_STR(res.stopped_by, "time");
	CHECK_INT(res.schedules, 1);
	CHECK_INT(ctx.runs, 1);
	CHECK_INT(res.to, res.from);
	CHECK(min.steps == NULL);
	/* no limit (< 0) searches to the end */
	ctx.runs = 0;
	opts.max_seconds = -1;
	CHECK_INT(minimize(&min, &res, &orig, &opts, &ctx, &err), 1);
	CHECK(res.stopped_by == NULL);
	CHECK_INT(res.to, 1);
	ploom_run_release(&min);
	ploom_run_release(&orig);
}

/* Past the work lists' limit the levels above are searched in part: none
 * found then proves nothing, and a run found above a level searched in
 * part may not have the fewest preemptions; both say "memory". */
static void the_memory_limit_leaves_work_out_and_says_so(void)
{
	struct sim_ctx ctx = {sim_find("bank without the lock"), 0, 0, 0, 0, NULL, 0};
	struct ploom_minimize_opts opts = {0};
	struct ploom_minimize_result res;
	struct ploom_run orig = {0}, min = {0};
	struct ploom_err err = {0, ""};

	/* room for no work item: level 1 is empty, level 0 passes */
	opts.max_work_bytes = 1;
	find_failure(&orig, ctx.sc, 0);
	CHECK_INT(orig.preemptions, 2);
	CHECK_INT(minimize(&min, &res, &orig, &opts, &ctx, &err), 0);
	CHECK_STR(err.msg, "");
	CHECK_INT(res.exhausted, 1);
	CHECK_STR(res.stopped_by, "memory");
	CHECK_INT(res.to, 2);
	CHECK_INT(res.schedules, 3);
	CHECK(min.steps == NULL);
	/* the default limit holds the whole search: the fewest, proven */
	opts.max_work_bytes = 0;
	CHECK_INT(minimize(&min, &res, &orig, &opts, &ctx, &err), 1);
	CHECK(res.stopped_by == NULL);
	CHECK_INT(res.exhausted, 0);
	CHECK_INT(res.to, 1);
	ploom_run_release(&min);
	ploom_run_release(&orig);
}

static void errors_stop_the_search(void)
{
	struct sim_ctx ctx = {sim_find("bank without the lock"), 0, 0, 0, 0, NULL, 0};
	struct ploom_minimize_result res;
	struct ploom_run orig = {0}, pass, min = {0};
	struct ploom_err err = {0, ""};

	find_failure(&orig, ctx.sc, 0);
	sim_run(&pass, ctx.sc, NULL, 0);
	CHECK_INT(pass.outcome.kind, PLOOM_OUTCOME_PASS);
	CHECK_INT(minimize(&min, &res, &pass, NULL, &ctx, &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_INPUT);
	CHECK_STR(err.msg, "the trace does not record a failure");
	CHECK_INT(ctx.runs, 0);

	ctx.fail_after = 2;
	CHECK_INT(minimize(&min, &res, &orig, NULL, &ctx, &err), -1);
	CHECK_STR(err.msg, "the worker died during a schedule (exit status 1)");
	CHECK_INT(res.schedules, 2);

	/* the runs ignore the prefix the search asks for */
	ctx.fail_after = 0;
	ctx.ignore_choices = 1;
	CHECK_INT(minimize(&min, &res, &orig, NULL, &ctx, &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_DIVERGENCE);
	CHECK(min.steps == NULL);
	ploom_run_release(&pass);
	ploom_run_release(&orig);
}

/* ---- with a worker ---- */

/* A failure with 1 preemption (task 1 runs while task 0 could go on). */
static const char one_preemption[] =
	"step 0 0 start thread#1 0 - - -\n"
	"step 1 1 begin - 0,1 - 0:yield_now:- -\n"
	"outcome failure 1 =builtins.AssertionError =boom =\n"
	"exit code 0\n"
	"done 2\n";

/* The same failure with 2. */
static const char two_preemptions[] =
	"step 0 0 start thread#1 0 - - -\n"
	"step 1 1 begin - 0,1 - 0:yield_now:- -\n"
	"step 2 0 yield_now - 0,1 - 1:yield_now:- -\n"
	"outcome failure 0 =builtins.AssertionError =boom =\n"
	"exit code 0\n"
	"done 3\n";

/* The same failure with none: what the stand-in worker answers. */
static const char no_preemption[] =
	"step 0 0 start thread#1 0 - - -\n"
	"step 1 0 yield_now - 0,1 - 1:yield_now:- -\n"
	"step 2 1 begin - 1 - - -\n"
	"value 2 =42\n"
	"outcome failure 1 =builtins.AssertionError =boom =Traceback\n"
	"exit code 0\n"
	"done 3\n";

static struct ploom_trace *recorded(const char *records)
{
	struct ploom_trace *t = fake_trace("mod.py:fn", "mod", "fn", "/x/mod.py", "7", 500, 2.5,
					   records);

	ploom_trace_add_fingerprint(t, "/x/mod.py", "fd814f41df2601f1b05e8b0f49455b43b669cf89",
				    NULL);
	return t;
}

static struct ploom_worker *start(const char *py)
{
	struct ploom_worker *w = NULL;
	struct ploom_err err = {0, ""};

	if (!CHECK_INT(fake_start(&w, py, "/x/mod.py:fn", "7", &err), 0))
		printf("  %s\n", err.msg);
	return w;
}

static void a_worker_trace_keeps_the_original_id_target_and_fingerprints(void)
{
	char *dir = fake_dir("minimize"), *py = fake_worker(dir, "3.13.2", "/x/mod.py");
	char *run = fake_write(dir, "run.txt", no_preemption, 0), *cmds;
	struct ploom_trace *orig = recorded(one_preemption), *min = NULL;
	struct ploom_minimize_result res;
	struct ploom_worker *w = start(py);
	struct ploom_err err = {0, ""};

	orig->id = strdup("0123456789abcdef");
	CHECK_INT(ploom_minimize_trace(&min, &res, orig, w, NULL, &err), 0);
	CHECK_STR(err.msg, "");
	if (min) {
		CHECK_INT(min->run.preemptions, 0);
		CHECK_INT(min->minimized_from, 1);
		CHECK_STR(min->id, "0123456789abcdef");
		CHECK_STR(min->scenario.target, "mod.py:fn");
		CHECK_STR(min->python.version, "3.13.2");
		CHECK_STR(min->hash_seed, "7");
		CHECK_INT(min->config.max_steps, 500);
		CHECK_INT(min->nfingerprints, 1);
		CHECK_STR(min->fingerprints[0].blob, "fd814f41df2601f1b05e8b0f49455b43b669cf89");
		CHECK_STR(min->run.steps[2].value, "42");
	}
	CHECK_INT(res.schedules, 1);
	cmds = fake_read(dir, "commands");
	/* bound 0's first schedule: no choices; the trace's steps and timeout */
	CHECK_STR(cmds, "run 500 2500 0 0 default\n");
	free(cmds);
	ploom_trace_free(min);
	ploom_worker_stop(w, NULL);
	ploom_trace_free(orig);
	fake_dir_remove(dir);
	free(run);
	free(py);
	free(dir);
}

static void a_worker_trace_is_the_original_when_none_is_shorter(void)
{
	char *dir = fake_dir("minimize"), *py = fake_worker(dir, "3.13.0", "/x/mod.py");
	char *run = fake_write(dir, "run.txt", one_preemption, 0);
	struct ploom_trace *orig = recorded(two_preemptions), *min = NULL;
	struct ploom_minimize_opts opts = {0};
	struct ploom_minimize_result res;
	struct ploom_worker *w = start(py);
	char *a, *b;

	/* the stand-in's schedules all pass */
	free(run);
	run = fake_write(dir, "run.txt", "outcome pass\nexit code 0\ndone 0\n", 0);
	CHECK_INT(ploom_minimize_trace(&min, &res, orig, w, NULL, NULL), 0);
	CHECK(min && min->run.preemptions == 2 && min->minimized_from == 2);
	/* an id of its own: the original had none */
	CHECK(min && min->id && strlen(min->id) == 16);
	ploom_trace_free(min);
	min = NULL;

	/* one schedule at bound 0, then the budget is spent before bound 1:
	 * a schedule that could have preempted at its second step */
	free(run);
	run = fake_write(dir, "run.txt",
			 "step 0 0 start thread#1 0 - - -\n"
			 "step 1 0 yield_now - 0,1 - 1:begin:- -\n"
			 "outcome pass\nexit code 0\ndone 2\n", 0);
	opts.max_schedules = 1;
	CHECK_INT(ploom_minimize_trace(&min, &res, orig, w, &opts, NULL), 0);
	CHECK_INT(res.exhausted, 1);
	if (min) {
		CHECK_INT(min->minimized_from, -1);
		free(min->id);
		min->id = NULL;
		a = ploom_trace_to_json(orig, NULL);
		b = ploom_trace_to_json(min, NULL);
		CHECK_STR(b, a);
		free(a);
		free(b);
	}
	ploom_trace_free(min);
	ploom_worker_stop(w, NULL);
	ploom_trace_free(orig);
	fake_dir_remove(dir);
	free(run);
	free(py);
	free(dir);
}

/* Where no schedule with fewer preemptions fails, the trace made without
 * the search is the one the search makes. */
static void a_known_minimal_failure_is_the_trace_the_search_would_make(void)
{
	char *dir = fake_dir("minimize"), *py = fake_worker(dir, "3.13.0", "/x/mod.py");
	char *run = fake_write(dir, "run.txt", "outcome pass\nexit code 0\ndone 0\n", 0);
	struct ploom_trace *orig = recorded(two_preemptions), *searched = NULL, *known = NULL;
	struct ploom_minimize_result res;
	struct ploom_worker *w = start(py);
	struct ploom_err err = {0, ""};
	char *a, *b;

	CHECK_INT(ploom_minimize_trace(&searched, &res, orig, w, NULL, NULL), 0);
	CHECK(res.schedules > 0);
	CHECK_INT(ploom_minimize_known_minimal(&known, &res, orig, &err), 0);
	CHECK_INT(res.schedules, 0);
	CHECK_INT(res.from, 2);
	CHECK_INT(res.to, 2);
	CHECK_INT(res.exhausted, 0);
	a = searched ? ploom_trace_to_json(searched, NULL) : NULL;
	b = known ? ploom_trace_to_json(known, NULL) : NULL;
	CHECK(a && b && strstr(b, "\"minimized_from\":\t2") != NULL);
	CHECK_STR(b, a);
	free(a);
	free(b);
	ploom_trace_free(known);
	known = NULL;
	/* a trace that passed is no failure to minimize */
	ploom_trace_free(orig);
	orig = recorded("step 0 0 start thread#1 0 - - -\noutcome pass\nexit code 0\ndone 1\n");
	CHECK_INT(ploom_minimize_known_minimal(&known, &res, orig, &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_INPUT);
	CHECK(known == NULL);
	ploom_trace_free(searched);
	ploom_worker_stop(w, NULL);
	ploom_trace_free(orig);
	fake_dir_remove(dir);
	free(run);
	free(py);
	free(dir);
}

int main(int argc, char **argv)
{
	simworker_main(argc, argv);
	self = simworker_self();
	runs_dir = fake_dir("minimize-runs");
	env_programs = testenv_count("PLOOM_MINIMIZE_PROGRAMS", 300);
	same_failure_compares_what_identifies_the_bug();
	the_bank_failure_found_first_minimizes_to_one_preemption();
	every_failing_schedule_minimizes_to_the_fewest_preemptions(0);
	every_failing_schedule_minimizes_to_the_fewest_preemptions(1);
	the_reduction_searches_fewer_schedules_for_the_same_result();
	generated_failures_minimize_to_the_fewest_preemptions();
	a_minimal_run_is_left_alone_after_the_lower_bounds();
	a_failure_that_does_not_reproduce_is_a_divergence();
	only_the_same_failure_counts();
	the_budget_stops_the_search_and_says_so();
	the_time_budget_stops_the_search_and_says_so();
	the_memory_limit_leaves_work_out_and_says_so();
	errors_stop_the_search();
	a_worker_trace_keeps_the_original_id_target_and_fingerprints();
	a_worker_trace_is_the_original_when_none_is_shorter();
	a_known_minimal_failure_is_the_trace_the_search_would_make();
	drop_kept();
	fake_dir_remove(runs_dir);
	free(runs_dir);
	return check_report();
}
