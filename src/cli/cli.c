/*
 * The helpers every command uses: opening a snapshot (through the index),
 * a replay of a device, the device to report, the options checked against
 * the file, error lines and file names made safe to print. Parsing and
 * dispatch are in cli_main.c.
 */
#include "config.h"

#include "cli/cli.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/summary.h"
#include "cli/progress.h"
#include "index/idx.h"
#include "replay/replay_idx.h"
#include "snapshot/snap_load.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/xalloc.h"

/* The first error of the run, for --json (cli_error_json()). */
static struct {
	int set;
	char msg[1024];
	char *file;		/* NULL: none */
	uint64_t byte;		/* SV_NO_OFFSET: none */
} first_error;
static int json_started;	/* the command's report has begun */

void
cli_error(const char *path, uint64_t byte, const char *fmt, ...)
{
	char msg[1024], p[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (path != NULL)
		/* a file name is untrusted text too (someone's tarball) */
		sv_escape(p, sizeof p, path, strlen(path));
	if (path != NULL && byte != SV_NO_OFFSET)
		fprintf(stderr, "snapview: %s: byte %" PRIu64 ": %s\n", p,
		    byte, msg);
	else if (path != NULL)
		fprintf(stderr, "snapview: %s: %s\n", p, msg);
	else
		fprintf(stderr, "snapview: %s\n", msg);
	if (first_error.set)
		return;
	first_error.set = 1;
	memcpy(first_error.msg, msg, sizeof msg);
	first_error.file = path != NULL ? xstrdup(path) : NULL;
	first_error.byte = byte;
}

int
cli_report(const char *path, const struct sv_error *err)
{
	cli_error(path, err->offset, "%s", err->msg);
	return sv_errcode_status(err->code);
}

void
cli_json_init(struct json *j)
{
	json_started = 1;
	json_init(j, stdout, 1);
}

void
cli_json_begun(void)
{
	json_started = 1;
}

int
cli_error_json(FILE *f)
{
	struct json j;

	if (!first_error.set || json_started)
		return 0;
	json_init(&j, f, 1);
	json_obj_begin(&j);
	json_key(&j, "error");
	json_obj_begin(&j);
	json_kv_str(&j, "message", first_error.msg);
	json_key(&j, "file");
	if (first_error.file != NULL)
		json_str(&j, first_error.file);
	else
		json_null(&j);
	json_key(&j, "byte");
	if (first_error.byte != SV_NO_OFFSET)
		json_u64(&j, first_error.byte);
	else
		json_null(&j);
	json_obj_end(&j);
	json_obj_end(&j);
	json_end(&j);
	return 1;
}

/* Extension sections every command asks the index for: the replay
 * engine's checkpoints, so seeking needs no backward pass on reopen, and
 * the summary a rank overview reads (analysis/summary.h). Every opener
 * asks for the same ones, so that no open rewrites an index for want of
 * a section another one left out. */
static struct idx_section_builder cli_sections[2];
static const size_t cli_n_sections = 2;

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
	cli_sections[0] = replay_idx_section;
	cli_sections[1] = an_summary_section;
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

uint64_t
cli_limit(const struct cli_opts *o, uint64_t text_default)
{
	if (o->has_limit)
		return o->limit > 0 ? (uint64_t)o->limit : UINT64_MAX;
	return o->json ? UINT64_MAX : text_default;
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
	cli_cancel_begin();
	r = idx_open(path, &io, &ix, &err);
	cli_cancel_end(&pb);
	cli_progress_end(&pb);
	if (r != 0)
		return cli_report(path, &err);
	in->index = ix;
	/* The index owns the snapshot; cli_close() releases both. */
	in->snap = (struct snapshot *)idx_snapshot(ix);
	if (path == o->file) {
		char msg[512];

		if (cli_check_args(o, o->uses, in->snap, msg,
		    sizeof msg) != 0) {
			cli_error(path, SV_NO_OFFSET, "%s", msg);
			cli_close(in);
			return CLI_EXIT_USAGE;
		}
	}
	return 0;
}

void
cli_close(struct cli_input *in)
{
	if (in->index != NULL) {
		struct idx_info info;

		/* a block that failed its checks read as zeros: say so (the
		 * index removes itself, so the next open rebuilds it) */
		idx_get_info(in->index, &info);
		if (idx_damaged(in->index))
			fprintf(stderr, "snapview: warning: %s: the index is "
			    "damaged (a block failed its checks) and the "
			    "answers above may be wrong; it is removed and "
			    "rebuilt on the next open\n", info.path != NULL
			    ? cli_shown(info.path) : "index in memory");
		idx_close(in->index);
	} else
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

/* "0, 1 and 3": the devices of s with data. */
static void
devices_with_data(const struct snapshot *s, char *buf, size_t size)
{
	uint32_t d, n = snap_device_count(s), k = 0, shown = 0;
	size_t len = 0;

	buf[0] = '\0';
	for (d = 0; d < n; d++)
		k += snap_device_has_data(s, d) != 0;
	for (d = 0; d < n && len < size; d++) {
		if (!snap_device_has_data(s, d))
			continue;
		shown++;
		len += (size_t)snprintf(buf + len, size - len, "%s%u",
		    shown == 1 ? "" : shown == k ? " and " : ", ", d);
	}
	if (k == 0)
		snprintf(buf, size, "none");
}

int64_t
cli_device(const struct cli_opts *o, const struct snapshot *s)
{
	char msg[512];

	if (o->device < 0)
		return snap_default_device(s);
	if (cli_check_args(o, 0, s, msg, sizeof msg) != 0) {
		cli_error(o->file, SV_NO_OFFSET, "%s", msg);
		return -1;
	}
	return o->device;
}

/* Is ev an event of device d (lo = -1: or the state before the first)?
 * Fills msg with the range otherwise. */
static int
check_event(const struct snapshot *s, uint32_t d, const char *opt,
    int64_t ev, int lo, char *msg, size_t size)
{
	const struct snap_trace *t = snap_trace_of(s, d);
	int64_t n = t != NULL ? (int64_t)t->n : 0;

	if (ev >= lo && ev < n)
		return 0;
	if (n == 0)
		snprintf(msg, size, "%s %" PRId64 ": device %u has no trace "
		    "events", opt, ev, d);
	else
		snprintf(msg, size, "%s %" PRId64 " is outside the events of "
		    "device %u: %d..%" PRId64 "%s", opt, ev, d, lo, n - 1,
		    lo < 0 ? " (-1 or start: before the first)" : "");
	return -1;
}

int
cli_check_args(const struct cli_opts *o, unsigned uses,
    const struct snapshot *s, char *msg, size_t size)
{
	char list[256];
	uint32_t d, n = snap_device_count(s), checked = 0, def = 0;
	const struct snap_trace *t;

	if (o->device >= 0 && ((uint64_t)o->device >= n ||
	    !snap_device_has_data(s, (uint32_t)o->device))) {
		devices_with_data(s, list, sizeof list);
		snprintf(msg, size, "--device %" PRId64 ": no data for that "
		    "device; devices with data: %s", o->device, list);
		return -1;
	}
	if ((uses & CLI_U_WINDOW) && o->has_from && o->has_to &&
	    o->from > o->to) {
		snprintf(msg, size, "--from %" PRId64 " comes after --to %"
		    PRId64, o->from, o->to);
		return -1;
	}
	/* once: it reads every trace list, and a file may hold 65,536 */
	if (o->device < 0 && (uses & CLI_U_ONE_DEVICE))
		def = snap_default_device(s);
	for (d = 0; d < n; d++) {
		if (o->device >= 0 ? d != (uint64_t)o->device :
		    (uses & CLI_U_ONE_DEVICE) ? d != def :
		    !snap_device_has_data(s, d))
			continue;
		/* reporting every device: one with segments only has no
		 * event to be at */
		t = snap_trace_of(s, d);
		if (o->device < 0 && !(uses & CLI_U_ONE_DEVICE) &&
		    (t == NULL || t->n == 0))
			continue;
		checked++;
		if ((uses & CLI_U_AT) && o->has_at &&
		    check_event(s, d, "--at", o->at, -1, msg, size) != 0)
			return -1;
		if ((uses & CLI_U_WINDOW) && o->has_from &&
		    check_event(s, d, "--from", o->from, -1, msg, size) != 0)
			return -1;
		if ((uses & CLI_U_WINDOW) && o->has_to &&
		    check_event(s, d, "--to", o->to, 0, msg, size) != 0)
			return -1;
	}
	if (checked == 0 && (((uses & CLI_U_AT) && o->has_at) ||
	    ((uses & CLI_U_WINDOW) && (o->has_from || o->has_to)))) {
		snprintf(msg, size, "no trace events: --%s needs some",
		    (uses & CLI_U_AT) && o->has_at ? "at" : o->has_from ?
		    "from" : "to");
		return -1;
	}
	return 0;
}
