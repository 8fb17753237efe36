/*
 * Fuzz target: what every command prints. The input is a snapshot file;
 * it runs stats (also --at), check, state at the start, at event 0, in
 * the middle and at the end, trace, leaks, phases, frag, oom, top and
 * diff of the input against itself, each as text and as --json, the way the
 * command line does (cmd_*() from src/cli/, index in memory), with
 * stdout captured. Loading alone is fuzz_load's job; this one reaches the
 * arithmetic and formatting behind each line of output, where a 248-byte
 * file once crashed `state` (issue 18).
 *
 * Oracle, besides no crash, sanitizer report or leak:
 *   - the exit status is one of the documented ones (0 to 4);
 *   - JSON output is empty (an error before anything was written) or
 *     exactly one valid JSON document (the strict validator below: RFC
 *     8259 grammar, valid UTF-8, escapes well formed, surrogate escapes
 *     paired, nothing after the document);
 *   - text output is valid UTF-8 with no control character but newline
 *     and tab, no DEL, no C1 control and no invisible code point
 *     (sv_is_invisible): everything from the file arrives escaped.
 * A broken rule abort()s with the command and the offending byte.
 * SNAPVIEW_FUZZ_OUTPUT_VERBOSE: print each command's exit status and
 * output size on stderr.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "fuzz.h"
#include "util/escape.h"

/* ---- a strict JSON validator --------------------------------------------- */

#define MAX_NEST 128

struct jp {
	const unsigned char *p, *end;
	int depth;
};

static void
ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' ||
	    *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static int
lit(struct jp *j, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0)
		return -1;
	j->p += n;
	return 0;
}

static int
hex4(struct jp *j, unsigned *v)
{
	int i;

	*v = 0;
	if (j->end - j->p < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		unsigned c = *j->p++, d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		*v = *v << 4 | d;
	}
	return 0;
}

static int
string(struct jp *j)
{
	if (j->p >= j->end || *j->p++ != '"')
		return -1;
	while (j->p < j->end) {
		unsigned c = *j->p;
		uint32_t cp;
		size_t k;

		if (c == '"') {
			j->p++;
			return 0;
		}
		if (c < 0x20)
			return -1;
		if (c == '\\') {
			unsigned u, lo;

			if (++j->p >= j->end)
				return -1;
			c = *j->p++;
			if (strchr("\"\\/bfnrt", (int)c) != NULL && c != 0)
				continue;
			if (c != 'u' || hex4(j, &u) != 0)
				return -1;
			if (u >= 0xdc00 && u <= 0xdfff)
				return -1;      /* a low surrogate alone */
			if (u >= 0xd800 && u <= 0xdbff &&
			    (lit(j, "\\u") != 0 || hex4(j, &lo) != 0 ||
			    lo < 0xdc00 || lo > 0xdfff))
				return -1;      /* a high one, no pair */
			continue;
		}
		k = sv_utf8_decode(j->p, (size_t)(j->end - j->p), &cp);
		if (k == 0)
			return -1;
		j->p += k;
	}
	return -1;
}

static int
digits(struct jp *j)
{
	const unsigned char *s = j->p;

	while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
		j->p++;
	return j->p > s ? 0 : -1;
}

static int
number(struct jp *j)
{
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else if (j->p >= j->end || *j->p < '1' || *j->p > '9' || digits(j))
		return -1;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (digits(j))
			return -1;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (digits(j))
			return -1;
	}
	return 0;
}

static int value(struct jp *j);

/* An object or array, its opening bracket already read. */
static int
items(struct jp *j, int close, int keyed)
{
	if (++j->depth > MAX_NEST)
		return -1;
	ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		j->depth--;
		return 0;
	}
	for (;;) {
		if (keyed) {
			ws(j);
			if (string(j))
				return -1;
			ws(j);
			if (j->p >= j->end || *j->p++ != ':')
				return -1;
		}
		if (value(j))
			return -1;
		ws(j);
		if (j->p >= j->end)
			return -1;
		if (*j->p == close) {
			j->p++;
			j->depth--;
			return 0;
		}
		if (*j->p++ != ',')
			return -1;
	}
}

static int
value(struct jp *j)
{
	ws(j);
	if (j->p >= j->end)
		return -1;
	switch (*j->p) {
	case '{': j->p++; return items(j, '}', 1);
	case '[': j->p++; return items(j, ']', 0);
	case '"': return string(j);
	case 't': return lit(j, "true");
	case 'f': return lit(j, "false");
	case 'n': return lit(j, "null");
	default: return number(j);
	}
}

/* 0 when s[0..n) is exactly one JSON document (whitespace around it). */
static int
json_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	struct jp j = {p, p + n, 0};

	if (value(&j) != 0)
		return -1;
	ws(&j);
	return j.p == j.end ? 0 : -1;
}

/* 0 when text output is safe to show: see the top of the file. */
static size_t
text_bad(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k;
	uint32_t cp;

	while (i < n) {
		if ((k = sv_utf8_decode(p + i, n - i, &cp)) == 0)
			return i + 1;
		if ((cp < 0x20 && cp != '\n' && cp != '\t') || cp == 0x7f ||
		    (cp >= 0x80 && cp < 0xa0) || sv_is_invisible(cp))
			return i + 1;
		i += k;
	}
	return 0;
}

/* ---- running the commands ------------------------------------------------ */

static char dir[256], path[300];

static void
cleanup(void)
{
	if (path[0] != '\0')
		unlink(path);
	if (dir[0] != '\0')
		rmdir(dir);
}

static int
setup(void)
{
	const char *t = getenv("TMPDIR");

	if (dir[0] != '\0')
		return 0;
	snprintf(dir, sizeof dir, "%s/fuzz_output.XXXXXX",
	    t != NULL && *t != '\0' ? t : "/tmp");
	if (mkdtemp(dir) == NULL) {
		dir[0] = '\0';
		return -1;
	}
	snprintf(path, sizeof path, "%s/in.pickle", dir);
	atexit(cleanup);
	return 0;
}

struct run {
	const char *name;
	int (*fn)(const struct cli_opts *);
	int64_t at;             /* --at: -2 none; -3 middle, -4 last event */
	int diff;
};

static const struct run runs[] = {
	{"stats", cmd_stats, -2, 0},
	{"stats --at", cmd_stats, -3, 0},
	{"check", cmd_check, -2, 0},
	{"state --at -1", cmd_state, -1, 0},
	{"state --at 0", cmd_state, 0, 0},
	{"state --at mid", cmd_state, -3, 0},
	{"state --at last", cmd_state, -4, 0},
	{"trace", cmd_trace, -2, 0},
	{"leaks", cmd_leaks, -2, 0},
	{"phases", cmd_phases, -2, 0},
	{"frag", cmd_frag, -2, 0},
	{"oom", cmd_oom, -2, 0},
	{"top --at mid", cmd_top, -3, 0},
	{"diff", cmd_diff, -2, 1},
};

/* Events of the default device, to place --at (0 when the file does not
 * load: the commands then fail on their own). */
static int64_t
n_events(void)
{
	struct cli_opts o;
	struct cli_input in;
	const struct snap_trace *t;
	int64_t n = 0;
	FILE *err = stderr;

	memset(&o, 0, sizeof o);
	o.file = path;
	o.no_cache = o.quiet = 1;
	o.device = -1;
	stderr = fopen("/dev/null", "w");
	if (stderr != NULL && cli_open(&o, path, &in) == 0) {
		t = snap_trace_of(in.snap, snap_default_device(in.snap));
		n = t != NULL ? (int64_t)t->n : 0;
		cli_close(&in);
	}
	if (stderr != NULL)
		fclose(stderr);
	stderr = err;
	return n;
}

static void
run_one(const struct run *rn, int json, int64_t n)
{
	struct cli_opts o;
	FILE *out = stdout, *err = stderr;
	char *buf = NULL;
	size_t len = 0, bad;
	int rc;

	memset(&o, 0, sizeof o);
	o.cmd = rn->name;
	o.file = path;
	o.file2 = rn->diff ? path : NULL;
	o.json = json;
	o.no_cache = o.quiet = 1;
	o.device = -1;
	if (rn->at != -2) {
		o.has_at = 1;
		o.at = rn->at == -3 ? n / 2 : rn->at == -4 ? n - 1 : rn->at;
	}
	fflush(stdout);
	stdout = open_memstream(&buf, &len);
	stderr = fopen("/dev/null", "w");
	if (stdout == NULL || stderr == NULL)
		abort();
	rc = rn->fn(&o);
	fclose(stdout);
	fclose(stderr);
	stdout = out;
	stderr = err;
	if (getenv("SNAPVIEW_FUZZ_OUTPUT_VERBOSE") != NULL)
		fprintf(stderr, "fuzz_output: %s%s: exit %d, %zu bytes\n",
		    rn->name, json ? " --json" : "", rc, len);
	if (rc < 0 || rc > 4) {
		fprintf(stderr, "fuzz_output: %s%s: exit status %d\n", rn->name,
		    json ? " --json" : "", rc);
		abort();
	}
	if (json && len > 0 && json_valid(buf, len) != 0) {
		fprintf(stderr, "fuzz_output: %s --json: not one JSON document "
		    "(exit %d):\n%.*s\n", rn->name, rc,
		    (int)(len < 2000 ? len : 2000), buf);
		abort();
	}
	if (!json && (bad = text_bad(buf, len)) != 0) {
		fprintf(stderr, "fuzz_output: %s: unsafe byte 0x%02x at %zu\n",
		    rn->name, (unsigned char)buf[bad - 1], bad - 1);
		abort();
	}
	free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f;
	size_t i;
	int64_t n;

	if (setup() != 0)
		abort();
	f = fopen(path, "wb");
	if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	n = n_events();
	for (i = 0; i < sizeof runs / sizeof runs[0]; i++) {
		run_one(&runs[i], 0, n);
		run_one(&runs[i], 1, n);
	}
	return 0;
}
