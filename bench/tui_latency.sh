#!/bin/sh
# Per-key latency of the whole TUI, headless: replays a key script with
# SNAPVIEW_LATENCY_LOG set and prints p50/p99/max of "key handled + screen
# redrawn" per key kind and overall, at 200x50. The script moves the
# cursor at every zoom level, zooms, fits, jumps, pages, selects segments
# and blocks, searches, and works the timeline: every stacking mode (m/M,
# several rounds), band picking (K/J, Enter), y zoom and pan (> < ( ) y),
# annotation jumps ({ }) and the legend (i). The same script runs first
# on a small real snapshot as the baseline, and the ratios large/baseline
# are printed.
#
# The call-site, category, stream/pool and segment modes need a pass over
# the trace to build (once per device; the mode the viewer starts in is
# built while it opens). A worker thread builds the others once the first
# screen is up, so the first switch into a mode is an ordinary key: it
# shows "building ... bands" when they are not ready. The first five m of
# the script are still reported on their own (the overall p99 is given
# with and without them), and so is how long the bands took to come after
# each of those keys: a key script waits for the mode shown before its
# next item (the log's bands-ready lines, left out of the key figures).
#
# usage: bench/tui_latency.sh [SNAPSHOT] [EVENTS]
#   SNAPSHOT  large snapshot to measure (default: generated with
#             contrib/gensnap.py --scenario leak --events EVENTS into
#             $BENCH_DIR, default /tmp/snapview-bench; delete it after)
#   EVENTS    events of the generated snapshot (default 11600000: about
#             1 GB with Python stacks)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${SNAPVIEW:-$here/src/snapview}
dir=${BENCH_DIR:-/tmp/snapview-bench}
events=${2:-11600000}
mkdir -p "$dir/cache"
big=${1:-}
if [ -z "$big" ]; then
	big=$dir/leak-$events.pickle
	[ -f "$big" ] || python3 "$here/contrib/gensnap.py" --scenario leak \
	    --events "$events" --seed 1 -o "$big"
fi
base=$here/tests/data/real/npu_leak_expandable.pickle

moves() { # N KEY
	i=0; while [ $i -lt "$1" ]; do echo "$2"; i=$((i + 1)); done
}
script=$dir/keys.script
{
	for z in 0 1 2 3 4 5 6 7 8; do
		moves 20 l; moves 10 h
		echo '<PgDn>'; echo '<PgUp>'; echo '+'
	done
	for z in 0 1 2 3 4 5 6 7 8 9 10 11 12; do echo '-'; echo l; done
	echo 0; echo G; echo g; echo p; echo s; echo s; echo S; echo o
	echo '<Tab>'
	moves 10 'j
l'
	echo '<Enter>'; echo z; echo z; echo '<Tab>'; echo '<Tab>'
	echo '/train<Enter>'; echo n; echo n; echo N
	echo '?'; echo j; echo q
	# the timeline: modes (the first round builds them), then every
	# mode with picking, y zoom and pan, cursor moves and annotations
	echo p
	moves 5 m
	for round in 1 2 3; do
		for st in 1 2 3 4 5; do
			echo m
			moves 4 K; moves 2 J; moves 5 l; moves 5 h
			echo '>'; echo '>'; echo '('; echo ')'; echo '<'; echo y
			echo '+'; moves 3 l; echo '-'
			echo '}'; echo '{'; echo i
			echo '<Esc>'
		done
		moves 2 M
	done
	echo p; moves 3 K; echo '<Enter>'; echo '<Esc>'
	echo ':quit'
} > "$script"

run() { # FILE LOG [SCRIPT] -> seconds of the whole run on stdout; CPU
	 # seconds (user + system) in LOG.cpu when /usr/bin/time is there
	rm -f "$2"
	t0=$(date +%s.%N)
	if [ -x /usr/bin/time ]; then
		SNAPVIEW_SCRIPT=${3:-$script} SNAPVIEW_LATENCY_LOG=$2 LINES=50 \
		    COLUMNS=200 LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm \
		    /usr/bin/time -f '%U %S' -o "$2.cpu" "$bin" \
		    --cache-dir "$dir/cache" "$1"
	else
		SNAPVIEW_SCRIPT=${3:-$script} SNAPVIEW_LATENCY_LOG=$2 LINES=50 \
		    COLUMNS=200 LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm \
		    "$bin" --cache-dir "$dir/cache" "$1"
	fi
	t1=$(date +%s.%N)
	echo "$t0 $t1" | awk '{printf "%.2f", $2 - $1}'
}
# CPU milliseconds per key: (CPU of the run - CPU of opening and quitting)
# / keys; wall-clock figures on a busy machine include waiting for a core,
# CPU time does not
cpu_per_key() { # LOG OPENLOG KEYS
	[ -f "$1.cpu" ] && [ -f "$2.cpu" ] || { echo "n/a"; return; }
	awk -v k="$3" 'NR == FNR { a = $1 + $2; next } { b = $1 + $2 }
	    END { printf "%.2f", (a - b) * 1000 / k }' "$1.cpu" "$2.cpu"
}

# first use of each mode: the first five m of the script (one round
# through the modes from the one the viewer opens in) are marked "m*" in a
# copy of the log without its bands-ready lines (waits, not keys), which
# go to LOG.ready, each after the key it followed
mark_first() { # LOG -> LOG.marked, LOG.ready
	: > "$1.ready"
	awk -v r="$1.ready" '$1 == "mode-ready" || $1 == "first-screen" {
	    next }
	    $1 == "bands-ready" { print k, $2 > r; next }
	    $1 == "m" && ++n <= 5 { $1 = "m*" } { k = $1 "#" ++c; print }' \
	    "$1" > "$1.marked"
}

stats() { # LOG [SKIP] -> "p50 p99 max n" in microseconds (SKIP: key
	  # kind left out)
	awk -v skip="${2:-}" '$1 != skip' "$1" | sort -n -k2 | awk '{v[NR] = $2}
	    END { p50 = v[int((NR - 1) * 0.50) + 1];
	    p99 = v[int((NR - 1) * 0.99) + 1];
	    printf "%d %d %d %d", p50, p99, v[NR], NR }'
}

run "$big" "$dir/warm.lat" > /dev/null   # builds the index once
echo ':quit' > "$dir/open.script"
tb=$(run "$base" "$dir/base.lat")
run "$base" "$dir/base-open.lat" "$dir/open.script" > /dev/null
tl=$(run "$big" "$dir/big.lat")
run "$big" "$dir/big-open.lat" "$dir/open.script" > /dev/null
mark_first "$dir/base.lat"
mark_first "$dir/big.lat"
set -- $(stats "$dir/base.lat.marked" 'm*'); b50=$1 b99=$2 bmax=$3
set -- $(stats "$dir/big.lat.marked" 'm*'); l50=$1 l99=$2 lmax=$3 n=$4
set -- $(stats "$dir/big.lat.marked"); a99=$2 amax=$3 nall=$4
ev=$("$bin" stats --cache-dir "$dir/cache" "$big" |
    sed -n 's/^ *events: *\([0-9,]*\).*/\1/p' | head -1)

echo "snapview TUI per-key latency (key handled + frame drawn, 200x50)"
echo "load: $(uptime | sed 's/.*load average: //')"
echo "baseline: $(basename "$base") ($tb s total run)"
echo "large:    $(basename "$big"), $ev events ($tl s total run incl. load)"
printf "%-10s %10s %10s %10s\n" "" p50_us p99_us max_us
printf "%-10s %10d %10d %10d\n" baseline "$b50" "$b99" "$bmax"
printf "%-10s %10d %10d %10d\n" large "$l50" "$l99" "$lmax"
awk -v a="$l99" -v b="$b99" 'BEGIN { printf "p99 ratio large/baseline: %.1fx\n", (b > 0 ? a / b : 0) }'
echo "CPU per key, mean over all $nall keys incl. the first use of each" \
    "mode (ms): baseline" \
    "$(cpu_per_key "$dir/base.lat" "$dir/base-open.lat" "$nall"), large" \
    "$(cpu_per_key "$dir/big.lat" "$dir/big-open.lat" "$nall")"
echo "(first use of the modes left out; with them: p99 $a99 us, max $amax us)"
echo "first switch into each mode (large): the key, then how long the" \
    "bands took to come after it (- when they were ready):"
awk 'FILENAME == ARGV[1] { w[$1] = $2; next }
    $1 == "m*" { n++; k = $1 "#" FNR; printf "  m #%d %10d us  %10s\n",
    n, $2, (k in w) ? w[k] " us" : "-" }' "$dir/big.lat.ready" \
    "$dir/big.lat.marked"
first_screen() { # LOG -> "wall s, CPU s" of its first-screen line
	awk '$1 == "first-screen" { printf "%.2f s, %.2f s", $2 / 1e6,
	    $3 / 1e6 }' "$1"
}
echo "first screen, from the start (wall, CPU): baseline" \
    "$(first_screen "$dir/base.lat"), large $(first_screen "$dir/big.lat")"
echo "each mode's bands ready, after the first screen (built in the" \
    "background; modes 1 site, 2 category, 3 stream, 4 segment, 5 pool):"
for f in base big; do
	printf '  %-8s' "$f"
	awk '$1 == "mode-ready" { printf " %d:%.2fs", $2, $3 / 1e6 }' \
	    "$dir/$f.lat"
	echo
done
echo "bands waited for (large): $(wc -l < "$dir/big.lat.ready") times," \
    "$(awk '{ t += $2 } END { printf "%d", t / 1000 }' \
    "$dir/big.lat.ready") ms in all"
echo "keys: $nall ($n without the first use of each mode); per key kind" \
    "(large): p50 / p99 / max us"
awk '{ k = $1; n[k]++; v[k, n[k]] = $2 } END {
    for (k in n) {
        m = n[k];
        for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
            if (v[k, j] < v[k, i]) { t = v[k, i]; v[k, i] = v[k, j]; v[k, j] = t }
        printf "  %-8s %5d x %8d %8d %8d\n", k, m, v[k, int((m - 1) * 0.5) + 1],
            v[k, int((m - 1) * 0.99) + 1], v[k, m]
    } }' "$dir/big.lat.marked" | sort
