"""Where each step stopped, and the names of tasks and objects, as the
extension records them through the worker into a trace.

The scenarios are module-level functions of this file: the worker imports
this module to run them.  Their lines are found by the markers in their
comments, so that an edit above them moves nothing a test asserts.
"""

import json
import os
import re
import subprocess

import pytest

import ploom
import ploom.threading as pthreading
from ploom._utility import find_utility

HERE = os.path.abspath(__file__)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
# the trace's files are relative to the repository's work tree
RELATIVE = os.path.relpath(HERE, ROOT)


def _line(marker):
    """The line of this file whose comment is `# where: MARKER`."""
    with open(HERE, encoding="utf-8") as f:
        lines = [n for n, text in enumerate(f, 1) if text.rstrip().endswith(f"# where: {marker}")]
    assert len(lines) == 1, marker
    return lines[0]


def named_bank():
    balance = ploom.SharedCell(100, name="balance")

    def withdraw():  # where: def withdraw
        if balance.read() >= 100:  # where: check
            balance.write(balance.read() - 100)  # where: withdraw

    mathieu = ploom.Thread(target=withdraw, name="mathieu")
    lucas = ploom.Thread(target=withdraw)
    mathieu.start()  # where: start mathieu
    lucas.start()
    mathieu.join()
    lucas.join()
    assert balance.read() >= 0, "the account is overdrawn"  # where: assert


def condition_handoff():
    cond = pthreading.Condition()
    ready = ploom.SharedCell(False)

    def waiter():
        with cond:  # where: with cond
            while not ready.read():
                cond.wait()  # where: cond.wait

    def notifier():
        with cond:  # where: notifier with cond
            ready.write(True)
            cond.notify()

    t = ploom.Thread(target=waiter, name="waiter")
    t.start()
    notifier()
    t.join()


def renamed_and_odd_names():
    lock = ploom.Lock(name="vault\x1b[2J")
    ploom.SharedCell(0, name="x" * 300).read()
    t = ploom.Thread(target=lambda: None, name="first")
    t.start()
    t.name = "second"
    with lock:
        pass
    t.join()
    ploom.main_thread().name = "boss"
    ploom.yield_now()


def _run_one(target, *choices):
    """The trace of one schedule of TARGET, a function of this file."""
    run = subprocess.run(
        [find_utility("ploom-run-one"), f"{RELATIVE}:{target}", *map(str, choices)],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )
    assert run.returncode in (0, 1), run.stderr
    return json.loads(run.stdout)


def _where(step):
    w = step.get("where")
    return (w["file"], w["line"], w["function"]) if w else None


def test_each_step_names_its_line_in_the_scenario():
    trace = _run_one("named_bank", 0, 1, 1, 2, 2, 2, 2)
    steps = trace["steps"]
    assert trace["outcome"]["kind"] == "failure"
    by_op = [(s["task"], s["op"], _where(s)) for s in steps]
    assert (0, "start", (RELATIVE, _line("start mathieu"), "named_bank")) in by_op
    # a thread's begin is the first line of its function
    assert (1, "begin", (RELATIVE, _line("def withdraw"), "withdraw")) in by_op
    assert (1, "read", (RELATIVE, _line("check"), "withdraw")) in by_op
    assert (2, "write", (RELATIVE, _line("withdraw"), "withdraw")) in by_op
    assert by_op[-1] == (0, "read", (RELATIVE, _line("assert"), "named_bank"))
    assert all(_where(s) for s in steps)


def test_names_are_recorded_and_shown():
    trace = _run_one("named_bank", 0, 1, 1, 2, 2, 2, 2)
    assert trace["tasks"] == [
        {"id": 0, "name": "MainThread"},
        {"id": 1, "name": "mathieu"},
        # a thread without a name is called as its object
        {"id": 2, "name": "thread#2"},
    ]
    assert trace["objects"] == [{"object": "cell#0", "name": "balance"}]
    # the steps keep naming objects as they did: names are information
    assert {s["object"] for s in trace["steps"] if s["op"] == "read"} == {"cell#0"}
    shown = subprocess.run([find_utility("ploom-show")], input=json.dumps(trace),
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    name = RELATIVE  # a file of the repository, relative to its root
    assert (f"race         mathieu read balance ({name}:{_line('check')}) before thread#2 "
            f"wrote it ({name}:{_line('withdraw')})") in shown.stdout
    header = next(line for line in shown.stdout.splitlines() if line.split()[:1] == ["step"])
    assert header.split() == ["step", "MainThread", "mathieu", "thread#2", "where"]
    assert "  read balance -> 100  " in shown.stdout
    # the where column wraps, after a '/' or a ':' or at a space: joined up
    # again, a step's place reads whole
    joined = re.sub(r"\n {20,}(?=\S)", " ", re.sub(r"([/:])\n +(?=\S)", r"\1", shown.stdout))
    assert f"{name}:{_line('check')} withdraw\n" in joined, shown.stdout


def test_a_step_inside_ploom_threading_names_the_callers_line():
    # the waiter runs first, so it waits
    trace = _run_one("condition_handoff", 1)
    waiter = [s for s in trace["steps"] if s["task"] == 1]
    # the waiter's steps stop inside Condition.__enter__ and wait(), in
    # ploom/threading.py: each names the scenario's line that called them
    assert waiter, trace["steps"]
    places = {_where(s) for s in waiter if s["op"] != "begin"}
    assert (RELATIVE, _line("with cond"), "waiter") in places
    assert (RELATIVE, _line("cond.wait"), "waiter") in places
    notifier = {_where(s) for s in trace["steps"] if s["task"] == 0}
    assert (RELATIVE, _line("notifier with cond"), "notifier") in notifier
    for s in trace["steps"]:
        assert "ploom/" not in _where(s)[0], s


def test_names_are_cleaned_cut_and_the_last_one_counts():
    trace = _run_one("renamed_and_odd_names")
    tasks = {t["id"]: t["name"] for t in trace["tasks"]}
    # renamed while it ran: the last name; the main thread's own too
    assert tasks == {0: "boss", 1: "second"}
    objects = {o["object"]: o["name"] for o in trace["objects"]}
    # control characters as '?', cut at 128 bytes
    assert objects == {"lock#0": "vault?[2J", "cell#0": "x" * 128}


def test_names_outside_a_check():
    assert ploom.Lock().name.startswith("lock#")
    assert ploom.Lock(name="vault").name == "vault"
    assert ploom.SharedCell(1, name=7).name == "7"
    cell = ploom.SharedCell(2)
    assert cell.name == f"cell#{int(cell.name[5:])}"
    assert repr(ploom.SharedCell(name="balance")).startswith("<ploom.SharedCell 'balance' cell#")
    assert repr(ploom.Lock(name="vault")).startswith("<ploom.Lock 'vault' lock#")
    with pytest.raises(TypeError):
        ploom.Lock("vault")
    with pytest.raises(AttributeError):
        ploom.Lock().name = "x"
