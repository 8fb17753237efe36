#!/bin/sh
# Time must grow linearly with a hostile file's size (issue 9). Generates
# files with N and 4N orphaned segment "blocks" lists followed by N (4N)
# segments -- the shape that made the loader quadratic -- and prints the
# time ratio of `snapview stats` on them: about 4 is linear, 16 quadratic.
# usage: bench/hostile_scaling.sh [N]   (default 100000; run from a build
# directory or set SNAPVIEW)
set -eu
n=${1:-100000}
sv=${SNAPVIEW:-./src/snapview}
w=$(mktemp -d "${TMPDIR:-/tmp}/sv-scale.XXXXXX")
trap 'rm -rf "$w"' EXIT
gen() {
	python3 - "$1" <<'PY'
import sys
n = int(sys.argv[1])
def s(x):
    b = x.encode()
    return b"\x8c" + bytes([len(b)]) + b
out = bytearray(b"\x80\x04}" + s("segments") + b"]\x94" + s("blocks") + b"\x940")
out += b"}h\x01]s0" * n          # segment dicts with a blocks list, popped
out += b"(" + b"}" * n + b"e"    # then n real (empty) segments
out += b"s."
sys.stdout.buffer.write(out)
PY
}
t() {
	s0=$(date +%s.%N)
	"$sv" stats "$1" >/dev/null
	s1=$(date +%s.%N)
	echo "$s1 - $s0" | bc
}
gen "$n" >"$w/a.pickle"
gen $((4 * n)) >"$w/b.pickle"
ta=$(t "$w/a.pickle")
tb=$(t "$w/b.pickle")
echo "orphan blocks: N=$n ${ta}s, 4N ${tb}s, ratio $(echo "scale=1; $tb / $ta" | bc) (linear ~4, quadratic ~16)"
