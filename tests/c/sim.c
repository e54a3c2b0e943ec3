#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/explore.h"

/* A simulator of the scenario semantics (DESIGN.md, /tmp/proto/sim.py)
 * for the C unit tests; sim.h documents it.
 *
 * A task's body is a coroutine written with the macros below (the
 * protothreads trick): each OP() hands one operation to the scheduler and
 * resumes, with its result in `val`, when the scheduler runs it.  Locals
 * that live across operations are kept in t->loc[]. */

enum op_kind { OP_BEGIN, OP_START, OP_JOIN, OP_ACQUIRE, OP_TRY_ACQUIRE, OP_RELEASE,
	       OP_READ, OP_WRITE, OP_YIELD };

#define NONE (-999)     /* Python's None in a cell */
#define MAX_TASKS 8

struct sim_op {
	enum op_kind kind;
	int obj;
	long v;
};

struct sim_task {
	sim_body body;
	int pc;
	long loc[4];
	int id;         /* -1 until started */
	int done;
	struct sim_op pend;
};

struct sim {
	struct sim_task pool[MAX_TASKS];    /* pool[0] = main, pool[k+1] = thread object k */
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
		*op = (struct sim_op){(k), (o), (value)}; return 1; case __LINE__:; } while (0)
#define ASSERT(c) do { if (!(c)) return -1; } while (0)

/* main of every scenario: start threads 0..n-1, join them, read cell c */
static int start_join(struct sim_task *t, int n, long val, struct sim_op *op)
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
static int bank_main(struct sim *s, struct sim_task *t, long val, struct sim_op *op)
{
	int r = start_join(t, 2, val, op);

	(void)s;
	if (r == 2)
		return val >= 0 ? 0 : -1;
	return r;
}

static int bank_withdraw(struct sim *s, struct sim_task *t, long val, struct sim_op *op)
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
static int abba_main(struct sim *s, struct sim_task *t, long val, struct sim_op *op)
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

static int abba_one(struct sim *s, struct sim_task *t, long val, struct sim_op *op)
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

static int abba_two(struct sim *s, struct sim_task *t, long val, struct sim_op *op)
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
static int counter3_main(struct sim *s, struct sim_task *t, long val, struct sim_op *op)
{
	int r = start_join(t, 3, val, op);

	(void)s;
	if (r == 2)
		return val == 3 ? 0 : -1;
	return r;
}

static int locked_inc(struct sim *s, struct sim_task *t, long val, struct sim_op *op)
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
static int racy_main(struct sim *s, struct sim_task *t, long val, struct sim_op *op)
{
	int r = start_join(t, 2, val, op);

	(void)s;
	if (r == 2)
		return val == 2 ? 0 : -1;
	return r;
}

static int racy_inc(struct sim *s, struct sim_task *t, long val, struct sim_op *op)
{
	(void)s;
	BEGIN;
	OP(OP_READ, 0, 0);
	OP(OP_WRITE, 0, val + 1);
	END;
}

/* try_lock: cell 0 = wins, lock 0 */
static int try_lock_main(struct sim *s, struct sim_task *t, long val, struct sim_op *op)
{
	int r = start_join(t, 2, val, op);

	(void)s;
	if (r == 2)
		return val >= 1 && val <= 2 ? 0 : -1;
	return r;
}

static int try_lock_grab(struct sim *s, struct sim_task *t, long val, struct sim_op *op)
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
static int flag_main(struct sim *s, struct sim_task *t, long val, struct sim_op *op)
{
	int r = start_join(t, 2, val, op);

	(void)s;
	if (r == 2)
		return val == NONE || val == 42 ? 0 : -1;
	return r;
}

static int flag_producer(struct sim *s, struct sim_task *t, long val, struct sim_op *op)
{
	(void)s;
	(void)val;
	BEGIN;
	OP(OP_WRITE, 1, 42);
	OP(OP_WRITE, 2, 1);
	END;
}

static int flag_consumer(struct sim *s, struct sim_task *t, long val, struct sim_op *op)
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

const struct sim_scenario sim_scenarios[] = {
	{"bank with the lock", 1, 2, bank_main, {bank_withdraw, bank_withdraw}, {100},
	 {{127, 0}, {3, 0}, {22, 0}, {55, 0}}, NULL},
	{"bank without the lock", 0, 2, bank_main, {bank_withdraw, bank_withdraw}, {100},
	 {{221, 75}, {3, 0}, {14, 3}, {52, 14}}, "the account is overdrawn"},
	{"abba", 0, 2, abba_main, {abba_one, abba_two}, {0},
	 {{194, 10}, {3, 0}, {19, 2}, {59, 5}}, NULL},
	{"counter3", 0, 3, counter3_main, {locked_inc, locked_inc, locked_inc}, {0},
	 {{53715, 0}, {13, 0}, {313, 0}, {1866, 0}}, NULL},
	{"racy_counter2", 0, 2, racy_main, {racy_inc, racy_inc}, {0},
	 {{69, 30}, {3, 0}, {12, 3}, {32, 10}}, "lost update"},
	{"try_lock", 0, 2, try_lock_main, {try_lock_grab, try_lock_grab}, {0},
	 {{307, 0}, {3, 0}, {24, 0}, {77, 0}}, NULL},
	{"flag_handoff", 0, 2, flag_main, {flag_producer, flag_consumer}, {NONE, NONE, 0},
	 {{488, 0}, {3, 0}, {21, 0}, {76, 0}}, NULL},
};

static const char *const op_names[] = {
	"begin", "start", "join", "acquire", "acquire", "release", "read", "write", "yield_now",
};

/* Runs the task to its next operation; 0 ok, -1 assertion failed. */
static int advance(struct sim *s, struct sim_task *t, long val)
{
	int r = t->body(s, t, val, &t->pend);

	if (r == 1)
		return 0;
	t->done = 1;
	return r < 0 ? -1 : 0;
}

static int is_enabled(const struct sim *s, int id)
{
	const struct sim_task *t = &s->pool[s->order[id]];

	if (t->done)
		return 0;
	if (t->pend.kind == OP_ACQUIRE)
		return s->holder[t->pend.obj] < 0;
	if (t->pend.kind == OP_JOIN)
		return s->pool[t->pend.obj + 1].done;
	return 1;
}

static char *object_name(const struct sim_op *op)
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
void sim_run(struct ploom_run *run, const struct sim_scenario *sc, const int *choices,
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
		run->outcome.exc_type = strdup("builtins.AssertionError");
		run->outcome.exc_message = strdup(sc->message ? sc->message : "");
		goto finish;
	}
	for (;;) {
		int en[MAX_TASKS], nen = 0, c, all_done = 1;
		struct ploom_step *st;
		struct sim_task *t;
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
			run->outcome.task = c;
			run->outcome.exc_type = strdup("builtins.AssertionError");
			run->outcome.exc_message = strdup(sc->message ? sc->message : "");
			break;
		}
	}
finish:
	ploom_run_finish(run, NULL);
}

const size_t sim_nscenarios = sizeof(sim_scenarios) / sizeof(sim_scenarios[0]);

const struct sim_scenario *sim_find(const char *name)
{
	size_t i;

	for (i = 0; i < sim_nscenarios; i++)
		if (!strcmp(sim_scenarios[i].name, name))
			return &sim_scenarios[i];
	abort();
}

int sim_first(struct ploom_run *out, const struct sim_scenario *sc,
	      int (*want)(const struct ploom_run *run, int arg), int arg)
{
	struct ploom_explore *ex = NULL;
	struct ploom_run run;
	const int *prefix;
	size_t n;
	int r = 1, found = -1;

	if (ploom_explore_new(&ex, -1, NULL) < 0)
		abort();
	while (r == 1 && found < 0) {
		prefix = ploom_explore_prefix(ex, &n);
		sim_run(&run, sc, prefix, n);
		r = ploom_explore_next(ex, &run, NULL);
		if (want(&run, arg)) {
			ploom_run_move(out, &run);
			found = 0;
		}
		ploom_run_release(&run);
	}
	ploom_explore_free(ex);
	return found;
}
