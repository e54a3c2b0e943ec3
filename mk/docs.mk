# mk/docs.mk - make docs and make test-docs, the Sphinx site of docs/.
# Sphinx and what it pulls in, pinned in docs/requirements.txt, go into .venv
# beside the development tools; the stamp is made again whenever .venv is.
# The site is rebuilt from scratch each time so that -W sees every page's
# warnings, not only those of the pages that changed (a page that one of
# Sphinx's own, such as search.html, would replace is one: docs/_ext/
# ploom_pages.py).  docs/test_examples.py runs every code block of the pages
# (see its docstring) and checks that every page is in the built site.
.PHONY: docs test-docs
DOCS_STAMP := $(VENV)/.ploom-docs-stamp
DOCS_OUT := $(BUILD)/docs

docs: all $(DOCS_STAMP)
	$(say) SPHINX "$(DOCS_OUT)/html"
	$(Q)rm -rf $(DOCS_OUT)
	$(Q)$(VENV)/bin/sphinx-build -W --keep-going -q -b html -d $(DOCS_OUT)/doctrees docs $(DOCS_OUT)/html
	@echo "docs: built $(DOCS_OUT)/html/index.html"

# The examples marked soak (docs/test_examples.py says how) run in make
# soak; here pytest counts them as deselected.
test-docs: docs
	$(VENV)/bin/python -m pytest -p no:cacheprovider -m "not soak" docs/test_examples.py

$(DOCS_STAMP): docs/requirements.txt $(VENV_STAMP)
	$(say) PIP "docs/requirements.txt into $(VENV)"
	$(Q)$(VENV)/bin/python -m pip install --disable-pip-version-check -q -r docs/requirements.txt
	@touch $@
