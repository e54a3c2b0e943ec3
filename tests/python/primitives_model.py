"""An independent model of ploom's scheduling, for the exact schedule counts
of ploom.threading's and ploom.queue's primitives (test_primitive_counts.py).

It shares nothing with the extension, the worker or the utilities: a task is
a Python generator that yields the ploom operations it makes, and
``explore()`` runs every order of them by plain depth-first search, starting
each schedule afresh and following a list of choices, under the rules of
DESIGN.md ("Exploration semantics"):

- task 0 runs from its first operation; a started thread's first step is a
  *begin* point before its first operation; there is no point at an exit;
- a blocking acquire is enabled while its lock is free (an acquire "when",
  ploom.queue's wait, also needs its predicate true), a blocking join once
  its thread has finished; everything else, a non-blocking or timed acquire
  included, is always enabled (a timed acquire of a held lock returns False:
  it timed out);
- the clock (seconds from 1000.0, time.monotonic()'s start) moves when a
  timed acquire times out, by its timeout, and when a task sleeps; once a
  second task exists a reading and a sleep are steps, before that neither
  is (DESIGN.md, "Time"), which ``now()`` and ``sleep()`` below state;
- a step where more than one task is enabled is a choice; a schedule ends
  when every task has finished (pass), when an exception escapes a task
  (its type and message), or when no task is enabled (deadlock).

The primitives below state, operation by operation, what ploom.threading's
do: which steps each method takes and when it blocks.  The counts the model
gives are what the real extension must give, schedule for schedule.
"""

from __future__ import annotations

import collections


class _Stop(Exception):
    """A schedule ended: args[0] is its outcome summary."""


class World:
    """One schedule's state.  Handed to each task's generator function."""

    def __init__(self):
        self.holders = []  # per lock: the task holding it, or None
        self.cells = []
        self.tasks = []  # [generator, pending op or None when finished]
        self.current = 0
        self.clock = 1000.0

    # objects, made without a step
    def lock(self, held=False):
        self.holders.append(self.current if held else None)
        return len(self.holders) - 1

    def cell(self, value):
        self.cells.append(value)
        return len(self.cells) - 1

    # what each operation does, and when it may run
    def enabled(self, task):
        op = self.tasks[task][1]
        if op is None:
            return False
        if op[0] == "acquire" and op[2] == "blocking":
            return self.holders[op[1]] is None
        if op[0] == "acquire" and op[2] == "when":
            return self.holders[op[1]] is None and bool(op[3]())
        if op[0] == "join":
            return self.tasks[op[1]][1] is None
        return True

    def run(self, task, op):
        kind = op[0]
        if kind == "acquire":
            if self.holders[op[1]] is None:
                self.holders[op[1]] = task
                return True
            if op[2] == "timed":  # timed out: its timeout passed
                self.clock += op[3]
            return False  # only a non-blocking or timed one runs on a held lock
        if kind == "release":
            if self.holders[op[1]] is None:
                raise RuntimeError("release unlocked lock")
            self.holders[op[1]] = None
            return None
        if kind == "locked":
            return self.holders[op[1]] is not None
        if kind == "read":
            return self.cells[op[1]]
        if kind == "write":
            self.cells[op[1]] = op[2]
            return None
        if kind == "clock":
            return self.clock
        if kind == "sleep":
            self.clock += op[1]
            return None
        if kind == "start":
            self.tasks.append([op[1](self), ("begin",)])
            return len(self.tasks) - 1
        return None  # begin, join, yield_now

    def advance(self, task, value, error=None):
        """Runs task's code up to its next operation (or its end), the
        operation having returned value or raised error."""
        self.current = task
        entry = self.tasks[task]
        try:
            entry[1] = entry[0].throw(error) if error is not None else entry[0].send(value)
        except StopIteration:
            entry[1] = None
        except Exception as exc:  # noqa: BLE001 - the schedule's failure
            raise _Stop(f"builtins.{type(exc).__qualname__}: {exc}") from None


def _one_schedule(scenario, choices):
    """Runs one schedule, taking choices[i] (an index into the enabled
    tasks, in id order) at the i-th choice and the first enabled task past
    them.  Returns (outcome summary, number of tasks enabled at each choice)."""
    world = World()
    world.tasks.append([scenario(world), None])
    widths = []
    try:
        world.advance(0, None)
        while True:
            enabled = [t for t in range(len(world.tasks)) if world.enabled(t)]
            if not enabled:
                if all(entry[1] is None for entry in world.tasks):
                    return "pass", widths
                return "deadlock", widths
            if len(enabled) > 1:
                index = choices[len(widths)] if len(widths) < len(choices) else 0
                widths.append(len(enabled))
                task = enabled[index]
            else:
                task = enabled[0]
            world.current = task
            try:
                result, error = world.run(task, world.tasks[task][1]), None
            except RuntimeError as exc:  # raised at the operation, in the task's code
                result, error = None, exc
            world.advance(task, result, error)
    except _Stop as stop:
        return stop.args[0], widths


def explore(scenario):
    """Every schedule of scenario by DFS: a Counter of outcome summaries
    ("pass", "builtins.AssertionError: ...", "deadlock")."""
    outcomes = collections.Counter()
    choices = []
    while True:
        outcome, widths = _one_schedule(scenario, choices)
        outcomes[outcome] += 1
        choices = choices + [0] * (len(widths) - len(choices))
        # the next schedule in DFS order: the deepest choice with an untried
        # alternative takes it, and everything after starts over
        while choices and choices[-1] + 1 >= widths[len(choices) - 1]:
            choices.pop()
        if not choices:
            return outcomes
        choices[-1] += 1


def now(w):
    """time.monotonic(): a step once a second task exists."""
    if len(w.tasks) < 2:
        return w.clock
    return (yield ("clock",))


def sleep(w, seconds):
    """time.sleep(seconds): a step once a second task exists."""
    if len(w.tasks) < 2:
        w.clock += seconds
        return
    yield ("sleep", seconds)


# ---- the primitives, operation by operation ----------------------------------
# Each method is a generator: `yield op` makes one operation and receives its
# result.  Plain attributes are state that ploom.threading reads and writes
# only while the primitive's lock is held: no operation of their own.


class RLock:
    def __init__(self, w):
        self.w, self.lock, self.owner, self.count = w, w.lock(), None, 0

    def acquire(self, blocking=True):
        me = self.w.current
        if self.owner == me:
            self.count += 1
            return True
        if not (yield ("acquire", self.lock, "blocking" if blocking else "nonblocking")):
            return False
        self.owner, self.count = me, 1
        return True

    def release(self):
        if self.owner != self.w.current:
            raise RuntimeError("cannot release un-acquired lock")
        self.count -= 1
        if not self.count:
            self.owner = None
            yield ("release", self.lock)


class Condition:
    """Over an RLock (lock=None) or a plain lock id that only the primitives
    below use (no ownership check)."""

    def __init__(self, w, plain_lock=None):
        self.w, self.waiters = w, collections.deque()
        self.rlock = RLock(w) if plain_lock is None else None
        self.plain = plain_lock

    def enter(self):
        if self.rlock:
            yield from self.rlock.acquire()
        else:
            yield ("acquire", self.plain, "blocking")

    def exit(self):
        if self.rlock:
            yield from self.rlock.release()
        else:
            yield ("release", self.plain)

    def wait(self, timeout=None):
        if timeout is None:  # one step: the lock taken back once notified
            woken = [False]
            self.waiters.append(woken)
            lock = self.rlock.lock if self.rlock else self.plain
            if self.rlock:
                saved = self.rlock.count, self.rlock.owner
                self.rlock.count, self.rlock.owner = 0, None
            yield ("release", lock)
            yield ("acquire", lock, "when", lambda: woken[0])
            if self.rlock:
                self.rlock.count, self.rlock.owner = saved
            return True
        waiter = self.w.lock(held=True)
        self.waiters.append(waiter)
        if self.rlock:  # release it whole, however deep
            saved = self.rlock.count, self.rlock.owner
            self.rlock.count, self.rlock.owner = 0, None
            yield ("release", self.rlock.lock)
        else:
            yield ("release", self.plain)
        if timeout is None:
            woken = yield ("acquire", waiter, "blocking")
        elif timeout > 0:
            woken = yield ("acquire", waiter, "timed", timeout)
        else:
            woken = yield ("acquire", waiter, "nonblocking")
        if self.rlock:
            yield ("acquire", self.rlock.lock, "blocking")
            self.rlock.count, self.rlock.owner = saved
        else:
            yield ("acquire", self.plain, "blocking")
        if not woken and waiter in self.waiters:
            self.waiters.remove(waiter)
        return woken

    def wait_for(self, predicate, timeout=None):
        # CPython's: the deadline read before the first wait, then each
        # wait for what is left; none read after a wait that timed out,
        # which moved the clock past it
        endtime, waittime = None, timeout
        result = predicate()
        while not result:
            if waittime is not None:
                if endtime is None:
                    endtime = (yield from now(self.w)) + waittime
                else:
                    waittime = endtime - (yield from now(self.w))
                    if waittime <= 0:
                        break
            if not (yield from self.wait(waittime)) and waittime is not None:
                return predicate()
            result = predicate()
        return result

    def notify(self, n=1):
        for _ in range(min(n, len(self.waiters))):
            waiter = self.waiters.popleft()
            if isinstance(waiter, list):  # an untimed wait's: no step
                waiter[0] = True
            else:
                yield ("release", waiter)

    def notify_all(self):
        yield from self.notify(len(self.waiters))


class Semaphore:
    def __init__(self, w, value=1, bounded=False):
        self.cond = Condition(w, w.lock())
        self.value, self.initial, self.bounded = value, value, bounded

    def acquire(self, timeout=None):
        if timeout is None:  # one step, once a unit is there
            yield ("acquire", self.cond.plain, "when", lambda: self.value > 0)
            self.value -= 1
            yield from self.cond.exit()
            return True
        yield from self.cond.enter()
        endtime = None
        while self.value == 0:
            if endtime is None:
                endtime = (yield from now(self.cond.w)) + timeout
            else:
                timeout = endtime - (yield from now(self.cond.w))
                if timeout <= 0:
                    yield from self.cond.exit()
                    return False
            if not (yield from self.cond.wait(timeout)) and self.value == 0:
                yield from self.cond.exit()
                return False
        self.value -= 1
        yield from self.cond.exit()
        return True

    def release(self):
        yield from self.cond.enter()
        if self.bounded and self.value + 1 > self.initial:
            yield from self.cond.exit()
            raise ValueError("Semaphore released too many times")
        self.value += 1
        yield from self.cond.notify(1)
        yield from self.cond.exit()


class Event:
    def __init__(self, w):
        self.cond, self.cell, self.flag = Condition(w, w.lock()), w.cell(False), False

    def is_set(self):
        return (yield ("read", self.cell))

    def set(self):
        yield from self.cond.enter()
        self.flag = True
        yield ("write", self.cell, True)
        yield from self.cond.notify_all()
        yield from self.cond.exit()

    def clear(self):
        yield from self.cond.enter()
        self.flag = False
        yield ("write", self.cell, False)
        yield from self.cond.exit()

    def wait(self, timeout=None):
        if timeout is None:  # one step, once the flag is set
            yield ("acquire", self.cond.plain, "when", lambda: self.flag)
            yield ("release", self.cond.plain)
            return True
        yield from self.cond.enter()
        signaled = self.flag
        if not signaled:
            signaled = yield from self.cond.wait(timeout)
        yield from self.cond.exit()
        return signaled


class Barrier:
    """Barrier(parties) without an action, reset or abort."""

    def __init__(self, w, parties, timeout=None):
        self.cond = Condition(w, w.lock())
        self.parties, self.timeout, self.state, self.count = parties, timeout, 0, 0

    def wait(self):
        c = self.cond
        # entering waits, in one acquire "when", for the last round's tasks
        # to leave (draining)
        yield ("acquire", c.plain, "when", lambda: self.state != 1)
        broken = self.state < 0
        index = self.count
        if not broken:
            self.count += 1
            if index + 1 == self.parties:
                self.state = 1
                yield from c.notify_all()
            elif self.timeout is None:
                # an untimed wait is one acquire "when" too
                yield ("release", c.plain)
                yield ("acquire", c.plain, "when", lambda: self.state != 0)
            elif not (yield from c.wait_for(lambda: self.state != 0, self.timeout)):
                self.state = -2
                yield from c.notify_all()
                broken = True
            broken = broken or self.state < 0
            self.count -= 1
            if self.count == 0 and self.state == 1:
                self.state = 0
                yield from c.notify_all()
        yield from c.exit()
        if broken:
            raise RuntimeError("broken barrier")
        return index


class ShutDown(Exception):
    """A shut-down queue's get or put."""


class Queue:
    """Queue(maxsize): put, get, task_done, join, shutdown; the conditions
    share one lock."""

    def __init__(self, w, maxsize=0):
        mutex = w.lock()
        self.not_empty, self.not_full, self.all_done = (Condition(w, mutex) for _ in range(3))
        self.mutex, self.maxsize, self.items, self.unfinished = mutex, maxsize, collections.deque(), 0
        self.mutex_w = w
        self.is_shutdown = False

    # a blocking put, get or join with no timeout waits in one acquire of
    # the mutex, enabled once its wait is over: no condition wait
    def put(self, item):
        yield ("acquire", self.mutex, "when", lambda: self.is_shutdown or not 0 < self.maxsize <= len(self.items))
        if self.is_shutdown:
            yield ("release", self.mutex)
            raise ShutDown
        while 0 < self.maxsize <= len(self.items):
            yield from self.not_full.wait()
            if self.is_shutdown:
                yield ("release", self.mutex)
                raise ShutDown
        self.items.append(item)
        self.unfinished += 1
        yield from self.not_empty.notify(1)
        yield ("release", self.mutex)

    def get(self, timeout=None):
        if timeout is None:
            yield ("acquire", self.mutex, "when", lambda: self.is_shutdown or self.items)
        else:
            yield ("acquire", self.mutex, "blocking")
        timed_out, endtime = False, None
        if self.is_shutdown and not self.items:
            yield ("release", self.mutex)
            raise ShutDown
        while not self.items:
            remaining = None
            if timeout is not None and not timed_out:
                # CPython's endtime, read once it must wait, and what is left
                if endtime is None:
                    endtime = (yield from now(self.mutex_w)) + timeout
                remaining = endtime - (yield from now(self.mutex_w))
            if timed_out or (remaining is not None and remaining <= 0):
                yield ("release", self.mutex)
                raise RuntimeError("empty")
            timed_out = not (yield from self.not_empty.wait(remaining)) and timeout is not None
            if self.is_shutdown and not self.items:
                yield ("release", self.mutex)
                raise ShutDown
        item = self.items.popleft()
        yield from self.not_full.notify(1)
        yield ("release", self.mutex)
        return item

    def task_done(self):
        yield ("acquire", self.mutex, "blocking")
        self.unfinished -= 1
        if self.unfinished == 0:
            yield from self.all_done.notify_all()
        yield ("release", self.mutex)

    def join(self):
        yield ("acquire", self.mutex, "when", lambda: not self.unfinished)
        while self.unfinished:
            yield from self.all_done.wait()
        yield ("release", self.mutex)

    def shutdown(self, immediate=False):
        yield ("acquire", self.mutex, "blocking")
        self.is_shutdown = True
        if immediate:
            while self.items:
                self.items.popleft()
                self.unfinished = max(self.unfinished - 1, 0)
            yield from self.all_done.notify_all()
        yield from self.not_empty.notify_all()
        yield from self.not_full.notify_all()
        yield ("release", self.mutex)


class SimpleQueue(Queue):
    """SimpleQueue: put takes the steps of an unbounded Queue's (the task
    count it keeps here is never read); get(timeout) those of CPython's C
    queue, which reads its deadline once and waits the whole timeout first."""

    def __init__(self, w):
        super().__init__(w)

    def get(self, timeout=None):
        if timeout is None:
            item = yield from super().get()
            return item
        yield ("acquire", self.mutex, "blocking")
        endtime, remaining = None, timeout
        while not self.items:
            if endtime is None:
                endtime = (yield from now(self.mutex_w)) + timeout
            else:
                remaining = endtime - (yield from now(self.mutex_w))
                if remaining <= 0:
                    yield ("release", self.mutex)
                    raise RuntimeError("empty")
            if not (yield from self.not_empty.wait(remaining)) and not self.items:
                yield ("release", self.mutex)
                raise RuntimeError("empty")
        item = self.items.popleft()
        yield ("release", self.mutex)
        return item
