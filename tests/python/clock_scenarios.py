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
