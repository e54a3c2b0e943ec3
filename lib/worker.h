/* worker.h - the worker process that runs schedules, and the reader of
 * its records (event.h documents the protocol).
 *
 * Overview
 * --------
 *     struct ploom_worker *w = NULL;
 *     struct ploom_worker_opts opts = {python, target, "0"};
 *     ploom_worker_start(&w, &opts, &err);      // reads `hello`
 *     ploom_worker_run(w, &run, choices, n, max_steps, timeout_ms, &err);
 *     ...
 *     ploom_worker_stop(w, &err);               // quit, wait, free
 *
 * The worker is `PYTHON -P -m ploom._worker [--expect=FILE [--expect-blob=OID]
 * [--expect-root=DIR] [--search-cwd=DIR] [--import-path=DIR]...] [--patch=MOD]...
 * [--instrument=MOD]... [--patch-project] [--instrument-scenario] [--timeouts=any]
 * [--plain-points=*|-|*-] TARGET`, in that order, started with fd 0 = the
 * command pipe, fd 3 = the record pipe, fd 5 = the plain points with
 * --plain-points=- or *- (event.h), stdout and stderr inherited, every
 * other descriptor closed, PYTHONHASHSEED set, in its own process group
 * (so a Ctrl-C on the terminal reaches only the utility, which then kills
 * the worker), and with PR_SET_PDEATHSIG = SIGKILL so that it dies with
 * the utility.  The worker arranges the same for the children it forks.
 *
 * No process a schedule starts outlives its schedule: the calling process
 * becomes a child subreaper, so that what a schedule's process leaves
 * behind (a program in a session of its own included, which neither the
 * kill of the schedule's process group nor a parent-death signal reaches)
 * becomes its child once that process is gone; each call that reads a
 * whole run, and each stop or free of a worker, then kills (SIGKILL) and
 * reaps every child of the calling process that is not one of its
 * workers, again until none is left.  So a process that starts workers
 * must have no other children of its own while it has workers.
 *
 * Writing a command to a worker that died raises SIGPIPE: a utility must
 * ignore SIGPIPE (then the write fails with EPIPE and the call returns an
 * error).
 *
 * Errors: calls return -1 and fill err.  A scenario that cannot be loaded
 * gives kind PLOOM_ERR_INPUT and "cannot load scenario 'TARGET': MESSAGE";
 * a worker that cannot be started, dies, sends a malformed record or
 * cannot be read or written gives PLOOM_ERR_WORKER and a message naming
 * what happened; after either the worker is unusable and the caller frees
 * it with ploom_worker_free().  A call the worker's state does not allow
 * (a run while one is in flight) gives PLOOM_ERR_INPUT, an interrupted wait
 * PLOOM_ERR_INTERRUPTED.
 */
#ifndef PLOOM_WORKER_H
#define PLOOM_WORKER_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "decode.h"
#include "err.h"
#include "event.h"
#include "trace.h"

struct ploom_worker;

/* The most workers one process runs at once: ploom_worker_start() refuses
 * another one. */
#define PLOOM_WORKER_MAX 64

struct ploom_worker_opts {
	const char *python;     /* interpreter: a path, or a name looked up in PATH */
	const char *target;     /* "module:function" or "file.py:function" */
	const char *hash_seed;  /* PYTHONHASHSEED, decimal */
	/* Optional, for a replay: the absolute source file the target must
	 * be.  The worker finds the file the target names without running
	 * any of it and refuses (an `error source` record, kind
	 * PLOOM_ERR_DIVERGENCE) when it is another one; see _worker.py. */
	const char *expect_file;
	/* Optional: a flag a signal handler sets.  When a wait for the
	 * worker is interrupted by a signal (install the handler without
	 * SA_RESTART) and the flag is set, the call gives up with the error
	 * "interrupted" instead of waiting on. */
	const volatile sig_atomic_t *interrupted;
	/* Optional: the modules the worker patches after it loaded the
	 * scenario (struct ploom_config's patch), passed in this order as
	 * --patch=MOD.  A name ploom_module_problem() refuses fails the start
	 * with PLOOM_ERR_INPUT, naming it; one the worker cannot patch fails
	 * it as a scenario that cannot be loaded. */
	const char *const *patch;
	size_t npatch;
	/* Optional: the scenario's module and the modules of its project are
	 * patched too (struct ploom_config's patch_project), passed as
	 * --patch-project after the --instrument names; with instrument_scenario
	 * they are instrumented too. */
	int patch_project;
	/* Optional, with expect_file: its recorded git blob id.  The worker
	 * reads the file once, hashes those bytes and compiles those same
	 * bytes (no bytecode cache), so neither a file swapped after the
	 * utility's check nor a planted __pycache__ entry runs; a mismatch
	 * is the same `error source` record. */
	const char *expect_blob;
	/* Optional: the access sites of instrumented code that are points
	 * (struct ploom_config's plain_points), at most
	 * PLOOM_PLAIN_POINTS_MAX, passed on fd 5 (--plain-points=-); a key
	 * ploom_plain_point_problem() refuses fails the start with
	 * PLOOM_ERR_INPUT. */
	const char *const *plain_points;
	size_t nplain_points;
	/* Optional: every access site is a point but the quiet ones
	 * (pyext/sites.c), as ploom_config_watches_plain() says for a
	 * reduction: --plain-points=*, or --plain-points=*- with the quiet
	 * sites of plain_points that are points too. */
	int plain_all_points;
	/* Optional: the modules whose plain state the worker instruments
	 * (struct ploom_config's instrument), passed in this order as
	 * --instrument=MOD, and whether the scenario's own module is
	 * instrumented too (--instrument-scenario).  The worker installs the
	 * rewriting before it imports the scenario, so a module imported
	 * before (the worker's own, the standard library's) is refused as a
	 * scenario that cannot be loaded; a name ploom_module_problem()
	 * refuses fails the start with PLOOM_ERR_INPUT, naming it. */
	const char *const *instrument;
	size_t ninstrument;
	int instrument_scenario;
	/* Optional, with expect_file: the repository or folder the replay
	 * runs in (ploom_replay_root()).  A module target whose packages or
	 * import root lie outside it (symbolic links resolved) is refused as
	 * a scenario that cannot be loaded, before anything of it is
	 * imported; without it, outside expect_file's own folder. */
	const char *expect_root;
	/* Optional, with expect_file: the folders the search imported from
	 * (struct ploom_scenario's cwd and import_paths), absolute, as they
	 * are in the tree the replay runs in.  The worker puts each on
	 * sys.path after the standard library, in this order after the
	 * scenario's import root, the search's folder only for a module
	 * target (as the search's worker put it first), and only those
	 * that lie inside expect_root (symbolic links resolved): a trace
	 * is untrusted. */
	const char *search_cwd;
	const char *const *import_paths;
	size_t nimport_paths;
	/* The time model of the schedules (event.h): any is passed as
	 * --timeouts=any, idle (the worker's default) as nothing. */
	enum ploom_timeouts timeouts;
};

/* The default interpreter, as a malloc'd string the caller frees (NULL
 * when out of memory): $PLOOM_PYTHON if set and not empty, else python3
 * in the directory of the running executable if it exists, else python3 in
 * the directory of argv[0] (program_invocation_name) if it exists, else
 * "python3" (looked up in PATH). */
char *ploom_worker_default_python(void);

/* Becomes the worker template (python/ploom/_template.py) at the socket
 * path: exec's `PYTHON -P -m ploom._template --python=PYTHON PATH` with
 * the environment every worker gets (hash_seed its PYTHONHASHSEED), in a
 * process group of its own, to die with this process's parent.  A worker
 * started while PLOOM_WORKER_TEMPLATE names that socket is forked by the
 * template when a fresh interpreter would start the same, and exec'd as
 * without it otherwise.  Returns only on failure: -1 with err filled. */
int ploom_worker_exec_template(const char *python, const char *hash_seed, const char *path,
			       struct ploom_err *err);

/* Starts the worker and reads its `hello`.  On success the caller owns
 * *out and releases it with ploom_worker_stop() or ploom_worker_free().
 * Makes the calling process a child subreaper (PR_SET_CHILD_SUBREAPER), so
 * that stopping the worker also kills and reaps the schedule it was
 * running, and what schedules left behind (see above). */
int ploom_worker_start(struct ploom_worker **out, const struct ploom_worker_opts *opts,
		       struct ploom_err *err);

/* Borrowed: valid until the worker is freed. */
const struct ploom_hello *ploom_worker_hello(const struct ploom_worker *w);

/* The worker's process id; -1 once it has been reaped. */
pid_t ploom_worker_pid(const struct ploom_worker *w);

/* For a SIGINT or SIGTERM handler (async-signal-safe): kills (SIGKILL)
 * every worker of this process that runs, at once, so that no schedule
 * outlives the utility; their schedules die with them.  The caller then
 * frees the workers as usual (ploom_worker_free()), which reaps them and
 * kills what their schedules left behind.  Install the handler without
 * SA_RESTART, so that the waits for a worker are interrupted (see
 * interrupted above). */
void ploom_worker_kill_all(void);

/* Runs one schedule following choices[0..n) at the first branch points,
 * with at most max_steps steps (0: no bound but PLOOM_MAX_STEPS, which
 * also caps a larger one) and a wall-clock limit of
 * timeout_ms (0: none).  *out (released or zeroed by the caller) receives
 * the run, finished with ploom_run_finish(); the caller releases it with
 * ploom_run_release().  A child that exited, crashed or timed out without
 * an outcome record gives the outcomes "exit", "crash" and "timeout". */
int ploom_worker_run(struct ploom_worker *w, struct ploom_run *out, const int *choices,
		     size_t n, long max_steps, long timeout_ms, struct ploom_err *err);

/* ploom_worker_run() with every field of the command (event.h), its
 * policy included. */
int ploom_worker_run_cmd(struct ploom_worker *w, struct ploom_run *out,
			 const struct ploom_run_cmd *cmd, struct ploom_err *err);

/* ---- several workers at once ----
 *
 * ploom_worker_run() in two halves, so that one process can keep several
 * workers busy and poll(2) their record pipes:
 *
 *     ploom_worker_send_run(w, choices, n, max_steps, timeout_ms, &err);
 *     ...poll ploom_worker_fd(w) for POLLIN (at least once a second)...
 *     r = ploom_worker_read_run(w, &run, &err);   // 1: run complete
 *
 * The workers of one process are one pool, up to PLOOM_WORKER_MAX of them,
 * which this file keeps: stopping or freeing one, or reading a run of one,
 * kills and reaps the orphans without waiting for the others, which stay
 * usable, and ploom_worker_kill_all() kills them all.  What a schedule that still runs leaves
 * behind stays its own (the worker makes each schedule's process a
 * subreaper too), so it is not taken for an orphan before that schedule
 * ends. */

/* Sends the command of one schedule (as ploom_worker_run() does) and
 * returns without waiting for the run.  One run at a time: -1 with err
 * filled when one is in flight, or when the command cannot be written. */
int ploom_worker_send_run(struct ploom_worker *w, const int *choices, size_t n,
			  long max_steps, long timeout_ms, struct ploom_err *err);

/* ploom_worker_send_run() with every field of the command, the sleep set
 * included (event.h). */
int ploom_worker_send_cmd(struct ploom_worker *w, const struct ploom_run_cmd *cmd,
			  struct ploom_err *err);

/* The descriptor to poll for POLLIN while a run is in flight. */
int ploom_worker_fd(const struct ploom_worker *w);

/* 1 while a run sent with ploom_worker_send_run() has not been read. */
int ploom_worker_busy(const struct ploom_worker *w);

/* Reads, without blocking, what the worker has sent of the run in flight.
 * Returns 1 when the run is complete: it is moved into *out (released or
 * zeroed by the caller, who releases it with ploom_run_release()), as
 * ploom_worker_run() would fill it; 0 when it is not yet (also when a
 * signal interrupted the read: the caller checks its flag); -1 with err
 * filled, as ploom_worker_run(), when the worker died, sent a malformed
 * record, or let timeout_ms plus a grace period pass (it is then killed).
 * Call it at least once a second while the run is in flight, so that the
 * deadline is noticed. */
int ploom_worker_read_run(struct ploom_worker *w, struct ploom_run *out,
			  struct ploom_err *err);

/* Builds a trace of run with the worker's hello (scenario, Python),
 * target, hash_seed and config, moving the run into it (*run is left
 * zeroed).  On success the caller owns *out (ploom_trace_free()). */
int ploom_worker_trace(struct ploom_trace **out, const struct ploom_worker *w,
		       const char *hash_seed, const struct ploom_config *config,
		       struct ploom_run *run, struct ploom_err *err);

/* Sends `quit`, waits for the worker to exit and frees it (also on
 * error).  Returns 0, or -1 if the worker did not exit cleanly.  Accepts
 * NULL. */
int ploom_worker_stop(struct ploom_worker *w, struct ploom_err *err);

/* Kills the worker if it runs, reaps it and frees it.  Accepts NULL. */
void ploom_worker_free(struct ploom_worker *w);

#endif
