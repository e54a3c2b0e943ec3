/* Files and a stand-in worker for the C unit tests; fake.h documents them. */
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
		     "echo \"hello 1 =cpython =%s 1 =$PYTHONHASHSEED =mod =fn =%s\" >&3\n"
		     "while read -r cmd; do\n"
		     "\t[ \"$cmd\" = quit ] && exit 0\n"
		     "\techo \"$cmd\" >> \"$here/commands\"\n"
		     "\tcat \"$here/run.txt\" >&3\n"
		     "done\n"
		     "exit 0\n",
		     python_version, file) < 0)
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
