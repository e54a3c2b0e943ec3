"""Exact schedule counts of ploom.threading's and ploom.queue's primitives,
against an independent model (primitives_model.py).

Each scenario is written twice: for ploom (a module-level function, here
or in test_threading.py, which ploom-explore -k runs through the worker)
and for the model (a
generator over the model's World).  Plain DFS must give, outcome for
outcome, the number of schedules the model counts.  The model's timed waits
are the stress model's (a timeout is a choice at any step), so ploom runs
them with timeouts="any".  The counts are printed in the table of
docs/guarantees.rst ("The reference counts").
"""

import subprocess

import pytest

import ploom
import ploom.queue as pqueue
import ploom.threading as pthreading
import primitives_model as model
from ploom._utility import find_utility, loads_strict
from test_threading import (
    condition_if,
    condition_missed,
    event_set_clear,
    event_timed_wait,
    small_barrier_timed,
    small_barrier_twice,
    small_condition_wait_for,
)

# ---- the scenarios, for ploom ---------------------------------------------


def _counter(sem):
    count = ploom.SharedCell(0)

    def work():
        with sem:
            count.write(count.read() + 1)

    t = ploom.Thread(target=work)
    t.start()
    work()
    t.join()
    assert count.read() == 2, "lost update"


def semaphore_one():
    _counter(pthreading.Semaphore(1))


def semaphore_two():
    _counter(pthreading.Semaphore(2))


def bounded_over_release():
    sem = pthreading.BoundedSemaphore(1)

    def user():
        sem.acquire()
        sem.release()

    t = ploom.Thread(target=user)
    t.start()
    sem.release()
    t.join()


def rlock_reentrant():
    lock = pthreading.RLock()
    count = ploom.SharedCell(0)

    def work():
        with lock:
            with lock:
                count.write(count.read() + 1)

    t = ploom.Thread(target=work)
    t.start()
    work()
    t.join()
    assert count.read() == 2, "lost update"


def queue_two_items():
    q = pqueue.Queue(maxsize=1)

    def consumer():
        for _ in range(2):
            q.get()
            q.task_done()

    t = ploom.Thread(target=consumer)
    t.start()
    q.put("a")
    q.put("b")
    q.join()
    t.join()


def simple_queue_timed():
    q = pqueue.SimpleQueue()

    def producer():
        q.put("a")
        q.put_nowait("b")

    t = ploom.Thread(target=producer)
    t.start()
    got = []
    for _ in range(2):
        try:
            got.append(q.get(timeout=3600))
        except pqueue.Empty:
            got.append(None)
    t.join()
    assert got == ["a", "b"], f"got {got}"


def queue_shutdown_immediate():
    q = pqueue.Queue()
    got = ploom.SharedCell("nothing")

    def consumer():
        try:
            got.write(q.get())
        except pqueue.ShutDown:
            got.write("shut down")

    t = ploom.Thread(target=consumer)
    t.start()
    q.put("a")
    q.shutdown(immediate=True)
    t.join()
    assert got.read() == "a", got.read()


def timer_cancel():
    fired = ploom.SharedCell(False)
    timer = pthreading.Timer(3600, fired.write, args=(True,))
    timer.start()
    timer.cancel()
    timer.join()
    assert not fired.read(), "fired"


def atexit_stops_worker():
    q = pqueue.Queue()

    def worker():
        while q.get() is not None:
            pass

    # runs in task 0 once this function has returned
    pthreading._register_atexit(q.put, None)
    ploom.Thread(target=worker).start()
    q.put("work")


def excepthook_records():
    seen = ploom.SharedCell(None)
    pthreading.excepthook = lambda args: seen.write(str(args.exc_value))

    def boom():
        seen.read()
        raise ValueError("boom")

    t = ploom.Thread(target=boom)
    t.start()
    seen.write("main")
    t.join()
    assert seen.read() == "boom", seen.read()


# ---- the same, for the model ----------------------------------------------
# (fail() rather than assert: pytest rewrites this module's asserts, which
# would add its explanation to the message)


def fail(message):
    raise AssertionError(message)


def m_event_timed(w):
    ready = model.Event(w)

    def setter(w):
        yield from ready.set()

    t = yield ("start", setter)
    woken = yield from ready.wait(3600)
    yield ("join", t)
    if not woken:
        fail("timed out")


def m_event_set_clear(w):
    ready = model.Event(w)
    log, after = w.cell(0), w.cell(None)

    def setter(w):
        yield from ready.set()
        yield from ready.clear()
        yield ("write", after, (yield ("read", log)))

    t = yield ("start", setter)
    if not (yield from ready.wait()):
        fail("returned False")
    yield ("write", log, 1)
    yield ("join", t)
    if (yield ("read", after)) != 1:
        fail("the setter read before the waiter wrote")


def m_condition_missed(w):
    cond = model.Condition(w)
    seen = w.cell(0)

    def put(w):
        yield ("write", seen, 1)
        yield from cond.enter()
        yield from cond.notify()
        yield from cond.exit()

    t = yield ("start", put)
    yield from cond.enter()
    yield from cond.wait()
    yield from cond.exit()
    if (yield ("read", seen)) != 1:
        fail("woken before the write")
    yield ("join", t)


def m_condition_if(w):
    cond = model.Condition(w)
    box = []

    def take(w):
        yield from cond.enter()
        if not box:
            yield from cond.wait()
        if not box:
            yield from cond.exit()  # the with statement's, on the way out
            raise IndexError("pop from empty list")
        box.pop()
        yield from cond.exit()

    t = yield ("start", take)
    yield from cond.enter()
    box.append(1)
    yield from cond.notify()
    yield from cond.exit()
    yield from take(w)
    yield from cond.enter()
    box.append(2)
    yield from cond.notify()
    yield from cond.exit()
    yield ("join", t)


def _m_counter(w, sem):
    count = w.cell(0)

    def work(w):
        yield from sem.acquire()
        value = yield ("read", count)
        yield ("write", count, value + 1)
        yield from sem.release()

    t = yield ("start", work)
    yield from work(w)
    yield ("join", t)
    if (yield ("read", count)) != 2:
        fail("lost update")


def m_semaphore_one(w):
    yield from _m_counter(w, model.Semaphore(w, 1))


def m_semaphore_two(w):
    yield from _m_counter(w, model.Semaphore(w, 2))


def m_bounded_over_release(w):
    sem = model.Semaphore(w, 1, bounded=True)

    def user(w):
        yield from sem.acquire()
        yield from sem.release()

    t = yield ("start", user)
    yield from sem.release()
    yield ("join", t)


def m_rlock_reentrant(w):
    lock = model.RLock(w)
    count = w.cell(0)

    def work(w):
        yield from lock.acquire()
        yield from lock.acquire()
        value = yield ("read", count)
        yield ("write", count, value + 1)
        yield from lock.release()
        yield from lock.release()

    t = yield ("start", work)
    yield from work(w)
    yield ("join", t)
    if (yield ("read", count)) != 2:
        fail("lost update")


def m_barrier_twice(w):
    barrier = model.Barrier(w, 2)
    indices = w.cell(())

    def party(w):
        first = yield from barrier.wait()
        second = yield from barrier.wait()
        value = yield ("read", indices)
        yield ("write", indices, value + ((first, second),))

    t = yield ("start", party)
    yield from party(w)
    yield ("join", t)
    if len((yield ("read", indices))) != 2:
        fail("an update was lost")


def m_barrier_timed(w):
    barrier = model.Barrier(w, 2, timeout=3600)
    broken = w.cell(False)

    def party(w):
        try:
            yield from barrier.wait()
        except RuntimeError:
            yield ("write", broken, True)

    t = yield ("start", party)
    yield from party(w)
    yield ("join", t)
    if (yield ("read", broken)):
        fail("broken")


def m_queue_two_items(w):
    q = model.Queue(w, maxsize=1)

    def consumer(w):
        for _ in range(2):
            yield from q.get()
            yield from q.task_done()

    t = yield ("start", consumer)
    yield from q.put("a")
    yield from q.put("b")
    yield from q.join()
    yield ("join", t)


def m_condition_wait_for(w):
    cond = model.Condition(w)
    box = []

    def put(w):
        yield from cond.enter()
        box.append(1)
        yield from cond.notify_all()
        yield from cond.exit()

    t = yield ("start", put)
    yield from cond.enter()
    got = yield from cond.wait_for(lambda: box, 3600)
    yield from cond.exit()
    yield ("join", t)
    if not got:
        fail("timed out")


def m_simple_queue_timed(w):
    q = model.SimpleQueue(w)

    def producer(w):
        yield from q.put("a")
        yield from q.put("b")

    t = yield ("start", producer)
    got = []
    for _ in range(2):
        try:
            got.append((yield from q.get(3600)))
        except RuntimeError:
            got.append(None)
    yield ("join", t)
    if got != ["a", "b"]:
        fail(f"got {got}")


def m_queue_shutdown_immediate(w):
    q = model.Queue(w)
    got = w.cell("nothing")

    def consumer(w):
        try:
            item = yield from q.get()
        except model.ShutDown:
            item = "shut down"
        yield ("write", got, item)

    t = yield ("start", consumer)
    yield from q.put("a")
    yield from q.shutdown(immediate=True)
    yield ("join", t)
    value = yield ("read", got)
    if value != "a":
        fail(value)


def m_timer_cancel(w):
    finished = model.Event(w)
    fired = w.cell(False)

    def timer(w):
        yield from finished.wait(3600)
        if not (yield from finished.is_set()):
            yield ("write", fired, True)
        yield from finished.set()

    t = yield ("start", timer)
    yield from finished.set()
    yield ("join", t)
    if (yield ("read", fired)):
        fail("fired")


def m_atexit_stops_worker(w):
    q = model.Queue(w)

    def worker(w):
        while (yield from q.get()) is not None:
            pass

    yield ("start", worker)
    yield from q.put("work")
    yield from q.put(None)  # the exit callback


def m_excepthook_records(w):
    seen = w.cell(None)

    def boom(w):
        yield ("read", seen)
        yield ("write", seen, "boom")  # the hook, in the task

    t = yield ("start", boom)
    yield ("write", seen, "main")
    yield ("join", t)
    value = yield ("read", seen)
    if value != "boom":
        fail(value)


PAIRS = [
    (event_timed_wait, m_event_timed),
    (event_set_clear, m_event_set_clear),
    (condition_missed, m_condition_missed),
    (condition_if, m_condition_if),
    (semaphore_one, m_semaphore_one),
    (semaphore_two, m_semaphore_two),
    (bounded_over_release, m_bounded_over_release),
    (rlock_reentrant, m_rlock_reentrant),
    (small_barrier_timed, m_barrier_timed),
    (small_barrier_twice, m_barrier_twice),
    (queue_two_items, m_queue_two_items),
    (small_condition_wait_for, m_condition_wait_for),
    (simple_queue_timed, m_simple_queue_timed),
    (queue_shutdown_immediate, m_queue_shutdown_immediate),
    (timer_cancel, m_timer_cancel),
    (atexit_stops_worker, m_atexit_stops_worker),
    (excepthook_records, m_excepthook_records),
]


def ploom_counts(scenario, tmp_path):
    """{outcome summary: schedules} of plain DFS through the real worker;
    a deadlock's waits are left out (the model names no objects)."""
    run = subprocess.run(
        [find_utility("ploom-explore"), "-q", "-k", "--no-minimize", f"--trace-dir={tmp_path}",
         # the model counts ploom's operations alone: the scenario's plain
         # state, seen by default, is not in it
         "--timeouts=any", "--instrument=-",
         f"{scenario.__module__}:{scenario.__name__}"],
        capture_output=True, text=True, timeout=600, cwd=str(tmp_path),
        env=dict(__import__("os").environ, PYTHONPATH=__import__("os").path.dirname(__file__)),
    )
    assert run.returncode in (0, 1), run.stderr
    stats = loads_strict(run.stdout)
    assert stats["complete"]
    counts = {}
    for outcome in stats["outcomes"]:
        summary = outcome["summary"].split(":")[0] if outcome["kind"] == "deadlock" else outcome["summary"]
        counts[summary] = counts.get(summary, 0) + outcome["schedules"]
    return counts


@pytest.mark.parametrize(("scenario", "modelled"), PAIRS, ids=[p[0].__name__ for p in PAIRS])
def test_plain_dfs_gives_the_models_counts(scenario, modelled, tmp_path):
    assert ploom_counts(scenario, tmp_path) == dict(model.explore(modelled))


# The timed scenarios under the idle time model (the default), where a
# timeout fires only when no task can run: every one of these waits is
# satisfied in time, so each passes, in far fewer schedules than under the
# stress model above (docs/threading.rst's table gives both), the fewer as
# a clock read is no point under this model.
IDLE_COUNTS = {
    "test_threading:event_timed_wait": 7,
    "test_threading:small_barrier_timed": 8,
    "test_threading:small_condition_wait_for": 7,
    "test_primitive_counts:simple_queue_timed": 34,
    "test_primitive_counts:timer_cancel": 6,
}


@pytest.mark.parametrize(("target", "schedules"), IDLE_COUNTS.items(), ids=list(IDLE_COUNTS))
def test_plain_dfs_counts_the_timed_scenarios_under_the_idle_model(target, schedules, tmp_path):
    result = subprocess.run(
        [find_utility("ploom-explore"), "-q", "-k", "--no-minimize", f"--trace-dir={tmp_path}",
         "--instrument=-", target],
        capture_output=True, text=True, timeout=600, cwd=str(tmp_path),
        env=dict(__import__("os").environ, PYTHONPATH=__import__("os").path.dirname(__file__)),
    )
    assert result.returncode == 0, result.stderr
    stats = loads_strict(result.stdout)
    assert {o["summary"]: o["schedules"] for o in stats["outcomes"]} == {"pass": schedules}
