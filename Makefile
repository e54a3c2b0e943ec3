# Makefile - builds ploom and runs its tests (GNU make).
#
#   make                 libploom, the utilities, the ploom._ploom extension,
#                        and a Python 3.13 environment in .venv/ where
#                        `import ploom` works and the utilities are on bin/
#   make check           every test: lint, C unit tests, bats tests, the
#                        sanitizers, the fuzzers, doc examples, packaging, pytest on
#                        CPython 3.13, and on 3.14 the files that depend on the
#                        interpreter (and all on $PLOOM_PYTHON_FT, if set)
#   make test-python     pytest on each interpreter, as make check runs it
#                        (test-python-3.13, test-python-3.14, test-python-ft)
#   make example         ploom-explore on examples/bank_account.py
#   make lint            no include cycle among lib/'s modules
#                        (scripts/check-includes), shellcheck, cppcheck, ruff,
#                        groff checks, and the extension compiled for
#                        free-threaded CPython
#   make bench           cost of a schedule against a fresh interpreter,
#                        schedules to the first failure under each search order,
#                        and the readers at the sizes of scripts/bench-scale
#   make soak            the long runs make check leaves out: the C tests on
#                        many more generated programs, the differential test of
#                        --reduction=dpor against DFS on 5000 generated programs
#                        (SOAK_SEEDS, from SOAK_START), and the Python tests
#                        and documentation examples marked soak; half an hour
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
# a free-threaded one to test on as well; PYTEST_FLAGS, e.g. PYTEST_FLAGS='-m "not slow"'.
#
# The first build on a machine runs scripts/install-deps, which installs
# the Debian packages that are missing (see build/stamps/install-deps).

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

# --- the interpreter the extension is built for -----------------------------
# Found once at parse time because the extension's file name depends on it.
# When none is found, the targets that need it fail with find-python's
# explanation (see need-python) while `make clean` still works.
PYTHON313 := $(shell scripts/find-python 2>/dev/null)
ifneq ($(PYTHON313),)
PY_CONFIG := $(shell $(PYTHON313) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"), sysconfig.get_paths()["include"])')
EXT_SUFFIX := $(word 1,$(PY_CONFIG))
PY_INCLUDE := $(word 2,$(PY_CONFIG))
else
EXT_SUFFIX := .so
PY_INCLUDE :=
endif

# --- flags -------------------------------------------------------------------
# pkg-config runs lazily, on first use inside a recipe, so that on a fresh
# machine it runs after scripts/install-deps has installed it.
PKG_CFLAGS = $(eval PKG_CFLAGS := $$(shell pkg-config --cflags libcjson libgit2))$(PKG_CFLAGS)
PKG_LIBS = $(eval PKG_LIBS := $$(shell pkg-config --libs libcjson libgit2))$(PKG_LIBS)

WARNINGS := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wwrite-strings \
	-Wformat=2 -Wvla
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -O2 -g $(WARNINGS) -fPIC
# gcc's -fsanitize=undefined leaves out float-cast-overflow (a double
# converted to an integer type that cannot hold it), which clang's includes:
# asking for undefined asks for it too.
SAN_FLAGS := $(strip $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-sanitize-recover=all \
	-fno-omit-frame-pointer) $(if $(filter undefined,$(subst $(comma), ,$(SANITIZE))), \
	-fsanitize=float-cast-overflow))

# C_FLAGS: lib/, cmd/, tests/c (sanitized when asked).  The user's CFLAGS,
# CPPFLAGS and LDFLAGS come last so they can override.
C_FLAGS = $(BASE_CFLAGS) $(SAN_FLAGS) -Ilib $(PKG_CFLAGS) $(CPPFLAGS) $(CFLAGS)
C_LDFLAGS = $(SAN_FLAGS) $(LDFLAGS)
C_LIBS = $(PKG_LIBS) -lm

# EXT_FLAGS: the extension and the unsanitized copy of lib/ it links.
# -fno-strict-aliasing as CPython builds itself and its extensions (the
# object model casts between struct types).  Python 3.13's headers are clean
# under our warnings, so none is turned off.
EXT_FLAGS = $(BASE_CFLAGS) -fno-strict-aliasing -Ilib -I$(PY_INCLUDE) $(PKG_CFLAGS) \
	$(CPPFLAGS) $(CFLAGS)
# --exclude-libs keeps libploom's symbols out of the extension's dynamic
# symbol table; --as-needed drops cJSON/libgit2 if the extension uses neither.
EXT_LDFLAGS = -shared -Wl,--exclude-libs,ALL -Wl,--as-needed $(LDFLAGS)

# --- sources and products ----------------------------------------------------
LIB_SRC := $(wildcard lib/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
LIB_A := $(BUILD)/lib/libploom.a

# One main() per cmd/ploom-*.c; any other cmd/*.c is shared by them all.
CMD_SRC := $(wildcard cmd/ploom-*.c)
CMD_SUPPORT_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(filter-out $(CMD_SRC),$(wildcard cmd/*.c)))
BINS := $(CMD_SRC:cmd/%.c=$(BUILD)/bin/%)

# One program per tests/c/test_*.c; any other tests/c/*.c is shared by them.
TEST_SRC := $(wildcard tests/c/test_*.c)
TEST_SUPPORT_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(filter-out $(TEST_SRC),$(wildcard tests/c/*.c)))
TESTS := $(TEST_SRC:tests/c/%.c=$(BUILD)/tests/%)

EXT_SRC := $(wildcard pyext/*.c)
EXT_OBJ := $(EXT_SRC:%.c=$(BUILD)/ext/%.o)
EXT := python/ploom/_ploom$(EXT_SUFFIX)
ifeq ($(SANITIZE),)
EXT_LIB := $(LIB_A)
else
EXT_LIB := $(BUILD)/nosan/libploom.a
endif
NOSAN_OBJ := $(LIB_SRC:%.c=$(BUILD)/nosan/%.o)

VENV_BINS := $(BINS:$(BUILD)/bin/%=$(VENV)/bin/%)

# Flag files: rewritten only when the flags change (e.g. SANITIZE), so that
# everything built with the old flags is rebuilt.
C_FLAGS_FILE := $(BUILD)/flags/c
EXT_FLAGS_FILE := $(BUILD)/flags/ext

SHELL_SCRIPTS := $(wildcard scripts/*) $(wildcard tests/packaging/*) .ci/run
CPPCHECK := cppcheck --quiet --error-exitcode=1 --std=c11 --inline-suppr \
	--enable=warning,performance,portability --library=posix --library=gnu \
	--suppress=missingIncludeSystem -D_GNU_SOURCE -Ilib
BATS_FILES := $(wildcard tests/bats/*.bats)
BATS_HELPERS := $(wildcard tests/bats/*.bash)
MAN_PAGES := $(wildcard man/*.1 man/*.5)

# --- top-level targets ---------------------------------------------------------
.PHONY: all check test-c test-bats test-sanitize test-python lint bench soak example install \
	clean distclean need-python FORCE wheel test-packaging test-install-matrix fuzz

all: $(LIB_A) $(BINS) $(EXT) $(VENV_STAMP) $(VENV_BINS)

# --- make check ------------------------------------------------------------------
# Every suite, CHECK_JOBS at a time (one per CPU): first what the suites need
# is built, in parallel too, so that no two suites build the same tree; then
# each suite runs with its whole output in build/check/SUITE.log
# (scripts/check-suite), saying when it starts and how it ended, and printing
# its log when it fails (V=1: always).  The last line (scripts/check-summary)
# gives every suite's counts and what was skipped and why; it fails when a
# suite failed (check-SUITE itself does not, so that the others all run).
# CHECK_RUNS, the make targets, are in decreasing order of time, so that the
# longest ones do not start last; CHECK_SUITES is the order of the summary.
CHECK_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CHECK_DIR := $(BUILD)/check
CHECK_SUITES := lint c c-asan bats bats-asan fuzz docs packaging pytest-3.13 pytest-3.14 pytest-ft
CHECK_RUNS := bats pytest-3.13 packaging c-asan pytest-3.14 fuzz docs c lint \
	$(if $(PLOOM_PYTHON_FT),pytest-ft)
.PHONY: check-build $(CHECK_RUNS:%=check-%)

check:
	@start=$$(date +%s); rm -rf $(CHECK_DIR); mkdir -p $(CHECK_DIR); \
	case " $$MAKEFLAGS" in *\ -j*|*jobserver*) jobs= ;; *) jobs=-j$(CHECK_JOBS) ;; esac; \
	echo "check: building what the suites need: the tree, the sanitized tree, the fuzzers, the 3.14 venv, Sphinx"; \
	$(MAKE) --no-print-directory $$jobs check-build; \
	echo "check: $(words $(CHECK_SUITES)) suites, $(CHECK_JOBS) at a time; each one's output is in $(CHECK_DIR)/SUITE.log"; \
	$(MAKE) --no-print-directory -k $$jobs $(CHECK_RUNS:%=check-%) || true; \
	$(if $(PLOOM_PYTHON_FT),,printf '%s\n' "skipped 0" "$(FT_SKIPPED)" > $(CHECK_DIR)/pytest-ft.result;) \
	scripts/check-summary $(CHECK_DIR) "$$start" $(CHECK_SUITES)

check-build: all sanitize-build $(FUZZ_TARGETS) venv-3.14 $(DOCS_STAMP)

# NAME KIND TARGET [WHY]: check-NAME runs `make TARGET` as the suite NAME,
# whose output scripts/check-suite reads as KIND; WHY says why pytest
# deselected the tests it counts as deselected, for the summary's list of
# what was skipped
define check_suite
check-$(1):
	@CHECK_SHOW_LOGS=$(V) CHECK_DESELECTED='$(4)' scripts/check-suite $(CHECK_DIR) $(1) $(2) \
		$(MAKE) --no-print-directory $(3)
endef
SOAK_WHY := marked soak$(comma) make soak runs them
$(eval $(call check_suite,lint,lint,lint))
$(eval $(call check_suite,c,c,test-c))
$(eval $(call check_suite,c-asan,c,test-sanitize-c))
$(eval $(call check_suite,fuzz,fuzz,fuzz $$(CHECK_FUZZ)))
$(eval $(call check_suite,docs,pytest,test-docs,$(SOAK_WHY)))
$(eval $(call check_suite,packaging,packaging,test-packaging))
$(eval $(call check_suite,pytest-3.13,pytest,test-python-3.13,$(SOAK_WHY)))
PY314_WHY := $(SOAK_WHY); or PY314_DESELECT$(comma) searches that test lib/ again$(comma) not 3.14
$(eval $(call check_suite,pytest-3.14,pytest,test-python-3.14,$(PY314_WHY)))
$(eval $(call check_suite,pytest-ft,pytest,test-python-ft,$(SOAK_WHY)))
# One after the other, never at the same time: a few tests of
# ploom-explore.bats and ploom-run-one.bats look for the processes left
# over by their scenario's command line, which the other would start too.
check-bats:
	@CHECK_SHOW_LOGS=$(V) scripts/check-suite $(CHECK_DIR) bats bats $(MAKE) --no-print-directory test-bats
	@CHECK_SHOW_LOGS=$(V) scripts/check-suite $(CHECK_DIR) bats-asan bats $(MAKE) --no-print-directory \
		test-sanitize-bats

# The differential tests of the searches hold them to DFS on programs the
# simulator generates: test_dpor on DPOR_PROGRAMS (its views and shards on
# DPOR_VIEW_PROGRAMS, and with the bounds 0, 1 and 2 on DPOR_BOUNDED_PROGRAMS),
# test_ipb on IPB_PROGRAMS, test_shard on SHARD_PROGRAMS; test_minimize holds
# the minimizer to the fewest preemptions on MINIMIZE_PROGRAMS.  make check
# runs a slice of what they can run, make soak runs many more.  test-c hands
# them to the programs as PLOOM_DPOR_PROGRAMS, PLOOM_DPOR_VIEW_PROGRAMS,
# PLOOM_DPOR_BOUNDED_PROGRAMS, PLOOM_IPB_PROGRAMS, PLOOM_SHARD_PROGRAMS and
# PLOOM_MINIMIZE_PROGRAMS, which, set in the environment, are their defaults:
# PLOOM_DPOR_PROGRAMS=N make test-c runs N, as build/tests/test_dpor does alone.
DPOR_PROGRAMS ?= $(or $(PLOOM_DPOR_PROGRAMS),3000)
DPOR_VIEW_PROGRAMS ?= $(or $(PLOOM_DPOR_VIEW_PROGRAMS),300)
DPOR_BOUNDED_PROGRAMS ?= $(or $(PLOOM_DPOR_BOUNDED_PROGRAMS),500)
MINIMIZE_PROGRAMS ?= $(or $(PLOOM_MINIMIZE_PROGRAMS),300)
IPB_PROGRAMS ?= $(or $(PLOOM_IPB_PROGRAMS),200)
SHARD_PROGRAMS ?= $(or $(PLOOM_SHARD_PROGRAMS),100)
test-c: $(TESTS)
	@if [[ -z "$(TESTS)" ]]; then echo "test-c: no tests/c/test_*.c found" >&2; exit 1; fi
	@echo "test-c: test_dpor compares $(DPOR_PROGRAMS) generated programs ($(DPOR_VIEW_PROGRAMS) with views and shards, $(DPOR_BOUNDED_PROGRAMS) bounded), test_ipb $(IPB_PROGRAMS), test_shard $(SHARD_PROGRAMS), test_minimize $(MINIMIZE_PROGRAMS)"
	@export PLOOM_DPOR_PROGRAMS=$(DPOR_PROGRAMS) PLOOM_DPOR_VIEW_PROGRAMS=$(DPOR_VIEW_PROGRAMS) \
		PLOOM_IPB_PROGRAMS=$(IPB_PROGRAMS) \
		PLOOM_SHARD_PROGRAMS=$(SHARD_PROGRAMS) PLOOM_DPOR_BOUNDED_PROGRAMS=$(DPOR_BOUNDED_PROGRAMS) \
		PLOOM_MINIMIZE_PROGRAMS=$(MINIMIZE_PROGRAMS); \
	passed=0; failed=0; \
	for t in $(TESTS); do \
		echo "== $$t"; \
		if "$$t"; then passed=$$((passed + 1)); \
		else echo "test-c: FAIL $$t (exit $$?)"; failed=$$((failed + 1)); fi; \
	done; \
	if ((failed)); then echo "test-c: $$failed of $$((passed + failed)) test programs failed"; exit 1; fi; \
	echo "test-c: all $$passed test programs passed"

test-bats: all
	$(Q)PATH="$(CURDIR)/$(VENV)/bin:$$PATH" bats tests/bats

# The C unit tests and a slice of the bats suite again, against lib/ and the
# utilities built with AddressSanitizer and UBSan in a tree of their own (the
# worker stays the .venv's: an unsanitized interpreter cannot load a
# sanitized extension).  Any report aborts the program, so it fails its
# test.  ASan makes a generated program five to seven times dearer, so the
# differential tests compare fewer of them here than in test-c: test_dpor
# 1000 (3000), test_ipb 50 (200) in each of its two tests of generated
# programs, and test_shard the shards of 10 (100).  The sanitizers see only
# the code that runs, and the programs past these run no more of lib/: by
# gcov, its lines, branches and calls taken are the same after test_dpor's
# 1000 programs as after 3000 (300 miss a branch of dpor.c), after
# test_ipb's 10 or 50 as after 300 or 600, after test_shard's 10 as after 30.
SAN_BUILD := $(BUILD)/san
SAN_PRODUCTS := $(TESTS:$(BUILD)/%=$(SAN_BUILD)/%) $(BINS:$(BUILD)/%=$(SAN_BUILD)/%)
SAN_DPOR_PROGRAMS := 1000
SAN_DPOR_VIEW_PROGRAMS := 100
SAN_IPB_PROGRAMS := 50
SAN_SHARD_PROGRAMS := 10
SAN_DPOR_BOUNDED_PROGRAMS := 100
SAN_MINIMIZE_PROGRAMS := 100
# Under the sanitizers, bats runs SAN_BATS whole: the files of the
# utilities that read traces and statistics (ploom-replay, ploom-show,
# ploom-minimize, ploom-merge, ploom-run-one), each of which also explores
# to make them.  Of ploom-explore.bats and reliability.bats it runs the tests
# whose names match SAN_BATS_SLICE (46 of 111): those of the searches, their
# limits, the reduction and two workers, the saved traces read before a
# search, and the readers' limits.  The rest
# (usage, progress, orphans, trust, REFERENCE.md's counts again, the shards,
# the install) runs unsanitized in test-bats only: it goes through the same
# readers and searches, and what it adds is what Python and the kernel do,
# not worth twice its time in every make check.  SAN_BATS_SLICE=. runs all
# of those two files.
SAN_BATS := $(addprefix tests/bats/,ploom-replay.bats ploom-show.bats ploom-minimize.bats \
	ploom-merge.bats ploom-run-one.bats)
SAN_BATS_SLICED := tests/bats/ploom-explore.bats tests/bats/reliability.bats
SAN_BATS_SLICE := search|reduction|-j 2|saved|duplicate key|bounded input|out of range|FIFO

.PHONY: sanitize-build test-sanitize-c test-sanitize-bats
test-sanitize: test-sanitize-c test-sanitize-bats

sanitize-build: all
	@$(MAKE) --no-print-directory BUILD=$(SAN_BUILD) DEPS_STAMP=$(DEPS_STAMP) \
		SANITIZE=address,undefined $(SAN_PRODUCTS)

test-sanitize-c: sanitize-build
	@$(MAKE) --no-print-directory BUILD=$(SAN_BUILD) DEPS_STAMP=$(DEPS_STAMP) SANITIZE=address,undefined \
		DPOR_PROGRAMS=$(SAN_DPOR_PROGRAMS) DPOR_VIEW_PROGRAMS=$(SAN_DPOR_VIEW_PROGRAMS) IPB_PROGRAMS=$(SAN_IPB_PROGRAMS) SHARD_PROGRAMS=$(SAN_SHARD_PROGRAMS) \
		DPOR_BOUNDED_PROGRAMS=$(SAN_DPOR_BOUNDED_PROGRAMS) MINIMIZE_PROGRAMS=$(SAN_MINIMIZE_PROGRAMS) test-c

test-sanitize-bats: sanitize-build
	@echo "test-sanitize: bats under the sanitizers: $(notdir $(SAN_BATS)) whole; of $(notdir $(SAN_BATS_SLICED)), the tests named '$(SAN_BATS_SLICE)'"
	$(Q)PATH="$(CURDIR)/$(SAN_BUILD)/bin:$(CURDIR)/$(VENV)/bin:$$PATH" \
		PLOOM_PYTHON="$(CURDIR)/$(VENV)/bin/python" bats $(SAN_BATS)
	$(Q)PATH="$(CURDIR)/$(SAN_BUILD)/bin:$(CURDIR)/$(VENV)/bin:$$PATH" \
		PLOOM_PYTHON="$(CURDIR)/$(VENV)/bin/python" bats -f '$(SAN_BATS_SLICE)' $(SAN_BATS_SLICED)

# --- the Python tests, on each interpreter -----------------------------------------
# CPython 3.13 (.venv) runs the whole suite.  CPython 3.14 runs PY314_TESTS:
# the files whose outcome can change with the interpreter, because they test
# the extension (its operations, where each step stopped), the worker and
# its processes, ploom.threading against CPython's threading, the patching
# of the interpreter's own modules, the rewriting of instrumented modules
# (the ast module changes with the interpreter), the lifetimes of the objects
# instrumented code touches and the iterators it gets (how the interpreter
# frees and traverses its objects), and the command line and the pytest
# plugin, whose output comes from argparse and pytest.  The rest ask the
# same questions of the same utilities (the searches' counts and orders,
# the differential test of DPOR, the samples, replay): a second run would
# test lib/ again, not 3.14.  So do, in test_threading.py, the soundness
# of the reduction on ploom.threading and on generated programs of plain
# state, and the search of 488 schedules to the bug of an `if` around a
# Condition's wait (PY314_DESELECT): the other tests of the file run
# ploom.threading on 3.14.
# PY314_TESTS=tests/python PY314_DESELECT= runs all of it.
# A free-threaded interpreter (PLOOM_PYTHON_FT) runs the whole suite: its
# extension differs most.
PY314_TESTS ?= $(addprefix tests/python/,test_operations.py test_threading.py test_where.py \
	test_lifecycle.py test_free_threading.py test_patch.py test_cli.py test_plugin.py \
	test_instrument.py test_worker_instrument.py test_plain.py test_lifetime.py \
	test_plain_iterators.py)
PY314_DESELECT ?= test_dpor_reaches_exactly_the_outcomes_dfs_reaches \
	test_dpor_finds_every_outcome_of_dfs_on_plain_state test_if_instead_of_while_around_wait_is_found
# The differential test of DPOR (tests/python/test_differential.py) compares
# the first DIFF_SEEDS of its generated programs here (8,640 DFS schedules,
# where its default 250 have 72,788), those whose DFS counts it also holds
# to progen's model; `make soak` runs 5000.
DIFF_SEEDS ?= 30
# --durations: the log says where the time went
PYTEST := -m pytest -m "not soak" --durations=10 $(PYTEST_FLAGS)
# No free-threaded CPython can be installed on these machines (see
# check-free-threaded-abi): its run is skipped unless PLOOM_PYTHON_FT names
# one, and what can be checked without it is checked by make lint.
FT_SKIPPED := as expected: PLOOM_PYTHON_FT names no free-threaded CPython, and none is \
	packaged for Debian or on PyPI; make lint compiled the extension for its ABI instead

test-python-3.13: all
	@echo "test-python: pytest on $$($(VENV)/bin/python -c '$(PY_NAME)') ($(VENV)): the whole suite"
	$(Q)PLOOM_DIFF_SEEDS=$(DIFF_SEEDS) $(VENV)/bin/python $(PYTEST) tests/python

test-python-3.14: venv-3.14
	@echo "test-python: pytest on $$($(VENV314)/bin/python -c '$(PY_NAME)') ($(VENV314)): only the files that depend on the interpreter (PY314_TESTS: $(notdir $(PY314_TESTS)))$(if $(PY314_DESELECT), less $(PY314_DESELECT))"
	$(Q)PLOOM_DIFF_SEEDS=$(DIFF_SEEDS) $(VENV314)/bin/python $(PYTEST) \
		$(if $(PY314_DESELECT),-k 'not ($(subst $(space), or ,$(strip $(PY314_DESELECT))))') $(PY314_TESTS)

test-python-ft: all
	@ft='$(PLOOM_PYTHON_FT)'; \
	if [[ -z "$$ft" ]]; then echo "test-python: the free-threaded run is skipped, $(FT_SKIPPED)"; exit 0; fi; \
	if ! ft_dir=$$("$$ft" -c 'import sys, sysconfig; v = sys.version_info; print(f"$(VENV)-{v[0]}.{v[1]}t") if sysconfig.get_config_var("Py_GIL_DISABLED") else sys.exit(1)'); then \
		echo "test-python: PLOOM_PYTHON_FT='$$ft' is not a free-threaded CPython (Py_GIL_DISABLED is not set)" >&2; \
		exit 1; \
	fi; \
	$(MAKE) --no-print-directory python-env PYENV_PYTHON="$$ft" PYENV_DIR="$$ft_dir"; \
	echo "test-python: pytest on $$("$$ft_dir/bin/python" -c '$(PY_NAME)') ($$ft_dir): the whole suite"; \
	PLOOM_DIFF_SEEDS=$(DIFF_SEEDS) "$$ft_dir/bin/python" $(PYTEST) tests/python

# Each interpreter's run, one after another; a failure on one does not stop
# the others, and the closing line says which passed.
test-python: all
	@passed=(); failed=(); \
	for py in 3.13 3.14 $(if $(PLOOM_PYTHON_FT),ft); do \
		if $(MAKE) --no-print-directory test-python-$$py; then passed+=("$$py"); else failed+=("$$py"); fi; \
	done; \
	if (($${#failed[@]})); then echo "test-python: FAILED on $${failed[*]}; passed on $${passed[*]:-none}"; \
	else echo "test-python: passed on $${passed[*]}"; fi; \
	$(if $(PLOOM_PYTHON_FT),,echo "test-python: the free-threaded run is skipped, $(FT_SKIPPED)";) \
	((! $${#failed[@]}))

lint: $(VENV_STAMP) | $(DEPS_STAMP)
	$(Q)scripts/check-includes
	$(say) SHCHECK "scripts/ tests/packaging/ .ci/run"
	$(Q)shellcheck $(SHELL_SCRIPTS)
	$(if $(BATS_FILES)$(BATS_HELPERS),$(say) SHCHECK "tests/bats/")
	$(Q)$(if $(BATS_FILES)$(BATS_HELPERS),shellcheck -s bash $(BATS_FILES) $(BATS_HELPERS))
	$(say) CPPCHK "lib cmd$(if $(EXT_SRC), pyext)"
	$(Q)$(CPPCHECK) lib cmd
	$(Q)$(if $(EXT_SRC),$(CPPCHECK) --library=python pyext)
	$(say) RUFF "python tests/python tests/bats examples docs setup.py"
	$(Q)$(VENV)/bin/ruff check -q python tests/python tests/bats examples docs setup.py
	@$(MAKE) --no-print-directory check-free-threaded-abi
	$(say) GROFF "man/"
	@# groff exits 0 on warnings, so any output at all is a failure.
	@for page in $(MAN_PAGES); do \
		out=$$(groff -man -ww -z "$$page" 2>&1); \
		if [[ -n "$$out" ]]; then printf '%s\n' "$$out" >&2; exit 1; fi; \
	done

bench: all
	scripts/bench

# tests/python/test_differential.py on many more seeds than the few dozen
# of `make check`; PLOOM_DIFF_REQUIRE turns its skip into a failure, since
# a soak that tested nothing must not pass.  Then
# test_primitives_differential.py on 1000 programs (make check runs 16).  Then the C tests with many
# more generated programs, and the tests marked soak (Python tests and the
# docs' long examples).
SOAK_SEEDS ?= 5000
SOAK_START ?= 0
soak: all
	$(MAKE) --no-print-directory test-c DPOR_PROGRAMS=20000 DPOR_VIEW_PROGRAMS=3000 IPB_PROGRAMS=3000 SHARD_PROGRAMS=300 \
		DPOR_BOUNDED_PROGRAMS=10000 MINIMIZE_PROGRAMS=3000
	PLOOM_DIFF_SEEDS=$(SOAK_SEEDS) PLOOM_DIFF_START=$(SOAK_START) PLOOM_DIFF_REQUIRE=1 \
		$(VENV)/bin/python -m pytest -p no:cacheprovider -q tests/python/test_differential.py $(PYTEST_FLAGS)
	PLOOM_PRIM_SEEDS=1000 PLOOM_PRIM_START=$(SOAK_START) PLOOM_PRIM_LIMIT=5000 \
		$(VENV)/bin/python -m pytest -p no:cacheprovider -q -s tests/python/test_primitives_differential.py $(PYTEST_FLAGS)
	$(VENV)/bin/python -m pytest -p no:cacheprovider -q tests/python docs/test_examples.py -m soak $(PYTEST_FLAGS)

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

# ploom-explore exits 1 when it finds the bug, which is what this target
# shows: it succeeds only on exit 1 with the trace written.  --no-saved:
# it shows the search each time, not the failure saved by the last run.
example: all
	@mkdir -p $(BUILD)
	@set +e; \
	$(VENV)/bin/ploom-explore --no-saved examples/bank_account.py:scenario > $(BUILD)/example.json; \
	rc=$$?; set -e; \
	trace=$$(jq -r '.trace // empty' $(BUILD)/example.json 2>/dev/null || true); \
	minimized=$$(jq -r '.minimized_trace // empty' $(BUILD)/example.json 2>/dev/null || true); \
	if [[ $$rc -eq 1 && -n "$$minimized" && -f "$$minimized" && -f "$$trace" ]]; then \
		echo "make example: ploom found the bug in examples/bank_account.py after $$(jq -r .schedules $(BUILD)/example.json) schedules:"; \
		echo "make example:   $$(jq -r '.failure.summary' $(BUILD)/example.json)"; \
		echo "make example: the failing schedule is saved in $$trace, and the same failure with fewer preemptions in $$minimized"; \
		echo "make example: read it, step by step: $(VENV)/bin/ploom-show $$minimized"; \
	else \
		echo "make example: expected ploom-explore to find the overdrawn account (exit 1 and two traces); it exited $$rc" >&2; \
		exit 1; \
	fi

install: $(BINS)
	install -d '$(DESTDIR)$(BINDIR)'
	$(if $(BINS),install -m 755 $(BINS) '$(DESTDIR)$(BINDIR)/')
	$(if $(filter %.1,$(MAN_PAGES)),install -d '$(DESTDIR)$(MANDIR)/man1' && install -m 644 $(filter %.1,$(MAN_PAGES)) '$(DESTDIR)$(MANDIR)/man1/')
	$(if $(filter %.5,$(MAN_PAGES)),install -d '$(DESTDIR)$(MANDIR)/man5' && install -m 644 $(filter %.5,$(MAN_PAGES)) '$(DESTDIR)$(MANDIR)/man5/')

clean:
	rm -rf $(BUILD) python/ploom/_ploom*.so
	rm -f $(VENV)/bin/ploom-* $(VENV)-*/bin/ploom-*

distclean: clean
	rm -rf $(VENV) $(VENV)-* .ploom

# --- set-up ----------------------------------------------------------------------
$(DEPS_STAMP): scripts/install-deps
	scripts/install-deps
	@mkdir -p $(@D)
	@touch $@

need-python:
	@if [[ -z "$(PYTHON313)" ]]; then scripts/find-python >/dev/null; fi

$(C_FLAGS_FILE): FORCE | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@flags='$(CC) $(C_FLAGS) $(C_LDFLAGS) $(C_LIBS)'; \
	if [[ ! -f $@ || "$$(cat $@)" != "$$flags" ]]; then printf '%s\n' "$$flags" > $@; fi

$(EXT_FLAGS_FILE): FORCE | $(DEPS_STAMP) need-python
	@mkdir -p $(@D)
	@flags='$(CC) $(EXT_FLAGS) $(EXT_LDFLAGS) $(C_LIBS)'; \
	if [[ ! -f $@ || "$$(cat $@)" != "$$flags" ]]; then printf '%s\n' "$$flags" > $@; fi

# The venv: pytest, ruff, setuptools and uv pinned in requirements-dev.txt
# (uv.lock's dev group), then this project installed in editable mode, which
# builds nothing (PLOOM_BUILT_BY_MAKE, see setup.py): its .pth file puts python/ on sys.path,
# so `import ploom` finds this tree and the extension built in it, and its
# metadata registers the pytest plugin (the pytest11 entry point).
# --no-build-isolation: the pinned setuptools is the backend, so nothing
# unpinned is fetched.  ploom-dev.pth is what earlier versions of this rule
# wrote instead.  A .venv made by `uv sync` has no pip: ensurepip adds it.
$(VENV_STAMP): requirements-dev.txt pyproject.toml setup.py | need-python
	$(say) VENV "$(VENV): requirements-dev.txt, and ploom in editable mode"
	$(Q)if ! $(VENV)/bin/python -c 'import sys; sys.exit(sys.version_info[:2] != (3, 13))' 2>/dev/null; \
	then rm -rf $(VENV); $(PYTHON313) -m venv $(VENV); fi
	$(Q)$(VENV)/bin/python -m pip --version >/dev/null 2>&1 || $(VENV)/bin/python -m ensurepip >/dev/null
	$(Q)$(VENV)/bin/python -m pip install --disable-pip-version-check -q -r requirements-dev.txt
	$(Q)$(VENV)/bin/python -m pip install --disable-pip-version-check -q --no-build-isolation \
		--no-deps -e .
	$(Q)site=$$($(VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))'); \
	rm -f "$$site/ploom-dev.pth"
	@touch $@

# Copies, not symlinks: a utility looks for python3 beside its own
# executable (/proc/self/exe), which must be the venv's bin/.
$(VENV_BINS): $(VENV)/bin/%: $(BUILD)/bin/% $(VENV_STAMP)
	$(say) INSTALL $@
	$(Q)install -m 755 $< $@

# --- more interpreters: CPython 3.14, free-threaded CPython ----------------------
# test-python runs the suite on 3.13 (.venv), on 3.14 (.venv-3.14, with the
# interpreter scripts/install-python314 prints, provisioning one on a fresh
# Debian 12 machine) and, when PLOOM_PYTHON_FT names a free-threaded
# interpreter, on that one too (.venv-<major>.<minor>t).  Each interpreter
# gets its own build of the extension: the EXT_SUFFIX differs
# (.cpython-314-x86_64-linux-gnu.so, .cpython-314t-...), so they all sit side
# by side in python/ploom/.  These interpreters are found in recipes, not
# when this file is read, because finding 3.14 may download it; the recipe
# then runs `$(MAKE) python-env PYENV_PYTHON=... PYENV_DIR=...`, which builds
# that interpreter's extension and venv with the rules at the end of this
# section.  lib/ and the utilities do not depend on the interpreter: every
# build links the same $(EXT_LIB) and copies the same $(BINS).
.PHONY: venv-3.14 python-env check-free-threaded-abi

VENV314 := $(VENV)-3.14
PLOOM_PYTHON_FT ?=
# Prints e.g. "CPython 3.14.10", or "CPython 3.14.0 free-threaded".
PY_NAME := import platform, sysconfig; print(platform.python_implementation(), \
	platform.python_version() + (" free-threaded" if sysconfig.get_config_var("Py_GIL_DISABLED") else ""))

venv-3.14: all
	@py=$$(scripts/install-python314); \
	echo "venv-3.14: CPython 3.14 is $$py"; \
	$(MAKE) --no-print-directory python-env PYENV_PYTHON="$$py" PYENV_DIR=$(VENV314)

# No free-threaded interpreter can be installed on these machines (see
# INTERPRETERS.md), so what can be proven without one is proven here: the
# extension compiles, under all our warnings as errors, for the free-threaded
# ABI (-DPy_GIL_DISABLED=1, which changes the object header, reference
# counting and the critical-section macros) against the 3.14 headers, and
# against 3.13's, the first release with that build.  Run by `make lint`.
check-free-threaded-abi: | $(DEPS_STAMP) need-python
	@py314=$$(scripts/install-python314); \
	inc314=$$("$$py314" -c 'import sysconfig; print(sysconfig.get_paths()["include"])'); \
	mkdir -p $(BUILD)/ft-abi; \
	for inc in "$$inc314" "$(PY_INCLUDE)"; do \
		for src in $(EXT_SRC); do \
			obj=$(BUILD)/ft-abi/$$(basename "$$src" .c).o; \
			cmd=($(CC) $(BASE_CFLAGS) -fno-strict-aliasing -DPy_GIL_DISABLED=1 -Ilib -I"$$inc" $(PKG_CFLAGS) \
				$(CPPFLAGS) $(CFLAGS) -c -o "$$obj" "$$src"); \
			if [[ '$(V)' == 1 ]]; then echo "$${cmd[*]}"; \
			else printf '  %-7s %s (free-threaded ABI, %s)\n' CC "$$src" "$${inc##*/}"; fi; \
			"$${cmd[@]}"; \
		done; \
	done; \
	echo "check-free-threaded-abi: $(EXT_SRC) compiles for the free-threaded ABI against the 3.14 and 3.13 headers"

ifneq ($(PYENV_PYTHON),)
# The sub-make that builds one more interpreter's extension and venv.
ifeq ($(PYENV_DIR),)
$(error PYENV_DIR must name the venv to build for PYENV_PYTHON=$(PYENV_PYTHON))
endif
PYENV_CONFIG := $(shell '$(PYENV_PYTHON)' -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"), sysconfig.get_paths()["include"])')
ifneq ($(words $(PYENV_CONFIG)),2)
$(error cannot ask $(PYENV_PYTHON) for its EXT_SUFFIX and include folder)
endif
PYENV_EXT := python/ploom/_ploom$(word 1,$(PYENV_CONFIG))
PYENV_INCLUDE := $(word 2,$(PYENV_CONFIG))
ifeq ($(PYENV_EXT),$(EXT))
$(error $(PYENV_PYTHON) builds $(EXT), the extension of .venv's 3.13: it is no other interpreter)
endif
PYENV_BUILD := $(BUILD)/ext-$(patsubst $(VENV)-%,%,$(notdir $(PYENV_DIR)))
PYENV_OBJ := $(EXT_SRC:%.c=$(PYENV_BUILD)/%.o)
PYENV_FLAGS = $(BASE_CFLAGS) -fno-strict-aliasing -Ilib -I$(PYENV_INCLUDE) $(PKG_CFLAGS) \
	$(CPPFLAGS) $(CFLAGS)
PYENV_FLAGS_FILE := $(PYENV_BUILD)/flags
PYENV_STAMP := $(PYENV_DIR)/.ploom-stamp
PYENV_BINS := $(BINS:$(BUILD)/bin/%=$(PYENV_DIR)/bin/%)

python-env: $(PYENV_EXT) $(PYENV_STAMP) $(PYENV_BINS)

$(PYENV_FLAGS_FILE): FORCE | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@flags='$(CC) $(PYENV_FLAGS) $(EXT_LDFLAGS) $(C_LIBS)'; \
	if [[ ! -f $@ || "$$(cat $@)" != "$$flags" ]]; then printf '%s\n' "$$flags" > $@; fi

$(PYENV_BUILD)/%.o: %.c $(PYENV_FLAGS_FILE) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(say) CC $@
	$(Q)$(CC) $(PYENV_FLAGS) -MMD -MP -c -o $@ $<

$(PYENV_EXT): $(PYENV_OBJ) $(EXT_LIB) $(PYENV_FLAGS_FILE)
	$(say) LD $@
	$(Q)$(CC) $(EXT_LDFLAGS) -o $@ $(PYENV_OBJ) $(EXT_LIB) $(C_LIBS)

# Like .venv's rule, but the interpreter has no pip of its own (Debian's
# ensurepip wheel is missing from a provisioned 3.14, see INTERPRETERS.md):
# the venv is made --without-pip and .venv's pip installs into it
# (pip --python), or uv when .venv has no pip.  It is made again when its
# interpreter is not PYENV_PYTHON's build any more.
$(PYENV_STAMP): requirements-dev.txt pyproject.toml $(VENV_STAMP)
	$(say) VENV "$(PYENV_DIR) for $(PYENV_PYTHON): requirements-dev.txt, and ploom in editable mode"
	@want=$$('$(PYENV_PYTHON)' -c 'import sys; print(sys.version)'); \
	have=$$($(PYENV_DIR)/bin/python -c 'import sys; print(sys.version)' 2>/dev/null || true); \
	if [[ "$$have" != "$$want" ]]; then \
		rm -rf $(PYENV_DIR); '$(PYENV_PYTHON)' -m venv --without-pip $(PYENV_DIR); \
	fi
	@if $(VENV)/bin/python -m pip --version >/dev/null 2>&1; then \
		pip=($(VENV)/bin/python -m pip --disable-pip-version-check --python $(PYENV_DIR)/bin/python install -q); \
	else \
		uv=$$(command -v $(VENV)/bin/uv || command -v uv || true); \
		if [[ -z "$$uv" ]]; then echo "$(PYENV_STAMP): $(VENV) has neither pip nor uv" >&2; exit 1; fi; \
		pip=("$$uv" pip install -q --python $(PYENV_DIR)/bin/python); \
	fi; \
	if [[ '$(V)' == 1 ]]; then set -x; fi; \
	"$${pip[@]}" -r requirements-dev.txt; \
	"$${pip[@]}" --no-build-isolation --no-deps -e .
	@touch $@

$(PYENV_BINS): $(PYENV_DIR)/bin/%: $(BUILD)/bin/% $(PYENV_STAMP)
	$(say) INSTALL $@
	$(Q)install -m 755 $< $@

-include $(PYENV_OBJ:.o=.d)
else
python-env:
	@echo "python-env: set PYENV_PYTHON and PYENV_DIR (test-python and venv-3.14 do)" >&2; exit 2
endif

# --- compiling and linking ---------------------------------------------------------
$(BUILD)/obj/%.o: %.c $(C_FLAGS_FILE) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(say) CC $@
	$(Q)$(CC) $(C_FLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/nosan/%.o: %.c $(EXT_FLAGS_FILE) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(say) CC $@
	$(Q)$(CC) $(EXT_FLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/ext/%.o: %.c $(EXT_FLAGS_FILE) | $(DEPS_STAMP) need-python
	@mkdir -p $(@D)
	$(say) CC $@
	$(Q)$(CC) $(EXT_FLAGS) -MMD -MP -c -o $@ $<

$(LIB_A): $(LIB_OBJ)
	@mkdir -p $(@D)
	$(say) AR $@
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

$(BUILD)/nosan/libploom.a: $(NOSAN_OBJ)
	@mkdir -p $(@D)
	$(say) AR $@
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

$(BINS): $(BUILD)/bin/%: $(BUILD)/obj/cmd/%.o $(CMD_SUPPORT_OBJ) $(LIB_A) $(C_FLAGS_FILE)
	@mkdir -p $(@D)
	$(say) LD $@
	$(Q)$(CC) $(C_LDFLAGS) -o $@ $< $(CMD_SUPPORT_OBJ) $(LIB_A) $(C_LIBS)

$(TESTS): $(BUILD)/tests/%: $(BUILD)/obj/tests/c/%.o $(TEST_SUPPORT_OBJ) $(LIB_A) $(C_FLAGS_FILE)
	@mkdir -p $(@D)
	$(say) LD $@
	$(Q)$(CC) $(C_LDFLAGS) -o $@ $< $(filter $(CMD_SUPPORT_OBJ),$^) $(TEST_SUPPORT_OBJ) $(LIB_A) \
		$(C_LIBS)

# test_cli tests cmd/cli.c, so it links what the utilities share as well
$(BUILD)/tests/test_cli: $(CMD_SUPPORT_OBJ)

$(EXT): $(EXT_OBJ) $(EXT_LIB) $(EXT_FLAGS_FILE) | need-python
	$(if $(EXT_OBJ),,@echo "no pyext/*.c to build the extension from" >&2; exit 1)
	$(say) LD $@
	$(Q)$(CC) $(EXT_LDFLAGS) -o $@ $(EXT_OBJ) $(EXT_LIB) $(C_LIBS)

-include $(LIB_OBJ:.o=.d) $(NOSAN_OBJ:.o=.d) $(EXT_OBJ:.o=.d) $(CMD_SUPPORT_OBJ:.o=.d) \
	$(TEST_SUPPORT_OBJ:.o=.d) $(BINS:$(BUILD)/bin/%=$(BUILD)/obj/cmd/%.d) \
	$(TESTS:$(BUILD)/tests/%=$(BUILD)/obj/tests/c/%.d)

# --- fuzzing ------------------------------------------------------------------------
# One libFuzzer target per tests/fuzz/fuzz_*.c (fuzz_trace: the trace reader;
# fuzz_records: the worker protocol's decoders; fuzz_stats: the statistics
# reader and ploom-merge's merge; fuzz_saved: what a search reads of its saved
# traces, their plain points and their follow, and the folder's listing),
# built by clang with ASan
# and UBSan, together with a copy of lib/ built the same way, in a tree of
# their own (build/fuzz); libFuzzer's runtime is clang's (scripts/install-deps).
# cJSON and libgit2 are the system's, so they are not instrumented, but
# LeakSanitizer still sees their allocations.
#
# Each target runs FUZZ_SECONDS over two corpus folders: a scratch one in
# build/fuzz/corpus/TARGET, where libFuzzer writes the inputs it finds (kept
# from run to run, so the next run starts where this one stopped), then the
# seed corpus of the repository, tests/fuzz/corpus/TARGET, which libFuzzer
# only reads.  The targets run one after another: the machines have 2 cores.
# A crash, a sanitizer report, a leak or a slow input stops the target; its
# input is saved in build/fuzz/crashes/TARGET/ and the recipe prints the
# command that reproduces it.  An input worth keeping goes into the seed
# corpus by hand, where every later run executes it first.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 40
# make check's time budget holds CHECK_FUZZ_SECONDS of fuzzing in all,
# shared evenly among the targets (3 targets: 26 s each), so that a new
# target does not lengthen it; FUZZ_SECONDS given on the command line
# still sets each target's time.
CHECK_FUZZ_SECONDS ?= 80
CHECK_FUZZ = $(if $(filter file,$(origin FUZZ_SECONDS)),\
	FUZZ_SECONDS=$$(( $(CHECK_FUZZ_SECONDS) / $(words $(FUZZ_SRC)) )))
FUZZ_BUILD := $(BUILD)/fuzz
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_TARGETS := $(FUZZ_SRC:tests/fuzz/%.c=$(FUZZ_BUILD)/%)
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_LIB := $(FUZZ_BUILD)/libploom.a
# -O1 as libFuzzer's documentation and OSS-Fuzz build: fast enough, and
# the sanitizers' reports keep their lines.  lib/ gets the instrumentation
# without libFuzzer's main() (fuzzer-no-link); the targets link it.
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_FLAGS = -std=c11 -D_GNU_SOURCE -O1 -g $(WARNINGS) $(FUZZ_SAN) -Ilib $(PKG_CFLAGS)
FUZZ_FLAGS_FILE := $(FUZZ_BUILD)/flags
# -timeout: an input that takes longer is a hang, and fails the target;
# -detect_leaks is libFuzzer's default, stated because the targets rely on it.
FUZZ_OPTS = -max_total_time=$(FUZZ_SECONDS) -timeout=10 -detect_leaks=1 -print_final_stats=1

fuzz: $(FUZZ_TARGETS)
	@if [[ -z "$(FUZZ_TARGETS)" ]]; then echo "fuzz: no tests/fuzz/fuzz_*.c found" >&2; exit 1; fi
	@for t in $(FUZZ_TARGETS); do \
		name=$${t##*/fuzz_}; \
		seeds=tests/fuzz/corpus/$$name; scratch=$(FUZZ_BUILD)/corpus/$$name; \
		crashes=$(FUZZ_BUILD)/crashes/$$name; log=$(FUZZ_BUILD)/$$name.log; \
		if [[ ! -d "$$seeds" ]]; then echo "fuzz: $$t has no seed corpus $$seeds" >&2; exit 1; fi; \
		mkdir -p "$$scratch" "$$crashes"; \
		echo "fuzz: $$t for $(FUZZ_SECONDS) s over $$scratch and $$seeds (log: $$log)"; \
		before=$$(ls "$$crashes" | wc -l); \
		if "$$t" $(FUZZ_OPTS) -artifact_prefix="$$crashes/" "$$scratch" "$$seeds" > "$$log" 2>&1; then \
			grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$$log" | sed "s|^|fuzz: $$name: |"; \
		else \
			rc=$$?; \
			tail -n 60 "$$log"; \
			echo "fuzz: FAIL $$t (exit $$rc); the whole log is $$log"; \
			found=$$(ls -t "$$crashes" | head -n 1); \
			if (($$(ls "$$crashes" | wc -l) > before)) && [[ -n "$$found" ]]; then \
				echo "fuzz: reproduce with: $$t $$crashes/$$found"; \
			fi; \
			exit 1; \
		fi; \
	done; \
	echo "fuzz: every target ran $(FUZZ_SECONDS) s without a finding"

$(FUZZ_FLAGS_FILE): FORCE | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@flags='$(FUZZ_CC) $(FUZZ_FLAGS) $(PKG_LIBS)'; \
	if [[ ! -f $@ || "$$(cat $@)" != "$$flags" ]]; then printf '%s\n' "$$flags" > $@; fi

$(FUZZ_BUILD)/obj/%.o: %.c $(FUZZ_FLAGS_FILE) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(say) CC $@
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(FUZZ_LIB): $(FUZZ_LIB_OBJ)
	@mkdir -p $(@D)
	$(say) AR $@
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

$(FUZZ_TARGETS): $(FUZZ_BUILD)/%: $(FUZZ_BUILD)/obj/tests/fuzz/%.o $(FUZZ_LIB) $(FUZZ_FLAGS_FILE)
	$(say) LD $@
	$(Q)$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB) $(C_LIBS)

$(FUZZ_BUILD)/obj/tests/fuzz/%.o: tests/fuzz/%.c $(FUZZ_FLAGS_FILE) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(say) CC $@
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -MMD -MP -c -o $@ $<

-include $(FUZZ_LIB_OBJ:.o=.d) $(FUZZ_SRC:tests/fuzz/%.c=$(FUZZ_BUILD)/obj/tests/fuzz/%.d)

# --- documentation ---------------------------------------------------------------
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
