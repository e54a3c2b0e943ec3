/* ploom-explore - search the schedules of a scenario.
 *
 * Starts the workers (one, or N with -j N), runs a depth-first search
 * (lib/explore; with --shard only the part lib/shard.h tells), or the
 * order --search names (a sample: lib/sample), on them through the search
 * driver (lib/search), prints
 * what the search reports as it goes, minimizes the first failing trace
 * on a worker the search left idle (lib/minimize), and prints the
 * statistics as JSON on stdout.
 * man/ploom-explore.1 is the reference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"
#include "dpor.h"
#include "err.h"
#include "estimate.h"
#include "explore.h"
#include "ipb.h"
#include "json.h"
#include "minimize.h"
#include "render.h"
#include "sample.h"
#include "search.h"
#include "shard.h"
#include "trace.h"
#include "worker.h"

#define PROG "ploom-explore"

const char cli_prog[] = PROG;
const char cli_usage[] =
	"usage: ploom-explore [-p N] [-n N] [-t SECONDS] [-s N] [--schedule-timeout=SECONDS]\n"
	"                     [-k] [-j N] [--reduction=MODE] [--search=ORDER] [--seed=N]\n"
	"                     [--pct-depth=N] [--python=PATH] [--hash-seed=N]\n"
	"                     [--patch=MODULE]... [--trace-dir=DIR] [--no-minimize]\n"
	"                     [--progress=MODE] [--shard=K/N [--shard-depth=D]] [-q] TARGET\n"
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
	"        --trace-dir=DIR          where failure traces go (default .ploom)\n"
	"        --no-minimize            do not look for a trace with fewer preemptions\n"
	"        --progress=MODE          auto: on a terminal a line with the estimated\n"
	"                                 size of the search and an ETA, else the counts\n"
	"                                 (default); json: one JSON object a line; none\n"
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
	{"trace-dir", required_argument, NULL, OPT_TRACE_DIR},
	{"no-minimize", no_argument, NULL, OPT_NO_MINIMIZE},
	{"check-options", no_argument, NULL, OPT_CHECK_OPTIONS},
	{"progress", required_argument, NULL, OPT_PROGRESS},
	{"shard", required_argument, NULL, OPT_SHARD},
	{"shard-depth", required_argument, NULL, OPT_SHARD_DEPTH},
	CLI_OPTION_QUIET,
	CLI_OPTIONS_END,
};

/* ---- the search orders (--search) ----
 * A new order is one entry of orders[]: its name, the strategy it runs,
 * and what it combines with. */

struct order {
	const char *name;
	/* the strategy of a search without reduction */
	int (*strategy_new)(struct ploom_strategy **out, const struct ploom_config *config,
			    struct ploom_err *err);
	/* why --reduction=dpor cannot be combined with it; NULL: it can */
	const char *no_dpor;
	/* 1: it runs every schedule with fewer preemptions before the first
	 * failure, so no minimizer can find a shorter one */
	int fewest_preemptions_first;
	/* why --shard cannot be combined with it; NULL: it can */
	const char *no_shard;
	/* a sample (lib/sample), whose strategy_new is NULL: its policy,
	 * PLOOM_POLICY_PCT or PLOOM_POLICY_RANDOM; PLOOM_POLICY_DEFAULT for
	 * an order that walks the tree.  A sample takes --seed and needs -n
	 * or -t. */
	enum ploom_policy_kind sample;
	/* why --max-preemptions cannot be combined with it; NULL: it can */
	const char *no_bound;
};

static int dfs_new(struct ploom_strategy **out, const struct ploom_config *config,
		   struct ploom_err *err)
{
	return ploom_explore_strategy_new(out, config->max_preemptions, err);
}

static int ipb_new(struct ploom_strategy **out, const struct ploom_config *config,
		   struct ploom_err *err)
{
	return ploom_ipb_strategy_new(out, config->max_preemptions, err);
}

/* why a sample cannot be combined with --reduction=dpor and --shard */
#define SAMPLE_NO_DPOR "a sample draws its choices in the worker, where no partial-order " \
	"reduction runs"
#define SAMPLE_NO_SHARD "shards split a depth-first tree; give each machine a --seed of " \
	"its own instead"

static const struct order orders[] = {
	{"dfs", dfs_new, NULL, 0, NULL, PLOOM_POLICY_DEFAULT, NULL},
	{"ipb", ipb_new,
	 "the reduction keeps one schedule of each class of equivalent ones, not always the "
	 "one with the fewest preemptions, so the search by preemptions could miss the "
	 "failure with the fewest; that needs bounded partial-order reduction, which ploom "
	 "does not have",
	 1,
	 "a shard walks the work units of the depth-first search, and ipb's levels "
	 "are not split into them",
	 PLOOM_POLICY_DEFAULT, NULL},
	{"pct", NULL, SAMPLE_NO_DPOR, 0, SAMPLE_NO_SHARD, PLOOM_POLICY_PCT,
	 "a pct schedule has at most --pct-depth minus 1 preemptions"},
	{"random", NULL, SAMPLE_NO_DPOR, 0, SAMPLE_NO_SHARD, PLOOM_POLICY_RANDOM,
	 "its choices are drawn, not bounded"},
};

#define NORDERS (sizeof(orders) / sizeof(orders[0]))

/* *out = the order called name: returns 0, or PLOOM_EXIT_USAGE after a
 * usage error naming the known ones. */
static int find_order(const struct order **out, const char *name)
{
	char what[256];
	size_t i, n;

	for (i = 0; i < NORDERS; i++)
		if (!strcmp(orders[i].name, name)) {
			*out = &orders[i];
			return 0;
		}
	n = (size_t)snprintf(what, sizeof(what), "unknown --search (");
	for (i = 0; i < NORDERS && n < sizeof(what); i++)
		n += (size_t)snprintf(what + n, sizeof(what) - n, "%s%s",
				      i == 0 ? "" : i + 1 < NORDERS ? ", " : " or ", orders[i].name);
	if (n < sizeof(what))
		snprintf(what + n, sizeof(what) - n, ")");
	return cli_usage_error(what, name);
}

/* How progress is shown on stderr (--progress). */
enum progress {
	PROGRESS_AUTO,      /* a status line on a terminal, else a line of counts */
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
		if (rep->progress == PROGRESS_NONE || !cli_progress_due(&rep->last_progress))
			break;
		if (rep->progress == PROGRESS_AUTO && !rep->tty) {
			/* a log keeps every line: the counts, as they are */
			fprintf(stderr, PROG ": %ld schedules, %ld failing, %.1f s\n", n,
				ev->res->failing, ev->elapsed_s);
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

/* A progress line of the minimization at most once a second; none with
 * --progress=json, whose lines end with the search's. */
static void minimize_progress(void *ctx, long schedules, int bound)
{
	struct report *rep = ctx;
	char line[128];

	if (!cli_progress_due(&rep->last_progress))
		return;
	snprintf(line, sizeof(line), PROG ": minimizing: %ld schedules, at most %d preemption%s",
		 schedules, bound, bound == 1 ? "" : "s");
	if (rep->tty)
		cli_status_show(&rep->status, line);
	else
		fprintf(stderr, "%s\n", line);
}

int main(int argc, char **argv)
{
	struct ploom_worker *workers[PLOOM_SEARCH_MAX_WORKERS] = {NULL};
	struct ploom_worker *worker = NULL;
	struct ploom_strategy *strategy = NULL;
	struct ploom_trace *min = NULL;
	struct ploom_minimize_opts mopts = {0};
	struct ploom_minimize_result mres = {0};
	struct ploom_search_opts sopts = {0};
	struct ploom_search_result res = {0};
	struct ploom_err err = {0, ""}, save_err = {0, ""};
	struct ploom_stats stats = {0};
	struct cli_opts opts = CLI_OPTS_INIT;
	struct ploom_config *config = &opts.config;
	struct report rep = {PROGRESS_AUTO, 0, {0}, 0};
	struct ploom_shard shard = {0};
	const struct order *order = &orders[0];
	char *python = NULL, *min_path = NULL;
	const char *trace_dir = ".ploom", *target, *seed = opts.hash_seed;
	long max_schedules = 0, v;
	double time_limit = 0;
	int keep_going = 0, minimize = 1, jobs = 1, check_options = 0, c, i, r;
	int shard_index = -1, shard_count = 0, shard_depth = -1;
	int seed_given = 0, depth_given = 0;
	struct ploom_sample_opts sample;
	int ret = PLOOM_EXIT_USAGE;

	config->pct_depth = 3;
	while ((c = cli_getopt(argc, argv, ":p:n:t:s:kj:qhV", options)) != -1) {
		switch (c) {
		case 'p':
			ret = cli_long_value(&v, "--max-preemptions", optarg, 0, 1000000);
			if (ret)
				goto done;
			config->max_preemptions = (int)v;
			break;
		case 'n':
			ret = cli_long_value(&max_schedules, "--max-schedules", optarg, 1,
					     1000000000000L);
			if (ret)
				goto done;
			break;
		case 't':
			ret = cli_seconds_value(&time_limit, "--time-limit", optarg, 1);
			if (ret)
				goto done;
			break;
		case 'k':
			keep_going = 1;
			break;
		case 'j':
			ret = cli_long_value(&v, "--jobs", optarg, 1, PLOOM_SEARCH_MAX_WORKERS);
			if (ret)
				goto done;
			jobs = (int)v;
			break;
		case OPT_REDUCTION:
			if (strcmp(optarg, "none") && strcmp(optarg, "dpor")) {
				ret = cli_usage_error("unknown --reduction (none or dpor)", optarg);
				goto done;
			}
			config->reduction = optarg;
			break;
		case OPT_SEARCH:
			ret = find_order(&order, optarg);
			if (ret)
				goto done;
			break;
		case OPT_SEED:
			ret = cli_long_value(&v, "--seed", optarg, 0, (long)PLOOM_SAMPLE_MAX_SEED);
			if (ret)
				goto done;
			config->seed = (unsigned long)v;
			seed_given = 1;
			break;
		case OPT_PCT_DEPTH:
			ret = cli_long_value(&v, "--pct-depth", optarg, 1, PLOOM_PCT_MAX_DEPTH);
			if (ret)
				goto done;
			config->pct_depth = (int)v;
			depth_given = 1;
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
		case OPT_CHECK_OPTIONS:
			check_options = 1;
			break;
		case OPT_PROGRESS:
			if (!strcmp(optarg, "auto"))
				rep.progress = PROGRESS_AUTO;
			else if (!strcmp(optarg, "json"))
				rep.progress = PROGRESS_JSON;
			else if (!strcmp(optarg, "none"))
				rep.progress = PROGRESS_NONE;
			else {
				ret = cli_usage_error("unknown --progress (auto, json or none)", optarg);
				goto done;
			}
			break;
		case OPT_SHARD:
			if (ploom_shard_parse(&shard_index, &shard_count, optarg) < 0) {
				ret = cli_usage_error("invalid --shard (K/N with 0 <= K < N <= 1000000)",
						      optarg);
				goto done;
			}
			break;
		case OPT_SHARD_DEPTH:
			ret = cli_long_value(&v, "--shard-depth", optarg, 0, PLOOM_SHARD_MAX_DEPTH);
			if (ret)
				goto done;
			shard_depth = (int)v;
			break;
		case 'q':
			/* --progress=none: the later of the two wins */
			rep.progress = PROGRESS_NONE;
			break;
		default:
			if (!cli_common_option(&ret, &opts, c, argv))
				goto done;
			break;
		}
	}
	if (optind != argc - 1 && !(check_options && optind == argc)) {
		ret = cli_usage_error(optind == argc ? "missing TARGET" : "too many arguments", NULL);
		goto done;
	}
	config->search = (char *)order->name;
	/* the combinations that would be unsound or are not built */
	if (!strcmp(config->reduction, "dpor") && order->no_dpor) {
		char why[512];
		snprintf(why, sizeof(why), "--search=%s cannot be combined with --reduction=dpor: %s",
			 order->name, order->no_dpor);
		ret = cli_usage_error(why, NULL);
		goto done;
	}
	if (!strcmp(config->reduction, "dpor") && config->max_preemptions >= 0) {
		ret = cli_usage_error("--reduction=dpor cannot be combined with --max-preemptions: a "
				      "preemption bound needs bounded partial-order reduction, which "
				      "ploom does not have", NULL);
		goto done;
	}
	if (!strcmp(config->reduction, "dpor") && jobs > 1) {
		ret = cli_usage_error("--reduction=dpor cannot be combined with --jobs above 1: its "
				      "search is not split between workers", NULL);
		goto done;
	}
	if (shard_depth >= 0 && !shard_count) {
		ret = cli_usage_error("--shard-depth needs --shard", NULL);
		goto done;
	}
	if (!strcmp(config->reduction, "dpor") && shard_count) {
		ret = cli_usage_error("--reduction=dpor cannot be combined with --shard: DPOR's tree is "
				      "not fixed ahead, so the shards could not number its work units "
				      "alike", NULL);
		goto done;
	}
	if (shard_count && order->no_shard) {
		char why[512];
		snprintf(why, sizeof(why), "--search=%s cannot be combined with --shard: %s",
			 order->name, order->no_shard);
		ret = cli_usage_error(why, NULL);
		goto done;
	}
	if (order->no_bound && config->max_preemptions >= 0) {
		char why[512];
		snprintf(why, sizeof(why), "--search=%s cannot be combined with --max-preemptions: %s",
			 order->name, order->no_bound);
		ret = cli_usage_error(why, NULL);
		goto done;
	}
	if (order->sample && !max_schedules && !time_limit) {
		char why[512];
		snprintf(why, sizeof(why), "--search=%s needs --max-schedules or --time-limit: a "
			 "sample never completes the search", order->name);
		ret = cli_usage_error(why, NULL);
		goto done;
	}
	if (seed_given && !order->sample) {
		ret = cli_usage_error("--seed needs --search=pct or --search=random", NULL);
		goto done;
	}
	if (depth_given && order->sample != PLOOM_POLICY_PCT) {
		ret = cli_usage_error("--pct-depth needs --search=pct", NULL);
		goto done;
	}
	if (check_options) {
		ret = PLOOM_EXIT_OK;
		goto done;
	}
	target = argv[optind];
	python = cli_python(opts.python);
	if (!python)
		goto done;

	for (i = 0; i < jobs; i++)
		if (cli_worker_start(&workers[i], python, target, seed, config, &err) < 0)
			goto fail;
	if (shard_count) {
		ploom_shard_init(&shard, shard_index, shard_count);
		if (shard_depth >= 0)
			shard.depth = shard_depth;
		r = ploom_explore_strategy_new_shard(&strategy, config->max_preemptions, &shard, &err);
	} else if (order->sample) {
		sample = (struct ploom_sample_opts){order->sample, config->seed, config->pct_depth,
						    max_schedules, jobs};
		r = ploom_sample_strategy_new(&strategy, &sample, &err);
	} else if (!strcmp(config->reduction, "dpor")) {
		r = ploom_dpor_strategy_new(&strategy, &err);
	} else {
		r = order->strategy_new(&strategy, config, &err);
	}
	if (r < 0)
		goto fail;
	rep.tty = rep.progress == PROGRESS_AUTO && isatty(STDERR_FILENO);
	rep.last_progress = cli_now_s();
	sopts = (struct ploom_search_opts){
		.workers = workers,
		.nworkers = jobs,
		.hash_seed = seed,
		.config = config,
		.trace_dir = trace_dir,
		.max_schedules = max_schedules,
		.time_limit_s = time_limit,
		.keep_going = keep_going,
		.tally_outcomes = keep_going,
		.interrupted = &cli_interrupted,
		.event = search_event,
		.event_ctx = &rep,
		.annotate = shard_count ? ploom_shard_annotate : NULL,
		.annotate_ctx = &shard,
	};
	r = ploom_search_run(&res, strategy, &sopts, &err);
	strategy = NULL;
	cli_status_clear(&rep.status);
	/* the closing line, whatever ended the search, unless a signal cut it */
	if (rep.progress == PROGRESS_JSON && !cli_interrupted)
		write_json(&res.estimate);
	if (r < 0)
		goto fail;
	if (r > 0) {
		/* a schedule diverged: search_event() told which */
		ret = cli_outcome_exit(PLOOM_OUTCOME_DIVERGENCE);
		goto done;
	}
	if (cli_interrupted)
		goto done;
	/* the minimizer runs on the idle worker; the others go now */
	worker = workers[res.idle_worker];
	workers[res.idle_worker] = NULL;
	for (i = 0; i < jobs; i++) {
		ploom_worker_free(workers[i]);
		workers[i] = NULL;
	}

	/* a trace that cannot be saved ends the run with exit 2 and why, after
	 * the statistics, which still tell what the search found; minimizing
	 * would only fail to save too */
	save_err = res.save_err;
	/* after the search, so that its statistics measure the search only */
	if (res.failure && minimize && !save_err.kind) {
		rep.last_progress = cli_now_s();
		if (rep.progress == PROGRESS_AUTO) {
			mopts.progress = minimize_progress;
			mopts.progress_ctx = &rep;
		}
		/* the search ran every schedule with fewer preemptions: the
		 * minimizer would run them again to find none */
		r = order->fewest_preemptions_first
			    ? ploom_minimize_known_minimal(&min, &mres, res.failure, &err)
			    : ploom_minimize_trace(&min, &mres, res.failure, worker, &mopts, &err);
		cli_status_clear(&rep.status);
		if (r < 0)
			goto fail;
		if (mres.exhausted)
			fprintf(stderr, PROG ": the minimizer gave up after %ld schedules\n",
				mres.schedules);
		if (ploom_trace_save(&min_path, min, trace_dir, "minimized", &err) < 0)
			ploom_err_set(&save_err, err.kind, "cannot save the minimized trace: %s",
				      err.msg);
		else if (order->fewest_preemptions_first)
			fprintf(stderr,
				PROG ": minimized trace written to '%s' (%d -> %d preemptions: the "
				"fewest by construction, --search=%s ran every schedule with fewer)\n",
				min_path, mres.from, mres.to, order->name);
		else
			fprintf(stderr,
				PROG ": minimized trace written to '%s' (%d -> %d preemptions)\n",
				min_path, mres.from, mres.to);
	}
	if (cli_worker_stop(&worker, &err) < 0)
		goto fail;

	stats.result = res.failing ? "failure" : res.stopped_by ? "incomplete" : "pass";
	stats.target = target;
	stats.schedules = res.schedules;
	stats.failing = res.failing;
	stats.complete = !res.stopped_by;
	stats.stopped_by = res.stopped_by;
	stats.max_preemptions = config->max_preemptions;
	stats.reduction = config->reduction;
	stats.search = order->name;
	stats.seed = config->seed;
	stats.pct_depth = config->pct_depth;
	stats.minimal_by_construction = res.failure && order->fewest_preemptions_first;
	stats.sleep_blocked = res.sleep_blocked;
	stats.hash_seed = seed;
	stats.elapsed_s = res.elapsed_s;
	stats.schedules_per_second = res.elapsed_s > 0 ? (double)res.schedules / res.elapsed_s : 0;
	stats.max_depth = res.max_depth;
	stats.trace = res.failure_path ? res.failure_path : res.limit_path;
	stats.minimized_trace = min_path;
	stats.failure = res.failure ? &res.failure->run.outcome : NULL;
	stats.jobs = jobs;
	stats.with_outcomes = keep_going;
	stats.outcomes = res.outcomes;
	stats.noutcomes = res.noutcomes;
	stats.outcomes_truncated = res.outcomes_truncated;
	stats.shard = shard_count ? &shard : NULL;
	if (ploom_stats_write(stdout, &stats, &err) < 0)
		goto fail;
	if (save_err.kind) {
		err = save_err;
		goto fail;
	}
	ret = res.failing ? PLOOM_EXIT_FAILURE
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
	ploom_trace_free(min);
	free(python);
	free(min_path);
	cli_opts_release(&opts);
	return cli_exit(ret, "the statistics", CLI_EPIPE_FAILS);
}
