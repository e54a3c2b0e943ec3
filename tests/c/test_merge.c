/* Tests of lib/merge: shards' statistics, read by lib/json, added up, and
 * shards of another search refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/json.h"
#include "../../lib/merge.h"
#include "../../lib/search.h"
#include "../../lib/shard.h"
#include "check.h"

/* The statistics of passing shard index of 2, as ploom-explore -k
 * --shard writes them, with the counts given; search NULL leaves the
 * field out, as statistics older than it did, and after its value more
 * fields may follow (those of the instrumented modules). */
static struct ploom_stats_in *shard(int index, const char *schedules, const char *probes,
				    const char *outcome_schedules, const char *search)
{
	struct ploom_err err = {0, ""};
	struct ploom_stats_in *in = NULL;
	char text[2048], field[256] = "";

	if (search)
		snprintf(field, sizeof(field), "\"search\": %s,", search);
	snprintf(text, sizeof(text),
		 "{\"result\": \"pass\", \"target\": \"t.py:s\", \"schedules\": %s,"
		 " \"failing\": 0, \"complete\": true, \"stopped_by\": null,"
		 " \"max_preemptions\": null, \"reduction\": \"none\", %s"
		 " \"hash_seed\": \"0\", \"elapsed_s\": 1, \"schedules_per_second\": 1,"
		 " \"max_depth\": 3, \"trace\": null, \"minimized_trace\": null,"
		 " \"failure\": null,"
		 " \"outcomes\": [{\"kind\": \"pass\", \"summary\": \"pass\", \"schedules\": %s}],"
		 " \"outcomes_truncated\": false,"
		 " \"shard\": {\"index\": %d, \"count\": 2, \"depth\": 4, \"units\": 16,"
		 " \"owned\": 8, \"probes\": %s, \"failure_unit\": null}}",
		 schedules, field, outcome_schedules, index, probes);
	if (!CHECK_INT(ploom_stats_parse(&in, text, strlen(text), &err), 0))
		printf("  %s\n", err.msg);
	return in;
}

/* The merge of shards 0 and 1: 0 with err filled by the merge's result,
 * -1 when a shard is refused (err filled too). */
static int merge_two(struct ploom_stats_in *a, struct ploom_stats_in *b,
		     const struct ploom_stats **out, struct ploom_merge **m,
		     struct ploom_err *err)
{
	*out = NULL;
	if (ploom_merge_new(m, err) < 0)
		return -1;
	if (ploom_merge_add(*m, a, "s0.json", err) < 0) {
		ploom_stats_in_free(b);
		return -1;
	}
	if (ploom_merge_add(*m, b, "s1.json", err) < 0)
		return -1;
	ploom_merge_result(out, *m, err);
	return 0;
}

static void merge_adds_up_the_counts_of_the_shards(void)
{
	struct ploom_err err = {0, ""};
	const struct ploom_stats *s;
	struct ploom_merge *m = NULL;

	CHECK_INT(merge_two(shard(0, "3", "1", "3", "\"dfs\""), shard(1, "4", "2", "4", "\"dfs\""),
			    &s, &m, &err), 0);
	if (CHECK(s != NULL)) {
		CHECK_INT(s->schedules, 7);
		CHECK_INT(s->shard->probes, 3);
		CHECK_INT(s->shard->owned, 16);
		CHECK_INT(s->noutcomes, 1);
		CHECK_INT(s->outcomes[0].schedules, 7);
		CHECK_STR(s->search, "dfs");
		CHECK(s->complete);
	}
	ploom_merge_free(m);
}

/* Each count fits a long alone; their sum does not, and would wrap to a
 * negative count (undefined behaviour besides). */
static void merge_refuses_counts_that_add_up_beyond_long_max(void)
{
	static const struct {
		const char *schedules, *probes, *outcome, *msg;
	} cases[] = {
		{"9e18", "0", "1", "field 'schedules' adds up to more than 9223372036854775807 "
				   "over the shards"},
		{"1", "9e18", "1", "field 'shard.probes' adds up to more than 9223372036854775807 "
				   "over the shards"},
		{"1", "0", "9e18", "field 'outcomes[].schedules' adds up to more than "
				   "9223372036854775807 over the shards"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ploom_err err = {0, ""};
		const struct ploom_stats *s;
		struct ploom_merge *m = NULL;

		CHECK_INT(merge_two(shard(0, cases[i].schedules, cases[i].probes, cases[i].outcome,
					  "\"dfs\""),
				    shard(1, cases[i].schedules, cases[i].probes, cases[i].outcome,
					  "\"dfs\""),
				    &s, &m, &err), 0);
		CHECK(s == NULL);
		CHECK_INT(err.kind, PLOOM_ERR_INPUT);
		CHECK_STR(err.msg, cases[i].msg);
		ploom_merge_free(m);
	}
}

static void merge_refuses_shards_of_another_search_order(void)
{
	struct ploom_err err = {0, ""};
	const struct ploom_stats *s;
	struct ploom_merge *m = NULL;

	CHECK_INT(merge_two(shard(0, "3", "0", "3", "\"dfs\""), shard(1, "4", "0", "4", "\"ipb\""),
			    &s, &m, &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_INPUT);
	CHECK_STR(err.msg, "its search is not that of 's0.json'");
	ploom_merge_free(m);
}

/* statistics without "search" came from dfs, the only order then */
static void merge_takes_statistics_without_search_as_dfs(void)
{
	struct ploom_err err = {0, ""};
	const struct ploom_stats *s;
	struct ploom_merge *m = NULL;

	CHECK_INT(merge_two(shard(0, "3", "0", "3", NULL), shard(1, "4", "0", "4", "\"dfs\""),
			    &s, &m, &err), 0);
	if (CHECK(s != NULL))
		CHECK_STR(s->search, "dfs");
	ploom_merge_free(m);
	CHECK_INT(merge_two(shard(0, "3", "0", "3", NULL), shard(1, "4", "0", "4", "\"ipb\""),
			    &s, &m, &err), -1);
	CHECK_STR(err.msg, "its search is not that of 's0.json'");
	ploom_merge_free(m);
}

/* Statistics of one passing schedule with fields (one or more, comma-
 * separated) added must be refused with msg. */
static void check_refused(const char *fields, const char *msg)
{
	struct ploom_err err = {0, ""};
	struct ploom_stats_in *in = NULL;
	char text[512];

	snprintf(text, sizeof(text),
		 "{\"result\": \"pass\", \"target\": \"t.py:s\", \"schedules\": 1,"
		 " \"failing\": 0, \"complete\": true, \"stopped_by\": null,"
		 " \"max_preemptions\": null, \"reduction\": \"none\", %s,"
		 " \"hash_seed\": \"0\", \"elapsed_s\": 1, \"schedules_per_second\": 1,"
		 " \"max_depth\": 3, \"trace\": null, \"minimized_trace\": null,"
		 " \"failure\": null}", fields);
	CHECK_INT(ploom_stats_parse(&in, text, strlen(text), &err), -1);
	CHECK_STR(err.msg, msg);
	CHECK(in == NULL);
}

static void stats_parse_checks_the_search_order(void)
{
	static const struct {
		const char *search, *msg;
	} cases[] = {
		{"\"bfs\"", "field 'search' is not a known value"},
		{"null", "field 'search' is not a string"},
		{"3", "field 'search' is not a string"},
		{"\"pct\"", "missing field 'seed'"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char field[64];

		snprintf(field, sizeof(field), "\"search\": %s", cases[i].search);
		check_refused(field, cases[i].msg);
	}
}

/* What a shard instrumented is part of its search: the shards must agree,
 * and the merge says it as they do; statistics without it instrumented
 * nothing. */
static void merge_keeps_what_the_shards_instrumented(void)
{
	static const char both[] = "\"dfs\", \"instrument\": [\"mylib\", \"b.c\"], "
				   "\"instrument_scenario\": true";
	struct ploom_err err = {0, ""};
	const struct ploom_stats *s;
	struct ploom_merge *m = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	CHECK_INT(merge_two(shard(0, "3", "0", "3", both), shard(1, "4", "0", "4", both), &s, &m,
			    &err), 0);
	if (CHECK(s != NULL) && CHECK_INT(s->ninstrument, 2)) {
		CHECK_STR(s->instrument[0], "mylib");
		CHECK_STR(s->instrument[1], "b.c");
		CHECK_INT(s->instrument_scenario, 1);
		f = open_memstream(&text, &len);
		if (CHECK(f != NULL)) {
			CHECK_INT(ploom_stats_write(f, s, &err), 0);
			fclose(f);
			CHECK(strstr(text, "\"instrument\":\t[\"mylib\", \"b.c\"],\n"
					   "\t\"instrument_scenario\":\ttrue,") != NULL);
		}
		free(text);
	}
	ploom_merge_free(m);
	CHECK_INT(merge_two(shard(0, "3", "0", "3", both),
			    shard(1, "4", "0", "4", "\"dfs\", \"instrument\": [\"mylib\"], "
						    "\"instrument_scenario\": true"),
			    &s, &m, &err), -1);
	CHECK_STR(err.msg, "it instrumented other modules than 's0.json'");
	ploom_merge_free(m);
	CHECK_INT(merge_two(shard(0, "3", "0", "3", both),
			    shard(1, "4", "0", "4", "\"dfs\", \"instrument\": [\"mylib\", \"b.c\"]"),
			    &s, &m, &err), -1);
	CHECK_STR(err.msg, "it instrumented other modules than 's0.json'");
	ploom_merge_free(m);
	CHECK_INT(merge_two(shard(0, "3", "0", "3", NULL),
			    shard(1, "4", "0", "4", "\"dfs\", \"instrument\": [], "
						    "\"instrument_scenario\": false"),
			    &s, &m, &err), 0);
	if (CHECK(s != NULL))
		CHECK(s->ninstrument == 0 && !s->instrument_scenario);
	ploom_merge_free(m);
}

static void stats_parse_checks_the_instrumented_modules(void)
{
	static const struct {
		const char *fields, *msg;
	} cases[] = {
		{"\"instrument\": \"mylib\"", "field 'instrument' is not an array"},
		{"\"instrument\": [\"ok\", \"not ok\"]",
		 "field 'instrument[1]' is not a module name (Python identifiers joined by '.')"},
		{"\"instrument_scenario\": \"yes\"", "field 'instrument_scenario' is not a boolean"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_refused(cases[i].fields, cases[i].msg);
}

/* The statistics of shard index of 2 that failed: saved "1" for a saved
 * schedule that failed again before the search (no unit), else the
 * search's first failure in unit, with its trace. */
static struct ploom_stats_in *failed_shard(int index, int saved, int unit, const char *trace)
{
	struct ploom_err err = {0, ""};
	struct ploom_stats_in *in = NULL;
	char text[2048], unit_text[32] = "null";

	if (unit >= 0)
		snprintf(unit_text, sizeof(unit_text), "%d", unit);
	snprintf(text, sizeof(text),
		 "{\"result\": \"failure\", \"target\": \"t.py:s\", \"schedules\": %d,"
		 " \"failing\": %d, \"saved_runs\": %d, \"saved_failing\": %d,"
		 " \"complete\": false, \"stopped_by\": \"failure\","
		 " \"max_preemptions\": null, \"reduction\": \"none\", \"search\": \"dfs\","
		 " \"hash_seed\": \"0\", \"elapsed_s\": 1, \"schedules_per_second\": 1,"
		 " \"max_depth\": 3, \"trace\": \"%s\", \"minimized_trace\": \"min-%s\","
		 " \"failure\": {\"kind\": \"failure\", \"type\": \"E\", \"message\": \"%s\","
		 " \"summary\": \"E: %s\"},"
		 " \"shard\": {\"index\": %d, \"count\": 2, \"depth\": 4, \"units\": null,"
		 " \"owned\": 1, \"probes\": 0, \"failure_unit\": %s}}",
		 saved ? 0 : 3, saved ? 0 : 1, saved ? 2 : 0, saved, trace, trace,
		 saved ? "again" : "m", saved ? "again" : "m", index, unit_text);
	if (!CHECK_INT(ploom_stats_parse(&in, text, strlen(text), &err), 0))
		printf("  %s\n", err.msg);
	return in;
}

static void merge_counts_the_saved_schedules_once_and_their_failure_first(void)
{
	struct ploom_err err = {0, ""};
	const struct ploom_stats *s;
	struct ploom_merge *m = NULL;

	/* shard 0 found a saved failure again; shard 1's search failed in unit 5 */
	CHECK_INT(merge_two(failed_shard(0, 1, -1, "saved.json"), failed_shard(1, 0, 5, "unit.json"),
			    &s, &m, &err), 0);
	if (CHECK(s != NULL)) {
		CHECK_INT(s->saved_runs, 2);
		CHECK_INT(s->saved_failing, 1);
		CHECK_INT(s->failing, 1);
		CHECK_INT(s->schedules, 3);
		CHECK_STR(s->trace, "saved.json");
		/* the saved failure's minimized trace and outcome too, the
		 * search's unit */
		CHECK_STR(s->minimized_trace, "min-saved.json");
		if (CHECK(s->failure != NULL))
			CHECK_STR(s->failure->summary, "E: again");
		CHECK_INT(s->shard->failure_unit, 5);
		CHECK_STR(s->result, "failure");
	}
	ploom_merge_free(m);
	/* without a saved failure, the search's first, as before */
	CHECK_INT(merge_two(shard(0, "3", "0", "3", "\"dfs\""), failed_shard(1, 0, 5, "unit.json"),
			    &s, &m, &err), 0);
	if (CHECK(s != NULL)) {
		CHECK_INT(s->saved_runs, 0);
		CHECK_STR(s->trace, "unit.json");
	}
	ploom_merge_free(m);
}

static void stats_parse_checks_the_saved_counts(void)
{
	static const struct {
		const char *fields, *msg;
	} cases[] = {
		{"\"saved_runs\": 1, \"saved_failing\": 2",
		 "field 'saved_failing' is more than saved_runs"},
		{"\"saved_runs\": -1", "field 'saved_runs' is out of range"},
		{"\"saved_runs\": null", "field 'saved_runs' is not an integer"},
		/* a saved failure without its failure */
		{"\"saved_runs\": 1, \"saved_failing\": 1",
		 "field 'failure' is null while schedules failed"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_refused(cases[i].fields, cases[i].msg);
}

/* The statistics of passing shard index of count, complete or not, with
 * units units. */
static struct ploom_stats_in *shard_of(int index, int count, int complete, int units)
{
	struct ploom_err err = {0, ""};
	struct ploom_stats_in *in = NULL;
	char text[1024];

	snprintf(text, sizeof(text),
		 "{\"result\": \"pass\", \"target\": \"t.py:s\", \"schedules\": 1,"
		 " \"failing\": 0, \"complete\": %s, \"stopped_by\": %s,"
		 " \"max_preemptions\": null, \"reduction\": \"none\","
		 " \"hash_seed\": \"0\", \"elapsed_s\": 1, \"schedules_per_second\": 1,"
		 " \"max_depth\": 3, \"trace\": null, \"minimized_trace\": null,"
		 " \"failure\": null,"
		 " \"outcomes\": [{\"kind\": \"pass\", \"summary\": \"pass\", \"schedules\": 1}],"
		 " \"outcomes_truncated\": false,"
		 " \"shard\": {\"index\": %d, \"count\": %d, \"depth\": 20, \"units\": %d,"
		 " \"owned\": 1, \"probes\": 2, \"failure_unit\": null}}",
		 complete ? "true" : "false", complete ? "null" : "\"max-schedules\"", index, count,
		 units);
	if (!CHECK_INT(ploom_stats_parse(&in, text, strlen(text), &err), 0))
		printf("  %s\n", err.msg);
	return in;
}

/* 64,000 shards are merged in time in proportion to their number (a
 * merge that checked each against every one before it took minutes),
 * and a shard that clashes by its place is refused naming the earliest
 * part it clashes with. */
static void merge_takes_64000_shards_each_checked_once(void)
{
	struct ploom_err err = {0, ""};
	const struct ploom_stats *s = NULL;
	struct ploom_merge *m = NULL;
	const int n = 64000;
	char name[32];
	int k, refused = 0;

	if (!CHECK_INT(ploom_merge_new(&m, &err), 0))
		return;
	/* backwards, the first one incomplete: the first complete part is the
	 * second one added */
	for (k = n - 1; k >= 0 && !refused; k--) {
		snprintf(name, sizeof(name), "s%d.json", k);
		refused = ploom_merge_add(m, shard_of(k, n, k != n - 1, 1000), name, &err) < 0;
	}
	CHECK_INT(refused, 0);
	CHECK_INT(ploom_merge_add(m, shard_of(5, n, 1, 1000), "again.json", &err), -1);
	CHECK_STR(err.msg, "shard 5 of 64000 again, as in 's5.json'");
	CHECK_INT(ploom_merge_add(m, shard_of(5, n, 1, 999), "again.json", &err), -1);
	CHECK_STR(err.msg, "it found 999 units, 's63998.json' 1000: the scenario is not the same");
	CHECK_INT(ploom_merge_result(&s, m, &err), 0);
	if (CHECK(s != NULL)) {
		CHECK_INT(s->schedules, n);
		CHECK_INT(s->shard->probes, 2 * n);
		CHECK_INT(s->shard->nmissing, 0);
		CHECK_INT(s->shard->units, 1000);
		CHECK(!s->complete);
	}
	/* the result sorted the parts: added after it, a part is checked
	 * against them where they are now */
	CHECK_INT(ploom_merge_add(m, shard_of(7, n, 1, 1000), "late.json", &err), -1);
	CHECK_STR(err.msg, "shard 7 of 64000 again, as in 's7.json'");
	CHECK_INT(ploom_merge_add(m, shard_of(8, n, 1, 1), "late.json", &err), -1);
	CHECK_STR(err.msg, "it found 1 units, 's0.json' 1000: the scenario is not the same");
	ploom_merge_free(m);
}

int main(void)
{
	merge_counts_the_saved_schedules_once_and_their_failure_first();
	stats_parse_checks_the_saved_counts();
	merge_adds_up_the_counts_of_the_shards();
	merge_refuses_counts_that_add_up_beyond_long_max();
	merge_refuses_shards_of_another_search_order();
	merge_takes_statistics_without_search_as_dfs();
	stats_parse_checks_the_search_order();
	merge_keeps_what_the_shards_instrumented();
	stats_parse_checks_the_instrumented_modules();
	merge_takes_64000_shards_each_checked_once();
	return check_report();
}
