/* Option values; args.h documents them. */
#include "args.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int ploom_args_long(long *out, const char *s, long min, long max)
{
	char *end;
	long v;

	/* strtol would accept leading spaces and a '+' */
	if (!((*s >= '0' && *s <= '9') || (*s == '-' && min < 0)))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int ploom_args_seconds(double *out, const char *s)
{
	char *end;
	double v;

	if (!((*s >= '0' && *s <= '9') || *s == '.'))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || end == s || !isfinite(v) || v < 0 || v > PLOOM_ARGS_MAX_SECONDS)
		return -1;
	*out = v;
	return 0;
}

int ploom_args_seed(char out[11], const char *s)
{
	long v;

	if (ploom_args_long(&v, s, 0, PLOOM_ARGS_MAX_SEED) < 0)
		return -1;
	snprintf(out, 11, "%ld", v);
	return 0;
}
