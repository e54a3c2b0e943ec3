/* Tests of the run model: choices, preemptions, summaries, kind names,
 * and the option-value parsers the utilities share. */
#include <math.h> /* NAN and INFINITY, macros: no libm needed */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/args.h"
#include "../../lib/fingerprint.h"
#include "../../lib/labels.h"
#include "../../lib/source.h"
#include "../../lib/trace.h"
#include "check.h"
#include "fake.h"

/* Appends a step with the given task and enabled set (-1 ends the set). */
static void step(struct ploom_run *run, int task, ...)
{
	struct ploom_step *s = ploom_run_add_step(run);
	va_list ap;
	int e;

	s->index = (long)run->nsteps - 1;
	s->task = task;
	s->op = PLOOM_OP_YIELD_NOW;
	s->enabled = malloc(8 * sizeof(int));
	va_start(ap, task);
	while ((e = va_arg(ap, int)) >= 0)
		s->enabled[s->nenabled++] = e;
	va_end(ap);
}

static void choices_are_the_tasks_at_branch_points(void)
{
	struct ploom_run run = {0};

	run.outcome.kind = PLOOM_OUTCOME_PASS;
	step(&run, 0, 0, -1);
	step(&run, 1, 0, 1, -1);        /* preempts 0 */
	step(&run, 1, 1, -1);
	step(&run, 0, 0, 2, -1);        /* 1 is not enabled: no preemption */
	step(&run, 2, 0, 2, -1);        /* preempts 0 */
	step(&run, 0, 0, -1);
	CHECK_INT(ploom_run_finish(&run, NULL), 0);
	CHECK_INT(run.nchoices, 3);
	CHECK_INT(run.choices[0], 1);
	CHECK_INT(run.choices[1], 0);
	CHECK_INT(run.choices[2], 2);
	CHECK_INT(run.preemptions, 2);
	CHECK_INT(ploom_run_count_preemptions(&run), 2);
	CHECK_INT(ploom_run_is_preemption(&run, 0), 0);
	CHECK_INT(ploom_run_is_preemption(&run, 1), 1);
	CHECK_INT(ploom_run_is_preemption(&run, 3), 0);
	CHECK_INT(ploom_run_is_preemption(&run, 4), 1);
	CHECK_INT(ploom_run_is_preemption(&run, 6), 0);
	CHECK_STR(run.outcome.summary, "pass");
	ploom_run_release(&run);
}

static void the_failing_step_is_the_raising_tasks_last_or_the_last(void)
{
	struct ploom_run run = {0};

	step(&run, 0, 0, -1);
	step(&run, 1, 0, 1, -1);
	step(&run, 0, 0, 1, -1);
	step(&run, 1, 1, -1);
	run.outcome.kind = PLOOM_OUTCOME_FAILURE;
	run.outcome.task = 0;
	CHECK_INT(ploom_run_failing_step(&run), 2);
	run.outcome.task = 1;
	CHECK_INT(ploom_run_failing_step(&run), 3);
	/* a task without a step (it raised before its first) marks none */
	run.outcome.task = 5;
	CHECK_INT(ploom_run_failing_step(&run), -1);
	run.outcome.kind = PLOOM_OUTCOME_CRASH;
	CHECK_INT(ploom_run_failing_step(&run), 3);
	run.outcome.kind = PLOOM_OUTCOME_TIMEOUT;
	CHECK_INT(ploom_run_failing_step(&run), 3);
	run.outcome.kind = PLOOM_OUTCOME_DEADLOCK;
	CHECK_INT(ploom_run_failing_step(&run), -1);
	run.outcome.kind = PLOOM_OUTCOME_PASS;
	CHECK_INT(ploom_run_failing_step(&run), -1);
	ploom_run_release(&run);
	run.outcome.kind = PLOOM_OUTCOME_EXIT;
	CHECK_INT(ploom_run_failing_step(&run), -1);
}

static void the_tasks_are_every_id_that_appears_once_ascending(void)
{
	struct ploom_run run = {0};
	struct ploom_wait waits[1] = {{.task = 4, .op = PLOOM_OP_ACQUIRE, .holder = 3}};
	int *tasks = NULL;
	size_t n = 0;

	CHECK_INT(ploom_run_tasks(&tasks, &n, &run, NULL), 0);
	CHECK_INT(n, 1);
	CHECK_INT(tasks[0], 0);
	free(tasks);
	step(&run, 2, 2, 7, -1);
	step(&run, 2, 2, -1);
	run.outcome.kind = PLOOM_OUTCOME_DEADLOCK;
	run.outcome.waits = waits;
	run.outcome.nwaits = 1;
	CHECK_INT(ploom_run_tasks(&tasks, &n, &run, NULL), 0);
	CHECK_INT(n, 4);
	if (n == 4) {
		CHECK_INT(tasks[0], 0);
		CHECK_INT(tasks[1], 2);
		CHECK_INT(tasks[2], 4);
		CHECK_INT(tasks[3], 7);
	}
	free(tasks);
	run.outcome.waits = NULL;
	run.outcome.nwaits = 0;
	run.outcome.kind = PLOOM_OUTCOME_FAILURE;
	run.outcome.task = 9;
	CHECK_INT(ploom_run_tasks(&tasks, &n, &run, NULL), 0);
	CHECK_INT(n, 4);
	CHECK_INT(n == 4 ? tasks[3] : -1, 9);
	free(tasks);
	ploom_run_release(&run);
}

static void step_zero_counts_task_zero_as_previous(void)
{
	struct ploom_run run = {0};

	step(&run, 1, 0, 1, -1);
	CHECK_INT(ploom_run_finish(&run, NULL), 0);
	CHECK_INT(run.preemptions, 1);
	ploom_run_release(&run);
	step(&run, 2, 1, 2, -1);
	CHECK_INT(ploom_run_finish(&run, NULL), 0);
	CHECK_INT(run.preemptions, 0);
	ploom_run_release(&run);
}

static void summaries_read_as_documented(void)
{
	struct ploom_outcome o;
	char *s;

	memset(&o, 0, sizeof(o));
	o.kind = PLOOM_OUTCOME_FAILURE;
	o.exc_type = (char *)"builtins.ValueError";
	o.exc_message = (char *)"";
	s = ploom_outcome_summary(&o);
	CHECK_STR(s, "builtins.ValueError");
	free(s);
	o.kind = PLOOM_OUTCOME_CRASH;
	o.signal = 6;
	s = ploom_outcome_summary(&o);
	CHECK_STR(s, "crash: killed by signal 6 (SIGABRT)");
	free(s);
	o.kind = PLOOM_OUTCOME_TIMEOUT;
	o.timeout_ms = 10000;
	s = ploom_outcome_summary(&o);
	CHECK_STR(s, "timeout: the schedule ran longer than 10 s");
	free(s);
	o.timeout_ms = 500;
	s = ploom_outcome_summary(&o);
	CHECK_STR(s, "timeout: the schedule ran longer than 0.5 s");
	free(s);
}

static void kind_names_round_trip(void)
{
	int k;

	for (k = PLOOM_OUTCOME_PASS; k <= PLOOM_OUTCOME_DIVERGENCE; k++)
		CHECK_INT(ploom_outcome_kind_parse(ploom_outcome_kind_name(k)), k);
	CHECK_INT(ploom_outcome_kind_parse("none"), -1);
	CHECK_INT(ploom_outcome_kind_parse("Pass"), -1);
	CHECK_INT(ploom_outcome_is_failure(PLOOM_OUTCOME_STEP_LIMIT), 0);
	CHECK_INT(ploom_outcome_is_failure(PLOOM_OUTCOME_TIMEOUT), 1);
}

static void option_values_are_strict(void)
{
	long v = 42;
	double d = 0;
	char seed[11];

	CHECK_INT(ploom_args_long(&v, "17", 0, 100), 0);
	CHECK_INT(v, 17);
	CHECK_INT(ploom_args_long(&v, " 17", 0, 100), -1);
	CHECK_INT(ploom_args_long(&v, "+17", 0, 100), -1);
	CHECK_INT(ploom_args_long(&v, "17x", 0, 100), -1);
	CHECK_INT(ploom_args_long(&v, "", 0, 100), -1);
	CHECK_INT(ploom_args_long(&v, "-1", 0, 100), -1);
	CHECK_INT(ploom_args_long(&v, "101", 0, 100), -1);
	CHECK_INT(ploom_args_long(&v, "99999999999999999999", 0, 100), -1);
	CHECK_INT(ploom_args_seconds(&d, "0.5"), 0);
	CHECK(d == 0.5);
	CHECK_INT(ploom_args_seconds(&d, "-1"), -1);
	CHECK_INT(ploom_args_seconds(&d, "inf"), -1);
	CHECK_INT(ploom_args_seconds(&d, "1s"), -1);
	CHECK_INT(ploom_args_seed(seed, "007"), 0);
	CHECK_STR(seed, "7");
	CHECK_INT(ploom_args_seed(seed, "4294967295"), 0);
	CHECK_INT(ploom_args_seed(seed, "4294967296"), -1);
	CHECK_INT(ploom_args_seed(seed, "random"), -1);
}

static void timeouts_convert_to_milliseconds_within_the_limit(void)
{
	long ms = 42;

	CHECK_INT(ploom_timeout_ms(&ms, 0), 0);
	CHECK_INT(ms, 0);
	CHECK_INT(ploom_timeout_ms(&ms, 2.5), 0);
	CHECK_INT(ms, 2500);
	CHECK_INT(ploom_timeout_ms(&ms, 0.0005), 0);
	CHECK_INT(ms, 1);
	CHECK_INT(ploom_timeout_ms(&ms, PLOOM_MAX_TIMEOUT_S), 0);
	CHECK_INT(ms, 1000000000000L);
	ms = 42;
	CHECK_INT(ploom_timeout_ms(&ms, NAN), -1);
	CHECK_INT(ploom_timeout_ms(&ms, INFINITY), -1);
	CHECK_INT(ploom_timeout_ms(&ms, -INFINITY), -1);
	CHECK_INT(ploom_timeout_ms(&ms, -0.001), -1);
	CHECK_INT(ploom_timeout_ms(&ms, 1e300), -1);
	CHECK_INT(ploom_timeout_ms(&ms, PLOOM_MAX_TIMEOUT_S + 1), -1);
	CHECK_INT(ms, 42);
}

/* 0 is no limit, longer than any */
static void the_shorter_timeout_of_two_is_the_limit(void)
{
	CHECK(ploom_timeout_min(10, 2.5) == 2.5);
	CHECK(ploom_timeout_min(2.5, 10) == 2.5);
	CHECK(ploom_timeout_min(PLOOM_MAX_TIMEOUT_S, 1) == 1);
	CHECK(ploom_timeout_min(0, 3) == 3);
	CHECK(ploom_timeout_min(3, 0) == 3);
	CHECK(ploom_timeout_min(0, 0) == 0);
}

static void failing_and_step_limit_traces_get_an_id(void)
{
	struct ploom_trace *t = ploom_trace_new();
	struct ploom_err err = {0, ""};
	char id[17];

	t->scenario.module = strdup("m");
	t->scenario.qualname = strdup("f");
	CHECK_INT(t->minimized_from, -1);
	t->run.outcome.kind = PLOOM_OUTCOME_PASS;
	CHECK_INT(ploom_trace_set_id(t, &err), 0);
	CHECK(t->id == NULL);
	t->run.outcome.kind = PLOOM_OUTCOME_STEP_LIMIT;
	t->run.outcome.limit = 5;
	CHECK_INT(ploom_trace_set_id(t, &err), 0);
	CHECK_INT(ploom_trace_failure_id(id, t, &err), 0);
	CHECK_STR(t->id, id);
	/* an id already there stays: a minimized trace keeps its original's */
	free(t->id);
	t->id = strdup("0123456789abcdef");
	t->run.outcome.kind = PLOOM_OUTCOME_DEADLOCK;
	CHECK_INT(ploom_trace_set_id(t, &err), 0);
	CHECK_STR(t->id, "0123456789abcdef");
	CHECK_INT(ploom_outcome_has_id(PLOOM_OUTCOME_TIMEOUT), 1);
	CHECK_INT(ploom_outcome_has_id(PLOOM_OUTCOME_DIVERGENCE), 0);
	ploom_trace_free(t);
}

static void fingerprints_are_copied(void)
{
	struct ploom_trace *a = ploom_trace_new(), *b = ploom_trace_new();

	const char *one = "1111111111111111111111111111111111111111";
	const char *two = "2222222222222222222222222222222222222222";

	CHECK_INT(ploom_trace_add_fingerprint(a, "/x/a.py", one, NULL), 0);
	CHECK_INT(ploom_trace_add_fingerprint(a, "/x/b.py", two, NULL), 0);
	CHECK_INT(ploom_trace_add_fingerprint(b, "/y.py", one, NULL), 0);
	CHECK_INT(ploom_trace_copy_fingerprints(b, a, NULL), 0);
	CHECK_INT(b->nfingerprints, 2);
	CHECK_STR(b->fingerprints[1].path, "/x/b.py");
	CHECK(b->fingerprints[1].path != a->fingerprints[1].path);
	CHECK_INT(ploom_trace_copy_fingerprints(a, a, NULL), 0);
	CHECK_INT(a->nfingerprints, 2);
	ploom_trace_free(a);
	ploom_trace_free(b);
}

static void fingerprints_hash_regular_files_only(void)
{
	char *dir = fake_dir("fingerprint"), *file = fake_write(dir, "a.py", "hello\n", 0);
	char fifo[4096], out[PLOOM_OID_HEXSZ + 1];
	struct ploom_err err = {0, ""};

	CHECK_INT(ploom_fingerprint_file(out, file, &err), 0);
	CHECK_STR(out, "ce013625030ba8dba906f756967f9e9ca394464a"); /* git hash-object */
	/* a FIFO nobody writes to: an error at once, not a wait */
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	CHECK_INT(mkfifo(fifo, 0600), 0);
	CHECK_INT(ploom_fingerprint_file(out, fifo, &err), -1);
	CHECK(strstr(err.msg, "not a regular file") != NULL);
	CHECK_INT(ploom_fingerprint_file(out, dir, &err), -1);
	CHECK(strstr(err.msg, "not a regular file") != NULL);
	CHECK_INT(ploom_fingerprint_file(out, "/nonexistent/x.py", &err), -1);
	CHECK(strstr(err.msg, "No such file") != NULL);
	fake_dir_remove(dir);
	free(file);
	free(dir);
}

/* The records of a run whose steps stop in the scenario's file, in a
 * file below its folder, and in files outside it; %s are the folder (3
 * times) and a link to it. */
static char *where_records(const char *dir, const char *link)
{
	char *text;

	if (asprintf(&text,
		     "code 0 =%s/mod.py =scenario\n"
		     "code 1 =%s/sub/helper.py =help\n"
		     "code 2 =/usr/lib/python3.13/threading.py =wait\n"
		     "code 3 =%%3Cstring%%3E =%%3Cmodule%%3E\n"
		     "code 4 =%s/sub/helper.py =help\n"
		     "code 5 =%s/../outside.py =f\n"
		     "step 0 0 yield_now - 0 - - 0:3\n"
		     "step 1 0 yield_now - 0 - - 1:4\n"
		     "step 2 0 yield_now - 0 - - 2:5\n"
		     "step 3 0 yield_now - 0 - - 3:6\n"
		     "step 4 0 yield_now - 0 - - 4:7\n"
		     "step 5 0 yield_now - 0 - - 5:8\n"
		     "step 6 0 yield_now - 0 - - -\n"
		     "step 7 0 yield_now - 0 - - 1:9\n"
		     "outcome deadlock\n"
		     "wait 0 join thread#1 1 1:10 join =\n"
		     "exit code 0\n"
		     "done 8\n",
		     dir, dir, link, dir) < 0)
		abort();
	return text;
}

static void where_files_become_relative_to_the_source_root(void)
{
	char *dir = fake_dir("where"), *link = NULL, *records, *file;
	struct ploom_trace *t, *t2;
	struct ploom_err err = {0, ""};
	const struct ploom_step *s;

	char *sub = NULL;

	file = fake_write(dir, "mod.py", "x = 1\n", 0);
	/* a link's real path needs the file */
	if (asprintf(&link, "%s-link", dir) < 0 || symlink(dir, link) < 0 ||
	    asprintf(&sub, "%s/sub", dir) < 0 || mkdir(sub, 0755) < 0)
		abort();
	free(fake_write(sub, "helper.py", "y = 2\n", 0));
	records = where_records(dir, link);
	t = fake_trace("mod.py:scenario", "mod", "scenario", file, "0", 0, 1, records);
	CHECK_INT(ploom_trace_fingerprint_source(t, &err), 0);
	CHECK_STR(err.msg, "");
	/* outside a repository the root is the scenario's folder */
	CHECK_STR(t->source.root, "folder");
	s = t->run.steps;
	CHECK_STR(s[0].where.file, "mod.py");
	CHECK_STR(s[0].where.function, "scenario");
	CHECK_INT(s[0].where.line, 3);
	CHECK_STR(s[1].where.file, "sub/helper.py");
	/* outside the root, or no file at all: as the worker named it */
	CHECK_STR(s[2].where.file, "/usr/lib/python3.13/threading.py");
	CHECK_STR(s[3].where.file, "<string>");
	/* through a link to the root: its real path lies below the root's */
	CHECK_STR(s[4].where.file, "sub/helper.py");
	CHECK_INT(s[4].where.line, 7);
	/* ".." leaves the root, whatever the prefix says */
	CHECK(strstr(s[5].where.file, "/../outside.py") != NULL);
	CHECK(s[6].where.file == NULL);
	CHECK_STR(s[7].where.file, "sub/helper.py");
	CHECK_STR(t->run.outcome.waits[0].where.file, "sub/helper.py");

	/* a trace made from another one (a replay, a minimization) takes its
	 * root, and so its relative files */
	t2 = fake_trace("mod.py:scenario", "mod", "scenario", file, "0", 0, 1, records);
	CHECK_INT(ploom_trace_copy_fingerprints(t2, t, &err), 0);
	CHECK_STR(t2->run.steps[1].where.file, "sub/helper.py");
	CHECK_STR(t2->run.steps[2].where.file, "/usr/lib/python3.13/threading.py");
	ploom_trace_free(t2);
	/* without relative paths, every file stays as it is */
	t2 = fake_trace("mod.py:scenario", "mod", "scenario", file, "0", 0, 1, records);
	free(t->source.root);
	t->source.root = NULL;
	CHECK_INT(ploom_trace_copy_fingerprints(t2, t, &err), 0);
	CHECK(t2->run.steps[1].where.file && t2->run.steps[1].where.file[0] == '/');
	ploom_trace_free(t2);

	ploom_trace_free(t);
	unlink(link);
	free(link);
	fake_dir_remove(sub);
	free(sub);
	free(records);
	free(file);
	fake_dir_remove(dir);
	free(dir);
}

/* Names, and the name a person reads for an object. */
static void names_are_given_or_default_and_never_ambiguous(void)
{
	struct ploom_run run;
	struct ploom_obj c0 = {PLOOM_OBJ_CELL, 0}, c1 = {PLOOM_OBJ_CELL, 1};
	struct ploom_obj t0 = {PLOOM_OBJ_THREAD, 0}, t1 = {PLOOM_OBJ_THREAD, 1};
	struct ploom_obj t2 = {PLOOM_OBJ_THREAD, 2}, l0 = {PLOOM_OBJ_LOCK, 0};
	struct ploom_obj l1 = {PLOOM_OBJ_LOCK, 1}, p0 = {PLOOM_OBJ_PLAIN, 0};
	char buf[32], *name;

	memset(&run, 0, sizeof(run));
	CHECK_INT(ploom_obj_default_name(buf, sizeof(buf), t0), 10);
	CHECK_STR(buf, "MainThread");
	ploom_obj_default_name(buf, sizeof(buf), t1);
	CHECK_STR(buf, "thread#1");
	ploom_obj_default_name(buf, sizeof(buf), c1);
	CHECK_STR(buf, "cell#1");
	CHECK_INT(ploom_run_set_name(&run, c0, "balance", NULL), 0);
	CHECK_INT(ploom_run_set_name(&run, t1, "mathieu", NULL), 0);
	CHECK_INT(ploom_run_set_name(&run, t1, "lucas", NULL), 0);
	CHECK_INT(run.nnames, 2);
	CHECK_STR(ploom_run_name(&run, t1), "lucas");
	CHECK(ploom_run_name(&run, c1) == NULL);
#define DISPLAY(obj, want)                                                                  \
	do {                                                                                \
		name = ploom_run_display_name(&run, obj);                                   \
		CHECK_STR(name, want);                                                      \
		free(name);                                                                 \
	} while (0)
	DISPLAY(c0, "balance");
	DISPLAY(c1, "cell#1");
	DISPLAY(t0, "MainThread");
	DISPLAY(t1, "lucas");
	/* a name two objects share, or another's default name, says whose */
	CHECK_INT(ploom_run_set_name(&run, l0, "balance", NULL), 0);
	DISPLAY(c0, "balance"); /* but a lock's operations are not a cell's */
	DISPLAY(l0, "balance");
	CHECK_INT(ploom_run_set_name(&run, p0, "balance", NULL), 0);
	DISPLAY(c0, "balance (cell#0)");
	DISPLAY(p0, "balance (plain#0)");
	DISPLAY(l0, "balance");
	CHECK_INT(ploom_run_set_name(&run, l1, "balance", NULL), 0);
	DISPLAY(l0, "balance (lock#0)");
	CHECK_INT(ploom_run_set_name(&run, t1, "balance", NULL), 0);
	DISPLAY(t1, "balance (thread#1)");
	CHECK_INT(ploom_run_set_name(&run, t1, "lucas", NULL), 0);
	CHECK_INT(ploom_run_set_name(&run, t2, "MainThread", NULL), 0);
	DISPLAY(t2, "MainThread (thread#2)");
	DISPLAY(t0, "MainThread");
	CHECK_INT(ploom_run_set_name(&run, c1, "cell#0", NULL), 0);
	DISPLAY(c1, "cell#0 (cell#1)");
	/* its own object name is no clash */
	CHECK_INT(ploom_run_set_name(&run, t1, "thread#1", NULL), 0);
	DISPLAY(t1, "thread#1");
	name = ploom_run_task_name(&run, 2);
	CHECK_STR(name, "MainThread (thread#2)");
	free(name);
#undef DISPLAY
	ploom_run_release(&run);
}

static void short_names_say_where_files_come_from(void)
{
	struct ploom_run run;
	struct ploom_short_names *sn = NULL;
	static const char *const files[] = {
		"a/x.py", "b/x.py", "a/y.py", "a/x.py", "/abs/z.py", "<string>", "b/x.py",
		"/usr/lib/python3.13/queue.py", "/opt/py/lib/python3.13t/concurrent/futures/thread.py",
		"/v/lib/python3.13/site-packages/cachetools/func.py",
		".venv/lib64/python3.12/site-packages/pkg/queue.py",
		"/usr/lib/python3/dist-packages/apt/a.py", "/abs/y.py", "/other/w.py", "/else/w.py",
		"/usr/lib/python3.x/q.py", "/usr/python3.13/r.py",
	};
	size_t i;

	memset(&run, 0, sizeof(run));
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct ploom_step *s = ploom_run_add_step(&run);
		s->where.file = strdup(files[i]);
		s->where.function = strdup("f");
		s->where.line = 1;
	}
	ploom_run_add_step(&run); /* one without a place */
	CHECK_INT(ploom_short_names_new(&sn, &run, NULL), 0);
	/* relative to the root: as they are */
	CHECK_STR(ploom_short_name(sn, "a/x.py"), "a/x.py");
	CHECK_STR(ploom_short_name(sn, "b/x.py"), "b/x.py");
	CHECK_STR(ploom_short_name(sn, "a/y.py"), "a/y.py");
	CHECK_STR(ploom_short_name(sn, "<string>"), "<string>");
	/* of a Python installation: relative to its folder there */
	CHECK_STR(ploom_short_name(sn, "/usr/lib/python3.13/queue.py"), "<stdlib>/queue.py");
	CHECK_STR(ploom_short_name(sn, "/opt/py/lib/python3.13t/concurrent/futures/thread.py"),
		  "<stdlib>/concurrent/futures/thread.py");
	CHECK_STR(ploom_short_name(sn, "/v/lib/python3.13/site-packages/cachetools/func.py"),
		  "<site-packages>/cachetools/func.py");
	CHECK_STR(ploom_short_name(sn, ".venv/lib64/python3.12/site-packages/pkg/queue.py"),
		  "<site-packages>/pkg/queue.py");
	CHECK_STR(ploom_short_name(sn, "/usr/lib/python3/dist-packages/apt/a.py"),
		  "<dist-packages>/apt/a.py");
	/* absolute elsewhere: the last component, unless another file shows it */
	CHECK_STR(ploom_short_name(sn, "/abs/z.py"), "z.py");
	CHECK_STR(ploom_short_name(sn, "/abs/y.py"), "/abs/y.py");
	CHECK_STR(ploom_short_name(sn, "/other/w.py"), "/other/w.py");
	CHECK_STR(ploom_short_name(sn, "/else/w.py"), "/else/w.py");
	CHECK_STR(ploom_short_name(sn, "/usr/lib/python3.x/q.py"), "q.py");
	CHECK_STR(ploom_short_name(sn, "/usr/python3.13/r.py"), "r.py");
	/* a file that is not the run's */
	CHECK_STR(ploom_short_name(sn, "/not/seen.py"), "seen.py");
	CHECK_STR(ploom_short_name(NULL, "/not/seen.py"), "seen.py");
	ploom_short_names_free(sn);
	ploom_short_names_free(NULL);
	ploom_run_release(&run);
}

int main(void)
{
	where_files_become_relative_to_the_source_root();
	names_are_given_or_default_and_never_ambiguous();
	short_names_say_where_files_come_from();
	fingerprints_hash_regular_files_only();
	failing_and_step_limit_traces_get_an_id();
	fingerprints_are_copied();
	choices_are_the_tasks_at_branch_points();
	step_zero_counts_task_zero_as_previous();
	the_failing_step_is_the_raising_tasks_last_or_the_last();
	the_tasks_are_every_id_that_appears_once_ascending();
	summaries_read_as_documented();
	kind_names_round_trip();
	option_values_are_strict();
	timeouts_convert_to_milliseconds_within_the_limit();
	the_shorter_timeout_of_two_is_the_limit();
	return check_report();
}
