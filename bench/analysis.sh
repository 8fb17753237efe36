#!/bin/sh
# bench/analysis.sh [MB] -- time each analysis (leaks, frag, oom, top,
# diff) on one large generated snapshot, against `snapview stats` on the
# same file in the same run.
#
# Until the on-disk index lands every command loads the pickle first, so
# the figure that matters is the analysis's own cost: its time minus
# stats' time (load + timeline, the work an indexed reopen skips).
# The issue's budget is <= 2 s of that on a 1 GB file: `bench/analysis.sh
# 1000`. Makes (once, cached in bench/out/) a snapshot of about MB
# megabytes (default 300) with contrib/gensnap.py (frag scenario, C++
# stacks). Machines are shared and noisy: run it twice.
set -eu
cd "$(dirname "$0")/.."
mb=${1:-300}
out=bench/out
mkdir -p "$out"
f=$out/frag-cpp-${mb}mb.pickle
events=$((mb * 1000000 / 183))
if [ ! -s "$f" ]; then
	echo "generating $f ($events events)..." >&2
	python3 contrib/gensnap.py --scenario frag --stacks cpp \
	    --events "$events" -o "$f.tmp" && mv "$f.tmp" "$f"
fi
size=$(stat -c %s "$f")
[ -x src/snapview ] || { echo "build first (make)" >&2; exit 1; }

measure() { # label command... ; prints "label seconds kbytes"
	label=$1; shift
	/usr/bin/time -f "%e %M" -o "$out/time.txt" "$@" >/dev/null
	set -- $(cat "$out/time.txt")
	echo "$label $1 $2"
}
sv="./src/snapview"
{
	measure stats $sv stats --no-cache --quiet "$f"
	measure leaks $sv leaks --json --no-cache --quiet "$f"
	measure frag $sv frag --json --no-cache --quiet "$f"
	measure oom $sv oom --json --no-cache --quiet "$f"
	measure top $sv top --json --no-cache --quiet "$f"
	measure diff $sv diff --json --no-cache --quiet "$f" "$f"
} | awk -v size="$size" '
	{ n++; k[n] = $1; t[$1] = $2; m[$1] = $3 }
	END {
		printf "file: %.0f MB\n", size / 1e6
		printf "%-6s %8s %10s %14s\n", "", "seconds", "peak MB",
		    "minus stats"
		for (i = 1; i <= n; i++) {
			c = k[i]; base = c == "diff" ? 2 * t["stats"] : t["stats"]
			printf "%-6s %8.2f %10.0f %14.2f\n", c, t[c], m[c] / 1024,
			    c == "stats" ? 0 : t[c] - base
		}
		print "(diff loads the file twice: its baseline is 2 x stats)"
	}'
