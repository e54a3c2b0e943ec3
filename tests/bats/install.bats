#!/usr/bin/env bats
# make install: the six utilities and the man pages (theirs and ploom's) land under
# DESTDIR/PREFIX, and man(1) reads every page there.

# $output and $status are set by bats' run
# shellcheck disable=SC2154

bats_require_minimum_version 1.5.0

UTILITIES="ploom-explore ploom-run-one ploom-minimize ploom-replay ploom-show ploom-merge"

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
	DEST="$BATS_TEST_TMPDIR/dest"
	run -0 make -s -C "$ROOT" install DESTDIR="$DEST" PREFIX=/opt/ploom
	MANROOT="$DEST/opt/ploom/share/man"
}

@test "make install puts the six utilities under DESTDIR/PREFIX/bin" {
	for u in $UTILITIES; do
		[ -x "$DEST/opt/ploom/bin/$u" ]
		run -0 "$DEST/opt/ploom/bin/$u" --version
	done
}

@test "man reads the installed page of every utility" {
	for u in $UTILITIES; do
		run -0 env MANPATH="$MANROOT" MANWIDTH=80 man -P cat 1 "$u"
		[[ "$output" == *NAME* ]]
		[[ "$output" == *"$u"* ]]
		[[ "$output" == *"EXIT STATUS"* ]]
	done
}

@test "man reads the installed trace format page in section 5" {
	run -0 env MANPATH="$MANROOT" MANWIDTH=80 man -P cat 5 ploom-trace
	[[ "$output" == *minimized_from* ]]
	[[ "$output" == *fingerprints* ]]
}

@test "man reads the installed page of ploom, the command in front of the utilities" {
	run -0 env MANPATH="$MANROOT" MANWIDTH=80 man -P cat 1 ploom
	[[ "$output" == *"ploom check"* ]]
	[[ "$output" == *"ploom replay"* ]]
	[[ "$output" == *"EXIT STATUS"* ]]
}
