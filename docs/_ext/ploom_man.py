"""The ``ploom-man`` directive: a man page from man/ rendered into the site.

``.. ploom-man:: ploom-explore.1`` runs ``groff -man -Tutf8`` on
``man/ploom-explore.1`` at build time, so the site always shows the pages
as they are in the tree, and turns groff's overstrike output into HTML:
bold where man(1) shows bold, italics where it underlines, and a link for
every ``ploom(1)`` or ``ploom-NAME(N)`` that has a page in the site.  A page that groff warns
about fails the build (Sphinx runs with -W), as ``make lint`` does.
"""

from __future__ import annotations

import html
import os
import re
import subprocess

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.errors import ExtensionError

# groff's width for the web page, and no hyphenation: a hyphen in a name
# such as ploom-explore would be ambiguous on a page read by copy and paste.
GROFF = ["groff", "-man", "-Tutf8", "-ww", "-P-c", "-rLL=78n", "-rHY=0"]
REFERENCE = re.compile(r"\b(ploom(?:-[a-z-]+)?)\((\d)\)")


def render(path: str) -> str:
    """The page as groff formats it for a terminal, with overstrikes."""
    env = dict(os.environ, GROFF_NO_SGR="1", LC_ALL="C.UTF-8")
    proc = subprocess.run(GROFF + [path], capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0 or proc.stderr.strip():
        raise ExtensionError(f"groff failed on {path}: {proc.stderr.strip() or proc.returncode}")
    return proc.stdout


def to_html(text: str, pages: set[str]) -> str:
    """Overstruck text to HTML: ``X\\bX`` is bold, ``_\\bX`` is italic."""
    out = []
    for line in text.rstrip("\n").split("\n"):
        runs: list[tuple[str, str]] = []  # (style, characters)
        i = 0
        while i < len(line):
            if i + 2 < len(line) and line[i + 1] == "\b":
                first, char = line[i], line[i + 2]
                style = "i" if first == "_" and char != "_" else "b"
                i += 3
            else:
                style, char = "", line[i]
                i += 1
            if runs and runs[-1][0] == style:
                runs[-1] = (style, runs[-1][1] + char)
            else:
                runs.append((style, char))
        text_line = "".join(chars for _, chars in runs)
        rendered = "".join(
            f"<{style}>{html.escape(chars)}</{style}>" if style else html.escape(chars) for style, chars in runs
        )
        out.append(_link(rendered, text_line, pages))
    return "\n".join(out)


def _link(rendered: str, plain: str, pages: set[str]) -> str:
    """Links the ploom-NAME(N) references of a line to their pages."""
    for name, section in set(REFERENCE.findall(plain)):
        if f"{name}.{section}" not in pages:
            continue
        target = f'<a href="{name}.html">'
        # the name may be bold or plain; link whichever form the line has
        for form in (f"<b>{name}</b>({section})", f"{name}({section})"):
            if form in rendered:
                rendered = rendered.replace(form, f"{target}{form}</a>")
                break
    return rendered


class PloomMan(Directive):
    """``.. ploom-man:: NAME.N``: the page man/NAME.N, rendered by groff."""

    required_arguments = 1
    has_content = False

    def run(self):
        env = self.state.document.settings.env
        man_dir = os.path.join(env.srcdir, env.config.ploom_man_dir)
        name = self.arguments[0]
        path = os.path.normpath(os.path.join(man_dir, name))
        if not os.path.isfile(path):
            raise self.error(f"no man page {path}")
        env.note_dependency(path)
        pages = set(os.listdir(man_dir))
        body = to_html(render(path), pages)
        # raw HTML: builders other than html (doctest, linkcheck) skip it
        return [nodes.raw("", f'<pre class="ploom-man">{body}</pre>\n', format="html")]


def setup(app):
    app.add_config_value("ploom_man_dir", "../man", "env")
    app.add_directive("ploom-man", PloomMan)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
