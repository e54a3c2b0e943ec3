"""``ploom.queue``: ``queue.Queue`` and friends, scheduled by ploom.

``import ploom.queue as queue`` switches code to these.  They are built as
CPython builds its queues, from one lock and three conditions of
:mod:`ploom.threading`, so every point where a task may wait or let another
run is a scheduling point; a timeout is a choice, never a real sleep (see
:mod:`ploom.threading`).  ``queue.Empty``, ``queue.Full`` and
``queue.ShutDown`` are the standard library's, so ``except queue.Empty``
catches them either way.

A timed ``get`` or ``put`` keeps CPython's deadline on ploom's clock, as
``ploom.threading``'s waits do: ``endtime = time() + timeout`` once it has
to wait, and ``Empty`` or ``Full`` once ``endtime - time() <= 0``, which
another task's sleep can bring about before the wait times out.

``SimpleQueue`` is CPython's C queue, whose put never blocks: here a lock
and a condition guard its items as ``Queue``'s do, so that partial-order
reduction sees every access to them (CPython's pure-Python version appends
outside its lock, which only the GIL makes safe).
"""

from __future__ import annotations

import heapq
import queue as _std
import reprlib
import types
from collections import deque

from ploom import _names
from ploom._ploom import acquire_when
from ploom._ploom import clock_monotonic as _time
from ploom._ploom import label_step as _label
from ploom._standin import refusing_getattr as _refusing_getattr
from ploom.threading import Condition as _Condition
from ploom.threading import Lock

# true for the type checker alone ([tool.mypy] always_true): a scenario's
# process does not import typing
_TYPE_CHECKING = False
if _TYPE_CHECKING:
    from typing import Any

    from ploom._ploom import Lock as _Lock

__all__ = ["Empty", "Full", "LifoQueue", "PriorityQueue", "Queue", "ShutDown", "SimpleQueue"]

Empty = _std.Empty
Full = _std.Full
ShutDown = _std.ShutDown


__getattr__ = _refusing_getattr(_std, __all__)


def _condition_of(lock: _Lock, name: str) -> _Condition:
    """A Condition over lock whose waiters are called name.waiter: one that
    a queue makes for itself, named after the queue, not after the line
    that makes it."""
    cond = _Condition(lock)
    cond._name = name
    cond._waiter_name = f"{name}.waiter"
    return cond


# A timeout of 0 gives up without waiting, as CPython's, whose deadline has
# passed before its first wait.
def _check_timeout(timeout: float | None) -> None:
    if timeout is not None and timeout < 0:
        raise ValueError("'timeout' must be a non-negative number")


# A trace words a queue's operations as its user wrote them: the acquire of
# the mutex in which one takes effect reads "put 3", "get -> 3", "get_nowait
# -> Empty" (a nonblocking one as the *_nowait method that makes it), a timed
# one "get (timeout) -> Empty"; the release that ends it "end put".  Only the
# words: the steps stay the mutex's, which replay and search compare.
def _op(name: str, block: bool, timeout: float | None) -> str:
    if not block:
        return f"{name}_nowait"
    return name if timeout is None else f"{name} (timeout)"


def _shown(item: Any) -> str:
    # reprlib's: short for a large container, and never raising from a repr
    # of the scenario's, which would change what the operation does
    return reprlib.repr(item)


def _left(timeout: float | None, endtime: float | None) -> tuple[float | None, float | None]:
    """(what is left of the wait, its endtime) before a wait of a get or put
    with timeout, as CPython's: endtime = time() + timeout, read the first
    time the method must wait (before that, CPython's reading is not used),
    then remaining = endtime - time().  (None, None) without a timeout.  A
    wait that timed out is not followed by a reading: the deadline has
    passed (see ploom.threading)."""
    if timeout is None:
        return None, None
    if endtime is None:
        endtime = _time() + timeout
    return endtime - _time(), endtime


class Queue:
    """A FIFO queue of at most maxsize items (0: no bound)."""

    __ploom_handle__ = True  # a SharedCell may hold it

    def __init__(self, maxsize: int = 0) -> None:
        self.maxsize = maxsize
        self._init(maxsize)
        # one lock, three conditions on it; the conditions are only used
        # with it held, and its operations order every access to the items
        # named after the queue: Pool.items.mutex, Queue.mutex without one
        name = _names.creation_name() or type(self).__name__
        self.mutex = Lock(name=f"{name}.mutex")
        self.not_empty = _condition_of(self.mutex, f"{name}.not_empty")
        self.not_full = _condition_of(self.mutex, f"{name}.not_full")
        self.all_tasks_done = _condition_of(self.mutex, f"{name}.all_tasks_done")
        self.unfinished_tasks = 0
        self.is_shutdown = False
        # A blocking wait with no timeout is one step, the mutex's acquire,
        # enabled once the mutex is free and the wait can end (acquire_when):
        # the state the waits test changes only under the mutex, so no order
        # of the conditions' waiter locks is one the search must try.  The
        # test runs inside the scheduler, so only with this module's own
        # container: a subclass's _qsize could be code under test.
        self._monitor = type(self)._qsize is Queue._qsize

    def task_done(self) -> None:
        with self.all_tasks_done:
            unfinished = self.unfinished_tasks - 1
            if unfinished <= 0:
                if unfinished < 0:
                    raise ValueError("task_done() called too many times")
                self.all_tasks_done._notify(len(self.all_tasks_done._waiters))
            self.unfinished_tasks = unfinished

    def _all_done(self) -> bool:
        return not self.unfinished_tasks

    def _room(self) -> bool:
        return self.is_shutdown or not 0 < self.maxsize <= self._qsize()

    def _any(self) -> bool | int:
        return self.is_shutdown or self._qsize()

    def join(self) -> None:
        if self._monitor:
            acquire_when(self.mutex, self._all_done, "state", self.all_tasks_done._name)
            self.mutex.release()
            return
        with self.all_tasks_done:
            while self.unfinished_tasks:
                self.all_tasks_done._wait(None)

    def qsize(self) -> int:
        with self.mutex:
            return self._qsize()

    def empty(self) -> bool:
        with self.mutex:
            return not self._qsize()

    def full(self) -> bool:
        with self.mutex:
            return 0 < self.maxsize <= self._qsize()

    # the end of a put and of a get, whichever way they waited (the
    # monitor's acquire_when or the Condition's loop), with the mutex held
    def _put_one(self, op: str, item: Any) -> None:
        self._put(item)
        _label(f"{op} {_shown(item)}")
        self.unfinished_tasks += 1
        self.not_empty._notify(1)

    def _get_one(self, op: str) -> Any:
        item = self._get()
        _label(f"{op} -> {_shown(item)}")
        self.not_full._notify(1)
        return item

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        _check_timeout(timeout)
        op = _op("put", block, timeout)
        if block and timeout is None and self._monitor:
            acquire_when(self.mutex, self._room, "state", self.not_full._name)
            try:
                if self.is_shutdown:
                    _label(f"{op} -> ShutDown")
                    raise ShutDown
                self._put_one(op, item)
            finally:
                self.mutex.release()
                _label(f"end {op}")
            return
        timed_out = False
        endtime = None
        try:
            with self.not_full:
                if self.is_shutdown:
                    _label(f"{op} -> ShutDown")
                    raise ShutDown
                if self.maxsize > 0:
                    while self._qsize() >= self.maxsize:
                        if not block or timed_out or timeout == 0:
                            _label(f"{op} -> Full")
                            raise Full
                        remaining, endtime = _left(timeout, endtime)
                        if remaining is not None and remaining <= 0:
                            raise Full
                        timed_out = not self.not_full._wait(remaining) and timeout is not None
                        if self.is_shutdown:
                            _label(f"{op} -> ShutDown")
                            raise ShutDown
                self._put_one(op, item)
        finally:
            _label(f"end {op}")

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        _check_timeout(timeout)
        op = _op("get", block, timeout)
        if block and timeout is None and self._monitor:
            acquire_when(self.mutex, self._any, "state", self.not_empty._name)
            try:
                if not self._qsize():
                    _label(f"{op} -> ShutDown")
                    raise ShutDown
                return self._get_one(op)
            finally:
                self.mutex.release()
                _label(f"end {op}")
        timed_out = False
        endtime = None
        try:
            with self.not_empty:
                if self.is_shutdown and not self._qsize():
                    _label(f"{op} -> ShutDown")
                    raise ShutDown
                while not self._qsize():
                    if not block or timed_out or timeout == 0:
                        _label(f"{op} -> Empty")
                        raise Empty
                    remaining, endtime = _left(timeout, endtime)
                    if remaining is not None and remaining <= 0:
                        raise Empty
                    timed_out = not self.not_empty._wait(remaining) and timeout is not None
                    if self.is_shutdown and not self._qsize():
                        _label(f"{op} -> ShutDown")
                        raise ShutDown
                return self._get_one(op)
        finally:
            _label(f"end {op}")

    def put_nowait(self, item: Any) -> None:
        return self.put(item, block=False)

    def get_nowait(self) -> Any:
        return self.get(block=False)

    def shutdown(self, immediate: bool = False) -> None:
        """Puts raise ShutDown from now on, and gets once the queue is empty
        (at once with immediate, which drops the items, counting each as a
        task done); wakes every blocked put and get (and join, with
        immediate), as CPython 3.13's."""
        with self.mutex:
            self.is_shutdown = True
            if immediate:
                while self._qsize():
                    self._get()
                    if self.unfinished_tasks > 0:
                        self.unfinished_tasks -= 1
                self.all_tasks_done._notify(len(self.all_tasks_done._waiters))
            self.not_empty._notify(len(self.not_empty._waiters))
            self.not_full._notify(len(self.not_full._waiters))

    __class_getitem__: classmethod = classmethod(types.GenericAlias)

    # the container, which the subclasses change
    def _init(self, maxsize: int) -> None:
        self.queue: Any = deque()

    def _qsize(self) -> int:
        return len(self.queue)

    def _put(self, item: Any) -> None:
        self.queue.append(item)

    def _get(self) -> Any:
        return self.queue.popleft()


class LifoQueue(Queue):
    """The last item put is the first got."""

    def _init(self, maxsize: int) -> None:
        self.queue = []

    def _put(self, item: Any) -> None:
        self.queue.append(item)

    def _get(self) -> Any:
        return self.queue.pop()


class PriorityQueue(Queue):
    """The smallest item first (heapq order)."""

    def _init(self, maxsize: int) -> None:
        self.queue = []

    def _put(self, item: Any) -> None:
        heapq.heappush(self.queue, item)

    def _get(self) -> Any:
        return heapq.heappop(self.queue)


class SimpleQueue:
    """An unbounded FIFO queue, without task_done() and join(): put()
    never blocks (block and timeout are accepted and ignored, as CPython's)."""

    __ploom_handle__ = True  # a SharedCell may hold it

    def __init__(self) -> None:
        self._queue: deque[Any] = deque()
        name = _names.creation_name() or type(self).__name__
        self._mutex = Lock(name=f"{name}.mutex")
        self._not_empty = _condition_of(self._mutex, f"{name}.not_empty")

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        # never blocks: put_nowait reads as put_nowait, a timeout is ignored
        op = _op("put", block, None)
        with self._mutex:
            self._queue.append(item)
            _label(f"{op} {_shown(item)}")
            self._not_empty._notify(1)
        _label(f"end {op}")

    def put_nowait(self, item: Any) -> None:
        return self.put(item, block=False)

    def _any(self) -> bool:
        return bool(self._queue)

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        # CPython's checks the timeout only for a blocking get
        if block:
            _check_timeout(timeout)
        op = _op("get", block, timeout)
        if block and timeout is None:
            acquire_when(self._mutex, self._any, "state", self._not_empty._name)
            try:
                item = self._queue.popleft()
                _label(f"{op} -> {_shown(item)}")
                return item
            finally:
                self._mutex.release()
                _label(f"end {op}")
        # CPython's C queue reads its deadline once and waits the whole
        # timeout first; after a wake-up that found nothing, what is left
        timed_out = False
        endtime = None
        remaining = timeout
        try:
            with self._mutex:
                while not self._queue:
                    if not block or timed_out or timeout == 0:
                        _label(f"{op} -> Empty")
                        raise Empty
                    if timeout is not None:
                        if endtime is None:
                            endtime = _time() + timeout
                        else:
                            remaining = endtime - _time()
                            if remaining <= 0:
                                raise Empty
                    timed_out = not self._not_empty._wait(remaining) and timeout is not None
                item = self._queue.popleft()
                _label(f"{op} -> {_shown(item)}")
                return item
        finally:
            _label(f"end {op}")

    def get_nowait(self) -> Any:
        return self.get(block=False)

    def empty(self) -> bool:
        with self._mutex:
            return not self._queue

    def qsize(self) -> int:
        with self._mutex:
            return len(self._queue)

    __class_getitem__: classmethod = classmethod(types.GenericAlias)
