/* testenv.h - the sizes and seeds that the C tests read from the
 * environment (PLOOM_DPOR_PROGRAMS=N and the like, see the Makefile's
 * test-c).
 *
 * Every such variable is read here, never with atol() or strtoul() alone:
 * those read "0", "1x" or "" as a number, and a test told to compare zero
 * programs compares nothing and passes.  A value that is not what the
 * variable must hold ends the program at once with exit 2 and one line on
 * stderr naming the program, the variable and its value
 * ("test_dpor: PLOOM_DPOR_PROGRAMS='0' is not a count: a whole number from
 * 1 to ..."), so that a test program reads
 * its variables first, before any test runs. */
#ifndef PLOOM_TEST_TESTENV_H
#define PLOOM_TEST_TESTENV_H

/* A count (of programs, of operations): name's value, a whole number in
 * decimal from 1 to LONG_MAX with nothing around it, or def when name is
 * not set. */
long testenv_count(const char *name, long def);

/* A seed: 1 with *out set to name's value, a whole number in decimal from
 * 0 to ULONG_MAX with nothing around it; 0 when name is not set. */
int testenv_seed(const char *name, unsigned long *out);

#endif
