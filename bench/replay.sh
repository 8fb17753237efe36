#!/bin/sh
# Replay benchmark: p50/p99 of the state at a random event and of +-1
# steps on a large generated snapshot, opened through its index (the
# stripe-coded events and the stored checkpoints, as every command reads
# them; the index is built in $BENCH_CACHE the first time). Not a test
# (no time limits). The issue's target: state at any event p99 <= 5 ms.
#   bench/replay.sh [EVENTS] [SCENARIO]     (default 1000000 frag)
# EVENTS=5000000 reproduces the 5M-event target (file ~430 MB, about
# 2 minutes to generate). The file is kept in bench/out/ for reruns.
set -e
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
events=${1:-1000000}
scenario=${2:-frag}
out=${BENCH_OUT:-$top/bench/out}
mkdir -p "$out"
f="$out/$scenario-$events.pickle"
if [ ! -f "$f" ]; then
	echo "generating $f ..."
	${PYTHON3:-python3} "$top/contrib/gensnap.py" --scenario "$scenario" \
	    --events "$events" -o "$f"
fi
"$top/bench/replay_bench" "$f" "${SAMPLES:-2000}"
