/* thread.c - ploom.Thread, a thread that ploom schedules: a real OS
 * thread that runs only when the scheduler hands it the baton (sched.c).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>

#include "ploom.h"

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
	rc = task_spawn(nt);
	if (rc) {
		/* no thread will ever answer this task's baton: take it out of
		 * the schedule, as threading leaves a thread it could not start */
		nt->state = TASK_FINISHED;
		self->finished = 1;
		/* threading's words (and type) for it, which code that starts
		 * threads expects; the errno (EAGAIN: a memory or thread limit)
		 * says no more */
		PyErr_SetString(PyExc_RuntimeError, "can't start new thread");
		return NULL;
	}
	Py_RETURN_NONE;
}

/* join(timeout=None) as threading's: None waits for the thread to end; a
 * number (negative ones too, which threading takes as 0) makes a timed
 * join.  A timed join never sleeps: the task stays enabled, and when the
 * scheduler picks it, it returns None whether or not the thread has
 * finished (the caller asks is_alive(), as with threading), so the search
 * reaches both "the thread ended in time" and "it did not".  One that
 * did not end in time timed out: the virtual clock advances by the
 * timeout (clock.c), the step's add to the clock (event.h). */
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
	if (t) {
		int64_t wait_ns = -1;
		/* the deadline of the idle model; a bad timeout raises below,
		 * where threading checks it, and waits for nothing here */
		if (mode == PLOOM_ACQUIRE_TIMED) {
			if (timeout_seconds(timeout, &seconds) < 0)
				PyErr_Clear();
			else
				wait_ns = clock_ns_of(seconds);
		}
		sched_point_timed(&st->sched, t, PLOOM_OP_JOIN, op, mode, wait_ns);
	}
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
	if (timeout != Py_None && !self->finished &&
	    (!t || st->sched.timeouts == PLOOM_TIMEOUTS_ANY)) {
		if (t)
			sched_stall(&st->sched, t, self->tid, clock_ns_of(seconds));
		clock_timed_out(st, seconds);
	}
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
		if (sched_running_task(s) && self->tid < s->ntasks) {
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
	 "With a number (of seconds, by which ploom's virtual clock advances when the\n"
	 "thread has not finished: it timed out; nothing really sleeps) it is a timed\n"
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

PyType_Spec Thread_spec = {
	.name = "ploom.Thread",
	.basicsize = sizeof(ThreadObject),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE,
	.slots = Thread_slots,
};

/* Task 0's Thread: a ploom.Thread named "MainThread" with ident 0, not a
 * daemon, started, that finishes when the scenario returns.  A real
 * Thread, so that join() and is_alive() of it are the operations they are
 * on any thread (on thread#0, whose end task 0's last step writes) and
 * start() raises "threads can only be started once".  New reference. */
/* The type of task 0's Thread: ploom.threading.Thread when the module is
 * imported, so that the main thread is a threading.Thread to code that
 * uses ploom.threading, as CPython's is; else ploom.Thread.  New reference. */
static PyTypeObject *main_thread_type(module_state *st)
{
	PyObject *name = PyUnicode_FromString("ploom.threading");
	PyObject *mod, *tp = NULL;

	if (!name)
		return NULL;
	mod = PyImport_GetModule(name);
	Py_DECREF(name);
	if (mod) {
		tp = PyObject_GetAttrString(mod, "Thread");
		Py_DECREF(mod);
		if (!tp)
			PyErr_Clear();
	}
	if (PyErr_Occurred())
		return NULL;
	if (tp && PyType_Check(tp) && PyType_IsSubtype((PyTypeObject *)tp, st->thread_type))
		return (PyTypeObject *)tp;
	Py_XDECREF(tp);
	return (PyTypeObject *)Py_NewRef(st->thread_type);
}

PyObject *main_thread_of(module_state *st)
{
	struct sched *s = &st->sched;
	PyTypeObject *tp;
	ThreadObject *m;

	if (st->main_thread)
		return Py_NewRef(st->main_thread);
	tp = main_thread_type(st);
	if (!tp)
		return NULL;
	m = (ThreadObject *)tp->tp_alloc(tp, 0);
	Py_DECREF(tp);
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
