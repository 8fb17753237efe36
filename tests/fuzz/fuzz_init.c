/*
 * What every fuzz target does once before its first input (fuzz.h).
 */
#include "config.h"

#include "fuzz.h"
#include "util/thread.h"

/* One thread: every input's work on the calling thread (the index is
 * the same bytes either way, tests/index/threads.test). ASan maps shadow
 * for each new thread's stack, and tens of thousands of inputs, each
 * with its build's threads, fragmented it past the kernel's 65,530
 * mappings: fuzz_output died of ENOMEM in ASan's own mmap after 63,629
 * inputs, fuzz_index reached 31,000 mappings. The program itself keeps
 * its mappings (2,000 index builds in one process: 56 before and after). */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	sv_thread_set_max(1);
	return 0;
}
