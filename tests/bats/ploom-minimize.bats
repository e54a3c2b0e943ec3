#!/usr/bin/env bats
# ploom-minimize: the same failure with fewer preemptions, from a file or
# stdin, to stdout or -o; refusals and usage errors.  Needs the utilities
# and the worker's python3 on PATH (.venv/bin).

# $output, $stderr and $status are set by bats' run, ROOT, SCN and BANK by
# helpers.bash
# shellcheck disable=SC2154

bats_require_minimum_version 1.5.0

load helpers

# original: explores a copy of the unlocked bank without minimizing; $orig
# is the trace
original() {
	cp "$BANK" bank.py
	run -1 --separate-stderr ploom-explore -q --no-minimize bank.py:scenario
	orig="$(jq_output -r .trace)"
	[ -f "$orig" ]
}

@test "the bank's trace minimizes to fewer preemptions and the same failure" {
	original
	run -0 --separate-stderr ploom-minimize "$orig"
	echo "$output" > min.json
	[ "$(jq .preemptions "$orig")" -eq 2 ]
	[ "$(jq .preemptions min.json)" -eq 1 ]
	[ "$(jq .preemptions min.json)" -le "$(jq .preemptions "$orig")" ]
	[ "$(jq -r .outcome.kind min.json)" = failure ]
	[ "$(jq -r .outcome.exception.type min.json)" = builtins.AssertionError ]
	[ "$(jq -r .outcome.exception.message min.json)" = "the account is overdrawn" ]
	[ "$(jq -r .outcome.exception.message min.json)" = "$(jq -r .outcome.exception.message "$orig")" ]
	[ "$(jq .minimized_from min.json)" -eq 2 ]
	[ "$(jq -r .id min.json)" = "$(jq -r .id "$orig")" ]
	[ "$(jq -c .fingerprints min.json)" = "$(jq -c .fingerprints "$orig")" ]
	[ "$(jq -c .scenario min.json)" = "$(jq -c .scenario "$orig")" ]
	[ "$(jq -r .hash_seed min.json)" = "$(jq -r .hash_seed "$orig")" ]
	[ "$(jq '[.steps[] | select(.enabled | length > 1)] | length' min.json)" -eq "$(jq '.choices | length' min.json)" ]
	[[ "$stderr" =~ ^"ploom-minimize: 2 -> 1 preemptions after "[0-9]+" schedules"$ ]]
}

@test "the minimized trace fails the same way when its choices run again" {
	original
	ploom-minimize -q "$orig" > min.json
	mapfile -t choices < <(jq '.choices[]' min.json)
	run -1 --separate-stderr ploom-run-one bank.py:scenario "${choices[@]}"
	echo "$output" > again.json
	[ "$(jq -r .outcome.summary again.json)" = "builtins.AssertionError: the account is overdrawn" ]
	[ "$(jq .preemptions again.json)" -eq 1 ]
	[ "$(jq -c .steps again.json)" = "$(jq -c .steps min.json)" ]
}

@test "stdin, - and -o work" {
	original
	run -0 --separate-stderr ploom-minimize < "$orig"
	echo "$output" > from-stdin.json
	[ "$(jq .preemptions from-stdin.json)" -eq 1 ]
	run -0 --separate-stderr ploom-minimize - < "$orig"
	[ "$output" = "$(cat from-stdin.json)" ]
	run -0 --separate-stderr ploom-minimize -q -o out.json "$orig"
	[ -z "$output" ]
	[ -z "$stderr" ]
	[ "$(cat out.json)" = "$(cat from-stdin.json)" ]
	[ ! -e out.json.tmp ]
}

@test "a trace with the fewest preemptions is written unchanged" {
	original
	ploom-minimize -q "$orig" > min.json
	run -0 --separate-stderr ploom-minimize min.json
	echo "$output" > again.json
	[ "$(jq -c .choices again.json)" = "$(jq -c .choices min.json)" ]
	[ "$(jq .minimized_from again.json)" -eq 2 ]
	[[ "$stderr" =~ ^"ploom-minimize: 1 -> 1 preemptions after "[0-9]+" schedules"$ ]]
}

@test "--schedule-timeout lowers the trace's schedule timeout for every schedule run" {
	cat > hang.py <<-'EOF'
		import select

		import ploom


		def scenario():
		    # the worker fails only when it runs before main's write (one
		    # preemption); every schedule where main goes on waits 60 s
		    # (in select: time.sleep is ploom's virtual clock, which never waits)
		    flag = ploom.SharedCell(0)

		    def worker():
		        assert flag.read() == 1, "ran early"

		    t = ploom.Thread(target=worker)
		    t.start()
		    flag.write(1)
		    t.join()
		    select.select([], [], [], 60)
	EOF
	run -1 --separate-stderr ploom-run-one hang.py:scenario 1
	echo "$output" > fail.json
	[ "$(jq .preemptions fail.json)" -eq 1 ]
	# a trace may ask for 1e9 s (31 years) per schedule: the schedule
	# without a preemption would sleep its 60 s
	jq '.config.schedule_timeout_s = 1e9' fail.json > long.json
	run -0 --separate-stderr timeout 30 ploom-minimize --schedule-timeout=0.5 long.json
	# the recorded schedule once, then the one without a preemption
	[ "$stderr" = "ploom-minimize: 1 -> 1 preemptions after 2 schedules" ]
	[ "$(jq_output .minimized_from)" -eq 1 ]
	run -2 --separate-stderr ploom-minimize --schedule-timeout=1e10 long.json
	[[ "$stderr" == "ploom-minimize: invalid --schedule-timeout '1e10': not a number of seconds from 0 to 1000000000"* ]]
}

@test "a deadlock minimizes to a deadlock" {
	scenarios_here
	run -1 --separate-stderr ploom-explore -q --no-minimize scenarios.py:abba
	deadlock="$(jq_output -r .trace)"
	run -0 --separate-stderr ploom-minimize "$deadlock"
	echo "$output" > min.json
	[ "$(jq -r .outcome.kind min.json)" = deadlock ]
	[ "$(jq .preemptions min.json)" -le "$(jq .preemptions "$deadlock")" ]
	[ "$(jq .preemptions min.json)" -eq 1 ]
	[ "$(jq -r .id min.json)" = "$(jq -r .id "$deadlock")" ]
}

@test "when the budget runs out the original is written and stderr says so" {
	original
	run -0 --separate-stderr ploom-minimize -n 2 "$orig"
	echo "$output" > out.json
	[ "$(jq -c .choices out.json)" = "$(jq -c .choices "$orig")" ]
	[ "$(jq .minimized_from out.json)" = null ]
	[ "$stderr" = "ploom-minimize: the minimizer stopped early after 2 schedules: its budget of schedules ran out; the trace written has the fewest preemptions found (2 of 2), not proven the fewest" ]
	# one schedule is "1 schedule"
	run -0 --separate-stderr ploom-minimize -n 1 "$orig"
	[[ "$stderr" == "ploom-minimize: the minimizer stopped early after 1 schedule: "* ]]
}

@test "a tiny --minimize-seconds stops early with a replayable failing trace and says so" {
	original
	run -0 --separate-stderr ploom-minimize --minimize-seconds=0.001 "$orig"
	echo "$output" > out.json
	[[ "$stderr" =~ ^"ploom-minimize: the minimizer stopped early after "[0-9]+" schedules"?": its time ran out (--minimize-seconds); the trace written has the fewest preemptions found (2 of 2), not proven the fewest"$ ]]
	[ "$(jq -c .choices out.json)" = "$(jq -c .choices "$orig")" ]
	[ "$(jq .minimized_from out.json)" = null ]
	run -1 --separate-stderr ploom-replay out.json
	[ "$stderr" = "ploom-replay: reproduced: builtins.AssertionError: the account is overdrawn" ]
	# 0 is no limit: the search ends
	run -0 --separate-stderr ploom-minimize --minimize-seconds=0 "$orig"
	[ "$(jq_output .preemptions)" -eq 1 ]
	run -2 --separate-stderr ploom-minimize --minimize-seconds=-1 "$orig"
	[[ "$stderr" == "ploom-minimize: invalid --minimize-seconds '-1': "* ]]
}

@test "a passing trace is refused" {
	ploom-run-one "$BANK:scenario" > pass.json
	run -2 --separate-stderr ploom-minimize pass.json
	[ -z "$output" ]
	[ "$stderr" = "ploom-minimize: trace 'pass.json' does not record a failure" ]
}

@test "a recorded failure that does not reproduce is a divergence, and no trace is written" {
	# a passing schedule's trace that says it failed: the source and
	# its fingerprint are unchanged, only the outcome is not what it is
	cp "$BANK" bank.py
	ploom-run-one bank.py:scenario > pass.json
	jq '.outcome = {"kind": "failure", "summary": "builtins.AssertionError: the account is overdrawn",
		"task": 0, "exception": {"type": "builtins.AssertionError", "message": "the account is overdrawn"},
		"traceback": ""}' pass.json > forged.json
	run -4 --separate-stderr ploom-minimize forged.json
	[ -z "$output" ]
	[ "$stderr" = "ploom-minimize: the recorded failure did not reproduce: recorded builtins.AssertionError: the account is overdrawn, got pass" ]
	run -4 --separate-stderr ploom-minimize -q -o min.json forged.json
	[ ! -e min.json ]
	[ ! -e min.json.tmp ]
}

@test "a malformed or unknown-version trace is refused, naming the file" {
	echo '{"format": "ploom-trace",' > bad.json
	run -2 --separate-stderr ploom-minimize bad.json
	[ -z "$output" ]
	[[ "$stderr" == "ploom-minimize: cannot read trace 'bad.json': not valid JSON (line "[0-9]")" ]]
	original
	jq '.version = 9' "$orig" > v9.json
	run -2 --separate-stderr ploom-minimize v9.json
	[ "$stderr" = "ploom-minimize: cannot read trace 'v9.json': unknown format version 9 (this ploom reads 1 to 2)" ]
	run -2 --separate-stderr ploom-minimize < v9.json
	[ "$stderr" = "ploom-minimize: cannot read trace '<stdin>': unknown format version 9 (this ploom reads 1 to 2)" ]
	jq 'del(.steps)' "$orig" > nosteps.json
	run -2 --separate-stderr ploom-minimize nosteps.json
	[ "$stderr" = "ploom-minimize: cannot read trace 'nosteps.json': missing field 'steps'" ]
	run -2 --separate-stderr ploom-minimize missing.json
	[ "$stderr" = "ploom-minimize: cannot read trace 'missing.json': No such file or directory" ]
}

@test "the trace's patch list reaches the worker, which patches only imported modules" {
	original
	jq '.config.patch = ["colorsys"]' "$orig" > patched.json
	run -2 --separate-stderr ploom-minimize patched.json
	[ -z "$output" ]
	[[ "$stderr" == "ploom-minimize: cannot load scenario "*"ImportError: cannot patch 'colorsys': the scenario's module has not imported it"* ]]
}

@test "the trace's instrument list reaches the worker, as recorded" {
	original
	logging_python
	jq '.config.instrument = ["lib"] | .config.instrument_scenario = true' "$orig" > instrumented.json
	run ploom-minimize --python="$PY" instrumented.json
	[[ "$(sed -n 1p argv.log)" == "-P -m ploom._worker --expect="*" --instrument=lib --patch-project --instrument-scenario bank.py:scenario" ]]
}

@test "a changed source is a divergence" {
	cp "$BANK" bank.py
	run -1 --separate-stderr ploom-explore -q --no-minimize bank.py:scenario
	copied="$(jq_output -r .trace)"
	before="$(git hash-object bank.py | cut -c1-7)"
	echo "# an edit" >> bank.py
	after="$(git hash-object bank.py | cut -c1-7)"
	run -4 --separate-stderr ploom-minimize "$copied"
	[ -z "$output" ]
	[ "$stderr" = "ploom-minimize: the scenario's source changed: '$(pwd -P)/bank.py' (recorded blob $before, now $after)" ]
}

@test "an output that cannot be written is an error, not silence" {
	original
	run -2 --separate-stderr bash -c "ploom-minimize -q '$orig' > /dev/full"
	[ "$stderr" = "ploom-minimize: cannot write the trace: No space left on device" ]
	run -2 --separate-stderr ploom-minimize -q -o nodir/min.json "$orig"
	[ "$stderr" = "ploom-minimize: cannot create 'nodir/min.json': No such file or directory" ]
}

@test "usage errors exit 2 with a message" {
	run -2 --separate-stderr ploom-minimize a.json b.json
	[[ "$stderr" == "ploom-minimize: too many arguments"* ]]
	run -2 --separate-stderr ploom-minimize -n 0 a.json
	[[ "$stderr" == "ploom-minimize: invalid --max-schedules '0'"* ]]
	run -2 --separate-stderr ploom-minimize --bogus
	[[ "$stderr" == "ploom-minimize: unknown option '--bogus'"* ]]
	run -2 --separate-stderr ploom-minimize -o
	[[ "$stderr" == "ploom-minimize: missing value for option '-o'"* ]]
}

@test "--help and --version exit 0 on stdout" {
	run -0 ploom-minimize --help
	[[ "$output" == "usage: ploom-minimize "* ]]
	run -0 ploom-minimize -V
	[[ "$output" == "ploom-minimize (ploom) "* ]]
}
