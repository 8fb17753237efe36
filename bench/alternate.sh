# Sourced by the bench scripts that measure two files under the same
# conditions (tui_moves.sh, tui_open.sh).
#
# alternate RUNS DIR NAME BIN [NAME BIN]: for R from 1 to RUNS, for each
# build, calls the caller's "run BIN $small DIR/NAME.small.R", then the
# same for $large: the files and the builds take turns, so that a change
# in the machine's load falls on all of them.
alternate() {
	_runs=$1 _dir=$2
	shift 2
	_r=1
	while [ "$_r" -le "$_runs" ]; do
		_n=0
		for _x in "$@"; do
			_n=$((_n + 1))
			[ $((_n % 2)) -eq 1 ] && { _name=$_x; continue; }
			run "$_x" "$small" "$_dir/$_name.small.$_r"
			run "$_x" "$large" "$_dir/$_name.large.$_r"
		done
		_r=$((_r + 1))
	done
}

# alternate_head WHAT: the report's first lines (what is measured, the
# machine's load, the files and the runs); sets names, the builds' names
# as alternate() took them ("after", then "before" with BEFORE=).
alternate_head() {
	echo "snapview: $1"
	echo "load: $(uptime | sed 's/.*load average: //')"
	echo "small: $(basename "$small"); large: $(basename "$large");" \
	    "$runs runs of each, alternated"
	names=after
	if [ -n "${BEFORE:-}" ]; then
		names="after before"
	fi
}

# alternate_init SUBDIR ARG...: the arguments such a script takes (SMALL
# LARGE [RUNS]); sets bin (SNAPVIEW, default this tree's build; the
# caller sets here, the tree's root), dir (BENCH_DIR), small, large and
# runs (default 5), and makes $dir/cache and $dir/SUBDIR for the logs.
alternate_init() {
	_sub=$1
	shift
	bin=${SNAPVIEW:-$here/src/snapview}
	dir=${BENCH_DIR:-/tmp/snapview-bench}
	[ $# -ge 2 ] || { echo "usage: $0 SMALL LARGE [RUNS]" >&2; exit 2; }
	small=$1 large=$2 runs=${3:-5}
	mkdir -p "$dir/cache" "$dir/$_sub"
}
