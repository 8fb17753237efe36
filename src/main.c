/*
 * snapview: a terminal viewer and analyser for PyTorch GPU memory
 * snapshots. All the work is in the library; this only hands over argv.
 */
#include "config.h"

#include "cli/cli.h"
#include "util/xalloc.h"

int
main(int argc, char **argv)
{
	xalloc_tune();
	return cli_main(argc, argv);
}
