/*
 * Argument parsing and dispatch: the command table (CLI_COMMANDS in
 * cli.h) and the options every command shares; a command ignores the
 * ones that do not concern it. Kept apart from cli.c, whose helpers the
 * commands call, so that no file both calls the commands and is called
 * by them.
 */
#include "config.h"

#include "cli/cli.h"

#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/phases.h"
#include "tui/tui.h"

/* --phase NAME=REGEX, in order, and --phase-file: the phase rules
 * (analysis/phases.h), built once the options are read. */
#define PHASE_SPECS_MAX 64
static const char *phase_specs[PHASE_SPECS_MAX];
static size_t n_phase_specs;
static const char *phase_file;

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
		fprintf(f, "  %-8s %s\n", commands[i].name,
		    commands[i].summary);
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
	    "  --phase NAME=REGEX  (phases, viewer) a phase: annotation\n"
	    "                    names or user frames' functions matching\n"
	    "  --phase-file FILE more rules (lines NAME REGEX)\n"
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
	OPT_STEP,
	OPT_PHASE,
	OPT_PHASE_FILE
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
    {"phase", required_argument, NULL, OPT_PHASE},
    {"phase-file", required_argument, NULL, OPT_PHASE_FILE},
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
	case OPT_PHASE:
		if (n_phase_specs == PHASE_SPECS_MAX) {
			fprintf(stderr, "snapview: --phase: more than %d; put "
			    "them in a --phase-file\n", PHASE_SPECS_MAX);
			return -1;
		}
		phase_specs[n_phase_specs++] = optarg;
		return 0;
	case OPT_PHASE_FILE: phase_file = optarg; return 0;
	case OPT_NO_MOUSE: o->no_mouse = 1; return 0;
	case OPT_NO_CLIPBOARD: o->no_clipboard = 1; return 0;
	case OPT_BY:
		if (strcmp(optarg, "site") != 0 &&
		    strcmp(optarg, "category") != 0) {
			fprintf(stderr, "snapview: --by: '%s': expected site "
			    "or category\n", cli_shown(optarg));
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

/* The rules of --phase and --phase-file into rs. Returns 0, or the exit
 * status with the reason printed. */
static int
phase_rules(struct an_phase_rules *rs)
{
	struct sv_error err;
	size_t i;

	sv_error_clear(&err);
	for (i = 0; i < n_phase_specs; i++)
		if (an_phase_rule_add(rs, phase_specs[i], &err) != 0) {
			fprintf(stderr, "snapview: --phase %s: %s\n",
			    cli_shown(phase_specs[i]), cli_shown(err.msg));
			fprintf(stderr, "Try 'snapview --help'.\n");
			return CLI_EXIT_USAGE;
		}
	if (phase_file != NULL && an_phase_rules_load(phase_file, rs,
	    &err) != 0)
		return cli_report(phase_file, &err);
	return 0;
}

int
cli_main(int argc, char **argv)
{
	struct an_phase_rules rules;
	struct cli_opts o;
	int c, r;
	size_t i;

	memset(&o, 0, sizeof o);
	memset(&rules, 0, sizeof rules);
	n_phase_specs = 0;
	phase_file = NULL;
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
	/* the phase rules: once the options are read, for the viewer and
	 * the phases command */
	if ((r = phase_rules(&rules)) != 0) {
		an_phase_rules_destroy(&rules);
		return r;
	}
	o.phase_rules = rules.n > 0 ? &rules : NULL;
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
		t.phase_rules = o.phase_rules;
		t.from = o.has_from ? o.from : -2;
		t.to = o.has_to ? o.to : -2;
		t.check = tui_check;
		t.check_ctx = &o;
		t.files = o.args;
		t.n_files = o.n_args;
		r = tui_main(&t);
		an_phase_rules_destroy(&rules);
		return r;
	}
	r = CLI_EXIT_USAGE;
	for (i = 0; i < N_COMMANDS; i++)
		if (strcmp(o.cmd, commands[i].name) == 0)
			r = commands[i].fn(&o);
	an_phase_rules_destroy(&rules);
	return r;
}
