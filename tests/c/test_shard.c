/* Tests of shards (lib/shard, the filter in lib/search/explore): on REFERENCE.md's
 * scenarios and on generated programs (sim.h), for every shard count from
 * 1 to 8, the schedules that the shards count are exactly those of the
 * whole depth-first search, each counted by one shard, with and without a
 * preemption bound, on one worker and on several; the shards agree on the
 * units; the first failure by unit is the whole search's first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/search/explore.h"
#include "../../lib/shard.h"
#include "../../lib/trace.h"
#include "check.h"
#include "sim.h"
#include "testenv.h"
#include "vecs.h"

/* PLOOM_SHARD_PROGRAMS (testenv.h), read first in main() */
static long env_programs;

/* What the tests explore: a scenario, or a generated program. */
struct tree {
	const struct sim_scenario *sc;
	const struct sim_prog *prog;
	char name[64];
};

static void run_tree(struct ploom_run *run, const struct tree *t, const int *prefix, size_t n)
{
	sim_exec(run, t->sc, t->prog, prefix, n, NULL, 0, NULL);
}

/* The most schedules of a tree the tests compare: a generated program's
 * tree can be far larger, and is then left out. */
#define TREE_CAP 3000

/* The trees compared that have a failing schedule. */
static long trees_failing;

/* The whole search, on one worker: its choice vectors (sorted), failing
 * count, and the choices of its first failure (NULL when none; malloc'd).
 * Returns its schedules, or -1 when it has more than TREE_CAP. */
static long whole_search(struct vecs *out, const struct tree *t, int bound, long *out_failing,
			 char **out_first_failure)
{
	struct ploom_explore *ex = NULL;
	struct ploom_run run;
	const int *prefix;
	size_t n;
	int r;

	*out_failing = 0;
	*out_first_failure = NULL;
	if (ploom_explore_new(&ex, bound, NULL) < 0)
		abort();
	do {
		prefix = ploom_explore_prefix(ex, &n);
		run_tree(&run, t, prefix, n);
		vecs_add(out, &run);
		if (ploom_outcome_is_failure(run.outcome.kind) && !(*out_failing)++)
			*out_first_failure = strdup(out->v[out->n - 1]);
		r = ploom_explore_next(ex, &run, NULL);
		ploom_run_release(&run);
	} while (r == 1 && out->n < TREE_CAP);
	ploom_explore_free(ex);
	if (r < 0)
		abort();
	if (r == 1)
		return -1;
	vecs_sort(out);
	return (long)out->n;
}

#define MAX_SIM_WORKERS 4

/* One shard of the search of t, with nworkers simulated workers as
 * ploom-explore -j runs them (see test_explore.c's explore_split): which
 * run comes back next is drawn from seed.  Adds the counted schedules'
 * choices to vs; fills *shard; *first_failure is the choices of the first
 * counted failing run (malloc'd) or NULL.  Returns the counted schedules,
 * -1 on error. */
static long run_shard(struct vecs *vs, struct ploom_shard *shard, const struct tree *t,
		      int bound, int nworkers, unsigned seed, long *out_failing,
		      char **first_failure)
{
	struct ploom_explore *part[MAX_SIM_WORKERS] = {0};
	struct ploom_err err = {0, ""};
	struct ploom_run run;
	long schedules = 0;
	int w, ret = 0;

	*out_failing = 0;
	*first_failure = NULL;
	if (ploom_explore_new_shard(&part[0], bound, shard, &err) < 0)
		return -1;
	for (;;) {
		int busy = 0, pick, r;
		const int *prefix;
		size_t n;

		for (w = 0; w < nworkers; w++) {
			long best = -1;
			int victim = -1, v;
			if (part[w])
				continue;
			for (v = 0; v < nworkers; v++) {
				long d = part[v] ? ploom_explore_split_depth(part[v]) : -1;
				if (d >= 0 && (best < 0 || d < best)) {
					best = d;
					victim = v;
				}
			}
			if (victim >= 0 && ploom_explore_split(&part[w], part[victim], &err) != 1)
				ret = -1;
		}
		for (w = 0; w < nworkers; w++)
			busy += part[w] != NULL;
		if (!busy || ret < 0)
			break;
		seed = seed * 1103515245u + 12345u;
		pick = (int)((seed >> 16) % (unsigned)busy);
		for (w = 0; w < nworkers; w++)
			if (part[w] && pick-- == 0)
				break;
		prefix = ploom_explore_prefix(part[w], &n);
		run_tree(&run, t, prefix, n);
		if (!ploom_explore_probe(part[w])) {
			schedules++;
			vecs_add(vs, &run);
			if (ploom_outcome_is_failure(run.outcome.kind) && !(*out_failing)++)
				*first_failure = strdup(vs->v[vs->n - 1]);
		}
		r = ploom_explore_next(part[w], &run, &err);
		ploom_run_release(&run);
		if (r < 0) {
			ret = -1;
			break;
		}
		if (r == 0) {
			ploom_explore_free(part[w]);
			part[w] = NULL;
		}
	}
	for (w = 0; w < nworkers; w++)
		ploom_explore_free(part[w]);
	if (ret < 0) {
		printf("shard error: %s\n", err.msg);
		return -1;
	}
	return schedules;
}

/* The shards of t's search, N of them at the unit depth `depth` (-1: the
 * default), each on nworkers workers, against the whole search: the union
 * of what they count is the whole search's set, with no schedule twice;
 * they agree on the units and own them all; the first failure of the
 * shard with the smallest failure unit is the whole search's first. */
static int check_shards(const struct tree *t, const struct vecs *whole, long whole_failing,
			const char *whole_first, int bound, int count, int depth, int nworkers)
{
	struct vecs all = {0};
	long failing = 0, units = -1, owned = 0, best_unit = -1;
	char *first = NULL, *best_first = NULL;
	int k, ok = 1;
	size_t i;

	for (k = 0; k < count && ok; k++) {
		struct ploom_shard shard;
		long f = 0;

		ploom_shard_init(&shard, k, count);
		if (depth >= 0)
			shard.depth = depth;
		if (run_shard(&all, &shard, t, bound, nworkers, 7919u * (unsigned)(k + 1), &f,
			      &first) < 0) {
			ok = 0;
			break;
		}
		failing += f;
		owned += shard.owned;
		ok &= CHECK(units < 0 || shard.units == units);
		units = shard.units;
		/* a probe is a run of a unit the shard does not own */
		ok &= CHECK(shard.probes <= shard.units - shard.owned);
		ok &= CHECK((f > 0) == (shard.failure_unit >= 0));
		if (shard.failure_unit >= 0 && (best_unit < 0 || shard.failure_unit < best_unit)) {
			best_unit = shard.failure_unit;
			free(best_first);
			best_first = first;
			first = NULL;
		}
		free(first);
		first = NULL;
	}
	if (ok) {
		vecs_sort(&all);
		ok &= CHECK_INT(all.n, whole->n);
		for (i = 0; ok && i < all.n; i++)
			ok &= CHECK(!strcmp(all.v[i], whole->v[i]));
		ok &= CHECK_INT(failing, whole_failing);
		ok &= CHECK_INT(owned, units);
		/* on one worker, each shard's first failure is its first in
		 * depth-first order */
		if (nworkers == 1)
			ok &= CHECK_STR(best_first, whole_first);
	}
	if (!ok)
		printf("  (%s, max_preemptions %d, %d shards, depth %d, %d workers)\n", t->name,
		       bound, count, depth, nworkers);
	free(best_first);
	vecs_release(&all);
	return ok;
}

/* Every shard count from 1 to 8 on t, with the default unit depth and,
 * when `all`, a few others (0: one unit; 2; deeper than any schedule: a
 * unit each), else 1; on one worker and, for a few counts, on three.
 * Returns 1 when they pass, 0 when not, -1 when t is larger than
 * TREE_CAP. */
static int check_tree(const struct tree *t, int bound, int all)
{
	static const int depths[] = {-1, 1, 0, 2, 40};
	size_t ndepths = all ? sizeof(depths) / sizeof(*depths) : 2;
	struct vecs whole = {0};
	long failing;
	char *first = NULL;
	int count, ok = 1;
	size_t d;

	if (whole_search(&whole, t, bound, &failing, &first) < 0) {
		free(first);
		vecs_release(&whole);
		return -1;
	}
	trees_failing += failing > 0;
	for (count = 1; count <= 8 && ok; count++)
		for (d = 0; d < ndepths && ok; d++)
			ok = check_shards(t, &whole, failing, first, bound, count, depths[d], 1);
	for (count = 2; count <= 8 && ok; count *= 2)
		ok = check_shards(t, &whole, failing, first, bound, count, -1, 3);
	free(first);
	vecs_release(&whole);
	return ok;
}

static void shards_of_the_reference_scenarios_add_up_to_the_search(void)
{
	size_t i;
	int b;

	for (i = 0; i < sim_nscenarios; i++) {
		struct tree t = {&sim_scenarios[i], NULL, ""};

		/* counter3 unbounded has 53715 schedules: bounded only */
		snprintf(t.name, sizeof(t.name), "%s", t.sc->name);
		for (b = -1; b <= 2; b++)
			if (b >= 0 || t.sc->want[0][0] < 5000)
				check_tree(&t, b, 1);
	}
}

static void shards_of_generated_programs_add_up_to_the_search(void)
{
	unsigned long seed, programs = (unsigned long)env_programs;
	long checked = 0;
	int b, r;

	for (seed = 1; seed <= programs; seed++) {
		struct sim_prog p;
		struct tree t = {NULL, &p, ""};

		sim_prog_generate(&p, seed, 10);
		snprintf(t.name, sizeof(t.name), "program %lu", seed);
		for (b = -1; b <= 1; b++) {
			r = check_tree(&t, b, 0);
			if (r == 0)
				sim_prog_print(stdout, &p);
			checked += r >= 0;
		}
	}
	/* most trees are within the cap: a test that compared few would
	 * prove little */
	printf("compared the shards of %ld trees of %lu generated programs, %ld with a failure\n",
	       checked, programs, trees_failing);
	CHECK(checked >= (long)programs);
	CHECK(trees_failing >= checked / 10);
}

/* The probes: a shard runs the first schedule of a unit it does not own
 * only when it enters it above the unit depth's last branch point. */
static void a_shard_probes_only_where_it_must(void)
{
	struct tree t = {sim_find("racy_counter2"), NULL, "racy_counter2"};
	struct ploom_shard one, other;
	struct vecs vs = {0};
	long failing;
	char *first = NULL;

	/* one shard of one owns everything and never probes */
	ploom_shard_init(&one, 0, 1);
	CHECK_INT(run_shard(&vs, &one, &t, -1, 1, 1, &failing, &first), 69);
	CHECK_INT(one.probes, 0);
	CHECK_INT(one.owned, one.units);
	free(first);
	vecs_release(&vs);
	/* at depth 0 the search is one unit, shard 0's: shard 1 of 2 runs a
	 * single probe, the first schedule, and counts nothing */
	ploom_shard_init(&other, 1, 2);
	other.depth = 0;
	CHECK_INT(run_shard(&vs, &other, &t, -1, 1, 1, &failing, &first), 0);
	CHECK_INT(other.units, 1);
	CHECK_INT(other.owned, 0);
	CHECK_INT(other.probes, 1);
	CHECK_INT(other.failure_unit, -1);
	free(first);
	vecs_release(&vs);
}

static void a_shard_spec_is_k_of_n(void)
{
	int k = -7, n = -7;

	CHECK(ploom_shard_parse(&k, &n, "0/1") == 0 && k == 0 && n == 1);
	CHECK(ploom_shard_parse(&k, &n, "3/4") == 0 && k == 3 && n == 4);
	CHECK(ploom_shard_parse(&k, &n, "999999/1000000") == 0 && k == 999999 && n == 1000000);
	k = n = -7;
	CHECK(ploom_shard_parse(&k, &n, "4/4") < 0);
	CHECK(ploom_shard_parse(&k, &n, "0/0") < 0);
	CHECK(ploom_shard_parse(&k, &n, "-1/4") < 0);
	CHECK(ploom_shard_parse(&k, &n, "1/+4") < 0);
	CHECK(ploom_shard_parse(&k, &n, " 1/4") < 0);
	CHECK(ploom_shard_parse(&k, &n, "1/4 ") < 0);
	CHECK(ploom_shard_parse(&k, &n, "1/") < 0);
	CHECK(ploom_shard_parse(&k, &n, "/4") < 0);
	CHECK(ploom_shard_parse(&k, &n, "1") < 0);
	CHECK(ploom_shard_parse(&k, &n, "1/4/5") < 0);
	CHECK(ploom_shard_parse(&k, &n, "0/1000001") < 0);
	CHECK(ploom_shard_parse(&k, &n, "00000000000000000001/4") < 0);
	CHECK(k == -7 && n == -7);
}

static void the_unit_depth_grows_with_the_shards(void)
{
	/* the smallest D with 2^D >= 8N */
	CHECK_INT(ploom_shard_default_depth(1), 3);
	CHECK_INT(ploom_shard_default_depth(2), 4);
	CHECK_INT(ploom_shard_default_depth(3), 5);
	CHECK_INT(ploom_shard_default_depth(4), 5);
	CHECK_INT(ploom_shard_default_depth(5), 6);
	CHECK_INT(ploom_shard_default_depth(PLOOM_SHARD_MAX), 23);
}

int main(void)
{
	env_programs = testenv_count("PLOOM_SHARD_PROGRAMS", 100);
	a_shard_spec_is_k_of_n();
	the_unit_depth_grows_with_the_shards();
	a_shard_probes_only_where_it_must();
	shards_of_the_reference_scenarios_add_up_to_the_search();
	shards_of_generated_programs_add_up_to_the_search();
	return check_report();
}
