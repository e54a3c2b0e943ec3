/* args.h - parsing the values of command-line options, shared by the
 * utilities so that every one accepts and rejects the same spellings. */
#ifndef PLOOM_ARGS_H
#define PLOOM_ARGS_H

/* A decimal integer in [min, max], nothing else (no sign unless min < 0,
 * no spaces, no trailing text).  Returns 0, or -1 leaving *out alone. */
int ploom_args_long(long *out, const char *s, long min, long max);

/* The largest number of seconds an option may give. */
#define PLOOM_ARGS_MAX_SECONDS 1e9

/* A finite number of seconds from 0 to PLOOM_ARGS_MAX_SECONDS ("10",
 * "0.5").  Returns 0 or -1. */
int ploom_args_seconds(double *out, const char *s);

/* The largest hash seed: PYTHONHASHSEED's. */
#define PLOOM_ARGS_MAX_SEED 4294967295L

/* A hash seed: a decimal integer in [0, PLOOM_ARGS_MAX_SEED].  Writes its canonical spelling (no leading zeros) into
 * out (at least 11 bytes).  Returns 0 or -1. */
int ploom_args_seed(char out[11], const char *s);

#endif
