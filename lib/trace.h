/* trace.h - the data model of a run (one schedule) and of a trace (a run
 * plus what is needed to replay and read it).
 *
 * Overview
 * --------
 * A run is the list of steps the scheduler took, the choices made at the
 * branch points (steps where more than one task was enabled), the number
 * of preemptions and the outcome.  The worker reader (worker.h) fills the
 * steps and the outcome, where each step stopped in the scenario's code
 * and the names the scenario gave its objects; ploom_run_finish() derives
 * the choices, the preemption count and the outcome's summary from them.
 *
 * A trace is a run plus metadata: the scenario, the fingerprints of its
 * source files, the Python that ran it, the hash seed and the
 * configuration; a failing trace also carries its failure id, and a
 * minimized one the preemption count of the trace it was minimized from.
 * json.h reads and writes traces in the format documented in
 * man/ploom-trace.5 (format version 2; version 1 is still read).
 *
 * Ownership: every char * and array in these structs is owned by the
 * struct that holds it and freed by ploom_run_release() /
 * ploom_trace_free().  Strings are NUL-terminated; an absent optional
 * string is NULL.  Structs are plain so that the utilities and tests can
 * read them directly; fill them through the functions below or with
 * malloc'd memory.
 */
#ifndef PLOOM_TRACE_H
#define PLOOM_TRACE_H

#include <stddef.h>

#include "config.h"
#include "err.h"
#include "event.h"

/* Version of the trace JSON format.  Bump it when an old reader cannot
 * read a new trace or a field changes meaning; an added optional field
 * does not bump it (readers ignore fields they do not know).  Writers
 * write PLOOM_TRACE_VERSION; readers read every version from
 * PLOOM_TRACE_VERSION_MIN on.
 *   1  the first format
 *   2  a step's "timeout" (a timed acquire): an old reader would ignore
 *      it and take the step for a blocking acquire, which changes what
 *      the step means (it may return False).  "timeout" on a join (a
 *      timed join) is also version 2: a version-2 reader that knows only
 *      timed acquires refuses it, naming the field, so none misreads it.
 *      Added since without a bump, as optional fields whose absence an
 *      old reader cannot misread: "source" and the "relpath"s, a step's
 *      and a wait's "where", "tasks" and "objects" (the names), the config's "instrument"
 *      and "instrument_scenario", and a timeout's or a step limit's
 *      "stacks": a reader that ignores them replays
 *      without the rewriting, so the first step it made is not made
 *      again and the replay stops as a divergence, never a run that
 *      passes for the recorded one.  The op "sleep" and the object
 *      "clock" did not bump it: a reader from before them refuses the step
 *      as an unknown operation or object, never misreads it */
#define PLOOM_TRACE_VERSION 2
#define PLOOM_TRACE_VERSION_MIN 1

/* Where in the scenario's code a task stopped: the innermost Python frame
 * outside the ploom package (event.h's WHERE).  Information for a person:
 * a replay compares steps by task, operation and object, never by where
 * they stopped (a changed source diverges through its blob id). */
struct ploom_where {
	/* the source file: in a trace with relative paths (struct
	 * ploom_source), relative to the same root when it lies below it,
	 * else as the worker named it (absolute, or "<string>" and the like);
	 * NULL when unknown, and then function is NULL and line 0 */
	char *file;
	char *function;     /* the function's name */
	int line;           /* from 1 */
};

struct ploom_step {
	long index;         /* 0, 1, 2, ... */
	int task;           /* the task the scheduler picked */
	enum ploom_op op;
	char *object;       /* "lock#0", ...; NULL for begin and yield_now */
	struct ploom_obj obj; /* object parsed; kind PLOOM_OBJ_NONE without one */
	int *enabled;       /* enabled tasks, ascending */
	size_t nenabled;
	enum ploom_acquire_mode mode; /* of an acquire or a join; PLOOM_ACQUIRE_BLOCKING
				       * for the rest */
	char *value;        /* repr() of the step's value, NULL if none */
	/* the step in the terms of the primitive the scenario called
	 * (ploom.queue's "put 3"), NULL if none: words for a person, which
	 * neither replay nor search reads */
	char *label;
	/* what every other unfinished task waits to do, ascending; read from
	 * the worker for the search, not kept in trace files */
	struct ploom_pending *pending;
	size_t npending;
	struct ploom_where where;   /* where the task stopped for this step */
	/* 1: the step ran when no other task could (event.h's `idle`
	 * record), with the clock at clock_ns nanoseconds from the start */
	int idle;
	long long clock_ns;
	/* 1: the step, a timed wait of the stress model, timed out after
	 * stall_ns nanoseconds while the task it waited for, stall_of (-1:
	 * any other, a Condition's notifier), could still run (event.h's
	 * `stall` record) */
	int stalled;
	int stall_of;
	long long stall_ns;
};

enum ploom_outcome_kind {
	PLOOM_OUTCOME_NONE = 0,     /* not known yet (a run being read) */
	PLOOM_OUTCOME_PASS,
	PLOOM_OUTCOME_FAILURE,      /* an uncaught exception */
	PLOOM_OUTCOME_DEADLOCK,
	PLOOM_OUTCOME_STEP_LIMIT,
	PLOOM_OUTCOME_CRASH,        /* the child was killed by a signal */
	PLOOM_OUTCOME_EXIT,         /* the child exited without an outcome */
	PLOOM_OUTCOME_TIMEOUT,
	PLOOM_OUTCOME_DIVERGENCE,   /* a requested choice was not enabled */
	PLOOM_OUTCOME_SLEEP_BLOCKED, /* stopped unfinished: every enabled task asleep */
	PLOOM_OUTCOME_REFINE,       /* stopped: shared plain state needs more points */
};

/* One unfinished task of a deadlock. */
struct ploom_wait {
	int task;
	enum ploom_op op;   /* acquire or join */
	char *object;
	int holder;         /* task holding the lock or joined; -1 unknown */
	struct ploom_where where;   /* where the task waits */
	enum ploom_wait_for waits_for;
	char *on;           /* the Condition's or primitive's name; NULL for none */
};

/* Where a task was when its schedule ran past its timeout (event.h's
 * `stack` record): its innermost frames, the innermost first. */
struct ploom_stack {
	int task;
	enum ploom_stack_state state;
	long depth;             /* the frames the dump showed; >= nframes */
	struct ploom_where *frames; /* running only; line 0 when unknown */
	size_t nframes;         /* at most PLOOM_STACK_FRAMES_MAX */
};

struct ploom_outcome {
	enum ploom_outcome_kind kind;
	char *summary;          /* see ploom_outcome_summary() */
	int task;               /* failure: the task that raised */
	char *exc_type;         /* failure: "builtins.AssertionError" */
	char *exc_message;      /* failure: str(exc), may be "" */
	char *traceback;        /* failure: may be NULL */
	struct ploom_wait *waits; /* deadlock */
	size_t nwaits;
	int signal;             /* crash */
	int status;             /* exit */
	long limit;             /* step-limit: MAX_STEPS */
	long timeout_ms;        /* timeout: the limit that was exceeded */
	/* timeout, step-limit: where each task was, ascending by task; none
	 * when the worker got no dump of the stacks (or the trace is older) */
	struct ploom_stack *stacks;
	size_t nstacks;
	long divergence_index;  /* divergence, sleep-blocked: the step */
	char *divergence_message; /* divergence */
	char *sites;            /* refine: the site keys, space-separated */
	char *output;           /* captured stdout+stderr, NULL if none */
};

/* A name the scenario gave an object: ploom.SharedCell(name=...),
 * ploom.Lock(name=...), ploom.Thread(name=...) (the object thread#N
 * names task N).  An object without one is called by its object name,
 * task 0's thread by "MainThread" (ploom_obj_default_name()). */
struct ploom_name {
	struct ploom_obj obj;
	char *name;
};

struct ploom_run {
	struct ploom_step *steps;
	size_t nsteps;
	size_t capsteps;
	int *choices;           /* filled by ploom_run_finish() */
	size_t nchoices;
	int preemptions;        /* filled by ploom_run_finish() */
	struct ploom_outcome outcome;
	struct ploom_name *names; /* at most one per object, see ploom_run_set_name() */
	size_t nnames;
	/* the worker's `code` records of this run (event.h), by INDEX, line
	 * 0: kept while the run is read, so that each step gets a copy of
	 * its file and function */
	struct ploom_where *codes;
	size_t ncodes;
};

struct ploom_scenario {
	char *target;       /* as given on the command line */
	char *module;
	char *qualname;
	char *file;         /* absolute source path, NULL if unknown */
	char *relpath;      /* file relative to the source's root, NULL if unknown */
	/* Where the search's worker imported from, relative to the source's
	 * root ("." for the root itself), each a folder inside it: cwd, the
	 * folder the search ran in, which a module target's worker puts
	 * first on sys.path (NULL when it lay outside the root, or unknown);
	 * import_paths, the entries of PYTHONPATH, in order, that lay inside
	 * the root (a caller's sys.path, such as pytest's rootdir and
	 * `pythonpath`, comes to the worker there).  A replay puts them on
	 * the worker's sys.path again from the root it runs in
	 * (worker.h's import_paths). */
	char *cwd;
	char **import_paths;
	size_t nimport_paths;
};

/* The most import paths a trace records. */
#define PLOOM_IMPORT_PATHS_MAX 64

/* Where the relative paths of a trace start, so that a replay in another
 * clone (or a copy of the folder) finds the same files there. */
struct ploom_source {
	/* "repository": the root of the git work tree that holds the
	 * scenario file; "project": outside git, the project's root that
	 * the search's worker found (python/ploom/_project.py: the nearest
	 * folder with a project's settings), a folder above the scenario
	 * file's own; "folder": the scenario file's own folder (a file in
	 * no repository, when it is its project's root or has none); NULL:
	 * the trace has no relative paths.  Kept
	 * as a string so that a root this ploom does not know reads, and
	 * is written back, unchanged (it then does not relocate). */
	char *root;
	char *commit;       /* repository: HEAD's commit id (40 hex), NULL for
			     * an unborn HEAD and outside a repository */
	int dirty;          /* repository: the scenario file differed from
			     * HEAD (changed, staged or untracked) */
};

struct ploom_python {
	char *implementation;   /* "cpython" */
	char *version;          /* "3.13.0" */
	int gil;                /* 1 enabled, 0 disabled */
};

/* The most steps one schedule may take, whatever max_steps says (0, no
 * bound, included): there the schedule ends with a step limit, so that
 * its trace stays readable.  A step takes about 200 bytes of JSON (a
 * spinning yield_now and where it stopped), so such a trace is about 40
 * MB; a step with a 200-byte value takes at most about 700 bytes, since a
 * repr() escapes its control characters itself and JSON then only doubles
 * its backslashes, which keeps it under PLOOM_TRACE_MAX_BYTES (json.h)
 * with a few tasks (a larger trace is refused by the writer, never
 * written).  Its choices are far fewer than PLOOM_MAX_CHOICES (event.h).
 * A spinning schedule reaches it in a fraction of a second, long before
 * the default timeout of 10 s, which used to let it write 1 GB. */
#define PLOOM_MAX_STEPS 200000L
_Static_assert(PLOOM_MAX_STEPS == PLOOM_POLICY_MAX_FOLLOW,
	       "a recorded run's steps are what the policy follow takes");

/* A source file of the scenario and its git blob id (`git hash-object
 * PATH`) when the trace was made; replay compares it with the file as it
 * is now. */
struct ploom_fingerprint {
	char *path;         /* absolute */
	char *blob;         /* 40 lower-case hex digits */
	char *relpath;      /* relative to the source's root, NULL if unknown */
};

struct ploom_trace {
	struct ploom_scenario scenario;
	struct ploom_fingerprint *fingerprints; /* none in the oldest traces */
	size_t nfingerprints;
	struct ploom_source source;
	struct ploom_python python;
	char *hash_seed;        /* decimal, a string because it is 64-bit wide */
	struct ploom_config config;
	struct ploom_run run;
	char *id;               /* failure id (16 hex digits), NULL if none */
	int minimized_from;     /* preemptions of the original; -1: not minimized */
	/* the shard of the search that found it (ploom-explore --shard,
	 * shard.h) and the unit of the schedule; count 0: none */
	struct {
		int index, count, depth;
		long unit;
	} shard;
	/* the source files of the modules the worker patched or
	 * instrumented (its hello's SOURCES), absolute, for
	 * ploom_trace_fingerprint_source(); not written: the fingerprints
	 * keep them */
	char **module_files;
	size_t nmodule_files;
	/* the scenario's project root (its hello's ROOT), absolute, NULL
	 * if unknown: outside git, ploom_trace_fingerprint_source() records
	 * the paths against it; not written, source.root says it */
	char *project_root;
};

/* Frees everything the run owns and zeroes it; safe on a zeroed run.
 * The struct itself is the caller's. */
void ploom_run_release(struct ploom_run *run);

/* Appends a zeroed step to the run and returns it, or NULL when out of
 * memory.  The pointer is valid until the next append. */
struct ploom_step *ploom_run_add_step(struct ploom_run *run);

/* Copies from's file and function into to (released or zeroed) with
 * line; copies nothing when from knows no file.  Returns 0, or -1 with
 * err filled (out of memory; to is then zeroed). */
int ploom_where_copy(struct ploom_where *to, const struct ploom_where *from, int line,
		     struct ploom_err *err);

/* Frees what w holds and zeroes it; safe on a zeroed one. */
void ploom_where_release(struct ploom_where *w);

/* Frees an outcome's stacks and empties the list; safe on an empty one. */
void ploom_outcome_release_stacks(struct ploom_outcome *o);

/* Sets the name of obj (not "-") in run to a copy of name, replacing the
 * one it had.  The caller keeps to PLOOM_NAMES_MAX objects (event.h), as
 * the readers do.  Returns 0, or -1 with err filled (out of memory). */
int ploom_run_set_name(struct ploom_run *run, struct ploom_obj obj, const char *name,
		       struct ploom_err *err);

/* The name the scenario gave obj in run, or NULL when it gave none.
 * Owned by the run. */
const char *ploom_run_name(const struct ploom_run *run, struct ploom_obj obj);

/* The name of an object the scenario did not name: "MainThread" for
 * thread#0 (task 0, the scenario's own, as threading names it), else its
 * object name ("cell#3", "thread#1"; "-" for none).  Written into out (cap
 * bytes; 32 is always enough); returns its length. */
size_t ploom_obj_default_name(char *out, size_t cap, struct ploom_obj obj);

/* The name a person reads for obj in run: the name the scenario gave it,
 * else ploom_obj_default_name().  A given name that another object of
 * the run also goes by (a second object of that name, "MainThread" on
 * another thread, or another object's object name) is followed by
 * " (OBJECT)", as in "total (cell#1)", so that one name means one
 * object; unless the steps' operations tell the two apart, a lock from
 * a cell or plain state (the lock Pool._cond, and Pool._cond the
 * attribute that holds it, whose steps read it).  Newly malloc'd (the caller frees it), NULL when out of memory. */
char *ploom_run_display_name(const struct ploom_run *run, struct ploom_obj obj);

/* ploom_run_display_name() of task's thread (thread#TASK). */
char *ploom_run_task_name(const struct ploom_run *run, int task);

/* The words for what a blocked task waits for, after its name, as every
 * rendering says it: "waits to acquire OBJECT held by HOLDER", "waits to
 * join OBJECT", "waits on NAME (a Condition); no task can notify it", and
 * so on by wt->waits_for; object and holder as the rendering names them
 * (holder NULL when none is known); brief leaves out why no task can end
 * it, for a cell.  Newly malloc'd, NULL when out of memory. */
char *ploom_wait_words(const struct ploom_wait *wt, const char *object, const char *holder,
		       int brief);

/* 1 if task was among the tasks enabled at step s, else 0. */
int ploom_step_is_enabled(const struct ploom_step *s, int task);

/* Computes run->choices (the task of every step with more than one
 * enabled task) and run->preemptions (the choices that switch away from
 * the task of the previous step while it is still enabled; step 0's
 * previous task is 0), then fills outcome.summary if it is NULL.
 * Returns 0, or -1 (out of memory) with err filled. */
int ploom_run_finish(struct ploom_run *run, struct ploom_err *err);

/* Moves the contents of `from` into `to` (which must be released or
 * zeroed) and zeroes `from`. */
void ploom_run_move(struct ploom_run *to, struct ploom_run *from);

/* The summary line of an outcome, newly malloc'd (the caller frees it),
 * or NULL when out of memory:
 *   pass        "pass"
 *   failure     "TYPE: MESSAGE" ("TYPE" when the message is empty)
 *   deadlock    "deadlock: task 1 waits to acquire lock#0 held by task 2; ..."
 *               ("task 0 waits to join thread#1" for a join)
 *   step-limit  "step-limit: the schedule reached 10000 steps"
 *   crash       "crash: killed by signal 11 (SIGSEGV)"
 *   exit        "exit: the scenario exited with status 3"
 *   timeout     "timeout: the schedule ran longer than 10 s"
 *   divergence  "divergence: MESSAGE" */
char *ploom_outcome_summary(const struct ploom_outcome *o);

/* The outcome kind's name as in the trace ("pass", "step-limit", ...) and
 * back.  ploom_outcome_kind_parse returns -1 for an unknown name. */
const char *ploom_outcome_kind_name(enum ploom_outcome_kind kind);
int ploom_outcome_kind_parse(const char *name);

/* 1 if the outcome is a failure of the schedule (failure, deadlock,
 * crash, exit, timeout), else 0. */
int ploom_outcome_is_failure(enum ploom_outcome_kind kind);

/* 1 if the outcome is a setup mistake rather than a failure of the code
 * under test: an exception of type PLOOM_SETUP_ERROR_TYPE (event.h). */
int ploom_outcome_is_setup(const struct ploom_outcome *o);

/* Allocates a zeroed trace (config.max_preemptions = -1,
 * minimized_from = -1).  Returns NULL when out of memory.  Free with
 * ploom_trace_free(). */
struct ploom_trace *ploom_trace_new(void);

/* Frees the trace and all it owns; accepts NULL. */
void ploom_trace_free(struct ploom_trace *trace);

/* Frees the trace's fingerprints, its source, scenario.relpath, cwd and
 * import paths, and empties them: what source.h's functions replace. */
void ploom_trace_release_source(struct ploom_trace *trace);

/* Frees the scenario's cwd and import paths and empties them. */
void ploom_trace_release_import_paths(struct ploom_trace *trace);

/* The failure id: the first 16 hex digits of the git blob id of
 *   "MODULE:QUALNAME\nKIND\nTYPE\nMESSAGE\n"
 * where TYPE and MESSAGE are the exception's for a failure, and TYPE is
 * empty and MESSAGE the summary for the other kinds.  It is stable for
 * the same failure of the same scenario.  Writes 16 digits and a NUL into
 * out (17 bytes).  Returns 0, or -1 with err filled. */
int ploom_trace_failure_id(char out[17], const struct ploom_trace *trace,
			   struct ploom_err *err);

/* 1 if the outcome gets a failure id in its trace: a failure of the
 * schedule (ploom_outcome_is_failure()) or a step-limit, the outcomes
 * whose traces ploom-explore saves under their id.  Else 0. */
int ploom_outcome_has_id(enum ploom_outcome_kind kind);

/* Sets trace->id to ploom_trace_failure_id() if the outcome has one
 * (ploom_outcome_has_id()) and the id is not set yet; otherwise leaves
 * it alone.  Returns 0, or -1 with err filled. */
int ploom_trace_set_id(struct ploom_trace *trace, struct ploom_err *err);

/* The preemptions of the run's steps, counted as ploom_run_finish()
 * does, without changing the run. */
int ploom_run_count_preemptions(const struct ploom_run *run);

/* 1 if step i is a preemption: a choice (more than one task enabled) that
 * switches away from the task of the previous step (task 0 before step
 * 0) while that task is still enabled.  The one rule behind the count of
 * ploom_run_finish() and the marks of the renderings.  0 otherwise, and
 * for an i past the last step. */
int ploom_run_is_preemption(const struct ploom_run *run, size_t i);

/* The step the renderings mark as failing: the last step of the task that
 * raised (a failure), or the last step for a crash, an exit or a timeout
 * (the process died after it).  -1 for the other outcomes, and when there
 * is no such step. */
long ploom_run_failing_step(const struct ploom_run *run);

/* What a rendering's '!' mark stands for, in the legend: the failing
 * step of a failure, crash, exit or timeout (ploom_run_failing_step()),
 * or the "wait" row of a deadlock; NULL when nothing is marked.  A static
 * string. */
const char *ploom_run_mark_legend(const struct ploom_run *run);

/* The tasks of a run, one column or lane each in a rendering and one
 * entry each in a trace's "tasks": task 0, and every task that took a
 * step, was enabled, waits in a deadlock, raised or has a name;
 * distinct and ascending (ids come from the trace, so only those that
 * appear are listed).  On success the caller owns *out (malloc'd, *nout
 * ids, at least one) and frees it.  Returns 0, or -1 with err filled (out
 * of memory; *out NULL). */
int ploom_run_tasks(int **out, size_t *nout, const struct ploom_run *run,
		    struct ploom_err *err);

/* A malloc'd copy of s that the caller frees; NULL for NULL input or
 * when out of memory. */
char *ploom_strdup(const char *s);

#endif
