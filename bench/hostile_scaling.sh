#!/bin/sh
# Cost must grow linearly with what a hostile file controls (issues 9 and
# 18). For each shape that once made a pass quadratic, generates a file
# of size N and one of 4N, runs one command on each (no index on disk)
# and prints the ratios of CPU time and of memory: about 4 is linear, 16
# quadratic; the bound is 5 ("ok" or "OVER"). Memory is peak RSS above
# that of the same command on an empty snapshot, measured in this run.
#   orphan blocks:  N popped segment dicts with a blocks list, then N
#                   segments (the loader; stats)
#   devices:        N devices, 4 segments each (stats)
#   device number:  one empty segment on device N - 1 (stats; the index
#                   numbers devices densely: time must not follow it)
#   trace lists:    N trace lists, all empty but the last (stats: the
#                   loader's trace array, the index's devices)
#   traced devices: N devices, each with a segment and a one-event trace
#                   (stats: the index builds a replay per device)
#   overlaps:       N segments of one device stacked at one address
#                   (check)
#   desc. allocs:   N allocs in descending address order in one segment
#                   (check: replay inserts)
#   desc. segments: N segment_allocs in descending address order (check,
#                   then trace)
#   hash flood:     N allocs, then their frees, at addresses that a fixed
#                   mixing function sends to one hash slot (stats: the
#                   index's pairing of allocs and frees; the map is now
#                   keyed per process)
# usage: bench/hostile_scaling.sh [SCALE]   (default 1: N as below, the
# N run of each taking about 0.1 to 0.5 s; run from a build directory or
# set SNAPVIEW). Needs python3 and /usr/bin/time; about 2 minutes and
# 200 MB of /tmp. Prints the load average: on a busy machine the time
# ratios wander, so each run is the least of three.
set -eu
scale=${1:-1}
sv=${SNAPVIEW:-./src/snapview}
w=$(mktemp -d "${TMPDIR:-/tmp}/sv-scale.XXXXXX")
trap 'rm -rf "$w"' EXIT
fail=0

# gen SHAPE N: writes the pickle of SHAPE with size parameter N
gen() {
	python3 - "$1" "$2" <<'PY'
import pickle, sys
shape, n = sys.argv[1], int(sys.argv[2])
A, MIB = 0x7F0000000000, 1 << 20
def s(x):
    b = x.encode()
    return b"\x8c" + bytes([len(b)]) + b
def seg(dev, addr, size, blocks):
    return {"device": dev, "address": addr, "total_size": size,
            "allocated_size": 0, "active_size": 0, "requested_size": 0,
            "stream": 0, "segment_type": "large", "frames": [],
            "blocks": blocks}
def ev(action, addr, size):
    return {"action": action, "addr": addr, "size": size, "stream": 0,
            "frames": []}
out = sys.stdout.buffer
if shape == "orphan":
    b = bytearray(b"\x80\x04}" + s("segments") + b"]\x94" + s("blocks") + b"\x940")
    b += b"}h\x01]s0" * n
    b += b"(" + b"}" * n + b"e"
    b += b"s."
    out.write(bytes(b))
    sys.exit(0)
if shape == "empty":
    snap = {"segments": [], "device_traces": []}
elif shape == "devices":
    snap = {"segments": [seg(i, A + k * 2 * MIB, 2 * MIB,
                             [{"address": A + k * 2 * MIB, "size": 2 * MIB,
                               "requested_size": 0, "state": "inactive"}])
                         for i in range(n) for k in range(4)],
            "device_traces": []}
elif shape == "devnum":
    snap = {"segments": [seg(n - 1, 0, 0, [])]}
elif shape == "lists":
    snap = {"segments": [], "device_traces": [[] for _ in range(n - 1)] +
            [[ev("alloc", A, 1)]]}
elif shape == "traced":
    blocks = lambda: [{"address": A, "size": 512, "requested_size": 100,
                       "state": "active_allocated"},
                      {"address": A + 512, "size": 2 * MIB - 512,
                       "requested_size": 0, "state": "inactive"}]
    snap = {"segments": [seg(i, A, 2 * MIB, blocks()) for i in range(n)],
            "device_traces": [[ev("alloc", A, 100)] for _ in range(n)]}
elif shape == "overlaps":
    snap = {"segments": [seg(0, A, 2 * MIB,
                             [{"address": A, "size": 2 * MIB,
                               "requested_size": 0, "state": "inactive"}])
                         for _ in range(n)], "device_traces": []}
elif shape == "descalloc":
    evs = [ev("segment_alloc", A, (n + 1) * 512)]
    evs += [ev("alloc", A + i * 512, 512) for i in range(n, 0, -1)]
    snap = {"segments": [], "device_traces": [evs]}
elif shape == "flood":
    # the inverse of the fixed mix the hash maps used: every address
    # below once went to slot 0, whatever the table size
    M64, inv = (1 << 64) - 1, pow(0xff51afd7ed558ccd, -1, 1 << 64)
    def unmix(h):
        h ^= h >> 33
        h = h * inv & M64
        return h ^ h >> 33
    addrs = [unmix(j << 32) for j in range(1, n + 1)]
    snap = {"segments": [], "device_traces": [
        [ev("alloc", a, 512) for a in addrs] +
        [ev("free_completed", a, 512) for a in addrs]]}
elif shape == "descseg":
    evs = [ev("segment_alloc", A + i * 2 * MIB, 2 * MIB) for i in range(n, 0, -1)]
    snap = {"segments": [], "device_traces": [evs]}
out.write(pickle.dumps(snap, 4))
PY
}

# run CMD FILE MODE: "cpu_seconds peak_kb exit" of snapview CMD FILE,
# the least of three runs (other processes only ever add); MODE open:
# each run builds the index afresh; reopen: each run finds it built.
# An exit status of 2 or 3 (the file refused) or above 4 is kept.
run() {
	rm -rf "$w/cache"
	if [ "$3" = reopen ]; then
		"$sv" $1 --cache-dir "$w/cache" "$2" >/dev/null 2>&1 || true
	fi
	for k in 1 2 3; do
		[ "$3" = open ] && rm -rf "$w/cache"
		/usr/bin/time -f '%U %S %M %x' -o "$w/time" "$sv" $1 \
		    --cache-dir "$w/cache" "$2" >/dev/null 2>"$w/err" || true
		tail -n 1 "$w/time"
		# a run of seconds is not noise: once is enough
		awk '{ exit !($1 + $2 > 2) }' "$w/time" && break
	done | awk '{ t = $1 + $2; if (NR == 1 || t < bt) bt = t
		if (NR == 1 || $3 < bm) bm = $3
		if ($4 == 2 || $4 == 3 || $4 > 4) bad = $4 }
		END { if (NR == 0) bad = 127; print bt + 0, bm + 0, bad + 0 }'
}

# case LABEL SHAPE N CMD: open and reopen
case_() {
	gen "$2" "$3" >"$w/a.pickle"
	gen "$2" $((4 * $3)) >"$w/b.pickle"
	one "$@" open
	one "$@" reopen
}

# one LABEL SHAPE N CMD MODE
one() {
	m=$5
	set -- "$1" "$2" "$3" "$4$([ "$5" = reopen ] && echo '*')" \
	    $(run "$4" "$w/e.pickle" "$m") $(run "$4" "$w/a.pickle" "$m") \
	    $(run "$4" "$w/b.pickle" "$m")
	# $5 $6 $7: empty; $8 $9 ${10}: N; ${11} ${12} ${13}: 4N (time,
	# memory, exit status when above 1: the file was refused)
	awk -v l="$1" -v n="$3" -v c="$4" -v e="$6" -v ta="$8" -v ma="$9" \
	    -v tb="${11}" -v mb="${12}" -v xa="${10}" -v xb="${13}" \
	    -v sa="$(wc -c <"$w/a.pickle")" 'BEGIN {
		dma = ma - e; dmb = mb - e; if (dma < 1024) dma = 1024
		rt = tb / (ta > 0.01 ? ta : 0.01); rm = dmb / dma
		v = (rt <= 5 && rm <= 5) ? "ok" : "OVER"
		if (xa > 0 || xb > 0) v = "EXIT " xa "/" xb
		printf "%-15s %-6s N=%-7d %8d B  %7.2fs %7.2fs  x%5.1f  %6.1f MB %6.1f MB  x%5.1f  %s\n",
		    l, c, n, sa, ta, tb, rt, dma / 1024, dmb / 1024, rm, v
		exit (v == "ok" ? 0 : 1) }' || fail=1
}

gen empty 0 >"$w/e.pickle"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
printf '%-15s %-6s %-9s %10s  %8s %8s  %6s  %9s %9s  %6s\n' shape cmd size \
    "file N" "time N" "4N" ratio "mem N" "4N" ratio
echo "(cmd*: the reopen, with the index built)"
# (the value stack stops at 2^20 entries and devices at 65,536: 4N of the
# orphans, the devices, the device number and the trace lists is at the
# limit; 65,536 trace lists once took 431 s, device 65535 291 s)
case_ "orphan blocks" orphan 250000 stats
case_ devices devices 16384 stats
case_ "device number" devnum 16384 stats
case_ "trace lists" lists 16384 stats
case_ "traced devices" traced $((2048 * scale)) stats
case_ overlaps overlaps $((100000 * scale)) check
case_ "desc. allocs" descalloc $((250000 * scale)) check
case_ "desc. segments" descseg $((150000 * scale)) check
case_ "desc. segments" descseg $((150000 * scale)) trace
case_ "hash flood" flood $((200000 * scale)) stats
exit $fail
