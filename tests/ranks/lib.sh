# Helpers for the rank-set tests: a private work directory, gensnap rank
# sets with their truth, and a JSON query helper. Source from a *.test.
: "${top_srcdir:=.}"
: "${top_builddir:=.}"
: "${PYTHON3:=python3}"
SV="$(cd "$top_builddir" && pwd)/src/snapview"
SRC="$(cd "$top_srcdir" && pwd)"
command -v "$PYTHON3" >/dev/null 2>&1 ||
	{ echo "python3 not found (gensnap writes the rank sets): skipping"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/snapview-ranks.XXXXXX") || exit 99
# also what tests/tui/lib.sh and tests/screen/lib.sh made, when sourced
ranks_cleanup() {
	chmod -R u+rwx "$work" 2>/dev/null
	rm -rf "$work"
	[ -z "${SV_WORK:-}" ] || rm -rf "$SV_WORK"
	if command -v sv_cleanup >/dev/null 2>&1; then sv_cleanup; fi
}
trap ranks_cleanup EXIT INT TERM

fail() { echo "FAIL: $*" >&2; exit 1; }

# gen_set DIR ARGS... -- a rank set of the training scenario (small
# model, ProfilerStep annotations) in DIR/ with DIR/ranks.truth.json
gen_set() {
	d=$1; shift
	"$PYTHON3" "$SRC/contrib/gensnap.py" --scenario training --layers 2 \
	    --hidden 128 --seq 32 --steps 4 --profiler -o "$d/" "$@" \
	    >/dev/null || fail "gensnap $*"
}

# q FILE EXPR -- prints EXPR evaluated over the JSON document d of FILE
q() {
	"$PYTHON3" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2"
}
