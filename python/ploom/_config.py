"""ploom.Config: the options of a search, and the checks of their values
that come before any utility runs (the utilities check the rest, and say
why: python/ploom/exploration.py passes their refusals on)."""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Literal


@dataclasses.dataclass(frozen=True)
class Config:
    """How :func:`check` explores a scenario: ``ploom-explore``'s options.

    Each field is one option of ``ploom-explore`` (``man ploom-explore``,
    ``python -m ploom check --help``), which states its bounds and its
    default.  None, the default of every valued field, leaves the option
    out, so the utility's own default holds; ``keep_going`` and ``minimize``
    are the flags ``--keep-going`` and ``--no-minimize``.

    max_preemptions (``--max-preemptions``)
        Explore only the schedules with at most this many preemptions (a
        switch away from a task that could have continued); ``None``
        explores every schedule.
    reduction (``--reduction``)
        ``"none"``: plain depth-first search over every schedule, the
        default unless ``patch`` names modules.  ``"dpor"``: dynamic partial-order reduction, which
        runs one schedule (or a few) for each class of schedules that differ
        only in the order of steps that do not conflict (two steps conflict
        when they touch the same cell, lock or thread and one of them
        changes it), and so reaches every outcome of ``"none"`` in far
        fewer schedules.  With ``max_preemptions`` it is bounded
        partial-order reduction (Coons, Musuvathi and McKinley, OOPSLA
        2013): it reaches the outcomes of ``"none"`` with the same bound.
        With ``jobs`` above 1 the workers share one reduced search.  When
        neither ``reduction`` nor ``search`` is set and ``patch`` names
        modules (real code, on which depth-first search rarely finishes),
        the reduction is the default, and ``Statistics.search_default``
        says so: ``"the default when modules are patched"``.  Without them,
        a depth-first search that finds plain state that tasks share starts
        again as the reduction (``"the default when the code under test
        shares plain state"``); a scenario of ploom's own operations shares
        none and keeps depth-first search.
    search (``--search``)
        The order the schedules are tried in.  ``"dfs"`` (the utility's
        default): depth first.  ``"ipb"``: iterative preemption bounding,
        every schedule with no preemption, then every one with exactly 1,
        then 2, ... (up to ``max_preemptions`` when set): the same
        schedules as ``"dfs"``, each run once, but the first failure found
        has the fewest preemptions of any failing schedule, so it is its
        own minimized trace, and a bug that needs few preemptions is found
        after far fewer schedules.  It cannot be combined with
        ``reduction="dpor"``.  ``"pct"`` and ``"random"`` sample: each
        schedule's choices are drawn, by probabilistic concurrency testing
        (Burckhardt et al., ASPLOS 2010; a schedule has at most
        ``pct_depth - 1`` preemptions) or uniformly at each step.  A sample
        needs ``max_schedules`` or ``time_limit``, never completes, and
        without a failure raises :class:`IncompleteExplorationError`: a
        sample is never a pass.  It cannot be combined with
        ``reduction="dpor"`` or ``max_preemptions``.  The docs' page on
        sampling states what PCT's draws promise.
    seed (``--seed``)
        The seed of a sample, from 0 to 2**32 - 1: the same seed gives the
        same schedules again, recorded in the statistics and the traces.
    pct_depth (``--pct-depth``)
        PCT's depth d, from 1: ``d - 1`` priority change points, so at most
        ``d - 1`` preemptions, in each schedule (the utility's default is 3).
    max_schedules (``--max-schedules``)
        Stop after this many schedules.  If schedules remained, the search
        is incomplete and :func:`check` raises
        :class:`IncompleteExplorationError`.
    time_limit (``--time-limit``)
        Stop after this many seconds; incomplete if schedules remained.
    max_steps (``--max-steps``)
        Steps (scheduling points) allowed in one schedule.  A schedule that
        reaches it, such as a thread spinning forever, makes the search
        incomplete.  0 allows the most steps any schedule may take,
        200,000, so that its trace can still be read.
    schedule_timeout (``--schedule-timeout``)
        Wall-clock seconds one schedule may take.  A schedule that takes
        longer (blocked outside ploom, say in ``time.sleep``) is a failure of
        kind ``timeout``.  0 sets no timeout.
    keep_going (``--keep-going``)
        Do not stop at the first failure: explore every schedule and count
        the failing ones.  The first failure's trace is still saved.
    hash_seed (``--hash-seed``)
        ``PYTHONHASHSEED`` of every schedule, so set and dict order is the
        same in all of them.
    trace_dir (``--trace-dir``)
        Where failure traces are written, created if missing.
    minimize (``--no-minimize`` when False)
        At the first failure, also look for the same failure with fewer
        preemptions and save it as ``<id>-minimized.json`` beside the
        original (:attr:`ModelCheckError.minimized_trace`).
    minimize_seconds (``--minimize-seconds``)
        Seconds that look may take (ploom-explore's default when None; 0
        sets no limit).  When it stops early, the minimized trace is the
        one with the fewest preemptions found, and
        ``Statistics.raw["minimize_stopped_by"]`` says why.
    saved (``--no-saved`` when False)
        Before the search, run the scenario's failing schedules saved in
        ``trace_dir`` (the newest 10), each on the current source, following
        its order of tasks where the edited code still allows it, as
        ``python -m ploom replay --on-current-source`` does: a failure not
        fixed yet fails again at once, as that saved schedule's failure.
        They are counted apart from the search's schedules
        (``Statistics.saved_runs``).  False runs only the search.
    jobs (``--jobs``)
        Worker processes that run schedules at once.  They explore exactly
        the schedules one would; without ``keep_going`` the failure reported
        is the first one any of them found, which may be another failing
        schedule than one worker reports first.
    patch (``--patch``, once per module)
        Names of modules, such as ``("mylib.pool",)``, whose references to
        the standard ``threading`` and ``queue`` modules (and to names
        imported from them) the worker swaps for ``ploom.threading`` and
        ``ploom.queue`` after it imported the scenario's module, so that
        library code runs under the scheduler unchanged.  The scenario's
        module must import them: nothing new is imported.  The scenario's
        own module and every module of the user's project that it imports
        (a file under the repository's work tree, or without one the
        scenario's import root, outside ``site-packages`` and the standard
        library) are patched without being named, unless the names include
        ``"-"``, which patches only the modules named; a library installed
        in ``site-packages`` is patched only when named.  The traces
        record the list and a replay patches the same modules.  A tuple or
        list of strings; a string alone is refused, since ``("mylib")`` is
        the string ``"mylib"``.
    instrument (``--instrument``, once per module)
        Names of modules, such as ``("mylib.pool",)``, whose plain state
        (attributes, subscripts, container methods, globals) the search
        sees: the worker rewrites them as they are imported (a package's
        submodules too), and their accesses become scheduling points (under
        ``reduction="dpor"`` every one, under the other searches those found
        touching state two tasks share, after which the search starts
        again with them as points), so that races on plain Python objects
        are explored like races on a ``SharedCell``.  Every search
        instruments the scenario's own module, the modules of its project
        that are patched by default, and every module of ``patch`` as
        well, unless the names include ``"-"``, which instruments only the
        modules named.  The traces and the statistics record what was
        instrumented, and a replay instruments the same.  A tuple or list
        of strings, as ``patch``.
    timeouts (``--timeouts``)
        The time model (:doc:`threading`).  ``"idle"``, the default:
        computation takes no time, ``time.sleep(d)`` blocks its task until
        ploom's clock reaches now + d, a timed wait ends by its resource or
        by its deadline, and the clock jumps to the earliest deadline only
        when no task can run; ``sleep(0)`` is a fair yield, so spin-waits
        on sleeps end (``yield_now()`` stays a plain scheduling point), and
        a clock read is no scheduling point.  ``"any"``: the stress model, in which a
        timed wait may time out at any step, as if what it waits for
        stalled for its whole timeout, and a clock read is a point; a failure
        after such a stall says so.  The traces record the model, and a
        replay runs under the trace's.

    The options of ``ploom-explore`` that are not fields: ``--python`` (the
    worker runs the interpreter that runs :func:`check`, which imported the
    scenario), ``--quiet`` (:func:`check` passes the utility's progress on
    to standard error, where it can be redirected) and ``--check-options``
    (a dry run, which :func:`check` does not need).

    A value of the wrong type (``True`` for a count, ``"2"`` for ``jobs``)
    is a TypeError naming the field, here.  The values themselves are
    ``ploom-explore``'s to judge: a value it refuses makes :func:`check`
    raise a ValueError, before any schedule runs, carrying its reason, such
    as ``ploom-explore: invalid --max-steps '-1': not an integer from 0 to
    200000``.
    """

    max_preemptions: int | None = None
    # the values ploom-explore takes, for an editor to offer; the utility
    # still judges each value (a str outside them reaches it and is refused)
    reduction: Literal["none", "dpor"] | None = None
    search: Literal["dfs", "ipb", "pct", "random"] | None = None
    seed: int | None = None
    pct_depth: int | None = None
    max_schedules: int | None = None
    time_limit: float | None = None
    max_steps: int | None = None
    schedule_timeout: float | None = None
    keep_going: bool = False
    hash_seed: int | None = None
    trace_dir: str | os.PathLike | None = None
    minimize: bool = True
    minimize_seconds: float | None = None
    saved: bool = True
    jobs: int | None = None
    patch: tuple[str, ...] = ()
    instrument: tuple[str, ...] = ()
    timeouts: Literal["idle", "any"] | None = None

    def __post_init__(self) -> None:
        # Types only: the bounds are ploom-explore's, stated in one place.
        for field, _, kind in OPTIONS:
            _CHECKS[kind](field, getattr(self, field))
            # a list is taken as the tuple it says, so that the config stays hashable
            if kind == "names":
                object.__setattr__(self, field, tuple(getattr(self, field)))

    def _options(self) -> list[str]:
        """The ``ploom-explore`` options that say the same as this config."""
        opts = []
        for field, option, kind in OPTIONS:
            value = getattr(self, field)
            if kind == "flag":
                opts += [option] if value else []
            elif kind == "unset flag":
                opts += [] if value else [option]
            elif kind == "names":
                opts += [f"{option}={name}" for name in value]
            elif value is not None:
                opts.append(f"{option}={spelled(value)}")
        return opts


# The one table of Config's fields and the ploom-explore options they
# become, in the order they are passed.  A kind says what values the field
# takes and how it becomes options: "flag" is passed when True, "unset
# flag" when False, "names" once per name, the others as --option=VALUE
# unless None.
OPTIONS = (
    ("max_preemptions", "--max-preemptions", "int"),
    ("reduction", "--reduction", "str"),
    ("search", "--search", "str"),
    ("seed", "--seed", "int"),
    ("pct_depth", "--pct-depth", "int"),
    ("max_schedules", "--max-schedules", "int"),
    ("time_limit", "--time-limit", "seconds"),
    ("max_steps", "--max-steps", "int"),
    ("schedule_timeout", "--schedule-timeout", "seconds"),
    ("keep_going", "--keep-going", "flag"),
    ("hash_seed", "--hash-seed", "int"),
    ("trace_dir", "--trace-dir", "path"),
    ("minimize", "--no-minimize", "unset flag"),
    ("minimize_seconds", "--minimize-seconds", "seconds"),
    ("saved", "--no-saved", "unset flag"),
    ("jobs", "--jobs", "int"),
    ("patch", "--patch", "names"),
    ("instrument", "--instrument", "names"),
    ("timeouts", "--timeouts", "str"),
)


# The options of ploom-explore that Config leaves out, and why (the
# Config docstring says it to the user).
NOT_IN_CONFIG = {
    "--python": "the worker runs the interpreter that runs check(), which imported the scenario",
    "--quiet": "check() passes the progress on to standard error, where it can be redirected",
    "--progress": "check(progress=FUNCTION) asks for the JSON lines and hands each to FUNCTION",
    "--check-options": "a dry run; check() learns of a refused option from the search itself",
    "--shard": "a part of a search, for an engine to run N of and ploom-merge to add up: "
    "check() answers for a whole search",
    "--shard-depth": "goes with --shard",
    "--help": "not a search",
    "--version": "not a search",
}


def spelled(value: Any) -> str:
    """A value as ploom-explore reads it: repr keeps a float's every digit."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    return value if isinstance(value, str) else repr(value)


def _check_int(name: str, value: Any) -> None:
    # bool is an int subclass, but True as a count is surely a mistake
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise TypeError(f"Config.{name} must be an integer, not {value!r}")


def check_seconds(name: str, value: Any, owner: str | None = None) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise TypeError(f"{owner or 'Config.' + name} must be a number of seconds, not {value!r}")


def _check_str(name: str, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"Config.{name} must be a string, not {value!r}")


def _check_bool(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"Config.{name} must be True or False, not {value!r}")


def _check_path(name: str, value: Any) -> None:
    if value is not None and (not isinstance(value, (str, os.PathLike)) or not isinstance(os.fspath(value), str)):
        raise TypeError(f"Config.{name} must be a path, not {value!r}")


def _check_names(name: str, value: Any) -> None:
    # the names themselves are ploom-explore's to judge, as the other values
    if isinstance(value, str):
        raise TypeError(
            f"Config.{name} must be a tuple of module names, not the string {value!r} "
            f"(write ({value!r},) for one module)"
        )
    if not isinstance(value, (tuple, list)) or not all(isinstance(item, str) for item in value):
        raise TypeError(f"Config.{name} must be a tuple of module names, not {value!r}")


_CHECKS = {
    "int": _check_int,
    "seconds": check_seconds,
    "str": _check_str,
    "flag": _check_bool,
    "unset flag": _check_bool,
    "path": _check_path,
    "names": _check_names,
}
