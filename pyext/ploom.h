/* ploom.h - the declarations the files of ploom._ploom share.
 *
 * ploom._ploom holds the operations a scenario uses, the scheduler that
 * runs them one task at a time, and the fork server that runs one schedule
 * per child process.  Like CPython's Modules/_io, it is one module built
 * from several files, all internal to it:
 *
 *   module.c    the module: its definition, state, functions and GC slots
 *   sched.c     the in-process scheduler: tasks, scheduling points, picks
 *   protocol.c  the records a schedule's child writes (lib/event.h's
 *               encoders) and where they go: the record area
 *   lock.c      the Lock type
 *   cell.c      the SharedCell type
 *   thread.c    the Thread type
 *   hooks.c     plain state as operations: the hooks instrumented code calls,
 *               what is state and what is code
 *   sites.c     which of those accesses are scheduling points: the access
 *               sites, the watch over the others, the spin watch
 *   plain.c     the plain objects of a schedule, and the objects made in
 *               the current step
 *   args.c      arguments the types take as threading takes them
 *   serve.c     the fork server: serve() and write_error()
 *   stacks.c    where each task was when a schedule ran past its timeout
 *               or reached its step limit
 *
 * How a schedule runs
 * -------------------
 * The worker (python -m ploom._worker) imports the scenario once and calls
 * serve().  For each `run` command serve() forks; the child runs the
 * scenario on its main thread as task 0.  Every ploom.Thread is a real OS
 * thread, but only the task holding the baton runs: before each operation a
 * task stops at a scheduling point, picks the next task (following the
 * requested choices, then the `run` command's policy: lib/policy.h's
 * default, random or pct), records the step (see struct record_area)
 * and, if it picked another task, posts that task's semaphore and sleeps on
 * its own.  So scheduler state is only ever touched by the baton holder, and
 * sem_post/sem_wait order those accesses: no other lock is needed, with or
 * without the GIL.  The schedule ends in whichever task sees the end (all
 * finished, an exception, a deadlock, the step limit): it writes the outcome
 * and _exit()s the child, so no interpreter teardown runs after a schedule.
 *
 * Outside a check (no schedule runs in the process) the operations act at
 * once, and several OS threads may call them together on a free-threaded
 * build: per-object state is guarded by critical sections there, and the
 * object counters are atomic.
 *
 * lib/event.h documents the records written here; it is the one header of
 * lib/ the extension includes (with the err.h and policy.h it includes),
 * besides exit.h, whose codes module.c exports: the extension encodes
 * records and never decodes them.
 */
#ifndef PLOOM_PYEXT_H
#define PLOOM_PYEXT_H

#include <semaphore.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/event.h"

/* Everything declared here is internal to the extension: hidden, so that
 * only PyInit__ploom (which PyMODINIT_FUNC exports) is in the module's
 * dynamic symbol table, as when the module was one file of statics. */
#pragma GCC visibility push(hidden)

/* CPython's keyword lists are char *, our literals const under -Wwrite-strings */
#define KW(s) ((char *)(s))

/* Lock.holder when nobody holds it, and when code outside a check holds it. */
#define HOLDER_NONE (-1)
#define HOLDER_OUTSIDE (-2)

typedef struct {
	PyObject_HEAD
	long oid;
	/* a task id, or HOLDER_*; the operations read and set it under the
	 * object's critical section, the scheduler as the baton holder */
	int holder;
	PyObject *name;   /* str given, NULL for none (the default "lock#N") */
	int announced;    /* its `name` record is sent in this schedule */
	/* a Condition's waiter lock (held_lock(condition=)): that
	 * Condition's name (str), or Py_None; NULL for any other lock */
	PyObject *condition;
} LockObject;

typedef struct {
	PyObject_HEAD
	long oid;
	PyObject *value;
	PyObject *name;   /* str given, NULL for none (the default "cell#N") */
	int announced;    /* its `name` record is sent in this schedule */
} CellObject;

typedef struct {
	PyObject_HEAD
	PyObject *target;
	PyObject *args;
	PyObject *kwargs;
	PyObject *name; /* str given or set, NULL for the default (Thread_get_name) */
	int daemon;   /* kept for threading's API: ploom waits for every task */
	int tid;      /* task id once started, else -1 */
	int finished; /* its task has finished */
} ThreadObject;

struct plain_table;

/* What a plain access touches in one schedule (plain.c): an attribute of
 * an object, a global of a module (target its dict), or the content of a
 * mutable container (attr NULL).  It holds no reference to its target
 * (plain.c says how it learns that the target died). */
typedef struct {
	PyObject_HEAD
	long oid;         /* plain#N: numbered in the order a schedule first touches them */
	uintptr_t addr;   /* the target's address, its identity while it lives */
	PyObject *keep;   /* strong, a module's namespace only; else NULL */
	PyObject *wr;     /* a weak reference to the target calling this back, or NULL */
	struct plain_table *table; /* the table that holds it */
	PyObject *attr;   /* strong; NULL for a container */
	Py_hash_t hash;
	PyObject *name;   /* its label (Pool.num_connections), NULL for none */
	int announced;    /* its `name` record is sent in this schedule */
	/* who touched it in this schedule, and where without a point */
	int owner;        /* the first task that did, -1 none yet */
	int shared;       /* another task did too */
	int written;      /* some task wrote it */
	long *sites;      /* the access sites that are no points, each once */
	size_t nsites, capsites;
	/* reads without a point by one task in one step (sites.c's spin
	 * watch): the step, the task, how many; -1 reads once it wrote */
	long spin_step;
	int spin_task;
	long spin_reads;
} PlainObject;

/* The plain objects of a schedule, by (target address, attr): open
 * addressing, never more than half full counting the slots of removed
 * ones (PLAIN_REMOVED).  Only a schedule's child fills it. */
#define PLAIN_REMOVED ((PlainObject *)(uintptr_t)1)
struct plain_table {
	PlainObject **slot;
	size_t cap, used, removed;
};

enum task_state { TASK_AT_POINT, TASK_RUNNING, TASK_FINISHED };

struct sched;

struct task {
	int id;
	enum task_state state;
	enum ploom_op op;         /* pending operation while at a point */
	PyObject *obj;      /* its object, borrowed: the op's caller keeps it alive */
	enum ploom_acquire_mode mode; /* of a pending acquire */
	/* of a pending blocking acquire made by acquire_when(): it waits for
	 * the lock to be free and for this to return true; borrowed, NULL:
	 * the lock alone */
	PyObject *when;
	/* with when: what the wait is for, and the name of what it waits on
	 * (str or None, borrowed as when is), for a deadlock's words */
	enum ploom_wait_for wait_for;
	PyObject *wait_on;
	sem_t go;           /* posted to hand this task the baton */
	ThreadObject *thread; /* strong; for the main task NULL until main_thread_of() */
	struct sched *sched;
	struct ploom_wire_where where; /* where it stopped for op (event.h's WHERE) */
	/* The idle time model (event.h) at its point: the clock reading at
	 * which its sleep or timed wait ends (-1: none); due once the clock
	 * jumped there; yielding at a fair yield (sleep(0), a sleep shorter
	 * than the clock's nanosecond). */
	int64_t deadline;
	int due;
	int yielding;
	/* the fair yields it took: among tasks in one, those that took the
	 * fewest go first, so that none spins while another waits to yield;
	 * a count of its own steps, the same in every equivalent schedule */
	long nyields;
	/* the step of its latest fair yield, and of its latest other step
	 * (-1: none): a fair yield is stale when no other task did anything
	 * but yield since the yielder's previous one (idle_enable()) */
	long last_yield_step;
	long last_work;
	int named;          /* its thread's `name` record is sent */
	long last_step;     /* the index of its latest step + 1; 0: none yet */
	long labelled;      /* last_step when its step got a label; 0: none */
	/* the watched access sites (sites.c) it passed since its last point */
	long *wsites;
	size_t nwsites, capwsites;
};

/* The child's records do not go to the event fd as they happen: every write
 * would wake the utility, which then competes with the schedule for the
 * CPU (that doubled the cost of a schedule).  They go to this area, shared
 * with the worker, which sends them on once the child has ended, however
 * it ended: memory written before a crash or a kill is not lost.
 *
 * The worker is the only writer of the event fd.  A child writing there
 * itself could be killed (by the schedule's timeout) halfway through a
 * record, and the utility would read a cut line.  So when the area is
 * full the child asks the worker to empty it (drain_req, then the drain
 * eventfd) and waits on `drained`; the worker forwards the whole lines and
 * keeps a cut tail until the rest comes.  A child killed at any byte
 * leaves whole records in the area, except the tail of one larger than the
 * area, and the worker drops a tail that never ended. */
#define RECORD_AREA_SIZE (4u << 20)
#define RECORD_AREA_HEAD 128

struct record_area {
	atomic_size_t len;      /* bytes of data in use */
	/* 1 while the child waits for the worker to empty the area: the
	 * child does not touch the area then, so the worker may */
	atomic_int drain_req;
	sem_t drained;          /* posted by the worker once it has emptied it */
	/* 1 once the scenario sent its own process SIGKILL (os.kill,
	 * os.killpg, signal.pthread_kill): a SIGKILL death is then the
	 * scenario's crash, else it came from outside ploom (the OOM killer) */
	atomic_int self_kill;
	/* 1 once a copy of the child forked without os.fork() (ctypes,
	 * subprocess's preexec_fn) reached ploom: the child fails its
	 * schedule at its next step (sched.c's stray_fork_check()) */
	atomic_int stray_fork;
	char data[RECORD_AREA_SIZE - RECORD_AREA_HEAD];
};

/* A code in sched.codes: index >= 0, the INDEX of its `code` record;
 * CODE_PLOOM, code of the ploom package, which a where looks past;
 * CODE_NONE, code whose file cannot be named (no UTF-8 for it, too long). */
#define CODE_PLOOM (-2)
#define CODE_NONE (-1)
struct code_slot {
	PyObject *code;     /* strong, NULL for a free slot */
	long index;
};

struct sched {
	int active;          /* this process is running a schedule */
	/* this process is a copy of a schedule's child, forked without
	 * os.fork() (whose audit event refuses it): set by a pthread_atfork
	 * handler (serve.c); nothing of it may reach the record area */
	int forked_copy;
	/* the signal whose Python handler runs now (ploom._signals), 0 when
	 * none: a handler runs between the steps of the task it interrupts */
	int in_handler;
	struct task **tasks;
	int ntasks;
	int cap;
	int prev;            /* task that ran the previous step */
	long step;           /* steps taken so far */
	long max_steps;      /* 0: unbounded */
	int *choices;
	int nchoices;
	int next_choice;
	int *sleep;          /* the run command's sleep set... */
	size_t nsleep;
	int sleep_active;    /* ...in effect from its last choice on */
	char *asleep;        /* per task, cap entries */
	/* how the child picks past the choices: the run command's policy,
	 * and the policy that a schedule's child starts from it */
	struct ploom_policy_spec policy_spec;
	struct ploom_policy policy;
	int *cand;           /* scratch, cap entries: the tasks the policy picks from */
	int last_task;       /* the previous step, for waking sleepers */
	enum ploom_op last_op;
	enum ploom_acquire_mode last_mode;
	struct ploom_obj last_obj;
	struct ploom_pending *pending; /* scratch, cap entries */
	struct record_area *area; /* where the child's records go, see above */
	struct stacks *stacks; /* the worker's means to dump a child's stacks (stacks.c) */
	int drain_fd;        /* eventfd: the child asks the worker to empty the area */
	struct ploom_buf buf;
	int *enabled;        /* scratch, cap entries */
	/* The code objects a step stopped in, each with the INDEX of its
	 * `code` record or CODE_PLOOM: a schedule's child fills it (the
	 * worker runs no schedule, so each child starts empty) and keeps
	 * every code a reference, so that no address is reused. */
	struct code_slot *codes;
	size_t codes_cap, codes_used;
	long ncodes;         /* `code` records sent */
	int nnamed;          /* objects a `name` record named */
	char *ploom_dir;     /* the ploom package's folder, with a final '/' */
	size_t ploom_dir_len;
	char *cwd;           /* the worker's, for a code's relative file */
	PyTypeObject *plain_type; /* op_obj() tells a plain object from a cell by it */
	PyObject *clock_obj;  /* borrowed, the module: the object of a clock op */
	_Atomic int64_t *clock; /* the module state's clock_ns */
	enum ploom_timeouts timeouts; /* the worker's --timeouts */
	/* under the idle model a clock read is a point too, as under the
	 * stress model: the differential tests' reference (clock.c) */
	int clock_read_points;
	int idle_step;       /* the step being picked runs with nothing else able to */
	int last_idle;       /* the previous step did: it woke every sleeper */
	struct plain_table plain;
	long plain_next;     /* the next plain#N a point names */
	/* objects instrumented code made, by address, with the step they
	 * were made in (plain.c): open addressing, no references held */
	uintptr_t *fresh_addr;
	long *fresh_step;
	size_t fresh_cap, fresh_used;
};

/* The module's state.  The scheduler lives here too: a schedule's child
 * is a fork of the worker, so each child has its own copy of it, and its
 * task threads reach it through their struct task. */
typedef struct {
	PyTypeObject *lock_type;
	PyTypeObject *cell_type;
	PyTypeObject *thread_type;
	PyTypeObject *plain_type;
	PyTypeObject *plain_iter_type;
	PyTypeObject *deque_type;   /* collections.deque, a container hooks.c knows */
	PyTypeObject *local_type;   /* _thread._local (threading.local): per thread, not shared */
	/* the built-in types whose objects show a container (hooks.c):
	 * static types, borrowed */
#define PLOOM_SHOWING_TYPES 16
	PyTypeObject *showing_types[PLOOM_SHOWING_TYPES];
	size_t n_showing_types;
	PyObject *site_text;        /* list: the text of each instrumented access site */
	PyObject *site_key;         /* list: each site's key, "MODULE:K" */
	PyObject *shared_sites;     /* set of the keys of the sites that are points */
	char *site_point;           /* per site: 1 if it is a point */
	int all_points;             /* every site but the quiet ones is a point
				     * (_i_shared(["*", ...])) */
	int loud;                   /* quiet reads are points too, with all_points
				     * (PLOOM_QUIET_READS=0, to measure them) */
	size_t cap_site_point;
	/* object ids; atomic, as outside a check several OS threads may make
	 * Locks and SharedCells at once on a free-threaded build */
	atomic_long next_lock;
	atomic_long next_cell;
	/* the virtual clock (clock.c): nanoseconds since its start; a
	 * schedule's child starts from the worker's */
	_Atomic int64_t clock_ns;
	struct sched sched;
	/* main_thread(): task 0's Thread, made on first use in a schedule's
	 * process (one per schedule, as each runs in a fork of its own) */
	PyObject *main_thread;
} module_state;

/* ---- module.c ---------------------------------------------------------- */

/* The state of the module that defined tp, or a base of tp. */
module_state *state_of_type(PyTypeObject *tp);

/* ---- args.c ------------------------------------------------------------ */

/* str(name) into *out for a name given, NULL for None; -1 with an
 * exception when str() raises.  As threading.Thread takes a thread's name. */
int name_arg(PyObject **out, PyObject *name);

/* The name given, else the object's own ("lock#3", "cell#0"); new reference. */
PyObject *name_or(PyObject *name, const char *kind, long oid);

/* A timeout as threading.Lock.acquire() takes it into *out (seconds);
 * -1 with threading's exception for a bad one (see args.c). */
int timeout_seconds(PyObject *o, double *out);

/* ---- protocol.c: the records of a schedule's child ---------------------- */

/* Moves the records buffered in s->buf to the record area. */
void sched_flush(struct sched *s);

/* The object of a pending operation, as the records name it. */
struct ploom_obj op_obj(struct sched *s, PyObject *obj, enum ploom_op op);

/* Records repr(v) as the value of the step just taken, and flushes. */
void add_value(struct sched *s, PyObject *v);

/* The same with the text of str r as it is. */
void add_value_text(struct sched *s, PyObject *r);

/* Where the calling task stopped: the innermost frame outside ploom. */
struct ploom_wire_where locate(struct sched *s);

/* Where a thread's first step stops: the first line of what it runs. */
struct ploom_wire_where locate_function(struct sched *s, ThreadObject *th);

/* Sends the name of the cell or lock an operation names, once. */
void announce_obj(struct sched *s, PyObject *obj, enum ploom_op op);

/* Sends a thread's name, again when it changes: the last one counts. */
void announce_thread(struct sched *s, struct task *t, PyObject *name);

/* The UTF-8 of a str, "" for NULL or when it has none; valid while o lives. */
const char *utf8_of(PyObject *o, size_t *len);

/* Flushes sys.stdout and sys.stderr, ignoring errors. */
void flush_python_stdio(void);

/* ---- sched.c: the scheduler -------------------------------------------- */

/* The task the calling OS thread runs while s runs a schedule, else NULL
 * (outside a check, or on a thread ploom does not schedule). */
struct task *sched_running_task(const struct sched *s);

/* Whether a task other than t waits at a point that the scheduler could
 * pick now: a task that would run if t stopped. */
int sched_others_may_run(struct sched *s, const struct task *t);

/* The current task stops before `op` on `obj` (an acquire or a join in
 * `mode`, which every other op passes as PLOOM_ACQUIRE_BLOCKING); returns
 * when the scheduler has picked it again, at which point the op is enabled. */
void sched_point(struct sched *s, struct task *t, enum ploom_op op, PyObject *obj,
		 enum ploom_acquire_mode mode);

/* The same, for a sleep or a timed wait of at most wait_ns nanoseconds
 * (-1: no wait of its own): under the idle model a sleep blocks until
 * the clock reaches now + wait_ns, or is a fair yield when wait_ns is 0,
 * and a timed acquire or join with wait_ns > 0 blocks until its object
 * lets it run or that deadline.  Returns 1 when the deadline ended it (the
 * clock stands at the deadline: a timed wait timed out, and nothing is
 * to be added to the clock), else 0. */
int sched_point_timed(struct sched *s, struct task *t, enum ploom_op op, PyObject *obj,
		      enum ploom_acquire_mode mode, int64_t wait_ns);

/* The same, for a blocking acquire that is enabled only while when()
 * (borrowed: the caller keeps it alive) also returns true. */
void sched_point_when(struct sched *s, struct task *t, enum ploom_op op, PyObject *obj,
		      enum ploom_acquire_mode mode, PyObject *when);

/* For operations: the task if a schedule is running on this thread, NULL
 * without error outside a check, NULL with RuntimeError (and *err set) on
 * a thread ploom does not schedule.  An operation from outside the
 * schedule's order (op_origin_check()) never returns. */
struct task *op_task(module_state *st, int *err);

/* For every scheduling point of task t (not NULL): an operation that a
 * Python signal handler runs ends the schedule with RuntimeError naming
 * the signal; one in a copy of the child forked without os.fork() leaves
 * word for the child (stray_fork) and ends the copy at once, writing
 * nothing. */
void op_origin_check(struct sched *s, struct task *t);

/* In a copy of the child forked without os.fork(): notes it for the
 * child and _exit()s; else returns. */
void stray_fork_check(struct sched *s);
void sched_stall(struct sched *s, struct task *t, int awaited, int64_t ns);

/* Stops the calling task at the scheduling point before `op` on `obj`;
 * *out is the task, NULL outside a check.  Returns -1 with RuntimeError
 * on a thread ploom does not schedule. */
int op_begin(module_state *st, enum ploom_op op, PyObject *obj, struct task **out);

/* Records what the operation of task t (NULL: none) read, wrote or returned. */
void op_value(module_state *st, struct task *t, PyObject *v);

/* A new task of s for th (NULL: the main task), at no point yet; NULL
 * when memory runs out. */
struct task *task_new(struct sched *s, ThreadObject *th);

/* Starts the OS thread of task t, which waits for the baton.  Returns 0,
 * or an errno value. */
int task_spawn(struct task *t);

/* Task t's step ends without a point, in its exit or a failure: if the
 * step passed watched access sites, the schedule ends with refine for
 * them (sites.c says why); else returns. */
void plain_step_ends(struct sched *s, struct task *t);

/* Ends the schedule with the outcome refine: sites[0..len) are the keys
 * of sites of shared plain state that made no point, space-separated. */
_Noreturn void sched_refine(struct sched *s, const char *sites, size_t len);
_Noreturn void sched_fail_with(struct sched *s, struct task *t, PyObject *exc);

/* Runs one schedule of scenario in this (forked) process; never returns. */
_Noreturn void sched_run(module_state *st, PyObject *scenario);

/* ---- plain.c, sites.c, hooks.c: plain state ---------------------------- */

/* The plain object of (target, attr) in this schedule, made on first use
 * (site: the access that first touches it, for its label); borrowed (the
 * table keeps it).  NULL with an exception. */
PlainObject *plain_of(module_state *st, PyObject *target, PyObject *attr, long site);

/* Marks o as made in the current step of s; whether o was. */
void mark_fresh(struct sched *s, PyObject *o);
int is_fresh(const struct sched *s, PyObject *o);

/* The last dotted part of a type's name: "Pool", not "mylib.pool.Pool". */
const char *short_type_name(PyTypeObject *tp);

/* The task a hook runs on when it is a point: inside a schedule, on a
 * task, once a second task exists; else NULL (a plain operation). */
struct task *hook_task(module_state *st);

/* Task t is about to do op on (target, attr) at site (quiet: a quiet
 * read): watches the access, and stops t at a point if the site is one.
 * Returns 1 after a point, 0 without one, -1 with an exception; ends the
 * schedule with refine when the access shows a site that must be a point. */
int access_plain(module_state *st, struct task *t, enum ploom_op op, PyObject *target,
		 PyObject *attr, long site, int quiet);

/* Records what a plain access read or wrote (t NULL or v NULL: nothing);
 * read_value() only while the step of the read's point is still current. */
void plain_value(module_state *st, struct task *t, PyObject *v);
void read_value(module_state *st, struct task *t, long step, PyObject *v);

/* 0 when a hook named fn got n arguments, else -1 with TypeError. */
int want_args(const char *fn, Py_ssize_t nargs, Py_ssize_t n);

/* ---- clock.c: the virtual clock --------------------------------------- */

/* The clock's functions that stand in for time's (the worker installs
 * them), added to the module. */
extern PyMethodDef clock_methods[];

/* A wait of task t (NULL: outside a check) timed out after `seconds`:
 * advances the clock by them; the step's access is the timed op's own
 * (event.h), so no point. */
void clock_timed_out(module_state *st, double seconds);

/* seconds (finite, >= 0) as nanoseconds of the clock, at most its most */
int64_t clock_ns_of(double seconds);

/* ---- the types, and the module functions that belong with them ---------- */

extern PyType_Spec Lock_spec;
extern PyType_Spec Cell_spec;
extern PyType_Spec Thread_spec;
extern PyType_Spec Plain_spec;
extern PyType_Spec PlainIter_spec;

/* The hooks of instrumented code (hooks.c), and the functions that
 * register their access sites and say which are points (sites.c), added
 * to the module. */
extern PyMethodDef plain_methods[];
extern PyMethodDef site_methods[];
/* Finds the types of the views and iterators hooks.c sees through. */
int plain_init_types(module_state *st);

/* acquire_when(): a blocking acquire that also waits for a condition. */
PyObject *ploom_acquire_when(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

/* held_lock(): a new Lock that the calling task already holds. */
PyObject *ploom_held_lock(PyObject *module, PyObject *args, PyObject *kw);

/* Task 0's Thread, made on first use in a schedule; new reference. */
PyObject *main_thread_of(module_state *st);

/* ---- stacks.c: the stacks of a schedule cut by its timeout or step limit - */

struct stacks;

/* In the worker, once, before the first fork: readies every child to dump
 * its threads' stacks on request.  Returns 0, or -1 with an exception
 * (stacks_close() then releases what was made). */
int stacks_open(struct sched *s);
void stacks_close(struct sched *s);

/* In the worker, before each fork: the new child has no task yet. */
void stacks_reset(struct sched *s);

/* In a schedule's child: task runs on the OS thread ident
 * (PyThread_get_thread_ident()'s number), or its code has returned. */
void stacks_note_thread(struct sched *s, int task, unsigned long ident);
void stacks_note_finished(struct sched *s, int task);

/* In a schedule's child that reached its step limit, before it ends:
 * dumps its threads' stacks for the worker (stacks_emit()). */
void stacks_dump_self(struct sched *s);

/* In the worker, without the GIL, when child pid ran past its timeout and
 * before it is killed: asks it for its stacks and keeps what it wrote,
 * waiting for it a bounded time.  pidfd is the child's, or -1. */
void stacks_take(struct sched *s, pid_t pid, int pidfd);

/* In the worker, after the child's `exit` record: appends the `stack`
 * and `frame` records of what stacks_take() kept or the child dumped
 * itself (stacks_dump_self()), nothing when there is neither, and readies
 * the next dump. */
void stacks_emit(struct sched *s, struct ploom_buf *out);

/* ---- serve.c ----------------------------------------------------------- */

PyObject *ploom_serve(PyObject *module, PyObject *args);
PyObject *ploom_write_error(PyObject *module, PyObject *args);

#pragma GCC visibility pop

#endif
