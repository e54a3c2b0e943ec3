/* module.c - the module ploom._ploom: its definition, state, functions
 * and GC slots.  ploom.h says how the files of the module divide the work
 * and how a schedule runs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdlib.h>
#include <string.h>

#include "ploom.h"
#include "../lib/exit.h"

static struct PyModuleDef module_def;

/* By definition rather than PyType_GetModuleState(): a Python subclass of
 * Thread has no module of its own, so the lookup must walk the MRO. */
module_state *state_of_type(PyTypeObject *tp)
{
	PyObject *m = PyType_GetModuleByDef(tp, &module_def);

	assert(m); /* every type reaching here derives from one of ours */
	return (module_state *)PyModule_GetState(m);
}

static PyObject *ploom_yield_now(PyObject *module, PyObject *Py_UNUSED(ignored))
{
	module_state *st = PyModule_GetState(module);
	struct task *t;

	if (op_begin(st, PLOOM_OP_YIELD_NOW, NULL, &t) < 0)
		return NULL;
	Py_RETURN_NONE;
}

/* set_timeouts(model): the worker's --timeouts, before any schedule */
static PyObject *ploom_set_timeouts(PyObject *module, PyObject *arg)
{
	module_state *st = PyModule_GetState(module);
	const char *name = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
	int m;

	if (!name) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError, "the time model must be a str");
		return NULL;
	}
	m = ploom_timeouts_parse(name);
	if (m < 0) {
		PyErr_Format(PyExc_ValueError, "unknown time model %R (idle or any)", arg);
		return NULL;
	}
	st->sched.timeouts = (enum ploom_timeouts)m;
	Py_RETURN_NONE;
}

/* Not an operation: words for the calling task's latest step, which a
 * primitive made of ploom's operations (ploom.queue) gives in its user's
 * terms.  Once per step, the first label counting: the decoder refuses a
 * second.  Nothing outside a schedule. */
static PyObject *ploom_label_step(PyObject *module, PyObject *text)
{
	module_state *st = PyModule_GetState(module);
	struct task *t = sched_running_task(&st->sched);
	const char *u;
	Py_ssize_t len;

	if (!PyUnicode_Check(text)) {
		PyErr_SetString(PyExc_TypeError, "label_step() takes a str");
		return NULL;
	}
	if (!t || !t->last_step || t->labelled == t->last_step)
		Py_RETURN_NONE;
	u = PyUnicode_AsUTF8AndSize(text, &len);
	if (!u)
		return NULL;
	t->labelled = t->last_step;
	ploom_enc_label(&st->sched.buf, t->last_step - 1, u, (size_t)len);
	/* at once: the code after it may crash the process */
	sched_flush(&st->sched);
	Py_RETURN_NONE;
}

/* Not an operation: which task runs is the scheduler's own state, not
 * shared state a schedule could order differently, so no scheduling point. */
static PyObject *ploom_current_task(PyObject *module, PyObject *Py_UNUSED(ignored))
{
	module_state *st = PyModule_GetState(module);
	struct task *t = sched_running_task(&st->sched);

	if (!t)
		Py_RETURN_NONE;
	return PyLong_FromLong(t->id);
}

/* Not an operation, as current_task(): the Thread of the running task. */
static PyObject *ploom_current_thread(PyObject *module, PyObject *Py_UNUSED(ignored))
{
	module_state *st = PyModule_GetState(module);
	struct task *t = sched_running_task(&st->sched);

	if (!t)
		Py_RETURN_NONE;
	if (t->id == 0)
		return main_thread_of(st);
	return Py_NewRef(t->thread);
}

static PyObject *ploom_main_thread(PyObject *module, PyObject *Py_UNUSED(ignored))
{
	module_state *st = PyModule_GetState(module);

	if (!sched_running_task(&st->sched))
		Py_RETURN_NONE;
	return main_thread_of(st);
}

/* Ends the running schedule at once with exc as its failure, beyond the
 * reach of any except clause of the scenario's code (a library that
 * catches BaseException to hand it to a future, say): how ploom reports
 * code running outside its scheduler.  False outside a schedule. */
static PyObject *ploom_fail_schedule(PyObject *module, PyObject *exc)
{
	module_state *st = PyModule_GetState(module);
	struct task *t = sched_running_task(&st->sched);

	if (!PyExceptionInstance_Check(exc)) {
		PyErr_SetString(PyExc_TypeError, "fail_schedule() takes an exception instance");
		return NULL;
	}
	if (!t)
		Py_RETURN_FALSE;
	sched_fail_with(&st->sched, t, exc);
}


/* The exit codes of exit.h, for the `ploom` command and the Python
 * package, which take them from here rather than repeat them. */
static int add_exit_codes(PyObject *m)
{
	static const struct {
		const char *name;
		int code;
	} codes[] = {
		{"EXIT_OK", PLOOM_EXIT_OK},
		{"EXIT_FAILURE", PLOOM_EXIT_FAILURE},
		{"EXIT_USAGE", PLOOM_EXIT_USAGE},
		{"EXIT_INCOMPLETE", PLOOM_EXIT_INCOMPLETE},
		{"EXIT_DIVERGENCE", PLOOM_EXIT_DIVERGENCE},
		{"EXIT_INTERNAL", PLOOM_EXIT_INTERNAL},
		{"EXIT_SETUP", PLOOM_EXIT_SETUP},
		{"EXIT_INTERRUPTED", PLOOM_EXIT_INTERRUPTED},
	};
	size_t i;

	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (PyModule_AddIntConstant(m, codes[i].name, codes[i].code) < 0)
			return -1;
	return 0;
}
/* Sets the signal whose Python handler runs (0: none) and returns the one
 * set before, for ploom._signals' wrapper of each handler. */
static PyObject *ploom_in_signal_handler(PyObject *module, PyObject *arg)
{
	module_state *st = PyModule_GetState(module);
	int before = st->sched.in_handler;
	long signum = PyLong_AsLong(arg);

	if (signum == -1 && PyErr_Occurred())
		return NULL;
	if (signum < 0 || signum > 1024) {
		PyErr_SetString(PyExc_ValueError, "in_signal_handler() takes a signal number or 0");
		return NULL;
	}
	st->sched.in_handler = (int)signum;
	return PyLong_FromLong(before);
}

static PyMethodDef module_methods[] = {
	{"in_signal_handler", ploom_in_signal_handler, METH_O,
	 "in_signal_handler(signum, /)\n--\n\nSays that the Python handler of signal signum runs\n"
	 "(0: none ends), and returns what was said before; a ploom operation there ends\n"
	 "the schedule.  Internal (ploom._signals)."},
	{"held_lock", (PyCFunction)(void (*)(void))ploom_held_lock, METH_VARARGS | METH_KEYWORDS,
	 "held_lock(*, name=None, condition=None)\n--\n\nA new Lock, held by the calling task, made without a\n"
	 "scheduling point, named as Lock(name=...); condition names the Condition whose waiter\n"
	 "it is.  Internal (ploom.threading's Condition)."},
	{"yield_now", ploom_yield_now, METH_NOARGS,
	 "yield_now()\n--\n\nA scheduling point with no effect: lets another task run.\n"
	 "Outside a check it does nothing."},
	{"set_timeouts", ploom_set_timeouts, METH_O,
	 "set_timeouts(model, /)\n--\n\nThe time model of the schedules this worker runs:\n"
	 "\"idle\" or \"any\" (lib/event.h).  Internal (ploom._worker's --timeouts)."},
	{"label_step", ploom_label_step, METH_O,
	 "label_step(text, /)\n--\n\nWords for the calling task's latest step, as ploom-show draws\n"
	 "it (ploom.queue's \"put 3\"); the first for a step counts.  Nothing outside a\n"
	 "schedule.  Not a scheduling point."},
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
	{"acquire_when", (PyCFunction)(void (*)(void))ploom_acquire_when, METH_FASTCALL,
	 "acquire_when(lock, when, waits_for, on, /)\n--\n\nA blocking acquire of lock that also waits until when()\n"
	 "returns true; ploom.queue's waits.  when() must only read state that code\n"
	 "holding lock changes, and run no ploom operation."},
	{"fail_schedule", ploom_fail_schedule, METH_O,
	 "fail_schedule(exc, /)\n--\n\nInside a schedule, ends it at once with exc as the running task's\n"
	 "failure, which no except clause can catch; False outside a check.  Internal\n"
	 "(ploom._guard)."},
	{"serve", ploom_serve, METH_VARARGS,
	 "serve(scenario, hello, cmd_fd, event_fd, /)\n--\n\n"
	 "The fork server loop of ploom's worker (see lib/event.h).  Internal."},
	{"write_error", ploom_write_error, METH_VARARGS,
	 "write_error(fd, kind, message, type=None, /)\n--\n\nWrite an error record (its "
	 "DETAIL the JSON object of message and type).  Internal."},
	{NULL, NULL, 0, NULL},
};

static int module_exec(PyObject *m)
{
	module_state *st = PyModule_GetState(m);
	PyObject *timeout;
	int added;

	atomic_init(&st->next_lock, 0);
	atomic_init(&st->next_cell, 0);
	atomic_init(&st->clock_ns, 0);
	/* borrowed: the module outlives every schedule */
	st->sched.clock_obj = m;
	st->sched.clock = &st->clock_ns;
	/* a measure and a reference of what free clock reads save (clock.c) */
	st->sched.clock_read_points = getenv("PLOOM_CLOCK_READS") &&
				      !strcmp(getenv("PLOOM_CLOCK_READS"), "points");
	st->lock_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &Lock_spec, NULL);
	if (!st->lock_type || PyModule_AddType(m, st->lock_type) < 0)
		return -1;
	st->cell_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &Cell_spec, NULL);
	if (!st->cell_type || PyModule_AddType(m, st->cell_type) < 0)
		return -1;
	st->thread_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &Thread_spec, NULL);
	if (!st->thread_type || PyModule_AddType(m, st->thread_type) < 0)
		return -1;
	st->plain_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &Plain_spec, NULL);
	if (!st->plain_type)
		return -1;
	st->sched.plain_type = st->plain_type;
	st->plain_iter_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &PlainIter_spec, NULL);
	if (!st->plain_iter_type)
		return -1;
	if (PyModule_AddFunctions(m, plain_methods) < 0 ||
	    PyModule_AddFunctions(m, site_methods) < 0 ||
	    PyModule_AddFunctions(m, clock_methods) < 0)
		return -1;
	{
		/* imported here, once, not in each schedule's child */
		PyObject *coll = PyImport_ImportModule("collections");
		if (!coll)
			return -1;
		st->deque_type = (PyTypeObject *)PyObject_GetAttrString(coll, "deque");
		Py_DECREF(coll);
		if (!st->deque_type)
			return -1;
		if (!PyType_Check(st->deque_type)) {
			Py_CLEAR(st->deque_type);
			PyErr_SetString(PyExc_TypeError, "collections.deque is not a type");
			return -1;
		}
		if (plain_init_types(st) < 0)
			return -1;
		PyObject *thread = PyImport_ImportModule("_thread");
		if (!thread)
			return -1;
		st->local_type = (PyTypeObject *)PyObject_GetAttrString(thread, "_local");
		Py_DECREF(thread);
		if (!st->local_type)
			return -1;
		if (!PyType_Check(st->local_type)) {
			Py_CLEAR(st->local_type);
			PyErr_SetString(PyExc_TypeError, "_thread._local is not a type");
			return -1;
		}
	}
	if (PyModule_AddIntConstant(m, "PROTOCOL_VERSION", PLOOM_PROTOCOL_VERSION) < 0 ||
	    PyModule_AddIntConstant(m, "SOURCES_MAX", PLOOM_SOURCES_MAX) < 0 ||
	    PyModule_AddIntConstant(m, "PATH_MAX", PLOOM_PATH_MAX) < 0 || add_exit_codes(m) < 0)
		return -1;
	timeout = PyFloat_FromDouble(PLOOM_DEFAULT_SCHEDULE_TIMEOUT_S);
	if (!timeout)
		return -1;
	added = PyModule_AddObjectRef(m, "DEFAULT_SCHEDULE_TIMEOUT", timeout);
	Py_DECREF(timeout);
	return added;
}

/* The state's Python objects: the types, the main thread and, in a
 * schedule's child, the tasks' Threads and the codes a step stopped in
 * (the worker runs no schedule, so it holds none). */
static int module_traverse(PyObject *m, visitproc visit, void *arg)
{
	module_state *st = PyModule_GetState(m);
	struct sched *s;
	size_t i;
	int k;

	if (!st)
		return 0;
	s = &st->sched;
	Py_VISIT(st->lock_type);
	Py_VISIT(st->cell_type);
	Py_VISIT(st->thread_type);
	Py_VISIT(st->plain_type);
	Py_VISIT(st->plain_iter_type);
	Py_VISIT(st->deque_type);
	Py_VISIT(st->local_type);
	Py_VISIT(st->site_text);
	Py_VISIT(st->site_key);
	Py_VISIT(st->shared_sites);
	Py_VISIT(st->main_thread);
	for (k = 0; k < s->ntasks; k++)
		Py_VISIT(s->tasks[k]->thread);
	for (i = 0; i < s->codes_cap; i++)
		Py_VISIT(s->codes[i].code);
	return 0;
}

static int module_clear(PyObject *m)
{
	module_state *st = PyModule_GetState(m);
	struct sched *s;
	size_t i;
	int k;

	if (!st)
		return 0;
	s = &st->sched;
	Py_CLEAR(st->lock_type);
	Py_CLEAR(st->cell_type);
	Py_CLEAR(st->thread_type);
	Py_CLEAR(st->plain_type);
	s->plain_type = NULL;
	Py_CLEAR(st->plain_iter_type);
	Py_CLEAR(st->deque_type);
	Py_CLEAR(st->local_type);
	Py_CLEAR(st->site_text);
	Py_CLEAR(st->site_key);
	Py_CLEAR(st->shared_sites);
	Py_CLEAR(st->main_thread);
	for (k = 0; k < s->ntasks; k++)
		Py_CLEAR(s->tasks[k]->thread);
	for (i = 0; i < s->codes_cap; i++)
		Py_CLEAR(s->codes[i].code);
	s->codes_used = 0;
	return 0;
}

/* The scheduler's C memory.  In the worker that is the last `run`
 * command's choices and sleep set; a schedule's child _exit()s and never
 * frees its tasks, but they are freed here too should a module that ran
 * one ever be freed.  A task's OS thread could still wait on its
 * semaphore then, so the semaphores are left alone. */
static void module_free(void *m)
{
	module_state *st = PyModule_GetState((PyObject *)m);
	struct sched *s;
	int k;

	(void)module_clear((PyObject *)m);
	if (!st)
		return;
	s = &st->sched;
	for (k = 0; k < s->ntasks; k++) {
		free(s->tasks[k]->wsites);
		free(s->tasks[k]);
	}
	free(s->tasks);
	free(s->enabled);
	free(s->pending);
	free(s->asleep);
	free(s->cand);
	free(s->choices);
	free(s->sleep);
	free(s->policy_spec.follow);
	free(s->codes);
	for (k = 0; (size_t)k < s->plain.cap; k++)
		if (s->plain.slot[k] != PLAIN_REMOVED)
			Py_XDECREF((PyObject *)s->plain.slot[k]);
	free(s->plain.slot);
	free(st->site_point);
	free(s->fresh_addr);
	free(s->fresh_step);
	free(s->ploom_dir);
	free(s->cwd);
	ploom_policy_release(&s->policy);
	ploom_buf_release(&s->buf);
	memset(s, 0, sizeof(*s));
}

static PyModuleDef_Slot module_slots[] = {
	{Py_mod_exec, module_exec},
#ifdef Py_mod_gil
	/* Tasks never run Python code at the same time: only the baton holder
	 * runs, and the baton's semaphores order every access to scheduler and
	 * object state.  Outside a check, a Lock's holder, a cell's value and
	 * a thread's name are guarded by critical sections, and the object
	 * counters are atomic.  So the module is safe without the GIL (3.13+). */
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
	.m_free = module_free,
};

PyMODINIT_FUNC PyInit__ploom(void)
{
	return PyModuleDef_Init(&module_def);
}
