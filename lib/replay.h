/* replay.h - run a saved schedule again and check that it is the same.
 *
 * Overview
 * --------
 * Replay never searches: it runs the trace's choices, with its hash seed
 * and max_steps, in a fresh worker, and stops with a divergence (kind
 * PLOOM_ERR_DIVERGENCE) at the first of these that fails, in this order:
 *
 *   1. the scenario's source is the recorded one, checked before the
 *      worker imports anything: the trace names an absolute scenario file
 *      that its fingerprints cover (ploom_replay_check_trace(), kind
 *      PLOOM_ERR_INPUT: a trace that fails it is malformed), every
 *      fingerprint's file still has its blob id
 *      (ploom_replay_check_source()), the target names that file (the
 *      worker checks it before it runs any of the target's code, see
 *      worker.h's expect_file) and the worker loaded it
 *      (ploom_replay_check_loaded());
 *   2. the worker's Python has the recorded minor version
 *      (ploom_replay_check_python());
 *   3. the new run took the recorded steps: the same task, operation and
 *      object at every step, and as many steps (ploom_replay_compare_steps());
 *      where a step stopped and the names are information and are not
 *      compared (a changed source fails check 1 already);
 *   4. its outcome is the recorded one (ploom_replay_same_outcome()).
 *
 * Messages are one line, without the "ReplayDivergenceError: " that the
 * utility puts before them:
 *   the scenario's source changed: '/abs/f.py' (recorded blob 1a2b3c4, now 5d6e7f8)
 *   Python 3.14 runs this replay, the trace was recorded with 3.13
 *   step 7 differs: recorded task 1 read cell#0, got task 1 write cell#0
 *   outcome differs: recorded SUMMARY, got SUMMARY
 *
 * Before check 1, ploom_replay_place() moves a trace recorded in another
 * clone of the repository (or another copy of the folder) to the files
 * of this one, and refuses a trace whose scenario is not there: a replay
 * runs only a file of the repository or folder it starts in.
 *
 * ploom-minimize uses check 1 too, before it searches.
 */
#ifndef PLOOM_REPLAY_H
#define PLOOM_REPLAY_H

#include <stddef.h>

#include "err.h"
#include "event.h"
#include "fingerprint.h"
#include "trace.h"
#include "worker.h"

/* Finds the trace's files in the clone the replay runs in, before check
 * 1, and rewrites scenario.file and the fingerprints' paths in place.  A
 * trace without relative paths (source.root and scenario.relpath)
 * stays as it is.  Otherwise the root is looked for from the current
 * directory: for source.root "repository" the work tree root of the git
 * repository that holds it, for "project" the nearest folder at or above
 * it that holds a regular file at scenario.relpath, for "folder" the
 * current directory itself;
 * when the root joined with scenario.relpath is a regular file, the
 * scenario file and every fingerprint with a relpath become root +
 * relpath, even if the recorded files still exist (the current
 * directory's clone wins: a module target resolves from it).  Nothing is
 * trusted by moving: check 1 runs on the new paths, so a file edited in
 * this clone is a divergence naming it.  When there is no such root or
 * file the paths stay as recorded.  Returns 1 when the paths moved, 0
 * when they did not, -1 with err filled (out of memory, the current
 * directory cannot be read, or its repository puts its work tree
 * elsewhere: ploom_repo_workdir()). */
int ploom_replay_locate(struct ploom_trace *trace, struct ploom_err *err);

/* The fingerprint of the trace's scenario file, or NULL; owned by the
 * trace. */
const struct ploom_fingerprint *ploom_replay_scenario_fingerprint(const struct ploom_trace *trace);

/* Where a replay runs: ploom_replay_locate(), which must find the
 * trace's scenario file at its relative path in the current repository
 * or folder, and every fingerprinted file must lie inside that root once
 * symbolic links are resolved.  Nothing else may run: a forged trace
 * naming an absolute path elsewhere (a standard library module, say)
 * is refused here, before any file is hashed or imported.  Returns 0
 * with the trace's paths moved here, or -1 with err filled (kind
 * PLOOM_ERR_INPUT, or out of memory):
 *   the trace records no relative path of its scenario file: ...
 *   the trace's scenario 'a/f.py' is in a git repository and this directory is in none: ...
 *   the trace's scenario 'a/f.py' is not in this repository '/clone/': ...
 *   the trace's scenario 'a/f.py' is in no folder at or above the current directory '/x/': ...
 *   the trace's file '/clone/a/f.py' leads out of '/clone/' (a symbolic link?): ...
 *   the repository of '/art/.git' puts its work tree at '/' (core.worktree?), ...
 * A relative path that leaves its root was refused when the trace was read
 * (json.h), and is refused here too for a trace made in memory.
 * The worker then holds a module target's packages to the same root
 * (ploom_replay_root(), worker.h's expect_root). */
int ploom_replay_place(struct ploom_trace *trace, struct ploom_err *err);

/* The root a trace that ploom_replay_place() placed runs in, the
 * repository's work tree or the folder, ending in '/': its scenario file
 * without its relative path.  malloc'd; NULL when out of memory or when
 * the trace was not placed. */
char *ploom_replay_root(const struct ploom_trace *trace);

/* The part of check 1 that reads no file: the trace names an absolute
 * scenario file and one of its fingerprints is that file's.  Returns 0,
 * or -1 with err filled (kind PLOOM_ERR_INPUT):
 *   the trace names no scenario file: a replay runs only a file that the trace fingerprints
 *   the trace's scenario file 'f.py' is not an absolute path
 *   the trace's fingerprints do not cover its scenario file '/abs/f.py' */
int ploom_replay_check_trace(const struct ploom_trace *trace, struct ploom_err *err);

/* Check 1: ploom_replay_check_trace(), then every fingerprint's file
 * hashes to its recorded blob id now.
 * A file that is gone or unreadable has changed too.  Returns 0, or -1
 * with err filled (kind PLOOM_ERR_DIVERGENCE):
 *   the scenario's source changed: '/abs/f.py' (recorded blob 1a2b3c4, now 5d6e7f8)
 *   the scenario's source changed: '/abs/f.py' (recorded blob 1a2b3c4, now unreadable: REASON) */
int ploom_replay_check_source(const struct ploom_trace *trace, struct ploom_err *err);

/* Check 1, once the worker runs: it loaded the recorded source file (a
 * module target may resolve to another file from another directory).
 * Passes when either file is unknown.  Returns 0, or -1 with err filled
 * (kind PLOOM_ERR_DIVERGENCE). */
int ploom_replay_check_loaded(const struct ploom_trace *trace, const struct ploom_hello *hello,
			      struct ploom_err *err);

/* Check 2: python_version (the worker's, "3.14.1") has the same major and
 * minor version as the trace's.  Returns 0, or -1 with err filled (kind
 * PLOOM_ERR_DIVERGENCE). */
int ploom_replay_check_python(const struct ploom_trace *trace, const char *python_version,
			      struct ploom_err *err);

/* Check 3: got took recorded's steps (task, operation, object), all of
 * them and no more, and every choice was enabled (got's outcome is not a
 * divergence).  Returns 0, or -1 with err filled (kind
 * PLOOM_ERR_DIVERGENCE) naming the first step that differs. */
int ploom_replay_compare_steps(const struct ploom_run *recorded, const struct ploom_run *got,
			       struct ploom_err *err);

/* Check 4: 1 if got is the recorded outcome: the same kind, and for a
 * failure the same exception type and message, for a deadlock the same
 * waits (the same summary), for a crash the same signal, for an exit the
 * same status, for a divergence the same message; else 0. */
int ploom_replay_same_outcome(const struct ploom_outcome *recorded,
			      const struct ploom_outcome *got);

/* Checks 2 to 4 with a running worker started on the recorded target
 * and the trace's hash seed (the caller has run check 1):
 * runs the trace's choices with its max_steps and a wall-clock limit of
 * the trace's schedule_timeout_s, or of timeout_s seconds when that is
 * shorter (ploom_timeout_min(): 0 is none; < 0: the trace's alone); the
 * new trace records the limit it ran under.
 * On success returns 0 and the caller owns *out (ploom_trace_free()): the
 * new run's trace, with the recorded target, fingerprints, id and
 * minimized_from and the worker's Python.  On error returns -1 with err
 * filled (kind PLOOM_ERR_DIVERGENCE for a divergence) and *out NULL. */
int ploom_replay_run(struct ploom_trace **out, const struct ploom_trace *recorded,
		     struct ploom_worker *w, double timeout_s, struct ploom_err *err);

/* ---- a replay on the current source ----
 *
 * After an edit (a fix, say) the recorded choices may no longer fit the
 * scenario's branch points, and the source no longer has its recorded
 * blob ids.  ploom-replay --on-current-source then runs the recorded
 * order of tasks instead: at each step the task of the recorded step with
 * the same index when it is enabled, else the default choice (the task
 * of the previous step if enabled, else the lowest), a departure.  Steps
 * past the recorded ones take the default and are no departures.  The
 * trust rules of ploom_replay_place() hold as for any replay.
 */

/* Which of the trace's fingerprinted files differ now: appends a line
 * per file to out,
 *   '/abs/f.py' (recorded blob 1a2b3c4, now 5d6e7f8)
 *   '/abs/g.py' (recorded blob 1a2b3c4, now unreadable: REASON)
 * and writes the scenario file's blob id now into scenario_now.  Returns
 * the number of such files, or -1 with err filled (kind PLOOM_ERR_INPUT:
 * the trace fails ploom_replay_check_trace(), or the scenario file cannot
 * be hashed). */
int ploom_replay_source_changes(const struct ploom_trace *trace, struct ploom_buf *out,
				char scenario_now[PLOOM_OID_HEXSZ + 1], struct ploom_err *err);

/* The departures of got from recorded's order of tasks: the steps, among
 * the first of both, where recorded's task was not enabled in got. */
int ploom_replay_departures(const struct ploom_run *recorded, const struct ploom_run *got);

/* The `run` command of a follow of recorded (the policy follow with the
 * task of each recorded step, no choices), with max_steps and
 * timeout_ms, into *cmd, which the caller releases with
 * ploom_run_cmd_release().  Returns 0, or -1 with err filled (out of
 * memory; *cmd then holds nothing). */
int ploom_replay_follow_cmd(struct ploom_run_cmd *cmd, const struct ploom_trace *recorded,
			    long max_steps, long timeout_ms, struct ploom_err *err);

/* Checks 2 (the Python minor version) and the worker's file, then runs
 * the recorded order of tasks on the worker's current source (above),
 * with the trace's max_steps and timeout as ploom_replay_run(), in one
 * run: the worker's policy follow (policy.h) chooses as the run goes.  On
 * success returns 0, *departures set, and the caller owns *out: the
 * run's trace with the recorded target, not yet fingerprinted (the
 * caller stamps it with the current source, cli_stamp_trace()).  Any
 * outcome is a success here, the caller tells it.  On error returns -1
 * with err filled and *out NULL: a divergence when the worker did not
 * follow its own choices, PLOOM_ERR_INPUT when the run asks for new
 * plain access points. */
int ploom_replay_follow(struct ploom_trace **out, const struct ploom_trace *recorded,
			struct ploom_worker *w, double timeout_s, int *departures,
			struct ploom_err *err);

/* ploom_replay_follow() as a search runs it (ploom-explore's saved
 * schedules, saved.h): on a worker the search started, with config's
 * max_steps and schedule_timeout_s (the search's, not the trace's), and
 * the new trace is the search's own, as its worker records it: its
 * target, hash_seed and config.  Not fingerprinted, no id yet.  Returns
 * 0 as ploom_replay_follow() does, or 1 with *out NULL and *refine
 * (malloc'd, the caller frees it) the site keys when the run asks for more
 * points at plain state (outcome refine): the caller may start a worker
 * with them and follow again; else *refine is NULL. */
int ploom_replay_follow_in_search(struct ploom_trace **out, const struct ploom_trace *recorded,
				  struct ploom_worker *w, const struct ploom_config *config,
				  const char *hash_seed, int *departures, char **refine,
				  struct ploom_err *err);

#endif
