"""The sizes and seeds that the Python tests read from the environment
(``PLOOM_DIFF_SEEDS=N`` and the like: the Makefile's test-python and soak).

Every such variable is read here, never with ``int()`` alone, which takes
``"0"``, ``" 5 "`` and ``"1_000"``: a test told to run zero seeds runs
nothing and passes.  A value that is not what the variable must hold is a
ValueError naming the variable and its value, raised as the test module is
imported, so that pytest reports it and exits non-zero before any test
runs.
"""

import os
import re

# ASCII digits only: str.isdigit() also takes "²" and other scripts' digits
_WHOLE = re.compile(r"[0-9]+")


def count(name: str, default: int) -> int:
    """``name``'s value, a whole number from 1 (how many seeds, programs,
    schedules), or ``default`` when it is not set."""
    return _whole(name, default, 1, "a count")


def start(name: str, default: int = 0) -> int:
    """``name``'s value, a whole number from 0 (the first seed), or
    ``default`` when it is not set."""
    return _whole(name, default, 0, "a seed")


def _whole(name: str, default: int, least: int, what: str) -> int:
    value = os.environ.get(name)
    if value is None:
        return default
    if not _WHOLE.fullmatch(value) or int(value) < least:
        raise ValueError(f"{name}={value!r} is not {what}: a whole number from {least}")
    return int(value)
