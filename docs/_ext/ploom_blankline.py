"""Shows doctest's ``<BLANKLINE>`` marker as the empty line it stands for.

A console block's expected output is compared as doctest compares it
(docs/test_examples.py), so an empty line inside it must be written
``<BLANKLINE>``: reStructuredText would otherwise end the block there.  A
reader of the site must see the output as the program prints it, so the
marker is taken out of every literal block after the page is parsed and
before it is written.
"""

from __future__ import annotations

from docutils import nodes

MARKER = "<BLANKLINE>"


def _blank_lines(app, doctree) -> None:
    for block in doctree.findall(nodes.literal_block):
        text = block.astext()
        if MARKER not in text:
            continue
        lines = ["" if line.strip() == MARKER else line for line in text.split("\n")]
        # keep the block's attributes (language, caption, highlighting)
        # and replace only its text
        block.children = []
        block += nodes.Text("\n".join(lines))
        block.rawsource = "\n".join(lines)


def setup(app):
    app.connect("doctree-read", _blank_lines)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
