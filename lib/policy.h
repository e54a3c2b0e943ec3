/* policy.h - how a running schedule picks the next task once its prefix
 * of requested choices is spent: today's default rule, a uniform random
 * choice, or PCT.
 *
 * Overview
 * --------
 * The choice must be made where the enabled tasks are known, inside the
 * process that runs the schedule (the extension's scheduler, or the
 * simulator of the C tests), so the `run` command (event.h) carries a
 * policy beside its prefix and the scheduler asks it at every branch
 * point past the prefix:
 *
 *     struct ploom_policy p;
 *     ploom_policy_init(&p, &cmd.policy, &err);
 *     ploom_policy_add_task(&p, 0, &err);        // the main task
 *     ...
 *     ploom_policy_add_task(&p, id, &err);       // each started thread
 *     ...
 *     c = ploom_policy_choose(&p, step, cand, n, prev); // a branch point
 *     ...
 *     ploom_policy_release(&p);
 *
 * The choices a run made are recorded in its steps as always, so a trace
 * replays by its choices alone: a replay needs no policy and no seed.
 *
 * Randomness.  The policies draw from POSIX nrand48(), whose 48-bit
 * linear congruential generator (X' = 0x5DEECE66D X + 0xB mod 2^48, the
 * draw being the top 31 bits of X') is fixed by the standard: a seed
 * gives the same draws, so the same choices, on every machine.  The seed
 * is the generator's 48-bit start state.  A number below n is drawn by
 * rejection (draws at or above the largest multiple of n below 2^31 are
 * drawn again), then taken modulo n; a number below 1 takes no draw.
 *
 * The policies
 * ------------
 * default: the task that ran the previous step if it is a candidate,
 *     else the lowest candidate (DESIGN.md's default choice).
 *
 * random: a candidate drawn uniformly.
 *
 * follow: the task a recorded run took at this step (steps counted from
 *     0 over the whole run, branch points or not) when it is a candidate,
 *     else the default.  A trace followed on edited code (replay.h's
 *     follow) keeps the recorded order wherever it still applies, in one
 *     run: which steps are branch points is known only as the run goes.
 *
 * pct: probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi,
 *     Nagarakatte, ASPLOS 2010) with depth d, the paper's d: every task
 *     has a priority, all distinct.  The main task has the first; a task
 *     created during the run takes a rank drawn uniformly among the tasks
 *     that still have their first priority (the paper's online variant:
 *     with n such tasks, one of n + 1 places, from above the highest to
 *     below the lowest).  d - 1 change points c_1 .. c_(d-1) are drawn
 *     first, in that order, each uniformly among the branch points 1..k
 *     (none when k is 0); at branch point s (counted from 1, past the
 *     prefix), for each i with c_i = s in increasing i, the task that ran
 *     the previous step drops to priority i: below every first priority,
 *     and above a task dropped at a change point of lower index.  Then:
 *     if no change point is at s and the task that ran the previous step
 *     is a candidate, it runs again; else the candidate of highest
 *     priority runs.
 *
 *     So ploom's pct never preempts (switches away from a task that could
 *     go on, DESIGN.md) but at a change point, and a pct run has at most
 *     d - 1 preemptions; with d = 1 it has none.  The paper's scheduler
 *     always runs the enabled thread of highest priority, so it also
 *     switches when a step enables a thread above the one running (a
 *     release that a waiter of higher priority waited for, the start of a
 *     thread that drew a higher rank): ploom lets the running task go on
 *     there, so that the depth bounds the preemptions.  docs/search.rst
 *     states what this means for the paper's probability bound.
 *
 * Only the branch points the policy decides are counted: those of the
 * prefix are not (a search sends pct and random with an empty prefix).
 */
#ifndef PLOOM_POLICY_H
#define PLOOM_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

enum ploom_policy_kind {
	PLOOM_POLICY_DEFAULT = 0,
	PLOOM_POLICY_RANDOM,
	PLOOM_POLICY_PCT,
	PLOOM_POLICY_FOLLOW,
};

/* The largest seed (a 48-bit state), depth and k a policy takes. */
#define PLOOM_POLICY_MAX_SEED ((UINT64_C(1) << 48) - 1)
#define PLOOM_PCT_MAX_DEPTH 1000
#define PLOOM_PCT_MAX_K 10000000L
/* The most recorded steps follow takes: the most steps of a run
 * (PLOOM_MAX_STEPS, trace.h, which checks that they agree). */
#define PLOOM_POLICY_MAX_FOLLOW 200000L

/* A policy as the `run` command states it.  Zeroed: the default. */
struct ploom_policy_spec {
	enum ploom_policy_kind kind;
	uint64_t seed;          /* random, pct: 0 to PLOOM_POLICY_MAX_SEED */
	int depth;              /* pct: d, 1 to PLOOM_PCT_MAX_DEPTH */
	long k;                 /* pct: branch points to draw change points from, 0
				 * to PLOOM_PCT_MAX_K */
	/* follow: the task of each recorded step, at most
	 * PLOOM_POLICY_MAX_FOLLOW, each 0 or more; borrowed (the run
	 * command's, event.h, owns them) */
	int *follow;
	size_t nfollow;
};

/* "default", "random", "pct", "follow"; "?" for a value out of range. */
const char *ploom_policy_name(enum ploom_policy_kind kind);

/* The kind named s[0..len), or -1. */
int ploom_policy_parse_name(const char *s, size_t len);

/* NULL when spec is one a policy takes, else why not (a static string:
 * "the seed is above 2^48 - 1", ...). */
const char *ploom_policy_problem(const struct ploom_policy_spec *spec);

/* A policy as a schedule runs it.  The fields are the policy's; tests
 * may read them. */
struct ploom_policy {
	struct ploom_policy_spec spec;
	unsigned short x[3];    /* nrand48()'s state, low 16 bits first */
	long branch;            /* branch points decided so far */
	/* pct */
	long *change;           /* c_1 .. c_(depth-1); 0: none */
	int *band;              /* the tasks with their first priority, highest first */
	int nband;
	int *dropped;           /* per task id: the i it dropped to, 0: none */
	int ntasks;             /* task ids below it are known */
	int cap;
};

/* Starts a policy from spec (which must pass ploom_policy_problem()):
 * draws pct's change points.  p is overwritten; release it with
 * ploom_policy_release() (also after an error).  Returns 0, or -1 with
 * err filled (kind PLOOM_ERR_INPUT for a bad spec, PLOOM_ERR_NOMEM). */
int ploom_policy_init(struct ploom_policy *p, const struct ploom_policy_spec *spec,
		      struct ploom_err *err);

/* Frees what the policy holds and zeroes it; safe on a zeroed policy. */
void ploom_policy_release(struct ploom_policy *p);

/* Task `task` exists from now on: the main task (0) before the first
 * step, then each thread as it starts, with ids in increasing order.
 * Under pct it takes its rank.  Returns 0, or -1 with err filled (kind
 * PLOOM_ERR_INPUT when the id is not the next one, PLOOM_ERR_NOMEM). */
int ploom_policy_add_task(struct ploom_policy *p, int task, struct ploom_err *err);

/* The task to run at a branch point, step `step` of the run (from 0): one
 * of cand[0..n) (n >= 1, the enabled tasks the scheduler may pick,
 * ascending, each added before), prev being the task that ran the
 * previous step.  Counts the branch point. */
int ploom_policy_choose(struct ploom_policy *p, long step, const int *cand, size_t n,
			int prev);

/* A number drawn uniformly below n (n >= 1) from the policy's generator,
 * as the policies draw (see Randomness above). */
long ploom_policy_below(unsigned short x[3], long n);

/* The generator's state for a 48-bit seed (x[0] its low 16 bits). */
void ploom_policy_seed_state(unsigned short x[3], uint64_t seed);

#endif
