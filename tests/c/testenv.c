/* The tests' sizes and seeds from the environment; testenv.h documents
 * them. */
#include "testenv.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* value as a whole number from min to max, digits only: strtoul() alone
 * would take a sign, leading spaces, or a prefix of "1x".  Exits 2 naming
 * name and saying what it must be (what) otherwise. */
static unsigned long whole(const char *name, const char *value, unsigned long min,
			   unsigned long max, const char *what)
{
	const char *p = value;
	unsigned long v;

	while (*p >= '0' && *p <= '9')
		p++;
	errno = 0;
	v = p != value && !*p ? strtoul(value, NULL, 10) : 0;
	if (p == value || *p || errno || v < min || v > max) {
		fprintf(stderr, "%s: %s='%s' is not %s from %lu to %lu\n",
			program_invocation_short_name, name, value, what, min, max);
		exit(2);
	}
	return v;
}

long testenv_count(const char *name, long def)
{
	const char *value = getenv(name);

	if (!value)
		return def;
	return (long)whole(name, value, 1, LONG_MAX, "a count: a whole number");
}

int testenv_seed(const char *name, unsigned long *out)
{
	const char *value = getenv(name);

	if (!value)
		return 0;
	*out = whole(name, value, 0, ULONG_MAX, "a seed: a whole number");
	return 1;
}
