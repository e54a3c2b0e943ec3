"""Scenarios on ploom's virtual clock (pyext/clock.c), for test_clock.py.

time is imported the ways libraries import it: the module, and names taken
from it at import time (which the worker's clock must already be when
this module is imported)."""

import time
from time import monotonic, perf_counter_ns

import ploom
from ploom import _ploom
from ploom import queue as pqueue
from ploom import threading as pthreading

# at import, in the worker: the clock stands still, and a sleep only
# advances it (nothing really sleeps)
IMPORTED_AT = time.monotonic()
time.sleep(2.5)
AFTER_IMPORT_SLEEP = time.monotonic()


def sleeps_five_seconds():
    start = time.monotonic()
    wall = time.time()
    time.sleep(5.0)
    assert time.monotonic() - start == 5.0, time.monotonic() - start
    assert time.time() - wall == 5.0
    assert perf_counter_ns() - int(start * 1e9) == 5_000_000_000
    # with a second task the sleep is a scheduling point
    t = ploom.Thread(target=lambda: None)
    t.start()
    before = monotonic()
    time.sleep(5)
    assert monotonic() - before == 5.0
    t.join()


def deadline_loop():
    """A waiter whose predicate never becomes true, bounded by a deadline
    on time.monotonic(), and a notifier: without a clock that timeouts
    advance, the loop never ends."""
    cond = pthreading.Condition()
    ready = []

    def waiter():
        timeout = 30.0
        endtime = monotonic() + timeout
        with cond:
            while not ready:
                remaining = endtime - monotonic()
                if remaining <= 0:
                    break
                cond.wait(remaining)

    def notifier():
        with cond:
            cond.notify()

    threads = [ploom.Thread(target=waiter), ploom.Thread(target=notifier)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def read_races_with_sleep():
    """Fails only when A's sleep runs before B's read."""
    start = time.monotonic()

    def a():
        time.sleep(1)

    def b():
        assert time.monotonic() - start < 0.5, "B read the clock after A slept"

    threads = [ploom.Thread(target=a), ploom.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def read_races_with_timeout():
    """Fails only when A's timed acquire times out before B's read: the
    clock advances by the timeout at that step."""
    lock = ploom.Lock()
    lock.acquire()
    start = time.monotonic()

    def a():
        lock.acquire(timeout=2)

    def b():
        assert time.monotonic() - start < 1, "B read the clock after A timed out"

    threads = [ploom.Thread(target=a), ploom.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lock.release()


def two_sleepers_and_a_reader():
    """The reader sees 0, 1, 2 or 3 seconds pass; the end state names it."""
    start = time.monotonic()
    seen = ploom.SharedCell(None)

    def sleeper(s):
        time.sleep(s)

    def reader():
        seen.write(time.monotonic() - start)

    threads = [ploom.Thread(target=sleeper, args=(1,)), ploom.Thread(target=sleeper, args=(2,)),
               ploom.Thread(target=reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    raise AssertionError(f"the reader saw {seen.read()}")


def timeouts_and_reads():
    """An Event.wait that may time out and clock reads in two tasks; the
    end state names what each saw."""
    start = time.monotonic()
    event = pthreading.Event()
    seen = []

    def worker():
        seen.append(("w", event.wait(1.0), time.monotonic() - start))

    def setter():
        event.set()
        seen.append(("s", time.monotonic() - start))

    threads = [ploom.Thread(target=worker), ploom.Thread(target=setter)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    raise AssertionError(f"{sorted(seen, key=str)}")


def queue_get_times_out_once():
    q = pqueue.Queue()
    start = time.monotonic()

    def getter():
        try:
            q.get(timeout=3)
        except pqueue.Empty:
            assert time.monotonic() - start == 3.0, time.monotonic() - start
        else:
            # woken in time (no time passed), or timed out to find the
            # item put meanwhile: the timeout passed, once
            assert time.monotonic() - start in (0.0, 3.0), time.monotonic() - start

    def putter():
        q.put(1)

    threads = [ploom.Thread(target=getter), ploom.Thread(target=putter)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def each_timed_wait_advances_once():
    """Alone, so every timed wait times out: each advances the clock by
    exactly its timeout, once."""
    start = time.monotonic()
    assert not ploom.Lock(name="free").acquire(timeout=0) or True
    held = ploom.Lock()
    held.acquire()
    assert not held.acquire(timeout=1.5)
    assert time.monotonic() - start == 1.5
    assert not held.acquire(blocking=False)  # no timeout: no time
    assert not pthreading.Event().wait(2)
    assert time.monotonic() - start == 3.5
    cond = pthreading.Condition()
    with cond:
        assert not cond.wait(0.25)
        assert not cond.wait_for(lambda: False, timeout=0.25)
    assert time.monotonic() - start == 4.0
    sem = pthreading.Semaphore(0)
    assert not sem.acquire(timeout=1)
    assert time.monotonic() - start == 5.0
    q = pqueue.Queue()
    try:
        q.get(timeout=2)
    except pqueue.Empty:
        pass
    assert time.monotonic() - start == 7.0
    full = pqueue.Queue(1)
    full.put(0)
    try:
        full.put(1, timeout=1)
    except pqueue.Full:
        pass
    assert time.monotonic() - start == 8.0
    _ = _ploom.clock_elapsed_ns()


def joins_a_sleeper():
    """A timed join of a thread that has not finished advances the clock by
    the timeout; one that has finished does not."""
    start = time.monotonic()
    t = ploom.Thread(target=lambda: None)
    t.start()
    t.join(timeout=10)
    passed = time.monotonic() - start
    assert passed == (10.0 if t.is_alive() else 0.0), (passed, t.is_alive())
    t.join()
    raise AssertionError(f"passed {passed}")


def import_clock():
    """What the clock read while the module was imported."""
    assert IMPORTED_AT == 1000.0, IMPORTED_AT
    assert AFTER_IMPORT_SLEEP == 1002.5, AFTER_IMPORT_SLEEP
    assert time.monotonic() == 1002.5
    assert time.time() == 1700000002.5
    assert time.time_ns() == 1700000002500000000
    assert time.perf_counter() == 1002.5
    assert time.monotonic_ns() == 1002500000000


# ---- timed waits keep CPython's deadline on ploom's clock -----------------
# Each raises what it saw; test_clock.py states the outcomes CPython's code
# reaches on ploom's clock, where another task's sleep moves the clock at
# once: a deadline can pass between two readings of one wait, or while a
# waiter is woken for nothing.


def _elapsed_since(start):
    # to the millisecond: the clock's floats sum sleeps and timeouts
    return round(time.monotonic() - start, 3)


def queue_get_deadline():
    """A get(timeout=1) of an empty queue while another task sleeps 2 s and
    then puts: CPython's get reads endtime, then what is left; the sleep
    between the two readings leaves nothing, and Empty comes without a
    wait, 2 s on, where a wait that times out makes it 3 s."""
    q = pqueue.Queue()
    start = time.monotonic()

    def late_putter():
        time.sleep(2)
        q.put("late")

    t = ploom.Thread(target=late_putter)
    t.start()
    try:
        got = q.get(timeout=1)
    except pqueue.Empty:
        got = "Empty"
    t.join()
    raise AssertionError(f"{got} after {_elapsed_since(start)}")


def queue_put_deadline():
    """put's mirror of queue_get_deadline: a put(timeout=1) into a full
    queue while another task sleeps 2 s and then gets."""
    q = pqueue.Queue(maxsize=1)
    q.put("first")
    start = time.monotonic()

    def late_getter():
        time.sleep(2)
        q.get()

    t = ploom.Thread(target=late_getter)
    t.start()
    try:
        q.put("second", timeout=1)
        put = "put"
    except pqueue.Full:
        put = "Full"
    t.join()
    raise AssertionError(f"{put} after {_elapsed_since(start)}")


def _wait_for_a_notify_after(seconds):
    """wait_for(timeout=1) of a predicate that stays false, and a task that
    sleeps seconds and then notifies: a waiter woken for nothing waits for
    what is left of its second (CPython's wait_for), not a second again."""
    cond = pthreading.Condition()
    start = time.monotonic()

    def notifier():
        time.sleep(seconds)
        with cond:
            cond.notify()

    t = ploom.Thread(target=notifier)
    t.start()
    with cond:
        result = cond.wait_for(lambda: False, timeout=1)
    t.join()
    raise AssertionError(f"{result} after {_elapsed_since(start)}")


def wait_for_what_is_left():
    _wait_for_a_notify_after(0.5)


def wait_for_deadline_passed():
    _wait_for_a_notify_after(2)


def semaphore_what_is_left():
    """acquire(timeout=1) of an empty Semaphore while a task sleeps 0.5 s,
    releases, which wakes the waiter, and may take the unit back before the
    waiter has it: the waiter, woken for nothing, waits for what is left of
    its second."""
    sem = pthreading.Semaphore(0)
    start = time.monotonic()

    def releaser():
        time.sleep(0.5)
        sem.release()
        sem.acquire(blocking=False)

    t = ploom.Thread(target=releaser)
    t.start()
    got = sem.acquire(timeout=1)
    t.join()
    raise AssertionError(f"{got} after {_elapsed_since(start)}")
