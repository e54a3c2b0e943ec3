/* args.h - parsing the values of command-line options, shared by the
 * utilities so that every one accepts and rejects the same spellings. */
#ifndef PLOOM_ARGS_H
#define PLOOM_ARGS_H

/* A decimal integer in [min, max], nothing else (no sign unless min < 0,
 * no spaces, no trailing text).  Returns 0, or -1 leaving *out alone. */
int ploom_args_long(long *out, const char *s, long min, long max);

/* A non-negative, finite number of seconds ("10", "0.5").  Returns 0 or
 * -1. */
int ploom_args_seconds(double *out, const char *s);

/* A hash seed: a decimal integer in [0, 4294967295], the range of
 * PYTHONHASHSEED.  Writes its canonical spelling (no leading zeros) into
 * out (at least 11 bytes).  Returns 0 or -1. */
int ploom_args_seed(char out[11], const char *s);

#endif
