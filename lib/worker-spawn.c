/* How a worker process comes to be: its environment, the child's exec of
 * the interpreter, and the worker template that may fork it instead
 * (python/ploom/_template.py).  A part of the worker module (worker.c). */
#include "worker-spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "worker.h"

extern char **environ;

char **ploom_spawn_env(const char *hash_seed)
{
	size_t n = 0, k = 0, i;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 3, sizeof(*env));
	if (!env)
		return NULL;
	/* the template's socket is the utility's, not the worker's */
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "PYTHONHASHSEED=", 15) && strncmp(environ[i], "LD_BIND_NOW=", 12) &&
		    strncmp(environ[i], PLOOM_TEMPLATE_ENV "=", sizeof(PLOOM_TEMPLATE_ENV)))
			env[k++] = environ[i];
	/* every forked schedule would otherwise resolve, again, each lazily
	 * bound symbol that the worker itself never called */
	env[k++] = (char *)"LD_BIND_NOW=1";
	if (asprintf(&env[k], "PYTHONHASHSEED=%s", hash_seed) < 0) {
		free(env);
		return NULL;
	}
	return env;
}

/* Sends all of data on the socket s, the descriptors fds (n of them)
 * with its first bytes.  Returns 0, or -1. */
static int send_with_fds(int s, const char *data, size_t len, const int *fds, size_t n)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 5)];
		struct cmsghdr align;
	} u;
	struct iovec iov = {(void *)data, len};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			   .msg_controllen = CMSG_SPACE(sizeof(int) * n)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	ssize_t sent;

	memset(u.buf, 0, sizeof(u.buf));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * n);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	while ((sent = sendmsg(s, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	if (sent < 0)
		return -1;
	data += sent;
	len -= (size_t)sent;
	while (len) {
		sent = send(s, data, len, MSG_NOSIGNAL);
		if (sent < 0 && errno == EINTR)
			continue;
		if (sent <= 0)
			return -1;
		data += sent;
		len -= (size_t)sent;
	}
	return 0;
}

/* The request python/_template.py reads: "ploom-template 1\n", the
 * body's length and "\n", then the body: the interpreter, the folder,
 * argc, each argument and each environment entry, every one ended by a
 * NUL.  malloc'd into *out, its length in *len; -1 when out of memory. */
static int template_request(char **out, size_t *len, const char *python, char *const argv[],
			    char *const envp[])
{
	char cwd[PATH_MAX], *req, *p;
	size_t body, argc = 0, i;
	int head;

	if (!getcwd(cwd, sizeof(cwd)))
		return -1;
	while (argv[argc])
		argc++;
	body = strlen(python) + 1 + strlen(cwd) + 1 + (size_t)snprintf(NULL, 0, "%zu", argc) + 1;
	for (i = 0; argv[i]; i++)
		body += strlen(argv[i]) + 1;
	for (i = 0; envp[i]; i++)
		body += strlen(envp[i]) + 1;
	head = snprintf(NULL, 0, "ploom-template 1\n%zu\n", body);
	req = malloc((size_t)head + body + 1);
	if (!req)
		return -1;
	p = req + sprintf(req, "ploom-template 1\n%zu\n", body);
	p += sprintf(p, "%s%c%s%c%zu%c", python, 0, cwd, 0, argc, 0);
	for (i = 0; argv[i]; i++)
		p = stpcpy(p, argv[i]) + 1;
	for (i = 0; envp[i]; i++)
		p = stpcpy(p, envp[i]) + 1;
	*len = (size_t)(p - req);
	*out = req;
	return 0;
}

/* Reads a line of at most size-1 bytes from s into buf.  Returns 0, or -1
 * (closed, an error, or no newline in time). */
static int read_reply(int s, char *buf, size_t size)
{
	size_t n = 0;

	while (n + 1 < size) {
		ssize_t r = read(s, buf + n, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		if (buf[n] == '\n') {
			buf[n] = '\0';
			return 0;
		}
		n++;
	}
	return -1;
}

/* In the worker's child, its descriptors in place (fd 0, 1, 2, 3 and, with
 * points, 5; fd 4 the exec error pipe): asks the worker template at path
 * (python/ploom/_template.py) for the worker.  Returns when the template
 * cannot or will not (the caller then exec's the interpreter); else
 * stays, as the stub of the worker the template forked, until that worker
 * ends, and ends as it did.  The utility's child, so killed by it, ends
 * the worker too: the template then kills it. */
static void try_template(const char *path, const char *python, char *const argv[],
			 char *const envp[], int has_points)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fds[5] = {0, 1, 2, 3, 5}, s, code;
	char *req = NULL, line[64];
	size_t len = 0;

	if (strlen(path) >= sizeof(a.sun_path))
		return;
	memcpy(a.sun_path, path, strlen(path) + 1);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return;
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    template_request(&req, &len, python, argv, envp) < 0 ||
	    send_with_fds(s, req, len, fds, has_points ? 5 : 4) < 0 ||
	    read_reply(s, line, sizeof(line)) < 0 || strncmp(line, "ok ", 3)) {
		free(req);
		close(s);
		return;
	}
	free(req);
	/* the worker has its own copies: the pipes must end when it does */
	close(0);
	close(1);
	close(2);
	close(3);
	close(4);
	if (has_points)
		close(5);
	if (read_reply(s, line, sizeof(line)) < 0)
		_exit(127);
	code = atoi(line + (line[0] == 's' ? 7 : 5));
	if (!strncmp(line, "signal ", 7) && code > 0 && code < 65) {
		struct rlimit none = {0, 0};
		setrlimit(RLIMIT_CORE, &none);
		signal(code, SIG_DFL);
		kill(getpid(), code);
	}
	_exit(code & 0xff);
}

/* The signal dispositions and mask a worker starts with, whichever way it
 * comes: exec'd by ploom_spawn_child(), or forked from the template that
 * ploom_worker_exec_template() starts. */
static void default_signals(void)
{
	sigset_t all;

	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
}

/* In the child between fork and exec: only async-signal-safe calls, but
 * in try_template(), which runs only in a child of a single-threaded
 * utility (worker.h), where the others are safe too. */
void ploom_spawn_child(const char *python, char *const argv[], char *const envp[], int cmd_r,
		       int rec_w, int err_w, int points, pid_t parent, const char *template_path)
{
	int e, has_points = points >= 0, first_closed = has_points ? 6 : 5;

	/* die with the utility; if it already died, do not run at all */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(127);
	setpgid(0, 0);
	default_signals();
	/* move the ends above the targets first so that dup2 never meets
	 * itself, then pin them at 0, 3, 4 and 5 (the plain points, if any) */
	cmd_r = fcntl(cmd_r, F_DUPFD, 10);
	rec_w = fcntl(rec_w, F_DUPFD, 10);
	err_w = fcntl(err_w, F_DUPFD_CLOEXEC, 10);
	if (has_points)
		points = fcntl(points, F_DUPFD, 10);
	if (cmd_r < 0 || rec_w < 0 || err_w < 0 || (has_points && points < 0))
		_exit(127);
	if (dup2(cmd_r, 0) < 0 || dup2(rec_w, 3) < 0 || dup3(err_w, 4, O_CLOEXEC) < 0 ||
	    (has_points && dup2(points, 5) < 0))
		_exit(127);
	if (close_range((unsigned)first_closed, ~0U, 0) < 0) {
		int fd;
		for (fd = first_closed; fd < 65536; fd++)
			close(fd);
	}
	/* absolute: PLOOM_WORKER_TEMPLATE=off names none */
	if (template_path && *template_path == '/')
		try_template(template_path, python, argv, envp, has_points);
	execvpe(python, argv, envp);
	e = errno;
	if (write(4, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

void ploom_spawn_env_free(char **env)
{
	size_t i;

	if (!env)
		return;
	for (i = 0; env[i]; i++)
		if (!strncmp(env[i], "PYTHONHASHSEED=", 15))
			free(env[i]);
	free(env);
}

int ploom_worker_exec_template(const char *python, const char *hash_seed, const char *path,
			       struct ploom_err *err)
{
	char **env = ploom_spawn_env(hash_seed), *python_arg = NULL;
	char *argv[7];

	if (!env || asprintf(&python_arg, "--python=%s", python) < 0) {
		python_arg = NULL;
		ploom_err_oom(err);
		goto fail;
	}
	argv[0] = (char *)python;
	argv[1] = (char *)"-P";
	argv[2] = (char *)"-m";
	argv[3] = (char *)"ploom._template";
	argv[4] = python_arg;
	argv[5] = (char *)path;
	argv[6] = NULL;
	/* what the forked workers inherit from the template */
	default_signals();
	/* it dies with the process that started it, and a Ctrl-C on the
	 * terminal is that process's to act on */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || setpgid(0, 0) < 0) {
		ploom_err_set(err, PLOOM_ERR_WORKER, "cannot start the worker template: %s",
			      strerror(errno));
		goto fail;
	}
	execvpe(python, argv, env);
	ploom_err_set(err, PLOOM_ERR_WORKER, "cannot run '%s': %s", python, strerror(errno));
fail:
	free(python_arg);
	ploom_spawn_env_free(env);
	return -1;
}
