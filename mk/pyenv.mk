# mk/pyenv.mk - the venvs of CPython 3.14 and of a free-threaded CPython.

# test-python runs the suite on 3.13 (.venv), on 3.14 (.venv-3.14, with the
# interpreter scripts/install-python314 prints, provisioning one on a fresh
# Debian 12 machine) and, when PLOOM_PYTHON_FT names a free-threaded
# interpreter, on that one too (.venv-<major>.<minor>t).  Each interpreter
# gets its own build of the extension: the EXT_SUFFIX differs
# (.cpython-314-x86_64-linux-gnu.so, .cpython-314t-...), so they all sit side
# by side in python/ploom/.  These interpreters are found in recipes, not
# when the Makefile is read, because finding 3.14 may download it; the recipe
# then runs `$(MAKE) python-env PYENV_PYTHON=... PYENV_DIR=...`, which builds
# that interpreter's extension and venv with the rules at the end of this
# file.  lib/ and the utilities do not depend on the interpreter: every
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

PYENV_FLAGS_TEXT = $(CC) $(PYENV_FLAGS) $(EXT_LDFLAGS) $(C_LIBS)
$(eval $(call flags_file,$(PYENV_FLAGS_FILE),PYENV_FLAGS_TEXT))

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
