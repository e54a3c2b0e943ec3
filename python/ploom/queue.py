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
import types
from collections import deque

from ploom import _names
from ploom._ploom import acquire_when
from ploom._ploom import clock_monotonic as _time
from ploom.threading import Lock, _condition_of, _refusing_getattr

__all__ = ["Empty", "Full", "LifoQueue", "PriorityQueue", "Queue", "ShutDown", "SimpleQueue"]

Empty = _std.Empty
Full = _std.Full
ShutDown = _std.ShutDown


__getattr__ = _refusing_getattr(_std, __all__)


# A timeout of 0 gives up without waiting, as CPython's, whose deadline has
# passed before its first wait.
def _check_timeout(timeout):
    if timeout is not None and timeout < 0:
        raise ValueError("'timeout' must be a non-negative number")


def _left(timeout, endtime):
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

    def __init__(self, maxsize=0):
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

    def task_done(self):
        with self.all_tasks_done:
            unfinished = self.unfinished_tasks - 1
            if unfinished <= 0:
                if unfinished < 0:
                    raise ValueError("task_done() called too many times")
                self.all_tasks_done._notify(len(self.all_tasks_done._waiters))
            self.unfinished_tasks = unfinished

    def _all_done(self):
        return not self.unfinished_tasks

    def _room(self):
        return self.is_shutdown or not 0 < self.maxsize <= self._qsize()

    def _any(self):
        return self.is_shutdown or self._qsize()

    def join(self):
        if self._monitor:
            acquire_when(self.mutex, self._all_done)
            self.mutex.release()
            return
        with self.all_tasks_done:
            while self.unfinished_tasks:
                self.all_tasks_done._wait(None)

    def qsize(self):
        with self.mutex:
            return self._qsize()

    def empty(self):
        with self.mutex:
            return not self._qsize()

    def full(self):
        with self.mutex:
            return 0 < self.maxsize <= self._qsize()

    def put(self, item, block=True, timeout=None):
        _check_timeout(timeout)
        if block and timeout is None and self._monitor:
            acquire_when(self.mutex, self._room)
            try:
                if self.is_shutdown:
                    raise ShutDown
                self._put(item)
                self.unfinished_tasks += 1
                self.not_empty._notify(1)
            finally:
                self.mutex.release()
            return
        timed_out = False
        endtime = None
        with self.not_full:
            if self.is_shutdown:
                raise ShutDown
            if self.maxsize > 0:
                while self._qsize() >= self.maxsize:
                    if not block or timed_out or timeout == 0:
                        raise Full
                    remaining, endtime = _left(timeout, endtime)
                    if remaining is not None and remaining <= 0:
                        raise Full
                    timed_out = not self.not_full._wait(remaining) and timeout is not None
                    if self.is_shutdown:
                        raise ShutDown
            self._put(item)
            self.unfinished_tasks += 1
            self.not_empty._notify(1)

    def get(self, block=True, timeout=None):
        _check_timeout(timeout)
        if block and timeout is None and self._monitor:
            acquire_when(self.mutex, self._any)
            try:
                if not self._qsize():
                    raise ShutDown
                item = self._get()
                self.not_full._notify(1)
                return item
            finally:
                self.mutex.release()
        timed_out = False
        endtime = None
        with self.not_empty:
            if self.is_shutdown and not self._qsize():
                raise ShutDown
            while not self._qsize():
                if not block or timed_out or timeout == 0:
                    raise Empty
                remaining, endtime = _left(timeout, endtime)
                if remaining is not None and remaining <= 0:
                    raise Empty
                timed_out = not self.not_empty._wait(remaining) and timeout is not None
                if self.is_shutdown and not self._qsize():
                    raise ShutDown
            item = self._get()
            self.not_full._notify(1)
            return item

    def put_nowait(self, item):
        return self.put(item, block=False)

    def get_nowait(self):
        return self.get(block=False)

    def shutdown(self, immediate=False):
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

    __class_getitem__ = classmethod(types.GenericAlias)

    # the container, which the subclasses change
    def _init(self, maxsize):
        self.queue = deque()

    def _qsize(self):
        return len(self.queue)

    def _put(self, item):
        self.queue.append(item)

    def _get(self):
        return self.queue.popleft()


class LifoQueue(Queue):
    """The last item put is the first got."""

    def _init(self, maxsize):
        self.queue = []

    def _put(self, item):
        self.queue.append(item)

    def _get(self):
        return self.queue.pop()


class PriorityQueue(Queue):
    """The smallest item first (heapq order)."""

    def _init(self, maxsize):
        self.queue = []

    def _put(self, item):
        heapq.heappush(self.queue, item)

    def _get(self):
        return heapq.heappop(self.queue)


class SimpleQueue:
    """An unbounded FIFO queue, without task_done() and join(): put()
    never blocks (block and timeout are accepted and ignored, as CPython's)."""

    __ploom_handle__ = True  # a SharedCell may hold it

    def __init__(self):
        self._queue = deque()
        name = _names.creation_name() or type(self).__name__
        self._mutex = Lock(name=f"{name}.mutex")
        self._not_empty = _condition_of(self._mutex, f"{name}.not_empty")

    def put(self, item, block=True, timeout=None):
        with self._mutex:
            self._queue.append(item)
            self._not_empty._notify(1)

    def put_nowait(self, item):
        return self.put(item, block=False)

    def _any(self):
        return bool(self._queue)

    def get(self, block=True, timeout=None):
        # CPython's checks the timeout only for a blocking get
        if block:
            _check_timeout(timeout)
        if block and timeout is None:
            acquire_when(self._mutex, self._any)
            try:
                return self._queue.popleft()
            finally:
                self._mutex.release()
        # CPython's C queue reads its deadline once and waits the whole
        # timeout first; after a wake-up that found nothing, what is left
        timed_out = False
        endtime = None
        remaining = timeout
        with self._mutex:
            while not self._queue:
                if not block or timed_out or timeout == 0:
                    raise Empty
                if timeout is not None:
                    if endtime is None:
                        endtime = _time() + timeout
                    else:
                        remaining = endtime - _time()
                        if remaining <= 0:
                            raise Empty
                timed_out = not self._not_empty._wait(remaining) and timeout is not None
            return self._queue.popleft()

    def get_nowait(self):
        return self.get(block=False)

    def empty(self):
        with self._mutex:
            return not self._queue

    def qsize(self):
        with self._mutex:
            return len(self._queue)

    __class_getitem__ = classmethod(types.GenericAlias)
