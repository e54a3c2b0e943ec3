"""Plain state as operations: the hooks of ploom._ploom that instrumented
code calls (ploom._instrument writes those calls; the scenarios here call
the hooks by hand, so that these tests hold the scheduler side alone).

Each hook is a scheduling point inside a schedule once a second task
exists, a read or a write of plain#N, and the plain operation outside one.
The scenarios are in plain_scenarios.py.
"""

import json
import operator
import re
import subprocess
import textwrap

import pytest

import ploom
import progen
import testenv
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
from ploom._utility import find_utility
from ploom.exploration import ModelCheckError


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
        [find_utility("ploom-show"), path], capture_output=True, text=True, check=False
    )
    assert "read Stats.hits -> 0" in shown.stdout
    assert "write Stats.hits -> 1" in shown.stdout
    assert "read Stats.hits" in shown.stdout.split("race", 1)[1].splitlines()[0]
    replayed = subprocess.run(
        [find_utility("ploom-replay"), path], capture_output=True, text=True, check=False
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
    with those sites as points, and finds the lost update.  (Depth first,
    chosen: the default turns to the reduction there, under which every
    site is a point from the start.)"""
    with pytest.raises(ModelCheckError) as info:
        check(hits_unlocked_sites, tmp_path, reduction="none")
    assert info.value.summary == "builtins.AssertionError: 1"
    trace = json.loads(open(info.value.minimized_trace).read())
    assert trace["config"]["plain_points"] == ["plain_scenarios:0", "plain_scenarios:1"]
    replayed = subprocess.run(
        [find_utility("ploom-replay"), info.value.minimized_trace],
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

PLAIN_DIFF_SEEDS = testenv.count("PLOOM_PLAIN_DIFF_SEEDS", 12)
PLAIN_DIFF_START = testenv.start("PLOOM_PLAIN_DIFF_START")


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
    plain state shared; under the reduction every site is a point (no read of
    an attribute of an object is quiet): they
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


# --- quiet reads under the reduction, against plain DFS --------------------------

def quiet_program(seed):
    """progen's program of SEED with its SharedCells made module globals
    holding ints, read and written through the global and the module
    attribute hooks (both one plain object), and each thread opening with
    reads that are noise: sys.float_info, its .min, a super() lookup, a
    module's class.  Under the reduction every read of an int global is
    quiet (no point until a write by another task shows it shared), so the
    outcomes of the two searches agree only if watching those reads finds
    every rebinding that matters."""
    import random

    rng = random.Random(seed)
    source = progen.program(seed, "scenario")
    sites = []

    def site(text):
        sites.append(text)
        return f"_S + {len(sites) - 1}"

    def read(m):
        if rng.random() < 0.5:
            return f'_gg(globals(), "G{m[1]}", {site("G" + m[1])})'
        return f'_ga(_M, "G{m[1]}", {site("_M.G" + m[1])})'

    def write(m):
        if rng.random() < 0.5:
            return f'{m[1]}_sg(globals(), "G{m[2]}", {m[3]}, {site("G" + m[2] + " =")})'
        return f'{m[1]}_sa(_M, "G{m[2]}", {m[3]}, {site("_M.G" + m[2] + " =")})'

    noise = [
        lambda: f'_ga(_sys, "float_info", {site("sys.float_info")})',
        lambda: f'_ga(_ga(_sys, "float_info", {site("sys.float_info")}), "min", {site("float_info.min")})',
        lambda: f'_ca(_Sub(), "get", {site("_Sub().get")})',
        lambda: f'_ga(_M, "_Base", {site("_M._Base")})',
    ]
    super_site = site("super().get")
    lines = []
    for line in source.splitlines():
        line = re.sub(r"^(\s*)c(\d) = ploom\.SharedCell\(0\)$", r'\1globals()["G\2"] = 0', line)
        line = re.sub(r"^(\s*)c(\d)\.write\((.*)\)$", write, line)
        line = re.sub(r"\bc(\d)\.read\(\)", read, line)
        lines.append(line)
        opening = re.match(r"^(\s*)def t\d\(k\):$", line)
        if opening:
            for make in rng.sample(noise, rng.randint(1, len(noise))):
                lines.append(f"{opening[1]}    {make()}")
    header = textwrap.dedent(f"""
        import sys as _sys

        from ploom import _ploom as _p

        _ga, _sa, _gg, _sg, _ca = _p._i_getattr, _p._i_setattr, _p._i_getglobal, _p._i_setglobal, _p._i_callattr
        _M = _sys.modules[__name__]


        class _Base:
            def get(self):
                return 1


        class _Sub(_Base):
            def get(self):
                return _ca(super(), "get", {super_site}) + 1


        _S = _p._i_sites("quiet_prog", __file__, {tuple((i, 0, t) for i, t in enumerate(sites))!r})
        """)
    return header + "\n".join(lines) + "\n", len(sites)


@pytest.mark.parametrize(
    "seed", [*range(PLAIN_DIFF_START, PLAIN_DIFF_START + PLAIN_DIFF_SEEDS), *SOAK_SEEDS]
)
def test_dpor_with_quiet_reads_finds_every_outcome_of_dfs(tmp_path, seed):
    """The reduction with quiet reads of module globals and noise reads
    reaches the outcomes of depth first, which watches every site (all of
    them when depth first completes, else those it found within its limit:
    a failing step's watched sites become points, so the noise at the end
    of a task can multiply its schedules); the noise makes no point (the
    reduction's deepest schedule is no deeper than with PLOOM_QUIET_READS=0,
    which makes every read a point)."""
    source, nsites = quiet_program(seed)
    assert nsites and "SharedCell" not in source
    path = tmp_path / f"quiet_{seed}.py"
    path.write_text(source)
    found = {}
    for mode, env in (("none", {}), ("dpor", {}), ("loud", {"PLOOM_QUIET_READS": "0"})):
        reduction = "none" if mode == "none" else "dpor"
        rc, stats, stderr = progen.explore(
            f"{path}:scenario", tmp_path / "traces", f"--reduction={reduction}", "--instrument=-", limit=20000,
            env=env,
        )
        assert stats is not None and rc in (0, 1), stderr
        assert stats["complete"] or mode == "none", stats
        found[mode] = stats
    outcomes = {r: {o["summary"] for o in s["outcomes"]} for r, s in found.items()}
    assert outcomes["loud"] == outcomes["dpor"]
    if found["none"]["complete"]:
        assert outcomes["dpor"] == outcomes["none"]
    else:
        assert not found["none"]["outcomes_truncated"]
        assert outcomes["none"] <= outcomes["dpor"]
    assert found["dpor"]["max_depth"] <= found["loud"]["max_depth"]


NOISY = '''
import sys
import threading

LIMIT = 10


class Base:
    def get(self):
        return 1


class Sub(Base):
    def get(self):
        return super().get() + 1


def work(out):
    out.append((sys.float_info.min, LIMIT, Sub().get()))


def run(*targets):
    out = []
    ts = [threading.Thread(target=t, args=(out,)) for t in targets]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out


def noise():
    assert len(run(work, work)) == 2


def rebind(out):
    global LIMIT
    LIMIT = 11


def rebound():
    out = run(work, rebind)
    assert out[0][1] == 10, out
'''


def test_noise_reads_make_no_point_and_a_rebound_constant_still_races(tmp_path):
    """Instrumented for real, under the reduction: reading sys.float_info,
    its .min and a super() method makes no step (the deepest schedule is
    shallower than with every read a point), and a module constant that
    another task rebinds is still found read after the rebinding."""
    (tmp_path / "noisy.py").write_text(NOISY)
    found = {}
    for name, env in (("quiet", {}), ("loud", {"PLOOM_QUIET_READS": "0"})):
        for scenario in ("noise", "rebound"):
            rc, stats, stderr = progen.explore(
                f"{tmp_path / 'noisy.py'}:{scenario}", tmp_path / "traces", "--reduction=dpor", "--patch=noisy",
                env={**env, "PYTHONPATH": str(tmp_path)},
            )
            assert stats is not None, stderr
            found[name, scenario] = (rc, stats)
    assert found["quiet", "noise"][0] == 0 and found["loud", "noise"][0] == 0
    assert found["quiet", "noise"][1]["max_depth"] < found["loud", "noise"][1]["max_depth"]
    for name in ("quiet", "loud"):
        rc, stats = found[name, "rebound"]
        assert rc == 1 and "AssertionError" in stats["failure"]["summary"], stats
