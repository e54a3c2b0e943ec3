"""Plain state as operations: the hooks of ploom._ploom that instrumented
code calls (ploom._instrument writes those calls; the scenarios here call
the hooks by hand, so that these tests hold the scheduler side alone).

Each hook is a scheduling point inside a schedule once a second task
exists, a read or a write of plain#N, and the plain operation outside one.
The scenarios are in plain_scenarios.py.
"""

import json
import operator
import os
import re
import subprocess
import textwrap

import pytest

import ploom
import progen
from plain_scenarios import (
    close_twice,
    cm,
    code_baseline,
    code_is_not_state,
    da,
    deque_and_iteration,
    dg,
    di,
    ga,
    gg,
    gi,
    global_counter,
    hits_locked,
    hits_unlocked,
    hits_unlocked_sites,
    io,
    it,
    list_appends,
    missing_runs_code,
    own_work_plain,
    own_work_sites,
    private_work,
    rd,
    sa,
    sg,
    si,
    view_iteration,
)
from ploom.exploration import ModelCheckError, _find_utility


def check(scenario, tmp_path, **kw):
    # no module instrumented, not even the scenario's under dpor: the hooks
    # called by hand are the only plain operations, and the scheduler side
    # is tested alone
    kw.setdefault("instrument", ("-",))
    return ploom.check(scenario, ploom.Config(trace_dir=str(tmp_path), **kw))


def test_outside_a_schedule_the_hooks_are_the_plain_operations():
    class C:
        pass

    c = C()
    assert sa(c, "x", 1, 0) is None and ga(c, "x", 0) == 1
    assert da(c, "x", 0) is None and not hasattr(c, "x")
    d = {}
    si(d, "k", [1], 0)
    assert gi(d, "k", 0) == [1]
    assert cm(gi(d, "k", 0), "append", 0, 2) is None and d["k"] == [1, 2]
    assert cm(d, "get", 0, "zz", 5) == 5
    assert cm(lst0 := [3, 1], "sort", 0, reverse=False) is None and lst0 == [1, 3]
    di(d, "k", 0)
    assert d == {}
    lst = [1, 2]
    assert rd(lst, 0) is lst
    assert list(it(lst, 0)) == [1, 2]
    assert io(operator.iadd, lst, [3], 0) is lst and lst == [1, 2, 3]
    g = {"__name__": "m"}
    sg(g, "V", 3, 0)
    assert gg(g, "V", 0) == 3 and gg(g, "len", 0) is len
    dg(g, "V", 0)
    with pytest.raises(NameError):
        gg(g, "V", 0)
    with pytest.raises(NameError):
        dg(g, "V", 0)
    with pytest.raises(AttributeError):
        ga(c, "missing", 0)
    with pytest.raises(KeyError):
        gi(d, "missing", 0)
    with pytest.raises(TypeError):
        ga(c)


def test_a_dict_entry_that_decides_the_operations_fails_under_the_reduction(tmp_path):
    """The reduction must not prune the order where both tasks see the
    entry: with the entry a plain dict it used to pass in 1 schedule."""
    with pytest.raises(ModelCheckError) as info:
        check(close_twice, tmp_path, reduction="dpor")
    assert "returned 2 times" in info.value.summary
    with pytest.raises(ModelCheckError):
        check(close_twice, tmp_path)


def test_an_unlocked_attribute_increment_fails_and_its_locked_twin_passes(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        check(hits_unlocked, tmp_path, reduction="dpor")
    assert info.value.summary == "builtins.AssertionError: 1"
    with pytest.raises(ModelCheckError):
        check(hits_unlocked, tmp_path)
    stats = check(hits_locked, tmp_path, reduction="dpor")
    assert stats.complete and stats.schedules <= 6


@pytest.mark.parametrize("reduction", [None, "dpor"])
def test_a_read_whose_own_code_reaches_points_records_no_value_on_their_steps(tmp_path, reduction):
    # the subscript's point is taken, then __missing__ reaches the points
    # of misses: the value the subscript read belongs to none of them, and
    # recording it on one was a second value for a step
    stats = check(missing_runs_code, tmp_path, reduction=reduction)
    assert stats.complete and stats.failing == 0 and stats.schedules > 1


def test_the_trace_names_plain_state_and_replays(tmp_path):
    with pytest.raises(ModelCheckError) as info:
        check(hits_unlocked, tmp_path, reduction="dpor")
    path = info.value.minimized_trace or info.value.trace
    trace = json.loads(open(path).read())
    names = {o["object"]: o["name"] for o in trace["objects"]}
    assert "Stats.hits" in names.values()
    plain = [s for s in trace["steps"] if (s["object"] or "").startswith("plain#")]
    assert {s["op"] for s in plain} == {"read", "write"}
    assert all(s["where"]["function"] == "work" for s in plain)
    assert any(s.get("value") == "0" for s in plain if s["op"] == "read")
    shown = subprocess.run(
        [_find_utility("ploom-show"), path], capture_output=True, text=True, check=False
    )
    assert "read Stats.hits -> 0" in shown.stdout
    assert "write Stats.hits -> 1" in shown.stdout
    assert "read Stats.hits" in shown.stdout.split("race", 1)[1].splitlines()[0]
    replayed = subprocess.run(
        [_find_utility("ploom-replay"), path], capture_output=True, text=True, check=False
    )
    assert replayed.returncode == 1, replayed.stderr
    assert "reproduced" in replayed.stderr


@pytest.mark.parametrize(
    "scenario", [list_appends, deque_and_iteration, global_counter, view_iteration],
    ids=lambda f: f.__name__,
)
def test_containers_and_globals_are_shared_state(tmp_path, scenario):
    """Each fails in some order, which the reduction must not prune."""
    with pytest.raises(ModelCheckError):
        check(scenario, tmp_path, reduction="dpor")


def test_method_lookups_and_module_functions_are_no_points(tmp_path):
    """Reading s.lock is state (an instance attribute), a point; looking up
    its acquire and release, and ploom.SharedCell, is code, no point."""
    hooked = check(code_is_not_state, tmp_path)
    baseline = check(code_baseline, tmp_path)
    assert hooked.complete and baseline.complete
    assert hooked.schedules == baseline.schedules


def test_independent_plain_work_adds_no_schedule_under_the_reduction(tmp_path):
    a = check(private_work, tmp_path, reduction="dpor")
    assert a.complete and a.schedules == 1


def test_a_watched_site_becomes_a_point_once_tasks_share_what_it_touches(tmp_path):
    """The sites start as no points; the first schedule where two tasks
    touch s.hits, one writing, ends in refine and the search starts again
    with those sites as points, and finds the lost update.  (Depth first:
    under the reduction every site is a point from the start.)"""
    with pytest.raises(ModelCheckError) as info:
        check(hits_unlocked_sites, tmp_path)
    assert info.value.summary == "builtins.AssertionError: 1"
    trace = json.loads(open(info.value.minimized_trace).read())
    assert trace["config"]["plain_points"] == ["plain_scenarios:0", "plain_scenarios:1"]
    replayed = subprocess.run(
        [_find_utility("ploom-replay"), info.value.minimized_trace],
        capture_output=True, text=True, check=False,
    )
    assert "reproduced" in replayed.stderr


@pytest.mark.parametrize("reduction", [None, "dpor"])
def test_work_on_a_tasks_own_objects_adds_no_schedule(tmp_path, reduction):
    """Two tasks, each 20,000 appends and stores on the list and dict it
    made in the same step: the same schedules and verdict as the same work
    uninstrumented, under the reduction (where every site is a point) too."""
    hooked = check(own_work_sites, tmp_path, reduction=reduction)
    plain = check(own_work_plain, tmp_path, reduction=reduction)
    assert hooked.complete and plain.complete
    assert hooked.schedules == plain.schedules


# --- the reduction against plain DFS on generated programs of plain state ---

PLAIN_DIFF_SEEDS = int(os.environ.get("PLOOM_PLAIN_DIFF_SEEDS", "12"))
PLAIN_DIFF_START = int(os.environ.get("PLOOM_PLAIN_DIFF_START", "0"))


def plain_program(seed):
    """progen's program of SEED with its SharedCells made plain state: an
    attribute of an object of its own, read and written through the hooks
    at a site of its own per place in the source, each watched until the
    search finds tasks sharing what it touches."""
    source = progen.program(seed, "scenario")
    sites = []

    def site(text):
        sites.append(text)
        return f"_S + {len(sites) - 1}"

    def write(m):
        return f'{m[1]}_sa({m[2]}, "v", {m[3]}, {site(m[2] + ".v =")})'

    lines = []
    for line in source.splitlines():
        line = re.sub(r"ploom\.SharedCell\(0\)", "_Cell()", line)
        line = re.sub(r"^(\s*)(c\d)\.write\((.*)\)$", write, line)
        line = re.sub(r"\b(c\d)\.read\(\)", lambda m: f'_ga({m[1]}, "v", {site(m[1] + ".v")})', line)
        lines.append(line)
    header = textwrap.dedent(f"""
        from ploom import _ploom as _p
        _ga, _sa = _p._i_getattr, _p._i_setattr


        class _Cell:
            def __init__(self):
                self.v = 0


        _S = _p._i_sites("plain_prog", __file__, {tuple((i, 0, t) for i, t in enumerate(sites))!r})
        """)
    return header + "\n".join(lines) + "\n", len(sites)


SOAK_SEEDS = [
    pytest.param(seed, marks=pytest.mark.soak)
    for seed in range(PLAIN_DIFF_START + PLAIN_DIFF_SEEDS, PLAIN_DIFF_START + PLAIN_DIFF_SEEDS + 300)
]


@pytest.mark.parametrize(
    "seed", [*range(PLAIN_DIFF_START, PLAIN_DIFF_START + PLAIN_DIFF_SEEDS), *SOAK_SEEDS]
)
def test_dpor_finds_every_outcome_of_dfs_on_plain_state(tmp_path, seed):
    """Depth first starts with every site watched and refines as it finds
    plain state shared; under the reduction every site is a point: they
    reach the same outcomes, DPOR in no more schedules.  PLOOM_PLAIN_DIFF_SEEDS / _START choose the seeds (make soak
    runs more)."""
    source, nsites = plain_program(seed)
    assert nsites and "SharedCell" not in source
    path = tmp_path / f"plain_{seed}.py"
    path.write_text(source)
    found = {}
    for reduction in ("none", "dpor"):
        rc, stats, stderr = progen.explore(
            f"{path}:scenario", tmp_path / "traces", f"--reduction={reduction}", "--instrument=-", limit=20000
        )
        assert stats is not None and rc in (0, 1), stderr
        assert stats["complete"], stats
        found[reduction] = stats
    outcomes = {r: {o["summary"] for o in s["outcomes"]} for r, s in found.items()}
    assert outcomes["dpor"] == outcomes["none"]
    assert found["dpor"]["schedules"] <= found["none"]["schedules"]
