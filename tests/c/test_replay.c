/* Tests of lib/replay: the target it starts the worker with, each of its
 * four checks and their messages, and a whole replay against a stand-in
 * worker (fake.h), which also shows that the checks run in order. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/fingerprint.h"
#include "../../lib/json.h"
#include "../../lib/replay.h"
#include "../../lib/source.h"
#include "../../lib/trace.h"
#include "../../lib/worker.h"
#include "check.h"
#include "fake.h"
#include "sim.h"

/* The stand-in's schedule: a failure with one preemption. */
static const char failing[] =
	"step 0 0 start thread#1 0 - - -\n"
	"step 1 1 begin - 0,1 - 0:yield_now:- -\n"
	"step 2 1 read cell#0 0,1 - 0:yield_now:- -\n"
	"value 2 =100\n"
	"step 3 1 acquire lock#0 0,1 nonblocking 0:yield_now:- -\n"
	"value 3 =True\n"
	"outcome failure 1 =builtins.AssertionError =boom =Traceback\n"
	"exit code 0\n"
	"done 4\n";

static struct ploom_trace *trace_of(const char *records, const char *file)
{
	return fake_trace("mod.py:fn", "mod", "fn", file, "5", 300, 1.5, records);
}

static void a_changed_or_missing_source_is_a_divergence(void)
{
	char *dir = fake_dir("replay");
	char *file = fake_write(dir, "mod.py", "print('v1')\n", 0), *gone;
	struct ploom_trace *t = trace_of(failing, file);
	struct ploom_err err = {0, ""};
	char want[512], now[PLOOM_OID_HEXSZ + 1];

	CHECK_INT(ploom_trace_fingerprint_source(t, &err), 0);
	CHECK_INT(t->nfingerprints, 1);
	if (t->nfingerprints == 1) {
		/* printf "print('v1')\n" | git hash-object --stdin */
		CHECK_STR(t->fingerprints[0].blob, "e59f0597d775f35cd6a0de643da6842730edbde9");
		CHECK_STR(t->fingerprints[0].path, file);
	}
	CHECK_INT(ploom_replay_check_source(t, &err), 0);
	CHECK_STR(err.msg, "");

	free(fake_write(dir, "mod.py", "print('v2')\n", 0));
	ploom_fingerprint_file(now, file, NULL);
	snprintf(want, sizeof(want),
		 "the scenario's source changed: '%s' (recorded blob %.7s, now %.7s)", file,
		 t->nfingerprints ? t->fingerprints[0].blob : "", now);
	CHECK_INT(ploom_replay_check_source(t, &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_DIVERGENCE);
	CHECK_STR(err.msg, want);

	unlink(file);
	snprintf(want, sizeof(want),
		 "the scenario's source changed: '%s' (recorded blob %.7s, now unreadable: "
		 "No such file or directory)",
		 file, t->nfingerprints ? t->fingerprints[0].blob : "");
	CHECK_INT(ploom_replay_check_source(t, &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_DIVERGENCE);
	CHECK_STR(err.msg, want);
	/* and fingerprinting a file that is gone names it */
	CHECK_INT(ploom_trace_fingerprint_source(t, &err), -1);
	CHECK(strstr(err.msg, file) != NULL);

	/* a replay runs only a file that the trace fingerprints: a trace
	 * without a scenario file, or whose fingerprints miss it, is refused
	 * before anything is read */
	gone = t->scenario.file;
	t->scenario.file = NULL;
	CHECK_INT(ploom_trace_fingerprint_source(t, &err), 0);
	CHECK_INT(t->nfingerprints, 0);
	CHECK_INT(ploom_replay_check_source(t, &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_INPUT);
	CHECK_STR(err.msg, "the trace names no scenario file: a replay runs only a file that the "
		  "trace fingerprints");
	t->scenario.file = (char *)"relative.py";
	CHECK_INT(ploom_replay_check_trace(t, &err), -1);
	CHECK_STR(err.msg, "the trace's scenario file 'relative.py' is not an absolute path");
	t->scenario.file = gone;
	CHECK_INT(ploom_replay_check_trace(t, &err), -1);
	snprintf(want, sizeof(want),
		 "the trace's fingerprints do not cover its scenario file '%s'", file);
	CHECK_STR(err.msg, want);
	CHECK_INT(ploom_trace_add_fingerprint(t, "/elsewhere.py",
						"0123456789012345678901234567890123456789", &err), 0);
	CHECK_INT(ploom_replay_check_trace(t, &err), -1);
	CHECK_STR(err.msg, want);
	ploom_trace_free(t);
	fake_dir_remove(dir);
	free(file);
	free(dir);
}

static void the_loaded_file_must_be_the_recorded_one(void)
{
	struct ploom_trace *t = trace_of(failing, "/a/mod.py");
	struct ploom_hello h;
	struct ploom_err err = {0, ""};

	memset(&h, 0, sizeof(h));
	h.file = (char *)"/a/mod.py";
	CHECK_INT(ploom_replay_check_loaded(t, &h, &err), 0);
	h.file = NULL;
	CHECK_INT(ploom_replay_check_loaded(t, &h, &err), 0);
	h.file = (char *)"/b/mod.py";
	CHECK_INT(ploom_replay_check_loaded(t, &h, &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_DIVERGENCE);
	CHECK_STR(err.msg, "the scenario's source changed: '/b/mod.py' (the trace was recorded "
		  "from '/a/mod.py')");
	ploom_trace_free(t);
}

static void only_the_minor_python_version_matters(void)
{
	struct ploom_trace *t = trace_of(failing, NULL);
	struct ploom_err err = {0, ""};

	CHECK_INT(ploom_replay_check_python(t, "3.13.0", &err), 0);
	CHECK_INT(ploom_replay_check_python(t, "3.13.7", &err), 0);
	CHECK_INT(ploom_replay_check_python(t, "3.14.0", &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_DIVERGENCE);
	CHECK_STR(err.msg, "Python 3.14 runs this replay, the trace was recorded with 3.13");
	/* 3.1 is not a prefix match for 3.13 */
	CHECK_INT(ploom_replay_check_python(t, "3.1.0", &err), -1);
	CHECK_STR(err.msg, "Python 3.1 runs this replay, the trace was recorded with 3.13");
	free(t->python.version);
	t->python.version = strdup("3.13");
	CHECK_INT(ploom_replay_check_python(t, "3.13.1", &err), 0);
	ploom_trace_free(t);
}

/* Edits of the stand-in's records and the divergence each must give. */
static const struct {
	const char *from;
	const char *to;
	const char *want;
} step_cases[] = {
	{"step 2 1 read cell#0", "step 2 1 write cell#0",
	 "step 2 differs: recorded task 1 read cell#0, got task 1 write cell#0"},
	{"step 2 1 read cell#0 0,1 - 0:yield_now:-", "step 2 0 read cell#0 0,1 - 1:yield_now:-",
	 "step 2 differs: recorded task 1 read cell#0, got task 0 read cell#0"},
	{"step 2 1 read cell#0", "step 2 1 read cell#1",
	 "step 2 differs: recorded task 1 read cell#0, got task 1 read cell#1"},
	{"0,1 nonblocking", "0,1 -",
	 "step 3 differs: recorded task 1 acquire lock#0 (nonblocking), got task 1 acquire lock#0"},
	{"0,1 nonblocking", "0,1 timed",
	 "step 3 differs: recorded task 1 acquire lock#0 (nonblocking), got task 1 acquire lock#0 "
	 "(timeout)"},
	{"step 3 1 acquire lock#0 0,1 nonblocking 0:yield_now:- -\nvalue 3 =True\n", "",
	 "step 3 differs: recorded task 1 acquire lock#0 (nonblocking), got the end of the run"},
	{"value 3 =True\n", "value 3 =True\nstep 4 0 join thread#1 0 - - -\n",
	 "step 4 differs: recorded the end of the run, got task 0 join thread#1"},
	{"step 3 1 acquire lock#0 0,1 nonblocking 0:yield_now:- -\nvalue 3 =True\n"
	 "outcome failure 1 =builtins.AssertionError =boom =Traceback\n",
	 "outcome divergence 3 =choice%201%20asks%20for%20task%201,%20which%20is%20not%20enabled\n",
	 "step 3 differs: recorded task 1 acquire lock#0 (nonblocking), but choice 1 asks for "
	 "task 1, which is not enabled"},
	/* the values may differ: replay compares operations */
	{"value 2 =100", "value 2 =0", NULL},
};

static void the_first_step_that_differs_is_named(void)
{
	struct ploom_run recorded = {0};
	size_t i;

	CHECK_INT(ploom_run_parse_text(&recorded, failing, strlen(failing), 0, NULL), 0);
	for (i = 0; i < sizeof(step_cases) / sizeof(step_cases[0]); i++) {
		char *edited = fake_replace(failing, step_cases[i].from, step_cases[i].to);
		struct ploom_run got = {0};
		struct ploom_err err = {0, ""};
		char done[32];
		char *fixed;

		if (!CHECK(edited != NULL))
			continue;
		/* keep the closing count right */
		fixed = edited;
		if (strstr(edited, "step 4 "))
			fixed = fake_replace(edited, "done 4", "done 5");
		else if (!strstr(edited, "step 3 "))
			fixed = fake_replace(edited, "done 4", "done 3");
		if (fixed != edited)
			free(edited);
		snprintf(done, sizeof(done), "case %zu", i);
		if (!CHECK_INT(ploom_run_parse_text(&got, fixed, strlen(fixed), 0, &err), 0))
			printf("  %s: %s\n", done, err.msg);
		if (step_cases[i].want) {
			CHECK_INT(ploom_replay_compare_steps(&recorded, &got, &err), -1);
			CHECK_INT(err.kind, PLOOM_ERR_DIVERGENCE);
			if (!CHECK_STR(err.msg, step_cases[i].want))
				printf("  %s\n", done);
		} else {
			CHECK_INT(ploom_replay_compare_steps(&recorded, &got, &err), 0);
		}
		ploom_run_release(&got);
		free(fixed);
	}
	ploom_run_release(&recorded);
}

/* A recorded timed acquire that runs as a blocking one (the scenario now
 * passes no timeout) is a divergence, named by its mode. */
static void a_timed_acquire_is_compared_by_its_mode(void)
{
	struct ploom_run recorded = {0}, got = {0}, same = {0};
	struct ploom_err err = {0, ""};
	char *timed = fake_replace(failing, "0,1 nonblocking", "0,1 timed");
	char *blocking = fake_replace(failing, "0,1 nonblocking", "0,1 -");

	CHECK(timed && blocking);
	if (!timed || !blocking)
		goto done;
	CHECK_INT(ploom_run_parse_text(&recorded, timed, strlen(timed), 0, NULL), 0);
	CHECK_INT(ploom_run_parse_text(&got, blocking, strlen(blocking), 0, NULL), 0);
	CHECK_INT(ploom_run_parse_text(&same, timed, strlen(timed), 0, NULL), 0);
	CHECK_INT(ploom_replay_compare_steps(&recorded, &got, &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_DIVERGENCE);
	CHECK_STR(err.msg, "step 3 differs: recorded task 1 acquire lock#0 (timeout), got task 1 "
			   "acquire lock#0");
	CHECK_INT(ploom_replay_compare_steps(&recorded, &same, &err), 0);
done:
	ploom_run_release(&recorded);
	ploom_run_release(&got);
	ploom_run_release(&same);
	free(timed);
	free(blocking);
}

/* A timed join recorded and a blocking one replayed (or the other way)
 * is a divergence, named by the mode; the same timed join is not. */
static void a_timed_join_is_compared_by_its_mode(void)
{
	struct ploom_run recorded = {0}, got = {0}, same = {0};
	struct ploom_err err = {0, ""};
	char *timed = fake_replace(failing, "value 3 =True\n",
				   "value 3 =True\nstep 4 0 join thread#1 0,1 timed 1:yield_now:- -\n");
	char *timed_done = timed ? fake_replace(timed, "done 4", "done 5") : NULL;
	char *blocking = timed_done ? fake_replace(timed_done, "0,1 timed", "0,1 -") : NULL;

	CHECK(timed_done && blocking);
	if (!timed_done || !blocking)
		goto done;
	CHECK_INT(ploom_run_parse_text(&recorded, timed_done, strlen(timed_done), 0, NULL), 0);
	CHECK_INT(ploom_run_parse_text(&got, blocking, strlen(blocking), 0, NULL), 0);
	CHECK_INT(ploom_run_parse_text(&same, timed_done, strlen(timed_done), 0, NULL), 0);
	CHECK_INT(ploom_replay_compare_steps(&recorded, &got, &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_DIVERGENCE);
	CHECK_STR(err.msg, "step 4 differs: recorded task 0 join thread#1 (timeout), got task 0 "
			   "join thread#1");
	CHECK_INT(ploom_replay_compare_steps(&got, &recorded, &err), -1);
	CHECK_STR(err.msg, "step 4 differs: recorded task 0 join thread#1, got task 0 "
			   "join thread#1 (timeout)");
	CHECK_INT(ploom_replay_compare_steps(&recorded, &same, &err), 0);
done:
	ploom_run_release(&recorded);
	ploom_run_release(&got);
	ploom_run_release(&same);
	free(timed);
	free(timed_done);
	free(blocking);
}

static void choices_edited_apart_from_the_steps_are_named(void)
{
	struct ploom_run recorded = {0}, got = {0};
	struct ploom_err err = {0, ""};
	int *more;

	ploom_run_parse_text(&recorded, failing, strlen(failing), 0, NULL);
	ploom_run_parse_text(&got, failing, strlen(failing), 0, NULL);
	CHECK_INT(ploom_replay_compare_steps(&recorded, &got, &err), 0);
	more = realloc(recorded.choices, (recorded.nchoices + 1) * sizeof(int));
	if (more) {
		recorded.choices = more;
		recorded.choices[recorded.nchoices++] = 0;
	}
	CHECK_INT(ploom_replay_compare_steps(&recorded, &got, &err), -1);
	CHECK_STR(err.msg, "the choices differ: recorded 1,1,1,0, the run made 1,1,1");
	ploom_run_release(&recorded);
	ploom_run_release(&got);
}

static int is_deadlock(const struct ploom_run *run, int unused)
{
	(void)unused;
	return run->outcome.kind == PLOOM_OUTCOME_DEADLOCK;
}

static void outcomes_are_compared_by_what_identifies_them(void)
{
	struct ploom_outcome a, b;
	struct ploom_run d1 = {0}, d2;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.kind = b.kind = PLOOM_OUTCOME_FAILURE;
	a.exc_type = b.exc_type = (char *)"builtins.AssertionError";
	a.exc_message = b.exc_message = (char *)"boom";
	a.traceback = (char *)"line 1";
	b.traceback = (char *)"line 2";
	CHECK_INT(ploom_replay_same_outcome(&a, &b), 1);
	b.exc_message = (char *)"bang";
	CHECK_INT(ploom_replay_same_outcome(&a, &b), 0);
	b.kind = PLOOM_OUTCOME_PASS;
	CHECK_INT(ploom_replay_same_outcome(&a, &b), 0);
	a.kind = PLOOM_OUTCOME_PASS;
	CHECK_INT(ploom_replay_same_outcome(&a, &b), 1);
	a.kind = b.kind = PLOOM_OUTCOME_STEP_LIMIT;
	CHECK_INT(ploom_replay_same_outcome(&a, &b), 1);
	a.kind = b.kind = PLOOM_OUTCOME_CRASH;
	a.signal = 11;
	b.signal = 6;
	CHECK_INT(ploom_replay_same_outcome(&a, &b), 0);
	a.kind = b.kind = PLOOM_OUTCOME_EXIT;
	a.status = b.status = 3;
	CHECK_INT(ploom_replay_same_outcome(&a, &b), 1);

	/* a deadlock must wait on the same locks (unlike the minimizer's
	 * any-deadlock) */
	/* abba's first deadlock in depth-first order */
	CHECK_INT(sim_first(&d1, sim_find("abba"), is_deadlock, 0), 0);
	sim_run(&d2, sim_find("abba"), d1.choices, d1.nchoices);
	CHECK_INT(d2.outcome.kind, PLOOM_OUTCOME_DEADLOCK);
	CHECK_INT(ploom_replay_same_outcome(&d1.outcome, &d2.outcome), 1);
	free(d2.outcome.summary);
	d2.outcome.summary = strdup("deadlock: task 1 waits to acquire lock#1 held by task 2");
	CHECK_INT(ploom_replay_same_outcome(&d1.outcome, &d2.outcome), 0);
	ploom_run_release(&d1);
	ploom_run_release(&d2);
}

/* ---- a whole replay ---- */

struct replay_case {
	const char *python;     /* the stand-in's version */
	const char *loads;      /* the file it loads; NULL: the recorded one */
	const char *records;    /* what it answers */
	const char *want;       /* the divergence, or NULL */
};

static void replay_with(const struct replay_case *rc, const char *dir, const char *file,
			struct ploom_trace *rec, struct ploom_trace **out, struct ploom_err *err)
{
	struct ploom_worker *w = NULL;
	char *py = fake_worker(dir, rc->python, rc->loads ? rc->loads : file);
	const char *target = rec->scenario.target;

	free(fake_write(dir, "run.txt", rc->records, 0));
	*out = NULL;
	if (CHECK_INT(fake_start(&w, py, target, rec->hash_seed, err), 0))
		ploom_replay_run(out, rec, w, -1, err);
	ploom_worker_stop(w, NULL);
	free(py);
}

static void a_replay_reproduces_or_names_the_first_divergence(void)
{
	char *dir = fake_dir("replay"), *file = fake_write(dir, "mod.py", "x = 1\n", 0);
	char *passing = fake_replace(failing,
				     "outcome failure 1 =builtins.AssertionError =boom =Traceback",
				     "outcome pass");
	char *other_op = fake_replace(failing, "step 2 1 read", "step 2 1 write");
	const struct replay_case cases[] = {
		{"3.13.4", NULL, failing, NULL},
		{"3.14.0", NULL, failing,
		 "Python 3.14 runs this replay, the trace was recorded with 3.13"},
		/* the loaded file comes before the Python version */
		{"3.14.0", "/elsewhere/mod.py", failing,
		 "the scenario's source changed: '/elsewhere/mod.py' (the trace was recorded from"},
		{"3.13.0", NULL, other_op,
		 "step 2 differs: recorded task 1 read cell#0, got task 1 write cell#0"},
		/* the Python version comes before the steps */
		{"3.12.0", NULL, other_op,
		 "Python 3.12 runs this replay, the trace was recorded with 3.13"},
		{"3.13.0", NULL, passing,
		 "outcome differs: recorded builtins.AssertionError: boom, got pass"},
	};
	struct ploom_trace *rec = trace_of(failing, file);
	size_t i;

	ploom_trace_fingerprint_source(rec, NULL);
	ploom_trace_set_id(rec, NULL);
	rec->minimized_from = 3;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ploom_trace *out = NULL;
		struct ploom_err err = {0, ""};
		char *cmds;

		replay_with(&cases[i], dir, file, rec, &out, &err);
		if (!cases[i].want) {
			CHECK_STR(err.msg, "");
			CHECK(out != NULL);
			if (!out)
				continue;
			CHECK_STR(out->python.version, "3.13.4");
			CHECK_STR(out->scenario.target, "mod.py:fn");
			CHECK_STR(out->id, rec->id);
			CHECK_INT(out->minimized_from, 3);
			CHECK_INT(out->nfingerprints, 1);
			CHECK_STR(out->hash_seed, "5");
			CHECK_STR(out->run.outcome.summary, "builtins.AssertionError: boom");
			CHECK_STR(out->run.steps[3].value, "True");
			ploom_trace_free(out);
			cmds = fake_read(dir, "commands");
			/* the trace's choices, max_steps and timeout */
			CHECK_STR(cmds, "run 300 1500 3 1 1 1 0 default\n");
			free(cmds);
		} else {
			CHECK(out == NULL);
			CHECK_INT(err.kind, PLOOM_ERR_DIVERGENCE);
			if (!CHECK(!strncmp(err.msg, cases[i].want, strlen(cases[i].want))))
				printf("  case %zu: '%s'\n", i, err.msg);
		}
		/* the next case starts with no commands */
		free(fake_write(dir, "commands", "", 0));
	}
	ploom_trace_free(rec);
	fake_dir_remove(dir);
	free(passing);
	free(other_op);
	free(file);
	free(dir);
}

/* A trace made outside a repository names its file relative to its own
 * folder: a replay from a copy of that folder runs the copy's file, and
 * still holds it to the recorded blob. */
static void a_trace_moves_to_the_copy_of_its_folder(void)
{
	char *here = getcwd(NULL, 0);
	char *a = fake_dir("locate-a"), *b = fake_dir("locate-b"), *c = fake_dir("locate-c");
	char *fa = fake_write(a, "mod.py", "print('v1')\n", 0);
	char *fb = fake_write(b, "mod.py", "print('v1')\n", 0);
	struct ploom_trace *t = trace_of(failing, fa);
	struct ploom_err err = {0, ""};
	char *real_b = realpath(fb, NULL), want[512];

	CHECK_INT(ploom_trace_fingerprint_source(t, &err), 0);
	CHECK_STR(t->source.root, "folder");
	CHECK(t->source.commit == NULL);
	CHECK_STR(t->scenario.relpath, "mod.py");
	CHECK_STR(t->fingerprints[0].relpath, "mod.py");

	/* no mod.py here: the recorded paths stay */
	CHECK_INT(chdir(c), 0);
	CHECK_INT(ploom_replay_locate(t, &err), 0);
	CHECK_STR(t->scenario.file, fa);

	CHECK_INT(chdir(b), 0);
	CHECK_INT(ploom_replay_locate(t, &err), 1);
	CHECK_STR(t->scenario.file, real_b);
	CHECK_STR(t->fingerprints[0].path, real_b);
	CHECK_INT(ploom_replay_check_source(t, &err), 0);

	free(fake_write(b, "mod.py", "print('v2')\n", 0));
	CHECK_INT(ploom_replay_check_source(t, &err), -1);
	snprintf(want, sizeof(want), "the scenario's source changed: '%s' (recorded blob e59f059, now ",
		 real_b);
	CHECK(strncmp(err.msg, want, strlen(want)) == 0);

	/* without its relative paths a trace stays where it was recorded */
	free(t->scenario.file);
	t->scenario.file = strdup(fa);
	free(t->source.root);
	t->source.root = NULL;
	CHECK_INT(ploom_replay_locate(t, &err), 0);
	CHECK_STR(t->scenario.file, fa);
	/* nor does a root this ploom does not know move it */
	t->source.root = strdup("import-path");
	CHECK_INT(ploom_replay_locate(t, &err), 0);
	CHECK_STR(t->scenario.file, fa);

	CHECK_INT(chdir(here), 0);
	ploom_trace_free(t);
	fake_dir_remove(a);
	fake_dir_remove(b);
	fake_dir_remove(c);
	free(real_b);
	free(fa);
	free(fb);
	free(a);
	free(b);
	free(c);
	free(here);
}

/* A trace made outside git in a project (its worker's hello named the
 * project's root, above the scenario's folder) names its file relative
 * to that root: a replay from the copy's root or any folder below it
 * runs the copy's file; from a folder that holds the file nowhere at or
 * above it, nothing runs, and the message says so.  A root that is the
 * scenario's own folder, or that does not hold the file, is its folder. */
static void a_project_trace_moves_to_the_copy_of_its_project(void)
{
	char *here = getcwd(NULL, 0);
	char *a = fake_dir("project-a"), *b = fake_dir("project-b"), *c = fake_dir("project-c");
	char sub_a[512], sub_b[512], want[600];
	char *fa, *fb, *real_b, *real_root_b, *real_c, *root;
	struct ploom_trace *t;
	struct ploom_err err = {0, ""};

	snprintf(sub_a, sizeof(sub_a), "%s/tests", a);
	snprintf(sub_b, sizeof(sub_b), "%s/tests", b);
	CHECK_INT(mkdir(sub_a, 0755), 0);
	CHECK_INT(mkdir(sub_b, 0755), 0);
	fa = fake_write(sub_a, "mod.py", "print('v1')\n", 0);
	fb = fake_write(sub_b, "mod.py", "print('v1')\n", 0);
	real_b = realpath(fb, NULL);
	real_root_b = realpath(b, NULL);
	t = trace_of(failing, fa);
	t->project_root = strdup(a);
	CHECK_INT(ploom_trace_fingerprint_source(t, &err), 0);
	CHECK_STR(t->source.root, "project");
	CHECK_STR(t->scenario.relpath, "tests/mod.py");
	CHECK_STR(t->fingerprints[0].relpath, "tests/mod.py");

	/* from the copy's tests folder: the root is the folder above it */
	CHECK_INT(chdir(sub_b), 0);
	CHECK_INT(ploom_replay_place(t, &err), 0);
	CHECK_STR(t->scenario.file, real_b);
	CHECK_STR(t->fingerprints[0].path, real_b);
	root = ploom_replay_root(t);
	CHECK(root != NULL && !strncmp(root, real_root_b, strlen(real_root_b)) &&
	      !strcmp(root + strlen(real_root_b), "/"));
	free(root);
	CHECK_INT(ploom_replay_check_source(t, &err), 0);
	/* from the copy's root */
	CHECK_INT(chdir(b), 0);
	CHECK_INT(ploom_replay_place(t, &err), 0);
	CHECK_STR(t->scenario.file, real_b);

	/* from a folder with no tests/mod.py at or above it */
	CHECK_INT(chdir(c), 0);
	CHECK_INT(ploom_replay_place(t, &err), -1);
	CHECK_INT((int)err.kind, PLOOM_ERR_INPUT);
	real_c = getcwd(NULL, 0);
	snprintf(want, sizeof(want),
		 "the trace's scenario 'tests/mod.py' is in no folder at or above the current "
		 "directory '%s/': replay from inside a copy of its project",
		 real_c);
	CHECK_STR(err.msg, want);
	free(real_c);

	/* the scenario's own folder as the root: recorded as before */
	ploom_trace_free(t);
	t = trace_of(failing, fa);
	t->project_root = strdup(sub_a);
	CHECK_INT(ploom_trace_fingerprint_source(t, &err), 0);
	CHECK_STR(t->source.root, "folder");
	CHECK_STR(t->scenario.relpath, "mod.py");
	/* a root that does not hold the file is no root of it */
	ploom_trace_free(t);
	t = trace_of(failing, fa);
	t->project_root = strdup(c);
	CHECK_INT(ploom_trace_fingerprint_source(t, &err), 0);
	CHECK_STR(t->source.root, "folder");
	CHECK_STR(t->scenario.relpath, "mod.py");

	ploom_trace_free(t);
	CHECK_INT(chdir(here), 0);
	unlink(fa);
	unlink(fb);
	rmdir(sub_a);
	rmdir(sub_b);
	fake_dir_remove(a);
	fake_dir_remove(b);
	fake_dir_remove(c);
	free(real_b);
	free(real_root_b);
	free(fa);
	free(fb);
	free(a);
	free(b);
	free(c);
	free(here);
}

/* A replay runs only the file at the trace's relative path under the
 * current folder or repository: a trace whose scenario is not here, has
 * no relative path, or reaches out through a symbolic link is refused
 * before anything is hashed or run. */
static void a_replay_runs_only_a_file_here(void)
{
	char *here = getcwd(NULL, 0);
	char *a = fake_dir("place-a"), *b = fake_dir("place-b"), *c = fake_dir("place-c");
	char *fa = fake_write(a, "mod.py", "print('v1')\n", 0);
	char *fb = fake_write(b, "mod.py", "print('v1')\n", 0);
	struct ploom_trace *t = trace_of(failing, fa);
	struct ploom_err err = {0, ""};
	char *real_b = realpath(fb, NULL), link[512], *root;

	CHECK_INT(ploom_trace_fingerprint_source(t, &err), 0);

	/* not here: refused, and the recorded file is not run instead */
	CHECK_INT(chdir(c), 0);
	CHECK_INT(ploom_replay_place(t, &err), -1);
	CHECK_INT((int)err.kind, PLOOM_ERR_INPUT);
	CHECK(strstr(err.msg, "the trace's scenario 'mod.py' is not in the current directory") ==
	      err.msg);

	/* a symbolic link in the copy that leads out of it */
	snprintf(link, sizeof(link), "%s/mod.py", c);
	CHECK_INT(symlink(fa, link), 0);
	CHECK_INT(ploom_replay_place(t, &err), -1);
	CHECK(strstr(err.msg, "leads out of") != NULL);
	CHECK_INT(unlink(link), 0);

	CHECK_INT(chdir(b), 0);
	CHECK_INT(ploom_replay_place(t, &err), 0);
	CHECK_STR(t->scenario.file, real_b);
	CHECK_INT(ploom_replay_check_source(t, &err), 0);
	/* the folder the worker holds a module target's packages to */
	root = ploom_replay_root(t);
	CHECK(root != NULL && !strncmp(root, real_b, strlen(real_b) - strlen("mod.py")));
	CHECK_INT((int)strlen(root), (int)(strlen(real_b) - strlen("mod.py")));
	free(root);

	/* an absolute path alone is never enough */
	free(t->scenario.relpath);
	t->scenario.relpath = NULL;
	CHECK_INT(ploom_replay_place(t, &err), -1);
	CHECK(strstr(err.msg, "the trace records no relative path") == err.msg);
	CHECK(ploom_replay_root(t) == NULL);
	t->scenario.relpath = strdup("../mod.py");
	CHECK_INT(ploom_replay_place(t, &err), -1);
	CHECK(strstr(err.msg, "leaves its root") != NULL);
	free(t->scenario.relpath);
	t->scenario.relpath = strdup("mod.py");
	free(t->source.root);
	t->source.root = strdup("import-path");
	CHECK_INT(ploom_replay_place(t, &err), -1);
	CHECK(strstr(err.msg, "under a root this ploom does not know") != NULL);

	CHECK_INT(chdir(here), 0);
	ploom_trace_free(t);
	fake_dir_remove(a);
	fake_dir_remove(b);
	fake_dir_remove(c);
	free(real_b);
	free(fa);
	free(fb);
	free(a);
	free(b);
	free(c);
	free(here);
}

/* ---- on the current source ---- */

static void an_edited_source_is_listed_not_refused(void)
{
	char *dir = fake_dir("current"), *file = fake_write(dir, "mod.py", "x = 1\n", 0);
	struct ploom_trace *t = trace_of(failing, file);
	struct ploom_buf out = {0};
	struct ploom_err err = {0, ""};
	char now[PLOOM_OID_HEXSZ + 1] = "", want[512];

	ploom_trace_fingerprint_source(t, NULL);
	CHECK_INT(ploom_replay_source_changes(t, &out, now, &err), 0);
	CHECK(out.data == NULL);
	CHECK_STR(now, t->fingerprints[0].blob);

	free(fake_write(dir, "mod.py", "x = 1  # a comment\n", 0));
	ploom_fingerprint_file(now, file, NULL);
	snprintf(want, sizeof(want), "'%s' (recorded blob %.7s, now %.7s)\n", file,
		 t->fingerprints[0].blob, now);
	now[0] = '\0';
	CHECK_INT(ploom_replay_source_changes(t, &out, now, &err), 1);
	CHECK_STR(out.data ? out.data : "", want);
	CHECK(strcmp(now, t->fingerprints[0].blob) && strlen(now) == PLOOM_OID_HEXSZ);
	ploom_buf_release(&out);

	/* without its scenario file the run has nothing to run */
	unlink(file);
	CHECK_INT(ploom_replay_source_changes(t, &out, now, &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_INPUT);
	ploom_buf_release(&out);
	ploom_trace_free(t);
	fake_dir_remove(dir);
	free(file);
	free(dir);
}

static void a_step_whose_recorded_task_is_not_enabled_departs(void)
{
	int e01[] = {0, 1}, e1[] = {1};
	struct ploom_step rec[3] = {{.task = 0}, {.task = 0}, {.task = 1}};
	struct ploom_step got[4] = {{.task = 0, .enabled = e01, .nenabled = 2},
				    {.task = 1, .enabled = e1, .nenabled = 1},
				    {.task = 1, .enabled = e1, .nenabled = 1},
				    {.task = 1, .enabled = e1, .nenabled = 1}};
	struct ploom_run recorded = {.steps = rec, .nsteps = 3};
	struct ploom_run run = {.steps = got, .nsteps = 4};

	/* step 1 wanted task 0, which was not enabled; step 3 is past the
	 * recorded steps */
	CHECK_INT(ploom_replay_departures(&recorded, &run), 1);
	run.nsteps = 1;
	CHECK_INT(ploom_replay_departures(&recorded, &run), 0);
}

/* A follow is one run, whatever departs: the worker is sent the task of
 * every recorded step, to take where it is enabled (the policy follow),
 * and the stand-in answers the same run whatever it is asked, so the
 * commands show what was asked. */
static void the_recorded_order_is_asked_for_in_one_run(void)
{
	char *dir = fake_dir("follow"), *file = fake_write(dir, "mod.py", "x = 1\n", 0);
	/* recorded: task 0 at step 2, where the stand-in's default ran 1 */
	char *other = fake_replace(failing, "step 2 1 read cell#0 0,1 - 0:yield_now:- -",
				   "step 2 0 yield_now - 0,1 - 1:read:cell#0 -");
	const struct {
		const char *recorded;
		const char *commands;
	} cases[] = {
		{failing, "run 300 1500 0 0 follow 4 0 1 1 1\n"},
		{other, "run 300 1500 0 0 follow 4 0 1 0 1\n"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ploom_trace *rec = trace_of(cases[i].recorded, file), *out = NULL;
		struct ploom_worker *w = NULL;
		struct ploom_err err = {0, ""};
		char *py = fake_worker(dir, "3.13.1", file), *cmds;
		int departures = -1;

		free(fake_write(dir, "run.txt", failing, 0));
		free(fake_write(dir, "commands", "", 0));
		if (CHECK_INT(fake_start(&w, py, rec->scenario.target, rec->hash_seed, &err), 0)) {
			CHECK_INT(ploom_replay_follow(&out, rec, w, -1, &departures, &err), 0);
			CHECK_STR(err.msg, "");
		}
		ploom_worker_stop(w, NULL);
		CHECK_INT(departures, 0);
		CHECK(out && !strcmp(out->run.outcome.summary, "builtins.AssertionError: boom"));
		cmds = fake_read(dir, "commands");
		if (!CHECK_STR(cmds, cases[i].commands))
			printf("  case %zu\n", i);
		free(cmds);
		ploom_trace_free(out);
		ploom_trace_free(rec);
		free(py);
	}
	fake_dir_remove(dir);
	free(other);
	free(file);
	free(dir);
}

int main(void)
{
	a_changed_or_missing_source_is_a_divergence();
	a_trace_moves_to_the_copy_of_its_folder();
	a_replay_runs_only_a_file_here();
	a_project_trace_moves_to_the_copy_of_its_project();
	the_loaded_file_must_be_the_recorded_one();
	only_the_minor_python_version_matters();
	the_first_step_that_differs_is_named();
	a_timed_acquire_is_compared_by_its_mode();
	a_timed_join_is_compared_by_its_mode();
	choices_edited_apart_from_the_steps_are_named();
	outcomes_are_compared_by_what_identifies_them();
	a_replay_reproduces_or_names_the_first_divergence();
	an_edited_source_is_listed_not_refused();
	a_step_whose_recorded_task_is_not_enabled_departs();
	the_recorded_order_is_asked_for_in_one_run();
	return check_report();
}
