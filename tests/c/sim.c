#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/search/explore.h"
#include "../../lib/policy.h"

/* A simulator of the scenario semantics (DESIGN.md, /tmp/proto/sim.py)
 * for the C unit tests; sim.h documents it.
 *
 * A task's body is a coroutine written with the macros below (the
 * protothreads trick): each OP() hands one operation to the scheduler and
 * resumes, with its result in `val`, when the scheduler runs it.  Locals
 * that live across operations are kept in t->loc[]. */

enum op_kind { OP_BEGIN, OP_START, OP_JOIN, OP_TIMED_JOIN, OP_ACQUIRE, OP_TRY_ACQUIRE,
	       OP_TIMED_ACQUIRE, OP_RELEASE, OP_READ, OP_WRITE, OP_YIELD, OP_IS_ALIVE, OP_LOCKED,
	       OP_SLEEP, OP_CLOCK };

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
	long cell[4];                   /* cell[3]: the clock (no program has 4 cells) */
	int flag;                       /* scenario variant (bank with lock) */
	int failed;
	const struct sim_prog *prog;    /* a generated program, or NULL */
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

/* ---- generated programs ---- */

/* main: start every thread it is the starter of in order, then join those
 * in join_mask */
static int prog_main(struct sim *s, struct sim_task *t, long val, struct sim_op *op)
{
	(void)val;
	BEGIN;
	for (t->loc[0] = 0; t->loc[0] < s->prog->nthreads; t->loc[0]++)
		if (!s->prog->starter[t->loc[0]])
			OP(OP_START, (int)t->loc[0], 0);
	for (t->loc[0] = 0; t->loc[0] < s->prog->nthreads; t->loc[0]++)
		if (s->prog->join_mask & (1 << t->loc[0]))
			OP(OP_JOIN, (int)t->loc[0], 0);
	END;
}

/* A thread interprets its code: t->loc[0] is the next instruction,
 * t->loc[1] the register (the last value read), t->loc[2] the thread's
 * index.  t->pc is 0 before the first operation, 1 after. */
static int prog_thread(struct sim *s, struct sim_task *t, long val, struct sim_op *op)
{
	const struct sim_instr *code = s->prog->code[t->loc[2]];
	int len = s->prog->len[t->loc[2]];

	if (t->pc) {
		/* the result of the operation that just ran */
		const struct sim_instr *done = &code[t->loc[0] - 1];
		switch (done->kind) {
		case PI_READ:
		case PI_IS_ALIVE:
		case PI_TIMED_JOIN:
		case PI_LOCKED:
		case PI_CLOCK:
			t->loc[1] = val;
			break;
		case PI_TRY:
		case PI_TIMED:
			if (!val)
				t->loc[0] += done->arg;
			break;
		default:
			break;
		}
	}
	t->pc = 1;
	while (t->loc[0] < len) {
		const struct sim_instr *in = &code[t->loc[0]++];
		switch (in->kind) {
		case PI_READ:
			*op = (struct sim_op){OP_READ, in->obj, 0};
			return 1;
		case PI_WRITE:
			*op = (struct sim_op){OP_WRITE, in->obj, in->arg < 0 ? t->loc[1] + 1 : in->arg};
			return 1;
		case PI_ACQ:
			*op = (struct sim_op){OP_ACQUIRE, in->obj, 0};
			return 1;
		case PI_TRY:
			*op = (struct sim_op){OP_TRY_ACQUIRE, in->obj, 0};
			return 1;
		case PI_TIMED:
			*op = (struct sim_op){OP_TIMED_ACQUIRE, in->obj, 0};
			return 1;
		case PI_REL:
			*op = (struct sim_op){OP_RELEASE, in->obj, 0};
			return 1;
		case PI_YIELD:
			*op = (struct sim_op){OP_YIELD, 0, 0};
			return 1;
		case PI_JOIN:
			*op = (struct sim_op){OP_JOIN, in->obj, 0};
			return 1;
		case PI_TIMED_JOIN:
			*op = (struct sim_op){OP_TIMED_JOIN, in->obj, 0};
			return 1;
		case PI_IS_ALIVE:
			*op = (struct sim_op){OP_IS_ALIVE, in->obj, 0};
			return 1;
		case PI_LOCKED:
			*op = (struct sim_op){OP_LOCKED, in->obj, 0};
			return 1;
		case PI_SLEEP:
			*op = (struct sim_op){OP_SLEEP, 0, in->arg};
			return 1;
		case PI_CLOCK:
			*op = (struct sim_op){OP_CLOCK, 0, 0};
			return 1;
		case PI_START:
			*op = (struct sim_op){OP_START, in->obj, 0};
			return 1;
		case PI_ASSERT_NE:
			if (t->loc[1] == in->arg)
				return -1;
			break;
		}
	}
	return 0;
}

static unsigned long rng_next(unsigned long *st)
{
	/* xorshift64*: deterministic from the seed, on every machine */
	*st ^= *st >> 12;
	*st ^= *st << 25;
	*st ^= *st >> 27;
	return (*st * 2685821657736338717UL) >> 33;
}

static int rng_below(unsigned long *st, int n)
{
	return (int)(rng_next(st) % (unsigned long)n);
}

void sim_prog_generate(struct sim_prog *p, unsigned long seed, int max_ops)
{
	unsigned long st = seed * 0x9E3779B97F4A7C15UL + 1;
	int k, i, total = 0, per_thread;

	memset(p, 0, sizeof(*p));
	rng_next(&st);
	k = rng_below(&st, 20);
	p->nthreads = k < 11 ? 2 : k < 17 ? 3 : 4;
	/* the more threads, the fewer operations each: plain DFS must finish */
	/* the more threads, the fewer operations each, so that plain DFS ends */
	per_thread = p->nthreads == 2 ? 6 : p->nthreads == 3 ? 3 : 2;
	p->ncells = 1 + rng_below(&st, 3);
	p->nlocks = 1 + rng_below(&st, 2);
	p->join_mask = rng_below(&st, 1 << p->nthreads);
	for (k = 0; k < p->nthreads; k++) {
		struct sim_instr *c = p->code[k];
		int want = 2 + rng_below(&st, per_thread - 1), n = 0, ops = 0, held[2] = {0, 0};
		int have_reg = 0;
		int budget = max_ops - total - 2 * (p->nthreads - k - 1);

		if (want > budget)
			want = budget < 2 ? 2 : budget;
		while (ops < want && n < SIM_PROG_MAX - 4) {
			int r = rng_below(&st, 100), l = rng_below(&st, p->nlocks);
			int cell = rng_below(&st, p->ncells);

			if (r < 18) {
				c[n++] = (struct sim_instr){PI_READ, cell, 0};
				have_reg = 1;
			} else if (r < 32) {
				c[n++] = (struct sim_instr){PI_WRITE, cell,
							    (short)(have_reg && rng_below(&st, 2) ? -1 : 1 + rng_below(&st, 2))};
			} else if (r < 46 && !held[l]) {
				c[n++] = (struct sim_instr){PI_ACQ, l, 0};
				held[l] = 1;
			} else if (r < 56 && held[l]) {
				c[n++] = (struct sim_instr){PI_REL, l, 0};
				held[l] = 0;
			} else if (r < 62 && !held[l] && n < SIM_PROG_MAX - 6 && want - ops >= 3) {
				/* if l.acquire(blocking=False): write; release, or
				 * the same with acquire(timeout=T), which the
				 * scheduler treats alike but records as timed.  The
				 * kind comes from r, not a draw of its own, so a seed
				 * still gives the programs it gave before timed
				 * acquires. */
				c[n++] = (struct sim_instr){r < 59 ? PI_TRY : PI_TIMED, l, 2};
				c[n++] = (struct sim_instr){PI_WRITE, cell, (short)(1 + rng_below(&st, 2))};
				c[n++] = (struct sim_instr){PI_REL, l, 0};
				ops += 2;
			} else if (r < 65) {
				c[n++] = (struct sim_instr){PI_YIELD, 0, 0};
			} else if (r < 72 && k > 0) {
				/* join, or join(timeout=T) then is_alive(): the
				 * kind from r, as for timed acquires above */
				c[n++] = (struct sim_instr){r < 70 ? PI_JOIN : PI_TIMED_JOIN,
							    rng_below(&st, k), 0};
				if (r >= 70)
					have_reg = 1;
			} else if (r < 76 && k > 0) {
				c[n++] = (struct sim_instr){PI_IS_ALIVE, rng_below(&st, k), 0};
				have_reg = 1;
			} else if (r < 80) {
				c[n++] = (struct sim_instr){PI_LOCKED, l, 0};
				have_reg = 1;
			} else if (have_reg) {
				c[n++] = (struct sim_instr){PI_ASSERT_NE, 0, (short)rng_below(&st, 3)};
				continue;
			} else {
				continue;
			}
			ops++;
		}
		/* release what is held, mostly: a thread may end holding a lock */
		for (i = 0; i < 2; i++)
			if (held[i] && rng_below(&st, 8))
				c[n++] = (struct sim_instr){PI_REL, (unsigned char)i, 0};
		p->len[k] = n;
		total += ops;
	}
}

void sim_prog_generate_clock(struct sim_prog *p, unsigned long seed, int max_ops)
{
	/* a stream of its own: the program is sim_prog_generate()'s */
	unsigned long st = seed * 0xBF58476D1CE4E5B9UL + 7;
	int k, i;

	sim_prog_generate(p, seed, max_ops);
	rng_next(&st);
	for (k = 0; k < p->nthreads; k++)
		for (i = 0; i < p->len[k]; i++) {
			struct sim_instr *in = &p->code[k][i];
			if (in->kind == PI_YIELD)
				*in = (struct sim_instr){PI_SLEEP, 0, (short)(1 + rng_below(&st, 2))};
			else if (in->kind == PI_LOCKED || (in->kind == PI_READ && rng_below(&st, 3) == 0))
				*in = (struct sim_instr){PI_CLOCK, 0, 0};
			else if (in->kind == PI_WRITE && in->arg > 0 && rng_below(&st, 4) == 0)
				*in = (struct sim_instr){PI_SLEEP, 0, in->arg};
		}
}

/* Inserts `start thread j` into thread k's code at a point drawn from st,
 * never inside a try or timed acquire's block, whose skip counts stay. */
static void insert_start(struct sim_prog *p, unsigned long *st, int k, int j)
{
	struct sim_instr *c = p->code[k];
	int at[SIM_PROG_MAX + 1], n = 0, i;

	if (p->len[k] >= SIM_PROG_MAX)
		return;
	for (i = 0; i <= p->len[k]; i++)
		if (!(i >= 1 && (c[i - 1].kind == PI_TRY || c[i - 1].kind == PI_TIMED)) &&
		    !(i >= 2 && (c[i - 2].kind == PI_TRY || c[i - 2].kind == PI_TIMED)))
			at[n++] = i;
	i = at[rng_below(st, n)];
	memmove(&c[i + 1], &c[i], (size_t)(p->len[k] - i) * sizeof(*c));
	c[i] = (struct sim_instr){PI_START, (unsigned char)j, 0};
	p->len[k]++;
	p->starter[j] = k + 1;
	p->join_mask &= ~(1 << j);
}

void sim_prog_generate_spawn(struct sim_prog *p, unsigned long seed, int max_ops)
{
	/* a stream of its own: the program is sim_prog_generate()'s */
	unsigned long st = seed * 0xD6E8FEB86659FD93UL + 11;
	int last, k, i;

	sim_prog_generate(p, seed, max_ops);
	rng_next(&st);
	last = p->nthreads - 1;
	if (p->nthreads == 4 && rng_below(&st, 2))
		insert_start(p, &st, rng_below(&st, 2), 2);
	insert_start(p, &st, rng_below(&st, last), last);
	for (k = 0; k < p->nthreads; k++)
		for (i = 0; i < p->len[k]; i++) {
			struct sim_instr *in = &p->code[k][i];
			if ((in->kind == PI_JOIN || in->kind == PI_TIMED_JOIN ||
			     in->kind == PI_IS_ALIVE) && p->starter[in->obj])
				*in = (struct sim_instr){PI_READ, 0, 0};
		}
}

static const char *const pi_names[] = {
	[PI_READ] = "read", [PI_WRITE] = "write", [PI_ACQ] = "acquire", [PI_REL] = "release",
	[PI_TRY] = "try", [PI_TIMED] = "timed", [PI_YIELD] = "yield", [PI_JOIN] = "join",
	[PI_TIMED_JOIN] = "timed_join", [PI_IS_ALIVE] = "is_alive",
	[PI_LOCKED] = "locked", [PI_ASSERT_NE] = "assert_ne",
	[PI_SLEEP] = "sleep", [PI_CLOCK] = "clock", [PI_START] = "start",
};

void sim_prog_print(FILE *f, const struct sim_prog *p)
{
	int k, i;

	fprintf(f, "  %d cells, %d locks, main joins mask %d\n", p->ncells, p->nlocks,
		p->join_mask);
	for (k = 0; k < p->nthreads; k++) {
		fprintf(f, "  thread %d:", k + 1);
		for (i = 0; i < p->len[k]; i++)
			fprintf(f, " %s(%d,%d)", pi_names[p->code[k][i].kind], p->code[k][i].obj,
				p->code[k][i].arg);
		fprintf(f, "\n");
	}
}

/* ---- the scheduler ---- */

static const enum ploom_op ploom_ops[] = {
	[OP_BEGIN] = PLOOM_OP_BEGIN, [OP_START] = PLOOM_OP_START, [OP_JOIN] = PLOOM_OP_JOIN,
	[OP_TIMED_JOIN] = PLOOM_OP_JOIN,
	[OP_ACQUIRE] = PLOOM_OP_ACQUIRE, [OP_TRY_ACQUIRE] = PLOOM_OP_ACQUIRE,
	[OP_TIMED_ACQUIRE] = PLOOM_OP_ACQUIRE,
	[OP_RELEASE] = PLOOM_OP_RELEASE, [OP_READ] = PLOOM_OP_READ, [OP_WRITE] = PLOOM_OP_WRITE,
	[OP_YIELD] = PLOOM_OP_YIELD_NOW, [OP_IS_ALIVE] = PLOOM_OP_IS_ALIVE,
	[OP_LOCKED] = PLOOM_OP_LOCKED,
	[OP_SLEEP] = PLOOM_OP_SLEEP, [OP_CLOCK] = PLOOM_OP_READ,
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
	/* the rest, timed or nonblocking acquires and timed joins included */
	return 1;
}

static struct ploom_obj object_of(const struct sim *s, const struct sim_op *op, int task)
{
	switch (op->kind) {
	case OP_BEGIN:
	case OP_YIELD:
		return (struct ploom_obj){PLOOM_OBJ_NONE, 0};
	case OP_SLEEP:
	case OP_CLOCK:
		return (struct ploom_obj){PLOOM_OBJ_CLOCK, 0};
	case OP_START:
		/* a thread is named by the task id it gets: start order */
		return (struct ploom_obj){PLOOM_OBJ_THREAD,
					  s->pool[op->obj + 1].id >= 0 ? s->pool[op->obj + 1].id
								      : s->ntasks};
	case OP_JOIN:
	case OP_TIMED_JOIN:
	case OP_IS_ALIVE:
		return (struct ploom_obj){PLOOM_OBJ_THREAD, s->pool[op->obj + 1].id};
	case OP_ACQUIRE:
	case OP_TRY_ACQUIRE:
	case OP_TIMED_ACQUIRE:
	case OP_RELEASE:
	case OP_LOCKED:
		return (struct ploom_obj){PLOOM_OBJ_LOCK, op->obj};
	default:
		(void)task;
		return (struct ploom_obj){PLOOM_OBJ_CELL, op->obj};
	}
}

static char *object_name(struct ploom_obj o)
{
	char buf[32];

	if (o.kind == PLOOM_OBJ_NONE)
		return NULL;
	ploom_obj_format(buf, sizeof(buf), o);
	return strdup(buf);
}

/* A wait record for every unfinished task that is not enabled. */
static void add_waits(struct ploom_run *run, const struct sim *s)
{
	int i;

	for (i = 0; i < s->ntasks; i++) {
		const struct sim_task *w = &s->pool[s->order[i]];
		struct ploom_wait *wt;
		if (w->done || is_enabled(s, i))
			continue;
		run->outcome.waits = realloc(run->outcome.waits,
					     (run->outcome.nwaits + 1) * sizeof(*wt));
		wt = &run->outcome.waits[run->outcome.nwaits++];
		memset(wt, 0, sizeof(*wt));
		wt->task = i;
		wt->op = ploom_ops[w->pend.kind];
		wt->object = object_name(object_of(s, &w->pend, i));
		wt->holder = w->pend.kind == OP_JOIN ? s->pool[w->pend.obj + 1].id
						     : s->holder[w->pend.obj];
	}
}

static void set_failure(struct ploom_run *run, int task, const char *msg)
{
	run->outcome.kind = PLOOM_OUTCOME_FAILURE;
	run->outcome.task = task;
	run->outcome.exc_type = strdup("builtins.AssertionError");
	run->outcome.exc_message = strdup(msg);
}

static void pending_accesses(const struct sim *s, int id,
			     struct ploom_access out[PLOOM_ACCESS_MAX], int *n)
{
	const struct sim_task *t = &s->pool[s->order[id]];

	*n = ploom_pending_accesses(out, id, ploom_ops[t->pend.kind], object_of(s, &t->pend, id));
}

/* sim_exec(), with a policy past the choices when policy is not NULL. */
static void exec_run(struct ploom_run *run, const struct sim_scenario *sc,
		     const struct sim_prog *prog, const int *choices, size_t nchoices,
		     const int *sleep, size_t nsleep, long final_cells[4],
		     const struct ploom_policy_spec *policy)
{
	struct ploom_policy pol;
	struct sim s;
	size_t ci = 0, i2;
	int prev = 0, i, k, sleep_active = 0, last_task = -1, nla = 0;
	char asleep[MAX_TASKS] = {0}, msg[32];
	struct ploom_access la[PLOOM_ACCESS_MAX];
	long index = 0;

	memset(&s, 0, sizeof(s));
	memset(run, 0, sizeof(*run));
	s.prog = prog;
	s.flag = sc ? sc->flag : 0;
	for (i = 0; i < 4; i++)
		s.holder[i] = -1;
	for (i = 0; i < 3; i++)
		s.cell[i] = sc ? sc->cells[i] : 0;
	s.pool[0].body = sc ? sc->main_body : prog_main;
	for (i = 0; i < (sc ? sc->nthreads : prog->nthreads); i++) {
		s.pool[i + 1].body = sc ? sc->thread_body[i] : prog_thread;
		s.pool[i + 1].id = -1;
		s.pool[i + 1].loc[2] = i;
	}
	s.ntasks = 1;
	s.order[0] = 0;
	if (policy && (ploom_policy_init(&pol, policy, NULL) < 0 ||
		       ploom_policy_add_task(&pol, 0, NULL) < 0))
		abort();
	if (!nchoices && nsleep) {
		sleep_active = 1;
		for (i2 = 0; i2 < nsleep; i2++)
			if (sleep[i2] < MAX_TASKS)
				asleep[sleep[i2]] = 1;
	}
	if (advance(&s, &s.pool[0], 0) < 0) {
		set_failure(run, 0, sc && sc->message ? sc->message : "main");
		goto finish;
	}
	for (;;) {
		int en[MAX_TASKS], nen = 0, c = -1, all_done = 1, np = 0;
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
			add_waits(run, &s);
			break;
		}
		if (sleep_active && last_task >= 0) {
			struct ploom_access mine[PLOOM_ACCESS_MAX];
			int nm;
			for (i = 0; i < s.ntasks; i++) {
				if (!asleep[i] || s.pool[s.order[i]].done)
					continue;
				pending_accesses(&s, i, mine, &nm);
				if (ploom_conflicts(la, nla, mine, nm))
					asleep[i] = 0;
			}
		}
		if (nen == 1 && !(sleep_active && asleep[en[0]]) && !(ci < nchoices && choices[ci] < 0)) {
			c = en[0];
		} else if ((ci < nchoices && choices[ci] < 0) || (nen > 1 && ci < nchoices)) {
			/* a branch point's choice, or a forced step (event.h) */
			c = choices[ci] < 0 ? -1 - choices[ci] : choices[ci];
			ci++;
			for (k = 0; k < nen && en[k] != c; k++)
				;
			if (k == nen) {
				run->outcome.kind = PLOOM_OUTCOME_DIVERGENCE;
				run->outcome.divergence_index = index;
				run->outcome.divergence_message = strdup("not enabled");
				break;
			}
			if (ci == nchoices && nsleep) {
				sleep_active = 1;
				for (i2 = 0; i2 < nsleep; i2++)
					if (sleep[i2] < MAX_TASKS)
						asleep[sleep[i2]] = 1;
			}
		} else if (policy) {
			int cand[MAX_TASKS], ncand = 0;

			for (k = 0; k < nen; k++)
				if (!(sleep_active && asleep[en[k]]))
					cand[ncand++] = en[k];
			if (ncand)
				c = ploom_policy_choose(&pol, index, cand, (size_t)ncand, prev);
			if (c < 0) {
				run->outcome.kind = PLOOM_OUTCOME_SLEEP_BLOCKED;
				run->outcome.divergence_index = index;
				add_waits(run, &s);
				break;
			}
		} else {
			for (k = 0; k < nen; k++) {
				if (sleep_active && asleep[en[k]])
					continue;
				if (en[k] == prev) {
					c = prev;
					break;
				}
				if (c < 0)
					c = en[k];
			}
			if (c < 0) {
				run->outcome.kind = PLOOM_OUTCOME_SLEEP_BLOCKED;
				run->outcome.divergence_index = index;
				add_waits(run, &s);
				break;
			}
		}
		t = &s.pool[s.order[c]];
		st = ploom_run_add_step(run);
		st->index = index++;
		st->task = c;
		st->op = ploom_ops[t->pend.kind];
		st->obj = object_of(&s, &t->pend, c);
		st->object = object_name(st->obj);
		st->mode = t->pend.kind == OP_TRY_ACQUIRE ? PLOOM_ACQUIRE_NONBLOCKING
			   : t->pend.kind == OP_TIMED_ACQUIRE || t->pend.kind == OP_TIMED_JOIN
				   ? PLOOM_ACQUIRE_TIMED
				   : PLOOM_ACQUIRE_BLOCKING;
		st->enabled = malloc((size_t)nen * sizeof(int));
		memcpy(st->enabled, en, (size_t)nen * sizeof(int));
		st->nenabled = (size_t)nen;
		st->pending = malloc((size_t)s.ntasks * sizeof(*st->pending));
		for (i = 0; i < s.ntasks; i++) {
			struct sim_task *o = &s.pool[s.order[i]];
			if (i == c || o->done)
				continue;
			st->pending[np++] = (struct ploom_pending){i, ploom_ops[o->pend.kind],
								   object_of(&s, &o->pend, i)};
		}
		st->npending = (size_t)np;
		prev = c;
		switch (t->pend.kind) {
		case OP_START:
			if (policy && ploom_policy_add_task(&pol, s.ntasks, NULL) < 0)
				abort();
			s.pool[t->pend.obj + 1].id = s.ntasks;
			s.order[s.ntasks++] = t->pend.obj + 1;
			s.pool[t->pend.obj + 1].pend.kind = OP_BEGIN;
			break;
		case OP_ACQUIRE:
			s.holder[t->pend.obj] = c;
			break;
		case OP_TRY_ACQUIRE:
		case OP_TIMED_ACQUIRE:
			val = s.holder[t->pend.obj] < 0;
			if (val)
				s.holder[t->pend.obj] = c;
			else if (t->pend.kind == OP_TIMED_ACQUIRE)
				s.cell[3]++; /* timed out: its timeout passed */
			st->value = strdup(val ? "True" : "False");
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
		case OP_IS_ALIVE:
		case OP_TIMED_JOIN:
			/* a timed join returns None; the sim gives the thread's
			 * liveness at that step, as an is_alive() right after it
			 * would see when nothing runs between, so that where a
			 * timed join lands in a schedule shows in its outcome */
			val = !s.pool[t->pend.obj + 1].done;
			if (val && t->pend.kind == OP_TIMED_JOIN)
				s.cell[3]++; /* timed out */
			break;
		case OP_SLEEP:
			s.cell[3] += t->pend.v;
			break;
		case OP_CLOCK:
			val = s.cell[3];
			break;
		case OP_LOCKED:
			val = s.holder[t->pend.obj] >= 0;
			break;
		default:
			break;
		}
		last_task = c;
		if (advance(&s, t, val) < 0) {
			if (prog)
				snprintf(msg, sizeof(msg), "t%d@%ld", c, t->loc[0]);
			set_failure(run, c, prog ? msg : sc->message ? sc->message : "");
			break;
		}
		nla = ploom_op_accesses(la, c, st->op, st->obj, st->mode, t->done);
	}
finish:
	if (final_cells)
		for (i = 0; i < 4; i++)
			final_cells[i] = s.cell[i];
	if (policy)
		ploom_policy_release(&pol);
	ploom_run_finish(run, NULL);
}

void sim_exec(struct ploom_run *run, const struct sim_scenario *sc, const struct sim_prog *prog,
	      const int *choices, size_t nchoices, const int *sleep, size_t nsleep,
	      long final_cells[4])
{
	exec_run(run, sc, prog, choices, nchoices, sleep, nsleep, final_cells, NULL);
}

void sim_exec_policy(struct ploom_run *run, const struct sim_scenario *sc,
		     const struct sim_prog *prog, const int *choices, size_t nchoices,
		     const struct ploom_policy_spec *policy)
{
	exec_run(run, sc, prog, choices, nchoices, NULL, 0, NULL, policy);
}

void sim_run(struct ploom_run *run, const struct sim_scenario *sc, const int *choices,
	     size_t nchoices)
{
	sim_exec(run, sc, NULL, choices, nchoices, NULL, 0, NULL);
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
