/* The size of a search and how much of it is done; estimate.h documents
 * the estimator. */
#include "estimate.h"
#include "plural.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void ploom_weight_walk_init(struct ploom_weight_walk *walk, double root_weight)
{
	walk->weight = root_weight;
	walk->left = 0;
}

void ploom_weight_walk_step(struct ploom_weight_walk *walk, size_t children, size_t untried)
{
	double child;

	if (children < 1)
		children = 1;
	child = walk->weight / (double)children;
	walk->left += child * (double)untried;
	walk->weight = child;
}

double ploom_weight_walk_left(const struct ploom_weight_walk *walk)
{
	return walk->left + walk->weight;
}

void ploom_estimate_make(struct ploom_estimate *out, long schedules, long failing,
			 double elapsed_s, double left, int done)
{
	double f;

	memset(out, 0, sizeof(*out));
	out->schedules = schedules;
	out->failing = failing;
	out->elapsed_s = elapsed_s;
	out->rate = elapsed_s > 0 ? (double)schedules / elapsed_s : 0;
	out->fraction = out->total = out->eta_s = -1;
	out->done = done;
	if (left < 0 || !isfinite(left))
		return;
	if (left == 0) {
		out->fraction = 1;
		out->total = (double)schedules;
		out->eta_s = 0;
		return;
	}
	/* rounding may leave the parts' sum a hair above 1, or this a hair
	 * below it: 1 stays the mark of a search with nothing left */
	f = 1 - left;
	out->fraction = f < 0 ? 0 : f < 1 ? f : nextafter(1, 0);
	if (schedules < PLOOM_ESTIMATE_MIN_SCHEDULES || out->fraction <= 0)
		return;
	f = (double)schedules / out->fraction;
	if (!isfinite(f))
		return;
	out->total = f < (double)schedules ? (double)schedules : f;
	if (out->rate > 0)
		out->eta_s = (out->total - (double)schedules) / out->rate;
}

/* ---- text ---- */

/* Appends to a buffer as snprintf() does, keeping the uncut length. */
struct out {
	char *buf;
	size_t size;
	int len;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	size_t at = (size_t)o->len < o->size ? (size_t)o->len : o->size;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->buf ? o->buf + at : NULL, o->size - at, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += n;
}

/* v (at most 10^15) rounded to a whole number, with a comma every three
 * digits: "30,100". */
static void put_grouped(struct out *o, double v)
{
	char digits[32];
	int n, i;

	n = snprintf(digits, sizeof(digits), "%.0f", v);
	for (i = 0; i < n; i++) {
		put(o, "%c", digits[i]);
		if (digits[i] != '-' && (n - i - 1) % 3 == 0 && i + 1 < n)
			put(o, ",");
	}
}

/* A count too large for commas is shown as "1.2e18". */
static void put_count(struct out *o, double v)
{
	int exp;

	if (v < 1e15) {
		put_grouped(o, v);
		return;
	}
	exp = (int)floor(log10(v));
	put(o, "%.1fe%d", v / pow(10, exp), exp);
}

/* An estimated count to three significant digits: the others are noise. */
static void put_estimate(struct out *o, double v)
{
	double unit;

	if (v >= 1000 && v < 1e15) {
		unit = pow(10, floor(log10(v)) - 2);
		v = round(v / unit) * unit;
	}
	put_count(o, v);
}

static void put_duration(struct out *o, double s)
{
	if (s < 0.5)
		put(o, "<1 s");
	else if (s < 99.5)
		put(o, "%.0f s", s);
	else if (s < 99.5 * 60)
		put(o, "%.0f min", s / 60);
	else if (s < 47.5 * 3600)
		put(o, "%.0f h", s / 3600);
	else if (s < 729.5 * 86400)
		put(o, "%.0f days", s / 86400);
	else {
		put_estimate(o, s / (365.25 * 86400));
		put(o, " years");
	}
}

int ploom_estimate_format(char *buf, size_t size, const struct ploom_estimate *e)
{
	struct out o = {buf, size, 0};

	if (buf && size)
		buf[0] = '\0';
	put_count(&o, (double)e->schedules);
	put(&o, " schedule%s", ploom_s(e->schedules));
	if (e->elapsed_s > 0) {
		put(&o, " (");
		if (e->rate < 9.95)
			put(&o, "%.1f", e->rate);
		else
			put_count(&o, e->rate);
		put(&o, "/s)");
	}
	if (e->failing > 0) {
		put(&o, ", ");
		put_count(&o, (double)e->failing);
		put(&o, " failing");
	}
	if (e->total < 0)
		return o.len;
	if (e->fraction == 1) {
		put(&o, ", 100%% of ");
		put_count(&o, e->total);
		return o.len;
	}
	/* rounded down, so that an unfinished search never reads 100% */
	if (e->fraction < 0.1)
		put(&o, ", ~%.1f%% of ~", floor(e->fraction * 1000) / 10);
	else
		put(&o, ", ~%.0f%% of ~", floor(e->fraction * 100));
	put_estimate(&o, e->total);
	if (e->eta_s >= 0) {
		put(&o, ", ETA ");
		put_duration(&o, e->eta_s);
	}
	return o.len;
}

/* ---- JSON ---- */

/* A non-negative number with that many decimals (-1: six significant
 * digits), or null when negative (unknown). */
static void put_number(struct out *o, const char *name, double v, int decimals)
{
	put(o, ",\"%s\":", name);
	if (v < 0 || !isfinite(v))
		put(o, "null");
	else if (v >= 1e15 || decimals < 0)
		put(o, "%.6g", v);
	else
		put(o, "%.*f", decimals, v);
}

int ploom_estimate_format_json(char *buf, size_t size, const struct ploom_estimate *e)
{
	struct out o = {buf, size, 0};
	double f = e->fraction;
	char summary[200];

	if (buf && size)
		buf[0] = '\0';
	put(&o, "{\"schedules\":%ld,\"failing\":%ld", e->schedules, e->failing);
	put_number(&o, "elapsed_s", e->elapsed_s, 3);
	put_number(&o, "rate", e->rate, 1);
	put_number(&o, "estimate_total", e->total, 0);
	/* six decimals, rounded down: 1 only when nothing is left */
	put_number(&o, "fraction", f < 1 ? floor(f * 1e6) / 1e6 : f, -1);
	put_number(&o, "eta_s", e->eta_s, 1);
	/* the line for a person, as ploom_estimate_format() writes it: plain
	 * ASCII without quotes or backslashes, so it needs no escapes */
	put(&o, ",\"summary\":\"");
	ploom_estimate_format(summary, sizeof(summary), e);
	put(&o, "%s\",\"done\":%s}", summary, e->done ? "true" : "false");
	return o.len;
}
