/* saved.h - the failing schedules saved in a trace folder, which
 * ploom-explore tries before it searches (unless --no-saved), so that a
 * failure found once fails again at once while it is not fixed.
 *
 * ploom-explore saves each failure as DIR/<id>-original.json and
 * DIR/<id>-minimized.json, where the id hashes the scenario's module and
 * qualified name with the failure (trace.h, ploom_trace_failure_id()): the
 * name cannot tell whose failure a file holds, so each candidate is read,
 * newest first, and kept when it is a failure of the scenario the search's
 * worker runs (the same module and qualified name).  A trace is untrusted
 * input: the caller holds it to the trust rules of a replay
 * (ploom_replay_place()) before it runs it, and follows it leniently on
 * the current source (ploom_replay_follow_in_search()): the config and the
 * source may have changed since it was saved.
 */
#ifndef PLOOM_SAVED_H
#define PLOOM_SAVED_H

#include <stddef.h>

#include "decode.h"
#include "err.h"
#include "trace.h"

/* At most this many saved schedules of the scenario are run, the newest
 * first, and at most PLOOM_SAVED_MAX_LISTED files are looked at for them,
 * so that a folder full of other scenarios' failures costs little. */
#define PLOOM_SAVED_MAX_RUN 10
#define PLOOM_SAVED_MAX_LISTED 100

/* The candidate traces of a folder: paths (DIR/NAME), newest first. */
struct ploom_saved_list {
	char **paths;
	size_t n;
};

/* Lists the regular files of dir named <16 lower-case hex digits>-minimized.json
 * or -original.json, one per id (the minimized one when both are there),
 * the newest first by modification time (ties by name), at most max of
 * them.  A folder that does not exist lists none, and so does a path
 * through a file.  Returns 0, or -1 with
 * err filled (the folder cannot be read, out of memory); the caller
 * releases *out with ploom_saved_list_release() in every case. */
int ploom_saved_list(struct ploom_saved_list *out, const char *dir, size_t max,
		     struct ploom_err *err);

void ploom_saved_list_release(struct ploom_saved_list *list);

/* 1 when trace records a failure (ploom_outcome_is_failure()) of the
 * scenario hello names: the same module and qualified name; else 0.  A
 * setup mistake (ploom_outcome_is_setup()) is no failure to run again. */
int ploom_saved_of_scenario(const struct ploom_trace *trace, const struct ploom_hello *hello);

#endif
