#!/bin/sh
# The one golden comparison of the tests, shell and C alike:
#
#     sh tests/lib/golden.sh GOLDEN ACTUAL
#
# compares the output ACTUAL with the committed file GOLDEN and prints
# `diff -u GOLDEN ACTUAL` when they differ (exit 1). With
# SV_UPDATE_GOLDEN set and not empty it copies ACTUAL over GOLDEN
# instead, says so on stderr and exits 0. A missing ACTUAL or GOLDEN
# fails with a line saying which (exit 1); a copy that cannot be made,
# exit 99. tests/lint/golden.test holds it to this.
if [ $# -ne 2 ]; then
	echo "usage: golden.sh GOLDEN ACTUAL" >&2
	exit 99
fi
golden=$1 actual=$2
if [ ! -f "$actual" ]; then
	echo "no output to compare with $golden: $actual" >&2
	exit 1
fi
if [ -n "${SV_UPDATE_GOLDEN:-}" ]; then
	cp "$actual" "$golden" || exit 99
	echo "golden rewritten: $golden" >&2
	exit 0
fi
if [ ! -f "$golden" ]; then
	echo "no golden $golden (SV_UPDATE_GOLDEN=1 writes it)" >&2
	exit 1
fi
diff -u "$golden" "$actual" && exit 0
echo "$golden differs (-: golden, +: this run;" \
    "SV_UPDATE_GOLDEN=1 rewrites it)" >&2
exit 1
