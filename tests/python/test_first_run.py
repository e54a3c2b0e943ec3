"""pytest --ploom runs each test in pytest's process first (ploom._alone):
a test of one task gets its verdict there, and any other is explored in the
worker from its start.  Each test runs pytest on a small project in a
subprocess and reads its verbose lines."""

import os
import re
import subprocess
import sys
import textwrap

import pytest

HERE = "PASSED (ploom: 1 schedule, complete: one task, run here)"
# the worker's verdict of a search of one schedule
WORKER_ONE = "PASSED (ploom: 1 schedule, complete, one order"

TESTS = """\
import os
import queue
import threading
import time

import pytest


def note(what):
    with open(os.environ["NOTES"], "a") as f:
        f.write(f"{what} {os.getpid()}\\n")


def test_sum():
    note("sum")
    assert sum(range(10)) == 45


def test_sum_wrong():
    assert sum(range(10)) == 46


def test_racy():
    note("racy")
    n = [0]

    def inc():
        v = n[0]
        n[0] = v + 1

    threads = [threading.Thread(target=inc) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert n[0] == 2


def test_waits_for_nothing():
    queue.Queue().get()


def test_sleeps_long():
    time.sleep(600)


def test_computes():
    start = time.process_time()
    while time.process_time() - start < 1.5:
        pass


def test_swallows_the_start():
    try:
        threading.Thread(target=print).start()
    except Exception:
        pass


@pytest.fixture(scope="module")
def server():
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    yield 1
    stop.set()
    thread.join()


def test_server_one(server):
    assert server == 1


def test_server_two(server):
    assert server == 1
"""


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\n')
    (tmp_path / "test_one.py").write_text(TESTS)
    return tmp_path


def run(root, *args):
    env = dict(os.environ, NOTES=str(root / "notes.txt"))
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--ploom", "-v", *args],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False)


def verdicts(stdout):
    found = {}
    for line in stdout.splitlines():
        m = re.match(r"test_one\.py::(\S+) (PASSED|FAILED)(.*?)(\s+\[\s*\d+%\])?$", line)
        if m:
            found[m.group(1)] = m.group(2) + m.group(3)
    return found


def notes(root):
    return [line.split() for line in (root / "notes.txt").read_text().splitlines()]


def test_a_test_of_one_task_gets_its_verdict_from_its_run_here(project):
    result = run(project, "test_one.py::test_sum", "test_one.py::test_sum_wrong", "test_one.py::test_computes")
    out = result.stdout
    found = verdicts(out)
    assert found["test_sum"] == HERE, out
    # a process busy computing is left to finish
    assert found["test_computes"] == HERE, out
    assert found["test_sum_wrong"] == "FAILED", out
    # pytest's own report of it, and ploom's word that a rerun replays it
    assert "assert 45 == 46" in out, out
    assert "ploom: one task, run here: this run is its only schedule, and running the test again replays it" in out
    assert re.search(r"^ploom: 3 tests explored, 3 schedules: 2 complete, 0 incomplete, 1 failed$", out, re.M), out
    # once, and no trace
    assert [what for what, pid in notes(project)] == ["sum"]
    assert not (project / ".ploom").exists()


def test_a_thread_start_sends_the_test_to_the_worker_which_runs_it_from_its_start(project):
    result = run(project, "test_one.py::test_racy")
    out = result.stdout
    assert verdicts(out)["test_racy"] == "FAILED", out
    assert re.search(r"ploom: a schedule failed after \d+ schedules of the search", out), out
    assert re.search(r"^Replay: pytest test_one\.py::test_racy --ploom-replay=", out, re.M), out
    # the run here stopped at the first start; the worker's schedules ran
    # the test from its start, each in a process of its own
    pids = [pid for what, pid in notes(project)]
    assert len(pids) >= 3 and len(set(pids)) == len(pids), pids


def test_a_wait_nothing_can_end_is_the_worker_s_deadlock_not_a_hang(project):
    result = run(project, "test_one.py::test_waits_for_nothing", "test_one.py::test_sleeps_long")
    out = result.stdout
    found = verdicts(out)
    assert found["test_waits_for_nothing"] == "FAILED", out
    assert "deadlock: task 0 waits on Queue.not_empty" in out, out
    # ten minutes on the worker's virtual clock
    assert found["test_sleeps_long"].startswith(WORKER_ONE), out


def test_a_start_the_test_catches_still_sends_it_to_the_worker(project):
    result = run(project, "test_one.py::test_swallows_the_start")
    assert verdicts(result.stdout)["test_swallows_the_start"].startswith(WORKER_ONE), result.stdout


def test_a_fixture_s_thread_sends_each_test_that_uses_it_to_the_worker(project):
    result = run(project, "test_one.py::test_server_one", "test_one.py::test_server_two", "test_one.py::test_sum")
    out = result.stdout
    found = verdicts(out)
    assert found["test_server_one"].startswith(WORKER_ONE), out
    # the module fixture's kept error from the first run here sends it too
    assert found["test_server_two"].startswith(WORKER_ONE), out
    assert found["test_sum"] == HERE, out


def test_a_thread_alive_before_the_tests_sends_every_test_to_the_worker(project):
    (project / "conftest.py").write_text(textwrap.dedent("""
        import threading

        def pytest_configure(config):
            threading.Thread(target=threading.Event().wait, daemon=True).start()
    """))
    result = run(project, "test_one.py::test_sum")
    out = result.stdout
    # the worker's verdict: here, that it cannot start a thread outside a
    # schedule as the conftest does
    assert verdicts(out)["test_sum"] != HERE, out
    assert "ploom-explore: cannot load scenario 'pytest:test_one.py::test_sum'" in out, out


def test_first_run_worker_sends_every_test_to_the_worker(project):
    result = run(project, "--ploom-first-run=worker", "test_one.py::test_sum")
    assert verdicts(result.stdout)["test_sum"].startswith(WORKER_ONE), result.stdout
