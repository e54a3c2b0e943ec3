"""Fails the build when a page of docs/ would be overwritten by one of Sphinx's own.

The HTML builder writes pages of its own (search.html, genindex.html and a
page per domain index, such as py-modindex.html) after the source pages,
under the same names: a source page docs/search.rst is read, linked from
every toctree, and then replaced in the site by the search form, with no
warning.  This extension warns about such a page, which ``make docs``
(``-W``) turns into a failure; docs/test_examples.py checks the built site
as well.
"""

from __future__ import annotations

from sphinx.util import logging

logger = logging.getLogger(__name__)

# The HTML builder's own pages; the domain indices are added from the
# domains themselves.
BUILDER_PAGES = {"search", "genindex", "modindex"}


def reserved_names(env) -> set[str]:
    names = set(BUILDER_PAGES)
    for domain in env.domains.sorted():
        names.update(f"{domain.name}-{index.name}" for index in domain.indices)
    return names


def _check(app, env):
    reserved = reserved_names(env)
    for docname in sorted(env.found_docs & reserved):
        logger.warning(
            "this page would be replaced in the site by Sphinx's own %s.html: rename it",
            docname,
            location=docname,
        )


def setup(app):
    app.connect("env-updated", _check)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
