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
#include "replay/simconf.h"
#include "tui/tui.h"
#include "util/thread.h"

/* An error of the command line: one line, no file. */
#define usage_error(...) cli_error(NULL, SV_NO_OFFSET, __VA_ARGS__)

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
	    "                    step K; (cut) the events of step K\n"
	    "  --from N, --to M  event window (cut: or times, 1.5s, 20ms)\n"
	    "  --frames K        call-site depth for grouping\n"
	    "  --site-regex RE   group by the first frame matching RE\n"
	    "  --limit N         rows to print (0: all)\n"
	    "  --by WHAT         top: group by site (default) or category\n"
	    "  --categories FILE your category rules (lines CATEGORY REGEX)\n"
	    "  --phase NAME=REGEX  (phases, viewer, cut) a phase: annotation\n"
	    "                    names, annotate metadata or user frames'\n"
	    "                    functions matching\n"
	    "  --phase NAME[@K]  (cut) the events of iteration K of phase\n"
	    "                    NAME (K may be left out when it has one)\n"
	    "  --phase-file FILE more rules (lines NAME REGEX)\n"
	    "  --jobs N          (ranks) index at most N files at once\n"
	    "  --threads N       1: all the work on one thread (an index is\n"
	    "                    the same either way); default:\n"
	    "                    SNAPVIEW_THREADS, else worker threads\n"
	    "  --alloc-conf S    (whatif) allocator settings as\n"
	    "                    PYTORCH_CUDA_ALLOC_CONF, once per column\n"
	    "  --capacity BYTES  (whatif) device memory the run may use\n"
	    "  --layout L        (ranks, DIR) a run's dumps: verl, torchtitan\n"
	    "                    or a pattern with {rank} and {step}\n"
	    "  --max-peak SIZE, --max-reserved SIZE, --max-growth-per-step\n"
	    "                    SIZE, --max-frag PCT   (check) budgets:\n"
	    "                    exit 5 when one is broken\n"
	    "  -o, --output FILE (cut, report) the file to write\n"
	    "  --force           -o may replace an existing file\n"
	    "  --cache-dir DIR   where to keep the index\n"
	    "  --no-cache        build the index in memory only\n"
	    "  --no-mouse        viewer: leave the mouse to the terminal\n"
	    "  --no-clipboard    viewer: C does not copy to the clipboard\n"
	    "  --list, --trim, --clear   (cache) list it, evict down to the\n"
	    "                    limit (SNAPVIEW_CACHE_MAX), empty it\n"
	    "  -q, --quiet       no progress bar\n"
	    "  -h, --help        this text\n"
	    "  --list-table T    the tables snapview runs on, one row a\n"
	    "                    line, tab-separated: commands, options,\n"
	    "                    actions (the viewer's keys) or help\n"
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
		usage_error("%s: not a number: '%s'", opt, cli_shown(s));
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
		usage_error("--at: not a number: '%s'", cli_shown(arg));
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

/* --alloc-conf S: checked here, so that a bad one stops everything
 * with one line naming the key. */
static int
parse_alloc_conf(struct cli_opts *o, const char *arg)
{
	struct sim_conf c;
	char why[200];

	if (simconf_parse(arg, &c, why, sizeof why) != 0) {
		/* one line naming the key, nothing more */
		fprintf(stderr, "snapview: --alloc-conf: %s\n", cli_shown(why));
		return -2;
	}
	if (o->n_alloc_conf == CLI_MAX_ALLOC_CONF) {
		fprintf(stderr, "snapview: --alloc-conf: at most %d\n",
		    CLI_MAX_ALLOC_CONF);
		return -1;
	}
	o->alloc_conf[o->n_alloc_conf++] = arg;
	return 0;
}

/* --capacity BYTES, with an optional unit: K, M, G, T (KiB, MiB, ...;
 * powers of 1024). */
static int
parse_capacity(struct cli_opts *o, const char *arg)
{
	static const char units[] = "KMGT";
	const char *u;
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno != 0 || end == arg || arg[0] == '-')
		goto bad;
	if (*end != '\0') {
		if ((u = strchr(units, end[0] & ~0x20)) == NULL || end[0] == 0)
			goto bad;
		shift = 10 * (unsigned)(u - units + 1);
		end++;
		if (strcmp(end, "iB") != 0 && strcmp(end, "B") != 0 &&
		    *end != '\0')
			goto bad;
	}
	if (v == 0 || v > (UINT64_MAX >> shift))
		goto bad;
	o->capacity = (uint64_t)v << shift;
	return 0;
bad:
	fprintf(stderr, "snapview: --capacity: '%s': expected bytes, e.g. "
	    "80G\n", cli_shown(arg));
	return -1;
}

/* --from/--to: an event, or (cut) a time with a unit: 1.5s, 20ms,
 * 300us, in microseconds of time_us; *is_time says which. */
static int
parse_bound(const char *opt, const char *s, int64_t *out, int *is_time)
{
	static const struct {
		const char *unit;
		double mul;
	} units[] = {{"us", 1}, {"ms", 1e3}, {"s", 1e6}};
	size_t i, n = strlen(s), k;
	char *end;
	double v;

	*is_time = 0;
	for (i = 0; i < sizeof units / sizeof units[0]; i++) {
		k = strlen(units[i].unit);
		if (n <= k || strcmp(s + n - k, units[i].unit) != 0)
			continue;
		errno = 0;
		v = strtod(s, &end);
		if (errno != 0 || end != s + n - k || v != v ||
		    v > 9e18 / 1e6 || v < -9e18 / 1e6)
			break;
		*out = (int64_t)(v * units[i].mul);
		*is_time = 1;
		return 0;
	}
	return parse_i64(opt, s, out);
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
	OPT_THREADS,
	OPT_STEP,
	OPT_ALLOC_CONF,
	OPT_CAPACITY,
	OPT_LAYOUT,
	OPT_MAX_PEAK,	/* the four in the order of cli_opts.max */
	OPT_MAX_RESERVED,
	OPT_MAX_GROWTH,
	OPT_MAX_FRAG,
	OPT_FORCE,
	OPT_PHASE,
	OPT_PHASE_FILE,
	OPT_LIST_TABLE
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
    {"threads", required_argument, NULL, OPT_THREADS},
    {"step", required_argument, NULL, OPT_STEP},
    {"alloc-conf", required_argument, NULL, OPT_ALLOC_CONF},
    {"capacity", required_argument, NULL, OPT_CAPACITY},
    {"layout", required_argument, NULL, OPT_LAYOUT},
    {"max-peak", required_argument, NULL, OPT_MAX_PEAK},
    {"max-reserved", required_argument, NULL, OPT_MAX_RESERVED},
    {"max-growth-per-step", required_argument, NULL, OPT_MAX_GROWTH},
    {"max-frag", required_argument, NULL, OPT_MAX_FRAG},
    {"output", required_argument, NULL, 'o'},
    {"force", no_argument, NULL, OPT_FORCE},
    {"phase", required_argument, NULL, OPT_PHASE},
    {"phase-file", required_argument, NULL, OPT_PHASE_FILE},
    {"list-table", required_argument, NULL, OPT_LIST_TABLE},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0}};

/* snapview --list-table WHAT: one of the tables the program runs on, as
 * lines of fields separated by tabs (snapview(1), --list-table).
 * "commands": name, summary (CLI_COMMANDS); "options": --name, VALUE
 * when it takes one (else empty), the short option (else empty); the
 * viewer's "actions" and "help" are tui_list()'s. Returns 1 (done, exit
 * 0) or -1 (a usage error, said). */
static int
list_table(const char *what)
{
	size_t i;

	if (strcmp(what, "commands") == 0) {
		for (i = 0; i < N_COMMANDS; i++)
			printf("%s\t%s\n", commands[i].name,
			    commands[i].summary);
		return 1;
	}
	if (strcmp(what, "options") == 0) {
		for (i = 0; long_opts[i].name != NULL; i++) {
			printf("--%s\t%s\t", long_opts[i].name,
			    long_opts[i].has_arg == required_argument ?
			    "VALUE" : "");
			if (long_opts[i].val < 128)
				printf("-%c", long_opts[i].val);
			printf("\n");
		}
		return 1;
	}
	if (tui_list(stdout, what) == 0)
		return 1;
	usage_error("--list-table: '%s': expected commands, options, "
	    "actions or help", cli_shown(what));
	return -1;
}

/* Parses one option; returns 0, 1 (stop: exit 0 already handled), -1
 * (a usage error, said) or -2 (the same, said whole: no "Try"). */
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
	case OPT_DEVICE:
		/* pinned host memory is the device named host (2.14) */
		if (strcmp(optarg, "host") == 0) {
			o->device = SNAP_HOST_DEVICE;
			return 0;
		}
		return parse_i64("--device", optarg, &o->device);
	case OPT_AT:
		return parse_at(o, optarg);
	case OPT_STEP:
		o->has_step = 1;
		if (parse_i64("--step", optarg, &o->step) != 0)
			return -1;
		if (o->step < 1) {
			usage_error("--step: steps are numbered from 1");
			return -1;
		}
		return 0;
	case OPT_FROM:
		o->has_from = 1;
		return parse_bound("--from", optarg, &o->from, &o->from_time);
	case OPT_TO:
		o->has_to = 1;
		return parse_bound("--to", optarg, &o->to, &o->to_time);
	case OPT_MAX_PEAK:
	case OPT_MAX_RESERVED:
	case OPT_MAX_GROWTH:
	case OPT_MAX_FRAG:
		o->max[c - OPT_MAX_PEAK] = optarg;
		return 0;
	case 'o': o->output = optarg; return 0;
	case OPT_FORCE: o->force = 1; return 0;
	case OPT_FRAMES: return parse_i64("--frames", optarg, &o->frames);
	case OPT_LIMIT:
		o->has_limit = 1;
		if (parse_i64("--limit", optarg, &o->limit) != 0)
			return -1;
		if (o->limit < 0) {
			usage_error("--limit: %s: expected a count of rows, 0 "
			    "for all", cli_shown(optarg));
			return -1;
		}
		return 0;
	case OPT_JOBS:
		if (parse_i64("--jobs", optarg, &o->jobs) != 0)
			return -1;
		if (o->jobs < 1 || o->jobs > 1024) {
			usage_error("--jobs: expected 1 to 1024");
			return -1;
		}
		return 0;
	case OPT_THREADS:
		if (parse_i64("--threads", optarg, &o->threads) != 0)
			return -1;
		if (o->threads < 1 || o->threads > 1024) {
			usage_error("--threads: expected 1 to 1024");
			return -1;
		}
		return 0;
	case OPT_CATEGORIES: o->categories = optarg; return 0;
	case OPT_ALLOC_CONF: return parse_alloc_conf(o, optarg);
	case OPT_CAPACITY: return parse_capacity(o, optarg);
	case OPT_LAYOUT: o->layout = optarg; return 0;
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
			usage_error("--by: '%s': expected site or category",
			    cli_shown(optarg));
			return -1;
		}
		o->by_category = strcmp(optarg, "category") == 0;
		return 0;
	case 'h': usage(stdout); return 1;
	case OPT_LIST_TABLE: return list_table(optarg);
	case 'V': printf("snapview %s\n", PACKAGE_VERSION); return 1;
	default: return -1;
	}
}

/* A long option getopt_long() refused, "--NAME[=VALUE]": one line. */
static void
bad_long(int c, const char *arg)
{
	const char *name = arg + 2, *eq = strchr(name, '=');
	size_t n = eq != NULL ? (size_t)(eq - name) : strlen(name), i;
	int matches = 0, exact = -1;

	for (i = 0; long_opts[i].name != NULL; i++) {
		if (strncmp(long_opts[i].name, name, n) != 0)
			continue;
		matches++;
		if (long_opts[i].name[n] == '\0')
			exact = (int)i;
	}
	if (exact < 0 && matches == 1) {
		for (i = 0; strncmp(long_opts[i].name, name, n) != 0; i++)
			;
		exact = (int)i;
	}
	if (c == ':')
		usage_error("%s: needs a value", cli_shown(arg));
	else if (exact >= 0 && eq != NULL &&
	    long_opts[exact].has_arg == no_argument)
		usage_error("--%s: takes no value", long_opts[exact].name);
	else if (matches > 1)
		usage_error("%s: ambiguous, %d options begin so",
		    cli_shown(arg), matches);
	else
		usage_error("%s: unknown option", cli_shown(arg));
}

/* What getopt_long() refused, in one line naming the program snapview
 * (its own messages are off: they name it by its path). arg is the word
 * it stopped at. */
static void
bad_option(int c, const char *arg)
{
	char opt[3] = {'-', (char)optopt, '\0'};

	if (arg[0] == '-' && arg[1] == '-') {
		bad_long(c, arg);
		return;
	}
	/* a short one, maybe in a cluster ("-qx") */
	if (c == ':')
		usage_error("%s: needs a value", cli_shown(opt));
	else
		usage_error("%s: unknown option", cli_shown(opt));
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
	usage_error("%s: unknown command%s", cli_shown(w),
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

/* The rules of --phase and --phase-file into rs; for cut, the one
 * --phase with no '=' is the phase to cut (o->cut_phase). Returns 0, or
 * the exit status with the reason printed. */
static int
phase_rules(struct cli_opts *o, struct an_phase_rules *rs)
{
	struct sv_error err;
	size_t i;

	sv_error_clear(&err);
	for (i = 0; i < n_phase_specs; i++) {
		if (o->cmd != NULL && strcmp(o->cmd, "cut") == 0 &&
		    strchr(phase_specs[i], '=') == NULL) {
			if (o->cut_phase != NULL) {
				usage_error("cut: one --phase NAME[@K], not "
				    "two");
				fprintf(stderr, "Try 'snapview --help'.\n");
				return CLI_EXIT_USAGE;
			}
			o->cut_phase = phase_specs[i];
			continue;
		}
		if (an_phase_rule_add(rs, phase_specs[i], &err) != 0) {
			fprintf(stderr, "snapview: --phase %s: %s\n",
			    cli_shown(phase_specs[i]), cli_shown(err.msg));
			fprintf(stderr, "Try 'snapview --help'.\n");
			return CLI_EXIT_USAGE;
		}
	}
	if (phase_file != NULL && an_phase_rules_load(phase_file, rs,
	    &err) != 0)
		return cli_report(phase_file, &err);
	return 0;
}

/* --threads N, else SNAPVIEW_THREADS (a value that does not parse: a
 * warning, and no limit), before any thread starts. */
static void
set_threads(const struct cli_opts *o)
{
	const char *e = getenv("SNAPVIEW_THREADS");
	char *end;
	long v;

	if (o->threads > 0) {
		sv_thread_set_max((unsigned)o->threads);
		return;
	}
	if (e == NULL || *e == '\0')
		return;
	errno = 0;
	v = strtol(e, &end, 10);
	if (errno != 0 || end == e || *end != '\0' || v < 1 || v > 1024) {
		fprintf(stderr, "snapview: warning: SNAPVIEW_THREADS: expected "
		    "1 to 1024, not '%s'; ignored\n", cli_shown(e));
		return;
	}
	sv_thread_set_max((unsigned)v);
}

/* Parses argv into o and runs what it asks for; returns the exit
 * status. */
static int
run(int argc, char **argv)
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
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":qhVo:", long_opts, NULL)) != -1) {
		if (c == '?' || c == ':') {
			bad_option(c, argv[optind - 1]);
			fprintf(stderr, "Try 'snapview --help'.\n");
			return CLI_EXIT_USAGE;
		}
		r = parse_opt(c, &o);
		if (r != 0) {
			if (r == -1)
				fprintf(stderr, "Try 'snapview --help'.\n");
			return r > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
		}
	}
	set_threads(&o);
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
			usage_error("cache takes no file");
			fprintf(stderr, "Try 'snapview --help'.\n");
			return CLI_EXIT_USAGE;
		}
		return cmd_cache(&o);
	}
	if ((o.has_at_b || o.has_step) && (o.cmd == NULL ||
	    (strcmp(o.cmd, "diff") != 0 && (o.has_at_b ||
	    strcmp(o.cmd, "cut") != 0)))) {
		usage_error("%s is for diff", o.has_step ? "--step" :
		    "--at N,M");
		fprintf(stderr, "Try 'snapview --help'.\n");
		return CLI_EXIT_USAGE;
	}
	if (o.layout != NULL && o.cmd != NULL && strcmp(o.cmd, "ranks") != 0) {
		fprintf(stderr, "snapview: --layout is for ranks and the "
		    "viewer on a directory\nTry 'snapview --help'.\n");
		return CLI_EXIT_USAGE;
	}
	if ((o.from_time || o.to_time) && (o.cmd == NULL ||
	    strcmp(o.cmd, "cut") != 0)) {
		fprintf(stderr, "snapview: --from/--to as a time is for cut\n"
		    "Try 'snapview --help'.\n");
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
		usage_error("%s", o.file == NULL ? "no snapshot file given"
						 : "too many arguments");
		fprintf(stderr, "Try 'snapview --help'.\n");
		return CLI_EXIT_USAGE;
	}
	/* the phase rules: once the options are read, for the viewer and
	 * the phases command */
	if ((r = phase_rules(&o, &rules)) != 0) {
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
		t.layout = o.layout;
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

/* Does argv ask for --json (before a "--")? Known before the options are
 * parsed, for an error among them. */
static int
wants_json(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--json") == 0)
			return 1;
	return 0;
}

int
cli_main(int argc, char **argv)
{
	int json = wants_json(argc, argv), r;

	r = run(argc, argv);
	/* with --json, a failure is a JSON document on stdout too, unless
	 * the report had begun there */
	if (json && r != CLI_EXIT_OK)
		cli_error_json(stdout);
	return r;
}
