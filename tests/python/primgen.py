"""Random small scenarios over ploom.threading's and ploom.queue's
primitives and over plain state, for test_primitives_differential.py: the
one-step waits (acquire_when) of Condition, Event, Semaphore and the
queues, and dicts, lists and attributes of three tasks or more, held to
plain DFS on programs nobody wrote by hand.

Two families, by seed (FAMILIES):

- primitives: the main thread and one or two threads, each doing one or
  two operations drawn from a menu (all of it, or one theme's: THEMES),
  the main thread one before it starts the second thread and one after: racy increments of SharedCells, Event
  set, clear and waits, Condition notifies and waits (under while, under
  if, timed), Semaphore sections, holds, nonblocking and timed acquires,
  Queue puts and gets (blocking, nowait, timed) and empty(), RLocks taken
  twice, with a timeout or without blocking, Timers that fire or are
  cancelled, clock reads, joins of the first thread (timed) by the second.  The queue may start with an item
  and the semaphore with two units, so that a blocking get or acquire may
  have to move before a nowait one that took what it waits for.  The main
  thread then does what ends the untimed waits drawn (a set, a
  notify_all, a put or a get), which may come too early or be undone by a
  clear: a deadlock is an outcome like any other.
- plain: three or four tasks (the main thread and two or three threads)
  doing one to three operations each on an object's attributes, a list
  and a dict (appends, len, pops, get, item assignment, in-place adds),
  started in turn, then a timed join now and then, then the joins.

After the joins the main thread raises the final state, so two schedules
that end differently have different outcome summaries.  A program is a
module of its own (prim_SEED.py), run as a module target with
--instrument naming it, so that DFS sees its plain state too.

    python tests/python/primgen.py SEED    prints SEED's program
"""

import os
import random
import sys
import tempfile

# name -> the statement's lines; {c} is a cell, {n} a small number
MENU = {
    "increment": ["v = {c}.read()", "{c}.write(v + 1)"],
    "set": ["ev.set()"],
    "clear": ["ev.clear()"],
    "wait": ["ev.wait()", "{c}.write({c}.read() + 10)"],
    "wait_timed": ["{c}.write(int(ev.wait(timeout=1)))"],
    "notify": ["with cond:", "    flag.write(1)", "    cond.notify()"],
    "notify_all": ["with cond:", "    flag.write(1)", "    cond.notify_all()"],
    "wait_while": ["with cond:", "    while not flag.read():", "        cond.wait()", "    {c}.write(2)"],
    "wait_if": ["with cond:", "    if not flag.read():", "        cond.wait()", "    {c}.write(3)"],
    "cond_timed": ["with cond:", "    {c}.write(int(cond.wait(timeout=1)))"],
    "plain_notify": ["with pcond:", "    pcond.notify()"],
    "plain_wait": ["with pcond:", "    pcond.wait()", "    {c}.write(4)"],
    "section": ["with sem:", "    v = {c}.read()", "    {c}.write(v + 1)"],
    "sem_timed": ["if sem.acquire(timeout=1):", "    {c}.write({c}.read() + 1)", "    sem.release()"],
    "sem_hold": ["sem.acquire()", "{c}.write(5)"],
    "sem_try": ["if not sem.acquire(blocking=False):", "    {c}.write(-5)"],
    "put": ["q.put({n})"],
    "put_timed": ["try:", "    q.put({n}, timeout=1)", "except queue.Full:", "    {c}.write(-1)"],
    "put_nowait": ["try:", "    q.put_nowait({n})", "except queue.Full:", "    {c}.write(-4)"],
    "get": ["{c}.write(q.get())"],
    "get_timed": ["try:", "    {c}.write(q.get(timeout=1))", "except queue.Empty:", "    {c}.write(-2)"],
    "get_nowait": ["try:", "    {c}.write(q.get_nowait())", "except queue.Empty:", "    {c}.write(-3)"],
    "empty": ["q.empty()"],
    # time: sleeps that move the clock and fair yields that do not, a read
    # of the clock, a safety net that the main thread's set satisfies
    "sleep": ["time.sleep({n})"],
    "nap": ["time.sleep(0.001)"],
    "yield0": ["time.sleep(0)"],
    "now": ["{c}.write(int(time.monotonic() * 1000))"],
    "safety": ["{c}.write(int(ev.wait(timeout=300)))"],
    # a re-entrant lock taken twice, with a timeout and without blocking,
    # and Timers: one that fires (a task of its own, after a sleep) and one
    # cancelled, perhaps before it fires
    "rlock_nested": ["with rl:", "    with rl:", "        v = {c}.read()", "        {c}.write(v + 1)"],
    "rlock_timed": ["if rl.acquire(timeout=1):", "    {c}.write({c}.read() + 2)", "    rl.release()"],
    "rlock_try": ["if rl.acquire(blocking=False):", "    {c}.write(-6)", "    rl.release()"],
    "timer": ["tm = threading.Timer(0.5, {c}.write, args=(8,))", "tm.start()", "tm.join()"],
    "timer_cancel": ["tc = threading.Timer(1, {c}.write, args=(9,))", "tc.start()", "tc.cancel()"],
}
# spin-waits on the flag, which the main thread sets once the threads are
# started (RELEASE): only in a thread, since the main thread's own would
# wait for what it does after
SPIN_MENU = {
    "spin": ["while not flag.read():", "    time.sleep(0.001)", "{c}.write(6)"],
    "spin0": ["while not flag.read():", "    time.sleep(0)", "{c}.write(7)"],
}
# the time theme's clock reads around sleeps and polls, whose values the
# clock's jumps decide (only there, so the other themes' programs stay
# what they were): the elapsed time of a sleep, a stamp mixed into a
# cell's value, a deadline loop that polls the flag the main thread sets
CLOCK_MENU = {
    "elapsed": ["t_ = time.monotonic()", "time.sleep({n})", "{c}.write(int((time.monotonic() - t_) * 1000))"],
    "stamp": ["{c}.write({c}.read() * 7 + int(time.monotonic() * 2) % 100)"],
}
DEADLINE_MENU = {
    "deadline": ["end = time.monotonic() + {n}", "while not flag.read() and time.monotonic() < end:",
                 "    time.sleep(1)", "{c}.write({c}.read() + int(flag.read()) + 1)"],
}
# A program draws its operations from one theme's: a queue's or a
# semaphore's alone make the one-step waits that must move before a
# nowait operation, which took what they wait for, far more common than
# the whole menu would (None: the whole menu).
THEMES = {
    "all": None,
    "queue": ("get", "get_timed", "get_nowait", "put", "put_timed", "put_nowait", "empty"),
    "semaphore": ("section", "sem_timed", "sem_hold", "sem_try", "increment"),
    "event_condition": ("set", "clear", "wait", "wait_timed", "notify", "notify_all", "wait_while",
                        "wait_if", "cond_timed", "plain_notify", "plain_wait"),
    # the idle time model's: deadlines, spin-waits (SPIN_MENU), safety nets
    "time": ("sleep", "nap", "yield0", "now", "safety", "wait_timed", "sem_timed", "sem_hold",
             "get_timed", "put_timed", "set", "increment", "cond_timed", "notify_all"),
    # a rate limiter's or a pool's: re-entrant locks, timed acquires, clock
    # reads and Timers
    "rlock_timer": ("rlock_nested", "rlock_timed", "rlock_try", "timer", "timer_cancel", "now",
                    "increment", "nap"),
}
# only the second thread's: the first has been started before it
JOIN_MENU = {
    "join_timed": ["th0.join(timeout=1)", "{c}.write(int(th0.is_alive()))"],
}
CELLS = ("c0", "c1")


# what the main thread does, once the threads are started, so that the
# waits of a kind of operation can end: each wait may still come too late
# for it, or too early for a clear
RELEASE = {
    "wait": ["ev.set()"],
    "wait_while": ["with cond:", "    flag.write(1)", "    cond.notify_all()"],
    "wait_if": ["with cond:", "    flag.write(1)", "    cond.notify_all()"],
    "plain_wait": ["with pcond:", "    pcond.notify_all()"],
    "get": ["q.put(0)"],
    "put": ["c0.write(q.get())"],
    "safety": ["ev.set()"],
    "spin": ["flag.write(1)"],
    "spin0": ["flag.write(1)"],
    "deadline": ["flag.write(1)"],
}

# plain state: {x} is an attribute of s, {n} a small number
PLAIN_MENU = {
    "assign": ["s.{x} = s.{y} + {n}"],
    "inplace": ["s.{x} += {n}"],
    "append": ["lst.append({n})"],
    "len": ["len(lst)"],
    "len_into": ["s.{x} = len(lst)"],
    "setitem": ['d["{k}"] = {n}'],
    "pop": ['d.pop("{k}", None)'],
    "get_into": ['s.{x} = d.get("{k}")'],
    "contains": ['if "{k}" in d:', "    s.{x} = {n}"],
}
ATTRS = ("x", "y")
KEYS = ("a", "k")

# the families and their weights
FAMILIES = (("primitives", 3), ("plain", 2))
# the options of the reference DFS of each family: plain DFS of plain
# state makes a point of every access, tens of thousands of schedules for
# three tasks of two accesses each, so there within a preemption bound
DFS_BOUND = {"primitives": (), "plain": ("-p", "1")}


def _body(rng, count, used, menu=MENU):
    lines = []
    for _ in range(count):
        name = rng.choice(sorted(menu))
        used.add(name)
        cell, number = rng.choice(CELLS), rng.randint(1, 3)
        lines += [line.format(c=cell, n=number) for line in menu[name]]
    return lines


def family(seed):
    """The family of seed's program."""
    rng = random.Random(f"family {seed}")
    return rng.choices([f for f, _ in FAMILIES], [w for _, w in FAMILIES])[0]


def _primitives(rng, seed, name, theme=None):
    used = set()
    # the time theme only when asked for: the programs of the other
    # seeds stay what they were
    theme = theme or rng.choice(sorted(t for t in THEMES if t != "time"))
    menu = {k: v for k, v in MENU.items() if k in THEMES[theme]} if THEMES[theme] else MENU
    if theme == "time":
        menu = dict(menu, **CLOCK_MENU)
    thread_menu = dict(menu, **SPIN_MENU, **DEADLINE_MENU) if theme == "time" else menu
    # the time theme's programs have two threads, since a clock that moves
    # only when nothing can run orders much of what they do
    nthreads = 2 if theme == "time" else rng.choice((1, 2, 2))
    bodies = [_body(rng, rng.randint(1, 2), used, thread_menu)]
    if nthreads == 2:
        bodies.append(_body(rng, 1, used, dict(thread_menu, **JOIN_MENU)))
    # the main thread's safety net waits for the set it makes itself after
    # its operations, so it always times out: after 300 s, a thread's
    # spin-wait on the flag set after it would poll 300,000 naps of real
    # time, past any step limit; a short one.  The same menu's keys, so
    # that the other programs stay what they were
    main_menu = dict(menu, safety=["{c}.write(int(ev.wait(timeout=0.5)))"]) if theme == "time" else menu
    between = _body(rng, 1, used, main_menu) if nthreads == 2 else []
    main = _body(rng, 1, used, main_menu)
    for op in sorted(used):
        release = [line.format(c="c0") for line in RELEASE.get(op, [])]
        if release and release[0] not in main:
            main += release
    units = rng.choice((1, 2))
    first_item = rng.random() < 0.5
    out = [
        f"# primgen.py {seed}{' time' if theme == 'time' else ''}",
        "import time",
        "",
        "import ploom",
        "import ploom.queue as queue",
        "import ploom.threading as threading",
        "",
        "",
        f"def {name}():",
        "    ev = threading.Event()",
        "    rl = threading.RLock()",
        "    cond = threading.Condition()",
        "    pcond = threading.Condition(threading.Lock())",
        f"    sem = threading.Semaphore({units})",
        "    q = queue.Queue(maxsize=1)",
        "    flag = ploom.SharedCell(0)",
        *(f"    {c} = ploom.SharedCell(0)" for c in CELLS),
        *(["    q.put_nowait(9)"] if first_item else []),
    ]
    for i, body in enumerate(bodies):
        # the time theme's threads log the order they end in, which the
        # clock's jumps and the fair yields must leave as free as it is
        log = [f"c1.write(c1.read() * 10 + {i + 1})"] if theme == "time" else []
        out += ["", f"    def t{i}():", *("        " + line for line in body + log)]
    out += [""]
    out += [f"    th{i} = ploom.Thread(target=t{i})" for i in range(nthreads)]
    out += ["    th0.start()"]
    if nthreads == 2:
        out += [*("    " + line for line in between), "    th1.start()"]
    out += [
        *("    " + line for line in main),
        *(f"    th{i}.join()" for i in range(nthreads)),
        "    state = (c0.read(), c1.read(), flag.read(), ev.is_set(), q.qsize(), sem._value)",
        '    raise AssertionError(f"final {state}")',
        "",
    ]
    return out


def _plain(rng, seed, name):
    nthreads = rng.choice((2, 3, 3))
    ops = {2: (1, 3), 3: (1, 3)}[nthreads]
    bodies = []
    for _ in range(nthreads):
        lines = []
        for _ in range(rng.randint(*ops)):
            x, y = rng.choice(ATTRS), rng.choice(ATTRS)
            k, n = rng.choice(KEYS), rng.randint(1, 3)
            lines += [line.format(x=x, y=y, k=k, n=n) for line in PLAIN_MENU[rng.choice(sorted(PLAIN_MENU))]]
        bodies.append(lines)
    main = _plain_main(rng, nthreads)
    out = [
        f"# primgen.py {seed}",
        "import ploom",
        "",
        "",
        "class _State:",
        "    pass",
        "",
        "",
        f"def {name}():",
        "    s = _State()",
        "    s.x = s.y = 0",
        "    lst = []",
        '    d = {"a": 0}',
    ]
    for i, body in enumerate(bodies):
        out += ["", f"    def t{i}():", *("        " + line for line in body)]
    out += ["", *(f"    th{i} = ploom.Thread(target=t{i})" for i in range(nthreads)), *main]
    out += [
        "    state = (s.x, s.y, lst, sorted(d.items()))",
        '    raise AssertionError(f"final {state}")',
        "",
    ]
    return out


def _plain_main(rng, nthreads):
    """The main thread of a plain program: starts the threads in turn, an
    operation of its own now and then between, a timed join now and then,
    then joins them all; or the same over a list of the threads, whose
    reads between the starts are plain state too."""
    if rng.random() < 0.5:
        lines = [f"    th = [{', '.join(f'th{i}' for i in range(nthreads))}]", "    for t in th:", "        t.start()"]
        if rng.random() < 0.5:
            lines.append(f"    th[{rng.randrange(nthreads)}].join(timeout=0.5)")
        return lines + ["    for t in th:", "        t.join()"]
    lines = []
    for i in range(nthreads):
        lines.append(f"    th{i}.start()")
        if rng.random() < 0.2:
            lines.append(f"    lst.append({10 + i})")
    if rng.random() < 0.5:
        lines.append(f"    th{rng.randrange(nthreads)}.join(timeout=0.5)")
    lines += [f"    th{i}.join()" for i in range(nthreads)]
    return lines


def program(seed, name="scenario", time=False):
    """The text of seed's program, defining the function name; with time,
    a program of primitives of the time theme whatever seed's family."""
    rng = random.Random(seed)
    if time:
        return "\n".join(_primitives(rng, seed, name, "time"))
    make = _primitives if family(seed) == "primitives" else _plain
    return "\n".join(make(rng, seed, name))


def module(seed):
    """The module name of seed's program (write_program())."""
    return f"prim_{seed}"


def write_program(seed, folder, name="scenario", time=False):
    """Writes seed's program to folder/prim_SEED.py; returns its TARGET, a
    module target to run with folder as the current directory."""
    path = os.path.join(folder, f"{module(seed)}.py")
    with tempfile.NamedTemporaryFile("w", dir=folder, delete=False, encoding="utf-8") as f:
        f.write(program(seed, name, time))
    os.replace(f.name, path)
    return f"{module(seed)}:{name}"


if __name__ == "__main__":
    time_theme = sys.argv[1:2] == ["--time"]
    args = sys.argv[2:] if time_theme else sys.argv[1:]
    if len(args) != 1 or not args[0].isdigit():
        sys.exit("usage: python tests/python/primgen.py [--time] SEED")
    sys.stdout.write(program(int(args[0]), time=time_theme))
