# Helpers for the run-directory tests: the rank-set helpers (a private
# work directory, fail, q) and gensnap --run-dir. Source from a *.test,
# after tests/tui/lib.sh or tests/screen/lib.sh when the test needs them.
. "$top_srcdir/tests/ranks/lib.sh"

# gen_run DIR LAYOUT ARGS... -- a run of the training scenario (small
# model, ProfilerStep annotations) in DIR, its truth in DIR/run.truth.json
gen_run() {
	d=$1 layout=$2; shift 2
	"$PYTHON3" "$SRC/contrib/gensnap.py" --scenario training --layers 2 \
	    --hidden 128 --seq 32 --profiler --run-dir "$layout" -o "$d" "$@" \
	    >/dev/null || fail "gensnap --run-dir $layout $*"
}
