"""Instrumented code in a schedule, where its hooks are points: iter() of a
container gives the container's own iterator (its type, copy, pickle,
length hint and setstate), each next() of it is still a read of the
container, and a module too deep for the rewriter's recursion loads."""

import textwrap

import progen

PROBE = textwrap.dedent('''
    import collections
    import copy
    import operator
    import pickle


    # module-level code is not instrumented: the types CPython gives
    REAL = {name: type(made) for name, made in (
        ("list", iter([])), ("reversed", reversed([])), ("dict", iter({})),
        ("items", iter({}.items())), ("set", iter(set())), ("deque", iter(collections.deque())))}


    class Box:
        def __init__(self):
            self.items = list(range(5))


    def behaves(box):
        lst = box.items
        it = iter(lst)
        assert type(it) is REAL["list"], type(it)
        assert next(it) == 0
        assert operator.length_hint(it) == 4 and it.__length_hint__() == 4
        assert list(copy.copy(it)) == [1, 2, 3, 4]
        assert list(pickle.loads(pickle.dumps(it))) == [1, 2, 3, 4]
        it.__setstate__(3)
        assert list(it) == [3, 4]
        table = dict.fromkeys(lst)
        for made, real in ((reversed(lst), "reversed"), (iter(table), "dict"),
                           (iter(table.items()), "items"), (iter(set(lst)), "set"),
                           (iter(collections.deque(lst)), "deque")):
            assert type(made) is REAL[real], (type(made), real)
            assert operator.length_hint(made) == 5
            assert len(list(copy.copy(made))) == 5
        # an iterator the instrumented code keeps inside another one
        e = enumerate(lst)
        next(e)
        assert list(pickle.loads(pickle.dumps(e))) == [(1, 1), (2, 2), (3, 3), (4, 4)]
        assert list(copy.copy(e)) == [(1, 1), (2, 2), (3, 3), (4, 4)]
        m = map(str, lst)
        assert operator.length_hint(m) == 0


    def first(box, out):
        it = iter(box.items)
        out.append(next(it))


    def push_front(box):
        box.items.insert(0, 99)
''')

SCENARIO = textwrap.dedent('''
    import threading

    import iterprobe


    def behaves():
        box = iterprobe.Box()
        t = threading.Thread(target=iterprobe.behaves, args=(box,))
        t.start()
        iterprobe.behaves(iterprobe.Box())
        t.join()


    def race():
        box, out = iterprobe.Box(), []
        t = threading.Thread(target=iterprobe.first, args=(box, out))
        t.start()
        iterprobe.push_front(box)
        t.join()
        assert out == [99], out
''')


def _explore(tmp_path, name, *options):
    (tmp_path / "iterprobe.py").write_text(PROBE)
    (tmp_path / "iterscen.py").write_text(SCENARIO)
    return progen.explore(f"{tmp_path / 'iterscen.py'}:{name}", tmp_path / "traces", "--patch=iterscen",
                          "--instrument=iterprobe", *options, limit=200)


def test_iter_in_a_schedule_gives_the_real_iterator(tmp_path):
    # depth first with a bound: each next() is a point of its own
    for options in (("--reduction=dpor",), ("--reduction=none", "--max-preemptions=1")):
        rc, stats, stderr = _explore(tmp_path, "behaves", *options)
        assert rc == 0 and stats["failing"] == 0 and stats["complete"], (stats, stderr)


def test_a_next_of_a_real_iterator_is_a_read_of_its_container(tmp_path):
    # the write can come between iter() and next(): the search finds the
    # order where it does not (out == [0])
    for reduction in ("dpor", "none"):
        rc, stats, stderr = _explore(tmp_path, "race", f"--reduction={reduction}")
        assert rc == 1 and stats["failing"] >= 1, (stats, stderr)
        assert "AssertionError: [0]" in stderr, stderr


DEEP = textwrap.dedent('''
    import threading


    def classify(x):
        if x == 0:
            return 0
    {branches}
        return -1


    def total(o):
        return {terms}


    class O:
        v = 1


    def scenario():
        out = []
        t = threading.Thread(target=lambda: out.append(classify(499)))
        t.start()
        out.append(total(O()))
        t.join()
        assert sorted(out) == [499, 500], out
''')


def test_a_scenario_with_a_500_branch_elif_and_a_500_term_sum_loads(tmp_path):
    branches = "\n".join(f"    elif x == {i}:\n        return {i}" for i in range(1, 500))
    terms = " + ".join(["o.v"] * 500)
    (tmp_path / "deepscen.py").write_text(DEEP.replace("{branches}", branches).replace("{terms}", terms))
    rc, stats, stderr = progen.explore(f"{tmp_path / 'deepscen.py'}:scenario", tmp_path / "traces",
                                       "--reduction=dpor", "--patch=deepscen", limit=50)
    assert rc == 0 and stats["complete"] and stats["failing"] == 0, (stats, stderr)
