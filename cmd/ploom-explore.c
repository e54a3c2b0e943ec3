/* ploom-explore - search the schedules of a scenario.
 *
 * Parses the options into a plan (lib/plan), which names the search and
 * refuses what does not combine with it; runs the session (lib/session):
 * the saved failing schedules, the plan's search on one worker or N (-j
 * N), started again when a run asks for more points, and the minimization
 * of the failure reported; prints what the session reports as it goes,
 * and the statistics as JSON on stdout.
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
#include "format/render.h"
#include "search/sample.h"
#include "search.h"
#include "session.h"
#include "shard.h"
#include "stats.h"
#include "store.h"
#include "trace.h"
#include "view.h"
#include "worker.h"

#define PROG "ploom-explore"

const char cli_prog[] = PROG;
/* The usage around what --search does, which the registry of searches
 * words (ploom_plan_search_help()); usage() puts them together. */
#define USAGE_HEAD \
	"usage: ploom-explore [-p N] [-n N] [-t SECONDS] [-s N] [--schedule-timeout=SECONDS]\n" \
	"                     [-k] [-j N] [--reduction=MODE] [--search=ORDER] [--seed=N]\n" \
	"                     [--pct-depth=N] [--python=PATH] [--hash-seed=N] [--trace-dir=DIR]\n" \
	"                     [--patch=MODULE]... [--instrument=MODULE]... [--no-minimize]\n" \
	"                     [--minimize-seconds=SECONDS] [--timeouts=MODEL]\n" \
	"                     [--no-saved] [--progress=MODE] [--shard=K/N [--shard-depth=D]]\n" \
	"                     [-q] TARGET\n" \
	"       ploom-explore --check-options [OPTIONS] [TARGET]\n" \
	"       ploom-explore -h | --help | -V | --version\n" \
	"\n" \
	"    -p, --max-preemptions=N      only schedules with at most N preemptions (0-1000000)\n" \
	"    -n, --max-schedules=N        stop after N schedules (1-10^12; the search is then\n" \
	"                                 incomplete)\n" \
	"    -t, --time-limit=SECONDS     stop after SECONDS (above 0, at most 10^9; the search\n" \
	"                                 is then incomplete)\n" \
	"    -s, --max-steps=N            steps per schedule (0-200000, default 10000, 0: the\n" \
	"                                 most, 200000)\n" \
	"        --schedule-timeout=SECONDS  wall clock of one schedule (0-10^9, default 10,\n" \
	"                                 0: none)\n" \
	"    -k, --keep-going             do not stop at the first failure\n" \
	"    -j, --jobs=N                 run N workers at once (1-64, default 1)\n" \
	"        --reduction=MODE         none: every schedule; dpor: one or a few schedules\n" \
	"                                 per class of equivalent ones (the default with\n" \
	"                                 --patch and no --search)\n" \
	"        --search=ORDER           "
#define USAGE_TAIL \
	"        --seed=N                 seed of a sample (0-4294967295, default 0)\n" \
	"        --pct-depth=N            PCT's depth d: d-1 priority change points per\n" \
	"                                 schedule (1-1000, default 3)\n" \
	"        --python=PATH            the worker's interpreter\n" \
	"        --hash-seed=N            PYTHONHASHSEED of every schedule (0-4294967295,\n" \
	"                                 default 0)\n" \
	"        --patch=MODULE           MODULE uses ploom's threading and queue (repeatable);\n" \
	"                                 the scenario's module and its project's modules\n" \
	"                                 do too, unless --patch=- (only the modules named)\n" \
	"        --instrument=MODULE      make MODULE's plain state (attributes, subscripts,\n" \
	"                                 globals) scheduling points (repeatable); every\n" \
	"                                 search also sees the scenario's, its project's and\n" \
	"                                 the --patch modules', unless --instrument=- (only\n" \
	"                                 the modules named)\n" \
	"        --timeouts=MODEL         idle: a sleep or timed wait ends by its resource,\n" \
	"                                 or by its deadline once no task can run (default);\n" \
	"                                 any: a timed wait may time out at any step\n" \
	"        --trace-dir=DIR          where failure traces go (default .ploom)\n" \
	"        --no-minimize            do not look for a trace with fewer preemptions\n" \
	"        --minimize-seconds=SECONDS  give that look up after SECONDS (default 60;\n" \
	"                                 0: no limit)\n" \
	"        --no-saved               do not first run the scenario's failing schedules\n" \
	"                                 saved in the trace folder\n" \
	"        --progress=MODE          auto: on a terminal a line with the estimated\n" \
	"                                 size of the search and an ETA, else the counts\n" \
	"                                 (default); terminal: that line whatever stderr is\n" \
	"                                 (a front end passing it on to one); json: one\n" \
	"                                 JSON object a line; none\n" \
	"        --shard=K/N              explore only part K of N of the search (0 <= K < N,\n" \
	"                                 N at most 1000000): N such runs explore it all\n" \
	"        --shard-depth=D          the shards' work units split the search at its\n" \
	"                                 first D branch points (0-1000; default: the\n" \
	"                                 smallest D with 2^D >= 8N); the same in every shard\n" \
	"    -q, --quiet                  no progress lines (--progress=none)\n" \
	"        --check-options          only check the options: exit 0, or 2 with the reason\n" \
	"\n" \
	"TARGET is module:function or path/to/file.py:function.\n"

static char usage_text[sizeof(USAGE_HEAD) + 1024 + sizeof(USAGE_TAIL)];
const char *const cli_usage = usage_text;

/* Puts the usage together, before anything can print it. */
static void build_usage(void)
{
	char help[1024];

	ploom_plan_search_help(help, sizeof(help));
	cli_usage_build(usage_text, sizeof(usage_text), USAGE_HEAD, help, USAGE_TAIL, 86);
}


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
	OPT_WORKER_TEMPLATE,
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
	CLI_OPTION_TIMEOUTS,
	{"trace-dir", required_argument, NULL, OPT_TRACE_DIR},
	{"no-minimize", no_argument, NULL, OPT_NO_MINIMIZE},
	CLI_OPTION_MINIMIZE_SECONDS,
	{"no-saved", no_argument, NULL, OPT_NO_SAVED},
	{"check-options", no_argument, NULL, OPT_CHECK_OPTIONS},
	{"progress", required_argument, NULL, OPT_PROGRESS},
	{"shard", required_argument, NULL, OPT_SHARD},
	{"shard-depth", required_argument, NULL, OPT_SHARD_DEPTH},
	/* not in the help: what ploom's Python API runs, ploom-explore(1) */
	{"worker-template", required_argument, NULL, OPT_WORKER_TEMPLATE},
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
	const struct ploom_plan *plan; /* the search's, for the progress's hint */
	int hinted;                 /* the terminal was given the hint */
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

/* The estimate on a terminal: the status line, rewritten.  The plan's
 * hint (a cheaper search) is a line of its own, once: at the end of the
 * status line a terminal's width would cut it. */
static void show_status(struct report *rep, const struct ploom_estimate *est)
{
	char line[256];
	int n = snprintf(line, sizeof(line), PROG ": ");
	const char *hint = ploom_plan_progress_hint(rep->plan, est->total);

	if (hint && !rep->hinted) {
		fprintf(message(rep), PROG ": more than %.0f schedules estimated; %s\n",
			PLOOM_PLAN_HINT_SCHEDULES, hint);
		rep->hinted = 1;
	}
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

/* Where each task of run was when its schedule stopped, a line each in
 * ploom-show's words: what kept a schedule at its step limit running.
 * Nothing when the worker got no dump of the stacks. */
static void put_stacks(const struct ploom_run *run)
{
	struct ploom_short_names *sn = NULL;
	struct ploom_err err = {0, ""};
	int running = 0, waiting = 0;
	size_t i;

	if (!run->outcome.nstacks || ploom_short_names_new(&sn, run, &err) < 0)
		return;
	fprintf(stderr, PROG ": where each task was:\n");
	for (i = 0; i < run->outcome.nstacks; i++) {
		char *line = ploom_view_stack_line(run, &run->outcome.stacks[i], NULL, sn);

		running |= run->outcome.stacks[i].state == PLOOM_STACK_RUNNING;
		waiting |= run->outcome.stacks[i].state == PLOOM_STACK_UNSTARTED;

		if (line) {
			fputs("  ", stderr);
			ploom_put_printable(stderr, line);
			fputc('\n', stderr);
		}
		free(line);
	}
	ploom_short_names_free(sn);
	/* the schedules run a task on while it can, so a loop that waits for
	 * another task to change what it reads never lets that task begin */
	if (run->outcome.kind == PLOOM_OUTCOME_STEP_LIMIT && running && waiting)
		fprintf(stderr, PROG ": a task that waits in a loop for another one (a busy-wait) "
				"keeps it from running: a time.sleep(0) in the loop is a fair yield, "
				"after which the other tasks run first\n");
}

/* What a failure of the stress time model owes to a timeout that fired
 * while what it waited for could still run: the line after the failure. */
static void put_stalls(const struct ploom_run *run)
{
	int oom;
	char *stalls = run ? ploom_view_stalls(run, &oom) : NULL;

	if (!stalls)
		return;
	fprintf(stderr, PROG ": after ");
	ploom_put_printable(stderr, stalls);
	fputc('\n', stderr);
	free(stalls);
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
		ploom_put_printable_lines(stderr, ev->outcome->summary, "    ");
		fputc('\n', stderr);
		put_stalls(ev->run);
		if (ev->path)
			fprintf(stderr, PROG ": trace written to '%s'\n", ev->path);
		break;
	case PLOOM_SEARCH_STEP_LIMIT:
		/* the outcome's limit: with -s 0 it is PLOOM_MAX_STEPS */
		fprintf(message(rep), PROG ": schedule %ld reached the step limit (%ld steps)\n", n,
			ev->outcome->limit);
		put_stacks(ev->run);
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
		ploom_search_estimate(&est, ev);
		if (rep->progress == PROGRESS_AUTO && !rep->tty) {
			/* a log keeps every line: the counts, as they are */
			const char *hint = ploom_plan_progress_hint(rep->plan, est.total);
			fprintf(stderr, PROG ": %ld schedule%s, %ld failing, %.1f s%s%s\n", n,
				ploom_s(n), ev->res->failing, ev->elapsed_s, hint ? "; " : "",
				hint ? hint : "");
			break;
		}
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
	const char *worker_template; /* --worker-template=SOCKET: become it */
	char *python;               /* the workers' interpreter (cli_python()) */
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
	case OPT_WORKER_TEMPLATE:
		o->worker_template = optarg;
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
	if (o->worker_template && optind == argc)
		return PARSE_ON;
	if (optind != argc - 1 && !(o->check_options && optind == argc))
		return cli_usage_error(optind == argc ? "missing TARGET" : "too many arguments",
				       NULL);
	o->target = argv[optind];
	/* the default search follows the modules named to patch */
	o->plan.patches = o->common.config.npatch > 0;
	/* the combinations that would be unsound or are not built */
	if (ploom_plan_check(&o->plan, why, sizeof(why)) < 0)
		return cli_usage_error(why, NULL);
	ploom_plan_configure(&o->plan, &o->common.config);
	/* what the search instruments follows from its kind, now known */
	ret = cli_module_defaults(&o->common);
	return ret ? ret : PARSE_ON;
}


/* Starts a worker of the run's scenario with config (the session's
 * start(); ctx is the run's options). */
static int start_worker(void *ctx, struct ploom_worker **out, const struct ploom_config *config,
			struct ploom_err *err)
{
	const struct run_opts *o = ctx;

	return cli_worker_start(out, o->python, o->target, o->common.hash_seed, config, err);
}

static int same_summary(const struct ploom_outcome *a, const struct ploom_outcome *b)
{
	return a->kind == b->kind && a->summary && b->summary && !strcmp(a->summary, b->summary);
}

/* A saved trace that failed again: which, how, and where its trace went. */
static void put_saved_failed(struct report *rep, const struct ploom_session_saved_event *ev)
{
	const struct ploom_outcome *was = &ev->saved->run.outcome, *now = &ev->again->run.outcome;

	fputs(PROG ": saved schedule '", message(rep));
	ploom_put_printable(stderr, ev->path);
	/* the same failure, or another one the same order now leads to */
	if (same_summary(was, now)) {
		fputs("' fails again: ", stderr);
		ploom_put_printable_lines(stderr, now->summary, "    ");
	} else {
		fputs("' fails another way: ", stderr);
		ploom_put_printable_lines(stderr, now->summary, "    ");
		fputs(" (it was saved failing with: ", stderr);
		ploom_put_printable_lines(stderr, was->summary ? was->summary : "?", "    ");
		fputc(')', stderr);
	}
	if (ev->departures)
		fprintf(stderr, " (%d departure%s from its order of tasks)", ev->departures,
			ploom_s(ev->departures));
	fputc('\n', stderr);
	put_stalls(&ev->again->run);
	if (ev->trace_path)
		fprintf(stderr, PROG ": trace written to '%s'\n", ev->trace_path);
}

/* What the saved failing schedules did, on stderr. */
static void saved_event(void *ctx, const struct ploom_session_saved_event *ev)
{
	struct report *rep = ctx;

	switch (ev->kind) {
	case PLOOM_SESSION_SAVED_UNLISTED:
		fprintf(message(rep), PROG ": no saved schedule run: ");
		ploom_put_printable(stderr, ev->why);
		fputc('\n', stderr);
		break;
	case PLOOM_SESSION_SAVED_SKIPPED:
		fputs(PROG ": skipped the saved trace '", message(rep));
		ploom_put_printable(stderr, ev->path);
		fputs("': ", stderr);
		ploom_put_printable(stderr, ev->why);
		fputc('\n', stderr);
		break;
	case PLOOM_SESSION_SAVED_FAILED:
		put_saved_failed(rep, ev);
		break;
	}
}

/* The minimizer's lines once it is done: why it stopped early, and where
 * its trace went. */
static void put_minimized(const struct ploom_session_result *res, const struct ploom_plan *plan)
{
	const struct ploom_minimize_result *m = &res->minimize;

	if (!res->minimized)
		return;
	cli_minimize_stopped(m);
	if (!res->minimized_path)
		return;
	if (res->minimal)
		fprintf(stderr,
			PROG ": minimized trace written to '%s' (%d -> %d preemptions: the "
			"fewest by construction, %s ran every schedule with fewer)\n",
			res->minimized_path, m->from, m->to, plan->kind->spelling);
	else
		fprintf(stderr, PROG ": minimized trace written to '%s' (%d -> %d preemptions)\n",
			res->minimized_path, m->from, m->to);
}

/* The start and end of the search and of the minimization: the progress
 * line's clock and the terminal's status line. */
static void phase(void *ctx, enum ploom_session_phase p, const struct ploom_session_result *res)
{
	struct report *rep = ctx;

	switch (p) {
	case PLOOM_SESSION_SEARCH_START:
		rep->tty = rep->progress == PROGRESS_TERMINAL ||
			   (rep->progress == PROGRESS_AUTO && isatty(STDERR_FILENO));
		rep->last_progress = cli_now_s();
		break;
	case PLOOM_SESSION_SEARCH_END:
		cli_status_clear(&rep->status);
		/* the closing line, whatever ended the search, unless a signal cut it */
		if (rep->progress == PROGRESS_JSON && !cli_interrupted)
			write_json(&res->search.estimate);
		break;
	case PLOOM_SESSION_MINIMIZE_START:
		rep->last_progress = cli_now_s();
		break;
	case PLOOM_SESSION_MINIMIZE_END:
		cli_status_clear(&rep->status);
		put_minimized(res, rep->plan);
		break;
	}
}

/* The statistics of the run on stdout.  What was instrumented is what the
 * worker said it instrumented (res->seen, its hello), not what it was
 * asked: a module named that it never compiled instrumented saw nothing. */
static int write_stats(const struct ploom_session_result *res, const struct run_opts *o,
		       struct ploom_err *err)
{
	const struct ploom_config *config = &o->common.config;
	const struct ploom_stats_search asked = {
		.target = o->target,
		.hash_seed = o->common.hash_seed,
		.max_preemptions = config->max_preemptions,
		.reduction = ploom_config_kind(config)->reduction,
		.search = ploom_config_kind(config)->search,
		.search_default = o->plan.default_why,
		.seed = config->seed,
		.pct_depth = config->pct_depth,
		.instrument = (const char *const *)res->seen.instrument,
		.ninstrument = res->seen.ninstrument,
		.instrument_scenario = res->seen.instrument_scenario,
		.fewest_preemptions_first = (o->plan.kind->flags & PLOOM_KIND_MINIMAL) != 0,
		.jobs = o->plan.jobs,
		.with_outcomes = o->keep_going,
		.shard = o->plan.shard_count ? &o->plan.shard : NULL,
		.saved_runs = res->saved_runs,
		.saved_failing = res->saved_failing,
	};
	struct ploom_stats stats;

	ploom_stats_from_search(&stats, &asked, &res->search, res->minimized_path);
	stats.minimize_stopped_by = res->minimized ? res->minimize.stopped_by : NULL;
	return ploom_stats_write(stdout, &stats, err);
}

/* The session stopped at an internal error (err): what it found so far,
 * in the statistics, then the error and the trace of the schedule that
 * tripped it, which the report needs.  Returns the exit status. */
static int internal_error(const struct ploom_session_result *res, const struct run_opts *o,
			  struct report *rep, const struct ploom_err *err)
{
	struct ploom_err why = {0, ""};
	int ret;

	cli_status_clear(&rep->status);
	if (write_stats(res, o, &why) < 0)
		cli_fail(&why, "");
	ret = cli_fail(err, "");
	if (res->search.internal_path)
		fprintf(stderr, PROG ": the trace of the schedule it stopped at: '%s'\n",
			res->search.internal_path);
	return ret;
}

/* A schedule stopped at a setup mistake (res->setup): what it was (its
 * message names where), and that no trace was saved.  Returns the exit status. */
static int setup_error(const struct ploom_search_result *res, struct report *rep)
{
	cli_status_clear(&rep->status);
	fputs(PROG ": setup error, not a bug of the code under test: ", stderr);
	ploom_put_printable(stderr, res->setup);
	fputc('\n', stderr);
	fprintf(stderr, PROG ": no trace saved: fix the setup and run the search again\n");
	return PLOOM_EXIT_SETUP;
}

/* The one line a signal (Ctrl-C) leaves: what the search did so far and
 * where the traces it found are, which stay. */
static void put_interrupted(const struct ploom_session_result *res, const struct run_opts *o,
			    struct report *rep)
{
	long schedules = res->search.schedules + res->refined_schedules;
	long failing = res->search.failing + (res->saved_failure ? 1 : 0);
	const char *trace = res->search.failure_path ? res->search.failure_path : res->saved_path;

	cli_status_clear(&rep->status);
	fprintf(stderr, PROG ": interrupted: %ld schedule%s explored, %ld failing", schedules,
		ploom_s(schedules), failing);
	if (trace) {
		fputs("; trace kept in '", stderr);
		ploom_put_printable(stderr, trace);
		fputs("' (not minimized)\n", stderr);
	} else {
		fputs("; traces go to '", stderr);
		ploom_put_printable(stderr, o->trace_dir);
		fputs("'\n", stderr);
	}
}

/* Runs the session of o, whose options are parsed, into *res.  Returns
 * as ploom_session_run(). */
static int run_session(struct ploom_session_result *res, struct run_opts *o, struct report *rep,
		       struct ploom_err *err)
{
	const struct ploom_session_opts sopts = {
		.plan = &o->plan,
		.config = &o->common.config,
		.start = start_worker,
		.start_ctx = o,
		.hash_seed = o->common.hash_seed,
		.trace_dir = o->trace_dir,
		.keep_going = o->keep_going,
		.saved = o->saved,
		.minimize = o->minimize,
		.minimize_seconds = o->common.minimize_seconds,
		.interrupted = &cli_interrupted,
		.event = search_event,
		.saved_event = saved_event,
		.phase = phase,
		/* --progress=json's lines end with the search's */
		.minimize_progress = o->progress == PROGRESS_AUTO ||
					     o->progress == PROGRESS_TERMINAL
				     ? minimize_progress : NULL,
		.ctx = rep,
	};

	rep->progress = o->progress;
	/* before any schedule: saved traces are read from the folder and a
	 * failure's trace is written there */
	if (ploom_store_check_dir(o->trace_dir, err) < 0)
		return -1;
	return ploom_session_run(res, &sopts, err);
}

/* What the session r (ploom_session_run()'s return, err its error) found,
 * reported: the statistics on stdout, the rest on stderr.  Returns the
 * exit status, or -1 to fail with err. */
static int report(const struct ploom_session_result *res, int r, const struct run_opts *o,
		  struct report *rep, struct ploom_err *err)
{
	const struct ploom_search_result *s = &res->search;

	if (r < 0)
		return res->internal ? internal_error(res, o, rep, err) : -1;
	if (s->setup)
		return setup_error(s, rep);
	/* a schedule diverged: search_event() told which */
	if (r > 0)
		return cli_outcome_exit(PLOOM_OUTCOME_DIVERGENCE);
	/* nothing more is reported: cli_exit() ends with the signal's status */
	if (cli_interrupted)
		return PLOOM_EXIT_USAGE;
	if (write_stats(res, o, err) < 0)
		return -1;
	if (res->save_err.kind) {
		*err = res->save_err;
		return -1;
	}
	if (s->step_limited)
		fprintf(stderr, PROG ": %ld of %ld schedule%s reached the step limit: not a pass\n",
			s->step_limited, s->schedules, ploom_s(s->schedules));
	/* the trace a reader should start from: the fewest preemptions */
	if ((s->failing || res->saved_failing) && (res->minimized_path || s->failure_path))
		cli_put_next_step(PROG, res->minimized_path ? res->minimized_path : s->failure_path);
	return s->failing || res->saved_failing ? PLOOM_EXIT_FAILURE
	       : s->stopped_by			? PLOOM_EXIT_INCOMPLETE
						: PLOOM_EXIT_OK;
}

int main(int argc, char **argv)
{
	struct ploom_session_result res = {0};
	struct ploom_err err = {0, ""};
	struct run_opts o = {.plan = PLOOM_PLAN_INIT, .common = CLI_OPTS_INIT,
			     .trace_dir = ".ploom", .minimize = 1, .saved = 1,
			     .progress = PROGRESS_AUTO};
	struct report rep = {.plan = &o.plan, .progress = PROGRESS_AUTO};
	int ret;

	build_usage();
	ret = parse_options(&o, argc, argv);

	if (ret != PARSE_ON)
		goto done;
	ret = PLOOM_EXIT_OK;
	if (o.check_options)
		goto done;
	ret = PLOOM_EXIT_USAGE;
	o.python = cli_python(o.common.python);
	if (!o.python)
		goto done;
	if (o.worker_template) {
		ret = ploom_worker_exec_template(o.python, o.common.hash_seed, o.worker_template,
						 &err);
		ret = cli_fail(&err, "");
		goto done;
	}
	ret = report(&res, run_session(&res, &o, &rep, &err), &o, &rep, &err);
	if (ret < 0)
		ret = cli_fail(&err, "");
	if (cli_interrupted)
		put_interrupted(&res, &o, &rep);
done:
	cli_status_clear(&rep.status);
	ploom_session_result_release(&res);
	free(o.python);
	cli_opts_release(&o.common);
	return cli_exit(ret, "the statistics", CLI_EPIPE_FAILS);
}
