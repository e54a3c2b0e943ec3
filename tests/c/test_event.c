/* Tests of the worker protocol: the str encoding round trip and the
 * parsing of canned record streams, well formed and malformed. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/decode.h"
#include "../../lib/event.h"
#include "../../lib/trace.h"
#include "check.h"

static void str_round_trips_every_byte(void)
{
	char in[256];
	struct ploom_buf b = {0};
	size_t i, n = 0;
	char *out;

	for (i = 0; i < 256; i++)
		in[i] = (char)i;
	ploom_buf_add_str(&b, in, sizeof(in));
	CHECK(b.len > 2 && b.data[0] == ' ' && b.data[1] == '=');
	/* no raw separator or control byte may survive the encoding */
	for (i = 2; i < b.len; i++)
		CHECK((unsigned char)b.data[i] >= 0x21 && b.data[i] != 0x7f);
	out = ploom_str_decode(b.data + 2, b.len - 2, &n);
	CHECK(out != NULL);
	CHECK_INT(n, 256);
	CHECK(out && !memcmp(out, in, sizeof(in)));
	free(out);
	ploom_buf_release(&b);
}

static void str_encodes_space_percent_and_keeps_utf8(void)
{
	struct ploom_buf b = {0};
	const char *s = "a b%c\n\xc3\xa9";

	ploom_buf_add_str(&b, s, strlen(s));
	CHECK_STR(b.data, " =a%20b%25c%0A\xc3\xa9");
	ploom_buf_release(&b);
	ploom_buf_add_str(&b, "", 0);
	CHECK_STR(b.data, " =");
	ploom_buf_release(&b);
}

static void str_decode_rejects_bad_escapes(void)
{
	size_t n;

	CHECK(ploom_str_decode("%4", 2, &n) == NULL);
	CHECK(ploom_str_decode("%zz", 3, &n) == NULL);
	CHECK(ploom_str_decode("abc%", 4, &n) == NULL);
}

static int parse(struct ploom_run *run, const char *text, struct ploom_err *err)
{
	memset(run, 0, sizeof(*run));
	return ploom_run_parse_text(run, text, strlen(text), 10000, err);
}

static void parse_reads_a_passing_run(void)
{
	struct ploom_err err = {0, ""};
	struct ploom_run run;
	const char *text =
		"step 0 0 start thread#1 0 - - -\n"
		"step 1 1 begin - 0,1 - 0:acquire:lock#0 -\n"
		"step 2 1 read cell#0 0,1 - 0:acquire:lock#0 -\n"
		"value 2 =100\n"
		"step 3 0 acquire lock#0 0,1 nonblocking 1:acquire:lock#0 -\n"
		"value 3 =True\n"
		"step 4 1 acquire lock#0 0,1 timed 0:release:lock#0 -\n"
		"value 4 =False\n"
		"idle 4 1500000000\n"
		"step 5 0 join thread#1 0,1 timed 1:read:cell#0 -\n"
		"stall 5 1 2500000000\n"
		"label 3 =get%20->%203\n"
		"outcome pass\n"
		"exit code 0\n"
		"output =hi%0A\n"
		"done 6\n";

	CHECK_INT(parse(&run, text, &err), 0);
	CHECK_STR(err.msg, "");
	CHECK_INT(run.nsteps, 6);
	CHECK_INT(run.outcome.kind, PLOOM_OUTCOME_PASS);
	CHECK_STR(run.outcome.summary, "pass");
	CHECK_STR(run.outcome.output, "hi\n");
	CHECK_INT(run.steps[0].op, PLOOM_OP_START);
	CHECK_STR(run.steps[0].object, "thread#1");
	CHECK_INT(run.steps[0].obj.kind, PLOOM_OBJ_THREAD);
	CHECK_INT(run.steps[0].obj.id, 1);
	CHECK_INT(run.steps[0].npending, 0);
	CHECK(run.steps[1].object == NULL);
	CHECK_INT(run.steps[1].obj.kind, PLOOM_OBJ_NONE);
	CHECK_INT(run.steps[2].npending, 1);
	CHECK_INT(run.steps[2].pending[0].task, 0);
	CHECK_INT(run.steps[2].pending[0].op, PLOOM_OP_ACQUIRE);
	CHECK_INT(run.steps[2].pending[0].obj.kind, PLOOM_OBJ_LOCK);
	CHECK_INT(run.steps[3].pending[0].op, PLOOM_OP_ACQUIRE);
	CHECK_STR(run.steps[2].value, "100");
	CHECK_INT(run.steps[2].mode, PLOOM_ACQUIRE_BLOCKING);
	CHECK_INT(run.steps[3].mode, PLOOM_ACQUIRE_NONBLOCKING);
	CHECK_INT(run.steps[3].nenabled, 2);
	CHECK_INT(run.steps[4].mode, PLOOM_ACQUIRE_TIMED);
	CHECK_STR(run.steps[4].value, "False");
	CHECK_INT(run.steps[4].idle, 1);
	CHECK(run.steps[4].clock_ns == 1500000000LL);
	CHECK_INT(run.steps[3].idle, 0);
	CHECK_STR(run.steps[3].label, "get -> 3");
	CHECK(run.steps[4].label == NULL);
	CHECK_INT(run.steps[5].op, PLOOM_OP_JOIN);
	CHECK_INT(run.steps[5].mode, PLOOM_ACQUIRE_TIMED);
	CHECK_INT(run.steps[5].stalled, 1);
	CHECK_INT(run.steps[5].stall_of, 1);
	CHECK(run.steps[5].stall_ns == 2500000000LL);
	CHECK_INT(run.steps[4].stalled, 0);
	/* branch points: steps 1-5; steps 1 and 3 switch away from a task
	 * still enabled, steps 4 and 5 from task 0 and 1, which are too */
	CHECK_INT(run.nchoices, 5);
	CHECK_INT(run.choices[0], 1);
	CHECK_INT(run.choices[2], 0);
	CHECK_INT(run.choices[3], 1);
	CHECK_INT(run.choices[4], 0);
	CHECK_INT(run.preemptions, 4);
	ploom_run_release(&run);
}

static void parse_reads_a_failure(void)
{
	struct ploom_err err = {0, ""};
	struct ploom_run run;
	const char *text =
		"step 0 0 read cell#0 0 - - -\n"
		"outcome failure 0 =builtins.AssertionError =the%20account%20is%20overdrawn "
		"=Traceback%0A\n"
		"exit code 0\n"
		"done 1\n";

	CHECK_INT(parse(&run, text, &err), 0);
	CHECK_INT(run.outcome.kind, PLOOM_OUTCOME_FAILURE);
	CHECK_STR(run.outcome.exc_type, "builtins.AssertionError");
	CHECK_STR(run.outcome.exc_message, "the account is overdrawn");
	CHECK_STR(run.outcome.traceback, "Traceback\n");
	CHECK_STR(run.outcome.summary, "builtins.AssertionError: the account is overdrawn");
	ploom_run_release(&run);
}

static void parse_reads_a_deadlock_with_its_waits(void)
{
	struct ploom_err err = {0, ""};
	struct ploom_run run;
	const char *text =
		"outcome deadlock\n"
		"wait 0 join thread#1 1 - join =\n"
		"wait 1 acquire lock#0 2 - lock =\n"
		"wait 2 acquire lock#1 1 - lock =\n"
		"exit code 0\n"
		"done 0\n";

	CHECK_INT(parse(&run, text, &err), 0);
	CHECK_INT(run.outcome.kind, PLOOM_OUTCOME_DEADLOCK);
	CHECK_INT(run.outcome.nwaits, 3);
	CHECK_STR(run.outcome.summary,
		  "deadlock: task 0 waits to join thread#1; task 1 waits to acquire lock#0 "
		  "held by task 2; task 2 waits to acquire lock#1 held by task 1");
	ploom_run_release(&run);
}

static void parse_turns_exits_into_outcomes(void)
{
	struct ploom_err err = {0, ""};
	struct ploom_run run;

	CHECK_INT(parse(&run, "exit code 3\ndone 0\n", &err), 0);
	CHECK_INT(run.outcome.kind, PLOOM_OUTCOME_EXIT);
	CHECK_STR(run.outcome.summary, "exit: the scenario exited with status 3");
	ploom_run_release(&run);
	CHECK_INT(parse(&run, "step 0 0 begin - 0 - - -\nexit signal 11\ndone 1\n", &err), 0);
	CHECK_INT(run.outcome.kind, PLOOM_OUTCOME_CRASH);
	CHECK_STR(run.outcome.summary, "crash: killed by signal 11 (SIGSEGV)");
	ploom_run_release(&run);
	CHECK_INT(parse(&run, "exit timeout 0\ndone 0\n", &err), 0);
	CHECK_INT(run.outcome.kind, PLOOM_OUTCOME_TIMEOUT);
	CHECK_STR(run.outcome.summary, "timeout: the schedule ran longer than 10 s");
	ploom_run_release(&run);
	CHECK_INT(parse(&run, "outcome step-limit 5\nexit code 0\ndone 0\n", &err), 0);
	CHECK_STR(run.outcome.summary, "step-limit: the schedule reached 5 steps");
	ploom_run_release(&run);
	/* a SIGKILL from outside ploom is no outcome: the run is an error */
	CHECK_INT(parse(&run, "step 0 0 begin - 0 - - -\nexit killed 9\ndone 1\n", &err), -1);
	CHECK(strstr(err.msg, "killed by signal 9 from outside ploom") != NULL);
	CHECK_INT(err.kind, PLOOM_ERR_SYSTEM);
	ploom_run_release(&run);
	/* after the scenario's own outcome, the outcome stands */
	CHECK_INT(parse(&run, "outcome pass\nexit killed 9\ndone 0\n", &err), 0);
	CHECK_INT(run.outcome.kind, PLOOM_OUTCOME_PASS);
	ploom_run_release(&run);
	CHECK_INT(parse(&run, "outcome divergence 3 =task%205%20is%20not%20enabled\n"
			      "exit code 0\ndone 0\n", &err), 0);
	CHECK_INT(run.outcome.kind, PLOOM_OUTCOME_DIVERGENCE);
	CHECK_INT(run.outcome.divergence_index, 3);
	CHECK_STR(run.outcome.summary, "divergence: task 5 is not enabled");
	ploom_run_release(&run);
}

/* Each malformed stream must give -1 and a message containing `want`. */
static const struct {
	const char *text;
	const char *want;
} malformed[] = {
	{"step 0 0 start thread#1 0 - - -\n", "stopped before the end of the run"},
	/* a timeout's stacks: after `exit timeout`, or a step limit's
	 * `exit`, only, tasks ascending, frames after a running stack, no
	 * more than DEPTH or 8 */
	{"stack 0 running 1\nexit timeout 0\ndone 0\n", "stack outside a timeout or step limit"},
	{"exit code 0\nstack 0 running 1\ndone 0\n", "stack outside a timeout or step limit"},
	{"outcome pass\nexit code 0\nstack 0 finished 0\ndone 0\n",
	 "stack outside a timeout or step limit"},
	{"outcome step-limit 5\nstack 0 finished 0\nexit code 0\ndone 0\n",
	 "stack outside a timeout or step limit"},
	{"exit timeout 0\noutput =x\nstack 0 finished 0\ndone 0\n",
	 "stack outside a timeout or step limit"},
	{"exit timeout 0\nstack 1 finished 0\nstack 1 finished 0\ndone 0\n", "bad TASK"},
	{"exit timeout 0\nstack 1 finished 0\nstack 0 finished 0\ndone 0\n", "bad TASK"},
	{"exit timeout 0\nstack -1 finished 0\ndone 0\n", "bad TASK"},
	{"exit timeout 0\nstack 0 asleep 0\ndone 0\n", "bad STATE"},
	{"exit timeout 0\nstack 0 finished 2\ndone 0\n", "bad DEPTH"},
	{"exit timeout 0\nstack 0 running -1\ndone 0\n", "bad DEPTH"},
	{"exit timeout 0\nstack 0 running\ndone 0\n", "expected 4 fields"},
	{"exit timeout 0\nframe =/a.py 1 =f\ndone 0\n", "frame outside a running stack"},
	{"exit timeout 0\nstack 0 finished 0\nframe =/a.py 1 =f\ndone 0\n",
	 "frame outside a running stack"},
	{"exit timeout 0\nstack 0 running 2\nframe =/a.py 1 =f\noutput =x\nframe =/a.py 1 =f\n"
	 "done 0\n", "frame outside a running stack"},
	{"exit timeout 0\nstack 0 running 1\nframe =/a.py 1 =f\nframe =/a.py 2 =g\ndone 0\n",
	 "more frames than DEPTH or 8"},
	{"exit timeout 0\nstack 0 running 9\nframe =a 1 =f\nframe =a 1 =f\nframe =a 1 =f\n"
	 "frame =a 1 =f\nframe =a 1 =f\nframe =a 1 =f\nframe =a 1 =f\nframe =a 1 =f\n"
	 "frame =a 1 =f\ndone 0\n", "more frames than DEPTH or 8"},
	{"exit timeout 0\nstack 0 running 1\nframe =/a.py x =f\ndone 0\n", "bad LINE"},
	{"exit timeout 0\nstack 0 running 1\nframe =/a.py -1 =f\ndone 0\n", "bad LINE"},
	{"exit timeout 0\nstack 0 running 1\nframe = 1 =f\ndone 0\n", "FILE is empty"},
	{"exit timeout 0\nstack 0 running 1\nframe =/a%0A.py 1 =f\ndone 0\n",
	 "FILE holds a control character"},
	{"exit timeout 0\nstack 0 running 1\nframe =/a.py 1 =\ndone 0\n", "FUNCTION is empty"},
	{"exit timeout 0\nstack 0 running 1\nframe =/a.py 1\ndone 0\n", "expected 4 fields"},
	{"", "stopped before the end of the run"},
	{"step 0 0 start thread#1 0 - - -\nexit code 0\ndone 1", "stopped before the end"},
	{"step 1 0 start thread#1 0 - - -\n", "step out of order"},
	{"step x 0 start thread#1 0 - - -\n", "bad INDEX"},
	{"step 0 0 start thread#1 0\n", "expected 9 fields"},
	{"step 0 0 start thread#1 0 -\n", "expected 9 fields"},
	/* protocol 3's step, without WHERE */
	{"step 0 0 start thread#1 0 - -\n", "expected 9 fields"},
	{"step 0 0 start thread#01 0 - - -\n", "bad OBJECT"},
	{"step 0 0 start sock#1 0 - - -\n", "bad OBJECT"},
	{"step 0 0 read cell#0 0,1 - - -\n", "an enabled task is not in PENDING"},
	{"step 0 0 read cell#0 0 - 0:read:cell#1 -\n", "bad PENDING"},
	{"step 0 0 read cell#0 0 - 2:read:cell#1,1:read:cell#1 -\n", "bad PENDING"},
	{"step 0 0 read cell#0 0 - 1:fly:cell#1 -\n", "bad PENDING"},
	{"step 0 0 read cell#0 0 - 1:read -\n", "bad PENDING"},
	{"step 0 0 read cell#0 0 - 1:read:cell#1, -\n", "bad PENDING"},
	{"outcome sleep-blocked\n", "bad INDEX"},
	{"step 0 0 fly thread#1 0 - - -\n", "unknown OP"},
	{"step 0 0 start thread#1 1,2 - 1:yield_now:-,2:yield_now:- -\n", "TASK is not enabled"},
	{"step 0 0 start thread#1 2,0 - 2:yield_now:- -\n", "bad ENABLED"},
	{"step 0 0 start thread#1 0,,1 - - -\n", "bad ENABLED"},
	{"step 0 0 start thread#1 0 blocking - -\n", "bad FLAGS"},
	{"step 0 0 acquire lock#0 0 timeout - -\n", "bad FLAGS"},
	{"step 0 0 read cell#0 0 timed - -\n", "FLAGS that OP does not take"},
	{"step 0 0 release lock#0 0 nonblocking - -\n", "FLAGS that OP does not take"},
	{"step 0 0 is_alive thread#1 0 timed - -\n", "FLAGS that OP does not take"},
	{"step 0 0 join thread#1 0 nonblocking - -\n", "FLAGS that OP does not take"},
	{"step 0  0 start thread#1 0 -\n", "bad field separators"},
	{"value 0 =1\n", "bad INDEX"},
	{"step 0 0 read cell#0 0 - - -\nvalue 0 1\n", "bad TEXT"},
	{"step 0 0 read cell#0 0 - - -\nvalue 0 =1\nvalue 0 =2\n", "second value"},
	{"idle 0 5\n", "bad INDEX"},
	{"step 0 0 sleep clock 0 - - -\nidle 0 -5\n", "bad NS"},
	{"step 0 0 sleep clock 0 - - -\nidle 0 5x\n", "bad NS"},
	{"step 0 0 sleep clock 0 - - -\nidle 0\n", "bad INDEX"},
	{"step 0 0 sleep clock 0 - - -\nidle 0 5\nidle 0 6\n", "second idle"},
	{"stall 0 1 5\n", "bad INDEX"},
	{"step 0 0 read cell#0 0 - - -\nstall 0 1 5\n", "no timed wait"},
	{"step 0 0 acquire lock#0 0 timed - -\nstall 0 -2 5\n", "bad TASK"},
	{"step 0 0 acquire lock#0 0 timed - -\nstall 0 -1 -5\n", "bad NS"},
	{"step 0 0 acquire lock#0 0 timed - -\nstall 0 1\n", "bad INDEX"},
	{"step 0 0 acquire lock#0 0 timed - -\nstall 0 1 5\nstall 0 1 6\n", "second stall"},
	{"label 0 =put%203\n", "bad INDEX"},
	{"step 0 0 read cell#0 0 - - -\nlabel 0 =a\nlabel 0 =b\n", "second label"},
	{"step 0 0 read cell#0 0 - - -\nlabel 0 =\n", "TEXT is empty"},
	{"step 0 0 read cell#0 0 - - -\nlabel 0 =a%0Ab\n", "TEXT holds a control character"},
	{"outcome maybe\n", "unknown outcome"},
	{"outcome pass\noutcome pass\n", "second outcome"},
	{"outcome refine\n", "expected 3 fields"},
	{"outcome refine =\n", "bad SITES"},
	{"outcome failure 0 =T =M\n", "expected 6 fields"},
	{"outcome failure 0 =T =M =%ZZ\n", "bad str field"},
	{"wait 0 join thread#1 1 - join =\n", "wait outside a deadlock"},
	{"exit sometimes 0\n", "bad HOW"},
	{"done 0\n", "run without outcome or exit"},
	{"outcome pass\nexit code 0\ndone 2\n", "step count differs"},
	{"hello 1\n", "unknown record"},
	{"outcome pass\nexit code 0\ndone 0\nstep 0 0 begin - 0 - - -\n", "data after the end"},
	/* WHERE names a code record sent before, and a line from 1 */
	{"step 0 0 begin - 0 - - 0:1\n", "bad WHERE"},
	{"code 0 =/a.py =f\nstep 0 0 begin - 0 - - 1:3\n", "bad WHERE"},
	{"code 0 =/a.py =f\nstep 0 0 begin - 0 - - 0:0\n", "bad WHERE"},
	{"code 0 =/a.py =f\nstep 0 0 begin - 0 - - 0:-1\n", "bad WHERE"},
	{"code 0 =/a.py =f\nstep 0 0 begin - 0 - - -0:1\n", "bad WHERE"},
	{"code 0 =/a.py =f\nstep 0 0 begin - 0 - - 0:\n", "bad WHERE"},
	{"code 0 =/a.py =f\nstep 0 0 begin - 0 - - :3\n", "bad WHERE"},
	{"code 0 =/a.py =f\nstep 0 0 begin - 0 - - 0:3:4\n", "bad WHERE"},
	{"code 0 =/a.py =f\nstep 0 0 begin - 0 - - 0x3\n", "bad WHERE"},
	{"code 0 =/a.py =f\noutcome deadlock\nwait 0 join thread#1 1 0:x join =\n", "bad WHERE"},
	{"outcome deadlock\nwait 0 join thread#1 1\n", "expected 8 fields"},
	{"outcome deadlock\nwait 0 join thread#1 1 - hold =\n", "unknown FOR"},
	{"outcome deadlock\nwait 0 acquire lock#0 -1 - notify =a\x01\n", "ON "},
	/* code records count from 0, and hold labels */
	{"code 1 =/a.py =f\n", "bad INDEX"},
	{"code 0 =/a.py =f\ncode 0 =/b.py =g\n", "bad INDEX"},
	{"code 0 =/a.py\n", "expected 4 fields"},
	{"code 0 = =f\n", "FILE is empty"},
	{"code 0 =/a%0A.py =f\n", "FILE holds a control character"},
	{"code 0 =/a.py =f%00\n", "FUNCTION holds a control character"},
	{"code 0 =/a.py =%7F\n", "FUNCTION holds a control character"},
	{"code 0 =/a.py f\n", "FUNCTION bad str field"},
	{"code 0 =/a.py =%ZZ\n", "FUNCTION bad str field"},
	{"code 0 =/a.py =a%20b c\n", "expected 4 fields"},
	/* names name objects */
	{"name - =x\n", "bad OBJECT"},
	{"name sock#1 =x\n", "bad OBJECT"},
	{"name cell#0\n", "expected 3 fields"},
	{"name cell#0 =\n", "NAME is empty"},
	{"name cell#0 =a%1B[2Jb\n", "NAME holds a control character"},
};

static void parse_rejects_malformed_streams(void)
{
	size_t i;

	for (i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		struct ploom_err err = {0, ""};
		struct ploom_run run;
		int r = parse(&run, malformed[i].text, &err);
		if (!CHECK_INT(r, -1) || !CHECK(strstr(err.msg, malformed[i].want) != NULL))
			printf("  case %zu: got '%s'\n", i, err.msg);
		ploom_run_release(&run);
	}
}

static void parse_reads_where_a_step_stopped_and_the_names(void)
{
	struct ploom_err err = {0, ""};
	struct ploom_run run;
	const char *text =
		"code 0 =/src/bank.py =withdraw\n"
		"name cell#0 =balance\n"
		"step 0 0 start thread#1 0 - - -\n"
		"name thread#1 =mathieu\n"
		"step 1 1 begin - 0,1 - 0:read:cell#0 0:20\n"
		"code 1 =/src/a%20b.py =%3Clambda%3E\n"
		"step 2 1 read cell#0 0,1 - 0:read:cell#0 1:21\n"
		"value 2 =100\n"
		"name thread#1 =lucas\n"
		"outcome deadlock\n"
		"wait 0 acquire lock#0 1 0:7 lock =\n"
		"wait 1 join thread#2 -1 - join =\n"
		"exit code 0\n"
		"done 3\n";

	CHECK_INT(parse(&run, text, &err), 0);
	CHECK_STR(err.msg, "");
	CHECK(run.steps[0].where.file == NULL);
	CHECK(run.steps[0].where.function == NULL);
	CHECK_INT(run.steps[0].where.line, 0);
	CHECK_STR(run.steps[1].where.file, "/src/bank.py");
	CHECK_STR(run.steps[1].where.function, "withdraw");
	CHECK_INT(run.steps[1].where.line, 20);
	CHECK_STR(run.steps[2].where.file, "/src/a b.py");
	CHECK_STR(run.steps[2].where.function, "<lambda>");
	CHECK_INT(run.steps[2].where.line, 21);
	/* each step holds its own copy */
	CHECK(run.steps[1].where.file != run.codes[0].file);
	CHECK_INT(run.outcome.nwaits, 2);
	CHECK_STR(run.outcome.waits[0].where.function, "withdraw");
	CHECK_INT(run.outcome.waits[0].where.line, 7);
	CHECK(run.outcome.waits[1].where.file == NULL);
	CHECK_STR(ploom_run_name(&run, (struct ploom_obj){PLOOM_OBJ_CELL, 0}), "balance");
	/* a thread renamed: the last name counts, and it names one object */
	CHECK_STR(ploom_run_name(&run, (struct ploom_obj){PLOOM_OBJ_THREAD, 1}), "lucas");
	CHECK_INT(run.nnames, 2);
	CHECK(ploom_run_name(&run, (struct ploom_obj){PLOOM_OBJ_LOCK, 0}) == NULL);
	ploom_run_release(&run);
}

/* A stream of code records with labels of n bytes: file "/" and n - 1
 * 'a's, function n 'f's; the other label is short. */
static int parse_label(struct ploom_run *run, int file, size_t n, struct ploom_err *err)
{
	struct ploom_buf b = {0};
	char *label = malloc(n + 1);
	int r;

	memset(label, file ? 'a' : 'f', n);
	label[0] = file ? '/' : 'f';
	label[n] = '\0';
	ploom_buf_addf(&b, "code 0 =%s =%s\noutcome pass\nexit code 0\ndone 0\n",
		       file ? label : "/a.py", file ? "f" : label);
	memset(run, 0, sizeof(*run));
	r = ploom_run_parse_text(run, b.data, b.len, 0, err);
	ploom_buf_release(&b);
	free(label);
	return r;
}

static void labels_are_bounded(void)
{
	struct ploom_err err = {0, ""};
	struct ploom_run run;

	CHECK_INT(parse_label(&run, 0, PLOOM_NAME_MAX, &err), 0);
	CHECK_INT(strlen(run.codes[0].function), PLOOM_NAME_MAX);
	ploom_run_release(&run);
	CHECK_INT(parse_label(&run, 0, PLOOM_NAME_MAX + 1, &err), -1);
	CHECK(strstr(err.msg, "(FUNCTION is longer than 128 bytes)") != NULL);
	ploom_run_release(&run);
	CHECK_INT(parse_label(&run, 1, PLOOM_PATH_MAX, &err), 0);
	CHECK_INT(strlen(run.codes[0].file), PLOOM_PATH_MAX);
	ploom_run_release(&run);
	CHECK_INT(parse_label(&run, 1, PLOOM_PATH_MAX + 1, &err), -1);
	CHECK(strstr(err.msg, "(FILE is longer than 4096 bytes)") != NULL);
	ploom_run_release(&run);
	CHECK_STR(ploom_label_problem("ok", 2, 2), NULL);
	CHECK_STR(ploom_label_problem("", 0, 2), "is empty");
	CHECK_STR(ploom_label_problem("abc", 3, PLOOM_NAME_MAX - 126), "is longer than 128 bytes");
	CHECK_STR(ploom_label_problem("a\tb", 3, 9), "holds a control character");
	CHECK_STR(ploom_label_problem("a\0b", 3, 9), "holds a control character");
	/* UTF-8 is text, and nothing else is */
	CHECK_STR(ploom_label_problem("\xc3\xa9t\xc3\xa9", 5, 9), NULL);
	CHECK_STR(ploom_label_problem("a\xff" "b", 3, 9), "is not valid UTF-8");
	CHECK_STR(ploom_label_problem("a\xc3", 2, 9), "is not valid UTF-8");
}

static void a_run_names_at_most_1024_objects(void)
{
	struct ploom_err err = {0, ""};
	struct ploom_buf b = {0};
	struct ploom_run run;
	int i;

	for (i = 0; i < PLOOM_NAMES_MAX; i++)
		ploom_buf_addf(&b, "name cell#%d =c%d\n", i, i);
	/* a new name for a named object is no new object */
	ploom_buf_addf(&b, "name cell#0 =again\noutcome pass\nexit code 0\ndone 0\n");
	memset(&run, 0, sizeof(run));
	CHECK_INT(ploom_run_parse_text(&run, b.data, b.len, 0, &err), 0);
	CHECK_INT(run.nnames, PLOOM_NAMES_MAX);
	CHECK_STR(ploom_run_name(&run, (struct ploom_obj){PLOOM_OBJ_CELL, 0}), "again");
	ploom_run_release(&run);
	ploom_buf_release(&b);
	for (i = 0; i <= PLOOM_NAMES_MAX; i++)
		ploom_buf_addf(&b, "name lock#%d =l\n", i);
	memset(&run, 0, sizeof(run));
	CHECK_INT(ploom_run_parse_text(&run, b.data, b.len, 0, &err), -1);
	CHECK(strstr(err.msg, "(more than 1024 names)") != NULL);
	ploom_run_release(&run);
	ploom_buf_release(&b);
}

static void malformed_messages_stay_on_one_line(void)
{
	struct ploom_err err = {0, ""};
	struct ploom_run run;

	parse(&run, "step 0 0 \x01\x02 thread#1 0 - -\n", &err);
	CHECK(strchr(err.msg, '\x01') == NULL);
	CHECK(strstr(err.msg, "malformed record from the worker: 'step 0 0 ??") != NULL);
	ploom_run_release(&run);
}

static void hello_is_parsed_and_error_names_the_target(void)
{
	struct ploom_err err = {0, ""};
	struct ploom_hello h;
	char line[200], want[80];
	const char *bad = "error load ={\"message\":%20\"No%20module%20named%20'nosuch'\"}";

	/* a hello of the protocol version this build speaks */
	snprintf(line, sizeof(line),
		 "hello %d =cpython =3.13.0 1 =0 =examples.bank_account =scenario "
		 "=/src/examples/bank_account.py 1 =mylib,other.pkg "
		 "=/src/mylib/a.py%%0A/src/other/pkg/b.py%%0A =/src",
		 PLOOM_PROTOCOL_VERSION);
	memset(&h, 0, sizeof(h));
	CHECK_INT(ploom_hello_parse(&h, line, strlen(line), "x:y", &err), 0);
	CHECK_STR(h.implementation, "cpython");
	CHECK_STR(h.python_version, "3.13.0");
	CHECK_INT(h.gil, 1);
	CHECK_STR(h.module, "examples.bank_account");
	CHECK_STR(h.file, "/src/examples/bank_account.py");
	CHECK_INT(h.scenario_instrumented, 1);
	CHECK_INT((int)h.ninstrumented, 2);
	CHECK_STR(h.instrumented[0], "mylib");
	CHECK_STR(h.instrumented[1], "other.pkg");
	CHECK_INT((int)h.nsources, 2);
	CHECK_STR(h.sources[0], "/src/mylib/a.py");
	CHECK_STR(h.sources[1], "/src/other/pkg/b.py");
	CHECK_STR(h.root, "/src");
	ploom_hello_release(&h);
	/* SOURCES: a relative path, one not ended, a control character */
	{
		static const char *const bad_sources[] = {"=mylib/a.py%0A", "=/src/a.py",
							  "=/src/a%01.py%0A"};
		for (size_t k = 0; k < 3; k++) {
			snprintf(line, sizeof(line), "hello %d =cpython =3.13.0 1 =0 =m =q = 0 = %s =",
				 PLOOM_PROTOCOL_VERSION, bad_sources[k]);
			CHECK_INT(ploom_hello_parse(&h, line, strlen(line), "m:q", &err), -1);
			CHECK(strstr(err.msg, "bad SOURCES") != NULL);
			ploom_hello_release(&h);
		}
	}
	/* an empty name among INSTRUMENTED's, and a SCENARIO not 0 or 1 */
	snprintf(line, sizeof(line), "hello %d =cpython =3.13.0 1 =0 =m =q = 0 =a,,b = =",
		 PLOOM_PROTOCOL_VERSION);
	CHECK_INT(ploom_hello_parse(&h, line, strlen(line), "m:q", &err), -1);
	CHECK(strstr(err.msg, "bad INSTRUMENTED") != NULL);
	ploom_hello_release(&h);
	snprintf(line, sizeof(line), "hello %d =cpython =3.13.0 1 =0 =m =q = 2 = = =",
		 PLOOM_PROTOCOL_VERSION);
	CHECK_INT(ploom_hello_parse(&h, line, strlen(line), "m:q", &err), -1);
	CHECK(strstr(err.msg, "bad SCENARIO") != NULL);
	ploom_hello_release(&h);
	/* ROOT: a relative path, a control character, a NUL; and a hello
	 * of protocol 16, without it */
	{
		static const char *const bad_roots[] = {"=src", "=/src%01", "=/src%00x"};
		for (size_t k = 0; k < 3; k++) {
			snprintf(line, sizeof(line), "hello %d =cpython =3.13.0 1 =0 =m =q = 0 = = %s",
				 PLOOM_PROTOCOL_VERSION, bad_roots[k]);
			CHECK_INT(ploom_hello_parse(&h, line, strlen(line), "m:q", &err), -1);
			CHECK(strstr(err.msg, "bad ROOT") != NULL);
			CHECK(h.root == NULL);
			ploom_hello_release(&h);
		}
		snprintf(line, sizeof(line), "hello %d =cpython =3.13.0 1 =0 =m =q = 0 = =",
			 PLOOM_PROTOCOL_VERSION);
		CHECK_INT(ploom_hello_parse(&h, line, strlen(line), "m:q", &err), -1);
		CHECK(strstr(err.msg, "expected 13 fields") != NULL);
		ploom_hello_release(&h);
	}
	CHECK_INT(ploom_hello_parse(&h, bad, strlen(bad), "nosuch:f", &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_INPUT);
	CHECK_STR(err.msg, "cannot load scenario 'nosuch:f': No module named 'nosuch'");
	ploom_hello_release(&h);
	/* an exception's text on several lines, with an escape: one line of '?' for them */
	bad = "error load ={\"message\":%20\"one\\ntwo\\u001b[2J\\u007f\",%20\"type\":%20"
	      "\"ValueError\"}";
	CHECK_INT(ploom_hello_parse(&h, bad, strlen(bad), "m:q", &err), -1);
	CHECK_STR(err.msg, "cannot load scenario 'm:q': ValueError: one?two?[2J?");
	ploom_hello_release(&h);
	snprintf(line, sizeof(line), "hello %d =cpython =3.13.0 1 =0 =m =q =",
		 PLOOM_PROTOCOL_VERSION - 1);
	CHECK_INT(ploom_hello_parse(&h, line, strlen(line), "m:q", &err), -1);
	snprintf(want, sizeof(want), "the worker speaks protocol version %d (this ploom speaks %d)",
		 PLOOM_PROTOCOL_VERSION - 1, PLOOM_PROTOCOL_VERSION);
	CHECK_STR(err.msg, want);
	ploom_hello_release(&h);
}

static void op_and_object_names_round_trip(void)
{
	struct ploom_obj o;
	char name[32];
	int op;

	for (op = 0; op < PLOOM_NOPS; op++)
		CHECK_INT(ploom_op_parse(ploom_op_name(op), strlen(ploom_op_name(op))), op);
	CHECK_INT(ploom_op_parse("yield", 5), -1);
	CHECK_INT(ploom_op_parse("", 0), -1);
	CHECK_STR(ploom_op_name(PLOOM_NOPS), "?");
	CHECK_INT(ploom_obj_parse(&o, "lock#12", 7), 0);
	CHECK_INT(o.kind, PLOOM_OBJ_LOCK);
	CHECK_INT(o.id, 12);
	CHECK_INT(ploom_obj_format(name, sizeof(name), o), 7);
	CHECK_STR(name, "lock#12");
	CHECK_INT(ploom_obj_parse(&o, "-", 1), 0);
	CHECK_INT(o.kind, PLOOM_OBJ_NONE);
	ploom_obj_format(name, sizeof(name), o);
	CHECK_STR(name, "-");
	CHECK_INT(ploom_obj_parse(&o, "cell#", 5), -1);
	CHECK_INT(ploom_obj_parse(&o, "cell#1x", 7), -1);
	CHECK_INT(ploom_obj_parse(&o, "cell#1234567890123456789", 24), -1);
	/* a short buffer truncates, never overflows */
	CHECK_INT(ploom_obj_format(name, 4, (struct ploom_obj){PLOOM_OBJ_THREAD, 7}), 3);
	CHECK_STR(name, "thr");
	/* the one clock has no number */
	CHECK_INT(ploom_obj_parse(&o, "clock", 5), 0);
	CHECK_INT(o.kind, PLOOM_OBJ_CLOCK);
	CHECK_INT(o.id, 0);
	CHECK_INT(ploom_obj_format(name, sizeof(name), o), 5);
	CHECK_STR(name, "clock");
	CHECK_INT(ploom_obj_parse(&o, "clock#0", 7), -1);
	CHECK_INT(ploom_obj_parse(&o, "clocks", 6), -1);
	CHECK_STR(ploom_op_name(PLOOM_OP_SLEEP), "sleep");
}

/* conflicts(task a doing op1 on o1 in mode ma, task b doing op2 on o2 in mb) */
static int conflict_modes(int ta, enum ploom_op a, struct ploom_obj oa,
			  enum ploom_acquire_mode ma, int ea, int tb, enum ploom_op b,
			  struct ploom_obj ob, enum ploom_acquire_mode mb)
{
	struct ploom_access x[PLOOM_ACCESS_MAX], y[PLOOM_ACCESS_MAX];
	int nx = ploom_op_accesses(x, ta, a, oa, ma, ea), ny = ploom_op_accesses(y, tb, b, ob, mb, 0);
	int ab = ploom_conflicts(x, nx, y, ny), ba = ploom_conflicts(y, ny, x, nx);

	CHECK_INT(ab, ba); /* symmetric */
	return ab;
}

/* conflicts(task a doing op1 on o1, task b doing op2 on o2) */
static int conflict(int ta, enum ploom_op a, struct ploom_obj oa, int ea, int tb,
		    enum ploom_op b, struct ploom_obj ob)
{
	return conflict_modes(ta, a, oa, PLOOM_ACQUIRE_BLOCKING, ea, tb, b, ob,
			      PLOOM_ACQUIRE_BLOCKING);
}

static void conflicts_follow_the_dependence_relation(void)
{
	struct ploom_obj c0 = {PLOOM_OBJ_CELL, 0}, c1 = {PLOOM_OBJ_CELL, 1};
	struct ploom_obj l0 = {PLOOM_OBJ_LOCK, 0}, l1 = {PLOOM_OBJ_LOCK, 1};
	struct ploom_obj t2 = {PLOOM_OBJ_THREAD, 2}, none = {PLOOM_OBJ_NONE, 0};
	struct ploom_obj clock = {PLOOM_OBJ_CLOCK, 0};
	struct ploom_access x[PLOOM_ACCESS_MAX], y[PLOOM_ACCESS_MAX];

	CHECK_INT(conflict(1, PLOOM_OP_WRITE, c0, 0, 2, PLOOM_OP_WRITE, c0), 1);
	CHECK_INT(conflict(1, PLOOM_OP_READ, c0, 0, 2, PLOOM_OP_WRITE, c0), 1);
	CHECK_INT(conflict(1, PLOOM_OP_READ, c0, 0, 2, PLOOM_OP_READ, c0), 0);
	CHECK_INT(conflict(1, PLOOM_OP_WRITE, c0, 0, 2, PLOOM_OP_WRITE, c1), 0);
	/* every pair of acquire and release of one lock; locked reads it */
	CHECK_INT(conflict(1, PLOOM_OP_ACQUIRE, l0, 0, 2, PLOOM_OP_ACQUIRE, l0), 1);
	CHECK_INT(conflict(1, PLOOM_OP_RELEASE, l0, 0, 2, PLOOM_OP_ACQUIRE, l0), 1);
	CHECK_INT(conflict(1, PLOOM_OP_LOCKED, l0, 0, 2, PLOOM_OP_RELEASE, l0), 1);
	CHECK_INT(conflict(1, PLOOM_OP_LOCKED, l0, 0, 2, PLOOM_OP_LOCKED, l0), 0);
	CHECK_INT(conflict(1, PLOOM_OP_ACQUIRE, l0, 0, 2, PLOOM_OP_ACQUIRE, l1), 0);
	/* a cell and a lock with the same number are different objects */
	CHECK_INT(conflict(1, PLOOM_OP_WRITE, c0, 0, 2, PLOOM_OP_ACQUIRE, l0), 0);
	/* start of thread 2 and thread 2's begin */
	CHECK_INT(conflict(0, PLOOM_OP_START, t2, 0, 2, PLOOM_OP_BEGIN, none), 1);
	CHECK_INT(conflict(0, PLOOM_OP_START, t2, 0, 3, PLOOM_OP_BEGIN, none), 0);
	/* join and is_alive of thread 2 against thread 2's last step only */
	CHECK_INT(conflict(2, PLOOM_OP_WRITE, c1, 1, 0, PLOOM_OP_JOIN, t2), 1);
	CHECK_INT(conflict(2, PLOOM_OP_WRITE, c1, 0, 0, PLOOM_OP_JOIN, t2), 0);
	CHECK_INT(conflict(2, PLOOM_OP_YIELD_NOW, none, 1, 0, PLOOM_OP_IS_ALIVE, t2), 1);
	CHECK_INT(conflict(2, PLOOM_OP_BEGIN, none, 1, 0, PLOOM_OP_IS_ALIVE, t2), 1);
	CHECK_INT(conflict(0, PLOOM_OP_JOIN, t2, 0, 1, PLOOM_OP_IS_ALIVE, t2), 0);
	CHECK_INT(conflict(0, PLOOM_OP_START, t2, 0, 1, PLOOM_OP_JOIN, t2), 1);
	/* yield_now depends on nothing */
	CHECK_INT(conflict(1, PLOOM_OP_YIELD_NOW, none, 0, 2, PLOOM_OP_YIELD_NOW, none), 0);
	CHECK_INT(ploom_op_accesses(x, 1, PLOOM_OP_YIELD_NOW, none, PLOOM_ACQUIRE_BLOCKING, 0), 0);
	CHECK_INT(ploom_op_accesses(y, 1, PLOOM_OP_BEGIN, none, PLOOM_ACQUIRE_BLOCKING, 1), 1);
	CHECK_INT(y[0].how, PLOOM_ACCESS_WRITE);
	/* the clock: a read of it and a sleep conflict, two sleeps (adds)
	 * and two reads do not */
	CHECK_INT(conflict(1, PLOOM_OP_READ, clock, 0, 2, PLOOM_OP_SLEEP, clock), 1);
	CHECK_INT(conflict(1, PLOOM_OP_SLEEP, clock, 0, 2, PLOOM_OP_SLEEP, clock), 0);
	CHECK_INT(conflict(1, PLOOM_OP_READ, clock, 0, 2, PLOOM_OP_READ, clock), 0);
	CHECK_INT(conflict(1, PLOOM_OP_SLEEP, clock, 0, 2, PLOOM_OP_WRITE, c0), 0);
	/* a timed acquire or join may time out: it adds to the clock too,
	 * after the access of its own object and before its exit */
	CHECK_INT(conflict_modes(1, PLOOM_OP_ACQUIRE, l0, PLOOM_ACQUIRE_TIMED, 0, 2, PLOOM_OP_READ,
				 clock, PLOOM_ACQUIRE_BLOCKING), 1);
	CHECK_INT(conflict_modes(1, PLOOM_OP_JOIN, t2, PLOOM_ACQUIRE_TIMED, 0, 2, PLOOM_OP_READ,
				 clock, PLOOM_ACQUIRE_BLOCKING), 1);
	CHECK_INT(conflict_modes(1, PLOOM_OP_ACQUIRE, l0, PLOOM_ACQUIRE_TIMED, 0, 2, PLOOM_OP_SLEEP,
				 clock, PLOOM_ACQUIRE_BLOCKING), 0);
	CHECK_INT(conflict_modes(1, PLOOM_OP_ACQUIRE, l0, PLOOM_ACQUIRE_BLOCKING, 0, 2, PLOOM_OP_READ,
				 clock, PLOOM_ACQUIRE_BLOCKING), 0);
	CHECK_INT(conflict_modes(1, PLOOM_OP_ACQUIRE, l0, PLOOM_ACQUIRE_NONBLOCKING, 0, 2,
				 PLOOM_OP_READ, clock, PLOOM_ACQUIRE_BLOCKING), 0);
	CHECK_INT(ploom_op_accesses(x, 1, PLOOM_OP_ACQUIRE, l0, PLOOM_ACQUIRE_TIMED, 1), 3);
	CHECK_INT(x[0].obj.kind, PLOOM_OBJ_LOCK);
	CHECK_INT(x[1].obj.kind, PLOOM_OBJ_CLOCK);
	CHECK_INT(x[1].how, PLOOM_ACCESS_ADD);
	CHECK_INT(x[2].obj.kind, PLOOM_OBJ_THREAD);
	/* a pending acquire or join may be a timed one: its mode is not known */
	CHECK_INT(ploom_pending_accesses(x, 1, PLOOM_OP_ACQUIRE, l0), 3);
	CHECK_INT(ploom_pending_accesses(x, 1, PLOOM_OP_JOIN, t2), 3);
	CHECK_INT(ploom_pending_accesses(x, 1, PLOOM_OP_WRITE, c0), 2);
}

/* Every record the extension writes, through every encoder, read back by
 * the decoder, field for field. */
static void encoded_records_decode_to_what_was_encoded(void)
{
	static const int en0[] = {0}, en01[] = {0, 1}, en012[] = {0, 1, 2};
	const struct ploom_pending p1[] = {{0, PLOOM_OP_ACQUIRE, {PLOOM_OBJ_LOCK, 3}}};
	const struct ploom_pending p2[] = {{1, PLOOM_OP_BEGIN, {PLOOM_OBJ_NONE, 0}},
					   {2, PLOOM_OP_JOIN, {PLOOM_OBJ_THREAD, 1}}};
	const struct ploom_pending p3[] = {{0, PLOOM_OP_ACQUIRE, {PLOOM_OBJ_LOCK, 3}},
					   {1, PLOOM_OP_BEGIN, {PLOOM_OBJ_NONE, 0}}};
	struct ploom_buf b = {0};
	struct ploom_err err = {0, ""};
	struct ploom_run run;
	const char tb[] = "Traceback\n  line 1\n\x01%=";

	const struct ploom_wire_where nowhere = {-1, 0}, w0 = {0, 12}, w1 = {1, 3};
	/* a function's name cut at 128 bytes must not split the 'é' across it */
	char longfn[PLOOM_NAME_MAX + 8];

	memset(longfn, 'f', sizeof(longfn));
	longfn[PLOOM_NAME_MAX - 1] = '\xc3';
	longfn[PLOOM_NAME_MAX] = '\xa9';
	ploom_enc_code(&b, 0, "/src/a b.py", 11, "withdraw", 8);
	ploom_enc_code(&b, 1, "/src/\x1b[2J.py", 12, longfn, sizeof(longfn));
	ploom_enc_name(&b, (struct ploom_obj){PLOOM_OBJ_CELL, 4}, "bal\nance", 8);
	/* an empty name is none: no record */
	ploom_enc_name(&b, (struct ploom_obj){PLOOM_OBJ_LOCK, 3}, "", 0);
	ploom_enc_name(&b, (struct ploom_obj){PLOOM_OBJ_THREAD, 1}, "mathieu", 7);
	ploom_enc_step(&b, 0, 0, PLOOM_OP_START, (struct ploom_obj){PLOOM_OBJ_THREAD, 1}, en0, 1,
		       PLOOM_ACQUIRE_BLOCKING, NULL, 0, w0);
	ploom_enc_step(&b, 1, 1, PLOOM_OP_READ, (struct ploom_obj){PLOOM_OBJ_CELL, 4}, en01, 2,
		       PLOOM_ACQUIRE_BLOCKING, p1, 1, w1);
	ploom_enc_value(&b, 1, "'a b'", 5);
	ploom_enc_step(&b, 2, 0, PLOOM_OP_ACQUIRE, (struct ploom_obj){PLOOM_OBJ_LOCK, 3}, en012,
		       3, PLOOM_ACQUIRE_NONBLOCKING, p2, 2, nowhere);
	ploom_enc_step(&b, 3, 0, PLOOM_OP_ACQUIRE, (struct ploom_obj){PLOOM_OBJ_LOCK, 3}, en012,
		       3, PLOOM_ACQUIRE_TIMED, p2, 2, (struct ploom_wire_where){0, 0});
	ploom_enc_value(&b, 3, "False", 5);
	ploom_enc_label(&b, 3, "get -> \x1b", 8);
	ploom_enc_label(&b, 2, "", 0);
	ploom_enc_step(&b, 4, 2, PLOOM_OP_JOIN, (struct ploom_obj){PLOOM_OBJ_THREAD, 1}, en012,
		       3, PLOOM_ACQUIRE_TIMED, p3, 2, w0);
	ploom_enc_outcome_failure(&b, 2, "builtins.ValueError", 19, "bad\0value", 9, tb,
				  sizeof(tb) - 1);
	ploom_enc_exit(&b, "code", 0);
	ploom_enc_output(&b, "out\n", 4);
	ploom_enc_done(&b, 5);
	memset(&run, 0, sizeof(run));
	CHECK_INT(ploom_run_parse_text(&run, b.data, b.len, 0, &err), 0);
	CHECK_STR(err.msg, "");
	CHECK_INT(run.nsteps, 5);
	CHECK_INT(run.steps[0].op, PLOOM_OP_START);
	CHECK_STR(run.steps[0].object, "thread#1");
	CHECK_STR(run.steps[0].where.file, "/src/a b.py");
	CHECK_STR(run.steps[0].where.function, "withdraw");
	CHECK_INT(run.steps[0].where.line, 12);
	/* labels are cleaned and cut as the protocol says */
	CHECK_STR(run.steps[1].where.file, "/src/?[2J.py");
	CHECK_INT(strlen(run.steps[1].where.function), PLOOM_NAME_MAX - 1);
	CHECK_INT(run.steps[1].where.line, 3);
	CHECK(run.steps[2].where.file == NULL);
	/* a line below 1 is no place */
	CHECK(run.steps[3].where.file == NULL);
	CHECK_INT(run.steps[4].where.line, 12);
	CHECK_STR(ploom_run_name(&run, (struct ploom_obj){PLOOM_OBJ_CELL, 4}), "bal?ance");
	CHECK(ploom_run_name(&run, (struct ploom_obj){PLOOM_OBJ_LOCK, 3}) == NULL);
	CHECK_STR(ploom_run_name(&run, (struct ploom_obj){PLOOM_OBJ_THREAD, 1}), "mathieu");
	CHECK_INT(run.steps[1].task, 1);
	CHECK_INT(run.steps[1].obj.id, 4);
	CHECK_STR(run.steps[1].value, "'a b'");
	CHECK_INT(run.steps[1].npending, 1);
	CHECK_INT(run.steps[1].pending[0].task, 0);
	CHECK_INT(run.steps[1].pending[0].op, PLOOM_OP_ACQUIRE);
	CHECK_INT(run.steps[1].pending[0].obj.kind, PLOOM_OBJ_LOCK);
	CHECK_INT(run.steps[1].pending[0].obj.id, 3);
	CHECK_INT(run.steps[0].mode, PLOOM_ACQUIRE_BLOCKING);
	CHECK_INT(run.steps[2].mode, PLOOM_ACQUIRE_NONBLOCKING);
	CHECK_INT(run.steps[3].mode, PLOOM_ACQUIRE_TIMED);
	CHECK_STR(run.steps[3].value, "False");
	CHECK_STR(run.steps[3].label, "get -> ?");
	CHECK(run.steps[2].label == NULL);
	CHECK_INT(run.steps[4].op, PLOOM_OP_JOIN);
	CHECK_INT(run.steps[4].mode, PLOOM_ACQUIRE_TIMED);
	CHECK(run.steps[4].value == NULL);
	CHECK_INT(run.steps[2].nenabled, 3);
	CHECK_INT(run.steps[2].npending, 2);
	CHECK_INT(run.steps[2].pending[0].op, PLOOM_OP_BEGIN);
	CHECK_INT(run.steps[2].pending[1].obj.kind, PLOOM_OBJ_THREAD);
	CHECK_INT(run.outcome.kind, PLOOM_OUTCOME_FAILURE);
	CHECK_INT(run.outcome.task, 2);
	CHECK_STR(run.outcome.exc_type, "builtins.ValueError");
	CHECK(run.outcome.exc_message && !memcmp(run.outcome.exc_message, "bad\0value", 10));
	CHECK_STR(run.outcome.traceback, tb);
	CHECK_STR(run.outcome.output, "out\n");
	ploom_run_release(&run);
	ploom_buf_release(&b);

	ploom_enc_code(&b, 0, "/src/t.py", 9, "transfer", 8);
	ploom_enc_outcome_deadlock(&b);
	ploom_enc_wait(&b, 1, PLOOM_OP_ACQUIRE, (struct ploom_obj){PLOOM_OBJ_LOCK, 0}, 2, w0,
		       PLOOM_WAIT_NOTIFY, "Pool.cond", 9);
	ploom_enc_wait(&b, 2, PLOOM_OP_JOIN, (struct ploom_obj){PLOOM_OBJ_THREAD, 1}, 1, nowhere,
		       PLOOM_WAIT_JOIN, NULL, 0);
	ploom_enc_exit(&b, "code", 0);
	ploom_enc_done(&b, 0);
	memset(&run, 0, sizeof(run));
	CHECK_INT(ploom_run_parse_text(&run, b.data, b.len, 0, &err), 0);
	CHECK_INT(run.outcome.nwaits, 2);
	CHECK_INT(run.outcome.waits[1].op, PLOOM_OP_JOIN);
	CHECK_STR(run.outcome.waits[1].object, "thread#1");
	CHECK_INT(run.outcome.waits[0].holder, 2);
	CHECK_STR(run.outcome.waits[0].where.function, "transfer");
	CHECK_INT(run.outcome.waits[0].where.line, 12);
	CHECK(run.outcome.waits[1].where.file == NULL);
	CHECK_INT(run.outcome.waits[0].waits_for, PLOOM_WAIT_NOTIFY);
	CHECK_STR(run.outcome.waits[0].on, "Pool.cond");
	CHECK_INT(run.outcome.waits[1].waits_for, PLOOM_WAIT_JOIN);
	CHECK(run.outcome.waits[1].on == NULL);
	ploom_run_release(&run);
	ploom_buf_release(&b);

	ploom_enc_outcome_sleep_blocked(&b, 7);
	ploom_enc_exit(&b, "code", 0);
	ploom_enc_done(&b, 0);
	memset(&run, 0, sizeof(run));
	CHECK_INT(ploom_run_parse_text(&run, b.data, b.len, 0, &err), 0);
	CHECK_INT(run.outcome.kind, PLOOM_OUTCOME_SLEEP_BLOCKED);
	CHECK_INT(run.outcome.divergence_index, 7);
	CHECK_INT(ploom_outcome_is_failure(run.outcome.kind), 0);
	ploom_run_release(&run);
	ploom_buf_release(&b);

	ploom_enc_outcome_pass(&b);
	ploom_enc_exit(&b, "signal", 9);
	ploom_enc_done(&b, 0);
	memset(&run, 0, sizeof(run));
	CHECK_INT(ploom_run_parse_text(&run, b.data, b.len, 0, &err), 0);
	CHECK_INT(run.outcome.kind, PLOOM_OUTCOME_PASS);
	ploom_run_release(&run);
	ploom_buf_release(&b);

	ploom_enc_outcome_step_limit(&b, 12);
	ploom_enc_exit(&b, "timeout", 0);
	ploom_enc_done(&b, 0);
	memset(&run, 0, sizeof(run));
	CHECK_INT(ploom_run_parse_text(&run, b.data, b.len, 0, &err), 0);
	CHECK_INT(run.outcome.kind, PLOOM_OUTCOME_STEP_LIMIT);
	CHECK_INT(run.outcome.limit, 12);
	ploom_run_release(&run);
	ploom_buf_release(&b);

	ploom_enc_outcome_divergence(&b, 3, "choice 1 asks for task 7", 24);
	ploom_enc_exit(&b, "code", 0);
	ploom_enc_done(&b, 0);
	memset(&run, 0, sizeof(run));
	CHECK_INT(ploom_run_parse_text(&run, b.data, b.len, 0, &err), 0);
	CHECK_INT(run.outcome.kind, PLOOM_OUTCOME_DIVERGENCE);
	CHECK_INT(run.outcome.divergence_index, 3);
	CHECK_STR(run.outcome.divergence_message, "choice 1 asks for task 7");
	ploom_run_release(&run);
	ploom_buf_release(&b);

	ploom_enc_error_detail(&b, "load", "No module named 'x'", 19, NULL, 0);
	{
		struct ploom_hello h;
		memset(&h, 0, sizeof(h));
		CHECK_INT(ploom_hello_parse(&h, b.data, b.len - 1, "x:f", &err), -1);
		CHECK_INT(err.kind, PLOOM_ERR_INPUT);
		CHECK_STR(err.msg, "cannot load scenario 'x:f': No module named 'x'");
		ploom_hello_release(&h);
	}
	ploom_buf_release(&b);

	ploom_enc_hello(&b, "cpython", 7, "3.14.1", 6, 0, "42", 2, "m", 1, "f", 1, NULL, 0, 0, NULL,
			0, NULL, 0, "/p r", 4);
	{
		struct ploom_hello h;
		memset(&h, 0, sizeof(h));
		CHECK_INT(ploom_hello_parse(&h, b.data, b.len - 1, "m:f", &err), 0);
		CHECK_INT(h.version, PLOOM_PROTOCOL_VERSION);
		CHECK_STR(h.python_version, "3.14.1");
		CHECK_INT(h.gil, 0);
		CHECK_STR(h.hash_seed, "42");
		CHECK(h.file == NULL);
		CHECK_INT(h.scenario_instrumented, 0);
		CHECK_INT((int)h.ninstrumented, 0);
		CHECK_STR(h.root, "/p r");
		ploom_hello_release(&h);
	}
	ploom_buf_release(&b);
	ploom_enc_hello(&b, "cpython", 7, "3.14.1", 6, 0, "42", 2, "m", 1, "f", 1, NULL, 0, 0, NULL,
			0, NULL, 0, NULL, 0);
	{
		struct ploom_hello h;
		memset(&h, 0, sizeof(h));
		CHECK_INT(ploom_hello_parse(&h, b.data, b.len - 1, "m:f", &err), 0);
		CHECK(h.root == NULL);
		ploom_hello_release(&h);
	}
	ploom_buf_release(&b);
}

static void run_commands_round_trip_and_bad_ones_are_refused(void)
{
	int choices[] = {1, 0, 2}, sleep[] = {3, 1};
	static int follow[] = {0, 1, 1, PLOOM_MAX_TASK_ID};
	struct ploom_run_cmd cmd = {100, 5000, choices, 3, sleep, 2, {0}}, got;
	struct ploom_buf b = {0};
	struct ploom_err err = {0, ""};
	static const char *const bad[] = {
		"run", "run 1 2", "run 1 2 0", "run 1 2 1 0", "run 1 2 2 0 1 0 x",
		"run -1 0 0 0 default", "run 1 2 0 0 default ", "run 1 2 0 1 1000001 default",
		"runs 1 2 0 0 default", "run 1 2 0  0 default", "run 1 2 99999999 0 default",
		/* a policy is always there (protocol 5), and whole */
		"run 0 0 0 0", "run 0 0 0 0 ", "run 0 0 0 0 dfs", "run 0 0 0 0 default 1",
		"run 0 0 0 0 random", "run 0 0 0 0 random -1", "run 0 0 0 0 random 281474976710656",
		"run 0 0 0 0 pct 1 3", "run 0 0 0 0 pct 1 0 5", "run 0 0 0 0 pct 1 1001 5",
		"run 0 0 0 0 pct 1 3 10000001", "run 0 0 0 0 pct 1 3 5 6", "run 0 0 0 0 Pct 1 3 5",
		/* a forced step names a task id too; a sleeping task is never negative */
		"run 1 2 1 -1000002 0 default", "run 1 2 1 - 0 default", "run 1 2 1 --1 0 default",
		"run 1 2 0 1 -1 default",
		/* follow: a count, then that many task ids */
		"run 0 0 0 0 follow", "run 0 0 0 0 follow 2 0", "run 0 0 0 0 follow 1 0 1",
		"run 0 0 0 0 follow 1 -1", "run 0 0 0 0 follow 200001", "run 0 0 0 0 follow 1 x",
	};
	static const struct {
		struct ploom_policy_spec policy;
		const char *line;
	} policies[] = {
		{{.kind = PLOOM_POLICY_DEFAULT, .seed = 0, .depth = 0, .k = 0}, "run 0 0 0 0 default\n"},
		{{.kind = PLOOM_POLICY_RANDOM, .seed = 7, .depth = 0, .k = 0}, "run 0 0 0 0 random 7\n"},
		{{.kind = PLOOM_POLICY_RANDOM, .seed = PLOOM_POLICY_MAX_SEED, .depth = 0, .k = 0},
		 "run 0 0 0 0 random 281474976710655\n"},
		{{.kind = PLOOM_POLICY_PCT, .seed = 42, .depth = 3, .k = 17}, "run 0 0 0 0 pct 42 3 17\n"},
		{{.kind = PLOOM_POLICY_PCT, .seed = 0, .depth = 1000, .k = PLOOM_PCT_MAX_K}, "run 0 0 0 0 pct 0 1000 10000000\n"},
		{{.kind = PLOOM_POLICY_PCT, .seed = 0, .depth = 1, .k = 0}, "run 0 0 0 0 pct 0 1 0\n"},
		{{.kind = PLOOM_POLICY_FOLLOW, .follow = follow, .nfollow = 4},
		 "run 0 0 0 0 follow 4 0 1 1 1000000\n"},
		{{.kind = PLOOM_POLICY_FOLLOW}, "run 0 0 0 0 follow 0\n"},
	};
	size_t i;

	ploom_enc_run(&b, &cmd);
	CHECK_STR(b.data, "run 100 5000 3 1 0 2 2 3 1 default\n");
	CHECK_INT(ploom_run_cmd_parse(&got, b.data, b.len - 1, &err), 0);
	CHECK_INT(got.max_steps, 100);
	CHECK_INT(got.timeout_ms, 5000);
	CHECK_INT(got.nchoices, 3);
	CHECK_INT(got.choices[2], 2);
	CHECK_INT(got.nsleep, 2);
	CHECK_INT(got.sleep[0], 3);
	CHECK_INT(got.policy.kind, PLOOM_POLICY_DEFAULT);
	ploom_run_cmd_release(&got);
	ploom_buf_release(&b);
	/* forced steps (-1-T) read back as they were written */
	{
		int forced[] = {1, -1, -1 - PLOOM_MAX_TASK_ID};
		struct ploom_run_cmd f = {0, 0, forced, 3, NULL, 0, {0}};

		ploom_enc_run(&b, &f);
		CHECK_STR(b.data, "run 0 0 3 1 -1 -1000001 0 default\n");
		if (CHECK_INT(ploom_run_cmd_parse(&got, b.data, b.len - 1, &err), 0) &&
		    CHECK_INT(got.nchoices, 3)) {
			CHECK_INT(got.choices[1], -1);
			CHECK_INT(got.choices[2], -1 - PLOOM_MAX_TASK_ID);
		}
		ploom_run_cmd_release(&got);
		ploom_buf_release(&b);
	}
	/* each policy is written as the protocol spells it and reads back */
	for (i = 0; i < sizeof(policies) / sizeof(policies[0]); i++) {
		struct ploom_run_cmd p = {0, 0, NULL, 0, NULL, 0, policies[i].policy};

		ploom_enc_run(&b, &p);
		CHECK_STR(b.data, policies[i].line);
		if (CHECK_INT(ploom_run_cmd_parse(&got, b.data, b.len - 1, &err), 0)) {
			CHECK_INT(got.policy.kind, policies[i].policy.kind);
			CHECK(got.policy.seed == policies[i].policy.seed);
			CHECK_INT(got.policy.depth, policies[i].policy.depth);
			CHECK_INT(got.policy.k, policies[i].policy.k);
			CHECK_INT(got.policy.nfollow, policies[i].policy.nfollow);
			if (got.policy.nfollow == 4)
				CHECK_INT(got.policy.follow[3], PLOOM_MAX_TASK_ID);
			CHECK(ploom_policy_problem(&got.policy) == NULL);
		}
		ploom_run_cmd_release(&got);
		ploom_buf_release(&b);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!CHECK_INT(ploom_run_cmd_parse(&got, bad[i], strlen(bad[i]), &err), -1))
			printf("  accepted '%s'\n", bad[i]);
		ploom_run_cmd_release(&got);
	}
}

/* A long schedule's command is far longer than 64 KiB; the worker reads
 * it whole, up to PLOOM_MAX_RUN_CMD_BYTES, which holds the longest one. */
static void a_run_command_of_40000_choices_round_trips(void)
{
	enum { N = 40000 };
	int *choices = malloc(N * sizeof(*choices)), sleep[] = {PLOOM_MAX_TASK_ID};
	/* the widest policy too */
	struct ploom_run_cmd cmd = {0, 1000, choices, N, sleep, 1,
				    {.kind = PLOOM_POLICY_PCT, .seed = PLOOM_POLICY_MAX_SEED,
				     .depth = PLOOM_PCT_MAX_DEPTH, .k = PLOOM_PCT_MAX_K}}, got;
	struct ploom_buf b = {0};
	struct ploom_err err = {0, ""};
	size_t i, same = 0;
	long head, each;

	for (i = 0; i < N; i++)
		choices[i] = i % 7 ? (int)(i % 3) : PLOOM_MAX_TASK_ID;
	ploom_enc_run(&b, &cmd);
	CHECK(b.len > 65536);
	CHECK(b.len <= PLOOM_MAX_RUN_CMD_BYTES);
	CHECK_INT(ploom_run_cmd_parse(&got, b.data, b.len - 1, &err), 0);
	CHECK_INT(got.nchoices, N);
	for (i = 0; i < got.nchoices && i < N; i++)
		same += got.choices[i] == choices[i];
	CHECK_INT(same, N);
	CHECK_INT(got.nsleep, 1);
	CHECK_INT(got.sleep[0], PLOOM_MAX_TASK_ID);
	CHECK_INT(got.policy.kind, PLOOM_POLICY_PCT);
	CHECK(got.policy.seed == PLOOM_POLICY_MAX_SEED);
	CHECK_INT(got.policy.depth, PLOOM_PCT_MAX_DEPTH);
	CHECK_INT(got.policy.k, PLOOM_PCT_MAX_K);
	ploom_run_cmd_release(&got);
	ploom_buf_release(&b);
	/* the most choices the protocol allows, each of the widest id, and
	 * as many sleeping tasks, fit the longest command the worker reads,
	 * with the longest policy */
	head = snprintf(NULL, 0, "run %ld %ld %ld %d pct %llu %d %ld", LONG_MAX / 2, LONG_MAX / 2,
			PLOOM_MAX_CHOICES, PLOOM_MAX_TASK_ID,
			(unsigned long long)PLOOM_POLICY_MAX_SEED, PLOOM_PCT_MAX_DEPTH,
			PLOOM_PCT_MAX_K);
	each = snprintf(NULL, 0, " %d", PLOOM_MAX_TASK_ID);
	/* a forced step of the widest id is one byte wider */
	CHECK(head + PLOOM_MAX_CHOICES * snprintf(NULL, 0, " %d", -1 - PLOOM_MAX_TASK_ID) +
	      PLOOM_MAX_TASK_ID * each <= (long)PLOOM_MAX_RUN_CMD_BYTES);
	/* and with the longest follow */
	head = snprintf(NULL, 0, "run %ld %ld %ld %d follow %ld", LONG_MAX / 2, LONG_MAX / 2,
			PLOOM_MAX_CHOICES, PLOOM_MAX_TASK_ID, PLOOM_POLICY_MAX_FOLLOW);
	CHECK(head + PLOOM_MAX_CHOICES * snprintf(NULL, 0, " %d", -1 - PLOOM_MAX_TASK_ID) +
	      (PLOOM_MAX_TASK_ID + PLOOM_POLICY_MAX_FOLLOW) * each <=
	      (long)PLOOM_MAX_RUN_CMD_BYTES);
	free(choices);
}

/* A scenario may raise any message: the record carries its first
 * PLOOM_MESSAGE_MAX bytes, cut at a character boundary, and says how
 * much it left out. */
/* `error KIND DETAIL`: the JSON object of a message and a type, always
 * whole (escaped, cut before it is written), and a DETAIL that is not
 * that object refused as malformed. */
static void an_error_detail_is_a_json_object(void)
{
	static const char *const bad[] = {
		"error load =No%20module%20named%20x",         /* text, as protocol 16 wrote */
		"error load =[\"x\"]",                          /* not an object */
		"error load ={\"type\":%20\"E\"}",               /* no message */
		"error load ={\"message\":%201}",                /* not a string */
		"error load ={\"message\":%20\"a\",%20\"type\":%202}",
		"error load ={\"message\":%20\"a\\u0000b\"}",    /* a NUL */
		"error load ={\"message\":%20\"a\"}%20x",        /* more than one field */
	};
	size_t len = PLOOM_MESSAGE_MAX + 1000, i, n;
	char *msg = malloc(len), *text;
	struct ploom_buf b = {0};
	struct ploom_err err = {0, ""};
	struct ploom_hello h;

	memset(&h, 0, sizeof(h));
	/* quotes, a backslash, a newline, a NUL and a byte that is not UTF-8 */
	ploom_enc_error_detail(&b, "load", "say \"hi\\\"\n\0\xff", 12, "mod.Err", 7);
	CHECK_STR(b.data, "error load ={\"message\":%20\"say%20\\\"hi\\\\\\\"\\u000a??\",%20"
			  "\"type\":%20\"mod.Err\"}\n");
	CHECK_INT(ploom_hello_parse(&h, b.data, b.len - 1, "m:f", &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_INPUT);
	CHECK_STR(err.msg, "cannot load scenario 'm:f': mod.Err: say \"hi\\\"???");
	ploom_hello_release(&h);
	ploom_buf_release(&b);
	/* source: the sentence alone, as a divergence */
	ploom_enc_error_detail(&b, "source", "the scenario's source changed", 29, NULL, 0);
	CHECK_INT(ploom_hello_parse(&h, b.data, b.len - 1, "m:f", &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_DIVERGENCE);
	CHECK_STR(err.msg, "the scenario's source changed");
	ploom_hello_release(&h);
	ploom_buf_release(&b);
	/* a long message is cut inside the object, which stays whole */
	CHECK(msg != NULL);
	memset(msg, 'x', len);
	ploom_enc_error_detail(&b, "load", msg, len, "ValueError", 10);
	CHECK_INT(ploom_hello_parse(&h, b.data, b.len - 1, "m:f", &err), -1);
	CHECK_INT(err.kind, PLOOM_ERR_INPUT);
	CHECK(!strncmp(err.msg, "cannot load scenario 'm:f': ValueError: xxx", 43));
	ploom_hello_release(&h);
	text = strchr(b.data, '=');
	CHECK(text != NULL);
	text = ploom_str_decode(text + 1, b.len - 2 - (size_t)(text - b.data), &n);
	CHECK(text != NULL && n > 64);
	CHECK_STR(text + n - 46, "x... [cut: 1000 bytes]\", \"type\": \"ValueError\"}");
	free(text);
	ploom_buf_release(&b);
	free(msg);
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		CHECK_INT(ploom_hello_parse(&h, bad[i], strlen(bad[i]), "m:f", &err), -1);
		CHECK_INT(err.kind, PLOOM_ERR_WORKER);
		CHECK(strstr(err.msg, "malformed record from the worker") != NULL);
		ploom_hello_release(&h);
	}
}

static void a_long_failure_message_is_cut_and_marked(void)
{
	size_t len = PLOOM_MESSAGE_MAX + 1000, i;
	char *msg = malloc(len);
	char want_tail[64];
	struct ploom_buf b = {0};
	struct ploom_run run;
	struct ploom_err err = {0, ""};
	size_t ml;

	CHECK(msg != NULL);
	for (i = 0; i < len; i++)
		msg[i] = 'x';
	/* an "é" (two bytes) straddles the limit: it is left out whole */
	msg[PLOOM_MESSAGE_MAX - 1] = '\xc3';
	msg[PLOOM_MESSAGE_MAX] = '\xa9';
	ploom_enc_outcome_failure(&b, 0, "builtins.ValueError", 19, msg, len, msg, len);
	ploom_enc_exit(&b, "code", 0);
	ploom_enc_done(&b, 0);
	memset(&run, 0, sizeof(run));
	CHECK_INT(ploom_run_parse_text(&run, b.data, b.len, 0, &err), 0);
	CHECK_STR(err.msg, "");
	snprintf(want_tail, sizeof(want_tail), "x... [cut: %zu bytes]",
		 len - (PLOOM_MESSAGE_MAX - 1));
	ml = strlen(run.outcome.exc_message);
	CHECK_INT(ml, PLOOM_MESSAGE_MAX - 1 + strlen("... [cut: 1001 bytes]"));
	CHECK_STR(run.outcome.exc_message + PLOOM_MESSAGE_MAX - 2, want_tail);
	CHECK_STR(run.outcome.traceback, run.outcome.exc_message);
	ploom_run_release(&run);
	ploom_buf_release(&b);

	/* at the limit nothing is cut */
	msg[PLOOM_MESSAGE_MAX - 1] = 'x';
	ploom_enc_outcome_failure(&b, 0, "builtins.ValueError", 19, msg, PLOOM_MESSAGE_MAX,
				  "", 0);
	ploom_enc_exit(&b, "code", 0);
	ploom_enc_done(&b, 0);
	memset(&run, 0, sizeof(run));
	CHECK_INT(ploom_run_parse_text(&run, b.data, b.len, 0, &err), 0);
	CHECK_INT(strlen(run.outcome.exc_message), PLOOM_MESSAGE_MAX);
	ploom_run_release(&run);
	ploom_buf_release(&b);
	free(msg);
}

/* A dump as faulthandler writes it: task 0's thread is the current one,
 * task 1's spins, task 2's thread has no Python state yet, and a thread
 * that is no task's is left out. */
static const char dump[] =
	"Thread 0x00007f00000000aa (most recent call first):\n"
	"  File \"/src/scn.py\", line 11 in _spin\n"
	"  File \"/src/scn.py\", line 20 in outer\n"
	"\n"
	"Thread 0x00007f00000000bb (most recent call first):\n"
	"  File \"/src/other.py\", line 3 in elsewhere\n"
	"\n"
	"Current thread 0x00007f0000000001 (most recent call first):\n"
	"  File \"/pkg/ploom/threading.py\", line 90 in join\n"
	"  File \"rel/scn.py\", line ??? in scenario\n"
	"  File \"/pkg/ploom/_worker.py\", line 438 in main\n"
	"  File \"<frozen runpy>\", line 88 in _run_code\n";

static void a_dump_becomes_a_stack_per_task(void)
{
	struct ploom_dump_task tasks[] = {
		{0x7f0000000001UL, 0}, {0x7f00000000aaUL, 0}, {0x7f00000000ccUL, 0}, {0, 1}};
	struct ploom_buf b = {0};
	struct ploom_err err = {0, ""};
	struct ploom_dump_task short_ident = {0xaa, 0};
	struct ploom_run run;
	const struct ploom_stack *st;
	const char *garbled;

	ploom_enc_stacks(&b, dump, strlen(dump), tasks, 4, 1, "/pkg/ploom/", "/cwd");
	CHECK_STR(b.data, "stack 0 running 1\n"
			  "frame =/cwd/rel/scn.py 0 =scenario\n"
			  "stack 1 running 2\n"
			  "frame =/src/scn.py 11 =_spin\n"
			  "frame =/src/scn.py 20 =outer\n"
			  "stack 2 unstarted 0\n"
			  "stack 3 finished 0\n");
	ploom_buf_release(&b);
	/* a dump the child did not finish: a thread it does not show is unknown */
	ploom_enc_stacks(&b, dump, 120, tasks, 3, 0, NULL, NULL);
	CHECK_STR(b.data, "stack 0 unknown 0\n"
			  "stack 1 running 1\n"
			  "frame =/src/scn.py 11 =_spin\n"
			  "stack 2 unknown 0\n");
	ploom_buf_release(&b);
	/* garbage yields no frame, never a wrong one */
	garbled = "Thread 0xaa\n  File \"x\n  File \"/a\", line 5\n  File \"/a\", line 5 in f";
	ploom_enc_stacks(&b, garbled, strlen(garbled), &short_ident, 1, 1, NULL, NULL);
	CHECK_STR(b.data, "stack 0 running 0\n");
	ploom_buf_release(&b);
	/* bytes a scenario wrote into the dump: what is not UTF-8 becomes
	 * '?', byte by byte, so that the records and the trace are text */
	garbled = "Thread 0xaa\n  File \"/a\xff\xc3\xa9.py\", line 5 in f\xe2\x82\n";
	ploom_enc_stacks(&b, garbled, strlen(garbled), &short_ident, 1, 1, NULL, NULL);
	CHECK_STR(b.data, "stack 0 running 1\nframe =/a?\xc3\xa9.py 5 =f??\n");
	ploom_buf_release(&b);

	/* and the records read back into the outcome of a timeout */
	ploom_enc_exit(&b, "timeout", 0);
	ploom_enc_stacks(&b, dump, strlen(dump), tasks, 4, 1, "/pkg/ploom/", "/cwd");
	ploom_enc_done(&b, 0);
	memset(&run, 0, sizeof(run));
	CHECK_INT(ploom_run_parse_text(&run, b.data, b.len, 500, &err), 0);
	CHECK_INT(run.outcome.kind, PLOOM_OUTCOME_TIMEOUT);
	CHECK_INT(run.outcome.timeout_ms, 500);
	if (CHECK_INT(run.outcome.nstacks, 4)) {
		st = &run.outcome.stacks[1];
		CHECK_INT(st->task, 1);
		CHECK_INT(st->state, PLOOM_STACK_RUNNING);
		CHECK_INT(st->depth, 2);
		CHECK_INT(st->nframes, 2);
		CHECK_STR(st->frames[0].file, "/src/scn.py");
		CHECK_STR(st->frames[0].function, "_spin");
		CHECK_INT(st->frames[0].line, 11);
		CHECK_INT(run.outcome.stacks[0].frames[0].line, 0);
		CHECK_INT(run.outcome.stacks[2].state, PLOOM_STACK_UNSTARTED);
		CHECK_INT(run.outcome.stacks[3].state, PLOOM_STACK_FINISHED);
		CHECK_INT(run.outcome.stacks[3].nframes, 0);
	}
	ploom_run_release(&run);
	ploom_buf_release(&b);

	/* a step limit's: the child dumped them itself as it ended */
	ploom_enc_outcome_step_limit(&b, 50);
	ploom_enc_exit(&b, "code", 0);
	ploom_enc_stacks(&b, dump, strlen(dump), tasks, 4, 1, "/pkg/ploom/", "/cwd");
	ploom_enc_done(&b, 0);
	memset(&run, 0, sizeof(run));
	CHECK_INT(ploom_run_parse_text(&run, b.data, b.len, 500, &err), 0);
	CHECK_INT(run.outcome.kind, PLOOM_OUTCOME_STEP_LIMIT);
	CHECK_INT(run.outcome.limit, 50);
	if (CHECK_INT(run.outcome.nstacks, 4) && CHECK_INT(run.outcome.stacks[1].nframes, 2))
		CHECK_STR(run.outcome.stacks[1].frames[0].function, "_spin");
	ploom_run_release(&run);
	ploom_buf_release(&b);

	/* a child that sent its outcome was not cut by the timeout: no stacks */
	ploom_enc_outcome_pass(&b);
	ploom_enc_exit(&b, "timeout", 0);
	ploom_enc_stack(&b, 0, PLOOM_STACK_FINISHED, 0);
	ploom_enc_done(&b, 0);
	memset(&run, 0, sizeof(run));
	CHECK_INT(ploom_run_parse_text(&run, b.data, b.len, 500, &err), 0);
	CHECK_INT(run.outcome.kind, PLOOM_OUTCOME_PASS);
	CHECK_INT(run.outcome.nstacks, 0);
	ploom_run_release(&run);
	ploom_buf_release(&b);
}

static void a_frame_is_cleaned_and_cut_as_a_label(void)
{
	struct ploom_buf b = {0};
	char fn[300];

	memset(fn, 'f', sizeof(fn));
	ploom_enc_frame(&b, "/a\tb.py", 7, -3, fn, sizeof(fn));
	CHECK(!strncmp(b.data, "frame =/a?b.py 0 =ffff", 22));
	CHECK_INT(b.len, strlen("frame =/a?b.py 0 =") + PLOOM_NAME_MAX + 1);
	ploom_buf_release(&b);
	CHECK_STR(ploom_stack_state_name(PLOOM_STACK_UNKNOWN), "unknown");
	CHECK_INT(ploom_stack_state_parse("unstarted", 9), PLOOM_STACK_UNSTARTED);
	CHECK_INT(ploom_stack_state_parse("running ", 8), -1);
}

/* The worker's `points` line: written and read back whole, however long;
 * a line that is not one is refused, saying why. */
static void a_points_line_round_trips_and_bad_ones_are_refused(void)
{
	static const char *const keys[] = {"mylib.pool:0", "mod:12", "a_b.c_9:999999999"};
	static const struct {
		const char *line;
		const char *msg;
	} bad[] = {
		{"", "bad points list: not 'points N' and a newline"},
		{"points 1 a:1", "bad points list: not 'points N' and a newline"},
		{"points 0\n", "bad points list: not 'points N' and a newline"},
		{"points 100001 a:1\n", "bad points list: not 'points N' and a newline"},
		{"points -1 a:1\n", "bad points list: not 'points N' and a newline"},
		{"pointz 1 a:1\n", "bad points list: not 'points N' and a newline"},
		{"points 2 a:1\n", "bad points list: fewer keys than it counts"},
		{"points 1 a:1 b:2\n", "bad points list: more keys than it counts"},
		{"points 1  a:1\n", "bad points list: an empty key"},
		{"points 1 a:1 \n", "bad points list: an empty key"},
		{"points 1 a,b:1\n", "bad points list: a key holds a byte that no site key does"},
		{"points 1 a:1\n\n", "bad points list: a key holds a byte that no site key does"},
		{"points 1 *\n", "bad points list: a key holds a byte that no site key does"},
	};
	struct ploom_points got;
	struct ploom_err err = {0, ""};
	struct ploom_buf b = {0};
	char **many, line[300];
	size_t i, n = PLOOM_PLAIN_POINTS_MAX, same = 0;

	ploom_enc_points(&b, keys, 3);
	CHECK_STR(b.data, "points 3 mylib.pool:0 mod:12 a_b.c_9:999999999\n");
	if (CHECK_INT(ploom_points_parse(&got, b.data, b.len, &err), 0) && CHECK_INT(got.n, 3)) {
		CHECK_STR(got.keys[0], "mylib.pool:0");
		CHECK_STR(got.keys[2], "a_b.c_9:999999999");
	}
	ploom_points_release(&got);
	ploom_buf_release(&b);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!CHECK_INT(ploom_points_parse(&got, bad[i].line, strlen(bad[i].line), &err), -1))
			printf("  accepted '%s'\n", bad[i].line);
		CHECK_STR(err.msg, bad[i].msg);
		ploom_points_release(&got);
	}
	/* a NUL inside is a byte no key has */
	CHECK_INT(ploom_points_parse(&got, "points 1 a:\0001\n", 14, &err), -1);
	ploom_points_release(&got);
	/* the longest key, and one byte more */
	snprintf(line, sizeof(line), "points 1 %0*d:1\n", PLOOM_POINT_KEY_MAX - 2, 0);
	CHECK_INT(ploom_points_parse(&got, line, strlen(line), &err), 0);
	ploom_points_release(&got);
	snprintf(line, sizeof(line), "points 1 %0*d:1\n", PLOOM_POINT_KEY_MAX - 1, 0);
	CHECK_INT(ploom_points_parse(&got, line, strlen(line), &err), -1);
	CHECK_STR(err.msg, "bad points list: a key longer than any site key");
	ploom_points_release(&got);
	/* the most points a worker takes */
	many = calloc(n, sizeof(*many));
	for (i = 0; many && i < n; i++)
		if (asprintf(&many[i], "module_%zu.sub:%zu", i % 100, i) < 0)
			abort();
	ploom_enc_points(&b, (const char *const *)many, n);
	CHECK(b.len > 1500000);
	if (CHECK_INT(ploom_points_parse(&got, b.data, b.len, &err), 0) && CHECK_INT(got.n, n))
		for (i = 0; i < n; i++)
			same += !strcmp(got.keys[i], many[i]);
	CHECK_INT(same, n);
	ploom_points_release(&got);
	ploom_buf_release(&b);
	for (i = 0; many && i < n; i++)
		free(many[i]);
	free(many);
}

int main(void)
{
	a_dump_becomes_a_stack_per_task();
	a_frame_is_cleaned_and_cut_as_a_label();
	str_round_trips_every_byte();
	str_encodes_space_percent_and_keeps_utf8();
	str_decode_rejects_bad_escapes();
	parse_reads_a_passing_run();
	parse_reads_a_failure();
	parse_reads_a_deadlock_with_its_waits();
	parse_turns_exits_into_outcomes();
	parse_reads_where_a_step_stopped_and_the_names();
	labels_are_bounded();
	a_run_names_at_most_1024_objects();
	parse_rejects_malformed_streams();
	malformed_messages_stay_on_one_line();
	hello_is_parsed_and_error_names_the_target();
	an_error_detail_is_a_json_object();
	op_and_object_names_round_trip();
	conflicts_follow_the_dependence_relation();
	encoded_records_decode_to_what_was_encoded();
	a_long_failure_message_is_cut_and_marked();
	run_commands_round_trip_and_bad_ones_are_refused();
	a_run_command_of_40000_choices_round_trips();
	a_points_line_round_trips_and_bad_ones_are_refused();
	return check_report();
}
