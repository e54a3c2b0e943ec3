"""Exploring a scenario's schedules from Python: ``check``, ``replay``, ``Config``, errors.

The search itself is done by the ``ploom-explore`` utility and a replay by
``ploom-replay``; ``check`` and ``replay`` run them in a subprocess, read the
JSON they print, and turn their exit status into a return value or an
exception:

- exit 0 (passed): ``check`` returns :class:`Statistics`, ``replay`` the
  replayed trace as a dict;
- exit 1 (a schedule failed): both raise :class:`ModelCheckError`;
- exit 2 (usage error, bad scenario or trace): both raise :class:`RuntimeError`,
  except that ``check`` raises ``ValueError`` for a config ``ploom-explore``
  refuses (its usage error, which comes before any worker starts);
- exit 3 (a limit cut the search, or the replayed schedule reached its step
  limit): both raise :class:`IncompleteExplorationError`;
- exit 4 (the replay did not follow the trace): ``replay`` raises
  :class:`ReplayDivergenceError`.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ploom import _ploom
from ploom._config import Config, check_seconds, spelled
from ploom._utility import (
    EXPLORE,
    REPLAY,
    UtilityError,
    env_with_root,
    find_utility,
    loads_strict,
    open_if_pipe,
    run,
    stderr_tail,
    terminal_progress,
    usage_error,
)
from ploom._worker import imports_as, root_above, scenario_problem, split_target

# The API.  The names outside it without an underscore (search, explore,
# check_with, replay_from, replay_path, replay_options, target_of,
# project_paths, printable, counted, next_step) are the check's and the
# replay's steps and their wording, which ``python -m ploom`` and the
# pytest plugin share with check() and replay(): the package's own, not
# the API.
__all__ = [
    "Config",
    "Statistics",
    "ModelCheckError",
    "IncompleteExplorationError",
    "ReplayDivergenceError",
    "check",
    "replay",
]


@dataclasses.dataclass(frozen=True)
class Statistics:
    """What an exploration did, as ``ploom-explore`` reports it in JSON.

    ``schedules`` counts every schedule the search ran, failing ones included;
    ``failing`` the failing ones (more than one only with ``keep_going``).
    ``complete`` is False when a limit cut the search, and ``stopped_by``
    then names it (``"max-schedules"``, ``"time-limit"``, ``"max-steps"``),
    or is ``"failure"`` when the first failure stopped it.  ``result`` is
    ``"pass"``, ``"failure"`` or ``"incomplete"``.  ``trace`` is the path of
    the first failing schedule's trace, or None; ``minimized_trace`` the path
    of the same failure with fewer preemptions, or None.  ``raw`` holds the
    whole JSON object, including fields added after this class was written.
    With ``keep_going``, ``raw["outcomes"]`` lists the distinct outcomes of
    the schedules, passes included, in the order they first came, as dicts
    ``{"kind": "pass", "summary": "pass", "schedules": 146}``;
    ``raw["outcomes_truncated"]`` is True when more than 1000 distinct
    outcomes came and the list holds the first 1000.  ``search`` is the
    order the schedules were tried in (``"dfs"``, ``"ipb"``); after a
    failure under ``"ipb"``, ``raw["minimal_by_construction"]`` is True: no
    schedule with fewer preemptions fails.  ``instrument`` names the modules
    whose plain state the search saw: of those asked for, the ones the
    worker had instrumented once it loaded the scenario, then the modules
    of the scenario's project it instrumented by default;
    ``instrument_scenario`` is True when the scenario's own module was one
    too (see :class:`Config`'s ``instrument``).  ``search_default`` says
    why the search that ran is the default one when the options did not choose
    it and it is not plain depth-first search (``"the default when modules
    are patched"``), else None.  ``saved_runs`` counts the
    failing schedules saved in the trace folder that ran before the search
    (:class:`Config`'s ``saved``), apart from ``schedules``; ``saved_failing``
    is 1 when one of them failed again, which is then the failure reported
    (without ``keep_going`` the search did not run: ``schedules`` is 0).
    ``settings`` names the project's settings the search took, and where
    each came from (``patch: mylib.account (pyproject.toml [tool.ploom])``;
    :func:`ploom.check`'s, see :doc:`guide`); :class:`ModelCheckError`'s
    message and ``settings`` say the same.
    ``raw["step_limited"]`` counts the schedules that reached the step limit
    (``max_steps``): a search with any is never complete.
    """

    schedules: int
    failing: int
    complete: bool
    result: str
    stopped_by: str | None
    max_preemptions: int | None
    reduction: str
    elapsed_s: float
    schedules_per_second: float
    max_depth: int
    trace: str | None
    minimized_trace: str | None = None
    search: str = "dfs"
    instrument: tuple[str, ...] = ()
    instrument_scenario: bool = False
    search_default: str | None = None
    saved_runs: int = 0
    saved_failing: int = 0
    raw: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)
    settings: tuple[str, ...] = dataclasses.field(default=(), compare=False)

    @classmethod
    def from_json(cls, data: dict) -> Statistics:
        """Builds the statistics from ``ploom-explore``'s JSON object."""
        try:
            return cls(
                schedules=int(data["schedules"]),
                failing=int(data["failing"]),
                complete=bool(data["complete"]),
                result=str(data["result"]),
                stopped_by=data.get("stopped_by"),
                max_preemptions=data.get("max_preemptions"),
                reduction=str(data.get("reduction", "none")),
                elapsed_s=float(data.get("elapsed_s", 0.0)),
                schedules_per_second=float(data.get("schedules_per_second", 0.0)),
                max_depth=int(data.get("max_depth", 0)),
                trace=data.get("trace"),
                minimized_trace=data.get("minimized_trace"),
                search=str(data.get("search", "dfs")),
                instrument=tuple(str(name) for name in data.get("instrument", ())),
                instrument_scenario=bool(data.get("instrument_scenario", False)),
                search_default=data.get("search_default"),
                saved_runs=int(data.get("saved_runs", 0)),
                saved_failing=int(data.get("saved_failing", 0)),
                raw=dict(data),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise RuntimeError(f"ploom: unexpected statistics from {EXPLORE}: {exc!r} in {data!r}") from None


# What a summary line never shows as it is, since a terminal would act on
# it: the C0 controls but newline and tab, DEL, the C1 controls, and the
# bidirectional controls that reorder what follows them.  Each is written
# as its escape, \x1b or \u202e, so the reader sees it was there.
_ESCAPES = {
    **{c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if c not in (0x09, 0x0A)},
    **{c: f"\\u{c:04x}" for c in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))},
}


def printable(text: str) -> str:
    """``text`` with the characters of ``_ESCAPES`` escaped."""
    return text.translate(_ESCAPES)


class ModelCheckError(AssertionError):
    """A schedule of the scenario failed.

    The message is a line each: the summary, the traces, and the next step,
    the command that replays the trace to read (the minimized one when
    there is one) and the one that shows it::

        builtins.AssertionError: the account is overdrawn
        Original trace: .ploom/<id>-original.json
        Minimized trace: .ploom/<id>-minimized.json
        Replay: python -m ploom replay .ploom/<id>-minimized.json  # read it with: ploom-show .ploom/<id>-minimized.json

    After a replay the trace is labelled ``Replayed trace``; the ``ploom_check``
    fixture names its ``pytest --ploom-replay`` command instead.
    ``summary`` says how (``builtins.AssertionError: the account is
    overdrawn``, ``deadlock: ...``, ``timeout: ...``); ``original_trace`` is
    the path of the failing schedule's trace (of the replayed trace, after
    :func:`replay`); ``minimized_trace`` the path of the same failure with
    fewer preemptions (None when it was not minimized: ``Config(minimize=False)``,
    a replay, a step limit); ``trace_to_read`` the minimized trace, else the
    original; ``statistics`` the :class:`Statistics` of the
    exploration (None after a replay).  Paths are as the utility printed
    them, made relative to the current folder when they lie under it.
    ``summary`` is the trace's text as it is; in the message its control
    characters (the C0 and C1 controls but newline and tab, DEL, and the
    bidirectional controls) are escaped as ``\\x1b`` or ``\\u202e``, so
    that printing it cannot drive a terminal.

    For a schedule cut by its timeout, ``stacks`` holds a line per task
    saying where it was, as ``ploom-show`` says it (``thread#1 (worker-1)
    was in: pool.py:88 in get <- scenario.py:14 in run``, the innermost
    frame first), and the message shows them, one a line, before the next
    step; an empty list when the trace does not say (another outcome, or a
    child too stuck to dump its stacks in time).
    """

    def __init__(
        self,
        summary: str,
        original_trace: str | None,
        minimized_trace: str | None = None,
        statistics: Statistics | None = None,
        stacks: list[str] | None = None,
        *,
        replayed: bool = False,
    ) -> None:
        self.summary = summary
        self.original_trace = original_trace
        self.minimized_trace = minimized_trace
        self.statistics = statistics
        self.stacks = list(stacks or [])
        self._replayed = replayed
        self._shown: str | None = None
        self.settings: list[str] = []
        trace = self.trace_to_read
        self._replay = f"{_PYTHON_REPLAY} {shlex.quote(trace)}" if trace else None
        super().__init__(self._message())

    @property
    def trace_to_read(self) -> str | None:
        """The trace to replay and read: the minimized one, else the original
        (None when the trace came on standard input and has no path)."""
        return self.minimized_trace or self.original_trace

    def _suggest(self, replay_command: str, shown: str) -> None:
        """Makes the next step name replay_command (the whole command, the
        trace included) and the trace as shown, as a front door other than
        python -m ploom does (pytest names paths from its own folder)."""
        if self.trace_to_read:
            self._replay, self._shown = replay_command, shown
            self.args = (self._message(),)

    def _set_settings(self, settings: list[str]) -> None:
        """Names the project's settings the search ran with, in the message."""
        self.settings = list(settings)
        self.args = (self._message(),)

    def _message(self) -> str:
        lines = [printable(self.summary)]
        lines.extend(f"Setting {printable(line)}" for line in self.settings)
        if self.original_trace:
            label = "Replayed trace" if self._replayed else "Original trace"
            lines.append(f"{label}: {self.original_trace}")
        if self.minimized_trace:
            lines.append(f"Minimized trace: {self.minimized_trace}")
        if self.stacks:
            lines.append("Where each task was:")
            lines.extend(f"  {printable(line)}" for line in self.stacks)
        if self._replay and self.trace_to_read:
            lines.append(next_step(self._replay, self._shown or self.trace_to_read))
        return "\n".join(lines)


# The command that replays a trace from Python's side of ploom.
_PYTHON_REPLAY = "python -m ploom replay"


def next_step(replay_command: str, trace: str) -> str:
    """The line that ends every failure's report, in one wording wherever
    it is printed (ploom-explore writes the same, cmd/cli.c): the command
    that replays the trace, and after a shell comment, so that the whole
    line can be pasted, the one that reads it."""
    return f"Replay: {replay_command}  # read it with: ploom-show {shlex.quote(trace)}"


# More tasks than this that had not run yet (or had finished) share one
# line: a pool of hundreds of threads would otherwise bury the few that ran.
_FOLD_OVER = 3


def _fold(entries: list[tuple[str, str | None, str]]) -> list[str]:
    """The lines of entries (who, state, line), where more than _FOLD_OVER
    tasks had not run yet, or had finished, with those tasks on one line,
    at the first one's place."""
    folded: dict[str | None, str | None] = {}
    for state, ending in (("unstarted", "had not run yet"), ("finished", "had finished")):
        many = [who for who, st, _ in entries if st == state]
        if len(many) > _FOLD_OVER:
            folded[state] = f"{', '.join(many[:_FOLD_OVER])} and {len(many) - _FOLD_OVER} more {ending}"
    lines = []
    for _, kind, line in entries:
        if kind not in folded:
            lines.append(line)
        elif (text := folded[kind]) is not None:
            lines.append(text)
            folded[kind] = None
    return lines


def _stack_lines(trace: Any) -> list[str]:
    """The lines of a timeout's or a step limit's stacks in ``trace`` (a dict read from a
    trace file), as ploom-show words them but for the tasks that _fold()
    puts on one line; [] when it has none.  A trace is untrusted input:
    what does not have the documented shape is left out."""
    try:
        outcome = trace["outcome"]
        stacks = outcome.get("stacks") if outcome.get("kind") in ("timeout", "step-limit") else None
        names = {t["id"]: t["name"] for t in trace.get("tasks") or [] if isinstance(t, dict)}
    except (KeyError, TypeError, AttributeError):
        return []
    entries = []
    for st in stacks if isinstance(stacks, list) else []:
        if not isinstance(st, dict) or not isinstance(st.get("task"), int):
            continue
        task = st["task"]
        default = "MainThread" if task == 0 else f"thread#{task}"
        name = names.get(task)
        who = f"thread#{task} ({name})" if isinstance(name, str) and name != default else default
        state = st.get("state")
        if state == "running":
            frames = [f for f in st.get("frames") or [] if isinstance(f, dict)]
            shown = [
                f"{os.path.basename(str(f.get('file')))}"
                + (f":{f['line']}" if isinstance(f.get("line"), int) and f["line"] > 0 else "")
                + f" in {f.get('function')}"
                for f in frames
            ]
            depth = st.get("depth")
            if isinstance(depth, int) and depth > len(shown):
                shown.append("...")
            line = f"{who} was in: {' <- '.join(shown)}" if shown else f"{who} was in no Python code"
        elif state == "finished":
            line = f"{who} had finished"
        elif state == "unstarted":
            line = f"{who} had not run yet"
        else:
            line = f"{who} is not known (the dump of the stacks was cut short)"
        entries.append((who, state if isinstance(state, str) else None, line))
    return _fold(entries)


def _trace_stacks(path: str | None) -> list[str]:
    """_stack_lines() of the trace file at path; [] when it cannot be read."""
    if not path:
        return []
    try:
        with open(path, encoding="utf-8") as f:
            return _stack_lines(loads_strict(f.read()))
    except (OSError, ValueError, RecursionError):
        return []


class IncompleteExplorationError(Exception):
    """A limit stopped the search before every schedule was explored, or a
    sample (``search="pct"`` or ``"random"``) found no failure.

    A limit is never a pass: the schedules that were not run may fail.
    ``statistics`` tells how far the search got and which limit stopped it
    (and, for a sample, ``statistics.raw["seed"]``).  A schedule that
    reached the step limit is not a pass either: ``statistics.raw
    ["step_limited"]`` counts them (a sample goes on past them, any other
    search stops at the first), and the message names the trace of the
    first and, a line each, where each of its tasks was then, the loop
    that kept it running.
    """

    def __init__(self, message: str, statistics: Statistics | None = None) -> None:
        super().__init__(message)
        self.statistics = statistics


class SetupError(ValueError):
    """The scenario's setup is wrong, not the code under test: a
    standard-library threading or queue primitive ran during a schedule
    (``ploom.UnscheduledPrimitiveError``), outside ploom's scheduler.

    No schedule is a failure then and no trace is saved.  The message
    names the primitive, where it was made and used, and the module to
    add to ``patch=``.  A ``ValueError``, as a wrong ``Config`` value is:
    the fix is in the arguments.
    """


class ReplayDivergenceError(Exception):
    """A replayed schedule did not follow its trace.

    Raised when the scenario's source changed, the Python minor version
    differs, or the run asked for another operation than the one recorded,
    or when the steps matched but the outcome differs.  The message says
    which (``the scenario's source changed: '/src/bank.py' (recorded blob
    1a2b3c4, now 5d6e7f8)``); ``trace`` is the path of the trace replayed.
    """

    def __init__(self, message: str, trace: str | None = None) -> None:
        super().__init__(message)
        self.trace = trace


def _in_worker() -> bool:
    """Whether this process is ploom's worker, importing a scenario's
    module, or a schedule forked from it: PLOOM_WORKER names the worker's
    process id, and a schedule's task is one that ploom schedules.  A
    program started by either only inherits the variable."""
    worker = os.environ.get("PLOOM_WORKER")
    if not worker:
        return False
    if worker == str(os.getpid()):
        return True
    from ploom import _ploom

    return _ploom.current_thread() is not None


def check(
    scenario: Callable[[], Any],
    config: Config | None = None,
    *,
    progress: Callable[[dict], Any] | None = None,
) -> Statistics | None:
    """Explores the schedules of ``scenario`` and returns the statistics.

    ``scenario`` is a function taking no arguments, defined at module level
    (each schedule runs in a separate process that imports it by module and
    name; a function defined inside another one cannot be found that way).
    A scenario whose module another process cannot import by its name is
    loaded from its file instead: a module run as a script (``python
    file.py``), or loaded under a name of its own
    (``importlib.util.spec_from_file_location("x", path)``), or made by hand
    with a ``__file__``.

    Returns :class:`Statistics` when every schedule passed.  Raises
    :class:`ModelCheckError` when one failed, with the trace of the first
    failing schedule and of the same failure with fewer preemptions;
    :class:`IncompleteExplorationError` when a limit of ``config`` cut the
    search short (never a pass); :class:`SetupError` (a ``ValueError``)
    when a standard-library primitive ran in a schedule, a module missing
    from ``patch=`` (no trace is saved); :class:`RuntimeError`
    when the scenario cannot be loaded, a trace cannot be saved (the message
    ends with ``ploom-explore``'s reason) or the utility fails; ValueError,
    before any schedule runs, for a ``config`` that ``ploom-explore``
    refuses (with its reason: ``ploom-explore: invalid --max-preemptions
    '-1': not an integer from 0 to 1000000``) and for a scenario that is not
    a module-level function callable without arguments whose call runs its
    body: a nested function, a lambda, a bound method, a function that needs
    arguments, an ``async def`` or generator function (calling those only
    creates a coroutine or generator, so every schedule would pass without
    the body ever running), or a function whose module has no file (code run
    by ``exec``); TypeError for a ``config`` that is not a :class:`Config`
    and a ``scenario`` that is not callable.

    The project's settings (``[tool.ploom]`` in ``pyproject.toml``, pytest's
    ``ploom_*`` ini keys; ``ploom._settings.find_settings``), found from
    the scenario's folder, fill the fields of ``config`` left at their
    default; the result names each one taken and where it came from
    (``Statistics.settings``, and a ``Setting`` line of the
    ``ModelCheckError``).  The worker imports as this process does: from
    pytest's ``pythonpath`` and the entries of ``sys.path`` inside the
    project, which the traces record for their replays.

    Inside the worker process that imports the scenario's module, and in
    the schedules it runs, ``check`` does nothing and returns None, so a
    module may call it at top level.  The worker sets ``PLOOM_WORKER`` to
    its process id: a program that a scenario starts inherits the variable
    but is another process, where ``check`` searches as anywhere else.

    ``progress``, when given, is called in this thread with each progress
    report of the search, about once a second and once at its end: a dict
    with ``schedules``, ``failing``, ``elapsed_s``, ``rate``,
    ``estimate_total``, ``fraction``, ``eta_s`` (None while unknown),
    ``summary`` (the line ``ploom-explore`` shows on a terminal, such as
    ``"12,345 schedules (2,310/s), ~41% of ~30,100, ETA 8 s"``) and
    ``done`` (see ``--progress=json`` in ``man ploom-explore``).  Without
    it, ``ploom-explore``'s progress goes to standard error as it comes: when
    that is a terminal, the status line rewritten each second, as the
    utility shows on one (``--progress=terminal``); else a line of counts
    every 30 seconds, as in a log.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not ploom's
    return check_with(scenario, config, progress, None)


def check_with(
    scenario: Callable[[], Any], config: Config | None, progress: Callable[[dict], Any] | None, settings: Any
) -> Statistics | None:
    """check(), with the project's settings (_settings.Settings) when the
    caller found them; else they are found from the scenario's folder."""
    __tracebackhide__ = True
    from ploom import _settings

    if _in_worker():
        return None
    if config is None:
        config = Config()
    elif not isinstance(config, Config):
        raise TypeError(f"ploom.check: config must be a ploom.Config, not {type(config).__name__}")
    target, import_root = target_of(scenario)
    if settings is None:
        settings = _settings.find_settings(os.path.dirname(os.path.abspath(inspect.getfile(scenario))))
    config, applied = settings.apply(config)
    try:
        stats = explore(target, import_root, config, progress=progress, import_paths=project_paths(settings))
    except UtilityError as exc:
        # the type is __main__'s, for the exit status; a caller sees the
        # RuntimeError this function promises, with the same message
        raise RuntimeError(str(exc)) from None
    except ModelCheckError as exc:
        exc._set_settings(applied)
        raise
    return dataclasses.replace(stats, settings=tuple(applied))


def explore(
    target: str,
    import_root: str | None,
    config: Config,
    progress: Callable[[dict], Any] | None = None,
    import_paths: Sequence[str] = (),
) -> Statistics:
    """Runs ``ploom-explore`` on TARGET with config's options: check()
    without the scenario object; progress: check()'s; import_paths
    (project_paths()) go on the worker's PYTHONPATH after import_root."""
    __tracebackhide__ = True
    shown = ["--progress=json"] if progress else []
    env = env_with_root(os.pathsep.join([p for p in (import_root, *import_paths) if p]) or None)
    stats = search([*config._options(), *shown, target], env, config, f" on {target!r}", progress=progress)
    assert stats is not None  # with a config, _search returns statistics or raises
    return stats


def project_paths(settings: Any, own: bool = True) -> list[str]:
    """pytest's ``pythonpath`` of the project's settings, then the
    entries of this process's sys.path inside the project's root (the
    folder of its settings): pytest's rootdir and ``pythonpath``, a
    script's folder.  The worker imports from them as this process does,
    and the traces record them (relative to the repository's root), so
    that a replay imports as the search did.  Without own, only the
    ``pythonpath`` (``ploom check``, whose own sys.path is ploom's)."""
    root = settings.root
    if not root:
        return []
    seen = [os.path.abspath(p) for p in settings.pythonpath if os.path.isdir(p)]
    # an environment in the project (.venv) is the interpreter's, which
    # the worker has already: on PYTHONPATH it would come before the
    # standard library
    environments = {sys.prefix, sys.exec_prefix, sys.base_prefix}
    for entry in sys.path if own else ():
        if not isinstance(entry, str) or not entry:
            continue
        folder = os.path.abspath(entry)
        if (
            folder not in seen
            and os.path.isdir(folder)
            and _inside(folder, root)
            and not any(_inside(folder, env) for env in environments)
        ):
            seen.append(folder)
    return seen


def _inside(path: str, root: str) -> bool:
    real, real_root = os.path.realpath(path), os.path.realpath(root)
    return os.path.commonpath([real, real_root]) == real_root


def search(
    args: list[str],
    env: dict,
    config: Config | None,
    what: str = "",
    usage_name: str | None = None,
    progress: Callable[[dict], Any] | None = None,
) -> Statistics | None:
    """Runs ``ploom-explore ARGS`` after ``--python=`` this interpreter (a
    ``--python`` in ARGS comes later, and wins) and turns its exit status
    into a return value or an exception.  Its stderr goes to ours as it
    comes.

    config is the Config that ARGS say, for check(): a usage error is then
    kept off our stderr and raised as ValueError.  Without one, ARGS are
    python -m ploom check's, as the user wrote them: the usage, shown under
    usage_name, goes to our stderr with the reason (and ValueError still
    tells it), and a run that searches nothing (``--help``, ``--version``,
    ``--check-options``) writes the utility's stdout to ours and returns
    None.  With progress, the ``--progress=json`` lines go to it (run)."""
    __tracebackhide__ = True
    terminal = terminal_progress(progress)
    argv = [find_utility(EXPLORE), f"--python={sys.executable}", *terminal, *args]
    # the ModelCheckError says the next step, with the command of its caller
    env = dict(env, PLOOM_NO_NEXT_STEP="1")
    if terminal:
        env = dict(env, COLUMNS=str(shutil.get_terminal_size().columns))
    if usage_name:
        env = dict(env, PLOOM_USAGE_NAME=usage_name)
    code, stdout, stderr = run(argv, env, hold_usage_error=config is not None, progress=progress)
    if code == 2 and usage_error(stderr):
        # the reason; the usage after it names options, not Config fields
        raise ValueError(stderr.partition("\n")[0])
    if config is None and code == 0 and not stdout.lstrip().startswith("{"):
        # help or version text, or nothing: no statistics, which always
        # start with "{", so a cut-off statistics object is not taken for it
        sys.stdout.write(stdout)
        sys.stdout.flush()
        return None
    if code in (0, 1, 3):
        try:
            stats = Statistics.from_json(loads_strict(stdout))
        except ValueError as exc:
            raise RuntimeError(
                f"ploom: {EXPLORE} exited {code} without valid statistics on stdout ({exc})" + stderr_tail(stderr)
            ) from None
        if code == 0:
            return stats
        if code == 1:
            failure = stats.raw.get("failure") or {}
            summary = failure.get("summary") or "a schedule failed"
            stacks = _trace_stacks(stats.trace) if failure.get("kind") == "timeout" else []
            raise ModelCheckError(
                summary, _shown_path(stats.trace), _shown_path(stats.minimized_trace), stats, stacks=stacks
            )
        raise IncompleteExplorationError(_incomplete_message(stats, config), stats)
    if code == _ploom.EXIT_SETUP:
        marker = f"{EXPLORE}: setup error, not a bug of the code under test: "
        said = [line[len(marker) :] for line in stderr.splitlines() if line.startswith(marker)]
        raise SetupError(said[0] if said else f"ploom: {EXPLORE} stopped at a setup error" + stderr_tail(stderr))
    raise UtilityError(f"ploom: {EXPLORE} failed{what} (exit {code})" + stderr_tail(stderr), stderr, code)


def replay(
    trace: str | os.PathLike,
    *,
    python: str | None = None,
    on_current_source: bool = False,
    schedule_timeout: float | None = None,
) -> dict:
    """Runs the one schedule saved in ``trace`` again, exactly; never searches.

    ``trace`` is the path of a trace file (``.ploom/<id>-original.json`` or
    ``-minimized.json``), or ``"-"`` to read it from standard input; a
    path that is a pipe, such as the ``/dev/fd/63`` of bash's ``<(...)``,
    is read once, as standard input is;
    ``python`` the interpreter of the worker (default: this one, whose minor
    version must be the trace's); ``schedule_timeout`` the wall clock of
    the schedule in seconds, when shorter than the trace's
    (``--schedule-timeout`` of ``ploom-replay``, which judges the value).

    Nothing of the scenario runs before ``ploom-replay`` has checked the
    trace: its scenario file must be one its fingerprints cover, have its
    recorded blob id, and be the file the target names (see ``man
    ploom-replay``).

    Returns the replayed trace (a dict, see ``man 5 ploom-trace``) when the
    recorded schedule passed and passes again.  Raises
    :class:`ModelCheckError` (``original_trace`` is ``trace``) when the
    recorded failure happens again; :class:`ReplayDivergenceError` when the
    scenario's source changed, the Python minor version differs, the run asks
    for another operation than the recorded one, or the outcome differs;
    :class:`IncompleteExplorationError` when the schedule reaches its step
    limit again; :class:`RuntimeError` for a trace that cannot be read.

    With ``on_current_source=True`` the scenario's source may have changed
    since the trace was recorded (a fix, say): the recorded order of tasks
    runs on the source as it is now, as far as it allows, and
    ``ploom-replay`` tells on this process's standard error which files
    differ and how many steps departed from that order.  The scenario file
    must still be the one at the trace's relative path in this repository
    (or folder).  Raises :class:`ModelCheckError` when the schedule fails
    (again, or otherwise), returns the new run's trace when it passes; an
    edit alone never raises :class:`ReplayDivergenceError`.
    """
    __tracebackhide__ = True
    path = os.fspath(trace)
    if not isinstance(path, str):
        raise TypeError(f"ploom.replay: trace must be a path, not {type(trace).__name__}")
    check_seconds("schedule_timeout", schedule_timeout, "ploom.replay: schedule_timeout")
    return replay_path(path, python, on_current_source, schedule_timeout)


def replay_path(
    path: str,
    python: str | None,
    on_current_source: bool,
    schedule_timeout: float | str | None,
    usage_name: str | None = None,
) -> dict:
    """replay() of ``path``, with ``schedule_timeout`` (a number, or the
    text the user typed) passed on for ploom-replay to judge; its usage, on
    a usage error, names ``usage_name`` (the command the user typed) when
    given."""
    __tracebackhide__ = True
    options = replay_options(schedule_timeout)
    pipe = None if path == "-" else open_if_pipe(path)
    try:
        return replay_from(
            path, pipe, python, on_current_source=on_current_source, options=options, usage_name=usage_name
        )
    finally:
        if pipe is not None:
            pipe.close()


def replay_options(schedule_timeout: float | str | None) -> list[str]:
    """The ploom-replay options of a replay with ``schedule_timeout``."""
    return [] if schedule_timeout is None else [f"--schedule-timeout={spelled(schedule_timeout)}"]


def replay_from(
    path: str,
    stdin: Any,
    python: str | None,
    named: bool = False,
    on_current_source: bool = False,
    options: list[str] | None = None,
    usage_name: str | None = None,
) -> dict:
    """replay(): of ``path``, or of the trace read from the file object
    ``stdin`` when it is not None (or when ``path`` is "-": this process's
    standard input).  With named, ``stdin`` holds the bytes of ``path``, as
    the caller read and checked them, and errors name ``path``."""
    __tracebackhide__ = True
    from_stdin = path == "-" or stdin is not None
    argv = [find_utility(REPLAY), f"--python={python or sys.executable}"]
    # on the current source, what changed and how the run went are for
    # the reader: ploom-replay says them on our stderr
    argv += ["--on-current-source"] if on_current_source else ["-q"]
    argv += options or []
    argv.append("-" if from_stdin else path)
    if stdin is None and not from_stdin:
        stdin = subprocess.DEVNULL
    env = dict(os.environ, PLOOM_USAGE_NAME=usage_name) if usage_name else dict(os.environ)
    code, stdout, stderr = run(argv, env, echo_stderr=on_current_source, stdin=stdin)
    # a trace read from standard input or a pipe has no path to replay it by again
    shown = _shown_path(path) if named or not from_stdin else None
    if code == 4:
        marker = "ReplayDivergenceError: "
        for line in stderr.splitlines():
            if marker in line:
                raise ReplayDivergenceError(line.split(marker, 1)[1].strip(), shown)
        raise ReplayDivergenceError(stderr.strip() or f"{REPLAY} exited 4", shown)
    if code in (0, 1, 3):
        try:
            replayed = loads_strict(stdout)
            outcome = replayed["outcome"]
        except (ValueError, KeyError, TypeError) as exc:
            raise RuntimeError(
                f"ploom: {REPLAY} exited {code} without a valid trace on stdout ({exc!r})" + stderr_tail(stderr)
            ) from None
        if code == 0:
            return replayed
        if code == 1:
            raise ModelCheckError(
                outcome.get("summary") or "the schedule failed",
                shown,
                stacks=_stack_lines(replayed),
                replayed=True,
            )
        raise IncompleteExplorationError(
            f"replay incomplete: {printable(outcome.get('summary') or 'the schedule reached its step limit')}; "
            f"a limit is never a pass. Trace: {shown}"
        )
    lines = [line for line in stderr.splitlines() if line.strip()]
    if lines and code == 2:
        raise RuntimeError("\n".join(lines[-20:]))
    raise RuntimeError(f"ploom: {REPLAY} failed on {path!r} (exit {code})" + stderr_tail(stderr))


def _shown_path(path: str | None) -> str | None:
    """The path as a person should see it: relative to the current folder
    when it lies under it, else as given."""
    if not path:
        return path
    if os.path.isabs(path):
        try:
            relative = os.path.relpath(path)
        except ValueError:
            return path
        if relative != os.pardir and not relative.startswith(os.pardir + os.sep):
            return relative
    return path


def target_of(scenario: Any) -> tuple[str, str | None]:
    """Returns the TARGET naming ``scenario`` for the worker, and the folder
    to put on the worker's import path (None if nothing is needed)."""
    if not callable(scenario):
        raise TypeError(f"ploom.check: the scenario must be a function, not {type(scenario).__name__}")
    qualname = getattr(scenario, "__qualname__", None)
    module_name = getattr(scenario, "__module__", None)
    if not isinstance(qualname, str) or not isinstance(module_name, str):
        raise ValueError(
            f"ploom.check: {scenario!r} has no module and qualified name; pass a function defined at module level"
        )
    if "<" in qualname:
        raise ValueError(
            f"ploom.check: the scenario {qualname!r} is defined inside a function or is a lambda; "
            "each schedule runs in a separate process that imports the scenario by module and "
            "name, so define it at module level"
        )
    problem = scenario_problem(scenario)
    if problem:
        raise ValueError(f"ploom.check: the scenario {qualname!r} {problem}")
    namespace = _namespace(scenario, module_name)
    path = namespace.get("__file__")
    spec_name = getattr(namespace.get("__spec__"), "name", None)
    name = module_name
    if name == "__main__" and isinstance(spec_name, str) and spec_name != "__main__":
        # run with `python -m pkg.mod`: the worker may import pkg.mod
        name = spec_name
    if not isinstance(path, str) or not path:
        if module_name == "__main__":
            raise ValueError(
                "ploom.check: the scenario is in __main__ but __main__ has no file "
                "(an interactive session or python -c); define it in a module or a .py file"
            )
        raise ValueError(
            f"ploom.check: the scenario {qualname!r} is in module {module_name!r}, which has no file "
            "(code run by exec, or a module made without one); each schedule runs in a separate "
            "process that imports the scenario by module name or loads it from its file, so "
            "define it in a .py file"
        )
    path = os.path.abspath(path)
    if name != "__main__":
        # by its name when another process finds this very file under it;
        # a module loaded under a name of the loader's choosing is not
        # found that way, and is loaded from its file instead
        root = root_above(path, name)
        target = f"{name}:{qualname}"
        if not split_target(target)[2] and imports_as(name, path, root):
            return target, root
    return f"{path}:{qualname}", None


def _namespace(scenario: Any, module_name: str) -> dict:
    """The globals of the module that defines scenario: the function's own
    (a module loaded under any name, or made by hand, has them too), else
    those of the module of that name in sys.modules, else none."""
    try:
        inner = inspect.unwrap(scenario)
    except ValueError:  # a cycle of __wrapped__
        inner = scenario
    namespace = getattr(inner, "__globals__", None)
    if isinstance(namespace, dict) and namespace.get("__name__") == module_name:
        return namespace
    module = sys.modules.get(module_name)
    return vars(module) if module is not None else {}


def counted(n: int, noun: str) -> str:
    """ "1 schedule", "2 schedules": the one place where ploom's Python
    messages put a count's noun in the plural (the C utilities' is
    lib/plural.h)."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _limit(stopped_by: str | None, config: Config | None) -> str:
    """The limit that stopped the search, in the words of config's field,
    or of the option for python -m ploom check (config None)."""
    if stopped_by == "max-schedules":
        return "the schedule limit (" + (f"max_schedules={config.max_schedules})" if config else "--max-schedules)")
    if stopped_by == "time-limit":
        return "the time limit (" + (f"time_limit={config.time_limit} s)" if config else "--time-limit)")
    if stopped_by == "max-steps":
        if config is None:
            reached = "--max-steps"
        elif config.max_steps == 0:
            return (
                "the step limit: a schedule reached 200,000 steps, the most any schedule may take "
                "(max_steps=0; a thread that never finishes?)"
            )
        elif config.max_steps is None:
            reached = "the default max_steps"
        else:
            reached = f"max_steps={config.max_steps} steps"
        return f"the step limit: a schedule reached {reached} (a thread that never finishes?)"
    return f"a limit ({stopped_by})"


def _incomplete_message(stats: Statistics, config: Config | None) -> str:
    search = stats.raw.get("search")
    # the utility writes a seed for a sample only, and a depth for a search
    # that takes one (lib/plan.c's flags): the statistics say what it is
    if "seed" in stats.raw:
        # a sample ends at its limit, however it went: say how to draw it again
        drawn = f"seed {stats.raw.get('seed')}"
        if "pct_depth" in stats.raw:
            drawn += f", depth {stats.raw.get('pct_depth')}"
        message = (
            f"{search} sample ({drawn}) incomplete: no failure in {counted(stats.schedules, 'schedule')}, "
            f"stopped by {_limit(stats.stopped_by, config)}; a sample is never a pass, since the "
            "schedules not drawn may fail"
        )
    else:
        message = (
            f"exploration incomplete: stopped by {_limit(stats.stopped_by, config)} after "
            f"{counted(stats.schedules, 'schedule')}; a limit is never a pass, since the schedules not "
            "explored may fail"
        )
    limited = stats.raw.get("step_limited")
    if isinstance(limited, int) and (limited > 1 or (limited == 1 and stats.stopped_by != "max-steps")):
        message += f"; {limited} of {counted(stats.schedules, 'schedule')} reached the step limit"
    if stats.trace:
        message += f". Trace: {stats.trace}"
    stacks = _trace_stacks(stats.trace)
    if stacks:
        message += "\nWhere each task was when a schedule reached the step limit:"
        message += "".join(f"\n  {printable(line)}" for line in stacks)
    return message
