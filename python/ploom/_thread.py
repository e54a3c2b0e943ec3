"""``ploom._thread``: what a module patched by ``Config(patch=...)`` gets
for ``_thread``, the low-level module some libraries take their locks from.

Its locks are :class:`ploom.Lock` and ``ploom.threading.RLock``, and
``start_new_thread`` starts a task; a name of ``_thread`` that ploom does
not schedule raises AttributeError naming it.
"""

from __future__ import annotations

import _thread as _std

from ploom._ploom import Lock

__all__ = [
    "LockType",
    "RLock",
    "TIMEOUT_MAX",
    "allocate",
    "allocate_lock",
    "daemon_threads_allowed",
    "error",
    "get_ident",
    "get_native_id",
    "lock",
    "start_new",
    "start_new_thread",
]

LockType = Lock
# _thread's name of the lock type since 3.13, LockType's alias
lock = Lock
error = _std.error
TIMEOUT_MAX = _std.TIMEOUT_MAX
daemon_threads_allowed = _std.daemon_threads_allowed


def allocate_lock() -> Lock:
    """A new ploom.Lock, as _thread.allocate_lock() gives a lock."""
    return Lock()


def RLock():  # noqa: N802 - _thread's name
    """ploom.threading.RLock()."""
    from ploom.threading import RLock as rlock

    return rlock()


# _thread's older names, which it keeps as aliases
def allocate() -> Lock:
    """allocate_lock()."""
    return allocate_lock()


def get_native_id() -> int:
    """ploom.threading.get_native_id()."""
    from ploom.threading import get_native_id as native

    return native()


def get_ident() -> int:
    """ploom.get_ident()."""
    from ploom import get_ident as ident

    return ident()


def start_new_thread(function, args, kwargs=None):
    """Starts function(*args, **kwargs) as a task (a started ploom.Thread,
    which the scenario need not join) and returns its ident."""
    from ploom._ploom import Thread

    thread = Thread(target=function, args=args, kwargs=kwargs, daemon=True)
    thread.start()
    return thread.ident


start_new = start_new_thread


def __getattr__(name):
    from ploom._standin import refusing_getattr

    return refusing_getattr(_std, __all__)(name)
