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
  refuses (it asks ``ploom-explore --check-options`` first);
- exit 3 (a limit cut the search, or the replayed schedule reached its step
  limit): both raise :class:`IncompleteExplorationError`;
- exit 4 (the replay did not follow the trace): ``replay`` raises
  :class:`ReplayDivergenceError`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import selectors
import shutil
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from ploom._worker import root_above, scenario_problem

__all__ = [
    "Config",
    "Statistics",
    "ModelCheckError",
    "IncompleteExplorationError",
    "ReplayDivergenceError",
    "check",
    "replay",
]

_EXPLORE = "ploom-explore"
_REPLAY = "ploom-replay"


@dataclasses.dataclass(frozen=True)
class Config:
    """How :func:`check` explores a scenario.

    max_preemptions
        Explore only the schedules with at most this many preemptions (a
        switch away from a task that could have continued); ``None``
        explores every schedule.
    reduction
        ``"none"`` (the default): plain depth-first search over every
        schedule.  ``"dpor"``: dynamic partial-order reduction, which runs
        one schedule (or a few) for each class of schedules that differ
        only in the order of steps that do not conflict (two steps conflict
        when they touch the same cell, lock or thread and one of them
        changes it), and so reaches every outcome of ``"none"`` in far
        fewer schedules.  It cannot be combined with ``max_preemptions`` or
        with ``jobs`` above 1 (``ploom-explore`` refuses both).
    max_schedules
        Stop after this many schedules.  If schedules remained, the search
        is incomplete and :func:`check` raises
        :class:`IncompleteExplorationError`.
    time_limit
        Stop after this many seconds; incomplete if schedules remained.
    max_steps
        Steps (scheduling points) allowed in one schedule.  A schedule that
        reaches it, such as a thread spinning forever, makes the search
        incomplete.  0 sets no bound of its own: a schedule then stops at the
        most steps any schedule may take (``man ploom-explore``), so that its
        trace can still be read.
    schedule_timeout
        Wall-clock seconds one schedule may take.  A schedule that takes
        longer (blocked outside ploom, say in ``time.sleep``) is a failure of
        kind ``timeout``.  0 sets no timeout.
    keep_going
        Do not stop at the first failure: explore every schedule and count
        the failing ones.  The first failure's trace is still saved.
    hash_seed
        ``PYTHONHASHSEED`` of every schedule, so set and dict order is the
        same in all of them.
    trace_dir
        Where failure traces are written, created if missing.
    minimize
        At the first failure, also look for the same failure with fewer
        preemptions and save it as ``<id>-minimized.json`` beside the
        original (:attr:`ModelCheckError.minimized_trace`).
    jobs
        Worker processes that run schedules at once.  They
        explore exactly the schedules one would; without ``keep_going`` the
        failure reported is the first one any of them found, which may be
        another failing schedule than one worker reports first.
    patch
        Names of modules, such as ``("mylib.pool",)``, whose references to
        the standard ``threading`` and ``queue`` modules (and to names
        imported from them) the worker swaps for ``ploom.threading`` and
        ``ploom.queue`` after it imported the scenario's module, so that
        library code runs under the scheduler unchanged.  The scenario's
        module must import them: nothing new is imported.  The traces
        record the list and a replay patches the same modules.  A tuple or
        list of strings; a string alone is refused, since ``("mylib")`` is
        the string ``"mylib"``.

    A value of the wrong type (``True`` for a count, ``"2"`` for ``jobs``)
    is a ValueError naming the field, here.  The values themselves are
    ``ploom-explore``'s to judge, and their bounds are stated there (``man
    ploom-explore``, ``ploom-explore --help``): :func:`check` asks it about
    the options before any schedule runs, and a refusal is a ValueError
    carrying its reason, such as ``ploom-explore: invalid --max-steps '-1':
    not an integer from 0 to 1000000000``.
    """

    max_preemptions: int | None = None
    reduction: str = "none"
    max_schedules: int | None = None
    time_limit: float | None = None
    max_steps: int = 10000
    schedule_timeout: float = 10.0
    keep_going: bool = False
    hash_seed: int = 0
    trace_dir: str = ".ploom"
    minimize: bool = True
    jobs: int = 1
    patch: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Types only: the bounds are ploom-explore's, which check() asks
        # (_check_options), so that they are stated in one place.
        if not isinstance(self.reduction, str):
            raise ValueError(f"Config.reduction must be a string, not {self.reduction!r}")
        for name in ("max_preemptions", "max_schedules"):
            if getattr(self, name) is not None:
                _check_int(name, getattr(self, name))
        if self.time_limit is not None:
            _check_seconds("time_limit", self.time_limit)
        for name in ("max_steps", "hash_seed", "jobs"):
            _check_int(name, getattr(self, name))
        _check_seconds("schedule_timeout", self.schedule_timeout)
        for name in ("keep_going", "minimize"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise ValueError(f"Config.{name} must be True or False, not {value!r}")
        if not isinstance(self.trace_dir, (str, os.PathLike)) or not isinstance(os.fspath(self.trace_dir), str):
            raise ValueError(f"Config.trace_dir must be a path, not {self.trace_dir!r}")
        _check_patch(self.patch)
        # a list is taken as the tuple it says, so that the config stays hashable
        object.__setattr__(self, "patch", tuple(self.patch))

    def _options(self) -> list[str]:
        """The ``ploom-explore`` options that say the same as this config."""
        opts = [f"--reduction={self.reduction}"]
        if self.max_preemptions is not None:
            opts.append(f"--max-preemptions={self.max_preemptions}")
        if self.max_schedules is not None:
            opts.append(f"--max-schedules={self.max_schedules}")
        if self.time_limit is not None:
            opts.append(f"--time-limit={self.time_limit!r}")
        opts.append(f"--max-steps={self.max_steps}")
        opts.append(f"--schedule-timeout={self.schedule_timeout!r}")
        if self.keep_going:
            opts.append("--keep-going")
        opts.append(f"--hash-seed={self.hash_seed}")
        opts.append(f"--trace-dir={os.fspath(self.trace_dir)}")
        if not self.minimize:
            opts.append("--no-minimize")
        if self.jobs != 1:
            opts.append(f"--jobs={self.jobs}")
        opts.extend(f"--patch={name}" for name in self.patch)
        return opts


def _check_int(name: str, value: Any) -> None:
    # bool is an int subclass, but True as a count is surely a mistake
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"Config.{name} must be an integer, not {value!r}")


def _check_patch(value: Any) -> None:
    # the names themselves are ploom-explore's to judge, as the other values
    if isinstance(value, str):
        raise ValueError(
            f"Config.patch must be a tuple of module names, not the string {value!r} "
            f"(write ({value!r},) for one module)"
        )
    if not isinstance(value, (tuple, list)) or not all(isinstance(name, str) for name in value):
        raise ValueError(f"Config.patch must be a tuple of module names, not {value!r}")


def _check_seconds(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"Config.{name} must be a number of seconds, not {value!r}")


def _check_options(explore: str, config: Config) -> None:
    """Asks ``ploom-explore --check-options`` about the config's options
    (it starts no worker); raises ValueError with its reason, the first line
    of its usage error, when it refuses them."""
    __tracebackhide__ = True
    done = subprocess.run(
        [explore, "--check-options", *config._options()],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace", check=False,
    )
    if done.returncode == 0:
        return
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    if done.returncode == 2 and lines:
        # the reason; the usage text after it names no Config field
        raise ValueError(lines[0])
    raise RuntimeError(
        f"ploom: {_EXPLORE} --check-options failed (exit {done.returncode})" + _stderr_tail(done.stderr)
    )


@dataclasses.dataclass(frozen=True)
class Statistics:
    """What an exploration did, as ``ploom-explore`` reports it in JSON.

    ``schedules`` counts every schedule run, failing ones included;
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
    outcomes came and the list holds the first 1000.
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
    raw: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)

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
                raw=dict(data),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise RuntimeError(f"ploom: unexpected statistics from {_EXPLORE}: {exc!r} in {data!r}") from None


class ModelCheckError(AssertionError):
    """A schedule of the scenario failed.

    The message reads ``SUMMARY Original trace: PATH Minimized trace: PATH``.
    ``summary`` says how (``builtins.AssertionError: the account is
    overdrawn``, ``deadlock: ...``, ``timeout: ...``); ``original_trace`` is
    the path of the failing schedule's trace (of the replayed trace, after
    :func:`replay`); ``minimized_trace`` the path of the same failure with
    fewer preemptions (None when it was not minimized: ``Config(minimize=False)``,
    a replay, a step limit); ``statistics`` the :class:`Statistics` of the
    exploration (None after a replay).  Paths are as the utility printed
    them, made relative to the current folder when they lie under it.
    """

    def __init__(
        self,
        summary: str,
        original_trace: str | None,
        minimized_trace: str | None = None,
        statistics: Statistics | None = None,
    ) -> None:
        message = summary
        if original_trace:
            message += f" Original trace: {original_trace}"
        if minimized_trace:
            message += f" Minimized trace: {minimized_trace}"
        super().__init__(message)
        self.summary = summary
        self.original_trace = original_trace
        self.minimized_trace = minimized_trace
        self.statistics = statistics


class IncompleteExplorationError(Exception):
    """A limit stopped the search before every schedule was explored.

    A limit is never a pass: the schedules that were not run may fail.
    ``statistics`` tells how far the search got and which limit stopped it.
    """

    def __init__(self, message: str, statistics: Statistics | None = None) -> None:
        super().__init__(message)
        self.statistics = statistics


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
    A scenario in a module run as a script (``python file.py``) is found by
    the file's path.

    Returns :class:`Statistics` when every schedule passed.  Raises
    :class:`ModelCheckError` when one failed, with the trace of the first
    failing schedule and of the same failure with fewer preemptions; :class:`IncompleteExplorationError` when a limit of
    ``config`` cut the search short (never a pass); :class:`RuntimeError`
    when the scenario cannot be loaded, a trace cannot be saved (the message
    ends with ``ploom-explore``'s reason) or the utility fails; ValueError,
    before any schedule runs, for a ``config`` that ``ploom-explore``
    refuses (with its reason: ``ploom-explore: invalid --max-preemptions
    '-1': not an integer from 0 to 1000000``) and for a scenario that is not a module-level
    function callable without arguments whose call runs its body: a nested
    function, a lambda, a bound method, a function that needs arguments, an
    ``async def`` or generator function (calling those only creates a
    coroutine or generator, so every schedule would pass without the body
    ever running).

    Inside the worker process that imports the scenario's module
    (``PLOOM_WORKER`` set), ``check`` does nothing and returns None, so a
    module may call it at top level.

    ``progress``, when given, is called in this thread with each progress
    report of the search, about once a second and once at its end: a dict
    with ``schedules``, ``failing``, ``elapsed_s``, ``rate``,
    ``estimate_total``, ``fraction``, ``eta_s`` (None while unknown),
    ``summary`` (the line ``ploom-explore`` shows on a terminal, such as
    ``"12,345 schedules (2,310/s), ~41% of ~30,100, ETA 8 s"``) and
    ``done`` (see ``--progress=json`` in ``man ploom-explore``).  Without
    it, ``ploom-explore``'s progress lines go to standard error as they come.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not ploom's
    if os.environ.get("PLOOM_WORKER"):
        return None
    if config is None:
        config = Config()
    elif not isinstance(config, Config):
        raise TypeError(f"ploom.check: config must be a ploom.Config, not {type(config).__name__}")
    target, import_root = _target(scenario)
    return _explore(target, import_root, config, progress=progress)


def _explore(
    target: str,
    import_root: str | None,
    config: Config,
    quiet: bool = False,
    progress: Callable[[dict], Any] | None = None,
) -> Statistics:
    """Runs ``ploom-explore`` on TARGET: check() without the scenario object
    (``python -m ploom check`` uses it).  quiet: nothing on our stderr;
    progress: check()'s."""
    __tracebackhide__ = True
    explore = _find_utility(_EXPLORE)
    _check_options(explore, config)
    shown = ["-q"] if quiet else ["--progress=json"] if progress else []
    argv = [explore, f"--python={sys.executable}", *config._options(), *shown, target]
    code, stdout, stderr = _run(
        argv, _env_with_root(import_root), echo_stderr=not quiet, progress=None if quiet else progress
    )
    stats = None
    if code in (0, 1, 3):
        try:
            stats = Statistics.from_json(loads_strict(stdout))
        except ValueError as exc:
            raise RuntimeError(
                f"ploom: {_EXPLORE} exited {code} without valid statistics on stdout ({exc})"
                + _stderr_tail(stderr)
            ) from None

    if code == 0:
        return stats
    if code == 1:
        failure = stats.raw.get("failure") or {}
        summary = failure.get("summary") or "a schedule failed"
        raise ModelCheckError(summary, _shown_path(stats.trace), _shown_path(stats.minimized_trace), stats)
    if code == 3:
        raise IncompleteExplorationError(_incomplete_message(stats, config), stats)
    raise _UtilityError(
        f"ploom: {_EXPLORE} failed on {target!r} (exit {code})" + _stderr_tail(stderr), stderr, not quiet
    )


class _UtilityError(RuntimeError):
    """A utility failed (exit 2 or worse).  The message ends with its
    stderr, so that the exception stands alone; ``stderr`` is that text and
    ``echoed`` says whether it went to our stderr already."""

    def __init__(self, message: str, stderr: str, echoed: bool) -> None:
        super().__init__(message)
        self.stderr = stderr
        self.echoed = echoed


def replay(trace: str | os.PathLike, *, python: str | None = None) -> dict:
    """Runs the one schedule saved in ``trace`` again, exactly; never searches.

    ``trace`` is the path of a trace file (``.ploom/<id>-original.json`` or
    ``-minimized.json``), or ``"-"`` to read it from standard input;
    ``python`` the interpreter of the worker (default: this one, whose minor
    version must be the trace's).

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
    """
    __tracebackhide__ = True
    path = os.fspath(trace)
    if not isinstance(path, str):
        raise TypeError(f"ploom.replay: trace must be a path, not {type(trace).__name__}")
    argv = [_find_utility(_REPLAY), f"--python={python or sys.executable}", "-q", path]
    from_stdin = path == "-"
    stdin = None if from_stdin else subprocess.DEVNULL
    code, stdout, stderr = _run(argv, dict(os.environ), echo_stderr=False, stdin=stdin)
    # a trace read from standard input has no path to replay it by again
    shown = None if from_stdin else _shown_path(path)
    if code == 4:
        marker = "ReplayDivergenceError: "
        for line in stderr.splitlines():
            if marker in line:
                raise ReplayDivergenceError(line.split(marker, 1)[1].strip(), shown)
        raise ReplayDivergenceError(stderr.strip() or f"{_REPLAY} exited 4", shown)
    if code in (0, 1, 3):
        try:
            replayed = loads_strict(stdout)
            outcome = replayed["outcome"]
        except (ValueError, KeyError, TypeError) as exc:
            raise RuntimeError(
                f"ploom: {_REPLAY} exited {code} without a valid trace on stdout ({exc!r})"
                + _stderr_tail(stderr)
            ) from None
        if code == 0:
            return replayed
        if code == 1:
            raise ModelCheckError(outcome.get("summary") or "the schedule failed", shown)
        raise IncompleteExplorationError(
            f"replay incomplete: {outcome.get('summary') or 'the schedule reached its step limit'}; "
            f"a limit is never a pass. Trace: {shown}"
        )
    lines = [line for line in stderr.splitlines() if line.strip()]
    if lines and code == 2:
        raise RuntimeError("\n".join(lines[-20:]))
    raise RuntimeError(f"ploom: {_REPLAY} failed on {path!r} (exit {code})" + _stderr_tail(stderr))


def _env_with_root(import_root: str | None) -> dict:
    """This process's environment, with import_root first on PYTHONPATH."""
    env = dict(os.environ)
    if import_root:
        # The worker must import the scenario's module as this process did:
        # put the folder its top-level package lives in on the worker's path.
        old = env.get("PYTHONPATH")
        env["PYTHONPATH"] = import_root + (os.pathsep + old if old else "")
    return env


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


def _target(scenario: Any) -> tuple[str, str | None]:
    """Returns the TARGET naming ``scenario`` for the worker, and the folder
    to put on the worker's import path (None if nothing is needed)."""
    if not callable(scenario):
        raise ValueError(f"ploom.check: the scenario must be a function, not {type(scenario).__name__}")
    qualname = getattr(scenario, "__qualname__", None)
    module_name = getattr(scenario, "__module__", None)
    if not isinstance(qualname, str) or not isinstance(module_name, str):
        raise ValueError(
            f"ploom.check: {scenario!r} has no module and qualified name; "
            "pass a function defined at module level"
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
    module = sys.modules.get(module_name)
    if module_name == "__main__":
        spec = getattr(module, "__spec__", None)
        if spec is not None and spec.name and spec.name != "__main__":
            # run with `python -m pkg.mod`: the worker imports pkg.mod
            module_name = spec.name
    if module_name == "__main__":
        path = getattr(module, "__file__", None)
        if not path:
            raise ValueError(
                "ploom.check: the scenario is in __main__ but __main__ has no file "
                "(an interactive session or python -c); define it in a module or a .py file"
            )
        return f"{os.path.abspath(path)}:{qualname}", None
    path = getattr(module, "__file__", None)
    if not path:
        return f"{module_name}:{qualname}", None
    return f"{module_name}:{qualname}", root_above(path, module_name)


def _find_utility(name: str) -> str:
    """Finds a ploom utility: in $PLOOM_BIN_DIR, beside this interpreter (a
    venv's bin/), or on PATH."""
    bin_dir = os.environ.get("PLOOM_BIN_DIR")
    if bin_dir:
        path = os.path.join(bin_dir, name)
        if os.access(path, os.X_OK):
            return path
        raise RuntimeError(f"ploom: PLOOM_BIN_DIR is {bin_dir!r} but it holds no executable {name!r}")
    beside = os.path.join(os.path.dirname(sys.executable), name)
    if os.access(beside, os.X_OK):
        return beside
    found = shutil.which(name)
    if found:
        return found
    raise RuntimeError(
        f"ploom: cannot find the {name!r} utility (looked in PLOOM_BIN_DIR, "
        f"{os.path.dirname(sys.executable)!r} and PATH); build ploom with `make` and use "
        "its .venv, or set PLOOM_BIN_DIR to the folder that holds the utilities"
    )


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    seen: dict = {}
    for name, value in pairs:
        if name in seen:
            raise ValueError(f"duplicate key {name!r}")
        seen[name] = value
    return seen


def loads_strict(text: str) -> Any:
    """json.loads, refusing an object with two members of one name: JSON
    leaves their meaning open, and ploom's C readers refuse them too, so
    that every reader of a trace reads the same document."""
    return json.loads(text, object_pairs_hook=_unique_keys)


def _run(
    argv: list[str],
    env: dict,
    echo_stderr: bool = True,
    stdin: Any = subprocess.DEVNULL,
    progress: Callable[[dict], Any] | None = None,
) -> tuple[int, str, str]:
    """Runs the utility; its stderr is kept, and goes to ours as it comes
    when echo_stderr is true.  With progress, the utility's
    ``--progress=json`` lines go to that function instead, and are neither
    kept nor echoed.

    One thread multiplexes both pipes, so that Ctrl-C (delivered to the main
    thread) interrupts the wait at once; the utility is then terminated,
    which ends its worker and children.
    """
    # lets the utility stop (and stop its worker) if this process is killed
    env = dict(env, PLOOM_CALLER_PID=str(os.getpid()))
    proc = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out_chunks: list[bytes] = []
    err_chunks: list[bytes] = []
    reports = _ProgressLines(progress) if progress else None
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ, out_chunks)
            sel.register(proc.stderr, selectors.EVENT_READ, err_chunks)
            while sel.get_map():
                for key, _ in sel.select():
                    data = os.read(key.fd, 65536)
                    eof = not data
                    if key.data is err_chunks and reports is not None:
                        data = reports.rest() if eof else reports.feed(data)
                    if data:
                        key.data.append(data)
                        if key.data is err_chunks and echo_stderr:
                            _pass_through(data)
                    if eof:
                        sel.unregister(key.fileobj)
        code = proc.wait()
    except BaseException:
        # KeyboardInterrupt and the like: do not leave the utility running.
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        raise
    finally:
        proc.stdout.close()
        proc.stderr.close()
    out = b"".join(out_chunks).decode("utf-8", "replace")
    return code, out, b"".join(err_chunks).decode("utf-8", "replace")


class _ProgressLines:
    """Takes ``ploom-explore --progress=json``'s lines out of its stderr, for
    a function; the other lines, its messages, are left as they came."""

    def __init__(self, report: Callable[[dict], Any]) -> None:
        self._report = report
        self._partial = b""

    def feed(self, data: bytes) -> bytes:
        """The data that is not progress, of whole lines; the last line waits
        for its end."""
        *lines, self._partial = (self._partial + data).split(b"\n")
        rest = []
        for line in lines:
            report = None
            if line.startswith(b"{"):
                try:
                    report = json.loads(line)
                except ValueError:
                    pass
            # a scenario's own output may start with a brace too
            if isinstance(report, dict) and "schedules" in report and "done" in report:
                self._report(report)
            else:
                rest.append(line + b"\n")
        return b"".join(rest)

    def rest(self) -> bytes:
        """A last line without its end: never progress, which ends its lines."""
        rest, self._partial = self._partial, b""
        return rest


def _pass_through(data: bytes) -> None:
    try:
        sys.stderr.write(data.decode("utf-8", "replace"))
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # our stderr is gone; the text is still kept for the error


def _stderr_tail(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    if not lines:
        return ""
    return ":\n" + "\n".join(lines[-20:])


_LIMITS = {
    "max-schedules": lambda c: f"the schedule limit (max_schedules={c.max_schedules})",
    "time-limit": lambda c: f"the time limit (time_limit={c.time_limit} s)",
    "max-steps": lambda c: (
        f"the step limit: a schedule reached max_steps={c.max_steps} steps "
        "(a thread that never finishes?)"
        if c.max_steps
        else "the step limit: a schedule reached the most steps any schedule may take "
        "(max_steps=0 sets no bound of its own; a thread that never finishes?)"
    ),
}


def _incomplete_message(stats: Statistics, config: Config) -> str:
    describe = _LIMITS.get(stats.stopped_by or "")
    limit = describe(config) if describe else f"a limit ({stats.stopped_by})"
    message = (
        f"exploration incomplete: stopped by {limit} after {stats.schedules} schedules; "
        "a limit is never a pass, since the schedules not explored may fail"
    )
    if stats.trace:
        message += f". Trace: {stats.trace}"
    return message
