/* Tests of lib/saved: which files of a trace folder are saved failures to
 * run before a search, in which order, and whose scenario they are. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/saved.h"
#include "check.h"

/* Writes dir/name with a modification time of t seconds. */
static void make_file(const char *dir, const char *name, long t)
{
	struct timespec times[2] = {{t, 0}, {t, 0}};
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!CHECK(f != NULL))
		return;
	fputs("{}\n", f);
	fclose(f);
	CHECK_INT(utimensat(AT_FDCWD, path, times, 0), 0);
}

/* The list's i-th path without its folder, or NULL. */
static const char *name_at(const struct ploom_saved_list *l, size_t i)
{
	const char *slash;

	if (i >= l->n)
		return NULL;
	slash = strrchr(l->paths[i], '/');
	return slash ? slash + 1 : l->paths[i];
}

static void list_takes_one_file_per_id_newest_first(void)
{
	char dir[] = "/tmp/ploom-test-saved-XXXXXX", path[512];
	struct ploom_err err = {0, ""};
	struct ploom_saved_list l = {0};

	if (!CHECK(mkdtemp(dir) != NULL))
		return;
	/* a pair: its minimized trace stands for it, even when older */
	make_file(dir, "aaaaaaaaaaaaaaaa-original.json", 300);
	make_file(dir, "aaaaaaaaaaaaaaaa-minimized.json", 100);
	make_file(dir, "bbbbbbbbbbbbbbbb-original.json", 200);
	make_file(dir, "cccccccccccccccc-minimized.json", 400);
	/* not a saved trace's name */
	make_file(dir, "dddddddddddddddd-original.json.x1b2c3.tmp", 500);
	make_file(dir, "DDDDDDDDDDDDDDDD-original.json", 500);
	make_file(dir, "eeee-original.json", 500);
	make_file(dir, "notes.txt", 500);
	/* nor a link, nor a folder */
	snprintf(path, sizeof(path), "%s/ffffffffffffffff-original.json", dir);
	CHECK_INT(symlink("/dev/zero", path), 0);
	snprintf(path, sizeof(path), "%s/0000000000000000-minimized.json", dir);
	CHECK_INT(mkdir(path, 0700), 0);

	CHECK_INT(ploom_saved_list(&l, dir, 10, &err), 0);
	CHECK_INT(l.n, 3);
	CHECK_STR(name_at(&l, 0), "cccccccccccccccc-minimized.json");
	CHECK_STR(name_at(&l, 1), "bbbbbbbbbbbbbbbb-original.json");
	CHECK_STR(name_at(&l, 2), "aaaaaaaaaaaaaaaa-minimized.json");
	ploom_saved_list_release(&l);

	/* at most max, the newest */
	CHECK_INT(ploom_saved_list(&l, dir, 2, &err), 0);
	CHECK_INT(l.n, 2);
	CHECK_STR(name_at(&l, 1), "bbbbbbbbbbbbbbbb-original.json");
	ploom_saved_list_release(&l);

	/* no folder, or a file in the way: nothing saved */
	snprintf(path, sizeof(path), "%s/none", dir);
	CHECK_INT(ploom_saved_list(&l, path, 10, &err), 0);
	CHECK_INT(l.n, 0);
	ploom_saved_list_release(&l);
	snprintf(path, sizeof(path), "%s/notes.txt/x", dir);
	CHECK_INT(ploom_saved_list(&l, path, 10, &err), 0);
	CHECK_INT(l.n, 0);
	ploom_saved_list_release(&l);

	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	CHECK_INT(system(path), 0);
}

static void of_scenario_is_a_failure_of_the_same_module_and_function(void)
{
	struct ploom_trace *t = ploom_trace_new();
	struct ploom_hello hello = {0};

	if (!CHECK(t != NULL))
		return;
	hello.module = (char *)"bank";
	hello.qualname = (char *)"scenario";
	t->scenario.module = strdup("bank");
	t->scenario.qualname = strdup("scenario");
	t->run.outcome.kind = PLOOM_OUTCOME_FAILURE;
	CHECK_INT(ploom_saved_of_scenario(t, &hello), 1);
	t->run.outcome.kind = PLOOM_OUTCOME_DEADLOCK;
	CHECK_INT(ploom_saved_of_scenario(t, &hello), 1);
	/* a step limit is no failure to find again */
	t->run.outcome.kind = PLOOM_OUTCOME_STEP_LIMIT;
	CHECK_INT(ploom_saved_of_scenario(t, &hello), 0);
	t->run.outcome.kind = PLOOM_OUTCOME_FAILURE;
	hello.qualname = (char *)"locked";
	CHECK_INT(ploom_saved_of_scenario(t, &hello), 0);
	hello.qualname = (char *)"scenario";
	hello.module = (char *)"bank2";
	CHECK_INT(ploom_saved_of_scenario(t, &hello), 0);
	free(t->scenario.module);
	t->scenario.module = NULL;
	CHECK_INT(ploom_saved_of_scenario(t, &hello), 0);
	ploom_trace_free(t);
}

int main(void)
{
	list_takes_one_file_per_id_newest_first();
	of_scenario_is_a_failure_of_the_same_module_and_function();
	return check_report();
}
