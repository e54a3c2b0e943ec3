/* ploom-run-one - run one schedule of a scenario and print its trace.
 *
 * The CHOICEs are the tasks to pick at the first branch points; the
 * default choice applies after them.  man/ploom-run-one.1 is the
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
#include "trace.h"
#include "version.h"
#include "worker.h"

#define PROG "ploom-run-one"

static const char usage_text[] =
	"usage: ploom-run-one [--python=PATH] [--hash-seed=N] [-s N] [--schedule-timeout=SECONDS]\n"
	"                     TARGET [CHOICE...]\n"
	"       ploom-run-one -h | --help | -V | --version\n"
	"\n"
	"        --python=PATH            the worker's interpreter\n"
	"        --hash-seed=N            PYTHONHASHSEED of the schedule (default 0)\n"
	"    -s, --max-steps=N            steps of the schedule (default 10000, 0: no bound)\n"
	"        --schedule-timeout=SECONDS  wall clock of the schedule (default 10, 0: none)\n"
	"\n"
	"TARGET is module:function or path/to/file.py:function; each CHOICE is the task\n"
	"to pick at the next branch point.\n";

enum { OPT_SCHEDULE_TIMEOUT = 256, OPT_PYTHON, OPT_HASH_SEED };

static const struct option options[] = {
	{"max-steps", required_argument, NULL, 's'},
	{"schedule-timeout", required_argument, NULL, OPT_SCHEDULE_TIMEOUT},
	{"python", required_argument, NULL, OPT_PYTHON},
	{"hash-seed", required_argument, NULL, OPT_HASH_SEED},
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

/* "ploom-run-one: WHAT 'ARG'" (or just WHAT), then the usage. */
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
	struct ploom_trace *trace = NULL;
	struct ploom_run run = {0};
	struct ploom_err err = {0, ""};
	struct ploom_config config = {-1, (char *)"none", 10000, 10.0};
	struct ploom_worker_opts wopts = {0};
	struct sigaction sa;
	char *python = NULL;
	int *choices = NULL;
	size_t nchoices = 0;
	const char *target;
	char seed[11] = "0";
	long v;
	int c, i, ret = PLOOM_EXIT_USAGE;

	/* getopt's own messages would name the path we were run by */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:hV", options, NULL)) != -1) {
		switch (c) {
		case 's':
			if (ploom_args_long(&config.max_steps, optarg, 0, 1000000000L) < 0) {
				ret = usage_error("invalid --max-steps", optarg);
				goto done;
			}
			break;
		case OPT_SCHEDULE_TIMEOUT:
			if (ploom_args_seconds(&config.schedule_timeout_s, optarg) < 0) {
				ret = usage_error("invalid --schedule-timeout", optarg);
				goto done;
			}
			break;
		case OPT_PYTHON:
			free(python);
			python = strdup(optarg);
			break;
		case OPT_HASH_SEED:
			if (ploom_args_seed(seed, optarg) < 0) {
				ret = usage_error("invalid --hash-seed", optarg);
				goto done;
			}
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
	if (optind >= argc) {
		ret = usage_error("missing TARGET", NULL);
		goto done;
	}
	target = argv[optind++];
	choices = calloc((size_t)(argc - optind) + 1, sizeof(*choices));
	if (!choices) {
		fprintf(stderr, PROG ": out of memory\n");
		goto done;
	}
	for (i = optind; i < argc; i++) {
		if (ploom_args_long(&v, argv[i], 0, 1000000) < 0) {
			ret = usage_error("invalid CHOICE", argv[i]);
			goto done;
		}
		choices[nchoices++] = (int)v;
	}
	if (!python)
		python = ploom_worker_default_python();
	if (!python) {
		fprintf(stderr, PROG ": out of memory\n");
		goto done;
	}

	/* no SA_RESTART: a signal must interrupt the wait for the worker */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	wopts.python = python;
	wopts.target = target;
	wopts.hash_seed = seed;
	wopts.interrupted = &interrupted;
	if (ploom_worker_start(&worker, &wopts, &err) < 0)
		goto fail;
	worker_pid = ploom_worker_pid(worker);
	if (ploom_worker_run(worker, &run, choices, nchoices, config.max_steps,
			     (long)(config.schedule_timeout_s * 1000.0 + 0.5), &err) < 0)
		goto fail;
	if (ploom_worker_trace(&trace, worker, seed, &config, &run, &err) < 0 ||
	    ploom_trace_fingerprint_source(trace, &err) < 0 || ploom_trace_set_id(trace, &err) < 0)
		goto fail;
	if (ploom_worker_stop(worker, &err) < 0) {
		worker = NULL;
		goto fail;
	}
	worker = NULL;
	worker_pid = -1;
	if (ploom_trace_write(stdout, trace, &err) < 0) {
		fprintf(stderr, PROG ": cannot write the trace: %s\n", err.msg);
		ret = PLOOM_EXIT_USAGE;
		goto done;
	}
	ret = exit_code_of(trace->run.outcome.kind);
	goto done;

fail:
	if (!interrupted) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		ret = err.code ? err.code : PLOOM_EXIT_USAGE;
	}
done:
	ploom_worker_free(worker);
	worker_pid = -1;
	ploom_run_release(&run);
	ploom_trace_free(trace);
	free(choices);
	free(python);
	if (interrupted)
		return 128 + interrupted;
	if (fclose(stdout) == EOF && ret != PLOOM_EXIT_USAGE) {
		fprintf(stderr, PROG ": cannot write the trace: %s\n", strerror(errno));
		ret = PLOOM_EXIT_USAGE;
	}
	return ret;
}
