/* The search driver; search.h documents it.
 *
 * One loop for one worker or many: each turn gives every idle worker a
 * schedule, waits in poll(2) until a run comes back (or a second passes:
 * progress, and the deadline of each run), and takes the runs that are
 * back.  With one worker that is one schedule after another, at the cost
 * of a poll per schedule next to the fork of one. */
#include "search.h"

#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "source.h"

/* One worker and the part of the search it runs (NULL: none now). */
struct job {
	struct ploom_worker *w;
	struct ploom_strategy *part;
};

/* The distinct outcomes, in res->outcomes, found again through an open
 * hash table of their indices + 1 (0: empty slot), twice as large as the
 * cap so that probes stay short. */
#define TALLY_SLOTS 2048

struct ploom_search {
	const struct ploom_search_opts *o;
	struct ploom_search_result *res;
	struct job job[PLOOM_SEARCH_MAX_WORKERS];
	long timeout_ms;
	double t0;
	int samples;            /* the strategy's ops' samples */
	size_t outcomes_cap;
	uint16_t slot[TALLY_SLOTS];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int interrupted(const struct ploom_search *s)
{
	return s->o->interrupted && *s->o->interrupted;
}

void ploom_strategy_free(struct ploom_strategy *s)
{
	if (s)
		s->ops->free(s);
}

void ploom_search_result_release(struct ploom_search_result *res)
{
	size_t i;

	free(res->refine);
	ploom_trace_free(res->failure);
	free(res->failure_path);
	free(res->setup);
	free(res->limit_path);
	free(res->internal_path);
	for (i = 0; i < res->noutcomes; i++)
		free(res->outcomes[i].summary);
	free(res->outcomes);
	memset(res, 0, sizeof(*res));
	res->idle_worker = -1;
}

static void emit(const struct ploom_search *s, enum ploom_search_event_kind kind,
		 const struct ploom_outcome *outcome, const struct ploom_run *run,
		 const char *path)
{
	struct ploom_search_event ev = {.kind = kind, .res = s->res, .outcome = outcome,
					.run = run, .path = path,
					.elapsed_s = now_s() - s->t0, .search = s};

	if (s->o->event)
		s->o->event(s->o->event_ctx, &ev);
}

/* The weight the parts have left (0 when none is), or -1 when a part
 * cannot tell. */
static double weight_left(const struct ploom_search *s)
{
	double left = 0;
	int i;

	for (i = 0; i < s->o->nworkers; i++) {
		const struct ploom_strategy *part = s->job[i].part;
		if (!part)
			continue;
		if (!part->ops->left)
			return -1;
		left += part->ops->left(part);
	}
	return left;
}

void ploom_search_estimate(struct ploom_estimate *out, const struct ploom_search_event *ev)
{
	ploom_estimate_make(out, ev->res->schedules, ev->res->failing, ev->elapsed_s,
			    weight_left(ev->search), 0);
}

static uint32_t hash_outcome(enum ploom_outcome_kind kind, const char *summary)
{
	uint32_t h = 2166136261u ^ (uint32_t)kind;      /* FNV-1a */

	while (*summary)
		h = (h ^ (unsigned char)*summary++) * 16777619u;
	return h;
}

/* Counts one more schedule with the outcome o. */
static int tally(struct ploom_search *s, const struct ploom_outcome *o, struct ploom_err *err)
{
	struct ploom_search_result *res = s->res;
	struct ploom_search_outcome *t;
	const char *summary = o->summary ? o->summary : "";
	uint32_t i = hash_outcome(o->kind, summary) % TALLY_SLOTS;

	for (; s->slot[i]; i = (i + 1) % TALLY_SLOTS) {
		t = &res->outcomes[s->slot[i] - 1];
		if (t->kind == o->kind && !strcmp(t->summary, summary)) {
			t->schedules++;
			return 0;
		}
	}
	if (res->noutcomes == PLOOM_SEARCH_MAX_OUTCOMES) {
		res->outcomes_truncated = 1;
		return 0;
	}
	if (res->noutcomes == s->outcomes_cap) {
		size_t cap = s->outcomes_cap ? 2 * s->outcomes_cap : 8;
		t = realloc(res->outcomes, cap * sizeof(*t));
		if (!t)
			return ploom_err_oom(err);
		res->outcomes = t;
		s->outcomes_cap = cap;
	}
	t = &res->outcomes[res->noutcomes];
	t->summary = strdup(summary);
	if (!t->summary)
		return ploom_err_oom(err);
	t->kind = o->kind;
	t->schedules = 1;
	s->slot[i] = (uint16_t)++res->noutcomes;
	return 0;
}

/* A trace of run (moved into it) as the scenario's workers record it,
 * with its fingerprints and id, saved in the trace folder.  Returns 0, or
 * -1 with err filled when the trace cannot be made; when it is made but
 * cannot be saved, 0 with *out_path NULL and the reason in
 * s->res->save_err, so that the failure is still reported. */
static int save_trace(struct ploom_trace **out, char **out_path, const struct ploom_search *s,
		      const struct ploom_worker *w, struct ploom_run *run,
		      struct ploom_err *err)
{
	const struct ploom_search_opts *o = s->o;
	struct ploom_err why = {0, ""};

	if (ploom_worker_trace(out, w, o->hash_seed, o->config, run, err) < 0)
		return -1;
	if (!o->trace_dir)
		return 0;
	if (ploom_trace_fingerprint_source(*out, err) < 0 || ploom_trace_set_id(*out, err) < 0)
		return -1;
	if (o->annotate)
		o->annotate(o->annotate_ctx, *out);
	if (ploom_trace_save(out_path, *out, o->trace_dir, "original", &why) < 0)
		ploom_err_set(&s->res->save_err, why.kind ? why.kind : PLOOM_ERR_SYSTEM,
			      "cannot save the trace: %s", why.msg);
	return 0;
}

/* The job's part of the search takes the run; a part that is complete
 * goes.  Returns 0, or -1 with err filled; after an internal error, the
 * run's trace is saved first (res->internal_path), for the report. */
static int strategy_next(struct ploom_search *s, struct job *job, struct ploom_run *run,
			 struct ploom_err *err)
{
	int r = job->part->ops->next(job->part, run, err);

	if (r < 0) {
		if (err->kind == PLOOM_ERR_INTERNAL && !s->res->internal_path) {
			struct ploom_trace *trace = NULL;
			struct ploom_err why = {0, ""}, kept = s->res->save_err;

			s->res->stopped_by = "internal-error";
			/* the error is the news: a trace that cannot be made or
			 * saved only leaves the path NULL */
			if (save_trace(&trace, &s->res->internal_path, s, job->w, run, &why) < 0)
				s->res->internal_path = NULL;
			s->res->save_err = kept;
			ploom_trace_free(trace);
		}
		return -1;
	}
	if (r == 0) {
		ploom_strategy_free(job->part);
		job->part = NULL;
	}
	return 0;
}

/* What take_run() returns after a divergence's event. */
enum { RUN_DIVERGED = 2 };

/* Takes one run of job back.  Returns 0 to go on, 1 when the search must
 * stop (res->stopped_by says why), RUN_DIVERGED after a divergence's event,
 * or -1 with err filled. */
static int take_run(struct ploom_search *s, struct job *job, struct ploom_run *run,
		    struct ploom_err *err)
{
	struct ploom_search_result *res = s->res;
	struct ploom_trace *trace = NULL;
	/* a shard's probe of another's unit: its runs are that other's to
	 * count and report, so that merged shards count each once */
	int probe = job->part->ops->probe && job->part->ops->probe(job->part);
	int r;

	if (run->outcome.kind == PLOOM_OUTCOME_SLEEP_BLOCKED) {
		/* not a schedule: the reduction stopped it half way */
		if (!probe)
			res->sleep_blocked++;
		return strategy_next(s, job, run, err);
	}
	if (run->outcome.kind == PLOOM_OUTCOME_REFINE) {
		/* not a schedule either: the search ran with too few points and
		 * starts again with more (the caller's loop) */
		if (!res->refine) {
			res->refine = run->outcome.sites;
			run->outcome.sites = NULL;
		}
		res->stopped_by = "refine";
		return 1;
	}
	/* another's schedule, which that other counts and reports */
	if (probe && run->outcome.kind != PLOOM_OUTCOME_DIVERGENCE)
		return strategy_next(s, job, run, err);
	res->schedules++;
	if ((long)run->nsteps > res->max_depth)
		res->max_depth = (long)run->nsteps;
	if (run->outcome.kind == PLOOM_OUTCOME_DIVERGENCE) {
		emit(s, PLOOM_SEARCH_DIVERGENCE, &run->outcome, NULL, NULL);
		return RUN_DIVERGED;
	}
	if (ploom_outcome_is_setup(&run->outcome)) {
		/* the setup is wrong for every schedule: no trace, no search */
		const char *msg = run->outcome.exc_message ? run->outcome.exc_message : "";
		size_t n = strlen(run->outcome.exc_type) + strlen(msg) + 3;

		res->setup = malloc(n);
		if (!res->setup)
			return ploom_err_oom(err);
		snprintf(res->setup, n, "%s: %s", run->outcome.exc_type, msg);
		res->stopped_by = "setup";
		return 1;
	}
	if (s->o->tally_outcomes && tally(s, &run->outcome, err) < 0)
		return -1;
	/* the strategy moves on from the run's steps before a failing run is
	 * moved into its trace */
	if (strategy_next(s, job, run, err) < 0)
		return -1;
	if (s->o->wanted && !s->o->wanted(s->o->wanted_ctx, &run->outcome))
		return 0;
	if (run->outcome.kind == PLOOM_OUTCOME_STEP_LIMIT) {
		if (!res->limit_path && !res->failure && !res->save_err.kind) {
			r = save_trace(&trace, &res->limit_path, s, job->w, run, err);
			if (r == 0)
				emit(s, PLOOM_SEARCH_STEP_LIMIT, &trace->run.outcome, &trace->run,
				     res->limit_path);
			ploom_trace_free(trace);
			if (r < 0)
				return -1;
		}
		res->step_limited++;
		/* a sample goes on (search.h); a search that cannot save its
		 * traces stops at the first one */
		if ((!s->o->keep_going && !s->samples) || res->save_err.kind) {
			res->stopped_by = "max-steps";
			return 1;
		}
		return 0;
	}
	if (ploom_outcome_is_failure(run->outcome.kind)) {
		res->failing++;
		if (!res->failure) {
			if (save_trace(&trace, &res->failure_path, s, job->w, run, err) < 0) {
				ploom_trace_free(trace);
				return -1;
			}
			res->failure = trace;
			emit(s, PLOOM_SEARCH_FAILURE, &trace->run.outcome, &trace->run,
			     res->failure_path);
		}
		if (!s->o->keep_going || res->save_err.kind) {
			res->stopped_by = "failure";
			return 1;
		}
	}
	return 0;
}

/* Gives job[i] a part split from the part of another job, the one whose
 * split is the shallowest.  Leaves it without one when no part has
 * anything to give.  Returns 0, or -1 with err filled. */
static int take_work(struct ploom_search *s, int i, struct ploom_err *err)
{
	struct job *job = s->job;
	long best = -1, d;
	int k, victim = -1;

	for (k = 0; k < s->o->nworkers; k++) {
		d = job[k].part ? job[k].part->ops->split_depth(job[k].part) : -1;
		if (d >= 0 && (best < 0 || d < best)) {
			best = d;
			victim = k;
		}
	}
	if (victim < 0)
		return 0;
	return job[victim].part->ops->split(&job[i].part, job[victim].part, err) < 0 ? -1 : 0;
}

/* Sends job's next schedule to its worker. */
static int send_run(struct ploom_search *s, struct job *job, struct ploom_err *err)
{
	const struct ploom_strategy_ops *ops = job->part->ops;
	struct ploom_run_cmd cmd = {.max_steps = s->o->config->max_steps,
				   .timeout_ms = s->timeout_ms};

	cmd.choices = (int *)ops->prefix(job->part, &cmd.nchoices);
	if (ops->sleep)
		cmd.sleep = (int *)ops->sleep(job->part, &cmd.nsleep);
	if (ops->policy)
		cmd.policy = *ops->policy(job->part);
	return ploom_worker_send_cmd(job->w, &cmd, err);
}

/* 1 when a part of the search is left to run. */
static int work_left(const struct ploom_search *s)
{
	int i;

	for (i = 0; i < s->o->nworkers; i++)
		if (s->job[i].part)
			return 1;
	return 0;
}

static int check_opts(const struct ploom_search_opts *o, const struct ploom_strategy *strategy,
		      struct ploom_err *err)
{
	int i;

	if (o->nworkers < 1 || o->nworkers > PLOOM_SEARCH_MAX_WORKERS)
		return ploom_err_set(err, PLOOM_ERR_INPUT,
				     "cannot search with %d workers (1 to %d)", o->nworkers,
				     PLOOM_SEARCH_MAX_WORKERS);
	if (o->nworkers > 1 && (!strategy->ops->split || !strategy->ops->split_depth))
		return ploom_err_set(err, PLOOM_ERR_INPUT,
				     "the '%s' search cannot be split: it runs on one worker only",
				     strategy->ops->name);
	if (strategy->ops->samples && !o->max_schedules && !(o->time_limit_s > 0))
		return ploom_err_set(err, PLOOM_ERR_INPUT,
				     "the '%s' search samples schedules without end: it needs a "
				     "schedule limit or a time limit", strategy->ops->name);
	for (i = 0; i < o->nworkers; i++)
		if (ploom_worker_busy(o->workers[i]))
			return ploom_err_set(err, PLOOM_ERR_INPUT,
					     "worker %d is running a schedule already", i);
	return 0;
}

/* The end of search s, which returns ret: the estimate of what its parts
 * had left, the worker left idle for the caller (none unless ret is 0),
 * and the parts freed; the runs still in flight are not needed, so their
 * workers go at once. */
static void end_search(struct ploom_search *s, int ret)
{
	struct ploom_search_result *out = s->res;
	const struct ploom_search_opts *o = s->o;
	int i;

	/* before the parts go: what they had left */
	if (ret != 0)
		out->elapsed_s = now_s() - s->t0;
	ploom_estimate_make(&out->estimate, out->schedules, out->failing, out->elapsed_s,
			    weight_left(s), 1);
	/* the runs still in flight are not needed: their workers go at once */
	for (i = 0; i < o->nworkers; i++) {
		struct ploom_worker *w = s->job[i].w;

		if (!ploom_worker_busy(w)) {
			if (ret == 0 && out->idle_worker < 0)
				out->idle_worker = i;
		} else if (ploom_worker_pid(w) > 0) {
			kill(ploom_worker_pid(w), SIGKILL);
		}
		ploom_strategy_free(s->job[i].part);
	}
	assert(ret != 0 || out->idle_worker >= 0 || interrupted(s));
	if (ret != 0)
		out->idle_worker = -1;
}

int ploom_search_run(struct ploom_search_result *out, struct ploom_strategy *strategy,
		     const struct ploom_search_opts *o, struct ploom_err *err)
{
	struct ploom_search *s = NULL;
	struct pollfd pfd[PLOOM_SEARCH_MAX_WORKERS];
	int busy_job[PLOOM_SEARCH_MAX_WORKERS];
	struct ploom_run run = {0};
	long sent = 0, timeout_ms;
	int i, k, r, nbusy, stop = 0, max_sent = 0, time_up = 0, ret = -1;

	memset(out, 0, sizeof(*out));
	out->idle_worker = -1;
	ploom_estimate_make(&out->estimate, 0, 0, 0, -1, 1);
	if (check_opts(o, strategy, err) < 0)
		goto done;
	if (ploom_timeout_ms(&timeout_ms, o->config->schedule_timeout_s) < 0) {
		ploom_err_set(err, PLOOM_ERR_INPUT, "invalid schedule timeout %g s",
			      o->config->schedule_timeout_s);
		goto done;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		ploom_err_oom(err);
		goto done;
	}
	s->o = o;
	s->res = out;
	s->timeout_ms = timeout_ms;
	for (i = 0; i < o->nworkers; i++)
		s->job[i].w = o->workers[i];
	s->samples = strategy->ops->samples;
	s->job[0].part = strategy;
	strategy = NULL;
	s->t0 = now_s();
	while (!interrupted(s)) {
		/* every idle worker gets a schedule, while there are some to give */
		nbusy = 0;
		for (i = 0; i < o->nworkers; i++) {
			struct job *job = &s->job[i];

			if (!ploom_worker_busy(job->w) && !max_sent && !time_up) {
				if (!job->part && take_work(s, i, err) < 0)
					goto done;
				if (job->part) {
					if (send_run(s, job, err) < 0)
						goto done;
					max_sent = o->max_schedules && ++sent >= o->max_schedules;
				}
			}
			if (ploom_worker_busy(job->w)) {
				pfd[nbusy] = (struct pollfd){ploom_worker_fd(job->w), POLLIN, 0};
				busy_job[nbusy++] = i;
			}
		}
		if (!nbusy)
			break;
		/* at least once a second: progress, and each run's deadline,
		 * which ploom_worker_read_run() checks */
		if (poll(pfd, (nfds_t)nbusy, 1000) < 0 && errno != EINTR) {
			ploom_err_set(err, PLOOM_ERR_WORKER, "cannot wait for the workers: %s",
				      strerror(errno));
			goto done;
		}
		if (interrupted(s))
			break;
		for (k = 0; k < nbusy && !stop; k++) {
			struct job *job = &s->job[busy_job[k]];

			r = ploom_worker_read_run(job->w, &run, err);
			if (r < 0)
				goto done;
			if (r == 0)
				continue;
			r = take_run(s, job, &run, err);
			ploom_run_release(&run);
			if (r < 0 || r == RUN_DIVERGED) {
				ret = r < 0 ? r : 1;
				goto done;
			}
			stop = r;
		}
		if (stop)
			break;
		if (o->time_limit_s > 0 && now_s() - s->t0 >= o->time_limit_s)
			time_up = 1;
		if (!max_sent && !time_up && work_left(s))
			emit(s, PLOOM_SEARCH_PROGRESS, NULL, NULL, NULL);
	}
	out->elapsed_s = now_s() - s->t0;
	/* a limit stopped the search only if it left something to search,
	 * which a sample always does: its parts end when their share of the
	 * schedule limit is run */
	if (!stop && (work_left(s) || s->samples)) {
		out->stopped_by = max_sent ? "max-schedules" : time_up ? "time-limit" : NULL;
		if (!out->stopped_by && !work_left(s))
			out->stopped_by = "max-schedules";
	}
	/* a schedule cut by the step limit leaves the search incomplete,
	 * whatever let it go on */
	if (!out->stopped_by && out->step_limited)
		out->stopped_by = "max-steps";
	ret = 0;
done:
	if (s)
		end_search(s, ret);
	ploom_strategy_free(strategy);
	ploom_run_release(&run);
	free(s);
	return ret;
}
