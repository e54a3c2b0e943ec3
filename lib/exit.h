/* exit.h - the exit codes of every ploom program: the utilities (cmd/),
 * and, through the constants the extension exports (EXIT_OK, ...), the
 * `ploom` command and the Python package, which read them from there.
 * docs/errors.rst tells users what each means. */
#ifndef PLOOM_EXIT_H
#define PLOOM_EXIT_H

/* Codes above 128 stay reserved for "killed by signal". */
enum ploom_exit {
	PLOOM_EXIT_OK = 0,          /* the work asked for completed and held */
	PLOOM_EXIT_FAILURE = 1,     /* a schedule failed (assertion, exception, deadlock, crash) */
	PLOOM_EXIT_USAGE = 2,       /* bad arguments or bad input (unreadable trace, unloadable
				     * scenario), or the system failed (out of memory, the worker
				     * died, a file cannot be written) */
	PLOOM_EXIT_INCOMPLETE = 3,  /* a limit stopped the search: never a pass */
	PLOOM_EXIT_DIVERGENCE = 4,  /* a replay did not follow the recorded schedule */
	PLOOM_EXIT_INTERNAL = 5,    /* an internal error: a bug of ploom, "please report" */
	PLOOM_EXIT_SETUP = 6,       /* a setup mistake, not a bug of the code under test: a
				     * standard-library primitive ran in a schedule
				     * (PLOOM_SETUP_ERROR_TYPE) */
	PLOOM_EXIT_INTERRUPTED = 130, /* Ctrl-C: 128 + SIGINT, as a shell reports it */
};

#endif
