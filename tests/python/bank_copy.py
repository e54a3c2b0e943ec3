"""Copies of the README's bank example that a test may edit (to change the
scenario's source under a saved trace), written into the test's folder."""

import pathlib
import re

BANK = '''\
import ploom


def scenario():
    balance = ploom.SharedCell(100)

    def withdraw():
        if balance.read() >= 100:
            balance.write(balance.read() - 100)

    mathieu = ploom.Thread(target=withdraw)
    lucas = ploom.Thread(target=withdraw)
    mathieu.start()
    lucas.start()
    mathieu.join()
    lucas.join()
    assert balance.read() >= 0, "the account is overdrawn"


def locked():
    balance = ploom.SharedCell(100)
    lock = ploom.Lock()

    def withdraw():
        with lock:
            if balance.read() >= 100:
                balance.write(balance.read() - 100)

    mathieu = ploom.Thread(target=withdraw)
    lucas = ploom.Thread(target=withdraw)
    mathieu.start()
    lucas.start()
    mathieu.join()
    lucas.join()
    assert balance.read() >= 0, "the account is overdrawn"
'''


def module_name(folder: pathlib.Path) -> str:
    """A module name of its own for each test folder, so that tests in one
    process never find another test's copy in sys.modules."""
    return "bank_" + re.sub(r"\W", "_", folder.name)


def write_bank(folder: pathlib.Path, name: str | None = None) -> pathlib.Path:
    """Writes BANK as folder/NAME.py (NAME from module_name() by default)."""
    path = folder / f"{name or module_name(folder)}.py"
    path.write_text(BANK, encoding="utf-8")
    return path
