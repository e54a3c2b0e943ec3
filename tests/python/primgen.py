"""Random small scenarios over ploom.threading's and ploom.queue's
primitives, for test_primitives_differential.py: the one-step waits
(acquire_when) of Condition, Event, Semaphore and the queues held to plain
DFS on programs nobody wrote by hand.

A program has the main thread and a thread, which does one or two
operations drawn from a menu, the main thread one: racy increments of
SharedCells, Event set, clear and waits, Condition notifies and waits
(under while, under if, timed), Semaphore sections and timed acquires,
Queue puts and gets (blocking, timed).  The main thread then does what ends
the untimed waits drawn (a set, a notify_all, a put or a get), which may
come too early or be undone by a clear: a deadlock is an outcome like any
other.  After the join the main thread raises the final state, so two
schedules that end differently have different outcome summaries.

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
    "put": ["q.put({n})"],
    "put_timed": ["try:", "    q.put({n}, timeout=1)", "except queue.Full:", "    {c}.write(-1)"],
    "get": ["{c}.write(q.get())"],
    "get_timed": ["try:", "    {c}.write(q.get(timeout=1))", "except queue.Empty:", "    {c}.write(-2)"],
}
CELLS = ("c0",)


# what the main thread does, once the threads are started, so that the
# waits of a kind of operation can end: each wait may still come too late
# for it, or too early for a clear
RELEASE = {
    "wait": ["ev.set()"],
    "wait_while": ["with cond:", "    flag.write(1)", "    cond.notify_all()"],
    "wait_if": ["with cond:", "    flag.write(1)", "    cond.notify_all()"],
    "plain_wait": ["with pcond:", "    pcond.notify_all()"],
    "get": ["q.put(0)"],
    "put": ["{c}.write(q.get())"],
}


def _body(rng, count, used):
    lines = []
    for _ in range(count):
        name = rng.choice(sorted(MENU))
        used.add(name)
        cell, number = rng.choice(CELLS), rng.randint(1, 3)
        lines += [line.format(c=cell, n=number) for line in MENU[name]]
    return lines


def program(seed, name="scenario"):
    """The text of seed's program, defining the function name."""
    rng = random.Random(seed)
    used = set()
    bodies = [_body(rng, rng.randint(1, 2), used)]
    main = _body(rng, 1, used)
    for op in sorted(used):
        release = [line.format(c="c0") for line in RELEASE.get(op, [])]
        if release and release[0] not in main:
            main += release
    out = [
        f"# primgen.py {seed}",
        "import ploom",
        "import ploom.queue as queue",
        "import ploom.threading as threading",
        "",
        "",
        f"def {name}():",
        "    ev = threading.Event()",
        "    cond = threading.Condition()",
        "    pcond = threading.Condition(threading.Lock())",
        "    sem = threading.Semaphore(1)",
        "    q = queue.Queue(maxsize=1)",
        "    flag = ploom.SharedCell(0)",
        *(f"    {c} = ploom.SharedCell(0)" for c in CELLS),
    ]
    for i, body in enumerate(bodies):
        out += ["", f"    def t{i}():", *("        " + line for line in body)]
    out += [
        "",
        "    t = ploom.Thread(target=t0)",
        "    t.start()",
        *("    " + line for line in main),
        "    t.join()",
        "    state = (c0.read(), flag.read(), ev.is_set(), q.qsize())",
        '    raise AssertionError(f"final {state}")',
        "",
    ]
    return "\n".join(out)


def write_program(seed, folder, name="scenario"):
    """Writes seed's program to folder/prim_SEED.py; returns its TARGET."""
    path = os.path.join(folder, f"prim_{seed}.py")
    with tempfile.NamedTemporaryFile("w", dir=folder, delete=False, encoding="utf-8") as f:
        f.write(program(seed, name))
    os.replace(f.name, path)
    return f"{path}:{name}"


if __name__ == "__main__":
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        sys.exit("usage: python tests/python/primgen.py SEED")
    sys.stdout.write(program(int(sys.argv[1])))
