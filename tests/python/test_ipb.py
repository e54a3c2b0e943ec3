"""Config(search="ipb"): iterative preemption bounding, end to end.

The schedule counts of REFERENCE.md under ipb are test_check's
test_reference_counts (run under both orders); here: the first failure
has the fewest preemptions and is its own minimized trace, ipb never runs
more schedules to a bug than DFS rerun with the bounds 0, 1, 2, ... would,
workers, and what ipb refuses.

Every test writes its traces under pytest's tmp_path, never into the tree.
"""

import json
import os
import subprocess
import sys

import pytest

import ploom
import scenarios
from bank_copy import write_bank
from ploom.exploration import ModelCheckError

pytest_plugins = ["pytester"]


def search(scenario, tmp_path, **options):
    """Runs check() and returns the statistics, whether it passed or failed."""
    # the counts below are of ploom's operations: instrument=("-",) leaves
    # out the scenarios' plain state, which every search sees by default
    options.setdefault("instrument", ("-",))
    config = ploom.Config(trace_dir=str(tmp_path / "traces"), **options)
    try:
        return ploom.check(scenario, config)
    except ModelCheckError as exc:
        return exc.statistics


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def test_the_banks_bug_comes_with_one_preemption_and_needs_no_minimizing(tmp_path, capfd):
    with pytest.raises(ModelCheckError) as info:
        ploom.check(scenarios.bank_unlocked, ploom.Config(search="ipb", trace_dir=str(tmp_path)))
    stats = info.value.statistics
    assert stats.search == "ipb"
    assert stats.raw["minimal_by_construction"] is True
    original = load(info.value.original_trace)
    minimized = load(info.value.minimized_trace)
    assert original["preemptions"] == 1
    assert original["config"]["search"] == "ipb"
    # the minimized trace is the original: the same schedule, not searched for
    for key in ("choices", "preemptions", "steps", "outcome", "config", "scenario", "id"):
        assert minimized[key] == original[key], key
    assert minimized["minimized_from"] == 1
    assert "minimized_from" not in original
    assert "(1 -> 1 preemptions: the fewest by construction" in capfd.readouterr().err
    # 1 is the fewest: without a preemption every schedule passes
    assert ploom.check(scenarios.bank_unlocked, ploom.Config(max_preemptions=0)).schedules == 3
    # both traces replay the failure; a replay ignores the order
    for trace in (info.value.original_trace, info.value.minimized_trace):
        with pytest.raises(ModelCheckError):
            ploom.exploration.replay(trace)


def test_dfs_finds_the_bank_bug_with_more_preemptions_and_minimizes_it(tmp_path):
    # what ipb spares: DFS's first failure needs the minimizer
    with pytest.raises(ModelCheckError) as info:
        ploom.check(scenarios.bank_unlocked, ploom.Config(trace_dir=str(tmp_path)))
    stats = info.value.statistics
    assert stats.search == "dfs"
    assert "minimal_by_construction" not in stats.raw
    assert load(info.value.original_trace)["preemptions"] == 2
    assert load(info.value.minimized_trace)["preemptions"] == 1


# The failing scenarios, and the fewest preemptions of a failing schedule
FAILING = [
    ("bank_unlocked", 1),
    ("abba", 1),
    ("racy_counter2", 1),
    ("lock_order_bug", 0),
    ("half_done_twice", 2),
]


def dfs_rerun_until_failure(scenario, tmp_path):
    """The schedules of DFS with the bounds 0, 1, 2, ... one after another,
    to the first one that fails, and that bound: the searches alone, not
    the failure a search before them saved in the same folder."""
    total = 0
    for bound in range(10):
        stats = search(scenario, tmp_path, max_preemptions=bound, minimize=False, saved=False)
        total += stats.schedules
        if stats.failing:
            return total, bound
    raise AssertionError("no failure within 10 preemptions")


@pytest.mark.parametrize(("name", "fewest"), FAILING)
def test_ipb_reaches_the_first_failure_in_fewer_schedules_than_dfs_rerun_bound_by_bound(
    tmp_path, name, fewest
):
    scenario = getattr(scenarios, name)
    ipb = search(scenario, tmp_path, search="ipb", minimize=False)
    assert ipb.failing == 1
    assert load(ipb.trace)["preemptions"] == fewest
    rerun, bound = dfs_rerun_until_failure(scenario, tmp_path)
    assert bound == fewest
    # each level runs in the order of DFS with that bound: ipb runs what the
    # last of those runs to its failure, and nothing of the levels below twice
    if fewest == 0:
        assert ipb.schedules == rerun
    else:
        assert ipb.schedules < rerun


@pytest.mark.parametrize(("name", "fewest"), FAILING)
def test_with_two_workers_the_first_failure_still_has_the_fewest_preemptions(tmp_path, name, fewest):
    stats = search(getattr(scenarios, name), tmp_path, search="ipb", jobs=2)
    assert stats.failing == 1
    assert stats.raw["jobs"] == 2
    assert stats.raw["minimal_by_construction"] is True
    assert load(stats.trace)["preemptions"] == fewest


@pytest.mark.parametrize(
    ("name", "bound", "schedules", "failing"),
    [("abba", None, 194, 10), ("counter3", 1, 313, 0), ("half_done_twice", 2, 520, 2)],
)
def test_with_two_workers_ipb_runs_every_schedule_once(tmp_path, name, bound, schedules, failing):
    stats = search(getattr(scenarios, name), tmp_path, search="ipb", jobs=2, keep_going=True,
                   max_preemptions=bound)
    assert (stats.schedules, stats.failing, stats.complete) == (schedules, failing, True)


def test_the_bound_stops_the_levels(tmp_path):
    # half_done_twice fails with 2 preemptions only: with at most 1, ipb passes
    stats = ploom.check(scenarios.half_done_twice,
                        ploom.Config(search="ipb", max_preemptions=1, instrument=("-",),
                                     trace_dir=str(tmp_path)))
    assert (stats.schedules, stats.result, stats.max_preemptions) == (104, "pass", 1)


def test_ipb_with_dpor_is_refused_before_any_schedule_with_the_reason(tmp_path):
    config = ploom.Config(search="ipb", reduction="dpor", trace_dir=str(tmp_path / "traces"))
    with pytest.raises(ValueError) as info:
        ploom.check(scenarios.bank_unlocked, config)
    assert str(info.value) == (
        "ploom-explore: --search=ipb cannot be combined with --reduction=dpor: the reduction "
        "keeps one schedule of each class of equivalent ones, not always the one with the fewest "
        "preemptions, so the search by preemptions could miss the failure with the fewest; "
        "--reduction=dpor with --max-preemptions searches the classes within a bound"
    )
    assert not (tmp_path / "traces").exists()


def test_an_unknown_order_is_refused_naming_the_known_ones(tmp_path):
    with pytest.raises(ValueError) as info:
        ploom.check(scenarios.bank_unlocked, ploom.Config(search="sideways", trace_dir=str(tmp_path)))
    message = str(info.value)
    assert message.startswith("ploom-explore: unknown --search (dfs, ") or message.startswith(
        "ploom-explore: unknown --search (dfs or "
    ), message
    assert " ipb" in message
    assert message.endswith(") 'sideways'")


def test_the_marker_and_python_m_ploom_check_take_the_order(tmp_path, pytester):
    write_bank(tmp_path, "bank")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    result = subprocess.run(
        [sys.executable, "-m", "ploom", "check", "-q", "--search=ipb", "bank:scenario"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 1
    assert "minimized trace written to" in result.stderr
    assert "the fewest by construction, --search=ipb" in result.stderr
    write_bank(pytester.path, "bank")
    pytester.makepyfile(
        test_bank="""
        import pytest

        from bank import scenario


        @pytest.mark.ploom(search="ipb")
        def test_withdraw(ploom_check):
            ploom_check(scenario)
        """
    )
    outcome = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    outcome.assert_outcomes(failed=1)
    traces = sorted((pytester.path / ".ploom").glob("*-original.json"))
    assert len(traces) == 1
    assert load(traces[0])["config"]["search"] == "ipb"
    assert load(traces[0])["preemptions"] == 1

