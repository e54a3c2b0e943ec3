/* Tests of lib/search/dpor against the plain depth-first search, through the
 * simulator (sim.h):
 *
 * - on REFERENCE.md's scenarios, the Mazurkiewicz traces of the DFS
 *   schedules (counted here with the dependence relation of event.h) are
 *   REFERENCE.md's counts, and the schedules DPOR runs cover every one of
 *   them, in no more schedules than DFS; counter3 takes at most 12;
 * - on generated programs (PLOOM_DPOR_PROGRAMS of them, 10000 by
 *   default), DPOR reaches exactly the outcomes DFS reaches (each failure
 *   by task and place, each deadlock with its waits and the cells, each
 *   final state of the cells) in no more schedules, with source sets and
 *   with wakeup trees (ploom_dpor_set_wakeup_trees()) alike;
 * - with the preemption bounds 0, 1 and 2, on the same scenarios (whose
 *   bounded DFS counts are REFERENCE.md's) and on generated programs
 *   (PLOOM_DPOR_BOUNDED_PROGRAMS), DPOR reaches exactly the outcomes of
 *   DFS with that bound, in no more schedules, none beyond the bound.
 *
 * - on generated programs (PLOOM_DPOR_VIEW_PROGRAMS of them, 300 by
 *   default), DPOR split into views, their runs in flight taken back in
 *   orders drawn from a seed as the search driver would with several
 *   workers, and the union of the counted schedules of every shard of a
 *   shard search (with views too), reach exactly the outcomes of DFS;
 *   so do 2 to 4 views with wakeup trees.
 *
 * A failing program is printed with its seed; PLOOM_DPOR_SEED=N runs that
 * one alone (PLOOM_DPOR_CLOCK_SEED=N for the programs with a clock,
 * PLOOM_DPOR_SPAWN_SEED=N for those whose threads start threads,
 * PLOOM_DPOR_VIEW_SEED=N for the views and shards), PLOOM_DPOR_TRACE=1
 * printing the runs of the search with wakeup trees. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/search/dpor.h"
#include "../../lib/search/explore.h"
#include "../../lib/search.h"
#include "../../lib/shard.h"
#include "../../lib/trace.h"
#include "check.h"
#include "sim.h"
#include "testenv.h"

/* What the environment asks (testenv.h), read first in main(): the
 * numbers of generated programs, 0 for each test's default, and the one
 * program to run alone. */
static struct {
	long programs;                  /* PLOOM_DPOR_PROGRAMS */
	long view_programs;             /* PLOOM_DPOR_VIEW_PROGRAMS */
	long bounded_programs;          /* PLOOM_DPOR_BOUNDED_PROGRAMS */
	long maxops;                    /* PLOOM_DPOR_MAXOPS, 12 */
	int has_seed, has_clock_seed, has_spawn_seed, has_view_seed, has_bounded_seed;
	unsigned long seed;             /* PLOOM_DPOR_SEED */
	unsigned long clock_seed;       /* PLOOM_DPOR_CLOCK_SEED */
	unsigned long spawn_seed;       /* PLOOM_DPOR_SPAWN_SEED */
	unsigned long view_seed;        /* PLOOM_DPOR_VIEW_SEED */
	unsigned long bounded_seed;     /* PLOOM_DPOR_BOUNDED_SEED */
} env;

static void read_env(void)
{
	env.programs = testenv_count("PLOOM_DPOR_PROGRAMS", 0);
	env.view_programs = testenv_count("PLOOM_DPOR_VIEW_PROGRAMS", 300);
	env.bounded_programs = testenv_count("PLOOM_DPOR_BOUNDED_PROGRAMS", 1000);
	env.maxops = testenv_count("PLOOM_DPOR_MAXOPS", 12);
	env.has_seed = testenv_seed("PLOOM_DPOR_SEED", &env.seed);
	env.has_clock_seed = testenv_seed("PLOOM_DPOR_CLOCK_SEED", &env.clock_seed);
	env.has_spawn_seed = testenv_seed("PLOOM_DPOR_SPAWN_SEED", &env.spawn_seed);
	env.has_view_seed = testenv_seed("PLOOM_DPOR_VIEW_SEED", &env.view_seed);
	env.has_bounded_seed = testenv_seed("PLOOM_DPOR_BOUNDED_SEED", &env.bounded_seed);
}

/* ---- a set of strings ---- */

struct strset {
	char **s;
	size_t n, cap;
};

static int strset_add(struct strset *set, const char *s)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		if (!strcmp(set->s[i], s))
			return 0;
	if (set->n == set->cap) {
		set->cap = set->cap ? 2 * set->cap : 16;
		set->s = realloc(set->s, set->cap * sizeof(*set->s));
	}
	set->s[set->n++] = strdup(s);
	return 1;
}

static int strset_has(const struct strset *set, const char *s)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		if (!strcmp(set->s[i], s))
			return 1;
	return 0;
}

static void strset_free(struct strset *set)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		free(set->s[i]);
	free(set->s);
	memset(set, 0, sizeof(*set));
}

/* ---- Mazurkiewicz traces ----
 *
 * The class of a run: its events ordered by the least linearisation of
 * their happens-before order that always takes the lowest task next
 * (task order, then the events of one task in program order).  Two runs
 * have the same key exactly when one is the other with adjacent
 * non-conflicting steps of different tasks swapped. */
static void class_key(const struct ploom_run *run, char *out, size_t cap)
{
	size_t n = run->nsteps, i, j, len = 0;
	struct ploom_access (*acc)[PLOOM_ACCESS_MAX] = calloc(n ? n : 1, sizeof(*acc));
	int *nacc = calloc(n ? n : 1, sizeof(int)), *taken = calloc(n ? n : 1, sizeof(int));

	for (i = 0; i < n; i++) {
		const struct ploom_step *s = &run->steps[i];
		int exits;
		if (i + 1 < n) {
			const struct ploom_step *nx = &run->steps[i + 1];
			size_t k;
			exits = nx->task != s->task;
			for (k = 0; k < nx->npending && exits; k++)
				if (nx->pending[k].task == s->task)
					exits = 0;
		} else {
			exits = run->outcome.kind == PLOOM_OUTCOME_PASS;
		}
		nacc[i] = ploom_op_accesses(acc[i], s->task, s->op, s->obj, s->mode, exits);
	}
	out[0] = '\0';
	for (;;) {
		size_t best = n;
		for (i = 0; i < n; i++) {
			int ready = !taken[i];
			for (j = 0; j < i && ready; j++)
				if (!taken[j] && (run->steps[j].task == run->steps[i].task ||
						  ploom_conflicts(acc[j], nacc[j], acc[i], nacc[i])))
					ready = 0;
			if (ready && (best == n || run->steps[i].task < run->steps[best].task))
				best = i;
		}
		if (best == n)
			break;
		taken[best] = 1;
		len += (size_t)snprintf(out + len, len < cap ? cap - len : 0, "%d%s%s,",
					run->steps[best].task, ploom_op_name(run->steps[best].op),
					run->steps[best].object ? run->steps[best].object : "");
	}
	free(acc);
	free(nacc);
	free(taken);
}

/* What a run ended in, as the differential test compares it. */
static void outcome_key(const struct ploom_run *run, const long cells[4], char *out, size_t cap)
{
	const struct ploom_outcome *o = &run->outcome;

	switch (o->kind) {
	case PLOOM_OUTCOME_FAILURE:
		snprintf(out, cap, "failure %s", o->exc_message ? o->exc_message : "");
		break;
	case PLOOM_OUTCOME_DEADLOCK:
		snprintf(out, cap, "%s; cells %ld %ld %ld; clock %ld", o->summary, cells[0], cells[1],
			 cells[2], cells[3]);
		break;
	default:
		snprintf(out, cap, "%s; cells %ld %ld %ld; clock %ld",
			 ploom_outcome_kind_name(o->kind), cells[0], cells[1], cells[2], cells[3]);
		break;
	}
}

/* ---- the two searches over the simulator ---- */

struct result {
	long schedules;         /* complete schedules */
	long failing;
	long blocked;           /* sleep-blocked runs (DPOR only) */
	struct strset outcomes;
	struct strset classes;
	int error;              /* the search returned -1 */
	int capped;             /* DFS stopped at the cap */
	long splits;            /* views split from others */
};

static void take(struct result *r, const struct ploom_run *run, const long cells[4], int classes)
{
	char key[4096];

	if (run->outcome.kind == PLOOM_OUTCOME_SLEEP_BLOCKED) {
		r->blocked++;
		return;
	}
	r->schedules++;
	if (ploom_outcome_is_failure(run->outcome.kind))
		r->failing++;
	outcome_key(run, cells, key, sizeof(key));
	strset_add(&r->outcomes, key);
	if (classes) {
		class_key(run, key, sizeof(key));
		strset_add(&r->classes, key);
	}
}

static void run_dfs_bounded(struct result *r, const struct sim_scenario *sc,
			    const struct sim_prog *p, long cap, int classes, int bound)
{
	struct ploom_explore *ex = NULL;
	struct ploom_run run;
	const int *prefix;
	long cells[4];
	size_t n;
	int more;

	memset(r, 0, sizeof(*r));
	ploom_explore_new(&ex, bound, NULL);
	do {
		prefix = ploom_explore_prefix(ex, &n);
		sim_exec(&run, sc, p, prefix, n, NULL, 0, cells);
		take(r, &run, cells, classes);
		more = ploom_explore_next(ex, &run, NULL);
		ploom_run_release(&run);
		if (more == 1 && cap && r->schedules >= cap) {
			r->capped = 1;
			break;
		}
	} while (more == 1);
	r->error = more < 0;
	ploom_explore_free(ex);
}

static void run_dfs(struct result *r, const struct sim_scenario *sc, const struct sim_prog *p,
		    long cap, int classes)
{
	run_dfs_bounded(r, sc, p, cap, classes, -1);
}

static struct ploom_dpor_stats last_stats;

/* Whether run_dpor_bounded() searches with wakeup trees (optimal DPOR)
 * or with source sets alone (the search ploom_dpor_set_wakeup_trees() sets
 * off). */
static int wakeup_trees;

/* The most preemptions of a schedule run by the last run_dpor_bounded(). */
static int last_most_preemptions;

static void run_dpor_bounded(struct result *r, const struct sim_scenario *sc,
			     const struct sim_prog *p, int classes, int bound)
{
	struct ploom_dpor *d = NULL;
	struct ploom_err err = {0, ""};
	struct ploom_run run;
	const int *prefix, *sleep;
	long cells[4];
	size_t n, m;
	int more;

	memset(r, 0, sizeof(*r));
	last_most_preemptions = 0;
	ploom_dpor_new_bounded(&d, bound, NULL);
	ploom_dpor_set_wakeup_trees(d, wakeup_trees);
	do {
		prefix = ploom_dpor_prefix(d, &n);
		sleep = ploom_dpor_sleep(d, &m);
		sim_exec(&run, sc, p, prefix, n, sleep, m, cells);
		if (getenv("PLOOM_DPOR_TRACE") && wakeup_trees) {
			size_t i;
			printf("run: prefix");
			for (i = 0; i < n; i++)
				printf(" %d", prefix[i]);
			printf(" sleep");
			for (i = 0; i < m; i++)
				printf(" %d", sleep[i]);
			printf("\n");
			for (i = 0; i < run.nsteps; i++)
				printf("   %zu: task %d %s %s en=%zu\n", i, run.steps[i].task,
				       ploom_op_name(run.steps[i].op),
				       run.steps[i].object ? run.steps[i].object : "-",
				       run.steps[i].nenabled);
			printf("   -> %s\n", run.outcome.summary);
		}
		take(r, &run, cells, classes);
		if (run.preemptions > last_most_preemptions)
			last_most_preemptions = run.preemptions;
		more = ploom_dpor_next(d, &run, &err);
		ploom_run_release(&run);
	} while (more == 1 && r->schedules + r->blocked < 10000000);
	if (more < 0) {
		printf("dpor error: %s\n", err.msg);
		r->error = 1;
	}
	ploom_dpor_get_stats(d, &last_stats);
	ploom_dpor_free(d);
}

static void run_dpor(struct result *r, const struct sim_scenario *sc, const struct sim_prog *p,
		     int classes)
{
	run_dpor_bounded(r, sc, p, classes, -1);
}

static void result_free(struct result *r)
{
	strset_free(&r->outcomes);
	strset_free(&r->classes);
}

/* ---- REFERENCE.md ---- */

static const struct {
	const char *name;
	long classes;
} reference[] = {
	{"bank with the lock", 2}, {"bank without the lock", 6}, {"abba", 3}, {"counter3", 6},
	{"racy_counter2", 4},      {"try_lock", 4},              {"flag_handoff", 4},
};

static void dpor_covers_every_class_of_the_reference_scenarios(void)
{
	size_t i, k;

	for (i = 0; i < sizeof(reference) / sizeof(reference[0]); i++) {
		const struct sim_scenario *sc = sim_find(reference[i].name);
		struct result dfs, dpor, optimal;
		int ok = 1;

		run_dfs(&dfs, sc, NULL, 0, 1);
		run_dpor(&dpor, sc, NULL, 1);
		wakeup_trees = 1;
		run_dpor(&optimal, sc, NULL, 1);
		wakeup_trees = 0;
		ok &= CHECK_INT(dfs.classes.n, reference[i].classes);
		/* with wakeup trees: one schedule per class, none stopped half
		 * way */
		ok &= CHECK(!optimal.error);
		ok &= CHECK_INT(optimal.schedules, reference[i].classes);
		ok &= CHECK_INT(optimal.classes.n, reference[i].classes);
		ok &= CHECK_INT(optimal.blocked, 0);
		ok &= CHECK_INT(optimal.outcomes.n, dfs.outcomes.n);
		ok &= CHECK(!dpor.error);
		ok &= CHECK(dpor.schedules >= reference[i].classes);
		ok &= CHECK(dpor.schedules <= dfs.schedules);
		for (k = 0; k < dfs.classes.n; k++)
			if (!CHECK(strset_has(&dpor.classes, dfs.classes.s[k]))) {
				printf("  class not covered: %s\n", dfs.classes.s[k]);
				ok = 0;
			}
		ok &= CHECK_INT(dpor.outcomes.n, dfs.outcomes.n);
		ok &= CHECK((dpor.failing > 0) == (dfs.failing > 0));
		ok &= CHECK_STR(dpor.error ? "error" : "ok", "ok");
		printf("%s: DFS %ld schedules, %zu classes; DPOR %ld schedules (+%ld sleep-blocked), "
		       "%zu classes; with wakeup trees %ld (+%ld sleep-blocked)%s\n",
		       reference[i].name, dfs.schedules, dfs.classes.n, dpor.schedules, dpor.blocked,
		       dpor.classes.n, optimal.schedules, optimal.blocked, ok ? "" : "  <-- FAILED");
		if (!strcmp(reference[i].name, "counter3"))
			CHECK(dpor.schedules + dpor.blocked <= 12);
		result_free(&dfs);
		result_free(&dpor);
		result_free(&optimal);
	}
}

/* DPOR's result against DFS's on one program: exactly its outcomes, in no
 * more schedules (when DFS completed). */
static int agrees(const struct result *dfs, const struct result *dpor)
{
	size_t k;

	if (!dfs->capped &&
	    (dpor->schedules > dfs->schedules || dpor->outcomes.n != dfs->outcomes.n))
		return 0;
	for (k = 0; k < dfs->outcomes.n; k++)
		if (!strset_has(&dpor->outcomes, dfs->outcomes.s[k]))
			return 0;
	return 1;
}

/* The outcomes of both, each marked with who reached it. */
static void print_outcomes(const struct result *dfs, const struct result *dpor)
{
	size_t k;

	for (k = 0; k < dfs->outcomes.n; k++)
		printf("  %s %s\n", strset_has(&dpor->outcomes, dfs->outcomes.s[k]) ? "both" : "DFS only",
		       dfs->outcomes.s[k]);
	for (k = 0; k < dpor->outcomes.n; k++)
		if (!strset_has(&dfs->outcomes, dpor->outcomes.s[k]))
			printf("  DPOR only %s\n", dpor->outcomes.s[k]);
}

/* ---- generated programs ---- */

/* Counts over the generated programs. */
struct totals {
	long programs, complete, dfs, dpor, blocked, with_failure, with_deadlock;
	/* with wakeup trees, on the same programs: schedules, sleep-blocked
	 * runs, programs where they differ from DFS or run more schedules
	 * than source sets */
	long opt, opt_blocked, opt_wrong, opt_more;
	/* programs without a failure small enough to count the classes of
	 * DFS's schedules, and the schedules of each search there */
	long small, small_classes, small_dpor, small_opt;
};

/* DFS's schedules of a program with at most this many are sorted into
 * classes (class_key()), for optimal DPOR to run one of each. */
#define SMALL_PROGRAM 300

/* DFS runs at most DFS_CAP schedules of a program.  When it runs them
 * all, DPOR must reach exactly its outcomes in no more schedules; when
 * the cap cuts it, DPOR must still reach every outcome DFS reached. */
#define DFS_CAP 2000

typedef void (*generator)(struct sim_prog *p, unsigned long seed, int max_ops);

static int differential_of(generator gen, unsigned long seed, struct totals *tot)
{
	struct sim_prog p;
	struct result dfs, dpor, optimal;
	size_t k;
	int ok = 1, small;

	gen(&p, seed, env.maxops > INT_MAX ? INT_MAX : (int)env.maxops);
	run_dfs(&dfs, NULL, &p, DFS_CAP, 0);
	small = !dfs.capped && !dfs.failing && dfs.schedules <= SMALL_PROGRAM;
	if (small) {
		result_free(&dfs);
		run_dfs(&dfs, NULL, &p, DFS_CAP, 1);
	}
	run_dpor(&dpor, NULL, &p, small);
	wakeup_trees = 1;
	run_dpor(&optimal, NULL, &p, small);
	wakeup_trees = 0;
	if (dpor.error || dfs.error)
		ok = 0;
	if (!agrees(&dfs, &dpor))
		ok = 0;
	if (!ok) {
		printf("seed %lu: DFS %ld schedules%s, DPOR %ld (+%ld sleep-blocked)%s\n", seed,
		       dfs.schedules, dfs.capped ? " (capped)" : "", dpor.schedules, dpor.blocked,
		       dpor.error ? ", error" : "");
		sim_prog_print(stdout, &p);
		print_outcomes(&dfs, &dpor);
	}
	/* wakeup trees are held to DFS as source sets are */
	if (optimal.error || !agrees(&dfs, &optimal)) {
		tot->opt_wrong++;
		ok = 0;
		printf("seed %lu: with wakeup trees %ld schedules (+%ld sleep-blocked)%s, not DFS's "
		       "outcomes\n", seed, optimal.schedules, optimal.blocked,
		       optimal.error ? ", error" : "");
		sim_prog_print(stdout, &p);
		print_outcomes(&dfs, &optimal);
	}
	tot->opt_more += optimal.schedules > dpor.schedules;
	tot->programs++;
	if (!dfs.capped) {
		tot->complete++;
		tot->dfs += dfs.schedules;
		tot->dpor += dpor.schedules;
		tot->blocked += dpor.blocked;
		tot->opt += optimal.schedules;
		tot->opt_blocked += optimal.blocked;
	}
	if (small) {
		tot->small++;
		tot->small_classes += (long)dfs.classes.n;
		tot->small_dpor += dpor.schedules;
		tot->small_opt += optimal.schedules;
		/* each class at least once */
		ok &= CHECK_INT(dpor.classes.n, dfs.classes.n);
	}
	tot->with_failure += dpor.failing > 0;
	for (k = 0; k < dpor.outcomes.n; k++)
		if (!strncmp(dpor.outcomes.s[k], "deadlock", 8)) {
			tot->with_deadlock++;
			break;
		}
	result_free(&dfs);
	result_free(&dpor);
	result_free(&optimal);
	return ok;
}

/* The measures of wakeup trees on the programs of tot. */
static void print_wakeup(const struct totals *tot)
{
	printf("  with wakeup trees: %ld schedules and %ld sleep-blocked runs on the programs DFS "
	       "completes; %ld programs with outcomes other than DFS's, %ld with more schedules than source sets; %ld programs without a "
	       "failure small enough to count classes: %ld classes, source sets %ld schedules, "
	       "wakeup trees %ld\n", tot->opt, tot->opt_blocked, tot->opt_wrong, tot->opt_more,
	       tot->small, tot->small_classes, tot->small_dpor, tot->small_opt);
}

static int differential(unsigned long seed, struct totals *tot)
{
	return differential_of(sim_prog_generate, seed, tot);
}

/* Programs beyond the default range that once showed DPOR missing an
 * outcome DFS reaches: the race of a task waiting for a lock with the
 * lock's acquire, hidden behind a timed join of that task (19518), and
 * the race of a thread's end with an is_alive of it, hidden behind the
 * failing step that ended the run (27663).  They run in every check. */
static void dpor_reaches_the_outcomes_of_dfs_on_programs_it_once_missed(void)
{
	static const unsigned long seeds[] = {19518, 27663};
	struct totals tot = {0};
	size_t i;

	for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		CHECK(differential(seeds[i], &tot));
}

static void dpor_reaches_the_outcomes_of_dfs_on_generated_programs(void)
{
	long n = env.programs ? env.programs : 10000, i, failed = 0;
	struct totals tot = {0};

	if (env.has_seed) {
		CHECK(differential(env.seed, &tot));
		return;
	}
	for (i = 0; i < n; i++)
		if (!differential((unsigned long)i, &tot) && ++failed >= 5)
			break;
	CHECK_INT(failed, 0);
	/* the generator must keep producing programs worth comparing */
	CHECK(tot.complete * 100 >= 40 * tot.programs);
	CHECK(tot.with_failure * 5 >= tot.programs);
	CHECK(tot.with_deadlock * 100 >= 3 * tot.programs);
	/* enough programs to count classes in */
	CHECK(tot.small * 20 >= tot.programs);
	printf("generated programs: %ld, %ld with a failure, %ld with a deadlock; %ld explored "
	       "completely by DFS (%ld schedules) and by DPOR (%ld schedules: 1/%.1f, and %ld "
	       "sleep-blocked runs)\n",
	       tot.programs, tot.with_failure, tot.with_deadlock, tot.complete, tot.dfs, tot.dpor,
	       tot.dpor ? (double)tot.dfs / (double)tot.dpor : 0.0, tot.blocked);
	print_wakeup(&tot);
}

/* The same programs with the virtual clock: sleeps and timeouts add to
 * it, two adds commute (event.h), and its reads observe them.  A clock read
 * that DPOR took for independent of a sleep or a timeout would lose an
 * outcome here.  PLOOM_DPOR_CLOCK_SEED=N runs program N alone. */
static void dpor_reaches_the_outcomes_of_dfs_on_generated_programs_with_a_clock(void)
{
	long n = env.programs ? env.programs : 2000, i, failed = 0, reads = 0, adds = 0;
	struct totals tot = {0};

	if (env.has_clock_seed) {
		CHECK(differential_of(sim_prog_generate_clock, env.clock_seed, &tot));
		return;
	}
	for (i = 0; i < n; i++) {
		struct sim_prog p;
		int k, j, r = 0, a = 0;

		sim_prog_generate_clock(&p, (unsigned long)i, 12);
		for (k = 0; k < p.nthreads; k++)
			for (j = 0; j < p.len[k]; j++) {
				r |= p.code[k][j].kind == PI_CLOCK;
				a |= p.code[k][j].kind == PI_SLEEP || p.code[k][j].kind == PI_TIMED ||
				     p.code[k][j].kind == PI_TIMED_JOIN;
			}
		reads += r;
		adds += r && a;
		if (!differential_of(sim_prog_generate_clock, (unsigned long)i, &tot) &&
		    ++failed >= 5)
			break;
	}
	CHECK_INT(failed, 0);
	/* enough programs that read the clock while something advances it */
	CHECK(adds * 4 >= n);
	CHECK(tot.with_failure * 5 >= tot.programs);
	printf("generated programs with a clock: %ld, %ld reading it, %ld of them advancing it "
	       "too; DFS %ld schedules, DPOR %ld (%ld sleep-blocked)\n", tot.programs, reads, adds,
	       tot.dfs, tot.dpor, tot.blocked);
	print_wakeup(&tot);
}

/* The same programs with a thread started by another thread, racing with
 * main's starts: task ids follow the order of the starts, so a search
 * that let two starts commute would replay a reordering with the ids of
 * the run it came from, handing steps to the wrong task (a divergence) or
 * putting the wrong task to sleep.  PLOOM_DPOR_SPAWN_SEED=N runs program
 * N alone. */
static void dpor_reaches_the_outcomes_of_dfs_on_programs_whose_threads_start_threads(void)
{
	long n = env.programs ? env.programs : 2000, i, failed = 0, racing = 0;
	struct totals tot = {0};

	if (env.has_spawn_seed) {
		CHECK(differential_of(sim_prog_generate_spawn, env.spawn_seed, &tot));
		return;
	}
	for (i = 0; i < n; i++) {
		struct sim_prog p;
		int k, mains = 0;

		sim_prog_generate_spawn(&p, (unsigned long)i, 12);
		for (k = 0; k < p.nthreads; k++)
			mains += !p.starter[k];
		/* a start in a thread while main has another to make */
		racing += mains >= 2;
		if (!differential_of(sim_prog_generate_spawn, (unsigned long)i, &tot) &&
		    ++failed >= 5)
			break;
	}
	CHECK_INT(failed, 0);
	CHECK(racing * 3 >= n);
	CHECK(tot.complete * 100 >= 40 * tot.programs);
	CHECK(tot.with_failure * 5 >= tot.programs);
	printf("generated programs whose threads start threads: %ld, %ld with a start racing "
	       "main's; DFS %ld schedules, DPOR %ld (%ld sleep-blocked)\n", tot.programs, racing,
	       tot.dfs, tot.dpor, tot.blocked);
	print_wakeup(&tot);
}

/* ---- views and shards ----
 *
 * The search driver's loop (search.c) over the strategy ops, with the
 * simulator as workers: at most nparts views at once, each with its run in
 * flight once sent; a view without a worker's part takes one by split()
 * from the view with the shallowest split_depth() when the draw says so,
 * and the runs come back in an order drawn from seed.  Probes count
 * nothing, as in the driver. */

/* The next draw of a xorshift generator. */
static unsigned long draw(unsigned long *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

struct part {
	struct ploom_strategy *s;
	struct ploom_run run;
	long cells[4];
	int inflight;
};

#define MAX_PARTS 4

static void run_views(struct result *r, const struct sim_prog *p, int nparts, unsigned long seed,
		      struct ploom_shard *shard, int bound)
{
	struct part parts[MAX_PARTS];
	struct ploom_err err = {0, ""};
	unsigned long x = seed * 2654435761ul + 88172645463325252ul;
	int i, k, more, ninflight;

	memset(r, 0, sizeof(*r));
	memset(parts, 0, sizeof(parts));
	if (shard ? ploom_dpor_strategy_new_shard(&parts[0].s, shard, bound, &err) < 0
		  : ploom_dpor_strategy_new_bounded(&parts[0].s, bound, &err) < 0) {
		r->error = 1;
		return;
	}
	/* a strategy made by ploom_dpor_strategy_new*() is its search */
	ploom_dpor_set_wakeup_trees((struct ploom_dpor *)parts[0].s, wakeup_trees);
	while (r->schedules + r->blocked < 1000000) {
		/* idle workers take work, or not yet */
		for (i = 0; i < nparts; i++) {
			long best = -1, d;
			int victim = -1;

			if (parts[i].s || draw(&x) % 2)
				continue;
			for (k = 0; k < nparts; k++) {
				d = parts[k].s ? parts[k].s->ops->split_depth(parts[k].s) : -1;
				if (d >= 0 && (best < 0 || d < best)) {
					best = d;
					victim = k;
				}
			}
			if (victim >= 0 &&
			    parts[victim].s->ops->split(&parts[i].s, parts[victim].s, &err) < 0) {
				r->error = 1;
				goto out;
			}
			r->splits += parts[i].s != NULL;
		}
		/* every part sends its next schedule */
		ninflight = 0;
		for (i = 0; i < nparts; i++) {
			struct part *pt = &parts[i];
			const int *prefix, *sleep;
			size_t n, m;

			if (pt->s && !pt->inflight) {
				prefix = pt->s->ops->prefix(pt->s, &n);
				sleep = pt->s->ops->sleep(pt->s, &m);
				sim_exec(&pt->run, NULL, p, prefix, n, sleep, m, pt->cells);
				pt->inflight = 1;
			}
			ninflight += pt->inflight;
		}
		if (!ninflight)
			break;
		/* one run comes back */
		k = (int)(draw(&x) % (unsigned long)ninflight);
		for (i = 0; i < nparts; i++)
			if (parts[i].inflight && k-- == 0)
				break;
		if (!parts[i].s->ops->probe || !parts[i].s->ops->probe(parts[i].s) ||
		    parts[i].run.outcome.kind == PLOOM_OUTCOME_SLEEP_BLOCKED)
			take(r, &parts[i].run, parts[i].cells, 0);
		more = parts[i].s->ops->next(parts[i].s, &parts[i].run, &err);
		ploom_run_release(&parts[i].run);
		parts[i].inflight = 0;
		if (more < 0) {
			printf("dpor error: %s\n", err.msg);
			r->error = 1;
			goto out;
		}
		if (!more) {
			ploom_strategy_free(parts[i].s);
			parts[i].s = NULL;
		}
	}
	for (i = 0; i < nparts; i++)
		if (parts[i].s)
			r->error = 1;   /* the cap: a search that does not end */
out:
	for (i = 0; i < nparts; i++) {
		if (parts[i].inflight)
			ploom_run_release(&parts[i].run);
		ploom_strategy_free(parts[i].s);
	}
}

/* Counts over the programs the views and shards ran. */
struct view_totals {
	long programs, complete, serial, views, splits, shards, shard_probes;
	long wakeup_views;      /* runs of 2 to 4 views with wakeup trees */
};

/* 1 when got has exactly the outcomes of want (and no error); else prints
 * what differs under the label. */
static int same_outcomes(const struct result *want, const struct result *got, const char *label)
{
	size_t k;
	int ok = !got->error && got->outcomes.n == want->outcomes.n;

	for (k = 0; k < want->outcomes.n && ok; k++)
		ok = strset_has(&got->outcomes, want->outcomes.s[k]);
	if (ok)
		return 1;
	printf("  %s: %zu outcomes against DFS's %zu%s\n", label, got->outcomes.n, want->outcomes.n,
	       got->error ? ", error" : "");
	for (k = 0; k < want->outcomes.n; k++)
		if (!strset_has(&got->outcomes, want->outcomes.s[k]))
			printf("    DFS only %s\n", want->outcomes.s[k]);
	for (k = 0; k < got->outcomes.n; k++)
		if (!strset_has(&want->outcomes, got->outcomes.s[k]))
			printf("    %s only %s\n", label, got->outcomes.s[k]);
	return 0;
}

/* With bound >= 0, against DFS with that bound. */
static int views_of(generator gen, unsigned long seed, struct view_totals *tot, int bound)
{
	static const struct {
		int count, depth;       /* depth -1: the default */
	} shardings[] = {{2, -1}, {2, 0}, {3, 1}, {4, 2}};
	struct sim_prog p;
	struct result dfs, serial, got;
	char label[64];
	size_t i;
	int ok = 1, nparts, order, K;

	gen(&p, seed, 12);
	run_dfs_bounded(&dfs, NULL, &p, DFS_CAP, 0, bound);
	if (dfs.capped || dfs.error) {
		result_free(&dfs);
		return 1;
	}
	tot->complete++;
	run_dpor_bounded(&serial, NULL, &p, 0, bound);
	tot->serial += serial.schedules + serial.blocked;
	for (nparts = 2; nparts <= MAX_PARTS; nparts++)
		for (order = 0; order < 2; order++) {
			run_views(&got, &p, nparts, seed * 8 + (unsigned long)(nparts * 2 + order), NULL,
				  bound);
			snprintf(label, sizeof(label), "%d views, order %d", nparts, order);
			ok &= same_outcomes(&dfs, &got, label);
			tot->views += got.schedules + got.blocked;
			tot->splits += got.splits;
			result_free(&got);
		}
	/* the views with wakeup trees, which a bound leaves out */
	for (nparts = 2; bound < 0 && nparts <= MAX_PARTS; nparts++) {
		wakeup_trees = 1;
		run_views(&got, &p, nparts, seed * 8 + (unsigned long)nparts, NULL, bound);
		wakeup_trees = 0;
		snprintf(label, sizeof(label), "%d views with wakeup trees", nparts);
		ok &= same_outcomes(&dfs, &got, label);
		tot->wakeup_views += got.schedules + got.blocked;
		result_free(&got);
	}
	for (i = 0; i < sizeof(shardings) / sizeof(shardings[0]); i++) {
		struct result all;
		long units = -1, owned = 0;

		memset(&all, 0, sizeof(all));
		for (K = 0; K < shardings[i].count; K++) {
			struct ploom_shard sh;
			size_t k;

			ploom_shard_init(&sh, K, shardings[i].count);
			if (shardings[i].depth >= 0)
				sh.depth = shardings[i].depth;
			/* the last shard with views, the others alone */
			run_views(&got, &p, K + 1 == shardings[i].count ? 2 : 1, seed + (unsigned long)K,
				  &sh, bound);
			all.error |= got.error;
			for (k = 0; k < got.outcomes.n; k++)
				strset_add(&all.outcomes, got.outcomes.s[k]);
			tot->shards += got.schedules + got.blocked;
			tot->shard_probes += sh.probes;
			/* every shard numbers the units alike */
			if (units >= 0 && sh.units != units) {
				printf("  shard %d/%d: %ld units, shard 0 %ld\n", K, shardings[i].count,
				       sh.units, units);
				ok = 0;
			}
			units = sh.units;
			owned += sh.owned;
			result_free(&got);
		}
		snprintf(label, sizeof(label), "%d shards of depth %d", shardings[i].count,
			 shardings[i].depth);
		ok &= same_outcomes(&dfs, &all, label);
		if (owned != units) {
			printf("  %s: %ld units owned, of %ld\n", label, owned, units);
			ok = 0;
		}
		result_free(&all);
	}
	if (!ok) {
		printf("seed %lu, bound %d: views or shards differ from DFS (%ld schedules)\n", seed,
		       bound, dfs.schedules);
		sim_prog_print(stdout, &p);
	}
	result_free(&dfs);
	result_free(&serial);
	return ok;
}

static void dpor_views_and_shards_reach_the_outcomes_of_dfs(void)
{
	long n = env.view_programs, i, failed = 0;
	struct view_totals tot = {0};

	if (env.has_view_seed) {
		CHECK(views_of(sim_prog_generate, env.view_seed, &tot, -1));
		CHECK(views_of(sim_prog_generate_clock, env.view_seed, &tot, -1));
		CHECK(views_of(sim_prog_generate_spawn, env.view_seed, &tot, -1));
		return;
	}
	for (i = 0; i < n; i++) {
		static const generator gens[] = {sim_prog_generate, sim_prog_generate_clock,
						 sim_prog_generate_spawn};
		tot.programs++;
		if (!views_of(gens[i % 3], (unsigned long)i, &tot, -1) && ++failed >= 5)
			break;
	}
	CHECK_INT(failed, 0);
	/* enough programs explored completely to compare */
	CHECK(tot.complete * 100 >= 40 * tot.programs);
	printf("views and shards: %ld programs, %ld explored completely by DFS; serial DPOR %ld "
	       "runs; views %ld runs per search (x%.3f of serial, %ld splits in all); 2 to 4 shards %ld runs per "
	       "sharding (x%.3f), %ld probes\n", tot.programs, tot.complete, tot.serial,
	       tot.views / 6, tot.serial ? (double)tot.views / 6.0 / (double)tot.serial : 0.0,
	       tot.splits,
	       tot.shards / 4, tot.serial ? (double)tot.shards / 4.0 / (double)tot.serial : 0.0,
	       tot.shard_probes);
	printf("  with wakeup trees: views %ld runs per search\n", tot.wakeup_views / 3);
}

/* ---- with a preemption bound ---- */

/* Bounded DPOR against bounded DFS (explore.h, the same bound) on one
 * program: exactly its outcomes, in no more schedules, none of them beyond
 * the bound.  DFS is capped as above. */
static int bounded_differential(unsigned long seed, int bound, struct totals *tot)
{
	struct sim_prog p;
	struct result dfs, dpor;
	int ok = 1;

	sim_prog_generate(&p, seed, 12);
	run_dfs_bounded(&dfs, NULL, &p, DFS_CAP, 0, bound);
	run_dpor_bounded(&dpor, NULL, &p, 0, bound);
	if (dpor.error || dfs.error || last_most_preemptions > bound)
		ok = 0;
	if (!agrees(&dfs, &dpor))
		ok = 0;
	if (!ok) {
		printf("seed %lu, bound %d: DFS %ld schedules%s, DPOR %ld, at most %d preemptions%s\n",
		       seed, bound, dfs.schedules, dfs.capped ? " (capped)" : "", dpor.schedules,
		       last_most_preemptions, dpor.error ? ", error" : "");
		sim_prog_print(stdout, &p);
		print_outcomes(&dfs, &dpor);
	}
	tot->programs++;
	if (!dfs.capped) {
		tot->complete++;
		tot->dfs += dfs.schedules;
		tot->dpor += dpor.schedules;
	}
	tot->with_failure += dfs.failing > 0;
	result_free(&dfs);
	result_free(&dpor);
	return ok;
}

/* REFERENCE.md's bounded counts: DPOR with the bounds 0, 1 and 2 fails
 * where DFS with the same bound does, and reaches its outcomes. */
static void bounded_dpor_matches_bounded_dfs_on_the_reference_scenarios(void)
{
	size_t i, k;
	int bound;

	for (i = 0; i < sizeof(reference) / sizeof(reference[0]); i++) {
		const struct sim_scenario *sc = sim_find(reference[i].name);

		for (bound = 0; bound <= 2; bound++) {
			struct result dfs, dpor;
			int ok = 1;

			run_dfs_bounded(&dfs, sc, NULL, 0, 0, bound);
			run_dpor_bounded(&dpor, sc, NULL, 0, bound);
			if (sc->want[bound + 1][0]) {
				ok &= CHECK_INT(dfs.schedules, sc->want[bound + 1][0]);
				ok &= CHECK_INT(dfs.failing, sc->want[bound + 1][1]);
			}
			ok &= CHECK(!dpor.error);
			ok &= CHECK(last_most_preemptions <= bound);
			ok &= CHECK(dpor.schedules <= dfs.schedules);
			ok &= CHECK((dpor.failing > 0) == (dfs.failing > 0));
			ok &= CHECK_INT(dpor.outcomes.n, dfs.outcomes.n);
			for (k = 0; k < dfs.outcomes.n; k++)
				ok &= CHECK(strset_has(&dpor.outcomes, dfs.outcomes.s[k]));
			printf("%s, -p %d: DFS %ld schedules (%ld failing), DPOR %ld (%ld failing)%s\n",
			       reference[i].name, bound, dfs.schedules, dfs.failing, dpor.schedules,
			       dpor.failing, ok ? "" : "  <-- FAILED");
			result_free(&dfs);
			result_free(&dpor);
		}
	}
}

/* PLOOM_DPOR_BOUNDED_PROGRAMS programs (1000 by default; make check gives 500), each with the
 * bounds 0, 1 and 2; PLOOM_DPOR_BOUNDED_SEED=N runs program N alone. */
static void bounded_dpor_reaches_the_outcomes_of_bounded_dfs_on_generated_programs(void)
{
	long n = env.bounded_programs, i, failed = 0;
	struct totals tot[3] = {{0}};
	int bound;

	for (i = 0; i < (env.has_bounded_seed ? 1 : n); i++)
		for (bound = 0; bound <= 2; bound++)
			if (!bounded_differential(env.has_bounded_seed ? env.bounded_seed
								       : (unsigned long)i,
						  bound, &tot[bound]) &&
			    ++failed >= 5)
				goto out;
out:
	CHECK_INT(failed, 0);
	if (env.has_bounded_seed)
		return;
	for (bound = 0; bound <= 2; bound++) {
		/* worth comparing: programs that fail within the bound */
		CHECK(bound == 0 || tot[bound].with_failure * 10 >= tot[bound].programs);
		printf("generated programs, -p %d: %ld, %ld with a failure; %ld explored completely "
		       "by DFS (%ld schedules) and by DPOR (%ld schedules: 1/%.1f)\n",
		       bound, tot[bound].programs, tot[bound].with_failure, tot[bound].complete,
		       tot[bound].dfs, tot[bound].dpor,
		       tot[bound].dpor ? (double)tot[bound].dfs / (double)tot[bound].dpor : 0.0);
	}
}

/* The views and the shards under a bound: a third of the view programs'
 * number (at least one), each with the bounds 0, 1 and 2, against DFS
 * with the bound. */
static void bounded_views_and_shards_reach_the_outcomes_of_bounded_dfs(void)
{
	long n = (env.view_programs + 2) / 3, i, failed = 0;
	struct view_totals tot = {0};
	int bound;

	for (i = 0; i < n; i++)
		for (bound = 0; bound <= 2; bound++) {
			tot.programs++;
			if (!views_of(sim_prog_generate, (unsigned long)i, &tot, bound) && ++failed >= 5)
				goto out;
		}
out:
	CHECK_INT(failed, 0);
	CHECK(tot.complete * 100 >= 40 * tot.programs);
	printf("bounded views and shards: %ld searches, %ld explored completely by DFS; serial "
	       "DPOR %ld runs, views x%.3f of it\n", tot.programs, tot.complete, tot.serial,
	       tot.serial ? (double)tot.views / 6.0 / (double)tot.serial : 0.0);
}

int main(void)
{
	read_env();
	if (env.has_seed) {
		dpor_reaches_the_outcomes_of_dfs_on_generated_programs();
		return check_report();
	}
	if (env.has_clock_seed) {
		dpor_reaches_the_outcomes_of_dfs_on_generated_programs_with_a_clock();
		return check_report();
	}
	if (env.has_spawn_seed) {
		dpor_reaches_the_outcomes_of_dfs_on_programs_whose_threads_start_threads();
		return check_report();
	}
	dpor_covers_every_class_of_the_reference_scenarios();
	dpor_reaches_the_outcomes_of_dfs_on_programs_it_once_missed();
	dpor_reaches_the_outcomes_of_dfs_on_generated_programs();
	dpor_reaches_the_outcomes_of_dfs_on_generated_programs_with_a_clock();
	dpor_reaches_the_outcomes_of_dfs_on_programs_whose_threads_start_threads();
	dpor_views_and_shards_reach_the_outcomes_of_dfs();
	bounded_dpor_matches_bounded_dfs_on_the_reference_scenarios();
	bounded_dpor_reaches_the_outcomes_of_bounded_dfs_on_generated_programs();
	bounded_views_and_shards_reach_the_outcomes_of_bounded_dfs();
	return check_report();
}
