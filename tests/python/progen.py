"""Random small ploom scenarios, one per integer seed, for the differential
test of partial-order reduction against plain DFS (test_differential.py).

    python tests/python/progen.py SEED              prints the program of SEED
    python tests/python/progen.py --model SEED      prints what the model expects of it
    python tests/python/progen.py --survey START N  explores seeds START..START+N-1
                                                    with DFS (-k) and prints statistics

A program is a module with one scenario function, ``scenario``: it makes 1-3
SharedCells (all 0) and 1-2 Locks, defines 2-4 thread functions, starts
the threads in order (now and then joining one, or writing a cell, between
the starts), joins some more, and always ends by raising

    RuntimeError("final c0=... c1=...")

so that the outcome summary of every schedule that gets that far is the
state of the cells when main read them; a failed assertion and a deadlock
show as themselves.  The same seed gives the same source on every machine
and Python (random.Random(seed), nothing else).

What a thread may do, and the rules that keep every program valid:

- read a cell into a local; write a cell: a constant, the thread's own
  number (its argument ``k``), or a local + 1 (only a local the thread
  surely bound: one read before, in the same block or an enclosing one);
- ``with lock:`` blocks and explicit ``acquire()`` ... ``release()`` pairs,
  properly nested, never a blocking acquire of a lock the thread already
  holds (that deadlocks every schedule, which says nothing);
  ``if lock.acquire(blocking=False): ... lock.release()``, sometimes with
  an ``else:``, now and then of a lock the thread holds (it returns False);
  the same with ``acquire(timeout=3600)``, which ploom runs alike (always
  enabled, False on a held lock) but records as a timed acquire;
- ``ploom.yield_now()``; ``lock.locked()``; ``assert`` over a cell or a
  local, with a message naming the thread and the place (``t2.1``: thread
  2's first assertion);
- ``is_alive()`` and ``join()`` of a thread with a lower number: main
  starts threads in order, so that one has been started before this one;
  some joins are ``join(timeout=3600)``, which ploom runs as a timed join
  (always enabled, returns whether or not the thread has ended).

Sometimes two threads take both locks in opposite orders (the ABBA
deadlock), and a thread may join another while it holds a lock that one
needs.  Threads have 2-6 operations when there are 2 of them, 1-3 when 3
and 1-2 when 4 (OPS_PER_THREAD), the two of an ABBA pair more: every
thread multiplies the schedules that plain DFS must run.

model() runs a program abstractly under the rules of DESIGN.md
("Exploration semantics"): every schedule, and its outcome summary as
ploom-explore writes it.  So the exact number of DFS schedules and of
each outcome are known without running ploom, and the generator uses them:

- a draw with more than MAX_SCHEDULES[threads] schedules is drawn again
  from the same random stream, with the same thread count;
- each assertion's condition is chosen once the model has seen the values
  it compares (a first run where none fails): it fails for some of them
  and holds for the others, so that it fails in some schedules only;
- a program whose every schedule ends the same way is drawn again, but
  for SAME_OUTCOME_KEPT of them.

The tests compare ploom's DFS against the model too.  The model follows
CPython where it matters: an assertion that fails inside ``with lock:``
releases the lock on its way out, a step of its own, before the
exception ends the schedule.
"""

import collections
import concurrent.futures
import functools
import json
import os
import pathlib
import random
import subprocess
import sys
import tempfile
import time

MAX_OPS = 12  # ploom operations over all threads, longest paths
# DFS schedules, as model() counts them, by thread count
MAX_SCHEDULES = {2: 300, 3: 600, 4: 1000}
RECORD_FACTOR = 4
SAME_OUTCOME_KEPT = 0.2  # the share of programs with one outcome kept
# thread counts and their weights: every thread multiplies the schedules,
# so the programs with 4 are short and mostly run one after another
THREADS = (2, 3, 4)
THREAD_WEIGHTS = (50, 35, 15)
OPS_PER_THREAD = {2: (2, 6), 3: (1, 3), 4: (1, 2)}

FINAL = "builtins.RuntimeError: final "


# --- drawing a program ---------------------------------------------------------
#
# A statement is a tuple (kind, ...), a body a list of them:
#   ("read", cell, var)            var = c.read()
#   ("write", cell, expr)          c.write(expr); expr ("const", n), ("k",), ("inc", var)
#   ("with"|"acquire", lock, body) with l: body / l.acquire() body l.release()
#   ("try", lock, body, orelse, timed)
#                                  if l.acquire(blocking=False): body l.release() else: orelse,
#                                  or l.acquire(timeout=3600) when timed
#   ("locked", lock, body)         if l.locked(): body
#   ("write_locked", cell, lock)   c.write(10 + l.locked())
#   ("alive", thread, body)        if thN.is_alive(): body
#   ("write_alive", cell, thread)  c.write(20 + thN.is_alive())
#   ("join", thread, timed)        thN.join(), or thN.join(timeout=3600) when timed;
#                                  main's joins are ("join", thread), never timed
#   ("yield",)                     ploom.yield_now()
#   ("assert_cell", cell, where)   assert c.read() OP N, "WHERE: not cC OP N"
#   ("assert_local", var, where)   assert var OP N, f"WHERE: var={var}"
# where names the assertion ("t2.1": thread 2's first); conditions[where] is
# its (OP, N), chosen once the model has seen the values it would compare.


class _Program:
    def __init__(self, rng, nthreads):
        self.rng = rng
        self.nthreads = nthreads
        self.ncells = rng.choice((1, 2, 2, 3))
        self.nlocks = rng.choice((1, 2, 2))
        self.bodies = [[] for _ in range(nthreads)]
        self.nlocals = [0] * nthreads
        self.conditions = {}
        self.main = []  # ("start", n), ("join", n), ("write", cell, expr)

    def cell(self):
        return self.rng.randrange(self.ncells)

    def lock(self, exclude=()):
        free = [i for i in range(self.nlocks) if i not in exclude]
        return self.rng.choice(free) if free else None

    def value(self, bound):
        r = self.rng.random()
        if bound and r < 0.4:
            return ("inc", self.rng.choice(bound))
        if r < 0.7:
            return ("k",)
        return ("const", self.rng.randint(1, 3))

    def assertion(self, number, bound):
        where = f"t{number}.{sum(w.startswith(f't{number}.') for w in self.conditions) + 1}"
        self.conditions[where] = None
        if bound and self.rng.random() < 0.5:
            return ("assert_local", self.rng.choice(bound), where), 0
        return ("assert_cell", self.cell(), where), 1

    def choose_conditions(self, seen):
        """Gives each assertion a condition that fails for some of the
        values it is seen to compare (seen: {where: values}) and holds for
        the others; one that only ever sees one value holds."""
        rng = self.rng
        for where in self.conditions:
            values = sorted(seen.get(where, {0}))
            if len(values) == 1:
                self.conditions[where] = ("<=", values[0])
                continue
            op = rng.choice(("!=", "!=", "<", "<="))
            if op == "!=":
                limit = rng.choice(values)
            elif op == "<":
                limit = rng.choice(values[1:])
            else:
                limit = rng.choice(values[:-1])
            self.conditions[where] = (op, limit)

    def statement(self, number, held, bound, budget, depth):
        """One statement of thread NUMBER holding the locks `held`, with the
        locals `bound` surely bound (a read appends to it), costing at most
        `budget` operations on its longest path: (statement, cost)."""
        rng = self.rng
        kinds = ["read", "read", "write", "write", "write", "assert", "yield"]
        if depth < 2 and budget >= 2:
            kinds += ["try", "locked"]
            if budget >= 3:
                kinds += ["with", "with", "acquire", "try"]
        if number > 1:
            kinds += ["join", "alive"]
        kind = rng.choice(kinds)
        inner = list(bound)  # what a nested body binds does not outlive it

        if kind in ("with", "acquire"):
            lock = self.lock(exclude=held)
            if lock is not None:
                body, cost = self.body(number, held | {lock}, inner, budget - 2, depth + 1, 1, 2)
                return (kind, lock, body), 2 + cost
            kind = "try"
        if kind == "try":
            # mostly a lock the thread does not hold (of one it holds: False)
            lock = self.lock(exclude=held if rng.random() < 0.8 else ())
            lock = self.lock() if lock is None else lock
            body, cost = self.body(number, held | {lock}, inner, budget - 2, depth + 1, 0, 2)
            orelse, ocost = [], 0
            if rng.random() < 0.3:
                orelse, ocost = self.body(number, held, list(bound), budget - 1, depth + 1, 1, 1)
            # timed or not by the body's length, not by a draw of its own,
            # so that each seed keeps the program it had before timed acquires
            timed = len(body) % 2 == 1
            return ("try", lock, body, orelse, timed), max(2 + cost, 1 + ocost)
        if kind == "locked":
            if rng.random() < 0.5:
                return ("write_locked", self.cell(), self.lock()), 2
            body, cost = self.body(number, held, inner, budget - 1, depth + 1, 1, 1)
            return ("locked", self.lock(), body), 1 + cost
        if kind == "alive":
            other = rng.randint(1, number - 1)
            if budget < 2:
                return ("join", other, _timed_join(other, budget)), 1
            if rng.random() < 0.5:
                return ("write_alive", self.cell(), other), 2
            body, cost = self.body(number, held, inner, budget - 1, depth + 1, 1, 1)
            return ("alive", other, body), 1 + cost
        if kind == "join":
            other = rng.randint(1, number - 1)
            return ("join", other, _timed_join(other, budget)), 1
        if kind == "assert":
            return self.assertion(number, bound)
        if kind == "yield":
            return ("yield",), 1
        if kind == "write" or bound and rng.random() < 0.3:
            return ("write", self.cell(), self.value(bound)), 1
        self.nlocals[number - 1] += 1
        var = f"v{self.nlocals[number - 1]}"
        bound.append(var)
        return ("read", self.cell(), var), 1

    def body(self, number, held, bound, budget, depth, min_len, max_len):
        """Statements costing at most budget in all: (body, cost)."""
        body, cost = [], 0
        length = self.rng.randint(min_len, max_len)
        while len(body) < length and cost < budget:
            stmt, c = self.statement(number, held, bound, budget - cost, depth)
            if cost + c > budget:
                break
            body.append(stmt)
            cost += c
        return body, cost

    def abba(self):
        """Both locks in opposite orders, in two threads."""
        a, b = self.rng.sample(range(self.nthreads), 2)
        for index, (outer, inner) in ((a, (0, 1)), (b, (1, 0))):
            core = [("write", self.cell(), ("k",))] if self.rng.random() < 0.5 else []
            style = self.rng.choice(("with", "with", "acquire"))
            self.bodies[index].append((style, outer, [("with", inner, core)]))

    def draw(self):
        rng = self.rng
        if self.nlocks == 2 and rng.random() < 0.6:
            self.abba()
        least, most = OPS_PER_THREAD[self.nthreads]
        for i in range(self.nthreads):
            have = ops(self.bodies[i])
            if have >= most:
                continue
            want = rng.randint(max(1, least - have), most - have)
            body, _ = self.body(i + 1, set(), [], most - have, 0, want, want)
            if self.bodies[i] and rng.random() < 0.5:
                self.bodies[i] = body + self.bodies[i]
            else:
                self.bodies[i] += body

        # main: the starts in order, now and then a write or the join of a
        # thread started earlier in between, the other joins at the end
        running = []
        for n in range(1, self.nthreads + 1):
            self.main.append(("start", n))
            running.append(n)
            if rng.random() < 0.2:
                self.main.append(("write", self.cell(), ("const", rng.randint(4, 5))))
            if n < self.nthreads and len(running) > 1 and rng.random() < 0.3 * (self.nthreads - 1):
                joined = rng.choice(running[:-1])
                running.remove(joined)
                self.main.append(("join", joined))
        rng.shuffle(running)
        self.main += [("join", n) for n in running if rng.random() < 0.6]

    # --- source -------------------------------------------------------------

    def render(self, name):
        lines = [
            f'"""Generated by tests/python/progen.py: {_plural(self.nthreads, "thread")}, '
            f'{_plural(self.ncells, "cell")}, {_plural(self.nlocks, "lock")}."""',
            "",
            "import traceback",
            "",
            "import ploom",
            "",
            "# the first traceback formatted, once in the worker and not in each",
            "# schedule's child (it imports ast and reads this file: about 3 ms)",
            "try:",
            '    raise RuntimeError("warm-up")',
            "except RuntimeError as exc:",
            "    traceback.format_exception(exc)",
            "",
            "",
            f"def {name}():",
        ]
        for i in range(self.ncells):
            lines.append(f"    c{i} = ploom.SharedCell(0)")
        for i in range(self.nlocks):
            lines.append(f"    l{i} = ploom.Lock()")
        for i, body in enumerate(self.bodies):
            lines += ["", f"    def t{i + 1}(k):"]
            _render(body, lines, 2, self.conditions)
        lines.append("")
        for n in range(1, self.nthreads + 1):
            lines.append(f"    th{n} = ploom.Thread(target=t{n}, args=({n},))")
        for stmt in self.main:
            if stmt[0] == "start":
                lines.append(f"    th{stmt[1]}.start()")
            else:
                _render([stmt], lines, 1, self.conditions)
        final = " ".join(f"c{i}={{c{i}.read()}}" for i in range(self.ncells))
        lines.append(f'    raise RuntimeError(f"final {final}")')
        return "\n".join(lines) + "\n"


def _timed_join(other, budget):
    """Whether a thread's join of thread `other` is timed: from numbers
    already drawn, not a draw of its own, so that each seed keeps the
    program it had before timed joins."""
    return (other + budget) % 2 == 1


def _plural(n, word):
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _expr(e):
    if e[0] == "const":
        return str(e[1])
    if e[0] == "k":
        return "k"
    return f"{e[1]} + 1"


def _render(body, lines, level, conditions):
    pad = "    " * level
    if not body:
        lines.append(f"{pad}pass")
    for s in body:
        kind = s[0]
        if kind == "read":
            lines.append(f"{pad}{s[2]} = c{s[1]}.read()")
        elif kind == "write":
            lines.append(f"{pad}c{s[1]}.write({_expr(s[2])})")
        elif kind == "yield":
            lines.append(f"{pad}ploom.yield_now()")
        elif kind == "with":
            lines.append(f"{pad}with l{s[1]}:")
            _render(s[2], lines, level + 1, conditions)
        elif kind == "acquire":
            lines.append(f"{pad}l{s[1]}.acquire()")
            if s[2]:
                _render(s[2], lines, level, conditions)
            lines.append(f"{pad}l{s[1]}.release()")
        elif kind == "try":
            how = "timeout=3600" if s[4] else "blocking=False"
            lines.append(f"{pad}if l{s[1]}.acquire({how}):")
            if s[2]:
                _render(s[2], lines, level + 1, conditions)
            lines.append(f"{pad}    l{s[1]}.release()")
            if s[3]:
                lines.append(f"{pad}else:")
                _render(s[3], lines, level + 1, conditions)
        elif kind == "locked":
            lines.append(f"{pad}if l{s[1]}.locked():")
            _render(s[2], lines, level + 1, conditions)
        elif kind == "write_locked":
            lines.append(f"{pad}c{s[1]}.write(10 + l{s[2]}.locked())")
        elif kind == "alive":
            lines.append(f"{pad}if th{s[1]}.is_alive():")
            _render(s[2], lines, level + 1, conditions)
        elif kind == "write_alive":
            lines.append(f"{pad}c{s[1]}.write(20 + th{s[2]}.is_alive())")
        elif kind == "join":
            lines.append(f"{pad}th{s[1]}.join({'timeout=3600' if s[2:] and s[2] else ''})")
        elif kind == "assert_cell":
            _, cell, where = s
            op, limit = conditions[where]
            lines.append(f'{pad}assert c{cell}.read() {op} {limit}, "{where}: not c{cell} {op} {limit}"')
        elif kind == "assert_local":
            _, var, where = s
            op, limit = conditions[where]
            lines.append(f'{pad}assert {var} {op} {limit}, f"{where}: {var}={{{var}}}"')
        else:
            raise AssertionError(f"unknown statement {s!r}")


def ops(body):
    """Ploom operations of a body on its longest path."""
    n = 0
    for s in body:
        kind = s[0]
        if kind in ("with", "acquire"):
            n += 2 + ops(s[2])
        elif kind == "try":
            n += max(2 + ops(s[2]), 1 + ops(s[3]))
        elif kind in ("locked", "alive"):
            n += 1 + ops(s[2])
        elif kind in ("write_locked", "write_alive"):
            n += 2
        elif kind != "assert_local":
            n += 1
    return n


# --- the model -------------------------------------------------------------------
#
# Each task's code compiled to a list of instructions; all are ploom
# operations (a step each) but ("assert_local", ...) and ("goto", pc),
# which run inside the step before them.  Branches jump when not taken.

_LOCAL = ("assert_local", "goto", "raise_final")
_COMPARE = {"!=": lambda a, b: a != b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b}


def _compile(body, out, withs=()):
    """Appends body's instructions to out.  withs: the locks of the
    enclosing with statements, innermost last, which an assertion that
    fails releases (each release a step) on the way out."""
    for s in body:
        kind = s[0]
        if kind in ("with", "acquire"):
            out.append(("acquire", s[1]))
            _compile(s[2], out, withs + (s[1],) if kind == "with" else withs)
            out.append(("release", s[1]))
        elif kind == "try":
            branch = len(out)
            out.append(None)
            _compile(s[2], out, withs)
            out.append(("release", s[1]))
            if s[3]:
                skip = len(out)
                out.append(None)
                out[branch] = ("try", s[1], len(out))
                _compile(s[3], out, withs)
                out[skip] = ("goto", len(out))
            else:
                out[branch] = ("try", s[1], len(out))
        elif kind in ("locked", "alive"):
            branch = len(out)
            out.append(None)
            _compile(s[2], out, withs)
            out[branch] = (kind, s[1], len(out))
        elif kind == "write_locked":
            out += [("locked", s[2], None), ("write", s[1], ("tmp", 10))]
        elif kind == "write_alive":
            out += [("alive", s[2], None), ("write", s[1], ("tmp", 20))]
        elif kind in ("assert_cell", "assert_local"):
            out.append((*s, withs))
        else:
            out.append(s)
    return out


class _TooBig(Exception):
    pass


class _Model:
    """Every schedule of a program, as DFS explores it: leaves() counts them
    by outcome summary, or raises _TooBig once it sees that there are more
    than max_schedules."""

    def __init__(self, prog, max_schedules=None, record=False):
        self.max_schedules = max_schedules
        self.memo = {}
        # record: no assertion fails, seen gets the values each compares
        self.conditions = None if record else prog.conditions
        self.seen = collections.defaultdict(set)
        self.ncells = prog.ncells
        main = list(prog.main) + [("read", c, f"f{c}") for c in range(prog.ncells)]
        self.code = [main + [("raise_final",)]]
        self.code += [_compile(body, []) for body in prog.bodies]

    def leaves(self):
        ntasks = len(self.code)
        # pc per task: None not started, -1 at its begin point, len(code) finished
        start = ((0,) + (None,) * (ntasks - 1), ((),) * ntasks, (0,) * self.ncells, (-1, -1))
        return self._leaves(start)

    def _finished(self, pcs, task):
        return pcs[task] == len(self.code[task])

    def _enabled(self, state, task):
        pcs, _, _, holders = state
        pc = pcs[task]
        if pc is None or self._finished(pcs, task):
            return False
        if pc == -1 or isinstance(pc, tuple):
            return True
        ins = self.code[task][pc]
        if ins[0] == "acquire":
            return holders[ins[1]] == -1
        if ins[0] == "join":
            # a timed join runs whether the thread has ended or not
            return bool(ins[2:] and ins[2]) or self._finished(pcs, ins[1])
        return True

    def _leaves(self, state):
        total = self.memo.get(state)
        if total is not None:
            return total
        enabled = [t for t in range(len(self.code)) if self._enabled(state, t)]
        if not enabled:
            total = self.memo[state] = collections.Counter({self._deadlock(state): 1})
            return total
        total = self.memo[state] = collections.Counter()
        for task in enabled:
            after = self._step(state, task)
            if isinstance(after, str):
                total[after] += 1
            else:
                total += self._leaves(after)
        # every schedule below a state is one of the whole program's
        if self.max_schedules and total.total() > self.max_schedules:
            raise _TooBig
        return total

    def _deadlock(self, state):
        pcs, _, _, holders = state
        waits = []
        for task, pc in enumerate(pcs):
            if pc is None or self._finished(pcs, task):
                continue
            ins = self.code[task][pc]
            if ins[0] == "acquire":
                holder = holders[ins[1]]
                itself = " itself; no other task can release it" if holder == task else ""
                waits.append(f"task {task} waits to acquire lock#{ins[1]} held by task {holder}{itself}")
            else:
                waits.append(f"task {task} waits to join thread#{ins[1]}")
        return "deadlock: " + "; ".join(waits)

    def _step(self, state, task):
        """The state after task's step, or the outcome summary that ends
        the schedule there."""
        pcs, locs, cells, holders = state
        pcs, cells, holders = list(pcs), list(cells), list(holders)
        local = dict(locs[task])
        code = self.code[task]
        pc = pcs[task]
        if isinstance(pc, tuple):
            return self._unwind(state, task, *pc)
        if pc == -1:
            pc = 0
        else:
            ins = code[pc]
            kind = ins[0]
            pc += 1
            if kind == "read":
                local[ins[2]] = cells[ins[1]]
            elif kind == "write":
                e = ins[2]
                if e[0] == "const":
                    cells[ins[1]] = e[1]
                elif e[0] == "k":
                    cells[ins[1]] = task
                elif e[0] == "inc":
                    cells[ins[1]] = local[e[1]] + 1
                else:
                    cells[ins[1]] = e[1] + local["tmp"]
            elif kind == "acquire":
                holders[ins[1]] = task
            elif kind == "release":
                assert holders[ins[1]] == task
                holders[ins[1]] = -1
            elif kind == "try":
                if holders[ins[1]] == -1:
                    holders[ins[1]] = task
                else:
                    pc = ins[2]
            elif kind == "locked":
                if ins[2] is None:
                    local["tmp"] = int(holders[ins[1]] != -1)
                elif holders[ins[1]] == -1:
                    pc = ins[2]
            elif kind == "alive":
                alive = not self._finished(pcs, ins[1])
                if ins[2] is None:
                    local["tmp"] = int(alive)
                elif not alive:
                    pc = ins[2]
            elif kind == "start":
                pcs[ins[1]] = -1
            elif kind == "assert_cell":
                _, cell, where, withs = ins
                failed = self._fails(where, cells[cell])
                if failed:
                    summary = f"builtins.AssertionError: {where}: not c{cell} {failed[0]} {failed[1]}"
                    return self._unwind(
                        (tuple(pcs), locs, tuple(cells), tuple(holders)), task, summary, withs, done=False
                    )
            elif kind not in ("join", "yield"):
                raise AssertionError(f"unknown instruction {ins!r}")
        # then the code up to the next operation, in the same step
        while pc < len(code) and code[pc][0] in _LOCAL:
            ins = code[pc]
            pc += 1
            if ins[0] == "goto":
                pc = ins[1]
            elif ins[0] == "assert_local":
                _, var, where, withs = ins
                if self._fails(where, local[var]):
                    summary = f"builtins.AssertionError: {where}: {var}={local[var]}"
                    return self._unwind(
                        (tuple(pcs), locs, tuple(cells), tuple(holders)), task, summary, withs, done=False
                    )
            else:
                return FINAL + " ".join(f"c{c}={local[f'f{c}']}" for c in range(self.ncells))
        pcs[task] = pc
        locs = locs[:task] + (tuple(sorted(local.items())),) + locs[task + 1 :]
        return tuple(pcs), locs, tuple(cells), tuple(holders)

    def _fails(self, where, value):
        """The (op, limit) of the assertion where when it fails on value."""
        if self.conditions is None:
            self.seen[where].add(value)
            return None
        op, limit = self.conditions[where]
        return None if _COMPARE[op](value, limit) else (op, limit)

    def _unwind(self, state, task, summary, withs, done=True):
        """A failed assertion on its way out of the thread: each enclosing
        with statement releases its lock, a step each (done: the step that
        releases the innermost); then the schedule ends with it."""
        pcs, locs, cells, holders = state
        if done:
            holders = holders[: withs[-1]] + (-1,) + holders[withs[-1] + 1 :]
            withs = withs[:-1]
        if not withs:
            return summary
        pcs = pcs[:task] + ((summary, withs),) + pcs[task + 1 :]
        return pcs, locs, cells, holders


# --- seeds -----------------------------------------------------------------------


@functools.cache
def _draw(seed):
    rng = random.Random(seed)
    nthreads = rng.choices(THREADS, THREAD_WEIGHTS)[0]
    while True:
        prog = _Program(rng, nthreads)
        prog.draw()
        if sum(ops(b) for b in prog.bodies) > MAX_OPS:
            continue
        # first with no assertion failing, to see the values they compare;
        # failing ones cut schedules short, so that run may have more
        try:
            recorder = _Model(prog, max_schedules=RECORD_FACTOR * MAX_SCHEDULES[nthreads], record=True)
            recorder.leaves()
        except _TooBig:
            continue
        prog.choose_conditions(recorder.seen)
        try:
            leaves = _Model(prog, max_schedules=MAX_SCHEDULES[nthreads]).leaves()
        except _TooBig:
            continue
        # a program that always ends the same way tests little
        if len(leaves) == 1 and rng.random() >= SAME_OUTCOME_KEPT:
            continue
        return prog, leaves


def program(seed, name="scenario"):
    """The source of SEED's program, whose scenario function is NAME."""
    return _draw(seed)[0].render(name)


def model(seed):
    """What DFS finds in SEED's program: {outcome summary: schedules}."""
    return dict(_draw(seed)[1])


def describe(seed):
    """What SEED's program is made of: threads, cells, locks, operations
    (longest paths) and schedules (the model's count)."""
    prog, leaves = _draw(seed)
    return {
        "threads": prog.nthreads,
        "cells": prog.ncells,
        "locks": prog.nlocks,
        "ops": sum(ops(b) for b in prog.bodies),
        "schedules": sum(leaves.values()),
    }


def write_program(seed, folder, name="scenario"):
    """Writes SEED's program to FOLDER/prog_SEED.py; returns the target
    ``path:NAME`` for ploom-explore."""
    path = pathlib.Path(folder) / f"prog_{seed}.py"
    # whole or not at all: the differential test explores a seed with both
    # reductions at once, each writing the same program, and a worker must
    # never import it half-written
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=folder, suffix=".tmp", delete=False) as f:
        f.write(program(seed, name))
    os.replace(f.name, path)
    return f"{path}:{name}"


# --- running ploom-explore ----------------------------------------------------------


def explore(target, trace_dir, *options, limit=None, env=None):
    """Runs ``ploom-explore -k -q --no-minimize`` on target with options
    (and --max-schedules=limit), in the environment with env added; returns
    (exit status, statistics or None, stderr)."""
    # here, so that printing a program needs no ploom on sys.path
    from ploom._utility import find_utility

    argv = [find_utility("ploom-explore"), "-k", "-q", "--no-minimize", f"--trace-dir={trace_dir}"]
    if limit:
        argv.append(f"--max-schedules={limit}")
    result = subprocess.run([*argv, *options, target], capture_output=True, text=True, timeout=600,
                            env={**os.environ, **env} if env else None)
    try:
        stats = json.loads(result.stdout)
    except ValueError:
        stats = None
    return result.returncode, stats, result.stderr


def survey(start, count):
    """Explores seeds start..start+count-1 with DFS and prints what they are
    like (the model's figures, and ploom's where they differ)."""

    def one(seed):
        with tempfile.TemporaryDirectory(prefix="progen-") as tmp:
            target = write_program(seed, tmp)
            t0 = time.monotonic()
            rc, stats, stderr = explore(target, os.path.join(tmp, "traces"), "--reduction=none")
            return seed, rc, stats, stderr, time.monotonic() - t0

    rows, wrong = [], []
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        for seed, rc, stats, stderr, seconds in pool.map(one, range(start, start + count)):
            if stats is None or rc not in (0, 1):
                print(f"seed {seed}: ploom-explore exited {rc}: {stderr.strip()}", file=sys.stderr)
                return 1
            expected = model(seed)
            if stats["schedules"] != sum(expected.values()):
                wrong.append(f"seed {seed}: {stats['schedules']} schedules, the model counts {sum(expected.values())}")
            if "outcomes" in stats and {o["summary"]: o["schedules"] for o in stats["outcomes"]} != expected:
                wrong.append(f"seed {seed}: ploom's outcomes {stats['outcomes']}, the model's {expected}")
            rows.append((stats["schedules"], seconds, describe(seed)["threads"], expected))
    n = len(rows)
    schedules = sorted(r[0] for r in rows)
    seconds = sorted(r[1] for r in rows)
    print(f"programs:          {n} (seeds {start}..{start + count - 1})")
    print(
        f"DFS schedules:     mean {sum(schedules) / n:.0f}, median {schedules[n // 2]}, "
        f"90th percentile {schedules[n * 9 // 10]}, max {schedules[-1]}"
    )
    print(
        f"seconds each:      mean {sum(seconds) / n:.3f}, median {seconds[n // 2]:.3f}, "
        f"max {seconds[-1]:.3f} (ploom-explore -k, {os.cpu_count()} at once)"
    )
    print("threads:           " + ", ".join(f"{k}: {sum(r[2] == k for r in rows) / n:.0%}" for k in THREADS))

    def share(pred):
        return sum(any(pred(s) for s in r[3]) for r in rows) / n

    distinct = [len(r[3]) for r in rows]
    print(f"distinct outcomes: mean {sum(distinct) / n:.1f}, max {max(distinct)}")
    print(f"some failure:      {share(lambda s: not s.startswith(FINAL)):.0%} (an outcome other than the final raise)")
    print(f"assertion failure: {share(lambda s: s.startswith('builtins.AssertionError')):.0%}")
    print(f"deadlock:          {share(lambda s: s.startswith('deadlock')):.0%}")
    print(f"ploom and model:   {'agree' if not wrong else f'DISAGREE on {len(wrong)}'}")
    for line in wrong:
        print("  " + line)
    return 1 if wrong else 0


def main(argv):
    args = argv[1:]
    if len(args) == 1 and args[0].isdigit():
        sys.stdout.write(program(int(args[0])))
        return 0
    if len(args) == 2 and args[0] == "--model" and args[1].isdigit():
        for summary, n in sorted(model(int(args[1])).items()):
            print(f"{n:6d}  {summary}")
        return 0
    if len(args) == 3 and args[0] == "--survey" and args[1].isdigit() and args[2].isdigit():
        return survey(int(args[1]), int(args[2]))
    print(
        f"usage: {argv[0]} SEED\n       {argv[0]} --model SEED\n       {argv[0]} --survey START COUNT", file=sys.stderr
    )
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
