#!/usr/bin/env bats
# ploom-explore: counts, limits, failures of every kind, usage errors.
# Needs ploom-explore and the worker's python3 on PATH (.venv/bin).

# $output, $stderr and $status are set by bats' run, ROOT, SCN and BANK by
# helpers.bash
# shellcheck disable=SC2154

bats_require_minimum_version 1.5.0

load helpers

# counts SCENARIO BOUND SCHEDULES FAILING [JOBS]: exhaustive search with -k
# (and -j JOBS when given)
counts() {
	local bound=() jobs=()
	[ "$2" = none ] || bound=(-p "$2")
	[ -z "${5:-}" ] || jobs=(-j "$5")
	run --separate-stderr ploom-explore -q -k "${bound[@]}" "${jobs[@]}" "$SCN:$1"
	echo "$output" > stats.json
	[ "$(jq .schedules stats.json)" -eq "$3" ]
	[ "$(jq .failing stats.json)" -eq "$4" ]
	if [ "$4" -eq 0 ]; then [ "$status" -eq 0 ]; else [ "$status" -eq 1 ]; fi
}

# same_with_jobs TARGET SCHEDULES FAILING: -k with -j 1 and with -j 2 count
# SCHEDULES and FAILING and list the same outcomes
same_with_jobs() {
	local jobs status_want=0
	[ "$3" -eq 0 ] || status_want=1
	for jobs in 1 2; do
		run --separate-stderr ploom-explore -q -k -j "$jobs" "$1"
		[ "$status" -eq "$status_want" ]
		echo "$output" > "j$jobs.json"
		[ "$(jq .jobs "j$jobs.json")" -eq "$jobs" ]
		[ "$(jq .schedules "j$jobs.json")" -eq "$2" ]
		[ "$(jq .failing "j$jobs.json")" -eq "$3" ]
		jq -cS '.outcomes | sort_by(.kind, .summary)' "j$jobs.json" > "outcomes$jobs.json"
	done
	cmp outcomes1.json outcomes2.json
}

@test "the unlocked bank stops at its first failure and writes the trace" {
	run -1 --separate-stderr ploom-explore -q "$BANK:scenario"
	echo "$output" > stats.json
	[[ "$stderr" == *"failed: builtins.AssertionError: the account is overdrawn"* ]]
	[[ "$stderr" == *"trace written to '.ploom/"*"-original.json'"* ]]
	[ "$(jq -r .result stats.json)" = failure ]
	[ "$(jq -r .stopped_by stats.json)" = failure ]
	[ "$(jq .failing stats.json)" -eq 1 ]
	[ "$(jq -r .failure.type stats.json)" = builtins.AssertionError ]
	[ "$(jq -r .failure.message stats.json)" = "the account is overdrawn" ]
	trace="$(jq -r .trace stats.json)"
	[ -f "$trace" ]
	[ ! -e "$trace.tmp" ]
	[ "$(jq -r .format "$trace")" = ploom-trace ]
	[ "$(jq .version "$trace")" -eq 2 ]
	[ "$(jq -r .outcome.kind "$trace")" = failure ]
	[ "$(jq -r .outcome.exception.message "$trace")" = "the account is overdrawn" ]
}

@test "the first failure is minimized beside the original" {
	run -1 --separate-stderr ploom-explore -q "$BANK:scenario"
	echo "$output" > stats.json
	trace="$(jq -r .trace stats.json)"
	min="$(jq -r .minimized_trace stats.json)"
	[ "$min" = "${trace%-original.json}-minimized.json" ]
	[ -f "$min" ]
	[ ! -e "$min.tmp" ]
	[ "$(jq .preemptions "$trace")" -eq 2 ]
	[ "$(jq .preemptions "$min")" -eq 1 ]
	[ "$(jq .minimized_from "$min")" -eq 2 ]
	[ "$(jq .minimized_from "$trace")" = null ]
	[ "$(jq -r .outcome.summary "$min")" = "$(jq -r .outcome.summary "$trace")" ]
	[ "$(jq -r .id "$min")" = "$(basename "$trace" -original.json)" ]
	[[ "$stderr" == *"ploom-explore: minimized trace written to '$min' (2 -> 1 preemptions)"* ]]
}

@test "a failure ends with the next step: replay the minimized trace, read it with ploom-show" {
	scenarios_here
	run -1 --separate-stderr ploom-explore -q scenarios.py:bank_unlocked
	min="$(jq_output -r .minimized_trace)"
	[ "${stderr_lines[-1]}" = "ploom-explore: Replay: ploom-replay $min  # read it with: ploom-show $min" ]
	# the line runs as pasted: the shell takes the reading for a comment
	run -1 --separate-stderr bash -c "${stderr_lines[-1]#ploom-explore: Replay: }"
	[ "$stderr" = "ploom-replay: reproduced: builtins.AssertionError: the account is overdrawn" ]
	# without a minimized trace, the original; a path a shell would split is quoted
	run -1 --separate-stderr ploom-explore -q --no-minimize --trace-dir="a b" scenarios.py:bank_unlocked
	trace="$(jq_output -r .trace)"
	[ "${stderr_lines[-1]}" = "ploom-explore: Replay: ploom-replay '$trace'  # read it with: ploom-show '$trace'" ]
	run -1 --separate-stderr bash -c "${stderr_lines[-1]#ploom-explore: Replay: }"
	# ploom's Python side says it itself, with its own command
	run -1 --separate-stderr env PLOOM_NO_NEXT_STEP=1 ploom-explore -q scenarios.py:bank_unlocked
	[[ "$stderr" != *Replay:* ]]
	# no failure, no next step
	run -0 --separate-stderr ploom-explore -q scenarios.py:bank_locked
	[ -z "$stderr" ]
}

# verdict SCENARIO OPTION...: "EXIT FAILURE-KIND" of ploom-explore on the
# scenario, without minimizing
verdict() {
	local name=$1 rc=0
	shift
	ploom-explore -q --no-minimize "$@" "$SCN:$name" >stats.json 2>/dev/null || rc=$?
	echo "$rc $(jq -r '.failure.kind // "-"' stats.json)"
}

# bats test_tags=dfs-again
@test "--reduction=dpor with -p N: the verdict of the depth-first search with the same bound" {
	local name bound dfs dpor failed=0 passed=0
	for name in bank_locked bank_unlocked abba lock_order_bug racy_counter2 counter3; do
		for bound in 0 1 2; do
			# counter3's DFS with 2 preemptions is 1866 schedules: too slow here
			[[ $name == counter3 && $bound == 2 ]] && continue
			dfs=$(verdict "$name" -p "$bound")
			dpor=$(verdict "$name" -p "$bound" --reduction=dpor)
			echo "$name -p $bound: dfs $dfs, dpor $dpor"
			[ "$dpor" = "$dfs" ]
			[ "$(jq .max_preemptions stats.json)" -eq "$bound" ]
			[ "$(jq -r .reduction stats.json)" = dpor ]
			[[ $dfs == 1* ]] && failed=$((failed + 1))
			[[ $dfs == 0* ]] && passed=$((passed + 1))
		done
	done
	# both verdicts come up: the bound decides some
	((failed >= 4 && passed >= 8))
	# abba deadlocks with 1 preemption, not with none
	[ "$(verdict abba -p 0 --reduction=dpor)" = "0 -" ]
	[ "$(verdict abba -p 1 --reduction=dpor)" = "1 deadlock" ]
}

@test "--reduction=dpor -k with -p N runs no more schedules than the depth-first search" {
	local dfs dpor
	ploom-explore -q -k --no-minimize -p 2 "$SCN:abba" >dfs.json || true
	ploom-explore -q -k --no-minimize -p 2 --reduction=dpor "$SCN:abba" >dpor.json || true
	dfs=$(jq .schedules dfs.json)
	dpor=$(jq .schedules dpor.json)
	echo "abba -p 2: dfs $dfs schedules, dpor $dpor"
	[ "$dfs" -eq 59 ]
	((dpor < dfs))
	[ "$(jq .failing dpor.json)" -gt 0 ]
	# every schedule it ran is within the bound: its failure's trace says so
	[ "$(jq .preemptions "$(jq -r .trace dpor.json)")" -le 2 ]
}

@test "--reduction=dpor minimizes the philosophers' deadlock to the fewest preemptions" {
	# no schedule with 0 preemptions deadlocks, some with 1 does
	[ "$(verdict philosophers3 -p 0)" = "0 -" ]
	[ "$(verdict philosophers3 -p 1)" = "1 deadlock" ]
	# --no-saved: the verdicts above saved their failure (1 preemption),
	# which would run first; this is about the search's own first failure
	run -1 --separate-stderr ploom-explore -q --no-saved --reduction=dpor "$SCN:philosophers3"
	echo "$output" > stats.json
	trace="$(jq -r .trace stats.json)"
	min="$(jq -r .minimized_trace stats.json)"
	[ "$(jq .preemptions "$trace")" -eq 2 ]
	[ "$(jq .preemptions "$min")" -eq 1 ]
	[ "$(jq -r .outcome.kind "$min")" = deadlock ]
	[[ "$stderr" == *"minimized trace written to '$min' (2 -> 1 preemptions)"* ]]
}

@test "traces carry the scenario's fingerprint and their id" {
	run -1 --separate-stderr ploom-explore -q "$BANK:scenario"
	trace="$(jq_output -r .trace)"
	[ "$(jq '.fingerprints | length' "$trace")" -eq 1 ]
	[ "$(jq -r '.fingerprints[0].path' "$trace")" = "$(jq -r .scenario.file "$trace")" ]
	[ "$(jq -r '.fingerprints[0].blob' "$trace")" = "$(git hash-object "$BANK")" ]
	[ "$(jq -r .id "$trace")" = "$(basename "$trace" -original.json)" ]
}

@test "a tiny --minimize-seconds keeps the original as the minimized trace and says so" {
	cp "$BANK" bank.py
	run -1 --separate-stderr ploom-explore -q --minimize-seconds=0.001 bank.py:scenario
	echo "$output" > stats.json
	[ "$(jq -r .minimize_stopped_by stats.json)" = time ]
	min="$(jq -r .minimized_trace stats.json)"
	trace="$(jq -r .trace stats.json)"
	[ "$(jq -c .choices "$min")" = "$(jq -c .choices "$trace")" ]
	[ "$(jq .minimized_from "$min")" = null ]
	[[ "$stderr" =~ "ploom-explore: the minimizer stopped early after "[0-9]+" schedules"?": its time ran out (--minimize-seconds); the trace written has the fewest preemptions found (2 of 2), not proven the fewest" ]]
	run -1 --separate-stderr ploom-replay "$min"
	[ "$stderr" = "ploom-replay: reproduced: builtins.AssertionError: the account is overdrawn" ]
	# a search that ends writes no minimize_stopped_by
	run -1 --separate-stderr ploom-explore -q --no-saved bank.py:scenario
	[ "$(jq_output 'has("minimize_stopped_by")')" = false ]
}

@test "--no-minimize writes the original only" {
	run -1 --separate-stderr ploom-explore -q --no-minimize "$BANK:scenario"
	echo "$output" > stats.json
	[ "$(jq .minimized_trace stats.json)" = null ]
	[ -f "$(jq -r .trace stats.json)" ]
	[ -z "$(find .ploom -name '*-minimized.json')" ]
	[[ "$stderr" != *minimized* ]]
}

@test "-k minimizes the first failure" {
	run -1 --separate-stderr ploom-explore -q -k "$BANK:scenario"
	echo "$output" > stats.json
	[ "$(jq .schedules stats.json)" -eq 221 ]
	min="$(jq -r .minimized_trace stats.json)"
	[ -f "$min" ]
	[ "$(jq .preemptions "$min")" -eq 1 ]
}

@test "the failure id is stable across runs" {
	run -1 --separate-stderr ploom-explore -q "$BANK:scenario"
	first="$(jq_output -r .trace)"
	run -1 --separate-stderr ploom-explore -q "$BANK:scenario"
	[ "$(jq_output -r .trace)" = "$first" ]
}

@test "the unlocked bank has 221 schedules, 75 failing, with -k" {
	run -1 --separate-stderr ploom-explore -q -k "$BANK:scenario"
	echo "$output" > stats.json
	[ "$(jq .schedules stats.json)" -eq 221 ]
	[ "$(jq .failing stats.json)" -eq 75 ]
	[ "$(jq -r .result stats.json)" = failure ]
	[ "$(jq .complete stats.json)" = true ]
}

@test "-k lists the outcomes of the unlocked bank's 221 schedules, 75 failing" {
	run -1 --separate-stderr ploom-explore -q -k "$BANK:scenario"
	echo "$output" > stats.json
	[ "$(jq .schedules stats.json)" -eq 221 ]
	[ "$(jq '[.outcomes[].schedules] | add' stats.json)" -eq 221 ]
	[ "$(jq '[.outcomes[] | select(.kind == "failure")] | length' stats.json)" -eq 1 ]
	[ "$(jq '.outcomes[] | select(.kind == "failure") | .schedules' stats.json)" -eq 75 ]
	[ "$(jq -r '.outcomes[] | select(.kind == "failure") | .summary' stats.json)" = "builtins.AssertionError: the account is overdrawn" ]
	# in the order they first came: the first schedule passes
	[ "$(jq -c '.outcomes[0]' stats.json)" = '{"kind":"pass","summary":"pass","schedules":146}' ]
	[ "$(jq '.outcomes | length' stats.json)" -eq 2 ]
	[ "$(jq .outcomes_truncated stats.json)" = false ]
}

@test "without -k the statistics list no outcomes" {
	run -1 --separate-stderr ploom-explore -q "$BANK:scenario"
	echo "$output" > stats.json
	[ "$(jq 'has("outcomes")' stats.json)" = false ]
	[ "$(jq 'has("outcomes_truncated")' stats.json)" = false ]
}

@test "the locked bank passes all 127 schedules" {
	run -0 --separate-stderr ploom-explore -q "$SCN:bank_locked"
	echo "$output" > stats.json
	[ "$(jq .schedules stats.json)" -eq 127 ]
	[ "$(jq -r .result stats.json)" = pass ]
	[ "$(jq .complete stats.json)" = true ]
	[ "$(jq .stopped_by stats.json)" = null ]
	[ "$(jq .trace stats.json)" = null ]
	[ "$(jq .minimized_trace stats.json)" = null ]
	[ "$(jq .failure stats.json)" = null ]
	[ "$(jq -r .reduction stats.json)" = none ]
	[ "$(jq -r .hash_seed stats.json)" = 0 ]
	[ "$(jq .max_depth stats.json)" -gt 0 ]
	[ ! -e .ploom ]
}

@test "bank_unlocked counts with preemption bounds 0, 1, 2" {
	counts bank_unlocked none 221 75
	counts bank_unlocked 0 3 0
	counts bank_unlocked 1 14 3
	counts bank_unlocked 2 52 14
	[ "$(jq .max_preemptions stats.json)" -eq 2 ]
}

@test "bank_locked counts with preemption bounds 0, 1, 2" {
	counts bank_locked 0 3 0
	counts bank_locked 1 22 0
	counts bank_locked 2 55 0
}

@test "abba counts match REFERENCE.md" {
	counts abba none 194 10
	counts abba 0 3 0
	counts abba 1 19 2
	counts abba 2 59 5
}

@test "racy_counter2 counts match REFERENCE.md" {
	counts racy_counter2 none 69 30
	counts racy_counter2 0 3 0
	counts racy_counter2 1 12 3
	counts racy_counter2 2 32 10
}

@test "try_lock counts match REFERENCE.md" {
	counts try_lock none 307 0
	counts try_lock 0 3 0
	counts try_lock 1 24 0
	counts try_lock 2 77 0
}

@test "flag_handoff counts match REFERENCE.md" {
	counts flag_handoff none 488 0
	counts flag_handoff 0 3 0
	counts flag_handoff 1 21 0
	counts flag_handoff 2 76 0
}

@test "counter3 counts with bounds 0 and 1 match REFERENCE.md" {
	counts counter3 0 13 0
	counts counter3 1 313 0
}

@test "a deadlock is a failure of kind deadlock" {
	run -1 --separate-stderr ploom-explore -q "$SCN:abba"
	echo "$output" > stats.json
	[ "$(jq -r .failure.kind stats.json)" = deadlock ]
	[[ "$stderr" == *"failed: deadlock: task "*" waits to acquire lock#"*" held by task "* ]]
	trace="$(jq -r .trace stats.json)"
	[ "$(jq -r .outcome.kind "$trace")" = deadlock ]
	[ "$(jq '.outcome.waits | length' "$trace")" -ge 2 ]
}

@test "an exception in a thread is a failure naming its type" {
	run -1 --separate-stderr ploom-explore -q "$SCN:raises_in_thread"
	echo "$output" > stats.json
	[ "$(jq -r .failure.kind stats.json)" = failure ]
	[ "$(jq -r .failure.type stats.json)" != null ]
	trace="$(jq -r .trace stats.json)"
	[ "$(jq .outcome.task "$trace")" -ge 1 ]
}

@test "a 100 MB exception message is a failure with the message cut, and its traces are written" {
	# Making and formatting 200 MB of text takes a second alone and can
	# pass the default schedule timeout on a loaded machine, which would
	# make the outcome a timeout: this test is about the cut, not the clock
	run -1 --separate-stderr ploom-explore -q --schedule-timeout 600 "$SCN:raises_a_huge_message"
	echo "$output" > stats.json
	[ "$(jq -r .failure.kind stats.json)" = failure ]
	[[ "$(jq -r .failure.summary stats.json)" == "builtins.ValueError: xxxxx"*"x... [cut: 99934464 bytes]" ]]
	[[ "$stderr" == *"failed: builtins.ValueError: xxxxx"*"x... [cut: 99934464 bytes]"* ]]
	[[ "$(jq -r .outcome.exception.message "$(jq -r .trace stats.json)")" == *"x... [cut: 99934464 bytes]" ]]
	[ -f "$(jq -r .minimized_trace stats.json)" ]
}

@test "-n stops the search and makes it incomplete" {
	run -3 --separate-stderr ploom-explore -q -n 5 "$SCN:bank_locked"
	echo "$output" > stats.json
	[ "$(jq .schedules stats.json)" -eq 5 ]
	[ "$(jq -r .result stats.json)" = incomplete ]
	[ "$(jq .complete stats.json)" = false ]
	[ "$(jq -r .stopped_by stats.json)" = max-schedules ]
}

@test "-n equal to the whole search is complete" {
	run -0 --separate-stderr ploom-explore -q -n 127 "$SCN:bank_locked"
	[ "$(jq_output -r .result)" = pass ]
}

@test "-t stops the search and makes it incomplete" {
	run -3 --separate-stderr ploom-explore -q -t 0.001 "$SCN:bank_locked"
	echo "$output" > stats.json
	[ "$(jq -r .result stats.json)" = incomplete ]
	[ "$(jq -r .stopped_by stats.json)" = time-limit ]
}

@test "a schedule reaching the step limit makes the search incomplete and keeps its trace" {
	run -3 --separate-stderr ploom-explore -q -s 50 "$SCN:spins_forever"
	echo "$output" > stats.json
	[ "$(jq -r .result stats.json)" = incomplete ]
	[ "$(jq -r .stopped_by stats.json)" = max-steps ]
	[ "$(jq .failing stats.json)" -eq 0 ]
	trace="$(jq -r .trace stats.json)"
	[ "$(jq -r .outcome.kind "$trace")" = step-limit ]
	[ "$(jq '.steps | length' "$trace")" -eq 50 ]
	[[ "$stderr" == *"reached the step limit"* ]]
	# saved under its id, and not minimized: it is not a failure
	[ "$(jq -r .id "$trace")" = "$(basename "$trace" -original.json)" ]
	[ "$(jq .minimized_trace stats.json)" = null ]
}

# line_of FUNCTION TEXT: the line of the scenarios' FUNCTION that holds TEXT
line_of() {
	awk -v f="def $1()" -v t="$2" 'index($0, f) == 1 { in_f = 1; next }
		in_f && /^def / { exit } in_f && index($0, t) { print NR; exit }' "$SCN"
}

@test "a schedule at the step limit says where each task was, and stops an exhaustive search" {
	spin="$(line_of spins_forever yield_now)"
	[ -n "$spin" ]
	for search in dfs ipb; do
		run -3 --separate-stderr ploom-explore -q --search=$search -s 50 "$SCN:spins_forever"
		echo "$output" > stats.json
		[ "$(jq -r .result stats.json)" = incomplete ]
		[ "$(jq -r .complete stats.json)" = false ]
		[ "$(jq .step_limited stats.json)" -eq 1 ]
		[ "$(jq .schedules stats.json)" -eq 1 ]
		[[ "$stderr" == *"ploom-explore: where each task was:"* ]]
		[[ "$stderr" == *"thread#1 was in: tests/python/scenarios.py:$spin in spin"* ]]
		[[ "$stderr" == *"1 of 1 schedule reached the step limit: not a pass"* ]]
		trace="$(jq -r .trace stats.json)"
		[ "$(jq '.outcome.stacks[1].frames[0].line' "$trace")" -eq "$spin" ]
		run -0 --separate-stderr ploom-show "$trace"
		[ "${lines[-1]}" = "  thread#1 was in: tests/python/scenarios.py:$spin in spin" ]
	done
	# the reduction's too, on a loop over a cell
	wait="$(line_of waits_for_a_cell_nobody_writes ready.read)"
	run -3 --separate-stderr ploom-explore -q --reduction=dpor -s 50 \
		"$SCN:waits_for_a_cell_nobody_writes"
	echo "$output" > stats.json
	[ "$(jq -r .stopped_by stats.json)" = max-steps ]
	[ "$(jq .step_limited stats.json)" -eq 1 ]
	[[ "$stderr" == *"thread#1 was in: tests/python/scenarios.py:$wait in waiter"* ]]
}

@test "a sample counts the schedules that reach the step limit and runs all of them" {
	spin="$(line_of spins_forever yield_now)"
	wait="$(line_of waits_for_a_cell_nobody_writes ready.read)"
	for search in pct random; do
		for scn in spins_forever:$spin:spin waits_for_a_cell_nobody_writes:$wait:waiter; do
			IFS=: read -r fn line where <<< "$scn"
			run -3 --separate-stderr ploom-explore -q --search=$search --seed=5 \
				--max-schedules=6 -s 50 "$SCN:$fn"
			echo "$output" > stats.json
			[ "$(jq -r .result stats.json)" = incomplete ]
			[ "$(jq -r .stopped_by stats.json)" = max-schedules ]
			[ "$(jq .schedules stats.json)" -eq 6 ]
			[ "$(jq .step_limited stats.json)" -eq 6 ]
			[ "$(jq .failing stats.json)" -eq 0 ]
			# the first is reported and saved, the others counted
			[ "$(grep -c 'reached the step limit (50 steps)' <<< "$stderr")" -eq 1 ]
			[[ "$stderr" == *"thread#1 was in: tests/python/scenarios.py:$line in $where"* ]]
			[[ "$stderr" == *"6 of 6 schedules reached the step limit: not a pass"* ]]
			[ "$(jq -r .outcome.kind "$(jq -r .trace stats.json)")" = step-limit ]
		done
	done
}

@test "with -s 0 a spinning schedule stops at the most steps, and its trace can be read" {
	# without that maximum it spun until the schedule timeout, writing a
	# trace of about 100 MB a second that no reader would accept
	run -3 --separate-stderr ploom-explore -q -s 0 --no-minimize "$SCN:spins_forever"
	echo "$output" > stats.json
	[ "$(jq -r .result stats.json)" = incomplete ]
	[ "$(jq -r .stopped_by stats.json)" = max-steps ]
	[[ "$stderr" == *"ploom-explore: schedule 1 reached the step limit (200000 steps)"* ]]
	trace="$(jq -r .trace stats.json)"
	[ "$(jq -r .outcome.kind "$trace")" = step-limit ]
	[ "$(jq .outcome.limit "$trace")" -eq 200000 ]
	[ "$(jq .config.max_steps "$trace")" -eq 0 ]
	[ "$(stat -c %s "$trace")" -lt $((256 << 20)) ]
	run -0 --separate-stderr ploom-show "$trace"
	# the outcome, then where each task was
	[ "${lines[-3]}" = "step-limit: the schedule reached 200000 steps" ]
	[ "${lines[-2]}" = "  MainThread was in: tests/python/scenarios.py:$(line_of spins_forever t.join) in spins_forever" ]
	[ "${lines[-1]}" = "  thread#1 was in: tests/python/scenarios.py:$(line_of spins_forever yield_now) in spin" ]
	# the trace's config says what 0 meant, not "none"
	printf '%s\n' "${lines[@]}" | grep -q '^config .*, max_steps 0 (the most, 200000), '
	# a larger -s is refused rather than cut short in silence
	run -2 --separate-stderr ploom-explore -s 200001 "$SCN:spins_forever"
	[[ "$stderr" == "ploom-explore: invalid --max-steps '200001': not an integer from 0 to 200000"* ]]
}

@test "a schedule that hangs outside ploom is a timeout failure" {
	run -1 --separate-stderr ploom-explore -q --schedule-timeout 0.5 "$SCN:blocks_outside"
	echo "$output" > stats.json
	[ "$(jq -r .failure.kind stats.json)" = timeout ]
	[ "$(jq -r .failure.summary stats.json)" = "timeout: the schedule ran longer than 0.5 s" ]
	[ -f "$(jq -r .trace stats.json)" ]
	run -1 pgrep -f "$SCN:blocks_outside"
}

@test "a scenario that calls os._exit is an exit failure" {
	run -1 --separate-stderr ploom-explore -q "$SCN:calls_os_exit"
	echo "$output" > stats.json
	[ "$(jq -r .failure.kind stats.json)" = exit ]
	trace="$(jq -r .trace stats.json)"
	[ "$(jq .outcome.status "$trace")" -eq 3 ]
	[ "$(jq -r .outcome.summary "$trace")" = "exit: the scenario exited with status 3" ]
}

@test "a scenario that crashes the interpreter is a crash failure" {
	run -1 --separate-stderr ploom-explore -q "$SCN:crashes"
	echo "$output" > stats.json
	[ "$(jq -r .failure.kind stats.json)" = crash ]
	trace="$(jq -r .trace stats.json)"
	[ "$(jq .outcome.signal "$trace")" -eq 6 ]
	[ "$(jq -r .outcome.summary "$trace")" = "crash: killed by signal 6 (SIGABRT)" ]
}

@test "--trace-dir is created and used" {
	run -1 --separate-stderr ploom-explore -q --trace-dir out/traces "$BANK:scenario"
	trace="$(jq_output -r .trace)"
	[[ "$trace" == out/traces/*-original.json ]]
	[ -f "$trace" ]
}

@test "a trace folder that is a symbolic link is refused, named, and nothing is read or written through it" {
	cp "$BANK" bank.py
	mkdir elsewhere real
	# a failure saved there, which a search through the link would run first
	run -1 --separate-stderr ploom-explore -q --no-minimize --trace-dir=elsewhere bank.py:scenario
	before="$(ls elsewhere)"
	ln -s elsewhere .ploom
	ln -s elsewhere given
	for dir in "" --trace-dir=given --trace-dir=given/ --trace-dir="$PWD/given"; do
		run -2 --separate-stderr ploom-explore -q ${dir:+"$dir"} bank.py:scenario
		[[ "$stderr" == "ploom-explore: the trace folder '"*"' is a symbolic link (to 'elsewhere'): "* ]]
		[ -z "$output" ]
		[ "$(ls elsewhere)" = "$before" ]
	done
	[[ "$stderr" == *"'$PWD/given'"* ]]
	# a link on the way to the folder is the user's own path
	ln -s real up
	run -1 --separate-stderr ploom-explore -q --no-minimize --trace-dir=up/traces bank.py:scenario
	[ -f "$(jq_output -r .trace)" ]
	[ -n "$(ls real/traces)" ]
}

@test "eight runs at once saving into one trace folder each find and save the failure" {
	local i st pids=()
	for i in 1 2 3 4 5 6 7 8; do
		ploom-explore -q --trace-dir=shared "$BANK:scenario" >"stats$i.json" 2>"err$i" &
		pids+=($!)
	done
	for i in 1 2 3 4 5 6 7 8; do
		st=0
		wait "${pids[i - 1]}" || st=$?
		cat "err$i"
		[ "$st" -eq 1 ]
		[ -f "$(jq -r .trace "stats$i.json")" ]
		[ -f "$(jq -r .minimized_trace "stats$i.json")" ]
	done
	# the two traces, and no temporary file left behind
	[ "$(find shared -type f | wc -l)" -eq 2 ]
}

@test "a trace that cannot be saved still prints the failure and the statistics, then exits 2 with why" {
	echo "not a folder" > somefile
	run -2 --separate-stderr ploom-explore -q --trace-dir=somefile/x "$BANK:scenario"
	echo "$stderr"
	echo "$output" > stats.json
	[[ "$stderr" == "ploom-explore: schedule "*" failed: builtins.AssertionError: the account is overdrawn"* ]]
	[ "$(echo "$stderr" | tail -n 1)" = "ploom-explore: cannot save the trace: cannot create directory 'somefile': File exists" ]
	[[ "$stderr" != *"trace written"* ]]
	[ "$(jq -r .result stats.json)" = failure ]
	[ "$(jq .failing stats.json)" -eq 1 ]
	[ "$(jq .trace stats.json)" = null ]
	[ "$(jq .minimized_trace stats.json)" = null ]
	[ "$(jq -r .failure.type stats.json)" = builtins.AssertionError ]
	# the same when the trace folder is itself a file
	run -2 --separate-stderr ploom-explore -q --trace-dir=somefile "$BANK:scenario"
	[ "$(echo "$stderr" | tail -n 1)" = "ploom-explore: cannot save the trace: cannot create directory 'somefile': File exists" ]
	[ "$(jq_output -r .result)" = failure ]
}

@test "under ulimit -f a trace too large to write is a write error, exit 2, not death by SIGXFSZ" {
	# 1 KiB: the statistics go to a pipe, the trace (several KiB) to a file
	# shellcheck disable=SC2016 # $1 is the inner shell's
	run -2 --separate-stderr bash -c 'ulimit -f 1 && exec ploom-explore -q --no-minimize "$1"' _ "$BANK:scenario"
	echo "$stderr"
	[[ "$(echo "$stderr" | tail -n 1)" == "ploom-explore: cannot save the trace: cannot write '.ploom/"*"-original.json': File too large" ]]
	[ "$(jq_output -r .result)" = failure ]
	# nothing half-written is left under the trace's name
	run ls .ploom
	[[ "$output" != *-original.json* ]]
}

@test "a schedule's process killed from outside stops the search, saying so, and saves no failure" {
	cat > victim.py <<-EOF
	import os, select
	def scenario():
	    with open("pid", "w") as f:
	        f.write(str(os.getpid()))
	    select.select([], [], [], 30)
	EOF
	ploom-explore -q victim.py:scenario > stats.json 2> err.txt &
	explore=$!
	for _ in $(seq 200); do
		[ -s pid ] && break
		sleep 0.05
	done
	kill -9 "$(cat pid)"
	st=0
	wait "$explore" || st=$?
	cat err.txt
	[ "$st" -eq 2 ]
	grep -q "^ploom-explore: a schedule's process was killed by signal 9 from outside ploom" err.txt
	[ ! -e .ploom ] || [ -z "$(ls .ploom)" ]
}

@test "a scenario that sends itself SIGKILL is a crash of the scenario, however it sends it" {
	for call in "os.kill(os.getpid(), signal.SIGKILL)" "os.kill(0, signal.SIGKILL)" \
		"os.killpg(os.getpgrp(), signal.SIGKILL)" \
		"signal.pthread_kill(threading.get_ident(), signal.SIGKILL)"; do
		printf 'import os, signal, threading\ndef scenario():\n    %s\n' "$call" > selfkill.py
		# unpatched: the real threading.get_ident() is the thread's pthread_t
		run -1 --separate-stderr ploom-explore -q --no-minimize --patch=- --trace-dir="t$RANDOM" \
			selfkill.py:scenario
		[ "$(jq_output -r .failure.summary)" = "crash: killed by signal 9 (SIGKILL)" ]
	done
}

@test "bytes a scenario writes into the stack dump of a timeout reach the trace as UTF-8 text" {
	# the dump is a file the schedule's process holds open: a scenario can
	# write anything there, here a frame whose names are not UTF-8
	cat > dump.py <<-'EOF'
	import os, select, threading
	def scenario():
	    for fd in os.listdir("/proc/self/fd"):
	        try:
	            target = os.readlink(f"/proc/self/fd/{fd}")
	        except OSError:
	            continue
	        if target.startswith("/memfd:ploom-stacks"):
	            os.write(int(fd), b'Thread 0x%016x (most recent call first):\n'
	                     b'  File "/x\xff\xfe.py", line 3 in f\xc3\n' % threading.get_ident())
	    select.select([], [], [], 30)
	EOF
	# unpatched: the dump names the real thread by threading.get_ident()
	run -1 --separate-stderr ploom-explore -q --no-minimize --patch=- --schedule-timeout=0.5 \
		dump.py:scenario
	trace="$(jq_output -r .trace)"
	run -0 --separate-stderr ploom-show "$trace"
	[[ "$output" == *"MainThread was in: x??.py:3 in f?"* ]]
	run -0 jq -r '.outcome.stacks[0].frames[0].file' "$trace"
	[ "$output" = "/x??.py" ]
}

@test "--hash-seed reaches the statistics and the trace" {
	run -1 --separate-stderr ploom-explore -q --hash-seed 7 "$BANK:scenario"
	echo "$output" > stats.json
	[ "$(jq -r .hash_seed stats.json)" = 7 ]
	[ "$(jq -r .hash_seed "$(jq -r .trace stats.json)")" = 7 ]
}

@test "an unknown module is a usage error naming the target" {
	run -2 --separate-stderr ploom-explore nosuch_module_for_ploom:f
	[ -z "$output" ]
	[[ "$stderr" == "ploom-explore: cannot load scenario 'nosuch_module_for_ploom:f': "* ]]
}

@test "a scenario whose body a call would not run is a load error, before any schedule" {
	local name
	for name in async_scenario generator_scenario async_generator_scenario \
		needs_an_argument holder.scenario; do
		run -2 --separate-stderr ploom-explore --trace-dir=traces "$SCN:$name"
		[ -z "$output" ]
		[[ "$stderr" == "ploom-explore: cannot load scenario '$SCN:$name': TypeError: "* ]]
		[ ! -e traces ]
	done
	run -2 --separate-stderr ploom-explore "$SCN:async_scenario"
	[[ "$stderr" == *"is an async def function: calling it only creates a coroutine"* ]]
	run -2 --separate-stderr ploom-explore "$SCN:needs_an_argument"
	[[ "$stderr" == *"cannot be called without arguments"* ]]
}

@test "a missing interpreter is a usage error" {
	run -2 --separate-stderr ploom-explore --python /nonexistent/python3 "$BANK:scenario"
	[ "$stderr" = "ploom-explore: cannot run '/nonexistent/python3': No such file or directory" ]
}

@test "an interpreter that is not Python is a dead worker: exit 2" {
	run -2 --separate-stderr ploom-explore --python /bin/false "$BANK:scenario"
	[ "$stderr" = "ploom-explore: the worker died before it loaded the scenario (exit status 1)" ]
}

@test "usage errors exit 2 with a message" {
	run -2 --separate-stderr ploom-explore
	[[ "$stderr" == "ploom-explore: missing TARGET"* ]]
	run -2 --separate-stderr ploom-explore a:b c:d
	[[ "$stderr" == "ploom-explore: too many arguments"* ]]
	run -2 --separate-stderr ploom-explore --reduction=sleepy "$BANK:scenario"
	[[ "$stderr" == "ploom-explore: unknown --reduction (none or dpor) 'sleepy'"* ]]
	run -2 --separate-stderr ploom-explore --search=ipb --reduction=dpor "$BANK:scenario"
	[[ "$stderr" == "ploom-explore: --search=ipb cannot be combined with --reduction=dpor"* ]]
	run -2 --separate-stderr ploom-explore -p x "$BANK:scenario"
	[[ "$stderr" == "ploom-explore: invalid --max-preemptions 'x'"* ]]
	run -2 --separate-stderr ploom-explore -n 0 "$BANK:scenario"
	[[ "$stderr" == "ploom-explore: invalid --max-schedules '0'"* ]]
	run -2 --separate-stderr ploom-explore --frobnicate "$BANK:scenario"
	[[ "$stderr" == "ploom-explore: unknown option '--frobnicate'"* ]]
	run -2 --separate-stderr ploom-explore --hash-seed=-1 "$BANK:scenario"
	[ -z "$output" ]
}

@test "an invalid value's usage error states the range" {
	run -2 --separate-stderr ploom-explore -p 1000001 "$BANK:scenario"
	[ "${stderr%%$'\n'*}" = "ploom-explore: invalid --max-preemptions '1000001': not an integer from 0 to 1000000" ]
	run -2 --separate-stderr ploom-explore -t 0 "$BANK:scenario"
	[ "${stderr%%$'\n'*}" = "ploom-explore: invalid --time-limit '0': not a number of seconds above 0, at most 1000000000" ]
	run -2 --separate-stderr ploom-explore --schedule-timeout=1e10 "$BANK:scenario"
	[ "${stderr%%$'\n'*}" = "ploom-explore: invalid --schedule-timeout '1e10': not a number of seconds from 0 to 1000000000" ]
	run -2 --separate-stderr ploom-explore --hash-seed=4294967296 "$BANK:scenario"
	[ "${stderr%%$'\n'*}" = "ploom-explore: invalid --hash-seed '4294967296': not an integer from 0 to 4294967295" ]
}

@test "--check-options checks the options only: no worker, TARGET optional" {
	run -0 --separate-stderr ploom-explore --check-options -p 3 -j 64 --schedule-timeout=0
	[ -z "$output" ]
	[ -z "$stderr" ]
	# a TARGET that cannot load: it is not loaded
	run -0 --separate-stderr ploom-explore --check-options -k nosuch_module_for_ploom:f
	[ -z "$stderr" ]
	run -2 --separate-stderr ploom-explore --check-options -s -1
	[[ "$stderr" == "ploom-explore: invalid --max-steps '-1': not an integer from 0 to "*$'\n'"usage: ploom-explore "* ]]
	run -2 --separate-stderr ploom-explore --check-options --reduction=dpor --search=pct -n 5
	[[ "$stderr" == "ploom-explore: --search=pct cannot be combined with --reduction=dpor"* ]]
	run -2 --separate-stderr ploom-explore --check-options a:b c:d
	[[ "$stderr" == "ploom-explore: too many arguments"* ]]
	[ -z "$output" ]
	[ ! -e .ploom ]
}

@test "--patch takes module names only, each checked with the options" {
	run -2 --separate-stderr ploom-explore --patch=bad-name "$BANK:scenario"
	[ -z "$output" ]
	[ "${stderr%%$'\n'*}" = "ploom-explore: invalid --patch 'bad-name': not a module name (Python identifiers joined by '.')" ]
	run -2 --separate-stderr ploom-explore --check-options --patch=ok.mod --patch=a.
	[ "${stderr%%$'\n'*}" = "ploom-explore: invalid --patch 'a.': not a module name (Python identifiers joined by '.')" ]
	run -0 --separate-stderr ploom-explore --check-options --patch=ok.mod --patch=_other9
	[ -z "$stderr" ]
}

# A replayed trace names the modules to patch, so the worker imports none:
# a module the scenario's module did not import is refused before any run.
@test "--patch reaches the worker, which patches only modules the scenario imported" {
	run -2 --separate-stderr ploom-explore --trace-dir=traces --patch=colorsys "$BANK:scenario"
	[ -z "$output" ]
	[[ "$stderr" == "ploom-explore: cannot load scenario '$BANK:scenario': ImportError: cannot patch 'colorsys': the scenario's module has not imported it"* ]]
	[ ! -e traces ]
}

@test "a module to patch or instrument that does not exist is refused with the nearest names" {
	cp "$BANK" bank.py
	echo 'import bank_helpers' >> bank.py
	echo 'x = 1' > bank_helpers.py
	local option
	for option in patch instrument; do
		run -2 --separate-stderr ploom-explore --trace-dir=traces "--$option=bank_helper" bank.py:scenario
		[ -z "$output" ]
		[ "$stderr" = "ploom-explore: cannot load scenario 'bank.py:scenario': ModuleNotFoundError: cannot $option 'bank_helper': no module named 'bank_helper' (did you mean 'bank_helpers'?)" ]
	done
	# a dotted name: its package is searched, and not imported
	run -2 --separate-stderr ploom-explore --instrument=json.decodr bank.py:scenario
	[ "$stderr" = "ploom-explore: cannot load scenario 'bank.py:scenario': ModuleNotFoundError: cannot instrument 'json.decodr': no module named 'json.decodr' (did you mean 'json.decoder', 'json.encoder' or 'json.scanner'?)" ]
	run -2 --separate-stderr ploom-explore --patch=json.decoder.x bank.py:scenario
	[ "$stderr" = "ploom-explore: cannot load scenario 'bank.py:scenario': ModuleNotFoundError: cannot patch 'json.decoder.x': no module named 'json.decoder.x': 'json.decoder' is not a package" ]
	# nothing near: no guess
	run -2 --separate-stderr ploom-explore --patch=zzqqxx bank.py:scenario
	[ "$stderr" = "ploom-explore: cannot load scenario 'bank.py:scenario': ModuleNotFoundError: cannot patch 'zzqqxx': no module named 'zzqqxx'" ]
	# a function of the target that does not exist
	run -2 --separate-stderr ploom-explore bank.py:scenari
	[ "$stderr" = "ploom-explore: cannot load scenario 'bank.py:scenari': AttributeError: module 'bank' has no attribute 'scenari' (did you mean 'scenario'?)" ]
	[ ! -e traces ]
}

@test "a trace written without --patch records an empty patch list" {
	run -1 --separate-stderr ploom-explore -q "$BANK:scenario"
	echo "$output" > stats.json
	[ "$(jq -c .config.patch "$(jq -r .trace stats.json)")" = "[]" ]
	[ "$(jq -c .config.patch "$(jq -r .minimized_trace stats.json)")" = "[]" ]
}

@test "--instrument takes module names only, repeated, or -; each checked with the options" {
	run -2 --separate-stderr ploom-explore --instrument=bad-name "$BANK:scenario"
	[ -z "$output" ]
	[ "${stderr%%$'\n'*}" = "ploom-explore: invalid --instrument 'bad-name': not a module name (Python identifiers joined by '.')" ]
	[[ "$stderr" == *$'\n'"usage: ploom-explore "* ]]
	run -2 --separate-stderr ploom-explore --check-options --instrument=ok.mod --instrument=9lives
	[ "${stderr%%$'\n'*}" = "ploom-explore: invalid --instrument '9lives': not a module name (Python identifiers joined by '.')" ]
	run -2 --separate-stderr ploom-explore --check-options --instrument=--
	[ "${stderr%%$'\n'*}" = "ploom-explore: invalid --instrument '--': not a module name (Python identifiers joined by '.')" ]
	run -0 --separate-stderr ploom-explore --check-options --instrument=ok.mod --instrument=- \
		--instrument=_other9 --instrument=ok.mod
	[ -z "$stderr" ]
	# 64 modules at most, as --patch
	local names=() i
	for ((i = 0; i < 64; i++)); do names+=("--instrument=m$i"); done
	run -0 --separate-stderr ploom-explore --check-options "${names[@]}"
	run -2 --separate-stderr ploom-explore --check-options "${names[@]}" --instrument=m64
	[ "${stderr%%$'\n'*}" = "ploom-explore: invalid --instrument 'm64': more than 64 modules" ]
	# with dpor's default, the --patch ones count too; named ones once
	run -0 --separate-stderr ploom-explore --check-options --reduction=dpor "${names[@]}" --patch=m3
	run -2 --separate-stderr ploom-explore --check-options --reduction=dpor "${names[@]}" --patch=other
	[ "${stderr%%$'\n'*}" = "ploom-explore: more than 64 modules to instrument: those of --instrument and of --patch, which the search instruments by default (--instrument=- instruments only those named)" ]
	run -0 --separate-stderr ploom-explore --check-options --reduction=dpor "${names[@]}" --patch=other \
		--instrument=-
	run -0 ploom-explore --help
	[[ "$output" == *"--instrument=MODULE]..."* ]]
	[[ "$output" == *$'\n'"        --instrument=MODULE      make MODULE's plain state"* ]]
}

# The worker's command line, as a logging interpreter notes it: what is
# instrumented is decided before any worker runs, so this holds with or
# without the rewriter (without one the worker then refuses to load).
@test "every search patches the project and instruments the code under test by default; --patch makes dpor the default" {
	logging_python
	local opts=(-q --no-minimize --trace-dir=traces --python="$PY")
	run ploom-explore "${opts[@]}" "$BANK:scenario"
	run ploom-explore "${opts[@]}" --reduction=dpor "$BANK:scenario"
	run ploom-explore "${opts[@]}" --reduction=dpor --instrument=- "$BANK:scenario"
	run ploom-explore "${opts[@]}" --reduction=dpor --patch=pa --patch=pb --instrument=lib \
		--instrument=pb "$BANK:scenario"
	run ploom-explore "${opts[@]}" --reduction=dpor --patch=pa --instrument=- --instrument=lib \
		"$BANK:scenario"
	run ploom-explore "${opts[@]}" --instrument=lib --instrument=other --instrument=lib \
		--patch=pa "$BANK:scenario"
	run ploom-explore "${opts[@]}" --search=ipb --patch=pa "$BANK:scenario"
	run ploom-explore "${opts[@]}" --reduction=none --patch=pa "$BANK:scenario"
	run ploom-explore "${opts[@]}" --patch=- --instrument=- "$BANK:scenario"
	local expected=(
		"-P -m ploom._worker --patch-project --instrument-scenario $BANK:scenario"
		"-P -m ploom._worker --patch-project --instrument-scenario --plain-points=* $BANK:scenario"
		"-P -m ploom._worker --patch-project --plain-points=* $BANK:scenario"
		"-P -m ploom._worker --patch=pa --patch=pb --instrument=lib --instrument=pb --instrument=pa --patch-project --instrument-scenario --plain-points=* $BANK:scenario"
		"-P -m ploom._worker --patch=pa --instrument=lib --patch-project --plain-points=* $BANK:scenario"
		"-P -m ploom._worker --patch=pa --instrument=lib --instrument=other --instrument=pa --patch-project --instrument-scenario --plain-points=* $BANK:scenario"
		"-P -m ploom._worker --patch=pa --instrument=pa --patch-project --instrument-scenario $BANK:scenario"
		"-P -m ploom._worker --patch=pa --instrument=pa --patch-project --instrument-scenario $BANK:scenario"
		"-P -m ploom._worker $BANK:scenario"
	)
	mapfile -t got <argv.log
	[ "${#got[@]}" -eq "${#expected[@]}" ]
	local i
	for i in "${!expected[@]}"; do
		[ "${got[i]}" = "${expected[i]}" ]
	done
}

@test "what a search instrumented is in its statistics and its traces, and the replay instruments the same" {
	needs_rewriter
	cp "$BANK" bank.py
	run -1 --separate-stderr ploom-explore -q --reduction=dpor --trace-dir=traces bank.py:scenario
	echo "$output" >stats.json
	[ "$(jq -c .instrument stats.json)" = "[]" ]
	[ "$(jq .instrument_scenario stats.json)" = true ]
	local t
	for t in "$(jq -r .trace stats.json)" "$(jq -r .minimized_trace stats.json)"; do
		[ "$(jq -c '[.config.instrument, .config.instrument_scenario]' "$t")" = '[[],true]' ]
	done
	logging_python
	run -1 --separate-stderr ploom-replay --python="$PY" "$(jq -r .minimized_trace stats.json)"
	[ "$stderr" = "ploom-replay: reproduced: builtins.AssertionError: the account is overdrawn" ]
	[ "$(jq_output -c '[.config.instrument, .config.instrument_scenario]')" = '[[],true]' ]
	[[ "$(cat argv.log)" == "-P -m ploom._worker --expect="*" --patch-project --instrument-scenario --plain-points=* bank.py:scenario" ]]
	# plain dfs sees the same code under test; --instrument=- only what is named
	run -1 --separate-stderr ploom-explore -q --trace-dir=traces bank.py:scenario
	[ "$(jq_output -c '[.instrument, .instrument_scenario]')" = '[[],true]' ]
	[ "$(jq -c '[.config.instrument, .config.instrument_scenario, .config.patch_project]' "$(jq_output -r .trace)")" = '[[],true,true]' ]
	run -1 --separate-stderr ploom-explore -q --no-saved --trace-dir=traces --instrument=- bank.py:scenario
	[ "$(jq_output -c '[.instrument, .instrument_scenario]')" = '[[],false]' ]
}

# The README's bank with a plain attribute for its balance: only an
# instrumented module shows its race.
plain_bank() {
	cat >plainbank.py <<'EOF'
import ploom


class Account:
    balance = 100


def scenario():
    account = Account()

    def withdraw():
        if account.balance >= 100:
            account.balance -= 100

    threads = [ploom.Thread(target=withdraw) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert account.balance >= 0, "the account is overdrawn"
EOF
}

@test "a file target named by --instrument is instrumented, and the statistics list only what was" {
	needs_rewriter
	plain_bank
	local opts=(-q --no-minimize --no-saved --trace-dir=traces) search
	for search in --search=dfs --search=ipb --reduction=dpor; do
		run -1 --separate-stderr ploom-explore "${opts[@]}" "$search" --instrument=- \
			--instrument=plainbank plainbank.py:scenario
		[ "$(jq_output -r .failure.summary)" = "builtins.AssertionError: the account is overdrawn" ]
		[ "$(jq_output -c .instrument)" = '["plainbank"]' ]
	done
	# the scenario file under every search's default, as the scenario
	for search in --search=dfs --search=ipb --reduction=dpor; do
		run -1 --separate-stderr ploom-explore "${opts[@]}" "$search" plainbank.py:scenario
		[ "$(jq_output -r .failure.summary)" = "builtins.AssertionError: the account is overdrawn" ]
		[ "$(jq_output -c '[.instrument, .instrument_scenario]')" = '[[],true]' ]
	done
	# a module named that no code imports saw nothing, and is not listed
	echo 'x = 1' > plainbank_unused.py
	run -0 --separate-stderr ploom-explore "${opts[@]}" --instrument=- --instrument=plainbank_unused \
		plainbank.py:scenario
	[ "$(jq_output -c '[.instrument, .instrument_scenario]')" = '[[],false]' ]
	run -1 --separate-stderr ploom-explore "${opts[@]}" --instrument=- --instrument=plainbank_unused \
		--instrument=plainbank plainbank.py:scenario
	[ "$(jq_output -c .instrument)" = '["plainbank"]' ]
	# the trace keeps what was asked, so that its replay asks the same
	local trace
	trace="$(jq_output -r .trace)"
	[ "$(jq -c .config.instrument "$trace")" = '["plainbank_unused","plainbank"]' ]
	run -1 --separate-stderr ploom-replay "$trace"
	[ "$stderr" = "ploom-replay: reproduced: builtins.AssertionError: the account is overdrawn" ]
}

@test "--help and --version exit 0 on stdout" {
	run -0 ploom-explore --help
	[[ "$output" == "usage: ploom-explore "* ]]
	run -0 ploom-explore --version
	[[ "$output" == "ploom-explore (ploom) "* ]]
}

@test "PLOOM_USAGE_NAME names the command in the usage, not in the messages" {
	PLOOM_USAGE_NAME="python -m ploom check" run -0 ploom-explore --help
	[[ "$output" == "usage: python -m ploom check [-p N] "* ]]
	[[ "$output" == *$'\n                             [-k] [-j N] '* ]]
	[[ "$output" == *$'\n       python -m ploom check --check-options '* ]]
	[[ "$output" != *"usage: ploom-explore"* ]]
	PLOOM_USAGE_NAME="python -m ploom check" run -2 --separate-stderr ploom-explore -j 0 x:y
	[ "${stderr%%$'\n'*}" = "ploom-explore: invalid --jobs '0': not an integer from 1 to 64" ]
	[[ "$stderr" == *$'\n'"usage: python -m ploom check [-p N] "* ]]
}

@test "--reduction=none is accepted" {
	run -0 --separate-stderr ploom-explore -q --reduction=none "$SCN:bank_locked"
	[ "$(jq_output -r .reduction)" = none ]
}

@test "a full stdout is an error, not silence" {
	run -2 --separate-stderr bash -c "ploom-explore -q '$SCN:bank_locked' > /dev/full"
	[[ "$stderr" == *"ploom-explore: "*"No space left on device"* ]]
}

# interrupted SIGNAL CODE WORKERS [OPTION...]: explores counter3 (-q -k
# and the options) in the background, checks that WORKERS workers run,
# sends SIGNAL, and checks the exit status CODE, an empty stdout and that
# no process is left behind.
interrupted() {
	local signal=$1 want=$2 workers=$3 pid code=0
	shift 3
	ploom-explore -q -k "$@" "$SCN:counter3" > out.json 2> err.txt &
	pid=$!
	# the workers are the utility's own children (each schedule is a child
	# of a worker, with the same command line); a loaded machine may take a
	# while to start them all
	local tries=0
	while (($(pgrep -c -P "$pid" -f "ploom._worker .*$SCN:counter3") < workers && tries++ < 100)); do
		sleep 0.1
	done
	sleep 0.5
	[ "$(pgrep -c -P "$pid" -f "ploom._worker .*$SCN:counter3")" -eq "$workers" ]
	kill "-$signal" "$pid"
	# not `run wait`: run uses a subshell, which cannot wait for our job
	wait "$pid" || code=$?
	[ "$code" -eq "$want" ]
	[ ! -s out.json ]
	sleep 0.2
	run -1 pgrep -f "$SCN:counter3"
}

@test "SIGTERM stops the search, prints nothing and leaves no process" {
	interrupted TERM 143 1
}

@test "SIGINT exits 130 with one line: the schedules explored, the failures, where the traces are" {
	interrupted INT 130 1
	[ "$(wc -l < err.txt)" -eq 1 ]
	grep -Eq "^ploom-explore: interrupted: [0-9]+ schedules? explored, [0-9]+ failing; (traces go to '\.ploom'|trace kept in '\.ploom/[0-9a-f]{16}-original\.json' \(not minimized\))$" err.txt
}

@test "-j 2 explores the same schedules as -j 1: abba and racy_counter2" {
	counts abba none 194 10 2
	counts abba 1 19 2 2
	counts abba 2 59 5 2
	[ "$(jq .jobs stats.json)" -eq 2 ]
	counts racy_counter2 none 69 30 2
	counts racy_counter2 1 12 3 2
	counts racy_counter2 2 32 10 2
}

@test "-j 2 explores the same schedules as -j 1: try_lock and flag_handoff" {
	counts try_lock none 307 0 2
	counts try_lock 1 24 0 2
	counts try_lock 2 77 0 2
	counts flag_handoff none 488 0 2
	counts flag_handoff 1 21 0 2
	counts flag_handoff 2 76 0 2
}

@test "-j 2 explores the same schedules as -j 1: the banks" {
	counts bank_locked none 127 0 2
	counts bank_locked 1 22 0 2
	counts bank_locked 2 55 0 2
	counts bank_unlocked none 221 75 2
	counts bank_unlocked 1 14 3 2
	counts bank_unlocked 2 52 14 2
}

@test "-j 1 and -j 2 count the same schedules and outcomes of the bank fixture" {
	same_with_jobs "$ROOT/tests/fixtures/bank.py:scenario" 221 75
	same_with_jobs "$ROOT/tests/fixtures/bank.py:locked" 127 0
}

@test "-j 1 is the default and says so" {
	run -0 --separate-stderr ploom-explore -q "$SCN:bank_locked"
	[ "$(jq_output .jobs)" -eq 1 ]
}

@test "-j 2 finds the bank's failure, writes its trace and minimizes it" {
	run -1 --separate-stderr ploom-explore -q --jobs=2 "$BANK:scenario"
	echo "$output" > stats.json
	[[ "$stderr" == *"failed: builtins.AssertionError: the account is overdrawn"* ]]
	[ "$(jq -r .result stats.json)" = failure ]
	[ "$(jq -r .stopped_by stats.json)" = failure ]
	[ "$(jq .failing stats.json)" -eq 1 ]
	[ "$(jq .jobs stats.json)" -eq 2 ]
	trace="$(jq -r .trace stats.json)"
	min="$(jq -r .minimized_trace stats.json)"
	[ -f "$trace" ]
	[ "$(jq -r .outcome.exception.message "$trace")" = "the account is overdrawn" ]
	[ "$min" = "${trace%-original.json}-minimized.json" ]
	[ "$(jq .preemptions "$min")" -eq 1 ]
	[[ "$stderr" == *"ploom-explore: minimized trace written to '$min'"* ]]
	# the trace replays like one from a single worker
	run -1 --separate-stderr replay_in_root -q "$trace"
	run -1 pgrep -f "$BANK:scenario"
}

@test "-j accepts 1 to 64 only" {
	run -2 --separate-stderr ploom-explore -j 0 "$BANK:scenario"
	[[ "$stderr" == "ploom-explore: invalid --jobs '0'"* ]]
	run -2 --separate-stderr ploom-explore -j 65 "$BANK:scenario"
	[[ "$stderr" == "ploom-explore: invalid --jobs '65'"* ]]
	run -2 --separate-stderr ploom-explore --jobs=x "$BANK:scenario"
	[[ "$stderr" == "ploom-explore: invalid --jobs 'x'"* ]]
	[ -z "$output" ]
}

@test "-n with -j 2 runs exactly n schedules and is incomplete" {
	run -3 --separate-stderr ploom-explore -q -j 2 -n 5 "$SCN:bank_locked"
	echo "$output" > stats.json
	[ "$(jq .schedules stats.json)" -eq 5 ]
	[ "$(jq -r .result stats.json)" = incomplete ]
	[ "$(jq -r .stopped_by stats.json)" = max-schedules ]
	run -0 --separate-stderr ploom-explore -q -j 2 -n 127 "$SCN:bank_locked"
	[ "$(jq_output -r .result)" = pass ]
}

@test "-t with -j 2 stops the search and makes it incomplete" {
	run -3 --separate-stderr ploom-explore -q -j 2 -t 0.001 "$SCN:counter3"
	[ "$(jq_output -r .stopped_by)" = time-limit ]
}

@test "SIGTERM with -j 2 stops every worker and leaves no process" {
	interrupted TERM 143 2 -j 2
}

# REFERENCE.md: the Mazurkiewicz traces of each scenario, and the failing ones
@test "--reduction=dpor runs one schedule per class of the reference scenarios" {
	local want=(bank_locked:2:0 bank_unlocked:6:2 abba:3:1 counter3:6:0 racy_counter2:4:2
		try_lock:4:0 flag_handoff:4:0)
	local w name classes failing
	for w in "${want[@]}"; do
		IFS=: read -r name classes failing <<<"$w"
		run --separate-stderr ploom-explore -q -k --no-minimize --reduction=dpor \
			--trace-dir="$BATS_TEST_TMPDIR" "$SCN:$name"
		[ "$(jq_output -r .reduction)" = dpor ]
		[ "$(jq_output -r .complete)" = true ]
		# never fewer than the classes (a lost class), and here exactly them
		[ "$(jq_output -r .schedules)" -eq "$classes" ]
		[ "$(jq_output -r .failing)" -eq "$failing" ]
		[ "$(jq_output -r .sleep_blocked)" -ge 0 ]
	done
}

@test "--reduction=dpor -j 2 reaches the outcomes of one worker, in at most 1.2 times the classes" {
	local want=(bank_locked:2:0 bank_unlocked:6:2 abba:3:1 counter3:6:0 racy_counter2:4:2
		try_lock:4:0 flag_handoff:4:0)
	local w name classes failing
	for w in "${want[@]}"; do
		IFS=: read -r name classes failing <<<"$w"
		run --separate-stderr ploom-explore -q -k --no-minimize --reduction=dpor -j 2 \
			--trace-dir="$BATS_TEST_TMPDIR" "$SCN:$name"
		echo "$output" >j2.json
		[ "$(jq .jobs j2.json)" -eq 2 ]
		[ "$(jq -r .complete j2.json)" = true ]
		# never fewer than the classes (a lost class), at most 1.2 times them
		[ "$(jq .schedules j2.json)" -ge "$classes" ]
		[ "$(jq .schedules j2.json)" -le $((classes * 12 / 10)) ]
		[ "$(jq .failing j2.json)" -eq "$failing" ]
		run --separate-stderr ploom-explore -q -k --no-minimize --reduction=dpor \
			--trace-dir="$BATS_TEST_TMPDIR" "$SCN:$name"
		[ "$(jq_output -cS '[.outcomes[] | [.kind, .summary]] | sort')" = \
			"$(jq -cS '[.outcomes[] | [.kind, .summary]] | sort' j2.json)" ]
	done
	# without -k the first failure stops both workers, and is minimized
	run -1 --separate-stderr ploom-explore -q --reduction=dpor -j 2 \
		--trace-dir="$BATS_TEST_TMPDIR" "$SCN:abba"
	[ "$(jq_output -r .failure.kind)" = deadlock ]
	[ "$(jq_output -r .stopped_by)" = failure ]
	[ "$(jq_output -r .minimized_trace)" != null ]
}

@test "--reduction=dpor finds the bug, saves both traces, and they replay" {
	run -1 --separate-stderr ploom-explore --reduction=dpor --trace-dir="$BATS_TEST_TMPDIR" \
		"$BANK:scenario"
	[ "$(jq_output -r .failure.message)" = "the account is overdrawn" ]
	[ "$(jq_output -r .stopped_by)" = failure ]
	local orig min
	orig=$(jq_output -r .trace)
	min=$(jq_output -r .minimized_trace)
	[ "$(jq -r .config.reduction "$orig")" = dpor ]
	run -1 replay_in_root "$orig"
	run -1 replay_in_root "$min"
}

@test "--reduction=dpor finds the bug that needs one order of two critical sections" {
	run -1 --separate-stderr ploom-explore -q --reduction=dpor --trace-dir="$BATS_TEST_TMPDIR" \
		"$SCN:lock_order_bug"
	[ "$(jq_output -r .failure.message)" = "the reader went first" ]
}

# explore_to STATUS ARG...: ploom-explore ARG..., its stdout in stats.json
# and its stderr in err.txt, exits STATUS
explore_to() {
	local status_want=$1 code=0
	shift
	ploom-explore "$@" > stats.json 2> err.txt || code=$?
	[ "$code" -eq "$status_want" ]
}

# json_progress FILE: the JSON lines of the stderr FILE into lines.jsonl,
# checked for their shape: the same members on every line, a fraction in
# [0, 1] that never goes back, schedules that never go back, a total never
# below them, and done on the last line only
json_progress() {
	grep '^{' "$1" > lines.jsonl
	[ -s lines.jsonl ]
	jq -e -s 'all(.[]; keys == ["done", "elapsed_s", "estimate_total", "eta_s", "failing",
		"fraction", "rate", "schedules", "summary"])' lines.jsonl
	# the summary is the line a terminal shows, from the same numbers
	jq -e -s 'all(.[]; (.summary | split(" ")[0] | gsub(","; "") | tonumber) == .schedules)' \
		lines.jsonl
	jq -e -s 'all(.[]; (.estimate_total == null) == (.summary | contains("% of") | not))' \
		lines.jsonl
	jq -e -s 'all(.[]; .fraction == null or (.fraction >= 0 and .fraction <= 1))' lines.jsonl
	jq -e -s '[.[].fraction // 0] | . == sort' lines.jsonl
	jq -e -s '[.[].schedules] | . == sort' lines.jsonl
	jq -e -s 'all(.[]; .estimate_total == null or .estimate_total >= .schedules)' lines.jsonl
	jq -e -s 'all(.[]; .eta_s == null or .eta_s >= 0)' lines.jsonl
	jq -e -s '(last.done == true) and ([.[:-1][].done] | all(. == false))' lines.jsonl
}

# last_line_is_the_statistics STATS: the last progress line counts what the
# statistics count
last_line_is_the_statistics() {
	[ "$(tail -n 1 lines.jsonl | jq .schedules)" -eq "$(jq .schedules "$1")" ]
	[ "$(tail -n 1 lines.jsonl | jq .failing)" -eq "$(jq .failing "$1")" ]
}

@test "--progress=json: a line a second, and a last one with the statistics' counts" {
	local jobs
	for jobs in 1 2; do
		explore_to 3 --progress=json -j "$jobs" -t 2.5 --trace-dir=traces "$SCN:counter3"
		json_progress err.txt
		# every line of this search is JSON
		[ "$(wc -l < err.txt)" -eq "$(wc -l < lines.jsonl)" ]
		# at least one line before the last
		[ "$(wc -l < lines.jsonl)" -ge 2 ]
		last_line_is_the_statistics stats.json
		# the time limit cut it: part done, an estimated total above it and
		# the time the rest would take
		tail -n 1 lines.jsonl > last.json
		jq -e '.fraction > 0 and .fraction < 1' last.json
		jq -e '.estimate_total > .schedules and .eta_s > 0' last.json
		jq -e '.rate > 0 and .elapsed_s >= 2.5' last.json
	done
}

@test "--progress=json: a complete search ends at fraction 1, its total the count" {
	explore_to 0 --progress=json "$SCN:bank_locked"
	json_progress err.txt
	last_line_is_the_statistics stats.json
	tail -n 1 lines.jsonl > last.json
	jq -e '.fraction == 1 and .estimate_total == 127 and .eta_s == 0' last.json
	[ "$(jq .schedules stats.json)" -eq 127 ]
}

@test "--progress=json with -k counts the failing schedules, among the text messages" {
	explore_to 1 --progress=json -k --no-minimize "$BANK:scenario"
	json_progress err.txt
	last_line_is_the_statistics stats.json
	[ "$(tail -n 1 lines.jsonl | jq .failing)" -eq 75 ]
	jq -e '.fraction == 1 and .estimate_total == 221' <(tail -n 1 lines.jsonl)
	# the failure's messages stay text
	grep -q "^ploom-explore: schedule [0-9]* failed: builtins.AssertionError" err.txt
	run -1 grep -v -e '^{' -e '^ploom-explore: ' err.txt
}

@test "--progress=json with --reduction=dpor gives the rate and no estimate" {
	cat > slow.py <<'PY'
import select

import ploom


def racy():
    # a few schedules of 0.4 s each: the search outlasts a second (select
    # waits, time.sleep is ploom's virtual clock)
    select.select([], [], [], 0.4)
    x = ploom.SharedCell(0)

    def inc():
        x.write(x.read() + 1)

    ts = [ploom.Thread(target=inc) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
PY
	explore_to 0 --progress=json --reduction=dpor slow.py:racy
	json_progress err.txt
	last_line_is_the_statistics stats.json
	[ "$(wc -l < lines.jsonl)" -ge 2 ]
	# while it runs, the size of the search is not known
	jq -e -s 'all(.[:-1][]; .fraction == null and .estimate_total == null and .eta_s == null
		and .rate > 0)' lines.jsonl
	# once it is complete, it is
	jq -e '.fraction == 1 and .estimate_total == .schedules' <(tail -n 1 lines.jsonl)
}

@test "progress on a stderr that is not a terminal: a line of counts every 30 s, none in 3 s" {
	# a log (a file, a pipe, pytest -s) keeps every line: a line a second
	# would fill it
	explore_to 3 -t 3 "$SCN:counter3"
	run -1 grep -Ec '^ploom-explore: [0-9]+ schedules?' err.txt
	run -1 grep -c $'\r' err.txt
	run -1 grep -c '^{' err.txt
	# --progress=json keeps its line a second
	explore_to 3 -t 2.5 --progress=json "$SCN:counter3"
	[ "$(grep -c '^{.*"done":false' err.txt)" -ge 1 ]
}

@test "progress on a terminal: one status line with the estimate, rewritten, then cleared" {
	# script(1) gives the command a terminal, and copies what it writes
	script -qec "ploom-explore -t 2.5 '$SCN:counter3' > stats.json" /dev/null > tty.txt || true
	[ "$(jq -r .stopped_by stats.json)" = time-limit ]
	# no newline but one line of its own, once the estimate passes 10^5
	# schedules, as counter3's does early: each line starts with a carriage
	# return over the last
	if [ "$(tr -cd '\n' < tty.txt | wc -c)" -ne 0 ]; then
		[ "$(tr -cd '\n' < tty.txt | wc -c)" -eq 1 ]
		head -n 1 tty.txt | grep -q '^ploom-explore: more than 100000 schedules estimated; --reduction=dpor would explore fewer'
	fi
	tr '\r' '\n' < tty.txt > lines.txt
	grep -Eq '^ploom-explore: [0-9,]+ schedules \([0-9,.]+/s\), ~[0-9.]+% of ~[0-9,]+, ETA [0-9]+ (s|min|h|days)$' lines.txt
	# and it ends cleared: spaces, then back to the start of the line
	[[ "$(cat tty.txt)" == *$'\r'+( )$'\r' ]]
}

@test "--progress=terminal: the status line on a pipe, as wide as COLUMNS says" {
	# a front end (ploom.check) reads the pipe and passes it on to a terminal
	COLUMNS=40 explore_to 3 --progress=terminal -t 2.5 "$SCN:counter3"
	run -1 grep -Ec '^ploom-explore: [0-9]+ schedules?, ' err.txt
	# the one line it may end: the reduction's hint, once the estimate
	# passes 10^5, which it may or may not reach in the time given
	hint='^ploom-explore: more than 100000 schedules estimated; --reduction=dpor would explore fewer$'
	[ "$(grep -c "$hint" err.txt)" -le 1 ]
	sed "/$hint/d" err.txt > status.txt
	[ "$(tr -cd '\n' < status.txt | wc -c)" -eq 0 ]
	tr '\r' '\n' < status.txt | grep -v '^ *$' > lines.txt
	grep -Eq '^ploom-explore: [0-9,]+ schedules' lines.txt
	# the last column stays free
	[ "$(awk '{ if (length($0) > m) m = length($0) } END { print m }' lines.txt)" -eq 39 ]
	[[ "$(cat err.txt)" == *$'\r'+( )$'\r' ]]
	# a COLUMNS that is no width is not taken
	COLUMNS=wide explore_to 3 --progress=terminal -t 1.5 "$SCN:counter3"
	sed "/$hint/d" err.txt | tr '\r' '\n' | grep -v '^ *$' > lines.txt
	[ "$(awk '{ if (length($0) > m) m = length($0) } END { print m }' lines.txt)" -le 79 ]
}

@test "--progress takes auto, terminal, json or none, and -q is none: the later wins" {
	explore_to 0 --progress=json -q "$SCN:bank_locked"
	[ ! -s err.txt ]
	explore_to 0 -q --progress=json "$SCN:bank_locked"
	# one line a second, and the last when it ends: a loaded machine may
	# take longer than a second
	[ "$(grep -c '^{' err.txt)" -ge 1 ]
	run -0 --separate-stderr ploom-explore --check-options --progress=json
	run -0 --separate-stderr ploom-explore --check-options --progress=none --progress=auto
	run -2 --separate-stderr ploom-explore --check-options --progress=yes
	[ "${stderr%%$'\n'*}" = "ploom-explore: unknown --progress (auto, terminal, json or none) 'yes'" ]
	explore_to 0 --progress=terminal -q "$SCN:bank_locked"
	[ ! -s err.txt ]
	run -2 --separate-stderr ploom-explore --progress "$SCN:bank_locked"
	[ "${stderr%%$'\n'*}" = "ploom-explore: unknown --progress (auto, terminal, json or none) '$SCN:bank_locked'" ]
}

# ---- --search=ipb: iterative preemption bounding ----

@test "--search=ipb runs REFERENCE.md's schedules, with and without a bound, as dfs does" {
	local want=(bank_unlocked:none:221:75 abba:none:194:10 abba:1:19:2 racy_counter2:none:69:30
		racy_counter2:2:32:10 counter3:1:313:0 try_lock:none:307:0 flag_handoff:2:76:0)
	local w name bound schedules failing jobs p
	for w in "${want[@]}"; do
		IFS=: read -r name bound schedules failing <<<"$w"
		p=()
		[ "$bound" = none ] || p=(-p "$bound")
		for jobs in 1 2; do
			run --separate-stderr ploom-explore -q -k --no-minimize --search=ipb -j "$jobs" \
				"${p[@]}" --trace-dir="$BATS_TEST_TMPDIR" "$SCN:$name"
			echo "$output" > stats.json
			[ "$(jq -r .search stats.json)" = ipb ]
			[ "$(jq .schedules stats.json)" -eq "$schedules" ]
			[ "$(jq .failing stats.json)" -eq "$failing" ]
			[ "$(jq .complete stats.json)" = true ]
		done
	done
}

@test "--search=ipb finds the bank's failure with one preemption, its own minimized trace" {
	run -1 --separate-stderr ploom-explore -q --search=ipb "$BANK:scenario"
	echo "$output" > stats.json
	[ "$(jq -r .search stats.json)" = ipb ]
	[ "$(jq .minimal_by_construction stats.json)" = true ]
	trace="$(jq -r .trace stats.json)"
	min="$(jq -r .minimized_trace stats.json)"
	[ "$min" = "${trace%-original.json}-minimized.json" ]
	[ "$(jq .preemptions "$trace")" -eq 1 ]
	[ "$(jq -r .config.search "$trace")" = ipb ]
	[ "$(jq -c '[.choices, .steps, .outcome, .id]' "$min")" = \
		"$(jq -c '[.choices, .steps, .outcome, .id]' "$trace")" ]
	[ "$(jq .minimized_from "$min")" -eq 1 ]
	[[ "$stderr" == *"ploom-explore: minimized trace written to '$min' (1 -> 1 preemptions: the fewest by construction, --search=ipb ran every schedule with fewer)"* ]]
	run -1 replay_in_root "$trace"
	run -1 replay_in_root "$min"
}

@test "the statistics and the traces say the search order, dfs by default" {
	run -1 --separate-stderr ploom-explore -q "$BANK:scenario"
	echo "$output" > stats.json
	[ "$(jq -r .search stats.json)" = dfs ]
	[ "$(jq 'has("minimal_by_construction")' stats.json)" = false ]
	[ "$(jq -r .config.search "$(jq -r .trace stats.json)")" = dfs ]
	run -1 --separate-stderr ploom-explore -q --search=dfs "$BANK:scenario"
	[ "$(jq_output -r .search)" = dfs ]
}

@test "--search=ipb -j 2: the first failure still has the fewest preemptions" {
	run -1 --separate-stderr ploom-explore -q -j 2 --search=ipb "$SCN:half_done_twice"
	echo "$output" > stats.json
	[ "$(jq .jobs stats.json)" -eq 2 ]
	[ "$(jq .minimal_by_construction stats.json)" = true ]
	[ "$(jq .preemptions "$(jq -r .trace stats.json)")" -eq 2 ]
	# and none with fewer fails
	run -0 --separate-stderr ploom-explore -q -p 1 "$SCN:half_done_twice"
}

@test "--progress=json with --search=ipb: the estimate ends at fraction 1, its total the count" {
	explore_to 0 --progress=json --search=ipb -p 2 "$SCN:counter3"
	json_progress err.txt
	last_line_is_the_statistics stats.json
	# the weight left is known all along, unlike dpor's
	jq -e -s 'all(.[]; .fraction != null)' lines.jsonl
	jq -e '.fraction == 1 and .estimate_total == 1866 and .eta_s == 0' <(tail -n 1 lines.jsonl)
}

@test "--search takes the known orders only, and ipb cannot be combined with dpor" {
	run -2 --separate-stderr ploom-explore --search=sideways "$BANK:scenario"
	[ -z "$output" ]
	[[ "${stderr%%$'\n'*}" == "ploom-explore: unknown --search (dfs"*" ipb"*") 'sideways'" ]]
	[[ "$stderr" == *$'\n'"usage: ploom-explore "* ]]
	# after options that were valid too
	run -2 --separate-stderr ploom-explore --check-options -p 3 --search=sideways
	[[ "${stderr%%$'\n'*}" == "ploom-explore: unknown --search "*" 'sideways'" ]]
	run -2 --separate-stderr ploom-explore --search=ipb --reduction=dpor --trace-dir=traces \
		"$BANK:scenario"
	[ "${stderr%%$'\n'*}" = "ploom-explore: --search=ipb cannot be combined with --reduction=dpor: the reduction keeps one schedule of each class of equivalent ones, not always the one with the fewest preemptions, so the search by preemptions could miss the failure with the fewest; --reduction=dpor with --max-preemptions searches the classes within a bound" ]
	[ ! -e traces ]
	run -2 --separate-stderr ploom-explore --check-options --reduction=dpor --search=ipb
	[[ "$stderr" == "ploom-explore: --search=ipb cannot be combined with --reduction=dpor: "* ]]
	run -0 --separate-stderr ploom-explore --check-options --search=ipb -j 64 -p 3
	[ -z "$stderr" ]
	run -0 --separate-stderr ploom-explore --check-options --search=dfs --reduction=dpor
	[ -z "$stderr" ]
}

# ---- samples: --search=pct and --search=random ----

@test "--search=pct finds the bank bug; the statistics and the trace give the seed and depth" {
	explore_to 1 -q --search=pct --seed=11 --pct-depth=3 -n 5000 "$BANK:scenario"
	[ "$(jq -r .search stats.json)" = pct ]
	[ "$(jq .seed stats.json)" -eq 11 ]
	[ "$(jq .pct_depth stats.json)" -eq 3 ]
	[ "$(jq -r .stopped_by stats.json)" = failure ]
	[ "$(jq .schedules stats.json)" -le 5000 ]
	trace="$(jq -r .trace stats.json)"
	[ "$(jq -c .config "$trace" | jq -c '{search, seed, pct_depth}')" = '{"search":"pct","seed":11,"pct_depth":3}' ]
	# at most depth - 1 preemptions
	[ "$(jq .preemptions "$trace")" -le 2 ]
	# the trace replays by its choices alone
	run -1 --separate-stderr replay_in_root -q "$trace"
	# the minimized trace keeps the config it was found with
	min="$(jq -r .minimized_trace stats.json)"
	[ "$(jq -r .config.search "$min")" = pct ]
}

@test "a sample without a failure is incomplete, never a pass" {
	explore_to 3 -q --search=random --seed=5 -n 40 "$SCN:bank_locked"
	[ "$(jq -r .result stats.json)" = incomplete ]
	[ "$(jq .complete stats.json)" = false ]
	[ "$(jq -r .stopped_by stats.json)" = max-schedules ]
	[ "$(jq .schedules stats.json)" -eq 40 ]
	[ "$(jq -r .search stats.json)" = random ]
	[ "$(jq .seed stats.json)" -eq 5 ]
	[ "$(jq .pct_depth stats.json)" = null ]
	explore_to 3 -q --search=pct -t 0.5 "$SCN:bank_locked"
	[ "$(jq -r .stopped_by stats.json)" = time-limit ]
	[ "$(jq .seed stats.json)" -eq 0 ]
	[ "$(jq .pct_depth stats.json)" -eq 3 ]
	# depth-first names its search and no seed
	explore_to 0 -q "$SCN:bank_locked"
	[ "$(jq -r .search stats.json)" = dfs ]
	[ "$(jq 'has("seed")' stats.json)" = false ]
}

@test "one seed gives the same sample twice, on one worker or split over two" {
	local jobs
	for jobs in 1 1 2 2; do
		explore_to 1 -q -k --search=pct --seed=99 -n 200 -j "$jobs" "$BANK:scenario"
		jq -c '[.schedules, .failing, .outcomes]' stats.json >> "runs$jobs.txt"
	done
	[ "$(sort -u runs1.txt | wc -l)" -eq 1 ]
	[ "$(sort -u runs2.txt | wc -l)" -eq 1 ]
	[ "$(jq '.[0]' < <(head -n 1 runs2.txt))" -eq 200 ]
}

@test "a sample's option errors exit 2 with the reason" {
	run -2 --separate-stderr ploom-explore --search=pct "$BANK:scenario"
	[ "${stderr%%$'\n'*}" = "ploom-explore: --search=pct needs --max-schedules or --time-limit: a sample never completes the search" ]
	run -2 --separate-stderr ploom-explore --check-options --search=random
	[ "${stderr%%$'\n'*}" = "ploom-explore: --search=random needs --max-schedules or --time-limit: a sample never completes the search" ]
	run -2 --separate-stderr ploom-explore --check-options --search=pct -n 9 --reduction=dpor
	[[ "${stderr%%$'\n'*}" == "ploom-explore: --search=pct cannot be combined with --reduction=dpor: "* ]]
	run -2 --separate-stderr ploom-explore --check-options --search=random -n 9 -p 2
	[ "${stderr%%$'\n'*}" = "ploom-explore: --search=random cannot be combined with --max-preemptions: its choices are drawn, not bounded" ]
	run -2 --separate-stderr ploom-explore --check-options --search=pct -n 9 --shard=0/2
	[ "${stderr%%$'\n'*}" = "ploom-explore: --search=pct cannot be combined with --shard: shards split a depth-first tree; give each machine a --seed of its own instead" ]
	run -2 --separate-stderr ploom-explore --check-options --search=bfs
	[ "${stderr%%$'\n'*}" = "ploom-explore: unknown --search (dfs, ipb, pct or random) 'bfs'" ]
	run -2 --separate-stderr ploom-explore --check-options --search=pct -n 9 --seed=4294967296
	[ "${stderr%%$'\n'*}" = "ploom-explore: invalid --seed '4294967296': not an integer from 0 to 4294967295" ]
	run -2 --separate-stderr ploom-explore --check-options --search=pct -n 9 --seed=-1
	[ "${stderr%%$'\n'*}" = "ploom-explore: invalid --seed '-1': not an integer from 0 to 4294967295" ]
	run -2 --separate-stderr ploom-explore --check-options --search=pct -n 9 --pct-depth=0
	[ "${stderr%%$'\n'*}" = "ploom-explore: invalid --pct-depth '0': not an integer from 1 to 1000" ]
	run -2 --separate-stderr ploom-explore --check-options --seed=3
	[ "${stderr%%$'\n'*}" = "ploom-explore: --seed needs --search=pct or --search=random" ]
	run -2 --separate-stderr ploom-explore --check-options --search=random -n 9 --pct-depth=2
	[ "${stderr%%$'\n'*}" = "ploom-explore: --pct-depth needs --search=pct" ]
	[[ "$stderr" == *$'\n'"usage: ploom-explore "* ]]
	run -0 --separate-stderr ploom-explore --check-options --search=pct -t 1 --seed=4294967295 --pct-depth=1000 -j 64
	run -0 --separate-stderr ploom-explore --check-options --search=dfs -p 1
}

# bank_fix: the bank copy ./bank.py with the lock that fixes it
# (tests/python/bank_copy.py's add_lock)
bank_fix() {
	PYTHONPATH="$ROOT/tests/python" "$(worker_python)" -c \
		'import pathlib, bank_copy; bank_copy.add_lock(pathlib.Path("bank.py"))'
}

@test "a saved failure of the scenario fails again at once, before any schedule of the search" {
	traces
	id="$(jq_output -r .minimized_trace | xargs basename -s -minimized.json)"
	run -1 --separate-stderr ploom-explore -q bank.py:scenario
	echo "$output" >stats.json
	[ "$(jq .saved_runs stats.json)" -eq 1 ]
	[ "$(jq .saved_failing stats.json)" -eq 1 ]
	[ "$(jq .schedules stats.json)" -eq 0 ]
	[ "$(jq .failing stats.json)" -eq 0 ]
	[ "$(jq -r .result stats.json)" = failure ]
	[ "$(jq -r .stopped_by stats.json)" = failure ]
	[ "$(jq -r .failure.summary stats.json)" = "builtins.AssertionError: the account is overdrawn" ]
	# the minimized trace of the pair is the one run, and its failure is
	# saved and minimized as a search's
	[ "${stderr%%$'\n'*}" = "ploom-explore: saved schedule '.ploom/$id-minimized.json' fails again: builtins.AssertionError: the account is overdrawn" ]
	[[ "$stderr" == *"ploom-explore: trace written to '.ploom/$id-original.json'"* ]]
	[ "$(jq -r .trace stats.json)" = ".ploom/$id-original.json" ]
	[ "$(jq -r .minimized_trace stats.json)" = ".ploom/$id-minimized.json" ]
	run -1 ploom-replay -q ".ploom/$id-minimized.json"
	# an edit that changes nothing it runs: found again all the same
	echo "# a comment" >>bank.py
	run -1 --separate-stderr ploom-explore -q bank.py:scenario
	[ "$(jq_output .saved_failing)" -eq 1 ]
	[ "$(jq_output .schedules)" -eq 0 ]
}

@test "a failure's message of several lines keeps its lines in the progress line, indented" {
	cat > lines.py <<'EOF'
import ploom


def scenario():
    t = ploom.Thread(target=lambda: None)
    t.start()
    t.join()
    raise AssertionError("first line\nsecond line\tand a tab\n")
EOF
	run -1 --separate-stderr ploom-explore -q --no-minimize lines.py:scenario
	[[ "$stderr" == *$'ploom-explore: schedule 1 failed: builtins.AssertionError: first line\n    second line?and a tab\n'* ]]
	[[ "$stderr" != *"first line?second"* ]]
}

@test "a saved failure that now fails another way says so, not that it fails again" {
	traces
	sed -i 's/the account is overdrawn/the balance went below zero/' bank.py
	run -1 --separate-stderr ploom-explore -q bank.py:scenario
	[ "$(jq_output .saved_failing)" -eq 1 ]
	[[ "${stderr%%$'\n'*}" == "ploom-explore: saved schedule '.ploom/"*"' fails another way: builtins.AssertionError: the balance went below zero (it was saved failing with: builtins.AssertionError: the account is overdrawn)" ]]
	[[ "$stderr" != *"fails again"* ]]
}

@test "after the fix the saved schedule passes, counted apart: the search runs its 127 schedules" {
	traces
	bank_fix
	run -0 --separate-stderr ploom-explore -q bank.py:scenario
	echo "$output" >stats.json
	[ "$(jq .schedules stats.json)" -eq 127 ]
	[ "$(jq .failing stats.json)" -eq 0 ]
	[ "$(jq .saved_runs stats.json)" -eq 1 ]
	[ "$(jq .saved_failing stats.json)" -eq 0 ]
	[ "$(jq -r .result stats.json)" = pass ]
	[ "$stderr" = "" ]
	run -0 --separate-stderr ploom-explore -q --no-saved bank.py:scenario
	[ "$(jq_output .saved_runs)" -eq 0 ]
	[ "$(jq_output .schedules)" -eq 127 ]
}

@test "--no-saved runs only the search; -k runs the saved schedules and then the whole search" {
	traces
	run -1 --separate-stderr ploom-explore -q --no-saved bank.py:scenario
	echo "$output" >stats.json
	[ "$(jq .saved_runs stats.json)" -eq 0 ]
	[ "$(jq .saved_failing stats.json)" -eq 0 ]
	[ "$(jq .schedules stats.json)" -eq 7 ]
	[ "$(jq .failing stats.json)" -eq 1 ]
	[[ "$stderr" != *"saved schedule"* ]]
	run -1 --separate-stderr ploom-explore -q -k --no-saved --no-minimize bank.py:scenario
	echo "$output" >nosaved.json
	run -1 --separate-stderr ploom-explore -q -k --no-minimize bank.py:scenario
	echo "$output" >saved.json
	[ "$(jq .saved_failing saved.json)" -eq 1 ]
	[ "$(jq .schedules saved.json)" -eq "$(jq .schedules nosaved.json)" ]
	[ "$(jq .failing saved.json)" -eq "$(jq .failing nosaved.json)" ]
	[ "$(jq .complete saved.json)" = true ]
	[[ "$stderr" == "ploom-explore: saved schedule '.ploom/"*"' fails again: "* ]]
}

@test "a saved schedule with more preemptions than the bound is not run" {
	traces
	[ "$(jq .preemptions "$(jq_output -r .minimized_trace)")" -ge 1 ]
	run -0 --separate-stderr ploom-explore -q -p 0 bank.py:scenario
	[ "$(jq_output .saved_runs)" -eq 0 ]
	[ "$(jq_output -r .result)" = pass ]
	run -1 --separate-stderr ploom-explore -q -p 1 bank.py:scenario
	[ "$(jq_output .saved_runs)" -eq 1 ]
	[ "$(jq_output .schedules)" -eq 0 ]
	# pct's depth d: at most d - 1 preemptions
	run -3 --separate-stderr ploom-explore -q --search=pct --pct-depth=1 -n 20 bank.py:scenario
	[ "$(jq_output .saved_runs)" -eq 0 ]
	run -1 --separate-stderr ploom-explore -q --search=pct --pct-depth=2 -n 20 bank.py:scenario
	[ "$(jq_output .saved_runs)" -eq 1 ]
	[ "$(jq_output .saved_failing)" -eq 1 ]
}

@test "a corrupt file among the saved traces is skipped with a line, another scenario's quietly" {
	cp "$BANK" bank.py
	run -1 --separate-stderr ploom-explore -q "$SCN:abba"
	bank_fix
	echo '{"format": ' >.ploom/0123456789abcdef-original.json
	: >.ploom/fedcba9876543210-minimized.json
	echo 'not a trace' >.ploom/notes.txt
	run -0 --separate-stderr ploom-explore -q bank.py:scenario
	[ "$(jq_output .saved_runs)" -eq 0 ]
	[ "$(jq_output .schedules)" -eq 127 ]
	[ "$(echo "$stderr" | wc -l)" -eq 2 ]
	[[ "$stderr" == *"ploom-explore: skipped the saved trace '.ploom/0123456789abcdef-original.json': "* ]]
	[[ "$stderr" == *"ploom-explore: skipped the saved trace '.ploom/fedcba9876543210-minimized.json': "* ]]
	# a link planted in the folder is not followed
	ln -s /dev/zero .ploom/0000000000000000-original.json
	run -0 --separate-stderr ploom-explore -q bank.py:scenario
	[ "$(echo "$stderr" | wc -l)" -eq 2 ]
}

@test "at most the 10 newest saved failures of the scenario run" {
	traces
	saved="$(jq_output -r .minimized_trace)"
	bank_fix
	# eleven copies of the failure under ids of their own, the newest last
	for i in $(seq 10 20); do
		cp "$saved" ".ploom/00000000000000$i-original.json"
		touch -d "@$((1700000000 + i))" ".ploom/00000000000000$i-original.json"
	done
	run -0 --separate-stderr ploom-explore -q bank.py:scenario
	[ "$(jq_output .saved_runs)" -eq 10 ]
	[ "$(jq_output .schedules)" -eq 127 ]
}

# plain_bank [fixed]: ./plainbank.py, the bank on a plain attribute, which
# --instrument makes points of as the search finds them shared; with
# "fixed", a lock around the check and the withdrawal
plain_bank() {
	local body="        if acct.balance >= 100:
            acct.balance = acct.balance - 100"
	[ "${1:-}" != fixed ] || body="        with lock:
            if acct.balance >= 100:
                acct.balance = acct.balance - 100"
	cat >plainbank.py <<PY
import ploom


class Account:
    def __init__(self):
        self.balance = 100


def scenario():
    acct = Account()
    lock = ploom.Lock()

    def withdraw():
$body

    ts = [ploom.Thread(target=withdraw) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert acct.balance >= 0, "the account is overdrawn"
PY
}

@test "a saved failure on plain state fails again at once, on a worker with its points; fixed, it passes" {
	plain_bank
	# depth first, chosen: its trace keeps the points it found
	run -1 --separate-stderr ploom-explore -q --reduction=none --instrument=plainbank plainbank:scenario
	[ "$(jq_output .saved_runs)" -eq 0 ]
	saved="$(jq_output -r .minimized_trace)"
	[ "$(jq '.config.plain_points | length' "$saved")" -ge 1 ]
	# the search's first schedule has no points yet: the saved one runs
	# with those its search had found
	run -1 --separate-stderr ploom-explore -q --reduction=none --instrument=plainbank plainbank:scenario
	[ "$(jq_output .saved_failing)" -eq 1 ]
	[ "$(jq_output .schedules)" -eq 0 ]
	[[ "$stderr" == "ploom-explore: saved schedule '$saved' fails again: builtins.AssertionError: the account is overdrawn"* ]]
	[[ "$stderr" != *skipped* ]]
	run -1 ploom-replay -q "$saved"
	# fixed: the sites moved, the run asks for its points again and passes;
	# the search counts what it counts without saved traces
	plain_bank fixed
	run -0 --separate-stderr ploom-explore -q --no-saved --reduction=none --instrument=plainbank \
		plainbank:scenario
	searched="$(jq_output .schedules)"
	run -0 --separate-stderr ploom-explore -q --reduction=none --instrument=plainbank plainbank:scenario
	[ "$(jq_output .saved_runs)" -eq 1 ]
	[ "$(jq_output .schedules)" -eq "$searched" ]
	[ "$stderr" = "" ]
}

# stalls.py: timed waits of the stress model, one on a lock its holder
# could still release, one on a thread that could still end, one on a
# lock whose holder waits for the waiter (a real timeout, no stall)
stalls_here() {
	cat > stalls.py <<'PY'
import ploom


def lock():
    lk = ploom.Lock()
    t = ploom.Thread(target=lambda: (lk.acquire(), ploom.yield_now(), lk.release()))
    t.start()
    ploom.yield_now()
    got = lk.acquire(timeout=1.0)
    if got:
        lk.release()
    t.join()
    assert got, "the acquire timed out"


def join():
    t = ploom.Thread(target=ploom.yield_now)
    t.start()
    t.join(timeout=2.5)
    assert not t.is_alive(), "the thread is still alive"


def blocked():
    mine, theirs = ploom.Lock(), ploom.Lock()
    mine.acquire()

    def other():
        with theirs:
            with mine:
                pass

    t = ploom.Thread(target=other)
    t.start()
    # whenever the other task holds theirs it waits for mine
    got = theirs.acquire(timeout=1.0)
    if got:
        theirs.release()
    mine.release()
    t.join()
    assert got, "the acquire timed out"
PY
}

@test "--timeouts=any: a failure after a timeout that fired while its task could run names the stall" {
	stalls_here
	run -1 --separate-stderr ploom-explore -q --timeouts=any --no-minimize stalls.py:lock
	[[ "$stderr" == *"failed: builtins.AssertionError: the acquire timed out"* ]]
	[[ "$stderr" == *"ploom-explore: after a stall of thread#1 for 1.0 s (MainThread's acquire of lock#0 timed out at step "*" while thread#1 could still run)"* ]]
	trace="$(jq -r .trace <<<"$output")"
	[ "$(jq '[.steps[] | select(.stall_ns)] | length' "$trace")" -eq 1 ]
	[ "$(jq '[.steps[] | select(.stall_ns)][0].stall_of' "$trace")" -eq 1 ]
	run ploom-show "$trace"
	[[ "$output" == *$'\n  after a stall of thread#1 for 1.0 s (MainThread'* ]]
	# a join's, with the timeout that is no whole second
	run -1 --separate-stderr ploom-explore -q --timeouts=any --no-minimize stalls.py:join
	[[ "$stderr" == *"after a stall of thread#1 for 2.5 s (MainThread's join of thread#1 timed out at step "* ]]
	# what the timeout waited for could not run: no stall to name
	run -1 --separate-stderr ploom-explore -q --timeouts=any --no-minimize stalls.py:blocked
	[[ "$stderr" == *"failed: builtins.AssertionError: the acquire timed out"* ]]
	[[ "$stderr" != *"a stall of"* ]]
	run ploom-show "$(jq -r .trace <<<"$output")"
	[[ "$output" != *"a stall of"* ]]
	# the idle model waits for the holder: no failure
	run -0 ploom-explore -q stalls.py:lock
}
