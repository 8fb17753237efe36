#!/bin/sh
# Run directory benchmark: a run of RANKS x STEPS dumps (verl's layout,
# the training scenario of 24 layers, hidden size 256, a ring buffer of
# 20,000 events a dump) whose indexes exist, and on it:
#   - the grid: the layout recognised, every dump's summary read, each
#     cell's figures (bench/runs_bench, in a process of its own);
#   - the growth analysis: the same with every dump's blocks section
#     read, then growth between dumps and skew (runs_bench);
#   - snapview ranks DIR as a user runs it (all of it, printed), and the
#     viewer's grid (headless, to its first screen and out);
# against, in the same run: building those indexes (the first snapview
# ranks DIR, in parallel), and opening every dump's index as a command
# does (snapview stats on each, one after the other).
#
#   bench/runs.sh [RANKS STEPS]      (default 8 16)
#
# Writes the run into $BENCH_DIR (default /tmp/snapview-bench) and
# removes it at the end. Needs GNU date (%N) and bc. Prints the best of
# 3 wall times (runs_bench: best and median of 5) and the ratios; the
# targets on 8 x 16: the grid under 2 s, the growth under 5 s.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SV=${SV:-$top/src/snapview}
RB=${RB:-$top/bench/runs_bench}
dir=${BENCH_DIR:-/tmp/snapview-bench}/runs
ranks=${1:-8} steps=${2:-16}
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT INT TERM
wall() {
	t0=$(date +%s.%N)
	"$@" > /dev/null 2> "$dir/err.out" || [ $? -eq 2 ] ||
		{ cat "$dir/err.out" >&2; exit 1; }
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc
}
best3() {
	b=999
	for i in 1 2 3; do
		w=$(wall "$@")
		b=$(echo "if ($w < $b) $w else $b" | bc)
	done
	echo "$b"
}
printf 'machine: %s cores, load %s\n' "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
run="$dir/run"
t0=$(date +%s)
python3 "$top/contrib/gensnap.py" --scenario training --layers 24 \
    --hidden 256 --seq 64 --profiler --max-entries 20000 --ranks "$ranks" \
    --steps "$steps" --run-dir verl -o "$run" > /dev/null
rm -f "$run/run.truth.json"
files=$(find "$run" -name '*.pickle' | wc -l)
printf '%d x %d run: %d files, %s MiB (generated in %d s)\n' "$ranks" \
    "$steps" "$files" "$(du -sm "$run" | cut -f1)" "$(($(date +%s) - t0))"
# an empty file is one that could not be read: exit status 2 (wall)
build=$(wall "$SV" ranks --quiet "$run")
printf 'indexes: %s MiB\n' "$(find "$run" -name '*.snapidx' -print0 |
    du -cm --files0-from=- | tail -1 | cut -f1)"
set -- $("$RB" "$run" 5 | tr '\n' ' ')
grid=$2 grid_med=$3 growth=$9 growth_med=${10} found="${11} dumps, ${13} growing site(s), skew at ${14} steps"
cmd=$(best3 "$SV" ranks --quiet "$run")
printf ':dump-screen %s\n:quit\n' "$dir/screen" > "$dir/keys"
view=$(best3 env SNAPVIEW_SCRIPT="$dir/keys" LINES=24 COLUMNS=80 \
    TERM=xterm "$SV" "$run")
grep -q "Run - verl - $ranks ranks x $steps steps" "$dir/screen" ||
	{ echo "no grid" >&2; exit 1; }
each=$(wall sh -c 'find "$1" -name "*.pickle" -size +0 | while read -r f; do "$2" stats --quiet "$f" || exit 1; done' \
    sh "$run" "$SV")
printf 'found: %s\n' "$found"
printf '%-28s %9s %9s %10s %10s\n' what best median "/build" "/stats each"
for row in "grid:$grid:$grid_med" "growth analysis:$growth:$growth_med" \
    "snapview ranks DIR:$cmd:-" "viewer's first screen:$view:-" \
    "build the indexes:$build:-" "stats on each dump:$each:-"; do
	name=${row%%:*} rest=${row#*:} best=${rest%%:*} med=${rest#*:}
	printf '%-28s %8.3fs %9s %9.3fx %9.3fx\n' "$name" "$best" "$med" \
	    "$(echo "$best / $build" | bc -l)" "$(echo "$best / $each" | bc -l)"
done
ok1=$(echo "$grid < 2" | bc) ok2=$(echo "$growth < 5" | bc)
printf '%d x %d indexed: grid %.3f s (target < 2 s): %s; growth %.3f s (target < 5 s): %s\n' \
    "$ranks" "$steps" "$grid" "$([ "$ok1" = 1 ] && echo met || echo NOT met)" \
    "$growth" "$([ "$ok2" = 1 ] && echo met || echo NOT met)"
