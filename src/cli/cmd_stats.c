/*
 * snapview stats: placeholder until the loader lands.
 */
#include "config.h"

#include "cli/cli.h"

int
cmd_stats(const struct cli_opts *o)
{
	struct cli_input in;
	int r = cli_open(o, o->file, &in);

	if (r != 0)
		return r;
	printf("segments: %u\n", in.snap->n_segments);
	cli_close(&in);
	return 0;
}
