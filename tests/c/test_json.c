/* Tests of the trace JSON codec, the statistics writer and the failure
 * id: round trips, and a named error for each kind of bad trace. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../lib/json.h"
#include "../../lib/search.h"
#include "../../lib/source.h"
#include "../../lib/stats.h"
#include "../../lib/trace.h"
#include "check.h"
#include "fake.h"

static int *ints(const int *v, size_t n)
{
	int *p = malloc(n * sizeof(*p));

	memcpy(p, v, n * sizeof(*p));
	return p;
}

static void add_step(struct ploom_run *run, int task, const char *op, const char *obj,
		     const int *en, size_t nen, const char *value)
{
	struct ploom_step *s = ploom_run_add_step(run);

	s->index = (long)run->nsteps - 1;
	s->task = task;
	s->op = (enum ploom_op)ploom_op_parse(op, strlen(op));
	s->object = ploom_strdup(obj);
	if (obj)
		ploom_obj_parse(&s->obj, obj, strlen(obj));
	s->enabled = ints(en, nen);
	s->nenabled = nen;
	s->value = ploom_strdup(value);
	/* an acquire with a value is a nonblocking one; the caller makes
	 * one timed */
	if (!strcmp(op, "acquire") && value != NULL)
		s->mode = PLOOM_ACQUIRE_NONBLOCKING;
}

/* The bank's failing schedule, roughly, as a trace. */
static struct ploom_trace *sample_trace(void)
{
	struct ploom_trace *t = fake_trace("examples/bank_account.py:scenario",
					   "examples.bank_account", "scenario",
					   "/src/examples/bank_account.py", "4294967295", 10000, 2.5,
					   NULL);
	static const int e0[] = {0}, e01[] = {0, 1}, e12[] = {1, 2};

	t->config.max_preemptions = 2;
	ploom_config_add_patch(&t->config, "mylib.pool", NULL);
	ploom_config_add_patch(&t->config, "_other9", NULL);
	ploom_config_add_instrument(&t->config, "mylib.pool", NULL);
	ploom_config_add_instrument(&t->config, "zlib_ext", NULL);
	t->config.instrument_scenario = 1;
	{
		static const char keys[] = "mylib.pool:3,mylib.pool:17 mylib.pool:3";
		CHECK_INT(ploom_config_add_plain_points(&t->config, keys, strlen(keys), NULL), 2);
	}
	add_step(&t->run, 0, "start", "thread#1", e0, 1, NULL);
	add_step(&t->run, 1, "begin", NULL, e01, 2, NULL);
	add_step(&t->run, 1, "read", "cell#0", e01, 2, "100");
	add_step(&t->run, 2, "acquire", "lock#0", e12, 2, "False");
	add_step(&t->run, 2, "write", "cell#0", e12, 2, "'a \"quoted\"\\n\xc3\xa9'");
	add_step(&t->run, 1, "acquire", "lock#0", e12, 2, "True");
	t->run.steps[5].mode = PLOOM_ACQUIRE_TIMED;
	t->run.steps[5].label = strdup("get (timeout) \xc3\xa9");
	t->run.outcome.kind = PLOOM_OUTCOME_FAILURE;
	t->run.outcome.task = 0;
	t->run.outcome.exc_type = strdup("builtins.AssertionError");
	t->run.outcome.exc_message = strdup("the account is overdrawn");
	t->run.outcome.traceback = strdup("Traceback (most recent call last):\n  ...\n");
	t->run.outcome.output = strdup("some output\n");
	ploom_run_finish(&t->run, NULL);
	ploom_trace_add_fingerprint(t, "/src/examples/bank_account.py",
				    "fd814f41df2601f1b05e8b0f49455b43b669cf89", NULL);
	ploom_trace_set_last_relpath(t, "examples/bank_account.py", NULL);
	t->scenario.relpath = strdup("examples/bank_account.py");
	t->source.root = strdup("repository");
	t->source.commit = strdup("89abcdef0123456789abcdef0123456789abcdef");
	t->source.dirty = 1;
	t->id = strdup("9a90a7aef655763c");
	t->minimized_from = 3;
	t->run.steps[2].where = (struct ploom_where){strdup("examples/bank_account.py"),
						     strdup("withdraw"), 20};
	t->run.steps[4].where = (struct ploom_where){strdup("/usr/lib/python3.13/\xc3\xa9.py"),
						     strdup("<lambda>"), 7};
	ploom_run_set_name(&t->run, (struct ploom_obj){PLOOM_OBJ_CELL, 0}, "balance", NULL);
	ploom_run_set_name(&t->run, (struct ploom_obj){PLOOM_OBJ_THREAD, 1}, "mathieu", NULL);
	ploom_run_set_name(&t->run, (struct ploom_obj){PLOOM_OBJ_LOCK, 0}, "vault", NULL);
	return t;
}

static void trace_round_trips_through_json(void)
{
	struct ploom_trace *t = sample_trace(), *back = NULL;
	struct ploom_err err = {0, ""};
	char *text = ploom_trace_to_json(t, &err), *again = NULL;

	CHECK(text != NULL);
	CHECK_INT(ploom_trace_parse(&back, text, strlen(text), &err), 0);
	CHECK_STR(err.msg, "");
	if (back) {
		again = ploom_trace_to_json(back, &err);
		CHECK_STR(again, text);
		CHECK_STR(back->hash_seed, "4294967295");
		CHECK_STR(back->run.steps[5].label, "get (timeout) \xc3\xa9");
		CHECK(back->run.steps[4].label == NULL);
		CHECK_INT(back->config.max_preemptions, 2);
		CHECK_INT(back->config.npatch, 2);
		if (back->config.npatch == 2) {
			CHECK_STR(back->config.patch[0], "mylib.pool");
			CHECK_STR(back->config.patch[1], "_other9");
		}
		CHECK_INT(back->config.ninstrument, 2);
		if (back->config.ninstrument == 2) {
			CHECK_STR(back->config.instrument[0], "mylib.pool");
			CHECK_STR(back->config.instrument[1], "zlib_ext");
		}
		CHECK_INT(back->config.instrument_scenario, 1);
		/* each key once, in order */
		CHECK_INT(back->config.nplain_points, 2);
		if (back->config.nplain_points == 2) {
			CHECK_STR(back->config.plain_points[0], "mylib.pool:3");
			CHECK_STR(back->config.plain_points[1], "mylib.pool:17");
		}
		CHECK_INT(back->run.nsteps, 6);
		CHECK(back->run.steps[1].object == NULL);
		CHECK(back->run.steps[0].value == NULL);
		CHECK_INT(back->run.steps[0].mode, PLOOM_ACQUIRE_BLOCKING);
		CHECK_INT(back->run.steps[3].mode, PLOOM_ACQUIRE_NONBLOCKING);
		CHECK_INT(back->run.steps[5].mode, PLOOM_ACQUIRE_TIMED);
		CHECK_STR(back->run.steps[5].value, "True");
		CHECK_STR(back->run.steps[4].value, "'a \"quoted\"\\n\xc3\xa9'");
		CHECK_INT(back->run.preemptions, t->run.preemptions);
		CHECK_INT(back->run.nchoices, t->run.nchoices);
		CHECK_STR(back->run.outcome.summary,
			  "builtins.AssertionError: the account is overdrawn");
		CHECK_STR(back->run.outcome.output, "some output\n");
		CHECK_STR(back->id, "9a90a7aef655763c");
		CHECK_INT(back->minimized_from, 3);
		CHECK_INT(back->nfingerprints, 1);
		if (back->nfingerprints == 1) {
			CHECK_STR(back->fingerprints[0].path, "/src/examples/bank_account.py");
			CHECK_STR(back->fingerprints[0].blob,
				  "fd814f41df2601f1b05e8b0f49455b43b669cf89");
			CHECK_STR(back->fingerprints[0].relpath, "examples/bank_account.py");
		}
		CHECK_STR(back->scenario.relpath, "examples/bank_account.py");
		CHECK_STR(back->source.root, "repository");
		CHECK_STR(back->source.commit, "89abcdef0123456789abcdef0123456789abcdef");
		CHECK_INT(back->source.dirty, 1);
		CHECK(back->run.steps[0].where.file == NULL);
		CHECK_STR(back->run.steps[2].where.file, "examples/bank_account.py");
		CHECK_STR(back->run.steps[2].where.function, "withdraw");
		CHECK_INT(back->run.steps[2].where.line, 20);
		CHECK_STR(back->run.steps[4].where.file, "/usr/lib/python3.13/\xc3\xa9.py");
		CHECK_STR(back->run.steps[4].where.function, "<lambda>");
		CHECK_INT(back->run.nnames, 3);
		CHECK_STR(ploom_run_name(&back->run, (struct ploom_obj){PLOOM_OBJ_THREAD, 1}),
			  "mathieu");
		CHECK_STR(ploom_run_name(&back->run, (struct ploom_obj){PLOOM_OBJ_CELL, 0}),
			  "balance");
		CHECK_STR(ploom_run_name(&back->run, (struct ploom_obj){PLOOM_OBJ_LOCK, 0}), "vault");
		/* task 0 and 2 go by their default names, written but no name */
		CHECK(ploom_run_name(&back->run, (struct ploom_obj){PLOOM_OBJ_THREAD, 0}) == NULL);
		CHECK(strstr(text, "\"name\":\t\"MainThread\"") != NULL);
		CHECK(strstr(text, "\"name\":\t\"thread#2\"") != NULL);
	}
	free(again);
	free(text);
	ploom_trace_free(back);
	ploom_trace_free(t);
}

static void every_outcome_kind_round_trips(void)
{
	static const enum ploom_outcome_kind kinds[] = {
		PLOOM_OUTCOME_PASS, PLOOM_OUTCOME_DEADLOCK, PLOOM_OUTCOME_STEP_LIMIT,
		PLOOM_OUTCOME_CRASH, PLOOM_OUTCOME_EXIT, PLOOM_OUTCOME_TIMEOUT,
		PLOOM_OUTCOME_DIVERGENCE,
	};
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct ploom_trace *t = sample_trace(), *back = NULL;
		struct ploom_err err = {0, ""};
		struct ploom_outcome *o = &t->run.outcome;
		char *text, *again = NULL;

		free(o->summary);
		o->summary = NULL;
		o->kind = kinds[i];
		o->signal = 6;
		o->status = 3;
		o->limit = 10000;
		o->timeout_ms = 2500;
		o->divergence_index = 4;
		o->divergence_message = strdup("task 3 is not enabled");
		if (o->kind == PLOOM_OUTCOME_DEADLOCK) {
			o->waits = calloc(1, sizeof(*o->waits));
			o->nwaits = 1;
			o->waits[0].task = 1;
			o->waits[0].op = PLOOM_OP_ACQUIRE;
			o->waits[0].object = strdup("lock#0");
			o->waits[0].holder = -1;
		}
		o->summary = ploom_outcome_summary(o);
		text = ploom_trace_to_json(t, &err);
		if (!CHECK_INT(ploom_trace_parse(&back, text, strlen(text), &err), 0))
			printf("  kind %s: %s\n", ploom_outcome_kind_name(kinds[i]), err.msg);
		if (back) {
			char *s = ploom_outcome_summary(&back->run.outcome);
			CHECK_STR(s, o->summary);
			free(s);
			again = ploom_trace_to_json(back, &err);
			CHECK_STR(again, text);
		}
		free(again);
		free(text);
		ploom_trace_free(back);
		ploom_trace_free(t);
	}
}

/* Edits of the sample trace's JSON and the error each must give. */
static const struct {
	const char *from;
	const char *to;
	const char *want;
} bad[] = {
	{"\"version\":\t2", "\"version\":\t9", "unknown format version 9 (this ploom reads 1 to 2)"},
	{"\"version\":\t2", "\"version\":\t0", "unknown format version 0 (this ploom reads 1 to 2)"},
	/* version 1 had no timed acquire: one there is refused, not read as
	 * a blocking acquire */
	{"\"version\":\t2", "\"version\":\t1", "field 'steps[5].timeout' needs format version 2"},
	{"\"timeout\":\ttrue", "\"timeout\":\t1", "field 'steps[5].timeout' is not a boolean"},
	{"\"blocking\":\tfalse", "\"blocking\":\tfalse, \"timeout\": true",
	 "field 'steps[3].timeout' is true on a nonblocking acquire"},
	{"\"op\":\t\"start\"", "\"op\":\t\"start\", \"timeout\": true",
	 "field 'steps[0].timeout' is only for an acquire or a join"},
	/* only an acquire has a nonblocking mode */
	{"\"op\":\t\"start\"", "\"op\":\t\"start\", \"blocking\": false",
	 "field 'steps[0].blocking' is false on an operation other than acquire"},
	{"\"format\":\t\"ploom-trace\"", "\"format\":\t\"other\"", "not a ploom trace (format is 'other')"},
	{"\"format\":\t\"ploom-trace\",", "", "missing field 'format'"},
	{"\"steps\":", "\"stepz\":", "missing field 'steps'"},
	{"\"steps\":", "\"steps\": 3, \"x\":", "field 'steps' is not an array"},
	{"\"task\":\t0,\n\t\t\t\"op\":\t\"start\"", "\"task\":\t-1,\n\t\t\t\"op\":\t\"start\"",
	 "field 'steps[0].task' is out of range"},
	{"\"task\":\t0,\n\t\t\t\"op\":\t\"start\"", "\"task\":\t0.5,\n\t\t\t\"op\":\t\"start\"",
	 "field 'steps[0].task' is not an integer"},
	{"\"qualname\":\t\"scenario\"", "\"qualname\":\t7", "field 'scenario.qualname' is not a string"},
	{"\"gil\":\ttrue", "\"gil\":\t1", "field 'python.gil' is not a boolean"},
	{"\"hash_seed\":\t\"4294967295\"", "\"hash_seed\":\t4294967295",
	 "field 'hash_seed' is not a string"},
	{"\"kind\":\t\"failure\"", "\"kind\":\t\"oops\"", "unknown outcome kind 'oops'"},
	/* a value the message quotes stays one line and cannot drive the terminal */
	{"\"format\":\t\"ploom-trace\"", "\"format\":\t\"ploom-\\ntrace\\u001b[2J\\u007f\"",
	 "not a ploom trace (format is 'ploom-?trace?[2J?')"},
	{"\"kind\":\t\"failure\"",
	 "\"kind\":\t\"0123456789012345678901234567890123456789012345678901234567890123456789\"",
	 "unknown outcome kind '012345678901234567890123456789012345678901234567890123456789...'"},
	{"\"exception\":", "\"exceptio\":", "missing field 'outcome.exception'"},
	{"\"enabled\":\t[0]", "\"enabled\":\t[0, \"1\"]", "field 'steps[0].enabled[1]' is not an integer"},
	{"\"index\":\t1,", "\"index\":\t7,", "field 'steps[1].index' is out of order"},
	{"\"schedule_timeout_s\":\t2.5", "\"schedule_timeout_s\":\t-1",
	 "field 'config.schedule_timeout_s' is not a number of seconds from 0 to 1e9"},
	/* cJSON reads 1e999 as infinity; the others overflow a long's ms */
	{"\"schedule_timeout_s\":\t2.5", "\"schedule_timeout_s\":\t1e999", "field 'config.schedule_timeout_s' is not a number of seconds from 0 to 1e9"},
	{"\"schedule_timeout_s\":\t2.5", "\"schedule_timeout_s\":\t-1e999", "field 'config.schedule_timeout_s' is not a number of seconds from 0 to 1e9"},
	{"\"schedule_timeout_s\":\t2.5", "\"schedule_timeout_s\":\t1e300", "field 'config.schedule_timeout_s' is not a number of seconds from 0 to 1e9"},
	{"\"schedule_timeout_s\":\t2.5", "\"schedule_timeout_s\":\t1000000000.5", "field 'config.schedule_timeout_s' is not a number of seconds from 0 to 1e9"},
	{"{\n\t\"format\"", "[{\n\t\"format\"", "not valid JSON"},
	{"\"hash_seed\":\t\"4294967295\"", "\"hash_seed\":\t\"4294967296\"",
	 "field 'hash_seed' is not a hash seed"},
	{"\"hash_seed\":\t\"4294967295\"", "\"hash_seed\":\t\"random\"",
	 "field 'hash_seed' is not a hash seed"},
	{"\"fingerprints\":\t[", "\"fingerprints\":\t{}, \"x\": [",
	 "field 'fingerprints' is not an array"},
	{"\"fingerprints\":\t[", "\"fingerprints\":\t[7, ",
	 "field 'fingerprints[0]' is not an object"},
	{"\"blob\":\t\"fd814f41", "\"blob\":\t\"FD814F41",
	 "field 'fingerprints[0].blob' is not a git blob id"},
	/* a replay joins a relpath to a folder of its own: it may not leave it */
	{"\"relpath\":\t\"examples/", "\"relpath\":\t\"/etc/",
	 "field 'scenario.relpath' is not a relative path inside its root"},
	{"\"relpath\":\t\"examples/", "\"relpath\":\t\"../",
	 "field 'scenario.relpath' is not a relative path inside its root"},
	{"\"relpath\":\t\"examples/", "\"relpath\":\t\"a//",
	 "field 'scenario.relpath' is not a relative path inside its root"},
	{"\"relpath\":\t\"examples/bank_account.py\"\n\t\t}",
	 "\"relpath\":\t\"examples/..\"\n\t\t}",
	 "field 'fingerprints[0].relpath' is not a relative path inside its root"},
	{"\"relpath\":\t\"examples/", "\"relpath\":\t7, \"x\":\t\"",
	 "field 'scenario.relpath' is not a string"},
	{"\"commit\":\t\"89abcdef", "\"commit\":\t\"89ABCDEF",
	 "field 'source.commit' is not a git commit id"},
	{"\"root\":\t\"repository\"", "\"root\":\tnull", "field 'source.root' is not a string"},
	{"\"dirty\":\ttrue", "\"dirty\":\t1", "field 'source.dirty' is not a boolean"},
	{"\"source\":\t{", "\"source\":\t[], \"x\":\t{", "field 'source' is not an object"},
	{"\"blob\":\t\"fd814f41", "\"blob\":\t\"814f41",
	 "field 'fingerprints[0].blob' is not a git blob id"},
	{"\"path\":\t\"/src/examples/bank_account.py\"", "\"path\":\t\"\"",
	 "field 'fingerprints[0].path' is empty"},
	{"\"path\":\t\"/src/examples/bank_account.py\",", "",
	 "missing field 'fingerprints[0].path'"},
	{"\"id\":\t\"9a90a7aef655763c\"", "\"id\":\t\"9a90a7aef655763\"",
	 "field 'id' is not a failure id"},
	{"\"id\":\t\"9a90a7aef655763c\"", "\"id\":\t16", "field 'id' is not a string"},
	{"\"minimized_from\":\t3", "\"minimized_from\":\t-3",
	 "field 'minimized_from' is out of range"},
	{"\"minimized_from\":\t3", "\"minimized_from\":\t\"3\"",
	 "field 'minimized_from' is not an integer"},
	{"\"patch\":\t[", "\"patch\":\t\"mylib\", \"x\":\t[",
	 "field 'config.patch' is not an array"},
	{"\"patch\":\t[", "\"patch\":\t[7, ", "field 'config.patch[0]' is not a string"},
	{"\"_other9\"", "\"other-9\"",
	 "field 'config.patch[1]' is not a module name (Python identifiers joined by '.')"},
	{"\"_other9\"", "\"a..b\"", "field 'config.patch[1]' is not a module name"},
	{"\"instrument\":\t[", "\"instrument\":\t{}, \"x\":\t[",
	 "field 'config.instrument' is not an array"},
	{"\"instrument\":\t[", "\"instrument\":\t[null, ",
	 "field 'config.instrument[0]' is not a string"},
	{"\"zlib_ext\"", "\"zlib-ext\"",
	 "field 'config.instrument[1]' is not a module name (Python identifiers joined by '.')"},
	{"\"instrument_scenario\":\ttrue", "\"instrument_scenario\":\t1",
	 "field 'config.instrument_scenario' is not a boolean"},
	{"\"plain_points\":\t[", "\"plain_points\":\t7, \"x\":\t[",
	 "field 'config.plain_points' is not an array"},
	{"\"mylib.pool:17\"", "\"mylib.pool:17 --x\"",
	 "field 'config.plain_points[1]' is not a site key (MODULE:K)"},
	{"\"mylib.pool:17\"", "\"mylib.pool:017\"",
	 "field 'config.plain_points[1]' is not a site key (MODULE:K)"},
	{"\"mylib.pool:17\"", "\"mylib..pool:17\"",
	 "field 'config.plain_points[1]' is not a site key (MODULE:K)"},
	/* where: a place to show, checked as any string of the trace */
	{"\"where\":\t{", "\"where\":\t7, \"x\":\t{", "field 'steps[2].where' is not an object"},
	{"\"line\":\t20", "\"line\":\t0", "field 'steps[2].where.line' is out of range"},
	{"\"line\":\t20", "\"line\":\t2147483648",
	 "field 'steps[2].where.line' is out of range"},
	{"\"line\":\t20", "\"line\":\t\"20\"", "field 'steps[2].where.line' is not an integer"},
	{",\n\t\t\t\t\"line\":\t20", "", "missing field 'steps[2].where.line'"},
	{"\"function\":\t\"withdraw\"", "\"function\":\t\"\"",
	 "field 'steps[2].where.function' is empty"},
	{"\"function\":\t\"withdraw\"", "\"function\":\tnull",
	 "field 'steps[2].where.function' is not a string"},
	{"\"function\":\t\"withdraw\"", "\"function\":\t\"with\\u001b[2Jdraw\"",
	 "field 'steps[2].where.function' holds a control character"},
	{"\"function\":\t\"withdraw\"",
	 "\"function\":\t\"0123456789012345678901234567890123456789012345678901234567890123"
	 "45678901234567890123456789012345678901234567890123456789012345678\"",
	 "field 'steps[2].where.function' is longer than 128 bytes"},
	{"\"file\":\t\"examples/", "\"file\":\t\"../",
	 "field 'steps[2].where.file' is neither an absolute path nor a relative one inside its root"},
	{"\"file\":\t\"examples/", "\"file\":\t\"\\n/",
	 "field 'steps[2].where.file' holds a control character"},
	{"\"file\":\t\"examples/bank_account.py\"", "\"file\":\t\"\"",
	 "field 'steps[2].where.file' is empty"},
	/* the names of tasks and objects */
	{"\"tasks\":\t[", "\"tasks\":\t{}, \"x\":\t[", "field 'tasks' is not an array"},
	{"\"tasks\":\t[", "\"tasks\":\t[3, ", "field 'tasks[0]' is not an object"},
	{"\"id\":\t1,", "\"id\":\t0,", "field 'tasks[1].id' is not above the task before it"},
	{"\"id\":\t1,", "\"id\":\t-1,", "field 'tasks[1].id' is out of range"},
	{"\"name\":\t\"mathieu\"", "\"name\":\t\"ma\\tthieu\"",
	 "field 'tasks[1].name' holds a control character"},
	{"\"name\":\t\"mathieu\"", "\"name\":\t\"\"", "field 'tasks[1].name' is empty"},
	{"\"name\":\t\"mathieu\"", "\"name\":\t1", "field 'tasks[1].name' is not a string"},
	{"\"objects\":\t[", "\"objects\":\t{}, \"x\":\t[", "field 'objects' is not an array"},
	{"\"object\":\t\"cell#0\"", "\"object\":\t\"thread#1\"",
	 "field 'objects[0].object' is not a cell, a lock or plain state (tasks are named in 'tasks')"},
	{"\"object\":\t\"cell#0\"", "\"object\":\tnull",
	 "field 'objects[0].object' is not an object name"},
	{"\"object\":\t\"cell#0\"", "\"object\":\t\"cell0\"",
	 "field 'objects[0].object' is not an object name"},
	{"\"object\":\t\"lock#0\"", "\"object\":\t\"cell#0\"",
	 "field 'objects[1].object' names an object a second time"},
	{"\"name\":\t\"balance\"", "\"name\":\t\"\\u007f\"",
	 "field 'objects[0].name' holds a control character"},
	/* the step's task ran, so it was enabled there */
	{"\"enabled\":\t[0]", "\"enabled\":\t[]", "field 'steps[0].enabled' is empty"},
	{"\"enabled\":\t[0, 1]", "\"enabled\":\t[0]",
	 "field 'steps[1].enabled' does not hold the step's task"},
	{"\"enabled\":\t[0, 1]", "\"enabled\":\t[0, 2]",
	 "field 'steps[1].enabled' does not hold the step's task"},
};

static void bad_traces_are_rejected_with_a_named_problem(void)
{
	struct ploom_trace *t = sample_trace();
	char *text = ploom_trace_to_json(t, NULL);
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ploom_err err = {0, ""};
		struct ploom_trace *back = NULL;
		char *edited = fake_replace(text, bad[i].from, bad[i].to);

		if (!CHECK(edited != NULL)) {
			printf("  case %zu: '%s' not in the sample\n", i, bad[i].from);
			continue;
		}
		CHECK_INT(ploom_trace_parse(&back, edited, strlen(edited), &err), -1);
		CHECK(back == NULL);
		CHECK_INT(err.kind, PLOOM_ERR_INPUT);
		if (!CHECK(strstr(err.msg, bad[i].want) != NULL))
			printf("  case %zu: got '%s'\n", i, err.msg);
		free(edited);
	}
	free(text);
	ploom_trace_free(t);
}

/* A trace names at most PLOOM_NAMES_MAX objects, tasks included. */
static void a_trace_names_at_most_1024_objects(void)
{
	struct ploom_trace *t = sample_trace(), *back = NULL;
	struct ploom_err err = {0, ""};
	char *text = ploom_trace_to_json(t, NULL), *edited;
	struct ploom_buf more = {0};
	int i;

	/* with the sample's three names, 1021 more make 1024 */
	ploom_buf_addf(&more, "\"objects\":\t[");
	for (i = 0; i < PLOOM_NAMES_MAX - 3; i++)
		ploom_buf_addf(&more, "{\"object\": \"lock#%d\", \"name\": \"l\"}, ", 100 + i);
	edited = fake_replace(text, "\"objects\":\t[", more.data);
	CHECK_INT(ploom_trace_parse(&back, edited, strlen(edited), &err), 0);
	CHECK_INT(back ? back->run.nnames : 0, PLOOM_NAMES_MAX);
	ploom_trace_free(back);
	free(edited);
	ploom_buf_addf(&more, "{\"object\": \"cell#99\", \"name\": \"c\"}, ");
	edited = fake_replace(text, "\"objects\":\t[", more.data);
	CHECK_INT(ploom_trace_parse(&back, edited, strlen(edited), &err), -1);
	CHECK_STR(err.msg, "field 'objects[1023].name' names more than 1024 objects");
	free(edited);
	ploom_buf_release(&more);
	free(text);
	ploom_trace_free(t);
}

/* A blocked task's place round trips; traces without places read too. */
static void a_wait_keeps_its_place(void)
{
	struct ploom_trace *t = sample_trace(), *back = NULL;
	struct ploom_err err = {0, ""};
	struct ploom_outcome *o = &t->run.outcome;
	char *text;

	o->kind = PLOOM_OUTCOME_DEADLOCK;
	o->waits = calloc(2, sizeof(*o->waits));
	o->nwaits = 2;
	o->waits[0] = (struct ploom_wait){.task = 1, .op = PLOOM_OP_ACQUIRE,
					  .object = strdup("lock#0"), .holder = 2,
					  .where = {strdup("t.py"), strdup("transfer"), 12},
					  .waits_for = PLOOM_WAIT_NOTIFY, .on = strdup("Pool.cond")};
	o->waits[1] = (struct ploom_wait){.task = 2, .op = PLOOM_OP_JOIN,
					  .object = strdup("thread#1"), .holder = 1,
					  .waits_for = PLOOM_WAIT_JOIN};
	text = ploom_trace_to_json(t, &err);
	CHECK_INT(ploom_trace_parse(&back, text, strlen(text), &err), 0);
	if (back) {
		CHECK_STR(back->run.outcome.waits[0].where.file, "t.py");
		CHECK_STR(back->run.outcome.waits[0].where.function, "transfer");
		CHECK_INT(back->run.outcome.waits[0].where.line, 12);
		CHECK(back->run.outcome.waits[1].where.file == NULL);
		CHECK_INT(back->run.outcome.waits[0].waits_for, PLOOM_WAIT_NOTIFY);
		CHECK_STR(back->run.outcome.waits[0].on, "Pool.cond");
		CHECK_INT(back->run.outcome.waits[1].waits_for, PLOOM_WAIT_JOIN);
		CHECK(back->run.outcome.waits[1].on == NULL);
	}
	ploom_trace_free(back);
	free(text);
	ploom_trace_free(t);
}

static void trailing_garbage_and_truncation_are_errors(void)
{
	struct ploom_trace *t = sample_trace(), *back = NULL;
	struct ploom_err err = {0, ""};
	char *text = ploom_trace_to_json(t, NULL);
	size_t n = strlen(text);
	char *more = malloc(n + 3);

	memcpy(more, text, n);
	memcpy(more + n, "{}", 3);
	CHECK_INT(ploom_trace_parse(&back, more, n + 2, &err), -1);
	CHECK(strstr(err.msg, "unexpected data after the JSON") != NULL);
	CHECK_INT(ploom_trace_parse(&back, text, n / 2, &err), -1);
	CHECK(strstr(err.msg, "not valid JSON") != NULL);
	CHECK_INT(ploom_trace_parse(&back, "", 0, &err), -1);
	free(more);
	free(text);
	ploom_trace_free(t);
}

/* text with its first occurrence of `at` preceded by `insert` */
static char *insert_before(const char *text, const char *at, const char *insert)
{
	const char *p = strstr(text, at);
	char *out = NULL;

	CHECK(p != NULL);
	if (p && asprintf(&out, "%.*s%s%s", (int)(p - text), text, insert, p) < 0)
		out = NULL;
	CHECK(out != NULL);
	return out;
}

/* cJSON keeps the first of two members of one name and Python's json the
 * last: a trace with such a pair would mean two things, so it is refused,
 * at any depth and in objects of any size. */
static void duplicate_keys_are_refused(void)
{
	struct ploom_trace *t = sample_trace(), *back = NULL;
	struct ploom_err err = {0, ""};
	char *text = ploom_trace_to_json(t, NULL), *doc;
	struct ploom_buf big = {0};
	int i;

	doc = insert_before(text, "\"scenario\"",
			    "\"scenario\": {\"target\": \"os:abort\", \"module\": \"os\", "
			    "\"qualname\": \"abort\", \"file\": null}, ");
	CHECK_INT(ploom_trace_parse(&back, doc, strlen(doc), &err), -1);
	CHECK(back == NULL);
	CHECK_INT(err.kind, PLOOM_ERR_INPUT);
	CHECK_STR(err.msg, "duplicate key 'scenario'");
	free(doc);

	doc = insert_before(text, "\"target\"", "\"target\": \"os:abort\", ");
	CHECK_INT(ploom_trace_parse(&back, doc, strlen(doc), &err), -1);
	CHECK_STR(err.msg, "duplicate key 'target' in field 'scenario'");
	free(doc);

	doc = insert_before(text, "\"op\"", "\"op\": \"read\", ");
	CHECK_INT(ploom_trace_parse(&back, doc, strlen(doc), &err), -1);
	CHECK_STR(err.msg, "duplicate key 'op' in field 'steps[0]'");
	free(doc);

	/* an object of many members is checked by sorting its names */
	ploom_buf_addf(&big, "\"extra\": {");
	for (i = 0; i < 1000; i++)
		ploom_buf_addf(&big, "\"k%d\": %d, ", i, i);
	ploom_buf_addf(&big, "\"k500\": 0}, ");
	doc = insert_before(text, "\"scenario\"", big.data);
	CHECK_INT(ploom_trace_parse(&back, doc, strlen(doc), &err), -1);
	CHECK_STR(err.msg, "duplicate key 'k500' in field 'extra'");
	free(doc);
	ploom_buf_release(&big);

	/* names that differ only in case are two names */
	doc = insert_before(text, "\"scenario\"", "\"Scenario\": 1, ");
	CHECK_INT(ploom_trace_parse(&back, doc, strlen(doc), &err), 0);
	ploom_trace_free(back);
	free(doc);
	free(text);
	ploom_trace_free(t);
}

/* The byte (from 1) where needle starts in doc. */
static size_t byte_of(const char *doc, const char *needle)
{
	const char *p = strstr(doc, needle);

	CHECK(p != NULL);
	return p ? (size_t)(p - doc) + 1 : 0;
}

/* A cJSON string ends at its first NUL: an escaped one would cut the key
 * or value short, where Python's json reads it whole, so the readers
 * refuse it, as they refuse bytes that are not UTF-8 (cJSON copies them
 * as they come) and raw control characters (JSON forbids them). */
static void nul_escapes_bad_utf8_and_raw_controls_are_refused(void)
{
	static const struct {
		const char *from, *to, *at, *want;
	} cases[] = {
		/* a value: read as "with" before */
		{"\"function\":\t\"withdraw\"", "\"function\":\t\"with\\u0000draw\"", "\\u0000",
		 "a string holds a NUL character (\\u0000)"},
		/* a key: read as "scenario", a second one */
		{"\"scenario\"", "\"scenario\\u0000x\": 1, \"scenario\"", "\\u0000",
		 "a string holds a NUL character (\\u0000)"},
		{"\"function\":\t\"withdraw\"", "\"function\":\t\"with\xff\"", "\xff",
		 "invalid UTF-8"},
		/* overlong '/', a surrogate, beyond U+10FFFF, a cut sequence */
		{"\"function\":\t\"withdraw\"", "\"function\":\t\"\xc0\xaf\"", "\xc0",
		 "invalid UTF-8"},
		{"\"function\":\t\"withdraw\"", "\"function\":\t\"\xed\xa0\x80\"", "\xed",
		 "invalid UTF-8"},
		{"\"function\":\t\"withdraw\"", "\"function\":\t\"\xf4\x90\x80\x80\"", "\xf4",
		 "invalid UTF-8"},
		{"\"function\":\t\"withdraw\"", "\"function\":\t\"\xe2\x82\"", "\xe2",
		 "invalid UTF-8"},
		/* outside a string too */
		{"\"steps\":", "\xa0\"steps\":", "\xa0", "invalid UTF-8"},
		{"\"function\":\t\"withdraw\"", "\"function\":\t\"with\tdraw\"", "\tdraw",
		 "a string holds a control character"},
	};
	struct ploom_trace *t = sample_trace(), *back = NULL;
	struct ploom_err err = {0, ""};
	char *text = ploom_trace_to_json(t, NULL), *doc, want[128];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		doc = fake_replace(text, cases[i].from, cases[i].to);
		if (!CHECK(doc != NULL))
			continue;
		snprintf(want, sizeof(want), "%s at byte %zu", cases[i].want, byte_of(doc, cases[i].at));
		CHECK_INT(ploom_trace_parse(&back, doc, strlen(doc), &err), -1);
		CHECK(back == NULL);
		CHECK_INT(err.kind, PLOOM_ERR_INPUT);
		if (!CHECK_STR(err.msg, want))
			printf("  case %zu\n", i);
		free(doc);
	}
	/* UTF-8 of 2, 3 and 4 bytes, and an escaped backslash before u0000,
	 * are read as written */
	doc = fake_replace(text, "\"function\":\t\"withdraw\"",
			   "\"function\":\t\"w\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\\\\u0000\"");
	if (CHECK_INT(ploom_trace_parse(&back, doc, strlen(doc), &err), 0))
		CHECK_STR(back->run.steps[2].where.function,
			  "w\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\\u0000");
	ploom_trace_free(back);
	free(doc);
	/* the statistics reader too */
	doc = strdup("{\"result\": \"pass\\u0000\"}");
	CHECK_INT(ploom_stats_parse(&(struct ploom_stats_in *){NULL}, doc, strlen(doc), &err), -1);
	CHECK_STR(err.msg, "a string holds a NUL character (\\u0000) at byte 17");
	free(doc);
	doc = strdup("{\"result\": \"pass\xff\"}");
	CHECK_INT(ploom_stats_parse(&(struct ploom_stats_in *){NULL}, doc, strlen(doc), &err), -1);
	CHECK_STR(err.msg, "invalid UTF-8 at byte 17");
	free(doc);
	free(text);
	ploom_trace_free(t);
}

/* /dev/zero and binary files are refused at their first NUL byte, not
 * after reading up to the size limit. */
static void a_nul_byte_is_refused_as_it_comes(void)
{
	struct ploom_trace *back = NULL;
	struct ploom_err err = {0, ""};
	FILE *f = fopen("/dev/zero", "r");

	CHECK(f != NULL);
	CHECK_INT(ploom_trace_read(&back, f, &err), -1);
	CHECK_STR(err.msg, "not a ploom trace (it contains a NUL byte)");
	CHECK(ftell(f) <= 1 << 20);
	fclose(f);
}

/* Through a file: the size limit is the stream reader's. */
static void a_trace_larger_than_256_mib_is_refused(void)
{
	struct ploom_trace *t = sample_trace(), *back = NULL;
	struct ploom_err err = {0, ""};
	char *text = ploom_trace_to_json(t, NULL);
	FILE *f = tmpfile();

	/* the sample, then blanks up to one byte past the limit: valid JSON
	 * but for its size (the blanks are a hole in the file, so cheap) */
	CHECK(f != NULL);
	fputs(text, f);
	fflush(f);
	CHECK_INT(ftruncate(fileno(f), (off_t)PLOOM_TRACE_MAX_BYTES + 1), 0);
	rewind(f);
	CHECK_INT(ploom_trace_read(&back, f, &err), -1);
	CHECK(back == NULL);
	CHECK_INT(err.kind, PLOOM_ERR_INPUT);
	CHECK_STR(err.msg, "larger than 256 MiB");
	/* at the limit exactly it is read, and refused for its NUL bytes */
	CHECK_INT(ftruncate(fileno(f), (off_t)PLOOM_TRACE_MAX_BYTES), 0);
	rewind(f);
	CHECK_INT(ploom_trace_read(&back, f, &err), -1);
	CHECK_STR(err.msg, "not a ploom trace (it contains a NUL byte)");
	fclose(f);
	free(text);
	ploom_trace_free(t);
}

/* A step's label is a label, as a name is: a control character in it is
 * refused, not shown. */
static void a_steps_label_is_checked(void)
{
	struct ploom_trace *t = sample_trace(), *back = NULL;
	struct ploom_err err = {0, ""};
	char *text = ploom_trace_to_json(t, NULL);
	char *edited = fake_replace(text, "get (timeout) \xc3\xa9", "a\\u001bb");

	CHECK(edited != NULL);
	if (!edited)
		return;
	CHECK_INT(ploom_trace_parse(&back, edited, strlen(edited), &err), -1);
	CHECK(strstr(err.msg, "label") != NULL);
	free(edited);
	edited = fake_replace(text, "get (timeout) \xc3\xa9", "");
	err = (struct ploom_err){0, ""};
	CHECK_INT(ploom_trace_parse(&back, edited, strlen(edited), &err), -1);
	CHECK(strstr(err.msg, "label") != NULL);
	free(edited);
	free(text);
	ploom_trace_free(back);
	ploom_trace_free(t);
}

static void unknown_fields_are_ignored(void)
{
	struct ploom_trace *t = sample_trace(), *back = NULL;
	struct ploom_err err = {0, ""};
	char *text = ploom_trace_to_json(t, NULL);
	char *edited = fake_replace(text, "\"steps\":", "\"future\": {\"a.py\": \"abc\"}, \"steps\":");

	CHECK_INT(ploom_trace_parse(&back, edited, strlen(edited), &err), 0);
	free(edited);
	free(text);
	ploom_trace_free(back);
	ploom_trace_free(t);
}

/* A trace of format version 1 (no timed acquire in it) is read, and
 * written back as version 2 with the same steps; "timeout": false is the
 * same as no "timeout". */
static void a_version_1_trace_is_read(void)
{
	struct ploom_trace *t = sample_trace(), *back = NULL;
	struct ploom_err err = {0, ""};
	char *text, *v1, *again;

	t->run.steps[5].mode = PLOOM_ACQUIRE_BLOCKING;
	text = ploom_trace_to_json(t, NULL);
	CHECK(strstr(text, "\"timeout\"") == NULL);
	v1 = fake_replace(text, "\"version\":\t2", "\"version\":\t1");
	CHECK(v1 != NULL);
	if (v1) {
		char *with_false = fake_replace(v1, "\"blocking\":\tfalse",
						"\"blocking\":\tfalse, \"timeout\": false");
		CHECK_INT(ploom_trace_parse(&back, with_false, strlen(with_false), &err), 0);
		CHECK_STR(err.msg, "");
		free(with_false);
	}
	if (back) {
		CHECK_INT(back->run.steps[3].mode, PLOOM_ACQUIRE_NONBLOCKING);
		CHECK_INT(back->run.steps[5].mode, PLOOM_ACQUIRE_BLOCKING);
		again = ploom_trace_to_json(back, &err);
		CHECK_STR(again, text);
		free(again);
	}
	free(v1);
	free(text);
	ploom_trace_free(back);
	ploom_trace_free(t);
}

/* A timed join is written with "timeout": true and no "blocking" (a join
 * has no nonblocking mode), and read back as one; a blocking join has
 * neither field.  "blocking": false is refused on a join, whatever its
 * "timeout". */
static void a_timed_join_round_trips(void)
{
	struct ploom_trace *t = sample_trace(), *back = NULL;
	struct ploom_err err = {0, ""};
	static const int e0[] = {0}, e01[] = {0, 1};
	char *text, *again = NULL, *edited;

	add_step(&t->run, 0, "join", "thread#1", e01, 2, NULL);
	t->run.steps[6].mode = PLOOM_ACQUIRE_TIMED;
	add_step(&t->run, 0, "join", "thread#1", e0, 1, NULL);
	text = ploom_trace_to_json(t, &err);
	CHECK(text != NULL);
	CHECK(strstr(text, "\"op\":\t\"join\",\n\t\t\t\"object\":\t\"thread#1\",\n\t\t\t"
			   "\"enabled\":\t[0, 1],\n\t\t\t\"timeout\":\ttrue\n") != NULL);
	CHECK(strstr(text, "\"enabled\":\t[0]\n") != NULL);
	CHECK_INT(ploom_trace_parse(&back, text, strlen(text), &err), 0);
	CHECK_STR(err.msg, "");
	if (back) {
		CHECK_INT(back->run.nsteps, 8);
		CHECK_INT(back->run.steps[6].op, PLOOM_OP_JOIN);
		CHECK_INT(back->run.steps[6].mode, PLOOM_ACQUIRE_TIMED);
		CHECK_INT(back->run.steps[7].mode, PLOOM_ACQUIRE_BLOCKING);
		again = ploom_trace_to_json(back, &err);
		CHECK_STR(again, text);
	}
	ploom_trace_free(back);
	back = NULL;
	edited = fake_replace(text, "\"timeout\":\ttrue\n\t\t}, {\n\t\t\t\"index\":\t7",
			      "\"timeout\":\ttrue, \"blocking\": false\n\t\t}, {\n\t\t\t\"index\":\t7");
	CHECK(edited != NULL);
	if (edited) {
		CHECK_INT(ploom_trace_parse(&back, edited, strlen(edited), &err), -1);
		CHECK_STR(err.msg, "field 'steps[6].blocking' is false on an operation other than acquire");
	}
	free(edited);
	free(again);
	free(text);
	ploom_trace_free(back);
	ploom_trace_free(t);
}

/* A timeout's stacks are written when the worker sent them, read back
 * as they were, and checked as untrusted input: a trace without them
 * reads as before. */
static void a_timeouts_stacks_round_trip_and_are_checked(void)
{
	static const struct {
		const char *from, *to, *want;
	} bad_stacks[] = {
		{"\"stacks\":\t[", "\"stacks\": 3, \"x\": [", "field 'outcome.stacks' is not an array"},
		{"\"task\":\t2,\n\t\t\t\t\"state\"", "\"task\":\t0,\n\t\t\t\t\"state\"",
		 "field 'outcome.stacks[1].task' is not above the task before"},
		{"\"state\":\t\"finished\"", "\"state\":\t\"asleep\"",
		 "field 'outcome.stacks[1].state' is not running, finished, unstarted or unknown"},
		{"\"state\":\t\"finished\"", "\"state\":\t\"finished\", \"depth\": 0",
		 "field 'outcome.stacks[1].depth' belongs to a running task only"},
		{"\"depth\":\t3", "\"depth\":\t1",
		 "field 'outcome.stacks[0].frames' has more entries than depth or 8"},
		{"\"depth\":\t3", "\"depth\":\t-1", "field 'outcome.stacks[0].depth' is out of range"},
		{"\"file\":\t\"/src/a.py\"", "\"file\":\t\"../a.py\"",
		 "field 'outcome.stacks[0].frames[0].file' is neither an absolute path"},
		{"\"file\":\t\"/src/a.py\"", "\"file\":\t\"a\\n.py\"",
		 "field 'outcome.stacks[0].frames[0].file' holds a control character"},
		{"\"function\":\t\"spin\"", "\"function\":\t\"\"",
		 "field 'outcome.stacks[0].frames[0].function' is empty"},
		{"\"line\":\t4242", "\"line\":\t-7", "field 'outcome.stacks[0].frames[0].line' is out of range"},
		{"\"frames\":\t[{", "\"frames\":\t[1, {",
		 "field 'outcome.stacks[0].frames[0]' is not an object"},
	};
	struct ploom_trace *t = sample_trace(), *back = NULL;
	struct ploom_err err = {0, ""};
	struct ploom_outcome *o = &t->run.outcome;
	char *text, *again = NULL, *edited;
	size_t i;

	free(o->summary);
	o->summary = NULL;
	o->kind = PLOOM_OUTCOME_TIMEOUT;
	o->stacks = calloc(2, sizeof(*o->stacks));
	o->nstacks = 2;
	o->stacks[0] = (struct ploom_stack){0, PLOOM_STACK_RUNNING, 3,
					    calloc(2, sizeof(struct ploom_where)), 2};
	o->stacks[0].frames[0] = (struct ploom_where){strdup("/src/a.py"), strdup("spin"), 4242};
	o->stacks[0].frames[1] = (struct ploom_where){strdup("<string>"), strdup("<module>"), 0};
	o->stacks[1] = (struct ploom_stack){2, PLOOM_STACK_FINISHED, 0, NULL, 0};
	CHECK_INT(ploom_run_finish(&t->run, &err), 0);
	text = ploom_trace_to_json(t, &err);
	CHECK(text && strstr(text, "\"stacks\":\t[") != NULL);
	CHECK_INT(ploom_trace_parse(&back, text, strlen(text), &err), 0);
	CHECK_STR(err.msg, "");
	if (back && CHECK_INT(back->run.outcome.nstacks, 2)) {
		const struct ploom_stack *st = back->run.outcome.stacks;
		CHECK_INT(st[0].state, PLOOM_STACK_RUNNING);
		CHECK_INT(st[0].depth, 3);
		CHECK_INT(st[0].nframes, 2);
		CHECK_STR(st[0].frames[0].file, "/src/a.py");
		CHECK_STR(st[0].frames[0].function, "spin");
		CHECK_INT(st[0].frames[0].line, 4242);
		CHECK_INT(st[0].frames[1].line, 0);
		CHECK_INT(st[1].task, 2);
		CHECK_INT(st[1].state, PLOOM_STACK_FINISHED);
		again = ploom_trace_to_json(back, &err);
		CHECK_STR(again, text);
	}
	free(again);
	ploom_trace_free(back);
	back = NULL;
	for (i = 0; i < sizeof(bad_stacks) / sizeof(bad_stacks[0]); i++) {
		edited = fake_replace(text, bad_stacks[i].from, bad_stacks[i].to);
		if (!CHECK(edited != NULL)) {
			printf("  case %zu: '%s' not in the trace\n", i, bad_stacks[i].from);
			continue;
		}
		CHECK_INT(ploom_trace_parse(&back, edited, strlen(edited), &err), -1);
		if (!CHECK(strstr(err.msg, bad_stacks[i].want) != NULL))
			printf("  case %zu: got '%s'\n", i, err.msg);
		ploom_trace_free(back);
		back = NULL;
		free(edited);
	}
	/* the field is the timeout's: no stacks, nothing written */
	ploom_outcome_release_stacks(o);
	free(text);
	text = ploom_trace_to_json(t, &err);
	CHECK(text && strstr(text, "stacks") == NULL);
	free(text);
	ploom_trace_free(t);
}

/* Traces written before the fields existed have none of them. */
static void fingerprints_id_and_minimized_from_are_optional(void)
{
	struct ploom_trace *t = sample_trace(), *back = NULL, *empty = ploom_trace_new();
	struct ploom_err err = {0, ""};
	char *text, *again;

	CHECK_INT(ploom_trace_copy_fingerprints(t, empty, NULL), 0);
	ploom_trace_free(empty);
	free(t->id);
	t->id = NULL;
	t->minimized_from = -1;
	text = ploom_trace_to_json(t, NULL);
	CHECK(strstr(text, "\"id\":\t\"") == NULL);
	CHECK(strstr(text, "\"minimized_from\"") == NULL);
	CHECK(strstr(text, "\"fingerprints\":\t[]") != NULL);
	again = fake_replace(text, "\"fingerprints\":\t[],", "");
	CHECK(again != NULL);
	if (again) {
		CHECK_INT(ploom_trace_parse(&back, again, strlen(again), &err), 0);
		CHECK(back && back->nfingerprints == 0 && !back->id && back->minimized_from == -1);
		ploom_trace_free(back);
		back = NULL;
		free(again);
	}
	again = fake_replace(text, "\"preemptions\":",
			"\"id\": null, \"minimized_from\": null, \"preemptions\":");
	CHECK_INT(ploom_trace_parse(&back, again, strlen(again), &err), 0);
	CHECK(back && !back->id && back->minimized_from == -1);
	ploom_trace_free(back);
	free(again);
	free(text);
	ploom_trace_free(t);
}

/* Traces written before the relative paths existed read without them
 * (and so do not relocate); a root this ploom does not know reads and is
 * written back as it was; an unborn HEAD is a null commit. */
static void relpaths_and_source_are_optional(void)
{
	struct ploom_trace *t = sample_trace(), *back = NULL;
	struct ploom_err err = {0, ""};
	char *text, *old, *other, *again = NULL;

	free(t->source.commit);
	t->source.commit = NULL;
	text = ploom_trace_to_json(t, NULL);
	CHECK(text && strstr(text, "\"commit\":\tnull") != NULL);
	CHECK_INT(ploom_trace_parse(&back, text, strlen(text), &err), 0);
	CHECK(back && back->source.commit == NULL && back->source.dirty == 1);
	ploom_trace_free(back);
	back = NULL;

	/* the oldest form: no relpath, no source */
	free(t->scenario.relpath);
	t->scenario.relpath = NULL;
	free(t->fingerprints[0].relpath);
	t->fingerprints[0].relpath = NULL;
	free(t->source.root);
	t->source.root = NULL;
	old = ploom_trace_to_json(t, NULL);
	CHECK(old && strstr(old, "relpath") == NULL && strstr(old, "\"source\"") == NULL);
	CHECK_INT(ploom_trace_parse(&back, old, strlen(old), &err), 0);
	CHECK(back && !back->scenario.relpath && !back->fingerprints[0].relpath &&
	      !back->source.root && !back->source.commit && !back->source.dirty);
	ploom_trace_free(back);
	back = NULL;

	other = fake_replace(text, "\"root\":\t\"repository\"", "\"root\":\t\"import-path\"");
	CHECK_INT(ploom_trace_parse(&back, other, strlen(other), &err), 0);
	if (back) {
		CHECK_STR(back->source.root, "import-path");
		again = ploom_trace_to_json(back, NULL);
	}
	CHECK_STR(again, other);
	ploom_trace_free(back);
	free(again);
	free(other);
	free(old);
	free(text);
	ploom_trace_free(t);
}

static void copying_fingerprints_copies_the_source(void)
{
	struct ploom_trace *t = sample_trace(), *to = ploom_trace_new();

	CHECK_INT(ploom_trace_copy_fingerprints(to, t, NULL), 0);
	CHECK_INT(to->nfingerprints, 1);
	CHECK_STR(to->fingerprints[0].relpath, "examples/bank_account.py");
	CHECK_STR(to->scenario.relpath, "examples/bank_account.py");
	CHECK_STR(to->source.root, "repository");
	CHECK_STR(to->source.commit, "89abcdef0123456789abcdef0123456789abcdef");
	CHECK_INT(to->source.dirty, 1);
	ploom_trace_free(to);
	ploom_trace_free(t);
}

/* Traces written before config.patch existed patch nothing, and those
 * written before config.instrument and instrument_scenario instrument
 * nothing; a trace that patches or instruments nothing says so with
 * empty lists and false. */
static void config_module_lists_are_optional_and_always_written(void)
{
	struct ploom_trace *t = sample_trace(), *back = NULL;
	struct ploom_err err = {0, ""};
	char *text, *edited = NULL, *step = NULL;

	ploom_config_release_modules(&t->config);
	text = ploom_trace_to_json(t, NULL);
	CHECK(text && strstr(text, "\"patch\":\t[],\n\t\t\"instrument\":\t[],\n\t\t"
				 "\"instrument_scenario\":\tfalse") != NULL);
	if (text)
		step = fake_replace(text, ",\n\t\t\"patch\":\t[]", "");
	if (step)
		edited = fake_replace(step, ",\n\t\t\"instrument\":\t[]", "");
	free(step);
	step = edited;
	edited = step ? fake_replace(step, ",\n\t\t\"instrument_scenario\":\tfalse", "") : NULL;
	if (CHECK(edited != NULL)) {
		CHECK(strstr(edited, "\"patch\"") == NULL && strstr(edited, "\"instrument") == NULL);
		CHECK_INT(ploom_trace_parse(&back, edited, strlen(edited), &err), 0);
		CHECK(back && back->config.npatch == 0 && back->config.patch == NULL);
		CHECK(back && back->config.ninstrument == 0 && back->config.instrument == NULL);
		CHECK(back && back->config.instrument_scenario == 0);
	}
	free(step);
	free(edited);
	free(text);
	ploom_trace_free(back);
	ploom_trace_free(t);
}

/* The search order is written, and read back; a trace written before
 * there were orders came from dfs, and says none. */
static void config_search_is_optional_and_read_back(void)
{
	struct ploom_trace *t = sample_trace(), *back = NULL;
	struct ploom_err err = {0, ""};
	char *text, *edited, *unsaid;

	t->config.kind = ploom_search_kind_find("ipb", NULL);
	text = ploom_trace_to_json(t, NULL);
	CHECK(text && strstr(text, "\"search\":\t\"ipb\"") != NULL);
	CHECK_INT(ploom_trace_parse(&back, text, strlen(text), &err), 0);
	CHECK(back && back->config.kind == ploom_search_kind_find("ipb", NULL));
	ploom_trace_free(back);
	back = NULL;
	edited = fake_replace(text, "\n\t\t\"search\":\t\"ipb\",", "");
	if (CHECK(edited != NULL)) {
		CHECK(strstr(edited, "\"search\"") == NULL);
		CHECK_INT(ploom_trace_parse(&back, edited, strlen(edited), &err), 0);
		CHECK(back && back->config.kind == PLOOM_SEARCH_UNSAID);
	}
	free(edited);
	ploom_trace_free(back);
	back = NULL;
	edited = fake_replace(text, "\"search\":\t\"ipb\"", "\"search\":\t1");
	if (CHECK(edited != NULL)) {
		CHECK_INT(ploom_trace_parse(&back, edited, strlen(edited), &err), -1);
		CHECK_STR(err.msg, "field 'config.search' is not a string");
	}
	free(edited);
	/* a search no kind is, or one with a reduction no kind takes it
	 * with, is refused as statistics refuse it */
	edited = fake_replace(text, "\"search\":\t\"ipb\"", "\"search\":\t\"bfs\"");
	if (CHECK(edited != NULL)) {
		CHECK_INT(ploom_trace_parse(&back, edited, strlen(edited), &err), -1);
		CHECK_STR(err.msg, "field 'config.search' is not a known search with this reduction");
	}
	free(edited);
	edited = fake_replace(text, "\"reduction\":\t\"none\"", "\"reduction\":\t\"dpor\"");
	if (CHECK(edited != NULL)) {
		CHECK_INT(ploom_trace_parse(&back, edited, strlen(edited), &err), -1);
		CHECK_STR(err.msg, "field 'config.search' is not a known search with this reduction");
	}
	free(edited);
	unsaid = fake_replace(text, "\n\t\t\"search\":\t\"ipb\",", "");
	edited = unsaid ? fake_replace(unsaid, "\"reduction\":\t\"none\"", "\"reduction\":\t\"fast\"")
			: NULL;
	free(unsaid);
	if (CHECK(edited != NULL)) {
		CHECK_INT(ploom_trace_parse(&back, edited, strlen(edited), &err), -1);
		CHECK_STR(err.msg, "field 'config.reduction' is not a known reduction");
	}
	free(edited);
	free(text);
	ploom_trace_free(back);
	/* a trace of no order reads as dfs's, and is written so */
	t->config.kind = NULL;
	text = ploom_trace_to_json(t, NULL);
	CHECK(text && strstr(text, "\"search\":\t\"dfs\"") != NULL);
	free(text);
	ploom_trace_free(t);
}

/* A sample's trace gives its seed and, for pct, its depth after its
 * search; another order's gives neither. */
static void config_search_is_written_for_a_sample_only(void)
{
	static const struct {
		const char *search;
		int seed, depth;
		const char *written;
	} cases[] = {
		{NULL, 0, 0, NULL},
		{"pct", 4294967295, 3,
		 "\"search\":\t\"pct\",\n\t\t\"seed\":\t4294967295,\n\t\t\"pct_depth\":\t3,\n"},
		{"random", 12, 0, "\"search\":\t\"random\",\n\t\t\"seed\":\t12,\n"},
	};
	static const struct {
		const char *from, *to, *err;
	} edits[] = {
		{"\"pct\"", "7", "field 'config.search' is not a string"},
		{"\t\"seed\":\t4294967295", "\t\"seed\":\t4294967296", "field 'config.seed' is out of range"},
		{",\n\t\t\"seed\":\t4294967295", "", "missing field 'config.seed'"},
		{"\"pct_depth\":\t3", "\"pct_depth\":\t0", "field 'config.pct_depth' is out of range"},
		{",\n\t\t\"pct_depth\":\t3", "", "missing field 'config.pct_depth'"},
	};
	struct ploom_err err = {0, ""};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ploom_trace *t = sample_trace(), *back = NULL;
		char *text;

		t->config.kind = cases[i].search ? ploom_search_kind_find(cases[i].search, NULL) : NULL;
		t->config.seed = (unsigned long)(unsigned)cases[i].seed;
		t->config.pct_depth = cases[i].depth;
		text = ploom_trace_to_json(t, &err);
		if (!CHECK(text != NULL))
			continue;
		if (cases[i].written)
			CHECK(strstr(text, cases[i].written) != NULL);
		else
			CHECK(strstr(text, "\"seed\"") == NULL && strstr(text, "pct_depth") == NULL);
		CHECK_INT(ploom_trace_parse(&back, text, strlen(text), &err), 0);
		if (back) {
			CHECK_STR(ploom_config_kind(&back->config)->search,
				  cases[i].search ? cases[i].search : "dfs");
			CHECK_INT(back->config.seed, t->config.seed);
			CHECK_INT(back->config.pct_depth, cases[i].depth);
		}
		ploom_trace_free(back);
		if (i == 1) {
			size_t b;

			for (b = 0; b < sizeof(edits) / sizeof(edits[0]); b++) {
				char *edited = fake_replace(text, edits[b].from, edits[b].to);

				back = NULL;
				if (!CHECK(edited != NULL))
					continue;
				CHECK_INT(ploom_trace_parse(&back, edited, strlen(edited), &err), -1);
				CHECK_STR(err.msg, edits[b].err);
				ploom_trace_free(back);
				free(edited);
			}
		}
		free(text);
		ploom_trace_free(t);
	}
}

/* At most 64 modules a list: the reader refuses more, as the options do. */
static void config_module_lists_hold_at_most_64_modules(void)
{
	static const char *const lists[] = {"patch", "instrument"};
	struct ploom_trace *t = sample_trace();
	char *text = ploom_trace_to_json(t, NULL);
	size_t l;
	int extra;

	/* with the sample's two: 64, then 65 */
	for (l = 0; l < 2; l++) {
		for (extra = 62; extra <= 63; extra++) {
			struct ploom_trace *back = NULL;
			struct ploom_err err = {0, ""};
			struct ploom_buf names = {0}, field = {0}, why = {0};
			char *edited;
			int i;

			ploom_buf_addf(&field, "\"%s\":\t[", lists[l]);
			ploom_buf_addf(&names, "%s", field.data);
			for (i = 0; i < extra; i++)
				ploom_buf_addf(&names, "\"m%d\", ", i);
			ploom_buf_addf(&why, "field 'config.%s' has more than 64 entries", lists[l]);
			edited = fake_replace(text, field.data, names.data);
			if (CHECK(edited != NULL)) {
				CHECK_INT(ploom_trace_parse(&back, edited, strlen(edited), &err),
					  extra == 62 ? 0 : -1);
				if (extra == 62)
					CHECK(back && (l ? back->config.ninstrument
							 : back->config.npatch) == 64);
				else
					CHECK_STR(err.msg, why.data);
			}
			free(edited);
			ploom_buf_release(&names);
			ploom_buf_release(&field);
			ploom_buf_release(&why);
			ploom_trace_free(back);
		}
	}
	free(text);
	ploom_trace_free(t);
}

/* Each name and why it cannot be patched or instrumented (NULL: it can). */
static const struct {
	const char *name;
	const char *problem;
} module_names[] = {
	{"mylib", NULL},
	{"mylib.pool", NULL},
	{"_private._x9.Y", NULL},
	{"a.b.c.d", NULL},
	{"", "not a module name (Python identifiers joined by '.')"},
	{"bad-name", "not a module name (Python identifiers joined by '.')"},
	{"9lives", "not a module name (Python identifiers joined by '.')"},
	{"a.9b", "not a module name (Python identifiers joined by '.')"},
	{".a", "not a module name (Python identifiers joined by '.')"},
	{"a.", "not a module name (Python identifiers joined by '.')"},
	{"a..b", "not a module name (Python identifiers joined by '.')"},
	{"a b", "not a module name (Python identifiers joined by '.')"},
	{"a:f", "not a module name (Python identifiers joined by '.')"},
	{"--expect=x", "not a module name (Python identifiers joined by '.')"},
	{"caf\xc3\xa9", "not a module name (Python identifiers joined by '.')"},
};

static void module_names_are_checked(void)
{
	char longest[PLOOM_MODULE_NAME_MAX + 2];
	size_t i;

	for (i = 0; i < sizeof(module_names) / sizeof(module_names[0]); i++) {
		const char *got = ploom_module_problem(module_names[i].name);
		if (!CHECK(got == module_names[i].problem ||
			   (got && module_names[i].problem && !strcmp(got, module_names[i].problem))))
			printf("  '%s': got '%s'\n", module_names[i].name, got ? got : "(null)");
	}
	memset(longest, 'a', PLOOM_MODULE_NAME_MAX);
	longest[PLOOM_MODULE_NAME_MAX] = '\0';
	CHECK(ploom_module_problem(longest) == NULL);
	longest[PLOOM_MODULE_NAME_MAX] = 'a';
	longest[PLOOM_MODULE_NAME_MAX + 1] = '\0';
	CHECK_STR(ploom_module_problem(longest), "longer than 200 bytes");
}

/* The lists own copies, keep the order, stop at 64 and copy deep; the
 * instrument list names a module once. */
static void a_configs_module_lists_are_added_to_and_copied(void)
{
	struct ploom_config a = {0}, b = {0};
	struct ploom_err err = {0, ""};
	char name[16];
	int i;

	snprintf(name, sizeof(name), "first");
	CHECK_INT(ploom_config_add_patch(&a, name, &err), 0);
	name[0] = 'F';
	CHECK_STR(a.patch[0], "first");
	CHECK_INT(ploom_config_add_patch(&a, "bad name", &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_INPUT);
	CHECK_STR(err.msg, "not a module name (Python identifiers joined by '.')");
	CHECK_INT(a.npatch, 1);
	for (i = 1; i < PLOOM_MODULES_MAX; i++) {
		snprintf(name, sizeof(name), "m%d", i);
		CHECK_INT(ploom_config_add_patch(&a, name, &err), 0);
	}
	CHECK_INT(ploom_config_add_patch(&a, "one_more", &err), -1);
	CHECK_STR(err.msg, "more than 64 modules");
	CHECK_INT(a.npatch, PLOOM_MODULES_MAX);
	CHECK_INT(ploom_config_add_instrument(&a, "mylib", &err), 0);
	CHECK_INT(ploom_config_add_instrument(&a, "mylib.pool", &err), 0);
	CHECK_INT(ploom_config_add_instrument(&a, "mylib", &err), 0);
	CHECK_INT(a.ninstrument, 2);
	CHECK_INT(ploom_config_add_instrument(&a, "a-b", &err), -1);
	CHECK_STR(err.msg, "not a module name (Python identifiers joined by '.')");
	a.instrument_scenario = 1;
	CHECK_INT(ploom_config_add_patch(&b, "replaced", &err), 0);
	CHECK_INT(ploom_config_add_instrument(&b, "replaced", &err), 0);
	CHECK_INT(ploom_config_copy_modules(&b, &a, &err), 0);
	CHECK_INT(b.npatch, PLOOM_MODULES_MAX);
	CHECK(b.patch != a.patch && b.patch[0] != a.patch[0]);
	CHECK_STR(b.patch[0], "first");
	CHECK_STR(b.patch[63], "m63");
	CHECK_INT(b.ninstrument, 2);
	CHECK(b.instrument != a.instrument && b.instrument[0] != a.instrument[0]);
	CHECK_STR(b.instrument[1], "mylib.pool");
	CHECK_INT(b.instrument_scenario, 1);
	ploom_config_release_modules(&a);
	CHECK(a.patch == NULL && a.npatch == 0 && a.instrument == NULL && a.ninstrument == 0 &&
	      a.instrument_scenario == 0);
	ploom_config_release_modules(&a);
	ploom_config_release_modules(&b);
}

/* Every search patches the scenario's module and its project's and
 * instruments them and the patched modules, after the modules named and
 * once each; --patch=- and --instrument=- each turn their part off. */
static void every_search_takes_the_code_under_test_by_default(void)
{
	struct ploom_err err = {0, ""};
	int listed;

	for (listed = 0; listed < 4; listed++) {
		struct ploom_config c = {0};
		int patch_only = listed & 1, instrument_only = (listed & 2) != 0;

		CHECK_INT(ploom_config_add_patch(&c, "mylib.pool", &err), 0);
		CHECK_INT(ploom_config_add_patch(&c, "other", &err), 0);
		CHECK_INT(ploom_config_add_instrument(&c, "other", &err), 0);
		CHECK_INT(ploom_config_module_defaults(&c, patch_only, instrument_only, &err), 0);
		CHECK_INT(c.patch_project, !patch_only);
		CHECK_INT(c.instrument_scenario, !instrument_only);
		CHECK_INT(c.npatch, 2);
		if (CHECK_INT(c.ninstrument, instrument_only ? 1 : 2)) {
			CHECK_STR(c.instrument[0], "other");
			if (!instrument_only)
				CHECK_STR(c.instrument[1], "mylib.pool");
		}
		ploom_config_release_modules(&c);
		CHECK_INT(c.patch_project, 0);
	}
}

/* The default adds to the list of the options: 64 modules at most in
 * all, refused as the options refuse a 65th. */
static void the_default_counts_against_the_64_modules(void)
{
	struct ploom_config c = {0};
	struct ploom_err err = {0, ""};
	char name[16];
	int i;

	for (i = 0; i < PLOOM_MODULES_MAX; i++) {
		snprintf(name, sizeof(name), "m%d", i);
		CHECK_INT(ploom_config_add_instrument(&c, name, &err), 0);
	}
	/* one named already: nothing to add */
	CHECK_INT(ploom_config_add_patch(&c, "m5", &err), 0);
	CHECK_INT(ploom_config_module_defaults(&c, 0, 0, &err), 0);
	CHECK_INT(c.ninstrument, PLOOM_MODULES_MAX);
	CHECK_INT(ploom_config_add_patch(&c, "m64", &err), 0);
	CHECK_INT(ploom_config_module_defaults(&c, 0, 0, &err), -1);
	CHECK_STR(err.msg, "more than 64 modules");
	ploom_config_release_modules(&c);
}

static void clone_copies_every_field(void)
{
	struct ploom_trace *t = sample_trace(), *copy = NULL;
	char *a, *b = NULL;

	CHECK_INT(ploom_trace_clone(&copy, t, NULL), 0);
	a = ploom_trace_to_json(t, NULL);
	if (copy)
		b = ploom_trace_to_json(copy, NULL);
	CHECK_STR(b, a);
	CHECK(copy && copy->fingerprints != t->fingerprints);
	free(a);
	free(b);
	ploom_trace_free(copy);
	ploom_trace_free(t);
}

static void failure_id_is_the_git_blob_id_prefix(void)
{
	struct ploom_trace *t = sample_trace();
	struct ploom_err err = {0, ""};
	char id[17];

	/* printf 'examples.bank_account:scenario\nfailure\nbuiltins.AssertionError\n
	 * the account is overdrawn\n' | git hash-object --stdin */
	CHECK_INT(ploom_trace_failure_id(id, t, &err), 0);
	CHECK_STR(id, "9a90a7aef655763c");
	ploom_trace_free(t);
}

static void save_writes_the_file_under_its_id(void)
{
	struct ploom_trace *t = sample_trace(), *back = NULL;
	struct ploom_err err = {0, ""};
	char dir[] = "/tmp/ploom-test-json-XXXXXX", sub[128], tmp[160];
	char *path = NULL;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	CHECK_INT(ploom_trace_save(&path, t, sub, "original", &err), 0);
	CHECK(path && strstr(path, "/a/b/9a90a7aef655763c-original.json") != NULL);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path ? path : "");
	CHECK(access(tmp, F_OK) != 0);
	CHECK_INT(ploom_trace_read_file(&back, path ? path : "-", &err), 0);
	CHECK(back && back->run.nsteps == 6);
	ploom_trace_free(back);
	CHECK_INT(ploom_trace_read_file(&back, "/nonexistent/x.json", &err), -1);
	CHECK_STR(err.msg, "No such file or directory");
	if (path)
		unlink(path);
	free(path);
	/* a minimized trace goes under its original's id, which it carries */
	free(t->id);
	t->id = strdup("0123456789abcdef");
	CHECK_INT(ploom_trace_save(&path, t, sub, "minimized", &err), 0);
	CHECK(path && strstr(path, "/a/b/0123456789abcdef-minimized.json") != NULL);
	if (path)
		unlink(path);
	snprintf(tmp, sizeof(tmp), "%s/a/b", dir);
	rmdir(tmp);
	snprintf(tmp, sizeof(tmp), "%s/a", dir);
	rmdir(tmp);
	rmdir(dir);
	free(path);
	ploom_trace_free(back);
	ploom_trace_free(t);
}

/* Removes dir and the files in it (one level, as the save tests leave it). */
static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[512];

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			unlink(p);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* The names in dir, other than . and .., counted. */
static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

static void write_small_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static int file_is(const char *path, const char *text)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return !strcmp(buf, text);
}

static void save_follows_no_symlink_planted_in_the_folder(void)
{
	/* whoever may write the trace folder must not redirect the write:
	 * symlinks at the names a temporary file would plausibly take, and at
	 * the final name, all point at a file that must stay as it is */
	static const char *const planted[] = {
		"9a90a7aef655763c-original.json.tmp",
		".9a90a7aef655763c-original.json.tmp",
		"9a90a7aef655763c-original.json~",
		"9a90a7aef655763c-original.json",
	};
	struct ploom_trace *t = sample_trace(), *back = NULL;
	struct ploom_err err = {0, ""};
	char dir[] = "/tmp/ploom-test-json-XXXXXX", victim[128], link[160];
	char *path = NULL;
	struct stat st;
	mode_t mask = umask(022);
	size_t i;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(victim, sizeof(victim), "%s-victim", dir);
	write_small_file(victim, "keep");
	for (i = 0; i < sizeof(planted) / sizeof(planted[0]); i++) {
		snprintf(link, sizeof(link), "%s/%s", dir, planted[i]);
		CHECK_INT(symlink(victim, link), 0);
	}
	CHECK_INT(ploom_trace_save(&path, t, dir, "original", &err), 0);
	CHECK_STR(err.msg, "");
	CHECK(file_is(victim, "keep"));
	/* the final name now holds the trace itself, not a link to it */
	CHECK(path && lstat(path, &st) == 0 && S_ISREG(st.st_mode));
	CHECK_INT(ploom_trace_read_file(&back, path ? path : "-", &err), 0);
	CHECK(back && back->run.nsteps == 6);
	/* and with a umask of 022, it is readable by all as fopen's were */
	CHECK(path && stat(path, &st) == 0 && (st.st_mode & 0777) == 0644);
	/* no temporary file is left behind beside the planted links */
	CHECK_INT(count_entries(dir), 4);
	umask(mask);
	remove_dir(dir);
	unlink(victim);
	free(path);
	ploom_trace_free(back);
	ploom_trace_free(t);
}

static void saves_at_once_into_one_folder_all_succeed(void)
{
	/* runs of ploom-explore share .ploom: their saves of the same trace
	 * must not take each other's temporary file */
	enum { PROCS = 8, SAVES = 40 };
	struct ploom_trace *t = sample_trace();
	char dir[] = "/tmp/ploom-test-json-XXXXXX";
	pid_t pid[PROCS];
	int i, status, ok = 0;

	CHECK(mkdtemp(dir) != NULL);
	for (i = 0; i < PROCS; i++) {
		pid[i] = fork();
		if (pid[i] == 0) {
			struct ploom_err err = {0, ""};
			char *path = NULL;
			int k;

			for (k = 0; k < SAVES; k++) {
				if (ploom_trace_save(&path, t, dir, "original", &err) < 0) {
					printf("save %d: %s\n", k, err.msg);
					_exit(1);
				}
				free(path);
			}
			_exit(0);
		}
		CHECK(pid[i] > 0);
	}
	for (i = 0; i < PROCS; i++)
		if (pid[i] > 0 && waitpid(pid[i], &status, 0) == pid[i] && WIFEXITED(status) &&
		    WEXITSTATUS(status) == 0)
			ok++;
	CHECK_INT(ok, PROCS);
	/* the trace, and no temporary file left over */
	CHECK_INT(count_entries(dir), 1);
	remove_dir(dir);
	ploom_trace_free(t);
}

static void a_trace_that_cannot_be_written_says_why(void)
{
	struct ploom_trace *t = sample_trace();
	struct ploom_err err = {0, ""};
	char dir[] = "/tmp/ploom-test-json-XXXXXX", file[128], sub[160], msg[256] = "";
	char *path = NULL;
	int fd[2];
	pid_t pid;
	ssize_t n;

	CHECK(mkdtemp(dir) != NULL);
	/* a folder whose parent is a regular file */
	snprintf(file, sizeof(file), "%s/file", dir);
	write_small_file(file, "x");
	snprintf(sub, sizeof(sub), "%s/traces", file);
	CHECK_INT(ploom_trace_save(&path, t, sub, "original", &err), -1);
	CHECK(path == NULL);
	CHECK_INT(err.kind, PLOOM_ERR_SYSTEM);
	snprintf(msg, sizeof(msg), "cannot create directory '%s': File exists", file);
	CHECK_STR(err.msg, msg);
	unlink(file);

	/* a full disk, as a file size limit: the message keeps the reason */
	CHECK_INT(pipe(fd), 0);
	pid = fork();
	if (pid == 0) {
		struct rlimit lim = {16, 16};

		close(fd[0]);
		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &lim);
		ploom_trace_save(&path, t, dir, "original", &err);
		if (write(fd[1], err.msg, strlen(err.msg)) < 0)
			_exit(1);
		_exit(0);
	}
	close(fd[1]);
	n = read(fd[0], msg, sizeof(msg) - 1);
	msg[n > 0 ? n : 0] = '\0';
	close(fd[0]);
	waitpid(pid, NULL, 0);
	CHECK(!strncmp(msg, "cannot write '", 14));
	CHECK(strstr(msg, "': File too large") != NULL);
	CHECK(strstr(msg + 1, "cannot write '") == NULL);
	CHECK_INT(count_entries(dir), 0);
	remove_dir(dir);
	ploom_trace_free(t);
}

static void stats_are_written_as_json(void)
{
	struct ploom_trace *t = sample_trace();
	struct ploom_err err = {0, ""};
	struct ploom_stats s = {0};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	s.result = "failure";
	s.target = "x:y";
	s.schedules = 7;
	s.failing = 1;
	s.stopped_by = "failure";
	s.max_preemptions = -1;
	s.reduction = "none";
	s.search = "ipb";
	s.minimal_by_construction = 1;
	s.hash_seed = "0";
	s.elapsed_s = 0.12345;
	s.schedules_per_second = 56.789;
	s.max_depth = 13;
	s.trace = ".ploom/x-original.json";
	s.minimized_trace = ".ploom/x-minimized.json";
	s.failure = &t->run.outcome;
	CHECK_INT(ploom_stats_write(f, &s, &err), 0);
	fclose(f);
	CHECK(strstr(buf, "\"max_preemptions\":\tnull") != NULL);
	CHECK(strstr(buf, "\"elapsed_s\":\t0.123") != NULL);
	CHECK(strstr(buf, "\"schedules_per_second\":\t56.8") != NULL);
	CHECK(strstr(buf, "\"summary\":\t\"builtins.AssertionError: the account is overdrawn\"") != NULL);
	CHECK(strstr(buf, "\"complete\":\tfalse") != NULL);
	CHECK(strstr(buf, "\"minimized_trace\":\t\".ploom/x-minimized.json\"") != NULL);
	CHECK(strstr(buf, "\"search\":\t\"ipb\"") != NULL);
	CHECK(strstr(buf, "\"minimal_by_construction\":\ttrue") != NULL);
	/* without -k: no outcomes */
	CHECK(strstr(buf, "outcomes") == NULL);
	/* no sample: no seed */
	CHECK(strstr(buf, "\"seed\"") == NULL && strstr(buf, "pct_depth") == NULL);
	free(buf);
	/* a sample's seed, and pct's depth */
	s.search = "pct";
	s.seed = 4294967295UL;
	s.pct_depth = 5;
	f = open_memstream(&buf, &len);
	CHECK_INT(ploom_stats_write(f, &s, &err), 0);
	fclose(f);
	CHECK(strstr(buf, "\"search\":\t\"pct\",\n\t\"seed\":\t4294967295,\n\t\"pct_depth\":\t5,") !=
	      NULL);
	free(buf);
	ploom_trace_free(t);
}

static void stats_list_the_outcomes_when_asked(void)
{
	struct ploom_search_outcome outcomes[] = {
		{PLOOM_OUTCOME_PASS, (char *)"pass", 146},
		{PLOOM_OUTCOME_FAILURE, (char *)"builtins.AssertionError: overdrawn", 75},
	};
	struct ploom_err err = {0, ""};
	struct ploom_stats s = {0};
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int truncated;

	for (truncated = 0; truncated <= 1; truncated++) {
		f = open_memstream(&buf, &len);
		s.result = "failure";
		s.reduction = "none";
		s.hash_seed = "0";
		s.max_preemptions = -1;
		s.with_outcomes = 1;
		s.outcomes = outcomes;
		s.noutcomes = 2;
		s.outcomes_truncated = truncated;
		CHECK_INT(ploom_stats_write(f, &s, &err), 0);
		fclose(f);
		CHECK(strstr(buf, "\"outcomes\":\t[{\n"
				  "\t\t\t\"kind\":\t\"pass\",\n"
				  "\t\t\t\"summary\":\t\"pass\",\n"
				  "\t\t\t\"schedules\":\t146\n"
				  "\t\t}, {\n"
				  "\t\t\t\"kind\":\t\"failure\",\n"
				  "\t\t\t\"summary\":\t\"builtins.AssertionError: overdrawn\",\n"
				  "\t\t\t\"schedules\":\t75\n"
				  "\t\t}],\n") != NULL);
		CHECK(strstr(buf, truncated ? "\"outcomes_truncated\":\ttrue"
					    : "\"outcomes_truncated\":\tfalse") != NULL);
		free(buf);
		buf = NULL;
	}
	/* asked for, with no schedule run: an empty list */
	f = open_memstream(&buf, &len);
	s.noutcomes = 0;
	s.outcomes = NULL;
	CHECK_INT(ploom_stats_write(f, &s, &err), 0);
	fclose(f);
	CHECK(strstr(buf, "\"outcomes\":\t[]") != NULL);
	/* a search order that does not say the failure is minimal: not written */
	CHECK(strstr(buf, "minimal_by_construction") == NULL);
	free(buf);
}

/* A shard's trace says where it was found; a reader checks the numbers. */
static void a_trace_records_its_shard(void)
{
	static const struct {
		const char *to, *want;
	} bad_shard[] = {
		{"\"index\":\t3", "field 'shard.index' is not below shard.count"},
		{"\"count\":\t0", "field 'shard.count' is out of range"},
		{"\"depth\":\t1001", "field 'shard.depth' is out of range"},
		{"\"unit\":\t-1", "field 'shard.unit' is out of range"},
		{"\"unit\":\t\"7\"", "field 'shard.unit' is not an integer"},
	};
	static const char *const from[] = {"\"index\":\t1", "\"count\":\t3", "\"depth\":\t5",
					   "\"unit\":\t7", "\"unit\":\t7"};
	struct ploom_trace *t = sample_trace(), *back = NULL;
	struct ploom_err err = {0, ""};
	char *text, *edited;
	size_t i;

	t->shard.index = 1;
	t->shard.count = 3;
	t->shard.depth = 5;
	t->shard.unit = 7;
	text = ploom_trace_to_json(t, &err);
	CHECK(text && strstr(text, "\"shard\":\t{"));
	CHECK_INT(ploom_trace_parse(&back, text, strlen(text), &err), 0);
	if (back) {
		CHECK_INT(back->shard.index, 1);
		CHECK_INT(back->shard.count, 3);
		CHECK_INT(back->shard.depth, 5);
		CHECK_INT(back->shard.unit, 7);
	}
	ploom_trace_free(back);
	for (i = 0; i < sizeof(bad_shard) / sizeof(*bad_shard); i++) {
		back = NULL;
		edited = fake_replace(text, from[i], bad_shard[i].to);
		if (!CHECK(edited != NULL))
			continue;
		CHECK_INT(ploom_trace_parse(&back, edited, strlen(edited), &err), -1);
		if (!CHECK(strstr(err.msg, bad_shard[i].want) != NULL))
			printf("  got '%s'\n", err.msg);
		free(edited);
	}
	free(text);
	/* none: not written, and read as none */
	t->shard.count = 0;
	text = ploom_trace_to_json(t, &err);
	CHECK(text && !strstr(text, "\"shard\""));
	CHECK_INT(ploom_trace_parse(&back, text, strlen(text), &err), 0);
	CHECK(back && back->shard.count == 0);
	ploom_trace_free(back);
	free(text);
	ploom_trace_free(t);
}

/* 100,000 plain points, the most a config holds, are read, copied and
 * added to in time in proportion to their number: at this size a linear
 * search per key took tens of seconds for each of these steps. */
static void a_hundred_thousand_plain_points_are_read_each_once(void)
{
	struct ploom_trace *t = sample_trace(), *back = NULL;
	struct ploom_config copy = {0};
	struct ploom_err err = {0, ""};
	struct ploom_buf keys = {0};
	char *text = NULL, key[64];
	size_t i, n = PLOOM_PLAIN_POINTS_MAX;

	ploom_config_release_plain_points(&t->config);
	/* each key twice, the second time in a later call: added once */
	for (i = 0; i < n; i++)
		ploom_buf_addf(&keys, "%smod%zu.part:%zu", i ? "," : "", i % 97, i);
	CHECK_INT(ploom_config_add_plain_points(&t->config, keys.data, keys.len, &err), (int)n);
	CHECK_INT(ploom_config_add_plain_points(&t->config, keys.data, keys.len, &err), 0);
	CHECK_INT(t->config.nplain_points, n);
	CHECK_INT(ploom_config_add_plain_points(&t->config, "other:1", 7, &err), -1);
	CHECK_STR(err.msg, "more than 100000 plain points");
	text = ploom_trace_to_json(t, &err);
	CHECK(text != NULL);
	CHECK_INT(ploom_trace_parse(&back, text, text ? strlen(text) : 0, &err), 0);
	if (back && CHECK_INT(back->config.nplain_points, n)) {
		snprintf(key, sizeof(key), "mod%zu.part:%zu", (n - 1) % 97, n - 1);
		CHECK_STR(back->config.plain_points[n - 1], key);
		CHECK_STR(back->config.plain_points[0], "mod0.part:0");
		CHECK_INT(ploom_config_copy_plain_points(&copy, &back->config, &err), 0);
		CHECK_INT(copy.nplain_points, n);
		CHECK_INT(ploom_config_add_plain_point_list(&copy,
							    (const char *const *)back->config.plain_points,
							    back->config.nplain_points, &err), 0);
		CHECK_INT(copy.nplain_points, n);
	}
	/* a bad key adds nothing and is named */
	ploom_config_release_plain_points(&copy);
	CHECK_INT(ploom_config_add_plain_points(&copy, "a:1,b:2,c:x", 11, &err), -1);
	CHECK_STR(err.msg, "bad site key 'c:x': not a site key (MODULE:K)");
	CHECK_INT(copy.nplain_points, 0);
	ploom_config_release_plain_points(&copy);
	ploom_buf_release(&keys);
	ploom_trace_free(back);
	ploom_trace_free(t);
	free(text);
}

int main(void)
{
	trace_round_trips_through_json();
	every_outcome_kind_round_trips();
	a_timeouts_stacks_round_trip_and_are_checked();
	bad_traces_are_rejected_with_a_named_problem();
	a_trace_names_at_most_1024_objects();
	a_wait_keeps_its_place();
	trailing_garbage_and_truncation_are_errors();
	a_trace_larger_than_256_mib_is_refused();
	duplicate_keys_are_refused();
	nul_escapes_bad_utf8_and_raw_controls_are_refused();
	a_nul_byte_is_refused_as_it_comes();
	unknown_fields_are_ignored();
	a_steps_label_is_checked();
	a_version_1_trace_is_read();
	a_timed_join_round_trips();
	fingerprints_id_and_minimized_from_are_optional();
	relpaths_and_source_are_optional();
	copying_fingerprints_copies_the_source();
	config_module_lists_are_optional_and_always_written();
	config_search_is_optional_and_read_back();
	config_search_is_written_for_a_sample_only();
	config_module_lists_hold_at_most_64_modules();
	module_names_are_checked();
	a_configs_module_lists_are_added_to_and_copied();
	every_search_takes_the_code_under_test_by_default();
	the_default_counts_against_the_64_modules();
	clone_copies_every_field();
	failure_id_is_the_git_blob_id_prefix();
	save_writes_the_file_under_its_id();
	save_follows_no_symlink_planted_in_the_folder();
	saves_at_once_into_one_folder_all_succeed();
	a_trace_that_cannot_be_written_says_why();
	stats_are_written_as_json();
	stats_list_the_outcomes_when_asked();
	a_trace_records_its_shard();
	a_hundred_thousand_plain_points_are_read_each_once();
	return check_report();
}
