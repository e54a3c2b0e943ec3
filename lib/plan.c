/* The rules of a plan, over the drivers and refusals the kinds' files
 * define (search/kinds.h); plan.h documents them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "search/kinds.h"
#include "trace.h"

/* ---- the registry ---- */

/* Each kind's driver and refusals, by enum ploom_plan_kind, from the
 * kind's file (search/kinds.h). */
#define PLUG(KIND, name, ...) [PLOOM_PLAN_##KIND] = {ploom_search_##name##_new, \
						 ploom_search_##name##_refusals},
static const struct plug {
	int (*new)(struct ploom_strategy **out, struct ploom_plan *plan, struct ploom_err *err);
	const struct ploom_refusal *refusals;
} plugs[PLOOM_PLAN_NKINDS] = {
	PLOOM_SEARCH_KINDS(PLUG)
};
#undef PLUG

/* The order ploom_plan_check() checks the options a kind may refuse in,
 * whatever their order in the kind's list: when several are refused, the
 * first here is the one the user reads.  --shard-depth without --shard
 * is checked between the reduction and the shard. */
static const enum ploom_plan_option check_order[] = {
	PLOOM_PLAN_OPT_REDUCTION,
	PLOOM_PLAN_OPT_SHARD,
	PLOOM_PLAN_OPT_MAX_PREEMPTIONS,
	PLOOM_PLAN_OPT_JOBS,
};

#define NOPTIONS (sizeof(check_order) / sizeof(check_order[0]))

/* how a refusal names the option */
static const char *const option_spellings[] = {
	[PLOOM_PLAN_OPT_REDUCTION] = "--reduction=dpor",
	[PLOOM_PLAN_OPT_MAX_PREEMPTIONS] = "--max-preemptions",
	[PLOOM_PLAN_OPT_JOBS] = "--jobs above 1",
	[PLOOM_PLAN_OPT_SHARD] = "--shard",
};

const char *ploom_plan_refusal(enum ploom_plan_kind kind, enum ploom_plan_option option)
{
	const struct ploom_refusal *r;

	for (r = plugs[kind].refusals; r->why; r++)
		if (r->option == option)
			return r->why;
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

/* The first option of check_order[] that kind k refuses and the plan
 * gives, with *why its reason; PLOOM_PLAN_OPT_SHARD with *why NULL when
 * --shard-depth comes without --shard before any such option; -1 when
 * nothing is refused. */
static int refused(const struct ploom_plan *plan, const struct ploom_search_kind *k,
		   const char **why)
{
	size_t i;

	for (i = 0; i < NOPTIONS; i++) {
		if (check_order[i] == PLOOM_PLAN_OPT_SHARD && plan->shard_depth >= 0 &&
		    !plan->shard_count) {
			*why = NULL;
			return PLOOM_PLAN_OPT_SHARD;
		}
		*why = ploom_plan_refusal(k->kind, check_order[i]);
		if (*why && given(plan, k, check_order[i]))
			return (int)check_order[i];
	}
	return -1;
}

int ploom_plan_check(struct ploom_plan *plan, char *why, size_t size)
{
	const struct ploom_search_kind *k;
	const char *reason;
	char list[256];
	int option;

	take_default(plan);
	k = ploom_search_kind_find(plan->search, plan->reduction);

	/* a --search and a --reduction that no kind is: the search's own
	 * kind refuses the reduction */
	if (!k)
		k = ploom_search_kind_find(plan->search, NULL);
	/* plan->search is a name ploom_plan_set_search() took */
	if (!k)
		abort();
	option = refused(plan, k, &reason);
	if (option >= 0 && reason) {
		snprintf(why, size, "%s cannot be combined with %s: %s", k->spelling,
			 option_spellings[option], reason);
		return -1;
	}
	if (option >= 0) {
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
	config->kind = plan->kind;
	config->seed = plan->seed;
	config->pct_depth = plan->pct_depth;
}

int ploom_plan_strategy_new(struct ploom_strategy **out, struct ploom_plan *plan,
			    struct ploom_err *err)
{
	return plugs[plan->kind->kind].new(out, plan, err);
}

void ploom_plan_search_help(char *out, size_t size)
{
	const char *samples[PLOOM_PLAN_NKINDS];
	size_t i, n = 0, len = 0;

	out[0] = '\0';
	for (i = 0; i < PLOOM_PLAN_NKINDS && len < size; i++) {
		const struct ploom_search_kind *k = &ploom_search_kinds[i];
		if (!k->help)
			continue;
		len += (size_t)snprintf(out + len, size - len, "%s%s: %s", len ? "; " : "",
					k->search, k->help);
		if (k->flags & PLOOM_KIND_SAMPLE)
			samples[n++] = k->search;
	}
	for (i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%s", i == 0 ? ". " :
					i + 1 < n ? ", " : " and ", samples[i]);
	if (n && len < size)
		snprintf(out + len, size - len, " need -n or -t and never pass");
}
