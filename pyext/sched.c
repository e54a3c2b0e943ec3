/* sched.c - the in-process scheduler: a schedule's tasks, the scheduling
 * point each operation stops at, and the pick of the task that runs next
 * (ploom.h says how a schedule runs).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ploom.h"

#define TASK_STACK_SIZE (4 * 1024 * 1024)

/* The task the calling OS thread runs, NULL on threads ploom does not
 * schedule.  Per OS thread by nature, so not module state; plain C state,
 * so a thread-local is fine in every build. */
static _Thread_local struct task *current_task;

struct task *sched_running_task(const struct sched *s)
{
	return s->active ? current_task : NULL;
}

/* ---- ending a schedule ------------------------------------------------ */

/* Called with the GIL (or an attached thread state): writes what is
 * buffered plus the outcome and ends the child. */
static _Noreturn void sched_end(struct sched *s)
{
	flush_python_stdio();
	sched_flush(s);
	_exit(0);
}

static PyObject *exception_type_name(PyObject *exc)
{
	PyObject *tp = (PyObject *)Py_TYPE(exc);
	PyObject *mod = PyObject_GetAttrString(tp, "__module__");
	PyObject *qual = PyObject_GetAttrString(tp, "__qualname__");
	PyObject *r = NULL;

	if (mod && qual && PyUnicode_Check(mod))
		r = PyUnicode_FromFormat("%U.%U", mod, qual);
	else if (qual)
		r = PyObject_Str(qual);
	PyErr_Clear();
	Py_XDECREF(mod);
	Py_XDECREF(qual);
	return r;
}

static PyObject *format_traceback(PyObject *exc)
{
	PyObject *tb_mod = PyImport_ImportModule("traceback");
	PyObject *lines = NULL, *empty = NULL, *r = NULL;

	if (!tb_mod)
		goto done;
	lines = PyObject_CallMethod(tb_mod, "format_exception", "O", exc);
	if (!lines)
		goto done;
	empty = PyUnicode_FromString("");
	if (!empty)
		goto done;
	r = PyUnicode_Join(empty, lines);
done:
	PyErr_Clear();
	Py_XDECREF(tb_mod);
	Py_XDECREF(lines);
	Py_XDECREF(empty);
	return r;
}

/* Plain state that tasks share was touched where no point is made: the
 * schedule ends, and the search starts again with those sites as points. */
_Noreturn void sched_refine(struct sched *s, const char *sites, size_t len)
{
	ploom_enc_outcome_refine(&s->buf, sites, len);
	sched_end(s);
}

/* The task's code raised: that is the schedule's outcome. */
static _Noreturn void sched_fail(struct sched *s, struct task *t)
{
	PyObject *exc;

	plain_step_ends(s, t);
	exc = PyErr_GetRaisedException();
	PyObject *type = NULL, *msg = NULL, *tb = NULL;
	const char *tu, *mu, *bu;
	size_t tl, ml, bl;

	if (exc) {
		type = exception_type_name(exc);
		msg = PyObject_Str(exc);
		if (!msg)
			PyErr_Clear();
		tb = format_traceback(exc);
	}
	tu = utf8_of(type, &tl);
	mu = utf8_of(msg, &ml);
	bu = utf8_of(tb, &bl);
	ploom_enc_outcome_failure(&s->buf, t->id, tu, tl, mu, ml, bu, bl);
	sched_end(s);
}

/* A failure that no code of the scenario may catch: the running task's
 * schedule ends with exc as its outcome, as if the task had raised it. */
_Noreturn void sched_fail_with(struct sched *s, struct task *t, PyObject *exc)
{
	PyErr_SetRaisedException(Py_NewRef(exc));
	sched_fail(s, t);
}

/* ---- picking the next task ------------------------------------------- */

/* Whether the condition of t's acquire_when() holds now.  It is ploom's
 * own code over state that only steps on the lock change, so it runs
 * here, as the baton holder, with no point of its own; one that raises
 * counts as true, so that the task runs and its caller checks again. */
static int when_holds(struct task *t)
{
	PyObject *r;
	int ok;

	if (!t->when)
		return 1;
	r = PyObject_CallNoArgs(t->when);
	ok = r ? PyObject_IsTrue(r) : -1;
	Py_XDECREF(r);
	if (ok < 0) {
		PyErr_Clear();
		return 1;
	}
	return ok;
}

/* Whether t's point is a wait of the idle model that its deadline has
 * not ended yet: it runs when its object lets it, as a blocking one. */
static int waits_for_deadline(const struct task *t)
{
	return t->deadline >= 0 && !t->due;
}

static int task_enabled(struct sched *s, struct task *t)
{
	int blocking = t->mode == PLOOM_ACQUIRE_BLOCKING;

	if (t->state != TASK_AT_POINT)
		return 0;
	if (s->timeouts == PLOOM_TIMEOUTS_IDLE) {
		/* a fair yield runs only when nothing else can (idle_enable()) */
		if (t->yielding)
			return 0;
		if (t->due)
			return 1;
		if (t->op == PLOOM_OP_SLEEP && t->deadline >= 0)
			return 0;
		blocking = blocking || waits_for_deadline(t);
	}
	/* a nonblocking or timed acquire runs on a held lock too: it returns
	 * False there; a timed join runs on a live thread: it returns None */
	if (t->op == PLOOM_OP_ACQUIRE && blocking)
		return ((LockObject *)t->obj)->holder == HOLDER_NONE && when_holds(t);
	if (t->op == PLOOM_OP_JOIN && blocking) {
		ThreadObject *th = (ThreadObject *)t->obj;
		/* joining an unstarted thread or oneself raises when it runs */
		return th->tid < 0 || th->tid == t->id || th->finished;
	}
	return 1;
}

int sched_others_may_run(struct sched *s, const struct task *t)
{
	int i;

	for (i = 0; i < s->ntasks; i++) {
		struct task *o = s->tasks[i];
		if (o != t && (task_enabled(s, o) ||
			       (o->state == TASK_AT_POINT && (o->yielding || waits_for_deadline(o)))))
			return 1;
	}
	return 0;
}

static int holder_of(struct task *t)
{
	if (t->op == PLOOM_OP_ACQUIRE)
		return ((LockObject *)t->obj)->holder;
	if (t->op == PLOOM_OP_JOIN)
		return ((ThreadObject *)t->obj)->tid;
	return -1;
}

/* The `wait` record of t, blocked: what ends its wait is said by the
 * primitive that waits (acquire_when(), a Condition's waiter lock), never
 * guessed from a name. */
static void enc_wait(struct sched *s, struct task *t)
{
	enum ploom_wait_for waits_for = t->op == PLOOM_OP_JOIN ? PLOOM_WAIT_JOIN : PLOOM_WAIT_LOCK;
	PyObject *on = NULL;
	const char *u = NULL;
	Py_ssize_t n = 0;

	if (t->when) {
		waits_for = t->wait_for;
		on = t->wait_on;
	} else if (t->op == PLOOM_OP_ACQUIRE && ((LockObject *)t->obj)->condition) {
		waits_for = PLOOM_WAIT_NOTIFY;
		on = ((LockObject *)t->obj)->condition;
	}
	if (on && PyUnicode_Check(on) && !(u = PyUnicode_AsUTF8AndSize(on, &n)))
		PyErr_Clear();
	ploom_enc_wait(&s->buf, t->id, t->op, op_obj(s, t->obj, t->op), holder_of(t), t->where,
		       waits_for, u, u ? (size_t)n : 0);
}

static _Noreturn void sched_deadlock(struct sched *s)
{
	int i;

	/* before the outcome: wait records follow it with nothing between */
	for (i = 0; i < s->ntasks; i++)
		if (s->tasks[i]->state != TASK_FINISHED)
			announce_obj(s, s->tasks[i]->obj, s->tasks[i]->op);
	ploom_enc_outcome_deadlock(&s->buf);
	for (i = 0; i < s->ntasks; i++) {
		struct task *t = s->tasks[i];
		if (t->state == TASK_FINISHED)
			continue;
		enc_wait(s, t);
	}
	sched_end(s);
}

/* The accesses of the operation task t waits to do (event.h). */
static int pending_accesses(struct sched *s, struct task *t,
			    struct ploom_access out[PLOOM_ACCESS_MAX])
{
	return ploom_pending_accesses(out, t->id, t->op, op_obj(s, t->obj, t->op));
}

/* Wakes every sleeping task whose pending operation conflicts with the
 * step just taken (with its exit, if that step ended its task). */
static void sleep_after_step(struct sched *s)
{
	struct ploom_access last[PLOOM_ACCESS_MAX], mine[PLOOM_ACCESS_MAX];
	int nlast, i;

	nlast = ploom_op_accesses(last, s->last_task, s->last_op, s->last_obj, s->last_mode,
				  s->tasks[s->last_task]->state == TASK_FINISHED);
	for (i = 0; i < s->ntasks; i++) {
		struct task *t = s->tasks[i];
		if (!s->asleep[i] || t->state == TASK_FINISHED)
			continue;
		/* an idle step (lib/hb.h's barrier) wakes every sleeper, as the
		 * reduction takes it */
		if (s->last_idle ||
		    ploom_conflicts(last, nlast, mine, pending_accesses(s, t, mine)))
			s->asleep[i] = 0;
	}
}

/* The sleep set of the `run` command takes effect where its last choice is
 * made (or at the first step). */
static void sleep_start(struct sched *s)
{
	size_t i;

	s->sleep_active = 1;
	for (i = 0; i < s->nsleep; i++)
		if (s->sleep[i] < s->ntasks)
			s->asleep[s->sleep[i]] = 1;
}

/* The default choice among the enabled tasks that are awake: the task
 * of the previous step, else the lowest; -1 when all sleep. */
static int default_choice(struct sched *s, const int *enabled, int n)
{
	int i, first = -1;

	for (i = 0; i < n; i++) {
		if (s->sleep_active && s->asleep[enabled[i]])
			continue;
		if (enabled[i] == s->prev)
			return s->prev;
		if (first < 0)
			first = enabled[i];
	}
	return first;
}

/* The choice past the run command's choices: the default, or its
 * policy's among the enabled tasks that are awake; -1 when all sleep. */
static int policy_choice(struct sched *s, int n)
{
	int i, m = 0;

	if (s->policy.spec.kind == PLOOM_POLICY_DEFAULT)
		return default_choice(s, s->enabled, n);
	for (i = 0; i < n; i++)
		if (!(s->sleep_active && s->asleep[s->enabled[i]]))
			s->cand[m++] = s->enabled[i];
	if (!m)
		return -1;
	return ploom_policy_choose(&s->policy, s->step, s->cand, (size_t)m, s->prev);
}

/* Takes the task c that the explorer's choice (a forced step, or a
 * choice at a branch point) names: a task that is not among the n enabled
 * ends the schedule as a divergence.  The sleep sets start after the last
 * choice. */
static int take_choice(struct sched *s, int n, int c)
{
	int i;

	for (i = 0; i < n && s->enabled[i] != c; i++)
		;
	if (i == n) {
		char msg[128];
		snprintf(msg, sizeof(msg), "choice %d asks for task %d, which is not enabled",
			 s->next_choice - 1, c);
		ploom_enc_outcome_divergence(&s->buf, s->step, msg, strlen(msg));
		sched_end(s);
	}
	if (s->next_choice == s->nchoices && s->nsleep)
		sleep_start(s);
	return c;
}

static _Noreturn void sched_sleep_blocked(struct sched *s)
{
	int i;

	ploom_enc_outcome_sleep_blocked(&s->buf, s->step);
	/* what the blocked tasks wait for: the search still looks for races
	 * with those operations */
	for (i = 0; i < s->ntasks; i++) {
		struct task *t = s->tasks[i];
		if (t->state == TASK_FINISHED || task_enabled(s, t))
			continue;
		/* a sleep or a fair yield waits for no object: its step follows
		 * an idle state, which no race reverses (lib/hb.h's barrier) */
		if (t->op != PLOOM_OP_ACQUIRE && t->op != PLOOM_OP_JOIN)
			continue;
		enc_wait(s, t);
	}
	sched_end(s);
}

/* No task can run, under the idle model: the fair yields run, if any
 * task waits in one that is not stale (those of the tasks that took the
 * fewest); else the clock jumps to the earliest deadline, and every wait
 * due then may run (a choice among them).  Fills s->enabled, ascending,
 * and returns how many; 0 when nothing waits for time (a deadlock, if a
 * task is unfinished).  The step picked then is idle. */
/* Whether t's fair yield is stale: since its previous one, no other task
 * did anything but yield, so yielding again changes nothing until the
 * clock moves (docs/guarantees.rst argues it under the reduction). */
static int yield_stale(const struct sched *s, const struct task *t)
{
	int i;

	if (t->last_yield_step < 0)
		return 0;
	for (i = 0; i < s->ntasks; i++)
		if (s->tasks[i] != t && s->tasks[i]->last_work > t->last_yield_step)
			return 0;
	return 1;
}

/* The tasks in a fair yield, those that took the fewest, into
 * s->enabled; only those whose yield is not stale when fresh is set. */
static int yielders(struct sched *s, int fresh)
{
	long fewest = -1;
	int i, n = 0;

	for (i = 0; i < s->ntasks; i++) {
		struct task *t = s->tasks[i];
		if (t->state == TASK_AT_POINT && t->yielding && !(fresh && yield_stale(s, t)) &&
		    (fewest < 0 || t->nyields < fewest))
			fewest = t->nyields;
	}
	for (i = 0; i < s->ntasks && fewest >= 0; i++) {
		struct task *t = s->tasks[i];
		if (t->state == TASK_AT_POINT && t->yielding && !(fresh && yield_stale(s, t)) &&
		    t->nyields == fewest)
			s->enabled[n++] = i;
	}
	return n;
}

static int idle_enable(struct sched *s)
{
	int64_t earliest = -1;
	int i, n = yielders(s, 1);

	for (i = 0; i < s->ntasks && !n; i++) {
		struct task *t = s->tasks[i];
		if (t->state == TASK_AT_POINT && waits_for_deadline(t) &&
		    (earliest < 0 || t->deadline < earliest))
			earliest = t->deadline;
	}
	/* stale yields only: they spin until the clock moves, which they let
	 * it do; with no deadline they spin on (the step limit tells) */
	if (!n && earliest < 0)
		n = yielders(s, 0);
	if (!n) {
		if (earliest < 0)
			return 0;
		if (earliest > atomic_load_explicit(s->clock, memory_order_relaxed))
			atomic_store_explicit(s->clock, earliest, memory_order_relaxed);
		for (i = 0; i < s->ntasks; i++) {
			struct task *t = s->tasks[i];
			if (t->state == TASK_AT_POINT && waits_for_deadline(t) &&
			    t->deadline == earliest) {
				t->due = 1;
				s->enabled[n++] = i;
			}
		}
	}
	s->idle_step = 1;
	return n;
}

/* The mode a step of t is recorded with: under the idle model a timed
 * wait that its object let run before its deadline waited as a blocking
 * one does, and is recorded so; "timed" is one that its deadline ended
 * (or one without a deadline, timeout 0, which never waits). */
static enum ploom_acquire_mode recorded_mode(const struct sched *s, const struct task *t)
{
	if (s->timeouts == PLOOM_TIMEOUTS_IDLE && t->mode == PLOOM_ACQUIRE_TIMED &&
	    waits_for_deadline(t))
		return PLOOM_ACQUIRE_BLOCKING;
	return t->mode;
}

/* Picks the task that runs the next step and records the step.  Ends the
 * schedule instead when nothing can run or a limit is reached. */
static struct task *sched_pick(struct sched *s)
{
	int n = 0, i, unfinished = 0, c, np = 0;
	struct task *t;

	stray_fork_check(s);
	if (atomic_load(&s->area->stray_fork) && current_task) {
		PyErr_SetString(PyExc_RuntimeError,
				"ploom: a copy of the schedule's process, forked without os.fork() "
				"(a ctypes call to fork(), or subprocess's preexec_fn), ran ploom's "
				"code: its steps would escape the scheduler, so it was ended; start "
				"another program with subprocess, without preexec_fn");
		sched_fail_with(s, current_task, PyErr_GetRaisedException());
	}

	s->idle_step = 0;
	for (i = 0; i < s->ntasks; i++) {
		t = s->tasks[i];
		if (t->state != TASK_FINISHED)
			unfinished++;
		if (task_enabled(s, t))
			s->enabled[n++] = i;
	}
	if (!n && unfinished && s->timeouts == PLOOM_TIMEOUTS_IDLE)
		n = idle_enable(s);
	if (!n) {
		if (!unfinished) {
			ploom_enc_outcome_pass(&s->buf);
			sched_end(s);
		}
		sched_deadlock(s);
	}
	if (s->max_steps && s->step >= s->max_steps) {
		ploom_enc_outcome_step_limit(&s->buf, s->max_steps);
		stacks_dump_self(s);
		sched_end(s);
	}
	if (s->sleep_active && s->step > 0)
		sleep_after_step(s);
	if (s->next_choice < s->nchoices && s->choices[s->next_choice] < 0) {
		/* a forced step (event.h): taken whether or not it is a branch
		 * point */
		c = take_choice(s, n, -1 - s->choices[s->next_choice++]);
	} else if (n == 1 && !(s->sleep_active && s->asleep[s->enabled[0]])) {
		c = s->enabled[0];
	} else if (n > 1 && s->next_choice < s->nchoices) {
		c = take_choice(s, n, s->choices[s->next_choice++]);
	} else {
		c = policy_choice(s, n);
		if (c < 0)
			sched_sleep_blocked(s);
	}
	t = s->tasks[c];
	for (i = 0; i < s->ntasks; i++) {
		struct task *o = s->tasks[i];
		if (i == c || o->state == TASK_FINISHED)
			continue;
		s->pending[np++] = (struct ploom_pending){i, o->op, op_obj(s, o->obj, o->op)};
	}
	s->last_task = c;
	s->last_op = t->op;
	s->last_mode = recorded_mode(s, t);
	s->last_obj = op_obj(s, t->obj, t->op);
	s->last_idle = s->idle_step;
	if (t->yielding) {
		t->nyields++;
		t->last_yield_step = s->step;
	} else {
		t->last_work = s->step;
	}
	announce_obj(s, t->obj, t->op);
	ploom_enc_step(&s->buf, s->step, c, t->op, s->last_obj, s->enabled, (size_t)n,
		       s->last_mode, s->pending, (size_t)np, t->where);
	if (s->idle_step)
		ploom_enc_idle(&s->buf, s->step,
			       (long long)atomic_load_explicit(s->clock, memory_order_relaxed));
	s->step++;
	t->last_step = s->step;
	s->prev = c;
	t->state = TASK_RUNNING;
	sched_flush(s);
	return t;
}

static void sem_wait_nointr(sem_t *sem)
{
	while (sem_wait(sem) < 0 && errno == EINTR)
		;
}

void sched_point(struct sched *s, struct task *t, enum ploom_op op, PyObject *obj,
			enum ploom_acquire_mode mode)
{
	sched_point_when(s, t, op, obj, mode, NULL);
}

/* The point itself; wait_ns as sched_point_timed()'s. */
static int point(struct sched *s, struct task *t, enum ploom_op op, PyObject *obj,
		 enum ploom_acquire_mode mode, PyObject *when, int64_t wait_ns)
{
	struct task *next;
	int64_t now = atomic_load_explicit(s->clock, memory_order_relaxed);

	/* its step ends here, at a point */
	t->nwsites = 0;
	t->op = op;
	t->obj = obj;
	t->mode = mode;
	t->when = when;
	t->where = locate(s);
	t->deadline = -1;
	t->due = 0;
	t->yielding = 0;
	if (s->timeouts == PLOOM_TIMEOUTS_IDLE) {
		/* yield_now() stays a plain point: the reference counts of
		 * REFERENCE.md hold its choices */
		if (op == PLOOM_OP_SLEEP && wait_ns == 0)
			t->yielding = 1;
		else if (wait_ns > 0)
			t->deadline = wait_ns > INT64_MAX - now ? INT64_MAX : now + wait_ns;
	}
	t->state = TASK_AT_POINT;
	next = sched_pick(s);
	if (next != t) {
		Py_BEGIN_ALLOW_THREADS
		sem_post(&next->go);
		sem_wait_nointr(&t->go);
		Py_END_ALLOW_THREADS
	}
	return t->due;
}

void sched_point_when(struct sched *s, struct task *t, enum ploom_op op, PyObject *obj,
		      enum ploom_acquire_mode mode, PyObject *when)
{
	point(s, t, op, obj, mode, when, -1);
}

int sched_point_timed(struct sched *s, struct task *t, enum ploom_op op, PyObject *obj,
		      enum ploom_acquire_mode mode, int64_t wait_ns)
{
	return point(s, t, op, obj, mode, NULL, wait_ns);
}

/* Under the stress model t's timed wait times out after ns: a stall of
 * what it waited for (the task awaited, -1 for any: a Condition's
 * notifier, a one-step wait's) when that could still run, which the
 * `stall` record says.  Enabledness as at t's pick: only t's own code
 * ran since. */
void sched_stall(struct sched *s, struct task *t, int awaited, int64_t ns)
{
	int i;

	if (ns <= 0)
		return;
	for (i = 0; i < s->ntasks; i++) {
		struct task *o = s->tasks[i];

		if (o == t || (awaited >= 0 && i != awaited) || !task_enabled(s, o))
			continue;
		ploom_enc_stall(&s->buf, s->step - 1, awaited, (long long)ns);
		return;
	}
}

void stray_fork_check(struct sched *s)
{
	if (!s->forked_copy)
		return;
	/* the copy shares the record area with the child, and not its
	 * other tasks' threads: a record or a wait of its own would corrupt
	 * the child's stream or hang; the child says why */
	if (s->area)
		atomic_store(&s->area->stray_fork, 1);
	_exit(125);
}

void op_origin_check(struct sched *s, struct task *t)
{
	const char *abbrev;

	stray_fork_check(s);
	if (!s->in_handler)
		return;
	abbrev = sigabbrev_np(s->in_handler);
	PyErr_Format(PyExc_RuntimeError,
		     "ploom: the handler of signal %d (SIG%s) ran a ploom operation: a signal "
		     "handler runs between two steps of the task it interrupts, outside the "
		     "schedule's order; let the handler set a flag that the scenario's code "
		     "acts on",
		     s->in_handler, abbrev ? abbrev : "?");
	sched_fail_with(s, t, PyErr_GetRaisedException());
}

struct task *op_task(module_state *st, int *err)
{
	*err = 0;
	if (!st->sched.active)
		return NULL;
	if (!current_task) {
		PyErr_SetString(PyExc_RuntimeError,
				"ploom operation called from a thread that ploom does not schedule");
		*err = 1;
		return NULL;
	}
	op_origin_check(&st->sched, current_task);
	return current_task;
}

int op_begin(module_state *st, enum ploom_op op, PyObject *obj, struct task **out)
{
	int err;

	*out = op_task(st, &err);
	if (err)
		return -1;
	if (*out)
		sched_point(&st->sched, *out, op, obj, PLOOM_ACQUIRE_BLOCKING);
	return 0;
}

void op_value(module_state *st, struct task *t, PyObject *v)
{
	if (t)
		add_value(&st->sched, v);
}

struct task *task_new(struct sched *s, ThreadObject *th)
{
	struct task *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	if (s->ntasks == s->cap) {
		int cap = s->cap ? 2 * s->cap : 8;
		/* each block that grew replaces the old one, which realloc freed;
		 * cap moves only once all have grown */
		struct task **tasks = realloc(s->tasks, (size_t)cap * sizeof(*tasks));
		if (tasks)
			s->tasks = tasks;
		int *enabled = realloc(s->enabled, (size_t)cap * sizeof(*enabled));
		if (enabled)
			s->enabled = enabled;
		struct ploom_pending *pending = realloc(s->pending, (size_t)cap * sizeof(*pending));
		if (pending)
			s->pending = pending;
		char *asleep = realloc(s->asleep, (size_t)cap);
		if (asleep) {
			s->asleep = asleep;
			memset(asleep + s->cap, 0, (size_t)(cap - s->cap));
		}
		int *cand = realloc(s->cand, (size_t)cap * sizeof(*cand));
		if (cand)
			s->cand = cand;
		if (!tasks || !enabled || !pending || !asleep || !cand) {
			free(t);
			return NULL;
		}
		s->cap = cap;
	}
	t->id = s->ntasks;
	t->deadline = -1;
	t->last_yield_step = t->last_work = -1;
	t->sched = s;
	t->thread = th;
	/* pct gives the task its rank as it is created */
	if (ploom_policy_add_task(&s->policy, t->id, NULL) < 0) {
		free(t);
		return NULL;
	}
	Py_XINCREF(th);
	if (sem_init(&t->go, 0, 0) < 0) {
		Py_XDECREF(th);
		free(t);
		return NULL;
	}
	s->tasks[s->ntasks++] = t;
	return t;
}

/* The task's code has returned: mark it finished and pass the baton on.
 * Returns the task to wake (never NULL: sched_pick ends the schedule). */
static struct task *task_finish(struct sched *s, struct task *t)
{
	plain_step_ends(s, t);
	stacks_note_finished(s, t->id);
	t->state = TASK_FINISHED;
	t->obj = NULL;
	if (t->thread)
		t->thread->finished = 1;
	return sched_pick(s);
}

/* Calls ploom.threading's function name(*args) when the module is
 * imported (by the scenario or a library it uses): the hooks of threading's
 * API that the scheduler runs.  Without the module, a new reference to
 * dflt.  NULL with an exception when the call raised. */
static PyObject *call_threading(const char *name, PyObject *const *args, size_t nargs,
				PyObject *dflt)
{
	PyObject *modname = PyUnicode_FromString("ploom.threading");
	PyObject *mod, *fn, *r;

	if (!modname)
		return NULL;
	mod = PyImport_GetModule(modname);
	Py_DECREF(modname);
	if (!mod)
		return PyErr_Occurred() ? NULL : Py_NewRef(dflt);
	fn = PyObject_GetAttrString(mod, name);
	Py_DECREF(mod);
	if (!fn)
		return NULL;
	r = PyObject_Vectorcall(fn, args, nargs, NULL);
	Py_DECREF(fn);
	return r;
}

/* A started task's run() raised.  When code set ploom.threading.excepthook,
 * the hook handles it, as threading's does, and the task ends normally:
 * returns 1.  Else returns 0 with the exception still set: it is the
 * schedule's failure; so is the hook's own exception, when it raises. */
static int task_excepthook(struct task *t)
{
	PyObject *exc = PyErr_GetRaisedException();
	PyObject *args[2] = {exc, t->thread ? (PyObject *)t->thread : Py_None};
	PyObject *r = call_threading("_task_raised", args, 2, Py_False);
	int handled;

	if (!r) {
		Py_DECREF(exc);
		return 0;
	}
	handled = PyObject_IsTrue(r);
	Py_DECREF(r);
	if (handled > 0) {
		Py_DECREF(exc);
		return 1;
	}
	if (handled < 0)
		Py_DECREF(exc);
	else
		PyErr_SetRaisedException(exc);
	return 0;
}

static _Noreturn void *task_main(void *arg)
{
	struct task *t = arg;
	struct sched *s = t->sched;
	struct task *next;
	PyGILState_STATE g;
	PyObject *r;

	/* the begin point: wait until the scheduler first picks this task */
	sem_wait_nointr(&t->go);
	g = PyGILState_Ensure();
	current_task = t;
	r = PyObject_CallMethod((PyObject *)t->thread, "run", NULL);
	if (!r && !task_excepthook(t))
		sched_fail(s, t);
	Py_XDECREF(r);
	next = task_finish(s, t);
	current_task = NULL;
	/* Park rather than exit: the schedule ends with _exit() anyway, and
	 * tearing down the thread state and the thread costs a good part of a
	 * whole schedule. */
	(void)g;
	(void)PyEval_SaveThread();
	sem_post(&next->go);
	for (;;)
		pause();
}


int task_spawn(struct task *t)
{
	pthread_attr_t attr;
	pthread_t th;
	int rc;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, TASK_STACK_SIZE);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&th, &attr, task_main, t);
	pthread_attr_destroy(&attr);
	if (!rc)
		stacks_note_thread(t->sched, t->id, (unsigned long)th);
	return rc;
}

_Noreturn void sched_run(module_state *st, PyObject *scenario)
{
	struct sched *s = &st->sched;
	struct task *t0, *next;
	PyObject *r;

	if (ploom_policy_init(&s->policy, &s->policy_spec, NULL) < 0)
		_exit(121);
	t0 = task_new(s, NULL);
	if (!t0)
		_exit(121);
	t0->state = TASK_RUNNING;
	stacks_note_thread(s, 0, PyThread_get_thread_ident());
	s->prev = 0;
	s->active = 1;
	if (!s->nchoices && s->nsleep)
		sleep_start(s);
	current_task = t0;
	r = PyObject_CallNoArgs(scenario);
	/* as CPython's main thread ends: threading's atexit callbacks, before
	 * the other tasks are waited for */
	if (r)
		Py_SETREF(r, call_threading("_shutdown", NULL, 0, Py_None));
	if (!r)
		sched_fail(s, t0);
	Py_DECREF(r);
	next = task_finish(s, t0);
	current_task = NULL;
	/* the last task to finish ends the schedule; this thread only waits */
	Py_BEGIN_ALLOW_THREADS
	sem_post(&next->go);
	for (;;)
		pause();
	Py_END_ALLOW_THREADS
}
