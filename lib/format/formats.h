/* formats.h - the list of the formats ploom-show draws a trace in, one
 * line each.
 *
 * The writers live in this folder, one file each, and this list is what
 * the rest knows of them: format.c makes the registry ploom-show parses
 * --format with and words its usage from.  A new format is a line here
 * and its file here, which defines the function PLOOM_FORMAT_DECLARE()
 * names.
 *
 * A line is X(name, help): the --format value, and what it writes, for
 * the usage ("one self-contained page").  The first line is the default;
 * the order is the usage's. */
#ifndef PLOOM_FORMAT_FORMATS_H
#define PLOOM_FORMAT_FORMATS_H

#include <stdio.h>

struct ploom_err;
struct ploom_render_opts;
struct ploom_trace;

#define PLOOM_FORMATS(X) \
	X(text, "a table of the steps, one column a task") \
	X(html, "one self-contained page") \
	X(json, "the trace as ploom writes it")

/* Each format's writer, in its file: writes trace to out and flushes it,
 * with opts (format/render.h; only the text reads them).  The text first
 * places the trace for this checkout (ploom_replay_place(), replay.h), to
 * say what a replay from here would run; json writes it as it was read.  Returns 0, or
 * -1 with err filled, errno the failed write's after a write error
 * (EPIPE when the reader of a pipe went away), as ploom_render_trace()
 * documents. */
#define PLOOM_FORMAT_DECLARE(name, help) \
	int ploom_format_##name(FILE *out, struct ploom_trace *trace, \
				const struct ploom_render_opts *opts, struct ploom_err *err);

PLOOM_FORMATS(PLOOM_FORMAT_DECLARE)

#endif
