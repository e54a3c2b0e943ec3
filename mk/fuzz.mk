# mk/fuzz.mk - make fuzz, the libFuzzer targets of tests/fuzz.
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

FUZZ_FLAGS_TEXT = $(FUZZ_CC) $(FUZZ_FLAGS) $(PKG_LIBS)
$(eval $(call flags_file,$(FUZZ_FLAGS_FILE),FUZZ_FLAGS_TEXT))

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
