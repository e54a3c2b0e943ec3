"""Running ploom's utilities from Python: finding them, running one in a
subprocess with its progress passed through, stopping it on Ctrl-C, and
reading the JSON it prints."""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from typing import IO, Any

# the utilities that check() and replay() run
EXPLORE = "ploom-explore"
REPLAY = "ploom-replay"


def terminal_progress(progress: Callable[[dict], Any] | None) -> list[str]:
    """``--progress=terminal`` when our standard error is a terminal and
    the progress goes to it: ploom-explore's goes through a pipe to ours,
    and would otherwise be the log's line of counts every 30 seconds.
    It comes before the caller's options, so that their ``-q`` or
    ``--progress`` wins."""
    try:
        tty = progress is None and sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced, or closed
        tty = False
    return ["--progress=terminal"] if tty else []


def usage_error(stderr: str) -> bool | None:
    """Whether ploom-explore's stderr, as much of it as came, is a usage
    error: a line saying why (``ploom-explore: ...``), then at once the
    usage (``usage: ...``), before anything else (``man ploom-explore``,
    DIAGNOSTICS).  None while too little came to tell."""
    head, usage = f"{EXPLORE}: ", "usage: "
    first, newline, rest = stderr.partition("\n")
    if not newline:
        return None if first.startswith(head) or head.startswith(first) else False
    if not first.startswith(head):
        return False
    if rest.startswith(usage):
        return True
    return None if usage.startswith(rest) else False


class UtilityError(RuntimeError):
    """A utility failed (exit 2 or worse) after its stderr went to ours.
    The message ends with that text, so that the exception stands alone;
    ``stderr`` is the text and ``code`` the exit status."""

    def __init__(self, message: str, stderr: str, code: int) -> None:
        super().__init__(message)
        self.stderr = stderr
        self.code = code


def open_if_pipe(path: str) -> IO[bytes] | None:
    """The file at ``path`` opened for reading when it is a pipe or a
    socket, such as the /dev/fd/63 of bash's ``<(...)``: another
    process could not open that again (the descriptor is ours, and a pipe
    is read once), so ploom-replay gets it on its standard input.  None
    otherwise, and when it cannot be opened: ploom-replay then says why."""
    try:
        mode = os.stat(path).st_mode
        # a device such as /dev/zero ploom-replay opens and refuses itself
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            return None
        return open(path, "rb")
    except OSError:
        return None


def env_with_root(import_root: str | None) -> dict:
    """This process's environment, with import_root first on PYTHONPATH."""
    env = dict(os.environ)
    if import_root:
        # The worker must import the scenario's module as this process did:
        # put the folder its top-level package lives in on the worker's path.
        old = env.get("PYTHONPATH")
        env["PYTHONPATH"] = import_root + (os.pathsep + old if old else "")
    return env


def template_env(argv: list[str], env: dict) -> dict:
    """PLOOM_WORKER_TEMPLATE for a utility that starts workers with an
    interpreter named by --python: this process's worker template
    (_template.py), started on first use.  None when the environment names
    one already (``PLOOM_WORKER_TEMPLATE=off``: none)."""
    python = next((a[len("--python="):] for a in argv if a.startswith("--python=")), None)
    if python is None or "PLOOM_WORKER_TEMPLATE" in env:
        return {}
    from ploom import _template

    return _template.starter(find_utility("ploom-explore"), python)


def find_utility(name: str) -> str:
    """Finds a ploom utility: in $PLOOM_BIN_DIR, beside this interpreter (a
    venv's bin/), or on PATH."""
    bin_dir = os.environ.get("PLOOM_BIN_DIR")
    if bin_dir:
        path = os.path.join(bin_dir, name)
        if os.access(path, os.X_OK):
            return path
        raise RuntimeError(f"ploom: PLOOM_BIN_DIR is {bin_dir!r} but it holds no executable {name!r}")
    beside = os.path.join(os.path.dirname(sys.executable), name)
    if os.access(beside, os.X_OK):
        return beside
    found = shutil.which(name)
    if found:
        return found
    raise RuntimeError(
        f"ploom: cannot find the {name!r} utility (looked in PLOOM_BIN_DIR, "
        f"{os.path.dirname(sys.executable)!r} and PATH); build ploom with `make` and use "
        "its .venv, or set PLOOM_BIN_DIR to the folder that holds the utilities"
    )


def unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    seen: dict = {}
    for name, value in pairs:
        if name in seen:
            raise ValueError(f"duplicate key {name!r}")
        seen[name] = value
    return seen


def loads_strict(text: str) -> Any:
    """json.loads, refusing an object with two members of one name: JSON
    leaves their meaning open, and ploom's C readers refuse them too, so
    that every reader of a trace reads the same document."""
    return json.loads(text, object_pairs_hook=unique_keys)


def run(
    argv: list[str],
    env: dict,
    echo_stderr: bool = True,
    stdin: Any = subprocess.DEVNULL,
    hold_usage_error: bool = False,
    progress: Callable[[dict], Any] | None = None,
) -> tuple[int, str, str]:
    """Runs the utility; its stderr is kept, and goes to ours as it comes
    when echo_stderr is true.  With hold_usage_error, the start of it waits
    until it is known not to be a usage error (usage_error), which never
    goes to ours.  With progress, the utility's ``--progress=json`` lines
    go to that function instead, and are neither kept nor echoed.

    One thread multiplexes both pipes, so that Ctrl-C (delivered to the main
    thread) interrupts the wait at once; the utility is then terminated,
    which ends its worker and children.
    """
    # lets the utility stop (and stop its worker) if this process is killed
    env = dict(env, PLOOM_CALLER_PID=str(os.getpid()), **template_env(argv, env))
    proc = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None  # both PIPE
    out_chunks: list[bytes] = []
    err_chunks: list[bytes] = []
    held: bytes | None = b"" if hold_usage_error and echo_stderr else None
    reports = ProgressLines(progress) if progress else None
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ, out_chunks)
            sel.register(proc.stderr, selectors.EVENT_READ, err_chunks)
            while sel.get_map():
                for key, _ in sel.select():
                    data = os.read(key.fd, 65536)
                    eof = not data
                    if key.data is err_chunks and reports is not None:
                        data = reports.rest() if eof else reports.feed(data)
                    if eof:
                        sel.unregister(key.fileobj)
                    if not data:
                        continue
                    key.data.append(data)
                    if key.data is not err_chunks or not echo_stderr:
                        continue
                    if held is not None:
                        held += data
                        if usage_error(held.decode("utf-8", "replace")) is not False:
                            continue
                        data, held = held, None
                    pass_through(data)
        code = proc.wait()
        if held and not usage_error(held.decode("utf-8", "replace")):
            pass_through(held)
    except KeyboardInterrupt:
        # Ctrl-C: the utility stops too (a terminal sent it the signal as
        # well; this sends it again for a caller that got it alone), keeps
        # the traces it found and says so in one line, passed on here
        interrupt(proc, echo_stderr)
        raise
    except BaseException:
        # the like of SystemExit: do not leave the utility running.
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        raise
    finally:
        proc.stdout.close()
        proc.stderr.close()
    out = b"".join(out_chunks).decode("utf-8", "replace")
    return code, out, b"".join(err_chunks).decode("utf-8", "replace")


def interrupt(proc: subprocess.Popen, echo_stderr: bool, grace_s: float = 10.0) -> None:
    """Sends the utility SIGINT, passes on what it writes on stderr until
    it exits (its line that says how far it got and where the traces are),
    and kills it if it takes longer than grace_s."""
    import signal
    import time

    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGINT)
    deadline = time.monotonic() + grace_s
    assert proc.stderr is not None  # run's PIPE
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stderr, selectors.EVENT_READ)
        while (left := deadline - time.monotonic()) > 0:
            if not sel.select(left):
                continue
            data = os.read(proc.stderr.fileno(), 65536)
            if not data:
                break
            if echo_stderr:
                # a progress line of --progress=json is no message
                pass_through(b"".join(line for line in data.splitlines(True) if not line.startswith(b"{")))
    try:
        proc.wait(timeout=max(deadline - time.monotonic(), 0.1))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class ProgressLines:
    """Takes ``ploom-explore --progress=json``'s lines out of its stderr, for
    a function; the other lines, its messages, are left as they came."""

    def __init__(self, report: Callable[[dict], Any]) -> None:
        self._report = report
        self._partial = b""

    def feed(self, data: bytes) -> bytes:
        """The data that is not progress, of whole lines; the last line waits
        for its end."""
        *lines, self._partial = (self._partial + data).split(b"\n")
        rest = []
        for line in lines:
            report = None
            if line.startswith(b"{"):
                try:
                    report = json.loads(line)
                except ValueError:
                    pass
            # a scenario's own output may start with a brace too
            if isinstance(report, dict) and "schedules" in report and "done" in report:
                self._report(report)
            else:
                rest.append(line + b"\n")
        return b"".join(rest)

    def rest(self) -> bytes:
        """A last line without its end: never progress, which ends its lines."""
        rest, self._partial = self._partial, b""
        return rest


def pass_through(data: bytes) -> None:
    try:
        sys.stderr.write(data.decode("utf-8", "replace"))
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # our stderr is gone; the text is still kept for the error


def stderr_tail(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    if not lines:
        return ""
    return ":\n" + "\n".join(lines[-20:])
