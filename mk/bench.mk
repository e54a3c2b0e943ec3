# mk/bench.mk - make bench, make soak and make example.

bench: all
	scripts/bench

# tests/python/test_differential.py on many more seeds than the few dozen
# of `make check`; PLOOM_DIFF_REQUIRE turns its skip into a failure, since
# a soak that tested nothing must not pass.  Then
# test_primitives_differential.py on 1000 programs (make check runs 16).
# Then the C tests with many more generated programs (the soak column of
# TEST_SIZES, mk/tests.mk), and the tests marked soak (Python tests, among
# them the real libraries' whole suites under pytest --ploom, and the docs'
# long examples).
SOAK_SEEDS ?= 5000
SOAK_START ?= 0
soak: all
	$(MAKE) --no-print-directory test-c TEST_SECONDS=0 PLOOM_TEST_SIZE=soak
	PLOOM_DIFF_SEEDS=$(SOAK_SEEDS) PLOOM_DIFF_START=$(SOAK_START) PLOOM_DIFF_REQUIRE=1 \
		$(VENV)/bin/python -m pytest -p no:cacheprovider -q tests/python/test_differential.py $(PYTEST_FLAGS)
	PLOOM_PRIM_SEEDS=1000 PLOOM_PRIM_START=$(SOAK_START) PLOOM_PRIM_LIMIT=5000 \
		$(VENV)/bin/python -m pytest -p no:cacheprovider -q -s tests/python/test_primitives_differential.py $(PYTEST_FLAGS)
	$(VENV)/bin/python -m pytest -p no:cacheprovider -q tests/python docs/test_examples.py -m soak $(PYTEST_FLAGS)

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
