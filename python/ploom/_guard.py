"""No real primitive slips through: the standard library's threading and
queue primitives, made by code that ploom did not patch, end the schedule
that uses them.

A real lock, condition, semaphore, event, barrier or queue runs outside
ploom's scheduler: ploom neither sees the orders it allows nor can it
switch tasks inside it, so a schedule that uses one either misses orders
(a silent pass) or blocks the only running task (a wait for the schedule's
timeout).  The worker calls :func:`install` before it imports the scenario,
and from then on

- ``threading.Lock()`` and ``threading.RLock()`` called by code outside the
  standard library give a lock that checks, at each acquire, whether a
  schedule is running;
- the methods of ``threading.Condition``, ``Semaphore``, ``Event``,
  ``Barrier`` and of ``queue.Queue`` do the same check for an object that
  such code made (the constructor records where), and ``queue.SimpleQueue``
  is a subclass that does;
- ``threading.Thread.start`` does it for every thread: a real thread in a
  schedule is never right; so do ``_thread.start_new_thread`` (and its alias
  ``start_new``), ``_thread.start_joinable_thread`` and
  ``threading._start_joinable_thread``, which start one below ``threading``;
- a primitive of a copy of threading.py or queue.py that ploom did not
  swap (a fresh import, a reload, a module made from its spec) does it
  whoever made it: such a copy takes its locks from ``_thread``, whose
  ``allocate_lock``, ``LockType`` and ``RLock`` are replaced, or from the
  threading ploom swapped, and is told apart by its code objects; a second
  ``_queue`` module gets a guarded ``SimpleQueue`` when it is loaded.

Inside a schedule the check ends it at once with
:class:`UnscheduledPrimitiveError`, through ``_ploom.fail_schedule``, which
no ``except`` clause of the library can catch: the message names the
primitive, where it was made and used, and the module to add to
``patch=``.  Outside a schedule (the worker importing the scenario) the
primitives work as the standard library's.

Primitives that the standard library makes for its own use (logging's
lock, the import system's) guard only that library's own state, and are
left alone: only threads, and the primitives of copies, are checked
whoever made them.  Code that takes ``_thread.allocate_lock`` directly is
not seen, nor is a thread that a C extension starts itself
(``PyThread_start_new_thread``): no Python function is called for it.
"""

from __future__ import annotations

import _thread
import functools
import os
import queue as std_queue
import sys
import threading as std
import types

from ploom import _ploom


class UnscheduledPrimitiveError(BaseException):
    """A standard-library threading primitive ran in a schedule.

    It derives from BaseException, like KeyboardInterrupt: it reports a
    place ploom cannot see, not an error of the scenario's, and it ends the
    schedule whatever the code around it catches."""


UnscheduledPrimitiveError.__module__ = "ploom"

_STDLIB = os.path.realpath(getattr(sys, "_stdlib_dir", None) or os.path.dirname(os.__file__))
_OWN_FILES = {os.path.realpath(f) for f in (std.__file__, std_queue.__file__, __file__)}
_installed = False


_PLOOM = os.path.realpath(os.path.dirname(__file__))


@functools.lru_cache(maxsize=1024)
def _exempt(filename):
    """Whether filename is the standard library's, or ploom's own (whose
    few real locks guard its own bookkeeping, never the scenario's)."""
    if filename.startswith("<frozen "):
        return True
    if os.path.commonpath([os.path.realpath(filename), _PLOOM]) == _PLOOM:
        return True
    real = os.path.realpath(filename)
    if os.path.commonpath([real, _STDLIB]) != _STDLIB:
        return False
    parts = real[len(_STDLIB):].split(os.sep)
    return "site-packages" not in parts and "dist-packages" not in parts


@functools.lru_cache(maxsize=1024)
def _is_own(filename):
    return os.path.realpath(filename) in _OWN_FILES


def _caller():
    """The innermost frame outside threading.py, queue.py and this file:
    the code that makes or uses a primitive."""
    frame = sys._getframe(1)
    while frame is not None and _is_own(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def _site(frame):
    return (frame.f_code.co_filename, frame.f_lineno, frame.f_globals.get("__name__", "?"))


def _made_here():
    """(file, line, module) of the code making a primitive, or None when
    the standard library makes it for its own use."""
    frame = _caller()
    if frame is None or _exempt(frame.f_code.co_filename):
        return None
    return _site(frame)


def _suggest(module):
    """The name to add to patch= for code of module: an executor's futures
    and threads come from two modules of one package."""
    if module == "concurrent.futures" or module.startswith("concurrent.futures."):
        return "concurrent.futures"
    return module


def _patched(module):
    """Whether module was patched in this worker: patch= names it (or its
    package), or it is the scenario's or its project's."""
    from ploom import _patch

    return _patch.patched(module)


def _traceback_of(frame):
    tb = None
    while frame is not None:
        tb = types.TracebackType(tb, frame, frame.f_lasti, frame.f_lineno)
        frame = frame.f_back
    return tb


def _refuse(what, made, verb, origin="made by the standard library", copy=None):
    """Ends the running schedule, if there is one, with the primitive's
    story; returns when there is none.  copy names the module of a copy of
    threading or queue that ploom did not swap, when the primitive is one
    of its."""
    if _ploom.current_task() is None:
        return
    used = _caller()
    if used is None:  # pragma: no cover - a task always runs some code of its own
        return
    if copy is not None:
        where = "" if made is None else f" made at {os.path.basename(made[0])}:{made[1]} (module {made[2]})"
        message = (
            f"a {what} of a copy of the standard library's {copy!r} that ploom did not swap{where} "
            f"was {verb} at {os.path.basename(used.f_code.co_filename)}:{used.f_lineno} during a "
            f"schedule: it runs outside ploom's scheduler, which then cannot explore its orders. "
            f"The copy was loaded around the import statement (import_fresh_module(), "
            f"importlib.reload(), module_from_spec() and exec_module()), which patch= cannot "
            f"reach: use the {copy!r} that 'import {copy}' gives in a patched module, or "
            f"ploom.{copy} in the scenario"
        )
        exc = UnscheduledPrimitiveError(message)
        exc.__traceback__ = _traceback_of(used)
        _ploom.fail_schedule(exc)
        return
    if made is None:
        module = used.f_globals.get("__name__", "?")
    else:
        origin = f"made at {os.path.basename(made[0])}:{made[1]} (module {made[2]})"
        module = made[2]
    if _serves_processes(module):
        exc = UnscheduledPrimitiveError(
            f"a standard-library {what} {origin} was {verb} at "
            f"{os.path.basename(used.f_code.co_filename)}:{used.f_lineno} during a schedule: "
            f"{PROCESS_STORY}: multiprocessing's threads feed and watch processes that run "
            f"outside it, through pipes that block for real, which no patch= changes"
        )
        exc.__traceback__ = _traceback_of(used)
        _ploom.fail_schedule(exc)
        return
    name = _suggest(module)
    story = (
        f"a standard-library {what} {origin} was {verb} at "
        f"{os.path.basename(used.f_code.co_filename)}:{used.f_lineno} during a schedule: it runs "
        f"outside ploom's scheduler, which then cannot explore its orders. "
    )
    if _patched(module):
        # adding it again would change nothing: the patch swaps what an
        # import statement gives, and this module went around it
        message = story + (
            f"{module!r} is patched, but it reached the real threading or queue without an "
            f"import statement (importlib.import_module(), sys.modules[...], or an object "
            f"another module handed it), which bypasses the patch: import them with "
            f"'import threading' or 'from threading import ...' in {module!r}"
        )
    else:
        message = story + (
            f"Add {name!r} to patch= (Config(patch=[...]), --patch={name}) so that it gets "
            f"ploom.threading and ploom.queue, or use those in the scenario"
        )
    exc = UnscheduledPrimitiveError(message)
    exc.__traceback__ = _traceback_of(used)
    _ploom.fail_schedule(exc)


# What the message of a fork's UnscheduledPrimitiveError says, and of a
# thread of multiprocessing's, which processes() looks for: pytest --ploom
# tells such a test, which no patch can make explorable, from one that
# needs a module patched.
PROCESS_STORY = "ploom cannot explore a test that starts processes"


def _serves_processes(module):
    """Whether module's threads serve processes: multiprocessing's, and
    the process pool of concurrent.futures."""
    return module.split(".")[0] == "multiprocessing" or module == "concurrent.futures.process"


def refuse_fork(call):
    """Ends the running schedule, if there is one, at call ("os.fork()"),
    which the worker's audit hook refuses: see pyext/serve.c."""
    if _ploom.current_task() is None:
        return
    used = sys._getframe(1)
    where = f"{os.path.basename(used.f_code.co_filename)}:{used.f_lineno}"
    # the standard library forks for the test (multiprocessing, pty): name
    # the test's own line too
    outer = used
    while outer is not None and _exempt(outer.f_code.co_filename):
        outer = outer.f_back
    if outer is not None and outer is not used:
        where += f", from {os.path.basename(outer.f_code.co_filename)}:{outer.f_lineno}"
    exc = UnscheduledPrimitiveError(
        f"{call} at {where} during a schedule: {PROCESS_STORY}: the new process would run "
        f"outside its scheduler (its steps would not be recorded, and it could outlive the "
        f"schedule); to run another program, use subprocess"
    )
    exc.__traceback__ = _traceback_of(used)
    _ploom.fail_schedule(exc)


def processes(message):
    """Whether message, a setup mistake's, says the test starts processes."""
    return PROCESS_STORY in message


class _GuardedLock:
    """A real lock made by code ploom did not patch: every acquire checks
    for a schedule first."""

    __slots__ = ("_lock", "_made", "_what", "_copy", "__weakref__")

    def __init__(self, lock, made, what, copy=None):
        self._lock = lock
        self._made = made
        self._what = what
        self._copy = copy

    def acquire(self, blocking=True, timeout=-1):
        _refuse(self._what, self._made, "acquired" if self._copy is None else "used", copy=self._copy)
        return self._lock.acquire(blocking, timeout)

    def __enter__(self):
        _refuse(self._what, self._made, "acquired" if self._copy is None else "used", copy=self._copy)
        return self._lock.__enter__()

    def __exit__(self, *exc):
        return self._lock.__exit__(*exc)

    def release(self):
        return self._lock.release()

    def __getattr__(self, name):
        # locked(), _is_owned(), _release_save(), _at_fork_reinit() ...
        return getattr(self._lock, name)

    def __repr__(self):
        return repr(self._lock)


# The code objects of the threading and queue modules that install()
# guards.  A frame of threading.py or queue.py running other code belongs
# to a second execution of that file (a fresh import, a reload, a module
# made from its spec), whose classes ploom never swapped: recognising it by
# its code rather than by its module object finds every route there.  By
# id: code objects compare equal by value, and a copy's code equals the
# original's.  The values keep each id from being reused.
_SWAPPED_CODE: dict[int, types.CodeType] = {}


def _codes_of(code, into):
    into[id(code)] = code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _codes_of(const, into)


def _collect_swapped_code(module):
    for value in vars(module).values():
        members = vars(value).values() if isinstance(value, type) else (value,)
        for member in members:
            for func in (member, getattr(member, "__func__", None), getattr(member, "fget", None),
                         getattr(member, "fset", None)):
                code = getattr(func, "__code__", None)
                if isinstance(code, types.CodeType) and _is_own(code.co_filename):
                    _codes_of(code, _SWAPPED_CODE)


def _copy_here():
    """(what, copy, made) when the primitive being made comes from a copy
    of threading or queue that ploom did not swap: what the copy's code
    makes (its outermost class, say queue.Queue), the copy's name and where
    the code outside both files made it; None otherwise."""
    frame = sys._getframe(1)
    copy = outer = None
    while frame is not None and _is_own(frame.f_code.co_filename):
        code = frame.f_code
        if not code.co_filename.endswith("_guard.py"):
            outer = frame
            if id(code) not in _SWAPPED_CODE and copy is None:
                copy = os.path.splitext(os.path.basename(code.co_filename))[0]
        frame = frame.f_back
    if copy is None:
        return None
    owner = outer.f_code.co_qualname.split(".")[0]
    module = os.path.splitext(os.path.basename(outer.f_code.co_filename))[0]
    what = f"{module}.{owner}" if owner[:1].isupper() else f"{module} lock"
    return what, copy, None if frame is None else _site(frame)


def _guarded_or_real(lock, what):
    """lock, or a guarded lock when code outside the standard library made
    it or a copy of threading or queue did."""
    fresh = _copy_here()
    if fresh is not None:
        return _GuardedLock(lock, fresh[2], fresh[0], copy=fresh[1])
    made = _made_here()
    return lock if made is None else _GuardedLock(lock, made, what)


class _LockFactory(type):
    """threading.Lock as a class that makes guarded locks for code outside
    the standard library, and of which real locks are still instances."""

    def __call__(cls, *args, **kwargs):
        return _guarded_or_real(cls._real(*args, **kwargs), cls._what)

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls._real) or (isinstance(obj, _GuardedLock) and obj._what == cls._what)


def _guarded_lock_type(real, what):
    return _LockFactory(real.__name__, (), {"_real": real, "_what": what, "__doc__": real.__doc__,
                                            "__module__": "threading"})


def _rlock(real, what):
    def RLock(*args, **kwargs):  # noqa: N802 - threading's name
        return _guarded_or_real(real(*args, **kwargs), what)

    RLock.__doc__ = real.__doc__
    RLock.__module__ = "threading"
    return RLock


def _guard_init(cls, everyone=False):
    """Records in each object where it was made (for a thread, even by the
    standard library: the message names what to patch)."""
    init = cls.__dict__["__init__"]

    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        fresh = _copy_here()
        if fresh is not None:
            try:
                self._ploom_made = fresh[2]
                self._ploom_copy = fresh[:2]
            except AttributeError:  # a subclass with __slots__: not seen
                pass
            return
        if everyone:
            frame = _caller()
            made = None if frame is None else _site(frame)
        else:
            made = _made_here()
        if made is not None:
            try:
                self._ploom_made = made
            except AttributeError:  # a subclass with __slots__: not seen
                pass
        started = getattr(self, "_started", None) if everyone else None
        if made is not None and getattr(started, "_ploom_made", None) is not None:
            # the event that join() and is_alive() consult: its use is the
            # thread's, and the message names the thread
            started._ploom_made = made
            started._ploom_what = "threading.Thread"

    functools.update_wrapper(__init__, init)
    cls.__init__ = __init__


def _guard_method(cls, name, what, verb, always=False):
    method = cls.__dict__.get(name)
    if method is None:
        return

    def guarded(self, *args, **kwargs):
        made = getattr(self, "_ploom_made", None)
        copy = getattr(self, "_ploom_copy", None)
        if copy is not None:
            _refuse(copy[0], made, verb, copy=copy[1])
        elif made is not None or always:
            _refuse(getattr(self, "_ploom_what", what), made, verb)
        return method(self, *args, **kwargs)

    functools.update_wrapper(guarded, method)
    setattr(cls, name, guarded)


def _copies_only(real):
    """_thread's allocate_lock or RLock, as a copy of threading or queue
    finds it: guarded for that copy, real for everyone else (code that
    takes _thread's locks directly is not seen)."""

    def allocate(*args, **kwargs):
        lock = real(*args, **kwargs)
        fresh = _copy_here()
        return lock if fresh is None else _GuardedLock(lock, fresh[2], fresh[0], copy=fresh[1])

    functools.update_wrapper(allocate, real)
    return allocate


def _guarded_start(start, name):
    """A function that starts a real thread below threading.Thread, refusing
    to inside a schedule."""

    def guarded(*args, **kwargs):
        _refuse("thread", None, "started", origin=f"made by {name}")
        return start(*args, **kwargs)

    functools.update_wrapper(guarded, start)
    return guarded


def _guard_thread_starts():
    for name in ("start_new_thread", "start_new", "start_joinable_thread"):
        start = getattr(_thread, name, None)
        if start is not None:
            setattr(_thread, name, _guarded_start(start, f"_thread.{name}"))
    start = getattr(std, "_start_joinable_thread", None)
    if start is not None:
        std._start_joinable_thread = _guarded_start(start, "threading._start_joinable_thread")


def _make_simple_queue(base, copy=None):
    """queue.SimpleQueue guarded; for copy (the SimpleQueue of a second
    _queue module), guarded whoever makes one."""

    class SimpleQueue(base):
        __doc__ = base.__doc__

        def __init__(self):
            super().__init__()
            if copy is None:
                self._ploom_made = _made_here()
            else:
                frame = _caller()
                self._ploom_made = None if frame is None else _site(frame)

        def _check(self):
            if copy is not None:
                _refuse("queue.SimpleQueue", self._ploom_made, "used", copy=copy)
            elif self._ploom_made is not None:
                _refuse("queue.SimpleQueue", self._ploom_made, "used")

        def put(self, item, block=True, timeout=None):
            self._check()
            return super().put(item, block, timeout)

        def get(self, block=True, timeout=None):
            self._check()
            return super().get(block, timeout)

        def put_nowait(self, item):
            return self.put(item, False)

        def get_nowait(self):
            return self.get(False)

    SimpleQueue.__module__ = "queue"
    return SimpleQueue


class _SecondQueueLoader:
    """The loader of a second _queue module (import_fresh_module("queue",
    fresh=["_queue"])): its SimpleQueue is a new C type, which no code of
    threading.py or queue.py makes, so it is guarded as a copy's when the
    module is made."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        base = getattr(module, "SimpleQueue", None)
        if isinstance(base, type):
            module.SimpleQueue = _make_simple_queue(base, copy="queue")

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _SecondQueueFinder:
    """Finds _queue as the other finders do, with _SecondQueueLoader."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name != "_queue":
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is _SecondQueueFinder or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _SecondQueueLoader(spec.loader)
                return spec
        return None


def install():
    """Guards the standard library's primitives in this process (the
    worker, before it imports the scenario); once only."""
    global _installed
    if _installed:
        return
    _installed = True
    _collect_swapped_code(std)
    _collect_swapped_code(std_queue)
    std.Lock = _guarded_lock_type(std.Lock, "threading.Lock")
    # a second execution of threading.py takes its locks from _thread again
    _thread.LockType = std.Lock
    _thread.allocate_lock = _copies_only(_thread.allocate_lock)
    _thread.RLock = _copies_only(_thread.RLock)
    std.RLock = _rlock(std.RLock, "threading.RLock")
    waits = ("wait", "wait_for", "notify", "notify_all", "__enter__")
    table = (
        (std.Condition, "threading.Condition", waits, "used"),
        (std.Semaphore, "threading.Semaphore", ("acquire", "release", "__enter__"), "used"),
        (std.BoundedSemaphore, "threading.BoundedSemaphore", ("release",), "used"),
        (std.Event, "threading.Event", ("wait", "set", "clear", "is_set"), "used"),
        (std.Barrier, "threading.Barrier", ("wait", "reset", "abort"), "used"),
        (std_queue.Queue, "queue.Queue", ("put", "get", "task_done", "join", "qsize", "empty", "full",
                                          "shutdown"), "used"),
    )
    for cls, what, methods, verb in table:
        if "__init__" in cls.__dict__:
            _guard_init(cls)
        for name in methods:
            _guard_method(cls, name, what, verb)
    _guard_init(std.Thread, everyone=True)
    _guard_method(std.Thread, "start", "threading.Thread", "started", always=True)
    _guard_thread_starts()
    std_queue.SimpleQueue = _make_simple_queue(std_queue.SimpleQueue)
    # and a second execution of queue.py its SimpleQueue from _queue
    sys.modules["_queue"].SimpleQueue = std_queue.SimpleQueue
    sys.meta_path.insert(0, _SecondQueueFinder)
