/* ploom-explore - search the schedules of a scenario depth first.
 *
 * Starts one worker, asks it for one schedule after another as lib/explore
 * directs, writes the first failing trace, minimizes it with the same
 * worker (lib/minimize), and prints the statistics as JSON on stdout.
 * With -j N it starts N workers and keeps them all busy: each runs its own
 * part of the search, split from another's when it has none (explore.h),
 * and the minimization runs on one of them after.
 * man/ploom-explore.1 is the reference. */
#include <errno.h>
#include <poll.h>
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
	"                     [-k] [-j N] [--reduction=none] [--python=PATH] [--hash-seed=N]\n"
	"                     [--trace-dir=DIR] [--no-minimize] [-q] TARGET\n"
	"       ploom-explore -h | --help | -V | --version\n"
	"\n"
	"    -p, --max-preemptions=N      only schedules with at most N preemptions\n"
	"    -n, --max-schedules=N        stop after N schedules (the search is then incomplete)\n"
	"    -t, --time-limit=SECONDS     stop after SECONDS (the search is then incomplete)\n"
	"    -s, --max-steps=N            steps per schedule (default 10000, 0: no bound)\n"
	"        --schedule-timeout=SECONDS  wall clock of one schedule (default 10, 0: none)\n"
	"    -k, --keep-going             do not stop at the first failure\n"
	"    -j, --jobs=N                 run N workers at once (default 1, at most 64)\n"
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
	{"jobs", required_argument, NULL, 'j'},
	{"reduction", required_argument, NULL, OPT_REDUCTION},
	CLI_OPTION_PYTHON,
	CLI_OPTION_HASH_SEED,
	{"trace-dir", required_argument, NULL, OPT_TRACE_DIR},
	{"no-minimize", no_argument, NULL, OPT_NO_MINIMIZE},
	CLI_OPTION_QUIET,
	CLI_OPTIONS_END,
};

#define MAX_JOBS 64

/* What a search with -j found, for main() to minimize and report as after
 * a search with one worker.  main() takes over the strings and the trace. */
struct search {
	long schedules, failing, max_depth;
	int hit_step_limit;
	const char *stopped_by;
	char *failure_path, *limit_path;
	struct ploom_trace *trace;              /* the first failure's */
	struct ploom_outcome *first_failure;    /* in trace */
	double t0;
};

/* The options of the search, as parsed. */
struct search_opts {
	int jobs;
	const char *python, *target, *seed, *trace_dir;
	const struct ploom_config *config;
	long max_schedules;
	double time_limit;
	int keep_going, quiet;
};

/* One worker and the part of the search it runs (NULL: none yet). */
struct job {
	struct ploom_worker *w;
	struct ploom_explore *unit;
};

/* Gives job[i] a part of the search split from the search of another job,
 * the one whose split is the shallowest.  Leaves it without one when no
 * search has anything to give.  Returns 0, or -1 with err filled. */
static int take_work(struct job *job, int jobs, int i, struct ploom_err *err)
{
	long best = -1, d;
	int k, victim = -1;

	for (k = 0; k < jobs; k++) {
		d = job[k].unit ? ploom_explore_split_depth(job[k].unit) : -1;
		if (d >= 0 && (best < 0 || d < best)) {
			best = d;
			victim = k;
		}
	}
	if (victim < 0)
		return 0;
	return ploom_explore_split(&job[i].unit, job[victim].unit, err) < 0 ? -1 : 0;
}

/* Takes one finished run of job j, as the loop of main() does with one
 * worker.  Returns 0 to go on, 1 when the search must stop (s->stopped_by
 * says why), PLOOM_EXIT_DIVERGENCE after printing why, or -1 with err
 * filled. */
static int take_run(struct search *s, const struct search_opts *o, struct job *job,
		    struct ploom_run *run, struct ploom_err *err)
{
	const struct ploom_config *config = o->config;
	struct ploom_trace *trace = NULL;
	int r;

	s->schedules++;
	if ((long)run->nsteps > s->max_depth)
		s->max_depth = (long)run->nsteps;
	if (run->outcome.kind == PLOOM_OUTCOME_DIVERGENCE) {
		fprintf(stderr, PROG ": schedule %ld did not follow its choices: %s\n",
			s->schedules, run->outcome.summary);
		return PLOOM_EXIT_DIVERGENCE;
	}
	r = ploom_explore_next(job->unit, run, err);
	if (r < 0)
		return -1;
	if (r == 0) {
		ploom_explore_free(job->unit);
		job->unit = NULL;
	}
	if (run->outcome.kind == PLOOM_OUTCOME_STEP_LIMIT) {
		s->hit_step_limit = 1;
		if (!s->limit_path && !s->failure_path) {
			if (ploom_worker_trace(&trace, job->w, o->seed, config, run, err) < 0 ||
			    cli_stamp_trace(trace, err) < 0 ||
			    ploom_trace_save(&s->limit_path, trace, o->trace_dir, "original", err) < 0) {
				ploom_trace_free(trace);
				return -1;
			}
			fprintf(stderr, PROG ": schedule %ld reached the step limit (%ld steps)\n",
				s->schedules, config->max_steps);
			fprintf(stderr, PROG ": trace written to '%s'\n", s->limit_path);
			ploom_trace_free(trace);
		}
		if (!o->keep_going) {
			s->stopped_by = "max-steps";
			return 1;
		}
	} else if (ploom_outcome_is_failure(run->outcome.kind)) {
		s->failing++;
		if (!s->failure_path) {
			if (ploom_worker_trace(&s->trace, job->w, o->seed, config, run, err) < 0 ||
			    cli_stamp_trace(s->trace, err) < 0 ||
			    ploom_trace_save(&s->failure_path, s->trace, o->trace_dir, "original",
					     err) < 0)
				return -1;
			fprintf(stderr, PROG ": schedule %ld failed: %s\n", s->schedules,
				s->trace->run.outcome.summary);
			fprintf(stderr, PROG ": trace written to '%s'\n", s->failure_path);
			s->first_failure = &s->trace->run.outcome;
		}
		if (!o->keep_going) {
			s->stopped_by = "failure";
			return 1;
		}
	}
	return 0;
}

/* The search with o->jobs workers.  On return *out_worker is an idle
 * worker for the minimization (or NULL: every worker was busy when the
 * search stopped, and was killed), the others are gone.  Returns 0 when
 * the search is over (complete, stopped by a limit or a failure, or
 * interrupted: cli_interrupted tells), PLOOM_EXIT_DIVERGENCE after
 * printing why, or -1 with err filled. */
static int explore_jobs(struct ploom_worker **out_worker, struct search *s,
			const struct search_opts *o, struct ploom_err *err)
{
	struct job job[MAX_JOBS];
	struct pollfd pfd[MAX_JOBS];
	struct ploom_run run = {0};
	const struct ploom_config *config = o->config;
	long dispatched = 0, timeout_ms = (long)(config->schedule_timeout_s * 1000.0 + 0.5);
	double last_progress, now;
	int i, k, r, busy, wait_ms, stop = 0, ret = -1;

	*out_worker = NULL;
	memset(job, 0, sizeof(job));
	for (i = 0; i < o->jobs; i++)
		if (cli_worker_start(&job[i].w, o->python, o->target, o->seed, err) < 0)
			goto done;
	if (ploom_explore_new(&job[0].unit, config->max_preemptions, err) < 0)
		goto done;
	s->t0 = last_progress = cli_now_s();
	while (!stop && !cli_interrupted) {
		/* every idle worker gets a schedule, if there is one to give */
		busy = 0;
		for (i = 0; i < o->jobs; i++) {
			const int *prefix;
			size_t n;

			if (!ploom_worker_busy(job[i].w) &&
			    !(o->max_schedules && dispatched >= o->max_schedules)) {
				if (!job[i].unit && take_work(job, o->jobs, i, err) < 0)
					goto done;
				if (job[i].unit) {
					prefix = ploom_explore_prefix(job[i].unit, &n);
					if (ploom_worker_send_run(job[i].w, prefix, n, config->max_steps,
								  timeout_ms, err) < 0)
						goto done;
					dispatched++;
				}
			}
			if (ploom_worker_busy(job[i].w))
				pfd[busy++] = (struct pollfd){ploom_worker_fd(job[i].w), POLLIN, 0};
		}
		if (!busy)
			break;
		/* wake at least once a second: progress, and each worker's deadline */
		wait_ms = 1000;
		if (o->time_limit > 0) {
			double left = s->t0 + o->time_limit - cli_now_s();
			wait_ms = left <= 0 ? 0 : left < 1.0 ? (int)(left * 1000.0) + 1 : 1000;
		}
		if (poll(pfd, (nfds_t)busy, wait_ms) < 0 && errno != EINTR) {
			ploom_err_set(err, PLOOM_EXIT_USAGE, "cannot wait for the workers: %s",
				      strerror(errno));
			goto done;
		}
		if (cli_interrupted)
			break;
		for (i = 0; i < o->jobs && !stop; i++) {
			if (!ploom_worker_busy(job[i].w))
				continue;
			r = ploom_worker_read_run(job[i].w, &run, err);
			if (r < 0)
				goto done;
			if (r == 0)
				continue;
			r = take_run(s, o, &job[i], &run, err);
			ploom_run_release(&run);
			if (r < 0 || r == PLOOM_EXIT_DIVERGENCE) {
				ret = r;
				goto done;
			}
			stop = r;
		}
		now = cli_now_s();
		if (!stop && o->time_limit > 0 && now - s->t0 >= o->time_limit) {
			s->stopped_by = "time-limit";
			stop = 1;
		}
		if (!stop && !o->quiet && cli_progress_due(&last_progress))
			fprintf(stderr, PROG ": %ld schedules, %ld failing, %.1f s\n", s->schedules,
				s->failing, now - s->t0);
	}
	/* a time limit, or -n, with nothing left to search: complete */
	if (!s->stopped_by || !strcmp(s->stopped_by, "time-limit")) {
		s->stopped_by = NULL;
		for (i = 0; i < o->jobs; i++)
			if (job[i].unit)
				s->stopped_by = stop ? "time-limit" : "max-schedules";
	}
	ret = 0;
done:
	/* the runs still in flight are not needed: their workers go at once */
	for (i = 0; i < o->jobs; i++)
		if (job[i].w && ploom_worker_busy(job[i].w))
			kill(ploom_worker_pid(job[i].w), SIGKILL);
	for (i = 0, k = -1; i < o->jobs; i++) {
		if (ret == 0 && k < 0 && job[i].w && !ploom_worker_busy(job[i].w)) {
			k = i;
			*out_worker = job[i].w;
		} else {
			cli_worker_free(job[i].w);
		}
		ploom_explore_free(job[i].unit);
	}
	ploom_run_release(&run);
	return ret;
}

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
	struct search search = {0};
	struct search_opts sopts = {0};
	struct cli_opts opts = CLI_OPTS_INIT;
	struct ploom_config *config = &opts.config;
	char *python = NULL, *failure_path = NULL, *limit_path = NULL, *min_path = NULL;
	const char *trace_dir = ".ploom", *stopped_by = NULL, *target, *seed = opts.hash_seed;
	long max_schedules = 0, schedules = 0, failing = 0, max_depth = 0, v;
	double time_limit = 0, t0, last_progress, elapsed;
	int keep_going = 0, minimize = 1, hit_step_limit = 0, jobs = 1, c, r;
	int ret = PLOOM_EXIT_USAGE;

	while ((c = cli_getopt(argc, argv, ":p:n:t:s:kj:qhV", options)) != -1) {
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
		case 'j':
			if (ploom_args_long(&v, optarg, 1, MAX_JOBS) < 0) {
				ret = cli_usage_error("invalid --jobs", optarg);
				goto done;
			}
			jobs = (int)v;
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

	if (jobs > 1) {
		sopts = (struct search_opts){jobs, python, target, seed, trace_dir, config,
					     max_schedules, time_limit, keep_going, opts.quiet};
		r = explore_jobs(&worker, &search, &sopts, &err);
		schedules = search.schedules;
		failing = search.failing;
		max_depth = search.max_depth;
		hit_step_limit = search.hit_step_limit;
		stopped_by = search.stopped_by;
		failure_path = search.failure_path;
		limit_path = search.limit_path;
		trace = search.trace;
		first_failure = search.first_failure;
		t0 = search.t0;
		if (r < 0)
			goto fail;
		if (r > 0) {
			ret = r;
			goto done;
		}
		/* every worker was busy when a limit stopped the search */
		if (!worker && failure_path && minimize && !cli_interrupted &&
		    cli_worker_start(&worker, python, target, seed, &err) < 0)
			goto fail;
	} else {
		if (cli_worker_start(&worker, python, target, seed, &err) < 0)
			goto fail;
		if (ploom_explore_new(&ex, config->max_preemptions, &err) < 0)
			goto fail;
		t0 = cli_now_s();
	}

	/* -j 1: one worker runs one schedule after another */
	last_progress = t0;
	while (jobs == 1) {
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
	stats.jobs = jobs;
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
