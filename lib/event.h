/* event.h - the worker protocol: records that flow between ploom's C
 * utilities and the Python worker process that runs schedules.
 *
 * Overview
 * --------
 * A utility (ploom-explore, ploom-run-one, ...) starts one worker:
 *
 *     PYTHON -m ploom._worker TARGET
 *
 * with PYTHONHASHSEED set, fd 0 carrying commands to the worker and fd 3
 * carrying records back.  The worker imports the scenario once, then forks
 * one child per schedule.  The child runs the schedule and stores its
 * records, as they happen, in memory it shares with the worker (so a crash
 * or a kill loses nothing already recorded, and the utility is not woken
 * once per step); after reaping the child the worker sends them on fd 3,
 * then the closing records.  A child with more records than that memory
 * holds writes the overflow to fd 3 itself, in order.  Everything is line
 * based: one record per line, fields separated by one space.
 *
 * Field types
 *   int     decimal, may be negative
 *   word    [a-z_-]+, or an object name such as cell#0, lock#2, thread#1, or "-"
 *   list    comma-separated ints, or "-" for the empty list
 *   str     "=" followed by the bytes of the string with '%', ' ', every byte
 *           below 0x21 and 0x7f written as %XX (two upper-case hex digits);
 *           other bytes, UTF-8 included, are written as they are.  "=" alone
 *           is the empty string.  A str field may hold any byte, NUL included.
 *
 * Commands (utility -> worker, fd 0)
 *   run MAX_STEPS TIMEOUT_MS N C1 ... CN
 *       Run one schedule.  C1..CN are the task ids to pick at the first N
 *       branch points (steps where more than one task is enabled); past them
 *       the child takes the default choice: the task that ran the previous
 *       step if it is still enabled, else the lowest enabled id.
 *       MAX_STEPS bounds the steps of the schedule (0: no bound); TIMEOUT_MS
 *       is the wall-clock limit of the child (0: none).
 *   quit
 *       Exit.  End of file does the same.
 *
 * Records (worker or child -> utility, fd 3)
 *   hello VERSION IMPL PYVERSION GIL HASHSEED MODULE QUALNAME FILE
 *       Once, from the worker after it imported the scenario.
 *       VERSION int (PLOOM_PROTOCOL_VERSION); IMPL str ("cpython");
 *       PYVERSION str ("3.13.0"); GIL int (1 enabled, 0 disabled);
 *       HASHSEED str (the PYTHONHASHSEED it runs with); MODULE, QUALNAME,
 *       FILE str (FILE is the absolute source path, or "=" if unknown).
 *   error KIND MESSAGE
 *       From the worker instead of hello when it cannot load the scenario
 *       (KIND word: "load"), then the worker exits 2.  MESSAGE str.
 *   step INDEX TASK OP OBJECT ENABLED FLAGS
 *       The scheduler picked TASK for step INDEX (0, 1, 2, ...).  OP word:
 *       begin start join is_alive acquire release locked read write
 *       yield_now.  OBJECT word ("-" for begin and yield_now).  ENABLED list:
 *       the enabled tasks at that point, ascending.  FLAGS word: "-" or
 *       "nonblocking" (for acquire(blocking=False)).
 *   value INDEX TEXT
 *       repr() of what step INDEX read, wrote or returned (read, write,
 *       nonblocking acquire, locked, is_alive).  TEXT str, at most 200 bytes.
 *   outcome pass
 *   outcome failure TASK TYPE MESSAGE TRACEBACK
 *       An uncaught exception in TASK; TYPE str ("builtins.AssertionError"),
 *       MESSAGE str (str(exc)), TRACEBACK str (formatted, may be "=").
 *   outcome deadlock
 *       No task enabled while one is unfinished.  Followed by one
 *       `wait TASK OP OBJECT HOLDER` per unfinished task, HOLDER int being
 *       the task holding the lock waited for, or the thread joined, or -1.
 *   outcome step-limit LIMIT
 *       The schedule reached MAX_STEPS steps.
 *   outcome divergence INDEX MESSAGE
 *       The requested choice at step INDEX was not enabled.  MESSAGE str.
 *   exit HOW CODE
 *       From the worker once the child is reaped.  HOW word: "code" (CODE is
 *       the exit status), "signal" (CODE is the signal number), "timeout"
 *       (the worker killed the child after TIMEOUT_MS; CODE 0).
 *   output TEXT
 *       From the worker, optional: what the child wrote on stdout and
 *       stderr, at most 64 KiB.  TEXT str.
 *   done NSTEPS
 *       From the worker: the closing record of a run, with the number of
 *       step records the child sent.  A stream that stops before `done` is a
 *       worker that died, not a short run.
 *
 * A child that writes no outcome record and exits with a code did os._exit
 * or similar; one killed by a signal crashed.  The utilities turn those
 * into the outcomes "exit", "crash" and "timeout".
 *
 * Version rule: bump PLOOM_PROTOCOL_VERSION when a record changes meaning or
 * an old reader could not parse a new stream.  Worker and utilities ship
 * together, so a mismatch is an installation error.
 */
#ifndef PLOOM_EVENT_H
#define PLOOM_EVENT_H

#include <stddef.h>

#define PLOOM_PROTOCOL_VERSION 1

/* A growable byte buffer; the encoders append one whole line to it.
 * Zero-initialise, then release with ploom_buf_release(). */
struct ploom_buf {
	char *data;
	size_t len;
	size_t cap;
};

/* Frees the buffer's memory and zeroes it; safe on a zeroed buffer. */
void ploom_buf_release(struct ploom_buf *b);

/* Appends raw bytes / a formatted string.  Abort on out-of-memory: the
 * encoders run in forked children where there is nothing better to do. */
void ploom_buf_add(struct ploom_buf *b, const void *data, size_t len);
void ploom_buf_addf(struct ploom_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Appends " " then `s` (len bytes) in the str encoding above. */
void ploom_buf_add_str(struct ploom_buf *b, const char *s, size_t len);

/* Writes the whole buffer to fd (retrying on EINTR and short writes) and
 * empties it.  Returns 0, or -1 with errno set. */
int ploom_buf_flush_fd(struct ploom_buf *b, int fd);

/* Decodes one str field (without its leading '='... pass the field after
 * '=') of length len into a newly malloc'd buffer; *out_len receives the
 * decoded length; the result is NUL-terminated for convenience.  Returns
 * NULL on a malformed escape.  The caller frees the result. */
char *ploom_str_decode(const char *field, size_t len, size_t *out_len);

#endif
