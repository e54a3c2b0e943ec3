/* The statistics of an exploration: made from a search's result, written
 * as JSON and read back; stats.h documents them.  With json.c and
 * jsonutil.c, the only files that include cJSON.h (through jsonutil.h). */
#include "stats.h"

#include <errno.h>
#include <limits.h>
#include <math.h> /* isfinite, a macro: no libm needed */
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "kind.h"
#include "search/sample.h"
#include "search.h"
#include "shard.h"

void ploom_stats_from_search(struct ploom_stats *out, const struct ploom_stats_search *search,
			     const struct ploom_search_result *res, const char *minimized_trace)
{
	memset(out, 0, sizeof(*out));
	out->result = res->failing || search->saved_failing ? "failure"
		      : res->stopped_by			? "incomplete"
							: "pass";
	out->target = search->target;
	out->schedules = res->schedules;
	out->failing = res->failing;
	out->step_limited = res->step_limited;
	out->saved_runs = search->saved_runs;
	out->saved_failing = search->saved_failing;
	out->complete = !res->stopped_by;
	out->stopped_by = res->stopped_by;
	out->max_preemptions = search->max_preemptions;
	out->reduction = search->reduction;
	out->search = search->search;
	out->search_default = search->search_default;
	out->seed = search->seed;
	out->pct_depth = search->pct_depth;
	out->instrument = search->instrument;
	out->ninstrument = search->ninstrument;
	out->instrument_scenario = search->instrument_scenario;
	/* a saved schedule's failure came before the search's order */
	out->minimal_by_construction =
		res->failure && !search->saved_failing && search->fewest_preemptions_first;
	out->sleep_blocked = res->sleep_blocked;
	out->hash_seed = search->hash_seed;
	out->elapsed_s = res->elapsed_s;
	out->schedules_per_second =
		res->elapsed_s > 0 ? (double)res->schedules / res->elapsed_s : 0;
	out->max_depth = res->max_depth;
	out->trace = res->failure_path ? res->failure_path : res->limit_path;
	out->minimized_trace = minimized_trace;
	out->failure = res->failure ? &res->failure->run.outcome : NULL;
	out->jobs = search->jobs;
	out->with_outcomes = search->with_outcomes;
	out->outcomes = res->outcomes;
	out->noutcomes = res->noutcomes;
	out->outcomes_truncated = res->outcomes_truncated;
	out->shard = search->shard;
}

/* ---- writing ---- */

/* Rounds a non-negative measurement to 1/scale without libm. */
static double round_to(double v, double scale)
{
	if (!(v >= 0) || v > 1e15)
		return v;
	return (double)(long long)(v * scale + 0.5) / scale;
}

static void put_long_or_null(struct ploom_json_builder *b, cJSON *obj, const char *name, long v)
{
	ploom_json_put(b, obj, name, v < 0 ? cJSON_CreateNull() : cJSON_CreateNumber((double)v));
}

static void put_shard(struct ploom_json_builder *b, cJSON *root, const struct ploom_shard *sh)
{
	cJSON *o = ploom_json_put(b, root, "shard", cJSON_CreateObject());
	int i;

	put_long_or_null(b, o, "index", sh->index);
	ploom_json_put_num(b, o, "count", sh->count);
	ploom_json_put_num(b, o, "depth", sh->depth);
	put_long_or_null(b, o, "units", sh->units);
	ploom_json_put_num(b, o, "owned", (double)sh->owned);
	ploom_json_put_num(b, o, "probes", (double)sh->probes);
	put_long_or_null(b, o, "failure_unit", sh->failure_unit);
	if (sh->index < 0) {
		cJSON *list = ploom_json_put(b, o, "missing", cJSON_CreateArray());
		for (i = 0; list && i < sh->nmissing; i++)
			ploom_json_append(b, list, cJSON_CreateNumber(sh->missing[i]));
	}
}

int ploom_stats_write(FILE *out, const struct ploom_stats *s, struct ploom_err *err)
{
	struct ploom_json_builder b = {0};
	cJSON *root = cJSON_CreateObject();
	cJSON *f;
	char *text = NULL;
	int ret = -1;

	if (!root)
		b.oom = 1;
	ploom_json_put_str(&b, root, "result", s->result);
	ploom_json_put_str(&b, root, "target", s->target);
	ploom_json_put_num(&b, root, "schedules", (double)s->schedules);
	ploom_json_put_num(&b, root, "failing", (double)s->failing);
	ploom_json_put_num(&b, root, "step_limited", (double)s->step_limited);
	ploom_json_put_num(&b, root, "saved_runs", (double)s->saved_runs);
	ploom_json_put_num(&b, root, "saved_failing", (double)s->saved_failing);
	ploom_json_put_bool(&b, root, "complete", s->complete);
	ploom_json_put_str(&b, root, "stopped_by", s->stopped_by);
	if (s->max_preemptions < 0)
		ploom_json_put(&b, root, "max_preemptions", cJSON_CreateNull());
	else
		ploom_json_put_num(&b, root, "max_preemptions", s->max_preemptions);
	ploom_json_put_str(&b, root, "reduction", s->reduction);
	if (s->reduction && strcmp(s->reduction, "none"))
		ploom_json_put_num(&b, root, "sleep_blocked", (double)s->sleep_blocked);
	ploom_json_put_str(&b, root, "search", s->search);
	if (s->search_default)
		ploom_json_put_str(&b, root, "search_default", s->search_default);
	ploom_json_put_sample(&b, root, s->search, s->seed, s->pct_depth);
	ploom_json_put(&b, root, "instrument", ploom_json_str_array(s->instrument, s->ninstrument));
	ploom_json_put_bool(&b, root, "instrument_scenario", s->instrument_scenario);
	if (s->jobs > 0)
		ploom_json_put_num(&b, root, "jobs", s->jobs);
	ploom_json_put_str(&b, root, "hash_seed", s->hash_seed);
	/* rounded so the output stays readable; they are measurements */
	ploom_json_put_num(&b, root, "elapsed_s", round_to(s->elapsed_s, 1000.0));
	ploom_json_put_num(&b, root, "schedules_per_second",
			   round_to(s->schedules_per_second, 10.0));
	ploom_json_put_num(&b, root, "max_depth", (double)s->max_depth);
	ploom_json_put_str(&b, root, "trace", s->trace);
	ploom_json_put_str(&b, root, "minimized_trace", s->minimized_trace);
	if (s->minimal_by_construction)
		ploom_json_put_bool(&b, root, "minimal_by_construction", 1);
	if (s->minimize_stopped_by)
		ploom_json_put_str(&b, root, "minimize_stopped_by", s->minimize_stopped_by);
	if (!s->failure) {
		ploom_json_put(&b, root, "failure", cJSON_CreateNull());
	} else {
		const struct ploom_outcome *o = s->failure;
		int exc = o->kind == PLOOM_OUTCOME_FAILURE;
		f = ploom_json_put(&b, root, "failure", cJSON_CreateObject());
		ploom_json_put_str(&b, f, "kind", ploom_outcome_kind_name(o->kind));
		ploom_json_put_str(&b, f, "type", exc ? o->exc_type : NULL);
		ploom_json_put_str(&b, f, "message", exc ? (o->exc_message ? o->exc_message : "")
					 : o->summary);
		ploom_json_put_str(&b, f, "summary", o->summary);
	}
	if (s->with_outcomes) {
		cJSON *list = ploom_json_put(&b, root, "outcomes", cJSON_CreateArray());
		size_t i;

		for (i = 0; list && i < s->noutcomes; i++) {
			const struct ploom_search_outcome *t = &s->outcomes[i];
			f = ploom_json_append(&b, list, cJSON_CreateObject());
			ploom_json_put_str(&b, f, "kind", ploom_outcome_kind_name(t->kind));
			ploom_json_put_str(&b, f, "summary", t->summary);
			ploom_json_put_num(&b, f, "schedules", (double)t->schedules);
		}
		ploom_json_put_bool(&b, root, "outcomes_truncated", s->outcomes_truncated);
	}
	if (s->shard)
		put_shard(&b, root, s->shard);
	if (b.oom) {
		ploom_err_oom(err);
		goto done;
	}
	text = ploom_json_print(root, err);
	if (!text)
		goto done;
	ret = ploom_json_write_text(out, text, err);
done:
	free(text);
	cJSON_Delete(root);
	return ret;
}


/* ---- reading ---- */

void ploom_stats_in_free(struct ploom_stats_in *in)
{
	size_t i;

	if (!in)
		return;
	free(in->result);
	free(in->target);
	free(in->stopped_by);
	free(in->reduction);
	free(in->search);
	free(in->hash_seed);
	free(in->trace);
	free(in->minimized_trace);
	free(in->minimize_stopped_by);
	free(in->failure.summary);
	free(in->failure.exc_type);
	free(in->failure.exc_message);
	for (i = 0; in->outcomes && i < in->stats.noutcomes; i++)
		free(in->outcomes[i].summary);
	free(in->outcomes);
	free(in->shard);
	ploom_config_release_modules(&in->modules);
	free(in);
}

/* A required string member that must be one of the NULL-terminated
 * names (or null, when nullable). */
static void get_name(struct ploom_json_reader *r, char **out, const cJSON *obj, const char *prefix,
		     const char *name, int nullable, const char *const *names)
{
	size_t i;

	ploom_json_get_str(r, out, obj, prefix, name, 1, nullable);
	if (r->failed || !*out)
		return;
	for (i = 0; names[i]; i++)
		if (!strcmp(*out, names[i]))
			return;
	ploom_json_fail(r, "is not a known value", prefix, name);
}

/* A required member that is a number from 0 up. */
static void get_measure(struct ploom_json_reader *r, double *out, const cJSON *obj,
			const char *name)
{
	const cJSON *x = ploom_json_get(r, obj, "", name, 1);

	if (r->failed)
		return;
	if (!x || !cJSON_IsNumber(x) || !isfinite(x->valuedouble) || x->valuedouble < 0)
		ploom_json_fail(r, "is not a number from 0", "", name);
	else
		*out = x->valuedouble;
}

/* A required member that is an integer from min to max, or null (-1). */
static void get_long_or_null(struct ploom_json_reader *r, long *out, const cJSON *obj,
			     const char *prefix, const char *name, long min, long max)
{
	const cJSON *x = ploom_json_get(r, obj, prefix, name, 1);

	*out = -1;
	if (r->failed || !x)
		return;
	ploom_json_to_long(r, out, x, min, max, prefix, name);
}

static void read_stats_failure(struct ploom_json_reader *r, struct ploom_stats_in *in,
			       const cJSON *root)
{
	static const char *const p = "failure.";
	const cJSON *x;
	char *kind = NULL;
	int k;

	if (!ploom_json_get(r, root, "", "failure", 1))
		return;
	x = ploom_json_get_object(r, root, "", "failure");
	ploom_json_get_str(r, &kind, x, p, "kind", 1, 0);
	if (r->failed)
		return;
	k = ploom_outcome_kind_parse(kind);
	free(kind);
	if (k < 0 || !ploom_outcome_is_failure((enum ploom_outcome_kind)k)) {
		ploom_json_fail(r, "is not a kind of failure", p, "kind");
		return;
	}
	in->failure.kind = (enum ploom_outcome_kind)k;
	ploom_json_get_str(r, &in->failure.summary, x, p, "summary", 1, 0);
	if (k == PLOOM_OUTCOME_FAILURE) {
		ploom_json_get_str(r, &in->failure.exc_type, x, p, "type", 1, 0);
		ploom_json_get_str(r, &in->failure.exc_message, x, p, "message", 1, 0);
	}
	if (!r->failed)
		in->stats.failure = &in->failure;
}

static void read_stats_outcomes(struct ploom_json_reader *r, struct ploom_stats_in *in,
				const cJSON *root)
{
	const cJSON *list, *e;
	char prefix[64], *kind = NULL;
	size_t n;
	int k;

	if (!cJSON_GetObjectItemCaseSensitive(root, "outcomes"))
		return;
	list = ploom_json_get_array(r, root, "", "outcomes");
	if (r->failed)
		return;
	n = (size_t)cJSON_GetArraySize(list);
	if (n > PLOOM_SEARCH_MAX_OUTCOMES) {
		ploom_json_fail(r, "has more than 1000 entries", "", "outcomes");
		return;
	}
	in->outcomes = calloc(n + 1, sizeof(*in->outcomes));
	if (!in->outcomes) {
		r->failed = 1;
		ploom_err_oom(r->err);
		return;
	}
	in->stats.with_outcomes = 1;
	in->stats.outcomes = in->outcomes;
	cJSON_ArrayForEach(e, list) {
		struct ploom_search_outcome *t = &in->outcomes[in->stats.noutcomes];

		snprintf(prefix, sizeof(prefix), "[%zu]", in->stats.noutcomes);
		if (!cJSON_IsObject(e)) {
			ploom_json_fail(r, "is not an object", "outcomes", prefix);
			return;
		}
		snprintf(prefix, sizeof(prefix), "outcomes[%zu].", in->stats.noutcomes++);
		ploom_json_get_str(r, &kind, e, prefix, "kind", 1, 0);
		if (r->failed)
			return;
		k = ploom_outcome_kind_parse(kind);
		free(kind);
		kind = NULL;
		if (k < 0) {
			ploom_json_fail(r, "is not an outcome kind", prefix, "kind");
			return;
		}
		t->kind = (enum ploom_outcome_kind)k;
		ploom_json_get_str(r, &t->summary, e, prefix, "summary", 1, 0);
		ploom_json_get_long(r, &t->schedules, e, prefix, "schedules", 1, LONG_MAX);
	}
	ploom_json_get_bool(r, &in->stats.outcomes_truncated, root, "", "outcomes_truncated");
}

static void read_stats_shard(struct ploom_json_reader *r, struct ploom_stats_in *in,
			     const cJSON *root)
{
	static const char *const p = "shard.";
	struct ploom_shard *sh;
	const cJSON *x;
	long v = 0;

	if (!cJSON_GetObjectItemCaseSensitive(root, "shard"))
		return;
	x = ploom_json_get_object(r, root, "", "shard");
	if (r->failed)
		return;
	sh = in->shard = calloc(1, sizeof(*sh));
	if (!sh) {
		r->failed = 1;
		ploom_err_oom(r->err);
		return;
	}
	ploom_json_get_int(r, &sh->count, x, p, "count", 1, PLOOM_SHARD_MAX);
	ploom_json_get_long(r, &v, x, p, "index", 0, PLOOM_SHARD_MAX - 1);
	sh->index = (int)v;
	if (!r->failed && sh->index >= sh->count)
		ploom_json_fail(r, "is not below shard.count", p, "index");
	ploom_json_get_int(r, &sh->depth, x, p, "depth", 0, PLOOM_SHARD_MAX_DEPTH);
	get_long_or_null(r, &sh->units, x, p, "units", 0, LONG_MAX);
	ploom_json_get_long(r, &sh->owned, x, p, "owned", 0, LONG_MAX);
	ploom_json_get_long(r, &sh->probes, x, p, "probes", 0, LONG_MAX);
	get_long_or_null(r, &sh->failure_unit, x, p, "failure_unit", 0, LONG_MAX);
	if (!r->failed && sh->units >= 0 && sh->owned > sh->units)
		ploom_json_fail(r, "is more than shard.units", p, "owned");
	if (!r->failed && sh->units >= 0 && sh->failure_unit >= sh->units)
		ploom_json_fail(r, "is not below shard.units", p, "failure_unit");
	if (!r->failed && sh->failure_unit >= 0 && sh->failure_unit % sh->count != sh->index)
		ploom_json_fail(r, "is not a unit of this shard", p, "failure_unit");
	/* a saved schedule's failure has no unit: it came before the search */
	if (!r->failed && (sh->failure_unit >= 0) != (in->stats.failing > 0))
		ploom_json_fail(r, in->stats.failing ? "is null while there is a failure"
						     : "is set while no schedule of the search failed",
				p, "failure_unit");
	sh->last_unit = -1;
	in->stats.shard = sh;
}

/* "search", optional (statistics written before the search orders came
 * from dfs), and a sample's seed and pct_depth, as the trace's config
 * has them. */
static void read_stats_search(struct ploom_json_reader *r, struct ploom_stats_in *in,
			      const cJSON *root)
{
	struct ploom_stats *s = &in->stats;
	long seed = 0;

	if (r->failed || !cJSON_GetObjectItemCaseSensitive(root, "search"))
		return;
	ploom_json_get_str(r, &in->search, root, "", "search", 1, 0);
	if (!r->failed && !ploom_search_kind_find(in->search, NULL))
		ploom_json_fail(r, "is not a known value", "", "search");
	if (r->failed)
		return;
	if (ploom_search_flags(in->search) & PLOOM_KIND_SAMPLE) {
		ploom_json_get_long(r, &seed, root, "", "seed", 0, (long)PLOOM_SAMPLE_MAX_SEED);
		s->seed = (unsigned long)seed;
	}
	if (ploom_search_flags(in->search) & PLOOM_KIND_PCT_DEPTH)
		ploom_json_get_int(r, &s->pct_depth, root, "", "pct_depth", 1, PLOOM_PCT_MAX_DEPTH);
}

/* "instrument" and "instrument_scenario", optional: statistics written
 * before them come from searches that instrumented nothing. */
static void read_stats_instrument(struct ploom_json_reader *r, struct ploom_stats_in *in,
				  const cJSON *root)
{
	struct ploom_stats *s = &in->stats;

	ploom_json_get_modules(r, &in->modules, root, "", "instrument",
			       ploom_config_add_instrument);
	if (ploom_json_get(r, root, "", "instrument_scenario", 0))
		ploom_json_get_bool(r, &in->modules.instrument_scenario, root, "",
				    "instrument_scenario");
	s->instrument = (const char *const *)in->modules.instrument;
	s->ninstrument = in->modules.ninstrument;
	s->instrument_scenario = in->modules.instrument_scenario;
}

static void read_stats(struct ploom_json_reader *r, struct ploom_stats_in *in, const cJSON *root)
{
	static const char *const results[] = {"pass", "failure", "incomplete", NULL};
	static const char *const stops[] = {"failure", "max-steps", "max-schedules",
					    "time-limit", "internal-error", NULL};
	/* minimize.h's stopped_by */
	static const char *const minimize_stops[] = {"time", "max-schedules", "memory", NULL};
	struct ploom_stats *s = &in->stats;
	long v = 0;

	if (!cJSON_IsObject(root)) {
		r->failed = 1;
		ploom_err_set(r->err, PLOOM_ERR_INPUT, "not a JSON object");
		return;
	}
	get_name(r, &in->result, root, "", "result", 0, results);
	ploom_json_get_str(r, &in->target, root, "", "target", 1, 0);
	ploom_json_get_long(r, &s->schedules, root, "", "schedules", 0, LONG_MAX);
	ploom_json_get_long(r, &s->failing, root, "", "failing", 0, LONG_MAX);
	if (!r->failed && s->failing > s->schedules)
		ploom_json_fail(r, "is more than schedules", "", "failing");
	/* optional: statistics written before step limits were counted */
	if (!r->failed && cJSON_GetObjectItemCaseSensitive(root, "step_limited"))
		ploom_json_get_long(r, &s->step_limited, root, "", "step_limited", 0, LONG_MAX);
	if (!r->failed && s->failing + s->step_limited > s->schedules)
		ploom_json_fail(r, "with failing is more than schedules", "", "step_limited");
	/* optional: statistics written before saved schedules were run */
	if (!r->failed && cJSON_GetObjectItemCaseSensitive(root, "saved_runs"))
		ploom_json_get_long(r, &s->saved_runs, root, "", "saved_runs", 0, LONG_MAX);
	if (!r->failed && cJSON_GetObjectItemCaseSensitive(root, "saved_failing"))
		ploom_json_get_long(r, &s->saved_failing, root, "", "saved_failing", 0, LONG_MAX);
	if (!r->failed && s->saved_failing > s->saved_runs)
		ploom_json_fail(r, "is more than saved_runs", "", "saved_failing");
	ploom_json_get_bool(r, &s->complete, root, "", "complete");
	get_name(r, &in->stopped_by, root, "", "stopped_by", 1, stops);
	if (!r->failed && s->complete != !in->stopped_by)
		ploom_json_fail(r, s->complete ? "is set in a complete search"
					       : "is null in an incomplete search",
				"", "stopped_by");
	if (!r->failed && s->complete && s->step_limited)
		ploom_json_fail(r, "is true while schedules reached the step limit", "",
				"complete");
	get_long_or_null(r, &v, root, "", "max_preemptions", 0, INT_MAX);
	s->max_preemptions = (int)v;
	ploom_json_get_str(r, &in->reduction, root, "", "reduction", 1, 0);
	/* written with a reduction only; ploom-merge adds the shards' up */
	if (!r->failed && cJSON_GetObjectItemCaseSensitive(root, "sleep_blocked"))
		ploom_json_get_long(r, &s->sleep_blocked, root, "", "sleep_blocked", 0, LONG_MAX);
	read_stats_search(r, in, root);
	read_stats_instrument(r, in, root);
	ploom_json_get_str(r, &in->hash_seed, root, "", "hash_seed", 1, 0);
	get_measure(r, &s->elapsed_s, root, "elapsed_s");
	get_measure(r, &s->schedules_per_second, root, "schedules_per_second");
	ploom_json_get_long(r, &s->max_depth, root, "", "max_depth", 0, LONG_MAX);
	ploom_json_get_str(r, &in->trace, root, "", "trace", 1, 1);
	ploom_json_get_str(r, &in->minimized_trace, root, "", "minimized_trace", 1, 1);
	if (!r->failed && cJSON_GetObjectItemCaseSensitive(root, "minimize_stopped_by"))
		get_name(r, &in->minimize_stopped_by, root, "", "minimize_stopped_by", 0,
			 minimize_stops);
	read_stats_failure(r, in, root);
	if (!r->failed && (s->failing > 0 || s->saved_failing > 0) != (s->failure != NULL))
		ploom_json_fail(r, s->failure ? "is set while no schedule failed"
					      : "is null while schedules failed",
				"", "failure");
	if (!r->failed && !strcmp(in->result, "failure") != (s->failure != NULL))
		ploom_json_fail(r, "does not say what the counts say", "", "result");
	read_stats_outcomes(r, in, root);
	read_stats_shard(r, in, root);
	s->result = in->result;
	s->target = in->target;
	s->stopped_by = in->stopped_by;
	s->reduction = in->reduction;
	s->search = in->search ? in->search : PLOOM_SEARCH_UNSAID->search;
	s->hash_seed = in->hash_seed;
	s->trace = in->trace;
	s->minimized_trace = in->minimized_trace;
	s->minimize_stopped_by = in->minimize_stopped_by;
}

int ploom_stats_parse(struct ploom_stats_in **out, const char *text, size_t len,
		      struct ploom_err *err)
{
	struct ploom_json_reader r = {.err = err};
	struct ploom_stats_in *in = NULL;
	cJSON *root = NULL;
	int ret = -1;

	*out = NULL;
	root = ploom_json_parse(text, len, err);
	if (!root)
		goto done;
	in = calloc(1, sizeof(*in));
	if (!in) {
		ploom_err_oom(err);
		goto done;
	}
	read_stats(&r, in, root);
	if (r.failed)
		goto done;
	*out = in;
	in = NULL;
	ret = 0;
done:
	ploom_stats_in_free(in);
	cJSON_Delete(root);
	return ret;
}

int ploom_stats_read_file(struct ploom_stats_in **out, const char *path, struct ploom_err *err)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char *buf = NULL;
	size_t len = 0;
	int ret = -1;

	*out = NULL;
	if (!f)
		return ploom_err_set(err, PLOOM_ERR_SYSTEM, "%s", strerror(errno));
	buf = malloc(PLOOM_STATS_MAX_BYTES + 1);
	if (!buf) {
		ploom_err_oom(err);
		goto done;
	}
	len = fread(buf, 1, PLOOM_STATS_MAX_BYTES + 1, f);
	if (ferror(f))
		ploom_err_set(err, PLOOM_ERR_SYSTEM, "%s", strerror(errno));
	else if (len > PLOOM_STATS_MAX_BYTES)
		ploom_err_set(err, PLOOM_ERR_INPUT, "larger than %zu MiB",
			      PLOOM_STATS_MAX_BYTES >> 20);
	else if (memchr(buf, '\0', len))
		ploom_err_set(err, PLOOM_ERR_INPUT, "not JSON (it contains a NUL byte)");
	else
		ret = ploom_stats_parse(out, buf, len, err);
done:
	free(buf);
	if (f != stdin)
		fclose(f);
	return ret;
}
