/* writer.h - writes to a FILE that fail once and say so at the end.
 *
 * The renderers write many small pieces; checking each one would bury
 * what they draw.  A writer keeps the first failure with its errno and
 * skips every later write, so a rendering reads straight and is checked
 * once, by ploom_writer_finish():
 *
 *     struct ploom_writer w = {out, 0, 0};
 *     ploom_write(&w, "<p>");
 *     ploom_writef(&w, "%d", n);
 *     return ploom_writer_finish(&w, err);
 */
#ifndef PLOOM_WRITER_H
#define PLOOM_WRITER_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "err.h"

struct ploom_writer {
	FILE *f;        /* borrowed */
	int failed;     /* 1 once a write failed: the later ones are skipped */
	int error;      /* errno of the write that failed */
};

void ploom_write_bytes(struct ploom_writer *w, const char *s, size_t n);
void ploom_write(struct ploom_writer *w, const char *s);
void ploom_vwritef(struct ploom_writer *w, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* Flushes w's FILE.  Returns 0, or -1 with err filled (kind
 * PLOOM_ERR_SYSTEM, "write error: ...") and errno set to the first
 * failure's (EPIPE, ENOSPC) when a write or the flush failed. */
int ploom_writer_finish(struct ploom_writer *w, struct ploom_err *err);

#endif
