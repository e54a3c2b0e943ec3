/* format.h - the registry of the formats ploom-show draws a trace in,
 * made of the list in format/formats.h.
 *
 *     const struct ploom_format *f = ploom_format_find(optarg);
 *     if (!f)
 *             usage error
 *     f->write(stdout, trace, &opts, &err);
 *
 * A leaf over the writers: it knows their names, not how they draw. */
#ifndef PLOOM_FORMAT_H
#define PLOOM_FORMAT_H

#include <stddef.h>
#include <stdio.h>

#include "format/formats.h"

struct ploom_format {
	const char *name;           /* its --format */
	const char *help;           /* what it writes, for the usage */
	int (*write)(FILE *out, struct ploom_trace *trace,
		     const struct ploom_render_opts *opts, struct ploom_err *err);
};

/* The default format: the list's first. */
extern const struct ploom_format *const ploom_format_default;

/* The format called name, or NULL when none is.  Owned by the registry. */
const struct ploom_format *ploom_format_find(const char *name);

/* Writes to out (of size bytes, cut short if need be) the formats for a
 * usage: "text (default: a table ...), html (one self-contained page),
 * or json (the trace as ploom writes it)". */
void ploom_format_help(char *out, size_t size);

#endif
