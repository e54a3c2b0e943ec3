/* fake.h - files, a stand-in worker and traces for the C unit tests.
 *
 * The stand-in worker is a /bin/sh script that the tests pass as the
 * interpreter (struct ploom_worker_opts.python): it gets the same
 * arguments, descriptors and environment as `python -m ploom._worker`,
 * says hello with a given Python version and source file, and answers
 * every `run` command with the records in DIR/run.txt (which a test may
 * rewrite between runs), appending each command to DIR/commands.
 */
#ifndef PLOOM_TEST_FAKE_H
#define PLOOM_TEST_FAKE_H

#include "../../lib/err.h"
#include "../../lib/trace.h"
#include "../../lib/worker.h"

/* A new empty directory /tmp/ploom-test-WHAT-XXXXXX; malloc'd path, the
 * caller frees it (after fake_dir_remove()).  Aborts on failure. */
char *fake_dir(const char *what);

/* Removes the directory and the files in it (not subdirectories). */
void fake_dir_remove(const char *dir);

/* Writes text to DIR/NAME (mode 0755 when executable) and returns the
 * malloc'd path.  Aborts on failure. */
char *fake_write(const char *dir, const char *name, const char *text, int executable);

/* Writes the stand-in worker DIR/python (see above), whose hello reports
 * python_version ("3.13.0") and file (the scenario's source, "" for
 * unknown).  Returns its malloc'd path. */
char *fake_worker(const char *dir, const char *python_version, const char *file);

/* DIR/NAME's contents, malloc'd, or NULL if it cannot be read. */
char *fake_read(const char *dir, const char *name);

/* ploom_worker_start() of the interpreter PY (a stand-in) on TARGET with
 * HASH_SEED: its result, *out and err as it leaves them. */
int fake_start(struct ploom_worker **out, const char *py, const char *target,
	       const char *hash_seed, struct ploom_err *err);

/* A new trace of the scenario TARGET (MODULE, QUALNAME) in FILE (NULL:
 * unknown), recorded by CPython 3.13.0 with the GIL under HASH_SEED, with
 * reduction "none", MAX_STEPS and a timeout of TIMEOUT_S seconds; its run
 * is RECORDS parsed (worker.h's text form), or empty when RECORDS is
 * NULL.  The caller frees it with ploom_trace_free().  Aborts, saying
 * why, when the records do not parse or memory runs out. */
struct ploom_trace *fake_trace(const char *target, const char *module, const char *qualname,
			       const char *file, const char *hash_seed, long max_steps,
			       double timeout_s, const char *records);

/* TEXT with its first FROM replaced by TO, malloc'd; NULL when TEXT has
 * no FROM.  Aborts when memory runs out. */
char *fake_replace(const char *text, const char *from, const char *to);

#endif
