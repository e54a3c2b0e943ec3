/* Tests of the trace renderer: the header, the table's columns and marks,
 * each outcome, cutting and sanitising, colour, write errors, and a large
 * trace. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/event.h"
#include "../../lib/format.h"
#include "../../lib/format/html.h"
#include "../../lib/json.h"
#include "../../lib/format/render.h"
#include "../../lib/trace.h"
#include "bigtrace.h"
#include "check.h"

/* A trace of the bank's failure, minimized: STEPS and OUTCOME are
 * spliced in by trace_of(). */
static const char head[] =
	"{\"format\": \"ploom-trace\", \"version\": 2, \"id\": \"a572433ef5eb57f2\",\n"
	" \"scenario\": {\"target\": \"/src/bank.py:scenario\", \"module\": \"bank\",\n"
	"              \"qualname\": \"scenario\", \"file\": \"/src/bank.py\"},\n"
	" \"fingerprints\": [{\"path\": \"/src/bank.py\",\n"
	"                   \"blob\": \"1a2b3c4d5e6f708192a3b4c5d6e7f80912a3b4c5\"}],\n"
	" \"python\": {\"implementation\": \"cpython\", \"version\": \"3.13.0\", \"gil\": true},\n"
	" \"hash_seed\": \"0\",\n"
	" \"config\": {\"max_preemptions\": null, \"reduction\": \"none\", \"max_steps\": 10000,\n"
	"            \"schedule_timeout_s\": 10, \"timeouts\": \"idle\"},\n"
	" \"choices\": [], \"preemptions\": 1, \"minimized_from\": 2,\n";

static const char bank_steps[] =
	" \"steps\": [\n"
	"  {\"index\": 0, \"task\": 0, \"op\": \"start\", \"object\": \"thread#1\", \"enabled\": [0]},\n"
	"  {\"index\": 1, \"task\": 0, \"op\": \"start\", \"object\": \"thread#2\", \"enabled\": [0, 1]},\n"
	"  {\"index\": 2, \"task\": 1, \"op\": \"begin\", \"object\": null, \"enabled\": [1, 2]},\n"
	"  {\"index\": 3, \"task\": 1, \"op\": \"read\", \"object\": \"cell#0\", \"enabled\": [1, 2],"
	" \"value\": \"100\"},\n"
	"  {\"index\": 4, \"task\": 2, \"op\": \"begin\", \"object\": null, \"enabled\": [1, 2]},\n"
	"  {\"index\": 5, \"task\": 2, \"op\": \"read\", \"object\": \"cell#0\", \"enabled\": [1, 2],"
	" \"value\": \"100\"},\n"
	"  {\"index\": 6, \"task\": 2, \"op\": \"write\", \"object\": \"cell#0\", \"enabled\": [1, 2],"
	" \"value\": \"0\"},\n"
	"  {\"index\": 7, \"task\": 0, \"op\": \"read\", \"object\": \"cell#0\", \"enabled\": [0],"
	" \"value\": \"-100\"}],\n";

static const char bank_failure[] =
	" \"outcome\": {\"kind\": \"failure\", \"summary\": \"builtins.AssertionError: overdrawn\",\n"
	"  \"task\": 0, \"exception\": {\"type\": \"builtins.AssertionError\", \"message\": \"overdrawn\"},\n"
	"  \"traceback\": \"Traceback (most recent call last):\\n  File \\\"/src/bank.py\\\"\\n"
	"AssertionError: overdrawn\\n\"}}\n";

/* The same failure as the bank's example records it now: names, and
 * where each step stopped. */
#define W(line, fn) ", \"where\": {\"file\": \"examples/bank.py\", \"line\": " #line \
		    ", \"function\": \"" fn "\"}"
static const char bank_named_steps[] =
	" \"tasks\": [{\"id\": 0, \"name\": \"MainThread\"}, {\"id\": 1, \"name\": \"mathieu\"},"
	" {\"id\": 2, \"name\": \"lucas\"}],\n"
	" \"objects\": [{\"object\": \"cell#0\", \"name\": \"balance\"}],\n"
	" \"steps\": [\n"
	"  {\"index\": 0, \"task\": 0, \"op\": \"start\", \"object\": \"thread#1\", \"enabled\": [0]"
	W(26, "scenario") "},\n"
	"  {\"index\": 1, \"task\": 0, \"op\": \"start\", \"object\": \"thread#2\", \"enabled\": [0, 1]"
	W(27, "scenario") "},\n"
	"  {\"index\": 2, \"task\": 1, \"op\": \"begin\", \"object\": null, \"enabled\": [1, 2]"
	W(20, "withdraw") "},\n"
	"  {\"index\": 3, \"task\": 1, \"op\": \"read\", \"object\": \"cell#0\", \"enabled\": [1, 2],"
	" \"value\": \"100\"" W(21, "withdraw") "},\n"
	"  {\"index\": 4, \"task\": 2, \"op\": \"begin\", \"object\": null, \"enabled\": [1, 2]"
	W(20, "withdraw") "},\n"
	"  {\"index\": 5, \"task\": 2, \"op\": \"read\", \"object\": \"cell#0\", \"enabled\": [1, 2],"
	" \"value\": \"100\"" W(21, "withdraw") "},\n"
	"  {\"index\": 6, \"task\": 2, \"op\": \"read\", \"object\": \"cell#0\", \"enabled\": [1, 2],"
	" \"value\": \"100\"" W(22, "withdraw") "},\n"
	"  {\"index\": 7, \"task\": 2, \"op\": \"write\", \"object\": \"cell#0\", \"enabled\": [1, 2],"
	" \"value\": \"0\"" W(22, "withdraw") "},\n"
	"  {\"index\": 8, \"task\": 1, \"op\": \"read\", \"object\": \"cell#0\", \"enabled\": [1],"
	" \"value\": \"0\"" W(22, "withdraw") "},\n"
	"  {\"index\": 9, \"task\": 1, \"op\": \"write\", \"object\": \"cell#0\", \"enabled\": [1],"
	" \"value\": \"-100\"" W(22, "withdraw") "},\n"
	"  {\"index\": 10, \"task\": 0, \"op\": \"join\", \"object\": \"thread#1\", \"enabled\": [0]"
	W(28, "scenario") "},\n"
	"  {\"index\": 11, \"task\": 0, \"op\": \"join\", \"object\": \"thread#2\", \"enabled\": [0]"
	W(29, "scenario") "},\n"
	"  {\"index\": 12, \"task\": 0, \"op\": \"read\", \"object\": \"cell#0\", \"enabled\": [0],"
	" \"value\": \"-100\"" W(30, "scenario") "}],\n";
#undef W

static struct ploom_trace *trace_of(const char *steps, const char *outcome)
{
	struct ploom_trace *t = NULL;
	struct ploom_err err = {0, ""};
	char *text = NULL;

	if (asprintf(&text, "%s%s%s", head, steps, outcome) < 0)
		return NULL;
	if (ploom_trace_parse(&t, text, strlen(text), &err) < 0)
		printf("trace_of: %s\n", err.msg);
	free(text);
	return t;
}

/* The rendering as a string (the caller frees it), NULL on error. */
static char *render(const struct ploom_trace *t, int color, int width)
{
	struct ploom_render_opts opts = {color, width, NULL};
	struct ploom_err err = {0, ""};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc;

	if (!f)
		return NULL;
	rc = ploom_render_trace(f, t, &opts, &err);
	fclose(f);
	if (rc < 0) {
		printf("render: %s\n", err.msg);
		free(buf);
		return NULL;
	}
	return buf;
}

/* 1 if text holds the whole line (between newlines). */
static int has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	const char *p = text;

	while ((p = strstr(p, line))) {
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return 1;
		p++;
	}
	return 0;
}

/* The column (from the line's start) where needle starts in the first
 * line that holds it, or -1. */
static long column_in_line(const char *text, const char *needle)
{
	const char *p = strstr(text, needle), *bol;

	if (!p)
		return -1;
	for (bol = p; bol > text && bol[-1] != '\n'; bol--)
		;
	return (long)(p - bol);
}

static int no_line_ends_in_a_space(const char *text)
{
	return !strstr(text, " \n");
}

static void failure_shows_header_table_marks_and_exception(void)
{
	struct ploom_trace *t = trace_of(bank_steps, bank_failure);
	char *out = render(t, 0, 0);

	CHECK(out);
	if (!out)
		return;
	CHECK(has_line(out, "scenario     bank:scenario"));
	CHECK(has_line(out, "target       /src/bank.py:scenario"));
	CHECK(has_line(out, "source       /src/bank.py (blob 1a2b3c4)"));
	CHECK(has_line(out, "python       cpython 3.13.0, GIL enabled"));
	CHECK(has_line(out, "hash seed    0"));
	CHECK(has_line(out, "config       reduction none, max_preemptions none, max_steps 10000, "
			    "schedule_timeout 10 s"));
	CHECK(has_line(out, "id           a572433ef5eb57f2"));
	CHECK(has_line(out, "preemptions  1 (minimized from 2)"));
	CHECK(has_line(out, "outcome      builtins.AssertionError: overdrawn"));
	/* the closest race before the failing step, which reads the cell;
	 * a trace that knows no places shows none */
	CHECK(has_line(out, "race         thread#2 wrote cell#0 before MainThread read it"));
	/* columns by the tasks' names, task 0 the main thread's; a race tag
	 * column, and no place column */
	CHECK(has_line(out, "      step  MainThread           thread#1            thread#2"));
	CHECK(has_line(out, "   -------  -------------------  ------------------  ------------------"));
	CHECK(has_line(out, "         0  start thread#1"));
	CHECK(has_line(out, "   a     3                       read cell#0 -> 100"));
	/* step 4 switches from task 1, still enabled, to task 2 */
	CHECK(has_line(out, "*        4                                           begin"));
	/* one step in two races */
	CHECK(has_line(out, "   ab    6                                           write cell#0 -> 0"));
	/* task 0 raised after its last step */
	CHECK(has_line(out, " ! b     7  read cell#0 -> -100"));
	CHECK(has_line(out, "* preemption: a switch away from a task that could have continued"));
	CHECK(has_line(out, "! the failing step: the last step of the task that raised"));
	CHECK(has_line(out, "a-b racing pairs: steps of two tasks on one object that another "
			    "schedule could run in the other order; b is the race above"));
	CHECK(!strstr(out, "where"));
	CHECK(has_line(out, "failure: task 0 raised builtins.AssertionError: overdrawn"));
	CHECK(has_line(out, "  File \"/src/bank.py\""));
	CHECK(has_line(out, "AssertionError: overdrawn"));
	CHECK(no_line_ends_in_a_space(out));
	CHECK(!strchr(out, '\033'));
	free(out);
	ploom_trace_free(t);
}

/* A trace that knows its repository shows the relative path, the commit
 * and whether the file differed from it; the absolute path stays on the
 * "replay runs" line. */
static void the_source_line_shows_the_path_in_its_repository(void)
{
	struct ploom_trace *t = trace_of(bank_steps, bank_failure);
	char *out;

	t->scenario.relpath = strdup("examples/bank.py");
	t->fingerprints[0].relpath = strdup("examples/bank.py");
	t->source.root = strdup("repository");
	t->source.commit = strdup("89abcdef0123456789abcdef0123456789abcdef");
	t->source.dirty = 1;
	out = render(t, 0, 0);
	CHECK(has_line(out, "source       examples/bank.py (blob 1a2b3c4) at commit 89abcde, dirty"));
	CHECK(has_line(out, "replay runs  scenario in /src/bank.py, only while its blob is 1a2b3c4"));
	free(out);

	t->source.dirty = 0;
	free(t->source.commit);
	t->source.commit = NULL;
	out = render(t, 0, 0);
	CHECK(has_line(out, "source       examples/bank.py (blob 1a2b3c4) at an unborn HEAD"));
	free(out);

	free(t->source.root);
	t->source.root = strdup("folder");
	free(t->scenario.relpath);
	t->scenario.relpath = strdup("bank.py");
	out = render(t, 0, 0);
	CHECK(has_line(out, "source       bank.py (blob 1a2b3c4) in its folder"));
	free(out);

	free(t->source.root);
	t->source.root = strdup("project");
	free(t->scenario.relpath);
	t->scenario.relpath = strdup("tests/bank.py");
	out = render(t, 0, 0);
	CHECK(has_line(out, "source       tests/bank.py (blob 1a2b3c4) in its project"));
	free(out);
	ploom_trace_free(t);
}

/* Names in the header and the cells, where each step stopped at the
 * right, and the racing pairs: the lost update explained above. */
static void names_places_and_races_are_shown(void)
{
	struct ploom_trace *t = trace_of(bank_named_steps, bank_failure);
	char *out = render(t, 0, 0);
	/* the where column wraps to end the lines at 100 characters, at the
	 * space before the function */
#define CONT "                                                                              "
	static const char *const table[] = {
		"race         mathieu read balance (examples/bank.py:21) before lucas wrote it (examples/bank.py:22)",
		"",
		"      step  MainThread            mathieu                lucas                where",
		"   -------  --------------------  ---------------------  -------------------  "
		"-------------------",
		"         0  start mathieu                                                     "
		"examples/bank.py:26",
		CONT "scenario",
		"         1  start lucas                                                       "
		"examples/bank.py:27",
		CONT "scenario",
		"         2                        begin                                       "
		"examples/bank.py:20",
		CONT "withdraw",
		"   a     3                        read balance -> 100                         "
		"examples/bank.py:21",
		CONT "withdraw",
		"*        4                                               begin                "
		"examples/bank.py:20",
		CONT "withdraw",
		"         5                                               read balance -> 100  "
		"examples/bank.py:21",
		CONT "withdraw",
		"         6                                               read balance -> 100  "
		"examples/bank.py:22",
		CONT "withdraw",
		"   ab    7                                               write balance -> 0   "
		"examples/bank.py:22",
		CONT "withdraw",
		"   b     8                        read balance -> 0                           "
		"examples/bank.py:22",
		CONT "withdraw",
		"         9                        write balance -> -100                       "
		"examples/bank.py:22",
		CONT "withdraw",
		"        10  join mathieu                                                      "
		"examples/bank.py:28",
		CONT "scenario",
		"        11  join lucas                                                        "
		"examples/bank.py:29",
		CONT "scenario",
		" !      12  read balance -> -100                                              "
		"examples/bank.py:30",
		CONT "scenario",
		"",
		"* preemption: a switch away from a task that could have continued",
		"! the failing step: the last step of the task that raised",
		"a-b racing pairs: steps of two tasks on one object that another schedule could run "
		"in the other order; a is the race above",
		"",
		"failure: task 0 raised builtins.AssertionError: overdrawn",
	};
#undef CONT
	struct ploom_buf want = {0};
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		ploom_buf_addf(&want, "%s\n", table[i]);
	CHECK(out && strstr(out, want.data));
	if (out && !strstr(out, want.data))
		printf("  got:\n%s", out);
	CHECK(out && no_line_ends_in_a_space(out));
	ploom_buf_release(&want);
	free(out);

	/* a name that is not the object's only one says whose; a name's
	 * control characters are shown as '?' */
	ploom_run_set_name(&t->run, (struct ploom_obj){PLOOM_OBJ_CELL, 4}, "balance", NULL);
	ploom_run_set_name(&t->run, (struct ploom_obj){PLOOM_OBJ_THREAD, 2}, "lu\ncas", NULL);
	out = render(t, 0, 0);
	CHECK(out && strstr(out, "  read balance (cell#0) -> 100  "));
	CHECK(out && has_line(out, "      step  MainThread                     mathieu        "
				   "                 lu?cas                        where"));
	CHECK(out && has_line(out, "race         mathieu read balance (cell#0) (examples/bank.py:21) before "
				   "lu?cas wrote it (examples/bank.py:22)"));
	free(out);
	ploom_trace_free(t);
}

/* After a deadlock, the blocked operations race too: the wait row has
 * their tags, and the waits their places. */
static void a_deadlock_explains_the_acquires_that_won(void)
{
	static const char steps[] =
		" \"tasks\": [{\"id\": 1, \"name\": \"mathieu\"}, {\"id\": 2, \"name\": \"lucas\"}],\n"
		" \"objects\": [{\"object\": \"lock#0\", \"name\": \"a\"},"
		" {\"object\": \"lock#1\", \"name\": \"b\"}],\n"
		" \"steps\": [\n"
		"  {\"index\": 0, \"task\": 0, \"op\": \"start\", \"object\": \"thread#1\", \"enabled\": [0]},\n"
		"  {\"index\": 1, \"task\": 0, \"op\": \"start\", \"object\": \"thread#2\", \"enabled\": [0]},\n"
		"  {\"index\": 2, \"task\": 1, \"op\": \"begin\", \"object\": null, \"enabled\": [0, 1, 2]},\n"
		"  {\"index\": 3, \"task\": 1, \"op\": \"acquire\", \"object\": \"lock#0\","
		" \"enabled\": [0, 1, 2], \"where\": {\"file\": \"/src/t.py\", \"line\": 6,"
		" \"function\": \"one\"}},\n"
		"  {\"index\": 4, \"task\": 2, \"op\": \"begin\", \"object\": null, \"enabled\": [0, 1, 2]},\n"
		"  {\"index\": 5, \"task\": 2, \"op\": \"acquire\", \"object\": \"lock#1\","
		" \"enabled\": [0, 1, 2], \"where\": {\"file\": \"/src/t.py\", \"line\": 11,"
		" \"function\": \"two\"}}],\n";
	static const char deadlock[] =
		" \"outcome\": {\"kind\": \"deadlock\", \"summary\": \"deadlock: ...\", \"waits\": [\n"
		"  {\"task\": 0, \"op\": \"join\", \"object\": \"thread#1\", \"holder\": 1},\n"
		"  {\"task\": 1, \"op\": \"acquire\", \"object\": \"lock#1\", \"holder\": 2,"
		" \"where\": {\"file\": \"/src/t.py\", \"line\": 7, \"function\": \"one\"}},\n"
		"  {\"task\": 2, \"op\": \"acquire\", \"object\": \"lock#0\", \"holder\": 1,"
		" \"where\": {\"file\": \"/src/t.py\", \"line\": 12, \"function\": \"two\"}}]}}\n";
	struct ploom_trace *t = trace_of(steps, deadlock);
	char *out = render(t, 0, 0);

	CHECK(out);
	if (!out)
		goto done;
	CHECK(has_line(out, "race         lucas acquired b (t.py:11) before mathieu could acquire "
			    "it (t.py:7)"));
	CHECK(has_line(out, "   a     3                         acquire a                         "
			    "                                    t.py:6 one"));
	CHECK(has_line(out, "   b     5                                                           "
			    "acquire b                           t.py:11 two"));
	/* a step that stopped nowhere known has nothing at the right */
	CHECK(has_line(out, "         1  start lucas"));
	CHECK(has_line(out, " ! ab wait  waits to join mathieu  waits to acquire b held by lucas  "
			    "waits to acquire a held by mathieu"));
	CHECK(has_line(out, "a-b racing pairs: steps of two tasks on one object that another "
			    "schedule could run in the other order; b is the race above"));
	CHECK(has_line(out, "  task 1 (mathieu) waits to acquire b held by task 2 (lucas) at "
			    "t.py:7 one"));
	CHECK(has_line(out, "  task 0 waits to join mathieu"));
	CHECK(no_line_ends_in_a_space(out));
done:
	free(out);
	ploom_trace_free(t);
}

static void cells_sit_under_their_task_header(void)
{
	struct ploom_trace *t = trace_of(bank_steps, bank_failure);
	char *out = render(t, 0, 0);
	const char *table;

	CHECK(out);
	if (!out)
		return;
	/* from the table on: the race line above names tasks too */
	table = strstr(out, "      step");
	CHECK(table != NULL);
	if (!table)
		goto done;
	CHECK_INT(column_in_line(table, "start thread#1"), column_in_line(table, "MainThread"));
	CHECK_INT(column_in_line(table, "read cell#0 -> 100"), column_in_line(table, "thread#1"));
	CHECK_INT(column_in_line(table, "write cell#0 -> 0"), column_in_line(table, "thread#2"));
	/* step numbers are right-aligned under "step" */
	CHECK_INT(column_in_line(table, "0  start thread#1"), column_in_line(table, "step") + 3);
done:
	free(out);
	ploom_trace_free(t);
}

static void long_values_are_cut_with_dots(void)
{
	static const char steps[] =
		" \"steps\": [\n"
		"  {\"index\": 0, \"task\": 0, \"op\": \"write\", \"object\": \"cell#0\", \"enabled\": [0],"
		" \"value\": \"'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'\"},\n"
		"  {\"index\": 1, \"task\": 0, \"op\": \"acquire\", \"object\": \"lock#0\", \"enabled\": [0],"
		" \"blocking\": false, \"value\": \"False\"},\n"
		"  {\"index\": 2, \"task\": 0, \"op\": \"read\", \"object\": \"cell#1\", \"enabled\": [0],"
		" \"value\": \"'\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9'\"},\n"
		"  {\"index\": 3, \"task\": 0, \"op\": \"acquire\", \"object\": \"lock#1\", \"enabled\": [0],"
		" \"blocking\": true, \"timeout\": true, \"value\": \"False\"},\n"
		"  {\"index\": 4, \"task\": 0, \"op\": \"join\", \"object\": \"thread#1\", \"enabled\": [0],"
		" \"timeout\": true}],\n";
	static const char pass[] = " \"outcome\": {\"kind\": \"pass\", \"summary\": \"pass\"}}\n";
	struct ploom_trace *t = trace_of(steps, pass);
	char *out = render(t, 0, 0), *wide = render(t, 0, 80);

	CHECK(out && wide);
	if (!out || !wide)
		goto done;
	/* 28 wide: "write cell#0 -> " and 12 characters of the value */
	CHECK(has_line(out, "      0  write cell#0 -> 'xxxxxxxx..."));
	/* the operation is never cut, the value keeps at least 8 characters */
	CHECK(has_line(out, "      1  acquire lock#0 (nonblocking) -> False"));
	CHECK(has_line(out, "      3  acquire lock#1 (timeout) -> False"));
	CHECK(has_line(out, "      4  join thread#1 (timeout)"));
	/* cut after whole UTF-8 characters, counted as one column each */
	CHECK(has_line(out, "      2  read cell#1 -> '\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
			    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9..."));
	CHECK(has_line(wide, "      0  write cell#0 -> "
			     "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'"));
	CHECK(has_line(out, "pass: every task finished"));
	/* no mark, so no legend */
	CHECK(!strstr(out, "preemption:"));
done:
	free(out);
	free(wide);
	ploom_trace_free(t);
}

static void a_deadlock_adds_a_wait_row_and_lists_the_waits(void)
{
	static const char steps[] =
		" \"steps\": [\n"
		"  {\"index\": 0, \"task\": 0, \"op\": \"start\", \"object\": \"thread#1\", \"enabled\": [0]},\n"
		"  {\"index\": 1, \"task\": 1, \"op\": \"acquire\", \"object\": \"lock#0\", \"enabled\": [0, 1],"
		" \"blocking\": true}],\n";
	static const char deadlock[] =
		" \"outcome\": {\"kind\": \"deadlock\", \"summary\": \"deadlock: ...\", \"waits\": [\n"
		"  {\"task\": 0, \"op\": \"join\", \"object\": \"thread#1\", \"holder\": 1},\n"
		"  {\"task\": 1, \"op\": \"acquire\", \"object\": \"lock#0\", \"holder\": 1}]}}\n";
	struct ploom_trace *t = trace_of(steps, deadlock);
	char *out = render(t, 0, 0);

	CHECK(out);
	if (!out)
		goto done;
	CHECK(has_line(out, "*     1                          acquire lock#0"));
	CHECK(has_line(out, " ! wait  waits to join thread#1  waits to acquire lock#0 held by thread#1 "
			    "itself"));
	CHECK(has_line(out, "! wait: what each blocked task waits for (the deadlock)"));
	CHECK(has_line(out, "deadlock: no task can run"));
	CHECK(has_line(out, "  task 0 waits to join thread#1"));
	CHECK(has_line(out, "  task 1 waits to acquire lock#0 held by task 1 itself; no other task can "
			       "release it"));
	CHECK(no_line_ends_in_a_space(out));
done:
	free(out);
	ploom_trace_free(t);
}

/* A timeout of a pool of 250 threads that never started lists them on one
 * line, not one each, beside the task that ran; as many that had
 * finished likewise, at the place of the first of them. */
static void a_timeout_folds_the_tasks_that_had_not_started(void)
{
	static const char steps[] =
		" \"steps\": [\n"
		"  {\"index\": 0, \"task\": 0, \"op\": \"start\", \"object\": \"thread#1\", \"enabled\": [0]}],\n";
	static const char pass[] = " \"outcome\": {\"kind\": \"pass\", \"summary\": \"pass\"}}\n";
	struct ploom_trace *t = trace_of(steps, pass);
	struct ploom_outcome *o;
	char *out = NULL;
	size_t i, n = 256;

	if (!CHECK(t))
		return;
	o = &t->run.outcome;
	o->kind = PLOOM_OUTCOME_TIMEOUT;
	o->stacks = calloc(n, sizeof(*o->stacks));
	if (!CHECK(o->stacks))
		goto done;
	o->nstacks = n;
	/* task 0 running, 1-250 unstarted, 251-255 finished */
	for (i = 0; i < n; i++) {
		o->stacks[i].task = (int)i;
		o->stacks[i].state = !i ? PLOOM_STACK_RUNNING
				     : i <= 250 ? PLOOM_STACK_UNSTARTED : PLOOM_STACK_FINISHED;
	}
	out = render(t, 0, 0);
	if (!CHECK(out))
		goto done;
	CHECK(has_line(out, "  MainThread was in no Python code"));
	CHECK(has_line(out, "  thread#1, thread#2, thread#3 and 247 more had not run yet"));
	CHECK(has_line(out, "  thread#251, thread#252, thread#253 and 2 more had finished"));
	CHECK(!strstr(out, "thread#4 had not run yet"));
	CHECK(!strstr(out, "thread#254 had finished"));
done:
	free(out);
	ploom_trace_free(t);
}

/* A Condition's wait that no notify can end is told as one, by the wait's
 * own record (its "for" and "on"), the same in the summary, the text, the
 * page and the lane's cell; a free lock of a primitive's wait likewise. */
static void a_wait_for_a_notify_or_a_state_is_told_as_one_everywhere(void)
{
	static const char steps[] =
		" \"steps\": [\n"
		"  {\"index\": 0, \"task\": 0, \"op\": \"start\", \"object\": \"thread#1\", \"enabled\": [0]},\n"
		"  {\"index\": 1, \"task\": 1, \"op\": \"begin\", \"object\": null, \"enabled\": [0, 1]}],\n";
	static const char deadlock[] =
		" \"outcome\": {\"kind\": \"deadlock\", \"summary\": \"deadlock: ...\", \"waits\": [\n"
		"  {\"task\": 0, \"op\": \"acquire\", \"object\": \"lock#5\", \"holder\": -1,"
		" \"for\": \"notify\", \"on\": \"ThreadingFuture._condition\"},\n"
		"  {\"task\": 1, \"op\": \"acquire\", \"object\": \"lock#2\", \"holder\": -1,"
		" \"for\": \"state\", \"on\": \"jobs.not_empty\"}]}}\n";
	static const char cond[] = "waits on ThreadingFuture._condition (a Condition); no task can "
				   "notify it";
	static const char state[] = "waits on jobs.not_empty for the state its lock guards; no task "
				    "can change it";
	struct ploom_trace *t = trace_of(steps, deadlock);
	struct ploom_err err = {0, ""};
	char *out = render(t, 0, 0), *summary = NULL, *page = NULL, *line = NULL;
	size_t len = 0;
	FILE *f = NULL;

	if (!CHECK(out && t))
		goto done;
	summary = ploom_outcome_summary(&t->run.outcome);
	CHECK(summary && strstr(summary, cond) && strstr(summary, state));
	CHECK(summary && !strstr(summary, "free"));
	CHECK(asprintf(&line, "  task 0 %s", cond) > 0 && has_line(out, line));
	free(line);
	CHECK(asprintf(&line, "  task 1 %s", state) > 0 && has_line(out, line));
	CHECK(strstr(out, "  waits on ThreadingFuture._condition (a Condition)  "));
	CHECK(!strstr(out, "acquire lock#5"));
	f = open_memstream(&page, &len);
	if (CHECK(f) && CHECK_INT(ploom_html_write(f, t, &err), 0) && CHECK_INT(fclose(f), 0)) {
		f = NULL;
		CHECK(strstr(page, cond) && strstr(page, state));
		CHECK(strstr(page, ">waits on ThreadingFuture._condition"));
	}
	if (f)
		fclose(f);
done:
	free(line);
	free(summary);
	free(page);
	free(out);
	ploom_trace_free(t);
}

static void every_outcome_kind_ends_the_rendering(void)
{
	static const char one_step[] =
		" \"steps\": [{\"index\": 0, \"task\": 0, \"op\": \"yield_now\", \"object\": null,"
		" \"enabled\": [0]}],\n";
	static const struct {
		const char *outcome, *last_line;
	} cases[] = {
		{" \"outcome\": {\"kind\": \"crash\", \"summary\": \"crash: killed by signal 6 (SIGABRT)\","
		 " \"signal\": 6}}", "crash: killed by signal 6 (SIGABRT)"},
		{" \"outcome\": {\"kind\": \"exit\", \"summary\": \"exit: the scenario exited with status 3\","
		 " \"status\": 3}}", "exit: the scenario exited with status 3"},
		{" \"outcome\": {\"kind\": \"timeout\", \"summary\": \"timeout: the schedule ran longer than"
		 " 10 s\"}}", "timeout: the schedule ran longer than 10 s"},
		{" \"outcome\": {\"kind\": \"step-limit\", \"summary\": \"step-limit: the schedule reached 1"
		 " steps\", \"limit\": 1}}", "step-limit: the schedule reached 1 steps"},
		{" \"outcome\": {\"kind\": \"divergence\", \"summary\": \"divergence: x\", \"step\": 1,"
		 " \"message\": \"choice 0 asks for task 7\"}}",
		 "divergence at step 1: choice 0 asks for task 7"},
		{" \"outcome\": {\"kind\": \"pass\", \"summary\": \"pass\", \"output\": \"hi\\nthere\"}}",
		 "  there"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ploom_trace *t = trace_of(one_step, cases[i].outcome);
		char *out = t ? render(t, 0, 0) : NULL;
		size_t n = out ? strlen(out) : 0;

		CHECK(out);
		if (out) {
			CHECK(n > 0 && out[n - 1] == '\n');
			if (n > 0)
				out[n - 1] = '\0';
			CHECK_STR(strrchr(out, '\n') + 1, cases[i].last_line);
			/* a crash, an exit or a timeout marks the last step */
			if (i < 3)
				CHECK(has_line(out, " !    0  yield_now"));
			else
				CHECK(has_line(out, "      0  yield_now"));
		}
		free(out);
		ploom_trace_free(t);
	}
}

static void control_characters_are_shown_as_question_marks(void)
{
	static const char steps[] =
		" \"steps\": [{\"index\": 0, \"task\": 0, \"op\": \"read\", \"object\": \"cell#0\","
		" \"enabled\": [0], \"value\": \"a\\u001b[31mb\\nc\"}],\n";
	static const char failure[] =
		" \"outcome\": {\"kind\": \"failure\", \"summary\": \"T: \\u001b]0;x\\u0007\",\n"
		"  \"task\": 0, \"exception\": {\"type\": \"T\", \"message\": \"two\\nlines\\u001b\"}}}\n";
	struct ploom_trace *t = trace_of(steps, failure);
	char *out = render(t, 0, 0);

	CHECK(out);
	if (!out)
		goto done;
	CHECK(!strchr(out, '\033'));
	CHECK(!strchr(out, '\a'));
	CHECK(has_line(out, " !    0  read cell#0 -> a?[31mb?c"));
	CHECK(has_line(out, "outcome      T: ?]0;x?"));
	CHECK(has_line(out, "failure: task 0 raised T: two"));
	CHECK(has_line(out, "lines?"));
done:
	free(out);
	ploom_trace_free(t);
}

/* C1 controls (U+009B is a terminal's one-byte CSI) and the
 * bidirectional controls that reorder text are shown as '?' too, in the
 * table, the header and the one-line messages of the utilities. */
static void c1_and_bidi_controls_are_shown_as_question_marks(void)
{
	static const char steps[] =
		" \"steps\": [{\"index\": 0, \"task\": 0, \"op\": \"read\", \"object\": \"cell#0\","
		" \"enabled\": [0], \"value\": \"a\\u009b31mb\\u202ec\\u2066d\\u00e9\"}],\n";
	static const char failure[] =
		" \"outcome\": {\"kind\": \"failure\", \"summary\": \"T: x\\u200fy\\u061cz\",\n"
		"  \"task\": 0, \"exception\": {\"type\": \"T\", \"message\": \"x\\u200fy\\u061cz\"}}}\n";
	struct ploom_trace *t = trace_of(steps, failure);
	char *out = render(t, 0, 0), *msg = NULL;
	size_t len = 0;
	FILE *f;

	CHECK(out);
	if (!out)
		goto done;
	CHECK(!strstr(out, "\xc2\x9b"));
	CHECK(!strstr(out, "\xe2\x80\xae"));
	CHECK(has_line(out, " !    0  read cell#0 -> a?31mb?c?d\xc3\xa9"));
	CHECK(has_line(out, "outcome      T: x?y?z"));
	f = open_memstream(&msg, &len);
	CHECK(f != NULL);
	if (f) {
		ploom_put_printable(f, "a\xc2\x9b" "b\xe2\x81\xa9" "c\x1b" "d\xe2\x80\x94");
		fclose(f);
		CHECK_STR(msg, "a?b?c?d\xe2\x80\x94");
	}
done:
	free(msg);
	free(out);
	ploom_trace_free(t);
}

static void color_is_only_there_when_asked(void)
{
	struct ploom_trace *t = trace_of(bank_steps, bank_failure);
	char *plain = render(t, 0, 0), *colored = render(t, 1, 0);

	CHECK(plain && colored);
	if (plain && colored) {
		CHECK(!strchr(plain, '\033'));
		CHECK(strstr(colored, "\033[33m*\033[0m        4"));
		CHECK(strstr(colored, "\033[36ma\033[0m     3"));
		CHECK(!strstr(colored, "\033[36m\033[0m"));
		CHECK(strstr(colored, "\033[1;31mread cell#0 -> -100\033[0m"));
		CHECK(strstr(colored, "\033[1;31mfailure\033[0m: task 0 raised"));
	}
	free(plain);
	free(colored);
	ploom_trace_free(t);
}

static void write_errors_are_reported_with_errno(void)
{
	struct ploom_trace *t = trace_of(bank_steps, bank_failure);
	struct ploom_err err = {0, ""};
	FILE *f;
	int fds[2];

	if (!CHECK(t))
		return;
	f = fopen("/dev/full", "w");
	if (CHECK(f)) {
		CHECK_INT(ploom_render_trace(f, t, NULL, &err), -1);
		CHECK_INT(errno, ENOSPC);
		CHECK_INT(err.kind, PLOOM_ERR_SYSTEM);
		CHECK_STR(err.msg, "write error: No space left on device");
		fclose(f);
	}
	/* a pipe whose reader is gone: EPIPE, since SIGPIPE is ignored */
	signal(SIGPIPE, SIG_IGN);
	if (CHECK(pipe(fds) == 0)) {
		close(fds[0]);
		f = fdopen(fds[1], "w");
		if (CHECK(f)) {
			CHECK_INT(ploom_render_trace(f, t, NULL, &err), -1);
			CHECK_INT(errno, EPIPE);
			fclose(f);
		}
	}
	ploom_trace_free(t);
}

static void the_config_line_lists_the_patched_modules(void)
{
	struct ploom_trace *t = trace_of(bank_steps, bank_failure);
	char *out;

	if (!CHECK(t != NULL))
		return;
	CHECK_INT(ploom_config_add_patch(&t->config, "mylib.pool", NULL), 0);
	CHECK_INT(ploom_config_add_patch(&t->config, "other", NULL), 0);
	out = render(t, 0, 0);
	CHECK(out && has_line(out, "config       reduction none, max_preemptions none, "
				   "max_steps 10000, schedule_timeout 10 s, patch mylib.pool,other"));
	free(out);
	ploom_trace_free(t);
}

static void the_config_line_lists_the_instrumented_modules(void)
{
	struct ploom_trace *t = trace_of(bank_steps, bank_failure);
	char *out;

	if (!CHECK(t != NULL))
		return;
	CHECK_INT(ploom_config_add_patch(&t->config, "mylib.pool", NULL), 0);
	CHECK_INT(ploom_config_add_instrument(&t->config, "mylib.pool", NULL), 0);
	CHECK_INT(ploom_config_add_instrument(&t->config, "other", NULL), 0);
	out = render(t, 0, 0);
	CHECK(out && has_line(out, "config       reduction none, max_preemptions none, "
				   "max_steps 10000, schedule_timeout 10 s, patch mylib.pool, "
				   "instrument mylib.pool,other"));
	free(out);
	/* the scenario first, by words no module is called */
	t->config.instrument_scenario = 1;
	out = render(t, 0, 0);
	CHECK(out && has_line(out, "config       reduction none, max_preemptions none, "
				   "max_steps 10000, schedule_timeout 10 s, patch mylib.pool, "
				   "instrument the scenario,mylib.pool,other"));
	free(out);
	ploom_config_release_modules(&t->config);
	t->config.instrument_scenario = 1;
	out = render(t, 0, 0);
	CHECK(out && has_line(out, "config       reduction none, max_preemptions none, "
				   "max_steps 10000, schedule_timeout 10 s, instrument the scenario"));
	free(out);
	ploom_trace_free(t);
}

static void the_config_line_gives_a_samples_seed_and_depth(void)
{
	struct ploom_trace *t = trace_of(bank_steps, bank_failure);
	char *out;

	if (!CHECK(t != NULL))
		return;
	t->config.kind = ploom_search_kind_find("pct", NULL);
	t->config.seed = 4294967295UL;
	t->config.pct_depth = 3;
	out = render(t, 0, 0);
	CHECK(out && has_line(out, "config       reduction none, max_preemptions none, "
				   "max_steps 10000, schedule_timeout 10 s, search pct, "
				   "seed 4294967295, pct_depth 3"));
	free(out);
	t->config.kind = ploom_search_kind_find("random", NULL);
	out = render(t, 0, 0);
	CHECK(out && has_line(out, "config       reduction none, max_preemptions none, "
				   "max_steps 10000, schedule_timeout 10 s, search random, "
				   "seed 4294967295"));
	free(out);
	ploom_trace_free(t);
}

/* Fifty thousand steps with twenty-five thousand racing pairs: tasks 1
 * and 2 take turns writing cell#0 (each write races with the one
 * before), then take turns reading it (the first read races with the
 * last write), then task 0 writes it, racing with each task's last of
 * the 24,999 reads.  Every row is there with its place, and its tags:
 * races past the 52nd are '+'. */
static void fifty_thousand_steps_with_many_racing_pairs_render_whole(void)
{
	enum { WRITES = 25000, READS = 24999, N = WRITES + READS + 1 };
	struct ploom_trace *t = trace_of(" \"steps\": [],\n",
					 " \"outcome\": {\"kind\": \"pass\", \"summary\": \"pass\"}}");
	char *out = NULL;

	if (!CHECK(t))
		return;
	if (bigtrace_fill(&t->run, WRITES, READS) < 0) {
		CHECK(!"out of memory");
		goto done;
	}
	CHECK_INT(ploom_run_finish(&t->run, NULL), 0);
	out = render(t, 0, 0);
	if (!CHECK(out))
		goto done;
	CHECK_INT(bigtrace_count(out, " /a/util.py:15 work\n"), WRITES / 2 + (READS + 1) / 2);
	CHECK_INT(bigtrace_count(out, " /b/util.py:25 work\n"), WRITES / 2 + READS / 2);
	CHECK_INT(bigtrace_count(out, " bank.py:5 work\n"), 1);
	/* tagged '+' alone: the rows of steps 53 to the first read, and the
	 * last three; the reads between race with nothing */
	CHECK_INT(bigtrace_count(out, "\n   +  "), WRITES - 52 + 3);
	CHECK(strstr(out, "\n   +  49999  write cell#0 -> 1  "));
	CHECK(strstr(out, "\n      49996                     read cell#0 -> 1  "));
	CHECK(has_line(out, "a-Z racing pairs: steps of two tasks on one object that another "
			    "schedule could run in the other order"));
	CHECK(has_line(out, "pass: every task finished"));
done:
	free(out);
	ploom_trace_free(t);
}

/* ploom-show's formats: found by name, text the default, each with its
 * words in the usage, in the list's order. */
static void the_formats_are_found_by_name_and_listed_in_the_usage(void)
{
	char help[512];

	CHECK(ploom_format_default == ploom_format_find("text"));
	CHECK(ploom_format_find("text")->write == ploom_format_text);
	CHECK(ploom_format_find("html")->write == ploom_format_html);
	CHECK(ploom_format_find("json")->write == ploom_format_json);
	CHECK(ploom_format_find("xml") == NULL);
	CHECK(ploom_format_find("") == NULL);
	CHECK(ploom_format_find("TEXT") == NULL);
	ploom_format_help(help, sizeof(help));
	CHECK_STR(help, "text (default: a table of the steps, one column a task), "
			"html (one self-contained page), or json (the trace as ploom writes it)");
}

int main(void)
{
	the_formats_are_found_by_name_and_listed_in_the_usage();
	failure_shows_header_table_marks_and_exception();
	the_config_line_gives_a_samples_seed_and_depth();
	the_source_line_shows_the_path_in_its_repository();
	the_config_line_lists_the_patched_modules();
	the_config_line_lists_the_instrumented_modules();
	cells_sit_under_their_task_header();
	names_places_and_races_are_shown();
	a_deadlock_explains_the_acquires_that_won();
	long_values_are_cut_with_dots();
	a_deadlock_adds_a_wait_row_and_lists_the_waits();
	a_wait_for_a_notify_or_a_state_is_told_as_one_everywhere();
	a_timeout_folds_the_tasks_that_had_not_started();
	every_outcome_kind_ends_the_rendering();
	control_characters_are_shown_as_question_marks();
	c1_and_bidi_controls_are_shown_as_question_marks();
	color_is_only_there_when_asked();
	write_errors_are_reported_with_errno();
	fifty_thousand_steps_with_many_racing_pairs_render_whole();
	return check_report();
}
