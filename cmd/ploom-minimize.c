/* ploom-minimize - find the same failure with fewer preemptions.
 *
 * Reads a failing trace, searches its scenario with preemption bounds 0,
 * 1, ... below the trace's preemptions for a schedule that fails the same
 * way, and writes the trace of the first one found (or the original).
 * lib/minimize does the search; man/ploom-minimize.1 is the reference. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "err.h"
#include "json.h"
#include "minimize.h"
#include "replay.h"
#include "trace.h"
#include "version.h"
#include "worker.h"

#define PROG "ploom-minimize"

static const char usage_text[] =
	"usage: ploom-minimize [-o FILE] [-n N] [--python=PATH] [-q] [TRACE]\n"
	"       ploom-minimize -h | --help | -V | --version\n"
	"\n"
	"    -o, --output=FILE            write the trace to FILE (default: standard output)\n"
	"    -n, --max-schedules=N        give up after N schedules (default 100000)\n"
	"        --python=PATH            the worker's interpreter\n"
	"    -q, --quiet                  no progress or result lines\n"
	"\n"
	"TRACE is a failing trace, or - (the default) for standard input.\n";

enum { OPT_PYTHON = 256 };

static const struct option options[] = {
	{"output", required_argument, NULL, 'o'},
	{"max-schedules", required_argument, NULL, 'n'},
	{"python", required_argument, NULL, OPT_PYTHON},
	{"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

/* Set by the SIGINT/SIGTERM handler: the signal, and the worker to kill
 * at once so that no schedule outlives us. */
static volatile sig_atomic_t interrupted;
static volatile pid_t worker_pid = -1;

static void on_signal(int sig)
{
	interrupted = sig;
	if (worker_pid > 0)
		kill(worker_pid, SIGKILL);
}

/* "ploom-minimize: WHAT 'ARG'" (or just WHAT), then the usage. */
static int usage_error(const char *what, const char *arg)
{
	if (arg)
		fprintf(stderr, PROG ": %s '%s'\n", what, arg);
	else
		fprintf(stderr, PROG ": %s\n", what);
	fputs(usage_text, stderr);
	return PLOOM_EXIT_USAGE;
}

/* The option getopt stopped at: "-x" for a short one (optopt), else the
 * long one as written. */
static const char *option_name(char **argv, int opt)
{
	static char shortopt[3] = "-?";

	if (!opt)
		return argv[optind - 1];
	shortopt[1] = (char)opt;
	return shortopt;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A progress line at most once a second. */
static void progress(void *ctx, long schedules, int bound)
{
	double *last = ctx;

	if (now_s() - *last < 1.0)
		return;
	fprintf(stderr, PROG ": %ld schedules, searching at most %d preemption%s\n", schedules,
		bound, bound == 1 ? "" : "s");
	*last = now_s();
}

int main(int argc, char **argv)
{
	struct ploom_worker *worker = NULL;
	struct ploom_trace *trace = NULL, *min = NULL;
	struct ploom_err err = {0, ""};
	struct ploom_worker_opts wopts = {0};
	struct ploom_minimize_opts mopts = {0};
	struct ploom_minimize_result res = {0};
	struct sigaction sa;
	char *python = NULL, *target = NULL;
	const char *path = "-", *name, *output = NULL;
	double last_progress;
	int quiet = 0, c, r, ret = PLOOM_EXIT_USAGE;

	/* getopt's own messages would name the path we were run by */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:n:qhV", options, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg) {
				ret = usage_error("empty --output", NULL);
				goto done;
			}
			output = optarg;
			break;
		case 'n':
			if (ploom_args_long(&mopts.max_schedules, optarg, 1, 1000000000000L) < 0) {
				ret = usage_error("invalid --max-schedules", optarg);
				goto done;
			}
			break;
		case OPT_PYTHON:
			free(python);
			python = strdup(optarg);
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			ret = PLOOM_EXIT_OK;
			goto done;
		case 'V':
			printf(PROG " (ploom) " PLOOM_VERSION "\n");
			ret = PLOOM_EXIT_OK;
			goto done;
		case ':':
			ret = usage_error("missing value for option", option_name(argv, optopt));
			goto done;
		default:
			ret = usage_error("unknown option", option_name(argv, optopt));
			goto done;
		}
	}
	if (optind < argc - 1) {
		ret = usage_error("too many arguments", NULL);
		goto done;
	}
	if (optind == argc - 1)
		path = argv[optind];
	name = strcmp(path, "-") ? path : "<stdin>";
	if (!python)
		python = ploom_worker_default_python();
	if (!python) {
		fprintf(stderr, PROG ": out of memory\n");
		goto done;
	}

	if (ploom_trace_read_file(&trace, path, &err) < 0) {
		fprintf(stderr, PROG ": cannot read trace '%s': %s\n", name, err.msg);
		goto done;
	}
	if (!ploom_outcome_is_failure(trace->run.outcome.kind)) {
		fprintf(stderr, PROG ": trace '%s' does not record a failure\n", name);
		goto done;
	}
	if (ploom_replay_check_source(trace, &err) < 0)
		goto fail;
	target = ploom_replay_target(trace);
	if (!target) {
		fprintf(stderr, PROG ": out of memory\n");
		goto done;
	}

	/* no SA_RESTART: a signal must interrupt the wait for the worker */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* a dead worker must be an error from write(), not our death */
	signal(SIGPIPE, SIG_IGN);

	wopts.python = python;
	wopts.target = target;
	wopts.hash_seed = trace->hash_seed;
	wopts.interrupted = &interrupted;
	if (ploom_worker_start(&worker, &wopts, &err) < 0)
		goto fail;
	worker_pid = ploom_worker_pid(worker);
	if (ploom_replay_check_loaded(trace, ploom_worker_hello(worker), &err) < 0)
		goto fail;
	last_progress = now_s();
	if (!quiet) {
		mopts.progress = progress;
		mopts.progress_ctx = &last_progress;
	}
	if (ploom_minimize_trace(&min, &res, trace, worker, &mopts, &err) < 0)
		goto fail;
	if (ploom_worker_stop(worker, &err) < 0) {
		worker = NULL;
		goto fail;
	}
	worker = NULL;
	worker_pid = -1;

	errno = 0;
	if (output)
		r = ploom_trace_write_file(output, min, &err);
	else
		r = ploom_trace_write(stdout, min, &err);
	if (r < 0) {
		/* EPIPE: the reader of our output has gone; a filter ends
		 * quietly then */
		if (output)
			fprintf(stderr, PROG ": %s\n", err.msg);
		else if (errno != EPIPE)
			fprintf(stderr, PROG ": cannot write the trace: %s\n", err.msg);
		ret = PLOOM_EXIT_USAGE;
		goto done;
	}
	if (res.exhausted)
		fprintf(stderr,
			PROG ": gave up after %ld schedules (--max-schedules); the trace written "
			"has the fewest preemptions found (%d)\n",
			res.schedules, res.to);
	else if (!quiet)
		fprintf(stderr, PROG ": %d -> %d preemptions after %ld schedules\n", res.from,
			res.to, res.schedules);
	ret = PLOOM_EXIT_OK;
	goto done;

fail:
	if (!interrupted) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		ret = err.code ? err.code : PLOOM_EXIT_USAGE;
	}
done:
	/* kills and reaps the worker if it still runs */
	ploom_worker_free(worker);
	worker_pid = -1;
	ploom_trace_free(trace);
	ploom_trace_free(min);
	free(target);
	free(python);
	if (interrupted)
		return 128 + interrupted;
	if (fclose(stdout) == EOF && ret != PLOOM_EXIT_USAGE && errno != EPIPE) {
		fprintf(stderr, PROG ": cannot write the trace: %s\n", strerror(errno));
		ret = PLOOM_EXIT_USAGE;
	}
	return ret;
}
