/* labels.h - the words a person reads for a run: short names for its
 * files, labels for its steps and waits, the config line and an outcome's
 * detail, which every rendering of a trace (view.h) words them with.
 */
#ifndef PLOOM_LABELS_H
#define PLOOM_LABELS_H

#include "config.h"
#include "err.h"
#include "trace.h"

/* Short names for the files of a run's where, as a person reads them
 * beside a step, each telling where the file comes from:
 *   - a file of a Python installation, relative to the folder it comes
 *     from there, which is named in brackets: "<site-packages>/" after the
 *     last site-packages component ("<dist-packages>/" for Debian's),
 *     else "<stdlib>/" after lib/pythonX.Y/ (or lib64/, pythonX.Yt/),
 *     as "<stdlib>/queue.py"; whether absolute or relative to the root (a
 *     virtual environment inside the repository);
 *   - else a file relative to the trace's root as it is
 *     ("examples/bank_account.py"), and a name such as "<string>";
 *   - else (an absolute file) its last component, or the whole file when
 *     another file of the run is shown with, or ends in, the same one. */
struct ploom_short_names;

/* Collects the files of run's steps and waits.  On success the caller
 * owns *out (ploom_short_names_free()); -1 with err filled when out of
 * memory.  The run must outlive *out, unchanged. */
int ploom_short_names_new(struct ploom_short_names **out, const struct ploom_run *run,
			  struct ploom_err *err);

/* The short name of file, owned by sn or pointing into file (valid while
 * both are); a file that is not the run's as if it were the only one. */
const char *ploom_short_name(const struct ploom_short_names *sn, const char *file);

/* Frees sn; accepts NULL. */
void ploom_short_names_free(struct ploom_short_names *sn);

/* Labels for a person, each newly malloc'd (the caller frees it), NULL
 * when out of memory; every rendering of a trace words steps with them.
 *
 * ploom_run_step_label(): the step's own label when it has one ("put 3"),
 * else "OP OBJECT (MODE)", the object by ploom_run_display_name(), as
 * "acquire lock_a (timeout)".
 * ploom_run_wait_object(): a deadlock wait's object by its display name
 * when it names an object of the run, else as recorded ("?" for none).
 * ploom_run_wait_label(): ploom_wait_words() with the run's names. */
char *ploom_run_step_label(const struct ploom_run *run, const struct ploom_step *s);
char *ploom_run_wait_object(const struct ploom_run *run, const char *object);
char *ploom_run_wait_label(const struct ploom_run *run, const struct ploom_wait *wt, int brief);

/* An outcome's summary without its leading "KIND: ", for a rendering
 * that has said the kind; "" when it has none.  Points into o. */
const char *ploom_outcome_detail(const struct ploom_outcome *o);

/* The config line a person reads: "reduction none, max_preemptions none,
 * max_steps 10000, schedule_timeout 10 s", then the patched modules, the
 * instrumented ones ("instrument the scenario,mylib.pool") and a sample's
 * search, seed and depth when there are.  Newly malloc'd (the
 * caller frees it and escapes it for its medium: names come from the
 * trace), NULL when out of memory. */
char *ploom_config_label(const struct ploom_config *c);

/* "examples/bank_account.py:20 withdraw", the file by ploom_short_name(): 0 with
 * *out malloc'd (the caller frees it), or NULL when w is nowhere known; -1
 * with *out NULL when out of memory. */
int ploom_where_label(char **out, const struct ploom_short_names *sn,
		      const struct ploom_where *w);

#endif
