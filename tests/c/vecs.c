/* Choice vectors as strings; vecs.h documents them. */
#include "vecs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vecs_add(struct vecs *vs, const struct ploom_run *run)
{
	char *s = malloc(run->nchoices * 12 + 1), *p = s;
	size_t i;

	if (!s)
		abort();
	*p = '\0';
	for (i = 0; i < run->nchoices; i++)
		p += sprintf(p, i ? ",%d" : "%d", run->choices[i]);
	if (vs->n == vs->cap) {
		vs->cap = vs->cap ? 2 * vs->cap : 256;
		vs->v = realloc(vs->v, vs->cap * sizeof(*vs->v));
		if (!vs->v)
			abort();
	}
	vs->v[vs->n++] = s;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void vecs_sort(struct vecs *vs)
{
	if (vs->n)
		qsort(vs->v, vs->n, sizeof(*vs->v), cmp_str);
}

void vecs_release(struct vecs *vs)
{
	size_t i;

	for (i = 0; i < vs->n; i++)
		free(vs->v[i]);
	free(vs->v);
	memset(vs, 0, sizeof(*vs));
}
