"""Scenarios of the time models (DESIGN.md, "Time: a deterministic
simulation"), for test_time_model.py: safety-net timeouts, spin-waits,
deadlines and a real timeout, as test suites write them."""

import sys
import time

import ploom
from ploom import queue as pqueue
from ploom import threading as pthreading


def event_safety_net():
    """A wait(300) that the other task satisfies: a safety net."""
    ev = pthreading.Event()
    got = []
    t = pthreading.Thread(target=lambda: got.append(ev.wait(timeout=300)))
    t.start()
    ev.set()
    t.join()
    assert got == [True], f"the safety net timed out: {got}"


def _spin_on(pause, *args):
    ready = ploom.SharedCell(False)
    t = pthreading.Thread(target=lambda: ready.write(True))
    t.start()
    while not ready.read():
        pause(*args)
    t.join()


def spin_sleep_ms():
    _spin_on(time.sleep, 0.001)


def spin_sleep_min():
    """A sleep below the clock's nanosecond: it does not move the clock."""
    _spin_on(time.sleep, sys.float_info.min)


def spin_sleep_zero():
    _spin_on(time.sleep, 0)


def yields_then_sets():
    """The setter yields before it sets: the spinner must let it."""
    ready = ploom.SharedCell(False)

    def setter():
        time.sleep(0)
        ready.write(True)

    t = pthreading.Thread(target=setter)
    t.start()
    while not ready.read():
        time.sleep(0)
    t.join()


def two_spinners():
    """Each waits for the other's flag in a sleep(0) loop: both end."""
    a, b = ploom.SharedCell(False), ploom.SharedCell(False)

    def other():
        b.write(True)
        while not a.read():
            time.sleep(0)

    t = pthreading.Thread(target=other)
    t.start()
    while not b.read():
        time.sleep(0)
    a.write(True)
    t.join()


def deadline_after_sleep():
    """A waiter with a 30 s deadline, notified after the main task slept 5 s."""
    cond = pthreading.Condition()
    got = []

    def waiter():
        with cond:
            got.append(cond.wait(timeout=30))

    t = pthreading.Thread(target=waiter)
    t.start()
    time.sleep(5)
    with cond:
        cond.notify_all()
    t.join()
    assert got == [True], f"the waiter timed out: {got}"


def lock_times_out():
    """acquire(timeout=1) while the holder sleeps 2 s."""
    lock = pthreading.Lock()
    holding = pthreading.Event()

    def holder():
        with lock:
            holding.set()
            time.sleep(2)

    t = pthreading.Thread(target=holder)
    t.start()
    holding.wait()
    start = time.monotonic()
    got = lock.acquire(timeout=1)
    assert got, f"the acquire timed out after {time.monotonic() - start} s"


def join_then_alive():
    """join(0.1) of a thread that waits for the main task: still alive."""
    go = pthreading.Event()
    t = pthreading.Thread(target=go.wait)
    t.start()
    t.join(0.1)
    assert t.is_alive(), "the thread ended before the join's deadline"
    go.set()
    t.join()


def queue_get_safety_net():
    q = pqueue.Queue()
    t = pthreading.Thread(target=q.put, args=(1,))
    t.start()
    assert q.get(timeout=1) == 1
    t.join()


def sleepers_wake_in_deadline_order():
    order = []

    def sleeper(d):
        time.sleep(d)
        order.append(d)

    threads = [pthreading.Thread(target=sleeper, args=(d,)) for d in (3, 1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert order == [1, 2, 3], order
    assert time.monotonic() == 1003.0, time.monotonic()


def same_instant_is_a_choice():
    """Two sleeps due at one instant may end in either order."""
    order = []

    def sleeper(name):
        time.sleep(1)
        order.append(name)

    threads = [pthreading.Thread(target=sleeper, args=(n,)) for n in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert order == ["a", "b"], order


def spin_outlasts_a_timeout():
    """The spinner's sleep(0) loop waits for what the main task does once
    its own wait timed out: the clock must move while it spins."""
    ready = ploom.SharedCell(False)
    ev = pthreading.Event()

    def spinner():
        while not ready.read():
            time.sleep(0)

    t = pthreading.Thread(target=spinner)
    t.start()
    assert not ev.wait(timeout=1)
    ready.write(True)
    t.join()
    assert time.monotonic() == 1001.0, time.monotonic()


def _reads_then_increment(reads):
    lock = ploom.Lock()
    count = ploom.SharedCell(0)

    def work():
        for _ in range(reads):
            time.monotonic()
        with lock:
            count.write(count.read() + 1)

    threads = [ploom.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert count.read() == 2, count.read()


def fifty_reads_then_increment():
    """Two tasks that each read the clock 50 times before a locked
    increment: under the idle model no read can return another value in
    another order, so none is a scheduling point."""
    _reads_then_increment(50)


def one_read_then_increment():
    _reads_then_increment(1)


def no_reads_then_increment():
    _reads_then_increment(0)


def reads_around_a_jump():
    """A read after a sleep sees the clock the jump moved; the other
    task's read before its own sleep sees it unmoved: the reads' values
    follow the jumps, whatever the order of the steps between."""
    seen = ploom.SharedCell(())

    def reader(pause):
        before = time.monotonic()
        time.sleep(pause)
        after = time.monotonic()
        seen.write(seen.read() + ((pause, before, after),))

    threads = [ploom.Thread(target=reader, args=(p,)) for p in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seen.read()) == [(1, 1000.0, 1001.0), (2, 1000.0, 1002.0)], seen.read()
