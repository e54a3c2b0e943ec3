/* fuzz_stats.c - libFuzzer target for the statistics reader and the merge
 * of shards (ploom-merge).
 *
 * The input is one or two statistics documents, cut at the first NUL byte
 * (no JSON text holds one).  Each goes to ploom_stats_parse(), the
 * buffer-level reader under ploom_stats_read_file().  A document that
 * parses is written back with ploom_stats_write(), and what is written
 * must parse again and write the very same text (the identity path), so
 * the reader accepts what ploom-explore writes and reads it as written.
 *
 * The documents that parse are then merged as ploom-merge merges them,
 * in both orders: the merge must refuse both orders or neither, and the
 * merged statistics must be the same text either way (the merge sorts the
 * shards by index), with counts that hold together (no sum wrapped
 * negative, failing <= schedules).
 *
 * Everything is freed before returning, so LeakSanitizer's report at exit
 * names any leak of the reader or the merge.  `make fuzz` builds and runs
 * it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/json.h"
#include "../../lib/merge.h"
#include "../../lib/search.h"
#include "../../lib/shard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_stats: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

static void check_message(const struct ploom_err *err)
{
	if (!err->msg[0] || strchr(err->msg, '\n'))
		fail("an error message must be one line, not empty", err->msg);
}

/* The statistics as ploom_stats_write() writes them, malloc'd. */
static char *stats_text(const struct ploom_stats *s)
{
	struct ploom_err err = {0, ""};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		fail("cannot open a memory stream", NULL);
	if (ploom_stats_write(f, s, &err) < 0)
		fail("cannot write statistics", err.msg);
	if (fclose(f) != 0)
		fail("cannot close a memory stream", NULL);
	return text;
}

/* Parses the len bytes at text: the statistics, or NULL when they are
 * refused.  Accepted ones must survive being written and read back. */
static struct ploom_stats_in *parse(const char *text, size_t len)
{
	struct ploom_stats_in *in = NULL, *again = NULL;
	struct ploom_err err = {0, ""};
	char *json, *json2;

	if (ploom_stats_parse(&in, text, len, &err) < 0) {
		if (in)
			fail("ploom_stats_parse failed but set *out", err.msg);
		check_message(&err);
		return NULL;
	}
	json = stats_text(&in->stats);
	if (ploom_stats_parse(&again, json, strlen(json), &err) < 0)
		fail("statistics that parsed do not parse once written", err.msg);
	json2 = stats_text(&again->stats);
	if (strcmp(json, json2))
		fail("statistics written, read back and written again changed", json2);
	free(json2);
	free(json);
	ploom_stats_in_free(again);
	return in;
}

/* The merge of a then b (either may be NULL), taking neither: the merged
 * statistics' text, or NULL when the merge refused them. */
static char *merge(const struct ploom_stats_in *a, const struct ploom_stats_in *b)
{
	const struct ploom_stats_in *parts[2] = {a, b};
	const struct ploom_stats *s = NULL;
	struct ploom_err err = {0, ""};
	struct ploom_merge *m = NULL;
	char *text = NULL;
	size_t i;

	if (ploom_merge_new(&m, &err) < 0)
		fail("cannot start a merge", err.msg);
	for (i = 0; i < 2; i++) {
		struct ploom_stats_in *copy = NULL;
		char *json;

		if (!parts[i])
			continue;
		/* the merge takes what it is given: a copy of its own */
		json = stats_text(&parts[i]->stats);
		if (ploom_stats_parse(&copy, json, strlen(json), &err) < 0)
			fail("statistics that parsed do not parse once written", err.msg);
		free(json);
		if (ploom_merge_add(m, copy, i ? "b.json" : "a.json", &err) < 0) {
			check_message(&err);
			goto done;
		}
	}
	if (ploom_merge_result(&s, m, &err) < 0) {
		check_message(&err);
		goto done;
	}
	if (s->schedules < 0 || s->failing < 0 || s->failing > s->schedules)
		fail("the merged counts do not hold together", NULL);
	if (s->shard->owned < 0 || s->shard->probes < 0)
		fail("the merged shard counts are negative", NULL);
	for (i = 0; i < s->noutcomes; i++)
		if (s->outcomes[i].schedules < 1)
			fail("a merged outcome has no schedule", s->outcomes[i].summary);
	if ((s->failing > 0) != (s->failure != NULL))
		fail("the merged failure does not match the merged count", NULL);
	text = stats_text(s);
done:
	ploom_merge_free(m);
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	const char *cut = memchr(text, '\0', size);
	size_t len = cut ? (size_t)(cut - text) : size;
	struct ploom_stats_in *a, *b = NULL;
	char *ab, *ba;

	a = parse(text, len);
	if (cut)
		b = parse(cut + 1, size - len - 1);
	if (!a && !b)
		return 0;
	ab = merge(a, b);
	ba = merge(b, a);
	if (!ab != !ba)
		fail("the merge refused one order of the shards but not the other", ab ? ab : ba);
	if (ab && strcmp(ab, ba))
		fail("the merge depends on the order of the shards", ab);
	free(ab);
	free(ba);
	ploom_stats_in_free(a);
	ploom_stats_in_free(b);
	return 0;
}
