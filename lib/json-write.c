/* The trace codec's writer: traces to JSON, and into files; json.h
 * documents the format, json.c reads it back.  With json.c, stats.c and
 * jsonutil.c, the only files that include cJSON.h (through jsonutil.h). */
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "kind.h"
#include "store.h"

/* ---- writing ---- */

/* "where": only when known, so that a trace of a worker that sent none
 * reads as it did before the field */
static void put_where(struct ploom_json_builder *b, cJSON *o, const struct ploom_where *w)
{
	cJSON *x;

	if (!w->file)
		return;
	x = ploom_json_put(b, o, "where", cJSON_CreateObject());
	ploom_json_put_str(b, x, "file", w->file);
	ploom_json_put_num(b, x, "line", w->line);
	ploom_json_put_str(b, x, "function", w->function ? w->function : "?");
}

static void put_step(struct ploom_json_builder *b, cJSON *arr, const struct ploom_step *s)
{
	cJSON *o = ploom_json_append(b, arr, cJSON_CreateObject());

	ploom_json_put_num(b, o, "index", (double)s->index);
	ploom_json_put_num(b, o, "task", s->task);
	ploom_json_put_str(b, o, "op", ploom_op_name(s->op));
	ploom_json_put_str(b, o, "object", s->object);
	ploom_json_put(b, o, "enabled", ploom_json_int_array(s->enabled, s->nenabled));
	if (s->op == PLOOM_OP_ACQUIRE)
		ploom_json_put_bool(b, o, "blocking", s->mode != PLOOM_ACQUIRE_NONBLOCKING);
	/* only where true: a trace without timed steps reads as it did in 1.
	 * A join has no "blocking": it cannot be nonblocking, and a timed one
	 * says so here */
	if (s->mode == PLOOM_ACQUIRE_TIMED)
		ploom_json_put_bool(b, o, "timeout", 1);
	if (s->value)
		ploom_json_put_str(b, o, "value", s->value);
	/* only on a step that ran with nothing else able to (event.h's idle) */
	if (s->idle)
		ploom_json_put_num(b, o, "clock_ns", (double)s->clock_ns);
	/* only on a timed wait that timed out while what it waited for could
	 * still run (event.h's stall) */
	if (s->stalled) {
		ploom_json_put_num(b, o, "stall_of", s->stall_of);
		ploom_json_put_num(b, o, "stall_ns", (double)s->stall_ns);
	}
	if (s->label)
		ploom_json_put_str(b, o, "label", s->label);
	put_where(b, o, &s->where);
}

/* A timeout's or a step limit's "stacks": only when the worker sent them, so that a trace
 * without them reads as it did before the field */
static void put_stacks(struct ploom_json_builder *b, cJSON *o, const struct ploom_outcome *oc)
{
	cJSON *stacks, *x, *frames, *f;
	size_t i, k;

	if (!oc->nstacks)
		return;
	stacks = ploom_json_put(b, o, "stacks", cJSON_CreateArray());
	for (i = 0; i < oc->nstacks; i++) {
		const struct ploom_stack *st = &oc->stacks[i];
		x = ploom_json_append(b, stacks, cJSON_CreateObject());
		ploom_json_put_num(b, x, "task", st->task);
		ploom_json_put_str(b, x, "state", ploom_stack_state_name(st->state));
		if (st->state != PLOOM_STACK_RUNNING)
			continue;
		ploom_json_put_num(b, x, "depth", (double)st->depth);
		frames = ploom_json_put(b, x, "frames", cJSON_CreateArray());
		for (k = 0; k < st->nframes; k++) {
			const struct ploom_where *w = &st->frames[k];
			f = ploom_json_append(b, frames, cJSON_CreateObject());
			ploom_json_put_str(b, f, "file", w->file ? w->file : "?");
			ploom_json_put_num(b, f, "line", w->line);
			ploom_json_put_str(b, f, "function", w->function ? w->function : "?");
		}
	}
}

static void put_outcome(struct ploom_json_builder *b, cJSON *parent, const struct ploom_outcome *oc)
{
	cJSON *o = ploom_json_put(b, parent, "outcome", cJSON_CreateObject());
	cJSON *x, *waits;
	size_t i;

	ploom_json_put_str(b, o, "kind", ploom_outcome_kind_name(oc->kind));
	ploom_json_put_str(b, o, "summary", oc->summary ? oc->summary : "");
	switch (oc->kind) {
	case PLOOM_OUTCOME_FAILURE:
		ploom_json_put_num(b, o, "task", oc->task);
		x = ploom_json_put(b, o, "exception", cJSON_CreateObject());
		ploom_json_put_str(b, x, "type", oc->exc_type ? oc->exc_type : "");
		ploom_json_put_str(b, x, "message", oc->exc_message ? oc->exc_message : "");
		ploom_json_put_str(b, o, "traceback", oc->traceback ? oc->traceback : "");
		break;
	case PLOOM_OUTCOME_DEADLOCK:
		waits = ploom_json_put(b, o, "waits", cJSON_CreateArray());
		for (i = 0; i < oc->nwaits; i++) {
			x = ploom_json_append(b, waits, cJSON_CreateObject());
			ploom_json_put_num(b, x, "task", oc->waits[i].task);
			ploom_json_put_str(b, x, "op", ploom_op_name(oc->waits[i].op));
			ploom_json_put_str(b, x, "object", oc->waits[i].object);
			ploom_json_put_num(b, x, "holder", oc->waits[i].holder);
			put_where(b, x, &oc->waits[i].where);
			ploom_json_put_str(b, x, "for", ploom_wait_for_name(oc->waits[i].waits_for));
			if (oc->waits[i].on)
				ploom_json_put_str(b, x, "on", oc->waits[i].on);
		}
		break;
	case PLOOM_OUTCOME_CRASH:
		ploom_json_put_num(b, o, "signal", oc->signal);
		break;
	case PLOOM_OUTCOME_EXIT:
		ploom_json_put_num(b, o, "status", oc->status);
		break;
	case PLOOM_OUTCOME_STEP_LIMIT:
		ploom_json_put_num(b, o, "limit", (double)oc->limit);
		put_stacks(b, o, oc);
		break;
	case PLOOM_OUTCOME_TIMEOUT:
		put_stacks(b, o, oc);
		break;
	case PLOOM_OUTCOME_DIVERGENCE:
		ploom_json_put_num(b, o, "step", (double)oc->divergence_index);
		ploom_json_put_str(b, o, "message",
				   oc->divergence_message ? oc->divergence_message : "");
		break;
	default:
		break;
	}
	if (oc->output && *oc->output)
		ploom_json_put_str(b, o, "output", oc->output);
}

/* "tasks": every task with its name, given or not; "objects": the cells
 * and locks the scenario named */
static void put_names(struct ploom_json_builder *b, cJSON *root, const struct ploom_run *run)
{
	cJSON *tasks = ploom_json_put(b, root, "tasks", cJSON_CreateArray()), *objs, *x;
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
		x = ploom_json_append(b, tasks, cJSON_CreateObject());
		ploom_json_put_num(b, x, "id", ids[i]);
		ploom_json_put_str(b, x, "name", name);
	}
	free(ids);
	objs = ploom_json_put(b, root, "objects", cJSON_CreateArray());
	for (i = 0; i < run->nnames; i++) {
		if (run->names[i].obj.kind == PLOOM_OBJ_THREAD)
			continue;
		ploom_obj_format(def, sizeof(def), run->names[i].obj);
		x = ploom_json_append(b, objs, cJSON_CreateObject());
		ploom_json_put_str(b, x, "object", def);
		ploom_json_put_str(b, x, "name", run->names[i].name);
	}
}

static cJSON *trace_tree(const struct ploom_trace *t, struct ploom_json_builder *b)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *o, *steps, *fps;
	size_t i;

	if (!root) {
		b->oom = 1;
		return NULL;
	}
	ploom_json_put_str(b, root, "format", PLOOM_TRACE_FORMAT);
	ploom_json_put_num(b, root, "version", PLOOM_TRACE_VERSION);
	if (t->id)
		ploom_json_put_str(b, root, "id", t->id);
	o = ploom_json_put(b, root, "scenario", cJSON_CreateObject());
	ploom_json_put_str(b, o, "target", t->scenario.target ? t->scenario.target : "");
	ploom_json_put_str(b, o, "module", t->scenario.module ? t->scenario.module : "");
	ploom_json_put_str(b, o, "qualname", t->scenario.qualname ? t->scenario.qualname : "");
	ploom_json_put_str(b, o, "file", t->scenario.file);
	/* the relative paths and their root only when known: a trace
	 * without them reads as it did before them */
	if (t->scenario.relpath)
		ploom_json_put_str(b, o, "relpath", t->scenario.relpath);
	if (t->scenario.cwd)
		ploom_json_put_str(b, o, "cwd", t->scenario.cwd);
	if (t->scenario.nimport_paths)
		ploom_json_put(b, o, "import_paths",
			       ploom_json_str_array((const char *const *)t->scenario.import_paths,
						    t->scenario.nimport_paths));
	fps = ploom_json_put(b, root, "fingerprints", cJSON_CreateArray());
	for (i = 0; i < t->nfingerprints; i++) {
		o = ploom_json_append(b, fps, cJSON_CreateObject());
		ploom_json_put_str(b, o, "path", t->fingerprints[i].path);
		ploom_json_put_str(b, o, "blob", t->fingerprints[i].blob);
		if (t->fingerprints[i].relpath)
			ploom_json_put_str(b, o, "relpath", t->fingerprints[i].relpath);
	}
	if (t->source.root) {
		o = ploom_json_put(b, root, "source", cJSON_CreateObject());
		ploom_json_put_str(b, o, "root", t->source.root);
		ploom_json_put_str(b, o, "commit", t->source.commit);
		ploom_json_put_bool(b, o, "dirty", t->source.dirty);
	}
	o = ploom_json_put(b, root, "python", cJSON_CreateObject());
	ploom_json_put_str(b, o, "implementation",
			   t->python.implementation ? t->python.implementation : "");
	ploom_json_put_str(b, o, "version", t->python.version ? t->python.version : "");
	ploom_json_put_bool(b, o, "gil", t->python.gil);
	ploom_json_put_str(b, root, "hash_seed", t->hash_seed ? t->hash_seed : "0");
	o = ploom_json_put(b, root, "config", cJSON_CreateObject());
	if (t->config.max_preemptions < 0)
		ploom_json_put(b, o, "max_preemptions", cJSON_CreateNull());
	else
		ploom_json_put_num(b, o, "max_preemptions", t->config.max_preemptions);
	ploom_json_put_str(b, o, "reduction", ploom_config_kind(&t->config)->reduction);
	ploom_json_put_str(b, o, "search", ploom_config_kind(&t->config)->search);
	ploom_json_put_sample(b, o, ploom_config_kind(&t->config)->search, t->config.seed,
			      t->config.pct_depth);
	ploom_json_put_num(b, o, "max_steps", (double)t->config.max_steps);
	ploom_json_put_num(b, o, "schedule_timeout_s", t->config.schedule_timeout_s);
	/* always written, empty when none, so that a reader sees the list
	 * the trace ran with */
	ploom_json_put(b, o, "patch",
		       ploom_json_str_array((const char *const *)t->config.patch, t->config.npatch));
	/* always written too: a replay instruments exactly these */
	ploom_json_put(b, o, "instrument",
		       ploom_json_str_array((const char *const *)t->config.instrument,
					    t->config.ninstrument));
	ploom_json_put_bool(b, o, "instrument_scenario", t->config.instrument_scenario);
	/* only when set, as a trace older than the field reads */
	if (t->config.patch_project)
		ploom_json_put_bool(b, o, "patch_project", 1);
	ploom_json_put_str(b, o, "timeouts", ploom_timeouts_name(t->config.timeouts));
	/* only when there are some: most traces instrument nothing */
	if (t->config.nplain_points)
		ploom_json_put(b, o, "plain_points",
			       ploom_json_str_array((const char *const *)t->config.plain_points,
						    t->config.nplain_points));
	ploom_json_put(b, root, "choices", ploom_json_int_array(t->run.choices, t->run.nchoices));
	ploom_json_put_num(b, root, "preemptions", t->run.preemptions);
	if (t->minimized_from >= 0)
		ploom_json_put_num(b, root, "minimized_from", t->minimized_from);
	put_names(b, root, &t->run);
	if (t->shard.count > 0) {
		o = ploom_json_put(b, root, "shard", cJSON_CreateObject());
		ploom_json_put_num(b, o, "index", t->shard.index);
		ploom_json_put_num(b, o, "count", t->shard.count);
		ploom_json_put_num(b, o, "depth", t->shard.depth);
		ploom_json_put_num(b, o, "unit", (double)t->shard.unit);
	}
	steps = ploom_json_put(b, root, "steps", cJSON_CreateArray());
	for (i = 0; i < t->run.nsteps; i++)
		put_step(b, steps, &t->run.steps[i]);
	put_outcome(b, root, &t->run.outcome);
	return root;
}

char *ploom_trace_to_json(const struct ploom_trace *trace, struct ploom_err *err)
{
	struct ploom_json_builder b = {0};
	cJSON *root = trace_tree(trace, &b);
	char *text = NULL;

	if (b.oom)
		ploom_err_oom(err);
	else
		text = ploom_json_print(root, err);
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

int ploom_trace_write(FILE *out, const struct ploom_trace *trace, struct ploom_err *err)
{
	char *text = ploom_trace_to_json(trace, err);
	int ret;

	if (!text)
		return -1;
	ret = ploom_json_write_text(out, text, err);
	free(text);
	return ret;
}

int ploom_trace_write_file(const char *path, const struct ploom_trace *trace,
			   struct ploom_err *err)
{
	char *text = ploom_trace_to_json(trace, err);
	int ret;

	if (!text)
		return -1;
	ret = ploom_store_write(path, text, strlen(text), err);
	free(text);
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
	if (ploom_store_make_dirs(dir, err) < 0)
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
