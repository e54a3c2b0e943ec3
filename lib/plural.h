/* The plural of a count's noun, in the one place the utilities decide it. */
#ifndef PLOOM_PLURAL_H
#define PLOOM_PLURAL_H

/* "s" unless n is 1: "1 schedule", "0 schedules", "2 schedules" */
static inline const char *ploom_s(long n)
{
	return n == 1 ? "" : "s";
}

#endif
