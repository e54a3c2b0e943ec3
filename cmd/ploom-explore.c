/* ploom-explore - search the schedules of a scenario depth first.
 *
 * Starts one worker, asks it for one schedule after another as lib/explore
 * directs, writes the first failing trace, minimizes it with the same
 * worker (lib/minimize), and prints the statistics as JSON on stdout.
 * man/ploom-explore.1 is the reference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "err.h"
#include "explore.h"
#include "json.h"
#include "minimize.h"
#include "trace.h"
#include "worker.h"

#define PROG "ploom-explore"

const char cli_prog[] = PROG;
const char cli_usage[] =
	"usage: ploom-explore [-p N] [-n N] [-t SECONDS] [-s N] [--schedule-timeout=SECONDS]\n"
	"                     [-k] [--reduction=none] [--python=PATH] [--hash-seed=N]\n"
	"                     [--trace-dir=DIR] [--no-minimize] [-q] TARGET\n"
	"       ploom-explore -h | --help | -V | --version\n"
	"\n"
	"    -p, --max-preemptions=N      only schedules with at most N preemptions\n"
	"    -n, --max-schedules=N        stop after N schedules (the search is then incomplete)\n"
	"    -t, --time-limit=SECONDS     stop after SECONDS (the search is then incomplete)\n"
	"    -s, --max-steps=N            steps per schedule (default 10000, 0: no bound)\n"
	"        --schedule-timeout=SECONDS  wall clock of one schedule (default 10, 0: none)\n"
	"    -k, --keep-going             do not stop at the first failure\n"
	"        --reduction=none         no partial-order reduction (the only choice yet)\n"
	"        --python=PATH            the worker's interpreter\n"
	"        --hash-seed=N            PYTHONHASHSEED of every schedule (default 0)\n"
	"        --trace-dir=DIR          where failure traces go (default .ploom)\n"
	"        --no-minimize            do not look for a trace with fewer preemptions\n"
	"    -q, --quiet                  no progress lines\n"
	"\n"
	"TARGET is module:function or path/to/file.py:function.\n";

enum { OPT_REDUCTION = CLI_OPT_OWN, OPT_TRACE_DIR, OPT_NO_MINIMIZE };

static const struct option options[] = {
	{"max-preemptions", required_argument, NULL, 'p'},
	{"max-schedules", required_argument, NULL, 'n'},
	{"time-limit", required_argument, NULL, 't'},
	CLI_OPTION_MAX_STEPS,
	CLI_OPTION_SCHEDULE_TIMEOUT,
	{"keep-going", no_argument, NULL, 'k'},
	{"reduction", required_argument, NULL, OPT_REDUCTION},
	CLI_OPTION_PYTHON,
	CLI_OPTION_HASH_SEED,
	{"trace-dir", required_argument, NULL, OPT_TRACE_DIR},
	{"no-minimize", no_argument, NULL, OPT_NO_MINIMIZE},
	CLI_OPTION_QUIET,
	CLI_OPTIONS_END,
};

/* A progress line of the minimization at most once a second. */
static void minimize_progress(void *ctx, long schedules, int bound)
{
	if (cli_progress_due(ctx))
		fprintf(stderr, PROG ": minimizing: %ld schedules, at most %d preemption%s\n",
			schedules, bound, bound == 1 ? "" : "s");
}

int main(int argc, char **argv)
{
	struct ploom_worker *worker = NULL;
	struct ploom_explore *ex = NULL;
	struct ploom_trace *trace = NULL, *min = NULL;
	struct ploom_outcome *first_failure = NULL;
	struct ploom_minimize_opts mopts = {0};
	struct ploom_minimize_result mres = {0};
	struct ploom_run run = {0};
	struct ploom_err err = {0, ""};
	struct ploom_stats stats = {0};
	struct cli_opts opts = CLI_OPTS_INIT;
	struct ploom_config *config = &opts.config;
	char *python = NULL, *failure_path = NULL, *limit_path = NULL, *min_path = NULL;
	const char *trace_dir = ".ploom", *stopped_by = NULL, *target, *seed = opts.hash_seed;
	long max_schedules = 0, schedules = 0, failing = 0, max_depth = 0, v;
	double time_limit = 0, t0, last_progress, elapsed;
	int keep_going = 0, minimize = 1, hit_step_limit = 0, c, r;
	int ret = PLOOM_EXIT_USAGE;

	while ((c = cli_getopt(argc, argv, ":p:n:t:s:kqhV", options)) != -1) {
		switch (c) {
		case 'p':
			if (ploom_args_long(&v, optarg, 0, 1000000) < 0) {
				ret = cli_usage_error("invalid --max-preemptions", optarg);
				goto done;
			}
			config->max_preemptions = (int)v;
			break;
		case 'n':
			if (ploom_args_long(&max_schedules, optarg, 1, 1000000000000L) < 0) {
				ret = cli_usage_error("invalid --max-schedules", optarg);
				goto done;
			}
			break;
		case 't':
			if (ploom_args_seconds(&time_limit, optarg) < 0 || time_limit <= 0) {
				ret = cli_usage_error("invalid --time-limit", optarg);
				goto done;
			}
			break;
		case 'k':
			keep_going = 1;
			break;
		case OPT_REDUCTION:
			if (strcmp(optarg, "none")) {
				ret = cli_usage_error("unsupported --reduction (only 'none' exists)", optarg);
				goto done;
			}
			break;
		case OPT_TRACE_DIR:
			if (!*optarg) {
				ret = cli_usage_error("empty --trace-dir", NULL);
				goto done;
			}
			trace_dir = optarg;
			break;
		case OPT_NO_MINIMIZE:
			minimize = 0;
			break;
		default:
			if (!cli_common_option(&ret, &opts, c, argv))
				goto done;
			break;
		}
	}
	if (optind != argc - 1) {
		ret = cli_usage_error(optind == argc ? "missing TARGET" : "too many arguments", NULL);
		goto done;
	}
	target = argv[optind];
	python = cli_python(opts.python);
	if (!python)
		goto done;

	if (cli_worker_start(&worker, python, target, seed, &err) < 0)
		goto fail;
	if (ploom_explore_new(&ex, config->max_preemptions, &err) < 0)
		goto fail;

	t0 = last_progress = cli_now_s();
	for (;;) {
		const int *prefix;
		size_t n;

		prefix = ploom_explore_prefix(ex, &n);
		ploom_run_release(&run);
		if (ploom_worker_run(worker, &run, prefix, n, config->max_steps,
				     (long)(config->schedule_timeout_s * 1000.0 + 0.5), &err) < 0)
			goto fail;
		schedules++;
		if ((long)run.nsteps > max_depth)
			max_depth = (long)run.nsteps;
		if (run.outcome.kind == PLOOM_OUTCOME_DIVERGENCE) {
			fprintf(stderr, PROG ": schedule %ld did not follow its choices: %s\n",
				schedules, run.outcome.summary);
			ret = PLOOM_EXIT_DIVERGENCE;
			goto done;
		}
		/* the search moves on from the run's steps before a failing run
		 * is moved into its trace */
		r = ploom_explore_next(ex, &run, &err);
		if (r < 0)
			goto fail;
		if (run.outcome.kind == PLOOM_OUTCOME_STEP_LIMIT) {
			hit_step_limit = 1;
			if (!limit_path && !failure_path) {
				if (ploom_worker_trace(&trace, worker, seed, config, &run, &err) < 0 ||
				    cli_stamp_trace(trace, &err) < 0 ||
				    ploom_trace_save(&limit_path, trace, trace_dir, "original", &err) < 0)
					goto fail;
				fprintf(stderr, PROG ": schedule %ld reached the step limit (%ld steps)\n",
					schedules, config->max_steps);
				fprintf(stderr, PROG ": trace written to '%s'\n", limit_path);
				ploom_trace_free(trace);
				trace = NULL;
			}
			if (!keep_going) {
				stopped_by = "max-steps";
				break;
			}
		} else if (ploom_outcome_is_failure(run.outcome.kind)) {
			failing++;
			if (!failure_path) {
				if (ploom_worker_trace(&trace, worker, seed, config, &run, &err) < 0 ||
				    cli_stamp_trace(trace, &err) < 0 ||
				    ploom_trace_save(&failure_path, trace, trace_dir, "original", &err) < 0)
					goto fail;
				fprintf(stderr, PROG ": schedule %ld failed: %s\n", schedules,
					trace->run.outcome.summary);
				fprintf(stderr, PROG ": trace written to '%s'\n", failure_path);
				/* keep the trace: the statistics describe its outcome */
				first_failure = &trace->run.outcome;
			}
			if (!keep_going) {
				stopped_by = "failure";
				break;
			}
		}
		if (r == 0)
			break;
		if (max_schedules && schedules >= max_schedules) {
			stopped_by = "max-schedules";
			break;
		}
		elapsed = cli_now_s() - t0;
		if (time_limit > 0 && elapsed >= time_limit) {
			stopped_by = "time-limit";
			break;
		}
		if (!opts.quiet && cli_progress_due(&last_progress))
			fprintf(stderr, PROG ": %ld schedules, %ld failing, %.1f s\n", schedules,
				failing, elapsed);
		if (cli_interrupted)
			break;
	}
	if (cli_interrupted)
		goto done;
	elapsed = cli_now_s() - t0;
	if (!stopped_by && hit_step_limit)
		stopped_by = "max-steps";
	/* after the search, so that its statistics measure the search only */
	if (failure_path && minimize) {
		last_progress = cli_now_s();
		if (!opts.quiet) {
			mopts.progress = minimize_progress;
			mopts.progress_ctx = &last_progress;
		}
		if (ploom_minimize_trace(&min, &mres, trace, worker, &mopts, &err) < 0)
			goto fail;
		if (ploom_trace_save(&min_path, min, trace_dir, "minimized", &err) < 0)
			goto fail;
		if (mres.exhausted)
			fprintf(stderr, PROG ": the minimizer gave up after %ld schedules\n",
				mres.schedules);
		fprintf(stderr, PROG ": minimized trace written to '%s' (%d -> %d preemptions)\n",
			min_path, mres.from, mres.to);
	}
	if (cli_worker_stop(&worker, &err) < 0)
		goto fail;

	stats.result = failing ? "failure" : stopped_by ? "incomplete" : "pass";
	stats.target = target;
	stats.schedules = schedules;
	stats.failing = failing;
	stats.complete = !stopped_by;
	stats.stopped_by = stopped_by;
	stats.max_preemptions = config->max_preemptions;
	stats.reduction = config->reduction;
	stats.hash_seed = seed;
	stats.elapsed_s = elapsed;
	stats.schedules_per_second = elapsed > 0 ? (double)schedules / elapsed : 0;
	stats.max_depth = max_depth;
	stats.trace = failure_path ? failure_path : limit_path;
	stats.minimized_trace = min_path;
	stats.failure = first_failure;
	if (ploom_stats_write(stdout, &stats, &err) < 0)
		goto fail;
	ret = failing ? PLOOM_EXIT_FAILURE : stopped_by ? PLOOM_EXIT_INCOMPLETE : PLOOM_EXIT_OK;
	goto done;

fail:
	ret = cli_fail(&err, "");
done:
	cli_worker_free(worker);
	ploom_explore_free(ex);
	ploom_run_release(&run);
	ploom_trace_free(trace);
	ploom_trace_free(min);
	free(python);
	free(min_path);
	free(failure_path);
	free(limit_path);
	return cli_exit(ret, "the statistics", CLI_EPIPE_FAILS);
}
