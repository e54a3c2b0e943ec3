/* kinds.h - the list of the search kinds, one line each.
 *
 * The strategies live in this folder, one file each (git's negotiator/
 * is the model), and this list is what the rest of lib/ knows of them:
 * kind.c makes the registry of names and flags of it, plan.c the table
 * of drivers and refusals, and ploom-explore's usage the words of
 * --search.  A new search is a line here and its file here, which
 * defines the two names PLOOM_SEARCH_DECLARE() gives it.
 *
 * A line is X(KIND, name, search, reduction, spelling, flags, help):
 *   KIND       the enum ploom_plan_kind is PLOOM_PLAN_<KIND>
 *   name       the kind's own name, and the <name> of its file's
 *              ploom_search_<name>_new() and ploom_search_<name>_refusals[]
 *   search     its --search, also the "search" of its traces and statistics
 *   reduction  its --reduction, "none" or "dpor", likewise
 *   spelling   how a refusal names it: "--search=ipb", "--reduction=dpor"
 *   flags      PLOOM_KIND_* (kind.h)
 *   help       what its --search does, for the usage; NULL for a kind
 *              spelled with another's --search (the reduction, which the
 *              usage of --reduction describes)
 *
 * The order is the registry's and the usage's: the first line of a
 * --search or --reduction is where its name is listed. */
#ifndef PLOOM_SEARCH_KINDS_H
#define PLOOM_SEARCH_KINDS_H

struct ploom_err;
struct ploom_plan;
struct ploom_strategy;

/* The options a kind may refuse; ploom_plan_check() (plan.h) checks
 * them in the order plan.c gives, whatever the order of a kind's list. */
enum ploom_plan_option {
	PLOOM_PLAN_OPT_REDUCTION,       /* --reduction=dpor */
	PLOOM_PLAN_OPT_MAX_PREEMPTIONS, /* -p, --max-preemptions */
	PLOOM_PLAN_OPT_JOBS,            /* -j, --jobs above 1 */
	PLOOM_PLAN_OPT_SHARD,           /* --shard */
};

/* An option a kind does not take, and why (a sentence without the kind's
 * or the option's name: ploom_plan_check() words the refusal). */
struct ploom_refusal {
	enum ploom_plan_option option;
	const char *why;
};

#define PLOOM_SEARCH_KINDS(X) \
	X(DFS, dfs, "dfs", "none", "--search=dfs", 0, "depth first (default)") \
	X(DPOR, dpor, "dfs", "dpor", "--reduction=dpor", PLOOM_KIND_INSTRUMENTS, NULL) \
	X(IPB, ipb, "ipb", "none", "--search=ipb", PLOOM_KIND_MINIMAL, \
	  "fewest preemptions first, every schedule with 0, then 1, ...") \
	X(PCT, pct, "pct", "none", "--search=pct", PLOOM_KIND_SAMPLE | PLOOM_KIND_PCT_DEPTH, \
	  "PCT samples, at most N-1 preemptions each (see --pct-depth)") \
	X(RANDOM, random, "random", "none", "--search=random", PLOOM_KIND_SAMPLE, \
	  "uniform random choices")

/* What each kind's file defines: its driver, a new strategy for a plan
 * that ploom_plan_check() accepted (as ploom_plan_strategy_new(), plan.h,
 * documents), and the options it does not take, with why, in a list that
 * ends with a NULL why.  A kind whose --search no kind spells with
 * --reduction=dpor (every one but dfs) refuses PLOOM_PLAN_OPT_REDUCTION:
 * ploom_plan_check() aborts on such a plan otherwise. */
#define PLOOM_SEARCH_DECLARE(KIND, name, ...) \
	int ploom_search_##name##_new(struct ploom_strategy **out, struct ploom_plan *plan, \
				      struct ploom_err *err); \
	extern const struct ploom_refusal ploom_search_##name##_refusals[];

PLOOM_SEARCH_KINDS(PLOOM_SEARCH_DECLARE)

#endif
