/* lock.c - ploom.Lock, a lock like threading.Lock whose operations are
 * scheduling points.
 *
 * Outside a check several OS threads may use one Lock at once on a
 * free-threaded build, so the operations read and set holder under the
 * object's critical section.  Inside one only the task holding the baton
 * runs, so the section is never contended there, and with the GIL it
 * compiles to nothing.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "ploom.h"

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
	self->oid = atomic_fetch_add_explicit(&st->next_lock, 1, memory_order_relaxed);
	self->holder = HOLDER_NONE;
	self->name = name;
	return (PyObject *)self;
}

static PyObject *Lock_get_name(PyObject *op, void *Py_UNUSED(closure))
{
	LockObject *self = (LockObject *)op;

	return name_or(self->name, "lock", self->oid);
}

/* Takes the lock for holder if it is free: 1 if taken, else 0. */
static int lock_take(LockObject *self, int holder)
{
	int taken;

	Py_BEGIN_CRITICAL_SECTION((PyObject *)self);
	taken = self->holder == HOLDER_NONE;
	if (taken)
		self->holder = holder;
	Py_END_CRITICAL_SECTION();
	return taken;
}

/* The lock's holder, read under its critical section. */
static int lock_holder(LockObject *self)
{
	int holder;

	Py_BEGIN_CRITICAL_SECTION((PyObject *)self);
	holder = self->holder;
	Py_END_CRITICAL_SECTION();
	return holder;
}

/* timeout: the seconds of a timed acquire, by which one that times out
 * advances the clock (clock.c) */
static PyObject *lock_acquire_impl(LockObject *self, enum ploom_acquire_mode mode,
				   double timeout)
{
	module_state *st = state_of_type(Py_TYPE(self));
	int err;
	struct task *t = op_task(st, &err);

	if (err)
		return NULL;
	if (!t) {
		if (lock_take(self, HOLDER_OUTSIDE))
			Py_RETURN_TRUE;
		/* no other thread could release it: a timed acquire would
		 * time out, so it does at once, the clock advancing by its
		 * timeout as in a schedule */
		if (mode == PLOOM_ACQUIRE_TIMED)
			clock_timed_out(st, timeout);
		if (mode != PLOOM_ACQUIRE_BLOCKING)
			Py_RETURN_FALSE;
		PyErr_SetString(PyExc_RuntimeError,
				"ploom.Lock.acquire() on a held lock would block forever outside ploom.check()");
		return NULL;
	}
	sched_point_timed(&st->sched, t, PLOOM_OP_ACQUIRE, (PyObject *)self, mode,
			  mode == PLOOM_ACQUIRE_TIMED ? clock_ns_of(timeout) : -1);
	if (lock_take(self, t->id)) {
		if (mode != PLOOM_ACQUIRE_BLOCKING)
			add_value(&st->sched, Py_True);
		Py_RETURN_TRUE;
	}
	/* only a nonblocking or timed acquire runs while the lock is held:
	 * it returns False (a timed one has timed out: under the stress model
	 * its timeout passes now, the step's add to the clock, event.h; under
	 * the idle model the clock jumped to its deadline already) */
	if (mode == PLOOM_ACQUIRE_TIMED && st->sched.timeouts == PLOOM_TIMEOUTS_ANY) {
		/* a lock held by another task waits for it; a Condition's
		 * waiter (held by the waiter) and a one-step wait for anyone */
		int holder = lock_holder(self);
		int awaited = holder >= 0 && holder != t->id && !self->condition && !t->when
				      ? holder : -1;

		sched_stall(&st->sched, t, awaited, clock_ns_of(timeout));
		clock_timed_out(st, timeout);
	}
	add_value(&st->sched, Py_False);
	Py_RETURN_FALSE;
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
		return lock_acquire_impl((LockObject *)self, PLOOM_ACQUIRE_NONBLOCKING, 0);
	return lock_acquire_impl((LockObject *)self,
				 timeout == -1 ? PLOOM_ACQUIRE_BLOCKING : PLOOM_ACQUIRE_TIMED, timeout);
}

static PyObject *Lock_enter(PyObject *self, PyObject *Py_UNUSED(ignored))
{
	return lock_acquire_impl((LockObject *)self, PLOOM_ACQUIRE_BLOCKING, 0);
}

static PyObject *Lock_release(PyObject *op, PyObject *Py_UNUSED(ignored))
{
	LockObject *self = (LockObject *)op;
	module_state *st = state_of_type(Py_TYPE(self));
	struct task *t;
	int held;

	if (op_begin(st, PLOOM_OP_RELEASE, op, &t) < 0)
		return NULL;
	Py_BEGIN_CRITICAL_SECTION(op);
	held = self->holder != HOLDER_NONE;
	self->holder = HOLDER_NONE;
	Py_END_CRITICAL_SECTION();
	if (!held) {
		PyErr_SetString(PyExc_RuntimeError, "release unlocked lock");
		return NULL;
	}
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
	r = lock_holder(self) == HOLDER_NONE ? Py_False : Py_True;
	op_value(st, t, r);
	return Py_NewRef(r);
}

/* threading's hook for os.register_at_fork(after_in_child=...): the lock
 * is free in the new process.  Each schedule's process is a fork of the
 * worker, which runs such hooks before the schedule starts.  Inside a
 * schedule no fork can happen, and freeing a lock there would be a step
 * no trace records: refused. */
static PyObject *Lock_at_fork_reinit(PyObject *op, PyObject *Py_UNUSED(ignored))
{
	LockObject *self = (LockObject *)op;
	module_state *st = state_of_type(Py_TYPE(self));

	if (st->sched.active) {
		PyErr_SetString(PyExc_RuntimeError,
				"ploom.Lock._at_fork_reinit() cannot run inside ploom.check()");
		return NULL;
	}
	Py_BEGIN_CRITICAL_SECTION(op);
	self->holder = HOLDER_NONE;
	Py_END_CRITICAL_SECTION();
	Py_RETURN_NONE;
}

static PyObject *Lock_repr(PyObject *op)
{
	LockObject *self = (LockObject *)op;
	const char *state = lock_holder(self) == HOLDER_NONE ? "unlocked" : "locked";

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
	Py_CLEAR(((LockObject *)self)->condition);
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
	 "an int or float; ploom never really sleeps): the task stays enabled; when it\n"
	 "runs it takes the lock and returns True if the lock is free, else returns\n"
	 "False (it timed out) and ploom's virtual clock advances by timeout.  So the\n"
	 "search tries both waiting for the lock and timing out, and a timed acquire\n"
	 "is never part of a deadlock.  Outside a check a timed acquire of a held lock\n"
	 "returns False at once, the clock advancing all the same.  Arguments and\n"
	 "errors as threading.Lock.acquire()."},
	{"release", Lock_release, METH_NOARGS,
	 "release($self, /)\n--\n\nRelease the lock; any task may.  RuntimeError if it is not held."},
	{"locked", Lock_locked, METH_NOARGS,
	 "locked($self, /)\n--\n\nWhether the lock is held; a scheduling point."},
	{"__enter__", Lock_enter, METH_NOARGS, "__enter__($self, /)\n--\n\nacquire()"},
	{"__exit__", Lock_exit, METH_VARARGS, "__exit__($self, /, *exc_info)\n--\n\nrelease()"},
	{"_at_fork_reinit", Lock_at_fork_reinit, METH_NOARGS,
	 "_at_fork_reinit($self, /)\n--\n\nFree the lock in a new process, as threading's locks\n"
	 "do after a fork.  Outside a check only (a schedule cannot fork)."},
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

PyType_Spec Lock_spec = {
	.name = "ploom.Lock",
	.basicsize = sizeof(LockObject),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
	.slots = Lock_slots,
};

/* A Lock that the calling task already holds, without an acquire: no
 * other task can know a lock before it exists, so taking it at once is
 * the same in every order, and a step there would only multiply the
 * schedules.  ploom.threading parks each Condition waiter on one.  Its
 * arguments are a Lock's (name=), and condition=, the name of the
 * Condition (str or None) whose waiter it is: an acquire of it waits for
 * a notify. */
PyObject *ploom_held_lock(PyObject *module, PyObject *args, PyObject *kw)
{
	module_state *st = PyModule_GetState(module);
	struct task *t = sched_running_task(&st->sched);
	PyObject *condition = NULL, *rest = NULL;
	LockObject *lock;

	if (kw) {
		if (PyDict_GetItemStringRef(kw, "condition", &condition) < 0)
			return NULL;
		if (condition && condition != Py_None && !PyUnicode_Check(condition)) {
			Py_DECREF(condition);
			PyErr_SetString(PyExc_TypeError, "held_lock(): condition must be a str or None");
			return NULL;
		}
		if (!(rest = PyDict_Copy(kw)) ||
		    (condition && PyDict_DelItemString(rest, "condition") < 0)) {
			Py_XDECREF(condition);
			Py_XDECREF(rest);
			return NULL;
		}
	}
	lock = (LockObject *)Lock_new(st->lock_type, args, rest);
	Py_XDECREF(rest);
	if (!lock) {
		Py_XDECREF(condition);
		return NULL;
	}
	lock->condition = condition;
	/* a new object, which no other thread can see yet: no guard */
	lock->holder = t ? t->id : HOLDER_OUTSIDE;
	return (PyObject *)lock;
}

/* The FOR of acquire_when()'s third argument, or -1 with an exception. */
static int wait_for_arg(PyObject *o)
{
	const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
	int w = s ? ploom_wait_for_parse(s, strlen(s)) : -1;

	if (w != PLOOM_WAIT_NOTIFY && w != PLOOM_WAIT_STATE) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_ValueError,
					"acquire_when(): waits_for must be 'notify' or 'state'");
		return -1;
	}
	return w;
}

/* acquire_when(lock, when, waits_for, on): a blocking acquire of lock that
 * waits, too, until when() returns true, and returns with the lock held;
 * waits_for, "notify" or "state" (event.h's FOR), and on, the name (str
 * or None) of the Condition or primitive waited on, word the wait in a
 * deadlock.  It is the
 * wait of a monitor whose state only code holding the lock changes
 * (ploom.queue's): one step, the acquire, enabled when both hold, instead
 * of a condition's waiter lock, its notify, its wait and the lock taken
 * again, which would be steps of their own and orders for the search.
 * Outside a check, where nothing else can change the state, a false
 * when() would wait forever and raises as a held lock's acquire does. */
PyObject *ploom_acquire_when(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
	module_state *st = PyModule_GetState(module);
	LockObject *self;
	PyObject *when, *r;
	struct task *t;
	int err, ok, waits_for;

	if (nargs != 4 || !PyObject_TypeCheck(args[0], (PyTypeObject *)st->lock_type) ||
	    !PyCallable_Check(args[1]) || (args[3] != Py_None && !PyUnicode_Check(args[3]))) {
		PyErr_SetString(PyExc_TypeError, "acquire_when() takes a ploom.Lock, a callable, "
				"what it waits for and the name of what it waits on");
		return NULL;
	}
	if ((waits_for = wait_for_arg(args[2])) < 0)
		return NULL;
	self = (LockObject *)args[0];
	when = args[1];
	t = op_task(st, &err);
	if (err)
		return NULL;
	if (t) {
		t->wait_for = (enum ploom_wait_for)waits_for;
		t->wait_on = args[3];
		sched_point_when(&st->sched, t, PLOOM_OP_ACQUIRE, (PyObject *)self,
				 PLOOM_ACQUIRE_BLOCKING, when);
		if (!lock_take(self, t->id)) {
			PyErr_SetString(PyExc_SystemError, "acquire_when(): picked on a held lock");
			return NULL;
		}
		Py_RETURN_NONE;
	}
	if (!lock_take(self, HOLDER_OUTSIDE)) {
		PyErr_SetString(PyExc_RuntimeError,
				"ploom.Lock.acquire() on a held lock would block forever outside ploom.check()");
		return NULL;
	}
	r = PyObject_CallNoArgs(when);
	ok = r ? PyObject_IsTrue(r) : -1;
	Py_XDECREF(r);
	if (ok > 0)
		Py_RETURN_NONE;
	Py_BEGIN_CRITICAL_SECTION((PyObject *)self);
	self->holder = HOLDER_NONE;
	Py_END_CRITICAL_SECTION();
	if (!ok)
		PyErr_SetString(PyExc_RuntimeError,
				"a ploom.queue wait that nothing can end outside ploom.check()");
	return NULL;
}
