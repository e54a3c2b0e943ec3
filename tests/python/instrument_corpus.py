"""A corpus for test_instrument: every construct that ploom._instrument
rewrites, in functions named case_*.  Each case returns what it did (values,
and the order in which objects saw their accesses), which must be the same
whether this module runs as written or instrumented.  A case resets the
module globals it uses, so that the cases run in any order."""

import collections
import operator
from copy import copy

COUNT = 0
LOG = []
TABLE = {}
WALRUS = None
GONE = "here"
__DOUBLE = "module-level double underscore"


# --- objects that say which accesses they see, in order ------------------------

class Plain:
    kind = "plain"
    made = 0

    def __init__(self, n=0):
        self.n = n
        self.items = []
        self.d = {}


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self):
        self.a = 1
        self.b = [2]


class Prop:
    def __init__(self):
        self._v = 0
        self.log = []

    @property
    def v(self):
        self.log.append("get")
        return self._v

    @v.setter
    def v(self, value):
        self.log.append(("set", value))
        self._v = value

    @v.deleter
    def v(self):
        self.log.append("del")
        self._v = None


class Noisy:
    """A mapping and an object that logs its item and attribute accesses."""

    def __init__(self, log):
        object.__setattr__(self, "log", log)
        object.__setattr__(self, "data", {})

    def __getitem__(self, key):
        self.log.append(("getitem", key))
        return self.data[key]

    def __setitem__(self, key, value):
        self.log.append(("setitem", key, value))
        self.data[key] = value

    def __delitem__(self, key):
        self.log.append(("delitem", key))
        del self.data[key]

    def __getattr__(self, name):
        self.log.append(("getattr", name))
        try:
            return self.data[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self.log.append(("setattr", name, value))
        self.data[name] = value

    def __delattr__(self, name):
        self.log.append(("delattr", name))
        del self.data[name]

    def __iter__(self):
        self.log.append("iter")
        return iter(sorted(self.data))

    def __len__(self):
        self.log.append("len")
        return len(self.data)

    def __contains__(self, key):
        self.log.append(("contains", key))
        return key in self.data


def noting(log, tag, value):
    """value, once log notes tag: shows when an expression is evaluated."""
    log.append(tag)
    return value


class Base:
    greeting = "base"

    def hello(self, x):
        return (self.greeting, x)

    @classmethod
    def make(cls):
        return cls.__name__

    @staticmethod
    def twice(x):
        return x * 2


class Child(Base):
    greeting = "child"

    def hello(self, x):
        return ("child", super().hello(x), super(Child, self).hello(x + 1),  # noqa: UP008 - both forms
                super().greeting)


class Mangled:
    def __init__(self):
        self.__secret = 1

    def bump(self):
        self.__secret += 2
        global __DOUBLE  # the name mangled: _Mangled__DOUBLE, a new global
        __DOUBLE = self.__secret
        return self.__secret, self._Mangled__secret, self.__helper(), __DOUBLE

    def __helper(self):
        return "helped"


class Vector:
    def __init__(self, *xs):
        self.xs = list(xs)

    def __matmul__(self, other):
        return sum(a * b for a, b in zip(self.xs, other.xs, strict=True))

    def __eq__(self, other):
        return isinstance(other, Vector) and self.xs == other.xs

    __hash__ = None


class Manager:
    def __init__(self, log, name):
        self.log = log
        self.name = name

    def __enter__(self):
        self.log.append(("enter", self.name))
        return self.name

    def __exit__(self, *exc):
        self.log.append(("exit", self.name, exc[0].__name__ if exc[0] else None))
        return False


# --- the cases -----------------------------------------------------------------

def case_attributes():
    p = Plain(1)
    p.n = 3
    p.n += 2
    before = p.n
    p.extra = p.kind * 2
    del p.n
    missing = hasattr(p, "n")
    p.__class__.made += 1
    type(p).made += 1
    made = Plain.made
    Plain.made = 0
    return before, p.extra, missing, made, p.kind, vars(p)


def case_slots():
    s = Slotted()
    s.a += 10
    s.b.append(s.a)
    s.b[0] *= 3
    del s.a
    try:
        _ = s.a
    except AttributeError as e:
        gone = str(e)
    return s.b, gone


def case_property():
    p = Prop()
    p.v = 5
    p.v += 1
    value = p.v
    del p.v
    return value, p.log, p._v


def case_subscripts():
    items = list(range(10))
    items[1:3] = ["a", "b", "c"]
    stepped = items[::2]
    items[-1] += 5
    del items[0]
    del items[2:4]
    items[::3] = items[::3][::-1]
    grid = {(1, 2): "x"}
    grid[1, 2] += "y"
    grid[3, 4] = grid[1, 2] * 2
    text = "hello world"
    nested = [[1, 2], [3, 4]]
    nested[1][0] = nested[0][1] + nested[1][1]
    return items, stepped, grid, text[2:-2], text[::-1], nested


def case_slice_keys():
    log = []
    n = Noisy(log)
    n[1:2] = "s"
    n[1:2, 3] = "t"
    got = n[1:2], n[1:2, 3]
    del n[1:2]
    return log, got


def case_dict_methods():
    d = {"a": 1}
    d.setdefault("b", []).append(2)
    d.update(c=3)
    d |= {"e": 5}
    popped = d.pop("a")
    got = d.get("zz", "default"), d.get("c")
    keys = sorted(d.keys())
    values = [v for k, v in sorted(d.items()) if k != "b"]
    copied = d.copy()
    d.clear()
    return popped, got, keys, values, copied, d


def case_list_methods():
    items = [3, 1, 2]
    items.append(4)
    items.extend([6, 5])
    items.insert(0, 0)
    items.remove(6)
    last = items.pop()
    items.sort(key=lambda x: -x)
    items.reverse()
    where = items.index(2), items.count(2)
    items *= 2
    return items, last, where


def case_set_and_deque():
    s = {1, 2}
    s.add(3)
    s |= {4}
    s.discard(1)
    s -= {2}
    q = collections.deque([1, 2, 3], maxlen=5)
    q.appendleft(0)
    q.append(4)
    q.append(5)
    q.rotate(2)
    first = q.popleft()
    counts = collections.Counter("abracadabra")
    counts["a"] -= 1
    return sorted(s), list(q), first, sorted(counts.items())


def case_augassign_names():
    total = 0
    for i in range(5):
        total += i
    shared = [1]
    alias = shared
    shared += [2]  # in place: alias sees it
    frozen = (1,)
    other = frozen
    frozen += (2,)  # a new tuple: other does not
    x = 7
    x -= 1
    x *= 3
    x //= 2
    x %= 5
    x **= 3
    x <<= 2
    x >>= 1
    x |= 1
    x ^= 6
    x &= 0xFF
    y = 10
    y /= 4
    v = Vector(1, 2)
    v @= Vector(3, 4)
    return total, shared, alias, frozen, other, x, y, v


def case_augassign_targets():
    log = []
    n = Noisy(log)
    n.count = 1
    n.count += 1
    n["k"] = [1]
    n["k"] += [2]
    holder = {"n": n}
    holder["n"].count *= 10
    noting(log, "obj", n)[noting(log, "key", "k")] += noting(log, "value", [3])
    noting(log, "obj", n).count -= noting(log, "value", 1)
    return log, n.data


def case_globals():
    global COUNT, LOG, TABLE
    COUNT = 0
    LOG = []
    TABLE = {}
    COUNT += 1
    COUNT = COUNT * 10
    LOG = LOG + ["a"]
    LOG += ["b"]
    TABLE["k"] = COUNT
    bump()
    seen = read_globals()
    shadowed = shadow()
    comprehension = [COUNT for COUNT in range(3)]
    return COUNT, LOG, TABLE, seen, shadowed, comprehension


def bump():
    global COUNT
    COUNT += 5


def read_globals():
    def inner():
        return COUNT, len(LOG)

    return inner(), (lambda: COUNT)()


def shadow():
    COUNT = "local"  # a local that shadows the global
    LOG = [COUNT]
    return COUNT, LOG


def case_global_del_and_for():
    global GONE, COUNT
    GONE = "here"
    del GONE
    try:
        _ = GONE
    except NameError as e:
        error = str(e)
    GONE = "back"
    seen = []
    for COUNT in range(3):
        seen.append(COUNT)
    with Manager([], "m") as COUNT:
        pass
    return error, GONE, seen, COUNT


def case_unpacking():
    p = Plain()
    d = {}
    items = [0, 0, 0]
    p.a, p.b = 1, 2
    p.a, p.b = p.b, p.a
    d["x"], (p.c, y) = "X", ("C", "Y")
    p.first, *p.rest = range(5)
    [items[0], items[2]] = "ab"
    *d["init"], d["last"] = [1, 2, 3]
    (p.deep, [d["deeper"], items[1]]) = (1, (2, 3))
    return vars(p), d, items, y


def case_unpacking_order():
    log = []
    n = Noisy(log)
    noting(log, "target1", n).a, noting(log, "target2", n)[noting(log, "key", "k")] = noting(log, "value", (1, 2))
    return log


def case_chained():
    log = []
    n = Noisy(log)
    p = Plain()
    d = {}
    a = p.x = d["k"] = n["k"] = n.attr = noting(log, "value", [1])
    a.append(2)
    return log, p.x, d, n.data


def case_for_targets():
    p = Plain()
    d = {}
    seen = []
    for p.i in range(3):
        seen.append(p.i)
    for d["k"], (p.j, *d["rest"]) in [(1, (2, 3, 4)), (5, (6,))]:
        seen.append((d["k"], p.j, d["rest"]))
    for x in p.items:
        seen.append(x)
    else:
        seen.append("else")
    for i, ch in enumerate("ab"):
        if ch == "b":
            break
        seen.append(i)
    else:
        seen.append("not reached")
    return seen, vars(p), d


def case_with_targets():
    log = []
    p = Plain()
    d = {}
    with Manager(log, "a") as p.x, Manager(log, "b") as d["y"], Manager(log, "c"):
        log.append(("body", p.x, d["y"]))
    with Manager(log, "de") as (p.first, d["second"]):
        pass
    try:
        with Manager(log, "e") as p.e:
            raise KeyError("boom")
    except KeyError:
        log.append("caught")
    return log, vars(p), d


def case_comprehensions():
    p = Plain()
    p.items = [3, 1, 2]
    p.d = {"a": 1, "b": 2}
    squares = [x * x for x in p.items if x in p.items]
    pairs = [(x, y) for x in p.items for y in p.d if p.d[y] < x]
    keyed = {k: p.d[k] + 1 for k in p.d}
    unique = {x % 2 for x in p.items}
    total = sum(x for x in p.items)
    nested = [[y for y in range(x)] for x in p.items]
    target = Plain()
    attr_targets = [target.i for target.i in range(3)]  # an attribute target: stored plainly
    return squares, pairs, keyed, sorted(unique), total, nested, attr_targets, target.i


def case_generators():
    p = Plain()

    def produce(obj):
        for i in range(3):
            obj.n += i
            yield obj.n
        yield from obj.items

    p.items = ["x"]
    values = list(produce(p))
    lazy = (p.d.setdefault(k, k * 2) for k in range(3))
    before = dict(p.d)
    drained = list(lazy)
    return values, before, drained, p.d


def case_lambdas():
    p = Plain(4)
    items = [Plain(3), Plain(1), Plain(2)]
    ordered = [o.n for o in sorted(items, key=lambda o: o.n)]
    add = (lambda o, k=p.n: o.n + k)(p)
    mapped = list(map(lambda o: o.kind, items[:1]))
    return ordered, add, mapped


def case_closures():
    log = []
    counter = 0
    box = {"v": 0}

    def inc():
        nonlocal counter
        counter += 1
        box["v"] += counter
        log.append(counter)

    def outer():
        shared = []

        def add(x):
            shared.append(x)
            return len(shared)

        return add, shared

    inc()
    inc()
    add, shared = outer()
    add("a")
    add("b")
    return counter, box, log, shared


def case_super():
    c = Child()
    return c.hello(1), Child.make(), c.twice(3), Base().hello(0)


def case_try():
    p = Plain()
    out = []
    try:
        _ = p.missing
    except AttributeError as e:
        out.append(str(e))
    try:
        _ = p.d["nope"]
    except KeyError as e:
        out.append(repr(e))
    try:
        del p.gone
    except AttributeError as e:
        out.append(str(e))
    try:
        p.items[5] = 1
    except IndexError as e:
        out.append(str(e))
    try:
        p.nothing()
    except AttributeError as e:
        out.append(str(e))
    finally:
        p.n = "finally"
    return out, p.n


def case_walrus():
    global WALRUS
    p = Plain()
    p.items = [1, 2, 3]
    if (n := len(p.items)) > 2:
        p.n = n
    found = [y for x in p.items if (y := x * 2) > 2]
    got = (WALRUS := p.n + 1)
    return p.n, found, y, got, WALRUS


def case_match():
    out = []
    for subject in [Plain(3), {"kind": "m", "v": [1, 2]}, [1, 2, 3], ("x",), 42]:
        match subject:
            case Plain(n=n) if n > 2:
                out.append(("plain", n))
            case {"kind": "m", "v": [first, *rest]}:
                out.append(("mapping", first, rest))
            case [1, *others] if others:
                out.append(("list", others))
            case (single,):
                out.append(("single", single))
            case _:
                out.append("other")
    return out


def case_readers():
    p = Plain()
    p.items = [3, 1, 2]
    p.d = {"b": 2, "a": 1}
    readers = (len(p.items), sorted(p.d), list(p.d.values()), tuple(p.items), set(p.items) == {1, 2, 3},
               frozenset(p.d) == {"a", "b"}, dict(p.d), sum(p.items), min(p.items), max(p.items),
               any(p.items), all(p.items), bool(p.items), str(p.items), repr(p.d), list(reversed(p.items)),
               copy(p.items), "-".join(p.d), b"".join([b"a", b"b"]))
    iterators = (list(iter(p.items)), list(enumerate(p.items, 1)), list(zip(p.items, p.d, strict=False)),
                 list(map(operator.neg, p.items)), list(filter(None, [0, *p.items])),
                 list(zip(*[p.items], strict=True)))
    values = iter([1, 2, 0, 3])
    sentinel = list(iter(lambda: next(values), 0))
    return readers, iterators, sentinel


def case_truth():
    p = Plain()
    out = []
    if p.items:
        out.append("items")
    if not p.d:
        out.append("no d")
    p.items.append(1)
    while p.items:
        out.append(p.items.pop())
    assert not p.items, p.items
    out.append("yes" if p.d else "no")
    out.append(p.items or p.d or "fallback")
    out.append(p.items and p.d)
    out.append(p.kind == "plain")
    out.append(p.items != [])
    out.append(1 in p.items)
    out.append("x" not in p.d)
    out.append(0 < p.n + 1 < 5)
    out.append(1 in [1] in [[1]])
    out.append(p.items is not None)
    return out


def case_noisy_reads():
    log = []
    n = Noisy(log)
    n["a"] = 1
    if n:
        log.append("truthy")
    present = "a" in n
    size = len(n)
    listed = [k for k in n]
    return log, present, size, listed


def case_fstrings():
    p = Plain(5)
    d = {"k": "v"}
    return f"{p.n} {d['k']!r:>5} {p.kind.upper()} {p.n=} {d.get('k')}"


def case_mangling():
    m = Mangled()
    first = m.bump()
    second = m.bump()
    return first, second, globals().get("_Mangled__DOUBLE")


def case_deletions():
    global COUNT
    COUNT = 1
    p = Plain()
    p.a = p.b = 1
    d = {"a": 1, "b": 2, "c": 3}
    items = list(range(6))
    x = y = 0
    del p.a, d["a"], items[1:3], x
    del (y, d["b"]), [items[0]]
    del COUNT
    gone = "COUNT" not in globals()
    COUNT = 0
    return vars(p), d, items, "x" in locals(), "y" in locals(), gone


def case_calls():
    p = Plain()
    args = ([1, 2],)
    kwargs = {"key": None}
    p.items.extend(*args)
    p.items.sort(**kwargs, reverse=True)
    p.d.update({"obj": 1}, name=2, site=3)  # keywords named like the hook's own parameters
    text = "{0}-{name}".format(*args, **{"name": "n"})
    return p.items, p.d, text, Base.make(), Base.twice(p.items[0])


def case_annotated():
    p = Plain()
    d = {}
    p.x: int = 5
    d["k"]: str = "v"
    p.y: int  # noqa: B032 - evaluates p, assigns nothing
    local: list = [p.x]
    return vars(p), d, local, hasattr(p, "y")


def case_nested_definitions():
    p = Plain(2)

    def decorate(f):
        f.tagged = p.n
        return f

    @decorate
    def inner(x, k=p.n * 10, *, j=p.kind):
        return x + k, j

    class Local(Base):
        level = p.n  # a class body: run once, plainly

        def get(self):
            return self.level + p.n

    return inner(1), inner.tagged, Local().get(), Local().hello(0)


def case_async():
    log = []

    class Resource:
        def __init__(self):
            self.opened = 0

        async def __aenter__(self):
            self.opened += 1
            return self

        async def __aexit__(self, *exc):
            self.opened -= 1

    class Numbers:
        def __init__(self, n):
            self.i, self.n = 0, n

        def __aiter__(self):
            return self

        async def __anext__(self):
            if self.i >= self.n:
                raise StopAsyncIteration
            self.i += 1
            return self.i

    async def work(r):
        async with r as res:
            log.append(res.opened)
            async for k in Numbers(3):
                log.append(k)
            values = [k async for k in Numbers(2)]
        return values, r.opened

    coroutine = work(Resource())
    try:
        coroutine.send(None)
    except StopIteration as stop:
        return stop.value, log
    raise AssertionError("the coroutine awaited something")


def case_order_of_evaluation():
    log = []
    p = Plain()
    d = {}
    noting(log, "obj", p).x = noting(log, "value", 1)
    noting(log, "obj", d)[noting(log, "key", "k")] = noting(log, "value", 2)
    noting(log, "obj", p).items.append(noting(log, "arg", 3))
    del noting(log, "obj", d)[noting(log, "key", "k")]
    return log, vars(p), d
