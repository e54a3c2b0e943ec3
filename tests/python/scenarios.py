"""Scenarios the tests explore, defined at module level as ploom requires.

bank_locked and bank_unlocked are the README's bank example; abba, counter3,
racy_counter2, try_lock and flag_handoff are exactly those of REFERENCE.md,
whose schedule counts the tests compare against.  The rest misbehave on
purpose: each must come back as its schedule's outcome, not break ploom.
"""

import os
import select
import sys

import ploom


def _bank(with_lock):
    balance = ploom.SharedCell(100)
    lock = ploom.Lock()

    def withdraw():
        if balance.read() >= 100:
            balance.write(balance.read() - 100)

    def withdraw_locked():
        with lock:
            withdraw()

    mathieu = ploom.Thread(target=withdraw_locked if with_lock else withdraw)
    lucas = ploom.Thread(target=withdraw_locked if with_lock else withdraw)
    mathieu.start()
    lucas.start()
    mathieu.join()
    lucas.join()
    assert balance.read() >= 0, "the account is overdrawn"


def bank_locked():
    _bank(with_lock=True)


def bank_unlocked():
    _bank(with_lock=False)



def never_notified():
    """A wait on a Condition that no task notifies, and a plain Lock taken
    twice by one thread: both tasks wait on a lock they hold themselves."""
    from ploom import threading

    cond = threading.Condition()
    twice = ploom.Lock()

    def waiter():
        with cond:
            cond.wait()

    def taker():
        twice.acquire()
        twice.acquire()

    a = ploom.Thread(target=waiter)
    b = ploom.Thread(target=taker)
    a.start()
    b.start()
    a.join()
    b.join()

def abba():
    x = ploom.Lock()
    y = ploom.Lock()

    def one():
        with x:
            with y:
                pass

    def two():
        with y:
            with x:
                pass

    a = ploom.Thread(target=one)
    b = ploom.Thread(target=two)
    a.start()
    b.start()
    a.join()
    b.join()


def counter3():
    # three threads increment a counter under a lock; the total must be 3
    n = ploom.SharedCell(0)
    lock = ploom.Lock()

    def inc():
        with lock:
            n.write(n.read() + 1)

    ts = [ploom.Thread(target=inc) for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert n.read() == 3


def lock_order_bug():
    # one lock, two critical sections: the bug needs the reader's to go first,
    # which the default schedule never does
    lock = ploom.Lock()
    data = ploom.SharedCell(None)

    def writer():
        with lock:
            data.write(42)

    def reader():
        with lock:
            value = data.read()
        assert value is not None, "the reader went first"

    w = ploom.Thread(target=writer)
    r = ploom.Thread(target=reader)
    w.start()
    r.start()
    w.join()
    r.join()


def philosophers3():
    # three dining philosophers, each taking the fork on the left then the one
    # on the right: a deadlock when all three hold their left fork, which
    # needs two preemptions (the benchmark times finding and minimizing it)
    forks = [ploom.Lock() for _ in range(3)]

    def dine(i):
        with forks[i]:
            with forks[(i + 1) % 3]:
                pass

    ts = [ploom.Thread(target=dine, args=(i,)) for i in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def writers3():
    # three threads write one cell and read it back: every order is its own
    # class, so partial-order reduction runs many schedules here (the
    # benchmark compares the cost of one schedule with and without it)
    x = ploom.SharedCell(0)

    def writer(i):
        x.write(i)
        assert x.read() in (1, 2, 3)

    ts = [ploom.Thread(target=writer, args=(i,)) for i in (1, 2, 3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def writers3_twice():
    # writers3 with each thread writing and reading back twice: 7134
    # classes, a search of a few thousand schedules even under partial-order
    # reduction (the benchmark times it on one and two workers)
    x = ploom.SharedCell(0)

    def writer(i):
        for _ in range(2):
            x.write(i)
            assert x.read() in (1, 2, 3)

    ts = [ploom.Thread(target=writer, args=(i,)) for i in (1, 2, 3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def queue_handoff():
    # a producer and a consumer over Queue(maxsize=1), three items, and the
    # main thread joining the queue: 12 schedules under the reduction, whose
    # waits are one step each (3,402 when they were condition waits)
    import ploom.queue as queue

    q = queue.Queue(maxsize=1)

    def producer():
        for i in range(3):
            q.put(i)

    def consumer():
        for _ in range(3):
            q.get()
            q.task_done()

    ts = [ploom.Thread(target=producer), ploom.Thread(target=consumer)]
    for t in ts:
        t.start()
    q.join()
    for t in ts:
        t.join()


def queue_ops():
    # each way to put and get, a get_nowait that finds the queue empty and a
    # timed get that times out, in the default schedule: the producer's
    # puts, then the consumer's gets
    import ploom.queue as queue

    q = queue.Queue()

    def producer():
        q.put(3)
        q.put_nowait(4)

    def consumer():
        assert q.get() == 3
        assert q.get_nowait() == 4
        for get in (q.get_nowait, lambda: q.get(timeout=0.5)):
            try:
                get()
            except queue.Empty:
                pass

    ts = [ploom.Thread(target=producer, name="producer"), ploom.Thread(target=consumer, name="consumer")]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def lock_handoff():
    # lock steps only, about as many per schedule as queue_handoff's: what a
    # queue schedule's cost is measured against
    lock = ploom.Lock()
    n = ploom.SharedCell(0)

    def work():
        for _ in range(2):
            with lock:
                n.write(n.read() + 1)

    ts = [ploom.Thread(target=work) for _ in range(2)]
    for t in ts:
        t.start()
    work()
    for t in ts:
        t.join()


def racy_counter2():
    # two threads increment without a lock: a lost update
    n = ploom.SharedCell(0)

    def inc():
        n.write(n.read() + 1)

    ts = [ploom.Thread(target=inc) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert n.read() == 2, "lost update"


def spinlock():
    # A spinlock whose test-and-set is not atomic: a read of the flag, then
    # a write.  Two threads meet in the critical section only if one is
    # switched away between its read and its write, while it could go on,
    # and the other is switched away inside the critical section, while it
    # could go on too: two preemptions of runnable threads, nothing blocks.
    # So a search with at most one preemption never sees the failure
    # (max_preemptions=1 passes, 2 fails), nor does pct with depth 2, whose
    # schedules have at most 1 (lib/policy.h).  The spin is bounded so that
    # a sample never runs into the step limit.
    flag = ploom.SharedCell(0, name="flag")
    inside = ploom.SharedCell(0, name="inside")

    def worker():
        for _ in range(2):
            if flag.read() == 0:
                flag.write(1)
                inside.write(inside.read() + 1)
                assert inside.read() == 1, "two threads in the critical section"
                inside.write(inside.read() - 1)
                flag.write(0)
                return
            ploom.yield_now()

    a = ploom.Thread(target=worker)
    b = ploom.Thread(target=worker)
    a.start()
    b.start()
    a.join()
    b.join()


def try_lock():
    # non-blocking acquire: exactly one of the two threads wins while the other holds it
    lock = ploom.Lock()
    wins = ploom.SharedCell(0)

    def grab():
        if lock.acquire(blocking=False):
            wins.write(wins.read() + 1)
            ploom.yield_now()
            lock.release()

    ts = [ploom.Thread(target=grab) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert 1 <= wins.read() <= 2


def flag_handoff():
    # a producer sets data then a flag; a consumer polls the flag at most 3 times with yield_now
    data = ploom.SharedCell(None)
    ready = ploom.SharedCell(False)
    got = ploom.SharedCell(None)

    def producer():
        data.write(42)
        ready.write(True)

    def consumer():
        for _ in range(3):
            if ready.read():
                got.write(data.read())
                return
            ploom.yield_now()

    p = ploom.Thread(target=producer)
    c = ploom.Thread(target=consumer)
    p.start()
    c.start()
    p.join()
    c.join()
    assert got.read() in (None, 42)


def half_done_twice():
    # a checker must run while two writers are each half done: the bug needs
    # two preemptions, and no schedule with fewer fails
    x = ploom.SharedCell(0)
    y = ploom.SharedCell(0)

    def flip(cell):
        cell.write(1)
        cell.write(0)

    def check():
        assert not (x.read() == 1 and y.read() == 1), "saw both half done"

    ts = [ploom.Thread(target=flip, args=(x,)), ploom.Thread(target=flip, args=(y,)), ploom.Thread(target=check)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def raises_in_thread():
    def boom():
        raise ValueError("boom")

    t = ploom.Thread(target=boom)
    t.start()
    t.join()


def raises_terminal_escapes():
    # a message that would clear the screen if printed raw
    cell = ploom.SharedCell(0)
    cell.write(1)
    raise RuntimeError("\x1b[2J\x1b[Hcleared")


def raises_invisible_controls():
    # a bell, C1's CSI, and bidirectional overrides that would reorder the
    # rest of the line if printed raw; the tab is left alone
    cell = ploom.SharedCell(0)
    cell.write(1)
    raise RuntimeError("\x1b[2J\x07\x9b\u202eevil\u2066\u200f\u061c\x7f\tend")


def raises_a_huge_message():
    # 100 MB of message, and as much again in the traceback: the record
    # carries the first 64 KiB of each and how much it left out
    cell = ploom.SharedCell(0)
    cell.write(1)
    raise ValueError("x" * 100_000_000)


def spins_forever():
    def spin():
        while True:
            ploom.yield_now()

    t = ploom.Thread(target=spin)
    t.start()
    t.join()


def waits_for_a_cell_nobody_writes():
    # a busy wait on a flag that no task sets: every schedule, in any
    # search and any time model, loops until the step limit
    ready = ploom.SharedCell(False, name="ready")

    def waiter():
        while not ready.read():
            pass

    t = ploom.Thread(target=waiter)
    t.start()
    t.join()


def spins_with_two_threads():
    # two threads that yield forever: every schedule reaches the step
    # limit, and the schedules are many (who runs at each yield)
    def spin():
        while True:
            ploom.yield_now()

    threads = [ploom.Thread(target=spin) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def spins_writing_forever():
    # like spins_forever, with a long value recorded at every step: its
    # records fill the shared record area in fewer steps
    def spin():
        cell = ploom.SharedCell(None)
        while True:
            cell.write("x" * 190)

    t = ploom.Thread(target=spin)
    t.start()
    t.join()


def long_then_fails():
    # three threads of 25,000 yields: the first two spin while another
    # thread waits to begin, so the first schedule has some 50,000 branch
    # points, then fails, and replaying it takes a `run` command of 100 KB
    def spin():
        for _ in range(25000):
            ploom.yield_now()

    threads = [ploom.Thread(target=spin) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    raise AssertionError("the end of a long schedule")


def spin_wait_10k():
    # a spinner polls a flag with yield_now, 5,000 times at most (10,000
    # steps: a write of its count and a yield each); the task that started
    # it does 10,000 steps of work, sets the flag, and fails if it finds the
    # spinner half way.  A random search fails at once, in a schedule of
    # some 20,000 steps and thousands of preemptions.  The fewest are 2 (to
    # the spinner, back to the setter): the minimizer must first run every
    # schedule with 1, thousands of 15,000 steps or more, each of which
    # records thousands of schedules with 2
    flag = ploom.SharedCell(False, name="flag")
    polls = ploom.SharedCell(0, name="polls")

    def spinner():
        for i in range(1, 5001):
            if flag.read():
                return
            polls.write(i)
            ploom.yield_now()

    def setter():
        t = ploom.Thread(target=spinner)
        t.start()
        for _ in range(10000):
            ploom.yield_now()
        flag.write(True)
        assert polls.read() in (0, 5000), "the spinner was half way"
        t.join()

    t = ploom.Thread(target=setter)
    t.start()
    t.join()


def _really_wait(seconds):
    # time.sleep is ploom's virtual clock in a worker, which never waits:
    # select really does
    select.select([], [], [], seconds)


def blocks_outside():
    # ploom cannot see select: only the per-schedule timeout ends this
    cell = ploom.SharedCell(0)
    cell.write(1)
    _really_wait(60)


def calls_os_exit():
    cell = ploom.SharedCell(0)
    cell.write(1)
    os._exit(3)


def crashes():
    cell = ploom.SharedCell(0)
    cell.write(1)
    os.abort()


def _fork_and_wait():
    pid = os.fork()
    if pid == 0:
        # the child goes on as a copy of the schedule, as careless code would
        return
    os.waitpid(pid, 0)


def forks():
    cell = ploom.SharedCell(0)
    cell.write(1)
    _fork_and_wait()


def forks_in_a_thread():
    thread = ploom.Thread(target=_fork_and_wait)
    thread.start()
    ploom.yield_now()
    thread.join()


def catches_the_fork_refusal():
    # a library that falls back when fork fails must not carry on unexplored
    try:
        _fork_and_wait()
    except BaseException:
        pass


def starts_a_spawned_pool():
    # a process pool feeds its processes from threads of multiprocessing
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        pool.apply(abs, (-1,))


def forks_through_ctypes():
    # libc's fork() itself: no os.fork() audit event, a copy all the same
    import ctypes

    cell = ploom.SharedCell(0)
    pid = ctypes.CDLL(None).fork()
    if pid == 0:
        cell.write(1)
        os._exit(0)
    os.waitpid(pid, 0)
    cell.write(2)


def touches_state_in_preexec_fn():
    import subprocess

    cell = ploom.SharedCell(0)
    subprocess.run(["true"], preexec_fn=lambda: cell.write(1), check=False)
    cell.write(2)


def _alarm_until(done):
    import signal

    signal.setitimer(signal.ITIMER_REAL, 0.0005, 0.0005)
    try:
        while not done():
            ploom.yield_now()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)


def operates_in_a_signal_handler():
    import signal

    cell = ploom.SharedCell(0)
    signal.signal(signal.SIGALRM, lambda signum, frame: cell.write(cell.read() + 1))
    _alarm_until(lambda: False)


def sets_a_flag_in_a_signal_handler():
    import signal
    import time

    fired = []

    def handler(signum, frame):
        fired.append(signum)

    before = signal.signal(signal.SIGALRM, handler)
    assert signal.getsignal(signal.SIGALRM) is handler
    deadline = time.monotonic() + 5
    _alarm_until(lambda: fired or time.monotonic() > deadline)
    signal.signal(signal.SIGALRM, before)
    assert fired == [signal.SIGALRM]


def forkpty():
    import pty

    pid, fd = pty.fork()
    if pid == 0:
        os._exit(0)
    os.close(fd)
    os.waitpid(pid, 0)


def runs_a_program_in_threads():
    # subprocess forks and execs: the program it runs is not a copy of the
    # schedule, so it is allowed
    import subprocess

    def run():
        done = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, check=True)
        assert done.stdout == b"42\n", done

    threads = [ploom.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _sleeper():
    # a test names its sleeps by the duration (`sleep 300.123`) to find
    # those left behind, and none of another run's
    return ["sleep", os.environ.get("PLOOM_TEST_SLEEP", "300")]


def _sleepers_running():
    """Pids of the processes that run _sleeper()'s command line."""
    want = ("\0".join(_sleeper()) + "\0").encode()
    pids = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if f.read() == want:
                    pids.append(int(entry))
        except (OSError, ValueError):
            continue
    return pids


def starts_a_session():
    # a program in a session of its own: the kill of the schedule's process
    # group misses it, and it has no parent-death signal
    import subprocess

    cell = ploom.SharedCell(0)

    def start():
        cell.write(1)

    threads = [ploom.Thread(target=start) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    subprocess.Popen(_sleeper(), start_new_session=True)


def starts_sessions_one_at_a_time():
    # with one worker, the program the schedule before started is gone
    # before the next schedule starts
    left = _sleepers_running()
    assert not left, f"left running by an earlier schedule: {left}"
    starts_a_session()


def starts_a_session_that_forks():
    # a program in a session of its own that starts another, and one that
    # leaves its child behind at once (the shell exits): the second is
    # orphaned while the schedule still runs
    import subprocess

    sleep = " ".join(_sleeper())
    cell = ploom.SharedCell(0)
    cell.write(1)
    subprocess.Popen(["sh", "-c", f"{sleep} & exec {sleep}"], start_new_session=True)
    subprocess.run(["sh", "-c", f"{sleep} &"], start_new_session=True, check=True)
    cell.write(2)


def keeps_its_orphan():
    # a program orphaned at once (its shell exits), in a session of its
    # own, still runs while its schedule does, however many other
    # schedules end meanwhile (-j 2)
    import subprocess

    cell = ploom.SharedCell(0)

    def start():
        cell.write(1)

    threads = [ploom.Thread(target=start) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    sleep = " ".join(_sleeper())
    started = subprocess.run(
        ["sh", "-c", f"{sleep} >/dev/null 2>&1 & echo $!"], start_new_session=True, check=True, capture_output=True
    )
    pid = int(started.stdout)
    for _ in range(10):
        _really_wait(0.03)
        assert pid in _sleepers_running(), "the schedule's orphan was killed while it ran"


def starts_a_session_and_blocks():
    import subprocess

    cell = ploom.SharedCell(0)
    cell.write(1)
    subprocess.Popen(_sleeper(), start_new_session=True)
    _really_wait(60)


# Not scenarios at all, though they look like ones: calling them does not run
# their body (a coroutine or a generator comes back), or needs arguments that
# a schedule has none of.  Each fails on purpose: were its body to run, the
# check would fail; ploom must refuse it before any schedule.


async def async_scenario():
    raise AssertionError("an async body ran")


def generator_scenario():
    raise AssertionError("a generator body ran")
    yield


async def async_generator_scenario():
    raise AssertionError("an async generator body ran")
    yield


def needs_an_argument(account):
    raise AssertionError("ran with an argument")


class Holder:
    def scenario(self):
        raise AssertionError("a method body ran")


holder = Holder()


# A schedule cut by its timeout tells where each task was.  Under ploom one
# task runs at a time, so the task that spins and the task that blocks on a
# real lock are two scenarios: in each, the other tasks wait at ploom's
# points, and the timeout's stacks show all of them.  The real lock is the
# standard library's, taken without an import statement, which in this
# module (patched by default, as the scenario's) would give ploom's.
_thread = sys.modules["_thread"]


def _xyzzy_spin_forever(real):
    real.acquire()
    while True:  # the spinning line
        pass


def spins_holding_real_lock():
    # _thread, since a threading.Lock of this module would end the schedule
    # as unscheduled before it could block
    real = _thread.allocate_lock()
    spinner = ploom.Thread(target=_xyzzy_spin_forever, args=(real,), name="spinner-1")
    idle = ploom.Thread(target=lambda: None, name="idle-1")
    spinner.start()
    idle.start()
    spinner.join()  # the join line


def _xyzzy_wait_real_lock(real):
    real.acquire()  # the blocking line


def blocks_on_real_lock():
    # _thread, since a threading.Lock of this module would end the schedule
    # as unscheduled before it could block
    real = _thread.allocate_lock()
    quick = ploom.Thread(target=lambda: None)
    quick.start()
    quick.join()
    real.acquire()
    blocker = ploom.Thread(target=_xyzzy_wait_real_lock, args=(real,), name="blocker-1")
    blocker.start()
    blocker.join()  # the blocker join line


def thread_start_under_a_memory_limit():
    """Starts a thread with too little address space left for its stack:
    the start must fail as threading's does, and the schedule go on."""
    import resource

    with open("/proc/self/statm") as f:
        size = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    # room for what the schedule allocates, not for a task's stack
    resource.setrlimit(resource.RLIMIT_AS, (size + (1 << 20), hard))
    try:
        ploom.Thread(target=lambda: None).start()
    except RuntimeError as exc:
        message = str(exc)
    else:
        message = "started"
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    assert message == "can't start new thread", message
