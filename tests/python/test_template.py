"""The worker template (python/ploom/_template.py): a worker it forks runs
the scenario exactly as a fresh interpreter does; a worker it must not fork
(another environment, a module on PYTHONPATH that shadows one it imported)
is started fresh; a killed utility leaves no worker behind.

Each test starts its own template with _template.Template and hands it to
ploom-explore in PLOOM_WORKER_TEMPLATE, as ploom's Python API does, and
tells the template's workers from fresh ones by the worker's parent: the
scenario, in a schedule's process, reads its worker's parent from /proc.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from ploom import _template
from ploom._utility import find_utility
from ploom.exploration import ModelCheckError

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the worker template is Linux's")

SCENARIO = textwrap.dedent(
    """
    import os, ploom

    def _parent(pid):
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rpartition(")")[2].split()[1])

    def parent():
        # a schedule's process -> its worker -> the worker's parent
        raise AssertionError(f"worker parent {_parent(os.getppid())}")

    class Account:
        def __init__(self):
            self.balance = 100

    def bank():
        a = Account()
        def withdraw():
            if a.balance >= 80:
                a.balance -= 80
        ts = [ploom.Thread(target=withdraw) for _ in range(2)]
        for t in ts: t.start()
        for t in ts: t.join()
        assert a.balance >= 0, f"overdrawn: {a.balance}"
    """
)


@pytest.fixture
def template(tmp_path, monkeypatch):
    """(the template's socket, its pid), stopped at the end."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scen.py").write_text(SCENARIO)
    template = _template.Template(find_utility("ploom-explore"), sys.executable)
    assert template.wait(30), "the template did not start"
    yield template.path, template.proc.pid
    template.stop()


def _explore(target, path, *options, env=None, **kw):
    env = dict(os.environ, **(env or {}))
    if path:
        env["PLOOM_WORKER_TEMPLATE"] = path
    else:
        env.pop("PLOOM_WORKER_TEMPLATE", None)
    argv = [find_utility("ploom-explore"), f"--python={sys.executable}", "--no-saved", "-q", *options, target]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, **kw)


def _parent_of_worker(result):
    stats = json.loads(result.stdout)
    assert stats["failure"], result.stderr
    return int(stats["failure"]["message"].rsplit(" ", 1)[1])


def test_a_worker_the_template_forks_runs_as_a_fresh_one(template):
    path, pid = template
    forked = _explore("scen.py:parent", path)
    assert forked.returncode == 1, forked.stderr
    assert _parent_of_worker(forked) == pid
    fresh = _explore("scen.py:parent", None)
    assert _parent_of_worker(fresh) != pid
    # the same search, the same verdict, the same failing schedule
    a = json.loads(_explore("scen.py:bank", path, "-k", "--no-minimize").stdout)
    b = json.loads(_explore("scen.py:bank", None, "-k", "--no-minimize").stdout)
    assert a["failure"]["message"] == b["failure"]["message"] == "overdrawn: -60"
    assert (a["schedules"], a["failing"]) == (b["schedules"], b["failing"])
    assert a["schedules"] > 1


@pytest.mark.parametrize("env", [{"PYTHONHASHSEED": "7"}, {"PLOOM_CLOCK_READS": "points"}, {"TZ": "UTC+3"}])
def test_a_worker_another_environment_would_start_otherwise_is_started_fresh(template, env):
    path, pid = template
    # PYTHONHASHSEED is the utility's to set: --hash-seed; the others are
    # read as an interpreter or the extension starts
    options = ("--hash-seed=7",) if "PYTHONHASHSEED" in env else ()
    result = _explore("scen.py:parent", path, *options, env={k: v for k, v in env.items() if k != "PYTHONHASHSEED"})
    assert result.returncode == 1, result.stderr
    assert _parent_of_worker(result) != pid


def test_ploom_variables_and_pythonpath_do_not_keep_a_worker_from_the_template(template, tmp_path):
    path, pid = template
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "helper.py").write_text("VALUE = 7\n")
    (tmp_path / "use.py").write_text(
        "import os, helper\n"
        "def scenario():\n"
        "    with open(f'/proc/{os.getppid()}/stat') as f:\n"
        "        parent = int(f.read().rpartition(')')[2].split()[1])\n"
        "    raise AssertionError(f'{helper.VALUE} {os.environ.get(\"PLOOM_USAGE_NAME\")} {parent}')\n"
    )
    result = _explore("use.py:scenario", path, env={"PYTHONPATH": str(lib), "PLOOM_USAGE_NAME": "mine"})
    assert result.returncode == 1, result.stderr
    value, usage, parent = json.loads(result.stdout)["failure"]["message"].split()
    # the worker imports from PYTHONPATH, sees the utility's variables, and
    # is the template's
    assert (value, usage, int(parent)) == ("7", "mine", pid)


def test_a_worker_in_another_folder_imports_from_its_own_relative_pythonpath(template, tmp_path):
    path, pid = template
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "lib").mkdir(parents=True)
    (elsewhere / "lib" / "helper2.py").write_text("VALUE = 'from elsewhere'\n")
    (elsewhere / "scen2.py").write_text(
        "import os, helper2\n"
        "def scenario():\n"
        "    with open(f'/proc/{os.getppid()}/stat') as f:\n"
        "        parent = int(f.read().rpartition(')')[2].split()[1])\n"
        "    raise AssertionError(f'{helper2.VALUE!r} {os.getcwd()} {parent}')\n"
    )
    result = _explore("scen2.py:scenario", path, env={"PYTHONPATH": "lib"}, cwd=elsewhere)
    assert result.returncode == 1, result.stderr
    message = json.loads(result.stdout)["failure"]["message"]
    assert message == f"'from elsewhere' {elsewhere} {pid}"


def test_a_module_on_pythonpath_that_shadows_one_the_template_imported_gets_a_fresh_worker(template, tmp_path):
    path, pid = template
    lib = tmp_path / "shadow"
    lib.mkdir()
    (lib / "queue.py").write_text("raise ImportError('the shadowing queue.py was imported')\n")
    result = _explore("scen.py:parent", path, env={"PYTHONPATH": str(lib)})
    fresh = _explore("scen.py:parent", None, env={"PYTHONPATH": str(lib)})
    # whatever a fresh worker does with it, the template's does the same
    assert (result.returncode, result.stderr) == (fresh.returncode, fresh.stderr)
    if result.returncode == 1:
        assert _parent_of_worker(result) != pid


def test_a_scenario_that_cannot_load_fails_as_without_the_template(template):
    path, _ = template
    a = _explore("scen.py:nothing", path)
    b = _explore("scen.py:nothing", None)
    assert a.returncode == b.returncode != 0
    assert a.stderr == b.stderr


def test_a_killed_utility_leaves_no_worker_of_the_template(template, tmp_path):
    path, pid = template
    (tmp_path / "slow.py").write_text(
        "import select\n"
        "def scenario():\n"
        "    select.select([], [], [], 60)  # a real wait: the clock's sleep would not be\n"
    )
    env = dict(os.environ, PLOOM_WORKER_TEMPLATE=path)
    argv = [find_utility("ploom-explore"), f"--python={sys.executable}", "--no-saved", "-q", "slow.py:scenario"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 30
    while not _descendants(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _descendants(pid), "the template forked no worker"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while _descendants(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _descendants(pid) == []


def _descendants(pid):
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            kids = []
        found += kids
        todo += kids
    return found


def test_check_forks_its_workers_from_the_template_from_its_second_search_on(tmp_path, monkeypatch):
    import ploom

    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("PLOOM_WORKER_TEMPLATE", raising=False)
    # as in a process that has not searched yet (another test of this one
    # may have started its template)
    monkeypatch.setattr(_template, "_started", {})
    (tmp_path / "scen_check.py").write_text(SCENARIO)
    import scen_check

    parents = []
    for _ in range(3):
        with pytest.raises(ModelCheckError) as failed:
            ploom.check(scen_check.parent, ploom.Config(minimize=False, saved=False))
        parents.append(int(str(failed.value).split("worker parent ")[1].split()[0]))
    pid = _template._started[find_utility("ploom-explore"), sys.executable, os.getpid()].proc.pid
    # the first search does not wait for the template it starts
    assert parents[0] != pid
    assert parents[1:] == [pid, pid]


PYTEST_FILE = textwrap.dedent(
    """
    import os, ploom

    def _parent(pid):
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rpartition(")")[2].split()[1])

    def test_parents():
        # a schedule's process -> its worker -> the worker's parent -> its parent
        worker = os.getppid()
        import lazily
        conftest = os.environ.get("FROM_CONFTEST")
        raise AssertionError(f"{_parent(worker)} {_parent(_parent(worker))} {conftest} {lazily.VALUE}")

    def test_bank():
        balance = ploom.SharedCell(100)
        def withdraw():
            if balance.read() >= 80:
                balance.write(balance.read() - 80)
        ts = [ploom.Thread(target=withdraw) for _ in range(2)]
        for t in ts: t.start()
        for t in ts: t.join()
        assert balance.read() >= 0, f"overdrawn: {balance.read()}"
    """
)


def _pytest_project(tmp_path, extra=""):
    (tmp_path / "conftest.py").write_text("import os\nos.environ['FROM_CONFTEST'] = 'yes'\n")
    (tmp_path / "lazily.py").write_text("VALUE = 'imported'\n")
    (tmp_path / "test_col.py").write_text(PYTEST_FILE + extra)


def _parents(result):
    stats = json.loads(result.stdout)
    assert stats["failure"], result.stderr
    return stats["failure"]["message"].split()


def test_the_tests_of_one_file_fork_from_one_collector_and_run_as_fresh_workers(template, tmp_path):
    path, pid = template
    _pytest_project(tmp_path)
    first = _explore("pytest:test_col.py::test_parents", path)
    second = _explore("pytest:test_col.py::test_parents", path)
    collector, grand, conftest, lazily = _parents(first)
    # a collector of the template's forked both, and the worker sees what
    # a fresh one sees: the conftest's variable, pytest's path
    assert (int(grand), conftest, lazily) == (pid, "yes", "imported")
    assert _parents(second)[:2] == [collector, grand]
    fresh = _parents(_explore("pytest:test_col.py::test_parents", None))
    assert pid not in (int(fresh[0]), int(fresh[1]))
    assert fresh[2:] == ["yes", "imported"]
    # another test of the file, from the same collector: the same search
    a = json.loads(_explore("pytest:test_col.py::test_bank", path, "-k", "--no-minimize").stdout)
    b = json.loads(_explore("pytest:test_col.py::test_bank", None, "-k", "--no-minimize").stdout)
    assert a["failure"]["message"] == b["failure"]["message"] == "overdrawn: -60"
    assert (a["schedules"], a["failing"]) == (b["schedules"], b["failing"]) and a["schedules"] > 1
    # the collector stays for the file's next test, as the template's child
    assert int(collector) in _descendants(pid)


def test_a_file_whose_collection_fails_for_one_test_gets_fresh_workers(template, tmp_path):
    path, pid = template
    # the ids of a test of a class fail as pytest collects the class: a
    # worker of test_parents, outside it, never collects the class, so the
    # collector of the whole file refuses and the worker starts fresh
    _pytest_project(
        tmp_path,
        "\nimport pytest\nclass TestBroken:\n"
        "    @pytest.mark.parametrize('x', [1], ids=lambda v: 1 / 0)\n"
        "    def test_broken(self, x): pass\n",
    )
    result = _explore("pytest:test_col.py::test_parents", path)
    worker_parent, grand, conftest, lazily = _parents(result)
    assert pid not in (int(worker_parent), int(grand))
    assert (conftest, lazily) == ("yes", "imported")


def test_the_template_keeps_a_few_collectors_and_lets_the_oldest_go(template, tmp_path):
    path, pid = template
    _pytest_project(tmp_path)
    grands = set()
    for k in range(_template.COLLECTORS_MAX + 2):
        (tmp_path / f"test_f{k}.py").write_text(PYTEST_FILE)
        collector, grand, conftest, _ = _parents(_explore(f"pytest:test_f{k}.py::test_parents", path))
        assert (int(grand), conftest) == (pid, "yes")
        grands.add(int(collector))
    # one collector per file, of which the template keeps the newest
    assert len(grands) == _template.COLLECTORS_MAX + 2

    def children():
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]

    deadline = time.monotonic() + 10
    while len(children()) > _template.COLLECTORS_MAX and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(children()) == _template.COLLECTORS_MAX
    # the first file's test still has its verdict, from a new collector
    again = _parents(_explore("pytest:test_f0.py::test_parents", path))
    assert int(again[1]) == pid and int(again[0]) not in grands


def test_a_test_file_changed_since_its_collection_gets_a_fresh_worker(template, tmp_path):
    path, pid = template
    _pytest_project(tmp_path)
    assert int(_parents(_explore("pytest:test_col.py::test_parents", path))[1]) == pid
    (tmp_path / "test_col.py").write_text(PYTEST_FILE.replace("{lazily.VALUE}", "changed"))
    worker_parent, grand, _, said = _parents(_explore("pytest:test_col.py::test_parents", path))
    assert said == "changed"
    assert pid not in (int(worker_parent), int(grand))
