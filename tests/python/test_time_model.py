"""The time models (DESIGN.md, "Time: a deterministic simulation"): under
the default, idle, a timeout fires only when no task can run and
spin-waits end; under timeouts="any", the stress model, any timed wait may
time out at any step.

The scenarios are in time_scenarios.py."""

import json
import os
import subprocess
import sys

import pytest

import ploom
import time_scenarios as ts
from ploom.exploration import ModelCheckError

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.dirname(sys.executable)

SEARCHES = [
    pytest.param({"reduction": "dpor"}, id="dpor"),
    pytest.param({"reduction": "none"}, id="dfs"),
]
SAMPLES = [
    pytest.param({"search": "random", "max_schedules": 20}, id="random"),
    pytest.param({"search": "pct", "max_schedules": 20}, id="pct"),
]


def check(scenario, tmp_path, **options):
    """check()'s statistics of a search that passed; max_steps bounds a
    spin-wait that would not end."""
    options.setdefault("max_steps", 2000)
    return ploom.check(scenario, ploom.Config(trace_dir=str(tmp_path), **options))


def fails(scenario, tmp_path, **options):
    with pytest.raises(ModelCheckError) as info:
        check(scenario, tmp_path, **options)
    return info.value


@pytest.mark.parametrize("search", SEARCHES)
@pytest.mark.parametrize("scenario", [
    ts.event_safety_net,
    ts.deadline_after_sleep,
    ts.join_then_alive,
    ts.queue_get_safety_net,
    ts.sleepers_wake_in_deadline_order,
], ids=lambda f: f.__name__)
def test_a_timeout_fires_only_when_no_task_can_run(tmp_path, search, scenario):
    stats = check(scenario, tmp_path, **search)
    assert stats.result == "pass" and stats.complete, stats


@pytest.mark.parametrize("search", SEARCHES + SAMPLES)
@pytest.mark.parametrize("scenario", [
    ts.spin_sleep_ms,
    ts.spin_sleep_min,
    ts.spin_sleep_zero,
    ts.two_spinners,
    ts.yields_then_sets,
    ts.spin_outlasts_a_timeout,
], ids=lambda f: f.__name__)
def test_spin_waits_end(tmp_path, search, scenario):
    if "search" in search:
        # a sample is never a pass: each of its schedules ended, none
        # at the step limit
        with pytest.raises(ploom.exploration.IncompleteExplorationError,
                           match="no failure in 20 schedules, stopped by the schedule limit"):
            check(scenario, tmp_path, **search)
        return
    stats = check(scenario, tmp_path, **search)
    assert stats.result == "pass" and stats.complete, stats


@pytest.mark.parametrize("search", SEARCHES)
def test_a_real_timeout_is_found(tmp_path, search):
    exc = fails(ts.lock_times_out, tmp_path, **search)
    assert "the acquire timed out after 1.0 s" in str(exc)


@pytest.mark.parametrize("search", SEARCHES)
def test_several_due_at_one_instant_are_choices(tmp_path, search):
    exc = fails(ts.same_instant_is_a_choice, tmp_path, **search)
    assert "['b', 'a']" in str(exc)


@pytest.mark.parametrize("search", SEARCHES)
@pytest.mark.parametrize(("scenario", "message"), [
    (ts.event_safety_net, "the safety net timed out: [False]"),
    (ts.deadline_after_sleep, "the waiter timed out: [False]"),
])
def test_the_stress_model_times_out_safety_nets(tmp_path, search, scenario, message):
    exc = fails(scenario, tmp_path, timeouts="any", **search)
    assert message in str(exc)


def test_the_stress_model_starves_a_spin_wait(tmp_path):
    # no fair yield there: the sleep(0) loop runs until the step limit
    with pytest.raises(ploom.exploration.IncompleteExplorationError):
        check(ts.spin_sleep_zero, tmp_path, timeouts="any", max_steps=300)


def test_config_refuses_an_unknown_model(tmp_path):
    with pytest.raises(ValueError, match="--timeouts"):
        check(ts.event_safety_net, tmp_path, timeouts="never")


def test_the_trace_records_the_model_and_replay_refuses_the_other(tmp_path):
    traces = {}
    for model in ("idle", "any"):
        exc = fails(ts.lock_times_out, tmp_path / model, timeouts=model)
        traces[model] = exc.statistics.trace
        trace = json.load(open(traces[model]))
        assert trace["config"]["timeouts"] == model
    # the idle run's timeout follows a jump of the clock, which the trace shows
    steps = json.load(open(traces["idle"]))["steps"]
    jumps = [s["clock_ns"] for s in steps if "clock_ns" in s]
    assert 2_000_000_000 in jumps or 1_000_000_000 in jumps, steps
    shown = subprocess.run([os.path.join(BIN, "ploom-show"), traces["idle"]],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "clock +1 s: acquire" in shown.stdout, shown.stdout
    for model, other in (("idle", "any"), ("any", "idle")):
        replay = subprocess.run([os.path.join(BIN, "ploom-replay"), f"--timeouts={other}",
                                 traces[model]],
                                capture_output=True, text=True, cwd=HERE, timeout=120)
        assert replay.returncode == 2, replay.stderr
        assert f"recorded under the time model {model}" in replay.stderr
        # its own model, or none said: the trace's
        for opts in ([f"--timeouts={model}"], []):
            replay = subprocess.run([os.path.join(BIN, "ploom-replay"), *opts, traces[model]],
                                    capture_output=True, text=True, cwd=HERE, timeout=120)
            assert replay.returncode == 1, replay.stderr


def test_yield_now_stays_a_plain_point(tmp_path):
    # REFERENCE.md's counts of flag_handoff (488 schedules, 3 without a
    # preemption) hold its choices under the idle model too
    import scenarios

    assert check(scenarios.flag_handoff, tmp_path, keep_going=True).schedules == 488


@pytest.mark.parametrize("search", SEARCHES)
def test_clock_reads_are_no_points_under_the_idle_model(tmp_path, search):
    # a read whose value no order of the other tasks' steps changes makes
    # no schedule of its own: as many as with no read at all
    plain = check(ts.no_reads_then_increment, tmp_path, **search).schedules
    assert check(ts.fifty_reads_then_increment, tmp_path, **search).schedules == plain
    assert check(ts.reads_around_a_jump, tmp_path, **search).complete


@pytest.mark.parametrize(("timeouts", "env"), [("any", {}), ("idle", {"PLOOM_CLOCK_READS": "points"})],
                         ids=["any", "idle-points"])
def test_clock_reads_are_points_under_the_stress_model(tmp_path, monkeypatch, timeouts, env):
    # there another task's sleep or timeout moves the clock while the
    # reader can run; PLOOM_CLOCK_READS=points, the differential tests'
    # reference, makes them points under the idle model too
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    plain = check(ts.no_reads_then_increment, tmp_path, timeouts=timeouts).schedules
    assert check(ts.one_read_then_increment, tmp_path, timeouts=timeouts).schedules > plain
