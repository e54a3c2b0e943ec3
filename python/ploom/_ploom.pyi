"""Type stubs for ploom._ploom, the C extension (pyext/*.c): the
operations a scenario uses, and the worker's fork server.

Every operation is a scheduling point inside a check; outside one (plain
Python, no scheduler) they act directly, as the docstrings say."""

from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, Final, Literal

PROTOCOL_VERSION: Final[int]
SOURCES_MAX: Final[int]
PATH_MAX: Final[int]
EXIT_OK: Final[int]
EXIT_FAILURE: Final[int]
EXIT_USAGE: Final[int]
EXIT_INCOMPLETE: Final[int]
EXIT_DIVERGENCE: Final[int]
EXIT_INTERNAL: Final[int]
EXIT_SETUP: Final[int]
EXIT_INTERRUPTED: Final[int]
"""The version of the worker protocol (lib/event.h) this extension speaks."""

def in_signal_handler(signum: int, /) -> int: ...

DEFAULT_SCHEDULE_TIMEOUT: Final[float]
"""Seconds one schedule may take when no schedule_timeout is set: the
search's default, and the most ``pytest --ploom-replay`` lets a trace ask for."""

class Lock:
    """A lock like threading.Lock whose operations are scheduling points.
    Any task may release it; acquiring it twice from one task blocks.
    name (as str()) names it in traces and ploom-show."""

    def __init__(self, *, name: object = None) -> None: ...
    @property
    def name(self) -> str:
        """The name given (as str()); by default "lock#N", the lock's object
        name in traces."""
    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        """Take the lock; arguments and errors as threading.Lock.acquire().
        Blocking (timeout=-1): waits until the lock is free.  Nonblocking:
        False at once if it is held.  Timed (timeout >= 0; ploom has no
        clock and never sleeps): the task stays enabled and, when it runs,
        takes a free lock (True) or times out on a held one (False); the
        search tries both.  Outside a check a timed acquire of a held lock
        returns False at once."""
    def release(self) -> None:
        """Release the lock; RuntimeError if it is not held."""
    def locked(self) -> bool:
        """Whether the lock is held."""
    def _at_fork_reinit(self) -> None:
        """Free the lock in a new process (threading's fork hook); outside a check only."""
    def __enter__(self) -> Literal[True]: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
        /,
    ) -> None: ...

class SharedCell:
    """A value shared by tasks; read() and write() are scheduling points.
    Values must be immutable, or ploom's primitives (handles: Lock, Thread,
    SharedCell and those of ploom.threading and ploom.queue), alone or in
    tuples and frozensets: a list, dict or set raises TypeError.  name (as
    str()) names it in traces and ploom-show."""

    def __init__(self, value: object = None, *, name: object = None) -> None: ...
    @property
    def name(self) -> str:
        """The name given (as str()); by default "cell#N", the cell's object
        name in traces."""
    def read(self) -> Any:
        """Return the value."""
    def write(self, value: object, /) -> None:
        """Store an immutable value."""

class Thread:
    """A thread that ploom schedules: a real OS thread that runs only when
    the scheduler hands it the baton.  May be subclassed (override run)."""

    def __init__(
        self,
        target: Callable[..., object] | None = None,
        args: Iterable[Any] = (),
        kwargs: dict[str, Any] | None = None,
        *,
        name: object = None,
        daemon: bool | None = None,
    ) -> None: ...
    @property
    def ident(self) -> int | None:
        """The task id once started, else None."""
    @property
    def name(self) -> str:
        """The name given (as str()) or set; by default "thread#N" once
        started (N the task id) and "thread" before.  Traces and ploom-show
        call the task by it (by its last one, when it is set while the
        thread runs)."""
    @name.setter
    def name(self, value: object) -> None: ...
    @property
    def daemon(self) -> bool:
        """threading's daemon flag, False by default; it changes nothing in
        ploom, which waits for every task."""
    @daemon.setter
    def daemon(self, value: object) -> None: ...
    def start(self) -> None:
        """Start the thread; RuntimeError if started twice or outside a check."""
    def join(self, timeout: float | None = None) -> None:
        """Wait for the thread to finish.  With a timeout (a number of
        seconds, never used: ploom has no clock) a timed join, always
        enabled, that returns whether or not the thread has finished: ask
        is_alive(), as with threading."""
    def is_alive(self) -> bool:
        """Whether the thread has started and not finished."""
    def run(self) -> None:
        """The thread's code: calls target(*args, **kwargs)."""

def held_lock(*, name: object = None, condition: str | None = None) -> Lock:
    """A new Lock held by the calling task, made without a scheduling point,
    named as Lock(name=...); condition names the Condition whose waiter it
    is.  Internal: ploom.threading's Condition parks each waiter on one."""

def acquire_when(
    lock: Lock, when: Callable[[], object], waits_for: Literal["notify", "state"], on: str | None, /
) -> None:
    """A blocking acquire of lock that also waits until when() is true, one
    step; waits_for and on (a name) say what the task waits for.  Internal:
    ploom.threading's and ploom.queue's waits.  when() reads only state that
    code holding lock changes, and runs no ploom operation."""

def label_step(text: str, /) -> None:
    """Words for the calling task's latest step, as ploom-show draws it
    (ploom.queue's "put 3"); the first for a step counts.  Nothing outside
    a schedule.  Not a scheduling point."""

def yield_now() -> None:
    """A scheduling point with no effect: lets another task run.  Outside a
    check it does nothing."""

def clock_time() -> float:
    """time.time() on ploom's virtual clock (the worker installs it):
    1700000000.0 plus the seconds the clock advanced.  A read of the clock:
    a scheduling point in a schedule with two tasks or more."""

def clock_time_ns() -> int:
    """time.time_ns() on ploom's virtual clock."""

def clock_monotonic() -> float:
    """time.monotonic() and time.perf_counter() on ploom's virtual clock:
    1000.0 plus the seconds it advanced."""

def clock_monotonic_ns() -> int:
    """time.monotonic_ns() and time.perf_counter_ns() on ploom's virtual
    clock."""

def clock_sleep(secs: float, /) -> None:
    """time.sleep() on ploom's virtual clock: advances it by secs and
    returns at once; a scheduling point in a schedule with two tasks or
    more."""

def clock_elapsed_ns() -> int:
    """The nanoseconds ploom's virtual clock advanced since its start.  Not
    a scheduling point."""

def current_task() -> int | None:
    """The calling task's id inside a schedule (0 for the scenario's main
    task, then 1, 2, ... in start order); None outside a check and on a
    thread ploom does not schedule.  Not a scheduling point."""

def current_thread() -> Thread | None:
    """The ploom.Thread of the task that calls it inside a schedule; for
    task 0 (the scenario's own) the one main_thread() returns.  None outside
    a check and on a thread ploom does not schedule.  Not a scheduling
    point."""

def main_thread() -> Thread | None:
    """Task 0's ploom.Thread inside a schedule: named "MainThread", ident
    0, not a daemon, alive until the scenario returns; one object per
    schedule.  None outside a check and on a thread ploom does not
    schedule.  Not a scheduling point."""

def serve(scenario: Callable[[], object], hello: tuple[Any, ...], cmd_fd: int, event_fd: int, /) -> None:
    """The fork server loop of ploom's worker (see lib/event.h).  Internal."""

def set_timeouts(model: str, /) -> None:
    """The time model of the schedules this worker runs: "idle" or "any"."""

def write_error(fd: int, kind: str, message: str, type: str | None = None, /) -> None:
    """Write an error record (`error KIND DETAIL`, DETAIL the JSON object of
    message and type, the exception's type if one stopped the load).  Internal."""

def fail_schedule(exc: BaseException, /) -> bool:
    """Inside a schedule, end it at once with exc as the running task's
    failure (never returns); False outside a check.  Internal (ploom._guard)."""

# The hooks of instrumented code (ploom._instrument writes the calls;
# pyext/hooks.c and pyext/sites.c say what each is).  Internal.
def _i_sites(module: str, filename: str, sites: tuple[tuple[int, int, str], ...], /) -> int: ...
def _i_shared(keys: Iterable[str], /) -> None: ...
def _i_new[T](obj: T, /) -> T: ...
def _i_getattr(obj: object, name: str, site: int, /) -> Any: ...
def _i_setattr(obj: object, name: str, value: object, site: int, /) -> None: ...
def _i_delattr(obj: object, name: str, site: int, /) -> None: ...
def _i_getitem(obj: Any, key: object, site: int, /) -> Any: ...
def _i_setitem(obj: Any, key: object, value: object, site: int, /) -> None: ...
def _i_delitem(obj: Any, key: object, site: int, /) -> None: ...
def _i_callattr(obj: object, name: str, site: int, /, *args: Any, **kwargs: Any) -> Any: ...
def _i_read[T](obj: T, site: int, /) -> T: ...
def _i_iter[T](obj: Iterable[T], site: int, /) -> Iterable[T]: ...
def _i_inplace(op: Callable[[Any, Any], Any], left: object, right: object, site: int, /) -> Any: ...
def _i_getglobal(globals: dict[str, Any], name: str, site: int, /) -> Any: ...
def _i_setglobal(globals: dict[str, Any], name: str, value: object, site: int, /) -> None: ...
def _i_delglobal(globals: dict[str, Any], name: str, site: int, /) -> None: ...
