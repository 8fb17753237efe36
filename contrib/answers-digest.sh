#!/bin/sh
# Prints every command's answer, text and --json, for every snapshot
# under tests/data/{real,gen,fixtures} and the demo, one block per run,
# so that two builds can be compared with diff(1):
#
#   contrib/answers-digest.sh OLD/src/snapview > old.txt
#   contrib/answers-digest.sh src/snapview > new.txt
#   diff old.txt new.txt
#
# Each binary gets its own index cache (a fresh temporary directory), so
# the answers come from an index it built itself; with REOPEN=1 every
# command runs twice and the second (reopened) answer is printed.
# Exit status and stderr are part of the digest (stderr with the
# temporary directory's name replaced).
set -u
sv=${1:?usage: answers-digest.sh SNAPVIEW}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/digest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
files=$(ls "$top"/tests/data/demo.pickle "$top"/tests/data/real/*.pickle \
    "$top"/tests/data/gen/*.pickle \
    "$top"/tests/data/fixtures/*.pickle 2>/dev/null)
run() {
	out=$("$sv" "$@" --quiet --cache-dir "$tmp/cache" 2>"$tmp/err")
	rc=$?
	if [ "${REOPEN:-0}" = 1 ]; then
		out=$("$sv" "$@" --quiet --cache-dir "$tmp/cache" 2>"$tmp/err")
		rc=$?
	fi
	printf '=== %s rc=%s\n%s\n' "$*" "$rc" "$out" | sed "s|$top|TOP|g"
	sed "s|$tmp|TMP|g; s|$top|TOP|g; s/^/stderr: /" "$tmp/err"
}
for f in $files; do
	for j in "" --json; do
		for c in stats check leaks frag oom; do
			run $c $j "$f"
		done
		run stats $j --at 5 "$f"
		run top $j "$f"
		run top $j --at 3 "$f"
		run top $j --at -1 "$f"
		run top $j --by category "$f"
		run state $j --at 7 "$f"
		run state $j --at -1 "$f"
		run trace $j --from 0 --to 40 "$f"
		run diff $j "$f" "$top/tests/data/gen/leak.pickle"
	done
done
# ranks: the generated files as the ranks of one job
for j in "" --json; do
	run ranks $j "$top"/tests/data/gen/leak.pickle \
	    "$top"/tests/data/gen/frag.pickle "$top"/tests/data/gen/oom.pickle
done
