"""``ploom.threading``: the parts of ``threading`` that ploom schedules.

``import ploom.threading as threading`` switches code to ploom's versions:
the same names, methods, return values and exceptions as CPython's, built
from ploom's own operations (:class:`ploom.Lock` and
:class:`ploom.SharedCell`), so that every point where one of them lets
another task run is a scheduling point that a check explores.

How they are built, and why that is exact:

- A task blocks only in a ``ploom.Lock`` acquire: a ``Condition`` parks each
  waiter on a lock of its own, made held by the waiter (no step: no other
  task knows it yet) and taken again to wait, which ``notify`` releases,
  first waiter first (FIFO, as CPython).
  So a woken waiter must take the condition's lock again, and another task
  may take it first: that is what makes ``if`` instead of ``while`` around
  ``wait`` a bug a check finds.
- State (a semaphore's value, a barrier's count, a queue's items) is plain
  Python read and written only while the primitive's own lock is held:
  tasks run one at a time between scheduling points and the lock's
  operations order every access, which keeps partial-order reduction
  sound.  The few values CPython reads without its lock (``Event.is_set``)
  live in a ``SharedCell``, whose reads are operations.
- A timeout is a choice, never a real sleep: ``wait(timeout)`` parks on a
  timed ``Lock.acquire``, at which the task stays enabled, and a schedule
  that runs it before it is woken takes the timed-out branch, where the
  acquire advances ploom's virtual clock by the timeout, once.  A task in a
  timed wait is therefore never part of a deadlock.
- A wait that may be woken more than once (``wait_for``, a Semaphore's
  timed acquire, ploom.queue's timed get and put) keeps CPython's deadline
  on ploom's clock (a read of it, a step): it reads ``endtime`` before its
  first wait, and after a wake-up waits only for what is left, giving up
  once nothing is.  After a wait that timed out the deadline has passed
  (the wait moved the clock by all that was left) and CPython's next
  reading of the clock would only say so: that reading is left out, and so
  is float rounding's chance of a wait for the last nanosecond.
- Re-entering an ``RLock`` its task holds, and releasing all but the last
  level, touch nothing another task can see: they are not scheduling points.
- ``local`` is the standard library's own: every task is a real OS thread
  with its own thread state, so each task sees only the values it set.
  Nothing there is shared between tasks, so it needs no scheduling point.
- A started thread whose ``run()`` raises fails the schedule, unless code
  set ``excepthook`` to a function of its own: that is called with the
  ``ExceptHookArgs`` in the task, which then ends normally, as CPython's
  threads do.  The scenario's own task raising always fails it.
- ``_register_atexit`` callbacks run in the scenario's task when its
  function has returned, last registered first, before the schedule waits
  for the other tasks: where CPython's main thread runs them.

A primitive is named in traces after the assignment that makes it
(``Pool._cond``), and the locks it makes for itself after it
(``Pool._cond.waiter``): see ploom._names.

A name of ``threading`` that ploom does not schedule raises
AttributeError naming it, rather than running unscheduled.
"""

from __future__ import annotations

import threading as _std
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Mapping

from ploom import _names
from ploom._ploom import Lock as _Lock
from ploom._ploom import SharedCell, acquire_when, held_lock
from ploom._ploom import Thread as _PloomThread
from ploom._ploom import clock_monotonic as _time
from ploom._ploom import current_task as _current_task
from ploom._standin import refusing_getattr as _refusing_getattr

# true for the type checker alone ([tool.mypy] always_true): a scenario's
# process does not import typing
_TYPE_CHECKING = False
if _TYPE_CHECKING:
    from typing import Any, NoReturn

__all__ = [
    "Barrier",
    "BoundedSemaphore",
    "BrokenBarrierError",
    "Condition",
    "Event",
    "ExceptHookArgs",
    "Lock",
    "RLock",
    "Semaphore",
    "TIMEOUT_MAX",
    "Thread",
    "ThreadError",
    "Timer",
    "current_thread",
    "excepthook",
    "get_ident",
    "get_native_id",
    "local",
    "main_thread",
]

BrokenBarrierError = _std.BrokenBarrierError
# what a lock's release raises when it is not held, as CPython's
ThreadError = _std.ThreadError
TIMEOUT_MAX = _std.TIMEOUT_MAX
# the standard library's own (see the module's docstring)
ExceptHookArgs = _std.ExceptHookArgs
local = _std.local


def get_ident() -> int:
    """The running task's id in a schedule (0 for the scenario's own task);
    threading.get_ident() outside a check."""
    from ploom import get_ident as ident

    return ident()


def get_native_id() -> int:
    """The running task's id in a schedule, as get_ident(): the same number
    in every schedule, where the OS's would differ; threading.get_native_id()
    outside a check."""
    task = _current_task()
    return _std.get_native_id() if task is None else task


def current_thread() -> _PloomThread | _std.Thread:
    """The running task's ploom.Thread in a schedule (for the scenario's own
    task, main_thread()); threading.current_thread() outside a check."""
    from ploom import current_thread as current

    return current()


def main_thread() -> _PloomThread | _std.Thread:
    """The scenario's own task as a ploom.Thread named "MainThread" in a
    schedule; threading.main_thread() outside a check."""
    from ploom import main_thread as main

    return main()


def Lock(*, name: object = None) -> _Lock:
    """A ploom.Lock, named name, else after the assignment that makes it
    (see ploom._names)."""
    return _Lock(name=_names.creation_name() if name is None else name)


def currentThread() -> _PloomThread | _std.Thread:  # noqa: N802 - threading's deprecated name
    """current_thread(), under threading's deprecated name, which warns as
    CPython's does."""
    warnings.warn("currentThread() is deprecated, use current_thread() instead", DeprecationWarning, stacklevel=2)
    return current_thread()


__getattr__ = _refusing_getattr(_std, __all__)


def _acquire_waiter(waiter: _Lock, timeout: float | None) -> bool:
    """Parks on waiter: blocks (no timeout), or may time out (a choice)."""
    if timeout is None:
        return waiter.acquire()
    if timeout > 0:
        return waiter.acquire(True, timeout)
    return waiter.acquire(False)


class RLock:
    """A reentrant lock: its owner may take it again; the last release lets
    others have it.  Only the first acquire and the last release are
    scheduling points."""

    __ploom_handle__ = True  # a SharedCell may hold it

    def __init__(self) -> None:
        self._lock = Lock()
        self._owner: int | None = None
        self._count = 0

    def __repr__(self) -> str:
        owner = "unlocked" if self._owner is None else f"owner={self._owner} count={self._count}"
        return f"<ploom.threading.RLock {owner}>"

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        me = get_ident()
        # Only the owner writes _owner, so whether it equals me does not
        # depend on the order of other tasks' steps.
        if self._owner == me:
            self._count += 1
            return True
        if not self._lock.acquire(blocking, timeout):
            return False
        self._owner, self._count = me, 1
        return True

    __enter__ = acquire

    def release(self) -> None:
        if self._owner != get_ident():
            raise RuntimeError("cannot release un-acquired lock")
        self._count -= 1
        if not self._count:
            self._owner = None
            self._lock.release()

    def __exit__(self, *exc: object) -> None:
        self.release()

    def locked(self) -> bool:
        return self._lock.locked()

    # what Condition needs of its lock
    def _is_owned(self) -> bool:
        return self._owner == get_ident()

    def _release_save(self) -> tuple[int, int | None]:
        saved = self._count, self._owner
        self._count, self._owner = 0, None
        self._lock.release()
        return saved

    def _acquire_restore(
        self, saved: tuple[int, int | None], when: Callable[[], object] | None = None, name: str | None = None
    ) -> None:
        # when: a Condition's one-step wait (Condition name), which takes
        # the lock back only once when() holds (ploom._ploom.acquire_when)
        if when is None:
            self._lock.acquire()
        else:
            acquire_when(self._lock, when, "notify", name)
        self._count, self._owner = saved

    def _at_fork_reinit(self) -> None:
        self._lock._at_fork_reinit()
        self._owner, self._count = None, 0


class Condition:
    """A condition variable over lock (default: a new RLock)."""

    __ploom_handle__ = True  # a SharedCell may hold it

    def __init__(self, lock: Any = None) -> None:
        # any lock: a ploom.Lock, an RLock, or another object with their methods
        self._lock: Any = RLock() if lock is None else lock
        self.acquire = self._lock.acquire
        self.release = self._lock.release
        self._waiters: deque[Any] = deque()
        # its lock, made here, has its name already (see ploom._names);
        # a deadlock names the Condition itself
        self._name = _names.creation_name()
        self._waiter_name = _names.part(self._name, "Condition", "waiter")

    def __repr__(self) -> str:
        return f"<ploom.threading.Condition({self._lock!r}, {len(self._waiters)})>"

    def __enter__(self) -> Any:
        return self._lock.__enter__()

    def __exit__(self, *exc: object) -> Any:
        return self._lock.__exit__(*exc)

    def _is_owned(self) -> bool:
        owned = getattr(self._lock, "_is_owned", None)
        if owned is not None:
            return owned()
        # A plain Lock has no owner: held by anyone counts, as in CPython,
        # which asks with a nonblocking acquire.  So do we: a notify that
        # passes because another task holds the lock reads the waiters that
        # task's wait may just have added, and an acquire orders that
        # against the waiter's own steps on the lock, which locked(), a read
        # like the waiter's check, would leave unordered for the reduction.
        if self._lock.acquire(False):
            self._lock.release()
            return False
        return True

    def _release_save(self) -> Any:
        save = getattr(self._lock, "_release_save", None)
        if save is not None:
            return save()
        self._lock.release()
        return None

    def _acquire_restore(self, saved: Any) -> None:
        restore = getattr(self._lock, "_acquire_restore", None)
        if restore is not None:
            restore(saved)
        else:
            self._lock.acquire()

    def _at_fork_reinit(self) -> None:
        self._lock._at_fork_reinit()
        self._waiters.clear()

    def wait(self, timeout: float | None = None) -> bool:
        if not self._is_owned():
            raise RuntimeError("cannot wait on un-acquired lock")
        return self._wait(timeout)

    def _wait(self, timeout: float | None) -> bool:
        if timeout is None and self._one_step_waits():
            # One step: the acquire of the lock once a notify took this
            # waiter (ploom._ploom.acquire_when), instead of a waiter lock
            # that the notify releases, its acquire, and the lock taken
            # again.  The waiter lock was the waiter's and its notifier's
            # alone, and the notifier holds the lock (or, over a plain
            # Lock, checked that someone does: a step on it), so no other
            # task could tell the steps left out from the one kept.
            taken = _Woken()
            self._waiters.append(taken)
            saved = self._release_save()
            if saved is None:  # a plain Lock
                acquire_when(self._lock, taken, "notify", self._name)
            else:
                self._lock._acquire_restore(saved, taken, self._name)
            return True
        waiter = held_lock(name=self._waiter_name, condition=self._name)
        self._waiters.append(waiter)
        saved = self._release_save()
        woken = False
        try:
            woken = _acquire_waiter(waiter, timeout)
            return woken
        finally:
            self._acquire_restore(saved)
            if not woken:
                # timed out: unless a notify took it off meanwhile
                try:
                    self._waiters.remove(waiter)
                except ValueError:
                    pass

    def wait_for[T](self, predicate: Callable[[], T], timeout: float | None = None) -> T:
        # CPython's loop, on ploom's clock (see the module's docstring)
        endtime: float | None = None
        waittime = timeout
        result = predicate()
        while not result:
            if waittime is not None:
                if endtime is None:
                    endtime = _time() + waittime
                else:
                    waittime = endtime - _time()
                    if waittime <= 0:
                        break
            if not self.wait(waittime) and waittime is not None:
                return predicate()  # timed out: the deadline has passed
            result = predicate()
        return result

    def notify(self, n: int = 1) -> None:
        if not self._is_owned():
            raise RuntimeError("cannot notify on un-acquired lock")
        self._notify(n)

    def _notify(self, n: int) -> None:
        for _ in range(min(n, len(self._waiters))):
            self._waiters.popleft().release()

    def _one_step_waits(self) -> bool:
        """Whether an untimed wait is one step: over a ploom.Lock or an
        RLock, whose lock acquire_when takes; over another kind of lock
        each wait keeps a waiter lock."""
        return type(self._lock) in (_Lock, RLock)

    def notify_all(self) -> None:
        # CPython reads how many wait, then checks ownership in notify().
        # Over a plain Lock a task that does not hold it passes that check
        # while another does, and the waiters it read may be changing: the
        # reading gets a step on the lock (locked()), which orders it
        # against the waiters' own steps for the reduction, as the check
        # orders notify's (see _is_owned).
        if getattr(self._lock, "_is_owned", None) is None:
            self._lock.locked()
        self.notify(len(self._waiters))


class _Woken:
    """A waiter of a one-step wait: notify() releases it, as it releases a
    waiter lock, and the wait's acquire_when asks whether it was."""

    __slots__ = ("woken",)

    def __init__(self) -> None:
        self.woken = False

    def release(self) -> None:
        self.woken = True

    def __call__(self) -> bool:
        return self.woken


class _InternalCondition(Condition):
    """A Condition over a plain Lock that only this module's code holds when
    it waits or notifies: no ownership check, which would be an operation
    (Lock.locked) of its own."""

    def __init__(self, owner: str) -> None:
        super().__init__(Lock())
        self._name = _names.creation_name() or owner
        self._waiter_name = f"{self._name}.waiter"

    def wait(self, timeout: float | None = None) -> bool:
        return self._wait(timeout)

    def notify(self, n: int = 1) -> None:
        self._notify(n)

    def notify_all(self) -> None:
        self._notify(len(self._waiters))


class Semaphore:
    """A counter: acquire() takes one, waiting while it is 0; release(n)
    adds n and wakes up to n waiters."""

    __ploom_handle__ = True  # a SharedCell may hold it

    def __init__(self, value: int = 1) -> None:
        if value < 0:
            raise ValueError("semaphore initial value must be >= 0")
        self._cond = _InternalCondition(type(self).__name__)
        self._value = value

    def __repr__(self) -> str:
        return f"<ploom.threading.{type(self).__name__} value={self._value}>"

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        if not blocking and timeout is not None:
            raise ValueError("can't specify timeout for non-blocking acquire")
        if blocking and timeout is None:
            # the wait is one step, the lock's acquire once a unit is
            # there (ploom._ploom.acquire_when): only code holding the lock
            # changes the value, and the loop below would retry until then
            acquire_when(self._cond._lock, self._available, "state", self._cond._name)
            self._value -= 1
            self._cond._lock.release()
            return True
        # CPython's loop, with its deadline on ploom's clock (see the
        # module's docstring)
        endtime: float | None = None
        with self._cond:
            while self._value == 0:
                if not blocking:
                    return False
                if timeout is not None:
                    if endtime is None:
                        endtime = _time() + timeout
                    else:
                        timeout = endtime - _time()
                        if timeout <= 0:
                            return False
                if not self._cond.wait(timeout) and timeout is not None:
                    # timed out: the deadline has passed
                    if self._value == 0:
                        return False
            self._value -= 1
            return True

    __enter__ = acquire

    def _available(self) -> bool:
        return self._value > 0

    def release(self, n: int = 1) -> None:
        if n < 1:
            raise ValueError("n must be one or more")
        with self._cond:
            self._add(n)
            self._cond.notify(n)

    def _add(self, n: int) -> None:
        self._value += n

    def __exit__(self, *exc: object) -> None:
        self.release()


class BoundedSemaphore(Semaphore):
    """A Semaphore that refuses to be released above its initial value."""

    def __init__(self, value: int = 1) -> None:
        super().__init__(value)
        self._initial = value

    def _add(self, n: int) -> None:
        if self._value + n > self._initial:
            raise ValueError("Semaphore released too many times")
        self._value += n


class Event:
    """A flag tasks can wait for."""

    __ploom_handle__ = True  # a SharedCell may hold it

    def __init__(self) -> None:
        self._cond = _InternalCondition("Event")
        # is_set() reads the flag without the lock, as CPython does: a
        # SharedCell makes that read an operation; under the lock the
        # plain copy is read
        self._cell = SharedCell(False, name=_names.part(_names.creation_name(), "Event", "flag"))
        self._flag = False

    def __repr__(self) -> str:
        return f"<ploom.threading.Event {'set' if self._flag else 'unset'}>"

    def is_set(self) -> bool:
        return self._cell.read()

    def _at_fork_reinit(self) -> None:
        self._cond._at_fork_reinit()

    def set(self) -> None:
        with self._cond:
            self._flag = True
            self._cell.write(True)
            self._cond.notify_all()

    def clear(self) -> None:
        with self._cond:
            self._flag = False
            self._cell.write(False)

    def wait(self, timeout: float | None = None) -> bool:
        if timeout is None:
            # one step, the lock's acquire once the flag is set
            # (ploom._ploom.acquire_when), as a Semaphore's.  CPython's
            # waiter that took the lock before a set() and is woken by it
            # returns True even if a clear() ran before it woke: here it
            # takes the lock between the two instead, which no other task
            # can tell apart, since only set() and clear() take the lock
            # and the waiter leaves it at once.
            acquire_when(self._cond._lock, self._is_flag, "state", self._cond._name)
            self._cond._lock.release()
            return True
        with self._cond:
            signaled = self._flag
            if not signaled:
                signaled = self._cond.wait(timeout)
            return signaled

    def _is_flag(self) -> bool:
        return self._flag


_FILLING, _DRAINING, _RESETTING, _BROKEN = 0, 1, -1, -2


class Barrier:
    """parties tasks meet in wait(); the last to arrive runs action and lets
    them all go."""

    __ploom_handle__ = True  # a SharedCell may hold it

    def __init__(
        self, parties: int, action: Callable[[], object] | None = None, timeout: float | None = None
    ) -> None:
        if parties < 1:
            raise ValueError("parties must be >= 1")
        self._cond = _InternalCondition("Barrier")
        self._action = action
        self._timeout = timeout
        self._parties = parties
        self._state = _FILLING
        self._count = 0

    def __repr__(self) -> str:
        return f"<ploom.threading.Barrier waiters={self._count}/{self._parties}>"

    # A wait with no timeout is one step, the lock's acquire once the state
    # lets the wait end (ploom._ploom.acquire_when), as a Semaphore's: the
    # state changes only under the lock, and the Condition's loop would
    # retry until then.  Timed waits keep the Condition, and every change
    # notifies for them.
    def _settled(self) -> bool:
        return self._state not in (_DRAINING, _RESETTING)

    def _tripped(self) -> bool:
        return self._state != _FILLING

    def wait(self, timeout: float | None = None) -> int:
        if timeout is None:
            timeout = self._timeout
        lock = self._cond._lock
        # the last round is still letting its tasks out
        acquire_when(lock, self._settled, "state", self._cond._name)
        try:
            if self._state < 0:
                raise BrokenBarrierError
            index = self._count
            self._count += 1
            try:
                if index + 1 == self._parties:
                    self._trip()
                else:
                    self._await(timeout)
                return index
            finally:
                self._count -= 1
                if self._count == 0 and self._state in (_DRAINING, _RESETTING):
                    self._state = _FILLING
                    self._cond.notify_all()
        finally:
            lock.release()

    def _trip(self) -> None:
        try:
            if self._action:
                self._action()
            self._state = _DRAINING
            self._cond.notify_all()
        except BaseException:
            self._break()
            raise

    def _await(self, timeout: float | None) -> None:
        if timeout is None:
            lock = self._cond._lock
            lock.release()
            acquire_when(lock, self._tripped, "state", self._cond._name)
        elif not self._cond.wait_for(self._tripped, timeout):
            self._break()
            raise BrokenBarrierError
        if self._state < 0:
            raise BrokenBarrierError

    def _break(self) -> None:
        self._state = _BROKEN
        self._cond.notify_all()

    def reset(self) -> None:
        with self._cond:
            if self._count > 0:
                if self._state in (_FILLING, _BROKEN):
                    self._state = _RESETTING
            else:
                self._state = _FILLING
            self._cond.notify_all()

    def abort(self) -> None:
        with self._cond:
            self._break()

    @property
    def parties(self) -> int:
        return self._parties

    @property
    def n_waiting(self) -> int:
        with self._cond:
            return self._count if self._state == _FILLING else 0

    @property
    def broken(self) -> bool:
        with self._cond:
            return self._state == _BROKEN


class Thread(_PloomThread):
    """threading.Thread: a ploom.Thread with threading's constructor and the
    rest of its API.  Subclass it as threading.Thread (override run(), call
    ``super().__init__(...)``); it can be weakly referenced.  Without a name,
    it is called "thread#N" once started, N its task id, as traces call it."""

    def __init__(
        self,
        group: None = None,
        target: Callable[..., object] | None = None,
        name: object = None,
        args: Iterable[Any] = (),
        kwargs: dict[str, Any] | None = None,
        *,
        daemon: bool | None = None,
    ) -> None:
        if group is not None:
            raise AssertionError("group argument must be None for now")
        if kwargs is None:
            kwargs = {}
        if daemon is None:
            # threading's rule: the creating thread's flag
            daemon = current_thread().daemon
        super().__init__(target, args, kwargs, name=name, daemon=daemon)
        # where threading keeps them, for subclasses that read them
        self._target, self._args, self._kwargs = target, args, kwargs

    def run(self) -> None:
        try:
            if self._target is not None:
                self._target(*self._args, **self._kwargs)
        finally:
            # as threading: no cycle through the thread's arguments
            del self._target, self._args, self._kwargs

    @property
    def native_id(self) -> int | None:
        """The task id once started, as ident: ploom's tasks are numbered the
        same in every schedule."""
        return self.ident

    def getName(self) -> str:
        warnings.warn("getName() is deprecated, get the name attribute instead", DeprecationWarning, stacklevel=2)
        return self.name

    def setName(self, name: object) -> None:
        warnings.warn("setName() is deprecated, set the name attribute instead", DeprecationWarning, stacklevel=2)
        self.name = name

    def isDaemon(self) -> bool:
        warnings.warn("isDaemon() is deprecated, get the daemon attribute instead", DeprecationWarning, stacklevel=2)
        return self.daemon

    def setDaemon(self, daemonic: bool) -> None:
        warnings.warn("setDaemon() is deprecated, set the daemon attribute instead", DeprecationWarning, stacklevel=2)
        self.daemon = daemonic


class Timer(Thread):
    """Calls ``function(*args, **kwargs)`` after interval seconds unless
    cancel() comes first.  It waits on its Event ``finished`` with the
    interval as timeout: a choice, not a sleep, so a check explores both the
    timer firing and its cancel coming in time."""

    def __init__(
        self,
        interval: float,
        function: Callable[..., object],
        args: Iterable[Any] | None = None,
        kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        Thread.__init__(self)
        self.interval = interval
        self.function = function
        self.args = args if args is not None else []
        self.kwargs = kwargs if kwargs is not None else {}
        self.finished = Event()

    def cancel(self) -> None:
        self.finished.set()

    def run(self) -> None:
        self.finished.wait(self.interval)
        if not self.finished.is_set():
            self.function(*self.args, **self.kwargs)
        self.finished.set()


def excepthook(args: Any, /) -> NoReturn:
    """ploom's default: the exception of a thread's run() is the failure of
    the schedule, so this re-raises it.  Set ``ploom.threading.excepthook``
    to a function of your own to handle it instead, as with threading."""
    if args.exc_value is not None:
        raise args.exc_value.with_traceback(args.exc_traceback)
    raise args.exc_type


__excepthook__ = excepthook


def _task_raised(exc: BaseException, thread: Thread) -> bool:
    """The scheduler's call (sched.c) when a started task's run() raised
    exc: False leaves it the failure of the schedule; True when a hook code
    set handled it, and the task ends normally."""
    hook = excepthook
    if hook is __excepthook__:
        return False
    hook(ExceptHookArgs((type(exc), exc, exc.__traceback__, thread)))
    return True


_threading_atexits: list[Callable[[], object]] = []
_SHUTTING_DOWN = False


def _register_atexit(func: Callable[..., object], *arg: Any, **kwargs: Any) -> None:
    """threading's: func(*arg, **kwargs) runs when the scenario's function
    has returned, in its task, before the schedule waits for the others;
    the last registered first.  Registered at import (in the worker, before
    any schedule), it runs in every schedule."""
    if _SHUTTING_DOWN:
        raise RuntimeError("can't register atexit after shutdown")
    _threading_atexits.append(lambda: func(*arg, **kwargs))


def _shutdown() -> None:
    """The scheduler's call (sched.c) when the scenario's function has
    returned: threading._shutdown's callbacks, as CPython's main thread
    runs them."""
    global _SHUTTING_DOWN
    _SHUTTING_DOWN = True
    for atexit_call in reversed(_threading_atexits):
        atexit_call()
