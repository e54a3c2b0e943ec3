"""``python -m ploom``: check a scenario, replay a trace, show a trace.

    python -m ploom check [OPTIONS] TARGET     explore TARGET (module:function
                                               or path/to/file.py:function)
    python -m ploom replay [--python PATH] TRACE
    python -m ploom show [--format FORMAT] [--color WHEN] [-w N] [TRACE]

The exit status is the utilities' (see ``man ploom-explore``): 0 passed,
1 a schedule failed, 2 usage error or bad input, 3 a limit stopped the
search (never a pass), 4 a replay did not follow its trace.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INCOMPLETE = 3
EXIT_DIVERGENCE = 4

PROG = "python -m ploom"


def _parser() -> argparse.ArgumentParser:
    from ploom import __version__

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Find thread bugs in Python. Replay the schedule that failed.",
        epilog="exit status: 0 passed, 1 a schedule failed, 2 usage error or bad input, "
        "3 a limit stopped the search (never a pass), 4 a replay did not follow its trace",
    )
    parser.add_argument("-V", "--version", action="version", version=f"ploom {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    check = commands.add_parser(
        "check",
        help="explore every schedule of a scenario",
        description="Explore the schedules of TARGET and stop at the first failure, "
        "saving its trace and a minimized one.",
    )
    check.add_argument("target", metavar="TARGET", help="module:function or path/to/file.py:function")
    check.add_argument("-p", "--max-preemptions", type=int, metavar="N",
                       help="only schedules with at most N preemptions")
    check.add_argument("--reduction", choices=("none", "dpor"), default="none",
                       help="none: every schedule (default); dpor: partial-order reduction")
    check.add_argument("-n", "--max-schedules", type=int, metavar="N",
                       help="stop after N schedules (the search is then incomplete)")
    check.add_argument("-t", "--time-limit", type=float, metavar="SECONDS",
                       help="stop after SECONDS (the search is then incomplete)")
    check.add_argument("-s", "--max-steps", type=int, metavar="N", default=10000,
                       help="steps per schedule (default 10000, 0: no bound)")
    check.add_argument("--schedule-timeout", type=float, metavar="SECONDS", default=10.0,
                       help="wall clock of one schedule (default 10)")
    check.add_argument("-k", "--keep-going", action="store_true",
                       help="do not stop at the first failure")
    check.add_argument("--hash-seed", type=int, metavar="N", default=0,
                       help="PYTHONHASHSEED of every schedule (default 0)")
    check.add_argument("--trace-dir", metavar="DIR", default=".ploom",
                       help="where failure traces go (default .ploom)")
    check.add_argument("--no-minimize", action="store_true",
                       help="do not look for the failure with fewer preemptions")
    check.add_argument("--patch", action="append", default=[], metavar="MODULE",
                       help="MODULE uses ploom's threading and queue (repeatable)")
    check.add_argument("-q", "--quiet", action="store_true", help="no progress lines")

    replay = commands.add_parser(
        "replay",
        help="run the schedule saved in a trace again",
        description="Run exactly the schedule saved in TRACE, once; never search.",
    )
    replay.add_argument("trace", metavar="TRACE",
                        help="a trace file, such as .ploom/ID-minimized.json, or - for standard input")
    replay.add_argument("--python", metavar="PATH",
                        help="the worker's interpreter (default: this one)")

    show = commands.add_parser(
        "show",
        help="render a trace as a table or a page",
        description="Render TRACE (or standard input) with one column per task, or as one HTML page.",
    )
    show.add_argument("trace", metavar="TRACE", nargs="?", default="-",
                      help="a trace file, or - (the default) for standard input")
    # ploom-show checks the value and says which ones it takes
    show.add_argument("--format", metavar="FORMAT",
                      help="ploom-show's --format: see ploom-show --help")
    show.add_argument("--color", choices=("never", "always", "auto"), default="never",
                      help="colour the marks and the outcome (default never)")
    show.add_argument("-w", "--width", type=int, metavar="N",
                      help="cut values so that a cell fits N characters (default 28)")
    return parser


def _error(message: str) -> int:
    """Prints the message (with our name unless it starts with a
    utility's, "ploom-replay: ...", or ploom's, "ploom: ...")."""
    if not message.startswith("ploom"):
        message = f"{PROG}: {message}"
    print(message, file=sys.stderr)
    return EXIT_USAGE


def _print_failure(exc, *, replayed: bool = False) -> None:
    print(f"ploom.exploration.ModelCheckError: {exc.summary}")
    if exc.original_trace:
        # a replay reproduces whichever trace it was given, minimized or not
        label = "Replayed trace" if replayed else "Original trace"
        print(f"{label}: {exc.original_trace}")
    if exc.minimized_trace:
        print(f"Minimized trace: {exc.minimized_trace}")
    replayable = exc.minimized_trace or exc.original_trace
    if replayable:
        print(f"Replay: {PROG} replay {replayable}")


def _check(args) -> int:
    from ploom import exploration

    try:
        config = exploration.Config(
            max_preemptions=args.max_preemptions,
            reduction=args.reduction,
            max_schedules=args.max_schedules,
            time_limit=args.time_limit,
            max_steps=args.max_steps,
            schedule_timeout=args.schedule_timeout,
            keep_going=args.keep_going,
            hash_seed=args.hash_seed,
            trace_dir=args.trace_dir,
            minimize=not args.no_minimize,
            patch=tuple(args.patch),
        )
    except ValueError as exc:
        return _error(str(exc))
    try:
        stats = exploration._explore(args.target, None, config, quiet=args.quiet)
    except exploration.ModelCheckError as exc:
        _print_failure(exc)
        return EXIT_FAILURE
    except exploration.IncompleteExplorationError as exc:
        print(f"ploom.exploration.IncompleteExplorationError: {exc}")
        return EXIT_INCOMPLETE
    except ValueError as exc:
        # ploom-explore refused an option: its reason, as it says it
        return _error(str(exc))
    except exploration._UtilityError as exc:
        # ploom-explore's own message says why: print it unless it was
        # already passed through
        if not exc.echoed:
            sys.stderr.write(exc.stderr if exc.stderr.strip() else f"{exc}\n")
        return EXIT_USAGE
    except RuntimeError as exc:
        return _error(str(exc))
    print(f"{stats.schedules} schedules, all passed")
    return EXIT_OK


def _replay(args) -> int:
    from ploom import exploration

    try:
        trace = exploration.replay(args.trace, python=args.python)
    except exploration.ModelCheckError as exc:
        _print_failure(exc, replayed=True)
        return EXIT_FAILURE
    except exploration.ReplayDivergenceError as exc:
        print(f"ploom.exploration.ReplayDivergenceError: {exc}")
        return EXIT_DIVERGENCE
    except exploration.IncompleteExplorationError as exc:
        print(f"ploom.exploration.IncompleteExplorationError: {exc}")
        return EXIT_INCOMPLETE
    except RuntimeError as exc:
        return _error(str(exc))
    print(f"reproduced: {trace['outcome'].get('summary', 'pass')}")
    return EXIT_OK


def _show(args) -> int:
    from ploom import exploration

    try:
        argv = [exploration._find_utility("ploom-show"), f"--color={args.color}"]
    except RuntimeError as exc:
        return _error(str(exc))
    if args.format is not None:
        argv.append(f"--format={args.format}")
    if args.width is not None:
        argv.append(f"--width={args.width}")
    argv.append(args.trace)
    sys.stdout.flush()
    # ploom-show writes to our stdout and stderr directly: its messages
    # already name it, and its exit status is ours
    return subprocess.run(argv, check=False).returncode


def main(argv: list[str] | None = None) -> int:
    """Runs one command; returns the exit status (0, 1, 2, 3 or 4)."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        # argparse exits 2 on a usage error and 0 for --help and --version
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        return {"check": _check, "replay": _replay, "show": _show}[args.command](args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader of our output went away (| head): stop quietly, and
        # keep the interpreter's last flush from complaining again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
