/* fuzz_saved.c - libFuzzer target for what a search reads of its saved
 * traces before it runs them, and what the worker reads of them.
 *
 * The input is tried three ways, each cheap when it is not its kind:
 *
 *   - as a trace (ploom_trace_parse(), as ploom-explore reads each saved
 *     one): when it parses, ploom_saved_of_scenario() tells whether it is
 *     a failure of the scenario; its plain points go into a config as
 *     the search's own worker takes them (ploom_config_own_lists(), then
 *     ploom_config_add_plain_point_list()), each once; then through the
 *     worker's `points` line and back (ploom_enc_points(),
 *     ploom_points_parse()), which must give them again; and its follow
 *     (ploom_replay_follow_cmd()) is written as a `run` command and read
 *     back as the worker reads it, then its policy chooses at each
 *     recorded branch point, which must be the recorded task: on the
 *     recorded source a follow is the recorded run.
 *   - as a `points` line the worker reads on fd 5 (ploom_points_parse()):
 *     a list it takes must hold only keys of site-key bytes.
 *   - when it starts with "D\n", as the names of files in a saved-trace
 *     folder, one a line (at most 8): ploom_saved_list() must list only
 *     regular files named <16 hex digits>-minimized.json or
 *     -original.json, one per id, at most its max.
 *
 * Everything is freed before returning, so LeakSanitizer's report at exit
 * names any leak.  `make fuzz` builds and runs it. */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/decode.h"
#include "../../lib/event.h"
#include "../../lib/json.h"
#include "../../lib/policy.h"
#include "../../lib/replay.h"
#include "../../lib/saved.h"
#include "../../lib/trace.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A scratch folder of this process, emptied after each listing. */
static char folder[64];

/* Each listing empties it, so at exit it is empty. */
static void remove_folder(void)
{
	(void)rmdir(folder);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(folder, sizeof(folder), "/tmp/fuzz_saved.XXXXXX");
	if (!mkdtemp(folder)) {
		perror("fuzz_saved: cannot make a scratch folder");
		abort();
	}
	atexit(remove_folder);
	return 0;
}

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_saved: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

static void check_message(int r, const struct ploom_err *err, const char *what)
{
	if (r < 0 && (!err->msg[0] || strchr(err->msg, '\n')))
		fail(what, "an error message must be one line, not empty");
}

/* The plain points of a trace: into a config each once, through the
 * `points` line and back. */
static void plain_points(const struct ploom_trace *trace)
{
	struct ploom_config own = trace->config;
	struct ploom_err err = {0, ""};
	struct ploom_points back;
	struct ploom_buf b = {0};
	size_t i;
	int r;

	if (ploom_config_own_lists(&own, &trace->config, &err) < 0)
		fail("cannot copy the lists of a trace that parsed", err.msg);
	if (own.nplain_points != trace->config.nplain_points)
		fail("a copy of the plain points lost some", NULL);
	/* added again: nothing is new */
	r = ploom_config_add_plain_point_list(&own, (const char *const *)trace->config.plain_points,
					      trace->config.nplain_points, &err);
	if (r != 0)
		fail("the plain points of a trace were added twice", err.msg);
	if (own.nplain_points) {
		ploom_enc_points(&b, (const char *const *)own.plain_points, own.nplain_points);
		if (ploom_points_parse(&back, b.data, b.len, &err) < 0)
			fail("the worker cannot read the points of a trace that parsed", err.msg);
		if (back.n != own.nplain_points)
			fail("the points line lost points", NULL);
		for (i = 0; i < back.n; i++)
			if (strcmp(back.keys[i], own.plain_points[i]))
				fail("the points line changed a key", back.keys[i]);
		ploom_points_release(&back);
		ploom_buf_release(&b);
	}
	ploom_config_release_lists(&own);
}

/* The follow of a trace: its command read back as the worker reads it,
 * and its choices on the recorded steps the recorded tasks. */
static void follow(const struct ploom_trace *trace)
{
	struct ploom_run_cmd cmd, got;
	struct ploom_policy policy;
	struct ploom_err err = {0, ""};
	struct ploom_buf b = {0};
	size_t i, j;
	int next = 0;

	if (ploom_replay_follow_cmd(&cmd, trace, trace->config.max_steps, 1000, &err) < 0)
		fail("cannot make the follow of a trace that parsed", err.msg);
	ploom_enc_run(&b, &cmd);
	if (b.len > PLOOM_MAX_RUN_CMD_BYTES)
		fail("a follow's command is longer than the worker reads", NULL);
	if (ploom_run_cmd_parse(&got, b.data, b.len - 1, &err) < 0)
		fail("the worker cannot read the follow of a trace that parsed", err.msg);
	if (got.policy.kind != PLOOM_POLICY_FOLLOW || got.policy.nfollow != cmd.policy.nfollow ||
	    (cmd.policy.nfollow && memcmp(got.policy.follow, cmd.policy.follow,
					  cmd.policy.nfollow * sizeof(*cmd.policy.follow))))
		fail("a follow's command read back is another one", NULL);
	if (ploom_policy_init(&policy, &got.policy, &err) < 0)
		fail("a follow's policy is refused", err.msg);
	for (i = 0; i < trace->run.nsteps; i++) {
		const struct ploom_step *s = &trace->run.steps[i];
		int in = 0, c;

		/* the tasks come into being in order of their ids */
		for (j = 0; j < s->nenabled; j++) {
			while (next <= s->enabled[j] && next < PLOOM_MAX_TASK_ID)
				if (ploom_policy_add_task(&policy, next++, &err) < 0)
					fail("a follow's policy refuses a task", err.msg);
			in |= s->enabled[j] == s->task;
		}
		if (s->nenabled < 2 || !in)
			continue;
		c = ploom_policy_choose(&policy, (long)i, s->enabled, s->nenabled,
					i ? trace->run.steps[i - 1].task : -1);
		if (c != s->task)
			fail("a follow on the recorded steps left the recorded order", NULL);
	}
	ploom_policy_release(&policy);
	ploom_run_cmd_release(&got);
	ploom_run_cmd_release(&cmd);
	ploom_buf_release(&b);
}

static void as_trace(const uint8_t *data, size_t size)
{
	static const struct ploom_hello hello = {
		.version = PLOOM_PROTOCOL_VERSION,
		.implementation = (char *)"cpython",
		.python_version = (char *)"3.13.0",
		.gil = 1,
		.hash_seed = (char *)"0",
		.module = (char *)"bank_account",
		.qualname = (char *)"scenario",
		.file = (char *)"/src/bank_account.py",
	};
	struct ploom_trace *trace = NULL;
	struct ploom_err err = {0, ""};
	int r = ploom_trace_parse(&trace, (const char *)data, size, &err);

	check_message(r, &err, "ploom_trace_parse");
	if (r < 0)
		return;
	r = ploom_saved_of_scenario(trace, &hello);
	if (r != 0 && r != 1)
		fail("ploom_saved_of_scenario says neither yes nor no", NULL);
	plain_points(trace);
	follow(trace);
	ploom_trace_free(trace);
}

static int key_byte(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == ':';
}

static void as_points(const uint8_t *data, size_t size)
{
	struct ploom_points points;
	struct ploom_err err = {0, ""};
	size_t i, j;
	int r = ploom_points_parse(&points, (const char *)data, size, &err);

	check_message(r, &err, "ploom_points_parse");
	if (r == 0) {
		if (!points.n || points.n > PLOOM_PLAIN_POINTS_MAX)
			fail("a points line taken with a count out of range", NULL);
		for (i = 0; i < points.n; i++) {
			size_t len = strlen(points.keys[i]);
			if (!len || len > PLOOM_POINT_KEY_MAX)
				fail("a key taken of a length no site key has", points.keys[i]);
			for (j = 0; j < len; j++)
				if (!key_byte(points.keys[i][j]))
					fail("a key taken with a byte no site key has", points.keys[i]);
		}
	}
	ploom_points_release(&points);
}

static int saved_name(const char *name)
{
	size_t i;

	for (i = 0; i < 16; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return 0;
	return !strcmp(name + 16, "-minimized.json") || !strcmp(name + 16, "-original.json");
}

static void empty_folder(void)
{
	DIR *d = opendir(folder);
	struct dirent *de;
	char path[512];

	if (!d)
		fail("the scratch folder is gone", folder);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", folder, de->d_name);
			if (unlink(path) < 0 && rmdir(path) < 0)
				fail("cannot empty the scratch folder", path);
		}
	closedir(d);
}

/* "D\n" then names: files (a name ending in '/' a folder) in the scratch
 * folder, listed with a max of the input's length mod 4. */
static void as_folder(const uint8_t *data, size_t size)
{
	struct ploom_saved_list list;
	struct ploom_err err = {0, ""};
	const char *p = (const char *)data + 2, *end = (const char *)data + size;
	size_t max = size % 4, i, j, made = 0;
	char name[256], path[512];

	while (p < end && made < 8) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl : end) - p);

		if (len && len < sizeof(name) && !memchr(p, '/', len - 1) && !memchr(p, 0, len)) {
			memcpy(name, p, len);
			name[len] = 0;
			if (strcmp(name, ".") && strcmp(name, "..") && strcmp(name, "./") &&
			    strcmp(name, "../") && strcmp(name, "/")) {
				snprintf(path, sizeof(path), "%s/%s", folder, name);
				if (name[len - 1] == '/') {
					path[strlen(path) - 1] = 0;
					(void)mkdir(path, 0700);
				} else {
					int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
					if (fd >= 0)
						close(fd);
				}
				made++;
			}
		}
		p = nl ? nl + 1 : end;
	}
	if (ploom_saved_list(&list, folder, max, &err) < 0)
		fail("cannot list the scratch folder", err.msg);
	if (list.n > max)
		fail("more listed than asked for", NULL);
	for (i = 0; i < list.n; i++) {
		const char *base = list.paths[i] + strlen(folder) + 1;
		struct stat st;

		if (strncmp(list.paths[i], folder, strlen(folder)) || !saved_name(base))
			fail("a listed file is no saved trace's", list.paths[i]);
		if (lstat(list.paths[i], &st) < 0 || !S_ISREG(st.st_mode))
			fail("a listed file is not a regular file", list.paths[i]);
		for (j = 0; j < i; j++)
			if (!strncmp(list.paths[j] + strlen(folder) + 1, base, 16))
				fail("an id listed twice", base);
	}
	ploom_saved_list_release(&list);
	empty_folder();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 2 && data[0] == 'D' && data[1] == '\n') {
		as_folder(data, size);
		return 0;
	}
	as_points(data, size);
	as_trace(data, size);
	return 0;
}
