/*
 * snapview: a terminal viewer and analyser for PyTorch GPU memory
 * snapshots. All the work is in the library; this only hands over argv.
 */
#include "config.h"

#include "cli/cli.h"
#include "util/fatal.h"
#include "util/xalloc.h"

int
main(int argc, char **argv)
{
	xalloc_tune();
	sv_fatal_install();
	return cli_main(argc, argv);
}
