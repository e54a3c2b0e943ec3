"""ploom's pytest plugin: ``pytest --ploom``, the ``ploom_check`` fixture
and ``--ploom-replay``.

``pytest --ploom`` explores each selected test instead of running it once
(the _Explorer below): for each test, ploom-explore runs from the rootdir
on the target ``pytest:NODEID``, whose worker collects that test with
pytest and runs its whole protocol in each schedule
(ploom._pytest_target); the test's report is the search's verdict.  The
modules it patches are gathered in one place, patch_list().

Registered through the ``pytest11`` entry point (``ploom =
"ploom.pytest_plugin"`` in pyproject.toml), so installing ploom is enough.
It imports nothing of ploom until a test uses the fixture but the table of
:class:`ploom.Config`'s fields, whose names, with the prefix ``ploom_``,
are the ini keys it registers (``ploom_patch = mylib.account``, read with
``[tool.ploom]`` by :func:`ploom._settings.find_settings`).

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
import io
import os
import shlex
import sys
import tempfile

import pytest

from ploom import _alone, _utility

# the threads alive as pytest loads its plugins, before any conftest or test
# module runs: pytest's own, and xdist's in its workers
_SESSION_THREADS = _alone.baseline()

# The first failing trace of a test (an absolute path), for its report.
_FIRST_FAILURE = pytest.StashKey[str]()
# set on a test whose run in this process was stopped (ploom._alone)
_ELSEWHERE = pytest.StashKey[bool]()


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
        "--ploom",
        dest="ploom_explore",
        action="store_true",
        default=False,
        help="explore every selected test's schedules instead of running it once "
        "(pytest's collection in ploom's worker, each schedule a fork that runs the test's "
        "fixtures, call and teardown under ploom's scheduler)",
    )
    group.addoption(
        "--ploom-patch",
        dest="ploom_patch",
        action="append",
        default=[],
        metavar="PKG",
        help="with --ploom: a library whose threading the explored tests' schedules run under "
        "ploom (repeatable; the ploom_patch ini key adds more). The rootdir's own modules "
        "are patched without it",
    )
    group.addoption(
        "--ploom-max-schedules",
        dest="ploom_max_schedules",
        type=int,
        default=_MAX_SCHEDULES,
        metavar="N",
        help=f"with --ploom: the schedules one test may explore (default {_MAX_SCHEDULES}); "
        "a search it stops is incomplete, never a pass",
    )
    group.addoption(
        "--ploom-max-seconds",
        dest="ploom_max_seconds",
        type=float,
        default=_MAX_SECONDS,
        metavar="S",
        help=f"with --ploom: the seconds one test's search may take (default {_MAX_SECONDS:g}); "
        "a search it stops is incomplete, never a pass",
    )
    group.addoption(
        "--ploom-incomplete",
        dest="ploom_incomplete",
        choices=("fail", "skip"),
        default="fail",
        help="with --ploom: what an incomplete search makes of its test: fail (the default, "
        "with IncompleteExplorationError) or skip (a reason that starts 'incomplete:')",
    )
    group.addoption(
        "--ploom-threads",
        dest="ploom_threads",
        type=int,
        default=1,
        metavar="N",
        help="with --ploom: run each test's body in N tasks at once over the same fixture "
        "values, and explore their orders (a test marked thread_unsafe runs in one)",
    )
    group.addoption(
        "--ploom-first-run",
        dest="ploom_first_run",
        choices=("here", "worker"),
        default="here",
        help="with --ploom: where each test runs first: here (the default), in pytest's process, "
        "where a test that starts no thread or process and never waits idle gets its verdict "
        "from that one run, its only schedule, and any other goes to the worker; or worker, "
        "every test explored in ploom's worker",
    )
    group.addoption(
        "--ploom-on-current-source",
        dest="ploom_on_current_source",
        action="store_true",
        default=False,
        help="with --ploom-replay: run the recorded order of tasks on the source as it is "
        "now, edited or not (a fix, say); ploom_check fails if the schedule still fails",
    )
    from ploom._settings import INI_PREFIX, ini_keys

    for key, kind in ini_keys():
        parser.addini(
            key,
            f"ploom: Config's {key.removeprefix(INI_PREFIX)} for ploom_check "
            "(with [tool.ploom]; the test's own Config wins)",
            type="linelist" if kind == "names" else "string",
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
        "it is given none, e.g. @pytest.mark.ploom(max_preemptions=2); under --ploom, the "
        "test's own search's, and threads=N runs its body in N tasks",
    )
    config.addinivalue_line(
        "markers",
        "thread_unsafe: under --ploom-threads, the test's body runs in one task",
    )
    if config.getoption("ploom_threads") < 1:
        raise pytest.UsageError("--ploom-threads needs a count of 1 or more")
    if config.getoption("ploom_max_schedules") < 1:
        raise pytest.UsageError("--ploom-max-schedules needs a count of 1 or more")
    if config.getoption("ploom_max_seconds") <= 0:
        raise pytest.UsageError("--ploom-max-seconds needs a number of seconds above 0")
    if config.getoption("ploom_explore") or config.getoption("ploom_replay"):
        config.pluginmanager.register(_Explorer(config), "ploom-explorer")


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
    if marker is not None and "threads" in marker.kwargs:
        raise pytest.UsageError(
            f"{request.node.nodeid}: @pytest.mark.ploom(threads=N) is for pytest --ploom, "
            "which runs the test's body in N tasks; ploom_check explores a scenario"
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
            return exploration.check_with(scenario, config, status and status.show, _project_settings(request))
        except exploration.ModelCheckError as exc:
            _suggest_pytest(request.node, exc)
            _remember(request.node, exc.trace_to_read)
            raise
        finally:
            if status:
                status.clear()

    return check


def _project_settings(request):
    """The settings of the project pytest runs in, found from its rootdir."""
    from ploom import _settings

    return _settings.find_settings(request.config.rootpath)


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
            return exploration.replay_from(
                absolute,
                f,
                None,
                named=True,
                on_current_source=on_current_source,
                options=exploration.replay_options(schedule_timeout),
            )
    except exploration.ModelCheckError as exc:
        _suggest_pytest(request.node, exc)
        _remember(request.node, absolute)
        raise
    except exploration.ReplayDivergenceError as exc:
        if on_current_source or not str(exc).startswith("the scenario's source changed: "):
            raise
        # an edit (a fix, say) is what a user most often meets here
        command, _ = _replay_command(request.node, absolute)
        raise exploration.ReplayDivergenceError(
            f"{exc}\nReplay on the current source: {command} --ploom-on-current-source", exc.trace
        ) from None


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

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"invalid UTF-8 at byte {exc.start}") from None
    try:
        trace = _utility.loads_strict(text)
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

    target, _ = exploration.target_of(scenario)
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
    if call.excinfo is not None and isinstance(call.excinfo.value, (_alone.Elsewhere, _alone.Waiting)):
        # a fixture's error that pytest kept from an earlier run here:
        # that run was stopped, so this one goes to the worker too
        item.stash[_ELSEWHERE] = True
    trace = item.stash.get(_FIRST_FAILURE, None)
    if trace and report.when == "call" and report.failed:
        from ploom.exploration import next_step

        command, shown = _replay_command(item, trace)
        # the race and each task's steps, drawn as pytest --ploom draws its failures
        drawn = _show(trace, str(item.config.invocation_params.dir))
        lines = [f"ploom first failure: {shown}"]
        if drawn:
            lines += ["", drawn.rstrip(), ""]
        report.sections.append(("ploom", "\n".join([*lines, next_step(command, shown)])))


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


# --ploom's budget per test: a suite of a few hundred tests stays a matter
# of minutes, and a test whose search needs more says so (incomplete).
_MAX_SCHEDULES = 2000
_MAX_SECONDS = 60.0


def project_modules(rootdir):
    """The modules imported from files under rootdir, outside any
    installed environment there (a .venv in the project), by their
    top-most names: the test modules, the conftests and the project's
    own packages, as the session imported them while collecting."""
    import sysconfig

    root = os.path.realpath(str(rootdir)) + os.sep
    installed = {os.path.realpath(p) + os.sep for key, p in sysconfig.get_paths().items()
                 if key in ("stdlib", "platstdlib", "purelib", "platlib") and p}
    installed.add(os.path.realpath(sys.prefix) + os.sep)
    names = []
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not isinstance(file, str) or name == "__main__" or name.split(".")[0] in ("ploom", "pytest", "_pytest"):
            continue
        real = os.path.realpath(file)
        if not real.startswith(root) or any(real.startswith(p) for p in installed):
            continue
        if all(part.isidentifier() for part in name.split(".")):
            names.append(name)
    chosen = set(names)
    # a package's submodules are patched with it
    return sorted(n for n in chosen if not any(n.startswith(p + ".") for p in chosen))


def patch_list(config):
    """The modules every test explored by --ploom patches: the project's
    own (project_modules), then the project's settings' patch
    ([tool.ploom] or the ploom_patch ini key, _settings.find_settings),
    then those of --ploom-patch.  The one place the plugin gathers them."""
    from ploom._settings import find_settings

    settings = find_settings(config.rootpath)
    names = [*project_modules(config.rootpath), *settings.values.get("patch", ()),
             *config.getoption("ploom_patch")]
    return tuple(dict.fromkeys(name.strip() for name in names if name.strip()))


class _Explorer:
    """pytest --ploom: each selected test explored in ploom's worker
    instead of run once here (ploom._pytest_target), and its verdict in
    pytest's terms; and the replay of such a test's trace."""

    def __init__(self, config):
        self.config = config
        self.explore = config.getoption("ploom_explore")
        self.patch = None
        self._trace = None  # the --ploom-replay trace, once read: False when not --ploom's
        # `python -m pytest` puts the folder it starts in first on sys.path,
        # where the tests may import the project from: the worker's
        # pytest finds it there too (the worker itself starts with -P)
        here = str(config.invocation_params.dir)
        self.path = here if any(os.path.abspath(p or os.curdir) == here for p in sys.path) else None
        self.tests = self.schedules = 0
        self.searches = {"complete": 0, "incomplete": 0, "failed": 0}
        self.here = config.getoption("ploom_first_run") == "here"

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        replay = self.config.getoption("ploom_replay")
        if replay:
            trace = self._pytest_trace(replay)
            uses_fixture = "ploom_check" in getattr(item, "fixturenames", ())
            if trace is None or (isinstance(trace, str) and uses_fixture):
                return None  # a ploom_check trace: the fixture replays it, or says why not
            if isinstance(trace, str):
                run = lambda: self._report(item, "call", "failed", trace)  # noqa: E731
            else:
                run = lambda: self._replay(item, trace)  # noqa: E731
        elif "ploom_check" in getattr(item, "fixturenames", ()) or not self.explore:
            return None  # the test explores its own scenario
        elif self.here and self._run_here(item, nextitem):
            return True
        else:
            run = lambda: self._explore(item)  # noqa: E731
        from _pytest.skipping import evaluate_skip_marks

        ihook = item.ihook
        ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        skipped = evaluate_skip_marks(item)
        if skipped is not None:
            reports = [self._report(item, "setup", "skipped", (str(item.path), (item.location[1] or 0) + 1,
                                                                 f"Skipped: {skipped.reason}"))]
        else:
            reports = [self._report(item, "setup", "passed")]
            reports.append(run())
        reports.append(self._report(item, "teardown", "passed"))
        for report in reports:
            ihook.pytest_runtest_logreport(report=report)
        ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True

    def _run_here(self, item, nextitem):
        """Runs item in this process as one task (ploom._alone): True when
        that run is its verdict, logged here; False when it goes to the
        worker, nothing logged."""
        from _pytest.runner import runtestprotocol

        try:
            threads, note = self._threads(item)
            self._config(item)
        except (TypeError, ValueError):
            return False  # the worker's path says what is wrong with the mark
        if threads > 1 or _alone.others(_SESSION_THREADS):
            return False
        try:
            with _alone.alone():
                reports = runtestprotocol(item, nextitem=nextitem, log=False)
        except (_alone.Elsewhere, _alone.Waiting):
            # stopped in pytest's own code around the test's: the worker's
            # run is the verdict all the same
            reports = []
        if _alone.why() or item.stash.get(_ELSEWHERE, False) or _alone.others(_SESSION_THREADS):
            # the worker runs it from its start, and says all there is
            item._report_sections.clear()
            return False
        ihook = item.ihook
        ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        for report in reports:
            if report.when == "call" and not report.skipped:
                report.ploom_note = "ploom: 1 schedule, complete: one task, run here" + (f"; {note}" if note else "")
                _searched(report, "complete" if report.passed else "failed", None)
                report.ploom_schedules = 1
                if report.failed:
                    report.sections.append(("ploom", "ploom: one task, run here: this run is its only schedule, "
                                                     "and running the test again replays it"))
            ihook.pytest_runtest_logreport(report=report)
        ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True

    def _report(self, item, when, outcome, longrepr=None, duration=0.0, note=None):
        from _pytest.reports import TestReport

        sections = [(f"Captured {key} {when}", text) for w, key, text in item._report_sections if w == when]
        if note and when == "call":
            sections.append(("ploom", note))
        report = TestReport(item.nodeid, item.location, {k: 1 for k in item.keywords}, outcome, longrepr, when,
                            sections, duration, user_properties=item.user_properties)
        report.ploom_note = note
        return report

    def _threads(self, item):
        """(tasks that run the test's body, what -v says of them or None)."""
        marker = item.get_closest_marker("ploom")
        threads = self.config.getoption("ploom_threads")
        if marker is not None and "threads" in marker.kwargs:
            threads = marker.kwargs["threads"]
            if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
                raise ValueError(f"@pytest.mark.ploom(threads=N) needs a count of 1 or more, not {threads!r}")
        if threads > 1 and item.get_closest_marker("thread_unsafe") is not None:
            return 1, "thread_unsafe: its body ran in one task"
        from ploom import _pytest_target

        if threads > 1 and not _pytest_target.has_body(item):
            return 1, f"{type(item).__name__}: its body ran in one task (threads= runs a test function's)"
        return threads, None

    def _config(self, item):
        from ploom import exploration

        if self.patch is None:
            self.patch = patch_list(self.config)
        marker = item.get_closest_marker("ploom")
        fields = {k: v for k, v in (marker.kwargs if marker is not None else {}).items() if k != "threads"}
        fields.setdefault("reduction", "dpor")
        fields.setdefault("max_schedules", self.config.getoption("ploom_max_schedules"))
        fields.setdefault("time_limit", self.config.getoption("ploom_max_seconds"))
        fields["patch"] = tuple(dict.fromkeys([*self.patch, *fields.get("patch", ())]))
        return exploration.Config(**fields)

    def _explore(self, item):
        """The call's report of item's exploration."""
        import time

        from ploom import _pytest_target, exploration

        start = time.monotonic()
        try:
            threads, note = self._threads(item)
            config = self._config(item)
        except (TypeError, ValueError) as exc:
            # a mark's field that Config has not, or a value it refuses
            report = self._report(item, "call", "failed", f"ploom could not explore {item.nodeid}: {exc}")
            return _searched(report, "failed", None)
        target = _pytest_target.make_target(item.nodeid, threads)
        root = str(self.config.rootpath)
        status = _Status.on(self.config)
        said = io.StringIO()
        try:
            try:
                # ploom-explore's messages and the worker's output are the
                # test's, shown with its report as pytest shows captured output
                with _chdir(root), contextlib.redirect_stderr(said):
                    stats = exploration.explore(target, self.path, config, progress=status and status.show)
            finally:
                if status:
                    status.clear()
                if said.getvalue():
                    item.add_report_section("call", "stderr", said.getvalue())
        except exploration.ModelCheckError as exc:
            report = self._failure(item, exc, root, time.monotonic() - start, note)
            return _searched(report, "failed", exc.statistics)
        except exploration.IncompleteExplorationError as exc:
            stats = exc.statistics
            duration = time.monotonic() - start
            if self.config.getoption("ploom_incomplete") == "skip":
                count = _schedules(stats.schedules if stats else 0)
                reason = f"incomplete: {count} explored, {_stopped(stats, config)}"
                report = self._report(item, "call", "skipped", (str(item.path), (item.location[1] or 0) + 1, reason),
                                      duration, note)
            else:
                count = _schedules(stats.schedules if stats else 0)
                text = (f"IncompleteExplorationError: the search {_stopped(stats, config)} after {count}; "
                        "a limit is never a pass: the schedules not explored may fail")
                report = self._report(item, "call", "failed", text, duration, note)
            return _searched(report, "incomplete", stats)
        except exploration.SetupError as exc:
            from ploom import _guard

            duration = time.monotonic() - start
            if not _guard.processes(str(exc)):
                report = self._report(item, "call", "failed", f"ploom could not explore {item.nodeid}: {exc}",
                                      duration, note)
                return _searched(report, "failed", None)
            # no option makes a test that starts processes explorable: its
            # search stops short, which is what --ploom-incomplete judges
            if self.config.getoption("ploom_incomplete") == "skip":
                said = str(exc).removeprefix("ploom.UnscheduledPrimitiveError: ")
                reason = f"incomplete: the search stopped at {_stripped(said)}"
                report = self._report(item, "call", "skipped", (str(item.path), (item.location[1] or 0) + 1, reason),
                                      duration, note)
            else:
                text = (f"IncompleteExplorationError: ploom could not explore {item.nodeid}: {exc}; "
                        "a search stopped short is never a pass")
                report = self._report(item, "call", "failed", text, duration, note)
            return _searched(report, "incomplete", None)
        except (RuntimeError, ValueError) as exc:
            report = self._report(item, "call", "failed", f"ploom could not explore {item.nodeid}: {exc}",
                                  time.monotonic() - start, note)
            return _searched(report, "failed", None)
        verdict = f"ploom: {_schedules(stats.schedules)}, complete"
        if stats.schedules == 1:
            verdict += ", one order: no second task, or none whose steps conflict"
        if threads > 1:
            verdict += f", body in {threads} tasks"
        report = self._report(item, "call", "passed", None, time.monotonic() - start,
                              f"{verdict}; {note}" if note else verdict)
        return _searched(report, "complete", stats)

    def _failure(self, item, exc, root, duration, note):
        """The call's report of a failing schedule: what failed, how (the
        steps, as ploom-show renders the trace), the traces, and the
        command that replays it."""
        trace = _under(root, exc.trace_to_read)
        lines = [_stripped(exc.summary)]
        stats = exc.statistics
        if stats is not None and stats.saved_failing:
            lines.append("ploom: a failing schedule saved by an earlier search fails again (no search ran)")
        elif stats is not None:
            lines.append(f"ploom: a schedule failed after {_schedules(stats.schedules)} of the search")
        shown = _show(trace, _replay_dir(root, item.nodeid, trace))
        if shown:
            lines += ["", shown.rstrip(), ""]
        for label, path in (("Original trace", exc.original_trace), ("Minimized trace", exc.minimized_trace)):
            if path:
                lines.append(f"{label}: {_relative(_under(root, path), self.config.invocation_params.dir)}")
        from ploom.exploration import next_step

        command, shown_trace = _replay_command(item, trace)
        lines.append(next_step(command, shown_trace))
        if note:
            lines.append(note)
        return self._report(item, "call", "failed", "\n".join(lines), duration, note)

    def _pytest_trace(self, path):
        """(absolute path, node id, threads, recorded bytes) of a trace of
        pytest --ploom's, or None for another trace."""
        from ploom import _pytest_target

        if self._trace is not None:
            return self._trace or None
        self._trace = False
        absolute = os.path.join(self.config.invocation_params.dir, os.path.expanduser(path))
        # a pipe is read once, by the ploom_check fixture that replays it
        data = _read_trace(absolute) if os.path.isfile(absolute) else None
        if data is None:
            return None
        try:
            target = _recorded_scenario(data)["target"]
            if not _pytest_target.is_pytest_target(target):
                return None
            nodeid, threads = _pytest_target.split(target)
        except ValueError as exc:
            self._trace = f"cannot read trace '{path}': {exc}"
            return self._trace
        self._trace = (absolute, nodeid, threads, data)
        return self._trace

    def _replay(self, item, trace):
        """The call's report of item's replay of a --ploom trace."""
        import time

        from ploom import exploration

        absolute, nodeid, _, data = trace
        start = time.monotonic()
        if nodeid != item.nodeid:
            return self._report(item, "call", "failed",
                                f"trace '{absolute}' records test {nodeid!r}, not this one", 0.0)
        root = str(self.config.rootpath)
        with tempfile.TemporaryFile() as f:
            f.write(data)
            f.seek(0)
            try:
                with _chdir(_replay_dir(root, nodeid, absolute)), _on_pythonpath(self.path):
                    exploration.replay_from(
                        absolute, f, None, named=True,
                        on_current_source=self.config.getoption("ploom_on_current_source"),
                        options=[],
                    )
            except exploration.ModelCheckError as exc:
                command, shown = _replay_command(item, absolute)
                text = "\n".join([_stripped(exc.summary), "", (_show(absolute, _replay_dir(root, nodeid, absolute))
                                                                or "").rstrip(), "",
                                  f"Replayed trace: {shown}", exploration.next_step(command, shown)])
                return self._report(item, "call", "failed", text, time.monotonic() - start)
            except (exploration.ReplayDivergenceError, exploration.IncompleteExplorationError, RuntimeError) as exc:
                return self._report(item, "call", "failed", f"{type(exc).__name__}: {exc}",
                                    time.monotonic() - start)
        return self._report(item, "call", "passed", None, time.monotonic() - start,
                            "ploom: the replayed schedule passed")

    def pytest_report_teststatus(self, report, config):
        note = getattr(report, "ploom_note", None)
        if note and report.when == "call" and report.passed:
            return "passed", ".", (f"PASSED ({note})", {"green": True})
        return None

    def pytest_runtest_logreport(self, report):
        # counted from the reports, which are all the session has of the
        # tests that another process ran
        search = getattr(report, "ploom_search", None)
        if report.when == "call" and search in self.searches:
            self.tests += 1
            self.searches[search] += 1
            self.schedules += getattr(report, "ploom_schedules", 0) or 0

    def pytest_terminal_summary(self, terminalreporter):
        if self.tests:
            terminalreporter.write_line(
                f"ploom: {_counted(self.tests, 'test')} explored, {_schedules(self.schedules)}: "
                f"{self.searches['complete']} complete, {self.searches['incomplete']} incomplete, "
                f"{self.searches['failed']} failed"
            )


def _searched(report, search, stats):
    """report, which records how its test's search ended and its schedules."""
    report.ploom_search = search
    report.ploom_schedules = stats.schedules if stats is not None else 0
    return report


@contextlib.contextmanager
def _chdir(folder):
    # the search runs from the rootdir, where its traces go (.ploom) and
    # whence the worker's pytest collects; pytest runs tests one at a time
    old = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(old)


@contextlib.contextmanager
def _on_pythonpath(folder):
    # for ploom-replay's worker, as check() does for ploom-explore's
    old = os.environ.get("PYTHONPATH")
    if folder:
        os.environ["PYTHONPATH"] = folder + (os.pathsep + old if old else "")
    try:
        yield
    finally:
        if folder:
            if old is None:
                del os.environ["PYTHONPATH"]
            else:
                os.environ["PYTHONPATH"] = old


def _under(root, path):
    return path if os.path.isabs(path) else os.path.join(root, path)


def _replay_dir(root, nodeid, trace):
    """The folder a replay of a --ploom trace runs in: the rootdir (a
    trace of a project outside git finds its root at or above it), or,
    for a trace recorded against its test file's own folder (root
    "folder", whose test file is named by its base name alone), that
    folder."""
    try:
        with open(trace, "rb") as f:
            from ploom._utility import loads_strict

            recorded = loads_strict(f.read().decode("utf-8"))
        folder = recorded.get("source", {}).get("root") == "folder"
    except (OSError, ValueError, AttributeError):
        folder = False
    if folder:
        return os.path.dirname(os.path.join(root, nodeid.partition("::")[0]))
    return root


def _show(trace, cwd):
    """ploom-show's rendering of trace (the steps of each task, the race,
    the traceback), or None when it cannot be had."""
    import subprocess


    try:
        done = subprocess.run([_utility.find_utility("ploom-show"), trace], cwd=cwd,
                              capture_output=True, text=True, timeout=60, check=False)
    except (OSError, RuntimeError, subprocess.SubprocessError):
        return None
    return _shortened(done.stdout, trace) if done.returncode == 0 else None


# The most rows of the steps' table a test's report shows: the first ones
# and the last ones, which lead to the failure.
_STEPS_SHOWN = (20, 60)


def _shortened(text, trace):
    """ploom-show's text with its table of steps cut to _STEPS_SHOWN rows
    when longer, saying how many were left out and where to see them.  A
    row is its step's line and the lines its wrapped place goes on to,
    which leave the step's column blank."""
    lines = text.split("\n")
    try:
        # the rows run from the line under the table's rule to a blank line
        start = next(i for i, line in enumerate(lines) if line.strip() and set(line.strip()) <= {"-", " "}) + 1
        end = next(i for i in range(start, len(lines)) if not lines[i].strip())
    except StopIteration:
        return text
    # the rule's first dashes are the step's column (after the marks and tags)
    rule = lines[start - 1]
    step_end = len(rule) - len(rule.lstrip(" ").lstrip("-"))
    firsts = [i for i in range(start, end) if lines[i][:step_end].strip()]
    head, tail = _STEPS_SHOWN
    rows = len(firsts)
    if rows <= head + tail:
        return text
    shown = shlex.quote(_relative(trace, os.getcwd()))
    note = f"      ... {rows - head - tail} steps not shown here: ploom-show {shown} shows them all"
    return "\n".join([*lines[: firsts[head]], note, *lines[firsts[rows - tail] :]])


def _stripped(summary):
    from ploom.exploration import printable

    return printable(summary)


def _counted(n, noun):
    from ploom import exploration

    return exploration.counted(n, noun)


def _schedules(n):
    return _counted(n, "schedule")


def _stopped(stats, config):
    """Which limit stopped the search, in pytest --ploom's options."""
    by = stats.stopped_by if stats is not None else None
    if by == "max-schedules":
        return f"stopped at --ploom-max-schedules={config.max_schedules}"
    if by == "time-limit":
        return f"stopped at --ploom-max-seconds={config.time_limit:g}"
    if by == "max-steps":
        return "stopped at a schedule's step limit (max_steps)"
    return f"stopped by {by}" if by else "stopped"
