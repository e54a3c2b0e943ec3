/* Files, a stand-in worker and traces for the C unit tests; fake.h
 * documents them. */
#include "fake.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *fake_dir(const char *what)
{
	char *dir = NULL;

	if (asprintf(&dir, "/tmp/ploom-test-%s-XXXXXX", what) < 0 || !mkdtemp(dir))
		abort();
	return dir;
}

void fake_dir_remove(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *path;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (asprintf(&path, "%s/%s", dir, e->d_name) < 0)
			abort();
		unlink(path);
		free(path);
	}
	closedir(d);
	rmdir(dir);
}

char *fake_write(const char *dir, const char *name, const char *text, int executable)
{
	char *path = NULL;
	FILE *f;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		abort();
	f = fopen(path, "w");
	if (!f || fputs(text, f) == EOF || fclose(f) == EOF)
		abort();
	if (executable)
		chmod(path, 0755);
	return path;
}

char *fake_worker(const char *dir, const char *python_version, const char *file)
{
	char *body = NULL, *path;

	/* the str fields need no escaping for the paths the tests use */
	if (asprintf(&body,
		     "#!/bin/sh\n"
		     "here=\"$(dirname \"$0\")\"\n"
		     "echo \"hello %d =cpython =%s 1 =$PYTHONHASHSEED =mod =fn =%s 0 = = =\" >&3\n"
		     "while read -r cmd; do\n"
		     "\t[ \"$cmd\" = quit ] && exit 0\n"
		     "\techo \"$cmd\" >> \"$here/commands\"\n"
		     "\tcat \"$here/run.txt\" >&3\n"
		     "done\n"
		     "exit 0\n",
		     PLOOM_PROTOCOL_VERSION, python_version, file) < 0)
		abort();
	path = fake_write(dir, "python", body, 1);
	free(body);
	return path;
}

char *fake_read(const char *dir, const char *name)
{
	char *path = NULL, *text = NULL;
	size_t len = 0;
	FILE *f, *out;
	int c;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		abort();
	f = fopen(path, "r");
	free(path);
	if (!f)
		return NULL;
	out = open_memstream(&text, &len);
	while ((c = getc(f)) != EOF)
		putc(c, out);
	fclose(out);
	fclose(f);
	return text;
}

int fake_start(struct ploom_worker **out, const char *py, const char *target,
	       const char *hash_seed, struct ploom_err *err)
{
	struct ploom_worker_opts opts = {0};

	opts.python = py;
	opts.target = target;
	opts.hash_seed = hash_seed;
	return ploom_worker_start(out, &opts, err);
}

/* strdup() that never returns NULL for a non-NULL string. */
static char *fake_strdup(const char *s)
{
	char *copy = ploom_strdup(s);

	if (s && !copy)
		abort();
	return copy;
}

struct ploom_trace *fake_trace(const char *target, const char *module, const char *qualname,
			       const char *file, const char *hash_seed, long max_steps,
			       double timeout_s, const char *records)
{
	struct ploom_trace *t = ploom_trace_new();
	struct ploom_err err = {0, ""};

	if (!t)
		abort();
	t->scenario.target = fake_strdup(target);
	t->scenario.module = fake_strdup(module);
	t->scenario.qualname = fake_strdup(qualname);
	t->scenario.file = fake_strdup(file);
	t->python.implementation = fake_strdup("cpython");
	t->python.version = fake_strdup("3.13.0");
	t->python.gil = 1;
	t->hash_seed = fake_strdup(hash_seed);
	t->config.kind = PLOOM_SEARCH_UNSAID;
	t->config.max_steps = max_steps;
	t->config.schedule_timeout_s = timeout_s;
	if (records && ploom_run_parse_text(&t->run, records, strlen(records), 0, &err) < 0) {
		/* a test's records that do not parse are a bug in the test */
		fprintf(stderr, "fake_trace: the records do not parse: %s\n", err.msg);
		abort();
	}
	return t;
}

char *fake_replace(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	size_t before;
	char *out;

	if (!at)
		return NULL;
	before = (size_t)(at - text);
	if (asprintf(&out, "%.*s%s%s", (int)before, text, to, at + strlen(from)) < 0)
		abort();
	return out;
}
