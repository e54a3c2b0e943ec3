"""The worker's pytest target: one collected pytest item, explored.

A target ``pytest:NODEID`` (or ``pytest:threads=N:NODEID``) names the
item of pytest's node id NODEID, relative to pytest's rootdir.  The
worker runs pytest's own collection of that item once, with ploom's
patching and rewriting installed first, so that the test's module, the
conftests and the project's modules import ploom's threading; each
schedule, a fork of the worker, then runs the item's whole protocol
(fixtures of every scope set up, the call, every fixture torn down) under
the scheduler.  A fixture of session or module scope is therefore set up
afresh in each schedule: nothing a schedule does survives it, as for any
scenario.  With ``threads=N`` the test's body runs in N ploom tasks at
once over the same fixture values.

The rootdir is the folder the worker runs in (``pytest --ploom`` starts
the search there); on a replay it is the folder above the recorded test
file that the node id's path leads to, so a trace replays from the
rootdir of any copy of the project.
"""

from __future__ import annotations

import os
import sys

PREFIX = "pytest:"
_THREADS = "threads="


def is_pytest_target(target):
    return target.startswith(PREFIX)


def make_target(nodeid, threads=1):
    """The target of the item with this node id (relative to the rootdir)."""
    if threads > 1:
        return f"{PREFIX}{_THREADS}{threads}:{nodeid}"
    return f"{PREFIX}{nodeid}"


def split(target):
    """(node id, threads) of a pytest target; ValueError when malformed."""
    rest = target[len(PREFIX):]
    threads = 1
    if rest.startswith(_THREADS):
        count, sep, rest = rest[len(_THREADS):].partition(":")
        if not sep or not count.isdigit() or not 1 <= int(count) <= 64:
            raise ValueError(f"target {target!r}: threads= needs a count from 1 to 64")
        threads = int(count)
    path = rest.partition("::")[0]
    if not rest or not path or os.path.isabs(path) or os.pardir in path.split("/"):
        raise ValueError(f"target {target!r} names no pytest node id relative to the rootdir")
    return rest, threads


def _rootdir(nodeid, expect):
    if expect is None:
        return os.getcwd()
    path = nodeid.partition("::")[0]
    expect = os.path.abspath(expect)
    suffix = os.sep + path.replace("/", os.sep)
    if not expect.endswith(suffix):
        raise ValueError(f"the trace's test file {expect!r} is not the node id's {path!r}")
    return expect[: -len(suffix)] or os.sep


class _Quiet:
    """A file that takes and drops what the inner session's terminal
    writes: its header and collection lines are not the schedule's."""

    def write(self, text):
        return len(text)

    def flush(self):
        pass

    def isatty(self):
        return False

    encoding = "utf-8"


class _CollectErrors:
    """The collection errors of the worker's session, for the message of
    a test it cannot find (its terminal says nothing)."""

    def __init__(self):
        self.texts = []

    def pytest_collectreport(self, report):
        if report.failed:
            self.texts.append(f"{report.nodeid or 'collecting'}: {report.longreprtext}")

    def __str__(self):
        if not self.texts:
            return ""
        # one line: the worker's error is one (lib/event.h); the "E" lines
        # of pytest's report are the errors themselves
        said = []
        for text in self.texts:
            lines = text.splitlines()
            errors = [line[1:].strip() for line in lines if line.startswith("E ")]
            said.append(" ".join(errors) if errors else (lines[-1] if lines else text))
        return "; pytest's collection failed: " + " | ".join(said)


# what precollect() collected in this process: (root, test file, patch,
# instrument) and the items, which a worker forked from it takes its item
# from instead of collecting
_collected: tuple | None = None


def precollect(target, patch=(), instrument=()):
    """In a worker template's collector (ploom._template): pytest's
    collection of the whole file of target's test, as load() would make
    it for any test of that file, kept for the workers it forks.  Raises
    when the collection of any item of the file fails (the workers then
    start as without a collector, and report it for their own test)."""
    global _collected
    nodeid, _ = split(target)
    path = nodeid.partition("::")[0]
    session, errors = _collect(os.getcwd(), path, patch, instrument)
    if errors.texts:
        raise LookupError(f"pytest's collection of {path!r} failed{errors}")
    _collected = (os.getcwd(), path, tuple(patch), tuple(instrument), list(session.items))


def collected_file():
    """The absolute path of the file precollect() collected, or None."""
    if _collected is None:
        return None
    return os.path.abspath(os.path.join(_collected[0], _collected[1]))


def load(target, expect=None, expect_blob=None, patch=(), instrument=()):
    """(function, module name, qualname, source file) for a pytest target,
    as ``_worker.load`` returns them for a scenario: the function runs the
    item's protocol once, in the schedule that calls it."""
    from ploom import _worker

    nodeid, threads = split(target)
    root = _rootdir(nodeid, expect)
    if expect is not None:
        # the recorded bytes, or the replay stops before any code runs
        _worker.refuse_installed(expect)
        _worker.read_checked(expect, expect_blob)
    key = (root, nodeid.partition("::")[0], tuple(patch), tuple(instrument))
    if expect is None and _collected is not None and _collected[:4] == key:
        # forked from a collector of this file: its items are those a
        # collection of the test alone would have found it among
        items, errors = [item for item in _collected[4] if item.nodeid == nodeid], ""
        os.chdir(root)
    else:
        session, errors = _collect(root, nodeid, patch, instrument)
        items = [item for item in session.items if item.nodeid == nodeid]
    if len(items) != 1:
        raise LookupError(f"pytest collects no test {nodeid!r} under {root!r}{errors}")
    item = items[0]
    if threads > 1:
        _run_body_in_tasks(item, threads)
    module = getattr(item, "module", None)
    source = str(item.path)
    name = module.__name__ if module is not None else os.path.splitext(os.path.basename(source))[0]
    import pytest

    def run_item():
        _protocol(item, pytest)

    return run_item, name, nodeid.partition("::")[2] or nodeid, source


def _collect(root, nodeid, patch, instrument):
    """(session, collection errors) of pytest's collection of nodeid (a
    test, or a whole file) under root, with patch and instrument
    installed first."""
    from ploom import _worker

    if patch:
        from ploom import _patch

        _patch.expand(patch)
    if instrument:
        _worker.rewriter_module().install([name for name in instrument if name != "-"])
    if patch:
        _patch.install(patch)
    import pytest
    from _pytest.config import _prepareconfig
    from _pytest.main import Session

    args = [
        os.path.join(root, nodeid),
        f"--rootdir={root}",
        # the patching and the rewriting load the test modules and the
        # conftests: pytest's assertion rewriting would load them first
        "--assert=plain",
        # the worker's descriptors are the protocol's
        "--capture=no",
        "-p", "no:cacheprovider",
        "-q",
    ]
    # the test's schedules run here, in this process's forks: never in
    # workers that pytest-xdist would start (an addopts' -n)
    import importlib.util

    if importlib.util.find_spec("xdist") is not None:
        args += ["-n", "0"]
    # the options of the command line that ran pytest --ploom are its own;
    # this session reads the project's configuration alone
    os.environ.pop("PYTEST_ADDOPTS", None)
    os.chdir(root)
    saved = sys.stdout
    sys.stdout = _Quiet()
    errors = _CollectErrors()
    try:
        config = _prepareconfig(args, plugins=[errors])
        config._do_configure()
        session = Session.from_config(config)
        config.hook.pytest_sessionstart(session=session)
        try:
            session.perform_collect()
        except pytest.UsageError as exc:
            # no test of that id: a collection error says why, if any
            said = " ".join(str(exc).split())  # the worker's error is one line
            raise LookupError(f"pytest collects no test {nodeid!r} under {root!r}: {said}{errors}") from None
    finally:
        sys.stdout = saved
    if patch:
        # what a patched package imports lazily (an executor's threads),
        # once here rather than in every schedule
        _patch.check_imported([name for name in _patch.expand(patch) if name in sys.modules])
    return session, errors


def _protocol(item, pytest):
    """Setup, call and teardown of item, as pytest runs them, with nothing
    left behind: the teardown names no next item, so every fixture (of
    session scope too) is torn down.  A failure is the schedule's: the
    first exception of the setup or the call, else of the teardown."""
    ihook = item.ihook
    try:
        ihook.pytest_runtest_setup(item=item)
        ihook.pytest_runtest_call(item=item)
        _raise_recorded(item)
    except pytest.skip.Exception:
        # skipped when it runs (pytest.skip in a fixture): nothing to explore
        _teardown_quietly(item)
        return
    except BaseException as exc:
        _teardown_quietly(item)
        exc.__traceback__ = _users_frames(exc.__traceback__)
        raise
    try:
        ihook.pytest_runtest_teardown(item=item, nextitem=None)
    except BaseException as exc:
        exc.__traceback__ = _users_frames(exc.__traceback__)
        raise


def _machinery():
    import _pytest
    import pluggy

    import ploom

    return tuple(os.path.dirname(m.__file__) + os.sep for m in (_pytest, pluggy, ploom))


def _users_frames(tb):
    """The traceback from its first frame of the user's code: pytest's
    and pluggy's frames that called the test are not the failure's."""
    skip = _machinery()
    first = tb
    while first is not None and first.tb_frame.f_code.co_filename.startswith(skip):
        first = first.tb_next
    return first if first is not None else tb


def _raise_recorded(item):
    """Raises the first failure that a unittest.TestCase's run recorded:
    pytest's TestCaseFunction is the TestResult, and keeps what the
    TestCase reported (``_excinfo``) for the call's report instead of
    raising it."""
    recorded = item.__dict__.get("_excinfo")
    if recorded:
        info = recorded.pop(0)
        raise info.value.with_traceback(info.tb)


def _teardown_quietly(item):
    try:
        item.ihook.pytest_runtest_teardown(item=item, nextitem=None)
    except BaseException:  # noqa: BLE001 - the first failure is the one reported
        pass


def has_body(item):
    """Whether item is a test function whose body threads= can run in
    tasks: a unittest.TestCase's method runs inside the TestCase's own
    run, which calls no function of the item's."""
    import pytest
    from _pytest.unittest import TestCaseFunction

    return isinstance(item, pytest.Function) and not isinstance(item, TestCaseFunction)


def _run_body_in_tasks(item, threads):
    """Makes item's test function run in threads ploom tasks at once, over
    the same arguments (fixture values), the first failure of any raised."""
    import functools

    function = getattr(item, "obj", None)
    if function is None or not has_body(item):
        raise TypeError(f"{item.nodeid}: threads= runs a test function's body, and this item has none")

    @functools.wraps(function)
    def in_tasks(*args, **kwargs):
        import ploom.threading as threading

        errors = []

        def body():
            try:
                function(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - raised in the test's own task below
                errors.append(exc)

        tasks = [threading.Thread(target=body, name=f"body-{i + 1}") for i in range(threads)]
        for task in tasks:
            task.start()
        for task in tasks:
            task.join()
        if errors:
            raise errors[0]

    item.obj = in_tasks
