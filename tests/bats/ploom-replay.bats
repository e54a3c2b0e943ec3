#!/usr/bin/env bats
# ploom-replay: the saved schedule again, exactly; each divergence named;
# bad traces refused.  Needs the utilities and the worker's python3 on
# PATH (.venv/bin).

# $output, $stderr and $status are set by bats' run, ROOT, SCN and BANK by
# helpers.bash
# shellcheck disable=SC2154

bats_require_minimum_version 1.5.0

OVERDRAWN="builtins.AssertionError: the account is overdrawn"

load helpers

# steps FILE: one line per step, "task op object"
steps() {
	jq -c '[.steps[] | [.task, .op, .object]]' "$1"
}

@test "the original and the minimized trace reproduce ten times out of ten" {
	traces
	for trace in "$orig" "$min"; do
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			run -1 --separate-stderr ploom-replay "$trace"
			[ "$stderr" = "ploom-replay: reproduced: $OVERDRAWN" ]
			echo "$output" > again.json
			[ "$(jq -r .outcome.exception.type again.json)" = builtins.AssertionError ]
			[ "$(jq -r .outcome.exception.message again.json)" = "the account is overdrawn" ]
			[ "$(steps again.json)" = "$(steps "$trace")" ]
		done
	done
}

@test "the replayed trace is the recorded one, so replay is a filter" {
	traces
	run -1 --separate-stderr ploom-replay "$min"
	[ "$output" = "$(cat "$min")" ]
	run -1 --separate-stderr ploom-replay < "$min"
	[ "$output" = "$(cat "$min")" ]
	[ "$stderr" = "ploom-replay: reproduced: $OVERDRAWN" ]
	run -1 --separate-stderr ploom-replay -q - < "$orig"
	[ "$output" = "$(cat "$orig")" ]
	[ -z "$stderr" ]
	ploom-replay -q "$orig" > once.json || true
	run -1 --separate-stderr ploom-replay once.json
	[ "$output" = "$(cat "$orig")" ]
}

@test "a trace of format version 1 replays, and comes back as version 2" {
	traces
	jq '.version = 1' "$orig" > v1.json
	run -1 --separate-stderr ploom-replay v1.json
	[ "$stderr" = "ploom-replay: reproduced: $OVERDRAWN" ]
	echo "$output" > again.json
	[ "$(jq .version again.json)" -eq 2 ]
	[ "$(steps again.json)" = "$(steps "$orig")" ]
}

@test "a minimized trace from ploom-minimize on stdin replays" {
	traces
	ploom-minimize -q < "$orig" > min.json
	run -1 --separate-stderr ploom-replay < min.json
	[ "$stderr" = "ploom-replay: reproduced: $OVERDRAWN" ]
}

@test "an edit to the scenario's source is a divergence naming the file" {
	traces
	before="$(git hash-object bank.py | cut -c1-7)"
	printf '\n# an edit that changes nothing else\n' >> bank.py
	after="$(git hash-object bank.py | cut -c1-7)"
	for trace in "$orig" "$min"; do
		run -4 --separate-stderr ploom-replay "$trace"
		[ -z "$output" ]
		[ "$stderr" = "ploom-replay: ReplayDivergenceError: the scenario's source changed: '$(pwd -P)/bank.py' (recorded blob $before, now $after)
ploom-replay: to run the recorded order of tasks on the source as it is now, replay with --on-current-source" ]
	done
	# gone from here: nothing to run (a file elsewhere never stands in)
	rm bank.py
	run -2 --separate-stderr ploom-replay "$orig"
	[ "$stderr" = "ploom-replay: the trace's scenario 'bank.py' is not in the current directory '$(pwd -P)/': a replay runs only the file at the trace's relative path there" ]
}

@test "an operation edited in the trace is a divergence naming the step" {
	traces
	task="$(jq '.steps[3].task' "$orig")"
	[ "$(jq -r '.steps[3].op' "$orig")" = read ]
	jq '.steps[3].op = "write"' "$orig" > edited.json
	run -4 --separate-stderr ploom-replay edited.json
	[ -z "$output" ]
	[ "$stderr" = "ploom-replay: ReplayDivergenceError: step 3 differs: recorded task $task write cell#0, got task $task read cell#0" ]
	jq '.steps[3].object = "cell#7"' "$orig" > edited.json
	run -4 --separate-stderr ploom-replay edited.json
	[ "$stderr" = "ploom-replay: ReplayDivergenceError: step 3 differs: recorded task $task read cell#7, got task $task read cell#0" ]
	jq 'del(.steps[-1])' "$orig" > short.json
	run -4 --separate-stderr ploom-replay short.json
	[[ "$stderr" == "ploom-replay: ReplayDivergenceError: step $(jq '.steps | length' short.json) differs: recorded the end of the run, got task 0 read cell#0" ]]
}

@test "where a step stopped and the names are information, not a divergence" {
	traces
	line="$(jq '.steps[3].where.line' "$orig")"
	[ "$line" -gt 0 ]
	jq '.steps[3].where.line = 999 | .steps[3].where.function = "elsewhere" | .tasks[1].name = "someone"' \
		"$orig" > edited.json
	run -1 --separate-stderr ploom-replay edited.json
	[ "$stderr" = "ploom-replay: reproduced: $OVERDRAWN" ]
	# the new trace says where this run stopped, and the names it gave
	echo "$output" > new.json
	[ "$(jq '.steps[3].where.line' new.json)" = "$line" ]
	[ "$(jq -r '.tasks[1].name' new.json)" = mathieu ]
}

@test "a choice that is not enabled is a divergence" {
	traces
	jq '.choices[1] = 7' "$orig" > edited.json
	run -4 --separate-stderr ploom-replay edited.json
	[[ "$stderr" == "ploom-replay: ReplayDivergenceError: step "*" differs: "*"choice 1 asks for task 7, which is not enabled" ]]
}

@test "another Python minor version is a divergence" {
	traces
	running="$(jq -r .python.version "$orig" | cut -d. -f1,2)"
	jq '.python.version = "3.12.4"' "$orig" > py.json
	run -4 --separate-stderr ploom-replay py.json
	[ -z "$output" ]
	[ "$stderr" = "ploom-replay: ReplayDivergenceError: Python $running runs this replay, the trace was recorded with 3.12" ]
	# another patch release is the same Python
	jq --arg v "$running.99" '.python.version = $v' "$orig" > patch.json
	run -1 --separate-stderr ploom-replay patch.json
}

@test "an outcome that no longer happens is a divergence" {
	traces
	jq '.outcome.exception.message = "another bug" | .outcome.summary = "builtins.AssertionError: another bug"' "$orig" > edited.json
	run -4 --separate-stderr ploom-replay edited.json
	[ -z "$output" ]
	[ "$stderr" = "ploom-replay: ReplayDivergenceError: outcome differs: recorded builtins.AssertionError: another bug, got $OVERDRAWN" ]
}

@test "a passing trace exits 0 and a step-limit trace 3" {
	cp "$BANK" bank.py
	scenarios_here
	ploom-run-one bank.py:scenario > pass.json
	run -0 --separate-stderr ploom-replay pass.json
	[ "$stderr" = "ploom-replay: reproduced: pass" ]
	[ "$(jq_output -r .outcome.kind)" = pass ]
	run -3 --separate-stderr ploom-run-one -s 20 scenarios.py:spins_forever
	echo "$output" > limit.json
	run -3 --separate-stderr ploom-replay limit.json
	[ "$stderr" = "ploom-replay: reproduced: step-limit: the schedule reached 20 steps" ]
}

@test "a trace replays only from the folder that holds its scenario" {
	traces
	mkdir elsewhere
	cd elsewhere
	run -2 --separate-stderr ploom-replay "../$orig"
	[ "$stderr" = "ploom-replay: the trace's scenario 'bank.py' is not in the current directory '$(pwd -P)/': a replay runs only the file at the trace's relative path there" ]
	# nor does ploom-show say it would run the recorded file
	run -0 ploom-show "../$orig"
	[[ "$output" == *"replay runs  nothing: the trace's scenario 'bank.py' is not in the current directory"* ]]
	cd "$BATS_TEST_TMPDIR"
	run -1 --separate-stderr ploom-replay "$PWD/$orig"
	[ "$stderr" = "ploom-replay: reproduced: $OVERDRAWN" ]
}

@test "a trace without an id or minimized_from replays" {
	traces
	jq 'del(.id, .minimized_from)' "$min" > old.json
	run -1 --separate-stderr ploom-replay old.json
	[ "$stderr" = "ploom-replay: reproduced: $OVERDRAWN" ]
}

@test "a trace without config.patch replays, and one with it starts the worker with it" {
	traces
	jq 'del(.config.patch)' "$min" > old.json
	run -1 --separate-stderr ploom-replay old.json
	[ "$stderr" = "ploom-replay: reproduced: $OVERDRAWN" ]
	jq '.config.patch = ["colorsys"]' "$min" > patched.json
	run -2 --separate-stderr ploom-replay patched.json
	[[ "$stderr" == "ploom-replay: cannot load scenario "*"ImportError: cannot patch 'colorsys': the scenario's module has not imported it"* ]]
	jq '.config.patch = ["not a name"]' "$min" > bad.json
	run -2 --separate-stderr ploom-replay bad.json
	[ "$stderr" = "ploom-replay: cannot read trace 'bad.json': field 'config.patch[0]' is not a module name (Python identifiers joined by '.')" ]
}

@test "a trace without config.instrument replays, and one with it starts the worker with it" {
	traces
	jq 'del(.config.instrument, .config.instrument_scenario, .config.patch_project)' "$min" > old.json
	run -1 --separate-stderr ploom-replay old.json
	[ "$stderr" = "ploom-replay: reproduced: $OVERDRAWN" ]
	[ "$(jq_output -c '[.config.instrument, .config.instrument_scenario]')" = '[[],false]' ]
	# exactly the recorded ones: no default is added to a replay
	logging_python
	jq '.config.instrument = ["lib", "pkg.sub"] | .config.instrument_scenario = true |
		.config.reduction = "dpor" | .config.patch = ["pa"]' "$min" > instrumented.json
	run ploom-replay --python="$PY" instrumented.json
	[[ "$(cat argv.log)" == "-P -m ploom._worker --expect=$PWD/bank.py --expect-blob="*" --patch=pa --instrument=lib --instrument=pkg.sub --patch-project --instrument-scenario --plain-points=* bank.py:scenario" ]]
	jq '.config.reduction = "dpor" | del(.config.patch_project)' "$min" > dpor.json
	run -1 --separate-stderr ploom-replay --python="$PY" dpor.json
	[[ "$(sed -n 2p argv.log)" == "-P -m ploom._worker --expect=$PWD/bank.py --expect-blob="*" --plain-points=* bank.py:scenario" ]]
	jq '.config.instrument = ["not a name"]' "$min" > bad.json
	run -2 --separate-stderr ploom-replay bad.json
	[ "$stderr" = "ploom-replay: cannot read trace 'bad.json': field 'config.instrument[0]' is not a module name (Python identifiers joined by '.')" ]
	jq '.config.instrument_scenario = "yes"' "$min" > bad.json
	run -2 --separate-stderr ploom-replay bad.json
	[ "$stderr" = "ploom-replay: cannot read trace 'bad.json': field 'config.instrument_scenario' is not a boolean" ]
}

@test "a module target replays from a folder of its repository, found under the recorded package root" {
	mkdir -p proj/pkg
	git init -q proj
	touch proj/pkg/__init__.py
	cp "$BANK" proj/pkg/bankmod.py
	(cd proj && run -1 --separate-stderr ploom-explore -q pkg.bankmod:scenario && echo "$output" > ../stats.json)
	trace="$PWD/proj/$(jq -r .trace stats.json)"
	# the folder replay starts in is not on the worker's path: a module
	# there named like the package cannot stand in for it
	mkdir -p proj/sub/pkg
	printf 'open("%s/ran.txt", "w").close()\n' "$PWD" > proj/sub/pkg/__init__.py
	cp proj/sub/pkg/__init__.py proj/sub/pkg/bankmod.py
	cd proj/sub
	run -1 --separate-stderr ploom-replay "$trace"
	[ "$stderr" = "ploom-replay: reproduced: $OVERDRAWN" ]
	[ ! -e ../../ran.txt ]
	cd ../..
	mkdir elsewhere
	cd elsewhere
	run -2 --separate-stderr ploom-replay "$trace"
	[[ "$stderr" == "ploom-replay: the trace's scenario 'pkg/bankmod.py' is in a git repository and this directory is in none"* ]]
}

@test "a malformed or unknown-version trace exits 2 naming the file" {
	echo 'not json' > bad.json
	run -2 --separate-stderr ploom-replay bad.json
	[ -z "$output" ]
	[ "$stderr" = "ploom-replay: cannot read trace 'bad.json': not valid JSON (line 1)" ]
	run -2 --separate-stderr ploom-replay < bad.json
	[ "$stderr" = "ploom-replay: cannot read trace '<stdin>': not valid JSON (line 1)" ]
	traces
	jq '.version = 3' "$orig" > v3.json
	run -2 --separate-stderr ploom-replay v3.json
	[ "$stderr" = "ploom-replay: cannot read trace 'v3.json': unknown format version 3 (this ploom reads 1 to 2)" ]
	jq '.fingerprints[0].blob = "xyz"' "$orig" > blob.json
	run -2 --separate-stderr ploom-replay blob.json
	[ "$stderr" = "ploom-replay: cannot read trace 'blob.json': field 'fingerprints[0].blob' is not a git blob id (40 lower-case hex digits)" ]
	jq '.steps[2].task = "one"' "$orig" > task.json
	run -2 --separate-stderr ploom-replay task.json
	[ "$stderr" = "ploom-replay: cannot read trace 'task.json': field 'steps[2].task' is not an integer" ]
	run -2 --separate-stderr ploom-replay nonexistent.json
	[ "$stderr" = "ploom-replay: cannot read trace 'nonexistent.json': No such file or directory" ]
	: > empty.json
	run -2 --separate-stderr ploom-replay empty.json
	[[ "$stderr" == "ploom-replay: cannot read trace 'empty.json': "* ]]
}

@test "a trace beyond the documented limits exits 2 with the reason" {
	traces
	for t in 1e300 -1 1e10; do
		jq ".config.schedule_timeout_s = $t" "$orig" > timeout.json
		run -2 --separate-stderr ploom-replay timeout.json
		[ "$stderr" = "ploom-replay: cannot read trace 'timeout.json': field 'config.schedule_timeout_s' is not a number of seconds from 0 to 1e9" ]
	done
	# 1e999 is not a double: cJSON reads it as infinity
	sed 's/"schedule_timeout_s":[^,}]*/"schedule_timeout_s": 1e999/' "$orig" > inf.json
	run -2 --separate-stderr ploom-replay inf.json
	[ "$stderr" = "ploom-replay: cannot read trace 'inf.json': field 'config.schedule_timeout_s' is not a number of seconds from 0 to 1e9" ]
	# a choice is a task id, which a run command to the worker bounds
	for c in 1000001 2147483647 -1; do
		jq ".choices[0] = $c" "$orig" > choice.json
		run -2 --separate-stderr ploom-replay choice.json
		[ -z "$output" ]
		[ "$stderr" = "ploom-replay: cannot read trace 'choice.json': field 'choices[0]' is out of range" ]
	done
	# the step's task ran, so it was enabled there
	jq '.steps[3].enabled = []' "$orig" > enabled.json
	run -2 --separate-stderr ploom-replay enabled.json
	[ "$stderr" = "ploom-replay: cannot read trace 'enabled.json': field 'steps[3].enabled' is empty" ]
	jq '.steps[3].enabled -= [.steps[3].task]' "$orig" > enabled.json
	run -2 --separate-stderr ploom-replay enabled.json
	[ "$stderr" = "ploom-replay: cannot read trace 'enabled.json': field 'steps[3].enabled' does not hold the step's task" ]
	jq '.choices[0] = 1000000' "$orig" > choice.json
	run -4 --separate-stderr ploom-replay choice.json
	[[ "$stderr" == "ploom-replay: ReplayDivergenceError: "*"choice 0 asks for task 1000000, which is not enabled" ]]
	head -c $((256 * 1024 * 1024 + 1)) /dev/zero > big.json
	run -2 --separate-stderr ploom-replay big.json
	[ "$stderr" = "ploom-replay: cannot read trace 'big.json': larger than 256 MiB" ]
	run -2 --separate-stderr ploom-replay - < big.json
	[ "$stderr" = "ploom-replay: cannot read trace '<stdin>': larger than 256 MiB" ]
}

@test "--schedule-timeout lowers the trace's schedule timeout, never raises it" {
	scenarios_here
	run -1 --separate-stderr ploom-explore -q --no-minimize --schedule-timeout 0.5 scenarios.py:blocks_outside
	trace="$(jq_output -r .trace)"
	# a trace may ask for 1e9 s (31 years): the command line's limit holds
	jq '.config.schedule_timeout_s = 1e9' "$trace" > long.json
	run -1 --separate-stderr timeout 30 ploom-replay --schedule-timeout=0.5 long.json
	[ "$stderr" = "ploom-replay: reproduced: timeout: the schedule ran longer than 0.5 s" ]
	[ "$(jq_output .config.schedule_timeout_s)" = 0.5 ]
	# a longer one, or 0 (none), leaves the trace's: the scenario sleeps 60 s
	for t in 30 0; do
		run -1 --separate-stderr timeout 20 ploom-replay --schedule-timeout=$t "$trace"
		[ "$stderr" = "ploom-replay: reproduced: timeout: the schedule ran longer than 0.5 s" ]
		[ "$(jq_output .config.schedule_timeout_s)" = 0.5 ]
	done
}

@test "a deadlock replays as the same deadlock" {
	scenarios_here
	run -1 --separate-stderr ploom-explore -q scenarios.py:abba
	deadlock="$(jq_output -r .minimized_trace)"
	run -1 --separate-stderr ploom-replay "$deadlock"
	[ "$stderr" = "ploom-replay: reproduced: $(jq -r .outcome.summary "$deadlock")" ]
	[[ "$stderr" == "ploom-replay: reproduced: deadlock: "* ]]
}

@test "a missing interpreter is a usage error" {
	traces
	run -2 --separate-stderr ploom-replay --python /nonexistent/python3 "$orig"
	[ "$stderr" = "ploom-replay: cannot run '/nonexistent/python3': No such file or directory" ]
}

@test "a full stdout is an error, not silence" {
	traces
	run -2 --separate-stderr bash -c "ploom-replay '$orig' > /dev/full"
	[ "$stderr" = "ploom-replay: cannot write the trace: No space left on device" ]
}

@test "usage errors exit 2 with a message" {
	run -2 --separate-stderr ploom-replay a.json b.json
	[[ "$stderr" == "ploom-replay: too many arguments"* ]]
	run -2 --separate-stderr ploom-replay --schedule-timeout=soon a.json
	[[ "$stderr" == "ploom-replay: invalid --schedule-timeout 'soon'"* ]]
	run -2 --separate-stderr ploom-replay -x
	[[ "$stderr" == "ploom-replay: unknown option '-x'"* ]]
}

@test "--help and --version exit 0 on stdout" {
	run -0 ploom-replay --help
	[[ "$output" == "usage: ploom-replay "* ]]
	run -0 ploom-replay --version
	[[ "$output" == "ploom-replay (ploom) "* ]]
}

@test "no control character of a scenario or a trace reaches the terminal" {
	scenarios_here
	run -1 --separate-stderr ploom-explore -q --no-minimize --trace-dir="$BATS_TEST_TMPDIR" \
		scenarios.py:raises_terminal_escapes
	[[ "$stderr" == *"failed: builtins.RuntimeError: ?[2J?[Hcleared"* ]]
	[[ "$stderr" != *$'\x1b'* ]]
	local trace
	trace=$(jq_output -r .trace)
	run -1 --separate-stderr ploom-replay "$trace"
	[[ "$stderr" == *"reproduced: builtins.RuntimeError: ?[2J?[Hcleared"* ]]
	[[ "$stderr" != *$'\x1b'* ]]
}

# clones: a git repository "first" holding a commit of the bank as
# bank_account.py, and a clone of it, "second"
clones() {
	git init -q first
	git -C first config user.name ploom
	git -C first config user.email ploom@example.com
	cp "$BANK" first/bank_account.py
	git -C first add bank_account.py
	git -C first commit -q -m bank
	git clone -q first second
}

@test "a trace recorded in one clone replays in another, on that clone's file" {
	clones
	cd first
	run -1 --separate-stderr ploom-explore -q bank_account.py:scenario
	trace="$PWD/$(jq_output -r .trace)"
	[ "$(jq -r .source.root "$trace")" = repository ]
	[ "$(jq -r .source.commit "$trace")" = "$(git rev-parse HEAD)" ]
	[ "$(jq -r .source.dirty "$trace")" = false ]
	[ "$(jq -r .scenario.relpath "$trace")" = bank_account.py ]
	[ "$(jq -r '.fingerprints[0].relpath' "$trace")" = bank_account.py ]
	[ "$(jq -r .scenario.file "$trace")" = "$PWD/bank_account.py" ]
	cd ../second
	run -1 --separate-stderr ploom-replay "$trace"
	[ "$stderr" = "ploom-replay: reproduced: $OVERDRAWN" ]
	echo "$output" > again.json
	[ "$(jq -r .scenario.file again.json)" = "$(pwd -P)/bank_account.py" ]
	[ "$(jq -r .source.commit again.json)" = "$(git rev-parse HEAD)" ]
	# from a folder below the work tree's root too
	mkdir sub
	cd sub
	run -1 --separate-stderr ploom-replay "$trace"
	cd "$BATS_TEST_TMPDIR/second"
	before="$(git hash-object bank_account.py)"
	printf '\n# an edit in the second clone\n' >> bank_account.py
	after="$(git hash-object bank_account.py)"
	run -4 --separate-stderr ploom-replay "$trace"
	[ -z "$output" ]
	[ "$stderr" = "ploom-replay: ReplayDivergenceError: the scenario's source changed: '$(pwd -P)/bank_account.py' (recorded blob ${before:0:7}, now ${after:0:7})
ploom-replay: to run the recorded order of tasks on the source as it is now, replay with --on-current-source" ]
	# on the current source: this clone's edited file, the same failure
	run -1 --separate-stderr ploom-replay --on-current-source "$trace"
	[ "$stderr" = "ploom-replay: the source differs from the trace's in 1 file:
ploom-replay:   '$(pwd -P)/bank_account.py' (recorded blob ${before:0:7}, now ${after:0:7})
ploom-replay: builtins.AssertionError: the account is overdrawn (the recorded failure) on the current source; 0 departures" ]
	[ "$(jq_output -r '.fingerprints[0].blob')" = "$after" ]
}

@test "a module target recorded in one clone replays in another" {
	clones
	cd first
	run -1 --separate-stderr ploom-explore -q bank_account:scenario
	trace="$PWD/$(jq_output -r .trace)"
	[ "$(jq -r .source.root "$trace")" = repository ]
	cd ../second
	run -1 --separate-stderr ploom-replay "$trace"
	[ "$stderr" = "ploom-replay: reproduced: $OVERDRAWN" ]
}

@test "a trace replays in a git worktree and in a submodule, whose .git files name a gitdir elsewhere" {
	clones
	cd first
	run -1 --separate-stderr ploom-explore -q --no-minimize bank_account:scenario
	trace="$PWD/$(jq_output -r .trace)"
	git worktree add -q ../wt
	cd ../wt
	[ -f .git ]
	run -1 --separate-stderr ploom-replay "$trace"
	[ "$stderr" = "ploom-replay: reproduced: $OVERDRAWN" ]
	cd "$BATS_TEST_TMPDIR"
	git init -q super
	git -C super -c protocol.file.allow=always submodule add -q "$BATS_TEST_TMPDIR/first" sub
	cd super/sub
	[ -f .git ]
	# git keeps the submodule's repository under the superproject's .git,
	# with core.worktree naming this folder
	[ -n "$(git config core.worktree)" ]
	run -1 --separate-stderr ploom-replay "$trace"
	[ "$stderr" = "ploom-replay: reproduced: $OVERDRAWN" ]
	echo "$output" > again.json
	[ "$(jq -r .scenario.file again.json)" = "$(pwd -P)/bank_account.py" ]
	# and a search there records the submodule's own relative path
	run -1 --separate-stderr ploom-explore -q --no-minimize bank_account.py:scenario
	[ "$(jq -r .scenario.relpath "$(jq_output -r .trace)")" = bank_account.py ]
}

@test "a trace records that its file differs from the commit" {
	clones
	cd first
	printf '\n# not committed\n' >> bank_account.py
	run -1 --separate-stderr ploom-explore -q bank_account.py:scenario
	trace="$(jq_output -r .trace)"
	[ "$(jq -r .source.dirty "$trace")" = true ]
	[ "$(jq -r .source.commit "$trace")" = "$(git rev-parse HEAD)" ]
	run -0 ploom-show "$trace"
	[[ "$output" == *"source       bank_account.py (blob "*") at commit $(git rev-parse --short=7 HEAD), dirty"* ]]
}

@test "a trace recorded outside a repository replays from a copy of its folder" {
	mkdir plain
	cp "$BANK" plain/bank.py
	cd plain
	run -1 --separate-stderr ploom-explore -q bank.py:scenario
	trace="$(jq_output -r .trace)"
	[ "$(jq -r .source.root "$trace")" = folder ]
	[ "$(jq -r .source.commit "$trace")" = null ]
	[ "$(jq -r .scenario.relpath "$trace")" = bank.py ]
	cd "$BATS_TEST_TMPDIR"
	cp -r plain copy
	rm -r plain
	cd copy
	run -1 --separate-stderr ploom-replay "$trace"
	[ "$stderr" = "ploom-replay: reproduced: $OVERDRAWN" ]
	[ "$(jq_output -r .scenario.file)" = "$(pwd -P)/bank.py" ]
}

# proj/: pyproject.toml, the library mylib/ (a racy account with plain
# attributes) and its scenario in tests/, in no repository
bare_project() {
	export GIT_CEILING_DIRECTORIES="$BATS_TEST_TMPDIR"
	mkdir -p proj/mylib proj/tests
	printf '[project]\nname = "proj"\n' > proj/pyproject.toml
	: > proj/mylib/__init__.py
	cat > proj/mylib/account.py <<-'PY'
		class Account:
		    def __init__(self, balance):
		        self.balance = balance

		    def withdraw(self, amount):
		        if self.balance >= amount:
		            self.balance -= amount
	PY
	cat > proj/tests/scen.py <<-'PY'
		import threading

		from mylib.account import Account


		def scenario():
		    account = Account(100)
		    threads = [threading.Thread(target=account.withdraw, args=(80,)) for _ in range(2)]
		    for t in threads:
		        t.start()
		    for t in threads:
		        t.join()
		    assert account.balance >= 0, f"overdrawn: {account.balance}"
	PY
	cd proj || return 1
	[ "$(git rev-parse --is-inside-work-tree 2>/dev/null || echo none)" = none ]
}

@test "a trace recorded in a project outside a repository replays from its root and from below it" {
	bare_project
	PYTHONPATH="$PWD" run -1 --separate-stderr ploom-explore -q tests/scen.py:scenario
	trace="$PWD/$(jq_output -r .minimized_trace)"
	[ "$(jq -r .source.root "$trace")" = project ]
	[ "$(jq -r .scenario.relpath "$trace")" = tests/scen.py ]
	[ "$(jq -c .scenario.import_paths "$trace")" = '["."]' ]
	[ "$(jq -c '[.fingerprints[].relpath]' "$trace")" = '["tests/scen.py","mylib/__init__.py","mylib/account.py"]' ]
	want="ploom-replay: reproduced: builtins.AssertionError: overdrawn: -60"
	run -1 --separate-stderr ploom-replay "$trace"
	[ "$stderr" = "$want" ]
	# tests/ holds the scenario, not mylib: the root is still the project's
	cd tests
	run -1 --separate-stderr ploom-replay "$trace"
	[ "$stderr" = "$want" ]
	run -0 ploom-show "$trace"
	[[ "$output" == *"source       tests/scen.py (blob "*") in its project"* ]]
	[[ "$output" == *"replay runs  scenario in $(cd .. && pwd -P)/tests/scen.py, only while"* ]]
	# a copy of the project replays; a folder without it runs nothing
	cd "$BATS_TEST_TMPDIR"
	cp "$trace" trace.json
	mv proj copy
	cd copy/mylib
	run -1 --separate-stderr ploom-replay ../../trace.json
	[ "$stderr" = "$want" ]
	cd "$BATS_TEST_TMPDIR"
	run -2 --separate-stderr ploom-replay trace.json
	[ "$stderr" = "ploom-replay: the trace's scenario 'tests/scen.py' is in no folder at or above the current directory '$(pwd -P)/': replay from inside a copy of its project" ]
}

@test "a project trace whose relative path leaves its root is refused" {
	bare_project
	PYTHONPATH="$PWD" run -1 --separate-stderr ploom-explore -q --no-minimize tests/scen.py:scenario
	trace="$(jq_output -r .trace)"
	for rel in ../scen.py tests/../../scen.py "$PWD/tests/scen.py"; do
		jq --arg r "$rel" '.scenario.relpath = $r' "$trace" > forged.json
		run -2 --separate-stderr ploom-replay forged.json
		[ "$stderr" = "ploom-replay: cannot read trace 'forged.json': field 'scenario.relpath' is not a relative path inside its root" ]
		jq --arg r "$rel" '.fingerprints[2].relpath = $r' "$trace" > forged.json
		run -2 --separate-stderr ploom-replay forged.json
		[ "$stderr" = "ploom-replay: cannot read trace 'forged.json': field 'fingerprints[2].relpath' is not a relative path inside its root" ]
		jq --arg r "$rel" '.scenario.import_paths = [$r]' "$trace" > forged.json
		run -2 --separate-stderr ploom-replay forged.json
		[ "$stderr" = "ploom-replay: cannot read trace 'forged.json': field 'scenario.import_paths[0]' is not a folder inside its root" ]
	done
}
