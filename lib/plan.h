/* plan.h - the searches ploom-explore runs, and the plan of one run.
 *
 * A search kind is one line of the list in search/kinds.h: its name, how
 * the options spell it (--search and --reduction, which are also the
 * "search" and "reduction" of traces and statistics) and what it is (its
 * flags), which kind.c makes the registry of; its driver, which builds
 * the strategy search.h runs, and the options it refuses are in its file
 * of search/.
 *
 * A plan is the options of one run that shape its search.  The command
 * fills it as it parses; ploom_plan_check() resolves the kind and refuses
 * the combinations that would be unsound or are not built, from each
 * kind's refusals with the reason for each, the way git's parse-options
 * refuses incompatible options:
 *
 *     struct ploom_plan plan = PLOOM_PLAN_INIT;
 *     char why[512];
 *     ...
 *     if (ploom_plan_set_search(&plan, optarg, why, sizeof(why)) < 0)
 *             usage error: why
 *     ...
 *     if (ploom_plan_check(&plan, why, sizeof(why)) < 0)
 *             usage error: why
 *     ploom_plan_configure(&plan, &config);
 *     ploom_plan_strategy_new(&strategy, &plan, &err);
 *
 * Everything here is static: a kind is never freed, a plan owns nothing. */
#ifndef PLOOM_PLAN_H
#define PLOOM_PLAN_H

#include <stddef.h>

#include "err.h"
#include "kind.h"
#include "shard.h"

struct ploom_config;
struct ploom_strategy;
struct ploom_plan;

struct ploom_plan {
	/* as parsed */
	const char *search;         /* a known --search (ploom_plan_set_search()); NULL:
				     * not given, the default decides */
	const char *reduction;      /* a known --reduction (ploom_plan_set_reduction());
				     * NULL: not given */
	int patches;                /* the check names modules to patch (--patch) */
	int max_preemptions;        /* -1: no bound */
	int jobs;                   /* workers, from 1 */
	long max_schedules;         /* 0: none */
	double time_limit_s;        /* 0: none */
	unsigned long seed;
	int seed_given;
	int pct_depth;
	int pct_depth_given;
	int shard_index;
	int shard_count;            /* 0: no --shard */
	int shard_depth;            /* -1: the default */
	/* set by ploom_plan_check() */
	const struct ploom_search_kind *kind;
	/* why the kind is the default, for the result to say ("the default
	 * when modules are patched"), or NULL when the options chose it or
	 * the default is plain depth-first search */
	const char *default_why;
	int defaulted;              /* neither --search nor --reduction was given */
	struct ploom_shard shard;   /* with --shard: the shard this run walks */
};

/* the default search, no bound, one worker, no limit, seed 0, pct depth
 * 3, no shard */
#define PLOOM_PLAN_INIT \
	{.search = NULL, .reduction = NULL, .max_preemptions = -1, .jobs = 1, .pct_depth = 3, \
	 .shard_depth = -1}


/* NULL when kind takes option, else why not (a static string, without
 * the kind's or the option's name). */
const char *ploom_plan_refusal(enum ploom_plan_kind kind, enum ploom_plan_option option);

/* Set plan's --search or --reduction to name, a static or argv string the
 * plan points to.  Returns 0, or -1 when no kind spells itself so, with
 * why (of size bytes) the usage error without the value:
 * "unknown --search (dfs, ipb, pct or random)". */
int ploom_plan_set_search(struct ploom_plan *plan, const char *name, char *why, size_t size);
int ploom_plan_set_reduction(struct ploom_plan *plan, const char *name, char *why,
			     size_t size);

/* Resolves plan->kind and refuses what does not combine.  When neither
 * --search nor --reduction is given, the kind is the default, decided
 * here and nowhere else: the reduction when the check names modules to
 * patch (real code, on which depth-first search rarely finishes), else
 * depth-first search, whose counts the README promises for a scenario
 * of ploom's own operations.  The scenario's module and its project's,
 * patched by default (ploom_config_module_defaults(), config.h), keep
 * depth-first search, until it finds plain state that tasks share
 * (ploom_plan_default_on_shared_plain_state()): whether they use
 * threading at all is known only once the worker has run them, and every
 * search sees their plain state.  Then checks the kind's refusals, in
 * one order of the options whatever the kind (the reduction, the shard,
 * the bound, the workers; --shard-depth without --shard before the
 * shard), then what a kind needs (a sample's limit) and what an option
 * needs (--seed a sample, --pct-depth pct).  Returns 0 with plan->kind set (and
 * plan->shard, with --shard), or -1 with why (of size bytes) the usage
 * error: "--reduction=dpor cannot be combined with --shard: ...". */
int ploom_plan_check(struct ploom_plan *plan, char *why, size_t size);

/* The second half of the default: a depth-first search that the default
 * chose (not the options), and that found plain state that tasks share
 * at access sites that were no points (outcome refine, event.h), runs on
 * as the reduction, as real code does; the counts of a scenario of
 * ploom's own operations, which shares no plain state, stay those of
 * depth-first search.  Returns 1 with the plan checked again as the
 * reduction (plan->kind, plan->default_why "the default when the code
 * under test shares plain state"), for the command to configure and
 * start again; 0 when the plan stays as it is (the options chose it, or
 * --shard, whose parts must all run one search). */
int ploom_plan_default_on_shared_plain_state(struct ploom_plan *plan);

/* The schedules a depth-first search may be estimated to hold before its
 * progress says that the reduction would explore fewer. */
#define PLOOM_PLAN_HINT_SCHEDULES 1e5

/* What the progress of the checked plan's search adds once its estimated
 * total is total (-1: unknown): "--reduction=dpor would explore fewer"
 * for a depth-first search without the reduction past
 * PLOOM_PLAN_HINT_SCHEDULES, else NULL.  A static string. */
const char *ploom_plan_progress_hint(const struct ploom_plan *plan, double total);

/* Writes the checked plan's search into config (max_preemptions,
 * reduction, search, seed, pct_depth), which then points to static
 * strings: for the workers, the traces and the statistics. */
void ploom_plan_configure(const struct ploom_plan *plan, struct ploom_config *config);

/* A new strategy for the checked plan: its kind's driver.  On success the
 * caller owns *out and frees it with ploom_strategy_free(), or hands it
 * to ploom_search_run(), which frees it; with --shard the strategy points
 * to plan->shard, so the plan outlives it.  Returns 0, or -1 with err
 * filled. */
int ploom_plan_strategy_new(struct ploom_strategy **out, struct ploom_plan *plan,
			    struct ploom_err *err);

/* Writes to out (of size bytes, cut short if need be) what each --search
 * does, from the registry, for a usage: "dfs: depth first (default);
 * ipb: ...; random: uniform random choices. pct and random need -n or -t
 * and never pass". */
void ploom_plan_search_help(char *out, size_t size);

#endif
