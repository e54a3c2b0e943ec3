"""Copies of the README's bank example (tests/fixtures/bank.py: scenario,
and locked with the lock) that a test may edit (to change the scenario's
source under a saved trace), written into the test's folder."""

import pathlib
import re
import shutil

FIXTURE = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "bank.py"


def module_name(folder: pathlib.Path) -> str:
    """A module name of its own for each test folder, so that tests in one
    process never find another test's copy in sys.modules."""
    return "bank_" + re.sub(r"\W", "_", folder.name)


def write_bank(folder: pathlib.Path, name: str | None = None) -> pathlib.Path:
    """Copies the fixture to folder/NAME.py (NAME from module_name() by default)."""
    path = folder / f"{name or module_name(folder)}.py"
    shutil.copyfile(FIXTURE, path)
    return path
