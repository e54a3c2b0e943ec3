"""Makes the plain Python state of chosen modules visible to the scheduler.

ploom switches tasks only at its operations.  A module named to :func:`install`
is instead loaded from its source rewritten, at import time (ploom._rewrite
says what the rewritten functions report, and what they do not), so that
inside its functions every access to plain state calls a hook of
``ploom._ploom``.  This module holds the hooks' reference semantics
(:class:`Reference`), the compiling of a rewritten module and the import
hooks (the finder and loader) that load the modules named from it.

Instrumented code is compiled from source every time: no bytecode cache is
read or written for it.
"""

from __future__ import annotations

import builtins
import importlib.abc
import importlib.machinery
import operator
import sys
import threading
import types

from ploom._rewrite import GLOBALS, HOOKS, INPLACE, SLICE, rewrite

__all__ = ["compile_source", "bind", "install", "instrumented", "rewrite", "Reference", "default_hooks", "HOOKS"]


# --- the hooks ---------------------------------------------------------------

class Reference:
    """Hooks that do each operation plainly and record nothing.

    They are what :func:`default_hooks` gives while ``ploom._ploom`` has no
    ``_i_*`` hooks, and the semantics any hooks object must keep: each method
    returns what the plain operation returns, raises what it raises.
    ``sites`` keeps the registered sites in ``self.table``, so that
    ``table[site]`` is ``(module, filename, lineno, col_offset, text)``.

    Being Python functions, they add a frame to each access: code that looks
    at its caller's frame (``sys._getframe(1)``, ``warnings.warn`` with a
    ``stacklevel``, ``dataclasses.make_dataclass`` finding its module) sees
    the hook's, and deep recursion meets the recursion limit sooner.  Hooks
    written in C add none."""

    def __init__(self):
        self.table = []
        self._lock = threading.Lock()

    def sites(self, module, filename, sites, /):
        with self._lock:
            base = len(self.table)
            self.table.extend((module, filename, *site) for site in sites)
        return base

    @staticmethod
    def getattr(obj, name, site, /):
        return getattr(obj, name)

    @staticmethod
    def setattr(obj, name, value, site, /):
        setattr(obj, name, value)

    @staticmethod
    def delattr(obj, name, site, /):
        delattr(obj, name)

    @staticmethod
    def getitem(obj, key, site, /):
        return obj[key]

    @staticmethod
    def setitem(obj, key, value, site, /):
        obj[key] = value

    @staticmethod
    def delitem(obj, key, site, /):
        del obj[key]

    @staticmethod
    def callattr(obj, name, site, /, *args, **kwargs):
        return getattr(obj, name)(*args, **kwargs)

    @staticmethod
    def read(obj, site, /):
        return obj

    @staticmethod
    def iter(obj, site, /):
        return iter(obj)

    @staticmethod
    def inplace(op, left, right, site, /):
        return op(left, right)

    @staticmethod
    def getglobal(namespace, name, site, /):
        try:
            return namespace[name]
        except KeyError:
            pass
        # then the builtins, as the module's code would find them
        found = namespace.get("__builtins__", builtins)
        found = found if isinstance(found, dict) else vars(found)
        try:
            return found[name]
        except KeyError:
            raise NameError(f"name {name!r} is not defined", name=name) from None

    @staticmethod
    def setglobal(namespace, name, value, site, /):
        namespace[name] = value

    @staticmethod
    def delglobal(namespace, name, site, /):
        try:
            del namespace[name]
        except KeyError:
            raise NameError(f"name {name!r} is not defined", name=name) from None

    @staticmethod
    def new(obj, /):
        return obj


_default = None


def default_hooks():
    """The hooks of ``ploom._ploom`` (``_i_sites``, ``_i_getattr``, ... : ``_i_``
    and the attribute's name), or a :class:`Reference` while it has none."""
    global _default
    if _default is None:
        from ploom import _ploom

        names = ["sites", *HOOKS]
        found = [name for name in names if hasattr(_ploom, "_i_" + name)]
        if not found:
            _default = Reference()
        elif len(found) < len(names):
            missing = ", ".join("_i_" + name for name in names if name not in found)
            raise RuntimeError(f"ploom._ploom has some instrumentation hooks but not {missing}")
        else:
            _default = types.SimpleNamespace(**{name: getattr(_ploom, "_i_" + name) for name in names})
    return _default


# --- compiling and importing -------------------------------------------------

_instrumented: list[str] = []
_instrumented_lock = threading.Lock()


def compile_source(source, filename, modname, hooks=None):
    """The code object of module modname, its source (bytes, honouring a
    coding cookie, or str) rewritten so that its functions call the hooks.

    Registers the module's sites with ``hooks.sites(modname, filename,
    sites)`` and compiles the base it returns into the code.  Nothing is read
    from or written to a bytecode cache.  Run the code in a namespace that
    :func:`bind` prepared with the same hooks."""
    if hooks is None:
        hooks = default_hooks()
    tree, sites, constants = rewrite(source, filename)
    base = hooks.sites(modname, filename, sites)
    for constant in constants:
        constant.value += base
    code = compile(tree, filename, "exec", dont_inherit=True)
    with _instrumented_lock:
        if modname not in _instrumented:
            _instrumented.append(modname)
    return code


def bind(namespace, hooks=None):
    """Puts the hidden names that instrumented code calls into namespace (a
    module's ``__dict__``), before the code of :func:`compile_source` runs
    in it."""
    if hooks is None:
        hooks = default_hooks()
    for attr, name in HOOKS.items():
        namespace[name] = getattr(hooks, attr)
    namespace[GLOBALS] = namespace
    namespace[SLICE] = slice
    for op in INPLACE.values():
        namespace["_ploom_" + op] = getattr(operator, op)


def instrumented():
    """The names of the modules compiled instrumented so far, in order."""
    with _instrumented_lock:
        return tuple(_instrumented)


def _has_source(spec):
    """Whether the module spec describes can be read as Python source."""
    loader = spec.loader
    if isinstance(loader, importlib.machinery.SourceFileLoader):
        return True
    if isinstance(loader, importlib.machinery.SourcelessFileLoader | importlib.machinery.ExtensionFileLoader):
        return False
    return _read_source(loader, spec.name, spec.origin) is not None


def _read_source(loader, name, origin):
    """The module's source: the file's bytes (which may declare their
    encoding), or the text of a loader that gives only text, or None."""
    if isinstance(loader, importlib.machinery.SourceFileLoader):
        return loader.get_data(origin)
    get_source = getattr(loader, "get_source", None)
    if get_source is None:
        return None
    try:
        return get_source(name)
    except ImportError:
        return None


def _describe(spec):
    loader = spec.loader
    if loader is None:
        name = "no loader"
    elif isinstance(loader, type):  # the built-in and frozen importers are classes
        name = loader.__name__
    else:
        name = type(loader).__name__
    return f"{spec.origin or 'no file'}, loaded by {name}"


class _Loader(importlib.abc.Loader):
    """Executes a module from its source, instrumented, in place of the loader
    that found it (``base``), whose other services it passes on."""

    def __init__(self, spec, hooks):
        self.base = spec.loader
        self.origin = spec.origin
        self.hooks = hooks

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__name__
        source = _read_source(self.base, name, self.origin)
        if source is None:
            raise ImportError(f"ploom: the source of {name!r} is gone", name=name)
        code = compile_source(source, self.origin or f"<{name}>", name, self.hooks)
        bind(module.__dict__, self.hooks)
        exec(code, module.__dict__)

    # what inspect, linecache, pkgutil and importlib.resources ask a loader
    def get_source(self, fullname):
        return self.base.get_source(fullname)

    def get_filename(self, fullname):
        return self.base.get_filename(fullname)

    def is_package(self, fullname):
        return self.base.is_package(fullname)

    def get_data(self, path):
        return self.base.get_data(path)

    def get_resource_reader(self, fullname):
        return self.base.get_resource_reader(fullname)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the modules named to :func:`install` (and their submodules),
    and those whose file ``project`` covers, through the other finders,
    and loads them instrumented."""

    def __init__(self, names, hooks, project=None):
        self.names = frozenset(names)
        self.hooks = hooks
        self.project = project

    def covers(self, fullname):
        return any(fullname == name or fullname.startswith(name + ".") for name in self.names)

    def find_spec(self, fullname, path=None, target=None):
        named = self.covers(fullname)
        if not named and (self.project is None or fullname == "ploom" or fullname.startswith("ploom.")):
            return None
        spec = _find_elsewhere(fullname, path, target)
        if spec is None or spec.loader is None:
            return spec
        if not named and not self.project.covers_file(spec.origin):
            return spec
        if spec.origin is None and spec.submodule_search_locations is not None:
            return spec  # a namespace package: no code to instrument
        if not _has_source(spec):
            if fullname in self.names:
                raise ValueError(f"ploom cannot instrument module {fullname!r}: it has no Python source "
                                 f"({_describe(spec)})")
            # a compiled part of a package named (its accelerator, say) is
            # not refused, or the package would not import: it runs unseen,
            # as C code does
            return spec
        spec.loader = _Loader(spec, self.hooks)
        return spec


def _find_elsewhere(fullname, path, target=None):
    for finder in sys.meta_path:
        if isinstance(finder, _Finder):
            continue
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is None:
            continue
        spec = find_spec(fullname, path, target)
        if spec is not None:
            return spec
    return None


def install(modules, hooks=None, project=None):
    """Instruments each module named in modules, and the submodules of the
    packages among them, when they are imported from now on; with project
    (an object whose ``covers_file(path)`` says so), every module whose
    file it covers too.

    Refuses (ValueError, naming them) a module already imported: its code ran
    uninstrumented, and objects made then would be shared with the new copy;
    install must come before the first import.  Refuses a module named that
    has no Python source (an extension, a built-in or frozen module, a
    ``.pyc`` alone), now when it can be found without importing anything,
    else at its import.  Returns the finder it put first on
    ``sys.meta_path``; removing it from there stops the instrumentation of
    later imports."""
    if isinstance(modules, str):
        modules = [modules]
    names = list(dict.fromkeys(modules))
    for name in names:
        if not name or not all(part.isidentifier() for part in name.split(".")):
            raise ValueError(f"ploom cannot instrument module {name!r}: not a module name")
    loaded = sorted(m for m in sys.modules if any(m == n or m.startswith(n + ".") for n in names))
    if loaded:
        where = getattr(sys.modules[loaded[0]], "__file__", None) or "no file"
        raise ValueError(f"ploom cannot instrument {', '.join(map(repr, loaded))}: already imported "
                         f"({loaded[0]} from {where}) before ploom could instrument it; "
                         f"install it before its first import")
    for name in names:
        parent = name.rpartition(".")[0]
        if parent and parent not in sys.modules:
            continue  # finding it would import its parent; checked at import
        path = getattr(sys.modules[parent], "__path__", None) if parent else None
        if parent and path is None:
            continue
        spec = _find_elsewhere(name, path)
        if spec is None or spec.loader is None or (spec.origin is None and spec.submodule_search_locations):
            continue
        if not _has_source(spec):
            raise ValueError(f"ploom cannot instrument module {name!r}: it has no Python source ({_describe(spec)})")
    finder = _Finder(names, hooks if hooks is not None else default_hooks(), project)
    sys.meta_path.insert(0, finder)
    return finder
