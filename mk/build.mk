# mk/build.mk - libploom, the utilities, the extension and .venv (make all);
# included by the Makefile, whose header says what each target does.

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
LIB_SRC := $(wildcard lib/*.c lib/*/*.c)
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
# everything built with the old flags is rebuilt.  $(call flags_file,FILE,
# VARIABLE,PREREQUISITES) makes FILE's rule: FILE holds the expansion of
# VARIABLE, taken when the recipe runs (PKG_CFLAGS is lazy); PREREQUISITES
# are order-only, like DEPS_STAMP.  The fuzzers and the other interpreters'
# extensions (mk/fuzz.mk, mk/pyenv.mk) have flag files of their own.
define flags_file
$(1): FORCE | $$(DEPS_STAMP) $(3)
	@mkdir -p $$(@D)
	@flags='$$($(2))'; \
	if [[ ! -f $$@ || "$$$$(cat $$@)" != "$$$$flags" ]]; then printf '%s\n' "$$$$flags" > $$@; fi
endef
C_FLAGS_FILE := $(BUILD)/flags/c
C_FLAGS_TEXT = $(CC) $(C_FLAGS) $(C_LDFLAGS) $(C_LIBS)
EXT_FLAGS_FILE := $(BUILD)/flags/ext
EXT_FLAGS_TEXT = $(CC) $(EXT_FLAGS) $(EXT_LDFLAGS) $(C_LIBS)

MAN_PAGES := $(wildcard man/*.1 man/*.5)

all: $(LIB_A) $(BINS) $(EXT) $(VENV_STAMP) $(VENV_BINS)

# --- set-up ----------------------------------------------------------------------
$(DEPS_STAMP): scripts/install-deps
	scripts/install-deps
	@mkdir -p $(@D)
	@touch $@

need-python:
	@if [[ -z "$(PYTHON313)" ]]; then scripts/find-python >/dev/null; fi

$(eval $(call flags_file,$(C_FLAGS_FILE),C_FLAGS_TEXT))
$(eval $(call flags_file,$(EXT_FLAGS_FILE),EXT_FLAGS_TEXT,need-python))

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
