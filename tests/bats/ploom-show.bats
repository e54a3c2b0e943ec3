#!/usr/bin/env bats
# ploom-show: renders a trace (a file or stdin) as a table, one column per
# task, with the marks and the outcome, or as an HTML page that a real
# browser shows, or writes it back as JSON; rejects a bad trace with exit 2.
# Needs the ploom utilities and the worker's python3 on PATH (.venv/bin);
# the browser tests need Chromium (scripts/install-deps installs it) and
# are skipped, saying so, without it.

# $output, $stderr and $status are set by bats' run, ROOT, SCN and BANK by
# helpers.bash
# shellcheck disable=SC2154

bats_require_minimum_version 1.5.0

load helpers

# failing_trace TARGET: explores TARGET, which must fail, and prints the
# path of the original trace.
failing_trace() {
	ploom-explore -q "$1" > stats.json 2> /dev/null || [ $? -eq 1 ]
	jq -r .trace stats.json
}

# Pipelines, as functions so that `run` sees the status of the whole pipe
# (pipefail) or of its first stage.
run_one_to_show() {
	set -o pipefail
	ploom-run-one "$SCN:racy_counter2" 2> /dev/null | ploom-show
}

minimize_to_show() {
	set -o pipefail
	ploom-minimize < "$1" 2> /dev/null | ploom-show
}

replay_to_show() {
	# ploom-replay exits 1: the failure reproduced
	ploom-replay "$1" 2> /dev/null | ploom-show
}

show_to_dev_full() {
	ploom-show "$@" > /dev/full
}

show_to_head() {
	ploom-show "$@" | head -n 1
	return "${PIPESTATUS[0]}"
}

show_json_to_jq() {
	set -o pipefail
	ploom-show --format=json "$1" | jq -r '.outcome.summary'
}

# need_browser: sets BROWSER to the command that runs headless Chromium
# with a profile of the test's own, as root without its sandbox (which
# refuses root), or skips the test saying why when no Chromium is
# installed.  Call it in the test itself, not under `run`.
need_browser() {
	local b
	BROWSER=()
	for b in chromium-headless-shell chromium; do
		if command -v "$b" > /dev/null; then
			BROWSER=("$b")
			break
		fi
	done
	if ((${#BROWSER[@]} == 0)); then
		skip "SKIPPED: no chromium-headless-shell or chromium on PATH, so no browser checks the HTML page (scripts/install-deps installs chromium-headless-shell)"
	fi
	BROWSER+=(--headless --disable-gpu --hide-scrollbars --force-device-scale-factor=1
		--user-data-dir="$BATS_TEST_TMPDIR/profile")
	if ((EUID == 0)); then
		BROWSER+=(--no-sandbox)
	fi
}

# column TEXT FILE: the 0-based column where TEXT starts on the first line
# of FILE that holds it.
column() {
	awk -v s="$1" 'index($0, s) { print index($0, s) - 1; exit }' "$2"
}

# unwrap: standard input with the where column's wrapped lines joined to
# the line they continue (a line that starts, after spaces, in the column
# of the table's "where" heading): after a '/' or a ':' as they are, else
# by the space the line broke at.
unwrap() {
	awk '/^ +step  .*  where$/ { col = index($0, "where") }
		col && match($0, /^ +/) && RLENGTH == col - 1 && length($0) >= col {
			prev = prev (prev ~ /[\/:]$/ ? "" : " ") substr($0, col); next }
		{ if (NR > 1) print prev; prev = $0 }
		END { if (NR) print prev }'
}

@test "a passing run from ploom-run-one renders header, columns and outcome" {
	ploom-run-one --patch=- --instrument=- "$SCN:bank_locked" > run.json
	run -0 --separate-stderr ploom-show run.json
	[ -z "$stderr" ]
	unwrap <<< "$output" > shown.txt
	grep -qx 'scenario     scenarios:bank_locked' shown.txt
	grep -qx "target       $SCN:bank_locked" shown.txt
	grep -qx 'python       cpython 3\.13\.[0-9]*, GIL enabled' shown.txt
	grep -qx 'hash seed    0' shown.txt
	# a trace that patches nothing says nothing of it
	grep -qx 'config       reduction none, max_preemptions none, max_steps 10000, schedule_timeout 10 s' shown.txt
	grep -qx 'preemptions  0' shown.txt
	grep -qx 'outcome      pass' shown.txt
	# threads without a name go by their object's, task 0 is MainThread
	grep -qxE ' +step  MainThread +thread#1 +thread#2 +where' shown.txt
	grep -qE '^ +0  start thread#1 +tests/python/scenarios\.py:[0-9]+ _bank$' shown.txt
	[ "$(tail -n 1 shown.txt)" = "pass: every task finished" ]
	# one row per step
	[ "$(grep -cE '^[ *!]{2} [a-zA-Z+]* +[0-9]+  ' shown.txt)" -eq "$(jq '.steps | length' run.json)" ]
	# a pass explains nothing, though its acquires race
	run -1 grep '^race ' shown.txt
	grep -q '^a racing pair: ' shown.txt
	# no preemption in the default schedule, so no mark and no legend
	run -1 grep -E '^\*' shown.txt
	run -1 grep 'preemption:' shown.txt
}

@test "the config line lists the patched modules, the project first" {
	ploom-run-one --patch=- --instrument=- "$SCN:bank_locked" > run.json
	jq '.config.patch = ["mylib.pool", "other"]' run.json > patched.json
	run -0 --separate-stderr ploom-show patched.json
	echo "$output" > shown.txt
	grep -qx 'config       reduction none, max_preemptions none, max_steps 10000, schedule_timeout 10 s, patch mylib.pool,other' shown.txt
	# the defaults of every search
	ploom-run-one "$SCN:bank_locked" > run.json
	jq '.config.patch = ["mylib.pool"]' run.json > patched.json
	run -0 --separate-stderr ploom-show patched.json
	echo "$output" > shown.txt
	grep -qx 'config       reduction none, max_preemptions none, max_steps 10000, schedule_timeout 10 s, patch the project,mylib.pool, instrument the scenario' shown.txt
}

@test "the config line lists the instrumented modules, the scenario first" {
	ploom-run-one --patch=- --instrument=- "$SCN:bank_locked" > run.json
	jq '.config.patch = ["mylib.pool"] | .config.instrument = ["mylib.pool", "other"] |
		.config.instrument_scenario = true' run.json > instrumented.json
	run -0 --separate-stderr ploom-show instrumented.json
	echo "$output" > shown.txt
	grep -qx 'config       reduction none, max_preemptions none, max_steps 10000, schedule_timeout 10 s, patch mylib.pool, instrument the scenario,mylib.pool,other' shown.txt
	jq '.config.instrument = ["other"]' run.json > named.json
	run -0 --separate-stderr ploom-show named.json
	echo "$output" > shown.txt
	grep -qx 'config       reduction none, max_preemptions none, max_steps 10000, schedule_timeout 10 s, instrument other' shown.txt
}

@test "every cell sits under its task's header" {
	ploom-run-one "$SCN:bank_locked" > run.json
	ploom-show run.json > shown.txt
	grep -E '^ +step  ' shown.txt > header.txt
	for task in 0 1 2; do
		col="$(column "$(jq -r --argjson t "$task" '.tasks[] | select(.id == $t) | .name' run.json)" header.txt)"
		mapfile -t rows < <(jq -r --argjson t "$task" \
			'.steps[] | select(.task == $t) | .index' run.json)
		[ "${#rows[@]}" -gt 0 ]
		for i in "${rows[@]}"; do
			line="$(grep -E "^[ *!]{2} [a-zA-Z+]* +$i  " shown.txt)"
			cell="${line:$col}"
			[ -n "$cell" ]
			[ "${cell:0:1}" != " " ]
			[ "${line:$((col - 2)):2}" = "  " ]
		done
	done
}

@test "cells read 'op object -> value'" {
	ploom-run-one "$SCN:try_lock" > run.json
	ploom-show run.json | unwrap > shown.txt
	# then, in the last column, where the step stopped
	grep -qE '  acquire lock#0 \(nonblocking\) -> True +tests/python/scenarios\.py:[0-9]+ grab$' shown.txt
	grep -qE '  read cell#0 -> 0 +tests/python/scenarios\.py:[0-9]+ grab$' shown.txt
	grep -qE '  write cell#0 -> 1 +tests/python/scenarios\.py:[0-9]+ grab$' shown.txt
	grep -qE '  yield_now +tests/python/scenarios\.py:[0-9]+ grab$' shown.txt
	# a thread's begin is its function's first line
	line="$(grep -n 'def grab' "$SCN" | cut -d: -f1)"
	grep -qE "  begin +tests/python/scenarios\\.py:$line grab\$" shown.txt
}

@test "a queue's operations read as their user wrote them, on the mutex's steps, in every format" {
	ploom-run-one --instrument=- "$SCN:queue_ops" > run.json
	ploom-show run.json | unwrap > shown.txt
	# the acquire in which each one takes effect, and the release that ends it
	for cell in 'put 3' 'end put' 'put_nowait 4' 'end put_nowait' 'get -> 3' 'end get' \
		'get_nowait -> 4' 'get_nowait -> Empty' 'end get_nowait' 'get \(timeout\) -> Empty' \
		'end get \(timeout\)'; do
		grep -qE "^ +[a-z]* +[0-9]+ +$cell +tests/python/scenarios\.py:[0-9]+ (producer|consumer|<lambda>)\$" shown.txt
	done
	# the steps stay the mutex's: what replay and the search compare
	[ "$(jq '[.steps[] | select(.label)] | length' run.json)" -eq 12 ]
	[ "$(jq '[.steps[] | select(.label) | select(.object != "lock#0" or
		(.op != "acquire" and .op != "release"))] | length' run.json)" -eq 0 ]
	[ "$(jq -r '.steps[] | select(.label == "put 3") | .op' run.json)" = acquire ]
	# the timed get's wait between them is the waits' own
	grep -qE ' acquire Queue\.not_empty\.waiter \(timeout\) -> False ' shown.txt
	[ "$(grep -c 'acquire Queue\.mutex' shown.txt)" -eq 1 ]
	ploom-show --format=html run.json > page.html
	grep -q '>put 3<' page.html
	grep -q '>get -&gt; 3<' page.html
	grep -q '>get (timeout) -&gt; Empty<' page.html
	# the JSON keeps the labels, and a label that is no label is refused
	ploom-show --format=json run.json | jq -e '.steps[3].label == "put 3"'
	jq '.steps[3].label = "a\nb"' run.json > bad.json
	run -2 --separate-stderr ploom-show bad.json
	[[ "$stderr" == *label* ]]
}

@test "a failing trace from ploom-explore marks preemptions and the failing step, then the exception" {
	trace="$(failing_trace "$BANK:scenario")"
	run -0 --separate-stderr ploom-show "$trace"
	unwrap <<< "$output" > shown.txt
	grep -qx 'outcome      builtins.AssertionError: the account is overdrawn' shown.txt
	grep -qx "preemptions  $(jq .preemptions "$trace")" shown.txt
	# one '*' per preemption, and its legend
	[ "$(grep -cE '^\*[ !] [a-zA-Z+]* *[0-9]+  ' shown.txt)" -eq "$(jq .preemptions "$trace")" ]
	grep -qx '\* preemption: a switch away from a task that could have continued' shown.txt
	# the failing step is task 0's last, the final read of the balance
	last="$(jq '[.steps[] | select(.task == 0)] | last | .index' "$trace")"
	grep -qE "^ ! [a-zA-Z+]* +$last  read balance -> -100 +examples/bank_account\\.py:[0-9]+ scenario\$" shown.txt
	grep -qx '! the failing step: the last step of the task that raised' shown.txt
	# the exception and its traceback end the rendering
	grep -qx 'failure: task 0 raised builtins.AssertionError: the account is overdrawn' shown.txt
	grep -qx 'Traceback (most recent call last):' shown.txt
	[ "$(tail -n 1 shown.txt)" = "AssertionError: the account is overdrawn" ]
}

@test "the rendering ends with one newline, however the traceback ends" {
	trace="$(failing_trace "$BANK:scenario")"
	# the endings as JSON strings: a shell variable would lose the newlines
	for ending in '""' '"\n"' '"\n\n\n"'; do
		jq --argjson ending "$ending" \
			'.outcome.traceback |= (sub("\\n+$"; "") + $ending)' "$trace" > ending.json
		ploom-show ending.json > shown.txt
		[ "$(tail -c 1 shown.txt | od -An -c | tr -d ' ')" = '\n' ]
		[ "$(tail -c 2 shown.txt | od -An -c | tr -d ' ')" = 'n\n' ]
	done
}

@test "a deadlock on a Condition nobody notifies, or a lock a task holds itself, says what would end it" {
	trace="$(failing_trace "$SCN:never_notified")"
	run -0 --separate-stderr ploom-show "$trace"
	echo "$output" > shown.txt
	# an untimed Condition.wait is one step, the acquire of the condition's
	# lock once notified: told as the Condition's wait, not the lock's
	grep -qE '^  task 1 waits on a Condition over lock#[0-9]+; no task can notify it at tests/python/scenarios\.py:[0-9]+ waiter$' shown.txt
	grep -qE '^  task 2 waits to acquire lock#[0-9]+ held by task 2 itself; no other task can release it at tests/python/scenarios\.py:[0-9]+ taker$' shown.txt
	grep -qE 'waits to acquire lock#[0-9]+ held by thread#2 itself' shown.txt
	run ! grep -q 'free' shown.txt
	# the summary and the page word each wait as the list does
	jq -r .outcome.summary "$trace" | grep -q 'task 1 waits on a Condition over lock#[0-9]*; no task can notify it'
	ploom-show --format=html "$trace" | grep -q 'thread#1 waits on a Condition over lock#[0-9]*; no task can notify it'
}

@test "a Condition named where it is made is named in its deadlock, in every rendering" {
	cat > named_cond.py <<'EOF'
from ploom import threading


class Waiter:
    def __init__(self):
        self._condition = threading.Condition()

    def wait(self):
        with self._condition:
            self._condition.wait()


def scenario():
    Waiter().wait()
EOF
	run -1 --separate-stderr ploom-explore --no-minimize named_cond.py:scenario
	[[ "$stderr" == *"deadlock: task 0 waits on Waiter._condition (a Condition); no task can notify it"* ]]
	trace="$(jq_output -r .trace)"
	ploom-show "$trace" | grep -qx '  task 0 waits on Waiter._condition (a Condition); no task can notify it at named_cond.py:10 wait'
	ploom-show --format=html "$trace" | grep -q 'MainThread waits on Waiter._condition (a Condition); no task can notify it'
}

@test "a deadlock lists what each task waits for" {
	trace="$(failing_trace "$SCN:abba")"
	run -0 --separate-stderr ploom-show "$trace"
	echo "$output" > shown.txt
	grep -qE '^ ! [a-zA-Z+]* *wait  waits to join thread#1 +waits to acquire lock#[01] held by thread#2 +waits to acquire lock#[01] held by thread#1$' shown.txt
	grep -qx 'deadlock: no task can run' shown.txt
	grep -qE '^  task 0 waits to join thread#1 at tests/python/scenarios\.py:[0-9]+ abba$' shown.txt
	grep -qE '^  task 1 waits to acquire lock#[01] held by task 2 at tests/python/scenarios\.py:[0-9]+ one$' shown.txt
	grep -qE '^  task 2 waits to acquire lock#[01] held by task 1 at tests/python/scenarios\.py:[0-9]+ two$' shown.txt
}

@test "the bank's failure names its threads and cell, where each step stopped, and its race" {
	cp "$BANK" bank_account.py
	trace="$(failing_trace bank_account.py:scenario)"
	ploom-minimize "$trace" > min.json 2> /dev/null
	run -0 --separate-stderr ploom-show min.json
	unwrap <<< "$output" > shown.txt
	check="$(grep -n 'if balance.read() >= 100' "$BANK" | cut -d: -f1)"
	withdraw="$(grep -n 'balance.write(balance.read() - 100)' "$BANK" | cut -d: -f1)"
	grep -qx "race         mathieu read balance (bank_account.py:$check) before lucas wrote it (bank_account.py:$withdraw)" shown.txt
	grep -qxE ' +step  MainThread +mathieu +lucas +where' shown.txt
	# every row says where its step stopped
	[ "$(grep -cE '^[ *!]{2} [a-zA-Z+]* +[0-9]+  .*  bank_account\.py:[0-9]+ (scenario|withdraw)$' shown.txt)" -eq "$(jq '.steps | length' min.json)" ]
	grep -qE "^ +[0-9]+ +begin +bank_account\\.py:[0-9]+ withdraw\$" shown.txt
	# two racing pairs share the withdrawal: a on mathieu's check
	grep -qE "^   a +[0-9]+ +read balance -> 100 +bank_account\\.py:$check withdraw\$" shown.txt
	grep -qE "^   ab +[0-9]+ +write balance -> 0 +bank_account\\.py:$withdraw withdraw\$" shown.txt
	[ "$(grep -cE '^[ *!]{2} [ab]+ ' shown.txt)" -eq 3 ]
	grep -qx 'a-b racing pairs: steps of two tasks on one object that another schedule could run in the other order; a is the race above' shown.txt
}

@test "three tasks fit 100 columns: the where column wraps, at a space first" {
	cp "$BANK" family_account.py
	trace="$(failing_trace family_account.py:scenario)"
	ploom-minimize "$trace" > min.json 2> /dev/null
	ploom-show min.json > shown.txt
	# the table, from its heading to the blank line after it
	awk '/^ +step  / { on = 1 } on && !NF { exit } on' shown.txt > table.txt
	grep -qxE ' +step  MainThread +mathieu +lucas +where' table.txt
	[ "$(awk 'length($0) > 100' table.txt | wc -l)" -eq 0 ]
	# more lines than rows: the places wrapped, and join up again
	[ "$(wc -l < table.txt)" -gt "$(($(jq '.steps | length' min.json) + 2))" ]
	check="$(grep -n 'if balance.read() >= 100' "$BANK" | cut -d: -f1)"
	unwrap < table.txt > joined.txt
	grep -qE "^   a +[0-9]+ +read balance -> 100 +family_account\.py:$check withdraw\$" joined.txt
	[ "$(grep -cE '  family_account\.py:[0-9]+ (scenario|withdraw)$' joined.txt)" -eq "$(jq '.steps | length' min.json)" ]
	# a function's name too long for the room left is cut at the room
	jq '(.steps[].where.function) |= ("f" * 40)' min.json > deep.json
	ploom-show deep.json | awk '/^ +step  / { on = 1 } on && !NF { exit } on' > deep.txt
	[ "$(awk 'length($0) > 100' deep.txt | wc -l)" -eq 0 ]
	grep -qE '^ +f{12,39}$' deep.txt
}

@test "a deadlock's race is the acquire that won against the one that waits" {
	trace="$(failing_trace "$SCN:abba")"
	run -0 --separate-stderr ploom-show "$trace"
	re='^race         (thread#[12]) acquired (lock#[01]) \(tests/python/scenarios\.py:[0-9]+\) before (thread#[12]) could acquire it \(tests/python/scenarios\.py:[0-9]+\)$'
	line="$(grep '^race ' <<< "$output")"
	[[ "$line" =~ $re ]]
	[ "${BASH_REMATCH[1]}" != "${BASH_REMATCH[3]}" ]
	grep -qE "^ ! [ab]{2} wait  " <<< "$output"
}

@test "a failure without a race has no race line and no tags" {
	ploom-run-one "$SCN:raises_in_thread" > run.json || [ $? -eq 1 ]
	run -0 --separate-stderr ploom-show run.json
	echo "$output" > shown.txt
	run -1 grep '^race ' shown.txt
	run -1 grep 'racing pair' shown.txt
	grep -qxE '   step  MainThread +thread#1 +where' shown.txt
}

@test "an old trace without places renders without a where column" {
	run -0 --separate-stderr ploom-show "$ROOT/tests/fuzz/corpus/trace/bank-failure-minimized.json"
	echo "$output" > shown.txt
	[ "$(jq .version "$ROOT/tests/fuzz/corpus/trace/bank-failure-minimized.json")" = 1 ]
	grep -qxE ' +step  MainThread +thread#1 +thread#2' shown.txt
	grep -qx 'race         thread#1 read cell#0 before thread#2 wrote it' shown.txt
	run -1 grep -E 'where|\.py:[0-9]' shown.txt
}

@test "names and places are checked as the untrusted input a trace is" {
	ploom-run-one "$SCN:bank_locked" > run.json
	jq '.tasks[1].name = "ma\u001b[2Jthieu"' run.json > escape.json
	run -2 --separate-stderr ploom-show escape.json
	[ "$stderr" = "ploom-show: cannot read trace 'escape.json': field 'tasks[1].name' holds a control character" ]
	jq '.steps[2].where.file = "../../etc/passwd"' run.json > up.json
	run -2 --separate-stderr ploom-show up.json
	[ "$stderr" = "ploom-show: cannot read trace 'up.json': field 'steps[2].where.file' is neither an absolute path nor a relative one inside its root" ]
	jq '.steps[2].where.line = -3' run.json > line.json
	run -2 --separate-stderr ploom-show line.json
	[ "$stderr" = "ploom-show: cannot read trace 'line.json': field 'steps[2].where.line' is out of range" ]
	jq '.objects = [{"object": "thread#1", "name": "x"}]' run.json > obj.json
	run -2 --separate-stderr ploom-show obj.json
	[ "$stderr" = "ploom-show: cannot read trace 'obj.json': field 'objects[0].object' is not a cell, a lock or plain state (tasks are named in 'tasks')" ]
}

@test "a NUL escape, bytes that are not UTF-8 and raw control characters are refused at their byte" {
	ploom-run-one "$SCN:bank_locked" > run.json
	# cJSON would read the name cut at the NUL, Python's json whole
	jq '.tasks[1].name = "ma\u0000thieu"' run.json > nul.json
	at=$(grep -bo 'ma\\u0000' nul.json | cut -d: -f1)
	run -2 --separate-stderr ploom-show nul.json
	[ -z "$output" ]
	[ "$stderr" = "ploom-show: cannot read trace 'nul.json': a string holds a NUL character (\u0000) at byte $((at + 3))" ]
	jq '.tasks[1].name = "maXthieu"' run.json | sed 's/maXthieu/ma\xffthieu/' > latin.json
	at=$(LC_ALL=C grep -boa 'ma.thieu' latin.json | cut -d: -f1)
	run -2 --separate-stderr ploom-show latin.json
	[ "$stderr" = "ploom-show: cannot read trace 'latin.json': invalid UTF-8 at byte $((at + 3))" ]
	jq '.tasks[1].name = "maXthieu"' run.json | sed 's/maXthieu/ma\tthieu/' > tab.json
	run -2 --separate-stderr ploom-show tab.json
	[ "$stderr" = "ploom-show: cannot read trace 'tab.json': a string holds a control character at byte $((at + 3))" ]
	# a replay reads traces with the same reader
	run -2 --separate-stderr ploom-replay nul.json
	[[ "$stderr" == "ploom-replay: cannot read trace 'nul.json': a string holds a NUL character (\u0000) at byte "* ]]
	# UTF-8 is read as it is
	jq '.tasks[1].name = "mathieu \u00e9\u20ac\ud83d\ude00"' run.json > utf8.json
	run -0 --separate-stderr ploom-show utf8.json
	[[ "$output" == *"mathieu é€😀"* ]]
}

@test "crash, exit and timeout mark the last step" {
	ploom-run-one "$SCN:crashes" > crash.json || [ $? -eq 1 ]
	run -0 ploom-show crash.json
	[[ "$output" == *$'\n'" !    0  write cell#0"* ]]
	[[ "$output" == *"crash: killed by signal 6 (SIGABRT)" ]]
	ploom-run-one "$SCN:calls_os_exit" > exit.json || [ $? -eq 1 ]
	run -0 ploom-show exit.json
	[[ "$output" == *"exit: the scenario exited with status 3" ]]
}

@test "a timeout says where each task was, in text and in HTML" {
	local spin join
	spin=$(grep -n '# the spinning line' "$SCN" | cut -d: -f1)
	join=$(grep -n '# the join line' "$SCN" | cut -d: -f1)
	ploom-run-one --schedule-timeout 0.5 "$SCN:spins_holding_real_lock" > timeout.json || [ $? -eq 1 ]
	[ "$(jq -r .outcome.kind timeout.json)" = timeout ]
	# the dump catches the spinner at the loop's line or at its body's
	local caught
	caught=$(jq -r '.outcome.stacks[1].frames[0].line' timeout.json)
	[ "$caught" -eq "$spin" ] || [ "$caught" -eq $((spin + 1)) ]
	spin=$caught
	run -0 ploom-show timeout.json
	[[ "$output" == *$'\n'"timeout: the schedule ran longer than 0.5 s"$'\n'* ]]
	[[ "$output" == *$'\n'"  MainThread was in: tests/python/scenarios.py:$join in spins_holding_real_lock"$'\n'* ]]
	[[ "$output" == *$'\n'"  thread#1 (spinner-1) was in: tests/python/scenarios.py:$spin in _xyzzy_spin_forever"$'\n'* ]]
	[[ "$output" == *$'\n'"  thread#2 (idle-1) had not run yet" ]]
	run -0 ploom-show --format=html timeout.json
	# the page names each task as its lane does
	[[ "$output" == *"<li>spinner-1 was in: tests/python/scenarios.py:$spin in _xyzzy_spin_forever</li>"* ]]
	[[ "$output" == *"<li>idle-1 had not run yet</li>"* ]]
	[[ "$output" == *'class="lane-title" data-task="1" x="'*'">spinner-1</text>'* ]]
	# a frame is the trace's text: escaped in the page, '?' for a control in the text
	jq '.outcome.stacks[1].frames[0].function = "<b>x\u001b"' timeout.json > forged.json
	run -2 ploom-show forged.json
	[[ "$output" == *"field 'outcome.stacks[1].frames[0].function' holds a control character"* ]]
	jq '.outcome.stacks[1].frames[0].function = "<b>x"' timeout.json > forged.json
	run -0 ploom-show --format=html forged.json
	[[ "$output" == *"in &lt;b&gt;x</li>"* ]]
}

@test "stdin, '-' and a file give the same rendering" {
	ploom-run-one "$SCN:racy_counter2" > run.json
	ploom-show run.json > from-file.txt
	ploom-show < run.json > from-stdin.txt
	ploom-show - < run.json > from-dash.txt
	cmp from-file.txt from-stdin.txt
	cmp from-file.txt from-dash.txt
	[ -s from-file.txt ]
}

@test "the ploom-run-one | ploom-show pipeline" {
	run -0 run_one_to_show
	[[ "$output" == "scenario     scenarios:racy_counter2"$'\n'* ]]
}

@test "ploom-minimize and ploom-replay feed ploom-show" {
	command -v ploom-minimize > /dev/null || skip "ploom-minimize is not built"
	command -v ploom-replay > /dev/null || skip "ploom-replay is not built"
	cp "$BANK" bank_account.py
	trace="$(failing_trace bank_account.py:scenario)"
	ploom-minimize "$trace" > minimized.json 2> /dev/null
	run -0 --separate-stderr ploom-show minimized.json
	[[ "$output" == *$'\n'"failure: task 0 raised builtins.AssertionError: the account is overdrawn"$'\n'* ]]
	[[ "$output" == *$'\n'"preemptions  $(jq .preemptions minimized.json) (minimized from $(jq .preemptions "$trace"))"$'\n'* ]]
	run -0 minimize_to_show "$trace"
	[[ "$output" == *"failure: task 0 raised builtins.AssertionError"* ]]
	run -0 replay_to_show "$trace"
	[[ "$output" == *"failure: task 0 raised builtins.AssertionError"* ]]
}

@test "malformed traces exit 2 naming the file and the problem" {
	ploom-run-one "$SCN:bank_locked" > good.json
	echo 'not json' > bad.json
	run -2 --separate-stderr ploom-show bad.json
	[ -z "$output" ]
	[ "$stderr" = "ploom-show: cannot read trace 'bad.json': not valid JSON (line 1)" ]
	jq '.version = 9' good.json > v9.json
	run -2 --separate-stderr ploom-show v9.json
	[ "$stderr" = "ploom-show: cannot read trace 'v9.json': unknown format version 9 (this ploom reads 1 to 2)" ]
	jq 'del(.steps)' good.json > nosteps.json
	run -2 --separate-stderr ploom-show nosteps.json
	[ "$stderr" = "ploom-show: cannot read trace 'nosteps.json': missing field 'steps'" ]
	jq '.steps[2].task = "x"' good.json > badtask.json
	run -2 --separate-stderr ploom-show badtask.json
	[ "$stderr" = "ploom-show: cannot read trace 'badtask.json': field 'steps[2].task' is not an integer" ]
	head -c 100 good.json > cut.json
	run -2 --separate-stderr ploom-show cut.json
	[[ "$stderr" == "ploom-show: cannot read trace 'cut.json': not valid JSON"* ]]
	run -2 --separate-stderr ploom-show - < bad.json
	[ "$stderr" = "ploom-show: cannot read trace '<stdin>': not valid JSON (line 1)" ]
	run -2 --separate-stderr ploom-show < /dev/null
	[[ "$stderr" == "ploom-show: cannot read trace '<stdin>': "* ]]
	run -2 --separate-stderr ploom-show no-such.json
	[ "$stderr" = "ploom-show: cannot read trace 'no-such.json': No such file or directory" ]
}

@test "a full disk is an error, a closed pipe is not" {
	ploom-run-one -s 3000 "$SCN:spins_forever" > long.json || [ $? -eq 3 ]
	run -2 --separate-stderr show_to_dev_full long.json
	[ "$stderr" = "ploom-show: cannot write to standard output: No space left on device" ]
	run -0 --separate-stderr show_to_head long.json
	[ "$output" = "scenario     scenarios:spins_forever" ]
	[ -z "$stderr" ]
}

@test "colour only with --color=always" {
	trace="$(failing_trace "$BANK:scenario")"
	ploom-show "$trace" > plain.txt
	ploom-show --color=never "$trace" > never.txt
	ploom-show --color=auto "$trace" > auto.txt
	ploom-show --color=always "$trace" > always.txt
	run -1 grep -q $'\e' plain.txt
	cmp plain.txt never.txt
	cmp plain.txt auto.txt
	grep -q $'\e\\[1;31mfailure\e\\[0m: task 0 raised' always.txt
	# without the escapes it is the plain rendering
	sed $'s/\e\\[[0-9;]*m//g' always.txt | cmp - plain.txt
}

@test "--width cuts long values with ..." {
	ploom-run-one "$SCN:try_lock" > run.json
	ploom-show --width=8 run.json | unwrap > narrow.txt
	grep -qE '  read cell#0 -> 0 +tests/python/scenarios\.py' narrow.txt
	jq '(.steps[] | select(.op == "read") | .value) = "'"'$(printf 'x%.0s' {1..60})'"'"' \
		run.json > long.json
	ploom-show long.json | unwrap > shown.txt
	# 28 wide: "read cell#0 -> " and 13 characters of the value
	grep -qE "  read cell#0 -> 'x{9}\.\.\.  +tests/python/scenarios\.py" shown.txt
	ploom-show -w 80 long.json | unwrap > wide.txt
	grep -qE "  read cell#0 -> 'x{60}'  +tests/python/scenarios\.py" wide.txt
}

@test "usage errors exit 2 with a message" {
	run -2 --separate-stderr ploom-show --color=blue x.json
	[[ "$stderr" == "ploom-show: invalid --color 'blue'"$'\n'"usage: ploom-show "* ]]
	run -2 --separate-stderr ploom-show -w 3 x.json
	[[ "$stderr" == "ploom-show: invalid --width '3'"* ]]
	run -2 --separate-stderr ploom-show a.json b.json
	[[ "$stderr" == "ploom-show: unexpected argument 'b.json'"* ]]
	run -2 --separate-stderr ploom-show --format=xml x.json
	[[ "$stderr" == "ploom-show: invalid --format 'xml'"$'\n'"usage: ploom-show "* ]]
	run -2 --separate-stderr ploom-show --bogus
	[[ "$stderr" == "ploom-show: unknown option '--bogus'"* ]]
	run -2 --separate-stderr ploom-show -w
	[[ "$stderr" == "ploom-show: missing value for option '-w'"* ]]
}

@test "every format the usage lists draws a trace and is described in the manual page" {
	local trace usage names name described
	trace=$(failing_trace "$BANK:scenario")
	usage=$(ploom-show --help)
	# the --format paragraph: the formats are its words before " ("
	usage=${usage##*--format=FORMAT}
	usage=${usage%%--color=WHEN*}
	mapfile -t names < <(grep -oE '(^|[ ,])[a-z]+ \(' <<<"$usage" | tr -d ' ,(')
	[ "${#names[@]}" -ge 3 ]
	described=$(sed -n '/^\.BR \\-\\-format =/,/^\.TP$/p' "$ROOT/man/ploom-show.1")
	for name in "${names[@]}"; do
		run -0 ploom-show --format="$name" "$trace"
		[ -n "$output" ]
		grep -qE "^\.BR? $name( |:|$)" <<<"$described" || {
			echo "man/ploom-show.1 does not describe --format=$name" >&2
			return 1
		}
	done
}

@test "--format=html writes one page: a lane per task, the failing step marked" {
	trace="$(failing_trace "$BANK:scenario")"
	run -0 --separate-stderr ploom-show --format=html "$trace"
	[ -z "$stderr" ]
	echo "$output" > page.html
	[ "$(head -n 1 page.html)" = "<!DOCTYPE html>" ]
	[ "$(tail -n 1 page.html)" = "</html>" ]
	# one lane per task, and in each the boxes of that task's steps
	tasks="$(jq '[0, .steps[].task, .steps[].enabled[]] | unique | length' "$trace")"
	[ "$(grep -c '<g class="lane"' page.html)" -eq "$tasks" ]
	for task in 0 1 2; do
		[ "$(grep -c "<g class=\"step[^\"]*\" id=\"step-[0-9]*\" data-task=\"$task\">" page.html)" \
			-eq "$(jq --argjson t "$task" '[.steps[] | select(.task == $t)] | length' "$trace")" ]
	done
	last="$(jq '[.steps[] | select(.task == 0)] | last | .index' "$trace")"
	[ "$(grep -c 'class="step failing"' page.html)" -eq 1 ]
	grep -q "<g class=\"step failing\" id=\"step-$last\" data-task=\"0\">" page.html
	[ "$(grep -c '<path class="arrow preemption"' page.html)" -eq "$(jq .preemptions "$trace")" ]
	# the threads' names head the lanes; each box says where its step stopped
	grep -q '>mathieu</text>' page.html
	grep -q '>lucas</text>' page.html
	[ "$(grep -o '<text class="where"' page.html | wc -l)" -eq "$(jq '[.steps[] | select(.where)] | length' "$trace")" ]
	grep -q '>examples/bank_account.py:[0-9]* withdraw</text>' page.html
	# the racing pairs as arrows, one of them the race the failure rests
	# on, which the facts say in words as ploom-show's text does
	grep -q '<path class="arrow race' page.html
	[ "$(grep -c '<path class="arrow race key"' page.html)" -eq 1 ]
	race="$(ploom-show "$trace" | sed -n 's/^race  *//p')"
	[ -n "$race" ]
	grep -qF "<tr><th>race</th><td><span class=\"race\">$race</span></td></tr>" page.html
	grep -qx 'AssertionError: the account is overdrawn' page.html
	grep -qx '</pre>' page.html
	# self-contained: nothing to run or fetch
	run -1 grep -E '<script|src=|href=' page.html
}

@test "the page tags the racing pairs as the text does, on arrows that do not share a track" {
	trace="$(failing_trace "$BANK:scenario")"
	ploom-show --format=html "$trace" > page.html
	ploom-show "$trace" > text.txt
	# the tags beside each step's number, as in the text's rows (a step
	# number after the marks and the tags)
	sed -nE 's/^[ *][ !] ([a-zA-Z+]+) +([0-9]+) .*/\2 \1/p' text.txt | sort > text-tags.txt
	[ -s text-tags.txt ]
	grep -oE '>[0-9]+</text><text class="tags" x="[0-9]+" y="[0-9]+">[a-zA-Z+]+<' page.html \
		| sed -E 's/^>([0-9]+)<.*>([^<]*)<$/\1 \2/' | sort > page-tags.txt
	diff text-tags.txt page-tags.txt
	# each pair's arrow: its tag at both its steps, and pairs whose rows
	# overlap (the bank's meet at one step) on tracks of their own
	grep -oE '<path class="arrow race[^"]*" data-from="[0-9]+" data-to="[0-9]+" data-tag="[a-zA-Z+]" data-track="[0-9]+"' page.html \
		| sed -E 's/.*data-from="([0-9]+)" data-to="([0-9]+)" data-tag="(.)" data-track="([0-9]+)"/\1 \2 \3 \4/' > arrows.txt
	# an arrow per tag the text shows
	[ "$(wc -l < arrows.txt)" -ge 2 ]
	[ "$(wc -l < arrows.txt)" -eq "$(cut -d' ' -f2 text-tags.txt | grep -o . | sort -u | wc -l)" ]
	overlapping=0
	while read -r from to tag track; do
		grep -qE "^$from [a-zA-Z]*$tag" page-tags.txt
		grep -qE "^$to [a-zA-Z]*$tag" page-tags.txt
		while read -r from2 to2 tag2 track2; do
			[ "$tag" != "$tag2" ] || continue
			if ((from <= to2 && from2 <= to)); then
				overlapping=$((overlapping + 1))
				[ "$track" -ne "$track2" ]
			fi
		done < arrows.txt
	done < arrows.txt
	[ "$overlapping" -ge 2 ]
}

@test "the page says each fact once and names each task as its lane does" {
	trace="$(failing_trace "$BANK:scenario")"
	ploom-show --format=html "$trace" > page.html
	# the scenario is the heading, the outcome the line under it: no row
	# of the facts says them again
	grep -qx '<h1>bank_account:scenario</h1>' page.html
	run -1 grep -F '<th>scenario</th>' page.html
	run -1 grep -F '<th>outcome</th>' page.html
	[ "$(grep -c '<th>target</th>' page.html)" -eq 1 ]
	summary="$(jq -r .outcome.summary "$trace")"
	grep -qxF "<p class=\"summary failure\">$summary</p>" page.html
	[ "$(grep -cF "<td>$summary</td>" page.html)" -eq 0 ]
	# every row of the facts says a value no other row says
	[ -z "$(grep -oE '<td>.*</td>' page.html | sort | uniq -d)" ]
	# the task that raised by its lane's name; no "task N" on the page
	grep -qF '<span class="kind failure">failure</span>: MainThread raised builtins.AssertionError: the account is overdrawn</p>' page.html
	run -1 grep -E 'task [0-9]' page.html
	# the text keeps its words
	ploom-show "$trace" | grep -qx 'failure: task 0 raised builtins.AssertionError: the account is overdrawn'
	ploom-show "$trace" | grep -q '^scenario  *bank_account:scenario$'
}

@test "a real browser shows the page: its lanes, the failing step, no script from the trace" {
	need_browser
	trace="$(failing_trace "$BANK:scenario")"
	# a trace is untrusted: markup in its strings must come out as text
	jq '.outcome.exception.message = "<script>document.title=\"pwned\"</script>"
		| .outcome.traceback += "<script>document.title=\"pwned\"</script>"
		| .steps[3].value = "\"><script>document.title=\"pwned\"</script>"' \
		"$trace" > hostile.json
	ploom-show --format=html hostile.json > page.html
	run -0 --separate-stderr "${BROWSER[@]}" --dump-dom "file://$PWD/page.html"
	echo "$output" > dom.html
	# the browser parsed the page we meant: a lane per task, titled, the
	# boxes inside them, the failing one red
	[ "$(grep -c '<g class="lane"' dom.html)" -eq 3 ]
	[ "$(grep -oE 'class="lane-title"[^>]*>[^<]*<' dom.html | sed -E 's/.*>([^<]*)</\1/' | tr '\n' ' ')" = "MainThread mathieu lucas " ]
	[ "$(grep -c '<g class="step' dom.html)" -eq "$(jq '.steps | length' hostile.json)" ]
	last="$(jq '[.steps[] | select(.task == 0)] | last | .index' hostile.json)"
	grep -q "<g class=\"step failing\" id=\"step-$last\" data-task=\"0\">" dom.html
	# no element came from the trace's strings, and no script ran
	run -1 grep -i '<script' dom.html
	grep -q '<title>bank_account:scenario - failure - ploom</title>' dom.html
	grep -qF '&lt;script&gt;document.title="pwned"&lt;/script&gt;</p>' dom.html
	# a screenshot of the expected size that shows the page and its red
	run -0 --separate-stderr "${BROWSER[@]}" --window-size=800,700 --screenshot="$PWD/shot.png" \
		"file://$PWD/page.html"
	[ -s shot.png ]
	python3 "$ROOT/tests/bats/png_pixels.py" shot.png 207,34,46 > pixels.txt
	read -r width height colours < pixels.txt
	[ "$width" -eq 800 ]
	[ "$height" -eq 700 ]
	# text in several colours, not a blank or an error page
	[ "$colours" -gt 100 ]
	# the failing step's red border (#cf222e)
	[ "$(sed -n 2p pixels.txt)" -gt 100 ]
}

@test "--format=json writes the trace back normalised, the same bytes when read again" {
	trace="$(failing_trace "$BANK:scenario")"
	# another layout, a field this ploom does not know
	jq -c '.extra = 1' "$trace" > compact.json
	run -0 --separate-stderr ploom-show --format=json compact.json
	[ -z "$stderr" ]
	echo "$output" > once.json
	ploom-show --format=json once.json > twice.json
	cmp once.json twice.json
	ploom-show --format=json "$trace" > from-original.json
	cmp once.json from-original.json
	[ "$(jq 'has("extra")' once.json)" = false ]
	# the recorded paths, not rewritten for this checkout
	[ "$(jq -r .scenario.file once.json)" = "$(jq -r .scenario.file "$trace")" ]
	jq -en 'input as $a | input | .steps == $a.steps and .outcome == $a.outcome' once.json "$trace"
	run -0 show_json_to_jq "$trace"
	[ "$output" = "builtins.AssertionError: the account is overdrawn" ]
	# a text rendering of it is the text rendering of the original
	ploom-show once.json > a.txt
	ploom-show "$trace" > b.txt
	cmp a.txt b.txt
}

@test "every format: a full disk is an error, a closed pipe is not" {
	ploom-run-one -s 3000 "$SCN:spins_forever" > long.json || [ $? -eq 3 ]
	for format in html json; do
		run -2 --separate-stderr show_to_dev_full long.json --format="$format"
		[ "$stderr" = "ploom-show: cannot write to standard output: No space left on device" ]
		run -0 --separate-stderr show_to_head --format="$format" long.json
		[ -n "$output" ]
		[ -z "$stderr" ]
	done
}

@test "--help and --version exit 0 on stdout" {
	run -0 ploom-show --help
	[[ "$output" == "usage: ploom-show "* ]]
	run -0 ploom-show -V
	[[ "$output" == "ploom-show (ploom) "* ]]
}
