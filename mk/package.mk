# mk/package.mk - make wheel, test-packaging, test-install-matrix, suites
# and install.

# The sdist and the wheels a release would publish, from a clean copy of
# the repository: the extension, the six utilities (installed to bin/),
# the stubs, and the libraries they need that manylinux does not promise
# (auditwheel).  test-packaging builds them too and installs them into fresh
# venvs (see tests/packaging/run); test-install-matrix also runs each
# install from a clone on both interpreters (half a minute more).
wheel: $(VENV_STAMP)
	@py314=$$(scripts/install-python314); \
	tests/packaging/build-wheel $(BUILD)/dist $(PYTHON313) "$$py314"

test-packaging: $(VENV_STAMP)
	tests/packaging/run

test-install-matrix: $(VENV_STAMP)
	tests/packaging/run --all

# Real libraries' own test suites, unmodified, for pytest --ploom: the
# tests/ folders of the sdists of SUITES, the versions uv.lock pins (the
# libraries themselves are in the dev group), checked against uv.lock's
# hashes and unpacked into SUITES_DIR.  tests/python/test_real_suites.py
# runs the same script itself (so make check fetches them on a fresh
# machine, and skips saying so only when the package index cannot be
# reached), then a slice of each suite under pytest --ploom; make soak the
# whole suites.  Keep SUITES and its LIBRARIES the same.
SUITES := dbutils fasteners
SUITES_DIR := $(BUILD)/suites
.PHONY: suites
suites: $(VENV_STAMP)
	$(Q)$(VENV)/bin/python scripts/fetch-suites $(SUITES_DIR) $(SUITES)

install: $(BINS)
	install -d '$(DESTDIR)$(BINDIR)'
	$(if $(BINS),install -m 755 $(BINS) '$(DESTDIR)$(BINDIR)/')
	$(if $(filter %.1,$(MAN_PAGES)),install -d '$(DESTDIR)$(MANDIR)/man1' && install -m 644 $(filter %.1,$(MAN_PAGES)) '$(DESTDIR)$(MANDIR)/man1/')
	$(if $(filter %.5,$(MAN_PAGES)),install -d '$(DESTDIR)$(MANDIR)/man5' && install -m 644 $(filter %.5,$(MAN_PAGES)) '$(DESTDIR)$(MANDIR)/man5/')
