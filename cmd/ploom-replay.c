/* ploom-replay - run a saved schedule again, exactly; never search.
 *
 * Checks the scenario's source, the Python minor version, every step and
 * the outcome against the trace (lib/replay), prints the new run's trace
 * when all hold and exits as the outcome says.  With --on-current-source
 * it runs the recorded order of tasks on the edited source instead, and
 * tells whether it still fails.  man/ploom-replay.1 is the reference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "err.h"
#include "plural.h"
#include "format/render.h"
#include "replay.h"
#include "trace.h"
#include "worker.h"

#define PROG "ploom-replay"

/* What a divergence message starts with, for ploom.exploration to find. */
#define DIVERGENCE "ReplayDivergenceError: "

/* How replay.h's divergence of an edited source starts, and what it says
 * of the file (another file loaded, or a target that names another file,
 * is no edit that a replay on the current source would take). */
#define SOURCE_CHANGED "the scenario's source changed: "
#define EDITED " (recorded blob "

const char cli_prog[] = PROG;
const char *const cli_usage =
	"usage: ploom-replay [--on-current-source] [--python=PATH] [--schedule-timeout=SECONDS]\n"
	"                    [--timeouts=MODEL] [-q] [TRACE]\n"
	"       ploom-replay -h | --help | -V | --version\n"
	"\n"
	"        --on-current-source      run the recorded order of tasks on the source as it\n"
	"                                 is now, edited or not (a fix, say): exit 1 if it\n"
	"                                 still fails, 0 if it passes\n"
	"        --python=PATH            the worker's interpreter\n"
	"        --schedule-timeout=SECONDS  wall clock of the schedule, when shorter than the\n"
	"                                 trace's (0: the trace's)\n"
	"        --timeouts=MODEL         the time model the replay is for (idle or any): a\n"
	"                                 trace recorded under the other is refused (exit 2)\n"
	"    -q, --quiet                  no \"reproduced\" line\n"
	"\n"
	"TRACE is a trace, or - (the default) for standard input.\n";

enum { OPT_ON_CURRENT_SOURCE = CLI_OPT_OWN };

static const struct option options[] = {
	{"on-current-source", no_argument, NULL, OPT_ON_CURRENT_SOURCE},
	CLI_OPTION_SCHEDULE_TIMEOUT,
	CLI_OPTION_PYTHON,
	CLI_OPTION_TIMEOUTS,
	CLI_OPTION_QUIET,
	CLI_OPTIONS_END,
};

/* The recorded order of tasks on the source as it is now (replay.h):
 * prints the run's trace, stamped with the current source, and one line
 * that says how it went; returns the exit status. */
static int on_current_source(struct ploom_trace *trace, const char *python,
			     const struct cli_opts *opts)
{
	struct ploom_worker *worker = NULL;
	struct ploom_trace *again = NULL;
	struct ploom_err err = {0, ""};
	const struct ploom_fingerprint *f;
	char blob[PLOOM_OID_HEXSZ + 1] = "";
	int departures = 0, ret;

	if (cli_worker_start_current(&worker, python, trace, blob, &err) < 0 ||
	    ploom_replay_follow(&again, trace, worker, opts->config.schedule_timeout_s,
				&departures, &err) < 0 ||
	    cli_worker_stop(&worker, &err) < 0 || cli_stamp_trace(again, &err) < 0)
		goto fail;
	/* the worker ran the blob hashed before it started: a file that
	 * changed since is not the one the new trace would name */
	f = ploom_replay_scenario_fingerprint(again);
	if (!f || strcmp(f->blob, blob)) {
		ploom_err_set(&err, PLOOM_ERR_DIVERGENCE,
			      "the scenario's source changed during the replay: '%s'",
			      trace->scenario.file);
		goto fail;
	}
	if (cli_write_trace(NULL, again, CLI_EPIPE_QUIET) < 0) {
		ret = PLOOM_EXIT_USAGE;
		goto done;
	}
	ret = cli_outcome_exit(again->run.outcome.kind);
	if (!opts->quiet) {
		if (ret == PLOOM_EXIT_OK) {
			fputs(PROG ": the recorded schedule passes on the current source", stderr);
		} else {
			fputs(PROG ": ", stderr);
			ploom_put_printable(stderr, again->run.outcome.summary);
			fputs(ploom_replay_same_outcome(&trace->run.outcome, &again->run.outcome)
				      ? " (the recorded failure)"
				      : " (the trace recorded another outcome)",
			      stderr);
			fputs(" on the current source", stderr);
		}
		fprintf(stderr, "; %d departure%s\n", departures, ploom_s(departures));
	}
	goto done;
fail:
	ret = cli_fail(&err, err.kind == PLOOM_ERR_DIVERGENCE ? DIVERGENCE : "");
done:
	ploom_worker_free(worker);
	ploom_trace_free(again);
	return ret;
}

int main(int argc, char **argv)
{
	struct ploom_worker *worker = NULL;
	struct ploom_trace *trace = NULL, *again = NULL;
	struct ploom_err err = {0, ""};
	struct cli_opts opts = CLI_OPTS_INIT;
	char *python = NULL;
	const char *path;
	int c, ret = PLOOM_EXIT_USAGE, current = 0;

	/* no --schedule-timeout: the trace's */
	opts.config.schedule_timeout_s = -1;

	while ((c = cli_getopt(argc, argv, ":qhV", options)) != -1) {
		if (c == OPT_ON_CURRENT_SOURCE)
			current = 1;
		else if (!cli_common_option(&ret, &opts, c, argv))
			goto done;
	}
	if (cli_trace_operand(&path, argc, argv) < 0)
		goto done;
	python = cli_python(opts.python);
	if (!python || cli_read_trace(&trace, path) < 0)
		goto done;
	/* a schedule means something else under the other model: a timed
	 * wait that timed out there may not be able to here */
	if (opts.timeouts_given && opts.config.timeouts != trace->config.timeouts) {
		fprintf(stderr,
			"%s: the trace was recorded under the time model %s (timeouts=\"%s\"), "
			"not %s: replay it with --timeouts=%s\n",
			PROG, ploom_timeouts_name(trace->config.timeouts),
			ploom_timeouts_name(trace->config.timeouts),
			ploom_timeouts_name(opts.config.timeouts),
			ploom_timeouts_name(trace->config.timeouts));
		ret = PLOOM_EXIT_USAGE;
		goto done;
	}

	if (current) {
		ret = on_current_source(trace, python, &opts);
		goto done;
	}
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
	/* an edit (a fix, say) is what a user most often meets here */
	if (err.kind == PLOOM_ERR_DIVERGENCE && !strncmp(err.msg, SOURCE_CHANGED, strlen(SOURCE_CHANGED)) &&
	    strstr(err.msg, EDITED) && !strstr(err.msg, "now unreadable") && !cli_interrupted)
		fputs(PROG ": to run the recorded order of tasks on the source as it is now, replay "
			   "with --on-current-source\n",
		      stderr);
done:
	ploom_worker_free(worker);
	ploom_trace_free(trace);
	ploom_trace_free(again);
	free(python);
	return cli_exit(ret, "the trace", CLI_EPIPE_QUIET);
}
