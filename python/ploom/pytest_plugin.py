"""ploom's pytest plugin: the ``ploom_check`` fixture and ``--ploom-replay``.

Registered through the ``pytest11`` entry point (``ploom =
"ploom.pytest_plugin"`` in pyproject.toml), so installing ploom is enough.
It imports nothing of ploom until a test uses the fixture.

    def test_withdraw(ploom_check):
        ploom_check(scenario)

When the check fails, the ModelCheckError's last line and the test's
report's ``ploom`` section give the next step, for the minimized trace:

    ploom first failure: .ploom/<id>-minimized.json
    Replay: pytest tests/test_bank.py::test_withdraw --ploom-replay=.ploom/<id>-minimized.json  # read it ...

and running that command replays that one schedule instead of searching.
``@pytest.mark.ploom(max_preemptions=2, ...)`` gives the fixture the
:class:`ploom.Config` to use when the test passes none.

While a search runs for more than a second, a terminal shows its progress
after what pytest wrote on the current line, rewritten each second and
erased when the search ends, so that pytest's own output is left as it
was:

    tests/test_bank.py .. ploom: 1,234 schedules (410/s), ~41% of ~3,000, ETA 4 s

Only when pytest writes to a terminal, without ``-q`` and with its output
captured.  Otherwise ploom.check passes on ploom-explore's own progress:
with ``-s`` at a terminal its status line, cleared before any message of
its own; into a log (a file, a pipe, captured output) a line of counts
every 30 seconds at most (``man ploom-explore``, Progress).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import tempfile

import pytest

# The first failing trace of a test (an absolute path), for its report.
_FIRST_FAILURE = pytest.StashKey[str]()


def pytest_addoption(parser):
    group = parser.getgroup("ploom", "ploom (find thread bugs, replay the schedule that failed)")
    group.addoption(
        "--ploom-replay",
        dest="ploom_replay",
        metavar="PATH",
        default=None,
        help="replay the ploom trace PATH instead of exploring, in the test that printed "
        "the command (ploom_check fails the same way when the failure reproduces)",
    )
    group.addoption(
        "--ploom-on-current-source",
        dest="ploom_on_current_source",
        action="store_true",
        default=False,
        help="with --ploom-replay: run the recorded order of tasks on the source as it is "
        "now, edited or not (a fix, say); ploom_check fails if the schedule still fails",
    )


def pytest_configure(config):
    # an empty PATH names no trace: the tests would search instead, and
    # pass, as though nothing had been asked
    if config.getoption("ploom_replay") == "":
        raise pytest.UsageError("--ploom-replay needs a PATH: the value is empty")
    if config.getoption("ploom_on_current_source") and not config.getoption("ploom_replay"):
        raise pytest.UsageError("--ploom-on-current-source replays a trace: give it --ploom-replay=PATH")
    config.addinivalue_line(
        "markers",
        "ploom(**config): the ploom.Config the ploom_check fixture uses in this test when "
        "it is given none, e.g. @pytest.mark.ploom(max_preemptions=2)",
    )


@pytest.fixture
def ploom_check(request):
    """Explores a scenario like :func:`ploom.check`: ``ploom_check(scenario, config=None)``.

    Returns the :class:`ploom.exploration.Statistics` when every schedule
    passes and raises :class:`ploom.exploration.ModelCheckError` at the first
    failure; the test's report then says how to replay it.  Without
    ``config``, the ``ploom`` marker's keywords make it (``Config()`` without
    the marker).

    With ``--ploom-replay=PATH`` it replays that trace instead of exploring:
    it raises ModelCheckError when the recorded failure happens again,
    ReplayDivergenceError when the run does not follow the trace, and
    returns the replayed trace (a dict) when the recorded schedule passes.
    The trace must record the scenario this call checks; it runs under
    the shorter of its schedule timeout and the config's (the search's
    default when the config sets none).  With
    ``--ploom-on-current-source`` too, the scenario's source may have been
    edited since: the recorded order of tasks runs on it as far as it
    allows (see :func:`ploom.exploration.replay`).
    """
    from ploom import exploration

    marker = request.node.get_closest_marker("ploom")
    if marker is not None and marker.args:
        raise pytest.UsageError(
            f"{request.node.nodeid}: @pytest.mark.ploom takes keywords of ploom.Config, "
            f"such as max_preemptions=2, not {marker.args!r}"
        )
    replay_path = request.config.getoption("ploom_replay")
    on_current_source = request.config.getoption("ploom_on_current_source")

    def check(scenario, config=None):
        __tracebackhide__ = True  # the failure is the test's line, not ours
        if config is None:
            config = exploration.Config(**(marker.kwargs if marker is not None else {}))
        if replay_path:
            return _replay(request, scenario, replay_path, on_current_source, _replay_timeout(config))
        status = _Status.on(request.config)
        try:
            return exploration.check(scenario, config, progress=status and status.show)
        except exploration.ModelCheckError as exc:
            _suggest_pytest(request.node, exc)
            _remember(request.node, exc.trace_to_read)
            raise
        finally:
            if status:
                status.clear()

    return check


class _Status:
    """The search's progress at the end of the terminal's current line.

    The text is written after what pytest wrote there and taken back with
    backspaces, never with a carriage return or a newline: pytest's line,
    and its own idea of that line's width, stay as they were.  The text
    is cut to the room left on the line, so that it never wraps (a
    backspace does not go back to the line above)."""

    def __init__(self, reporter, capture):
        self._reporter = reporter
        self._capture = capture
        self._shown = 0

    @classmethod
    def on(cls, config):
        """A status for this session, or None when it should show nothing."""
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        writer = getattr(reporter, "_tw", None)
        if (
            reporter is None
            or not reporter.isatty()
            or reporter.verbosity < 0
            or config.getoption("capture", "no") not in ("fd", "sys")
            # the width of pytest's current line: without it the text could wrap
            or not isinstance(getattr(writer, "width_of_current_line", None), int)
        ):
            return None
        return cls(reporter, config.pluginmanager.get_plugin("capturemanager"))

    def show(self, report):
        """Shows one of ploom-explore's progress reports (a dict)."""
        if report.get("done"):
            self.clear()
            return
        writer = self._reporter._tw
        used = writer.width_of_current_line
        if used < 0:
            return  # a control character on the line: its width is unknown
        room = writer.fullwidth - used - 2
        text = f" ploom: {report.get('summary', '')}"[: max(room, 0)]
        # back over the old text, the new one, blanks over what is left of
        # the old, and back to the new one's end
        extra = max(self._shown - len(text), 0)
        self._write("\b" * self._shown + text + " " * extra + "\b" * extra)
        self._shown = len(text)

    def clear(self):
        if self._shown:
            self._write("\b" * self._shown + " " * self._shown + "\b" * self._shown)
            self._shown = 0

    def _write(self, text):
        # the test's output is captured: the terminal is pytest's alone for
        # the length of a write, as for pytest's live logging
        suspended = self._capture.global_and_fixture_disabled() if self._capture else contextlib.nullcontext()
        with suspended:
            self._reporter.write_raw(text, flush=True)


def _replay_command(item, trace):
    """The command that replays trace in this test, and the trace's path,
    both as seen from the folder pytest was started in."""
    shown = _relative(trace, item.config.invocation_params.dir)
    return f"pytest {shlex.quote(_nodeid(item))} --ploom-replay={shlex.quote(shown)}", shown


def _suggest_pytest(node, exc):
    """Makes the ModelCheckError's next step this test's replay command."""
    if exc.trace_to_read:
        exc._suggest(*_replay_command(node, exc.trace_to_read))


def _remember(node, trace):
    if trace and _FIRST_FAILURE not in node.stash:
        node.stash[_FIRST_FAILURE] = os.path.abspath(trace)


def _replay_timeout(config):
    """The schedule timeout of the test's replay: the test's own, that of
    the search it runs without --ploom-replay (the search's default when
    its Config sets none).  ploom-replay runs the trace under the shorter
    of it and the trace's, so a trace cannot ask a test for more time than
    the test gives a schedule."""
    from ploom import _ploom

    if config.schedule_timeout is None:
        return _ploom.DEFAULT_SCHEDULE_TIMEOUT
    return config.schedule_timeout


def _replay(request, scenario, path, on_current_source, schedule_timeout):
    __tracebackhide__ = True
    from ploom import exploration

    absolute = os.path.join(request.config.invocation_params.dir, os.path.expanduser(path))
    data = _read_trace(absolute)
    if data is not None:
        try:
            recorded = _recorded_scenario(data)
        except ValueError as exc:
            pytest.fail(
                f"cannot read trace '{path}': {exc}",
                pytrace=False,
            )
        ours, matches = _scenario_of(scenario, recorded)
        if not matches:
            pytest.fail(
                f"trace '{path}' records scenario '{recorded['module']}:{recorded['qualname']}', "
                f"this test checks '{ours}'",
                pytrace=False,
            )
    try:
        if data is None:
            # a trace that cannot be opened, or is too large, is
            # ploom-replay's to explain, and it runs nothing then
            return exploration.replay(
                absolute, on_current_source=on_current_source, schedule_timeout=schedule_timeout
            )
        # ploom-replay gets the very bytes checked here: a pipe is read
        # once, and a file may change after this check
        with tempfile.TemporaryFile() as f:
            f.write(data)
            f.seek(0)
            return exploration._replay_from(
                absolute,
                f,
                None,
                named=True,
                on_current_source=on_current_source,
                options=exploration._replay_options(schedule_timeout),
            )
    except exploration.ModelCheckError as exc:
        _suggest_pytest(request.node, exc)
        _remember(request.node, absolute)
        raise


# ploom-replay's own limit (PLOOM_TRACE_MAX_BYTES): a larger trace is
# refused by it, and runs nothing.
_TRACE_MAX_BYTES = 256 << 20


def _read_trace(path):
    """The bytes of the trace at path, or None when it cannot be opened or
    is larger than ploom-replay reads."""
    try:
        if os.path.isdir(path):
            return None
        with open(path, "rb") as f:
            data = f.read(_TRACE_MAX_BYTES + 1)
    except OSError:
        return None
    return None if len(data) > _TRACE_MAX_BYTES else data


def _recorded_scenario(data):
    """The trace's "scenario" object, read as strictly as ploom-replay
    reads it: ValueError when the trace is not valid UTF-8 JSON, holds a
    NUL character in a string (a C reader would see a shorter one), or
    names no scenario."""
    from ploom import exploration

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"invalid UTF-8 at byte {exc.start}") from None
    try:
        trace = exploration.loads_strict(text)
        scenario = trace["scenario"]
    except (KeyError, TypeError, RecursionError):
        raise ValueError("it names no scenario") from None
    if _holds_nul(trace):
        raise ValueError("a string holds a NUL character")
    if not isinstance(scenario, dict) or not all(
        isinstance(scenario.get(k), str) for k in ("target", "module", "qualname")
    ):
        raise ValueError("it names no scenario")
    return scenario


def _holds_nul(value):
    """Whether a string of the JSON value, a key or a value, holds NUL."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if "\0" in v:
                return True
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


def _scenario_of(scenario, recorded):
    """("module:qualname" of the scenario, whether the trace records it)."""
    from ploom import exploration
    from ploom._worker import split_target

    target, _ = exploration._target(scenario)
    _, qualname, is_file = split_target(target)
    if is_file:
        # found by its file (a module no other process imports by its name):
        # the worker named the module after the file, so compare the targets
        return f"{scenario.__module__}:{qualname}", recorded["target"] == target
    return target, f"{recorded['module']}:{recorded['qualname']}" == target


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    trace = item.stash.get(_FIRST_FAILURE, None)
    if trace and report.when == "call" and report.failed:
        from ploom.exploration import _next_step

        command, shown = _replay_command(item, trace)
        report.sections.append(("ploom", f"ploom first failure: {shown}\n{_next_step(command, shown)}"))


def _relative(path, start):
    """path relative to start when it lies under start, else absolute."""
    relative = os.path.relpath(path, start)
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return os.path.abspath(path)
    return relative


def _nodeid(item):
    """The node id as a command run from the invocation folder names it
    (pytest's ids are relative to the rootdir, which may be above)."""
    config = item.config
    file_part, sep, rest = item.nodeid.partition("::")
    path = os.path.join(str(config.rootpath), file_part)
    return _relative(path, config.invocation_params.dir) + sep + rest
