#!/usr/bin/env bats
# make example: the first command of the README finds the bank's bug and
# ends with the next step, the ploom-show command for the minimized trace.

# $output and $lines are set by bats' run
# shellcheck disable=SC2154

bats_require_minimum_version 1.5.0

@test "make example ends with the ploom-show command for the minimized trace, which works" {
	ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
	run -0 --separate-stderr make -s -C "$ROOT" example
	[[ "${lines[0]}" == "make example: ploom found the bug in examples/bank_account.py after "* ]]
	last="${lines[-1]}"
	[[ "$last" =~ ^"make example: read it, step by step: .venv/bin/ploom-show .ploom/"[0-9a-f]{16}-minimized\.json$ ]]
	# the command as printed, from the folder make ran in
	cmd="${last#make example: read it, step by step: }"
	cd "$ROOT"
	# shellcheck disable=SC2086 # the words of the command
	run -0 --separate-stderr $cmd
	[[ "$output" == *"preemptions  1 (minimized from 2)"* ]]
	[[ "$output" == *"outcome      builtins.AssertionError: the account is overdrawn"* ]]
}
