/* ploom-minimize - find the same failure with fewer preemptions.
 *
 * Reads a failing trace, searches its scenario with preemption bounds 0,
 * 1, ... below the trace's preemptions for a schedule that fails the same
 * way, and writes the trace of the first one found (or the original).
 * lib/minimize does the search; man/ploom-minimize.1 is the reference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "err.h"
#include "minimize.h"
#include "plural.h"
#include "replay.h"
#include "trace.h"
#include "worker.h"

#define PROG "ploom-minimize"

const char cli_prog[] = PROG;
const char *const cli_usage =
	"usage: ploom-minimize [-o FILE] [-n N] [--minimize-seconds=SECONDS] [--python=PATH]\n"
	"                      [--schedule-timeout=SECONDS] [-q] [TRACE]\n"
	"       ploom-minimize -h | --help | -V | --version\n"
	"\n"
	"    -o, --output=FILE            write the trace to FILE (default: standard output)\n"
	"    -n, --max-schedules=N        give up after N schedules (default 100000)\n"
	"        --minimize-seconds=SECONDS  give up after SECONDS (default 60; 0: no limit)\n"
	"        --python=PATH            the worker's interpreter\n"
	"        --schedule-timeout=SECONDS  wall clock of each schedule, when shorter than\n"
	"                                 the trace's (0: the trace's)\n"
	"    -q, --quiet                  no progress or result lines\n"
	"\n"
	"TRACE is a failing trace, or - (the default) for standard input.\n";

static const struct option options[] = {
	{"output", required_argument, NULL, 'o'},
	{"max-schedules", required_argument, NULL, 'n'},
	CLI_OPTION_SCHEDULE_TIMEOUT,
	CLI_OPTION_MINIMIZE_SECONDS,
	CLI_OPTION_PYTHON,
	CLI_OPTION_QUIET,
	CLI_OPTIONS_END,
};

/* A progress line, as often as cli_progress_due() says: each line stays,
 * on a terminal as in a log. */
static void progress(void *ctx, long schedules, int bound)
{
	if (cli_progress_due(ctx, !isatty(STDERR_FILENO)))
		fprintf(stderr, PROG ": %ld schedule%s, searching at most %d preemption%s\n",
			schedules, ploom_s(schedules), bound, ploom_s(bound));
}

/* The options of argv into opts, mopts (--max-schedules) and *output
 * (--output).  Returns 0, or -1 with *ret the exit status (a usage error,
 * or --help or --version done). */
static int parse_options(int *ret, struct cli_opts *opts, struct ploom_minimize_opts *mopts,
			 const char **output, int argc, char **argv)
{
	int c;

	while ((c = cli_getopt(argc, argv, ":o:n:qhV", options)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg) {
				*ret = cli_usage_error("empty --output", NULL);
				return -1;
			}
			*output = optarg;
			break;
		case 'n':
			if (ploom_args_long(&mopts->max_schedules, optarg, 1, 1000000000000L) < 0) {
				*ret = cli_usage_error("invalid --max-schedules", optarg);
				return -1;
			}
			break;
		default:
			if (!cli_common_option(ret, opts, c, argv))
				return -1;
			break;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ploom_worker *worker = NULL;
	struct ploom_trace *trace = NULL, *min = NULL;
	struct ploom_err err = {0, ""};
	struct ploom_minimize_opts mopts = {0};
	struct ploom_minimize_result res = {0};
	struct cli_opts opts = CLI_OPTS_INIT;
	char *python = NULL;
	const char *path, *output = NULL;
	double last_progress;
	int ret = PLOOM_EXIT_USAGE;

	/* no --schedule-timeout: the trace's */
	opts.config.schedule_timeout_s = 0;

	if (parse_options(&ret, &opts, &mopts, &output, argc, argv) < 0 ||
	    cli_trace_operand(&path, argc, argv) < 0)
		goto done;
	python = cli_python(opts.python);
	if (!python || cli_read_trace(&trace, path) < 0)
		goto done;
	if (!ploom_outcome_is_failure(trace->run.outcome.kind)) {
		fprintf(stderr, PROG ": trace '%s' does not record a failure\n",
			cli_trace_name(path));
		goto done;
	}

	if (cli_worker_start_replay(&worker, python, trace, &err) < 0)
		goto fail;
	if (ploom_replay_check_loaded(trace, ploom_worker_hello(worker), &err) < 0)
		goto fail;
	/* the trace comes from a file: its failure may no longer happen */
	mopts.reproduce_first = 1;
	last_progress = cli_now_s();
	mopts.schedule_timeout_s = opts.config.schedule_timeout_s;
	mopts.max_seconds = opts.minimize_seconds;
	if (!opts.quiet) {
		mopts.progress = progress;
		mopts.progress_ctx = &last_progress;
	}
	if (ploom_minimize_trace(&min, &res, trace, worker, &mopts, &err) < 0)
		goto fail;
	if (cli_worker_stop(&worker, &err) < 0)
		goto fail;

	if (cli_write_trace(output, min, CLI_EPIPE_QUIET) < 0) {
		ret = PLOOM_EXIT_USAGE;
		goto done;
	}
	if (res.stopped_by)
		cli_minimize_stopped(&res);
	else if (!opts.quiet)
		fprintf(stderr, PROG ": %d -> %d preemptions after %ld schedule%s\n", res.from,
			res.to, res.schedules, ploom_s(res.schedules));
	ret = PLOOM_EXIT_OK;
	goto done;

fail:
	ret = cli_fail(&err, "");
done:
	ploom_worker_free(worker);
	ploom_trace_free(trace);
	ploom_trace_free(min);
	free(python);
	return cli_exit(ret, "the trace", CLI_EPIPE_QUIET);
}
