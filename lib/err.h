/* err.h - error reporting shared by lib/ and its callers.
 *
 * lib/ never prints and never exits: a function that can fail returns a
 * negative value and fills a caller-owned struct ploom_err.  There is no
 * global "last error" because the extension calls lib/ from several threads.
 *
 * An error carries a kind, what went wrong, not an exit code: which exit
 * status each kind gives is the utilities' decision (cmd/cli.h).
 */
#ifndef PLOOM_ERR_H
#define PLOOM_ERR_H

#include <stdarg.h>

enum ploom_err_kind {
	/* no error: a zeroed struct ploom_err */
	PLOOM_ERR_NONE = 0,
	/* an allocation failed (ploom_err_oom()) */
	PLOOM_ERR_NOMEM,
	/* the caller's input is unusable: a malformed trace, argument, option
	 * value or command, a scenario that cannot be loaded, a call made in
	 * a state that does not allow it */
	PLOOM_ERR_INPUT,
	/* the worker failed: it could not be started, it died, it sent
	 * nothing or a malformed record, it did not finish in time, or
	 * talking to it failed */
	PLOOM_ERR_WORKER,
	/* a run did not follow the schedule asked for, or a replay is not the
	 * recorded one (changed source, another Python, other steps or
	 * outcome) */
	PLOOM_ERR_DIVERGENCE,
	/* a limit stopped the work before it was done */
	PLOOM_ERR_INCOMPLETE,
	/* the system or a library refused: a file cannot be opened, read,
	 * created, written or renamed, libgit2 fails; the message says why */
	PLOOM_ERR_SYSTEM,
	/* a signal cut a wait short (ploom_worker_opts' interrupted flag) */
	PLOOM_ERR_INTERRUPTED,
	/* ploom's own bookkeeping contradicts itself (a search that finds a
	 * run it cannot have asked for): a bug of ploom, to be reported */
	PLOOM_ERR_INTERNAL,
};

struct ploom_err {
	enum ploom_err_kind kind;  /* PLOOM_ERR_NONE when no error */
	/* one line, lower case, no final period; room for a message that
	 * names two long paths ("module 'M' leaves 'DIR/': its package 'P' is
	 * 'DIR'"), which a shorter buffer would cut */
	char msg[1024];
};

/* Fills err (which may be NULL) and returns -1, so callers can write
 * `return ploom_err_set(err, PLOOM_ERR_INPUT, "...");`. */
int ploom_err_set(struct ploom_err *err, enum ploom_err_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Fills err (which may be NULL) with PLOOM_ERR_NOMEM and "out of memory"
 * and returns -1.  Formats nothing and allocates nothing, so it is safe to
 * call when memory has run out. */
int ploom_err_oom(struct ploom_err *err);

#endif
