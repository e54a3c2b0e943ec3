"""The rewriting of a module's functions so that every access to plain state
calls a hook of ``ploom._ploom`` (the hook does the access and records it,
which makes it a scheduling point the checker can order against the others).
ploom._instrument compiles the tree :func:`rewrite` gives and loads the
modules named to its ``install`` from it.  Module-level and class-body
statements run at import, before any task exists: they stay as written.
What the rewritten functions report (``s`` is the access's site, an int
that names the module, line, column and source text registered through the
hooks' ``sites``):

- ``X.a`` becomes ``_ploom_ga(X, 'a', s)``; ``X.a = v`` and ``del X.a``
  become ``_ploom_sa(X, 'a', v, s)`` and ``_ploom_da(X, 'a', s)``;
- ``X.m(args)`` becomes ``_ploom_cm(X, 'm', s, args)``: the method is looked
  up when the call is made, after its arguments are evaluated;
- ``X[k]``, ``X[k] = v``, ``del X[k]``, slices included, become
  ``_ploom_gi``, ``_ploom_si``, ``_ploom_di`` (a slice as ``slice(...)``);
- ``X.a += v``, ``X[k] += v`` and ``x += v`` load, then call
  ``_ploom_io(operator.iadd, old, v, s)``, then store: an in-place change of
  a shared list is seen even through a local name;
- a read of X's content, ``_ploom_rd(X, s)``, where X is a name, attribute,
  subscript or call: the test of ``if``, ``while``, ``assert`` and ``x if X
  else y``; ``not X``; the operands of ``and``/``or`` whose truth is tested;
  the container of ``in``/``not in``; both sides of a single ``==`` or
  ``!=``; the arguments of the builtins ``len``, ``sorted``, ``list``,
  ``dict``, ``sum``, ``min``, ``str`` and the other ``_READERS``, called by
  their bare names; the argument of ``'sep'.join(X)``;
- ``_ploom_it(X, s)``, an iterator whose every ``next`` is a read of X: the
  iterable of ``for`` and of comprehensions, and the iterated arguments of
  ``enumerate``, ``zip``, ``map``, ``filter``;
- ``iter(X)`` stays as written and gives X's own iterator; ``next(I)``
  becomes ``next(_ploom_rd(I, s))``: an iterator of a built-in container
  (or a view of a dict) read there is a read of the container;
- the module globals that some function declares ``global`` and assigns:
  their loads, stores and deletions in functions become ``_ploom_gg``,
  ``_ploom_sg``, ``_ploom_dg`` on the module's namespace (``_ploom_G``).

Assignments keep Python's order exactly: the value first, then each target
from left to right, an unpacking done into temporaries whose elements are then
stored in order.  Augmented assignments evaluate the target's object (and
key), load, evaluate the operand, operate, store.

Not seen, because nothing in the rewritten source names the access:

- accesses through ``getattr``, ``setattr``, ``delattr`` and ``hasattr`` with a
  computed name, through ``vars()``, ``__dict__``, ``globals()`` or ``locals()``;
- what ``str.format``, f-strings, ``%`` and ``print`` read of a container, and
  the content reads of functions other than the readers above (a container
  passed to any other function, ``copy.copy`` included, is an argument, not
  a read);
- what C code does inside a call: a built-in container's method is one
  access, the ``_ploom_cm`` of its call, and what an extension module or a C
  function given a container does with it is not seen;
- a method of a literal (``', '.join(...)``, ``'{}'.format(...)``): a
  constant is no shared state;
- ``I.__next__()`` called by name, and what code that is not instrumented
  takes from an iterator it is given;
- a bound method of a container taken once and called later
  (``push = self.items.append``; ``push(x)``): the attribute load is seen,
  the calls are not;
- attributes and subscripts as the targets of a comprehension
  (``[... for self.x in ...]``): they are stored without a hook;
- module globals that no function declares ``global`` and assigns (a module
  global mutated in place, ``CACHE[k] = v``, is seen through its subscript);
  a ``global`` name bound by ``import``, ``def``, ``class``, ``except ... as``
  or a ``match`` capture;
- module-level and class-body code, including a class body inside a function,
  and a comprehension or generator expression at module level, even when it
  runs later;
- code outside the instrumented modules, and the code that
  ``exec``/``eval`` run.  A function of an instrumented module re-created
  with other globals (``types.FunctionType(f.__code__, namespace)``) needs
  ``bind`` (ploom._instrument) on that namespace, or it raises ``NameError``
  naming a hook;
- ``async for`` iteration and ``async with`` protocol calls (their
  expressions are rewritten, the ``__anext__`` calls are not reads).

The hidden names that rewritten code uses (``_ploom_ga`` ... ``_ploom_G``, and
the temporaries ``_ploom_t<N>``) start with one underscore, so that class
bodies do not mangle them and ``from module import *`` does not export them;
ploom._instrument's ``bind`` puts them in the module's namespace before its
code runs.  They do show in ``dir(module)`` and ``vars(module)``.  A method called
``X.m(...)`` looks ``m`` up after evaluating the arguments, so
``obj.missing(f())`` calls ``f`` before raising ``AttributeError``.
"""

from __future__ import annotations

import ast
import copy
import importlib.util
import sys

__all__ = ["rewrite", "HOOKS", "GLOBALS", "SLICE", "INPLACE"]

# The hidden names rewritten code calls, which ploom._instrument's bind puts
# in the module's namespace: the attributes of a hooks object, and the
# hidden name each is bound to; the namespace itself; slice.
HOOKS = {
    "getattr": "_ploom_ga",
    "setattr": "_ploom_sa",
    "delattr": "_ploom_da",
    "getitem": "_ploom_gi",
    "setitem": "_ploom_si",
    "delitem": "_ploom_di",
    "callattr": "_ploom_cm",
    "read": "_ploom_rd",
    "iter": "_ploom_it",
    "inplace": "_ploom_io",
    "getglobal": "_ploom_gg",
    "setglobal": "_ploom_sg",
    "delglobal": "_ploom_dg",
    "new": "_ploom_nw",
}
GLOBALS = "_ploom_G"
SLICE = "_ploom_slice"
_TEMP = "_ploom_t"

# augmented assignment operator -> the operator module's in-place function
INPLACE = {
    ast.Add: "iadd", ast.Sub: "isub", ast.Mult: "imul", ast.MatMult: "imatmul",
    ast.Div: "itruediv", ast.FloorDiv: "ifloordiv", ast.Mod: "imod", ast.Pow: "ipow",
    ast.LShift: "ilshift", ast.RShift: "irshift", ast.BitOr: "ior", ast.BitXor: "ixor",
    ast.BitAnd: "iand",
}

# f(x) with f one of these bare names reads the content of its positional
# arguments
_READERS = frozenset({
    "len", "sorted", "list", "tuple", "set", "frozenset", "dict", "sum", "min", "max",
    "any", "all", "bool", "str", "repr", "reversed", "copy",
})
# f(...) with f one of these iterates some of its arguments (_iterated)
_ITERATORS = frozenset({"enumerate", "zip", "map", "filter"})
# calls that return a scalar, a new container or an iterator whose reads are
# seen already: a truth test or a reader of the result reads nothing shared
_FRESH_CALLS = frozenset({
    "len", "bool", "any", "all", "isinstance", "issubclass", "hasattr", "callable",
    "id", "hash", "int", "float", "abs", "round", "ord", "chr", "str", "repr", "type",
    "list", "tuple", "set", "frozenset", "dict", "sorted", "reversed", "range",
    "iter", "enumerate", "zip", "map", "filter",
})
_SITE_TEXT_MAX = 60


# --- scopes ------------------------------------------------------------------

def _mangle(classname, name):
    """name as the compiler spells it inside class classname (``__x`` ->
    ``_C__x``): the hooks get attribute names as strings, which it does not
    mangle."""
    if classname is None or not name.startswith("__") or name.endswith("__") or "." in name:
        return name
    stripped = classname.lstrip("_")
    return f"_{stripped}{name}" if stripped else name


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class _Scope:
    """A function's (or lambda's, or comprehension's) own names, mangled:
    those it binds, and those it declares global or nonlocal.  Found when
    first asked: only a module with assigned globals needs them."""

    def __init__(self, kind, classname, node=None):
        self.kind = kind  # "module", "class", "function" or "comprehension"
        self.classname = classname
        self.node = node
        self._names = None if node is not None else (set(), set(), set())

    @property
    def bound(self):
        return self._find()[0]

    @property
    def globals(self):
        return self._find()[1]

    @property
    def nonlocals(self):
        return self._find()[2]

    def _find(self):
        if self._names is None:
            self._names = (set(), set(), set())
            node = self.node
            if self.kind == "comprehension":
                for gen in node.generators:
                    for name in ast.walk(gen.target):
                        if isinstance(name, ast.Name):
                            self._bind(name.id)
            else:
                args = node.args
                for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
                    if arg is not None:
                        self._bind(arg.arg)
                for param in getattr(node, "type_params", ()):
                    self._bind(param.name)  # in a scope of their own, between this one and the outer
                for child in [node.body] if isinstance(node, ast.Lambda) else node.body:
                    self._collect(child)
        return self._names

    def _bind(self, name):
        self._names[0].add(_mangle(self.classname, name))

    def _collect(self, node):
        """The bindings node makes in this scope: not those of the functions,
        classes and comprehensions in it, only their names, and what their
        decorators, defaults, bases or walrus operators bind here."""
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._bind(node.name)
            outer = [*node.decorator_list, *node.args.defaults, *node.args.kw_defaults]
        elif isinstance(node, ast.ClassDef):
            self._bind(node.name)
            outer = [*node.decorator_list, *node.bases, *node.keywords]
        elif isinstance(node, ast.Lambda):
            outer = [*node.args.defaults, *node.args.kw_defaults]
        elif isinstance(node, _COMPREHENSIONS):
            # only a walrus binds here; the targets are the comprehension's
            outer = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            for gen in node.generators:
                outer += [gen.iter, *gen.ifs]
        else:
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                self._bind(node.id)
            elif isinstance(node, ast.Global):
                self._names[1].update(_mangle(self.classname, n) for n in node.names)
            elif isinstance(node, ast.Nonlocal):
                self._names[2].update(_mangle(self.classname, n) for n in node.names)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    if alias.name != "*":
                        self._bind(alias.asname or alias.name.partition(".")[0])
            elif isinstance(node, ast.ExceptHandler) and node.name:
                self._bind(node.name)
            elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
                self._bind(node.name)
            elif isinstance(node, ast.MatchMapping) and node.rest:
                self._bind(node.rest)
            outer = ast.iter_child_nodes(node)
        for child in outer:
            if child is not None:
                self._collect(child)


def _assigned_globals(tree, text):
    """The names (mangled) that some function declares global and assigns."""
    found = set()
    if "global" not in text:
        return found

    def walk(node, function, classname):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                walk(child, child, classname)
            elif isinstance(child, ast.ClassDef):
                walk(child, None, child.name)
            elif isinstance(child, ast.Global):
                if function is not None:
                    declaring[function] = classname
            elif isinstance(child, ast.stmt | ast.excepthandler | ast.match_case):
                walk(child, function, classname)

    declaring = {}
    walk(tree, None, None)
    for function, classname in declaring.items():
        scope = _Scope("function", classname, function)
        found.update(scope.globals & scope.bound)
    return found


# --- the rewriter ------------------------------------------------------------

def _load(name):
    return ast.Name(id=name, ctx=ast.Load())


def _store(name):
    return ast.Name(id=name, ctx=ast.Store())


def _call(name, args, keywords=()):
    return ast.Call(func=_load(name), args=list(args), keywords=list(keywords))


def _located(new, old):
    """new, and the nodes made with it, at old's position in the source:
    cheaper than ast.fix_missing_locations on the whole module, and it
    points a traceback at the access itself."""
    ast.copy_location(new, old)
    pending = [new]
    while pending:
        for child in ast.iter_child_nodes(pending.pop()):
            if "lineno" in child._attributes and getattr(child, "lineno", None) is None:
                ast.copy_location(child, old)
                pending.append(child)
    return new


def _iterated(name, args):
    """The positions of the arguments that a call of the builtin name
    iterates; none after a ``*args``, whose length is not known."""
    known = next((i for i, arg in enumerate(args) if isinstance(arg, ast.Starred)), len(args))
    if name == "enumerate":
        wanted = {0}
    elif name == "zip":
        wanted = set(range(len(args)))
    elif name == "map":
        wanted = set(range(1, len(args)))
    else:
        wanted = {1}
    return {i for i in wanted if i < known}


def _can_hold(node):
    """Whether node's value may be a container whose content a truth test, a
    comparison or a reader reads: literals and operators make new values."""
    if isinstance(node, ast.Call):
        return not (isinstance(node.func, ast.Name) and node.func.id in _FRESH_CALLS)
    return isinstance(node, (ast.Name, ast.Attribute, ast.Subscript))


class _Rewriter(ast.NodeTransformer):
    """Rewrites the accesses that function bodies and lambdas make.

    Each visit method rewrites one construct; outside functions (``active``
    false) they only look for the functions nested in what they visit.  Sites
    are numbered from 0 in the order found; their ``Constant`` nodes get the
    base :func:`compile_source` obtains once the whole module is rewritten."""

    def __init__(self, text, assigned_globals):
        lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        self.lines = lines
        self.assigned_globals = assigned_globals
        self.sites = []
        self.site_index = {}
        self.site_constants = []
        self.scopes = [_Scope("module", None)]
        self.ntemps = 0

    # --- context

    @property
    def active(self):
        for scope in reversed(self.scopes):
            if scope.kind != "comprehension":
                return scope.kind == "function"
        return False

    @property
    def classname(self):
        return self.scopes[-1].classname

    def mangle(self, name):
        return _mangle(self.classname, name)

    def is_global(self, name):
        """Whether the name (as written) is one of the assigned module globals
        where it is used: a function or comprehension that binds it, or
        declares it nonlocal, makes it another variable."""
        name = self.mangle(name)
        if name not in self.assigned_globals:
            return False
        for scope in reversed(self.scopes):
            if scope.kind == "class":
                if name in scope.bound:
                    return False
                continue
            if name in scope.globals:
                return True
            if name in scope.bound or name in scope.nonlocals:
                return scope.kind == "module"
        return True

    def temp(self):
        self.ntemps += 1
        return f"{_TEMP}{self.ntemps}"

    # --- sites

    def site_text(self, node):
        try:
            first, last = node.lineno - 1, node.end_lineno - 1
            if first == last:
                raw = self.lines[first].encode()[node.col_offset:node.end_col_offset]
            else:
                raw = b" ".join([
                    self.lines[first].encode()[node.col_offset:],
                    *(line.encode() for line in self.lines[first + 1:last]),
                    self.lines[last].encode()[:node.end_col_offset],
                ])
            text = raw.decode("utf-8", "replace")
        except (AttributeError, IndexError, TypeError):
            text = ast.unparse(node)
        text = " ".join(text.split())
        if len(text) > _SITE_TEXT_MAX:
            text = text[:_SITE_TEXT_MAX - 3] + "..."
        return text

    def site(self, node):
        """A constant naming node's source as the site of an access."""
        key = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0), self.site_text(node))
        index = self.site_index.get(key)
        if index is None:
            index = self.site_index[key] = len(self.sites)
            self.sites.append(key)
        constant = ast.Constant(value=index)
        self.site_constants.append(constant)
        return constant

    # --- helpers

    def visit_list(self, nodes):
        out = []
        for node in nodes:
            new = self.visit(node)
            if isinstance(new, list):
                out.extend(new)
            elif new is not None:
                out.append(new)
        return out

    def key(self, node):
        """A subscript's key as an expression: slices become ``slice(...)``."""
        if isinstance(node, ast.Slice):
            parts = [ast.Constant(None) if part is None else self.visit(part)
                     for part in (node.lower, node.upper, node.step)]
            return _located(_call(SLICE, parts), node)
        if isinstance(node, ast.Tuple) and any(isinstance(elt, ast.Slice) for elt in node.elts):
            return _located(ast.Tuple(elts=[self.key(elt) for elt in node.elts], ctx=ast.Load()), node)
        return self.visit(node)

    def read(self, node):
        """node visited, wrapped in ``_ploom_rd`` when it may be a container."""
        if not _can_hold(node):
            return self.visit(node)
        site = self.site(node)
        return _located(_call(HOOKS["read"], [self.visit(node), site]), node)

    def iterate(self, node):
        site = self.site(node)
        return _located(_call(HOOKS["iter"], [self.visit(node), site]), node)

    def test(self, node):
        """node as the condition of an if, while, assert, ternary, not, or
        and/or: each operand's truth is a read of it."""
        if isinstance(node, ast.BoolOp):
            return _located(ast.BoolOp(op=node.op, values=[self.test(v) for v in node.values]), node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return _located(ast.UnaryOp(op=node.op, operand=self.test(node.operand)), node)
        return self.read(node)

    def plain_target(self, node):
        """Whether an assignment target needs no hook: names that are no
        instrumented global, and unpackings of those."""
        if isinstance(node, ast.Name):
            return not self.is_global(node.id)
        if isinstance(node, ast.Starred):
            return self.plain_target(node.value)
        if isinstance(node, (ast.Tuple, ast.List)):
            return all(self.plain_target(elt) for elt in node.elts)
        return False

    def assign(self, target, value, temps):
        """Statements storing the expression value (a temporary's name or a
        constant, which may be evaluated at any time) into target, evaluating
        target's parts left to right."""
        if isinstance(target, ast.Name):
            if self.is_global(target.id):
                call = _call(HOOKS["setglobal"], [_load(GLOBALS), ast.Constant(self.mangle(target.id)),
                                                  value, self.site(target)])
                return [_located(ast.Expr(call), target)]
            return [_located(ast.Assign(targets=[target], value=value), target)]
        if isinstance(target, ast.Attribute):
            site = self.site(target)
            call = _call(HOOKS["setattr"], [self.visit(target.value), ast.Constant(self.mangle(target.attr)),
                                            value, site])
            return [_located(ast.Expr(call), target)]
        if isinstance(target, ast.Subscript):
            site = self.site(target)
            call = _call(HOOKS["setitem"], [self.visit(target.value), self.key(target.slice), value, site])
            return [_located(ast.Expr(call), target)]
        if isinstance(target, (ast.Tuple, ast.List)):
            if self.plain_target(target):
                return [_located(ast.Assign(targets=[target], value=value), target)]
            return self.unpack(target, value, temps)
        raise SyntaxError(f"cannot assign to {ast.dump(target)}")  # pragma: no cover - the parser refuses it

    def unpack(self, target, value, temps):
        """Unpacks value into one temporary per element, as Python unpacks
        before it stores, then stores each element; a nested unpacking is
        done when its turn comes."""
        names, elts = [], []
        for elt in target.elts:
            name = self.temp()
            temps.append(name)
            names.append(name)
            elts.append(_located(ast.Starred(value=_store(name), ctx=ast.Store()), elt)
                        if isinstance(elt, ast.Starred) else _store(name))
        unpacked = ast.Tuple(elts=elts, ctx=ast.Store())
        stmts = [_located(ast.Assign(targets=[_located(unpacked, target)], value=value), target)]
        for elt, name in zip(target.elts, names, strict=True):
            if isinstance(elt, ast.Starred):
                elt = elt.value
            stmts += self.assign(elt, _load(name), temps)
        return stmts

    @staticmethod
    def forget(temps, node):
        """``del`` of the temporaries, which would otherwise keep their
        objects alive until the function returns."""
        if not temps:
            return []
        return [_located(ast.Delete(targets=[ast.Name(id=name, ctx=ast.Del()) for name in temps]), node)]

    def stored_through(self, target, node):
        """For a for or with target that needs hooks: the temporary the loop
        or the with statement binds, and the statements that store it."""
        name = self.temp()
        return _store(name), self.assign(target, _load(name), [])

    # --- scopes

    def visit_Module(self, node):
        node.body = self.visit_list(node.body)
        return node

    def visit_arguments_defaults(self, args):
        args.defaults = [self.visit(d) for d in args.defaults]
        args.kw_defaults = [None if d is None else self.visit(d) for d in args.kw_defaults]

    def visit_FunctionDef(self, node):
        # decorators and defaults are evaluated where the def is; annotations
        # are left alone: they are types, or strings under the annotations
        # future, and no task reads them as state
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        self.visit_arguments_defaults(node.args)
        self.scopes.append(_Scope("function", self.classname, node))
        node.body = self.visit_list(node.body)
        self.scopes.pop()
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        self.visit_arguments_defaults(node.args)
        self.scopes.append(_Scope("function", self.classname, node))
        node.body = self.visit(node.body)
        self.scopes.pop()
        return node

    def visit_ClassDef(self, node):
        # the body runs once, where the class is defined; its methods are
        # rewritten, its statements are not (temporaries would become class
        # attributes)
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.bases = [self.visit(b) for b in node.bases]
        node.keywords = [self.visit(k) for k in node.keywords]
        scope = _Scope("class", node.name)
        # a class's type parameters are seen by its methods, unlike its names
        scope.bound.update(_mangle(node.name, p.name) for p in getattr(node, "type_params", ()))
        self.scopes.append(scope)
        node.body = self.visit_list(node.body)
        self.scopes.pop()
        return node

    def visit_comprehension_node(self, node):
        if not self.active:
            return self.generic_visit(node)
        # the first iterable is evaluated in the enclosing scope; the others,
        # the conditions and the element, once per element in the
        # comprehension's.  No walrus here: none is allowed in an iterable.
        # Targets stay plain, attributes and subscripts included.
        first = node.generators[0]
        first.iter = self.visit(first.iter) if first.is_async else self.iterate(first.iter)
        self.scopes.append(_Scope("comprehension", self.classname, node))
        for i, gen in enumerate(node.generators):
            if i:
                gen.iter = self.visit(gen.iter) if gen.is_async else self.iterate(gen.iter)
            gen.ifs = [self.test(cond) for cond in gen.ifs]
        if isinstance(node, ast.DictComp):
            node.key = self.visit(node.key)
            node.value = self.visit(node.value)
        else:
            node.elt = self.visit(node.elt)
        self.scopes.pop()
        return node

    def visit_made(self, node):
        """A list, dict or set display or comprehension always makes a new
        object, which no other task can reach before the next scheduling
        point: ``_ploom_nw`` says so, and its accesses until then are no
        points.  (A call, even of a class, may return an old object.)"""
        active = self.active
        node = self.visit_comprehension_node(node) if isinstance(
            node, (ast.ListComp, ast.SetComp, ast.DictComp)) else self.generic_visit(node)
        if not active:
            return node
        return _located(_call(HOOKS["new"], [node]), node)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_made
    visit_GeneratorExp = visit_comprehension_node

    def visit_List(self, node):
        if not isinstance(node.ctx, ast.Load):
            return self.generic_visit(node)
        return self.visit_made(node)

    visit_Set = visit_Dict = visit_made

    # --- expressions

    def visit_Name(self, node):
        if not self.active or not isinstance(node.ctx, ast.Load) or not self.is_global(node.id):
            return node
        call = _call(HOOKS["getglobal"], [_load(GLOBALS), ast.Constant(self.mangle(node.id)), self.site(node)])
        return _located(call, node)

    def visit_Attribute(self, node):
        if not self.active or not isinstance(node.ctx, ast.Load) or isinstance(node.value, ast.Constant):
            return self.generic_visit(node)
        site = self.site(node)
        call = _call(HOOKS["getattr"], [self.visit(node.value), ast.Constant(self.mangle(node.attr)), site])
        return _located(call, node)

    def visit_Subscript(self, node):
        if not self.active or not isinstance(node.ctx, ast.Load):
            return self.generic_visit(node)
        site = self.site(node)
        return _located(_call(HOOKS["getitem"], [self.visit(node.value), self.key(node.slice), site]), node)

    def visit_Call(self, node):
        if not self.active:
            return self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Constant):
            # "".join(x): the constant's method reads x
            if func.attr == "join" and isinstance(func.value.value, str | bytes) and len(node.args) == 1:
                node.args = [self.read(node.args[0]) if not isinstance(node.args[0], ast.Starred)
                             else self.visit(node.args[0])]
                node.keywords = [self.visit(k) for k in node.keywords]
                return node
            return self.generic_visit(node)
        if isinstance(func, ast.Attribute):
            site = self.site(func)
            obj = self.visit(func.value)
            args = [self.visit(a) for a in node.args]
            keywords = [self.visit(k) for k in node.keywords]
            call = _call(HOOKS["callattr"], [obj, ast.Constant(self.mangle(func.attr)), site, *args], keywords)
            return _located(call, node)
        if isinstance(func, ast.Name) and func.id == "next" and node.args and \
                not isinstance(node.args[0], ast.Starred):
            # whatever the argument is (iter(X) included): the iterator it
            # gives is read, which reads the container it shows
            node.func = self.visit(func)
            first = node.args[0]
            node.args = [_located(_call(HOOKS["read"], [self.visit(first), self.site(first)]), first),
                         *(self.visit(arg) for arg in node.args[1:])]
            node.keywords = [self.visit(k) for k in node.keywords]
            return node
        if isinstance(func, ast.Name) and (func.id in _READERS or func.id in _ITERATORS):
            node.func = self.visit(func)
            iterated = _iterated(func.id, node.args)
            node.args = [self.visit(arg) if isinstance(arg, ast.Starred)
                         else self.read(arg) if func.id in _READERS
                         else self.iterate(arg) if i in iterated
                         else self.visit(arg)
                         for i, arg in enumerate(node.args)]
            node.keywords = [self.visit(k) for k in node.keywords]
            return node
        return self.generic_visit(node)

    def visit_Compare(self, node):
        if not self.active:
            return self.generic_visit(node)
        operands = [node.left, *node.comparators]
        if len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq | ast.NotEq):
            reads = {0, 1}
        else:
            reads = {i + 1 for i, op in enumerate(node.ops) if isinstance(op, ast.In | ast.NotIn)}
        new = [self.read(o) if i in reads else self.visit(o) for i, o in enumerate(operands)]
        node.left, node.comparators = new[0], new[1:]
        return node

    def visit_BoolOp(self, node):
        if not self.active:
            return self.generic_visit(node)
        node.values = [self.test(v) for v in node.values[:-1]] + [self.visit(node.values[-1])]
        return node

    def visit_UnaryOp(self, node):
        if not self.active or not isinstance(node.op, ast.Not):
            return self.generic_visit(node)
        node.operand = self.test(node.operand)
        return node

    def visit_IfExp(self, node):
        if not self.active:
            return self.generic_visit(node)
        node.test = self.test(node.test)
        node.body = self.visit(node.body)
        node.orelse = self.visit(node.orelse)
        return node

    def visit_NamedExpr(self, node):
        if not self.active or not self.is_global(node.target.id):
            return self.generic_visit(node)
        # (g := v) with g global: (_ploom_sg(G, 'g', (t := v), s), t)[1]
        name = self.temp()
        value = _located(ast.NamedExpr(target=_store(name), value=self.visit(node.value)), node)
        store = _call(HOOKS["setglobal"], [_load(GLOBALS), ast.Constant(self.mangle(node.target.id)),
                                           value, self.site(node.target)])
        pair = ast.Tuple(elts=[store, _load(name)], ctx=ast.Load())
        return _located(ast.Subscript(value=pair, slice=ast.Constant(1), ctx=ast.Load()), node)

    # --- statements

    def visit_Assign(self, node):
        if not self.active:
            return self.generic_visit(node)
        value = self.visit(node.value)
        if all(self.plain_target(t) for t in node.targets):
            node.value = value
            return node
        temps = []
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple | ast.List):
            stmts = self.unpack(node.targets[0], value, temps)
        elif len(node.targets) == 1 and isinstance(value, ast.Constant):
            stmts = self.assign(node.targets[0], value, temps)
        else:
            name = self.temp()
            temps.append(name)
            stmts = [_located(ast.Assign(targets=[_store(name)], value=value), node)]
            for target in node.targets:
                stmts += self.assign(target, _load(name), temps)
        return stmts + self.forget(temps, node)

    def visit_AnnAssign(self, node):
        if not self.active:
            return self.generic_visit(node)
        # in a function the annotation is never evaluated
        target = node.target
        if node.value is not None and isinstance(target, ast.Attribute | ast.Subscript):
            return self.visit_Assign(_located(ast.Assign(targets=[target], value=node.value), node))
        if node.value is not None:
            node.value = self.visit(node.value)
        elif isinstance(target, ast.Attribute):
            target.value = self.visit(target.value)  # evaluated, not accessed
        elif isinstance(target, ast.Subscript):
            target.value = self.visit(target.value)
            target.slice = self.visit(target.slice)
        return node

    def simple(self, expr):
        """Whether expr may be evaluated twice, unseen: a constant, or a name
        that no hook reads (nothing else runs between the two reads)."""
        return isinstance(expr, ast.Constant) or (isinstance(expr, ast.Name) and not self.is_global(expr.id))

    def evaluated_once(self, expr, temps, visit):
        """(first, again): expr visited, and the expression that gives its
        value again later, through a temporary the first one binds."""
        name = self.temp()
        temps.append(name)
        return _located(ast.NamedExpr(target=_store(name), value=visit(expr)), expr), _load(name)

    def visit_AugAssign(self, node):
        if not self.active:
            return self.generic_visit(node)
        target = node.target
        site = self.site(target)
        op = _load("_ploom_" + INPLACE[type(node.op)])
        temps = []
        if isinstance(target, ast.Name):
            # x op= v: x = _ploom_io(op, x, v, s), so that an in-place change
            # of the object x names is seen
            if self.is_global(target.id):
                name = ast.Constant(self.mangle(target.id))
                old = _call(HOOKS["getglobal"], [_load(GLOBALS), name, site])
                new = _call(HOOKS["inplace"], [op, old, self.visit(node.value), site])
                stmt = ast.Expr(_call(HOOKS["setglobal"], [_load(GLOBALS), name, new, site]))
            else:
                new = _call(HOOKS["inplace"], [op, _load(target.id), self.visit(node.value), site])
                stmt = ast.Assign(targets=[_store(target.id)], value=new)
        elif isinstance(target, ast.Attribute):
            # X.a op= v: X, load, v, op, store
            if self.simple(target.value):
                first, again = self.visit(target.value), _located(copy.copy(target.value), target.value)
            else:
                first, again = self.evaluated_once(target.value, temps, self.visit)
            name = ast.Constant(self.mangle(target.attr))
            old = _call(HOOKS["getattr"], [again, name, site])
            new = _call(HOOKS["inplace"], [op, old, self.visit(node.value), site])
            stmt = ast.Expr(_call(HOOKS["setattr"], [first, name, new, site]))
        else:
            # X[k] op= v: X, k, load, v, op, store; X may be read twice only
            # when k cannot run code between the two reads
            if self.simple(target.value) and self.simple(target.slice):
                obj, obj_again = self.visit(target.value), _located(copy.copy(target.value), target.value)
            else:
                obj, obj_again = self.evaluated_once(target.value, temps, self.visit)
            if self.simple(target.slice):
                key, key_again = target.slice, _located(copy.copy(target.slice), target.slice)
            else:
                key, key_again = self.evaluated_once(target.slice, temps, self.key)
            old = _call(HOOKS["getitem"], [obj_again, key_again, site])
            new = _call(HOOKS["inplace"], [op, old, self.visit(node.value), site])
            stmt = ast.Expr(_call(HOOKS["setitem"], [obj, key, new, site]))
        return [_located(stmt, node), *self.forget(temps, node)]

    def visit_Delete(self, node):
        if not self.active:
            return self.generic_visit(node)
        stmts = []

        def delete(target):
            if isinstance(target, ast.Tuple | ast.List):
                for elt in target.elts:
                    delete(elt)
            elif isinstance(target, ast.Name):
                if self.is_global(target.id):
                    call = _call(HOOKS["delglobal"], [_load(GLOBALS), ast.Constant(self.mangle(target.id)),
                                                      self.site(target)])
                    stmts.append(_located(ast.Expr(call), target))
                else:
                    stmts.append(_located(ast.Delete(targets=[target]), target))
            elif isinstance(target, ast.Attribute):
                site = self.site(target)
                call = _call(HOOKS["delattr"], [self.visit(target.value), ast.Constant(self.mangle(target.attr)),
                                                site])
                stmts.append(_located(ast.Expr(call), target))
            else:
                site = self.site(target)
                call = _call(HOOKS["delitem"], [self.visit(target.value), self.key(target.slice), site])
                stmts.append(_located(ast.Expr(call), target))

        for target in node.targets:
            delete(target)
        return stmts

    def visit_For(self, node):
        if not self.active:
            return self.generic_visit(node)
        if isinstance(node, ast.For):
            node.iter = self.iterate(node.iter)
        else:
            node.iter = self.visit(node.iter)
        stores = []
        if not self.plain_target(node.target):
            target, stores = self.stored_through(node.target, node)
            node.target = _located(target, node.target)
        node.body = stores + self.visit_list(node.body)
        node.orelse = self.visit_list(node.orelse)
        return node

    visit_AsyncFor = visit_For

    def visit_With(self, node):
        if not self.active:
            return self.generic_visit(node)
        items = []
        for i, item in enumerate(node.items):
            item.context_expr = self.visit(item.context_expr)
            items.append(item)
            if item.optional_vars is None or self.plain_target(item.optional_vars):
                continue
            # with a as X.y, b: X.y is stored before b is entered, so the
            # items after this one move into a with statement of their own
            target, stores = self.stored_through(item.optional_vars, node)
            item.optional_vars = _located(target, item.optional_vars)
            rest = node.items[i + 1:]
            if rest:
                inner = _located(type(node)(items=rest, body=node.body, type_comment=None), rest[0].context_expr)
                body = [self.visit(inner)]
            else:
                body = self.visit_list(node.body)
            node.items = items
            node.body = stores + body
            return node
        node.body = self.visit_list(node.body)
        return node

    visit_AsyncWith = visit_With

    def visit_If(self, node):
        if not self.active:
            return self.generic_visit(node)
        node.test = self.test(node.test)
        node.body = self.visit_list(node.body)
        node.orelse = self.visit_list(node.orelse)
        return node

    visit_While = visit_If

    def visit_Assert(self, node):
        if not self.active:
            return self.generic_visit(node)
        node.test = self.test(node.test)
        if node.msg is not None:
            node.msg = self.visit(node.msg)
        return node

    def visit_Match(self, node):
        if not self.active:
            return self.generic_visit(node)
        node.subject = self.read(node.subject)
        for case in node.cases:
            # patterns stay: they may hold only names, attributes and literals
            if case.guard is not None:
                case.guard = self.test(case.guard)
            case.body = self.visit_list(case.body)
        return node


# --- rewriting a module ------------------------------------------------------

def _decode(source):
    if isinstance(source, str):
        return source
    return importlib.util.decode_source(source)


# Python frames the rewriter may stack per level of the tree, at most (an
# ``elif`` takes three: visit, visit_If, generic_visit), and those it may
# stack above a level of its own
_FRAMES_PER_LEVEL = 4
_FRAMES_SPARE = 200


def _depth(tree):
    """The depth of tree, found without recursion."""
    deepest, pending = 0, [(tree, 1)]
    while pending:
        node, depth = pending.pop()
        deepest = max(deepest, depth)
        pending.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _frames_in_use():
    frame, n = sys._getframe(), 0
    while frame is not None:
        frame, n = frame.f_back, n + 1
    return n


def rewrite(source, filename="<unknown>"):
    """The module's AST rewritten, with the sites it found: ``(tree, sites,
    constants)``, the site constants numbered from 0.  For tests and for
    reading what a module becomes (``ast.unparse(tree)``).

    The rewriter recurses along the tree: whatever depth CPython's parser
    accepts (thousands of ``elif`` branches or terms of a sum), the
    recursion limit is raised for the time of the rewrite to what that
    depth needs.  Python calls between Python functions take no C stack,
    so a higher limit here risks no crash."""
    tree = ast.parse(source, filename)
    text = _decode(source)
    needed = _frames_in_use() + _FRAMES_PER_LEVEL * _depth(tree) + _FRAMES_SPARE
    limit = sys.getrecursionlimit()
    if needed > limit:
        sys.setrecursionlimit(needed)
    try:
        rewriter = _Rewriter(text, _assigned_globals(tree, text))
        tree = rewriter.visit(tree)
    finally:
        if needed > limit and sys.getrecursionlimit() == needed:
            sys.setrecursionlimit(limit)
    return tree, tuple(rewriter.sites), rewriter.site_constants
