#!/bin/sh
# Regenerates the screen captures of the analysis views (leak, frag, top)
# used by doc/walkthrough.md: runs the TUI headless on the demo files
# (SNAPVIEW_SCRIPT, no terminal needed), writes doc/screenshots/*.txt and
# replaces each block between "<!-- capture NAME -->" and "<!-- end -->"
# in the walkthrough with the capture NAME. Run from the top of a built
# tree: doc/screenshots/views.sh
set -eu
top=$(pwd)
bin=$top/src/snapview
out=$top/doc/screenshots
walk=$top/doc/walkthrough.md
tmp=$(mktemp -d "${TMPDIR:-/tmp}/snapview-shots.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# shoot FILE -- runs the key script on stdin against FILE at 100x32
shoot() {
	cat > "$tmp/keys.script"
	(cd "$tmp" && env SNAPVIEW_SCRIPT=keys.script LINES=32 COLUMNS=100 \
	    LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm NO_COLOR=1 TZ=UTC \
	    "$bin" --no-cache "$top/$1")
}

shoot tests/data/demo.pickle <<'KEYS'
U
:dump-screen leak-view.txt
<Enter>
:dump-screen leak-view-enter.txt
]
]
:dump-screen leak-view-next.txt
:quit
KEYS
shoot tests/data/gen/frag.pickle <<'KEYS'
F
:dump-screen frag-view.txt
<Enter>
:dump-screen frag-view-enter.txt
q
T
:dump-screen top-view.txt
:quit
KEYS
for f in leak-view leak-view-enter leak-view-next frag-view \
    frag-view-enter top-view; do
	cp "$tmp/$f.txt" "$out/$f.txt"
done

# Splice the captures into the walkthrough.
awk -v dir="$out" '
/^<!-- capture [a-z-]* -->$/ {
	print; name = $3
	print "```"
	while ((getline line < (dir "/" name ".txt")) > 0) print line
	close(dir "/" name ".txt")
	print "```"
	skip = 1; next
}
/^<!-- end -->$/ { skip = 0 }
!skip { print }
' "$walk" > "$tmp/walk.md"
cp "$tmp/walk.md" "$walk"
