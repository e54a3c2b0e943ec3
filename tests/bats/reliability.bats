#!/usr/bin/env bats
# A trace is untrusted input and every fault ends as a clean failure: one
# test per case of that contract (what replay runs, a kill at any byte of
# the record stream, long schedules, no false pass, trace files, bounded
# input, numbers, fork, no process left behind).  Needs the utilities and
# the worker's python3 on PATH (.venv/bin).

# $output, $stderr and $status are set by bats' run, ROOT, SCN and BANK by
# helpers.bash
# shellcheck disable=SC2154

bats_require_minimum_version 1.5.0

OVERDRAWN="builtins.AssertionError: the account is overdrawn"

load helpers

# payload: a module in the current folder that leaves ran.txt when imported
payload() {
	printf 'open("ran.txt", "w").close()\ndef scenario():\n    pass\n' > payload.py
}

@test "replay trust: a forged target runs nothing (os:abort, a module elsewhere)" {
	traces
	jq '.scenario.target = "os:abort"' "$orig" > forged.json
	run -4 --separate-stderr ploom-replay forged.json
	[[ "$stderr" == "ploom-replay: ReplayDivergenceError: the scenario's source changed: target 'os:abort' is '"*"/os.py', the trace was recorded from '$PWD/bank.py'" ]]
	payload
	jq '.scenario.target = "payload:scenario"' "$orig" > forged.json
	run -4 --separate-stderr ploom-replay forged.json
	[ "$stderr" = "ploom-replay: ReplayDivergenceError: the scenario's source changed: target 'payload:scenario' is '$PWD/payload.py', the trace was recorded from '$PWD/bank.py'" ]
	[ ! -e ran.txt ]
	# the minimizer starts its worker the same way
	run -4 --separate-stderr ploom-minimize forged.json
	[ ! -e ran.txt ]
}

@test "replay trust: a replay runs only a scenario file that the trace fingerprints" {
	traces
	payload
	jq 'del(.fingerprints) | .scenario.file = "'"$PWD"'/payload.py"' "$orig" > forged.json
	run -2 --separate-stderr ploom-replay forged.json
	[ "$stderr" = "ploom-replay: the trace's fingerprints do not cover its scenario file '$PWD/payload.py'" ]
	jq 'del(.fingerprints)' "$orig" > unfingerprinted.json
	run -2 --separate-stderr ploom-replay unfingerprinted.json
	[ "$stderr" = "ploom-replay: the trace's fingerprints do not cover its scenario file '$PWD/bank.py'" ]
	jq '.scenario.file = null' "$orig" > nofile.json
	run -2 --separate-stderr ploom-replay nofile.json
	[ "$stderr" = "ploom-replay: the trace names no scenario file: a replay runs only a file that the trace fingerprints" ]
	[ ! -e ran.txt ]
	# and ploom-show says so, and what a good trace runs
	run -0 ploom-show forged.json
	[[ "$output" == *"replay runs  nothing: the trace's fingerprints do not cover its scenario file '$PWD/payload.py'"* ]]
	run -0 ploom-show "$orig"
	blob="$(git hash-object bank.py)"
	[[ "$output" == *"replay runs  scenario in $PWD/bank.py, only while its blob is ${blob:0:7}"* ]]
}

# forge_os: forged.json, the bank's trace made to run os:abort from the
# os.py of the worker's Python, with that file's real blob id
forge_os() {
	traces
	os_py="$(python3 -c 'import os; print(os.path.realpath(os.__file__))')"
	jq --arg f "$os_py" --arg b "$(git hash-object "$os_py")" \
		'.scenario = {target: "os:abort", module: "os", qualname: "abort", file: $f, relpath: "os.py"}
		| .fingerprints = [{path: $f, blob: $b, relpath: "os.py"}]' "$orig" > forged.json
}

@test "replay trust: a forged trace naming os.py with its real blob id runs nothing, from any folder" {
	forge_os
	want="the trace's scenario 'os.py' is not in the current directory '$(pwd -P)/': a replay runs only the file at the trace's relative path there"
	run -2 --separate-stderr ploom-replay forged.json
	[ "$stderr" = "ploom-replay: $want" ]
	run -2 --separate-stderr ploom-minimize forged.json
	[ "$stderr" = "ploom-minimize: $want" ]
	[ -z "$output" ]
	run -2 --separate-stderr python3 -m ploom replay forged.json
	[[ "$stderr" == *"$want"* ]]
	[[ "$stderr" != *"signal"* ]]
	# pytest: the test's own scenario is not the forged one, and nothing runs
	printf 'import bank\n\ndef test_bank(ploom_check):\n    ploom_check(bank.scenario)\n' > test_bank.py
	run -1 python3 -m pytest -q -p no:cacheprovider test_bank.py --ploom-replay=forged.json
	[[ "$output" == *"trace 'forged.json' records scenario 'os:abort', this test checks 'bank:scenario'"* ]]
	# from the standard library's own folder the file is there, but it is
	# installed code, not a scenario of a project
	trace="$PWD/forged.json"
	cd "$(dirname "$os_py")"
	run -2 --separate-stderr ploom-replay "$trace"
	[[ "$stderr" == "ploom-replay: cannot load scenario 'os:abort': ValueError: the trace's scenario file '$os_py' is installed code (stdlib "*"): a replay runs only a scenario of the project it starts in" ]]
	run -2 --separate-stderr ploom-minimize "$trace"
	[[ "$stderr" == *"is installed code (stdlib "* ]]
}

# shellcheck disable=SC2030 # run sets output in each test's own shell, as in replay_refused
@test "replay trust: a planted .pyc, an inspect.py or a ploom/ in the folder replay runs from do not run" {
	git init -q repo
	cp "$BANK" repo/bank.py
	cd repo
	run -1 --separate-stderr ploom-explore -q --no-minimize bank.py:scenario
	file_trace="$PWD/$(jq_output -r .trace)"
	run -1 --separate-stderr ploom-explore -q --no-minimize bank:scenario
	mod="$PWD/$(jq_output -r .trace)"
	# an unchecked hash-based .pyc of other code, where Python looks first
	planted='open("'"$BATS_TEST_TMPDIR"'/ran.txt", "w").close()'
	printf '%s\ndef scenario():\n    pass\n' "$planted" > evil.py
	pyc="$(python3 -c 'import importlib.util; print(importlib.util.cache_from_source("bank.py"))')"
	python3 -c 'import py_compile, sys; py_compile.compile("evil.py", cfile=sys.argv[1], dfile="bank.py", invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)' "$pyc"
	rm evil.py
	# and modules that shadow what the worker imports, in the folder the
	# replay starts in (an unpacked CI artifact, say)
	mkdir -p artifact/ploom
	printf '%s\n' "$planted" > artifact/inspect.py
	printf '%s\n' "$planted" > artifact/ploom/__init__.py
	cd artifact
	for trace in "$file_trace" "$mod"; do
		run -1 --separate-stderr ploom-replay "$trace"
		[ "$stderr" = "ploom-replay: reproduced: $OVERDRAWN" ]
		[ ! -e "$BATS_TEST_TMPDIR/ran.txt" ]
	done
	run -0 --separate-stderr ploom-minimize -q "$file_trace"
	[ ! -e "$BATS_TEST_TMPDIR/ran.txt" ]
	# the .pyc is what a plain import runs: the test plants what it says
	(cd .. && python3 -c 'import bank')
	[ -e "$BATS_TEST_TMPDIR/ran.txt" ]
}

# replay_refused STATUS MESSAGE TRACE: every way to replay TRACE (ploom-replay,
# on the current source too, ploom-minimize, python -m ploom replay) exits
# STATUS saying MESSAGE, and prints no trace
# shellcheck disable=SC2031 # bats's run sets output in this function's own shell
replay_refused() {
	local status="$1" want="$2" trace="$3"
	run "-$status" --separate-stderr ploom-replay "$trace"
	[ "$stderr" = "ploom-replay: $want" ]
	[ -z "$output" ]
	run "-$status" --separate-stderr ploom-replay --on-current-source "$trace"
	[[ "$stderr" == *"ploom-replay: $want" ]]
	run "-$status" --separate-stderr ploom-minimize "$trace"
	[ "$stderr" = "ploom-minimize: $want" ]
	run "-$status" --separate-stderr python3 -m ploom replay "$trace"
	[[ "$stderr" == *"$want"* ]]
	run "-$status" --separate-stderr python3 -m ploom replay --on-current-source "$trace"
	[[ "$stderr" == *"$want"* ]]
}

@test "replay trust: a module target whose packages leave the repository imports nothing above it" {
	# above the repository, in a shared folder: an __init__.py for a
	# package named like the folders on the way, and a json.py that the
	# scenario's late `import json` would find first
	mkdir -p anc/proj
	printf 'open("%s/init-ran", "w").close()\n' "$BATS_TEST_TMPDIR" > anc/__init__.py
	printf 'open("%s/json-ran", "w").close()\n' "$BATS_TEST_TMPDIR" > json.py
	git init -q anc/proj
	sed 's/^def scenario():/def scenario():\n    import json  # noqa: F401 - imported late/' "$BANK" \
		> anc/proj/bank_account.py
	cd anc/proj
	run -1 --separate-stderr ploom-explore -q --no-minimize bank_account:scenario
	trace="$(jq_output -r .trace)"
	run -1 --separate-stderr ploom-replay "$trace"
	[ "$stderr" = "ploom-replay: reproduced: $OVERDRAWN" ]
	here="$(pwd -P)"
	above="$(cd .. && pwd -P)"
	# the victim's own trace with one field changed
	jq '.scenario.target = "anc.proj.bank_account:scenario"' "$trace" > forged.json
	replay_refused 2 "cannot load scenario 'anc.proj.bank_account:scenario': module 'anc.proj.bank_account' leaves '$here/': its package 'anc' is '$above'" forged.json
	# the repository itself as the package: its import root is above it
	jq '.scenario.target = "proj.bank_account:scenario"' "$trace" > forged.json
	replay_refused 2 "cannot load scenario 'proj.bank_account:scenario': module 'proj.bank_account' leaves '$here/': it would be imported from '$above'" forged.json
	# a package inside the tree whose __init__.py is a link out of it
	mkdir pkg
	ln -s "$BATS_TEST_TMPDIR/anc/__init__.py" pkg/__init__.py
	cp bank_account.py pkg/bankmod.py
	jq '.scenario.target = "pkg.bankmod:scenario" | .scenario.relpath = "pkg/bankmod.py"
		| .fingerprints[0].relpath = "pkg/bankmod.py"' "$trace" > forged.json
	replay_refused 2 "cannot load scenario 'pkg.bankmod:scenario': module 'pkg.bankmod' leaves '$here/': its package 'pkg' is '$here/pkg'" forged.json
	[ ! -e "$BATS_TEST_TMPDIR/init-ran" ]
	[ ! -e "$BATS_TEST_TMPDIR/json-ran" ]
	# what the test plants runs when a Python imports from the folder above
	(cd "$BATS_TEST_TMPDIR" && python3 -c 'import anc, json')
	[ -e "$BATS_TEST_TMPDIR/init-ran" ]
	[ -e "$BATS_TEST_TMPDIR/json-ran" ]
}

@test "replay trust: a replay puts the scenario's folder after the standard library on sys.path" {
	git init -q repo
	sed 's/^def scenario():/def scenario():\n    import json\n    assert json.dumps([1]) == "[1]"/' "$BANK" \
		> repo/bank_account.py
	cd repo
	run -1 --separate-stderr ploom-explore -q --no-minimize bank_account:scenario
	module_trace="$(jq_output -r .trace)"
	run -1 --separate-stderr ploom-explore -q --no-minimize bank_account.py:scenario
	file_trace="$(jq_output -r .trace)"
	# then a json.py beside the scenario, which imports json late: the
	# standard library's json is the one a replay finds
	printf 'open("%s/json-ran", "w").close()\n' "$BATS_TEST_TMPDIR" > json.py
	for trace in "$module_trace" "$file_trace"; do
		run -1 --separate-stderr ploom-replay "$trace"
		[ "$stderr" = "ploom-replay: reproduced: $OVERDRAWN" ]
		[ ! -e "$BATS_TEST_TMPDIR/json-ran" ]
	done
	# the json.py is what `python -m` from here imports
	python3 -c 'import json'
	[ -e "$BATS_TEST_TMPDIR/json-ran" ]
}

# forge_outside FILE ROOT: forged.json, the bank's trace ($orig, from
# traces) made to run FILE, with its real blob id, as the scenario of a
# repository whose work tree is ROOT
forge_outside() {
	local rel="${1#"$2"}"
	jq --arg f "$1" --arg r "${rel#/}" --arg b "$(git hash-object "$1")" \
		'.source.root = "repository"
		| .scenario = {target: "evil.py:scenario", module: "evil", qualname: "scenario", file: $f, relpath: $r}
		| .fingerprints = [{path: $f, blob: $b, relpath: $r}]' "$orig" > forged.json
}

@test "replay trust: a planted .git does not widen the repository (core.worktree, a .git file, GIT_DIR)" {
	mkdir outside
	printf 'open("%s/ran.txt", "w").close()\ndef scenario():\n    pass\n' "$BATS_TEST_TMPDIR" \
		> outside/evil.py
	evil="$(cd outside && pwd -P)/evil.py"
	traces
	forge_outside "$evil" /
	forged="$PWD/forged.json"
	# an unpacked CI artifact whose .git makes the whole disk its work tree
	mkdir art
	git init -q art
	git -C art config core.worktree /
	cd art
	replay_refused 2 "the repository of '$(pwd -P)/.git' puts its work tree at '/' (core.worktree?), not the folder that holds it: ploom trusts only that folder" "$forged"
	run -0 ploom-show "$forged"
	[[ "$output" == *"replay runs  nothing: the repository of '$(pwd -P)/.git' puts its work tree at '/'"* ]]
	# nor is it a repository to record in: a search here records its folder
	cp "$BANK" bank.py
	run -1 --separate-stderr ploom-explore -q --no-minimize bank.py:scenario
	[ "$(jq -r .source.root "$(jq_output -r .trace)")" = folder ]
	# from a folder below it too
	mkdir sub
	cd sub
	run -2 --separate-stderr ploom-replay "$forged"
	[[ "$stderr" == "ploom-replay: the repository of '"*"/art/.git' puts its work tree at '/'"* ]]
	cd "$BATS_TEST_TMPDIR"
	# or the folder above it, where the file is
	forge_outside "$evil" "$(pwd -P)"
	# (relative to art/.git, as git reads it)
	git -C art config core.worktree ../..
	cd art
	replay_refused 2 "the repository of '$(pwd -P)/.git' puts its work tree at '$(cd .. && pwd -P)/' (core.worktree?), not the folder that holds it: ploom trusts only that folder" "$forged"
	cd "$BATS_TEST_TMPDIR"
	# a .git file naming a repository elsewhere, whose work tree is /
	forge_outside "$evil" /
	git init -q planted
	git -C planted config core.worktree /
	mkdir art2
	printf 'gitdir: %s/planted/.git\n' "$BATS_TEST_TMPDIR" > art2/.git
	cd art2
	replay_refused 2 "the repository of '$(pwd -P)/.git' puts its work tree at '/' (core.worktree?), not the folder that holds it: ploom trusts only that folder" "$forged"
	# a .git file naming a worktree of another repository: its work tree
	# is that worktree's folder, not this one
	cd "$BATS_TEST_TMPDIR"
	git -C planted config --unset core.worktree
	git -C planted -c user.name=a -c user.email=a@b commit -q --allow-empty -m x
	git -C planted worktree add -q "$BATS_TEST_TMPDIR/wt"
	mkdir art3
	cp wt/.git art3/.git
	cd art3
	replay_refused 2 "the repository of '$(pwd -P)/.git' puts its work tree at '$(cd ../wt && pwd -P)/' (core.worktree?), not the folder that holds it: ploom trusts only that folder" "$forged"
	# GIT_DIR and GIT_WORK_TREE in the environment are not followed
	cd "$BATS_TEST_TMPDIR/outside"
	GIT_DIR="$BATS_TEST_TMPDIR/planted/.git" GIT_WORK_TREE=/ run -2 --separate-stderr ploom-replay "$forged"
	[[ "$stderr" == "ploom-replay: the trace's scenario '${evil#/}' is in a git repository and this directory is in none"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/ran.txt" ]
	# what the test plants runs when imported
	python3 "$evil"
	[ -e "$BATS_TEST_TMPDIR/ran.txt" ]
}

@test "replay trust: a file reached through a symbolic link out of the repository does not run" {
	mkdir outside
	printf 'open("%s/ran.txt", "w").close()\ndef scenario():\n    pass\n' "$BATS_TEST_TMPDIR" \
		> outside/evil.py
	git init -q art
	ln -s ../outside/evil.py art/evil.py
	traces
	forge_outside "$(cd art && pwd -P)/evil.py" "$(cd art && pwd -P)"
	forged="$PWD/forged.json"
	cd art
	replay_refused 2 "the trace's file '$(pwd -P)/evil.py' leads out of '$(pwd -P)/' (a symbolic link?): a replay runs only files inside it" "$forged"
	[ ! -e "$BATS_TEST_TMPDIR/ran.txt" ]
}

@test "replay trust: a trace with a duplicate key is refused by every reader" {
	traces
	payload
	# cJSON would read the first "scenario", Python's json the last
	{ echo '{"scenario": {"target": "payload:scenario", "module": "payload", "qualname": "scenario", "file": "'"$PWD"'/payload.py"},'; tail -c +2 "$orig"; } > dup.json
	run -2 --separate-stderr ploom-replay dup.json
	[ "$stderr" = "ploom-replay: cannot read trace 'dup.json': duplicate key 'scenario'" ]
	run -2 --separate-stderr ploom-show dup.json
	[ "$stderr" = "ploom-show: cannot read trace 'dup.json': duplicate key 'scenario'" ]
	run -2 --separate-stderr python3 -m ploom replay dup.json
	[[ "$stderr" == *"cannot read trace 'dup.json': duplicate key 'scenario'"* ]]
	[ ! -e ran.txt ]
}

@test "a timeout while the records overflow to the worker still ends as a timeout" {
	# spins_writing_forever fills the shared record area several times
	# before 0.1 s, and stops short of the most steps a schedule may take
	# (a fast machine makes about 200,000 steps in 0.3 s), so the timeout's
	# kill lands at any byte of a record: each run must still end in a whole
	# stream and a timeout failure with its trace
	for _ in 1 2 3 4 5 6; do
		run -1 --separate-stderr ploom-explore -q -s 0 --schedule-timeout=0.1 --no-minimize \
			"$SCN:spins_writing_forever"
		echo "$output" > stats.json
		[ "$(jq -r .failure.kind stats.json)" = timeout ]
		[ -s "$(jq -r .trace stats.json)" ]
	done
}

@test "a schedule of over 40,000 branch points is explored and replays" {
	scenarios_here
	run -1 --separate-stderr ploom-explore -q -n 1 -s 0 scenarios.py:long_then_fails
	trace="$(jq_output -r .trace)"
	[ "$(jq '.choices | length' "$trace")" -gt 40000 ]
	# the replay's `run` command is about 100 KB long
	run -1 --separate-stderr ploom-replay "$trace"
	[ "$stderr" = "ploom-replay: reproduced: builtins.AssertionError: the end of a long schedule" ]
}


@test "no false pass: async, generator and argument-taking scenarios are refused before any schedule" {
	for name in async_scenario generator_scenario async_generator_scenario needs_an_argument; do
		run -2 --separate-stderr ploom-explore -q "$SCN:$name"
		[ -z "$output" ]
		[[ "$stderr" == "ploom-explore: cannot load scenario '$SCN:$name': TypeError: "* ]]
	done
	[ ! -e .ploom ]
}

@test "trace files: 8 concurrent runs in one folder all exit 1, and planted links redirect nothing" {
	cp "$BANK" bank.py
	pids=()
	for i in 1 2 3 4 5 6 7 8; do
		ploom-explore -q --no-minimize bank.py:scenario > "stats$i.json" 2> "err$i.txt" &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do
		st=0
		wait "$pid" || st=$?
		[ "$st" -eq 1 ]
	done
	for i in 1 2 3 4 5 6 7 8; do
		grep -q "^ploom-explore: trace written to " "err$i.txt"
		run -1 grep -q cannot "err$i.txt"
		[ -f "$(jq -r .trace "stats$i.json")" ]
	done
	# links where the traces go, and where a fixed temporary name would be
	trace="$(jq -r .trace stats1.json)"
	echo precious > victim.txt
	rm -f .ploom/*
	ln -s ../victim.txt "$trace"
	ln -s ../victim.txt "$trace.tmp"
	run -1 --separate-stderr ploom-explore -q --no-minimize bank.py:scenario
	[ "$(cat victim.txt)" = precious ]
	[ ! -L "$trace" ]
	[ "$(jq -r .id "$trace")" = "$(basename "$trace" -original.json)" ]
}

@test "bounded input: /dev/zero is refused in bounded memory, and replay - reads standard input" {
	# 200 MB of address space: reading /dev/zero to a limit would not fit
	# (AddressSanitizer reserves terabytes of address space for itself, so
	# a sanitized build runs without the cap)
	limit='ulimit -v 200000;'
	if ldd "$(command -v ploom-show)" | grep -q libasan; then
		limit=''
	fi
	run -2 --separate-stderr bash -c "$limit ploom-show /dev/zero"
	[ "$stderr" = "ploom-show: cannot read trace '/dev/zero': not a ploom trace (it contains a NUL byte)" ]
	run -2 --separate-stderr python3 -m ploom replay /dev/zero
	[[ "$stderr" == *"cannot read trace '/dev/zero': not a ploom trace (it contains a NUL byte)" ]]
	[[ "$stderr" != *Traceback* ]]
	traces
	run -1 --separate-stderr bash -c "python3 -m ploom replay - < '$min'"
	[ "${lines[0]}" = "ploom.exploration.ModelCheckError: $OVERDRAWN" ]
}

@test "numbers out of range exit 2 without a traceback, from the utility and from Python" {
	run -2 --separate-stderr ploom-explore -p 1000000000000000000000000000000 "$SCN:abba"
	[[ "$stderr" == "ploom-explore: invalid --max-preemptions '1000000000000000000000000000000': not an integer from 0 to "* ]]
	run -2 --separate-stderr python3 -m ploom check --max-preemptions 1000000000000000000000000000000 "$SCN:abba"
	[[ "$stderr" == *"invalid --max-preemptions"* ]]
	[[ "$stderr$output" != *Traceback* ]]
	traces
	jq '.config.schedule_timeout_s = 1e300' "$orig" > timeout.json
	run -2 --separate-stderr ploom-replay timeout.json
	[ "$stderr" = "ploom-replay: cannot read trace 'timeout.json': field 'config.schedule_timeout_s' is not a number of seconds from 0 to 1e9" ]
}

@test "a scenario that forks stops the search with a clear message, no failure" {
	run -6 --separate-stderr ploom-explore -q --no-minimize "$SCN:forks"
	[[ "$stderr" == *"setup error, not a bug of the code under test: ploom.UnscheduledPrimitiveError: os.fork() at scenarios.py:"*" during a schedule: ploom cannot explore a test that starts processes: the new process would run outside its scheduler (its steps would not be recorded, and it could outlive the schedule); to run another program, use subprocess"* ]]
	[[ "$stderr" == *"no trace saved"* ]]
}

@test "a fingerprint naming a FIFO does not hang the replay" {
	traces
	mkfifo fifo.py
	jq '.fingerprints += [{"path": "'"$PWD"'/fifo.py", "blob": "0123456789012345678901234567890123456789"}]' "$orig" > fifo.json
	run -4 --separate-stderr timeout 20 ploom-replay fifo.json
	[[ "$stderr" == "ploom-replay: ReplayDivergenceError: the scenario's source changed: '$PWD/fifo.py' (recorded blob 0123456, now unreadable: "* ]]
}

# The scenarios that start a program in a session of its own run `sleep
# $PLOOM_TEST_SLEEP` (tests/python/scenarios.py): a duration of this test's
# own, by which leftovers finds what they left behind.
sessions() {
	export PLOOM_TEST_SLEEP="300.$RANDOM$RANDOM"
}

# leftovers: the pids of this test's sleeps that are still running
leftovers() {
	pgrep -f "^sleep $PLOOM_TEST_SLEEP\$"
}

teardown() {
	if [ -n "${PLOOM_TEST_SLEEP-}" ]; then
		pkill -KILL -f "^sleep $PLOOM_TEST_SLEEP\$" || true
	fi
}

@test "no orphans: a program a schedule starts in a session of its own ends with its schedule" {
	sessions
	run -0 --separate-stderr ploom-explore -q --no-minimize "$SCN:starts_sessions_one_at_a_time"
	[ "$(jq_output .schedules)" -gt 1 ]
	run -1 leftovers
	run -0 --separate-stderr ploom-run-one "$SCN:starts_a_session"
	run -1 leftovers
}

@test "no orphans: -j 2 leaves no program that a schedule started in a session of its own" {
	sessions
	run -0 --separate-stderr ploom-explore -q -j 2 "$SCN:starts_a_session"
	[ "$(jq_output .jobs)" -eq 2 ]
	[ "$(jq_output .schedules)" -gt 1 ]
	run -1 leftovers
}

@test "no orphans: nor the programs such a program starts, nor one orphaned during its schedule" {
	sessions
	run -0 --separate-stderr ploom-explore -q "$SCN:starts_a_session_that_forks"
	run -1 leftovers
	run -0 --separate-stderr ploom-explore -q -j 2 "$SCN:starts_a_session_that_forks"
	run -1 leftovers
}

@test "no orphans: SIGTERM leaves no program that the schedule started in a session of its own" {
	sessions
	local pid code=0 tries=0
	ploom-explore -q "$SCN:starts_a_session_and_blocks" > out.json 2> err.txt &
	pid=$!
	while ! leftovers > /dev/null && ((tries++ < 100)); do
		sleep 0.1
	done
	leftovers
	kill -TERM "$pid"
	wait "$pid" || code=$?
	[ "$code" -eq 143 ]
	run -1 leftovers
}

@test "no orphans: -j 2 kills a schedule's orphan only once its schedule is over" {
	sessions
	run -0 --separate-stderr ploom-explore -q --no-minimize -j 2 "$SCN:keeps_its_orphan"
	[ "$(jq_output .schedules)" -gt 1 ]
	run -1 leftovers
}
