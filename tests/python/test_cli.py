"""python -m ploom: check, replay and show, their output and exit codes.

Each test runs `python -m ploom` in a folder of its own holding a copy of
the bank example, as a user would in a project: the scenario is found as a
module of the current folder, traces go to ./.ploom."""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from bank_copy import add_lock, write_bank
from ploom import _utility
from ploom.__main__ import _plain_state, main
from ploom.exploration import Statistics

NOSUCH = "nosuch_module_for_ploom:f"
UTILITY = os.path.join(os.path.dirname(sys.executable), "ploom-explore")
TRACE = r"\.ploom/[0-9a-f]{16}-(original|minimized)\.json"

# how a pass says that it saw the plain state of the scenario's module
SEEN = " (plain state seen in: the scenario)"


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
    # one next step, for the minimized trace: replay it, read it
    assert out[3] == f"Replay: python -m ploom replay {minimized}  # read it with: ploom-show {minimized}"
    assert (project / out[1].removeprefix("Original trace: ")).is_file()
    assert (project / minimized).is_file()
    # ploom-explore's own messages on stderr, as it says them, but not a
    # second next step: the one above names this front door's command
    assert "ploom-explore: schedule 7 failed" in result.stderr
    assert "Replay:" not in result.stderr


def test_the_next_step_line_runs_as_pasted_into_a_shell(project):
    result = ploom(project, "check", "-q", "bank:scenario")
    line = lines(result.stdout)[-1]
    command, _, reader = line.removeprefix("Replay: ").partition("  # read it with: ")
    # the shell takes the reading part for a comment
    pasted = subprocess.run(
        ["bash", "-c", line.removeprefix("Replay: ").replace("python", sys.executable, 1)],
        cwd=project, capture_output=True, text=True, timeout=120,
    )
    assert pasted.returncode == 1, pasted.stderr
    assert lines(pasted.stdout)[1] == f"Replayed trace: {command.split()[-1]}"
    shown = subprocess.run(
        ["bash", "-c", reader.replace("ploom-show", os.path.join(os.path.dirname(sys.executable), "ploom-show"), 1)],
        cwd=project, capture_output=True, text=True, timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    assert "preemptions  1 (minimized from 2)" in shown.stdout


def explore(project, *args, env=None):
    """Runs ploom-explore ARGS in the project folder, as python -m ploom does."""
    env = dict(os.environ, **(env or {}))
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [UTILITY, f"--python={sys.executable}", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_options_are_ploom_explores_own_with_the_same_effect(project):
    # -q is ploom-explore's: no progress, its notices of the failure stay
    ours = ploom(project, "check", "-q", "bank:scenario")
    # each on a folder with no saved failure, which the other would run first
    shutil.rmtree(project / ".ploom")
    theirs = explore(project, "-q", "bank:scenario")
    assert (ours.returncode, theirs.returncode) == (1, 1)
    # the same but the utility's next step, which python -m ploom says on
    # stdout with its own replay command
    *notices, step = theirs.stderr.splitlines(keepends=True)
    assert ours.stderr == "".join(notices)
    assert step.startswith("ploom-explore: Replay: ploom-replay .ploom/")
    assert "ploom-explore: schedule 7 failed" in ours.stderr
    # -k and -j 2: every schedule, in two workers
    result = ploom(project, "check", "-k", "-j", "2", "-q", "bank:scenario")
    assert result.returncode == 1
    assert lines(result.stdout)[0].startswith("ploom.exploration.ModelCheckError: builtins.AssertionError")
    # combined short options and a value glued on, as getopt reads them
    result = ploom(project, "check", "-qp0", "bank:scenario")
    assert (result.returncode, result.stdout) == (0, f"3 schedules, all passed{SEEN}\n")
    result = ploom(project, "check", "-q", "--reduction=dpor", "--instrument=-", "bank:locked")
    assert result.returncode == 0
    assert re.fullmatch(r"\d+ schedules, all passed\n", result.stdout)
    assert int(result.stdout.split()[0]) < 127


def test_a_pass_of_one_schedule_says_1_schedule(project):
    (project / "alone.py").write_text("def scenario():\n    pass\n")
    result = ploom(project, "check", "alone:scenario")
    assert (result.returncode, result.stdout) == (0, f"1 schedule, all passed{SEEN}\n"), result.stderr


def test_a_mistyped_module_or_function_names_the_nearest_and_exits_2(project):
    for option in ("--patch", "--instrument"):
        result = ploom(project, "check", f"{option}=bnak", "bank:scenario")
        assert (result.returncode, result.stdout) == (2, "")
        verb = option.removeprefix("--")
        assert result.stderr == (
            "ploom-explore: cannot load scenario 'bank:scenario': ModuleNotFoundError: "
            f"cannot {verb} 'bnak': no module named 'bnak' (did you mean 'bank'?)\n"
        )
    result = ploom(project, "check", "bank:scenari")
    assert result.returncode == 2
    assert result.stderr.endswith("has no attribute 'scenari' (did you mean 'scenario'?)\n")
    assert not (project / ".ploom").exists()


def test_a_pass_says_whose_plain_state_it_covered():
    def stats(instrument, scenario):
        return Statistics(3, 0, True, "pass", None, None, "dpor", 0.1, 30.0, 4, None,
                          instrument=instrument, instrument_scenario=scenario)

    assert _plain_state(stats((), False)) == ""
    assert _plain_state(stats((), True)) == " (plain state seen in: the scenario)"
    assert _plain_state(stats(("mylib.pool", "other"), True)) == (
        " (plain state seen in: the scenario, mylib.pool, other)"
    )
    assert _plain_state(stats(("mylib.pool",), False)) == " (plain state seen in: mylib.pool)"


@pytest.mark.skipif(
    importlib.util.find_spec("ploom._instrument") is None,
    reason="ploom._instrument (the plain-state rewriter) is not in this tree yet: "
    "no worker can instrument a module",
)
def test_check_of_an_instrumented_pass_names_what_it_covered(project):
    result = ploom(project, "check", "-q", "--reduction=dpor", "bank:locked")
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(r"\d+ schedules, all passed \(plain state seen in: the scenario\)\n", result.stdout)
    result = ploom(project, "check", "-q", "-p", "0", "--instrument=-", "--instrument=bank", "bank:locked")
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(r"\d+ schedules, all passed \(plain state seen in: bank\)\n", result.stdout)
    # the scenario's own module, named or not, is said once, as the scenario
    result = ploom(project, "check", "-q", "-p", "0", "--instrument=bank", "bank:locked")
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(r"\d+ schedules, all passed \(plain state seen in: the scenario\)\n", result.stdout)


@pytest.mark.skipif(
    importlib.util.find_spec("ploom._instrument") is None,
    reason="ploom._instrument (the plain-state rewriter) is not in this tree yet: "
    "no worker can instrument a module",
)
def test_a_pass_of_a_file_target_names_only_what_was_instrumented(project):
    # the file named by --instrument is instrumented: its plain state is seen
    result = ploom(project, "check", "-q", "--instrument=-", "--instrument=bank", "bank.py:locked")
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(r"\d+ schedules, all passed \(plain state seen in: bank\)\n", result.stdout)
    # a module named that nothing imports is not claimed
    (project / "unused_module.py").write_text("x = 1\n")
    result = ploom(project, "check", "-q", "--instrument=-", "--instrument=unused_module", "bank.py:locked")
    assert (result.returncode, result.stdout) == (0, "127 schedules, all passed\n"), result.stderr


def test_check_runs_the_worker_on_this_interpreter_unless_python_says_otherwise(project):
    env = dict(os.environ, PLOOM_PYTHON="/nonexistent/python3")
    env.pop("PYTHONPATH", None)
    result = subprocess.run(
        [sys.executable, "-m", "ploom", "check", "-q", "bank:locked"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )
    assert (result.returncode, result.stdout) == (0, f"127 schedules, all passed{SEEN}\n")
    result = ploom(project, "check", "--python=/nonexistent/python3", "bank:locked")
    assert result.returncode == 2
    assert result.stderr == "ploom-explore: cannot run '/nonexistent/python3': No such file or directory\n"


def test_check_help_is_ploom_explores_under_its_name(project):
    result = ploom(project, "check", "--help")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.startswith("usage: python -m ploom check [-p N] ")
    for option in ("-j, --jobs=N", "--reduction=MODE", "-k, --keep-going", "-n, --max-schedules=N",
                   "-t, --time-limit=SECONDS", "-q, --quiet", "--python=PATH"):
        assert re.search(rf"^ {{4}}( {{4}})?{re.escape(option)} ", result.stdout, re.M), option
    theirs = explore(project, "--help", env={"PLOOM_USAGE_NAME": "python -m ploom check"})
    assert result.stdout == theirs.stdout
    own = explore(project, "--help")
    assert own.stdout.startswith("usage: ploom-explore [-p N] ")
    # the same text after the synopsis, which ends at the first empty line
    mine, its = lines(own.stdout), lines(result.stdout)
    assert mine[mine.index(""):] == its[its.index(""):]
    version = ploom(project, "check", "--version")
    assert (version.returncode, version.stdout) == (0, explore(project, "--version").stdout)


# A sample value for each kind of value the help names; a kind of value
# it does not know takes the first of the choices its help lists
# ("none: every schedule; dpor: ...").
SAMPLE_VALUES = {
    "N": "1", "SECONDS": "1", "PATH": sys.executable, "MODULE": "os", "DIR": "traces", "K/N": "1/4", "D": "3",
}
OPTION_LINE = re.compile(r"^ {4}(?:(-\w), |    )(--[a-z][a-z-]*)(?:=([A-Z/]+))?(?: +(.*))?$")
# the options that are refused without another one
NEEDS = {
    "--shard-depth": ["--shard=1/4"],
    "--seed": ["--search=random", "-n", "1"],
    "--pct-depth": ["--search=pct", "-n", "1"],
}


def help_options():
    """(short or None, long, value or None) of each option ploom-explore's help lists."""
    text = subprocess.run([UTILITY, "--help"], capture_output=True, text=True, check=True).stdout
    options = []
    for line in lines(text):
        m = OPTION_LINE.match(line)
        if not m:
            continue
        short, long, kind, words = m.groups()
        value = None
        if kind:
            choice = re.match(r"(\w+):", words or "")
            value = SAMPLE_VALUES.get(kind) or (choice and choice.group(1))
            assert value, f"{long}={kind}: add a sample value for {kind} to SAMPLE_VALUES"
        options.append((short, long, value))
    return options


def test_every_option_of_ploom_explore_is_accepted_by_check(project):
    options = help_options()
    # the help is parsed, not read past
    assert {"--jobs", "--reduction", "--keep-going", "--max-schedules", "--time-limit", "--quiet",
            "--python", "--check-options"} <= {long for _, long, _ in options}
    for short, long, value in options:
        spellings = [[long] if value is None else [f"{long}={value}"]]
        if short:
            spellings.append([short] if value is None else [short, value])
        for spelling in spellings:
            spelling = NEEDS.get(long, []) + spelling
            result = ploom(project, "check", "--check-options", *spelling)
            assert (result.returncode, result.stderr) == (0, ""), spelling
            assert result.stdout == explore(
                project, "--check-options", *spelling, env={"PLOOM_USAGE_NAME": "python -m ploom check"}
            ).stdout


def test_check_of_a_passing_scenario_prints_the_count_and_exits_0(project):
    result = ploom(project, "check", "bank:locked")
    assert (result.returncode, result.stdout) == (0, f"127 schedules, all passed{SEEN}\n")
    assert not (project / ".ploom").exists()


def test_check_of_a_fixed_failure_says_its_saved_schedule_passed_first(project):
    check_failure(project)
    add_lock(project / "bank.py")
    result = ploom(project, "check", "-q", "bank:scenario")
    saved = "1 saved schedule passed first"
    assert (result.returncode, result.stdout) == (0, f"127 schedules, all passed{SEEN}; {saved}\n")
    result = ploom(project, "check", "-q", "--no-saved", "bank:scenario")
    assert (result.returncode, result.stdout) == (0, f"127 schedules, all passed{SEEN}\n")


def test_check_options_reach_the_search(project):
    result = ploom(project, "check", "-q", "-p", "0", "bank:scenario")
    assert (result.returncode, result.stdout) == (0, f"3 schedules, all passed{SEEN}\n")
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
    assert result.stdout.startswith(
        "ploom.exploration.IncompleteExplorationError: exploration incomplete: "
        "stopped by the schedule limit (--max-schedules) after 5 schedules"
    )
    assert "never a pass" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "the following arguments are required: COMMAND"),
        (("check",), "ploom-explore: missing TARGET\nusage: python -m ploom check "),
        (("check", "--bogus", "bank:scenario"), "ploom-explore: unknown option '--bogus'\nusage: "),
        (("check", "-p", "x", "bank:scenario"),
         "ploom-explore: invalid --max-preemptions 'x': not an integer from 0 to 1000000"),
        (("check", "bank:scenario", "-j"), "ploom-explore: missing value for option '-j'"),
        (("check", "-p", "-1", "bank:scenario"),
         "ploom-explore: invalid --max-preemptions '-1': not an integer from 0 to 1000000"),
        (("check", "--patch", "ok.mod", "--patch", "bad-name", "bank:scenario"),
         "ploom-explore: invalid --patch 'bad-name': not a module name (Python identifiers joined by '.')"),
        # only modules the scenario's module imported are patched
        (("check", "-q", "--patch", "colorsys", "bank:scenario"),
         "ImportError: cannot patch 'colorsys': the scenario's module has not imported it"),
        (("check", "-q", "--patch", "ok.mod", "bank:scenario"),
         "ModuleNotFoundError: cannot patch 'ok.mod': no module named 'ok'"),
        (("check", "nosuch_module_for_ploom:f"), f"ploom-explore: cannot load scenario '{NOSUCH}'"),
        (("check", "-q", "nosuch_module_for_ploom:f"), f"ploom-explore: cannot load scenario '{NOSUCH}'"),
        (("replay",), "the following arguments are required: TRACE"),
        (("replay", "missing.json"), "ploom-replay: cannot read trace 'missing.json': No such file or directory"),
        # passed on as typed, judged by ploom-replay, whose usage names us
        (("replay", "--schedule-timeout=-1", "t.json"), "ploom-replay: invalid --schedule-timeout '-1'"),
        (("replay", "--schedule-timeout", "x", "t.json"), "usage: python -m ploom replay [--on-current-source]"),
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
            f"Replay: python -m ploom replay {trace}  # read it with: ploom-show {trace}",
        ]


SCENARIOS = os.path.join(os.path.dirname(__file__), "scenarios.py")
# scenarios.raises_invisible_controls's message, as a summary line shows it
ESCAPED = r"builtins.RuntimeError: \x1b[2J\x07\x9b\u202eevil\u2066\u200f\u061c\x7f" + "\tend"


def test_check_and_replay_escape_control_characters_in_the_summary(project):
    # a copy in the project: a replay runs only a file of the folder it starts in
    shutil.copy(SCENARIOS, project / "scenarios.py")
    result = ploom(project, "check", "-q", "scenarios.py:raises_invisible_controls")
    assert result.returncode == 1, result.stderr
    out = lines(result.stdout)
    assert out[0] == f"ploom.exploration.ModelCheckError: {ESCAPED}"
    trace = out[1].removeprefix("Original trace: ")
    with open(project / trace, encoding="utf-8") as f:
        # the trace keeps the message as it was
        assert json.load(f)["outcome"]["exception"]["message"].startswith("\x1b[2J\x07\x9b\u202e")
    result = ploom(project, "replay", trace)
    assert result.returncode == 1
    assert lines(result.stdout)[0] == f"ploom.exploration.ModelCheckError: {ESCAPED}"
    for c in "\x1b\x07\x7f\x9b\u202e\u2066\u200f\u061c":
        assert c not in result.stdout


def test_replay_reads_a_trace_from_a_process_substitution_or_a_fifo(project):
    original, _ = check_failure(project)
    failure = "ploom.exploration.ModelCheckError: builtins.AssertionError: the account is overdrawn"
    result = subprocess.run(
        f"{sys.executable} -m ploom replay <(cat {original})",
        shell=True,
        executable="/bin/bash",
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (result.returncode, result.stderr) == (1, "")
    # a pipe is read once: there is no path to replay it by again
    assert lines(result.stdout) == [failure]
    os.mkfifo(project / "fifo")
    writer = subprocess.Popen(["cp", original, "fifo"], cwd=project)
    try:
        result = ploom(project, "replay", "fifo")
    finally:
        writer.wait(timeout=120)
    assert (result.returncode, lines(result.stdout)) == (1, [failure])


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
    # -q: the exit status alone says it
    result = ploom(project, "replay", "-q", "--schedule-timeout", "30", "pass.json")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


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
    # ploom-show says which formats it takes, not python -m ploom, and
    # its usage is under our name
    wrong = ploom(project, "show", "--format=xml", minimized)
    assert wrong.returncode == 2
    assert wrong.stderr.startswith("ploom-show: invalid --format 'xml'\nusage: python -m ploom show [--format=")


def test_show_takes_ploom_shows_arguments_as_they_are(project):
    show = os.path.join(os.path.dirname(sys.executable), "ploom-show")
    ours = ploom(project, "show", "--help")
    theirs = subprocess.run([show, "--help"], capture_output=True, text=True, check=True)
    assert ours.returncode == 0
    assert ours.stdout == theirs.stdout.replace("ploom-show ", "python -m ploom show ")
    _, minimized = check_failure(project)
    narrow = ploom(project, "show", "-w", "8", "--color=always", minimized)
    assert narrow.returncode == 0
    assert narrow.stdout == subprocess.run(
        [show, "-w", "8", "--color=always", minimized], cwd=project, capture_output=True, text=True, check=True
    ).stdout


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


def test_the_ploom_command_is_python_m_ploom_under_its_own_name(project):
    # the console script that installing ploom puts beside the interpreter
    command = os.path.join(os.path.dirname(sys.executable), "ploom")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)

    def run(*args):
        return subprocess.run([command, *args], cwd=project, env=env, capture_output=True, text=True, timeout=120)

    helped = run("--help")
    assert (helped.returncode, helped.stderr) == (0, "")
    assert helped.stdout.startswith("usage: ploom [-h] [-V] COMMAND ...\n")
    listed = re.findall(r"^ {4}(\w+) ", helped.stdout, re.M)
    assert listed == ["check", "replay", "show"]
    assert "python -m ploom" not in helped.stdout
    checked = run("check", "-q", "bank:scenario")
    assert checked.returncode == 1, checked.stderr
    minimized = lines(checked.stdout)[2].removeprefix("Minimized trace: ")
    assert re.fullmatch(TRACE, minimized)
    assert f"ploom replay {minimized}" in checked.stdout
    assert "python -m ploom" not in checked.stdout
    usage = run("check", "--no-such-option", "bank:scenario")
    assert usage.returncode == 2
    assert "\nusage: ploom check [-p N] " in usage.stderr
    replayed = run("replay", minimized)
    assert replayed.returncode == 1
    assert lines(replayed.stdout)[0] == lines(checked.stdout)[0]
    shown = run("show", minimized)
    assert (shown.returncode, shown.stdout) == (0, ploom(project, "show", minimized).stdout)
    assert run("show", "--format=xml", minimized).stderr.startswith(
        "ploom-show: invalid --format 'xml'\nusage: ploom show [--format="
    )


@pytest.mark.parametrize("code, status", [(4, 4), (5, 5), (2, 2), (9, 2)])
def test_check_keeps_the_status_of_a_divergence_and_of_an_internal_error(monkeypatch, code, status):
    from ploom import exploration

    def fails(*args, **kwargs):
        raise _utility.UtilityError("ploom: ploom-explore failed", "", code)

    monkeypatch.setattr(exploration, "search", fails)
    assert main(["check", "scenarios:bank"]) == status


REAL_THREADS = """
import threading

total = [0]


def add():
    seen = total[0]
    total[0] = seen + 1


def scenario():
    threads = [threading.Thread(target=add) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert total[0] == 2, total[0]
"""


def test_real_threads_without_patch_are_a_setup_error_with_its_own_exit_and_no_trace(project):
    from ploom import _ploom

    (project / "realthreads.py").write_text(REAL_THREADS)
    # the scenario's module is patched by default: --patch=- leaves it real
    result = ploom(project, "check", "--patch=-", "realthreads:scenario")
    assert _ploom.EXIT_SETUP not in (0, 1, 2, 3, 4, 5, 130)
    assert result.returncode == _ploom.EXIT_SETUP, result.stderr
    assert "ploom-explore: setup error, not a bug of the code under test: ploom.UnscheduledPrimitiveError: " \
        "a standard-library threading.Thread" in result.stderr
    assert "Add 'realthreads' to patch=" in result.stderr
    assert "no trace saved" in result.stderr
    assert "ModelCheckError" not in result.stdout
    assert not list((project / ".ploom").glob("*.json"))
    # and the search with the patch finds no saved failure to run first
    result = ploom(project, "check", "--patch=realthreads", "--instrument=realthreads", "realthreads:scenario")
    assert result.returncode == 1, result.stderr
    assert "saved schedule" not in result.stderr


def test_a_saved_trace_of_a_setup_error_is_never_run_again(project):
    (project / "realthreads.py").write_text(REAL_THREADS)
    result = ploom(project, "check", "--patch=realthreads", "--instrument=realthreads", "realthreads:scenario")
    assert result.returncode == 1, result.stderr
    # a trace a release before this one saved: the same failure, of the
    # setup error's type
    for path in (project / ".ploom").glob("*.json"):
        trace = json.loads(path.read_text())
        trace["outcome"]["exception"]["type"] = "ploom.UnscheduledPrimitiveError"
        path.write_text(json.dumps(trace))
    result = ploom(project, "check", "--patch=realthreads", "--instrument=realthreads", "realthreads:scenario")
    assert result.returncode == 1, result.stderr
    assert "fails again" not in result.stderr


LONG = """
import ploom


def scenario():
    c = ploom.SharedCell(0)

    def work():
        for _ in range(6):
            c.write(c.read() + 1)

    ts = [ploom.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
"""


@pytest.mark.parametrize("who", ["group", "ploom"])
def test_ctrl_c_during_a_long_check_prints_one_interrupted_line_and_exits_130(project, who):
    import signal
    import time

    from ploom import _ploom

    (project / "longscen.py").write_text(LONG)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    # as at a terminal: a shell without job control (make, CI) starts its
    # background commands with SIGINT ignored, and Python keeps an ignored
    # SIGINT ignored, so that no Ctrl-C would reach it
    proc = subprocess.Popen([sys.executable, "-m", "ploom", "check", "longscen:scenario"], cwd=project, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(3)
    # a terminal's Ctrl-C reaches the whole group; a caller may get it alone
    if who == "group":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        os.kill(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == _ploom.EXIT_INTERRUPTED == 130, err
    assert out == ""
    line = re.fullmatch(r"ploom-explore: interrupted: (\d+) schedules explored, 0 failing; traces go to '\.ploom'\n",
                        err)
    assert line and int(line.group(1)) > 0, err


def test_an_interrupted_search_keeps_the_failure_it_found_and_says_where(project):
    import signal

    # a failure found, then a long search with -k: the trace stays
    (project / "longfail.py").write_text(LONG + "\n    assert c.read() == 24, c.read()\n")
    proc = subprocess.Popen([UTILITY, "-k", "--python", sys.executable, "longfail:scenario"], cwd=project,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    for raw in proc.stderr:
        lines.append(raw)
        if "trace written to" in raw:
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    kept = re.search(r"^ploom-explore: interrupted: \d+ schedules explored, (\d+) failing; trace kept in "
                     r"'(\.ploom/[0-9a-f]{16}-original\.json)' \(not minimized\)$", err, re.M)
    assert kept and int(kept.group(1)) >= 1, "".join(lines) + err
    assert (project / kept.group(2)).is_file()
