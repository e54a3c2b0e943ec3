/* The HTML rendering of a trace; html.h documents what it draws. */
#include "html.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "races.h"
#include "writer.h"

/* ---- output: writer.h's, under short names ---- */

static void put_bytes(struct ploom_writer *w, const char *s, size_t n)
{
	ploom_write_bytes(w, s, n);
}

static void put(struct ploom_writer *w, const char *s)
{
	ploom_write(w, s);
}

/* For our own markup and numbers only: never a string of the trace. */
static void __attribute__((format(printf, 2, 3))) putf(struct ploom_writer *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ploom_vwritef(w, fmt, ap);
	va_end(ap);
}

/* Writes a string of the trace as HTML text or attribute value: the five
 * characters that markup gives a meaning to become entities, control
 * characters become '?' (except newlines and tabs when multiline), so no
 * string can open a tag, close an attribute or hide text. */
static void put_esc(struct ploom_writer *w, const char *s, int multiline)
{
	const char *run = s;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		const char *rep;

		switch (c) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&#39;"; break;
		default:
			if ((c >= 0x20 && c != 0x7f) || (multiline && (c == '\n' || c == '\t')))
				continue;
			rep = "?";
			break;
		}
		put_bytes(w, run, (size_t)(s - run));
		put(w, rep);
		run = s + 1;
	}
	put_bytes(w, run, (size_t)(s - run));
}

/* put_esc() of s, or of "?" when the trace has no such string. */
static void put_esc_or(struct ploom_writer *w, const char *s)
{
	put_esc(w, s ? s : "?", 0);
}

/* ---- what the boxes and lanes say -------------------------------------- */

/* A step's caption, whole, malloc'd, or NULL when out of memory: the
 * text rendering's label (ploom_run_step_label()), then " -> VALUE". */
static char *step_caption(const struct ploom_run *run, const struct ploom_step *s)
{
	char *label = ploom_run_step_label(run, s), *text = NULL;

	if (!label || !s->value)
		return label;
	if (asprintf(&text, "%s -> %s", label, s->value) < 0)
		text = NULL;
	free(label);
	return text;
}

/* UTF-8 code points: every byte that does not continue a sequence. */
static size_t text_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			n++;
	return n;
}

/* Cuts s in place to PLOOM_HTML_CAPTION_MAX code points, the last three
 * "...", on a code point's boundary; s must be longer than that. */
static void cut_caption(char *s)
{
	size_t i, n = 0;

	for (i = 0; s[i]; i++) {
		if (((unsigned char)s[i] & 0xC0) != 0x80) {
			if (n == PLOOM_HTML_CAPTION_MAX - 3)
				break;
			n++;
		}
	}
	memcpy(s + i, "...", 4);
}

/* ---- layout ---------------------------------------------------------------
 * In pixels.  Text is 12 px DejaVu Sans Mono (or the browser's monospace),
 * whose advance is 0.6 em: 7.25 px a character, rounded up, sizes the
 * boxes without a script to measure them.  Coordinates are longs: a
 * trace of many tasks makes a page wider than an int counts. */

#define BOX_H 18L       /* a box of one line of text */
#define LINE_PX 14L     /* each further line */
#define BASELINE 13L    /* of a box's first line, from its top */
#define ROW_GAP 4L
#define HEAD_H 28L      /* the lane titles */
#define PAD 8L          /* text inside a box */
#define MARGIN 12L      /* box to lane edge: room for the arrows */
#define LANE_MIN 120L
#define GUTTER_MARK 16L /* the '*' and '!' left of the numbers */

static long text_px(size_t chars)
{
	return (long)((chars * 29 + 3) / 4);
}

struct box {
	char *caption;  /* cut to PLOOM_HTML_CAPTION_MAX */
	char *whole;    /* the whole caption when it was cut, else NULL */
	char *where;    /* its second line, ploom_where_label(), or NULL */
};

struct layout {
	int *tasks;             /* one lane each, ascending */
	size_t ntasks;
	char **titles;          /* per lane */
	long *lane_x, *lane_w;  /* per lane */
	struct box *boxes;      /* per step */
	size_t *lane_of;        /* per step */
	/* the steps lane by lane, each lane's in order: lane l's are
	 * by_lane[lane_start[l] .. lane_start[l + 1]) */
	size_t *by_lane, *lane_start;
	struct box *waits;      /* per lane, a deadlock's; NULL otherwise */
	size_t wait_row;        /* the row of the waits, after the steps' */
	long failing;           /* ploom_run_failing_step() */
	struct ploom_race *races;       /* ploom_trace_races() */
	size_t nraces;
	/* the places of every box and race tooltip: built once, as building
	 * them reads every step */
	struct ploom_short_names *sn;
	long key;               /* ploom_races_key(), or -1 */
	long lines;             /* text lines in a box */
	long row_h;
	long gutter_w;
	long width, height;
};

static void box_release(struct box *b)
{
	free(b->caption);
	free(b->whole);
	free(b->where);
}

static void layout_release(struct layout *lay, size_t nsteps)
{
	size_t i;

	for (i = 0; lay->titles && i < lay->ntasks; i++)
		free(lay->titles[i]);
	for (i = 0; lay->boxes && i < nsteps; i++)
		box_release(&lay->boxes[i]);
	for (i = 0; lay->waits && i < lay->ntasks; i++)
		box_release(&lay->waits[i]);
	free(lay->tasks);
	free(lay->titles);
	free(lay->lane_x);
	free(lay->lane_w);
	free(lay->boxes);
	free(lay->lane_of);
	free(lay->by_lane);
	free(lay->lane_start);
	free(lay->waits);
	free(lay->races);
	ploom_short_names_free(lay->sn);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static size_t lane_of_task(const struct layout *lay, int task)
{
	const int *p = bsearch(&task, lay->tasks, lay->ntasks, sizeof(int), cmp_int);

	return p ? (size_t)(p - lay->tasks) : 0;
}

/* Takes caption (malloc'd, or NULL after an allocation failed) into b,
 * cut, keeping it whole for the tooltip when it had to be cut; widens
 * *widest to its width.  Returns 0, or -1 when out of memory. */
static int box_set(struct box *b, char *caption, size_t *widest)
{
	size_t n;

	if (!caption)
		return -1;
	b->caption = caption;
	n = text_width(caption);
	if (n > PLOOM_HTML_CAPTION_MAX) {
		b->whole = strdup(caption);
		if (!b->whole)
			return -1;
		cut_caption(caption);
		n = PLOOM_HTML_CAPTION_MAX;
	}
	if (n > *widest)
		*widest = n;
	return 0;
}

/* Sets b's second line to where the step stopped, widening *widest.
 * Returns 0 (no line for a step that stopped nowhere known), or -1 when
 * out of memory. */
static int where_set(struct box *b, const struct ploom_short_names *sn,
		     const struct ploom_where *where, size_t *widest)
{
	size_t n;

	if (ploom_where_label(&b->where, sn, where) < 0)
		return -1;
	if (!b->where)
		return 0;
	n = text_width(b->where);
	if (n > PLOOM_HTML_CAPTION_MAX) {
		cut_caption(b->where);
		n = PLOOM_HTML_CAPTION_MAX;
	}
	if (n > *widest)
		*widest = n;
	return 0;
}

/* Groups the steps by lane (a counting sort, stable), so that drawing the
 * lanes one after another takes one pass over the steps, however many
 * tasks the trace names.  Returns 0, or -1 when out of memory. */
static int group_by_lane(struct layout *lay, size_t nsteps)
{
	size_t i, l, *next;

	lay->by_lane = calloc(nsteps ? nsteps : 1, sizeof(*lay->by_lane));
	lay->lane_start = calloc(lay->ntasks + 1, sizeof(*lay->lane_start));
	next = calloc(lay->ntasks, sizeof(*next));
	if (!lay->by_lane || !lay->lane_start || !next) {
		free(next);
		return -1;
	}
	for (i = 0; i < nsteps; i++)
		lay->lane_start[lay->lane_of[i] + 1]++;
	for (l = 0; l < lay->ntasks; l++) {
		lay->lane_start[l + 1] += lay->lane_start[l];
		next[l] = lay->lane_start[l];
	}
	for (i = 0; i < nsteps; i++)
		lay->by_lane[next[lay->lane_of[i]]++] = i;
	free(next);
	return 0;
}

static int layout_build(struct layout *lay, const struct ploom_trace *trace)
{
	const struct ploom_run *run = &trace->run;
	const struct ploom_outcome *o = &run->outcome;
	size_t i, l, n = run->nsteps ? run->nsteps : 1, rows, *widest = NULL;
	struct ploom_err why = {0, ""};
	char num[32];
	long x;
	int ret = -1;

	if (ploom_run_tasks(&lay->tasks, &lay->ntasks, run, NULL) < 0)
		return -1;
	lay->titles = calloc(lay->ntasks, sizeof(*lay->titles));
	lay->lane_x = calloc(lay->ntasks, sizeof(*lay->lane_x));
	lay->lane_w = calloc(lay->ntasks, sizeof(*lay->lane_w));
	lay->boxes = calloc(n, sizeof(*lay->boxes));
	lay->lane_of = calloc(n, sizeof(*lay->lane_of));
	widest = calloc(lay->ntasks, sizeof(*widest));
	if (!lay->titles || !lay->lane_x || !lay->lane_w || !lay->boxes || !lay->lane_of ||
	    !widest)
		goto done;
	for (l = 0; l < lay->ntasks; l++) {
		lay->titles[l] = ploom_run_task_name(run, lay->tasks[l]);
		if (!lay->titles[l])
			goto done;
		widest[l] = text_width(lay->titles[l]);
	}
	if (ploom_short_names_new(&lay->sn, run, NULL) < 0)
		goto done;
	lay->lines = 1;
	for (i = 0; i < run->nsteps; i++) {
		l = lane_of_task(lay, run->steps[i].task);
		lay->lane_of[i] = l;
		if (box_set(&lay->boxes[i], step_caption(run, &run->steps[i]), &widest[l]) < 0 ||
		    where_set(&lay->boxes[i], lay->sn, &run->steps[i].where, &widest[l]) < 0)
			goto done;
		if (lay->boxes[i].where)
			lay->lines = 2;
	}
	if (group_by_lane(lay, run->nsteps) < 0)
		goto done;
	if (o->kind == PLOOM_OUTCOME_DEADLOCK && o->nwaits) {
		lay->waits = calloc(lay->ntasks, sizeof(*lay->waits));
		if (!lay->waits)
			goto done;
		for (i = 0; i < o->nwaits; i++) {
			l = lane_of_task(lay, o->waits[i].task);
			box_release(&lay->waits[l]);
			memset(&lay->waits[l], 0, sizeof(lay->waits[l]));
			if (box_set(&lay->waits[l], ploom_run_wait_label(run, &o->waits[i]),
				    &widest[l]) < 0 ||
			    where_set(&lay->waits[l], lay->sn, &o->waits[i].where, &widest[l]) < 0)
				goto done;
			if (lay->waits[l].where)
				lay->lines = 2;
		}
	}
	lay->failing = ploom_run_failing_step(run);
	/* a trace too large to analyse shows no race, as the text does */
	lay->key = -1;
	if (ploom_trace_races(&lay->races, &lay->nraces, trace, &why) < 0) {
		if (why.kind == PLOOM_ERR_NOMEM)
			goto done;
	} else {
		lay->key = ploom_races_key(trace, lay->races, lay->nraces);
	}
	lay->row_h = BOX_H + (lay->lines - 1) * LINE_PX + ROW_GAP;
	n = (size_t)snprintf(num, sizeof(num), "%zu", run->nsteps ? run->nsteps - 1 : 0);
	lay->gutter_w = GUTTER_MARK + text_px(n < 4 ? 4 : n) + PAD;
	x = lay->gutter_w;
	for (l = 0; l < lay->ntasks; l++) {
		long w = text_px(widest[l]) + 2 * (PAD + MARGIN);
		lay->lane_x[l] = x;
		lay->lane_w[l] = w < LANE_MIN ? LANE_MIN : w;
		x += lay->lane_w[l];
	}
	/* with no steps, row 0 says so */
	lay->wait_row = run->nsteps ? run->nsteps : 1;
	rows = lay->wait_row + (lay->waits ? 1 : 0);
	lay->width = x;
	lay->height = (long)rows * lay->row_h;
	ret = 0;
done:
	free(widest);
	return ret;
}

/* The top of row r's box, in the diagram under the lane titles. */
static long row_y(const struct layout *lay, size_t r)
{
	return (long)r * lay->row_h + ROW_GAP / 2;
}

static long box_h(const struct layout *lay)
{
	return BOX_H + (lay->lines - 1) * LINE_PX;
}

/* ---- the diagram ------------------------------------------------------------ */

static void put_box(struct ploom_writer *w, const struct layout *lay, size_t lane, size_t row,
		    const struct box *b)
{
	long x = lay->lane_x[lane] + MARGIN, y = row_y(lay, row);

	if (b->whole) {
		put(w, "<title>");
		put_esc(w, b->whole, 0);
		put(w, "</title>");
	}
	putf(w, "<rect x=\"%ld\" y=\"%ld\" width=\"%ld\" height=\"%ld\" rx=\"3\"/>", x, y,
	     lay->lane_w[lane] - 2 * MARGIN, box_h(lay));
	putf(w, "<text x=\"%ld\" y=\"%ld\">", x + PAD, y + BASELINE);
	put_esc(w, b->caption, 0);
	put(w, "</text>");
	if (b->where) {
		putf(w, "<text class=\"where\" x=\"%ld\" y=\"%ld\">", x + PAD,
		     y + BASELINE + LINE_PX);
		put_esc(w, b->where, 0);
		put(w, "</text>");
	}
}

static void put_lane(struct ploom_writer *w, const struct layout *lay, size_t lane)
{
	int task = lay->tasks[lane];
	size_t k;

	putf(w, "<g class=\"lane\" id=\"lane-%d\" data-task=\"%d\">\n", task, task);
	for (k = lay->lane_start[lane]; k < lay->lane_start[lane + 1] && !w->failed; k++) {
		size_t i = lay->by_lane[k];
		putf(w, "<g class=\"step%s\" id=\"step-%zu\" data-task=\"%d\">",
		     (long)i == lay->failing ? " failing" : "", i, task);
		put_box(w, lay, lane, i, &lay->boxes[i]);
		put(w, "</g>\n");
	}
	if (lay->waits && lay->waits[lane].caption) {
		putf(w, "<g class=\"wait\" data-task=\"%d\">", task);
		put_box(w, lay, lane, lay->wait_row, &lay->waits[lane]);
		put(w, "</g>\n");
	}
	put(w, "</g>\n");
}

/* The lanes' backgrounds, in an SVG of height h: a band per lane. */
static void put_bands(struct ploom_writer *w, const struct layout *lay, long h)
{
	size_t l;

	for (l = 0; l < lay->ntasks && !w->failed; l++)
		putf(w, "<rect class=\"band%s\" x=\"%ld\" y=\"0\" width=\"%ld\" height=\"%ld\"/>\n",
		     l % 2 ? " odd" : "", lay->lane_x[l], lay->lane_w[l], h);
}

/* The lane titles, in an SVG of their own that stays at the top of the
 * window while the steps scroll under it (position: sticky). */
static void put_heads(struct ploom_writer *w, const struct layout *lay)
{
	size_t l;

	putf(w, "<svg class=\"heads\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%ld\" "
		"height=\"%ld\">\n",
	     lay->width, HEAD_H);
	put_bands(w, lay, HEAD_H);
	putf(w, "<text class=\"n\" x=\"%ld\" y=\"19\">step</text>\n", lay->gutter_w - PAD);
	for (l = 0; l < lay->ntasks && !w->failed; l++) {
		putf(w, "<text class=\"lane-title\" data-task=\"%d\" x=\"%ld\" y=\"19\">",
		     lay->tasks[l], lay->lane_x[l] + MARGIN);
		put_esc(w, lay->titles[l], 0);
		put(w, "</text>\n");
	}
	put(w, "</svg>\n");
}

/* The step numbers, and the marks beside them. */
static void put_gutter(struct ploom_writer *w, const struct layout *lay, const struct ploom_run *run)
{
	long x = lay->gutter_w - PAD, y;
	size_t i;

	put(w, "<g class=\"gutter\">\n");
	for (i = 0; i < run->nsteps && !w->failed; i++) {
		y = row_y(lay, i) + BASELINE;
		putf(w, "<text class=\"n\" x=\"%ld\" y=\"%ld\">%zu</text>", x, y, i);
		if (ploom_run_is_preemption(run, i))
			putf(w, "<text class=\"mark preemption\" x=\"4\" y=\"%ld\">*</text>", y);
		if ((long)i == lay->failing)
			putf(w, "<text class=\"mark failing\" x=\"4\" y=\"%ld\">!</text>", y);
		put(w, "\n");
	}
	if (!run->nsteps)
		putf(w, "<text class=\"n\" x=\"%ld\" y=\"%ld\">(no steps)</text>\n",
		     lay->lane_x[0] + MARGIN + text_px(10), row_y(lay, 0) + BASELINE);
	if (lay->waits) {
		y = row_y(lay, lay->wait_row) + BASELINE;
		putf(w, "<text class=\"mark failing\" x=\"4\" y=\"%ld\">!</text>"
			"<text class=\"n\" x=\"%ld\" y=\"%ld\">wait</text>\n",
		     y, x, y);
	}
	put(w, "</g>\n");
}

/* The kinds of arrow, each with its arrowhead (an SVG marker) and colour
 * (the style sheet's .arrow.KIND and .head-KIND). */
static const char *const arrow_kinds[] = {"preemption", "race"};

/* An arrow of the given kind from the box of step `from` to the box of
 * step `to`, title its tooltip: out of the side of one box that faces the
 * other, into the other's, a curve so that arrows between the same lanes
 * do not hide each other.  Two steps of one lane get a loop on the lane's
 * right. */
static void put_arrow(struct ploom_writer *w, const struct layout *lay, size_t from, size_t to,
		      const char *kind, const char *extra, const char *title)
{
	size_t la = lay->lane_of[from], lb = lay->lane_of[to];
	long ya = row_y(lay, from) + box_h(lay) / 2, yb = row_y(lay, to) + box_h(lay) / 2;
	long left_a = lay->lane_x[la] + MARGIN, right_a = lay->lane_x[la] + lay->lane_w[la] - MARGIN;
	long left_b = lay->lane_x[lb] + MARGIN, right_b = lay->lane_x[lb] + lay->lane_w[lb] - MARGIN;
	long x1, x2, c1, c2, d;

	if (lb > la) {
		x1 = right_a;
		x2 = left_b;
	} else if (lb < la) {
		x1 = left_a;
		x2 = right_b;
	} else {
		x1 = x2 = right_a;
	}
	d = labs(x2 - x1) / 2;
	d = d < 10 ? 10 : d > 60 ? 60 : d;
	if (lb >= la) {
		c1 = x1 + d;
		c2 = lb > la ? x2 - d : x2 + d;
	} else {
		c1 = x1 - d;
		c2 = x2 + d;
	}
	putf(w, "<path class=\"arrow %s%s\" data-from=\"%zu\" data-to=\"%zu\" "
		"d=\"M%ld %ldC%ld %ld %ld %ld %ld %ld\" marker-end=\"url(#head-%s)\">",
	     kind, extra, from, to, x1, ya, c1, ya, c2, yb, x2, yb, kind);
	put(w, "<title>");
	put_esc(w, title, 0);
	put(w, "</title></path>\n");
}

/* An arrow per race between two steps, from the earlier to the later,
 * its explanation as the tooltip; the one the failure rests on is drawn
 * bold (class "key").  A race with an operation that never ran (blocked
 * at a deadlock) has no box to point at: the outcome and the header's
 * race line tell it. */
static void put_races(struct ploom_writer *w, const struct layout *lay,
		      const struct ploom_trace *trace)
{
	size_t k;

	for (k = 0; k < lay->nraces && !w->failed; k++) {
		const struct ploom_race *r = &lay->races[k];
		char *why;
		if (r->second < 0)
			continue;
		why = ploom_race_explain_with(trace, r, lay->sn);
		put_arrow(w, lay, (size_t)r->first, (size_t)r->second,
			  "race", (long)k == lay->key ? " key" : "", why ? why : "race");
		free(why);
	}
}

static void put_diagram(struct ploom_writer *w, const struct layout *lay,
			const struct ploom_trace *trace)
{
	const struct ploom_run *run = &trace->run;
	size_t i, l;

	put(w, "<div class=\"diagram\">\n");
	put_heads(w, lay);
	putf(w, "<svg class=\"steps\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%ld\" "
		"height=\"%ld\" role=\"img\" aria-label=\"the schedule: a lane per task, "
		"a row per step\">\n<defs>",
	     lay->width, lay->height);
	/* every other row shaded, by one pattern rather than a shape a row */
	putf(w, "<pattern id=\"rows\" width=\"8\" height=\"%ld\" patternUnits=\"userSpaceOnUse\">"
		"<rect class=\"stripe\" y=\"%ld\" width=\"8\" height=\"%ld\"/></pattern>",
	     2 * lay->row_h, lay->row_h, lay->row_h);
	for (i = 0; i < sizeof(arrow_kinds) / sizeof(*arrow_kinds); i++)
		putf(w, "<marker id=\"head-%s\" class=\"head-%s\" viewBox=\"0 0 10 10\" "
			"refX=\"9\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" "
			"orient=\"auto\"><path d=\"M0 0L10 5L0 10z\"/></marker>",
		     arrow_kinds[i], arrow_kinds[i]);
	put(w, "</defs>\n");
	put_bands(w, lay, lay->height);
	putf(w, "<rect fill=\"url(#rows)\" width=\"%ld\" height=\"%ld\"/>\n", lay->width,
	     lay->height);
	put(w, "<g class=\"lanes\">\n");
	for (l = 0; l < lay->ntasks && !w->failed; l++)
		put_lane(w, lay, l);
	put(w, "</g>\n");
	put_gutter(w, lay, run);
	put(w, "<g class=\"arrows\">\n");
	for (i = 1; i < run->nsteps && !w->failed; i++) {
		char *name, *title = NULL;
		if (!ploom_run_is_preemption(run, i))
			continue;
		name = ploom_run_task_name(run, run->steps[i - 1].task);
		if (!name || asprintf(&title, "preemption: %s could have continued", name) < 0)
			title = NULL;
		put_arrow(w, lay, i - 1, i, "preemption", "",
			  title ? title : "preemption: the previous task could have continued");
		free(title);
		free(name);
	}
	put_races(w, lay, trace);
	put(w, "</g>\n</svg>\n</div>\n");
}

static void put_legend(struct ploom_writer *w, const struct layout *lay, const struct ploom_run *run)
{
	const char *what = NULL;
	size_t i;
	int any = 0;

	for (i = 0; i < run->nsteps && !any; i++)
		any = ploom_run_is_preemption(run, i);
	what = ploom_run_mark_legend(run);
	if (!any && !what && !lay->nraces)
		return;
	put(w, "<ul class=\"legend\">\n");
	if (any)
		put(w, "<li><span class=\"key preemption\">* &#8594;</span> preemption: a switch "
		       "away from a task that could have continued (the arrow)</li>\n");
	if (lay->nraces)
		put(w, "<li><span class=\"key race\">&#8674;</span> racing pair: steps of two "
		       "tasks on one object that another schedule could run the other way round "
		       "(the dashed arrow; solid: the race the failure rests on)</li>\n");
	if (what)
		putf(w, "<li><span class=\"key failing\">!</span> %s</li>\n", what);
	put(w, "</ul>\n");
}

/* ---- header and outcome ----------------------------------------------------- */

static void fact_open(struct ploom_writer *w, const char *name)
{
	putf(w, "<tr><th>%s</th><td>", name);
}

static void fact_close(struct ploom_writer *w)
{
	put(w, "</td></tr>\n");
}

static void put_facts(struct ploom_writer *w, const struct ploom_trace *tr, const struct layout *lay)
{
	const struct ploom_config *c = &tr->config;
	const struct ploom_run *run = &tr->run;
	const char *file = tr->scenario.relpath && tr->source.root ? tr->scenario.relpath
								    : tr->scenario.file;
	char *label;

	put(w, "<table class=\"facts\">\n");
	fact_open(w, "scenario");
	put_esc_or(w, tr->scenario.module);
	put(w, ":");
	put_esc_or(w, tr->scenario.qualname);
	fact_close(w);
	fact_open(w, "target");
	put_esc_or(w, tr->scenario.target);
	fact_close(w);
	if (file) {
		fact_open(w, "source");
		put_esc(w, file, 0);
		fact_close(w);
	}
	fact_open(w, "python");
	put_esc_or(w, tr->python.implementation);
	put(w, " ");
	put_esc_or(w, tr->python.version);
	put(w, tr->python.gil ? ", GIL enabled" : ", GIL disabled");
	fact_close(w);
	fact_open(w, "hash seed");
	put_esc_or(w, tr->hash_seed);
	fact_close(w);
	label = ploom_config_label(c);
	fact_open(w, "config");
	put_esc_or(w, label);
	free(label);
	fact_close(w);
	fact_open(w, "steps");
	putf(w, "%zu (%zu choice%s)", run->nsteps, run->nchoices, run->nchoices == 1 ? "" : "s");
	fact_close(w);
	if (tr->id) {
		fact_open(w, "id");
		put_esc(w, tr->id, 0);
		fact_close(w);
	}
	fact_open(w, "preemptions");
	putf(w, "%d", run->preemptions);
	if (tr->minimized_from >= 0)
		putf(w, " (minimized from %d)", tr->minimized_from);
	fact_close(w);
	fact_open(w, "outcome");
	put_esc(w, run->outcome.summary ? run->outcome.summary
					: ploom_outcome_kind_name(run->outcome.kind), 0);
	fact_close(w);
	if (lay->key >= 0) {
		/* without the memory for it the page says less, not wrong */
		char *why = ploom_race_explain_with(tr, &lay->races[lay->key], lay->sn);
		if (why) {
			fact_open(w, "race");
			put(w, "<span class=\"race\">");
			put_esc(w, why, 0);
			put(w, "</span>");
			fact_close(w);
		}
		free(why);
	}
	put(w, "</table>\n");
}

/* "failure", "pass" or "other": the colour of the outcome's words. */
static const char *outcome_class(enum ploom_outcome_kind kind)
{
	if (ploom_outcome_is_failure(kind))
		return "failure";
	return kind == PLOOM_OUTCOME_PASS ? "pass" : "other";
}

/* "task N", then " (NAME)" when the scenario named its thread, as the
 * text rendering says it. */
static void put_task(struct ploom_writer *w, const struct ploom_run *run, int task)
{
	const char *name = ploom_run_name(run, (struct ploom_obj){PLOOM_OBJ_THREAD, task});

	putf(w, "task %d", task);
	if (name) {
		put(w, " (");
		put_esc(w, name, 0);
		put(w, ")");
	}
}

static void put_outcome(struct ploom_writer *w, const struct ploom_run *run)
{
	const struct ploom_outcome *o = &run->outcome;
	size_t i;

	putf(w, "<h2>Outcome</h2>\n<p><span class=\"kind %s\">%s</span>%s", outcome_class(o->kind),
	     ploom_outcome_kind_name(o->kind), o->kind == PLOOM_OUTCOME_DIVERGENCE ? " " : ": ");
	switch (o->kind) {
	case PLOOM_OUTCOME_PASS:
		put(w, "every task finished</p>\n");
		break;
	case PLOOM_OUTCOME_FAILURE:
		put_task(w, run, o->task);
		put(w, " raised ");
		put_esc_or(w, o->exc_type);
		if (o->exc_message && *o->exc_message) {
			put(w, ": ");
			put_esc(w, o->exc_message, 0);
		}
		put(w, "</p>\n");
		if (o->traceback && *o->traceback) {
			/* a parser drops the newline that follows <pre>: this
			 * one, not the traceback's first */
			put(w, "<pre class=\"traceback\">\n");
			put_esc(w, o->traceback, 1);
			put(w, "</pre>\n");
		}
		break;
	case PLOOM_OUTCOME_DEADLOCK:
		put(w, "no task can run</p>\n<ul class=\"waits\">\n");
		for (i = 0; i < o->nwaits; i++) {
			const struct ploom_wait *wt = &o->waits[i];
			char *obj = ploom_run_wait_object(run, wt->object);
			put(w, "<li>");
			put_task(w, run, wt->task);
			putf(w, " waits to %s ", ploom_op_name(wt->op));
			put_esc(w, obj ? obj : "?", 0);
			free(obj);
			if (wt->holder >= 0 && wt->op != PLOOM_OP_JOIN) {
				put(w, " held by ");
				put_task(w, run, wt->holder);
			}
			put(w, "</li>\n");
		}
		put(w, "</ul>\n");
		break;
	case PLOOM_OUTCOME_DIVERGENCE:
		putf(w, "at step %ld: ", o->divergence_index);
		put_esc(w, o->divergence_message ? o->divergence_message : "", 0);
		put(w, "</p>\n");
		break;
	default:
		put_esc(w, ploom_outcome_detail(o), 0);
		put(w, "</p>\n");
		break;
	}
	if (o->output && *o->output) {
		put(w, "<h2>Output</h2>\n<pre class=\"output\">\n");
		put_esc(w, o->output, 1);
		put(w, "</pre>\n");
	}
}

/* ---- the page ------------------------------------------------------------- */

/* The page allows nothing but its own inline style: no script, no
 * request, no frame. */
static const char page_head[] =
	"<!DOCTYPE html>\n"
	"<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	"style-src 'unsafe-inline'\">\n"
	"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";

static const char page_style[] =
	"<style>\n"
	"body{margin:24px;font:14px/1.45 \"DejaVu Sans\",sans-serif;color:#1f2328;background:#fff}\n"
	"h1{font-size:20px;margin:0 0 4px}\n"
	"h2{font-size:16px;margin:20px 0 6px}\n"
	"p.summary{margin:0 0 12px;font-weight:bold}\n"
	"table.facts{border-collapse:collapse}\n"
	"table.facts th{text-align:left;font-weight:normal;color:#59636e;padding:1px 16px 1px 0;"
	"vertical-align:top}\n"
	"table.facts td,pre,.key{font-family:\"DejaVu Sans Mono\",monospace;font-size:13px}\n"
	".diagram{margin:16px 0 8px}\n"
	"svg{display:block}\n"
	"svg.heads{position:sticky;top:0;background:#fff}\n"
	"svg text{font:" "12px \"DejaVu Sans Mono\",monospace;white-space:pre;fill:#1f2328}\n"
	".band{fill:#f6f8fa}\n"
	".band.odd{fill:#eaeef2}\n"
	".stripe{fill:#000;fill-opacity:.03}\n"
	".lane-title{font-weight:bold}\n"
	".step rect{fill:#fff;stroke:#8c959f}\n"
	".step.failing rect,.wait rect{fill:#ffebe9;stroke:#cf222e;stroke-width:2}\n"
	".wait rect{stroke-dasharray:4 2}\n"
	".step.failing text,.wait text{fill:#a40e26;font-weight:bold}\n"
	".n{fill:#59636e;text-anchor:end}\n"
	".mark{font-weight:bold}\n"
	".arrow{fill:none;stroke-width:2}\n"
	".preemption.arrow{stroke:#bc4c00}\n"
	"text.preemption,.key.preemption{fill:#bc4c00;color:#bc4c00}\n"
	".head-preemption path{fill:#bc4c00}\n"
	".race.arrow{stroke:#8250df;stroke-dasharray:5 3;stroke-width:1.5}\n"
	".race.key.arrow{stroke-dasharray:none;stroke-width:2.5}\n"
	"text.race,.key.race{fill:#8250df;color:#8250df}\n"
	".head-race path{fill:#8250df}\n"
	"text.where{fill:#57606a;font-size:11px}\n"
	".step.failing text.where{fill:#a40e26;font-weight:normal}\n"
	"text.failing,.key.failing,.failure{fill:#cf222e;color:#cf222e}\n"
	".pass{color:#1a7f37}\n"
	".other{color:#9a6700}\n"
	".kind{font-weight:bold}\n"
	"ul.legend{list-style:none;padding:0;margin:0}\n"
	".key{display:inline-block;min-width:3em;font-weight:bold}\n"
	"pre{background:#f6f8fa;padding:10px 12px;overflow-x:auto;line-height:1.4}\n"
	"</style>\n";

int ploom_html_write(FILE *out, const struct ploom_trace *trace, struct ploom_err *err)
{
	struct ploom_writer w = {out, 0, 0};
	struct layout lay = {0};
	const struct ploom_run *run = &trace->run;
	int ret = -1;

	if (layout_build(&lay, trace) < 0) {
		ploom_err_oom(err);
		goto done;
	}
	put(&w, page_head);
	put(&w, "<title>");
	put_esc_or(&w, trace->scenario.module);
	put(&w, ":");
	put_esc_or(&w, trace->scenario.qualname);
	putf(&w, " - %s - ploom</title>\n", ploom_outcome_kind_name(run->outcome.kind));
	put(&w, page_style);
	put(&w, "</head>\n<body>\n<h1>");
	put_esc_or(&w, trace->scenario.module);
	put(&w, ":");
	put_esc_or(&w, trace->scenario.qualname);
	putf(&w, "</h1>\n<p class=\"summary %s\">", outcome_class(run->outcome.kind));
	put_esc(&w, run->outcome.summary ? run->outcome.summary
					 : ploom_outcome_kind_name(run->outcome.kind), 0);
	put(&w, "</p>\n");
	put_facts(&w, trace, &lay);
	put_diagram(&w, &lay, trace);
	put_legend(&w, &lay, run);
	put_outcome(&w, run);
	put(&w, "</body>\n</html>\n");
	if (ploom_writer_finish(&w, err) < 0)
		goto done;
	ret = 0;
done:
	layout_release(&lay, run->nsteps ? run->nsteps : 1);
	return ret;
}
