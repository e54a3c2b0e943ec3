/* json.h - the trace codec: traces as JSON, and JSON back as traces.
 * (The statistics ploom-explore prints are JSON too: stats.h.  Files are
 * written whole through store.h.)
 *
 * The trace format (version PLOOM_TRACE_VERSION, see trace.h and
 * man/ploom-trace.5):
 *
 *   {"format": "ploom-trace", "version": 2 (1 is read too),
 *    "id": "16 hex digits" (optional: failure and step-limit traces),
 *    "scenario": {"target", "module", "qualname", "file" (string or null),
 *                 "relpath" (optional)},
 *    "fingerprints": [{"path", "blob" (40 hex digits), "relpath"
 *                      (optional)}...] (optional),
 *    "source": {"root" ("repository", "project" or "folder"), "commit" (40 hex
 *               digits or null), "dirty" (bool)} (optional: the root
 *               the relpaths start from),
 *    "python": {"implementation", "version", "gil" (bool)},
 *    "hash_seed": "0",
 *    "config": {"max_preemptions" (int or null), "reduction", "search"
 *               (optional on read: "dfs"), "seed" (int, with search pct
 *               or random), "pct_depth" (int, with search pct),
 *               "max_steps", "schedule_timeout_s", "patch": [module
 *               name...] (optional on read, always written)},
 *    "choices": [int...], "preemptions": int,
 *    "minimized_from": int (optional: minimized traces),
 *    "tasks": [{"id", "name"}...] (optional on read, always written:
 *              every task, ascending, with its name, given or default),
 *    "objects": [{"object" (cell#N or lock#N), "name"}...] (optional on
 *                read, always written: the cells and locks the scenario
 *                named),
 *    "shard": {"index", "count", "depth", "unit"} (optional: found by a
 *             shard of a search, shard.h),
 *    "steps": [{"index", "task", "op", "object" (string or null),
 *               "enabled": [int...] (not empty, holding "task"),
 *               "blocking" (acquire only, bool),
 *               "timeout" (true on a timed acquire or join only, absent
 *               elsewhere; version 2), "value" (optional string),
 *               "where": {"file", "line", "function"} (optional)}...],
 *    "outcome": {"kind", "summary", and by kind: "task", "exception":
 *                {"type", "message"}, "traceback" (failure); "waits":
 *                [{"task", "op", "object", "holder", "where"
 *                (optional)}] (deadlock); "signal" (crash); "status"
 *                (exit); "limit", "stacks" (optional: step-limit);
 *                "stacks" (optional: timeout); "step", "message"
 *                (divergence); "output" (optional, any kind)}}
 *
 * Names, and a where's file and function, are labels (event.h): not
 * empty, bounded, without control characters; a where's file is absolute
 * or relative inside its root, its line from 1.
 *
 * 64-bit values (the hash seed) travel as strings, because cJSON numbers
 * are doubles.  Readers ignore fields they do not know, so adding an
 * optional field does not bump the version.
 *
 * The readers take UTF-8 only, and refuse a string that holds a NUL
 * character (an escaped \u0000: cJSON's strings end at a NUL, so it would
 * be read cut short) or a raw control character, naming the byte (from
 * 1): "invalid UTF-8 at byte 312".
 *
 * Errors from the readers name the problem in one line without the file
 * name (the caller knows it): "unknown format version 9 (this ploom reads
 * 1 to 2)", "missing field 'steps'", "field 'steps[2].task' is not an
 * integer".
 */
#ifndef PLOOM_JSON_H
#define PLOOM_JSON_H

#include <stddef.h>
#include <stdio.h>

#include "err.h"
#include "trace.h"

/* Parses a trace from the len bytes at text (no NUL needed).  On success
 * returns 0 and the caller owns *out, freed with ploom_trace_free(); on
 * error returns -1 with err filled (kind PLOOM_ERR_INPUT, or PLOOM_ERR_NOMEM)
 * and *out NULL. */
int ploom_trace_parse(struct ploom_trace **out, const char *text, size_t len,
		      struct ploom_err *err);

/* The largest trace the readers accept; a larger one is refused ("larger
 * than 256 MiB") before it is parsed. */
#define PLOOM_TRACE_MAX_BYTES ((size_t)256 << 20)

/* Reads the whole stream / file at path, then parses it as above; a
 * stream longer than PLOOM_TRACE_MAX_BYTES is an error. */
int ploom_trace_read(struct ploom_trace **out, FILE *in, struct ploom_err *err);
int ploom_trace_read_file(struct ploom_trace **out, const char *path,
			  struct ploom_err *err);

/* The trace as indented JSON with a final newline, malloc'd; the caller
 * frees it.  Returns NULL with err filled when out of memory, or when the
 * JSON is longer than PLOOM_TRACE_MAX_BYTES, which no reader would
 * accept: ploom_trace_write() and the others then write nothing. */
char *ploom_trace_to_json(const struct ploom_trace *trace, struct ploom_err *err);

/* A deep copy of the trace (through its JSON, so it is exactly what a
 * reader of the written trace gets).  On success the caller owns *out
 * (ploom_trace_free()); on error returns -1 with err filled. */
int ploom_trace_clone(struct ploom_trace **out, const struct ploom_trace *trace,
		      struct ploom_err *err);

/* Writes the trace JSON to the stream.  Returns 0, or -1 with err filled
 * on a write error (the stream is not closed). */
int ploom_trace_write(FILE *out, const struct ploom_trace *trace,
		      struct ploom_err *err);

/* Writes the trace JSON to a new file beside path under a name of its own
 * (PATH.XXXXXX.tmp, created with O_EXCL and O_NOFOLLOW, mode 0644 less the
 * umask), then renames it to path, so that a reader never sees half a
 * trace, writers at once into one folder do not collide, and a link planted
 * in the folder redirects nothing (ploom_store_write()).  Returns 0, or -1
 * with err filled with the reason (the temporary file is then removed). */
int ploom_trace_write_file(const char *path, const struct ploom_trace *trace,
			   struct ploom_err *err);

/* Saves a failure trace as DIR/<id>-SUFFIX.json (suffix "original" or
 * "minimized"; id is trace->id if set, else ploom_trace_failure_id(),
 * so that a minimized trace goes beside its original), creating DIR and its
 * parents if missing, through ploom_trace_write_file().  On success the
 * caller owns *out (the path written, malloc'd). */
int ploom_trace_save(char **out, const struct ploom_trace *trace, const char *dir,
		     const char *suffix, struct ploom_err *err);

#endif
