/* fuzz_trace.c - libFuzzer target for the trace reader.
 *
 * Feeds the input to ploom_trace_parse(), the buffer-level reader under
 * ploom_trace_read_file() that every utility reads a trace with.  A trace
 * that parses then goes where ploom-show and ploom-replay take it: it is
 * rendered (to /dev/null), drawn as HTML (which must hold no script
 * whatever the trace's strings say, and end whole) and written back as
 * JSON.  The written JSON must
 * parse again and write the very same text (the identity path): a trace
 * the reader accepts but cannot read back once written would be a trace
 * that ploom-minimize or a replay could lose.
 *
 * Everything is freed before returning, so LeakSanitizer's report at exit
 * names any leak of the reader.  `make fuzz` builds and runs it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/format/html.h"
#include "../../lib/json.h"
#include "../../lib/format/render.h"
#include "../../lib/trace.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Opened once: the rendering's bytes are not looked at, only how it
 * walks the trace. */
static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	devnull = fopen("/dev/null", "w");
	if (!devnull) {
		perror("fuzz_trace: cannot open /dev/null");
		abort();
	}
	return 0;
}

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_trace: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ploom_trace *trace = NULL, *again = NULL;
	struct ploom_err err = {0, ""};
	/* the input's length picks the colour and the column cap, so both
	 * code paths of the rendering get exercised without a format of our
	 * own in front of the JSON */
	struct ploom_render_opts ropts = {(int)(size & 1), (int)(size % 41), NULL};
	char *json = NULL, *json2 = NULL, *page = NULL;
	size_t page_len = 0;
	FILE *f;

	if (ploom_trace_parse(&trace, (const char *)data, size, &err) < 0) {
		if (trace)
			fail("ploom_trace_parse failed but set *out", err.msg);
		if (!err.msg[0] || strchr(err.msg, '\n'))
			fail("an error message must be one line, not empty", err.msg);
		return 0;
	}
	if (ploom_render_trace(devnull, trace, &ropts, &err) < 0)
		fail("cannot render a trace that parsed", err.msg);
	f = open_memstream(&page, &page_len);
	if (!f)
		fail("cannot open a memory stream", NULL);
	if (ploom_html_write(f, trace, &err) < 0)
		fail("cannot draw a trace that parsed as HTML", err.msg);
	fclose(f);
	if (strcasestr(page, "<script"))
		fail("a trace's strings made a script element", NULL);
	if (page_len < 8 || strcmp(page + page_len - 8, "</html>\n"))
		fail("the HTML page does not end whole", NULL);
	free(page);
	json = ploom_trace_to_json(trace, &err);
	if (!json)
		fail("cannot write a trace that parsed", err.msg);
	if (ploom_trace_parse(&again, json, strlen(json), &err) < 0)
		fail("a trace that parsed does not parse once written", err.msg);
	json2 = ploom_trace_to_json(again, &err);
	if (!json2)
		fail("cannot write the trace read back", err.msg);
	if (strcmp(json, json2))
		fail("a trace written, read back and written again changed", NULL);
	free(json2);
	free(json);
	ploom_trace_free(again);
	ploom_trace_free(trace);
	return 0;
}
