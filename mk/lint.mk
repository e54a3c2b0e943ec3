# mk/lint.mk - make lint: the include graph of lib/, the sizes of files and
# functions (scripts/check-sizes), shellcheck, cppcheck, ruff, mypy on
# python/ploom ([tool.mypy] in pyproject.toml), the free-threaded ABI
# (mk/pyenv.mk) and groff.

# The shell scripts among them, by their first line (scripts/fetch-suites is
# Python).
SHELL_SCRIPTS := $(shell awk 'FNR == 1 && /^.!.*sh$$/ { print FILENAME }' \
	$(wildcard scripts/*) $(wildcard tests/packaging/*) .ci/run)
CPPCHECK := cppcheck --quiet --error-exitcode=1 --std=c11 --inline-suppr \
	--enable=warning,performance,portability --library=posix --library=gnu \
	--suppress=missingIncludeSystem -D_GNU_SOURCE -Ilib
BATS_FILES := $(wildcard tests/bats/*.bats)
BATS_HELPERS := $(wildcard tests/bats/*.bash)

lint: $(VENV_STAMP) | $(DEPS_STAMP)
	$(Q)scripts/check-includes
	$(say) SIZES "lib cmd pyext python/ploom"
	$(Q)$(VENV)/bin/python scripts/check-sizes
	$(say) SHCHECK "scripts/ tests/packaging/ .ci/run"
	$(Q)shellcheck $(SHELL_SCRIPTS)
	$(if $(BATS_FILES)$(BATS_HELPERS),$(say) SHCHECK "tests/bats/")
	$(Q)$(if $(BATS_FILES)$(BATS_HELPERS),shellcheck -s bash $(BATS_FILES) $(BATS_HELPERS))
	$(say) CPPCHK "lib cmd$(if $(EXT_SRC), pyext)"
	$(Q)$(CPPCHECK) lib cmd
	$(Q)$(if $(EXT_SRC),$(CPPCHECK) --library=python pyext)
	$(say) RUFF "python tests/python tests/bats examples docs setup.py scripts/check-sizes"
	$(Q)$(VENV)/bin/ruff check -q python tests/python tests/bats examples docs setup.py \
		scripts/check-sizes
	$(say) MYPY "python/ploom"
	$(Q)$(VENV)/bin/mypy
	@$(MAKE) --no-print-directory check-free-threaded-abi
	$(say) GROFF "man/"
	@# groff exits 0 on warnings, so any output at all is a failure.
	@for page in $(MAN_PAGES); do \
		out=$$(groff -man -ww -z "$$page" 2>&1); \
		if [[ -n "$$out" ]]; then printf '%s\n' "$$out" >&2; exit 1; fi; \
	done
