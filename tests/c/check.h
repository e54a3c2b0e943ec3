/* check.h - the few macros the C unit tests share.
 *
 * Each test program calls CHECK* as it goes (one line printed per failed
 * check, naming file and line) and ends main() with
 * `return check_report();`, which prints "N passed, N failed" and
 * returns nonzero if any check failed.  The helpers are inline, so a test
 * that uses only some of them compiles without warnings. */
#ifndef PLOOM_TEST_CHECK_H
#define PLOOM_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_passed, check_failed;

static inline int check_true(int ok, const char *what, const char *file, int line)
{
	if (ok) {
		check_passed++;
	} else {
		check_failed++;
		printf("%s:%d: check failed: %s\n", file, line, what);
	}
	return ok;
}

static inline int check_long(long got, long want, const char *what, const char *file, int line)
{
	if (got == want) {
		check_passed++;
		return 1;
	}
	check_failed++;
	printf("%s:%d: check failed: %s is %ld, want %ld\n", file, line, what, got, want);
	return 0;
}

static inline int check_str(const char *got, const char *want, const char *what, const char *file,
		     int line)
{
	if (got && want && !strcmp(got, want)) {
		check_passed++;
		return 1;
	}
	if (!got && !want) {
		check_passed++;
		return 1;
	}
	check_failed++;
	printf("%s:%d: check failed: %s is '%s', want '%s'\n", file, line, what,
	       got ? got : "(null)", want ? want : "(null)");
	return 0;
}

#define CHECK(cond) check_true(!!(cond), #cond, __FILE__, __LINE__)
#define CHECK_INT(got, want) check_long((long)(got), (long)(want), #got, __FILE__, __LINE__)
#define CHECK_STR(got, want) check_str((got), (want), #got, __FILE__, __LINE__)

static inline int check_report(void)
{
	printf("%d passed, %d failed\n", check_passed, check_failed);
	return check_failed ? 1 : 0;
}

#endif
