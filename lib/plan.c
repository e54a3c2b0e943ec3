/* The drivers of the search kinds and the table of what combines with
 * them; plan.h documents the rules.  A new search is a row of
 * ploom_search_kinds[] (kind.c), its driver beside the others here, and
 * its rows of refusals[]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpor.h"
#include "explore.h"
#include "ipb.h"
#include "plan.h"
#include "policy.h"
#include "sample.h"
#include "trace.h"

/* ---- the drivers ---- */

static int dfs_new(struct ploom_strategy **out, struct ploom_plan *plan, struct ploom_err *err)
{
	if (plan->shard_count)
		return ploom_explore_strategy_new_shard(out, plan->max_preemptions, &plan->shard,
							err);
	return ploom_explore_strategy_new(out, plan->max_preemptions, err);
}

static int dpor_new(struct ploom_strategy **out, struct ploom_plan *plan, struct ploom_err *err)
{
	if (plan->shard_count)
		return ploom_dpor_strategy_new_shard(out, &plan->shard, plan->max_preemptions, err);
	return ploom_dpor_strategy_new_bounded(out, plan->max_preemptions, err);
}

static int ipb_new(struct ploom_strategy **out, struct ploom_plan *plan, struct ploom_err *err)
{
	return ploom_ipb_strategy_new(out, plan->max_preemptions, err);
}

static int sample_new(struct ploom_strategy **out, const struct ploom_plan *plan,
		      enum ploom_policy_kind policy, struct ploom_err *err)
{
	struct ploom_sample_opts opts = {policy, plan->seed, plan->pct_depth, plan->max_schedules,
					 plan->jobs};

	return ploom_sample_strategy_new(out, &opts, err);
}

static int pct_new(struct ploom_strategy **out, struct ploom_plan *plan, struct ploom_err *err)
{
	return sample_new(out, plan, PLOOM_POLICY_PCT, err);
}

static int random_new(struct ploom_strategy **out, struct ploom_plan *plan,
		      struct ploom_err *err)
{
	return sample_new(out, plan, PLOOM_POLICY_RANDOM, err);
}

/* ---- the registry ---- */

/* Each kind's driver, by enum ploom_plan_kind: a new strategy for plan
 * (which ploom_plan_check() accepted), as ploom_plan_strategy_new()
 * documents. */
static int (*const drivers[PLOOM_PLAN_NKINDS])(struct ploom_strategy **out,
						struct ploom_plan *plan,
						struct ploom_err *err) = {
	[PLOOM_PLAN_DFS] = dfs_new,
	[PLOOM_PLAN_DPOR] = dpor_new,
	[PLOOM_PLAN_IPB] = ipb_new,
	[PLOOM_PLAN_PCT] = pct_new,
	[PLOOM_PLAN_RANDOM] = random_new,
};

/* why a sample cannot be combined with --reduction=dpor and --shard */
#define SAMPLE_NO_DPOR "a sample draws its choices in the worker, where no partial-order " \
	"reduction runs"
#define SAMPLE_NO_SHARD "shards split a depth-first tree; give each machine a --seed of " \
	"its own instead"

/* Every pair of a kind and an option that does not combine, with why.
 * ploom_plan_check() refuses the first row that applies, so when several
 * do, the order decides which one the user reads.  A --search spelled
 * with --reduction=dpor that no kind is (every one but dfs) must have a
 * PLOOM_PLAN_OPT_REDUCTION row. */
static const struct refusal {
	enum ploom_plan_kind kind;
	enum ploom_plan_option option;
	const char *why;
} refusals[] = {
	{PLOOM_PLAN_IPB, PLOOM_PLAN_OPT_REDUCTION,
	 "the reduction keeps one schedule of each class of equivalent ones, not always the "
	 "one with the fewest preemptions, so the search by preemptions could miss the "
	 "failure with the fewest; --reduction=dpor with --max-preemptions searches the "
	 "classes within a bound"},
	{PLOOM_PLAN_PCT, PLOOM_PLAN_OPT_REDUCTION, SAMPLE_NO_DPOR},
	{PLOOM_PLAN_RANDOM, PLOOM_PLAN_OPT_REDUCTION, SAMPLE_NO_DPOR},
	{PLOOM_PLAN_IPB, PLOOM_PLAN_OPT_SHARD,
	 "a shard walks the work units of the depth-first search, and ipb's levels are not "
	 "split into them"},
	{PLOOM_PLAN_PCT, PLOOM_PLAN_OPT_SHARD, SAMPLE_NO_SHARD},
	{PLOOM_PLAN_RANDOM, PLOOM_PLAN_OPT_SHARD, SAMPLE_NO_SHARD},
	{PLOOM_PLAN_PCT, PLOOM_PLAN_OPT_MAX_PREEMPTIONS,
	 "a pct schedule has at most --pct-depth minus 1 preemptions"},
	{PLOOM_PLAN_RANDOM, PLOOM_PLAN_OPT_MAX_PREEMPTIONS, "its choices are drawn, not bounded"},
};

#define NREFUSALS (sizeof(refusals) / sizeof(refusals[0]))

/* how a refusal names the option */
static const char *const option_spellings[] = {
	[PLOOM_PLAN_OPT_REDUCTION] = "--reduction=dpor",
	[PLOOM_PLAN_OPT_MAX_PREEMPTIONS] = "--max-preemptions",
	[PLOOM_PLAN_OPT_JOBS] = "--jobs above 1",
	[PLOOM_PLAN_OPT_SHARD] = "--shard",
};

const char *ploom_plan_refusal(enum ploom_plan_kind kind, enum ploom_plan_option option)
{
	size_t i;

	for (i = 0; i < NREFUSALS; i++)
		if (refusals[i].kind == kind && refusals[i].option == option)
			return refusals[i].why;
	return NULL;
}

/* ---- parsing and checking ---- */

/* The field of a kind that --search or --reduction spells. */
static const char *search_of(const struct ploom_search_kind *k)
{
	return k->search;
}

static const char *reduction_of(const struct ploom_search_kind *k)
{
	return k->reduction;
}

static const char *spelling_of(const struct ploom_search_kind *k)
{
	return k->spelling;
}

/* The i-th of n names listed in a message: "a", "a or b", "a, b or c". */
static const char *separator(size_t i, size_t n)
{
	return i == 0 ? "" : i + 1 < n ? ", " : " or ";
}

/* Writes to out the distinct values field gives the kinds with every flag
 * of flags, listed as separator() says. */
static void list_names(char *out, size_t size,
		       const char *(*field)(const struct ploom_search_kind *), unsigned flags)
{
	const char *names[PLOOM_PLAN_NKINDS] = {NULL};
	size_t i, j, n = 0, len = 0;

	for (i = 0; i < PLOOM_PLAN_NKINDS; i++) {
		if ((ploom_search_kinds[i].flags & flags) != flags)
			continue;
		for (j = 0; j < n && strcmp(names[j], field(&ploom_search_kinds[i])); j++)
			;
		if (j == n)
			names[n++] = field(&ploom_search_kinds[i]);
	}
	out[0] = '\0';
	for (i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%s", separator(i, n), names[i]);
}

/* Sets *out to name when a kind has it as field, else writes the usage
 * error about option to why. */
static int set_name(const char **out, const char *name,
		    const char *(*field)(const struct ploom_search_kind *), const char *option,
		    char *why, size_t size)
{
	char list[256];
	size_t i;

	for (i = 0; i < PLOOM_PLAN_NKINDS; i++)
		if (!strcmp(field(&ploom_search_kinds[i]), name)) {
			*out = field(&ploom_search_kinds[i]);
			return 0;
		}
	list_names(list, sizeof(list), field, 0);
	snprintf(why, size, "unknown %s (%s)", option, list);
	return -1;
}

int ploom_plan_set_search(struct ploom_plan *plan, const char *name, char *why, size_t size)
{
	return set_name(&plan->search, name, search_of, "--search", why, size);
}

int ploom_plan_set_reduction(struct ploom_plan *plan, const char *name, char *why,
			     size_t size)
{
	return set_name(&plan->reduction, name, reduction_of, "--reduction", why, size);
}

/* The rule for the search a check runs when its options do not say
 * (plan.h): fills in plan->search and plan->reduction, and
 * plan->default_why when the default is not plain depth-first search. */
static void take_default(struct ploom_plan *plan)
{
	plan->default_why = NULL;
	if (plan->search || plan->reduction) {
		if (!plan->search)
			plan->search = ploom_search_kinds[PLOOM_PLAN_DFS].search;
		if (!plan->reduction)
			plan->reduction = ploom_search_kinds[PLOOM_PLAN_DFS].reduction;
		return;
	}
	plan->defaulted = 1;
	if (plan->patches) {
		plan->search = ploom_search_kinds[PLOOM_PLAN_DPOR].search;
		plan->reduction = ploom_search_kinds[PLOOM_PLAN_DPOR].reduction;
		plan->default_why = "the default when modules are patched";
		return;
	}
	plan->search = ploom_search_kinds[PLOOM_PLAN_DFS].search;
	plan->reduction = ploom_search_kinds[PLOOM_PLAN_DFS].reduction;
}

/* 1 when the plan gives the option to kind k. */
static int given(const struct ploom_plan *plan, const struct ploom_search_kind *k,
		 enum ploom_plan_option option)
{
	switch (option) {
	case PLOOM_PLAN_OPT_REDUCTION:
		/* a reduction other than the one the kind is spelled with */
		return strcmp(plan->reduction, k->reduction) != 0;
	case PLOOM_PLAN_OPT_MAX_PREEMPTIONS:
		return plan->max_preemptions >= 0;
	case PLOOM_PLAN_OPT_JOBS:
		return plan->jobs > 1;
	case PLOOM_PLAN_OPT_SHARD:
		return plan->shard_count > 0;
	}
	return 0;
}

/* The first row of refusals[] that applies to kind k, or NULL. */
static const struct refusal *refused(const struct ploom_plan *plan,
				     const struct ploom_search_kind *k, int *shard_depth_alone)
{
	size_t i;

	for (i = 0; i < NREFUSALS; i++) {
		/* --shard-depth is checked with the shard options, where their
		 * rows begin; a row of --shard never applies without it */
		if (refusals[i].option == PLOOM_PLAN_OPT_SHARD && plan->shard_depth >= 0 &&
		    !plan->shard_count) {
			*shard_depth_alone = 1;
			return NULL;
		}
		if (refusals[i].kind == k->kind && given(plan, k, refusals[i].option))
			return &refusals[i];
	}
	return NULL;
}

int ploom_plan_check(struct ploom_plan *plan, char *why, size_t size)
{
	const struct ploom_search_kind *k;
	const struct refusal *r;
	int shard_depth_alone = 0;
	char list[256];

	take_default(plan);
	k = ploom_search_kind_find(plan->search, plan->reduction);

	/* a --search and a --reduction that no kind is: the search's own
	 * kind refuses the reduction */
	if (!k)
		k = ploom_search_kind_find(plan->search, NULL);
	/* plan->search is a name ploom_plan_set_search() took */
	if (!k)
		abort();
	r = refused(plan, k, &shard_depth_alone);
	if (r) {
		snprintf(why, size, "%s cannot be combined with %s: %s", k->spelling,
			 option_spellings[r->option], r->why);
		return -1;
	}
	if (shard_depth_alone || (plan->shard_depth >= 0 && !plan->shard_count)) {
		snprintf(why, size, "--shard-depth needs --shard");
		return -1;
	}
	/* a --search that combines with no --reduction but its own has a row
	 * of PLOOM_PLAN_OPT_REDUCTION */
	if (strcmp(k->reduction, plan->reduction))
		abort();
	if ((k->flags & PLOOM_KIND_SAMPLE) && !plan->max_schedules && !plan->time_limit_s) {
		snprintf(why, size, "%s needs --max-schedules or --time-limit: a sample never "
			 "completes the search", k->spelling);
		return -1;
	}
	if (plan->seed_given && !(k->flags & PLOOM_KIND_SAMPLE)) {
		list_names(list, sizeof(list), spelling_of, PLOOM_KIND_SAMPLE);
		snprintf(why, size, "--seed needs %s", list);
		return -1;
	}
	if (plan->pct_depth_given && !(k->flags & PLOOM_KIND_PCT_DEPTH)) {
		list_names(list, sizeof(list), spelling_of, PLOOM_KIND_PCT_DEPTH);
		snprintf(why, size, "--pct-depth needs %s", list);
		return -1;
	}
	plan->kind = k;
	if (plan->shard_count) {
		ploom_shard_init(&plan->shard, plan->shard_index, plan->shard_count);
		if (plan->shard_depth >= 0)
			plan->shard.depth = plan->shard_depth;
	}
	return 0;
}

int ploom_plan_default_on_shared_plain_state(struct ploom_plan *plan)
{
	struct ploom_plan as_reduction = *plan;
	char why[512];

	if (!plan->defaulted || !plan->kind || plan->kind->kind != PLOOM_PLAN_DFS ||
	    plan->shard_count)
		return 0;
	as_reduction.search = ploom_search_kinds[PLOOM_PLAN_DPOR].search;
	as_reduction.reduction = ploom_search_kinds[PLOOM_PLAN_DPOR].reduction;
	if (ploom_plan_check(&as_reduction, why, sizeof(why)) < 0)
		return 0;
	as_reduction.default_why = "the default when the code under test shares plain state";
	*plan = as_reduction;
	return 1;
}

const char *ploom_plan_progress_hint(const struct ploom_plan *plan, double total)
{
	if (!plan->kind || plan->kind->kind != PLOOM_PLAN_DFS || total <= PLOOM_PLAN_HINT_SCHEDULES)
		return NULL;
	return "--reduction=dpor would explore fewer";
}

void ploom_plan_configure(const struct ploom_plan *plan, struct ploom_config *config)
{
	config->max_preemptions = plan->max_preemptions;
	config->reduction = (char *)plan->kind->reduction;
	config->search = (char *)plan->kind->search;
	config->seed = plan->seed;
	config->pct_depth = plan->pct_depth;
}

int ploom_plan_strategy_new(struct ploom_strategy **out, struct ploom_plan *plan,
			    struct ploom_err *err)
{
	return drivers[plan->kind->kind](out, plan, err);
}
