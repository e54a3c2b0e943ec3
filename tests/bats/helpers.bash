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
	orig="$(echo "$output" | jq -r .trace)"
	min="$(echo "$output" | jq -r .minimized_trace)"
	[ -f "$orig" ]
	[ -f "$min" ]
}
