/* The trace codec's reader: traces from JSON; json.h documents the format,
 * json-write.c writes it.  With json-write.c, stats.c and jsonutil.c, the
 * only files that include cJSON.h (through jsonutil.h). */
#include "json.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "jsonutil.h"
#include "kind.h"
#include "policy.h"
#include "shard.h"
#include "source.h"

/* ---- reading ---- */

/* A required operation name. */
static void get_op(struct ploom_json_reader *r, enum ploom_op *out, const cJSON *obj,
		   const char *prefix, const char *name)
{
	char *s = NULL;
	int op;

	ploom_json_get_str(r, &s, obj, prefix, name, 1, 0);
	if (r->failed)
		return;
	op = ploom_op_parse(s, strlen(s));
	free(s);
	if (op < 0)
		ploom_json_fail(r, "is not a known operation", prefix, name);
	else
		*out = (enum ploom_op)op;
}

/* A wait's "for", which a trace written before it was recorded lacks: then
 * what its operation waits for, a lock's release or a thread's end. */
static void get_wait_for(struct ploom_json_reader *r, struct ploom_wait *wt, const cJSON *obj,
			 const char *prefix)
{
	char *s = NULL;
	int w;

	wt->waits_for = wt->op == PLOOM_OP_JOIN ? PLOOM_WAIT_JOIN : PLOOM_WAIT_LOCK;
	ploom_json_get_str(r, &s, obj, prefix, "for", 0, 0);
	if (r->failed || !s)
		return;
	w = ploom_wait_for_parse(s, strlen(s));
	free(s);
	if (w < 0)
		ploom_json_fail(r, "is not a known wait", prefix, "for");
	else
		wt->waits_for = (enum ploom_wait_for)w;
}

/* An optional object name that must parse, as the worker writes them. */
static void get_object_name(struct ploom_json_reader *r, char **out, struct ploom_obj *obj,
			    const cJSON *x, const char *prefix, const char *name)
{
	ploom_json_get_str(r, out, x, prefix, name, 1, 1);
	if (r->failed || !*out)
		return;
	if (ploom_obj_parse(obj, *out, strlen(*out)) < 0 || obj->kind == PLOOM_OBJ_NONE)
		ploom_json_fail(r, "is not an object name", prefix, name);
}


/* A required string that is a label of at most max bytes (event.h). */
static void get_label(struct ploom_json_reader *r, char **out, const cJSON *obj, const char *prefix,
		      const char *name, size_t max)
{
	const char *why;

	ploom_json_get_str(r, out, obj, prefix, name, 1, 0);
	if (r->failed)
		return;
	why = ploom_label_problem(*out, strlen(*out), max);
	if (why)
		ploom_json_fail(r, why, prefix, name);
}

/* "where": optional (traces older than it, and steps the worker could
 * not place, have none).  Only read, never opened: the file may be any
 * absolute path, or a relative one that stays inside its root. */
static void read_where(struct ploom_json_reader *r, struct ploom_where *w, const cJSON *obj,
		       const char *prefix)
{
	const cJSON *x = ploom_json_get(r, obj, prefix, "where", 0);
	char sub[96];

	if (!x || r->failed)
		return;
	if (!cJSON_IsObject(x)) {
		ploom_json_fail(r, "is not an object", prefix, "where");
		return;
	}
	snprintf(sub, sizeof(sub), "%swhere.", prefix);
	get_label(r, &w->file, x, sub, "file", PLOOM_PATH_MAX);
	if (!r->failed && w->file[0] != '/' && !ploom_relpath_is_safe(w->file))
		ploom_json_fail(r, "is neither an absolute path nor a relative one inside its root",
				sub, "file");
	get_label(r, &w->function, x, sub, "function", PLOOM_NAME_MAX);
	ploom_json_get_int(r, &w->line, x, sub, "line", 1, INT_MAX);
}

static void read_step(struct ploom_json_reader *r, struct ploom_step *s, const cJSON *x, size_t i)
{
	char prefix[64];
	const cJSON *b;
	size_t k;

	snprintf(prefix, sizeof(prefix), "steps[%zu].", i);
	if (!cJSON_IsObject(x)) {
		snprintf(prefix, sizeof(prefix), "[%zu]", i);
		ploom_json_fail(r, "is not an object", "steps", prefix);
		return;
	}
	ploom_json_get_long(r, &s->index, x, prefix, "index", 0, LONG_MAX);
	if (!r->failed && s->index != (long)i)
		ploom_json_fail(r, "is out of order", prefix, "index");
	ploom_json_get_int(r, &s->task, x, prefix, "task", 0, INT_MAX);
	get_op(r, &s->op, x, prefix, "op");
	get_object_name(r, &s->object, &s->obj, x, prefix, "object");
	ploom_json_get_int_array(r, &s->enabled, &s->nenabled, x, prefix, "enabled", SIZE_MAX,
				 INT_MAX);
	for (k = 1; !r->failed && k < s->nenabled; k++)
		if (s->enabled[k] <= s->enabled[k - 1])
			ploom_json_fail(r, "is not ascending", prefix, "enabled");
	/* the step's task ran there, so it was enabled: the worker's step
	 * records hold to this, and what reads a trace (the branch points,
	 * the preemptions, the races) counts on it */
	if (!r->failed && !s->nenabled)
		ploom_json_fail(r, "is empty", prefix, "enabled");
	else if (!r->failed && !ploom_step_is_enabled(s, s->task))
		ploom_json_fail(r, "does not hold the step's task", prefix, "enabled");
	b = ploom_json_get(r, x, prefix, "blocking", 0);
	if (b) {
		if (!cJSON_IsBool(b))
			ploom_json_fail(r, "is not a boolean", prefix, "blocking");
		else if (cJSON_IsFalse(b) && !ploom_mode_allowed(s->op, PLOOM_ACQUIRE_NONBLOCKING))
			ploom_json_fail(r, "is false on an operation other than acquire", prefix,
					"blocking");
		else if (cJSON_IsFalse(b))
			s->mode = PLOOM_ACQUIRE_NONBLOCKING;
	}
	b = ploom_json_get(r, x, prefix, "timeout", 0);
	if (b && !cJSON_IsBool(b))
		ploom_json_fail(r, "is not a boolean", prefix, "timeout");
	else if (b && cJSON_IsTrue(b)) {
		/* a timed step changes what the step means: refused where it
		 * cannot be one, rather than read as a blocking acquire or join */
		if (r->version < 2)
			ploom_json_fail(r, "needs format version 2", prefix, "timeout");
		else if (!ploom_mode_allowed(s->op, PLOOM_ACQUIRE_TIMED))
			ploom_json_fail(r, "is only for an acquire or a join", prefix, "timeout");
		else if (s->mode == PLOOM_ACQUIRE_NONBLOCKING)
			ploom_json_fail(r, "is true on a nonblocking acquire", prefix, "timeout");
		else
			s->mode = PLOOM_ACQUIRE_TIMED;
	}
	ploom_json_get_str(r, &s->value, x, prefix, "value", 0, 1);
	if (ploom_json_get(r, x, prefix, "clock_ns", 0)) {
		long ns = 0;
		ploom_json_get_long(r, &ns, x, prefix, "clock_ns", 0, LONG_MAX);
		s->idle = 1;
		s->clock_ns = ns;
	}
	if (ploom_json_get(r, x, prefix, "stall_ns", 0)) {
		long ns = 0;
		ploom_json_get_long(r, &ns, x, prefix, "stall_ns", 1, LONG_MAX);
		ploom_json_get_int(r, &s->stall_of, x, prefix, "stall_of", -1, INT_MAX);
		if (!r->failed && s->mode != PLOOM_ACQUIRE_TIMED)
			ploom_json_fail(r, "is only for a timed wait", prefix, "stall_ns");
		s->stalled = 1;
		s->stall_ns = ns;
	}
	if (ploom_json_get(r, x, prefix, "label", 0))
		get_label(r, &s->label, x, prefix, "label", PLOOM_NAME_MAX);
	read_where(r, &s->where, x, prefix);
}

/* A frame's file: only read, never opened, as a where's. */
static void read_frame(struct ploom_json_reader *r, struct ploom_where *w, const cJSON *x,
		       const char *prefix)
{
	get_label(r, &w->file, x, prefix, "file", PLOOM_PATH_MAX);
	if (!r->failed && w->file[0] != '/' && !ploom_relpath_is_safe(w->file))
		ploom_json_fail(r, "is neither an absolute path nor a relative one inside its root",
				prefix, "file");
	get_label(r, &w->function, x, prefix, "function", PLOOM_NAME_MAX);
	ploom_json_get_int(r, &w->line, x, prefix, "line", 0, INT_MAX);
}

/* A timeout's or a step limit's "stacks": optional (older traces, and a worker that got no
 * dump in time, have none); tasks ascending, a running one's frames
 * innermost first and no more than its depth or PLOOM_STACK_FRAMES_MAX. */
static void read_stacks(struct ploom_json_reader *r, struct ploom_outcome *o, const cJSON *x)
{
	const cJSON *e = ploom_json_get(r, x, "outcome.", "stacks", 0), *it, *fr, *f;
	char sub[96], fsub[128];
	char *state = NULL;
	int n, k;

	if (!e || r->failed)
		return;
	if (!cJSON_IsArray(e)) {
		ploom_json_fail(r, "is not an array", "outcome.", "stacks");
		return;
	}
	n = cJSON_GetArraySize(e);
	if (n > PLOOM_STACK_TASKS_MAX) {
		ploom_json_fail(r, "has more than 1024 entries", "outcome.", "stacks");
		return;
	}
	o->stacks = calloc((size_t)n + 1, sizeof(*o->stacks));
	if (!o->stacks) {
		r->failed = 1;
		ploom_err_oom(r->err);
		return;
	}
	cJSON_ArrayForEach(it, e) {
		struct ploom_stack *st = &o->stacks[o->nstacks];
		int kind;

		snprintf(sub, sizeof(sub), "outcome.stacks[%zu].", o->nstacks);
		o->nstacks++;
		if (!cJSON_IsObject(it)) {
			snprintf(sub, sizeof(sub), "[%zu]", o->nstacks - 1);
			ploom_json_fail(r, "is not an object", "outcome.stacks", sub);
			return;
		}
		ploom_json_get_int(r, &st->task, it, sub, "task", 0, INT_MAX);
		if (!r->failed && o->nstacks > 1 && st->task <= o->stacks[o->nstacks - 2].task)
			ploom_json_fail(r, "is not above the task before", sub, "task");
		ploom_json_get_str(r, &state, it, sub, "state", 1, 0);
		if (r->failed)
			break;
		kind = ploom_stack_state_parse(state, strlen(state));
		free(state);
		state = NULL;
		if (kind < 0) {
			ploom_json_fail(r, "is not running, finished, unstarted or unknown", sub,
					"state");
			return;
		}
		st->state = (enum ploom_stack_state)kind;
		if (st->state != PLOOM_STACK_RUNNING) {
			if (ploom_json_get(r, it, sub, "frames", 0) || ploom_json_get(r, it, sub, "depth", 0))
				ploom_json_fail(r, "belongs to a running task only", sub,
						ploom_json_get(r, it, sub, "frames", 0) ? "frames" : "depth");
			continue;
		}
		ploom_json_get_long(r, &st->depth, it, sub, "depth", 0, LONG_MAX);
		fr = ploom_json_get_array(r, it, sub, "frames");
		if (r->failed)
			return;
		k = cJSON_GetArraySize(fr);
		if (k > PLOOM_STACK_FRAMES_MAX || k > st->depth) {
			ploom_json_fail(r, "has more entries than depth or 8", sub, "frames");
			return;
		}
		st->frames = calloc((size_t)k + 1, sizeof(*st->frames));
		if (!st->frames) {
			r->failed = 1;
			ploom_err_oom(r->err);
			return;
		}
		cJSON_ArrayForEach(f, fr) {
			snprintf(fsub, sizeof(fsub), "%sframes[%zu].", sub, st->nframes);
			if (!cJSON_IsObject(f)) {
				char at[32];
				snprintf(fsub, sizeof(fsub), "%sframes", sub);
				snprintf(at, sizeof(at), "[%zu]", st->nframes);
				ploom_json_fail(r, "is not an object", fsub, at);
				return;
			}
			read_frame(r, &st->frames[st->nframes++], f, fsub);
			if (r->failed)
				return;
		}
	}
}

static void read_outcome(struct ploom_json_reader *r, struct ploom_trace *t, const cJSON *root)
{
	struct ploom_outcome *o = &t->run.outcome;
	const cJSON *x = ploom_json_get_object(r, root, "", "outcome"), *e, *w;
	struct ploom_obj obj;
	char *kind = NULL, quoted[PLOOM_JSON_QUOTE_MAX + 4];
	const char *p = "outcome.";
	char sub[64];
	int k;

	if (r->failed)
		return;
	ploom_json_get_str(r, &kind, x, p, "kind", 1, 0);
	if (r->failed)
		return;
	k = ploom_outcome_kind_parse(kind);
	if (k < 0) {
		r->failed = 1;
		ploom_err_set(r->err, PLOOM_ERR_INPUT, "unknown outcome kind '%s'",
			      ploom_json_quote(quoted, kind));
		free(kind);
		return;
	}
	free(kind);
	o->kind = (enum ploom_outcome_kind)k;
	ploom_json_get_str(r, &o->summary, x, p, "summary", 1, 0);
	ploom_json_get_str(r, &o->output, x, p, "output", 0, 1);
	switch (o->kind) {
	case PLOOM_OUTCOME_FAILURE:
		ploom_json_get_int(r, &o->task, x, p, "task", 0, INT_MAX);
		e = ploom_json_get_object(r, x, p, "exception");
		ploom_json_get_str(r, &o->exc_type, e, "outcome.exception.", "type", 1, 0);
		ploom_json_get_str(r, &o->exc_message, e, "outcome.exception.", "message", 1, 0);
		ploom_json_get_str(r, &o->traceback, x, p, "traceback", 0, 1);
		break;
	case PLOOM_OUTCOME_DEADLOCK:
		e = ploom_json_get_array(r, x, p, "waits");
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
				ploom_json_fail(r, "is not an object", "outcome.waits", sub);
				return;
			}
			snprintf(sub, sizeof(sub), "outcome.waits[%zu].", o->nwaits - 1);
			ploom_json_get_int(r, &wt->task, w, sub, "task", 0, INT_MAX);
			get_op(r, &wt->op, w, sub, "op");
			get_object_name(r, &wt->object, &obj, w, sub, "object");
			ploom_json_get_int(r, &wt->holder, w, sub, "holder", -1, INT_MAX);
			read_where(r, &wt->where, w, sub);
			get_wait_for(r, wt, w, sub);
			if (ploom_json_get(r, w, sub, "on", 0))
				get_label(r, &wt->on, w, sub, "on", PLOOM_NAME_MAX);
		}
		break;
	case PLOOM_OUTCOME_CRASH:
		ploom_json_get_int(r, &o->signal, x, p, "signal", 1, 1000);
		break;
	case PLOOM_OUTCOME_EXIT:
		ploom_json_get_int(r, &o->status, x, p, "status", 0, 255);
		break;
	case PLOOM_OUTCOME_STEP_LIMIT:
		o->limit = t->config.max_steps;
		if (ploom_json_get(r, x, p, "limit", 0))
			ploom_json_get_long(r, &o->limit, x, p, "limit", 0, LONG_MAX);
		read_stacks(r, o, x);
		break;
	case PLOOM_OUTCOME_TIMEOUT:
		/* checked when config was read */
		(void)ploom_timeout_ms(&o->timeout_ms, t->config.schedule_timeout_s);
		read_stacks(r, o, x);
		break;
	case PLOOM_OUTCOME_DIVERGENCE:
		if (ploom_json_get(r, x, p, "step", 0))
			ploom_json_get_long(r, &o->divergence_index, x, p, "step", 0, LONG_MAX);
		ploom_json_get_str(r, &o->divergence_message, x, p, "message", 0, 1);
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
static void get_relpath(struct ploom_json_reader *r, char **out, const cJSON *obj,
			const char *prefix)
{
	ploom_json_get_str(r, out, obj, prefix, "relpath", 0, 1);
	if (!r->failed && *out && !ploom_relpath_is_safe(*out))
		ploom_json_fail(r, "is not a relative path inside its root", prefix, "relpath");
}

/* "scenario.cwd" and "scenario.import_paths": optional (a trace older
 * than them, or of a search that ran outside its root, has none).  Each
 * must stay inside the root: a trace is untrusted, and a replay puts
 * them on sys.path. */
static void read_import_paths(struct ploom_json_reader *r, struct ploom_trace *t, const cJSON *obj)
{
	const cJSON *x, *e;
	char sub[48], is[64];
	size_t i = 0;

	if (r->failed || !obj)
		return;
	ploom_json_get_str(r, &t->scenario.cwd, obj, "scenario.", "cwd", 0, 1);
	if (!r->failed && t->scenario.cwd && !ploom_import_path_is_safe(t->scenario.cwd)) {
		ploom_json_fail(r, "is not a folder inside its root", "scenario.", "cwd");
		return;
	}
	x = ploom_json_get(r, obj, "scenario.", "import_paths", 0);
	if (!x || r->failed)
		return;
	if (!cJSON_IsArray(x) || cJSON_GetArraySize(x) > PLOOM_IMPORT_PATHS_MAX) {
		snprintf(is, sizeof(is), "is not an array of at most %d entries",
			 PLOOM_IMPORT_PATHS_MAX);
		ploom_json_fail(r, is, "scenario.", "import_paths");
		return;
	}
	cJSON_ArrayForEach(e, x) {
		snprintf(sub, sizeof(sub), "import_paths[%zu]", i++);
		if (!cJSON_IsString(e) || !e->valuestring ||
		    !ploom_import_path_is_safe(e->valuestring)) {
			ploom_json_fail(r, "is not a folder inside its root", "scenario.", sub);
			return;
		}
		if (ploom_trace_add_import_path(t, e->valuestring, r->err) < 0) {
			r->failed = 1;
			return;
		}
	}
}

/* "source": optional (traces older than the field have none).  A root
 * this ploom does not know is kept, not refused: it only means that the
 * trace does not relocate. */
static void read_source(struct ploom_json_reader *r, struct ploom_trace *t, const cJSON *root)
{
	const cJSON *x = ploom_json_get(r, root, "", "source", 0);

	if (!x || r->failed)
		return;
	if (!cJSON_IsObject(x)) {
		ploom_json_fail(r, "is not an object", "", "source");
		return;
	}
	ploom_json_get_str(r, &t->source.root, x, "source.", "root", 1, 0);
	ploom_json_get_str(r, &t->source.commit, x, "source.", "commit", 0, 1);
	if (!r->failed && t->source.commit && !is_hex(t->source.commit, 40))
		ploom_json_fail(r, "is not a git commit id (40 lower-case hex digits)", "source.",
				"commit");
	if (!r->failed && ploom_json_get(r, x, "source.", "dirty", 0))
		ploom_json_get_bool(r, &t->source.dirty, x, "source.", "dirty");
}

/* Optional (traces older than the field have none). */
static void read_fingerprints(struct ploom_json_reader *r, struct ploom_trace *t, const cJSON *root)
{
	const cJSON *x = ploom_json_get(r, root, "", "fingerprints", 0), *e;
	char prefix[64];
	char *path = NULL, *blob = NULL, *relpath = NULL;
	size_t i = 0;

	if (!x || r->failed)
		return;
	if (!cJSON_IsArray(x)) {
		ploom_json_fail(r, "is not an array", "", "fingerprints");
		return;
	}
	cJSON_ArrayForEach(e, x) {
		snprintf(prefix, sizeof(prefix), "fingerprints[%zu]", i);
		if (!cJSON_IsObject(e)) {
			ploom_json_fail(r, "is not an object", "", prefix);
			return;
		}
		snprintf(prefix, sizeof(prefix), "fingerprints[%zu].", i);
		ploom_json_get_str(r, &path, e, prefix, "path", 1, 0);
		ploom_json_get_str(r, &blob, e, prefix, "blob", 1, 0);
		get_relpath(r, &relpath, e, prefix);
		if (!r->failed && !*path)
			ploom_json_fail(r, "is empty", prefix, "path");
		if (!r->failed && !is_hex(blob, 40))
			ploom_json_fail(r, "is not a git blob id (40 lower-case hex digits)",
					prefix, "blob");
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

/* config.plain_points: optional (none: every access site of instrumented
 * code is watched), each a site key, since a replay passes them on.  Each
 * is checked here, naming its index, then all are added at once: a
 * trace may hold PLOOM_PLAIN_POINTS_MAX of them. */
static void read_plain_points(struct ploom_json_reader *r, struct ploom_config *c,
			      const cJSON *config)
{
	const cJSON *x = ploom_json_get(r, config, "config.", "plain_points", 0), *e;
	struct ploom_err why = {0, ""};
	const char **keys;
	char sub[40], is[300];
	size_t i = 0;

	if (!x || r->failed)
		return;
	if (!cJSON_IsArray(x)) {
		ploom_json_fail(r, "is not an array", "config.", "plain_points");
		return;
	}
	if (cJSON_GetArraySize(x) > PLOOM_PLAIN_POINTS_MAX) {
		snprintf(is, sizeof(is), "has more than %d entries", PLOOM_PLAIN_POINTS_MAX);
		ploom_json_fail(r, is, "config.", "plain_points");
		return;
	}
	keys = malloc(((size_t)cJSON_GetArraySize(x) + 1) * sizeof(*keys));
	if (!keys) {
		r->failed = 1;
		ploom_err_oom(r->err);
		return;
	}
	cJSON_ArrayForEach(e, x) {
		snprintf(sub, sizeof(sub), "plain_points[%zu]", i);
		if (!cJSON_IsString(e) || !e->valuestring) {
			ploom_json_fail(r, "is not a string", "config.", sub);
			goto done;
		}
		if (ploom_plain_point_problem(e->valuestring)) {
			ploom_json_fail(r, "is not a site key (MODULE:K)", "config.", sub);
			goto done;
		}
		keys[i++] = e->valuestring;
	}
	if (ploom_config_add_plain_point_list(c, keys, i, &why) < 0) {
		if (why.kind == PLOOM_ERR_NOMEM) {
			r->failed = 1;
			ploom_err_oom(r->err);
		} else {
			snprintf(is, sizeof(is), "is %s", why.msg);
			ploom_json_fail(r, is, "config.", "plain_points");
		}
	}
done:
	free(keys);
}

/* config.reduction and config.search, the search the trace ran: a kind
 * of the registry, or the trace is refused ("is not a known search"), as
 * statistics are. */
static void read_kind(struct ploom_json_reader *r, struct ploom_config *c, const cJSON *config)
{
	char *reduction = NULL, *search = NULL;

	ploom_json_get_str(r, &reduction, config, "config.", "reduction", 1, 0);
	/* optional: a trace written before the search orders came from dfs */
	ploom_json_get_str(r, &search, config, "config.", "search", 0, 1);
	if (!r->failed) {
		c->kind = ploom_search_kind_find(search, reduction);
		if (!c->kind)
			ploom_json_fail(r, search ? "is not a known search with this reduction" :
				       "is not a known reduction", "config.",
				       search ? "search" : "reduction");
	}
	free(reduction);
	free(search);
}

/* config.seed and pct_depth, which a sample's search (pct, random) has,
 * each as ploom-explore's options take them. */
static void read_sample(struct ploom_json_reader *r, struct ploom_config *c, const cJSON *config)
{
	long seed = 0;

	if (r->failed)
		return;
	if (ploom_config_kind(c)->flags & PLOOM_KIND_SAMPLE) {
		ploom_json_get_long(r, &seed, config, "config.", "seed", 0,
				    (long)PLOOM_SAMPLE_MAX_SEED);
		c->seed = (unsigned long)seed;
	}
	if (ploom_config_kind(c)->flags & PLOOM_KIND_PCT_DEPTH)
		ploom_json_get_int(r, &c->pct_depth, config, "config.", "pct_depth", 1,
				   PLOOM_PCT_MAX_DEPTH);
}

/* Sets a name read from the trace, within PLOOM_NAMES_MAX objects. */
static void set_name(struct ploom_json_reader *r, struct ploom_run *run, struct ploom_obj obj,
		     const char *name, const char *prefix, const char *field)
{
	char why[64];

	if (run->nnames >= PLOOM_NAMES_MAX) {
		snprintf(why, sizeof(why), "names more than %d objects", PLOOM_NAMES_MAX);
		ploom_json_fail(r, why, prefix, field);
		return;
	}
	if (ploom_run_set_name(run, obj, name, r->err) < 0)
		r->failed = 1;
}

/* "tasks": optional (older traces name no task), ascending by id, each
 * task at most once; a name that is the default one is no name. */
static void read_tasks(struct ploom_json_reader *r, struct ploom_run *run, const cJSON *root)
{
	const cJSON *x = ploom_json_get(r, root, "", "tasks", 0), *e;
	char prefix[64], def[32], *name = NULL;
	long prev = -1;
	size_t i = 0;
	int id = 0;

	if (!x || r->failed)
		return;
	if (!cJSON_IsArray(x)) {
		ploom_json_fail(r, "is not an array", "", "tasks");
		return;
	}
	cJSON_ArrayForEach(e, x) {
		struct ploom_obj obj;

		snprintf(prefix, sizeof(prefix), "tasks[%zu]", i);
		if (!cJSON_IsObject(e)) {
			ploom_json_fail(r, "is not an object", "", prefix);
			return;
		}
		snprintf(prefix, sizeof(prefix), "tasks[%zu].", i++);
		ploom_json_get_int(r, &id, e, prefix, "id", 0, INT_MAX);
		if (!r->failed && id <= prev)
			ploom_json_fail(r, "is not above the task before it", prefix, "id");
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
static void read_objects(struct ploom_json_reader *r, struct ploom_run *run, const cJSON *root)
{
	const cJSON *x = ploom_json_get(r, root, "", "objects", 0), *e;
	char prefix[64], *object = NULL, *name = NULL;
	size_t i = 0;

	if (!x || r->failed)
		return;
	if (!cJSON_IsArray(x)) {
		ploom_json_fail(r, "is not an array", "", "objects");
		return;
	}
	cJSON_ArrayForEach(e, x) {
		struct ploom_obj obj = {PLOOM_OBJ_NONE, 0};

		snprintf(prefix, sizeof(prefix), "objects[%zu]", i);
		if (!cJSON_IsObject(e)) {
			ploom_json_fail(r, "is not an object", "", prefix);
			return;
		}
		snprintf(prefix, sizeof(prefix), "objects[%zu].", i++);
		get_object_name(r, &object, &obj, e, prefix, "object");
		if (!r->failed && !object)
			ploom_json_fail(r, "is not an object name", prefix, "object");
		if (!r->failed && obj.kind != PLOOM_OBJ_CELL && obj.kind != PLOOM_OBJ_LOCK &&
		    obj.kind != PLOOM_OBJ_PLAIN)
			ploom_json_fail(r, "is not a cell, a lock or plain state (tasks are named in 'tasks')",
					prefix, "object");
		if (!r->failed && ploom_run_name(run, obj))
			ploom_json_fail(r, "names an object a second time", prefix, "object");
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

static void read_id(struct ploom_json_reader *r, struct ploom_trace *t, const cJSON *root)
{
	if (!ploom_json_get(r, root, "", "id", 0))
		return;
	ploom_json_get_str(r, &t->id, root, "", "id", 0, 1);
	if (!r->failed && !is_hex(t->id, 16))
		ploom_json_fail(r, "is not a failure id (16 lower-case hex digits)", "", "id");
}

static void read_trace_shard(struct ploom_json_reader *r, struct ploom_trace *t, const cJSON *x)
{
	const char *p = "shard.";

	ploom_json_get_int(r, &t->shard.count, x, p, "count", 1, PLOOM_SHARD_MAX);
	ploom_json_get_int(r, &t->shard.index, x, p, "index", 0, PLOOM_SHARD_MAX - 1);
	if (!r->failed && t->shard.index >= t->shard.count)
		ploom_json_fail(r, "is not below shard.count", p, "index");
	ploom_json_get_int(r, &t->shard.depth, x, p, "depth", 0, PLOOM_SHARD_MAX_DEPTH);
	ploom_json_get_long(r, &t->shard.unit, x, p, "unit", 0, LONG_MAX);
	if (r->failed)
		t->shard.count = 0;
}

/* The trace's "config". */
static void read_config(struct ploom_json_reader *r, struct ploom_trace *t, const cJSON *root)
{
	const cJSON *x, *e;

	x = ploom_json_get_object(r, root, "", "config");
	if (!r->failed) {
		if (ploom_json_get(r, x, "config.", "max_preemptions", 1))
			ploom_json_get_int(r, &t->config.max_preemptions, x, "config.",
					   "max_preemptions", 0, INT_MAX);
		else
			t->config.max_preemptions = -1;
	}
	read_kind(r, &t->config, x);
	ploom_json_get_long(r, &t->config.max_steps, x, "config.", "max_steps", 0, LONG_MAX);
	e = ploom_json_get(r, x, "config.", "schedule_timeout_s", 1);
	if (!r->failed) {
		long ms;
		if (!e || !cJSON_IsNumber(e) || ploom_timeout_ms(&ms, e->valuedouble) < 0)
			ploom_json_fail(r, "is not a number of seconds from 0 to 1e9", "config.",
					"schedule_timeout_s");
		else
			t->config.schedule_timeout_s = e->valuedouble;
	}
	/* optional (traces older than the fields patch and instrument
	 * nothing), each name as the option of that name accepts it, since
	 * a replay passes them on */
	ploom_json_get_modules(r, &t->config, x, "config.", "patch", ploom_config_add_patch);
	ploom_json_get_modules(r, &t->config, x, "config.", "instrument",
			       ploom_config_add_instrument);
	/* optional: a trace older than the field instruments nothing */
	if (ploom_json_get(r, x, "config.", "instrument_scenario", 0))
		ploom_json_get_bool(r, &t->config.instrument_scenario, x, "config.",
				    "instrument_scenario");
	/* optional: a trace older than the field patched no module by default */
	if (ploom_json_get(r, x, "config.", "patch_project", 0))
		ploom_json_get_bool(r, &t->config.patch_project, x, "config.", "patch_project");
	/* optional: a trace older than the field ran under the stress model */
	t->config.timeouts = PLOOM_TIMEOUTS_ANY;
	if (ploom_json_get(r, x, "config.", "timeouts", 0)) {
		char *model = NULL;
		int m;
		ploom_json_get_str(r, &model, x, "config.", "timeouts", 1, 0);
		if (!r->failed) {
			m = ploom_timeouts_parse(model);
			if (m < 0)
				ploom_json_fail(r, "is neither \"idle\" nor \"any\"", "config.",
						"timeouts");
			else
				t->config.timeouts = (enum ploom_timeouts)m;
		}
		free(model);
	}
	read_plain_points(r, &t->config, x);
	read_sample(r, &t->config, x);
}

static void read_trace(struct ploom_json_reader *r, struct ploom_trace *t, const cJSON *root)
{
	const cJSON *x, *e;
	char *format = NULL, seed[11], quoted[PLOOM_JSON_QUOTE_MAX + 4];
	long version = 0;
	size_t i;

	if (!cJSON_IsObject(root)) {
		r->failed = 1;
		ploom_err_set(r->err, PLOOM_ERR_INPUT, "not a ploom trace (not a JSON object)");
		return;
	}
	ploom_json_get_str(r, &format, root, "", "format", 1, 0);
	if (r->failed)
		return;
	if (strcmp(format, PLOOM_TRACE_FORMAT)) {
		r->failed = 1;
		ploom_err_set(r->err, PLOOM_ERR_INPUT, "not a ploom trace (format is '%s')",
			      ploom_json_quote(quoted, format));
		free(format);
		return;
	}
	free(format);
	ploom_json_get_long(r, &version, root, "", "version", LONG_MIN, LONG_MAX);
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
	x = ploom_json_get_object(r, root, "", "scenario");
	ploom_json_get_str(r, &t->scenario.target, x, "scenario.", "target", 1, 0);
	ploom_json_get_str(r, &t->scenario.module, x, "scenario.", "module", 1, 0);
	ploom_json_get_str(r, &t->scenario.qualname, x, "scenario.", "qualname", 1, 0);
	ploom_json_get_str(r, &t->scenario.file, x, "scenario.", "file", 1, 1);
	get_relpath(r, &t->scenario.relpath, x, "scenario.");
	read_import_paths(r, t, x);
	read_fingerprints(r, t, root);
	read_source(r, t, root);
	read_id(r, t, root);
	x = ploom_json_get_object(r, root, "", "python");
	ploom_json_get_str(r, &t->python.implementation, x, "python.", "implementation", 1, 0);
	ploom_json_get_str(r, &t->python.version, x, "python.", "version", 1, 0);
	ploom_json_get_bool(r, &t->python.gil, x, "python.", "gil");
	ploom_json_get_str(r, &t->hash_seed, root, "", "hash_seed", 1, 0);
	if (!r->failed && ploom_args_seed(seed, t->hash_seed) < 0)
		ploom_json_fail(r, "is not a hash seed (a decimal integer from 0 to 4294967295)",
				"", "hash_seed");
	read_config(r, t, root);
	/* a replay sends them to the worker, whose run command takes no task
	 * id above PLOOM_MAX_TASK_ID (and no more choices than its own max) */
	ploom_json_get_int_array(r, &t->run.choices, &t->run.nchoices, root, "", "choices",
				 PLOOM_MAX_CHOICES, PLOOM_MAX_TASK_ID);
	ploom_json_get_int(r, &t->run.preemptions, root, "", "preemptions", 0, INT_MAX);
	if (ploom_json_get(r, root, "", "minimized_from", 0))
		ploom_json_get_int(r, &t->minimized_from, root, "", "minimized_from", 0, INT_MAX);
	read_tasks(r, &t->run, root);
	read_objects(r, &t->run, root);
	if (ploom_json_get(r, root, "", "shard", 0))
		read_trace_shard(r, t, ploom_json_get_object(r, root, "", "shard"));
	x = ploom_json_get_array(r, root, "", "steps");
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

int ploom_trace_parse(struct ploom_trace **out, const char *text, size_t len,
		      struct ploom_err *err)
{
	struct ploom_json_reader r = {.err = err};
	struct ploom_trace *t = NULL;
	cJSON *root = NULL;
	int ret = -1;

	*out = NULL;
	root = ploom_json_parse(text, len, err);
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
