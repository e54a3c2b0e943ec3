"""The pytest plugin, through pytest's own pytester: the ploom_check fixture,
the lines a failing test prints, the replay command they give, and
--ploom-replay, and the progress a long search shows on a terminal.

Each test writes a test module into pytester's folder and runs pytest there,
as a user would; the plugin comes from its pytest11 entry point."""

import fcntl
import hashlib
import importlib.util
import json
import os
import pty
import re
import shlex
import struct
import subprocess
import sys
import termios
import textwrap
import time
from importlib.metadata import entry_points

import pytest

from bank_copy import add_lock, write_bank

pytest_plugins = ["pytester"]

TESTS = textwrap.dedent(
    """
    import os

    import pytest

    from bank import locked, scenario


    def counted():
        # one line per schedule run, to count them (each schedule is a
        # fresh process: only a file outlives it)
        with open(os.environ["RUNS_FILE"], "a") as f:
            f.write("run\\n")
        scenario()


    def test_withdraw(ploom_check):
        ploom_check(scenario)


    def test_locked(ploom_check):
        stats = ploom_check(locked)
        assert stats.schedules == 127


    def test_counted(ploom_check):
        ploom_check(counted)


    @pytest.mark.ploom(max_preemptions=0)
    def test_bounded(ploom_check):
        assert ploom_check(scenario).schedules == 3
    """
)


@pytest.fixture
def bank_tests(pytester, monkeypatch):
    """test_bank.py and its scenarios (bank.py) in pytester's folder."""
    write_bank(pytester.path, "bank")
    pytester.makepyfile(test_bank=TESTS)
    monkeypatch.setenv("RUNS_FILE", str(pytester.path / "runs.txt"))
    return pytester


def replay_line(result):
    """The "Replay: pytest ..." line of the report's ploom section, split
    into words as a shell does (what follows "#" is a comment), after
    checking that the error's last line gives the same next step. Only the
    ploom section is read: on CI (CI or BUILD_NUMBER set) pytest's short
    summary repeats the whole error message, its Replay line too."""
    section = ploom_section(result.outlines)
    found = [line for line in section if line.startswith("Replay: ")]
    assert len(found) == 1, result.outlines
    assert any(line.startswith("E ") and line.endswith(found[0]) for line in result.outlines), result.outlines
    return shlex.split(found[0].removeprefix("Replay: "), comments=True)


def ploom_section(lines):
    """The lines of the report's "ploom" section, up to the next header."""
    start = next(i for i, line in enumerate(lines) if re.fullmatch(r"-+ ploom -+", line))
    end = next((i for i in range(start + 1, len(lines)) if re.fullmatch(r"[-=]+ .* [-=]+", lines[i])), len(lines))
    return lines[start + 1 : end]


def test_the_plugin_is_registered_by_its_entry_point():
    plugins = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert plugins.get("ploom") == "ploom.pytest_plugin"


def test_the_option_and_the_marker_are_registered(pytester):
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["ploom*", "*--ploom-replay=PATH*"])
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.ploom(**config):*"])


def test_a_failing_scenario_prints_its_first_failure_and_the_replay_command(bank_tests):
    result = bank_tests.runpytest("test_bank.py::test_withdraw")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E * ploom.exploration.ModelCheckError: builtins.AssertionError: the account is overdrawn",
            "E * Original trace: .ploom/*-original.json",
            "E * Minimized trace: .ploom/*-minimized.json",
            "E * Replay: pytest test_bank.py::test_withdraw --ploom-replay=.ploom/*-minimized.json"
            "  # read it with: ploom-show .ploom/*-minimized.json",
            "*- ploom -*",
            "ploom first failure: .ploom/*-minimized.json",
            "Replay: pytest test_bank.py::test_withdraw --ploom-replay=.ploom/*-minimized.json"
            "  # read it with: ploom-show .ploom/*-minimized.json",
        ]
    )
    assert "python -m ploom replay" not in result.stdout.str()
    first = re.search(r"^ploom first failure: (\S+)$", result.stdout.str(), re.M).group(1)
    assert re.fullmatch(r"\.ploom/[0-9a-f]{16}-minimized\.json", first)
    assert (bank_tests.path / first).is_file()
    assert replay_line(result) == ["pytest", "test_bank.py::test_withdraw", f"--ploom-replay={first}"]


def test_a_failing_scenario_shows_its_race_and_each_tasks_steps_inline(bank_tests):
    result = bank_tests.runpytest("test_bank.py::test_withdraw")
    result.assert_outcomes(failed=1)
    section = ploom_section(result.outlines)
    text = (bank_tests.path / "bank.py").read_text(encoding="utf-8").splitlines()
    check = text.index("        if balance.read() >= 100:") + 1
    write = text.index("            balance.write(balance.read() - 100)") + 1
    # the racing pair by the lines of the source, as ploom-show says it
    assert f"race         mathieu read balance (bank.py:{check}) before lucas wrote it (bank.py:{write})" in section
    # a column per task and a row per step, with the line it stopped on
    assert any(re.fullmatch(r" +step  MainThread +mathieu +lucas +where", line) for line in section), section
    assert any(re.fullmatch(rf"   a +\d+ +read balance -> 100 +bank\.py:{check} withdraw", line) for line in section)
    assert any(re.fullmatch(r" ! +\d+  read balance -> -100 +bank\.py:\d+ scenario", line) for line in section)
    # the same drawing as ploom-show's of the trace it names
    first = re.search(r"^ploom first failure: (\S+)$", result.stdout.str(), re.M).group(1)
    ploom_show = os.path.join(os.path.dirname(sys.executable), "ploom-show")
    drawn = subprocess.run([ploom_show, first], cwd=bank_tests.path, capture_output=True, text=True, check=True)
    assert "\n".join(section).find(drawn.stdout.rstrip("\n")) > 0, section


def test_a_failing_queue_scenario_reads_in_the_queues_operations(pytester):
    pytester.makepyfile(
        test_handoff=textwrap.dedent(
            """
            import ploom
            import ploom.queue as queue


            def handoff():
                q = queue.Queue()
                producer = ploom.Thread(target=lambda: q.put(3), name="producer")
                producer.start()
                assert q.get() == 4
                producer.join()


            def test_handoff(ploom_check):
                ploom_check(handoff)
            """
        )
    )
    result = pytester.runpytest("test_handoff.py")
    result.assert_outcomes(failed=1)
    section = "\n".join(ploom_section(result.outlines))
    # the queue's operations, not the acquire and release of its mutex
    assert re.search(r"^ +\w* +\d+  +put 3  +test_handoff\.py:\d+", section, re.M), section
    assert re.search(r"^ +\w* +\d+  get -> 3  +test_handoff\.py:\d+", section, re.M), section
    assert "end get" in section and "acquire Queue.mutex" not in section, section


def test_a_timeout_says_where_each_task_was(pytester):
    pytester.makepyfile(
        test_spin=textwrap.dedent(
            """
            import pytest

            import ploom


            def spin_here_forever():
                while True:
                    pass


            def scenario():
                t = ploom.Thread(target=spin_here_forever, name="worker-1")
                t.start()
                t.join()


            @pytest.mark.ploom(schedule_timeout=0.5)
            def test_spin(ploom_check):
                ploom_check(scenario)
            """
        )
    )
    result = pytester.runpytest("test_spin.py")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E * ploom.exploration.ModelCheckError: timeout: the schedule ran longer than 0.5 s",
            "E * Original trace: .ploom/*-original.json",
            "E *Where each task was:",
            "E *  MainThread was in: test_spin.py:14 in scenario",
            # the loop's line on 3.13, its body's on 3.14
            "E *  thread#1 (worker-1) was in: test_spin.py:[78] in spin_here_forever",
            "E * Replay: pytest test_spin.py::test_spin --ploom-replay=.ploom/*.json  # read it with: *",
            "*- ploom -*",
            "ploom first failure: .ploom/*.json",
        ]
    )


def test_a_passing_scenario_passes_without_ploom_lines(bank_tests):
    result = bank_tests.runpytest("test_bank.py::test_locked", "test_bank.py::test_bounded")
    result.assert_outcomes(passed=2)
    assert "ploom first failure" not in result.stdout.str()
    assert not (bank_tests.path / ".ploom").exists()


def test_the_printed_command_replays_one_schedule_and_fails_the_same_way(bank_tests):
    result = bank_tests.runpytest("test_bank.py::test_counted")
    result.assert_outcomes(failed=1)
    runs = bank_tests.path / "runs.txt"
    assert len(runs.read_text().splitlines()) > 1  # the search ran several schedules
    runs.unlink()

    command = replay_line(result)
    assert command[0] == "pytest"
    # exactly the printed command, in a fresh interpreter
    replayed = bank_tests.runpytest_subprocess(*command[1:])
    replayed.assert_outcomes(failed=1)
    replayed.stdout.fnmatch_lines(
        ["E * ploom.exploration.ModelCheckError: builtins.AssertionError: the account is overdrawn*"]
    )
    assert runs.read_text().splitlines() == ["run"]
    # and it prints the same command again
    assert replay_line(replayed) == command


def test_a_trace_from_a_process_substitution_replays(bank_tests):
    result = bank_tests.runpytest("test_bank.py::test_withdraw")
    minimized = re.search(r"Minimized trace: (\S+\.json)", result.stdout.str()).group(1)
    replayed = subprocess.run(
        f"{shlex.quote(sys.executable)} -m pytest -p no:cacheprovider test_bank.py::test_withdraw "
        f"--ploom-replay=<(cat {shlex.quote(minimized)})",
        shell=True,
        executable="/bin/bash",
        cwd=bank_tests.path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert replayed.returncode == 1, replayed.stdout
    assert "1 failed" in replayed.stdout
    assert "ploom.exploration.ModelCheckError: builtins.AssertionError: the account is overdrawn" in replayed.stdout
    assert "No such file or directory" not in replayed.stdout


def test_replaying_the_minimized_trace_fails_the_same_way(bank_tests):
    result = bank_tests.runpytest("test_bank.py::test_withdraw")
    minimized = re.search(r"Minimized trace: (\S+\.json)", result.stdout.str()).group(1)
    replayed = bank_tests.runpytest("test_bank.py::test_withdraw", f"--ploom-replay={minimized}")
    replayed.assert_outcomes(failed=1)
    replayed.stdout.fnmatch_lines(
        [
            "E * ploom.exploration.ModelCheckError: builtins.AssertionError: the account is overdrawn",
            # the trace replayed, labelled so, and the same next step
            f"E * Replayed trace: {minimized}",
            f"E * Replay: pytest test_bank.py::test_withdraw --ploom-replay={minimized}"
            f"  # read it with: ploom-show {minimized}",
            f"ploom first failure: {minimized}",
        ]
    )


def test_replaying_another_tests_trace_is_a_clear_error(bank_tests):
    result = bank_tests.runpytest("test_bank.py::test_withdraw")
    trace = replay_line(result)[2].removeprefix("--ploom-replay=")
    other = bank_tests.runpytest("test_bank.py::test_locked", f"--ploom-replay={trace}")
    other.assert_outcomes(failed=1)
    other.stdout.fnmatch_lines([f"trace '{trace}' records scenario 'bank:scenario', this test checks 'bank:locked'"])
    assert "ModelCheckError" not in other.stdout.str()


def test_a_replay_after_an_edit_fails_with_a_divergence(bank_tests):
    result = bank_tests.runpytest("test_bank.py::test_withdraw")
    command = replay_line(result)
    with open(bank_tests.path / "bank.py", "a", encoding="utf-8") as f:
        f.write("# an edit\n")
    replayed = bank_tests.runpytest(*command[1:])
    replayed.assert_outcomes(failed=1)
    replayed.stdout.fnmatch_lines(
        [
            "E * ploom.exploration.ReplayDivergenceError: the scenario's source changed: "
            f"'{bank_tests.path / 'bank.py'}' (recorded blob *, now *)"
        ]
    )
    assert "ploom first failure" not in replayed.stdout.str()


def test_a_replay_on_the_current_source_fails_after_a_comment_and_passes_after_the_fix(bank_tests):
    result = bank_tests.runpytest("test_bank.py::test_withdraw")
    command = replay_line(result)
    with open(bank_tests.path / "bank.py", "a", encoding="utf-8") as f:
        f.write("# an edit\n")
    replayed = bank_tests.runpytest(*command[1:], "--ploom-on-current-source")
    replayed.assert_outcomes(failed=1)
    replayed.stdout.fnmatch_lines(
        ["E * ploom.exploration.ModelCheckError: builtins.AssertionError: the account is overdrawn*"]
    )
    add_lock(bank_tests.path / "bank.py")
    fixed = bank_tests.runpytest(*command[1:], "--ploom-on-current-source")
    fixed.assert_outcomes(passed=1)


def test_a_saved_failure_fails_again_first_unless_the_marker_says_saved_false(bank_tests):
    bank_tests.runpytest("test_bank.py::test_withdraw").assert_outcomes(failed=1)
    bank_tests.makepyfile(
        test_saved=textwrap.dedent(
            """
            import pytest

            from bank import scenario
            from ploom.exploration import ModelCheckError


            def test_again(ploom_check):
                with pytest.raises(ModelCheckError) as info:
                    ploom_check(scenario)
                stats = info.value.statistics
                assert (stats.saved_runs, stats.saved_failing, stats.schedules) == (1, 1, 0)


            @pytest.mark.ploom(saved=False)
            def test_search_only(ploom_check):
                with pytest.raises(ModelCheckError) as info:
                    ploom_check(scenario)
                stats = info.value.statistics
                assert (stats.saved_runs, stats.saved_failing, stats.schedules) == (0, 0, 7)
            """
        )
    )
    bank_tests.runpytest("test_saved.py").assert_outcomes(passed=2)


def test_on_current_source_without_a_trace_is_a_usage_error(bank_tests):
    result = bank_tests.runpytest("test_bank.py::test_withdraw", "--ploom-on-current-source")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ploom-on-current-source replays a trace: give it --ploom-replay=PATH*"])


def test_a_missing_replay_trace_is_an_error_naming_it(bank_tests):
    result = bank_tests.runpytest("test_bank.py::test_withdraw", "--ploom-replay=.ploom/nope.json")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*ploom-replay: cannot read trace '*/.ploom/nope.json': No such file or directory"])


def test_the_command_names_the_test_from_the_folder_pytest_runs_in(bank_tests):
    # pytest run from a subfolder: the node id and the trace are given
    # relative to that folder, so the command works where it was printed
    sub = bank_tests.mkdir("sub")
    os.rename(bank_tests.path / "bank.py", sub / "bank.py")
    os.rename(bank_tests.path / "test_bank.py", sub / "test_bank.py")
    bank_tests.makeini("[pytest]\n")
    os.chdir(sub)
    result = bank_tests.runpytest("test_bank.py::test_withdraw")
    result.assert_outcomes(failed=1)
    command = replay_line(result)
    assert command[1] == "test_bank.py::test_withdraw"
    assert re.fullmatch(r"--ploom-replay=\.ploom/[0-9a-f]{16}-minimized\.json", command[2])
    replayed = bank_tests.runpytest(*command[1:])
    replayed.assert_outcomes(failed=1)


def test_the_marker_passes_patch_to_the_config(bank_tests):
    bank_tests.makepyfile(
        test_patched=textwrap.dedent(
            """
            import pytest

            from bank import locked


            @pytest.mark.ploom(patch=("bank",))
            def test_patched(ploom_check):
                ploom_check(locked)


            @pytest.mark.ploom(patch="bank")
            def test_a_string(ploom_check):
                ploom_check(locked)
            """
        )
    )
    result = bank_tests.runpytest("test_patched.py")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*Config.patch must be a tuple of module names, not the string 'bank'*"])


def test_the_marker_passes_instrument_to_the_config(bank_tests):
    # the names reach ploom-explore, which judges them: a bad one is its
    # usage error, before any worker (and any rewriting) runs
    bank_tests.makepyfile(
        test_instrumented=textwrap.dedent(
            """
            import pytest

            from bank import locked


            @pytest.mark.ploom(instrument=("bad-name",))
            def test_bad_name(ploom_check):
                ploom_check(locked)


            @pytest.mark.ploom(instrument="bank")
            def test_a_string(ploom_check):
                ploom_check(locked)


            @pytest.mark.ploom(reduction="dpor", instrument=("-",))
            def test_only_those_named(ploom_check):
                stats = ploom_check(locked)
                assert (stats.instrument, stats.instrument_scenario) == ((), False)
            """
        )
    )
    result = bank_tests.runpytest("test_instrumented.py")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        ["*ploom-explore: invalid --instrument 'bad-name': not a module name (Python identifiers joined by '.')*"]
    )
    result.stdout.fnmatch_lines(["*Config.instrument must be a tuple of module names, not the string 'bank'*"])


@pytest.mark.skipif(
    importlib.util.find_spec("ploom._instrument") is None,
    reason="ploom._instrument (the plain-state rewriter) is not in this tree yet: "
    "no worker can instrument a module",
)
def test_the_marker_instruments_the_modules_it_names(bank_tests):
    bank_tests.makepyfile(
        test_instrumented=textwrap.dedent(
            """
            import pytest

            from bank import locked


            @pytest.mark.ploom(instrument=("-", "bank"), max_preemptions=0)
            def test_instrumented(ploom_check):
                stats = ploom_check(locked)
                assert (stats.instrument, stats.instrument_scenario) == (("bank",), False)
            """
        )
    )
    result = bank_tests.runpytest("test_instrumented.py")
    result.assert_outcomes(passed=1)


def test_a_trace_with_two_scenario_keys_cannot_pass_the_plugins_check(bank_tests):
    """Python's json keeps the last of two members of one name and cJSON the
    first: a trace could show the plugin one scenario and run another. Both
    readers refuse such a trace, so nothing runs."""
    result = bank_tests.runpytest("test_bank.py::test_locked", "test_bank.py::test_withdraw")
    trace = replay_line(result)[2].removeprefix("--ploom-replay=")
    text = (bank_tests.path / trace).read_text(encoding="utf-8")
    payload = bank_tests.path / "payload.py"
    payload.write_text('open("ran.txt", "w").close()\ndef locked():\n    pass\n', encoding="utf-8")
    forged = (
        '{"scenario": {"target": "payload:locked", "module": "payload", "qualname": "locked", '
        f'"file": "{payload}"}}, ' + text.lstrip()[1:]
    )
    (bank_tests.path / "forged.json").write_text(forged, encoding="utf-8")
    replayed = bank_tests.runpytest("test_bank.py::test_withdraw", "--ploom-replay=forged.json")
    replayed.assert_outcomes(failed=1)
    replayed.stdout.fnmatch_lines(["*cannot read trace '*forged.json': duplicate key 'scenario'"])
    assert not (bank_tests.path / "ran.txt").exists()


def _forged_payload_trace(bank_tests, text):
    """The bank's trace made to run payload:locked, a module in the test's
    folder that leaves ran.txt when imported, with its real blob id: what
    ploom-replay would run if the plugin's scenario check let it through."""
    payload = bank_tests.path / "payload.py"
    source = b'open("ran.txt", "w").close()\ndef locked():\n    pass\n'
    payload.write_bytes(source)
    blob = hashlib.sha1(b"blob %d\0" % len(source) + source).hexdigest()
    trace = json.loads(text)
    trace["scenario"] = {"target": "payload:locked", "module": "payload", "qualname": "locked",
                         "file": str(payload), "relpath": "payload.py"}
    trace["source"] = {"root": "folder"}
    trace["fingerprints"] = [{"path": str(payload), "blob": blob, "relpath": "payload.py"}]
    return json.dumps(trace, indent=1)


@pytest.mark.parametrize(
    ("forge", "message"),
    [
        # invalid UTF-8, which Python's reader refused and a C reader read
        (lambda t: t.replace('"outcome": {', '"outcome": {"x": "\udcff", ', 1).encode("utf-8", "surrogateescape"),
         "cannot read trace 'forged.json': invalid UTF-8 at byte *"),
        # a NUL in a key, which a C reader cuts short
        (lambda t: t.replace('"outcome": {', '"outcome": {"x\\u0000": 1, ', 1).encode(),
         "cannot read trace 'forged.json': a string holds a NUL character"),
        # larger than the plugin once looked at
        (lambda t: (t + " " * (17 << 20)).encode(),
         "trace 'forged.json' records scenario 'payload:locked', this test checks 'bank:scenario'"),
    ],
    ids=["invalid-utf8", "nul", "17MiB"],
)
def test_a_trace_the_plugin_cannot_check_runs_nothing(bank_tests, forge, message):
    result = bank_tests.runpytest("test_bank.py::test_withdraw")
    trace = replay_line(result)[2].removeprefix("--ploom-replay=")
    text = _forged_payload_trace(bank_tests, (bank_tests.path / trace).read_text(encoding="utf-8"))
    (bank_tests.path / "forged.json").write_bytes(forge(text))
    replayed = bank_tests.runpytest("test_bank.py::test_withdraw", "--ploom-replay=forged.json")
    replayed.assert_outcomes(failed=1)
    replayed.stdout.fnmatch_lines([f"*{message}"])
    assert not (bank_tests.path / "ran.txt").exists()


# ---- progress on a terminal ----

SLOW = textwrap.dedent(
    """
    import select

    import ploom


    def racy():
        # a tenth of a second a schedule: 32 schedules with at most two
        # preemptions outlast three progress reports (select waits,
        # time.sleep is ploom's virtual clock)
        select.select([], [], [], 0.1)
        x = ploom.SharedCell(0)

        def inc():
            x.write(x.read() + 1)

        ts = [ploom.Thread(target=inc) for _ in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    """
)

SLOW_TESTS = textwrap.dedent(
    """
    import pytest

    from slow import racy


    def test_before():
        pass


    # depth-first search over ploom's operations alone: 32 schedules
    @pytest.mark.ploom(max_preemptions=2, instrument=("-",))
    def test_slow(ploom_check):
        assert ploom_check(racy).schedules == 32


    def test_after():
        pass
    """
)


def in_a_terminal(folder, *args):
    """Runs pytest with ARGS in folder on a pseudo-terminal 100 columns wide,
    as a person would; returns its exit status and everything it wrote."""
    primary, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    env = {name: value for name, value in os.environ.items() if name not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=folder, stdin=secondary, stdout=secondary, stderr=secondary, env=env,
    )
    os.close(secondary)
    chunks = []
    while True:
        try:
            data = os.read(primary, 65536)
        except OSError:  # EIO: the last writer has gone
            break
        if not data:
            break
        chunks.append(data)
    os.close(primary)
    return proc.wait(timeout=60), b"".join(chunks).decode("utf-8", "replace")


def screen(raw):
    """The lines a terminal shows after raw: colours left out, carriage
    returns and backspaces applied."""
    lines, line, col = [], [], 0
    for ch in re.sub(r"\x1b\[[0-9;]*m", "", raw):
        if ch == "\n":
            lines.append("".join(line).rstrip())
            line, col = [], 0
        elif ch == "\r":
            col = 0
        elif ch == "\b":
            col = max(col - 1, 0)
        else:
            line[col:col + 1] = [ch]
            col += 1
    return lines + ["".join(line).rstrip()]


@pytest.fixture
def slow_tests(pytester):
    pytester.makepyfile(slow=SLOW, test_slow=SLOW_TESTS)
    return pytester.path


def test_a_long_check_shows_its_progress_on_a_terminal_then_erases_it(slow_tests):
    status, raw = in_a_terminal(slow_tests, "test_slow.py")
    assert status == 0, raw
    # shown after the first test's dot, with the estimate once ten schedules are done
    assert re.search(r"test_slow\.py \S*\.\S* ploom: [0-9]+ schedules \([0-9.]+/s\)", raw), raw
    assert re.search(r" ploom: [0-9]+ schedules \([0-9.]+/s\), ~[0-9.]+% of ~[0-9]+, ETA [0-9]+ s", raw), raw
    # and gone: the screen is pytest's own
    shown = screen(raw)
    assert not [line for line in shown if "ploom:" in line], shown
    assert [line for line in shown if re.fullmatch(r"test_slow\.py \.\.\. +\[100%\]", line)], shown


@pytest.mark.parametrize("option", ["-q", "-s"])
def test_no_progress_with_q_or_without_capture(slow_tests, option):
    status, raw = in_a_terminal(slow_tests, option, "test_slow.py")
    assert status == 0, raw
    assert "ploom:" not in raw
    assert "\b" not in raw


def test_no_progress_when_pytest_does_not_write_to_a_terminal(slow_tests, pytester):
    result = pytester.runpytest("test_slow.py")
    result.assert_outcomes(passed=3)
    assert "ploom:" not in result.stdout.str()


def test_an_empty_replay_path_is_a_usage_error(bank_tests):
    result = bank_tests.runpytest("test_bank.py::test_locked", "--ploom-replay=")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ploom-replay needs a PATH: the value is empty*"])
    # nothing was searched
    assert "passed" not in result.stdout.str()


SLEEPER = textwrap.dedent(
    """
    import select

    import pytest


    def scenario():
        # blocked outside ploom (whose clock time.sleep follows)
        select.select([], [], [], 60)


    @pytest.mark.ploom(schedule_timeout=0.5)
    def test_short(ploom_check):
        ploom_check(scenario)


    def test_default(ploom_check):
        ploom_check(scenario)
    """
)


@pytest.mark.parametrize(("test", "limit", "most"), [("test_short", "0.5", 8), ("test_default", "10", 30)])
def test_a_trace_cannot_ask_a_replay_for_more_time_than_the_test_gives(pytester, test, limit, most):
    """A trace asking for 1e9 s runs under the test's schedule timeout (the
    marker's, else the search's default), as ploom-replay --schedule-timeout
    runs it."""
    pytester.makepyfile(test_sleep=SLEEPER)
    result = pytester.runpytest("test_sleep.py::test_short")
    trace = replay_line(result)[2].removeprefix("--ploom-replay=")
    data = json.loads((pytester.path / trace).read_text(encoding="utf-8"))
    assert data["config"]["schedule_timeout_s"] == 0.5
    data["config"]["schedule_timeout_s"] = 1e9
    (pytester.path / "forged.json").write_text(json.dumps(data), encoding="utf-8")
    start = time.monotonic()
    replayed = pytester.runpytest(f"test_sleep.py::{test}", "--ploom-replay=forged.json")
    elapsed = time.monotonic() - start
    replayed.assert_outcomes(failed=1)
    replayed.stdout.fnmatch_lines([f"*the schedule ran longer than {limit} s*"])
    assert elapsed < most
