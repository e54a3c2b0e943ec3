"""``ploom`` and ``python -m ploom``: check a scenario, replay a trace, show a trace.

    ploom check [OPTIONS] TARGET     explore TARGET (module:function
                                     or path/to/file.py:function)
    ploom replay [--python PATH] [--on-current-source] [--schedule-timeout SECONDS] [-q] TRACE
    ploom show [OPTIONS] [TRACE]

The ``ploom`` command (the console script that installing ploom puts in
the environment's bin/) and ``python -m ploom`` are this one program; it
names itself as it was called.

``check`` passes its arguments to ``ploom-explore`` as they are, so it takes
every option of that utility with the same spelling, value and default
(``ploom check --help`` lists them); the defaults it sets are
``--python``, this interpreter, and the project's settings found from the
current folder (``[tool.ploom]``, see ``ploom._settings``), which it names
on a line of standard error and which the arguments override.  Instead of the statistics it prints the
failure, its traces and the command that replays it (or the count of
schedules that passed, and whose plain state they covered when the search
instrumented any, or the limit that stopped the search).  ``show`` is
``ploom-show`` with the same arguments, its output and exit status
(``ploom show --help`` lists its options).

The exit status is the utilities' (see ``man ploom-explore``): 0 passed,
1 a schedule failed, 2 usage error or bad input, 3 a limit stopped the
search (never a pass), 4 a schedule or a replay did not follow its choices
or its trace, 5 an internal error of ploom (please report it), 6 a setup
mistake (a standard-library primitive ran in a schedule: patch= is
missing a module), 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from typing import Any

from ploom import _utility
from ploom._ploom import (
    EXIT_DIVERGENCE,
    EXIT_FAILURE,
    EXIT_INCOMPLETE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SETUP,
    EXIT_USAGE,
)

# The console script runs main() with its own path as argv[0]; python -m
# ploom with that of this file.
PROG = "ploom" if sys.argv and os.path.basename(sys.argv[0]) == "ploom" else "python -m ploom"


def _parser() -> argparse.ArgumentParser:
    from ploom import __version__

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Find thread bugs in Python. Replay the schedule that failed.",
        epilog="exit status: 0 passed, 1 a schedule failed, 2 usage error or bad input, "
        "3 a limit stopped the search (never a pass), 4 a schedule or a replay did not follow "
        "its choices or its trace, 5 an internal error of ploom (please report it), 6 a setup "
        "mistake (a standard-library primitive ran in a schedule), 130 interrupted",
    )
    parser.add_argument("-V", "--version", action="version", version=f"ploom {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    # listed for the help only: main() hands check's arguments to
    # ploom-explore before this parser sees them
    check = commands.add_parser(
        "check",
        help=f"explore every schedule of a scenario (options: {PROG} check --help)",
        add_help=False,
    )
    check.add_argument("args", nargs=argparse.REMAINDER, metavar="[OPTIONS] TARGET")

    replay = commands.add_parser(
        "replay",
        help="run the schedule saved in a trace again",
        description="Run exactly the schedule saved in TRACE, once; never search.",
    )
    replay.add_argument("trace", metavar="TRACE",
                        help="a trace file, such as .ploom/ID-minimized.json, or - for standard input")
    replay.add_argument("--python", metavar="PATH",
                        help="the worker's interpreter (default: this one)")
    replay.add_argument("--on-current-source", action="store_true",
                        help="run the recorded order of tasks on the source as it is now, edited "
                        "or not (a fix, say): exit 1 if it still fails, 0 if it passes")
    # passed on as typed: ploom-replay judges the value
    replay.add_argument("--schedule-timeout", metavar="SECONDS",
                        help="wall clock of the schedule, when shorter than the trace's "
                        "(0: the trace's)")
    replay.add_argument("-q", "--quiet", action="store_true",
                        help='no "reproduced" line: the exit status says it')

    # listed for the help only, as check is: ploom-show parses them
    show = commands.add_parser(
        "show",
        help=f"render a trace as a table or a page (options: {PROG} show --help)",
        add_help=False,
    )
    show.add_argument("args", nargs=argparse.REMAINDER, metavar="[OPTIONS] [TRACE]")
    return parser


def _error(message: str) -> int:
    """Prints the message (with our name unless it starts with a
    utility's, "ploom-replay: ...", or ploom's, "ploom: ...")."""
    if not message.startswith("ploom"):
        message = f"{PROG}: {message}"
    print(message, file=sys.stderr)
    return EXIT_USAGE


def _print_failure(exc, *, on_current_source: bool = False) -> None:
    # the message is the report: the failure, its traces, the next step,
    # whose replay command is this program's, as it was called
    trace = exc.trace_to_read
    if trace:
        flag = "--on-current-source " if on_current_source else ""
        exc._suggest(f"{PROG} replay {flag}{shlex.quote(trace)}", trace)
    print(f"ploom.exploration.ModelCheckError: {exc}")


def _check(args: list[str]) -> int:
    from ploom import _settings, exploration

    try:
        settings = _settings.find_settings(os.getcwd())
        options, applied = settings.options(args)
    except (ValueError, TypeError) as exc:
        return _error(str(exc))
    if applied and not {"-h", "--help", "-V", "--version"} & set(args):
        print(f"{PROG} check: " + "; ".join(applied), file=sys.stderr)
    # the worker imports as pytest does in this project (its pythonpath)
    env = _utility.env_with_root(os.pathsep.join(exploration.project_paths(settings, own=False)) or None)
    try:
        stats = exploration.search([*options, *args], env, None, usage_name=f"{PROG} check")
    except exploration.ModelCheckError as exc:
        _print_failure(exc)
        return EXIT_FAILURE
    except exploration.IncompleteExplorationError as exc:
        print(f"ploom.exploration.IncompleteExplorationError: {exc}")
        return EXIT_INCOMPLETE
    except exploration.SetupError:
        # ploom-explore said what on our stderr; no trace was saved
        return EXIT_SETUP
    except ValueError:
        # a usage error: ploom-explore said why, and its usage, on our stderr
        return EXIT_USAGE
    except _utility.UtilityError as exc:
        # ploom-explore said why on our stderr; a schedule that did not
        # follow its choices, an internal error, and an interrupt (a Ctrl-C
        # that reached the utility before this process saw it) keep their
        # own status
        return exc.code if exc.code in (EXIT_DIVERGENCE, EXIT_INTERNAL, EXIT_INTERRUPTED) else EXIT_USAGE
    except RuntimeError as exc:
        return _error(str(exc))
    if stats is not None:
        covered = f"{_search(stats)}{_plain_state(stats)}{_saved(stats)}"
        print(f"{exploration.counted(stats.schedules, 'schedule')}, all passed{covered}")
    return EXIT_OK


def _saved(stats) -> str:
    """The saved failing schedules that ran first and passed: "; 2 saved
    schedules passed first", or "" when none ran."""
    from ploom import exploration

    n = stats.saved_runs
    return f"; {exploration.counted(n, 'saved schedule')} passed first" if n else ""


def _search(stats) -> str:
    """The search when the options did not choose it and it is not plain
    depth-first search: " under reduction dpor (the default when modules
    are patched)", else ""."""
    why = stats.search_default
    return f" under reduction {stats.reduction} ({why})" if why else ""


def _plain_state(stats) -> str:
    """What a pass covered beyond ploom's own objects: " (plain state seen
    in: the scenario, mylib.pool)", or "" when nothing was instrumented."""
    seen = (["the scenario"] if stats.instrument_scenario else []) + list(stats.instrument)
    return f" (plain state seen in: {', '.join(seen)})" if seen else ""


def _replay(args) -> int:
    from ploom import exploration

    try:
        trace = exploration.replay_path(args.trace, args.python, args.on_current_source, args.schedule_timeout,
                                         usage_name=f"{PROG} replay")
    except exploration.ModelCheckError as exc:
        _print_failure(exc, on_current_source=args.on_current_source)
        return EXIT_FAILURE
    except exploration.ReplayDivergenceError as exc:
        print(f"ploom.exploration.ReplayDivergenceError: {exploration.printable(str(exc))}")
        edited = re.search(r"^the scenario's source changed: .* \(recorded blob \w+, now \w+\)$", str(exc))
        if edited and not args.on_current_source:
            # an edit (a fix, say) is what a user most often meets here
            shown = exploration.printable(args.trace)
            print(f"Replay on the current source: {PROG} replay --on-current-source {shown}")
        return EXIT_DIVERGENCE
    except exploration.IncompleteExplorationError as exc:
        print(f"ploom.exploration.IncompleteExplorationError: {exc}")
        return EXIT_INCOMPLETE
    except RuntimeError as exc:
        return _error(str(exc))
    if args.on_current_source or args.quiet:
        # ploom-replay said it on stderr, with the departures (or the
        # user asked for the exit status alone)
        return EXIT_OK
    print(f"reproduced: {exploration.printable(trace['outcome'].get('summary', 'pass'))}")
    return EXIT_OK


def _show(args: list[str]) -> int:

    try:
        program = _utility.find_utility("ploom-show")
    except RuntimeError as exc:
        return _error(str(exc))
    sys.stdout.flush()
    # ploom-show writes to our stdout and stderr directly: its messages
    # already name it, its usage names us, and its exit status is ours
    env = dict(os.environ, PLOOM_USAGE_NAME=f"{PROG} show")
    return subprocess.run([program, *args], env=env, check=False).returncode


def main(argv: list[str] | None = None) -> int:
    """Runs one command; returns the exit status (exit.h's codes)."""
    if argv is None:
        argv = sys.argv[1:]
    # one search per process: a worker template (_template.py) would only
    # cost it its start
    os.environ.setdefault("PLOOM_WORKER_TEMPLATE", "off")
    # a utility's arguments, or replay's parsed options
    args: Any
    if argv[:1] in (["check"], ["show"]):
        # a utility's arguments, which it alone parses
        command, args = {"check": _check, "show": _show}[argv[0]], argv[1:]
    else:
        try:
            args = _parser().parse_args(argv)
        except SystemExit as exc:
            # argparse exits 2 on a usage error and 0 for --help and --version
            return exc.code if isinstance(exc.code, int) else EXIT_USAGE
        command = _replay
    try:
        return command(args)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # the reader of our output went away (| head): stop quietly, and
        # keep the interpreter's last flush from complaining again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
