/* Tests of the worker process handling, with small shell scripts standing
 * in for the Python interpreter: they get the same arguments, fds and
 * environment as the real worker and answer with canned records. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/worker.h"
#include "check.h"
#include "fake.h"

static char dir[] = "/tmp/ploom-test-worker-XXXXXX";

/* Writes an executable script DIR/name whose body follows the shebang. */
static char *script(const char *name, const char *body)
{
	char *path = NULL;
	FILE *f;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		abort();
	f = fopen(path, "w");
	fprintf(f, "#!/bin/sh\n%s", body);
	fclose(f);
	chmod(path, 0755);
	return path;
}

#define STR_(x) #x
#define STR(x) STR_(x)
#define HELLO                                                                                 \
	"echo 'hello " STR(PLOOM_PROTOCOL_VERSION) " =cpython =3.13.0 1 '=$PYTHONHASHSEED' "  \
	"=mod =fn =/x/mod.py 0 = = =' >&3\n"

static void worker_starts_runs_and_stops(void)
{
	struct ploom_worker *w = NULL;
	struct ploom_err err = {0, ""};
	struct ploom_run run = {0};
	char *py, *text;
	const int choices[] = {1, 2};

	py = script("good", "echo \"$1 $2 $3 $4\" > " "\"$(dirname \"$0\")/args\"\n"
		    /* no pipe or command substitution of the shell may be open
		     * while ls looks: list into a file, sort after */
		    "d=$(dirname \"$0\")\n"
		    "ls /proc/$$/fd > \"$d/fds.raw\"\n"
		    "sort -n \"$d/fds.raw\" | tr '\\n' ' ' > \"$d/fds\"\n"
		    HELLO
		    "read cmd\n"
		    "echo \"$cmd\" > \"$(dirname \"$0\")/cmd\"\n"
		    "echo 'step 0 0 start thread#1 0 - - -' >&3\n"
		    "echo 'step 1 1 begin - 0,1 - 0:join:thread#1 -' >&3\n"
		    "echo 'outcome pass' >&3\n"
		    "echo 'exit code 0' >&3\n"
		    "echo 'done 2' >&3\n"
		    "read cmd\n"
		    "[ \"$cmd\" = quit ] && exit 0\n"
		    "exit 1\n");
	CHECK_INT(fake_start(&w, py, "mod:fn", "123", &err), 0);
	CHECK_STR(err.msg, "");
	if (!w)
		goto done;
	CHECK_STR(ploom_worker_hello(w)->hash_seed, "123");
	CHECK_STR(ploom_worker_hello(w)->file, "/x/mod.py");
	CHECK(ploom_worker_pid(w) > 0);
	CHECK_INT(ploom_worker_run(w, &run, choices, 2, 100, 5000, &err), 0);
	CHECK_INT(run.nsteps, 2);
	CHECK_INT(run.outcome.kind, PLOOM_OUTCOME_PASS);
	CHECK_INT(run.preemptions, 1);
	CHECK_INT(ploom_worker_stop(w, &err), 0);
	text = fake_read(dir, "fds");
	if (text) {
		/* dash keeps the script open on a descriptor of its own (>= 10) */
		CHECK(!strncmp(text, "0 1 2 3 ", 8));
		CHECK(strstr(text, " 4 ") == NULL && strstr(text, " 5 ") == NULL);
	}
	free(text);
	text = fake_read(dir, "cmd");
	CHECK_STR(text, "run 100 5000 2 1 2 0 default\n");
	free(text);
	text = fake_read(dir, "args");
	CHECK_STR(text, "-P -m ploom._worker mod:fn\n");
	free(text);
done:
	ploom_run_release(&run);
	free(py);
}

/* 1 when the process pid has been reaped: gone, not even a zombie. */
static int gone(long pid)
{
	return pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

/* The stand-in's schedule leaves, orphaned at once (its subshell exits)
 * and in a session of its own, a shell that waits for a sleep it started:
 * as the schedule process of a real worker would leave them when it ends.
 * The shell goes when the run ends, then the sleep, orphaned in turn; the
 * worker itself stays usable. */
static void what_a_schedule_leaves_behind_goes_when_the_run_ends(void)
{
	struct ploom_worker *w = NULL;
	struct ploom_err err = {0, ""};
	struct ploom_run run = {0};
	long shell = 0, sleeper = 0;
	char *py, *text;

	py = script("leaves", HELLO
		    "d=$(dirname \"$0\")\n"
		    "while read cmd && [ \"$cmd\" != quit ]; do\n"
		    "  rm -f \"$d/orphans\"\n"
		    "  (setsid sh -c 'sleep 300 & echo $$ $! > \"$1.tmp\"; mv \"$1.tmp\" \"$1\"; wait'"
		    " sh \"$d/orphans\" < /dev/null > /dev/null 2>&1 &)\n"
		    "  while [ ! -e \"$d/orphans\" ]; do sleep 0.01; done\n"
		    "  echo 'outcome pass' >&3\n"
		    "  echo 'exit code 0' >&3\n"
		    "  echo 'done 0' >&3\n"
		    "done\n"
		    "exit 0\n");
	CHECK_INT(fake_start(&w, py, "mod:fn", "0", &err), 0);
	if (!w)
		goto done;
	CHECK_INT(ploom_worker_run(w, &run, NULL, 0, 0, 5000, &err), 0);
	text = fake_read(dir, "orphans");
	CHECK(text && sscanf(text, "%ld %ld", &shell, &sleeper) == 2);
	free(text);
	CHECK(gone(shell));
	CHECK(gone(sleeper));
	ploom_run_release(&run);
	CHECK_INT(ploom_worker_run(w, &run, NULL, 0, 0, 5000, &err), 0);
	CHECK_INT(run.outcome.kind, PLOOM_OUTCOME_PASS);
	CHECK_INT(ploom_worker_stop(w, &err), 0);
done:
	ploom_run_release(&run);
	free(py);
}

/* What a utility's SIGINT/SIGTERM handler calls: every worker dies, so
 * none exits cleanly on `quit` as it would have. */
static void kill_all_kills_every_worker(void)
{
	struct ploom_worker *w[2] = {NULL, NULL};
	struct ploom_err err = {0, ""};
	char *py = script("quits", HELLO "read cmd\n[ \"$cmd\" = quit ] && exit 0\nexit 1\n");
	/* as a utility does (worker.h): `quit` to a dead worker is EPIPE */
	void (*was)(int) = signal(SIGPIPE, SIG_IGN);
	int i;

	for (i = 0; i < 2; i++)
		CHECK_INT(fake_start(&w[i], py, "mod:fn", "0", &err), 0);
	ploom_worker_kill_all();
	for (i = 0; i < 2; i++)
		if (w[i])
			CHECK_INT(ploom_worker_stop(w[i], &err), -1);
	CHECK_STR(err.msg, "the worker did not exit cleanly");
	signal(SIGPIPE, was);
	free(py);
}

static void an_error_record_means_the_scenario_cannot_load(void)
{
	struct ploom_worker *w = NULL;
	struct ploom_err err = {0, ""};
	char *py = script("error", "echo 'error load ={\"message\":%20\"No%20module%20named%20x\"}' "
				   ">&3\nexit 2\n");

	CHECK_INT(fake_start(&w, py, "x:f", "0", &err), -1);
	CHECK(w == NULL);
	CHECK_INT(err.kind, PLOOM_ERR_INPUT);
	CHECK_STR(err.msg, "cannot load scenario 'x:f': No module named x");
	free(py);
}

static void a_worker_that_dies_is_an_error(void)
{
	struct ploom_worker *w = NULL;
	struct ploom_err err = {0, ""};
	struct ploom_run run = {0};
	char *early = script("early", "exit 1\n");
	char *mid = script("mid", HELLO "read cmd\necho 'step 0 0 begin - 0 - - -' >&3\nkill -9 $$\n");

	CHECK_INT(fake_start(&w, early, "x:f", "0", &err), -1);
	CHECK_STR(err.msg, "the worker died before it loaded the scenario (exit status 1)");
	CHECK_INT(fake_start(&w, mid, "x:f", "0", &err), 0);
	if (w) {
		CHECK_INT(ploom_worker_run(w, &run, NULL, 0, 0, 0, &err), -1);
		CHECK_STR(err.msg, "the worker died during a schedule (killed by signal 9)");
		ploom_worker_free(w);
	}
	ploom_run_release(&run);
	free(early);
	free(mid);
}

/* A command the worker cannot take is answered in place of the run, and
 * the worker is still there to take the next one (here: quit). */
static void a_refused_command_is_an_error_with_the_reason(void)
{
	struct ploom_worker *w = NULL;
	struct ploom_err err = {0, ""};
	struct ploom_run run = {0};
	char *py = script("refuses", HELLO "read cmd\n"
			  "echo 'error command =bad%20run%20command%0a' >&3\n"
			  "read cmd\n"
			  "[ \"$cmd\" = quit ] && exit 0\n"
			  "exit 1\n");

	CHECK_INT(fake_start(&w, py, "x:f", "0", &err), 0);
	if (w) {
		CHECK_INT(ploom_worker_run(w, &run, NULL, 0, 0, 0, &err), -1);
		CHECK_INT(err.kind, PLOOM_ERR_WORKER);
		/* one line: the newline is shown as '?' */
		CHECK_STR(err.msg, "the worker refused the command: bad run command?");
		CHECK_INT(ploom_worker_stop(w, &err), 0);
	}
	ploom_run_release(&run);
	free(py);
}

static void a_malformed_record_is_an_error_naming_it(void)
{
	struct ploom_worker *w = NULL;
	struct ploom_err err = {0, ""};
	struct ploom_run run = {0};
	char *py = script("bad", HELLO "read cmd\necho 'step 0 zero begin - 0 - - -' >&3\nsleep 5\n");

	CHECK_INT(fake_start(&w, py, "x:f", "0", &err), 0);
	if (w) {
		CHECK_INT(ploom_worker_run(w, &run, NULL, 0, 0, 0, &err), -1);
		CHECK_STR(err.msg, "malformed record from the worker: 'step 0 zero begin - 0 - - -' "
				   "(bad TASK)");
		/* must not wait for the sleep: it kills */
		ploom_worker_free(w);
	}
	ploom_run_release(&run);
	free(py);
}

static void expect_patch_and_instrument_come_before_the_target_in_order(void)
{
	static const char *const patch[] = {"mylib.pool", "other"};
	static const char *const points[] = {"mylib.pool:0", "mod:12"};
	static const char *const instrument[] = {"mylib", "pkg.sub"};
	struct ploom_worker_opts opts = {.target = "mod:fn", .hash_seed = "0",
					 .expect_file = "/x/mod.py", .patch = patch, .npatch = 2};
	struct ploom_worker *w = NULL;
	struct ploom_err err = {0, ""};
	char *py = script("patched", "echo \"$*\" > \"$(dirname \"$0\")/args\"\n"
				     "rm -f \"$(dirname \"$0\")/points\"\n"
				     "{ cat <&5 > \"$(dirname \"$0\")/points\"; } 2>/dev/null\n"
				     HELLO "read cmd\nexit 0\n");
	char *text, **many = NULL;
	struct ploom_buf want = {0};
	size_t i, nmany = 40000;

	opts.python = py;
	CHECK_INT(ploom_worker_start(&w, &opts, &err), 0);
	CHECK_STR(err.msg, "");
	CHECK_INT(ploom_worker_stop(w, &err), 0);
	text = fake_read(dir, "args");
	/* -P: the folder the utility runs in is not on the worker's path */
	CHECK_STR(text, "-P -m ploom._worker --expect=/x/mod.py --patch=mylib.pool --patch=other "
			"mod:fn\n");
	free(text);
	/* with the file's blob id, which the worker holds the bytes it runs to */
	opts.expect_blob = "0123456789012345678901234567890123456789";
	CHECK_INT(ploom_worker_start(&w, &opts, &err), 0);
	CHECK_INT(ploom_worker_stop(w, &err), 0);
	text = fake_read(dir, "args");
	CHECK_STR(text, "-P -m ploom._worker --expect=/x/mod.py "
			"--expect-blob=0123456789012345678901234567890123456789 "
			"--patch=mylib.pool --patch=other mod:fn\n");
	free(text);
	/* with the tree a module target's packages must be in */
	opts.expect_root = "/x/";
	CHECK_INT(ploom_worker_start(&w, &opts, &err), 0);
	CHECK_INT(ploom_worker_stop(w, &err), 0);
	text = fake_read(dir, "args");
	CHECK_STR(text, "-P -m ploom._worker --expect=/x/mod.py "
			"--expect-blob=0123456789012345678901234567890123456789 --expect-root=/x/ "
			"--patch=mylib.pool --patch=other mod:fn\n");
	free(text);
	opts.expect_root = NULL;
	/* the modules to instrument after those to patch, the scenario, then
	 * the access sites that are points, in one argument */
	opts.instrument = instrument;
	opts.ninstrument = 2;
	opts.instrument_scenario = 1;
	opts.plain_points = points;
	opts.nplain_points = 2;
	CHECK_INT(ploom_worker_start(&w, &opts, &err), 0);
	CHECK_INT(ploom_worker_stop(w, &err), 0);
	text = fake_read(dir, "args");
	CHECK_STR(text, "-P -m ploom._worker --expect=/x/mod.py "
			"--expect-blob=0123456789012345678901234567890123456789 "
			"--patch=mylib.pool --patch=other --instrument=mylib --instrument=pkg.sub "
			"--instrument-scenario --plain-points=- mod:fn\n");
	free(text);
	/* the stress model after them, before the points; idle is the default */
	opts.timeouts = PLOOM_TIMEOUTS_ANY;
	CHECK_INT(ploom_worker_start(&w, &opts, &err), 0);
	CHECK_INT(ploom_worker_stop(w, &err), 0);
	text = fake_read(dir, "args");
	CHECK_STR(text, "-P -m ploom._worker --expect=/x/mod.py "
			"--expect-blob=0123456789012345678901234567890123456789 "
			"--patch=mylib.pool --patch=other --instrument=mylib --instrument=pkg.sub "
			"--instrument-scenario --timeouts=any --plain-points=- mod:fn\n");
	free(text);
	opts.timeouts = PLOOM_TIMEOUTS_IDLE;
	/* the points on fd 5, however many: 40,000 keys are 0.6 MB, more
	 * than execve() takes in one argument */
	text = fake_read(dir, "points");
	CHECK_STR(text, "points 2 mylib.pool:0 mod:12\n");
	free(text);
	many = calloc(nmany, sizeof(*many));
	ploom_buf_addf(&want, "points %zu", nmany);
	for (i = 0; many && i < nmany; i++) {
		if (asprintf(&many[i], "package.module_%zu:%zu", i % 13, i) < 0)
			many[i] = NULL;
		ploom_buf_addf(&want, " %s", many[i]);
	}
	ploom_buf_add(&want, "\n", 1);
	ploom_buf_add(&want, "", 1);
	opts.plain_points = (const char *const *)many;
	opts.nplain_points = nmany;
	CHECK_INT(ploom_worker_start(&w, &opts, &err), 0);
	CHECK_STR(err.msg, "");
	CHECK_INT(ploom_worker_stop(w, &err), 0);
	text = fake_read(dir, "points");
	CHECK(want.len > 600000);
	CHECK(text && !strcmp(text, want.data));
	free(text);
	for (i = 0; many && i < nmany; i++)
		free(many[i]);
	free(many);
	ploom_buf_release(&want);
	opts.plain_points = points;
	opts.nplain_points = 2;
	/* a reduction's: every site a point but the quiet reads, and of
	 * those the ones the search made points, on fd 5 */
	opts.plain_all_points = 1;
	CHECK_INT(ploom_worker_start(&w, &opts, &err), 0);
	CHECK_INT(ploom_worker_stop(w, &err), 0);
	text = fake_read(dir, "args");
	CHECK_STR(text, "-P -m ploom._worker --expect=/x/mod.py "
			"--expect-blob=0123456789012345678901234567890123456789 "
			"--patch=mylib.pool --patch=other --instrument=mylib --instrument=pkg.sub "
			"--instrument-scenario --plain-points=*- mod:fn\n");
	free(text);
	text = fake_read(dir, "points");
	CHECK_STR(text, "points 2 mylib.pool:0 mod:12\n");
	free(text);
	opts.nplain_points = 0;
	CHECK_INT(ploom_worker_start(&w, &opts, &err), 0);
	CHECK_INT(ploom_worker_stop(w, &err), 0);
	text = fake_read(dir, "args");
	CHECK_STR(text, "-P -m ploom._worker --expect=/x/mod.py "
			"--expect-blob=0123456789012345678901234567890123456789 "
			"--patch=mylib.pool --patch=other --instrument=mylib --instrument=pkg.sub "
			"--instrument-scenario --plain-points=* mod:fn\n");
	free(text);
	/* no fd 5 then */
	text = fake_read(dir, "points");
	CHECK(text == NULL);
	free(text);
	opts.plain_all_points = 0;
	opts.nplain_points = 2;
	/* each alone */
	opts.expect_file = opts.expect_blob = NULL;
	opts.patch = NULL;
	opts.npatch = 0;
	opts.instrument_scenario = 0;
	opts.nplain_points = 0;
	CHECK_INT(ploom_worker_start(&w, &opts, &err), 0);
	CHECK_INT(ploom_worker_stop(w, &err), 0);
	text = fake_read(dir, "args");
	CHECK_STR(text, "-P -m ploom._worker --instrument=mylib --instrument=pkg.sub mod:fn\n");
	free(text);
	opts.ninstrument = 0;
	opts.instrument_scenario = 1;
	CHECK_INT(ploom_worker_start(&w, &opts, &err), 0);
	CHECK_INT(ploom_worker_stop(w, &err), 0);
	text = fake_read(dir, "args");
	CHECK_STR(text, "-P -m ploom._worker --instrument-scenario mod:fn\n");
	free(text);
	free(py);
}

static void a_site_key_that_is_not_one_is_refused_before_the_start(void)
{
	static const char *const points[] = {"mod:1", "mod:1 --evil"};
	struct ploom_worker_opts opts = {.python = "/nonexistent/python3", .target = "x:f",
					 .hash_seed = "0", .plain_points = points, .nplain_points = 2};
	struct ploom_worker *w = NULL;
	struct ploom_err err = {0, ""};

	CHECK_INT(ploom_worker_start(&w, &opts, &err), -1);
	CHECK(w == NULL);
	CHECK_INT(err.kind, PLOOM_ERR_INPUT);
	CHECK_STR(err.msg, "bad site key 'mod:1 --evil'");
}

static void a_module_name_that_is_not_one_is_refused_before_the_start(void)
{
	static const char *const patch[] = {"ok", "not-a-name"};
	static const char *const instrument[] = {"ok", "a..b"};
	struct ploom_worker_opts opts = {.python = "/nonexistent/python3", .target = "x:f",
					 .hash_seed = "0", .patch = patch, .npatch = 2};
	struct ploom_worker *w = NULL;
	struct ploom_err err = {0, ""};

	CHECK_INT(ploom_worker_start(&w, &opts, &err), -1);
	CHECK(w == NULL);
	CHECK_INT(err.kind, PLOOM_ERR_INPUT);
	CHECK_STR(err.msg, "cannot patch module 'not-a-name': not a module name (Python "
			   "identifiers joined by '.')");
	opts.npatch = 1;
	opts.instrument = instrument;
	opts.ninstrument = 2;
	CHECK_INT(ploom_worker_start(&w, &opts, &err), -1);
	CHECK(w == NULL);
	CHECK_INT(err.kind, PLOOM_ERR_INPUT);
	CHECK_STR(err.msg, "cannot instrument module 'a..b': not a module name (Python "
			   "identifiers joined by '.')");
}

static void a_missing_interpreter_is_named(void)
{
	struct ploom_worker_opts opts = {.python = "/nonexistent/python3", .target = "x:f",
					 .hash_seed = "0"};
	struct ploom_worker *w = NULL;
	struct ploom_err err = {0, ""};

	CHECK_INT(ploom_worker_start(&w, &opts, &err), -1);
	CHECK_STR(err.msg, "cannot run '/nonexistent/python3': No such file or directory");
}

static void default_python_honours_the_environment(void)
{
	char *p;

	setenv("PLOOM_PYTHON", "/opt/py/bin/python3", 1);
	p = ploom_worker_default_python();
	CHECK_STR(p, "/opt/py/bin/python3");
	free(p);
	unsetenv("PLOOM_PYTHON");
	p = ploom_worker_default_python();
	CHECK(p && (!strcmp(p, "python3") || strstr(p, "/python3")));
	free(p);
}

/* This test program's folder has no python3, so the one beside argv[0]
 * (how a wheel's bin/ script starts the real program) is taken; when none
 * is there either, python3 from PATH. */
static void default_python_looks_beside_argv0(void)
{
	char *argv0 = program_invocation_name, *fake_argv0 = NULL, *expected = NULL, *p;
	char bare[] = "ploom-explore";

	if (asprintf(&fake_argv0, "%s/ploom-explore", dir) < 0 || asprintf(&expected, "%s/python3", dir) < 0)
		abort();
	free(script("python3", "exit 0\n"));
	unsetenv("PLOOM_PYTHON");
	program_invocation_name = fake_argv0;
	p = ploom_worker_default_python();
	CHECK_STR(p, expected);
	free(p);
	unlink(expected);
	p = ploom_worker_default_python();
	CHECK_STR(p, "python3");
	free(p);
	program_invocation_name = bare;
	p = ploom_worker_default_python();
	CHECK_STR(p, "python3");
	free(p);
	program_invocation_name = argv0;
	free(fake_argv0);
	free(expected);
}

int main(void)
{
	char cmd[128];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	worker_starts_runs_and_stops();
	what_a_schedule_leaves_behind_goes_when_the_run_ends();
	kill_all_kills_every_worker();
	an_error_record_means_the_scenario_cannot_load();
	a_worker_that_dies_is_an_error();
	a_refused_command_is_an_error_with_the_reason();
	a_malformed_record_is_an_error_naming_it();
	expect_patch_and_instrument_come_before_the_target_in_order();
	a_module_name_that_is_not_one_is_refused_before_the_start();
	a_site_key_that_is_not_one_is_refused_before_the_start();
	a_missing_interpreter_is_named();
	default_python_honours_the_environment();
	default_python_looks_beside_argv0();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("cannot remove %s\n", dir);
	return check_report();
}
