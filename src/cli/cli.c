/*
 * The helpers every command uses: opening a snapshot (through the index),
 * a replay of a device, the device to report, error lines and file names
 * made safe to print. Parsing and dispatch are in cli_main.c.
 */
#include "config.h"

#include "cli/cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/progress.h"
#include "index/idx.h"
#include "replay/replay_idx.h"
#include "snapshot/snap_load.h"
#include "util/escape.h"

int
cli_report(const char *path, const struct sv_error *err)
{
	char p[1024];

	/* a file name is untrusted text too (someone else's tarball) */
	sv_escape(p, sizeof p, path, strlen(path));
	if (err->offset != SV_NO_OFFSET)
		fprintf(stderr, "snapview: %s: byte %" PRIu64 ": %s\n", p,
		    err->offset, err->msg);
	else
		fprintf(stderr, "snapview: %s: %s\n", p, err->msg);
	return sv_errcode_status(err->code);
}

/* Extension sections every command asks the index for: the replay
 * engine's checkpoints, so seeking needs no backward pass on reopen. */
static const struct idx_section_builder *const cli_sections =
    &replay_idx_section;
static const size_t cli_n_sections = 1;

static void
cli_warn(void *ctx, const char *msg)
{
	char buf[1024];

	(void)ctx;
	/* index warnings quote file names: untrusted text */
	sv_escape(buf, sizeof buf, msg, strlen(msg));
	fprintf(stderr, "snapview: warning: %s\n", buf);
}

void
cli_index_opts(const struct cli_opts *o, struct idx_opts *io,
    struct cli_progress *pb, const char *path)
{
	memset(io, 0, sizeof *io);
	io->cache_dir = o->cache_dir;
	io->no_cache = o->no_cache;
	io->warn = cli_warn;
	/* an in-memory index is thrown away: checkpoints would be built for
	 * nothing (a command that replays builds what it needs) */
	io->sections = o->no_cache ? NULL : cli_sections;
	io->n_sections = o->no_cache ? 0 : cli_n_sections;
	cli_progress_init(pb, stderr, path, o->quiet);
	io->progress = cli_progress_cb;
	io->progress_ctx = pb;
}

const char *
cli_shown(const char *s)
{
	static char buf[4][1024];
	static unsigned next;
	char *b = buf[next++ % 4];

	sv_escape(b, sizeof buf[0], s, strlen(s));
	return b;
}

int
cli_open(const struct cli_opts *o, const char *path, struct cli_input *in)
{
	struct sv_error err;
	struct idx_opts io;
	struct cli_progress pb;
	struct sv_index *ix;
	int r;

	memset(in, 0, sizeof *in);
	sv_error_clear(&err);
	cli_index_opts(o, &io, &pb, path);
	r = idx_open(path, &io, &ix, &err);
	cli_progress_end(&pb);
	if (r != 0)
		return cli_report(path, &err);
	in->index = ix;
	/* The index owns the snapshot; cli_close() releases both. */
	in->snap = (struct snapshot *)idx_snapshot(ix);
	return 0;
}

void
cli_close(struct cli_input *in)
{
	if (in->index != NULL)
		idx_close(in->index);
	else
		snap_free(in->snap);
	in->index = NULL;
	in->snap = NULL;
}

struct replay *
cli_replay(const struct cli_input *in, uint32_t d, struct sv_error *err)
{
	if (in->index != NULL)
		return replay_from_index(in->index, d, err);
	return replay_new(in->snap, d, err);
}

int64_t
cli_device(const struct cli_opts *o, const struct snapshot *s)
{
	if (o->device < 0)
		return snap_default_device(s);
	if ((uint64_t)o->device >= snap_device_count(s)) {
		char p[1024];

		sv_escape(p, sizeof p, o->file, strlen(o->file));
		fprintf(stderr, "snapview: %s: no data for device %" PRId64
				"\n", p, o->device);
		return -1;
	}
	return o->device;
}
