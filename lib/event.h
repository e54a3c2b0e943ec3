/* event.h - the worker protocol: records that flow between ploom's C
 * utilities and the Python worker process that runs schedules.  This
 * header and event.c are its owner: the operations and their names, the
 * objects and theirs, which operations conflict, the commands, and the
 * encoders the extension writes records with.  The decoder the utilities
 * read them with, which builds a run of the trace model (trace.h), is
 * decode.h's, so that the protocol does not depend on the trace model.
 *
 * Overview
 * --------
 * A utility (ploom-explore, ploom-run-one, ...) starts one worker:
 *
 *     PYTHON -m ploom._worker TARGET
 *
 * with PYTHONHASHSEED set, fd 0 carrying commands to the worker and fd 3
 * carrying records back.  The worker imports the scenario once, then forks
 * one child per schedule.  The child runs the schedule and stores its
 * records, as they happen, in memory it shares with the worker (so a crash
 * or a kill loses nothing already recorded, and the utility is not woken
 * once per step); after reaping the child the worker sends them on fd 3,
 * then the closing records.  When a child's records fill that memory, the
 * worker sends them on while the child waits.  Only the worker writes fd 3,
 * and only whole lines: a child killed in the middle of a record (by its
 * timeout, say) loses that record, never cuts the stream.  Everything is
 * line based: one record per line, fields separated by one space.
 *
 * Field types
 *   int     decimal, may be negative
 *   word    [a-z_-]+, or an object name such as cell#0, lock#2, thread#1, or "-"
 *   list    comma-separated ints, or "-" for the empty list
 *   str     "=" followed by the bytes of the string with '%', ' ', every byte
 *           below 0x21 and 0x7f written as %XX (two upper-case hex digits);
 *           other bytes, UTF-8 included, are written as they are.  "=" alone
 *           is the empty string.  A str field may hold any byte, NUL included.
 *
 * Plain points (utility -> worker, fd 5)
 *   points N KEY1 ... KEYN
 *       Everything fd 5 holds when the worker is started with
 *       --plain-points=- (lib/worker.c writes it into a memory file before
 *       the worker starts, so no write can block): the access sites of
 *       instrumented code that are scheduling points.  The worker reads
 *       it to its end and closes it before it imports anything.  N from
 *       1 to PLOOM_PLAIN_POINTS_MAX; each KEY a site key MODULE:K, at
 *       most PLOOM_POINT_KEY_MAX bytes of [A-Za-z0-9_.:].  A list of any
 *       length goes here, not on the command line, where execve() takes
 *       at most 128 KiB in one argument.
 *
 * Commands (utility -> worker, fd 0)
 *   run MAX_STEPS TIMEOUT_MS N C1 ... CN M S1 ... SM POLICY
 *       Run one schedule.  C1..CN are the task ids to pick at the first N
 *       branch points (steps where more than one task is enabled); a
 *       negative choice -1-T instead takes task T at the next step, branch
 *       point or not (a forced step: the partial-order reduction sends the
 *       steps of a wakeup sequence so, not knowing which of them will be
 *       branch points).  S1..SM is a sleep set: tasks asleep at the step
 *       where choice CN is taken (at the first step when N is 0).  Past the choices the child
 *       keeps a sleep set, starting from S: after each step it wakes every
 *       sleeping task whose pending operation conflicts with that step
 *       (ploom_conflicts()), and at each step it takes the default choice
 *       among the enabled tasks that are awake: the task that ran the
 *       previous step if it is, else the lowest id.  When every enabled
 *       task is asleep it ends the schedule with `outcome sleep-blocked`.
 *       With M = 0 nothing is ever asleep: plain defaults.
 *       POLICY says how the child picks past the choices instead of the
 *       default (policy.h): "default"; "random SEED" (uniformly among the
 *       enabled tasks that are awake); "pct SEED DEPTH K" (PCT with depth
 *       DEPTH, its change points drawn among the branch points 1..K);
 *       "follow L T1 ... TL" (at step I, from 0, task T(I+1) when it is
 *       enabled and awake, else the default: a recorded order of tasks
 *       kept where it still applies).
 *       SEED is the 48-bit start state of the generator (0 to 2^48 - 1),
 *       DEPTH from 1 to 1000, K from 0 to 10000000, L from 0 to 200000
 *       (PLOOM_POLICY_MAX_FOLLOW), each T a task id.
 *       MAX_STEPS bounds the steps of the schedule (0: no bound); TIMEOUT_MS
 *       is the wall-clock limit of the child (0: none).
 *   quit
 *       Exit.  End of file does the same.
 *
 * Records (worker or child -> utility, fd 3)
 *   hello VERSION IMPL PYVERSION GIL HASHSEED MODULE QUALNAME FILE SCENARIO INSTRUMENTED SOURCES ROOT
 *       Once, from the worker after it imported the scenario.
 *       VERSION int (PLOOM_PROTOCOL_VERSION); IMPL str ("cpython");
 *       PYVERSION str ("3.13.0"); GIL int (1 enabled, 0 disabled);
 *       HASHSEED str (the PYTHONHASHSEED it runs with); MODULE, QUALNAME,
 *       FILE str (FILE is the absolute source path, or "=" if unknown).
 *       What it instrumented by then, whatever it was asked:
 *       SCENARIO int (1: the scenario's module, as --instrument-scenario
 *       asks, 0: not); INSTRUMENTED str, the --instrument names under
 *       which it compiled a module, comma-separated ("=" none).
 *       SOURCES str: the absolute source files of the modules it
 *       patched or instrumented by then (the scenario's own file left
 *       out), each a label (FILE's rules) ended by a newline, at most
 *       PLOOM_SOURCES_MAX ("=" none); the traces fingerprint those that
 *       lie in their root, so that a replay sees them edited.
 *       ROOT str: the scenario's project root (python/ploom/_project.py,
 *       the one place that rule lives; on a replay the root it runs in),
 *       an absolute folder that is a label (FILE's rules), or "=" when
 *       unknown; outside git a trace records its paths against it.
 *   error KIND DETAIL
 *       From the worker instead of hello, then the worker exits 2.  KIND
 *       word: "load" when it cannot load the scenario; "source" when it
 *       was started with --expect=FILE and the target is another file
 *       (nothing of it was run).  DETAIL str: a JSON object,
 *       {"message": str, "type": str (optional)}, MESSAGE what went
 *       wrong (for "source" the whole sentence, "the scenario's source
 *       changed: ..."), TYPE the qualified name of the exception that
 *       stopped the load ("ModuleNotFoundError"), absent when none did;
 *       the utility says "TYPE: MESSAGE".  MESSAGE is cut as
 *       PLOOM_MESSAGE_MAX says before it goes into the object, so that
 *       the object is always whole (ploom_enc_error_detail()).  The record
 *       comes before any version is known, so a worker of another
 *       protocol version shows here as a DETAIL that is not that object.
 *   error command MESSAGE
 *       KIND "command", from the worker in place of a run's records
 *       when it cannot take a command (not `run` or `quit`, or a `run`
 *       beyond its limits); MESSAGE str says why.  Nothing was run, and
 *       the worker reads the next command.
 *   code INDEX FILE FUNCTION
 *       Defines source location INDEX for the step and wait records that
 *       follow: FILE str, the source file of a Python function (absolute,
 *       or the name Python gives code without a file, such as
 *       "<string>"); FUNCTION str, the function's name.  INDEX counts 0,
 *       1, 2, ... in the order the records come, afresh in every run.
 *       Sent once per run for each function a step stops in, before the
 *       first record that names it, so that a step carries two numbers
 *       rather than a path.
 *   name OBJECT NAME
 *       The name the scenario gave OBJECT (cell#N, lock#N, or thread#N:
 *       task N's thread), NAME str.  Sent before the first step that
 *       names a cell or lock, when a thread starts, and again when a
 *       thread is renamed (the last one counts); never for an object
 *       without a name of its own (its object name stands for it), nor
 *       for more than PLOOM_NAMES_MAX objects in one run.
 *   step INDEX TASK OP OBJECT ENABLED FLAGS PENDING WHERE
 *       The scheduler picked TASK for step INDEX (0, 1, 2, ...).  OP word:
 *       one of ploom_op_name()'s.  OBJECT word ("-" for begin and
 *       yield_now; "clock" for sleep and for a read of the virtual
 *       clock, pyext/clock.c).  ENABLED list: the enabled tasks at that point,
 *       ascending.  FLAGS word: "-", or for an acquire that may return
 *       False, "nonblocking" (acquire(blocking=False)) or "timed"
 *       (acquire(timeout=T), T >= 0), or for a join that may return
 *       before its thread ends, "timed" (join(timeout=T)); see enum
 *       ploom_acquire_mode.
 *       PENDING: "-", or one TASK:OP:OBJECT
 *       entry, comma-separated and in ascending task order, for every
 *       other unfinished task, enabled or not: the operation it waits to
 *       do.  A task missing from the next step's TASK and PENDING has
 *       finished.
 *       WHERE: "-" when unknown, or CODE:LINE, where in the scenario's
 *       code the task stopped for this operation: the innermost Python
 *       frame outside the ploom package (so ploom.threading's Condition
 *       names the caller's line, not its own), CODE the INDEX of a code
 *       record sent before, LINE its line, from 1.  A begin step's is the
 *       first line of the thread's function.
 *   value INDEX TEXT
 *       repr() of what step INDEX read, wrote or returned (read, write,
 *       nonblocking or timed acquire, locked, is_alive; for a read of the
 *       clock the time it returned, for a sleep time.monotonic() after it).  TEXT str, at most
 *       200 bytes.
 *   idle INDEX NS
 *       Step INDEX ran when no other task could (the idle time model,
 *       --timeouts=idle of the worker): every other unfinished task was
 *       blocked, or waited in a fair yield, and the clock stood at, or
 *       jumped to, NS (int) nanoseconds after the schedule's start: the
 *       step is a sleep or a timed wait that its deadline ended, or a fair
 *       yield.  Every later step happens after every earlier one (hb.h's
 *       barrier).  At most one per step, after its `step` record.
 *   stall INDEX TASK NS
 *       Step INDEX, a timed wait (acquire or join) of the stress time model
 *       (--timeouts=any), timed out after NS (int) nanoseconds, its
 *       timeout, while the task it waited for could still run: TASK, the
 *       lock's holder or the thread joined, enabled at the step; -1 for a
 *       Condition's waiter, which any task may notify, when another task
 *       was enabled there.  What a failure after it owes to a stall of
 *       that task for NS (ploom-show, ploom-explore say so).  At most one
 *       per step, after its `step` record.
 *   label INDEX TEXT
 *       What step INDEX does in the terms of the primitive the scenario
 *       called, when that primitive is made of ploom's operations:
 *       ploom.queue's "put 3", "get -> 3", "end put".  TEXT a label
 *       (below), at most PLOOM_NAME_MAX bytes.  At most one per step; the
 *       step's operation and object stay what a replay and the search
 *       compare.
 *   outcome pass
 *   outcome failure TASK TYPE MESSAGE TRACEBACK
 *       An uncaught exception in TASK; TYPE str ("builtins.AssertionError"),
 *       MESSAGE str (str(exc)), TRACEBACK str (formatted, may be "=").
 *       Each of the three at most PLOOM_MESSAGE_MAX bytes and a marker:
 *       the encoder cuts a longer one (see ploom_enc_outcome_failure()).
 *       TYPE PLOOM_SETUP_ERROR_TYPE is no failure of the code under
 *       test but a setup mistake (a standard-library primitive ran in the
 *       schedule, python/ploom/_guard.py): a search stops at it, saves
 *       no trace and exits PLOOM_EXIT_SETUP (exit.h).
 *   outcome deadlock
 *       No task enabled while one is unfinished.  Followed by one
 *       `wait TASK OP OBJECT HOLDER WHERE FOR ON` per unfinished task,
 *       HOLDER int being the task holding the lock waited for, or the
 *       thread joined, or -1, WHERE as a step's: where the task waits, FOR
 *       word what ends the wait (enum ploom_wait_for: "lock" a release,
 *       "join" the thread's end, "notify" a Condition's notify, "state" a
 *       change of the state a primitive's lock guards, as a queue's item),
 *       and ON str the name of that Condition or primitive ("=" when it has
 *       none, or for lock and join).
 *   outcome step-limit LIMIT
 *       The schedule reached MAX_STEPS steps.
 *   outcome divergence INDEX MESSAGE
 *       The requested choice at step INDEX was not enabled.  MESSAGE str.
 *   outcome sleep-blocked INDEX
 *       Every task enabled at step INDEX was asleep (see `run`): the
 *       schedule stopped there, unfinished, as the search asked.
 *       Followed by a `wait` record (as after a deadlock) for every
 *       unfinished task that was not enabled there.
 *   outcome refine SITES
 *       Plain state that two tasks touch, one writing, was touched at
 *       access sites that are no scheduling points: SITES str, their keys
 *       (MODULE:K), space-separated.  The schedule stopped there; the
 *       search starts again with those sites as points (the worker's
 *       plain points, above).
 *   exit HOW CODE
 *       From the worker once the child is reaped.  HOW word: "code" (CODE is
 *       the exit status), "signal" (CODE is the signal number), "timeout"
 *       (the worker killed the child after TIMEOUT_MS; CODE 0), "killed"
 *       (CODE is SIGKILL, which neither the worker nor the scenario, as
 *       far as Python's audit hooks show, sent: the kernel's OOM killer or
 *       a person; no failure of the scenario, the utility stops).
 *   stack TASK STATE DEPTH
 *       From the worker, optional, only after `exit timeout` or after the
 *       `exit` of a run whose outcome was step-limit: where task TASK was
 *       when the child ran past its timeout, or reached its step limit,
 *       read from the Python stacks the child dumped before it was killed
 *       or ended (see ploom_enc_stacks()).  One per task, in ascending TASK order, at
 *       most PLOOM_STACK_TASKS_MAX.  STATE word: "running" (its thread
 *       was alive; `frame` records follow, innermost first), "finished"
 *       (its code had returned), "unstarted" (its thread had not begun),
 *       "unknown" (the dump did not show it: it was cut short).  DEPTH
 *       int: the frames the dump showed for it, at least the `frame`
 *       records that follow (at most PLOOM_STACK_FRAMES_MAX, the
 *       innermost), 0 but for "running".  A worker that gets no dump in
 *       time sends no `stack` record.
 *   frame FILE LINE FUNCTION
 *       A frame of the task of the `stack` record before, the innermost
 *       first: FILE and FUNCTION str, labels (below); LINE int, from 1, or
 *       0 when unknown.  Frames of the ploom package at the innermost end
 *       are left out, as a step's WHERE looks past them, and the stack
 *       ends at the next one (the worker's code that called the scenario).
 *   output TEXT
 *       From the worker, optional: what the child wrote on stdout and
 *       stderr, at most 64 KiB.  TEXT str.
 *   done NSTEPS
 *       From the worker: the closing record of a run, with the number of
 *       step records it sent for the run.  A stream that stops before `done` is a
 *       worker that died, not a short run.
 *
 * Labels, the str fields FILE, FUNCTION and NAME, hold text for a person
 * to read: not empty, at most PLOOM_PATH_MAX bytes for a FILE and
 * PLOOM_NAME_MAX for the others, valid UTF-8, and no control character
 * (a byte below 0x20, or 0x7f).  The encoders write '?' for a control
 * character and for each byte that is not UTF-8 (a stack dump holds what
 * the scenario wrote there), and cut a longer label at a UTF-8 character
 * boundary; the decoder refuses a label that breaks the rules
 * (ploom_label_problem()).
 *
 * A child that writes no outcome record and exits with a code did os._exit
 * or similar; one killed by a signal crashed.  The utilities turn those
 * into the outcomes "exit", "crash" and "timeout".
 *
 * Version rule: bump PLOOM_PROTOCOL_VERSION when a record changes meaning or
 * an old reader could not parse a new stream.  Worker and utilities ship
 * together, so a mismatch is an installation error.
 */
#ifndef PLOOM_EVENT_H
#define PLOOM_EVENT_H

#include <stddef.h>

#include "err.h"
#include "policy.h"

/* 3: the FLAGS word "timed".  "timed" on a join is protocol 3 too: a
 * reader that knows it only on an acquire refuses the record as
 * malformed, never misreads it, and worker and utilities ship together.
 * 4: the `code` and `name` records, and WHERE on `step` and `wait` (a
 * reader of 3 would refuse their field count)
 * 5: POLICY at the end of the `run` command (a worker of 4 would refuse
 * the command)
 * 6: the object kind plain#N and the outcome refine (a utility of 5 would
 * refuse the records)
 * 7: the `stack` and `frame` records after `exit timeout` (a utility of 6
 * would refuse them)
 * 8: the object "clock" and the operation sleep, and a timed acquire or
 * join that adds to the clock (a utility of 7 would refuse the records,
 * and its reduction would take clock reads for independent of timeouts)
 * 9: forced steps, negative choices in the `run` command (a worker of 8
 * would refuse the command)
 * 10: the plain points on fd 5 (a worker of 9 would take "-" for a key),
 * the policy follow (a worker of 9 would refuse the command), `exit
 * killed` (a utility of 9 would refuse it), and SCENARIO and INSTRUMENTED
 * on `hello` (a utility of 9 would refuse its field count)
 * 11: SOURCES on `hello` (a utility of 10 would refuse its field count)
 * 12: the `stack` and `frame` records after a step limit's `exit` (a
 * utility of 11 would refuse them)
 * 13: --plain-points=*- and quiet reads that are no points under a
 * reduction (a worker of 12 would refuse the option, and make every read
 * a point), and FOR and ON on `wait` (a utility of 12 would refuse the
 * field count)
 * 14: the `idle` record, and the worker's --timeouts (a utility of 13
 * would refuse the record, and its reduction would reorder steps across
 * a clock jump)
 * 15: the `label` record (a utility of 14 would refuse it)
 * 16: the `stall` record (a utility of 15 would refuse it)
 * 17: ROOT on `hello` (a utility of 16 would refuse its field count) */
#define PLOOM_PROTOCOL_VERSION 17

/* The most files a `hello` names in SOURCES. */
#define PLOOM_SOURCES_MAX 64

/* The TYPE of a `failure` outcome that is a setup mistake (above): the
 * exception python/ploom/_guard.py raises, by its module and name. */
#define PLOOM_SETUP_ERROR_TYPE "ploom.UnscheduledPrimitiveError"

/* The length of the UTF-8 sequence at s (at most n bytes, n >= 1), or 0
 * when it is not one: no overlong form, no surrogate, nothing above
 * U+10FFFF (RFC 3629).  The one UTF-8 check of ploom's readers and of the
 * labels the worker writes. */
size_t ploom_utf8_sequence(const unsigned char *s, size_t n);

/* The longest label (see the protocol's Labels): a FILE, and a NAME or a
 * FUNCTION, in bytes. */
#define PLOOM_PATH_MAX 4096
#define PLOOM_NAME_MAX 128

/* The most bytes of an exception's type, message or traceback in a
 * `failure` outcome, and of an `error` record's message, before the
 * marker "... [cut: N bytes]" that replaces the rest.  A scenario may
 * raise a message of any size; the encoders cut it so that a record stays
 * small enough for the utilities to read at once, and the trace small
 * enough to be written.  man/ploom-trace.5 states the limit. */
#define PLOOM_MESSAGE_MAX (64 * 1024)

/* The most objects one run names: the worker sends no `name` record for
 * a further object, which goes by its object name. */
#define PLOOM_NAMES_MAX 1024

/* Why s[0..len) cannot be a label of at most max bytes, or NULL when it
 * can: "is empty", "is longer than MAX bytes", "holds a control
 * character".  A static string, for the caller to place after the name
 * of the field.  The one check of a label, for the protocol's decoder and
 * the trace reader. */
const char *ploom_label_problem(const char *s, size_t len, size_t max);

/* ---- operations and objects ---- */

/* The operations of a scenario, each a scheduling point; begin is the
 * point a started thread stops at before its first operation. */
enum ploom_op {
	PLOOM_OP_BEGIN,
	PLOOM_OP_START,
	PLOOM_OP_JOIN,
	PLOOM_OP_IS_ALIVE,
	PLOOM_OP_ACQUIRE,
	PLOOM_OP_RELEASE,
	PLOOM_OP_LOCKED,
	PLOOM_OP_READ,
	PLOOM_OP_WRITE,
	PLOOM_OP_YIELD_NOW,
	PLOOM_OP_SLEEP,
	PLOOM_NOPS
};

/* How an acquire treats a held lock, or a join an unfinished thread; the
 * FLAGS word of its step.  Zero is the plain blocking acquire or join, and
 * what every other operation carries.  A timed acquire or join never
 * really sleeps: like a nonblocking acquire it is always enabled; one
 * that times out advances the virtual clock by its timeout (an add to the
 * clock, below).  A timed acquire returns False when the lock is held at the
 * step the scheduler picks it (it timed out), True when it took it; a
 * timed join returns None either way, and its caller asks is_alive().  So
 * the search reaches both "waited, then got it" and "timed out" by
 * choosing when the task runs, and a task in a timed acquire or join is
 * never part of a deadlock.  Only an acquire may be nonblocking (join has
 * no such argument); only an acquire or a join may be timed. */
enum ploom_acquire_mode {
	PLOOM_ACQUIRE_BLOCKING = 0,     /* acquire(), join(): wait; "-" */
	PLOOM_ACQUIRE_NONBLOCKING,      /* acquire(blocking=False); "nonblocking" */
	PLOOM_ACQUIRE_TIMED,            /* acquire(timeout=T), T >= 0, or
					 * join(timeout=T), any T; "timed" */
};

/* The time models (DESIGN.md, "Time: a deterministic simulation"), the
 * config's `timeouts` and the option --timeouts=MODEL of the utilities and
 * of the worker.  Idle, the default: computation takes no time, a sleep
 * or a timed wait blocks its task until its resource or its deadline,
 * and the clock jumps to the earliest deadline only when no task can run;
 * sleep(0) is a fair yield (yield_now() stays a plain point).  Any: the stress model, in
 * which a timed wait is always enabled and may time out at any step. */
enum ploom_timeouts {
	PLOOM_TIMEOUTS_IDLE = 0,
	PLOOM_TIMEOUTS_ANY,
};

/* "idle" or "any"; "?" out of range. */
const char *ploom_timeouts_name(enum ploom_timeouts t);

/* The model named by s ("idle", "any"), or -1: the one rule of the
 * option's values, for the utilities and the extension alike. */
int ploom_timeouts_parse(const char *s);

/* 1 if a step of `op` may carry `mode`: blocking on any operation,
 * nonblocking on an acquire, timed on an acquire or a join. */
int ploom_mode_allowed(enum ploom_op op, enum ploom_acquire_mode mode);

/* "begin", "start", ..., "yield_now"; "?" for a value out of range. */
const char *ploom_op_name(enum ploom_op op);

/* The operation named by s[0..len), or -1. */
int ploom_op_parse(const char *s, size_t len);

/* What ends a blocked task's wait (the `wait` record's FOR): the release
 * of the lock, the end of the thread joined, a Condition's notify, or a
 * change of the state a primitive's lock guards (acquire_when()). */
enum ploom_wait_for {
	PLOOM_WAIT_LOCK,
	PLOOM_WAIT_JOIN,
	PLOOM_WAIT_NOTIFY,
	PLOOM_WAIT_STATE,
	PLOOM_NWAIT_FOR
};

/* The FOR word of w and back; ploom_wait_for_parse returns -1 for an
 * unknown word. */
const char *ploom_wait_for_name(enum ploom_wait_for w);
int ploom_wait_for_parse(const char *s, size_t len);

enum ploom_obj_kind {
	PLOOM_OBJ_NONE,         /* begin and yield_now have no object: "-" */
	PLOOM_OBJ_CELL,         /* cell#N: a SharedCell */
	PLOOM_OBJ_LOCK,         /* lock#N: a Lock */
	PLOOM_OBJ_THREAD,       /* thread#N: the thread of task N */
	PLOOM_OBJ_PLAIN,        /* plain#N: plain state of instrumented code (an
				 * attribute, a global, a container's content) */
	PLOOM_OBJ_CLOCK,        /* clock: the virtual clock, one per schedule,
				 * written "clock" (no #N; its id is 0) */
};

struct ploom_obj {
	enum ploom_obj_kind kind;
	long id;                /* N, from 0 */
};

/* Writes the object's name ("cell#3", "-") into out (cap bytes, at least
 * 32 is always enough); returns its length. */
size_t ploom_obj_format(char *out, size_t cap, struct ploom_obj obj);

/* Parses "-" or KIND#N from s[0..len).  Returns 0, or -1 when malformed. */
int ploom_obj_parse(struct ploom_obj *out, const char *s, size_t len);

/* ---- which operations conflict ----
 *
 * Every operation reads, writes (changes) or adds to at most one object,
 * a timed operation may also add to the clock, a start also writes the
 * task counter, and the step that ends a thread also writes that
 * thread's object (its exit):
 *
 *   read, locked, join (timed or not),
 *   is_alive                            read their object
 *   write, acquire (in every mode, so
 *   one that returns False too),
 *   release, start                      write it (start writes the thread started)
 *   start                               also writes the task counter
 *                                       (PLOOM_SPAWN): a task's id is the
 *                                       number of tasks started before it,
 *                                       so two starts never commute, as
 *                                       their order names the tasks
 *   begin of task T                     reads thread#T (so it follows start)
 *   sleep                               adds to the clock
 *   a timed acquire or join             also adds to the clock: it may
 *                                       time out, which advances the clock
 *                                       by its timeout
 *   yield_now                           touches nothing
 *
 * A read of the clock (time.time() and the like) is a read of it, and a
 * step only under the stress model (under the idle one it is no point at
 * all: pyext/clock.c's read_is_point()).  Adding
 * is a write that commutes with every other add: the clock is a count of
 * nanoseconds, and integer additions give one sum in any order, so two
 * adds never conflict; an add and a read (or a write) do.  So sleeps and
 * timeouts of tasks that nobody's clock read observes are as independent
 * as they were before the clock existed.
 *
 * Two steps of different tasks conflict (are dependent, DESIGN.md) when
 * they touch one object, at least one does not read it, and they do not
 * both add to it.  The partial-order reduction in lib/search/dpor.c and the sleep
 * sets the extension keeps while it runs a schedule both use this one
 * definition, so they agree. */
enum ploom_access_how {
	PLOOM_ACCESS_READ = 0,
	PLOOM_ACCESS_WRITE,
	PLOOM_ACCESS_ADD,
};

struct ploom_access {
	struct ploom_obj obj;
	enum ploom_access_how how;
};

/* The most accesses of one step: its object, the clock or the task
 * counter, its exit. */
#define PLOOM_ACCESS_MAX 3

/* The task counter that every start writes: an object of no trace, whose
 * id no thread has.  Why starts must not commute: the search names each
 * task by its id, in the sequences it replays and the sleep sets it
 * sends, and a reordering that let one start pass another would hand the
 * later steps of those sequences to the other task. */
#define PLOOM_SPAWN ((struct ploom_obj){PLOOM_OBJ_THREAD, -1})

/* 1 if obj is PLOOM_SPAWN. */
static inline int ploom_obj_is_spawn(struct ploom_obj obj)
{
	return obj.kind == PLOOM_OBJ_THREAD && obj.id < 0;
}

/* The accesses of task `task` doing `op` on `obj` in `mode` (its FLAGS:
 * a timed acquire or join may add to the clock), plus the write of its
 * own thread object when `exits` (the task finished after this step).
 * Fills out[0..n) and returns n; out[0] is the access of obj, when the op
 * has one, and the exit comes last. */
int ploom_op_accesses(struct ploom_access out[PLOOM_ACCESS_MAX], int task, enum ploom_op op,
		      struct ploom_obj obj, enum ploom_acquire_mode mode, int exits);

/* The accesses of an operation task `task` waits to do: as
 * ploom_op_accesses() with its exit, since any operation may turn out to
 * be the task's last, and for an acquire or a join with the clock's add,
 * since a pending operation's mode is not recorded (the PENDING field has
 * none) and a timed one may time out.  Sleep sets and the races of
 * operations that never ran use it: erring towards a conflict only costs
 * schedules. */
int ploom_pending_accesses(struct ploom_access out[PLOOM_ACCESS_MAX], int task,
			   enum ploom_op op, struct ploom_obj obj);

/* The mode a pending op is taken in, not knowing its own: timed for an
 * acquire or a join (it may add to the clock), blocking for the rest. */
enum ploom_acquire_mode ploom_pending_mode(enum ploom_op op);

/* 1 if access a and access b conflict: one object, not two reads, not
 * two adds. */
int ploom_access_conflict(const struct ploom_access *a, const struct ploom_access *b);

/* 1 if some access in a[0..na) and some in b[0..nb) conflict. */
int ploom_conflicts(const struct ploom_access *a, int na, const struct ploom_access *b,
		    int nb);

/* ---- encoding ---- */

/* A growable byte buffer; the encoders append one whole line to it.
 * Zero-initialise, then release with ploom_buf_release(). */
struct ploom_buf {
	char *data;
	size_t len;
	size_t cap;
};

/* Frees the buffer's memory and zeroes it; safe on a zeroed buffer. */
void ploom_buf_release(struct ploom_buf *b);

/* Appends raw bytes / a formatted string.  Abort on out-of-memory: the
 * encoders run in forked children where there is nothing better to do. */
void ploom_buf_add(struct ploom_buf *b, const void *data, size_t len);
void ploom_buf_addf(struct ploom_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Appends " " then `s` (len bytes) in the str encoding above. */
void ploom_buf_add_str(struct ploom_buf *b, const char *s, size_t len);

/* Writes the whole buffer to fd (retrying on EINTR and short writes) and
 * empties it.  Returns 0, or -1 with errno set. */
int ploom_buf_flush_fd(struct ploom_buf *b, int fd);

/* Decodes one str field (without its leading '='... pass the field after
 * '=') of length len into a newly malloc'd buffer; *out_len receives the
 * decoded length; the result is NUL-terminated for convenience.  Returns
 * NULL on a malformed escape.  The caller frees the result. */
char *ploom_str_decode(const char *field, size_t len, size_t *out_len);

/* The operation another task waits to do, in a step's PENDING field. */
struct ploom_pending {
	int task;
	enum ploom_op op;
	struct ploom_obj obj;
};

/* The records, each appended as one line with its newline.  Strings are
 * (pointer, length) pairs; NULL with length 0 is the empty string. */
void ploom_enc_hello(struct ploom_buf *b, const char *impl, size_t impl_len,
		     const char *pyversion, size_t pyversion_len, int gil,
		     const char *hash_seed, size_t hash_seed_len, const char *module,
		     size_t module_len, const char *qualname, size_t qualname_len,
		     const char *file, size_t file_len, int scenario_instrumented,
		     const char *instrumented, size_t instrumented_len, const char *sources,
		     size_t sources_len, const char *root, size_t root_len);
/* error command: the message cut as the failure outcome's are */
void ploom_enc_error(struct ploom_buf *b, const char *kind, const char *msg, size_t len);
/* error load, error source: DETAIL the JSON object of msg, cut as above,
 * and of type (at most PLOOM_NAME_MAX bytes; NULL: none) */
void ploom_enc_error_detail(struct ploom_buf *b, const char *kind, const char *msg,
			    size_t len, const char *type, size_t type_len);
/* code: a label made of file and function, each cleaned and cut as the
 * protocol's Labels say (an empty one is written as "?").  name: nothing
 * at all for an empty name, which is no name. */
void ploom_enc_code(struct ploom_buf *b, long index, const char *file, size_t file_len,
		    const char *function, size_t function_len);
void ploom_enc_name(struct ploom_buf *b, struct ploom_obj obj, const char *name, size_t len);
/* step and wait: where is the CODE:LINE pair, "-" when code < 0 or line < 1 */
struct ploom_wire_where {
	long code;
	long line;
};
void ploom_enc_step(struct ploom_buf *b, long index, int task, enum ploom_op op,
		    struct ploom_obj obj, const int *enabled, size_t nenabled,
		    enum ploom_acquire_mode mode, const struct ploom_pending *pending,
		    size_t npending, struct ploom_wire_where where);
void ploom_enc_value(struct ploom_buf *b, long index, const char *text, size_t len);
void ploom_enc_idle(struct ploom_buf *b, long index, long long ns);
void ploom_enc_stall(struct ploom_buf *b, long index, int task, long long ns);
/* The `label` record of step index: text[0..len) as a label, cut and made
 * printable as ploom_enc_name()'s; nothing for an empty text. */
void ploom_enc_label(struct ploom_buf *b, long index, const char *text, size_t len);
void ploom_enc_outcome_pass(struct ploom_buf *b);
/* failure: a type, message or traceback longer than PLOOM_MESSAGE_MAX
 * bytes is cut to at most that many, at a UTF-8 character boundary, and
 * ends in "... [cut: N bytes]", N the bytes left out. */
void ploom_enc_outcome_failure(struct ploom_buf *b, int task, const char *type,
			       size_t type_len, const char *msg, size_t msg_len,
			       const char *tb, size_t tb_len);
void ploom_enc_outcome_deadlock(struct ploom_buf *b);
void ploom_enc_wait(struct ploom_buf *b, int task, enum ploom_op op, struct ploom_obj obj,
		    int holder, struct ploom_wire_where where, enum ploom_wait_for waits_for,
		    const char *on, size_t on_len);
void ploom_enc_outcome_step_limit(struct ploom_buf *b, long limit);
void ploom_enc_outcome_divergence(struct ploom_buf *b, long index, const char *msg,
				  size_t len);
void ploom_enc_outcome_sleep_blocked(struct ploom_buf *b, long index);
void ploom_enc_outcome_refine(struct ploom_buf *b, const char *sites, size_t len);
/* how: "code", "signal" or "timeout" */
void ploom_enc_exit(struct ploom_buf *b, const char *how, int code);

/* ---- stacks of a schedule cut by its timeout ---- */

/* The most tasks a timeout outcome tells of (the first ones), and the
 * most frames it keeps of each (the innermost): enough to say where a
 * task spins or blocks, and few enough that a trace stays small. */
#define PLOOM_STACK_TASKS_MAX 1024
#define PLOOM_STACK_FRAMES_MAX 8

/* A `stack` record's STATE. */
enum ploom_stack_state {
	PLOOM_STACK_RUNNING,
	PLOOM_STACK_FINISHED,
	PLOOM_STACK_UNSTARTED,
	PLOOM_STACK_UNKNOWN,
};

/* "running", "finished", "unstarted", "unknown"; "?" out of range. */
const char *ploom_stack_state_name(enum ploom_stack_state state);

/* The state named by s[0..len), or -1. */
int ploom_stack_state_parse(const char *s, size_t len);

void ploom_enc_stack(struct ploom_buf *b, int task, enum ploom_stack_state state, long depth);
/* file and function cleaned and cut as a code record's; line < 1: 0 */
void ploom_enc_frame(struct ploom_buf *b, const char *file, size_t file_len, long line,
		     const char *function, size_t function_len);

/* A task of the schedule as the worker knows it after a timeout: the
 * ident of its thread (PyThread_get_thread_ident(), the number
 * faulthandler prints as "Thread 0x..."), 0 for none, and whether its
 * code had returned. */
struct ploom_dump_task {
	unsigned long ident;
	int finished;
};

/* Appends a `stack` record, and its `frame` records, for each of
 * tasks[0..ntasks) (the first PLOOM_STACK_TASKS_MAX), read from dump[0..len):
 * the text faulthandler.dump_traceback(all_threads=True) writes, a
 * "Thread 0x..." or "Current thread 0x..." line then one line per frame,
 * '  File "FILE", line N in FUNCTION', innermost first.  complete: the
 * child said the dump was whole; a task whose thread the dump does not
 * show is then "unstarted", else "unknown".  Lines of any other shape are
 * skipped, so a cut or garbled dump yields less, never a wrong record.
 * Frames whose file starts with skip_dir (the ploom package; NULL: none)
 * are left out at the innermost end, and the first such frame past the
 * scenario's ends the stack (below it lies the worker that called the
 * scenario); a relative FILE is joined to cwd (NULL: kept), as a code
 * record's is. */
void ploom_enc_stacks(struct ploom_buf *b, const char *dump, size_t len,
		      const struct ploom_dump_task *tasks, size_t ntasks, int complete,
		      const char *skip_dir, const char *cwd);
void ploom_enc_output(struct ploom_buf *b, const char *text, size_t len);
void ploom_enc_done(struct ploom_buf *b, long nsteps);

/* ---- plain points ---- */

/* The most access sites one worker makes points of, which is also the
 * most one config holds (config.h), and the longest key: a module name of
 * at most 200 bytes, ':', at most 9 digits. */
#define PLOOM_PLAIN_POINTS_MAX 100000
#define PLOOM_POINT_KEY_MAX 210

/* Appends the `points` line of keys[0..n) (n >= 1, each a site key). */
void ploom_enc_points(struct ploom_buf *b, const char *const *keys, size_t n);

/* A `points` line as the worker reads it: keys[0..n), pointing into
 * text, a copy of the line. */
struct ploom_points {
	char *text;
	char **keys;
	size_t n;
};

/* Parses data[0..len), the whole of fd 5, into *out, which the caller
 * releases with ploom_points_release() (also after an error).  Returns
 * 0, or -1 with err filled (kind PLOOM_ERR_INPUT: "bad points list"
 * and why). */
int ploom_points_parse(struct ploom_points *out, const char *data, size_t len,
		       struct ploom_err *err);
void ploom_points_release(struct ploom_points *points);

/* ---- commands ---- */

/* The `run` command, as a utility sends it and the worker reads it. */
struct ploom_run_cmd {
	long max_steps;
	long timeout_ms;
	int *choices;           /* malloc'd by ploom_run_cmd_parse() */
	size_t nchoices;
	int *sleep;             /* malloc'd by ploom_run_cmd_parse() */
	size_t nsleep;
	/* zeroed: "default"; its follow malloc'd by ploom_run_cmd_parse() */
	struct ploom_policy_spec policy;
};

/* Limits a worker accepts in a `run` command, and the longest command
 * line they allow: every choice a sign and at most 7 digits and a space,
 * every sleeping task and every step to follow at most 7 digits and a
 * space, plus the four numbers of the header and the policy's. */
#define PLOOM_MAX_CHOICES 10000000L
#define PLOOM_MAX_TASK_ID 1000000
#define PLOOM_MAX_RUN_CMD_BYTES                                                           \
	((size_t)PLOOM_MAX_CHOICES * 9 + (size_t)PLOOM_MAX_TASK_ID * 8 +                  \
	 (size_t)PLOOM_POLICY_MAX_FOLLOW * 8 + 128)

/* The wall clock of a run, in seconds, when the user sets none: the
 * search's --schedule-timeout and ploom.Config's, and the most a replay
 * from pytest allows a trace (the extension's DEFAULT_SCHEDULE_TIMEOUT) */
#define PLOOM_DEFAULT_SCHEDULE_TIMEOUT_S 10.0

void ploom_enc_run(struct ploom_buf *b, const struct ploom_run_cmd *cmd);

/* Parses one `run` line (without its newline) into *out, whose arrays
 * the caller frees with ploom_run_cmd_release() (also after an error).
 * Returns 0, or -1 with err filled. */
int ploom_run_cmd_parse(struct ploom_run_cmd *out, const char *line, size_t len,
			struct ploom_err *err);
void ploom_run_cmd_release(struct ploom_run_cmd *cmd);

#endif
