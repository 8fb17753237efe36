/*
 * snapview: a terminal viewer and analyser for PyTorch GPU memory
 * snapshots. All the work is in the library; this only hands over argv.
 */
#include "config.h"

#include "cli/cli.h"

int
main(int argc, char **argv)
{
	return cli_main(argc, argv);
}
