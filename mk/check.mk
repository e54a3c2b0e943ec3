# mk/check.mk - make check, every suite of the other files, in parallel.

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
CHECK_SUITES := lint c c-asan bats bats-asan fuzz docs packaging pytest-3.13 pytest-3.13-diff pytest-3.14 \
	pytest-ft
CHECK_RUNS := bats pytest-3.13 pytest-3.13-diff packaging c-asan pytest-3.14 fuzz docs c lint \
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
$(eval $(call check_suite,pytest-3.13,pytest,test-python-3.13-rest,$(SOAK_WHY)))
$(eval $(call check_suite,pytest-3.13-diff,pytest,test-python-3.13-diff,$(SOAK_WHY)))
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

