"""Config(patch=...): unmodified threading code under the scheduler, with
the examples that show it (examples/pool_condition.py on
examples/connection_pool.py, examples/queue_task_done.py).

Each test writes its library and scenario modules into its own folder and
checks the scenario by file, so that no patch reaches this process."""

import json
import os
import sys
import textwrap
import threading

import pytest

import ploom
from ploom.exploration import ModelCheckError, replay

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


def test_without_patch_the_pool_runs_outside_the_scheduler(examples):
    pool_condition, _ = examples
    # its Condition is the real one: ploom sees only the Thread operations,
    # and one order of them never shows the bug
    stats = ploom.check(pool_condition.buggy, ploom.Config(reduction="dpor"))
    assert stats.failing == 0


def test_the_lost_task_done_is_a_deadlock_and_its_fix_passes(examples):
    _, queue_task_done = examples
    config = ploom.Config(reduction="dpor")
    with pytest.raises(ModelCheckError, match="^deadlock: "):
        ploom.check(queue_task_done.lossy, config)
    stats = ploom.check(queue_task_done.careful, config)
    assert stats.complete and stats.failing == 0


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
    return ploom.exploration._explore(f"{scenario}:scenario", None, ploom.Config(patch=patch))


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
            assert Condition is ploom.threading.Condition and Lock is ploom.Lock
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
    unsupported = r"RuntimeError: ploom: lib uses threading.active_count, which ploom does not schedule"
    with pytest.raises(ModelCheckError, match=unsupported):
        _check_file(
            tmp_path,
            """
            from threading import active_count

            def use():
                active_count()
            """,
        )
    with pytest.raises(ModelCheckError, match=r"AttributeError: ploom.threading does not support threading.settrace"):
        _check_file(
            tmp_path,
            """
            import threading

            def use():
                threading.settrace(None)
            """,
        )


def test_primitives_made_at_import_are_refused_by_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    made_at_import = r"cannot patch 'lib': lib._guard is a _thread.lock made when lib was imported"
    with pytest.raises(RuntimeError, match=made_at_import):
        _check_file(
            tmp_path,
            """
            import threading
            _guard = threading.Lock()

            def use():
                pass
            """,
        )
    with pytest.raises(RuntimeError, match=r"cannot patch 'lib': class lib.Worker derives from threading.Thread"):
        _check_file(
            tmp_path,
            """
            import threading

            class Worker(threading.Thread):
                pass

            def use():
                pass
            """,
        )


def test_a_module_the_scenario_did_not_import_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # lib2 could be imported, but patching must not run a module's code
    _write(tmp_path, "lib2.py", "open('ran.txt', 'w').close()\n")
    not_imported = r"ImportError: cannot patch 'lib2': the scenario's module has not imported it"
    with pytest.raises(RuntimeError, match=not_imported):
        _check_file(tmp_path, "def use():\n    pass\n", patch=("lib2",))
    assert not (tmp_path / "ran.txt").exists()
