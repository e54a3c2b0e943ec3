/* vecs.h - the choice vectors of runs as strings ("1,0,2"), to compare
 * the schedules that two searches ran as sets (test_explore, test_shard). */
#ifndef PLOOM_TEST_VECS_H
#define PLOOM_TEST_VECS_H

#include <stddef.h>

#include "../../lib/trace.h"

struct vecs {
	char **v;
	size_t n, cap;
};

/* Adds run's choices; aborts when memory runs out. */
void vecs_add(struct vecs *vs, const struct ploom_run *run);

/* Sorts the strings, so that two sets compare entry by entry. */
void vecs_sort(struct vecs *vs);

/* Frees the strings and zeroes vs. */
void vecs_release(struct vecs *vs);

#endif
