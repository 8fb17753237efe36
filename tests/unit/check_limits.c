/*
 * Hostile inputs against the reader's and loader's limits (issue 9):
 * lengths near 2^63, memo indexes past the end, million-deep nesting,
 * million-key dicts, self-referencing lists, and 1 MB files built to make
 * the reader allocate gigabytes. Every input is generated here in memory.
 *
 * Each case runs in a forked child that measures its own peak RSS growth
 * (getrusage ru_maxrss after minus before) and reports it with the result
 * through a pipe. The assertions: the run ends with 0 or -1 plus a set
 * error (never a crash, never an abort from a failed allocation), and the
 * growth stays within RSS_BOUND(input bytes) = 64 x input + 32 MiB for
 * the loader (what snapview runs), READER_BOUND = 96 x input + 32 MiB for
 * the reader alone with a sink that keeps every container.
 *
 * Why those bounds: the reader keeps, per input byte, at most one stack
 * or memo slot (16 and 4 bytes) or one container: a 1-byte EMPTY_LIST
 * kept in its parent costs a 72-byte header and a 16-byte slot in the
 * parent, 88 bytes, hence the reader's 96. The loader keeps a container
 * only where something reads it (a record, a setting; pkl_sink's
 * PKL_SKIP for the rest), and the smallest container it keeps takes
 * several input bytes (a dict value needs its key); the model keeps one
 * row per record, and the smallest record takes several input bytes.
 * 64 bytes per input byte covers the worst of these with room for
 * allocator slack; 32 MiB covers fixed tables (the Check runner, the
 * string and frame hash tables). A file that could make the program
 * allocate gigabytes breaks them by two orders of magnitude.
 *
 * Outside ASan builds the child also runs under RLIMIT_AS, so a failing
 * case aborts in the child instead of eating the machine's memory.
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pickle/pkl_ops.h"
#include "pickle/pkl_reader.h"
#include "snapshot/snap_load.h"
#include "util/xalloc.h"

#if defined(__SANITIZE_ADDRESS__)
#define SV_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SV_ASAN 1
#endif
#endif

/* Under ASan every allocation carries redzones and freed memory sits in a
 * 256 MiB quarantine, so the bound there is 4x plus the quarantine: it
 * still catches gigabytes, and the plain build checks the real figure. */
#ifdef SV_ASAN
#define RSS_BOUND(n) (4 * 64 * (uint64_t)(n) + (288ull << 20))
#define READER_BOUND(n) (4 * 96 * (uint64_t)(n) + (288ull << 20))
#else
#define RSS_BOUND(n) (64 * (uint64_t)(n) + (32ull << 20))
#define READER_BOUND(n) (96 * (uint64_t)(n) + (32ull << 20))
#endif

/* ---- a byte builder ----------------------------------------------------- */

struct bb {
	uint8_t *p;
	size_t n, cap;
};

static void
put(struct bb *b, const void *s, size_t n)
{
	XGROW(b->p, b->cap, b->n + n);
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

static void
op(struct bb *b, uint8_t c)
{
	put(b, &c, 1);
}

static void
ops(struct bb *b, uint8_t c, size_t times)
{
	XGROW(b->p, b->cap, b->n + times);
	memset(b->p + b->n, c, times);
	b->n += times;
}

static void
le(struct bb *b, uint64_t v, int bytes)
{
	int i;

	for (i = 0; i < bytes; i++)
		op(b, (uint8_t)(v >> (8 * i)));
}

static void
str(struct bb *b, const char *s)
{
	size_t n = strlen(s);

	op(b, PKL_OP_SHORT_BINUNICODE);
	op(b, (uint8_t)n);
	put(b, s, n);
}

static void
begin(struct bb *b)
{
	memset(b, 0, sizeof *b);
	op(b, PKL_OP_PROTO);
	op(b, 4);
}

/* ---- running a case in a child ------------------------------------------ */

struct result {
	int rc;
	int code;
	uint64_t rss_growth; /* bytes */
	char msg[256];
};

/* The generic sink for the reader alone: keeps everything, so memory
 * reflects what the reader itself holds. */
static uint8_t
keep_classify(void *ctx, struct pkl_reader *r, uint8_t parent_cls,
    const struct pkl_value *key, uint64_t index, uint8_t kind)
{
	(void)ctx, (void)r, (void)parent_cls, (void)key, (void)index;
	(void)kind;
	return 1;
}

static int
keep_take(void *ctx, struct pkl_reader *r, uint8_t parent_cls,
    const struct pkl_value *parent, const struct pkl_value *key,
    uint64_t index, const struct pkl_value *child, uint64_t *id,
    uint8_t *id_cls, struct sv_error *err)
{
	(void)ctx, (void)r, (void)parent_cls, (void)parent, (void)key;
	(void)index, (void)child, (void)id, (void)id_cls, (void)err;
	return PKL_KEEP;
}

enum target { T_READER, T_LOADER };

static void
child(const struct bb *b, enum target t, int fd)
{
	static const struct pkl_sink sink = {keep_classify, keep_take, NULL,
	    NULL, 0, NULL, 0};
	struct rusage ru0, ru1;
	struct result res;
	struct sv_error err;
	struct snapshot *s = NULL;

#ifndef SV_ASAN
	{
		struct rlimit rl = {3ull << 30, 3ull << 30};

		setrlimit(RLIMIT_AS, &rl);
	}
#endif
	memset(&res, 0, sizeof res);
	sv_error_clear(&err);
	getrusage(RUSAGE_SELF, &ru0);
	if (t == T_READER)
		res.rc = pkl_run(b->p, b->n, &sink, NULL, NULL, &err);
	else
		res.rc = snap_load_buffer(b->p, b->n, NULL, &s, &err);
	getrusage(RUSAGE_SELF, &ru1);
	res.code = err.code;
	res.rss_growth = ru1.ru_maxrss > ru0.ru_maxrss
			     ? (uint64_t)(ru1.ru_maxrss - ru0.ru_maxrss) * 1024
			     : 0;
	snprintf(res.msg, sizeof res.msg, "%s", err.msg);
	snap_free(s);
	if (write(fd, &res, sizeof res) != (ssize_t)sizeof res)
		_exit(3);
	_exit(0);
}

/* Runs input b through target t in a child; frees b. */
static struct result
run(struct bb *b, enum target t, const char *what)
{
	struct result res;
	int fds[2], st = 0;
	pid_t pid;
	ssize_t got;
	uint64_t bound;

	ck_assert_int_eq(pipe(fds), 0);
	/* the input pages are touched before the fork, so the child's
	 * baseline already counts them */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		child(b, t, fds[1]);
	}
	close(fds[1]);
	memset(&res, 0, sizeof res);
	got = read(fds[0], &res, sizeof res);
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
	    got == (ssize_t)sizeof res,
	    "%s: the %s died (%s %d) on %zu bytes", what,
	    t == T_READER ? "reader" : "loader",
	    WIFSIGNALED(st) ? "signal" : "status",
	    WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), b->n);
	ck_assert_msg(res.rc == 0 || (res.rc == -1 && res.code != 0 &&
	    res.msg[0] != '\0'), "%s: rc %d code %d without a message",
	    what, res.rc, res.code);
	bound = t == T_READER ? READER_BOUND(b->n) : RSS_BOUND(b->n);
	ck_assert_msg(res.rss_growth <= bound,
	    "%s: the %s's peak RSS grew %llu bytes on a %zu-byte input "
	    "(bound %llu)", what, t == T_READER ? "reader" : "loader",
	    (unsigned long long)res.rss_growth, b->n,
	    (unsigned long long)bound);
	fprintf(stderr, "%-34s %-6s %8zu bytes in, rss +%6llu KiB, %s%s\n",
	    what, t == T_READER ? "reader" : "loader", b->n,
	    (unsigned long long)(res.rss_growth >> 10),
	    res.rc == 0 ? "ok" : "refused: ", res.rc == 0 ? "" : res.msg);
	return res;
}

/* Both targets; expects a refusal with that code from both when code is
 * not 0 (0: any clean outcome; the reader alone often accepts what the
 * loader then refuses as "not a memory snapshot"). */
static void
both(struct bb *b, const char *what, int code)
{
	struct result r1 = run(b, T_READER, what);
	struct result r2 = run(b, T_LOADER, what);

	if (code != 0) {
		ck_assert_msg(r1.rc == -1 && r1.code == code,
		    "%s: reader rc %d code %d (%s), wanted code %d", what,
		    r1.rc, r1.code, r1.msg, code);
		ck_assert_msg(r2.rc == -1 && r2.code == code,
		    "%s: loader rc %d code %d (%s), wanted code %d", what,
		    r2.rc, r2.code, r2.msg, code);
	}
	free(b->p);
}

/* ---- lengths ------------------------------------------------------------ */

static const struct {
	uint8_t op;
	int lenbytes;
} len_ops[] = {
    {PKL_OP_LONG1, 1},         {PKL_OP_LONG4, 4},
    {PKL_OP_SHORT_BINUNICODE, 1}, {PKL_OP_BINUNICODE, 4},
    {PKL_OP_BINUNICODE8, 8},   {PKL_OP_SHORT_BINBYTES, 1},
    {PKL_OP_BINBYTES, 4},      {PKL_OP_BINBYTES8, 8},
    {PKL_OP_BYTEARRAY8, 8},    {PKL_OP_BINSTRING, 4},
    {PKL_OP_SHORT_BINSTRING, 1}};

START_TEST(test_limits_lengths)
{
	/* lengths near 2^63 and 2^64, and just past the end of the file */
	const uint64_t huge[] = {
	    UINT64_MAX, (1ull << 63) + 1, 1ull << 63, (1ull << 63) - 1,
	    (1ull << 63) - 8, UINT32_MAX, 0x80000000u, 0x7fffffffu};
	size_t i, j;

	for (i = 0; i < sizeof len_ops / sizeof *len_ops; i++) {
		int lb = len_ops[i].lenbytes;
		uint64_t mask = lb == 8 ? UINT64_MAX : (1ull << (8 * lb)) - 1;

		for (j = 0; j < sizeof huge / sizeof *huge + 2; j++) {
			struct bb b;
			uint64_t n;
			char what[64];

			begin(&b);
			op(&b, len_ops[i].op);
			/* j == n: exactly one byte past the end (10 bytes of
			 * payload follow plus STOP); j == n + 1: the payload
			 * ends exactly at the end, with no STOP after it */
			if (j < sizeof huge / sizeof *huge)
				n = huge[j] & mask;
			else
				n = j == sizeof huge / sizeof *huge ? 12 : 11;
			le(&b, n, lb);
			ops(&b, 'x', 10);
			op(&b, PKL_OP_STOP);
			snprintf(what, sizeof what, "%s len %llx",
			    pkl_op_name(len_ops[i].op), (unsigned long long)n);
			both(&b, what, SV_ERR_FORMAT);
		}
	}
}
END_TEST

/* ---- memo --------------------------------------------------------------- */

START_TEST(test_limits_memo_get)
{
	const uint64_t idx[] = {1, 255, 0x10000, 0x7fffffff, 0xfffffffe,
	    UINT32_MAX};
	size_t i;

	for (i = 0; i < sizeof idx / sizeof *idx; i++) {
		struct bb b;

		begin(&b);
		op(&b, PKL_OP_EMPTY_DICT);
		op(&b, PKL_OP_MEMOIZE); /* slot 0 is set, the others not */
		if (idx[i] < 256) {
			op(&b, PKL_OP_BINGET);
			op(&b, (uint8_t)idx[i]);
		} else {
			op(&b, PKL_OP_LONG_BINGET);
			le(&b, idx[i], 4);
		}
		op(&b, PKL_OP_STOP);
		both(&b, "memo get past the end", SV_ERR_FORMAT);
	}
}
END_TEST

START_TEST(test_limits_memo_put)
{
	const uint64_t idx[] = {0x7fffffff, 0xfffffffe, UINT32_MAX, 4u << 20};
	size_t i;

	for (i = 0; i < sizeof idx / sizeof *idx; i++) {
		struct bb b;

		begin(&b);
		op(&b, PKL_OP_EMPTY_DICT);
		op(&b, PKL_OP_LONG_BINPUT);
		le(&b, idx[i], 4);
		op(&b, PKL_OP_STOP);
		both(&b, "huge memo put", SV_ERR_LIMIT);
	}
}
END_TEST

/* A few puts, each at the largest index the previous ones allow: the
 * memo must not grow geometrically with a handful of opcodes. */
START_TEST(test_limits_memo_ladder)
{
	struct bb b;
	uint64_t cap = 0;
	int i;

	begin(&b);
	op(&b, PKL_OP_NONE);
	for (i = 0; i < 24; i++) {
		uint64_t idx = 2 * cap + (1u << 20);

		if (idx >= UINT32_MAX)
			idx = UINT32_MAX - 1;
		op(&b, PKL_OP_LONG_BINPUT);
		le(&b, idx, 4);
		cap = idx + 1;
	}
	op(&b, PKL_OP_STOP);
	both(&b, "memo ladder", 0);
}
END_TEST

/* ---- depth and width ---------------------------------------------------- */

START_TEST(test_limits_deep_lists)
{
	const size_t depth[] = {1000000, 3000000};
	size_t i;

	for (i = 0; i < 2; i++) {
		struct bb b;

		begin(&b);
		ops(&b, PKL_OP_EMPTY_LIST, depth[i]);
		ops(&b, PKL_OP_APPEND, depth[i] - 1);
		op(&b, PKL_OP_STOP);
		both(&b, i == 0 ? "1e6-deep lists" : "3e6-deep lists",
		    i == 0 ? 0 : SV_ERR_LIMIT);
	}
}
END_TEST

START_TEST(test_limits_deep_marks)
{
	struct bb b;

	/* 500k MARKs then a 1e6 more: the mark stack has a limit */
	begin(&b);
	ops(&b, PKL_OP_MARK, 500000);
	op(&b, PKL_OP_NONE);
	op(&b, PKL_OP_STOP);
	both(&b, "500k marks", 0);
	begin(&b);
	ops(&b, PKL_OP_MARK, 1500000);
	op(&b, PKL_OP_STOP);
	both(&b, "1.5e6 marks", SV_ERR_LIMIT);
	/* MARK (EMPTY_LIST MARK)* ... LIST: tuples of lists 1e6 deep */
	begin(&b);
	ops(&b, PKL_OP_MARK, 1);
	{
		size_t i;

		for (i = 0; i < 500000; i++) {
			op(&b, PKL_OP_EMPTY_LIST);
			op(&b, PKL_OP_MARK);
		}
	}
	ops(&b, PKL_OP_LIST, 500001);
	op(&b, PKL_OP_STOP);
	both(&b, "500k marks with lists", 0);
}
END_TEST

/* allocator_settings: {k: {k: {k: ... }}} 300k deep, and a settings
 * value that contains itself. The loader renders settings as text. */
START_TEST(test_limits_deep_settings)
{
	struct bb b;
	size_t i, n = 300000;

	begin(&b);
	op(&b, PKL_OP_EMPTY_DICT);
	op(&b, PKL_OP_MARK);
	str(&b, "device_traces");
	op(&b, PKL_OP_EMPTY_LIST);
	str(&b, "allocator_settings");
	for (i = 0; i < n; i++) {
		op(&b, PKL_OP_EMPTY_DICT);
		str(&b, "k");
	}
	op(&b, PKL_OP_NONE);
	ops(&b, PKL_OP_SETITEM, n);
	op(&b, PKL_OP_SETITEMS);
	op(&b, PKL_OP_STOP);
	both(&b, "300k-deep settings", 0);

	begin(&b);
	op(&b, PKL_OP_EMPTY_DICT);
	op(&b, PKL_OP_MARK);
	str(&b, "device_traces");
	op(&b, PKL_OP_EMPTY_LIST);
	str(&b, "allocator_settings");
	op(&b, PKL_OP_EMPTY_DICT);
	str(&b, "a");
	op(&b, PKL_OP_EMPTY_DICT);  /* X */
	op(&b, PKL_OP_MEMOIZE);     /* memo 0 = X */
	str(&b, "self");
	op(&b, PKL_OP_BINGET);
	op(&b, 0);
	op(&b, PKL_OP_SETITEM);     /* X["self"] = X */
	op(&b, PKL_OP_SETITEM);     /* settings["a"] = X */
	op(&b, PKL_OP_SETITEMS);     /* root["allocator_settings"] */
	op(&b, PKL_OP_STOP);
	both(&b, "self-containing settings value", 0);
}
END_TEST

/* A dict of 1e6 int keys (pushed 500k pairs at a time: the stack holds
 * 1M values), placed as a segment, as allocator_settings or as the value
 * of an unknown root key. */
static void
million_keys(struct bb *b, const char *under)
{
	size_t i, half;

	begin(b);
	op(b, PKL_OP_EMPTY_DICT);
	op(b, PKL_OP_MARK);
	str(b, "device_traces");
	op(b, PKL_OP_EMPTY_LIST);
	if (strcmp(under, "segment") == 0) {
		str(b, "segments");
		op(b, PKL_OP_EMPTY_LIST);
	} else {
		str(b, under);
	}
	op(b, PKL_OP_EMPTY_DICT);
	for (half = 0; half < 2; half++) {
		op(b, PKL_OP_MARK);
		for (i = 0; i < 500000; i++) {
			op(b, PKL_OP_BININT);
			le(b, half * 500000 + i, 4);
			op(b, PKL_OP_NONE);
		}
		op(b, PKL_OP_SETITEMS);
	}
	if (strcmp(under, "segment") == 0)
		op(b, PKL_OP_APPEND);
	op(b, PKL_OP_SETITEMS);
	op(b, PKL_OP_STOP);
}

START_TEST(test_limits_million_keys)
{
	struct bb b;

	million_keys(&b, "segment");
	both(&b, "1e6-key segment dict", 0);
	million_keys(&b, "allocator_settings");
	both(&b, "1e6-key allocator_settings", 0);
	million_keys(&b, "user_junk");
	both(&b, "1e6-key unknown root value", 0);
}
END_TEST

/* ---- sharing and self-reference ------------------------------------------ */

/* {"device_traces": [[{"action": "alloc", "frames": [F, F, ... F]}]]},
 * F one memoized frame dict referenced n times. */
static void
shared_frames(struct bb *b, size_t n)
{
	size_t i;

	begin(b);
	op(b, PKL_OP_EMPTY_DICT);
	str(b, "device_traces");
	op(b, PKL_OP_EMPTY_LIST);
	op(b, PKL_OP_EMPTY_LIST);
	op(b, PKL_OP_EMPTY_DICT);
	str(b, "action");
	str(b, "alloc");
	op(b, PKL_OP_SETITEM);
	str(b, "frames");
	op(b, PKL_OP_EMPTY_LIST);
	op(b, PKL_OP_MARK);
	op(b, PKL_OP_EMPTY_DICT);
	op(b, PKL_OP_MARK);
	str(b, "name");
	str(b, "f");
	str(b, "filename");
	str(b, "x.py");
	str(b, "line");
	op(b, PKL_OP_BININT1);
	op(b, 1);
	op(b, PKL_OP_SETITEMS);
	op(b, PKL_OP_BINPUT);
	op(b, 7);
	for (i = 1; i < n; i++) {
		if (i % 500000 == 0) { /* the stack holds 1M values */
			op(b, PKL_OP_APPENDS);
			op(b, PKL_OP_MARK);
		}
		op(b, PKL_OP_BINGET);
		op(b, 7);
	}
	op(b, PKL_OP_APPENDS);
	op(b, PKL_OP_SETITEM); /* frames */
	op(b, PKL_OP_APPEND);  /* event into trace */
	op(b, PKL_OP_APPEND);  /* trace into device_traces */
	op(b, PKL_OP_SETITEM);
	op(b, PKL_OP_STOP);
}

START_TEST(test_limits_shared_frames)
{
	struct bb b;

	shared_frames(&b, 1000000);
	both(&b, "1e6 refs to one frame dict", 0);
}
END_TEST

/* The frames list of an event holds itself; the segments list holds
 * itself; the root dict holds itself. */
START_TEST(test_limits_self_reference)
{
	struct bb b;

	begin(&b);
	op(&b, PKL_OP_EMPTY_DICT);
	str(&b, "device_traces");
	op(&b, PKL_OP_EMPTY_LIST);
	op(&b, PKL_OP_EMPTY_LIST);
	op(&b, PKL_OP_EMPTY_DICT);
	str(&b, "action");
	str(&b, "alloc");
	op(&b, PKL_OP_SETITEM);
	str(&b, "frames");
	op(&b, PKL_OP_EMPTY_LIST);
	op(&b, PKL_OP_MEMOIZE);
	op(&b, PKL_OP_BINGET);
	op(&b, 0);
	op(&b, PKL_OP_APPEND);
	op(&b, PKL_OP_BINGET);
	op(&b, 0);
	op(&b, PKL_OP_APPEND);
	op(&b, PKL_OP_SETITEM);
	op(&b, PKL_OP_APPEND);
	op(&b, PKL_OP_APPEND);
	op(&b, PKL_OP_SETITEM);
	op(&b, PKL_OP_STOP);
	both(&b, "frames list holding itself", 0);

	begin(&b);
	op(&b, PKL_OP_EMPTY_DICT);
	str(&b, "segments");
	op(&b, PKL_OP_EMPTY_LIST);
	op(&b, PKL_OP_MEMOIZE);
	op(&b, PKL_OP_DUP);
	op(&b, PKL_OP_APPEND);
	op(&b, PKL_OP_BINGET);
	op(&b, 0);
	op(&b, PKL_OP_APPEND);
	op(&b, PKL_OP_SETITEM);
	op(&b, PKL_OP_STOP);
	both(&b, "segments list holding itself", 0);

	begin(&b);
	op(&b, PKL_OP_EMPTY_DICT);
	op(&b, PKL_OP_MEMOIZE);
	str(&b, "segments");
	op(&b, PKL_OP_BINGET);
	op(&b, 0);
	op(&b, PKL_OP_SETITEM);
	str(&b, "device_traces");
	op(&b, PKL_OP_MARK);
	op(&b, PKL_OP_BINGET);
	op(&b, 0);
	op(&b, PKL_OP_BINGET);
	op(&b, 0);
	op(&b, PKL_OP_LIST);
	op(&b, PKL_OP_SETITEM);
	op(&b, PKL_OP_STOP);
	both(&b, "root dict holding itself", 0);
}
END_TEST

/* ---- 1 MB files built to make the reader allocate ------------------------ */

START_TEST(test_limits_alloc_bombs)
{
	const size_t mb = 1u << 20;
	struct bb b;
	size_t i;

	/* DUP storm: the stack limit stops it */
	begin(&b);
	op(&b, PKL_OP_EMPTY_DICT);
	ops(&b, PKL_OP_DUP, mb);
	op(&b, PKL_OP_STOP);
	both(&b, "1 MB of DUP", SV_ERR_LIMIT);

	/* containers kept alive by the memo only */
	begin(&b);
	for (i = 0; i < mb / 3; i++) {
		op(&b, PKL_OP_EMPTY_LIST);
		op(&b, PKL_OP_MEMOIZE);
		op(&b, PKL_OP_POP);
	}
	op(&b, PKL_OP_EMPTY_DICT);
	op(&b, PKL_OP_STOP);
	both(&b, "350k memoized lists", 0);

	/* a chain of tuples, each holding the previous one three times */
	begin(&b);
	op(&b, PKL_OP_NONE);
	for (i = 0; i < mb / 3; i++) {
		op(&b, PKL_OP_DUP);
		op(&b, PKL_OP_DUP);
		op(&b, PKL_OP_TUPLE3);
	}
	op(&b, PKL_OP_STOP);
	both(&b, "350k-deep tuple chain", 0);

	/* 500k empty lists inside one list the loader keeps (unknown key) */
	begin(&b);
	op(&b, PKL_OP_EMPTY_DICT);
	op(&b, PKL_OP_MARK);
	str(&b, "device_traces");
	op(&b, PKL_OP_EMPTY_LIST);
	str(&b, "junk");
	op(&b, PKL_OP_EMPTY_LIST);
	for (i = 0; i < mb / 2; i++) {
		op(&b, PKL_OP_EMPTY_LIST);
		op(&b, PKL_OP_APPEND);
	}
	op(&b, PKL_OP_SETITEMS);
	op(&b, PKL_OP_STOP);
	both(&b, "500k kept empty lists", 0);

	/* memo indexes far apart */
	begin(&b);
	op(&b, PKL_OP_NONE);
	for (i = 0; i < mb / 5; i++) {
		op(&b, PKL_OP_LONG_BINPUT);
		le(&b, (uint64_t)i * 4096, 4);
	}
	op(&b, PKL_OP_STOP);
	both(&b, "200k sparse memo puts", 0);
}
END_TEST

/* Segment dicts with a blocks list that are then dropped: the loader's
 * pending-blocks bookkeeping must not grow without end. */
START_TEST(test_limits_orphan_blocks)
{
	struct bb b;
	size_t i;

	begin(&b);
	op(&b, PKL_OP_EMPTY_DICT);
	str(&b, "segments");
	op(&b, PKL_OP_EMPTY_LIST);
	op(&b, PKL_OP_MEMOIZE); /* 0: segments list */
	str(&b, "blocks");
	op(&b, PKL_OP_MEMOIZE); /* 1: "blocks" */
	op(&b, PKL_OP_POP);
	for (i = 0; i < 100000; i++) {
		op(&b, PKL_OP_EMPTY_DICT);
		op(&b, PKL_OP_BINGET);
		op(&b, 1);
		op(&b, PKL_OP_EMPTY_LIST);
		op(&b, PKL_OP_SETITEM);
		op(&b, PKL_OP_POP);
	}
	for (i = 0; i < 100000; i++) {
		op(&b, PKL_OP_EMPTY_DICT);
		op(&b, PKL_OP_APPEND);
	}
	op(&b, PKL_OP_SETITEM);
	op(&b, PKL_OP_STOP);
	both(&b, "100k orphan blocks lists", 0);
}
END_TEST

/* A list of n empty lists, one byte each (EMPTY_LIST), gathered by
 * APPENDS in batches of 1,000 as pickle writes them: the most containers
 * an input byte can make. */
static void
empty_lists(struct bb *b, size_t n)
{
	size_t i;

	op(b, PKL_OP_EMPTY_LIST);
	for (i = 0; i < n; i += 1000) {
		op(b, PKL_OP_MARK);
		ops(b, PKL_OP_EMPTY_LIST, n - i < 1000 ? n - i : 1000);
		op(b, PKL_OP_APPENDS);
	}
}

START_TEST(test_limits_empty_lists)
{
	const size_t n = 1900000;
	struct bb b;

	/* the root */
	begin(&b);
	empty_lists(&b, n);
	op(&b, PKL_OP_STOP);
	both(&b, "root list of 1.9M empty lists", 0);

	/* under a key the loader does not know */
	begin(&b);
	op(&b, PKL_OP_EMPTY_DICT);
	str(&b, "junk");
	empty_lists(&b, n);
	op(&b, PKL_OP_SETITEM);
	op(&b, PKL_OP_STOP);
	both(&b, "1.9M empty lists, unknown key", 0);

	/* as trace lists, far past the devices allowed */
	begin(&b);
	op(&b, PKL_OP_EMPTY_DICT);
	str(&b, "device_traces");
	empty_lists(&b, n);
	op(&b, PKL_OP_SETITEM);
	op(&b, PKL_OP_STOP);
	both(&b, "1.9M empty trace lists", 0);

	/* as segments */
	begin(&b);
	op(&b, PKL_OP_EMPTY_DICT);
	str(&b, "segments");
	empty_lists(&b, n);
	op(&b, PKL_OP_SETITEM);
	op(&b, PKL_OP_STOP);
	both(&b, "1.9M empty lists as segments", 0);

	/* one list of them in a trace list, where events go */
	begin(&b);
	op(&b, PKL_OP_EMPTY_DICT);
	str(&b, "device_traces");
	op(&b, PKL_OP_EMPTY_LIST);
	empty_lists(&b, n);
	op(&b, PKL_OP_APPEND);
	op(&b, PKL_OP_SETITEM);
	op(&b, PKL_OP_STOP);
	both(&b, "1.9M empty lists as events", 0);

	/* a setting's value (a list is shown as "?") */
	begin(&b);
	op(&b, PKL_OP_EMPTY_DICT);
	str(&b, "allocator_settings");
	op(&b, PKL_OP_EMPTY_DICT);
	str(&b, "junk");
	empty_lists(&b, n);
	op(&b, PKL_OP_SETITEM);
	op(&b, PKL_OP_SETITEM);
	op(&b, PKL_OP_STOP);
	both(&b, "1.9M empty lists in a setting", 0);
}
END_TEST

static Suite *
limits_suite(void)
{
	Suite *s = suite_create("limits");
	TCase *tc = tcase_create("limits");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_limits_lengths);
	tcase_add_test(tc, test_limits_memo_get);
	tcase_add_test(tc, test_limits_memo_put);
	tcase_add_test(tc, test_limits_memo_ladder);
	tcase_add_test(tc, test_limits_deep_lists);
	tcase_add_test(tc, test_limits_deep_marks);
	tcase_add_test(tc, test_limits_deep_settings);
	tcase_add_test(tc, test_limits_million_keys);
	tcase_add_test(tc, test_limits_shared_frames);
	tcase_add_test(tc, test_limits_self_reference);
	tcase_add_test(tc, test_limits_alloc_bombs);
	tcase_add_test(tc, test_limits_orphan_blocks);
	suite_add_tcase(s, tc);
	tc = tcase_create("lists");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_limits_empty_lists);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(limits_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
