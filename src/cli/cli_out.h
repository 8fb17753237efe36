#ifndef SNAPVIEW_CLI_CLI_OUT_H
#define SNAPVIEW_CLI_CLI_OUT_H
/*
 * The file a command writes with -o (cut, report): never one the
 * program did not create unless --force says so. It is written through
 * a temporary file beside it (".NAME.XXXXXX", mode 0666 less the umask)
 * and put in place at the end: linked to its name, which fails when
 * something took that name meanwhile (on a file system without hard
 * links: renamed to it if the name is still free), or, with --force,
 * renamed over it. A failed write removes the temporary file and leaves
 * the name untouched; a killed process may leave the temporary file (a
 * dot file) behind, never a half-written file under the name.
 */
#include <stdio.h>

#include "cli/cli.h"

struct cli_out {
	const char *path;
	char *tmp;	/* owned */
	FILE *f;
	int force;
};

/* Checks o->output (given, absent or --force) and opens the temporary
 * file. Returns 0, or the exit status with the reason printed. */
int cli_out_open(const struct cli_opts *o, struct cli_out *out);
/* Closes and puts the file in place. Returns 0, or the exit status with
 * the reason printed (the temporary file removed). */
int cli_out_commit(struct cli_out *out);
/* Closes and removes the temporary file. */
void cli_out_abort(struct cli_out *out);

#endif
