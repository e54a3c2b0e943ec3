/* sim.h - a simulator of ploom's scenario semantics for the C unit tests.
 *
 * It runs REFERENCE.md's scenarios (and the README's bank, with and
 * without its lock) as coroutines under the scheduling rules of DESIGN.md,
 * producing the same runs as the worker would: steps with their enabled
 * sets, finished with ploom_run_finish().  The search (test_explore) and
 * the minimizer (test_minimize) are driven by it without a Python
 * process.  A failing assertion becomes the outcome failure
 * "builtins.AssertionError" with the scenario's message.
 */
#ifndef PLOOM_TEST_SIM_H
#define PLOOM_TEST_SIM_H

#include <stddef.h>
#include <stdio.h>

#include "../../lib/trace.h"

struct sim;
struct sim_task;
struct sim_op;

/* One task's body: returns 1 with *op filled when it stops at an
 * operation, 0 when it has finished, -1 when its assertion failed. */
typedef int (*sim_body)(struct sim *s, struct sim_task *t, long val, struct sim_op *op);

struct sim_scenario {
	const char *name;       /* "bank without the lock", "abba", ... */
	int flag;               /* variant: 1 for the bank with the lock */
	int nthreads;
	sim_body main_body;
	sim_body thread_body[3];
	long cells[3];          /* initial values */
	long want[4][2];        /* REFERENCE.md's schedules/failing: no bound, 0, 1, 2 */
	const char *message;    /* the assertion's message; NULL: "" */
};

/* The scenarios, in REFERENCE.md's order after the two banks. */
extern const struct sim_scenario sim_scenarios[];
extern const size_t sim_nscenarios;

/* The scenario called name; aborts if there is none (a typo in a test). */
const struct sim_scenario *sim_find(const char *name);

/* Runs one schedule of sc making choices[0..n) at its first branch points
 * and the default choice after them.  *run is overwritten (not released)
 * and finished; the caller releases it with ploom_run_release(). */
void sim_run(struct ploom_run *run, const struct sim_scenario *sc, const int *choices,
	     size_t nchoices);

/* ---- generated programs, for differential tests of the search ----
 *
 * main starts threads 1..n in order and joins those in join_mask; thread k
 * runs its code: reads into a register, writes of a constant or of the
 * register plus one, acquire/release, `if l.acquire(blocking=False):
 * write; release` (or with acquire(timeout=T)), yield_now, join/is_alive of
 * a thread started before it, `join(timeout=T)` then is_alive() into the
 * register (one step: the timed join),
 * locked(), and asserts that the register differs from a constant (the
 * failure's message names the task and the place).  A thread whose
 * starter is another thread (sim_prog_generate_spawn()) is started by
 * that thread's start instruction instead of by main. */
enum sim_instr_kind { PI_READ, PI_WRITE, PI_ACQ, PI_REL, PI_TRY, PI_YIELD, PI_JOIN,
		      PI_IS_ALIVE, PI_LOCKED, PI_ASSERT_NE, PI_TIMED, PI_TIMED_JOIN,
		      PI_SLEEP, PI_CLOCK, PI_START };

struct sim_instr {
	unsigned char kind;
	unsigned char obj;      /* cell, lock, or thread index (0-based) */
	short arg;              /* write: value, -1 for register + 1; try, timed: instructions
				 * skipped when it fails; assert_ne: the constant */
};

#define SIM_PROG_MAX 16

struct sim_prog {
	int nthreads, ncells, nlocks;
	int join_mask;
	int starter[4];         /* per thread: 0 main, k + 1 thread k */
	struct sim_instr code[4][SIM_PROG_MAX];
	int len[4];
};

/* A random program of 2-4 threads with 2-6 operations each (at most
 * max_ops in all, roughly), 1-3 cells and 1-2 locks, the same for the
 * same seed everywhere. */
void sim_prog_generate(struct sim_prog *p, unsigned long seed, int max_ops);

/* The same program with the virtual clock (pyext/clock.c) in it: each
 * yield becomes sleep(arg) (the clock advances by 1 or 2), each locked()
 * and some reads become a read of the clock into the register; a timed
 * acquire or join that times out advances the clock by 1. */
void sim_prog_generate_clock(struct sim_prog *p, unsigned long seed, int max_ops);

/* The same program with threads that start threads: the last thread (and
 * of four, the third too, half the time) is started by an earlier thread,
 * at a point of its code drawn from the seed, not by main, which neither
 * starts nor joins it; a later thread's join or is_alive of it (which
 * could come before its start) becomes a read.  Task ids follow the
 * order of the starts, as the worker gives them, so the starts of two
 * tasks decide which task gets which id. */
void sim_prog_generate_spawn(struct sim_prog *p, unsigned long seed, int max_ops);

/* The program as text, for a failing test to show. */
void sim_prog_print(FILE *f, const struct sim_prog *p);

/* One schedule of a scenario (sc) or of a program (prog, when sc is
 * NULL), with choices[0..n) (forced steps, -1-T, too) and the sleep set of the worker's `run`
 * command (event.h): past the choices it takes the default among the
 * tasks awake, and stops with the outcome sleep-blocked when all sleep.
 * Deadlocks carry their waits.  *run is overwritten and finished;
 * final_cells (may be NULL) receives the cells at the end. */
void sim_exec(struct ploom_run *run, const struct sim_scenario *sc, const struct sim_prog *prog,
	      const int *choices, size_t nchoices, const int *sleep, size_t nsleep,
	      long final_cells[4]);

/* sim_exec() without a sleep set and with a policy (policy.h) past the
 * choices instead of the default, as the worker runs a `run` command's
 * policy: the main task and each started thread are added to it, and it
 * picks at every branch point past the choices.  *run is overwritten and
 * finished. */
struct ploom_policy_spec;
void sim_exec_policy(struct ploom_run *run, const struct sim_scenario *sc,
		     const struct sim_prog *prog, const int *choices, size_t nchoices,
		     const struct ploom_policy_spec *policy);

/* The first run of an unbounded depth-first search of sc (explore.h) for
 * which want(run, arg) is nonzero, moved into *out (released or zeroed by
 * the caller, who releases it after); 0 if found, -1 if none is. */
int sim_first(struct ploom_run *out, const struct sim_scenario *sc,
	      int (*want)(const struct ploom_run *run, int arg), int arg);

#endif
