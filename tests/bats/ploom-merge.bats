#!/usr/bin/env bats
# ploom-merge: the merged statistics and exit status, and every way its
# input can be wrong.  Needs ploom-explore, ploom-merge and jq on PATH
# (.venv/bin).

# $output, $stderr and $status are set by bats' run, SCN by helpers.bash
# shellcheck disable=SC2154

bats_require_minimum_version 1.5.0

load helpers

# shard K N TARGET [OPTION...]: ploom-explore -k --shard=K/N into sK.json
shard() {
	local k=$1 n=$2 target=$3
	shift 3
	run --separate-stderr ploom-explore -q -k --no-minimize --shard="$k/$n" "$@" "$target"
	echo "$output" >"s$k.json"
	[ "$status" -eq 0 ] || [ "$status" -eq 1 ]
}

# edit IN OUT JQ: OUT is IN edited by the jq program JQ
edit() {
	jq "$3" "$1" >"$2"
}

@test "merged shards of a failing search: the sums, the first failure, the outcomes, exit 1" {
	run -1 --separate-stderr ploom-explore -q -k --no-minimize "$SCN:racy_counter2"
	echo "$output" >whole.json
	for k in 0 1 2; do shard "$k" 3 "$SCN:racy_counter2"; done
	run -1 --separate-stderr ploom-merge s2.json s0.json s1.json
	echo "$output" >merged.json
	[ -z "$stderr" ]
	[ "$(jq -r .result merged.json)" = failure ]
	[ "$(jq .schedules merged.json)" -eq 69 ]
	[ "$(jq .failing merged.json)" -eq 30 ]
	[ "$(jq .complete merged.json)" = true ]
	[ "$(jq .stopped_by merged.json)" = null ]
	[ "$(jq -r .target merged.json)" = "$SCN:racy_counter2" ]
	[ "$(jq .max_preemptions merged.json)" = null ]
	[ "$(jq -r .reduction merged.json)" = none ]
	[ "$(jq -r .hash_seed merged.json)" = 0 ]
	[ "$(jq .max_depth merged.json)" -eq "$(jq .max_depth whole.json)" ]
	[ "$(jq -c .failure merged.json)" = "$(jq -c .failure whole.json)" ]
	# the failure of the smallest unit, with that shard's trace
	first=$(jq -s 'map(.shard.failure_unit) | min' s0.json s1.json s2.json)
	[ "$(jq .shard.failure_unit merged.json)" -eq "$first" ]
	owner=$((first % 3))
	[ "$(jq -r .trace merged.json)" = "$(jq -r .trace "s$owner.json")" ]
	jq -cS '.outcomes | sort_by(.kind, .summary)' whole.json >want.json
	jq -cS '.outcomes | sort_by(.kind, .summary)' merged.json >got.json
	cmp want.json got.json
	[ "$(jq .outcomes_truncated merged.json)" = false ]
	[ "$(jq .shard.index merged.json)" = null ]
	[ "$(jq .shard.count merged.json)" -eq 3 ]
	[ "$(jq .shard.units merged.json)" -eq "$(jq .shard.units s0.json)" ]
	[ "$(jq .shard.owned merged.json)" -eq "$(jq .shard.units s0.json)" ]
	[ "$(jq .shard.probes merged.json)" -eq "$(jq -s 'map(.shard.probes) | add' s0.json s1.json s2.json)" ]
	[ "$(jq -c .shard.missing merged.json)" = "[]" ]
}

@test "merged shards of a passing search exit 0; one read from standard input" {
	for k in 0 1; do shard "$k" 2 "$SCN:bank_locked"; done
	run -0 --separate-stderr ploom-merge s0.json - <s1.json
	echo "$output" >merged.json
	[ "$(jq -r .result merged.json)" = pass ]
	[ "$(jq .schedules merged.json)" -eq 127 ]
	[ "$(jq .failure merged.json)" = null ]
	[ "$(jq .trace merged.json)" = null ]
	[ "$(jq .shard.failure_unit merged.json)" = null ]
}

@test "the minimizer's early stop goes with its trace into the merge" {
	for k in 0 1; do
		run --separate-stderr ploom-explore -q --minimize-seconds=0.001 --shard="$k/2" "$SCN:racy_counter2"
		echo "$output" >"s$k.json"
	done
	[ "$(jq -r .minimize_stopped_by s0.json)" = time ]
	run -1 --separate-stderr ploom-merge s0.json s1.json
	[ "$(jq_output -r .minimize_stopped_by)" = time ]
	[ "$(jq_output -r .minimized_trace)" = "$(jq -r .minimized_trace s0.json)" ]
	edit s0.json bad.json '.minimize_stopped_by = "bored"'
	run -2 --separate-stderr ploom-merge bad.json s1.json
	[ "$stderr" = "ploom-merge: cannot read statistics 'bad.json': field 'minimize_stopped_by' is not a known value" ]
}

@test "missing shards make the merge incomplete, listed, exit 3 (1 with a failure)" {
	for k in 0 1 2 3; do shard "$k" 4 "$SCN:bank_locked"; done
	run -3 --separate-stderr ploom-merge s3.json s1.json
	echo "$output" >merged.json
	[ "$(jq -r .result merged.json)" = incomplete ]
	[ "$(jq .complete merged.json)" = false ]
	[ "$(jq -r .stopped_by merged.json)" = missing-shards ]
	[ "$(jq -c .shard.missing merged.json)" = "[0,2]" ]
	[ "$(jq .schedules merged.json)" -eq "$(jq -s 'map(.schedules) | add' s1.json s3.json)" ]
	# stderr says which, not only the statistics
	[ "$stderr" = "ploom-merge: 2 of 4 shards missing: 0, 2; run ploom-explore --shard=K/4 for each and merge again" ]
	for k in 0 1; do shard "$k" 2 "$SCN:racy_counter2"; done
	run -1 --separate-stderr ploom-merge s1.json
	[ "$(jq_output -r .result)" = failure ]
	[ "$(jq_output -c .shard.missing)" = "[0]" ]
	[ "$stderr" = "ploom-merge: 1 of 2 shards missing: 0; run ploom-explore --shard=K/2 for each and merge again" ]
	# all there: nothing on stderr
	run -1 --separate-stderr ploom-merge s0.json s1.json
	[ -z "$stderr" ]
}

@test "many missing shards: the first 20 named, the rest counted" {
	shard 5 30 "$SCN:bank_locked"
	run -3 --separate-stderr ploom-merge s5.json
	[ "$(jq_output '.shard.missing | length')" -eq 29 ]
	[ "$stderr" = "ploom-merge: 29 of 30 shards missing: 0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 and 9 more (the statistics' shard.missing lists them all); run ploom-explore --shard=K/30 for each and merge again" ]
}

@test "an incomplete shard makes the merge incomplete, stopped as that shard was" {
	shard 0 2 "$SCN:bank_locked"
	run -3 --separate-stderr ploom-explore -q -k -n 5 --shard=1/2 "$SCN:bank_locked"
	echo "$output" >s1.json
	run -3 --separate-stderr ploom-merge s0.json s1.json
	[ "$(jq_output -r .stopped_by)" = max-schedules ]
	[ "$(jq_output .complete)" = false ]
	[ "$(jq_output -c .shard.missing)" = "[]" ]
	# the units of the complete shard, the whole search's
	[ "$(jq_output .shard.units)" -eq "$(jq .shard.units s0.json)" ]
}

@test "shards of another search, or a shard twice, are refused with exit 2" {
	for k in 0 1; do shard "$k" 2 "$SCN:racy_counter2"; done
	shard 2 3 "$SCN:racy_counter2"
	run -2 --separate-stderr ploom-merge s0.json s2.json
	[ -z "$output" ]
	[ "$stderr" = "ploom-merge: cannot merge 's2.json': it is a shard of 3, 's0.json' one of 2" ]
	run -2 --separate-stderr ploom-merge s0.json s1.json s0.json
	[ "$stderr" = "ploom-merge: cannot merge 's0.json': shard 0 of 2 again, as in 's0.json'" ]
	cp s1.json again.json
	run -2 --separate-stderr ploom-merge s1.json again.json
	[ "$stderr" = "ploom-merge: cannot merge 'again.json': shard 1 of 2 again, as in 's1.json'" ]
	mv s1.json keep.json
	shard 1 2 "$SCN:racy_counter2" -p 1
	run -2 --separate-stderr ploom-merge s0.json s1.json
	[ "$stderr" = "ploom-merge: cannot merge 's1.json': its max_preemptions is not that of 's0.json'" ]
	shard 1 2 "$SCN:racy_counter2" --hash-seed=7
	run -2 --separate-stderr ploom-merge s0.json s1.json
	[ "$stderr" = "ploom-merge: cannot merge 's1.json': its hash_seed is not that of 's0.json'" ]
	shard 1 2 "$SCN:racy_counter2" --shard-depth=2
	run -2 --separate-stderr ploom-merge s0.json s1.json
	[ "$stderr" = "ploom-merge: cannot merge 's1.json': its units are 2 branch points deep, those of 's0.json' 4" ]
	shard 1 2 "$SCN:abba"
	run -2 --separate-stderr ploom-merge s0.json s1.json
	[ "$stderr" = "ploom-merge: cannot merge 's1.json': its target is not that of 's0.json'" ]
	# a hand-made shard of another search order
	edit keep.json other.json '.search = "ipb"'
	run -2 --separate-stderr ploom-merge s0.json other.json
	[ "$stderr" = "ploom-merge: cannot merge 'other.json': its search is not that of 's0.json'" ]
	# or that instrumented other modules: another tree of schedules
	edit keep.json other.json '.instrument = ["lib"]'
	run -2 --separate-stderr ploom-merge s0.json other.json
	[ "$stderr" = "ploom-merge: cannot merge 'other.json': it instrumented other modules than 's0.json'" ]
	edit keep.json other.json '.instrument_scenario = false'
	run -2 --separate-stderr ploom-merge s0.json other.json
	[ "$stderr" = "ploom-merge: cannot merge 'other.json': it instrumented other modules than 's0.json'" ]
	# the same target, another scenario behind it: the walks disagree
	edit keep.json other.json '.shard.units += 1'
	run -2 --separate-stderr ploom-merge s0.json other.json
	[[ "$stderr" == "ploom-merge: cannot merge 'other.json': it found "*" units, 's0.json' "*": the scenario is not the same" ]]
	# statistics without a shard
	run -1 --separate-stderr ploom-explore -q -k "$SCN:racy_counter2"
	echo "$output" >whole.json
	run -2 --separate-stderr ploom-merge s0.json whole.json
	[ "$stderr" = "ploom-merge: cannot merge 'whole.json': not a shard's statistics (no field 'shard')" ]
}

@test "merged shards add up the schedules that reached the step limit, never a pass" {
	# -k: each shard runs its part whole, every schedule looping to the
	# limit; -p 0 keeps the tree to the two orders of the spinning threads
	for k in 0 1; do
		run -3 --separate-stderr ploom-explore -q -k -p 0 --no-minimize --shard="$k/2" -s 40 \
			"$SCN:spins_with_two_threads"
		echo "$output" >"s$k.json"
	done
	run -3 --separate-stderr ploom-merge s0.json s1.json
	echo "$output" >merged.json
	[ "$(jq .step_limited merged.json)" -eq $(($(jq .step_limited s0.json) + $(jq .step_limited s1.json))) ]
	[ "$(jq .step_limited merged.json)" -eq "$(jq .schedules merged.json)" ]
	[ "$(jq .schedules merged.json)" -eq 2 ]
	[ "$(jq -r .result merged.json)" = incomplete ]
	[ "$(jq -r .stopped_by merged.json)" = max-steps ]
}

@test "statistics that are not well formed are refused with the field, exit 2" {
	shard 0 2 "$SCN:racy_counter2"
	# case: JQ EDIT|the message after "cannot read statistics 'bad.json': "
	while IFS='|' read -r program want; do
		edit s0.json bad.json "$program"
		run -2 --separate-stderr ploom-merge bad.json
		[ -z "$output" ]
		if [ "$stderr" != "ploom-merge: cannot read statistics 'bad.json': $want" ]; then
			echo "$program: got $stderr" >&2
			return 1
		fi
	done <<-'CASES'
		del(.schedules)|missing field 'schedules'
		.schedules = "69"|field 'schedules' is not an integer
		.schedules = -1|field 'schedules' is out of range
		.schedules = 1.5|field 'schedules' is not an integer
		.failing = .schedules + 1|field 'failing' is more than schedules
		.step_limited = -1|field 'step_limited' is out of range
		.step_limited = .schedules|field 'step_limited' with failing is more than schedules
		.step_limited = 1|field 'complete' is true while schedules reached the step limit
		.complete = "yes"|field 'complete' is not a boolean
		.stopped_by = "tired"|field 'stopped_by' is not a known value
		.stopped_by = "time-limit"|field 'stopped_by' is set in a complete search
		.result = "great"|field 'result' is not a known value
		.result = "pass"|field 'result' does not say what the counts say
		.failure = null|field 'failure' is null while schedules failed
		.failure.kind = "pass"|field 'failure.kind' is not a kind of failure
		del(.failure.summary)|missing field 'failure.summary'
		.elapsed_s = -1|field 'elapsed_s' is not a number from 0
		.max_preemptions = "none"|field 'max_preemptions' is not an integer
		.search = "bfs"|field 'search' is not a known value
		.search = "pct"|missing field 'seed'
		del(.shard.count)|missing field 'shard.count'
		.shard.count = 0|field 'shard.count' is out of range
		.shard.index = 2|field 'shard.index' is not below shard.count
		.shard.index = null|field 'shard.index' is not an integer
		.shard.depth = 1001|field 'shard.depth' is out of range
		.shard.owned = .shard.units + 1|field 'shard.owned' is more than shard.units
		.shard.failure_unit = null|field 'shard.failure_unit' is null while there is a failure
		.shard.failure_unit = 1|field 'shard.failure_unit' is not a unit of this shard
		.shard = 7|field 'shard' is not an object
		.outcomes = {}|field 'outcomes' is not an array
		.outcomes[0].schedules = 0|field 'outcomes[0].schedules' is out of range
		.outcomes[1] = 3|field 'outcomes[1]' is not an object
		.outcomes[0].kind = "bliss"|field 'outcomes[0].kind' is not an outcome kind
		del(.outcomes_truncated)|missing field 'outcomes_truncated'
		[.]|not a JSON object
	CASES
	# keys twice: JSON leaves their meaning open
	sed 's/"failing":/"failing": 0, "failing":/' s0.json >bad.json
	run -2 --separate-stderr ploom-merge bad.json
	[ "$stderr" = "ploom-merge: cannot read statistics 'bad.json': duplicate key 'failing'" ]
	sed 's/"count":/"count": 2, "count":/' s0.json >bad.json
	run -2 --separate-stderr ploom-merge bad.json
	[ "$stderr" = "ploom-merge: cannot read statistics 'bad.json': duplicate key 'count' in field 'shard'" ]
	printf '{"result": ' >bad.json
	run -2 --separate-stderr ploom-merge bad.json
	[ "$stderr" = "ploom-merge: cannot read statistics 'bad.json': not valid JSON (line 1)" ]
	{ cat s0.json; echo '{}'; } >bad.json
	run -2 --separate-stderr ploom-merge bad.json
	[[ "$stderr" == "ploom-merge: cannot read statistics 'bad.json': unexpected data after the JSON"* ]]
	printf '{"a\0": 1}' >bad.json
	run -2 --separate-stderr ploom-merge bad.json
	[ "$stderr" = "ploom-merge: cannot read statistics 'bad.json': not JSON (it contains a NUL byte)" ]
	run -2 --separate-stderr ploom-merge nosuch.json
	[ "$stderr" = "ploom-merge: cannot read statistics 'nosuch.json': No such file or directory" ]
	run -2 --separate-stderr ploom-merge - <bad.json
	[[ "$stderr" == "ploom-merge: cannot read statistics '<stdin>': "* ]]
	# unknown fields are ignored, as in traces
	edit s0.json extra.json '.new_field = [1, 2]'
	run -1 --separate-stderr ploom-merge extra.json
}

@test "counts that add up beyond what a count holds are refused with the field, exit 2" {
	for k in 0 1; do shard "$k" 2 "$SCN:bank_locked"; done
	# each fits alone; the sum would wrap to a negative count
	edit s0.json big0.json '.schedules = 9e18 | .outcomes[0].schedules = 9e18'
	edit s1.json big1.json '.schedules = 9e18 | .outcomes[0].schedules = 9e18'
	run -2 --separate-stderr ploom-merge big0.json big1.json
	[ -z "$output" ]
	[ "$stderr" = "ploom-merge: cannot merge the statistics: field 'schedules' adds up to more than 9223372036854775807 over the shards" ]
	edit s0.json big0.json '.shard.probes = 9e18'
	edit s1.json big1.json '.shard.probes = 9e18'
	run -2 --separate-stderr ploom-merge big0.json big1.json
	[ "$stderr" = "ploom-merge: cannot merge the statistics: field 'shard.probes' adds up to more than 9223372036854775807 over the shards" ]
	# the merged statistics say the search order
	run -0 --separate-stderr ploom-merge s0.json s1.json
	[ "$(jq_output -r .search)" = dfs ]
}

@test "usage: STATS are needed, standard input at most once; --help and --version" {
	run -2 --separate-stderr ploom-merge
	[[ "$stderr" == "ploom-merge: missing STATS"$'\n'"usage: ploom-merge STATS..."* ]]
	run -2 --separate-stderr ploom-merge - - </dev/null
	[[ "$stderr" == "ploom-merge: standard input given twice"$'\n'"usage: "* ]]
	run -2 --separate-stderr ploom-merge --nosuch a.json
	[[ "$stderr" == "ploom-merge: unknown option '--nosuch'"$'\n'"usage: "* ]]
	run -0 ploom-merge --help
	[[ "$output" == "usage: ploom-merge STATS..."* ]]
	run -0 ploom-merge --version
	[[ "$output" == "ploom-merge (ploom) "* ]]
}

@test "a full stdout is an error, not silence" {
	shard 0 1 "$SCN:bank_locked"
	run -2 --separate-stderr bash -c 'ploom-merge s0.json >/dev/full'
	[[ "$stderr" == "ploom-merge: "*"No space left on device" ]]
}
