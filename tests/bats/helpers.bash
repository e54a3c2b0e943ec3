# helpers.bash - what the ploom-*.bats files share (`load helpers`).
# shellcheck shell=bash

# The variables are for the .bats files that load this one.
# shellcheck disable=SC2034

# setup: each test runs in a directory of its own, with ROOT the
# repository, SCN the Python tests' scenarios (tests/python/scenarios.py)
# and BANK the README's bank example.
setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
	SCN="$ROOT/tests/python/scenarios.py"
	BANK="$ROOT/examples/bank_account.py"
	cd "$BATS_TEST_TMPDIR" || exit 1
}

# jq_output [JQ ARGUMENT]...: jq on bats' $output, the standard output of
# the last `run` (statistics, a trace): "$(jq_output -r .trace)".  Its
# status is jq's.  A here-string hands $output over as it is, where echo
# would take a leading "-n" or "-e" for an option.
# shellcheck disable=SC2154
jq_output() {
	jq "$@" <<<"$output"
}

# scenarios_here: a copy of the Python tests' scenarios in the test's
# directory, as ./scenarios.py: a replay runs only a file of the folder or
# repository it starts in, so a trace to replay from here is made from it
scenarios_here() {
	cp "$SCN" scenarios.py
}

# replay_in_root [OPTION]... TRACE: ploom-replay started in the repository,
# where a trace of $BANK or $SCN finds its file (a replay runs only a file
# of the repository or folder it starts in); TRACE is relative to the
# test's directory or absolute
replay_in_root() {
	local args=("$@")
	[[ "${args[-1]}" == /* ]] || args[-1]="$PWD/${args[-1]}"
	(cd "$ROOT" && ploom-replay "${args[@]}")
}

# traces: explores a copy of the unlocked bank in the test's directory;
# sets $orig and $min ($output is bats' run's)
# shellcheck disable=SC2154
traces() {
	cp "$BANK" bank.py
	run -1 --separate-stderr ploom-explore -q bank.py:scenario
	orig="$(jq_output -r .trace)"
	min="$(jq_output -r .minimized_trace)"
	[ -f "$orig" ]
	[ -f "$min" ]
}

# worker_python: the interpreter the utilities run the worker on by
# default ($PLOOM_PYTHON, else the python3 beside ploom-explore)
worker_python() {
	local beside
	beside="$(dirname "$(command -v ploom-explore)")/python3"
	if [[ -n "${PLOOM_PYTHON:-}" ]]; then
		echo "$PLOOM_PYTHON"
	elif [[ -x "$beside" ]]; then
		echo "$beside"
	else
		echo python3
	fi
}

# logging_python: sets PY to ./py/python3, a worker's interpreter that
# appends its arguments (a worker's command line, one a line) to
# ./argv.log, then runs as worker_python
logging_python() {
	mkdir -p py
	printf '#!/bin/sh\nprintf "%%s\\n" "$*" >> "%s/argv.log"\nexec "%s" "$@"\n' \
		"$PWD" "$(worker_python)" >py/python3
	chmod +x py/python3
	PY="$PWD/py/python3"
}

# needs_rewriter: skips the test, saying why, when the worker has no
# ploom._instrument, which instruments plain state: a worker asked to
# instrument anything then refuses to load the scenario
needs_rewriter() {
	"$(worker_python)" -c 'import ploom._instrument' 2>/dev/null ||
		skip "ploom._instrument (the plain-state rewriter) is not in this tree yet: no worker can instrument a module"
}
