# Helpers for replay command tests: run snapview, compare with a golden.
# SV_UPDATE_GOLDEN=1 rewrites the golden files instead of comparing.
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
SV_BIN="$(cd "$top_builddir" && pwd)/src/snapview"
REAL="$top_srcdir/tests/data/real"
GOLDEN="$top_srcdir/tests/replay/golden"
fail=0

# sv_golden NAME WANT_EXIT ARGS... -- run snapview ARGS inside the real
# fixtures' directory (so file names in the output do not depend on where
# the tree is), check the exit status and compare stdout with golden/NAME.
sv_golden() {
	name=$1 want=$2; shift 2
	out="${TMPDIR:-/tmp}/sv-replay-$$-$name"
	# --no-cache: write no index beside the committed fixtures
	(cd "$REAL" && "$SV_BIN" "$@" --no-cache) > "$out"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL: $name: exit $rc, want $want"
		fail=1
	fi
	if ! sh "$top_srcdir/tests/lib/golden.sh" "$GOLDEN/$name" "$out"
	then
		echo "FAIL: $name: output differs from golden"
		fail=1
	fi
	rm -f "$out"
}
