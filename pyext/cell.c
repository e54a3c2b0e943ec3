/* cell.c - ploom.SharedCell, a value shared by tasks whose read() and
 * write() are scheduling points.
 *
 * The value is read and replaced under the object's critical section:
 * outside a check several OS threads may use one cell at once on a
 * free-threaded build.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "ploom.h"

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
	self->oid = atomic_fetch_add_explicit(&st->next_cell, 1, memory_order_relaxed);
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

PyType_Spec Cell_spec = {
	.name = "ploom.SharedCell",
	.basicsize = sizeof(CellObject),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
	.slots = Cell_slots,
};
