"""The worker's --instrument=MODULE and --instrument-scenario
(python/ploom/_worker.py), against a stand-in for ploom._instrument that
notes what it is asked: the rewriting is installed before the scenario is
imported, a file scenario is compiled through it, a module scenario is one
more name to install, and a replay compiles its checked bytes through it.

The stand-in rewrites nothing: what an instrumented run does is the
rewriter's to test.  Each test loads its scenario in this process, with
sys.path, sys.meta_path and sys.modules put back after it."""

import importlib.util
import subprocess
import sys
import textwrap
import types

import pytest

import ploom
from ploom import _worker


class Finder:
    """What install() returns: the finder, which says which modules it
    instruments (the real one's rule, which the worker asks it)."""

    def __init__(self, names):
        self.names = tuple(names)

    def covers(self, fullname):
        return any(fullname == name or fullname.startswith(name + ".") for name in self.names)


class Rewriter(types.ModuleType):
    """ploom._instrument's API, noting each call with what was imported
    when it came."""

    def __init__(self, watched):
        super().__init__("ploom._instrument")
        self.watched = watched
        self.calls = []

    def _imported(self):
        return sorted(name for name in self.watched if name in sys.modules)

    def install(self, modules):
        self.calls.append(("install", tuple(modules), self._imported()))
        return Finder(modules)

    def compile_source(self, source, filename, modname):
        self.calls.append(("compile_source", filename, modname))
        return compile(source, filename, "exec", dont_inherit=True)

    def bind(self, namespace):
        self.calls.append(("bind", namespace["__name__"]))

    def instrumented(self):
        return ()


@pytest.fixture
def isolated(monkeypatch):
    """Whatever a test imports or puts on the import path is gone after it."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    before = set(sys.modules)
    yield monkeypatch
    for name in set(sys.modules) - before:
        del sys.modules[name]


def use_rewriter(monkeypatch, rewriter):
    monkeypatch.setitem(sys.modules, "ploom._instrument", rewriter)
    monkeypatch.setattr(ploom, "_instrument", rewriter, raising=False)


def no_rewriter(monkeypatch):
    # as in a ploom without one: importing it fails
    monkeypatch.setitem(sys.modules, "ploom._instrument", None)
    monkeypatch.delattr(ploom, "_instrument", raising=False)


def write(folder, name, text):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def project(folder, scenario):
    """A scenario module (named scenario) importing its library, libmod."""
    write(folder, "libmod.py", "VALUE = 1\n")
    return write(folder, f"{scenario}.py", """
        import libmod

        def scenario():
            assert libmod.VALUE == 1
    """)


def package(folder, name):
    """The package name holding the scenario module scn; returns its file."""
    write(folder, f"{name}/__init__.py", "")
    return write(folder, f"{name}/scn.py", """
        def scenario():
            pass
    """)


def test_a_file_scenario_is_compiled_through_the_rewriter(tmp_path, isolated):
    path = project(tmp_path, "scn_file")
    rewriter = Rewriter({"scn_file", "libmod"})
    use_rewriter(isolated, rewriter)
    _, module, _, _ = _worker.load(f"{path}:scenario", instrument=("libmod",), instrument_scenario=True)
    assert module == "scn_file"
    assert rewriter.calls == [
        # before the scenario, and so before the library it imports
        ("install", ("libmod",), []),
        ("compile_source", str(path), "scn_file"),
        ("bind", "scn_file"),
    ]


def test_a_file_scenario_not_instrumented_is_not_compiled_through_it(tmp_path, isolated):
    path = project(tmp_path, "scn_plain")
    rewriter = Rewriter({"scn_plain", "libmod"})
    use_rewriter(isolated, rewriter)
    _worker.load(f"{path}:scenario", instrument=("libmod",))
    assert rewriter.calls == [("install", ("libmod",), [])]


def test_a_module_scenario_is_one_more_name_to_install(tmp_path, isolated):
    project(tmp_path, "scn_mod")
    isolated.chdir(tmp_path)
    rewriter = Rewriter({"scn_mod", "libmod"})
    use_rewriter(isolated, rewriter)
    _worker.load("scn_mod:scenario", instrument=("libmod",), instrument_scenario=True)
    # its import is the rewriter's finder's to rewrite, as the library's
    assert rewriter.calls == [("install", ("libmod", "scn_mod"), [])]


@pytest.mark.parametrize(
    "instrument, scenario",
    [((), True), (("pkg_r",), False), (("pkg_r.scn",), False)],
    ids=["the scenario", "its package", "its name"],
)
def test_a_replayed_module_scenario_compiles_its_checked_bytes_through_it(tmp_path, isolated, instrument,
                                                                           scenario):
    path = package(tmp_path, "pkg_r")
    rewriter = Rewriter({"pkg_r.scn"})
    use_rewriter(isolated, rewriter)
    _worker.load("pkg_r.scn:scenario", expect=str(path), expect_root=str(tmp_path), instrument=instrument,
                 instrument_scenario=scenario)
    # the checked bytes come first, before the rewriter's finder: they are
    # compiled through it here, as the search's import did
    assert rewriter.calls[0][0] == "install"
    assert rewriter.calls[1:] == [("compile_source", str(path), "pkg_r.scn"), ("bind", "pkg_r.scn")]


@pytest.mark.skipif(
    importlib.util.find_spec("ploom._instrument") is None,
    reason="ploom._instrument (the plain-state rewriter) is not in this tree yet",
)
def test_the_real_rewriter_instruments_a_replayed_module_of_a_package_named(tmp_path, isolated):
    from ploom import _instrument

    path = package(tmp_path, "pkg_real")
    _worker.load("pkg_real.scn:scenario", expect=str(path), expect_root=str(tmp_path), instrument=("pkg_real",))
    assert "pkg_real.scn" in _instrument.instrumented()
    assert "_ploom_G" in vars(sys.modules["pkg_real.scn"])


def test_a_replayed_module_scenario_not_instrumented_is_compiled_as_it_is(tmp_path, isolated):
    path = package(tmp_path, "pkg_p")
    write(tmp_path, "pkg_px.py", "")  # a module of that name, but not the package
    rewriter = Rewriter(set())
    use_rewriter(isolated, rewriter)
    _worker.load("pkg_p.scn:scenario", expect=str(path), expect_root=str(tmp_path), instrument=("pkg_px",))
    assert rewriter.calls == [("install", ("pkg_px",), [])]


def test_without_instrumentation_the_rewriter_is_not_needed(tmp_path, isolated):
    path = project(tmp_path, "scn_none")
    no_rewriter(isolated)
    _, module, _, _ = _worker.load(f"{path}:scenario")
    assert module == "scn_none"


@pytest.mark.parametrize("options", [{"instrument": ("libmod",)}, {"instrument_scenario": True}])
def test_instrumenting_without_the_rewriter_says_so(tmp_path, isolated, options):
    path = project(tmp_path, "scn_missing")
    no_rewriter(isolated)
    with pytest.raises(ImportError, match=r"^cannot instrument plain state: this ploom has no ploom\._instrument"):
        _worker.load(f"{path}:scenario", **options)


@pytest.mark.parametrize(
    "args",
    [
        ["--instrument-scenario", "--instrument=m", "x:f"],
        ["--instrument=m", "--patch=p", "x:f"],
        ["--plain-points=m:1", "--instrument=m", "x:f"],
        ["--instrument-scenario", "--instrument-scenario", "x:f"],
        ["--instrument-scenario", "--patch-project", "x:f"],
        ["--patch-project", "--instrument=m", "x:f"],
        ["--instrument=m"],
    ],
)
def test_the_worker_takes_its_options_in_their_order_only(args):
    result = subprocess.run([sys.executable, "-P", "-m", "ploom._worker", *args], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr == _worker.USAGE + "\n"
    assert "[--patch=MODULE]...\n" in result.stderr
    assert "[--instrument=MODULE]... [--patch-project] [--instrument-scenario]\n" in result.stderr
