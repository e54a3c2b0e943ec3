"""Config(patch=...): unmodified threading code under the scheduler, with
the examples that show it (examples/pool_condition.py on
examples/connection_pool.py, examples/queue_task_done.py).

Each test writes its library and scenario modules into its own folder and
checks the scenario by file, so that no patch reaches this process."""

import json
import os
import re
import subprocess
import sys
import textwrap
import threading

import pytest

import ploom
from ploom._utility import find_utility
from ploom.exploration import ModelCheckError, SetupError, replay

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples")


@pytest.fixture
def examples(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(EXAMPLES)
    import pool_condition
    import queue_task_done

    yield pool_condition, queue_task_done
    for name in ("pool_condition", "queue_task_done", "connection_pool"):
        sys.modules.pop(name, None)


def test_the_pools_if_bug_is_found_through_patch_and_replays(examples, monkeypatch):
    pool_condition, _ = examples
    config = ploom.Config(patch=("connection_pool",), reduction="dpor")
    with pytest.raises(ModelCheckError, match="negative free count: -1") as info:
        ploom.check(pool_condition.buggy, config)
    with open(info.value.minimized_trace, encoding="utf-8") as f:
        assert json.load(f)["config"]["patch"] == ["connection_pool"]
    trace = os.path.abspath(info.value.minimized_trace)
    # a replay runs only a file of the repository it starts in
    with monkeypatch.context() as m, pytest.raises(ModelCheckError, match="negative free count: -1"):
        m.chdir(EXAMPLES)
        replay(trace)
    stats = ploom.check(pool_condition.fixed, config)
    assert stats.complete and stats.failing == 0
    # the swap happened in the worker: this process's module is untouched
    assert sys.modules["connection_pool"].threading is threading


def test_without_patch_the_pools_real_condition_ends_the_schedule_naming_its_module(examples, tmp_path):
    pool_condition, _ = examples
    # its Condition is the real one, which would run outside the scheduler
    # (one order of the Thread operations never shows the bug): the first
    # schedule that uses it fails, and says what to patch; the library
    # beside the scenario is patched by default, which "-" turns off
    with pytest.raises(SetupError, match=r"UnscheduledPrimitiveError: a standard-library "
                       r"threading\.Condition made at connection_pool\.py:\d+ \(module connection_pool\)"
                       r".*Add 'connection_pool' to patch="):
        ploom.check(pool_condition.buggy, ploom.Config(reduction="dpor", patch=("-",), trace_dir=tmp_path))
    # a setup mistake is no failure to keep
    assert not list(tmp_path.glob("*.json"))


def test_the_lost_task_done_is_a_deadlock_and_its_fix_passes(examples):
    _, queue_task_done = examples
    config = ploom.Config(reduction="dpor")
    with pytest.raises(ModelCheckError, match="^deadlock: "):
        ploom.check(queue_task_done.lossy, config)
    stats = ploom.check(queue_task_done.careful, config)
    assert stats.complete and stats.failing == 0


def _no_trace(folder):
    """A setup mistake saved no trace in the trace folder."""
    assert not list((folder / ".ploom").glob("*.json"))


def _write(folder, name, text):
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


SCENARIO = """
    import ploom
    import lib

    def scenario():
        lib.use()
"""


def _check_file(folder, library, patch=("lib",)):
    _write(folder, "lib.py", library)
    scenario = _write(folder, "scen.py", SCENARIO)
    return ploom.exploration.explore(f"{scenario}:scenario", None, ploom.Config(patch=patch))


def test_names_imported_from_threading_and_queue_are_swapped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    stats = _check_file(
        tmp_path,
        """
        import threading as th
        from queue import Queue, Empty
        from threading import Condition, Lock

        def use():
            import ploom.threading, ploom.queue
            assert th is ploom.threading
            assert Queue is ploom.queue.Queue and Empty is ploom.queue.Empty
            assert Condition is ploom.threading.Condition and Lock is ploom.threading.Lock
            assert type(Lock()) is ploom.Lock
        """,
    )
    assert stats.failing == 0


def test_current_thread_and_main_thread_name_the_tasks_in_patched_code(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    stats = _check_file(
        tmp_path,
        """
        import threading
        from threading import current_thread

        def use():
            names = []
            worker = threading.Thread(target=lambda: names.append(current_thread().name), name="w")
            worker.start()
            worker.join()
            assert names == ["w"], names
            assert threading.current_thread().name == "MainThread"
            assert threading.main_thread() is current_thread()
        """,
    )
    assert stats.complete and stats.failing == 0


def test_an_unsupported_name_fails_naming_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # the module imports: only a use of the name fails
    unsupported = r"RuntimeError: ploom: lib uses threading.settrace, which ploom does not schedule"
    with pytest.raises(ModelCheckError, match=unsupported):
        _check_file(
            tmp_path,
            """
            from threading import settrace, Lock

            def use():
                settrace(print)
            """,
        )
    with pytest.raises(ModelCheckError, match=r"AttributeError: ploom.threading does not support threading.settrace"):
        _check_file(
            tmp_path,
            """
            import threading

            def use():
                threading.settrace(print)
            """,
        )


IMPORT_TIME = """
    import functools
    import queue
    import threading
    import _thread

    _guard = threading.RLock()          # module level
    _raw = _thread.allocate_lock()
    _mine = threading.local()          # per task
    totals = {"n": 0}


    def locked(func):                  # a decorator applied at import
        lock = threading.Lock()

        @functools.wraps(func)
        def wrapper(*args):
            with lock:
                return func(*args)
        return wrapper


    class Adder(threading.Thread):     # a Thread subclass
        def __init__(self, n):
            super().__init__(name=f"adder-{n}")
            self.n = n

        def run(self):
            _mine.n = self.n
            add(_mine.n)


    @locked
    def add(n):
        with _guard:
            value = totals["n"]
            totals["n"] = value + n


    class Pool:
        QueueCls = queue.LifoQueue     # a class attribute

        def __init__(self, size, lock=threading.Lock()):   # a default argument
            self.items = self.QueueCls()
            for i in range(size):
                self.items.put(i)
            self.lock = lock

        def borrow(self):
            from queue import Empty    # imported inside a function
            try:
                return self.items.get_nowait()
            except Empty:
                return None


    def use():
        import ploom
        for obj in (_guard, _raw, Pool(0).lock):
            assert type(obj).__module__.startswith("ploom"), type(obj)
        assert isinstance(Pool.QueueCls(), ploom.LifoQueue)
        pool = Pool(1)
        adder = Adder(1)
        adder.start()
        got = pool.borrow()
        _mine.n = 2
        with _raw:
            add(_mine.n)
        adder.join()
        assert adder.name == "adder-1"
        assert got == 0 and totals["n"] == 3, (got, totals)
"""


@pytest.mark.parametrize("reduction", [None, "dpor"])
def test_primitives_made_at_import_are_ploom_s_and_the_module_is_checked_unmodified(tmp_path, monkeypatch,
                                                                                   reduction):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, "lib.py", IMPORT_TIME)
    scenario = _write(tmp_path, "scen.py", SCENARIO)
    stats = ploom.exploration.explore(f"{scenario}:scenario", None,
                                       ploom.Config(patch=("lib",), reduction=reduction))
    assert stats.complete and stats.failing == 0
    # the two critical sections in either order, and the locks' orders
    # around them: more than one schedule, whichever search
    assert stats.schedules > 1


def test_the_unlocked_twin_made_at_import_is_found(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    unlocked = IMPORT_TIME.replace("        with _guard:\n", "        if True:\n").replace("    @locked\n", "")
    _write(tmp_path, "lib.py", unlocked)
    scenario = _write(tmp_path, "scen.py", SCENARIO)
    # the lost update is in a dict: plain state, which the reduction's
    # instrumentation sees
    with pytest.raises(ModelCheckError, match=r"AssertionError: \(0, \{'n': [12]\}\)"):
        ploom.exploration.explore(f"{scenario}:scenario", None, ploom.Config(patch=("lib",), reduction="dpor"))


def test_a_module_the_scenario_did_not_import_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # lib2 could be imported, but patching must not run a module's code
    _write(tmp_path, "lib2.py", "open('ran.txt', 'w').close()\n")
    not_imported = r"ImportError: cannot patch 'lib2': the scenario's module has not imported it"
    with pytest.raises(RuntimeError, match=not_imported):
        _check_file(tmp_path, "def use():\n    pass\n", patch=("lib2",))
    assert not (tmp_path / "ran.txt").exists()


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("threading", "the standard library's 'threading' is replaced by ploom.threading, and cannot "
                      "itself be patched"),
        ("queue.Queue", "the standard library's 'queue' is replaced by ploom.queue, and cannot itself be patched"),
        ("_thread", "the standard library's '_thread' is replaced by ploom._thread, and cannot itself be patched"),
        ("ploom.threading", "ploom's own modules cannot be patched"),
    ],
)
def test_patching_threading_itself_is_refused(tmp_path, monkeypatch, name, why):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RuntimeError, match=re.escape(f"cannot patch '{name}': {why}")):
        _check_file(tmp_path, "def use():\n    pass\n", patch=(name,))


UNPATCHED = """
    import logging
    import queue
    import threading

    lock = threading.Lock()
    cond = threading.Condition()
    items = queue.Queue()
    log = logging.getLogger("lib")


    def use():
        log.warning("the standard library's own locks are not refused")
        {body}
"""


@pytest.mark.parametrize(
    ("body", "what", "verb"),
    [
        # contended by two tasks: a real lock would block the only running
        # task until the schedule's timeout
        ("t = threading.Thread(target=lambda: None)\n        t.start()", "threading.Thread", "started"),
        ("with lock:\n            pass", "threading.Lock", "acquired"),
        ("with cond:\n            cond.notify()", "threading.Condition", "used"),
        ("items.put(1)", "queue.Queue", "used"),
    ],
)
def test_a_real_primitive_of_an_unpatched_module_ends_the_schedule_naming_it(tmp_path, monkeypatch, body,
                                                                             what, verb):
    monkeypatch.chdir(tmp_path)
    message = (rf"UnscheduledPrimitiveError: a standard-library {what} made at lib.py:\d+ \(module lib\) "
               rf"was {verb} at lib.py:\d+ during a schedule.*Add 'lib' to patch=")
    with pytest.raises(SetupError, match=message):
        _check_file(tmp_path, UNPATCHED.replace("{body}", body), patch=("-",))
    _no_trace(tmp_path)


@pytest.mark.parametrize(
    "reach",
    ['importlib.import_module("threading")', 'sys.modules["threading"]'],
    ids=["import_module", "sys.modules"],
)
def test_a_patched_module_that_reaches_the_real_threading_is_told_the_import_bypasses_the_patch(
    tmp_path, monkeypatch, reach
):
    monkeypatch.chdir(tmp_path)
    library = f"""
        import importlib
        import sys

        def use():
            real = {reach}
            with real.Lock():
                pass
        """
    with pytest.raises(SetupError) as info:
        _check_file(tmp_path, library)
    message = str(info.value)
    assert "'lib' is patched, but it reached the real threading or queue without an import statement" in message
    assert "Add 'lib' to patch=" not in message


BELOW_THREADING = """
    import _thread
    import threading
    from _thread import start_new_thread

    ran = []


    def use():
        {body}
        # a thread ploom does not schedule would run this at some time of its own
        while not ran:
            pass
"""


@pytest.mark.parametrize(
    ("body", "name"),
    [
        ("_thread.start_new_thread(ran.append, (1,))", "_thread.start_new_thread"),
        ("start_new_thread(ran.append, (1,))", "_thread.start_new_thread"),
        ("_thread.start_new(ran.append, (1,))", "_thread.start_new"),
        ("_thread.start_joinable_thread(lambda: ran.append(1))", "_thread.start_joinable_thread"),
        ("threading._start_joinable_thread(lambda: ran.append(1))", "threading._start_joinable_thread"),
    ],
)
def test_a_thread_started_below_threading_ends_the_schedule_naming_it(tmp_path, monkeypatch, body, name):
    monkeypatch.chdir(tmp_path)
    message = (rf"UnscheduledPrimitiveError: a standard-library thread made by {re.escape(name)} "
               rf"was started at lib.py:10 during a schedule.*Add 'lib' to patch=")
    with pytest.raises(SetupError, match=message):
        _check_file(tmp_path, BELOW_THREADING.replace("{body}", body), patch=("-",))
    _no_trace(tmp_path)


def test_a_real_lock_held_by_one_task_and_wanted_by_another_fails_at_once(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    library = """
        import threading
        import ploom

        lock = threading.Lock()

        def hold():
            lock.acquire()
            ploom.yield_now()
            lock.release()

        def use():
            t = ploom.Thread(target=hold)
            t.start()
            with lock:
                pass
            t.join()
    """
    # never a wait for the schedule's timeout: the first acquire fails
    with pytest.raises(SetupError, match=r"threading.Lock made at lib.py:5 \(module lib\)"):
        _check_file(tmp_path, library, patch=("-",))


def test_ploom_s_own_real_locks_are_not_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # the plain-state rewriting takes a real lock of its own when a module
    # it instruments is first imported, here inside a schedule
    _write(tmp_path, "lib2.py", "VALUE = 1\n")
    _write(tmp_path, "lib.py", "def use():\n    import lib2\n    assert lib2.VALUE == 1\n")
    scenario = _write(tmp_path, "scen.py", SCENARIO)
    stats = ploom.exploration.explore(f"{scenario}:scenario", None,
                                       ploom.Config(instrument=("lib2",), reduction="dpor"))
    assert stats.complete and stats.failing == 0


def _shown(trace):
    """ploom-show's text rendering of the trace file."""
    shown = subprocess.run([find_utility("ploom-show"), trace], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    return shown.stdout


def test_patched_primitives_are_named_after_what_they_belong_to(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelCheckError, match="AssertionError: got 1") as info:
        _check_file(
            tmp_path,
            """
            import queue
            import threading

            _lock = None

            class Pool:
                def __init__(self):
                    global _lock
                    _lock = threading.Lock()
                    self._cond = threading.Condition()
                    self.items = queue.Queue()
                    self.ready = False

                def serve(self):
                    with self._cond:
                        self.ready = True
                        self._cond.notify()
                    got = self.items.get()
                    assert got == 2, f"got {got}"

            def use():
                pool = Pool()
                with _lock:
                    pass
                spare = queue.Queue()
                spare.put(0)
                worker = threading.Thread(target=pool.serve)
                worker.start()
                with pool._cond:
                    while not pool.ready:
                        pool._cond.wait()
                pool.items.put(1)
                worker.join()
            """,
        )
    with open(info.value.original_trace, encoding="utf-8") as f:
        trace = json.load(f)
    names = {o["name"]: o["object"] for o in trace["objects"]}
    # the steps keep naming objects by their ids; a name is for a person
    assert {s["object"] for s in trace["steps"] if s["op"] == "acquire"} <= set(names.values())
    # the primitives are locks; the rest is the plain state every search sees
    assert all(obj.startswith(("lock#", "plain#")) for obj in names.values())
    # the queues' mutexes too, though the table words their steps as the
    # queues' operations
    assert {"Pool.items.mutex", "Queue.mutex"} <= names.keys()
    shown = _shown(info.value.original_trace)
    for name in (
        "lib._lock",
        # a wait with no timeout, a Condition's or a blocking get's, is one
        # acquire of the lock, with no waiter lock (ploom.threading,
        # ploom.queue); test_names names the waiters of the timed ones
        "Pool._cond",
    ):
        assert f"acquire {name} " in shown, name
    assert re.search(r"  put 0  .*  get -> 1  ", shown, re.S), shown
    assert "lock#" not in shown.split("\n\n")[1]  # the steps' table


def test_a_step_in_the_standard_library_is_told_from_a_file_of_the_same_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mylib").mkdir()
    _write(tmp_path / "mylib", "__init__.py", "")
    _write(
        tmp_path / "mylib",
        "sched.py",
        """
        import ploom

        guard = ploom.Lock(name="guard")

        def touch():
            with guard:
                pass
        """,
    )
    _write(
        tmp_path,
        "scen.py",
        """
        import sched
        import mylib.sched

        def scenario():
            mylib.sched.touch()
            sched.scheduler().enter(1, 1, print)
            raise AssertionError("done")
        """,
    )
    # the standard library's sched makes an RLock in scheduler(), and takes
    # it in enter(): patched, its steps are the standard library's
    config = ploom.Config(patch=("sched",))
    with pytest.raises(ModelCheckError, match="AssertionError: done") as info:
        ploom.exploration.explore(f"{tmp_path / 'scen.py'}:scenario", None, config)
    shown = _shown(info.value.original_trace)
    # that sched.py by its folder there, named after its own assignment;
    # ours relative to the scenario's folder
    assert re.search(r"acquire scheduler\._lock +<stdlib>/sched\.py:\d+ enterabs$", shown, re.M), shown
    assert re.search(r"acquire guard +mylib/sched\.py:\d+ touch$", shown, re.M), shown


@pytest.mark.parametrize("use", ["worker.join()", "worker.is_alive()"])
def test_a_real_thread_joined_in_a_schedule_is_named_a_thread(tmp_path, monkeypatch, use):
    monkeypatch.chdir(tmp_path)
    library = f"""
        import threading

        # started while the scenario is imported, outside any schedule
        worker = threading.Thread(target=lambda: None)
        worker.start()

        def use():
            {use}
    """
    message = (r"UnscheduledPrimitiveError: a standard-library threading.Thread made at lib.py:5 "
               r"\(module lib\) was used at lib.py:9 during a schedule")
    with pytest.raises(SetupError, match=message):
        _check_file(tmp_path, library, patch=("-",))
    _no_trace(tmp_path)
