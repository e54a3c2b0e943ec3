/* Depth-first search over schedules; explore.h documents the rules. */
#include "explore.h"

#include <stdlib.h>
#include <string.h>

struct branch {
	const struct ploom_step *step;  /* borrowed from the run being read */
	int prev;                       /* the task of the previous step */
	int preemptions_before;         /* preemptions at earlier branches */
};

struct ploom_explore {
	int bound;
	int *prefix;
	size_t nprefix;
	struct branch *branches;
	size_t cap;
};

int ploom_explore_new(struct ploom_explore **out, int max_preemptions,
		      struct ploom_err *err)
{
	struct ploom_explore *ex = calloc(1, sizeof(*ex));

	*out = NULL;
	if (!ex)
		return ploom_err_set(err, PLOOM_EXIT_USAGE, "out of memory");
	ex->bound = max_preemptions;
	*out = ex;
	return 0;
}

void ploom_explore_free(struct ploom_explore *ex)
{
	if (!ex)
		return;
	free(ex->prefix);
	free(ex->branches);
	free(ex);
}

const int *ploom_explore_prefix(const struct ploom_explore *ex, size_t *out_len)
{
	*out_len = ex->nprefix;
	return ex->prefix;
}

/* The alternative tried after `c` at branch b, or -1 if none is left:
 * the order is the default first, then the others ascending. */
static int next_alternative(const struct branch *b, int c)
{
	const struct ploom_step *s = b->step;
	int d = ploom_step_is_enabled(s, b->prev) ? b->prev : s->enabled[0];
	size_t i;

	for (i = 0; i < s->nenabled; i++) {
		int a = s->enabled[i];
		if (a == d)
			continue;
		if (c == d || a > c)
			return a;
	}
	return -1;
}

int ploom_explore_next(struct ploom_explore *ex, const struct ploom_run *run,
		       struct ploom_err *err)
{
	size_t i, n = 0;
	int prev = 0, pre = 0;
	int *p;

	if (run->nsteps > ex->cap) {
		struct branch *b = realloc(ex->branches, run->nsteps * sizeof(*b));
		if (!b)
			return ploom_err_set(err, PLOOM_EXIT_USAGE, "out of memory");
		ex->branches = b;
		ex->cap = run->nsteps;
	}
	for (i = 0; i < run->nsteps; i++) {
		const struct ploom_step *s = &run->steps[i];
		if (s->nenabled > 1) {
			struct branch *b = &ex->branches[n];
			if (n < ex->nprefix && s->task != ex->prefix[n])
				return ploom_err_set(err, PLOOM_EXIT_DIVERGENCE,
						     "the schedule picked task %d at step %zu where "
						     "task %d was asked for",
						     s->task, i, ex->prefix[n]);
			b->step = s;
			b->prev = prev;
			b->preemptions_before = pre;
			if (s->task != prev && ploom_step_is_enabled(s, prev))
				pre++;
			n++;
		}
		prev = s->task;
	}
	if (n < ex->nprefix)
		return ploom_err_set(err, PLOOM_EXIT_DIVERGENCE,
				     "the schedule ended after %zu of the %zu requested choices",
				     n, ex->nprefix);
	while (n-- > 0) {
		const struct branch *b = &ex->branches[n];
		int prev_enabled = ploom_step_is_enabled(b->step, b->prev);
		int a = b->step->task;

		while ((a = next_alternative(b, a)) >= 0) {
			int cost = b->preemptions_before + (a != b->prev && prev_enabled);
			if (ex->bound >= 0 && cost > ex->bound)
				continue;
			p = realloc(ex->prefix, (n + 1) * sizeof(*p));
			if (!p)
				return ploom_err_set(err, PLOOM_EXIT_USAGE, "out of memory");
			ex->prefix = p;
			for (i = 0; i < n; i++)
				p[i] = ex->branches[i].step->task;
			p[n] = a;
			ex->nprefix = n + 1;
			return 1;
		}
	}
	ex->nprefix = 0;
	return 0;
}
