"""ploom._instrument: the rewriting of a module's functions so that their
plain state accesses call hooks, and the finder that imports modules so.

Three kinds of test: the corpus (instrument_corpus.py) returns the same
results rewritten as written; a recording hooks object shows which accesses
happen in which order; real modules (the standard library's queue,
concurrent.futures.thread and collections, and the pinned packaging) still
work instrumented.  The tests run with hooks objects of their own, never
ploom._ploom's, and in this process only."""

import ast
import importlib
import importlib.machinery
import importlib.resources
import importlib.util
import inspect
import operator
import os
import py_compile
import sys
import textwrap
import threading
import types

import pytest

import ploom
from ploom import _instrument

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "instrument_corpus.py")
STDLIB = os.path.dirname(os.__file__)


class Recorder:
    """Hooks that do each operation as Reference does and log (kind, site
    text) first: a call is logged once its arguments are evaluated."""

    def __init__(self):
        self.table = []
        self.registered = []
        self.log = []

    def sites(self, module, filename, sites, /):
        self.registered.append((module, filename, sites))
        base = len(self.table)
        self.table.extend(sites)
        return base

    def note(self, kind, site):
        self.log.append((kind, self.table[site][2]))

    def new(self, obj, /):
        # not logged: a made object is no access (test_made_objects_are_marked)
        self.made = getattr(self, "made", 0) + 1
        return obj

    def kinds(self):
        return {kind for kind, _ in self.log}

    def getattr(self, obj, name, site, /):
        self.note("getattr", site)
        return getattr(obj, name)

    def setattr(self, obj, name, value, site, /):
        self.note("setattr", site)
        setattr(obj, name, value)

    def delattr(self, obj, name, site, /):
        self.note("delattr", site)
        delattr(obj, name)

    def getitem(self, obj, key, site, /):
        self.note("getitem", site)
        return obj[key]

    def setitem(self, obj, key, value, site, /):
        self.note("setitem", site)
        obj[key] = value

    def delitem(self, obj, key, site, /):
        self.note("delitem", site)
        del obj[key]

    def callattr(self, obj, name, site, /, *args, **kwargs):
        self.note("callattr", site)
        return getattr(obj, name)(*args, **kwargs)

    def read(self, obj, site, /):
        self.note("read", site)
        return obj

    def iter(self, obj, site, /):
        self.note("iter", site)
        return iter(obj)

    def inplace(self, op, left, right, site, /):
        self.note("inplace", site)
        return op(left, right)

    def getglobal(self, namespace, name, site, /):
        self.note("getglobal", site)
        return _instrument.Reference.getglobal(namespace, name, site)

    def setglobal(self, namespace, name, value, site, /):
        self.note("setglobal", site)
        namespace[name] = value

    def delglobal(self, namespace, name, site, /):
        self.note("delglobal", site)
        _instrument.Reference.delglobal(namespace, name, site)


def load(source, hooks, name="instrumented", filename="<test>", namespace=None):
    """A new module of source, instrumented with hooks (not in sys.modules)."""
    module = types.ModuleType(name)
    module.__file__ = filename
    module.__spec__ = importlib.util.spec_from_loader(name, None, origin=filename)
    if namespace:
        module.__dict__.update(namespace)
    code = _instrument.compile_source(source, filename, name, hooks)
    _instrument.bind(module.__dict__, hooks)
    exec(code, module.__dict__)
    return module


def load_plain(source, name, filename):
    module = types.ModuleType(name)
    module.__file__ = filename
    exec(compile(source, filename, "exec"), module.__dict__)
    return module


def obj(**attrs):
    return types.SimpleNamespace(**attrs)


# --- the corpus: the same results, rewritten or not --------------------------

def _corpus_source():
    with open(CORPUS, "rb") as f:
        return f.read()


CASES = sorted(name for name in vars(load_plain(_corpus_source(), "instrument_corpus", CORPUS))
               if name.startswith("case_"))


@pytest.fixture(scope="module")
def corpus():
    source = _corpus_source()
    recorder = Recorder()
    # one name for both, so that reprs that name the module agree
    plain = load_plain(source, "instrument_corpus", CORPUS)
    instrumented = load(source, recorder, "instrument_corpus", CORPUS)
    return plain, instrumented, recorder


def _outcome(function):
    try:
        return "returned", function()
    except Exception as e:  # a case that raises must raise the same
        return "raised", type(e), str(e)


@pytest.mark.parametrize("case", CASES)
def test_the_corpus_behaves_the_same_instrumented(corpus, case):
    plain, instrumented, recorder = corpus
    expected = _outcome(getattr(plain, case))
    start = len(recorder.log)
    got = _outcome(getattr(instrumented, case))
    assert repr(got) == repr(expected)
    assert expected[0] == "returned", expected
    assert len(recorder.log) > start, f"{case} called no hook"


def test_the_corpus_calls_every_hook(corpus):
    _, instrumented, recorder = corpus
    for case in CASES:
        getattr(instrumented, case)()
    # new is no access: counted apart
    assert recorder.kinds() == set(_instrument.HOOKS) - {"new"}
    assert recorder.made > 0


def test_module_level_and_class_bodies_stay_plain():
    recorder = Recorder()
    module = load(textwrap.dedent("""
        import types
        ns = types.SimpleNamespace(items=[1, 2])
        first = ns.items[0]
        ns.items.append(3)
        for x in ns.items:
            pass

        class K:
            size = len(ns.items)
            doubled = [x * 2 for x in ns.items]

            def method(self):
                return ns.items
    """), recorder)
    assert recorder.log == []
    assert module.K().method() == [1, 2, 3]
    assert recorder.log == [("getattr", "ns.items")]


def test_a_class_body_inside_a_function_stays_plain_but_its_methods_do_not():
    recorder = Recorder()
    module = load(textwrap.dedent("""
        def make(ns):
            class K:
                size = len(ns.items)

                def get(self):
                    return ns.items
            return K
    """), recorder)
    cls = module.make(obj(items=[1]))
    assert recorder.log == []
    assert cls.size == 1
    cls().get()
    assert recorder.log == [("getattr", "ns.items")]
    assert not [name for name in vars(cls) if name.startswith("_ploom")]


# --- the order of the accesses -----------------------------------------------

def events(body, *args, prelude="", **namespace):
    """The (kind, site text) that running body as a function's body with
    args logs; calls of note(tag, value) in it log ("note", tag)."""
    recorder = Recorder()
    params = ", ".join(["note", *namespace])
    source = prelude + f"def run({params}):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    module = load(source, recorder)

    def note(tag, value=None):
        recorder.log.append(("note", tag))
        return value

    module.run(note, *namespace.values())
    return recorder.log


def test_augmented_attribute_loads_operates_then_stores():
    assert events("self.n += 1", self=obj(n=1)) == [
        ("getattr", "self.n"), ("inplace", "self.n"), ("setattr", "self.n")]


def test_augmented_attribute_evaluates_the_object_once_before_the_operand():
    assert events("note('obj', self).n += note('value', 1)", self=obj(n=1)) == [
        ("note", "obj"), ("getattr", "note('obj', self).n"), ("note", "value"),
        ("inplace", "note('obj', self).n"), ("setattr", "note('obj', self).n")]


def test_augmented_subscript_object_key_load_operand_operation_store():
    assert events("note('obj', d)[note('key', 'k')] += note('value', 1)", d={"k": 1}) == [
        ("note", "obj"), ("note", "key"), ("getitem", "note('obj', d)[note('key', 'k')]"), ("note", "value"),
        ("inplace", "note('obj', d)[note('key', 'k')]"), ("setitem", "note('obj', d)[note('key', 'k')]")]


def test_augmented_local_name_is_an_inplace_operation():
    assert events("x = []\nx += [1]\nassert x == [1]") == [("inplace", "x"), ("read", "x")]


def test_augmented_global_reads_and_writes_the_global():
    log = events("global COUNT\nCOUNT += 1\nnote(COUNT)", prelude="COUNT = 0\n")
    assert log == [("getglobal", "COUNT"), ("inplace", "COUNT"), ("setglobal", "COUNT"), ("getglobal", "COUNT"),
                   ("note", 1)]


def test_subscript_assignment_evaluates_the_value_first():
    # Python's order: the value, then the target's object and key
    assert events("note('obj', d)[note('key', 'k')] = note('value', 1)", d={}) == [
        ("note", "value"), ("note", "obj"), ("note", "key"), ("setitem", "note('obj', d)[note('key', 'k')]")]


def test_attribute_assignment_evaluates_the_value_first():
    assert events("note('obj', self).x = note('value', 1)", self=obj()) == [
        ("note", "value"), ("note", "obj"), ("setattr", "note('obj', self).x")]


def test_method_call_looks_the_method_up_after_its_arguments():
    assert events("self.items.append(note('arg', 1))", self=obj(items=[])) == [
        ("getattr", "self.items"), ("note", "arg"), ("callattr", "self.items.append")]


def test_unpacking_stores_each_target_in_turn_after_the_value():
    log = events("self.a, note('obj', d)[note('key', 'k')] = note('value', (1, 2))", self=obj(), d={})
    assert log == [("note", "value"), ("setattr", "self.a"), ("note", "obj"), ("note", "key"),
                   ("setitem", "note('obj', d)[note('key', 'k')]")]


def test_nested_unpacking_unpacks_when_its_turn_comes():
    # the inner tuple is unpacked after self.a is stored, as Python does
    log = events("self.a, (self.b, self.c) = 1, note('inner', (2, 3))", self=obj())
    assert log == [("note", "inner"), ("setattr", "self.a"), ("setattr", "self.b"), ("setattr", "self.c")]


def test_chained_assignment_stores_left_to_right_once_evaluated():
    log = events("x = self.a = d['k'] = note('value', 1)\nassert x == 1", self=obj(), d={})
    assert log == [("note", "value"), ("setattr", "self.a"), ("setitem", "d['k']"), ("read", "x")]


def test_deletions_left_to_right():
    log = events("del self.a, note('obj', d)[note('key', 'k')]", self=obj(a=1), d={"k": 1})
    assert log == [("delattr", "self.a"), ("note", "obj"), ("note", "key"),
                   ("delitem", "note('obj', d)[note('key', 'k')]")]


def test_truth_tests_and_membership_are_reads():
    log = events("""
        if self.items and k in self.d:
            pass
        while not self.d:
            pass
        assert len(self.items) == 1
    """, self=obj(items=[1], d={"k": 1}), k="k")
    assert log == [
        ("getattr", "self.items"), ("read", "self.items"), ("getattr", "self.d"), ("read", "self.d"),
        ("getattr", "self.d"), ("read", "self.d"),
        ("getattr", "self.items"), ("read", "self.items")]


def test_equality_reads_both_sides():
    assert events("assert self.a == self.b", self=obj(a=[1], b=[1])) == [
        ("getattr", "self.a"), ("read", "self.a"), ("getattr", "self.b"), ("read", "self.b")]


def test_for_loops_and_comprehensions_iterate_through_the_hook():
    log = events("""
        for x in self.items:
            pass
        [y.v for y in self.objs if y]
    """, self=obj(items=[1], objs=[obj(v=1)]))
    assert log == [("getattr", "self.items"), ("iter", "self.items"),
                   ("getattr", "self.objs"), ("iter", "self.objs"), ("read", "y"), ("getattr", "y.v")]


def test_readers_and_iterating_builtins():
    log = events("sorted(d)\nlist(enumerate(self.items))\nlist(iter(lambda: 0, 0))",
                 d={}, self=obj(items=[]))
    assert log == [("read", "d"), ("getattr", "self.items"), ("iter", "self.items")]


def test_iter_gives_the_containers_own_iterator_and_next_reads_it():
    log = events("""
        it = iter(self.items)
        note("made", type(it))
        note("first", next(it))
        next(it, None)
        next(iter(d))
    """, self=obj(items=[1]), d={"k": 1})
    assert log == [("getattr", "self.items"), ("note", "made"), ("read", "it"), ("note", "first"),
                   ("read", "it"), ("read", "iter(d)")]
    module = load("def run(items):\n    return type(iter(items)), next(iter(items))\n", Recorder())
    assert module.run([5]) == (type(iter([])), 5)


def _elif_chain(n):
    lines = ["def run(x):", "    if x.v == 0:", "        return 0"]
    for i in range(1, n):
        lines += [f"    elif x.v == {i}:", f"        return {i}"]
    return "\n".join(lines) + "\n    return -1\n"


def _sum_of_terms(n):
    return "def run(x):\n    return " + " + ".join(f"x.v * {i}" for i in range(n)) + "\n"


def _attribute_chain(n):
    return "def run(x):\n    return x" + ".me" * n + ".v\n"


@pytest.mark.parametrize("make", [_elif_chain, _sum_of_terms, _attribute_chain])
@pytest.mark.parametrize("n", [500, 4000])
def test_trees_as_deep_as_cpython_compiles_are_rewritten(make, n):
    source = make(n)
    compile(source, "<deep>", "exec")  # what CPython accepts
    limit = sys.getrecursionlimit()
    x = obj(v=n - 1)
    x.me = x
    module = load(source, _instrument.Reference(), name=f"deep_{make.__name__}_{n}")
    plain = {}
    exec(compile(source, "<deep>", "exec"), plain)
    assert module.run(x) == plain["run"](x)
    assert sys.getrecursionlimit() == limit


def test_for_and_with_targets_are_stored_in_order():
    class Manager:
        def __init__(self, tag):
            self.tag = tag

        def __enter__(self):
            log.append(("enter", self.tag))
            return self.tag

        def __exit__(self, *exc):
            return False

    recorder = Recorder()
    log = recorder.log
    module = load("def run(self, d, M):\n    with M('a') as self.x, M('b') as d['k']:\n        pass\n"
                  "    for self.i, d['j'] in [(1, 2)]:\n        pass\n", recorder)
    module.run(obj(), {}, Manager)
    assert log == [("enter", "a"), ("setattr", "self.x"), ("enter", "b"), ("setitem", "d['k']"),
                   ("iter", "[(1, 2)]"), ("setattr", "self.i"), ("setitem", "d['j']")]


def test_globals_declared_and_assigned_go_through_the_hooks_others_do_not():
    log = events("""
        global G
        G = [1]
        G.append(CONST)
        del G
    """, prelude="G = None\nCONST = 2\n")
    assert log == [("setglobal", "G"), ("getglobal", "G"), ("callattr", "G.append"), ("delglobal", "G")]


def test_a_global_name_bound_locally_elsewhere_stays_local():
    log = events("""
        def other():
            G = 5
            return G
        return [G for G in range(2)], other(), (lambda G: G)(1)
    """, prelude="def setter():\n    global G\n    G = 0\n")
    assert log == [("iter", "range(2)")]


def test_type_parameters_are_not_the_global_of_their_name():
    recorder = Recorder()
    module = load(textwrap.dedent("""
        T = 0

        def setter():
            global T
            T = 1

        def f[T](x: T) -> T:
            return T

        class C[T]:
            def m(self):
                return T

        def g():
            return T
    """), recorder)
    assert (module.f(1).__name__, module.C().m().__name__, module.g()) == ("T", "T", 0)
    assert recorder.log == [("getglobal", "T")]


def test_lambdas_and_nested_functions_are_instrumented():
    assert events("(lambda o: o.a)(self)\ndef f():\n    return self.b\nf()", self=obj(a=1, b=2)) == [
        ("getattr", "o.a"), ("getattr", "self.b")]


def test_super_and_mangled_names_work():
    recorder = Recorder()
    module = load(textwrap.dedent("""
        class A:
            def f(self):
                return "A"

        class B(A):
            def __init__(self):
                self.__x = 1

            def f(self):
                self.__x += 1
                return super().f() + str(self.__x)
    """), recorder)
    assert module.B().f() == "A2"
    assert ("callattr", "super().f") in recorder.log
    assert ("setattr", "self.__x") in recorder.log


def test_annotations_are_left_alone():
    recorder = Recorder()
    module = load(textwrap.dedent("""
        from __future__ import annotations

        def f(o: Thing.attr) -> list[o.x]:
            y: o.z = 1
            return f.__annotations__, y
    """), recorder)
    assert module.f(obj()) == ({"o": "Thing.attr", "return": "list[o.x]"}, 1)
    assert recorder.log == [("getattr", "f.__annotations__")]


@pytest.mark.skipif(sys.version_info < (3, 14), reason="template strings are new in 3.14")
def test_template_string_interpolations_are_instrumented():
    recorder = Recorder()
    module = load('def f(o):\n    return t"{o.x!r:>3}"\n', recorder)
    [interpolation] = module.f(obj(x=1)).interpolations
    assert (interpolation.value, interpolation.expression, interpolation.conversion) == (1, "o.x", "r")
    assert recorder.log == [("getattr", "o.x")]


def test_sites_are_registered_once_per_module_with_short_texts():
    recorder = Recorder()
    long_name = "a" * 80
    load(f"def f(self):\n    self.{long_name} = 1\n    return self.items\n", recorder, name="m", filename="m.py")
    [(module, filename, sites)] = recorder.registered
    assert (module, filename) == ("m", "m.py")
    assert sites[1] == (3, 11, "self.items")
    assert sites[0][:2] == (2, 4) and len(sites[0][2]) == 60 and sites[0][2].endswith("...")


def test_site_numbers_start_at_the_base_the_hooks_give():
    recorder = Recorder()
    recorder.table.extend([(0, 0, "earlier")] * 7)
    module = load("def f(o):\n    return o.x\n", recorder)
    module.f(obj(x=1))
    assert recorder.log == [("getattr", "o.x")]
    consts = [n.value for n in ast.walk(_instrument.rewrite("def f(o):\n    return o.x\n")[0])
              if isinstance(n, ast.Constant) and isinstance(n.value, int)]
    assert consts == [0]


def test_source_with_a_coding_cookie():
    source = "# -*- coding: latin-1 -*-\ndef f(o):\n    return o.caf\xe9, '\xe9t\xe9'\n".encode("latin-1")
    recorder = Recorder()
    module = load(source, recorder)
    assert module.f(obj(**{"caf\xe9": 1})) == (1, "\xe9t\xe9")
    assert recorder.log == [("getattr", "o.caf\xe9")]


def test_bind_puts_the_hidden_names_in_the_namespace():
    namespace = {}
    hooks = _instrument.Reference()
    _instrument.bind(namespace, hooks)
    assert namespace["_ploom_G"] is namespace
    assert namespace["_ploom_ga"] is hooks.getattr
    assert namespace["_ploom_iadd"] is operator.iadd
    assert all(name.startswith("_ploom_") and not name.startswith("__") for name in namespace)


def test_default_hooks_come_from_the_extension_or_the_reference(monkeypatch):
    monkeypatch.setattr(_instrument, "_default", None)
    monkeypatch.setattr(ploom, "_ploom", types.SimpleNamespace())
    assert isinstance(_instrument.default_hooks(), _instrument.Reference)

    full = types.SimpleNamespace(**{"_i_" + name: object() for name in ["sites", *_instrument.HOOKS]})
    monkeypatch.setattr(_instrument, "_default", None)
    monkeypatch.setattr(ploom, "_ploom", full)
    assert _instrument.default_hooks().getattr is full._i_getattr

    monkeypatch.setattr(_instrument, "_default", None)
    monkeypatch.setattr(ploom, "_ploom", types.SimpleNamespace(_i_sites=object()))
    with pytest.raises(RuntimeError, match="_i_getattr"):
        _instrument.default_hooks()


# --- real code ---------------------------------------------------------------

@pytest.fixture
def install(tmp_path, monkeypatch):
    """install(), with the finder removed and the modules it imported
    forgotten afterwards; modules are written into tmp_path."""
    finders = []
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)

    def install(names, hooks):
        finder = _instrument.install(names, hooks)
        finders.append(finder)
        return finder

    yield install
    for finder in finders:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
    for name in set(sys.modules) - before:
        del sys.modules[name]
    importlib.invalidate_caches()


def copy_module(source_path, tmp_path, name, edit=None):
    with open(source_path, encoding="utf-8") as f:
        source = f.read()
    if edit:
        source = edit(source)
    (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")


def test_queue_put_and_get_across_threads(install, tmp_path):
    copy_module(os.path.join(STDLIB, "queue.py"), tmp_path, "ploom_queue_copy")
    recorder = Recorder()
    install(["ploom_queue_copy"], recorder)
    import ploom_queue_copy as q

    assert q.__spec__.origin == str(tmp_path / "ploom_queue_copy.py")
    box = q.Queue(maxsize=2)
    out = []

    def consume():
        while (item := box.get()) is not None:
            out.append(item)
            box.task_done()
        box.task_done()

    consumer = threading.Thread(target=consume)
    consumer.start()
    for i in range(20):
        box.put(i)
    box.put(None)
    box.join()
    consumer.join()
    assert out == list(range(20))
    lifo, prio = q.LifoQueue(), q.PriorityQueue()
    for i in (2, 3, 1):
        lifo.put(i)
        prio.put(i)
    assert [lifo.get_nowait() for _ in range(3)] == [1, 3, 2]
    assert [prio.get_nowait() for _ in range(3)] == [1, 2, 3]
    with pytest.raises(q.Empty):
        lifo.get_nowait()
    assert ("callattr", "self.not_empty.notify") in recorder.log
    assert ("setattr", "self.unfinished_tasks") in recorder.log
    assert "ploom_queue_copy" in _instrument.instrumented()


def test_thread_pool_executor(install, tmp_path):
    copy_module(os.path.join(STDLIB, "concurrent", "futures", "thread.py"), tmp_path, "ploom_thread_copy")
    recorder = Recorder()
    install(["ploom_thread_copy"], recorder)
    import ploom_thread_copy as pool

    with pool.ThreadPoolExecutor(max_workers=3) as executor:
        squares = list(executor.map(lambda x: x * x, range(30)))
        failed = executor.submit(operator.truediv, 1, 0)
        with pytest.raises(ZeroDivisionError):
            failed.result()
    assert squares == [x * x for x in range(30)]
    assert ("callattr", "self._work_queue.put") in recorder.log


def _pure_python_collections(source):
    # the C versions would replace the Python OrderedDict, Counter's helper
    # and namedtuple's field getter
    for name in ("OrderedDict", "_tuplegetter", "_count_elements"):
        source = source.replace(f"    from _collections import {name}\n", "    raise ImportError\n")
    return source


def test_collections(install, tmp_path):
    copy_module(os.path.join(STDLIB, "collections", "__init__.py"), tmp_path, "ploom_collections_copy",
                _pure_python_collections)
    recorder = Recorder()
    install(["ploom_collections_copy"], recorder)
    import ploom_collections_copy as c

    od = c.OrderedDict.fromkeys("abcde")
    od.move_to_end("b")
    od.move_to_end("e", last=False)
    od.popitem(last=False)
    del od["c"]
    od["z"] = 1
    assert list(od) == ["a", "d", "b", "z"]
    assert od == c.OrderedDict([("a", None), ("d", None), ("b", None), ("z", 1)])
    counts = c.Counter("abracadabra")
    counts.update("aab")
    counts.subtract({"r": 2})
    assert counts.most_common(2) == [("a", 7), ("b", 3)]
    assert (counts + c.Counter("zz"))["z"] == 2
    point = c.namedtuple("Point", "x y", defaults=[0])
    p = point(1)
    assert (p.x, p.y, p._replace(y=5), p._asdict()) == (1, 0, point(1, 5), {"x": 1, "y": 0})
    chain = c.ChainMap({"a": 1}, {"a": 2, "b": 3})
    chain["c"] = 4
    assert (chain["a"], chain["b"], len(chain), chain.parents["a"]) == (1, 3, 3, 2)
    user = c.UserDict(a=1)
    user["b"] = 2
    assert sorted(user.items()) == [("a", 1), ("b", 2)]
    items = c.UserList([3, 1, 2])
    items.sort()
    items += [4]
    assert items == [1, 2, 3, 4]
    assert c.UserString("abc").upper() == "ABC"
    assert ("callattr", "self.__map.pop") in recorder.log  # the pure-Python OrderedDict


def test_packaging_version_and_specifiers():
    packaging = pytest.importorskip("packaging")
    recorder = Recorder()
    modules = {}
    for name in ("version", "specifiers"):
        path = os.path.join(os.path.dirname(packaging.__file__), f"{name}.py")
        with open(path, "rb") as f:
            source = f.read()
        # a sibling of the real modules: relative imports find them
        modules[name] = load(source, recorder, f"packaging._ploom_{name}", path, {"__package__": "packaging"})
    version, specifiers = modules["version"], modules["specifiers"]
    ordered = sorted(["1.0.post1", "1.0", "1.0rc1", "1.0.dev3", "0.9", "1!0.1"], key=version.Version)
    assert ordered == ["0.9", "1.0.dev3", "1.0rc1", "1.0", "1.0.post1", "1!0.1"]
    v = version.Version("2.3.4rc1+local.7")
    assert (v.release, v.pre, v.local, v.public, v.is_prerelease) == ((2, 3, 4), ("rc", 1), "local.7", "2.3.4rc1", True)
    spec = specifiers.SpecifierSet(">=1.0,!=1.3.*,<2")
    assert [str(x) for x in spec.filter(["0.9", "1.0", "1.3.1", "1.5", "2.0"])] == ["1.0", "1.5"]
    assert "1.4" in spec and "1.3.0" not in spec
    with pytest.raises(version.InvalidVersion):
        version.Version("not a version")
    assert {kind for kind, _ in recorder.log} >= {"getattr", "callattr", "iter", "read"}


STDLIB_SAMPLE = [
    "_pydecimal.py", "argparse.py", "asyncio/tasks.py", "dataclasses.py", "email/_header_value_parser.py",
    "enum.py", "functools.py", "threading.py", "typing.py",
]


@pytest.mark.parametrize("name", STDLIB_SAMPLE)
def test_standard_library_modules_compile(name):
    path = os.path.join(STDLIB, name)
    if not os.path.exists(path):
        pytest.skip(f"no {name} in this Python")
    with open(path, "rb") as f:
        _instrument.compile_source(f.read(), path, "sample", _instrument.Reference())


@pytest.mark.soak
def test_every_standard_library_module_compiles():
    failed = []
    for root, dirs, files in os.walk(STDLIB):
        dirs[:] = [d for d in dirs if d not in ("site-packages", "__pycache__")]
        for file in files:
            if not file.endswith(".py"):
                continue
            path = os.path.join(root, file)
            try:
                with open(path, "rb") as f:
                    source = f.read()
            except OSError:
                continue  # a dangling link (Debian's sitecustomize.py)
            try:
                compile(source, path, "exec", dont_inherit=True)
            except (SyntaxError, ValueError):
                continue  # test data with bad syntax on purpose
            try:
                _instrument.compile_source(source, path, "sample", _instrument.Reference())
            except Exception as e:  # noqa: BLE001 - the list of failures is the result
                failed.append(f"{path}: {e!r}")
    assert failed == []


# --- install() ---------------------------------------------------------------

def test_install_refuses_a_module_already_imported():
    import json

    with pytest.raises(ValueError, match=r"'json'.*already imported .*before ploom could instrument it"):
        _instrument.install(["json"], Recorder())
    assert not any(isinstance(f, _instrument._Finder) and "json" in f.names for f in sys.meta_path)
    assert json is sys.modules["json"]


def test_install_refuses_a_package_whose_submodule_is_imported():
    import email.message  # noqa: F401

    with pytest.raises(ValueError, match="'email.message'"):
        _instrument.install(["email"], Recorder())


def _sourceless(folder, name, source="VALUE = 1\n"):
    """folder/name.pyc, compiled, with no name.py beside it."""
    py = folder / f"{name}.py"
    py.write_text(source)
    py_compile.compile(str(py), cfile=str(folder / f"{name}.pyc"), doraise=True)
    py.unlink()


def test_install_refuses_a_module_without_source(install, tmp_path):
    _sourceless(tmp_path, "ploom_sourceless")
    with pytest.raises(ValueError, match=r"'ploom_sourceless': it has no Python source \(.*SourcelessFileLoader"):
        install(["ploom_sourceless"], Recorder())


def test_a_module_without_source_found_at_import_is_refused_then(install, tmp_path):
    package = tmp_path / "ploom_pkg_lazy"
    package.mkdir()
    (package / "__init__.py").write_text("")
    _sourceless(package, "compiled")
    install(["ploom_pkg_lazy.compiled"], Recorder())  # its parent is not imported: not looked at yet
    with pytest.raises(ValueError, match="'ploom_pkg_lazy.compiled': it has no Python source"):
        importlib.import_module("ploom_pkg_lazy.compiled")


def test_install_refuses_a_builtin_module():
    names = [n for n in sorted(sys.builtin_module_names) if n not in sys.modules
             and importlib.machinery.BuiltinImporter.find_spec(n) is not None]
    if not names:
        pytest.skip("every built-in module is imported already")
    with pytest.raises(ValueError, match=f"'{names[0]}': it has no Python source .*BuiltinImporter"):
        _instrument.install([names[0]], Recorder())


def test_install_refuses_a_frozen_module():
    if "__hello__" in sys.modules or importlib.machinery.FrozenImporter.find_spec("__hello__") is None:
        pytest.skip("no frozen __hello__ to import")
    with pytest.raises(ValueError, match=r"'__hello__': it has no Python source \(frozen, loaded by FrozenImporter"):
        _instrument.install(["__hello__"], Recorder())


def test_install_refuses_what_is_not_a_module_name():
    with pytest.raises(ValueError, match="not a module name"):
        _instrument.install(["a..b"], Recorder())


def test_a_package_and_its_submodules_are_instrumented(install, tmp_path):
    package = tmp_path / "ploom_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from . import sub\n\ndef top(o):\n    return o.top\n")
    (package / "sub.py").write_text("def get(o):\n    return o.sub\n")
    _sourceless(package, "compiled", "def get(o):\n    return o.compiled\n")
    recorder = Recorder()
    install(["ploom_pkg"], recorder)
    import ploom_pkg
    import ploom_pkg.compiled

    thing = obj(top=1, sub=2, compiled=3)
    assert (ploom_pkg.top(thing), ploom_pkg.sub.get(thing), ploom_pkg.compiled.get(thing)) == (1, 2, 3)
    # a compiled submodule runs as it is, unseen, like a C accelerator
    assert recorder.log == [("getattr", "o.top"), ("getattr", "o.sub")]
    assert {"ploom_pkg", "ploom_pkg.sub"} <= set(_instrument.instrumented())
    assert "ploom_pkg.compiled" not in _instrument.instrumented()
    # what other code asks of a module and its loader still works
    assert isinstance(ploom_pkg.__loader__, _instrument._Loader)
    assert ploom_pkg.__path__ == [str(package)]
    (package / "data.txt").write_text("resource")
    assert importlib.resources.files("ploom_pkg").joinpath("data.txt").read_text() == "resource"
    assert inspect.getsource(ploom_pkg.sub.get) == "def get(o):\n    return o.sub\n"
    del recorder.log[:]
    importlib.reload(ploom_pkg.sub).get(thing)
    assert recorder.log == [("getattr", "o.sub")]


def test_no_bytecode_cache_is_read_or_written(install, tmp_path):
    path = tmp_path / "ploom_cached.py"
    path.write_text("def f():\n    return 'stale'\n")
    cache = importlib.util.cache_from_source(str(path))
    # a cache the normal import trusts without looking at the source
    py_compile.compile(str(path), cfile=cache, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    path.write_text("def f():\n    return 'fresh'\n")
    before = os.path.getmtime(cache)
    install(["ploom_cached"], Recorder())
    import ploom_cached

    assert ploom_cached.f() == "fresh"
    assert os.path.getmtime(cache) == before
    assert os.listdir(os.path.dirname(cache)) == [os.path.basename(cache)]


def test_modules_not_named_are_left_alone(install, tmp_path):
    (tmp_path / "ploom_named.py").write_text("def f(o):\n    return o.x\n")
    (tmp_path / "ploom_named_not.py").write_text("def f(o):\n    return o.x\n")
    recorder = Recorder()
    finder = install(["ploom_named"], recorder)
    import ploom_named
    import ploom_named_not

    assert ploom_named_not.f(obj(x=1)) == ploom_named.f(obj(x=1)) == 1
    assert recorder.log == [("getattr", "o.x")]
    assert sys.meta_path[0] is finder


def test_made_objects_are_marked():
    """Displays and comprehensions of lists, dicts and sets inside a
    function go through the new hook, which no other task can reach until
    the next point; calls, tuples, targets and module-level code do not."""
    source = textwrap.dedent("""
        TOP = [1, 2]

        def f(xs):
            a, b = [], {}
            s = {1}
            c = [x for x in xs]
            d = {x: x for x in xs}
            e = {x for x in xs}
            t = (1, 2)
            [p, q] = xs[:2]
            g = list(xs)
            return a, b, s, c, d, e, t, p, q, g
        """)
    tree, _sites, _constants = _instrument.rewrite(source)
    text = ast.unparse(tree)
    assert "TOP = [1, 2]" in text
    for made in ("_ploom_nw([])", "_ploom_nw({})", "_ploom_nw({1})", "_ploom_nw([x for x in ",
                 "_ploom_nw({x: x for x in ", "_ploom_nw({x for x in "):
        assert made in text, (made, text)
    assert "_ploom_nw((1, 2))" not in text and "_ploom_nw(list(" not in text
    assert "[p, q] =" in text or "(p, q) =" in text or "p, q =" in text
    rec = Recorder()
    code = _instrument.compile_source(source.encode(), "<made>", "made_mod", hooks=rec)
    namespace = {}
    _instrument.bind(namespace, hooks=rec)
    exec(code, namespace)
    assert namespace["f"]([3, 4]) == ([], {}, {1}, [3, 4], {3: 3, 4: 4}, {3, 4}, (1, 2), 3, 4, [3, 4])
    assert rec.made == 6
