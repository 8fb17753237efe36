#!/bin/sh
# Per-key latency of the analysis views (leaks U, frag F, top T) on a large
# snapshot, headless (SNAPVIEW_LATENCY_LOG): the first opening of each view
# (the whole-trace analysis, once per device), moves in the lists, jumps,
# and cursor moves with the top view open (recomputed from the replayed
# state at each move) against the same moves with no view open, measured
# in the same run (the ratio is what to look at; wall times include the
# load of the machine).
#
# usage: bench/tui_views.sh [SNAPSHOT] [EVENTS]
#   SNAPSHOT  default: contrib/gensnap.py --scenario leak --events EVENTS
#             (default 1000000) into $BENCH_DIR (default /tmp/snapview-bench)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${SNAPVIEW:-$here/src/snapview}
dir=${BENCH_DIR:-/tmp/snapview-bench}
events=${2:-1000000}
mkdir -p "$dir/cache"
big=${1:-}
if [ -z "$big" ]; then
	big=$dir/leak-$events.pickle
	[ -f "$big" ] || python3 "$here/contrib/gensnap.py" --scenario leak \
	    --events "$events" --seed 1 -o "$big"
fi

moves() { # N KEY
	i=0; while [ $i -lt "$1" ]; do echo "$2"; i=$((i + 1)); done
}
{
	echo g; moves 30 l; moves 15 h          # baseline: no view open
	echo U; moves 3 j; moves 3 k; echo '<Enter>'; moves 5 ']'; echo q
	echo F; moves 3 j; echo '<Enter>'; moves 3 ']'; echo q
	echo g; echo T; moves 30 l; moves 15 h  # the same moves, top open
	echo q; echo ':quit'
} > "$dir/views.script"

run() { # LOG
	SNAPVIEW_SCRIPT=$dir/views.script SNAPVIEW_LATENCY_LOG=$1 LINES=50 \
	    COLUMNS=200 LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm \
	    "$bin" --cache-dir "$dir/cache" "$big"
}
run "$dir/views-warm.lat"   # builds the index once
run "$dir/views.lat"

awk '
function med(a, n,   i, j, t) {
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
		if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return a[int((n + 1) / 2)]
}
{ k = $1; us = $2 }
k == "T" { top = 1 }
(k == "l" || k == "h") { if (top) { t[++nt] = us } else if (!seen_u) { b[++nb] = us } }
k == "U" && !seen_u { seen_u = 1; printf "open leak view (analysis):   %8d us\n", us }
k == "F" && !seen_f { seen_f = 1; printf "open frag view (analysis):   %8d us\n", us }
k == "T" { printf "open top view:               %8d us\n", us }
k == "j" || k == "k" { lj[++nl] = us }
k == "]" { jb[++nj] = us }
END {
	printf "list move j/k (median):      %8d us\n", med(lj, nl)
	printf "jump ] (median):             %8d us\n", med(jb, nj)
	bm = med(b, nb); tm = med(t, nt)
	printf "cursor h/l, no view (median):%8d us (%d keys)\n", bm, nb
	printf "cursor h/l, top open (median):%7d us (%d keys)\n", tm, nt
	printf "ratio top open / no view:    %8.2fx\n", (bm > 0 ? tm / bm : 0)
}' "$dir/views.lat"
"$bin" stats --cache-dir "$dir/cache" "$big" | sed -n 's/^ *events: *\([0-9,]*\).*/events: \1/p' | head -1
