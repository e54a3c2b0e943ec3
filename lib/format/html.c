/* The HTML rendering of a trace; html.h documents what it draws. */
#include "html.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"
#include "labels.h"
#include "plural.h"
#include "view.h"
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

/* ---- what the boxes and lanes say -------------------------------------- */

/* A row's caption, whole, malloc'd, or NULL when out of memory: the
 * text rendering's label, then " -> VALUE". */
static char *row_caption(const struct ploom_view_row *r)
{
	char *text = NULL;

	if (!r->value)
		return strdup(r->label);
	if (asprintf(&text, "%s -> %s", r->label, r->value) < 0)
		text = NULL;
	return text;
}

/* Cuts s in place to PLOOM_HTML_CAPTION_MAX code points, the last three
 * "...", on a code point's boundary; s must be longer than that. */
static void cut_caption(char *s)
{
	memcpy(s + ploom_view_prefix(s, PLOOM_HTML_CAPTION_MAX - 3), "...", 4);
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
#define TRACK_PX 8L     /* between two racing pairs' vertical runs */
#define TRACK_PAD 6L    /* the last run to the first lane */

static long text_px(size_t chars)
{
	return (long)((chars * 29 + 3) / 4);
}

struct box {
	char *caption;  /* cut to PLOOM_HTML_CAPTION_MAX */
	char *whole;    /* the whole caption when it was cut, else NULL */
	char *where;    /* its second line, ploom_where_label(), or NULL */
};

/* Where a racing pair's arrow runs: out of the left side of its earlier
 * step's box, along a vertical track left of the lanes, into the left
 * side of its later step's box.  Pairs whose rows overlap (even in one
 * step) get tracks of their own, and the pairs that meet at one box each
 * leave or enter it at a height of their own, so no two arrows share a
 * stretch of line. */
struct race_path {
	long track;     /* -1: not drawn (its later operation never ran) */
	long ya, yb;    /* where it leaves the earlier box and enters the later */
};

struct layout {
	const struct ploom_view *v;
	long *lane_x, *lane_w;  /* per lane */
	struct box *boxes;      /* per step */
	/* the steps lane by lane, each lane's in order: lane l's are
	 * by_lane[lane_start[l] .. lane_start[l + 1]) */
	size_t *by_lane, *lane_start;
	struct box *waits;      /* per lane, a deadlock's; NULL otherwise */
	size_t wait_row;        /* the row of the waits, after the steps' */
	long lines;             /* text lines in a box */
	long row_h;
	long tags_x;            /* the race tags, right of the marks */
	long gutter_w;
	struct race_path *races;        /* per race */
	long ntracks;
	long tracks_w;          /* the tracks' column, between gutter and lanes */
	long width, height;
};

/* The top of row r's box, in the diagram under the lane titles. */
static long row_y(const struct layout *lay, size_t r)
{
	return (long)r * lay->row_h + ROW_GAP / 2;
}

static long box_h(const struct layout *lay)
{
	return BOX_H + (lay->lines - 1) * LINE_PX;
}

static void box_release(struct box *b)
{
	free(b->caption);
	free(b->whole);
	free(b->where);
}

static void layout_release(struct layout *lay)
{
	size_t i;

	for (i = 0; lay->boxes && i < lay->v->nrows; i++)
		box_release(&lay->boxes[i]);
	for (i = 0; lay->waits && i < lay->v->nlanes; i++)
		box_release(&lay->waits[i]);
	free(lay->lane_x);
	free(lay->lane_w);
	free(lay->boxes);
	free(lay->by_lane);
	free(lay->lane_start);
	free(lay->waits);
	free(lay->races);
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
	n = ploom_view_text_width(caption);
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

/* Sets b's second line to a copy of where (NULL: the step stopped
 * nowhere known), widening *widest.  Returns 0, or -1 when out of memory. */
static int where_set(struct box *b, const char *where, size_t *widest)
{
	size_t n;

	if (!where)
		return 0;
	b->where = strdup(where);
	if (!b->where)
		return -1;
	n = ploom_view_text_width(b->where);
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
static int group_by_lane(struct layout *lay)
{
	const struct ploom_view *v = lay->v;
	size_t i, l, *next, nsteps = v->nrows;

	lay->by_lane = calloc(nsteps ? nsteps : 1, sizeof(*lay->by_lane));
	lay->lane_start = calloc(v->nlanes + 1, sizeof(*lay->lane_start));
	next = calloc(v->nlanes ? v->nlanes : 1, sizeof(*next));
	if (!lay->by_lane || !lay->lane_start || !next) {
		free(next);
		return -1;
	}
	for (i = 0; i < nsteps; i++)
		lay->lane_start[v->rows[i].lane + 1]++;
	for (l = 0; l < v->nlanes; l++) {
		lay->lane_start[l + 1] += lay->lane_start[l];
		next[l] = lay->lane_start[l];
	}
	for (i = 0; i < nsteps; i++)
		lay->by_lane[next[v->rows[i].lane]++] = i;
	free(next);
	return 0;
}

/* A binary min-heap of (key, track) pairs, for layout_races(). */
struct pair {
	size_t key;
	long track;
};

struct heap {
	struct pair *a;
	size_t n;
};

static int pair_less(struct pair x, struct pair y)
{
	return x.key < y.key || (x.key == y.key && x.track < y.track);
}

/* Pushes p; the heap's array has room for every race, so never grows. */
static void heap_push(struct heap *h, struct pair p)
{
	size_t i = h->n++;

	while (i > 0 && pair_less(p, h->a[(i - 1) / 2])) {
		h->a[i] = h->a[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->a[i] = p;
}

static struct pair heap_pop(struct heap *h)
{
	struct pair top = h->a[0], last = h->a[--h->n];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < h->n) {
		if (c + 1 < h->n && pair_less(h->a[c + 1], h->a[c]))
			c++;
		if (!pair_less(h->a[c], last))
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	if (h->n)
		h->a[i] = last;
	return top;
}

/* A drawn racing pair's rows, lo <= hi, and its index among the races. */
struct span {
	size_t lo, hi, k;
};

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return (x->k > y->k) - (x->k < y->k);
}

/* Gives each drawn racing pair a track, as an interval graph is coloured:
 * the pairs by their earlier step, each on the lowest track whose last
 * pair ended in an earlier row, so that the tracks are as few as the
 * most pairs open in one row.  Then the heights at which the pairs meet
 * each box.  Returns 0, or -1 when out of memory. */
static int layout_races(struct layout *lay)
{
	const struct ploom_view *v = lay->v;
	size_t k, m = 0, *ends = NULL, *used = NULL;
	struct span *order = NULL;
	struct heap busy = {NULL, 0}, free_tracks = {NULL, 0};
	int ret = -1;

	lay->races = calloc(v->nraces ? v->nraces : 1, sizeof(*lay->races));
	order = calloc(v->nraces ? v->nraces : 1, sizeof(*order));
	ends = calloc(v->nrows + 1, sizeof(*ends));
	used = calloc(v->nrows + 1, sizeof(*used));
	busy.a = calloc(v->nraces ? v->nraces : 1, sizeof(*busy.a));
	free_tracks.a = calloc(v->nraces ? v->nraces : 1, sizeof(*free_tracks.a));
	if (!lay->races || !order || !ends || !used || !busy.a || !free_tracks.a)
		goto done;
	for (k = 0; k < v->nraces; k++) {
		const struct ploom_race *r = &v->races[k];
		lay->races[k].track = -1;
		if (r->first < 0 || r->second < 0 || (size_t)r->first >= v->nrows ||
		    (size_t)r->second >= v->nrows)
			continue;
		order[m].lo = (size_t)(r->first < r->second ? r->first : r->second);
		order[m].hi = (size_t)(r->first < r->second ? r->second : r->first);
		order[m++].k = k;
		ends[r->first]++;
		ends[r->second]++;
	}
	qsort(order, m, sizeof(*order), cmp_span);
	for (k = 0; k < m; k++) {
		struct race_path *p = &lay->races[order[k].k];
		while (busy.n && busy.a[0].key < order[k].lo)
			heap_push(&free_tracks, (struct pair){0, heap_pop(&busy).track});
		p->track = free_tracks.n ? heap_pop(&free_tracks).track : lay->ntracks++;
		heap_push(&busy, (struct pair){order[k].hi, p->track});
	}
	/* the heights, in the races' order: the n pairs that meet a box
	 * divide its height into n + 1 equal parts */
	for (k = 0; k < v->nraces; k++) {
		const struct ploom_race *r = &v->races[k];
		struct race_path *p = &lay->races[k];
		if (p->track < 0)
			continue;
		p->ya = row_y(lay, (size_t)r->first) +
			box_h(lay) * (long)++used[r->first] / (long)(ends[r->first] + 1);
		p->yb = row_y(lay, (size_t)r->second) +
			box_h(lay) * (long)++used[r->second] / (long)(ends[r->second] + 1);
	}
	lay->tracks_w = lay->ntracks ? lay->ntracks * TRACK_PX + TRACK_PAD : 0;
	ret = 0;
done:
	free(order);
	free(ends);
	free(used);
	free(busy.a);
	free(free_tracks.a);
	return ret;
}

static int layout_build(struct layout *lay, const struct ploom_view *v)
{
	size_t i, l, n = v->nrows ? v->nrows : 1, rows, *widest = NULL;
	char num[32];
	long x;
	int ret = -1;

	lay->v = v;
	lay->lane_x = calloc(v->nlanes, sizeof(*lay->lane_x));
	lay->lane_w = calloc(v->nlanes, sizeof(*lay->lane_w));
	lay->boxes = calloc(n, sizeof(*lay->boxes));
	widest = calloc(v->nlanes, sizeof(*widest));
	if (!lay->lane_x || !lay->lane_w || !lay->boxes || !widest)
		goto done;
	for (l = 0; l < v->nlanes; l++)
		widest[l] = ploom_view_text_width(v->names[l]);
	lay->lines = 1;
	for (i = 0; i < v->nrows; i++) {
		const struct ploom_view_row *r = &v->rows[i];
		if (box_set(&lay->boxes[i], row_caption(r), &widest[r->lane]) < 0 ||
		    where_set(&lay->boxes[i], r->where, &widest[r->lane]) < 0)
			goto done;
		if (r->where)
			lay->lines = 2;
	}
	if (group_by_lane(lay) < 0)
		goto done;
	if (v->waits) {
		lay->waits = calloc(v->nlanes, sizeof(*lay->waits));
		if (!lay->waits)
			goto done;
		for (i = 0; i < v->nwaits; i++) {
			const struct ploom_view_wait *r = &v->waits[i];
			l = r->lane;
			box_release(&lay->waits[l]);
			memset(&lay->waits[l], 0, sizeof(lay->waits[l]));
			if (box_set(&lay->waits[l], strdup(r->label), &widest[l]) < 0 ||
			    where_set(&lay->waits[l], r->where, &widest[l]) < 0)
				goto done;
			if (r->where)
				lay->lines = 2;
		}
	}
	lay->row_h = BOX_H + (lay->lines - 1) * LINE_PX + ROW_GAP;
	n = (size_t)snprintf(num, sizeof(num), "%zu", v->nrows ? v->nrows - 1 : 0);
	lay->tags_x = GUTTER_MARK;
	lay->gutter_w = GUTTER_MARK + text_px(n < 4 ? 4 : n) + PAD;
	if (v->nraces) {
		size_t tags = strlen(v->wait_tags);
		for (i = 0; i < v->nrows; i++)
			if (strlen(v->rows[i].tags) > tags)
				tags = strlen(v->rows[i].tags);
		lay->gutter_w += text_px(tags) + PAD / 2;
	}
	if (layout_races(lay) < 0)
		goto done;
	x = lay->gutter_w + lay->tracks_w;
	for (l = 0; l < v->nlanes; l++) {
		long w = text_px(widest[l]) + 2 * (PAD + MARGIN);
		lay->lane_x[l] = x;
		lay->lane_w[l] = w < LANE_MIN ? LANE_MIN : w;
		x += lay->lane_w[l];
	}
	/* with no steps, row 0 says so */
	lay->wait_row = v->nrows ? v->nrows : 1;
	rows = lay->wait_row + (lay->waits ? 1 : 0);
	lay->width = x;
	lay->height = (long)rows * lay->row_h;
	ret = 0;
done:
	free(widest);
	return ret;
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
	int task = lay->v->tasks[lane];
	size_t k;

	putf(w, "<g class=\"lane\" id=\"lane-%d\" data-task=\"%d\">\n", task, task);
	for (k = lay->lane_start[lane]; k < lay->lane_start[lane + 1] && !w->failed; k++) {
		size_t i = lay->by_lane[k];
		putf(w, "<g class=\"step%s\" id=\"step-%zu\" data-task=\"%d\">",
		     (long)i == lay->v->failing ? " failing" : "", i, task);
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

	for (l = 0; l < lay->v->nlanes && !w->failed; l++)
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
	for (l = 0; l < lay->v->nlanes && !w->failed; l++) {
		putf(w, "<text class=\"lane-title\" data-task=\"%d\" x=\"%ld\" y=\"19\">",
		     lay->v->tasks[l], lay->lane_x[l] + MARGIN);
		put_esc(w, lay->v->names[l], 0);
		put(w, "</text>\n");
	}
	put(w, "</svg>\n");
}

/* The step numbers, and the marks beside them. */
static void put_gutter(struct ploom_writer *w, const struct layout *lay)
{
	const struct ploom_view *v = lay->v;
	long x = lay->gutter_w - PAD, y;
	size_t i;

	put(w, "<g class=\"gutter\">\n");
	for (i = 0; i < v->nrows && !w->failed; i++) {
		y = row_y(lay, i) + BASELINE;
		putf(w, "<text class=\"n\" x=\"%ld\" y=\"%ld\">%zu</text>", x, y, i);
		if (*v->rows[i].tags)
			putf(w, "<text class=\"tags\" x=\"%ld\" y=\"%ld\">%s</text>",
			     lay->tags_x, y, v->rows[i].tags);
		if (v->rows[i].preempted)
			putf(w, "<text class=\"mark preemption\" x=\"4\" y=\"%ld\">*</text>", y);
		if ((long)i == v->failing)
			putf(w, "<text class=\"mark failing\" x=\"4\" y=\"%ld\">!</text>", y);
		put(w, "\n");
	}
	if (!v->nrows)
		putf(w, "<text class=\"n\" x=\"%ld\" y=\"%ld\">(no steps)</text>\n",
		     lay->lane_x[0] + MARGIN + text_px(10), row_y(lay, 0) + BASELINE);
	if (lay->waits) {
		y = row_y(lay, lay->wait_row) + BASELINE;
		putf(w, "<text class=\"mark failing\" x=\"4\" y=\"%ld\">!</text>"
			"<text class=\"n\" x=\"%ld\" y=\"%ld\">wait</text>",
		     y, x, y);
		if (*v->wait_tags)
			putf(w, "<text class=\"tags\" x=\"%ld\" y=\"%ld\">%s</text>",
			     lay->tags_x, y, v->wait_tags);
		put(w, "\n");
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
	size_t la = lay->v->rows[from].lane, lb = lay->v->rows[to].lane;
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

/* An arrow per race between two steps, from the earlier to the later
 * along its track (struct race_path), its tag and explanation as the
 * tooltip; the one the failure rests on is drawn bold (class "key").  A
 * race with an operation that never ran (blocked at a deadlock) has no
 * box to point at: the wait row's tags, the outcome and the header's race
 * line tell it. */
static void put_races(struct ploom_writer *w, const struct layout *lay)
{
	const struct ploom_view *v = lay->v;
	size_t k;

	for (k = 0; k < v->nraces && !w->failed; k++) {
		const struct ploom_race *r = &v->races[k];
		const struct race_path *p = &lay->races[k];
		char tag = ploom_view_race_tag(k);
		long xa, xb, xt;
		char *why;
		if (p->track < 0)
			continue;
		xa = lay->lane_x[v->rows[r->first].lane] + MARGIN;
		xb = lay->lane_x[v->rows[r->second].lane] + MARGIN;
		xt = lay->gutter_w + lay->tracks_w - TRACK_PAD - p->track * TRACK_PX;
		putf(w, "<path class=\"arrow race%s\" data-from=\"%ld\" data-to=\"%ld\" "
			"data-tag=\"%c\" data-track=\"%ld\" d=\"M%ld %ldH%ldV%ldH%ld\" "
			"marker-end=\"url(#head-race)\"><title>",
		     (long)k == v->key ? " key" : "", r->first, r->second, tag, p->track, xa, p->ya,
		     xt, p->yb, xb);
		/* past z and Z the tags are all '+': no tag tells the race */
		if (tag != '+')
			putf(w, "%c: ", tag);
		why = ploom_race_explain_with(v->trace, r, v->sn);
		put_esc(w, why ? why : "race", 0);
		free(why);
		put(w, "</title></path>\n");
	}
}

static void put_diagram(struct ploom_writer *w, const struct layout *lay)
{
	const struct ploom_view *v = lay->v;
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
	for (l = 0; l < lay->v->nlanes && !w->failed; l++)
		put_lane(w, lay, l);
	put(w, "</g>\n");
	put_gutter(w, lay);
	put(w, "<g class=\"arrows\">\n");
	for (i = 1; i < v->nrows && !w->failed; i++) {
		char *title = NULL;
		if (!v->rows[i].preempted)
			continue;
		if (asprintf(&title, "preemption: %s could have continued",
			     v->names[v->rows[i - 1].lane]) < 0)
			title = NULL;
		put_arrow(w, lay, i - 1, i, "preemption", "",
			  title ? title : "preemption: the previous task could have continued");
		free(title);
	}
	put_races(w, lay);
	put(w, "</g>\n</svg>\n</div>\n");
}

static void put_legend(struct ploom_writer *w, const struct ploom_view *v)
{
	if (!v->any_preempted && !v->mark_legend && !v->nraces)
		return;
	put(w, "<ul class=\"legend\">\n");
	if (v->any_preempted)
		put(w, "<li><span class=\"key preemption\">* &#8594;</span> preemption: a switch "
		       "away from a task that could have continued (the arrow)</li>\n");
	if (v->nraces) {
		char last = ploom_view_race_tag(v->nraces - 1 < 51 ? v->nraces - 1 : 51);
		put(w, "<li><span class=\"key race\">");
		if (v->nraces > 1)
			putf(w, "a-%c", last);
		else
			put(w, "a");
		putf(w, "</span> racing pair%s: steps of two tasks on one object that another "
		     "schedule could run the other way round (the tag beside each step of a pair; "
		     "the dashed arrow from its earlier step to its later",
		     ploom_s(v->nraces));
		if (v->key >= 0)
			putf(w, "; solid, %c: the race the failure rests on",
			     ploom_view_race_tag((size_t)v->key));
		put(w, ")</li>\n");
	}
	if (v->mark_legend)
		putf(w, "<li><span class=\"key failing\">!</span> %s</li>\n", v->mark_legend);
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

/* 1 if the page says fact f elsewhere, word for word: the scenario is
 * the heading (title), the outcome the summary line under it, and a
 * target spelt as the heading is says nothing more. */
static int fact_said(const struct ploom_view_fact *f, const char *title)
{
	return !strcmp(f->name, "scenario") || !strcmp(f->name, "outcome") ||
	       (!strcmp(f->name, "target") && !strcmp(f->value, title));
}

/* The view's facts that the page does not say elsewhere, with the
 * scenario's source file after the first of them. */
static void put_facts(struct ploom_writer *w, const struct ploom_view *v, const char *title)
{
	const struct ploom_trace *tr = v->trace;
	const char *file = tr->scenario.relpath && tr->source.root ? tr->scenario.relpath
								    : tr->scenario.file;
	int race;
	size_t i;

	put(w, "<table class=\"facts\">\n");
	for (i = 0; i < v->nfacts; i++) {
		if (i == PLOOM_VIEW_FACTS_BEFORE_SOURCE && file) {
			fact_open(w, "source");
			put_esc(w, file, 0);
			fact_close(w);
		}
		if (fact_said(&v->facts[i], title))
			continue;
		race = !strcmp(v->facts[i].name, "race");
		fact_open(w, v->facts[i].name);
		if (race)
			put(w, "<span class=\"race\">");
		put_esc(w, v->facts[i].value, 0);
		if (race)
			put(w, "</span>");
		fact_close(w);
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

static void put_outcome(struct ploom_writer *w, const struct ploom_view *v)
{
	const struct ploom_outcome *o = &v->trace->run.outcome;
	size_t i;

	putf(w, "<h2>Outcome</h2>\n<p><span class=\"kind %s\">%s</span>%s", outcome_class(o->kind),
	     ploom_outcome_kind_name(o->kind), o->kind == PLOOM_OUTCOME_DIVERGENCE ? " " : ": ");
	switch (o->kind) {
	case PLOOM_OUTCOME_DEADLOCK:
		put(w, "no task can run</p>\n<ul class=\"waits\">\n");
		for (i = 0; i < v->nwaits; i++) {
			const struct ploom_view_wait *wt = &v->waits[i];
			put(w, "<li>");
			put_esc(w, wt->who_name, 0);
			put(w, " ");
			put_esc(w, wt->named, 0);
			put(w, "</li>\n");
		}
		put(w, "</ul>\n");
		break;
	default:
		put_esc(w, v->outcome_named, 0);
		if (o->kind == PLOOM_OUTCOME_FAILURE && o->exc_message && *o->exc_message) {
			put(w, ": ");
			put_esc(w, o->exc_message, 0);
		}
		put(w, "</p>\n");
		if (o->kind == PLOOM_OUTCOME_FAILURE && o->traceback && *o->traceback) {
			/* a parser drops the newline that follows <pre>: this
			 * one, not the traceback's first */
			put(w, "<pre class=\"traceback\">\n");
			put_esc(w, o->traceback, 1);
			put(w, "</pre>\n");
		}
		if (v->nstacks) {
			put(w, "<ul class=\"stacks\">\n");
			for (i = 0; i < v->nstacks; i++) {
				put(w, "<li>");
				put_esc(w, v->stacks_named[i], 0);
				put(w, "</li>\n");
			}
			put(w, "</ul>\n");
		}
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
	".race.key.arrow{stroke-dasharray:none;stroke-width:2.5;fill:none}\n"
	"text.race,.key.race,text.tags{fill:#8250df;color:#8250df}\n"
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
	struct ploom_view v = {0};
	struct layout lay = {.v = &v};
	const struct ploom_run *run = &trace->run;
	char *title = NULL;
	int ret = -1;

	if (ploom_view_build(&v, trace, err) < 0)
		goto done;
	if (layout_build(&lay, &v) < 0 ||
	    asprintf(&title, "%s:%s", trace->scenario.module ? trace->scenario.module : "?",
		     trace->scenario.qualname ? trace->scenario.qualname : "?") < 0) {
		title = NULL;
		ploom_err_oom(err);
		goto done;
	}
	put(&w, page_head);
	put(&w, "<title>");
	put_esc(&w, title, 0);
	putf(&w, " - %s - ploom</title>\n", ploom_outcome_kind_name(run->outcome.kind));
	put(&w, page_style);
	put(&w, "</head>\n<body>\n<h1>");
	put_esc(&w, title, 0);
	putf(&w, "</h1>\n<p class=\"summary %s\">", outcome_class(run->outcome.kind));
	put_esc(&w, v.summary_named, 0);
	put(&w, "</p>\n");
	put_facts(&w, &v, title);
	put_diagram(&w, &lay);
	put_legend(&w, &v);
	put_outcome(&w, &v);
	put(&w, "</body>\n</html>\n");
	if (ploom_writer_finish(&w, err) < 0)
		goto done;
	ret = 0;
done:
	free(title);
	layout_release(&lay);
	ploom_view_release(&v);
	return ret;
}

int ploom_format_html(FILE *out, struct ploom_trace *trace,
		      const struct ploom_render_opts *opts, struct ploom_err *err)
{
	(void)opts;
	return ploom_html_write(out, trace, err);
}
