"""pytest --ploom runs a test in pytest's own process first, and explores it
in ploom's worker only when that first run shows there is something to
explore.

Why that is exact.  A schedule orders the steps of two or more tasks; a
run with one task has one order, so its outcome is the verdict of the
whole search, as one schedule in the worker would give it.  A run is one
task when, from its fixtures' setup to their teardown, no thread (of
Python's: ``_thread`` starts every one, threading's and the executors'
included) or process (``os.fork``) starts, and no thread the code under
test started earlier is alive: threads present before the session
collected anything (pytest's, xdist's) run none of the test's code.  A
thread that a C extension starts itself is seen by neither this run nor
the worker (guarantees.rst).

Where the run would differ from the worker's, it stops and the test goes
to the worker, which runs it from its start:

- a thread or a process starts: the audit events of ``_thread``'s starts,
  of ``os.fork``, ``os.forkpty``, ``os.posix_spawn``, ``os.spawn``,
  ``os.system``, ``os.exec`` and ``subprocess.Popen``, and the call of
  ``_posixsubprocess.fork_exec`` (which ``multiprocessing`` makes without
  an event), raise :class:`Elsewhere` before anything starts: nothing runs
  beside the test, and nothing it started outlives it (an ``Exception``,
  so that ``threading.Thread.start`` undoes its bookkeeping);
- the run waits with its process idle (a lock, a queue, an event, a sleep):
  with one task nothing else can wake it, so it is a deadlock or a wait that
  the worker's virtual clock makes instant.  A thread of this module's
  looks at the process's processor time as the run goes and, when it idles
  with the main thread asleep in a wait (its state in /proc, so that a run
  starved of processor time on a loaded machine is no wait), sends the main
  thread a signal of its own (a real-time one, which no test
  uses as SIGALRM may be), whose handler raises :class:`Waiting` out of the
  wait.  A run that computes, its process busy, is left to finish.

Whichever stopped the run, its reports are dropped, and the worker's run of
the test is its only verdict.  The code before the stop ran once more than
the test says: as a test rerun after a flaky failure does.
"""

from __future__ import annotations

import _posixsubprocess
import contextlib
import signal
import sys
import threading
import time

# The audit events of a thread or a process starting.
_STARTS = frozenset({"_thread.start_new_thread", "_thread.start_joinable_thread", "os.fork", "os.forkpty",
                     "os.posix_spawn", "os.spawn", "os.system", "os.exec", "subprocess.Popen"})

# The watch: the first look after FIRST seconds, then every EVERY; a run
# whose process used under IDLE of the wall time since the last look waits.
FIRST = 0.5
EVERY = 0.25
IDLE = 0.1
# the signal the watch sends the main thread
_SIGNAL = signal.SIGRTMIN + 6


class Elsewhere(Exception):
    """The run here started a thread or a process: it goes to the worker."""


class Waiting(BaseException):
    """The run here waited with its process idle: it goes to the worker.
    A BaseException, as KeyboardInterrupt is, so that no ``except
    Exception`` around the wait takes it for the test's own error."""


_state = {"armed": False, "why": None, "watch": None, "installed": False}
_armed = threading.Event()


def _audit(event, args):
    if _state["armed"] and event in _STARTS:
        _stop(f"{event}()", Elsewhere)


def _stop(why, kind):
    # the first reason is the one said; the run may catch and go on
    if _state["why"] is None:
        _state["why"] = why
    raise kind(f"ploom: {why}: the test is explored in the worker instead")


def _on_signal(signum, frame):
    # once: the run is stopped, and a second signal of the same idle spell
    # would land in pytest's own report of the first
    if _state["armed"] and _state["why"] is None:
        _stop("a wait with the process idle", Waiting)


def _sleeping(stat):
    """Whether the thread whose /proc stat file is stat sleeps in a wait
    (state S), rather than runs or waits for a processor (R) or a disk (D):
    a process starved of processor time on a loaded machine idles too, and
    is no wait of the test's."""
    try:
        with open(stat, "rb") as f:
            return f.read().rpartition(b")")[2].split()[0] == b"S"
    except (OSError, IndexError):
        return False


def _watch(main, native_id):
    """The watch's loop: while a run is armed, a signal to main each time
    the process idled since the last look with main asleep in a wait."""
    stat = f"/proc/self/task/{native_id}/stat"
    while True:
        _armed.wait()
        wall, cpu = time.monotonic(), time.process_time()
        pause = FIRST
        while _state["armed"]:
            time.sleep(pause)
            pause = EVERY
            now, used = time.monotonic(), time.process_time()
            if _state["armed"] and used - cpu < IDLE * (now - wall) and _sleeping(stat):
                signal.pthread_kill(main, _SIGNAL)
            wall, cpu = now, used


def _fork_exec(*args, **kwargs):
    if _state["armed"]:
        _stop("_posixsubprocess.fork_exec()", Elsewhere)
    return _REAL_FORK_EXEC(*args, **kwargs)


_REAL_FORK_EXEC = _posixsubprocess.fork_exec


def _install():
    """The audit hook, the process start's wrapper, the signal's handler
    and the watch, once; a process that runs tests off its main thread
    gets no watch."""
    sys.addaudithook(_audit)
    _posixsubprocess.fork_exec = _fork_exec
    main = threading.main_thread()
    if threading.current_thread() is main:
        signal.signal(_SIGNAL, _on_signal)
        watch = threading.Thread(target=_watch, args=(main.ident, main.native_id), name="ploom-watch",
                                 daemon=True)
        watch.start()
        _state["watch"] = watch.ident
    _state["installed"] = True


def baseline():
    """The threads alive now, before any test code ran: the session's own."""
    return frozenset(t.ident for t in threading.enumerate())


def others(session_threads):
    """The threads alive now that the session did not start with (the
    watch aside)."""
    return [t for t in threading.enumerate() if t.ident not in session_threads and t.ident != _state["watch"]]


def why():
    """Why the last run stopped, or None when it ran to its end."""
    return _state["why"]


@contextlib.contextmanager
def alone():
    """Runs the block as the one task of its process, stopping it as the
    module docstring says; why() says afterwards whether it was stopped."""
    if not _state["installed"]:
        _install()
    _state["why"] = None
    _state["armed"] = True
    _armed.set()
    try:
        yield
    finally:
        _armed.clear()
        _state["armed"] = False
