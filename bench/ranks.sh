#!/bin/sh
# Rank overview benchmark: snapview ranks on 8, 64 and 256 indexed ranks
# (it reads each index's summary section), and the viewer's overview of
# them (headless, to its first screen and out), against building those
# indexes in the same run, and against opening every rank's index as a
# command does (snapview stats on each file, one after the other).
#
#   bench/ranks.sh [COUNTS]        (default "8 64 256")
#   bench/ranks.sh --big N FILE    N ranks that are each FILE (hard links
#                                  to one big snapshot, so N ranks of 1 GB
#                                  take the disk of one, plus N indexes):
#                                  the overview of N big indexed ranks,
#                                  whose cost per rank (the index's header
#                                  and summary, the snapshot's source key)
#                                  does not depend on the content
#
# Generates small rank sets (contrib/gensnap.py --ranks N, the training
# scenario, ~300 KiB a rank) into $BENCH_DIR (default /tmp/snapview-bench),
# and removes them at the end. Needs GNU date (%N) and bc. Prints the
# best of 3 wall times and the ratios; the target is 256 indexed ranks in
# under 2 s.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SV=${SV:-$top/src/snapview}
dir=${BENCH_DIR:-/tmp/snapview-bench}/ranks
counts=${1:-8 64 256}
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT INT TERM
# wall CMD... -- prints the wall seconds of CMD
wall() {
	t0=$(date +%s.%N)
	"$@" > /dev/null 2> "$dir/err.out" || { cat "$dir/err.out" >&2; exit 1; }
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc
}
# best3 CMD... -- the best wall time of three runs
best3() {
	b=999
	for i in 1 2 3; do
		w=$(wall "$@")
		b=$(echo "if ($w < $b) $w else $b" | bc)
	done
	echo "$b"
}
printf 'machine: %s cores, load %s\n' "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf ':dump-screen %s\n:quit\n' "$dir/screen" > "$dir/keys"
if [ "${1:-}" = --big ]; then
	n=$2 f=$3 set_dir="$dir/big"
	mkdir -p "$set_dir"
	i=0
	while [ "$i" -lt "$n" ]; do
		ln "$f" "$set_dir/rank$i.pickle" 2>/dev/null ||
		    ln -s "$(realpath "$f")" "$set_dir/rank$i.pickle"
		i=$((i + 1))
	done
	printf '%d ranks of %s MiB (links to %s)\n' "$n" \
	    "$(($(stat -L -c %s "$f") / 1048576))" "$f"
	build=$(wall "$SV" ranks --quiet "$set_dir")
	imib=$(du -cm "$set_dir"/*.snapidx | tail -1 | cut -f1)
	over=$(best3 "$SV" ranks --quiet "$set_dir")
	view=$(best3 env SNAPVIEW_SCRIPT="$dir/keys" LINES=24 COLUMNS=80 \
	    TERM=xterm "$SV" "$set_dir")
	each=$(wall sh -c 'for f in "$1"/rank*.pickle; do "$2" stats --quiet "$f" || exit 1; done' \
	    sh "$set_dir" "$SV")
	printf 'build %.2fs (indexes %s MiB), overview %.3fs (%.2f ms/rank), viewer %.3fs, stats each %.2fs\n' \
	    "$build" "$imib" "$over" "$(echo "$over * 1000 / $n" | bc -l)" \
	    "$view" "$each"
	printf '256 such ranks at this rate: %.2f s\n' \
	    "$(echo "$over * 256 / $n" | bc -l)"
	exit 0
fi
printf '%6s %6s %9s %9s %8s %9s %11s %12s\n' ranks MiB build overview \
    ms/rank viewer "stats each" "build/overv"
for n in $counts; do
	set_dir="$dir/n$n"
	python3 "$top/contrib/gensnap.py" --scenario training --layers 2 \
	    --hidden 128 --seq 32 --steps 3 --profiler --ranks "$n" \
	    -o "$set_dir/" > /dev/null
	rm -f "$set_dir"/*.json
	mib=$(du -sm "$set_dir" | cut -f1)
	# the first overview builds every index, in parallel
	build=$(wall "$SV" ranks --quiet "$set_dir")
	over=$(best3 "$SV" ranks --quiet "$set_dir")
	view=$(best3 env SNAPVIEW_SCRIPT="$dir/keys" LINES=24 COLUMNS=80 \
	    TERM=xterm "$SV" "$set_dir")
	grep -q "Ranks - $n files" "$dir/screen" || { echo "no overview" >&2; exit 1; }
	# the same figures one command per rank: every index opened whole
	each=$(wall sh -c 'for f in "$1"/rank*.pickle; do "$2" stats --quiet "$f" || exit 1; done' \
	    sh "$set_dir" "$SV")
	printf '%6d %6s %8.2fs %8.3fs %8.2f %8.3fs %10.2fs %11.1fx\n' "$n" \
	    "$mib" "$build" "$over" "$(echo "$over * 1000 / $n" | bc -l)" \
	    "$view" "$each" "$(echo "$build / $over" | bc -l)"
	if [ "$n" -eq 256 ]; then
		ok=$(echo "$over < 2 && $view < 2" | bc)
		printf '256 indexed ranks: %.3f s, the viewer %.3f s (target < 2 s): %s\n' \
		    "$over" "$view" "$([ "$ok" = 1 ] && echo met || echo NOT met)"
	fi
	rm -rf "$set_dir"
done
