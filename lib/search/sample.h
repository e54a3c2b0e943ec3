/* sample.h - the sampling searches, pct and random, as strategies of the
 * search driver (search.h).
 *
 * Overview
 * --------
 * A sampling search sends schedule after schedule with an empty prefix
 * and a policy (policy.h) that picks every choice inside the worker:
 * "random", or "pct" with depth d.  It never completes: it needs a
 * schedule limit or a time limit, and without a failure it ends
 * incomplete (a sample is never a pass).
 *
 * Schedule i (i = 0, 1, 2, ...) runs with the policy's seed f(SEED, i),
 * SEED being the search's seed (0 to 2^32 - 1):
 *
 *     start nrand48()'s generator where srand48(SEED) starts it (the high
 *     32 bits of its state SEED, the low 16 bits 0x330E); schedule i's
 *     48-bit seed is made of the top 16 bits of its draws 3i, 3i+1 and
 *     3i+2, the first the highest.
 *
 * So a seed gives the same schedules on every machine.  pct's k, the
 * branch points its change points are drawn from, is the most branch
 * points (steps with more than one enabled task) of a schedule this part
 * of the search ran before, 0 for its first schedule, which therefore has
 * no change point.
 *
 * With N parts (the driver's workers), part w runs the schedules i with
 * i mod N = w, and estimates k from its own schedules: the schedules run
 * depend on SEED and N, never on timing.  With max_schedules M it runs
 * those below M, so that the search runs schedules 0..M-1 (unless a
 * failure stops it first).  Every part is split off the first before any
 * run is back, which the driver does with N workers.
 *
 * left() (estimate.h): with M, the share of the M schedules this part
 * has still to run, the one under way included, so the estimate's total
 * is M; without M there is none (the estimate has a rate only).
 */
#ifndef PLOOM_SAMPLE_H
#define PLOOM_SAMPLE_H

#include <stdint.h>

#include "err.h"
#include "policy.h"
#include "trace.h"

struct ploom_strategy;

struct ploom_sample_opts {
	enum ploom_policy_kind kind;    /* PLOOM_POLICY_RANDOM or PLOOM_POLICY_PCT */
	unsigned long seed;             /* 0 to PLOOM_SAMPLE_MAX_SEED (config.h) */
	int depth;                      /* pct: d, 1 to PLOOM_PCT_MAX_DEPTH */
	long max_schedules;             /* the driver's; 0: none */
	int parts;                      /* the driver's workers, from 1 */
};

/* A new sampling search ("pct" or "random" in messages).  On success the
 * caller owns *out and frees it with ploom_strategy_free(), or hands it
 * to ploom_search_run(), which frees it.  Returns 0, or -1 with err
 * filled (kind PLOOM_ERR_INPUT for options out of range). */
int ploom_sample_strategy_new(struct ploom_strategy **out, const struct ploom_sample_opts *opts,
			      struct ploom_err *err);

/* The seeds f(SEED, 0), f(SEED, 1), ... one after another. */
struct ploom_seed_stream {
	unsigned short x[3];
};

void ploom_seed_stream_init(struct ploom_seed_stream *s, unsigned long seed);
uint64_t ploom_seed_stream_next(struct ploom_seed_stream *s);

#endif
