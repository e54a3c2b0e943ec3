"""ploom: find thread bugs in Python, and replay the schedule that failed.

A scenario is a function that uses ploom's operations (:class:`Thread`,
:class:`Lock`, :class:`SharedCell`, :func:`yield_now`); :func:`check` runs it
under a controlled scheduler over every order of those operations and raises
:class:`ploom.exploration.ModelCheckError` at the first failing one.

``check`` and ``Config`` live in :mod:`ploom.exploration`, imported on first
use: a scenario's process needs only the operations, and ``import ploom``
stays as cheap as loading the extension.
"""

from __future__ import annotations

from ploom._ploom import Lock, SharedCell, Thread, yield_now
from ploom._ploom import current_task as _current_task
from ploom._ploom import current_thread as _current_thread
from ploom._ploom import main_thread as _main_thread

# true for the type checker alone ([tool.mypy] always_true): `import ploom`
# imports neither typing nor threading
_TYPE_CHECKING = False
if _TYPE_CHECKING:
    import threading

__all__ = [
    "Thread",
    "Lock",
    "SharedCell",
    "yield_now",
    "get_ident",
    "current_thread",
    "main_thread",
    "check",
    "Config",
]
__version__ = "0.1.0"

_LAZY = {"check", "Config", "exploration"}
# ploom.threading's and ploom.queue's primitives, also as ploom.RLock etc.
_PRIMITIVES = {
    "RLock": "ploom.threading",
    "Condition": "ploom.threading",
    "Semaphore": "ploom.threading",
    "BoundedSemaphore": "ploom.threading",
    "Event": "ploom.threading",
    "Barrier": "ploom.threading",
    "Queue": "ploom.queue",
    "LifoQueue": "ploom.queue",
    "PriorityQueue": "ploom.queue",
    # the failure of a schedule that used a primitive ploom did not patch
    "UnscheduledPrimitiveError": "ploom._guard",
    "SimpleQueue": "ploom.queue",
}


def get_ident() -> int:
    """The calling thread's identity, as ``threading.get_ident()`` gives it.

    Inside a check it is the task id: 0 for the scenario's main task, then
    1, 2, ... in start order, the same in every schedule (``Thread.ident``
    is the same number).  Elsewhere, outside a check or on a thread ploom
    does not schedule, it is ``threading.get_ident()``.  Not a scheduling
    point.
    """
    task = _current_task()
    if task is not None:
        return task
    # imported here: a scenario's process needs threading only outside a task
    import threading

    return threading.get_ident()


def current_thread() -> Thread | threading.Thread:
    """The calling thread's object, as ``threading.current_thread()`` gives it.

    Inside a check it is the running task's :class:`Thread`: the one that
    was started, or for the scenario's own task (task 0) the
    :func:`main_thread` object.  Elsewhere, outside a check or on a thread
    ploom does not schedule, it is ``threading.current_thread()``.  Not a
    scheduling point.
    """
    thread = _current_thread()
    if thread is not None:
        return thread
    import threading

    return threading.current_thread()


def main_thread() -> Thread | threading.Thread:
    """The main thread's object, as ``threading.main_thread()`` gives it.

    Inside a check it is a :class:`Thread` standing for the scenario's own
    task: ``name`` "MainThread", ``ident`` 0, ``daemon`` False, alive until
    the scenario returns; the same object for the whole schedule.  Its
    ``is_alive()`` and ``join()`` are the operations they are on any thread.
    Elsewhere it is ``threading.main_thread()``.  Not a scheduling point.
    """
    thread = _main_thread()
    if thread is not None:
        return thread
    import threading

    return threading.main_thread()


def __getattr__(name: str) -> object:
    """Imports ploom.exploration when check, Config or exploration is first used."""
    if name in _LAZY:
        import importlib

        module = importlib.import_module("ploom.exploration")
        globals().update(check=module.check, Config=module.Config, exploration=module)
        return globals()[name]
    if name in _PRIMITIVES:
        import importlib

        value = getattr(importlib.import_module(_PRIMITIVES[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ploom' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY | set(_PRIMITIVES))
