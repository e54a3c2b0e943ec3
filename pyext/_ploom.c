/* ploom._ploom - the operations a scenario uses, the scheduler that runs
 * them one task at a time, and the fork server that runs one schedule per
 * child process.
 *
 * How a schedule runs
 * -------------------
 * The worker (python -m ploom._worker) imports the scenario once and calls
 * serve().  For each `run` command serve() forks; the child runs the
 * scenario on its main thread as task 0.  Every ploom.Thread is a real OS
 * thread, but only the task holding the baton runs: before each operation a
 * task stops at a scheduling point, picks the next task (following the
 * requested choices, then the `run` command's policy: lib/policy.h's
 * default, random or pct), records the step (see record_area)
 * and, if it picked another task, posts that task's semaphore and sleeps on
 * its own.  So scheduler state is only ever touched by the baton holder, and
 * sem_post/sem_wait order those accesses: no other lock is needed, with or
 * without the GIL.  The schedule ends in whichever task sees the end (all
 * finished, an exception, a deadlock, the step limit): it writes the outcome
 * and _exit()s the child, so no interpreter teardown runs after a schedule.
 *
 * lib/event.h documents the records written here.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <sched.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/event.h"

/* CPython's keyword lists are char *, our literals const under -Wwrite-strings */
#define KW(s) ((char *)(s))

#define VALUE_REPR_MAX 200
#define OUTPUT_MAX (64 * 1024)
#define TASK_STACK_SIZE (4 * 1024 * 1024)

/* Lock.holder when nobody holds it, and when code outside a check holds it. */
#define HOLDER_NONE (-1)
#define HOLDER_OUTSIDE (-2)

typedef struct {
	PyObject_HEAD
	long oid;
	int holder;
	PyObject *name;   /* str given, NULL for none (the default "lock#N") */
	int announced;    /* its `name` record is sent in this schedule */
} LockObject;

typedef struct {
	PyObject_HEAD
	long oid;
	PyObject *value;
	PyObject *name;   /* str given, NULL for none (the default "cell#N") */
	int announced;    /* its `name` record is sent in this schedule */
} CellObject;

typedef struct {
	PyObject_HEAD
	PyObject *target;
	PyObject *args;
	PyObject *kwargs;
	PyObject *name; /* str given or set, NULL for the default (Thread_get_name) */
	int daemon;   /* kept for threading's API: ploom waits for every task */
	int tid;      /* task id once started, else -1 */
	int finished; /* its task has finished */
} ThreadObject;

enum task_state { TASK_AT_POINT, TASK_RUNNING, TASK_FINISHED };

struct task {
	int id;
	enum task_state state;
	enum ploom_op op;         /* pending operation while at a point */
	PyObject *obj;      /* its object, borrowed: the op's caller keeps it alive */
	enum ploom_acquire_mode mode; /* of a pending acquire */
	sem_t go;           /* posted to hand this task the baton */
	ThreadObject *thread; /* strong; for the main task NULL until main_thread_of() */
	struct sched *sched;
	struct ploom_wire_where where; /* where it stopped for op (event.h's WHERE) */
	int named;          /* its thread's `name` record is sent */
};

/* The child's records do not go to the event fd as they happen: every write
 * would wake the utility, which then competes with the schedule for the
 * CPU (that doubled the cost of a schedule).  They go to this area, shared
 * with the worker, which sends them on once the child has ended, however
 * it ended: memory written before a crash or a kill is not lost.
 *
 * The worker is the only writer of the event fd.  A child writing there
 * itself could be killed (by the schedule's timeout) halfway through a
 * record, and the utility would read a cut line.  So when the area is
 * full the child asks the worker to empty it (drain_req, then the drain
 * eventfd) and waits on `drained`; the worker forwards the whole lines and
 * keeps a cut tail until the rest comes.  A child killed at any byte
 * leaves whole records in the area, except the tail of one larger than the
 * area, and the worker drops a tail that never ended. */
#define RECORD_AREA_SIZE (4u << 20)
#define RECORD_AREA_HEAD 128

struct record_area {
	atomic_size_t len;      /* bytes of data in use */
	/* 1 while the child waits for the worker to empty the area: the
	 * child does not touch the area then, so the worker may */
	atomic_int drain_req;
	sem_t drained;          /* posted by the worker once it has emptied it */
	char data[RECORD_AREA_SIZE - RECORD_AREA_HEAD];
};

struct sched {
	int active;          /* this process is running a schedule */
	struct task **tasks;
	int ntasks;
	int cap;
	int prev;            /* task that ran the previous step */
	long step;           /* steps taken so far */
	long max_steps;      /* 0: unbounded */
	int *choices;
	int nchoices;
	int next_choice;
	int *sleep;          /* the run command's sleep set... */
	size_t nsleep;
	int sleep_active;    /* ...in effect from its last choice on */
	char *asleep;        /* per task, cap entries */
	/* how the child picks past the choices: the run command's policy,
	 * and the policy that a schedule's child starts from it */
	struct ploom_policy_spec policy_spec;
	struct ploom_policy policy;
	int *cand;           /* scratch, cap entries: the tasks the policy picks from */
	int last_task;       /* the previous step, for waking sleepers */
	enum ploom_op last_op;
	struct ploom_obj last_obj;
	struct ploom_pending *pending; /* scratch, cap entries */
	struct record_area *area; /* where the child's records go, see above */
	int drain_fd;        /* eventfd: the child asks the worker to empty the area */
	struct ploom_buf buf;
	int *enabled;        /* scratch, cap entries */
	/* The code objects a step stopped in, each with the INDEX of its
	 * `code` record or CODE_PLOOM: a schedule's child fills it (the
	 * worker runs no schedule, so each child starts empty) and keeps
	 * every code a reference, so that no address is reused. */
	struct code_slot *codes;
	size_t codes_cap, codes_used;
	long ncodes;         /* `code` records sent */
	int nnamed;          /* objects a `name` record named */
	char *ploom_dir;     /* the ploom package's folder, with a final '/' */
	size_t ploom_dir_len;
	char *cwd;           /* the worker's, for a code's relative file */
};

/* A code in sched.codes: index >= 0, the INDEX of its `code` record;
 * CODE_PLOOM, code of the ploom package, which a where looks past;
 * CODE_NONE, code whose file cannot be named (no UTF-8 for it, too long). */
#define CODE_PLOOM (-2)
#define CODE_NONE (-1)
struct code_slot {
	PyObject *code;     /* strong, NULL for a free slot */
	long index;
};

typedef struct {
	PyTypeObject *lock_type;
	PyTypeObject *cell_type;
	PyTypeObject *thread_type;
	long next_lock;
	long next_cell;
	struct sched sched;
	/* main_thread(): task 0's Thread, made on first use in a schedule's
	 * process (one per schedule, as each runs in a fork of its own) */
	PyObject *main_thread;
} module_state;

/* The task the calling OS thread runs, NULL on threads ploom does not
 * schedule.  Plain C state, so a thread-local is fine in every build. */
static _Thread_local struct task *current_task;

static struct PyModuleDef module_def;

/* By definition rather than PyType_GetModuleState(): a Python subclass of
 * Thread has no module of its own, so the lookup must walk the MRO. */
static module_state *state_of_type(PyTypeObject *tp)
{
	PyObject *m = PyType_GetModuleByDef(tp, &module_def);

	assert(m); /* every type reaching here derives from one of ours */
	return (module_state *)PyModule_GetState(m);
}

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
static void sched_flush(struct sched *s)
{
	struct record_area *a = s->area;
	size_t off = 0;

	/* only a schedule's child records, and only serve() runs one */
	assert(a);
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
static struct ploom_obj op_obj(struct sched *s, PyObject *obj, enum ploom_op op)
{
	if (!obj)
		return (struct ploom_obj){PLOOM_OBJ_NONE, 0};
	if (op == PLOOM_OP_ACQUIRE || op == PLOOM_OP_RELEASE || op == PLOOM_OP_LOCKED)
		return (struct ploom_obj){PLOOM_OBJ_LOCK, ((LockObject *)obj)->oid};
	if (op == PLOOM_OP_READ || op == PLOOM_OP_WRITE)
		return (struct ploom_obj){PLOOM_OBJ_CELL, ((CellObject *)obj)->oid};
	/* a thread is named by its task id; an unstarted one by the id
	 * `start` is about to give it, since nothing runs in between */
	ThreadObject *t = (ThreadObject *)obj;
	return (struct ploom_obj){PLOOM_OBJ_THREAD, t->tid >= 0 ? t->tid : s->ntasks};
}

static void add_value(struct sched *s, PyObject *v)
{
	PyObject *r = PyObject_Repr(v);
	const char *u;
	Py_ssize_t len;

	if (!r) {
		PyErr_Clear();
		return;
	}
	u = PyUnicode_AsUTF8AndSize(r, &len);
	if (!u) {
		PyErr_Clear();
		Py_DECREF(r);
		return;
	}
	if (len > VALUE_REPR_MAX)
		len = VALUE_REPR_MAX;
	ploom_enc_value(&s->buf, s->step - 1, u, (size_t)len);
	Py_DECREF(r);
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
static struct ploom_wire_where locate(struct sched *s)
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
static struct ploom_wire_where locate_function(struct sched *s, ThreadObject *th)
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
static void announce_obj(struct sched *s, PyObject *obj, enum ploom_op op)
{
	struct ploom_obj o = op_obj(s, obj, op);

	if (o.kind == PLOOM_OBJ_LOCK)
		announce(s, o, ((LockObject *)obj)->name, &((LockObject *)obj)->announced);
	else if (o.kind == PLOOM_OBJ_CELL)
		announce(s, o, ((CellObject *)obj)->name, &((CellObject *)obj)->announced);
}

/* A thread's name, sent again when it changes: the last one counts. */
static void announce_thread(struct sched *s, struct task *t, PyObject *name)
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

/* ---- ending a schedule ------------------------------------------------ */

static void flush_python_stdio(void)
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

/* Called with the GIL (or an attached thread state): writes what is
 * buffered plus the outcome and ends the child. */
static _Noreturn void sched_end(struct sched *s)
{
	flush_python_stdio();
	sched_flush(s);
	_exit(0);
}

/* The UTF-8 of a str, "" for NULL or when it has none; valid while o lives. */
static const char *utf8_of(PyObject *o, size_t *len)
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

static PyObject *exception_type_name(PyObject *exc)
{
	PyObject *tp = (PyObject *)Py_TYPE(exc);
	PyObject *mod = PyObject_GetAttrString(tp, "__module__");
	PyObject *qual = PyObject_GetAttrString(tp, "__qualname__");
	PyObject *r = NULL;

	if (mod && qual && PyUnicode_Check(mod))
		r = PyUnicode_FromFormat("%U.%U", mod, qual);
	else if (qual)
		r = PyObject_Str(qual);
	PyErr_Clear();
	Py_XDECREF(mod);
	Py_XDECREF(qual);
	return r;
}

static PyObject *format_traceback(PyObject *exc)
{
	PyObject *tb_mod = PyImport_ImportModule("traceback");
	PyObject *lines = NULL, *empty = NULL, *r = NULL;

	if (!tb_mod)
		goto done;
	lines = PyObject_CallMethod(tb_mod, "format_exception", "O", exc);
	if (!lines)
		goto done;
	empty = PyUnicode_FromString("");
	if (!empty)
		goto done;
	r = PyUnicode_Join(empty, lines);
done:
	PyErr_Clear();
	Py_XDECREF(tb_mod);
	Py_XDECREF(lines);
	Py_XDECREF(empty);
	return r;
}

/* The task's code raised: that is the schedule's outcome. */
static _Noreturn void sched_fail(struct sched *s, struct task *t)
{
	PyObject *exc = PyErr_GetRaisedException();
	PyObject *type = NULL, *msg = NULL, *tb = NULL;
	const char *tu, *mu, *bu;
	size_t tl, ml, bl;

	if (exc) {
		type = exception_type_name(exc);
		msg = PyObject_Str(exc);
		if (!msg)
			PyErr_Clear();
		tb = format_traceback(exc);
	}
	tu = utf8_of(type, &tl);
	mu = utf8_of(msg, &ml);
	bu = utf8_of(tb, &bl);
	ploom_enc_outcome_failure(&s->buf, t->id, tu, tl, mu, ml, bu, bl);
	sched_end(s);
}

/* ---- picking the next task ------------------------------------------- */

static int task_enabled(struct sched *s, struct task *t)
{
	(void)s;
	if (t->state != TASK_AT_POINT)
		return 0;
	/* a nonblocking or timed acquire runs on a held lock too: it returns
	 * False there; a timed join runs on a live thread: it returns None */
	if (t->op == PLOOM_OP_ACQUIRE && t->mode == PLOOM_ACQUIRE_BLOCKING)
		return ((LockObject *)t->obj)->holder == HOLDER_NONE;
	if (t->op == PLOOM_OP_JOIN && t->mode == PLOOM_ACQUIRE_BLOCKING) {
		ThreadObject *th = (ThreadObject *)t->obj;
		/* joining an unstarted thread or oneself raises when it runs */
		return th->tid < 0 || th->tid == t->id || th->finished;
	}
	return 1;
}

static int holder_of(struct task *t)
{
	if (t->op == PLOOM_OP_ACQUIRE)
		return ((LockObject *)t->obj)->holder;
	if (t->op == PLOOM_OP_JOIN)
		return ((ThreadObject *)t->obj)->tid;
	return -1;
}

static _Noreturn void sched_deadlock(struct sched *s)
{
	int i;

	/* before the outcome: wait records follow it with nothing between */
	for (i = 0; i < s->ntasks; i++)
		if (s->tasks[i]->state != TASK_FINISHED)
			announce_obj(s, s->tasks[i]->obj, s->tasks[i]->op);
	ploom_enc_outcome_deadlock(&s->buf);
	for (i = 0; i < s->ntasks; i++) {
		struct task *t = s->tasks[i];
		if (t->state == TASK_FINISHED)
			continue;
		ploom_enc_wait(&s->buf, t->id, t->op, op_obj(s, t->obj, t->op), holder_of(t),
			       t->where);
	}
	sched_end(s);
}

/* The accesses of the operation task t waits to do (event.h). */
static int pending_accesses(struct sched *s, struct task *t, struct ploom_access out[2])
{
	return ploom_pending_accesses(out, t->id, t->op, op_obj(s, t->obj, t->op));
}

/* Wakes every sleeping task whose pending operation conflicts with the
 * step just taken (with its exit, if that step ended its task). */
static void sleep_after_step(struct sched *s)
{
	struct ploom_access last[2], mine[2];
	int nlast, i;

	nlast = ploom_op_accesses(last, s->last_task, s->last_op, s->last_obj,
				  s->tasks[s->last_task]->state == TASK_FINISHED);
	for (i = 0; i < s->ntasks; i++) {
		struct task *t = s->tasks[i];
		if (!s->asleep[i] || t->state == TASK_FINISHED)
			continue;
		if (ploom_conflicts(last, nlast, mine, pending_accesses(s, t, mine)))
			s->asleep[i] = 0;
	}
}

/* The sleep set of the `run` command takes effect where its last choice is
 * made (or at the first step). */
static void sleep_start(struct sched *s)
{
	size_t i;

	s->sleep_active = 1;
	for (i = 0; i < s->nsleep; i++)
		if (s->sleep[i] < s->ntasks)
			s->asleep[s->sleep[i]] = 1;
}

/* The default choice among the enabled tasks that are awake: the task
 * of the previous step, else the lowest; -1 when all sleep. */
static int default_choice(struct sched *s, const int *enabled, int n)
{
	int i, first = -1;

	for (i = 0; i < n; i++) {
		if (s->sleep_active && s->asleep[enabled[i]])
			continue;
		if (enabled[i] == s->prev)
			return s->prev;
		if (first < 0)
			first = enabled[i];
	}
	return first;
}

/* The choice past the run command's choices: the default, or its
 * policy's among the enabled tasks that are awake; -1 when all sleep. */
static int policy_choice(struct sched *s, int n)
{
	int i, m = 0;

	if (s->policy.spec.kind == PLOOM_POLICY_DEFAULT)
		return default_choice(s, s->enabled, n);
	for (i = 0; i < n; i++)
		if (!(s->sleep_active && s->asleep[s->enabled[i]]))
			s->cand[m++] = s->enabled[i];
	if (!m)
		return -1;
	return ploom_policy_choose(&s->policy, s->cand, (size_t)m, s->prev);
}

static _Noreturn void sched_sleep_blocked(struct sched *s)
{
	int i;

	ploom_enc_outcome_sleep_blocked(&s->buf, s->step);
	/* what the blocked tasks wait for: the search still looks for races
	 * with those operations */
	for (i = 0; i < s->ntasks; i++) {
		struct task *t = s->tasks[i];
		if (t->state == TASK_FINISHED || task_enabled(s, t))
			continue;
		ploom_enc_wait(&s->buf, t->id, t->op, op_obj(s, t->obj, t->op), holder_of(t),
			       t->where);
	}
	sched_end(s);
}

/* Picks the task that runs the next step and records the step.  Ends the
 * schedule instead when nothing can run or a limit is reached. */
static struct task *sched_pick(struct sched *s)
{
	int n = 0, i, unfinished = 0, c, np = 0;
	struct task *t;

	for (i = 0; i < s->ntasks; i++) {
		t = s->tasks[i];
		if (t->state != TASK_FINISHED)
			unfinished++;
		if (task_enabled(s, t))
			s->enabled[n++] = i;
	}
	if (!n) {
		if (!unfinished) {
			ploom_enc_outcome_pass(&s->buf);
			sched_end(s);
		}
		sched_deadlock(s);
	}
	if (s->max_steps && s->step >= s->max_steps) {
		ploom_enc_outcome_step_limit(&s->buf, s->max_steps);
		sched_end(s);
	}
	if (s->sleep_active && s->step > 0)
		sleep_after_step(s);
	if (n == 1 && !(s->sleep_active && s->asleep[s->enabled[0]])) {
		c = s->enabled[0];
	} else if (n > 1 && s->next_choice < s->nchoices) {
		c = s->choices[s->next_choice++];
		for (i = 0; i < n && s->enabled[i] != c; i++)
			;
		if (i == n) {
			char msg[128];
			snprintf(msg, sizeof(msg), "choice %d asks for task %d, which is not enabled",
				 s->next_choice - 1, c);
			ploom_enc_outcome_divergence(&s->buf, s->step, msg, strlen(msg));
			sched_end(s);
		}
		if (s->next_choice == s->nchoices && s->nsleep)
			sleep_start(s);
	} else {
		c = policy_choice(s, n);
		if (c < 0)
			sched_sleep_blocked(s);
	}
	t = s->tasks[c];
	for (i = 0; i < s->ntasks; i++) {
		struct task *o = s->tasks[i];
		if (i == c || o->state == TASK_FINISHED)
			continue;
		s->pending[np++] = (struct ploom_pending){i, o->op, op_obj(s, o->obj, o->op)};
	}
	s->last_task = c;
	s->last_op = t->op;
	s->last_obj = op_obj(s, t->obj, t->op);
	announce_obj(s, t->obj, t->op);
	ploom_enc_step(&s->buf, s->step, c, t->op, s->last_obj, s->enabled, (size_t)n,
		       t->mode, s->pending, (size_t)np, t->where);
	s->step++;
	s->prev = c;
	t->state = TASK_RUNNING;
	sched_flush(s);
	return t;
}

static void sem_wait_nointr(sem_t *sem)
{
	while (sem_wait(sem) < 0 && errno == EINTR)
		;
}

/* The current task stops before `op` on `obj` (an acquire or a join in
 * `mode`, which every other op passes as PLOOM_ACQUIRE_BLOCKING); returns when the
 * scheduler has picked it again, at which point the op is enabled. */
static void sched_point(struct sched *s, struct task *t, enum ploom_op op, PyObject *obj,
			enum ploom_acquire_mode mode)
{
	struct task *next;

	t->op = op;
	t->obj = obj;
	t->mode = mode;
	t->where = locate(s);
	t->state = TASK_AT_POINT;
	next = sched_pick(s);
	if (next == t)
		return;
	Py_BEGIN_ALLOW_THREADS
	sem_post(&next->go);
	sem_wait_nointr(&t->go);
	Py_END_ALLOW_THREADS
}

/* For operations: the scheduler and task if a schedule is running on this
 * thread, NULL without error outside a check, NULL with RuntimeError on a
 * thread ploom does not schedule. */
static struct task *op_task(module_state *st, int *err)
{
	*err = 0;
	if (!st->sched.active)
		return NULL;
	if (!current_task) {
		PyErr_SetString(PyExc_RuntimeError,
				"ploom operation called from a thread that ploom does not schedule");
		*err = 1;
		return NULL;
	}
	return current_task;
}

/* Stops the calling task at the scheduling point before `op` on `obj`;
 * *out is the task, NULL outside a check.  Returns -1 with RuntimeError
 * on a thread ploom does not schedule. */
static int op_begin(module_state *st, enum ploom_op op, PyObject *obj, struct task **out)
{
	int err;

	*out = op_task(st, &err);
	if (err)
		return -1;
	if (*out)
		sched_point(&st->sched, *out, op, obj, PLOOM_ACQUIRE_BLOCKING);
	return 0;
}

/* Records what the operation of task t read, wrote or returned. */
static void op_value(module_state *st, struct task *t, PyObject *v)
{
	if (t)
		add_value(&st->sched, v);
}

static struct task *task_new(struct sched *s, ThreadObject *th)
{
	struct task *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	if (s->ntasks == s->cap) {
		int cap = s->cap ? 2 * s->cap : 8;
		/* each block that grew replaces the old one, which realloc freed;
		 * cap moves only once all have grown */
		struct task **tasks = realloc(s->tasks, (size_t)cap * sizeof(*tasks));
		if (tasks)
			s->tasks = tasks;
		int *enabled = realloc(s->enabled, (size_t)cap * sizeof(*enabled));
		if (enabled)
			s->enabled = enabled;
		struct ploom_pending *pending = realloc(s->pending, (size_t)cap * sizeof(*pending));
		if (pending)
			s->pending = pending;
		char *asleep = realloc(s->asleep, (size_t)cap);
		if (asleep) {
			s->asleep = asleep;
			memset(asleep + s->cap, 0, (size_t)(cap - s->cap));
		}
		int *cand = realloc(s->cand, (size_t)cap * sizeof(*cand));
		if (cand)
			s->cand = cand;
		if (!tasks || !enabled || !pending || !asleep || !cand) {
			free(t);
			return NULL;
		}
		s->cap = cap;
	}
	t->id = s->ntasks;
	t->sched = s;
	t->thread = th;
	/* pct gives the task its rank as it is created */
	if (ploom_policy_add_task(&s->policy, t->id, NULL) < 0) {
		free(t);
		return NULL;
	}
	Py_XINCREF(th);
	if (sem_init(&t->go, 0, 0) < 0) {
		Py_XDECREF(th);
		free(t);
		return NULL;
	}
	s->tasks[s->ntasks++] = t;
	return t;
}

/* The task's code has returned: mark it finished and pass the baton on.
 * Returns the task to wake (never NULL: sched_pick ends the schedule). */
static struct task *task_finish(struct sched *s, struct task *t)
{
	t->state = TASK_FINISHED;
	t->obj = NULL;
	if (t->thread)
		t->thread->finished = 1;
	return sched_pick(s);
}

static _Noreturn void *task_main(void *arg)
{
	struct task *t = arg;
	struct sched *s = t->sched;
	struct task *next;
	PyGILState_STATE g;
	PyObject *r;

	/* the begin point: wait until the scheduler first picks this task */
	sem_wait_nointr(&t->go);
	g = PyGILState_Ensure();
	current_task = t;
	r = PyObject_CallMethod((PyObject *)t->thread, "run", NULL);
	if (!r)
		sched_fail(s, t);
	Py_DECREF(r);
	next = task_finish(s, t);
	current_task = NULL;
	/* Park rather than exit: the schedule ends with _exit() anyway, and
	 * tearing down the thread state and the thread costs a good part of a
	 * whole schedule. */
	(void)g;
	(void)PyEval_SaveThread();
	sem_post(&next->go);
	for (;;)
		pause();
}

/* ---- Lock ------------------------------------------------------------- */

/* str(name) for a name given, NULL for None; -1 with an exception when
 * str() raises.  As threading.Thread takes a thread's name. */
static int name_arg(PyObject **out, PyObject *name)
{
	*out = NULL;
	if (!name || name == Py_None)
		return 0;
	*out = PyObject_Str(name);
	return *out ? 0 : -1;
}

static PyObject *Lock_new(PyTypeObject *tp, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {KW("name"), NULL};
	module_state *st = state_of_type(tp);
	PyObject *name_obj = Py_None, *name;
	LockObject *self;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|$O:Lock", kwlist, &name_obj) ||
	    name_arg(&name, name_obj) < 0)
		return NULL;
	self = (LockObject *)tp->tp_alloc(tp, 0);
	if (!self) {
		Py_XDECREF(name);
		return NULL;
	}
	self->oid = st->next_lock++;
	self->holder = HOLDER_NONE;
	self->name = name;
	return (PyObject *)self;
}

/* The name given, else the object's own ("lock#3", "cell#0"). */
static PyObject *name_or(PyObject *name, const char *kind, long oid)
{
	if (name)
		return Py_NewRef(name);
	return PyUnicode_FromFormat("%s#%ld", kind, oid);
}

static PyObject *Lock_get_name(PyObject *op, void *Py_UNUSED(closure))
{
	LockObject *self = (LockObject *)op;

	return name_or(self->name, "lock", self->oid);
}

static PyObject *lock_acquire_impl(LockObject *self, enum ploom_acquire_mode mode)
{
	module_state *st = state_of_type(Py_TYPE(self));
	int err;
	struct task *t = op_task(st, &err);

	if (err)
		return NULL;
	if (!t) {
		if (self->holder == HOLDER_NONE) {
			self->holder = HOLDER_OUTSIDE;
			Py_RETURN_TRUE;
		}
		/* no other thread could release it: a timed acquire would
		 * time out, so it does at once (ploom has no clock) */
		if (mode != PLOOM_ACQUIRE_BLOCKING)
			Py_RETURN_FALSE;
		PyErr_SetString(PyExc_RuntimeError,
				"ploom.Lock.acquire() on a held lock would block forever outside ploom.check()");
		return NULL;
	}
	sched_point(&st->sched, t, PLOOM_OP_ACQUIRE, (PyObject *)self, mode);
	if (self->holder == HOLDER_NONE) {
		self->holder = t->id;
		if (mode != PLOOM_ACQUIRE_BLOCKING)
			add_value(&st->sched, Py_True);
		Py_RETURN_TRUE;
	}
	/* only a nonblocking or timed acquire runs while the lock is held:
	 * it returns False (a timed one has timed out) */
	add_value(&st->sched, Py_False);
	Py_RETURN_FALSE;
}

/* A timeout as threading.Lock.acquire() takes it: a float, or an int (or
 * what has __index__); *out its value in seconds.  Returns -1 with the
 * exception threading raises for the same value: TypeError for another
 * type, ValueError for NaN, OverflowError for an infinity or an int too
 * large for a float.  The value only matters for its sign: ploom has no
 * clock, so a finite timeout of any size is taken (threading refuses one
 * above threading.TIMEOUT_MAX). */
static int timeout_seconds(PyObject *o, double *out)
{
	if (PyFloat_Check(o)) {
		*out = PyFloat_AS_DOUBLE(o);
	} else if (PyIndex_Check(o)) {
		PyObject *i = PyNumber_Index(o);
		if (!i)
			return -1;
		*out = PyLong_AsDouble(i);
		Py_DECREF(i);
		if (*out == -1.0 && PyErr_Occurred())
			return -1;
	} else {
		/* threading's own words, which 3.14 changed */
		PyErr_Format(PyExc_TypeError,
#if PY_VERSION_HEX >= 0x030E0000
			     "'%.200s' object cannot be interpreted as an integer or float",
#else
			     "'%.200s' object cannot be interpreted as an integer",
#endif
			     Py_TYPE(o)->tp_name);
		return -1;
	}
	if (isnan(*out)) {
		PyErr_SetString(PyExc_ValueError, "Invalid value NaN (not a number)");
		return -1;
	}
	if (isinf(*out)) {
		PyErr_SetString(PyExc_OverflowError, "timeout value is too large");
		return -1;
	}
	return 0;
}

/* The arguments and their errors are threading.Lock.acquire()'s, in its
 * order: the timeout's type and value, then a timeout on a nonblocking
 * call, then a negative timeout other than -1 (which means none). */
static PyObject *Lock_acquire(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {KW("blocking"), KW("timeout"), NULL};
	int blocking = 1;
	PyObject *timeout_obj = NULL;
	double timeout = -1;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|pO:acquire", kwlist, &blocking,
					 &timeout_obj))
		return NULL;
	if (timeout_obj && timeout_seconds(timeout_obj, &timeout) < 0)
		return NULL;
	if (!blocking && timeout != -1) {
		PyErr_SetString(PyExc_ValueError, "can't specify a timeout for a non-blocking call");
		return NULL;
	}
	if (timeout < 0 && timeout != -1) {
		PyErr_SetString(PyExc_ValueError, "timeout value must be a non-negative number");
		return NULL;
	}
	if (!blocking)
		return lock_acquire_impl((LockObject *)self, PLOOM_ACQUIRE_NONBLOCKING);
	return lock_acquire_impl((LockObject *)self, timeout == -1 ? PLOOM_ACQUIRE_BLOCKING
								   : PLOOM_ACQUIRE_TIMED);
}

static PyObject *Lock_enter(PyObject *self, PyObject *Py_UNUSED(ignored))
{
	return lock_acquire_impl((LockObject *)self, PLOOM_ACQUIRE_BLOCKING);
}

static PyObject *Lock_release(PyObject *op, PyObject *Py_UNUSED(ignored))
{
	LockObject *self = (LockObject *)op;
	module_state *st = state_of_type(Py_TYPE(self));
	struct task *t;

	if (op_begin(st, PLOOM_OP_RELEASE, op, &t) < 0)
		return NULL;
	if (self->holder == HOLDER_NONE) {
		PyErr_SetString(PyExc_RuntimeError, "release unlocked lock");
		return NULL;
	}
	self->holder = HOLDER_NONE;
	Py_RETURN_NONE;
}

static PyObject *Lock_exit(PyObject *op, PyObject *Py_UNUSED(args))
{
	return Lock_release(op, NULL);
}

static PyObject *Lock_locked(PyObject *op, PyObject *Py_UNUSED(ignored))
{
	LockObject *self = (LockObject *)op;
	module_state *st = state_of_type(Py_TYPE(self));
	struct task *t;
	PyObject *r;

	if (op_begin(st, PLOOM_OP_LOCKED, op, &t) < 0)
		return NULL;
	r = self->holder == HOLDER_NONE ? Py_False : Py_True;
	op_value(st, t, r);
	return Py_NewRef(r);
}

static PyObject *Lock_repr(PyObject *op)
{
	LockObject *self = (LockObject *)op;
	const char *state = self->holder == HOLDER_NONE ? "unlocked" : "locked";

	if (self->name)
		return PyUnicode_FromFormat("<ploom.Lock %R lock#%ld %s>", self->name, self->oid,
					    state);
	return PyUnicode_FromFormat("<ploom.Lock lock#%ld %s>", self->oid, state);
}

static int Lock_traverse(PyObject *self, visitproc visit, void *arg)
{
	Py_VISIT(Py_TYPE(self));
	return 0;
}

static void Lock_dealloc(PyObject *self)
{
	PyTypeObject *tp = Py_TYPE(self);
	PyObject_GC_UnTrack(self);
	/* a str: no cycle runs through it, so no traverse visits it */
	Py_CLEAR(((LockObject *)self)->name);
	tp->tp_free(self);
	Py_DECREF(tp);
}

static PyGetSetDef Lock_getset[] = {
	{"name", Lock_get_name, NULL,
	 "The name given (as str()), which traces and ploom-show use; by default\n"
	 "\"lock#N\", the lock's object name in traces.", NULL},
	{NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef Lock_methods[] = {
	{"acquire", (PyCFunction)(void (*)(void))Lock_acquire, METH_VARARGS | METH_KEYWORDS,
	 "acquire($self, /, blocking=True, timeout=-1)\n--\n\n"
	 "Take the lock; a scheduling point.  Blocking (timeout=-1): waits until the\n"
	 "lock is free (the task is not enabled meanwhile) and returns True.\n"
	 "Nonblocking: returns False at once if the lock is held.  Timed (timeout >= 0,\n"
	 "an int or float whose value ploom never uses: it has no clock and never\n"
	 "sleeps): the task stays enabled; when it runs it takes the lock and returns\n"
	 "True if the lock is free, else returns False (it timed out).  So the search\n"
	 "tries both waiting for the lock and timing out, and a timed acquire is\n"
	 "never part of a deadlock.  Outside a check a timed acquire of a held lock\n"
	 "returns False at once.  Arguments and errors as threading.Lock.acquire()."},
	{"release", Lock_release, METH_NOARGS,
	 "release($self, /)\n--\n\nRelease the lock; any task may.  RuntimeError if it is not held."},
	{"locked", Lock_locked, METH_NOARGS,
	 "locked($self, /)\n--\n\nWhether the lock is held; a scheduling point."},
	{"__enter__", Lock_enter, METH_NOARGS, "__enter__($self, /)\n--\n\nacquire()"},
	{"__exit__", Lock_exit, METH_VARARGS, "__exit__($self, /, *exc_info)\n--\n\nrelease()"},
	{NULL, NULL, 0, NULL},
};

static PyType_Slot Lock_slots[] = {
	{Py_tp_new, Lock_new},
	{Py_tp_methods, Lock_methods},
	{Py_tp_getset, Lock_getset},
	{Py_tp_repr, Lock_repr},
	{Py_tp_traverse, Lock_traverse},
	{Py_tp_dealloc, Lock_dealloc},
	{Py_tp_doc, (void *)"Lock(*, name=None)\n--\n\n"
		    "A lock like threading.Lock whose operations are scheduling points.\n"
		    "Any task may release it; acquiring it twice from one task blocks.\n"
		    "name (as str()) names it in traces and ploom-show."},
	{0, NULL},
};

static PyType_Spec Lock_spec = {
	.name = "ploom.Lock",
	.basicsize = sizeof(LockObject),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
	.slots = Lock_slots,
};

/* ---- SharedCell ------------------------------------------------------- */

/* Values a cell may hold: the builtin immutable types, ploom's own
 * objects (handles: a Lock, Thread or SharedCell is shared by identity and
 * changes only through its own operations, which ploom sees), and tuples
 * or frozensets of these.  A mutable value could change without a write,
 * which ploom would not see.  Returns NULL when v may be held, else the
 * first element that may not (v itself, or one inside it; borrowed: v
 * holds it). */
static int is_handle_class(PyTypeObject *tp)
{
	PyObject *flag = NULL;
	int r;

	if (PyObject_GetOptionalAttrString((PyObject *)tp, "__ploom_handle__", &flag) <= 0) {
		PyErr_Clear();
		return 0;
	}
	r = PyObject_IsTrue(flag);
	Py_DECREF(flag);
	if (r < 0)
		PyErr_Clear();
	return r > 0;
}

static PyObject *not_holdable(module_state *st, PyObject *v, int depth)
{
	if (depth > 64)
		return v;
	if (v == Py_None || v == Py_Ellipsis || PyBool_Check(v) || PyLong_Check(v) ||
	    PyFloat_Check(v) || PyComplex_Check(v) || PyUnicode_Check(v) || PyBytes_Check(v))
		return NULL;
	if (PyObject_TypeCheck(v, st->lock_type) || PyObject_TypeCheck(v, st->thread_type) ||
	    PyObject_TypeCheck(v, st->cell_type))
		return NULL;
	/* ploom.threading's and ploom.queue's primitives, built in Python
	 * from the ones above, say so with a class attribute */
	if (is_handle_class(Py_TYPE(v)))
		return NULL;
	if (PyTuple_Check(v)) {
		Py_ssize_t i;
		PyObject *bad;
		for (i = 0; i < PyTuple_GET_SIZE(v); i++)
			if ((bad = not_holdable(st, PyTuple_GET_ITEM(v, i), depth + 1)))
				return bad;
		return NULL;
	}
	if (PyFrozenSet_Check(v)) {
		PyObject *it = PyObject_GetIter(v), *item, *bad = NULL;
		if (!it) {
			PyErr_Clear();
			return v;
		}
		while (!bad && (item = PyIter_Next(it))) {
			bad = not_holdable(st, item, depth + 1);
			/* the set still holds item */
			Py_DECREF(item);
		}
		Py_DECREF(it);
		PyErr_Clear();
		return bad;
	}
	return v;
}

static int check_value(module_state *st, PyObject *v)
{
	PyObject *bad = not_holdable(st, v, 0);

	if (!bad)
		return 0;
	if (bad == v)
		PyErr_Format(PyExc_TypeError,
			     "SharedCell values must be immutable (None, bool, int, float, complex, "
			     "str, bytes, ploom's primitives, or tuples and frozensets of them), "
			     "not '%.100s'",
			     Py_TYPE(v)->tp_name);
	else
		PyErr_Format(PyExc_TypeError,
			     "SharedCell values must be immutable (None, bool, int, float, complex, "
			     "str, bytes, ploom's primitives, or tuples and frozensets of them), "
			     "not a '%.100s' holding a '%.100s'",
			     Py_TYPE(v)->tp_name, Py_TYPE(bad)->tp_name);
	return -1;
}

static PyObject *Cell_new(PyTypeObject *tp, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {KW("value"), KW("name"), NULL};
	module_state *st = state_of_type(tp);
	PyObject *value = Py_None, *name_obj = Py_None, *name;
	CellObject *self;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O$O:SharedCell", kwlist, &value,
					 &name_obj))
		return NULL;
	if (check_value(st, value) < 0 || name_arg(&name, name_obj) < 0)
		return NULL;
	self = (CellObject *)tp->tp_alloc(tp, 0);
	if (!self) {
		Py_XDECREF(name);
		return NULL;
	}
	self->oid = st->next_cell++;
	self->value = Py_NewRef(value);
	self->name = name;
	return (PyObject *)self;
}

static PyObject *Cell_get_name(PyObject *op, void *Py_UNUSED(closure))
{
	CellObject *self = (CellObject *)op;

	return name_or(self->name, "cell", self->oid);
}

static PyObject *Cell_read(PyObject *op, PyObject *Py_UNUSED(ignored))
{
	CellObject *self = (CellObject *)op;
	module_state *st = state_of_type(Py_TYPE(self));
	struct task *t;
	PyObject *r;

	if (op_begin(st, PLOOM_OP_READ, op, &t) < 0)
		return NULL;
	Py_BEGIN_CRITICAL_SECTION(op);
	r = Py_NewRef(self->value);
	Py_END_CRITICAL_SECTION();
	op_value(st, t, r);
	return r;
}

static PyObject *Cell_write(PyObject *op, PyObject *value)
{
	CellObject *self = (CellObject *)op;
	module_state *st = state_of_type(Py_TYPE(self));
	struct task *t;
	PyObject *old;

	/* a bad value is the caller's bug, whatever the schedule: no point */
	if (check_value(st, value) < 0 || op_begin(st, PLOOM_OP_WRITE, op, &t) < 0)
		return NULL;
	Py_BEGIN_CRITICAL_SECTION(op);
	old = self->value;
	self->value = Py_NewRef(value);
	Py_END_CRITICAL_SECTION();
	op_value(st, t, value);
	Py_DECREF(old);
	Py_RETURN_NONE;
}

static PyObject *Cell_repr(PyObject *op)
{
	CellObject *self = (CellObject *)op;

	if (self->name)
		return PyUnicode_FromFormat("<ploom.SharedCell %R cell#%ld>", self->name,
					    self->oid);
	return PyUnicode_FromFormat("<ploom.SharedCell cell#%ld>", self->oid);
}

static int Cell_traverse(PyObject *op, visitproc visit, void *arg)
{
	CellObject *self = (CellObject *)op;
	Py_VISIT(Py_TYPE(op));
	Py_VISIT(self->value);
	return 0;
}

static int Cell_clear(PyObject *op)
{
	Py_CLEAR(((CellObject *)op)->value);
	return 0;
}

static void Cell_dealloc(PyObject *op)
{
	PyTypeObject *tp = Py_TYPE(op);
	PyObject_GC_UnTrack(op);
	(void)Cell_clear(op);
	/* a str: no cycle runs through it, so no traverse visits it */
	Py_CLEAR(((CellObject *)op)->name);
	tp->tp_free(op);
	Py_DECREF(tp);
}

static PyGetSetDef Cell_getset[] = {
	{"name", Cell_get_name, NULL,
	 "The name given (as str()), which traces and ploom-show use; by default\n"
	 "\"cell#N\", the cell's object name in traces.", NULL},
	{NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef Cell_methods[] = {
	{"read", Cell_read, METH_NOARGS,
	 "read($self, /)\n--\n\nReturn the value; a scheduling point."},
	{"write", Cell_write, METH_O,
	 "write($self, value, /)\n--\n\nStore an immutable value; a scheduling point."},
	{NULL, NULL, 0, NULL},
};

static PyType_Slot Cell_slots[] = {
	{Py_tp_new, Cell_new},
	{Py_tp_methods, Cell_methods},
	{Py_tp_getset, Cell_getset},
	{Py_tp_repr, Cell_repr},
	{Py_tp_traverse, Cell_traverse},
	{Py_tp_clear, Cell_clear},
	{Py_tp_dealloc, Cell_dealloc},
	{Py_tp_doc, (void *)"SharedCell(value=None, *, name=None)\n--\n\n"
		    "A value shared by tasks.  read() and write() are scheduling points;\n"
		    "values must be immutable, or ploom's primitives (handles: Lock,\n"
		    "Thread, SharedCell and those of ploom.threading and ploom.queue),\n"
		    "alone or in tuples and frozensets.  name (as str()) names it in traces\n"
		    "and ploom-show."},
	{0, NULL},
};

static PyType_Spec Cell_spec = {
	.name = "ploom.SharedCell",
	.basicsize = sizeof(CellObject),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
	.slots = Cell_slots,
};

/* ---- Thread ----------------------------------------------------------- */

static int Thread_init(PyObject *op, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {KW("target"), KW("args"), KW("kwargs"), KW("name"),
				 KW("daemon"), NULL};
	ThreadObject *self = (ThreadObject *)op;
	PyObject *target = Py_None, *targs = NULL, *tkw = Py_None, *name = Py_None;
	PyObject *daemon = Py_None;
	int daemonic = 0;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOO$OO:Thread", kwlist, &target, &targs,
					 &tkw, &name, &daemon))
		return -1;
	if (target != Py_None && !PyCallable_Check(target)) {
		PyErr_Format(PyExc_TypeError, "Thread target must be callable, not '%.100s'",
			     Py_TYPE(target)->tp_name);
		return -1;
	}
	if (tkw != Py_None && !PyDict_Check(tkw)) {
		PyErr_SetString(PyExc_TypeError, "Thread kwargs must be a dict or None");
		return -1;
	}
	if (daemon != Py_None && (daemonic = PyObject_IsTrue(daemon)) < 0)
		return -1;
	/* threading.Thread takes str(name) */
	if (name == Py_None)
		name = NULL;
	else if (!(name = PyObject_Str(name)))
		return -1;
	targs = targs ? PySequence_Tuple(targs) : PyTuple_New(0);
	if (!targs) {
		Py_XDECREF(name);
		return -1;
	}
	Py_XSETREF(self->name, name);
	self->daemon = daemonic;
	Py_XSETREF(self->target, Py_NewRef(target));
	Py_XSETREF(self->args, targs);
	Py_XSETREF(self->kwargs, tkw == Py_None ? PyDict_New() : PyDict_Copy(tkw));
	if (!self->kwargs)
		return -1;
	self->tid = -1;
	self->finished = 0;
	return 0;
}

static PyObject *Thread_run(PyObject *op, PyObject *Py_UNUSED(ignored))
{
	ThreadObject *self = (ThreadObject *)op;

	if (!self->target || self->target == Py_None)
		Py_RETURN_NONE;
	return PyObject_Call(self->target, self->args, self->kwargs);
}

static PyObject *Thread_start(PyObject *op, PyObject *Py_UNUSED(ignored))
{
	ThreadObject *self = (ThreadObject *)op;
	module_state *st = state_of_type(Py_TYPE(self));
	struct sched *s = &st->sched;
	int err;
	struct task *t = op_task(st, &err), *nt;
	pthread_attr_t attr;
	pthread_t th;
	int rc;

	if (err)
		return NULL;
	if (!t) {
		PyErr_SetString(PyExc_RuntimeError,
				"ploom.Thread.start() can only run inside ploom.check()");
		return NULL;
	}
	if (!self->args) {
		PyErr_SetString(PyExc_RuntimeError, "Thread.__init__() not called");
		return NULL;
	}
	sched_point(s, t, PLOOM_OP_START, op, PLOOM_ACQUIRE_BLOCKING);
	if (self->tid >= 0) {
		PyErr_SetString(PyExc_RuntimeError, "threads can only be started once");
		return NULL;
	}
	nt = task_new(s, self);
	if (!nt)
		return PyErr_NoMemory();
	self->tid = nt->id;
	nt->op = PLOOM_OP_BEGIN;
	nt->obj = NULL;
	nt->where = locate_function(s, self);
	nt->state = TASK_AT_POINT;
	announce_thread(s, nt, self->name);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, TASK_STACK_SIZE);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&th, &attr, task_main, nt);
	pthread_attr_destroy(&attr);
	if (rc) {
		/* no thread will ever answer this task's baton: take it out of
		 * the schedule, as threading leaves a thread it could not start */
		nt->state = TASK_FINISHED;
		self->finished = 1;
		errno = rc;
		PyErr_SetFromErrno(PyExc_RuntimeError);
		return NULL;
	}
	Py_RETURN_NONE;
}

/* join(timeout=None) as threading's: None waits for the thread to end; a
 * number (negative ones too, which threading takes as 0) makes a timed
 * join.  A timed join never sleeps: the task stays enabled, and when the
 * scheduler picks it, it returns None whether or not the thread has
 * finished (the caller asks is_alive(), as with threading), so the search
 * reaches both "the thread ended in time" and "it did not".  The number
 * plays no part (ploom has no clock) but must be one threading takes. */
static PyObject *Thread_join(PyObject *op, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {KW("timeout"), NULL};
	ThreadObject *self = (ThreadObject *)op;
	module_state *st = state_of_type(Py_TYPE(self));
	PyObject *timeout = Py_None;
	enum ploom_acquire_mode mode = PLOOM_ACQUIRE_BLOCKING;
	double seconds;
	struct task *t;
	int err;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:join", kwlist, &timeout))
		return NULL;
	if (timeout != Py_None)
		mode = PLOOM_ACQUIRE_TIMED;
	t = op_task(st, &err);
	if (err)
		return NULL;
	if (t)
		sched_point(&st->sched, t, PLOOM_OP_JOIN, op, mode);
	if (self->tid < 0) {
		PyErr_SetString(PyExc_RuntimeError, "cannot join thread before it is started");
		return NULL;
	}
	if (t && self->tid == t->id) {
		PyErr_SetString(PyExc_RuntimeError, "cannot join current thread");
		return NULL;
	}
	/* threading checks the timeout after the thread, so a bad one on an
	 * unstarted thread raises RuntimeError there too */
	if (timeout != Py_None && timeout_seconds(timeout, &seconds) < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *Thread_is_alive(PyObject *op, PyObject *Py_UNUSED(ignored))
{
	ThreadObject *self = (ThreadObject *)op;
	module_state *st = state_of_type(Py_TYPE(self));
	struct task *t;
	PyObject *r;

	if (op_begin(st, PLOOM_OP_IS_ALIVE, op, &t) < 0)
		return NULL;
	r = self->tid >= 0 && !self->finished ? Py_True : Py_False;
	op_value(st, t, r);
	return Py_NewRef(r);
}

static PyObject *Thread_get_name(PyObject *op, void *closure);

/* "<ploom.Thread 'worker' thread#1 started>"; an unnamed thread's name is
 * its object name once started, shown once. */
static PyObject *Thread_repr(PyObject *op)
{
	ThreadObject *self = (ThreadObject *)op;
	PyObject *name, *r;
	int named;

	Py_BEGIN_CRITICAL_SECTION(op);
	named = self->name != NULL;
	Py_END_CRITICAL_SECTION();
	if (!named) {
		if (self->tid < 0)
			return PyUnicode_FromFormat("<ploom.Thread (not started)>");
		return PyUnicode_FromFormat("<ploom.Thread thread#%d %s>", self->tid,
					    self->finished ? "finished" : "started");
	}
	name = Thread_get_name(op, NULL);
	if (!name)
		return NULL;
	if (self->tid < 0)
		r = PyUnicode_FromFormat("<ploom.Thread %R (not started)>", name);
	else
		r = PyUnicode_FromFormat("<ploom.Thread %R thread#%d %s>", name, self->tid,
					 self->finished ? "finished" : "started");
	Py_DECREF(name);
	return r;
}

static int Thread_traverse(PyObject *op, visitproc visit, void *arg)
{
	ThreadObject *self = (ThreadObject *)op;
	Py_VISIT(Py_TYPE(op));
	Py_VISIT(self->target);
	Py_VISIT(self->args);
	Py_VISIT(self->kwargs);
	Py_VISIT(self->name);
	return 0;
}

static int Thread_clear(PyObject *op)
{
	ThreadObject *self = (ThreadObject *)op;
	Py_CLEAR(self->target);
	Py_CLEAR(self->args);
	Py_CLEAR(self->kwargs);
	Py_CLEAR(self->name);
	return 0;
}

static void Thread_dealloc(PyObject *op)
{
	PyTypeObject *tp = Py_TYPE(op);
	PyObject_GC_UnTrack(op);
	(void)Thread_clear(op);
	tp->tp_free(op);
	Py_DECREF(tp);
}

static PyObject *Thread_get_ident(PyObject *op, void *Py_UNUSED(closure))
{
	ThreadObject *self = (ThreadObject *)op;
	if (self->tid < 0)
		Py_RETURN_NONE;
	return PyLong_FromLong(self->tid);
}

/* The name given or set, else "thread#N" once started (N its task id, as
 * traces name its object) and "thread" before: the id is not known until
 * start.  Under a critical section: outside a check several OS threads
 * may get and set it at once (free-threaded build). */
static PyObject *Thread_get_name(PyObject *op, void *Py_UNUSED(closure))
{
	ThreadObject *self = (ThreadObject *)op;
	PyObject *r = NULL;

	Py_BEGIN_CRITICAL_SECTION(op);
	if (self->name)
		r = Py_NewRef(self->name);
	Py_END_CRITICAL_SECTION();
	if (r)
		return r;
	if (self->tid < 0)
		return PyUnicode_FromString("thread");
	return PyUnicode_FromFormat("thread#%d", self->tid);
}

static int Thread_set_name(PyObject *op, PyObject *value, void *Py_UNUSED(closure))
{
	ThreadObject *self = (ThreadObject *)op;
	PyObject *name, *old;

	if (!value) {
		PyErr_SetString(PyExc_AttributeError, "cannot delete a thread's name");
		return -1;
	}
	/* threading.Thread takes str(name) */
	name = PyObject_Str(value);
	if (!name)
		return -1;
	Py_BEGIN_CRITICAL_SECTION(op);
	old = self->name;
	self->name = name;
	Py_END_CRITICAL_SECTION();
	Py_XDECREF(old);
	/* the trace names a started thread by its latest name */
	if (self->tid >= 0) {
		module_state *st = state_of_type(Py_TYPE(self));
		struct sched *s = &st->sched;
		if (s->active && current_task && self->tid < s->ntasks) {
			announce_thread(s, s->tasks[self->tid], name);
			sched_flush(s);
		}
	}
	return 0;
}

static PyObject *Thread_get_daemon(PyObject *op, void *Py_UNUSED(closure))
{
	return PyBool_FromLong(((ThreadObject *)op)->daemon);
}

static int Thread_set_daemon(PyObject *op, PyObject *value, void *Py_UNUSED(closure))
{
	ThreadObject *self = (ThreadObject *)op;
	int daemonic;

	if (!value) {
		PyErr_SetString(PyExc_AttributeError, "cannot delete a thread's daemon flag");
		return -1;
	}
	/* threading's rule, though the flag changes nothing in ploom */
	if (self->tid >= 0) {
		PyErr_SetString(PyExc_RuntimeError, "cannot set daemon status of active thread");
		return -1;
	}
	daemonic = PyObject_IsTrue(value);
	if (daemonic < 0)
		return -1;
	self->daemon = daemonic;
	return 0;
}

static PyGetSetDef Thread_getset[] = {
	{"ident", Thread_get_ident, NULL, "The task id once started, else None.", NULL},
	{"name", Thread_get_name, Thread_set_name,
	 "The name given (as str()) or set; by default \"thread#N\" once started, N being\n"
	 "the task id, and \"thread\" before.  Traces and ploom-show call the task by it\n"
	 "(by its last one, when it is set while the thread runs).", NULL},
	{"daemon", Thread_get_daemon, Thread_set_daemon,
	 "threading's daemon flag, False by default; settable before start.  It changes\n"
	 "nothing in ploom: a scenario ends when every task has finished, daemon or not.",
	 NULL},
	{NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef Thread_methods[] = {
	{"start", Thread_start, METH_NOARGS,
	 "start($self, /)\n--\n\nStart the thread; a scheduling point.  RuntimeError if started twice."},
	{"join", (PyCFunction)(void (*)(void))Thread_join, METH_VARARGS | METH_KEYWORDS,
	 "join($self, /, timeout=None)\n--\n\nWait for the thread to finish; a scheduling point.\n"
	 "With timeout None the task is not enabled until the thread has finished.\n"
	 "With a number (of seconds, never used: ploom has no clock) it is a timed\n"
	 "join, always enabled, that returns None whether or not the thread has\n"
	 "finished: ask is_alive(), as with threading."},
	{"is_alive", Thread_is_alive, METH_NOARGS,
	 "is_alive($self, /)\n--\n\nWhether the thread has started and not finished; a scheduling point."},
	{"run", Thread_run, METH_NOARGS,
	 "run($self, /)\n--\n\nThe thread's code: calls ``target(*args, **kwargs)``.  Subclasses may override it."},
	{NULL, NULL, 0, NULL},
};

static PyType_Slot Thread_slots[] = {
	{Py_tp_new, PyType_GenericNew},
	{Py_tp_init, Thread_init},
	{Py_tp_methods, Thread_methods},
	{Py_tp_getset, Thread_getset},
	{Py_tp_repr, Thread_repr},
	{Py_tp_traverse, Thread_traverse},
	{Py_tp_clear, Thread_clear},
	{Py_tp_dealloc, Thread_dealloc},
	{Py_tp_doc, (void *)"Thread(target=None, args=(), kwargs=None, *, name=None, daemon=None)\n"
		    "--\n\n"
		    "A thread that ploom schedules: a real OS thread that runs only when\n"
		    "the scheduler hands it the baton.  name and daemon as threading.Thread's\n"
		    "(see the attributes); daemon=None means False."},
	{0, NULL},
};

static PyType_Spec Thread_spec = {
	.name = "ploom.Thread",
	.basicsize = sizeof(ThreadObject),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE,
	.slots = Thread_slots,
};

/* ---- module functions ------------------------------------------------- */

static PyObject *ploom_yield_now(PyObject *module, PyObject *Py_UNUSED(ignored))
{
	module_state *st = PyModule_GetState(module);
	struct task *t;

	if (op_begin(st, PLOOM_OP_YIELD_NOW, NULL, &t) < 0)
		return NULL;
	Py_RETURN_NONE;
}

/* An audit hook (PEP 578) that refuses os.fork() and os.forkpty() while a
 * schedule runs.  The new process would be a copy of the schedule outside
 * the scheduler: its steps would land in the record area among the
 * schedule's own (the utility then reports a malformed record), or nowhere
 * at all, and it could run on after its schedule ended.  The audit event
 * comes before the fork, so the call raises and nothing is copied.
 * subprocess and os.posix_spawn start another program (fork and exec, or
 * vfork), which nothing of the schedule reaches: they stay allowed.  The
 * hook lives in the worker, installed once by serve(), and refuses only in
 * a schedule's child, where sched.active is set. */
static int refuse_fork(const char *event, PyObject *Py_UNUSED(args), void *data)
{
	const struct sched *s = data;
	const char *call;

	if (!s->active)
		return 0;
	if (!strcmp(event, "os.fork"))
		call = "os.fork()";
	else if (!strcmp(event, "os.forkpty"))
		call = "os.forkpty()";
	else
		return 0;
	PyErr_Format(PyExc_RuntimeError,
		     "ploom: a scenario cannot call %s: the new process would escape the "
		     "scheduler (its steps would not be recorded, and it could outlive the "
		     "schedule); to run another program, use subprocess", call);
	return -1;
}

/* Runs one schedule in this (forked) process; never returns. */
static _Noreturn void run_schedule(module_state *st, PyObject *scenario)
{
	struct sched *s = &st->sched;
	struct task *t0, *next;
	PyObject *r;

	if (ploom_policy_init(&s->policy, &s->policy_spec, NULL) < 0)
		_exit(121);
	t0 = task_new(s, NULL);
	if (!t0)
		_exit(121);
	t0->state = TASK_RUNNING;
	s->prev = 0;
	s->active = 1;
	if (!s->nchoices && s->nsleep)
		sleep_start(s);
	current_task = t0;
	r = PyObject_CallNoArgs(scenario);
	if (!r)
		sched_fail(s, t0);
	Py_DECREF(r);
	next = task_finish(s, t0);
	current_task = NULL;
	/* the last task to finish ends the schedule; this thread only waits */
	Py_BEGIN_ALLOW_THREADS
	sem_post(&next->go);
	for (;;)
		pause();
	Py_END_ALLOW_THREADS
}

/* The commands from the utility.  A `run` line grows with its choices,
 * so the buffer does too, up to the longest line the protocol allows. */
struct cmd_reader {
	int fd;
	char *buf;
	size_t len;             /* bytes held */
	size_t cap;
	size_t scanned;         /* bytes known to hold no newline */
	size_t taken;           /* bytes of the line last returned */
};

/* Reads the next command line into *line: NUL-terminated, inside the
 * reader, valid until the next call.  1 = got one, 0 = end of input,
 * -1 = read error, -2 = line longer than PLOOM_MAX_RUN_CMD_BYTES. */
static int read_line(struct cmd_reader *r, char **line)
{
	if (r->taken) {
		memmove(r->buf, r->buf + r->taken, r->len - r->taken);
		r->len -= r->taken;
		r->taken = r->scanned = 0;
	}
	for (;;) {
		char *nl = r->len > r->scanned ?
			memchr(r->buf + r->scanned, '\n', r->len - r->scanned) : NULL;
		ssize_t n;

		if (nl) {
			*nl = '\0';
			*line = r->buf;
			r->taken = (size_t)(nl - r->buf) + 1;
			return 1;
		}
		r->scanned = r->len;
		if (r->len == r->cap) {
			size_t cap = r->cap ? 2 * r->cap : 65536;
			char *p;
			/* the line and its newline */
			if (r->cap > PLOOM_MAX_RUN_CMD_BYTES)
				return -2;
			if (cap > PLOOM_MAX_RUN_CMD_BYTES + 1)
				cap = PLOOM_MAX_RUN_CMD_BYTES + 1;
			p = realloc(r->buf, cap);
			if (!p)
				return -1;
			r->buf = p;
			r->cap = cap;
		}
		Py_BEGIN_ALLOW_THREADS
		n = read(r->fd, r->buf + r->len, r->cap - r->len);
		Py_END_ALLOW_THREADS
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 ? 0 : -1;
		r->len += (size_t)n;
	}
}

/* Takes a `run` command into the scheduler's state.  Returns 0, or -1
 * with err filled. */
static int parse_run(struct sched *s, const char *line, long *timeout_ms,
		     struct ploom_err *err)
{
	struct ploom_run_cmd cmd;

	if (ploom_run_cmd_parse(&cmd, line, strlen(line), err) < 0) {
		ploom_run_cmd_release(&cmd);
		return -1;
	}
	free(s->choices);
	free(s->sleep);
	s->max_steps = cmd.max_steps;
	*timeout_ms = cmd.timeout_ms;
	s->choices = cmd.choices;
	s->nchoices = (int)cmd.nchoices;
	s->next_choice = 0;
	s->sleep = cmd.sleep;
	s->nsleep = cmd.nsleep;
	s->policy_spec = cmd.policy;
	return 0;
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The records of one child on their way to the event fd: out holds what
 * the area gave and was not sent yet (a cut tail at most, until the
 * child's end), nsteps counts the step records sent or kept. */
struct relay {
	struct ploom_buf out;
	long nsteps;
	int event_fd;
	int failed;             /* a write failed: the utility is gone */
};

/* Counts the step records among the whole lines of p[0..n). */
static long count_steps(const char *p, size_t n)
{
	const char *end = p + n;
	long k = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		if (nl - p >= 5 && !memcmp(p, "step ", 5))
			k++;
		p = nl + 1;
	}
	return k;
}

/* Takes the area's records into r->out, then keeps only whole lines
 * there: the cut tail is dropped when the child has ended (it was killed
 * in the middle of a record), else sent later with the rest of it. */
static void relay_take(struct relay *r, struct record_area *a, int ended)
{
	size_t keep, whole;
	char *nl;

	ploom_buf_add(&r->out, a->data, atomic_load(&a->len));
	atomic_store(&a->len, 0);
	nl = r->out.len ? memrchr(r->out.data, '\n', r->out.len) : NULL;
	whole = nl ? (size_t)(nl - r->out.data) + 1 : 0;
	keep = r->out.len - whole;
	r->nsteps += count_steps(r->out.data, whole);
	if (ended) {
		r->out.len = whole;
		return;
	}
	if (!r->failed) {
		struct ploom_buf head = {.data = r->out.data, .len = whole, .cap = whole};
		if (ploom_buf_flush_fd(&head, r->event_fd) < 0)
			r->failed = 1;
	}
	memmove(r->out.data, r->out.data + whole, keep);
	r->out.len = keep;
}

/* Waits for the child, emptying the record area whenever it asks, and
 * kills it after timeout_ms (0: never).  Returns the wait status, and
 * *timed_out. */
static int reap_child(pid_t pid, long timeout_ms, struct record_area *a, int drain_fd,
		      struct relay *r, int *timed_out)
{
	int status = 0, pfd;
	long deadline = timeout_ms ? now_ms() + timeout_ms : 0;

	*timed_out = 0;
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	for (;;) {
		struct pollfd p[2] = {{.fd = pfd, .events = POLLIN},
				      {.fd = drain_fd, .events = POLLIN}};
		long left = deadline ? deadline - now_ms() : 1000000;
		siginfo_t si = {0};
		int rc;

		if (left <= 0) {
			*timed_out = 1;
			break;
		}
		if (pfd < 0) {
			/* no pidfd (Linux before 5.3): look now and then */
			if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
			    si.si_pid == pid)
				break;
			if (left > 10)
				left = 10;
		}
		rc = poll(p, 2, (int)(left > 1000000 ? 1000000 : left));
		if (rc < 0 && errno != EINTR)
			break;
		if (rc > 0 && p[1].revents) {
			uint64_t n;
			/* a request left by a killed child may be read here:
			 * drain_req tells whether this child waits */
			if (read(drain_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
				break;
			if (atomic_load(&a->drain_req)) {
				relay_take(r, a, 0);
				if (r->failed)
					break;
				atomic_store(&a->drain_req, 0);
				sem_post(&a->drained);
			}
		}
		if (rc > 0 && p[0].revents)
			break;
	}
	if (pfd >= 0)
		close(pfd);
	/* the child is at worst a zombie here, so its process group id cannot
	 * have been reused: take down anything it left behind */
	kill(-pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

static void emit_output(struct ploom_buf *b, int memfd)
{
	char *data;
	ssize_t n;

	if (lseek(memfd, 0, SEEK_SET) < 0)
		return;
	data = malloc(OUTPUT_MAX);
	if (!data)
		return;
	n = read(memfd, data, OUTPUT_MAX);
	if (n > 0)
		ploom_enc_output(b, data, (size_t)n);
	free(data);
}

/* Only one task of a schedule runs at a time, so its threads lose nothing
 * by sharing one CPU, and gain: a handoff wakes a thread on the same CPU, and
 * a copy-on-write fault needs no TLB shootdown on another one. */
static void pin_to_one_cpu(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
}

/* What a where needs to know before the first fork: the ploom package's
 * folder, whose frames it looks past (this extension's own folder), and
 * the folder relative file names start from. */
static int where_roots(struct sched *s, PyObject *module)
{
	PyObject *file = PyModule_GetFilenameObject(module);
	const char *u, *slash;

	if (!file)
		return -1;
	u = PyUnicode_AsUTF8(file);
	slash = u ? strrchr(u, '/') : NULL;
	if (slash) {
		s->ploom_dir = strndup(u, (size_t)(slash - u) + 1);
		s->ploom_dir_len = (size_t)(slash - u) + 1;
	}
	PyErr_Clear();
	Py_DECREF(file);
	s->cwd = getcwd(NULL, 0);
	if (!s->ploom_dir || !s->cwd) {
		PyErr_NoMemory();
		return -1;
	}
	return 0;
}

static PyObject *ploom_serve(PyObject *module, PyObject *args)
{
	module_state *st = PyModule_GetState(module);
	struct sched *s = &st->sched;
	PyObject *scenario, *hello;
	int cmd_fd, event_fd;
	struct cmd_reader *reader = NULL;
	struct ploom_buf out = {0};
	struct record_area *area = NULL;
	pid_t worker = getpid();
	int memfd = -1; /* the children's stdout and stderr, one after another */
	int drain_fd = -1;
	struct relay relay = {.event_fd = -1};
	PyObject *preloaded;
	PyObject *ret = NULL;
	PyObject *hello_str[7] = {NULL};
	const char *hello_u[7];
	size_t hello_len[7];
	Py_ssize_t i;

	if (!PyArg_ParseTuple(args, "OO!ii:serve", &scenario, &PyTuple_Type, &hello, &cmd_fd,
			      &event_fd))
		return NULL;
	if (PyTuple_GET_SIZE(hello) != 7) {
		PyErr_SetString(PyExc_ValueError, "serve: hello must have 7 items");
		return NULL;
	}
	if (where_roots(s, module) < 0)
		goto done;
	for (i = 0; i < 7; i++) {
		hello_str[i] = PyObject_Str(PyTuple_GET_ITEM(hello, i));
		if (!hello_str[i])
			goto done;
		hello_u[i] = utf8_of(hello_str[i], &hello_len[i]);
	}
	ploom_enc_hello(&out, hello_u[0], hello_len[0], hello_u[1], hello_len[1],
			PyObject_IsTrue(PyTuple_GET_ITEM(hello, 2)) == 1, hello_u[3], hello_len[3],
			hello_u[4], hello_len[4], hello_u[5], hello_len[5], hello_u[6], hello_len[6]);
	if (ploom_buf_flush_fd(&out, event_fd) < 0) {
		PyErr_SetFromErrno(PyExc_OSError);
		goto done;
	}

	reader = calloc(1, sizeof(*reader));
	area = mmap(NULL, sizeof(*area), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!reader || area == MAP_FAILED) {
		area = NULL;
		PyErr_NoMemory();
		goto done;
	}
	/* Imported here, once: a failing schedule formats its traceback, and
	 * importing the module in every failing child cost more than the rest
	 * of its schedule (5 ms against 0.6 ms, with -k on the bank example). */
	preloaded = PyImport_ImportModule("traceback");
	if (!preloaded)
		goto done;
	Py_DECREF(preloaded); /* sys.modules keeps it */
	if (PySys_AddAuditHook(refuse_fork, s) < 0)
		goto done;
	/* once: what the worker printed must not reach every child, and the
	 * loop below runs no Python code that prints */
	flush_python_stdio();
	memfd = memfd_create("ploom-output", MFD_CLOEXEC);
	drain_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (memfd < 0 || drain_fd < 0) {
		PyErr_SetFromErrno(PyExc_OSError);
		goto done;
	}
	reader->fd = cmd_fd;
	relay.event_fd = event_fd;
	s->drain_fd = drain_fd;
	/* a terminal's ^C reaches the utility too, which stops this worker;
	 * dying first would look like a crash of the worker */
	signal(SIGINT, SIG_IGN);
	/* one malloc arena: a task thread's first malloc would otherwise map
	 * and fault in a fresh arena in every child */
	mallopt(M_ARENA_MAX, 1);
	s->area = area;

	for (;;) {
		struct ploom_err why = {0, ""};
		long timeout_ms = 0;
		char *line;
		int rc = read_line(reader, &line), status, timed_out;
		pid_t pid;

		if (rc == -2) {
			PyErr_Format(PyExc_ValueError, "serve: command longer than %zu bytes",
				     (size_t)PLOOM_MAX_RUN_CMD_BYTES);
			goto done;
		}
		if (rc < 0) {
			PyErr_SetFromErrno(PyExc_OSError);
			goto done;
		}
		if (rc == 0 || strcmp(line, "quit") == 0)
			break;
		if (strncmp(line, "run ", 4) != 0 || parse_run(s, line, &timeout_ms, &why) < 0) {
			/* the utility's mistake, not the end of the worker: it
			 * hears why in place of the run, and can go on */
			if (strncmp(line, "run ", 4) != 0)
				snprintf(why.msg, sizeof(why.msg), "unknown command '%.60s'", line);
			ploom_enc_error(&relay.out, "command", why.msg, strlen(why.msg));
			if (ploom_buf_flush_fd(&relay.out, event_fd) < 0)
				break; /* the utility went away */
			continue;
		}
		if (ftruncate(memfd, 0) < 0 || lseek(memfd, 0, SEEK_SET) < 0) {
			PyErr_SetFromErrno(PyExc_OSError);
			goto done;
		}
		atomic_store(&area->len, 0);
		atomic_store(&area->drain_req, 0);
		/* afresh: a child killed while the worker posted leaves a count */
		if (sem_init(&area->drained, 1, 0) < 0) {
			PyErr_SetFromErrno(PyExc_OSError);
			goto done;
		}
		relay.nsteps = 0;
		PyOS_BeforeFork();
		pid = fork();
		if (pid == 0) {
			int devnull;
			PyOS_AfterFork_Child();
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			/* what the scenario orphans stays with the schedule while it
			 * runs: the utility, the next subreaper up, kills what it
			 * inherits, and must inherit it only once the schedule is over
			 * (other workers' schedules end meanwhile) */
			prctl(PR_SET_CHILD_SUBREAPER, 1);
			pin_to_one_cpu();
			if (getppid() != worker)
				_exit(122);
			setpgid(0, 0);
			devnull = open("/dev/null", O_RDONLY);
			if (devnull >= 0) {
				dup2(devnull, 0);
				close(devnull);
			}
			dup2(memfd, 1);
			dup2(memfd, 2);
			if (cmd_fd > 2)
				close(cmd_fd);
			/* the worker alone writes records there, see record_area */
			if (event_fd > 2)
				close(event_fd);
			run_schedule(st, scenario);
		}
		PyOS_AfterFork_Parent();
		if (pid < 0) {
			PyErr_SetFromErrno(PyExc_OSError);
			goto done;
		}
		Py_BEGIN_ALLOW_THREADS
		status = reap_child(pid, timeout_ms, area, drain_fd, &relay, &timed_out);
		Py_END_ALLOW_THREADS
		if (relay.failed)
			break; /* the utility went away: nothing left to serve */
		relay_take(&relay, area, 1);
		if (timed_out)
			ploom_enc_exit(&relay.out, "timeout", 0);
		else if (WIFSIGNALED(status))
			ploom_enc_exit(&relay.out, "signal", WTERMSIG(status));
		else
			ploom_enc_exit(&relay.out, "code", WEXITSTATUS(status));
		emit_output(&relay.out, memfd);
		ploom_enc_done(&relay.out, relay.nsteps);
		if (ploom_buf_flush_fd(&relay.out, event_fd) < 0) {
			/* the utility went away: nothing left to serve */
			break;
		}
	}
	ret = Py_NewRef(Py_None);
done:
	for (i = 0; i < 7; i++)
		Py_XDECREF(hello_str[i]);
	ploom_buf_release(&out);
	ploom_buf_release(&relay.out);
	if (reader)
		free(reader->buf);
	free(reader);
	if (area)
		munmap(area, sizeof(*area));
	if (memfd >= 0)
		close(memfd);
	if (drain_fd >= 0)
		close(drain_fd);
	s->area = NULL;
	free(s->ploom_dir);
	free(s->cwd);
	s->ploom_dir = s->cwd = NULL;
	return ret;
}

static PyObject *ploom_write_error(PyObject *Py_UNUSED(module), PyObject *args)
{
	int fd;
	const char *kind, *msg;
	Py_ssize_t len;
	struct ploom_buf b = {0};
	int rc;

	if (!PyArg_ParseTuple(args, "iss#:write_error", &fd, &kind, &msg, &len))
		return NULL;
	ploom_enc_error(&b, kind, msg, (size_t)len);
	rc = ploom_buf_flush_fd(&b, fd);
	ploom_buf_release(&b);
	if (rc < 0)
		return PyErr_SetFromErrno(PyExc_OSError);
	Py_RETURN_NONE;
}

/* Not an operation: which task runs is the scheduler's own state, not
 * shared state a schedule could order differently, so no scheduling point. */
static PyObject *ploom_current_task(PyObject *module, PyObject *Py_UNUSED(ignored))
{
	module_state *st = PyModule_GetState(module);

	if (!st->sched.active || !current_task)
		Py_RETURN_NONE;
	return PyLong_FromLong(current_task->id);
}

/* A Lock that the calling task already holds, without an acquire: no
 * other task can know a lock before it exists, so taking it at once is
 * the same in every order, and a step there would only multiply the
 * schedules.  ploom.threading parks each Condition waiter on one. */
static PyObject *ploom_held_lock(PyObject *module, PyObject *Py_UNUSED(ignored))
{
	module_state *st = PyModule_GetState(module);
	PyObject *empty = PyTuple_New(0);
	LockObject *lock;

	if (!empty)
		return NULL;
	lock = (LockObject *)Lock_new(st->lock_type, empty, NULL);
	Py_DECREF(empty);
	if (!lock)
		return NULL;
	lock->holder = st->sched.active && current_task ? current_task->id : HOLDER_OUTSIDE;
	return (PyObject *)lock;
}

/* Task 0's Thread: a ploom.Thread named "MainThread" with ident 0, not a
 * daemon, started, that finishes when the scenario returns.  A real
 * Thread, so that join() and is_alive() of it are the operations they are
 * on any thread (on thread#0, whose end task 0's last step writes) and
 * start() raises "threads can only be started once".  New reference. */
static PyObject *main_thread_of(module_state *st)
{
	struct sched *s = &st->sched;
	ThreadObject *m;

	if (st->main_thread)
		return Py_NewRef(st->main_thread);
	m = (ThreadObject *)st->thread_type->tp_alloc(st->thread_type, 0);
	if (!m)
		return NULL;
	m->target = Py_NewRef(Py_None);
	m->args = PyTuple_New(0);
	m->kwargs = PyDict_New();
	m->name = PyUnicode_FromString("MainThread");
	if (!m->args || !m->kwargs || !m->name) {
		Py_DECREF(m);
		return NULL;
	}
	m->tid = 0;
	m->finished = s->tasks[0]->state == TASK_FINISHED;
	/* so that task_finish() marks it finished with task 0 */
	s->tasks[0]->thread = (ThreadObject *)Py_NewRef(m);
	st->main_thread = Py_NewRef(m);
	return (PyObject *)m;
}

/* Not an operation, as current_task(): the Thread of the running task. */
static PyObject *ploom_current_thread(PyObject *module, PyObject *Py_UNUSED(ignored))
{
	module_state *st = PyModule_GetState(module);

	if (!st->sched.active || !current_task)
		Py_RETURN_NONE;
	if (current_task->id == 0)
		return main_thread_of(st);
	return Py_NewRef(current_task->thread);
}

static PyObject *ploom_main_thread(PyObject *module, PyObject *Py_UNUSED(ignored))
{
	module_state *st = PyModule_GetState(module);

	if (!st->sched.active || !current_task)
		Py_RETURN_NONE;
	return main_thread_of(st);
}

static PyMethodDef module_methods[] = {
	{"held_lock", ploom_held_lock, METH_NOARGS,
	 "held_lock()\n--\n\nA new Lock, held by the calling task, made without a scheduling\n"
	 "point.  Internal (ploom.threading's Condition)."},
	{"yield_now", ploom_yield_now, METH_NOARGS,
	 "yield_now()\n--\n\nA scheduling point with no effect: lets another task run.\n"
	 "Outside a check it does nothing."},
	{"current_task", ploom_current_task, METH_NOARGS,
	 "current_task()\n--\n\nThe id of the task that calls it inside a schedule: 0 for the\n"
	 "scenario's main task, then 1, 2, ... in start order.  None outside a check,\n"
	 "and on a thread ploom does not schedule.  Not a scheduling point."},
	{"current_thread", ploom_current_thread, METH_NOARGS,
	 "current_thread()\n--\n\nThe ploom.Thread of the task that calls it inside a schedule;\n"
	 "for task 0 (the scenario's own) the one main_thread() returns.  None outside\n"
	 "a check, and on a thread ploom does not schedule.  Not a scheduling point."},
	{"main_thread", ploom_main_thread, METH_NOARGS,
	 "main_thread()\n--\n\nTask 0's ploom.Thread inside a schedule: named \"MainThread\",\n"
	 "ident 0, not a daemon, alive until the scenario returns; one object per\n"
	 "schedule.  None outside a check, and on a thread ploom does not schedule.\n"
	 "Not a scheduling point."},
	{"serve", ploom_serve, METH_VARARGS,
	 "serve(scenario, hello, cmd_fd, event_fd, /)\n--\n\n"
	 "The fork server loop of ploom's worker (see lib/event.h).  Internal."},
	{"write_error", ploom_write_error, METH_VARARGS,
	 "write_error(fd, kind, message, /)\n--\n\nWrite an error record.  Internal."},
	{NULL, NULL, 0, NULL},
};

static int module_exec(PyObject *m)
{
	module_state *st = PyModule_GetState(m);

	st->lock_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &Lock_spec, NULL);
	if (!st->lock_type || PyModule_AddType(m, st->lock_type) < 0)
		return -1;
	st->cell_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &Cell_spec, NULL);
	if (!st->cell_type || PyModule_AddType(m, st->cell_type) < 0)
		return -1;
	st->thread_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &Thread_spec, NULL);
	if (!st->thread_type || PyModule_AddType(m, st->thread_type) < 0)
		return -1;
	if (PyModule_AddIntConstant(m, "PROTOCOL_VERSION", PLOOM_PROTOCOL_VERSION) < 0)
		return -1;
	return 0;
}

static int module_traverse(PyObject *m, visitproc visit, void *arg)
{
	module_state *st = PyModule_GetState(m);
	Py_VISIT(st->lock_type);
	Py_VISIT(st->cell_type);
	Py_VISIT(st->thread_type);
	Py_VISIT(st->main_thread);
	return 0;
}

static int module_clear(PyObject *m)
{
	module_state *st = PyModule_GetState(m);
	Py_CLEAR(st->lock_type);
	Py_CLEAR(st->cell_type);
	Py_CLEAR(st->thread_type);
	Py_CLEAR(st->main_thread);
	return 0;
}

static PyModuleDef_Slot module_slots[] = {
	{Py_mod_exec, module_exec},
#ifdef Py_mod_gil
	/* Tasks never run Python code at the same time: only the baton holder
	 * runs, and the baton's semaphores order every access to scheduler and
	 * object state.  Outside a check, cell state is guarded by critical
	 * sections.  So the module is safe without the GIL (3.13+). */
	{Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
	{0, NULL},
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT,
	.m_name = "ploom._ploom",
	.m_doc = "ploom's operations, scheduler and fork server.",
	.m_size = sizeof(module_state),
	.m_methods = module_methods,
	.m_slots = module_slots,
	.m_traverse = module_traverse,
	.m_clear = module_clear,
};

PyMODINIT_FUNC PyInit__ploom(void)
{
	return PyModuleDef_Init(&module_def);
}
