"""Runs every code example of the documentation (``make test-docs``).

Each page is a session in a fresh temporary folder, its blocks run in page
order:

- ``.. code-block:: python`` (or ``toml``, ``ini``, ``text``) with
  ``:caption: PATH`` writes the block to PATH in that folder; a later block
  with the same caption replaces the file.
- ``.. code-block:: console`` runs each ``$ COMMAND`` with bash in that folder
  (the build's .venv/bin first on PATH, standard error merged into standard
  output) and compares the output with the lines below it, as doctest does
  with ELLIPSIS: ``...`` matches anything, ``<BLANKLINE>`` an empty line.
- ``.. code-block:: pycon`` is a doctest, run by the .venv's Python in that
  folder (which is on sys.path), with ELLIPSIS.

A block preceded by the comment ``.. untested: REASON`` is skipped, and the
reason is reported; any other code block, such as a Python block without a
caption, fails the test, so no example goes unchecked by accident.

A console or pycon block preceded by ``.. soak: REASON`` is too long for
``make check``: test_page_examples leaves it out, and a second test of the
page, marked soak (``make soak`` runs it, ``make check`` deselects it and
its summary says so), runs the whole page, that block included.

README.md is a page too, in Markdown: a fenced block (```python,
```console, ```pycon) runs the same way, and the HTML comments
``<!-- file: PATH -->``, ``<!-- untested: REASON -->`` and
``<!-- soak: REASON -->`` on the lines before it stand for ``:caption:`` and
the two markers.
"""

from __future__ import annotations

import doctest
import html
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
VENV_BIN = Path(sys.executable).parent
README = ROOT / "README.md"
PAGES = [*sorted(p for p in DOCS.rglob("*.rst") if "_build" not in p.parts), README]
PAGE_IDS = [str(p.relative_to(DOCS if p.is_relative_to(DOCS) else ROOT)) for p in PAGES]
FILE_LANGUAGES = {"python", "toml", "ini", "text"}
DIRECTIVE = re.compile(r"^( *)\.\. (?:code-block|code|sourcecode):: *(\S*)\s*$")
UNTESTED = re.compile(r"^ *\.\. untested: *(\S.*)$")
SOAK = re.compile(r"^ *\.\. soak: *(\S.*)$")
LITERAL = re.compile(r"(^|[^:]):: *$")
FENCE = re.compile(r"^```(\S*)\s*$")
MD_MARKER = re.compile(r"^<!-- *(file|untested|soak): *(\S.*?) *-->$")
CHECKER = doctest.OutputChecker()
FLAGS = doctest.ELLIPSIS
COMMAND_TIMEOUT = 600


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the directive
    language: str
    options: dict[str, str]
    text: str
    untested: str | None = None
    soak: str | None = None
    where: str = field(init=False)

    def __post_init__(self):
        self.where = f"{self.page.relative_to(ROOT)}:{self.line}"


def parse(page: Path) -> list[Block]:
    """The code blocks of a page, in order."""
    if page.suffix == ".md":
        return parse_markdown(page)
    return parse_rst(page)


def parse_markdown(page: Path) -> list[Block]:
    """The fenced code blocks of a Markdown page, in order, with the
    markers of the comment lines just before each (blank lines between
    them allowed, any other line drops them)."""
    lines = page.read_text(encoding="utf-8").split("\n")
    blocks = []
    markers: dict[str, str] = {}
    i = 0
    while i < len(lines):
        marker, fence = MD_MARKER.match(lines[i]), FENCE.match(lines[i])
        if marker:
            markers[marker.group(1)] = marker.group(2)
            i += 1
            continue
        if not fence:
            if lines[i].strip():
                markers = {}
            i += 1
            continue
        start = i + 1
        i += 1
        body = []
        while i < len(lines) and lines[i].rstrip() != "```":
            body.append(lines[i])
            i += 1
        if i == len(lines):
            pytest.fail(f"{page.relative_to(ROOT)}:{start}: a code block that never ends", pytrace=False)
        i += 1
        options = {"caption": markers["file"]} if "file" in markers else {}
        text = "\n".join(body).strip("\n") + "\n"
        blocks.append(
            Block(page, start, fence.group(1) or "default", options, text, markers.get("untested"), markers.get("soak"))
        )
        markers = {}
    return blocks


def parse_rst(page: Path) -> list[Block]:
    """The code blocks of an reStructuredText page, in order."""
    lines = page.read_text(encoding="utf-8").split("\n")
    blocks = []
    untested = soak = None
    i = 0
    while i < len(lines):
        m_untested, m_soak = UNTESTED.match(lines[i]), SOAK.match(lines[i])
        if m_untested or m_soak:
            if m_untested:
                untested = m_untested.group(1)
            else:
                soak = m_soak.group(1)
            i += 1
            continue
        m = DIRECTIVE.match(lines[i])
        if not m:
            if lines[i].strip():
                untested = soak = None  # the markers apply to the next block only
            i += 1
            continue
        start = i + 1
        indent = len(m.group(1))
        i += 1
        options = {}
        while i < len(lines) and re.match(r"^\s+:[\w-]+:", lines[i]):
            name, _, value = lines[i].strip()[1:].partition(":")
            options[name] = value.strip()
            i += 1
        body = []
        while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > indent):
            body.append(lines[i])
            i += 1
        text = textwrap.dedent("\n".join(body)).strip("\n") + "\n"
        blocks.append(Block(page, start, m.group(2) or "default", options, text, untested, soak))
        untested = soak = None
    return blocks


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def literal_paragraphs(page: Path) -> list[str]:
    """Places where a paragraph ends in '::', an untyped literal block that
    this test would not run: the pages use code-block instead."""
    found = []
    if page.suffix != ".rst":
        return found
    for number, line in enumerate(page.read_text(encoding="utf-8").split("\n"), 1):
        if LITERAL.search(line) and not line.lstrip().startswith(".."):
            found.append(f"{page.relative_to(ROOT)}:{number}")
    return found


def run_console(block: Block, cwd: Path, env: dict) -> None:
    """Runs each $ command of a console block and compares its output."""
    commands: list[tuple[str, list[str]]] = []
    for line in block.text.rstrip("\n").split("\n"):
        if line.startswith("$ "):
            commands.append((line[2:], []))
        elif commands:
            commands[-1][1].append(line)
        else:
            pytest.fail(f"{block.where}: a console block must start with '$ COMMAND'")
    for command, expected_lines in commands:
        proc = subprocess.run(
            ["bash", "-c", command],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=COMMAND_TIMEOUT,
        )
        got = "\n".join(line.rstrip() for line in proc.stdout.split("\n")).strip("\n")
        got = got + "\n" if got else ""
        want = "\n".join(expected_lines).strip("\n")
        want = want + "\n" if want else ""
        want = want.replace("<BLANKLINE>", "")
        if not CHECKER.check_output(want, got, FLAGS):
            pytest.fail(
                f"{block.where}: `{command}` (exit {proc.returncode}) printed\n{got}\n"
                f"--- but the documentation shows\n{want}",
                pytrace=False,
            )


def run_pycon(block: Block, cwd: Path, env: dict) -> None:
    """Runs a pycon block as a doctest in the session's folder."""
    script = (
        "import doctest, sys\n"
        "sys.path.insert(0, '')\n"
        "text = sys.stdin.read()\n"
        "test = doctest.DocTestParser().get_doctest(text, {'__name__': '__doc_example__'}, "
        f"{block.where!r}, {str(block.page)!r}, {block.line})\n"
        "runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)\n"
        "runner.run(test)\n"
        "sys.exit(1 if runner.failures else 0)\n"
    )
    proc = subprocess.run(
        [str(VENV_BIN / "python"), "-c", script],
        input=block.text,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
    )
    if proc.returncode != 0:
        pytest.fail(f"{block.where}: the doctest failed:\n{proc.stdout}{proc.stderr}", pytrace=False)


def run_page(page: Path, tmp_path: Path, soak: bool) -> None:
    """Runs the page's blocks in order in tmp_path; its soak blocks too
    when soak is true, else they are left out, and said so."""
    env = dict(os.environ)
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    for name in ("PLOOM_BIN_DIR", "PYTHONPATH", "PLOOM_WORKER", "COLUMNS"):
        env.pop(name, None)
    env["COLUMNS"] = "80"  # pytest's separator lines, as shown
    assert not literal_paragraphs(page), "use '.. code-block::', which this test runs, not '::'"
    if page.suffix == ".md":
        # nothing renders the marker away there: a blank line is itself
        assert "<BLANKLINE>" not in page.read_text(encoding="utf-8"), f"{page.name} shows <BLANKLINE> to its reader"
    untested = []
    for block in parse(page):
        if block.untested:
            untested.append(f"{block.where}: {block.untested}")
            continue
        if block.soak and block.language not in ("console", "pycon"):
            pytest.fail(f"{block.where}: '.. soak:' marks a console or pycon block, which runs; "
                        f"this is a '{block.language}' block", pytrace=False)
        if block.soak and not soak:
            untested.append(f"{block.where}: left to make soak (test_page_soak_examples): {block.soak}")
            continue
        if block.language in FILE_LANGUAGES and "caption" in block.options:
            path = tmp_path / block.options["caption"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(block.text, encoding="utf-8")
        elif block.language == "console":
            run_console(block, tmp_path, env)
        elif block.language == "pycon":
            run_pycon(block, tmp_path, env)
        else:
            pytest.fail(
                f"{block.where}: a '{block.language}' block is neither a file (with :caption:, "
                "or <!-- file: PATH --> in Markdown), a console session nor a pycon doctest; mark it "
                "'.. untested: REASON' (<!-- untested: REASON -->) if it cannot run",
                pytrace=False,
            )
    for line in untested:
        print(f"untested: {line}")


@pytest.mark.parametrize("page", PAGES, ids=PAGE_IDS)
def test_page_examples(page, tmp_path):
    run_page(page, tmp_path, soak=False)


SOAK_PAGES = [(p, name) for p, name in zip(PAGES, PAGE_IDS, strict=True) if any(b.soak for b in parse(p))]


@pytest.mark.soak
@pytest.mark.parametrize("page", [p for p, _ in SOAK_PAGES], ids=[name for _, name in SOAK_PAGES])
def test_page_soak_examples(page, tmp_path):
    run_page(page, tmp_path, soak=True)


def test_every_man_page_is_in_the_site():
    pages = {p.name for p in (ROOT / "man").iterdir() if re.search(r"\.[1-8]$", p.name)}
    documented = {
        m.group(1) for p in (DOCS / "man").glob("*.rst") for m in re.finditer(r"ploom-man:: (\S+)", p.read_text())
    }
    assert pages == documented


def test_the_site_shows_no_blankline_marker():
    """``<BLANKLINE>`` is for the comparison above; a reader sees an empty line."""
    site = ROOT / "build" / "docs" / "html"
    if not site.is_dir():
        pytest.skip(f"SKIPPED LOUDLY: the site was not built ({site} is missing); make test-docs builds it first")
    marked = [str(p.relative_to(site)) for p in site.rglob("*.html") if "BLANKLINE" in p.read_text()]
    pages_using_it = [p for p in PAGES if "<BLANKLINE>" in p.read_text()]
    assert pages_using_it, "no page uses <BLANKLINE>, so this test checks nothing"
    assert marked == []


def built_site() -> Path:
    site = ROOT / "build" / "docs" / "html"
    if not site.is_dir():
        pytest.skip(f"SKIPPED LOUDLY: the site was not built ({site} is missing); make test-docs builds it first")
    return site


def test_the_site_is_titled_ploom():
    """The front page's title and heading name the project, not "Documentation"."""
    index = (built_site() / "index.html").read_text()
    assert "<title>ploom</title>" in index
    assert re.search(r"<h1>ploom<a class=\"headerlink\"", index)
    guide = (built_site() / "guide.html").read_text()
    assert "<title>Guide &#8212; ploom</title>" in guide
    assert not [p.name for p in built_site().rglob("*.html") if "<title>Documentation" in p.read_text()]


def test_console_blocks_wrap_instead_of_running_past_the_edge():
    """Every page with a console, doctest or text block loads the style sheet that wraps them."""
    site = built_site()
    css = (site / "_static" / "ploom.css").read_text()
    rule = re.search(r"div\.highlight-console pre,[^{]*\{([^}]*)\}", css)
    assert rule and "white-space: pre-wrap" in rule.group(1)
    pages = [p for p in site.rglob("*.html") if re.search(r'class="highlight-(console|pycon|text)', p.read_text())]
    assert len(pages) >= 3
    for page in pages:
        assert re.search(r'<link rel="stylesheet"[^>]*href="(\.\./)*_static/ploom\.css', page.read_text()), page


TOCTREE = re.compile(r"^( *)\.\. toctree::\s*$")


def toctree_entries(page: Path) -> list[str]:
    """The documents a page's toctrees list, as names relative to docs/."""
    entries = []
    lines = page.read_text().split("\n")
    for i, line in enumerate(lines):
        start = TOCTREE.match(line)
        if not start:
            continue
        for entry in lines[i + 1 :]:
            if entry.strip() and _indent(entry) <= len(start.group(1)):
                break
            entry = entry.strip()
            if not entry or entry.startswith(":"):
                continue
            # "Title <name>" names its document in the brackets
            name = re.fullmatch(r".*<(.+)>", entry)
            name = name.group(1) if name else entry
            folder = page.parent.relative_to(DOCS)
            entries.append(name.lstrip("/") if name.startswith("/") else str(folder / name))
    return entries


def page_title(page: Path) -> str:
    """The first heading of a reStructuredText page (a line underlined), as
    the site shows it: inline literals without their backquotes (which keep
    Sphinx's smart quotes from making ``--`` a dash)."""
    lines = page.read_text().split("\n")
    for text, under in zip(lines, lines[1:], strict=False):
        if text.strip() and re.fullmatch(r"([=\-~^\"'`#*+])\1{2,}", under.strip()) and len(under) >= len(text):
            return text.strip().replace("``", "")
    raise AssertionError(f"{page} has no heading")


SOURCES = {str(p.relative_to(DOCS).with_suffix("")): p for p in PAGES if p.suffix == ".rst"}


def test_every_toctree_entry_is_a_page_and_every_page_is_in_a_toctree():
    listed = {entry for page in SOURCES.values() for entry in toctree_entries(page)}
    assert {"guide", "man/ploom-explore"} <= listed, "the toctrees were not read"
    assert sorted(listed - SOURCES.keys()) == []
    assert sorted(SOURCES.keys() - listed - {"index"}) == []


def test_every_page_is_in_the_site_under_its_own_title():
    """A page named as one of Sphinx's own (search, genindex, py-modindex)
    is replaced by it in the built site: its name leads to Sphinx's page,
    whose heading is not the page's."""
    site = built_site()
    missing, replaced = [], []
    for name, page in sorted(SOURCES.items()):
        built = site / f"{name}.html"
        if not built.is_file():
            missing.append(name)
            continue
        h1 = re.search(r"<h1[^>]*>(.*?)</h1>", built.read_text(), re.S)
        heading = h1 and html.unescape(re.sub(r"<a class=\"headerlink\".*?</a>|<[^>]+>", "", h1.group(1))).strip()
        if heading != page_title(page):
            replaced.append(f"{name}.html: expected the heading {page_title(page)!r}, found {heading!r}")
    assert (missing, replaced) == ([], [])
