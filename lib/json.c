/* The JSON codec for traces and statistics; json.h documents the format.
 * This is the only file that includes cJSON.h. */
#include "json.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h> /* isfinite, a macro: no libm needed */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "args.h"
#include "plan.h"
#include "sample.h"
#include "search.h"
#include "shard.h"

#define TRACE_FORMAT "ploom-trace"

/* ---- writing ---------------------------------------------------------
 * Builders record out-of-memory in a flag instead of failing at each
 * call, so the tree is built in straight lines and checked once.  An item
 * that could not be added is still ours to delete. */

struct builder {
	int oom;
};

static cJSON *put(struct builder *b, cJSON *obj, const char *name, cJSON *item)
{
	if (!item) {
		b->oom = 1;
		return NULL;
	}
	if (!obj || !cJSON_AddItemToObject(obj, name, item)) {
		cJSON_Delete(item);
		b->oom = 1;
		return NULL;
	}
	return item;
}

static cJSON *append(struct builder *b, cJSON *arr, cJSON *item)
{
	if (!item) {
		b->oom = 1;
		return NULL;
	}
	if (!arr || !cJSON_AddItemToArray(arr, item)) {
		cJSON_Delete(item);
		b->oom = 1;
		return NULL;
	}
	return item;
}

static void put_str(struct builder *b, cJSON *obj, const char *name, const char *s)
{
	put(b, obj, name, s ? cJSON_CreateString(s) : cJSON_CreateNull());
}

static void put_num(struct builder *b, cJSON *obj, const char *name, double v)
{
	put(b, obj, name, cJSON_CreateNumber(v));
}

static void put_bool(struct builder *b, cJSON *obj, const char *name, int v)
{
	put(b, obj, name, cJSON_CreateBool(v));
}

static cJSON *str_array(const char *const *v, size_t n)
{
	cJSON *arr = cJSON_CreateArray();
	size_t i;

	for (i = 0; arr && i < n; i++) {
		cJSON *x = cJSON_CreateString(v[i]);
		if (!x || !cJSON_AddItemToArray(arr, x)) {
			cJSON_Delete(x);
			cJSON_Delete(arr);
			return NULL;
		}
	}
	return arr;
}

static cJSON *int_array(const int *v, size_t n)
{
	cJSON *arr = cJSON_CreateArray();
	size_t i;

	for (i = 0; arr && i < n; i++) {
		cJSON *x = cJSON_CreateNumber(v[i]);
		if (!x || !cJSON_AddItemToArray(arr, x)) {
			cJSON_Delete(x);
			cJSON_Delete(arr);
			return NULL;
		}
	}
	return arr;
}

/* "where": only when known, so that a trace of a worker that sent none
 * reads as it did before the field */
static void put_where(struct builder *b, cJSON *o, const struct ploom_where *w)
{
	cJSON *x;

	if (!w->file)
		return;
	x = put(b, o, "where", cJSON_CreateObject());
	put_str(b, x, "file", w->file);
	put_num(b, x, "line", w->line);
	put_str(b, x, "function", w->function ? w->function : "?");
}

/* The seed of a sample and the depth of pct (plan.h's flags). */
static void put_sample(struct builder *b, cJSON *o, const char *search, unsigned long seed,
		       int pct_depth)
{
	if (ploom_search_flags(search) & PLOOM_KIND_SAMPLE)
		put_num(b, o, "seed", (double)seed);
	if (ploom_search_flags(search) & PLOOM_KIND_PCT_DEPTH)
		put_num(b, o, "pct_depth", pct_depth);
}

static void put_step(struct builder *b, cJSON *arr, const struct ploom_step *s)
{
	cJSON *o = append(b, arr, cJSON_CreateObject());

	put_num(b, o, "index", (double)s->index);
	put_num(b, o, "task", s->task);
	put_str(b, o, "op", ploom_op_name(s->op));
	put_str(b, o, "object", s->object);
	put(b, o, "enabled", int_array(s->enabled, s->nenabled));
	if (s->op == PLOOM_OP_ACQUIRE)
		put_bool(b, o, "blocking", s->mode != PLOOM_ACQUIRE_NONBLOCKING);
	/* only where true: a trace without timed steps reads as it did in 1.
	 * A join has no "blocking": it cannot be nonblocking, and a timed one
	 * says so here */
	if (s->mode == PLOOM_ACQUIRE_TIMED)
		put_bool(b, o, "timeout", 1);
	if (s->value)
		put_str(b, o, "value", s->value);
	put_where(b, o, &s->where);
}

static void put_outcome(struct builder *b, cJSON *parent, const struct ploom_outcome *oc)
{
	cJSON *o = put(b, parent, "outcome", cJSON_CreateObject());
	cJSON *x, *waits;
	size_t i;

	put_str(b, o, "kind", ploom_outcome_kind_name(oc->kind));
	put_str(b, o, "summary", oc->summary ? oc->summary : "");
	switch (oc->kind) {
	case PLOOM_OUTCOME_FAILURE:
		put_num(b, o, "task", oc->task);
		x = put(b, o, "exception", cJSON_CreateObject());
		put_str(b, x, "type", oc->exc_type ? oc->exc_type : "");
		put_str(b, x, "message", oc->exc_message ? oc->exc_message : "");
		put_str(b, o, "traceback", oc->traceback ? oc->traceback : "");
		break;
	case PLOOM_OUTCOME_DEADLOCK:
		waits = put(b, o, "waits", cJSON_CreateArray());
		for (i = 0; i < oc->nwaits; i++) {
			x = append(b, waits, cJSON_CreateObject());
			put_num(b, x, "task", oc->waits[i].task);
			put_str(b, x, "op", ploom_op_name(oc->waits[i].op));
			put_str(b, x, "object", oc->waits[i].object);
			put_num(b, x, "holder", oc->waits[i].holder);
			put_where(b, x, &oc->waits[i].where);
		}
		break;
	case PLOOM_OUTCOME_CRASH:
		put_num(b, o, "signal", oc->signal);
		break;
	case PLOOM_OUTCOME_EXIT:
		put_num(b, o, "status", oc->status);
		break;
	case PLOOM_OUTCOME_STEP_LIMIT:
		put_num(b, o, "limit", (double)oc->limit);
		break;
	case PLOOM_OUTCOME_DIVERGENCE:
		put_num(b, o, "step", (double)oc->divergence_index);
		put_str(b, o, "message", oc->divergence_message ? oc->divergence_message : "");
		break;
	default:
		break;
	}
	if (oc->output && *oc->output)
		put_str(b, o, "output", oc->output);
}

/* "tasks": every task with its name, given or not; "objects": the cells
 * and locks the scenario named */
static void put_names(struct builder *b, cJSON *root, const struct ploom_run *run)
{
	cJSON *tasks = put(b, root, "tasks", cJSON_CreateArray()), *objs, *x;
	char def[32];
	int *ids = NULL;
	size_t n, i;

	if (ploom_run_tasks(&ids, &n, run, NULL) < 0) {
		b->oom = 1;
		return;
	}
	for (i = 0; i < n; i++) {
		struct ploom_obj obj = {PLOOM_OBJ_THREAD, ids[i]};
		const char *name = ploom_run_name(run, obj);

		if (!name) {
			ploom_obj_default_name(def, sizeof(def), obj);
			name = def;
		}
		x = append(b, tasks, cJSON_CreateObject());
		put_num(b, x, "id", ids[i]);
		put_str(b, x, "name", name);
	}
	free(ids);
	objs = put(b, root, "objects", cJSON_CreateArray());
	for (i = 0; i < run->nnames; i++) {
		if (run->names[i].obj.kind == PLOOM_OBJ_THREAD)
			continue;
		ploom_obj_format(def, sizeof(def), run->names[i].obj);
		x = append(b, objs, cJSON_CreateObject());
		put_str(b, x, "object", def);
		put_str(b, x, "name", run->names[i].name);
	}
}

static cJSON *trace_tree(const struct ploom_trace *t, struct builder *b)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *o, *steps, *fps;
	size_t i;

	if (!root) {
		b->oom = 1;
		return NULL;
	}
	put_str(b, root, "format", TRACE_FORMAT);
	put_num(b, root, "version", PLOOM_TRACE_VERSION);
	if (t->id)
		put_str(b, root, "id", t->id);
	o = put(b, root, "scenario", cJSON_CreateObject());
	put_str(b, o, "target", t->scenario.target ? t->scenario.target : "");
	put_str(b, o, "module", t->scenario.module ? t->scenario.module : "");
	put_str(b, o, "qualname", t->scenario.qualname ? t->scenario.qualname : "");
	put_str(b, o, "file", t->scenario.file);
	/* the relative paths and their root only when known: a trace
	 * without them reads as it did before them */
	if (t->scenario.relpath)
		put_str(b, o, "relpath", t->scenario.relpath);
	fps = put(b, root, "fingerprints", cJSON_CreateArray());
	for (i = 0; i < t->nfingerprints; i++) {
		o = append(b, fps, cJSON_CreateObject());
		put_str(b, o, "path", t->fingerprints[i].path);
		put_str(b, o, "blob", t->fingerprints[i].blob);
		if (t->fingerprints[i].relpath)
			put_str(b, o, "relpath", t->fingerprints[i].relpath);
	}
	if (t->source.root) {
		o = put(b, root, "source", cJSON_CreateObject());
		put_str(b, o, "root", t->source.root);
		put_str(b, o, "commit", t->source.commit);
		put_bool(b, o, "dirty", t->source.dirty);
	}
	o = put(b, root, "python", cJSON_CreateObject());
	put_str(b, o, "implementation", t->python.implementation ? t->python.implementation : "");
	put_str(b, o, "version", t->python.version ? t->python.version : "");
	put_bool(b, o, "gil", t->python.gil);
	put_str(b, root, "hash_seed", t->hash_seed ? t->hash_seed : "0");
	o = put(b, root, "config", cJSON_CreateObject());
	if (t->config.max_preemptions < 0)
		put(b, o, "max_preemptions", cJSON_CreateNull());
	else
		put_num(b, o, "max_preemptions", t->config.max_preemptions);
	put_str(b, o, "reduction", t->config.reduction ? t->config.reduction : "none");
	put_str(b, o, "search", t->config.search ? t->config.search : "dfs");
	put_sample(b, o, t->config.search, t->config.seed, t->config.pct_depth);
	put_num(b, o, "max_steps", (double)t->config.max_steps);
	put_num(b, o, "schedule_timeout_s", t->config.schedule_timeout_s);
	/* always written, empty when none, so that a reader sees the list
	 * the trace ran with */
	put(b, o, "patch", str_array((const char *const *)t->config.patch, t->config.npatch));
	put(b, root, "choices", int_array(t->run.choices, t->run.nchoices));
	put_num(b, root, "preemptions", t->run.preemptions);
	if (t->minimized_from >= 0)
		put_num(b, root, "minimized_from", t->minimized_from);
	put_names(b, root, &t->run);
	if (t->shard.count > 0) {
		o = put(b, root, "shard", cJSON_CreateObject());
		put_num(b, o, "index", t->shard.index);
		put_num(b, o, "count", t->shard.count);
		put_num(b, o, "depth", t->shard.depth);
		put_num(b, o, "unit", (double)t->shard.unit);
	}
	steps = put(b, root, "steps", cJSON_CreateArray());
	for (i = 0; i < t->run.nsteps; i++)
		put_step(b, steps, &t->run.steps[i]);
	put_outcome(b, root, &t->run.outcome);
	return root;
}

/* Prints the tree with a final newline; consumes nothing. */
static char *print_tree(const cJSON *root, struct ploom_err *err)
{
	char *text = cJSON_Print(root);
	size_t n;
	char *p;

	if (!text) {
		ploom_err_oom(err);
		return NULL;
	}
	n = strlen(text);
	p = realloc(text, n + 2);
	if (!p) {
		free(text);
		ploom_err_oom(err);
		return NULL;
	}
	p[n] = '\n';
	p[n + 1] = '\0';
	return p;
}

char *ploom_trace_to_json(const struct ploom_trace *trace, struct ploom_err *err)
{
	struct builder b = {0};
	cJSON *root = trace_tree(trace, &b);
	char *text = NULL;

	if (b.oom)
		ploom_err_oom(err);
	else
		text = print_tree(root, err);
	cJSON_Delete(root);
	/* never a trace the readers refuse: PLOOM_MAX_STEPS keeps common ones
	 * far below, this catches steps with long values or many tasks */
	if (text && strlen(text) > PLOOM_TRACE_MAX_BYTES) {
		ploom_err_set(err, PLOOM_ERR_INPUT,
			      "the trace would take %zu MiB, more than the %zu MiB a reader accepts",
			      (strlen(text) + (1 << 20) - 1) >> 20, PLOOM_TRACE_MAX_BYTES >> 20);
		free(text);
		text = NULL;
	}
	return text;
}

static int write_text(FILE *out, const char *text, struct ploom_err *err)
{
	size_t n = strlen(text);

	if (fwrite(text, 1, n, out) != n || fflush(out) == EOF)
		return ploom_err_set(err, PLOOM_ERR_SYSTEM, "%s", strerror(errno));
	return 0;
}

int ploom_trace_write(FILE *out, const struct ploom_trace *trace, struct ploom_err *err)
{
	char *text = ploom_trace_to_json(trace, err);
	int ret;

	if (!text)
		return -1;
	ret = write_text(out, text, err);
	free(text);
	return ret;
}

/* Opens a new file beside path, under a name no one else has: path with
 * ".XXXXXX.tmp" appended, six characters that differ from try to try.
 * O_EXCL makes the name ours alone (two saves of one trace at once must not
 * share it) and, with O_NOFOLLOW, refuses a link that anyone who can write
 * the folder may have planted there, which would redirect the write.  The
 * mode is 0644 less the umask, as for any file the user creates.  On success
 * the caller owns *tmp_out (malloc'd) and the descriptor returned. */
static int open_temp_beside(char **tmp_out, const char *path, struct ploom_err *err)
{
	static const char letters[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	struct timespec ts;
	uint64_t x;
	char *tmp;
	size_t len = strlen(path);
	int attempt, fd, i;

	*tmp_out = NULL;
	if (asprintf(&tmp, "%s.XXXXXX.tmp", path) < 0)
		return ploom_err_oom(err);
	clock_gettime(CLOCK_REALTIME, &ts);
	/* not a secret: O_EXCL keeps the name ours; varied so that another
	 * process's names rarely collide with ours */
	x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 12) ^
	    (uint64_t)(uintptr_t)&ts;
	for (attempt = 0; attempt < 1000; attempt++) {
		/* splitmix64: every bit of x reaches each letter */
		uint64_t z = (x += 0x9e3779b97f4a7c15ULL);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		z ^= z >> 31;
		for (i = 0; i < 6; i++, z /= 62)
			tmp[len + 1 + i] = letters[z % 62];
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0) {
			*tmp_out = tmp;
			return fd;
		}
		if (errno != EEXIST)
			break;
	}
	/* named by the file asked for: the temporary name is ours, and lies in
	 * the same folder, so the reason is the same */
	ploom_err_set(err, PLOOM_ERR_SYSTEM, "cannot create '%s': %s", path,
		      errno == EEXIST ? "every temporary name tried exists" : strerror(errno));
	free(tmp);
	return -1;
}

int ploom_trace_write_file(const char *path, const struct ploom_trace *trace,
			   struct ploom_err *err)
{
	char *text = NULL, *tmp = NULL;
	FILE *f = NULL;
	size_t n;
	int fd, ret = -1;

	text = ploom_trace_to_json(trace, err);
	if (!text)
		goto done;
	fd = open_temp_beside(&tmp, path, err);
	if (fd < 0)
		goto done;
	f = fdopen(fd, "w");
	if (!f) {
		ploom_err_set(err, PLOOM_ERR_SYSTEM, "cannot write '%s': %s", path, strerror(errno));
		close(fd);
		goto done;
	}
	n = strlen(text);
	if (fwrite(text, 1, n, f) != n || fflush(f) == EOF) {
		ploom_err_set(err, PLOOM_ERR_SYSTEM, "cannot write '%s': %s", path, strerror(errno));
		goto done;
	}
	if (fclose(f) == EOF) {
		f = NULL;
		ploom_err_set(err, PLOOM_ERR_SYSTEM, "cannot write '%s': %s", path, strerror(errno));
		goto done;
	}
	f = NULL;
	/* rename replaces whatever is at path, a link included, without
	 * following it */
	if (rename(tmp, path) < 0) {
		ploom_err_set(err, PLOOM_ERR_SYSTEM, "cannot rename '%s' to '%s': %s", tmp, path,
			      strerror(errno));
		goto done;
	}
	ret = 0;
done:
	if (f)
		fclose(f);
	if (ret < 0 && tmp)
		unlink(tmp);
	free(tmp);
	free(text);
	return ret;
}

/* 1 when path is a directory or a link to one. */
static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* mkdir -p: each missing component in turn. */
static int make_dirs(const char *dir, struct ploom_err *err)
{
	char *p, *q;
	int ret = 0;

	if (!*dir)
		return ploom_err_set(err, PLOOM_ERR_INPUT, "empty directory name");
	p = strdup(dir);
	if (!p)
		return ploom_err_oom(err);
	for (q = p + 1; ret == 0; q++) {
		if (*q && *q != '/')
			continue;
		{
			char c = *q;
			*q = '\0';
			if (mkdir(p, 0777) < 0 && errno != EEXIST)
				ret = ploom_err_set(err, PLOOM_ERR_SYSTEM,
						    "cannot create directory '%s': %s", p,
						    strerror(errno));
			else if (!is_dir(p))
				/* what mkdir -p says of a file in the way */
				ret = ploom_err_set(err, PLOOM_ERR_SYSTEM,
						    "cannot create directory '%s': %s", p,
						    strerror(EEXIST));
			*q = c;
			if (!c)
				break;
		}
	}
	free(p);
	return ret;
}

int ploom_trace_save(char **out, const struct ploom_trace *trace, const char *dir,
		     const char *suffix, struct ploom_err *err)
{
	char id[17];
	char *path = NULL;

	*out = NULL;
	if (trace->id)
		snprintf(id, sizeof(id), "%s", trace->id);
	else if (ploom_trace_failure_id(id, trace, err) < 0)
		return -1;
	if (make_dirs(dir, err) < 0)
		return -1;
	if (asprintf(&path, "%s/%s-%s.json", dir, id, suffix) < 0)
		return ploom_err_oom(err);
	if (ploom_trace_write_file(path, trace, err) < 0) {
		free(path);
		return -1;
	}
	*out = path;
	return 0;
}

/* Rounds a non-negative measurement to 1/scale without libm. */
static double round_to(double v, double scale)
{
	if (!(v >= 0) || v > 1e15)
		return v;
	return (double)(long long)(v * scale + 0.5) / scale;
}

static void put_long_or_null(struct builder *b, cJSON *obj, const char *name, long v)
{
	put(b, obj, name, v < 0 ? cJSON_CreateNull() : cJSON_CreateNumber((double)v));
}

static void put_shard(struct builder *b, cJSON *root, const struct ploom_shard *sh)
{
	cJSON *o = put(b, root, "shard", cJSON_CreateObject());
	int i;

	put_long_or_null(b, o, "index", sh->index);
	put_num(b, o, "count", sh->count);
	put_num(b, o, "depth", sh->depth);
	put_long_or_null(b, o, "units", sh->units);
	put_num(b, o, "owned", (double)sh->owned);
	put_num(b, o, "probes", (double)sh->probes);
	put_long_or_null(b, o, "failure_unit", sh->failure_unit);
	if (sh->index < 0) {
		cJSON *list = put(b, o, "missing", cJSON_CreateArray());
		for (i = 0; list && i < sh->nmissing; i++)
			append(b, list, cJSON_CreateNumber(sh->missing[i]));
	}
}

int ploom_stats_write(FILE *out, const struct ploom_stats *s, struct ploom_err *err)
{
	struct builder b = {0};
	cJSON *root = cJSON_CreateObject();
	cJSON *f;
	char *text = NULL;
	int ret = -1;

	if (!root)
		b.oom = 1;
	put_str(&b, root, "result", s->result);
	put_str(&b, root, "target", s->target);
	put_num(&b, root, "schedules", (double)s->schedules);
	put_num(&b, root, "failing", (double)s->failing);
	put_bool(&b, root, "complete", s->complete);
	put_str(&b, root, "stopped_by", s->stopped_by);
	if (s->max_preemptions < 0)
		put(&b, root, "max_preemptions", cJSON_CreateNull());
	else
		put_num(&b, root, "max_preemptions", s->max_preemptions);
	put_str(&b, root, "reduction", s->reduction);
	if (s->reduction && strcmp(s->reduction, "none"))
		put_num(&b, root, "sleep_blocked", (double)s->sleep_blocked);
	put_str(&b, root, "search", s->search);
	put_sample(&b, root, s->search, s->seed, s->pct_depth);
	if (s->jobs > 0)
		put_num(&b, root, "jobs", s->jobs);
	put_str(&b, root, "hash_seed", s->hash_seed);
	/* rounded so the output stays readable; they are measurements */
	put_num(&b, root, "elapsed_s", round_to(s->elapsed_s, 1000.0));
	put_num(&b, root, "schedules_per_second", round_to(s->schedules_per_second, 10.0));
	put_num(&b, root, "max_depth", (double)s->max_depth);
	put_str(&b, root, "trace", s->trace);
	put_str(&b, root, "minimized_trace", s->minimized_trace);
	if (s->minimal_by_construction)
		put_bool(&b, root, "minimal_by_construction", 1);
	if (!s->failure) {
		put(&b, root, "failure", cJSON_CreateNull());
	} else {
		const struct ploom_outcome *o = s->failure;
		int exc = o->kind == PLOOM_OUTCOME_FAILURE;
		f = put(&b, root, "failure", cJSON_CreateObject());
		put_str(&b, f, "kind", ploom_outcome_kind_name(o->kind));
		put_str(&b, f, "type", exc ? o->exc_type : NULL);
		put_str(&b, f, "message", exc ? (o->exc_message ? o->exc_message : "")
					 : o->summary);
		put_str(&b, f, "summary", o->summary);
	}
	if (s->with_outcomes) {
		cJSON *list = put(&b, root, "outcomes", cJSON_CreateArray());
		size_t i;

		for (i = 0; list && i < s->noutcomes; i++) {
			const struct ploom_search_outcome *t = &s->outcomes[i];
			f = append(&b, list, cJSON_CreateObject());
			put_str(&b, f, "kind", ploom_outcome_kind_name(t->kind));
			put_str(&b, f, "summary", t->summary);
			put_num(&b, f, "schedules", (double)t->schedules);
		}
		put_bool(&b, root, "outcomes_truncated", s->outcomes_truncated);
	}
	if (s->shard)
		put_shard(&b, root, s->shard);
	if (b.oom) {
		ploom_err_oom(err);
		goto done;
	}
	text = print_tree(root, err);
	if (!text)
		goto done;
	ret = write_text(out, text, err);
done:
	free(text);
	cJSON_Delete(root);
	return ret;
}

/* ---- reading ---------------------------------------------------------
 * Every field is checked; the first problem found is reported with the
 * field's path ("steps[3].enabled[1]"). */

struct reader {
	struct ploom_err *err;
	int failed;
	long version;           /* the trace's format version, once read */
};

/* A string of the trace as an error message quotes it, in out: control
 * characters become '?', as ploom-show shows a trace's strings (a newline
 * would break the one-line message, an escape could drive the terminal),
 * and more than QUOTE_MAX bytes are cut to that many and "...". */
#define QUOTE_MAX 60
static const char *quotable(char out[QUOTE_MAX + 4], const char *s)
{
	size_t i;

	for (i = 0; i < QUOTE_MAX && s[i]; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	if (s[i]) {
		memcpy(out + i, "...", 3);
		i += 3;
	}
	out[i] = '\0';
	return out;
}

/* "missing field 'PATH'" when what is NULL, else "field 'PATH' WHAT". */
static int fail(struct reader *r, const char *what, const char *prefix, const char *name)
{
	if (r->failed)
		return -1;
	r->failed = 1;
	if (!what)
		return ploom_err_set(r->err, PLOOM_ERR_INPUT, "missing field '%s%s'", prefix, name);
	return ploom_err_set(r->err, PLOOM_ERR_INPUT, "field '%s%s' %s", prefix, name, what);
}

/* The member, or NULL: missing (an error if required) or JSON null. */
static const cJSON *get(struct reader *r, const cJSON *obj, const char *prefix,
			const char *name, int required)
{
	const cJSON *x;

	if (r->failed)
		return NULL;
	x = cJSON_GetObjectItemCaseSensitive(obj, name);
	if (!x) {
		if (required)
			fail(r, NULL, prefix, name);
		return NULL;
	}
	if (cJSON_IsNull(x))
		return NULL;
	return x;
}

/* *out = a copy of the string member, NULL if absent/null and allowed. */
static void get_str(struct reader *r, char **out, const cJSON *obj, const char *prefix,
		    const char *name, int required, int nullable)
{
	const cJSON *x = get(r, obj, prefix, name, required);

	*out = NULL;
	if (!x) {
		if (required && !nullable && !r->failed)
			fail(r, "is not a string", prefix, name);
		return;
	}
	if (!cJSON_IsString(x) || !x->valuestring) {
		fail(r, "is not a string", prefix, name);
		return;
	}
	*out = strdup(x->valuestring);
	if (!*out && !r->failed) {
		r->failed = 1;
		ploom_err_oom(r->err);
	}
}

/* A required operation name. */
static void get_op(struct reader *r, enum ploom_op *out, const cJSON *obj, const char *prefix,
		   const char *name)
{
	char *s = NULL;
	int op;

	get_str(r, &s, obj, prefix, name, 1, 0);
	if (r->failed)
		return;
	op = ploom_op_parse(s, strlen(s));
	free(s);
	if (op < 0)
		fail(r, "is not a known operation", prefix, name);
	else
		*out = (enum ploom_op)op;
}

/* An optional object name that must parse, as the worker writes them. */
static void get_object_name(struct reader *r, char **out, struct ploom_obj *obj,
			    const cJSON *x, const char *prefix, const char *name)
{
	get_str(r, out, x, prefix, name, 1, 1);
	if (r->failed || !*out)
		return;
	if (ploom_obj_parse(obj, *out, strlen(*out)) < 0 || obj->kind == PLOOM_OBJ_NONE)
		fail(r, "is not an object name", prefix, name);
}

static int number_to_long(struct reader *r, long *out, const cJSON *x, long min, long max,
			  const char *prefix, const char *name)
{
	double d;

	if (!cJSON_IsNumber(x))
		return fail(r, "is not an integer", prefix, name);
	d = x->valuedouble;
	if (!isfinite(d) || d < -9e18 || d > 9e18 || d != (double)(long long)d)
		return fail(r, "is not an integer", prefix, name);
	if (d < (double)min || d > (double)max)
		return fail(r, "is out of range", prefix, name);
	*out = (long)d;
	return 0;
}

static void get_long(struct reader *r, long *out, const cJSON *obj, const char *prefix,
		     const char *name, long min, long max)
{
	const cJSON *x = get(r, obj, prefix, name, 1);

	if (r->failed)
		return;
	if (!x) {
		fail(r, "is not an integer", prefix, name);
		return;
	}
	number_to_long(r, out, x, min, max, prefix, name);
}

static void get_int(struct reader *r, int *out, const cJSON *obj, const char *prefix,
		    const char *name, int min, int max)
{
	long v = 0;

	get_long(r, &v, obj, prefix, name, min, max);
	*out = (int)v;
}

/* An array of at most max ints, each from 0 to max_value. */
static void get_int_array(struct reader *r, int **out, size_t *out_len, const cJSON *obj,
			  const char *prefix, const char *name, size_t max, long max_value)
{
	const cJSON *x = get(r, obj, prefix, name, 1), *e;
	char sub[200];
	size_t n = 0;
	long v = 0; /* set by number_to_long; gcc -O3 cannot see it */

	*out = NULL;
	*out_len = 0;
	if (r->failed)
		return;
	if (!x || !cJSON_IsArray(x)) {
		fail(r, "is not an array", prefix, name);
		return;
	}
	n = (size_t)cJSON_GetArraySize(x);
	if (!n)
		return;
	if (n > max) {
		char why[64];
		snprintf(why, sizeof(why), "has more than %zu entries", max);
		fail(r, why, prefix, name);
		return;
	}
	*out = calloc(n, sizeof(**out));
	if (!*out) {
		r->failed = 1;
		ploom_err_oom(r->err);
		return;
	}
	n = 0;
	cJSON_ArrayForEach(e, x) {
		snprintf(sub, sizeof(sub), "%s[%zu]", name, n);
		if (number_to_long(r, &v, e, 0, max_value, prefix, sub) < 0)
			return;
		(*out)[n++] = (int)v;
	}
	*out_len = n;
}

static const cJSON *get_object(struct reader *r, const cJSON *obj, const char *prefix,
			       const char *name)
{
	const cJSON *x = get(r, obj, prefix, name, 1);

	if (r->failed)
		return NULL;
	if (!x || !cJSON_IsObject(x)) {
		fail(r, "is not an object", prefix, name);
		return NULL;
	}
	return x;
}

static const cJSON *get_array(struct reader *r, const cJSON *obj, const char *prefix,
			      const char *name)
{
	const cJSON *x = get(r, obj, prefix, name, 1);

	if (r->failed)
		return NULL;
	if (!x || !cJSON_IsArray(x)) {
		fail(r, "is not an array", prefix, name);
		return NULL;
	}
	return x;
}

static void get_bool(struct reader *r, int *out, const cJSON *obj, const char *prefix,
		     const char *name)
{
	const cJSON *x = get(r, obj, prefix, name, 1);

	if (r->failed)
		return;
	if (!x || !cJSON_IsBool(x)) {
		fail(r, "is not a boolean", prefix, name);
		return;
	}
	*out = cJSON_IsTrue(x) ? 1 : 0;
}

/* A required string that is a label of at most max bytes (event.h). */
static void get_label(struct reader *r, char **out, const cJSON *obj, const char *prefix,
		      const char *name, size_t max)
{
	const char *why;

	get_str(r, out, obj, prefix, name, 1, 0);
	if (r->failed)
		return;
	why = ploom_label_problem(*out, strlen(*out), max);
	if (why)
		fail(r, why, prefix, name);
}

/* "where": optional (traces older than it, and steps the worker could
 * not place, have none).  Only read, never opened: the file may be any
 * absolute path, or a relative one that stays inside its root. */
static void read_where(struct reader *r, struct ploom_where *w, const cJSON *obj,
		       const char *prefix)
{
	const cJSON *x = get(r, obj, prefix, "where", 0);
	char sub[96];

	if (!x || r->failed)
		return;
	if (!cJSON_IsObject(x)) {
		fail(r, "is not an object", prefix, "where");
		return;
	}
	snprintf(sub, sizeof(sub), "%swhere.", prefix);
	get_label(r, &w->file, x, sub, "file", PLOOM_PATH_MAX);
	if (!r->failed && w->file[0] != '/' && !ploom_relpath_is_safe(w->file))
		fail(r, "is neither an absolute path nor a relative one inside its root", sub,
		     "file");
	get_label(r, &w->function, x, sub, "function", PLOOM_NAME_MAX);
	get_int(r, &w->line, x, sub, "line", 1, INT_MAX);
}

static void read_step(struct reader *r, struct ploom_step *s, const cJSON *x, size_t i)
{
	char prefix[64];
	const cJSON *b;
	size_t k;

	snprintf(prefix, sizeof(prefix), "steps[%zu].", i);
	if (!cJSON_IsObject(x)) {
		snprintf(prefix, sizeof(prefix), "[%zu]", i);
		fail(r, "is not an object", "steps", prefix);
		return;
	}
	get_long(r, &s->index, x, prefix, "index", 0, LONG_MAX);
	if (!r->failed && s->index != (long)i)
		fail(r, "is out of order", prefix, "index");
	get_int(r, &s->task, x, prefix, "task", 0, INT_MAX);
	get_op(r, &s->op, x, prefix, "op");
	get_object_name(r, &s->object, &s->obj, x, prefix, "object");
	get_int_array(r, &s->enabled, &s->nenabled, x, prefix, "enabled", SIZE_MAX, INT_MAX);
	for (k = 1; !r->failed && k < s->nenabled; k++)
		if (s->enabled[k] <= s->enabled[k - 1])
			fail(r, "is not ascending", prefix, "enabled");
	/* the step's task ran there, so it was enabled: the worker's step
	 * records hold to this, and what reads a trace (the branch points,
	 * the preemptions, the races) counts on it */
	if (!r->failed && !s->nenabled)
		fail(r, "is empty", prefix, "enabled");
	else if (!r->failed && !ploom_step_is_enabled(s, s->task))
		fail(r, "does not hold the step's task", prefix, "enabled");
	b = get(r, x, prefix, "blocking", 0);
	if (b) {
		if (!cJSON_IsBool(b))
			fail(r, "is not a boolean", prefix, "blocking");
		else if (cJSON_IsFalse(b) && !ploom_mode_allowed(s->op, PLOOM_ACQUIRE_NONBLOCKING))
			fail(r, "is false on an operation other than acquire", prefix, "blocking");
		else if (cJSON_IsFalse(b))
			s->mode = PLOOM_ACQUIRE_NONBLOCKING;
	}
	b = get(r, x, prefix, "timeout", 0);
	if (b && !cJSON_IsBool(b))
		fail(r, "is not a boolean", prefix, "timeout");
	else if (b && cJSON_IsTrue(b)) {
		/* a timed step changes what the step means: refused where it
		 * cannot be one, rather than read as a blocking acquire or join */
		if (r->version < 2)
			fail(r, "needs format version 2", prefix, "timeout");
		else if (!ploom_mode_allowed(s->op, PLOOM_ACQUIRE_TIMED))
			fail(r, "is only for an acquire or a join", prefix, "timeout");
		else if (s->mode == PLOOM_ACQUIRE_NONBLOCKING)
			fail(r, "is true on a nonblocking acquire", prefix, "timeout");
		else
			s->mode = PLOOM_ACQUIRE_TIMED;
	}
	get_str(r, &s->value, x, prefix, "value", 0, 1);
	read_where(r, &s->where, x, prefix);
}

static void read_outcome(struct reader *r, struct ploom_trace *t, const cJSON *root)
{
	struct ploom_outcome *o = &t->run.outcome;
	const cJSON *x = get_object(r, root, "", "outcome"), *e, *w;
	struct ploom_obj obj;
	char *kind = NULL, quoted[QUOTE_MAX + 4];
	const char *p = "outcome.";
	char sub[64];
	int k;

	if (r->failed)
		return;
	get_str(r, &kind, x, p, "kind", 1, 0);
	if (r->failed)
		return;
	k = ploom_outcome_kind_parse(kind);
	if (k < 0) {
		r->failed = 1;
		ploom_err_set(r->err, PLOOM_ERR_INPUT, "unknown outcome kind '%s'",
			      quotable(quoted, kind));
		free(kind);
		return;
	}
	free(kind);
	o->kind = (enum ploom_outcome_kind)k;
	get_str(r, &o->summary, x, p, "summary", 1, 0);
	get_str(r, &o->output, x, p, "output", 0, 1);
	switch (o->kind) {
	case PLOOM_OUTCOME_FAILURE:
		get_int(r, &o->task, x, p, "task", 0, INT_MAX);
		e = get_object(r, x, p, "exception");
		get_str(r, &o->exc_type, e, "outcome.exception.", "type", 1, 0);
		get_str(r, &o->exc_message, e, "outcome.exception.", "message", 1, 0);
		get_str(r, &o->traceback, x, p, "traceback", 0, 1);
		break;
	case PLOOM_OUTCOME_DEADLOCK:
		e = get_array(r, x, p, "waits");
		if (r->failed)
			return;
		o->nwaits = 0;
		o->waits = calloc((size_t)cJSON_GetArraySize(e) + 1, sizeof(*o->waits));
		if (!o->waits) {
			r->failed = 1;
			ploom_err_oom(r->err);
			return;
		}
		cJSON_ArrayForEach(w, e) {
			struct ploom_wait *wt = &o->waits[o->nwaits];
			snprintf(sub, sizeof(sub), "[%zu]", o->nwaits);
			o->nwaits++;
			if (!cJSON_IsObject(w)) {
				fail(r, "is not an object", "outcome.waits", sub);
				return;
			}
			snprintf(sub, sizeof(sub), "outcome.waits[%zu].", o->nwaits - 1);
			get_int(r, &wt->task, w, sub, "task", 0, INT_MAX);
			get_op(r, &wt->op, w, sub, "op");
			get_object_name(r, &wt->object, &obj, w, sub, "object");
			get_int(r, &wt->holder, w, sub, "holder", -1, INT_MAX);
			read_where(r, &wt->where, w, sub);
		}
		break;
	case PLOOM_OUTCOME_CRASH:
		get_int(r, &o->signal, x, p, "signal", 1, 1000);
		break;
	case PLOOM_OUTCOME_EXIT:
		get_int(r, &o->status, x, p, "status", 0, 255);
		break;
	case PLOOM_OUTCOME_STEP_LIMIT:
		o->limit = t->config.max_steps;
		if (get(r, x, p, "limit", 0))
			get_long(r, &o->limit, x, p, "limit", 0, LONG_MAX);
		break;
	case PLOOM_OUTCOME_TIMEOUT:
		/* checked when config was read */
		(void)ploom_timeout_ms(&o->timeout_ms, t->config.schedule_timeout_s);
		break;
	case PLOOM_OUTCOME_DIVERGENCE:
		if (get(r, x, p, "step", 0))
			get_long(r, &o->divergence_index, x, p, "step", 0, LONG_MAX);
		get_str(r, &o->divergence_message, x, p, "message", 0, 1);
		break;
	default:
		break;
	}
}

/* 1 if s is exactly n lower-case hex digits, as git prints object ids. */
static int is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[n] == '\0';
}

/* An optional relative path: a replay joins it to a folder of its own
 * choosing, so it must stay inside that folder. */
static void get_relpath(struct reader *r, char **out, const cJSON *obj, const char *prefix)
{
	get_str(r, out, obj, prefix, "relpath", 0, 1);
	if (!r->failed && *out && !ploom_relpath_is_safe(*out))
		fail(r, "is not a relative path inside its root", prefix, "relpath");
}

/* "source": optional (traces older than the field have none).  A root
 * this ploom does not know is kept, not refused: it only means that the
 * trace does not relocate. */
static void read_source(struct reader *r, struct ploom_trace *t, const cJSON *root)
{
	const cJSON *x = get(r, root, "", "source", 0);

	if (!x || r->failed)
		return;
	if (!cJSON_IsObject(x)) {
		fail(r, "is not an object", "", "source");
		return;
	}
	get_str(r, &t->source.root, x, "source.", "root", 1, 0);
	get_str(r, &t->source.commit, x, "source.", "commit", 0, 1);
	if (!r->failed && t->source.commit && !is_hex(t->source.commit, 40))
		fail(r, "is not a git commit id (40 lower-case hex digits)", "source.", "commit");
	if (!r->failed && get(r, x, "source.", "dirty", 0))
		get_bool(r, &t->source.dirty, x, "source.", "dirty");
}

/* Optional (traces older than the field have none). */
static void read_fingerprints(struct reader *r, struct ploom_trace *t, const cJSON *root)
{
	const cJSON *x = get(r, root, "", "fingerprints", 0), *e;
	char prefix[64];
	char *path = NULL, *blob = NULL, *relpath = NULL;
	size_t i = 0;

	if (!x || r->failed)
		return;
	if (!cJSON_IsArray(x)) {
		fail(r, "is not an array", "", "fingerprints");
		return;
	}
	cJSON_ArrayForEach(e, x) {
		snprintf(prefix, sizeof(prefix), "fingerprints[%zu]", i);
		if (!cJSON_IsObject(e)) {
			fail(r, "is not an object", "", prefix);
			return;
		}
		snprintf(prefix, sizeof(prefix), "fingerprints[%zu].", i);
		get_str(r, &path, e, prefix, "path", 1, 0);
		get_str(r, &blob, e, prefix, "blob", 1, 0);
		get_relpath(r, &relpath, e, prefix);
		if (!r->failed && !*path)
			fail(r, "is empty", prefix, "path");
		if (!r->failed && !is_hex(blob, 40))
			fail(r, "is not a git blob id (40 lower-case hex digits)", prefix, "blob");
		if (!r->failed && (ploom_trace_add_fingerprint(t, path, blob, r->err) < 0 ||
				   ploom_trace_set_last_relpath(t, relpath, r->err) < 0))
			r->failed = 1;
		free(path);
		free(blob);
		free(relpath);
		path = blob = relpath = NULL;
		if (r->failed)
			return;
		i++;
	}
}

/* config.patch: optional (traces older than the field patch nothing),
 * each name as --patch accepts it, since a replay passes them on. */
static void read_patch(struct reader *r, struct ploom_config *c, const cJSON *config)
{
	const cJSON *x = get(r, config, "config.", "patch", 0), *e;
	struct ploom_err why = {0, ""};
	char sub[32], is[96];
	size_t i = 0;

	if (!x || r->failed)
		return;
	if (!cJSON_IsArray(x)) {
		fail(r, "is not an array", "config.", "patch");
		return;
	}
	if (cJSON_GetArraySize(x) > PLOOM_PATCH_MAX) {
		snprintf(is, sizeof(is), "has more than %d entries", PLOOM_PATCH_MAX);
		fail(r, is, "config.", "patch");
		return;
	}
	cJSON_ArrayForEach(e, x) {
		snprintf(sub, sizeof(sub), "patch[%zu]", i++);
		if (!cJSON_IsString(e) || !e->valuestring) {
			fail(r, "is not a string", "config.", sub);
			return;
		}
		if (ploom_config_add_patch(c, e->valuestring, &why) < 0) {
			if (why.kind == PLOOM_ERR_NOMEM) {
				r->failed = 1;
				ploom_err_oom(r->err);
			} else {
				snprintf(is, sizeof(is), "is %s", why.msg);
				fail(r, is, "config.", sub);
			}
			return;
		}
	}
}

/* config.seed and pct_depth, which a sample's search (pct, random) has,
 * each as ploom-explore's options take them. */
static void read_sample(struct reader *r, struct ploom_config *c, const cJSON *config)
{
	long seed = 0;

	if (r->failed || !c->search)
		return;
	if (ploom_search_flags(c->search) & PLOOM_KIND_SAMPLE) {
		get_long(r, &seed, config, "config.", "seed", 0, (long)PLOOM_SAMPLE_MAX_SEED);
		c->seed = (unsigned long)seed;
	}
	if (ploom_search_flags(c->search) & PLOOM_KIND_PCT_DEPTH)
		get_int(r, &c->pct_depth, config, "config.", "pct_depth", 1, PLOOM_PCT_MAX_DEPTH);
}

/* Sets a name read from the trace, within PLOOM_NAMES_MAX objects. */
static void set_name(struct reader *r, struct ploom_run *run, struct ploom_obj obj,
		     const char *name, const char *prefix, const char *field)
{
	char why[64];

	if (run->nnames >= PLOOM_NAMES_MAX) {
		snprintf(why, sizeof(why), "names more than %d objects", PLOOM_NAMES_MAX);
		fail(r, why, prefix, field);
		return;
	}
	if (ploom_run_set_name(run, obj, name, r->err) < 0)
		r->failed = 1;
}

/* "tasks": optional (older traces name no task), ascending by id, each
 * task at most once; a name that is the default one is no name. */
static void read_tasks(struct reader *r, struct ploom_run *run, const cJSON *root)
{
	const cJSON *x = get(r, root, "", "tasks", 0), *e;
	char prefix[64], def[32], *name = NULL;
	long prev = -1;
	size_t i = 0;
	int id = 0;

	if (!x || r->failed)
		return;
	if (!cJSON_IsArray(x)) {
		fail(r, "is not an array", "", "tasks");
		return;
	}
	cJSON_ArrayForEach(e, x) {
		struct ploom_obj obj;

		snprintf(prefix, sizeof(prefix), "tasks[%zu]", i);
		if (!cJSON_IsObject(e)) {
			fail(r, "is not an object", "", prefix);
			return;
		}
		snprintf(prefix, sizeof(prefix), "tasks[%zu].", i++);
		get_int(r, &id, e, prefix, "id", 0, INT_MAX);
		if (!r->failed && id <= prev)
			fail(r, "is not above the task before it", prefix, "id");
		get_label(r, &name, e, prefix, "name", PLOOM_NAME_MAX);
		if (r->failed) {
			free(name);
			return;
		}
		prev = id;
		obj = (struct ploom_obj){PLOOM_OBJ_THREAD, id};
		ploom_obj_default_name(def, sizeof(def), obj);
		if (strcmp(name, def))
			set_name(r, run, obj, name, prefix, "name");
		free(name);
		name = NULL;
		if (r->failed)
			return;
	}
}

/* "objects": optional, the cells and locks the scenario named, each once
 * (tasks are named in "tasks"). */
static void read_objects(struct reader *r, struct ploom_run *run, const cJSON *root)
{
	const cJSON *x = get(r, root, "", "objects", 0), *e;
	char prefix[64], *object = NULL, *name = NULL;
	size_t i = 0;

	if (!x || r->failed)
		return;
	if (!cJSON_IsArray(x)) {
		fail(r, "is not an array", "", "objects");
		return;
	}
	cJSON_ArrayForEach(e, x) {
		struct ploom_obj obj = {PLOOM_OBJ_NONE, 0};

		snprintf(prefix, sizeof(prefix), "objects[%zu]", i);
		if (!cJSON_IsObject(e)) {
			fail(r, "is not an object", "", prefix);
			return;
		}
		snprintf(prefix, sizeof(prefix), "objects[%zu].", i++);
		get_object_name(r, &object, &obj, e, prefix, "object");
		if (!r->failed && !object)
			fail(r, "is not an object name", prefix, "object");
		if (!r->failed && obj.kind != PLOOM_OBJ_CELL && obj.kind != PLOOM_OBJ_LOCK)
			fail(r, "is not a cell or a lock (tasks are named in 'tasks')", prefix,
			     "object");
		if (!r->failed && ploom_run_name(run, obj))
			fail(r, "names an object a second time", prefix, "object");
		get_label(r, &name, e, prefix, "name", PLOOM_NAME_MAX);
		if (!r->failed)
			set_name(r, run, obj, name, prefix, "name");
		free(object);
		free(name);
		object = name = NULL;
		if (r->failed)
			return;
	}
}

static void read_id(struct reader *r, struct ploom_trace *t, const cJSON *root)
{
	if (!get(r, root, "", "id", 0))
		return;
	get_str(r, &t->id, root, "", "id", 0, 1);
	if (!r->failed && !is_hex(t->id, 16))
		fail(r, "is not a failure id (16 lower-case hex digits)", "", "id");
}

static void read_trace_shard(struct reader *r, struct ploom_trace *t, const cJSON *x)
{
	const char *p = "shard.";

	get_int(r, &t->shard.count, x, p, "count", 1, PLOOM_SHARD_MAX);
	get_int(r, &t->shard.index, x, p, "index", 0, PLOOM_SHARD_MAX - 1);
	if (!r->failed && t->shard.index >= t->shard.count)
		fail(r, "is not below shard.count", p, "index");
	get_int(r, &t->shard.depth, x, p, "depth", 0, PLOOM_SHARD_MAX_DEPTH);
	get_long(r, &t->shard.unit, x, p, "unit", 0, LONG_MAX);
	if (r->failed)
		t->shard.count = 0;
}

static void read_trace(struct reader *r, struct ploom_trace *t, const cJSON *root)
{
	const cJSON *x, *e;
	char *format = NULL, seed[11], quoted[QUOTE_MAX + 4];
	long version = 0;
	size_t i;

	if (!cJSON_IsObject(root)) {
		r->failed = 1;
		ploom_err_set(r->err, PLOOM_ERR_INPUT, "not a ploom trace (not a JSON object)");
		return;
	}
	get_str(r, &format, root, "", "format", 1, 0);
	if (r->failed)
		return;
	if (strcmp(format, TRACE_FORMAT)) {
		r->failed = 1;
		ploom_err_set(r->err, PLOOM_ERR_INPUT, "not a ploom trace (format is '%s')",
			      quotable(quoted, format));
		free(format);
		return;
	}
	free(format);
	get_long(r, &version, root, "", "version", LONG_MIN, LONG_MAX);
	if (r->failed)
		return;
	if (version < PLOOM_TRACE_VERSION_MIN || version > PLOOM_TRACE_VERSION) {
		r->failed = 1;
		ploom_err_set(r->err, PLOOM_ERR_INPUT,
			      "unknown format version %ld (this ploom reads %d to %d)", version,
			      PLOOM_TRACE_VERSION_MIN, PLOOM_TRACE_VERSION);
		return;
	}
	r->version = version;
	x = get_object(r, root, "", "scenario");
	get_str(r, &t->scenario.target, x, "scenario.", "target", 1, 0);
	get_str(r, &t->scenario.module, x, "scenario.", "module", 1, 0);
	get_str(r, &t->scenario.qualname, x, "scenario.", "qualname", 1, 0);
	get_str(r, &t->scenario.file, x, "scenario.", "file", 1, 1);
	get_relpath(r, &t->scenario.relpath, x, "scenario.");
	read_fingerprints(r, t, root);
	read_source(r, t, root);
	read_id(r, t, root);
	x = get_object(r, root, "", "python");
	get_str(r, &t->python.implementation, x, "python.", "implementation", 1, 0);
	get_str(r, &t->python.version, x, "python.", "version", 1, 0);
	get_bool(r, &t->python.gil, x, "python.", "gil");
	get_str(r, &t->hash_seed, root, "", "hash_seed", 1, 0);
	if (!r->failed && ploom_args_seed(seed, t->hash_seed) < 0)
		fail(r, "is not a hash seed (a decimal integer from 0 to 4294967295)", "",
		     "hash_seed");
	x = get_object(r, root, "", "config");
	if (!r->failed) {
		if (get(r, x, "config.", "max_preemptions", 1))
			get_int(r, &t->config.max_preemptions, x, "config.", "max_preemptions", 0,
				INT_MAX);
		else
			t->config.max_preemptions = -1;
	}
	get_str(r, &t->config.reduction, x, "config.", "reduction", 1, 0);
	/* optional: a trace written before the search orders came from dfs */
	get_str(r, &t->config.search, x, "config.", "search", 0, 1);
	get_long(r, &t->config.max_steps, x, "config.", "max_steps", 0, LONG_MAX);
	e = get(r, x, "config.", "schedule_timeout_s", 1);
	if (!r->failed) {
		long ms;
		if (!e || !cJSON_IsNumber(e) || ploom_timeout_ms(&ms, e->valuedouble) < 0)
			fail(r, "is not a number of seconds from 0 to 1e9", "config.",
			     "schedule_timeout_s");
		else
			t->config.schedule_timeout_s = e->valuedouble;
	}
	read_patch(r, &t->config, x);
	read_sample(r, &t->config, x);
	/* a replay sends them to the worker, whose run command takes no task
	 * id above PLOOM_MAX_TASK_ID (and no more choices than its own max) */
	get_int_array(r, &t->run.choices, &t->run.nchoices, root, "", "choices",
		      PLOOM_MAX_CHOICES, PLOOM_MAX_TASK_ID);
	get_int(r, &t->run.preemptions, root, "", "preemptions", 0, INT_MAX);
	if (get(r, root, "", "minimized_from", 0))
		get_int(r, &t->minimized_from, root, "", "minimized_from", 0, INT_MAX);
	read_tasks(r, &t->run, root);
	read_objects(r, &t->run, root);
	if (get(r, root, "", "shard", 0))
		read_trace_shard(r, t, get_object(r, root, "", "shard"));
	x = get_array(r, root, "", "steps");
	if (r->failed)
		return;
	i = 0;
	cJSON_ArrayForEach(e, x) {
		struct ploom_step *s = ploom_run_add_step(&t->run);
		if (!s) {
			r->failed = 1;
			ploom_err_oom(r->err);
			return;
		}
		read_step(r, s, e, i++);
		if (r->failed)
			return;
	}
	read_outcome(r, t, root);
}

/* Two members of one object with the same name are refused: JSON leaves
 * their meaning open (cJSON keeps the first, Python's json the last), and
 * a trace must mean one thing to every program that reads it. */
static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first name that two members of obj share, or NULL; *oom set when
 * the sort's array cannot be had.  Small objects are compared pairwise. */
static const char *duplicate_name(const cJSON *obj, int *oom)
{
	const char **names, *dup = NULL;
	const cJSON *c, *d;
	size_t n = 0, i;

	for (c = obj->child; c; c = c->next)
		n++;
	if (n <= 16) {
		for (c = obj->child; c && !dup; c = c->next)
			for (d = c->next; d && !dup; d = d->next)
				if (!strcmp(c->string, d->string))
					dup = c->string;
		return dup;
	}
	names = malloc(n * sizeof(*names));
	if (!names) {
		*oom = 1;
		return NULL;
	}
	for (c = obj->child, i = 0; c; c = c->next)
		names[i++] = c->string;
	qsort(names, n, sizeof(*names), cmp_names);
	for (i = 1; i < n && !dup; i++)
		if (!strcmp(names[i - 1], names[i]))
			dup = names[i];
	free(names);
	return dup;
}

/* Checks x and everything in it.  path[0..len) names x ("" for the root,
 * "steps[3]"); deeper names are cut where the buffer ends.  cJSON's
 * nesting limit bounds the recursion. */
static int check_unique_keys(const cJSON *x, char *path, size_t len, size_t cap,
			     struct ploom_err *err)
{
	const cJSON *c;
	const char *dup;
	size_t i = 0;
	int oom = 0, w;

	if (cJSON_IsObject(x) && (dup = duplicate_name(x, &oom)) != NULL) {
		char qdup[QUOTE_MAX + 4], qpath[QUOTE_MAX + 4];

		if (len)
			return ploom_err_set(err, PLOOM_ERR_INPUT, "duplicate key '%s' in field '%s'",
					     quotable(qdup, dup), quotable(qpath, path));
		return ploom_err_set(err, PLOOM_ERR_INPUT, "duplicate key '%s'", quotable(qdup, dup));
	}
	if (oom)
		return ploom_err_oom(err);
	for (c = x->child; c; c = c->next, i++) {
		if (!cJSON_IsObject(c) && !cJSON_IsArray(c))
			continue;
		if (cJSON_IsObject(x))
			w = snprintf(path + len, cap - len, "%s%.64s", len ? "." : "", c->string);
		else
			w = snprintf(path + len, cap - len, "[%zu]", i);
		if (w < 0 || (size_t)w >= cap - len)
			w = (int)(cap - 1 - len);
		if (check_unique_keys(c, path, len + (size_t)w, cap, err) < 0)
			return -1;
		path[len] = '\0';
	}
	return 0;
}

static size_t line_of(const char *text, size_t off)
{
	size_t i, line = 1;

	for (i = 0; i < off; i++)
		if (text[i] == '\n')
			line++;
	return line;
}

/* The length of the UTF-8 sequence at s (at most n bytes), or 0 when it
 * is not one: no overlong form, no surrogate, nothing above U+10FFFF
 * (RFC 3629). */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t k, need;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		need = 1;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		need = 2;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		need = 3;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (need >= n)
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (k = 2; k <= need; k++)
		if (s[k] < 0x80 || s[k] > 0xbf)
			return 0;
	return need + 1;
}

/* What cJSON lets through and other readers do not: bytes that are not
 * UTF-8 (cJSON copies them into strings as they come), a control
 * character inside a string (JSON forbids them), and a \u0000 escape (a
 * cJSON string ends at its first NUL, so the key or value would be read
 * cut short, where Python's json reads it whole).  Refused before parsing,
 * so that a trace means one thing to every reader.  Returns 0, or -1 with
 * err filled, naming the byte (counted from 1). */
static int check_text(const char *text, size_t len, struct ploom_err *err)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0, n;
	int in_string = 0;

	while (i < len) {
		if (s[i] >= 0x80) {
			n = utf8_sequence(s + i, len - i);
			if (!n)
				return ploom_err_set(err, PLOOM_ERR_INPUT, "invalid UTF-8 at byte %zu",
						     i + 1);
			i += n;
			continue;
		}
		if (s[i] == '"') {
			in_string = !in_string;
		} else if (in_string && s[i] < 0x20) {
			return ploom_err_set(err, PLOOM_ERR_INPUT,
					     "a string holds a control character at byte %zu", i + 1);
		} else if (in_string && s[i] == '\\' && i + 1 < len) {
			if (len - i >= 6 && !memcmp(s + i + 1, "u0000", 5))
				return ploom_err_set(err, PLOOM_ERR_INPUT,
						     "a string holds a NUL character (\\u0000) at "
						     "byte %zu", i + 1);
			/* the escaped character cannot end the string */
			i++;
		}
		i++;
	}
	return 0;
}

/* The JSON document that is the len bytes at text, whole, UTF-8 without
 * a NUL character in a string (check_text()), without a key twice in an
 * object; NULL with err filled when it is not one. */
static cJSON *parse_document(const char *text, size_t len, struct ploom_err *err)
{
	const char *end = NULL;
	cJSON *root;
	char path[256];
	size_t off;

	if (check_text(text, len, err) < 0)
		return NULL;
	root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (!root) {
		off = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;
		ploom_err_set(err, PLOOM_ERR_INPUT, "not valid JSON (line %zu)",
			      line_of(text, off));
		return NULL;
	}
	for (off = (size_t)(end - text); off < len; off++) {
		if (!strchr(" \t\r\n", text[off]) || !text[off]) {
			ploom_err_set(err, PLOOM_ERR_INPUT, "unexpected data after the JSON (line %zu)",
				      line_of(text, off));
			cJSON_Delete(root);
			return NULL;
		}
	}
	path[0] = '\0';
	if (check_unique_keys(root, path, 0, sizeof(path), err) < 0) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

int ploom_trace_parse(struct ploom_trace **out, const char *text, size_t len,
		      struct ploom_err *err)
{
	struct reader r = {.err = err};
	struct ploom_trace *t = NULL;
	cJSON *root = NULL;
	int ret = -1;

	*out = NULL;
	root = parse_document(text, len, err);
	if (!root)
		goto done;
	t = ploom_trace_new();
	if (!t) {
		ploom_err_oom(err);
		goto done;
	}
	read_trace(&r, t, root);
	if (r.failed)
		goto done;
	*out = t;
	t = NULL;
	ret = 0;
done:
	ploom_trace_free(t);
	cJSON_Delete(root);
	return ret;
}

int ploom_trace_read(struct ploom_trace **out, FILE *in, struct ploom_err *err)
{
	char *buf = NULL, *p;
	size_t len = 0, cap = 0, n;
	struct stat st;
	int ret = -1;

	*out = NULL;
	/* a regular file's size is known before a byte is read */
	if (fstat(fileno(in), &st) == 0 && S_ISREG(st.st_mode) &&
	    (uintmax_t)st.st_size > (uintmax_t)PLOOM_TRACE_MAX_BYTES + (uintmax_t)ftello(in)) {
		ploom_err_set(err, PLOOM_ERR_INPUT, "larger than %zu MiB",
			      PLOOM_TRACE_MAX_BYTES >> 20);
		goto done;
	}
	for (;;) {
		if (len > PLOOM_TRACE_MAX_BYTES) {
			ploom_err_set(err, PLOOM_ERR_INPUT, "larger than %zu MiB",
				      PLOOM_TRACE_MAX_BYTES >> 20);
			goto done;
		}
		if (cap - len < 4096) {
			cap = cap ? 2 * cap : 65536;
			/* one byte more than the limit tells a file that exceeds it */
			if (cap > PLOOM_TRACE_MAX_BYTES + 1)
				cap = PLOOM_TRACE_MAX_BYTES + 1;
			p = realloc(buf, cap);
			if (!p) {
				ploom_err_oom(err);
				goto done;
			}
			buf = p;
		}
		n = fread(buf + len, 1, cap - len, in);
		/* no JSON text holds a NUL byte: refuse /dev/zero or a
		 * binary file as it comes, not at the size limit */
		if (memchr(buf + len, '\0', n)) {
			ploom_err_set(err, PLOOM_ERR_INPUT, "not a ploom trace (it contains a NUL byte)");
			goto done;
		}
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(in)) {
		ploom_err_set(err, PLOOM_ERR_SYSTEM, "%s", strerror(errno));
		goto done;
	}
	ret = ploom_trace_parse(out, buf, len, err);
done:
	free(buf);
	return ret;
}

int ploom_trace_read_file(struct ploom_trace **out, const char *path, struct ploom_err *err)
{
	FILE *f;
	int ret;

	*out = NULL;
	if (!strcmp(path, "-"))
		return ploom_trace_read(out, stdin, err);
	f = fopen(path, "r");
	if (!f)
		return ploom_err_set(err, PLOOM_ERR_SYSTEM, "%s", strerror(errno));
	ret = ploom_trace_read(out, f, err);
	fclose(f);
	return ret;
}

int ploom_trace_clone(struct ploom_trace **out, const struct ploom_trace *trace,
		      struct ploom_err *err)
{
	char *text = ploom_trace_to_json(trace, err);
	int ret;

	*out = NULL;
	if (!text)
		return -1;
	ret = ploom_trace_parse(out, text, strlen(text), err);
	free(text);
	return ret;
}

/* ---- statistics read back ---------------------------------------------- */

void ploom_stats_in_free(struct ploom_stats_in *in)
{
	size_t i;

	if (!in)
		return;
	free(in->result);
	free(in->target);
	free(in->stopped_by);
	free(in->reduction);
	free(in->search);
	free(in->hash_seed);
	free(in->trace);
	free(in->minimized_trace);
	free(in->failure.summary);
	free(in->failure.exc_type);
	free(in->failure.exc_message);
	for (i = 0; in->outcomes && i < in->stats.noutcomes; i++)
		free(in->outcomes[i].summary);
	free(in->outcomes);
	free(in->shard);
	free(in);
}

/* A required string member that must be one of the NULL-terminated
 * names (or null, when nullable). */
static void get_name(struct reader *r, char **out, const cJSON *obj, const char *prefix,
		     const char *name, int nullable, const char *const *names)
{
	size_t i;

	get_str(r, out, obj, prefix, name, 1, nullable);
	if (r->failed || !*out)
		return;
	for (i = 0; names[i]; i++)
		if (!strcmp(*out, names[i]))
			return;
	fail(r, "is not a known value", prefix, name);
}

/* A required member that is a number from 0 up. */
static void get_measure(struct reader *r, double *out, const cJSON *obj, const char *name)
{
	const cJSON *x = get(r, obj, "", name, 1);

	if (r->failed)
		return;
	if (!x || !cJSON_IsNumber(x) || !isfinite(x->valuedouble) || x->valuedouble < 0)
		fail(r, "is not a number from 0", "", name);
	else
		*out = x->valuedouble;
}

/* A required member that is an integer from min to max, or null (-1). */
static void get_long_or_null(struct reader *r, long *out, const cJSON *obj, const char *prefix,
			     const char *name, long min, long max)
{
	const cJSON *x = get(r, obj, prefix, name, 1);

	*out = -1;
	if (r->failed || !x)
		return;
	number_to_long(r, out, x, min, max, prefix, name);
}

static void read_stats_failure(struct reader *r, struct ploom_stats_in *in, const cJSON *root)
{
	static const char *const p = "failure.";
	const cJSON *x;
	char *kind = NULL;
	int k;

	if (!get(r, root, "", "failure", 1))
		return;
	x = get_object(r, root, "", "failure");
	get_str(r, &kind, x, p, "kind", 1, 0);
	if (r->failed)
		return;
	k = ploom_outcome_kind_parse(kind);
	free(kind);
	if (k < 0 || !ploom_outcome_is_failure((enum ploom_outcome_kind)k)) {
		fail(r, "is not a kind of failure", p, "kind");
		return;
	}
	in->failure.kind = (enum ploom_outcome_kind)k;
	get_str(r, &in->failure.summary, x, p, "summary", 1, 0);
	if (k == PLOOM_OUTCOME_FAILURE) {
		get_str(r, &in->failure.exc_type, x, p, "type", 1, 0);
		get_str(r, &in->failure.exc_message, x, p, "message", 1, 0);
	}
	if (!r->failed)
		in->stats.failure = &in->failure;
}

static void read_stats_outcomes(struct reader *r, struct ploom_stats_in *in, const cJSON *root)
{
	const cJSON *list, *e;
	char prefix[64], *kind = NULL;
	size_t n;
	int k;

	if (!cJSON_GetObjectItemCaseSensitive(root, "outcomes"))
		return;
	list = get_array(r, root, "", "outcomes");
	if (r->failed)
		return;
	n = (size_t)cJSON_GetArraySize(list);
	if (n > PLOOM_SEARCH_MAX_OUTCOMES) {
		fail(r, "has more than 1000 entries", "", "outcomes");
		return;
	}
	in->outcomes = calloc(n + 1, sizeof(*in->outcomes));
	if (!in->outcomes) {
		r->failed = 1;
		ploom_err_oom(r->err);
		return;
	}
	in->stats.with_outcomes = 1;
	in->stats.outcomes = in->outcomes;
	cJSON_ArrayForEach(e, list) {
		struct ploom_search_outcome *t = &in->outcomes[in->stats.noutcomes];

		snprintf(prefix, sizeof(prefix), "[%zu]", in->stats.noutcomes);
		if (!cJSON_IsObject(e)) {
			fail(r, "is not an object", "outcomes", prefix);
			return;
		}
		snprintf(prefix, sizeof(prefix), "outcomes[%zu].", in->stats.noutcomes++);
		get_str(r, &kind, e, prefix, "kind", 1, 0);
		if (r->failed)
			return;
		k = ploom_outcome_kind_parse(kind);
		free(kind);
		kind = NULL;
		if (k < 0) {
			fail(r, "is not an outcome kind", prefix, "kind");
			return;
		}
		t->kind = (enum ploom_outcome_kind)k;
		get_str(r, &t->summary, e, prefix, "summary", 1, 0);
		get_long(r, &t->schedules, e, prefix, "schedules", 1, LONG_MAX);
	}
	get_bool(r, &in->stats.outcomes_truncated, root, "", "outcomes_truncated");
}

static void read_stats_shard(struct reader *r, struct ploom_stats_in *in, const cJSON *root)
{
	static const char *const p = "shard.";
	struct ploom_shard *sh;
	const cJSON *x;
	long v = 0;

	if (!cJSON_GetObjectItemCaseSensitive(root, "shard"))
		return;
	x = get_object(r, root, "", "shard");
	if (r->failed)
		return;
	sh = in->shard = calloc(1, sizeof(*sh));
	if (!sh) {
		r->failed = 1;
		ploom_err_oom(r->err);
		return;
	}
	get_int(r, &sh->count, x, p, "count", 1, PLOOM_SHARD_MAX);
	get_long(r, &v, x, p, "index", 0, PLOOM_SHARD_MAX - 1);
	sh->index = (int)v;
	if (!r->failed && sh->index >= sh->count)
		fail(r, "is not below shard.count", p, "index");
	get_int(r, &sh->depth, x, p, "depth", 0, PLOOM_SHARD_MAX_DEPTH);
	get_long_or_null(r, &sh->units, x, p, "units", 0, LONG_MAX);
	get_long(r, &sh->owned, x, p, "owned", 0, LONG_MAX);
	get_long(r, &sh->probes, x, p, "probes", 0, LONG_MAX);
	get_long_or_null(r, &sh->failure_unit, x, p, "failure_unit", 0, LONG_MAX);
	if (!r->failed && sh->units >= 0 && sh->owned > sh->units)
		fail(r, "is more than shard.units", p, "owned");
	if (!r->failed && sh->units >= 0 && sh->failure_unit >= sh->units)
		fail(r, "is not below shard.units", p, "failure_unit");
	if (!r->failed && sh->failure_unit >= 0 && sh->failure_unit % sh->count != sh->index)
		fail(r, "is not a unit of this shard", p, "failure_unit");
	if (!r->failed && (sh->failure_unit >= 0) != (in->stats.failure != NULL))
		fail(r, in->stats.failure ? "is null while there is a failure"
					  : "is set while there is no failure", p, "failure_unit");
	sh->last_unit = -1;
	in->stats.shard = sh;
}

/* "search", optional (statistics written before the search orders came
 * from dfs), and a sample's seed and pct_depth, as the trace's config
 * has them. */
static void read_stats_search(struct reader *r, struct ploom_stats_in *in, const cJSON *root)
{
	struct ploom_stats *s = &in->stats;
	long seed = 0;

	if (r->failed || !cJSON_GetObjectItemCaseSensitive(root, "search"))
		return;
	get_str(r, &in->search, root, "", "search", 1, 0);
	if (!r->failed && !ploom_search_kind_find(in->search, NULL))
		fail(r, "is not a known value", "", "search");
	if (r->failed)
		return;
	if (ploom_search_flags(in->search) & PLOOM_KIND_SAMPLE) {
		get_long(r, &seed, root, "", "seed", 0, (long)PLOOM_SAMPLE_MAX_SEED);
		s->seed = (unsigned long)seed;
	}
	if (ploom_search_flags(in->search) & PLOOM_KIND_PCT_DEPTH)
		get_int(r, &s->pct_depth, root, "", "pct_depth", 1, PLOOM_PCT_MAX_DEPTH);
}

static void read_stats(struct reader *r, struct ploom_stats_in *in, const cJSON *root)
{
	static const char *const results[] = {"pass", "failure", "incomplete", NULL};
	static const char *const stops[] = {"failure", "max-steps", "max-schedules",
					    "time-limit", NULL};
	struct ploom_stats *s = &in->stats;
	long v = 0;

	if (!cJSON_IsObject(root)) {
		r->failed = 1;
		ploom_err_set(r->err, PLOOM_ERR_INPUT, "not a JSON object");
		return;
	}
	get_name(r, &in->result, root, "", "result", 0, results);
	get_str(r, &in->target, root, "", "target", 1, 0);
	get_long(r, &s->schedules, root, "", "schedules", 0, LONG_MAX);
	get_long(r, &s->failing, root, "", "failing", 0, LONG_MAX);
	if (!r->failed && s->failing > s->schedules)
		fail(r, "is more than schedules", "", "failing");
	get_bool(r, &s->complete, root, "", "complete");
	get_name(r, &in->stopped_by, root, "", "stopped_by", 1, stops);
	if (!r->failed && s->complete != !in->stopped_by)
		fail(r, s->complete ? "is set in a complete search" : "is null in an incomplete search",
		     "", "stopped_by");
	get_long_or_null(r, &v, root, "", "max_preemptions", 0, INT_MAX);
	s->max_preemptions = (int)v;
	get_str(r, &in->reduction, root, "", "reduction", 1, 0);
	read_stats_search(r, in, root);
	get_str(r, &in->hash_seed, root, "", "hash_seed", 1, 0);
	get_measure(r, &s->elapsed_s, root, "elapsed_s");
	get_measure(r, &s->schedules_per_second, root, "schedules_per_second");
	get_long(r, &s->max_depth, root, "", "max_depth", 0, LONG_MAX);
	get_str(r, &in->trace, root, "", "trace", 1, 1);
	get_str(r, &in->minimized_trace, root, "", "minimized_trace", 1, 1);
	read_stats_failure(r, in, root);
	if (!r->failed && (s->failing > 0) != (s->failure != NULL))
		fail(r, s->failure ? "is set while no schedule failed"
				   : "is null while schedules failed", "", "failure");
	if (!r->failed && !strcmp(in->result, "failure") != (s->failure != NULL))
		fail(r, "does not say what the counts say", "", "result");
	read_stats_outcomes(r, in, root);
	read_stats_shard(r, in, root);
	s->result = in->result;
	s->target = in->target;
	s->stopped_by = in->stopped_by;
	s->reduction = in->reduction;
	s->search = in->search ? in->search : "dfs";
	s->hash_seed = in->hash_seed;
	s->trace = in->trace;
	s->minimized_trace = in->minimized_trace;
}

int ploom_stats_parse(struct ploom_stats_in **out, const char *text, size_t len,
		      struct ploom_err *err)
{
	struct reader r = {.err = err};
	struct ploom_stats_in *in = NULL;
	cJSON *root = NULL;
	int ret = -1;

	*out = NULL;
	root = parse_document(text, len, err);
	if (!root)
		goto done;
	in = calloc(1, sizeof(*in));
	if (!in) {
		ploom_err_oom(err);
		goto done;
	}
	read_stats(&r, in, root);
	if (r.failed)
		goto done;
	*out = in;
	in = NULL;
	ret = 0;
done:
	ploom_stats_in_free(in);
	cJSON_Delete(root);
	return ret;
}

int ploom_stats_read_file(struct ploom_stats_in **out, const char *path, struct ploom_err *err)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char *buf = NULL;
	size_t len = 0;
	int ret = -1;

	*out = NULL;
	if (!f)
		return ploom_err_set(err, PLOOM_ERR_SYSTEM, "%s", strerror(errno));
	buf = malloc(PLOOM_STATS_MAX_BYTES + 1);
	if (!buf) {
		ploom_err_oom(err);
		goto done;
	}
	len = fread(buf, 1, PLOOM_STATS_MAX_BYTES + 1, f);
	if (ferror(f))
		ploom_err_set(err, PLOOM_ERR_SYSTEM, "%s", strerror(errno));
	else if (len > PLOOM_STATS_MAX_BYTES)
		ploom_err_set(err, PLOOM_ERR_INPUT, "larger than %zu MiB",
			      PLOOM_STATS_MAX_BYTES >> 20);
	else if (memchr(buf, '\0', len))
		ploom_err_set(err, PLOOM_ERR_INPUT, "not JSON (it contains a NUL byte)");
	else
		ret = ploom_stats_parse(out, buf, len, err);
done:
	free(buf);
	if (f != stdin)
		fclose(f);
	return ret;
}
