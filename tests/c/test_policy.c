/* Tests of lib/policy (the choices past a schedule's prefix) on runs of
 * the simulator (sim.h), which asks a policy as the worker does, and of
 * lib/search/sample's strategy without a driver. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/search/explore.h"
#include "../../lib/policy.h"
#include "../../lib/search/sample.h"
#include "../../lib/search.h"
#include "../../lib/trace.h"
#include "check.h"
#include "sim.h"

static struct ploom_policy_spec pct(uint64_t seed, int depth, long k)
{
	return (struct ploom_policy_spec){.kind = PLOOM_POLICY_PCT, .seed = seed, .depth = depth, .k = k};
}

static struct ploom_policy_spec random_policy(uint64_t seed)
{
	return (struct ploom_policy_spec){.kind = PLOOM_POLICY_RANDOM, .seed = seed, .depth = 0, .k = 0};
}

/* The scenario or generated program of case i: the scenarios first, then
 * programs from seeds, which hold locks and joins that block. */
#define NPROGRAMS 300
struct subject {
	const struct sim_scenario *sc;
	struct sim_prog prog;
};

static void subject(struct subject *out, size_t i)
{
	memset(out, 0, sizeof(*out));
	if (i < sim_nscenarios)
		out->sc = &sim_scenarios[i];
	else
		sim_prog_generate(&out->prog, i - sim_nscenarios, 12);
}

static void run_subject(struct ploom_run *run, const struct subject *s,
			const struct ploom_policy_spec *policy)
{
	sim_exec_policy(run, s->sc, s->sc ? NULL : &s->prog, NULL, 0, policy);
}

/* The branch points (1, 2, ... as the policy counts them) where the run
 * switched away from a task that could go on, in bits of *mask (branch
 * points up to 63), and how many there were. */
static int preemption_points(const struct ploom_run *run, uint64_t *mask)
{
	int prev = 0, n = 0;
	long branch = 0;
	size_t i;

	*mask = 0;
	for (i = 0; i < run->nsteps; i++) {
		const struct ploom_step *s = &run->steps[i];
		if (s->nenabled > 1) {
			branch++;
			if (s->task != prev && ploom_step_is_enabled(s, prev)) {
				n++;
				if (branch < 64)
					*mask |= UINT64_C(1) << branch;
			}
		}
		prev = s->task;
	}
	return n;
}

static int same_steps(const struct ploom_run *a, const struct ploom_run *b)
{
	size_t i;

	if (a->nsteps != b->nsteps || a->outcome.kind != b->outcome.kind)
		return 0;
	for (i = 0; i < a->nsteps; i++)
		if (a->steps[i].task != b->steps[i].task)
			return 0;
	return 1;
}

static void a_seed_gives_the_same_choices_and_seeds_differ(void)
{
	size_t i, nsubjects = sim_nscenarios + 50;
	uint64_t seed;
	int kind, differ = 0, bad = 0;

	for (kind = 0; kind < 2; kind++) {
		for (i = 0; i < nsubjects; i++) {
			struct subject sub;
			struct ploom_run first, again, other;

			subject(&sub, i);
			for (seed = 0; seed < 20; seed++) {
				struct ploom_policy_spec p = kind ? pct(seed, 3, 12) : random_policy(seed);
				struct ploom_policy_spec q = p;

				q.seed = seed + 1000;
				run_subject(&first, &sub, &p);
				run_subject(&again, &sub, &p);
				run_subject(&other, &sub, &q);
				bad += !same_steps(&first, &again);
				differ += !same_steps(&first, &other);
				ploom_run_release(&first);
				ploom_run_release(&again);
				ploom_run_release(&other);
			}
		}
	}
	CHECK_INT(bad, 0);
	/* the seed matters: most pairs of seeds give other schedules */
	CHECK(differ > (int)nsubjects * 20);
}

/* The one guarantee ploom's pct adds to the paper's: it switches away
 * from a task that could go on only at a change point, even where a
 * release or a start enables a task of higher priority, so a run with
 * depth d has at most d - 1 preemptions, and none with depth 1. */
static void pct_with_depth_d_preempts_at_most_d_minus_1_times(void)
{
	size_t i, nsubjects = sim_nscenarios + NPROGRAMS;
	int depth, most[5] = {0}, over = 0;
	uint64_t seed;

	for (depth = 1; depth <= 4; depth++) {
		for (i = 0; i < nsubjects; i++) {
			struct subject sub;

			subject(&sub, i);
			for (seed = 0; seed < 40; seed++) {
				struct ploom_policy_spec p = pct(seed * 7919 + i, depth, 1 + (long)(seed % 24));
				struct ploom_run run;
				uint64_t mask;
				int n;

				run_subject(&run, &sub, &p);
				n = preemption_points(&run, &mask);
				if (n != ploom_run_count_preemptions(&run))
					over++;
				if (n > depth - 1) {
					if (over++ < 5)
						printf("  %s, seed %llu, depth %d: %d preemptions\n",
						       sub.sc ? sub.sc->name : "a program",
						       (unsigned long long)p.seed, depth, n);
				}
				if (n > most[depth])
					most[depth] = n;
				ploom_run_release(&run);
			}
		}
	}
	CHECK_INT(over, 0);
	CHECK_INT(most[1], 0);
	/* and the bound is reached: the change points do preempt */
	CHECK_INT(most[2], 1);
	CHECK_INT(most[3], 2);
	CHECK_INT(most[4], 3);
}

/* Three tasks that are always enabled: every branch point has all three,
 * so the priorities alone decide. */
static void change_points_switch_exactly_where_they_are(void)
{
	int cand[] = {0, 1, 2}, bad = 0, switched_first = 0, tried = 0;
	uint64_t seed;

	for (seed = 0; seed < 300; seed++) {
		struct ploom_policy p;
		struct ploom_err err = {0, ""};
		uint64_t change = 0;
		long b, first = 0;
		int prev = 0, c, i;

		if (!CHECK_INT(ploom_policy_init(&p, &(struct ploom_policy_spec){.kind = PLOOM_POLICY_PCT, .seed = seed, .depth = 4, .k = 12},
						 &err), 0))
			break;
		for (i = 0; i < 3; i++)
			CHECK_INT(ploom_policy_add_task(&p, i, &err), 0);
		for (i = 0; i < 3; i++) {
			CHECK(p.change[i] >= 1 && p.change[i] <= 12);
			change |= UINT64_C(1) << p.change[i];
			if (!first || p.change[i] < first)
				first = p.change[i];
		}
		for (b = 1; b <= 12; b++) {
			c = ploom_policy_choose(&p, b - 1, cand, 3, prev);
			if (c != prev && !(change >> b & 1))
				bad++;
			/* at the first change point the two others still have
			 * their first priorities, above the one that dropped */
			if (b == first) {
				tried++;
				switched_first += c != prev;
			}
			prev = c;
		}
		CHECK_INT(p.branch, 12);
		ploom_policy_release(&p);
	}
	CHECK_INT(bad, 0);
	CHECK_INT(switched_first, tried);
	CHECK_INT(tried, 300);
}

/* The same on the simulator's runs: every preemption of a pct run is at
 * one of its change points, which the seed alone gives. */
static void preemptions_of_runs_are_at_change_points(void)
{
	size_t i, nsubjects = sim_nscenarios + 100;
	int bad = 0, seen = 0;
	uint64_t seed;

	for (i = 0; i < nsubjects; i++) {
		struct subject sub;

		subject(&sub, i);
		for (seed = 0; seed < 30; seed++) {
			struct ploom_policy_spec spec = pct(seed + 100 * i, 3, 16);
			struct ploom_policy drawn;
			struct ploom_run run;
			uint64_t mask, change;

			if (ploom_policy_init(&drawn, &spec, NULL) < 0)
				abort();
			change = UINT64_C(1) << drawn.change[0] | UINT64_C(1) << drawn.change[1];
			ploom_policy_release(&drawn);
			run_subject(&run, &sub, &spec);
			seen += preemption_points(&run, &mask) > 0;
			if (mask & ~change)
				bad++;
			ploom_run_release(&run);
		}
	}
	CHECK_INT(bad, 0);
	CHECK(seen > 0);
}

static void a_new_task_takes_a_random_rank_among_the_first_priorities(void)
{
	int above[3] = {0, 0, 0};
	uint64_t seed;
	int i;

	/* with tasks 0 and 1 ranked, task 2 takes one of three places */
	for (seed = 0; seed < 3000; seed++) {
		struct ploom_policy p;

		if (ploom_policy_init(&p, &(struct ploom_policy_spec){.kind = PLOOM_POLICY_PCT, .seed = seed, .depth = 1, .k = 0},
				      NULL) < 0)
			abort();
		for (i = 0; i < 3; i++)
			CHECK_INT(ploom_policy_add_task(&p, i, NULL), 0);
		CHECK_INT(p.nband, 3);
		for (i = 0; i < 3; i++)
			if (p.band[i] == 2)
				above[i]++;
		ploom_policy_release(&p);
	}
	for (i = 0; i < 3; i++)
		if (!CHECK(above[i] > 900 && above[i] < 1100))
			printf("  place %d: %d of 3000\n", i, above[i]);
	/* ids come in order */
	{
		struct ploom_policy p;
		struct ploom_err err = {0, ""};

		CHECK_INT(ploom_policy_init(&p, &(struct ploom_policy_spec){.kind = PLOOM_POLICY_PCT, .seed = 1, .depth = 2, .k = 5},
					    &err), 0);
		CHECK_INT(ploom_policy_add_task(&p, 1, &err), -1);
		CHECK_STR(err.msg, "task 1 is added where task 0 was expected");
		ploom_policy_release(&p);
	}
}

static void random_picks_every_enabled_task_uniformly(void)
{
	const struct sim_scenario *sc = sim_find("counter3");
	int chosen[8] = {0}, enabled[8] = {0}, missing = 0, i;
	long counts[5] = {0};
	unsigned short x[3];
	uint64_t seed;

	/* every task enabled at a branch point is picked there by some seed */
	for (seed = 0; seed < 200; seed++) {
		struct ploom_policy_spec p = random_policy(seed);
		struct ploom_run run;
		size_t s, k;

		sim_exec_policy(&run, sc, NULL, NULL, 0, &p);
		for (s = 0; s < run.nsteps; s++) {
			if (run.steps[s].nenabled < 3)
				continue;
			for (k = 0; k < run.steps[s].nenabled; k++)
				enabled[run.steps[s].enabled[k]] = 1;
			chosen[run.steps[s].task] = 1;
			break;
		}
		ploom_run_release(&run);
	}
	for (i = 0; i < 8; i++)
		missing += enabled[i] && !chosen[i];
	CHECK_INT(missing, 0);
	CHECK_INT(enabled[0] + enabled[1] + enabled[2] + enabled[3], 4);
	/* and the draws below n are uniform */
	ploom_policy_seed_state(x, 12345);
	for (i = 0; i < 50000; i++)
		counts[ploom_policy_below(x, 5)]++;
	for (i = 0; i < 5; i++)
		if (!CHECK(counts[i] > 9600 && counts[i] < 10400))
			printf("  %d: %ld of 50000\n", i, counts[i]);
	CHECK_INT(ploom_policy_below(x, 1), 0);
}

/* The most branch points of any schedule of sc, by an exhaustive search. */
static long longest_schedule(const struct sim_scenario *sc)
{
	struct ploom_explore *ex = NULL;
	struct ploom_run run;
	const int *prefix;
	long most = 0, branch;
	size_t n, i;
	int r;

	if (ploom_explore_new(&ex, -1, NULL) < 0)
		abort();
	do {
		prefix = ploom_explore_prefix(ex, &n);
		sim_run(&run, sc, prefix, n);
		for (branch = 0, i = 0; i < run.nsteps; i++)
			branch += run.steps[i].nenabled > 1;
		if (branch > most)
			most = branch;
		r = ploom_explore_next(ex, &run, NULL);
		ploom_run_release(&run);
	} while (r == 1);
	ploom_explore_free(ex);
	return most;
}

/* The paper's bound for a bug of depth d, 1/(n k^(d-1)) per run, holds for
 * ploom's pct on the failing scenarios of REFERENCE.md: each needs one
 * preemption (an atomicity violation, a deadlock of two locks), depth 2
 * in the paper's terms, with n = 3 tasks and k the most branch points of
 * a schedule.  docs/sampling.rst quotes these numbers. */
static void pct_finds_depth_2_bugs_at_least_as_often_as_the_bound_says(void)
{
	static const char *const names[] = {"bank without the lock", "abba", "racy_counter2"};
	const long runs = 4000;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct sim_scenario *sc = sim_find(names[i]);
		long k = longest_schedule(sc), found = 0, r;
		double bound = 1.0 / (3.0 * (double)k);

		for (r = 0; r < runs; r++) {
			struct ploom_policy_spec p = pct((uint64_t)r * 2654435761u, 2, k);
			struct ploom_run run;

			sim_exec_policy(&run, sc, NULL, NULL, 0, &p);
			found += ploom_outcome_is_failure(run.outcome.kind);
			ploom_run_release(&run);
		}
		printf("  %s: n 3, k %ld, d 2: bound %.4f, found in %.4f of %ld runs\n", names[i], k,
		       bound, (double)found / (double)runs, runs);
		CHECK((double)found / (double)runs >= bound);
		/* and depth 1, no preemption at all, never finds them */
		for (found = 0, r = 0; r < 500; r++) {
			struct ploom_policy_spec p = pct((uint64_t)r, 1, k);
			struct ploom_run run;

			sim_exec_policy(&run, sc, NULL, NULL, 0, &p);
			found += ploom_outcome_is_failure(run.outcome.kind);
			ploom_run_release(&run);
		}
		CHECK_INT(found, 0);
	}
}

static void bad_specs_are_refused(void)
{
	struct ploom_policy p;
	struct ploom_err err = {0, ""};

	CHECK_INT(ploom_policy_init(&p, &(struct ploom_policy_spec){.kind = PLOOM_POLICY_PCT, .seed = 1, .depth = 0, .k = 5}, &err),
		  -1);
	CHECK_STR(err.msg, "bad policy: the depth is not from 1 to 1000");
	ploom_policy_release(&p);
	CHECK_INT(ploom_policy_init(&p, &(struct ploom_policy_spec){.kind = PLOOM_POLICY_RANDOM, .seed = PLOOM_POLICY_MAX_SEED + 1, .depth = 0, .k = 0},
				    &err), -1);
	CHECK_STR(err.msg, "bad policy: the seed is above 2^48 - 1");
	ploom_policy_release(&p);
	CHECK_STR(ploom_policy_name(PLOOM_POLICY_PCT), "pct");
	CHECK_INT(ploom_policy_parse_name("random", 6), PLOOM_POLICY_RANDOM);
	CHECK_INT(ploom_policy_parse_name("rand", 4), -1);
	/* the default policy is DESIGN.md's default choice */
	CHECK_INT(ploom_policy_init(&p, &(struct ploom_policy_spec){.kind = 0, .seed = 0, .depth = 0, .k = 0}, &err), 0);
	CHECK_INT(ploom_policy_choose(&p, 0, (int[]){0, 2, 3}, 3, 2), 2);
	CHECK_INT(ploom_policy_choose(&p, 1, (int[]){1, 3}, 2, 2), 1);
	ploom_policy_release(&p);
}

/* ---- lib/search/sample ---- */

/* f(SEED, i) as sample.h states it, from libc's srand48() and lrand48(),
 * which draw from the same generator as nrand48(). */
static uint64_t documented_seed(unsigned long seed, long i)
{
	uint64_t v = 0;
	long j;

	srand48((long)seed);
	for (j = 0; j < 3 * i; j++)
		(void)lrand48();
	for (j = 0; j < 3; j++)
		v = v << 16 | (uint64_t)(lrand48() >> 15);
	return v;
}

static void schedule_seeds_are_the_documented_ones(void)
{
	static const unsigned long seeds[] = {0, 1, 42, PLOOM_SAMPLE_MAX_SEED};
	size_t s;
	long i;

	for (s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++) {
		struct ploom_seed_stream st;

		ploom_seed_stream_init(&st, seeds[s]);
		for (i = 0; i < 50; i++) {
			uint64_t got = ploom_seed_stream_next(&st);
			if (!CHECK(got == documented_seed(seeds[s], i)))
				break;
			CHECK(got <= PLOOM_POLICY_MAX_SEED);
		}
	}
}

/* A run of n steps with two enabled tasks at b of them. */
static void fake_run(struct ploom_run *run, int b)
{
	int i;

	memset(run, 0, sizeof(*run));
	for (i = 0; i < b + 1; i++) {
		struct ploom_step *st = ploom_run_add_step(run);
		st->task = 0;
		st->nenabled = i < b ? 2 : 1;
		st->enabled = malloc(2 * sizeof(int));
		st->enabled[0] = 0;
		st->enabled[1] = 1;
	}
}

static void parts_take_every_nth_schedule_below_the_limit(void)
{
	struct ploom_sample_opts o = {PLOOM_POLICY_PCT, 7, 3, 10, 3};
	struct ploom_strategy *part[4] = {NULL};
	struct ploom_seed_stream st;
	uint64_t want[10];
	int w, runs[3] = {0}, r;
	long index, k[3] = {0};
	double left = 0;
	size_t n;

	ploom_seed_stream_init(&st, 7);
	for (index = 0; index < 10; index++)
		want[index] = ploom_seed_stream_next(&st);
	CHECK_INT(ploom_sample_strategy_new(&part[0], &o, NULL), 0);
	CHECK(part[0]->ops->samples);
	CHECK_STR(part[0]->ops->name, "pct");
	CHECK(part[0]->ops->left(part[0]) == 1);
	for (w = 1; w < 3; w++) {
		CHECK_INT(part[0]->ops->split_depth(part[0]), 0);
		CHECK_INT(part[0]->ops->split(&part[w], part[0], NULL), 1);
	}
	CHECK_INT(part[0]->ops->split_depth(part[0]), -1);
	CHECK_INT(part[0]->ops->split(&part[3], part[0], NULL), 0);
	CHECK_INT(part[1]->ops->split_depth(part[1]), -1);
	for (w = 0; w < 3; w++)
		left += part[w]->ops->left(part[w]);
	CHECK(left > 0.999999 && left < 1.000001);
	/* part w runs schedules w, w + 3, ... below 10, each with its seed, an
	 * empty prefix, and k the most branch points its own runs had */
	for (w = 0; w < 3; w++) {
		for (index = w, r = 1; r == 1; index += 3) {
			const struct ploom_policy_spec *p = part[w]->ops->policy(part[w]);
			struct ploom_run run;

			CHECK(part[w]->ops->prefix(part[w], &n) == NULL && n == 0);
			CHECK(p->seed == want[index]);
			CHECK_INT(p->kind, PLOOM_POLICY_PCT);
			CHECK_INT(p->depth, 3);
			CHECK_INT(p->k, k[w]);
			fake_run(&run, (int)(index * 2 % 7));
			if (index * 2 % 7 > k[w])
				k[w] = index * 2 % 7;
			r = part[w]->ops->next(part[w], &run, NULL);
			ploom_run_release(&run);
			runs[w]++;
		}
		CHECK_INT(r, 0);
		ploom_strategy_free(part[w]);
	}
	CHECK_INT(runs[0], 4);
	CHECK_INT(runs[1], 3);
	CHECK_INT(runs[2], 3);
}

static void bad_sample_options_are_refused(void)
{
	struct ploom_sample_opts o = {PLOOM_POLICY_DEFAULT, 0, 3, 10, 1};
	struct ploom_strategy *s = NULL;
	struct ploom_err err = {0, ""};

	CHECK_INT(ploom_sample_strategy_new(&s, &o, &err), -1);
	CHECK_STR(err.msg, "a sample is pct or random, not 'default'");
	o.kind = PLOOM_POLICY_PCT;
	o.depth = 0;
	CHECK_INT(ploom_sample_strategy_new(&s, &o, &err), -1);
	CHECK_STR(err.msg, "pct depth 0 is not from 1 to 1000");
	CHECK(s == NULL);
	/* random has no depth; without a limit it has no left() */
	o = (struct ploom_sample_opts){PLOOM_POLICY_RANDOM, 5, 0, 0, 1};
	CHECK_INT(ploom_sample_strategy_new(&s, &o, &err), 0);
	CHECK_STR(s->ops->name, "random");
	CHECK(s->ops->left == NULL);
	CHECK_INT(s->ops->policy(s)->kind, PLOOM_POLICY_RANDOM);
	ploom_strategy_free(s);
}

/* follow: the recorded step's task where it is a candidate, else the
 * default (the previous step's task, else the lowest), and the default
 * past the recorded steps. */
static void follow_takes_the_recorded_task_where_it_can(void)
{
	int rec[] = {1, 2, 0, 2};
	struct ploom_policy p;
	struct ploom_err err = {0, ""};
	int i;

	CHECK_INT(ploom_policy_init(&p, &(struct ploom_policy_spec){.kind = PLOOM_POLICY_FOLLOW,
								    .follow = rec, .nfollow = 4},
				    &err), 0);
	for (i = 0; i < 3; i++)
		CHECK_INT(ploom_policy_add_task(&p, i, &err), 0);
	CHECK_INT(ploom_policy_choose(&p, 0, (int[]){0, 1, 2}, 3, 0), 1);
	/* not a candidate: the previous task goes on */
	CHECK_INT(ploom_policy_choose(&p, 1, (int[]){0, 1}, 2, 1), 1);
	/* nor the previous one: the lowest */
	CHECK_INT(ploom_policy_choose(&p, 3, (int[]){0, 1}, 2, 2), 0);
	CHECK_INT(ploom_policy_choose(&p, 2, (int[]){0, 2}, 2, 2), 0);
	/* past the recorded steps */
	CHECK_INT(ploom_policy_choose(&p, 4, (int[]){0, 2}, 2, 2), 2);
	CHECK_INT(ploom_policy_choose(&p, 9, (int[]){1, 2}, 2, 0), 1);
	ploom_policy_release(&p);
	CHECK_STR(ploom_policy_name(PLOOM_POLICY_FOLLOW), "follow");
	rec[1] = -1;
	CHECK_STR(ploom_policy_problem(&(struct ploom_policy_spec){.kind = PLOOM_POLICY_FOLLOW,
								   .follow = rec, .nfollow = 4}),
		  "a step to follow has no task");
}

int main(void)
{
	a_seed_gives_the_same_choices_and_seeds_differ();
	pct_with_depth_d_preempts_at_most_d_minus_1_times();
	change_points_switch_exactly_where_they_are();
	preemptions_of_runs_are_at_change_points();
	a_new_task_takes_a_random_rank_among_the_first_priorities();
	random_picks_every_enabled_task_uniformly();
	pct_finds_depth_2_bugs_at_least_as_often_as_the_bound_says();
	bad_specs_are_refused();
	schedule_seeds_are_the_documented_ones();
	parts_take_every_nth_schedule_below_the_limit();
	bad_sample_options_are_refused();
	follow_takes_the_recorded_task_where_it_can();
	return check_report();
}
