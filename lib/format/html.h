/* html.h - a trace drawn as one HTML page: what `ploom-show --format=html`
 * writes.
 *
 * Overview
 * --------
 * One self-contained HTML5 document: inline CSS and one inline SVG, no
 * script and nothing to fetch (its Content-Security-Policy forbids both,
 * so even a string that escaped its escaping could neither run nor call
 * out).  It reads the same offline and with JavaScript disabled, as a CI
 * artefact or a mail attachment.  From top to bottom:
 *
 *   1. the title (module:qualname), the outcome's summary, and a table of
 *      the header facts that the two do not already say, each once:
 *      target (unless it is the title's words), source, python, hash
 *      seed, config, steps, failure id, preemptions (and minimized from),
 *      and the race the failure rests on in words (ploom_races_key() and
 *      ploom_race_explain() of races.h);
 *   2. the diagram, an SVG: one swimlane per task that ploom_run_tasks()
 *      lists, side by side, each headed by its thread's name
 *      (ploom_run_task_name(): "MainThread", "mathieu"); time flows
 *      downward, one row per step, the step's number in a gutter on the
 *      left.  A step is a box in its task's lane reading the text
 *      rendering's label (ploom_run_step_label()), then " -> VALUE", and
 *      on a second line where the step stopped ("bank.py:21 withdraw")
 *      when the trace says; a line longer than PLOOM_HTML_CAPTION_MAX code
 *      points is cut, ending in "...", and the whole caption is the box's
 *      tooltip.  A preemption (ploom_run_is_preemption()) is an arrow from
 *      the step before it to it, with '*' beside its number; each step of
 *      a racing pair (ploom_trace_races()) has the pair's tag beside its
 *      number as the text has it (ploom_view_race_tag()), and the pair is
 *      a dashed arrow from its earlier step to its later one, the pair the
 *      failure rests on solid and bold, its tag and explanation the
 *      tooltip.  A pair's arrow leaves its earlier box leftwards, runs
 *      down a vertical track between the step numbers and the lanes, and
 *      enters its later box from the left: pairs whose rows overlap get
 *      tracks of their own (as few as the most pairs open in one row), and
 *      the pairs that meet at a box meet it at heights of their own, so no
 *      two arrows share a stretch of line; the failing step
 *      (ploom_run_failing_step()) is red, with '!'; a deadlock adds a
 *      last row, "wait", with what each blocked task waits for, in red;
 *   3. a legend for what the diagram shows;
 *   4. the outcome in full, as the text rendering has it: the exception
 *      and its traceback in a <pre>, the waits of a deadlock, the details
 *      of the other kinds; then the captured output in a <pre>.
 *
 * The page names each task as its lane does (ploom_run_task_name()): in
 * the summary, the outcome, the waits and the stacks of a timeout, where
 * the text says "task 1 (mathieu)".
 *
 * Every string taken from the trace is escaped (& < > " ' become
 * entities), and its control characters are shown as '?' (newlines and
 * tabs kept in the traceback and the output), as the text rendering does.
 * UTF-8 passes through; the page declares it.
 *
 * What the page shows it takes from the view of the trace (view.h), as
 * the text rendering does, so that the two agree on every row and mark.
 *
 * The markup that tests and style sheets may rely on:
 *   <g class="lane" id="lane-T" data-task="T">      one per task, holding
 *     <text class="lane-title">                       its title and
 *     <g class="step" id="step-I" data-task="T">      its steps' boxes, the
 *                                                     failing one with
 *                                                     class "step failing"
 *     <g class="wait" data-task="T">                  and a deadlock's wait
 *   <path class="arrow preemption" data-from="I" data-to="J">
 *                                                     from step I to J
 *   <text class="tags">                              a step's race tags
 *   <path class="arrow race" data-from="I" data-to="J" data-tag="a"
 *         data-track="K">, "arrow race key"          a racing pair
 *
 * The page grows linearly with the trace: about 200 bytes a step.
 */
#ifndef PLOOM_HTML_H
#define PLOOM_HTML_H

#include <stdio.h>

#include "err.h"
#include "trace.h"

/* The longest caption a step's box shows, in code points. */
#define PLOOM_HTML_CAPTION_MAX 40

/* Writes the page of trace to out and flushes out.  The trace is only
 * read.
 *
 * Returns 0, or -1 with err filled: PLOOM_ERR_NOMEM and "out of memory"
 * (nothing written), or PLOOM_ERR_SYSTEM and "write error: STRERROR" when
 * a write or the flush failed.  After a write error errno is the error of
 * the failed write (EPIPE when the reader of a pipe went away, ENOSPC on a
 * full disk); the stream is not closed. */
int ploom_html_write(FILE *out, const struct ploom_trace *trace, struct ploom_err *err);

#endif
