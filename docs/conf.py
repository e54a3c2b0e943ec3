"""Sphinx configuration of ploom's documentation (``make docs``).

The site is built from this tree: autodoc imports ``ploom`` from python/
(the extension must be built, which ``make docs`` does first), and the man
pages are rendered from man/ by groff at build time (_ext/ploom_man.py).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_ext"))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))

import ploom  # noqa: E402  (after the path set-up above)

project = "ploom"
author = "the ploom authors"
copyright = "the ploom authors"
version = release = ploom.__version__

extensions = ["sphinx.ext.autodoc", "ploom_man", "ploom_blankline", "ploom_pages"]

root_doc = "index"
exclude_patterns = ["_build", "requirements.txt", "test_examples.py"]
templates_path = ["_templates"]
html_static_path = ["_static"]
html_css_files = ["ploom.css"]
html_theme = "alabaster"
html_title = "ploom"
html_theme_options = {
    "description": "Find thread bugs in Python. Replay the schedule that failed.",
    "page_width": "1080px",
    "sidebar_width": "230px",
}
# Every page ends with its source, so nobody needs to hunt for it.
html_show_sourcelink = True
html_last_updated_fmt = None

# The Python API page documents the objects where users find them (ploom.X),
# in the order of the source; nothing private.
autodoc_member_order = "bysource"
autodoc_typehints = "description"
add_module_names = True

# Treat every reference that does not resolve as an error (with -W).
nitpicky = True
nitpick_ignore = [
    ("py:class", "os.PathLike"),
    ("py:class", "collections.abc.Callable"),
    ("py:class", "typing.Any"),
]
