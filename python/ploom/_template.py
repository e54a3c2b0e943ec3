"""The worker template: an interpreter that has imported what every worker
imports, and forks a worker for each utility that asks, instead of each
utility starting a fresh interpreter (about 100 ms of startup and imports
against a few ms of fork and the scenario's own import).

A process of ploom's Python API (``ploom.check``, the fixture, the pytest
plugin) starts one template on its first search (``starter()``), and names
it to the utilities it runs from its second on, in PLOOM_WORKER_TEMPLATE
(``python -m ploom check``, one search per process, starts none).
lib/worker.c, about to start a worker, forks as usual and, in that child,
asks the template for a worker instead of exec'ing the interpreter: the
child (the *stub*) sends the interpreter, the folder, the worker's argv and
environment and its descriptors (fd 0, 1, 2, 3 and, with plain points, 5),
then stays until the worker the template forked ends, and ends the same
way.  So the utility still has a child per worker, to kill and reap as
before; the stub's death (a kill) ends the worker, since the template then
kills it.

A template serves only a worker that a fresh interpreter would start the
same: the same interpreter, the same environment but for
PYTHONPATH (whose entries the forked worker puts at the front of its path,
as startup would have, unless one would shadow a module the template
imported), pytest's PYTEST_CURRENT_TEST and ploom's variables that nothing
reads before the worker runs
(the forked worker takes the utility's environment before it imports
anything of the scenario's).  Anything else is
a refusal, and the stub then exec's the interpreter as without a template:
the template makes a search faster, never different.  It dies with the
process that started it.

A pytest-mode worker is forked by a collector of its test's file instead
(see "collectors" below), a child of the template that has also collected
that file.

Run as ``python -P -m ploom._template --python=PYTHON SOCKET`` by
``ploom-explore --worker-template=SOCKET``, which gives it the workers'
environment (lib/worker-spawn.c's ploom_spawn_env()).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import Any

# what lib/worker-spawn.c's stub sends first (template_request()): this line, the
# body's length on a line, then the body's fields, each ended by a NUL
MAGIC = b"ploom-template 1\n"
# the worker's interpreter options and module, as lib/worker.c writes them
WORKER_ARGS = [b"-P", b"-m", b"ploom._worker"]
# ploom's own variables are read by the utilities, or by the worker once it
# runs, after the forked worker took the utility's environment: they may
# differ between the template and its workers, but for these, which the
# extension reads as the template imports it
IMPORT_TIME = frozenset({b"PLOOM_CLOCK_READS"})
# pytest's, which it changes for each phase of each test, and which
# nothing of the template reads
RUN_TIME = frozenset({b"PYTEST_CURRENT_TEST"})

_lock = threading.Lock()
# (ploom-explore, python, this process) -> its Template
_started: dict = {}


class Template:
    """A template this process started, ready or still starting."""

    def __init__(self, explore: str, python: str):
        import subprocess
        import tempfile

        self.folder: str | None = tempfile.mkdtemp(prefix="ploom-template-")
        self.path = os.path.join(self.folder, "socket")
        self.ready: bool | None = None  # None: not known yet
        env = {k: v for k, v in os.environ.items() if k != "PLOOM_WORKER_TEMPLATE"}
        if "_pytest.main" in sys.modules:
            env["PLOOM_TEMPLATE_PYTEST"] = "1"
        try:
            self.proc: Any = subprocess.Popen(
                [explore, f"--python={python}", f"--worker-template={self.path}"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
            )
        except OSError:
            self.proc = None
            self.ready = False
        atexit.register(self.stop)

    def wait(self, timeout: float) -> bool:
        """Whether the template serves, waiting for it at most timeout s."""
        import select

        if self.ready is None:
            out = self.proc.stdout
            if select.select([out], [], [], timeout)[0]:
                self.ready = out.readline() == b"ready\n"
                out.close()
            elif timeout:
                self.ready = False
        if self.ready and self.proc.poll() is not None:
            # it died (with the thread that started it, say): no more
            self.ready = False
        return bool(self.ready)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            if self.proc.stdout and not self.proc.stdout.closed:
                self.proc.stdout.close()
            self.proc = None
        if self.folder is not None:
            for name in os.listdir(self.folder):
                os.unlink(os.path.join(self.folder, name))
            os.rmdir(self.folder)
            self.folder = None


def starter(explore: str, python: str) -> dict:
    """The environment to add for the utilities: PLOOM_WORKER_TEMPLATE,
    naming this process's template for ``python`` once it serves.  The
    first call starts it (with ``explore``, ploom-explore) and does not
    wait: a process that searches once would only pay for it.  Empty when
    it does not serve (the utilities then start their workers fresh)."""
    if sys.platform != "linux":
        return {}
    with _lock:
        key = (explore, python, os.getpid())
        template = _started.get(key)
        if template is None:
            _started[key] = Template(explore, python)
            return {}
        serves = template.wait(30.0)
    return {"PLOOM_WORKER_TEMPLATE": template.path} if serves else {}


# ---- the template's side ----


def _refusal(python: bytes, env: list[bytes], own: dict) -> str | None:
    """Why a fresh interpreter would not start as this one did, or None."""
    if python != own["python"]:
        return "another interpreter"
    theirs = {}
    for entry in env:
        name, _, value = entry.partition(b"=")
        theirs[name] = value
    for name in set(theirs) | set(own["env"]):
        if name == b"PYTHONPATH" or name in RUN_TIME or (name.startswith(b"PLOOM_") and name not in IMPORT_TIME):
            continue
        if theirs.get(name) != own["env"].get(name):
            return f"another {name.decode('utf-8', 'replace')}"
    paths = _python_path(theirs.get(b"PYTHONPATH"))
    shadowed = _shadows(paths)
    if shadowed:
        return f"{shadowed} on PYTHONPATH would shadow a module the template imported"
    return None


def _python_path(value: bytes | None) -> list[str]:
    if not value:
        return []
    return [os.path.abspath(os.fsdecode(p)) for p in value.split(b":") if p]


def _shadows(paths: list[str]) -> str | None:
    """A module of paths that a fresh worker would have imported in place
    of one this template imported (a queue.py beside the scenario)."""
    tops = {name.partition(".")[0] for name in sys.modules}
    for folder in paths:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            stem = name.partition(".")[0]
            if stem in tops and (name.endswith((".py", ".pyc", ".so")) or os.path.isdir(os.path.join(folder, name))):
                return os.path.join(folder, name)
    return None


def _read_request(conn):
    """(fields, descriptors) of the stub's request; fields is None when it
    is malformed."""
    fds: list[int] = []
    data = b""
    want = None
    while want is None or len(data) < want:
        msg = _recv(conn, 1 << 16, fds)
        if not msg:
            return None, fds
        data += msg
        if want is None and data.count(b"\n") >= 2:
            magic, length, data = data.split(b"\n", 2)
            if magic + b"\n" != MAGIC or not length.isdigit() or int(length) > 1 << 24:
                return None, fds
            want = int(length)
        elif want is None and len(data) > 64:
            return None, fds
    if len(data) != want or not data.endswith(b"\0"):
        return None, fds
    return data[:-1].split(b"\0"), fds


def _recv(sock, size: int, fds: list[int]) -> bytes:
    """One recvmsg of at most size bytes (b"" at the end, or on an error),
    adding the descriptors it carried to fds."""
    import array
    import socket

    got = array.array("i")
    try:
        msg, anc, _, _ = sock.recvmsg(size, socket.CMSG_SPACE(8 * got.itemsize))
    except OSError:
        return b""
    for level, kind, cdata in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            got.frombytes(cdata[: len(cdata) - (len(cdata) % got.itemsize)])
    fds.extend(got)
    return msg


def _prctl(option: int, value: int) -> None:
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def _worker(fields: list[bytes], fds: list[int], own: dict, collected: bool = False) -> None:
    """In the forked worker: becomes `python -P -m ploom._worker ARGV`.
    collected: forked from a collector, whose environment and path are
    those a fresh worker has once it collected (a conftest may set a
    variable, pytest puts folders on the path), but for RUN_TIME's."""
    import fcntl
    import importlib

    os.setpgid(0, 0)
    _prctl(PR_SET_PDEATHSIG, 9)
    # fields: python, cwd, argc, argv..., env...
    argc = int(fields[2])
    argv = [os.fsdecode(a) for a in fields[3 : 3 + argc]]
    env = fields[3 + argc :]
    # the folder the utility runs in, whose worker starts there; startup
    # made nothing of the template's own but PYTHONPATH's entries, redone
    # below
    os.chdir(fields[1])
    targets = [0, 1, 2, 3, 5][: len(fds)]
    # above every target first, so that no dup2 meets a descriptor to move
    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in fds]
    for fd, target in zip(moved, targets, strict=True):
        os.dup2(fd, target)
    keep = set(targets)
    os.closerange(max(keep) + 1, os.sysconf("SC_OPEN_MAX"))
    for fd in range(max(keep)):
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass
    if collected:
        theirs = dict(entry.partition(b"=")[::2] for entry in env)
        for name in RUN_TIME:
            if name in theirs:
                os.environb[name] = theirs[name]
            else:
                os.environb.pop(name, None)
    else:
        _take_env(env, own)
    importlib.invalidate_caches()
    # the module a fresh `python -m ploom._worker` runs as
    sys.argv = argv[3:]
    sys.argv[0] = own["worker_file"]
    from ploom import _worker

    _worker.run_as_main(sys.argv)


def _take_env(env: list[bytes], own: dict, skip: frozenset = frozenset()) -> None:
    """Makes env (NAME=VALUE entries, but for the names in skip) this
    process's environment, and puts PYTHONPATH's entries before the path
    startup gave the template, as a fresh interpreter's startup would."""
    os.environb.clear()
    for entry in env:
        name, _, value = entry.partition(b"=")
        if name not in skip:
            os.environb[name] = value
    extra = _python_path(os.environb.get(b"PYTHONPATH"))
    sys.path[:] = list(dict.fromkeys(extra + own["path"]))


def serve(python: str, path: str) -> int:
    import array  # noqa: F401 - the worker's imports, once, here
    import select
    import socket

    import ploom.queue  # noqa: F401
    import ploom.threading  # noqa: F401

    if os.environ.get("PLOOM_TEMPLATE_PYTEST"):
        # the pytest mode's workers collect a test: what pytest imports
        # for that, once here
        import _pytest.config  # noqa: F401
        import _pytest.main  # noqa: F401
        import _pytest.python  # noqa: F401
        import pytest  # noqa: F401
    from ploom import _guard, _instrument, _patch, _project, _pytest_target, _rewrite, _signals, _worker  # noqa: F401

    first = _python_path(os.environb.get(b"PYTHONPATH"))
    own: dict = {
        "python": os.fsencode(python),
        "env": dict(os.environb),
        # the path after PYTHONPATH's entries, which _worker() puts the
        # worker's own before; None (serve none) when startup did not put
        # them first
        "path": sys.path[len(first) :] if sys.path[: len(first)] == first else None,
        "worker_file": _worker.__file__,
    }
    _prctl(PR_SET_PDEATHSIG, 9)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    # out of the collector's reach: a collection in a worker would
    # otherwise touch, and so copy, every page of the template's objects
    # (some 20 ms of a worker's start)
    import gc

    gc.freeze()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    os.write(1, b"ready\n")
    os.close(1)
    os.open(os.devnull, os.O_WRONLY)
    workers: dict = {}  # pid -> (conn, pidfd)
    while True:
        watched = [listener] + [c for c, _ in workers.values()] + [p for _, p in workers.values()]
        ready, _, _ = select.select(watched, [], [], 1.0)
        for r in ready:
            if r is listener:
                _accept(listener, own, workers)
                continue
            for pid, (conn, pidfd) in list(workers.items()):
                if r is conn or r == pidfd:
                    _end(pid, conn, pidfd, workers, killed=r is conn)
        _reap_orphans(workers)


def _accept(listener, own: dict, workers: dict) -> None:
    conn, _ = listener.accept()
    fields, fds = _read_request(conn)
    try:
        why = None
        argc = int(fields[2]) if fields and len(fields) >= 3 and fields[2].isdigit() else -1
        if argc < 5 or len(fields) < 3 + argc or len(fds) not in (4, 5) or fields[4:7] != WORKER_ARGS:
            why = "a malformed request"
        elif own["path"] is None:
            why = "a path this template cannot rebuild"
        else:
            why = _refusal(fields[0], fields[3 + argc :], own)
            if not why and not os.path.isdir(fields[1]):
                why = "a folder that is gone"
        if why:
            conn.sendall(f"no {why}\n".encode())
            conn.close()
            return
        if _to_collector(fields, fds, conn, own, listener, workers):
            conn.close()
            return
        _fork_worker(conn, fields, fds, own, workers, listener)
    finally:
        for fd in fds:
            os.close(fd)


def _fork_worker(conn, fields: list[bytes], fds: list[int], own: dict, workers: dict, served,
                 collected: bool = False) -> None:
    """Forks the worker of a request whose stub is at conn and answers the
    stub with its pid, for the template (served: its listener) or a
    collector (served: its socket to the template) alike; the worker
    holds nothing of its parent's but its own descriptors."""
    pid = os.fork()
    if pid == 0:
        try:
            _close_all(served, workers)
            conn.close()
            _worker(fields, fds, own, collected=collected)
        finally:
            os._exit(127)
    conn.sendall(f"ok {pid}\n".encode())
    workers[pid] = (conn, os.pidfd_open(pid))


def _close_all(listener, workers: dict) -> None:
    """In a child of the template or of a collector: what it must not hold
    of its parent's (listener: the socket its parent serves on)."""
    if listener is not None:
        listener.close()
    for c, p in workers.values():
        c.close()
        os.close(p)
    for sock, _ in _collectors.values():
        sock.close()
    _collectors.clear()
    _retiring.clear()


# ---- collectors: a template that has also collected one test file ----
#
# A pytest-mode worker spends most of its start in pytest's configuration
# and collection of its test's file (some 80 ms), the same for every test
# of that file.  The first request for a test of a file (and the same
# options, folder and environment) forks a collector from the template:
# it runs the worker's preamble and pytest's collection of the whole
# file (ploom._worker.precollect()), then forks the workers of that
# file's tests, each taking its item from what was collected instead of
# collecting.  The template hands it each such request with the stub's
# connection, and the collector answers the stub as the template would.
# A collection that fails for any item of the file makes the collector
# refuse, and the stubs then exec a fresh interpreter, which reports the
# test's own error.

# key -> (the socket to the collector, its pid), the most recently used
# last; pytest runs a file's tests one after another, so a few suffice
_collectors: dict = {}
COLLECTORS_MAX = 4
# the pids of those let go, which end once their workers have
_retiring: set = set()


def _collect_key(fields: list[bytes], fds: list[int]):
    """The key of the collector a request can go to, or None: a pytest
    target's, not a replay's (--expect) and with no points to read (fd 5)."""
    from ploom import _pytest_target

    argc = int(fields[2])
    argv = fields[3 : 3 + argc]
    target = argv[-1]
    if (
        not _pytest_target.is_pytest_target(os.fsdecode(target))
        or len(fds) != 4
        or any(a.startswith((b"--expect=", b"--plain-points=-", b"--plain-points=*-")) for a in argv)
    ):
        return None
    try:
        nodeid, _ = _pytest_target.split(os.fsdecode(target))
    except ValueError:
        return None
    env = tuple(sorted(e for e in fields[3 + argc :] if e.partition(b"=")[0] not in RUN_TIME))
    return (fields[0], fields[1], tuple(argv[:-1]), nodeid.partition("::")[0], env)


def _to_collector(fields: list[bytes], fds: list[int], conn, own: dict, listener, workers: dict) -> bool:
    """Hands the request to its collector, forked first if there is none
    yet: True once it is the collector's."""
    import array
    import socket

    key = _collect_key(fields, fds)
    if key is None:
        return False
    entry = _collectors.pop(key, None)
    if entry is None:
        while len(_collectors) >= COLLECTORS_MAX:
            # the oldest ends once its workers have
            sock, old = _collectors.pop(next(iter(_collectors)))
            sock.close()
            _retiring.add(old)
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:
            try:
                mine.close()
                conn.close()
                for fd in fds:
                    os.close(fd)
                _close_all(listener, workers)
                _collector(fields, theirs, own)
            finally:
                os._exit(127)
        theirs.close()
    entry = _collectors[key] = entry or (mine, pid)
    body = b"\0".join(fields)
    try:
        entry[0].sendmsg([body], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [conn.fileno(), *fds]))])
    except OSError:
        # gone, or the request too long for one message: the template's own
        entry[0].close()
        del _collectors[key]
        return False
    return True


def _collector(first: list[bytes], sock, own: dict) -> None:
    """The collector's life: collect as the first request's worker would,
    then fork a worker for each request the template hands over, until
    the template goes."""
    import select

    os.setpgid(0, 0)
    _prctl(PR_SET_PDEATHSIG, 9)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    argc = int(first[2])
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2, 3):
        os.dup2(null, fd)
    os.close(null)
    os.chdir(first[1])
    _take_env(first[3 + argc :], own, RUN_TIME)
    import importlib

    importlib.invalidate_caches()
    from ploom import _worker

    argv = [os.fsdecode(a) for a in first[3 : 3 + argc]]
    before = set(sys.modules)
    try:
        _worker.precollect([own["worker_file"], *argv[4:]])
        collected = True
    except BaseException:  # noqa: BLE001 - any failure: the workers start fresh
        collected = False
    # the files the collection imported, to tell when one changes
    sources = {}
    for module in set(sys.modules) - before:
        file = getattr(sys.modules.get(module), "__file__", None)
        if isinstance(file, str):
            sources[file] = _stat(file)
    sys.stdout.flush()
    import gc

    # as the template's: the workers' collections need not copy them
    gc.freeze()
    workers: dict = {}
    while sock is not None or workers:
        watched = ([sock] if sock is not None else []) + [c for c, _ in workers.values()]
        watched += [p for _, p in workers.values()]
        ready, _, _ = select.select(watched, [], [], 1.0)
        for r in ready:
            if r is sock:
                fds: list[int] = []
                msg = _recv(sock, 1 << 24, fds)
                if not msg:
                    # the template let it go, or is gone: its workers end first
                    sock.close()
                    sock = None
                    continue
                if collected and any(_stat(file) != seen for file, seen in sources.items()):
                    # a fresh worker would import the file as it is now
                    collected = False
                _serve_collected(msg.split(b"\0"), fds, own, collected, sock, workers)
                continue
            for pid, (conn, pidfd) in list(workers.items()):
                if r is conn or r == pidfd:
                    _end(pid, conn, pidfd, workers, killed=r is conn)
        _reap_orphans(workers)
    os._exit(0)


def _stat(path: str):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _serve_collected(fields: list[bytes], fds: list[int], own: dict, collected: bool, sock, workers: dict) -> None:
    """In a collector: forks the worker of one handed-over request
    (fds: the stub's connection, then the worker's descriptors)."""
    import socket

    if not fds:
        return
    conn = socket.socket(fileno=fds[0])
    fds = fds[1:]
    try:
        if not collected:
            conn.sendall(b"no collection of the test's file failed, or a file it imported changed since\n")
            conn.close()
            return
        _fork_worker(conn, fields, fds, own, workers, sock, collected=True)
    except OSError:
        conn.close()
    finally:
        for fd in fds:
            os.close(fd)


def _end(pid: int, conn, pidfd: int, workers: dict, killed: bool) -> None:
    """The worker ended, or its stub did (killed): kill what is left, reap
    it, and tell the stub how it ended."""
    if killed:
        try:
            os.killpg(pid, 9)
        except OSError:
            pass
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        line = f"signal {os.WTERMSIG(status)}\n"
    else:
        line = f"code {os.WEXITSTATUS(status)}\n"
    try:
        conn.sendall(line.encode())
    except OSError:
        pass
    conn.close()
    os.close(pidfd)
    del workers[pid]


def _reap_orphans(workers: dict) -> None:
    """Kills and reaps what a worker's schedules left behind, which comes
    to the template as their subreaper, as lib/worker.c does for a worker
    it started itself."""
    try:
        with open(f"/proc/self/task/{os.getpid()}/children") as f:
            children = [int(p) for p in f.read().split()]
    except OSError:
        children = []
    for pid in list(_retiring):
        try:
            if os.waitpid(pid, os.WNOHANG)[0]:
                _retiring.discard(pid)
        except OSError:
            _retiring.discard(pid)
    collectors = {pid for _, pid in _collectors.values()} | _retiring
    for pid in children:
        if pid not in workers and pid not in collectors:
            try:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
            except OSError:
                pass


def main(argv: list[str]) -> int:
    if len(argv) != 3 or not argv[1].startswith("--python="):
        print("usage: python -P -m ploom._template --python=PYTHON SOCKET", file=sys.stderr)
        return 2
    return serve(argv[1][len("--python=") :], argv[2])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
