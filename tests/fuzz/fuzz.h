#ifndef SNAPVIEW_TESTS_FUZZ_FUZZ_H
#define SNAPVIEW_TESTS_FUZZ_FUZZ_H
/*
 * The entry point every fuzz target defines. Under --enable-fuzzing it is
 * called by libFuzzer; otherwise replay.c's main() calls it once per file
 * of the corpus and crash directories given on its command line.
 * Contract (libFuzzer's): return 0; any crash, sanitizer report, leak or
 * abort() is a finding.
 */
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Called once before the first input (fuzz_init.c, in every target). */
int LLVMFuzzerInitialize(int *argc, char ***argv);

#endif
