"""python -m ploom: check, replay and show, their output and exit codes.

Each test runs `python -m ploom` in a folder of its own holding a copy of
the bank example, as a user would in a project: the scenario is found as a
module of the current folder, traces go to ./.ploom."""

import json
import os
import re
import subprocess
import sys

import pytest

from bank_copy import write_bank
from ploom.__main__ import main

NOSUCH = "nosuch_module_for_ploom:f"
TRACE = r"\.ploom/[0-9a-f]{16}-(original|minimized)\.json"


@pytest.fixture
def project(tmp_path):
    write_bank(tmp_path, "bank")
    return tmp_path


def ploom(project, *args, stdin=None):
    """Runs `python -m ploom ARGS` in the project folder."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [sys.executable, "-m", "ploom", *args],
        cwd=project,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def lines(text):
    return text.splitlines()


def check_failure(project):
    """Runs the failing check; returns (original, minimized) paths."""
    result = ploom(project, "check", "-q", "bank:scenario")
    assert result.returncode == 1, result.stderr
    out = lines(result.stdout)
    return out[1].removeprefix("Original trace: "), out[2].removeprefix("Minimized trace: ")


def test_check_prints_the_failure_and_both_traces_and_exits_1(project):
    result = ploom(project, "check", "bank:scenario")
    assert result.returncode == 1
    out = lines(result.stdout)
    assert len(out) == 4
    assert out[0] == "ploom.exploration.ModelCheckError: builtins.AssertionError: the account is overdrawn"
    assert re.fullmatch(rf"Original trace: {TRACE}", out[1])
    assert re.fullmatch(rf"Minimized trace: {TRACE}", out[2])
    minimized = out[2].removeprefix("Minimized trace: ")
    assert out[3] == f"Replay: python -m ploom replay {minimized}"
    assert (project / out[1].removeprefix("Original trace: ")).is_file()
    assert (project / minimized).is_file()
    # progress from ploom-explore on stderr, unless -q
    assert "ploom-explore: schedule 7 failed" in result.stderr
    assert ploom(project, "check", "-q", "bank:scenario").stderr == ""


def test_check_of_a_passing_scenario_prints_the_count_and_exits_0(project):
    result = ploom(project, "check", "bank:locked")
    assert (result.returncode, result.stdout) == (0, "127 schedules, all passed\n")
    assert not (project / ".ploom").exists()


def test_check_options_reach_the_search(project):
    result = ploom(project, "check", "-q", "-p", "0", "bank:scenario")
    assert (result.returncode, result.stdout) == (0, "3 schedules, all passed\n")
    result = ploom(project, "check", "-q", "--no-minimize", "--trace-dir=traces", "bank:scenario")
    assert result.returncode == 1
    assert [line.split(":")[0] for line in lines(result.stdout)] == [
        "ploom.exploration.ModelCheckError",
        "Original trace",
        "Replay",
    ]
    assert re.fullmatch(r"Original trace: traces/[0-9a-f]{16}-original\.json", lines(result.stdout)[1])


def test_a_limit_exits_3_and_is_never_a_pass(project):
    result = ploom(project, "check", "-q", "--max-schedules=5", "bank:locked")
    assert result.returncode == 3
    assert result.stdout.startswith("ploom.exploration.IncompleteExplorationError: exploration incomplete: ")
    assert "never a pass" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "the following arguments are required: COMMAND"),
        (("check",), "the following arguments are required: TARGET"),
        (("check", "--bogus", "bank:scenario"), "unrecognized arguments: --bogus"),
        (("check", "-p", "x", "bank:scenario"), "invalid int value: 'x'"),
        (("check", "-p", "-1", "bank:scenario"),
         "ploom-explore: invalid --max-preemptions '-1': not an integer from 0 to 1000000"),
        (("check", "--patch", "ok.mod", "--patch", "bad-name", "bank:scenario"),
         "ploom-explore: invalid --patch 'bad-name': not a module name (Python identifiers joined by '.')"),
        # only modules the scenario's module imported are patched
        (("check", "-q", "--patch", "ok.mod", "bank:scenario"),
         "ImportError: cannot patch 'ok.mod': the scenario's module has not imported it"),
        (("check", "nosuch_module_for_ploom:f"), f"ploom-explore: cannot load scenario '{NOSUCH}'"),
        (("check", "-q", "nosuch_module_for_ploom:f"), f"ploom-explore: cannot load scenario '{NOSUCH}'"),
        (("replay",), "the following arguments are required: TRACE"),
        (("replay", "missing.json"), "ploom-replay: cannot read trace 'missing.json': No such file or directory"),
        (("show", "missing.json"), "ploom-show: cannot read trace 'missing.json': No such file or directory"),
        (("frobnicate",), "invalid choice: 'frobnicate'"),
    ],
)
def test_usage_errors_and_bad_input_exit_2(project, args, message):
    result = ploom(project, *args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert message in result.stderr
    # said once, not once by the utility and again by python -m ploom
    assert result.stderr.count(message) == 1


def test_replay_reproduces_the_failure_and_exits_1(project):
    original, minimized = check_failure(project)
    for trace in (original, minimized):
        result = ploom(project, "replay", trace)
        assert result.returncode == 1
        assert lines(result.stdout) == [
            "ploom.exploration.ModelCheckError: builtins.AssertionError: the account is overdrawn",
            f"Replayed trace: {trace}",
            f"Replay: python -m ploom replay {trace}",
        ]


def test_replay_after_an_edit_exits_4_naming_the_source(project):
    _, minimized = check_failure(project)
    with open(project / "bank.py", "a", encoding="utf-8") as f:
        f.write("# an edit\n")
    result = ploom(project, "replay", minimized)
    assert result.returncode == 4
    assert result.stdout.startswith(
        f"ploom.exploration.ReplayDivergenceError: the scenario's source changed: '{project / 'bank.py'}'"
    )


def test_replay_of_a_passing_trace_exits_0(project):
    run = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "ploom-run-one"), "bank.py:locked"],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    )
    (project / "pass.json").write_text(run.stdout, encoding="utf-8")
    result = ploom(project, "replay", "pass.json")
    assert (result.returncode, result.stdout) == (0, "reproduced: pass\n")


def test_show_renders_a_trace_from_a_file_or_stdin(project):
    _, minimized = check_failure(project)
    result = ploom(project, "show", minimized)
    assert result.returncode == 0
    out = lines(result.stdout)
    assert out[0] == "scenario     bank:scenario"
    assert out[-1] == "AssertionError: the account is overdrawn"
    assert "failure: task 0 raised builtins.AssertionError: the account is overdrawn" in out
    with open(project / minimized, encoding="utf-8") as f:
        piped = ploom(project, "show", stdin=f.read())
    assert (piped.returncode, piped.stdout) == (0, result.stdout)
    colored = ploom(project, "show", "--color=always", minimized)
    assert "\033[" in colored.stdout
    assert "\033[" not in result.stdout


def test_show_passes_the_format_to_ploom_show(project):
    _, minimized = check_failure(project)
    page = ploom(project, "show", "--format=html", minimized)
    assert (page.returncode, page.stderr) == (0, "")
    assert page.stdout.startswith("<!DOCTYPE html>\n")
    assert page.stdout.count('<g class="lane"') == 3
    assert page.stdout.count('class="step failing"') == 1
    written = ploom(project, "show", "--format", "json", minimized)
    assert written.returncode == 0
    with open(project / minimized, encoding="utf-8") as f:
        assert json.loads(written.stdout)["steps"] == json.load(f)["steps"]
    # ploom-show says which formats it takes, not python -m ploom
    wrong = ploom(project, "show", "--format=xml", minimized)
    assert wrong.returncode == 2
    assert wrong.stderr.startswith("ploom-show: invalid --format 'xml'\nusage: ploom-show ")


def test_show_of_a_malformed_trace_exits_2(project):
    (project / "bad.json").write_text(json.dumps({"format": "ploom-trace", "version": 9}), encoding="utf-8")
    result = ploom(project, "show", "bad.json")
    assert result.returncode == 2
    assert result.stderr == (
        "ploom-show: cannot read trace 'bad.json': unknown format version 9 (this ploom reads 1 to 2)\n"
    )


def test_main_returns_the_exit_code(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("ploom ")
    assert main(["--help"]) == 0
    assert "check" in capsys.readouterr().out
    assert main([]) == 2
    assert main(["check"]) == 2
