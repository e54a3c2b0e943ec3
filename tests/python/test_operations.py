"""ploom's operations: misuse raises what threading raises, and what each
operation does outside a check.

The misuse scenarios are module-level functions of this file: the worker
imports this module to run them.
"""

import decimal
import threading

import pytest

import ploom
from ploom.exploration import IncompleteExplorationError, ModelCheckError


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

    t = threading.Thread(target=touch)
    t.start()
    t.join()
    assert not errors, errors[0]


def test_an_operation_from_a_thread_ploom_does_not_schedule_raises(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(op_from_an_unscheduled_thread, ploom.Config(trace_dir=str(tmp_path)))
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
