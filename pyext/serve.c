/* serve.c - the fork server of ploom's worker: serve() reads the
 * utility's commands and runs each `run` in a child forked from the
 * worker, relaying the child's records, exit and output to the event fd
 * (lib/event.h documents the protocol).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ploom.h"

#define OUTPUT_MAX (64 * 1024)

/* An audit hook (PEP 578) that refuses os.fork() and os.forkpty() while a
 * schedule runs.  The new process would be a copy of the schedule outside
 * the scheduler: its steps would land in the record area among the
 * schedule's own (the utility then reports a malformed record), or nowhere
 * at all, and it could run on after its schedule ended.  The audit event
 * comes before the fork, so nothing is copied: ploom._guard.refuse_fork()
 * ends the schedule as a setup mistake (UnscheduledPrimitiveError), which
 * no except clause of the code that forked can catch, since what follows
 * the fork is nothing ploom can explore, and no bug of that code.  Should
 * it return (no task runs: a thread ploom did not start forked), the call
 * raises RuntimeError.  subprocess and os.posix_spawn start another
 * program (fork and exec, or vfork), which nothing of the schedule
 * reaches: they stay allowed.  The hook lives in the worker, installed
 * once by serve(), and refuses only in a schedule's child, where
 * sched.active is set. */
static int refuse_fork(const char *event, PyObject *Py_UNUSED(args), void *data)
{
	const struct sched *s = data;
	PyObject *guard, *r;
	const char *call;

	if (!s->active)
		return 0;
	if (!strcmp(event, "os.fork"))
		call = "os.fork()";
	else if (!strcmp(event, "os.forkpty"))
		call = "os.forkpty()";
	else
		return 0;
	guard = PyImport_ImportModule("ploom._guard");
	r = guard ? PyObject_CallMethod(guard, "refuse_fork", "s", call) : NULL;
	Py_XDECREF(guard);
	Py_XDECREF(r);
	PyErr_Clear();
	PyErr_Format(PyExc_RuntimeError,
		     "ploom: a scenario cannot call %s: the new process would escape the "
		     "scheduler (its steps would not be recorded, and it could outlive the "
		     "schedule); to run another program, use subprocess", call);
	return -1;
}

/* Whether the signal call of the audit event `event` with args sends
 * SIGKILL to this process: os.kill() to its id, its group (the child leads
 * its own) or 0, os.killpg() to its group or 0, signal.pthread_kill() to
 * any thread (a thread id names a thread of this process). */
static int kills_self(const char *event, PyObject *args)
{
	long target, sig;
	int thread;

	if (!strcmp(event, "signal.pthread_kill"))
		thread = 1;
	else if (!strcmp(event, "os.kill") || !strcmp(event, "os.killpg"))
		thread = 0;
	else
		return 0;
	if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) != 2)
		return 0;
	sig = PyLong_AsLong(PyTuple_GET_ITEM(args, 1));
	if (sig == -1 && PyErr_Occurred()) {
		PyErr_Clear();
		return 0;
	}
	if (sig != SIGKILL)
		return 0;
	if (thread)
		return 1;
	target = PyLong_AsLong(PyTuple_GET_ITEM(args, 0));
	if (target == -1 && PyErr_Occurred()) {
		PyErr_Clear();
		return 0;
	}
	if (!strcmp(event, "os.killpg"))
		return target == 0 || target == (long)getpgrp();
	return target == 0 || target == (long)getpid() || target == -(long)getpgrp();
}

/* An audit hook that notes, in the record area, that a schedule's child
 * sent itself SIGKILL, before the call runs: the worker then tells the
 * scenario's own kill from one from outside ploom, which no record
 * follows either (a SIGKILL cannot be caught).  A kill the audit does not
 * see (signal.raise_signal(), C code) reads as one from outside. */
static int note_self_kill(const char *event, PyObject *args, void *data)
{
	const struct sched *s = data;

	if (s->active && s->area && kills_self(event, args))
		atomic_store(&s->area->self_kill, 1);
	return 0;
}

/* The scheduler whose schedule's child a fork copies, for the handler
 * below: one per process (serve() runs once). */
static struct sched *forking_sched;

/* pthread_atfork's child handler: a fork inside a schedule that os.fork()
 * did not make (its audit event refuses it first) copies the child, whose
 * code must then stay off the record area (sched.c's stray_fork_check()).
 * The worker forks a schedule's child outside any schedule. */
static void on_fork_child(void)
{
	if (forking_sched && forking_sched->active)
		forking_sched->forked_copy = 1;
}

/* The commands from the utility.  A `run` line grows with its choices,
 * so the buffer does too, up to the longest line the protocol allows. */
struct cmd_reader {
	int fd;
	char *buf;
	size_t len;             /* bytes held */
	size_t cap;
	size_t scanned;         /* bytes known to hold no newline */
	size_t taken;           /* bytes of the line last returned */
};

/* Reads the next command line into *line: NUL-terminated, inside the
 * reader, valid until the next call.  1 = got one, 0 = end of input,
 * -1 = read error, -2 = line longer than PLOOM_MAX_RUN_CMD_BYTES. */
static int read_line(struct cmd_reader *r, char **line)
{
	if (r->taken) {
		memmove(r->buf, r->buf + r->taken, r->len - r->taken);
		r->len -= r->taken;
		r->taken = r->scanned = 0;
	}
	for (;;) {
		char *nl = r->len > r->scanned ?
			memchr(r->buf + r->scanned, '\n', r->len - r->scanned) : NULL;
		ssize_t n;

		if (nl) {
			*nl = '\0';
			*line = r->buf;
			r->taken = (size_t)(nl - r->buf) + 1;
			return 1;
		}
		r->scanned = r->len;
		if (r->len == r->cap) {
			size_t cap = r->cap ? 2 * r->cap : 65536;
			char *p;
			/* the line and its newline */
			if (r->cap > PLOOM_MAX_RUN_CMD_BYTES)
				return -2;
			if (cap > PLOOM_MAX_RUN_CMD_BYTES + 1)
				cap = PLOOM_MAX_RUN_CMD_BYTES + 1;
			p = realloc(r->buf, cap);
			if (!p)
				return -1;
			r->buf = p;
			r->cap = cap;
		}
		Py_BEGIN_ALLOW_THREADS
		n = read(r->fd, r->buf + r->len, r->cap - r->len);
		Py_END_ALLOW_THREADS
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 ? 0 : -1;
		r->len += (size_t)n;
	}
}

/* Takes a `run` command into the scheduler's state.  Returns 0, or -1
 * with err filled. */
static int parse_run(struct sched *s, const char *line, long *timeout_ms,
		     struct ploom_err *err)
{
	struct ploom_run_cmd cmd;

	if (ploom_run_cmd_parse(&cmd, line, strlen(line), err) < 0) {
		ploom_run_cmd_release(&cmd);
		return -1;
	}
	free(s->choices);
	free(s->sleep);
	free(s->policy_spec.follow);
	s->max_steps = cmd.max_steps;
	*timeout_ms = cmd.timeout_ms;
	s->choices = cmd.choices;
	s->nchoices = (int)cmd.nchoices;
	s->next_choice = 0;
	s->sleep = cmd.sleep;
	s->nsleep = cmd.nsleep;
	s->policy_spec = cmd.policy;
	return 0;
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The records of one child on their way to the event fd: out holds what
 * the area gave and was not sent yet (a cut tail at most, until the
 * child's end), nsteps counts the step records sent or kept. */
struct relay {
	struct ploom_buf out;
	long nsteps;
	int event_fd;
	int failed;             /* a write failed: the utility is gone */
};

/* Counts the step records among the whole lines of p[0..n). */
static long count_steps(const char *p, size_t n)
{
	const char *end = p + n;
	long k = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		if (nl - p >= 5 && !memcmp(p, "step ", 5))
			k++;
		p = nl + 1;
	}
	return k;
}

/* Takes the area's records into r->out, then keeps only whole lines
 * there: the cut tail is dropped when the child has ended (it was killed
 * in the middle of a record), else sent later with the rest of it. */
static void relay_take(struct relay *r, struct record_area *a, int ended)
{
	size_t keep, whole;
	char *nl;

	ploom_buf_add(&r->out, a->data, atomic_load(&a->len));
	atomic_store(&a->len, 0);
	nl = r->out.len ? memrchr(r->out.data, '\n', r->out.len) : NULL;
	whole = nl ? (size_t)(nl - r->out.data) + 1 : 0;
	keep = r->out.len - whole;
	r->nsteps += count_steps(r->out.data, whole);
	if (ended) {
		r->out.len = whole;
		return;
	}
	if (!r->failed) {
		struct ploom_buf head = {.data = r->out.data, .len = whole, .cap = whole};
		if (ploom_buf_flush_fd(&head, r->event_fd) < 0)
			r->failed = 1;
	}
	memmove(r->out.data, r->out.data + whole, keep);
	r->out.len = keep;
}

/* Waits for the child, emptying the record area whenever it asks, and
 * kills it after timeout_ms (0: never).  Returns the wait status, and
 * *timed_out; *killed_here is 1 when the child was alive as the wait
 * ended (a timeout, or a failure to wait), so that any SIGKILL it died of
 * was this worker's. */
static int reap_child(struct sched *s, pid_t pid, long timeout_ms, struct record_area *a,
		      int drain_fd, struct relay *r, int *timed_out, int *killed_here)
{
	int status = 0, pfd, exited = 0;
	long deadline = timeout_ms ? now_ms() + timeout_ms : 0;

	*timed_out = 0;
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	for (;;) {
		struct pollfd p[2] = {{.fd = pfd, .events = POLLIN},
				      {.fd = drain_fd, .events = POLLIN}};
		long left = deadline ? deadline - now_ms() : 1000000;
		siginfo_t si = {0};
		int rc;

		if (left <= 0) {
			*timed_out = 1;
			stacks_take(s, pid, pfd);
			break;
		}
		if (pfd < 0) {
			/* no pidfd (Linux before 5.3): look now and then */
			if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
			    si.si_pid == pid) {
				exited = 1;
				break;
			}
			if (left > 10)
				left = 10;
		}
		rc = poll(p, 2, (int)(left > 1000000 ? 1000000 : left));
		if (rc < 0 && errno != EINTR)
			break;
		if (rc > 0 && p[1].revents) {
			uint64_t n;
			/* a request left by a killed child may be read here:
			 * drain_req tells whether this child waits */
			if (read(drain_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
				break;
			if (atomic_load(&a->drain_req)) {
				relay_take(r, a, 0);
				if (r->failed)
					break;
				atomic_store(&a->drain_req, 0);
				sem_post(&a->drained);
			}
		}
		if (rc > 0 && p[0].revents) {
			exited = 1;
			break;
		}
	}
	/* a SIGKILL it dies of from here on is this worker's */
	*killed_here = !exited;
	if (pfd >= 0)
		close(pfd);
	/* the child is at worst a zombie here, so its process group id cannot
	 * have been reused: take down anything it left behind */
	kill(-pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

static void emit_output(struct ploom_buf *b, int memfd)
{
	char *data;
	ssize_t n;

	if (lseek(memfd, 0, SEEK_SET) < 0)
		return;
	data = malloc(OUTPUT_MAX);
	if (!data)
		return;
	n = read(memfd, data, OUTPUT_MAX);
	if (n > 0)
		ploom_enc_output(b, data, (size_t)n);
	free(data);
}

/* Only one task of a schedule runs at a time, so its threads lose nothing
 * by sharing one CPU, and gain: a handoff wakes a thread on the same CPU, and
 * a copy-on-write fault needs no TLB shootdown on another one. */
static void pin_to_one_cpu(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
}

/* What a where needs to know before the first fork: the ploom package's
 * folder, whose frames it looks past (this extension's own folder), and
 * the folder relative file names start from. */
static int where_roots(struct sched *s, PyObject *module)
{
	PyObject *file = PyModule_GetFilenameObject(module);
	const char *u, *slash;

	if (!file)
		return -1;
	u = PyUnicode_AsUTF8(file);
	slash = u ? strrchr(u, '/') : NULL;
	if (slash) {
		s->ploom_dir = strndup(u, (size_t)(slash - u) + 1);
		s->ploom_dir_len = (size_t)(slash - u) + 1;
	}
	PyErr_Clear();
	Py_DECREF(file);
	s->cwd = getcwd(NULL, 0);
	if (!s->ploom_dir || !s->cwd) {
		PyErr_NoMemory();
		return -1;
	}
	return 0;
}

/* What serve() holds while it serves: its arguments and what it made for
 * the children, released by server_close(). */
struct server {
	module_state *st;
	PyObject *scenario;     /* borrowed: serve()'s argument */
	int cmd_fd;
	int event_fd;
	pid_t worker;           /* this process */
	struct cmd_reader reader;
	struct record_area *area;
	int memfd;              /* the children's stdout and stderr, one after another */
	int drain_fd;
	struct relay relay;
};

/* Sends the `hello` record: str() of each of hello's 11 items (the third
 * and the eighth taken for true or false).  Returns 0, or -1 with an
 * exception. */
static int send_hello(PyObject *hello, int event_fd)
{
	PyObject *str[11] = {NULL};
	const char *u[11];
	size_t len[11];
	struct ploom_buf out = {0};
	Py_ssize_t i;
	int ret = -1;

	for (i = 0; i < 11; i++) {
		str[i] = PyObject_Str(PyTuple_GET_ITEM(hello, i));
		if (!str[i])
			goto done;
		u[i] = utf8_of(str[i], &len[i]);
	}
	ploom_enc_hello(&out, u[0], len[0], u[1], len[1],
			PyObject_IsTrue(PyTuple_GET_ITEM(hello, 2)) == 1, u[3], len[3], u[4],
			len[4], u[5], len[5], u[6], len[6],
			PyObject_IsTrue(PyTuple_GET_ITEM(hello, 7)) == 1, u[8], len[8], u[9],
			len[9], u[10], len[10]);
	if (ploom_buf_flush_fd(&out, event_fd) < 0) {
		PyErr_SetFromErrno(PyExc_OSError);
		goto done;
	}
	ret = 0;
done:
	for (i = 0; i < 11; i++)
		Py_XDECREF(str[i]);
	ploom_buf_release(&out);
	return ret;
}

/* Makes what every child uses (the record area, the output file, the
 * drain eventfd) and readies this process to fork them.  Returns 0, or -1
 * with an exception. */
static int server_open(struct server *srv)
{
	struct sched *s = &srv->st->sched;
	PyObject *preloaded;

	srv->area = mmap(NULL, sizeof(*srv->area), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (srv->area == MAP_FAILED) {
		srv->area = NULL;
		PyErr_NoMemory();
		return -1;
	}
	/* Imported here, once: a failing schedule formats its traceback, and
	 * importing the module in every failing child cost more than the rest
	 * of its schedule (5 ms against 0.6 ms, with -k on the bank example). */
	preloaded = PyImport_ImportModule("traceback");
	if (!preloaded)
		return -1;
	Py_DECREF(preloaded); /* sys.modules keeps it */
	if (PySys_AddAuditHook(refuse_fork, s) < 0 || PySys_AddAuditHook(note_self_kill, s) < 0)
		return -1;
	forking_sched = s;
	if (pthread_atfork(NULL, NULL, on_fork_child)) {
		PyErr_SetString(PyExc_RuntimeError, "pthread_atfork failed");
		return -1;
	}
	/* once: what the worker printed must not reach every child, and the
	 * loop of serve() runs no Python code that prints */
	flush_python_stdio();
	srv->memfd = memfd_create("ploom-output", MFD_CLOEXEC);
	srv->drain_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (srv->memfd < 0 || srv->drain_fd < 0) {
		PyErr_SetFromErrno(PyExc_OSError);
		return -1;
	}
	srv->reader.fd = srv->cmd_fd;
	srv->relay.event_fd = srv->event_fd;
	s->drain_fd = srv->drain_fd;
	/* a terminal's ^C reaches the utility too, which stops this worker;
	 * dying first would look like a crash of the worker */
	signal(SIGINT, SIG_IGN);
	/* one malloc arena: a task thread's first malloc would otherwise map
	 * and fault in a fresh arena in every child */
	mallopt(M_ARENA_MAX, 1);
	s->area = srv->area;
	return stacks_open(s);
}

static void server_close(struct server *srv)
{
	struct sched *s = &srv->st->sched;

	ploom_buf_release(&srv->relay.out);
	free(srv->reader.buf);
	if (srv->area)
		munmap(srv->area, sizeof(*srv->area));
	if (srv->memfd >= 0)
		close(srv->memfd);
	if (srv->drain_fd >= 0)
		close(srv->drain_fd);
	s->area = NULL;
	stacks_close(s);
	free(s->ploom_dir);
	free(s->cwd);
	s->ploom_dir = s->cwd = NULL;
}

/* A schedule's child, just forked: runs the schedule and never returns. */
static _Noreturn void child_run(struct server *srv)
{
	int devnull;

	PyOS_AfterFork_Child();
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* what the scenario orphans stays with the schedule while it
	 * runs: the utility, the next subreaper up, kills what it
	 * inherits, and must inherit it only once the schedule is over
	 * (other workers' schedules end meanwhile) */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	pin_to_one_cpu();
	if (getppid() != srv->worker)
		_exit(122);
	setpgid(0, 0);
	devnull = open("/dev/null", O_RDONLY);
	if (devnull >= 0) {
		dup2(devnull, 0);
		close(devnull);
	}
	dup2(srv->memfd, 1);
	dup2(srv->memfd, 2);
	if (srv->cmd_fd > 2)
		close(srv->cmd_fd);
	/* the worker alone writes records there, see record_area */
	if (srv->event_fd > 2)
		close(srv->event_fd);
	sched_run(srv->st, srv->scenario);
}

/* Runs the `run` command line in a child and relays what it wrote, how
 * it ended and its output.  Returns 0 to serve on, 1 when the utility has
 * gone away (nothing left to serve), -1 with an exception. */
static int serve_run(struct server *srv, const char *line)
{
	struct record_area *area = srv->area;
	struct relay *relay = &srv->relay;
	struct ploom_err why = {0, ""};
	long timeout_ms = 0;
	int status, timed_out, killed_here;
	pid_t pid;

	if (strncmp(line, "run ", 4) != 0 || parse_run(&srv->st->sched, line, &timeout_ms, &why) < 0) {
		/* the utility's mistake, not the end of the worker: it hears
		 * why in place of the run, and can go on */
		if (strncmp(line, "run ", 4) != 0)
			snprintf(why.msg, sizeof(why.msg), "unknown command '%.60s'", line);
		ploom_enc_error(&relay->out, "command", why.msg, strlen(why.msg));
		return ploom_buf_flush_fd(&relay->out, srv->event_fd) < 0 ? 1 : 0;
	}
	if (ftruncate(srv->memfd, 0) < 0 || lseek(srv->memfd, 0, SEEK_SET) < 0) {
		PyErr_SetFromErrno(PyExc_OSError);
		return -1;
	}
	atomic_store(&area->len, 0);
	atomic_store(&area->drain_req, 0);
	atomic_store(&area->self_kill, 0);
	/* afresh: a child killed while the worker posted leaves a count */
	if (sem_init(&area->drained, 1, 0) < 0) {
		PyErr_SetFromErrno(PyExc_OSError);
		return -1;
	}
	relay->nsteps = 0;
	stacks_reset(&srv->st->sched);
	PyOS_BeforeFork();
	pid = fork();
	if (pid == 0)
		child_run(srv);
	PyOS_AfterFork_Parent();
	if (pid < 0) {
		PyErr_SetFromErrno(PyExc_OSError);
		return -1;
	}
	Py_BEGIN_ALLOW_THREADS
	status = reap_child(&srv->st->sched, pid, timeout_ms, area, srv->drain_fd, relay,
			    &timed_out, &killed_here);
	Py_END_ALLOW_THREADS
	if (relay->failed)
		return 1;
	relay_take(relay, area, 1);
	if (timed_out) {
		ploom_enc_exit(&relay->out, "timeout", 0);
	} else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && !killed_here &&
		   !atomic_load(&area->self_kill)) {
		/* neither this worker nor the scenario: from outside ploom */
		ploom_enc_exit(&relay->out, "killed", SIGKILL);
	} else if (WIFSIGNALED(status)) {
		ploom_enc_exit(&relay->out, "signal", WTERMSIG(status));
	} else {
		ploom_enc_exit(&relay->out, "code", WEXITSTATUS(status));
	}
	/* a timeout's stacks, or those a child at its step limit dumped */
	stacks_emit(&srv->st->sched, &relay->out);
	emit_output(&relay->out, srv->memfd);
	ploom_enc_done(&relay->out, relay->nsteps);
	if (ploom_buf_flush_fd(&relay->out, srv->event_fd) < 0)
		return 1;
	return 0;
}

PyObject *ploom_serve(PyObject *module, PyObject *args)
{
	module_state *st = PyModule_GetState(module);
	struct server srv = {.st = st, .worker = getpid(), .memfd = -1, .drain_fd = -1,
			     .relay = {.event_fd = -1}};
	PyObject *hello, *ret = NULL;

	if (!PyArg_ParseTuple(args, "OO!ii:serve", &srv.scenario, &PyTuple_Type, &hello,
			      &srv.cmd_fd, &srv.event_fd))
		return NULL;
	if (PyTuple_GET_SIZE(hello) != 11) {
		PyErr_SetString(PyExc_ValueError, "serve: hello must have 11 items");
		return NULL;
	}
	if (where_roots(&st->sched, module) < 0 || send_hello(hello, srv.event_fd) < 0 ||
	    server_open(&srv) < 0)
		goto done;
	for (;;) {
		char *line;
		int rc = read_line(&srv.reader, &line);

		if (rc == -2) {
			PyErr_Format(PyExc_ValueError, "serve: command longer than %zu bytes",
				     (size_t)PLOOM_MAX_RUN_CMD_BYTES);
			goto done;
		}
		if (rc < 0) {
			PyErr_SetFromErrno(PyExc_OSError);
			goto done;
		}
		if (rc == 0 || strcmp(line, "quit") == 0)
			break;
		rc = serve_run(&srv, line);
		if (rc < 0)
			goto done;
		if (rc > 0)
			break;
	}
	ret = Py_NewRef(Py_None);
done:
	server_close(&srv);
	return ret;
}

PyObject *ploom_write_error(PyObject *Py_UNUSED(module), PyObject *args)
{
	int fd;
	const char *kind, *msg, *type = NULL;
	Py_ssize_t len, type_len = 0;
	struct ploom_buf b = {0};
	int rc;

	if (!PyArg_ParseTuple(args, "iss#|z#:write_error", &fd, &kind, &msg, &len, &type,
			      &type_len))
		return NULL;
	ploom_enc_error_detail(&b, kind, msg, (size_t)len, type, (size_t)type_len);
	rc = ploom_buf_flush_fd(&b, fd);
	ploom_buf_release(&b);
	if (rc < 0)
		return PyErr_SetFromErrno(PyExc_OSError);
	Py_RETURN_NONE;
}
