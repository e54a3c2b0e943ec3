"""The sampling searches, ploom.Config(search="pct" | "random"): drawn from a
seed, replayed by their choices alone, never a pass.

Every test writes its traces under pytest's tmp_path, never into the tree.
"""

import json
import os
import subprocess
import sys

import pytest

import ploom
import scenarios
from ploom.exploration import IncompleteExplorationError, ModelCheckError

BIN = os.path.dirname(sys.executable)


def sample(scenario, tmp_path, **options):
    """check() of a sample, which never returns: the ModelCheckError of its
    failure, or its IncompleteExplorationError."""
    config = ploom.Config(trace_dir=str(tmp_path / "traces"), minimize=False, **options)
    with pytest.raises((ModelCheckError, IncompleteExplorationError)) as info:
        ploom.check(scenario, config)
    return info.value


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


@pytest.mark.parametrize(
    "name, summary",
    [
        ("bank_unlocked", "builtins.AssertionError: the account is overdrawn"),
        ("abba", "deadlock"),
        ("racy_counter2", "builtins.AssertionError: lost update"),
    ],
)
def test_pct_with_depth_3_finds_the_failing_reference_scenarios(name, summary, tmp_path):
    exc = sample(getattr(scenarios, name), tmp_path, search="pct", seed=0, pct_depth=3, max_schedules=5000)
    assert isinstance(exc, ModelCheckError), exc
    assert exc.summary.startswith(summary)
    stats = exc.statistics
    assert stats.schedules <= 5000
    assert stats.raw["search"] == "pct"
    assert stats.raw["seed"] == 0
    assert stats.raw["pct_depth"] == 3
    trace = load(exc.original_trace)
    assert trace["config"]["search"] == "pct"
    assert trace["config"]["seed"] == 0
    assert trace["config"]["pct_depth"] == 3
    # depth 3: two change points, so at most two preemptions
    assert trace["preemptions"] <= 2


def test_the_same_seed_gives_the_same_schedules(tmp_path):
    runs = []
    for attempt in range(2):
        exc = sample(
            scenarios.bank_unlocked, tmp_path / str(attempt), search="pct", seed=4242, max_schedules=5000
        )
        assert isinstance(exc, ModelCheckError)
        trace = load(exc.original_trace)
        runs.append((exc.statistics.schedules, trace["choices"], [step["task"] for step in trace["steps"]]))
    assert runs[0] == runs[1]
    # a whole sample too: every outcome of 300 schedules, on two workers
    # (each takes every other schedule, whatever their timing)
    tallies = []
    for attempt in range(2):
        exc = sample(
            scenarios.bank_unlocked, tmp_path / f"k{attempt}", search="pct", seed=4242,
            max_schedules=300, keep_going=True, jobs=2,
        )
        assert exc.statistics.schedules == 300
        tallies.append(exc.statistics.raw["outcomes"])
    assert tallies[0] == tallies[1]
    assert tallies[0][1]["schedules"] > 0


@pytest.mark.parametrize("search", ["pct", "random"])
def test_a_samples_trace_replays_exactly_by_its_choices(search, tmp_path):
    exc = sample(scenarios.bank_unlocked, tmp_path, search=search, seed=7, max_schedules=5000)
    assert isinstance(exc, ModelCheckError)
    trace = load(exc.original_trace)
    # ploom-replay follows the recorded choices: no seed, no policy
    result = subprocess.run(
        [os.path.join(BIN, "ploom-replay"), "-q", exc.original_trace], capture_output=True, text=True
    )
    assert result.returncode == 1, result.stderr
    replayed = json.loads(result.stdout)
    assert replayed["choices"] == trace["choices"]
    assert [s["task"] for s in replayed["steps"]] == [s["task"] for s in trace["steps"]]
    assert replayed["outcome"]["summary"] == trace["outcome"]["summary"]
    with pytest.raises(ModelCheckError):
        ploom.exploration.replay(exc.original_trace)


def test_random_finds_the_bank_bug(tmp_path):
    exc = sample(scenarios.bank_unlocked, tmp_path, search="random", seed=3, max_schedules=5000)
    assert isinstance(exc, ModelCheckError)
    assert exc.summary == "builtins.AssertionError: the account is overdrawn"
    assert exc.statistics.raw["search"] == "random"
    assert exc.statistics.raw["seed"] == 3
    assert "pct_depth" not in exc.statistics.raw


def test_a_sample_without_a_failure_is_incomplete_never_a_pass(tmp_path):
    exc = sample(scenarios.bank_locked, tmp_path, search="pct", seed=9, max_schedules=200)
    assert isinstance(exc, IncompleteExplorationError)
    assert str(exc) == (
        "pct sample (seed 9, depth 3) incomplete: no failure in 200 schedules, stopped by the "
        "schedule limit (max_schedules=200); a sample is never a pass, since the schedules not "
        "drawn may fail"
    )
    raw = exc.statistics.raw
    assert (raw["result"], raw["complete"], raw["stopped_by"]) == ("incomplete", False, "max-schedules")
    assert (raw["search"], raw["seed"], raw["pct_depth"]) == ("pct", 9, 3)
    # a time limit alone stops it too
    exc = sample(scenarios.bank_locked, tmp_path, search="random", time_limit=0.5)
    assert isinstance(exc, IncompleteExplorationError)
    assert exc.statistics.stopped_by == "time-limit"
    assert exc.statistics.schedules > 0
    assert str(exc).startswith("random sample (seed 0) incomplete: no failure in ")


@pytest.mark.parametrize(
    "options, reason",
    [
        (
            {"search": "pct"},
            "--search=pct needs --max-schedules or --time-limit: a sample never completes the search",
        ),
        (
            {"search": "random", "max_schedules": 10, "reduction": "dpor"},
            "--search=random cannot be combined with --reduction=dpor: a sample draws its choices in "
            "the worker, where no partial-order reduction runs",
        ),
        (
            {"search": "pct", "max_schedules": 10, "max_preemptions": 1},
            "--search=pct cannot be combined with --max-preemptions: a pct schedule has at most "
            "--pct-depth minus 1 preemptions",
        ),
        ({"seed": 3}, "--seed needs --search=pct or --search=random"),
        ({"search": "random", "pct_depth": 2, "time_limit": 1}, "--pct-depth needs --search=pct"),
        ({"search": "bfs"}, "unknown --search (dfs, ipb, pct or random) 'bfs'"),
        (
            {"search": "pct", "pct_depth": 0, "max_schedules": 1},
            "invalid --pct-depth '0': not an integer from 1 to 1000",
        ),
        (
            {"search": "pct", "seed": 2**32, "max_schedules": 1},
            "invalid --seed '4294967296': not an integer from 0 to 4294967295",
        ),
    ],
)
def test_configs_ploom_explore_refuses_are_value_errors(options, reason):
    with pytest.raises(ValueError) as info:
        ploom.check(scenarios.bank_locked, ploom.Config(**options))
    assert str(info.value) == f"ploom-explore: {reason}"


def test_python_m_ploom_check_passes_the_sample_options_on(tmp_path):
    target = f"{scenarios.__file__}:bank_locked"
    result = subprocess.run(
        [sys.executable, "-m", "ploom", "check", "--search=random", "--seed=5", "-n", "20",
         f"--trace-dir={tmp_path}", target],
        capture_output=True, text=True,
    )
    assert result.returncode == 3, result.stderr


def test_the_spinlock_s_bug_needs_two_preemptions(tmp_path):
    # The spinlock's failure needs two preemptions of runnable threads
    # (scenarios.spinlock says why): a search bounded to one misses it
    # and one bounded to two finds it
    stats = ploom.check(scenarios.spinlock, ploom.Config(max_preemptions=1, trace_dir=str(tmp_path)))
    assert stats.complete and stats.failing == 0
    with pytest.raises(ModelCheckError):
        ploom.check(scenarios.spinlock, ploom.Config(max_preemptions=2, trace_dir=str(tmp_path)))


# pct with depth d has at most d - 1 preemptions in a schedule, since it
# switches away from a task that can go on only at one of its d - 1 change
# points (a new task's rank, or a release that enables a task of higher
# priority, never preempts: lib/policy.h).  So depth 2, whatever its seed,
# never finds the spinlock's bug (above: it needs two), while depth 3 does.
# soak: seeds 1 and 2, another 1,000 samples of depth 2 each
@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.soak), pytest.param(2, marks=pytest.mark.soak)])
def test_pct_depth_2_never_finds_a_bug_that_needs_two_preemptions_where_depth_3_does(tmp_path, seed):
    exc = sample(scenarios.spinlock, tmp_path, search="pct", pct_depth=2, seed=seed, max_schedules=1000)
    assert isinstance(exc, IncompleteExplorationError), exc
    assert exc.statistics.schedules == 1000
    exc = sample(scenarios.spinlock, tmp_path, search="pct", pct_depth=3, seed=seed, max_schedules=5000)
    assert isinstance(exc, ModelCheckError), exc
    assert exc.summary == "builtins.AssertionError: two threads in the critical section"
    assert load(exc.original_trace)["preemptions"] == 2
