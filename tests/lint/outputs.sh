#!/bin/sh
# Digest of every command's output on every committed snapshot, so a
# change that should not alter any output can be checked by diffing two
# digests (one made before the change, one after).
#
#   tests/lint/outputs.sh [-k DIR] [-b BUILDDIR] > digest.txt
#
# Runs, on tests/data/*.pickle and tests/data/{real,gen,fixtures}/*.pickle:
# stats, check, state, trace, leaks, frag, oom and top, each in text and
# with --json, at the end and (stats, state, frag, top) at event 100 and
# before the first event; diff of each file against the next one; and the
# viewer (headless, key script) at 80x24 and 120x40: the first screen,
# the peak, the help, the leak, frag and top views. `index` is left out:
# it prints paths and timings.
#
# One line per run: SHA-256 of stdout, exit status, SHA-256 of stderr,
# then the command. With -k DIR every output is also kept under DIR (one
# file per run, named after the line), to see what changed. Paths are
# relative to the source tree, so digests of two checkouts compare.
# A development tool: make check does not run it (it takes a minute).
set -u
builddir=
keep=
while [ $# -gt 0 ]; do
	case $1 in
	-b) builddir=$2; shift 2 ;;
	-k) keep=$2; shift 2 ;;
	*) echo "usage: $0 [-k DIR] [-b BUILDDIR]" >&2; exit 1 ;;
	esac
done
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
builddir=$(cd "${builddir:-$srcdir}" && pwd)
bin=$builddir/src/snapview
[ -x "$bin" ] || { echo "$0: no $bin (build first)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/snapview-outputs.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
[ -n "$keep" ] && mkdir -p "$keep"
keep=${keep:+$(cd "$keep" && pwd)}
cd "$srcdir" || exit 1

# No index is written anywhere: every run builds its own in memory.
XDG_CACHE_HOME=$work/cache
LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC NO_COLOR=1
export XDG_CACHE_HOME LANG LC_ALL TZ NO_COLOR

# digest NAME RC  -- the line for $work/out and $work/err
digest() {
	name=$1 rc=$2
	o=$(sha256sum < "$work/out" | cut -c1-16)
	e=$(sha256sum < "$work/err" | cut -c1-16)
	echo "$o $rc $e $name"
	if [ -n "$keep" ]; then
		kf=$(echo "$name" | tr ' /' '_~')
		cp "$work/out" "$keep/$kf.out"
		[ -s "$work/err" ] && cp "$work/err" "$keep/$kf.err"
	fi
	return 0
}

# run NAME CMD...  -- one digest line for CMD
run() {
	name=$1; shift
	"$@" > "$work/out" 2> "$work/err" < /dev/null
	digest "$name" $?
}

# view NAME COLS ROWS FILE SCRIPT-LINES...  -- the viewer's screens
view() {
	vname=$1 cols=$2 rows=$3 file=$4; shift 4
	: > "$work/keys.script"
	for k in "$@"; do
		printf '%s\n' "$k" >> "$work/keys.script"
	done
	printf ':dump-screen screen.txt\n:quit\n' >> "$work/keys.script"
	rm -f "$work/screen.txt"
	(cd "$work" && env SNAPVIEW_SCRIPT=keys.script LINES="$rows" \
	    COLUMNS="$cols" TERM=xterm "$bin" --no-cache \
	    "$srcdir/$file" > /dev/null 2> "$work/verr")
	rc=$?
	[ -f "$work/screen.txt" ] || : > "$work/screen.txt"
	cp "$work/screen.txt" "$work/out"
	sed "s|$srcdir/||g" "$work/verr" > "$work/err"
	digest "view $vname ${cols}x$rows $file" $rc
}

files=$(ls tests/data/*.pickle tests/data/real/*.pickle \
    tests/data/gen/*.pickle tests/data/fixtures/*.pickle | LC_ALL=C sort)
prev=
for f in $files; do
	for j in "" --json; do
		for c in stats check state trace leaks frag oom top; do
			run "$c $j $f" "$bin" $c $j -q --no-cache "$f"
		done
		for at in -1 100; do
			for c in stats state frag top; do
				run "$c $j --at $at $f" "$bin" $c $j -q \
				    --no-cache --at "$at" "$f"
			done
		done
		if [ -n "$prev" ]; then
			run "diff $j $prev $f" "$bin" diff $j -q --no-cache \
			    "$prev" "$f"
		fi
	done
	prev=$f
	case $f in tests/data/fixtures/bad_*) continue ;; esac
	for size in "80 24" "120 40"; do
		set -- $size
		view start "$1" "$2" "$f"
		view peak "$1" "$2" "$f" p
		view help "$1" "$2" "$f" '?'
		view leaks "$1" "$2" "$f" U
		view frag "$1" "$2" "$f" F
		view top "$1" "$2" "$f" T
	done
done
