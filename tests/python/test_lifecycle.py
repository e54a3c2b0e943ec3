"""No ploom process outlives the program that called ploom.check, even when
that program is killed and so cannot clean up."""

import os
import signal
import subprocess
import sys
import time

import ploom
import scenarios

HERE = os.path.dirname(os.path.abspath(__file__))


def endless():
    # far too many schedules to finish while the test watches
    cell = ploom.SharedCell(0)

    def inc():
        cell.write(cell.read() + 1)

    threads = [ploom.Thread(target=inc) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def _ploom_processes(marker: str) -> list[int]:
    """Pids of the processes whose command line names `marker`."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().decode("utf-8", "replace")
        except OSError:
            continue
        if marker in cmdline:
            pids.append(int(entry))
    return pids


def _wait_for(predicate, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_killing_the_caller_of_check_stops_the_search(tmp_path):
    marker = "test_lifecycle:endless"
    code = (
        "import sys, ploom\n"
        f"sys.path.insert(0, {HERE!r})\n"
        "import test_lifecycle\n"
        f"ploom.check(test_lifecycle.endless, ploom.Config(trace_dir={str(tmp_path)!r}))\n"
    )
    caller = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # the utility and its worker are running...
        assert _wait_for(lambda: len(_ploom_processes(marker)) >= 2, 30)
        caller.send_signal(signal.SIGKILL)
        caller.wait()
        # ...and all of them end without the caller's help
        assert _wait_for(lambda: not _ploom_processes(marker), 10), _ploom_processes(marker)
    finally:
        for pid in _ploom_processes(marker):
            os.kill(pid, signal.SIGKILL)
        if caller.poll() is None:
            caller.kill()
            caller.wait()


def test_a_program_started_in_a_session_of_its_own_does_not_outlive_check(tmp_path, monkeypatch):
    # the scenario's sleeps, and no other test's (scenarios._sleeper)
    duration = f"300.{os.getpid()}{time.monotonic_ns() % 100000}"
    monkeypatch.setenv("PLOOM_TEST_SLEEP", duration)
    try:
        stats = ploom.check(scenarios.starts_a_session, ploom.Config(trace_dir=str(tmp_path)))
        assert stats.schedules > 1
        assert not scenarios._sleepers_running()
    finally:
        for pid in scenarios._sleepers_running():
            os.kill(pid, signal.SIGKILL)
