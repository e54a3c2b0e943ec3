"""Scenarios of tests/python/test_plain.py: plain state through the hooks
of ploom._ploom, called by hand as instrumented code would call them.
A module of its own, so that the worker that imports it imports no pytest.
"""

import collections
import operator

import ploom
from ploom import _ploom

ga, sa, da = _ploom._i_getattr, _ploom._i_setattr, _ploom._i_delattr
gi, si, di = _ploom._i_getitem, _ploom._i_setitem, _ploom._i_delitem
cm, rd, it, io = _ploom._i_callattr, _ploom._i_read, _ploom._i_iter, _ploom._i_inplace
gg, sg, dg = _ploom._i_getglobal, _ploom._i_setglobal, _ploom._i_delglobal


def _run_tasks(work, n=2):
    ts = [ploom.Thread(target=work) for _ in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def close_twice():
    """The connection closed twice: a check of a dict entry, then a
    locked count, then the entry cleared.  Both tasks may see the entry."""
    handle = {"con": "c1"}
    lock = ploom.Lock()
    returned = ploom.SharedCell(0)

    def close():
        if rd(gi(handle, "con", 0), 0):
            with lock:
                returned.write(returned.read() + 1)
            si(handle, "con", None, 0)

    _run_tasks(close)
    assert returned.read() == 1, f"returned {returned.read()} times"


class Stats:
    def __init__(self):
        self.hits = 0
        self.lock = ploom.Lock()


def hits_unlocked():
    s = Stats()

    def work():
        sa(s, "hits", io(operator.iadd, ga(s, "hits", 0), 1, 0), 0)

    _run_tasks(work)
    assert s.hits == 2, s.hits


def hits_locked():
    s = Stats()

    def work():
        with ga(s, "lock", 0):
            sa(s, "hits", io(operator.iadd, ga(s, "hits", 0), 1, 0), 0)

    _run_tasks(work)
    assert s.hits == 2, s.hits


def list_appends():
    items = []

    def work():
        n = len(rd(items, 0))
        cm(items, "append", 0, n)

    _run_tasks(work)
    assert sorted(items) == [0, 1], items


def deque_and_iteration():
    d = collections.deque()
    seen = []

    def producer():
        cm(d, "append", 0, 1)

    def consumer():
        for x in it(d, 0):
            seen.append(x)

    a, b = ploom.Thread(target=producer), ploom.Thread(target=consumer)
    a.start()
    b.start()
    a.join()
    b.join()
    assert seen == [1], seen


COUNT = 0


def global_counter():
    g = globals()

    def work():
        sg(g, "COUNT", gg(g, "COUNT", 0) + 1, 0)

    sg(g, "COUNT", 0, 0)
    _run_tasks(work)
    assert gg(g, "COUNT", 0) == 2


def view_iteration():
    d = {"a": 1}

    def writer():
        si(d, "b", 2, 0)

    def reader():
        keys = cm(d, "keys", 0)
        for _ in it(keys, 0):
            pass

    a, b = ploom.Thread(target=writer), ploom.Thread(target=reader)
    a.start()
    b.start()
    a.join()
    b.join()


class Holder:
    def __init__(self):
        self.cell = ploom.SharedCell(0)


def code_is_not_state():
    """Method lookups and module functions are code: no points."""
    h = Holder()

    def work():
        cm(ga(h, "cell", 0), "write", 0, 1)
        ga(ploom, "SharedCell", 0)

    _run_tasks(work)


def code_baseline():
    """code_is_not_state with the method call and the module attribute
    made plainly: the same schedules if lookups are no points."""
    h = Holder()

    def work():
        ga(h, "cell", 0).write(1)
        _ = ploom.SharedCell

    _run_tasks(work)


def private_work():
    def work():
        mine = {}
        for i in range(50):
            si(mine, i, i, 0)

    _run_tasks(work)


# Sites registered as ploom._instrument registers an instrumented
# module's: each is watched, not a point, until the search finds that it
# touches plain state that tasks share.
S = _ploom._i_sites(
    "plain_scenarios",
    __file__,
    ((1, 0, "c.hits"), (2, 0, "c.hits"), (3, 0, "mine.append"), (4, 0, "mine[i]")),
)


def hits_unlocked_sites():
    s = Stats()

    def work():
        sa(s, "hits", io(operator.iadd, ga(s, "hits", S), 1, S), S + 1)

    _run_tasks(work)
    assert s.hits == 2, s.hits


def own_work_sites(n=20000):
    def work():
        # as instrumented code marks what its displays make
        mine, d = _ploom._i_new([]), _ploom._i_new({})
        for i in range(n):
            cm(mine, "append", S + 2, i)
            si(d, i, i, S + 3)

    _run_tasks(work)


def own_work_plain(n=20000):
    def work():
        mine, d = [], {}
        for i in range(n):
            mine.append(i)
            d[i] = i

    _run_tasks(work)


class Misses(dict):
    """A dict whose __missing__ writes plain state: reading an entry runs
    code that reaches a point of its own."""

    def __missing__(self, key):
        sa(self, "misses", io(operator.iadd, ga(self, "misses", 0), 1, 0), 0)
        return 0


def missing_runs_code():
    counts = Misses()
    counts.misses = 0
    seen = [ploom.SharedCell(None), ploom.SharedCell(None)]

    def reader(cell):
        return lambda: cell.write(gi(counts, "k", 0))

    tasks = [ploom.Thread(target=reader(cell)) for cell in seen]
    for t in tasks:
        t.start()
    for t in tasks:
        t.join()
    assert [cell.read() for cell in seen] == [0, 0]
