"""The names ploom.threading and ploom.queue give their primitives, after
the assignment that makes them (ploom._names): read off the locks in this
process, outside a check, where they are made the same way."""

import importlib
import sys
import textwrap

import pytest

import ploom
from ploom import _names

LIBRARY = """
import ploom.queue as queue
import ploom.threading as threading

_guard = threading.Lock()
_rguard: object = threading.RLock()
_other = None


class Pool:
    shared = threading.Lock()

    def __init__(self):
        self._cond = threading.Condition()
        self._lock = threading.Lock()
        self._over_lock = threading.Condition(self._lock)
        self.items = queue.Queue()
        self.stack = queue.LifoQueue()
        self._sem = threading.BoundedSemaphore(2)
        self._done = threading.Event()
        self._meet = threading.Barrier(2)
        local = threading.Lock()
        self.local = local
        self.split = threading.Lock(
        )
        self.a, self.b = threading.Lock(), threading.Lock()
        self.named = threading.Lock(name="mine")
        self.many = [threading.Lock() for _ in range(3)]

    @classmethod
    def make(cls):
        cls.made = threading.Lock()


class Special(Pool):
    pass


def make_other():
    global _other
    _other = threading.Lock()


def unnamed():
    return queue.Queue(), threading.Condition(), threading.Semaphore(), threading.Event()
"""


@pytest.fixture
def lib(tmp_path, monkeypatch):
    (tmp_path / "names_lib.py").write_text(textwrap.dedent(LIBRARY), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("names_lib")
    yield module
    sys.modules.pop("names_lib", None)


def test_an_attribute_of_self_is_named_after_the_type(lib):
    pool = lib.Pool()
    assert pool._lock.name == "Pool._lock"
    assert pool.shared.name == "Pool.shared"  # a class attribute
    lib.Pool.make()
    assert lib.Pool.made.name == "Pool.made"  # cls.X
    # the type of the object, not the class whose code made it
    assert lib.Special()._lock.name == "Special._lock"
    # a primitive made in a comprehension on the line: the line's target
    assert [lock.name for lock in pool.many] == ["Pool.many"] * 3


def test_a_global_is_named_after_the_module(lib):
    assert lib._guard.name == "names_lib._guard"
    assert lib._rguard._lock.name == "names_lib._rguard"  # annotated
    lib.make_other()
    assert lib._other.name == "names_lib._other"  # under `global`


def test_anything_else_keeps_its_object_name(lib):
    pool = lib.Pool()
    assert pool.local.name.startswith("lock#")  # a local variable
    assert pool.split.name.startswith("lock#")  # over two lines
    assert pool.a.name.startswith("lock#") and pool.b.name.startswith("lock#")
    assert pool.named.name == "mine"  # a name given is kept
    assert ploom.Lock().name.startswith("lock#")  # ploom.Lock is not named


def test_what_a_primitive_makes_is_named_after_it(lib):
    pool = lib.Pool()
    # a Condition and its lock are one name; its waiters are its own
    assert pool._cond._lock._lock.name == "Pool._cond"
    assert pool._cond._waiter_name == "Pool._cond.waiter"
    assert pool._over_lock._waiter_name == "Pool._over_lock.waiter"
    assert pool.items.mutex.name == "Pool.items.mutex"
    assert pool.items.not_empty._waiter_name == "Pool.items.not_empty.waiter"
    assert pool.items.not_full._waiter_name == "Pool.items.not_full.waiter"
    assert pool.items.all_tasks_done._waiter_name == "Pool.items.all_tasks_done.waiter"
    assert pool.stack.mutex.name == "Pool.stack.mutex"
    assert pool._sem._cond._lock.name == "Pool._sem"
    assert pool._sem._cond._waiter_name == "Pool._sem.waiter"
    assert pool._done._cond._lock.name == "Pool._done"
    assert pool._done._cell.name == "Pool._done.flag"
    assert pool._meet._cond._waiter_name == "Pool._meet.waiter"


def test_without_an_owner_name_the_parts_are_named_after_the_class(lib):
    items, cond, sem, event = lib.unnamed()
    assert items.mutex.name == "Queue.mutex"
    assert items.not_empty._waiter_name == "Queue.not_empty.waiter"
    assert cond._lock._lock.name.startswith("lock#")
    assert cond._waiter_name == "Condition.waiter"
    assert sem._cond._waiter_name == "Semaphore.waiter"
    assert event._cell.name == "Event.flag"


def test_a_line_is_read_once(lib, monkeypatch):
    lib.Pool()
    read = []
    original = _names._target
    monkeypatch.setattr(_names, "_target", lambda code, line: read.append(line) or original(code, line))
    pool = lib.Pool()
    assert read == []  # every line was read when the first Pool was made
    assert pool._cond._lock._lock.name == "Pool._cond"
