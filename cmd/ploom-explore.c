/* ploom-explore - search the schedules of a scenario.
 *
 * Parses the options into a plan (lib/plan), which names the search and
 * refuses what does not combine with it; starts the workers (one, or N
 * with -j N); runs the plan's search on them through the search driver
 * (lib/search), printing what the search reports as it goes; minimizes
 * the first failing trace on a worker the search left idle (lib/minimize);
 * and prints the statistics as JSON on stdout.
 * man/ploom-explore.1 is the reference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"
#include "err.h"
#include "estimate.h"
#include "json.h"
#include "minimize.h"
#include "plan.h"
#include "plural.h"
#include "render.h"
#include "replay.h"
#include "sample.h"
#include "saved.h"
#include "search.h"
#include "shard.h"
#include "stats.h"
#include "store.h"
#include "trace.h"
#include "worker.h"

#define PROG "ploom-explore"

const char cli_prog[] = PROG;
const char cli_usage[] =
	"usage: ploom-explore [-p N] [-n N] [-t SECONDS] [-s N] [--schedule-timeout=SECONDS]\n"
	"                     [-k] [-j N] [--reduction=MODE] [--search=ORDER] [--seed=N]\n"
	"                     [--pct-depth=N] [--python=PATH] [--hash-seed=N] [--trace-dir=DIR]\n"
	"                     [--patch=MODULE]... [--instrument=MODULE]... [--no-minimize]\n"
	"                     [--minimize-seconds=SECONDS]\n"
	"                     [--no-saved] [--progress=MODE] [--shard=K/N [--shard-depth=D]]\n"
	"                     [-q] TARGET\n"
	"       ploom-explore --check-options [OPTIONS] [TARGET]\n"
	"       ploom-explore -h | --help | -V | --version\n"
	"\n"
	"    -p, --max-preemptions=N      only schedules with at most N preemptions (0-1000000)\n"
	"    -n, --max-schedules=N        stop after N schedules (1-10^12; the search is then\n"
	"                                 incomplete)\n"
	"    -t, --time-limit=SECONDS     stop after SECONDS (above 0, at most 10^9; the search\n"
	"                                 is then incomplete)\n"
	"    -s, --max-steps=N            steps per schedule (0-200000, default 10000, 0: the\n"
	"                                 most, 200000)\n"
	"        --schedule-timeout=SECONDS  wall clock of one schedule (0-10^9, default 10,\n"
	"                                 0: none)\n"
	"    -k, --keep-going             do not stop at the first failure\n"
	"    -j, --jobs=N                 run N workers at once (1-64, default 1)\n"
	"        --reduction=MODE         none: every schedule (default); dpor: one or a few\n"
	"                                 schedules per class of equivalent ones\n"
	"        --search=ORDER           dfs: depth first (default); ipb: fewest preemptions\n"
	"                                 first, every schedule with 0, then 1, ...; pct:\n"
	"                                 PCT samples, at most N-1 preemptions each (see\n"
	"                                 --pct-depth); random: uniform random choices.\n"
	"                                 pct and random need -n or -t and never pass\n"
	"        --seed=N                 seed of pct and random (0-4294967295, default 0)\n"
	"        --pct-depth=N            PCT's depth d: d-1 priority change points per\n"
	"                                 schedule (1-1000, default 3)\n"
	"        --python=PATH            the worker's interpreter\n"
	"        --hash-seed=N            PYTHONHASHSEED of every schedule (0-4294967295,\n"
	"                                 default 0)\n"
	"        --patch=MODULE           MODULE uses ploom's threading and queue (repeatable)\n"
	"        --instrument=MODULE      make MODULE's plain state (attributes, subscripts,\n"
	"                                 globals) scheduling points (repeatable); dpor also\n"
	"                                 instruments the scenario and the --patch modules,\n"
	"                                 unless --instrument=- (only the modules named)\n"
	"        --trace-dir=DIR          where failure traces go (default .ploom)\n"
	"        --no-minimize            do not look for a trace with fewer preemptions\n"
	"        --minimize-seconds=SECONDS  give that look up after SECONDS (default 60;\n"
	"                                 0: no limit)\n"
	"        --no-saved               do not first run the scenario's failing schedules\n"
	"                                 saved in the trace folder\n"
	"        --progress=MODE          auto: on a terminal a line with the estimated\n"
	"                                 size of the search and an ETA, else the counts\n"
	"                                 (default); terminal: that line whatever stderr is\n"
	"                                 (a front end passing it on to one); json: one\n"
	"                                 JSON object a line; none\n"
	"        --shard=K/N              explore only part K of N of the search (0 <= K < N,\n"
	"                                 N at most 1000000): N such runs explore it all\n"
	"        --shard-depth=D          the shards' work units split the search at its\n"
	"                                 first D branch points (0-1000; default: the\n"
	"                                 smallest D with 2^D >= 8N); the same in every shard\n"
	"    -q, --quiet                  no progress lines (--progress=none)\n"
	"        --check-options          only check the options: exit 0, or 2 with the reason\n"
	"\n"
	"TARGET is module:function or path/to/file.py:function.\n";

enum {
	OPT_REDUCTION = CLI_OPT_OWN,
	OPT_TRACE_DIR,
	OPT_NO_MINIMIZE,
	OPT_NO_SAVED,
	OPT_CHECK_OPTIONS,
	OPT_PROGRESS,
	OPT_SHARD,
	OPT_SHARD_DEPTH,
	OPT_SEARCH,
	OPT_SEED,
	OPT_PCT_DEPTH,
};

static const struct option options[] = {
	{"max-preemptions", required_argument, NULL, 'p'},
	{"max-schedules", required_argument, NULL, 'n'},
	{"time-limit", required_argument, NULL, 't'},
	CLI_OPTION_MAX_STEPS,
	CLI_OPTION_SCHEDULE_TIMEOUT,
	{"keep-going", no_argument, NULL, 'k'},
	{"jobs", required_argument, NULL, 'j'},
	{"reduction", required_argument, NULL, OPT_REDUCTION},
	{"search", required_argument, NULL, OPT_SEARCH},
	{"seed", required_argument, NULL, OPT_SEED},
	{"pct-depth", required_argument, NULL, OPT_PCT_DEPTH},
	CLI_OPTION_PYTHON,
	CLI_OPTION_HASH_SEED,
	CLI_OPTION_PATCH,
	CLI_OPTION_INSTRUMENT,
	{"trace-dir", required_argument, NULL, OPT_TRACE_DIR},
	{"no-minimize", no_argument, NULL, OPT_NO_MINIMIZE},
	CLI_OPTION_MINIMIZE_SECONDS,
	{"no-saved", no_argument, NULL, OPT_NO_SAVED},
	{"check-options", no_argument, NULL, OPT_CHECK_OPTIONS},
	{"progress", required_argument, NULL, OPT_PROGRESS},
	{"shard", required_argument, NULL, OPT_SHARD},
	{"shard-depth", required_argument, NULL, OPT_SHARD_DEPTH},
	CLI_OPTION_QUIET,
	CLI_OPTIONS_END,
};

/* How progress is shown on stderr (--progress). */
enum progress {
	PROGRESS_AUTO,      /* a status line on a terminal, else a line of counts */
	PROGRESS_TERMINAL,  /* the status line, whatever stderr is */
	PROGRESS_JSON,
	PROGRESS_NONE,
};

/* What the search's events print (the search's callback context). */
struct report {
	enum progress progress;
	int tty;                    /* stderr is a terminal: the status line */
	struct cli_status status;
	double last_progress;
};

/* Where a message goes, first clearing the status line. */
static FILE *message(struct report *rep)
{
	cli_status_clear(&rep->status);
	return stderr;
}

/* The estimate on a terminal: the status line, rewritten. */
static void show_status(struct report *rep, const struct ploom_estimate *est)
{
	char line[256];
	int n = snprintf(line, sizeof(line), PROG ": ");

	ploom_estimate_format(line + n, sizeof(line) - (size_t)n, est);
	cli_status_show(&rep->status, line);
}

/* One JSON line, written at once so that a reader never sees half. */
static void write_json(const struct ploom_estimate *est)
{
	char line[512];
	int n = ploom_estimate_format_json(line, sizeof(line) - 1, est);

	if (n < 0 || (size_t)n >= sizeof(line) - 1)
		return;
	line[n] = '\n';
	fwrite(line, 1, (size_t)n + 1, stderr);
}

/* The messages of the search as it goes, on stderr. */
static void search_event(void *ctx, const struct ploom_search_event *ev)
{
	struct report *rep = ctx;
	struct ploom_estimate est;
	long n = ev->res->schedules;

	switch (ev->kind) {
	case PLOOM_SEARCH_FAILURE:
		fprintf(message(rep), PROG ": schedule %ld failed: ", n);
		ploom_put_printable(stderr, ev->outcome->summary);
		fputc('\n', stderr);
		if (ev->path)
			fprintf(stderr, PROG ": trace written to '%s'\n", ev->path);
		break;
	case PLOOM_SEARCH_STEP_LIMIT:
		/* the outcome's limit: with -s 0 it is PLOOM_MAX_STEPS */
		fprintf(message(rep), PROG ": schedule %ld reached the step limit (%ld steps)\n", n,
			ev->outcome->limit);
		if (ev->path)
			fprintf(stderr, PROG ": trace written to '%s'\n", ev->path);
		break;
	case PLOOM_SEARCH_DIVERGENCE:
		fprintf(message(rep), PROG ": schedule %ld did not follow its choices: ", n);
		ploom_put_printable(stderr, ev->outcome->summary);
		fputc('\n', stderr);
		break;
	case PLOOM_SEARCH_PROGRESS:
		if (rep->progress == PROGRESS_NONE ||
		    !cli_progress_due(&rep->last_progress,
				      rep->progress == PROGRESS_AUTO && !rep->tty))
			break;
		if (rep->progress == PROGRESS_AUTO && !rep->tty) {
			/* a log keeps every line: the counts, as they are */
			fprintf(stderr, PROG ": %ld schedule%s, %ld failing, %.1f s\n", n,
				ploom_s(n), ev->res->failing, ev->elapsed_s);
			break;
		}
		ploom_search_estimate(&est, ev);
		if (rep->progress == PROGRESS_JSON)
			write_json(&est);
		else
			show_status(rep, &est);
		break;
	}
}

/* A progress line of the minimization, as often as the search's; none
 * with --progress=json, whose lines end with the search's. */
static void minimize_progress(void *ctx, long schedules, int bound)
{
	struct report *rep = ctx;
	char line[128];

	if (!cli_progress_due(&rep->last_progress, !rep->tty))
		return;
	snprintf(line, sizeof(line), PROG ": minimizing: %ld schedule%s, at most %d preemption%s",
		 schedules, ploom_s(schedules), bound, ploom_s(bound));
	if (rep->tty)
		cli_status_show(&rep->status, line);
	else
		fprintf(stderr, "%s\n", line);
}

/* The options of one run: its search's plan and the rest. */
struct run_opts {
	struct ploom_plan plan;
	struct cli_opts common;     /* common.config: what the workers are given */
	const char *target;         /* NULL: --check-options without TARGET */
	const char *trace_dir;
	int keep_going;
	int minimize;
	int saved;                  /* run the saved failing schedules first */
	int check_options;
	enum progress progress;
};

/* What an option's parse returns when parsing goes on. */
#define PARSE_ON (-1)

/* Takes option c (cli_getopt()'s) into o.  Returns PARSE_ON, or the exit
 * status main() ends with: a usage error was printed, or -h or -V. */
static int parse_option(struct run_opts *o, int c, char **argv)
{
	struct ploom_plan *plan = &o->plan;
	char why[256];
	long v = 0;
	int ret = PLOOM_EXIT_OK;

	switch (c) {
	case 'p':
		ret = cli_long_value(&v, "--max-preemptions", optarg, 0, 1000000);
		plan->max_preemptions = (int)v;
		break;
	case 'n':
		ret = cli_long_value(&plan->max_schedules, "--max-schedules", optarg, 1,
				     1000000000000L);
		break;
	case 't':
		ret = cli_seconds_value(&plan->time_limit_s, "--time-limit", optarg, 1);
		break;
	case 'k':
		o->keep_going = 1;
		break;
	case 'j':
		ret = cli_long_value(&v, "--jobs", optarg, 1, PLOOM_SEARCH_MAX_WORKERS);
		plan->jobs = (int)v;
		break;
	case OPT_REDUCTION:
		if (ploom_plan_set_reduction(plan, optarg, why, sizeof(why)) < 0)
			ret = cli_usage_error(why, optarg);
		break;
	case OPT_SEARCH:
		if (ploom_plan_set_search(plan, optarg, why, sizeof(why)) < 0)
			ret = cli_usage_error(why, optarg);
		break;
	case OPT_SEED:
		ret = cli_long_value(&v, "--seed", optarg, 0, (long)PLOOM_SAMPLE_MAX_SEED);
		plan->seed = (unsigned long)v;
		plan->seed_given = 1;
		break;
	case OPT_PCT_DEPTH:
		ret = cli_long_value(&v, "--pct-depth", optarg, 1, PLOOM_PCT_MAX_DEPTH);
		plan->pct_depth = (int)v;
		plan->pct_depth_given = 1;
		break;
	case OPT_TRACE_DIR:
		if (!*optarg)
			ret = cli_usage_error("empty --trace-dir", NULL);
		o->trace_dir = optarg;
		break;
	case OPT_NO_MINIMIZE:
		o->minimize = 0;
		break;
	case OPT_NO_SAVED:
		o->saved = 0;
		break;
	case OPT_CHECK_OPTIONS:
		o->check_options = 1;
		break;
	case OPT_PROGRESS:
		if (!strcmp(optarg, "auto"))
			o->progress = PROGRESS_AUTO;
		else if (!strcmp(optarg, "terminal"))
			o->progress = PROGRESS_TERMINAL;
		else if (!strcmp(optarg, "json"))
			o->progress = PROGRESS_JSON;
		else if (!strcmp(optarg, "none"))
			o->progress = PROGRESS_NONE;
		else
			ret = cli_usage_error("unknown --progress (auto, terminal, json or none)", optarg);
		break;
	case OPT_SHARD:
		if (ploom_shard_parse(&plan->shard_index, &plan->shard_count, optarg) < 0)
			ret = cli_usage_error("invalid --shard (K/N with 0 <= K < N <= 1000000)",
					      optarg);
		break;
	case OPT_SHARD_DEPTH:
		ret = cli_long_value(&v, "--shard-depth", optarg, 0, PLOOM_SHARD_MAX_DEPTH);
		plan->shard_depth = (int)v;
		break;
	case 'q':
		/* --progress=none: the later of the two wins */
		o->progress = PROGRESS_NONE;
		break;
	default:
		if (!cli_common_option(&ret, &o->common, c, argv))
			return ret;
		break;
	}
	return ret ? ret : PARSE_ON;
}

/* Parses the command line into o and checks its plan.  Returns PARSE_ON,
 * or the exit status main() ends with, as parse_option(). */
static int parse_options(struct run_opts *o, int argc, char **argv)
{
	char why[512];
	int c, ret;

	while ((c = cli_getopt(argc, argv, ":p:n:t:s:kj:qhV", options)) != -1) {
		ret = parse_option(o, c, argv);
		if (ret != PARSE_ON)
			return ret;
	}
	if (optind != argc - 1 && !(o->check_options && optind == argc))
		return cli_usage_error(optind == argc ? "missing TARGET" : "too many arguments",
				       NULL);
	o->target = argv[optind];
	/* the combinations that would be unsound or are not built */
	if (ploom_plan_check(&o->plan, why, sizeof(why)) < 0)
		return cli_usage_error(why, NULL);
	ploom_plan_configure(&o->plan, &o->common.config);
	/* what the search instruments follows from its kind, now known */
	ret = cli_instrument_default(&o->common);
	return ret ? ret : PARSE_ON;
}

/* Runs strategy (which it frees) on the workers; as ploom_search_run(). */
static int run_search(struct ploom_search_result *out, struct ploom_strategy *strategy,
		      struct ploom_worker **workers, struct run_opts *o, struct report *rep,
		      struct ploom_err *err)
{
	struct ploom_search_opts sopts = {
		.workers = workers,
		.nworkers = o->plan.jobs,
		.hash_seed = o->common.hash_seed,
		.config = &o->common.config,
		.trace_dir = o->trace_dir,
		.max_schedules = o->plan.max_schedules,
		.time_limit_s = o->plan.time_limit_s,
		.keep_going = o->keep_going,
		.tally_outcomes = o->keep_going,
		.interrupted = &cli_interrupted,
		.event = search_event,
		.event_ctx = rep,
		.annotate = o->plan.shard_count ? ploom_shard_annotate : NULL,
		.annotate_ctx = &o->plan.shard,
	};
	int r;

	rep->tty = rep->progress == PROGRESS_TERMINAL ||
		   (rep->progress == PROGRESS_AUTO && isatty(STDERR_FILENO));
	rep->last_progress = cli_now_s();
	r = ploom_search_run(out, strategy, &sopts, err);
	cli_status_clear(&rep->status);
	/* the closing line, whatever ended the search, unless a signal cut it */
	if (rep->progress == PROGRESS_JSON && !cli_interrupted)
		write_json(&out->estimate);
	return r;
}

/* What the saved failing schedules did (saved.h). */
struct saved_result {
	long runs;
	struct ploom_trace *failure;    /* the first that failed again, or NULL */
	char *path;                     /* where its trace was saved, or NULL */
	struct ploom_err save_err;      /* why it could not be saved */
	/* the worker of its own that failure ran on, for the minimizer, and
	 * its config (own_config set), or NULL: it ran on the search's */
	struct ploom_worker *worker;
	struct ploom_config config;
	int own_config;
};

/* Fills *own with the config of a worker of a saved trace's own: the
 * search's, and as points the plain access sites that trace's search had
 * found too.  A search that finds its points as it goes has none of them
 * before its first schedule, and without them a saved schedule could not
 * run its order of tasks; the search's own workers keep their points, and
 * so its counts.  The caller releases *own with ploom_config_release_lists()
 * whatever this returns.  Returns 0, or -1 with err filled
 * (PLOOM_ERR_INPUT: the trace's keys are no keys). */
static int own_config_init(struct ploom_config *own, const struct ploom_trace *trace,
			   const struct run_opts *o, struct ploom_err *err)
{
	*own = o->common.config;
	if (ploom_config_own_lists(own, &o->common.config, err) < 0 ||
	    ploom_config_add_plain_point_list(own, (const char *const *)trace->config.plain_points,
					      trace->config.nplain_points, err) < 0)
		return -1;
	return 0;
}

/* The follow of a saved trace (ploom_replay_follow_in_search()) on the
 * search's worker, or on one of its own (*own, config *own_config, set
 * with *has_own) when the trace's search found points at plain state or
 * a run asks for more: each such run adds its sites and starts the own
 * worker again, as the search does, until the run needs none.  Returns
 * as ploom_replay_follow_in_search(), never 1. */
static int follow_saved(struct ploom_trace **out, const struct ploom_trace *t,
			struct ploom_worker *worker, struct ploom_worker **own,
			struct ploom_config *own_config, int *has_own, const char *python,
			const struct run_opts *o, int *departures, struct ploom_err *err)
{
	char *refine = NULL;
	int r, n;

	if (t->config.nplain_points && ploom_config_watches_plain(&o->common.config)) {
		*has_own = 1;
		if (own_config_init(own_config, t, o, err) < 0 ||
		    cli_worker_start(own, python, o->target, o->common.hash_seed, own_config, err) < 0)
			return -1;
	}
	for (;;) {
		r = ploom_replay_follow_in_search(out, t, *own ? *own : worker,
						  *own ? own_config : &o->common.config,
						  o->common.hash_seed, departures, &refine, err);
		if (r <= 0)
			return r;
		if (!*has_own) {
			*has_own = 1;
			if (own_config_init(own_config, t, o, err) < 0)
				break;
		}
		/* each round adds a site, so the rounds end */
		n = ploom_config_add_plain_points(own_config, refine, strlen(refine), err);
		if (n <= 0) {
			if (n == 0)
				ploom_err_set(err, PLOOM_ERR_WORKER,
					      "the worker asked again for points it has: %s", refine);
			break;
		}
		free(refine);
		refine = NULL;
		ploom_worker_free(*own);
		*own = NULL;
		if (cli_worker_start(own, python, o->target, o->common.hash_seed, own_config, err) < 0)
			return -1;
	}
	free(refine);
	return -1;
}

/* The saved trace at path is not run, for the reason why: one line on
 * stderr, and 0; or, when why is out of memory, which ends the run as a
 * search's would, -1 with *err that. */
static int skip_saved(struct report *rep, const char *path, const struct ploom_err *why,
		      struct ploom_err *err)
{
	if (why->kind == PLOOM_ERR_NOMEM) {
		*err = *why;
		return -1;
	}
	fputs(PROG ": skipped the saved trace '", message(rep));
	ploom_put_printable(stderr, path);
	fputs("': ", stderr);
	ploom_put_printable(stderr, why->msg);
	fputc('\n', stderr);
	return 0;
}

/* 1 when the trace and the worker name different scenario files. */
static int other_file(const struct ploom_trace *t, const struct ploom_hello *hello)
{
	return t->scenario.file && hello->file && strcmp(t->scenario.file, hello->file);
}

/* 1 when run has more preemptions than bound (< 0: none). */
static int beyond(const struct ploom_run *run, int bound)
{
	return bound >= 0 && ploom_run_count_preemptions(run) > bound;
}

/* Runs the scenario's failing schedules saved in the trace folder on
 * worker, the newest first, each followed leniently on the current source
 * with the search's config, until one fails again: its trace is saved as
 * the search's would be, into sr.  Those with more preemptions than the
 * search's bound (-p, or pct's depth less 1) are not run, and a run that
 * takes more is no failure.  A trace that cannot be read, or that
 * the trust rules of a replay refuse, is skipped with a line; one of
 * another scenario quietly.  Returns 0, or -1 with err filled when the
 * worker fails (the run then fails as a search's would). */
static int run_saved(struct saved_result *sr, struct ploom_worker *worker, const char *python,
		     const struct run_opts *o, struct report *rep, struct ploom_err *err)
{
	const struct ploom_hello *hello = ploom_worker_hello(worker);
	struct ploom_saved_list list = {0};
	struct ploom_trace *t = NULL, *again = NULL;
	struct ploom_worker *own = NULL;
	struct ploom_config own_config = {0};
	struct ploom_err why = {0, ""};
	size_t i;
	int bound = o->common.config.max_preemptions, departures = 0, ret = -1, has_own = 0;

	/* pct's depth d bounds its schedules to d - 1 preemptions */
	if (o->plan.kind->flags & PLOOM_KIND_PCT_DEPTH)
		bound = o->common.config.pct_depth - 1;

	if (ploom_saved_list(&list, o->trace_dir, PLOOM_SAVED_MAX_LISTED, &why) < 0) {
		if (why.kind == PLOOM_ERR_NOMEM) {
			*err = why;
			goto done;
		}
		fprintf(message(rep), PROG ": no saved schedule run: ");
		ploom_put_printable(stderr, why.msg);
		fputc('\n', stderr);
	}
	for (i = 0; i < list.n && sr->runs < PLOOM_SAVED_MAX_RUN && !cli_interrupted; i++) {
		const char *path = list.paths[i];

		ploom_trace_free(t);
		t = NULL;
		why.kind = 0;
		if (ploom_trace_read_file(&t, path, &why) < 0) {
			if (skip_saved(rep, path, &why, err) < 0)
				goto done;
			continue;
		}
		/* a bounded search answers for its bound: a schedule with more
		 * preemptions is not its to report */
		if (!ploom_saved_of_scenario(t, hello) || beyond(&t->run, bound))
			continue;
		/* a trace saved in another clone: its files here, if it may
		 * run here at all; then it must be this very scenario's file */
		if (other_file(t, hello)) {
			if (ploom_replay_place(t, &why) < 0) {
				if (skip_saved(rep, path, &why, err) < 0)
					goto done;
				continue;
			}
			if (other_file(t, hello))
				continue;
		}
		ploom_worker_free(own);
		own = NULL;
		if (has_own)
			ploom_config_release_lists(&own_config);
		has_own = 0;
		if (follow_saved(&again, t, worker, &own, &own_config, &has_own, python, o,
				 &departures, &why) < 0) {
			/* the trace's fault (another Python, say), not the worker's */
			if (why.kind != PLOOM_ERR_INPUT && why.kind != PLOOM_ERR_DIVERGENCE) {
				*err = why;
				goto done;
			}
			skip_saved(rep, path, &why, err);
			continue;
		}
		sr->runs++;
		if (!ploom_outcome_is_failure(again->run.outcome.kind) || beyond(&again->run, bound)) {
			ploom_trace_free(again);
			again = NULL;
			continue;
		}
		if (ploom_trace_fingerprint_source(again, err) < 0 ||
		    ploom_trace_set_id(again, err) < 0)
			goto done;
		if (ploom_trace_save(&sr->path, again, o->trace_dir, "original", &why) < 0)
			ploom_err_set(&sr->save_err, why.kind ? why.kind : PLOOM_ERR_SYSTEM,
				      "cannot save the trace: %s", why.msg);
		fputs(PROG ": saved schedule '", message(rep));
		ploom_put_printable(stderr, path);
		fputs("' fails again: ", stderr);
		ploom_put_printable(stderr, again->run.outcome.summary);
		if (departures)
			fprintf(stderr, " (%d departure%s from its order of tasks)", departures,
				ploom_s(departures));
		fputc('\n', stderr);
		if (sr->path)
			fprintf(stderr, PROG ": trace written to '%s'\n", sr->path);
		sr->failure = again;
		again = NULL;
		/* the minimizer runs it again, on a worker with its points */
		sr->worker = own;
		own = NULL;
		if (has_own) {
			sr->config = own_config;
			sr->own_config = 1;
			has_own = 0;
		}
		break;
	}
	ret = 0;
done:
	ploom_worker_free(own);
	if (has_own)
		ploom_config_release_lists(&own_config);
	ploom_trace_free(t);
	ploom_trace_free(again);
	ploom_saved_list_release(&list);
	return ret;
}

/* Minimizes the search's failure on worker and saves the result, its path
 * in *out_path.  Returns 0, or -1 with err filled; a trace that cannot be
 * saved is no failure of the run: it fills save_err. */
static int minimize_failure(char **out_path, const char **stopped_by,
			    const struct ploom_search_result *res,
			    struct ploom_worker *worker, const struct run_opts *o,
			    struct report *rep, struct ploom_err *save_err, struct ploom_err *err)
{
	const struct ploom_search_kind *kind = o->plan.kind;
	struct ploom_minimize_opts mopts = {0};
	struct ploom_minimize_result mres = {0};
	struct ploom_trace *min = NULL;
	/* a saved schedule's failure came before the search's order */
	int minimal = (kind->flags & PLOOM_KIND_MINIMAL) && !res->saved_failing;
	int ret = -1;

	rep->last_progress = cli_now_s();
	mopts.max_seconds = o->common.minimize_seconds;
	if (rep->progress == PROGRESS_AUTO || rep->progress == PROGRESS_TERMINAL) {
		mopts.progress = minimize_progress;
		mopts.progress_ctx = rep;
	}
	/* the search ran every schedule with fewer preemptions: the minimizer
	 * would run them again to find none */
	if (minimal)
		ret = ploom_minimize_known_minimal(&min, &mres, res->failure, err);
	else
		ret = ploom_minimize_trace(&min, &mres, res->failure, worker, &mopts, err);
	cli_status_clear(&rep->status);
	if (ret < 0)
		goto done;
	cli_minimize_stopped(&mres);
	*stopped_by = mres.stopped_by;
	if (ploom_trace_save(out_path, min, o->trace_dir, "minimized", err) < 0)
		ploom_err_set(save_err, err->kind, "cannot save the minimized trace: %s", err->msg);
	else if (minimal)
		fprintf(stderr,
			PROG ": minimized trace written to '%s' (%d -> %d preemptions: the "
			"fewest by construction, %s ran every schedule with fewer)\n",
			*out_path, mres.from, mres.to, kind->spelling);
	else
		fprintf(stderr, PROG ": minimized trace written to '%s' (%d -> %d preemptions)\n",
			*out_path, mres.from, mres.to);
	ret = 0;
done:
	ploom_trace_free(min);
	return ret;
}

/* Copies what hello says was instrumented into seen (whose other fields
 * stay empty).  Returns 0, or -1 out of memory. */
static int copy_seen(struct ploom_hello *seen, const struct ploom_hello *hello)
{
	size_t i;

	seen->scenario_instrumented = hello->scenario_instrumented;
	if (!hello->ninstrumented)
		return 0;
	seen->instrumented = calloc(hello->ninstrumented, sizeof(*seen->instrumented));
	if (!seen->instrumented)
		return -1;
	for (i = 0; i < hello->ninstrumented; i++) {
		seen->instrumented[i] = strdup(hello->instrumented[i]);
		if (!seen->instrumented[i])
			return -1;
		seen->ninstrumented++;
	}
	return 0;
}

/* The statistics of the run on stdout.  What was instrumented is what the
 * worker said it instrumented (seen, its hello), not what it was asked:
 * a module named that it never compiled instrumented saw nothing. */
static int write_stats(const struct ploom_search_result *res, const struct run_opts *o,
		       const struct ploom_hello *seen, const char *min_path,
		       const char *min_stopped, struct ploom_err *err)
{
	const struct ploom_config *config = &o->common.config;
	const struct ploom_stats_search asked = {
		.target = o->target,
		.hash_seed = o->common.hash_seed,
		.max_preemptions = config->max_preemptions,
		.reduction = config->reduction,
		.search = config->search,
		.seed = config->seed,
		.pct_depth = config->pct_depth,
		.instrument = (const char *const *)seen->instrumented,
		.ninstrument = seen->ninstrumented,
		.instrument_scenario = seen->scenario_instrumented,
		.fewest_preemptions_first = (o->plan.kind->flags & PLOOM_KIND_MINIMAL) != 0,
		.jobs = o->plan.jobs,
		.with_outcomes = o->keep_going,
		.shard = o->plan.shard_count ? &o->plan.shard : NULL,
	};
	struct ploom_stats stats;

	ploom_stats_from_search(&stats, &asked, res, min_path);
	stats.minimize_stopped_by = min_stopped;
	return ploom_stats_write(stdout, &stats, err);
}

/* The search stopped at an internal error (err): what it found so far,
 * in the statistics, then the error and the trace of the schedule that
 * tripped it, which the report needs.  Returns the exit status. */
static int internal_error(struct ploom_search_result *res, const struct run_opts *o,
			  const struct ploom_hello *seen, struct report *rep,
			  const struct ploom_err *err)
{
	struct ploom_err why = {0, ""};
	int ret;

	cli_status_clear(&rep->status);
	if (write_stats(res, o, seen, NULL, NULL, &why) < 0)
		cli_fail(&why, "");
	ret = cli_fail(err, "");
	if (res->internal_path)
		fprintf(stderr, PROG ": the trace of the schedule it stopped at: '%s'\n",
			res->internal_path);
	return ret;
}

int main(int argc, char **argv)
{
	struct ploom_worker *workers[PLOOM_SEARCH_MAX_WORKERS] = {NULL};
	struct ploom_worker *worker = NULL;
	struct ploom_strategy *strategy = NULL;
	struct ploom_search_result res = {0};
	/* what the workers instrumented, from a hello */
	struct ploom_hello seen = {0};
	struct ploom_err err = {0, ""}, save_err = {0, ""};
	struct saved_result saved = {0, NULL, NULL, {0, ""}, NULL, {0}, 0};
	struct run_opts o = {PLOOM_PLAN_INIT, CLI_OPTS_INIT, NULL, ".ploom", 0, 1, 1, 0,
			     PROGRESS_AUTO};
	struct report rep = {PROGRESS_AUTO, 0, {0}, 0};
	char *python = NULL, *min_path = NULL;
	/* the minimizer's stopped_by: a string of lib/minimize */
	const char *min_stopped = NULL;
	long refinements = 0, refined_schedules = 0;
	int i, r, saved_tried = 0;
	int ret = parse_options(&o, argc, argv);

	if (ret != PARSE_ON)
		goto done;
	ret = PLOOM_EXIT_USAGE;
	if (o.check_options) {
		ret = PLOOM_EXIT_OK;
		goto done;
	}
	python = cli_python(o.common.python);
	if (!python)
		goto done;
	/* before any schedule: saved traces are read from the folder and a
	 * failure's trace is written there */
	if (ploom_store_check_dir(o.trace_dir, &err) < 0)
		goto fail;

	rep.progress = o.progress;
	/* A search that finds plain state shared at access sites that were no
	 * points (outcome refine) starts again, with those sites as points
	 * too, on workers that know them: what it ran so far had too few
	 * points to count.  Each round adds a site, so the rounds end. */
	for (;;) {
		for (i = 0; i < o.plan.jobs; i++)
			if (cli_worker_start(&workers[i], python, o.target, o.common.hash_seed,
					     &o.common.config, &err) < 0)
				goto fail;
		/* the saved failures first, once: a regression fails at once.
		 * Of a search's shards only shard 0 runs them, so that
		 * ploom-merge counts each once */
		if (o.saved && !saved_tried && !(o.plan.shard_count && o.plan.shard_index)) {
			saved_tried = 1;
			if (run_saved(&saved, workers[0], python, &o, &rep, &err) < 0)
				goto fail;
			if (cli_interrupted)
				goto done;
			/* the search is not run: what it would find first is
			 * no news until this failure is fixed */
			if (saved.failure && !o.keep_going) {
				r = 0;
				res.stopped_by = "failure";
				res.idle_worker = 0;
				if (o.plan.shard_count) {
					o.plan.shard.units = -1;
					o.plan.shard.failure_unit = -1;
				}
				break;
			}
		}
		if (ploom_plan_strategy_new(&strategy, &o.plan, &err) < 0)
			goto fail;
		r = run_search(&res, strategy, workers, &o, &rep, &err);
		strategy = NULL;
		if (r < 0 && err.kind == PLOOM_ERR_INTERNAL) {
			/* what the first worker said it instrumented: every worker
			 * loads the same scenario with the same options */
			const struct ploom_hello none = {0};
			ret = internal_error(&res, &o, workers[0] ? ploom_worker_hello(workers[0]) : &none,
					     &rep, &err);
			goto done;
		}
		if (r < 0)
			goto fail;
		if (r > 0 || !res.refine || cli_interrupted)
			break;
		/* the shards of one search must make the same points, or their
		 * parts would not add up to one search */
		if (o.plan.shard_count) {
			ploom_err_set(&err, PLOOM_ERR_INPUT,
				      "plain state that tasks share is touched at access sites "
				      "that were no scheduling points (%.300s), and a shard cannot "
				      "start the search again on its own: run it without --shard",
				      res.refine);
			goto fail;
		}
		if (ploom_config_add_plain_points(&o.common.config, res.refine,
						  strlen(res.refine), &err) <= 0) {
			if (err.kind == 0)
				ploom_err_set(&err, PLOOM_ERR_WORKER,
					      "the worker asked again for points it has: %s",
					      res.refine);
			goto fail;
		}
		refined_schedules += res.schedules;
		refinements++;
		for (i = 0; i < o.plan.jobs; i++) {
			ploom_worker_free(workers[i]);
			workers[i] = NULL;
		}
		ploom_search_result_release(&res);
	}
	res.refined = refinements;
	res.refined_schedules = refined_schedules;
	res.saved_runs = saved.runs;
	if (saved.failure && r == 0) {
		/* the failure reported is the saved schedule's, which came
		 * first; with -k the search's failures still count in failing */
		ploom_trace_free(res.failure);
		free(res.failure_path);
		res.failure = saved.failure;
		res.failure_path = saved.path;
		saved.failure = NULL;
		saved.path = NULL;
		res.saved_failing = 1;
		if (!res.save_err.kind)
			res.save_err = saved.save_err;
	}
	if (r > 0) {
		/* a schedule diverged: search_event() told which */
		ret = cli_outcome_exit(PLOOM_OUTCOME_DIVERGENCE);
		goto done;
	}
	if (cli_interrupted)
		goto done;
	/* the minimizer runs on the idle worker, or on the saved failure's
	 * own; the others go now */
	if (res.saved_failing && saved.worker) {
		worker = saved.worker;
		saved.worker = NULL;
	} else {
		worker = workers[res.idle_worker];
		workers[res.idle_worker] = NULL;
	}
	for (i = 0; i < o.plan.jobs; i++) {
		ploom_worker_free(workers[i]);
		workers[i] = NULL;
	}

	/* a trace that cannot be saved ends the run with exit 2 and why, after
	 * the statistics, which still tell what the search found; minimizing
	 * would only fail to save too */
	save_err = res.save_err;
	/* after the search, so that its statistics measure the search only */
	if (res.failure && o.minimize && !save_err.kind &&
	    minimize_failure(&min_path, &min_stopped, &res, worker, &o, &rep, &save_err, &err) < 0)
		goto fail;
	if (worker && copy_seen(&seen, ploom_worker_hello(worker)) < 0) {
		ploom_err_set(&err, PLOOM_ERR_NOMEM, "out of memory");
		goto fail;
	}
	if (cli_worker_stop(&worker, &err) < 0)
		goto fail;
	if (write_stats(&res, &o, &seen, min_path, min_stopped, &err) < 0)
		goto fail;
	if (save_err.kind) {
		err = save_err;
		goto fail;
	}
	/* the trace a reader should start from: the fewest preemptions */
	if ((res.failing || res.saved_failing) && (min_path || res.failure_path))
		cli_put_next_step(PROG, min_path ? min_path : res.failure_path);
	ret = res.failing || res.saved_failing ? PLOOM_EXIT_FAILURE
			  : res.stopped_by ? PLOOM_EXIT_INCOMPLETE : PLOOM_EXIT_OK;
	goto done;

fail:
	ret = cli_fail(&err, "");
done:
	cli_status_clear(&rep.status);
	for (i = 0; i < PLOOM_SEARCH_MAX_WORKERS; i++)
		ploom_worker_free(workers[i]);
	ploom_worker_free(worker);
	ploom_strategy_free(strategy);
	ploom_search_result_release(&res);
	ploom_trace_free(saved.failure);
	free(saved.path);
	ploom_worker_free(saved.worker);
	if (saved.own_config)
		ploom_config_release_lists(&saved.config);
	free(python);
	free(min_path);
	ploom_hello_release(&seen);
	cli_opts_release(&o.common);
	return cli_exit(ret, "the statistics", CLI_EPIPE_FAILS);
}
