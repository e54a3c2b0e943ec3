/* Tests of lib/races: which steps race, which race a failure rests on,
 * and the line that explains it, on the bank's failure, a lock-order
 * deadlock, critical sections of one lock, and runs without a race. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/races.h"
#include "../../lib/trace.h"
#include "check.h"

/* Appends a step of task doing op on obj ("-": none), stopped at line of
 * file's function (file NULL: nowhere known). */
static void step(struct ploom_trace *t, int task, enum ploom_op op, const char *obj,
		 const char *file, int line, const char *function)
{
	struct ploom_step *s = ploom_run_add_step(&t->run);

	s->index = (long)t->run.nsteps - 1;
	s->task = task;
	s->op = op;
	if (strcmp(obj, "-")) {
		s->object = strdup(obj);
		ploom_obj_parse(&s->obj, obj, strlen(obj));
	}
	s->enabled = malloc(sizeof(int));
	s->enabled[0] = task;
	s->nenabled = 1;
	if (file)
		s->where = (struct ploom_where){strdup(file), strdup(function), line};
}

static void name(struct ploom_trace *t, enum ploom_obj_kind kind, long id, const char *n)
{
	ploom_run_set_name(&t->run, (struct ploom_obj){kind, id}, n, NULL);
}

static void fail_in(struct ploom_trace *t, int task)
{
	t->run.outcome.kind = PLOOM_OUTCOME_FAILURE;
	t->run.outcome.task = task;
	t->run.outcome.exc_type = strdup("builtins.AssertionError");
	t->run.outcome.exc_message = strdup("the account is overdrawn");
}

/* The bank's minimized failure, as examples/bank_account.py records it. */
static struct ploom_trace *bank(void)
{
	static const char f[] = "examples/bank_account.py";
	struct ploom_trace *t = ploom_trace_new();

	step(t, 0, PLOOM_OP_START, "thread#1", f, 26, "scenario");
	step(t, 0, PLOOM_OP_START, "thread#2", f, 27, "scenario");
	step(t, 1, PLOOM_OP_BEGIN, "-", f, 20, "withdraw");
	step(t, 1, PLOOM_OP_READ, "cell#0", f, 21, "withdraw");
	step(t, 2, PLOOM_OP_BEGIN, "-", f, 20, "withdraw");
	step(t, 2, PLOOM_OP_READ, "cell#0", f, 21, "withdraw");
	step(t, 2, PLOOM_OP_READ, "cell#0", f, 22, "withdraw");
	step(t, 2, PLOOM_OP_WRITE, "cell#0", f, 22, "withdraw");
	step(t, 1, PLOOM_OP_READ, "cell#0", f, 22, "withdraw");
	step(t, 1, PLOOM_OP_WRITE, "cell#0", f, 22, "withdraw");
	step(t, 0, PLOOM_OP_JOIN, "thread#1", f, 28, "scenario");
	step(t, 0, PLOOM_OP_JOIN, "thread#2", f, 29, "scenario");
	step(t, 0, PLOOM_OP_READ, "cell#0", f, 30, "scenario");
	fail_in(t, 0);
	name(t, PLOOM_OBJ_THREAD, 1, "mathieu");
	name(t, PLOOM_OBJ_THREAD, 2, "lucas");
	name(t, PLOOM_OBJ_CELL, 0, "balance");
	return t;
}

static int is_race(const struct ploom_race *r, long first, long second, long wait)
{
	return r->first == first && r->second == second && r->wait == wait;
}

static void the_bank_races_on_the_balance_and_its_lost_update_explains_it(void)
{
	struct ploom_trace *t = bank();
	struct ploom_race *races = NULL;
	struct ploom_err err = {0, ""};
	size_t n = 0;
	long key;
	char *line;

	CHECK_INT(ploom_trace_races(&races, &n, t, &err), 0);
	/* mathieu's check (3) and lucas's withdrawal (7), which mathieu then
	 * reads (8); the joins wait for the threads' ends and race with
	 * nothing, nor does a thread's begin with its start */
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK(is_race(&races[0], 3, 7, -1));
		CHECK(is_race(&races[1], 7, 8, -1));
		CHECK_INT(races[0].obj.kind, PLOOM_OBJ_CELL);
		CHECK_INT(races[0].obj.id, 0);
	}
	CHECK_INT(ploom_run_failing_step(&t->run), 12);
	/* both on the balance, which the failing step reads; (3, 7) is the
	 * lost update: mathieu writes the balance after lucas did */
	key = ploom_races_key(t, races, n);
	CHECK_INT(key, 0);
	line = key >= 0 ? ploom_race_explain(t, &races[key]) : NULL;
	CHECK_STR(line, "mathieu read balance (examples/bank_account.py:21) before lucas wrote it "
			"(examples/bank_account.py:22)");
	free(line);
	line = n == 2 ? ploom_race_explain(t, &races[1]) : NULL;
	CHECK_STR(line, "lucas wrote balance (examples/bank_account.py:22) before mathieu read it "
			"(examples/bank_account.py:22)");
	free(line);
	free(races);

	/* without the lost update (mathieu does not write back), the race
	 * closest before the failure */
	t->run.steps[9].op = PLOOM_OP_READ;
	CHECK_INT(ploom_trace_races(&races, &n, t, &err), 0);
	key = ploom_races_key(t, races, n);
	CHECK(key >= 0 && is_race(&races[key], 7, 8, -1));
	free(races);
	ploom_trace_free(t);
}

/* Two threads take two locks in opposite orders. */
static struct ploom_trace *abba(void)
{
	static const char f[] = "transfer.py";
	struct ploom_trace *t = ploom_trace_new();
	struct ploom_outcome *o = &t->run.outcome;

	step(t, 0, PLOOM_OP_START, "thread#1", f, 20, "scenario");
	step(t, 0, PLOOM_OP_START, "thread#2", f, 21, "scenario");
	step(t, 1, PLOOM_OP_BEGIN, "-", f, 5, "one");
	step(t, 1, PLOOM_OP_ACQUIRE, "lock#0", f, 6, "one");
	step(t, 2, PLOOM_OP_BEGIN, "-", f, 10, "two");
	step(t, 2, PLOOM_OP_ACQUIRE, "lock#1", f, 11, "two");
	o->kind = PLOOM_OUTCOME_DEADLOCK;
	o->nwaits = 3;
	o->waits = calloc(3, sizeof(*o->waits));
	o->waits[0] = (struct ploom_wait){.task = 0, .op = PLOOM_OP_JOIN,
					  .object = strdup("thread#1"), .holder = 1,
					  .waits_for = PLOOM_WAIT_JOIN};
	o->waits[1] = (struct ploom_wait){.task = 1, .op = PLOOM_OP_ACQUIRE,
					  .object = strdup("lock#1"), .holder = 2,
					  .where = {strdup(f), strdup("one"), 7}};
	o->waits[2] = (struct ploom_wait){.task = 2, .op = PLOOM_OP_ACQUIRE,
					  .object = strdup("lock#0"), .holder = 1,
					  .where = {strdup(f), strdup("two"), 12}};
	name(t, PLOOM_OBJ_THREAD, 1, "mathieu");
	name(t, PLOOM_OBJ_THREAD, 2, "lucas");
	name(t, PLOOM_OBJ_LOCK, 0, "a");
	name(t, PLOOM_OBJ_LOCK, 1, "b");
	return t;
}

static void a_deadlock_races_its_blocked_acquires_with_the_acquires_that_won(void)
{
	struct ploom_trace *t = abba();
	struct ploom_race *races = NULL;
	struct ploom_err err = {0, ""};
	size_t n = 0;
	long key;
	char *line;

	CHECK_INT(ploom_trace_races(&races, &n, t, &err), 0);
	/* the steps take different locks: only the blocked acquires race,
	 * each with the acquire that took its lock; task 0's join races
	 * with nothing */
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK(is_race(&races[0], 3, -1, 2));
		CHECK(is_race(&races[1], 5, -1, 1));
		CHECK_INT(races[1].obj.kind, PLOOM_OBJ_LOCK);
		CHECK_INT(races[1].obj.id, 1);
	}
	CHECK_INT(ploom_run_failing_step(&t->run), -1);
	/* the latest acquire that won */
	key = ploom_races_key(t, races, n);
	CHECK_INT(key, 1);
	line = key >= 0 ? ploom_race_explain(t, &races[key]) : NULL;
	CHECK_STR(line, "lucas acquired b (transfer.py:11) before mathieu could acquire it "
			"(transfer.py:7)");
	free(line);
	line = n == 2 ? ploom_race_explain(t, &races[0]) : NULL;
	CHECK_STR(line, "mathieu acquired a (transfer.py:6) before lucas could acquire it "
			"(transfer.py:12)");
	free(line);
	free(races);
	ploom_trace_free(t);
}

/* Critical sections of one lock race as their acquires, not as a
 * release and the acquire it let run, and order what is inside them. */
static void critical_sections_race_as_their_acquires(void)
{
	struct ploom_trace *t = ploom_trace_new();
	struct ploom_race *races = NULL;
	struct ploom_err err = {0, ""};
	size_t n = 0;

	step(t, 0, PLOOM_OP_START, "thread#1", NULL, 0, NULL);
	step(t, 0, PLOOM_OP_START, "thread#2", NULL, 0, NULL);
	step(t, 1, PLOOM_OP_BEGIN, "-", NULL, 0, NULL);
	step(t, 1, PLOOM_OP_ACQUIRE, "lock#0", NULL, 0, NULL);
	step(t, 1, PLOOM_OP_WRITE, "cell#0", NULL, 0, NULL);
	step(t, 1, PLOOM_OP_RELEASE, "lock#0", NULL, 0, NULL);
	step(t, 2, PLOOM_OP_BEGIN, "-", NULL, 0, NULL);
	step(t, 2, PLOOM_OP_ACQUIRE, "lock#0", NULL, 0, NULL);
	step(t, 2, PLOOM_OP_READ, "cell#0", NULL, 0, NULL);
	step(t, 2, PLOOM_OP_RELEASE, "lock#0", NULL, 0, NULL);
	fail_in(t, 2);
	CHECK_INT(ploom_trace_races(&races, &n, t, &err), 0);
	CHECK_INT(n, 1);
	if (n == 1)
		CHECK(is_race(&races[0], 3, 7, -1));
	/* the failing step, lucas's release, touches the lock */
	CHECK_INT(ploom_races_key(t, races, n), 0);
	if (n == 1) {
		char *line = ploom_race_explain(t, &races[0]);
		/* no places known: none shown */
		CHECK_STR(line, "thread#1 acquired lock#0 before thread#2 acquired it");
		free(line);
	}
	free(races);
	ploom_trace_free(t);
}

/* A thread that wrote and ended, joined before its write is read: every
 * conflict is ordered, so nothing races. */
static void ordered_steps_do_not_race(void)
{
	struct ploom_trace *t = ploom_trace_new();
	struct ploom_race *races = (struct ploom_race *)&races;
	struct ploom_err err = {0, ""};
	size_t n = 7;

	step(t, 0, PLOOM_OP_START, "thread#1", NULL, 0, NULL);
	step(t, 1, PLOOM_OP_BEGIN, "-", NULL, 0, NULL);
	step(t, 1, PLOOM_OP_WRITE, "cell#0", NULL, 0, NULL);
	step(t, 0, PLOOM_OP_JOIN, "thread#1", NULL, 0, NULL);
	step(t, 0, PLOOM_OP_READ, "cell#0", NULL, 0, NULL);
	fail_in(t, 0);
	CHECK_INT(ploom_trace_races(&races, &n, t, &err), 0);
	CHECK_INT(n, 0);
	CHECK(races == NULL);
	CHECK_INT(ploom_races_key(t, races, n), -1);
	ploom_trace_free(t);

	/* a passing run explains nothing, races or not */
	t = bank();
	t->run.outcome.kind = PLOOM_OUTCOME_PASS;
	CHECK_INT(ploom_trace_races(&races, &n, t, &err), 0);
	CHECK_INT(n, 2);
	CHECK_INT(ploom_races_key(t, races, n), -1);
	free(races);
	ploom_trace_free(t);

	/* nor does an empty run */
	t = ploom_trace_new();
	fail_in(t, 0);
	CHECK_INT(ploom_trace_races(&races, &n, t, &err), 0);
	CHECK_INT(n, 0);
	CHECK_INT(ploom_races_key(t, races, n), -1);
	ploom_trace_free(t);
}

/* The end of a thread races with what asks whether it ended. */
static void a_thread_end_races_with_is_alive(void)
{
	struct ploom_trace *t = ploom_trace_new();
	struct ploom_race *races = NULL;
	struct ploom_err err = {0, ""};
	size_t n = 0;

	step(t, 0, PLOOM_OP_START, "thread#1", "w.py", 9, "scenario");
	step(t, 1, PLOOM_OP_BEGIN, "-", "w.py", 3, "work");
	step(t, 1, PLOOM_OP_WRITE, "cell#0", "w.py", 4, "work");
	step(t, 0, PLOOM_OP_IS_ALIVE, "thread#1", "w.py", 10, "scenario");
	t->run.outcome.kind = PLOOM_OUTCOME_EXIT;
	name(t, PLOOM_OBJ_THREAD, 1, "worker");
	/* an exit: the last step is the failing one; the worker is not known
	 * to have ended, so nothing races */
	CHECK_INT(ploom_trace_races(&races, &n, t, &err), 0);
	CHECK_INT(n, 0);
	free(races);
	/* a pass: every task ended, the worker after its write */
	t->run.outcome.kind = PLOOM_OUTCOME_PASS;
	CHECK_INT(ploom_trace_races(&races, &n, t, &err), 0);
	CHECK_INT(n, 1);
	if (n == 1) {
		char *line;
		CHECK(is_race(&races[0], 2, 3, -1));
		CHECK_INT(races[0].obj.kind, PLOOM_OBJ_THREAD);
		line = ploom_race_explain(t, &races[0]);
		CHECK_STR(line, "worker finished (w.py:4) before MainThread checked worker (w.py:10)");
		free(line);
	}
	free(races);
	ploom_trace_free(t);
}

/* Races are ordered by their first step, then their second; a trace too
 * large to analyse is an error, not a wait. */
static void races_come_in_order_and_big_traces_are_refused(void)
{
	struct ploom_trace *t = ploom_trace_new();
	struct ploom_race *races = NULL;
	struct ploom_err err = {0, ""};
	size_t n = 0, i;
	int ok = 1;

	/* four tasks write one cell in turn: each write races with the next */
	for (i = 0; i < 8; i++)
		step(t, (int)(i % 4), PLOOM_OP_WRITE, "cell#3", NULL, 0, NULL);
	t->run.outcome.kind = PLOOM_OUTCOME_PASS;
	CHECK_INT(ploom_trace_races(&races, &n, t, &err), 0);
	CHECK_INT(n, 7);
	for (i = 0; i < n; i++)
		ok &= is_race(&races[i], (long)i, (long)i + 1, -1);
	CHECK(ok);
	free(races);
	ploom_trace_free(t);

	t = ploom_trace_new();
	for (i = 0; i < 4200; i++)
		step(t, (int)i, PLOOM_OP_YIELD_NOW, "-", NULL, 0, NULL);
	CHECK_INT(ploom_trace_races(&races, &n, t, &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_INPUT);
	CHECK_STR(err.msg, "the trace is too large to find its races (4200 steps and waits, "
			   "4200 tasks)");
	CHECK(races == NULL);
	CHECK_INT(n, 0);
	ploom_trace_free(t);
}

int main(void)
{
	the_bank_races_on_the_balance_and_its_lost_update_explains_it();
	a_deadlock_races_its_blocked_acquires_with_the_acquires_that_won();
	critical_sections_race_as_their_acquires();
	ordered_steps_do_not_race();
	a_thread_end_races_with_is_alive();
	races_come_in_order_and_big_traces_are_refused();
	return check_report();
}
