/* The trace renderer; render.h documents what it draws. */
#include "render.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"
#include "replay.h"
#include "view.h"
#include "writer.h"

#define KEY_WIDTH 13 /* "preemptions" and two spaces */

/* The narrowest the where column wraps to, however wide the tasks'
 * columns before it. */
#define WHERE_MIN 16

#define C_RESET "\033[0m"
#define C_BOLD "\033[1m"
#define C_RED "\033[1;31m"
#define C_GREEN "\033[32m"
#define C_YELLOW "\033[33m"
#define C_CYAN "\033[36m"

/* ---- output ------------------------------------------------------------
 * Every write goes through these helpers: the first failure is kept with
 * its errno and the later writes are skipped, so the body of the renderer
 * reads straight and is checked once at the end. */

struct writer {
	struct ploom_writer out;
	int color;
};

static void put_bytes(struct writer *w, const char *s, size_t n)
{
	ploom_write_bytes(&w->out, s, n);
}

static void put(struct writer *w, const char *s)
{
	ploom_write(&w->out, s);
}

static void __attribute__((format(printf, 2, 3))) putf(struct writer *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ploom_vwritef(&w->out, fmt, ap);
	va_end(ap);
}

static void spaces(struct writer *w, size_t n)
{
	static const char blanks[] = "                                ";

	while (n > 0) {
		size_t k = n < sizeof(blanks) - 1 ? n : sizeof(blanks) - 1;
		put_bytes(w, blanks, k);
		n -= k;
	}
}

static void color(struct writer *w, const char *code)
{
	if (w->color)
		put(w, code);
}

/* The length in bytes of the control character that s starts with, 0
 * when it starts with none: the C0 controls and DEL, the C1 controls
 * (U+0080 to U+009F) a terminal may act on as it does on ESC sequences,
 * and the bidirectional controls (U+061C, U+200E, U+200F, U+202A to
 * U+202E, U+2066 to U+2069) that reorder the text after them. */
static size_t control_len(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	if (u[0] < 0x20 || u[0] == 0x7f)
		return 1;
	if ((u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f) || (u[0] == 0xd8 && u[1] == 0x9c))
		return 2;
	if (u[0] == 0xe2 && u[1] == 0x80 &&
	    (u[2] == 0x8e || u[2] == 0x8f || (u[2] >= 0xaa && u[2] <= 0xae)))
		return 3;
	if (u[0] == 0xe2 && u[1] == 0x81 && u[2] >= 0xa6 && u[2] <= 0xa9)
		return 3;
	return 0;
}

void ploom_put_printable(FILE *out, const char *s)
{
	size_t n;

	while (*s) {
		n = control_len(s);
		fputc(n ? '?' : *s, out);
		s += n ? n : 1;
	}
}

void ploom_put_printable_lines(FILE *out, const char *s, const char *indent)
{
	size_t len = strlen(s), n;
	const char *end;

	while (len && s[len - 1] == '\n')
		len--;
	end = s + len;
	while (s < end) {
		if (*s == '\n') {
			fputc('\n', out);
			fputs(indent, out);
			s++;
			continue;
		}
		n = control_len(s);
		fputc(n ? '?' : *s, out);
		s += n ? n : 1;
	}
}

/* Writes a string of the trace; control characters become '?' (except
 * newlines and tabs when multiline), so a trace cannot move the cursor,
 * change colours or reorder what a reader sees. */
static void put_text(struct writer *w, const char *s, int multiline)
{
	const char *run = s;
	size_t n;

	while (*s) {
		n = control_len(s);
		if (!n || (multiline && (*s == '\n' || *s == '\t'))) {
			s++;
			continue;
		}
		put_bytes(w, run, (size_t)(s - run));
		put(w, "?");
		s += n;
		run = s;
	}
	put_bytes(w, run, (size_t)(s - run));
}

/* A multiline block (traceback, output), each line indented, ending with
 * one newline however many the text ends with: the rendering's last line
 * is the block's last line of text. */
static void put_block(struct writer *w, const char *text, const char *indent)
{
	const char *line = text, *end = text + strlen(text), *nl;
	char *copy;

	while (end > text && end[-1] == '\n')
		end--;
	while (line < end) {
		nl = memchr(line, '\n', (size_t)(end - line));
		copy = strndup(line, (size_t)((nl ? nl : end) - line));
		if (!copy) {
			/* the block is lost but the rest still renders; the
			 * caller reports memory errors only for the table */
			return;
		}
		if (*copy) {
			put(w, indent);
			put_text(w, copy, 0);
		}
		put(w, "\n");
		free(copy);
		if (!nl)
			break;
		line = nl + 1;
	}
}

/* ---- cells --------------------------------------------------------------- */

struct cell {
	char *text;     /* see cell_set(); NULL: an empty cell */
	size_t width;   /* in code points */
};

/* Replaces control characters with '?' in place. */
static void sanitize(char *s)
{
	char *to = s;
	size_t n;

	while (*s) {
		n = control_len(s);
		*to++ = n ? '?' : *s;
		s += n ? n : 1;
	}
	*to = '\0';
}

/* The first n code points of s (malloc'd) and "..." when s is longer
 * than max code points; else a copy.  NULL when out of memory. */
static char *cut(const char *s, size_t max, size_t *out_width)
{
	size_t i, w = ploom_view_text_width(s);
	char *p;

	if (w <= max) {
		*out_width = w;
		return strdup(s);
	}
	i = ploom_view_prefix(s, max - 3);
	p = malloc(i + 4);
	if (!p)
		return NULL;
	memcpy(p, s, i);
	memcpy(p + i, "...", 4);
	*out_width = max;
	return p;
}

/* Fills the cell with "TEXT" or "TEXT -> VALUE" (value may be NULL),
 * control characters shown as '?'.  The cap is met by cutting the value,
 * which keeps at least VALUE_MIN code points; TEXT (an operation and its
 * object, or a wait and its holder, by their names) is cut only beyond
 * max(cap, TEXT_MAX), which only a name of more than 40 characters
 * reaches.  Returns 0, or -1 when out of memory. */
#define VALUE_MIN 8
#define TEXT_MAX 64
static int cell_set(struct cell *c, const char *text, const char *value, size_t cap)
{
	char *t = NULL, *v = NULL, *raw = NULL;
	size_t tw, vw = 0, budget;
	int ret = -1;

	raw = strdup(text);
	if (!raw)
		goto done;
	sanitize(raw);
	t = cut(raw, cap > TEXT_MAX ? cap : TEXT_MAX, &tw);
	if (!t)
		goto done;
	if (!value) {
		c->text = t;
		c->width = tw;
		t = NULL;
		ret = 0;
		goto done;
	}
	free(raw);
	raw = strdup(value);
	if (!raw)
		goto done;
	sanitize(raw);
	budget = cap > tw + 4 + VALUE_MIN ? cap - tw - 4 : VALUE_MIN;
	v = cut(raw, budget, &vw);
	if (!v || asprintf(&c->text, "%s -> %s", t, v) < 0) {
		c->text = NULL;
		goto done;
	}
	c->width = tw + 4 + vw;
	ret = 0;
done:
	free(raw);
	free(t);
	free(v);
	return ret;
}

/* ---- the table ------------------------------------------------------------
 * The view's rows as cells: cut to the cap and sized, so that each column
 * is as wide as its widest cell. */

struct table {
	const struct ploom_view *v;
	struct cell *heads;     /* per lane: the task's name */
	size_t *widths;         /* per lane */
	struct cell *steps;     /* one per step */
	struct cell *waits;     /* per lane, deadlock only; NULL otherwise */
	size_t numw;            /* width of the step column */
	struct cell *wheres;    /* per step */
	size_t wherew;          /* width of the where column; 0: none */
	size_t wherecol;        /* where the where column starts on a line */
	size_t tagw;            /* width of the tag column; 0: no race */
};

static void cells_free(struct cell *cells, size_t n)
{
	size_t i;

	if (!cells)
		return;
	for (i = 0; i < n; i++)
		free(cells[i].text);
	free(cells);
}

static void table_release(struct table *t)
{
	size_t n = t->v->nrows ? t->v->nrows : 1;

	cells_free(t->steps, n);
	cells_free(t->waits, t->v->nlanes);
	cells_free(t->heads, t->v->nlanes);
	cells_free(t->wheres, n);
	free(t->widths);
}

static void widen(size_t *width, size_t w)
{
	if (w > *width)
		*width = w;
}

/* The bytes of the first line of s wrapped at width code points: up to
 * the last space that lets it fit, else after the last '/' or ':', else
 * width code points; *skip is what follows it before the next line (the
 * space a line breaks at). */
static size_t wrap_line(const char *s, size_t width, size_t *skip)
{
	size_t n = ploom_view_prefix(s, width), i;

	*skip = 0;
	if (!s[n])
		return n;
	if (s[n] == ' ') {
		*skip = 1;
		return n;
	}
	for (i = n; i > 1; i--) {
		if (s[i - 1] == ' ') {
			*skip = 1;
			return i - 1;
		}
	}
	for (i = n; i > 1; i--)
		if (s[i - 1] == '/' || s[i - 1] == ':')
			return i;
	return n;
}

/* The widest line of s (NULL: none) wrapped at width. */
static size_t wrapped_width(const char *s, size_t width)
{
	size_t n, skip, most = 0;
	char *line;

	while (s && *s) {
		n = wrap_line(s, width, &skip);
		line = strndup(s, n);
		widen(&most, line ? ploom_view_text_width(line) : width);
		free(line);
		s += n + skip;
	}
	return most;
}

static int table_build(struct table *t, const struct ploom_view *v, size_t cap)
{
	size_t i, c, n = v->nrows ? v->nrows : 1;
	char head[32];

	t->v = v;
	t->widths = calloc(v->nlanes, sizeof(*t->widths));
	t->heads = calloc(v->nlanes, sizeof(*t->heads));
	t->steps = calloc(n, sizeof(*t->steps));
	t->wheres = calloc(n, sizeof(*t->wheres));
	if (!t->widths || !t->heads || !t->steps || !t->wheres)
		return -1;
	for (c = 0; c < v->nlanes; c++) {
		if (cell_set(&t->heads[c], v->names[c], NULL, cap) < 0)
			return -1;
		t->widths[c] = t->heads[c].width;
	}
	for (i = 0; i < v->nrows; i++) {
		const struct ploom_view_row *r = &v->rows[i];
		if (cell_set(&t->steps[i], r->label, r->value, cap) < 0 ||
		    (r->where && cell_set(&t->wheres[i], r->where, NULL, (size_t)-1) < 0))
			return -1;
		widen(&t->widths[r->lane], t->steps[i].width);
		widen(&t->wherew, t->wheres[i].width);
		widen(&t->tagw, strlen(r->tags));
	}
	widen(&t->tagw, strlen(v->wait_tags));
	if (v->waits) {
		t->waits = calloc(v->nlanes, sizeof(*t->waits));
		if (!t->waits)
			return -1;
		for (i = 0; i < v->nwaits; i++) {
			c = v->waits[i].lane;
			free(t->waits[c].text);
			t->waits[c].text = NULL;
			if (cell_set(&t->waits[c], v->waits[i].label, NULL, cap) < 0)
				return -1;
			widen(&t->widths[c], t->waits[c].width);
		}
	}
	t->numw = (size_t)snprintf(head, sizeof(head), "%zu", v->nrows ? v->nrows - 1 : 0);
	widen(&t->numw, 4);
	if (t->wherew) {
		widen(&t->wherew, 5); /* "where" */
		t->wherecol = 3 + (t->tagw ? t->tagw + 1 : 0) + t->numw + 2;
		for (c = 0; c < v->nlanes; c++)
			t->wherecol += t->widths[c] + 2;
		/* the column wraps to end the line at PLOOM_RENDER_LINE, but
		 * keeps WHERE_MIN when the tasks' columns leave less */
		if (t->wherecol + WHERE_MIN < PLOOM_RENDER_LINE) {
			if (t->wherew > PLOOM_RENDER_LINE - t->wherecol)
				t->wherew = PLOOM_RENDER_LINE - t->wherecol;
		} else if (t->wherew > WHERE_MIN) {
			t->wherew = WHERE_MIN;
		}
		/* then as wide as its widest line once wrapped */
		cap = t->wherew;
		t->wherew = 5;
		for (i = 0; i < v->nrows; i++)
			widen(&t->wherew, wrapped_width(t->wheres[i].text, cap));
	}
	return 0;
}


/* The two mark characters, the race tags, the step column and its gap. */
static void row_start(struct writer *w, const struct table *t, int preempted, int failing,
		      const char *tags, const char *label)
{
	if (preempted) {
		color(w, C_YELLOW);
		put(w, "*");
		color(w, C_RESET);
	} else {
		put(w, " ");
	}
	if (failing) {
		color(w, C_RED);
		put(w, "!");
		color(w, C_RESET);
	} else {
		put(w, " ");
	}
	put(w, " ");
	if (t->tagw) {
		if (*tags) {
			color(w, C_CYAN);
			put(w, tags);
			color(w, C_RESET);
		}
		spaces(w, t->tagw - strlen(tags) + 1);
	}
	spaces(w, t->numw - strlen(label));
	put(w, label);
}

/* s wrapped at width code points, each line after the first starting at
 * column indent. */
static void put_wrapped(struct writer *w, const char *s, size_t width, size_t indent)
{
	size_t n, skip;
	char *line;

	for (;;) {
		n = wrap_line(s, width, &skip);
		line = strndup(s, n);
		if (!line) {
			/* unwrapped rather than lost */
			put_text(w, s, 0);
			return;
		}
		put_text(w, line, 0);
		free(line);
		s += n + skip;
		if (!*s)
			return;
		put(w, "\n");
		spaces(w, indent);
	}
}

/* After a row's last cell (in column c, `width` wide): the where column,
 * or nothing when the row has no place. */
static void row_where(struct writer *w, const struct table *t, size_t c, size_t width,
		      const struct cell *where)
{
	size_t k, pad = t->widths[c] - width;

	if (!where->text)
		return;
	for (k = c + 1; k < t->v->nlanes; k++)
		pad += t->widths[k] + 2;
	spaces(w, pad + 2);
	put_wrapped(w, where->text, t->wherew, t->wherecol);
}

/* Writes cells[0..nlanes) (NULL texts are empty), padding each to its
 * column, with nothing after the last non-empty one. */
static void row_cells(struct writer *w, const struct table *t, const struct cell *cells,
		      const char *code)
{
	size_t c, last = t->v->nlanes, pad = 2;

	while (last > 0 && !cells[last - 1].text)
		last--;
	for (c = 0; c < last; c++) {
		spaces(w, pad);
		if (cells[c].text) {
			if (code)
				color(w, code);
			put_text(w, cells[c].text, 0);
			if (code)
				color(w, C_RESET);
			pad = t->widths[c] - cells[c].width + 2;
		} else {
			pad = t->widths[c] + 2;
		}
	}
	put(w, "\n");
}

static void put_table(struct writer *w, const struct table *t)
{
	const struct ploom_view *v = t->v;
	char head[32];
	size_t i, c;

	row_start(w, t, 0, 0, "", "step");
	for (c = 0; c < v->nlanes; c++) {
		spaces(w, 2);
		color(w, C_BOLD);
		put_text(w, t->heads[c].text, 0);
		color(w, C_RESET);
		if (c + 1 < v->nlanes || t->wherew)
			spaces(w, t->widths[c] - t->heads[c].width);
	}
	if (t->wherew) {
		spaces(w, 2);
		color(w, C_BOLD);
		put(w, "where");
		color(w, C_RESET);
	}
	put(w, "\n   ");
	for (i = 0; i < t->numw + (t->tagw ? t->tagw + 1 : 0); i++)
		put(w, "-");
	for (c = 0; c < v->nlanes; c++) {
		put(w, "  ");
		for (i = 0; i < t->widths[c]; i++)
			put(w, "-");
	}
	if (t->wherew) {
		put(w, "  ");
		for (i = 0; i < t->wherew; i++)
			put(w, "-");
	}
	put(w, "\n");
	for (i = 0; i < v->nrows && !w->out.failed; i++) {
		const struct ploom_view_row *r = &v->rows[i];
		int failing = (long)i == v->failing;
		snprintf(head, sizeof(head), "%zu", i);
		row_start(w, t, r->preempted, failing, r->tags, head);
		/* every column before the step's is empty */
		for (c = 0; c < r->lane; c++)
			spaces(w, t->widths[c] + 2);
		spaces(w, 2);
		if (failing)
			color(w, C_RED);
		put_text(w, t->steps[i].text, 0);
		if (failing)
			color(w, C_RESET);
		row_where(w, t, r->lane, t->steps[i].width, &t->wheres[i]);
		put(w, "\n");
	}
	if (!v->nrows)
		put(w, "        (no steps)\n");
	if (t->waits) {
		row_start(w, t, 0, 1, v->wait_tags, "wait");
		row_cells(w, t, t->waits, C_RED);
	}
}

/* "a" or "a-c": the tags of the races the table shows. */
static void put_tag_range(struct writer *w, const struct ploom_view *v)
{
	char tag[4] = {ploom_view_race_tag(0), '\0', '\0', '\0'};

	if (v->nraces > 1) {
		tag[1] = '-';
		tag[2] = ploom_view_race_tag(v->nraces - 1 < 51 ? v->nraces - 1 : 51);
	}
	color(w, C_CYAN);
	put(w, tag);
	color(w, C_RESET);
}

static void put_legend(struct writer *w, const struct ploom_view *v)
{
	if (v->any_preempted) {
		color(w, C_YELLOW);
		put(w, "*");
		color(w, C_RESET);
		put(w, " preemption: a switch away from a task that could have continued\n");
	}
	if (v->mark_legend) {
		color(w, C_RED);
		put(w, "!");
		color(w, C_RESET);
		putf(w, " %s\n", v->mark_legend);
	}
	if (v->nraces) {
		put_tag_range(w, v);
		put(w, v->nraces > 1 ? " racing pairs" : " racing pair");
		put(w, ": steps of two tasks on one object that another schedule could run in "
		       "the other order");
		if (v->key >= 0)
			putf(w, "; %c is the race above", ploom_view_race_tag((size_t)v->key));
		put(w, "\n");
	}
	if (v->any_preempted || v->mark_legend || v->nraces)
		put(w, "\n");
}

/* ---- header and outcome --------------------------------------------------- */

static void key(struct writer *w, const char *name)
{
	put(w, name);
	spaces(w, KEY_WIDTH - strlen(name));
}

/* " (blob 1a2b3c4)": a git-style short id, as ploom-replay names them. */
static void put_blob(struct writer *w, const char *blob)
{
	char shortid[8];

	snprintf(shortid, sizeof(shortid), "%s", blob ? blob : "?");
	put(w, " (blob ");
	put_text(w, shortid, 0);
	put(w, ")");
}

/* Where the relative paths start: " at commit 89abcde, dirty", " at an
 * unborn HEAD", " in its project", " in its folder"; nothing for a root
 * this ploom does not know. */
static void put_root(struct writer *w, const struct ploom_source *src)
{
	char shortid[8];

	if (!strcmp(src->root, "repository")) {
		if (src->commit) {
			snprintf(shortid, sizeof(shortid), "%s", src->commit);
			put(w, " at commit ");
			put_text(w, shortid, 0);
		} else {
			put(w, " at an unborn HEAD");
		}
		if (src->dirty)
			put(w, ", dirty");
	} else if (!strcmp(src->root, "project")) {
		put(w, " in its project");
	} else if (!strcmp(src->root, "folder")) {
		put(w, " in its folder");
	}
}

/* The scenario's file with its fingerprint, then any other fingerprinted
 * file: relative to the source's root when the trace knows it (the
 * absolute path is on the "replay runs" line). */
static void put_sources(struct writer *w, const struct ploom_trace *tr)
{
	const char *file = tr->scenario.file;
	int rel = tr->source.root && tr->scenario.relpath;
	int file_done = 0;
	size_t i;

	if (file) {
		key(w, "source");
		put_text(w, rel ? tr->scenario.relpath : file, 0);
		for (i = 0; i < tr->nfingerprints && !file_done; i++) {
			if (tr->fingerprints[i].path && !strcmp(tr->fingerprints[i].path, file)) {
				put_blob(w, tr->fingerprints[i].blob);
				file_done = 1;
			}
		}
		if (rel)
			put_root(w, &tr->source);
		put(w, "\n");
	}
	for (i = 0; i < tr->nfingerprints; i++) {
		const struct ploom_fingerprint *f = &tr->fingerprints[i];
		if (file && f->path && !strcmp(f->path, file))
			continue;
		key(w, "source");
		if (rel && f->relpath)
			put_text(w, f->relpath, 0);
		else
			put_text(w, f->path ? f->path : "?", 0);
		put_blob(w, f->blob);
		put(w, "\n");
	}
}

/* What ploom-replay would run, by the same rule it applies: nothing when
 * the trace does not fingerprint its scenario file, or refused names
 * why it would refuse to run it from here. */
static void put_replay_runs(struct writer *w, const struct ploom_trace *tr, const char *refused)
{
	struct ploom_err why = {0, ""};
	char shortid[8];
	size_t i;

	key(w, "replay runs");
	if (refused || ploom_replay_check_trace(tr, &why) < 0) {
		put(w, "nothing: ");
		put_text(w, refused ? refused : why.msg, 0);
		put(w, "\n");
		return;
	}
	put_text(w, tr->scenario.qualname ? tr->scenario.qualname : "?", 0);
	put(w, " in ");
	put_text(w, tr->scenario.file, 0);
	for (i = 0; i < tr->nfingerprints; i++)
		if (!strcmp(tr->fingerprints[i].path, tr->scenario.file))
			break;
	snprintf(shortid, sizeof(shortid), "%s", tr->fingerprints[i].blob);
	put(w, ", only while its blob is ");
	put_text(w, shortid, 0);
	put(w, "\n");
}

/* The view's facts, with the source lines and what a replay runs after
 * the first of them. */
static void put_header(struct writer *w, const struct ploom_view *v, const char *refused)
{
	size_t i;

	for (i = 0; i < v->nfacts; i++) {
		if (i == PLOOM_VIEW_FACTS_BEFORE_SOURCE) {
			put_sources(w, v->trace);
			put_replay_runs(w, v->trace, refused);
		}
		key(w, v->facts[i].name);
		put_text(w, v->facts[i].value, 0);
		put(w, "\n");
	}
	put(w, "\n");
}

static void title(struct writer *w, const struct ploom_outcome *o)
{
	const char *code = C_YELLOW;

	if (ploom_outcome_is_failure(o->kind))
		code = C_RED;
	else if (o->kind == PLOOM_OUTCOME_PASS)
		code = C_GREEN;
	color(w, code);
	put(w, ploom_outcome_kind_name(o->kind));
	color(w, C_RESET);
	put(w, o->kind == PLOOM_OUTCOME_DIVERGENCE ? " " : ": ");
}

static void put_outcome(struct writer *w, const struct ploom_view *v)
{
	const struct ploom_run *run = &v->trace->run;
	const struct ploom_outcome *o = &run->outcome;
	size_t i;

	title(w, o);
	switch (o->kind) {
	case PLOOM_OUTCOME_DEADLOCK:
		put(w, "no task can run\n");
		for (i = 0; i < v->nwaits; i++) {
			const struct ploom_view_wait *wt = &v->waits[i];
			put(w, "  ");
			put_text(w, wt->who, 0);
			put(w, " ");
			put_text(w, wt->words, 0);
			if (wt->where) {
				put(w, " at ");
				put_text(w, wt->where, 0);
			}
			put(w, "\n");
		}
		break;
	default:
		put_text(w, v->outcome_words, 0);
		if (o->kind == PLOOM_OUTCOME_FAILURE && o->exc_message && *o->exc_message) {
			put(w, ": ");
			put_text(w, o->exc_message, 1);
		}
		put(w, "\n");
		if (v->stalls) {
			put(w, "  after ");
			put_text(w, v->stalls, 0);
			put(w, "\n");
		}
		if (o->kind == PLOOM_OUTCOME_FAILURE && o->traceback && *o->traceback) {
			put(w, "\n");
			put_block(w, o->traceback, "");
		}
		for (i = 0; i < v->nstacks; i++) {
			put(w, "  ");
			put_text(w, v->stacks[i], 0);
			put(w, "\n");
		}
		break;
	}
	if (o->output && *o->output) {
		put(w, "\noutput:\n");
		put_block(w, o->output, "  ");
	}
}

int ploom_render_trace(FILE *out, const struct ploom_trace *trace,
		       const struct ploom_render_opts *opts, struct ploom_err *err)
{
	struct writer w = {{out, 0, 0}, 0};
	struct ploom_view v = {0};
	struct table t = {.v = &v};
	size_t cap = PLOOM_RENDER_WIDTH;
	int ret = -1;

	if (opts) {
		w.color = opts->color;
		if (opts->width > 0)
			cap = opts->width < PLOOM_RENDER_MIN_WIDTH ? PLOOM_RENDER_MIN_WIDTH
								   : (size_t)opts->width;
	}
	if (ploom_view_build(&v, trace, err) < 0)
		goto done;
	if (table_build(&t, &v, cap) < 0) {
		ploom_err_oom(err);
		goto done;
	}
	put_header(&w, &v, opts ? opts->replay_refused : NULL);
	put_table(&w, &t);
	put(&w, "\n");
	put_legend(&w, &v);
	put_outcome(&w, &v);
	if (ploom_writer_finish(&w.out, err) < 0)
		goto done;
	ret = 0;
done:
	table_release(&t);
	ploom_view_release(&v);
	return ret;
}

/* As ploom-show draws a trace: "replay runs" names the file a replay
 * from here would run, by ploom-replay's own rule, or why it would run
 * nothing. */
int ploom_format_text(FILE *out, struct ploom_trace *trace,
		      const struct ploom_render_opts *opts, struct ploom_err *err)
{
	struct ploom_render_opts here = {0, PLOOM_RENDER_WIDTH, NULL};
	struct ploom_err why = {0, ""};

	if (opts)
		here = *opts;
	if (ploom_replay_place(trace, &why) < 0) {
		if (why.kind == PLOOM_ERR_NOMEM)
			return ploom_err_oom(err);
		here.replay_refused = why.msg;
	}
	return ploom_render_trace(out, trace, &here, err);
}
