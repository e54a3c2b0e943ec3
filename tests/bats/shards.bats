#!/usr/bin/env bats
# ploom-explore --shard: the shards of a search add up to the search, and
# GNU parallel runs them as the docs say.  ploom-merge's own checks are in
# ploom-merge.bats.  Needs ploom-explore, ploom-merge, jq and GNU parallel
# (scripts/install-deps) on PATH (.venv/bin).

# $output, $stderr and $status are set by bats' run, ROOT and SCN by
# helpers.bash
# shellcheck disable=SC2154

bats_require_minimum_version 1.5.0

load helpers

# whole TARGET [OPTION...]: the unsharded search with -k into whole.json
whole() {
	local target=$1
	shift
	run --separate-stderr ploom-explore -q -k --no-minimize "$@" "$target"
	echo "$output" >whole.json
	[ "$status" -eq 0 ] || [ "$status" -eq 1 ]
}

# shards N TARGET [OPTION...]: the N shards with -k into shard-K.json,
# each exiting as its part says; then their sums must be whole.json's
shards() {
	local n=$1 target=$2 k want
	shift 2
	rm -f shard-*.json
	for ((k = 0; k < n; k++)); do
		run --separate-stderr ploom-explore -q -k --no-minimize --shard="$k/$n" "$@" "$target"
		echo "$output" >"shard-$k.json"
		# a saved schedule that fails again fails shard 0 too
		want=0
		[ "$(jq '.failing + .saved_failing' "shard-$k.json")" -eq 0 ] || want=1
		[ "$status" -eq "$want" ]
		[ "$(jq .shard.index "shard-$k.json")" -eq "$k" ]
		[ "$(jq .shard.count "shard-$k.json")" -eq "$n" ]
		[ "$(jq .complete "shard-$k.json")" = true ]
	done
	[ "$(jq -s 'map(.schedules) | add' shard-*.json)" -eq "$(jq .schedules whole.json)" ]
	[ "$(jq -s 'map(.failing) | add' shard-*.json)" -eq "$(jq .failing whole.json)" ]
	# only shard 0 runs the saved schedules
	[ "$(jq -s 'map(.saved_runs) | .[1:] | add // 0' shard-*.json)" -eq 0 ]
	# every complete shard walked the same units, and each is owned once
	[ "$(jq -s 'map(.shard.units) | unique | length' shard-*.json)" -eq 1 ]
	[ "$(jq -s 'map(.shard.owned) | add' shard-*.json)" -eq "$(jq .shard.units shard-0.json)" ]
}

@test "1 to 4 shards of the unlocked bank add up to its 221/75 schedules" {
	whole "$SCN:bank_unlocked"
	[ "$(jq .schedules whole.json)" -eq 221 ]
	for n in 1 2 3 4; do
		shards "$n" "$SCN:bank_unlocked"
	done
	# one shard owns everything and needs no probe
	shards 1 "$SCN:bank_unlocked"
	[ "$(jq .shard.probes shard-0.json)" -eq 0 ]
}

@test "shards add up with a preemption bound, and for other unit depths" {
	whole "$SCN:counter3" -p 1
	[ "$(jq .schedules whole.json)" -eq 313 ]
	shards 3 "$SCN:counter3" -p 1
	for depth in 0 2 40; do
		shards 3 "$SCN:counter3" -p 1 --shard-depth="$depth"
		[ "$(jq .shard.depth shard-2.json)" -eq "$depth" ]
	done
	whole "$SCN:racy_counter2" -p 0
	shards 2 "$SCN:racy_counter2" -p 0
}

@test "with -j 2 each shard splits its own units between its workers" {
	whole "$SCN:abba"
	[ "$(jq .schedules whole.json)" -eq 194 ]
	shards 3 "$SCN:abba" -j 2
	[ "$(jq .jobs shard-0.json)" -eq 2 ]
	# the same outcomes as the whole search
	jq -cS '.outcomes | sort_by(.kind, .summary)' whole.json >want.json
	ploom-merge shard-*.json | jq -cS '.outcomes | sort_by(.kind, .summary)' >got.json
	cmp want.json got.json
}

@test "the default unit depth is the smallest D with 2^D >= 8N" {
	for spec in 0/1:3 1/2:4 2/4:5 4/5:6 7/8:6 8/9:7; do
		run -0 --separate-stderr ploom-explore -q -k --shard="${spec%:*}" "$SCN:bank_locked"
		[ "$(jq_output .shard.depth)" -eq "${spec#*:}" ]
	done
}

@test "a shard's first failure trace records the shard and the unit, and merged it is the search's first" {
	run -1 --separate-stderr ploom-explore -q --no-minimize "$SCN:bank_unlocked"
	want=$(jq_output -r .trace)
	for k in 0 1 2 3; do
		run -1 --separate-stderr ploom-explore -q --no-minimize --trace-dir="t$k" --shard="$k/4" \
			"$SCN:bank_unlocked"
		echo "$output" >"s$k.json"
		trace=$(jq -r .trace "s$k.json")
		[ "$(jq .shard.index "$trace")" -eq "$k" ]
		[ "$(jq .shard.count "$trace")" -eq 4 ]
		[ "$(jq .shard.depth "$trace")" -eq 5 ]
		[ "$(jq .shard.unit "$trace")" -eq "$(jq .shard.failure_unit "s$k.json")" ]
		# each shard stops at its own first failure, in a unit it owns
		[ "$(jq -r .stopped_by "s$k.json")" = failure ]
		[ "$(jq '.shard.failure_unit % 4' "s$k.json")" -eq "$k" ]
		# the trace replays and shows like any other
		run -1 --separate-stderr replay_in_root -q "$trace"
	done
	run -1 --separate-stderr ploom-merge s0.json s1.json s2.json s3.json
	got=$(jq_output -r .trace)
	# the same schedule as the whole search's first failure
	[ "$(jq -c .choices "$got")" = "$(jq -c .choices "$want")" ]
	[ "$(jq -r .id "$got")" = "$(jq -r .id "$want")" ]
}

@test "a failure in a probe is the owner's: the prober neither counts nor reports it" {
	# at depth 0 the search is one unit, shard 0's; shard 1 runs the first
	# schedule, which fails, only as a probe
	run -1 --separate-stderr ploom-explore -q --trace-dir=owner --shard=0/2 --shard-depth=0 \
		"$SCN:raises_in_thread"
	[ "$(jq_output .failing)" -eq 1 ]
	run -0 --separate-stderr ploom-explore -q --shard=1/2 --shard-depth=0 "$SCN:raises_in_thread"
	echo "$output" >s1.json
	[ "$(jq .schedules s1.json)" -eq 0 ]
	[ "$(jq .failing s1.json)" -eq 0 ]
	[ "$(jq -r .result s1.json)" = pass ]
	[ "$(jq .shard.probes s1.json)" -eq 1 ]
	[ "$(jq .shard.owned s1.json)" -eq 0 ]
	[[ "$stderr" != *failed* ]]
	[ ! -e .ploom ]
}

@test "--shard and --shard-depth take their ranges only, checked with the options" {
	run -0 --separate-stderr ploom-explore --check-options --shard=0/1
	run -0 --separate-stderr ploom-explore --check-options --shard=999999/1000000 --shard-depth=1000
	for bad in 4/4 0/0 -1/4 1/-4 1 1/ /4 a/b 1/4/5 " 1/4" 0/1000001; do
		run -2 --separate-stderr ploom-explore --check-options --shard="$bad"
		[[ "$stderr" == "ploom-explore: invalid --shard (K/N with 0 <= K < N <= 1000000) '$bad'"$'\n'"usage: ploom-explore "* ]]
	done
	run -2 --separate-stderr ploom-explore --check-options --shard=0/2 --shard-depth=1001
	[[ "$stderr" == "ploom-explore: invalid --shard-depth '1001': not an integer from 0 to 1000"* ]]
	run -2 --separate-stderr ploom-explore --check-options --shard-depth=3
	[[ "$stderr" == "ploom-explore: --shard-depth needs --shard"$'\n'* ]]
	run -0 ploom-explore --help
	[[ "$output" == *"--shard=K/N"*"(0 <= K < N,"*"N at most 1000000)"* ]]
	[[ "$output" == *"--shard-depth=D"*"(0-1000;"* ]]
}

# dpor_outcomes FILE: the distinct outcomes of the statistics in FILE; a
# sharded reduction runs other schedules than the whole one, in other
# numbers, but must end in the same outcomes
dpor_outcomes() {
	jq -cS '[.outcomes[] | [.kind, .summary]] | sort' "$1"
}

@test "4 shards under --reduction=dpor merge into a complete search with the whole one's outcomes" {
	local name k
	for name in bank_unlocked abba counter3 racy_counter2 try_lock; do
		whole "$SCN:$name" --reduction=dpor
		rm -f shard-*.json
		for k in 0 1 2 3; do
			run --separate-stderr ploom-explore -q -k --no-minimize --reduction=dpor \
				--shard="$k/4" "$SCN:$name"
			echo "$output" >"shard-$k.json"
			[ "$(jq -r .reduction "shard-$k.json")" = dpor ]
			[ "$(jq -r .complete "shard-$k.json")" = true ]
		done
		run --separate-stderr ploom-merge shard-*.json
		echo "$output" >merged.json
		[ "$(jq -r .complete merged.json)" = true ]
		[ "$(jq '.failing > 0' merged.json)" = "$(jq '.failing > 0' whole.json)" ]
		[ "$(dpor_outcomes merged.json)" = "$(dpor_outcomes whole.json)" ]
		# the same units in every shard, each owned once
		[ "$(jq -s 'map(.shard.units) | unique | length' shard-*.json)" -eq 1 ]
		[ "$(jq -s 'map(.shard.owned) | add' shard-*.json)" -eq "$(jq .shard.units shard-0.json)" ]
		# never fewer schedules than the classes (the whole search runs one
		# per class on these)
		[ "$(jq .schedules merged.json)" -ge "$(jq .schedules whole.json)" ]
	done
	# with -j 2 in each shard too
	whole "$SCN:bank_unlocked" --reduction=dpor
	rm -f shard-*.json
	for k in 0 1 2 3; do
		run --separate-stderr ploom-explore -q -k --no-minimize --reduction=dpor -j 2 \
			--shard="$k/4" --shard-depth=2 "$SCN:bank_unlocked"
		echo "$output" >"shard-$k.json"
	done
	run --separate-stderr ploom-merge shard-*.json
	echo "$output" >merged.json
	[ "$(jq -r .complete merged.json)" = true ]
	[ "$(dpor_outcomes merged.json)" = "$(dpor_outcomes whole.json)" ]
}

@test "under --reduction=dpor, 4 shards count the sleep-blocked runs the one shard of their units counts" {
	# a probe's run is the owning shard's: counted there only, a
	# sleep-blocked one as a schedule; so the units' runs, however many
	# shards split them, add up to the same counts
	local name k
	for name in counter3 writers3 lock_handoff; do
		run -0 --separate-stderr ploom-explore -q -k --no-minimize --no-saved --reduction=dpor \
			--shard=0/1 --shard-depth=4 "$SCN:$name"
		echo "$output" >one.json
		rm -f shard-*.json
		for k in 0 1 2 3; do
			run --separate-stderr ploom-explore -q -k --no-minimize --no-saved --reduction=dpor \
				--shard="$k/4" --shard-depth=4 "$SCN:$name"
			echo "$output" >"shard-$k.json"
		done
		run --separate-stderr ploom-merge shard-*.json
		echo "$output" >merged.json
		[ "$(jq '[.schedules, .sleep_blocked]' -c merged.json)" = "$(jq '[.schedules, .sleep_blocked]' -c one.json)" ]
		# and there were probes, and sleep-blocked runs, to count
		[ "$(jq .shard.probes merged.json)" -gt 0 ]
		[ "$(jq .sleep_blocked one.json)" -gt 0 ]
	done
}

@test "--shard with a search order other than dfs is refused, naming the order" {
	run -2 --separate-stderr ploom-explore --check-options --search=ipb --shard=1/4
	[[ "$stderr" == "ploom-explore: --search=ipb cannot be combined with --shard: "*$'\n'"usage: "* ]]
	run -0 ploom-explore --check-options --search=dfs --shard=1/4
	run -2 --separate-stderr ploom-explore --shard=1/4 --search=ipb "$SCN:racy_counter2"
	[ -z "$output" ]
	[ ! -e .ploom ]
}

@test "-n counts a shard's probes among the runs it sends" {
	run -3 --separate-stderr ploom-explore -q -k -n 10 --shard=3/4 "$SCN:bank_locked"
	echo "$output" >s.json
	[ "$(jq -r .stopped_by s.json)" = max-schedules ]
	[ "$(jq '.schedules + .shard.probes' s.json)" -eq 10 ]
}

@test "GNU parallel runs 4 shards of counter3 (-p 1), and merged they count what one search counts" {
	command -v parallel >/dev/null || {
		echo "GNU parallel is missing: scripts/install-deps installs it" >&2
		return 1
	}
	run -0 --separate-stderr ploom-explore -q -k -p 1 "$SCN:counter3"
	echo "$output" >whole.json
	[ "$(jq .schedules whole.json)" -eq 313 ]
	# the docs' recipe (docs/shards.rst, whose -p 2 make test-docs runs)
	run -0 --separate-stderr parallel -j 2 ploom-explore -q -k -p 1 --shard={}/4 "$SCN:counter3" \
		'>' shard-{}.json ::: 0 1 2 3
	run -0 --separate-stderr ploom-merge shard-0.json shard-1.json shard-2.json shard-3.json
	echo "$output" >merged.json
	[ "$(jq .schedules merged.json)" -eq "$(jq .schedules whole.json)" ]
	[ "$(jq .failing merged.json)" -eq "$(jq .failing whole.json)" ]
	[ "$(jq .complete merged.json)" = true ]
	[ "$(jq -c .shard.missing merged.json)" = "[]" ]
	jq -cS .outcomes whole.json >want.json
	jq -cS .outcomes merged.json >got.json
	cmp want.json got.json
}

@test "only shard 0 runs the saved schedules; merged, its saved failure is the first and counts once" {
	run -1 --separate-stderr ploom-explore -q "$SCN:bank_unlocked"
	want=$(jq_output -r .minimized_trace)
	for k in 0 1 2 3; do
		run -1 --separate-stderr ploom-explore -q --shard="$k/4" "$SCN:bank_unlocked"
		echo "$output" >"s$k.json"
	done
	[ "$(jq .saved_runs s0.json)" -eq 1 ]
	[ "$(jq .saved_failing s0.json)" -eq 1 ]
	[ "$(jq .schedules s0.json)" -eq 0 ]
	[ "$(jq .shard.failure_unit s0.json)" = null ]
	for k in 1 2 3; do
		[ "$(jq .saved_runs "s$k.json")" -eq 0 ]
		[ "$(jq .failing "s$k.json")" -eq 1 ]
	done
	run -1 --separate-stderr ploom-merge s3.json s1.json s0.json s2.json
	echo "$output" >merged.json
	[ "$(jq .saved_runs merged.json)" -eq 1 ]
	[ "$(jq .saved_failing merged.json)" -eq 1 ]
	[ "$(jq .failing merged.json)" -eq 3 ]
	[ "$(jq -r .minimized_trace merged.json)" = "$want" ]
	[ "$(jq -r .minimized_trace merged.json)" = "$(jq -r .minimized_trace s0.json)" ]
	# the unit of the search's first failure, among shards 1 to 3
	[ "$(jq .shard.failure_unit merged.json)" -ge 0 ]
}
