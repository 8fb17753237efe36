#!/bin/sh
# bench/analysis.sh [MB] [SCENARIO] -- time each analysis (check, leaks,
# frag, oom, top, top --by category, diff) on one large generated snapshot,
# against `snapview stats` on the same file in the same run.
#
# The index is built first (`snapview index`, timed); every command then
# reopens the file through it, as a user's second command would. The
# issue's budget is <= 2 s per analysis on an indexed 1 GB file:
# `bench/analysis.sh 1000`. `stats` (which reads the stored timeline
# only) is the baseline of the same run. Makes (once, cached in bench/out/) a snapshot of about MB
# megabytes (default 300) with contrib/gensnap.py (SCENARIO, default frag;
# training makes a transformer's steps with a leak, whose categories and
# steps cost the most; C++ stacks). Machines are shared and noisy: run it
# twice.
set -eu
cd "$(dirname "$0")/.."
mb=${1:-300}
scen=${2:-frag}
out=bench/out
mkdir -p "$out"
f=$out/$scen-cpp-${mb}mb.pickle
case $scen in
training) events=$((mb * 1000000 / 167)); extra=--leak ;;
*) events=$((mb * 1000000 / 183)); extra= ;;
esac
if [ ! -s "$f" ]; then
	echo "generating $f ($events events)..." >&2
	python3 contrib/gensnap.py --scenario "$scen" --stacks cpp $extra \
	    --events "$events" -o "$f.tmp" && mv "$f.tmp" "$f"
fi
size=$(stat -L -c %s "$f")
[ -x src/snapview ] || { echo "build first (make)" >&2; exit 1; }

measure() { # label command... ; prints "label seconds kbytes"
	label=$1; shift
	/usr/bin/time -f "%e %M" -o "$out/time.txt" "$@" >/dev/null
	set -- $(cat "$out/time.txt")
	echo "$label $1 $2"
}
sv="./src/snapview"
{
	measure index $sv index --quiet "$f"
	measure stats $sv stats --quiet "$f"
	measure check $sv check --json --quiet "$f"
	measure leaks $sv leaks --json --quiet "$f"
	measure frag $sv frag --json --quiet "$f"
	measure oom $sv oom --json --quiet "$f"
	measure top $sv top --json --quiet "$f"
	measure bycat $sv top --by category --json --quiet "$f"
	measure diff $sv diff --json --quiet "$f" "$f"
} | awk -v size="$size" '
	{ n++; k[n] = $1; t[$1] = $2; m[$1] = $3 }
	END {
		printf "file: %.0f MB\n", size / 1e6
		printf "%-6s %8s %10s %12s\n", "", "seconds", "peak MB",
		    "x stats"
		for (i = 1; i <= n; i++) {
			c = k[i]
			printf "%-6s %8.2f %10.0f ", c, t[c], m[c] / 1024
			if (t["stats"] > 0)
				printf "%12.1f\n", t[c] / t["stats"]
			else	# under the 10 ms /usr/bin/time shows
				printf "%12s\n", "-"
		}
		print "(index: built once; the others reopen through it;"
		print " diff opens the file twice)"
	}'
