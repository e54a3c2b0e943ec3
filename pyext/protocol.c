/* protocol.c - the records a schedule's child writes, and where they go.
 *
 * The encoders are lib/event.h's (ploom_enc_*): this file turns the
 * scheduler's Python objects into what they take (an object's name, a
 * value's repr, the code and line a task stopped at) and moves the
 * buffered records to the record area that the worker relays (see struct
 * record_area in ploom.h).  The protocol's decoders stay in lib/: the
 * extension never reads a record.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ploom.h"

#define VALUE_REPR_MAX 200

/* ---- records ---------------------------------------------------------- */

static void die_quietly(void)
{
	/* the reader is gone: nobody is left to tell */
	_exit(120);
}

/* Blocks until the worker has emptied the full area. */
static void wait_for_drain(struct sched *s)
{
	uint64_t one = 1;

	atomic_store(&s->area->drain_req, 1);
	if (write(s->drain_fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		die_quietly();
	while (sem_wait(&s->area->drained) < 0 && errno == EINTR)
		;
}

/* Moves the buffered records to the area.  A batch is published with one
 * store of len, so the worker only ever sees whole lines, except when one
 * batch is larger than the whole area. */
void sched_flush(struct sched *s)
{
	struct record_area *a = s->area;
	size_t off = 0;

	/* only a schedule's child records, and only serve() runs one */
	assert(a);
	stray_fork_check(s);
	while (off < s->buf.len) {
		size_t len = atomic_load_explicit(&a->len, memory_order_relaxed);
		size_t n = s->buf.len - off;

		if (n > sizeof(a->data) - len) {
			/* keep a batch whole when emptying the area makes room */
			if (len) {
				wait_for_drain(s);
				continue;
			}
			n = sizeof(a->data);
		}
		memcpy(a->data + len, s->buf.data + off, n);
		atomic_store_explicit(&a->len, len + n, memory_order_release);
		off += n;
	}
	s->buf.len = 0;
}

/* The object of a pending operation, as the records name it. */
struct ploom_obj op_obj(struct sched *s, PyObject *obj, enum ploom_op op)
{
	if (!obj)
		return (struct ploom_obj){PLOOM_OBJ_NONE, 0};
	if (op == PLOOM_OP_SLEEP || obj == s->clock_obj)
		return (struct ploom_obj){PLOOM_OBJ_CLOCK, 0};
	if (op == PLOOM_OP_ACQUIRE || op == PLOOM_OP_RELEASE || op == PLOOM_OP_LOCKED)
		return (struct ploom_obj){PLOOM_OBJ_LOCK, ((LockObject *)obj)->oid};
	if ((op == PLOOM_OP_READ || op == PLOOM_OP_WRITE) && Py_IS_TYPE(obj, s->plain_type))
		return (struct ploom_obj){PLOOM_OBJ_PLAIN, ((PlainObject *)obj)->oid};
	if (op == PLOOM_OP_READ || op == PLOOM_OP_WRITE)
		return (struct ploom_obj){PLOOM_OBJ_CELL, ((CellObject *)obj)->oid};
	/* a thread is named by its task id; an unstarted one by the id
	 * `start` is about to give it, since nothing runs in between */
	ThreadObject *t = (ThreadObject *)obj;
	return (struct ploom_obj){PLOOM_OBJ_THREAD, t->tid >= 0 ? t->tid : s->ntasks};
}

void add_value(struct sched *s, PyObject *v)
{
	PyObject *r = PyObject_Repr(v);

	if (!r) {
		PyErr_Clear();
		return;
	}
	add_value_text(s, r);
	Py_DECREF(r);
}

void add_value_text(struct sched *s, PyObject *r)
{
	const char *u;
	Py_ssize_t len;

	u = PyUnicode_AsUTF8AndSize(r, &len);
	if (!u) {
		PyErr_Clear();
		return;
	}
	if (len > VALUE_REPR_MAX)
		len = VALUE_REPR_MAX;
	ploom_enc_value(&s->buf, s->step - 1, u, (size_t)len);
	/* at once: the code after this op may crash the process */
	sched_flush(s);
}

/* ---- where a task stopped -------------------------------------------- */

static size_t code_hash(const PyObject *code)
{
	uintptr_t h = (uintptr_t)code;

	h ^= h >> 4;
	return (size_t)(h * 0x9E3779B97F4A7C15ULL >> 16);
}

/* The slot of code in the table, or the free slot it would take. */
static struct code_slot *code_slot(struct sched *s, PyObject *code)
{
	size_t i = code_hash(code) & (s->codes_cap - 1);

	while (s->codes[i].code && s->codes[i].code != code)
		i = (i + 1) & (s->codes_cap - 1);
	return &s->codes[i];
}

static int codes_grow(struct sched *s)
{
	size_t cap = s->codes_cap ? 2 * s->codes_cap : 64, i;
	struct code_slot *old = s->codes, *slot;
	size_t old_cap = s->codes_cap;

	s->codes = calloc(cap, sizeof(*s->codes));
	if (!s->codes) {
		s->codes = old;
		return -1;
	}
	s->codes_cap = cap;
	for (i = 0; i < old_cap; i++) {
		if (!old[i].code)
			continue;
		slot = code_slot(s, old[i].code);
		*slot = old[i];
	}
	free(old);
	return 0;
}

/* What a step that stops in code records of it: the INDEX of its `code`
 * record, sent the first time (CODE_PLOOM, CODE_NONE: see struct
 * code_slot). */
static long code_index(struct sched *s, PyCodeObject *co)
{
	PyObject *code = (PyObject *)co;
	struct code_slot *slot;
	const char *file, *fn;
	Py_ssize_t flen, fnlen;
	char *abs = NULL;
	long index = CODE_NONE;

	if (s->codes_cap) {
		slot = code_slot(s, code);
		if (slot->code)
			return slot->index;
	}
	if (2 * (s->codes_used + 1) > s->codes_cap && codes_grow(s) < 0)
		return CODE_NONE;
	file = PyUnicode_AsUTF8AndSize(co->co_filename, &flen);
	fn = file ? PyUnicode_AsUTF8AndSize(co->co_name, &fnlen) : NULL;
	if (!file || !fn) {
		PyErr_Clear();
	} else if (s->ploom_dir && (size_t)flen > s->ploom_dir_len &&
		   !memcmp(file, s->ploom_dir, s->ploom_dir_len)) {
		index = CODE_PLOOM;
	} else {
		/* Python's relative names are the worker's folder's; "<string>"
		 * and the like name no file */
		if (file[0] != '/' && file[0] != '<' && s->cwd) {
			if (asprintf(&abs, "%s/%s", s->cwd, file) < 0)
				abs = NULL;
			if (abs) {
				file = abs;
				flen = (Py_ssize_t)strlen(abs);
			}
		}
		if (flen > 0 && flen <= PLOOM_PATH_MAX) {
			index = s->ncodes++;
			ploom_enc_code(&s->buf, index, file, (size_t)flen, fn, (size_t)fnlen);
		}
		free(abs);
	}
	slot = code_slot(s, code);
	slot->code = Py_NewRef(code);
	slot->index = index;
	s->codes_used++;
	return index;
}

/* Where the calling task, at a scheduling point, stopped: the innermost
 * Python frame outside the ploom package (so a step inside ploom.threading
 * names the line that called it). */
struct ploom_wire_where locate(struct sched *s)
{
	struct ploom_wire_where where = {-1, 0};
	PyFrameObject *f = PyThreadState_GetFrame(PyThreadState_Get()), *back;

	while (f) {
		PyCodeObject *co = PyFrame_GetCode(f);
		long index = code_index(s, co);

		Py_DECREF(co);
		if (index != CODE_PLOOM) {
			if (index >= 0) {
				where.code = index;
				where.line = PyFrame_GetLineNumber(f);
			}
			Py_DECREF(f);
			break;
		}
		back = PyFrame_GetBack(f);
		Py_DECREF(f);
		f = back;
	}
	return where;
}

/* Where a thread's first step stops: the first line of the function it
 * runs (its target, or a subclass's run). */
struct ploom_wire_where locate_function(struct sched *s, ThreadObject *th)
{
	struct ploom_wire_where where = {-1, 0};
	PyObject *fn = th->target, *run = NULL;
	long index;

	if (!fn || fn == Py_None) {
		run = PyObject_GetAttrString((PyObject *)Py_TYPE(th), "run");
		if (!run)
			PyErr_Clear();
		fn = run;
	}
	if (fn && PyMethod_Check(fn))
		fn = PyMethod_GET_FUNCTION(fn);
	if (fn && PyFunction_Check(fn)) {
		PyCodeObject *co = (PyCodeObject *)PyFunction_GET_CODE(fn);
		index = code_index(s, co);
		if (index >= 0) {
			where.code = index;
			where.line = co->co_firstlineno;
		}
	}
	Py_XDECREF(run);
	return where;
}

/* Sends obj's name, str name (or NULL: none), unless it went already
 * (*announced) or the run named as many objects as the protocol allows. */
static void announce(struct sched *s, struct ploom_obj obj, PyObject *name, int *announced)
{
	const char *u;
	Py_ssize_t len;

	if (!name || *announced || s->nnamed >= PLOOM_NAMES_MAX)
		return;
	u = PyUnicode_AsUTF8AndSize(name, &len);
	if (!u) {
		PyErr_Clear();
		return;
	}
	if (!len)
		return; /* an empty name is none */
	ploom_enc_name(&s->buf, obj, u, (size_t)len);
	*announced = 1;
	s->nnamed++;
}

/* The name of a cell or lock an operation is about to name in a step. */
void announce_obj(struct sched *s, PyObject *obj, enum ploom_op op)
{
	struct ploom_obj o = op_obj(s, obj, op);

	if (o.kind == PLOOM_OBJ_LOCK)
		announce(s, o, ((LockObject *)obj)->name, &((LockObject *)obj)->announced);
	else if (o.kind == PLOOM_OBJ_CELL)
		announce(s, o, ((CellObject *)obj)->name, &((CellObject *)obj)->announced);
	else if (o.kind == PLOOM_OBJ_PLAIN)
		announce(s, o, ((PlainObject *)obj)->name, &((PlainObject *)obj)->announced);
}

/* A thread's name, sent again when it changes: the last one counts. */
void announce_thread(struct sched *s, struct task *t, PyObject *name)
{
	int again = 0;

	if (t->named) {
		/* already counted among the named objects */
		s->nnamed--;
		again = 1;
	}
	t->named = 0;
	announce(s, (struct ploom_obj){PLOOM_OBJ_THREAD, t->id}, name, &t->named);
	if (again && !t->named)
		s->nnamed++;
}

/* ---- shared with the fork server ------------------------------------- */

/* What Python code printed goes before what comes next: the worker's
 * output before a fork, a schedule's before its child ends. */
void flush_python_stdio(void)
{
	static const char *const names[] = {"stdout", "stderr"};
	size_t i;

	for (i = 0; i < 2; i++) {
		PyObject *f = PySys_GetObject(names[i]);
		if (f && f != Py_None) {
			PyObject *r = PyObject_CallMethod(f, "flush", NULL);
			if (!r)
				PyErr_Clear();
			Py_XDECREF(r);
		}
	}
}

/* The UTF-8 of a str, "" for NULL or when it has none; valid while o lives. */
const char *utf8_of(PyObject *o, size_t *len)
{
	const char *u = NULL;
	Py_ssize_t n = 0;

	if (o)
		u = PyUnicode_AsUTF8AndSize(o, &n);
	if (!u) {
		PyErr_Clear();
		u = "";
		n = 0;
	}
	*len = (size_t)n;
	return u;
}

