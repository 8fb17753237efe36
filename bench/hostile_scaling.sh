#!/bin/sh
# Time must grow linearly with a hostile file's size (issue 9). For each
# shape that once made a pass quadratic, generates files of size N and 4N
# and prints the time ratio: about 4 is linear, 16 quadratic.
#   orphan blocks: N orphaned segment "blocks" lists, then N segments
#                  (the loader; `stats`)
#   devices:       N segments, each on its own device (per-device loops
#                  over all segments; `stats`)
#   overlaps:      N segments of one device, stacked at one address
#                  (the overlap check; `check`)
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
# gen_segs N MODE: N one-block segments, on N devices or stacked on one
gen_segs() {
	python3 - "$1" "$2" <<'PY'
import pickle, sys
n, mode = int(sys.argv[1]), sys.argv[2]
segs = []
for i in range(n):
    dev = i % 65536 if mode == "devices" else 0
    addr = 0x7f0000000000 + (i // 65536 << 21 if mode == "devices" else 0)
    segs.append({"device": dev, "address": addr, "total_size": 1 << 21,
                 "allocated_size": 0, "active_size": 0, "requested_size": 0,
                 "stream": 0, "segment_type": "large", "frames": [],
                 "blocks": [{"address": addr, "size": 1 << 21,
                             "requested_size": 0, "state": "inactive"}]})
sys.stdout.buffer.write(pickle.dumps({"segments": segs, "device_traces": []}, 4))
PY
}
# t CMD FILE: seconds of user+sys CPU
t() {
	/usr/bin/time -f '%U %S' -o "$w/time" "$sv" "$1" --no-cache "$2" \
	    >/dev/null 2>&1 || true
	tail -n 1 "$w/time" | awk '{ print $1 + $2 }'
}
# report LABEL CMD: times $w/a.pickle and $w/b.pickle
report() {
	ta=$(t "$2" "$w/a.pickle")
	tb=$(t "$2" "$w/b.pickle")
	echo "$1: N=$n ${ta}s, 4N ${tb}s, ratio $(echo "scale=1; $tb / ($ta + 0.001)" | bc) (linear ~4, quadratic ~16)"
}
gen "$n" >"$w/a.pickle"
gen $((4 * n)) >"$w/b.pickle"
report "orphan blocks (stats)" stats
m=$((n / 5))
gen_segs "$m" devices >"$w/a.pickle"
gen_segs $((4 * m)) devices >"$w/b.pickle"
n=$m report "devices (stats)" stats
gen_segs "$m" one >"$w/a.pickle"
gen_segs $((4 * m)) one >"$w/b.pickle"
n=$m report "overlaps (check)" check
