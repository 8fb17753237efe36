#!/bin/sh
# Per-key latency of the views on a large snapshot, headless at 200x50
# (SNAPVIEW_LATENCY_LOG: key handled + screen redrawn), in one run:
#
#   base     cursor moves (h/l) with no view open: the baseline
#   leaks    U, frag F: list moves, jumps (the first key runs the analysis)
#   tree     T: moves, open/close, expand all, subtree, every frame,
#            and cursor moves with the tree open (it follows); then the
#            categories (V: the first time, their analysis runs)
#   events   E: moves, pages, reads further with a filter, cursor moves
#   blocks   B: moves, every sort column, reverse, cursor moves
#   oom/info X (without an OOM the view stays closed and j moves the
#            cursor) and I (runs the replay check the first time)
#
# For each phase: the first key (opening the view: its analysis runs
# then, once per device) and p50/p99/max of the other keys in wall time,
# their p99 in CPU time, and both p99 over the baseline's. Wall times
# include the machine's load (CPU time much less so): the ratios are what
# to compare between runs.
#
# usage: bench/tui_views.sh [SNAPSHOT] [EVENTS]
#   SNAPSHOT  default: contrib/gensnap.py --scenario leak --events EVENTS
#             (default 1000000) into $BENCH_DIR (default /tmp/snapview-bench);
#             a 1 GB file is --events 11600000 (contrib/README.gensnap.md)
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

keys() { # N KEY...: the keys N times
	n=$1; shift
	i=0; while [ "$i" -lt "$n" ]; do for k; do echo "$k"; done
		i=$((i + 1)); done
}
# A phase starts with a line "#phase NAME": the script ignores comments,
# so the phases are read back from this file, in order, by the awk below.
{
	echo '#phase base'; echo g; keys 60 l; keys 30 h
	echo '#phase leaks'; echo U; keys 10 j k; echo '<Enter>'; keys 10 ']'
	echo '<Esc>'
	echo '#phase frag'; echo F; keys 10 j; echo '<Enter>'; keys 5 ']'
	echo '<Esc>'
	echo '#phase tree'; echo g; echo p; echo T; keys 20 j; keys 5 l j
	echo '*'; keys 30 j; echo r; echo r; echo z; keys 10 j; echo z
	echo '<BTab>'; keys 40 l; echo '<Tab>'
	echo '#phase categories'; echo V; keys 10 j l; echo V; echo '<Esc>'
	echo '#phase events'; echo E; keys 40 j; keys 10 '<PgDn>'
	keys 20 k; echo '<BTab>'; keys 30 l; echo '<Esc>'
	echo '#phase filter'; echo E; echo '&alloc >1M<Enter>'
	echo '#phase events-filtered'; keys 30 j; keys 10 '<PgUp>'
	echo '<Esc>'
	echo '#phase blocks'; echo B; keys 30 j; keys 7 .; echo R
	echo '<BTab>'; keys 30 l; echo '<Esc>'
	echo '#phase oom'; echo X; keys 10 j; echo '<Esc>'
	echo '#phase info'; echo I; keys 10 j; echo '<Esc>'
	echo ':quit'
} > "$dir/views.script"

run() { # LOG
	SNAPVIEW_SCRIPT=$dir/views.script SNAPVIEW_LATENCY_LOG=$1 LINES=50 \
	    COLUMNS=200 LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm \
	    "$bin" --cache-dir "$dir/cache" "$big"
}
run "$dir/views-warm.lat"   # builds the index once
run "$dir/views.lat"

# The latency log has one line per key: walk the script and the log
# together (comments and commands log nothing; a prompt logs each key).
awk '
function pct(a, n, p,   i, j, t, k) {
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 &&
	    a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	k = int(p * n + 0.999); if (k < 1) k = 1; if (k > n) k = n
	return a[k]
}
function flush(   m, p99, mx, c99) {
	if (phase == "" || nk == 0) return
	if (nr == 0) { printf "%-16s first %8d us\n", phase, first; return }
	m = pct(v, nr, 0.5); p99 = pct(v, nr, 0.99); mx = v[nr]
	c99 = pct(cpu, nr, 0.99)
	if (phase == "base") { base99 = p99; basec99 = c99 }
	printf "%-16s first %8d us | wall p50 %6d p99 %6d max %6d | " \
	    "cpu p99 %6d us (%d keys)", phase, first, m, p99, mx, c99, nr
	if (base99 > 0 && phase != "base")
		printf " | p99/base wall %.2fx cpu %.2fx", p99 / base99,
		    (basec99 > 0 ? c99 / basec99 : 0)
	printf "\n"
}
FNR == NR {
	if ($0 ~ /^#phase /) { ph[++np] = $2; at[np] = nk_script; next }
	if ($0 ~ /^#/ || $0 ~ /^:quit/) next
	# keys a script line gives: <Name> counts one, others one per char
	line = $0; c = 0
	while (length(line) > 0) {
		if (substr(line, 1, 1) == "<" && index(line, ">") > 1) {
			line = substr(line, index(line, ">") + 1)
		} else line = substr(line, 2)
		c++
	}
	for (i = 0; i < c; i++) owner[++nk_script] = np
	next
}
# waits and the first screen, not keys
$1 == "bands-ready" || $1 == "mode-ready" || $1 == "first-screen" { next }
{
	n++; p = owner[n]
	if (ph[p] != phase) { flush(); phase = ph[p]; nk = 0; nr = 0 }
	nk++
	if (nk == 1) first = $2; else { v[++nr] = $2; cpu[nr] = $3 }
}
END { flush() }' "$dir/views.script" "$dir/views.lat"
"$bin" stats --cache-dir "$dir/cache" "$big" |
    sed -n 's/^ *events: *\([0-9,]*\).*/events: \1/p' | head -1
