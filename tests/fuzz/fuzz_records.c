/* fuzz_records.c - libFuzzer target for the worker protocol's decoders.
 *
 * The input is read as lib/worker.c reads a worker's fd 3: cut at each
 * '\n', the first line is the `hello` (or `error`) record, and every line
 * after it goes to a run parser; when a run ends, with `done` or with an
 * error, the next line starts a new run, as the next schedule's records
 * would.  The lines after the first are also given whole to
 * ploom_run_parse_text(), the canned-stream reader.  Every line is also a
 * command as the worker reads fd 0 (ploom_run_cmd_parse()), and the whole
 * input is a str field (ploom_str_decode()).
 *
 * Two round trips are checked, since the encoders and decoders live side
 * by side in lib/event.c and must agree: a `run` command that parses is
 * encoded and parsed again to the same command, and a str field that
 * decodes is encoded and decoded again to the same bytes.
 *
 * Everything is freed before returning, so LeakSanitizer's report at exit
 * names any leak of the decoders.  `make fuzz` builds and runs it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/decode.h"
#include "../../lib/event.h"
#include "../../lib/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What the worker reader passes for a run's TIMEOUT_MS (a `timeout` exit
 * becomes a timeout outcome of this many ms). */
#define TIMEOUT_MS 1000

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_records: %s%s%s\n", what, detail ? ": " : "",
		detail ? detail : "");
	abort();
}

static void check_message(const struct ploom_err *err)
{
	if (!err->msg[0] || strchr(err->msg, '\n'))
		fail("an error message must be one line, not empty", err->msg);
}

/* A `run` command that parses must survive ploom_enc_run(). */
static void run_cmd(const char *line, size_t len)
{
	struct ploom_run_cmd cmd, again;
	struct ploom_err err = {0, ""};
	struct ploom_buf b = {0};

	if (ploom_run_cmd_parse(&cmd, line, len, &err) < 0) {
		check_message(&err);
		ploom_run_cmd_release(&cmd);
		return;
	}
	ploom_enc_run(&b, &cmd);
	if (b.len < 1 || b.data[b.len - 1] != '\n')
		fail("ploom_enc_run wrote no whole line", NULL);
	if (ploom_run_cmd_parse(&again, b.data, b.len - 1, &err) < 0)
		fail("an encoded run command does not parse", err.msg);
	if (again.max_steps != cmd.max_steps || again.timeout_ms != cmd.timeout_ms ||
	    again.nchoices != cmd.nchoices || again.nsleep != cmd.nsleep ||
	    (cmd.nchoices &&
	     memcmp(again.choices, cmd.choices, cmd.nchoices * sizeof(*cmd.choices))) ||
	    (cmd.nsleep && memcmp(again.sleep, cmd.sleep, cmd.nsleep * sizeof(*cmd.sleep))) ||
	    again.policy.kind != cmd.policy.kind || again.policy.seed != cmd.policy.seed ||
	    again.policy.depth != cmd.policy.depth || again.policy.k != cmd.policy.k ||
	    again.policy.nfollow != cmd.policy.nfollow ||
	    (cmd.policy.nfollow && memcmp(again.policy.follow, cmd.policy.follow,
					  cmd.policy.nfollow * sizeof(*cmd.policy.follow))))
		fail("a run command changed through ploom_enc_run", NULL);
	if (ploom_policy_problem(&cmd.policy))
		fail("a run command parsed with a policy no policy takes",
		     ploom_policy_problem(&cmd.policy));
	ploom_run_cmd_release(&again);
	ploom_run_cmd_release(&cmd);
	ploom_buf_release(&b);
}

/* A str field that decodes must encode back to a field that decodes to
 * the same bytes. */
static void str_field(const char *s, size_t len)
{
	struct ploom_buf b = {0};
	size_t n, n2;
	char *dec, *dec2;

	dec = ploom_str_decode(s, len, &n);
	if (!dec)
		return;
	if (dec[n] != '\0')
		fail("a decoded str is not NUL-terminated", NULL);
	ploom_buf_add_str(&b, dec, n);
	if (b.len < 2 || memcmp(b.data, " =", 2))
		fail("ploom_buf_add_str wrote no ' =' first", NULL);
	dec2 = ploom_str_decode(b.data + 2, b.len - 2, &n2);
	if (!dec2 || n2 != n || memcmp(dec, dec2, n))
		fail("a str changed through ploom_buf_add_str", NULL);
	free(dec2);
	free(dec);
	ploom_buf_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *nl;
	struct ploom_err err = {0, ""};
	struct ploom_hello hello = {0};
	struct ploom_run run = {0};
	struct ploom_run_parser p;
	size_t i = 0, records = 0;
	int first = 1, r;

	str_field(text, size);
	ploom_run_parser_init(&p, &run, TIMEOUT_MS);
	while (i < size && (nl = memchr(text + i, '\n', size - i))) {
		const char *line = text + i;
		size_t len = (size_t)(nl - line);

		if (first) {
			if (ploom_hello_parse(&hello, line, len, "fuzz:target", &err) < 0)
				check_message(&err);
			ploom_hello_release(&hello);
			first = 0;
			records = (size_t)(nl - text) + 1;
		} else {
			r = ploom_run_parser_line(&p, line, len, &err);
			if (r < 0)
				check_message(&err);
			if (r == 1 && run.outcome.kind == PLOOM_OUTCOME_NONE)
				fail("a finished run has no outcome", NULL);
			if (r != 0) {
				ploom_run_release(&run);
				ploom_run_parser_init(&p, &run, TIMEOUT_MS);
			}
		}
		run_cmd(line, len);
		i = (size_t)(nl - text) + 1;
	}
	ploom_run_release(&run);

	if (records) {
		if (ploom_run_parse_text(&run, text + records, size - records, TIMEOUT_MS, &err) < 0)
			check_message(&err);
		ploom_run_release(&run);
	}
	return 0;
}
