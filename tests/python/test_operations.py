"""ploom's operations: misuse raises what threading raises, and what each
operation does outside a check.

The misuse scenarios are module-level functions of this file: the worker
imports this module to run them.
"""

import _thread
import decimal
import json
import subprocess
import threading

import pytest

import ploom
import ploom.threading as pthreading
from ploom._utility import find_utility
from ploom.exploration import IncompleteExplorationError, ModelCheckError, replay


def release_unlocked():
    ploom.Lock().release()


def start_twice():
    t = ploom.Thread(target=lambda: None)
    t.start()
    t.start()


def join_unstarted():
    t = ploom.Thread(target=lambda: None)
    t.join()


def write_a_list():
    ploom.SharedCell(0).write([])


def _threading_error(misuse):
    """The exception type threading raises for the same misuse."""
    with pytest.raises(Exception) as info:
        misuse()
    return type(info.value)


THREADING_MISUSE = {
    release_unlocked: lambda: threading.Lock().release(),
    start_twice: lambda: [t.start() for t in [threading.Thread(target=lambda: None)] * 2],
    join_unstarted: lambda: threading.Thread(target=lambda: None).join(),
}


@pytest.mark.parametrize("scenario", list(THREADING_MISUSE), ids=lambda f: f.__name__)
def test_misuse_raises_what_threading_raises(tmp_path, scenario):
    expected = _threading_error(THREADING_MISUSE[scenario])
    assert expected is RuntimeError
    with pytest.raises(ModelCheckError) as info:
        ploom.check(scenario, ploom.Config(trace_dir=str(tmp_path)))
    assert info.value.summary.startswith("builtins.RuntimeError")
    assert info.value.statistics.schedules == 1


def test_writing_a_mutable_value_fails_the_schedule(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(write_a_list, ploom.Config(trace_dir=str(tmp_path)))
    assert info.value.summary.startswith("builtins.TypeError")
    assert "list" in info.value.summary


def test_shared_cell_refuses_a_mutable_value():
    cell = ploom.SharedCell(0)
    with pytest.raises(TypeError, match="list"):
        cell.write([])
    assert cell.read() == 0


def test_shared_cell_works_outside_a_check():
    cell = ploom.SharedCell(1)
    assert cell.read() == 1
    cell.write((2, "two", frozenset({3})))
    assert cell.read() == (2, "two", frozenset({3}))


def test_yield_now_does_nothing_outside_a_check():
    assert ploom.yield_now() is None


def test_thread_start_outside_a_check_raises():
    ran = []
    t = ploom.Thread(target=ran.append, args=(1,))
    with pytest.raises(RuntimeError):
        t.start()
    assert ran == []


def test_lock_works_outside_a_check_without_blocking():
    lock = ploom.Lock()
    assert lock.acquire() is True
    assert lock.locked() is True
    assert lock.acquire(blocking=False) is False
    # nothing could ever release it: blocking would hang, so it raises
    with pytest.raises(RuntimeError):
        lock.acquire()
    lock.release()
    assert lock.locked() is False
    with lock:
        assert lock.locked() is True
    assert lock.locked() is False
    with pytest.raises(RuntimeError):
        lock.release()


def test_a_lock_outside_a_check_has_one_holder_at_a_time():
    # several OS threads at once, in parallel on a free-threaded build: the
    # acquires that win never overlap, and new objects get distinct names
    lock = ploom.Lock()
    inside, overlaps, errors, names = [0], [], [], []
    start = threading.Barrier(4)

    def worker():
        try:
            start.wait()
            for _ in range(2000):
                if lock.acquire(blocking=False):
                    inside[0] += 1
                    if inside[0] != 1:
                        overlaps.append(inside[0])
                    inside[0] -= 1
                    lock.release()
            names.extend([ploom.Lock().name for _ in range(100)])
            names.extend([ploom.SharedCell().name for _ in range(100)])
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and overlaps == []
    assert lock.locked() is False
    assert len(set(names)) == len(names) == 800


# ---- timed acquire -------------------------------------------------------


def _hold_then_release(lock):
    lock.acquire()
    lock.release()


def timed_acquire_waits_or_times_out():
    lock = ploom.Lock()
    t = ploom.Thread(target=_hold_then_release, args=(lock,))
    t.start()
    # an hour: were it a real wait, the test would hang
    got = lock.acquire(timeout=3600)
    assert got, "timed out"
    lock.release()
    t.join()


def blocking_acquire_waits():
    lock = ploom.Lock()
    t = ploom.Thread(target=_hold_then_release, args=(lock,))
    t.start()
    lock.acquire()
    lock.release()
    t.join()


def test_a_timed_acquire_either_gets_the_lock_or_times_out(tmp_path):
    # By hand, task 0 = main (start, timed acquire, release, join), task 1
    # = begin, acquire, release.  After start both are enabled:
    #   main's acquire first: it gets the lock; then main's release and
    #     task 1's begin race: 2 schedules;
    #   task 1's begin first: main's acquire (gets it: 1 schedule) or task
    #     1's acquire; then main's timed acquire (the lock is held: it times
    #     out, 1 failing schedule) or task 1's release (1 schedule).
    # 5 schedules, 1 failing; a blocking acquire is not enabled while task
    # 1 holds the lock, which leaves 4, none failing.
    with pytest.raises(ModelCheckError) as info:
        ploom.check(timed_acquire_waits_or_times_out,
                    ploom.Config(keep_going=True, trace_dir=str(tmp_path), timeouts="any"))
    assert info.value.summary == "builtins.AssertionError: timed out"
    assert (info.value.statistics.schedules, info.value.statistics.failing) == (5, 1)
    stats = ploom.check(blocking_acquire_waits, ploom.Config(keep_going=True, trace_dir=str(tmp_path)))
    assert (stats.schedules, stats.failing) == (4, 0)


def test_dpor_finds_the_timeout_too(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(timed_acquire_waits_or_times_out,
                    ploom.Config(reduction="dpor", keep_going=True, trace_dir=str(tmp_path),
                                 timeouts="any"))
    assert info.value.summary == "builtins.AssertionError: timed out"
    assert info.value.statistics.failing >= 1


def test_a_timed_acquire_is_recorded_shown_and_replayed(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(timed_acquire_waits_or_times_out, ploom.Config(trace_dir=str(tmp_path),
                                                                   timeouts="any"))
    with open(info.value.original_trace, encoding="utf-8") as f:
        trace = json.load(f)
    assert trace["version"] == 2
    timed = [s for s in trace["steps"] if s.get("timeout")]
    assert [(s["task"], s["op"], s["object"], s["blocking"], s["value"]) for s in timed] == [
        (0, "acquire", "lock#0", True, "False")
    ]
    # task 1's acquire is a blocking one
    assert all("timeout" not in s for s in trace["steps"] if s["task"] == 1)
    shown = subprocess.run([find_utility("ploom-show"), info.value.original_trace],
                           capture_output=True, text=True, check=True).stdout
    assert "acquire lock#0 (timeout) -> False" in shown
    with pytest.raises(ModelCheckError) as again:
        replay(info.value.original_trace)
    assert again.value.summary == "builtins.AssertionError: timed out"


def _abba(first, second):
    with first:
        if second.acquire(timeout=3600):
            second.release()


def _abba_blocking(first, second):
    with first:
        with second:
            pass


def _run_abba(body):
    a, b = ploom.Lock(), ploom.Lock()
    threads = [ploom.Thread(target=body, args=(a, b)), ploom.Thread(target=body, args=(b, a))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def abba_blocking():
    _run_abba(_abba_blocking)


def abba_timed():
    _run_abba(_abba)


def test_a_timed_acquire_is_never_part_of_a_deadlock(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(abba_blocking, ploom.Config(trace_dir=str(tmp_path)))
    assert info.value.summary.startswith("deadlock")
    stats = ploom.check(abba_timed, ploom.Config(keep_going=True, trace_dir=str(tmp_path)))
    assert stats.complete and stats.failing == 0


def timed_acquire_of_own_lock_times_out():
    lock = ploom.Lock()
    lock.acquire()
    # threading would wait out the timeout, then return False
    assert lock.acquire(timeout=0) is False
    assert lock.acquire(timeout=3600) is False
    lock.release()


def test_a_timed_acquire_of_a_lock_the_task_holds_times_out(tmp_path):
    stats = ploom.check(timed_acquire_of_own_lock_times_out, ploom.Config(trace_dir=str(tmp_path)))
    assert (stats.schedules, stats.failing) == (1, 0)


# What threading.Lock.acquire() takes and refuses; ploom's must agree.
ACQUIRE_ARGUMENTS = [
    {},
    {"blocking": False},
    {"timeout": -1},
    {"timeout": -1.0},
    {"timeout": 0},
    {"timeout": 0.5},
    {"timeout": True},
    {"blocking": False, "timeout": -1},
    {"timeout": -2},
    {"timeout": -0.5},
    {"blocking": False, "timeout": 0},
    {"blocking": False, "timeout": 3600},
    {"blocking": False, "timeout": -5},
    {"timeout": float("nan")},
    {"timeout": "1"},
    {"timeout": None},
    {"timeout": decimal.Decimal(1)},
]


def _acquire_result(lock, kwargs):
    try:
        got = lock.acquire(**kwargs)
    except Exception as exc:  # noqa: BLE001 - the exception is what is compared
        return type(exc), str(exc)
    if got:
        lock.release()
    return got


@pytest.mark.parametrize("kwargs", ACQUIRE_ARGUMENTS, ids=repr)
def test_acquire_takes_and_refuses_what_threading_does(kwargs):
    assert _acquire_result(ploom.Lock(), kwargs) == _acquire_result(threading.Lock(), kwargs)


def test_acquire_refuses_an_infinite_timeout_but_takes_any_finite_one():
    lock = ploom.Lock()
    with pytest.raises(OverflowError):
        lock.acquire(timeout=float("inf"))
    # threading refuses more than threading.TIMEOUT_MAX; ploom never waits
    assert lock.acquire(timeout=1e300) is True


def test_a_timed_acquire_outside_a_check_returns_false_at_once():
    lock = ploom.Lock()
    assert lock.acquire(timeout=3600) is True
    # nobody could release it: a timed acquire times out at once
    assert lock.acquire(timeout=3600) is False
    assert lock.acquire(timeout=0) is False
    lock.release()
    assert lock.locked() is False


# ---- timed join ----------------------------------------------------------


def timed_join_may_return_before_the_thread_ends():
    cell = ploom.SharedCell(0)
    t = ploom.Thread(target=cell.write, args=(1,))
    t.start()
    # an hour: were it a real wait, the test would hang
    assert t.join(timeout=3600) is None
    assert not t.is_alive(), "still running"


def blocking_join_waits():
    cell = ploom.SharedCell(0)
    t = ploom.Thread(target=cell.write, args=(1,))
    t.start()
    t.join()
    assert not t.is_alive(), "still running"


def test_a_timed_join_returns_whether_or_not_the_thread_has_ended(tmp_path):
    # By hand, task 0 = main (start, timed join, is_alive), task 1 = begin,
    # write (it ends there).  After start both are enabled:
    #   main's join first: then main's is_alive (True: 1 failing schedule),
    #     or task 1's begin, then is_alive (failing) or the write (then
    #     is_alive is False: passing);
    #   task 1's begin first: main's join then is_alive (failing) or the
    #     write (passing), or the write first, then join and is_alive
    #     (passing).
    # 6 schedules, 3 failing.  A blocking join is not enabled until task 1
    # has ended: 1 schedule, passing.
    with pytest.raises(ModelCheckError) as info:
        ploom.check(timed_join_may_return_before_the_thread_ends,
                    ploom.Config(keep_going=True, trace_dir=str(tmp_path), timeouts="any"))
    assert info.value.summary == "builtins.AssertionError: still running"
    assert (info.value.statistics.schedules, info.value.statistics.failing) == (6, 3)
    stats = ploom.check(blocking_join_waits, ploom.Config(keep_going=True, trace_dir=str(tmp_path)))
    assert (stats.schedules, stats.failing) == (1, 0)


def test_dpor_finds_the_timed_out_join_too(tmp_path):
    # Task 1's write ends it, which writes thread#1; the join and is_alive
    # read it; begin touches no cell main does.  So the orders that differ
    # are where task 1's end falls among main's join and is_alive: before
    # the join, between (both pass) or after is_alive (fails): 3.
    with pytest.raises(ModelCheckError) as info:
        ploom.check(timed_join_may_return_before_the_thread_ends,
                    ploom.Config(reduction="dpor", keep_going=True, trace_dir=str(tmp_path),
                                 timeouts="any"))
    assert info.value.summary == "builtins.AssertionError: still running"
    assert (info.value.statistics.schedules, info.value.statistics.failing) == (3, 1)


def test_a_timed_join_is_recorded_shown_and_replayed(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(timed_join_may_return_before_the_thread_ends,
                    ploom.Config(trace_dir=str(tmp_path), timeouts="any"))
    with open(info.value.original_trace, encoding="utf-8") as f:
        trace = json.load(f)
    assert trace["version"] == 2
    # where it stopped is information beside the step (tests/python/test_where.py)
    joins = [{k: v for k, v in s.items() if k != "where"} for s in trace["steps"]
             if s["op"] == "join"]
    # it timed out while thread#1 could still run: a stall of thread#1 for
    # the join's whole timeout
    assert joins == [{"index": 1, "task": 0, "op": "join", "object": "thread#1",
                      "enabled": [0, 1], "timeout": True, "stall_of": 1, "stall_ns": 3600 * 10**9}]
    shown = subprocess.run([find_utility("ploom-show"), info.value.original_trace],
                           capture_output=True, text=True, check=True).stdout
    assert "join thread#1 (timeout)" in shown
    with pytest.raises(ModelCheckError) as again:
        replay(info.value.original_trace)
    assert again.value.summary == "builtins.AssertionError: still running"


def _take_then_release(lock):
    lock.acquire()
    lock.release()


def _join_holding_the_lock(timeout):
    lock = ploom.Lock()
    lock.acquire()
    t = ploom.Thread(target=_take_then_release, args=(lock,))
    t.start()
    t.join(timeout)
    lock.release()


def join_holding_the_lock():
    _join_holding_the_lock(None)


def timed_join_holding_the_lock():
    _join_holding_the_lock(3600)


def test_a_timed_join_is_never_part_of_a_deadlock(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(join_holding_the_lock, ploom.Config(trace_dir=str(tmp_path)))
    assert info.value.summary.startswith("deadlock")
    stats = ploom.check(timed_join_holding_the_lock, ploom.Config(keep_going=True, trace_dir=str(tmp_path)))
    assert stats.complete and stats.failing == 0


# What threading.Thread.join() takes and refuses on a started thread
# (exception types: the messages of a bad type differ); ploom's must agree.
JOIN_TIMEOUTS = [
    (None, None),
    (0, None),
    (2.5, None),
    (-5, None),  # threading takes a negative timeout as 0
    (-1.5, None),
    (True, None),
    (float("nan"), ValueError),
    (float("inf"), OverflowError),
    ("1", TypeError),
]


def _join_error(thread, timeout):
    try:
        thread.join(timeout)
    except Exception as exc:  # noqa: BLE001 - the exception is what is compared
        return type(exc)
    return None


def test_join_timeouts_of_the_table_are_threading_s():
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
    assert [(timeout, _join_error(t, timeout)) for timeout, _ in JOIN_TIMEOUTS] == JOIN_TIMEOUTS


def join_takes_and_refuses_what_threading_does():
    t = ploom.Thread(target=lambda: None)
    t.start()
    for timeout, expected in JOIN_TIMEOUTS:
        assert _join_error(t, timeout) is expected, (timeout, _join_error(t, timeout))


def test_join_takes_and_refuses_what_threading_does(tmp_path):
    stats = ploom.check(join_takes_and_refuses_what_threading_does,
                        ploom.Config(keep_going=True, trace_dir=str(tmp_path)))
    assert stats.complete and stats.failing == 0


def test_a_timed_join_of_an_unstarted_thread_raises_what_threading_raises():
    for timeout in (3600, -1, "not even a number"):
        with pytest.raises(RuntimeError) as ours:
            ploom.Thread(target=print).join(timeout)
        with pytest.raises(RuntimeError) as theirs:
            threading.Thread(target=print).join(timeout)
        assert str(ours.value) == str(theirs.value) == "cannot join thread before it is started"


def join_self_with_a_timeout():
    def body():
        me.join(timeout=1)

    me = ploom.Thread(target=body)
    me.start()
    me.join()


def test_a_timed_join_of_the_current_thread_raises(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(join_self_with_a_timeout, ploom.Config(trace_dir=str(tmp_path)))
    assert info.value.summary == "builtins.RuntimeError: cannot join current thread"


# ---- task identity and thread names ------------------------------------------


def _unguarded_start(function):
    """Starts a real thread the way a C extension does, which ploom's guard
    does not see (inside a schedule, _thread.start_new_thread is guarded)."""
    start = _thread.start_new_thread
    getattr(start, "__wrapped__", start)(function, ())


def identities():
    seen = ploom.SharedCell(())
    lock = ploom.Lock()

    def body():
        with lock:
            seen.write(seen.read() + (ploom.get_ident(),))

    named = ploom.Thread(target=body, name="worker")
    unnamed = ploom.Thread(target=body, daemon=True)
    assert ploom.get_ident() == 0
    assert (named.ident, named.name, unnamed.name) == (None, "worker", "thread")
    named.start()
    unnamed.start()
    assert (named.ident, named.name) == (1, "worker")
    assert (unnamed.ident, unnamed.name, unnamed.daemon) == (2, "thread#2", True)
    # started, or already finished in this schedule
    assert repr(named).startswith("<ploom.Thread 'worker' thread#1 "), repr(named)
    try:
        unnamed.daemon = False
    except RuntimeError:
        pass
    else:
        raise AssertionError("daemon set after start")
    named.join()
    unnamed.join()
    assert sorted(seen.read()) == [1, 2], seen.read()
    assert repr(named) == "<ploom.Thread 'worker' thread#1 finished>"
    # a thread ploom does not schedule is not a task; started as a C
    # extension starts its own, past the guard that ends the schedule at
    # a threading.Thread or a _thread start
    raw = []
    done = _thread.allocate_lock()
    done.acquire()

    def probe():
        raw.append((ploom.get_ident(), threading.get_ident()))
        done.release()

    _unguarded_start(probe)
    done.acquire()
    assert raw[0][0] == raw[0][1], raw


def test_get_ident_is_the_task_id_inside_a_check(tmp_path):
    stats = ploom.check(identities, ploom.Config(trace_dir=str(tmp_path)))
    assert stats.failing == 0 and stats.schedules > 1


def test_get_ident_outside_a_check_is_threading_get_ident():
    from ploom import _ploom

    assert _ploom.current_task() is None
    assert ploom.get_ident() == threading.get_ident()
    other = []
    t = threading.Thread(target=lambda: other.append((ploom.get_ident(), threading.get_ident())))
    t.start()
    t.join()
    assert other[0][0] == other[0][1] != threading.get_ident()


def test_thread_name_daemon_and_ident_before_start():
    t = ploom.Thread(target=print)
    assert (t.name, t.daemon, t.ident) == ("thread", False, None)
    assert repr(t) == "<ploom.Thread (not started)>"
    t.name = "reader"
    t.daemon = 1
    assert (t.name, t.daemon) == ("reader", True)
    assert repr(t) == "<ploom.Thread 'reader' (not started)>"
    # as threading.Thread: the name is str() of what is given
    assert ploom.Thread(name=7).name == "7"
    t.name = 8
    assert t.name == "8"
    assert ploom.Thread(target=print, daemon=True).daemon is True
    with pytest.raises(TypeError):
        ploom.Thread(print, (), None, "positional name")
    with pytest.raises(AttributeError):
        del t.name


def current_threads():
    main = ploom.current_thread()
    assert main is ploom.main_thread() is pthreading.current_thread() is pthreading.main_thread()
    assert isinstance(main, ploom.Thread)
    assert (main.name, main.ident, main.daemon) == ("MainThread", 0, False)
    assert repr(main) == "<ploom.Thread 'MainThread' thread#0 started>"
    assert main.is_alive()
    seen = ploom.SharedCell(())
    lock = ploom.Lock()

    def body():
        me = ploom.current_thread()
        assert ploom.main_thread() is main and pthreading.current_thread() is me
        with lock:
            seen.write(seen.read() + ((me.name, me.ident, me is threads[me.ident - 1]),))

    threads = [ploom.Thread(target=body, name="worker"), ploom.Thread(target=body)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seen.read()) == [("thread#2", 2, True), ("worker", 1, True)], seen.read()
    for misuse, message in ((main.start, "threads can only be started once"),
                            (main.join, "cannot join current thread")):
        try:
            misuse()
        except RuntimeError as exc:
            assert str(exc) == message, exc
        else:
            raise AssertionError(f"{misuse} did not raise")


def test_current_thread_is_the_running_task_s_thread_inside_a_check(tmp_path):
    stats = ploom.check(current_threads, ploom.Config(keep_going=True, trace_dir=str(tmp_path)))
    assert stats.complete and stats.failing == 0 and stats.schedules > 1


def _main_still_alive():
    assert ploom.main_thread().is_alive(), "the scenario has returned"


def main_returns_early():
    ploom.Thread(target=_main_still_alive).start()
    ploom.yield_now()


def test_the_main_thread_is_not_alive_once_the_scenario_returns(tmp_path):
    # By hand, task 0 = start, yield_now (then it ends); task 1 = begin,
    # is_alive of thread#0.  After start: main's yield first (main ends:
    # is_alive is False, failing) or task 1's begin, then main's yield
    # (failing) or is_alive (True, passing).  3 schedules, 2 failing.
    with pytest.raises(ModelCheckError) as info:
        ploom.check(main_returns_early, ploom.Config(keep_going=True, trace_dir=str(tmp_path)))
    assert info.value.summary == "builtins.AssertionError: the scenario has returned"
    assert (info.value.statistics.schedules, info.value.statistics.failing) == (3, 2)


def test_current_thread_outside_a_check_is_threading_s():
    from ploom import _ploom

    assert _ploom.current_thread() is None and _ploom.main_thread() is None
    assert ploom.current_thread() is threading.current_thread()
    assert ploom.main_thread() is threading.main_thread()
    assert pthreading.current_thread() is threading.current_thread()
    assert pthreading.main_thread() is threading.main_thread()
    other = []
    t = threading.Thread(target=lambda: other.append(ploom.current_thread()))
    t.start()
    t.join()
    assert other == [t]
    assert {"current_thread", "main_thread"} <= set(ploom.__all__) & set(pthreading.__all__)


class _Worker(ploom.Thread):
    """A subclass that overrides run(), as threading.Thread allows."""

    def __init__(self, cell):
        super().__init__()
        self.cell = cell

    def run(self):
        self.cell.write(self.cell.read() + 1)


def subclass_overrides_run():
    cell = ploom.SharedCell(0)
    workers = [_Worker(cell), _Worker(cell)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert cell.read() == 2, "lost update"


def test_a_thread_subclass_runs_its_run_method(tmp_path):
    # the same lost update as racy_counter2: 69 schedules, 30 failing
    with pytest.raises(ModelCheckError) as info:
        ploom.check(subclass_overrides_run, ploom.Config(keep_going=True, trace_dir=str(tmp_path)))
    assert info.value.summary == "builtins.AssertionError: lost update"
    assert (info.value.statistics.schedules, info.value.statistics.failing) == (69, 30)


def eighty_threads():
    cell = ploom.SharedCell(0)
    lock = ploom.Lock()

    def inc():
        with lock:
            cell.write(cell.read() + 1)

    threads = [ploom.Thread(target=inc) for _ in range(80)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cell.read() == 80


def test_many_tasks_run_to_the_end(tmp_path):
    # 80 threads have far too many orders to exhaust: three whole schedules
    # that pass, then the limit
    config = ploom.Config(max_schedules=3, trace_dir=str(tmp_path))
    with pytest.raises(IncompleteExplorationError) as info:
        ploom.check(eighty_threads, config)
    assert info.value.statistics.schedules == 3
    assert info.value.statistics.failing == 0


def op_from_an_unscheduled_thread():
    cell = ploom.SharedCell(0)
    errors = []

    def touch():
        try:
            cell.read()
        except RuntimeError as exc:
            errors.append(str(exc))

    # past the guard, as a C extension's own thread: a threading.Thread or a
    # _thread start would end the schedule first
    done = _thread.allocate_lock()
    done.acquire()

    def run():
        touch()
        done.release()

    _unguarded_start(run)
    done.acquire()
    assert not errors, errors[0]


def test_an_operation_from_a_thread_ploom_does_not_schedule_raises(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        # patch=("-",): this module's _thread stays the real one
        ploom.check(op_from_an_unscheduled_thread, ploom.Config(trace_dir=str(tmp_path), patch=("-",)))
    assert "a thread that ploom does not schedule" in info.value.summary


def test_shared_cell_holds_ploom_objects_as_handles():
    lock, other = ploom.Lock(), ploom.SharedCell(1)
    thread = ploom.Thread(target=print)
    cell = ploom.SharedCell(lock)
    assert cell.read() is lock
    cell.write((lock, thread, frozenset({other}), "label"))
    held = cell.read()
    assert held[0] is lock and held[1] is thread and next(iter(held[2])) is other


def test_a_mutable_value_inside_a_tuple_is_named():
    cell = ploom.SharedCell(0)
    with pytest.raises(TypeError, match=r"not a 'tuple' holding a 'list'$"):
        cell.write((ploom.Lock(), [1]))
    with pytest.raises(TypeError, match=r"not a 'frozenset' holding a 'decimal.Decimal'$"):
        cell.write(frozenset({(1, "a"), (2, decimal.Decimal(1))}))
    with pytest.raises(TypeError, match=r"not 'dict'$"):
        cell.write({})
    assert cell.read() == 0


def shares_a_lock_through_a_cell():
    box = ploom.SharedCell(None)
    total = ploom.SharedCell(0)

    def worker():
        lock = box.read()
        with lock:
            total.write(total.read() + 1)

    box.write(ploom.Lock())
    threads = [ploom.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert total.read() == 2


def test_a_lock_shared_through_a_cell_protects_like_any_lock():
    stats = ploom.check(shares_a_lock_through_a_cell)
    assert stats.failing == 0 and stats.schedules > 1


def test_shared_cell_holds_the_primitives_of_ploom_threading_and_queue():
    import ploom.queue
    import ploom.threading

    made = (ploom.threading.RLock(), ploom.threading.Condition(), ploom.threading.BoundedSemaphore(),
            ploom.threading.Event(), ploom.threading.Barrier(2), ploom.queue.LifoQueue())
    cell = ploom.SharedCell(made)
    assert all(a is b for a, b in zip(cell.read(), made, strict=True))
