/* ploom-run-one - run one schedule of a scenario and print its trace.
 *
 * The CHOICEs are the tasks to pick at the first branch points; the
 * default choice applies after them.  man/ploom-run-one.1 is the
 * reference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "err.h"
#include "trace.h"
#include "worker.h"

#define PROG "ploom-run-one"

const char cli_prog[] = PROG;
const char *const cli_usage =
	"usage: ploom-run-one [--python=PATH] [--hash-seed=N] [-s N] [--schedule-timeout=SECONDS]\n"
	"                     [--patch=MODULE]... [--instrument=MODULE]... [--timeouts=MODEL]\n"
	"                     TARGET [CHOICE...]\n"
	"       ploom-run-one -h | --help | -V | --version\n"
	"\n"
	"        --python=PATH            the worker's interpreter\n"
	"        --hash-seed=N            PYTHONHASHSEED of the schedule (default 0)\n"
	"    -s, --max-steps=N            steps of the schedule (0-200000, default 10000, 0: the\n"
	"                                 most, 200000)\n"
	"        --schedule-timeout=SECONDS  wall clock of the schedule (default 10, 0: none)\n"
	"        --patch=MODULE           MODULE uses ploom's threading and queue (repeatable)\n"
	"        --instrument=MODULE      make MODULE's plain state (attributes, subscripts,\n"
	"                                 globals) scheduling points (repeatable); only the\n"
	"                                 modules named are instrumented\n"
	"        --timeouts=MODEL         the time model: idle (default) or any\n"
	"\n"
	"TARGET is module:function or path/to/file.py:function; each CHOICE is the task\n"
	"to pick at the next branch point.\n";

static const struct option options[] = {
	CLI_OPTION_MAX_STEPS,
	CLI_OPTION_SCHEDULE_TIMEOUT,
	CLI_OPTION_PYTHON,
	CLI_OPTION_HASH_SEED,
	CLI_OPTION_PATCH,
	CLI_OPTION_INSTRUMENT,
	CLI_OPTION_TIMEOUTS,
	CLI_OPTIONS_END,
};

/* Runs the schedule of choices[0..nchoices) of target in a worker of
 * its own, left in *worker with its run in *run.  A run that meets plain
 * state two tasks share where no point is made asks for those sites as
 * points (outcome refine): the schedule runs again with them, added to
 * opts->config, as a search starts again, and its trace records them.
 * Each restart adds a site, so this ends.  Returns 0, or -1 with err
 * filled. */
static int run_schedule(struct ploom_worker **worker, struct ploom_run *run, const char *python,
			const char *target, struct cli_opts *opts, const int *choices,
			size_t nchoices, long timeout_ms, struct ploom_err *err)
{
	for (;;) {
		int added;

		if (cli_worker_start(worker, python, target, opts->hash_seed, &opts->config,
				     err) < 0)
			return -1;
		if (ploom_worker_run(*worker, run, choices, nchoices, opts->config.max_steps,
				     timeout_ms, err) < 0)
			return -1;
		if (run->outcome.kind != PLOOM_OUTCOME_REFINE || !run->outcome.sites)
			return 0;
		added = ploom_config_add_plain_points(&opts->config, run->outcome.sites,
						      strlen(run->outcome.sites), err);
		if (added < 0)
			return -1;
		if (added == 0) {
			ploom_err_set(err, PLOOM_ERR_INTERNAL,
				      "the worker asked again for points it has: %s",
				      run->outcome.sites);
			return -1;
		}
		if (cli_worker_stop(worker, err) < 0)
			return -1;
		ploom_run_release(run);
		memset(run, 0, sizeof(*run));
	}
}

int main(int argc, char **argv)
{
	struct ploom_worker *worker = NULL;
	struct ploom_trace *trace = NULL;
	struct ploom_run run = {0};
	struct ploom_err err = {0, ""};
	struct cli_opts opts = CLI_OPTS_INIT;
	char *python = NULL;
	int *choices = NULL;
	size_t nchoices = 0;
	const char *target;
	long v, timeout_ms = 0;
	int c, i, ret = PLOOM_EXIT_USAGE;

	while ((c = cli_getopt(argc, argv, ":s:hV", options)) != -1) {
		/* every option is a shared one */
		if (!cli_common_option(&ret, &opts, c, argv))
			goto done;
	}
	if (optind >= argc) {
		ret = cli_usage_error("missing TARGET", NULL);
		goto done;
	}
	/* one schedule patches and instruments what a search would */
	ret = cli_module_defaults(&opts);
	if (ret)
		goto done;
	ret = PLOOM_EXIT_USAGE;
	target = argv[optind++];
	choices = calloc((size_t)(argc - optind) + 1, sizeof(*choices));
	if (!choices) {
		fprintf(stderr, PROG ": out of memory\n");
		goto done;
	}
	for (i = optind; i < argc; i++) {
		if (ploom_args_long(&v, argv[i], 0, PLOOM_MAX_TASK_ID) < 0) {
			ret = cli_usage_error("invalid CHOICE", argv[i]);
			goto done;
		}
		choices[nchoices++] = (int)v;
	}
	python = cli_python(opts.python);
	if (!python)
		goto done;

	/* checked with the option */
	(void)ploom_timeout_ms(&timeout_ms, opts.config.schedule_timeout_s);
	if (run_schedule(&worker, &run, python, target, &opts, choices, nchoices, timeout_ms,
			 &err) < 0)
		goto fail;
	if (ploom_worker_trace(&trace, worker, opts.hash_seed, &opts.config, &run, &err) < 0 ||
	    cli_stamp_trace(trace, &err) < 0)
		goto fail;
	if (cli_worker_stop(&worker, &err) < 0)
		goto fail;
	if (cli_write_trace(NULL, trace, CLI_EPIPE_FAILS) < 0) {
		ret = PLOOM_EXIT_USAGE;
		goto done;
	}
	ret = cli_outcome_exit(trace->run.outcome.kind);
	goto done;

fail:
	ret = cli_fail(&err, "");
done:
	ploom_worker_free(worker);
	ploom_run_release(&run);
	ploom_trace_free(trace);
	free(choices);
	free(python);
	cli_opts_release(&opts);
	return cli_exit(ret, "the trace", CLI_EPIPE_FAILS);
}
