/* Writes that fail once; writer.h says why. */
#include "writer.h"

#include <errno.h>
#include <string.h>

static void fail(struct ploom_writer *w)
{
	w->failed = 1;
	w->error = errno ? errno : EIO;
}

void ploom_write_bytes(struct ploom_writer *w, const char *s, size_t n)
{
	if (w->failed || !n)
		return;
	errno = 0;
	if (fwrite(s, 1, n, w->f) != n)
		fail(w);
}

void ploom_write(struct ploom_writer *w, const char *s)
{
	ploom_write_bytes(w, s, strlen(s));
}

void ploom_vwritef(struct ploom_writer *w, const char *fmt, va_list ap)
{
	if (w->failed)
		return;
	errno = 0;
	if (vfprintf(w->f, fmt, ap) < 0)
		fail(w);
}

int ploom_writer_finish(struct ploom_writer *w, struct ploom_err *err)
{
	if (!w->failed) {
		errno = 0;
		if (fflush(w->f) == EOF)
			fail(w);
	}
	if (!w->failed)
		return 0;
	ploom_err_set(err, PLOOM_ERR_SYSTEM, "write error: %s", strerror(w->error));
	errno = w->error;
	return -1;
}
