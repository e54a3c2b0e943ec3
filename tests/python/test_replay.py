"""ploom.check's two traces and ploom.exploration.replay(): the minimized
trace, replaying either trace, and each kind of divergence.

The scenario is a copy of the bank example in the test's folder, so that a
test can edit its source under a saved trace."""

import importlib
import json
import os
import re
import subprocess
import sys

import pytest

import ploom
from bank_copy import write_bank
from ploom._utility import find_utility
from ploom.exploration import (
    ModelCheckError,
    ReplayDivergenceError,
    replay,
)


@pytest.fixture
def bank(tmp_path, monkeypatch):
    """The bank module, importable, in tmp_path, which is the current
    folder: a replay runs only a file of the folder it starts in."""
    path = write_bank(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    module = importlib.import_module(path.stem)
    yield module
    sys.modules.pop(path.stem, None)


def failure(scenario, tmp_path, **options):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(scenario, ploom.Config(trace_dir=str(tmp_path / "traces"), **options))
    return info.value


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def test_a_failure_saves_the_original_and_a_minimized_trace(bank, tmp_path):
    exc = failure(bank.scenario, tmp_path)
    assert exc.original_trace.endswith("-original.json")
    assert exc.minimized_trace == exc.original_trace.replace("-original.json", "-minimized.json")
    # a line each: the failure, the traces, the next step (the minimized trace)
    assert str(exc).splitlines() == [
        "builtins.AssertionError: the account is overdrawn",
        f"Original trace: {exc.original_trace}",
        f"Minimized trace: {exc.minimized_trace}",
        f"Replay: python -m ploom replay {exc.minimized_trace}  # read it with: ploom-show {exc.minimized_trace}",
    ]
    assert exc.trace_to_read == exc.minimized_trace
    original, minimized = load(exc.original_trace), load(exc.minimized_trace)
    assert minimized["preemptions"] <= original["preemptions"]
    assert minimized["minimized_from"] == original["preemptions"]
    assert minimized["outcome"]["exception"] == original["outcome"]["exception"]
    assert minimized["id"] == original["id"]
    assert os.path.basename(exc.original_trace) == f"{original['id']}-original.json"
    assert original["fingerprints"][0]["path"] == os.path.abspath(bank.__file__)


def test_without_minimize_only_the_original_is_saved(bank, tmp_path):
    exc = failure(bank.scenario, tmp_path, minimize=False)
    assert exc.minimized_trace is None
    assert "Minimized trace" not in str(exc)
    # the next step names the trace there is
    assert str(exc).splitlines()[-1] == (
        f"Replay: python -m ploom replay {exc.original_trace}  # read it with: ploom-show {exc.original_trace}"
    )
    assert os.listdir(tmp_path / "traces") == [os.path.basename(exc.original_trace)]


def test_paths_under_the_current_folder_are_shown_relative(bank, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exc = failure(bank.scenario, tmp_path)
    assert exc.original_trace.startswith("traces/")
    assert exc.minimized_trace.startswith("traces/")
    assert os.path.isfile(exc.minimized_trace)


@pytest.mark.parametrize("which", ["original_trace", "minimized_trace"])
def test_replay_reproduces_the_failure_ten_times_out_of_ten(bank, tmp_path, which):
    trace = getattr(failure(bank.scenario, tmp_path), which)
    for _ in range(10):
        with pytest.raises(ModelCheckError) as info:
            replay(trace)
        exc = info.value
        assert exc.summary == "builtins.AssertionError: the account is overdrawn"
        assert exc.original_trace == trace
        assert exc.minimized_trace is None
        assert exc.statistics is None
        # the trace given, labelled as replayed, minimized or not
        assert str(exc).splitlines() == [
            exc.summary,
            f"Replayed trace: {trace}",
            f"Replay: python -m ploom replay {trace}  # read it with: ploom-show {trace}",
        ]


def test_replay_returns_the_trace_of_a_passing_schedule(bank, tmp_path):
    run = subprocess.run(
        [find_utility("ploom-run-one"), f"--python={sys.executable}", f"{bank.__file__}:locked"],
        capture_output=True,
        text=True,
        check=True,
    )
    saved = tmp_path / "pass.json"
    saved.write_text(run.stdout, encoding="utf-8")
    replayed = replay(saved)
    assert replayed["outcome"]["kind"] == "pass"
    assert replayed["steps"] == json.loads(run.stdout)["steps"]


def test_a_shorter_schedule_timeout_holds_for_the_replay(tmp_path, monkeypatch):
    # a schedule of a few hundred milliseconds that passes in the trace's
    # ten seconds and cannot in ten milliseconds
    (tmp_path / "slow.py").write_text("def scenario():\n    for _ in range(10_000_000):\n        pass\n")
    monkeypatch.chdir(tmp_path)
    run = subprocess.run(
        [find_utility("ploom-run-one"), f"--python={sys.executable}", "slow.py:scenario"],
        capture_output=True,
        text=True,
        check=True,
    )
    (tmp_path / "pass.json").write_text(run.stdout, encoding="utf-8")
    assert replay("pass.json")["outcome"]["kind"] == "pass"
    with pytest.raises(ReplayDivergenceError, match=r"got timeout: the schedule ran longer than 0\.01 s"):
        replay("pass.json", schedule_timeout=0.01)
    with pytest.raises(TypeError, match="ploom.replay: schedule_timeout must be a number of seconds, not '1'"):
        replay("pass.json", schedule_timeout="1")
    # the value is ploom-replay's to judge, as on its command line
    with pytest.raises(RuntimeError, match="invalid --schedule-timeout '-1'"):
        replay("pass.json", schedule_timeout=-1)


def test_an_edited_source_stops_the_replay_naming_the_file(bank, tmp_path):
    trace = failure(bank.scenario, tmp_path).minimized_trace
    with open(bank.__file__, "a", encoding="utf-8") as f:
        f.write("# an edit\n")
    with pytest.raises(ReplayDivergenceError) as info:
        replay(trace)
    message = str(info.value)
    assert message.startswith(f"the scenario's source changed: '{os.path.abspath(bank.__file__)}' (recorded blob ")
    assert info.value.trace == trace


def test_another_python_minor_version_stops_the_replay(bank, tmp_path):
    trace = load(failure(bank.scenario, tmp_path).original_trace)
    trace["python"]["version"] = "3.12.7"
    edited = tmp_path / "other-python.json"
    edited.write_text(json.dumps(trace), encoding="utf-8")
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    message = f"Python {running} runs this replay, the trace was recorded with 3.12"
    with pytest.raises(ReplayDivergenceError, match=f"^{re.escape(message)}$"):
        replay(edited)


def test_other_operations_stop_the_replay_naming_the_step(bank, tmp_path):
    trace = load(failure(bank.scenario, tmp_path).original_trace)
    step = next(s for s in trace["steps"] if s["op"] == "read")
    step["op"] = "write"
    edited = tmp_path / "other-ops.json"
    edited.write_text(json.dumps(trace), encoding="utf-8")
    with pytest.raises(ReplayDivergenceError) as info:
        replay(edited)
    assert str(info.value).startswith(f"step {step['index']} differs: recorded task {step['task']} write cell#0, got ")


def test_a_bad_trace_is_an_error_naming_the_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    message = f"ploom-replay: cannot read trace '{bad}': missing field 'format'"
    with pytest.raises(RuntimeError, match=f"^{re.escape(message)}$"):
        replay(bad)
    with pytest.raises(RuntimeError, match="No such file or directory"):
        replay(tmp_path / "missing.json")


def test_a_forged_target_runs_nothing(bank, tmp_path):
    exc = failure(bank.scenario, tmp_path)
    trace = load(exc.minimized_trace)
    trace["scenario"]["target"] = "os:abort"
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(trace), encoding="utf-8")
    divergence = r"target 'os:abort' is '.*/os\.py', the trace was recorded from"
    with pytest.raises(ReplayDivergenceError, match=divergence) as info:
        replay(forged)
    assert info.value.trace is not None
    del trace["fingerprints"]
    forged.write_text(json.dumps(trace), encoding="utf-8")
    with pytest.raises(RuntimeError, match="the trace's fingerprints do not cover its scenario file"):
        replay(forged)


def test_a_module_target_that_climbs_out_of_the_folder_imports_nothing_above_it(tmp_path, monkeypatch):
    # the replay runs in anc/proj; above it, an __init__.py of a package
    # named like the folder on the way, and a json.py, each leaving a marker
    proj = tmp_path / "anc" / "proj"
    proj.mkdir(parents=True)
    (tmp_path / "anc" / "__init__.py").write_text(f"open({str(tmp_path / 'init-ran')!r}, 'w').close()\n")
    (tmp_path / "json.py").write_text(f"open({str(tmp_path / 'json-ran')!r}, 'w').close()\n")
    path = write_bank(proj)
    monkeypatch.syspath_prepend(str(proj))
    monkeypatch.chdir(proj)
    try:
        exc = failure(importlib.import_module(path.stem).scenario, tmp_path)
    finally:
        sys.modules.pop(path.stem, None)
    trace = load(exc.minimized_trace)
    trace["scenario"]["target"] = f"anc.proj.{path.stem}:scenario"
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(trace), encoding="utf-8")
    refused = (
        f"cannot load scenario 'anc.proj.{path.stem}:scenario': module 'anc.proj.{path.stem}' "
        f"leaves '{os.path.realpath(proj)}/': its package 'anc' is '{os.path.realpath(tmp_path / 'anc')}'"
    )
    for on_current_source in (False, True):
        with pytest.raises(RuntimeError, match=re.escape(refused)):
            replay(forged, on_current_source=on_current_source)
    assert not (tmp_path / "init-ran").exists()
    assert not (tmp_path / "json-ran").exists()


def test_dev_zero_is_refused_in_bounded_memory():
    # the cap is far below what reading /dev/zero to its end would need
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)); "
    run = subprocess.run(
        [sys.executable, "-c", limit + "import sys, runpy; sys.argv = ['ploom', 'replay', '/dev/zero']; "
         "runpy.run_module('ploom', run_name='__main__')"],
        capture_output=True, text=True, timeout=60,
    )
    assert run.returncode == 2, run.stderr
    assert "not a ploom trace (it contains a NUL byte)" in run.stderr
    assert "Traceback" not in run.stderr


def test_replay_dash_reads_the_trace_from_standard_input(bank, tmp_path):
    exc = failure(bank.scenario, tmp_path)
    with open(exc.minimized_trace, "rb") as f:
        run = subprocess.run([sys.executable, "-m", "ploom", "replay", "-"], stdin=f,
                             capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stderr
    assert run.stdout.startswith("ploom.exploration.ModelCheckError: builtins.AssertionError: the account is overdrawn")
    # no path to replay it by again: no "Replay:" line naming <stdin>
    assert "Replay:" not in run.stdout
