"""On a free-threaded CPython, ploom must not turn the GIL back on.

CPython re-enables the GIL when it imports an extension that does not declare
Py_mod_gil = Py_MOD_GIL_NOT_USED (and says so on stderr).  These tests run
only on a free-threaded build: `make check` runs the suite on one when
PLOOM_PYTHON_FT names it.  Elsewhere they are skipped, and the skip reason
says so (pytest's -ra summary lists it).
"""

import os
import subprocess
import sys
import sysconfig

import pytest

import ploom

FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))

pytestmark = pytest.mark.skipif(
    not FREE_THREADED,
    reason=(
        "expected on a CPython with the GIL (Py_GIL_DISABLED is not set); "
        f"{sys.executable} has it; `make check PLOOM_PYTHON_FT=/path/to/python3.14t` runs them on a free-threaded one"
    ),
)


def _fresh_interpreter(code):
    """Runs code in a new interpreter of this build, without a PYTHON_GIL
    setting that would force the GIL on or off whatever ploom declares."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHON_GIL"}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


def test_importing_ploom_leaves_the_gil_disabled():
    done = _fresh_interpreter(
        "import sys\n"
        "assert not sys._is_gil_enabled(), 'the GIL was on before ploom was imported'\n"
        "import ploom, ploom._ploom, ploom.exploration\n"
        "print(sys._is_gil_enabled())\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False", done.stderr
    assert "GIL" not in done.stderr, done.stderr


def gil_stays_disabled():
    """A scenario: in ploom's worker, with the fork server and the scheduler
    running, the GIL is still off."""
    assert not sys._is_gil_enabled(), "the GIL is enabled in ploom's worker"
    cell = ploom.SharedCell(0)
    task = ploom.Thread(target=lambda: cell.write(cell.read() + 1))
    task.start()
    task.join()
    assert not sys._is_gil_enabled(), "the GIL is enabled in ploom's worker after a task ran"


def test_the_gil_stays_disabled_in_the_worker(tmp_path):
    stats = ploom.check(gil_stays_disabled, ploom.Config(trace_dir=str(tmp_path)))
    assert stats.schedules >= 1
