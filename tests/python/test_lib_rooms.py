"""The rooms of lib/: the table of its modules in docs/development.rst
("The modules of lib/") names every lib/*.c, and every folder of lib/ by
a row of its own (``search/``), and names nothing that is not there, so
that a file split off a module, or one that goes, shows in it.  Read from
the files: nothing is built."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
LIB = ROOT / "lib"
DOC = ROOT / "docs" / "development.rst"
SECTION = "The modules of lib/"


def _table_names(text):
    """The names of the first column of the first table after the section
    title: each ``NAME`` of a row's first cell (a cell may name several,
    a row's continuation lines name none)."""
    lines = text.splitlines()
    start = lines.index(SECTION)
    rules = [i for i in range(start, len(lines)) if re.fullmatch(r"=+( +=+)+", lines[i])]
    assert len(rules) >= 2, f"no table under '{SECTION}'"
    first, last = rules[0], rules[1]
    width = len(lines[first].split(" ")[0])
    names = []
    for line in lines[first + 1:last]:
        if line[:1] != " ":
            names += re.findall(r"``([^`]+)``", line[:width])
    return names


def _names():
    return _table_names(DOC.read_text(encoding="utf-8"))


def test_the_table_is_found_and_read():
    names = _names()
    # the bottom and the top of the graph, and a module's part
    assert {"err", "trace", "format/", "search/", "json-write"} <= set(names)
    assert len(names) == len(set(names)), "a module named twice"


def test_every_c_file_of_lib_has_a_row():
    names = set(_names())
    missing = sorted(p.name for p in LIB.glob("*.c") if p.stem not in names)
    missing += sorted(f"{d.name}/" for d in LIB.iterdir() if d.is_dir() and f"{d.name}/" not in names)
    assert not missing, f"not in the table of docs/development.rst: {', '.join(missing)}"


def test_every_row_names_a_file_of_lib():
    gone = [n for n in _names()
            if not (n.endswith("/") and (LIB / n).is_dir())
            and not (LIB / f"{n}.c").exists() and not (LIB / f"{n}.h").exists()]
    assert not gone, f"the table of docs/development.rst names no file of lib/: {', '.join(gone)}"


def test_every_file_of_a_folder_says_what_it_is():
    # a folder's files have no row each: their first comment is their row
    silent = [p.relative_to(LIB).as_posix() for d in LIB.iterdir() if d.is_dir()
              for p in sorted(d.glob("*.[ch]")) if not p.read_text(encoding="utf-8").startswith("/* ")]
    assert not silent, f"these files of lib/ do not open with a comment saying what they are: {', '.join(silent)}"


def test_a_row_is_read_by_its_first_cell_only():
    text = f"""{SECTION}
{"-" * len(SECTION)}

======================= ==========
``a``, ``b-c``          the ``x`` here is not a name
``d``                   text
                        ``e`` continues d's row
======================= ==========

======================= ==========
``f``                   a later table
======================= ==========
"""
    assert _table_names(text) == ["a", "b-c", "d"]
