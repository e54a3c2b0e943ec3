/* plain.c - plain Python state as operations.
 *
 * ploom._instrument rewrites the functions of an instrumented module so
 * that each attribute, subscript and global access, each method call and
 * each read of a container's content calls one of the hooks here.  Inside
 * a schedule, on a task, a hook that touches state is a scheduling point:
 * a read or write (event.h) of a "plain" object, plain#N, which stands for
 * one attribute of one object, one global of one module, or the whole
 * content of one mutable container (list, dict, set, bytearray, deque).
 * Outside a schedule, and on a thread ploom does not schedule, a hook is
 * the plain operation and nothing else.
 *
 * What is state and what is code is decided from the type, before the
 * access, so that the point comes first and nothing runs twice: reading
 * an attribute that the type provides as a function, method, class,
 * property or module (a method lookup, `self.lock.acquire`) is code, not
 * state, and no point; an instance attribute, a slot, a class attribute
 * holding a value, a module global holding a value are state.  Immutable
 * values (str, int, tuple...) have no content to race on.
 *
 * Until the scenario starts its first thread no other task exists, and
 * whatever the main task does then happens before everything any task
 * does: such accesses are no points.  After that every access is one,
 * even when the other tasks have finished, since a schedule that ran the
 * access earlier would race with theirs.
 *
 * A plain object stands for its target while the target lives and holds
 * no reference to it ("the plain objects of a schedule" below).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ploom.h"

/* ---- the plain objects of a schedule ----------------------------------
 *
 * A plain object is keyed by its target's address and holds no reference
 * to the target: instrumented code keeps CPython's lifetimes, so that a
 * `del` runs `__del__` and fires weak references where it would run
 * uninstrumented, and temporaries die when their last reference goes.
 * The address is the target's identity while it lives; once the target
 * dies its plain objects leave the table, so that a new object made at
 * the same address is a new plain object (a new plain#N, numbered in the
 * order of first touch whatever the allocator does: replays see the same
 * numbers).  How the table learns of a death:
 *
 * - a target that takes weak references: a weak reference whose callback
 *   is the plain object itself (Plain_call);
 * - a dict: a dict watcher (PyDict_AddWatcher), told when it is freed;
 * - a list or a bytearray: their types' tp_dealloc, wrapped in the
 *   schedule's child the first time the table holds one;
 * - a module's namespace (a dict that is the target of attributes, its
 *   globals): held, as the module and each of its functions hold it
 *   anyway.
 *
 * Any other target (an instance of a class with __slots__ and no
 * __weakref__) stays in the table after it died, and a new object at its
 * address counts as the same one: an extra dependence, never a missing
 * one. */

static void Plain_dealloc(PyObject *op)
{
	PlainObject *self = (PlainObject *)op;
	PyTypeObject *tp = Py_TYPE(op);

	Py_XDECREF(self->keep);
	Py_XDECREF(self->wr);
	Py_XDECREF(self->attr);
	Py_XDECREF(self->name);
	free(self->sites);
	tp->tp_free(op);
	Py_DECREF(tp);
}

static void table_remove(PlainObject *p);
static int may_forget(void);

/* The weak reference's callback: the target died. */
static PyObject *Plain_call(PyObject *op, PyObject *args, PyObject *kwargs)
{
	(void)args;
	(void)kwargs;
	if (may_forget())
		table_remove((PlainObject *)op);
	Py_RETURN_NONE;
}

static PyType_Slot Plain_slots[] = {
	{Py_tp_dealloc, Plain_dealloc},
	{Py_tp_call, Plain_call},
	{Py_tp_doc, (void *)"What one plain access touches, inside a schedule.  Internal."},
	{0, NULL},
};

PyType_Spec Plain_spec = {
	.name = "ploom._ploom.Plain",
	.basicsize = sizeof(PlainObject),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
	.slots = Plain_slots,
};

static Py_hash_t key_hash(PyObject *target, PyObject *attr)
{
	uintptr_t h = (uintptr_t)target >> 4;

	if (attr) {
		Py_hash_t a = PyObject_Hash(attr);
		if (a == -1) {
			PyErr_Clear();
			a = (Py_hash_t)(uintptr_t)attr;
		}
		h ^= (uintptr_t)a * 1000003u;
	}
	h ^= h >> 17;
	return (Py_hash_t)(h & (uintptr_t)PY_SSIZE_T_MAX);
}

static int key_equal(const PlainObject *p, uintptr_t addr, PyObject *attr)
{
	if (p->addr != addr)
		return 0;
	if (p->attr == attr)
		return 1;
	if (!p->attr || !attr)
		return 0;
	return PyUnicode_Check(attr) && PyUnicode_Check(p->attr) &&
	       PyUnicode_Compare(p->attr, attr) == 0;
}

/* The last dotted part of a type's name: "Pool", not "mylib.pool.Pool". */
static const char *short_type_name(PyTypeObject *tp)
{
	const char *dot = strrchr(tp->tp_name, '.');

	return dot ? dot + 1 : tp->tp_name;
}

/* A plain object's label, as steps name it: Pool.num_connections for an
 * attribute, mylib.pool.STATE for a global, the text of the access that
 * first touched a container (handle['con'], self.items.append). */
static PyObject *plain_label(module_state *st, PyObject *target, PyObject *attr, long site)
{
	if (attr) {
		if (PyDict_Check(target)) {
			PyObject *mod = PyDict_GetItemString(target, "__name__");
			if (mod && PyUnicode_Check(mod))
				return PyUnicode_FromFormat("%U.%U", mod, attr);
			return PyUnicode_FromFormat("%U", attr);
		}
		if (PyType_Check(target))
			return PyUnicode_FromFormat("%s.%U", short_type_name((PyTypeObject *)target),
						    attr);
		return PyUnicode_FromFormat("%s.%U", short_type_name(Py_TYPE(target)), attr);
	}
	if (site >= 0 && st->site_text && site < PyList_GET_SIZE(st->site_text)) {
		PyObject *text = PyList_GET_ITEM(st->site_text, site);
		if (PyUnicode_Check(text))
			return PyUnicode_FromFormat("%s %U", short_type_name(Py_TYPE(target)), text);
	}
	return PyUnicode_FromString(short_type_name(Py_TYPE(target)));
}

/* Rebuilds the table with room for one more, without the removed slots.
 * Plain C: no Python code runs (and no object dies) in the middle. */
static int table_make_room(struct plain_table *tb)
{
	size_t cap = 256, i, j;
	PlainObject **slot;

	if (2 * (tb->used + tb->removed + 1) <= tb->cap)
		return 0;
	while (cap < 4 * (tb->used + 1))
		cap *= 2;
	if (!(slot = calloc(cap, sizeof(*slot))))
		return -1;
	for (i = 0; i < tb->cap; i++) {
		PlainObject *p = tb->slot[i];
		if (!p || p == PLAIN_REMOVED)
			continue;
		for (j = (size_t)p->hash & (cap - 1); slot[j]; j = (j + 1) & (cap - 1))
			;
		slot[j] = p;
	}
	free(tb->slot);
	tb->slot = slot;
	tb->cap = cap;
	tb->removed = 0;
	return 0;
}

/* The slot of (addr, attr), or -1. */
static Py_ssize_t table_find(const struct plain_table *tb, uintptr_t addr, PyObject *attr,
			     Py_hash_t h)
{
	PlainObject *p;
	size_t j;

	if (!tb->cap)
		return -1;
	for (j = (size_t)h & (tb->cap - 1); (p = tb->slot[j]); j = (j + 1) & (tb->cap - 1))
		if (p != PLAIN_REMOVED && p->hash == h && key_equal(p, addr, attr))
			return (Py_ssize_t)j;
	return -1;
}

/* Takes p out of its table, if it is there, and drops the table's
 * reference. */
static void table_remove(PlainObject *p)
{
	struct plain_table *tb = p->table;
	Py_ssize_t j;

	if (!tb || (j = table_find(tb, p->addr, p->attr, p->hash)) < 0 || tb->slot[j] != p)
		return;
	tb->slot[j] = PLAIN_REMOVED;
	tb->used--;
	tb->removed++;
	p->table = NULL;
	Py_DECREF(p);
}

/* ---- learning that a target died -------------------------------------- */

/* The schedule whose table the dealloc hooks and the dict watcher clear,
 * in its child. */
static struct sched *dying_sched;

/* Whether this thread may take a dead target's plain objects out of the
 * table: on a free-threaded build only the running task, the one thread
 * that touches the table; a death elsewhere leaves the address standing
 * for the dead object (an extra dependence). */
static int may_forget(void)
{
#ifdef Py_GIL_DISABLED
	return dying_sched && sched_running_task(dying_sched);
#else
	return 1;
#endif
}

/* The container at address op died: its plain object goes. */
static void forget_container(PyObject *op)
{
	struct plain_table *tb = dying_sched ? &dying_sched->plain : NULL;
	Py_ssize_t j;

	if (!tb || !tb->used || !may_forget())
		return;
	if ((j = table_find(tb, (uintptr_t)op, NULL, key_hash(op, NULL))) >= 0)
		table_remove(tb->slot[j]);
}

static destructor list_dealloc, bytearray_dealloc;

static void list_dealloc_forgetting(PyObject *op)
{
	forget_container(op);
	list_dealloc(op);
}

static void bytearray_dealloc_forgetting(PyObject *op)
{
	forget_container(op);
	bytearray_dealloc(op);
}

static int dict_watcher = -1;

static int dict_died(PyDict_WatchEvent event, PyObject *d, PyObject *key, PyObject *value)
{
	(void)key;
	(void)value;
	if (event == PyDict_EVENT_DEALLOCATED)
		forget_container(d);
	return 0;
}

/* Makes sure the table hears of target's death, per the list above; p is
 * its new plain object.  -1 with an exception. */
static int watch_target(struct sched *s, PlainObject *p, PyObject *target, PyObject *attr)
{
	dying_sched = s;
	if (PyType_SUPPORTS_WEAKREFS(Py_TYPE(target))) {
		/* one the type refuses after all is taken by its address */
		if (!(p->wr = PyWeakref_NewRef(target, (PyObject *)p)))
			PyErr_Clear();
		return 0;
	}
	if (attr && PyDict_CheckExact(target)) {
		p->keep = Py_NewRef(target);
		return 0;
	}
	if (PyDict_Check(target)) {
		if (dict_watcher < 0 && (dict_watcher = PyDict_AddWatcher(dict_died)) < 0) {
			/* no watcher left: the address stands for the dict */
			PyErr_Clear();
			return 0;
		}
		return PyDict_Watch(dict_watcher, target);
	}
	if (PyList_Check(target) && !list_dealloc) {
		list_dealloc = PyList_Type.tp_dealloc;
		PyList_Type.tp_dealloc = list_dealloc_forgetting;
	} else if (PyByteArray_Check(target) && !bytearray_dealloc) {
		bytearray_dealloc = PyByteArray_Type.tp_dealloc;
		PyByteArray_Type.tp_dealloc = bytearray_dealloc_forgetting;
	}
	return 0;
}

/* The plain object of (target, attr) in this schedule, made on first use;
 * borrowed (the table keeps it).  NULL with an exception. */
static PlainObject *plain_of(module_state *st, PyObject *target, PyObject *attr, long site)
{
	struct plain_table *tb = &st->sched.plain;
	Py_hash_t h = key_hash(target, attr);
	PlainObject *p;
	Py_ssize_t found;
	size_t j;

	if ((found = table_find(tb, (uintptr_t)target, attr, h)) >= 0) {
		PyObject *alive = NULL;
		p = tb->slot[found];
		if (!p->wr)
			return p;
		/* a target that died while no callback could tell the table */
		if (PyWeakref_GetRef(p->wr, &alive) < 0)
			PyErr_Clear();
		Py_XDECREF(alive);
		if (alive == target)
			return p;
		table_remove(p);
	}
	p = PyObject_New(PlainObject, st->plain_type);
	if (!p)
		return NULL;
	p->oid = -1;
	p->addr = (uintptr_t)target;
	p->keep = p->wr = NULL;
	p->table = NULL;
	p->attr = Py_XNewRef(attr);
	p->hash = h;
	p->announced = 0;
	p->owner = -1;
	p->shared = 0;
	p->written = 0;
	p->sites = NULL;
	p->nsites = p->capsites = 0;
	p->spin_step = -1;
	p->spin_task = -1;
	p->spin_reads = 0;
	p->name = plain_label(st, target, attr, site);
	if (!p->name)
		PyErr_Clear();
	/* what may run Python code (and so free objects, whose plain
	 * objects leave the table) comes before the slot is chosen */
	if (watch_target(&st->sched, p, target, attr) < 0 || table_make_room(tb) < 0) {
		if (!PyErr_Occurred())
			PyErr_NoMemory();
		Py_DECREF(p);
		return NULL;
	}
	for (j = (size_t)h & (tb->cap - 1); tb->slot[j] && tb->slot[j] != PLAIN_REMOVED;
	     j = (j + 1) & (tb->cap - 1))
		;
	if (tb->slot[j] == PLAIN_REMOVED)
		tb->removed--;
	tb->slot[j] = p;
	tb->used++;
	p->table = tb;
	return p;
}

/* ---- objects made in the current step ---------------------------------
 *
 * No other task runs between two scheduling points, so an object made
 * since the last one (of any task) is reachable by the task that made it
 * alone until the next: its accesses need no point, under any search.
 * Instrumented code marks what it makes (_i_new(): a display or a
 * comprehension, which always makes a new object) with the step number;
 * an address marked with the current step holds an object made in this
 * step, the marked one or a newer one made after it died.  Marks of
 * older steps never count again, so a full table just drops them. */

static size_t fresh_slot(const struct sched *s, uintptr_t a)
{
	size_t j = (size_t)((a >> 4) * 0x9E3779B97F4A7C15ull) & (s->fresh_cap - 1);

	while (s->fresh_addr[j] && s->fresh_addr[j] != a)
		j = (j + 1) & (s->fresh_cap - 1);
	return j;
}

static int fresh_rebuild(struct sched *s, size_t cap)
{
	uintptr_t *addr = calloc(cap, sizeof(*addr));
	long *step = calloc(cap, sizeof(*step));
	uintptr_t *old_addr = s->fresh_addr;
	long *old_step = s->fresh_step;
	size_t old_cap = s->fresh_cap, i;

	if (!addr || !step) {
		free(addr);
		free(step);
		return -1;
	}
	s->fresh_addr = addr;
	s->fresh_step = step;
	s->fresh_cap = cap;
	s->fresh_used = 0;
	for (i = 0; i < old_cap; i++)
		if (old_addr[i] && old_step[i] == s->step) {
			size_t j = fresh_slot(s, old_addr[i]);
			s->fresh_addr[j] = old_addr[i];
			s->fresh_step[j] = old_step[i];
			s->fresh_used++;
		}
	free(old_addr);
	free(old_step);
	return 0;
}

static void mark_fresh(struct sched *s, PyObject *o)
{
	uintptr_t a = (uintptr_t)o;
	size_t j;

	if (2 * (s->fresh_used + 1) > s->fresh_cap) {
		/* drop the marks of earlier steps; grow only if this one's fill it */
		size_t cap = s->fresh_cap ? s->fresh_cap : 1024;
		if (fresh_rebuild(s, cap) < 0)
			return;
		if (2 * (s->fresh_used + 1) > s->fresh_cap && fresh_rebuild(s, 2 * cap) < 0)
			return;
	}
	j = fresh_slot(s, a);
	if (!s->fresh_addr[j]) {
		s->fresh_addr[j] = a;
		s->fresh_used++;
	}
	s->fresh_step[j] = s->step;
}

static int is_fresh(const struct sched *s, PyObject *o)
{
	size_t j;

	if (!s->fresh_cap)
		return 0;
	j = fresh_slot(s, (uintptr_t)o);
	return s->fresh_addr[j] == (uintptr_t)o && s->fresh_step[j] == s->step;
}

/* ---- when a hook is a point ------------------------------------------- */

/* The task a hook runs on when it is a point: inside a schedule, on a
 * task, once a second task exists; else NULL (a plain operation). */
static struct task *hook_task(module_state *st)
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
static int access_plain(module_state *st, struct task *t, enum ploom_op op, PyObject *target,
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
static void plain_value(module_state *st, struct task *t, PyObject *v)
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
static void read_value(module_state *st, struct task *t, long step, PyObject *v)
{
	if (st->sched.step == step)
		plain_value(st, t, v);
}

static int is_code(PyObject *v)
{
	return PyFunction_Check(v) || PyCFunction_Check(v) || PyMethod_Check(v) ||
	       PyType_Check(v) || PyModule_Check(v) ||
	       Py_IS_TYPE(v, &PyMethodDescr_Type) || Py_IS_TYPE(v, &PyClassMethodDescr_Type) ||
	       Py_IS_TYPE(v, &PyWrapperDescr_Type) ||
	       PyObject_TypeCheck(v, &PyClassMethod_Type) ||
	       PyObject_TypeCheck(v, &PyStaticMethod_Type) ||
	       PyObject_TypeCheck(v, &PyProperty_Type);
}

/* Whether obj.name is an attribute of a threading.local that its type
 * does not provide: it lives in a dict of the calling thread's own (every
 * task is an OS thread of its own), which no other task can reach, so it
 * is no shared state.  (Its access may also run the local's __init__ in
 * this thread, instrumented code that must not run inside a point.) */
static int thread_local_attr(module_state *st, PyObject *obj, PyObject *name)
{
	return st->local_type && PyObject_TypeCheck(obj, st->local_type) &&
	       !_PyType_Lookup(Py_TYPE(obj), name);
}

/* Whether v can never change: a constant of a builtin immutable type, or a
 * tuple, frozenset or struct sequence (sys.float_info) of such, to a
 * small depth.  Their instances have no __dict__, so no attribute of
 * theirs can be set either. */
static int is_immutable(PyObject *v, int depth)
{
	PyTypeObject *tp = Py_TYPE(v);
	Py_ssize_t i;

	if (v == Py_None || v == Py_Ellipsis || v == Py_NotImplemented || PyBool_Check(v) ||
	    PyLong_CheckExact(v) || PyFloat_CheckExact(v) || PyComplex_CheckExact(v) ||
	    PyUnicode_CheckExact(v) || PyBytes_CheckExact(v) || PyRange_Check(v) ||
	    PyFrozenSet_CheckExact(v))
		return 1;
	/* a tuple subclass with no __dict__: a struct sequence, or a
	 * namedtuple's __slots__ = () */
	if (!PyTuple_Check(v) || depth > 3 || (!PyTuple_CheckExact(v) && tp->tp_dictoffset))
		return 0;
	for (i = 0; i < PyTuple_GET_SIZE(v); i++)
		if (!is_immutable(PyTuple_GET_ITEM(v, i), depth + 1))
			return 0;
	return 1;
}

/* Whether a read that finds v is a quiet one (site_is_point()). */
static int quiet_value(PyObject *v)
{
	return v && (is_code(v) || is_immutable(v, 0));
}

/* What super(T, obj).name finds, borrowed: the first class after T in
 * obj's MRO whose own dict has name, and that class in *owner; NULL
 * when none has it (the super object's own attributes, all read-only). */
static PyObject *super_lookup(PyObject *sup, PyObject *name, PyObject **owner)
{
	PyObject *this = PyObject_GetAttrString(sup, "__thisclass__");
	PyObject *self = PyObject_GetAttrString(sup, "__self_class__");
	PyObject *mro, *found = NULL;
	Py_ssize_t i, n;

	*owner = NULL;
	if (!this || !self || !PyType_Check(self) || !(mro = ((PyTypeObject *)self)->tp_mro)) {
		PyErr_Clear();
		goto done;
	}
	n = PyTuple_GET_SIZE(mro);
	for (i = 0; i < n && PyTuple_GET_ITEM(mro, i) != this; i++)
		;
	for (i++; i < n && !found; i++) {
		/* a static builtin type's dict is not in tp_dict; the type
		 * keeps the value alive once its dict is let go */
		PyObject *d = PyType_GetDict((PyTypeObject *)PyTuple_GET_ITEM(mro, i));
		if (d && (found = PyDict_GetItemWithError(d, name)))
			*owner = PyTuple_GET_ITEM(mro, i);
		else if (PyErr_Occurred())
			PyErr_Clear();
		Py_XDECREF(d);
	}
done:
	Py_XDECREF(this);
	Py_XDECREF(self);
	return found;
}

/* Where the state an attribute access touches lives: the module's dict
 * for a module (so that mod.X and a `global X` in mod are one global),
 * the class that has it for a super() lookup (so that it is Base.X),
 * else the object.  NULL when the attribute is code, not state, or a
 * thread's own, or its object immutable.  *quiet tells a read of a
 * module's attribute that holds a constant (site_is_point()). */
static PyObject *attr_target(module_state *st, PyObject *obj, PyObject *name, int *quiet)
{
	PyObject *v;

	*quiet = 0;
	if (thread_local_attr(st, obj, name) || is_immutable(obj, 0))
		return NULL;

	if (PyModule_Check(obj)) {
		PyObject *d = PyModule_GetDict(obj);
		v = PyDict_GetItemWithError(d, name);
		if (!v && PyErr_Occurred())
			PyErr_Clear();
		*quiet = quiet_value(v);
		return v && is_code(v) ? NULL : d;
	}
	if (PyObject_TypeCheck(obj, &PySuper_Type)) {
		PyObject *owner;
		v = super_lookup(obj, name, &owner);
		return !v || is_code(v) ? NULL : owner;
	}
	if (PyType_Check(obj))
		v = _PyType_Lookup((PyTypeObject *)obj, name);
	else
		v = _PyType_Lookup(Py_TYPE(obj), name);
	return v && is_code(v) ? NULL : obj;
}

/* ---- containers -------------------------------------------------------- */

static int is_container(module_state *st, PyObject *obj)
{
	return PyList_Check(obj) || PyDict_Check(obj) || PySet_Check(obj) ||
	       PyByteArray_Check(obj) ||
	       (st->deque_type && PyObject_TypeCheck(obj, st->deque_type));
}

static int first_visited(PyObject *o, void *arg)
{
	*(PyObject **)arg = o;
	return 1;
}

/* The mutable container whose content obj is or shows, or NULL: a dict's
 * view shows its dict, and the iterators of the built-in containers read
 * theirs (none once exhausted).  Neither says which container it shows
 * (that is internal to CPython), but each visits it first when the
 * garbage collector traverses it: the answer holds no reference and
 * stays right however the view or iterator was made. */
static PyObject *container_of(module_state *st, PyObject *obj)
{
	PyTypeObject *tp = Py_TYPE(obj);
	PyObject *inner = NULL;
	size_t i;

	if (is_container(st, obj))
		return obj;
	for (i = 0; i < st->n_showing_types; i++)
		if (tp == st->showing_types[i])
			break;
	if (i == st->n_showing_types || !tp->tp_traverse)
		return NULL;
	tp->tp_traverse(obj, first_visited, &inner);
	return inner && is_container(st, inner) ? inner : NULL;
}

int plain_init_types(module_state *st)
{
	/* the types whose objects show a container: made from empty ones */
	static const char *const made[] = {
		"iter([])", "reversed([])", "iter(set())", "iter({})", "reversed({})",
		"iter({}.values())", "iter({}.items())", "reversed({}.values())",
		"reversed({}.items())", "iter(bytearray())", "iter(deque())",
		"reversed(deque())", "{}.keys()", "{}.values()", "{}.items()",
	};
	PyObject *globals, *coll, *v;
	size_t i;

	if (!(globals = PyDict_New()))
		return -1;
	if (PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins()) < 0 ||
	    !(coll = PyImport_ImportModule("collections"))) {
		Py_DECREF(globals);
		return -1;
	}
	v = PyObject_GetAttrString(coll, "deque");
	Py_DECREF(coll);
	if (!v || PyDict_SetItemString(globals, "deque", v) < 0) {
		Py_XDECREF(v);
		Py_DECREF(globals);
		return -1;
	}
	Py_DECREF(v);
	st->n_showing_types = 0;
	for (i = 0; i < sizeof(made) / sizeof(*made); i++) {
		PyTypeObject *tp;
		v = PyRun_String(made[i], Py_eval_input, globals, globals);
		if (!v) {
			Py_DECREF(globals);
			return -1;
		}
		tp = Py_TYPE(v);
		Py_DECREF(v);
		if (st->n_showing_types < PLOOM_SHOWING_TYPES)
			st->showing_types[st->n_showing_types++] = tp;
	}
	Py_DECREF(globals);
	return 0;
}

/* Methods of the containers that only read them; any other method (the
 * ones not listed, and any a subclass adds) counts as a write. */
static const char *const reading_methods[] = {
	"copy", "count", "index", "get", "keys", "values", "items", "difference",
	"intersection", "isdisjoint", "issubset", "issuperset", "symmetric_difference",
	"union", "__contains__", "__len__", "__getitem__", "__iter__", "__reversed__",
	"__eq__", "__ne__", "__repr__", "find", "rfind", "rindex", "startswith",
	"endswith", "decode", "hex", "__copy__", "fromkeys", "__sizeof__",
	NULL,
};

static enum ploom_op method_op(PyObject *name)
{
	const char *u = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
	size_t i;

	if (!u) {
		PyErr_Clear();
		return PLOOM_OP_WRITE;
	}
	for (i = 0; reading_methods[i]; i++)
		if (!strcmp(u, reading_methods[i]))
			return PLOOM_OP_READ;
	return PLOOM_OP_WRITE;
}

/* ---- the hooks --------------------------------------------------------- */

#define STATE(mod) ((module_state *)PyModule_GetState(mod))

static int want_args(const char *fn, Py_ssize_t nargs, Py_ssize_t n)
{
	if (nargs == n)
		return 0;
	PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)", fn, n, nargs);
	return -1;
}

static long site_of(PyObject *o)
{
	long site = PyLong_Check(o) ? PyLong_AsLong(o) : -1;

	if (site == -1 && PyErr_Occurred())
		PyErr_Clear();
	return site;
}

static PyObject *i_sites(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
	module_state *st = STATE(mod);
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
	module_state *st = STATE(mod);
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

static PyObject *i_new(PyObject *mod, PyObject *obj)
{
	module_state *st = STATE(mod);

	if (hook_task(st))
		mark_fresh(&st->sched, obj);
	return Py_NewRef(obj);
}

static PyObject *i_getattr(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
	module_state *st = STATE(mod);
	struct task *t;
	int pt = 0, quiet;
	long step;
	PyObject *target, *v;

	if (want_args("_i_getattr", nargs, 3) < 0)
		return NULL;
	if (!(t = hook_task(st)) || !(target = attr_target(st, args[0], args[1], &quiet)))
		return PyObject_GetAttr(args[0], args[1]);
	if ((pt = access_plain(st, t, PLOOM_OP_READ, target, args[1], site_of(args[2]), quiet)) < 0)
		return NULL;
	step = st->sched.step;
	v = PyObject_GetAttr(args[0], args[1]);
	if (pt)
		read_value(st, t, step, v);
	return v;
}

static PyObject *i_setattr(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
	module_state *st = STATE(mod);
	struct task *t;
	int pt = 0;
	PyObject *target;

	if (want_args("_i_setattr", nargs, 4) < 0)
		return NULL;
	if ((t = hook_task(st)) && !thread_local_attr(st, args[0], args[1])) {
		target = PyModule_Check(args[0]) ? PyModule_GetDict(args[0]) : args[0];
		if ((pt = access_plain(st, t, PLOOM_OP_WRITE, target, args[1],
				       site_of(args[3]), 0)) < 0)
			return NULL;
		if (pt)
			plain_value(st, t, args[2]);
	}
	if (PyObject_SetAttr(args[0], args[1], args[2]) < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *i_delattr(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
	module_state *st = STATE(mod);
	struct task *t;
	PyObject *target;

	if (want_args("_i_delattr", nargs, 3) < 0)
		return NULL;
	if ((t = hook_task(st)) && !thread_local_attr(st, args[0], args[1])) {
		target = PyModule_Check(args[0]) ? PyModule_GetDict(args[0]) : args[0];
		if (access_plain(st, t, PLOOM_OP_WRITE, target, args[1], site_of(args[2]), 0) < 0)
			return NULL;
	}
	if (PyObject_DelAttr(args[0], args[1]) < 0)
		return NULL;
	Py_RETURN_NONE;
}

/* A subscript read that may write: a dict subclass's __missing__ (a
 * defaultdict's) inserts the key it did not find. */
static enum ploom_op getitem_op(PyObject *c, PyObject *key)
{
	int has;

	if (!PyDict_Check(c) || PyDict_CheckExact(c))
		return PLOOM_OP_READ;
	has = PyDict_Contains(c, key);
	if (has < 0)
		PyErr_Clear();
	return has == 1 ? PLOOM_OP_READ : PLOOM_OP_WRITE;
}

static PyObject *i_getitem(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
	module_state *st = STATE(mod);
	struct task *t;
	int pt = 0;
	long step;
	PyObject *c, *v;

	if (want_args("_i_getitem", nargs, 3) < 0)
		return NULL;
	if (!(t = hook_task(st)) || !(c = container_of(st, args[0])) || c != args[0])
		return PyObject_GetItem(args[0], args[1]);
	if ((pt = access_plain(st, t, getitem_op(c, args[1]), c, NULL, site_of(args[2]), 0)) < 0)
		return NULL;
	step = st->sched.step;
	v = PyObject_GetItem(args[0], args[1]);
	if (pt)
		read_value(st, t, step, v);
	return v;
}

static PyObject *i_setitem(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
	module_state *st = STATE(mod);
	struct task *t;
	int pt = 0;
	PyObject *c;

	if (want_args("_i_setitem", nargs, 4) < 0)
		return NULL;
	if ((t = hook_task(st)) && (c = container_of(st, args[0])) && c == args[0]) {
		if ((pt = access_plain(st, t, PLOOM_OP_WRITE, c, NULL, site_of(args[3]), 0)) < 0)
			return NULL;
		if (pt)
			plain_value(st, t, args[2]);
	}
	if (PyObject_SetItem(args[0], args[1], args[2]) < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *i_delitem(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
	module_state *st = STATE(mod);
	struct task *t;
	PyObject *c;

	if (want_args("_i_delitem", nargs, 3) < 0)
		return NULL;
	if ((t = hook_task(st)) && (c = container_of(st, args[0])) && c == args[0] &&
	    access_plain(st, t, PLOOM_OP_WRITE, c, NULL, site_of(args[2]), 0) < 0)
		return NULL;
	if (PyObject_DelItem(args[0], args[1]) < 0)
		return NULL;
	Py_RETURN_NONE;
}

/* obj.name(*args, **kwargs): the access is the call, after its arguments. */
static PyObject *i_callattr(PyObject *mod, PyObject *const *args, size_t nargsf,
			    PyObject *kwnames)
{
	module_state *st = STATE(mod);
	Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
	struct task *t;
	PyObject *obj, *name, *c, *meth, *r;
	int quiet;

	if (nargs < 3) {
		PyErr_SetString(PyExc_TypeError, "_i_callattr() takes at least 3 arguments");
		return NULL;
	}
	obj = args[0];
	name = args[1];
	if ((t = hook_task(st))) {
		if ((c = container_of(st, obj)) && c == obj) {
			if (access_plain(st, t, method_op(name), c, NULL, site_of(args[2]), 0) < 0)
				return NULL;
		} else if ((c = attr_target(st, obj, name, &quiet))) {
			if (access_plain(st, t, PLOOM_OP_READ, c, name, site_of(args[2]), quiet) < 0)
				return NULL;
		}
	}
	meth = PyObject_GetAttr(obj, name);
	if (!meth)
		return NULL;
	r = PyObject_Vectorcall(meth, args + 3, (size_t)(nargs - 3), kwnames);
	Py_DECREF(meth);
	return r;
}

static PyObject *i_read(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
	module_state *st = STATE(mod);
	struct task *t;
	PyObject *c;

	if (want_args("_i_read", nargs, 2) < 0)
		return NULL;
	if ((t = hook_task(st)) && (c = container_of(st, args[0])) &&
	    access_plain(st, t, PLOOM_OP_READ, c, NULL, site_of(args[1]), 0) < 0)
		return NULL;
	return Py_NewRef(args[0]);
}

/* ---- iterating a container: each next() is a read of it ---------------- */

typedef struct {
	PyObject_HEAD
	PyObject *it;           /* the container's own iterator */
	PyObject *container;
	PyObject *mod;          /* ploom._ploom, for its state */
	long site;
} PlainIterObject;

static void PlainIter_dealloc(PyObject *op)
{
	PlainIterObject *self = (PlainIterObject *)op;
	PyTypeObject *tp = Py_TYPE(op);

	PyObject_GC_UnTrack(op);
	Py_XDECREF(self->it);
	Py_XDECREF(self->container);
	Py_XDECREF(self->mod);
	tp->tp_free(op);
	Py_DECREF(tp);
}

static int PlainIter_traverse(PyObject *op, visitproc visit, void *arg)
{
	PlainIterObject *self = (PlainIterObject *)op;

	Py_VISIT(Py_TYPE(op));
	Py_VISIT(self->it);
	Py_VISIT(self->container);
	Py_VISIT(self->mod);
	return 0;
}

static PyObject *PlainIter_next(PyObject *op)
{
	PlainIterObject *self = (PlainIterObject *)op;
	module_state *st = STATE(self->mod);
	struct task *t = hook_task(st);

	if (t && access_plain(st, t, PLOOM_OP_READ, self->container, NULL, self->site, 0) < 0)
		return NULL;
	return PyIter_Next(self->it);
}

/* What the container's own iterator does for copy, pickle and
 * operator.length_hint: a copy or an unpickled one is that iterator (it
 * reads without points, as any iterator made outside instrumented code). */
static PyObject *PlainIter_forward(PyObject *op, const char *name, PyObject *arg)
{
	PlainIterObject *self = (PlainIterObject *)op;
	PyObject *meth = PyObject_GetAttrString(self->it, name), *r;

	if (!meth)
		return NULL;
	r = arg ? PyObject_CallOneArg(meth, arg) : PyObject_CallNoArgs(meth);
	Py_DECREF(meth);
	return r;
}

static PyObject *PlainIter_length_hint(PyObject *op, PyObject *unused)
{
	PlainIterObject *self = (PlainIterObject *)op;
	Py_ssize_t n;

	(void)unused;
	if ((n = PyObject_LengthHint(self->it, -1)) < 0) {
		if (PyErr_Occurred())
			return NULL;
		Py_RETURN_NOTIMPLEMENTED;
	}
	return PyLong_FromSsize_t(n);
}

static PyObject *PlainIter_reduce(PyObject *op, PyObject *unused)
{
	(void)unused;
	return PlainIter_forward(op, "__reduce__", NULL);
}

static PyObject *PlainIter_setstate(PyObject *op, PyObject *state)
{
	return PlainIter_forward(op, "__setstate__", state);
}

static PyMethodDef PlainIter_methods[] = {
	{"__length_hint__", PlainIter_length_hint, METH_NOARGS, NULL},
	{"__reduce__", PlainIter_reduce, METH_NOARGS, NULL},
	{"__setstate__", PlainIter_setstate, METH_O, NULL},
	{NULL, NULL, 0, NULL},
};

static PyType_Slot PlainIter_slots[] = {
	{Py_tp_dealloc, PlainIter_dealloc},
	{Py_tp_traverse, PlainIter_traverse},
	{Py_tp_methods, PlainIter_methods},
	{Py_tp_iter, PyObject_SelfIter},
	{Py_tp_iternext, PlainIter_next},
	{Py_tp_doc, (void *)"An iterator over a container whose next() is a read of it: what "
			    "instrumented code iterates in for, comprehensions, enumerate, zip, map and "
			    "filter.  Internal."},
	{0, NULL},
};

PyType_Spec PlainIter_spec = {
	.name = "ploom._ploom.PlainIter",
	.basicsize = sizeof(PlainIterObject),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE |
		 Py_TPFLAGS_DISALLOW_INSTANTIATION,
	.slots = PlainIter_slots,
};

static PyObject *i_iter(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
	module_state *st = STATE(mod);
	PlainIterObject *pi;
	PyObject *c, *it;

	if (want_args("_i_iter", nargs, 2) < 0)
		return NULL;
	/* inside a schedule only: an iterator made outside may be used in one,
	 * but then its container was made outside too, before any task */
	if (!hook_task(st) || !(c = container_of(st, args[0])))
		return Py_NewRef(args[0]);
	it = PyObject_GetIter(args[0]);
	if (!it)
		return NULL;
	pi = PyObject_GC_New(PlainIterObject, st->plain_iter_type);
	if (!pi) {
		Py_DECREF(it);
		return NULL;
	}
	pi->it = it;
	pi->container = Py_NewRef(c);
	pi->mod = Py_NewRef(mod);
	pi->site = site_of(args[1]);
	PyObject_GC_Track((PyObject *)pi);
	return (PyObject *)pi;
}

static PyObject *i_inplace(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
	module_state *st = STATE(mod);
	struct task *t;
	PyObject *c;

	if (want_args("_i_inplace", nargs, 4) < 0)
		return NULL;
	if ((t = hook_task(st)) && (c = container_of(st, args[1])) && c == args[1] &&
	    access_plain(st, t, PLOOM_OP_WRITE, c, NULL, site_of(args[3]), 0) < 0)
		return NULL;
	return PyObject_CallFunctionObjArgs(args[0], args[1], args[2], NULL);
}

static PyObject *name_error(PyObject *name)
{
	PyErr_Format(PyExc_NameError, "name '%U' is not defined", name);
	return NULL;
}

static PyObject *i_getglobal(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
	module_state *st = STATE(mod);
	struct task *t;
	int pt = 0;
	PyObject *v;

	if (want_args("_i_getglobal", nargs, 3) < 0)
		return NULL;
	if (!PyDict_Check(args[0])) {
		PyErr_SetString(PyExc_TypeError, "_i_getglobal(): globals must be a dict");
		return NULL;
	}
	if ((t = hook_task(st))) {
		/* the value a quiet read would find (site_is_point()), read
		 * again after the point if there is one */
		int quiet;
		PyObject *seen = PyDict_GetItemWithError(args[0], args[1]);
		if (!seen && PyErr_Occurred())
			return NULL;
		quiet = quiet_value(seen);
		if ((pt = access_plain(st, t, PLOOM_OP_READ, args[0], args[1], site_of(args[2]),
				       quiet)) < 0)
			return NULL;
	}
	if (PyDict_GetItemRef(args[0], args[1], &v) < 0)
		return NULL;
	if (!v) {
		PyObject *b = PyEval_GetBuiltins();
		if (b && PyDict_GetItemRef(b, args[1], &v) < 0)
			return NULL;
		if (!v)
			return name_error(args[1]);
	}
	if (pt > 0)
		plain_value(st, t, v);
	return v;
}

static PyObject *i_setglobal(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
	module_state *st = STATE(mod);
	struct task *t;
	int pt = 0;

	if (want_args("_i_setglobal", nargs, 4) < 0)
		return NULL;
	if (!PyDict_Check(args[0])) {
		PyErr_SetString(PyExc_TypeError, "_i_setglobal(): globals must be a dict");
		return NULL;
	}
	if ((t = hook_task(st))) {
		if ((pt = access_plain(st, t, PLOOM_OP_WRITE, args[0], args[1],
				       site_of(args[3]), 0)) < 0)
			return NULL;
		if (pt)
			plain_value(st, t, args[2]);
	}
	if (PyDict_SetItem(args[0], args[1], args[2]) < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *i_delglobal(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
	module_state *st = STATE(mod);
	struct task *t;
	int r;

	if (want_args("_i_delglobal", nargs, 3) < 0)
		return NULL;
	if (!PyDict_Check(args[0])) {
		PyErr_SetString(PyExc_TypeError, "_i_delglobal(): globals must be a dict");
		return NULL;
	}
	if ((t = hook_task(st)) &&
	    access_plain(st, t, PLOOM_OP_WRITE, args[0], args[1], site_of(args[2]), 0) < 0)
		return NULL;
	r = PyDict_Pop(args[0], args[1], NULL);
	if (r < 0)
		return NULL;
	if (!r)
		return name_error(args[1]);
	Py_RETURN_NONE;
}

PyMethodDef plain_methods[] = {
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
	{"_i_new", i_new, METH_O,
	 "_i_new(obj, /)\n--\n\nobj, which instrumented code has just made (a display or a "
	 "comprehension): its accesses in this step are no points.  Internal."},
	{"_i_getattr", (PyCFunction)(void (*)(void))i_getattr, METH_FASTCALL,
	 "_i_getattr(obj, name, site, /)\n--\n\ngetattr(obj, name), a read.  Internal."},
	{"_i_setattr", (PyCFunction)(void (*)(void))i_setattr, METH_FASTCALL,
	 "_i_setattr(obj, name, value, site, /)\n--\n\nsetattr(obj, name, value), a write.  "
	 "Internal."},
	{"_i_delattr", (PyCFunction)(void (*)(void))i_delattr, METH_FASTCALL,
	 "_i_delattr(obj, name, site, /)\n--\n\ndelattr(obj, name), a write.  Internal."},
	{"_i_getitem", (PyCFunction)(void (*)(void))i_getitem, METH_FASTCALL,
	 "_i_getitem(obj, key, site, /)\n--\n\nobj[key], a read of a container.  Internal."},
	{"_i_setitem", (PyCFunction)(void (*)(void))i_setitem, METH_FASTCALL,
	 "_i_setitem(obj, key, value, site, /)\n--\n\nobj[key] = value, a write of a "
	 "container.  Internal."},
	{"_i_delitem", (PyCFunction)(void (*)(void))i_delitem, METH_FASTCALL,
	 "_i_delitem(obj, key, site, /)\n--\n\ndel obj[key], a write of a container.  "
	 "Internal."},
	{"_i_callattr", (PyCFunction)(void (*)(void))i_callattr, METH_FASTCALL | METH_KEYWORDS,
	 "_i_callattr(obj, name, site, /, *args, **kwargs)\n--\n\nobj.name(*args, **kwargs): "
	 "a read or write of a container by its method, else the read of the attribute "
	 "called.  Internal."},
	{"_i_read", (PyCFunction)(void (*)(void))i_read, METH_FASTCALL,
	 "_i_read(obj, site, /)\n--\n\nobj, whose content is read here.  Internal."},
	{"_i_iter", (PyCFunction)(void (*)(void))i_iter, METH_FASTCALL,
	 "_i_iter(obj, site, /)\n--\n\nAn iterable over obj whose each next() reads it.  "
	 "Internal."},
	{"_i_inplace", (PyCFunction)(void (*)(void))i_inplace, METH_FASTCALL,
	 "_i_inplace(op, left, right, site, /)\n--\n\nop(left, right), an in-place operator: "
	 "a write of a container on the left.  Internal."},
	{"_i_getglobal", (PyCFunction)(void (*)(void))i_getglobal, METH_FASTCALL,
	 "_i_getglobal(globals, name, site, /)\n--\n\nA module global's value, a read.  "
	 "Internal."},
	{"_i_setglobal", (PyCFunction)(void (*)(void))i_setglobal, METH_FASTCALL,
	 "_i_setglobal(globals, name, value, site, /)\n--\n\nSets a module global, a write.  "
	 "Internal."},
	{"_i_delglobal", (PyCFunction)(void (*)(void))i_delglobal, METH_FASTCALL,
	 "_i_delglobal(globals, name, site, /)\n--\n\nDeletes a module global, a write.  "
	 "Internal."},
	{NULL, NULL, 0, NULL},
};
