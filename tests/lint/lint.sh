#!/bin/sh
# The tree's lints, run by tests/lint/layers.test (on the source tree) and
# tests/lint/planted.test (on copies with a planted violation).
#
#   tests/lint/lint.sh [-u] ROOT [CHECK...]
#
# CHECK is one of (default: all of them):
#   layers    no include, #include "dir/..." or #include <dir/...> for a
#             directory of src/, goes from a lower layer of src/ to a
#             higher one (the order is tests/lint/layers.order, as in
#             ARCHITECTURE.md), and none is computed (#include MACRO);
#             only src/tui includes curses; a private header (*_int.h)
#             is included from its own directory only; the library layers
#             (util to render) never print to stdout or stderr nor exit
#             (printf and friends, stdout, stderr, STDOUT_FILENO,
#             STDERR_FILENO, write() to fd 1 or 2, /dev/tty, err(3) and
#             warn(3), exit, _exit, _Exit, quick_exit, abort, assert),
#             except the two files that must: src/util/xalloc.c, the
#             out-of-memory path, and src/util/fatal.c, the fatal-signal
#             handler; a thread starts only through sv_thread_start()
#             (src/util/thread.c), which blocks the asynchronous signals
#             in it. (Calls from a lower layer to a higher one are
#             checked on the built objects: tests/callgraph/cycles.test.)
#   headers   every header under src/ compiles on its own, twice in a row
#             ($CC -fsyntax-only of a file that includes only it).
#   sections  every "§N" resolves to a heading of the document it cites:
#             the last *.md path named in the same paragraph (a run of
#             non-blank lines); else the file's own default, declared
#             once as "(§N) refer to PATH.md"; else, in a .md file, that
#             file itself. Paths are relative to ROOT. Files listed in
#             tests/lint/sections.allow are not checked yet.
#   long      no C source line is over 80 columns (tabs every 8), except
#             as many as tests/lint/long-lines.allow grants each file.
#             -u rewrites that list from the tree instead.
#   golden    one golden comparison: no file under tests/ but
#             tests/lib/golden.sh reads SV_UPDATE_GOLDEN (a line that
#             names it outside a comment), so every golden is compared,
#             and rewritten, the same way (tests/lint/golden.test holds
#             the helper to its word).
#   size      no source file (C, Python, shell, tests) under src/, tests/,
#             bench/ or contrib/ is over 1,500 lines, and no C function
#             is over 150 (from its opening brace in column 1 to its
#             closing one).
#   python    every *.py under tests/ (the helpers of tests/lib/ and the
#             oracles beside the tests) compiles: $PYTHON3 -m py_compile,
#             its byte code in a temp dir (PYTHONPYCACHEPREFIX, Python
#             3.8 or later). Not in the default set: it needs python3
#             (tests/lint/python.test runs it, or skips).
#
# Each violation is one line "FILE:LINE: reason" on stdout; the exit
# status is 1 when there was any, 0 otherwise. Environment for headers:
# LINT_CC (default cc), LINT_CFLAGS (warnings, -std), LINT_CPPFLAGS (the
# dependencies' -D/-I flags).
set -u
LC_ALL=C
export LC_ALL

update=0
if [ "${1:-}" = -u ]; then
	update=1
	shift
fi
if [ $# -lt 1 ] || [ ! -d "$1/src" ]; then
	echo "usage: $0 [-u] ROOT" \
	    "[layers|headers|sections|long|golden|size|python]..." >&2
	exit 2
fi
root=$(cd "$1" && pwd)
shift
checks=${*:-layers headers sections long golden size}
lintdir=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/snapview-lint.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$root" || exit 2
status=0

# C sources and headers under src/, as paths relative to ROOT.
find src -type f \( -name '*.c' -o -name '*.h' \) | sort > "$tmp/src"

# ---- layers -----------------------------------------------------------------
# Lowest first: a file may include its own layer and any below it. The
# order is ARCHITECTURE.md's, kept in tests/lint/layers.order; src/main.c
# sits above everything.
check_layers() {
	order=$(grep -v '^#' "$lintdir/layers.order" | tr '\n' ' ')
	case $order in
	*[a-z]*) ;;
	*) echo "tests/lint/layers.order:1: no layers in it"; return ;;
	esac
	find src -mindepth 1 -maxdepth 1 -type d | sed 's|^src/||' |
	    tr '\n' ' ' > "$tmp/dirs"
	awk -v order="$order" -v dirs="$(cat "$tmp/dirs")" \
	    -v may_print="src/util/xalloc.c src/util/fatal.c" '
	BEGIN {
		n = split(order, l, " ")
		for (i = 1; i <= n; i++)
			rank[l[i]] = i
		rank["main"] = n + 1
		n = split(may_print, l, " ")
		for (i = 1; i <= n; i++)
			printer[l[i]] = 1
		n = split(dirs, l, " ")
		for (i = 1; i <= n; i++)
			srcdir[l[i]] = 1
	}
	FNR == 1 {
		layer = FILENAME
		sub(/^src\//, "", layer)
		if (layer ~ /\//)
			sub(/\/.*/, "", layer)
		else
			layer = "main"
		dir = FILENAME
		sub(/\/[^\/]*$/, "", dir)
		sub(/^src\//, "", dir)
		if (!(layer in rank))
			printf "%s:1: src/%s is in no layer (add it to " \
			    "tests/lint/layers.order)\n", FILENAME, layer
	}
	/^[ \t]*#[ \t]*include[ \t]*<(n?curses|ncursesw\/|term\.h|panel\.h|menu\.h|form\.h)/ {
		if (layer != "tui")
			printf "%s:%d: curses is for src/tui only\n",
			    FILENAME, FNR
	}
	# every form: "dir/x.h", <dir/x.h> for a directory of src/
	# (-I src finds both), and a computed one, which cannot be checked
	/^[ \t]*#[ \t]*(include|include_next|import)([^A-Za-z0-9_]|$)/ {
		inc = $0
		sub(/^[ \t]*#[ \t]*[a-z_]+[ \t]*/, "", inc)
		if (inc ~ /^</) {
			sub(/^</, "", inc)
			sub(/>.*/, "", inc)
			to = inc
			sub(/\/.*/, "", to)
			if (inc !~ /\// || !(to in srcdir))
				next # a system header
			shown = "<" inc ">"
		} else if (inc ~ /^"/) {
			sub(/^"/, "", inc)
			sub(/".*/, "", inc)
			shown = "\"" inc "\""
		} else {
			printf "%s:%d: a computed include (the layers lint " \
			    "cannot check it)\n", FILENAME, FNR
			next
		}
		if (inc !~ /\//) {
			if (inc != "config.h")
				printf "%s:%d: include %s names no " \
				    "layer (write \"dir/%s\")\n", FILENAME,
				    FNR, shown, inc
			next
		}
		to = inc
		sub(/\/.*/, "", to)
		if (!(to in rank) || to == "main") {
			printf "%s:%d: include %s: %s is no layer of " \
			    "src/\n", FILENAME, FNR, shown, to
			next
		}
		if (rank[to] > rank[layer])
			printf "%s:%d: %s includes %s from the higher " \
			    "layer %s\n", FILENAME, FNR, layer, shown, to
		if (inc ~ /_int\.h$/ && inc !~ "^" dir "/")
			printf "%s:%d: %s is private to src/%s\n",
			    FILENAME, FNR, shown, to
	}
	# library layers: no output of their own, no exit
	# (a member call, ops->exit() or s.abort(), is not the libc one)
	rank[layer] <= rank["render"] && !(FILENAME in printer) &&
	    $0 !~ /^[ \t]*(\/?\*|\/\/)/ &&
	    ($0 ~ /(^|[^A-Za-z0-9_.>])(v?printf|v?dprintf|puts|putchar|perror|psignal|psiginfo|v?syslog|v?errx?|v?warnx?|exit|_exit|_Exit|quick_exit|abort|assert)[ \t]*\(/ ||
	    $0 ~ /(^|[^A-Za-z0-9_])(stdout|stderr|STDOUT_FILENO|STDERR_FILENO)([^A-Za-z0-9_]|$)/ ||
	    $0 ~ /(^|[^A-Za-z0-9_.>])write[ \t]*\([ \t]*[12][ \t]*,/ ||
	    $0 ~ /"\/dev\/(tty|stdout|stderr)"/) {
		printf "%s:%d: the %s layer prints or exits (only src/cli " \
		    "and src/tui may)\n", FILENAME, FNR, layer
	}
	FILENAME != "src/util/thread.c" &&
	    $0 !~ /^[ \t]*(\/?\*|\/\/)/ &&
	    $0 ~ /(^|[^A-Za-z0-9_])pthread_create[ \t]*\(/ {
		printf "%s:%d: a thread starts through sv_thread_start() " \
		    "(util/thread.h)\n", FILENAME, FNR
	}
	' $(cat "$tmp/src")
}

# ---- headers ------------------------------------------------------------------
check_headers() {
	cc=${LINT_CC:-cc}
	grep '\.h$' "$tmp/src" | while read -r h; do
		rel=${h#src/}
		printf '#include "%s"\n#include "%s"\n' "$rel" "$rel" \
		    > "$tmp/tu.c"
		# shellcheck disable=SC2086
		if ! $cc ${LINT_CFLAGS:--std=c11 -Wall -Wextra -Werror} \
		    ${LINT_CPPFLAGS:-} -I "$root/src" -fsyntax-only \
		    "$tmp/tu.c" > "$tmp/cc.out" 2>&1; then
			msg=$(grep -m1 'error' "$tmp/cc.out" |
			    sed 's/^[^:]*:[0-9:]* *//')
			echo "$h:1: does not compile on its own: ${msg:-$cc failed}"
		fi
	done
}

# ---- sections -----------------------------------------------------------------
# Text files that may cite a section, minus the ones not checked yet.
section_files() {
	{
		find src doc tests bench contrib \
		    \( -path tests/data -o -path tests/fuzz/corpus \
		    -o -path tests/fuzz/crashes \) -prune -o -type f \
		    \( -name '*.[ch]' -o -name '*.md' -o -name '*.py' \
		    -o -name '*.sh' -o -name '*.test' -o -name '*.1' \) -print \
		    2> /dev/null
		ls ./*.md Makefile.am configure.ac 2> /dev/null |
		    sed 's|^\./||'
	} | sort > "$tmp/all"
	if [ -f "$lintdir/sections.allow" ]; then
		grep -v '^#' "$lintdir/sections.allow" | grep . |
		    while read -r skip; do
			grep -v "^$skip" "$tmp/all" > "$tmp/all.1"
			mv "$tmp/all.1" "$tmp/all"
		done
	fi
	cat "$tmp/all"
}

check_sections() {
	section_files > "$tmp/sfiles"
	[ -s "$tmp/sfiles" ] || return 0
	# Pass 1: every reference with the document it binds to.
	# shellcheck disable=SC2046
	awk '
	function flush_ref(ref) {
		if (doc == "")
			printf "%s:%d: \302\247%s names no document " \
			    "(write doc/NAME.md \302\247%s)\n", FILENAME, FNR,
			    ref, ref > "/dev/stderr"
		else
			printf "%s\t%d\t%s\t%s\n", FILENAME, FNR, doc, ref
	}
	FNR == 1 { doc = ""; fdefault = ""; declaring = 0 }
	/^[ \t]*(\*|#|\/\/|\/\*|"""|\*\/)?[ \t]*$/ { doc = ""; next }
	{
		if ($0 ~ /\302\247N\)? refers? to/)
			declaring = 1
		if (doc == "" && fdefault != "")
			doc = fdefault
		if (doc == "" && FILENAME ~ /\.md$/)
			doc = FILENAME
		rest = $0
		while (match(rest, /[A-Za-z0-9_.\/-]*[A-Za-z0-9_-]\.md|\302\247[0-9]+(\.[0-9]+)*([-\342\200\223]+(\302\247)?[0-9]+(\.[0-9]+)*)?/)) {
			tok = substr(rest, RSTART, RLENGTH)
			rest = substr(rest, RSTART + RLENGTH)
			if (tok !~ /^\302\247/) {
				doc = tok
				sub(/^\.\//, "", doc)
				if (declaring) {
					fdefault = doc
					declaring = 0
				}
				continue
			}
			sub(/^\302\247/, "", tok)
			# a range A-B (or A-§B): both ends must resolve
			n = split(tok, part, /[-\342\200\223]+(\302\247)?/)
			for (i = 1; i <= n; i++)
				if (part[i] != "")
					flush_ref(part[i])
		}
	}
	' $(cat "$tmp/sfiles") > "$tmp/refs" 2> "$tmp/norefs"
	cat "$tmp/norefs"
	[ -s "$tmp/norefs" ] && status=1
	# Pass 2: each cited document's headings "#... N. " or "#... N ".
	awk -F '\t' '
	function load(d,    line, h) {
		loaded[d] = 1
		if ((getline line < d) < 0) {
			missing[d] = 1
			return
		}
		do {
			if (line !~ /^#+ [0-9]/)
				continue
			h = line
			sub(/^#+ /, "", h)
			sub(/[ ].*$/, "", h)
			sub(/\.$/, "", h)
			head[d, h] = 1
		} while ((getline line < d) > 0)
		close(d)
	}
	{
		if (!($3 in loaded))
			load($3)
		if ($3 in missing)
			printf "%s:%d: \302\247%s cites %s, which is not in " \
			    "the tree\n", $1, $2, $4, $3
		else if (!(($3, $4) in head))
			printf "%s:%d: \302\247%s is no heading of %s\n", $1,
			    $2, $4, $3
	}
	' "$tmp/refs"
}

# ---- long lines -----------------------------------------------------------------
# Columns: tabs to the next multiple of 8, a UTF-8 character is one
# column (its continuation bytes count nothing).
long_counts() {
	find src tests bench -type f \( -name '*.c' -o -name '*.h' \) \
	    2> /dev/null | sort | xargs awk '
	FNR == 1 && NR > 1 { report() }
	FNR == 1 { file = FILENAME; n = 0 }
	{
		line = $0
		t = gsub(/\t/, "\t", line)
		if (length(line) + 7 * t <= 80)
			next
		col = 0
		len = length(line)
		for (i = 1; i <= len; i++) {
			c = substr(line, i, 1)
			if (c == "\t")
				col = col - col % 8 + 8
			else if (c !~ /[\200-\277]/)
				col++
		}
		if (col > 80) {
			n++
			where[n] = FNR
			cols[n] = col
		}
	}
	function report(   i) {
		if (n > 0) {
			printf "%d %s", n, file
			for (i = 1; i <= n; i++)
				printf " %d:%d", where[i], cols[i]
			printf "\n"
		}
	}
	END { if (NR > 0) report() }
	'
}

check_long() {
	long_counts > "$tmp/long"
	if [ "$update" -eq 1 ]; then
		{
			echo "# C source lines over 80 columns that predate the"
			echo "# lint, as COUNT FILE: tests/lint/lint.sh fails when"
			echo "# a file has more. Regenerate after a sweep with"
			echo "# tests/lint/lint.sh -u . long (and review the diff)."
			cut -d' ' -f1,2 "$tmp/long"
		} > "$lintdir/long-lines.allow"
		return 0
	fi
	allow=$lintdir/long-lines.allow
	[ -f "$allow" ] || allow=/dev/null
	awk -v allow="$allow" '
	BEGIN {
		while ((getline line < allow) > 0)
			if (line !~ /^#/ && split(line, f, " ") == 2)
				granted[f[2]] = f[1]
	}
	{
		g = ($2 in granted) ? granted[$2] : 0
		if ($1 <= g)
			next
		for (i = 3; i <= NF; i++) {
			split($i, p, ":")
			printf "%s:%d: %d columns (over 80", $2, p[1], p[2]
			if (g > 0)
				printf "; %d long lines allowed here, %d " \
				    "found", g, $1
			printf ")\n"
		}
	}
	' "$tmp/long"
}

# ---- golden -----------------------------------------------------------
check_golden() {
	grep -rn --include='*.sh' --include='*.test' --include='*.py' \
	    --include='*.[ch]' SV_UPDATE_GOLDEN tests 2>/dev/null |
	    grep -v '^tests/lib/golden\.sh:' |
	    grep -v '^tests/lint/[a-z]*\.\(sh\|test\):' |
	    grep -v '^[^:]*:[0-9]*:[[:space:]]*\(#\|\*\|/\*\|//\)' |
	    sed 's/^\([^:]*:[0-9]*\):.*/\1: reads SV_UPDATE_GOLDEN itself/'
}

# ---- size ---------------------------------------------------------------
check_size() {
	find src tests bench contrib -type f \( -name '*.[ch]' -o \
	    -name '*.py' -o -name '*.sh' -o -name '*.test' \) \
	    ! -path 'tests/data/*' ! -path 'tests/fuzz/corpus/*' \
	    ! -path 'tests/fuzz/crashes/*' | sort | while read -r f; do
		awk -v f="$f" '
		END { if (NR > 1500)
			printf "%s:%d: %d lines, over 1500\n", f, NR, NR }
		' "$f"
		case $f in
		*.c) awk -v f="$f" '
			/^\{/ { open = FNR }
			/^\}/ && open { if (FNR - open > 150)
				printf "%s:%d: a function of %d lines, " \
				    "over 150\n", f, open, FNR - open
				open = 0 }
			' "$f" ;;
		esac
	done
}

# ---- python -------------------------------------------------------------------
check_python() {
	py=${PYTHON3:-python3}
	find tests -type f -name '*.py' | sort | while read -r f; do
		if ! PYTHONPYCACHEPREFIX="$tmp/pyc" "$py" -m py_compile "$f" \
		    > "$tmp/py.out" 2>&1; then
			line=$(sed -n 's/.*line \([0-9][0-9]*\).*/\1/p' \
			    "$tmp/py.out" | head -n 1)
			msg=$(grep -m1 'Error' "$tmp/py.out")
			echo "$f:${line:-1}: does not compile: ${msg:-$py failed}"
		fi
	done
}

for c in $checks; do
	case $c in
	layers|headers|sections|long|golden|size|python) ;;
	*) echo "$0: unknown check $c" >&2; exit 2 ;;
	esac
	"check_$c" > "$tmp/out"
	if [ -s "$tmp/out" ]; then
		cat "$tmp/out"
		status=1
	fi
done
exit $status
