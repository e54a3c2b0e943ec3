"""pytest --ploom on a project laid out as pytest users lay theirs out: a
package at the root, tests in tests/, ``pythonpath = ["."]`` in
pyproject.toml, and tests that use the real ``threading``, unmodified.

Each test runs pytest in a subprocess from the project's root, as a user
would, and reads its verbose lines and its report."""

import os
import re
import shlex
import subprocess
import sys
import textwrap

import pytest

PYPROJECT = """\
[tool.pytest.ini_options]
pythonpath = ["."]
"""

BANK = """\
import threading


class Account:
    def __init__(self, balance=0):
        self.balance = balance
        self.lock = threading.Lock()

    def deposit(self, amount):
        current = self.balance
        self.balance = current + amount

    def deposit_locked(self, amount):
        with self.lock:
            current = self.balance
            self.balance = current + amount

    def withdraw(self, amount):
        if self.balance >= amount:
            self.balance = self.balance - amount
            return True
        return False
"""

CONFTEST = """\
import os

import pytest

from bank import Account


@pytest.fixture(scope="session")
def ledger():
    # a session fixture with a teardown: a line per set-up and per
    # teardown, so that the test can tell they ran in every schedule
    path = os.environ["LEDGER"]
    with open(path, "a") as f:
        f.write("setup\\n")
    yield path
    with open(path, "a") as f:
        f.write("teardown\\n")


@pytest.fixture
def account(ledger):
    yield Account(0)
"""

TESTS = """\
import threading
import unittest

import pytest

from bank import Account


def deposit_twice(account, deposit):
    threads = [threading.Thread(target=deposit, args=(1,)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_racy(account):
    deposit_twice(account, account.deposit)
    assert account.balance == 2


@pytest.mark.parametrize("amount", [1, 5])
def test_locked(account, amount):
    threads = [threading.Thread(target=account.deposit_locked, args=(amount,)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert account.balance == 2 * amount


def test_single():
    account = Account(0)
    account.deposit(3)
    assert account.balance == 3


@pytest.fixture(scope="module")
def funded():
    return Account(1)


def test_withdraw_once(funded):
    funded.withdraw(1)
    assert funded.balance >= 0


@pytest.mark.thread_unsafe
def test_withdraw_unsafe(funded):
    funded.withdraw(1)
    assert funded.balance >= 0


class TestTeardown:
    @pytest.fixture(scope="class")
    def checked(self):
        account = Account(0)
        yield account
        assert account.balance == 2, "a deposit was lost"

    def test_deposits(self, checked):
        deposit_twice(checked, checked.deposit)


class TestRacyCase(unittest.TestCase):
    def test_racy(self):
        account = Account(0)
        deposit_twice(account, account.deposit)
        self.assertEqual(account.balance, 2)
"""


@pytest.fixture
def project(tmp_path):
    """The project's root."""
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "bank").mkdir()
    (tmp_path / "bank" / "__init__.py").write_text(BANK)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text(CONFTEST)
    (tmp_path / "tests" / "test_bank.py").write_text(TESTS)
    return tmp_path


def run(root, *args, command=None):
    """pytest ARGS (or the shell command COMMAND) run from root."""
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]
    if command is not None:
        words = shlex.split(command)
        assert words[0] == "pytest", command
        argv = [sys.executable, "-m", *words]
    env = dict(os.environ, LEDGER=str(root / "ledger.txt"), NOTES=str(root / "notes.txt"))
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=600, check=False)


def verdicts(stdout, file="test_bank.py"):
    """{test name: the rest of its -v line} of the tests of tests/FILE."""
    found = {}
    for line in stdout.splitlines():
        m = re.match(rf"tests/{re.escape(file)}::(\S+) (PASSED|FAILED|SKIPPED)(.*?)(\s+\[\s*\d+%\])?$", line)
        if m:
            found[m.group(1)] = m.group(2) + m.group(3)
    return found


def replay_command(stdout, test):
    """The replay command printed for test."""
    commands = re.findall(r"^Replay: (pytest \S+ --ploom-replay=\S+)  #", stdout, re.M)
    return next(c for c in commands if c.split()[1].endswith("::" + test))


def test_a_project_gets_a_verdict_per_test_and_the_replay_fails_the_same_way(project):
    result = run(project, "--ploom", "-v", "tests/")
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    found = verdicts(out)
    assert found["test_racy"] == "FAILED", out
    assert found["TestRacyCase::test_racy"] == "FAILED", out
    # the race the class fixture's teardown finds
    assert found["TestTeardown::test_deposits"] == "FAILED", out
    assert "\nbuiltins.AssertionError: a deposit was lost\n" in out
    assert re.fullmatch(r"PASSED \(ploom: \d+ schedules, complete\)", found["test_locked[1]"]), out
    assert re.fullmatch(r"PASSED \(ploom: \d+ schedules, complete\)", found["test_locked[5]"]), out
    # one task: its run in pytest's process is its verdict
    assert found["test_single"] == "PASSED (ploom: 1 schedule, complete: one task, run here)", out
    assert found["test_withdraw_once"].startswith("PASSED (ploom: 1 schedule, complete"), out
    # the failure names the racing steps, as ploom-show renders them
    assert "race         thread#1 read Account.balance" in out, out
    assert "in deposit" in out or "deposit" in out
    schedules = int(re.search(r"^ploom: 8 tests explored, (\d+) schedules: 5 complete, 0 incomplete, 3 failed$",
                              out, re.M).group(1))
    # the session fixture was set up and torn down in every schedule of the
    # tests that use it, the failing one too (and in the runs of the
    # failure's minimization)
    racy = int(re.search(r"test_racy _+\n.*\nploom: a schedule failed after (\d+) schedules", out).group(1))
    locked = sum(int(re.search(r"\d+", found[f"test_locked[{n}]"]).group()) for n in (1, 5))
    ledger = (project / "ledger.txt").read_text().split()
    assert ledger.count("setup") == ledger.count("teardown") >= racy + locked, (ledger, out)
    assert schedules > racy + locked

    for test, summary in (("test_racy", "builtins.AssertionError"),
                          ("TestRacyCase::test_racy", "builtins.AssertionError: 1 != 2")):
        command = replay_command(out, test)
        replayed = run(project, command=command)
        assert replayed.returncode == 1, replayed.stdout + replayed.stderr
        assert "1 failed" in replayed.stdout
        assert f"\n{summary}\n" in replayed.stdout, replayed.stdout
        assert "Replayed trace: " in replayed.stdout


def test_two_tasks_over_one_fixture_find_the_race_of_a_single_call_test(project):
    result = run(project, "--ploom", "-v", "--ploom-threads=2", "tests/test_bank.py::test_withdraw_once",
                 "tests/test_bank.py::test_withdraw_unsafe", "tests/test_bank.py::test_single")
    out = result.stdout
    found = verdicts(out)
    assert found["test_withdraw_once"] == "FAILED", out
    assert found["test_withdraw_unsafe"].startswith("PASSED (ploom: 1 schedule"), out
    assert "thread_unsafe: its body ran in one task" in found["test_withdraw_unsafe"], out
    assert "body in 2 tasks" in found["test_single"], out
    assert "builtins.AssertionError" in out
    # the replay runs the body in two tasks again
    replayed = run(project, command=replay_command(out, "test_withdraw_once"))
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "Replayed trace: " in replayed.stdout


def test_the_marker_runs_the_body_in_tasks(project):
    tests = project / "tests" / "test_marked.py"
    tests.write_text(textwrap.dedent("""
        import pytest

        from bank import Account


        @pytest.fixture
        def funded():
            return Account(1)


        @pytest.mark.ploom(threads=2)
        def test_withdraw(funded):
            funded.withdraw(1)
            assert funded.balance >= 0
    """))
    result = run(project, "--ploom", "-q", str(tests))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed" in result.stdout


def test_an_incomplete_search_is_never_a_pass(project):
    failed = run(project, "--ploom", "--ploom-max-schedules=1", "-v", "tests/test_bank.py::test_locked")
    assert failed.returncode == 1, failed.stdout
    assert verdicts(failed.stdout) == {"test_locked[1]": "FAILED", "test_locked[5]": "FAILED"}
    assert "IncompleteExplorationError: the search stopped at --ploom-max-schedules=1 after 1 schedule; " \
           "a limit is never a pass" in failed.stdout, failed.stdout
    assert re.search(r"^ploom: 2 tests explored, 2 schedules: 0 complete, 2 incomplete, 0 failed$",
                     failed.stdout, re.M), failed.stdout
    skipped = run(project, "--ploom", "--ploom-max-schedules=1", "--ploom-incomplete=skip", "-rs",
                  "tests/test_bank.py::test_locked")
    assert skipped.returncode == 0, skipped.stdout
    reasons = re.findall(r"^SKIPPED \[\d+\] tests/test_bank\.py:\d+: (.*)$", skipped.stdout, re.M)
    assert set(reasons) == {"incomplete: 1 schedule explored, stopped at --ploom-max-schedules=1"}, skipped.stdout


def test_a_test_that_forks_is_a_search_stopped_short_not_a_failure_of_its_code(project):
    (project / "tests" / "test_fork.py").write_text(textwrap.dedent("""
        import os


        def test_fork():
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
    """))
    failed = run(project, "--ploom", "-v", "tests/test_fork.py")
    assert failed.returncode == 1, failed.stdout
    assert re.search(r"^tests/test_fork\.py::test_fork FAILED", failed.stdout, re.M), failed.stdout
    assert "IncompleteExplorationError: ploom could not explore tests/test_fork.py::test_fork: " \
           "ploom.UnscheduledPrimitiveError: os.fork() at test_fork.py:6 during a schedule: " \
           "ploom cannot explore a test that starts processes" in failed.stdout, failed.stdout
    assert re.search(r"^ploom: 1 test explored, 0 schedules: 0 complete, 1 incomplete, 0 failed$",
                     failed.stdout, re.M), failed.stdout
    # no failing schedule: nothing saved to run first next time
    assert not (project / ".ploom").exists() or not list((project / ".ploom").iterdir())
    skipped = run(project, "--ploom", "--ploom-incomplete=skip", "-rs", "tests/test_fork.py")
    assert skipped.returncode == 0, skipped.stdout
    reasons = re.findall(r"^SKIPPED \[\d+\] tests/test_fork\.py:\d+: (.*)$", skipped.stdout, re.M)
    assert len(reasons) == 1 and reasons[0].startswith(
        "incomplete: the search stopped at os.fork() at test_fork.py:6 during a schedule"), skipped.stdout


def test_without_ploom_the_tests_run_once(project):
    result = run(project, "-q", "tests/test_bank.py::test_single", "tests/test_bank.py::test_locked")
    assert result.returncode == 0, result.stdout
    assert "ploom:" not in result.stdout


def test_a_library_outside_the_rootdir_is_patched_when_named(project, tmp_path_factory, monkeypatch):
    lib = tmp_path_factory.mktemp("site") / "tally"
    lib.mkdir()
    (lib / "__init__.py").write_text(textwrap.dedent("""
        import threading

        lock = threading.Lock()
        count = [0]

        def bump():
            with lock:
                count[0] += 1
    """))
    (project / "tests" / "test_tally.py").write_text(textwrap.dedent("""
        import threading

        import tally

        def test_bump():
            threads = [threading.Thread(target=tally.bump) for _ in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert tally.count[0] == 2
    """))
    monkeypatch.setenv("PYTHONPATH", str(lib.parent))
    unpatched = run(project, "--ploom", "-q", "tests/test_tally.py")
    patched = run(project, "--ploom", "-v", "--ploom-patch=tally", "tests/test_tally.py")
    (project / "pyproject.toml").write_text(PYPROJECT + 'ploom_patch = ["tally"]\n')
    by_ini = run(project, "--ploom", "-v", "tests/test_tally.py")
    # its real lock is not ploom's: the schedule that takes it says so
    assert unpatched.returncode == 1, unpatched.stdout
    assert "UnscheduledPrimitiveError" in unpatched.stdout, unpatched.stdout
    for result in (patched, by_ini):
        assert result.returncode == 0, result.stdout
        assert re.search(r"test_bump PASSED \(ploom: \d+ schedules, complete\)", result.stdout), result.stdout


def test_a_second_run_fails_at_once_on_the_saved_schedule(project):
    first = run(project, "--ploom", "-q", "tests/test_bank.py::test_racy")
    assert "ploom: a schedule failed after 2 schedules of the search" in first.stdout, first.stdout
    again = run(project, "--ploom", "-q", "tests/test_bank.py::test_racy")
    assert again.returncode == 1, again.stdout
    assert "ploom: a failing schedule saved by an earlier search fails again (no search ran)" in again.stdout
    assert re.search(r"^ploom: 1 test explored, 0 schedules: 0 complete, 0 incomplete, 1 failed$",
                     again.stdout, re.M), again.stdout


def test_in_a_git_work_tree_the_trace_replays_from_any_folder_of_it(project):
    git = ["git", "-c", "user.email=ploom@example.invalid", "-c", "user.name=ploom"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "the project"]):
        subprocess.run([*git, *args], cwd=project, check=True, capture_output=True)
    result = run(project, "--ploom", "-q", "tests/test_bank.py::test_racy")
    assert "source       tests/test_bank.py (blob " in result.stdout, result.stdout
    command = replay_command(result.stdout, "test_racy")
    trace = command.split("--ploom-replay=")[1]
    replayed = run(project / "tests", "test_bank.py::test_racy", f"--ploom-replay=../{trace}")
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "\nbuiltins.AssertionError\n" in replayed.stdout, replayed.stdout
    assert "Replayed trace: " in replayed.stdout


def test_xdist_spreads_the_tests_and_the_summary_counts_them_all(project):
    pytest.importorskip("xdist", reason="pytest-xdist is in the dev group; this environment lacks it")
    result = run(project, "--ploom", "-n", "2", "-v", "tests/")
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert re.search(r"\[gw0\].*(PASSED|FAILED)", out) and re.search(r"\[gw1\].*(PASSED|FAILED)", out), out
    assert re.search(r"FAILED tests/test_bank\.py::test_racy", out), out
    assert re.search(r"PASSED \(ploom: \d+ schedules, complete\) tests/test_bank\.py::test_locked\[5\]", out), out
    assert re.search(r"^ploom: 8 tests explored, \d+ schedules: 5 complete, 0 incomplete, 3 failed$", out, re.M), out


def test_marks_are_honoured_or_refused_with_a_reason(project):
    (project / "tests" / "test_marks.py").write_text(textwrap.dedent("""
        import unittest

        import pytest


        @pytest.mark.ploom(threads=0)
        def test_bad_threads():
            pass


        @pytest.mark.ploom(nonsense=1)
        def test_bad_field():
            pass


        @pytest.mark.skip(reason="not today")
        def test_skipped():
            raise AssertionError("a skipped test ran")


        class TestCase(unittest.TestCase):
            def test_alone(self):
                pass
    """))
    result = run(project, "--ploom", "-v", "-rs", "--ploom-threads=2", "tests/test_marks.py")
    out = result.stdout
    assert "ploom could not explore tests/test_marks.py::test_bad_threads: @pytest.mark.ploom(threads=N) " \
           "needs a count of 1 or more, not 0" in out, out
    assert "ploom could not explore tests/test_marks.py::test_bad_field: " in out
    assert "unexpected keyword argument 'nonsense'" in out
    assert re.search(r"^SKIPPED \[1\] tests/test_marks\.py:\d+: not today$", out, re.M), out
    assert re.search(r"TestCase::test_alone PASSED \(ploom: 1 schedule, .*; TestCaseFunction: its body ran in "
                     r"one task", out), out
    assert re.search(r"^ploom: 3 tests explored, 1 schedule: 1 complete, 0 incomplete, 2 failed$", out, re.M), out


def test_python_m_pytest_finds_the_project_where_it_starts(project):
    # no pythonpath in the configuration: `python -m pytest` alone puts the
    # root, where it starts, on sys.path, and the worker's pytest follows
    (project / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    result = run(project, "--ploom", "-v", "tests/test_bank.py::test_single", "tests/test_bank.py::test_racy")
    found = verdicts(result.stdout)
    assert found["test_racy"] == "FAILED" and found["test_single"].startswith("PASSED (ploom: 1 schedule"), \
        result.stdout
    replayed = run(project, command=replay_command(result.stdout, "test_racy"))
    assert replayed.returncode == 1 and "Replayed trace: " in replayed.stdout, replayed.stdout


def test_a_long_failing_schedule_shows_the_steps_that_lead_to_the_failure(project):
    (project / "tests" / "test_long.py").write_text(textwrap.dedent("""
        import threading

        from bank import Account


        def test_many_deposits():
            account = Account(0)

            def deposits():
                for _ in range(40):
                    account.deposit(1)

            threads = [threading.Thread(target=deposits) for _ in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert account.balance == 80
    """))
    result = run(project, "--ploom", "-q", "tests/test_long.py")
    assert result.returncode == 1, result.stdout
    m = re.search(r"^      \.\.\. (\d+) steps not shown here: ploom-show (\.ploom/\S+\.json) shows them all$",
                  result.stdout, re.M)
    assert m, result.stdout
    # the last steps shown lead to the failing one
    table = result.stdout[m.end():].split("\n\n")[0].strip("\n").splitlines()
    # a row is a step's line and the lines its wrapped place goes on to
    rows = [line for line in table if re.match(r"^[ *!]{2} [a-zA-Z+]* *\d+  ", line)]
    assert len(rows) == 60 and rows[-1].startswith(" !"), table
    shown = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ploom-show"), m.group(2)], cwd=project,
                           capture_output=True, text=True, check=True).stdout
    assert shown.count("deposit\n") >= int(m.group(1)), shown


# ---- the first run, in pytest's process (ploom._alone) ----

ALONE = "test_alone.py"
HERE = "PASSED (ploom: 1 schedule, complete: one task, run here)"
# the worker's verdict of a search of one schedule
WORKER_ONE = "PASSED (ploom: 1 schedule, complete, one order"

ALONE_TESTS = """\
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
def alone(project):
    """The project, with tests of one task and of more in tests/test_alone.py,
    which note what ran in NOTES."""
    (project / "tests" / ALONE).write_text(ALONE_TESTS)
    return project


def picked(*names):
    """The node ids of the tests of tests/test_alone.py called names."""
    return [f"tests/{ALONE}::{name}" for name in names]


def notes(root):
    return [line.split() for line in (root / "notes.txt").read_text().splitlines()]


def test_a_test_of_one_task_gets_its_verdict_from_its_run_here(alone):
    project = alone
    result = run(project, "--ploom", "-v", *picked("test_sum", "test_sum_wrong", "test_computes"))
    out = result.stdout
    found = verdicts(out, ALONE)
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


def test_a_thread_start_sends_the_test_to_the_worker_which_runs_it_from_its_start(alone):
    project = alone
    result = run(project, "--ploom", "-v", *picked("test_racy"))
    out = result.stdout
    assert verdicts(out, ALONE)["test_racy"] == "FAILED", out
    assert re.search(r"ploom: a schedule failed after \d+ schedules of the search", out), out
    assert re.search(r"^Replay: pytest tests/test_alone\.py::test_racy --ploom-replay=", out, re.M), out
    # the run here stopped at the first start; the worker's schedules ran
    # the test from its start, each in a process of its own
    pids = [pid for what, pid in notes(project)]
    assert len(pids) >= 3 and len(set(pids)) == len(pids), pids


def test_a_wait_nothing_can_end_is_the_worker_s_deadlock_not_a_hang(alone):
    project = alone
    result = run(project, "--ploom", "-v", *picked("test_waits_for_nothing", "test_sleeps_long"))
    out = result.stdout
    found = verdicts(out, ALONE)
    assert found["test_waits_for_nothing"] == "FAILED", out
    assert "deadlock: task 0 waits on Queue.not_empty" in out, out
    # ten minutes on the worker's virtual clock
    assert found["test_sleeps_long"].startswith(WORKER_ONE), out


def test_a_start_the_test_catches_still_sends_it_to_the_worker(alone):
    project = alone
    result = run(project, "--ploom", "-v", *picked("test_swallows_the_start"))
    assert verdicts(result.stdout, ALONE)["test_swallows_the_start"].startswith(WORKER_ONE), result.stdout


def test_a_fixture_s_thread_sends_each_test_that_uses_it_to_the_worker(alone):
    project = alone
    result = run(project, "--ploom", "-v", *picked("test_server_one", "test_server_two", "test_sum"))
    out = result.stdout
    found = verdicts(out, ALONE)
    assert found["test_server_one"].startswith(WORKER_ONE), out
    # the module fixture's kept error from the first run here sends it too
    assert found["test_server_two"].startswith(WORKER_ONE), out
    assert found["test_sum"] == HERE, out


def test_a_thread_alive_before_the_tests_sends_every_test_to_the_worker(alone):
    project = alone
    (project / "conftest.py").write_text(textwrap.dedent("""
        import threading

        def pytest_configure(config):
            threading.Thread(target=threading.Event().wait, daemon=True).start()
    """))
    result = run(project, "--ploom", "-v", *picked("test_sum"))
    out = result.stdout
    # the worker's verdict: here, that it cannot start a thread outside a
    # schedule as the conftest does
    assert verdicts(out, ALONE)["test_sum"] != HERE, out
    assert "ploom-explore: cannot load scenario 'pytest:tests/test_alone.py::test_sum'" in out, out


def test_first_run_worker_sends_every_test_to_the_worker(alone):
    project = alone
    result = run(project, "--ploom", "-v", "--ploom-first-run=worker", *picked("test_sum"))
    assert verdicts(result.stdout, ALONE)["test_sum"].startswith(WORKER_ONE), result.stdout
