/* Tests of the search plans (lib/plan): which options each kind takes,
 * the usage error for each it refuses, word for word as ploom-explore
 * prints it, and that every kind's driver builds its strategy.  A case is
 * the options of a command line and the refusal they get (NULL: none). */
#include <stdio.h>
#include <string.h>

#include "../../lib/plan.h"
#include "../../lib/search.h"
#include "../../lib/trace.h"
#include "check.h"

struct plan_case {
	const char *search;
	const char *reduction;
	int max_preemptions;
	int jobs;
	long max_schedules;
	int seed_given;
	int pct_depth_given;
	int shard_count;
	int shard_depth;
	const char *kind;           /* the kind checked, when refused is NULL */
	const char *refused;
};

#define IPB_NO_DPOR "--search=ipb cannot be combined with --reduction=dpor: the reduction " \
	"keeps one schedule of each class of equivalent ones, not always the one with the " \
	"fewest preemptions, so the search by preemptions could miss the failure with the " \
	"fewest; --reduction=dpor with --max-preemptions searches the classes within a bound"

static const struct plan_case cases[] = {
	{"dfs", "none", -1, 1, 0, 0, 0, 0, -1, "dfs", NULL},
	{"dfs", "dpor", -1, 1, 0, 0, 0, 0, -1, "dpor", NULL},
	{"ipb", "none", 2, 4, 0, 0, 0, 0, -1, "ipb", NULL},
	{"pct", "none", -1, 2, 10, 1, 1, 0, -1, "pct", NULL},
	{"random", "none", -1, 1, 10, 1, 0, 0, -1, "random", NULL},
	{"dfs", "none", 1, 3, 0, 0, 0, 4, 2, "dfs", NULL},
	{"ipb", "dpor", -1, 1, 0, 0, 0, 0, -1, NULL, IPB_NO_DPOR},
	{"pct", "dpor", -1, 1, 10, 0, 0, 0, -1, NULL,
	 "--search=pct cannot be combined with --reduction=dpor: a sample draws its choices in "
	 "the worker, where no partial-order reduction runs"},
	{"dfs", "dpor", 0, 1, 0, 0, 0, 0, -1, "dpor", NULL},
	{"dfs", "dpor", -1, 2, 0, 0, 0, 0, -1, "dpor", NULL},
	{"dfs", "dpor", -1, 3, 0, 0, 0, 4, 2, "dpor", NULL},
	{"dfs", "dpor", 1, 2, 0, 0, 0, 4, 2, "dpor", NULL},
	{"ipb", "none", -1, 1, 0, 0, 0, 2, -1, NULL,
	 "--search=ipb cannot be combined with --shard: a shard walks the work units of the "
	 "depth-first search, and ipb's levels are not split into them"},
	{"random", "none", -1, 1, 10, 0, 0, 2, -1, NULL,
	 "--search=random cannot be combined with --shard: shards split a depth-first tree; "
	 "give each machine a --seed of its own instead"},
	{"pct", "none", 1, 1, 10, 0, 0, 0, -1, NULL,
	 "--search=pct cannot be combined with --max-preemptions: a pct schedule has at most "
	 "--pct-depth minus 1 preemptions"},
	{"random", "none", 1, 1, 10, 0, 0, 0, -1, NULL,
	 "--search=random cannot be combined with --max-preemptions: its choices are drawn, "
	 "not bounded"},
	{"random", "none", -1, 1, 0, 0, 0, 0, -1, NULL,
	 "--search=random needs --max-schedules or --time-limit: a sample never completes the "
	 "search"},
	{"dfs", "dpor", -1, 1, 0, 1, 0, 0, -1, NULL,
	 "--seed needs --search=pct or --search=random"},
	{"random", "none", -1, 1, 10, 0, 1, 0, -1, NULL, "--pct-depth needs --search=pct"},
	{"dfs", "none", -1, 1, 0, 0, 0, 0, 3, NULL, "--shard-depth needs --shard"},
	/* several refused: the first in the table's order, which puts --reduction
	 * first, then --shard-depth and --shard, then a sample's */
	{"pct", "none", 1, 1, 0, 0, 0, 0, 3, NULL, "--shard-depth needs --shard"},
	{"pct", "none", 1, 1, 10, 0, 0, 2, -1, NULL,
	 "--search=pct cannot be combined with --shard: shards split a depth-first tree; give "
	 "each machine a --seed of its own instead"},
	{"ipb", "dpor", -1, 2, 0, 0, 0, 0, 3, NULL, IPB_NO_DPOR},
};

static void plan_check_should_refuse_as_explore_says(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct plan_case *c = &cases[i];
		struct ploom_plan plan = PLOOM_PLAN_INIT;
		char why[512] = "";
		int r;

		CHECK_INT(ploom_plan_set_search(&plan, c->search, why, sizeof(why)), 0);
		CHECK_INT(ploom_plan_set_reduction(&plan, c->reduction, why, sizeof(why)), 0);
		plan.max_preemptions = c->max_preemptions;
		plan.jobs = c->jobs;
		plan.max_schedules = c->max_schedules;
		plan.seed_given = c->seed_given;
		plan.pct_depth_given = c->pct_depth_given;
		plan.shard_index = c->shard_count ? 1 : -1;
		plan.shard_count = c->shard_count;
		plan.shard_depth = c->shard_depth;
		r = ploom_plan_check(&plan, why, sizeof(why));
		if (!c->refused) {
			if (!CHECK_INT(r, 0))
				printf("  case %zu: %s\n", i, why);
			else
				CHECK_STR(plan.kind->name, c->kind);
			if (r == 0 && c->shard_count)
				CHECK_INT(plan.shard.count, c->shard_count);
		} else {
			CHECK_INT(r, -1);
			CHECK_STR(why, c->refused);
		}
	}
}

static void set_search_should_list_the_known_names(void)
{
	struct ploom_plan plan = PLOOM_PLAN_INIT;
	char why[256];

	CHECK_INT(ploom_plan_set_search(&plan, "bfs", why, sizeof(why)), -1);
	CHECK_STR(why, "unknown --search (dfs, ipb, pct or random)");
	CHECK_INT(ploom_plan_set_reduction(&plan, "por", why, sizeof(why)), -1);
	CHECK_STR(why, "unknown --reduction (none or dpor)");
	/* a refused name sets nothing: the default still decides */
	CHECK_INT(plan.search == NULL, 1);
	CHECK_INT(plan.reduction == NULL, 1);
}

/* Without --search and --reduction the kind is the default: the
 * reduction when modules are named to patch, which the result says, else
 * depth-first search; either option given decides alone. */
static void the_default_search_follows_the_patched_modules(void)
{
	static const struct {
		const char *search, *reduction;
		int patches, max_preemptions;
		const char *kind, *why;
	} defaults[] = {
		{NULL, NULL, 0, -1, "dfs", NULL},
		{NULL, NULL, 1, -1, "dpor", "the default when modules are patched"},
		{NULL, NULL, 1, 2, "dpor", "the default when modules are patched"},
		{"dfs", NULL, 1, -1, "dfs", NULL},
		{NULL, "none", 1, -1, "dfs", NULL},
		{"ipb", NULL, 1, -1, "ipb", NULL},
		{NULL, "dpor", 0, -1, "dpor", NULL},
	};
	size_t i;

	for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
		struct ploom_plan plan = PLOOM_PLAN_INIT;
		struct ploom_config config = {0};
		char why[512] = "";

		if (defaults[i].search)
			CHECK_INT(ploom_plan_set_search(&plan, defaults[i].search, why, sizeof(why)), 0);
		if (defaults[i].reduction)
			CHECK_INT(ploom_plan_set_reduction(&plan, defaults[i].reduction, why,
							   sizeof(why)), 0);
		plan.patches = defaults[i].patches;
		plan.max_preemptions = defaults[i].max_preemptions;
		if (!CHECK_INT(ploom_plan_check(&plan, why, sizeof(why)), 0))
			printf("  case %zu: %s\n", i, why);
		CHECK_STR(plan.kind->name, defaults[i].kind);
		if (defaults[i].why)
			CHECK_STR(plan.default_why, defaults[i].why);
		else
			CHECK_INT(plan.default_why == NULL, 1);
		ploom_plan_configure(&plan, &config);
		CHECK(config.kind == plan.kind);
	}
}

/* A depth-first search that the default chose turns to the reduction
 * when plain state is shared; one the options chose, or a shard's, stays. */
static void the_default_turns_to_the_reduction_on_shared_plain_state(void)
{
	struct ploom_plan plan = PLOOM_PLAN_INIT, given = PLOOM_PLAN_INIT, shard = PLOOM_PLAN_INIT;
	char why[512];

	plan.max_preemptions = 2;
	plan.jobs = 2;
	CHECK_INT(ploom_plan_check(&plan, why, sizeof(why)), 0);
	CHECK_INT(ploom_plan_default_on_shared_plain_state(&plan), 1);
	CHECK_STR(plan.kind->name, "dpor");
	CHECK_STR(plan.default_why, "the default when the code under test shares plain state");
	CHECK_INT(plan.max_preemptions, 2);
	CHECK_INT(plan.jobs, 2);
	/* once the reduction, it stays */
	CHECK_INT(ploom_plan_default_on_shared_plain_state(&plan), 0);
	CHECK_INT(ploom_plan_set_search(&given, "dfs", why, sizeof(why)), 0);
	CHECK_INT(ploom_plan_check(&given, why, sizeof(why)), 0);
	CHECK_INT(ploom_plan_default_on_shared_plain_state(&given), 0);
	CHECK_STR(given.kind->name, "dfs");
	shard.shard_index = 0;
	shard.shard_count = 2;
	CHECK_INT(ploom_plan_check(&shard, why, sizeof(why)), 0);
	CHECK_INT(ploom_plan_default_on_shared_plain_state(&shard), 0);
	CHECK_STR(shard.kind->name, "dfs");
}

/* Depth-first search past 10^5 estimated schedules hints at the
 * reduction; the reduction itself, or a smaller search, does not. */
static void a_large_dfs_hints_at_the_reduction(void)
{
	struct ploom_plan dfs = PLOOM_PLAN_INIT, dpor = PLOOM_PLAN_INIT;
	char why[512];

	CHECK_INT(ploom_plan_check(&dfs, why, sizeof(why)), 0);
	dpor.patches = 1;
	CHECK_INT(ploom_plan_check(&dpor, why, sizeof(why)), 0);
	CHECK_INT(ploom_plan_progress_hint(&dfs, 1e5) == NULL, 1);
	CHECK_INT(ploom_plan_progress_hint(&dfs, -1) == NULL, 1);
	CHECK_STR(ploom_plan_progress_hint(&dfs, 1e5 + 1), "--reduction=dpor would explore fewer");
	CHECK_INT(ploom_plan_progress_hint(&dpor, 1e9) == NULL, 1);
}

/* The flags the codecs of traces and statistics read, by the "search"
 * (and "reduction") a trace states. */
static void flags_should_answer_what_a_search_is(void)
{
	CHECK_INT(ploom_search_flags(NULL), 0);
	CHECK_INT(ploom_search_flags("dfs"), 0);
	CHECK_INT(ploom_search_flags("bfs"), 0);
	CHECK_INT(ploom_search_flags("ipb"), PLOOM_KIND_MINIMAL);
	CHECK_INT(ploom_search_flags("pct"), PLOOM_KIND_SAMPLE | PLOOM_KIND_PCT_DEPTH);
	CHECK_INT(ploom_search_flags("random"), PLOOM_KIND_SAMPLE);
	CHECK_STR(ploom_search_kind_find(NULL, "dpor")->name, "dpor");
	CHECK(ploom_search_kind_find("ipb", "dpor") == NULL);
	CHECK(ploom_plan_refusal(PLOOM_PLAN_DFS, PLOOM_PLAN_OPT_SHARD) == NULL);
	CHECK(ploom_plan_refusal(PLOOM_PLAN_IPB, PLOOM_PLAN_OPT_JOBS) == NULL);
	CHECK(ploom_plan_refusal(PLOOM_PLAN_DPOR, PLOOM_PLAN_OPT_JOBS) == NULL);
	CHECK(ploom_plan_refusal(PLOOM_PLAN_DPOR, PLOOM_PLAN_OPT_SHARD) == NULL);
	CHECK(ploom_plan_refusal(PLOOM_PLAN_DPOR, PLOOM_PLAN_OPT_MAX_PREEMPTIONS) == NULL);
}

/* The invariant ploom_plan_check() aborts on: a --search that no kind
 * spells with --reduction=dpor refuses the reduction. */
static void every_search_should_take_or_refuse_the_reduction(void)
{
	static const char *const searches[] = {"dfs", "ipb", "pct", "random"};
	size_t i;

	for (i = 0; i < sizeof(searches) / sizeof(searches[0]); i++) {
		const struct ploom_search_kind *k = ploom_search_kind_find(searches[i], NULL);

		if (!CHECK(k != NULL))
			continue;
		CHECK_INT(k->kind >= 0 && k->kind < PLOOM_PLAN_NKINDS, 1);
		if (!ploom_search_kind_find(searches[i], "dpor"))
			CHECK(ploom_plan_refusal(k->kind, PLOOM_PLAN_OPT_REDUCTION) != NULL);
	}
}

/* Every kind's driver builds the strategy of its name: "dfs" for dpor's
 * search only by its reduction, so the strategy says "dpor". */
static void every_driver_should_build_its_strategy(void)
{
	static const struct {
		const char *search, *reduction, *strategy;
	} kinds[] = {
		{"dfs", "none", "dfs"}, {"dfs", "dpor", "dpor"}, {"ipb", "none", "ipb"},
		{"pct", "none", "pct"}, {"random", "none", "random"},
	};
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct ploom_plan plan = PLOOM_PLAN_INIT;
		struct ploom_config config = {0};
		struct ploom_strategy *s = NULL;
		struct ploom_err err = {0, ""};
		char why[512];

		plan.search = kinds[i].search;
		plan.reduction = kinds[i].reduction;
		plan.max_schedules = 10;
		if (!CHECK_INT(ploom_plan_check(&plan, why, sizeof(why)), 0))
			continue;
		ploom_plan_configure(&plan, &config);
		CHECK(config.kind && !strcmp(config.kind->search, kinds[i].search) &&
		      !strcmp(config.kind->reduction, kinds[i].reduction));
		CHECK_INT(config.pct_depth, 3);
		if (!CHECK_INT(ploom_plan_strategy_new(&s, &plan, &err), 0))
			continue;
		CHECK_STR(s->ops->name, kinds[i].strategy);
		ploom_strategy_free(s);
	}
}

/* A shard of dpor's search is dpor's strategy, which knows its probes and
 * numbers its first run unit 0, owned by shard 0 only. */
static void dpor_driver_should_build_a_shard(void)
{
	int index;

	for (index = 0; index < 2; index++) {
		struct ploom_plan plan = PLOOM_PLAN_INIT;
		struct ploom_strategy *s = NULL;
		struct ploom_err err = {0, ""};
		char why[512];

		plan.reduction = "dpor";
		plan.jobs = 2;
		plan.shard_index = index;
		plan.shard_count = 2;
		if (!CHECK_INT(ploom_plan_check(&plan, why, sizeof(why)), 0) ||
		    !CHECK_INT(ploom_plan_strategy_new(&s, &plan, &err), 0))
			continue;
		CHECK_STR(s->ops->name, "dpor");
		if (CHECK(s->ops->probe != NULL))
			CHECK_INT(s->ops->probe(s), index != 0);
		CHECK_INT(plan.shard.units, 1);
		CHECK_INT(plan.shard.owned, index == 0);
		ploom_strategy_free(s);
	}
}

/* The usage of --search names each search the registry describes, in
 * its order, and what the samples need. */
static void the_search_help_describes_every_search_with_words(void)
{
	char help[1024], want[256], small[12];
	const char *at = help, *found;
	size_t i;

	ploom_plan_search_help(help, sizeof(help));
	for (i = 0; i < PLOOM_PLAN_NKINDS; i++) {
		const struct ploom_search_kind *k = &ploom_search_kinds[i];

		if (!k->help)
			continue;
		snprintf(want, sizeof(want), "%s: %s", k->search, k->help);
		found = strstr(at, want);
		if (!CHECK(found != NULL))
			printf("  '%s' not in order in '%s'\n", want, help);
		else
			at = found + strlen(want);
	}
	CHECK_STR(at, ". pct and random need -n or -t and never pass");
	CHECK(strstr(help, "dpor:") == NULL);
	ploom_plan_search_help(small, sizeof(small));
	CHECK_STR(small, "dfs: depth ");
}

int main(void)
{
	plan_check_should_refuse_as_explore_says();
	the_search_help_describes_every_search_with_words();
	set_search_should_list_the_known_names();
	the_default_search_follows_the_patched_modules();
	a_large_dfs_hints_at_the_reduction();
	the_default_turns_to_the_reduction_on_shared_plain_state();
	flags_should_answer_what_a_search_is();
	every_search_should_take_or_refuse_the_reduction();
	every_driver_should_build_its_strategy();
	dpor_driver_should_build_a_shard();
	return check_report();
}
