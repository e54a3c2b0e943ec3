"""A copy of the standard library's threading or queue that ploom did not
swap (a fresh import, a reload, a module made from its spec) makes
primitives that run outside the scheduler: the first schedule that uses
one ends at once, naming the copy, whoever made the primitive.

Each test writes its library and scenario into its own folder and checks
the scenario by file, so that the guard and the copies stay in the
worker."""

import os
import re
import sysconfig
import textwrap

import pytest

import ploom
from ploom.exploration import SetupError

SCENARIO = """
    import ploom
    import lib

    def scenario():
        lib.use()
"""

# two tasks on one queue: a real one blocks the only running task in get()
# until the schedule's timeout
TWO_TASKS = """
    def use():
        items = make()
        putter = ploom.Thread(target=items.put, args=(1,))
        putter.start()
        assert items.get() == 1
        putter.join()
"""

ROUTES = {
    "import_fresh_module": """
        from test.support.import_helper import import_fresh_module
        fresh = import_fresh_module("queue")
    """,
    # what import_fresh_module does, without test.support
    "import_module around sys.modules": """
        import importlib
        import sys
        saved = sys.modules.pop("queue")
        try:
            fresh = importlib.import_module("queue")
        finally:
            sys.modules["queue"] = saved
    """,
    "module_from_spec": """
        import importlib.util
        spec = importlib.util.find_spec("queue")
        fresh = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fresh)
    """,
    "reload": """
        import importlib
        import queue
        fresh = importlib.reload(queue)
    """,
    "import_fresh_module without _queue": """
        from test.support.import_helper import import_fresh_module
        fresh = import_fresh_module("queue", blocked=["_queue"])
    """,
}


def _have_test_support():
    try:
        import test.support.import_helper  # noqa: F401
    except ImportError:
        return False
    return True


def _check(folder, library):
    (folder / "lib.py").write_text(textwrap.dedent(library), encoding="utf-8")
    scenario = folder / "scen.py"
    scenario.write_text(textwrap.dedent(SCENARIO), encoding="utf-8")
    # patch=("-",): the library beside the scenario is patched by default,
    # and these are the copies an unpatched library makes
    return ploom.exploration.explore(f"{scenario}:scenario", None,
                                      ploom.Config(reduction="dpor", patch=("-",)))


def _library(route, make):
    head = "import ploom\n" + textwrap.dedent(ROUTES[route])
    return head + textwrap.dedent(make) + textwrap.dedent(TWO_TASKS)


def _refused(folder, library, what, copy):
    message = (rf"UnscheduledPrimitiveError: a {re.escape(what)} of a copy of the standard library's "
               rf"'{copy}' that ploom did not swap made at lib.py:\d+ \(module lib\) was used at "
               rf"lib.py:\d+ during a schedule.*use the '{copy}' that 'import {copy}' gives in a "
               rf"patched module, or ploom.{copy} in the scenario")
    with pytest.raises(SetupError, match=message):
        _check(folder, library)


@pytest.mark.parametrize("route", list(ROUTES))
def test_a_queue_of_a_fresh_copy_used_by_two_tasks_is_refused_at_once(tmp_path, monkeypatch, route):
    if "import_fresh_module" in route and not _have_test_support():
        pytest.skip("this interpreter has no test.support (the route without it is tested)")
    monkeypatch.chdir(tmp_path)
    make = "def make():\n    return fresh.Queue()\n"
    _refused(tmp_path, _library(route, make), "queue.Queue", "queue")


SECOND_QUEUE = {
    "import_fresh_module with a fresh _queue": """
        from test.support.import_helper import import_fresh_module
        fresh = import_fresh_module("queue", fresh=["_queue"])
    """,
    # what it does, without test.support
    "import_module of queue and _queue around sys.modules": """
        import importlib
        import sys
        saved = {name: sys.modules.pop(name) for name in ("queue", "_queue")}
        try:
            fresh = importlib.import_module("queue")
        finally:
            sys.modules.update(saved)
    """,
}


@pytest.mark.parametrize("route", list(SECOND_QUEUE))
def test_a_simple_queue_of_a_second_queue_module_is_refused_at_once(tmp_path, monkeypatch, route):
    if "import_fresh_module" in route and not _have_test_support():
        pytest.skip("this interpreter has no test.support (the route without it is tested)")
    monkeypatch.chdir(tmp_path)
    library = ("import ploom\n" + textwrap.dedent(SECOND_QUEUE[route])
               + "def make():\n    return fresh.SimpleQueue()\n" + textwrap.dedent(TWO_TASKS))
    _refused(tmp_path, library, "queue.SimpleQueue", "queue")


def test_a_fresh_queue_made_by_standard_library_code_is_refused(tmp_path, monkeypatch):
    # CPython's own test_queue makes its queues in the standard library's
    # folder, whose primitives are otherwise left alone
    monkeypatch.chdir(tmp_path)
    stdlib_file = os.path.join(sysconfig.get_paths()["stdlib"], "test", "ploom_maker.py")
    make = f"""
        _maker = {{"__name__": "test.ploom_maker"}}
        exec(compile("def make(module):\\n    return module.Queue()\\n", {stdlib_file!r}, "exec"), _maker)

        def make():
            return _maker["make"](fresh)
    """
    library = _library("module_from_spec", make)
    message = (r"a queue.Queue of a copy of the standard library's 'queue' that ploom did not swap made "
               r"at ploom_maker.py:2 \(module test.ploom_maker\) was used at lib.py:\d+")
    with pytest.raises(SetupError, match=message):
        _check(tmp_path, library)


@pytest.mark.parametrize(
    ("make", "what"),
    [
        ("def make():\n    return Waiter(threading_copy.Condition())\n", "threading.Condition"),
        ("def make():\n    return Waiter(threading_copy.Semaphore(0))\n", "threading.Semaphore"),
        ("def make():\n    return Waiter(threading_copy.RLock())\n", "threading.RLock"),
    ],
    ids=["Condition", "Semaphore", "RLock"],
)
def test_a_primitive_of_a_copy_of_threading_is_refused_at_once(tmp_path, monkeypatch, make, what):
    monkeypatch.chdir(tmp_path)
    library = """
        import importlib.util
        import ploom

        spec = importlib.util.find_spec("threading")
        threading_copy = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(threading_copy)


        class Waiter:
            def __init__(self, primitive):
                self.primitive = primitive

            def put(self, item):
                with self.primitive:
                    pass

            def get(self):
                with self.primitive:
                    return 1
    """
    library = textwrap.dedent(library) + make + textwrap.dedent(TWO_TASKS)
    _refused(tmp_path, library, what, "threading")


def test_cpython_s_own_test_queue_is_refused_at_once_naming_its_fresh_queue(tmp_path, monkeypatch):
    try:
        import test.test_queue  # noqa: F401
    except ImportError:
        pytest.skip("this interpreter has no test.test_queue (the routes it takes are tested above)")
    monkeypatch.chdir(tmp_path)
    # its threads are ploom's through patch=, its queues a fresh copy's
    scenario = tmp_path / "scen.py"
    scenario.write_text(textwrap.dedent("""
        from test import test_queue

        def scenario():
            case = test_queue.PyQueueTest("test_queue_task_done")
            case.setUp()
            case.test_queue_task_done()
    """), encoding="utf-8")
    message = (r"a queue.Queue of a copy of the standard library's 'queue' that ploom did not swap made at "
               r"test_queue.py:\d+ \(module test.test_queue\)")
    with pytest.raises(SetupError, match=message):
        # instrument=("-",): this is about the guard; instrumenting
        # test.test_queue itself is not what it tests
        ploom.exploration.explore(f"{scenario}:scenario", None,
                                   ploom.Config(patch=("test.test_queue",), instrument=("-",)))
