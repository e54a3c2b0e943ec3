/* cli.h - what the ploom-* utilities share.
 *
 * Their option handling (-h, -V, usage errors), the SIGINT/SIGTERM
 * handler that kills the worker, the default --python, reading a TRACE
 * argument, writing a trace and closing standard output.  Unlike lib/,
 * these print: on stderr, one line starting with the utility's name, in
 * the grammar of STYLE.md.  Functions that can fail print why and return
 * -1, except those that take a struct ploom_err: they fill it and print
 * nothing, for the utility's fail: label (cli_fail()).
 *
 * Each utility defines cli_prog and cli_usage; a main() reads
 *
 *     static const struct option options[] = {
 *             {"output", required_argument, NULL, 'o'},
 *             CLI_OPTION_PYTHON,
 *             CLI_OPTIONS_END,
 *     };
 *     ...
 *     struct cli_opts opts = CLI_OPTS_INIT;
 *     ...
 *     while ((c = cli_getopt(argc, argv, ":o:hV", options)) != -1) {
 *             switch (c) {
 *             case 'o': ...
 *             default:
 *                     if (!cli_common_option(&ret, &opts, c, argv))
 *                             goto done;
 *                     break;
 *             }
 *     }
 *     python = cli_python(opts.python);
 *     ...
 *     if (cli_worker_start(&worker, python, target, seed, &opts.config, &err) < 0)
 *             goto fail;
 *     ...
 * fail:
 *     ret = cli_fail(&err, "");
 * done:
 *     ploom_worker_free(worker);
 *     cli_opts_release(&opts);
 *     ...
 *     return cli_exit(ret, "the trace", CLI_EPIPE_QUIET);
 */
#ifndef PLOOM_CLI_H
#define PLOOM_CLI_H

#include <getopt.h>
#include <signal.h>
#include <stdio.h>

#include "err.h"
#include "exit.h"
#include "fingerprint.h"
#include "trace.h"
#include "worker.h"

/* The exit codes (enum ploom_exit) are exit.h's. */

/* Defined by each utility: its name, which starts every message
 * ("ploom-replay"), and its usage text, printed on stdout by -h and on
 * stderr after a usage error. */
extern const char cli_prog[];
extern const char *const cli_usage;

/* The signal that stopped us (SIGINT or SIGTERM), 0 while none came.  Set
 * by the handler cli_worker_start() installs. */
extern volatile sig_atomic_t cli_interrupted;

/* The options several utilities share, as cli_common_option() sets them.
 * A utility lists those it has in its option table (the CLI_OPTION_*
 * entries below) and its short options ("s", "q"); it may change a
 * default before parsing. */
struct cli_opts {
	const char *python;         /* --python=PATH (in argv); NULL: the default */
	char hash_seed[11];         /* --hash-seed=N, canonical decimal */
	struct ploom_config config; /* -s, --max-steps=N, --schedule-timeout=SECONDS,
				     * --patch=MODULE and --instrument=MODULE (the lists
				     * are owned: cli_opts_release()) */
	int quiet;                  /* -q, --quiet */
	int patch_listed_only;      /* --patch=-: no module by default, see
				     * cli_module_defaults() */
	int instrument_listed_only; /* --instrument=-: the same for --instrument */
	/* --minimize-seconds=SECONDS as ploom_minimize_opts' max_seconds: 0
	 * the default, < 0 none (given as 0) */
	double minimize_seconds;
	int timeouts_given;         /* --timeouts=MODEL was given (into config.timeouts) */
};

/* hash seed 0, no preemption bound, no search said (plain depth-first
 * search, ploom_config_kind()), 10000 steps, 10 s, no
 * module patched or instrumented, no plain point (until
 * cli_module_defaults()), the idle time model */
#define CLI_OPTS_INIT \
	{.python = NULL, .hash_seed = "0", \
	 .config = {.max_preemptions = -1, .kind = NULL, .max_steps = 10000, \
		    .schedule_timeout_s = PLOOM_DEFAULT_SCHEDULE_TIMEOUT_S, \
		    .timeouts = PLOOM_TIMEOUTS_IDLE}}

/* Frees what cli_common_option() took into opts (the --patch and
 * --instrument lists).  For a utility that lists CLI_OPTION_PATCH, at
 * its done: label. */
void cli_opts_release(struct cli_opts *opts);

/* Once the options are parsed: adds to opts->config what every search
 * patches and instruments by default (ploom_config_module_defaults()),
 * unless --patch=- or --instrument=- said to take only the modules named.
 * Returns 0, or PLOOM_EXIT_USAGE after a usage error (the lists together
 * name more than 64 modules) or "out of memory". */
int cli_module_defaults(struct cli_opts *opts);

/* The getopt codes of the shared long options without a short one; a
 * utility numbers its own from CLI_OPT_OWN. */
enum {
	CLI_OPT_PYTHON = 256,
	CLI_OPT_HASH_SEED,
	CLI_OPT_SCHEDULE_TIMEOUT,
	CLI_OPT_PATCH,
	CLI_OPT_INSTRUMENT,
	CLI_OPT_MINIMIZE_SECONDS,
	CLI_OPT_TIMEOUTS,
	CLI_OPT_OWN,
};

/* Entries of an option table (struct option[]) for the shared options;
 * CLI_OPTIONS_END (--help, --version and the terminator) ends every
 * table. */
#define CLI_OPTION_PYTHON {"python", required_argument, NULL, CLI_OPT_PYTHON}
#define CLI_OPTION_HASH_SEED {"hash-seed", required_argument, NULL, CLI_OPT_HASH_SEED}
#define CLI_OPTION_MAX_STEPS {"max-steps", required_argument, NULL, 's'}
#define CLI_OPTION_SCHEDULE_TIMEOUT \
	{"schedule-timeout", required_argument, NULL, CLI_OPT_SCHEDULE_TIMEOUT}
#define CLI_OPTION_QUIET {"quiet", no_argument, NULL, 'q'}
/* repeatable: each adds a module to config's patch list, in order;
 * "-" adds none and turns the default off (cli_module_defaults()) */
#define CLI_OPTION_PATCH {"patch", required_argument, NULL, CLI_OPT_PATCH}
/* repeatable: each adds a module to config's instrument list, in order;
 * "-" adds none and turns the default off (cli_instrument_default()) */
#define CLI_OPTION_INSTRUMENT {"instrument", required_argument, NULL, CLI_OPT_INSTRUMENT}
/* --timeouts=MODEL: the time model (event.h's ploom_timeouts_parse()) */
#define CLI_OPTION_TIMEOUTS {"timeouts", required_argument, NULL, CLI_OPT_TIMEOUTS}
#define CLI_OPTION_MINIMIZE_SECONDS \
	{"minimize-seconds", required_argument, NULL, CLI_OPT_MINIMIZE_SECONDS}
#define CLI_OPTIONS_END \
	{"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, 'V'}, \
	{NULL, 0, NULL, 0}

/* Says on stderr, as PROG: MESSAGE, that the minimizer stopped before it
 * could tell the fewest preemptions (res->stopped_by set): after how many
 * schedules, which budget ended it, and what the trace written has.
 * Says nothing when the search ended. */
struct ploom_minimize_result;
void cli_minimize_stopped(const struct ploom_minimize_result *res);

/* How a utility takes EPIPE on standard output (its reader has gone): a
 * filter ends quietly (STYLE.md), the others report it. */
enum cli_epipe {
	CLI_EPIPE_FAILS,
	CLI_EPIPE_QUIET,
};

/* getopt_long() without getopt's own messages, which would name the path
 * we were run by: shortopts must start with ':' so that a missing value
 * is told from an unknown option.  Returns as getopt_long() does. */
int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts);

/* For the default case of a utility's option switch (c is what
 * cli_getopt() returned): takes a shared option into *opts (opts may be
 * NULL when the utility has none) and returns 1, parsing goes on.  Else
 * returns 0 and main() ends with the exit status *out: -h printed the
 * usage on stdout, -V the version; an invalid value, a missing one (':')
 * or an unknown option printed a usage error. */
int cli_common_option(int *out, struct cli_opts *opts, int c, char **argv);

/* Prints "PROG: WHAT 'ARG'" (or "PROG: WHAT" when arg is NULL), then the
 * usage, on stderr.  Returns PLOOM_EXIT_USAGE.  Every usage error has this
 * shape, a line saying why and then the usage, and is printed before
 * anything else: ploom.check tells a refused option by it. */
int cli_usage_error(const char *what, const char *arg);

/* The column the usages' option texts start at. */
#define CLI_USAGE_COLUMN 33

/* Writes to out (of size bytes, cut short if need be) a usage made of
 * words a registry gives (the searches, the formats): head, which ends
 * where the words start, then the words wrapped at width columns, each
 * line after the first starting at CLI_USAGE_COLUMN (no word split), then
 * a newline and tail. */
void cli_usage_build(char *out, size_t size, const char *head, const char *words,
		     const char *tail, size_t width);

/* Prints the usage text on out.  When the environment names the command
 * in PLOOM_USAGE_NAME (python -m ploom check shows ploom-explore's usage
 * as its own), the synopsis, up to the first empty line, names it
 * instead of cli_prog, with its continuation lines aligned again; the
 * messages still name cli_prog, which is the program that says them. */
void cli_put_usage(FILE *out);

/* cli_put_usage() of the text usage of the program prog, shown as name
 * (usage as it is when name is NULL or empty). */
void cli_put_usage_as(FILE *out, const char *usage, const char *prog, const char *name);

/* The value arg of the option named option ("--max-steps"): an integer
 * from min to max (ploom_args_long()), or a number of seconds from 0 (or
 * above 0 when positive is set) to PLOOM_ARGS_MAX_SECONDS.  Returns 0,
 * or PLOOM_EXIT_USAGE after a usage error that states the range:
 * "PROG: invalid --max-steps '-1': not an integer from 0 to 1000000".
 * These messages are where the bounds are said; ploom.check passes them
 * on as they are. */
int cli_long_value(long *out, const char *option, const char *arg, long min, long max);
int cli_seconds_value(double *out, const char *option, const char *arg, int positive);

/* A copy of arg (--python), or when it is NULL the default interpreter
 * (ploom_worker_default_python()); the caller frees it.  NULL when out of
 * memory. */
char *cli_python(const char *arg);

/* The name of a TRACE argument in messages: path, or "<stdin>" for "-". */
const char *cli_trace_name(const char *path);

/* The optional TRACE operand, the last argument: *out is argv[optind],
 * or "-" (standard input) when there is none.  Returns 0, or -1 after a
 * usage error when there is more than one. */
int cli_trace_operand(const char **out, int argc, char **argv);

/* Reads the trace at path ("-": standard input).  On success the caller
 * owns *out and frees it with ploom_trace_free(). */
int cli_read_trace(struct ploom_trace **out, const char *path);

/* Writes trace to the file output (through ploom_trace_write_file()), or
 * to standard output when output is NULL. */
int cli_write_trace(const char *output, const struct ploom_trace *trace, enum cli_epipe epipe);

/* Gives a trace about to be written its source fingerprints and its id.
 * Returns 0, or -1 with err filled (nothing printed). */
int cli_stamp_trace(struct ploom_trace *trace, struct ploom_err *err);

/* The exit status of a utility that ran one schedule with this outcome. */
int cli_outcome_exit(enum ploom_outcome_kind kind);

/* The exit status of a utility that failed with err: the one place where
 * an error's kind becomes an exit code.  PLOOM_EXIT_DIVERGENCE for a
 * divergence, PLOOM_EXIT_INCOMPLETE for a limit, PLOOM_EXIT_USAGE for any
 * other kind, and for an err that no call filled (PLOOM_ERR_NONE). */
int cli_exit_code(const struct ploom_err *err);

/* Seconds on the monotonic clock. */
double cli_now_s(void);

/* Writes path as one word of a shell command: as it is when it holds only
 * letters, digits and @%+=:,./-_ (as Python's shlex.quote() leaves it),
 * else in single quotes; control characters are escaped as in messages. */
void cli_put_shell_word(FILE *f, const char *path);

/* The next step after a failure, the same wording as ploom's Python side:
 *     PREFIX: Replay: ploom-replay PATH  # read it with: ploom-show PATH
 * on stderr; nothing when PLOOM_NO_NEXT_STEP is set (by ploom's Python
 * package, whose ModelCheckError says it instead, with its own command). */
void cli_put_next_step(const char *prefix, const char *path);

/* The one rule for how often a utility reports its progress: each second
 * on a terminal, where a status line is rewritten in place, and for
 * --progress=json, which a program reads; every CLI_LOG_PROGRESS_S seconds
 * when the lines pile up in a log (a file, a pipe, pytest -s), so that a
 * long search leaves a few lines there rather than thousands. */
#define CLI_LOG_PROGRESS_S 30.0

/* 1 when the interval above has passed since *last, which is then set to
 * now; to_log says the report is a line for a log.  Else 0. */
int cli_progress_due(double *last, int to_log);

/* A status line on standard error that a terminal shows in place: each
 * cli_status_show() rewrites it (cut to the terminal's width, so that it
 * never wraps), cli_status_clear() blanks it before anything else is
 * written there and at the end.  Only for a terminal: check isatty(2)
 * first. */
struct cli_status {
	size_t shown;               /* the characters on the line now */
};

void cli_status_show(struct cli_status *st, const char *line);
void cli_status_clear(struct cli_status *st);

/* Installs the SIGINT/SIGTERM handler, which sets cli_interrupted and
 * kills the workers at once so that no schedule outlives us (every worker
 * of this process, ploom_worker_kill_all()); ignores
 * SIGPIPE, so that a dead worker is an error from write() and not our
 * death; then starts the worker (ploom_worker_start()) with config's
 * module lists (its other fields are for the runs), whose waits the
 * handler interrupts.  On success the caller owns *out and releases it
 * with cli_worker_stop() or ploom_worker_free().  Returns 0, or -1 with
 * err filled (nothing printed). */
int cli_worker_start(struct ploom_worker **out, const char *python, const char *target,
		     const char *hash_seed, const struct ploom_config *config,
		     struct ploom_err *err);

/* cli_worker_start() for a replay of trace (replay.h): finds its files
 * here (ploom_replay_place(), which may rewrite the trace's paths),
 * checks that the scenario's source is the recorded one
 * (ploom_replay_check_source()),
 * then starts python on the recorded target with the trace's hash seed,
 * its module lists (a replay patches and instruments what the search
 * did) and its scenario file as the file the target must be
 * (worker.h's expect_file).  As cli_worker_start() otherwise. */
int cli_worker_start_replay(struct ploom_worker **out, const char *python,
			    struct ploom_trace *trace, struct ploom_err *err);

/* cli_worker_start_replay() for a replay on the current source
 * (replay.h): finds the trace's files here as it does, then prints on
 * standard error which of them differ from the trace's blobs instead of
 * refusing them, and starts the worker with the scenario file held to
 * its blob now, which it writes into scenario_now. */
int cli_worker_start_current(struct ploom_worker **out, const char *python,
			     struct ploom_trace *trace, char scenario_now[PLOOM_OID_HEXSZ + 1],
			     struct ploom_err *err);

/* ploom_worker_stop(*worker), which frees it even when it fails: *worker
 * is NULL after.  Returns 0, or -1 with err filled (nothing printed). */
int cli_worker_stop(struct ploom_worker **worker, struct ploom_err *err);

/* Prints "PROG: PREFIXMSG" for err, unless a signal stopped us (then
 * cli_exit() tells the signal).  Returns cli_exit_code(err). */
int cli_fail(const struct ploom_err *err, const char *prefix);

/* The end of every main(): returns 128 + the signal when one stopped us.
 * Else closes standard output, which writes its last buffered bytes, so a
 * full disk shows here: when that fails and ret is not already
 * PLOOM_EXIT_USAGE, prints "PROG: cannot write WHAT: WHY" (quietly skipped
 * for EPIPE when epipe says so) and returns PLOOM_EXIT_USAGE.  Else
 * returns ret. */
int cli_exit(int ret, const char *what, enum cli_epipe epipe);

#endif
