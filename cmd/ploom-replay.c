/* ploom-replay - run a saved schedule again, exactly; never search.
 *
 * Checks the scenario's source, the Python minor version, every step and
 * the outcome against the trace (lib/replay), prints the new run's trace
 * when all hold and exits as the outcome says.  man/ploom-replay.1 is the
 * reference. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "err.h"
#include "json.h"
#include "replay.h"
#include "trace.h"
#include "version.h"
#include "worker.h"

#define PROG "ploom-replay"

/* What a divergence message starts with, for ploom.exploration to find. */
#define DIVERGENCE "ReplayDivergenceError: "

static const char usage_text[] =
	"usage: ploom-replay [--python=PATH] [--schedule-timeout=SECONDS] [-q] [TRACE]\n"
	"       ploom-replay -h | --help | -V | --version\n"
	"\n"
	"        --python=PATH            the worker's interpreter\n"
	"        --schedule-timeout=SECONDS  wall clock of the schedule (default: the trace's)\n"
	"    -q, --quiet                  no \"reproduced\" line\n"
	"\n"
	"TRACE is a trace, or - (the default) for standard input.\n";

enum { OPT_SCHEDULE_TIMEOUT = 256, OPT_PYTHON };

static const struct option options[] = {
	{"schedule-timeout", required_argument, NULL, OPT_SCHEDULE_TIMEOUT},
	{"python", required_argument, NULL, OPT_PYTHON},
	{"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static volatile sig_atomic_t interrupted;
static volatile pid_t worker_pid = -1;

static void on_signal(int sig)
{
	interrupted = sig;
	if (worker_pid > 0)
		kill(worker_pid, SIGKILL);
}

/* "ploom-replay: WHAT 'ARG'" (or just WHAT), then the usage. */
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

static int exit_code_of(enum ploom_outcome_kind kind)
{
	if (kind == PLOOM_OUTCOME_PASS)
		return PLOOM_EXIT_OK;
	if (kind == PLOOM_OUTCOME_STEP_LIMIT)
		return PLOOM_EXIT_INCOMPLETE;
	if (kind == PLOOM_OUTCOME_DIVERGENCE)
		return PLOOM_EXIT_DIVERGENCE;
	return PLOOM_EXIT_FAILURE;
}

int main(int argc, char **argv)
{
	struct ploom_worker *worker = NULL;
	struct ploom_trace *trace = NULL, *again = NULL;
	struct ploom_err err = {0, ""};
	struct ploom_worker_opts wopts = {0};
	struct sigaction sa;
	char *python = NULL, *target = NULL;
	const char *path = "-", *name;
	double timeout_s = -1;
	int quiet = 0, c, ret = PLOOM_EXIT_USAGE;

	/* getopt's own messages would name the path we were run by */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":qhV", options, NULL)) != -1) {
		switch (c) {
		case OPT_SCHEDULE_TIMEOUT:
			if (ploom_args_seconds(&timeout_s, optarg) < 0) {
				ret = usage_error("invalid --schedule-timeout", optarg);
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
	if (ploom_replay_run(&again, trace, worker, timeout_s, &err) < 0)
		goto fail;
	if (ploom_worker_stop(worker, &err) < 0) {
		worker = NULL;
		goto fail;
	}
	worker = NULL;
	worker_pid = -1;

	errno = 0;
	if (ploom_trace_write(stdout, again, &err) < 0) {
		/* EPIPE: the reader of our output has gone; a filter ends
		 * quietly then */
		if (errno != EPIPE)
			fprintf(stderr, PROG ": cannot write the trace: %s\n", err.msg);
		ret = PLOOM_EXIT_USAGE;
		goto done;
	}
	if (!quiet)
		fprintf(stderr, PROG ": reproduced: %s\n", again->run.outcome.summary);
	ret = exit_code_of(again->run.outcome.kind);
	goto done;

fail:
	if (!interrupted) {
		fprintf(stderr, PROG ": %s%s\n", err.code == PLOOM_EXIT_DIVERGENCE ? DIVERGENCE : "",
			err.msg);
		ret = err.code ? err.code : PLOOM_EXIT_USAGE;
	}
done:
	/* kills and reaps the worker if it still runs */
	ploom_worker_free(worker);
	worker_pid = -1;
	ploom_trace_free(trace);
	ploom_trace_free(again);
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
