/* err.h - error reporting and exit codes shared by every ploom utility.
 *
 * lib/ never prints and never exits: a function that can fail returns a
 * negative value and fills a caller-owned struct ploom_err.  There is no
 * global "last error" because the extension calls lib/ from several threads.
 */
#ifndef PLOOM_ERR_H
#define PLOOM_ERR_H

#include <stdarg.h>

/* Exit codes of every utility, mirrored by `python -m ploom`.
 * Codes above 128 stay reserved for "killed by signal". */
enum ploom_exit {
	PLOOM_EXIT_OK = 0,          /* the work asked for completed and held */
	PLOOM_EXIT_FAILURE = 1,     /* a schedule failed (assertion, exception, deadlock, crash) */
	PLOOM_EXIT_USAGE = 2,       /* bad arguments or bad input (unreadable trace, unloadable scenario) */
	PLOOM_EXIT_INCOMPLETE = 3,  /* a limit stopped the search: never a pass */
	PLOOM_EXIT_DIVERGENCE = 4,  /* a replay did not follow the recorded schedule */
};

struct ploom_err {
	int code;       /* an enum ploom_exit value, or 0 when no error */
	char msg[256];  /* one line, lower case, no final period */
};

/* Fills err (which may be NULL) and returns -1, so callers can write
 * `return ploom_err_set(err, PLOOM_EXIT_USAGE, "...");`. */
int ploom_err_set(struct ploom_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
