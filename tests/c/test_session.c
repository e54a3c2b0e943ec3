/* Tests of lib/session: the saved failing schedules before the search,
 * the failure reported and the callbacks, over the stand-in worker of
 * fake.h, whose every schedule fails the same way. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/plan.h"
#include "../../lib/session.h"
#include "../../lib/trace.h"
#include "../../lib/worker.h"
#include "check.h"
#include "fake.h"

static const char failing[] =
	"step 0 0 start thread#1 0 - - -\n"
	"step 1 0 yield_now - 0,1 - 1:yield_now:- -\n"
	"step 2 1 begin - 1 - - -\n"
	"outcome failure 1 =builtins.AssertionError =boom =Traceback\n"
	"exit code 0\n"
	"done 3\n";

/* What the callbacks saw. */
struct seen {
	const char *py, *target;
	int starts;
	int phases[8];
	int nphases;
	int saved_failed;
	char saved_from[512];
	char saved_to[512];
	/* 1: a signal comes as a saved schedule fails again (stop) */
	int stop_on_saved;
	volatile sig_atomic_t stop;
};

static int start(void *ctx, struct ploom_worker **out, const struct ploom_config *config,
		 struct ploom_err *err)
{
	struct seen *s = ctx;
	struct ploom_worker_opts opts = {
		.python = s->py,
		.target = s->target,
		.hash_seed = "0",
		.instrument_scenario = config->instrument_scenario,
	};

	s->starts++;
	return ploom_worker_start(out, &opts, err);
}

static void phase(void *ctx, enum ploom_session_phase p, const struct ploom_session_result *res)
{
	struct seen *s = ctx;

	(void)res;
	if (s->nphases < 8)
		s->phases[s->nphases++] = (int)p;
}

static void saved_event(void *ctx, const struct ploom_session_saved_event *ev)
{
	struct seen *s = ctx;

	if (ev->kind != PLOOM_SESSION_SAVED_FAILED)
		return;
	s->saved_failed++;
	s->stop = s->stop_on_saved;
	snprintf(s->saved_from, sizeof(s->saved_from), "%s", ev->path);
	snprintf(s->saved_to, sizeof(s->saved_to), "%s", ev->trace_path ? ev->trace_path : "");
}

/* One session of depth-first search in dir (its trace folder too), with
 * saved, keep_going and minimize as given.  Returns ploom_session_run()'s. */
static int session(struct ploom_session_result *res, struct seen *s, const char *dir,
		   int saved, int keep_going, int minimize)
{
	struct ploom_plan plan = PLOOM_PLAN_INIT;
	struct ploom_config config = {.max_preemptions = -1, .kind = NULL,
				      .max_steps = 500, .schedule_timeout_s = 10.0};
	char why[256];
	struct ploom_err err = {0, ""};
	const struct ploom_session_opts opts = {
		.plan = &plan,
		.config = &config,
		.start = start,
		.start_ctx = s,
		.hash_seed = "0",
		.trace_dir = dir,
		.keep_going = keep_going,
		.saved = saved,
		.minimize = minimize,
		.interrupted = &s->stop,
		.saved_event = saved_event,
		.phase = phase,
		.ctx = s,
	};
	const char *py = s->py, *target = s->target;
	int r, stop_on_saved = s->stop_on_saved;

	memset(s, 0, sizeof(*s));
	s->py = py;
	s->target = target;
	s->stop_on_saved = stop_on_saved;
	/* the stand-in makes the same choices every time: a search that goes
	 * on past its first schedule would find it diverge */
	plan.max_schedules = keep_going ? 1 : 0;
	if (ploom_plan_check(&plan, why, sizeof(why)) < 0)
		abort();
	ploom_plan_configure(&plan, &config);
	r = ploom_session_run(res, &opts, &err);
	if (r)
		printf("  session: %s\n", err.msg);
	return r;
}

static void a_saved_failure_is_reported_before_the_search(void)
{
	char *dir = fake_dir("session"), *file = fake_write(dir, "mod.py", "def fn(): pass\n", 0);
	char *py = fake_worker(dir, "3.13.0", file), *run = fake_write(dir, "run.txt", failing, 0);
	char target[1024];
	struct ploom_session_result res = {0};
	struct seen s = {.py = py, .target = target};
	char first[512] = "";

	snprintf(target, sizeof(target), "%s:fn", file);
	/* nothing saved yet: the search finds the failure and saves it */
	CHECK_INT(session(&res, &s, dir, 1, 0, 0), 0);
	CHECK_INT(res.saved_runs, 0);
	CHECK_INT(res.saved_failing, 0);
	CHECK_INT(res.search.failing, 1);
	CHECK_STR(res.search.stopped_by, "failure");
	CHECK_INT(s.starts, 1);
	CHECK_INT(s.nphases, 2);
	CHECK_INT(s.phases[0], PLOOM_SESSION_SEARCH_START);
	CHECK_INT(s.phases[1], PLOOM_SESSION_SEARCH_END);
	if (CHECK(res.search.failure_path != NULL))
		snprintf(first, sizeof(first), "%s", res.search.failure_path);
	ploom_session_result_release(&res);

	/* saved, it fails again first, and the search does not run */
	CHECK_INT(session(&res, &s, dir, 1, 0, 0), 0);
	CHECK_INT(res.saved_runs, 1);
	CHECK_INT(res.saved_failing, 1);
	CHECK_INT(res.search.schedules, 0);
	CHECK_INT(res.search.failing, 0);
	CHECK_STR(res.search.stopped_by, "failure");
	CHECK_INT(s.nphases, 0);
	CHECK_INT(s.saved_failed, 1);
	CHECK_STR(s.saved_from, first);
	CHECK_STR(res.search.failure_path ? res.search.failure_path : "", s.saved_to);
	CHECK(res.saved_failure == NULL && res.saved_path == NULL);
	ploom_session_result_release(&res);

	/* with keep_going the search runs too; the failure reported is still
	 * the saved one, and the search's count in failing */
	CHECK_INT(session(&res, &s, dir, 1, 1, 0), 0);
	CHECK_INT(res.saved_failing, 1);
	CHECK_INT(res.search.schedules, 1);
	CHECK_INT(res.search.failing, 1);
	CHECK_INT(s.nphases, 2);
	CHECK_STR(res.search.failure_path ? res.search.failure_path : "", s.saved_to);
	ploom_session_result_release(&res);

	/* without the saved ones, the search's own */
	CHECK_INT(session(&res, &s, dir, 0, 0, 0), 0);
	CHECK_INT(res.saved_runs, 0);
	CHECK_INT(res.saved_failing, 0);
	CHECK_INT(s.saved_failed, 0);
	CHECK_INT(res.search.failing, 1);
	ploom_session_result_release(&res);

	/* a signal during the saved schedules: their failure is kept apart,
	 * not reported, and neither the search nor the minimizer runs */
	s.stop_on_saved = 1;
	CHECK_INT(session(&res, &s, dir, 1, 0, 1), 0);
	CHECK_INT(res.saved_runs, 1);
	CHECK_INT(res.saved_failing, 0);
	CHECK(res.saved_failure != NULL && res.saved_path != NULL);
	CHECK(res.search.failure_path == NULL);
	CHECK_INT(s.nphases, 0);
	CHECK_INT(res.minimized, 0);
	s.stop_on_saved = 0;
	ploom_session_result_release(&res);

	/* minimized on the worker the search left idle, which then stops */
	CHECK_INT(session(&res, &s, dir, 0, 0, 1), 0);
	CHECK_INT(s.nphases, 4);
	CHECK_INT(s.phases[2], PLOOM_SESSION_MINIMIZE_START);
	CHECK_INT(s.phases[3], PLOOM_SESSION_MINIMIZE_END);
	CHECK_INT(res.minimized, 1);
	CHECK(res.minimized_path != NULL);
	CHECK_INT(res.save_err.kind, 0);
	ploom_session_result_release(&res);

	fake_dir_remove(dir);
	free(run);
	free(py);
	free(file);
	free(dir);
}

int main(void)
{
	a_saved_failure_is_reported_before_the_search();
	return check_report();
}
