/* Tests of lib/explore: a small simulator of the scenario semantics
 * (DESIGN.md, /tmp/proto/sim.py) produces the runs that drive the
 * search, and every count of REFERENCE.md must come out exactly. */
#include <stdlib.h>
#include <string.h>

#include "../../lib/explore.h"
#include "../../lib/trace.h"
#include "check.h"

/* ---- the simulator ----
 * A task's body is a coroutine written with the macros below (the
 * protothreads trick): each OP() hands one operation to the scheduler and
 * resumes, with its result in `val`, when the scheduler runs it.  Locals
 * that live across operations are kept in t->loc[]. */

enum op_kind { OP_BEGIN, OP_START, OP_JOIN, OP_ACQUIRE, OP_TRY_ACQUIRE, OP_RELEASE,
	       OP_READ, OP_WRITE, OP_YIELD };

#define NONE (-999)     /* Python's None in a cell */
#define MAX_TASKS 8

struct op {
	enum op_kind kind;
	int obj;
	long v;
};

struct sim;
struct task;
typedef int (*body_fn)(struct sim *s, struct task *t, long val, struct op *op);

struct task {
	body_fn body;
	int pc;
	long loc[4];
	int id;         /* -1 until started */
	int done;
	struct op pend;
};

struct sim {
	struct task pool[MAX_TASKS];    /* pool[0] = main, pool[k+1] = thread object k */
	int order[MAX_TASKS];           /* task id -> pool index */
	int ntasks;
	int holder[4];                  /* lock -> holding task, -1 free */
	long cell[4];
	int flag;                       /* scenario variant (bank with lock) */
	int failed;
};

#define BEGIN switch (t->pc) { case 0:
#define END } return 0;
#define OP(k, o, value) do { t->pc = __LINE__; \
		*op = (struct op){(k), (o), (value)}; return 1; case __LINE__:; } while (0)
#define ASSERT(c) do { if (!(c)) return -1; } while (0)

/* main of every scenario: start threads 0..n-1, join them, read cell c */
static int start_join(struct task *t, int n, long val, struct op *op)
{
	BEGIN;
	for (t->loc[0] = 0; t->loc[0] < n; t->loc[0]++)
		OP(OP_START, (int)t->loc[0], 0);
	for (t->loc[0] = 0; t->loc[0] < n; t->loc[0]++)
		OP(OP_JOIN, (int)t->loc[0], 0);
	OP(OP_READ, 0, 0);
	return 2; /* caller checks val */
	END;
	(void)val;
}

/* bank: cell 0 = balance, lock 0 */
static int bank_main(struct sim *s, struct task *t, long val, struct op *op)
{
	int r = start_join(t, 2, val, op);

	(void)s;
	if (r == 2)
		return val >= 0 ? 0 : -1;
	return r;
}

static int bank_withdraw(struct sim *s, struct task *t, long val, struct op *op)
{
	BEGIN;
	if (s->flag)
		OP(OP_ACQUIRE, 0, 0);
	OP(OP_READ, 0, 0);
	if (val >= 100) {
		OP(OP_READ, 0, 0);
		OP(OP_WRITE, 0, val - 100);
	}
	if (s->flag)
		OP(OP_RELEASE, 0, 0);
	END;
}

/* abba: locks 0 (x) and 1 (y); main reads nothing, so it has its own */
static int abba_main(struct sim *s, struct task *t, long val, struct op *op)
{
	(void)s;
	(void)val;
	BEGIN;
	OP(OP_START, 0, 0);
	OP(OP_START, 1, 0);
	OP(OP_JOIN, 0, 0);
	OP(OP_JOIN, 1, 0);
	END;
}

static int abba_one(struct sim *s, struct task *t, long val, struct op *op)
{
	(void)s;
	(void)val;
	BEGIN;
	OP(OP_ACQUIRE, 0, 0);
	OP(OP_ACQUIRE, 1, 0);
	OP(OP_RELEASE, 1, 0);
	OP(OP_RELEASE, 0, 0);
	END;
}

static int abba_two(struct sim *s, struct task *t, long val, struct op *op)
{
	(void)s;
	(void)val;
	BEGIN;
	OP(OP_ACQUIRE, 1, 0);
	OP(OP_ACQUIRE, 0, 0);
	OP(OP_RELEASE, 0, 0);
	OP(OP_RELEASE, 1, 0);
	END;
}

/* counter3: cell 0 = n, lock 0 */
static int counter3_main(struct sim *s, struct task *t, long val, struct op *op)
{
	int r = start_join(t, 3, val, op);

	(void)s;
	if (r == 2)
		return val == 3 ? 0 : -1;
	return r;
}

static int locked_inc(struct sim *s, struct task *t, long val, struct op *op)
{
	(void)s;
	BEGIN;
	OP(OP_ACQUIRE, 0, 0);
	OP(OP_READ, 0, 0);
	OP(OP_WRITE, 0, val + 1);
	OP(OP_RELEASE, 0, 0);
	END;
}

/* racy_counter2: cell 0 = n */
static int racy_main(struct sim *s, struct task *t, long val, struct op *op)
{
	int r = start_join(t, 2, val, op);

	(void)s;
	if (r == 2)
		return val == 2 ? 0 : -1;
	return r;
}

static int racy_inc(struct sim *s, struct task *t, long val, struct op *op)
{
	(void)s;
	BEGIN;
	OP(OP_READ, 0, 0);
	OP(OP_WRITE, 0, val + 1);
	END;
}

/* try_lock: cell 0 = wins, lock 0 */
static int try_lock_main(struct sim *s, struct task *t, long val, struct op *op)
{
	int r = start_join(t, 2, val, op);

	(void)s;
	if (r == 2)
		return val >= 1 && val <= 2 ? 0 : -1;
	return r;
}

static int try_lock_grab(struct sim *s, struct task *t, long val, struct op *op)
{
	(void)s;
	BEGIN;
	OP(OP_TRY_ACQUIRE, 0, 0);
	if (val) {
		OP(OP_READ, 0, 0);
		OP(OP_WRITE, 0, val + 1);
		OP(OP_YIELD, 0, 0);
		OP(OP_RELEASE, 0, 0);
	}
	END;
}

/* flag_handoff: cell 0 = got (read by main), 1 = data, 2 = ready */
static int flag_main(struct sim *s, struct task *t, long val, struct op *op)
{
	int r = start_join(t, 2, val, op);

	(void)s;
	if (r == 2)
		return val == NONE || val == 42 ? 0 : -1;
	return r;
}

static int flag_producer(struct sim *s, struct task *t, long val, struct op *op)
{
	(void)s;
	(void)val;
	BEGIN;
	OP(OP_WRITE, 1, 42);
	OP(OP_WRITE, 2, 1);
	END;
}

static int flag_consumer(struct sim *s, struct task *t, long val, struct op *op)
{
	(void)s;
	BEGIN;
	for (t->loc[0] = 0; t->loc[0] < 3; t->loc[0]++) {
		OP(OP_READ, 2, 0);
		if (val) {
			OP(OP_READ, 1, 0);
			OP(OP_WRITE, 0, val);
			return 0;
		}
		OP(OP_YIELD, 0, 0);
	}
	END;
}

struct scenario {
	const char *name;
	int flag;
	int nthreads;
	body_fn main_body;
	body_fn thread_body[3];
	long cells[3];
	long want[4][2];        /* schedules/failing: no bound, 0, 1, 2 (-1: unknown) */
};

static const struct scenario scenarios[] = {
	{"bank with the lock", 1, 2, bank_main, {bank_withdraw, bank_withdraw}, {100},
	 {{127, 0}, {3, 0}, {22, 0}, {55, 0}}},
	{"bank without the lock", 0, 2, bank_main, {bank_withdraw, bank_withdraw}, {100},
	 {{221, 75}, {3, 0}, {14, 3}, {52, 14}}},
	{"abba", 0, 2, abba_main, {abba_one, abba_two}, {0},
	 {{194, 10}, {3, 0}, {19, 2}, {59, 5}}},
	{"counter3", 0, 3, counter3_main, {locked_inc, locked_inc, locked_inc}, {0},
	 {{53715, 0}, {13, 0}, {313, 0}, {1866, 0}}},
	{"racy_counter2", 0, 2, racy_main, {racy_inc, racy_inc}, {0},
	 {{69, 30}, {3, 0}, {12, 3}, {32, 10}}},
	{"try_lock", 0, 2, try_lock_main, {try_lock_grab, try_lock_grab}, {0},
	 {{307, 0}, {3, 0}, {24, 0}, {77, 0}}},
	{"flag_handoff", 0, 2, flag_main, {flag_producer, flag_consumer}, {NONE, NONE, 0},
	 {{488, 0}, {3, 0}, {21, 0}, {76, 0}}},
};

static const char *const op_names[] = {
	"begin", "start", "join", "acquire", "acquire", "release", "read", "write", "yield_now",
};

/* Runs the task to its next operation; 0 ok, -1 assertion failed. */
static int advance(struct sim *s, struct task *t, long val)
{
	int r = t->body(s, t, val, &t->pend);

	if (r == 1)
		return 0;
	t->done = 1;
	return r < 0 ? -1 : 0;
}

static int is_enabled(const struct sim *s, int id)
{
	const struct task *t = &s->pool[s->order[id]];

	if (t->done)
		return 0;
	if (t->pend.kind == OP_ACQUIRE)
		return s->holder[t->pend.obj] < 0;
	if (t->pend.kind == OP_JOIN)
		return s->pool[t->pend.obj + 1].done;
	return 1;
}

static char *object_name(const struct op *op)
{
	char buf[32];

	switch (op->kind) {
	case OP_BEGIN:
	case OP_YIELD:
		return NULL;
	case OP_START:
	case OP_JOIN:
		snprintf(buf, sizeof(buf), "thread#%d", op->obj + 1);
		break;
	case OP_ACQUIRE:
	case OP_TRY_ACQUIRE:
	case OP_RELEASE:
		snprintf(buf, sizeof(buf), "lock#%d", op->obj);
		break;
	default:
		snprintf(buf, sizeof(buf), "cell#%d", op->obj);
		break;
	}
	return strdup(buf);
}

/* One schedule following choices, then defaults, into *run (finished). */
static void simulate(struct ploom_run *run, const struct scenario *sc, const int *choices,
		     size_t nchoices)
{
	struct sim s;
	size_t ci = 0;
	int prev = 0, i, k;
	long index = 0;

	memset(&s, 0, sizeof(s));
	memset(run, 0, sizeof(*run));
	s.flag = sc->flag;
	for (i = 0; i < 4; i++)
		s.holder[i] = -1;
	for (i = 0; i < 3; i++)
		s.cell[i] = sc->cells[i];
	s.pool[0].body = sc->main_body;
	for (i = 0; i < sc->nthreads; i++) {
		s.pool[i + 1].body = sc->thread_body[i];
		s.pool[i + 1].id = -1;
	}
	s.ntasks = 1;
	s.order[0] = 0;
	if (advance(&s, &s.pool[0], 0) < 0) {
		run->outcome.kind = PLOOM_OUTCOME_FAILURE;
		goto finish;
	}
	for (;;) {
		int en[MAX_TASKS], nen = 0, c, all_done = 1;
		struct ploom_step *st;
		struct task *t;
		long val = 0;

		for (i = 0; i < s.ntasks; i++) {
			if (is_enabled(&s, i))
				en[nen++] = i;
			if (!s.pool[s.order[i]].done)
				all_done = 0;
		}
		if (!nen) {
			run->outcome.kind = all_done ? PLOOM_OUTCOME_PASS : PLOOM_OUTCOME_DEADLOCK;
			break;
		}
		c = en[0];
		if (nen > 1) {
			int d = en[0];
			for (k = 0; k < nen; k++)
				if (en[k] == prev)
					d = prev;
			c = ci < nchoices ? choices[ci++] : d;
		}
		t = &s.pool[s.order[c]];
		st = ploom_run_add_step(run);
		st->index = index++;
		st->task = c;
		st->op = strdup(op_names[t->pend.kind]);
		st->object = object_name(&t->pend);
		st->nonblocking = t->pend.kind == OP_TRY_ACQUIRE;
		st->enabled = malloc((size_t)nen * sizeof(int));
		memcpy(st->enabled, en, (size_t)nen * sizeof(int));
		st->nenabled = (size_t)nen;
		prev = c;
		switch (t->pend.kind) {
		case OP_START:
			s.pool[t->pend.obj + 1].id = s.ntasks;
			s.order[s.ntasks++] = t->pend.obj + 1;
			s.pool[t->pend.obj + 1].pend.kind = OP_BEGIN;
			break;
		case OP_ACQUIRE:
			s.holder[t->pend.obj] = c;
			break;
		case OP_TRY_ACQUIRE:
			val = s.holder[t->pend.obj] < 0;
			if (val)
				s.holder[t->pend.obj] = c;
			break;
		case OP_RELEASE:
			s.holder[t->pend.obj] = -1;
			break;
		case OP_READ:
			val = s.cell[t->pend.obj];
			break;
		case OP_WRITE:
			s.cell[t->pend.obj] = t->pend.v;
			break;
		default:
			break;
		}
		if (advance(&s, t, val) < 0) {
			run->outcome.kind = PLOOM_OUTCOME_FAILURE;
			run->outcome.exc_type = strdup("builtins.AssertionError");
			run->outcome.exc_message = strdup("");
			break;
		}
	}
finish:
	ploom_run_finish(run, NULL);
}

/* Explores the scenario exhaustively with the bound and counts. */
static int explore_count(const struct scenario *sc, int bound, long *out_failing)
{
	struct ploom_explore *ex = NULL;
	struct ploom_run run;
	struct ploom_err err = {0, ""};
	const int *prefix;
	size_t n;
	long schedules = 0;
	int r;

	*out_failing = 0;
	if (ploom_explore_new(&ex, bound, &err) < 0)
		return -1;
	do {
		prefix = ploom_explore_prefix(ex, &n);
		simulate(&run, sc, prefix, n);
		schedules++;
		if (ploom_outcome_is_failure(run.outcome.kind))
			(*out_failing)++;
		r = ploom_explore_next(ex, &run, &err);
		ploom_run_release(&run);
	} while (r == 1);
	ploom_explore_free(ex);
	if (r < 0) {
		printf("explore error: %s\n", err.msg);
		return -1;
	}
	return (int)schedules;
}

static void explore_counts_match_reference(void)
{
	size_t i;
	int b;

	for (i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		for (b = 0; b < 4; b++) {
			const struct scenario *sc = &scenarios[i];
			long failing, schedules;
			schedules = explore_count(sc, b - 1, &failing);
			if (!CHECK_INT(schedules, sc->want[b][0]) ||
			    !CHECK_INT(failing, sc->want[b][1]))
				printf("  (%s, max_preemptions %d)\n", sc->name, b - 1);
		}
	}
}

static void first_schedule_takes_the_default_choices(void)
{
	struct ploom_explore *ex = NULL;
	struct ploom_run run;
	size_t n;

	CHECK(ploom_explore_new(&ex, -1, NULL) == 0);
	ploom_explore_prefix(ex, &n);
	CHECK_INT(n, 0);
	/* the bank's default schedule: main starts both, keeps running until
	 * it blocks on join, then thread 1 runs to the end, then thread 2 */
	simulate(&run, &scenarios[1], NULL, 0);
	CHECK_INT(run.preemptions, 0);
	CHECK_INT(run.outcome.kind, PLOOM_OUTCOME_PASS);
	CHECK_STR(run.outcome.summary, "pass");
	CHECK_INT(run.steps[0].task, 0);
	CHECK_STR(run.steps[0].op, "start");
	CHECK_STR(run.steps[0].object, "thread#1");
	CHECK(ploom_explore_next(ex, &run, NULL) == 1);
	ploom_run_release(&run);
	ploom_explore_free(ex);
}

static void second_schedule_backtracks_at_the_deepest_branch(void)
{
	struct ploom_explore *ex = NULL;
	struct ploom_run run;
	const int *prefix;
	size_t n, i;

	CHECK(ploom_explore_new(&ex, -1, NULL) == 0);
	simulate(&run, &scenarios[4], NULL, 0);
	CHECK(ploom_explore_next(ex, &run, NULL) == 1);
	prefix = ploom_explore_prefix(ex, &n);
	/* same choices as the first run up to the last branch, then another */
	CHECK(n >= 1 && n <= run.nchoices);
	for (i = 0; n && i + 1 < n; i++)
		CHECK_INT(prefix[i], run.choices[i]);
	CHECK(n && prefix[n - 1] != run.choices[n - 1]);
	ploom_run_release(&run);
	ploom_explore_free(ex);
}

static void a_run_that_ignores_the_prefix_is_a_divergence(void)
{
	struct ploom_explore *ex = NULL;
	struct ploom_err err = {0, ""};
	struct ploom_run run;
	size_t n;

	CHECK(ploom_explore_new(&ex, -1, NULL) == 0);
	simulate(&run, &scenarios[4], NULL, 0);
	CHECK(ploom_explore_next(ex, &run, NULL) == 1);
	ploom_explore_prefix(ex, &n);
	CHECK(n > 0);
	/* the first schedule again: it does not follow the new prefix */
	CHECK(ploom_explore_next(ex, &run, &err) == -1);
	CHECK_INT(err.code, 4);
	CHECK(strstr(err.msg, "was asked for") != NULL);
	ploom_run_release(&run);
	ploom_explore_free(ex);
}

static void preemptions_are_counted_against_the_previous_task(void)
{
	struct ploom_run run;
	int choices[] = {1};

	/* racy_counter2: at the first branch (after main started thread 1)
	 * picking task 1 switches away from main, which is still enabled */
	simulate(&run, &scenarios[4], choices, 1);
	CHECK_INT(run.choices[0], 1);
	CHECK(run.preemptions >= 1);
	ploom_run_release(&run);
}

static void a_deadlock_schedule_replays_from_its_choices(void)
{
	struct ploom_explore *ex = NULL;
	struct ploom_run run, again;
	const int *prefix;
	size_t n;
	int found = 0, r = 1;

	/* abba: search to the first deadlock, then run its choices again */
	CHECK(ploom_explore_new(&ex, -1, NULL) == 0);
	while (r == 1 && !found) {
		prefix = ploom_explore_prefix(ex, &n);
		simulate(&run, &scenarios[2], prefix, n);
		if (run.outcome.kind == PLOOM_OUTCOME_DEADLOCK) {
			found = 1;
			simulate(&again, &scenarios[2], run.choices, run.nchoices);
			CHECK_INT(again.outcome.kind, PLOOM_OUTCOME_DEADLOCK);
			CHECK_INT(again.nsteps, run.nsteps);
			CHECK_INT(again.preemptions, run.preemptions);
			ploom_run_release(&again);
		}
		r = ploom_explore_next(ex, &run, NULL);
		ploom_run_release(&run);
	}
	CHECK(found);
	ploom_explore_free(ex);
}

int main(void)
{
	first_schedule_takes_the_default_choices();
	second_schedule_backtracks_at_the_deepest_branch();
	a_run_that_ignores_the_prefix_is_a_divergence();
	preemptions_are_counted_against_the_previous_task();
	a_deadlock_schedule_replays_from_its_choices();
	explore_counts_match_reference();
	return check_report();
}
