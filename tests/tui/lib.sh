# Helpers for headless whole-program tests: the TUI runs with newterm on
# /dev/null, driven by a key script (SNAPVIEW_SCRIPT), and dumps its
# screen text with :dump-screen. Source from a *.test script.
: "${top_srcdir:=.}"
: "${top_builddir:=.}"
SV_BIN="$(cd "$top_builddir" && pwd)/src/snapview"
SV_DATA="$(cd "$top_srcdir" && pwd)/tests/data/real"
SV_SRC="$(cd "$top_srcdir" && pwd)"
SV_WORK=$(mktemp -d "${TMPDIR:-/tmp}/snapview-tui.XXXXXX") || exit 99
trap 'rm -rf "$SV_WORK"' EXIT INT TERM

# tui_run COLS ROWS FILE [OPTION...]  -- runs the script read from stdin
tui_run() {
	_c=$1 _r=$2 _f=$3
	shift 3
	cat > "$SV_WORK/keys.script"
	(cd "$SV_WORK" && env SNAPVIEW_SCRIPT=keys.script LINES="$_r" \
	    COLUMNS="$_c" LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm NO_COLOR=1 \
	    TZ=UTC "$SV_BIN" --no-cache "$@" "$_f")
}
# tui_expect NAME [DIR] -- compares $SV_WORK/NAME with the golden
# DIR/NAME (default: tests/tui) through tests/lib/golden.sh
# (SV_UPDATE_GOLDEN=1 rewrites the golden instead)
tui_expect() {
	sh "$SV_SRC/tests/lib/golden.sh" "${2:-$SV_SRC/tests/tui}/$1" \
	    "$SV_WORK/$1"
}
