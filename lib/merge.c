/* Merging shards' statistics; merge.h documents the result. */
#include "merge.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"
#include "shard.h"

struct part {
	struct ploom_stats_in *in;
	char *name;
};

struct ploom_merge {
	struct part *parts;
	size_t n, cap;
	/* the result, pointing into parts: the shards' counts added up as a
	 * search's result, and the statistics made from it */
	struct ploom_search_result sum;
	struct ploom_stats stats;
	struct ploom_shard shard;
	struct ploom_search_outcome *outcomes;
	int *missing;
	/* so that each shard added is checked in constant time: per shard
	 * index (below the count of the first), 1 + the position of its part,
	 * 0 for none; and 1 + the position of the first complete part */
	size_t *at;
	size_t first_complete;
};

int ploom_merge_new(struct ploom_merge **out, struct ploom_err *err)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : ploom_err_oom(err);
}

void ploom_merge_free(struct ploom_merge *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->n; i++) {
		ploom_stats_in_free(m->parts[i].in);
		free(m->parts[i].name);
	}
	free(m->parts);
	free(m->outcomes);
	free(m->missing);
	free(m->at);
	free(m);
}

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Whether a and b instrumented the same modules, in the same order. */
static int same_instrument(const struct ploom_stats *a, const struct ploom_stats *b)
{
	size_t i;

	if (a->instrument_scenario != b->instrument_scenario || a->ninstrument != b->ninstrument)
		return 0;
	for (i = 0; i < a->ninstrument; i++)
		if (strcmp(a->instrument[i], b->instrument[i]))
			return 0;
	return 1;
}

/* Why a's search is not b's (b is from the file name), or 0: their
 * searches, not their places in it (index, units). */
static int other_search(const struct ploom_stats *a, const struct ploom_stats *b,
			const char *name, struct ploom_err *err)
{
	const struct ploom_shard *x = a->shard, *y = b->shard;

	if (x->count != y->count)
		return ploom_err_set(err, PLOOM_ERR_INPUT,
				     "it is a shard of %d, '%s' one of %d", x->count, name, y->count);
	if (x->depth != y->depth)
		return ploom_err_set(err, PLOOM_ERR_INPUT,
				     "its units are %d branch points deep, those of '%s' %d",
				     x->depth, name, y->depth);
	if (!same_str(a->target, b->target))
		return ploom_err_set(err, PLOOM_ERR_INPUT, "its target is not that of '%s'", name);
	if (a->max_preemptions != b->max_preemptions)
		return ploom_err_set(err, PLOOM_ERR_INPUT,
				     "its max_preemptions is not that of '%s'", name);
	if (!same_str(a->reduction, b->reduction))
		return ploom_err_set(err, PLOOM_ERR_INPUT, "its reduction is not that of '%s'", name);
	if (!same_str(a->search, b->search))
		return ploom_err_set(err, PLOOM_ERR_INPUT, "its search is not that of '%s'", name);
	/* the reader leaves them 0 where the search has none */
	if (a->seed != b->seed)
		return ploom_err_set(err, PLOOM_ERR_INPUT, "its seed is not that of '%s'", name);
	if (a->pct_depth != b->pct_depth)
		return ploom_err_set(err, PLOOM_ERR_INPUT, "its pct_depth is not that of '%s'", name);
	if (!same_str(a->hash_seed, b->hash_seed))
		return ploom_err_set(err, PLOOM_ERR_INPUT, "its hash_seed is not that of '%s'", name);
	/* instrumented code has more steps: another tree of schedules */
	if (!same_instrument(a, b))
		return ploom_err_set(err, PLOOM_ERR_INPUT,
				     "it instrumented other modules than '%s'", name);
	return 0;
}

/* Why in cannot join the parts added before, or 0.  Each was checked
 * against the first, and being of one search is an equivalence: the
 * first part's search stands for them all.  Of the parts that in clashes
 * with by its place (its index again; its units, when both are complete,
 * differ) the earliest is named. */
static int cannot_join(const struct ploom_merge *m, const struct ploom_stats *in,
		       struct ploom_err *err)
{
	const struct ploom_shard *x = in->shard;
	size_t again = m->n, units = m->n;

	if (!m->n)
		return 0;
	if (other_search(in, &m->parts[0].in->stats, m->parts[0].name, err) < 0)
		return -1;
	/* other_search() checked the count, which bounds the index */
	if (m->at[x->index])
		again = m->at[x->index] - 1;
	/* two complete walks of one tree meet the same units */
	if (in->complete && m->first_complete &&
	    m->parts[m->first_complete - 1].in->stats.shard->units != x->units)
		units = m->first_complete - 1;
	if (again < m->n && again <= units)
		return ploom_err_set(err, PLOOM_ERR_INPUT, "shard %d of %d again, as in '%s'",
				     x->index, x->count, m->parts[again].name);
	if (units < m->n)
		return ploom_err_set(err, PLOOM_ERR_INPUT,
				     "it found %ld units, '%s' %ld: the scenario is not the same",
				     x->units, m->parts[units].name,
				     m->parts[units].in->stats.shard->units);
	return 0;
}

int ploom_merge_add(struct ploom_merge *m, struct ploom_stats_in *in, const char *name,
		    struct ploom_err *err)
{
	struct part *p;

	if (!in->stats.shard) {
		ploom_stats_in_free(in);
		return ploom_err_set(err, PLOOM_ERR_INPUT,
				     "not a shard's statistics (no field 'shard')");
	}
	if (cannot_join(m, &in->stats, err) < 0) {
		ploom_stats_in_free(in);
		return -1;
	}
	if (!m->at) {
		m->at = calloc((size_t)in->stats.shard->count, sizeof(*m->at));
		if (!m->at) {
			ploom_stats_in_free(in);
			return ploom_err_oom(err);
		}
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 8;
		p = realloc(m->parts, cap * sizeof(*p));
		if (!p) {
			ploom_stats_in_free(in);
			return ploom_err_oom(err);
		}
		m->parts = p;
		m->cap = cap;
	}
	p = &m->parts[m->n];
	p->in = in;
	p->name = strdup(name);
	if (!p->name) {
		ploom_stats_in_free(in);
		return ploom_err_oom(err);
	}
	m->at[in->stats.shard->index] = ++m->n;
	if (in->stats.complete && !m->first_complete)
		m->first_complete = m->n;
	return 0;
}

/* *sum += v, for a count of the shards' named by field; a sum beyond
 * LONG_MAX is bad input (the counts are not of one real search), not
 * undefined behaviour. */
static int add_count(long *sum, long v, const char *field, struct ploom_err *err)
{
	if (__builtin_add_overflow(*sum, v, sum))
		return ploom_err_set(err, PLOOM_ERR_INPUT,
				     "field '%s' adds up to more than %ld over the shards", field,
				     LONG_MAX);
	return 0;
}

static int by_index(const void *a, const void *b)
{
	const struct part *x = a, *y = b;

	return x->in->stats.shard->index - y->in->stats.shard->index;
}

/* The shards' tallies added up, into m->outcomes and m->sum; only when
 * every shard has them.  Sets *with_outcomes to 1 when they do. */
static int merge_outcomes(struct ploom_merge *m, int *with_outcomes, struct ploom_err *err)
{
	struct ploom_search_result *s = &m->sum;
	size_t i, j, k, total = 0;

	for (i = 0; i < m->n; i++) {
		if (!m->parts[i].in->stats.with_outcomes)
			return 0;
		total += m->parts[i].in->stats.noutcomes;
	}
	m->outcomes = calloc(total + 1, sizeof(*m->outcomes));
	if (!m->outcomes)
		return ploom_err_oom(err);
	*with_outcomes = 1;
	s->outcomes = m->outcomes;
	for (i = 0; i < m->n; i++) {
		const struct ploom_stats *in = &m->parts[i].in->stats;

		s->outcomes_truncated |= in->outcomes_truncated;
		for (j = 0; j < in->noutcomes; j++) {
			const struct ploom_search_outcome *o = &in->outcomes[j];

			for (k = 0; k < s->noutcomes; k++)
				if (m->outcomes[k].kind == o->kind &&
				    !strcmp(m->outcomes[k].summary, o->summary))
					break;
			if (k < s->noutcomes) {
				if (add_count(&m->outcomes[k].schedules, o->schedules,
					      "outcomes[].schedules", err) < 0)
					return -1;
			} else if (s->noutcomes == PLOOM_SEARCH_MAX_OUTCOMES) {
				s->outcomes_truncated = 1;
			} else {
				/* borrowed from the shard's statistics */
				m->outcomes[s->noutcomes++] = *o;
			}
		}
	}
	return 0;
}

int ploom_merge_result(const struct ploom_stats **out, struct ploom_merge *m,
		       struct ploom_err *err)
{
	struct ploom_search_result *s = &m->sum;
	struct ploom_stats_search asked = {0};
	const struct ploom_stats *first;
	const struct ploom_stats_in *failed = NULL, *traced = NULL, *saved_failed = NULL, *reported;
	size_t i;
	int k, count, complete;

	*out = NULL;
	if (!m->n)
		return ploom_err_set(err, PLOOM_ERR_INPUT, "no statistics to merge");
	qsort(m->parts, m->n, sizeof(*m->parts), by_index);
	/* the parts moved: where each is, for a part added after this */
	m->first_complete = 0;
	for (i = 0; i < m->n; i++) {
		m->at[m->parts[i].in->stats.shard->index] = i + 1;
		if (m->parts[i].in->stats.complete && !m->first_complete)
			m->first_complete = i + 1;
	}
	first = &m->parts[0].in->stats;
	count = first->shard->count;
	memset(s, 0, sizeof(*s));
	memset(&m->shard, 0, sizeof(m->shard));
	free(m->outcomes);
	m->outcomes = NULL;
	free(m->missing);
	m->missing = malloc(((size_t)count - m->n + 1) * sizeof(*m->missing));
	if (!m->missing)
		return ploom_err_oom(err);
	asked.target = first->target;
	asked.hash_seed = first->hash_seed;
	asked.max_preemptions = first->max_preemptions;
	asked.reduction = first->reduction;
	asked.search = first->search;
	asked.seed = first->seed;
	asked.pct_depth = first->pct_depth;
	asked.instrument = first->instrument;
	asked.ninstrument = first->ninstrument;
	asked.instrument_scenario = first->instrument_scenario;
	asked.shard = &m->shard;
	complete = (size_t)count == m->n;
	m->shard.index = -1;
	m->shard.count = count;
	m->shard.depth = first->shard->depth;
	m->shard.units = -1;
	m->shard.failure_unit = -1;
	m->shard.last_unit = -1;
	for (i = 0; i < m->n; i++) {
		const struct ploom_stats_in *part = m->parts[i].in;
		const struct ploom_stats *in = &part->stats;
		const struct ploom_shard *sh = in->shard;

		if (add_count(&s->schedules, in->schedules, "schedules", err) < 0 ||
		    add_count(&s->sleep_blocked, in->sleep_blocked, "sleep_blocked", err) < 0 ||
		    add_count(&s->failing, in->failing, "failing", err) < 0 ||
		    add_count(&s->step_limited, in->step_limited, "step_limited", err) < 0 ||
		    add_count(&asked.saved_runs, in->saved_runs, "saved_runs", err) < 0 ||
		    add_count(&asked.saved_failing, in->saved_failing, "saved_failing", err) < 0 ||
		    add_count(&m->shard.owned, sh->owned, "shard.owned", err) < 0 ||
		    add_count(&m->shard.probes, sh->probes, "shard.probes", err) < 0)
			return -1;
		if (in->max_depth > s->max_depth)
			s->max_depth = in->max_depth;
		if (in->elapsed_s > s->elapsed_s)
			s->elapsed_s = in->elapsed_s;
		if (!in->complete && complete) {
			complete = 0;
			s->stopped_by = in->stopped_by;
		}
		if (in->complete && m->shard.units < 0)
			m->shard.units = sh->units;
		if (sh->failure_unit >= 0 &&
		    (!failed || sh->failure_unit < failed->stats.shard->failure_unit))
			failed = part;
		if (in->saved_failing > 0 && !saved_failed)
			saved_failed = part;
		if (in->trace && !traced)
			traced = part;
	}
	for (k = 0, i = 0; k < count; k++) {
		if (i < m->n && m->parts[i].in->stats.shard->index == k)
			i++;
		else
			m->missing[m->shard.nmissing++] = k;
	}
	m->shard.missing = m->missing;
	/* every shard given is complete, and some are not given */
	if (!complete && !s->stopped_by)
		s->stopped_by = "missing-shards";
	/* the failure reported, with its traces: a saved schedule's, which
	 * ran before any unit, else the search's first; without one, the
	 * traces of the first shard with any.  The unit is the search's. */
	if (failed)
		m->shard.failure_unit = failed->stats.shard->failure_unit;
	reported = saved_failed ? saved_failed : failed;
	if (reported)
		s->failure_path = reported->trace;
	else if (traced)
		s->limit_path = traced->trace;
	if (merge_outcomes(m, &asked.with_outcomes, err) < 0)
		return -1;
	ploom_stats_from_search(&m->stats, &asked, s,
				reported ? reported->minimized_trace
					 : traced ? traced->minimized_trace : NULL);
	/* goes with the minimized trace */
	m->stats.minimize_stopped_by = reported ? reported->stats.minimize_stopped_by
				       : traced ? traced->stats.minimize_stopped_by : NULL;
	/* a shard's failure comes back as an outcome, not as a trace */
	m->stats.failure = reported ? reported->stats.failure : NULL;
	*out = &m->stats;
	return 0;
}
