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


def add_lock(path, around_check=True):
    """The fix: a lock around the check and the withdrawal (or, with
    around_check false, around the write alone, which fixes nothing)."""
    text = path.read_text(encoding="utf-8")
    old_body = "        if balance.read() >= 100:\n            balance.write(balance.read() - 100)\n"
    if around_check:
        new_body = "        with lock:\n" + "".join("    " + line + "\n" for line in old_body.splitlines())
    else:
        new_body = (
            "        if balance.read() >= 100:\n"
            "            with lock:\n"
            "                balance.write(balance.read() - 100)\n"
        )
    old_cell = '    balance = ploom.SharedCell(100, name="balance")\n'
    assert old_body in text and old_cell in text
    text = text.replace(old_body, new_body).replace(old_cell, old_cell + "    lock = ploom.Lock()\n")
    path.write_text(text, encoding="utf-8")
