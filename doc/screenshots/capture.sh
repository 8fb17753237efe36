#!/bin/sh
# Regenerates the text screenshots in doc/screenshots/ from real runs in a
# private tmux server (run from the top of a built tree).
set -eu
out=$(cd "$(dirname "$0")" && pwd)
bin=$(pwd)/src/snapview
T="tmux -L snapview-shots -f /dev/null"
unset TMUX
shot() { # NAME FILE KEYS...
	name=$1 file=$2; shift 2
	$T new-session -d -s s -x 100 -y 32 \
	    "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC $bin $file"
	sleep 1
	for k in "$@"; do $T send-keys -t s "$k"; sleep 0.2; done
	sleep 0.5
	$T capture-pane -p -t s | sed 's/[[:space:]]*$//' > "$out/$name.txt"
	$T kill-server
}
shot npu-leak-peak tests/data/real/npu_leak_expandable.pickle
shot npu-leak-block tests/data/real/npu_leak_expandable.pickle \
    Tab j l l l l Enter
shot frag-end tests/data/gen/frag.pickle G
shot frag-block tests/data/gen/frag.pickle G Tab j l l l Enter
