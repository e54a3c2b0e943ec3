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

/* The first run of an unbounded depth-first search of sc (explore.h) for
 * which want(run, arg) is nonzero, moved into *out (released or zeroed by
 * the caller, who releases it after); 0 if found, -1 if none is. */
int sim_first(struct ploom_run *out, const struct sim_scenario *sc,
	      int (*want)(const struct ploom_run *run, int arg), int arg);

#endif
