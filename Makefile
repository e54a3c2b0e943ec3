# Makefile - builds ploom and runs its tests (GNU make).
#
#   make                 libploom, the utilities, the ploom._ploom extension,
#                        and a Python 3.13 environment in .venv/ where
#                        `import ploom` works and the utilities are on bin/
#   make check           every test: C unit tests, bats tests, pytest
#   make example         ploom-explore on examples/bank_account.py
#   make lint            shellcheck, cppcheck, ruff, groff checks
#   make bench           cost of a schedule against a fresh interpreter
#   make install         the utilities (and man pages) under $(DESTDIR)$(PREFIX)
#   make clean           remove what the build made (keeps .venv; see distclean)
#
# Options: SANITIZE=address,undefined builds lib/, cmd/ and tests/c with
# those sanitizers (not the extension: it is loaded by an interpreter that
# is not sanitized); PREFIX, DESTDIR for install; PLOOM_PYTHON313 picks the
# interpreter (scripts/find-python); PYTEST_FLAGS, e.g. PYTEST_FLAGS='-m "not slow"'.
#
# The first build on a machine runs scripts/install-deps, which installs
# the Debian packages that are missing (see build/stamps/install-deps).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
.SUFFIXES:
.DEFAULT_GOAL := all

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
SAN_FLAGS := $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer)

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

SHELL_SCRIPTS := $(wildcard scripts/*) .ci/run
CPPCHECK := cppcheck --quiet --error-exitcode=1 --std=c11 --inline-suppr \
	--enable=warning,performance,portability --library=posix --library=gnu \
	--suppress=missingIncludeSystem -D_GNU_SOURCE -Ilib
BATS_FILES := $(wildcard tests/bats/*.bats)
BATS_HELPERS := $(wildcard tests/bats/*.bash)
MAN_PAGES := $(wildcard man/*.1 man/*.5)

# --- top-level targets ---------------------------------------------------------
.PHONY: all check test-c test-bats test-python lint bench example install \
	clean distclean need-python FORCE

all: $(LIB_A) $(BINS) $(EXT) $(VENV_STAMP) $(VENV_BINS)

# Run one after another (not in parallel) so each suite's output stays whole.
check: all
	@$(MAKE) --no-print-directory test-c
	@$(MAKE) --no-print-directory test-bats
	@$(MAKE) --no-print-directory test-python

test-c: $(TESTS)
	@if [[ -z "$(TESTS)" ]]; then echo "test-c: no tests/c/test_*.c found" >&2; exit 1; fi
	@passed=0; failed=0; \
	for t in $(TESTS); do \
		echo "== $$t"; \
		if "$$t"; then passed=$$((passed + 1)); \
		else echo "test-c: FAIL $$t (exit $$?)"; failed=$$((failed + 1)); fi; \
	done; \
	if ((failed)); then echo "test-c: $$failed of $$((passed + failed)) test programs failed"; exit 1; fi; \
	echo "test-c: all $$passed test programs passed"

test-bats: all
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" bats tests/bats

test-python: all
	$(VENV)/bin/python -m pytest tests/python $(PYTEST_FLAGS)

lint: $(VENV_STAMP) | $(DEPS_STAMP)
	shellcheck $(SHELL_SCRIPTS)
	$(if $(BATS_FILES)$(BATS_HELPERS),shellcheck -s bash $(BATS_FILES) $(BATS_HELPERS))
	$(CPPCHECK) lib cmd
	$(if $(EXT_SRC),$(CPPCHECK) --library=python pyext)
	$(VENV)/bin/ruff check python tests/python examples
	@# groff exits 0 on warnings, so any output at all is a failure.
	@for page in $(MAN_PAGES); do \
		out=$$(groff -man -ww -z "$$page" 2>&1); \
		if [[ -n "$$out" ]]; then printf '%s\n' "$$out" >&2; exit 1; fi; \
	done

bench: all
	scripts/bench

# ploom-explore exits 1 when it finds the bug, which is what this target
# shows: it succeeds only on exit 1 with the trace written.
example: all
	@mkdir -p $(BUILD)
	@set +e; \
	$(VENV)/bin/ploom-explore examples/bank_account.py:scenario > $(BUILD)/example.json; \
	rc=$$?; set -e; \
	trace=$$(jq -r '.trace // empty' $(BUILD)/example.json 2>/dev/null || true); \
	if [[ $$rc -eq 1 && -n "$$trace" && -f "$$trace" ]]; then \
		echo "make example: ploom found the bug in examples/bank_account.py after $$(jq -r .schedules $(BUILD)/example.json) schedules:"; \
		echo "make example:   $$(jq -r '.failure.summary' $(BUILD)/example.json)"; \
		echo "make example: the failing schedule is saved in $$trace"; \
	else \
		echo "make example: expected ploom-explore to find the overdrawn account (exit 1 and a trace); it exited $$rc" >&2; \
		exit 1; \
	fi

install: $(BINS)
	install -d '$(DESTDIR)$(BINDIR)'
	$(if $(BINS),install -m 755 $(BINS) '$(DESTDIR)$(BINDIR)/')
	$(if $(filter %.1,$(MAN_PAGES)),install -d '$(DESTDIR)$(MANDIR)/man1' && install -m 644 $(filter %.1,$(MAN_PAGES)) '$(DESTDIR)$(MANDIR)/man1/')
	$(if $(filter %.5,$(MAN_PAGES)),install -d '$(DESTDIR)$(MANDIR)/man5' && install -m 644 $(filter %.5,$(MAN_PAGES)) '$(DESTDIR)$(MANDIR)/man5/')

clean:
	rm -rf $(BUILD) python/ploom/_ploom*.so
	rm -f $(VENV)/bin/ploom-*

distclean: clean
	rm -rf $(VENV) .ploom

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

# The venv: pytest, ruff and setuptools pinned in requirements-dev.txt, then
# this project installed in editable mode, which builds nothing (no
# ext_modules, see pyproject.toml): its .pth file puts python/ on sys.path,
# so `import ploom` finds this tree and the extension built in it, and its
# metadata registers the pytest plugin (the pytest11 entry point).
# --no-build-isolation: the pinned setuptools is the backend, so nothing
# unpinned is fetched.  ploom-dev.pth is what earlier versions of this rule
# wrote instead.
$(VENV_STAMP): requirements-dev.txt pyproject.toml | need-python
	if ! $(VENV)/bin/python -c 'import sys; sys.exit(sys.version_info[:2] != (3, 13))' 2>/dev/null; \
	then rm -rf $(VENV); $(PYTHON313) -m venv $(VENV); fi
	$(VENV)/bin/python -m pip install --disable-pip-version-check -q -r requirements-dev.txt
	$(VENV)/bin/python -m pip install --disable-pip-version-check -q --no-build-isolation \
		--no-deps -e .
	site=$$($(VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))'); \
	rm -f "$$site/ploom-dev.pth"
	@touch $@

# Copies, not symlinks: a utility looks for python3 beside its own
# executable (/proc/self/exe), which must be the venv's bin/.
$(VENV_BINS): $(VENV)/bin/%: $(BUILD)/bin/% $(VENV_STAMP)
	install -m 755 $< $@

# --- compiling and linking ---------------------------------------------------------
$(BUILD)/obj/%.o: %.c $(C_FLAGS_FILE) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(C_FLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/nosan/%.o: %.c $(EXT_FLAGS_FILE) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(EXT_FLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/ext/%.o: %.c $(EXT_FLAGS_FILE) | $(DEPS_STAMP) need-python
	@mkdir -p $(@D)
	$(CC) $(EXT_FLAGS) -MMD -MP -c -o $@ $<

$(LIB_A): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/nosan/libploom.a: $(NOSAN_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(BINS): $(BUILD)/bin/%: $(BUILD)/obj/cmd/%.o $(CMD_SUPPORT_OBJ) $(LIB_A) $(C_FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) $(C_LDFLAGS) -o $@ $< $(CMD_SUPPORT_OBJ) $(LIB_A) $(C_LIBS)

$(TESTS): $(BUILD)/tests/%: $(BUILD)/obj/tests/c/%.o $(TEST_SUPPORT_OBJ) $(LIB_A) $(C_FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) $(C_LDFLAGS) -o $@ $< $(TEST_SUPPORT_OBJ) $(LIB_A) $(C_LIBS)

$(EXT): $(EXT_OBJ) $(EXT_LIB) $(EXT_FLAGS_FILE) | need-python
	$(if $(EXT_OBJ),,@echo "no pyext/*.c to build the extension from" >&2; exit 1)
	$(CC) $(EXT_LDFLAGS) -o $@ $(EXT_OBJ) $(EXT_LIB) $(C_LIBS)

-include $(LIB_OBJ:.o=.d) $(NOSAN_OBJ:.o=.d) $(EXT_OBJ:.o=.d) $(CMD_SUPPORT_OBJ:.o=.d) \
	$(TEST_SUPPORT_OBJ:.o=.d) $(BINS:$(BUILD)/bin/%=$(BUILD)/obj/cmd/%.d) \
	$(TESTS:$(BUILD)/tests/%=$(BUILD)/obj/tests/c/%.d)
