/* view.h - what a drawing of a trace shows, whatever it is drawn as: the
 * model that the text rendering (render.h) and the HTML page (html.h) both
 * emit, so that the two cannot disagree on a row, a mark or a tag.
 *
 * Overview
 * --------
 * A view has
 *   - lanes, one per task that ploom_run_tasks() lists, ascending, each
 *     with its thread's name (ploom_run_task_name());
 *   - rows, one per step: the lane of the task that took it, its label
 *     (ploom_run_step_label()) and value, where it stopped
 *     (ploom_where_label()), whether it is a preemption
 *     (ploom_run_is_preemption()), and the tags of its races;
 *   - for a deadlock, its waits (ploom_run_wait_label(), where the task
 *     waits, and in words who waits for what, held by whom), and the
 *     tags of the races of those operations;
 *   - the failing step (ploom_run_failing_step()), the racing pairs
 *     (ploom_trace_races()) and the one the failure rests on
 *     (ploom_races_key());
 *   - what the legend lists: whether any step is a preemption, and the
 *     failing mark's words (ploom_run_mark_legend());
 *   - the header facts both drawings share, as name and value, the race
 *     the failure rests on (ploom_race_explain()) last;
 *   - the outcome in words, a task as "task N", then " (NAME)" when the
 *     scenario named its thread, as the text says it; and the same words
 *     with each task by its lane's name, as the page says it, so that a
 *     task goes by one name across the page;
 *   - for a timeout whose trace has them, where each task was, a line
 *     each (ploom_view_stack_line()), in the text's words and by the
 *     lanes' names.
 * The strings are the trace's, not escaped and not cut: how a string is
 * made safe and how long it may be is the emitter's business.
 */
#ifndef PLOOM_VIEW_H
#define PLOOM_VIEW_H

#include <stddef.h>

#include "err.h"
#include "races.h"
#include "trace.h"

/* At most this many race tags show beside a step, then a '+'. */
#define PLOOM_VIEW_TAGS_MAX 3

struct ploom_view_row {
	size_t lane;
	char *label;
	const char *value;      /* owned by the trace; NULL: none */
	char *where;            /* NULL: the trace does not say */
	int preempted;
	char tags[PLOOM_VIEW_TAGS_MAX + 2];     /* "" when no race */
};

/* A deadlock's wait: its row's cell, and the words of the outcome. */
struct ploom_view_wait {
	size_t lane;
	char *label;            /* ploom_run_wait_label(), brief: the row's cell */
	char *named;            /* the same in full: the outcome's words */
	char *where;            /* NULL: the trace does not say */
	char *who;              /* "task 1 (mathieu)" */
	char *who_name;         /* "mathieu": its lane's name */
	char *object;           /* ploom_run_wait_object() */
	char *holder;           /* "task 2": who holds it; NULL: none said */
	char *words;            /* ploom_wait_words() with object and holder */
};

/* The most frames a stack's line shows, innermost first, then " <- ..."
 * when the task had more. */
#define PLOOM_VIEW_STACK_FRAMES 8

struct ploom_view_fact {
	const char *name;
	char *value;
};

/* The facts before the source lines, which each drawing words its own
 * way, then the rest. */
#define PLOOM_VIEW_FACTS_BEFORE_SOURCE 2

struct ploom_view {
	const struct ploom_trace *trace;
	int *tasks;             /* per lane */
	char **names;           /* per lane */
	size_t nlanes;
	struct ploom_view_row *rows;    /* per step */
	size_t nrows;
	/* a deadlock's waits in the outcome's order, NULL otherwise; a lane
	 * shows the last of its task's, but each one counts when the lane is
	 * sized */
	struct ploom_view_wait *waits;
	size_t nwaits;
	char wait_tags[PLOOM_VIEW_TAGS_MAX + 2];
	long failing;           /* the step marked '!', or -1 */
	int any_preempted;
	const char *mark_legend;        /* static; NULL: no failing mark */
	struct ploom_race *races;
	size_t nraces;
	long key;               /* the race the failure rests on, or -1 */
	struct ploom_view_fact *facts;
	size_t nfacts;
	/* what follows the outcome's kind, but for a deadlock (NULL): "every
	 * task finished", "task 1 (mathieu) raised TYPE" (the message and the
	 * traceback, whose lines each drawing keeps its own way, are the
	 * outcome's), "at step 3: MESSAGE", or ploom_outcome_detail() */
	char *outcome_words;
	/* the same with the task by its lane's name: "mathieu raised TYPE" */
	char *outcome_named;
	/* the outcome's summary with each task by its lane's name: a
	 * deadlock's "deadlock: mathieu waits to acquire L held by lucas",
	 * else the trace's summary (or the kind's name) */
	char *summary_named;
	/* a timeout's or a step limit's stacks, one line each in the outcome's order (see
	 * ploom_view_stack_line()); NULL when the trace has none; then the
	 * same lines with each task by its lane's name */
	char **stacks;
	char **stacks_named;
	size_t nstacks;
	/* a failure's stalls (ploom_view_stalls()), NULL when none */
	char *stalls;
	/* the places of the rows, the waits and the races' words: built
	 * once, as building them reads every step */
	struct ploom_short_names *sn;
};

/* Fills *out with the view of trace, which must outlive it.  A trace too
 * large to analyse for races shows none, as one with none.
 *
 * Returns 0, or -1 with err filled (PLOOM_ERR_NOMEM and "out of memory");
 * either way release *out with ploom_view_release(). */
int ploom_view_build(struct ploom_view *out, const struct ploom_trace *trace,
		     struct ploom_err *err);

/* The line that says where a task of a timeout was: who (when not NULL),
 * else its thread, as "thread#1 (worker-1)" when the scenario named it,
 * "MainThread" for task 0 without a name, else "thread#N"; then "was in: FRAME <- FRAME"
 * with the innermost frame first, each "FILE:LINE in FUNCTION" (FILE by
 * ploom_short_name() of sn, which may be NULL), or "had finished", "had
 * not run yet", "was in no Python code", "is not known (the dump of the
 * stacks was cut short)".  Newly malloc'd, NULL when out of memory. */
char *ploom_view_stack_line(const struct ploom_run *run, const struct ploom_stack *st,
			    const char *who, const struct ploom_short_names *sn);

/* What run's timed waits that timed out while the task they waited for
 * could still run (the stress time model's stalls: trace.h's stalled)
 * owe to whom, one sentence for them all: "a stall of thread#2 for 1.0 s
 * (MainThread's acquire of lock#0 timed out at step 4 while thread#2
 * could still run)", several joined by "; ".  NULL when there is none, or
 * when out of memory (then *oom is set).  Newly malloc'd. */
char *ploom_view_stalls(const struct ploom_run *run, int *oom);

/* Frees what v holds and zeroes it; v may be zeroed already. */
void ploom_view_release(struct ploom_view *v);

/* The tag of race k: a to z, then A to Z, then '+' for the rest. */
char ploom_view_race_tag(size_t k);

/* The number of code points (UTF-8: every byte that does not continue a
 * sequence) of s. */
size_t ploom_view_text_width(const char *s);

/* The length in bytes of the first n code points of s, all of s when it
 * has no more. */
size_t ploom_view_prefix(const char *s, size_t n);

/* The lane of task, 0 for a task the view has no lane for. */
size_t ploom_view_lane_of(const struct ploom_view *v, int task);

#endif
