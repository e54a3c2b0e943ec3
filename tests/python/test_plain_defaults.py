"""What a check sees without being told: the scenario's module and the
modules of its project are patched, and every search sees their plain
state, so that following ploom's own advice never ends in a false pass;
naming modules to patch makes the reduction the default search.

Each test writes its project into its own folder (no repository: the
scenario's folder is the project's root) and checks the scenario by file,
so that nothing is patched in this process."""

import json
import os
import subprocess
import textwrap

import pytest

import ploom
from ploom.__main__ import main
from ploom._utility import find_utility
from ploom.exploration import ModelCheckError, SetupError, replay

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")

# two real threads racing on counter[0] += 1, in the scenario's own file
COUNTER = """
    import threading

    counter = [0]


    def bump():
        counter[0] += 1


    def scenario():
        counter[0] = 0
        workers = [threading.Thread(target=bump) for _ in range(2)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert counter[0] == 2, f"lost an update: {counter[0]}"
"""

# a circuit breaker whose half-open state lets one trial call through:
# the check and the act are two steps on plain attributes
BREAKER = """
    import contextlib
    import threading


    class Breaker:
        def __init__(self):
            self.state = "half-open"
            self.trials = 0
            self.most = 0

        @contextlib.contextmanager
        def calling(self):
            if self.state == "half-open":
                self.state = "trying"
                self.trials += 1
                self.most = max(self.most, self.trials)
                try:
                    yield
                finally:
                    self.trials -= 1
                    self.state = "closed"
            else:
                yield
"""

BREAKER_SCENARIO = """
    import threading

    import breaker


    def scenario():
        cb = breaker.Breaker()

        def call():
            with cb.calling():
                pass

        workers = [threading.Thread(target=call) for _ in range(2)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert cb.most == 1, f"{cb.most} trial calls at once in the half-open state"
"""

# a statistics counter without a lock, in a library beside the scenario
STATS = """
    class Stats:
        def __init__(self):
            self.hits = 0

        def hit(self):
            self.hits += 1
"""

STATS_FIXED = """
    import threading


    class Stats:
        def __init__(self):
            self.hits = 0
            self.lock = threading.Lock()

        def hit(self):
            with self.lock:
                self.hits += 1
"""

STATS_SCENARIO = """
    import threading

    import stats


    def scenario():
        s = stats.Stats()
        workers = [threading.Thread(target=s.hit) for _ in range(2)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert s.hits == 2, f"counted {s.hits} hits"
"""


SHARED = "the default when the code under test shares plain state"

# a pool with ploom's own Condition whose `if` should be a `while`: the bug
# is in the order of its plain list's accesses
POOL = """
    import ploom
    import ploom.threading as threading


    class Pool:
        def __init__(self):
            self.cond = threading.Condition()
            self.free = []

        def put(self, conn):
            with self.cond:
                self.free.append(conn)
                self.cond.notify()

        def get(self):
            with self.cond:
                if not self.free:
                    self.cond.wait()
                return self.free.pop()


    def scenario():
        pool = Pool()
        users = [ploom.Thread(target=pool.get) for _ in range(2)]
        for user in users:
            user.start()
        pool.put("a")
        pool.put("b")
        for user in users:
            user.join()
"""


def test_plain_state_that_tasks_share_turns_the_default_search_to_the_reduction(tmp_path, monkeypatch):
    # depth-first search over the plain list's points ran past 4,000
    # schedules with an estimate of a million; the reduction finds it in a few
    folder = _project(tmp_path, monkeypatch, pool=POOL)
    with pytest.raises(ModelCheckError, match="pop from empty list") as info:
        _check(folder, "pool")
    stats = info.value.statistics
    assert (stats.reduction, stats.search_default) == ("dpor", SHARED)
    assert stats.schedules < 100
    # chosen by the options, the search stays what they say
    stats = _check(folder, "pool", reduction="none", max_preemptions=0)
    assert (stats.reduction, stats.search_default, stats.complete) == ("none", None, True)


def _project(tmp_path, monkeypatch, **files):
    monkeypatch.chdir(tmp_path)
    for name, text in files.items():
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(text), encoding="utf-8")
    return tmp_path


def _check(folder, name, **config):
    config.setdefault("trace_dir", str(folder / "traces"))
    return ploom.exploration.explore(f"{folder / name}.py:scenario", None, ploom.Config(**config))


@pytest.mark.parametrize("config", [
    {},
    {"patch": ("scen",)},
    {"patch": ("scen",), "reduction": "none"},
    {"reduction": "dpor"},
    {"search": "ipb"},
])
def test_a_counter_race_in_the_scenario_file_is_found(tmp_path, monkeypatch, config):
    folder = _project(tmp_path, monkeypatch, scen=COUNTER)
    with pytest.raises(ModelCheckError, match="lost an update: 1") as info:
        _check(folder, "scen", **config)
    # a replay patches and instruments what the search did
    with pytest.raises(ModelCheckError, match="lost an update: 1"):
        replay(info.value.minimized_trace)


def test_a_sample_sees_the_counter_race_too(tmp_path, monkeypatch):
    folder = _project(tmp_path, monkeypatch, scen=COUNTER)
    with pytest.raises(ModelCheckError, match="lost an update: 1"):
        _check(folder, "scen", search="random", max_schedules=200)


@pytest.mark.parametrize("config", [
    {"patch": ("breaker",)},
    {"patch": ("breaker",), "reduction": "none"},
    {},
])
def test_a_circuit_breakers_double_open_is_found(tmp_path, monkeypatch, config):
    folder = _project(tmp_path, monkeypatch, breaker=BREAKER, scen=BREAKER_SCENARIO)
    with pytest.raises(ModelCheckError, match="2 trial calls at once"):
        _check(folder, "scen", **config)


def test_a_buggy_library_beside_the_scenario_is_found_without_patch(tmp_path, monkeypatch):
    folder = _project(tmp_path, monkeypatch, stats=STATS, scen=STATS_SCENARIO)
    with pytest.raises(ModelCheckError, match="counted 1 hits") as info:
        _check(folder, "scen")
    # what was seen is listed: the library by its name
    assert "stats" in info.value.statistics.instrument
    assert info.value.statistics.instrument_scenario


def test_the_fixed_library_passes_and_the_result_lists_what_was_seen(tmp_path, monkeypatch, capsys):
    folder = _project(tmp_path, monkeypatch, stats=STATS_FIXED, scen=STATS_SCENARIO)
    stats = _check(folder, "scen")
    assert stats.complete and stats.failing == 0
    assert stats.instrument == ("stats",) and stats.instrument_scenario
    # two tasks write hits, under the lock: the default search is the reduction
    assert (stats.reduction, stats.search_default) == ("dpor", SHARED)
    assert main(["check", "--no-saved", f"{folder / 'scen.py'}:scenario"]) == 0
    out = capsys.readouterr().out
    assert f"all passed under reduction dpor ({SHARED}) (plain state seen in: the scenario, stats)" in out


def test_patch_dash_takes_only_the_modules_named(tmp_path, monkeypatch):
    # the way back to naming every module: the scenario's real threads are
    # then refused, never run unscheduled
    folder = _project(tmp_path, monkeypatch, scen=COUNTER)
    with pytest.raises(SetupError, match="Add 'scen' to patch="):
        _check(folder, "scen", patch=("-",))


INSTALLED = """
    import cachetools.func
    import threading


    @cachetools.func.lru_cache(maxsize=8)
    def lookup(key):
        return key * 2


    def scenario():
        workers = [threading.Thread(target=lookup, args=(21,)) for _ in range(2)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
"""


def test_a_library_from_site_packages_is_patched_only_when_named(tmp_path, monkeypatch):
    pytest.importorskip("cachetools", reason="cachetools is not installed: `make` installs it from the dev group")
    folder = _project(tmp_path, monkeypatch, scen=INSTALLED)
    with pytest.raises(SetupError, match=r"\(module cachetools.func\).*Add 'cachetools.func' to patch="):
        _check(folder, "scen")
    stats = _check(folder, "scen", patch=("cachetools.func",))
    assert stats.complete and stats.failing == 0
    assert stats.reduction == "dpor" and stats.search_default == "the default when modules are patched"
    # what was seen: the library named, not the rest of site-packages
    assert "cachetools.func" in stats.instrument
    assert not any(name != "cachetools.func" and name.startswith("cachetools") for name in stats.instrument)


def test_the_default_search_is_said_in_the_result(tmp_path, monkeypatch, capsys):
    folder = _project(tmp_path, monkeypatch, stats=STATS.replace("self.hits += 1", "pass"), scen=STATS_SCENARIO.replace(
        "assert s.hits == 2", "assert s.hits == 0"))
    assert main(["check", "--no-saved", "--patch=stats", f"{folder / 'scen.py'}:scenario"]) == 0
    out = capsys.readouterr().out
    assert "all passed under reduction dpor (the default when modules are patched)" in out


# four tasks of five writes each: far more than 10^5 orders
WIDE = """
    import ploom


    def scenario():
        cell = ploom.SharedCell(0)

        def write():
            for i in range(5):
                cell.write(i)

        workers = [ploom.Thread(target=write) for _ in range(4)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
"""


@pytest.mark.parametrize("reduction", ["none", "dpor"])
def test_a_large_depth_first_search_says_the_reduction_would_explore_fewer(tmp_path, monkeypatch, reduction):
    folder = _project(tmp_path, monkeypatch, wide=WIDE)
    result = subprocess.run(
        [find_utility("ploom-explore"), "--progress=terminal", "--time-limit=2.5", "--no-saved",
         f"--reduction={reduction}", f"--trace-dir={folder / 'traces'}", f"{folder / 'wide.py'}:scenario"],
        capture_output=True, text=True, timeout=120, check=False,
        env=dict(os.environ, COLUMNS="400"),
    )
    stats = json.loads(result.stdout)
    hint = "--reduction=dpor would explore fewer"
    if reduction == "none":
        assert result.returncode == 3 and stats["schedules"] > 10
        assert f"ploom-explore: more than 100000 schedules estimated; {hint}\n" in result.stderr
    else:
        assert hint not in result.stderr


# the main thread waits in a loop for a worker to set a plain flag; the
# workers' read-then-write of n loses an update
SPIN = """
    import threading
    import time


    class Box:
        pass


    def scenario():
        box = Box()
        box.ready = False
        box.n = 0
        box.ticks = 0

        def setter():
            v = box.n
            box.n = v + 1
            box.ready = True

        def other():
            v = box.n
            box.n = v + 1

        a = threading.Thread(target=setter)
        b = threading.Thread(target=other)
        a.start()
        b.start()
        while not box.ready:
            box.ticks += 1{yield_}
        a.join()
        b.join()
        assert box.n == 2, f"lost an update: {{box.n}}"
"""


@pytest.mark.parametrize("reduction", [None, "none", "dpor"])
def test_a_busy_wait_on_plain_state_is_no_hang_of_the_code(tmp_path, monkeypatch, reduction):
    # with no point in the loop the worker never ran: the schedule's wall
    # clock ended it, a "timeout" failure that real threads never show
    folder = _project(tmp_path, monkeypatch, spin=SPIN.format(yield_=""))
    argv = [find_utility("ploom-explore"), "-q", "--no-saved", f"--trace-dir={folder / 'traces'}"]
    if reduction:
        argv.append(f"--reduction={reduction}")
    result = subprocess.run([*argv, f"{folder / 'spin.py'}:scenario"], capture_output=True, text=True,
                            timeout=300, check=False)
    stats = json.loads(result.stdout)
    assert (result.returncode, stats["result"], stats["failing"]) == (3, "incomplete", 0), result.stderr
    assert "reached the step limit" in result.stderr
    assert "thread#1 had not run yet" in result.stderr
    assert "a time.sleep(0) in the loop is a fair yield" in result.stderr


@pytest.mark.parametrize("config", [{}, {"reduction": "none"}])
def test_a_busy_wait_with_a_fair_yield_ends_and_the_bug_is_found(tmp_path, monkeypatch, config):
    folder = _project(tmp_path, monkeypatch, spin=SPIN.format(yield_="\n            time.sleep(0)"))
    with pytest.raises(ModelCheckError, match="lost an update: 1"):
        _check(folder, "spin", **config)


# a scenario that reads its list of threads once more after it joined them all
JOIN_ALL = """
    import threading


    def work():
        pass


    def scenario():
        threads = [threading.Thread(target=work) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
"""


def test_a_read_after_every_other_task_finished_makes_no_point(tmp_path, monkeypatch):
    # the last read of threads ends the scenario's step at its exit; with
    # every thread joined no other task can run between, so no site of it
    # needs a point: the trace has only the starts, begins and joins
    folder = _project(tmp_path, monkeypatch, joinall=JOIN_ALL)
    result = subprocess.run([find_utility("ploom-run-one"), f"{folder / 'joinall.py'}:scenario"],
                            capture_output=True, text=True, timeout=120, check=True)
    trace = json.loads(result.stdout)
    assert [step["op"] for step in trace["steps"]] == ["start", "start", "begin", "join", "begin", "join"]
    assert not trace["config"].get("plain_points")
