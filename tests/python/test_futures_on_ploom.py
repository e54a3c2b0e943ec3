"""concurrent.futures.ThreadPoolExecutor, unmodified, checked through
``Config(patch=("concurrent.futures",))``: the worker imports the package
with ploom.threading and ploom.queue, so the executor's workers are
ploom's tasks, its futures wait on ploom's conditions, and the race in the
work it runs is found.

A module of its own: thread.py registers its exit callback with
ploom.threading when the worker imports it, which adds its steps to every
scenario of the module."""

import concurrent.futures

import pytest

import ploom
from ploom.exploration import ModelCheckError, SetupError

PATCH = ("concurrent.futures",)
DPOR = ploom.Config(reduction="dpor", patch=PATCH)


def ThreadPoolExecutor(*args, **kwargs):  # noqa: N802 - the executor's name
    # looked up when a schedule calls it: in the worker, the patched one
    return concurrent.futures.ThreadPoolExecutor(*args, **kwargs)


@pytest.fixture(autouse=True)
def _traces_in_tmp(tmp_path, monkeypatch):
    # failing checks write their traces into the current folder's .ploom
    monkeypatch.chdir(tmp_path)


def _increments(locked):
    count = ploom.SharedCell(0)
    lock = ploom.Lock()

    def increment():
        if locked:
            lock.acquire()
        count.write(count.read() + 1)
        if locked:
            lock.release()

    with ThreadPoolExecutor(max_workers=2) as ex:
        futures = [ex.submit(increment) for _ in range(2)]
    assert [f.done() for f in futures] == [True, True]
    assert count.read() == 2, "lost update"


def pool_unlocked():
    _increments(locked=False)


def pool_locked():
    _increments(locked=True)


# The counts depend on the standard library's code (CPython 3.13.0's):
# DFS within one preemption fails at schedule 25 or so and passes the locked
# twin in 151; DPOR fails at schedule 13 and passes the locked twin in
# 1100.  Unbounded DFS goes through thousands of schedules that change the
# order of the pool's own steps before it reaches the race in the work.
def test_the_lost_update_in_the_pool_s_work_is_found():
    # the real executor: its threads are refused in a schedule, naming what
    # to patch
    with pytest.raises(SetupError, match=r"threading.Thread made at thread.py:\d+ \(module "
                       r"concurrent.futures.thread\).*Add 'concurrent.futures' to patch="):
        ploom.check(pool_unlocked, ploom.Config(reduction="dpor"))
    for label, config in (("DFS, 1 preemption", ploom.Config(max_preemptions=1, patch=PATCH)), ("DPOR", DPOR)):
        with pytest.raises(ModelCheckError, match="AssertionError: lost update") as info:
            ploom.check(pool_unlocked, config)
        print(label, "unlocked: failing schedule", info.value.statistics.schedules)
    stats = ploom.check(pool_locked, ploom.Config(max_preemptions=1, patch=PATCH))
    print("DFS, 1 preemption, locked: schedules", stats.schedules)
    assert stats.complete and stats.failing == 0


# soak: DPOR's pass of the locked twin, 1100 schedules; the search within
# one preemption above passes it in 151
@pytest.mark.soak
def test_dpor_passes_the_pool_s_locked_work():
    stats = ploom.check(pool_locked, DPOR)
    assert stats.complete and stats.failing == 0


def pool_submit_result():
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="pool") as ex:
        square = ex.submit(pow, 3, 2)
        assert square.result() == 9
    assert square.done() and not square.cancelled()


def pool_map():
    with ThreadPoolExecutor(max_workers=1) as ex:
        assert list(ex.map(abs, [-1, -2])) == [1, 2]


def pool_exception():
    with ThreadPoolExecutor(max_workers=1) as ex:
        broken = ex.submit(int, "x")
        assert isinstance(broken.exception(), ValueError)
        try:
            broken.result()
        except ValueError:
            pass
        else:
            raise AssertionError("result() did not raise")


def pool_after_shutdown():
    ex = ThreadPoolExecutor(max_workers=1)
    ex.submit(print, end="").result()
    ex.shutdown()
    try:
        ex.submit(print)
    except RuntimeError as exc:
        assert str(exc) == "cannot schedule new futures after shutdown", exc
    else:
        raise AssertionError("submitted after shutdown")


@pytest.mark.parametrize("scenario", [pool_submit_result, pool_map, pool_exception, pool_after_shutdown],
                         ids=lambda f: f.__name__)
def test_submit_result_map_and_shutdown_work_as_concurrent_futures(scenario):
    stats = ploom.check(scenario, DPOR)
    print(scenario.__name__, "DPOR: schedules", stats.schedules)
    assert stats.complete and stats.failing == 0


def pool_result_timeout():
    ex = ThreadPoolExecutor(max_workers=1)
    future = ex.submit(pow, 2, 3)
    try:
        # an hour: a check that slept would never end
        got = future.result(timeout=3600)
    except TimeoutError:
        got = "timed out"
    ex.shutdown(wait=True)
    assert got == 8, got


def pool_map_timeout():
    ex = ThreadPoolExecutor(max_workers=1)
    try:
        got = list(ex.map(abs, [-4], timeout=3600))
    except TimeoutError:
        got = "timed out"
    ex.shutdown()
    assert got == [4], got


def test_a_timed_result_may_time_out():
    for scenario in (pool_result_timeout, pool_map_timeout):
        # the idle model: the worker can run, so the hour never passes
        assert ploom.check(scenario, ploom.Config(reduction="dpor", patch=PATCH)).failing == 0
        # the stress model: the result may time out before the worker ran
        config = ploom.Config(reduction="dpor", keep_going=True, minimize=False, patch=PATCH,
                              timeouts="any")
        with pytest.raises(ModelCheckError) as info:
            ploom.check(scenario, config)
        stats = info.value.statistics
        print(scenario.__name__, "DPOR: schedules", stats.schedules, "failing", stats.failing)
        assert stats.complete
        assert {o["summary"] for o in stats.raw["outcomes"]} == {"pass", "builtins.AssertionError: timed out"}
