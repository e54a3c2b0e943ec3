# mk/tests.mk - the test suites: test-c (one target per C test program),
# test-bats, test-sanitize, test-python on each interpreter.

# --- test-c: the C tests -----------------------------------------------------
# The differential tests of the searches hold them to DFS on programs the
# simulator generates: test_dpor on DPOR_PROGRAMS (its views and shards on
# DPOR_VIEW_PROGRAMS, and with the bounds 0, 1 and 2 on DPOR_BOUNDED_PROGRAMS),
# test_ipb on IPB_PROGRAMS, test_shard on SHARD_PROGRAMS; test_minimize holds
# the minimizer to the fewest preemptions on MINIMIZE_PROGRAMS.  How many is
# one knob, PLOOM_TEST_SIZE, a column of TEST_SIZES: check (make check's
# test-c, the default) runs a slice of what they can run, sanitize
# (test-sanitize-c) fewer, soak (make soak) many more.  test-c hands them to
# the programs as PLOOM_DPOR_PROGRAMS, PLOOM_DPOR_VIEW_PROGRAMS,
# PLOOM_DPOR_BOUNDED_PROGRAMS, PLOOM_IPB_PROGRAMS, PLOOM_SHARD_PROGRAMS and
# PLOOM_MINIMIZE_PROGRAMS, which, set in the environment, override the
# column, as the make variables DPOR_PROGRAMS etc. do (and SAN_DPOR_PROGRAMS
# etc. the sanitize column): PLOOM_DPOR_PROGRAMS=N make test-c runs N, as
# build/tests/test_dpor does alone.
#
# The sanitize column: ASan makes a generated program five to seven times
# dearer, and the sanitizers see only the code that runs, and the programs
# past these run no more of lib/: by gcov, its lines, branches and calls
# taken are the same after test_dpor's 1000 programs as after 3000 (300 miss
# a branch of dpor.c), after test_ipb's 10 or 50 as after 300 or 600, after
# test_shard's 10 as after 30.
#
#                 size:check:sanitize:soak
TEST_SIZES := DPOR_PROGRAMS:3000:1000:20000 \
	DPOR_VIEW_PROGRAMS:300:100:3000 \
	DPOR_BOUNDED_PROGRAMS:500:100:10000 \
	IPB_PROGRAMS:200:10:3000 \
	SHARD_PROGRAMS:100:10:300 \
	MINIMIZE_PROGRAMS:300:100:3000
PLOOM_TEST_SIZE ?= check
TEST_SIZE_COLUMN := $(strip $(if $(filter check,$(PLOOM_TEST_SIZE)),2) \
	$(if $(filter sanitize,$(PLOOM_TEST_SIZE)),3) $(if $(filter soak,$(PLOOM_TEST_SIZE)),4))
ifneq ($(words $(TEST_SIZE_COLUMN)),1)
$(error PLOOM_TEST_SIZE='$(PLOOM_TEST_SIZE)' is none of check, sanitize, soak)
endif
# NAME CHECK SANITIZE SOAK: NAME's default, unless PLOOM_NAME is set
define test_size
SAN_$(word 1,$(1)) ?= $(word 3,$(1))
$(word 1,$(1)) ?= $$(or $$(PLOOM_$(word 1,$(1))),$(if $(filter 3,$(TEST_SIZE_COLUMN)),$$(SAN_$(word 1,$(1))),$(word $(TEST_SIZE_COLUMN),$(1))))
endef
$(foreach row,$(TEST_SIZES),$(eval $(call test_size,$(subst :, ,$(row)))))
C_TEST_ENV = PLOOM_DPOR_PROGRAMS=$(DPOR_PROGRAMS) PLOOM_DPOR_VIEW_PROGRAMS=$(DPOR_VIEW_PROGRAMS) \
	PLOOM_IPB_PROGRAMS=$(IPB_PROGRAMS) \
	PLOOM_SHARD_PROGRAMS=$(SHARD_PROGRAMS) PLOOM_DPOR_BOUNDED_PROGRAMS=$(DPOR_BOUNDED_PROGRAMS) \
	PLOOM_MINIMIZE_PROGRAMS=$(MINIMIZE_PROGRAMS)
# Each C test program and each bats test stops after TEST_SECONDS and says
# which it was (0: no limit): one that hangs or crawls under load names
# itself instead of running into CI's limit for the whole check.
TEST_SECONDS ?= 900
BATS := $(if $(filter-out 0,$(TEST_SECONDS)),BATS_TEST_TIMEOUT=$(TEST_SECONDS)) bats
# Each of them refuses a size that is 0 or not a whole number, naming it
# (tests/c/testenv.h), rather than compare nothing and print "passed":
# test-c-sizes holds them to that, for each size, before test-c runs them.
C_TEST_SIZES := test_dpor:PLOOM_DPOR_PROGRAMS test_dpor:PLOOM_DPOR_VIEW_PROGRAMS \
	test_dpor:PLOOM_DPOR_BOUNDED_PROGRAMS test_dpor:PLOOM_DPOR_MAXOPS \
	test_ipb:PLOOM_IPB_PROGRAMS test_shard:PLOOM_SHARD_PROGRAMS \
	test_minimize:PLOOM_MINIMIZE_PROGRAMS
.PHONY: test-c-sizes
test-c-sizes: $(TESTS)
	@for pair in $(C_TEST_SIZES); do \
		t=$${pair%%:*}; var=$${pair#*:}; \
		for v in 0 1x; do \
			if err=$$(env "$$var=$$v" $(BUILD)/tests/$$t 2>&1 >/dev/null); then \
				echo "test-c-sizes: $$t ran with $$var=$$v" >&2; exit 1; \
			fi; \
			if [[ "$$err" != *"$$var='$$v' is not a count"* ]]; then \
				echo "test-c-sizes: $$t did not refuse $$var=$$v by name: $$err" >&2; exit 1; \
			fi; \
		done; \
	done; \
	echo "test-c-sizes: every size of 0 or 1x refused by name"

# test-c-NAME runs build/tests/test_NAME alone, with test-c's sizes and time
# limit, and leaves its exit status in C_RESULTS for test-c's count.  test-c
# runs them all with -k, so that one failing does not stop the others, and
# -O, so that under -j each one's output comes whole: scripts/check-suite
# counts the "== " lines and each program's "N passed, M failed".
C_TEST_RUNS := $(TESTS:$(BUILD)/tests/test_%=test-c-%)
C_RESULTS := $(BUILD)/tests/results
.PHONY: $(C_TEST_RUNS)
$(C_TEST_RUNS): test-c-%: $(BUILD)/tests/test_%
	@mkdir -p $(C_RESULTS); rm -f $(C_RESULTS)/$*
	@echo "== $<"
	@rc=0; $(C_TEST_ENV) timeout $(TEST_SECONDS) $< || rc=$$?; \
	echo "$$rc" > $(C_RESULTS)/$*; \
	if ((rc == 124)); then echo "test-c: FAIL $<: still running after $(TEST_SECONDS) s (TEST_SECONDS)"; \
	elif ((rc)); then echo "test-c: FAIL $< (exit $$rc)"; fi; \
	exit $$((rc != 0))

test-c: $(TESTS) test-c-sizes
	@if [[ -z "$(TESTS)" ]]; then echo "test-c: no tests/c/test_*.c found" >&2; exit 1; fi
	@echo "test-c: test_dpor compares $(DPOR_PROGRAMS) generated programs ($(DPOR_VIEW_PROGRAMS) with views and shards, $(DPOR_BOUNDED_PROGRAMS) bounded), test_ipb $(IPB_PROGRAMS), test_shard $(SHARD_PROGRAMS), test_minimize $(MINIMIZE_PROGRAMS)"
	@rm -rf $(C_RESULTS); \
	$(MAKE) --no-print-directory -k -O $(C_TEST_RUNS) || true
	@passed=0; failed=0; \
	for t in $(C_TEST_RUNS:test-c-%=%); do \
		if [[ "$$(cat $(C_RESULTS)/$$t 2>/dev/null)" == 0 ]]; then passed=$$((passed + 1)); \
		else failed=$$((failed + 1)); fi; \
	done; \
	if ((failed)); then echo "test-c: $$failed of $$((passed + failed)) test programs failed"; exit 1; fi; \
	echo "test-c: all $$passed test programs passed"

test-bats: all
	$(Q)PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(BATS) tests/bats

# The C unit tests and a slice of the bats suite again, against lib/ and the
# utilities built with AddressSanitizer and UBSan in a tree of their own (the
# worker stays the .venv's: an unsanitized interpreter cannot load a
# sanitized extension).  Any report aborts the program, so it fails its
# test.  The differential tests compare fewer generated programs here than
# in test-c: the sanitize column of TEST_SIZES, which says why.
SAN_BUILD := $(BUILD)/san
SAN_PRODUCTS := $(TESTS:$(BUILD)/%=$(SAN_BUILD)/%) $(BINS:$(BUILD)/%=$(SAN_BUILD)/%)
# Under the sanitizers, bats runs SAN_BATS whole: the files of the
# utilities that read traces and statistics (ploom-replay, ploom-show,
# ploom-minimize, ploom-merge, ploom-run-one), each of which also explores
# to make them.  Of ploom-explore.bats and reliability.bats it runs the tests
# whose names match SAN_BATS_SLICE (50 of 129, less one: SAN_BATS_TAGS):
# those of the searches, their limits, the reduction and two workers, the
# saved traces read before a search, and the readers' limits.  The rest
# (usage, progress, orphans, trust, REFERENCE.md's counts again, the shards,
# the install) runs unsanitized in test-bats only: it goes through the same
# readers and searches, and what it adds is what Python and the kernel do,
# not worth twice its time in every make check.  SAN_BATS_SLICE=. runs all
# of those two files.  A test tagged dfs-again (`# bats test_tags=`) compares
# the reduction with DFS over the real worker, scenario by scenario, as
# test_dpor does in the sanitized C tests on a thousand generated programs:
# it runs unsanitized only (SAN_BATS_TAGS).
SAN_BATS := $(addprefix tests/bats/,ploom-replay.bats ploom-show.bats ploom-minimize.bats \
	ploom-merge.bats ploom-run-one.bats)
SAN_BATS_SLICED := tests/bats/ploom-explore.bats tests/bats/reliability.bats
SAN_BATS_SLICE := search|reduction|-j 2|saved|duplicate key|bounded input|out of range|FIFO
SAN_BATS_TAGS := !dfs-again

.PHONY: sanitize-build test-sanitize-c test-sanitize-bats
test-sanitize: test-sanitize-c test-sanitize-bats

sanitize-build: all
	@$(MAKE) --no-print-directory BUILD=$(SAN_BUILD) DEPS_STAMP=$(DEPS_STAMP) \
		SANITIZE=address,undefined $(SAN_PRODUCTS)

test-sanitize-c: sanitize-build
	@$(MAKE) --no-print-directory BUILD=$(SAN_BUILD) DEPS_STAMP=$(DEPS_STAMP) SANITIZE=address,undefined \
		PLOOM_TEST_SIZE=sanitize test-c

test-sanitize-bats: sanitize-build
	@echo "test-sanitize: bats under the sanitizers: $(notdir $(SAN_BATS)) whole; of $(notdir $(SAN_BATS_SLICED)), the tests named '$(SAN_BATS_SLICE)'"
	$(Q)PATH="$(CURDIR)/$(SAN_BUILD)/bin:$(CURDIR)/$(VENV)/bin:$$PATH" \
		PLOOM_PYTHON="$(CURDIR)/$(VENV)/bin/python" $(BATS) $(SAN_BATS)
	$(Q)PATH="$(CURDIR)/$(SAN_BUILD)/bin:$(CURDIR)/$(VENV)/bin:$$PATH" \
		PLOOM_PYTHON="$(CURDIR)/$(VENV)/bin/python" $(BATS) -f '$(SAN_BATS_SLICE)' \
		--filter-tags '$(SAN_BATS_TAGS)' $(SAN_BATS_SLICED)

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
# test_primitives_differential.py's slice here: PRIM_SEEDS programs of
# primgen's primitive theme and PRIM_TIME_SEEDS of its time theme (its
# defaults, 16 and 12, when run alone; `make soak` runs 1000)
PRIM_SEEDS ?= 10
PRIM_TIME_SEEDS ?= 8
# --durations: the log says where the time went
PYTEST := -m pytest -m "not soak" --durations=10 $(PYTEST_FLAGS)
# No free-threaded CPython can be installed on these machines (see
# check-free-threaded-abi): its run is skipped unless PLOOM_PYTHON_FT names
# one, and what can be checked without it is checked by make lint.
FT_SKIPPED := as expected: PLOOM_PYTHON_FT names no free-threaded CPython, and none is \
	packaged for Debian or on PyPI; make lint compiled the extension for its ABI instead

# make check runs the suite on 3.13 in two halves, so that its two longest
# suites do not both wait for one: PY_DIFF_TESTS, the files that hold the
# reduction to plain DFS, and the rest.
PY_DIFF_TESTS := $(addprefix tests/python/,test_differential.py test_primitives_differential.py \
	test_plain.py test_clock.py test_threading.py)
PY313 = PLOOM_DIFF_SEEDS=$(DIFF_SEEDS) PLOOM_PRIM_SEEDS=$(PRIM_SEEDS) PLOOM_PRIM_TIME_SEEDS=$(PRIM_TIME_SEEDS) \
	$(VENV)/bin/python $(PYTEST)
PY313_SAY = @echo "test-python: pytest on $$($(VENV)/bin/python -c '$(PY_NAME)') ($(VENV)):

.PHONY: test-python-3.13-diff test-python-3.13-rest
test-python-3.13: all
	$(PY313_SAY) the whole suite"
	$(Q)$(PY313) tests/python

test-python-3.13-diff: all
	$(PY313_SAY) the differential files (PY_DIFF_TESTS: $(notdir $(PY_DIFF_TESTS)))"
	$(Q)$(PY313) $(PY_DIFF_TESTS)

test-python-3.13-rest: all
	$(PY313_SAY) the suite less PY_DIFF_TESTS"
	$(Q)$(PY313) $(addprefix --ignore=,$(PY_DIFF_TESTS)) tests/python

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
