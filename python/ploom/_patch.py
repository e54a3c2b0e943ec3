"""``Config(patch=...)``: unmodified library code under ploom's scheduler.

The worker calls :func:`apply` once, after it imported the scenario's module
and before it forks the first schedule, so the swap is made in the worker and
its schedules' processes only, never in the process that called
``ploom.check``.  In each named module it replaces

- the ``threading`` and ``queue`` modules by ``ploom.threading`` and
  ``ploom.queue``, under whatever name the module holds them;
- the classes and functions imported from them (``from threading import
  Condition``) by ploom's of the same name, or, for a name ploom does not
  schedule, by a stand-in that raises when used, naming it.

Only modules already imported are patched: a replayed trace names the
modules, and importing one would run its code before any check of the
trace.  Primitives a module created while it was imported (a module-level
``threading.Lock()``) were made before the swap and would run outside the
scheduler: they are refused, named.
"""

from __future__ import annotations

import queue as std_queue
import sys
import threading as std_threading

import ploom.queue as our_queue
import ploom.threading as our_threading


class _Unsupported:
    """Stands for a name of threading or queue that ploom does not schedule."""

    def __init__(self, where, module, name):
        self._what = f"{where} uses {module}.{name}, which ploom does not schedule"

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"ploom: {self._what}")

    def __getattr__(self, attr):
        raise RuntimeError(f"ploom: {self._what}")

    def __repr__(self):
        return f"<ploom: {self._what}>"


def _real_primitive_types():
    types = [type(std_threading.Lock()), type(std_threading.RLock())]
    types += [std_threading.Condition, std_threading.Semaphore, std_threading.Event,
              std_threading.Barrier, std_threading.Thread, std_queue.Queue]
    simple = getattr(std_queue, "SimpleQueue", None)
    if simple is not None:
        types.append(simple)
    return tuple(types)


def _replacements(where):
    """{id(standard object): ploom's} for the module named where."""
    swaps = {id(std_threading): our_threading, id(std_queue): our_queue}
    for std, ours, prefix in ((std_threading, our_threading, "threading"), (std_queue, our_queue, "queue")):
        for name in getattr(std, "__all__", ()):
            obj = getattr(std, name, None)
            # classes and functions only: constants may be shared objects
            # (small ints, interned strings) that the module holds for
            # other reasons
            if obj is None or not callable(obj):
                continue
            if name in ours.__all__:
                swaps[id(obj)] = getattr(ours, name)
            elif not (isinstance(obj, type) and issubclass(obj, Exception)):
                swaps[id(obj)] = _Unsupported(where, prefix, name)
    return swaps


def apply(names):
    """Swaps threading and queue for ploom's in each module of names."""
    real = _real_primitive_types()
    for where in names:
        module = sys.modules.get(where)
        if module is None:
            raise ImportError(
                f"cannot patch {where!r}: the scenario's module has not imported it "
                f"(import it at the top of the scenario's file)"
            )
        swaps = _replacements(where)
        namespace = vars(module)
        for key, value in list(namespace.items()):
            replacement = swaps.get(id(value))
            if replacement is not None:
                namespace[key] = replacement
            elif isinstance(value, type) and issubclass(value, real) and value.__module__ == where:
                raise TypeError(
                    f"cannot patch {where!r}: class {where}.{key} derives from "
                    f"{value.__mro__[1].__module__}.{value.__mro__[1].__qualname__}, bound when {where} "
                    f"was imported, before ploom could patch it"
                )
            elif isinstance(value, real):
                raise TypeError(
                    f"cannot patch {where!r}: {where}.{key} is a {type(value).__module__}."
                    f"{type(value).__qualname__} made when {where} was imported, before ploom "
                    f"could patch it; create it when the scenario runs"
                )
