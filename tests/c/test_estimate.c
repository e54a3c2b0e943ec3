/* Tests of lib/estimate and of the weight the depth-first search has left
 * (ploom_explore_left()), on synthetic trees of schedules whose size is
 * known: uniform ones, where the estimate must be exact from the first
 * schedule on, and unbalanced ones, where it must come to the exact count
 * as the search completes; searched whole, with a preemption bound, and
 * split between simulated workers as ploom-explore -j splits them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/estimate.h"
#include "../../lib/search/explore.h"
#include "../../lib/trace.h"
#include "check.h"
#include "sim.h"

/* ---- synthetic trees ----
 *
 * A tree says, from the tasks that ran the steps so far, how many tasks
 * are enabled at the next step (tasks 0..width-1), or 0 when the schedule
 * ends there.  A run follows the prefix at the branch points (steps with
 * more than one enabled task) and the search's default after it. */
struct tree {
	int uniform_width, uniform_depth;       /* a uniform tree when nonzero */
	unsigned seed;                          /* else an unbalanced one */
};

#define TREE_MAX_DEPTH 12

static int tree_width(const struct tree *t, const int *path, size_t depth)
{
	unsigned h = 2166136261u ^ t->seed;
	size_t i;

	if (t->uniform_width)
		return (int)depth < t->uniform_depth ? t->uniform_width : 0;
	for (i = 0; i < depth; i++)
		h = (h ^ (unsigned)path[i]) * 16777619u;
	h ^= h >> 13;
	h *= 0x5bd1e995u;
	h ^= h >> 15;
	if (depth >= TREE_MAX_DEPTH || (depth >= 2 && h % 4 == 0))
		return 0;
	return 1 + (int)((h >> 4) % 4);
}

/* The number of schedules of the tree below path[0..depth). */
static long tree_count(const struct tree *t, int *path, size_t depth)
{
	int w = tree_width(t, path, depth), c;
	long n = 0;

	if (!w)
		return 1;
	for (c = 0; c < w; c++) {
		path[depth] = c;
		n += tree_count(t, path, depth + 1);
	}
	return n;
}

static void tree_run(struct ploom_run *run, const struct tree *t, const int *prefix, size_t n)
{
	int path[TREE_MAX_DEPTH + 1];
	size_t depth = 0, branch = 0;
	int w, prev = 0, c, k;

	memset(run, 0, sizeof(*run));
	while ((w = tree_width(t, path, depth)) > 0) {
		struct ploom_step *s = ploom_run_add_step(run);
		if (!s)
			abort();
		if (w == 1)
			c = 0;
		else if (branch < n)
			c = prefix[branch++];
		else
			c = prev < w ? prev : 0;
		s->index = (long)depth;
		s->task = c;
		s->op = PLOOM_OP_YIELD_NOW;
		s->enabled = malloc((size_t)w * sizeof(int));
		if (!s->enabled)
			abort();
		for (k = 0; k < w; k++)
			s->enabled[k] = k;
		s->nenabled = (size_t)w;
		path[depth++] = c;
		prev = c;
	}
	run->outcome.kind = PLOOM_OUTCOME_PASS;
}

/* ---- a search of a tree, whole or split, with its estimates ---- */

#define MAX_PARTS 8

/* What one search of a tree saw: the schedules run, and the fraction and
 * estimate after each of them. */
struct seen {
	long schedules;
	double fraction[20000];
	double total[20000];            /* the estimator's, known or not */
	int went_back, above_one, one_too_early;
	double final_left;
};

/* The weight every part has left, as the driver adds it up. */
static double parts_left(struct ploom_explore *const *part, int nparts)
{
	double left = 0;
	int i;

	for (i = 0; i < nparts; i++)
		if (part[i])
			left += ploom_explore_left(part[i]);
	return left;
}

static void note(struct seen *sn, struct ploom_explore *const *part, int nparts, int complete)
{
	double left = parts_left(part, nparts);
	struct ploom_estimate e;
	long k = sn->schedules - 1;

	ploom_estimate_make(&e, sn->schedules, 0, 1.0, left, 0);
	sn->fraction[k] = e.fraction;
	sn->total[k] = (double)sn->schedules / e.fraction;
	if (e.fraction > 1)
		sn->above_one = 1;
	if (e.fraction == 1 && !complete)
		sn->one_too_early = 1;
	/* rounding may take back a hair, never more */
	if (k > 0 && e.fraction < sn->fraction[k - 1] - 1e-12)
		sn->went_back = 1;
	sn->final_left = left;
}

/* Searches a tree (t) or a simulated scenario (sc) with the bound, on
 * nparts parts split as the driver splits them (the shallowest split
 * goes to a part that has none), the run to come back next drawn from
 * seed.  Returns the schedules, -1 on error. */
static long search(struct seen *sn, const struct tree *t, const struct sim_scenario *sc,
		   int bound, int nparts, unsigned seed)
{
	struct ploom_explore *part[MAX_PARTS] = {0};
	struct ploom_err err = {0, ""};
	struct ploom_run run;
	int i, ret = 0;

	memset(sn, 0, sizeof(*sn));
	if (ploom_explore_new(&part[0], bound, &err) < 0)
		return -1;
	CHECK(ploom_explore_left(part[0]) == 1);
	for (;;) {
		int busy = 0, pick, r;
		const int *prefix;
		size_t n;

		for (i = 0; i < nparts; i++) {
			long best = -1, d;
			int victim = -1, v;
			if (part[i])
				continue;
			for (v = 0; v < nparts; v++) {
				d = part[v] ? ploom_explore_split_depth(part[v]) : -1;
				if (d >= 0 && (best < 0 || d < best)) {
					best = d;
					victim = v;
				}
			}
			if (victim >= 0 && ploom_explore_split(&part[i], part[victim], &err) != 1)
				ret = -1;
		}
		for (i = 0; i < nparts; i++)
			busy += part[i] != NULL;
		if (!busy || ret < 0 || sn->schedules == 20000)
			break;
		seed = seed * 1103515245u + 12345u;
		pick = (int)((seed >> 16) % (unsigned)busy);
		for (i = 0; i < nparts; i++)
			if (part[i] && pick-- == 0)
				break;
		prefix = ploom_explore_prefix(part[i], &n);
		if (t)
			tree_run(&run, t, prefix, n);
		else
			sim_run(&run, sc, prefix, n);
		sn->schedules++;
		r = ploom_explore_next(part[i], &run, &err);
		ploom_run_release(&run);
		if (r < 0) {
			ret = -1;
			break;
		}
		if (r == 0) {
			/* what a complete part has left is 0 before the driver frees it */
			CHECK(ploom_explore_left(part[i]) == 0);
			ploom_explore_free(part[i]);
			part[i] = NULL;
		}
		busy = 0;
		for (int v = 0; v < nparts; v++)
			busy += part[v] != NULL;
		note(sn, part, nparts, !busy);
	}
	for (i = 0; i < nparts; i++)
		ploom_explore_free(part[i]);
	if (ret < 0) {
		printf("explore error: %s\n", err.msg);
		return -1;
	}
	return sn->schedules;
}

static struct seen seen;

/* The checks every search must pass: never above 1, never back, 1
 * exactly at the end and not before, and the estimate then exact. */
static void check_search(const struct seen *sn, long want, const char *what, int nparts)
{
	long n = sn->schedules;

	if (!CHECK_INT(n, want) || !CHECK_INT(sn->above_one, 0) || !CHECK_INT(sn->went_back, 0) ||
	    !CHECK_INT(sn->one_too_early, 0) || !CHECK(n > 0 && sn->fraction[n - 1] == 1.0) ||
	    !CHECK(sn->final_left == 0) || !CHECK(n > 0 && sn->total[n - 1] == (double)want))
		printf("  (%s, %d parts)\n", what, nparts);
}

/* ---- the tests ---- */

static void a_walk_adds_the_untried_children_and_the_subtree_under_way(void)
{
	struct ploom_weight_walk walk;

	ploom_weight_walk_init(&walk, 1);
	CHECK(ploom_weight_walk_left(&walk) == 1);
	/* 4 children, the first under way, 3 untried */
	ploom_weight_walk_step(&walk, 4, 3);
	CHECK(walk.weight == 0.25 && walk.left == 0.75);
	CHECK(ploom_weight_walk_left(&walk) == 1);
	/* below it, 2 children, the second under way: the first is done */
	ploom_weight_walk_step(&walk, 2, 0);
	CHECK(ploom_weight_walk_left(&walk) == 0.875);
	/* a part split off at a quarter */
	ploom_weight_walk_init(&walk, 0.25);
	ploom_weight_walk_step(&walk, 0, 0);
	CHECK(ploom_weight_walk_left(&walk) == 0.25);
}

static void a_uniform_tree_is_estimated_exactly_from_the_first_schedule(void)
{
	static const int shapes[][2] = {{2, 10}, {3, 6}, {5, 3}, {7, 2}};
	size_t i;
	long k, total;
	int nparts, exact;

	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct tree t = {shapes[i][0], shapes[i][1], 0};
		total = (long)round(pow(shapes[i][0], shapes[i][1]));
		for (nparts = 1; nparts <= 4; nparts++) {
			search(&seen, &t, NULL, -1, nparts, 17u * (unsigned)nparts);
			check_search(&seen, total, "uniform", nparts);
			exact = 1;
			for (k = 0; k < seen.schedules; k++)
				exact &= fabs(seen.total[k] - (double)total) < 1e-6 * (double)total;
			if (!CHECK(exact))
				printf("  (uniform %d^%d, %d parts)\n", shapes[i][0], shapes[i][1],
				       nparts);
		}
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define UNBALANCED_TREES 60

static void an_unbalanced_tree_comes_to_its_size_as_the_search_completes(void)
{
	/* the relative error of the estimate once a tenth, half and nine
	 * tenths of the schedules are done, over all trees */
	static double err[3][2 * UNBALANCED_TREES];
	static const int at[3] = {1, 5, 9};
	int path[TREE_MAX_DEPTH + 1], nparts, q, ntrees = 0;
	double median[3];
	unsigned seed;
	long n, want;

	for (seed = 1; seed <= UNBALANCED_TREES; seed++) {
		struct tree t = {0, 0, seed};
		want = tree_count(&t, path, 0);
		/* too small to say anything, or too large for a unit test */
		if (want < 50 || want > 20000)
			continue;
		for (nparts = 1; nparts <= 4; nparts += 3) {
			n = search(&seen, &t, NULL, -1, nparts, seed);
			check_search(&seen, want, "unbalanced", nparts);
			for (q = 0; q < 3; q++)
				err[q][ntrees] = fabs(seen.total[n * at[q] / 10] - (double)want) /
						 (double)want;
			ntrees++;
		}
	}
	CHECK(ntrees >= UNBALANCED_TREES);
	for (q = 0; q < 3; q++) {
		qsort(err[q], (size_t)ntrees, sizeof(double), cmp_double);
		median[q] = err[q][ntrees / 2];
	}
	/* the trees are far from uniform: a tenth of the way the estimate is
	 * off by half; it closes in as the search goes */
	if (!CHECK(median[0] > 0.3) || !CHECK(median[1] < median[0]) ||
	    !CHECK(median[2] < median[1] / 2) || !CHECK(median[2] < 0.15))
		printf("  (median errors %.3f %.3f %.3f)\n", median[0], median[1], median[2]);
}

static void a_bounded_search_is_weighed_on_the_tree_it_explores(void)
{
	size_t i;
	int b, nparts;

	for (i = 0; i < sim_nscenarios; i++) {
		const struct sim_scenario *sc = &sim_scenarios[i];
		for (b = 0; b < 4; b++) {
			if (sc->want[b][0] > 5000)
				continue;
			for (nparts = 1; nparts <= 3; nparts += 2) {
				search(&seen, NULL, sc, b - 1, nparts, 3u + (unsigned)b);
				if (!CHECK(seen.schedules == sc->want[b][0]))
					printf("  (%s, max_preemptions %d)\n", sc->name, b - 1);
				check_search(&seen, sc->want[b][0], sc->name, nparts);
			}
		}
	}
}

static void an_estimate_is_told_only_when_it_is_known(void)
{
	struct ploom_estimate e;

	/* a strategy that cannot tell: the rate only */
	ploom_estimate_make(&e, 100, 2, 4.0, -1, 0);
	CHECK(e.rate == 25 && e.fraction == -1 && e.total == -1 && e.eta_s == -1);
	CHECK_INT(e.failing, 2);
	/* too few schedules for a total, but the fraction is known */
	ploom_estimate_make(&e, PLOOM_ESTIMATE_MIN_SCHEDULES - 1, 0, 1.0, 0.5, 0);
	CHECK(e.fraction == 0.5 && e.total == -1 && e.eta_s == -1);
	ploom_estimate_make(&e, PLOOM_ESTIMATE_MIN_SCHEDULES, 0, 1.0, 0.5, 0);
	CHECK(e.total == 2.0 * PLOOM_ESTIMATE_MIN_SCHEDULES);
	CHECK(e.eta_s == 1.0);
	/* no time yet: no rate and no ETA */
	ploom_estimate_make(&e, 50, 0, 0, 0.5, 0);
	CHECK(e.rate == 0 && e.total == 100 && e.eta_s == -1);
	/* nothing left: exactly 1 and the count */
	ploom_estimate_make(&e, 221, 75, 2.0, 0, 1);
	CHECK(e.fraction == 1 && e.total == 221 && e.eta_s == 0 && e.done == 1);
	/* a hair left is not 1 */
	ploom_estimate_make(&e, 221, 0, 2.0, 1e-300, 0);
	CHECK(e.fraction < 1 && e.total >= 221);
	/* parts that add up to a hair above 1: nothing done, no total */
	ploom_estimate_make(&e, 30, 0, 2.0, 1 + 1e-15, 0);
	CHECK(e.fraction == 0 && e.total == -1 && e.eta_s == -1);
	/* a tree too large for a double's fraction: no total */
	ploom_estimate_make(&e, 30, 0, 2.0, 1 - 1e-320, 0);
	CHECK(e.total == -1 || isfinite(e.total));
}

static void the_line_shows_what_is_known_with_a_tilde_for_estimates(void)
{
	struct ploom_estimate e;
	char buf[200];
	int n;

	/* 41% of 30,109.76 at 2,310.07/s: 7.69 s left */
	ploom_estimate_make(&e, 12345, 0, 5.344, 0.59, 0);
	n = ploom_estimate_format(buf, sizeof(buf), &e);
	CHECK_INT(n, strlen(buf));
	CHECK_STR(buf, "12,345 schedules (2,310/s), ~41% of ~30,100, ETA 8 s");
	e.failing = 3;
	ploom_estimate_format(buf, sizeof(buf), &e);
	CHECK_STR(buf, "12,345 schedules (2,310/s), 3 failing, ~41% of ~30,100, ETA 8 s");
	/* early: counts and rate only */
	ploom_estimate_make(&e, 5, 0, 2.0, 0.99, 0);
	ploom_estimate_format(buf, sizeof(buf), &e);
	CHECK_STR(buf, "5 schedules (2.5/s)");
	ploom_estimate_make(&e, 1, 0, 0, 1, 0);
	ploom_estimate_format(buf, sizeof(buf), &e);
	CHECK_STR(buf, "1 schedule");
	/* a reduction: no estimate */
	ploom_estimate_make(&e, 4000, 0, 2.0, -1, 0);
	ploom_estimate_format(buf, sizeof(buf), &e);
	CHECK_STR(buf, "4,000 schedules (2,000/s)");
	/* under a tenth, a decimal; rounded down; longer ETAs */
	ploom_estimate_make(&e, 1000, 0, 100.0, 1 - 0.0499, 0);
	ploom_estimate_format(buf, sizeof(buf), &e);
	CHECK_STR(buf, "1,000 schedules (10/s), ~4.9% of ~20,000, ETA 32 min");
	ploom_estimate_make(&e, 1000, 0, 1000.0, 1 - 1e-4, 0);
	ploom_estimate_format(buf, sizeof(buf), &e);
	CHECK_STR(buf, "1,000 schedules (1.0/s), ~0.0% of ~10,000,000, ETA 116 days");
	ploom_estimate_make(&e, 1000, 0, 10.0, 1 - 0x1p-50, 0);
	ploom_estimate_format(buf, sizeof(buf), &e);
	CHECK_STR(buf, "1,000 schedules (100/s), ~0.0% of ~1.1e18, ETA 357,000,000 years");
	/* complete: no tilde */
	ploom_estimate_make(&e, 221, 0, 2.0, 0, 1);
	ploom_estimate_format(buf, sizeof(buf), &e);
	CHECK_STR(buf, "221 schedules (110/s), 100% of 221");
	/* a short buffer is cut and still a string; the length is uncut's */
	ploom_estimate_make(&e, 12345, 0, 5.344, 0.59, 0);
	CHECK_INT(ploom_estimate_format(buf, 10, &e), 52);
	CHECK_STR(buf, "12,345 sc");
}

static void the_json_line_has_every_member_and_null_for_the_unknown(void)
{
	struct ploom_estimate e;
	char buf[300];
	int n;

	ploom_estimate_make(&e, 12345, 2, 5.344, 0.59, 0);
	n = ploom_estimate_format_json(buf, sizeof(buf), &e);
	CHECK_INT(n, strlen(buf));
	CHECK_STR(buf, "{\"schedules\":12345,\"failing\":2,\"elapsed_s\":5.344,\"rate\":2310.1,"
		       "\"estimate_total\":30110,\"fraction\":0.41,\"eta_s\":7.7,\"summary\":"
		       "\"12,345 schedules (2,310/s), 2 failing, ~41% of ~30,100, ETA 8 s\","
		       "\"done\":false}");
	ploom_estimate_make(&e, 3, 0, 0, -1, 0);
	ploom_estimate_format_json(buf, sizeof(buf), &e);
	CHECK_STR(buf, "{\"schedules\":3,\"failing\":0,\"elapsed_s\":0.000,\"rate\":0.0,"
		       "\"estimate_total\":null,\"fraction\":null,\"eta_s\":null,"
		       "\"summary\":\"3 schedules\",\"done\":false}");
	ploom_estimate_make(&e, 221, 75, 2.0, 0, 1);
	ploom_estimate_format_json(buf, sizeof(buf), &e);
	CHECK_STR(buf, "{\"schedules\":221,\"failing\":75,\"elapsed_s\":2.000,\"rate\":110.5,"
		       "\"estimate_total\":221,\"fraction\":1,\"eta_s\":0.0,"
		       "\"summary\":\"221 schedules (110/s), 75 failing, 100% of 221\",\"done\":true}");
	/* a fraction a hair below 1 is not written as 1 */
	ploom_estimate_make(&e, 221, 0, 2.0, 1e-12, 0);
	ploom_estimate_format_json(buf, sizeof(buf), &e);
	CHECK(strstr(buf, "\"fraction\":0.999999,") != NULL);
}

int main(void)
{
	a_walk_adds_the_untried_children_and_the_subtree_under_way();
	a_uniform_tree_is_estimated_exactly_from_the_first_schedule();
	an_unbalanced_tree_comes_to_its_size_as_the_search_completes();
	a_bounded_search_is_weighed_on_the_tree_it_explores();
	an_estimate_is_told_only_when_it_is_known();
	the_line_shows_what_is_known_with_a_tilde_for_estimates();
	the_json_line_has_every_member_and_null_for_the_unknown();
	return check_report();
}
