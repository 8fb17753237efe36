#!/bin/sh
# Index benchmark: first open (parse + index build) and reopen of a big
# snapshot against Python's pickle.load of the same file, in one run.
#
#   bench/index.sh [SNAPSHOT]
#
# Without SNAPSHOT, generates ~1 GB with C++ stacks (contrib/gensnap.py,
# several minutes) into $BENCH_DIR (default /tmp/snapview-bench).
# Needs /usr/bin/time (GNU). Prints wall and CPU seconds, peak RSS, and
# the ratios the index targets are stated in.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SV=${SV:-$top/src/snapview}
dir=${BENCH_DIR:-/tmp/snapview-bench}
mkdir -p "$dir"
f=${1:-$dir/big.pickle}
if [ ! -f "$f" ]; then
	echo "generating $f (5.8 M events, C++ stacks)..." >&2
	python3 "$top/contrib/gensnap.py" --scenario frag --stacks cpp \
	    --events 5800000 -o "$f"
fi
cache="$dir/cache"
rm -rf "$cache"
T="/usr/bin/time -f %e:%U:%S:%M"
# run LABEL CMD...: prints wall, cpu, rss; sets W C M
run() {
	label=$1; shift
	$T -o "$dir/time.out" "$@" > /dev/null 2> "$dir/err.out" || {
		cat "$dir/err.out" >&2; exit 1; }
	IFS=: read -r W U S M < "$dir/time.out"
	C=$(echo "$U + $S" | bc)
	printf '%-28s wall %7.2f s  cpu %7.2f s  peak RSS %8.1f MiB\n' \
	    "$label" "$W" "$C" "$(echo "$M / 1024" | bc -l)"
}
size=$(stat -c %s "$f")
printf 'machine: %s cores, load %s\n' "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf 'snapshot: %s, %.1f MiB\n' "$f" "$(echo "$size / 1048576" | bc -l)"

run "python pickle.load" python3 -c \
    'import pickle,sys; pickle.load(open(sys.argv[1],"rb"))' "$f"
PW=$W PC=$C PM=$M
run "snapview index (first open)" "$SV" index --quiet --cache-dir "$cache" "$f"
BW=$W BC=$C BM=$M
best=999 bestc=999
for i in 1 2 3 4 5; do
	run "snapview stats (reopen)" "$SV" stats --quiet --cache-dir "$cache" "$f"
	best=$(echo "if ($W < $best) $W else $best" | bc)
	bestc=$(echo "if ($C < $bestc) $C else $bestc" | bc)
done
isize=$(stat -c %s "$cache"/*.snapidx)
echo
printf 'first open:  %.2f s wall, %.2f s cpu (target <= 5 s on 2 cores); %.1fx faster than pickle.load (target >= 10x; cpu: %.1fx)\n' \
    "$BW" "$BC" "$(echo "$PW / $BW" | bc -l)" "$(echo "$PC / $BC" | bc -l)"
printf 'build RSS:   %.2fx the file (target <= 0.5x); pickle.load: %.2fx\n' \
    "$(echo "$BM * 1024 / $size" | bc -l)" "$(echo "$PM * 1024 / $size" | bc -l)"
printf 'reopen:      best %.3f s wall, %.3f s cpu of 5 to the first answer (target <= 0.1 s)\n' \
    "$best" "$bestc"
printf 'index size:  %.2fx the file (target <= 0.5x with C++ stacks)\n' \
    "$(echo "$isize / $size" | bc -l)"
