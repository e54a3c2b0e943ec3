/* Tests of lib/explore: the simulator of the scenario semantics (sim.h)
 * produces the runs that drive the search, and every count of
 * REFERENCE.md must come out exactly. */
#include <stdlib.h>
#include <string.h>

#include "../../lib/explore.h"
#include "../../lib/trace.h"
#include "check.h"
#include "sim.h"

/* Explores the scenario exhaustively with the bound and counts. */
static int explore_count(const struct sim_scenario *sc, int bound, long *out_failing)
{
	struct ploom_explore *ex = NULL;
	struct ploom_run run;
	struct ploom_err err = {0, ""};
	const int *prefix;
	size_t n;
	long schedules = 0;
	int r;

	*out_failing = 0;
	if (ploom_explore_new(&ex, bound, &err) < 0)
		return -1;
	do {
		prefix = ploom_explore_prefix(ex, &n);
		sim_run(&run, sc, prefix, n);
		schedules++;
		if (ploom_outcome_is_failure(run.outcome.kind))
			(*out_failing)++;
		r = ploom_explore_next(ex, &run, &err);
		ploom_run_release(&run);
	} while (r == 1);
	ploom_explore_free(ex);
	if (r < 0) {
		printf("explore error: %s\n", err.msg);
		return -1;
	}
	return (int)schedules;
}

static void explore_counts_match_reference(void)
{
	size_t i;
	int b;

	for (i = 0; i < sim_nscenarios; i++) {
		for (b = 0; b < 4; b++) {
			const struct sim_scenario *sc = &sim_scenarios[i];
			long failing, schedules;
			schedules = explore_count(sc, b - 1, &failing);
			if (!CHECK_INT(schedules, sc->want[b][0]) ||
			    !CHECK_INT(failing, sc->want[b][1]))
				printf("  (%s, max_preemptions %d)\n", sc->name, b - 1);
		}
	}
}

static void first_schedule_takes_the_default_choices(void)
{
	struct ploom_explore *ex = NULL;
	struct ploom_run run;
	size_t n;

	CHECK(ploom_explore_new(&ex, -1, NULL) == 0);
	ploom_explore_prefix(ex, &n);
	CHECK_INT(n, 0);
	/* the bank's default schedule: main starts both, keeps running until
	 * it blocks on join, then thread 1 runs to the end, then thread 2 */
	sim_run(&run, sim_find("bank without the lock"), NULL, 0);
	CHECK_INT(run.preemptions, 0);
	CHECK_INT(run.outcome.kind, PLOOM_OUTCOME_PASS);
	CHECK_STR(run.outcome.summary, "pass");
	CHECK_INT(run.steps[0].task, 0);
	CHECK_STR(run.steps[0].op, "start");
	CHECK_STR(run.steps[0].object, "thread#1");
	CHECK(ploom_explore_next(ex, &run, NULL) == 1);
	ploom_run_release(&run);
	ploom_explore_free(ex);
}

static void second_schedule_backtracks_at_the_deepest_branch(void)
{
	struct ploom_explore *ex = NULL;
	struct ploom_run run;
	const int *prefix;
	size_t n, i;

	CHECK(ploom_explore_new(&ex, -1, NULL) == 0);
	sim_run(&run, sim_find("racy_counter2"), NULL, 0);
	CHECK(ploom_explore_next(ex, &run, NULL) == 1);
	prefix = ploom_explore_prefix(ex, &n);
	/* same choices as the first run up to the last branch, then another */
	CHECK(n >= 1 && n <= run.nchoices);
	for (i = 0; n && i + 1 < n; i++)
		CHECK_INT(prefix[i], run.choices[i]);
	CHECK(n && prefix[n - 1] != run.choices[n - 1]);
	ploom_run_release(&run);
	ploom_explore_free(ex);
}

static void a_run_that_ignores_the_prefix_is_a_divergence(void)
{
	struct ploom_explore *ex = NULL;
	struct ploom_err err = {0, ""};
	struct ploom_run run;
	size_t n;

	CHECK(ploom_explore_new(&ex, -1, NULL) == 0);
	sim_run(&run, sim_find("racy_counter2"), NULL, 0);
	CHECK(ploom_explore_next(ex, &run, NULL) == 1);
	ploom_explore_prefix(ex, &n);
	CHECK(n > 0);
	/* the first schedule again: it does not follow the new prefix */
	CHECK(ploom_explore_next(ex, &run, &err) == -1);
	CHECK_INT(err.code, 4);
	CHECK(strstr(err.msg, "was asked for") != NULL);
	ploom_run_release(&run);
	ploom_explore_free(ex);
}

static void preemptions_are_counted_against_the_previous_task(void)
{
	struct ploom_run run;
	int choices[] = {1};

	/* racy_counter2: at the first branch (after main started thread 1)
	 * picking task 1 switches away from main, which is still enabled */
	sim_run(&run, sim_find("racy_counter2"), choices, 1);
	CHECK_INT(run.choices[0], 1);
	CHECK(run.preemptions >= 1);
	ploom_run_release(&run);
}

static void a_deadlock_schedule_replays_from_its_choices(void)
{
	struct ploom_explore *ex = NULL;
	struct ploom_run run, again;
	const int *prefix;
	size_t n;
	int found = 0, r = 1;

	/* abba: search to the first deadlock, then run its choices again */
	CHECK(ploom_explore_new(&ex, -1, NULL) == 0);
	while (r == 1 && !found) {
		prefix = ploom_explore_prefix(ex, &n);
		sim_run(&run, sim_find("abba"), prefix, n);
		if (run.outcome.kind == PLOOM_OUTCOME_DEADLOCK) {
			found = 1;
			sim_run(&again, sim_find("abba"), run.choices, run.nchoices);
			CHECK_INT(again.outcome.kind, PLOOM_OUTCOME_DEADLOCK);
			CHECK_INT(again.nsteps, run.nsteps);
			CHECK_INT(again.preemptions, run.preemptions);
			ploom_run_release(&again);
		}
		r = ploom_explore_next(ex, &run, NULL);
		ploom_run_release(&run);
	}
	CHECK(found);
	ploom_explore_free(ex);
}

int main(void)
{
	first_schedule_takes_the_default_choices();
	second_schedule_backtracks_at_the_deepest_branch();
	a_run_that_ignores_the_prefix_is_a_divergence();
	preemptions_are_counted_against_the_previous_task();
	a_deadlock_schedule_replays_from_its_choices();
	explore_counts_match_reference();
	return check_report();
}
