#!/bin/sh
# Regenerates the screen captures of the views (leaks and the leak
# window, frag, the top tree, the block and event tables, the OOM and info
# views, the phases) used by doc/walkthrough.md: runs the TUI headless on the demo files
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

# shoot FILE -- runs the key script on stdin against FILE at 100x32 (the
# file named as from the top of the tree, as the walkthrough names it)
ln -s "$top/tests" "$tmp/tests"
shoot() {
	cat > "$tmp/keys.script"
	(cd "$tmp" && env SNAPVIEW_SCRIPT=keys.script LINES=32 COLUMNS=100 \
	    LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm NO_COLOR=1 TZ=UTC \
	    "$bin" --no-cache "$1")
}

shoot tests/data/demo.pickle <<'KEYS'
U
:dump-screen leak-view.txt
<Enter>
:dump-screen leak-view-enter.txt
]
]
:dump-screen leak-view-next.txt
q
:500<Enter>
b
:2000<Enter>
e
U
:dump-screen leak-window.txt
:quit
KEYS
shoot tests/data/gen/frag.pickle <<'KEYS'
F
:dump-screen frag-view.txt
<Enter>
:dump-screen frag-view-enter.txt
q
T
l
j
l
:dump-screen top-tree.txt
q
B
.
.
g
:dump-screen blocks-view.txt
:quit
KEYS
shoot tests/data/gen/oom.pickle <<'KEYS'
o
X
:dump-screen oom-view.txt
q
E
&alloc >1G<Enter>
:dump-screen events-view.txt
:quit
KEYS
shoot tests/data/real/synthetic_inconsistent.pickle <<'KEYS'
I
:dump-screen info-view.txt
:quit
KEYS
# the rl scenario (contrib/README.gensnap.md), as the walkthrough makes
# it: the phase spans, the phase view, the leak view of one instance
python3 "$top/contrib/gensnap.py" --scenario rl -o "$tmp/rl.pickle"
shoot rl.pickle <<'KEYS'
g
'
:dump-screen phase-spans.txt
P
:dump-screen phase-view.txt
j
j
j
j
j
j
j
j
j
j
j
j
j
j
W
U
:dump-screen phase-leaks.txt
:quit
KEYS
for f in leak-view leak-view-enter leak-view-next leak-window frag-view \
    frag-view-enter top-tree blocks-view oom-view events-view info-view \
    phase-spans phase-view phase-leaks; do
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
