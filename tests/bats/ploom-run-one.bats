#!/usr/bin/env bats
# ploom-run-one: one schedule, its trace on stdout, the exit status of
# its outcome.  Needs ploom-run-one, ploom-explore and the worker's
# python3 on PATH (.venv/bin).

# $output, $stderr and $status are set by bats' run, ROOT, SCN and BANK by
# helpers.bash
# shellcheck disable=SC2154

bats_require_minimum_version 1.5.0

load helpers

@test "the default schedule of the unlocked bank passes" {
	run -0 --separate-stderr ploom-run-one "$BANK:scenario"
	echo "$output" > trace.json
	[ "$(jq -r .format trace.json)" = ploom-trace ]
	[ "$(jq .version trace.json)" -eq 2 ]
	[ "$(jq -r .outcome.kind trace.json)" = pass ]
	[ "$(jq -r .outcome.summary trace.json)" = pass ]
	[ "$(jq .preemptions trace.json)" -eq 0 ]
	[ "$(jq -r .scenario.qualname trace.json)" = scenario ]
	[ "$(jq -r .scenario.target trace.json)" = "$BANK:scenario" ]
	[ "$(jq -r .python.implementation trace.json)" = cpython ]
	[ "$(jq -r '.hash_seed | type' trace.json)" = string ]
	[ "$(jq .config.max_preemptions trace.json)" = null ]
	[ "$(jq -r .config.reduction trace.json)" = none ]
	[ "$(jq -r '.steps[0].op' trace.json)" = start ]
	[ "$(jq '.steps[0].index' trace.json)" -eq 0 ]
	[ "$(jq '[.steps[] | select(.enabled | length > 1)] | length' trace.json)" -eq "$(jq '.choices | length' trace.json)" ]
	[ "$(jq -r '.fingerprints[0].blob' trace.json)" = "$(git hash-object "$BANK")" ]
	[ "$(jq -r '.fingerprints[0].path' trace.json)" = "$(jq -r .scenario.file trace.json)" ]
	[ "$(jq .id trace.json)" = null ]
	[ ! -e .ploom ]
}

@test "the choices of a failing trace reproduce the failure" {
	run -1 --separate-stderr ploom-explore -q "$BANK:scenario"
	trace="$(jq_output -r .trace)"
	mapfile -t choices < <(jq '.choices[]' "$trace")
	run -1 --separate-stderr ploom-run-one "$BANK:scenario" "${choices[@]}"
	echo "$output" > again.json
	[ "$(jq -r .outcome.summary again.json)" = "builtins.AssertionError: the account is overdrawn" ]
	[ "$(jq -c .choices again.json)" = "$(jq -c .choices "$trace")" ]
	[ "$(jq -c .steps again.json)" = "$(jq -c .steps "$trace")" ]
	[ "$(jq .preemptions again.json)" -eq "$(jq .preemptions "$trace")" ]
	[ "$(jq -r .id again.json)" = "$(jq -r .id "$trace")" ]
	[ "$(jq -c .fingerprints again.json)" = "$(jq -c .fingerprints "$trace")" ]
}

@test "a choice that is not enabled is a divergence" {
	run -4 --separate-stderr ploom-run-one "$BANK:scenario" 9
	[ "$(jq_output -r .outcome.kind)" = divergence ]
}

@test "a CHOICE is a task id up to the most a run command carries" {
	run -4 --separate-stderr ploom-run-one "$BANK:scenario" 1000000
	[ "$(jq_output -r .outcome.kind)" = divergence ]
	run -2 --separate-stderr ploom-run-one "$BANK:scenario" 1000001
	[[ "$stderr" == "ploom-run-one: invalid CHOICE '1000001'"* ]]
}

@test "the worker answers a command it cannot take with an error record, and goes on" {
	# a choice beyond the protocol's bound, and no command at all; the run
	# after them runs whole
	printf 'run 100 1000 1 2000000 0 default\nfly\nrun 100 1000 0 0 default\nquit\n' >cmds.txt
	# fd 3 is bats' own: the worker's goes to a file in a shell of its own
	# shellcheck disable=SC2016
	run -0 --separate-stderr bash -c 'python3 -m ploom._worker "$1" <cmds.txt 3>events.txt' _ "$SCN:bank_locked"
	[ -z "$stderr" ]
	[[ "$(sed -n 1p events.txt)" == "hello "* ]]
	[ "$(sed -n 2p events.txt)" = "error command =bad%20run%20command" ]
	[ "$(sed -n 3p events.txt)" = "error command =unknown%20command%20'fly'" ]
	grep -q '^outcome pass$' events.txt
	[[ "$(tail -n 1 events.txt)" == "done "* ]]
}

@test "a deadlock exits 1" {
	run -1 --separate-stderr ploom-explore -q "$SCN:abba"
	trace="$(jq_output -r .trace)"
	mapfile -t choices < <(jq '.choices[]' "$trace")
	run -1 --separate-stderr ploom-run-one "$SCN:abba" "${choices[@]}"
	[ "$(jq_output -r .outcome.kind)" = deadlock ]
}

@test "the step limit exits 3" {
	run -3 --separate-stderr ploom-run-one -s 20 "$SCN:spins_forever"
	echo "$output" > trace.json
	[ "$(jq -r .outcome.kind trace.json)" = step-limit ]
	[ "$(jq '.steps | length' trace.json)" -eq 20 ]
	[ "$(jq .config.max_steps trace.json)" -eq 20 ]
}

@test "a timeout, a crash and an exit are failures" {
	run -1 --separate-stderr ploom-run-one --schedule-timeout 0.5 "$SCN:blocks_outside"
	[ "$(jq_output -r .outcome.kind)" = timeout ]
	run -1 --separate-stderr ploom-run-one "$SCN:crashes"
	[ "$(jq_output -r .outcome.kind)" = crash ]
	run -1 --separate-stderr ploom-run-one "$SCN:calls_os_exit"
	[ "$(jq_output .outcome.status)" -eq 3 ]
	run -1 pgrep -f "$SCN:blocks_outside"
}

@test "a 100 MB exception message is a failure whose message and traceback are cut at 64 KiB" {
	# --schedule-timeout: see the same test of ploom-explore.bats
	run -1 --separate-stderr ploom-run-one --schedule-timeout 600 "$SCN:raises_a_huge_message"
	echo "$output" > trace.json
	[ "$(jq -r .outcome.kind trace.json)" = failure ]
	jq -r .outcome.exception.message trace.json > message
	jq -r .outcome.traceback trace.json > traceback
	[ "$(head -c 5 message)" = xxxxx ]
	[ "$(wc -c < message)" -eq $((65536 + 26)) ]
	[[ "$(tail -c 40 message)" == *"x... [cut: 99934464 bytes]" ]]
	[[ "$(head -c 200 traceback)" == "Traceback (most recent call last):"* ]]
	[[ "$(tail -c 40 traceback)" == *"x... [cut: "*" bytes]" ]]
	[ "$(wc -c < trace.json)" -lt 300000 ]
}

@test "--hash-seed reaches the trace" {
	run -0 --separate-stderr ploom-run-one --hash-seed 42 "$SCN:bank_locked"
	[ "$(jq_output -r .hash_seed)" = 42 ]
}

@test "--patch is checked, then reaches the worker, which patches only imported modules" {
	run -0 --separate-stderr ploom-run-one "$BANK:scenario"
	[ "$(jq_output -c .config.patch)" = "[]" ]
	run -2 --separate-stderr ploom-run-one --patch=9lives "$BANK:scenario"
	[ "${stderr%%$'\n'*}" = "ploom-run-one: invalid --patch '9lives': not a module name (Python identifiers joined by '.')" ]
	run -2 --separate-stderr ploom-run-one --patch=colorsys "$BANK:scenario"
	[ -z "$output" ]
	[[ "$stderr" == "ploom-run-one: cannot load scenario '$BANK:scenario': ImportError: cannot patch 'colorsys': the scenario's module has not imported it"* ]]
}

@test "--instrument is checked, and only the modules it names reach the worker" {
	run -2 --separate-stderr ploom-run-one --instrument=9lives "$BANK:scenario"
	[ -z "$output" ]
	[ "${stderr%%$'\n'*}" = "ploom-run-one: invalid --instrument '9lives': not a module name (Python identifiers joined by '.')" ]
	logging_python
	run -0 --separate-stderr ploom-run-one --python="$PY" "$SCN:bank_locked"
	[ "$(jq_output -c '[.config.instrument, .config.instrument_scenario, .config.patch_project]')" = '[[],true,true]' ]
	# one schedule takes the code under test as a search does, unless told
	run ploom-run-one --python="$PY" --patch=pa --instrument=lib --instrument=- "$SCN:bank_locked"
	run ploom-run-one --python="$PY" --patch=- --instrument=- "$SCN:bank_locked"
	[ "$(sed -n 1p argv.log)" = "-P -m ploom._worker --patch-project --instrument-scenario $SCN:bank_locked" ]
	[ "$(sed -n 2p argv.log)" = "-P -m ploom._worker --patch=pa --instrument=lib --patch-project $SCN:bank_locked" ]
	[ "$(sed -n 3p argv.log)" = "-P -m ploom._worker $SCN:bank_locked" ]
}

@test "an instrumented schedule records what it instrumented" {
	needs_rewriter
	echo 'VALUE = 1' > lib.py
	printf 'import lib\n\n\ndef scenario():\n    assert lib.VALUE == 1\n' > scn.py
	run -0 --separate-stderr ploom-run-one --instrument=lib scn.py:scenario
	[ "$(jq_output -c '[.config.instrument, .config.instrument_scenario]')" = '[["lib"],true]' ]
	run -0 --separate-stderr ploom-run-one --instrument=- --instrument=lib scn.py:scenario
	[ "$(jq_output -c '[.config.instrument, .config.instrument_scenario]')" = '[["lib"],false]' ]
}

@test "an unknown module is a usage error naming the target" {
	run -2 --separate-stderr ploom-run-one nosuch_module_for_ploom:f
	[ -z "$output" ]
	[[ "$stderr" == "ploom-run-one: cannot load scenario 'nosuch_module_for_ploom:f': "* ]]
}

@test "usage errors exit 2 with a message" {
	run -2 --separate-stderr ploom-run-one
	[[ "$stderr" == "ploom-run-one: missing TARGET"* ]]
	run -2 --separate-stderr ploom-run-one "$BANK:scenario" one
	[[ "$stderr" == "ploom-run-one: invalid CHOICE 'one'"* ]]
	run -2 --separate-stderr ploom-run-one --max-steps=x "$BANK:scenario"
	[[ "$stderr" == "ploom-run-one: invalid --max-steps 'x'"* ]]
	run -2 --separate-stderr ploom-run-one --bogus "$BANK:scenario"
	[[ "$stderr" == "ploom-run-one: unknown option '--bogus'"* ]]
}

@test "--help and --version exit 0 on stdout" {
	run -0 ploom-run-one --help
	[[ "$output" == "usage: ploom-run-one "* ]]
	run -0 ploom-run-one -V
	[[ "$output" == "ploom-run-one (ploom) "* ]]
}

@test "a run that meets plain state two tasks share runs again with those sites as points, which its trace keeps" {
	cat > shared.py <<'PY'
import ploom


def scenario():
    box = {"n": 0}

    def inc():
        box["n"] += 1

    ts = [ploom.Thread(target=inc) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert box["n"] == 2
PY
	run -0 --separate-stderr ploom-run-one shared.py:scenario
	echo "$output" > trace.json
	[ "$(jq -r .outcome.kind trace.json)" = pass ]
	[ "$(jq '.config.plain_points | length' trace.json)" -ge 1 ]
	run -0 --separate-stderr ploom-replay trace.json
}
