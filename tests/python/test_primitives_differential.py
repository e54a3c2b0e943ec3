"""The partial-order reduction against plain DFS on generated programs over
ploom's primitives and over plain state (primgen.py): their one-step waits
(a Condition's, an Event's, a Semaphore's, a queue's) must not hide an
outcome, nor may plain state of three tasks or more, and two workers must
find what one finds.  The odd seeds' workers come from a worker template,
as ploom.check()'s do, the even seeds' from fresh interpreters.

For each seed, DFS, the reduction and the reduction on two workers run
with -k; the reduction must complete, its two runs reach the same set of
outcome summaries (each program raises its final state, so different
terminal states differ), and when plain DFS completes within
PLOOM_PRIM_LIMIT schedules, exactly its set, in no more schedules.  Plain
DFS of plain state makes a point of every access, far too many schedules
for three tasks: there DFS runs within a preemption bound
(primgen.DFS_BOUND), whose outcomes the reduction must all reach.  A
program too big for the limit is counted, not compared; at least half the
seeds must be compared, or the test fails: a differential test that
compares nothing must not pass.

    PLOOM_PRIM_SEEDS=N   seeds (default 16); `make soak` runs 1000
    PLOOM_PRIM_START=S   the first seed (default 0)
    PLOOM_PRIM_LIMIT=L   plain DFS's schedules at most (default 1500; soak 5000)

A failing seed's program is printed by ``python tests/python/primgen.py SEED``.
"""

import collections
import concurrent.futures
import json
import os
import subprocess
import sys

import pytest

import primgen
import testenv

SEEDS = testenv.count("PLOOM_PRIM_SEEDS", 16)
# programs of primgen's time theme, under the idle time model (the default)
TIME_SEEDS = testenv.count("PLOOM_PRIM_TIME_SEEDS", 12)
START = testenv.start("PLOOM_PRIM_START")
LIMIT = testenv.count("PLOOM_PRIM_LIMIT", 1500)
# the modes each program is explored in, and the limit of each
MODES = {
    "none": ("--reduction=none",),
    "dpor": ("--reduction=dpor",),
    "dpor-j2": ("--reduction=dpor", "-j", "2"),
}
# the time programs' reference too: plain DFS with every clock read a
# scheduling point, as before reads became free under the idle model
POINTS = "none-points"
POINTS_ENV = {"PLOOM_CLOCK_READS": "points"}


def _explore(folder, target, mod, options, limit=None, env=None, template=False):
    """ploom-explore -k on the module target in folder, with env added to
    the environment: (exit status, statistics or None, stderr).  With
    template, its workers come from this process's worker template, as
    ploom.check()'s do, else from fresh interpreters: the seeds take
    turns, so that both ways meet every shape."""
    from ploom import _template
    from ploom._utility import find_utility

    explore = find_utility("ploom-explore")
    if template:
        env = {**(env or {}), **_template.starter(explore, sys.executable)}
        options = (f"--python={sys.executable}", *options)
    argv = [explore, "-k", "-q", "--no-minimize", "--no-saved", "--trace-dir=traces",
            f"--instrument={mod}", *options]
    if limit:
        argv.append(f"--max-schedules={limit}")
    result = subprocess.run([*argv, target], capture_output=True, text=True, timeout=600, cwd=folder,
                            env={**os.environ, **(env or {})})
    try:
        stats = json.loads(result.stdout)
    except ValueError:
        stats = None
    return result.returncode, stats, result.stderr


def _explore_all(seed, folder, time=False):
    """(seed, {mode: statistics or a message}); with time, of the time
    theme's program."""
    folder = folder / f"{'time-' if time else ''}{seed}"
    folder.mkdir()
    target = primgen.write_program(seed, folder, time=time)
    found = {}
    modes = dict(MODES, **{POINTS: MODES["none"]}) if time else MODES
    for mode, options in modes.items():
        if mode == "none" and not time:
            options = (*options, *primgen.DFS_BOUND[primgen.family(seed)])
        rc, stats, stderr = _explore(folder, target, primgen.module(seed), options,
                                     LIMIT if mode.startswith("none") else None,
                                     POINTS_ENV if mode == POINTS else None, template=seed % 2 == 1)
        if stats is None or rc not in (0, 1, 3):
            stats = f"{' '.join(options)} exited {rc} with no statistics: {stderr[-2000:]}"
        found[mode] = stats
    return seed, found


def _summaries(stats):
    return {o["summary"] for o in stats["outcomes"]}


def test_dpor_reaches_the_outcomes_of_dfs_on_generated_primitive_programs(tmp_path):
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        results = list(pool.map(lambda seed: _explore_all(seed, tmp_path), range(START, START + SEEDS)))
    compared, too_big, several, families = [], [], 0, collections.Counter()
    for seed, found in results:
        where = f"seed {seed} (python tests/python/primgen.py {seed})"
        for stats in found.values():
            assert isinstance(stats, dict), f"{where}: {stats}"
        dfs, dpor, dpor_j2 = found["none"], found["dpor"], found["dpor-j2"]
        assert dpor["complete"], f"{where}: the reduction did not complete: {dpor['stopped_by']}"
        assert dpor_j2["complete"], f"{where}: the reduction on two workers did not complete: {dpor_j2['stopped_by']}"
        assert _summaries(dpor_j2) == _summaries(dpor), (
            f"{where}: -j 1 {_summaries(dpor)}, -j 2 {_summaries(dpor_j2)}"
        )
        if not dfs["complete"]:
            too_big.append(seed)
            continue
        if primgen.DFS_BOUND[primgen.family(seed)]:
            # DFS within a bound: its outcomes are some of the reduction's
            assert _summaries(dfs) <= _summaries(dpor), (
                f"{where}: only DFS {primgen.DFS_BOUND[primgen.family(seed)]}: {_summaries(dfs) - _summaries(dpor)}"
            )
        else:
            assert _summaries(dpor) == _summaries(dfs), f"{where}: DFS {_summaries(dfs)}, DPOR {_summaries(dpor)}"
            assert dpor["schedules"] <= dfs["schedules"], where
        compared.append(seed)
        several += len(_summaries(dfs)) > 1
        families[primgen.family(seed)] += 1
    print(
        f"{len(compared)} programs compared ({several} with more than one outcome; "
        f"{dict(sorted(families.items()))}), {len(too_big)} beyond {LIMIT} DFS schedules: {too_big}"
    )
    assert len(compared) * 2 >= SEEDS, (
        f"only {len(compared)} of {SEEDS} programs within {LIMIT} DFS schedules: "
        "the test compared too little (raise PLOOM_PRIM_LIMIT or shrink primgen's programs)"
    )


def test_dpor_reaches_the_outcomes_of_dfs_on_generated_time_programs(tmp_path):
    # sleeps, spin-waits, fair yields, clock reads and timed waits under the
    # idle model: the clock's jumps and the fair yields order the reduction
    # as barriers (lib/hb.h), which must lose no outcome of DFS; and the
    # clock reads, no points there, must lose none of DFS with every read
    # a point (only schedules)
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        results = list(pool.map(lambda seed: _explore_all(seed, tmp_path, time=True),
                                range(START, START + TIME_SEEDS)))
    compared, several, with_points = 0, 0, 0
    for seed, found in results:
        where = f"seed {seed} (python tests/python/primgen.py --time {seed})"
        for stats in found.values():
            assert isinstance(stats, dict), f"{where}: {stats}"
        dfs, dpor, dpor_j2 = found["none"], found["dpor"], found["dpor-j2"]
        # every spin-wait ends: no schedule reaches the step limit
        for mode, stats in found.items():
            assert stats["complete"] or mode.startswith("none"), f"{where}: {mode}: {stats['stopped_by']}"
            assert not any("step limit" in o["summary"] for o in stats["outcomes"]), (where, mode)
        assert _summaries(dpor_j2) == _summaries(dpor), (
            f"{where}: -j 1 {_summaries(dpor)}, -j 2 {_summaries(dpor_j2)}"
        )
        if not dfs["complete"]:
            continue
        assert _summaries(dpor) == _summaries(dfs), f"{where}: DFS {_summaries(dfs)}, DPOR {_summaries(dpor)}"
        assert dpor["schedules"] <= dfs["schedules"], where
        compared += 1
        several += len(_summaries(dfs)) > 1
        points = found[POINTS]
        if points["complete"]:
            assert _summaries(points) == _summaries(dfs), (
                f"{where}: DFS with reads as points {_summaries(points)}, with free reads {_summaries(dfs)}"
            )
            assert dfs["schedules"] <= points["schedules"], where
            with_points += 1
    print(f"{compared} time programs compared ({several} with more than one outcome), "
          f"{with_points} with DFS that makes every clock read a point")
    assert compared * 2 >= TIME_SEEDS, f"only {compared} of {TIME_SEEDS} time programs within {LIMIT} DFS schedules"
    assert with_points * 2 >= compared, f"only {with_points} of {compared} time programs held to DFS with read points"


# Programs of the shapes that once fooled the reduction, each held to the
# outcomes of DFS with one and two workers.  A module target in its own
# folder, so that --instrument names it (plain state is seen by DFS only
# in the modules named).  Where full DFS is too long for make check, the
# reference is DFS within a preemption bound, whose outcomes the
# reduction must all reach (it may reach more).
SHAPES = {
    # a blocking get that must move before the get_nowait that came first
    # (it was not enabled where the run put it: the queue was empty there)
    "queue_get_before_get_nowait": (
        """
import ploom, ploom.queue as queue
def scenario():
    q = queue.Queue(); q.put_nowait(1); got = ploom.SharedCell(None)
    def t0(): got.write(q.get())
    def t1(): q.empty()
    a = ploom.Thread(target=t0); a.start()
    try: q.get_nowait()
    except queue.Empty: pass
    b = ploom.Thread(target=t1); b.start()
    q.put(2); a.join(); b.join()
    raise AssertionError(f"final {got.read()}")
""",
        (),
    ),
    # the same with a semaphore's one-step wait, reaching "timed out"
    "semaphore_acquire_before_nonblocking": (
        """
import ploom, ploom.threading as threading
def scenario():
    sem = threading.Semaphore(2); out = ploom.SharedCell(None)
    def t0():
        sem.acquire()
        with sem: pass
        if sem.acquire(timeout=1): sem.release()
        else: out.write("timed out")
    def t1():
        sem.acquire(blocking=False)
        with sem: pass
    a = ploom.Thread(target=t0); b = ploom.Thread(target=t1)
    a.start(); b.start(); a.join(); b.join()
    raise AssertionError(f"final {out.read()}")
""",
        (),
    ),
    # two fair yields at one idle point: the one that runs first lets its
    # task run on while the other waits for everything to block, an order
    # no later race reverses (t1 before t0 was lost)
    "two_fair_yields_at_one_idle_point": (
        """
import time, ploom
def scenario():
    c = ploom.SharedCell(0)
    def t0():
        time.sleep(0)
        c.write(c.read() * 10 + 1)
    def t1(): c.write(c.read() * 10 + 2)
    a = ploom.Thread(target=t0); b = ploom.Thread(target=t1)
    a.start(); time.sleep(0); b.start()
    c.write(c.read() + 5)
    a.join(); b.join()
    raise AssertionError(f"final {c.read()}")
""",
        (),
    ),
    # plain state of three tasks: the objects are numbered in the order a
    # run first touches them, which differs below the node a wakeup
    # sequence goes into; the serial order t1, t2, t0 among the outcomes
    "plain_three_tasks_dicts_and_lists": (
        """
import ploom
class S: pass
def scenario():
    s = S(); s.x = s.y = 0; lst = []; d = {"a": 0}
    def t0():
        lst.append(1); s.x = s.y + 2
    def t1():
        s.y = s.x + 2; d.pop("a", None)
    def t2():
        s.y += 1; lst.append(23); d["a"] = 1
    th = [ploom.Thread(target=f) for f in (t0, t1, t2)]
    for t in th: t.start()
    for t in th: t.join()
    raise AssertionError(f"final {(s.x, s.y, lst, d)}")
""",
        ("-p", "1"),
    ),
    # the same numbering once stopped the search: "ran task 1 at step 11,
    # which was asleep"
    "plain_three_tasks_timed_join": (
        """
import ploom
class S: pass
def scenario():
    s = S(); s.a = s.b = None; lst = []; d = {}
    def t0(): s.a = d.get("k")
    def t1():
        len(lst); s.b = 1
    def t2(): d["k"] = 1
    th = [ploom.Thread(target=f) for f in (t0, t1, t2)]
    for t in th: t.start()
    th[1].join(0.5)
    for t in th: t.join()
    raise AssertionError(f"final {(s.a, s.b, lst, d)}")
""",
        ("-p", "1"),
    ),
    # a thread that starts a thread (a Timer) while main starts another:
    # tasks are numbered in the order they start, so the two starts must
    # not commute ("choice 2 asks for task 3, which is not enabled")
    "timer_started_by_a_thread": (
        """
import ploom, ploom.threading as threading
def scenario():
    c = ploom.SharedCell(0); got = ploom.SharedCell(None)
    def t0():
        tc = threading.Timer(1, c.write, args=(9,))
        tc.start(); tc.cancel()
        got.write(c.read())
    th0 = ploom.Thread(target=t0); th0.start()
    c.write(5)
    tm = threading.Timer(0.5, c.write, args=(8,))
    tm.start(); tm.join(); th0.join()
    raise AssertionError(f"final {(c.read(), got.read())}")
""",
        ("-p", "1"),
    ),
}


def _shape_explore(folder, name, *options):
    """The statistics of ploom-explore -k on the shape's module in folder."""
    rc, stats, stderr = _explore(folder, f"{name}:scenario", name, options)
    assert rc in (0, 1) and stats is not None, f"{name} {' '.join(options)} exited {rc}: {stderr[-2000:]}"
    assert stats["complete"], stats
    return stats


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_dpor_reaches_the_outcomes_of_dfs_on_shapes_that_fooled_it(tmp_path, name):
    source, bound = SHAPES[name]
    (tmp_path / f"{name}.py").write_text(source)
    dfs = _summaries(_shape_explore(tmp_path, name, "--reduction=none", *bound))
    serial = _shape_explore(tmp_path, name, "--reduction=dpor")
    parallel = _shape_explore(tmp_path, name, "--reduction=dpor", "-j", "2")
    assert len(dfs) > 1
    if bound:
        assert dfs <= _summaries(serial), f"only DFS {bound}: {dfs - _summaries(serial)}"
    else:
        assert _summaries(serial) == dfs
    assert _summaries(parallel) == _summaries(serial)
