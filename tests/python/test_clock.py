"""ploom's virtual clock (pyext/clock.c): time.time, time.monotonic,
time.perf_counter and time.sleep in the worker, timed waits that advance
it, its dependence under partial-order reduction, and exact replay.

The scenarios are in clock_scenarios.py."""

import json
import os
import subprocess
import sys
import time

import pytest

import clock_scenarios as cs
import ploom
from ploom.exploration import ModelCheckError

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.dirname(sys.executable)


def explore(scenario, tmp_path, reduction, **options):
    """check()'s statistics, whether the scenario passed or failed."""
    config = ploom.Config(trace_dir=str(tmp_path / f"traces-{reduction}"), reduction=reduction,
                          **options)
    try:
        return ploom.check(scenario, config)
    except ModelCheckError as exc:
        return exc.statistics


def outcomes(target, tmp_path, reduction, timeouts="idle"):
    """The set of outcome summaries of a complete -k exploration under the
    time model timeouts, and the statistics."""
    result = subprocess.run(
        [os.path.join(BIN, "ploom-explore"), "-k", "-q", "--no-minimize",
         f"--trace-dir={tmp_path / ('k-' + reduction + '-' + timeouts)}",
         f"--reduction={reduction}", f"--timeouts={timeouts}", target],
        capture_output=True, text=True, timeout=300, cwd=HERE,
    )
    assert result.returncode in (0, 1), result.stderr
    stats = json.loads(result.stdout)
    assert stats["complete"], stats
    return {o["summary"] for o in stats["outcomes"]}, stats


@pytest.mark.parametrize("reduction", ["none", "dpor"])
def test_a_sleep_advances_the_clock_and_never_sleeps(tmp_path, reduction):
    # ten seconds of sleeps in each schedule: a real sleep would take them
    started = time.monotonic()
    stats = explore(cs.sleeps_five_seconds, tmp_path, reduction)
    assert stats.result == "pass" and stats.complete, stats
    assert time.monotonic() - started < 4.0


@pytest.mark.parametrize("reduction", ["none", "dpor"])
def test_a_deadline_loop_on_monotonic_ends(tmp_path, reduction):
    # the waiter's Condition.wait(remaining) times out, the clock passes
    # the deadline, and the loop ends: every schedule completes
    started = time.monotonic()
    stats = explore(cs.deadline_loop, tmp_path, reduction, max_steps=2000)
    assert stats.result == "pass" and stats.complete, stats
    assert stats.schedules > 1
    assert time.monotonic() - started < 20.0


def test_a_deadline_loop_needs_the_timeout_to_advance_the_clock(tmp_path):
    # the same loop bounded by steps instead: it ends only because the
    # timed-out wait moved the clock past the deadline in one step
    stats = explore(cs.deadline_loop, tmp_path, "dpor", max_steps=60)
    assert stats.result == "pass" and stats.complete, stats


@pytest.mark.parametrize("reduction", ["none", "dpor"])
@pytest.mark.parametrize("scenario", [cs.read_races_with_sleep, cs.read_races_with_timeout])
def test_a_clock_read_racing_with_an_advance_is_found(tmp_path, reduction, scenario):
    # the stress model: the sleep or the timeout may end before B reads
    with pytest.raises(ModelCheckError) as info:
        ploom.check(scenario, ploom.Config(trace_dir=str(tmp_path), reduction=reduction,
                                           timeouts="any"))
    assert "read the clock after" in str(info.value)


@pytest.mark.parametrize("reduction", ["none", "dpor"])
@pytest.mark.parametrize("scenario", [cs.read_races_with_sleep, cs.read_races_with_timeout])
def test_under_the_idle_model_a_read_comes_before_any_deadline(tmp_path, reduction, scenario):
    # B can run, so the clock stands still until it has read it
    stats = explore(scenario, tmp_path, reduction)
    assert stats.result == "pass" and stats.complete, stats


@pytest.mark.parametrize("scenario", [
    "read_races_with_sleep",
    "read_races_with_timeout",
    # its DFS is the longest of these; read_races_with_sleep holds the same
    # fact (sleeps and a clock read) in make check, and the test below that
    # the reduction sees every sum
    pytest.param("two_sleepers_and_a_reader", marks=pytest.mark.soak),
    "timeouts_and_reads",
    "queue_get_times_out_once",
    "joins_a_sleeper",
    "deadline_loop",
    "queue_get_deadline",
    "queue_put_deadline",
    "wait_for_what_is_left",
    "wait_for_deadline_passed",
    "semaphore_what_is_left",
])
@pytest.mark.parametrize("timeouts", ["idle", "any"])
def test_dpor_reaches_the_outcomes_of_dfs_with_a_clock(tmp_path, scenario, timeouts):
    target = f"clock_scenarios.py:{scenario}"
    dfs, dfs_stats = outcomes(target, tmp_path, "none", timeouts)
    dpor, dpor_stats = outcomes(target, tmp_path, "dpor", timeouts)
    assert dpor == dfs
    assert dpor_stats["schedules"] <= dfs_stats["schedules"]


# What CPython's code reaches on ploom's clock under the stress model, in
# which a sleep and a timeout may end at any step, worked out by hand from
# Lib/threading.py and Lib/queue.py: a sleep of the other task may come
# before, between or after the waiter's readings of the clock, or during
# its wait.  The first outcome of each is the one only a kept deadline
# reaches: Empty or Full at once, the sleep having used up the timeout
# between endtime's reading and the remaining's; a waiter woken for nothing
# waiting for what is left of its timeout, or, past it, not again.
@pytest.mark.parametrize(("scenario", "expected"), [
    ("queue_get_deadline", {"Empty after 2.0", "Empty after 3.0", "late after 2.0", "late after 3.0"}),
    ("queue_put_deadline", {"Full after 2.0", "Full after 3.0", "put after 2.0", "put after 3.0"}),
    ("wait_for_what_is_left", {"False after 1.0", "False after 1.5"}),
    ("wait_for_deadline_passed", {"False after 2.0", "False after 3.0"}),
    ("semaphore_what_is_left", {"False after 1.0", "False after 1.5", "True after 0.5", "True after 1.5"}),
])
def test_timed_waits_keep_cpythons_deadline_on_ploom_clock(tmp_path, scenario, expected):
    found, _ = outcomes(f"clock_scenarios.py:{scenario}", tmp_path, "none", "any")
    assert found == {f"builtins.AssertionError: {e}" for e in expected}


def test_two_sleepers_and_a_reader_see_every_sum(tmp_path):
    found, _ = outcomes("clock_scenarios.py:two_sleepers_and_a_reader", tmp_path, "dpor", "any")
    seen = {s.split("saw ")[1] for s in found if "saw" in s}
    assert seen == {"0.0", "1.0", "2.0", "3.0"}, found


@pytest.mark.parametrize("scenario", [cs.each_timed_wait_advances_once, cs.import_clock,
                                      cs.queue_get_times_out_once])
def test_each_timed_wait_that_times_out_advances_the_clock_once(tmp_path, scenario):
    stats = explore(scenario, tmp_path, "none")
    assert stats.result == "pass" and stats.complete, stats


def test_a_trace_with_clock_reads_replays_exactly(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(cs.read_races_with_sleep, ploom.Config(trace_dir=str(tmp_path),
                                                           timeouts="any"))
    path = info.value.statistics.trace
    trace = json.load(open(path))
    reads = [s for s in trace["steps"] if s["op"] == "read" and s["object"] == "clock"]
    sleeps = [s for s in trace["steps"] if s["op"] == "sleep"]
    assert reads and reads[-1]["value"] == "1003.5", reads
    assert sleeps and sleeps[0]["object"] == "clock" and sleeps[0]["value"] == "1003.5"
    replay = subprocess.run([os.path.join(BIN, "ploom-replay"), path], capture_output=True,
                            text=True, cwd=HERE, timeout=120)
    assert replay.returncode == 1, replay.stderr
    shown = subprocess.run([os.path.join(BIN, "ploom-show"), path], capture_output=True,
                           text=True, timeout=60)
    assert "read clock -> 1003.5" in shown.stdout
    assert "sleep clock -> 1003.5" in shown.stdout
    # a trace whose clock read another time is not the run it replays
    reads[-1]["value"] = "1002.5"
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(trace))
    replay = subprocess.run([os.path.join(BIN, "ploom-replay"), str(forged)],
                            capture_output=True, text=True, cwd=HERE, timeout=120)
    assert replay.returncode == 4, replay.stderr
    assert "read clock -> 1002.5, got task" in replay.stderr
    assert "read clock -> 1003.5" in replay.stderr


def test_the_worker_keeps_the_real_clock_for_threading():
    # threading's own timed waits really wait, so its deadline loops need
    # the real clock; scenarios' time.* is the virtual one
    code = (
        "import sys, time; from ploom import _worker; _worker._virtual_time(); "
        "import threading; from ploom import _ploom; "
        "assert time.monotonic is _ploom.clock_monotonic; "
        "assert threading._time is not _ploom.clock_monotonic; "
        "t0 = time.monotonic(); time.sleep(100); "
        "assert time.monotonic() - t0 == 100.0"
    )
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    assert time.monotonic() - started < 50
