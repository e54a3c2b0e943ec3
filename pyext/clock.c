/* clock.c - the virtual clock: the functions the worker puts in place of
 * time.time, time.monotonic, time.perf_counter (and their _ns forms) and
 * time.sleep.
 *
 * The clock is a count of nanoseconds (module_state.clock_ns).  Under the
 * idle time model (event.h, the default) it moves only when no task can
 * run: the scheduler (sched.c) jumps it to the earliest deadline of a
 * sleep or a timed wait, which that ends.  Under the stress model (any)
 * time.sleep(s) advances it by s and returns at once, and a timed acquire
 * or join that times out by its timeout.  With one task, or outside a
 * schedule, a sleep advances it at once under both: nothing else could
 * run meanwhile.  The readings are fixed offsets from that
 * count, so every schedule and every replay reads the same values:
 *
 *   time.time()           CLOCK_TIME_START_S + elapsed (2023-11-14 22:13:20 UTC)
 *   time.monotonic()      CLOCK_MONOTONIC_START_S + elapsed
 *   time.perf_counter()   the same as monotonic (as on Linux)
 *
 * Integers make two advances commute exactly (floats would round
 * differently in another order), which is what lets the reduction take
 * two advances as independent (event.h's add).
 *
 * In a schedule, once a second task exists, a sleep is a scheduling point
 * (the operation sleep, which adds to the clock), and so is a reading
 * under the stress model (a read of the object "clock"); under the idle
 * model a reading is none (read_is_point()), and with one task nothing
 * can come between, so neither makes a step, as plain state's hooks
 * (hooks.c, hook_task() in sites.c).
 * Outside a schedule (the worker importing the scenario) the clock stands
 * still and a sleep only advances it: nothing really sleeps.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>

#include "ploom.h"

#define CLOCK_TIME_START_S 1700000000LL
#define CLOCK_MONOTONIC_START_S 1000LL
#define NS_PER_S 1000000000LL
/* the most the clock advances to: time_ns() still fits an int64 */
#define CLOCK_NS_MAX (INT64_MAX - CLOCK_TIME_START_S * NS_PER_S)

/* seconds (finite, >= 0) as nanoseconds, at most CLOCK_NS_MAX */
static int64_t to_ns(double seconds)
{
	double ns = seconds * 1e9;

	if (!(ns > 0))
		return 0;
	if (ns >= (double)CLOCK_NS_MAX)
		return CLOCK_NS_MAX;
	return (int64_t)llround(ns);
}

/* Advances the clock by ns, stopping at CLOCK_NS_MAX; returns the new
 * count.  Atomic: outside a check several OS threads may sleep at once. */
static int64_t clock_advance(module_state *st, int64_t ns)
{
	int64_t old = atomic_load_explicit(&st->clock_ns, memory_order_relaxed), now;

	do {
		now = ns > CLOCK_NS_MAX - old ? CLOCK_NS_MAX : old + ns;
	} while (!atomic_compare_exchange_weak_explicit(&st->clock_ns, &old, now,
							memory_order_relaxed, memory_order_relaxed));
	return now;
}

int64_t clock_ns_of(double seconds)
{
	return to_ns(seconds);
}

void clock_timed_out(module_state *st, double seconds)
{
	clock_advance(st, to_ns(seconds));
}

/* The task whose clock operation is a point: in a schedule, on a task,
 * once a second task exists; else NULL, never an error (a thread ploom
 * does not schedule reads the clock as it stands). */
static struct task *clock_task(module_state *st)
{
	struct task *t = sched_running_task(&st->sched);

	if (!t || st->sched.ntasks < 2)
		return NULL;
	op_origin_check(&st->sched, t);
	return t;
}

enum reading { READ_TIME, READ_MONOTONIC };

/* A reading as a float of seconds or an int of nanoseconds. */
static PyObject *reading_value(int64_t ns, enum reading which, int as_ns)
{
	int64_t base = (which == READ_TIME ? CLOCK_TIME_START_S : CLOCK_MONOTONIC_START_S) * NS_PER_S;

	if (as_ns)
		return PyLong_FromLongLong(base + ns);
	/* as CPython's time.time(): the nanoseconds, as a float, in seconds */
	return PyFloat_FromDouble((double)(base + ns) / 1e9);
}

/* Whether a read of the clock by a task is a point.  Under the idle model
 * the clock moves only at a pick where no task can run (sched.c's
 * idle_enable()), and a task at a read would be one that can: so the
 * clock stands still from the task's previous point to its next, and the
 * read returns what it would at either, in every order of the other
 * tasks' steps.  It is then part of the task's step, as a read of its
 * own state is (docs/guarantees.rst argues that no outcome is lost).
 * Under the stress model another task's sleep or timeout advances the
 * clock while this one can run, so there it is a point, a read of the
 * clock that conflicts with those advances (event.h). */
static int read_is_point(const module_state *st)
{
	return st->sched.timeouts != PLOOM_TIMEOUTS_IDLE || st->sched.clock_read_points;
}

static PyObject *clock_read(PyObject *module, enum reading which, int as_ns)
{
	module_state *st = PyModule_GetState(module);
	struct task *t = clock_task(st);
	PyObject *v;

	if (t && !read_is_point(st))
		t = NULL;

	if (t)
		sched_point(&st->sched, t, PLOOM_OP_READ, st->sched.clock_obj,
			    PLOOM_ACQUIRE_BLOCKING);
	v = reading_value(atomic_load_explicit(&st->clock_ns, memory_order_relaxed), which, as_ns);
	if (v && t)
		add_value(&st->sched, v);
	return v;
}

static PyObject *clock_time(PyObject *m, PyObject *Py_UNUSED(ignored))
{
	return clock_read(m, READ_TIME, 0);
}

static PyObject *clock_time_ns(PyObject *m, PyObject *Py_UNUSED(ignored))
{
	return clock_read(m, READ_TIME, 1);
}

static PyObject *clock_monotonic(PyObject *m, PyObject *Py_UNUSED(ignored))
{
	return clock_read(m, READ_MONOTONIC, 0);
}

static PyObject *clock_monotonic_ns(PyObject *m, PyObject *Py_UNUSED(ignored))
{
	return clock_read(m, READ_MONOTONIC, 1);
}

/* time.sleep(secs): an int or a float, not negative, as time.sleep takes
 * it (timeout_seconds() refuses the same types and NaN); the step's value
 * is time.monotonic() after it. */
static PyObject *clock_sleep(PyObject *module, PyObject *secs)
{
	module_state *st = PyModule_GetState(module);
	struct task *t;
	double seconds;
	int64_t now;

	if (timeout_seconds(secs, &seconds) < 0) {
		if (PyErr_ExceptionMatches(PyExc_OverflowError))
			goto too_large;
		return NULL;
	}
	if (seconds < 0) {
		PyErr_SetString(PyExc_ValueError, "sleep length must be non-negative");
		return NULL;
	}
	/* what time.sleep cannot count in its int64 of nanoseconds */
	if (seconds * 1e9 >= 9.2e18)
		goto too_large;
	t = clock_task(st);
	/* under the idle model the sleep blocks until the clock jumped to
	 * its end (sched.c), so nothing is left to add; a sleep below the
	 * clock's nanosecond is a fair yield there */
	if (t && sched_point_timed(&st->sched, t, PLOOM_OP_SLEEP, st->sched.clock_obj,
				   PLOOM_ACQUIRE_BLOCKING, to_ns(seconds)))
		now = atomic_load_explicit(&st->clock_ns, memory_order_relaxed);
	else if (t && st->sched.timeouts == PLOOM_TIMEOUTS_IDLE)
		now = atomic_load_explicit(&st->clock_ns, memory_order_relaxed);
	else
		now = clock_advance(st, to_ns(seconds));
	if (t) {
		PyObject *v = reading_value(now, READ_MONOTONIC, 0);
		if (!v)
			return NULL;
		add_value(&st->sched, v);
		Py_DECREF(v);
	}
	Py_RETURN_NONE;
too_large:
	/* time.sleep's words */
	PyErr_Clear();
	PyErr_SetString(PyExc_OverflowError, "timestamp out of range for platform time_t");
	return NULL;
}

/* clock_elapsed_ns(): the nanoseconds the clock advanced since its start;
 * for tests and the documentation's examples. */
static PyObject *clock_elapsed_ns(PyObject *module, PyObject *Py_UNUSED(ignored))
{
	module_state *st = PyModule_GetState(module);

	return PyLong_FromLongLong(atomic_load_explicit(&st->clock_ns, memory_order_relaxed));
}

PyMethodDef clock_methods[] = {
	{"clock_time", clock_time, METH_NOARGS,
	 "clock_time()\n--\n\ntime.time() on ploom's virtual clock: 1700000000.0 plus the\n"
	 "seconds it advanced.  A read of the clock: a scheduling point in a schedule\n"
	 "with two tasks or more under the stress time model, none under the idle one."},
	{"clock_time_ns", clock_time_ns, METH_NOARGS,
	 "clock_time_ns()\n--\n\ntime.time_ns() on ploom's virtual clock."},
	{"clock_monotonic", clock_monotonic, METH_NOARGS,
	 "clock_monotonic()\n--\n\ntime.monotonic() and time.perf_counter() on ploom's\n"
	 "virtual clock: 1000.0 plus the seconds it advanced."},
	{"clock_monotonic_ns", clock_monotonic_ns, METH_NOARGS,
	 "clock_monotonic_ns()\n--\n\ntime.monotonic_ns() and time.perf_counter_ns() on\n"
	 "ploom's virtual clock."},
	{"clock_sleep", clock_sleep, METH_O,
	 "clock_sleep(secs, /)\n--\n\ntime.sleep() on ploom's virtual clock; a scheduling point\n"
	 "in a schedule with two tasks or more.  Under the idle time model it blocks the\n"
	 "task until the clock reaches now + secs (a fair yield when secs is below a\n"
	 "nanosecond); under the stress model it advances the clock and returns."},
	{"clock_elapsed_ns", clock_elapsed_ns, METH_NOARGS,
	 "clock_elapsed_ns()\n--\n\nThe nanoseconds ploom's virtual clock advanced since its\n"
	 "start.  Not a scheduling point."},
	{NULL, NULL, 0, NULL},
};
