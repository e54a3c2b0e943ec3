/* What the ploom-* utilities share; cli.h documents it. */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "json.h"
#include "minimize.h"
#include "plural.h"
#include "format/render.h"
#include "replay.h"
#include "source.h"
#include "version.h"

/* a number macro's digits, as a string literal */
#define PLOOM_STR_(x) #x
#define PLOOM_STR(x) PLOOM_STR_(x)

volatile sig_atomic_t cli_interrupted;

/* every worker of ours, however many ploom-explore -j runs */
static void on_signal(int sig)
{
	cli_interrupted = sig;
	ploom_worker_kill_all();
}

int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts)
{
	opterr = 0;
	return getopt_long(argc, argv, shortopts, longopts, NULL);
}

/* The option getopt stopped at (c is what it returned), as written: the
 * argument for a long one, "-x" for a short one.  optopt alone cannot
 * tell them apart: it is 0 for an unknown long option but the option's
 * code for a long one that lacks its value, so that case is told by the
 * argument, which getopt has then stepped over. */
static const char *option_name(char **argv, int c)
{
	static char shortopt[3] = "-?";
	const char *arg = argv[optind - 1];

	if (!optopt || (c == ':' && !strncmp(arg, "--", 2)))
		return arg;
	shortopt[1] = (char)optopt;
	return shortopt;
}

/* "PROG: invalid OPTION 'ARG': WHY" and the usage. */
static int invalid_value(const char *option, const char *arg, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void cli_opts_release(struct cli_opts *opts)
{
	ploom_config_release_lists(&opts->config);
}

/* "PROG: out of memory" for a failed add, else the usage error of the
 * option's value. */
static int add_failed(const struct ploom_err *err, const char *option, const char *arg)
{
	if (err->kind == PLOOM_ERR_NOMEM) {
		fprintf(stderr, "%s: out of memory\n", cli_prog);
		return PLOOM_EXIT_USAGE;
	}
	return invalid_value(option, arg, "%s", err->msg);
}

int cli_module_defaults(struct cli_opts *opts)
{
	struct ploom_err err = {0, ""};

	if (ploom_config_module_defaults(&opts->config, opts->patch_listed_only,
					 opts->instrument_listed_only, &err) == 0)
		return 0;
	if (err.kind == PLOOM_ERR_NOMEM) {
		fprintf(stderr, "%s: out of memory\n", cli_prog);
		return PLOOM_EXIT_USAGE;
	}
	/* each list was fine alone: the --patch modules came in on top */
	return cli_usage_error("more than " PLOOM_STR(PLOOM_MODULES_MAX) " modules to instrument: "
			       "those of --instrument and of --patch, which the search "
			       "instruments by default (--instrument=- instruments only those "
			       "named)", NULL);
}

/* Every utility writes files (a trace, statistics, its standard output
 * redirected): under a file size limit (ulimit -f) a write past it must
 * fail with EFBIG, which the writer reports as the error it is, instead of
 * killing the utility with SIGXFSZ halfway through.  Before main(), so
 * that no utility can miss it; a program exec'd with the signal ignored
 * keeps it so, as Python, which the worker runs, sets it anyway, and its
 * subprocess module restores it for the programs a scenario starts. */
__attribute__((constructor)) static void ignore_file_size_signal(void)
{
	signal(SIGXFSZ, SIG_IGN);
}

int cli_common_option(int *out, struct cli_opts *opts, int c, char **argv)
{
	/* *out is the caller's exit status, which stays as it is while
	 * parsing goes on: a 0 left there by a valid value would be the exit
	 * status of a later error (a missing trace) */
	int r = 0;

	/* the shared options come only from a table that lists them */
	if (!opts && c != 'h' && c != 'V' && c != ':')
		c = '?';
	switch (c) {
	case 'h':
		cli_put_usage(stdout);
		*out = PLOOM_EXIT_OK;
		return 0;
	case 'V':
		printf("%s (ploom) " PLOOM_VERSION "\n", cli_prog);
		*out = PLOOM_EXIT_OK;
		return 0;
	case CLI_OPT_PYTHON:
		opts->python = optarg;
		break;
	case CLI_OPT_HASH_SEED: {
		long v;
		r = cli_long_value(&v, "--hash-seed", optarg, 0, PLOOM_ARGS_MAX_SEED);
		/* for its canonical spelling: the value is valid */
		if (!r)
			(void)ploom_args_seed(opts->hash_seed, optarg);
		break;
	}
	case 's':
		r = cli_long_value(&opts->config.max_steps, "--max-steps", optarg, 0,
				   PLOOM_MAX_STEPS);
		break;
	case CLI_OPT_SCHEDULE_TIMEOUT:
		r = cli_seconds_value(&opts->config.schedule_timeout_s, "--schedule-timeout",
				      optarg, 0);
		break;
	case CLI_OPT_TIMEOUTS: {
		int m = ploom_timeouts_parse(optarg);
		if (m < 0) {
			r = cli_usage_error("invalid --timeouts (not idle or any)", optarg);
			break;
		}
		opts->config.timeouts = (enum ploom_timeouts)m;
		opts->timeouts_given = 1;
		break;
	}
	case CLI_OPT_MINIMIZE_SECONDS:
		r = cli_seconds_value(&opts->minimize_seconds, "--minimize-seconds", optarg, 0);
		if (!r && opts->minimize_seconds == 0)
			opts->minimize_seconds = -1;
		break;
	case 'q':
		opts->quiet = 1;
		break;
	case CLI_OPT_PATCH: {
		struct ploom_err err = {0, ""};
		/* no module is called "-": the one value that is not a name */
		if (!strcmp(optarg, "-"))
			opts->patch_listed_only = 1;
		else if (ploom_config_add_patch(&opts->config, optarg, &err) < 0)
			r = add_failed(&err, "--patch", optarg);
		break;
	}
	case CLI_OPT_INSTRUMENT: {
		struct ploom_err err = {0, ""};
		/* no module is called "-": the one value that is not a name */
		if (!strcmp(optarg, "-"))
			opts->instrument_listed_only = 1;
		else if (ploom_config_add_instrument(&opts->config, optarg, &err) < 0)
			r = add_failed(&err, "--instrument", optarg);
		break;
	}
	case ':':
		r = cli_usage_error("missing value for option", option_name(argv, c));
		break;
	default:
		r = cli_usage_error("unknown option", option_name(argv, c));
		break;
	}
	if (!r)
		return 1;
	*out = r;
	return 0;
}

static int invalid_value(const char *option, const char *arg, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: invalid %s '%s': ", cli_prog, option, arg);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cli_put_usage(stderr);
	return PLOOM_EXIT_USAGE;
}

int cli_long_value(long *out, const char *option, const char *arg, long min, long max)
{
	if (ploom_args_long(out, arg, min, max) == 0)
		return 0;
	return invalid_value(option, arg, "not an integer from %ld to %ld", min, max);
}

int cli_seconds_value(double *out, const char *option, const char *arg, int positive)
{
	double v;
	long ms;

	/* the milliseconds of a run command must hold it too */
	if (ploom_args_seconds(&v, arg) == 0 && (!positive || v > 0) &&
	    ploom_timeout_ms(&ms, v) == 0) {
		*out = v;
		return 0;
	}
	return invalid_value(option, arg, "not a number of seconds %s %.0f",
			     positive ? "above 0, at most" : "from 0 to", PLOOM_ARGS_MAX_SECONDS);
}

/* Whether line starts with n spaces. */
static int indented(const char *line, size_t n)
{
	return strspn(line, " ") >= n;
}

void cli_put_usage_as(FILE *out, const char *usage, const char *prog, const char *name)
{
	const size_t lead = strlen("usage: "), plen = strlen(prog);
	const char *line, *end;
	int synopsis = 1;

	if (!name || !*name) {
		fputs(usage, out);
		return;
	}
	for (line = usage; *line; line = end) {
		end = strchr(line, '\n');
		end = end ? end + 1 : line + strlen(line);
		if (*line == '\n')
			synopsis = 0; /* the synopsis ends at the first empty line */
		if (synopsis && (!strncmp(line, "usage: ", lead) || indented(line, lead)) &&
		    !strncmp(line + lead, prog, plen) && line[lead + plen] == ' ') {
			/* a form of the command: the name replaces prog */
			fprintf(out, "%.*s%s", (int)lead, line, name);
			line += lead + plen;
		} else if (synopsis && indented(line, lead + plen + 1)) {
			/* a form's continuation, aligned under its first option */
			fprintf(out, "%*s", (int)(lead + strlen(name) + 1), "");
			line += lead + plen + 1;
		}
		fwrite(line, 1, (size_t)(end - line), out);
	}
}

void cli_put_usage(FILE *out)
{
	cli_put_usage_as(out, cli_usage, cli_prog, getenv("PLOOM_USAGE_NAME"));
}

/* Appends text to the string out (of size bytes), wrapped at width
 * columns, the lines after the first starting at column. */
static void wrap(char *out, size_t size, const char *text, size_t column, size_t width)
{
	size_t len = strlen(out), at;
	const char *line = strrchr(out, '\n');

	/* the column the first word starts at */
	at = len - (line ? (size_t)(line - out) + 1 : 0);
	while (*text && len < size) {
		size_t word = strcspn(text, " ");

		if (at > column && at + 1 + word > width) {
			len += (size_t)snprintf(out + len, size - len, "\n%*s", (int)column, "");
			at = column;
		} else if (at > column) {
			len += (size_t)snprintf(out + len, size - len, " ");
			at++;
		}
		if (len < size)
			len += (size_t)snprintf(out + len, size - len, "%.*s", (int)word, text);
		at += word;
		text += word;
		text += strspn(text, " ");
	}
}

void cli_usage_build(char *out, size_t size, const char *head, const char *words,
		     const char *tail, size_t width)
{
	size_t len;

	snprintf(out, size, "%s", head);
	wrap(out, size, words, CLI_USAGE_COLUMN, width);
	len = strlen(out);
	if (len < size)
		snprintf(out + len, size - len, "\n%s", tail);
}

int cli_usage_error(const char *what, const char *arg)
{
	if (arg)
		fprintf(stderr, "%s: %s '%s'\n", cli_prog, what, arg);
	else
		fprintf(stderr, "%s: %s\n", cli_prog, what);
	cli_put_usage(stderr);
	return PLOOM_EXIT_USAGE;
}

char *cli_python(const char *arg)
{
	char *python = arg ? strdup(arg) : ploom_worker_default_python();

	if (!python)
		fprintf(stderr, "%s: out of memory\n", cli_prog);
	return python;
}

const char *cli_trace_name(const char *path)
{
	return strcmp(path, "-") ? path : "<stdin>";
}

int cli_trace_operand(const char **out, int argc, char **argv)
{
	if (optind < argc - 1) {
		cli_usage_error("too many arguments", NULL);
		return -1;
	}
	*out = optind == argc - 1 ? argv[optind] : "-";
	return 0;
}

int cli_read_trace(struct ploom_trace **out, const char *path)
{
	struct ploom_err err = {0, ""};

	if (ploom_trace_read_file(out, path, &err) < 0) {
		fprintf(stderr, "%s: cannot read trace '%s': %s\n", cli_prog, cli_trace_name(path),
			err.msg);
		return -1;
	}
	return 0;
}

int cli_write_trace(const char *output, const struct ploom_trace *trace, enum cli_epipe epipe)
{
	struct ploom_err err = {0, ""};
	int r;

	errno = 0;
	if (output)
		r = ploom_trace_write_file(output, trace, &err);
	else
		r = ploom_trace_write(stdout, trace, &err);
	if (r >= 0)
		return 0;
	if (output)
		fprintf(stderr, "%s: %s\n", cli_prog, err.msg);
	else if (epipe != CLI_EPIPE_QUIET || errno != EPIPE)
		fprintf(stderr, "%s: cannot write the trace: %s\n", cli_prog, err.msg);
	return -1;
}

int cli_stamp_trace(struct ploom_trace *trace, struct ploom_err *err)
{
	if (ploom_trace_fingerprint_source(trace, err) < 0)
		return -1;
	return ploom_trace_set_id(trace, err);
}

int cli_outcome_exit(enum ploom_outcome_kind kind)
{
	if (kind == PLOOM_OUTCOME_PASS)
		return PLOOM_EXIT_OK;
	if (kind == PLOOM_OUTCOME_STEP_LIMIT)
		return PLOOM_EXIT_INCOMPLETE;
	if (kind == PLOOM_OUTCOME_DIVERGENCE)
		return PLOOM_EXIT_DIVERGENCE;
	return PLOOM_EXIT_FAILURE;
}

int cli_exit_code(const struct ploom_err *err)
{
	/* every kind, and no default: -Wswitch makes a kind added to err.h
	 * come here for its exit code */
	switch (err->kind) {
	case PLOOM_ERR_DIVERGENCE:
		return PLOOM_EXIT_DIVERGENCE;
	case PLOOM_ERR_INCOMPLETE:
		return PLOOM_EXIT_INCOMPLETE;
	case PLOOM_ERR_INTERNAL:
		return PLOOM_EXIT_INTERNAL;
	case PLOOM_ERR_NONE:
	case PLOOM_ERR_NOMEM:
	case PLOOM_ERR_INPUT:
	case PLOOM_ERR_WORKER:
	case PLOOM_ERR_SYSTEM:
	case PLOOM_ERR_INTERRUPTED:
		break;
	}
	/* an interruption ends in 128 + the signal all the same: cli_exit() */
	return PLOOM_EXIT_USAGE;
}

double cli_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cli_put_shell_word(FILE *f, const char *path)
{
	const char *c;

	if (*path && path[strspn(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					 "0123456789@%+=:,./-_")] == '\0') {
		fputs(path, f);
		return;
	}
	fputc('\'', f);
	for (c = path; *c;) {
		size_t n = strcspn(c, "'");
		char *part = strndup(c, n);

		/* without memory, the path as it is rather than a lost message */
		if (part)
			ploom_put_printable(f, part);
		else
			fwrite(c, 1, n, f);
		free(part);
		c += n;
		if (*c == '\'') {
			fputs("'\"'\"'", f);
			c++;
		}
	}
	fputc('\'', f);
}

void cli_put_next_step(const char *prefix, const char *path)
{
	if (getenv("PLOOM_NO_NEXT_STEP"))
		return;
	fprintf(stderr, "%s: Replay: ploom-replay ", prefix);
	cli_put_shell_word(stderr, path);
	fputs("  # read it with: ploom-show ", stderr);
	cli_put_shell_word(stderr, path);
	fputc('\n', stderr);
}

int cli_progress_due(double *last, int to_log)
{
	double now = cli_now_s();

	if (now - *last < (to_log ? CLI_LOG_PROGRESS_S : 1.0))
		return 0;
	*last = now;
	return 1;
}

/* The columns of the terminal on standard error; when stderr is a pipe
 * to a front end that passes the line on to a terminal, $COLUMNS (as the
 * front end saw them); else 80. */
static size_t stderr_columns(void)
{
	struct winsize ws;
	const char *env = getenv("COLUMNS");
	char *end;
	long n;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if (env && *env) {
		errno = 0;
		n = strtol(env, &end, 10);
		if (!errno && !*end && n >= 2 && n <= 10000)
			return (size_t)n;
	}
	return 80;
}

void cli_status_show(struct cli_status *st, const char *line)
{
	/* the last column stays free: some terminals wrap on writing it */
	size_t n = strlen(line), width = stderr_columns() - 1;

	if (n > width)
		n = width;
	/* carriage return and spaces, not escape codes: any terminal, even
	 * TERM=dumb, takes them */
	fprintf(stderr, "\r%.*s%*s", (int)n, line, st->shown > n ? (int)(st->shown - n) : 0, "");
	fflush(stderr);
	st->shown = n;
}

void cli_status_clear(struct cli_status *st)
{
	if (!st->shown)
		return;
	fprintf(stderr, "\r%*s\r", (int)st->shown, "");
	fflush(stderr);
	st->shown = 0;
}

/* ploom.check() names itself in PLOOM_CALLER_PID: if that process dies
 * (killed, so it cannot stop us), we get SIGTERM and stop our worker, as
 * on ^C.  Only then: a search started from a shell, e.g. under nohup, must
 * outlive the shell. */
static void exit_with_caller(void)
{
	const char *caller = getenv("PLOOM_CALLER_PID");

	if (!caller || atol(caller) != (long)getppid())
		return;
	(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != (pid_t)atol(caller))
		raise(SIGTERM);
}

/* root (ending in '/') joined with an import path of a trace: the root
 * itself for ".".  Malloc'd, NULL out of memory. */
static char *under_root(const char *root, const char *rel)
{
	char *out = NULL;

	if (asprintf(&out, "%s%s", root, strcmp(rel, ".") ? rel : "") < 0)
		return NULL;
	return out;
}

static int start_worker(struct ploom_worker **out, const char *python, const char *target,
			const char *hash_seed, const struct ploom_fingerprint *expect,
			const char *root, const struct ploom_config *config,
			const struct ploom_scenario *recorded, struct ploom_err *err)
{
	/* C does not convert char ** to const char *const * by itself */
	struct ploom_worker_opts opts = {
		.python = python,
		.target = target,
		.hash_seed = hash_seed,
		.expect_file = expect ? expect->path : NULL,
		.interrupted = &cli_interrupted,
		.patch = (const char *const *)config->patch,
		.npatch = config->npatch,
		.patch_project = config->patch_project,
		.expect_blob = expect ? expect->blob : NULL,
		.plain_points = (const char *const *)config->plain_points,
		.nplain_points = config->nplain_points,
		.plain_all_points = !ploom_config_watches_plain(config),
		.instrument = (const char *const *)config->instrument,
		.ninstrument = config->ninstrument,
		.instrument_scenario = config->instrument_scenario,
		.expect_root = root,
		.timeouts = config->timeouts,
	};
	/* a replay's: where the search imported from, in this tree */
	char *cwd = NULL, **paths = NULL;
	size_t i, n = 0;
	struct sigaction sa;
	int r = -1;

	/* no SA_RESTART: a signal must interrupt the wait for the worker */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	exit_with_caller();

	if (recorded && root) {
		paths = calloc(recorded->nimport_paths + 1, sizeof(*paths));
		if (!paths || (recorded->cwd && !(cwd = under_root(root, recorded->cwd)))) {
			ploom_err_oom(err);
			goto done;
		}
		for (n = 0; n < recorded->nimport_paths; n++)
			if (!(paths[n] = under_root(root, recorded->import_paths[n]))) {
				ploom_err_oom(err);
				goto done;
			}
		opts.search_cwd = cwd;
		opts.import_paths = (const char *const *)paths;
		opts.nimport_paths = n;
	}
	r = ploom_worker_start(out, &opts, err);
done:
	for (i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	free(cwd);
	return r;
}

int cli_worker_start(struct ploom_worker **out, const char *python, const char *target,
		     const char *hash_seed, const struct ploom_config *config,
		     struct ploom_err *err)
{
	return start_worker(out, python, target, hash_seed, NULL, NULL, config, NULL, err);
}

int cli_worker_start_replay(struct ploom_worker **out, const char *python,
			    struct ploom_trace *trace, struct ploom_err *err)
{
	char *root;
	int r;

	/* the trace's files as they are in this clone, which the checks
	 * then hold to the recorded blobs; nothing outside it runs */
	if (ploom_replay_place(trace, err) < 0 || ploom_replay_check_source(trace, err) < 0)
		return -1;
	root = ploom_replay_root(trace);
	if (!root)
		return ploom_err_oom(err);
	/* the recorded target, the file it must be and the tree its packages
	 * must be in: the worker alone tells a file target from a module one
	 * (python/ploom/_worker.py) */
	r = start_worker(out, python, trace->scenario.target, trace->hash_seed,
			 ploom_replay_scenario_fingerprint(trace), root, &trace->config,
			 &trace->scenario, err);
	free(root);
	return r;
}

int cli_worker_start_current(struct ploom_worker **out, const char *python,
			     struct ploom_trace *trace, char scenario_now[PLOOM_OID_HEXSZ + 1],
			     struct ploom_err *err)
{
	struct ploom_fingerprint expect = {0};
	struct ploom_buf changes = {0};
	char *root;
	int n;

	if (ploom_replay_place(trace, err) < 0)
		return -1;
	n = ploom_replay_source_changes(trace, &changes, scenario_now, err);
	if (n < 0)
		return -1;
	if (n)
		fprintf(stderr, "%s: the source differs from the trace's in %d file%s:\n", cli_prog,
			n, ploom_s(n));
	else
		fprintf(stderr, "%s: the source is the trace's\n", cli_prog);
	/* every line ends in '\n'; the paths come from the trace */
	for (char *line = changes.data, *nl; line && *line; line = nl + 1) {
		nl = strchr(line, '\n');
		*nl = '\0';
		fprintf(stderr, "%s:   ", cli_prog);
		ploom_put_printable(stderr, line);
		fputc('\n', stderr);
	}
	ploom_buf_release(&changes);
	/* the worker holds the file to the blob hashed here: an edit from
	 * now on stops the replay instead of running unseen code */
	expect.path = trace->scenario.file;
	expect.blob = scenario_now;
	root = ploom_replay_root(trace);
	if (!root)
		return ploom_err_oom(err);
	n = start_worker(out, python, trace->scenario.target, trace->hash_seed, &expect, root,
			 &trace->config, &trace->scenario, err);
	free(root);
	return n;
}

int cli_worker_stop(struct ploom_worker **worker, struct ploom_err *err)
{
	int r = ploom_worker_stop(*worker, err);

	*worker = NULL;
	return r;
}

int cli_fail(const struct ploom_err *err, const char *prefix)
{
	/* the message may quote a trace: no control character reaches the
	 * terminal */
	if (!cli_interrupted) {
		fprintf(stderr, "%s: %s%s", cli_prog,
			err->kind == PLOOM_ERR_INTERNAL ? "internal error: " : "", prefix);
		ploom_put_printable(stderr, err->msg);
		fputs(err->kind == PLOOM_ERR_INTERNAL ? "; please report it\n" : "\n", stderr);
	}
	return cli_exit_code(err);
}

int cli_exit(int ret, const char *what, enum cli_epipe epipe)
{
	if (cli_interrupted) {
		/* nothing more on stdout; the exit status tells the signal */
		return 128 + cli_interrupted;
	}
	errno = 0;
	if (fclose(stdout) == EOF && ret != PLOOM_EXIT_USAGE &&
	    (epipe != CLI_EPIPE_QUIET || errno != EPIPE)) {
		fprintf(stderr, "%s: cannot write %s: %s\n", cli_prog, what, strerror(errno));
		return PLOOM_EXIT_USAGE;
	}
	return ret;
}

void cli_minimize_stopped(const struct ploom_minimize_result *res)
{
	const char *why;

	if (!res->stopped_by)
		return;
	if (!strcmp(res->stopped_by, "time"))
		why = "its time ran out (--minimize-seconds)";
	else if (!strcmp(res->stopped_by, "max-schedules"))
		why = "its budget of schedules ran out";
	else
		why = "its work lists reached their memory limit";
	fprintf(stderr,
		"%s: the minimizer stopped early after %ld schedule%s: %s; the trace written "
		"has the fewest preemptions found (%d of %d), not proven the fewest\n",
		cli_prog, res->schedules, ploom_s(res->schedules), why, res->to, res->from);
}
