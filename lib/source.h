/* source.h - the source a trace ran: the fingerprints of its files, the
 * root its relative paths start from (struct ploom_source, trace.h), and
 * where its worker imported from, made when a trace is made and copied
 * into a trace made from another.
 */
#ifndef PLOOM_SOURCE_H
#define PLOOM_SOURCE_H

#include "err.h"
#include "trace.h"

/* Appends a fingerprint, copying path and blob.  Returns 0, or -1 with
 * err filled (out of memory). */
int ploom_trace_add_fingerprint(struct ploom_trace *trace, const char *path,
				const char *blob, struct ploom_err *err);

/* Sets the relpath of the trace's last fingerprint to a copy of relpath
 * (NULL: none).  Returns 0, or -1 with err filled (out of memory). */
int ploom_trace_set_last_relpath(struct ploom_trace *trace, const char *relpath,
				 struct ploom_err *err);

/* 1 if path can be one of a trace's import paths (struct
 * ploom_scenario): "." or a relative path ploom_relpath_is_safe() takes. */
int ploom_import_path_is_safe(const char *path);

/* Appends a copy of the import path rel to the trace's, unless it is
 * there; the caller checked it with ploom_import_path_is_safe().  Returns
 * 0, or -1 with err filled (out of memory, or more than
 * PLOOM_IMPORT_PATHS_MAX). */
int ploom_trace_add_import_path(struct ploom_trace *trace, const char *rel,
				struct ploom_err *err);

/* 1 if relpath can be a trace's relative path: not empty, not absolute,
 * no "." or ".." component and no empty one, so that it names a file
 * inside its root and nowhere else.  Else 0. */
int ploom_relpath_is_safe(const char *relpath);

/* Replaces the trace's fingerprints with the blob id of
 * scenario.file as it is now (none when the file is unknown), and sets
 * its source and relative paths: in a git work tree, root "repository",
 * paths relative to the work tree's root, HEAD's commit and whether the
 * file differs from it; elsewhere, when the project root the worker
 * named (project_root, its hello's ROOT) lies above the file's folder and
 * holds it, root "project" and paths relative to that root; else root
 * "folder" and the file's name (its own folder is the root).
 * The files of the steps' and waits' where below that root become
 * relative to it too; others stay as the worker named them.  The
 * module_files that lie in the root are fingerprinted too, after the
 * scenario's file, with their relative paths (one that cannot be read
 * is left out: the worker read it, and a replay that needs it fails).  The
 * scenario's cwd and import_paths are this process's current folder and
 * PYTHONPATH, which its worker ran with, as far as they lie in the root.
 * Returns 0, or -1 with err filled (the file cannot be read, naming it). */
int ploom_trace_fingerprint_source(struct ploom_trace *trace, struct ploom_err *err);

/* Replaces to's fingerprints with copies of from's, and to's source and
 * scenario.relpath with from's: a trace made from another one ran the
 * same source.  Then the files of to's where are made relative to that
 * root, found as to's scenario.file without its relpath, as
 * ploom_trace_fingerprint_source() does.  Returns 0, or -1 with err
 * filled (out of memory). */
int ploom_trace_copy_fingerprints(struct ploom_trace *to, const struct ploom_trace *from,
				  struct ploom_err *err);

#endif
