#!/bin/sh
# The viewer's first open of a snapshot (no index yet): wall seconds from
# the start to the first screen, and to the state at the cursor replayed.
# A snapshot of 256 MiB or more opens after the parse, its index's
# sections (the replay's checkpoints, the summary) added behind the
# screen (src/tui/replay_bg.c); "sections first" is the same binary
# building them before the screen, as it does for a smaller file
# (SNAPVIEW_TEST_DEFER_SECTIONS set past the file's size). Each run opens
# the file at 200x50 in tmux (the viewer needs a terminal) with a fresh
# cache directory and the latency log (SNAPVIEW_LATENCY_LOG: the
# first-screen and replay-ready lines), and quits once the replay is
# there. Runs alternate between the two ways, so that a change in the
# machine's load falls on both. It prints each run and the medians.
#
# usage: bench/tui_first_open.sh FILE [RUNS]
#   FILE   a snapshot (the 1 GB training file of gensnap.sh, for instance)
#   RUNS   runs of each way (default 3)
# environment: SNAPVIEW (the binary, default src/snapview), BENCH_DIR
# (where the cache and logs go, default a temporary directory)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
SV=${SNAPVIEW:-$top/src/snapview}
[ $# -ge 1 ] || { sed -n '2,22p' "$0" >&2; exit 2; }
file=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
runs=${2:-3}
command -v tmux >/dev/null 2>&1 || { echo "tmux not found" >&2; exit 1; }
[ -x "$SV" ] || { echo "no $SV (make first)" >&2; exit 1; }
dir=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/snapview-bench.XXXXXX")}
mkdir -p "$dir"
export TMUX_TMPDIR="$dir"
T="tmux -L snapview-bench -f /dev/null"
size=$(stat -c %s "$file")

# one LABEL [ENV...]: a run; prints its line, appends to $dir/LABEL.out
one() {
	label=$1; shift
	rm -rf "$dir/cache" "$dir/lat"
	$T kill-server 2>/dev/null
	$T new-session -d -s b -x 200 -y 50 "env LANG=C.UTF-8 \
TERM=xterm-256color SNAPVIEW_LATENCY_LOG=$dir/lat $* $SV \
--cache-dir $dir/cache $file" || exit 1
	n=0
	while :; do
		if grep -q '^replay-ready ' "$dir/lat" 2>/dev/null; then
			break
		fi
		# built before the screen: the replay is there with it
		if [ "$label" = sections-first ] &&
		    grep -q '^first-screen ' "$dir/lat" 2>/dev/null; then
			break
		fi
		n=$((n + 1))
		[ "$n" -lt 36000 ] || { echo "no replay after an hour" >&2;
			exit 1; }
		sleep 0.1
	done
	$T send-keys -t b q
	sleep 0.5
	$T kill-server 2>/dev/null
	fs=$(sed -n 's/^first-screen \([0-9]*\) .*/\1/p' "$dir/lat")
	rr=$(sed -n 's/^replay-ready \([0-9]*\)$/\1/p' "$dir/lat")
	[ -n "$rr" ] || rr=$fs
	printf '  %-15s first screen %7.2f s, replay %7.2f s\n' "$label" \
	    "$(echo "$fs / 1000000" | bc -l)" "$(echo "$rr / 1000000" | bc -l)"
	echo "$fs $rr" >> "$dir/$label.out"
}
# median COLUMN FILE, in seconds
median() {
	cut -d' ' -f"$1" "$2" | sort -n | awk '{ v[NR] = $1 }
	    END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
	    printf "%.2f", m / 1000000 }'
}

echo "$file: $size bytes; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
rm -f "$dir/screen-first.out" "$dir/sections-first.out"
# the file's pages in the page cache for both ways alike
cat "$file" > /dev/null
i=0
while [ "$i" -lt "$runs" ]; do
	one screen-first
	one sections-first SNAPVIEW_TEST_DEFER_SECTIONS=$((size + 1))
	i=$((i + 1))
done
for l in screen-first sections-first; do
	printf '%-15s median: first screen %s s, replay %s s\n' "$l" \
	    "$(median 1 "$dir/$l.out")" "$(median 2 "$dir/$l.out")"
done
echo "load now: $(cut -d' ' -f1-3 /proc/loadavg)"
