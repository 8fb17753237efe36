# Shared helpers for tmux-driven screen tests (style.md Appendix A).
# Each test gets a private tmux server (-L) with no user config (-f /dev/null).
: "${TMUX_BIN:=tmux}"
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
[ "$TMUX_BIN" != no ] && command -v "$TMUX_BIN" >/dev/null 2>&1 || {
	echo "tmux not found: skipping"; exit 77; }
# A private socket directory keeps tests off the user's tmux and leaves no
# stale sockets behind.
TMUX_TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/snapview-tmux.XXXXXX") || exit 99
export TMUX_TMPDIR
unset TMUX
SV_TMUX="$TMUX_BIN -L snapview-test -f /dev/null"
SV_BIN="$(cd "$top_builddir" && pwd)/src/snapview"
SV_DATA="$(cd "$top_srcdir" && pwd)/tests/data/real"
SV_GOLDEN="$(cd "$top_srcdir" && pwd)/tests/lib/golden.sh"

sv_cleanup() {
	$SV_TMUX kill-server 2>/dev/null || true
	rm -rf "$TMUX_TMPDIR"
}
trap sv_cleanup EXIT INT TERM

# sv_new ARGS... -- tmux new-session ARGS, again while it fails: after a
# test kills its only session the server exits, and a new-session that
# reaches the socket before it is gone says "server exited unexpectedly"
sv_new() {
	n=0
	while ! $SV_TMUX new-session "$@" 2>"$TMUX_TMPDIR/new.err"; do
		n=$((n + 1))
		if [ "$n" -ge 30 ]; then
			cat "$TMUX_TMPDIR/new.err" >&2
			return 1
		fi
		sleep 0.1
	done
}
# sv_start COLS ROWS ARGS...  -- launch the program in a detached pane
sv_start() {
	cols=$1 rows=$2; shift 2
	sv_new -d -s t -x "$cols" -y "$rows" \
	    "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC NO_COLOR=1 $SV_BIN --no-cache $*" || exit 99
}
# sv_start_sh COLS ROWS CMD -- launch a shell command line in the pane
sv_start_sh() {
	cols=$1 rows=$2; shift 2
	sv_new -d -s t -x "$cols" -y "$rows" \
	    "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC NO_COLOR=1 sh -c '$*'" || exit 99
}
# sv_start_color COLS ROWS ARGS...  -- the same with colours (no NO_COLOR)
sv_start_color() {
	cols=$1 rows=$2; shift 2
	sv_new -d -s t -x "$cols" -y "$rows" \
	    "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC $SV_BIN --no-cache $*" || exit 99
}
# sv_wait TEXT [TENTHS]  -- poll the screen until TEXT appears (no fixed sleeps)
sv_wait() {
	n=${2:-300}
	while [ "$n" -gt 0 ]; do
		$SV_TMUX capture-pane -p -t t | grep -qF -- "$1" && return 0
		sleep 0.1; n=$((n - 1))
	done
	echo "timeout waiting for '$1'; screen was:" >&2
	$SV_TMUX capture-pane -p -t t >&2
	exit 1
}
sv_keys()   { $SV_TMUX send-keys -t t "$@"; }
sv_resize() { $SV_TMUX resize-window -t t -x "$1" -y "$2"; }
# Screen text with trailing blanks stripped per line; all rows are kept.
sv_screen() { $SV_TMUX capture-pane -p -t t | sed 's/[[:space:]]*$//'; }
# sv_expect GOLDEN -- compare the current screen with a golden file
# through tests/lib/golden.sh (SV_UPDATE_GOLDEN=1 rewrites the golden
# instead, with the screen as it is after the wait below)
sv_expect() {
	# the terminal may still be mid-draw when the awaited text shows:
	# poll until the screen matches, and show the difference if it never does
	n=100
	while [ "$n" -gt 0 ]; do
		sv_screen > "$TMUX_TMPDIR/${1##*/}.actual"
		cmp -s "$1" "$TMUX_TMPDIR/${1##*/}.actual" && return 0
		sleep 0.1; n=$((n - 1))
	done
	sh "$SV_GOLDEN" "$1" "$TMUX_TMPDIR/${1##*/}.actual"
}
# sv_expect_attr GOLDEN FILTER... -- like sv_expect, on the screen with its
# attributes (capture-pane -e) passed through the command FILTER (which
# turns the escapes into text, e.g. tests/timeline/sgr.py)
sv_expect_attr() {
	golden=$1; shift
	n=100
	while [ "$n" -gt 0 ]; do
		$SV_TMUX capture-pane -e -p -t t | "$@" \
		    > "$TMUX_TMPDIR/${golden##*/}.actual"
		cmp -s "$golden" "$TMUX_TMPDIR/${golden##*/}.actual" && return 0
		sleep 0.1; n=$((n - 1))
	done
	sh "$SV_GOLDEN" "$golden" "$TMUX_TMPDIR/${golden##*/}.actual"
}
