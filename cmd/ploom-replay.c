/* ploom-replay - run a saved schedule again, exactly; never search.
 *
 * Checks the scenario's source, the Python minor version, every step and
 * the outcome against the trace (lib/replay), prints the new run's trace
 * when all hold and exits as the outcome says.  man/ploom-replay.1 is the
 * reference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "err.h"
#include "render.h"
#include "replay.h"
#include "trace.h"
#include "worker.h"

#define PROG "ploom-replay"

/* What a divergence message starts with, for ploom.exploration to find. */
#define DIVERGENCE "ReplayDivergenceError: "

const char cli_prog[] = PROG;
const char cli_usage[] =
	"usage: ploom-replay [--python=PATH] [--schedule-timeout=SECONDS] [-q] [TRACE]\n"
	"       ploom-replay -h | --help | -V | --version\n"
	"\n"
	"        --python=PATH            the worker's interpreter\n"
	"        --schedule-timeout=SECONDS  wall clock of the schedule, when shorter than the\n"
	"                                 trace's (0: the trace's)\n"
	"    -q, --quiet                  no \"reproduced\" line\n"
	"\n"
	"TRACE is a trace, or - (the default) for standard input.\n";

static const struct option options[] = {
	CLI_OPTION_SCHEDULE_TIMEOUT,
	CLI_OPTION_PYTHON,
	CLI_OPTION_QUIET,
	CLI_OPTIONS_END,
};

int main(int argc, char **argv)
{
	struct ploom_worker *worker = NULL;
	struct ploom_trace *trace = NULL, *again = NULL;
	struct ploom_err err = {0, ""};
	struct cli_opts opts = CLI_OPTS_INIT;
	char *python = NULL;
	const char *path;
	int c, ret = PLOOM_EXIT_USAGE;

	/* no --schedule-timeout: the trace's */
	opts.config.schedule_timeout_s = -1;

	while ((c = cli_getopt(argc, argv, ":qhV", options)) != -1) {
		/* every option is a shared one */
		if (!cli_common_option(&ret, &opts, c, argv))
			goto done;
	}
	if (cli_trace_operand(&path, argc, argv) < 0)
		goto done;
	python = cli_python(opts.python);
	if (!python || cli_read_trace(&trace, path) < 0)
		goto done;

	if (cli_worker_start_replay(&worker, python, trace, &err) < 0)
		goto fail;
	if (ploom_replay_run(&again, trace, worker, opts.config.schedule_timeout_s, &err) < 0)
		goto fail;
	if (cli_worker_stop(&worker, &err) < 0)
		goto fail;

	if (cli_write_trace(NULL, again, CLI_EPIPE_QUIET) < 0) {
		ret = PLOOM_EXIT_USAGE;
		goto done;
	}
	if (!opts.quiet) {
		fputs(PROG ": reproduced: ", stderr);
		ploom_put_printable(stderr, again->run.outcome.summary);
		fputc('\n', stderr);
	}
	ret = cli_outcome_exit(again->run.outcome.kind);
	goto done;

fail:
	ret = cli_fail(&err, err.kind == PLOOM_ERR_DIVERGENCE ? DIVERGENCE : "");
done:
	ploom_worker_free(worker);
	ploom_trace_free(trace);
	ploom_trace_free(again);
	free(python);
	return cli_exit(ret, "the trace", CLI_EPIPE_QUIET);
}
