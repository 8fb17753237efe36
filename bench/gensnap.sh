#!/bin/sh
# bench/gensnap.sh [MB] [SHORT_MB] [SCENARIOS] -- output speed of
# contrib/gensnap.py.
#
# 1. `leak` (the scenario whose live set grows without bound) and
#    `training` with Python and with C++ stacks, about MB megabytes each
#    (default 1000), and the same configurations at SHORT_MB (default 50):
#    the ratio of the two rates shows whether the speed decays with size
#    (SCENARIOS, default "leak training training-fast", replaces them;
#    when it is given, part 2 is skipped; `training-fast` is the training
#    scenario written with --fast, one simulated period of steps copied
#    as bytes, contrib/gensnap_fast.py);
# 2. every scenario with both stack kinds at about SHORT_MB megabytes
#    (`wrapped`: a ring buffer of N events out of 1.1 N, `oom`: N events
#    of steady steps, then growing batches until it runs out of memory).
#
# Each run prints bytes per event, MB/s per CPU second (user + sys of the
# whole process, from /usr/bin/time; `gen MB/s` is the CPU rate gensnap
# reports itself, without interpreter start-up and exit) and per wall
# second.  Machines are shared and noisy, so every run is paired with a
# baseline measured just after it: a Python loop that appends the same
# number of byte strings of the same mean size to a bytearray and writes
# them out in 64 KiB pieces, i.e. the least a Python program writing that
# many events does.  `x base` is gensnap's CPU time over the baseline's
# (both without start-up): compare those across machines, not seconds.
# Files go to bench/out/ and are removed after each run.
set -eu
cd "$(dirname "$0")/.."
mb=${1:-1000}
short=${2:-50}
big=${3-leak training training-fast}
out=bench/out
mkdir -p "$out"
py=${PYTHON3:-python3}
f=$out/gensnap-bench.pickle
trap 'rm -f "$f" "$out/gensnap-time.txt" "$out/gensnap-err.txt"' EXIT INT TERM

# bytes per event of each configuration, to size --events (measured by
# this script; the runs print the real figure)
bpe() {
	case "$1-$2" in
	leak-python|frag-python|wrapped-python) echo 86 ;;
	oom-python) echo 67 ;;
	multi-python|expandable-python|graphs-python) echo 65 ;;
	npu-python) echo 55 ;;
	training-python) echo 93 ;;
	training-cpp) echo 167 ;;
	legacy-python) echo 50 ;;
	*-cpp) echo 180 ;;
	esac
}

baseline() { # events bytes_per_event -> CPU seconds
	"$py" -c '
import sys, time
t0 = time.process_time()
n, size = int(sys.argv[1]), int(sys.argv[2])
size = max(size - 8, 2)
head, tail = b"}" * (size // 2), b"u" * (size - size // 2)
buf = bytearray()
with open(sys.argv[3], "wb") as f:
    for i in range(n):
        buf += head + i.to_bytes(8, "little") + tail
        if len(buf) >= 65536:
            f.write(buf)
            buf = bytearray()
    f.write(buf)
print("%.3f" % (time.process_time() - t0))
' "$1" "$2" "$f"
}

run() { # scenario[-fast] stacks mb [extra args]
	# (sh has no local variables: the callers' loop variable is s)
	sc=$1 k=$2 m=$3 name=$1 mode=--stream
	shift 3
	case $sc in *-fast) sc=${sc%-fast} mode=--fast ;; esac
	events=$((m * 1000000 / $(bpe "$sc" "$k")))
	extra=""
	[ "$sc" = wrapped ] && extra="--max-entries $events --events $((events * 11 / 10))"
	[ -n "$extra" ] || extra="--events $events"
	# shellcheck disable=SC2086
	/usr/bin/time -f "%U %S %e %M" -o "$out/gensnap-time.txt" \
	    "$py" contrib/gensnap.py --scenario "$sc" --stacks "$k" $mode \
	    $extra -o "$f" 2>"$out/gensnap-err.txt"
	set -- $(cat "$out/gensnap-time.txt")
	user=$1 sys=$2 wall=$3 rss=$4
	nev=$(sed -n 's/^gensnap: \([0-9]*\) events.*/\1/p' "$out/gensnap-err.txt")
	gcpu=$(sed -n 's/.* \([0-9.]*\) s CPU:.*/\1/p' "$out/gensnap-err.txt")
	size=$(stat -c %s "$f")
	rm -f "$f"
	b=$(baseline "$nev" $((size / nev)))
	rm -f "$f"
	awk -v s="$name" -v k="$k" -v n="$nev" -v size="$size" -v u="$user" \
	    -v sy="$sys" -v w="$wall" -v rss="$rss" -v b="$b" -v g="$gcpu" \
	    'BEGIN {
		cpu = u + sy
		printf "%-13s %-6s %9d %6.0f %5.1f %7.1f %6.1f %7.1f " \
		    "%6.1f %7.1f %6.1f %6.0f\n",
		    s, k, n, size / 1e6, size / n, cpu, size / 1e6 / cpu,
		    size / 1e6 / g, w, size / 1e6 / w, g / b, rss / 1024 }'
}

header() {
	printf "%-13s %-6s %9s %6s %5s %7s %6s %7s %6s %7s %6s %6s\n" \
	    scenario stacks events MB B/ev CPU_s MB/s "gen" wall_s MB/s \
	    "x base" RSS_MB
}

echo "== $big at ${short} MB and ${mb} MB (rate must not decay with size)"
header
for s in $big; do
	for k in python cpp; do
		run "$s" "$k" "$short"
		run "$s" "$k" "$mb"
	done
done
[ $# -lt 3 ] || exit 0
echo "== every scenario at ${short} MB"
header
for s in leak frag oom multi expandable graphs wrapped legacy npu training \
    training-fast; do
	for k in python cpp; do
		run "$s" "$k" "$short"
	done
done
