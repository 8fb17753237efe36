/*
 * Argument parsing and dispatch. Options are shared by every command;
 * a command ignores the ones that do not concern it.
 */
#include "config.h"

#include "cli/cli.h"

#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/summary.h"
#include "cli/progress.h"
#include "index/idx.h"
#include "replay/replay_idx.h"
#include "snapshot/snap_load.h"
#include "tui/tui.h"
#include "util/escape.h"

static const struct {
	const char *name;
	int (*fn)(const struct cli_opts *);
	unsigned uses;
	const char *summary;
} commands[] = {
#define CLI_ROW(name, fn, uses, summary) {#name, fn, uses, summary},
    CLI_COMMANDS(CLI_ROW)
#undef CLI_ROW
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void
usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: snapview [OPTIONS] FILE\n"
		   "       snapview COMMAND [OPTIONS] FILE\n"
		   "       snapview [ranks] [OPTIONS] FILE... | DIR\n"
		   "       snapview cache [--list | --trim | --clear]\n\n"
		   "Opens a PyTorch memory snapshot (the pickle written by\n"
		   "torch.cuda.memory._dump_snapshot) in a terminal viewer,\n"
		   "or answers a question about it:\n\n");
	for (i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
	    "\nOptions:\n"
	    "  --json            machine-readable output\n"
	    "  --device D        device to report (default: most events)\n"
	    "  --at N            state after event N (-1: before the first);\n"
	    "                    diff: --at N,M compares A after N, B after M\n"
	    "  --step K          (diff) each file at its highest point in\n"
	    "                    step K\n"
	    "  --from N, --to M  event window\n"
	    "  --frames K        call-site depth for grouping\n"
	    "  --site-regex RE   group by the first frame matching RE\n"
	    "  --limit N         rows to print\n"
	    "  --by WHAT         top: group by site (default) or category\n"
	    "  --categories FILE your category rules (lines CATEGORY REGEX)\n"
	    "  --jobs N          (ranks) index at most N files at once\n"
	    "  --cache-dir DIR   where to keep the index\n"
	    "  --no-cache        build the index in memory only\n"
	    "  --no-mouse        viewer: leave the mouse to the terminal\n"
	    "  --no-clipboard    viewer: C does not copy to the clipboard\n"
	    "  --list, --trim, --clear   (cache) list it, evict down to the\n"
	    "                    limit (SNAPVIEW_CACHE_MAX), empty it\n"
	    "  -q, --quiet       no progress bar\n"
	    "  -h, --help        this text\n"
	    "  -V, --version     version\n"
	    "\nSee snapview(1).\n");
}

static int
parse_i64(const char *opt, const char *s, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0') {
		fprintf(stderr, "snapview: %s: not a number: '%s'\n", opt, s);
		return -1;
	}
	*out = v;
	return 0;
}

/* --at N, or (diff) --at N,M: N for the first file, M for the second;
 * "start" is -1, the state before the first event. */
static int
parse_at(struct cli_opts *o, const char *arg)
{
	char first[64];
	const char *comma = strchr(arg, ',');
	size_t n = comma != NULL ? (size_t)(comma - arg) : strlen(arg);

	if (n >= sizeof first) {
		fprintf(stderr, "snapview: --at: not a number: '%s'\n",
		    cli_shown(arg));
		return -1;
	}
	memcpy(first, arg, n);
	first[n] = '\0';
	o->has_at = 1;
	o->at = -1;
	if (strcmp(first, "start") != 0 && parse_i64("--at", first,
	    &o->at) != 0)
		return -1;
	if (comma == NULL)
		return 0;
	o->has_at_b = 1;
	o->at_b = -1;
	if (strcmp(comma + 1, "start") == 0)
		return 0;
	return parse_i64("--at", comma + 1, &o->at_b);
}

enum {
	OPT_JSON = 256,
	OPT_DEVICE,
	OPT_AT,
	OPT_FROM,
	OPT_TO,
	OPT_FRAMES,
	OPT_SITE_REGEX,
	OPT_LIMIT,
	OPT_BY,
	OPT_CATEGORIES,
	OPT_NO_MOUSE,
	OPT_NO_CLIPBOARD,
	OPT_CACHE_DIR,
	OPT_NO_CACHE,
	OPT_LIST,
	OPT_TRIM,
	OPT_CLEAR,
	OPT_JOBS,
	OPT_STEP
};

static const struct option long_opts[] = {
    {"json", no_argument, NULL, OPT_JSON},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"at", required_argument, NULL, OPT_AT},
    {"from", required_argument, NULL, OPT_FROM},
    {"to", required_argument, NULL, OPT_TO},
    {"frames", required_argument, NULL, OPT_FRAMES},
    {"site-regex", required_argument, NULL, OPT_SITE_REGEX},
    {"limit", required_argument, NULL, OPT_LIMIT},
    {"by", required_argument, NULL, OPT_BY},
    {"categories", required_argument, NULL, OPT_CATEGORIES},
    {"no-mouse", no_argument, NULL, OPT_NO_MOUSE},
    {"no-clipboard", no_argument, NULL, OPT_NO_CLIPBOARD},
    {"cache-dir", required_argument, NULL, OPT_CACHE_DIR},
    {"no-cache", no_argument, NULL, OPT_NO_CACHE},
    {"list", no_argument, NULL, OPT_LIST},
    {"trim", no_argument, NULL, OPT_TRIM},
    {"clear", no_argument, NULL, OPT_CLEAR},
    {"jobs", required_argument, NULL, OPT_JOBS},
    {"step", required_argument, NULL, OPT_STEP},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0}};

/* Parses one option; returns 0, 1 (stop: exit 0 already handled) or -1. */
static int
parse_opt(int c, struct cli_opts *o)
{
	switch (c) {
	case OPT_JSON: o->json = 1; return 0;
	case OPT_NO_CACHE: o->no_cache = 1; return 0;
	case OPT_CACHE_DIR: o->cache_dir = optarg; return 0;
	case OPT_LIST: o->cache_op = CLI_CACHE_LIST; return 0;
	case OPT_TRIM: o->cache_op = CLI_CACHE_TRIM; return 0;
	case OPT_CLEAR: o->cache_op = CLI_CACHE_CLEAR; return 0;
	case OPT_SITE_REGEX: o->site_regex = optarg; return 0;
	case 'q': o->quiet = 1; return 0;
	case OPT_DEVICE: return parse_i64("--device", optarg, &o->device);
	case OPT_AT:
		return parse_at(o, optarg);
	case OPT_STEP:
		o->has_step = 1;
		if (parse_i64("--step", optarg, &o->step) != 0)
			return -1;
		if (o->step < 1) {
			fprintf(stderr, "snapview: --step: steps are numbered "
			    "from 1\n");
			return -1;
		}
		return 0;
	case OPT_FROM:
		o->has_from = 1;
		return parse_i64("--from", optarg, &o->from);
	case OPT_TO:
		o->has_to = 1;
		return parse_i64("--to", optarg, &o->to);
	case OPT_FRAMES: return parse_i64("--frames", optarg, &o->frames);
	case OPT_LIMIT: return parse_i64("--limit", optarg, &o->limit);
	case OPT_JOBS:
		if (parse_i64("--jobs", optarg, &o->jobs) != 0)
			return -1;
		if (o->jobs < 1 || o->jobs > 1024) {
			fprintf(stderr, "snapview: --jobs: expected 1 to "
			    "1024\n");
			return -1;
		}
		return 0;
	case OPT_CATEGORIES: o->categories = optarg; return 0;
	case OPT_NO_MOUSE: o->no_mouse = 1; return 0;
	case OPT_NO_CLIPBOARD: o->no_clipboard = 1; return 0;
	case OPT_BY:
		if (strcmp(optarg, "site") != 0 &&
		    strcmp(optarg, "category") != 0) {
			fprintf(stderr, "snapview: --by: '%s': expected site or "
			    "category\n", cli_shown(optarg));
			return -1;
		}
		o->by_category = strcmp(optarg, "category") == 0;
		return 0;
	case 'h': usage(stdout); return 1;
	case 'V': printf("snapview %s\n", PACKAGE_VERSION); return 1;
	default: return -1;
	}
}

/* The list of commands, for an unknown one. */
static void
list_commands(FILE *f)
{
	size_t i;

	fprintf(f, "commands:");
	for (i = 0; i < N_COMMANDS; i++)
		fprintf(f, "%s %s", i > 0 ? "," : "", commands[i].name);
	fprintf(f, "\n");
}

/* A first argument that names no command and no file, followed by
 * another argument ("snapview leak FILE"), is a mistyped command; so is a
 * lone word that is no file and looks like a command name. */
static int
unknown_command(int argc, char **argv, int first)
{
	const char *w = argv[first];
	struct stat st;
	int others = argc - first - 1;

	if (stat(w, &st) == 0 || errno != ENOENT)
		return 0;
	if (others == 0 && (strchr(w, '/') != NULL || strchr(w, '.') != NULL))
		return 0;
	fprintf(stderr, "snapview: %s: unknown command%s\n", cli_shown(w),
	    others == 0 ? " (and no such file)" : "");
	list_commands(stderr);
	fprintf(stderr, "Try 'snapview --help'.\n");
	return 1;
}

/* Checks the options against the file before the viewer draws anything
 * (tui.h). */
static int
tui_check(const void *ctx, const struct snapshot *s, char *msg, size_t size)
{
	return cli_check_args(ctx, CLI_U_AT | CLI_U_WINDOW | CLI_U_ONE_DEVICE,
	    s, msg, size);
}

int
cli_main(int argc, char **argv)
{
	struct cli_opts o;
	int c, r;
	size_t i;

	memset(&o, 0, sizeof o);
	o.device = -1;
	/* options may come before and after the command and the files
	 * (getopt_long moves the other arguments to the end) */
	while ((c = getopt_long(argc, argv, "qhV", long_opts, NULL)) != -1) {
		r = parse_opt(c, &o);
		if (r != 0) {
			if (r < 0)
				fprintf(stderr, "Try 'snapview --help'.\n");
			return r > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
		}
	}
	/* a first word naming a command selects it */
	for (i = 0; optind < argc && i < N_COMMANDS; i++)
		if (strcmp(argv[optind], commands[i].name) == 0) {
			o.cmd = commands[i].name;
			o.uses = commands[i].uses;
			optind++;
			break;
		}
	if (o.cmd == NULL && optind < argc &&
	    unknown_command(argc, argv, optind))
		return CLI_EXIT_USAGE;
	if (o.cmd != NULL && strcmp(o.cmd, "cache") == 0) {
		/* the cache as a whole: no snapshot */
		if (optind < argc) {
			fprintf(stderr, "snapview: cache takes no file\n"
			    "Try 'snapview --help'.\n");
			return CLI_EXIT_USAGE;
		}
		return cmd_cache(&o);
	}
	if ((o.has_at_b || o.has_step) && (o.cmd == NULL ||
	    strcmp(o.cmd, "diff") != 0)) {
		fprintf(stderr, "snapview: %s is for diff\nTry 'snapview "
		    "--help'.\n", o.has_step ? "--step" : "--at N,M");
		return CLI_EXIT_USAGE;
	}
	o.args = argv + optind;
	o.n_args = (size_t)(argc - optind);
	if (optind < argc)
		o.file = argv[optind++];
	if (optind < argc)
		o.file2 = argv[optind++];
	/* ranks and the viewer take a set of files */
	if (o.file == NULL || (optind < argc && o.cmd != NULL &&
	    strcmp(o.cmd, "ranks") != 0)) {
		fprintf(stderr, "snapview: %s\nTry 'snapview --help'.\n",
		    o.file == NULL ? "no snapshot file given"
				   : "too many arguments");
		return CLI_EXIT_USAGE;
	}
	if (o.cmd == NULL) {
		struct tui_opts t;

		memset(&t, 0, sizeof t);
		t.file = o.file;
		t.device = o.device;
		t.quiet = o.quiet;
		t.cache_dir = o.cache_dir;
		t.no_cache = o.no_cache;
		t.no_mouse = o.no_mouse;
		t.no_clipboard = o.no_clipboard;
		t.has_at = o.has_at;
		t.at = o.at;
		t.categories = o.categories;
		t.from = o.has_from ? o.from : -2;
		t.to = o.has_to ? o.to : -2;
		t.check = tui_check;
		t.check_ctx = &o;
		t.files = o.args;
		t.n_files = o.n_args;
		return tui_main(&t);
	}
	for (i = 0; i < N_COMMANDS; i++)
		if (strcmp(o.cmd, commands[i].name) == 0)
			return commands[i].fn(&o);
	return CLI_EXIT_USAGE;
}

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
	if (path == o->file) {
		char msg[512];

		if (cli_check_args(o, o->uses, in->snap, msg, sizeof msg) != 0) {
			fprintf(stderr, "snapview: %s: %s\n", cli_shown(path),
			    msg);
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
		fprintf(stderr, "snapview: %s: %s\n", cli_shown(o->file), msg);
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
	uint32_t d, n = snap_device_count(s), checked = 0;
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
	for (d = 0; d < n; d++) {
		if (o->device >= 0 ? d != (uint64_t)o->device :
		    (uses & CLI_U_ONE_DEVICE) ? d != snap_default_device(s) :
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
