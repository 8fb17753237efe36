#!/bin/sh
# The viewer's first screen at two sizes: how long from the start to the
# first screen (index already built), and when each stacking mode's bands
# come after it, the worker building them in the background. Each run
# opens the file at 200x50, headless, and quits: the key script is
# ':quit' alone, and a key script waits for the mode the viewer opens in
# before its first line (the call-site mode, where one band per
# allocation would show too little of the peak: the viewer shows the
# allocations until it comes), so that mode's ready time is in the log
# too (bench/tui_latency.sh waits for every mode). Runs alternate
# between the files (and the binaries, with BEFORE=), so that a change
# in the machine's load falls on all of them.
#
# Per file it prints the median over the runs, with the lowest and the
# highest, of: the first screen in wall seconds and in the process's CPU
# seconds (the latency log's first-screen line; "-" for a build that
# writes none), the whole run's wall seconds (for any build: open, first
# screen, the mode it opens in, quit), and each mode's ready time after
# the first screen (mode-ready lines: 1 call site, 2 category, 3 stream,
# 4 segment, 5 pool; those the worker finished before the quit). And the
# ratio large/small of the first screen.
#
# SAMPLED=1 measures the bands drawn from samples while the modes are
# built (src/render/tl_sample.h): the key script goes through the modes
# at once (m five times, waiting for no build, as a user pressing m
# would meet them, only for each mode's bands drawn from samples in
# full: ":wait samples"), and each mode the viewer drew from samples
# gets a line: after the first screen, when its bands were drawn in
# full (the modes' keys come one after the other, so a later mode's
# time includes the ones before it), and how long that took from its
# first frame (each mode's own cost: the frames sample 3 ms each).
# Then it waits for every mode (":wait-modes"), so that each one's
# ready time is in the log, in the order the worker builds them for a
# user.
#
# usage: bench/tui_open.sh SMALL LARGE [RUNS]
#   SMALL, LARGE  two snapshots (the 1 and 10 GB training files of
#                 gensnap.sh, for instance)
#   RUNS          runs of each file (default 5)
# environment:
#   SNAPVIEW      the binary (default src/snapview of this tree)
#   BEFORE        a second binary, run alternately with the first and
#                 reported on its own lines ("before")
#   SAMPLED       1: the modes drawn from samples (above)
#   MODES         1: m six times before the quit, so that every mode's
#                 ready time is in the log (the whole run then includes
#                 them)
#   BENCH_DIR     where the index cache and the logs go (default
#                 /tmp/snapview-bench)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/alternate.sh"
alternate_init open "$@"
[ -x /usr/bin/time ] || { echo "needs GNU /usr/bin/time" >&2; exit 1; }

script=$dir/open/open.script
{
	# MODES=1: every mode built before the quit (m six times, the
	# script waiting for each), so that each has its ready time
	if [ "${MODES:-0}" = 1 ]; then
		for k in 1 2 3 4 5 6; do echo m; done
	elif [ "${SAMPLED:-0}" = 1 ]; then
		# not waiting for the builds, for the samples only; then
		# for every build
		echo ':wait samples'
		for k in 1 2 3 4 5; do echo m; done
		echo ':wait-modes'
	fi
	echo ':quit'
} > "$script"

run() { # BINARY FILE LOG
	rm -f "$3" "$3.time"
	SNAPVIEW_SCRIPT=$script SNAPVIEW_LATENCY_LOG=$3 LINES=50 COLUMNS=200 \
	    LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm /usr/bin/time -f %e \
	    -o "$3.time" "$1" --cache-dir "$dir/cache" "$2" > /dev/null
}

set -- after "$bin"
[ -n "${BEFORE:-}" ] && set -- "$@" before "$BEFORE"
# builds the indexes once (not measured)
for f in "$small" "$large"; do
	run "$bin" "$f" "$dir/open/warm.lat"
done
alternate "$runs" "$dir/open" "$@"

alternate_head "the viewer's first screen at two sizes (200x50, index built)"
python3 - "$dir/open" "$runs" $names <<'EOF'
import statistics, sys

d, runs, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def cell(v):
    if not v:
        return "-"
    return "%.2f (%.2f-%.2f)" % (statistics.median(v), min(v), max(v))

print("%-7s %-6s %-20s %-20s %-20s %s" % ("binary", "file",
      "first screen s", "its CPU s", "whole run s", "modes ready after it, s"))
for name in names:
    first = {}
    for size in ("small", "large"):
        wall, cpu, whole, modes, sampled = [], [], [], {}, {}
        for r in range(1, runs + 1):
            log = "%s/%s.%s.%d" % (d, name, size, r)
            whole.append(float(open(log + ".time").read().split()[-1]))
            try:
                lines = open(log).read().split("\n")
            except OSError:
                lines = []
            for line in lines:
                f = line.split()
                if len(f) == 3 and f[0] == "first-screen":
                    wall.append(int(f[1]) / 1e6)
                    cpu.append(int(f[2]) / 1e6)
                elif len(f) == 3 and f[0] == "mode-ready":
                    modes.setdefault(int(f[1]), []).append(int(f[2]) / 1e6)
                elif len(f) == 4 and f[0] == "mode-sampled":
                    sampled.setdefault(int(f[1]), []).append(
                        (int(f[2]) / 1e6, int(f[3]) / 1e6))
        first[size] = statistics.median(wall) if wall else None
        print("%-7s %-6s %-20s %-20s %-20s %s" % (name, size, cell(wall),
              cell(cpu), cell(whole), " ".join("%d:%.2f" %
              (k, statistics.median(v)) for k, v in sorted(modes.items()))))
        if sampled:
            print("%-7s %-6s modes drawn from samples after the first "
                  "screen, s (from its first frame, s): %s" % (name, size,
                  " ".join("%d:%.2f (%.2f)" % (k,
                  statistics.median(a for a, _ in v),
                  statistics.median(b for _, b in v))
                  for k, v in sorted(sampled.items()))))
    if first["small"] and first["large"]:
        print("%-7s first screen large/small: %.2fx" % (name,
              first["large"] / first["small"]))
EOF
