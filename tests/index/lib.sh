# Shared setup for the index shell tests: a private temp dir holding a
# copy of a real snapshot, the XDG cache pointed inside it.
SV="$top_builddir/src/snapview"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sv-index.XXXXXX") || exit 99
chmod 755 "$tmp"
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
XDG_CACHE_HOME="$tmp/cache"
export XDG_CACHE_HOME
src="$tmp/snap.pickle"
cp "$top_srcdir/tests/data/real/npu_leak_expandable.pickle" "$src" || exit 99
chmod 644 "$src"
fail() { echo "FAIL: $*"; exit 1; }
# is_index FILE: starts with the index magic
is_index() { [ "$(head -c 7 "$1")" = "SNAPIDX" ]; }
