/* plain.c - the plain objects of a schedule.
 *
 * A plain object, plain#N, stands for one attribute of one object, one
 * global of one module, or the whole content of one mutable container,
 * while its target lives, and holds no reference to it (below).  Here:
 * the table that holds a schedule's plain objects, how it learns that a
 * target died, and the marks of the objects made in the current step,
 * whose accesses are no points.  Which accesses are points is sites.c's,
 * the hooks that make them hooks.c's.
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
const char *short_type_name(PyTypeObject *tp)
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
PlainObject *plain_of(module_state *st, PyObject *target, PyObject *attr, long site)
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

void mark_fresh(struct sched *s, PyObject *o)
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

int is_fresh(const struct sched *s, PyObject *o)
{
	size_t j;

	if (!s->fresh_cap)
		return 0;
	j = fresh_slot(s, (uintptr_t)o);
	return s->fresh_addr[j] == (uintptr_t)o && s->fresh_step[j] == s->step;
}
