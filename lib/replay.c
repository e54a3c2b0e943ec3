/* Replaying one saved schedule; replay.h documents the checks. */
#include "replay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode.h"
#include "event.h"
#include "fingerprint.h"
#include "source.h"

/* Blob ids are shown as git shows them in one-line output. */
#define SHORT_OID 7

const struct ploom_fingerprint *ploom_replay_scenario_fingerprint(const struct ploom_trace *trace)
{
	size_t i;

	for (i = 0; trace->scenario.file && i < trace->nfingerprints; i++)
		if (!strcmp(trace->fingerprints[i].path, trace->scenario.file))
			return &trace->fingerprints[i];
	return NULL;
}

/* The current directory, ending in '/': 1 and *out malloc'd, or -1 with
 * err filled. */
static int cwd_dir(char **out, struct ploom_err *err)
{
	char *cwd, *p;
	size_t n;

	*out = NULL;
	cwd = getcwd(NULL, 0);
	if (!cwd)
		return ploom_err_set(err, PLOOM_ERR_SYSTEM,
				     "cannot read the current directory: %s", strerror(errno));
	n = strlen(cwd);
	p = realloc(cwd, n + 2);
	if (!p) {
		free(cwd);
		return ploom_err_oom(err);
	}
	if (p[n - 1] != '/')
		strcpy(p + n, "/");
	*out = p;
	return 1;
}

/* A regular file at dir (ending in '/') + rel: 1 yes, 0 no, -1 out of
 * memory. */
static int holds_file(const char *dir, const char *rel)
{
	struct stat st;
	char *file = NULL;
	int r;

	if (asprintf(&file, "%s%s", dir, rel) < 0)
		return -1;
	r = stat(file, &st) == 0 && S_ISREG(st.st_mode);
	free(file);
	return r;
}

/* The root of a trace recorded against its project (source.root
 * "project"): the nearest folder at or above the current directory that
 * holds a regular file at rel, ending in '/': 1 and *out malloc'd, 0
 * when none does (*out the current directory, for the message), -1 with
 * err filled. */
static int project_root_here(char **out, const char *rel, struct ploom_err *err)
{
	char *dir, *slash;
	int r;

	if (cwd_dir(out, err) < 0)
		return -1;
	dir = strdup(*out);
	if (!dir)
		return ploom_err_oom(err);
	for (;;) {
		r = holds_file(dir, rel);
		if (r != 0)
			break;
		if (!strcmp(dir, "/"))
			break;
		/* drop the last component, keeping the '/' before it */
		dir[strlen(dir) - 1] = '\0';
		slash = strrchr(dir, '/');
		slash[1] = '\0';
	}
	if (r < 0) {
		free(dir);
		return ploom_err_oom(err);
	}
	if (!r) {
		free(dir);
		return 0;
	}
	free(*out);
	*out = dir;
	return 1;
}

/* The folder the trace's relative paths start from here, ending in '/':
 * 1 and *out malloc'd, 0 when there is none, -1 with err filled. */
static int local_root(char **out, const char *root, const char *rel, struct ploom_err *err)
{
	*out = NULL;
	if (!strcmp(root, "repository"))
		return ploom_repo_workdir(out, ".", err);
	if (!strcmp(root, "project"))
		return project_root_here(out, rel, err);
	if (strcmp(root, "folder"))
		return 0; /* a root this ploom does not know: stay */
	return cwd_dir(out, err);
}

static char *join(const char *dir, const char *rel)
{
	char *out = NULL;

	if (asprintf(&out, "%s%s", dir, rel) < 0)
		return NULL;
	return out;
}

/* The real path of path lies at or below the real path of root (which
 * ends in '/'): 1 yes, 0 no (or either cannot be resolved), -1 out of
 * memory. */
static int lies_below(const char *path, const char *root)
{
	char *real = realpath(path, NULL), *real_root = realpath(root, NULL);
	size_t n;
	int r = 0;

	if (!real || !real_root) {
		r = errno == ENOMEM ? -1 : 0;
		goto done;
	}
	n = strlen(real_root);
	/* "/" is the one real path that ends in '/' */
	r = !strncmp(real, real_root, n) && (real_root[n - 1] == '/' || real[n] == '/');
done:
	free(real);
	free(real_root);
	return r;
}

/* ploom_replay_locate(), and the root it used in *root (malloc'd, NULL
 * when there was none). */
static int locate(struct ploom_trace *trace, char **root, struct ploom_err *err)
{
	char *file = NULL, **paths = NULL;
	struct stat st;
	size_t i;
	int ret = -1, r;

	*root = NULL;
	/* the reader refuses unsafe relpaths; a trace built in memory may
	 * have them */
	if (!ploom_replay_scenario_fingerprint(trace) || !trace->source.root || !trace->scenario.relpath ||
	    !ploom_relpath_is_safe(trace->scenario.relpath))
		return 0;
	/* The clone the replay runs in wins over the recorded paths, even
	 * when those still exist: a module target resolves from the current
	 * directory, so only this clone's file can pass the worker's check,
	 * and whoever replays from a clone means that clone's code. */
	r = local_root(root, trace->source.root, trace->scenario.relpath, err);
	if (r < 0 || (r == 0 && !*root))
		return r;
	file = join(*root, trace->scenario.relpath);
	paths = calloc(trace->nfingerprints ? trace->nfingerprints : 1, sizeof(*paths));
	if (!file || !paths) {
		ploom_err_oom(err);
		goto done;
	}
	if (stat(file, &st) < 0 || !S_ISREG(st.st_mode)) {
		ret = 0;
		goto done;
	}
	for (i = 0; i < trace->nfingerprints; i++) {
		const char *rel = trace->fingerprints[i].relpath;
		if (!rel || !ploom_relpath_is_safe(rel))
			continue;
		paths[i] = join(*root, rel);
		if (!paths[i]) {
			ploom_err_oom(err);
			goto done;
		}
	}
	/* all allocated: now move, so that an error leaves the trace whole */
	for (i = 0; i < trace->nfingerprints; i++) {
		if (!paths[i])
			continue;
		free(trace->fingerprints[i].path);
		trace->fingerprints[i].path = paths[i];
		paths[i] = NULL;
	}
	free(trace->scenario.file);
	trace->scenario.file = file;
	file = NULL;
	ret = 1;
done:
	for (i = 0; paths && i < trace->nfingerprints; i++)
		free(paths[i]);
	free(paths);
	free(file);
	return ret;
}

int ploom_replay_locate(struct ploom_trace *trace, struct ploom_err *err)
{
	char *root = NULL;
	int r = locate(trace, &root, err);

	free(root);
	return r;
}

int ploom_replay_place(struct ploom_trace *trace, struct ploom_err *err)
{
	const char *rel = trace->scenario.relpath;
	char *root = NULL;
	size_t i;
	int r, ret = -1;

	if (ploom_replay_check_trace(trace, err) < 0)
		return -1;
	if (!trace->source.root || !rel)
		return ploom_err_set(err, PLOOM_ERR_INPUT,
				     "the trace records no relative path of its scenario file: a "
				     "replay runs only the file at that path in the repository or "
				     "folder it starts in");
	if (!ploom_relpath_is_safe(rel))
		return ploom_err_set(err, PLOOM_ERR_INPUT,
				     "the trace's scenario path '%s' leaves its root", rel);
	r = locate(trace, &root, err);
	if (r < 0)
		goto done;
	if (r == 0 && !root && !strcmp(trace->source.root, "repository")) {
		ploom_err_set(err, PLOOM_ERR_INPUT,
			      "the trace's scenario '%s' is in a git repository and this "
			      "directory is in none: replay from inside a clone that holds it",
			      rel);
		goto done;
	}
	if (r == 0 && !root) {
		ploom_err_set(err, PLOOM_ERR_INPUT,
			      "the trace records its scenario '%s' under a root this ploom does "
			      "not know ('%s')",
			      rel, trace->source.root);
		goto done;
	}
	if (r == 0 && !strcmp(trace->source.root, "project")) {
		ploom_err_set(err, PLOOM_ERR_INPUT,
			      "the trace's scenario '%s' is in no folder at or above the current "
			      "directory '%s': replay from inside a copy of its project",
			      rel, root);
		goto done;
	}
	if (r == 0) {
		ploom_err_set(err, PLOOM_ERR_INPUT,
			      "the trace's scenario '%s' is not in %s '%s': a replay runs only "
			      "the file at the trace's relative path there",
			      rel,
			      strcmp(trace->source.root, "repository") ? "the current directory"
								       : "this repository",
			      root);
		goto done;
	}
	/* a symbolic link in the clone may point anywhere: the recorder
	 * refuses to fingerprint through one that leaves its root, and so
	 * does the replay */
	for (i = 0; i < trace->nfingerprints; i++) {
		r = lies_below(trace->fingerprints[i].path, root);
		if (r < 0) {
			ploom_err_oom(err);
			goto done;
		}
		if (!r) {
			ploom_err_set(err, PLOOM_ERR_INPUT,
				      "the trace's file '%s' leads out of '%s' (a symbolic link?): "
				      "a replay runs only files inside it",
				      trace->fingerprints[i].path, root);
			goto done;
		}
	}
	ret = 0;
done:
	free(root);
	return ret;
}

char *ploom_replay_root(const struct ploom_trace *trace)
{
	const char *file = trace->scenario.file, *rel = trace->scenario.relpath;
	size_t nf, nr;

	if (!file || !rel)
		return NULL;
	nf = strlen(file);
	nr = strlen(rel);
	if (nf <= nr || strcmp(file + nf - nr, rel) || file[nf - nr - 1] != '/')
		return NULL;
	return strndup(file, nf - nr);
}

int ploom_replay_check_trace(const struct ploom_trace *trace, struct ploom_err *err)
{
	const char *file = trace->scenario.file;
	size_t i;

	if (!file || !*file)
		return ploom_err_set(err, PLOOM_ERR_INPUT,
				     "the trace names no scenario file: a replay runs only a file "
				     "that the trace fingerprints");
	if (file[0] != '/')
		return ploom_err_set(err, PLOOM_ERR_INPUT,
				     "the trace's scenario file '%s' is not an absolute path", file);
	for (i = 0; i < trace->nfingerprints; i++)
		if (!strcmp(trace->fingerprints[i].path, file))
			return 0;
	return ploom_err_set(err, PLOOM_ERR_INPUT,
			     "the trace's fingerprints do not cover its scenario file '%s'", file);
}

int ploom_replay_check_source(const struct ploom_trace *trace, struct ploom_err *err)
{
	char now[PLOOM_OID_HEXSZ + 1];
	struct ploom_err why = {0, ""};
	struct stat st;
	size_t i;

	if (ploom_replay_check_trace(trace, err) < 0)
		return -1;
	for (i = 0; i < trace->nfingerprints; i++) {
		const struct ploom_fingerprint *f = &trace->fingerprints[i];

		/* stat first: libgit2's message for a missing file names
		 * the file again, errno's reads better here */
		if (stat(f->path, &st) < 0)
			return ploom_err_set(err, PLOOM_ERR_DIVERGENCE,
					     "the scenario's source changed: '%s' (recorded blob "
					     "%.*s, now unreadable: %s)",
					     f->path, SHORT_OID, f->blob, strerror(errno));
		if (ploom_fingerprint_file(now, f->path, &why) < 0)
			return ploom_err_set(err, PLOOM_ERR_DIVERGENCE,
					     "the scenario's source changed: '%s' (recorded blob "
					     "%.*s, now unreadable: %s)",
					     f->path, SHORT_OID, f->blob, why.msg);
		if (strcmp(now, f->blob))
			return ploom_err_set(err, PLOOM_ERR_DIVERGENCE,
					     "the scenario's source changed: '%s' (recorded blob "
					     "%.*s, now %.*s)",
					     f->path, SHORT_OID, f->blob, SHORT_OID, now);
	}
	return 0;
}

int ploom_replay_check_loaded(const struct ploom_trace *trace, const struct ploom_hello *hello,
			      struct ploom_err *err)
{
	if (!trace->scenario.file || !hello->file || !strcmp(trace->scenario.file, hello->file))
		return 0;
	return ploom_err_set(err, PLOOM_ERR_DIVERGENCE,
			     "the scenario's source changed: '%s' (the trace was recorded from "
			     "'%s')",
			     hello->file, trace->scenario.file);
}

/* The length of "MAJOR.MINOR" at the start of a version string, or its
 * whole length if it has no second dot. */
static size_t minor_len(const char *v)
{
	const char *dot = strchr(v, '.');

	if (dot)
		dot = strchr(dot + 1, '.');
	return dot ? (size_t)(dot - v) : strlen(v);
}

int ploom_replay_check_python(const struct ploom_trace *trace, const char *python_version,
			      struct ploom_err *err)
{
	const char *rec = trace->python.version ? trace->python.version : "";
	const char *now = python_version ? python_version : "";
	size_t nrec = minor_len(rec), nnow = minor_len(now);

	if (nrec == nnow && !strncmp(rec, now, nrec))
		return 0;
	return ploom_err_set(err, PLOOM_ERR_DIVERGENCE,
			     "Python %.*s runs this replay, the trace was recorded with %.*s",
			     (int)nnow, now, (int)nrec, rec);
}

/* "task 1 read cell#0", "task 2 begin", "task 1 acquire lock#0
 * (nonblocking)", "task 1 acquire lock#0 (timeout)", "task 0 join
 * thread#1 (timeout)"; "the end of the run" for a missing step. */
static void describe(struct ploom_buf *b, const struct ploom_step *s)
{
	if (!s) {
		ploom_buf_addf(b, "the end of the run");
		return;
	}
	ploom_buf_addf(b, "task %d %s", s->task, ploom_op_name(s->op));
	if (s->object)
		ploom_buf_addf(b, " %s", s->object);
	if (s->mode == PLOOM_ACQUIRE_NONBLOCKING)
		ploom_buf_addf(b, " (nonblocking)");
	else if (s->mode == PLOOM_ACQUIRE_TIMED)
		ploom_buf_addf(b, " (timeout)");
	if (s->obj.kind == PLOOM_OBJ_CLOCK)
		ploom_buf_addf(b, " -> %s", s->value ? s->value : "?");
}

/* A step of the clock must also have read (or left) the same value: the
 * virtual clock is deterministic, so a replay that reads another time
 * did not run the recorded schedule. */
static int same_step(const struct ploom_step *a, const struct ploom_step *b)
{
	return a->task == b->task && a->op == b->op &&
	       !strcmp(a->object ? a->object : "", b->object ? b->object : "") &&
	       a->mode == b->mode &&
	       (a->obj.kind != PLOOM_OBJ_CLOCK ||
		!strcmp(a->value ? a->value : "", b->value ? b->value : ""));
}

static void add_list(struct ploom_buf *b, const int *v, size_t n)
{
	size_t i;

	if (!n)
		ploom_buf_addf(b, "none");
	for (i = 0; i < n; i++)
		ploom_buf_addf(b, i ? ",%d" : "%d", v[i]);
}

int ploom_replay_compare_steps(const struct ploom_run *recorded, const struct ploom_run *got,
			       struct ploom_err *err)
{
	const struct ploom_step *rs, *gs;
	struct ploom_buf b = {0};
	size_t i, n = recorded->nsteps > got->nsteps ? recorded->nsteps : got->nsteps;
	int ret;

	for (i = 0; i < n; i++) {
		rs = i < recorded->nsteps ? &recorded->steps[i] : NULL;
		gs = i < got->nsteps ? &got->steps[i] : NULL;
		if (rs && gs && same_step(rs, gs))
			continue;
		ploom_buf_addf(&b, "step %zu differs: recorded ", i);
		describe(&b, rs);
		if (!gs && got->outcome.kind == PLOOM_OUTCOME_DIVERGENCE &&
		    (size_t)got->outcome.divergence_index == i) {
			ploom_buf_addf(&b, ", but %s", got->outcome.divergence_message ?
				       got->outcome.divergence_message : "a choice was not enabled");
		} else {
			ploom_buf_addf(&b, ", got ");
			describe(&b, gs);
		}
		goto fail;
	}
	if (got->outcome.kind == PLOOM_OUTCOME_DIVERGENCE &&
	    recorded->outcome.kind != PLOOM_OUTCOME_DIVERGENCE) {
		ploom_buf_addf(&b, "step %zu differs: %s", n, got->outcome.divergence_message ?
			       got->outcome.divergence_message : "a choice was not enabled");
		goto fail;
	}
	/* the same steps make the same choices unless the trace's choices
	 * were edited apart from its steps */
	if (recorded->nchoices != got->nchoices ||
	    (got->nchoices &&
	     memcmp(recorded->choices, got->choices, got->nchoices * sizeof(int)))) {
		ploom_buf_addf(&b, "the choices differ: recorded ");
		add_list(&b, recorded->choices, recorded->nchoices);
		ploom_buf_addf(&b, ", the run made ");
		add_list(&b, got->choices, got->nchoices);
		goto fail;
	}
	return 0;
fail:
	ret = ploom_err_set(err, PLOOM_ERR_DIVERGENCE, "%s", b.data ? b.data : "steps differ");
	ploom_buf_release(&b);
	return ret;
}

static int str_eq(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

int ploom_replay_same_outcome(const struct ploom_outcome *recorded,
			      const struct ploom_outcome *got)
{
	if (recorded->kind != got->kind)
		return 0;
	switch (recorded->kind) {
	case PLOOM_OUTCOME_FAILURE:
		return str_eq(recorded->exc_type, got->exc_type) &&
		       str_eq(recorded->exc_message, got->exc_message);
	case PLOOM_OUTCOME_DEADLOCK:
		return str_eq(recorded->summary, got->summary);
	case PLOOM_OUTCOME_CRASH:
		return recorded->signal == got->signal;
	case PLOOM_OUTCOME_EXIT:
		return recorded->status == got->status;
	case PLOOM_OUTCOME_DIVERGENCE:
		return str_eq(recorded->divergence_message, got->divergence_message);
	default:
		return 1;
	}
}

/* What a replay checks before it runs a recorded trace on the worker w:
 * the worker loaded the recorded source, under the recorded Python. */
static int check_worker(const struct ploom_trace *recorded, struct ploom_worker *w,
			struct ploom_err *err)
{
	const struct ploom_hello *hello = ploom_worker_hello(w);

	if (ploom_replay_check_loaded(recorded, hello, err) < 0 ||
	    ploom_replay_check_python(recorded, hello->python_version, err) < 0)
		return -1;
	return 0;
}

/* The limits a replay runs under: *schedule_timeout_s becomes the
 * smaller of itself and timeout_s (when >= 0), and *timeout_ms that in
 * milliseconds.  The trace is untrusted: the command line's limit holds
 * whatever it says, and the trace's holds when the command line's is
 * longer. */
static int limits(double *schedule_timeout_s, double timeout_s, long *timeout_ms,
		  struct ploom_err *err)
{
	if (timeout_s >= 0)
		*schedule_timeout_s = ploom_timeout_min(*schedule_timeout_s, timeout_s);
	if (ploom_timeout_ms(timeout_ms, *schedule_timeout_s) < 0)
		return ploom_err_set(err, PLOOM_ERR_INPUT, "invalid schedule timeout %g s",
				     *schedule_timeout_s);
	return 0;
}

/* A replayed trace names its scenario as the recorded one did, not as
 * the worker spelled it, so that traces of one scenario compare equal. */
static int adopt_target(struct ploom_trace *t, const struct ploom_trace *recorded,
			struct ploom_err *err)
{
	free(t->scenario.target);
	t->scenario.target = ploom_strdup(recorded->scenario.target);
	if (!t->scenario.target)
		return ploom_err_oom(err);
	return 0;
}

int ploom_replay_run(struct ploom_trace **out, const struct ploom_trace *recorded,
		     struct ploom_worker *w, double timeout_s, struct ploom_err *err)
{
	struct ploom_trace *t = NULL;
	struct ploom_config config = recorded->config;
	struct ploom_run run = {0};
	long timeout_ms;
	int ret = -1;

	*out = NULL;
	if (check_worker(recorded, w, err) < 0 || limits(&config.schedule_timeout_s, timeout_s, &timeout_ms, err) < 0)
		goto done;
	if (ploom_worker_run(w, &run, recorded->run.choices, recorded->run.nchoices,
			     config.max_steps, timeout_ms, err) < 0)
		goto done;
	if (ploom_replay_compare_steps(&recorded->run, &run, err) < 0)
		goto done;
	if (!ploom_replay_same_outcome(&recorded->run.outcome, &run.outcome)) {
		ploom_err_set(err, PLOOM_ERR_DIVERGENCE, "outcome differs: recorded %s, got %s",
			      recorded->run.outcome.summary ? recorded->run.outcome.summary : "?",
			      run.outcome.summary ? run.outcome.summary : "?");
		goto done;
	}
	if (ploom_worker_trace(&t, w, recorded->hash_seed, &config, &run, err) < 0)
		goto done;
	if (adopt_target(t, recorded, err) < 0)
		goto done;
	t->id = ploom_strdup(recorded->id);
	if (recorded->id && !t->id) {
		ploom_err_oom(err);
		goto done;
	}
	t->minimized_from = recorded->minimized_from;
	if (ploom_trace_copy_fingerprints(t, recorded, err) < 0 || ploom_trace_set_id(t, err) < 0)
		goto done;
	*out = t;
	t = NULL;
	ret = 0;
done:
	ploom_run_release(&run);
	ploom_trace_free(t);
	return ret;
}

int ploom_replay_source_changes(const struct ploom_trace *trace, struct ploom_buf *out,
				char scenario_now[PLOOM_OID_HEXSZ + 1], struct ploom_err *err)
{
	char now[PLOOM_OID_HEXSZ + 1];
	struct ploom_err why = {0, ""};
	size_t i;
	int changed = 0;

	if (ploom_replay_check_trace(trace, err) < 0)
		return -1;
	for (i = 0; i < trace->nfingerprints; i++) {
		const struct ploom_fingerprint *f = &trace->fingerprints[i];
		int scenario = !strcmp(f->path, trace->scenario.file);

		if (ploom_fingerprint_file(now, f->path, &why) < 0) {
			/* the run needs the scenario file itself; any other
			 * recorded file the current source may no longer use */
			if (scenario)
				return ploom_err_set(err, PLOOM_ERR_INPUT, "%s", why.msg);
			ploom_buf_addf(out, "'%s' (recorded blob %.*s, now unreadable: %s)\n",
				       f->path, SHORT_OID, f->blob, why.msg);
			changed++;
			continue;
		}
		if (scenario)
			memcpy(scenario_now, now, sizeof(now));
		if (strcmp(now, f->blob)) {
			ploom_buf_addf(out, "'%s' (recorded blob %.*s, now %.*s)\n", f->path,
				       SHORT_OID, f->blob, SHORT_OID, now);
			changed++;
		}
	}
	return changed;
}

static int in_list(const int *v, size_t n, int x)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

int ploom_replay_departures(const struct ploom_run *recorded, const struct ploom_run *got)
{
	size_t i, n = recorded->nsteps < got->nsteps ? recorded->nsteps : got->nsteps;
	int d = 0;

	for (i = 0; i < n; i++)
		if (!in_list(got->steps[i].enabled, got->steps[i].nenabled, recorded->steps[i].task))
			d++;
	return d;
}

int ploom_replay_follow_cmd(struct ploom_run_cmd *cmd, const struct ploom_trace *recorded,
			    long max_steps, long timeout_ms, struct ploom_err *err)
{
	size_t i;

	/* Which steps of the edited code are branch points is known only as
	 * it runs, so the worker's child decides each one (the policy
	 * follow, policy.h): the recorded step's task where it is enabled,
	 * else the default.  One run, however many steps depart. */
	memset(cmd, 0, sizeof(*cmd));
	cmd->max_steps = max_steps;
	cmd->timeout_ms = timeout_ms;
	cmd->policy.kind = PLOOM_POLICY_FOLLOW;
	cmd->policy.nfollow = recorded->run.nsteps;
	cmd->policy.follow = malloc((cmd->policy.nfollow + 1) * sizeof(*cmd->policy.follow));
	if (!cmd->policy.follow)
		return ploom_err_oom(err);
	for (i = 0; i < cmd->policy.nfollow; i++)
		cmd->policy.follow[i] = recorded->run.steps[i].task;
	return 0;
}

/* The run of a follow (ploom_replay_follow()) on w, with max_steps and
 * timeout_ms, into *run.  Returns 0, or -1 with err filled; with refine,
 * 1 and *refine (malloc'd) the site keys of a run that asks for more
 * points. */
static int follow_runs(struct ploom_run *run, const struct ploom_trace *recorded,
		       struct ploom_worker *w, long max_steps, long timeout_ms, char **refine,
		       struct ploom_err *err)
{
	struct ploom_run_cmd cmd;
	int ret = -1;

	if (ploom_replay_follow_cmd(&cmd, recorded, max_steps, timeout_ms, err) < 0)
		return -1;
	ploom_run_release(run);
	memset(run, 0, sizeof(*run));
	if (ploom_worker_run_cmd(w, run, &cmd, err) < 0)
		goto done;
	if (run->outcome.kind == PLOOM_OUTCOME_DIVERGENCE) {
		ploom_err_set(err, PLOOM_ERR_DIVERGENCE,
			      "the current source did not take its own choices again: %s",
			      run->outcome.divergence_message ? run->outcome.divergence_message
							      : "a choice was not enabled");
		goto done;
	}
	if (run->outcome.kind == PLOOM_OUTCOME_REFINE && refine) {
		*refine = strdup(run->outcome.sites ? run->outcome.sites : "");
		ret = *refine ? 1 : ploom_err_oom(err);
		goto done;
	}
	if (run->outcome.kind == PLOOM_OUTCOME_REFINE) {
		ploom_err_set(err, PLOOM_ERR_INPUT,
			      "the current source shares plain state at access sites the "
			      "trace does not schedule: run ploom-explore on it");
		goto done;
	}
	ret = 0;
done:
	free(cmd.policy.follow);
	return ret;
}

int ploom_replay_follow(struct ploom_trace **out, const struct ploom_trace *recorded,
			struct ploom_worker *w, double timeout_s, int *departures,
			struct ploom_err *err)
{
	struct ploom_trace *t = NULL;
	struct ploom_config config = recorded->config;
	struct ploom_run run = {0};
	long timeout_ms;
	int ret = -1;

	*out = NULL;
	if (check_worker(recorded, w, err) < 0 || limits(&config.schedule_timeout_s, timeout_s, &timeout_ms, err) < 0 ||
	    follow_runs(&run, recorded, w, config.max_steps, timeout_ms, NULL, err) < 0)
		goto done;
	*departures = ploom_replay_departures(&recorded->run, &run);
	if (ploom_worker_trace(&t, w, recorded->hash_seed, &config, &run, err) < 0 ||
	    adopt_target(t, recorded, err) < 0)
		goto done;
	*out = t;
	t = NULL;
	ret = 0;
done:
	ploom_run_release(&run);
	ploom_trace_free(t);
	return ret;
}

int ploom_replay_follow_in_search(struct ploom_trace **out, const struct ploom_trace *recorded,
				  struct ploom_worker *w, const struct ploom_config *config,
				  const char *hash_seed, int *departures, char **refine,
				  struct ploom_err *err)
{
	struct ploom_run run = {0};
	double timeout_s = config->schedule_timeout_s;
	long timeout_ms;
	int ret = -1, r;

	*out = NULL;
	*refine = NULL;
	if (check_worker(recorded, w, err) < 0 || limits(&timeout_s, -1, &timeout_ms, err) < 0)
		goto done;
	r = follow_runs(&run, recorded, w, config->max_steps, timeout_ms, refine, err);
	if (r != 0) {
		ret = r;
		goto done;
	}
	*departures = ploom_replay_departures(&recorded->run, &run);
	ret = ploom_worker_trace(out, w, hash_seed, config, &run, err);
done:
	ploom_run_release(&run);
	return ret;
}
