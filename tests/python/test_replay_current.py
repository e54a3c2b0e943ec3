"""Replaying a trace on the current source (ploom-replay
--on-current-source, python -m ploom replay --on-current-source,
ploom.exploration.replay(on_current_source=True)): the bank example's
failure found again after an edit that changes nothing, gone after the fix,
and the trust rules that stay.

Each test works on a copy of examples/bank_account.py in a git repository
of its own, as a user's project would be."""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from bank_copy import add_lock
from ploom._utility import find_utility
from ploom.exploration import ModelCheckError, ReplayDivergenceError, replay

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "bank_account.py"
REPLAY = find_utility("ploom-replay")
SUMMARY = "builtins.AssertionError: the account is overdrawn"


def git(cwd, *args):
    subprocess.run(
        ["git", "-c", "user.name=ploom", "-c", "user.email=ploom@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def ploom(cwd, *args):
    return subprocess.run(
        [sys.executable, "-m", "ploom", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def utility(cwd, *args):
    return subprocess.run(
        [REPLAY, f"--python={sys.executable}", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def add_comment(path):
    path.write_text(path.read_text(encoding="utf-8") + "# a comment, and nothing else\n", encoding="utf-8")


@pytest.fixture
def project(tmp_path):
    """A git repository holding a committed copy of the example, and the
    minimized trace of its failure, found by python -m ploom check."""
    root = tmp_path / "project"
    root.mkdir()
    shutil.copyfile(EXAMPLE, root / "bank_account.py")
    git(root, "init", "-q")
    git(root, "add", "bank_account.py")
    git(root, "commit", "-q", "-m", "bank")
    found = ploom(root, "check", "bank_account.py:scenario")
    assert found.returncode == 1, found.stdout + found.stderr
    trace = re.search(r"Minimized trace: (\S+)", found.stdout).group(1)
    return root, trace


def test_the_failure_is_found_again_after_a_comment_and_gone_after_the_fix(project):
    root, trace = project
    scenario = root / "bank_account.py"
    add_comment(scenario)
    # a plain replay refuses the edited source
    plain = ploom(root, "replay", trace)
    assert plain.returncode == 4
    assert "the scenario's source changed" in plain.stdout
    assert f"Replay on the current source: python -m ploom replay --on-current-source {trace}\n" in plain.stdout
    assert "replay with --on-current-source" in utility(root, trace).stderr

    again = ploom(root, "replay", "--on-current-source", trace)
    assert again.returncode == 1, again.stdout + again.stderr
    assert f"ploom.exploration.ModelCheckError: {SUMMARY}" in again.stdout
    assert f"Replay: python -m ploom replay --on-current-source {trace}" in again.stdout
    # what changed: the file and both blob ids
    assert re.search(
        rf"the source differs from the trace's in 1 file:\n.*'{re.escape(str(scenario.resolve()))}' "
        r"\(recorded blob [0-9a-f]{7}, now [0-9a-f]{7}\)",
        again.stderr,
    ), again.stderr
    assert "(the recorded failure) on the current source; 0 departures" in again.stderr

    add_lock(scenario)
    fixed = ploom(root, "replay", "--on-current-source", trace)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert re.search(r"the recorded schedule passes on the current source; [1-9]\d* departures?\n", fixed.stderr)
    # still refused without the flag: a plain replay runs only the recorded source
    assert ploom(root, "replay", trace).returncode == 4


def test_the_utility_prints_the_new_run_stamped_with_the_current_source(project):
    root, trace = project
    recorded = json.loads((root / trace).read_text(encoding="utf-8"))
    add_comment(root / "bank_account.py")
    again = utility(root, "--on-current-source", trace)
    assert again.returncode == 1, again.stderr
    run = json.loads(again.stdout)
    assert run["outcome"]["summary"] == SUMMARY
    # a comment moves nothing: the very steps, with the new blob
    assert [(s["task"], s["op"]) for s in run["steps"]] == [(s["task"], s["op"]) for s in recorded["steps"]]
    assert run["fingerprints"][0]["blob"] != recorded["fingerprints"][0]["blob"]
    assert run["fingerprints"][0]["blob"] == subprocess.run(
        ["git", "hash-object", "bank_account.py"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()

    add_lock(root / "bank_account.py")
    fixed = utility(root, "--on-current-source", "-q", trace)
    assert fixed.returncode == 0, fixed.stderr
    assert json.loads(fixed.stdout)["outcome"]["kind"] == "pass"
    # -q keeps what changed, drops the result line
    assert "the source differs from the trace's" in fixed.stderr
    assert "passes" not in fixed.stderr


def test_a_lock_around_the_write_alone_still_fails(project):
    root, trace = project
    add_lock(root / "bank_account.py", around_check=False)
    again = utility(root, "--on-current-source", trace)
    assert again.returncode == 1, again.stderr
    assert json.loads(again.stdout)["outcome"]["summary"] == SUMMARY


def test_an_unchanged_source_says_so_and_fails_as_recorded(project):
    root, trace = project
    again = utility(root, "--on-current-source", trace)
    assert again.returncode == 1
    assert "the source is the trace's" in again.stderr
    assert "; 0 departures" in again.stderr


def test_the_api_raises_again_then_returns_the_passing_run(project, monkeypatch, capfd):
    root, trace = project
    monkeypatch.chdir(root)
    add_comment(root / "bank_account.py")
    with pytest.raises(ReplayDivergenceError):
        replay(trace)
    with pytest.raises(ModelCheckError) as info:
        replay(trace, on_current_source=True)
    assert info.value.summary == SUMMARY
    add_lock(root / "bank_account.py")
    assert replay(trace, on_current_source=True)["outcome"]["kind"] == "pass"
    assert "the recorded schedule passes on the current source" in capfd.readouterr().err


def test_only_the_file_at_the_trace_s_path_in_this_repository_runs(project, tmp_path):
    root, trace = project
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    git(elsewhere, "init", "-q")
    again = utility(elsewhere, "--on-current-source", str(root / trace))
    assert again.returncode == 2
    assert "is not in this repository" in again.stderr
    assert again.stdout == ""


def test_a_scenario_file_gone_is_an_error_not_a_pass(project):
    root, trace = project
    os.unlink(root / "bank_account.py")
    again = utility(root, "--on-current-source", trace)
    assert again.returncode == 2
    assert again.stdout == ""


def test_a_forged_target_gets_no_advice_to_replay_on_the_current_source(project):
    root, trace = project
    forged = json.loads((root / trace).read_text(encoding="utf-8"))
    forged["scenario"]["target"] = "os:abort"
    (root / "forged.json").write_text(json.dumps(forged), encoding="utf-8")
    plain = ploom(root, "replay", "forged.json")
    assert plain.returncode == 4
    assert "target 'os:abort' is" in plain.stdout
    assert "on the current source" not in plain.stdout
    direct = utility(root, "forged.json")
    assert direct.returncode == 4
    assert "--on-current-source" not in direct.stderr
    # nor does the flag run it
    current = utility(root, "--on-current-source", "forged.json")
    assert current.returncode == 4
    assert "target 'os:abort' is" in current.stderr
    assert current.stdout == ""
