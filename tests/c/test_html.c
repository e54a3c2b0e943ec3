/* Tests of the HTML rendering: the lanes, boxes, marks and arrows, the
 * outcome, escaping of the trace's strings, cut captions, large traces,
 * and write errors. */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/format/html.h"
#include "../../lib/json.h"
#include "../../lib/trace.h"
#include "bigtrace.h"
#include "check.h"

/* A trace of the bank's failure, minimized: STEPS and OUTCOME are
 * spliced in by trace_of(); MODULE too, so that it can be hostile. */
static const char head_fmt[] =
	"{\"format\": \"ploom-trace\", \"version\": 2, \"id\": \"a572433ef5eb57f2\",\n"
	" \"scenario\": {\"target\": \"/src/bank.py:scenario\", \"module\": \"%s\",\n"
	"              \"qualname\": \"scenario\", \"file\": \"/src/bank.py\"},\n"
	" \"python\": {\"implementation\": \"cpython\", \"version\": \"3.13.0\", \"gil\": true},\n"
	" \"hash_seed\": \"0\",\n"
	" \"config\": {\"max_preemptions\": null, \"reduction\": \"none\", \"max_steps\": 10000,\n"
	"            \"schedule_timeout_s\": 10},\n"
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

static struct ploom_trace *trace_with_module(const char *module, const char *steps,
					     const char *outcome)
{
	struct ploom_trace *t = NULL;
	struct ploom_err err = {0, ""};
	char *head = NULL, *text = NULL;

	if (asprintf(&head, head_fmt, module) < 0)
		return NULL;
	if (asprintf(&text, "%s%s%s", head, steps, outcome) >= 0 &&
	    ploom_trace_parse(&t, text, strlen(text), &err) < 0)
		printf("trace_of: %s\n", err.msg);
	free(head);
	free(text);
	return t;
}

static struct ploom_trace *trace_of(const char *steps, const char *outcome)
{
	return trace_with_module("bank", steps, outcome);
}

/* The page as a string (the caller frees it), NULL on error. */
static char *page(const struct ploom_trace *t)
{
	struct ploom_err err = {0, ""};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc;

	if (!f || !t)
		return NULL;
	rc = ploom_html_write(f, t, &err);
	fclose(f);
	if (rc < 0) {
		printf("page: %s\n", err.msg);
		free(buf);
		return NULL;
	}
	return buf;
}

/* 1 if every '<' of the page opens or closes one of the elements the
 * renderer writes (or is its doctype), so no string of the trace made
 * an element of its own. */
static int only_our_tags(const char *text)
{
	static const char *const ours[] = {
		"!DOCTYPE", "html", "head", "meta", "title", "style", "body", "h1", "h2", "p",
		"table", "tr", "th", "td", "div", "svg", "defs", "pattern", "marker", "rect",
		"path", "g", "text", "ul", "li", "span", "pre",
	};
	const char *p = text;

	while ((p = strchr(p, '<'))) {
		char name[16];
		size_t n = 0, i;
		int known = 0;

		p++;
		if (*p == '/')
			p++;
		while (n < sizeof(name) - 1 && (isalnum((unsigned char)p[n]) || p[n] == '!'))
			name[n] = p[n], n++;
		name[n] = '\0';
		for (i = 0; i < sizeof(ours) / sizeof(*ours); i++)
			known |= !strcmp(name, ours[i]);
		if (!known) {
			printf("only_our_tags: unknown tag '<%s' at '%.40s'\n", name, p - 1);
			return 0;
		}
	}
	return 1;
}

static void the_bank_failure_draws_a_lane_per_task_and_marks_the_failing_step(void)
{
	struct ploom_trace *t = trace_of(bank_steps, bank_failure);
	char *out = page(t);

	if (!CHECK(out))
		goto done;
	CHECK(!strncmp(out, "<!DOCTYPE html>\n", 16));
	CHECK(strstr(out, "<meta charset=\"utf-8\">"));
	CHECK_INT(strlen(out) > 8 ? strcmp(out + strlen(out) - 8, "</html>\n") : -1, 0);
	CHECK(only_our_tags(out));
	/* self-contained: no script, nothing fetched */
	CHECK(!strstr(out, "<script"));
	CHECK(!strstr(out, "src="));
	CHECK(!strstr(out, "href="));
	CHECK(!strstr(out, "url(http"));
	CHECK(strstr(out, "default-src 'none'"));
	/* the header facts */
	CHECK(strstr(out, "<h1>bank:scenario</h1>"));
	CHECK(strstr(out, "<tr><th>python</th><td>cpython 3.13.0, GIL enabled</td></tr>"));
	CHECK(strstr(out, "<tr><th>hash seed</th><td>0</td></tr>"));
	CHECK(strstr(out, "<tr><th>preemptions</th><td>1 (minimized from 2)</td></tr>"));
	/* each fact once: the scenario is the heading, the outcome the
	 * summary line; the target names the file, which the heading does not */
	CHECK(strstr(out, "<p class=\"summary failure\">builtins.AssertionError: overdrawn</p>"));
	CHECK(!strstr(out, "<td>builtins.AssertionError"));
	CHECK(!strstr(out, "<th>outcome</th>"));
	CHECK(!strstr(out, "<th>scenario</th>"));
	CHECK_INT(bigtrace_count(out, "<tr><th>target</th><td>/src/bank.py:scenario</td></tr>"), 1);
	CHECK_INT(bigtrace_count(out, "bank:scenario"), 2); /* the <title> and the <h1> */
	/* a lane per task, titled; each step's box in its task's lane */
	CHECK_INT(bigtrace_count(out, "<g class=\"lane\""), 3);
	CHECK(strstr(out, "<g class=\"lane\" id=\"lane-0\" data-task=\"0\">"));
	CHECK(strstr(out, "<g class=\"lane\" id=\"lane-2\" data-task=\"2\">"));
	/* titled as the text's columns: task 0 is threading's MainThread */
	CHECK(strstr(out, ">MainThread</text>"));
	CHECK(strstr(out, ">thread#2</text>"));
	CHECK_INT(bigtrace_count(out, "class=\"lane-title\""), 3);
	CHECK_INT(bigtrace_count(out, "<g class=\"step"), 8);
	CHECK(strstr(out, "id=\"step-3\" data-task=\"1\">"));
	CHECK(strstr(out, ">read cell#0 -&gt; 100</text>"));
	CHECK(strstr(out, ">start thread#1</text>"));
	/* the lanes come in task order, and step 3 sits in lane 1 */
	CHECK(strstr(out, "id=\"lane-0\"") < strstr(out, "id=\"lane-1\""));
	CHECK(strstr(out, "id=\"lane-1\"") < strstr(out, "id=\"step-3\""));
	CHECK(strstr(out, "id=\"step-3\"") < strstr(out, "id=\"lane-2\""));
	/* the failing step: task 0's last, alone in red */
	CHECK_INT(bigtrace_count(out, "class=\"step failing\""), 1);
	CHECK(strstr(out, "<g class=\"step failing\" id=\"step-7\" data-task=\"0\">"));
	CHECK_INT(bigtrace_count(out, "class=\"mark failing\""), 1);
	/* the one preemption, step 3 (task 1) to step 4 (task 2): an arrow
	 * and a mark */
	CHECK_INT(bigtrace_count(out, "<path class=\"arrow preemption\""), 1);
	CHECK(strstr(out, "<path class=\"arrow preemption\" data-from=\"3\" data-to=\"4\""));
	CHECK(strstr(out, "<title>preemption: thread#1 could have continued</title>"));
	CHECK_INT(bigtrace_count(out, "class=\"mark preemption\""), 1);
	CHECK(strstr(out, "<marker id=\"head-preemption\""));
	/* the legend and the outcome, the traceback whole in a <pre> */
	CHECK(strstr(out, "the failing step: the last step of the task that raised"));
	/* the task that raised by its lane's name */
	CHECK(strstr(out, "<span class=\"kind failure\">failure</span>: MainThread raised "
			  "builtins.AssertionError: overdrawn</p>"));
	CHECK(!strstr(out, "task 0"));
	CHECK(strstr(out, "<pre class=\"traceback\">\nTraceback (most recent call last):\n"
			  "  File &quot;/src/bank.py&quot;\nAssertionError: overdrawn\n</pre>"));
done:
	free(out);
	ploom_trace_free(t);
}

/* The bank with its names and places, as the extension records them. */
static const char named_bank_steps[] =
	" \"tasks\": [{\"id\": 0, \"name\": \"MainThread\"}, {\"id\": 1, \"name\": \"mathieu\"},"
	" {\"id\": 2, \"name\": \"lucas\"}],\n"
	" \"objects\": [{\"object\": \"cell#0\", \"name\": \"balance\"}],\n"
	" \"steps\": [\n"
	"  {\"index\": 0, \"task\": 0, \"op\": \"start\", \"object\": \"thread#1\", \"enabled\": [0],"
	" \"where\": {\"file\": \"bank.py\", \"line\": 26, \"function\": \"scenario\"}},\n"
	"  {\"index\": 1, \"task\": 0, \"op\": \"start\", \"object\": \"thread#2\", \"enabled\": [0, 1],"
	" \"where\": {\"file\": \"bank.py\", \"line\": 27, \"function\": \"scenario\"}},\n"
	"  {\"index\": 2, \"task\": 1, \"op\": \"begin\", \"object\": null, \"enabled\": [1, 2],"
	" \"where\": {\"file\": \"bank.py\", \"line\": 20, \"function\": \"withdraw\"}},\n"
	"  {\"index\": 3, \"task\": 1, \"op\": \"read\", \"object\": \"cell#0\", \"enabled\": [1, 2],"
	" \"value\": \"100\", \"where\": {\"file\": \"bank.py\", \"line\": 21, \"function\": \"withdraw\"}},\n"
	"  {\"index\": 4, \"task\": 2, \"op\": \"begin\", \"object\": null, \"enabled\": [1, 2],"
	" \"where\": {\"file\": \"bank.py\", \"line\": 20, \"function\": \"withdraw\"}},\n"
	"  {\"index\": 5, \"task\": 2, \"op\": \"read\", \"object\": \"cell#0\", \"enabled\": [1, 2],"
	" \"value\": \"100\", \"where\": {\"file\": \"bank.py\", \"line\": 21, \"function\": \"withdraw\"}},\n"
	"  {\"index\": 6, \"task\": 2, \"op\": \"write\", \"object\": \"cell#0\", \"enabled\": [1, 2],"
	" \"value\": \"0\", \"where\": {\"file\": \"bank.py\", \"line\": 22, \"function\": \"withdraw\"}},\n"
	"  {\"index\": 7, \"task\": 1, \"op\": \"write\", \"object\": \"cell#0\", \"enabled\": [1],"
	" \"value\": \"0\", \"where\": {\"file\": \"bank.py\", \"line\": 22, \"function\": \"withdraw\"}},\n"
	"  {\"index\": 8, \"task\": 0, \"op\": \"read\", \"object\": \"cell#0\", \"enabled\": [0],"
	" \"value\": \"0\", \"where\": {\"file\": \"bank.py\", \"line\": 30, \"function\": \"scenario\"}}],\n";

static void names_places_and_races_come_from_the_trace(void)
{
	struct ploom_trace *t = trace_of(named_bank_steps, bank_failure);
	char *out = page(t);

	if (!CHECK(out))
		goto done;
	CHECK(only_our_tags(out));
	/* lanes titled by the threads' names, objects by theirs */
	CHECK(strstr(out, "data-task=\"1\" x=") && strstr(out, ">mathieu</text>"));
	CHECK(strstr(out, ">lucas</text>"));
	CHECK(strstr(out, ">start mathieu</text>"));
	CHECK(strstr(out, ">read balance -&gt; 100</text>"));
	CHECK(!strstr(out, "cell#0"));
	/* each box's second line: where the step stopped */
	CHECK_INT(bigtrace_count(out, "<text class=\"where\""), 9);
	CHECK(strstr(out, ">bank.py:21 withdraw</text>"));
	/* the racing pairs as arrows: mathieu's read (3) before lucas's write
	 * (6), lucas's write before mathieu's (7); one is the key */
	CHECK(strstr(out, "<path class=\"arrow race\" data-from=\"3\" data-to=\"6\"") ||
	      strstr(out, "<path class=\"arrow race key\" data-from=\"3\" data-to=\"6\""));
	CHECK(bigtrace_count(out, "<path class=\"arrow race") >= 2);
	CHECK_INT(bigtrace_count(out, "<path class=\"arrow race key\""), 1);
	CHECK(strstr(out, "<marker id=\"head-race\""));
	/* the race the failure rests on, in words, among the facts */
	CHECK(strstr(out, "<tr><th>race</th><td><span class=\"race\">mathieu read balance "
			  "(bank.py:21) before lucas wrote it (bank.py:22)</span></td></tr>"));
	CHECK(strstr(out, "racing pairs: steps of two tasks on one object"));
	CHECK(strstr(out, ": MainThread raised builtins.AssertionError"));
	CHECK(!strstr(out, "task 0"));
done:
	free(out);
	ploom_trace_free(t);
}

/* The rect of step i's box: 0, or -1 if the page has none. */
static int box_of(const char *page_text, int i, long *x, long *y, long *w, long *h)
{
	char id[64];
	const char *p;

	snprintf(id, sizeof(id), "id=\"step-%d\"", i);
	p = strstr(page_text, id);
	p = p ? strstr(p, "<rect ") : NULL;
	if (!p || sscanf(p, "<rect x=\"%ld\" y=\"%ld\" width=\"%ld\" height=\"%ld\"", x, y, w,
			 h) != 4)
		return -1;
	return 0;
}

static void boxes_sit_in_rows_and_the_arrow_joins_its_two_boxes(void)
{
	struct ploom_trace *t = trace_of(bank_steps, bank_failure);
	char *out = page(t);
	long x3, y3, w3, h3, x4, y4, w4, h4, x2, y2, w2, h2, ax, ay, bx, by;
	const char *d;

	if (!CHECK(out))
		goto done;
	if (!CHECK(box_of(out, 2, &x2, &y2, &w2, &h2) == 0 &&
		   box_of(out, 3, &x3, &y3, &w3, &h3) == 0 &&
		   box_of(out, 4, &x4, &y4, &w4, &h4) == 0))
		goto done;
	/* one row a step, downward; a lane a task, rightward */
	CHECK_INT(x2, x3);
	CHECK(y3 > y2 && y4 - y3 == y3 - y2);
	CHECK(x4 >= x3 + w3);
	d = strstr(out, "data-from=\"3\" data-to=\"4\" d=\"M");
	if (!CHECK(d) ||
	    !CHECK(sscanf(strstr(d, "d=\"M") + 4, "%ld %ldC%*d %*d %*d %*d %ld %ld", &ax, &ay, &bx,
			  &by) == 4))
		goto done;
	/* out of the right side of step 3's box, into the left of step 4's */
	CHECK_INT(ax, x3 + w3);
	CHECK_INT(ay, y3 + h3 / 2);
	CHECK_INT(bx, x4);
	CHECK_INT(by, y4 + h4 / 2);
done:
	free(out);
	ploom_trace_free(t);
}

static void every_string_of_the_trace_is_escaped(void)
{
	static const char steps[] =
		" \"steps\": [{\"index\": 0, \"task\": 0, \"op\": \"read\","
		" \"object\": \"cell#0\", \"enabled\": [0],"
		" \"value\": \"'<script>alert(1)</script>' \\\" onload=\\\"x\\\" &amp;\"}],\n";
	static const char failure[] =
		" \"outcome\": {\"kind\": \"failure\", \"summary\": \"E: <script>alert(2)</script>\",\n"
		"  \"task\": 0, \"exception\": {\"type\": \"<img src=x onerror=alert(3)>\","
		" \"message\": \"</pre><script>alert(4)</script>\"},\n"
		"  \"traceback\": \"</pre><script>alert(5)</script>\\u001b[31m\\n\","
		"  \"output\": \"<style>body{display:none}</style>\\u0007\"}}\n";
	struct ploom_trace *t = trace_with_module("<script>alert(6)</script>", steps, failure);
	char *out;

	if (!CHECK(t))
		return;
	/* a string that no reader would pass, but the struct may hold */
	CHECK_INT(ploom_config_add_patch(&t->config, "m", NULL), 0);
	free(t->hash_seed);
	t->hash_seed = strdup("0\"><script>alert(7)</script>");
	out = page(t);
	if (!CHECK(out))
		goto done;
	CHECK(only_our_tags(out));
	CHECK(!strstr(out, "<script"));
	CHECK(!strstr(out, "<img"));
	CHECK_INT(bigtrace_count(out, "<style>"), 1);
	CHECK(!strchr(out, '\033'));
	CHECK(!strchr(out, '\a'));
	CHECK(strstr(out, "<h1>&lt;script&gt;alert(6)&lt;/script&gt;:scenario</h1>"));
	CHECK(strstr(out, "<title>read cell#0 -&gt; &#39;&lt;script&gt;alert(1)&lt;/script&gt;&#39; "
			  "&quot; onload=&quot;x&quot; &amp;amp;</title>"));
	CHECK(strstr(out, ">read cell#0 -&gt; &#39;&lt;script&gt;alert(1)&lt;/scr...</text>"));
	CHECK(strstr(out, "MainThread raised &lt;img src=x onerror=alert(3)&gt;: "
			  "&lt;/pre&gt;&lt;script&gt;alert(4)&lt;/script&gt;</p>"));
	CHECK(strstr(out, "&lt;/pre&gt;&lt;script&gt;alert(5)&lt;/script&gt;?[31m\n</pre>"));
	CHECK(strstr(out, "&lt;style&gt;body{display:none}&lt;/style&gt;?</pre>"));
	CHECK(strstr(out, "<td>0&quot;&gt;&lt;script&gt;alert(7)&lt;/script&gt;</td>"));
done:
	free(out);
	ploom_trace_free(t);
}

/* 1 if s is well-formed UTF-8 (no sequence cut). */
static int valid_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		int n = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 ? 1 : (*p & 0xF0) == 0xE0 ? 2
			: (*p & 0xF8) == 0xF0 ? 3 : -1;
		if (n < 0)
			return 0;
		for (p++; n > 0; n--, p++)
			if ((*p & 0xC0) != 0x80)
				return 0;
	}
	return 1;
}

static void a_long_caption_is_cut_and_whole_in_its_tooltip(void)
{
	/* 60 two-byte characters: a cut inside one would show as garbage */
	static const char steps_fmt[] =
		" \"steps\": [{\"index\": 0, \"task\": 0, \"op\": \"write\", \"object\": \"cell#0\","
		" \"enabled\": [0], \"value\": \"'%s'\"},\n"
		"  {\"index\": 1, \"task\": 0, \"op\": \"acquire\", \"object\": \"lock#0\","
		" \"enabled\": [0], \"blocking\": false, \"value\": \"False\"}],\n";
	static const char pass[] = " \"outcome\": {\"kind\": \"pass\", \"summary\": \"pass\"}}\n";
	char value[121 + 1] = "", *steps = NULL, *out = NULL, want[256];
	struct ploom_trace *t = NULL;
	int i;

	for (i = 0; i < 60; i++)
		strcat(value, "\xc3\xa9");
	if (!CHECK(asprintf(&steps, steps_fmt, value) > 0))
		return;
	t = trace_of(steps, pass);
	out = page(t);
	if (!CHECK(out))
		goto done;
	CHECK(valid_utf8(out));
	/* 40 code points: "write cell#0 -> '" is 17, 20 of the value, "..." */
	snprintf(want, sizeof(want), ">write cell#0 -&gt; &#39;%.40s...</text>", value);
	CHECK(strstr(out, want));
	snprintf(want, sizeof(want), "<title>write cell#0 -&gt; &#39;%s&#39;</title>", value);
	CHECK(strstr(out, want));
	/* a caption that fits has no tooltip; the mode is worded as in text */
	CHECK_INT(bigtrace_count(out, "<title>"), 2); /* the page's and the cut box's */
	CHECK(strstr(out, ">acquire lock#0 (nonblocking) -&gt; False</text>"));
	/* no failing step, no preemption: neither mark nor legend */
	CHECK(!strstr(out, "class=\"mark"));
	CHECK(!strstr(out, "class=\"legend\""));
	CHECK(strstr(out, "<span class=\"kind pass\">pass</span>: every task finished</p>"));
done:
	free(steps);
	free(out);
	ploom_trace_free(t);
}

static void a_deadlock_adds_a_wait_row(void)
{
	static const char steps[] =
		" \"steps\": [\n"
		"  {\"index\": 0, \"task\": 0, \"op\": \"start\", \"object\": \"thread#1\","
		" \"enabled\": [0]},\n"
		"  {\"index\": 1, \"task\": 1, \"op\": \"acquire\", \"object\": \"lock#0\","
		" \"enabled\": [0, 1], \"blocking\": true}],\n";
	static const char deadlock[] =
		" \"outcome\": {\"kind\": \"deadlock\", \"summary\": \"deadlock: ...\", \"waits\": [\n"
		"  {\"task\": 0, \"op\": \"join\", \"object\": \"thread#1\", \"holder\": 1},\n"
		"  {\"task\": 1, \"op\": \"acquire\", \"object\": \"lock#1\", \"holder\": 2},\n"
		"  {\"task\": 2, \"op\": \"acquire\", \"object\": \"lock#0\", \"holder\": 1}]}}\n";
	struct ploom_trace *t = trace_of(steps, deadlock);
	char *out = page(t);

	if (!CHECK(out))
		goto done;
	/* task 2 took no step but waits: it has a lane */
	CHECK_INT(bigtrace_count(out, "<g class=\"lane\""), 3);
	CHECK_INT(bigtrace_count(out, "<g class=\"wait\""), 3);
	CHECK(strstr(out, "<g class=\"wait\" data-task=\"0\">"));
	CHECK(strstr(out, ">waits to join thread#1</text>"));
	CHECK(strstr(out, ">waits to acquire lock#1 held by thread#2</text>"));
	CHECK(strstr(out, ">wait</text>"));
	CHECK(!strstr(out, "class=\"step failing\""));
	CHECK(strstr(out, "wait: what each blocked task waits for (the deadlock)"));
	/* the tasks by their lanes' names, in the summary as in the waits */
	CHECK(strstr(out, "<li>thread#1 waits to acquire lock#1 held by thread#2</li>"));
	CHECK(strstr(out, "<li>MainThread waits to join thread#1</li>"));
	CHECK(strstr(out, "<p class=\"summary failure\">deadlock: MainThread waits to join "
			  "thread#1; thread#1 waits to acquire lock#1 held by thread#2; thread#2 "
			  "waits to acquire lock#0 held by thread#1</p>"));
	CHECK(!strstr(out, "task 0") && !strstr(out, "task 1") && !strstr(out, "task 2"));
	CHECK(only_our_tags(out));
done:
	free(out);
	ploom_trace_free(t);
}

static void every_outcome_kind_is_told(void)
{
	static const char one_step[] =
		" \"steps\": [{\"index\": 0, \"task\": 0, \"op\": \"yield_now\", \"object\": null,"
		" \"enabled\": [0]}],\n";
	static const char no_steps[] = " \"steps\": [],\n";
	static const struct {
		const char *steps, *outcome, *said;
		int marked;
	} cases[] = {
		{one_step, " \"outcome\": {\"kind\": \"crash\", \"summary\": \"crash: killed by signal 6"
		 " (SIGABRT)\", \"signal\": 6}}", "crash</span>: killed by signal 6 (SIGABRT)</p>", 1},
		{one_step, " \"outcome\": {\"kind\": \"timeout\", \"summary\": \"timeout: the schedule"
		 " ran longer than 10 s\"}}", "timeout</span>: the schedule ran longer than 10 s</p>", 1},
		{one_step, " \"outcome\": {\"kind\": \"step-limit\", \"summary\": \"step-limit: the"
		 " schedule reached 1 steps\", \"limit\": 1}}",
		 "<span class=\"kind other\">step-limit</span>: the schedule reached 1 steps</p>", 0},
		{one_step, " \"outcome\": {\"kind\": \"divergence\", \"summary\": \"divergence: x\","
		 " \"step\": 1, \"message\": \"choice 0 asks for task 7\"}}",
		 "divergence</span> at step 1: choice 0 asks for task 7</p>", 0},
		{no_steps, " \"outcome\": {\"kind\": \"pass\", \"summary\": \"pass\", \"output\":"
		 " \"\\nhi\\nthere\"}}", "<pre class=\"output\">\n\nhi\nthere</pre>", 0},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ploom_trace *t = trace_of(cases[i].steps, cases[i].outcome);
		char *out = page(t);

		if (CHECK(out)) {
			if (!CHECK(strstr(out, cases[i].said)))
				printf("  case %zu: want '%s'\n", i, cases[i].said);
			CHECK_INT(bigtrace_count(out, "class=\"step failing\""), cases[i].marked);
			CHECK_INT(bigtrace_count(out, "<g class=\"lane\""), 1);
		}
		if (out && cases[i].steps == no_steps)
			CHECK(strstr(out, ">(no steps)</text>"));
		free(out);
		ploom_trace_free(t);
	}
}

/* Twenty thousand steps of two tasks that take turns ten steps at a time,
 * each turn a preemption: the page has every box and arrow and stays
 * about 200 bytes a step (a quadratic layout or a per-step style would
 * show here). */
static void a_large_trace_renders_whole(void)
{
	struct ploom_trace *t = trace_of(" \"steps\": [],\n",
					 " \"outcome\": {\"kind\": \"pass\", \"summary\": \"pass\"}}");
	char *out = NULL;
	size_t i, n = 20000, len;

	if (!CHECK(t))
		return;
	for (i = 0; i < n; i++) {
		struct ploom_step *s = ploom_run_add_step(&t->run);
		if (!s) {
			CHECK(!"out of memory");
			goto done;
		}
		s->index = (long)i;
		s->task = (int)(i / 10 % 2);
		s->op = PLOOM_OP_WRITE;
		s->object = strdup("cell#0");
		s->value = strdup("12345");
		s->enabled = malloc(2 * sizeof(int));
		if (!s->object || !s->value || !s->enabled) {
			CHECK(!"out of memory");
			goto done;
		}
		s->enabled[0] = 0;
		s->enabled[1] = 1;
		s->nenabled = 2;
	}
	CHECK_INT(ploom_run_finish(&t->run, NULL), 0);
	out = page(t);
	if (!CHECK(out))
		goto done;
	len = strlen(out);
	CHECK_INT(bigtrace_count(out, "<g class=\"step"), (long)n);
	CHECK_INT(bigtrace_count(out, "<path class=\"arrow preemption\""), (long)n / 10 - 1);
	CHECK(strstr(out, "id=\"step-19999\" data-task=\"1\""));
	CHECK(len < n * 300);
done:
	free(out);
	ploom_trace_free(t);
}

/* Fifty thousand steps with twenty-five thousand racing pairs: tasks 1
 * and 2 take turns writing cell#0 (each write races with the one
 * before), then take turns reading it (the first read races with the
 * last write), then task 0 writes it, racing with each task's last
 * read.  The page has every box and every arrow, each tooltip with its
 * places; renderings that redo per race or per candidate what they could
 * do once per page take minutes here instead of about a second. */
static void fifty_thousand_steps_with_many_racing_pairs_render_whole(void)
{
	enum { WRITES = 25000, READS = 24999, N = WRITES + READS + 1 };
	struct ploom_trace *t = trace_of(" \"steps\": [],\n",
					 " \"outcome\": {\"kind\": \"pass\", \"summary\": \"pass\"}}");
	char *out = NULL, want[160];

	if (!CHECK(t))
		return;
	if (bigtrace_fill(&t->run, WRITES, READS) < 0) {
		CHECK(!"out of memory");
		goto done;
	}
	CHECK_INT(ploom_run_finish(&t->run, NULL), 0);
	out = page(t);
	if (!CHECK(out))
		goto done;
	CHECK_INT(bigtrace_count(out, "<g class=\"step"), N);
	CHECK_INT(bigtrace_count(out, "<text class=\"where\""), N);
	/* a row number per step, and the column's title */
	CHECK_INT(bigtrace_count(out, "<text class=\"n\""), N + 1);
	CHECK_INT(bigtrace_count(out, "<path class=\"arrow race\""), WRITES - 1 + 1 + 2);
	CHECK_INT(bigtrace_count(out, "<path class=\"arrow preemption\""), 0);
	CHECK_INT(bigtrace_count(out, "</title></path>"), WRITES - 1 + 1 + 2);
	/* the tooltips of the first races start with their tags, then '+' */
	CHECK(strstr(out, "data-tag=\"a\" data-track=\"0\""));
	CHECK(strstr(out, "<title>a: thread#1 wrote cell#0"));
	CHECK(strstr(out, "<title>Z: thread#"));
	CHECK(!strstr(out, "<title>+"));
	/* the writes race each with the next, two pairs open in every row:
	 * two tracks, however many races */
	CHECK(strstr(out, "data-track=\"1\""));
	CHECK(!strstr(out, "data-track=\"2\""));
	/* the races of the last steps, and a tooltip with the places by
	 * their whole path, as two files share a last component */
	snprintf(want, sizeof(want), "data-from=\"%d\" data-to=\"%d\"", WRITES - 1, WRITES);
	CHECK(strstr(out, want));
	snprintf(want, sizeof(want), "data-from=\"%d\" data-to=\"%d\"", N - 3, N - 1);
	CHECK(strstr(out, want));
	snprintf(want, sizeof(want), "data-from=\"%d\" data-to=\"%d\"", N - 2, N - 1);
	CHECK(strstr(out, want));
	CHECK_INT(bigtrace_count(out, "thread#1 wrote cell#0 (/a/util.py:15) before thread#2 "
			     "wrote it (/b/util.py:25)</title>"), WRITES / 2);
	CHECK_INT(bigtrace_count(out, "<title>thread#2 read cell#0 (/b/util.py:25) before MainThread "
			     "wrote it (bank.py:5)</title>"), 1);
	snprintf(want, sizeof(want), "id=\"step-%d\" data-task=\"0\"", N - 1);
	CHECK(strstr(out, want));
	CHECK(!strcmp(out + strlen(out) - 8, "</html>\n"));
done:
	free(out);
	ploom_trace_free(t);
}

/* A racing pair's arrow as the page draws it: out of the box of step
 * `from` at (xa, ya), left to its track at x = xt, down to yb, right into
 * the box of step `to` at xb. */
struct race_arrow {
	long from, to, track, xa, ya, xt, yb, xb;
	char tag;
};

/* Reads up to max race arrows of the page into a; returns how many, or -1
 * when one of them is not drawn as described. */
static long race_arrows(const char *text, struct race_arrow *a, long max)
{
	const char *p = text;
	long n = 0;

	while ((p = strstr(p, "<path class=\"arrow race")) && n < max) {
		const char *attrs = strstr(p, "data-from=");
		if (!attrs || sscanf(attrs, "data-from=\"%ld\" data-to=\"%ld\" data-tag=\"%c\" "
				     "data-track=\"%ld\" d=\"M%ld %ldH%ldV%ldH%ld\"",
				     &a[n].from, &a[n].to, &a[n].tag, &a[n].track, &a[n].xa, &a[n].ya,
				     &a[n].xt, &a[n].yb, &a[n].xb) != 9) {
			printf("race_arrows: cannot read '%.120s'\n", p);
			return -1;
		}
		n++;
		p++;
	}
	return n;
}

/* The race tags beside step i's number, "" when none. */
static void tags_of_step(const char *text, long i, char *out, size_t cap)
{
	char want[64];
	const char *p, *end;

	snprintf(want, sizeof(want), ">%ld</text><text class=\"tags\" ", i);
	*out = '\0';
	p = strstr(text, want);
	p = p ? strchr(p + strlen(want), '>') : NULL;
	end = p ? strchr(p, '<') : NULL;
	if (end)
		snprintf(out, cap, "%.*s", (int)(end - p - 1), p + 1);
}

/* 1 if segments [a1, a2] and [b1, b2] of one line share more than a
 * point. */
static int spans_overlap(long a1, long a2, long b1, long b2)
{
	long lo_a = a1 < a2 ? a1 : a2, hi_a = a1 < a2 ? a2 : a1;
	long lo_b = b1 < b2 ? b1 : b2, hi_b = b1 < b2 ? b2 : b1;

	return (lo_a > lo_b ? lo_a : lo_b) < (hi_a < hi_b ? hi_a : hi_b);
}

/* 1 if arrows x and y share a stretch of line: two of their horizontal
 * or vertical segments lie on one line and overlap. */
static int arrows_overlap(const struct race_arrow *x, const struct race_arrow *y)
{
	const long hx[2][3] = {{x->ya, x->xa, x->xt}, {x->yb, x->xt, x->xb}};
	const long hy[2][3] = {{y->ya, y->xa, y->xt}, {y->yb, y->xt, y->xb}};
	int i, j;

	for (i = 0; i < 2; i++)
		for (j = 0; j < 2; j++)
			if (hx[i][0] == hy[j][0] && spans_overlap(hx[i][1], hx[i][2], hy[j][1], hy[j][2]))
				return 1;
	return x->xt == y->xt && spans_overlap(x->ya, x->yb, y->ya, y->yb);
}

/* Checks the racing pairs of the page: at least `want` arrows and `want_overlapping`
 * pairs of them whose rows overlap; each arrow's tag beside both its
 * steps' numbers; arrows whose rows overlap on tracks of their own; no
 * two arrows on one stretch of line. */
static void check_race_arrows(const char *out, long want, long want_overlapping)
{
	struct race_arrow a[16];
	long n = race_arrows(out, a, 16), i, j, overlapping = 0;
	char tags[16];

	if (!CHECK(n >= want))
		return;
	for (i = 0; i < n; i++) {
		/* a step in more pairs than it shows ends its tags with '+' */
		tags_of_step(out, a[i].from, tags, sizeof(tags));
		if (!CHECK(strchr(tags, a[i].tag) || strchr(tags, '+')))
			printf("  race %c: step %ld has tags '%s'\n", a[i].tag, a[i].from, tags);
		tags_of_step(out, a[i].to, tags, sizeof(tags));
		if (!CHECK(strchr(tags, a[i].tag) || strchr(tags, '+')))
			printf("  race %c: step %ld has tags '%s'\n", a[i].tag, a[i].to, tags);
		/* the track runs left of every box */
		CHECK(a[i].xt < a[i].xa && a[i].xt < a[i].xb);
		for (j = i + 1; j < n; j++) {
			int rows = a[i].from <= a[j].to && a[j].from <= a[i].to;
			overlapping += rows;
			if (rows && !CHECK(a[i].track != a[j].track))
				printf("  races %c and %c share track %ld\n", a[i].tag, a[j].tag,
				       a[i].track);
			if (!CHECK(!arrows_overlap(&a[i], &a[j])))
				printf("  races %c and %c overlap\n", a[i].tag, a[j].tag);
		}
	}
	CHECK(overlapping >= want_overlapping);
}

static void racing_pairs_are_tagged_and_their_arrows_do_not_overlap(void)
{
	/* tasks 1 to 4 read the balance, then task 0 writes it: four pairs
	 * that all end at the last step, so all overlap */
	static const char fan_in[] =
		" \"steps\": [\n"
		"  {\"index\": 0, \"task\": 1, \"op\": \"read\", \"object\": \"cell#0\","
		" \"enabled\": [0, 1, 2, 3, 4], \"value\": \"1\"},\n"
		"  {\"index\": 1, \"task\": 2, \"op\": \"read\", \"object\": \"cell#0\","
		" \"enabled\": [0, 2, 3, 4], \"value\": \"1\"},\n"
		"  {\"index\": 2, \"task\": 3, \"op\": \"read\", \"object\": \"cell#0\","
		" \"enabled\": [0, 3, 4], \"value\": \"1\"},\n"
		"  {\"index\": 3, \"task\": 4, \"op\": \"read\", \"object\": \"cell#0\","
		" \"enabled\": [0, 4], \"value\": \"1\"},\n"
		"  {\"index\": 4, \"task\": 0, \"op\": \"write\", \"object\": \"cell#0\","
		" \"enabled\": [0], \"value\": \"2\"}],\n";
	static const char pass[] = " \"outcome\": {\"kind\": \"pass\", \"summary\": \"pass\"}}\n";
	struct ploom_trace *t = trace_of(named_bank_steps, bank_failure);
	char *out = page(t);

	/* the bank: the pairs of its three writes and reads, two of them
	 * meeting at one step */
	if (CHECK(out)) {
		CHECK(strstr(out, "<text class=\"tags\""));
		check_race_arrows(out, 2, 1);
		CHECK(strstr(out, "racing pairs: steps of two tasks on one object"));
	}
	free(out);
	ploom_trace_free(t);
	t = trace_of(fan_in, pass);
	out = page(t);
	if (CHECK(out)) {
		char tags[16];
		CHECK_INT(race_arrows(out, (struct race_arrow[8]){{0}}, 8), 4);
		check_race_arrows(out, 4, 6);
		/* the last step is in every pair: three tags, then '+' */
		tags_of_step(out, 4, tags, sizeof(tags));
		CHECK_STR(tags, "abc+");
		CHECK(strstr(out, "data-track=\"3\""));
		CHECK(!strstr(out, "data-track=\"4\""));
	}
	free(out);
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
		CHECK_INT(ploom_html_write(f, t, &err), -1);
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
			CHECK_INT(ploom_html_write(f, t, &err), -1);
			CHECK_INT(errno, EPIPE);
			fclose(f);
		}
	}
	ploom_trace_free(t);
}

int main(void)
{
	the_bank_failure_draws_a_lane_per_task_and_marks_the_failing_step();
	names_places_and_races_come_from_the_trace();
	boxes_sit_in_rows_and_the_arrow_joins_its_two_boxes();
	racing_pairs_are_tagged_and_their_arrows_do_not_overlap();
	every_string_of_the_trace_is_escaped();
	a_long_caption_is_cut_and_whole_in_its_tooltip();
	a_deadlock_adds_a_wait_row();
	every_outcome_kind_is_told();
	a_large_trace_renders_whole();
	fifty_thousand_steps_with_many_racing_pairs_render_whole();
	write_errors_are_reported_with_errno();
	return check_report();
}
