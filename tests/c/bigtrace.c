/* The long trace of test_html and test_render; bigtrace.h documents it. */
#include "bigtrace.h"

#include <stdlib.h>
#include <string.h>

static int add_cell_step(struct ploom_run *run, int task, enum ploom_op op, const char *file,
			 int line)
{
	struct ploom_step *s = ploom_run_add_step(run);

	if (!s)
		return -1;
	s->index = (long)run->nsteps - 1;
	s->task = task;
	s->op = op;
	s->object = strdup("cell#0");
	s->obj = (struct ploom_obj){PLOOM_OBJ_CELL, 0};
	s->value = strdup("1");
	s->enabled = malloc(sizeof(int));
	s->where.file = strdup(file);
	s->where.function = strdup("work");
	s->where.line = line;
	if (!s->object || !s->value || !s->enabled || !s->where.file || !s->where.function)
		return -1;
	s->enabled[0] = task;
	s->nenabled = 1;
	return 0;
}

int bigtrace_fill(struct ploom_run *run, long writes, long reads)
{
	static const char *const files[] = {"/src/bank.py", "/a/util.py", "/b/util.py"};
	long i, n = writes + reads + 1;

	for (i = 0; i < n; i++) {
		int task = i == n - 1 ? 0 : 1 + (int)(i % 2);
		enum ploom_op op = i < writes || i == n - 1 ? PLOOM_OP_WRITE : PLOOM_OP_READ;
		if (add_cell_step(run, task, op, files[task], 10 * task + 5) < 0)
			return -1;
	}
	return 0;
}

long bigtrace_count(const char *text, const char *needle)
{
	size_t k = strlen(needle);
	long n = 0;

	for (; *text; text++) {
		if (*text == *needle && !strncmp(text, needle, k)) {
			n++;
			text += k - 1;
		}
	}
	return n;
}
