"""The rooms of python/ploom: no module of the package is longer than
1,000 lines, and none reaches into another's underscored names (a name a
second module needs is that module's public-within-the-package name).
Read from the source, with ast: nothing is imported."""

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "python" / "ploom"
MAX_LINES = 1000

# What is left, and why: the extension names its instrumentation hooks
# _i_* (ploom._instrument's default_hooks looks them up by that prefix).
LEFT_OVER_SIZE: set[str] = set()
LEFT_NAMES = {
    ("_ploom", "_i_"),
}


def _modules():
    return sorted(PACKAGE.glob("*.py"))


def _private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _is_module(name):
    return (PACKAGE / f"{name}.py").exists() or name == "_ploom"


def _left(owner, name):
    return any(owner == o and (prefix is None or name.startswith(prefix)) for o, prefix in LEFT_NAMES)


def _reaches(path):
    """(owner module, name) for each underscored name of another module of
    the package that path imports or reads as an attribute."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    modules = {}  # local name -> module of the package
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "ploom":
                for alias in node.names:
                    if _is_module(alias.name):
                        modules[alias.asname or alias.name] = alias.name
                    elif _private(alias.name):
                        found.append(("ploom", alias.name))
            elif node.module.startswith("ploom."):
                owner = node.module.removeprefix("ploom.")
                found += [(owner, alias.name) for alias in node.names if _private(alias.name)]
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in modules and _private(node.attr)):
            found.append((modules[node.value.id], node.attr))
    own = path.stem
    return [(owner, name) for owner, name in found if owner != own]


def test_the_package_has_modules_to_check():
    assert len(_modules()) > 10


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.name)
def test_no_module_is_over_its_size(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    if path.name in LEFT_OVER_SIZE:
        assert lines > MAX_LINES, f"{path.name} is {lines} lines now: take it off LEFT_OVER_SIZE"
        return
    assert lines <= MAX_LINES, f"{path.name} has {lines} lines, more than {MAX_LINES}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.name)
def test_no_module_reaches_into_another_s_underscored_names(path):
    reached = [f"{owner}.{name}" for owner, name in _reaches(path) if not _left(owner, name)]
    assert not reached, f"{path.name} uses another module's underscored names: {', '.join(reached)}"


def test_the_check_sees_an_underscored_name_imported_or_read(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("from ploom import _worker\nfrom ploom.threading import _Woken\n_worker._rewriter()\n")
    assert _reaches(sample) == [("threading", "_Woken"), ("_worker", "_rewriter")]
