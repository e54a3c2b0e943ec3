/* sites.c - which plain accesses are scheduling points.
 *
 * Each place in instrumented code that touches plain state is an access
 * site.  Here: the sites an instrumented module registers and those the
 * worker says are points, the watch over every other access that ends a
 * schedule with refine when a site must become a point, the spin watch,
 * and the point itself with the value it read or wrote.  The hooks that
 * call access_plain() are hooks.c's, the plain objects plain.c's.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ploom.h"

/* ---- when a hook is a point ------------------------------------------- */

/* The task a hook runs on when it is a point: inside a schedule, on a
 * task, once a second task exists; else NULL (a plain operation). */
struct task *hook_task(module_state *st)
{
	struct task *t = sched_running_task(&st->sched);

	if (!t || st->sched.ntasks < 2)
		return NULL;
	op_origin_check(&st->sched, t);
	return t;
}

/* ---- which accesses are points ----------------------------------------
 *
 * An access site (one place in instrumented code, registered by
 * _i_sites()) is a point only when the search says so: its key is among
 * the sites the worker was given (_i_shared()).  Every other access is
 * watched here instead: who touched each plain object, whether any wrote
 * it, and at which sites without a point.  Once two tasks touched an
 * object and one wrote it, a site that touched it without a point could
 * hide an order that matters, and the schedule ends with the outcome
 * refine, naming those sites; the search then starts again with them
 * among the points.  Objects only one task touches, or that every task
 * only reads, never make a point.
 *
 * Why no order is lost (the Guarantees page says it for users): take any
 * execution with every access a point, and its first access that makes
 * an object touched by two tasks, one writing, through a site that is no
 * point.  Before it, each access without a point touches an object that
 * no other task writes or touches, so it commutes with every step of the
 * other tasks: moved next to the point before it, the execution becomes
 * one the search runs up to the order of independent steps.  The search
 * reaches each such class, and the accesses of a class do not depend on
 * its order: so some schedule it runs makes the same two accesses and
 * ends in refine.  When none does, no execution has such an access, and
 * the points the search made are all the orders there are.  A site
 * unknown here (a hook called by hand) is always a point. */

/* Quiet reads: under a reduction (all_points) every access is a point but
 * a read that seldom races, which is watched as above instead, and becomes
 * a point when the watch shows it must (refine; the reduction's worker is
 * then told its key).  A read is quiet when it reads a binding whose value
 * is code or immutable: a module's attribute or a global holding a module,
 * a class, a function or a constant.  Watching, not the value, is what
 * makes it sound: a rebinding by another task is a write of the same
 * plain object, which makes the read's site a point.  Why the reduction
 * may watch too: the argument above needs only that the search runs, for
 * each execution, one of the same events up to the order of independent
 * ones, which the reduction does for the points it sees; the first event
 * whose value a watched read changes is itself the access that refines. */
static int site_is_point(module_state *st, long site, int quiet)
{
	if (st->all_points && (!quiet || st->loud))
		return 1;
	if (site < 0 || (size_t)site >= st->cap_site_point || !st->site_key ||
	    site >= PyList_GET_SIZE(st->site_key))
		return 1;
	return st->site_point[site];
}

static int add_site(PlainObject *p, long site)
{
	size_t i;

	/* a loop touches an object from one site many times: the last one
	 * first */
	if (p->nsites && p->sites[p->nsites - 1] == site)
		return 0;
	for (i = 0; i < p->nsites; i++)
		if (p->sites[i] == site)
			return 0;
	if (p->nsites == p->capsites) {
		size_t cap = p->capsites ? 2 * p->capsites : 4;
		long *n = realloc(p->sites, cap * sizeof(*n));
		if (!n)
			return -1;
		p->sites = n;
		p->capsites = cap;
	}
	p->sites[p->nsites++] = site;
	return 0;
}

static int add_task_site(struct task *t, long site)
{
	size_t i;

	for (i = 0; i < t->nwsites; i++)
		if (t->wsites[i] == site)
			return 0;
	if (t->nwsites == t->capwsites) {
		size_t cap = t->capwsites ? 2 * t->capwsites : 8;
		long *n = realloc(t->wsites, cap * sizeof(*n));
		if (!n)
			return -1;
		t->wsites = n;
		t->capwsites = cap;
	}
	t->wsites[t->nwsites++] = site;
	return 0;
}

/* Ends the schedule with refine for sites[0..n). */
static _Noreturn void refine(module_state *st, const long *sites, size_t n)
{
	struct ploom_buf b = {0};
	size_t i, len;

	for (i = 0; i < n; i++) {
		PyObject *key = PyList_GET_ITEM(st->site_key, sites[i]);
		const char *u = utf8_of(key, &len);
		if (i)
			ploom_buf_add(&b, " ", 1);
		ploom_buf_add(&b, u, len);
	}
	sched_refine(&st->sched, b.data ? b.data : "", b.len);
}

/* A step that ends with no point after it, in the task's exit or in a
 * failure, fixes when that exit or failure comes with respect to other
 * tasks' steps: had a watched access in it been a point, other tasks could
 * have run between it and the end (and a failure ends every task).  So
 * such a step's watched sites become points too, unless every other task
 * had finished: none ran during the step, so none had run at any point
 * that an access in it could have been (a scenario's last read of the
 * list of the threads it joined). */
void plain_step_ends(struct sched *s, struct task *t)
{
	module_state *st = (module_state *)((char *)s - offsetof(module_state, sched));
	int i;

	if (!t->nwsites)
		return;
	for (i = 0; i < s->ntasks; i++)
		if (s->tasks[i] != t && s->tasks[i]->state != TASK_FINISHED)
			refine(st, t->wsites, t->nwsites);
}

/* The spin watch.  A task that reads one plain object again and again in
 * one step, without writing it, while another task could run, is most
 * likely waiting for that task to write it (`while not box.ready: ...`):
 * with no point in the loop the other task never runs, and the schedule
 * spins until its wall-clock limit, which would read as a hang of the
 * code under test that real threads never show.  Its sites become points
 * (refine), which only adds orders to those the search explores.  A long
 * loop that reads an object nobody else is about to touch pays at most
 * one restart of the search. */
#define SPIN_READS 10000

static int spins(module_state *st, struct task *t, PlainObject *p, enum ploom_op op)
{
	if (p->spin_step != st->sched.step || p->spin_task != t->id) {
		p->spin_step = st->sched.step;
		p->spin_task = t->id;
		p->spin_reads = 0;
	}
	if (op == PLOOM_OP_WRITE || p->spin_reads < 0) {
		p->spin_reads = -1;
		return 0;
	}
	return ++p->spin_reads >= SPIN_READS && p->nsites &&
	       sched_others_may_run(&st->sched, t);
}

/* Task t is about to do op on (target, attr) at site: watches the access,
 * and stops t at a point if the site is one (quiet: a quiet read, see
 * site_is_point()).  Returns 1 after a point, 0
 * without one, -1 with an exception; ends the schedule with refine when
 * the access shows a site that must be a point. */
int access_plain(module_state *st, struct task *t, enum ploom_op op, PyObject *target,
			PyObject *attr, long site, int quiet)
{
	PlainObject *p;
	int is_point;

	if (is_fresh(&st->sched, target))
		return 0;
	p = plain_of(st, target, attr, site);
	is_point = site_is_point(st, site, quiet);
	if (!p)
		return -1;
	if (p->owner < 0)
		p->owner = t->id;
	else if (p->owner != t->id)
		p->shared = 1;
	if (op == PLOOM_OP_WRITE)
		p->written = 1;
	if (!is_point && add_site(p, site) < 0) {
		PyErr_NoMemory();
		return -1;
	}
	if (p->shared && p->written && p->nsites)
		refine(st, p->sites, p->nsites);
	if (!is_point && spins(st, t, p, op))
		refine(st, p->sites, p->nsites);
	if (!is_point) {
		if ((!t->nwsites || t->wsites[t->nwsites - 1] != site) && add_task_site(t, site) < 0) {
			PyErr_NoMemory();
			return -1;
		}
		return 0;
	}
	if (p->oid < 0)
		p->oid = st->sched.plain_next++;
	sched_point(&st->sched, t, op, (PyObject *)p, PLOOM_ACQUIRE_BLOCKING);
	return 1;
}

/* Records what a plain access read or wrote: the repr of a value of a
 * builtin immutable type, else only its type, since the repr of any other
 * object runs its code (instrumented, perhaps) in the middle of a step. */
void plain_value(module_state *st, struct task *t, PyObject *v)
{
	PyObject *shown;

	if (!v || !t)
		return;
	if (v == Py_None || PyBool_Check(v) || PyLong_CheckExact(v) || PyFloat_CheckExact(v) ||
	    PyUnicode_CheckExact(v) || PyBytes_CheckExact(v) || PyComplex_CheckExact(v)) {
		op_value(st, t, v);
		return;
	}
	shown = PyUnicode_FromFormat("<%s>", short_type_name(Py_TYPE(v)));
	if (!shown) {
		PyErr_Clear();
		return;
	}
	add_value_text(&st->sched, shown);
	Py_DECREF(shown);
}

/* The value a read at a point found, recorded only while its step is still
 * the current one: reading may run code (a descriptor, __getattr__, a dict
 * subclass's __getitem__ or __missing__) that is instrumented too and
 * reaches points of its own, and the value must not land on their steps. */
void read_value(module_state *st, struct task *t, long step, PyObject *v)
{
	if (st->sched.step == step)
		plain_value(st, t, v);
}

/* ---- the sites ---------------------------------------------------------- */

static PyObject *i_sites(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
	module_state *st = PyModule_GetState(mod);
	Py_ssize_t base, i, n;
	PyObject *sites;

	if (want_args("_i_sites", nargs, 3) < 0)
		return NULL;
	sites = args[2];
	if (!PyUnicode_Check(args[0]) || !PyTuple_Check(sites)) {
		PyErr_SetString(PyExc_TypeError, "_i_sites(): a module name and a tuple of sites");
		return NULL;
	}
	if (!st->site_text && !(st->site_text = PyList_New(0)))
		return NULL;
	if (!st->site_key && !(st->site_key = PyList_New(0)))
		return NULL;
	base = PyList_GET_SIZE(st->site_text);
	n = PyTuple_GET_SIZE(sites);
	if ((size_t)(base + n) > st->cap_site_point) {
		size_t cap = st->cap_site_point ? st->cap_site_point : 1024;
		char *q;
		while (cap < (size_t)(base + n))
			cap *= 2;
		q = realloc(st->site_point, cap);
		if (!q)
			return PyErr_NoMemory();
		memset(q + st->cap_site_point, 1, cap - st->cap_site_point);
		st->site_point = q;
		st->cap_site_point = cap;
	}
	for (i = 0; i < n; i++) {
		PyObject *s = PyTuple_GET_ITEM(sites, i), *text = Py_None, *key;
		int in;
		if (PyTuple_Check(s) && PyTuple_GET_SIZE(s) >= 3)
			text = PyTuple_GET_ITEM(s, 2);
		/* the key of a site: its module and its place among the
		 * module's sites, the same in every process that instruments
		 * the same source */
		key = PyUnicode_FromFormat("%U:%zd", args[0], i);
		if (!key)
			return NULL;
		in = st->shared_sites ? PySet_Contains(st->shared_sites, key) : 0;
		if (in < 0 || PyList_Append(st->site_text, text) < 0 ||
		    PyList_Append(st->site_key, key) < 0) {
			Py_DECREF(key);
			return NULL;
		}
		Py_DECREF(key);
		st->site_point[base + i] = (char)in;
	}
	return PyLong_FromSsize_t(base);
}

/* The sites that are points, from the worker's command line: before any
 * instrumented module registers its sites. */
static PyObject *i_shared(PyObject *mod, PyObject *arg)
{
	module_state *st = PyModule_GetState(mod);
	PyObject *set = PySet_New(arg), *all;
	int r;

	if (!set)
		return NULL;
	/* "*": every site but the quiet ones is a point (a reduction's
	 * search, see ploom_config_watches_plain()); the other keys are the
	 * quiet ones that are points too */
	all = PyUnicode_FromString("*");
	r = all ? PySet_Contains(set, all) : -1;
	Py_XDECREF(all);
	if (r < 0) {
		Py_DECREF(set);
		return NULL;
	}
	st->all_points = r;
	/* a measure of what quiet reads save: every read a point again */
	st->loud = r && getenv("PLOOM_QUIET_READS") && !strcmp(getenv("PLOOM_QUIET_READS"), "0");
	if (st->site_key && PyList_GET_SIZE(st->site_key)) {
		Py_DECREF(set);
		PyErr_SetString(PyExc_RuntimeError,
				"_i_shared() after instrumented code registered its sites");
		return NULL;
	}
	Py_XSETREF(st->shared_sites, set);
	Py_RETURN_NONE;
}

/* The keys of the worker's fd 5, its `points` line (event.h), as a list
 * of str for _i_shared(); ValueError naming what is wrong. */
static PyObject *i_points(PyObject *mod, PyObject *arg)
{
	struct ploom_points points;
	struct ploom_err err = {0, ""};
	PyObject *list = NULL;
	char *data;
	Py_ssize_t len;
	size_t i;

	(void)mod;
	if (PyBytes_AsStringAndSize(arg, &data, &len) < 0)
		return NULL;
	if (ploom_points_parse(&points, data, (size_t)len, &err) < 0) {
		PyErr_SetString(err.kind == PLOOM_ERR_NOMEM ? PyExc_MemoryError : PyExc_ValueError,
				err.msg);
		goto done;
	}
	list = PyList_New((Py_ssize_t)points.n);
	for (i = 0; list && i < points.n; i++) {
		PyObject *key = PyUnicode_FromString(points.keys[i]);
		if (!key) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, key);
	}
done:
	ploom_points_release(&points);
	return list;
}

/* Registering the sites, and which are points: module functions. */
PyMethodDef site_methods[] = {
	{"_i_sites", (PyCFunction)(void (*)(void))i_sites, METH_FASTCALL,
	 "_i_sites(module, filename, sites, /)\n--\n\nRegisters the access sites of an "
	 "instrumented module ((line, column, text) each); returns the id of the first.  "
	 "Internal (ploom._instrument)."},
	{"_i_shared", i_shared, METH_O,
	 "_i_shared(keys, /)\n--\n\nThe keys of the access sites that are scheduling points "
	 "(\"MODULE:K\"); every other site is watched instead.  Internal (ploom._worker)."},
	{"_i_points", i_points, METH_O,
	 "_i_points(data, /)\n--\n\nThe site keys of the worker's `points` line (bytes), "
	 "for _i_shared().  Internal (ploom._worker)."},
	{NULL, NULL, 0, NULL},
};
