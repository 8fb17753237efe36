#!/bin/sh
# bench/whatif.sh [MB] [SCENARIO] [FILE] -- times snapview whatif against
# the project's own forward replay of the same file, in one run.
#
# bench/whatif_bench (built by make) opens the file through its index
# (built first into $BENCH_CACHE, as a user's second command finds it)
# and times, on the process's CPU clock: the replay of every event one at
# a time (replay_seek(): check's forward pass), then whatif with the
# agreement pass only and with one, two and three settings; it prints
# each time and its ratio to the replay. Then the command itself,
# `snapview whatif` with one setting, on the wall clock and in CPU
# seconds, as a user sees it. The issue's targets: at most 2x the replay
# and 3 s per setting on a 1 GB snapshot whose index exists:
# `bench/whatif.sh 1000`. Makes (once, kept in bench/out/) a snapshot of
# about MB megabytes (default 300) with contrib/gensnap.py (SCENARIO,
# default frag; C++ stacks), or takes FILE. Machines are shared and
# noisy: the CPU clock is the figure to read; run it twice.
# BEFORE=PATH (a whatif_bench built from another revision) runs that one
# and this one in turn, ROUNDS times (default 3), on the same index: a
# change's before and after from one run, under the same load.
set -eu
cd "$(dirname "$0")/.."
mb=${1:-300}
scen=${2:-frag}
out=bench/out
mkdir -p "$out"
f=${3:-$out/$scen-cpp-${mb}mb.pickle}
if [ ! -s "$f" ]; then
	events=$((mb * 1000000 / 183))
	echo "generating $f ($events events)..." >&2
	python3 contrib/gensnap.py --scenario "$scen" --stacks cpp \
	    --events "$events" -o "$f.tmp" && mv "$f.tmp" "$f"
fi
[ -x src/snapview ] && [ -x bench/whatif_bench ] ||
	{ echo "build first (make)" >&2; exit 1; }
cache=${BENCH_CACHE:-/tmp/snapview-bench-cache}
mkdir -p "$cache"
echo "file: $f ($(stat -L -c %s "$f") bytes)"
./src/snapview index -q --cache-dir "$cache" "$f" | sed 's/^/  /'
uptime
if [ -n "${BEFORE:-}" ]; then
	n=0
	while [ "$n" -lt "${ROUNDS:-3}" ]; do
		for b in "$BEFORE" ./bench/whatif_bench; do
			echo "== $b"
			BENCH_CACHE=$cache "$b" "$f" expandable_segments:True \
			    max_split_size_mb:64 "roundup_power2_divisions:4" |
			    grep -v '^clock\|^events'
		done
		n=$((n + 1))
	done
	uptime
	exit 0
fi
BENCH_CACHE=$cache ./bench/whatif_bench "$f" expandable_segments:True \
    max_split_size_mb:64 "roundup_power2_divisions:4"
/usr/bin/time -f "%e %U %S" -o "$out/whatif.time" ./src/snapview whatif \
    -q --cache-dir "$cache" --alloc-conf expandable_segments:True "$f" \
    > /dev/null
set -- $(cat "$out/whatif.time")
echo "snapview whatif, 1 setting: $1 s wall, $(awk "BEGIN { print $2 + $3 }") s CPU"
