/* hooks.c - plain Python state as operations.
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
 * no reference to it (plain.c); which accesses are points is sites.c's.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ploom.h"

/* ---- what is state ---------------------------------------------------- */

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

/* Whether a read that finds v is a quiet one (site_is_point() in sites.c). */
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
 * module's attribute that holds a constant (sites.c's site_is_point()). */
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

int want_args(const char *fn, Py_ssize_t nargs, Py_ssize_t n)
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
		/* the value a quiet read would find (sites.c), read
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
