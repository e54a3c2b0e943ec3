/* stats.h - the statistics of an exploration: what ploom-explore prints
 * on stdout when it ends, and ploom-merge reads back and adds up.
 *
 *   {"result": "pass" | "failure" | "incomplete", "target",
 *    "schedules", "failing", "step_limited" (schedules that reached the
 *    step limit), "saved_runs", "saved_failing" (the three optional on
 *    read, 0), "complete" (bool, never true with step_limited), "stopped_by" (null,
 *    "failure", "max-steps", "max-schedules", "time-limit", or in a merge
 *    "missing-shards"), "max_preemptions" (int or null), "reduction",
 *    "sleep_blocked" (reduction other than "none"), "search", "seed",
 *    "pct_depth" (as a trace's config has them), "search_default"
 *    (optional, not read back: why the search is the default one, "the
 *    default when modules are patched"), "instrument" ([module
 *    name...]) and "instrument_scenario" (bool; both optional on read),
 *    "jobs" (optional),
 *    "hash_seed", "elapsed_s", "schedules_per_second", "max_depth",
 *    "trace", "minimized_trace" (paths or null),
 *    "minimal_by_construction" (optional, true), "minimize_stopped_by"
 *    (optional: "time", "max-schedules" or "memory"), "failure" (null or
 *    {"kind", "type", "message", "summary"}), "outcomes" and
 *    "outcomes_truncated" (optional, -k), "shard" (optional)}
 *
 * The reader holds the text to the rules of the trace reader (json.h):
 * UTF-8, no NUL or control character in a string, no key twice, one line
 * per error naming the field.
 */
#ifndef PLOOM_STATS_H
#define PLOOM_STATS_H

#include <stddef.h>
#include <stdio.h>

#include "err.h"
#include "trace.h"

struct ploom_search_outcome;    /* search.h */
struct ploom_search_result;     /* search.h */
struct ploom_shard;             /* shard.h */

/* The statistics of one exploration, as printed by ploom-explore (made by
 * ploom_stats_from_search()) and by ploom-merge (merge.h).  All pointers
 * are borrowed; NULL strings are written as null. */
struct ploom_stats {
	const char *result;         /* "pass", "failure", "incomplete" */
	const char *target;
	long schedules;
	long failing;
	long step_limited;          /* schedules that reached the step limit */
	/* the saved failing schedules run before the search, and those of
	 * them that failed again (saved.h): apart from schedules and failing,
	 * which count the search's */
	long saved_runs;
	long saved_failing;
	int complete;
	const char *stopped_by;     /* NULL, "max-schedules", "time-limit", "max-steps", "failure" */
	int max_preemptions;        /* -1: null */
	const char *reduction;
	const char *search;         /* the search order: "dfs", "ipb", "pct", "random" */
	const char *search_default; /* plan.h's default_why; NULL: not written */
	/* a sample's (search "pct" or "random"): "seed" is written, and for
	 * "pct" "pct_depth" too */
	unsigned long seed;
	int pct_depth;
	/* what the search instrumented, as its config and traces record it
	 * (config.h): whose plain state it made scheduling points */
	const char *const *instrument;
	size_t ninstrument;
	int instrument_scenario;
	/* 1: write "minimal_by_construction": true, the first failure has the
	 * fewest preemptions of any failing schedule because the search order
	 * ran every schedule with fewer before it; 0: not written */
	int minimal_by_construction;
	const char *hash_seed;
	double elapsed_s;
	double schedules_per_second;
	long max_depth;
	const char *trace;          /* path of the trace written, or NULL */
	const char *minimized_trace; /* path of the minimized trace, or NULL */
	/* the minimizer's stopped_by (minimize.h), written as
	 * "minimize_stopped_by" when set; NULL: not written */
	const char *minimize_stopped_by;
	const struct ploom_outcome *failure; /* the first failure, or NULL */
	int jobs;                   /* workers run at once; 0: not written */
	long sleep_blocked;         /* runs the reduction stopped half way; written
				     * when reduction is not "none" */
	/* 1: write "outcomes", the distinct outcomes of the schedules as
	 * {"kind", "summary", "schedules"} in this order, and
	 * "outcomes_truncated"; 0: write neither */
	int with_outcomes;
	const struct ploom_search_outcome *outcomes;
	size_t noutcomes;
	int outcomes_truncated;     /* more distinct outcomes came than these */
	/* a shard's search (--shard), or a merge of shards (index -1): written
	 * as "shard": {"index" (null in a merge), "count", "depth", "units"
	 * (null: -1), "owned", "probes", "failure_unit" (null: -1), and in a
	 * merge "missing": [index...]}; NULL: not written */
	const struct ploom_shard *shard;
};

/* Writes the statistics as one indented JSON object and a newline.
 * Returns 0, or -1 with err filled. */
int ploom_stats_write(FILE *out, const struct ploom_stats *stats,
		      struct ploom_err *err);

/* What was asked of a search: the part of its statistics that its result
 * does not hold.  All pointers are borrowed. */
struct ploom_stats_search {
	const char *target;
	const char *hash_seed;      /* the workers' PYTHONHASHSEED */
	int max_preemptions;        /* -1: no bound */
	const char *reduction;
	const char *search;         /* the search order */
	const char *search_default; /* plan.h's default_why, or NULL */
	unsigned long seed;         /* a sample's */
	int pct_depth;              /* pct's */
	const char *const *instrument; /* the config's, see struct ploom_stats */
	size_t ninstrument;
	int instrument_scenario;
	/* 1: the search order ran every schedule with fewer preemptions
	 * before any with more, so that its first failure has the fewest */
	int fewest_preemptions_first;
	int jobs;                   /* workers run at once; 0: not written */
	int with_outcomes;          /* the search tallied its outcomes */
	const struct ploom_shard *shard; /* NULL: not a shard's search */
	/* the saved failing schedules run before the search (session.h), and
	 * how many failed again: then the failure of res is a saved one's */
	long saved_runs;
	long saved_failing;
};

/* Fills *out with the statistics of the search asked as search that
 * found res: res's counts, outcomes and first failure, the trace of that
 * failure (else of the first step limit), and what follows from them:
 * "result" (failure when a schedule failed, else incomplete when the
 * search stopped, else pass), "complete" (nothing stopped the search),
 * "schedules_per_second", "minimal_by_construction".  minimized_trace is
 * the path of the minimized failure trace, or NULL.  ploom-explore and
 * ploom-merge both make their statistics here, so that one set of counts
 * reads alike from either.  *out points into search, res and
 * minimized_trace, and is valid while they are. */
void ploom_stats_from_search(struct ploom_stats *out, const struct ploom_stats_search *search,
			     const struct ploom_search_result *res, const char *minimized_trace);

/* ---- statistics read back (ploom-merge) ---- */

/* Statistics as ploom_stats_parse() reads them: stats points into the
 * struct, which owns everything. */
struct ploom_stats_in {
	struct ploom_stats stats;
	char *result, *target, *stopped_by, *reduction, *search, *hash_seed, *trace,
	     *minimized_trace, *minimize_stopped_by;
	struct ploom_outcome failure;           /* stats.failure points here, if set */
	struct ploom_search_outcome *outcomes;  /* stats.outcomes */
	struct ploom_shard *shard;              /* stats.shard */
	struct ploom_config modules;            /* stats.instrument, and the flag */
};

/* The largest statistics the reader accepts. */
#define PLOOM_STATS_MAX_BYTES ((size_t)16 << 20)

/* Parses what ploom_stats_write() wrote, checking every field it reads
 * (the fields of ploom_stats, the jobs count left out; "sleep_blocked"
 * is optional, 0 when absent, as a search without a reduction writes
 * none; "search" is optional, "dfs" when absent, as statistics written
 * before the search orders came from dfs; "instrument" and
 * "instrument_scenario" too, none when absent, each name as
 * --instrument takes it) as the trace reader does,
 * duplicate keys included, and that the counts agree with each other
 * (failing <= schedules, saved_failing <= saved_runs, a failure exactly
 * when failing + saved_failing > 0, complete exactly when stopped_by is
 * null, a shard's failure_unit exactly when its search failed, failing >
 * 0).  "missing" is not read:
 * a merge's output is not a shard's.  On success the caller owns *out and
 * frees it with ploom_stats_in_free(); on error returns -1 with err filled
 * (PLOOM_ERR_INPUT with the field's path, or PLOOM_ERR_NOMEM). */
int ploom_stats_parse(struct ploom_stats_in **out, const char *text, size_t len,
		      struct ploom_err *err);

/* Reads the file at path ("-": standard input), at most
 * PLOOM_STATS_MAX_BYTES, then parses it as above. */
int ploom_stats_read_file(struct ploom_stats_in **out, const char *path,
			  struct ploom_err *err);

/* Frees the statistics; accepts NULL. */
void ploom_stats_in_free(struct ploom_stats_in *in);

#endif
