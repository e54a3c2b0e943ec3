#!/usr/bin/env bats
# Every utility, with and without each option the utilities share, on each
# kind of bad input: exit 2 and a message, and the option changes neither.

load helpers

UTILITIES=(ploom-explore ploom-run-one ploom-minimize ploom-replay ploom-show ploom-merge)

# common_options: one valid use of each shared option (cmd/cli.h's
# CLI_OPTION_*), one a line, its words separated by spaces
common_options() {
	cat <<EOF
--python=$(worker_python)
--hash-seed=7
-s 100
--max-steps=100
--schedule-timeout=5
-q
--quiet
--patch=json
--instrument=json
--instrument=-
EOF
}

# brief OUTPUT: the first line of a utility's stderr and its exit status
brief() {
	echo "${1%%$'\n'*} ... ${1##*$'\n'}"
}

# takes PROG OPTION: whether PROG's usage lists OPTION's name
takes() {
	local name="${2%%=*}"
	name="${name%% *}"
	"$1" --help | grep -qE -- "(^|[^a-z-])${name}([^a-z-]|$)"
}

# bad_inputs PROG: the operands of each kind of bad input PROG reads, one
# case a line: a file that is not there, a broken one, and two operands
# where PROG takes one.  ploom-explore and ploom-run-one read a scenario
# (TARGET), the others a trace or statistics (JSON); ploom-run-one's
# further operands are CHOICEs, and ploom-merge takes any number of
# STATS but standard input only once.
bad_inputs() {
	case "$1" in
	ploom-explore)
		printf '%s\n' missing.py:scenario broken.py:scenario "broken.py:scenario broken.py:scenario" ;;
	ploom-run-one)
		printf '%s\n' missing.py:scenario broken.py:scenario "broken.py:scenario broken.py:scenario" ;;
	ploom-merge)
		printf '%s\n' missing.json broken.json "- -" ;;
	*)
		printf '%s\n' missing.json broken.json "broken.json broken.json" ;;
	esac
}

@test "bad input exits 2 with a message from every utility, with and without each shared option" {
	printf '{"version": 1, "unfinished' >broken.json
	printf 'def scenario(:\n' >broken.py
	local prog input opt base checked=0 failures=()
	for prog in "${UTILITIES[@]}"; do
		while IFS= read -r input; do
			# shellcheck disable=SC2086 # the operands are words
			base="$("$prog" $input 2>&1 </dev/null >/dev/null; echo "exit $?")"
			if [[ "$base" != *$'\n'"exit 2" || "$base" != "$prog: "* ]]; then
				failures+=("$prog $input: $(brief "$base")")
				continue
			fi
			while IFS= read -r opt; do
				takes "$prog" "$opt" || continue
				# shellcheck disable=SC2086
				out="$("$prog" $opt $input 2>&1 </dev/null >/dev/null; echo "exit $?")"
				# the same message and exit status as without the option
				[[ "$out" == "$base" ]] ||
					failures+=("$prog $opt $input: $(brief "$out") (without: $(brief "$base"))")
				checked=$((checked + 1))
			done < <(common_options)
		done < <(bad_inputs "$prog")
	done
	printf '%s\n' "${failures[@]}"
	[ "${#failures[@]}" -eq 0 ]
	# each utility that takes an option was run with it: the matrix is not
	# empty by a mistake in takes()
	echo "checked: $checked"
	[ "$checked" -ge 60 ]
}
