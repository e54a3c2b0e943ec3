# Makefile - builds ploom and runs its tests (GNU make).
#
#   make                 libploom, the utilities, the ploom._ploom extension,
#                        and a Python 3.13 environment in .venv/ where
#                        `import ploom` works and the utilities are on bin/
#   make check           every test: lint, C unit tests, bats tests, the
#                        sanitizers, the fuzzers, doc examples, packaging, pytest on
#                        CPython 3.13, and on 3.14 the files that depend on the
#                        interpreter (and all on $PLOOM_PYTHON_FT, if set)
#   make test-c          the C tests of tests/c, one target each: make test-c-NAME
#                        runs tests/c/test_NAME.c (make test-c-dpor)
#   make test-python     pytest on each interpreter, as make check runs it
#                        (test-python-3.13, test-python-3.14, test-python-ft)
#   make example         ploom-explore on examples/bank_account.py
#   make lint            no include cycle among lib/'s modules
#                        (scripts/check-includes), shellcheck, cppcheck, ruff,
#                        mypy on python/ploom ([tool.mypy] in pyproject.toml),
#                        groff checks, and the extension compiled for
#                        free-threaded CPython
#   make bench           cost of a schedule against a fresh interpreter,
#                        schedules to the first failure under each search order,
#                        and the readers at the sizes of scripts/bench-scale
#   make soak            the long runs make check leaves out: the C tests on
#                        many more generated programs, the differential test of
#                        --reduction=dpor against DFS on 5000 generated programs
#                        (SOAK_SEEDS, from SOAK_START), and the Python tests
#                        (the real libraries' whole suites under pytest
#                        --ploom among them) and documentation examples
#                        marked soak; half an hour
#                        or more on 2 cores.  It fails
#                        where `make check` skips, when ploom-explore has no
#                        dpor or no "outcomes" statistics yet
#   make docs            the HTML site in build/docs/html (Sphinx, -W)
#   make test-docs       builds the site, then runs every code example in it
#   make test-sanitize   C tests (fewer generated programs) and a slice of bats
#                        (SAN_BATS) against ASan+UBSan builds of lib/ and cmd/
#   make fuzz            the libFuzzer targets of tests/fuzz (trace reader, worker
#                        records, statistics and merge), built by clang with
#                        ASan+UBSan, FUZZ_SECONDS each (default 40); make check
#                        runs them too, CHECK_FUZZ_SECONDS (80) shared among them
#   make wheel           ploom's sdist and, built from it, its manylinux wheels for
#                        CPython 3.13 and 3.14 (cJSON and libgit2 inside), in
#                        build/dist (tests/packaging/build-wheel, auditwheel)
#   make test-install-matrix  test-packaging's installs from a clone (pip, uv pip,
#                        uv add) on both 3.13 and 3.14, not one each
#   make install         the utilities (and man pages) under $(DESTDIR)$(PREFIX)
#   make clean           remove what the build made (keeps .venv; see distclean)
#
# Options: V=1 shows whole command lines, not one short line each;
# SANITIZE=address,undefined builds lib/, cmd/ and tests/c with
# those sanitizers, float-cast-overflow included (not the extension: it is
# loaded by an interpreter that is not sanitized); FUZZ_SECONDS for make
# fuzz (given to make check, it is each target's there too); PREFIX, DESTDIR for install; PLOOM_PYTHON313 picks the
# interpreter (scripts/find-python), PLOOM_PYTHON314 the 3.14 one
# (scripts/install-python314, which otherwise provisions one), PLOOM_PYTHON_FT
# a free-threaded one to test on as well; PYTEST_FLAGS, e.g. PYTEST_FLAGS='-m "not slow"';
# PLOOM_TEST_SIZE=check|sanitize|soak, how many generated programs the C
# tests compare (mk/tests.mk).
#
# The first build on a machine runs scripts/install-deps, which installs
# the Debian packages that are missing (see build/stamps/install-deps).
#
# The rules are in mk/, one file per concern: mk/build.mk (libploom, the
# utilities, the extension, .venv), mk/pyenv.mk (the 3.14 and free-threaded
# venvs), mk/tests.mk (test-c, test-bats, test-sanitize, test-python), mk/fuzz.mk,
# mk/lint.mk, mk/docs.mk, mk/package.mk (wheel, test-packaging, install,
# suites), mk/bench.mk (bench, soak, example) and mk/check.mk (make check).

SHELL := /bin/bash
comma := ,
space := $() $()
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
.SUFFIXES:
.DEFAULT_GOAL := all

# Quiet by default: a compile or a link is one short line naming what it
# makes ("  CC      build/obj/lib/dpor.o"); `make V=1` shows the whole
# command lines instead, as they run.
V ?= 0
ifeq ($(V),1)
Q :=
say := @true
else
Q := @
say := @printf '  %-7s %s\n'
endif

PREFIX ?= /usr/local
BINDIR = $(PREFIX)/bin
MANDIR = $(PREFIX)/share/man
SANITIZE ?=
PYTEST_FLAGS ?=

BUILD := build
VENV := .venv
STAMPS := $(BUILD)/stamps
DEPS_STAMP := $(STAMPS)/install-deps
VENV_STAMP := $(VENV)/.ploom-stamp
# setup.py builds the extension and the utilities when pip or uv builds
# ploom; this Makefile builds them itself, so its editable installs of the
# project (pip install -e .) take only the metadata.  tests/packaging unsets it.
export PLOOM_BUILT_BY_MAKE := 1

.PHONY: all check test-c test-bats test-sanitize test-python lint bench soak example install \
	clean distclean need-python FORCE wheel test-packaging test-install-matrix fuzz

# mk/check.mk comes last: its check-build names the products of the others.
include mk/build.mk mk/pyenv.mk mk/tests.mk mk/fuzz.mk mk/lint.mk mk/docs.mk \
	mk/package.mk mk/bench.mk mk/check.mk

clean:
	rm -rf $(BUILD) python/ploom/_ploom*.so
	rm -f $(VENV)/bin/ploom-* $(VENV)-*/bin/ploom-*

distclean: clean
	rm -rf $(VENV) $(VENV)-* .ploom
