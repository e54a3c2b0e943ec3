/* kind.h - the registry of search kinds: what each search ploom runs is
 * called and what it is.
 *
 * A leaf module: the codecs of traces and statistics ask it whether a
 * recorded search is a sample, and plan.c builds each kind's search,
 * without either depending on the other.  Both are made of the list of
 * kinds in search/kinds.h, where a new search is a line. */
#ifndef PLOOM_KIND_H
#define PLOOM_KIND_H

#include "search/kinds.h"

/* The kinds, in the list's order: PLOOM_PLAN_DFS, PLOOM_PLAN_DPOR, ... */
#define PLOOM_KIND_ENUM(KIND, ...) PLOOM_PLAN_##KIND,
enum ploom_plan_kind {
	PLOOM_SEARCH_KINDS(PLOOM_KIND_ENUM)
	PLOOM_PLAN_NKINDS,
};
#undef PLOOM_KIND_ENUM

/* What a kind is: the answers to the questions the utilities and the
 * codecs of traces and statistics ask of a search. */
enum {
	/* draws its schedules (sample.h): takes --seed, needs -n or -t, never
	 * passes; traces and statistics carry its seed */
	PLOOM_KIND_SAMPLE = 1 << 0,
	/* takes --pct-depth; traces and statistics carry it */
	PLOOM_KIND_PCT_DEPTH = 1 << 1,
	/* runs every schedule with fewer preemptions before the first
	 * failure, so that failure is minimal by construction and no
	 * minimizer runs */
	PLOOM_KIND_MINIMAL = 1 << 2,
	/* makes the plain state of the code under test scheduling points
	 * unless told not to (ploom_config_instrument_default(), config.h):
	 * the reduction branches only where two steps conflict, so the
	 * points plain state adds cost it few schedules, where a search
	 * without it runs every order of them */
	PLOOM_KIND_INSTRUMENTS = 1 << 3,
};

struct ploom_search_kind {
	enum ploom_plan_kind kind;
	const char *name;           /* "dfs", "dpor", "ipb", "pct", "random" */
	const char *search;         /* its --search: "dfs" for dpor */
	const char *reduction;      /* its --reduction: "none", or "dpor" */
	const char *spelling;       /* how a refusal names it: "--search=ipb",
				     * "--reduction=dpor" */
	unsigned flags;             /* PLOOM_KIND_* */
	const char *help;           /* what its --search does, or NULL (kinds.h) */
};

/* The registry, one row per line of search/kinds.h, in its order (that
 * of enum ploom_plan_kind and of the names the usage errors list). */
extern const struct ploom_search_kind ploom_search_kinds[PLOOM_PLAN_NKINDS];

/* The kind a trace or statistics that do not say their search ran
 * (written before the fields "search" and "reduction"): depth-first
 * search without the reduction.  How such a record reads, not what a
 * check runs when its options do not say: ploom_plan_check() decides
 * that (plan.h). */
#define PLOOM_SEARCH_UNSAID (&ploom_search_kinds[PLOOM_PLAN_DFS])

/* The kind of the search spelled --search=search --reduction=reduction
 * (NULL reads as "dfs" and "none", as in a trace that does not say), or
 * NULL when no kind is spelled so.  Owned by the registry. */
const struct ploom_search_kind *ploom_search_kind_find(const char *search,
						       const char *reduction);

/* The flags of --search=search without reduction: the answer for the
 * "search" of a trace or statistics; 0 for NULL ("dfs") or a name no kind
 * has. */
unsigned ploom_search_flags(const char *search);

#endif
