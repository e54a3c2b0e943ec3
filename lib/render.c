/* The trace renderer; render.h documents what it draws. */
#include "render.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

#define KEY_WIDTH 13 /* "preemptions" and two spaces */

#define C_RESET "\033[0m"
#define C_BOLD "\033[1m"
#define C_RED "\033[1;31m"
#define C_GREEN "\033[32m"
#define C_YELLOW "\033[33m"

/* ---- output ------------------------------------------------------------
 * Every write goes through these helpers: the first failure is kept with
 * its errno and the later writes are skipped, so the body of the renderer
 * reads straight and is checked once at the end. */

struct writer {
	FILE *f;
	int color;
	int failed;
	int error;      /* errno of the write that failed */
};

static void put_bytes(struct writer *w, const char *s, size_t n)
{
	if (w->failed || !n)
		return;
	errno = 0;
	if (fwrite(s, 1, n, w->f) != n) {
		w->failed = 1;
		w->error = errno ? errno : EIO;
	}
}

static void put(struct writer *w, const char *s)
{
	put_bytes(w, s, strlen(s));
}

static void __attribute__((format(printf, 2, 3))) putf(struct writer *w, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (w->failed)
		return;
	errno = 0;
	va_start(ap, fmt);
	n = vfprintf(w->f, fmt, ap);
	va_end(ap);
	if (n < 0) {
		w->failed = 1;
		w->error = errno ? errno : EIO;
	}
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

static int is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

void ploom_put_printable(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc(is_control((unsigned char)*s) ? '?' : *s, out);
}

/* Writes a string of the trace; control characters become '?' (except
 * newlines and tabs when multiline), so a trace cannot move the cursor or
 * change colours. */
static void put_text(struct writer *w, const char *s, int multiline)
{
	const char *run = s;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (!is_control(c) || (multiline && (c == '\n' || c == '\t')))
			continue;
		put_bytes(w, run, (size_t)(s - run));
		put(w, "?");
		run = s + 1;
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

/* UTF-8 code points: every byte that does not continue a sequence. */
static size_t text_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			n++;
	return n;
}

/* Replaces control characters with '?' in place. */
static void sanitize(char *s)
{
	for (; *s; s++)
		if (is_control((unsigned char)*s))
			*s = '?';
}

/* The first n code points of s (malloc'd) and "..." when s is longer
 * than max code points; else a copy.  NULL when out of memory. */
static char *cut(const char *s, size_t max, size_t *out_width)
{
	size_t i, n = 0, w = text_width(s);
	char *p;

	if (w <= max) {
		*out_width = w;
		return strdup(s);
	}
	for (i = 0; s[i]; i++) {
		if (((unsigned char)s[i] & 0xC0) != 0x80) {
			if (n == max - 3)
				break;
			n++;
		}
	}
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
 * object) is cut only beyond max(cap, TEXT_MAX), which no real operation
 * reaches.  Returns 0, or -1 when out of memory. */
#define VALUE_MIN 8
#define TEXT_MAX 32
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

static char *step_text(const struct ploom_step *s)
{
	const char *op = ploom_op_name(s->op);
	const char *mode = "";
	char *text;

	if (s->op == PLOOM_OP_ACQUIRE && s->mode == PLOOM_ACQUIRE_NONBLOCKING)
		mode = " (nonblocking)";
	else if (s->mode == PLOOM_ACQUIRE_TIMED)
		mode = " (timeout)"; /* a timed acquire or join */
	if (asprintf(&text, "%s%s%s%s", op, s->object ? " " : "", s->object ? s->object : "",
		     mode) < 0)
		return NULL;
	return text;
}

static char *wait_text(const struct ploom_wait *wt)
{
	const char *op = ploom_op_name(wt->op);
	char *text;
	int n;

	/* a join's holder is the joined thread itself, already named */
	if (wt->holder >= 0 && wt->op != PLOOM_OP_JOIN)
		n = asprintf(&text, "%s %s (held by %d)", op, wt->object ? wt->object : "?",
			     wt->holder);
	else
		n = asprintf(&text, "%s%s%s", op, wt->object ? " " : "",
			     wt->object ? wt->object : "");
	return n < 0 ? NULL : text;
}

/* ---- the table ------------------------------------------------------------ */

struct table {
	int *tasks;             /* the columns: distinct task ids, ascending */
	size_t ntasks;
	size_t *widths;         /* per column */
	struct cell *steps;     /* one per step */
	size_t *column;         /* the column of each step */
	char *preempted;        /* 1 per step that is a preemption */
	long failing;           /* the step marked '!', or -1 */
	struct cell *waits;     /* per column, deadlock only; NULL otherwise */
	size_t numw;            /* width of the step column */
};

static void table_release(struct table *t, size_t nsteps)
{
	size_t i;

	if (t->steps)
		for (i = 0; i < nsteps; i++)
			free(t->steps[i].text);
	if (t->waits)
		for (i = 0; i < t->ntasks; i++)
			free(t->waits[i].text);
	free(t->tasks);
	free(t->widths);
	free(t->steps);
	free(t->column);
	free(t->preempted);
	free(t->waits);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static size_t column_of(const struct table *t, int task)
{
	const int *p = bsearch(&task, t->tasks, t->ntasks, sizeof(int), cmp_int);

	return p ? (size_t)(p - t->tasks) : 0;
}

static int table_build(struct table *t, const struct ploom_trace *trace, size_t cap)
{
	const struct ploom_run *run = &trace->run;
	const struct ploom_outcome *o = &run->outcome;
	size_t i, c, n = run->nsteps ? run->nsteps : 1;
	char head[32];
	long last;

	if (ploom_run_tasks(&t->tasks, &t->ntasks, run, NULL) < 0)
		return -1;
	t->widths = calloc(t->ntasks, sizeof(*t->widths));
	t->steps = calloc(n, sizeof(*t->steps));
	t->column = calloc(n, sizeof(*t->column));
	t->preempted = calloc(n, 1);
	if (!t->widths || !t->steps || !t->column || !t->preempted)
		return -1;
	for (c = 0; c < t->ntasks; c++)
		t->widths[c] = (size_t)snprintf(head, sizeof(head), "task %d", t->tasks[c]);
	for (i = 0; i < run->nsteps; i++) {
		const struct ploom_step *s = &run->steps[i];
		char *text = step_text(s);
		int rc = text ? cell_set(&t->steps[i], text, s->value, cap) : -1;
		free(text);
		if (rc < 0)
			return -1;
		c = column_of(t, s->task);
		t->column[i] = c;
		if (t->steps[i].width > t->widths[c])
			t->widths[c] = t->steps[i].width;
		t->preempted[i] = (char)ploom_run_is_preemption(run, i);
	}
	if (o->kind == PLOOM_OUTCOME_DEADLOCK && o->nwaits) {
		t->waits = calloc(t->ntasks, sizeof(*t->waits));
		if (!t->waits)
			return -1;
		for (i = 0; i < o->nwaits; i++) {
			c = column_of(t, o->waits[i].task);
			free(t->waits[c].text);
			char *text = wait_text(&o->waits[i]);
			int rc = text ? cell_set(&t->waits[c], text, NULL, cap) : -1;
			free(text);
			if (rc < 0)
				return -1;
			if (t->waits[c].width > t->widths[c])
				t->widths[c] = t->waits[c].width;
		}
	}
	t->failing = ploom_run_failing_step(run);
	last = run->nsteps ? (long)run->nsteps - 1 : 0;
	t->numw = (size_t)snprintf(head, sizeof(head), "%ld", last);
	if (t->numw < 4)
		t->numw = 4;
	return 0;
}

/* The two mark characters, the step column and its gap. */
static void row_start(struct writer *w, const struct table *t, int preempted, int failing,
		      const char *label)
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
	spaces(w, t->numw - strlen(label));
	put(w, label);
}

/* Writes cells[0..ntasks) (NULL texts are empty), padding each to its
 * column, with nothing after the last non-empty one. */
static void row_cells(struct writer *w, const struct table *t, const struct cell *cells,
		      const char *code)
{
	size_t c, last = t->ntasks, pad = 2;

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

static void put_table(struct writer *w, const struct table *t, const struct ploom_run *run)
{
	char head[32];
	size_t i, c;

	row_start(w, t, 0, 0, "step");
	for (c = 0; c < t->ntasks; c++) {
		size_t n = (size_t)snprintf(head, sizeof(head), "task %d", t->tasks[c]);
		spaces(w, 2);
		color(w, C_BOLD);
		put(w, head);
		color(w, C_RESET);
		if (c + 1 < t->ntasks)
			spaces(w, t->widths[c] - n);
	}
	put(w, "\n   ");
	for (i = 0; i < t->numw; i++)
		put(w, "-");
	for (c = 0; c < t->ntasks; c++) {
		put(w, "  ");
		for (i = 0; i < t->widths[c]; i++)
			put(w, "-");
	}
	put(w, "\n");
	for (i = 0; i < run->nsteps && !w->failed; i++) {
		int failing = (long)i == t->failing;
		snprintf(head, sizeof(head), "%zu", i);
		row_start(w, t, t->preempted[i], failing, head);
		/* every column before the step's is empty */
		for (c = 0; c < t->column[i]; c++)
			spaces(w, t->widths[c] + 2);
		spaces(w, 2);
		if (failing)
			color(w, C_RED);
		put_text(w, t->steps[i].text, 0);
		if (failing)
			color(w, C_RESET);
		put(w, "\n");
	}
	if (!run->nsteps)
		put(w, "        (no steps)\n");
	if (t->waits) {
		row_start(w, t, 0, 1, "wait");
		row_cells(w, t, t->waits, C_RED);
	}
}

static void put_legend(struct writer *w, const struct table *t, const struct ploom_run *run)
{
	const char *what = NULL;
	size_t i;
	int any = 0;

	for (i = 0; i < run->nsteps; i++)
		any |= t->preempted[i];
	if (any) {
		color(w, C_YELLOW);
		put(w, "*");
		color(w, C_RESET);
		put(w, " preemption: a switch away from a task that could have continued\n");
	}
	switch (run->outcome.kind) {
	case PLOOM_OUTCOME_FAILURE:
		what = "the failing step: the last step of the task that raised";
		break;
	case PLOOM_OUTCOME_CRASH:
		what = "the last step before the crash";
		break;
	case PLOOM_OUTCOME_EXIT:
		what = "the last step before the exit";
		break;
	case PLOOM_OUTCOME_TIMEOUT:
		what = "the last step before the timeout";
		break;
	default:
		break;
	}
	if (t->failing < 0)
		what = NULL;
	if (t->waits)
		what = "wait: what each blocked task waits for (the deadlock)";
	if (what) {
		color(w, C_RED);
		put(w, "!");
		color(w, C_RESET);
		putf(w, " %s\n", what);
	}
	if (any || what)
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
 * unborn HEAD", " in its folder"; nothing for a root this ploom does not
 * know. */
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
 * the trace does not fingerprint its scenario file. */
static void put_replay_runs(struct writer *w, const struct ploom_trace *tr)
{
	struct ploom_err why = {0, ""};
	char shortid[8];
	size_t i;

	key(w, "replay runs");
	if (ploom_replay_check_trace(tr, &why) < 0) {
		put(w, "nothing: ");
		put_text(w, why.msg, 0);
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

static void put_header(struct writer *w, const struct ploom_trace *tr)
{
	const struct ploom_config *c = &tr->config;
	const struct ploom_run *run = &tr->run;
	size_t i;

	key(w, "scenario");
	put_text(w, tr->scenario.module ? tr->scenario.module : "?", 0);
	put(w, ":");
	put_text(w, tr->scenario.qualname ? tr->scenario.qualname : "?", 0);
	put(w, "\n");
	key(w, "target");
	put_text(w, tr->scenario.target ? tr->scenario.target : "?", 0);
	put(w, "\n");
	put_sources(w, tr);
	put_replay_runs(w, tr);
	key(w, "python");
	put_text(w, tr->python.implementation ? tr->python.implementation : "?", 0);
	put(w, " ");
	put_text(w, tr->python.version ? tr->python.version : "?", 0);
	put(w, tr->python.gil ? ", GIL enabled\n" : ", GIL disabled\n");
	key(w, "hash seed");
	put_text(w, tr->hash_seed ? tr->hash_seed : "?", 0);
	put(w, "\n");
	key(w, "config");
	put(w, "reduction ");
	put_text(w, c->reduction ? c->reduction : "?", 0);
	if (c->max_preemptions < 0)
		put(w, ", max_preemptions none");
	else
		putf(w, ", max_preemptions %d", c->max_preemptions);
	if (c->max_steps > 0)
		putf(w, ", max_steps %ld", c->max_steps);
	else
		put(w, ", max_steps none");
	if (c->schedule_timeout_s > 0)
		putf(w, ", schedule_timeout %g s", c->schedule_timeout_s);
	else
		put(w, ", schedule_timeout none");
	/* only when there is one: most traces patch nothing */
	for (i = 0; i < c->npatch; i++) {
		put(w, i ? "," : ", patch ");
		put_text(w, c->patch[i], 0);
	}
	put(w, "\n");
	key(w, "steps");
	putf(w, "%zu (%zu choice%s)\n", run->nsteps, run->nchoices, run->nchoices == 1 ? "" : "s");
	if (tr->id) {
		key(w, "id");
		put_text(w, tr->id, 0);
		put(w, "\n");
	}
	key(w, "preemptions");
	putf(w, "%d", run->preemptions);
	if (tr->minimized_from >= 0)
		putf(w, " (minimized from %d)", tr->minimized_from);
	put(w, "\n");
	key(w, "outcome");
	put_text(w, run->outcome.summary ? run->outcome.summary
					 : ploom_outcome_kind_name(run->outcome.kind), 0);
	put(w, "\n\n");
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

static void put_outcome(struct writer *w, const struct ploom_outcome *o)
{
	size_t i;

	title(w, o);
	switch (o->kind) {
	case PLOOM_OUTCOME_PASS:
		put(w, "every task finished\n");
		break;
	case PLOOM_OUTCOME_FAILURE:
		putf(w, "task %d raised ", o->task);
		put_text(w, o->exc_type ? o->exc_type : "?", 0);
		if (o->exc_message && *o->exc_message) {
			put(w, ": ");
			put_text(w, o->exc_message, 1);
		}
		put(w, "\n");
		if (o->traceback && *o->traceback) {
			put(w, "\n");
			put_block(w, o->traceback, "");
		}
		break;
	case PLOOM_OUTCOME_DEADLOCK:
		put(w, "no task can run\n");
		for (i = 0; i < o->nwaits; i++) {
			const struct ploom_wait *wt = &o->waits[i];
			putf(w, "  task %d waits to ", wt->task);
			put_text(w, ploom_op_name(wt->op), 0);
			put(w, " ");
			put_text(w, wt->object ? wt->object : "?", 0);
			if (wt->holder >= 0 && wt->op != PLOOM_OP_JOIN)
				putf(w, " held by task %d", wt->holder);
			put(w, "\n");
		}
		break;
	case PLOOM_OUTCOME_DIVERGENCE:
		putf(w, "at step %ld: ", o->divergence_index);
		put_text(w, o->divergence_message ? o->divergence_message : "", 0);
		put(w, "\n");
		break;
	default: {
		/* the summary already says it all: drop its "kind: " */
		const char *s = o->summary ? o->summary : "";
		const char *name = ploom_outcome_kind_name(o->kind);
		size_t n = strlen(name);
		if (!strncmp(s, name, n) && !strncmp(s + n, ": ", 2))
			s += n + 2;
		put_text(w, s, 0);
		put(w, "\n");
		break;
	}
	}
	if (o->output && *o->output) {
		put(w, "\noutput:\n");
		put_block(w, o->output, "  ");
	}
}

int ploom_render_trace(FILE *out, const struct ploom_trace *trace,
		       const struct ploom_render_opts *opts, struct ploom_err *err)
{
	struct writer w = {out, 0, 0, 0};
	struct table t = {0};
	size_t cap = PLOOM_RENDER_WIDTH;
	int ret = -1;

	if (opts) {
		w.color = opts->color;
		if (opts->width > 0)
			cap = opts->width < PLOOM_RENDER_MIN_WIDTH ? PLOOM_RENDER_MIN_WIDTH
								   : (size_t)opts->width;
	}
	if (table_build(&t, trace, cap) < 0) {
		ploom_err_oom(err);
		goto done;
	}
	put_header(&w, trace);
	put_table(&w, &t, &trace->run);
	put(&w, "\n");
	put_legend(&w, &t, &trace->run);
	put_outcome(&w, &trace->run.outcome);
	if (!w.failed) {
		errno = 0;
		if (fflush(out) == EOF) {
			w.failed = 1;
			w.error = errno ? errno : EIO;
		}
	}
	if (w.failed) {
		ploom_err_set(err, PLOOM_ERR_SYSTEM, "write error: %s", strerror(w.error));
		errno = w.error;
		goto done;
	}
	ret = 0;
done:
	table_release(&t, trace->run.nsteps ? trace->run.nsteps : 1);
	return ret;
}
