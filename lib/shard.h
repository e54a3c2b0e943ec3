/* shard.h - one search split into N parts that share nothing.
 *
 * Overview
 * --------
 * `ploom-explore --shard K/N` explores part K of N of the depth-first
 * search (explore.h), and N such runs, on as many machines as one likes
 * and with no word between them, explore together exactly the schedules
 * of the whole search, each once.  ploom-merge adds up their statistics.
 *
 * Work units.  A unit is the set of schedules that make the same first D
 * choices at branch points; a schedule with fewer than D branch points is
 * a unit on its own.  Units are numbered from 0 in the order the
 * depth-first search enters them, and shard K owns the units whose number
 * is K mod N.  Every shard walks the same search: it runs a unit it owns
 * to the end, and skips the subtree of one it does not own.  D is the
 * same in every shard: chosen from N alone (ploom_shard_default_depth()),
 * or given (--shard-depth).
 *
 * Probes.  The search learns the tree by running schedules: the branch
 * points that the next units start from are known only once a run has
 * passed them.  So on entering a unit it does not own at a branch point
 * above the last of the first D, a shard still runs that unit's first
 * schedule, a probe, and uses it only to find its way: a probe is not
 * counted, and a failure in it is not reported (the unit's owner runs the
 * same schedule, counts it and reports it).  A unit entered at the D-th
 * branch point is known without a run, and a shard that does not own it
 * skips it without one.  The probes are the whole cost of sharding; the
 * statistics report them, and scripts/bench measures them.
 *
 * With a preemption bound the units are those of the bounded search.
 * With several workers (-j) a shard splits the units it owns between
 * them (explore.h's split, below the D-th branch point only), while the
 * walk from unit to unit stays on one worker: so the numbering, and what
 * each shard owns, stay the same.
 *
 * Under the partial-order reduction (dpor.h) the units are those of a
 * tree every shard can number alike: the first D branch points enumerated
 * fully (every enabled task, with the sleep sets of the serial search,
 * which depend only on the prefix's steps and pending operations), and
 * the reduction below each.  The walk, the numbering, ownership, probes
 * and these counts are the same as above; the walk lives in search/dpor.c, which
 * alone knows that tree.
 */
#ifndef PLOOM_SHARD_H
#define PLOOM_SHARD_H

/* The most shards of one search. */
#define PLOOM_SHARD_MAX 1000000

/* The deepest unit split a shard accepts (--shard-depth). */
#define PLOOM_SHARD_MAX_DEPTH 1000

/* One shard of a search, and what its search found so far.  The caller
 * owns it and fills the first three fields; the search
 * (ploom_explore_new_shard(), ploom_dpor_new_shard()) keeps a pointer to
 * it, fills the rest, and must not outlive it.  ploom-merge fills one for the merged statistics
 * (index -1). */
struct ploom_shard {
	int index;              /* K: 0 <= K < count; -1 in a merge of shards */
	int count;              /* N: 1 to PLOOM_SHARD_MAX */
	int depth;              /* D: 0 to PLOOM_SHARD_MAX_DEPTH */
	/* units entered, skipped ones included: once the search is complete,
	 * the number of units of the whole search, the same in every shard;
	 * -1: unknown */
	long units;
	long owned;             /* of which this shard's */
	long probes;            /* schedules run only to find the way: not counted */
	/* the unit of the schedule most recently counted, and of the first
	 * counted failure (-1: none): the order ploom-merge picks the first
	 * failure of the whole search by */
	long last_unit;
	long failure_unit;
	/* in a merge: the shards whose statistics were missing, ascending */
	const int *missing;
	int nmissing;
};

/* A shard's struct with index and count, depth as
 * ploom_shard_default_depth(count) and no counts yet. */
void ploom_shard_init(struct ploom_shard *shard, int index, int count);

/* The unit depth every shard of count derives alike: the smallest D with
 * 2^D >= 8 * count, so that each shard has about eight units or more
 * to balance its share with (a branch point has two choices or more). */
int ploom_shard_default_depth(int count);

/* Parses "K/N" (decimal without sign, 0 <= K < N <= PLOOM_SHARD_MAX,
 * nothing else).  Returns 0, or -1 leaving the outputs alone. */
int ploom_shard_parse(int *out_index, int *out_count, const char *spec);

/* 1 when shard owns the unit numbered unit, else 0; a NULL shard owns
 * every unit. */
int ploom_shard_owns(const struct ploom_shard *shard, long unit);

/* For the search driver's annotate hook (search.h), with the shard as
 * ctx: records the shard and the unit of the schedule just counted in a
 * trace about to be saved. */
struct ploom_trace;
void ploom_shard_annotate(void *ctx, struct ploom_trace *trace);

#endif
