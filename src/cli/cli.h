#ifndef SNAPVIEW_CLI_CLI_H
#define SNAPVIEW_CLI_CLI_H
/*
 * Command line: common options, the subcommand table, and the helpers
 * every command uses to open a snapshot and report errors.
 *
 * Each subcommand lives in its own cmd_<name>.c and is one row of the
 * CLI_COMMANDS X-macro below. A command returns the process exit status
 * (snapview(1), EXIT STATUS: 0 ok, 1 usage, 2 bad input, 3 I/O,
 * 4 inconsistent, 5 a budget broken).
 */
#include <stdint.h>
#include <stdio.h>

#include "snapshot/snap_model.h"
#include "util/err.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_USAGE 1
#define CLI_EXIT_INPUT 2
#define CLI_EXIT_IO 3
#define CLI_EXIT_INCONSISTENT 4
#define CLI_EXIT_BUDGET 5

struct replay;
struct an_phase_rules;

#define CLI_MAX_ALLOC_CONF 8 /* --alloc-conf columns of whatif */

struct cli_opts {
	const char *cmd;        /* subcommand name; NULL = TUI */
	unsigned uses;          /* CLI_U_* of the command */
	const char *file;       /* first positional argument */
	const char *file2;      /* second positional (diff) */
	char *const *args;      /* every positional argument (ranks) */
	size_t n_args;
	int64_t jobs;           /* --jobs N (ranks), 0 = the CPUs */
	int64_t threads;        /* --threads N, 0 = SNAPVIEW_THREADS */
	int json;               /* --json */
	int quiet;              /* --quiet */
	int no_cache;           /* --no-cache */
	int no_mouse;           /* --no-mouse (viewer) */
	int no_clipboard;       /* --no-clipboard (viewer) */
	const char *cache_dir;  /* --cache-dir */
	int64_t device;         /* --device, -1 = default */
	int has_at;
	int64_t at;             /* --at N (-1 = start) */
	int has_at_b;
	int64_t at_b;           /* diff --at N,M: M, the event of B */
	int has_step;
	int64_t step;           /* diff --step K (from 1) */
	int has_from, has_to;
	int64_t from, to;       /* --from / --to */
	int64_t frames;         /* --frames K, 0 = default */
	const char *site_regex; /* --site-regex */
	int has_limit;
	int64_t limit;          /* --limit N, 0 = no limit (cli_limit) */
	int cache_op;           /* CLI_CACHE_*: --list, --trim, --clear */
	int by_category;        /* --by category */
	const char *categories; /* --categories FILE */
	const char *alloc_conf[CLI_MAX_ALLOC_CONF]; /* --alloc-conf, checked */
	size_t n_alloc_conf;
	uint64_t capacity;      /* --capacity BYTES, 0 = not given */
	const char *layout;     /* --layout (ranks, viewer): a run's pattern */
	const char *max[4];     /* check: --max-peak, --max-reserved,
				   --max-growth-per-step, --max-frag */
	const char *output;     /* -o FILE (cut, report) */
	int force;              /* --force: -o may replace a file */
	int from_time, to_time; /* cut: --from/--to are times (us) */
	const struct an_phase_rules *phase_rules; /* --phase, --phase-file;
						     NULL: none */
	const char *cut_phase;  /* cut: --phase NAME[@K] (no '=') */
};

#define CLI_CACHE_LIST 0
#define CLI_CACHE_TRIM 1
#define CLI_CACHE_CLEAR 2

struct sv_index;

/* The loaded input: the snapshot plus anything the index provides. */
struct cli_input {
	struct snapshot *snap;  /* owned, or borrowed from index */
	struct sv_index *index; /* the index it was opened through, or NULL */
};

struct idx_opts;
struct cli_progress;
/* Fills io from the common options (--cache-dir, --no-cache, --quiet),
 * with the warning printer and pb as the progress bar on stderr. */
void cli_index_opts(const struct cli_opts *o, struct idx_opts *io,
    struct cli_progress *pb, const char *path);

/* Opens o->file as a snapshot (through the index when available). On
 * failure prints `snapview: FILE: byte N: reason` and returns the exit
 * status (non-zero); 0 on success. */
int cli_open(const struct cli_opts *o, const char *path, struct cli_input *in);
void cli_close(struct cli_input *in);

/* A replay of device d: from the index's saved checkpoints when there
 * are some, else built afresh. NULL with err set on failure. */
struct replay *cli_replay(const struct cli_input *in, uint32_t d,
    struct sv_error *err);

/* Errors. cli_error() prints `snapview: [PATH: ][byte N: ]MESSAGE` on
 * stderr (PATH escaped, NULL for none; byte SV_NO_OFFSET for none) and
 * keeps the first error of the run: with --json, cli_main() writes it on
 * stdout too, as {"error": {"message", "file", "byte"}}, when the command
 * has not begun its report there (cli_json_init()). cli_report() is
 * cli_error() of err, returning the exit status of its code. */
void cli_error(const char *path, uint64_t byte, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int cli_report(const char *path, const struct sv_error *err);
/* json_init() of a command's report on stdout; an error after it goes to
 * stderr only. cli_json_begun() says the same of JSON written by hand. */
struct json;
void cli_json_init(struct json *j);
void cli_json_begun(void);
/* Writes the kept error to f as JSON unless a report has begun; returns
 * 1 when it wrote it. */
int cli_error_json(FILE *f);

/* s escaped for the terminal (util/escape.h), in one of four static
 * buffers reused in turn: for a file name or other untrusted text in a
 * printf. Borrowed; truncated past 1 KiB. */
const char *cli_shown(const char *s);

/* Rows to print: --limit N (0: all), else text_default in text and all
 * in JSON. */
uint64_t cli_limit(const struct cli_opts *o, uint64_t text_default);

/* Resolves --device (default: snap_default_device). Returns -1 and prints
 * a message naming the devices with data when that one has none. */
int64_t cli_device(const struct cli_opts *o, const struct snapshot *s);

/* Checks --device, --at, --from and --to against s for a command that
 * reads the options in uses (CLI_U_*): the device must have data, an
 * event must be an event of every device reported (-1, "start", is the
 * state before the first event; --to must be an event), and --from must
 * not come after --to. Returns 0, or -1 with one line (the valid range,
 * or the devices with data) in msg. */
int cli_check_args(const struct cli_opts *o, unsigned uses,
    const struct snapshot *s, char *msg, size_t size);

/* Which of the event options a command reads (the others it ignores):
 * --at, --from/--to, and whether it reports one device (the default one)
 * rather than every device with data. cli_check_args() validates them. */
#define CLI_U_AT 0x1
#define CLI_U_WINDOW 0x2
#define CLI_U_ONE_DEVICE 0x4

/* X-macro: name, function, options used (CLI_U_*), one-line summary. */
#define CLI_COMMANDS(_)                                                        \
	_(stats, cmd_stats, CLI_U_AT,                                          \
	    "summary of segments, events and the peak")                        \
	_(index, cmd_index, 0, "build or refresh the index, say where it is")  \
	_(check, cmd_check, 0,                                                 \
	    "replay the trace and verify the final segments")                  \
	_(state, cmd_state, CLI_U_AT | CLI_U_ONE_DEVICE,                       \
	    "allocator state after event N (--at N, default: the end)")        \
	_(trace, cmd_trace, CLI_U_WINDOW,                                      \
	    "event listing like _memory_viz.py trace")                         \
	_(leaks, cmd_leaks, CLI_U_WINDOW,                                      \
	    "blocks never freed, by call site, per-step leak first")           \
	_(phases, cmd_phases, 0,                                               \
	    "each phase instance: peak, what it leaves behind; what grows")    \
	_(frag, cmd_frag, CLI_U_AT,                                            \
	    "fragmentation: gaps at each segment_alloc, hints")                \
	_(oom, cmd_oom, 0,                                                     \
	    "each OOM: request, free, largest block, who held memory")         \
	_(top, cmd_top, CLI_U_AT,                                              \
	    "live bytes by call-site tree at event N (--at N)")                \
	_(diff, cmd_diff, 0, "two snapshots compared by call site")            \
	_(ranks, cmd_ranks, 0,                                                 \
	    "one row per rank of a job: peaks, skew, leaks, OOMs")             \
	_(whatif, cmd_whatif, 0,                                               \
	    "the trace under other allocator settings (--alloc-conf)")         \
	_(cache, cmd_cache, 0,                                                 \
	    "the index cache: --list, --trim, --clear (no FILE)")              \
	_(cut, cmd_cut, 0,                                                     \
	    "a smaller snapshot of a window: -o OUT, --from/--to, --step")     \
	_(report, cmd_report, 0,                                               \
	    "one HTML page: the timeline as SVG, peak, leaks, frag, OOMs")

#define CLI_DECLARE(name, fn, uses, summary) int fn(const struct cli_opts *o);
CLI_COMMANDS(CLI_DECLARE)
#undef CLI_DECLARE

/* Entry point for main(): parses argv and runs a command or the TUI. */
int cli_main(int argc, char **argv);

#endif
