/* decode.h - the worker protocol's decoder: the records a worker sends
 * for one run (event.h describes them) into a run of the trace model
 * (trace.h), and its hello record.  The utilities read workers with it
 * (worker.h); the extension, which only writes records, does not link
 * it.
 */
#ifndef PLOOM_DECODE_H
#define PLOOM_DECODE_H

#include <stddef.h>

#include "err.h"

struct ploom_run;

/* What the worker said in its `hello` record.  Strings malloc'd, released
 * by ploom_hello_release(). */
struct ploom_hello {
	int version;
	char *implementation;
	char *python_version;
	int gil;
	char *hash_seed;
	char *module;
	char *qualname;
	char *file;             /* NULL if unknown */
	/* what the worker instrumented (event.h's hello): the scenario's
	 * module, and the --instrument names under which it compiled one */
	int scenario_instrumented;
	char **instrumented;
	size_t ninstrumented;
	/* the source files of the modules it patched or instrumented
	 * (event.h's hello SOURCES), absolute */
	char **sources;
	size_t nsources;
	/* the scenario's project root (event.h's hello ROOT), absolute;
	 * NULL if unknown */
	char *root;
};

/* Parses the records of one run; the reader feeds it line by line. */
struct ploom_run_parser {
	struct ploom_run *run;
	long timeout_ms;        /* for a "timeout" exit */
	long nrecords;          /* of this run so far */
	long nstep_records;
	int have_outcome;
	int in_deadlock;        /* wait records allowed */
	int have_exit;
	int have_output;
	int in_stack;           /* frame records allowed: after a running stack */
	char exit_how[16];
	int exit_code;
	int done;
};

/* Starts parsing into run, which must be zeroed or released. */
void ploom_run_parser_init(struct ploom_run_parser *p, struct ploom_run *run,
			   long timeout_ms);

/* Parses one record (len bytes, without the newline).  Returns 1 after
 * `done` (the run is then finished with ploom_run_finish()), 0 when more
 * records are expected, -1 with err filled on a malformed or unexpected
 * record ("malformed record from the worker: 'RECORD' (WHY)"), or on the
 * worker's `error command` ("the worker refused the command: WHY"); all
 * PLOOM_ERR_WORKER. */
int ploom_run_parser_line(struct ploom_run_parser *p, const char *line, size_t len,
			  struct ploom_err *err);

/* Parses a whole canned stream (lines ending in '\n') into *out, as the
 * worker reader would.  Returns 0, or -1 with err filled, including for a
 * stream that ends before `done`. */
int ploom_run_parse_text(struct ploom_run *out, const char *text, size_t len,
			 long timeout_ms, struct ploom_err *err);

/* Parses a `hello` line into *out (zeroed by the caller; release with
 * ploom_hello_release()), or an `error` line into err: "cannot load
 * scenario 'TARGET': MESSAGE" (kind PLOOM_ERR_INPUT) for "load", MESSAGE
 * (kind PLOOM_ERR_DIVERGENCE) for "source".  Returns 0 or -1. */
int ploom_hello_parse(struct ploom_hello *out, const char *line, size_t len,
		      const char *target, struct ploom_err *err);
void ploom_hello_release(struct ploom_hello *h);

#endif
