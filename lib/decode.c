/* The worker protocol's decoder: the records of a run into a run of the
 * trace model, and the hello record; decode.h documents the API, event.h
 * the records. */
#include "decode.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "jsonutil.h"
#include "trace.h"

/* the most fields of a record: a hello's (event.h) */
#define MAX_FIELDS 13

struct field {
	const char *s;
	size_t n;
};

/* ---- fields ---- */

static int split(struct field *f, const char *line, size_t len)
{
	size_t i = 0, nf = 0;

	while (i <= len) {
		size_t j = i;
		while (j < len && line[j] != ' ')
			j++;
		if (nf == MAX_FIELDS || j == i)
			return -1;
		f[nf].s = line + i;
		f[nf].n = j - i;
		nf++;
		i = j + 1;
	}
	return (int)nf;
}

static int field_is(const struct field *f, const char *word)
{
	return f->n == strlen(word) && !memcmp(f->s, word, f->n);
}

static int parse_long(long *out, const struct field *f, long min, long max)
{
	long v = 0;
	size_t i = 0;
	int neg = 0;

	if (f->n && f->s[0] == '-') {
		neg = 1;
		i = 1;
	}
	if (i == f->n || f->n - i > 18)
		return -1;
	for (; i < f->n; i++) {
		if (f->s[i] < '0' || f->s[i] > '9')
			return -1;
		v = v * 10 + (f->s[i] - '0');
	}
	if (neg)
		v = -v;
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_int(int *out, const struct field *f, int min, int max)
{
	long v;

	if (parse_long(&v, f, min, max) < 0)
		return -1;
	*out = (int)v;
	return 0;
}

static char *dup_str(const struct field *f)
{
	if (!f->n || f->s[0] != '=')
		return NULL;
	return ploom_str_decode(f->s + 1, f->n - 1, NULL);
}

static int parse_list(int **out, size_t *out_len, const struct field *f)
{
	size_t i, n = 1, k = 0;
	struct field x;
	int *v;

	*out = NULL;
	*out_len = 0;
	if (field_is(f, "-"))
		return 0;
	for (i = 0; i < f->n; i++)
		if (f->s[i] == ',')
			n++;
	v = calloc(n, sizeof(*v));
	if (!v)
		return -1;
	x.s = f->s;
	for (i = 0; i <= f->n; i++) {
		if (i == f->n || f->s[i] == ',') {
			x.n = (size_t)(f->s + i - x.s);
			if (parse_int(&v[k], &x, 0, INT_MAX) < 0 ||
			    (k && v[k] <= v[k - 1])) {
				free(v);
				return -1;
			}
			k++;
			x.s = f->s + i + 1;
		}
	}
	*out = v;
	*out_len = k;
	return 0;
}

/* "malformed record from the worker: 'step 1 ...' (bad INDEX)" with the
 * record cut short and made printable, so the message stays one line. */
static int malformed(struct ploom_err *err, const char *line, size_t len, const char *why)
{
	char shown[72];
	size_t i, n = len < 60 ? len : 60;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)line[i];
		shown[i] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
	}
	if (n < len) {
		memcpy(shown + n, "...", 3);
		n += 3;
	}
	shown[n] = '\0';
	return ploom_err_set(err, PLOOM_ERR_WORKER, "malformed record from the worker: '%s' (%s)",
			     shown, why);
}

static int field_op(const struct field *f)
{
	return ploom_op_parse(f->s, f->n);
}

/* An object name that parses; NULL for "-" (the caller checks which). */
static int field_obj(struct ploom_obj *out, char **name, const struct field *f)
{
	*name = NULL;
	if (ploom_obj_parse(out, f->s, f->n) < 0)
		return -1;
	if (out->kind == PLOOM_OBJ_NONE)
		return 0;
	*name = strndup(f->s, f->n);
	return *name ? 0 : -1;
}

/* PENDING: "-" or TASK:OP:OBJECT,... in ascending task order, none of
 * them `task`. */
static int parse_pending(struct ploom_step *s, const struct field *f)
{
	size_t i, n = 1, k = 0, start = 0;

	if (field_is(f, "-"))
		return 0;
	for (i = 0; i < f->n; i++)
		if (f->s[i] == ',')
			n++;
	s->pending = calloc(n, sizeof(*s->pending));
	if (!s->pending)
		return -1;
	for (i = 0; i <= f->n; i++) {
		const char *c1, *c2, *e;
		struct field x;
		struct ploom_pending *pe;
		int op;

		if (i < f->n && f->s[i] != ',')
			continue;
		e = f->s + i;
		c1 = memchr(f->s + start, ':', (size_t)(e - f->s - start));
		c2 = c1 ? memchr(c1 + 1, ':', (size_t)(e - c1 - 1)) : NULL;
		if (!c2)
			return -1;
		pe = &s->pending[k];
		x.s = f->s + start;
		x.n = (size_t)(c1 - x.s);
		if (parse_int(&pe->task, &x, 0, INT_MAX) < 0 || pe->task == s->task ||
		    (k && pe->task <= s->pending[k - 1].task))
			return -1;
		op = ploom_op_parse(c1 + 1, (size_t)(c2 - c1 - 1));
		if (op < 0 || ploom_obj_parse(&pe->obj, c2 + 1, (size_t)(e - c2 - 1)) < 0)
			return -1;
		pe->op = (enum ploom_op)op;
		k++;
		start = i + 1;
	}
	s->npending = k;
	return 0;
}

/* 1 if task is among the step's pending tasks. */
static int is_pending(const struct ploom_step *s, int task)
{
	size_t i;

	for (i = 0; i < s->npending; i++)
		if (s->pending[i].task == task)
			return 1;
	return 0;
}

/* WHERE: "-", or CODE:LINE naming a code record of the run.  Fills out
 * (zeroed by the caller) with a copy of the code's file and function. */
static int parse_where(struct ploom_where *out, const struct ploom_run *run,
		       const struct field *f, struct ploom_err *err)
{
	const char *colon;
	struct field x;
	long code, line;

	if (field_is(f, "-"))
		return 0;
	colon = memchr(f->s, ':', f->n);
	if (!colon)
		return -1;
	x.s = f->s;
	x.n = (size_t)(colon - f->s);
	if (x.n && x.s[0] == '-')
		return -1;
	if (parse_long(&code, &x, 0, LONG_MAX) < 0 || (size_t)code >= run->ncodes)
		return -1;
	x.s = colon + 1;
	x.n = f->n - x.n - 1;
	if (x.n && x.s[0] == '-')
		return -1;
	if (parse_long(&line, &x, 1, INT_MAX) < 0)
		return -1;
	return ploom_where_copy(out, &run->codes[code], (int)line, err) < 0 ? -2 : 0;
}

/* A str field that is a label of at most max bytes, decoded into *out
 * (malloc'd); NULL and *why set when it is none. */
static char *dup_label(const struct field *f, size_t max, const char **why)
{
	size_t n;
	char *s;

	*why = "bad str field";
	if (!f->n || f->s[0] != '=')
		return NULL;
	s = ploom_str_decode(f->s + 1, f->n - 1, &n);
	if (!s)
		return NULL;
	/* a NUL is a control character too */
	*why = ploom_label_problem(s, n, max);
	if (*why) {
		free(s);
		return NULL;
	}
	return s;
}


/* The FILE and FUNCTION labels of a code or a frame record into w; on
 * error nothing is left to release. */
static int where_labels(struct ploom_where *w, const struct field *file,
			const struct field *function, const char *line, size_t len,
			struct ploom_err *err)
{
	const char *why;
	char msg[64];

	w->file = dup_label(file, PLOOM_PATH_MAX, &why);
	if (!w->file) {
		snprintf(msg, sizeof(msg), "FILE %s", why);
		return malformed(err, line, len, msg);
	}
	w->function = dup_label(function, PLOOM_NAME_MAX, &why);
	if (!w->function) {
		free(w->file);
		w->file = NULL;
		snprintf(msg, sizeof(msg), "FUNCTION %s", why);
		return malformed(err, line, len, msg);
	}
	return 0;
}

static int parse_code(struct ploom_run_parser *p, const struct field *f, int nf,
		      const char *line, size_t len, struct ploom_err *err)
{
	struct ploom_run *run = p->run;
	struct ploom_where *codes, w = {NULL, NULL, 0};
	long index;

	if (nf != 4)
		return malformed(err, line, len, "expected 4 fields");
	if (parse_long(&index, &f[1], 0, LONG_MAX) < 0 || (size_t)index != run->ncodes)
		return malformed(err, line, len, "bad INDEX");
	if (where_labels(&w, &f[2], &f[3], line, len, err) < 0)
		return -1;
	codes = realloc(run->codes, (run->ncodes + 1) * sizeof(*codes));
	if (!codes) {
		ploom_where_release(&w);
		return ploom_err_oom(err);
	}
	run->codes = codes;
	codes[run->ncodes++] = w;
	return 0;
}

static int parse_name(struct ploom_run_parser *p, const struct field *f, int nf,
		      const char *line, size_t len, struct ploom_err *err)
{
	struct ploom_obj obj;
	const char *why;
	char msg[64], *name;
	int r;

	if (nf != 3)
		return malformed(err, line, len, "expected 3 fields");
	if (ploom_obj_parse(&obj, f[1].s, f[1].n) < 0 || obj.kind == PLOOM_OBJ_NONE)
		return malformed(err, line, len, "bad OBJECT");
	if (!ploom_run_name(p->run, obj) && p->run->nnames >= PLOOM_NAMES_MAX)
		return malformed(err, line, len, "more than 1024 names");
	name = dup_label(&f[2], PLOOM_NAME_MAX, &why);
	if (!name) {
		snprintf(msg, sizeof(msg), "NAME %s", why);
		return malformed(err, line, len, msg);
	}
	r = ploom_run_set_name(p->run, obj, name, err);
	free(name);
	return r;
}

/* ---- the run parser ---- */

void ploom_run_parser_init(struct ploom_run_parser *p, struct ploom_run *run, long timeout_ms)
{
	memset(p, 0, sizeof(*p));
	p->run = run;
	p->timeout_ms = timeout_ms;
}

static int parse_step(struct ploom_run_parser *p, const struct field *f, int nf,
		      const char *line, size_t len, struct ploom_err *err)
{
	struct ploom_step *s;
	long index;
	size_t i;
	int task, op, r;
	enum ploom_acquire_mode mode;

	if (nf != 9)
		return malformed(err, line, len, "expected 9 fields");
	if (parse_long(&index, &f[1], 0, LONG_MAX) < 0)
		return malformed(err, line, len, "bad INDEX");
	if ((size_t)index != p->run->nsteps)
		return malformed(err, line, len, "step out of order");
	if (parse_int(&task, &f[2], 0, INT_MAX) < 0)
		return malformed(err, line, len, "bad TASK");
	op = field_op(&f[3]);
	if (op < 0)
		return malformed(err, line, len, "unknown OP");
	if (field_is(&f[6], "-"))
		mode = PLOOM_ACQUIRE_BLOCKING;
	else if (field_is(&f[6], "nonblocking"))
		mode = PLOOM_ACQUIRE_NONBLOCKING;
	else if (field_is(&f[6], "timed"))
		mode = PLOOM_ACQUIRE_TIMED;
	else
		return malformed(err, line, len, "bad FLAGS");
	/* a mode belongs to an acquire or a join: elsewhere it would mean nothing */
	if (!ploom_mode_allowed((enum ploom_op)op, mode))
		return malformed(err, line, len, "FLAGS that OP does not take");
	s = ploom_run_add_step(p->run);
	if (!s)
		return ploom_err_oom(err);
	s->index = index;
	s->task = task;
	s->mode = mode;
	s->op = (enum ploom_op)op;
	if (field_obj(&s->obj, &s->object, &f[4]) < 0)
		return malformed(err, line, len, "bad OBJECT");
	if (parse_list(&s->enabled, &s->nenabled, &f[5]) < 0)
		return malformed(err, line, len, "bad ENABLED");
	if (!ploom_step_is_enabled(s, task))
		return malformed(err, line, len, "TASK is not enabled");
	if (parse_pending(s, &f[7]) < 0)
		return malformed(err, line, len, "bad PENDING");
	for (i = 0; i < s->nenabled; i++)
		if (s->enabled[i] != task && !is_pending(s, s->enabled[i]))
			return malformed(err, line, len, "an enabled task is not in PENDING");
	r = parse_where(&s->where, p->run, &f[8], err);
	if (r == -2)
		return -1;
	if (r < 0)
		return malformed(err, line, len, "bad WHERE");
	p->nstep_records++;
	return 0;
}

static int parse_outcome(struct ploom_run_parser *p, const struct field *f, int nf,
			 const char *line, size_t len, struct ploom_err *err)
{
	struct ploom_outcome *o = &p->run->outcome;

	if (p->have_outcome)
		return malformed(err, line, len, "second outcome");
	if (nf < 2)
		return malformed(err, line, len, "no KIND");
	if (field_is(&f[1], "pass")) {
		if (nf != 2)
			return malformed(err, line, len, "expected 2 fields");
		o->kind = PLOOM_OUTCOME_PASS;
	} else if (field_is(&f[1], "failure")) {
		if (nf != 6)
			return malformed(err, line, len, "expected 6 fields");
		if (parse_int(&o->task, &f[2], 0, INT_MAX) < 0)
			return malformed(err, line, len, "bad TASK");
		o->exc_type = dup_str(&f[3]);
		o->exc_message = dup_str(&f[4]);
		o->traceback = dup_str(&f[5]);
		if (!o->exc_type || !o->exc_message || !o->traceback)
			return malformed(err, line, len, "bad str field");
		o->kind = PLOOM_OUTCOME_FAILURE;
	} else if (field_is(&f[1], "deadlock")) {
		if (nf != 2)
			return malformed(err, line, len, "expected 2 fields");
		o->kind = PLOOM_OUTCOME_DEADLOCK;
		p->in_deadlock = 1;
	} else if (field_is(&f[1], "step-limit")) {
		if (nf != 3 || parse_long(&o->limit, &f[2], 0, LONG_MAX) < 0)
			return malformed(err, line, len, "bad LIMIT");
		o->kind = PLOOM_OUTCOME_STEP_LIMIT;
	} else if (field_is(&f[1], "divergence")) {
		if (nf != 4 || parse_long(&o->divergence_index, &f[2], 0, LONG_MAX) < 0)
			return malformed(err, line, len, "bad INDEX");
		o->divergence_message = dup_str(&f[3]);
		if (!o->divergence_message)
			return malformed(err, line, len, "bad MESSAGE");
		o->kind = PLOOM_OUTCOME_DIVERGENCE;
	} else if (field_is(&f[1], "refine")) {
		if (nf != 3)
			return malformed(err, line, len, "expected 3 fields");
		o->sites = dup_str(&f[2]);
		if (!o->sites || !*o->sites)
			return malformed(err, line, len, "bad SITES");
		o->kind = PLOOM_OUTCOME_REFINE;
	} else if (field_is(&f[1], "sleep-blocked")) {
		if (nf != 3 || parse_long(&o->divergence_index, &f[2], 0, LONG_MAX) < 0)
			return malformed(err, line, len, "bad INDEX");
		o->kind = PLOOM_OUTCOME_SLEEP_BLOCKED;
		p->in_deadlock = 1;
	} else {
		return malformed(err, line, len, "unknown outcome");
	}
	p->have_outcome = 1;
	return 0;
}

static int parse_wait(struct ploom_run_parser *p, const struct field *f, int nf,
		      const char *line, size_t len, struct ploom_err *err)
{
	struct ploom_outcome *o = &p->run->outcome;
	struct ploom_wait *w;
	struct ploom_obj obj;
	const char *why;
	char msg[64];
	int op, r;

	if (!p->in_deadlock)
		return malformed(err, line, len, "wait outside a deadlock");
	if (nf != 8)
		return malformed(err, line, len, "expected 8 fields");
	w = realloc(o->waits, (o->nwaits + 1) * sizeof(*w));
	if (!w)
		return ploom_err_oom(err);
	o->waits = w;
	w = &o->waits[o->nwaits++];
	memset(w, 0, sizeof(*w));
	if (parse_int(&w->task, &f[1], 0, INT_MAX) < 0)
		return malformed(err, line, len, "bad TASK");
	op = field_op(&f[2]);
	if (op < 0)
		return malformed(err, line, len, "unknown OP");
	w->op = (enum ploom_op)op;
	if (field_obj(&obj, &w->object, &f[3]) < 0)
		return malformed(err, line, len, "bad OBJECT");
	if (parse_int(&w->holder, &f[4], -1, INT_MAX) < 0)
		return malformed(err, line, len, "bad HOLDER");
	r = parse_where(&w->where, p->run, &f[5], err);
	if (r == -2)
		return -1;
	if (r < 0)
		return malformed(err, line, len, "bad WHERE");
	r = ploom_wait_for_parse(f[6].s, f[6].n);
	if (r < 0)
		return malformed(err, line, len, "unknown FOR");
	w->waits_for = (enum ploom_wait_for)r;
	if (f[7].n == 1 && f[7].s[0] == '=')
		return 0;
	w->on = dup_label(&f[7], PLOOM_NAME_MAX, &why);
	if (!w->on) {
		snprintf(msg, sizeof(msg), "ON %s", why);
		return malformed(err, line, len, msg);
	}
	return 0;
}

/* `stack TASK STATE DEPTH`: only after `exit timeout`, or the `exit` of
 * a run whose outcome was step-limit, before `output`, tasks ascending. */
static int parse_stack(struct ploom_run_parser *p, const struct field *f, int nf,
		       const char *line, size_t len, struct ploom_err *err)
{
	struct ploom_outcome *o = &p->run->outcome;
	struct ploom_stack *st;
	int task, state;
	long depth;

	if (!p->have_exit || p->have_output ||
	    (strcmp(p->exit_how, "timeout") &&
	     !(p->have_outcome && o->kind == PLOOM_OUTCOME_STEP_LIMIT)))
		return malformed(err, line, len, "stack outside a timeout or step limit");
	if (nf != 4)
		return malformed(err, line, len, "expected 4 fields");
	if (parse_int(&task, &f[1], 0, INT_MAX) < 0 ||
	    (o->nstacks && task <= o->stacks[o->nstacks - 1].task))
		return malformed(err, line, len, "bad TASK");
	if (o->nstacks >= PLOOM_STACK_TASKS_MAX)
		return malformed(err, line, len, "more than 1024 stacks");
	state = ploom_stack_state_parse(f[2].s, f[2].n);
	if (state < 0)
		return malformed(err, line, len, "bad STATE");
	if (parse_long(&depth, &f[3], 0, LONG_MAX) < 0 ||
	    (depth && state != PLOOM_STACK_RUNNING))
		return malformed(err, line, len, "bad DEPTH");
	st = realloc(o->stacks, (o->nstacks + 1) * sizeof(*st));
	if (!st)
		return ploom_err_oom(err);
	o->stacks = st;
	st = &o->stacks[o->nstacks++];
	memset(st, 0, sizeof(*st));
	st->task = task;
	st->state = (enum ploom_stack_state)state;
	st->depth = depth;
	p->in_stack = state == PLOOM_STACK_RUNNING;
	return 0;
}

/* `frame FILE LINE FUNCTION`: of the running stack just before. */
static int parse_frame(struct ploom_run_parser *p, const struct field *f, int nf,
		       const char *line, size_t len, struct ploom_err *err)
{
	struct ploom_outcome *o = &p->run->outcome;
	struct ploom_stack *st;
	struct ploom_where w = {NULL, NULL, 0};
	struct ploom_where *frames;

	if (!p->in_stack)
		return malformed(err, line, len, "frame outside a running stack");
	st = &o->stacks[o->nstacks - 1];
	if (st->nframes >= PLOOM_STACK_FRAMES_MAX || (long)st->nframes >= st->depth)
		return malformed(err, line, len, "more frames than DEPTH or 8");
	if (nf != 4)
		return malformed(err, line, len, "expected 4 fields");
	if (parse_int(&w.line, &f[2], 0, INT_MAX) < 0)
		return malformed(err, line, len, "bad LINE");
	if (where_labels(&w, &f[1], &f[3], line, len, err) < 0)
		return -1;
	frames = realloc(st->frames, (st->nframes + 1) * sizeof(*frames));
	if (!frames) {
		ploom_where_release(&w);
		return ploom_err_oom(err);
	}
	st->frames = frames;
	frames[st->nframes++] = w;
	return 0;
}

/* After `done`: turn the child's exit into an outcome when it sent none. */
static int finish(struct ploom_run_parser *p, const char *line, size_t len,
		  struct ploom_err *err)
{
	struct ploom_outcome *o = &p->run->outcome;

	/* the stacks belong to a timeout or a step limit: a child that sent
	 * another outcome before it was killed ended as that outcome says */
	if (p->have_outcome && o->kind != PLOOM_OUTCOME_STEP_LIMIT)
		ploom_outcome_release_stacks(o);
	if (!p->have_outcome) {
		if (!p->have_exit)
			return malformed(err, line, len, "run without outcome or exit");
		if (!strcmp(p->exit_how, "code")) {
			o->kind = PLOOM_OUTCOME_EXIT;
			o->status = p->exit_code;
		} else if (!strcmp(p->exit_how, "signal")) {
			o->kind = PLOOM_OUTCOME_CRASH;
			o->signal = p->exit_code;
		} else if (!strcmp(p->exit_how, "killed")) {
			/* no outcome of the scenario: the run stops here */
			return ploom_err_set(err, PLOOM_ERR_SYSTEM,
					     "a schedule's process was killed by signal %d from "
					     "outside ploom (the kernel's out-of-memory killer, "
					     "say): not a failure of the scenario, and nothing is "
					     "saved; stopped", p->exit_code);
		} else {
			o->kind = PLOOM_OUTCOME_TIMEOUT;
			o->timeout_ms = p->timeout_ms;
		}
	}
	p->done = 1;
	return ploom_run_finish(p->run, err);
}

/* `error command MESSAGE`, in place of a run's records: the worker could
 * not take the command (it goes on reading commands). */
static int parse_refusal(struct ploom_run_parser *p, const struct field *f, int nf,
			 const char *line, size_t len, struct ploom_err *err)
{
	char *msg;
	size_t i;

	if (p->nrecords != 1 || nf != 3 || !field_is(&f[1], "command") || !(msg = dup_str(&f[2])))
		return malformed(err, line, len, "expected error command MESSAGE, first");
	/* the message stays one line and cannot drive the terminal */
	for (i = 0; msg[i]; i++)
		if ((unsigned char)msg[i] < 0x20 || msg[i] == 0x7f)
			msg[i] = '?';
	ploom_err_set(err, PLOOM_ERR_WORKER, "the worker refused the command: %s", msg);
	free(msg);
	return -1;
}

/* `value`, `idle`, `stall` and `label`: what a record after a step adds to
 * the step at INDEX, each at most once. */
static int parse_step_note(struct ploom_run_parser *p, const struct field *f, int nf,
			   const char *line, size_t len, struct ploom_err *err)
{
	struct ploom_step *s;
	long n;

	if (nf < 2 || parse_long(&n, &f[1], 0, LONG_MAX) < 0 || (size_t)n >= p->run->nsteps)
		return malformed(err, line, len, "bad INDEX");
	s = &p->run->steps[n];
	if (field_is(&f[0], "value")) {
		if (nf != 3)
			return malformed(err, line, len, "bad INDEX");
		if (s->value)
			return malformed(err, line, len, "second value for a step");
		s->value = dup_str(&f[2]);
		if (!s->value)
			return malformed(err, line, len, "bad TEXT");
		return 0;
	}
	if (field_is(&f[0], "idle")) {
		long ns;
		if (nf != 3)
			return malformed(err, line, len, "bad INDEX");
		if (s->idle)
			return malformed(err, line, len, "second idle for a step");
		if (parse_long(&ns, &f[2], 0, LONG_MAX) < 0)
			return malformed(err, line, len, "bad NS");
		s->idle = 1;
		s->clock_ns = ns;
		return 0;
	}
	if (field_is(&f[0], "stall")) {
		long ns, task;
		if (nf != 4)
			return malformed(err, line, len, "bad INDEX");
		if (s->stalled)
			return malformed(err, line, len, "second stall for a step");
		if (s->mode != PLOOM_ACQUIRE_TIMED)
			return malformed(err, line, len, "stall of a step that is no timed wait");
		if (parse_long(&task, &f[2], -1, INT_MAX) < 0)
			return malformed(err, line, len, "bad TASK");
		if (parse_long(&ns, &f[3], 0, LONG_MAX) < 0)
			return malformed(err, line, len, "bad NS");
		s->stalled = 1;
		s->stall_of = (int)task;
		s->stall_ns = ns;
		return 0;
	}
	{
		const char *why;
		char msg[64];
		if (nf != 3)
			return malformed(err, line, len, "bad INDEX");
		if (s->label)
			return malformed(err, line, len, "second label for a step");
		s->label = dup_label(&f[2], PLOOM_NAME_MAX, &why);
		if (!s->label) {
			snprintf(msg, sizeof(msg), "TEXT %s", why);
			return malformed(err, line, len, msg);
		}
		return 0;
	}
}

int ploom_run_parser_line(struct ploom_run_parser *p, const char *line, size_t len,
			  struct ploom_err *err)
{
	struct field f[MAX_FIELDS];
	long n;
	int nf;

	if (p->done)
		return malformed(err, line, len, "record after done");
	p->nrecords++;
	if (memchr(line, '\0', len))
		return malformed(err, line, len, "NUL byte");
	nf = split(f, line, len);
	if (nf < 1)
		return malformed(err, line, len, "bad field separators");
	if (field_is(&f[0], "error"))
		return parse_refusal(p, f, nf, line, len, err);
	if (field_is(&f[0], "step"))
		return parse_step(p, f, nf, line, len, err);
	if (!field_is(&f[0], "wait"))
		p->in_deadlock = 0;
	if (field_is(&f[0], "frame"))
		return parse_frame(p, f, nf, line, len, err);
	p->in_stack = 0;
	if (field_is(&f[0], "stack"))
		return parse_stack(p, f, nf, line, len, err);
	if (field_is(&f[0], "wait"))
		return parse_wait(p, f, nf, line, len, err);
	if (field_is(&f[0], "value") || field_is(&f[0], "idle") || field_is(&f[0], "stall") ||
	    field_is(&f[0], "label"))
		return parse_step_note(p, f, nf, line, len, err);
	if (field_is(&f[0], "outcome"))
		return parse_outcome(p, f, nf, line, len, err);
	if (field_is(&f[0], "code"))
		return parse_code(p, f, nf, line, len, err);
	if (field_is(&f[0], "name"))
		return parse_name(p, f, nf, line, len, err);
	if (field_is(&f[0], "exit")) {
		int code;
		if (p->have_exit || nf != 3)
			return malformed(err, line, len, "expected one exit with 3 fields");
		if (!field_is(&f[1], "code") && !field_is(&f[1], "signal") &&
		    !field_is(&f[1], "timeout") && !field_is(&f[1], "killed"))
			return malformed(err, line, len, "bad HOW");
		if (parse_int(&code, &f[2], INT_MIN, INT_MAX) < 0)
			return malformed(err, line, len, "bad CODE");
		memcpy(p->exit_how, f[1].s, f[1].n);
		p->exit_how[f[1].n] = '\0';
		p->exit_code = code;
		p->have_exit = 1;
		return 0;
	}
	if (field_is(&f[0], "output")) {
		if (p->have_output || nf != 2)
			return malformed(err, line, len, "expected one output with 2 fields");
		p->run->outcome.output = dup_str(&f[1]);
		if (!p->run->outcome.output)
			return malformed(err, line, len, "bad TEXT");
		p->have_output = 1;
		return 0;
	}
	if (field_is(&f[0], "done")) {
		if (nf != 2 || parse_long(&n, &f[1], 0, LONG_MAX) < 0)
			return malformed(err, line, len, "bad NSTEPS");
		if (n != p->nstep_records)
			return malformed(err, line, len, "step count differs from the step records");
		if (finish(p, line, len, err) < 0)
			return -1;
		return 1;
	}
	return malformed(err, line, len, "unknown record");
}

int ploom_run_parse_text(struct ploom_run *out, const char *text, size_t len,
			 long timeout_ms, struct ploom_err *err)
{
	struct ploom_run_parser p;
	size_t i = 0;
	int r = 0;

	ploom_run_parser_init(&p, out, timeout_ms);
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		if (!nl)
			break;
		r = ploom_run_parser_line(&p, text + i, (size_t)(nl - text - i), err);
		if (r < 0)
			return -1;
		i = (size_t)(nl - text) + 1;
		if (r == 1)
			break;
	}
	if (r != 1)
		return ploom_err_set(err, PLOOM_ERR_WORKER,
				     "the worker stopped before the end of the run");
	if (i < len)
		return ploom_err_set(err, PLOOM_ERR_WORKER, "data after the end of the run");
	return 0;
}

/* ---- hello ---- */

void ploom_hello_release(struct ploom_hello *h)
{
	free(h->implementation);
	free(h->python_version);
	free(h->hash_seed);
	free(h->module);
	free(h->qualname);
	free(h->file);
	free(h->root);
	for (size_t i = 0; i < h->ninstrumented; i++)
		free(h->instrumented[i]);
	free(h->instrumented);
	for (size_t i = 0; i < h->nsources; i++)
		free(h->sources[i]);
	free(h->sources);
	memset(h, 0, sizeof(*h));
}

/* INSTRUMENTED: names separated by commas, none empty, or the empty
 * string for none.  Returns 0, or -1 (out keeps what it has, for
 * ploom_hello_release). */
static int hello_instrumented(struct ploom_hello *out, const struct field *f)
{
	char *all = dup_str(f), *name, *comma;
	size_t n = 1;
	int ret = -1;

	if (!all)
		return -1;
	if (!*all) {
		free(all);
		return 0;
	}
	for (name = all; (comma = strchr(name, ',')); name = comma + 1)
		n++;
	out->instrumented = calloc(n, sizeof(*out->instrumented));
	if (!out->instrumented)
		goto done;
	for (name = all;; name = comma + 1) {
		comma = strchr(name, ',');
		if (comma)
			*comma = '\0';
		if (!*name || !(out->instrumented[out->ninstrumented] = strdup(name)))
			goto done;
		out->ninstrumented++;
		if (!comma)
			break;
	}
	ret = 0;
done:
	free(all);
	return ret;
}

/* SOURCES: absolute paths, each a label ended by a newline, at most
 * PLOOM_SOURCES_MAX.  Returns 0, or -1 (out keeps what it has, for
 * ploom_hello_release). */
static int hello_sources(struct ploom_hello *out, const struct field *f)
{
	size_t n = 0, dlen;
	char *all, *p, *nl;
	int ret = -1;

	if (!f->n || f->s[0] != '=')
		return -1;
	all = ploom_str_decode(f->s + 1, f->n - 1, &dlen);
	if (!all)
		return -1;
	if (memchr(all, '\0', dlen))
		goto done;
	for (p = all; (nl = strchr(p, '\n')); p = nl + 1)
		n++;
	if (*p || n > PLOOM_SOURCES_MAX)
		goto done; /* the last one unended, or too many */
	out->sources = n ? calloc(n, sizeof(*out->sources)) : NULL;
	if (n && !out->sources)
		goto done;
	for (p = all; (nl = strchr(p, '\n')); p = nl + 1) {
		if (p[0] != '/' || ploom_label_problem(p, (size_t)(nl - p), PLOOM_PATH_MAX))
			goto done;
		if (!(out->sources[out->nsources] = strndup(p, (size_t)(nl - p))))
			goto done;
		out->nsources++;
	}
	ret = 0;
done:
	free(all);
	return ret;
}

/* ROOT: an absolute folder that is a label, or the empty string for
 * none.  Returns 0, or -1. */
static int hello_root(struct ploom_hello *out, const struct field *f)
{
	size_t n;
	char *root;

	if (!f->n || f->s[0] != '=')
		return -1;
	root = ploom_str_decode(f->s + 1, f->n - 1, &n);
	if (!root)
		return -1;
	if (!n) {
		free(root);
		return 0;
	}
	if (root[0] != '/' || memchr(root, '\0', n) || ploom_label_problem(root, n, PLOOM_PATH_MAX)) {
		free(root);
		return -1;
	}
	out->root = root;
	return 0;
}

#define DETAIL_WHY (sizeof(((struct ploom_err *)0)->msg) + 16)

/* The JSON object of `error KIND DETAIL` (event.h) as the message says
 * it: "TYPE: MESSAGE", or MESSAGE when it names no type; malloc'd.  NULL
 * with err filled (why: what is wrong with it) when DETAIL is no such
 * object. */
static char *error_detail(const struct field *f, char why[DETAIL_WHY], struct ploom_err *err)
{
	struct ploom_err jerr = {0, ""};
	struct ploom_json_reader r = {&jerr, 0, 0};
	char *text, *message = NULL, *type = NULL, *out = NULL;
	size_t n;
	cJSON *root = NULL;

	snprintf(why, DETAIL_WHY, "expected error KIND DETAIL");
	if (!f->n || f->s[0] != '=' || !(text = ploom_str_decode(f->s + 1, f->n - 1, &n)))
		return NULL;
	if (!(root = ploom_json_parse(text, n, &jerr)))
		r.failed = 1;
	else if (!cJSON_IsObject(root))
		ploom_json_fail(&r, "is not an object", "", "DETAIL");
	ploom_json_get_str(&r, &message, root, "", "message", 1, 0);
	ploom_json_get_str(&r, &type, root, "", "type", 0, 1);
	if (r.failed && jerr.kind == PLOOM_ERR_NOMEM) {
		ploom_err_oom(err);
		why[0] = '\0';
	} else if (r.failed) {
		snprintf(why, DETAIL_WHY, "DETAIL: %s", jerr.msg);
	} else {
		if (!type)
			out = strdup(message);
		else if (asprintf(&out, "%s: %s", type, message) < 0)
			out = NULL;
		if (!out) {
			ploom_err_oom(err);
			why[0] = '\0';
		}
	}
	cJSON_Delete(root);
	free(text);
	free(message);
	free(type);
	return out;
}

int ploom_hello_parse(struct ploom_hello *out, const char *line, size_t len,
		      const char *target, struct ploom_err *err)
{
	struct field f[MAX_FIELDS];
	char *msg, why[DETAIL_WHY];
	size_t i;
	int nf;

	if (memchr(line, '\0', len))
		return malformed(err, line, len, "NUL byte");
	nf = split(f, line, len);
	if (nf >= 1 && field_is(&f[0], "error")) {
		if (nf != 3)
			return malformed(err, line, len, "expected error KIND DETAIL");
		if (!(msg = error_detail(&f[2], why, err)))
			return why[0] ? malformed(err, line, len, why) : -1;
		/* the exception's text, which may hold newlines or escapes:
		 * the message stays one line and cannot drive the terminal */
		for (i = 0; msg[i]; i++)
			if ((unsigned char)msg[i] < 0x20 || msg[i] == 0x7f)
				msg[i] = '?';
		if (field_is(&f[1], "source"))
			ploom_err_set(err, PLOOM_ERR_DIVERGENCE, "%s", msg);
		else
			ploom_err_set(err, PLOOM_ERR_INPUT, "cannot load scenario '%s': %s",
				      target, msg);
		free(msg);
		return -1;
	}
	if (nf < 1 || !field_is(&f[0], "hello"))
		return malformed(err, line, len, "expected hello");
	if (nf < 2 || parse_int(&out->version, &f[1], 0, INT_MAX) < 0)
		return malformed(err, line, len, "bad VERSION");
	if (out->version != PLOOM_PROTOCOL_VERSION)
		return ploom_err_set(err, PLOOM_ERR_WORKER,
				     "the worker speaks protocol version %d (this ploom speaks %d)",
				     out->version, PLOOM_PROTOCOL_VERSION);
	if (nf != 13)
		return malformed(err, line, len, "expected 13 fields");
	if (parse_int(&out->gil, &f[4], 0, 1) < 0)
		return malformed(err, line, len, "bad GIL");
	if (parse_int(&out->scenario_instrumented, &f[9], 0, 1) < 0)
		return malformed(err, line, len, "bad SCENARIO");
	if (hello_instrumented(out, &f[10]) < 0)
		return malformed(err, line, len, "bad INSTRUMENTED");
	if (hello_sources(out, &f[11]) < 0)
		return malformed(err, line, len, "bad SOURCES");
	if (hello_root(out, &f[12]) < 0)
		return malformed(err, line, len, "bad ROOT");
	out->implementation = dup_str(&f[2]);
	out->python_version = dup_str(&f[3]);
	out->hash_seed = dup_str(&f[5]);
	out->module = dup_str(&f[6]);
	out->qualname = dup_str(&f[7]);
	out->file = dup_str(&f[8]);
	if (!out->implementation || !out->python_version || !out->hash_seed ||
	    !out->module || !out->qualname || !out->file)
		return malformed(err, line, len, "bad str field");
	if (!*out->file) {
		free(out->file);
		out->file = NULL;
	}
	return 0;
}

