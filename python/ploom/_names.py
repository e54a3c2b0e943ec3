"""Names for the primitives of ``ploom.threading`` and ``ploom.queue``, after
what they belong to, so that a trace says ``Pool._cond`` where it would say
``lock#3``.

A primitive made without a name takes one from the statement that makes it,
in the innermost frame outside the ploom package (the code under test, not
ploom's own constructors): when that line is, on its own, an assignment to

- ``self.X`` (or ``cls.X``, or any ``NAME.X``): ``Type.X``, after the type of
  the object NAME holds there (the class itself when it holds a class, the
  module's last component when a module);
- a module's global ``X`` (at module level, or under ``global X``):
  ``module.X``, after the module's last component;
- ``X`` in a class body: ``Class.X``.

Anything else (a local variable, a subscript, several targets, a statement
over several lines) gives no name, and the primitive keeps its object name
(``lock#N``).  What a primitive makes for itself is named after it:
``Pool.items.mutex``, ``Pool._cond.waiter`` (see :func:`part`).

The line is read (linecache) and parsed once per code object and line, when
a primitive is made there first; the operations never look.  The name
depends only on the source and the types involved, so it is the same in
every schedule and in a replay.  A name is for a person: traces key their
objects by object name still (``lock#N``), and two objects may share one.
"""

from __future__ import annotations

import ast
import linecache
import os
import sys
import types

_PLOOM_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep

# CPython's code flag of a function's code (its locals are fast locals): a
# code object without it at module level or in a class body keeps its
# names in a dict
_CO_NEWLOCALS = 0x2

# what _target() found at (code, line): None, or a tuple for _resolve()
_targets: dict[tuple[types.CodeType, int], tuple[str, ...] | None] = {}


def creation_name() -> str | None:
    """The name of a primitive that the caller's caller outside ploom is
    making, after the assignment it makes it in, or None."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PLOOM_DIR):
        frame = frame.f_back
    if frame is None:
        return None
    line = frame.f_lineno
    if line is None:
        return None
    key = (frame.f_code, line)
    try:
        target = _targets[key]
    except KeyError:
        target = _targets[key] = _target(frame.f_code, line)
    return None if target is None else _resolve(frame, target)


def part(owner: str | None, default: str, name: str) -> str:
    """The name of a primitive that owner made for itself: ``owner.name``,
    or ``default.name`` (the owner's class) for an owner without a name."""
    return f"{owner or default}.{name}"


def _target(code: types.CodeType, line: int) -> tuple[str, ...] | None:
    """What the statement on line of code assigns to: ("attr", NAME, X),
    ("global", X), ("class", CLASS, X), or None."""
    text = linecache.getline(code.co_filename, line).strip()
    if not text:
        return None
    try:
        body = ast.parse(text).body
    except (SyntaxError, ValueError):
        return None  # a statement over several lines, or not one at all
    if len(body) != 1:
        return None
    stmt = body[0]
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        target = stmt.target
    else:
        return None
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        return ("attr", target.value.id, target.attr)
    if not isinstance(target, ast.Name):
        return None
    name = target.id
    if code.co_name == "<module>":
        return ("global", name)
    if not code.co_flags & _CO_NEWLOCALS:
        return ("class", code.co_name, name)
    if name in code.co_varnames or name in code.co_cellvars or name in code.co_freevars:
        return None  # a local variable
    return ("global", name)  # under `global name`


def _module_name(frame: types.FrameType) -> str:
    return str(frame.f_globals.get("__name__", "?")).rpartition(".")[2]


def _resolve(frame: types.FrameType, target: tuple[str, ...]) -> str | None:
    if target[0] == "global":
        return f"{_module_name(frame)}.{target[1]}"
    if target[0] == "class":
        return f"{target[1]}.{target[2]}"
    _, base, attr = target
    try:
        owner = frame.f_locals[base]
    except KeyError:
        owner = frame.f_globals.get(base, frame.f_builtins.get(base))
    if owner is None:
        return None
    if isinstance(owner, type):
        kind = owner.__name__
    elif isinstance(owner, types.ModuleType):
        kind = owner.__name__.rpartition(".")[2]
    else:
        kind = type(owner).__name__
    return f"{kind}.{attr}"
