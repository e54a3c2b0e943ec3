/* ploom-explore - search the schedules of a scenario depth first.
 *
 * Starts one worker, asks it for one schedule after another as lib/explore
 * directs, writes the first failing trace, minimizes it with the same
 * worker (lib/minimize), and prints the statistics as JSON on stdout.
 * man/ploom-explore.1 is the reference. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "err.h"
#include "explore.h"
#include "json.h"
#include "minimize.h"
#include "trace.h"
#include "version.h"
#include "worker.h"

#define PROG "ploom-explore"

static const char usage_text[] =
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

enum {
	OPT_SCHEDULE_TIMEOUT = 256, OPT_REDUCTION, OPT_PYTHON, OPT_HASH_SEED, OPT_TRACE_DIR,
	OPT_NO_MINIMIZE,
};

static const struct option options[] = {
	{"max-preemptions", required_argument, NULL, 'p'},
	{"max-schedules", required_argument, NULL, 'n'},
	{"time-limit", required_argument, NULL, 't'},
	{"max-steps", required_argument, NULL, 's'},
	{"schedule-timeout", required_argument, NULL, OPT_SCHEDULE_TIMEOUT},
	{"keep-going", no_argument, NULL, 'k'},
	{"reduction", required_argument, NULL, OPT_REDUCTION},
	{"python", required_argument, NULL, OPT_PYTHON},
	{"hash-seed", required_argument, NULL, OPT_HASH_SEED},
	{"trace-dir", required_argument, NULL, OPT_TRACE_DIR},
	{"no-minimize", no_argument, NULL, OPT_NO_MINIMIZE},
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

/* "ploom-explore: WHAT 'ARG'" (or just WHAT), then the usage. */
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

/* A progress line of the minimization at most once a second. */
static void minimize_progress(void *ctx, long schedules, int bound)
{
	double *last = ctx;

	if (now_s() - *last < 1.0)
		return;
	fprintf(stderr, PROG ": minimizing: %ld schedules, at most %d preemption%s\n", schedules,
		bound, bound == 1 ? "" : "s");
	*last = now_s();
}

/* Gives a trace about to be saved its source fingerprints and its id. */
static int stamp(struct ploom_trace *trace, struct ploom_err *err)
{
	if (ploom_trace_fingerprint_source(trace, err) < 0)
		return -1;
	return ploom_trace_set_id(trace, err);
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
	struct ploom_config config = {-1, (char *)"none", 10000, 10.0};
	struct ploom_worker_opts wopts = {0};
	struct ploom_stats stats = {0};
	struct sigaction sa;
	char *python = NULL, *failure_path = NULL, *limit_path = NULL, *min_path = NULL;
	const char *trace_dir = ".ploom", *stopped_by = NULL, *target;
	char seed[11] = "0";
	long max_schedules = 0, schedules = 0, failing = 0, max_depth = 0, v;
	double time_limit = 0, t0, last_progress, elapsed;
	int keep_going = 0, quiet = 0, minimize = 1, hit_step_limit = 0, c, r;
	int ret = PLOOM_EXIT_USAGE;

	/* getopt's own messages would name the path we were run by */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:n:t:s:kqhV", options, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (ploom_args_long(&v, optarg, 0, 1000000) < 0) {
				ret = usage_error("invalid --max-preemptions", optarg);
				goto done;
			}
			config.max_preemptions = (int)v;
			break;
		case 'n':
			if (ploom_args_long(&max_schedules, optarg, 1, 1000000000000L) < 0) {
				ret = usage_error("invalid --max-schedules", optarg);
				goto done;
			}
			break;
		case 't':
			if (ploom_args_seconds(&time_limit, optarg) < 0 || time_limit <= 0) {
				ret = usage_error("invalid --time-limit", optarg);
				goto done;
			}
			break;
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
		case 'k':
			keep_going = 1;
			break;
		case OPT_REDUCTION:
			if (strcmp(optarg, "none")) {
				ret = usage_error("unsupported --reduction (only 'none' exists)", optarg);
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
		case OPT_TRACE_DIR:
			if (!*optarg)
{
				ret = usage_error("empty --trace-dir", NULL);
				goto done;
			}
			trace_dir = optarg;
			break;
		case OPT_NO_MINIMIZE:
			minimize = 0;
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
	if (optind != argc - 1) {
		ret = usage_error(optind == argc ? "missing TARGET" : "too many arguments", NULL);
		goto done;
	}
	target = argv[optind];
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
	/* a dead worker must be an error from write(), not our death */
	signal(SIGPIPE, SIG_IGN);

	wopts.python = python;
	wopts.target = target;
	wopts.hash_seed = seed;
	wopts.interrupted = &interrupted;
	if (ploom_worker_start(&worker, &wopts, &err) < 0)
		goto fail;
	worker_pid = ploom_worker_pid(worker);
	if (ploom_explore_new(&ex, config.max_preemptions, &err) < 0)
		goto fail;

	t0 = last_progress = now_s();
	for (;;) {
		const int *prefix;
		size_t n;

		prefix = ploom_explore_prefix(ex, &n);
		ploom_run_release(&run);
		if (ploom_worker_run(worker, &run, prefix, n, config.max_steps,
				     (long)(config.schedule_timeout_s * 1000.0 + 0.5), &err) < 0)
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
				if (ploom_worker_trace(&trace, worker, seed, &config, &run, &err) < 0 ||
				    stamp(trace, &err) < 0 ||
				    ploom_trace_save(&limit_path, trace, trace_dir, "original", &err) < 0)
					goto fail;
				fprintf(stderr, PROG ": schedule %ld reached the step limit (%ld steps)\n",
					schedules, config.max_steps);
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
				if (ploom_worker_trace(&trace, worker, seed, &config, &run, &err) < 0 ||
				    stamp(trace, &err) < 0 ||
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
		elapsed = now_s() - t0;
		if (time_limit > 0 && elapsed >= time_limit) {
			stopped_by = "time-limit";
			break;
		}
		if (!quiet && now_s() - last_progress >= 1.0) {
			fprintf(stderr, PROG ": %ld schedules, %ld failing, %.1f s\n", schedules,
				failing, elapsed);
			last_progress = now_s();
		}
		if (interrupted)
			break;
	}
	if (interrupted)
		goto done;
	elapsed = now_s() - t0;
	if (!stopped_by && hit_step_limit)
		stopped_by = "max-steps";
	/* after the search, so that its statistics measure the search only */
	if (failure_path && minimize) {
		last_progress = now_s();
		if (!quiet) {
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
	if (ploom_worker_stop(worker, &err) < 0) {
		worker = NULL;
		goto fail;
	}
	worker = NULL;
	worker_pid = -1;

	stats.result = failing ? "failure" : stopped_by ? "incomplete" : "pass";
	stats.target = target;
	stats.schedules = schedules;
	stats.failing = failing;
	stats.complete = !stopped_by;
	stats.stopped_by = stopped_by;
	stats.max_preemptions = config.max_preemptions;
	stats.reduction = config.reduction;
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
	if (!interrupted) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		ret = err.code ? err.code : PLOOM_EXIT_USAGE;
	}
done:
	/* kills and reaps the worker if it still runs */
	ploom_worker_free(worker);
	worker_pid = -1;
	ploom_explore_free(ex);
	ploom_run_release(&run);
	ploom_trace_free(trace);
	ploom_trace_free(min);
	free(python);
	free(min_path);
	free(failure_path);
	free(limit_path);
	if (interrupted) {
		/* nothing partial on stdout; the exit status tells the signal */
		return 128 + interrupted;
	}
	if (fclose(stdout) == EOF && ret != PLOOM_EXIT_USAGE) {
		fprintf(stderr, PROG ": cannot write the statistics: %s\n", strerror(errno));
		ret = PLOOM_EXIT_USAGE;
	}
	return ret;
}
