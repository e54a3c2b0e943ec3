/* bigtrace.h - the long trace that test_html and test_render both render
 * whole, and counting in their megabytes of output. */
#ifndef PLOOM_TEST_BIGTRACE_H
#define PLOOM_TEST_BIGTRACE_H

#include "../../lib/trace.h"

/* Appends writes + reads + 1 steps to run: tasks 1 and 2 take turns
 * writing cell#0 (each write races with the one before), then take turns
 * reading it (the first read races with the last write), then task 0
 * writes it, racing with each task's last read.  Task 0 stops in
 * /src/bank.py:5, task 1 in /a/util.py:15, task 2 in /b/util.py:25 (two
 * files with one last component).  Each step is the only one enabled.
 * Returns 0, or -1 when out of memory. */
int bigtrace_fill(struct ploom_run *run, long writes, long reads);

/* How many times needle occurs in text, not overlapping.  By hand: the
 * sanitizers' strstr() and memmem() check the whole rest of the text at
 * each call, which makes counting in a page of megabytes quadratic. */
long bigtrace_count(const char *text, const char *needle);

#endif
