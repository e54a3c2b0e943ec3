"""ploom.check end to end: counts, failures, limits and misbehaving scenarios.

Every test writes its traces under pytest's tmp_path, never into the tree.
"""

import dataclasses
import importlib.util
import inspect
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import traceback
import types
import typing

import pytest

import ploom
import scenarios
from bank_copy import add_lock, write_bank
from ploom import exploration
from ploom._worker import split_target
from ploom.exploration import (
    IncompleteExplorationError,
    ModelCheckError,
    SetupError,
    Statistics,
    counted,
)

UTILITY = os.path.join(os.path.dirname(sys.executable), "ploom-explore")

# What runs an instrumented scenario: the plain-state rewriter, which
# another part of ploom brings; without it these tests say why they did
# not run.
REWRITER = pytest.mark.skipif(
    importlib.util.find_spec("ploom._instrument") is None,
    reason="ploom._instrument (the plain-state rewriter) is not in this tree yet: "
    "no worker can instrument a module, so --instrument is checked without running",
)


def explore(scenario, tmp_path, **options):
    """Runs check() and returns the statistics, whether it passed or failed."""
    options.setdefault("reduction", "none")
    config = ploom.Config(trace_dir=str(tmp_path / "traces"), **options)
    try:
        return ploom.check(scenario, config)
    except ModelCheckError as exc:
        return exc.statistics


def test_bank_with_the_lock_passes_in_127_schedules(tmp_path):
    stats = ploom.check(scenarios.bank_locked, ploom.Config(reduction="none", trace_dir=str(tmp_path)))
    assert isinstance(stats, Statistics)
    assert stats.schedules == 127
    assert stats.failing == 0
    assert stats.complete is True
    assert stats.result == "pass"
    assert stats.trace is None
    assert list(tmp_path.glob("**/*.json")) == []


def test_bank_without_the_lock_raises_model_check_error(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(scenarios.bank_unlocked, ploom.Config(trace_dir=str(tmp_path)))
    exc = info.value
    assert "builtins.AssertionError: the account is overdrawn" in str(exc)
    assert exc.summary == "builtins.AssertionError: the account is overdrawn"
    assert str(exc).splitlines() == [
        exc.summary,
        f"Original trace: {exc.original_trace}",
        f"Minimized trace: {exc.minimized_trace}",
        f"Replay: python -m ploom replay {exc.minimized_trace}  # read it with: ploom-show {exc.minimized_trace}",
    ]
    assert exc.minimized_trace.endswith("-minimized.json")
    assert exc.minimized_trace == exc.statistics.minimized_trace
    assert exc.statistics.failing == 1
    assert exc.statistics.stopped_by == "failure"
    with open(exc.original_trace, encoding="utf-8") as f:
        trace = json.load(f)
    assert trace["format"] == "ploom-trace"
    assert trace["outcome"]["kind"] == "failure"
    assert trace["outcome"]["exception"]["type"] == "builtins.AssertionError"


def test_model_check_errors_message_escapes_control_characters(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(scenarios.raises_invisible_controls, ploom.Config(trace_dir=str(tmp_path)))
    exc = info.value
    # the summary is the trace's text; the message is safe to print
    assert exc.summary == "builtins.RuntimeError: \x1b[2J\x07\x9b\u202eevil\u2066\u200f\u061c\x7f\tend"
    escaped = r"builtins.RuntimeError: \x1b[2J\x07\x9b\u202eevil\u2066\u200f\u061c\x7f" + "\tend"
    assert str(exc).startswith(f"{escaped}\nOriginal trace: ")
    # the message's own lines only: the summary adds none
    assert len(str(exc).splitlines()) == 4
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]", str(exc))


def test_model_check_error_is_an_assertion_error():
    # so a test that calls check() fails the way an assert does
    assert issubclass(ModelCheckError, AssertionError)
    assert ploom.exploration.ModelCheckError is ModelCheckError


def test_the_same_failure_gets_the_same_trace_name(tmp_path):
    names = []
    for _ in range(2):
        with pytest.raises(ModelCheckError) as info:
            ploom.check(scenarios.bank_unlocked, ploom.Config(trace_dir=str(tmp_path)))
        names.append(os.path.basename(info.value.original_trace))
    assert names[0] == names[1]
    assert names[0].endswith("-original.json")


def test_keep_going_counts_221_schedules_75_failing(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(scenarios.bank_unlocked, ploom.Config(keep_going=True, trace_dir=str(tmp_path)))
    stats = info.value.statistics
    assert stats.schedules == 221
    assert stats.failing == 75
    assert stats.complete is True
    assert stats.result == "failure"
    assert os.path.exists(info.value.original_trace)
    assert stats.raw["outcomes"] == [
        {"kind": "pass", "summary": "pass", "schedules": 146},
        {"kind": "failure", "summary": "builtins.AssertionError: the account is overdrawn", "schedules": 75},
    ]
    assert stats.raw["outcomes_truncated"] is False


def test_outcomes_are_listed_only_with_keep_going(tmp_path):
    stats = ploom.check(scenarios.bank_locked, ploom.Config(trace_dir=str(tmp_path)))
    assert "outcomes" not in stats.raw
    assert "outcomes_truncated" not in stats.raw


def test_jobs_2_explores_the_same_schedules(tmp_path):
    stats = ploom.check(scenarios.bank_locked, ploom.Config(jobs=2, trace_dir=str(tmp_path)))
    assert (stats.schedules, stats.failing, stats.complete) == (127, 0, True)
    assert stats.raw["jobs"] == 2
    with pytest.raises(ModelCheckError) as info:
        ploom.check(scenarios.bank_unlocked, ploom.Config(jobs=2, keep_going=True, trace_dir=str(tmp_path)))
    stats = info.value.statistics
    assert (stats.schedules, stats.failing, stats.complete) == (221, 75, True)
    assert os.path.exists(info.value.minimized_trace)


def test_abba_is_reported_as_a_deadlock(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(scenarios.abba, ploom.Config(trace_dir=str(tmp_path)))
    assert info.value.summary.startswith("deadlock: ")
    assert "deadlock" in str(info.value)
    with open(info.value.original_trace, encoding="utf-8") as f:
        trace = json.load(f)
    assert trace["outcome"]["kind"] == "deadlock"
    # main waits to join thread 1; threads 1 and 2 wait for each other's lock
    waits = {wait["task"]: wait for wait in trace["outcome"]["waits"]}
    assert waits[0]["op"] == "join"
    assert (waits[1]["op"], waits[1]["holder"]) == ("acquire", 2)
    assert (waits[2]["op"], waits[2]["holder"]) == ("acquire", 1)


# REFERENCE.md's table: (scenario, max_preemptions) -> (schedules, failing),
# exploring every schedule.  The bank rows with a bound are not in
# REFERENCE.md: they come from the same model (/tmp/proto/sim.py) that
# reproduces every number there.
REFERENCE = [
    ("bank_locked", None, 127, 0),
    ("bank_locked", 0, 3, 0),
    ("bank_locked", 1, 22, 0),
    ("bank_locked", 2, 55, 0),
    ("bank_unlocked", None, 221, 75),
    ("bank_unlocked", 0, 3, 0),
    ("bank_unlocked", 1, 14, 3),
    ("bank_unlocked", 2, 52, 14),
    ("abba", None, 194, 10),
    ("abba", 0, 3, 0),
    ("abba", 1, 19, 2),
    ("abba", 2, 59, 5),
    # soak: the C tests' simulator holds lib/'s searches to the same count in make check
    # (tests/c/sim.c), and under ipb test_ipb.c holds ipb to DFS's very schedules on counter3;
    # make soak also runs docs/guarantees.rst's table.py, which prints it
    pytest.param("counter3", None, 53715, 0, marks=[pytest.mark.slow, pytest.mark.soak]),
    ("counter3", 0, 13, 0),
    ("counter3", 1, 313, 0),
    pytest.param("counter3", 2, 1866, 0, marks=pytest.mark.soak),
    ("racy_counter2", None, 69, 30),
    ("racy_counter2", 0, 3, 0),
    ("racy_counter2", 1, 12, 3),
    ("racy_counter2", 2, 32, 10),
    ("try_lock", None, 307, 0),
    ("try_lock", 0, 3, 0),
    ("try_lock", 1, 24, 0),
    ("try_lock", 2, 77, 0),
    ("flag_handoff", None, 488, 0),
    ("flag_handoff", 0, 3, 0),
    ("flag_handoff", 1, 21, 0),
    ("flag_handoff", 2, 76, 0),
]


def _in_each_order(rows):
    """REFERENCE's rows under dfs, then ipb.  ipb's slow rows are soak:
    test_ipb.c already holds ipb to DFS's very schedules on the simulator's
    counter3, so make check spends its minutes on DFS's count only."""
    params = []
    for search in ("dfs", "ipb"):
        for row in rows:
            values, marks = (row.values, list(row.marks)) if hasattr(row, "values") else (row, [])
            if search == "ipb" and any(m.name == "slow" for m in marks):
                marks.append(pytest.mark.soak)
            params.append(pytest.param(*values, search, marks=marks))
    return params


# ipb runs the same schedules as DFS in another order: the same counts
@pytest.mark.parametrize(("name", "bound", "schedules", "failing", "search"), _in_each_order(REFERENCE))
def test_reference_counts(tmp_path, name, bound, schedules, failing, search):
    stats = explore(getattr(scenarios, name), tmp_path, max_preemptions=bound, keep_going=True, search=search)
    assert (stats.schedules, stats.failing) == (schedules, failing)
    assert stats.complete is True
    assert stats.max_preemptions == bound
    assert stats.reduction == "none"
    assert stats.search == search
    assert stats.result == ("failure" if failing else "pass")


# REFERENCE.md's Mazurkiewicz traces (and failing ones): DPOR must run at
# least one schedule per class (fewer would be a lost class); here, exactly one
DPOR_REFERENCE = [
    ("bank_locked", 2, 0),
    ("bank_unlocked", 6, 2),
    ("abba", 3, 1),
    ("counter3", 6, 0),
    ("racy_counter2", 4, 2),
    ("try_lock", 4, 0),
    ("flag_handoff", 4, 0),
]


@pytest.mark.parametrize(("name", "classes", "failing"), DPOR_REFERENCE)
def test_dpor_reference_counts(tmp_path, name, classes, failing):
    stats = explore(getattr(scenarios, name), tmp_path, reduction="dpor", keep_going=True)
    assert (stats.schedules, stats.failing) == (classes, failing)
    assert stats.complete is True
    assert stats.reduction == "dpor"
    assert stats.raw["sleep_blocked"] >= 0


def test_dpor_passes_counter3_in_at_most_12_schedules(tmp_path):
    stats = ploom.check(scenarios.counter3, ploom.Config(reduction="dpor", trace_dir=str(tmp_path)))
    assert stats.result == "pass"
    assert stats.schedules + stats.raw["sleep_blocked"] <= 12


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("lock_order_bug", "the reader went first"),
        ("bank_unlocked", "the account is overdrawn"),
        ("abba", "deadlock: "),
    ],
)
def test_dpor_finds_the_bugs(tmp_path, name, message):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(getattr(scenarios, name), ploom.Config(reduction="dpor", trace_dir=str(tmp_path)))
    assert message in str(info.value)
    assert info.value.statistics.reduction == "dpor"
    # both traces replay: the failure again
    for trace in (info.value.original_trace, info.value.minimized_trace):
        with pytest.raises(ModelCheckError):
            ploom.exploration.replay(trace)


def test_dpor_combinations_are_refused_before_any_schedule_with_the_utilitys_reason(tmp_path):
    for options, reason in (
        ({"search": "pct", "max_schedules": 5}, "--search=pct cannot be combined with --reduction=dpor"),
        ({"search": "ipb"}, "--search=ipb cannot be combined with --reduction=dpor"),
    ):
        config = ploom.Config(reduction="dpor", trace_dir=str(tmp_path / "traces"), **options)
        with pytest.raises(ValueError) as info:
            ploom.check(scenarios.bank_unlocked, config)
        assert str(info.value).startswith(f"ploom-explore: {reason}")
        assert not (tmp_path / "traces").exists()


@pytest.mark.parametrize("options", [{"jobs": 2}, {"max_preemptions": 1}, {"jobs": 2, "max_preemptions": 2}])
def test_dpor_with_workers_or_a_bound_finds_the_bug_and_passes_the_fix(tmp_path, options):
    config = ploom.Config(reduction="dpor", trace_dir=str(tmp_path), **options)
    with pytest.raises(ModelCheckError) as info:
        ploom.check(scenarios.bank_unlocked, config)
    assert "the account is overdrawn" in str(info.value)
    stats = ploom.check(scenarios.bank_locked, config)
    assert stats.complete is True
    assert stats.failing == 0


def test_a_schedule_limit_is_never_a_pass(tmp_path):
    with pytest.raises(IncompleteExplorationError) as info:
        ploom.check(scenarios.bank_locked, ploom.Config(max_schedules=5, trace_dir=str(tmp_path)))
    stats = info.value.statistics
    assert stats.schedules == 5
    assert stats.complete is False
    assert stats.stopped_by == "max-schedules"
    assert "max_schedules=5" in str(info.value)
    assert "never a pass" in str(info.value)


def test_a_limit_that_is_not_reached_is_a_pass(tmp_path):
    stats = ploom.check(scenarios.bank_locked, ploom.Config(max_schedules=127, trace_dir=str(tmp_path)))
    assert stats.schedules == 127
    assert stats.complete is True


def _spin_line() -> int:
    """The line of spins_forever's loop, in scenarios.py."""
    lines, first = inspect.getsourcelines(scenarios.spins_forever)
    return first + next(i for i, line in enumerate(lines) if "yield_now" in line)


def test_a_thread_that_spins_forever_hits_the_step_limit(tmp_path):
    with pytest.raises(IncompleteExplorationError) as info:
        ploom.check(scenarios.spins_forever, ploom.Config(max_steps=200, trace_dir=str(tmp_path)))
    assert info.value.statistics.stopped_by == "max-steps"
    assert info.value.statistics.raw["step_limited"] == 1
    assert "step limit" in str(info.value)
    # where the spinning task was: the loop's line
    assert f"thread#1 was in: scenarios.py:{_spin_line()} in spin" in str(info.value)


@pytest.mark.parametrize("search", ["pct", "random"])
def test_a_sample_goes_on_past_the_step_limit_and_counts_it(tmp_path, search):
    config = ploom.Config(search=search, seed=3, max_schedules=4, max_steps=100, trace_dir=str(tmp_path))
    with pytest.raises(IncompleteExplorationError) as info:
        ploom.check(scenarios.spins_forever, config)
    stats = info.value.statistics
    assert stats.schedules == 4
    assert stats.raw["step_limited"] == 4
    assert stats.stopped_by == "max-schedules"
    assert "4 of 4 schedules reached the step limit" in str(info.value)
    assert f"thread#1 was in: scenarios.py:{_spin_line()} in spin" in str(info.value)


def test_a_failure_ends_the_search_before_a_limit(tmp_path):
    with pytest.raises(ModelCheckError):
        ploom.check(scenarios.bank_unlocked, ploom.Config(max_schedules=500, trace_dir=str(tmp_path)))


def test_blocking_outside_ploom_times_out(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(scenarios.blocks_outside, ploom.Config(schedule_timeout=1, trace_dir=str(tmp_path)))
    assert info.value.summary.startswith("timeout: ")
    with open(info.value.original_trace, encoding="utf-8") as f:
        assert json.load(f)["outcome"]["kind"] == "timeout"


def _line_of(marker):
    """The line of scenarios.py that holds the comment marker."""
    with open(scenarios.__file__, encoding="utf-8") as f:
        found = [n for n, line in enumerate(f, 1) if f"# {marker}" in line]
    assert len(found) == 1, marker
    return found[0]


def _show(trace):
    """ploom-show's text of the trace."""
    show = os.path.join(os.path.dirname(sys.executable), "ploom-show")
    return subprocess.run([show, "--color=never", trace], capture_output=True, text=True, check=True).stdout


def test_a_timeout_tells_where_the_spinning_task_and_the_others_were(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(scenarios.spins_holding_real_lock, ploom.Config(schedule_timeout=0.5, trace_dir=str(tmp_path)))
    spin, join = _line_of("the spinning line"), _line_of("the join line")
    # the dump catches the spinner at the loop's line or at its body's
    with open(info.value.original_trace, encoding="utf-8") as f:
        caught = json.load(f)["outcome"]["stacks"][1]["frames"][0]["line"]
    assert caught in (spin, spin + 1), caught
    spin = caught
    want = [
        f"MainThread was in: scenarios.py:{join} in spins_holding_real_lock",
        f"thread#1 (spinner-1) was in: scenarios.py:{spin} in _xyzzy_spin_forever",
        "thread#2 (idle-1) had not run yet",
    ]
    assert info.value.summary.startswith("timeout: ")
    assert info.value.stacks == want
    # the stacks, then the next step last
    trace = info.value.trace_to_read
    step = f"\nReplay: python -m ploom replay {trace}  # read it with: ploom-show {trace}"
    assert str(info.value).endswith("\nWhere each task was:\n  " + "\n  ".join(want) + step)
    with open(info.value.original_trace, encoding="utf-8") as f:
        stacks = json.load(f)["outcome"]["stacks"]
    assert [(s["task"], s["state"]) for s in stacks] == [(0, "running"), (1, "running"), (2, "unstarted")]
    assert stacks[1]["frames"][0]["function"] == "_xyzzy_spin_forever"
    assert stacks[1]["frames"][0]["line"] == spin
    assert stacks[1]["frames"][0]["file"].endswith("scenarios.py")
    shown = _show(info.value.original_trace)
    for line in want:
        # ploom-show names the file relative to the repository
        assert f"  {line.replace(' scenarios.py:', ' tests/python/scenarios.py:')}\n" in shown


def test_a_timeout_tells_where_a_task_blocked_on_a_real_lock_was(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(scenarios.blocks_on_real_lock, ploom.Config(schedule_timeout=0.5, trace_dir=str(tmp_path)))
    want = [
        f"MainThread was in: scenarios.py:{_line_of('the blocker join line')} in blocks_on_real_lock",
        "thread#1 had finished",
        f"thread#2 (blocker-1) was in: scenarios.py:{_line_of('the blocking line')} in _xyzzy_wait_real_lock",
    ]
    assert info.value.stacks == want
    shown = _show(info.value.original_trace)
    for line in want:
        # ploom-show names the file relative to the repository
        assert f"  {line.replace(' scenarios.py:', ' tests/python/scenarios.py:')}\n" in shown
    # a replay that times out again says where the tasks were this time
    with pytest.raises(ModelCheckError) as again:
        exploration.replay(info.value.original_trace)
    assert again.value.stacks == want


def test_an_exception_in_a_thread_fails_the_schedule(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(scenarios.raises_in_thread, ploom.Config(trace_dir=str(tmp_path)))
    assert info.value.summary == "builtins.ValueError: boom"
    with open(info.value.original_trace, encoding="utf-8") as f:
        outcome = json.load(f)["outcome"]
    assert outcome["task"] == 1
    assert "boom" in outcome["traceback"]


def test_os_exit_fails_the_schedule(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(scenarios.calls_os_exit, ploom.Config(trace_dir=str(tmp_path)))
    assert info.value.summary == "exit: the scenario exited with status 3"


def test_a_crash_fails_the_schedule(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(scenarios.crashes, ploom.Config(trace_dir=str(tmp_path)))
    assert info.value.summary == "crash: killed by signal 6 (SIGABRT)"


@pytest.mark.parametrize(
    "scenario, call",
    [
        (scenarios.forks, "os.fork()"),
        (scenarios.forks_in_a_thread, "os.fork()"),
        (scenarios.forkpty, "os.forkpty()"),
        (scenarios.catches_the_fork_refusal, "os.fork()"),
    ],
)
def test_forking_stops_the_search_as_a_setup_error_naming_the_call(tmp_path, scenario, call):
    # no bug of the code under test: no failure, no trace saved
    with pytest.raises(SetupError) as info:
        ploom.check(scenario, ploom.Config(trace_dir=str(tmp_path), minimize=False))
    message = str(info.value)
    assert message.startswith(f"ploom.UnscheduledPrimitiveError: {call} at ")
    assert "ploom cannot explore a test that starts processes" in message
    assert "to run another program, use subprocess" in message
    assert list(tmp_path.iterdir()) == []


def test_a_thread_of_multiprocessing_stops_the_search_as_one_that_starts_processes(tmp_path):
    with pytest.raises(SetupError) as info:
        ploom.check(scenarios.starts_a_spawned_pool, ploom.Config(trace_dir=str(tmp_path), minimize=False))
    message = str(info.value)
    assert "(module multiprocessing." in message
    assert "ploom cannot explore a test that starts processes" in message
    # no module to add to patch= would make it explorable
    assert "to patch=" not in message


@pytest.mark.parametrize(
    "scenario",
    [scenarios.forks_through_ctypes, scenarios.touches_state_in_preexec_fn],
    ids=["ctypes-fork", "preexec_fn"],
)
def test_a_copy_forked_without_os_fork_fails_the_schedule_naming_it(tmp_path, scenario):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(scenario, ploom.Config(trace_dir=str(tmp_path), minimize=False))
    assert info.value.summary.startswith(
        "builtins.RuntimeError: ploom: a copy of the schedule's process, forked without "
        "os.fork() (a ctypes call to fork(), or subprocess's preexec_fn), ran ploom's code"
    )


def test_an_operation_in_a_signal_handler_fails_the_schedule_naming_the_signal(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(scenarios.operates_in_a_signal_handler, ploom.Config(trace_dir=str(tmp_path), minimize=False))
    assert info.value.summary.startswith(
        "builtins.RuntimeError: ploom: the handler of signal 14 (SIGALRM) ran a ploom operation"
    )


def test_a_signal_handler_without_operations_runs(tmp_path):
    stats = ploom.check(scenarios.sets_a_flag_in_a_signal_handler, ploom.Config(trace_dir=str(tmp_path)))
    assert stats.complete is True


def test_subprocess_still_runs_programs(tmp_path):
    stats = ploom.check(scenarios.runs_a_program_in_threads, ploom.Config(trace_dir=str(tmp_path)))
    assert stats.complete is True


def test_a_nested_function_is_refused():
    def nested():
        pass

    with pytest.raises(ValueError, match="module level"):
        ploom.check(nested)


def test_a_lambda_is_refused():
    with pytest.raises(ValueError, match="module level"):
        ploom.check(lambda: None)


def test_a_scenario_that_cannot_be_loaded_is_a_runtime_error(tmp_path, monkeypatch):
    # importable here, but its import fails in the worker (PLOOM_WORKER set)
    (tmp_path / "unloadable_scenario.py").write_text(
        "import os\n"
        "def scenario():\n"
        "    pass\n"
        "if os.environ.get('PLOOM_WORKER'):\n"
        "    raise ImportError('nope')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import unloadable_scenario

    with pytest.raises(RuntimeError, match="nope"):
        ploom.check(unloadable_scenario.scenario, ploom.Config(trace_dir=str(tmp_path / "traces")))


def test_a_scenario_in_a_package_outside_the_working_folder_is_found(tmp_path, monkeypatch):
    # The worker runs in this process's working folder, where somepkg is
    # not; check() must hand it the folder that holds the package.
    package = tmp_path / "somepkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    shutil.copyfile(scenarios.__file__, package / "racy.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    from somepkg import racy

    stats = explore(racy.racy_counter2, tmp_path, keep_going=True)
    assert (stats.schedules, stats.failing) == (69, 30)
    assert stats.raw["target"] == "somepkg.racy:racy_counter2"


@pytest.mark.parametrize("suffix", [".py", ""])
def test_a_scenario_in_a_script_is_found_by_its_path(tmp_path, suffix):
    # The script calls check() at top level, as in the README: the worker
    # imports it with PLOOM_WORKER set, so check() must not recurse there.
    # A script without .py is Python source all the same.
    script = write_bank(tmp_path, "my_bank")
    script = script.rename(script.with_suffix(suffix))
    with open(script, "a", encoding="utf-8") as f:
        f.write(
            textwrap.dedent(
                f"""
                stats = ploom.check(locked, ploom.Config(trace_dir={str(tmp_path / "traces")!r}))
                if stats is not None:  # None in the worker that imports this file
                    print("SCHEDULES", stats.schedules)
                """
            )
        )
    result = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["SCHEDULES", "127"]


def load_under(name, path):
    """The module of path, loaded under name without registering it in
    sys.modules: a name no other process imports it by."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_saved_failure_fails_again_at_once_until_it_is_fixed(tmp_path, monkeypatch):
    path = write_bank(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = load_under(path.stem, path)
    config = ploom.Config(trace_dir=str(tmp_path / "traces"))
    with pytest.raises(ModelCheckError) as first:
        ploom.check(module.scenario, config)
    searched = first.value.statistics
    assert (searched.saved_runs, searched.saved_failing) == (0, 0)
    assert searched.schedules == searched.raw["schedules"] > 0
    # the saved failure first: found again before any schedule of the search
    with pytest.raises(ModelCheckError) as again:
        ploom.check(module.scenario, config)
    stats = again.value.statistics
    assert (stats.saved_runs, stats.saved_failing, stats.schedules, stats.failing) == (1, 1, 0, 0)
    assert again.value.summary == first.value.summary
    assert again.value.minimized_trace == first.value.minimized_trace
    # saved=False: the search alone, as the first time
    with pytest.raises(ModelCheckError) as alone:
        ploom.check(module.scenario, dataclasses.replace(config, saved=False))
    assert (alone.value.statistics.saved_runs, alone.value.statistics.schedules) == (0, searched.schedules)
    # the fix: the saved schedule passes, counted apart from the search's 127
    add_lock(path)
    stats = ploom.check(module.scenario, config)
    assert (stats.saved_runs, stats.saved_failing, stats.schedules, stats.result) == (1, 0, 127, "pass")
    stats = ploom.check(module.scenario, dataclasses.replace(config, saved=False))
    assert (stats.saved_runs, stats.schedules) == (0, 127)


def test_saved_is_a_flag_passed_as_no_saved():
    assert "--no-saved" in ploom.Config(saved=False)._options()
    assert "--no-saved" not in ploom.Config()._options()
    with pytest.raises(TypeError, match="Config.saved must be True or False"):
        ploom.Config(saved=0)


def made_by_hand(name, path):
    """A module object made without the import system, holding path's code."""
    module = types.ModuleType(name)
    module.__file__ = str(path)
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), vars(module))
    return module


@pytest.mark.parametrize(
    "load, name",
    [
        (load_under, "ploom_test_no_such_module"),
        # a name that imports another file: tests/python/scenarios.py
        (load_under, "scenarios"),
        (made_by_hand, "ploom_test_handmade"),
    ],
)
def test_a_scenario_no_other_process_imports_by_its_name_is_loaded_from_its_file(tmp_path, load, name,
                                                                                monkeypatch):
    path = write_bank(tmp_path)
    # a replay runs only a file of the folder it starts in
    monkeypatch.chdir(tmp_path)
    module = load(name, path)
    assert module.scenario.__module__ == name
    with pytest.raises(ModelCheckError) as info:
        ploom.check(module.scenario, ploom.Config(trace_dir=str(tmp_path / "traces")))
    assert info.value.summary == "builtins.AssertionError: the account is overdrawn"
    assert info.value.statistics.raw["target"] == f"{path}:scenario"
    with pytest.raises(ModelCheckError):
        ploom.exploration.replay(info.value.minimized_trace)


def test_a_module_loaded_under_the_name_that_imports_it_keeps_its_name(tmp_path, monkeypatch):
    path = write_bank(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = load_under(path.stem, path)
    stats = ploom.check(module.locked, ploom.Config(trace_dir=str(tmp_path / "traces")))
    assert stats.raw["target"] == f"{path.stem}:locked"


def test_a_scenario_without_a_file_is_refused_before_any_schedule(tmp_path):
    namespace = {"__name__": "ploom_test_exec"}
    exec(compile(write_bank(tmp_path).read_text(encoding="utf-8"), "<bank>", "exec"), namespace)
    with pytest.raises(ValueError) as info:
        ploom.check(namespace["scenario"], ploom.Config(trace_dir=str(tmp_path / "traces")))
    assert str(info.value) == (
        "ploom.check: the scenario 'scenario' is in module 'ploom_test_exec', which has no file "
        "(code run by exec, or a module made without one); each schedule runs in a separate process "
        "that imports the scenario by module name or loads it from its file, so define it in a .py file"
    )
    assert not (tmp_path / "traces").exists()


def test_a_module_run_with_python_m_is_found_by_its_name(tmp_path):
    package = tmp_path / "somepkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    script = write_bank(package, "bankmod")
    with open(script, "a", encoding="utf-8") as f:
        f.write(
            "\nif __name__ == '__main__':\n"
            f"    print(ploom.check(locked, ploom.Config(trace_dir={str(tmp_path / 'traces')!r})).raw['target'])\n"
        )
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    result = subprocess.run(
        [sys.executable, "-m", "somepkg.bankmod"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert (result.returncode, result.stdout) == (0, "somepkg.bankmod:locked\n"), result.stderr


@pytest.mark.parametrize(
    "target, split",
    [
        ("a.b:f", ("a.b", "f", False)),
        ("pkg.sub:Class.method", ("pkg.sub", "Class.method", False)),
        ("x.py:f", ("x.py", "f", True)),
        ("dir/x.py:f", ("dir/x.py", "f", True)),
        ("/abs/dir/script:f", ("/abs/dir/script", "f", True)),
        ("/a:b/x.py:f", ("/a:b/x.py", "f", True)),
        ("C:\\x.py:f", ("C:\\x.py", "f", True)),
        ("x.py", None),
        (":f", None),
        ("a:", None),
        ("a:b:c", None),
        ("a-b:f", None),
        ("a..b:f", None),
        ("C:\\dir\\x:f", None),
    ],
)
def test_one_rule_tells_a_file_target_from_a_module_target(target, split):
    if split is None:
        with pytest.raises(ValueError, match="target"):
            split_target(target)
    else:
        assert split_target(target) == split


def test_the_readme_example_raises_when_run_as_a_script(tmp_path):
    example = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "bank_account.py")
    result = subprocess.run(
        [sys.executable, os.path.abspath(example)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1
    assert "ploom.exploration.ModelCheckError: builtins.AssertionError: the account is overdrawn" in result.stderr
    assert "\nOriginal trace: .ploom/" in result.stderr
    # the next step once, the exception's: not ploom-explore's as well
    assert result.stderr.count("Replay: ") == 1
    step = r"^Replay: python -m ploom replay \.ploom/\S+-minimized\.json  # read it with: ploom-show "
    assert re.search(step, result.stderr, re.M)


def test_check_returns_none_inside_the_worker(monkeypatch):
    monkeypatch.setenv("PLOOM_WORKER", str(os.getpid()))
    assert ploom.check(scenarios.bank_unlocked) is None


def test_check_searches_in_a_program_that_inherited_the_workers_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("PLOOM_WORKER", str(os.getppid()))
    with pytest.raises(ModelCheckError):
        ploom.check(scenarios.bank_unlocked, ploom.Config(trace_dir=str(tmp_path)))


def test_check_in_a_program_a_scenario_starts_finds_the_failure(tmp_path, monkeypatch):
    """A scenario that runs a test tool in a subprocess: ploom.check() there
    is no worker's, and a failing scenario fails (no false pass)."""
    here = os.path.dirname(os.path.abspath(scenarios.__file__))
    (tmp_path / "child.py").write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {here!r})
            import ploom, ploom.exploration, scenarios
            try:
                result = ploom.check(scenarios.bank_unlocked, ploom.Config(trace_dir={str(tmp_path / "inner")!r}))
            except ploom.exploration.ModelCheckError:
                print("raised")
            else:
                print("returned", result)
            """
        )
    )
    (tmp_path / "runs_a_check.py").write_text(
        textwrap.dedent(
            f"""
            import subprocess, sys

            def scenario():
                with open({str(tmp_path / "child.err")!r}, "w") as err:
                    out = subprocess.run([sys.executable, {str(tmp_path / "child.py")!r}],
                                         stdout=subprocess.PIPE, stderr=err, text=True).stdout
                with open({str(tmp_path / "child.out")!r}, "w") as f:
                    f.write(out)
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import runs_a_check

    ploom.check(runs_a_check.scenario, ploom.Config(trace_dir=str(tmp_path / "outer"), schedule_timeout=60))
    assert (tmp_path / "child.out").read_text() == "raised\n", (tmp_path / "child.err").read_text()


def test_a_missing_utility_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PLOOM_BIN_DIR", str(tmp_path))
    with pytest.raises(RuntimeError, match="ploom-explore"):
        ploom.check(scenarios.bank_locked)


@pytest.mark.parametrize(
    "options",
    [
        {"reduction": 1},
        {"max_preemptions": 1.5},
        {"max_preemptions": True},
        {"max_schedules": "5"},
        {"time_limit": "soon"},
        {"time_limit": False},
        {"max_steps": 10.0},
        {"schedule_timeout": "10"},
        {"reduction": ["dpor"]},
        {"hash_seed": "0"},
        {"keep_going": "yes"},
        {"minimize": 1},
        {"trace_dir": 3},
        {"trace_dir": b"traces"},
        {"jobs": "2"},
        {"patch": "mylib"},
        {"patch": None},
        {"patch": ("mylib", 1)},
        {"instrument": "mylib"},
        {"instrument": None},
        {"instrument": ("mylib", b"other")},
    ],
)
def test_config_rejects_values_of_the_wrong_type(options):
    with pytest.raises(TypeError, match=f"Config.{next(iter(options))} must be"):
        ploom.Config(**options)


@pytest.mark.parametrize(
    "options, reason",
    [
        ({"reduction": "sleepy"}, "unknown --reduction (none or dpor) 'sleepy'"),
        ({"max_preemptions": -1}, "invalid --max-preemptions '-1': not an integer from 0 to 1000000"),
        ({"max_preemptions": 10**30}, f"invalid --max-preemptions '{10**30}': not an integer from 0 to 1000000"),
        ({"max_preemptions": 1_000_001}, "invalid --max-preemptions '1000001'"),
        ({"max_schedules": 0}, "invalid --max-schedules '0': not an integer from 1 to 1000000000000"),
        ({"max_schedules": 10**12 + 1}, "invalid --max-schedules '1000000000001'"),
        ({"time_limit": -2.0}, "invalid --time-limit '-2.0': not a number of seconds above 0"),
        ({"time_limit": 0}, "invalid --time-limit '0'"),
        ({"time_limit": 1e10}, "invalid --time-limit '10000000000.0'"),
        ({"time_limit": float("nan")}, "invalid --time-limit 'nan'"),
        ({"max_steps": -1}, "invalid --max-steps '-1': not an integer from 0 to"),
        ({"max_steps": 10**30}, f"invalid --max-steps '{10**30}'"),
        ({"schedule_timeout": -1}, "invalid --schedule-timeout '-1': not a number of seconds from 0 to"),
        ({"schedule_timeout": 1e300}, "invalid --schedule-timeout '1e+300'"),
        ({"schedule_timeout": float("inf")}, "invalid --schedule-timeout 'inf'"),
        ({"hash_seed": -1}, "invalid --hash-seed '-1': not an integer from 0 to 4294967295"),
        ({"hash_seed": 2**32}, "invalid --hash-seed '4294967296'"),
        ({"trace_dir": ""}, "empty --trace-dir"),
        ({"jobs": 0}, "invalid --jobs '0': not an integer from 1 to 64"),
        ({"jobs": 65}, "invalid --jobs '65'"),
        ({"patch": ("ok.mod", "bad-name")},
         "invalid --patch 'bad-name': not a module name (Python identifiers joined by '.')"),
        ({"patch": ("",)}, "invalid --patch '': not a module name"),
        ({"instrument": ("ok.mod", "bad-name")},
         "invalid --instrument 'bad-name': not a module name (Python identifiers joined by '.')"),
        ({"instrument": ("-", "a" * 201)}, f"invalid --instrument '{'a' * 201}': longer than 200 bytes"),
    ],
)
def test_check_refuses_what_ploom_explore_refuses_with_its_reason(tmp_path, capfd, options, reason):
    # Config takes any value of the right type; ploom-explore is the one
    # that knows the bounds, and check() asks it before any schedule runs
    options.setdefault("trace_dir", str(tmp_path / "traces"))
    config = ploom.Config(**options)
    with pytest.raises(ValueError) as info:
        ploom.check(scenarios.bank_unlocked, config)
    message = str(info.value)
    assert message.startswith(f"ploom-explore: {reason}"), message
    assert "\n" not in message and "usage:" not in message
    assert not (tmp_path / "traces").exists()
    # the usage text names options, not Config fields: it stays off stderr
    assert "usage:" not in capfd.readouterr().err


@pytest.mark.parametrize(
    "options",
    [
        {"max_preemptions": 1_000_000},
        {"max_schedules": 10**12},
        {"max_steps": 0},
        {"time_limit": 10**9},
        {"schedule_timeout": 0},
        {"schedule_timeout": 10**9},
        {"hash_seed": 2**32 - 1},
        {"jobs": 64},
    ],
)
def test_the_largest_values_pass_the_utilitys_check(options):
    result = subprocess.run(
        [UTILITY, "--check-options", *ploom.Config(**options)._options()], capture_output=True, text=True
    )
    assert (result.returncode, result.stderr) == (0, "")


@pytest.mark.parametrize("field", ["reduction", "search"])
def test_an_enumerated_field_is_typed_with_the_values_ploom_explore_takes(field):
    # the type is what an editor offers: the Literal of exactly the values
    # the utility names when it refuses another one
    option = dict((f, o) for f, o, _ in ploom._config.OPTIONS)[field]
    refused = subprocess.run([UTILITY, "--check-options", f"{option}=unheard-of"], capture_output=True, text=True)
    said = re.match(rf"ploom-explore: unknown {option} \((.*)\) 'unheard-of'\n", refused.stderr)
    assert refused.returncode == 2 and said, refused.stderr
    values = re.split(r", | or ", said[1])
    literal, none = typing.get_args(typing.get_type_hints(ploom.Config)[field])
    assert (typing.get_origin(literal), none) == (typing.Literal, type(None))
    assert sorted(typing.get_args(literal)) == sorted(values)
    # a value outside the type is still the utility's to refuse, not Config's
    assert ploom.Config(**{field: "unheard-of"})._options() == [f"{option}=unheard-of"]


def test_every_search_the_utility_takes_is_in_its_usage_and_its_manual_page():
    # the registry of searches words the usage; the manual page is written
    # by hand, so a new search must be described there too
    refused = subprocess.run([UTILITY, "--check-options", "--search=unheard-of"], capture_output=True, text=True)
    said = re.match(r"ploom-explore: unknown --search \((.*)\) 'unheard-of'\n", refused.stderr)
    assert said, refused.stderr
    names = re.split(r", | or ", said[1])
    assert len(names) >= 4, names
    usage = subprocess.run([UTILITY, "--help"], capture_output=True, text=True, check=True).stdout
    entry = usage[usage.index("\n        --search=ORDER"):usage.index("\n        --seed=N")]
    manual = (pathlib.Path(__file__).resolve().parents[2] / "man" / "ploom-explore.1").read_text(encoding="utf-8")
    described = manual[manual.index(".BR \\-\\-search =\\fIorder\\fR"):]
    described = described[:described.index("\n.TP\n")]
    for name in names:
        assert re.search(rf"\b{name}: ", entry), f"--help does not say what --search={name} does:\n{entry}"
        assert re.search(rf"^\.BR? {name}\b", described, re.M), f"man/ploom-explore.1 does not describe --search={name}"


def test_max_steps_0_passes_a_short_scenario_as_ploom_explore_does(tmp_path):
    stats = ploom.check(scenarios.bank_locked, ploom.Config(max_steps=0, reduction="none", trace_dir=str(tmp_path)))
    assert stats.schedules == 127
    assert stats.complete is True


def test_max_steps_0_stops_a_spinning_thread_at_the_most_steps(tmp_path):
    with pytest.raises(IncompleteExplorationError) as info:
        ploom.check(
            scenarios.spins_forever, ploom.Config(max_steps=0, minimize=False, trace_dir=str(tmp_path))
        )
    assert "a schedule reached 200,000 steps, the most any schedule may take (max_steps=0;" in str(info.value)
    with open(info.value.statistics.trace, encoding="utf-8") as f:
        assert json.load(f)["outcome"]["limit"] == 200_000


def test_the_docs_say_what_max_steps_0_does():
    # the utility's help states the most steps; the README and the Guide
    # must give the same number, never "no bound"
    help_text = subprocess.run([UTILITY, "--help"], capture_output=True, text=True, check=True).stdout
    most = int(re.search(r"0: the\s+most, (\d+)\)", help_text).group(1))
    root = pathlib.Path(__file__).resolve().parents[2]
    readme = " ".join((root / "README.md").read_text(encoding="utf-8").split())
    guide = " ".join((root / "docs" / "guide.rst").read_text(encoding="utf-8").split())
    assert f"0: the most, {most:,})" in readme
    assert f"``max_steps=0`` allows the most steps any schedule may take, {most:,}," in guide
    for text in (readme, guide):
        assert not re.search(r"max_steps[^.]{0,80}\b0\b[^.]{0,20}no (step )?bound", text)


def test_a_string_alone_is_not_taken_for_a_tuple_of_patched_modules():
    # ("mylib") is the string "mylib": the message says how to write one
    with pytest.raises(TypeError) as info:
        ploom.Config(patch=("mylib"))  # noqa: UP034 - the mistake this test is about
    assert str(info.value) == (
        "Config.patch must be a tuple of module names, not the string 'mylib' (write ('mylib',) for one module)"
    )


def help_options():
    """The long options ploom-explore's help lists."""
    text = subprocess.run([UTILITY, "--help"], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"^ {4}(?:-\w, | {4})(--[a-z][a-z-]*)", text, re.M))


def test_config_has_a_field_for_each_option_of_ploom_explore():
    options = help_options()
    assert {"--max-preemptions", "--jobs", "--quiet"} <= options  # the help is parsed
    table = {option: field for field, option, _ in ploom._config.OPTIONS}
    # an option added to ploom-explore needs a Config field, or a reason
    # in _NOT_IN_CONFIG; an option gone from it, neither
    assert options | {"--help", "--version"} == table.keys() | ploom._config.NOT_IN_CONFIG.keys()
    assert not table.keys() & ploom._config.NOT_IN_CONFIG.keys()
    # and each field is in the table, once
    assert sorted(table.values()) == sorted(f.name for f in dataclasses.fields(ploom.Config))


def test_config_leaves_every_default_to_ploom_explore():
    assert ploom.Config()._options() == []


def test_each_field_becomes_its_option():
    config = ploom.Config(
        max_preemptions=2, reduction="none", search="ipb", max_schedules=10**12, time_limit=1.5,
        max_steps=0, schedule_timeout=0.25, keep_going=True, hash_seed=7, trace_dir=pathlib.Path("t d"),
        minimize=False, minimize_seconds=2.5, jobs=3, patch=["a.b", "c"], instrument=["-", "a.b"],
    )
    assert config._options() == [
        "--max-preemptions=2", "--reduction=none", "--search=ipb", "--max-schedules=1000000000000",
        "--time-limit=1.5", "--max-steps=0", "--schedule-timeout=0.25", "--keep-going", "--hash-seed=7",
        "--trace-dir=t d", "--no-minimize", "--minimize-seconds=2.5", "--jobs=3", "--patch=a.b", "--patch=c",
        "--instrument=-", "--instrument=a.b",
    ]
    assert ploom.Config(keep_going=False, minimize=True)._options() == []


def test_check_runs_ploom_explore_once_and_the_options_are_checked_there(tmp_path, monkeypatch):
    # a ploom-explore that notes each run, then runs the real one
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "runs"
    (bin_dir / "ploom-explore").write_text(f'#!/bin/sh\necho "$*" >> \'{log}\'\nexec \'{UTILITY}\' "$@"\n')
    (bin_dir / "ploom-explore").chmod(0o755)
    monkeypatch.setenv("PLOOM_BIN_DIR", str(bin_dir))
    config = ploom.Config(max_preemptions=0, trace_dir=str(tmp_path / "traces"))
    assert ploom.check(scenarios.bank_locked, config).schedules == 3
    with pytest.raises(ValueError, match="ploom-explore: invalid --jobs '0'"):
        ploom.check(scenarios.bank_locked, ploom.Config(jobs=0))
    # the first check also started the process's worker template, which
    # searches nothing (_template.py)
    runs = [run for run in log.read_text().splitlines() if "--worker-template=" not in run]
    assert len(runs) == 2
    assert not any("--check-options" in run for run in runs)


@pytest.mark.parametrize(
    "stderr, verdict",
    [
        ("", None),
        ("ploom-", None),
        ("ploom-explore: invalid --jobs '0': not an integer from 1 to 64", None),
        ("ploom-explore: invalid --jobs '0': not an integer from 1 to 64\n", None),
        ("ploom-explore: invalid --jobs '0': not an integer from 1 to 64\nusa", None),
        ("ploom-explore: invalid --jobs '0': not an integer from 1 to 64\nusage: x [-p N]\n", True),
        ("ploom-explore: schedule 7 failed: x\nploom-explore: trace written to 'y'\n", False),
        ("ploom-explore: schedule 7 failed: x\nploo", False),
        ("hello from the scenario's import\n", False),
        ("hello", False),
        ("usage: what the scenario printed\n", False),
    ],
)
def test_a_usage_error_is_told_by_its_shape_as_soon_as_it_can_be(stderr, verdict):
    assert ploom._utility.usage_error(stderr) is verdict


def test_the_patched_modules_become_patch_options_in_order():
    assert ploom.Config()._options().count("--patch=a.b") == 0
    assert not any(option.startswith("--patch") for option in ploom.Config()._options())
    options = ploom.Config(patch=("a.b", "c"))._options()
    assert [option for option in options if option.startswith("--patch")] == ["--patch=a.b", "--patch=c"]
    # a list says the same, and the config stays hashable
    config = ploom.Config(patch=["a.b", "c"])
    assert config.patch == ("a.b", "c")
    assert hash(config) == hash(ploom.Config(patch=("a.b", "c")))


def test_patched_modules_reach_the_worker(tmp_path):
    # the scenario's own module is imported, so it can be patched: the check runs
    config = ploom.Config(patch=("scenarios",), reduction="none", trace_dir=str(tmp_path))
    stats = ploom.check(scenarios.bank_locked, config)
    assert stats.schedules == 127
    # named, they make the reduction the default search, and the result says so:
    # one schedule of each of the bank's 2 classes
    stats = ploom.check(scenarios.bank_locked, ploom.Config(patch=("scenarios",), trace_dir=str(tmp_path)))
    assert (stats.reduction, stats.search_default, stats.schedules) == (
        "dpor", "the default when modules are patched", 2)
    # a module that exists but that the scenario does not import
    with pytest.raises(RuntimeError, match="ImportError: cannot patch 'colorsys': the scenario's module has not"):
        ploom.check(scenarios.bank_locked, ploom.Config(patch=("colorsys",), trace_dir=str(tmp_path)))


@pytest.mark.parametrize("field", ["patch", "instrument"])
def test_a_module_that_does_not_exist_is_refused_with_the_nearest_names(tmp_path, field):
    config = ploom.Config(trace_dir=str(tmp_path / "traces"), **{field: ("scenarioz",)})
    with pytest.raises(RuntimeError) as info:
        ploom.check(scenarios.bank_locked, config)
    # the nearest first
    said = f"ModuleNotFoundError: cannot {field} 'scenarioz': no module named 'scenarioz' (did you mean 'scenarios'"
    assert said in str(info.value)
    # a dotted name: the nearest in its package
    config = ploom.Config(trace_dir=str(tmp_path / "traces"), **{field: ("json.decodr",)})
    with pytest.raises(RuntimeError, match=r"no module named 'json\.decodr' \(did you mean 'json\.decoder'[,?]"):
        ploom.check(scenarios.bank_locked, config)
    assert not (tmp_path / "traces").exists()


def test_a_utility_failure_is_a_public_runtime_error(tmp_path):
    # the private type that python -m ploom reads its exit status from
    # stays out of a caller's traceback
    config = ploom.Config(patch=("scenarioz",), trace_dir=str(tmp_path))
    with pytest.raises(RuntimeError) as info:
        ploom.check(scenarios.bank_locked, config)
    assert type(info.value) is RuntimeError
    shown = "".join(traceback.format_exception(info.value))
    assert "_UtilityError" not in shown
    assert "ploom-explore failed on 'scenarios:bank_locked' (exit 2)" in shown


def test_a_value_of_the_wrong_type_is_a_type_error():
    with pytest.raises(TypeError, match="ploom.check: the scenario must be a function, not int"):
        ploom.check(3)
    with pytest.raises(TypeError, match="ploom.check: config must be a ploom.Config, not dict"):
        ploom.check(scenarios.bank_locked, {"max_schedules": 3})


def test_counts_are_singular_for_one():
    assert [counted(n, "schedule") for n in (0, 1, 2)] == ["0 schedules", "1 schedule", "2 schedules"]
    stats = Statistics(1, 0, False, "incomplete", "max-schedules", None, "none", 0.1, 10.0, 2, None)
    message = ploom.exploration._incomplete_message(stats, ploom.Config(max_schedules=1))
    assert "after 1 schedule;" in message


def test_the_instrumented_modules_become_instrument_options_in_order():
    assert not any(option.startswith("--instrument") for option in ploom.Config()._options())
    options = ploom.Config(instrument=("a.b", "-", "c"))._options()
    # "-" is ploom-explore's to read, as every name is: passed on as it is
    assert options == ["--instrument=a.b", "--instrument=-", "--instrument=c"]
    config = ploom.Config(instrument=["a.b", "c"])
    assert config.instrument == ("a.b", "c")
    assert hash(config) == hash(ploom.Config(instrument=("a.b", "c")))
    with pytest.raises(TypeError) as info:
        ploom.Config(instrument=("mylib"))  # noqa: UP034 - the mistake the message is about
    assert str(info.value) == (
        "Config.instrument must be a tuple of module names, not the string 'mylib' (write ('mylib',) for one module)"
    )


def test_the_statistics_say_what_was_instrumented():
    base = {"schedules": 3, "failing": 0, "complete": True, "result": "pass"}
    stats = Statistics.from_json({**base, "instrument": ["mylib.pool"], "instrument_scenario": True})
    assert (stats.instrument, stats.instrument_scenario) == (("mylib.pool",), True)
    # statistics of a ploom-explore older than the fields instrumented nothing
    stats = Statistics.from_json(base)
    assert (stats.instrument, stats.instrument_scenario) == ((), False)


@REWRITER
def test_instrumented_modules_reach_the_worker_and_the_statistics(tmp_path):
    config = ploom.Config(instrument=("-", "scenarios"), max_preemptions=0, trace_dir=str(tmp_path))
    stats = ploom.check(scenarios.bank_locked, config)
    assert (stats.instrument, stats.instrument_scenario) == (("scenarios",), False)
    # every search instruments the scenario by default, said once as the
    # scenario, named or not; "-" only what is named
    for named in ((), ("scenarios",)):
        config = ploom.Config(instrument=named, max_preemptions=0, trace_dir=str(tmp_path))
        stats = ploom.check(scenarios.bank_locked, config)
        assert (stats.instrument, stats.instrument_scenario, stats.reduction) == ((), True, "none")
    stats = ploom.check(scenarios.bank_locked, ploom.Config(reduction="dpor", trace_dir=str(tmp_path)))
    assert (stats.instrument, stats.instrument_scenario) == ((), True)
    config = ploom.Config(reduction="dpor", instrument=("-",), trace_dir=str(tmp_path))
    stats = ploom.check(scenarios.bank_locked, config)
    assert (stats.instrument, stats.instrument_scenario) == ((), False)
    # the rewriting is installed before the scenario's import: a module
    # imported before cannot be instrumented
    with pytest.raises(RuntimeError, match=r"cannot load scenario .*ValueError"):
        ploom.check(scenarios.bank_locked, ploom.Config(instrument=("os",), trace_dir=str(tmp_path)))


def test_config_is_frozen():
    config = ploom.Config()
    with pytest.raises(AttributeError):
        config.max_steps = 5


def test_the_package_exports_the_api():
    assert ploom.__version__ == "0.1.0"
    for name in ("Thread", "Lock", "SharedCell", "yield_now", "check", "Config"):
        assert hasattr(ploom, name), name


@pytest.mark.parametrize(
    "scenario, words",
    [
        (scenarios.async_scenario, "async def"),
        (scenarios.generator_scenario, "generator"),
        (scenarios.async_generator_scenario, "async generator"),
        (scenarios.needs_an_argument, "argument"),
        (scenarios.holder.scenario, "bound method"),
    ],
)
def test_a_scenario_whose_body_would_not_run_is_refused_before_any_schedule(tmp_path, scenario, words):
    # refused before ploom-explore starts: no statistics, no trace folder
    with pytest.raises(ValueError, match=words):
        ploom.check(scenario, ploom.Config(trace_dir=str(tmp_path / "traces")))
    assert not (tmp_path / "traces").exists()


def test_a_trace_that_cannot_be_saved_is_a_runtime_error_with_the_reason(tmp_path):
    (tmp_path / "file").write_text("in the way")
    config = ploom.Config(reduction="none", trace_dir=str(tmp_path / "file" / "traces"))
    with pytest.raises(RuntimeError, match="cannot save the trace: cannot create directory .*: File exists"):
        ploom.check(scenarios.bank_unlocked, config)


def test_progress_reports_go_to_the_function_and_end_with_the_statistics(tmp_path, capfd):
    reports = []
    config = ploom.Config(keep_going=True, minimize=False, trace_dir=str(tmp_path))
    with pytest.raises(ModelCheckError) as info:
        ploom.check(scenarios.bank_unlocked, config, progress=reports.append)
    stats = info.value.statistics
    last = reports[-1]
    assert [report["done"] for report in reports] == [False] * (len(reports) - 1) + [True]
    assert (last["schedules"], last["failing"]) == (stats.schedules, stats.failing) == (221, 75)
    assert (last["fraction"], last["estimate_total"], last["eta_s"]) == (1, 221, 0)
    assert last["summary"].startswith("221 schedules (") and last["summary"].endswith(", 75 failing, 100% of 221")
    # the reports leave stderr; the messages stay there
    err = capfd.readouterr().err
    assert "failed: builtins.AssertionError: the account is overdrawn\n" in err
    assert not [line for line in err.splitlines() if line.startswith("{")]


@pytest.mark.skipif(shutil.which("script") is None, reason="script(1) of util-linux gives the test a terminal")
def test_progress_on_a_terminal_is_the_status_line_and_in_a_log_the_counts(tmp_path):
    # ploom-explore's stderr is a pipe to this process; what reaches the
    # user's terminal must be the line a terminal shows, rewritten
    program = (
        "import sys, ploom, ploom.exploration, scenarios\n"
        "try:\n"
        "    ploom.check(scenarios.counter3, ploom.Config(time_limit=2.5, trace_dir=sys.argv[1]))\n"
        "except ploom.exploration.IncompleteExplorationError:\n"
        "    pass\n"
    )
    (tmp_path / "check.py").write_text(program)
    tests = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, PYTHONPATH=tests + os.pathsep + os.environ.get("PYTHONPATH", ""), COLUMNS="50")
    command = f"{shlex.quote(sys.executable)} check.py traces"
    tty = subprocess.run(
        ["script", "-qec", command, "/dev/null"], cwd=tmp_path, env=env, capture_output=True, timeout=120
    )
    # bytes: text mode would read each carriage return as a newline
    out = tty.stdout.decode()
    # the reduction's hint is a line of its own, not cut to the width
    hint = "ploom-explore: more than 100000 schedules estimated; --reduction=dpor would explore fewer\n"
    lines = [line for line in out.replace("\r\n", "\n").replace(hint, "").split("\r") if line.strip()]
    assert any(re.match(r"ploom-explore: [0-9,]+ schedules \(", line) for line in lines), repr(out)
    # as wide as the terminal says (COLUMNS here, as script(1) gives no
    # size), the last column free; not the log's line of counts
    assert max(len(line) for line in lines) == 49, repr(out)
    assert not re.search(r"ploom-explore: [0-9]+ schedules?, [0-9]+ failing", out)
    log = subprocess.run(
        [sys.executable, "check.py", "traces"], cwd=tmp_path, env=env, capture_output=True, timeout=120
    )
    assert b"\r" not in log.stderr


def test_progress_lines_are_taken_whole_from_stderr_and_the_rest_is_left():
    from ploom._utility import ProgressLines

    reports = []
    lines = ProgressLines(reports.append)
    line = b'{"schedules":3,"failing":0,"summary":"3 schedules","done":false}\n'
    # a report cut between reads, a message, a scenario's own braces
    assert lines.feed(line[:10]) == b""
    assert lines.feed(line[10:] + b"ploom-explore: a message\n{not json}\n") == (
        b"ploom-explore: a message\n{not json}\n"
    )
    assert lines.feed(b'{"a": 1}\n' + line + b"a last line without") == b'{"a": 1}\n'
    assert lines.rest() == b"a last line without"
    assert lines.rest() == b""
    assert reports == [json.loads(line)] * 2


def test_dpor_with_a_bound_fails_where_the_bounded_search_does(tmp_path):
    # abba deadlocks with 1 preemption and not with none, under both searches
    for reduction in ("none", "dpor"):
        config = ploom.Config(reduction=reduction, max_preemptions=0, trace_dir=str(tmp_path))
        assert ploom.check(scenarios.abba, config).max_preemptions == 0
        config = ploom.Config(reduction=reduction, max_preemptions=1, trace_dir=str(tmp_path))
        with pytest.raises(ModelCheckError) as info:
            ploom.check(scenarios.abba, config)
        assert info.value.statistics.reduction == reduction
        assert "deadlock" in str(info.value)


def test_a_timeout_folds_the_many_tasks_that_had_not_started_into_one_line():
    from ploom.exploration import _stack_lines

    frames = [{"file": "/x/pool.py", "line": 7, "function": "wait"}]
    stacks = [{"task": 0, "state": "running", "frames": frames}]
    stacks += [{"task": n, "state": "finished"} for n in (1, 2)]
    stacks += [{"task": n, "state": "unstarted"} for n in range(3, 253)]
    stacks += [{"task": 253, "state": ["not", "a", "state"]}]
    names = [{"id": 4, "name": "worker-4"}]
    trace = {"outcome": {"kind": "timeout", "stacks": stacks}, "tasks": names}
    assert _stack_lines(trace) == [
        "MainThread was in: pool.py:7 in wait",
        "thread#1 had finished",
        "thread#2 had finished",
        "thread#3, thread#4 (worker-4), thread#5 and 247 more had not run yet",
        "thread#253 is not known (the dump of the stacks was cut short)",
    ]
