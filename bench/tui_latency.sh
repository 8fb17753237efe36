#!/bin/sh
# Per-key latency of the whole TUI, headless: replays a key script (moves
# at every zoom level, zoom in/out, fit, jumps, page moves, segment and
# block selection, search) with SNAPVIEW_LATENCY_LOG set, and prints
# p50/p99/max of "key handled + screen redrawn" per key kind and overall.
# The same script runs first on a small real snapshot as the baseline, and
# the ratios large/baseline are printed.
#
# usage: bench/tui_latency.sh [SNAPSHOT] [EVENTS]
#   SNAPSHOT  large snapshot to measure (default: generated with
#             contrib/gensnap.py --scenario leak --events EVENTS into
#             $BENCH_DIR, default /tmp/snapview-bench)
#   EVENTS    events of the generated snapshot (default 5000000)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${SNAPVIEW:-$here/src/snapview}
dir=${BENCH_DIR:-/tmp/snapview-bench}
events=${2:-5000000}
mkdir -p "$dir"
big=${1:-}
if [ -z "$big" ]; then
	big=$dir/leak-$events.pickle
	[ -f "$big" ] || python3 "$here/contrib/gensnap.py" --scenario leak \
	    --events "$events" --seed 1 -o "$big"
fi
base=$here/tests/data/real/npu_leak_expandable.pickle

script=$dir/keys.script
{
	for z in 0 1 2 3 4 5 6 7 8; do
		i=0; while [ $i -lt 20 ]; do echo l; i=$((i + 1)); done
		i=0; while [ $i -lt 10 ]; do echo h; i=$((i + 1)); done
		echo '<PgDn>'; echo '<PgUp>'; echo '+'
	done
	for z in 0 1 2 3 4 5 6 7 8 9 10 11 12; do echo '-'; echo l; done
	echo 0; echo G; echo g; echo p; echo s; echo s; echo S; echo o
	echo '<Tab>'
	i=0; while [ $i -lt 10 ]; do echo j; echo l; i=$((i + 1)); done
	echo '<Enter>'; echo z; echo z; echo '<Tab>'; echo '<Tab>'
	echo '/train<Enter>'; echo n; echo n; echo N
	echo '?'; echo j; echo q
	echo ':quit'
} > "$script"

run() { # FILE LOG -> seconds to first screen on stdout
	rm -f "$2"
	t0=$(date +%s.%N)
	SNAPVIEW_SCRIPT=$script SNAPVIEW_LATENCY_LOG=$2 LINES=50 COLUMNS=200 \
	    LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm "$bin" "$1"
	t1=$(date +%s.%N)
	echo "$t0 $t1" | awk '{printf "%.2f", $2 - $1}'
}

stats() { # LOG -> "p50 p99 max n" in microseconds, all keys
	sort -n -k2 "$1" | awk '{v[NR] = $2} END {
	    p50 = v[int((NR - 1) * 0.50) + 1]; p99 = v[int((NR - 1) * 0.99) + 1];
	    printf "%d %d %d %d", p50, p99, v[NR], NR }'
}

tb=$(run "$base" "$dir/base.lat")
tl=$(run "$big" "$dir/big.lat")
set -- $(stats "$dir/base.lat"); b50=$1 b99=$2 bmax=$3
set -- $(stats "$dir/big.lat"); l50=$1 l99=$2 lmax=$3 n=$4
ev=$("$bin" stats "$big" | sed -n 's/^ *events: *\([0-9,]*\).*/\1/p' | head -1)

echo "snapview TUI per-key latency (key handled + frame drawn, 200x50)"
echo "baseline: $(basename "$base") ($tb s total run)"
echo "large:    $(basename "$big"), $ev events ($tl s total run incl. load)"
printf "%-10s %10s %10s %10s\n" "" p50_us p99_us max_us
printf "%-10s %10d %10d %10d\n" baseline "$b50" "$b99" "$bmax"
printf "%-10s %10d %10d %10d\n" large "$l50" "$l99" "$lmax"
awk -v a="$l99" -v b="$b99" 'BEGIN { printf "p99 ratio large/baseline: %.1fx\n", (b > 0 ? a / b : 0) }'
echo "keys: $n; per key kind (large): p50 / p99 / max us"
awk '{ k = $1; n[k]++; v[k, n[k]] = $2 } END {
    for (k in n) {
        m = n[k];
        for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
            if (v[k, j] < v[k, i]) { t = v[k, i]; v[k, i] = v[k, j]; v[k, j] = t }
        printf "  %-8s %5d x %8d %8d %8d\n", k, m, v[k, int((m - 1) * 0.5) + 1],
            v[k, int((m - 1) * 0.99) + 1], v[k, m]
    } }' "$dir/big.lat" | sort
