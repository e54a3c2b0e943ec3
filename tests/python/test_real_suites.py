"""Real libraries' own test suites, unmodified, under pytest --ploom.

DBUtils (a pool of DB-API connections) and fasteners (reader-writer and
inter-process locks) are pinned in the dev group; scripts/fetch-suites
unpacks the tests/ folders of their pinned sdists into build/suites, and
the session fixture below runs it, so that this file needs nothing but the
network the first time.  Each run copies a suite into its own folder, with
a pytest.ini of its own that makes it the rootdir (not this project's
pyproject.toml), and runs pytest --ploom there, as a user of the library
would, with the library patched.

Real threads pass every one of these tests (the suites' own CI, and
`pytest` on them here): so every test must get a verdict that is a pass, or
a skip that says why (a search stopped short, "incomplete:", or a skip mark
of the suite's own), and none may fail.  make check runs a slice that
starts threads; make soak runs the whole suites.
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SUITES = ROOT / "build" / "suites"
# the pytest --ploom options of the acceptance run: a budget per test, and a
# stopped search a skip rather than a failure
OPTIONS = ["--ploom-max-schedules=400", "--ploom-incomplete=skip"]

# name: (folder under SUITES, the modules to patch).  fasteners' tests run
# their threads in a ThreadPoolExecutor: concurrent.futures too.
LIBRARIES = {
    "dbutils": ("dbutils-3.2.0", ["dbutils"]),
    "fasteners": ("fasteners-0.20", ["fasteners", "concurrent.futures"]),
}

# make check's slice: tests that start threads, each a few seconds, with
# the verdict each is to get: "passed", or the words its "incomplete:"
# skip must say (a limit, or the processes the test starts)
SLICE = {
    "dbutils": {
        # threads sharing a pool of two connections: hundreds of orders
        "tests/test_pooled_db.py::test_three_threads_two_connections[1]": "passed",
        "tests/test_simple_pooled_db.py::test_threadsafety_1": "passed",
        # a thread blocked on the pool until the test returns a connection
        "tests/test_pooled_db.py::test_maxconnections_blocking[2]": "passed",
        "tests/test_threading_local.py::test_threadlocal": "passed",
        # more orders than the budget
        "tests/test_persistent_db.py::test_threads": "stopped at --ploom-max-schedules=400",
    },
    "fasteners": {
        "tests/test_lock.py::test_double_reader_writer": "passed",
        "tests/test_lock.py::test_writer_to_reader_ctx": "passed",
        "tests/test_decorators.py::test_read_write_locked": "passed",
        # releasing an unheld lock raises threading.ThreadError
        "tests/test_process_lock.py::test_bad_release": "passed",
        # two threads, a thousand rounds each: longer than a schedule's steps
        "tests/test_lock.py::test_deadlock_reproducer": "stopped at a schedule's step limit",
        # processes: forked, or fed by a pool's threads
        "tests/test_process_lock.py::test_interprocess_lock": "os.fork() at popen_fork.py",
        "tests/test_eventlet.py::test_eventlet_spawn_n_bugfix": "(module multiprocessing.",
    },
}


@pytest.fixture(scope="session")
def suites():
    """SUITES, fetched if need be; skips, saying why, only when the package
    index cannot be reached."""
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "fetch-suites"), str(SUITES), *LIBRARIES],
                       capture_output=True, text=True, timeout=600, check=False)
    if r.returncode == 3:
        pytest.skip(f"NOT TESTED: the real suites could not be fetched, the package index is unreachable:\n"
                    f"{r.stderr.strip()}")
    assert r.returncode == 0, f"scripts/fetch-suites failed (exit {r.returncode}):\n{r.stderr}"
    return SUITES


def _explore(suites, tmp_path, library, tests=()):
    """{node id: (verdict, message)} of pytest --ploom run on library's
    suite (only tests, when given), and pytest's output."""
    folder, patch = LIBRARIES[library]
    project = tmp_path / folder
    shutil.copytree(suites / folder, project)
    (project / "pytest.ini").write_text("[pytest]\n")
    report = tmp_path / "report.xml"
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", f"--junitxml={report}", "--ploom",
            *(f"--ploom-patch={p}" for p in patch), *OPTIONS, *(tests or ["tests"])]
    env = dict(os.environ)
    env.pop("PYTEST_ADDOPTS", None)
    r = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=3600, check=False)
    out = r.stdout + r.stderr
    assert report.is_file(), out
    verdicts = {}
    for case in ET.parse(report).iter("testcase"):
        path = case.get("classname", "").replace(".", "/")
        node = f"{path}.py::{case.get('name')}"
        outcome = [c for c in case if c.tag in ("failure", "error", "skipped")]
        if not outcome:
            verdicts[node] = ("passed", "")
        else:
            verdicts[node] = (outcome[0].tag, outcome[0].get("message", ""))
    return verdicts, out


def _collected(project_suite, tmp_path, library):
    """The node ids pytest collects from library's whole suite, without ploom."""
    folder, _ = LIBRARIES[library]
    project = tmp_path / "collect" / folder
    shutil.copytree(project_suite / folder, project)
    (project / "pytest.ini").write_text("[pytest]\n")
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q", "tests"],
                       cwd=project, capture_output=True, text=True, timeout=600, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    return {line for line in r.stdout.splitlines() if "::" in line}


def _no_failure(verdicts, out):
    failed = {node: v for node, v in verdicts.items() if v[0] in ("failure", "error")}
    assert not failed, f"tests that real threads pass failed under pytest --ploom: {failed}\n{out}"
    # a skip always says why: a search stopped short, or the suite's own mark
    unexplained = {node: v for node, v in verdicts.items() if v[0] == "skipped" and not v[1].strip()}
    assert not unexplained, unexplained


@pytest.mark.parametrize("library", sorted(SLICE))
def test_a_slice_of_the_suite_gets_the_verdicts_real_threads_agree_with(suites, tmp_path, library):
    expected = SLICE[library]
    verdicts, out = _explore(suites, tmp_path, library, list(expected))
    _no_failure(verdicts, out)
    assert sorted(verdicts) == sorted(expected), out
    for node, want in expected.items():
        verdict, message = verdicts[node]
        if want == "passed":
            assert verdict == "passed", (node, verdicts[node], out)
        else:
            assert verdict == "skipped" and message.startswith("incomplete:") and want in message, \
                (node, verdicts[node], out)
    passed = sum(want == "passed" for want in expected.values())
    assert re.search(rf"^ploom: {len(expected)} tests explored, \d+ schedules?: {passed} complete, "
                     rf"{len(expected) - passed} incomplete, 0 failed$", out, re.M), out


@pytest.mark.soak
@pytest.mark.parametrize("library", sorted(LIBRARIES))
def test_the_whole_suite_gets_a_verdict_for_every_test_and_none_fails(suites, tmp_path, library):
    verdicts, out = _explore(suites, tmp_path, library)
    _no_failure(verdicts, out)
    assert set(verdicts) == _collected(suites, tmp_path, library), out
    passed = sum(v[0] == "passed" for v in verdicts.values())
    incomplete = sum(v[0] == "skipped" and v[1].startswith("incomplete:") for v in verdicts.values())
    # every test that was explored passed or was stopped short
    assert re.search(rf"^ploom: {passed + incomplete} tests explored, \d+ schedules?: {passed} complete, "
                     rf"{incomplete} incomplete, 0 failed$", out, re.M), out
