"""Fresh copies of the standard library's concurrent.futures._base and
concurrent.futures.thread whose ``threading`` and ``queue`` are
ploom.threading and ploom.queue: what patching a library does to the
modules it imports, made by hand.

Each copy is a new module object run from the standard library's source,
with builtins of its own whose ``__import__`` gives ploom's modules for
"threading" and "queue" (inside functions too: a function's globals carry
the builtins) and the fresh _base for ``from concurrent.futures import
_base``.  Nothing goes into sys.modules, so the real concurrent.futures is
untouched.  Load them at import of the scenario's module: the worker then
makes them once, before its first schedule, and thread.py's
``threading._register_atexit(_python_exit)`` carries into every schedule."""

import builtins
import concurrent.futures
import importlib.util
import os
import types

import ploom.queue
import ploom.threading

_FOLDER = os.path.dirname(concurrent.futures.__file__)


def _load(name, filename, package):
    spec = importlib.util.spec_from_file_location(name, os.path.join(_FOLDER, filename))
    module = importlib.util.module_from_spec(spec)
    real_import = builtins.__import__

    def ploom_import(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0:
            if name == "threading":
                return ploom.threading
            if name == "queue":
                return ploom.queue
            if name == "concurrent.futures" and fromlist and package is not None:
                return package
        return real_import(name, globals, locals, fromlist, level)

    own = dict(vars(builtins))
    own["__import__"] = ploom_import
    module.__dict__["__builtins__"] = own
    spec.loader.exec_module(module)
    return module


def load():
    """(_base, thread): the two modules, made afresh on each call."""
    base = _load("ploom_futures_base", "_base.py", None)
    thread = _load("ploom_futures_thread", "thread.py", types.SimpleNamespace(_base=base))
    return base, thread
