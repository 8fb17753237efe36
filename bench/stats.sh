#!/bin/sh
# bench/stats.sh [MB] -- snapview stats against Python's pickle.load on the
# same generated snapshot, in one run: wall time and peak RSS, as ratios.
#
# Makes (once, cached in bench/out/) a snapshot of about MB megabytes
# (default 600) with contrib/gensnap.py (frag scenario, C++ stacks), then
# times `snapview stats --no-cache` and
# `python3 -c 'import pickle; pickle.load(...)'` with /usr/bin/time.
# Machines are shared and noisy: read the ratios, not the seconds.
set -eu
cd "$(dirname "$0")/.."
mb=${1:-600}
out=bench/out
mkdir -p "$out"
f=$out/frag-cpp-${mb}mb.pickle
# C++ stacks: ~183 bytes per event (contrib/README.gensnap.md)
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

sv=$(measure snapview ./src/snapview stats --no-cache --quiet "$f")
py=$(measure pickle.load python3 -c \
    'import pickle,sys; pickle.load(open(sys.argv[1],"rb"))' "$f")
echo "$sv
$py" | awk -v size="$size" '
	{ t[$1] = $2; m[$1] = $3 }
	END {
		printf "file: %.0f MB\n", size / 1e6
		printf "%-12s %8s %10s %8s\n", "", "seconds", "peak MB", "RSS/file"
		for (k in t)
			printf "%-12s %8.2f %10.0f %8.2f\n", k, t[k], m[k] / 1024,
			    m[k] * 1024 / size
		printf "speed-up vs pickle.load: %.1fx\n", t["pickle.load"] / t["snapview"]
		printf "peak RSS vs pickle.load: %.2fx\n", m["snapview"] / m["pickle.load"]
	}'
