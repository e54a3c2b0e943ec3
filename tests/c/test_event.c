/* Tests of the worker protocol: the str encoding round trip and the
 * parsing of canned record streams, well formed and malformed. */
#include <stdlib.h>
#include <string.h>

#include "../../lib/event.h"
#include "../../lib/worker.h"
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
		"step 0 0 start thread#1 0 -\n"
		"step 1 1 begin - 0,1 -\n"
		"step 2 1 read cell#0 0,1 -\n"
		"value 2 =100\n"
		"step 3 0 acquire lock#0 0,1 nonblocking\n"
		"value 3 =True\n"
		"outcome pass\n"
		"exit code 0\n"
		"output =hi%0A\n"
		"done 4\n";

	CHECK_INT(parse(&run, text, &err), 0);
	CHECK_STR(err.msg, "");
	CHECK_INT(run.nsteps, 4);
	CHECK_INT(run.outcome.kind, PLOOM_OUTCOME_PASS);
	CHECK_STR(run.outcome.summary, "pass");
	CHECK_STR(run.outcome.output, "hi\n");
	CHECK_STR(run.steps[0].op, "start");
	CHECK_STR(run.steps[0].object, "thread#1");
	CHECK(run.steps[1].object == NULL);
	CHECK_STR(run.steps[2].value, "100");
	CHECK_INT(run.steps[3].nonblocking, 1);
	CHECK_INT(run.steps[3].nenabled, 2);
	/* branch points: steps 1, 2, 3; step 1 switches away from task 0 */
	CHECK_INT(run.nchoices, 3);
	CHECK_INT(run.choices[0], 1);
	CHECK_INT(run.choices[2], 0);
	CHECK_INT(run.preemptions, 2);
	ploom_run_release(&run);
}

static void parse_reads_a_failure(void)
{
	struct ploom_err err = {0, ""};
	struct ploom_run run;
	const char *text =
		"step 0 0 read cell#0 0 -\n"
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
		"wait 0 join thread#1 1\n"
		"wait 1 acquire lock#0 2\n"
		"wait 2 acquire lock#1 1\n"
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
	CHECK_INT(parse(&run, "step 0 0 begin - 0 -\nexit signal 11\ndone 1\n", &err), 0);
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
	{"step 0 0 start thread#1 0 -\n", "stopped before the end of the run"},
	{"", "stopped before the end of the run"},
	{"step 0 0 start thread#1 0 -\nexit code 0\ndone 1", "stopped before the end"},
	{"step 1 0 start thread#1 0 -\n", "step out of order"},
	{"step x 0 start thread#1 0 -\n", "bad INDEX"},
	{"step 0 0 start thread#1 0\n", "expected 7 fields"},
	{"step 0 0 fly thread#1 0 -\n", "unknown OP"},
	{"step 0 0 start thread#1 1,2 -\n", "TASK is not enabled"},
	{"step 0 0 start thread#1 2,0 -\n", "bad ENABLED"},
	{"step 0 0 start thread#1 0,,1 -\n", "bad ENABLED"},
	{"step 0 0 start thread#1 0 blocking\n", "bad FLAGS"},
	{"step 0  0 start thread#1 0 -\n", "bad field separators"},
	{"value 0 =1\n", "bad INDEX"},
	{"step 0 0 read cell#0 0 -\nvalue 0 1\n", "bad TEXT"},
	{"step 0 0 read cell#0 0 -\nvalue 0 =1\nvalue 0 =2\n", "second value"},
	{"outcome maybe\n", "unknown outcome"},
	{"outcome pass\noutcome pass\n", "second outcome"},
	{"outcome failure 0 =T =M\n", "expected 6 fields"},
	{"outcome failure 0 =T =M =%ZZ\n", "bad str field"},
	{"wait 0 join thread#1 1\n", "wait outside a deadlock"},
	{"exit sometimes 0\n", "bad HOW"},
	{"done 0\n", "run without outcome or exit"},
	{"outcome pass\nexit code 0\ndone 2\n", "step count differs"},
	{"hello 1\n", "unknown record"},
	{"outcome pass\nexit code 0\ndone 0\nstep 0 0 begin - 0 -\n", "data after the end"},
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

static void malformed_messages_stay_on_one_line(void)
{
	struct ploom_err err = {0, ""};
	struct ploom_run run;

	parse(&run, "step 0 0 \x01\x02 thread#1 0 -\n", &err);
	CHECK(strchr(err.msg, '\x01') == NULL);
	CHECK(strstr(err.msg, "malformed record from the worker: 'step 0 0 ??") != NULL);
	ploom_run_release(&run);
}

static void hello_is_parsed_and_error_names_the_target(void)
{
	struct ploom_err err = {0, ""};
	struct ploom_hello h;
	const char *line = "hello 1 =cpython =3.13.0 1 =0 =examples.bank_account =scenario "
			   "=/src/examples/bank_account.py";
	const char *bad = "error load =No%20module%20named%20'nosuch'";

	memset(&h, 0, sizeof(h));
	CHECK_INT(ploom_hello_parse(&h, line, strlen(line), "x:y", &err), 0);
	CHECK_STR(h.implementation, "cpython");
	CHECK_STR(h.python_version, "3.13.0");
	CHECK_INT(h.gil, 1);
	CHECK_STR(h.module, "examples.bank_account");
	CHECK_STR(h.file, "/src/examples/bank_account.py");
	ploom_hello_release(&h);
	CHECK_INT(ploom_hello_parse(&h, bad, strlen(bad), "nosuch:f", &err), -1);
	CHECK_INT(err.code, 2);
	CHECK_STR(err.msg, "cannot load scenario 'nosuch:f': No module named 'nosuch'");
	ploom_hello_release(&h);
	line = "hello 2 =cpython =3.13.0 1 =0 =m =q =";
	CHECK_INT(ploom_hello_parse(&h, line, strlen(line), "m:q", &err), -1);
	CHECK_STR(err.msg, "the worker speaks protocol version 2 (this ploom speaks 1)");
	ploom_hello_release(&h);
}

int main(void)
{
	str_round_trips_every_byte();
	str_encodes_space_percent_and_keeps_utf8();
	str_decode_rejects_bad_escapes();
	parse_reads_a_passing_run();
	parse_reads_a_failure();
	parse_reads_a_deadlock_with_its_waits();
	parse_turns_exits_into_outcomes();
	parse_rejects_malformed_streams();
	malformed_messages_stay_on_one_line();
	hello_is_parsed_and_error_names_the_target();
	return check_report();
}
