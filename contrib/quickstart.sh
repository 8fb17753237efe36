#!/bin/sh
# quickstart.sh demo|test -- README's two commands.
#
# Installs what the build needs (apt-get when run as root on Debian;
# otherwise prints the exact apt-get line and stops), bootstraps, builds,
# then either opens the demo snapshot (demo) or runs the whole test suite
# (test). Safe to run again: each step is skipped when already done.
set -eu
cd "$(dirname "$0")/.."

PKGS="autoconf automake make gcc libc6-dev pkg-config libncurses-dev \
libmsgpack-dev liblz4-dev libxxhash-dev zlib1g-dev libyajl-dev check tmux \
python3 unicode-data"

case "${1:-}" in
demo|test) ;;
*) echo "usage: $0 demo|test" >&2; exit 1 ;;
esac

missing=""
if command -v dpkg-query >/dev/null 2>&1; then
	for p in $PKGS; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
		    grep -q "ok installed" || missing="$missing $p"
	done
else
	echo "quickstart: not a Debian system; make sure these are installed:" >&2
	echo "  $PKGS" >&2
fi
if [ -n "$missing" ]; then
	if [ "$(id -u)" -eq 0 ]; then
		echo "quickstart: installing$missing"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		    --no-install-recommends $missing >/dev/null
	else
		echo "quickstart: missing packages; run:" >&2
		echo "  sudo apt-get install$missing" >&2
		exit 1
	fi
fi

jobs=$(nproc 2>/dev/null || echo 2)
[ -x configure ] || ./autogen.sh
[ -f Makefile ] || ./configure --enable-werror
make -j"$jobs"

if [ "$1" = demo ]; then
	# The TUI needs a terminal; without one, print the summary instead.
	if [ -t 1 ] && [ -t 0 ]; then
		exec ./src/snapview tests/data/demo.pickle
	fi
	exec ./src/snapview stats tests/data/demo.pickle
fi
if ! make -j"$jobs" check; then
	cat test-suite.log
	exit 1
fi
# Check prints "100%: Checks: N, Failures: 0, Errors: 0" per unit binary.
cat tests/unit/*.log | grep -E '^[0-9]+%: Checks' || true
