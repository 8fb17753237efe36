#!/bin/sh
# Moving and zooming in the viewer at two sizes under the same
# conditions: every stacking mode built first (m six times; a key script
# waits for the mode shown), then the same moves at every zoom level: 20
# l, 10 h, PgDn, PgUp and + nine times, then - and l thirteen times; 200x50,
# headless. The runs alternate between the files (and the binaries, with
# BEFORE=), so that a change in the machine's load falls on all of them.
#
# Per key kind it prints, for each file, the median over the runs of each
# run's p50 (with the lowest and highest) and p99, in milliseconds of the
# process's CPU time per key (the latency log's third column: after the
# modes are built the loop's thread is the only one, and on a shared
# machine the wall time also counts waiting for a core), and the ratio
# large/small of the p50 medians, the figure "no slower than at 1 GB"
# asks of; then the l keys by zoom level, where the outer levels' moves,
# which land farthest, show apart from the others.
#
# usage: bench/tui_moves.sh SMALL LARGE [RUNS]
#   SMALL, LARGE  two snapshots (the 1 and 10 GB training files of
#                 gensnap.sh, for instance)
#   RUNS          runs of each file (default 5)
# environment:
#   SNAPVIEW      the binary (default src/snapview of this tree)
#   BEFORE        a second binary, run alternately with the first and
#                 reported on its own lines ("before")
#   BENCH_DIR     where the index cache and the logs go (default
#                 /tmp/snapview-bench)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/alternate.sh"
alternate_init moves "$@"

moves() { # N KEY
	i=0; while [ $i -lt "$1" ]; do echo "$2"; i=$((i + 1)); done
}
script=$dir/moves.script
{
	moves 6 m
	for z in 0 1 2 3 4 5 6 7 8; do
		moves 20 l; moves 10 h
		echo '<PgDn>'; echo '<PgUp>'; echo '+'
	done
	for z in 0 1 2 3 4 5 6 7 8 9 10 11 12; do echo '-'; echo l; done
	echo ':quit'
} > "$script"

run() { # BINARY FILE LOG
	rm -f "$3"
	SNAPVIEW_SCRIPT=$script SNAPVIEW_LATENCY_LOG=$3 LINES=50 COLUMNS=200 \
	    LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm \
	    "$1" --cache-dir "$dir/cache" "$2" > /dev/null
}

set -- after "$bin"
[ -n "${BEFORE:-}" ] && set -- "$@" before "$BEFORE"
# builds the indexes once (not measured)
echo ':quit' > "$dir/moves-open.script"
for f in "$small" "$large"; do
	SNAPVIEW_SCRIPT=$dir/moves-open.script LINES=50 COLUMNS=200 \
	    TERM=xterm "$bin" --cache-dir "$dir/cache" "$f" > /dev/null
done
alternate "$runs" "$dir/moves" "$@"

alternate_head "moving and zooming at two sizes (CPU ms per key, 200x50)"
python3 - "$dir/moves" "$runs" $names <<'EOF'
import statistics, sys

d, runs, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def pct(v, p):
    v = sorted(v)
    return v[int((len(v) - 1) * p)]

print("%-7s %-4s %5s  %-24s %-24s %s" % ("binary", "key", "keys",
      "small p50 (range) p99", "large p50 (range) p99", "large/small"))
for name in names:
    for k in ("l", "h", "+", "-"):
        med = {}
        cells = []
        for size in ("small", "large"):
            p50, p99, n = [], [], 0
            for r in range(1, runs + 1):
                v = []
                for line in open("%s/%s.%s.%d" % (d, name, size, r)):
                    f = line.split()
                    if len(f) == 3 and f[0] == k:
                        v.append(int(f[2]) / 1000.0)
                if v:
                    p50.append(pct(v, 0.5))
                    p99.append(pct(v, 0.99))
                    n = len(v)
            med[size] = statistics.median(p50)
            cells.append("%.2f (%.2f-%.2f) %.2f" % (med[size], min(p50),
                         max(p50), statistics.median(p99)))
        print("%-7s %-4s %5d  %-24s %-24s %.2fx" % (name, k, n, cells[0],
              cells[1], med["large"] / med["small"]))

# The same l keys by zoom level (the median of the 20 at each of the
# nine levels, all runs together): a p50 over every level hides the
# moves of the outer levels, which land farthest and cost the most.
print()
print("l by zoom level, from the whole trace in: median CPU ms")
for name in names:
    row = {}
    for size in ("small", "large"):
        row[size] = []
        for z in range(9):
            v = []
            for r in range(1, runs + 1):
                ls = [int(f[2]) / 1000.0 for f in
                      (line.split() for line in
                       open("%s/%s.%s.%d" % (d, name, size, r)))
                      if len(f) == 3 and f[0] == "l"]
                v += ls[z * 20:(z + 1) * 20]
            row[size].append(statistics.median(v) if v else 0.0)
        print("%-7s %-6s %s" % (name, size,
              " ".join("%5.2f" % x for x in row[size])))
    print("%-7s %-6s %s" % (name, "ratio", " ".join(
          "%4.2fx" % (b / a if a > 0 else 0) for a, b in
          zip(row["small"], row["large"]))))
EOF
