/* worker-spawn.h - the start of a worker process, private to the worker
 * module (worker.c, worker-spawn.c). */
#ifndef PLOOM_WORKER_SPAWN_H
#define PLOOM_WORKER_SPAWN_H

#include <sys/types.h>

/* The worker template's socket (python/ploom/_template.py), which ploom's
 * Python API sets for the utilities it runs: an absolute path, or none. */
#define PLOOM_TEMPLATE_ENV "PLOOM_WORKER_TEMPLATE"

/* The environment every worker gets: this process's, with
 * PYTHONHASHSEED=hash_seed, LD_BIND_NOW=1 and no PLOOM_TEMPLATE_ENV.  NULL
 * when out of memory; freed with ploom_spawn_env_free(). */
char **ploom_spawn_env(const char *hash_seed);
void ploom_spawn_env_free(char **env);

/* In the child just forked to be the worker: puts the command pipe's
 * read end cmd_r at fd 0, the record pipe's write end rec_w at 3, the exec
 * error pipe's err_w at 4 (close-on-exec: the errno of a failed exec is
 * written there) and the plain points (-1: none) at 5, closes the rest,
 * then asks the worker template at template_path (NULL: none) for the
 * worker, and exec's `python argv` in envp when it cannot or will not.
 * Dies when this process's parent is no longer `parent`. */
void ploom_spawn_child(const char *python, char *const argv[], char *const envp[], int cmd_r,
		       int rec_w, int err_w, int points, pid_t parent, const char *template_path)
	__attribute__((noreturn));

#endif
