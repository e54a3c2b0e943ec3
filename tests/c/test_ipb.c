/* Tests of lib/search/ipb against the depth-first search of lib/search/explore, through
 * the simulator (sim.h): on REFERENCE.md's scenarios and on generated
 * programs (PLOOM_IPB_PROGRAMS of them, 600 by default; PLOOM_IPB_SEED=N
 * runs that one alone), with and without a preemption bound, on one
 * worker and on several simulated ones,
 *
 * - the search runs exactly the schedules of the depth-first search with
 *   the same bound, each once (the same sorted list of choice vectors);
 * - every run makes the preemptions of the level under way, and the
 *   levels never go down, across workers too;
 * - so the first failing run has the fewest preemptions of any failing
 *   schedule;
 * - with one worker, each level runs in the order of DFS with that level as
 *   its bound, and so the schedules run up to the first failure are no more
 *   than those of DFS with the bounds 0, 1, ... one after another until one
 *   fails, and fewer when the failure needs a preemption;
 * - the weight left (the progress estimate) starts at 1, loses the
 *   weight of each schedule as it comes back (the product of 1 / the
 *   children of its branch points), nothing when a part is split, and is
 *   0 exactly at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/search/explore.h"
#include "../../lib/search/ipb.h"
#include "../../lib/search.h"
#include "../../lib/trace.h"
#include "check.h"
#include "sim.h"
#include "testenv.h"

/* What the environment asks (testenv.h), read first in main():
 * PLOOM_IPB_PROGRAMS, 0 for each test's default, and PLOOM_IPB_SEED, the
 * one program to run alone. */
static long env_programs;
static int env_has_seed;
static unsigned long env_seed;

/* ---- the runs of a search ---- */

/* The choice vectors of runs as strings "1,0,2", in the order run, with
 * what the tests ask of each. */
struct runs {
	char **v;
	int *preemptions;
	int *level;             /* ploom_ipb_level() before the run; -1 for DFS */
	int *failed;
	size_t n, cap;
	int error;              /* a search call failed */
	int capped;             /* the search was stopped before its end */
	int left_end_not_0;     /* it was not 0 at the end, or 0 before it */
	int left_off;           /* a run took off another weight than its own */
	double first_left;
};

static void runs_add(struct runs *rs, const struct ploom_run *run, int level)
{
	char *s = malloc(run->nchoices * 12 + 1), *p = s;
	size_t i;

	if (!s)
		abort();
	*p = '\0';
	for (i = 0; i < run->nchoices; i++)
		p += sprintf(p, i ? ",%d" : "%d", run->choices[i]);
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? 2 * rs->cap : 256;
		rs->v = realloc(rs->v, rs->cap * sizeof(*rs->v));
		rs->preemptions = realloc(rs->preemptions, rs->cap * sizeof(int));
		rs->level = realloc(rs->level, rs->cap * sizeof(int));
		rs->failed = realloc(rs->failed, rs->cap * sizeof(int));
		if (!rs->v || !rs->preemptions || !rs->level || !rs->failed)
			abort();
	}
	rs->v[rs->n] = s;
	rs->preemptions[rs->n] = run->preemptions;
	rs->level[rs->n] = level;
	rs->failed[rs->n] = ploom_outcome_is_failure(run->outcome.kind);
	rs->n++;
}

static void runs_release(struct runs *rs)
{
	size_t i;

	for (i = 0; i < rs->n; i++)
		free(rs->v[i]);
	free(rs->v);
	free(rs->preemptions);
	free(rs->level);
	free(rs->failed);
	memset(rs, 0, sizeof(*rs));
}

static long runs_failing(const struct runs *rs)
{
	long k = 0;
	size_t i;

	for (i = 0; i < rs->n; i++)
		k += rs->failed[i];
	return k;
}

/* The preemptions of the first failing run, or -1. */
static int first_failure(const struct runs *rs)
{
	size_t i;

	for (i = 0; i < rs->n; i++)
		if (rs->failed[i])
			return rs->preemptions[i];
	return -1;
}

/* The fewest preemptions of a failing run, or -1. */
static int fewest_failing(const struct runs *rs)
{
	int best = -1;
	size_t i;

	for (i = 0; i < rs->n; i++)
		if (rs->failed[i] && (best < 0 || rs->preemptions[i] < best))
			best = rs->preemptions[i];
	return best;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* 1 when a and b hold the same vectors, each as many times. */
static int same_schedules(const struct runs *a, const struct runs *b)
{
	char **x, **y;
	size_t i;
	int same = a->n == b->n;

	if (!same)
		return 0;
	x = malloc((a->n + 1) * sizeof(*x));
	y = malloc((b->n + 1) * sizeof(*y));
	if (!x || !y)
		abort();
	memcpy(x, a->v, a->n * sizeof(*x));
	memcpy(y, b->v, b->n * sizeof(*y));
	qsort(x, a->n, sizeof(*x), cmp_str);
	qsort(y, b->n, sizeof(*y), cmp_str);
	for (i = 0; same && i < a->n; i++)
		same = !strcmp(x[i], y[i]);
	free(x);
	free(y);
	return same;
}

/* 1 when the preemptions of every run are its level and never go down. */
static int in_level_order(const struct runs *rs)
{
	size_t i;

	for (i = 0; i < rs->n; i++) {
		if (rs->preemptions[i] != rs->level[i])
			return 0;
		if (i && rs->preemptions[i] < rs->preemptions[i - 1])
			return 0;
	}
	return 1;
}

/* ---- the searches, over a scenario (sc) or a generated program ---- */

struct target {
	const struct sim_scenario *sc;
	const struct sim_prog *prog;
};

static void run_one(struct ploom_run *run, const struct target *t, const int *prefix, size_t n)
{
	sim_exec(run, t->sc, t->prog, prefix, n, NULL, 0, NULL);
}

/* Depth-first search with the bound, stopped after cap runs (0: none). */
static void dfs_runs(struct runs *out, const struct target *t, int bound, long cap)
{
	struct ploom_explore *ex = NULL;
	struct ploom_run run;
	const int *prefix;
	size_t n;
	int r;

	memset(out, 0, sizeof(*out));
	if (ploom_explore_new(&ex, bound, NULL) < 0)
		abort();
	do {
		prefix = ploom_explore_prefix(ex, &n);
		run_one(&run, t, prefix, n);
		runs_add(out, &run, -1);
		r = ploom_explore_next(ex, &run, NULL);
		ploom_run_release(&run);
		if (r == 1 && cap && (long)out->n >= cap) {
			out->capped = 1;
			break;
		}
	} while (r == 1);
	out->error = r < 0;
	ploom_explore_free(ex);
}

#define MAX_SIM_WORKERS 8

/* The weight of run's schedule in the tree of the search with the bound
 * (estimate.h): 1 / the children of each branch point on its path, the
 * default and the alternatives within the bound, as explore.h counts
 * preemptions. */
static double leaf_weight(const struct ploom_run *run, int bound)
{
	double w = 1;
	size_t i, k;
	int prev = 0, pre = 0;

	for (i = 0; i < run->nsteps; i++) {
		const struct ploom_step *st = &run->steps[i];
		int prev_enabled = ploom_step_is_enabled(st, prev), children = 1;
		for (k = 0; k < st->nenabled; k++) {
			int a = st->enabled[k];
			if (a != st->task && (bound < 0 || pre + (prev_enabled && a != prev) <= bound))
				children++;
		}
		w /= children;
		pre += st->task != prev && prev_enabled;
		prev = st->task;
	}
	return w;
}

/* 1 when the weights a and b differ by more than rounding. */
static int weights_differ(double a, double b)
{
	double d = a > b ? a - b : b - a;

	return d > 1e-12 + 1e-9 * (a > b ? a : b);
}

/* The weight the parts have left. */
static double parts_left(struct ploom_ipb *const *unit, int nworkers)
{
	double left = 0;
	int w;

	for (w = 0; w < nworkers; w++)
		if (unit[w])
			left += ploom_ipb_left(unit[w]);
	return left;
}

/* Iterative preemption bounding with nworkers simulated workers, as the
 * search driver runs it: each worker has a part of the search (its run in
 * flight) or none; a worker without one splits the part with the
 * shallowest split; which run comes back next is drawn from the seed. */
static void ipb_runs(struct runs *out, const struct target *t, int bound, int nworkers,
		     unsigned seed)
{
	struct ploom_ipb *unit[MAX_SIM_WORKERS] = {0};
	struct ploom_err err = {0, ""};
	struct ploom_run run;
	double left, last_left;
	int w;

	memset(out, 0, sizeof(*out));
	if (ploom_ipb_new(&unit[0], bound, &err) < 0)
		abort();
	out->first_left = last_left = ploom_ipb_left(unit[0]);
	for (;;) {
		int busy = 0, pick, r, level;
		const int *prefix;
		size_t n;

		for (w = 0; w < nworkers; w++) {
			long best = -1;
			int victim = -1, v;
			if (unit[w])
				continue;
			for (v = 0; v < nworkers; v++) {
				long d = unit[v] ? ploom_ipb_split_depth(unit[v]) : -1;
				if (d >= 0 && (best < 0 || d < best)) {
					best = d;
					victim = v;
				}
			}
			if (victim >= 0 && ploom_ipb_split(&unit[w], unit[victim], &err) != 1)
				out->error = 1;
		}
		for (w = 0; w < nworkers; w++)
			busy += unit[w] != NULL;
		if (!busy || out->error)
			break;
		/* a split moves weight between parts, and loses none */
		left = parts_left(unit, nworkers);
		if (weights_differ(left, last_left))
			out->left_off = 1;
		last_left = left;
		seed = seed * 1103515245u + 12345u;
		pick = (int)((seed >> 16) % (unsigned)busy);
		for (w = 0; w < nworkers; w++)
			if (unit[w] && pick-- == 0)
				break;
		prefix = ploom_ipb_prefix(unit[w], &n);
		level = ploom_ipb_level(unit[w]);
		run_one(&run, t, prefix, n);
		runs_add(out, &run, level);
		r = ploom_ipb_next(unit[w], &run, &err);
		if (r == 0) {
			ploom_ipb_free(unit[w]);
			unit[w] = NULL;
		}
		/* the run is done: what is left loses its weight, no more */
		left = parts_left(unit, nworkers);
		if (r >= 0 && weights_differ(last_left - left, leaf_weight(&run, bound)))
			out->left_off = 1;
		ploom_run_release(&run);
		if (r < 0) {
			out->error = 1;
			printf("ipb error: %s\n", err.msg);
			break;
		}
		for (busy = 0, w = 0; w < nworkers; w++)
			busy += unit[w] != NULL;
		/* 0 exactly when nothing is left */
		if (busy ? !(left > 0) : left != 0)
			out->left_end_not_0 = 1;
		last_left = left;
	}
	if (last_left != 0 && !out->error)
		out->left_end_not_0 = 1;
	for (w = 0; w < nworkers; w++)
		ploom_ipb_free(unit[w]);
}

/* Compares ipb with nworkers against DFS (dfs, complete) on one target
 * and bound; prints what differs, with the label, and returns 1 if
 * nothing does. */
static int compare(const struct runs *dfs, const struct target *t, int bound, int nworkers,
		   unsigned seed, const char *label)
{
	struct runs ipb;
	int ok;

	ipb_runs(&ipb, t, bound, nworkers, seed);
	ok = !ipb.error && same_schedules(&ipb, dfs) && in_level_order(&ipb) &&
	     first_failure(&ipb) == fewest_failing(dfs) && !ipb.left_off && !ipb.left_end_not_0 && ipb.first_left == 1;
	if (!ok) {
		printf("%s, max_preemptions %d, %d workers, seed %u: ipb %zu schedules%s, dfs %zu; "
		       "same set %d, level order %d, first failure with %d preemptions (fewest %d), "
		       "left: first %g, off %d, end %d\n",
		       label, bound, nworkers, seed, ipb.n, ipb.error ? " (error)" : "", dfs->n,
		       same_schedules(&ipb, dfs), in_level_order(&ipb), first_failure(&ipb),
		       fewest_failing(dfs), ipb.first_left, ipb.left_off, ipb.left_end_not_0);
		if (t->prog)
			sim_prog_print(stdout, t->prog);
	}
	runs_release(&ipb);
	return ok;
}

/* ---- the tests ---- */

/* Generated programs: DFS runs at most DFS_CAP schedules of each. */
#define DFS_CAP 3000

static void counts_match_reference_with_and_without_a_bound(void)
{
	size_t i;
	int b;

	for (i = 0; i < sim_nscenarios; i++) {
		const struct sim_scenario *sc = &sim_scenarios[i];
		struct target t = {sc, NULL};
		for (b = 0; b < 4; b++) {
			struct runs ipb;
			ipb_runs(&ipb, &t, b - 1, 1, 0);
			if (!CHECK(!ipb.error) || !CHECK_INT(ipb.n, sc->want[b][0]) ||
			    !CHECK_INT(runs_failing(&ipb), sc->want[b][1]))
				printf("  (%s, max_preemptions %d)\n", sc->name, b - 1);
			runs_release(&ipb);
		}
	}
}

static void the_schedules_are_those_of_dfs_each_once_fewest_preemptions_first(void)
{
	size_t i;
	int b, nw;

	for (i = 0; i < sim_nscenarios; i++) {
		const struct sim_scenario *sc = &sim_scenarios[i];
		struct target t = {sc, NULL};
		for (b = 0; b < 4; b++) {
			struct runs dfs;
			dfs_runs(&dfs, &t, b - 1, 0);
			for (nw = 1; nw <= 4; nw++)
				CHECK(compare(&dfs, &t, b - 1, nw, 7919u * (unsigned)nw, sc->name));
			runs_release(&dfs);
		}
	}
}

static void with_bound_0_the_order_is_that_of_dfs(void)
{
	size_t i, k;

	for (i = 0; i < sim_nscenarios; i++) {
		struct target t = {&sim_scenarios[i], NULL};
		struct runs dfs, ipb;
		int same;
		dfs_runs(&dfs, &t, 0, 0);
		ipb_runs(&ipb, &t, 0, 1, 0);
		same = dfs.n == ipb.n;
		for (k = 0; same && k < dfs.n; k++)
			same = !strcmp(dfs.v[k], ipb.v[k]);
		if (!CHECK(same))
			printf("  (%s)\n", sim_scenarios[i].name);
		runs_release(&dfs);
		runs_release(&ipb);
	}
}

static void the_banks_failure_comes_first_with_one_preemption(void)
{
	struct target t = {sim_find("bank without the lock"), NULL};
	struct runs ipb, dfs;
	size_t i, before = 0;

	ipb_runs(&ipb, &t, -1, 1, 0);
	dfs_runs(&dfs, &t, -1, 0);
	CHECK_INT(first_failure(&ipb), 1);
	CHECK_INT(fewest_failing(&dfs), 1);
	/* DFS's first failure has more preemptions than needed */
	CHECK(first_failure(&dfs) > 1);
	/* before it: the 3 schedules without preemption, some with one */
	for (i = 0; i < ipb.n && !ipb.failed[i]; i++)
		before++;
	CHECK(before >= 3 && before < 14);
	runs_release(&ipb);
	runs_release(&dfs);
}

static void a_run_that_ignores_the_prefix_is_a_divergence(void)
{
	struct ploom_ipb *s = NULL;
	struct ploom_err err = {0, ""};
	struct ploom_run run, other;
	size_t n;

	CHECK(ploom_ipb_new(&s, -1, NULL) == 0);
	CHECK_INT(ploom_ipb_level(s), 0);
	sim_run(&run, sim_find("flag_handoff"), NULL, 0);
	CHECK(ploom_ipb_next(s, &run, NULL) == 1);
	ploom_ipb_prefix(s, &n);
	CHECK(n > 0);
	/* the first schedule again: it does not follow the new prefix */
	CHECK(ploom_ipb_next(s, &run, &err) == -1);
	CHECK_INT(err.kind, PLOOM_ERR_DIVERGENCE);
	CHECK(strstr(err.msg, "was asked for") != NULL);
	/* a run with fewer branch points than the prefix asks for */
	memset(&other, 0, sizeof(other));
	ploom_run_finish(&other, NULL);
	CHECK(ploom_ipb_next(s, &other, &err) == -1);
	CHECK_INT(err.kind, PLOOM_ERR_DIVERGENCE);
	CHECK(strstr(err.msg, "ended after 0 of the") != NULL);
	ploom_run_release(&other);
	ploom_run_release(&run);
	ploom_ipb_free(s);
}

static void a_search_splits_its_queued_work_items_first(void)
{
	struct ploom_ipb *s = NULL, *sub = NULL;
	struct ploom_run run;
	const int *prefix;
	size_t n;
	int r = 1;

	CHECK(ploom_ipb_new(&s, -1, NULL) == 0);
	/* before its first run is back nothing is known */
	CHECK_INT(ploom_ipb_split_depth(s), -1);
	CHECK(ploom_ipb_split(&sub, s, NULL) == 0 && sub == NULL);
	/* racy_counter2: 3 schedules without preemption, then level 1 */
	while (r == 1 && ploom_ipb_level(s) == 0) {
		prefix = ploom_ipb_prefix(s, &n);
		sim_run(&run, sim_find("racy_counter2"), prefix, n);
		r = ploom_ipb_next(s, &run, NULL);
		ploom_run_release(&run);
	}
	CHECK_INT(r, 1);
	CHECK_INT(ploom_ipb_level(s), 1);
	/* a work item of level 1 that no part has started */
	CHECK_INT(ploom_ipb_split_depth(s), 0);
	CHECK(ploom_ipb_split(&sub, s, NULL) == 1 && sub != NULL);
	CHECK_INT(ploom_ipb_level(sub), 1);
	prefix = ploom_ipb_prefix(sub, &n);
	sim_run(&run, sim_find("racy_counter2"), prefix, n);
	CHECK_INT(run.preemptions, 1);
	ploom_run_release(&run);
	/* what the two have left is what the one had */
	CHECK(ploom_ipb_left(s) > 0 && ploom_ipb_left(sub) > 0);
	CHECK(ploom_ipb_left(s) + ploom_ipb_left(sub) < 1);
	/* parts go in any order */
	ploom_ipb_free(s);
	CHECK(ploom_ipb_left(sub) > 0);
	ploom_ipb_free(sub);
}

/* The runs to the first failing one (all of them when none fails). */
static long runs_to_failure(const struct runs *rs)
{
	size_t i;

	for (i = 0; i < rs->n; i++)
		if (rs->failed[i])
			return (long)i + 1;
	return (long)rs->n;
}

/* With one worker, on a target whose depth-first search with no bound
 * runs at most cap schedules: the runs of each level k are those of DFS
 * with the bound k, the others left out, in the same order; and ipb's
 * runs to its first failure, at level k, are at most those of DFS with
 * the bounds 0, ..., k one after another until one fails, fewer when k >
 * 0.  Prints what differs, with the label; returns 1 if nothing does. */
static int levels_in_dfs_order(const struct target *t, const char *label)
{
	struct runs ipb, dfs;
	long rerun = 0;
	size_t i, k;
	int level, top, ok = 1, found = 0;

	ipb_runs(&ipb, t, -1, 1, 0);
	top = ipb.n ? ipb.preemptions[ipb.n - 1] : 0;
	for (level = 0; level <= top && ok; level++) {
		dfs_runs(&dfs, t, level, 0);
		for (i = 0, k = 0; ok && i < dfs.n; i++) {
			if (dfs.preemptions[i] != level)
				continue;
			while (k < ipb.n && ipb.level[k] != level)
				k++;
			ok = k < ipb.n && !strcmp(ipb.v[k], dfs.v[i]);
			k++;
		}
		if (!found) {
			rerun += runs_to_failure(&dfs);
			found = first_failure(&dfs) >= 0;
		}
		runs_release(&dfs);
	}
	if (ok && found) {
		long once = runs_to_failure(&ipb);
		ok = first_failure(&ipb) > 0 ? once < rerun : once == rerun;
		if (!ok)
			printf("%s: ipb ran %ld schedules to its first failure, with %d preemptions; "
			       "DFS with the bounds 0 to it, %ld\n",
			       label, once, first_failure(&ipb), rerun);
	} else if (!ok) {
		printf("%s: level %d is not in the order of DFS with that bound\n", label,
		       level - 1);
	}
	runs_release(&ipb);
	return ok;
}

/* On the reference scenarios, then on generated programs: 300 of them, or
 * PLOOM_IPB_PROGRAMS when set, as the comparison below (make check's
 * sanitized run sets fewer, make soak more). */
static void each_level_runs_in_dfs_order_and_no_schedule_is_rerun(void)
{
	unsigned long seed, n = env_programs ? (unsigned long)env_programs : 300;
	size_t i;

	for (i = 0; i < sim_nscenarios; i++) {
		struct target t = {&sim_scenarios[i], NULL};
		CHECK(levels_in_dfs_order(&t, sim_scenarios[i].name));
	}
	for (seed = 0; seed < n; seed++) {
		struct sim_prog p;
		struct target t = {NULL, &p};
		struct runs dfs;
		char label[64];
		sim_prog_generate(&p, seed, 12);
		dfs_runs(&dfs, &t, -1, DFS_CAP);
		snprintf(label, sizeof(label), "seed %lu", seed);
		if (!dfs.capped && !CHECK(levels_in_dfs_order(&t, label)))
			sim_prog_print(stdout, &p);
		runs_release(&dfs);
	}
}

/* Generated programs: the bounds 0 to 2 are compared for every program, no bound for those DFS
 * runs completely. */
static int compare_program(unsigned long seed, long *complete, long *with_failure)
{
	struct sim_prog p;
	struct target t = {NULL, &p};
	int b, ok = 1;

	sim_prog_generate(&p, seed, 12);
	for (b = -1; b <= 2 && ok; b++) {
		struct runs dfs;
		char label[64];
		dfs_runs(&dfs, &t, b, DFS_CAP);
		if (dfs.error) {
			ok = 0;
		} else if (!dfs.capped) {
			snprintf(label, sizeof(label), "seed %lu", seed);
			ok = compare(&dfs, &t, b, 1, 0, label) &&
			     compare(&dfs, &t, b, 2 + (int)(seed % 3), (unsigned)seed, label);
			if (b < 0) {
				++*complete;
				*with_failure += fewest_failing(&dfs) >= 0;
			}
		}
		runs_release(&dfs);
	}
	return ok;
}

static void the_schedules_are_those_of_dfs_on_generated_programs(void)
{
	long n = env_programs ? env_programs : 600, i, failed = 0, complete = 0, with_failure = 0;

	if (env_has_seed) {
		CHECK(compare_program(env_seed, &complete, &with_failure));
		return;
	}
	for (i = 0; i < n; i++)
		if (!compare_program((unsigned long)i, &complete, &with_failure) && ++failed >= 5)
			break;
	CHECK_INT(failed, 0);
	/* the generator must keep producing programs worth comparing */
	CHECK(complete * 100 >= 40 * n);
	CHECK(with_failure * 5 >= complete);
	printf("generated programs: %ld, %ld explored completely by DFS, %ld of them with a "
	       "failure\n", n, complete, with_failure);
}

static void the_strategy_is_named_ipb_and_can_be_split(void)
{
	struct ploom_strategy *st = NULL;

	CHECK(ploom_ipb_strategy_new(&st, 2, NULL) == 0);
	CHECK_STR(st->ops->name, "ipb");
	CHECK(st->ops->split && st->ops->split_depth && st->ops->left && !st->ops->sleep);
	CHECK(st->ops->left(st) == 1);
	ploom_strategy_free(st);
}

int main(void)
{
	env_programs = testenv_count("PLOOM_IPB_PROGRAMS", 0);
	env_has_seed = testenv_seed("PLOOM_IPB_SEED", &env_seed);
	the_strategy_is_named_ipb_and_can_be_split();
	a_run_that_ignores_the_prefix_is_a_divergence();
	counts_match_reference_with_and_without_a_bound();
	with_bound_0_the_order_is_that_of_dfs();
	the_banks_failure_comes_first_with_one_preemption();
	a_search_splits_its_queued_work_items_first();
	the_schedules_are_those_of_dfs_each_once_fewest_preemptions_first();
	each_level_runs_in_dfs_order_and_no_schedule_is_rerun();
	the_schedules_are_those_of_dfs_on_generated_programs();
	return check_report();
}
