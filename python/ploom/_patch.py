"""``Config(patch=...)``: unmodified library code under ploom's scheduler.

The worker calls :func:`install` before it imports the scenario's module,
so the swap is made in the worker and its schedules' processes only, never
in the process that called ``ploom.check``.  Each module named (and each
module of a package named) is then imported with builtins of its own whose
``__import__`` gives

- ``ploom.threading`` for ``threading``, ``ploom.queue`` for ``queue`` and
  ``ploom._thread`` for ``_thread``, under whatever name the module binds
  them, at its top or inside a function;
- for ``from threading import NAME`` of a name ploom does not schedule, a
  stand-in that raises when used, naming it, so that the module still
  imports.

Everything the module makes while it is imported is therefore ploom's:
module-level locks, class attributes (``QueueCls = queue.LifoQueue``),
default arguments, decorators applied at import, ``threading.Thread``
subclasses.  Made before the first schedule, in the worker, they start
every schedule in the state they were made in, since each schedule's
process is a fork of the worker.

The worker also patches the scenario's own module and the modules of the
user's project (``ploom._project``) unless told to patch only the modules
named: those are found by their file, not by a name.

A module named that something imported before the worker could install
this (the standard library's own imports, ploom's) is removed from
``sys.modules`` and imported again under the swap when the scenario
imports it.  A module the scenario's import did not import is refused,
since a replayed trace names the modules and importing one would run its
code before any check of the trace.
"""

from __future__ import annotations

import builtins
import importlib
import sys

# an executor's threads (concurrent.futures.thread) and its futures'
# conditions (concurrent.futures._base) are two modules of one package:
# naming either patches the package.  The package imports the executor's
# module only when first asked for ThreadPoolExecutor, which would be in
# each schedule: the worker imports it once, before the first.
_PACKAGES = {"concurrent.futures": ("concurrent.futures.thread",)}
_NEVER = ("threading", "queue", "_thread", "ploom")


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


def expand(names):
    """The modules to patch for names: each name, or the package that
    _PACKAGES says it belongs to; ValueError for a name that patching
    cannot mean."""
    out = []
    for name in names:
        for top in _NEVER:
            if name == top or name.startswith(top + "."):
                # short: the message travels in the loader's one-line error
                if top == "ploom":
                    why = "ploom's own modules cannot be patched"
                else:
                    why = (f"the standard library's {top!r} is replaced by ploom.{top}, "
                           f"and cannot itself be patched")
                raise ValueError(f"cannot patch {name!r}: {why}")
        for package in _PACKAGES:
            if name.startswith(package + "."):
                name = package
        if name not in out:
            out.append(name)
    return out


def _covers(names, module):
    return any(module == name or module.startswith(name + ".") for name in names)


def _never(module):
    return _covers(_NEVER, module)


class _FromView:
    """What ``from threading import a, b`` sees in a patched module:
    ploom's names, and a stand-in for each name ploom does not schedule."""

    def __init__(self, module, std_name, where):
        self._module = module
        self._std_name = std_name
        self._where = where

    def __getattr__(self, name):
        try:
            return getattr(self._module, name)
        except AttributeError:
            if name.startswith("__") or not hasattr(sys.modules.get(self._std_name), name):
                raise
            return _Unsupported(self._where, self._std_name, name)


def _redirects():
    import ploom._thread as our_thread
    import ploom.queue as our_queue
    import ploom.threading as our_threading

    return {"threading": our_threading, "queue": our_queue, "_thread": our_thread}


def _patched_builtins():
    redirect = _redirects()
    real_import = builtins.__import__

    def __import__(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A001, N807
        ours = redirect.get(name) if level == 0 else None
        if ours is None:
            return real_import(name, globals, locals, fromlist, level)
        if fromlist and any(not hasattr(ours, attr) for attr in fromlist if attr != "*"):
            where = (globals or {}).get("__name__", "?")
            return _FromView(ours, name, where)
        return ours

    namespace = dict(vars(builtins))
    namespace["__import__"] = __import__
    return namespace


class _PatchedLoader:
    """Runs a module with the patched builtins; everything else is its
    own loader's (bytecode cache, source, resources)."""

    def __init__(self, loader, namespace):
        self._loader = loader
        self._namespace = namespace

    def create_module(self, spec):
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module):
        module.__dict__["__builtins__"] = self._namespace
        self._loader.exec_module(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _PatchFinder:
    """Finds a patched module with the finders after it, and wraps its
    loader.  project (a ploom._project.Project, or None) patches the
    modules whose file is the project's too."""

    def __init__(self, names, project=None):
        self.names = names
        self.project = project
        self.namespace = _patched_builtins()
        self._finding = set()

    def covers(self, module):
        return _covers(self.names, module)

    def covers_file(self, module, path):
        """Whether module, loaded from path, is patched."""
        return self.covers(module) or (
            self.project is not None and not _never(module) and self.project.covers_file(path))

    def covers_module(self, module):
        """Whether module, imported by now, was patched."""
        loaded = sys.modules.get(module)
        return self.covers_file(module, getattr(loaded, "__file__", None))

    def find_spec(self, name, path=None, target=None):
        # another finder that asks the others in turn (the plain-state
        # rewriting's) asks this one again: it then finds nothing here
        if name in self._finding or not (self.covers(name) or (self.project and not _never(name))):
            return None
        self._finding.add(name)
        try:
            return self._find(name, path, target)
        finally:
            self._finding.discard(name)

    def _find(self, name, path, target):
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if (spec.loader is not None and hasattr(spec.loader, "exec_module")
                        and self.covers_file(name, spec.origin)):
                    spec.loader = _PatchedLoader(spec.loader, self.namespace)
                return spec
        return None

    def patch_loader(self, loader):
        """loader, for a module the worker loads itself (a file scenario)."""
        return _PatchedLoader(loader, self.namespace)


_finder = None


def install(names, project=None):
    """Imports the modules of names, and with project (a
    ploom._project.Project) the project's modules, with ploom's threading
    from now on; returns the finder (at the front of sys.meta_path), or
    None."""
    global _finder
    if not names and project is None:
        return None
    names = expand(names)
    for module in list(sys.modules):
        if _covers(names, module):
            del sys.modules[module]
    _finder = _PatchFinder(names, project)
    front()
    return _finder


def front():
    """Puts the finder back at the front of sys.meta_path, ahead of one
    that the worker inserted after it (a replay's checked source)."""
    if _finder is not None:
        if _finder in sys.meta_path:
            sys.meta_path.remove(_finder)
        sys.meta_path.insert(0, _finder)


def patched(module):
    """Whether module is patched in this worker: install named it (or its
    package), or it is the project's."""
    return _finder is not None and _finder.covers_module(module)


def loader_for(name, loader, path=None):
    """The loader to run module name (from the file path) with: patched
    if it is named or the project's."""
    if _finder is not None and _finder.covers_file(name, path):
        return _finder.patch_loader(loader)
    return loader


def check_imported(names):
    """Refuses a module named that the scenario's import did not import;
    imports what a package of _PACKAGES imports lazily."""
    for where in expand(names):
        if where not in sys.modules:
            raise ImportError(
                f"cannot patch {where!r}: the scenario's module has not imported it "
                f"(import it at the top of the scenario's file)"
            )
        for sub in _PACKAGES.get(where, ()):
            importlib.import_module(sub)
