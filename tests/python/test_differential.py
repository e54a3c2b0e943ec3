"""Partial-order reduction against plain DFS, end to end, on generated
programs: what DESIGN.md ("Beyond plain DFS") asks to show DPOR sound.

For each seed, progen.py writes a small random scenario.  The test runs
``ploom-explore -k`` on it with ``--reduction=none`` and with
``--reduction=dpor`` and asserts that both find the same SET of outcome
summaries (the statistics' "outcomes" array) and that DPOR explores no more
schedules; the first JOBS_SEEDS seeds (20) again with ``--reduction=dpor
-j 2``, whose two workers explore views of one search.  Every generated program ends by raising its final cell values,
so two schedules with different terminal states have different summaries,
and a failed assertion or a deadlock shows as itself.

DFS itself is checked against progen's model of the semantics: the number
of schedules, and (when there is an "outcomes" array) how many schedules
end in each outcome, exactly.  That part runs today on the first
MODEL_SEEDS seeds; the differential part is skipped, saying why, until
``ploom-explore`` has ``--reduction=dpor`` and writes "outcomes".

    PLOOM_DIFF_SEEDS=N    seeds to run (default 250); `make soak` runs 5000
    PLOOM_DIFF_START=S    the first seed (default 0)
    PLOOM_DIFF_REQUIRE=1  fail instead of skipping when a feature is missing
                          (`make soak` sets it: a soak that tests nothing fails)

A failing seed's program is shown by ``python tests/python/progen.py SEED``
and rerun alone by ``PLOOM_DIFF_START=SEED PLOOM_DIFF_SEEDS=1 pytest
tests/python/test_differential.py``.  The explorations run ahead of the
tests, as many at once as there are CPUs, in a session-wide pool.
"""

import concurrent.futures
import os
import shutil
import subprocess

import pytest

import progen
import testenv
from ploom._utility import find_utility

SEEDS = testenv.count("PLOOM_DIFF_SEEDS", 250)
START = testenv.start("PLOOM_DIFF_START")
REQUIRE = os.environ.get("PLOOM_DIFF_REQUIRE", "") not in ("", "0")
MODEL_SEEDS = min(SEEDS, 30)
# the first seeds again with DPOR on two workers (views of one search)
JOBS_SEEDS = min(SEEDS, 20)
# far more schedules than any program has (progen.MAX_SCHEDULES): an
# exploration that gets there is cut (exit 3) and fails, not left to run
LIMIT = 20 * max(progen.MAX_SCHEDULES.values())

DIFF_TEST = "test_dpor_finds_every_outcome_of_dfs"
JOBS_TEST = "test_dpor_on_two_workers_finds_every_outcome_of_dfs"
# the options of each mode a program is explored in
# (progen's model takes a timed acquire or join as the stress model does:
# always enabled, so every mode runs under timeouts="any"; primgen's time
# theme holds the reduction to DFS under the idle model)
MODES = {"none": ("--reduction=none", "--timeouts=any"), "dpor": ("--reduction=dpor", "--timeouts=any"),
         "dpor-j2": ("--reduction=dpor", "-j", "2", "--timeouts=any")}
MODEL_TEST = "test_dfs_explores_what_the_model_counts"


def _missing_features(folder):
    """Why the differential test cannot run yet, or None."""
    explore = find_utility("ploom-explore")
    missing = []
    usage = subprocess.run([explore, "--help"], capture_output=True, text=True, timeout=60).stdout
    if "dpor" not in usage:
        missing.append("ploom-explore has no --reduction=dpor (its --help does not mention dpor)")
    target = progen.write_program(START, folder)
    rc, stats, stderr = progen.explore(target, folder / "traces", "--reduction=none")
    if stats is None:
        pytest.fail(f"ploom-explore -k on progen's seed {START} exited {rc} with no statistics: {stderr}")
    if "outcomes" not in stats:
        missing.append('ploom-explore -k writes no "outcomes" array in its statistics')
    if not missing:
        return None
    return "; ".join(missing) + ": the differential test of DPOR against DFS cannot run"


class _Runner:
    """The explorations of the selected tests' seeds, run by a pool ahead
    of the tests that wait for them, in the order they were announced."""

    def __init__(self, folder):
        self.folder = folder
        self.pool = concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1)
        self.futures = {}

    def announce(self, seeds, reductions):
        for seed in seeds:
            for reduction in reductions:
                if (seed, reduction) not in self.futures:
                    self.futures[seed, reduction] = self.pool.submit(self._explore, seed, reduction)

    def _explore(self, seed, reduction):
        folder = self.folder / str(seed)
        folder.mkdir(exist_ok=True)
        target = progen.write_program(seed, folder)
        traces = folder / f"traces-{reduction}"
        result = progen.explore(target, traces, *MODES[reduction], limit=LIMIT)
        # the first failure's trace, which every program has: unread, and
        # thousands of them in a soak
        shutil.rmtree(traces, ignore_errors=True)
        return result

    def result(self, seed, reduction):
        """(exit status, statistics or None, stderr) of seed's program."""
        future = self.futures.get((seed, reduction))
        if future is None:  # a test the session did not announce
            future = self.futures[seed, reduction] = self.pool.submit(self._explore, seed, reduction)
        return future.result()

    def close(self):
        for future in self.futures.values():
            future.cancel()
        self.pool.shutdown(wait=True)


def _selected_seeds(session, name):
    return [
        item.callspec.params["seed"]
        for item in session.items
        if getattr(item, "originalname", None) == name and hasattr(item, "callspec")
    ]


@pytest.fixture(scope="session")
def runner(request, tmp_path_factory):
    """The one runner of the session; the model test's explorations are
    announced first, as the tests run in that order."""
    runner = _Runner(tmp_path_factory.mktemp("differential"))
    runner.announce(_selected_seeds(request.session, MODEL_TEST), ("none",))
    yield runner
    runner.close()


@pytest.fixture(scope="session")
def differential(request, runner, tmp_path_factory):
    """The runner, with the differential test's explorations announced, or
    a skip (a failure under PLOOM_DIFF_REQUIRE) saying what is missing."""
    missing = _missing_features(tmp_path_factory.mktemp("features"))
    if missing:
        if REQUIRE:
            pytest.fail(f"PLOOM_DIFF_REQUIRE is set, but {missing}")
        pytest.skip(missing)
    runner.announce(_selected_seeds(request.session, DIFF_TEST), ("none", "dpor"))
    runner.announce(_selected_seeds(request.session, JOBS_TEST), ("none", "dpor-j2"))
    return runner


def _outcomes(stats):
    """{summary: schedules} of the statistics' "outcomes" array, where each
    summary is listed once and the schedules add up to the total."""
    outcomes = stats["outcomes"]
    summaries = [o["summary"] for o in outcomes]
    assert len(set(summaries)) == len(summaries), f"an outcome is listed twice: {outcomes}"
    assert sum(o["schedules"] for o in outcomes) == stats["schedules"], (
        f"the outcomes' schedules do not add up to the {stats['schedules']} explored: {outcomes}"
    )
    return {o["summary"]: o["schedules"] for o in outcomes}


def _kinds(stats):
    return {o["summary"]: o["kind"] for o in stats["outcomes"]}


def _listing(counts, kinds=None):
    if not counts:
        return "    (none)"
    return "\n".join(
        f"    {n:6d}  {summary}" + (f"  [{kinds[summary]}]" if kinds else "") for summary, n in sorted(counts.items())
    )


def _fail_unless(condition, message):
    """Fails with message alone, without the assertion's source around it:
    the message shows everything there is to see."""
    if not condition:
        pytest.fail(message, pytrace=False)


def _complete(seed, reduction, result):
    """The statistics of a complete exploration (exit 0 or 1)."""
    rc, stats, stderr = result
    _fail_unless(
        stats is not None and rc in (0, 1) and stats["complete"],
        f"seed {seed}: ploom-explore -k {' '.join(MODES[reduction])} exited {rc}"
        f" ({'no statistics' if stats is None else 'complete: ' + str(stats['complete'])})\n"
        f"stderr:\n{stderr}\nprogram:\n{progen.program(seed)}",
    )
    return rc, stats


def _check_dfs(seed, stats):
    """DFS explores exactly the schedules the model counts, and (with an
    "outcomes" array) ends in each outcome as many times."""
    expected = progen.model(seed)
    rerun = f"python tests/python/progen.py {seed}; python tests/python/progen.py --model {seed}"
    _fail_unless(
        stats["schedules"] == sum(expected.values()),
        f"seed {seed}: DFS explored {stats['schedules']} schedules, the model counts {sum(expected.values())}"
        f" ({rerun})\nthe model's outcomes:\n{_listing(expected)}\nprogram:\n{progen.program(seed)}",
    )
    if "outcomes" in stats:
        found = _outcomes(stats)
        _fail_unless(
            found == expected,
            f"seed {seed}: DFS's outcomes differ from the model's ({rerun})\n"
            f"DFS:\n{_listing(found, _kinds(stats))}\nmodel:\n{_listing(expected)}\n"
            f"program:\n{progen.program(seed)}",
        )


@pytest.mark.parametrize("seed", range(START, START + MODEL_SEEDS))
def test_dfs_explores_what_the_model_counts(seed, runner):
    _, stats = _complete(seed, "none", runner.result(seed, "none"))
    _check_dfs(seed, stats)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(START, START + SEEDS))
def test_dpor_finds_every_outcome_of_dfs(seed, differential):
    _check_dpor(seed, differential, "dpor")


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(START, START + JOBS_SEEDS))
def test_dpor_on_two_workers_finds_every_outcome_of_dfs(seed, differential):
    _check_dpor(seed, differential, "dpor-j2")


def _check_dpor(seed, differential, mode):
    """DPOR explored in mode reaches exactly DFS's outcomes, each with its
    kind, in no more schedules."""
    rc_none, none = _complete(seed, "none", differential.result(seed, "none"))
    rc_dpor, dpor = _complete(seed, mode, differential.result(seed, mode))
    found = _outcomes(dpor)
    expected = _outcomes(none)
    _fail_unless(
        set(found) == set(expected),
        f"seed {seed}: DPOR found other outcomes than DFS"
        f" (python tests/python/progen.py {seed} shows the program)\n"
        f"only DFS:\n{_listing({s: n for s, n in expected.items() if s not in found}, _kinds(none))}\n"
        f"only DPOR:\n{_listing({s: n for s, n in found.items() if s not in expected}, _kinds(dpor))}\n"
        f"DFS, {none['schedules']} schedules:\n{_listing(expected, _kinds(none))}\n"
        f"DPOR, {dpor['schedules']} schedules:\n{_listing(found, _kinds(dpor))}\n"
        f"program:\n{progen.program(seed)}",
    )
    _fail_unless(
        _kinds(dpor) == _kinds(none),
        f"seed {seed}: an outcome has another kind under DPOR\n"
        f"DFS:\n{_listing(expected, _kinds(none))}\nDPOR:\n{_listing(found, _kinds(dpor))}",
    )
    _fail_unless(
        dpor["schedules"] <= none["schedules"],
        f"seed {seed}: DPOR explored {dpor['schedules']} schedules, DFS only {none['schedules']}\n"
        f"program:\n{progen.program(seed)}",
    )
    assert dpor["reduction"] == "dpor"
    assert rc_dpor == rc_none
    # and DFS, the reference, explored what the model says it must
    _check_dfs(seed, none)
