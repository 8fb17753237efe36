#!/bin/sh
# CI fuzzing: builds the libFuzzer targets with clang (ASan + UBSan) in a
# separate build directory and runs each for a fixed short time, starting
# from the committed corpus. Exit 0 = no finding, 1 = a finding (its
# reproducer is left in $FUZZ_OUT, add it to tests/fuzz/crashes/<target>/),
# 77 = clang or libFuzzer missing (Debian: apt-get install clang
# libclang-rt-14-dev).
#
# usage: tests/fuzz/ci-fuzz.sh [SECONDS_PER_TARGET]   (default 120)
# env:   CC (default clang), FUZZ_BUILD (default build-fuzz), FUZZ_OUT
set -eu
secs=${1:-120}
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${FUZZ_BUILD:-$src/build-fuzz}
out=${FUZZ_OUT:-$build/fuzz-out}
cc=${CC:-clang}

command -v "$cc" >/dev/null 2>&1 || {
	echo "ci-fuzz: $cc not found (apt-get install clang libclang-rt-14-dev)"
	exit 77
}
probe=$(mktemp -d "${TMPDIR:-/tmp}/ci-fuzz.XXXXXX")
trap 'rm -rf "$probe"' EXIT
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
    'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
    'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
    > "$probe/t.c"
"$cc" -fsanitize=fuzzer,address,undefined "$probe/t.c" -o "$probe/t" \
    >/dev/null 2>&1 || {
	echo "ci-fuzz: $cc cannot link -fsanitize=fuzzer (apt-get install libclang-rt-14-dev)"
	exit 77
}

[ -x "$src/configure" ] || (cd "$src" && autoreconf -fi)
mkdir -p "$build" "$out"
cd "$build"
[ -f Makefile ] || "$src/configure" CC="$cc" --enable-fuzzing --enable-werror \
    >configure.out
make -j2 fuzz >make.out

rc=0
for t in pickle load index stripe output ckpt remap; do
	mkdir -p "$out/corpus-$t" "$out/art-$t"
	cp "$src/tests/fuzz/corpus/$t/"* "$out/corpus-$t/" 2>/dev/null || true
	echo "ci-fuzz: fuzz_$t for ${secs}s"
	# quarantine 64 MiB: ASan's default 256 MiB of freed memory, kept
	# to catch use after free, alone took fuzz_output past the 512 MB
	# limit with no input holding more than 100 MB
	if ! ASAN_OPTIONS=detect_leaks=1:quarantine_size_mb=64 \
	    "./tests/fuzz/fuzz_$t" \
	    -max_total_time="$secs" -rss_limit_mb=512 -timeout=5 \
	    -max_len=65536 -print_final_stats=1 \
	    -artifact_prefix="$out/art-$t/" "$out/corpus-$t" \
	    "$src/tests/fuzz/crashes/$t" >"$out/fuzz_$t.log" 2>&1; then
		echo "ci-fuzz: fuzz_$t FOUND something:"
		grep -E 'ERROR|SUMMARY|Test unit written' "$out/fuzz_$t.log" || \
		    tail -20 "$out/fuzz_$t.log"
		rc=1
	fi
	grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' \
	    "$out/fuzz_$t.log" | sed "s/^/ci-fuzz: fuzz_$t: /" || true
done
exit $rc
