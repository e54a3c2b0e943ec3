/* The policies of a running schedule; policy.h documents them.
 *
 * pct keeps the tasks that have their first priority in one array, from
 * the highest down, so that a new task's rank is an insertion; a task
 * that dropped leaves it and keeps the index of its change point, which
 * orders the dropped tasks below the others. */
#include "policy.h"

#include <stdlib.h>
#include <string.h>

static const char *const names[] = {
	[PLOOM_POLICY_DEFAULT] = "default",
	[PLOOM_POLICY_RANDOM] = "random",
	[PLOOM_POLICY_PCT] = "pct",
	[PLOOM_POLICY_FOLLOW] = "follow",
};

const char *ploom_policy_name(enum ploom_policy_kind kind)
{
	if ((unsigned)kind > PLOOM_POLICY_FOLLOW)
		return "?";
	return names[kind];
}

int ploom_policy_parse_name(const char *s, size_t len)
{
	int k;

	for (k = PLOOM_POLICY_DEFAULT; k <= PLOOM_POLICY_FOLLOW; k++)
		if (strlen(names[k]) == len && !memcmp(names[k], s, len))
			return k;
	return -1;
}

const char *ploom_policy_problem(const struct ploom_policy_spec *spec)
{
	size_t i;

	if ((unsigned)spec->kind > PLOOM_POLICY_FOLLOW)
		return "unknown policy";
	if (spec->seed > PLOOM_POLICY_MAX_SEED)
		return "the seed is above 2^48 - 1";
	if (spec->kind == PLOOM_POLICY_PCT && (spec->depth < 1 || spec->depth > PLOOM_PCT_MAX_DEPTH))
		return "the depth is not from 1 to 1000";
	if (spec->kind == PLOOM_POLICY_PCT && (spec->k < 0 || spec->k > PLOOM_PCT_MAX_K))
		return "k is not from 0 to 10000000";
	if (spec->nfollow > (size_t)PLOOM_POLICY_MAX_FOLLOW)
		return "more than 200000 steps to follow";
	for (i = 0; i < spec->nfollow; i++)
		if (spec->follow[i] < 0)
			return "a step to follow has no task";
	return NULL;
}

_Static_assert(PLOOM_PCT_MAX_DEPTH == 1000 && PLOOM_PCT_MAX_K == 10000000L &&
		       PLOOM_POLICY_MAX_FOLLOW == 200000L,
	       "update ploom_policy_problem()'s messages");

void ploom_policy_seed_state(unsigned short x[3], uint64_t seed)
{
	x[0] = (unsigned short)(seed & 0xFFFF);
	x[1] = (unsigned short)(seed >> 16 & 0xFFFF);
	x[2] = (unsigned short)(seed >> 32 & 0xFFFF);
}

long ploom_policy_below(unsigned short x[3], long n)
{
	/* nrand48() draws from [0, 2^31) */
	const long range = 2147483648L;
	long limit, r;

	if (n <= 1)
		return 0;
	limit = range - range % n;
	do
		r = nrand48(x);
	while (r >= limit);
	return r % n;
}

int ploom_policy_init(struct ploom_policy *p, const struct ploom_policy_spec *spec,
		      struct ploom_err *err)
{
	const char *why = ploom_policy_problem(spec);
	int i;

	memset(p, 0, sizeof(*p));
	if (why)
		return ploom_err_set(err, PLOOM_ERR_INPUT, "bad policy: %s", why);
	p->spec = *spec;
	ploom_policy_seed_state(p->x, spec->seed);
	if (spec->kind != PLOOM_POLICY_PCT || spec->depth < 2)
		return 0;
	p->change = calloc((size_t)spec->depth - 1, sizeof(*p->change));
	if (!p->change)
		return ploom_err_oom(err);
	/* drawn first, so that they do not depend on what the run does */
	for (i = 0; i < spec->depth - 1; i++)
		p->change[i] = spec->k > 0 ? 1 + ploom_policy_below(p->x, spec->k) : 0;
	return 0;
}

void ploom_policy_release(struct ploom_policy *p)
{
	free(p->change);
	free(p->band);
	free(p->dropped);
	memset(p, 0, sizeof(*p));
}

int ploom_policy_add_task(struct ploom_policy *p, int task, struct ploom_err *err)
{
	int pos;

	if (task != p->ntasks)
		return ploom_err_set(err, PLOOM_ERR_INPUT,
				     "task %d is added where task %d was expected", task, p->ntasks);
	if (p->ntasks == p->cap) {
		int cap = p->cap ? 2 * p->cap : 8;
		int *band = realloc(p->band, (size_t)cap * sizeof(*band));
		int *dropped;

		if (!band)
			return ploom_err_oom(err);
		p->band = band;
		dropped = realloc(p->dropped, (size_t)cap * sizeof(*dropped));
		if (!dropped)
			return ploom_err_oom(err);
		p->dropped = dropped;
		p->cap = cap;
	}
	p->dropped[p->ntasks++] = 0;
	if (p->spec.kind != PLOOM_POLICY_PCT)
		return 0;
	pos = (int)ploom_policy_below(p->x, p->nband + 1);
	memmove(p->band + pos + 1, p->band + pos, (size_t)(p->nband - pos) * sizeof(*p->band));
	p->band[pos] = task;
	p->nband++;
	return 0;
}

/* pct: task drops to priority i. */
static void drop(struct ploom_policy *p, int task, int i)
{
	int k;

	if (task < 0 || task >= p->ntasks)
		return;
	for (k = 0; k < p->nband && p->band[k] != task; k++)
		;
	if (k < p->nband) {
		memmove(p->band + k, p->band + k + 1, (size_t)(p->nband - k - 1) * sizeof(*p->band));
		p->nband--;
	}
	p->dropped[task] = i;
}

/* pct: how high task stands; larger is higher.  The tasks with their
 * first priority stand above PLOOM_PCT_MAX_DEPTH, the dropped ones at
 * their i, one never added at 0. */
static long standing(const struct ploom_policy *p, int task)
{
	int k;

	if (task < 0 || task >= p->ntasks)
		return 0;
	if (p->dropped[task])
		return p->dropped[task];
	for (k = 0; k < p->nband; k++)
		if (p->band[k] == task)
			return PLOOM_PCT_MAX_DEPTH + 1 + (p->nband - k);
	return 0;
}

static int pct_choose(struct ploom_policy *p, const int *cand, size_t n, int prev)
{
	int changed = 0, i, best = cand[0];
	long top = -1, v;
	size_t j;

	for (i = 0; i < p->spec.depth - 1; i++)
		if (p->change[i] == p->branch) {
			drop(p, prev, i + 1);
			changed = 1;
		}
	if (!changed)
		for (j = 0; j < n; j++)
			if (cand[j] == prev)
				return prev;
	for (j = 0; j < n; j++) {
		v = standing(p, cand[j]);
		if (v > top) {
			top = v;
			best = cand[j];
		}
	}
	return best;
}

int ploom_policy_choose(struct ploom_policy *p, long step, const int *cand, size_t n,
			int prev)
{
	size_t j;

	p->branch++;
	switch (p->spec.kind) {
	case PLOOM_POLICY_FOLLOW:
		if (step >= 0 && (size_t)step < p->spec.nfollow)
			for (j = 0; j < n; j++)
				if (cand[j] == p->spec.follow[step])
					return cand[j];
		for (j = 0; j < n; j++)
			if (cand[j] == prev)
				return prev;
		return cand[0];
	case PLOOM_POLICY_RANDOM:
		return cand[ploom_policy_below(p->x, (long)n)];
	case PLOOM_POLICY_PCT:
		return pct_choose(p, cand, n, prev);
	default:
		for (j = 0; j < n; j++)
			if (cand[j] == prev)
				return prev;
		return cand[0];
	}
}
