/* fake.h - files and a stand-in worker for the C unit tests.
 *
 * The stand-in worker is a /bin/sh script that the tests pass as the
 * interpreter (struct ploom_worker_opts.python): it gets the same
 * arguments, descriptors and environment as `python -m ploom._worker`,
 * says hello with a given Python version and source file, and answers
 * every `run` command with the records in DIR/run.txt (which a test may
 * rewrite between runs), appending each command to DIR/commands.
 */
#ifndef PLOOM_TEST_FAKE_H
#define PLOOM_TEST_FAKE_H

/* A new empty directory /tmp/ploom-test-WHAT-XXXXXX; malloc'd path, the
 * caller frees it (after fake_dir_remove()).  Aborts on failure. */
char *fake_dir(const char *what);

/* Removes the directory and the files in it (not subdirectories). */
void fake_dir_remove(const char *dir);

/* Writes text to DIR/NAME (mode 0755 when executable) and returns the
 * malloc'd path.  Aborts on failure. */
char *fake_write(const char *dir, const char *name, const char *text, int executable);

/* Writes the stand-in worker DIR/python (see above), whose hello reports
 * python_version ("3.13.0") and file (the scenario's source, "" for
 * unknown).  Returns its malloc'd path. */
char *fake_worker(const char *dir, const char *python_version, const char *file);

/* DIR/NAME's contents, malloc'd, or NULL if it cannot be read. */
char *fake_read(const char *dir, const char *name);

#endif
