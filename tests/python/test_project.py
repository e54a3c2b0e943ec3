"""A project in the standard layout, as a pytest user has it: settings in
pyproject.toml (``pythonpath = ["."]``, ``[tool.ploom]``), the library in
mylib/, the tests in tests/.  The fixture finds the race, the commands it
prints replay it from the project's root, and a fix is told apart from a
scenario that does something else.  Every command runs in a subprocess,
from the project's root, as a user types it."""

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

RACY = """
import threading


class Account:
    def __init__(self, balance):
        self.balance = balance
        self.lock = threading.Lock()

    def withdraw(self, amount):
        with self.lock:
            enough = self.balance >= amount
        if enough:
            with self.lock:
                self.balance -= amount
"""

FIXED = """
import threading


class Account:
    def __init__(self, balance):
        self.balance = balance
        self.lock = threading.Lock()

    def withdraw(self, amount):
        with self.lock:
            if self.balance >= amount:
                self.balance -= amount
"""

TEST = """
import threading

from mylib.account import Account


def scenario():
    account = Account(100)
    threads = [threading.Thread(target=account.withdraw, args=(80,)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert account.balance >= 0, f"overdrawn: {account.balance}"


def test_account(ploom_check):
    ploom_check(scenario)
"""

# the scenario's own module starts threading.Threads: patched too
PYPROJECT = """
[tool.pytest.ini_options]
pythonpath = ["."]

[tool.ploom]
patch = ["mylib.account", "test_account"]
"""


def _write(root, name, text):
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


def _run(root, *argv, cwd=None):
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return subprocess.run(list(argv), cwd=cwd or root, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    _write(root, "pyproject.toml", PYPROJECT)
    _write(root, "mylib/__init__.py", "")
    _write(root, "mylib/account.py", RACY)
    _write(root, "tests/test_account.py", TEST)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _pytest(root, *args, cwd=None):
    return _run(root, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, cwd=cwd)


def _ploom(root, *args, cwd=None):
    return _run(root, sys.executable, "-m", "ploom", *args, cwd=cwd)


def _found(project):
    """Runs the tests; returns the printed replay command's argv and trace."""
    result = _pytest(project)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "AssertionError: overdrawn: -60" in result.stdout
    assert "Setting patch: mylib.account, test_account (pyproject.toml [tool.ploom])" in result.stdout
    command = re.search(r"^Replay: (pytest .*--ploom-replay=(\S+))  #", result.stdout, re.M)
    assert command, result.stdout
    return command.group(1).split(), command.group(2)


def test_the_printed_replays_fail_as_the_search_did_from_the_projects_root(project):
    command, trace = _found(project)
    recorded = json.loads((project / trace).read_text())["scenario"]
    assert (recorded["cwd"], recorded["import_paths"]) == (".", ["tests", "."])
    replayed = _pytest(project, *command[1:])
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "ModelCheckError: builtins.AssertionError: overdrawn: -60" in replayed.stdout
    replayed = _ploom(project, "replay", trace)
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert replayed.stdout.startswith("ploom.exploration.ModelCheckError: builtins.AssertionError: overdrawn: -60\n")
    # from a folder below the root, the trace's paths still start at the root
    replayed = _ploom(project, "replay", os.path.join("..", trace), cwd=project / "tests")
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr


def test_a_recorded_import_path_is_honoured_only_inside_the_root(project, tmp_path):
    _, trace = _found(project)
    data = json.loads((project / trace).read_text())
    # a path that climbs out of the root is refused by the reader
    data["scenario"]["import_paths"] = ["../elsewhere"]
    (project / "forged.json").write_text(json.dumps(data))
    refused = _ploom(project, "replay", "forged.json")
    assert refused.returncode == 2
    assert "field 'scenario.import_paths[0]' is not a folder inside its root" in refused.stderr
    # a link out of the root is not followed: mylib is then found nowhere
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "mylib").rename(outside / "mylib")
    (project / "link").symlink_to(outside)
    del data["scenario"]["cwd"]
    data["fingerprints"] = data["fingerprints"][:1]
    data["scenario"]["import_paths"] = ["tests", "link"]
    (project / "forged.json").write_text(json.dumps(data))
    refused = _ploom(project, "replay", "forged.json")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "no module named 'mylib'" in refused.stderr


def test_a_mistyped_patch_names_the_module_of_the_project(project):
    result = _ploom(project, "check", "--patch=mylib.acount", "tests/test_account.py:scenario")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "(did you mean 'mylib.account'?)" in result.stderr


def test_after_the_fix_a_replay_names_the_changed_module_and_on_current_source_passes(project):
    command, trace = _found(project)
    recorded = json.loads((project / trace).read_text())
    # the project's modules are patched, so fingerprinted, by default: the
    # package's __init__ as well as the module named
    assert [f["relpath"] for f in recorded["fingerprints"]] == [
        "tests/test_account.py", "mylib/__init__.py", "mylib/account.py"]
    _write(project, "mylib/account.py", FIXED)
    replayed = _ploom(project, "replay", trace)
    assert replayed.returncode == 4, replayed.stdout + replayed.stderr
    assert re.search(r"ReplayDivergenceError: the scenario's source changed: '\S*/mylib/account\.py' "
                     r"\(recorded blob \w+, now \w+\)\n", replayed.stdout), replayed.stdout
    assert f"Replay on the current source: python -m ploom replay --on-current-source {trace}\n" in replayed.stdout
    replayed = _pytest(project, *command[1:])
    assert replayed.returncode == 1
    assert "mylib/account.py' (recorded blob" in replayed.stdout
    assert f"Replay on the current source: {' '.join(command)} --ploom-on-current-source" in replayed.stdout
    current = _ploom(project, "replay", "--on-current-source", trace)
    assert current.returncode == 0, current.stdout + current.stderr
    assert "the source is the trace's" not in current.stderr
    assert "the source differs from the trace's in 1 file:" in current.stderr
    assert "mylib/account.py' (recorded blob" in current.stderr
    current = _pytest(project, *command[1:], "--ploom-on-current-source")
    assert current.returncode == 0, current.stdout + current.stderr


# the scenario of TEST, without the test that pytest would collect
BARE_SCENARIO = TEST.split("\n\ndef test_account")[0] + "\n"


def test_without_git_the_folder_of_the_settings_is_the_project(tmp_path):
    # outside git the root was the scenario's folder, tests/: mylib beside
    # it was not instrumented, and the race passed in one schedule
    root = tmp_path / "proj"
    _write(root, "pyproject.toml", '[tool.pytest.ini_options]\npythonpath = ["."]\n')
    _write(root, "mylib/__init__.py", "")
    _write(root, "mylib/account.py", RACY)
    _write(root, "tests/scen.py", BARE_SCENARIO)
    result = _ploom(root, "check", "tests/scen.py:scenario")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "AssertionError: overdrawn: -60" in result.stdout + result.stderr


@pytest.fixture
def bare_project(tmp_path, monkeypatch):
    """The project without git (no .git at or above it: git stops
    looking at tmp_path), its scenario a file in tests/, settings in
    pyproject.toml."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    root = tmp_path / "proj"
    _write(root, "pyproject.toml", '[tool.pytest.ini_options]\npythonpath = ["."]\n')
    _write(root, "mylib/__init__.py", "")
    _write(root, "mylib/account.py", RACY)
    _write(root, "tests/scen.py", BARE_SCENARIO)
    assert subprocess.run(["git", "rev-parse"], cwd=root, capture_output=True).returncode != 0
    return root


def _utility(name):
    from ploom._utility import find_utility

    return find_utility(name)


def _bare_found(root):
    """ploom check of the bare project's scenario; its printed replay
    command's argv and the trace it names."""
    result = _ploom(root, "check", "tests/scen.py:scenario")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "AssertionError: overdrawn: -60" in result.stdout
    command = re.search(r"^Replay: (python -m ploom replay (\S+))  #", result.stdout, re.M)
    assert command, result.stdout
    return command.group(1).split(), command.group(2)


def test_without_git_the_trace_records_its_paths_against_the_projects_root(bare_project):
    _, trace = _bare_found(bare_project)
    recorded = json.loads((bare_project / trace).read_text())
    assert recorded["source"] == {"root": "project", "commit": None, "dirty": False}
    assert recorded["scenario"]["relpath"] == "tests/scen.py"
    # the search imported mylib from the root (pytest's pythonpath), and ran there
    assert (recorded["scenario"]["cwd"], recorded["scenario"]["import_paths"]) == (".", ["."])
    # the library beside tests/ is the project's: fingerprinted
    assert [f["relpath"] for f in recorded["fingerprints"]] == [
        "tests/scen.py", "mylib/__init__.py", "mylib/account.py"]
    shown = _run(bare_project, _utility("ploom-show"), trace)
    assert "source       tests/scen.py (blob " in shown.stdout and ") in its project\n" in shown.stdout


def test_without_git_the_replay_fails_as_the_search_did_from_the_root_and_from_tests(bare_project):
    command, trace = _bare_found(bare_project)
    want = "ploom.exploration.ModelCheckError: builtins.AssertionError: overdrawn: -60\n"
    # the printed command, verbatim, where it was printed
    replayed = _run(bare_project, sys.executable, *command[1:])
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert replayed.stdout.startswith(want), replayed.stdout
    # from tests/, which holds the scenario but not mylib: the root is
    # still the project's, and mylib imports from it
    replayed = _ploom(bare_project, "replay", os.path.join("..", trace), cwd=bare_project / "tests")
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert replayed.stdout.startswith(want), replayed.stdout
    # and from a folder below tests/, with ploom-replay itself
    deeper = bare_project / "tests" / "deeper"
    deeper.mkdir()
    replayed = _run(bare_project, _utility("ploom-replay"), str(bare_project / trace), cwd=deeper)
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert replayed.stderr == "ploom-replay: reproduced: builtins.AssertionError: overdrawn: -60\n"


def test_without_git_a_copy_of_the_project_replays_and_elsewhere_nothing_runs(bare_project, tmp_path):
    _, trace = _bare_found(bare_project)
    saved = tmp_path / "trace.json"
    saved.write_text((bare_project / trace).read_text())
    copy = tmp_path / "copy"
    bare_project.rename(copy)
    replayed = _run(copy, _utility("ploom-replay"), str(saved), cwd=copy / "tests")
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert json.loads(replayed.stdout)["scenario"]["file"] == str((copy / "tests" / "scen.py").resolve())
    # the copy's library is the one fingerprinted: an edit there is a divergence
    _write(copy, "mylib/account.py", FIXED)
    replayed = _run(copy, _utility("ploom-replay"), str(saved))
    assert replayed.returncode == 4, replayed.stdout + replayed.stderr
    assert "mylib/account.py' (recorded blob" in replayed.stderr
    # from a folder with no tests/scen.py at or above it
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    refused = _ploom(elsewhere, "replay", str(saved))
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert (f"the trace's scenario 'tests/scen.py' is in no folder at or above the current directory "
            f"'{elsewhere.resolve()}/': replay from inside a copy of its project") in refused.stderr
    assert "Traceback" not in refused.stderr


@pytest.mark.parametrize("relpath", ["../scen.py", "tests/../../scen.py", "/tmp/scen.py", "", "tests//scen.py"])
def test_without_git_a_tampered_relative_path_is_refused(bare_project, relpath):
    _, trace = _bare_found(bare_project)
    data = json.loads((bare_project / trace).read_text())
    data["scenario"]["relpath"] = relpath
    (bare_project / "forged.json").write_text(json.dumps(data))
    refused = _ploom(bare_project, "replay", "../forged.json", cwd=bare_project / "tests")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "field 'scenario.relpath' is not a relative path inside its root" in refused.stderr
    data = json.loads((bare_project / trace).read_text())
    data["fingerprints"][1]["relpath"] = relpath
    (bare_project / "forged.json").write_text(json.dumps(data))
    refused = _run(bare_project, _utility("ploom-replay"), "forged.json")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "field 'fingerprints[1].relpath' is not a relative path inside its root" in refused.stderr


def test_without_git_the_pytest_replay_fails_as_the_search_did(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    root = tmp_path / "proj"
    _write(root, "pyproject.toml", PYPROJECT)
    _write(root, "mylib/__init__.py", "")
    _write(root, "mylib/account.py", RACY)
    _write(root, "tests/test_account.py", TEST)
    command, trace = _found(root)
    recorded = json.loads((root / trace).read_text())
    assert (recorded["source"]["root"], recorded["scenario"]["relpath"]) == ("project", "tests/test_account.py")
    replayed = _pytest(root, *command[1:])
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "ModelCheckError: builtins.AssertionError: overdrawn: -60" in replayed.stdout
    replayed = _ploom(root, "replay", os.path.join("..", trace), cwd=root / "tests")
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert replayed.stdout.startswith("ploom.exploration.ModelCheckError: builtins.AssertionError: overdrawn: -60\n")
