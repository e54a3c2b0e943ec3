/* merge.h - the statistics of a search's shards as one (ploom-merge).
 *
 *     ploom_merge_new(&m, &err);
 *     for each file:
 *         ploom_stats_read_file(&in, path, &err);     // stats.h
 *         ploom_merge_add(m, in, path, &err);          // takes in
 *     ploom_merge_result(&stats, m, &err);
 *     ploom_stats_write(stdout, stats, &err);
 *     ploom_merge_free(m);
 *
 * The shards must be of one search (shard.h): the same target, bound,
 * reduction, search order (and a sample's seed and depth), hash seed,
 * instrumented modules, shard count and unit depth, each index once.  The merged statistics are
 * shaped as ploom-explore's:
 *
 *   - schedules, failing, saved_runs, saved_failing: the sums (only
 *     shard 0 runs saved schedules, so nothing is counted twice; a sum
 *     beyond LONG_MAX is refused as
 *     bad input); max_depth, elapsed_s: the largest (the
 *     shards' wall clock when they ran at once); schedules_per_second:
 *     schedules / elapsed_s;
 *   - complete: all N shards are there, and each is complete; stopped_by:
 *     null when complete, else that of the first shard (by index) that is
 *     not, else "missing-shards";
 *   - failure, trace, minimized_trace: those of the first failure by tree
 *     order: a saved schedule's that failed again (it ran before the
 *     search), else the shard whose failure is in the smallest unit (on
 *     one worker a shard's first failure is its first in depth-first
 *     order, and each unit is one shard's); without a failure, the trace
 *     of the first shard that has one (a step limit's);
 *   - outcomes: the shards' tallies added up by kind and summary, when
 *     every shard has them (-k), in the order of the shards;
 *   - shard: index null, the count and depth, units (of a complete shard;
 *     null when none is), owned and probes summed, the unit of the
 *     search's first failure (null when only a saved schedule failed), and
 *     "missing": the indexes of the shards not given. */
#ifndef PLOOM_MERGE_H
#define PLOOM_MERGE_H

#include "err.h"
#include "stats.h"

struct ploom_merge;

/* On success the caller owns *out and frees it with ploom_merge_free(). */
int ploom_merge_new(struct ploom_merge **out, struct ploom_err *err);

/* Adds the statistics of one shard, read from the file name (for the
 * messages), which the merge takes in every case.  Returns 0, or -1 with
 * err filled: PLOOM_ERR_INPUT when they are not a shard's, or not of the
 * search of those added before, or of a shard added before; the message
 * names the other file but not this one ("shard 2 of 4 again, as in
 * 'b.json'"). */
int ploom_merge_add(struct ploom_merge *m, struct ploom_stats_in *in, const char *name,
		    struct ploom_err *err);

/* The merged statistics of the shards added (at least one), as above.
 * *out is owned by m and valid until ploom_merge_free().  Returns 0, or
 * -1 with err filled (no shard added, or a sum beyond LONG_MAX:
 * PLOOM_ERR_INPUT, the message naming the field, "field 'schedules' adds
 * up to more than 9223372036854775807 over the shards"; out of memory). */
int ploom_merge_result(const struct ploom_stats **out, struct ploom_merge *m,
		       struct ploom_err *err);

/* Frees the merge and the statistics it took; accepts NULL. */
void ploom_merge_free(struct ploom_merge *m);

#endif
