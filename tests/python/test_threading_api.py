"""The rest of threading's and queue's API in ploom.threading and ploom.queue:
Thread's constructor and accessors, excepthook, local, Timer,
_register_atexit, SimpleQueue and Queue.shutdown.  CPython's behaviour
outside a check, compared with the standard library's where both can run;
inside one, what each does in a schedule, and DPOR's outcomes against DFS's.

The scenarios are module-level functions of this file: the worker imports
this module to run them.  Nothing here registers a _register_atexit
callback at import: it would run in every scenario of the module."""

import inspect
import queue as std_queue
import threading as std_threading
import warnings
import weakref

import pytest

import ploom
import ploom.queue as pqueue
import ploom.threading as pthreading
from ploom.exploration import ModelCheckError
from test_threading import _outcomes, explored

DPOR = ploom.Config(reduction="dpor")
ALL = ploom.Config(keep_going=True, minimize=False)


@pytest.fixture(autouse=True)
def _traces_in_tmp(tmp_path, monkeypatch):
    # failing checks write their traces into the current folder's .ploom
    monkeypatch.chdir(tmp_path)


def _summaries(scenario, config=ALL):
    """{outcome summary: schedules} of a complete check of scenario."""
    if config is ALL:
        return dict(explored(scenario, "none")[0])
    try:
        stats = ploom.check(scenario, config)
    except ModelCheckError as exc:
        stats = exc.statistics
    assert stats.complete
    return {o["summary"]: o["schedules"] for o in stats.raw["outcomes"]}


# ---- Thread, outside a check ------------------------------------------------


def test_thread_takes_threading_s_signature():
    ours = inspect.signature(pthreading.Thread)
    theirs = inspect.signature(std_threading.Thread)
    assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == [
        (p.name, p.kind, p.default) for p in theirs.parameters.values()
    ]


def test_thread_keeps_its_arguments_where_threading_does():
    def f(*args, **kwargs):
        pass

    for args, kwargs in [((None, f, "n", [1, 2], {"k": 3}), {"daemon": True}),
                         ((), {"target": f, "args": (1,)}),
                         ((), {})]:
        ours, theirs = pthreading.Thread(*args, **kwargs), std_threading.Thread(*args, **kwargs)
        assert (ours._target, ours._args, ours._kwargs, ours.daemon) == (
            theirs._target, theirs._args, theirs._kwargs, theirs.daemon)
    assert pthreading.Thread(None, f, "named").name == "named"
    with pytest.raises(AssertionError, match="group argument must be None for now"):
        pthreading.Thread("group")
    with pytest.raises(AssertionError, match="group argument must be None for now"):
        std_threading.Thread("group")


def test_the_deprecated_accessors_warn_as_threading_s_do():
    def calls(thread):
        return [thread.getName, thread.isDaemon, lambda: thread.setName("renamed"), lambda: thread.setDaemon(True)]

    ours, theirs = pthreading.Thread(name="t"), std_threading.Thread(name="t")
    for mine, std in zip(calls(ours), calls(theirs), strict=True):
        with warnings.catch_warnings(record=True) as caught_ours:
            warnings.simplefilter("always")
            got_ours = mine()
        with warnings.catch_warnings(record=True) as caught_theirs:
            warnings.simplefilter("always")
            got_theirs = std()
        assert got_ours == got_theirs
        assert [(w.category, str(w.message)) for w in caught_ours] == [
            (w.category, str(w.message)) for w in caught_theirs]
        assert caught_ours[0].filename == __file__
    assert (ours.name, ours.daemon) == (theirs.name, theirs.daemon) == ("renamed", True)


def test_a_thread_can_be_weakly_referenced_and_keyed():
    thread = pthreading.Thread(target=print)
    ref = weakref.ref(thread)
    table = weakref.WeakKeyDictionary({thread: "queue"})
    assert ref() is thread and table[thread] == "queue"
    assert (thread.ident, thread.native_id) == (None, None)
    assert isinstance(thread, ploom.Thread) and pthreading.Thread is not ploom.Thread
    del thread
    assert ref() is None and not table


def test_get_native_id_outside_a_check_is_threading_s():
    assert pthreading.get_native_id() == std_threading.get_native_id()


# ---- Thread, inside a check ---------------------------------------------------


class _Counter(pthreading.Thread):
    """Overrides run() and passes threading's arguments on to __init__."""

    def __init__(self, cell, seen):
        super().__init__(None, None, "counter", daemon=True)
        self.cell, self.seen = cell, seen

    def run(self):
        me = pthreading.current_thread()
        self.seen.write((me is self, type(me).__name__, me.name, me.daemon, me.ident == me.native_id == 1))
        self.cell.write(self.cell.read() + 1)


def subclass_is_the_current_thread():
    cell, seen = ploom.SharedCell(0), ploom.SharedCell(None)
    counter = _Counter(cell, seen)
    ref = weakref.ref(counter)
    counter.start()
    cell.write(cell.read() + 1)
    counter.join()
    assert ref() is counter and not counter.is_alive()
    assert seen.read() == (True, "_Counter", "counter", True, True), seen.read()
    main = pthreading.current_thread()
    # ploom.threading is imported: the main thread is one of its Threads
    assert isinstance(main, pthreading.Thread) and main is pthreading.main_thread(), main
    assert weakref.ref(main)() is main
    assert cell.read() == 2, "lost update"


def test_a_subclass_runs_as_its_own_current_thread_and_races():
    # the lost update shows the subclass's run() ran as a task of its own
    assert _summaries(subclass_is_the_current_thread).keys() == {"builtins.AssertionError: lost update", "pass"}


def thread_with_arguments():
    out = ploom.SharedCell(())

    def body(a, b, *, c):
        out.write((a, b, c, pthreading.current_thread().name))

    thread = pthreading.Thread(None, body, "worker", (1, 2), {"c": 3})
    thread.start()
    thread.join()
    assert out.read() == (1, 2, 3, "worker"), out.read()
    # as threading: run() lets go of what it ran
    assert not hasattr(thread, "_target"), "kept its target"


def test_positional_arguments_reach_the_target_in_threading_s_order():
    stats = ploom.check(thread_with_arguments)
    assert stats.complete and stats.failing == 0


# ---- excepthook -----------------------------------------------------------------


def _raiser():
    raise ValueError("from the thread")


def default_hook():
    thread = pthreading.Thread(target=_raiser)
    thread.start()
    thread.join()


def own_hook():
    seen = ploom.SharedCell(None)

    def hook(args):
        seen.write((args.exc_type.__name__, str(args.exc_value), args.exc_traceback is not None,
                    args.thread.name, pthreading.current_thread().name))

    pthreading.excepthook = hook
    thread = pthreading.Thread(target=_raiser, name="raiser")
    thread.start()
    thread.join()
    # called in the task whose run() raised
    assert seen.read() == ("ValueError", "from the thread", True, "raiser", "raiser"), seen.read()
    assert not thread.is_alive()


def hook_that_raises():
    def hook(args):
        raise KeyError("from the hook")

    pthreading.excepthook = hook
    thread = pthreading.Thread(target=_raiser)
    thread.start()
    thread.join()


def hook_that_defers_to_ploom_s():
    pthreading.excepthook = lambda args: pthreading.__excepthook__(args)
    thread = pthreading.Thread(target=_raiser)
    thread.start()
    thread.join()


def hook_and_main_raises():
    pthreading.excepthook = lambda args: None
    raise ValueError("from the scenario")


def test_a_thread_that_raises_fails_the_schedule_unless_a_hook_is_set():
    with pytest.raises(ModelCheckError, match="ValueError: from the thread"):
        ploom.check(default_hook)
    assert set(_summaries(own_hook)) == {"pass"}
    with pytest.raises(ModelCheckError, match="KeyError: 'from the hook'"):
        ploom.check(hook_that_raises)
    with pytest.raises(ModelCheckError, match="ValueError: from the thread"):
        ploom.check(hook_that_defers_to_ploom_s)
    with pytest.raises(ModelCheckError, match="ValueError: from the scenario"):
        ploom.check(hook_and_main_raises)


def test_the_hook_s_arguments_are_threading_s():
    assert pthreading.ExceptHookArgs is std_threading.ExceptHookArgs
    assert pthreading.__excepthook__ is pthreading.excepthook
    args = pthreading.ExceptHookArgs((KeyError, KeyError("k"), None, None))
    with pytest.raises(KeyError, match="'k'"):
        pthreading.excepthook(args)


# ---- local ------------------------------------------------------------------------


class _Slot(pthreading.local):
    def __init__(self, start):
        self.value = start


def locals_per_task():
    data, slot = pthreading.local(), _Slot("fresh")
    data.owner = "main"
    seen = ploom.SharedCell(())
    lock = ploom.Lock()

    def body(me):
        inherited = getattr(data, "owner", None)
        initial = slot.value
        data.owner, slot.value = me, me
        ploom.yield_now()  # the other task sets its own meanwhile
        with lock:
            seen.write(seen.read() + ((me, inherited, initial, data.owner, slot.value),))

    threads = [pthreading.Thread(target=body, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(seen.read()) == [("a", None, "fresh", "a", "a"), ("b", None, "fresh", "b", "b")], seen.read()
    assert (data.owner, slot.value) == ("main", "fresh")


def test_local_values_are_per_task():
    assert pthreading.local is std_threading.local
    assert set(_summaries(locals_per_task)) == {"pass"}
    assert set(explored(locals_per_task, "dpor")[0]) == {"pass"}


# ---- Timer ------------------------------------------------------------------------


def timer_cancelled():
    fired = ploom.SharedCell(False)
    timer = pthreading.Timer(3600, fired.write, args=(True,))
    timer.start()
    timer.cancel()
    timer.join()
    assert timer.finished.is_set()
    assert not fired.read(), "fired"


def timer_uncancelled():
    fired = ploom.SharedCell(())
    timer = pthreading.Timer(3600, lambda *a, **k: fired.write((a, tuple(k.items()))), [1], {"k": 2})
    timer.start()
    timer.join()
    assert fired.read() == ((1,), (("k", 2),)), fired.read()


def test_a_timer_fires_unless_cancelled_in_time():
    # the stress model: the cancel may come after the interval
    assert set(explored(timer_cancelled, "none", "any")[0]) == {"pass", "builtins.AssertionError: fired"}
    # the idle model: the main task can run, so the interval never ends first
    assert set(_summaries(timer_cancelled)) == {"pass"}
    stats = ploom.check(timer_uncancelled, ALL)
    assert stats.complete and stats.failing == 0


def test_timer_outside_a_check():
    ours, theirs = pthreading.Timer(5, print), std_threading.Timer(5, print)
    assert (ours.interval, ours.function, ours.args, ours.kwargs) == (
        theirs.interval, theirs.function, theirs.args, theirs.kwargs)
    ours.cancel()
    assert ours.finished.is_set() and isinstance(ours, pthreading.Thread)


# ---- _register_atexit ------------------------------------------------------------------


def atexit_callbacks():
    q = pqueue.Queue()
    calls = []

    def worker():
        while q.get() is not None:
            pass

    def last():
        calls.append("last")
        try:
            pthreading._register_atexit(print)
        except RuntimeError as exc:
            calls.append(str(exc))
        assert calls == ["stop", "last", "can't register atexit after shutdown"], calls

    pthreading._register_atexit(last)
    # registered last, runs first: stops the worker, which main never joins
    pthreading._register_atexit(lambda *a, **k: (calls.append("stop"), q.put(None)), "x", k=1)
    pthreading.Thread(target=worker).start()
    q.put("work")


def atexit_callback_raises():
    pthreading._register_atexit(_raiser)


def test_atexit_callbacks_run_when_the_scenario_returns_last_first():
    assert set(_summaries(atexit_callbacks)) == {"pass"}
    with pytest.raises(ModelCheckError, match="ValueError: from the thread"):
        ploom.check(atexit_callback_raises)


# ---- the Lock's fork hook -------------------------------------------------------------


def reinit_in_a_schedule():
    ploom.Lock()._at_fork_reinit()


def test_a_lock_is_free_after_a_fork_and_not_reinitialized_in_a_schedule():
    lock = ploom.Lock()
    lock.acquire()
    lock._at_fork_reinit()
    assert not lock.locked()
    rlock, cond = pthreading.RLock(), pthreading.Condition()
    rlock.acquire()
    rlock._at_fork_reinit()
    cond._at_fork_reinit()
    assert not rlock.locked() and not rlock._is_owned()
    with pytest.raises(ModelCheckError, match=r"_at_fork_reinit\(\) cannot run inside ploom.check"):
        ploom.check(reinit_in_a_schedule)


# ---- SimpleQueue and Queue.shutdown, outside a check: the standard library's results ----


def _run_ops(q, ops):
    """What each (method, args, kwargs) returned or raised on q."""
    out = []
    for name, args, kwargs in ops:
        try:
            out.append(("ok", getattr(q, name)(*args, **kwargs)))
        except Exception as exc:  # noqa: BLE001 - the exception is what is compared
            out.append(("raised", type(exc), str(exc)))
    return out


SIMPLE_OPS = [
    ("empty", (), {}), ("qsize", (), {}), ("put", (1,), {}), ("put", (2,), {"block": False, "timeout": -5}),
    ("put_nowait", (3,), {}), ("qsize", (), {}), ("get", (), {}), ("get", (), {"timeout": 1}),
    ("get_nowait", (), {}), ("empty", (), {}), ("get", (), {"block": False}), ("get", (), {"timeout": 0}),
    ("get", (), {"timeout": -1}), ("get", (), {"block": False, "timeout": -1}),
]


def test_simple_queue_answers_as_the_standard_one():
    assert _run_ops(pqueue.SimpleQueue(), SIMPLE_OPS) == _run_ops(std_queue.SimpleQueue(), SIMPLE_OPS)
    assert pqueue.SimpleQueue[int] == pqueue.SimpleQueue[int]


SHUTDOWN_OPS = [
    ("put", ("a",), {}), ("put", ("b",), {}), ("shutdown", (), {}), ("put", ("c",), {}),
    ("get", (), {}), ("task_done", (), {}), ("get_nowait", (), {}), ("get", (), {}), ("get", (), {"block": False}),
    ("qsize", (), {}), ("task_done", (), {}), ("join", (), {}),
]

IMMEDIATE_OPS = [
    ("put", ("a",), {}), ("put", ("b",), {}), ("get", (), {}), ("shutdown", (), {"immediate": True}),
    ("qsize", (), {}), ("get", (), {}), ("put_nowait", ("c",), {}), ("task_done", (), {}), ("join", (), {}),
    ("task_done", (), {}),
]


@pytest.mark.parametrize("ops", [SHUTDOWN_OPS, IMMEDIATE_OPS], ids=["drain", "immediate"])
@pytest.mark.parametrize("kind", ["Queue", "LifoQueue", "PriorityQueue"])
def test_queue_shutdown_answers_as_the_standard_one(kind, ops):
    assert pqueue.ShutDown is std_queue.ShutDown
    ours, theirs = getattr(pqueue, kind)(), getattr(std_queue, kind)()
    assert _run_ops(ours, ops) == _run_ops(theirs, ops)
    assert ours.is_shutdown and theirs.is_shutdown


def test_the_whole_queue_api_is_supported():
    assert set(std_queue.__all__) <= set(pqueue.__all__)
    assert ploom.SimpleQueue is pqueue.SimpleQueue


# ---- inside a check: blocked getters, putters and joiners wake ---------------------------


def shutdown_wakes_a_blocked_getter():
    q = pqueue.Queue()
    got = ploom.SharedCell(())

    def consumer():
        try:
            while True:
                got.write(got.read() + (q.get(),))
        except pqueue.ShutDown:
            got.write(got.read() + ("shut down",))

    thread = pthreading.Thread(target=consumer)
    thread.start()
    q.put("a")
    q.shutdown()
    thread.join()
    # without immediate, the item put before the shutdown is always got
    assert got.read() == ("a", "shut down"), got.read()


def shutdown_immediate_drops_items():
    q = pqueue.Queue()
    got = ploom.SharedCell(())

    def consumer():
        try:
            got.write(got.read() + (q.get(),))
        except pqueue.ShutDown:
            return
        q.task_done()

    thread = pthreading.Thread(target=consumer)
    thread.start()
    q.put("a")
    q.shutdown(immediate=True)
    q.join()  # woken: the dropped item counts as done
    thread.join()
    assert got.read() == ("a",), "dropped"


def shutdown_wakes_a_blocked_putter():
    q = pqueue.Queue(maxsize=1)
    q.put("a")
    raised = ploom.SharedCell(False)

    def producer():
        try:
            q.put("b")
        except pqueue.ShutDown:
            raised.write(True)

    thread = pthreading.Thread(target=producer)
    thread.start()
    q.shutdown()
    thread.join()
    assert raised.read(), "put after shutdown"


def test_shutdown_wakes_what_waits_on_the_queue():
    assert _summaries(shutdown_wakes_a_blocked_getter).keys() == {"pass"}
    assert _summaries(shutdown_immediate_drops_items).keys() == {"pass", "builtins.AssertionError: dropped"}
    assert _summaries(shutdown_wakes_a_blocked_putter).keys() == {"pass"}


def simple_queue_handoff():
    q = pqueue.SimpleQueue()
    got = ploom.SharedCell(())

    def consumer():
        for _ in range(2):
            try:
                got.write(got.read() + (q.get(timeout=3600),))
            except pqueue.Empty:
                got.write(got.read() + ("empty",))

    thread = pthreading.Thread(target=consumer)
    thread.start()
    q.put(1)
    q.put_nowait(2)
    thread.join()
    assert got.read() == (1, 2), got.read()


def test_a_simple_queue_s_timed_get_may_find_it_empty():
    outcomes = explored(simple_queue_handoff, "none", "any")[0]
    assert "pass" in outcomes and "builtins.AssertionError: ('empty', 1)" in outcomes, outcomes


# ---- soundness of the reduction on them ------------------------------------------------


@pytest.mark.parametrize(
    "scenario",
    [subclass_is_the_current_thread, own_hook, locals_per_task, timer_cancelled, atexit_callbacks,
     shutdown_wakes_a_blocked_getter, shutdown_immediate_drops_items, shutdown_wakes_a_blocked_putter,
     simple_queue_handoff],
    ids=lambda f: f.__name__,
)
def test_dpor_reaches_exactly_the_outcomes_dfs_reaches(scenario):
    dfs, dfs_schedules = _outcomes(scenario, "none")
    dpor, dpor_schedules = _outcomes(scenario, "dpor")
    assert dpor == dfs
    assert dpor_schedules <= dfs_schedules
