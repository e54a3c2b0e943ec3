"""The user's own project: the code a check patches and instruments by
default, beside the scenario's module.

A scenario file that calls ``threading.Thread`` means a ploom task, and the
modules of the user's project that it imports are the code under test as
much as the scenario itself: a race in them that the search did not see
would pass.  So the worker patches (``ploom._patch``) and instruments
(``ploom._instrument``) every module whose file lies under the project's
root, and none that lies in the standard library, in an environment's
``site-packages`` (a library is patched when it is named), or in ploom.

The root is the one a trace records its paths against: the work tree of
the nearest git repository at or above the scenario's file (the nearest
``.git``, a folder or a gitlink file); outside git, the nearest folder at
or above it that holds a project's settings (``pyproject.toml``,
``setup.py``, ``setup.cfg``, ``pytest.ini``, ``tox.ini``: where pytest
would find its rootdir), so that a package beside the tests folder is
the project's too; else the folder the scenario is imported from.  The
worker names that root in its hello (lib/event.h), and outside git the
trace records its paths against it (source.root "project" when it lies
above the scenario's folder), so this is the one place the rule lives.  A
replay passes the root it runs in: the repository's work tree, or the
nearest folder at or above its current folder that holds the scenario at
its recorded path.
"""

from __future__ import annotations

import os
import sysconfig

_PLOOM = os.path.realpath(os.path.dirname(__file__))
_ENVIRONMENT_PARTS = ("site-packages", "dist-packages")


# files that make the folder holding them a project's root outside git
_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini")


def root_of(file: str, import_root: str) -> str:
    """The project root of the scenario at file: the nearest folder at or
    above it that holds ``.git``, else the nearest that holds one of
    _MARKERS, else import_root."""
    start = os.path.dirname(os.path.realpath(file))
    for names in ((".git",), _MARKERS):
        folder = start
        while True:
            if any(os.path.lexists(os.path.join(folder, name)) for name in names):
                return folder
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    return os.path.realpath(import_root)


def _inside(real: str, root: str) -> bool:
    try:
        return os.path.commonpath([real, root]) == root
    except ValueError:  # one relative, or on another drive
        return False


class Project:
    """Which files are the project's: under root, and outside the places
    that installed code lives in."""

    def __init__(self, root: str):
        self.root = os.path.realpath(root)
        paths = sysconfig.get_paths()
        installed = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if paths.get(key)}
        self._installed = tuple(os.path.realpath(path) for path in installed) + (_PLOOM,)

    def covers_file(self, path: str | None) -> bool:
        """Whether the module at path is the project's own code."""
        if not path or not os.path.isabs(path):
            return False  # a built-in or frozen module, or code without a file
        real = os.path.realpath(path)
        if not _inside(real, self.root) or any(_inside(real, place) for place in self._installed):
            return False
        # a virtual environment kept inside the project holds libraries
        parts = os.path.relpath(real, self.root).split(os.sep)
        return not any(part in _ENVIRONMENT_PARTS for part in parts)
