"""Instrumented code keeps CPython's lifetimes: the hooks hold no reference
to what they touch beyond the access, so `__del__` runs, weak references
die and their callbacks fire where they would uninstrumented, reference
counts are the same, and the temporaries a task touches do not pile up
for the rest of the schedule (pyext/plain.c, "the plain objects of a
schedule").

Each scenario runs one probe module twice in each task: instrumented
(--instrument=lifeprobe) and a plain copy of the same file loaded under
another name, which no finder instruments; the task fails unless the two
record the same events."""

import json
import subprocess
import textwrap

import pytest

import progen
from ploom._utility import find_utility

PROBE = textwrap.dedent('''
    import gc
    import sys
    import weakref


    class Conn:
        def __init__(self, name, events):
            self.name = name
            self.events = events

        def __del__(self):
            self.events.append("del " + self.name)


    class Slotted:
        __slots__ = ("name", "events")

        def __init__(self, name, events):
            self.name = name
            self.events = events

        def __del__(self):
            self.events.append("del slotted " + self.name)


    class Pool:
        """A connection goes back to the pool when its user drops it."""

        def __init__(self):
            self.free = list()

        def take(self):
            return Lent(self, self.free.pop() if self.free else "fresh")


    class Lent:
        def __init__(self, pool, name):
            self.pool = pool
            self.name = name

        def __del__(self):
            self.pool.free.append(self.name)


    def probe(tag, events):
        c = Conn(tag, events)
        n = c.name
        c.name = n + "!"
        del c
        events.append("after del")

        w = Conn(tag + " weak", events)
        r = weakref.ref(w, lambda ref: events.append("callback"))
        w.name
        del w
        events.append("after weak " + str(r() is None))

        o = Conn(tag + " counted", events)
        o.items = list()
        o.items.append(1)
        o.table = dict()
        o.table["k"] = o.items
        for _ in o.items:
            pass
        for _ in o.table.items():
            pass
        next(iter(o.items))
        events.append(("refs", sys.getrefcount(o), sys.getrefcount(o.items), sys.getrefcount(o.table)))
        del o

        held = list()
        held.append(Conn(tag + " in a list", events))
        len(held)
        del held
        events.append("after list")

        s = Slotted(tag, events)
        s.name
        del s
        events.append("after slotted")

        pool = Pool()
        lent = pool.take()
        lent.name
        del lent
        again = pool.take()
        events.append("pool " + again.name)
        return events
''')

SCENARIO = textwrap.dedent('''
    import importlib.util
    import os
    import threading

    import lifeprobe

    _spec = importlib.util.spec_from_file_location(
        "lifeprobe_plain", os.path.join(os.path.dirname(__file__), "lifeprobe.py"))
    plain = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(plain)


    def user(tag):
        got = lifeprobe.probe(tag, [])
        want = plain.probe(tag, [])
        assert got == want, (got, want)


    def scenario():
        assert hasattr(lifeprobe, "_ploom_ga") and not hasattr(plain, "_ploom_ga")
        ts = [threading.Thread(target=user, args=(t,)) for t in "ab"]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
''')


@pytest.mark.parametrize("options", [
    ("--reduction=dpor",),
    ("--reduction=none",),
    ("--reduction=none", "--search=ipb"),
])
def test_del_weakrefs_and_reference_counts_are_those_of_plain_code(tmp_path, options):
    (tmp_path / "lifeprobe.py").write_text(PROBE)
    (tmp_path / "lifescen.py").write_text(SCENARIO)
    rc, stats, stderr = progen.explore(
        f"{tmp_path / 'lifescen.py'}:scenario", tmp_path / "traces", *options,
        "--patch=lifescen", "--instrument=lifeprobe", "--max-steps=0", limit=300)
    assert rc in (0, 3), stderr
    assert stats["failing"] == 0, (stats, stderr)


MANY = textwrap.dedent('''
    import sys
    import threading

    import tempprobe


    def user():
        tempprobe.churn(50)
        before = sys.getallocatedblocks()
        tempprobe.churn(5000)
        grown = sys.getallocatedblocks() - before
        assert grown < 2000, f"{grown} blocks more after 5000 rounds of temporaries"


    def scenario():
        t = threading.Thread(target=user)
        t.start()
        tempprobe.churn(10)
        t.join()
''')

TEMPS = textwrap.dedent('''
    class Obj:
        pass


    def churn(n):
        total = 0
        for i in range(n):
            o = Obj()
            o.x = i
            total += o.x
            items = list()
            items.append(i)
            table = dict()
            table[i] = items
            total += len(table[i])
            raw = bytearray(1)
            raw[0] = 1
        return total
''')


@pytest.mark.parametrize("reduction", ["none", "dpor"])
def test_temporaries_touched_do_not_outlive_their_use(tmp_path, reduction):
    """Each round makes an object, a list, a dict and a bytearray that the
    task touches through hooks and drops: held by the hooks, 5000 rounds
    leave over 20,000 blocks behind."""
    (tmp_path / "tempprobe.py").write_text(TEMPS)
    (tmp_path / "tempscen.py").write_text(MANY)
    rc, stats, stderr = progen.explore(
        f"{tmp_path / 'tempscen.py'}:scenario", tmp_path / "traces", f"--reduction={reduction}",
        "--patch=tempscen", "--instrument=tempprobe", "--max-steps=0", limit=2)
    assert stats is not None and stats["failing"] == 0, (stats, stderr)


REUSE = textwrap.dedent('''
    import threading


    class Obj:
        pass


    class Counter:
        n = 0


    def work(counter, log):
        for i in range(4):
            o = Obj()
            o.x = i
            items = list()
            items.append(o.x)
            table = dict()
            table["k"] = items
            log.append(len(table["k"]))
            del o, items, table
        n = counter.n
        counter.n = n + 1


    def scenario():
        counter, log = Counter(), list()
        t = threading.Thread(target=work, args=(counter, log))
        t.start()
        work(counter, log)
        t.join()
        assert counter.n == 2, counter.n
''')


def test_an_object_made_where_a_dead_one_was_is_a_new_plain_object_and_replays(tmp_path):
    """Each round's temporaries die and the next round's take their
    addresses: each is a plain#N of its own, numbered alike in the
    search and in a replay, which runs in a process of its own."""
    (tmp_path / "reuse.py").write_text(REUSE)
    rc, stats, stderr = progen.explore(
        f"{tmp_path / 'reuse.py'}:scenario", tmp_path / "traces", "--reduction=dpor", "--patch=reuse", limit=500)
    assert rc == 1 and stats["failing"], stderr
    path = stats["trace"]
    trace = json.loads(open(path).read())
    names = {}
    for o in trace["objects"]:
        names.setdefault(o["name"], set()).add(o["object"])
    # two tasks, four rounds each: eight objects, lists and dicts
    assert len(names["Obj.x"]) == 8, names
    assert sum(len(v) for k, v in names.items() if k.startswith("list items")) == 8, names
    assert sum(len(v) for k, v in names.items() if k.startswith("dict table")) == 8, names
    replayed = subprocess.run([find_utility("ploom-replay"), path], capture_output=True, text=True, check=False,
                              cwd=tmp_path)
    assert replayed.returncode == 1 and "reproduced" in replayed.stderr, replayed.stderr


POOL = textwrap.dedent('''
    import threading


    class Pool:
        """One connection; a user's handle gives it back when dropped."""

        def __init__(self):
            self.free = ["conn"]
            self.cond = threading.Condition()

        def take(self):
            with self.cond:
                while not self.free:
                    self.cond.wait()
                return Handle(self, self.free.pop())

        def give(self, name):
            with self.cond:
                self.free.append(name)
                self.cond.notify()


    class Handle:
        def __init__(self, pool, name):
            self.pool = pool
            self.name = name

        def __del__(self):
            self.pool.give(self.name)


    def user(pool):
        handle = pool.take()
        assert handle.name == "conn"
        del handle


    def scenario():
        pool = Pool()
        ts = [threading.Thread(target=user, args=(pool,)) for _ in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert pool.free == ["conn"]
''')


@pytest.mark.parametrize("reduction", ["dpor", "none"])
def test_a_pool_whose_connection_comes_back_in_del_does_not_deadlock(tmp_path, reduction):
    (tmp_path / "delpool.py").write_text(POOL)
    rc, stats, stderr = progen.explore(
        f"{tmp_path / 'delpool.py'}:scenario", tmp_path / "traces", f"--reduction={reduction}",
        "--patch=delpool", "--instrument=delpool", limit=2000)
    assert rc == 0 and stats["complete"] and stats["failing"] == 0, (stats, stderr)
