"""The worker process that ploom's utilities start:
``python -P -m ploom._worker [--expect=FILE [--expect-blob=OID] [--expect-root=DIR]
[--search-cwd=DIR] [--import-path=DIR]...] [--patch=MODULE]... [--instrument=MODULE]...
[--patch-project] [--instrument-scenario] [--timeouts=any] [--plain-points=*|-|*-] TARGET``.

It imports the scenario once, then serves ``run`` commands on fd 0 by forking
one child per schedule (see ``lib/event.h`` for the protocol).  It never runs
a scenario itself, so nothing a schedule does survives it.
"""

import hashlib
import importlib
import importlib.machinery
import importlib.util
import inspect
import linecache
import os
import sys
import sysconfig
import traceback

from ploom import _ploom

CMD_FD = 0
EVENT_FD = 3
POINTS_FD = 5


def _load_file(path, checked=None, instrument=False, install=None):
    """The module of the file at path.  instrument: whether to compile it
    instrumented, or a function of its module name that says so once
    install() has run (the rewriting's finder never sees this file, which
    is loaded here, not found)."""
    path = os.path.abspath(path)
    if checked is None and not os.path.isfile(path):
        raise FileNotFoundError(f"no such file: {path!r}")
    stem = os.path.splitext(os.path.basename(path))[0]
    name = stem if stem.isidentifier() and stem not in sys.modules else "__ploom_scenario__"
    if checked is None:
        # like `python path/to/file.py`: its folder comes first on sys.path
        sys.path.insert(0, os.path.dirname(path))
    else:
        _path_after_stdlib(os.path.dirname(path))
    if install is not None:
        install()
    if callable(instrument):
        instrument = instrument(name)
    if checked is None and instrument:
        # compiled here from its bytes, never from a bytecode cache, which
        # holds the code without the rewriting
        checked = read_checked(path, None)
    if checked is not None:
        loader = _CheckedLoader(path, checked, instrument)
    # a script without .py (run as `python script`) is source all the same
    elif path.endswith(tuple(importlib.machinery.all_suffixes())):
        loader = None
    else:
        loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    spec.loader = _patch_loader(name, spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def read_checked(path, blob):
    """The bytes of path, which must hash to blob, git's id of them.

    A replay runs these bytes and no others: the file is read once, here,
    so it cannot be swapped between the check and the import, and no
    bytecode cache (an unchecked hash-based .pyc, say) stands in for it."""
    with open(path, "rb") as f:
        data = f.read()
    if blob is not None:
        # git's blob id: "blob <size>\0" and the content, as git hash-object
        found = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        if found != blob:
            raise SourceMismatch(
                f"the scenario's source changed: {path!r} (recorded blob {blob[:7]}, now {found[:7]})"
            )
    return data


class OutsideRoot(Exception):
    """A replay's module target would import files outside the repository
    or folder the replay runs in."""


def _inside(path, root):
    real, real_root = os.path.realpath(path), os.path.realpath(root)
    return os.path.commonpath([real, real_root]) == real_root


def _refuse_outside(module, file, top, root):
    """Refuses (OutsideRoot) the module target ``module``, found at
    ``file`` under the import root ``top`` (root_above()), when importing
    it would run or search anything outside ``root``, the repository or
    folder the replay runs in: a package's folder or ``__init__`` there
    (a forged trace that names ``anc.proj.mod`` for the repository
    ``.../anc/proj`` would import ``.../anc/__init__.py``), or the import
    root itself, which goes on sys.path, where a ``json.py`` beside the
    repository would stand in for the standard library's.  Symbolic links
    are resolved: a package that is a link out of the tree leaves it."""
    parts = module.split(".")
    # the packages whose folders lie between top and file: all of them for
    # a package's own __init__
    packages = parts if os.path.basename(file).startswith("__init__.") else parts[:-1]
    folder = top
    for i, part in enumerate(packages, 1):
        folder = os.path.join(folder, part)
        try:
            # __init__.py, or a sourceless or compiled one
            inits = [os.path.join(folder, name) for name in os.listdir(folder) if name.startswith("__init__.")]
        except OSError:
            inits = []
        if not _inside(folder, root) or not all(_inside(init, root) for init in inits):
            package = ".".join(parts[:i])
            raise OutsideRoot(f"module {module!r} leaves {root!r}: its package {package!r} is {folder!r}")
    if not _inside(top, root):
        raise OutsideRoot(f"module {module!r} leaves {root!r}: it would be imported from {top!r}")


def _search_paths(root, folders):
    """Puts the folders a search imported from (a replay's SEARCH_CWD and
    IMPORT_PATHS) on sys.path after the standard library, in their order,
    those that lie inside root and exist; the scenario's own folder, put
    there next, comes before them."""
    for folder in reversed([f for f in folders if f]):
        if os.path.isdir(folder) and _inside(folder, root) and folder not in sys.path:
            _path_after_stdlib(folder)


def _path_after_stdlib(folder):
    """Puts folder on sys.path right after the standard library's entries
    (before site-packages): a replay's own folder stands in for no module
    of the standard library that the scenario imports late."""
    paths = sysconfig.get_paths()
    stdlib = [os.path.realpath(paths[key]) for key in ("stdlib", "platstdlib") if paths.get(key)]
    at = len(sys.path)
    for i, entry in enumerate(sys.path):
        if isinstance(entry, str) and entry and any(_inside(entry, root) for root in stdlib):
            at = i + 1
    sys.path.insert(at, folder)


def refuse_installed(path):
    """A replay runs a scenario of the project it starts in, never code
    installed with Python or into its environment: a forged trace that
    names os.py with its real blob id, replayed from the standard
    library's own folder, still runs nothing."""
    real = os.path.realpath(path)
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        root = paths.get(key)
        if root and os.path.commonpath([real, os.path.realpath(root)]) == os.path.realpath(root):
            raise ValueError(
                f"the trace's scenario file {path!r} is installed code ({key} {root!r}): "
                "a replay runs only a scenario of the project it starts in"
            )


class _CheckedLoader:
    """Loads one module from bytes read once (and checked, on a replay),
    compiling them each time and writing no bytecode (importlib's loader
    protocol); with instrument, compiled with the plain-state rewriting
    (ploom._instrument)."""

    def __init__(self, path, data, instrument=False):
        self.path = path
        self.data = data
        self.instrument = instrument

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        if self.instrument:
            rewriter = rewriter_module()
            code = rewriter.compile_source(self.data, self.path, module.__name__)
            rewriter.bind(module.__dict__)
        else:
            code = compile(self.data, self.path, "exec", dont_inherit=True)
        exec(code, module.__dict__)  # noqa: S102 - the scenario's own, checked source

    def is_package(self, name):
        return os.path.basename(self.path).startswith("__init__.")

    def get_source(self, name):
        return importlib.util.decode_source(self.data)

    def get_filename(self, name):
        return self.path


class _CheckedFinder:
    """Finds the replayed module by its name, for whoever imports it first
    (the worker, or its own package's __init__), from the checked bytes."""

    def __init__(self, name, path, data, instrument=False):
        self.name = name
        self.loader = _CheckedLoader(path, data, instrument)

    def find_spec(self, name, path=None, target=None):
        if name != self.name:
            return None
        return importlib.util.spec_from_file_location(name, self.loader.path, loader=self.loader)


def scenario_problem(obj):
    """Why calling OBJ with no arguments would not run a scenario, or None.

    An async def or generator function only creates a coroutine or a
    generator when called, so its body would never run and every schedule
    would pass: a false pass, worse than an error.  A function that needs
    arguments gets none from a schedule.  A bound method is found again by
    its qualified name as the plain function, without its object.
    ``ploom.check`` and the worker both refuse these, with these words.
    """
    if inspect.ismethod(obj):
        return (
            "is a bound method; each schedule imports the scenario by module and name, "
            "which finds the function without its object: pass a module-level function"
        )
    if inspect.isasyncgenfunction(obj):
        return "is an async generator function: calling it does not run its body"
    if inspect.iscoroutinefunction(obj):
        return "is an async def function: calling it only creates a coroutine and does not run its body"
    if inspect.isgeneratorfunction(obj):
        return "is a generator function: calling it only creates a generator and does not run its body"
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return None  # a builtin without a signature: nothing to check
    try:
        signature.bind()
    except TypeError as exc:
        return f"cannot be called without arguments ({exc}): a scenario takes no argument"
    return None


def root_above(path, module_name):
    """.../pkg/sub/mod.py for pkg.sub.mod (or .../pkg/sub/mod/__init__.py):
    the folder above the top-level package."""
    root = os.path.dirname(os.path.abspath(path))
    depth = module_name.count(".")
    if os.path.basename(path).startswith("__init__."):
        depth += 1
    for _ in range(depth):
        root = os.path.dirname(root)
    return root


def _origin(name):
    """The file that ``import name`` would run, or None (a builtin or frozen
    module, or none found), found without running any module's code:
    importlib.util.find_spec would import a dotted name's parent packages."""
    parts = name.split(".")
    path = None  # where the next part is searched: None is sys.path
    for i, part in enumerate(parts, 1):
        sub = ".".join(parts[:i])
        module = sys.modules.get(sub)
        if module is not None:
            if i == len(parts):
                return getattr(module, "__file__", None)
            path = getattr(module, "__path__", None)
            if path is None:
                return None
            path = list(path)
            continue
        try:
            spec = _find_spec(sub, path)
        except Exception:  # noqa: BLE001 - a namespace package below one not imported
            spec = None
        if i == len(parts):
            return spec.origin if spec is not None and spec.has_location else None
        if spec is not None and spec.origin is not None and spec.submodule_search_locations is not None:
            path = list(spec.submodule_search_locations)
        else:
            # a namespace package, as the path finder makes one: every
            # folder of that name on the path searched
            base = sys.path if path is None else path
            path = [os.path.join(entry or os.getcwd(), part) for entry in base
                    if isinstance(entry, str) and os.path.isdir(os.path.join(entry or os.getcwd(), part))]
            if not path:
                return None
    return None


def imports_as(name, file, root):
    """Whether ``import name`` in a worker would run file, found by the
    import system's finders as they would find it there, without running
    any module's code.  The worker searches the current folder, then root
    (the folder ploom.check puts first on its PYTHONPATH), then the path
    this process has too; a dotted name's packages are searched as their
    specs say, whatever sys.modules holds under those names now, since a
    module loaded under a name of the loader's choosing is there too."""
    path = [os.getcwd(), root, *sys.path]
    parts = name.split(".")
    for i in range(1, len(parts) + 1):
        try:
            spec = _find_spec(".".join(parts[:i]), path)
        except Exception:  # noqa: BLE001 - a finder that fails finds nothing
            return False
        if spec is None:
            return False
        if i == len(parts):
            return bool(spec.has_location and spec.origin and _same_file(spec.origin, file))
        if spec.submodule_search_locations is None:
            return False
        path = list(spec.submodule_search_locations)
    return False


def nearest(name, names):
    """" (did you mean 'workpool'?)": the names closest to a name that
    does not exist, said after the error, or "" when none is close.  The
    one place where a mistyped name (a module to patch or instrument, a
    target's function) gets its suggestions; a mistyped Config field is
    CPython's own TypeError, which makes them too."""
    import difflib

    close = [repr(match) for match in difflib.get_close_matches(name, sorted(set(names)), n=3)]
    if not close:
        return ""
    return f" (did you mean {', '.join(close[:-1]) + ' or ' if close[1:] else ''}{close[-1]}?)"


def _module_names(path):
    """The modules and packages that ``import`` finds in path's folders
    (None: sys.path, and the modules built into the interpreter)."""
    import pkgutil

    names = [info.name for info in pkgutil.iter_modules(path)]
    return names + list(sys.builtin_module_names) if path is None else names


def missing_module(name):
    """Why ``import name`` would find no module, with the nearest names
    there are, or None when it would find one.  Nothing is imported: a
    dotted name's packages are searched as their specs say (as _origin()
    does), so that a package to patch or instrument is still imported
    later, patched or instrumented."""
    parts = name.split(".")
    if not all(part.isidentifier() for part in parts):
        return None  # not a module name: the patching or rewriting says so
    path = None  # where the next part is searched: None is sys.path
    for i in range(1, len(parts) + 1):
        sub = ".".join(parts[:i])
        module = sys.modules.get(sub)
        if module is not None:
            locations = getattr(module, "__path__", None)
        else:
            try:
                spec = _find_spec(sub, path)
            except Exception:  # noqa: BLE001 - a finder that fails finds nothing
                spec = None
            if spec is None:
                prefix = ".".join(parts[:i - 1])
                found = [f"{prefix}.{n}" if prefix else n for n in _module_names(path)]
                return f"no module named {sub!r}" + nearest(sub, found)
            locations = spec.submodule_search_locations
        if i == len(parts):
            return None
        if locations is None:
            return f"no module named {name!r}: {sub!r} is not a package"
        path = list(locations)
    return None


def _refuse_missing(patch, instrument):
    """Refuses (ModuleNotFoundError) a module to patch or instrument that
    cannot be found from where the scenario is imported: a typo, surely.
    One that can be found but that the scenario does not import may yet
    be imported late, by a schedule, and is not refused here."""
    for verb, names in (("patch", patch), ("instrument", instrument)):
        for name in names:
            why = missing_module(name)
            if why:
                raise ModuleNotFoundError(f"cannot {verb} {name!r}: {why}")


def _find_spec(name, path):
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        if find is not None and (spec := find(name, path)) is not None:
            return spec
    return None


class SourceMismatch(Exception):
    """A replay's target is not the file its trace fingerprints."""


def _same_file(a, b):
    try:
        return os.path.samefile(a, b)
    except (OSError, TypeError, ValueError):
        return False


def _refuse_other_file(target, found, expect):
    if not found or not _same_file(found, expect):
        raise SourceMismatch(
            f"the scenario's source changed: target {target!r} is "
            f"{repr(found) if found else 'no source file'}, the trace was recorded from {expect!r}"
        )


def split_target(target):
    """(where, qualname, is_file) of MODULE:FUNCTION or PATH.py:FUNCTION.

    The one rule for what a target names: a file when the part before the
    last colon ends in .py or holds a slash, else a module, whose name must
    be Python identifiers joined by dots.  The utilities leave it to the
    worker, which goes by this function, as do ploom.check (which writes
    the targets) and the pytest plugin; no other code decides it."""
    where, sep, qualname = target.rpartition(":")
    if not sep or not where or not qualname:
        raise ValueError(f"target {target!r} is not MODULE:FUNCTION or PATH.py:FUNCTION")
    is_file = where.endswith(".py") or os.sep in where
    if not is_file and not all(part.isidentifier() for part in where.split(".")):
        raise ValueError(f"target {target!r} names neither a .py file nor a module ({where!r})")
    return where, qualname, is_file


def rewriter_module():
    """ploom._instrument, which rewrites plain state into scheduling
    points; ImportError, saying so, in a ploom that has none."""
    try:
        from ploom import _instrument
    except ImportError as exc:
        raise ImportError(
            f"cannot instrument plain state: this ploom has no ploom._instrument ({exc})"
        ) from None
    return _instrument


def load(target, expect=None, expect_blob=None, instrument=(), instrument_scenario=False, patch=(),
         expect_root=None, search_cwd=None, import_paths=(), patch_project=False):
    """Return (function, module name, qualname, source file) for TARGET.

    With EXPECT (a replay: the trace's fingerprinted source file), the
    target must be that file, and this is checked before any of the
    target's code runs: otherwise SourceMismatch.  With EXPECT_BLOB, its
    recorded blob id, the file is read once and must hash to it, and
    those bytes are what runs.  A file target then loads the recorded
    file itself, so a trace replays from any folder of its clone.  With
    EXPECT_ROOT, the repository or folder the replay runs in (else
    EXPECT's own folder), a module target whose packages or import root
    lie outside it is refused (OutsideRoot) before anything is imported.
    A replay puts the scenario's folder (or import root) on sys.path
    after the standard library, never ahead of it, then, as the search
    had them, SEARCH_CWD (the folder the search ran in, for a module
    target) and IMPORT_PATHS (its PYTHONPATH), those of them that lie
    inside EXPECT_ROOT: the trace recorded them, and a trace is untrusted.

    INSTRUMENT names the modules whose plain state becomes scheduling
    points when they are imported (and submodules of a package among
    them); the rewriting is installed before the scenario is imported.
    With INSTRUMENT_SCENARIO the scenario's own module is instrumented
    too: a file target is compiled with the rewriting, a module target's
    module is one more name to instrument.

    PATCH names the modules that get ploom.threading, ploom.queue and
    ploom._thread for threading, queue and _thread when they are imported
    (ploom._patch), installed after the rewriting, so that a module both
    instrumented and patched is both.  With PATCH_PROJECT the scenario's
    module and its project's (ploom._project) are patched too, and with
    INSTRUMENT_SCENARIO instrumented too: the project's root is
    EXPECT_ROOT on a replay, else the one above the scenario's file."""
    where, qualname, is_file = split_target(target)
    if expect is not None:
        refuse_installed(expect)
    checked = None if expect is None else read_checked(expect, expect_blob)
    names = list(instrument)
    if instrument_scenario and not is_file and where not in names:
        names.append(where)

    finder = None

    def install(file=None):
        # once the scenario's folder is on the path, where the modules
        # named are found, and before its import, which imports them
        nonlocal finder
        if patch:
            from ploom import _patch

            # what patching cannot mean (threading itself) is refused
            # first, with its own reason
            _patch.expand(patch)
        _refuse_missing(patch, [name for name in instrument if name != "-"])
        project = _project_of(where, is_file, file, expect_root) if patch_project else None
        if project is not None and instrument_scenario:
            finder = rewriter_module().install(names, project=project)
        elif names:
            finder = rewriter_module().install(names)
        if patch or project is not None:
            from ploom import _patch

            _patch.install(patch, project)

    if is_file:
        # instrumented as the scenario, or as a module named (by its name
        # as a module, the file's stem)
        if expect is not None:
            _search_paths(expect_root if expect_root is not None else os.path.dirname(expect), import_paths)
        file = where if expect is None else expect
        module = _load_file(file, checked,
                            lambda name: instrument_scenario or (finder is not None and finder.covers(name)),
                            lambda: install(file))
    elif expect is None:
        # like `python -m`: the current folder comes first on sys.path
        # (the worker itself starts with -P, so it is there only now)
        sys.path.insert(0, os.getcwd())
        install()
        module = importlib.import_module(where)
    else:
        # a replay searches the recorded package's root, not the folder
        # it was started in, and only inside the repository or folder the
        # replay runs in
        top = root_above(expect, where)
        root = expect_root if expect_root is not None else os.path.dirname(expect)
        _refuse_outside(where, expect, top, root)
        _search_paths(root, [search_cwd, *import_paths])
        _path_after_stdlib(top)
        _refuse_other_file(target, _origin(where), expect)
        install(expect)
        # the checked bytes come before any finder, the rewriting's too:
        # compiled with it here when its finder would have instrumented
        # the module (the module named, or a package of it)
        covered = finder is not None and finder.covers(where)
        sys.meta_path.insert(0, _CheckedFinder(where, os.path.abspath(expect), checked, covered))
        if patch:
            from ploom import _patch

            _patch.front()
        module = importlib.import_module(where)
    obj = module
    found = []  # the parts of qualname found so far
    for part in qualname.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            known = [".".join([*found, name]) for name in dir(obj) if not name.startswith("__")]
            raise AttributeError(
                f"module {module.__name__!r} has no attribute {qualname!r}"
                + nearest(".".join([*found, part]), known)
            ) from None
        found.append(part)
    if not callable(obj):
        raise TypeError(f"{target!r} is not callable")
    problem = scenario_problem(obj)
    if problem:
        raise TypeError(f"{target!r} {problem}")
    source = getattr(module, "__file__", None) or ""
    return obj, module.__name__, qualname, os.path.abspath(source) if source else ""


def _project_of(where, is_file, file, expect_root):
    """The scenario's project (ploom._project): on a replay the root it
    runs in, else the one above the scenario's file (file, or the one
    module where would be imported from)."""
    from ploom import _project

    if expect_root is not None:
        return _project.Project(expect_root)
    if file is None:
        file = _origin(where)
    if not file:
        # no file to be a project's: nothing more is patched
        return None
    file = os.path.abspath(file)
    import_root = os.path.dirname(file) if is_file else root_above(file, where)
    return _project.Project(_project.root_of(file, import_root))


def _hello_root(target, module, source, expect_root):
    """hello's ROOT (lib/event.h): the project root of the scenario at
    source (ploom._project), on a replay the root it runs in; "" when
    unknown, or when its path is no label.  Outside git a trace records
    its paths against it."""
    if expect_root is not None:
        root = os.path.realpath(expect_root)
    elif not source:
        return ""
    else:
        from ploom import _project, _pytest_target

        is_file = not _pytest_target.is_pytest_target(target) and split_target(target)[2]
        # the folder it is imported from: a file's own, or the one above
        # its top-level package
        import_root = os.path.dirname(source) if is_file else root_above(source, module)
        root = _project.root_of(source, import_root)
    if len(root.encode("utf-8", "surrogateescape")) > _ploom.PATH_MAX or any(
        ord(c) < 0x20 or ord(c) == 0x7F for c in root
    ):
        return ""
    return root


def _patch_loader(name, loader):
    """loader, or the patched one when name is a module to patch."""
    patch = sys.modules.get("ploom._patch")
    path = getattr(loader, "path", None) or getattr(loader, "get_filename", lambda _: None)(name)
    return loader if patch is None else patch.loader_for(name, loader, path)


def _virtual_time():
    """Puts ploom's virtual clock (pyext/clock.c) in place of the time
    module's clocks and its sleep, before any code of the scenario's is
    imported: ``from time import monotonic`` then finds ploom's.  The
    worker runs nothing but schedules and its children are forks of it,
    so the real module is changed in place.  time.time() starts at
    1700000000.0, time.monotonic() and time.perf_counter() at 1000.0; they
    move only when a task sleeps or a timed wait times out.

    threading and queue are imported first and keep the real clock: their
    timed waits really wait (ploom does not schedule them), and deadline
    loops on a virtual clock that does not move would never end."""
    import queue  # noqa: F401 - imported before the clock changes, see above
    import threading  # noqa: F401
    import time

    time.time = _ploom.clock_time
    time.time_ns = _ploom.clock_time_ns
    time.monotonic = time.perf_counter = _ploom.clock_monotonic
    time.monotonic_ns = time.perf_counter_ns = _ploom.clock_monotonic_ns
    time.sleep = _ploom.clock_sleep


def _module_sources(names, own):
    """hello's SOURCES (lib/event.h): the source files of the modules
    loaded under names (a package's submodules too) but own, the
    scenario's, each ended by a newline; a file whose path is no label
    is left out."""
    files = set()
    wanted = [n for n in names if n != "-"]
    # most modules are turned away by their top-level name alone: the
    # loop runs over every module the process imported (pytest's too)
    tops = {n.partition(".")[0] for n in wanted}
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] not in tops:
            continue
        if not any(name == n or name.startswith(n + ".") for n in wanted):
            continue
        file = getattr(module, "__file__", None)
        if not isinstance(file, str) or not file.endswith(".py"):
            continue
        file = os.path.abspath(file)
        if file != own and len(file.encode("utf-8", "surrogateescape")) <= _ploom.PATH_MAX and not any(
            ord(c) < 0x20 or ord(c) == 0x7F for c in file
        ):
            files.add(file)
    return "".join(f"{file}\n" for file in sorted(files)[: _ploom.SOURCES_MAX])


USAGE = (
    "usage: python -P -m ploom._worker [--expect=FILE [--expect-blob=OID] [--expect-root=DIR]\n"
    "                                  [--search-cwd=DIR] [--import-path=DIR]...]\n"
    "                                  [--patch=MODULE]...\n"
    "                                  [--instrument=MODULE]... [--patch-project] [--instrument-scenario]\n"
    "                                  [--timeouts=any] [--plain-points=*|-|*-] TARGET"
)


# the options (argv less the target) of the main() whose preamble and
# collection already ran in this process: a template's collector's, which
# its forked workers do not run again
_prepared: list | None = None


def precollect(argv):
    """In a worker template's collector (ploom._template): main(argv)'s
    preamble, as a fresh worker runs it before it loads anything, then
    pytest's collection of the file of the target's test; the workers it
    forks then run main() with the same options from their load on.
    Raises when either fails."""
    global _prepared
    if main(argv, collect=True) != 0:
        raise RuntimeError("the worker's options are refused")
    _prepared = argv[1:-1]


def main(argv, collect=False):
    prepared = _prepared is not None and _prepared == argv[1:-1]
    expect = expect_blob = expect_root = search_cwd = None
    import_paths = []
    patch = []
    instrument = []
    args = argv[1:]
    # fixed order, as lib/worker.c writes it: [--expect=FILE [--expect-blob=OID]
    # [--expect-root=DIR] [--search-cwd=DIR] [--import-path=DIR]...] [--patch=MODULE]...
    # [--instrument=MODULE]... [--patch-project] [--instrument-scenario] [--timeouts=any]
    # [--plain-points=*|-|*-] TARGET
    if args and args[0].startswith("--expect="):
        expect = args.pop(0)[len("--expect="):]
        if args and args[0].startswith("--expect-blob="):
            expect_blob = args.pop(0)[len("--expect-blob="):]
        if args and args[0].startswith("--expect-root="):
            expect_root = args.pop(0)[len("--expect-root="):]
        if args and args[0].startswith("--search-cwd="):
            search_cwd = args.pop(0)[len("--search-cwd="):]
        while args and args[0].startswith("--import-path="):
            import_paths.append(args.pop(0)[len("--import-path="):])
    while args and args[0].startswith("--patch="):
        patch.append(args.pop(0)[len("--patch="):])
    while args and args[0].startswith("--instrument="):
        instrument.append(args.pop(0)[len("--instrument="):])
    patch_project = bool(args) and args[0] == "--patch-project"
    if patch_project:
        args.pop(0)
    instrument_scenario = bool(args) and args[0] == "--instrument-scenario"
    if instrument_scenario:
        args.pop(0)
    if args and args[0].startswith("--timeouts=") and prepared:
        args.pop(0)
    elif args and args[0].startswith("--timeouts="):
        try:
            _ploom.set_timeouts(args.pop(0)[len("--timeouts="):])
        except ValueError as exc:
            print(f"{exc}\n{USAGE}", file=sys.stderr)
            return 2
    if args and args[0] == "--plain-points=*" and prepared:
        args.pop(0)
    elif args and args[0] in ("--plain-points=*", "--plain-points=-", "--plain-points=*-"):
        # before anything instrumented is imported: its sites are points
        # from their registration on
        try:
            which = args.pop(0)[len("--plain-points="):]
            _ploom._i_shared((["*"] if "*" in which else []) + (_read_points() if "-" in which else []))
        except (OSError, ValueError) as exc:
            _ploom.write_error(EVENT_FD, "load", f"cannot read the plain points: {exc}")
            return 2
    if len(args) != 1:
        print(USAGE, file=sys.stderr)
        return 2
    target = args[0]
    # stdout belongs to the utility (its JSON): what the scenario's module
    # prints while it is imported goes to stderr instead
    sys.stdout.flush()
    os.dup2(2, 1)
    # a module that calls ploom.check() at top level must not explore again
    # while this process imports it; the value is this process's id, as a
    # program the scenario starts inherits the variable but is not the
    # worker (exploration._in_worker())
    os.environ["PLOOM_WORKER"] = str(os.getpid())
    if collect:
        # a collector's: not a worker's errors to report, but the
        # collection to keep
        _virtual_time()
        from ploom import _guard, _pytest_target, _signals

        _guard.install()
        _signals.install()
        _pytest_target.precollect(target, patch, instrument)
        # what each worker would do before its first fork, done once for
        # all of them: the test file's source is every worker's source
        _warm_up_tracebacks(_pytest_target.collected_file())
        _import_primitives()
        return 0
    if not prepared:
        _virtual_time()
    try:
        # from here on, the standard library's primitives made by code
        # that is not patched end any schedule that uses them
        from ploom import _guard, _signals

        _guard.install()
        _signals.install()
        from ploom import _pytest_target

        if _pytest_target.is_pytest_target(target):
            # pytest's collection imports the modules to patch, as it
            # collects: they are not the scenario's imports to check
            scenario, module, qualname, source = _pytest_target.load(target, expect, expect_blob,
                                                                     patch, instrument)
        else:
            scenario, module, qualname, source = load(target, expect, expect_blob, instrument,
                                                      instrument_scenario, patch, expect_root,
                                                      search_cwd, import_paths, patch_project)
        if patch and not _pytest_target.is_pytest_target(target):
            from ploom import _patch

            _patch.check_imported(patch)
    except SourceMismatch as exc:
        _ploom.write_error(EVENT_FD, "source", str(exc))
        return 2
    except OutsideRoot as exc:
        _ploom.write_error(EVENT_FD, "load", str(exc))
        return 2
    except BaseException as exc:  # noqa: BLE001 - any failure to load is reported, then we exit
        _ploom.write_error(EVENT_FD, "load", str(exc), type(exc).__qualname__)
        return 2
    gil = sys._is_gil_enabled() if hasattr(sys, "_is_gil_enabled") else True
    scenario_instrumented, instrumented = _instrumented(module, instrument, instrument_scenario)
    hello = (
        sys.implementation.name,
        ".".join(str(part) for part in sys.version_info[:3]),
        gil,
        os.environ.get("PYTHONHASHSEED", "random"),
        module,
        qualname,
        source,
        scenario_instrumented,
        ",".join(instrumented),
        _module_sources([*patch, *instrumented], source),
        _hello_root(target, module, source, expect_root),
    )
    _warm_up_tracebacks(source)
    _import_primitives()
    _ploom.serve(scenario, hello, CMD_FD, EVENT_FD)
    return 0


def _read_points():
    """The site keys on POINTS_FD (lib/event.h's `points` line), which is
    closed after: a list of any length, which the command line could not
    hold."""
    chunks = []
    try:
        while chunk := os.read(POINTS_FD, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(POINTS_FD)
    return _ploom._i_points(b"".join(chunks))


# the most names the hello lists, as a config's list holds (lib/trace.h's
# PLOOM_MODULES_MAX), so that the statistics read back
_SEEN_MAX = 64


def _instrumented(module, instrument, instrument_scenario):
    """What the worker instrumented by now, for its hello: whether the
    scenario's module (when asked to), the names of instrument under
    which it compiled a module, then the top-level names of the other
    modules it compiled (the project's, by default), up to _SEEN_MAX names
    in all.  A name asked for but not instrumented (never imported, or
    loaded past the rewriting) is not claimed."""
    rewriter = sys.modules.get("ploom._instrument")
    done = rewriter.instrumented() if rewriter is not None else ()
    scenario = instrument_scenario and module in done
    # the scenario's own module is said once, as the scenario
    names = [name for name in dict.fromkeys(instrument)
             if any(m == name or m.startswith(name + ".") for m in done) and not (scenario and name == module)]
    # a package stands for its modules, as a name of instrument does
    others = dict.fromkeys(m.partition(".")[0] for m in done
                           if m != module and not any(m == name or m.startswith(name + ".") for name in names))
    others.pop(module, None)
    return scenario, (names + list(others))[:_SEEN_MAX]


def _import_primitives():
    """Imports ploom.threading and ploom.queue before the first fork.

    A scenario reaches them lazily (ploom.Queue, ploom.Condition, a
    patched module's first use): imported in the worker, every schedule's
    child inherits them, rather than compiling and importing them in each
    one, which without a bytecode cache (PYTHONDONTWRITEBYTECODE=1) costs
    more than the rest of a short schedule."""
    import ploom.queue
    import ploom.threading  # noqa: F401


def _warm_up_tracebacks(source):
    """Formats one traceback before the first fork.

    The first traceback a process formats imports what it needs and reads
    the source files it shows; done once here, every schedule's child
    inherits that instead of paying for it in each failing schedule (about
    3 ms, more than the rest of a schedule)."""
    try:
        raise RuntimeError("warm-up")
    except RuntimeError as exc:
        traceback.format_exception(exc)
    if source:
        linecache.getlines(source)


def exit_now(code):
    """Ends the worker with code once its atexit functions ran and its
    output is flushed, without the interpreter's teardown: with pytest or
    a library loaded, that teardown (every module's objects freed, a last
    collection) took longer than a schedule, and nothing of it reaches the
    utility, whose records the worker has all written."""
    import atexit

    try:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def run_as_main(argv):
    """main(argv) as ``python -m ploom._worker`` runs it: its exit status
    from its return, SystemExit, or 1 with the traceback of anything else,
    as the interpreter would give them."""
    code = 1
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - as the interpreter would, then exit 1
        traceback.print_exc()
    exit_now(code)


if __name__ == "__main__":
    run_as_main(sys.argv)
