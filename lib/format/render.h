/* render.h - a trace drawn for a person: the text that ploom-show prints.
 *
 * Overview
 * --------
 * The rendering has four parts, each separated by a blank line:
 *
 *   1. a header, one "key  value" line each: the scenario, its target,
 *      source file and fingerprints, the Python, the hash seed, the
 *      configuration, the steps, the failure id, the preemptions (and
 *      minimized_from), the outcome's summary, and for a failure that
 *      rests on a race, "race" and ploom_race_explain()'s line (races.h);
 *   2. a table with one row per step and one column per task, headed by
 *      the task's name (ploom_run_task_name(): "MainThread" for task 0,
 *      the name the scenario gave a thread, else "thread#N").  A step's
 *      cell sits in the column of the task that took it and reads
 *      "OP OBJECT", the object by its name (ploom_run_display_name()),
 *      then " (nonblocking)" for acquire(blocking=False) or " (timeout)"
 *      for acquire(timeout=T) and join(timeout=T), or the step's own
 *      label when the trace gives one (ploom.queue's "put 3"), then
 *      " -> VALUE" when the step has a value.  Columns are as wide as their widest cell; a
 *      value is cut (ending in "...") so that its cell fits the cap, but
 *      keeps at least 8 characters, and "OP OBJECT" is cut only beyond
 *      max(cap, 64).  When any step knows where it stopped, a last
 *      column, "where", reads "FILE:LINE FUNCTION", FILE by
 *      ploom_short_name(); it wraps (at a space, else after a '/' or ':')
 *      so that the line ends at PLOOM_RENDER_LINE characters, or keeps 16
 *      when the tasks' columns leave less.  Before the step number come two marks, '*'
 *      for a preemption (a choice that switched away from the task of
 *      the previous step while it was still enabled, the rule of
 *      ploom_run_finish()) and '!' for the failing step
 *      (ploom_run_failing_step()), then, when the trace has racing
 *      pairs, a column of tags: race k is the letter a..z, then A..Z
 *      (then '+'), on both of its steps (at most three, then '+').  A
 *      deadlock adds a last row, "wait", with what each blocked task
 *      waits for and the tags of the races of those operations;
 *   3. a legend for the marks and tags that appear;
 *   4. the outcome in full: the exception and its traceback, the waits of
 *      a deadlock and where each task waits, the details of a crash,
 *      exit, timeout, step limit or divergence; then the schedule's
 *      captured output, if any.  A task the scenario named is "task N
 *      (NAME)" there.
 *
 * The rows, marks, tags, facts and outcome are the view's (view.h),
 * which the HTML page (html.h) shows too.
 *
 * The text is plain ASCII apart from what the trace's own strings hold
 * (UTF-8 is passed through, and counted in code points when columns are
 * sized); control characters in those strings are shown as '?' so that
 * a trace cannot drive the terminal.  Colour (ANSI escapes) only when
 * asked for.  No line ends in a space.
 */
#ifndef PLOOM_RENDER_H
#define PLOOM_RENDER_H

#include <stdio.h>

#include "err.h"
#include "trace.h"

/* The default and the smallest column cap, in characters. */
#define PLOOM_RENDER_WIDTH 28
#define PLOOM_RENDER_MIN_WIDTH 8

/* The line the table's where column wraps to fit, in characters. */
#define PLOOM_RENDER_LINE 100

struct ploom_render_opts {
	int color;      /* 1: ANSI colours; 0: plain text */
	int width;      /* column cap; 0 means PLOOM_RENDER_WIDTH, smaller
			 * values are raised to PLOOM_RENDER_MIN_WIDTH */
	/* why a replay from here would run nothing (ploom_replay_place()'s
	 * message), or NULL to judge by the trace alone */
	const char *replay_refused;
};

/* Writes the rendering of trace to out and flushes out.  opts may be NULL
 * (plain, default width).  The trace is only read.
 *
 * Returns 0, or -1 with err filled: PLOOM_ERR_NOMEM and "out of memory",
 * or PLOOM_ERR_SYSTEM and "write error: STRERROR" when a write or the
 * flush failed.  After a write error errno is the error of the failed write
 * (EPIPE when the reader of a pipe went away, so that a filter can stop
 * quietly; ENOSPC on a full disk); the stream is not closed. */
int ploom_render_trace(FILE *out, const struct ploom_trace *trace,
		       const struct ploom_render_opts *opts, struct ploom_err *err);

/* Writes s to out as the rendering writes a trace's strings: control
 * characters (newlines too) become '?'.  For messages that quote a
 * trace, or a scenario, on a terminal. */
void ploom_put_printable(FILE *out, const char *s);

/* The same for a text of several lines, as a failure's message may be:
 * each newline starts a line of its own with indent before it, and the
 * newlines that end s are left out. */
void ploom_put_printable_lines(FILE *out, const char *s, const char *indent);

#endif
