/* stacks.c - where each task of a schedule was when its child ran past
 * its timeout, or when the schedule reached its step limit.  Such a child
 * is stuck where ploom cannot see it (a real lock, a long computation, a
 * loop without operations), or loops through operations that never let
 * it finish (a spin-wait), so its last step says little; the Python
 * stacks of its threads say where.
 *
 * Reading another thread's frames from C inside a signal handler is not
 * safe to write by hand, so the child asks faulthandler, which is made
 * for it: the worker registers faulthandler once, before the first fork,
 * to dump every thread's stack into a memfd on STACKS_SIGNAL, chained to
 * a handler of ours that then posts an eventfd.  On a timeout the worker
 * signals the child, waits for that post at most STACKS_WAIT_MS (a child
 * may be too stuck to dump, or crash while it does), reads the memfd, and
 * only then kills the child.  The dump names threads by their idents, so
 * each task writes its thread's ident in a map the worker and the
 * children share; the worker turns the two into `stack` and `frame`
 * records (lib/event.h's ploom_enc_stacks()).  A child at its step limit
 * is not stuck: it raises the signal itself, which dumps at once in the
 * thread that raised it, and says so in the map before it ends; the
 * worker then reads the dump as after a timeout.  A schedule that does
 * neither pays one store per task in the map, nothing else.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ploom.h"

/* A real-time signal that neither Python nor a scenario is likely to use
 * (Python's signal module handles the classic ones). */
#define STACKS_SIGNAL (SIGRTMAX - 5)
#define STACKS_WAIT_MS 200
/* 100 threads (faulthandler's own bound) of 100 frames, each line at
 * most about 600 bytes, and then some: past this the dump is cut */
#define STACKS_DUMP_MAX (8u << 20)

/* What the worker and every child share: the tasks of the running
 * schedule.  A child writes it, the worker reads it once the child is
 * stopped or dead. */
struct stack_map {
	atomic_int ntasks;
	atomic_int dumped;      /* the child began to dump its stacks itself */
	unsigned long ident[PLOOM_STACK_TASKS_MAX];
	unsigned char finished[PLOOM_STACK_TASKS_MAX];
};

struct stacks {
	struct stack_map *map;  /* MAP_SHARED */
	int dump_fd;            /* memfd: faulthandler's file in every child */
	int done_fd;            /* eventfd: posted once a dump is written */
	char *dump;             /* the worker's copy of the last dump */
	size_t dump_len;
	int complete;           /* the child said the dump was whole */
	int taken;              /* stacks_take() ran for this child */
};

/* The eventfd the handler posts.  A signal handler gets no argument, so
 * it cannot reach module state: this is set once, before the first fork,
 * and only read afterwards. */
static volatile int stacks_done_fd = -1;

/* Runs after faulthandler has written the dump (it chains to the handler
 * it found): async-signal-safe, a write and nothing else. */
static void stacks_dumped(int sig)
{
	uint64_t one = 1;
	int saved = errno;

	(void)sig;
	if (stacks_done_fd >= 0) {
		ssize_t w = write(stacks_done_fd, &one, sizeof(one));
		(void)w;
	}
	errno = saved;
}

int stacks_open(struct sched *s)
{
	struct stacks *k = calloc(1, sizeof(*k));
	struct sigaction sa;
	PyObject *fh = NULL, *r = NULL;

	if (!k) {
		PyErr_NoMemory();
		return -1;
	}
	k->dump_fd = k->done_fd = -1;
	s->stacks = k;
	k->map = mmap(NULL, sizeof(*k->map), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	if (k->map == MAP_FAILED) {
		k->map = NULL;
		PyErr_NoMemory();
		return -1;
	}
	k->dump_fd = memfd_create("ploom-stacks", MFD_CLOEXEC);
	k->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (k->dump_fd < 0 || k->done_fd < 0) {
		PyErr_SetFromErrno(PyExc_OSError);
		return -1;
	}
	stacks_done_fd = k->done_fd;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = stacks_dumped;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(STACKS_SIGNAL, &sa, NULL) < 0) {
		PyErr_SetFromErrno(PyExc_OSError);
		return -1;
	}
	fh = PyImport_ImportModule("faulthandler");
	if (fh)
		r = PyObject_CallMethod(fh, "register", "iiii", STACKS_SIGNAL, k->dump_fd, 1, 1);
	Py_XDECREF(fh);
	if (!r)
		return -1;
	Py_DECREF(r);
	return 0;
}

void stacks_close(struct sched *s)
{
	struct stacks *k = s->stacks;

	if (!k)
		return;
	if (k->map)
		munmap(k->map, sizeof(*k->map));
	if (k->dump_fd >= 0)
		close(k->dump_fd);
	if (k->done_fd >= 0)
		close(k->done_fd);
	stacks_done_fd = -1;
	free(k->dump);
	free(k);
	s->stacks = NULL;
}

void stacks_reset(struct sched *s)
{
	if (s->stacks && s->stacks->map) {
		atomic_store(&s->stacks->map->ntasks, 0);
		atomic_store(&s->stacks->map->dumped, 0);
	}
}

void stacks_note_thread(struct sched *s, int task, unsigned long ident)
{
	struct stack_map *m = s->stacks ? s->stacks->map : NULL;
	int n;

	if (!m || task < 0 || task >= PLOOM_STACK_TASKS_MAX)
		return;
	/* a task id skipped (a thread that could not start) reads as no thread */
	for (n = atomic_load(&m->ntasks); n < task; n++) {
		m->ident[n] = 0;
		m->finished[n] = 1;
	}
	m->ident[task] = ident;
	m->finished[task] = 0;
	if (task >= atomic_load(&m->ntasks))
		atomic_store(&m->ntasks, task + 1);
}

void stacks_note_finished(struct sched *s, int task)
{
	struct stack_map *m = s->stacks ? s->stacks->map : NULL;

	if (m && task >= 0 && task < atomic_load(&m->ntasks))
		m->finished[task] = 1;
}

static long ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void stacks_dump_self(struct sched *s)
{
	struct stack_map *m = s->stacks ? s->stacks->map : NULL;

	/* said first, so that the worker reads the file even after a crash
	 * in the middle of the dump; raise() delivers to the calling thread
	 * before it returns, and the handler posts the eventfd once the dump
	 * is whole */
	if (!m)
		return;
	atomic_store(&m->dumped, 1);
	(void)raise(STACKS_SIGNAL);
}

/* Keeps what the child wrote in the dump file (k->dump), cut at
 * STACKS_DUMP_MAX. */
static void stacks_read(struct stacks *k)
{
	struct stat st;
	ssize_t got;
	size_t want;

	if (fstat(k->dump_fd, &st) < 0 || st.st_size <= 0)
		return;
	want = (size_t)st.st_size < STACKS_DUMP_MAX ? (size_t)st.st_size : STACKS_DUMP_MAX;
	if (want < (size_t)st.st_size)
		k->complete = 0;
	free(k->dump);
	k->dump = malloc(want);
	if (!k->dump)
		return;
	got = pread(k->dump_fd, k->dump, want, 0);
	k->dump_len = got > 0 ? (size_t)got : 0;
}

void stacks_take(struct sched *s, pid_t pid, int pidfd)
{
	struct stacks *k = s->stacks;
	long deadline = ms_now() + STACKS_WAIT_MS;
	uint64_t n;

	if (!k || !k->map)
		return;
	k->taken = 1;
	k->dump_len = 0;
	k->complete = 0;
	/* a post left by an earlier child that was killed as it dumped */
	while (read(k->done_fd, &n, sizeof(n)) > 0)
		;
	if (kill(pid, STACKS_SIGNAL) < 0)
		return;
	for (;;) {
		struct pollfd p[2] = {{.fd = k->done_fd, .events = POLLIN},
				      {.fd = pidfd, .events = POLLIN}};
		long left = deadline - ms_now();
		int rc;

		if (left <= 0)
			break;
		rc = poll(p, pidfd >= 0 ? 2 : 1, (int)left);
		if (rc < 0 && errno != EINTR)
			break;
		if (rc > 0 && p[0].revents) {
			k->complete = 1;
			break;
		}
		/* the child ended meanwhile: what it wrote is all there is */
		if (rc > 0 && p[1].revents)
			break;
	}
	stacks_read(k);
}

void stacks_emit(struct sched *s, struct ploom_buf *out)
{
	struct stacks *k = s->stacks;
	struct ploom_dump_task *tasks;
	int i, n;

	uint64_t posted;

	if (!k || !k->map)
		return;
	if (!k->taken) {
		/* neither a timeout nor a dump: the file is empty, as it was
		 * left */
		if (!atomic_load(&k->map->dumped))
			return;
		k->complete = read(k->done_fd, &posted, sizeof(posted)) > 0;
		k->dump_len = 0;
		stacks_read(k);
	}
	k->taken = 0;
	/* the post of a timeout's dump, which stacks_take() only waited for:
	 * the next child's dump must post its own */
	while (read(k->done_fd, &posted, sizeof(posted)) > 0)
		;
	/* afresh for the next dump: faulthandler writes at the file's offset,
	 * which the children share with the worker */
	if (ftruncate(k->dump_fd, 0) < 0 || lseek(k->dump_fd, 0, SEEK_SET) < 0)
		k->dump_len = 0;
	if (!k->dump_len)
		return;
	n = atomic_load(&k->map->ntasks);
	if (n > PLOOM_STACK_TASKS_MAX)
		n = PLOOM_STACK_TASKS_MAX;
	tasks = calloc((size_t)n + 1, sizeof(*tasks));
	if (tasks) {
		for (i = 0; i < n; i++) {
			tasks[i].ident = k->map->ident[i];
			tasks[i].finished = k->map->finished[i];
		}
		ploom_enc_stacks(out, k->dump, k->dump_len, tasks, (size_t)n, k->complete,
				 s->ploom_dir, s->cwd);
	}
	free(tasks);
	k->dump_len = 0;
}
