/* The worker process and its record reader; worker.h documents the API
 * and event.h the protocol. */
#include "worker.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "decode.h"
#include "event.h"
#include "kind.h"
#include "worker-spawn.h"

/* Extra time the worker gets beyond a schedule's own timeout before we
 * decide it hangs: it kills the child itself and should answer at once. */
#define WORKER_GRACE_MS 10000

struct linebuf {
	char *data;
	size_t len;     /* bytes held */
	size_t start;   /* first byte not yet returned */
	/* bytes from start known to hold no '\n': a long record arrives
	 * in many reads, and scanning it afresh after each would be
	 * quadratic in its length */
	size_t scanned;
	size_t cap;
};

struct ploom_worker {
	pid_t pid;
	int cmd_fd;
	int rec_fd;
	struct linebuf lb;
	struct ploom_hello hello;
	char *target;
	const volatile sig_atomic_t *interrupted;
	/* a run sent with ploom_worker_send_run(), read as it comes */
	int in_run;
	long deadline;                  /* now_ms() clock, 0: none */
	long timeout_ms;
	struct ploom_run_parser parser;
	struct ploom_run pending;
	int slot;                       /* in the pool, -1: none */
	int reaped;                     /* reaped by reap_orphans: status is... */
	int reaped_status;              /* ...this */
};

/* ---- the pool ----
 *
 * The one owner of this process's workers: each worker it started and has
 * not reaped has a slot, so that its orphans are told from its workers
 * (kill_orphans), reaping one worker's orphans neither waits for the others
 * nor loses their exit status (note_reaped), and a signal handler can kill
 * them all (ploom_worker_kill_all).  The utilities are single-threaded:
 * plain arrays will do. */
static struct {
	struct ploom_worker *worker[PLOOM_WORKER_MAX]; /* NULL: a free slot */
	/* what ploom_worker_kill_all reads: the pid of the slot's worker
	 * while it runs, else 0 */
	volatile sig_atomic_t pid[PLOOM_WORKER_MAX];
	/* this process's children file (open_children), opened for the pid
	 * in children_owner */
	int children_fd;
	pid_t children_owner;
} pool = {.children_fd = -1};

_Static_assert(sizeof(sig_atomic_t) >= sizeof(pid_t), "a pid fits in a sig_atomic_t");

/* Takes a free slot for w.  Returns 0, or -1 when the pool is full. */
static int pool_add(struct ploom_worker *w)
{
	int i;

	for (i = 0; i < PLOOM_WORKER_MAX; i++)
		if (!pool.worker[i]) {
			pool.worker[i] = w;
			w->slot = i;
			return 0;
		}
	return -1;
}

/* Gives w's pid to ploom_worker_kill_all (0: none). */
static void pool_arm(struct ploom_worker *w, pid_t pid)
{
	if (w->slot >= 0)
		pool.pid[w->slot] = pid;
}

/* Frees w's slot, if it has one. */
static void pool_remove(struct ploom_worker *w)
{
	if (w->slot < 0)
		return;
	pool.pid[w->slot] = 0;
	pool.worker[w->slot] = NULL;
	w->slot = -1;
}

static int pool_empty(void)
{
	int i;

	for (i = 0; i < PLOOM_WORKER_MAX; i++)
		if (pool.worker[i])
			return 0;
	return 1;
}

void ploom_worker_kill_all(void)
{
	int i;

	for (i = 0; i < PLOOM_WORKER_MAX; i++) {
		pid_t pid = (pid_t)pool.pid[i];
		if (pid > 0)
			kill(pid, SIGKILL);
	}
}

/* ---- the process ---- */

/* python3 in the directory of PROG, malloc'd, if it is executable; else
 * NULL (also when out of memory). */
static char *python_beside(const char *prog)
{
	const char *slash = prog ? strrchr(prog, '/') : NULL;
	char *path = NULL;

	if (!slash)
		return NULL;
	if (asprintf(&path, "%.*spython3", (int)(slash - prog + 1), prog) < 0)
		return NULL;
	if (access(path, X_OK) == 0)
		return path;
	free(path);
	return NULL;
}

char *ploom_worker_default_python(void)
{
	const char *env = getenv("PLOOM_PYTHON");
	char exe[PATH_MAX], *path = NULL;
	ssize_t n;

	if (env && *env)
		return strdup(env);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		path = python_beside(exe);
	}
	/* A manylinux wheel (auditwheel) installs each utility in bin/ as a
	 * script that runs the program from site-packages, where the bundled
	 * libraries are, passing its own path as argv[0]: the environment's
	 * python3 is beside that path, not beside the program. */
	if (!path)
		path = python_beside(program_invocation_name);
	return path ? path : strdup("python3");
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads the next line into *line and *len (without '\n'), waiting at most
 * until deadline (now_ms() clock, 0: forever).  Returns 1, 0 at end of
 * file, -2 on timeout, -3 when interrupted, -1 on a read error (errno
 * set). */
/* Takes the next whole line already read, if any: returns 1 with *line
 * and *len (without '\n'), else 0. */
static int take_line(struct linebuf *lb, const char **line, size_t *len)
{
	size_t from = lb->start + lb->scanned;
	char *nl = lb->len > from ? memchr(lb->data + from, '\n', lb->len - from) : NULL;

	if (!nl) {
		lb->scanned = lb->len - lb->start;
		return 0;
	}
	*line = lb->data + lb->start;
	*len = (size_t)(nl - *line);
	lb->start = (size_t)(nl - lb->data) + 1;
	lb->scanned = 0;
	return 1;
}

/* Moves the unread bytes to the front and makes room for at least 4096
 * more.  Returns 0, or -1 with errno ENOMEM. */
static int make_room(struct linebuf *lb)
{
	if (lb->start) {
		memmove(lb->data, lb->data + lb->start, lb->len - lb->start);
		lb->len -= lb->start;
		lb->start = 0;
	}
	if (lb->cap - lb->len < 4096) {
		size_t cap = lb->cap ? 2 * lb->cap : 65536;
		char *p = realloc(lb->data, cap);
		if (!p) {
			errno = ENOMEM;
			return -1;
		}
		lb->data = p;
		lb->cap = cap;
	}
	return 0;
}

static int read_line(struct linebuf *lb, int fd, long deadline, const char **line,
		     size_t *len, const volatile sig_atomic_t *interrupted)
{
	for (;;) {
		ssize_t n;

		if (take_line(lb, line, len))
			return 1;
		if (make_room(lb) < 0)
			return -1;
		if (deadline) {
			struct pollfd pfd = {fd, POLLIN, 0};
			long left = deadline - now_ms();
			int r;
			if (left <= 0)
				return -2;
			r = poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left);
			if (r < 0 && errno == EINTR && interrupted && *interrupted)
				return -3;
			if (r < 0 && errno != EINTR)
				return -1;
			if (r <= 0)
				continue;
		}
		n = read(fd, lb->data + lb->len, lb->cap - lb->len);
		if (n < 0) {
			if (errno == EINTR && interrupted && *interrupted)
				return -3;
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			return 0;
		lb->len += (size_t)n;
	}
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* A child reaped by reap_orphans that is one of our workers keeps its
 * status for its own reap().  Returns 1 if it was one. */
static int note_reaped(pid_t pid, int status)
{
	int i;

	for (i = 0; i < PLOOM_WORKER_MAX; i++) {
		struct ploom_worker *w = pool.worker[i];
		if (w && w->pid == pid && !w->reaped) {
			pool.pid[i] = 0;
			w->reaped = 1;
			w->reaped_status = status;
			return 1;
		}
	}
	return 0;
}

/* 1 when pid is a worker of this process that has not been reaped. */
static int is_live_worker(long pid)
{
	int i;

	for (i = 0; i < PLOOM_WORKER_MAX; i++) {
		const struct ploom_worker *w = pool.worker[i];
		if (w && (long)w->pid == pid && !w->reaped)
			return 1;
	}
	return 0;
}

/* Kills (SIGKILL) the child pid unless it is a live worker.  Returns 1 if
 * it is another child, killed or already a zombie, else 0. */
static int kill_orphan(long pid)
{
	if (pid <= 0 || is_live_worker(pid))
		return 0;
	(void)kill((pid_t)pid, SIGKILL);
	return 1;
}

/* This process's children file (/proc/PID/task/PID/children: a
 * single-threaded process's children are its main thread's), opened once
 * for as long as it has workers: it is read after every schedule, and
 * reading it again costs a fraction of opening it.  Returns its descriptor,
 * -1 when the kernel has no such file. */
static int open_children(void)
{
	char path[64];

	/* a fork of ours would read its parent's */
	if (pool.children_fd >= 0 && pool.children_owner == getpid())
		return pool.children_fd;
	close_fd(&pool.children_fd);
	pool.children_owner = getpid();
	snprintf(path, sizeof(path), "/proc/self/task/%ld/children", (long)pool.children_owner);
	pool.children_fd = open(path, O_RDONLY | O_CLOEXEC);
	return pool.children_fd;
}

/* kill_orphans() by /proc/PID/stat, for a kernel without the children
 * file: reads every process's parent, so it is dear. */
static int kill_orphans_by_scan(void)
{
	DIR *proc = opendir("/proc");
	struct dirent *e;
	long self = (long)getpid();
	int n = 0;

	if (!proc)
		return -1;
	/* one thread reads this directory stream: readdir() is safe here, and
	 * readdir_r() is deprecated */
	/* cppcheck-suppress readdirCalled */
	while ((e = readdir(proc))) {
		char path[300], buf[512], *paren;
		long pid, ppid;
		FILE *f;

		pid = strtol(e->d_name, &paren, 10);
		if (pid <= 0 || *paren)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		f = fopen(path, "re");
		if (!f)
			continue;
		/* PID (COMM) STATE PPID ...: COMM may hold spaces and ')' */
		buf[0] = '\0';
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
		paren = strrchr(buf, ')');
		if (paren && sscanf(paren + 1, " %*c %ld", &ppid) == 1 && ppid == self)
			n += kill_orphan(pid);
	}
	closedir(proc);
	return n;
}

/* Kills every child of this process that is not a live worker: as their
 * subreaper (see ploom_worker_start), this process inherits whatever a
 * schedule left behind once the schedule's process is gone, a program in
 * a session of its own included, which neither the kill of the schedule's
 * process group nor a parent-death signal reaches.  Returns how many such
 * children there were (0: only workers are left), or -1 when the kernel
 * cannot tell; `scan` allows the dear way. */
static int kill_orphans(int scan)
{
	int fd = open_children(), n = 0;
	off_t off = 0;

	if (fd < 0)
		return scan ? kill_orphans_by_scan() : -1;
	for (;;) {
		char buf[4096], *p, *next, *end;
		ssize_t len = pread(fd, buf, sizeof(buf) - 1, off);

		if (len < 0 && errno == EINTR)
			continue;
		if (len < 0)
			return scan ? kill_orphans_by_scan() : -1;
		if (len == 0)
			return n;
		buf[len] = '\0';
		/* "PID PID ... ": a chunk may end inside a pid, so it is taken
		 * up to its last space, where the next chunk starts */
		end = strrchr(buf, ' ');
		if (!end)
			return n;
		*end = '\0';
		for (p = buf;; p = next) {
			long pid = strtol(p, &next, 10);
			if (next == p)
				break;
			n += kill_orphan(pid);
		}
		off += end + 1 - buf;
	}
}

/* Kills and reaps the children of this process that are not its workers
 * (kill_orphans), again until none is left, since a killed one's own
 * children come to us in turn.  Bounded: waits at most `ms` for them to
 * die.  The workers that die meanwhile keep their status for their own
 * reap().  `scan`: see kill_orphans; without it, a kernel that cannot list
 * the children makes this only reap those that are dead already. */
static void reap_orphans(long ms, int scan)
{
	long deadline = now_ms() + ms;

	for (;;) {
		int status, n;
		pid_t r = waitpid(-1, &status, WNOHANG | __WALL);
		struct timespec ts = {0, 100 * 1000};

		if (r > 0) {
			note_reaped(r, status);
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return; /* no child at all */
		n = kill_orphans(scan);
		if (n <= 0 || now_ms() >= deadline)
			return;
		nanosleep(&ts, NULL);
	}
}

/* Waits for the worker up to ms milliseconds, then kills it; fills
 * *status.  Returns 0, or -1 if it was not our child. */
static int reap(struct ploom_worker *w, long ms, int *status)
{
	long deadline = now_ms() + ms, pause_ns = 100 * 1000;
	pid_t r;

	if (w->pid <= 0)
		return -1;
	for (;;) {
		if (w->reaped) {
			*status = w->reaped_status;
			r = w->pid;
			break;
		}
		r = waitpid(w->pid, status, WNOHANG);
		if (r == w->pid || (r < 0 && errno != EINTR))
			break;
		if (r == 0 && now_ms() >= deadline) {
			kill(w->pid, SIGKILL);
			while ((r = waitpid(w->pid, status, 0)) < 0 && errno == EINTR)
				;
			break;
		}
		if (r == 0) {
			/* a worker told to end does so within a few ms: look
			 * soon, then less often, up to every 5 ms */
			struct timespec ts = {0, pause_ns};
			nanosleep(&ts, NULL);
			if (pause_ns < 5 * 1000 * 1000)
				pause_ns *= 2;
		}
	}
	w->pid = -1;
	pool_remove(w);
	reap_orphans(1000, 1);
	return r > 0 ? 0 : -1;
}

/* Describes how the worker ended, after it closed its record pipe early. */
static int worker_died(struct ploom_worker *w, const char *when, struct ploom_err *err)
{
	int status = 0;

	close_fd(&w->cmd_fd);
	if (reap(w, 2000, &status) < 0)
		return ploom_err_set(err, PLOOM_ERR_WORKER, "the worker died %s", when);
	if (WIFSIGNALED(status))
		return ploom_err_set(err, PLOOM_ERR_WORKER,
				     "the worker died %s (killed by signal %d)", when,
				     WTERMSIG(status));
	return ploom_err_set(err, PLOOM_ERR_WORKER, "the worker died %s (exit status %d)",
			     when, WEXITSTATUS(status));
}

/* Reads the worker's next record into *line and *len (read_line()).
 * Returns 1, or -2 when the deadline passed (err untouched: the caller
 * knows what it waited for); else fills err (interrupted, a read error,
 * or the worker died `when`) and returns -1. */
static int read_record(struct ploom_worker *w, long deadline, const char *when,
		       const char **line, size_t *len, struct ploom_err *err)
{
	int r = read_line(&w->lb, w->rec_fd, deadline, line, len, w->interrupted);

	if (r == 1 || r == -2)
		return r;
	if (r == -3)
		return ploom_err_set(err, PLOOM_ERR_INTERRUPTED, "interrupted");
	if (r < 0)
		return ploom_err_set(err, PLOOM_ERR_WORKER, "cannot read from the worker: %s",
				     strerror(errno));
	return worker_died(w, when, err);
}

/* Appends --OPTION=MOD to argv at *argc for each of the n modules, each
 * a malloc'd string; argv[*argc] stays NULL after the last one made.
 * Returns 0, or -1 with err filled: a name that is not one (naming it
 * and what the option does with it), or out of memory. */
static int add_module_args(char **argv, size_t *argc, const char *option,
			   const char *const *modules, size_t n, struct ploom_err *err)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const char *problem = ploom_module_problem(modules[i]);
		if (problem)
			return ploom_err_set(err, PLOOM_ERR_INPUT, "cannot %s module '%.200s': %s",
					     option, modules[i], problem);
		if (asprintf(&argv[*argc], "--%s=%s", option, modules[i]) < 0) {
			argv[*argc] = NULL;
			return ploom_err_oom(err);
		}
		(*argc)++;
	}
	return 0;
}

/* A replay's --search-cwd=DIR and --import-path=DIR... (opts'
 * search_cwd and import_paths).  Returns 0, or -1 out of memory. */
static int add_path_args(char **argv, size_t *argc, const struct ploom_worker_opts *opts,
			 struct ploom_err *err)
{
	size_t i;

	if (opts->search_cwd) {
		if (asprintf(&argv[*argc], "--search-cwd=%s", opts->search_cwd) < 0) {
			argv[*argc] = NULL;
			return ploom_err_oom(err);
		}
		(*argc)++;
	}
	for (i = 0; i < opts->nimport_paths; i++) {
		if (asprintf(&argv[*argc], "--import-path=%s", opts->import_paths[i]) < 0) {
			argv[*argc] = NULL;
			return ploom_err_oom(err);
		}
		(*argc)++;
	}
	return 0;
}

/* The `points` line of keys[0..n) (event.h) in a memory file of its own
 * at offset 0, for the worker's fd 5: written whole before the worker
 * starts, so that neither side waits for the other however long it is.
 * Returns 0 and *fd, or -1 with err filled. */
static int points_file(int *fd, const char *const *keys, size_t n, struct ploom_err *err)
{
	struct ploom_buf b = {0};
	int r;

	*fd = memfd_create("ploom-plain-points", MFD_CLOEXEC);
	if (*fd < 0)
		return ploom_err_set(err, PLOOM_ERR_WORKER,
				     "cannot hand the plain points to the worker: %s", strerror(errno));
	ploom_enc_points(&b, keys, n);
	r = ploom_buf_flush_fd(&b, *fd);
	ploom_buf_release(&b);
	if (r < 0 || lseek(*fd, 0, SEEK_SET) < 0)
		return ploom_err_set(err, PLOOM_ERR_WORKER,
				     "cannot hand the plain points to the worker: %s", strerror(errno));
	return 0;
}

/* A worker of opts->target not started yet, NULL when out of memory (its
 * target too: the caller checks it, and frees the worker either way). */
static struct ploom_worker *worker_new(const struct ploom_worker_opts *opts)
{
	struct ploom_worker *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->pid = -1;
	w->slot = -1;
	w->cmd_fd = w->rec_fd = -1;
	w->target = strdup(opts->target);
	w->interrupted = opts->interrupted;
	return w;
}

/* The worker's --expect, --expect-blob and --expect-root options, each
 * malloc'd into its own, or NULL when opts has none.  Returns 0, or -1
 * with err filled (out of memory; those made are the caller's to free). */
static int expect_args(char **expect, char **blob, char **root,
		       const struct ploom_worker_opts *opts, struct ploom_err *err)
{
	if (opts->expect_file && asprintf(expect, "--expect=%s", opts->expect_file) < 0) {
		*expect = NULL;
		return ploom_err_oom(err);
	}
	if (opts->expect_blob && asprintf(blob, "--expect-blob=%s", opts->expect_blob) < 0) {
		*blob = NULL;
		return ploom_err_oom(err);
	}
	if (opts->expect_root && asprintf(root, "--expect-root=%s", opts->expect_root) < 0) {
		*root = NULL;
		return ploom_err_oom(err);
	}
	return 0;
}

/* The worker's --plain-points option, malloc'd into *points (NULL when
 * opts asks for none), and the file of the keys it names, open in
 * *points_fd (-1 when none).  Returns 0, or -1 with err filled (a bad
 * key, too many, out of memory; what is made is the caller's to free). */
static int plain_points_arg(char **points, int *points_fd, const struct ploom_worker_opts *opts,
			    struct ploom_err *err)
{
	size_t i;

	if (opts->plain_all_points && !opts->nplain_points) {
		*points = strdup("--plain-points=*");
		if (!*points)
			return ploom_err_oom(err);
	} else if (opts->nplain_points) {
		for (i = 0; i < opts->nplain_points; i++) {
			if (ploom_plain_point_problem(opts->plain_points[i]))
				return ploom_err_set(err, PLOOM_ERR_INPUT, "bad site key '%.220s'",
						     opts->plain_points[i]);
		}
		if (opts->nplain_points > PLOOM_PLAIN_POINTS_MAX)
			return ploom_err_set(err, PLOOM_ERR_INPUT, "more than %d plain points",
					     PLOOM_PLAIN_POINTS_MAX);
		if (points_file(points_fd, opts->plain_points, opts->nplain_points, err) < 0)
			return -1;
		*points = strdup(opts->plain_all_points ? "--plain-points=*-" : "--plain-points=-");
		if (!*points)
			return ploom_err_oom(err);
	}
	return 0;
}

/* Waits for the started worker w: the errno of its failed exec on ep (the
 * read end of the pipe ploom_spawn_child() writes it to), else its hello, read
 * into w->hello.  Returns 0, or -1 with err filled. */
static int await_hello(struct ploom_worker *w, int ep, const struct ploom_worker_opts *opts,
		       struct ploom_err *err)
{
	const char *line;
	size_t len;
	ssize_t n;
	int e = 0;

	while ((n = read(ep, &e, sizeof(e))) < 0 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof(e)) {
		int status;
		reap(w, 1000, &status);
		return ploom_err_set(err, PLOOM_ERR_WORKER, "cannot run '%s': %s", opts->python,
				     strerror(e));
	}
	/* no deadline: -2 cannot come */
	if (read_record(w, 0, "before it loaded the scenario", &line, &len, err) < 0)
		return -1;
	return ploom_hello_parse(&w->hello, line, len, opts->target, err);
}

int ploom_worker_start(struct ploom_worker **out, const struct ploom_worker_opts *opts,
		       struct ploom_err *err)
{
	struct ploom_worker *w = NULL;
	int cmd[2] = {-1, -1}, rec[2] = {-1, -1}, ep[2] = {-1, -1}, points_fd = -1;
	char **argv = NULL, *expect = NULL, *blob = NULL, *root = NULL, *points = NULL;
	char **env = NULL;
	size_t i, argc = 0, first_module = 0, owned_end = 0;
	int e = 0, ret = -1;
	pid_t parent = getpid();
	const char *template_path = getenv(PLOOM_TEMPLATE_ENV);

	*out = NULL;
	w = worker_new(opts);
	env = ploom_spawn_env(opts->hash_seed);
	if (!w || !w->target || !env) {
		ploom_err_oom(err);
		goto done;
	}
	if (pipe2(cmd, O_CLOEXEC) < 0 || pipe2(rec, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0) {
		ploom_err_set(err, PLOOM_ERR_WORKER, "cannot create a pipe: %s", strerror(errno));
		goto done;
	}
	if (expect_args(&expect, &blob, &root, opts, err) < 0)
		goto done;
	/* PYTHON -P -m ploom._worker [--expect=FILE [--expect-blob=OID] [--expect-root=DIR]
	 *     [--search-cwd=DIR] [--import-path=DIR]...] [--patch=MOD]... [--instrument=MOD]...
	 *     [--patch-project] [--instrument-scenario] [--timeouts=any] [--plain-points=*|-|*-] TARGET
	 * -P: the folder the utility runs in is not on sys.path, so that an
	 * inspect.py or a ploom/ there cannot run before the worker's checks;
	 * the worker adds what a module target needs itself. */
	if (plain_points_arg(&points, &points_fd, opts, err) < 0)
		goto done;
	argv = calloc(opts->npatch + opts->ninstrument + opts->nimport_paths + 14, sizeof(*argv));
	if (!argv) {
		ploom_err_oom(err);
		goto done;
	}
	argv[argc++] = (char *)opts->python;
	argv[argc++] = (char *)"-P";
	argv[argc++] = (char *)"-m";
	argv[argc++] = (char *)"ploom._worker";
	if (expect)
		argv[argc++] = expect;
	if (expect && blob)
		argv[argc++] = blob;
	if (expect && root)
		argv[argc++] = root;
	first_module = argc;
	e = (expect && add_path_args(argv, &argc, opts, err) < 0) ||
	    add_module_args(argv, &argc, "patch", opts->patch, opts->npatch, err) < 0 ||
	    add_module_args(argv, &argc, "instrument", opts->instrument, opts->ninstrument,
			    err) < 0;
	owned_end = argc;
	if (e)
		goto done;
	if (opts->patch_project)
		argv[argc++] = (char *)"--patch-project";
	if (opts->instrument_scenario)
		argv[argc++] = (char *)"--instrument-scenario";
	if (opts->timeouts == PLOOM_TIMEOUTS_ANY)
		argv[argc++] = (char *)"--timeouts=any";
	if (points)
		argv[argc++] = points;
	argv[argc] = (char *)opts->target;
	/* orphans of the worker and of its schedules come to us, see
	 * kill_orphans */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (pool_add(w) < 0) {
		ploom_err_set(err, PLOOM_ERR_WORKER,
			      "cannot start the worker: %d run already, the most at once",
			      PLOOM_WORKER_MAX);
		goto done;
	}
	w->pid = fork();
	if (w->pid < 0) {
		ploom_err_set(err, PLOOM_ERR_WORKER, "cannot start the worker: %s", strerror(errno));
		goto done;
	}
	if (w->pid == 0)
		ploom_spawn_child(opts->python, argv, env, cmd[0], rec[1], ep[1], points_fd, parent,
				  template_path);
	pool_arm(w, w->pid);
	close_fd(&cmd[0]);
	close_fd(&rec[1]);
	close_fd(&ep[1]);
	w->cmd_fd = cmd[1];
	w->rec_fd = rec[0];
	cmd[1] = rec[0] = -1;

	if (await_hello(w, ep[0], opts, err) < 0)
		goto done;
	*out = w;
	w = NULL;
	ret = 0;
done:
	close_fd(&cmd[0]);
	close_fd(&cmd[1]);
	close_fd(&rec[0]);
	close_fd(&rec[1]);
	close_fd(&ep[0]);
	close_fd(&ep[1]);
	close_fd(&points_fd);
	ploom_spawn_env_free(env);
	/* the --search-cwd, --import-path, --patch and --instrument strings
	 * are ours, the rest
	 * borrowed; the first one not made is NULL */
	for (i = first_module; argv && i < owned_end; i++)
		free(argv[i]);
	free(argv);
	free(expect);
	free(blob);
	free(root);
	free(points);
	ploom_worker_free(w);
	return ret;
}

const struct ploom_hello *ploom_worker_hello(const struct ploom_worker *w)
{
	return &w->hello;
}

pid_t ploom_worker_pid(const struct ploom_worker *w)
{
	return w->pid;
}

static int send_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Writes the `run` command.  Returns 0, or -1 with err filled. */
static int send_cmd(struct ploom_worker *w, const struct ploom_run_cmd *rc, struct ploom_err *err)
{
	struct ploom_buf cmd = {0};
	struct ploom_run_cmd capped = *rc;
	int ret = -1;

	/* no schedule goes past PLOOM_MAX_STEPS, so that its trace can be
	 * read back (a trace recorded before the cap replays under it too) */
	if (capped.max_steps <= 0 || capped.max_steps > PLOOM_MAX_STEPS)
		capped.max_steps = PLOOM_MAX_STEPS;
	rc = &capped;

	if (w->pid <= 0 || w->cmd_fd < 0) {
		ploom_err_set(err, PLOOM_ERR_WORKER, "the worker is not running");
		goto done;
	}
	ploom_enc_run(&cmd, rc);
	if (send_all(w->cmd_fd, cmd.data, cmd.len) < 0) {
		if (errno == EPIPE)
			worker_died(w, "before a schedule", err);
		else
			ploom_err_set(err, PLOOM_ERR_WORKER, "cannot write to the worker: %s",
				      strerror(errno));
		goto done;
	}
	ret = 0;
done:
	ploom_buf_release(&cmd);
	return ret;
}

int ploom_worker_run(struct ploom_worker *w, struct ploom_run *out, const int *choices,
		     size_t n, long max_steps, long timeout_ms, struct ploom_err *err)
{
	struct ploom_run_cmd rc = {.max_steps = max_steps, .timeout_ms = timeout_ms,
				  .choices = (int *)choices, .nchoices = n};

	return ploom_worker_run_cmd(w, out, &rc, err);
}

int ploom_worker_run_cmd(struct ploom_worker *w, struct ploom_run *out,
			 const struct ploom_run_cmd *cmd, struct ploom_err *err)
{
	struct ploom_run_parser p;
	const char *line;
	size_t len;
	long deadline = 0, timeout_ms = cmd->timeout_ms;
	int r, ret = -1;

	ploom_run_parser_init(&p, out, timeout_ms);
	if (w->in_run) {
		ploom_err_set(err, PLOOM_ERR_INPUT, "the worker is running a schedule already");
		goto done;
	}
	if (send_cmd(w, cmd, err) < 0)
		goto done;
	if (timeout_ms > 0)
		deadline = now_ms() + timeout_ms + WORKER_GRACE_MS;
	for (;;) {
		r = read_record(w, deadline, "during a schedule", &line, &len, err);
		if (r == -2) {
			kill(w->pid, SIGKILL);
			ploom_err_set(err, PLOOM_ERR_WORKER,
				      "the worker did not finish a schedule in %ld ms",
				      timeout_ms + WORKER_GRACE_MS);
			goto done;
		}
		if (r < 0)
			goto done;
		r = ploom_run_parser_line(&p, line, len, err);
		if (r < 0)
			goto done;
		if (r == 1)
			break;
	}
	ret = 0;
	/* the schedule's process is gone: what it left behind is ours now,
	 * and goes before the next schedule (cheap when it left nothing) */
	reap_orphans(1000, 0);
done:
	return ret;
}

int ploom_worker_send_cmd(struct ploom_worker *w, const struct ploom_run_cmd *cmd,
			  struct ploom_err *err)
{
	if (w->in_run)
		return ploom_err_set(err, PLOOM_ERR_INPUT,
				     "the worker is running a schedule already");
	if (send_cmd(w, cmd, err) < 0)
		return -1;
	ploom_run_release(&w->pending);
	ploom_run_parser_init(&w->parser, &w->pending, cmd->timeout_ms);
	w->timeout_ms = cmd->timeout_ms;
	w->deadline = cmd->timeout_ms > 0 ? now_ms() + cmd->timeout_ms + WORKER_GRACE_MS : 0;
	w->in_run = 1;
	return 0;
}

int ploom_worker_send_run(struct ploom_worker *w, const int *choices, size_t n,
			  long max_steps, long timeout_ms, struct ploom_err *err)
{
	struct ploom_run_cmd rc = {.max_steps = max_steps, .timeout_ms = timeout_ms,
				  .choices = (int *)choices, .nchoices = n};

	return ploom_worker_send_cmd(w, &rc, err);
}

int ploom_worker_fd(const struct ploom_worker *w)
{
	return w->rec_fd;
}

int ploom_worker_busy(const struct ploom_worker *w)
{
	return w->in_run;
}

int ploom_worker_read_run(struct ploom_worker *w, struct ploom_run *out,
			  struct ploom_err *err)
{
	const char *line;
	size_t len;
	int r;

	if (!w->in_run)
		return ploom_err_set(err, PLOOM_ERR_INPUT, "the worker runs no schedule");
	for (;;) {
		struct pollfd pfd = {w->rec_fd, POLLIN, 0};
		ssize_t n;

		if (take_line(&w->lb, &line, &len)) {
			r = ploom_run_parser_line(&w->parser, line, len, err);
			if (r < 0)
				break;
			if (r == 1) {
				w->in_run = 0;
				ploom_run_move(out, &w->pending);
				/* as in ploom_worker_run() */
				reap_orphans(1000, 0);
				return 1;
			}
			continue;
		}
		r = poll(&pfd, 1, 0);
		if (r < 0 && errno == EINTR)
			return 0;
		if (r < 0) {
			ploom_err_set(err, PLOOM_ERR_WORKER, "cannot read from the worker: %s",
				      strerror(errno));
			break;
		}
		if (r == 0) {
			if (w->deadline && now_ms() >= w->deadline) {
				kill(w->pid, SIGKILL);
				ploom_err_set(err, PLOOM_ERR_WORKER,
					      "the worker did not finish a schedule in %ld ms",
					      w->timeout_ms + WORKER_GRACE_MS);
				break;
			}
			return 0;
		}
		if (make_room(&w->lb) < 0) {
			ploom_err_oom(err);
			break;
		}
		n = read(w->rec_fd, w->lb.data + w->lb.len, w->lb.cap - w->lb.len);
		if (n < 0 && errno == EINTR)
			return 0;
		if (n < 0) {
			ploom_err_set(err, PLOOM_ERR_WORKER, "cannot read from the worker: %s",
				      strerror(errno));
			break;
		}
		if (n == 0) {
			worker_died(w, "during a schedule", err);
			break;
		}
		w->lb.len += (size_t)n;
	}
	/* the worker is unusable now, as after a failed ploom_worker_run */
	w->in_run = 0;
	ploom_run_release(&w->pending);
	return -1;
}

int ploom_worker_trace(struct ploom_trace **out, const struct ploom_worker *w,
		       const char *hash_seed, const struct ploom_config *config,
		       struct ploom_run *run, struct ploom_err *err)
{
	struct ploom_trace *t = ploom_trace_new();
	const struct ploom_hello *h = &w->hello;

	*out = NULL;
	if (!t)
		return ploom_err_oom(err);
	t->scenario.target = strdup(w->target);
	t->scenario.module = strdup(h->module);
	t->scenario.qualname = strdup(h->qualname);
	t->scenario.file = ploom_strdup(h->file);
	t->project_root = ploom_strdup(h->root);
	t->python.implementation = strdup(h->implementation);
	t->python.version = strdup(h->python_version);
	t->python.gil = h->gil;
	t->hash_seed = strdup(hash_seed);
	t->config = *config;
	t->config.kind = ploom_config_kind(config);
	/* first: the trace's own copies of the lists the `=` shared, which
	 * ploom_trace_free() may then free */
	if (ploom_config_own_lists(&t->config, config, err) < 0 ||
	    !t->scenario.target || !t->scenario.module || !t->scenario.qualname ||
	    (h->file && !t->scenario.file) || (h->root && !t->project_root) ||
	    !t->python.implementation ||
	    !t->python.version || !t->hash_seed) {
		ploom_trace_free(t);
		return ploom_err_oom(err);
	}
	if (h->nsources) {
		t->module_files = calloc(h->nsources, sizeof(*t->module_files));
		for (size_t i = 0; t->module_files && i < h->nsources; i++) {
			if (!(t->module_files[i] = strdup(h->sources[i])))
				break;
			t->nmodule_files++;
		}
		if (t->nmodule_files != h->nsources) {
			ploom_trace_free(t);
			return ploom_err_oom(err);
		}
	}
	ploom_run_move(&t->run, run);
	*out = t;
	return 0;
}

int ploom_worker_stop(struct ploom_worker *w, struct ploom_err *err)
{
	int status = 0, ret = 0;

	if (!w)
		return 0;
	if (w->cmd_fd >= 0) {
		/* a failed write means it is gone already; reap tells */
		if (send_all(w->cmd_fd, "quit\n", 5) < 0)
			ret = -1;
		close_fd(&w->cmd_fd);
	}
	if (w->pid > 0) {
		if (reap(w, 5000, &status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			ret = -1;
	}
	if (ret < 0)
		ploom_err_set(err, PLOOM_ERR_WORKER, "the worker did not exit cleanly");
	ploom_worker_free(w);
	return ret;
}

void ploom_worker_free(struct ploom_worker *w)
{
	int status;

	if (!w)
		return;
	close_fd(&w->cmd_fd);
	close_fd(&w->rec_fd);
	if (w->pid > 0) {
		/* killed here: the handler must not, once its pid is free */
		pool_arm(w, 0);
		if (!w->reaped) {
			kill(w->pid, SIGKILL);
			while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
				;
		}
		pool_remove(w);
		reap_orphans(1000, 1);
	}
	pool_remove(w);
	if (pool_empty())
		close_fd(&pool.children_fd);
	ploom_run_release(&w->pending);
	free(w->lb.data);
	ploom_hello_release(&w->hello);
	free(w->target);
	free(w);
}
