/* The stand-in worker of the C tests; simworker.h documents it. */
#include "simworker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/event.h"
#include "../../lib/json.h"
#include "../../lib/trace.h"
#include "../../lib/worker.h"
#include "sim.h"

static void add_run(struct ploom_buf *b, const struct ploom_run *run)
{
	const struct ploom_outcome *o = &run->outcome;
	size_t i;

	for (i = 0; i < run->nsteps; i++) {
		const struct ploom_step *s = &run->steps[i];
		ploom_enc_step(b, s->index, s->task, s->op, s->obj, s->enabled, s->nenabled,
			       s->mode, s->pending, s->npending, (struct ploom_wire_where){-1, 0});
		if (s->value)
			ploom_enc_value(b, s->index, s->value, strlen(s->value));
	}
	if (o->kind == PLOOM_OUTCOME_FAILURE) {
		ploom_buf_addf(b, "outcome failure %d", o->task);
		ploom_buf_add_str(b, o->exc_type, strlen(o->exc_type));
		ploom_buf_add_str(b, o->exc_message, strlen(o->exc_message));
		ploom_buf_add_str(b, "", 0);
		ploom_buf_add(b, "\n", 1);
	} else if (o->kind == PLOOM_OUTCOME_DIVERGENCE) {
		ploom_buf_addf(b, "outcome divergence %ld", o->divergence_index);
		ploom_buf_add_str(b, o->divergence_message, strlen(o->divergence_message));
		ploom_buf_add(b, "\n", 1);
	} else if (o->kind == PLOOM_OUTCOME_STEP_LIMIT) {
		ploom_buf_addf(b, "outcome step-limit %ld\n", o->limit);
	} else {
		ploom_buf_addf(b, "outcome %s\n", ploom_outcome_kind_name(o->kind));
	}
}

/* Cuts run at max_steps steps (0: no bound) with the outcome step-limit. */
static void cut(struct ploom_run *run, long max_steps)
{
	struct ploom_run whole = *run;

	if (!max_steps || (long)run->nsteps <= max_steps)
		return;
	memset(run, 0, sizeof(*run));
	while ((long)run->nsteps < max_steps) {
		struct ploom_step *s = ploom_run_add_step(run);
		*s = whole.steps[run->nsteps - 1];
		memset(&whole.steps[run->nsteps - 1], 0, sizeof(*s));
	}
	run->outcome.kind = PLOOM_OUTCOME_STEP_LIMIT;
	run->outcome.limit = max_steps;
	ploom_run_release(&whole);
}

/* What TARGET asks of the stand-in. */
struct target {
	char name[256];
	const struct sim_scenario *sc;
	struct sim_prog prog;
	int is_prog;
	int rename_below, ignore, die_after;
	const char *log;
};

static void parse_target(struct target *t, const char *target)
{
	char *opt, *save = NULL;

	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", target);
	opt = strtok_r(t->name, "|", &save);
	while ((opt = strtok_r(NULL, "|", &save))) {
		if (!strncmp(opt, "rename=", 7))
			t->rename_below = atoi(opt + 7);
		else if (!strcmp(opt, "ignore"))
			t->ignore = 1;
		else if (!strncmp(opt, "die=", 4))
			t->die_after = atoi(opt + 4);
		else if (!strncmp(opt, "log=", 4))
			t->log = opt + 4;
		else {
			fprintf(stderr, "simworker: unknown option '%s'\n", opt);
			_exit(2);
		}
	}
	if (!strncmp(t->name, "gen:", 4)) {
		t->is_prog = 1;
		sim_prog_generate(&t->prog, strtoul(t->name + 4, NULL, 10), 12);
	} else if (strcmp(t->name, "diverge") && strcmp(t->name, "numbered")) {
		t->sc = sim_find(t->name);
	}
}

static void hello(struct ploom_buf *b, const char *target)
{
	const char *seed = getenv("PYTHONHASHSEED");

	ploom_buf_addf(b, "hello %d", PLOOM_PROTOCOL_VERSION);
	ploom_buf_add_str(b, "cpython", 7);
	ploom_buf_add_str(b, "3.13.0", 6);
	ploom_buf_addf(b, " 1");
	ploom_buf_add_str(b, seed, strlen(seed));
	ploom_buf_add_str(b, "test_search", 11);
	ploom_buf_add_str(b, target, strlen(target));
	ploom_buf_add_str(b, "", 0);
	ploom_buf_addf(b, " 0");
	ploom_buf_add_str(b, "", 0);
	ploom_buf_add_str(b, "", 0);
	ploom_buf_add_str(b, "", 0);
	ploom_buf_add(b, "\n", 1);
}

/* One run of a simulated scenario or program into b. */
static void sim_answer(struct ploom_buf *b, const struct target *t, const struct ploom_run_cmd *cmd)
{
	struct ploom_run run;
	const struct ploom_policy_spec *policy = t->ignore ? NULL : &cmd->policy;

	sim_exec_policy(&run, t->sc, t->is_prog ? &t->prog : NULL, t->ignore ? NULL : cmd->choices,
			t->ignore ? 0 : cmd->nchoices, policy);
	cut(&run, cmd->max_steps);
	if (run.outcome.kind == PLOOM_OUTCOME_FAILURE && run.preemptions < t->rename_below) {
		free(run.outcome.exc_message);
		run.outcome.exc_message = strdup("another bug");
	}
	add_run(b, &run);
	ploom_buf_addf(b, "exit code 0\ndone %zu\n", run.nsteps);
	ploom_run_release(&run);
}

/* Appends a line to the file at path, for the test to count the runs. */
static void log_run(const char *path)
{
	FILE *f = fopen(path, "a");

	if (!f || fputs("run\n", f) < 0 || fclose(f) != 0)
		_exit(1);
}

static void __attribute__((noreturn)) be_worker(const char *target)
{
	struct ploom_buf b = {0};
	struct target t;
	char *line = NULL;
	size_t cap = 0;
	int runs = 0;

	parse_target(&t, target);
	hello(&b, target);
	if (ploom_buf_flush_fd(&b, 3) < 0)
		_exit(1);
	while (getline(&line, &cap, stdin) > 0 && strncmp(line, "quit", 4)) {
		struct ploom_run_cmd cmd;

		if (t.die_after && runs >= t.die_after)
			_exit(1);
		runs++;
		if (t.log)
			log_run(t.log);
		if (ploom_run_cmd_parse(&cmd, line, strlen(line) - 1, NULL) < 0)
			_exit(1);
		if (t.sc || t.is_prog) {
			sim_answer(&b, &t, &cmd);
		} else if (!strcmp(t.name, "diverge")) {
			ploom_buf_addf(&b, "outcome divergence 0");
			ploom_buf_add_str(&b, "task 9 is not enabled", 21);
			ploom_buf_addf(&b, "\nexit code 0\ndone 0\n");
		} else {
			char msg[64];
			int first = cmd.nchoices ? cmd.choices[0] : -1;

			if (cmd.nsleep)
				snprintf(msg, sizeof(msg), "run %d sleep %d", first, cmd.sleep[0]);
			else
				snprintf(msg, sizeof(msg), "run %d", first);
			ploom_buf_addf(&b, "outcome failure 0");
			ploom_buf_add_str(&b, "builtins.AssertionError", 23);
			ploom_buf_add_str(&b, msg, strlen(msg));
			ploom_buf_add_str(&b, "", 0);
			ploom_buf_addf(&b, "\nexit code 0\ndone 0\n");
		}
		ploom_run_cmd_release(&cmd);
		if (ploom_buf_flush_fd(&b, 3) < 0)
			_exit(1);
	}
	_exit(0);
}

void simworker_main(int argc, char **argv)
{
	int i, ok = argc >= 5 && !strcmp(argv[1], "-P") && !strcmp(argv[2], "-m") &&
		    !strcmp(argv[3], "ploom._worker");

	if (argc <= 1)
		return;
	for (i = 4; ok && i < argc - 1; i++)
		ok = !strncmp(argv[i], "--instrument=", 13) ||
		     !strcmp(argv[i], "--instrument-scenario");
	if (ok)
		be_worker(argv[argc - 1]);
	fprintf(stderr, "%s: unexpected arguments (a worker is SELF -P -m ploom._worker "
			"[--instrument=MOD]... [--instrument-scenario] TARGET)\n", argv[0]);
	_exit(2);
}

const char *simworker_self(void)
{
	static char self[4096];
	ssize_t n;

	if (!self[0]) {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n < 0)
			abort();
		self[n] = '\0';
	}
	return self;
}
