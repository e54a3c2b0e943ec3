"""The checklists of docs/development.rst (adding a search, an operation, a
primitive built in Python, an output format) name the files a change
touches: each path they name is a file or folder of the repository, so
that a file renamed, split or gone shows here rather than in the next
person's change.  Those with a budget of files keep to it: one numbered
step a file, besides the tests, as many as the text says.  A path with a placeholder (``lib/<name>.c``) names a
file to be made: its folder must be there.  Read from the files: nothing
is built."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "development.rst"
CHECKLISTS = (
    "Adding a search",
    "Adding an operation",
    "Adding a primitive built in Python",
    "Adding an output format",
)
# a literal that starts with one of the repository's top folders is a path
TOP = ("lib/", "cmd/", "pyext/", "python/", "tests/", "docs/", "man/", "mk/", "scripts/", "examples/")


def _sections(text):
    """{title: body} of the sections of text, a title being a line
    underlined by dashes of its length."""
    lines = text.splitlines()
    starts = [i for i in range(len(lines) - 1)
              if lines[i] and re.fullmatch(r"-+", lines[i + 1]) and len(lines[i + 1]) == len(lines[i])]
    return {lines[i]: "\n".join(lines[i + 2:(starts[k + 1] if k + 1 < len(starts) else len(lines))])
            for k, i in enumerate(starts)}


def _paths(body):
    """The repository paths a section names as ``literals``, once each;
    ``lib/<name>.{h,c}`` is two."""
    found = []
    for literal in re.findall(r"``([^`]+)``", body):
        if not literal.startswith(TOP) or " " in literal:
            continue
        m = re.fullmatch(r"(.*)\.\{([^}]*)\}", literal)
        names = [f"{m.group(1)}.{ext}" for ext in m.group(2).split(",")] if m else [literal]
        found += [n for n in names if n not in found]
    return found


# the most files besides its tests a change of each kind may touch
BUDGETS = {
    "Adding a search": 4,
    "Adding a primitive built in Python": 4,
    "Adding an output format": 3,
}
NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def _steps(body):
    """The numbered steps (``#.``) of a checklist, each as its text."""
    steps, current = [], None
    for line in body.splitlines():
        if line.startswith("#. "):
            current = [line[3:]]
            steps.append(current)
        elif current is not None and line.startswith("   "):
            current.append(line.strip())
        elif line.strip():
            current = None
    return [" ".join(step) for step in steps]


def _checklist(title):
    sections = _sections(DOC.read_text(encoding="utf-8"))
    assert title in sections, f"no section '{title}' in docs/development.rst"
    return sections[title]


@pytest.mark.parametrize("title", CHECKLISTS)
def test_every_path_a_checklist_names_is_there(title):
    paths = _paths(_checklist(title))
    assert paths, f"'{title}' names no file"
    missing = []
    for path in paths:
        # a file to be made: the folder it goes in
        where = ROOT / path.split("<")[0].rpartition("/")[0] if "<" in path else ROOT / path
        if not where.exists():
            missing.append(path)
    assert not missing, f"'{title}' in docs/development.rst names what is not there: {', '.join(missing)}"


def test_the_paths_of_a_section_are_read_as_the_checklists_write_them():
    text = """Adding a thing
--------------

#. ``lib/kind.c`` and ``lib/<name>.{h,c}``; ``man/ploom-show.1``.
#. Not paths: ``enum format``, ``refusals[]``, ``kind.c``, ``lib/a b``.

Next
----

``lib/other.c``
"""
    sections = _sections(text)
    assert list(sections) == ["Adding a thing", "Next"]
    assert _paths(sections["Adding a thing"]) == ["lib/kind.c", "lib/<name>.h", "lib/<name>.c", "man/ploom-show.1"]


@pytest.mark.parametrize("title", sorted(BUDGETS))
def test_a_checklist_keeps_to_its_budget_of_files(title):
    body = _checklist(title)
    files = [step for step in _steps(body) if not step.startswith("Tests")]
    said = re.search(r"touches\s+(\w+)\s+files\s+besides\s+its\s+tests", body)
    assert said, f"'{title}' does not say how many files it touches"
    assert NUMBERS.get(said[1]) == len(files), (
        f"'{title}' says {said[1]} files but has {len(files)} steps besides its tests"
    )
    assert len(files) <= BUDGETS[title], f"'{title}' touches {len(files)} files, more than {BUDGETS[title]}"
    # each step names the one file it touches first
    for step in files:
        assert _paths(step), f"a step of '{title}' names no file: {step[:60]}"


def test_the_steps_of_a_checklist_are_read_with_their_continuation_lines():
    body = """Intro.

#. ``lib/a.c``: one
   and more.
#. Tests: none.

After.
"""
    assert _steps(body) == ["``lib/a.c``: one and more.", "Tests: none."]
