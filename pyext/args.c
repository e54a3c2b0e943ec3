/* args.c - arguments that ploom's types take as threading takes them. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>

#include "ploom.h"

int name_arg(PyObject **out, PyObject *name)
{
	*out = NULL;
	if (!name || name == Py_None)
		return 0;
	*out = PyObject_Str(name);
	return *out ? 0 : -1;
}

PyObject *name_or(PyObject *name, const char *kind, long oid)
{
	if (name)
		return Py_NewRef(name);
	return PyUnicode_FromFormat("%s#%ld", kind, oid);
}

/* A timeout as threading.Lock.acquire() takes it: a float, or an int (or
 * what has __index__); *out its value in seconds.  Returns -1 with the
 * exception threading raises for the same value: TypeError for another
 * type, ValueError for NaN, OverflowError for an infinity or an int too
 * large for a float.  A finite timeout of any size is taken (threading
 * refuses one above threading.TIMEOUT_MAX): the virtual clock (clock.c)
 * stops at its largest value rather than overflow. */
int timeout_seconds(PyObject *o, double *out)
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
