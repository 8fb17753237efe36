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
#   trace lists:   16384 and 65536 trace lists, all empty but the last
#                  (the loader's trace array, the index's devices)
#   device number: one segment on device 16383, then 65535 (the index
#                  numbers devices densely; time must not follow D)
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
# gen_lists N: N trace lists, empty but the last (one alloc), hand-written
# (65,536 lists in 64 KB once took 431 s to open: issue 18)
gen_lists() {
	python3 - "$1" <<'PY'
import sys
n = int(sys.argv[1])
def s(x):
    b = x.encode()
    return b"\x8c" + bytes([len(b)]) + b
ev = b"}(" + s("action") + s("alloc") + s("addr") + b"K\x00" + s("size") + \
    b"K\x01" + s("stream") + b"K\x00u"
out = b"\x80\x04}(" + s("segments") + b"]" + s("device_traces") + b"(" + \
    b"]" * (n - 1) + b"]" + ev + b"a" + b"lu."
sys.stdout.buffer.write(out)
PY
}
m=16384
gen_lists "$m" >"$w/a.pickle"
gen_lists $((4 * m)) >"$w/b.pickle"
n=$m report "trace lists (stats)" stats
# gen_dev D: one segment on device D (a 98-byte pickle at D = 65535)
gen_dev() {
	python3 -c 'import pickle,sys; sys.stdout.buffer.write(pickle.dumps({"segments": [{"device": int(sys.argv[1]), "address": 0, "total_size": 0, "blocks": []}]}, 2))' "$1"
}
gen_dev 16383 >"$w/a.pickle"
gen_dev 65535 >"$w/b.pickle"
n=16384 report "device number (stats)" stats
