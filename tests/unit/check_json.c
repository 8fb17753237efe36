/*
 * JSON snapshots (src/pickle/pkl_json.c) through the loader: what JSON
 * says differently from a pickle reaches the model exactly (\u escapes
 * and surrogate pairs, 64-bit addresses, whole numbers written as
 * floats, null, lists for tuples), and each hostile input (cut off, 0
 * bytes, nested too deep, numbers too wide or too long, bad escapes and
 * UTF-8, wrong types, a key twice, trailing bytes) fails with the code,
 * the byte offset and the one-line reason the test names; every prefix
 * of a small document loads or fails cleanly (ASan and UBSan in CI).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot/snap_load.h"
#include "util/xalloc.h"

static int
load(const char *text, size_t len, struct snapshot **s, struct sv_error *err)
{
	sv_error_clear(err);
	return snap_load_buffer((const uint8_t *)text, len, NULL, s, err);
}

/* The first device trace with events. */
static const struct snap_trace *
trace0(const struct snapshot *s)
{
	uint32_t d;

	for (d = 0; d < s->n_traces; d++)
		if (s->traces[d].n > 0)
			return &s->traces[d];
	return NULL;
}

static const char good[] =
    "  {\"segments\": [{\"device\": 0, \"address\": 9223372036854775813,"
    " \"total_size\": 2097152, \"stream\": 0, \"segment_type\": \"small\","
    " \"segment_pool_id\": [0, 0], \"blocks\": [{\"address\": "
    "9223372036854775813, \"size\": 512, \"requested_size\": 500,"
    " \"state\": \"active_allocated\", \"frames\": [{\"name\": "
    "\"caf\\u00e9 \\ud83d\\ude00\", \"filename\": \"a\\/b.py\", "
    "\"line\": 7}]}]}],\n"
    " \"device_traces\": [[{\"action\": \"segment_alloc\", \"addr\": "
    "9223372036854775813, \"size\": 2097152, \"stream\": 0, \"time_us\": "
    "1.5e3, \"frames\": []}, {\"action\": \"alloc\", \"addr\": "
    "9223372036854775813, \"size\": 512, \"stream\": 0, \"time_us\": "
    "1600, \"frames\": [{\"name\": \"caf\\u00e9 \\ud83d\\ude00\", "
    "\"filename\": \"a\\/b.py\", \"line\": 7}], \"pool_id\": [1, 2],"
    " \"compile_context\": null}, {\"action\": \"free_requested\", "
    "\"addr\": 18446744073709551615, \"size\": 512, \"stream\": 0}]],\n"
    " \"allocator_settings\": {\"max_split_size\": -1, \"x\": 2.5}}\n";

START_TEST(test_json_values)
{
	struct snapshot *s = NULL;
	struct sv_error err;
	const struct snap_trace *t;
	const struct snap_frame *f;
	const uint32_t *fr;
	uint32_t n;

	ck_assert_msg(load(good, strlen(good), &s, &err) == 0, "%s",
	    err.msg);
	ck_assert_uint_eq(s->n_segments, 1);
	ck_assert_uint_eq(s->n_blocks, 1);
	ck_assert_uint_eq(s->segments[0].addr, 9223372036854775813ull);
	ck_assert_uint_eq(s->blocks[0].requested_size, 500);
	t = trace0(s);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->n, 3);
	ck_assert_uint_eq(snap_ev_addr(t, 0), 9223372036854775813ull);
	ck_assert_uint_eq(snap_ev_addr(t, 2), UINT64_MAX);
	/* 1.5e3 is the whole number 1500 */
	ck_assert(snap_trace_has_time(t));
	ck_assert_int_eq(snap_ev_time(t, 0), 1500);
	ck_assert_int_eq(snap_ev_time(t, 1), 1600);
	ck_assert_str_eq(snap_str(s, snap_ev_pool_str(t, 1)), "1,2");
	/* the escapes decoded, the surrogate pair as one code point */
	fr = snap_stack(s, snap_ev_stack(t, 1), &n);
	ck_assert_uint_eq(n, 1);
	f = &s->frames[fr[0]];
	ck_assert_str_eq(snap_str(s, f->name), "caf\xc3\xa9 \xf0\x9f\x98\x80");
	ck_assert_str_eq(snap_str(s, f->filename), "a/b.py");
	ck_assert_uint_eq(f->line, 7);
	/* the block's frames are the event's: one stack */
	ck_assert_uint_eq(s->blocks[0].stack, snap_ev_stack(t, 1));
	ck_assert_uint_eq(s->n_settings, 2);
	snap_free(s);
}
END_TEST

/* Nesting of exactly 1000 objects and arrays is read; 1001 is not. */
static char *
nested(int depth)
{
	size_t n = (size_t)depth * 2 + 64, o = 0;
	char *p = xmalloc(n);
	int i;

	o += (size_t)snprintf(p, n, "{\"segments\": [], \"x\": ");
	for (i = 1; i < depth; i++)
		p[o++] = '[';
	for (i = 1; i < depth; i++)
		p[o++] = ']';
	p[o++] = '}';
	p[o] = '\0';
	return p;
}

START_TEST(test_json_depth)
{
	struct snapshot *s = NULL;
	struct sv_error err;
	char *p = nested(1000);

	ck_assert_msg(load(p, strlen(p), &s, &err) == 0, "%s", err.msg);
	snap_free(s);
	free(p);
	p = nested(1001);
	ck_assert_int_eq(load(p, strlen(p), &s, &err), -1);
	ck_assert_int_eq(err.code, SV_ERR_LIMIT);
	/* the 1001st opening: the root, then 1000 brackets */
	ck_assert_uint_eq(err.offset, strlen("{\"segments\": [], \"x\": ") +
	    999);
	ck_assert_str_eq(err.msg, "objects and arrays nested deeper than "
	    "1000");
	free(p);
}
END_TEST

struct hostile {
	const char *name;
	const char *text;
	enum sv_errcode code;
	const char *at;    /* the offset is where this starts in text ... */
	int plus;          /* ... plus this; at NULL: strlen(text) + plus */
	const char *msg;   /* the message starts so */
};

#define EV "{\"segments\": [], \"device_traces\": [[{\"action\": "
static const struct hostile hostile[] = {
    {"0 bytes", "", SV_ERR_FORMAT, "", 0,
	"empty file (a dump that did not finish?)"},
    {"cut off in a key", EV "\"alloc\", \"ad", SV_ERR_FORMAT, NULL, 0,
	"cut off (the dump did not finish?): the JSON ends with 4 objects "
	"or arrays still open"},
    {"cut off after a value", "{\"segments\": []", SV_ERR_FORMAT, NULL, 0,
	"cut off (the dump did not finish?): the JSON ends with 1 object "
	"or array still open"},
    {"address of 2^64", EV "\"alloc\", \"addr\": 18446744073709551616}]]}",
	SV_ERR_FORMAT, "}]]}", 0, "trace entry: 'addr' has the wrong type"},
    {"negative beyond 64 bits", EV "\"alloc\", \"size\": "
	"-9223372036854775809}]]}", SV_ERR_FORMAT, "}]]}", 0,
	"trace entry: 'size' has the wrong type"},
    {"float address", EV "\"alloc\", \"addr\": 0.5}]]}", SV_ERR_FORMAT,
	"}]]}", 0, "trace entry: 'addr' has the wrong type"},
    {"action a number", EV "5}]]}", SV_ERR_FORMAT, "}]]}", 0,
	"trace entry: 'action' has the wrong type"},
    {"block state a list", "{\"segments\": [{\"blocks\": [{\"state\": "
	"[]}]}]}", SV_ERR_FORMAT, "}]}]}", 0,
	"block: 'state' has the wrong type"},
    {"lone high surrogate", EV "\"a\\ud800b\"}]]}", SV_ERR_FORMAT,
	"\\ud800", 0, "a string with a \\u escape of a high surrogate with "
	"no low surrogate after it"},
    {"reversed surrogates", EV "\"\\udc00\\ud800\"}]]}", SV_ERR_FORMAT,
	"\\udc00", 0, "a string with a \\u escape of a low surrogate with "
	"no high surrogate before it"},
    {"high surrogate, then no low", "{\"segments\": [], \"\\ud83d\\u0041\""
	": 1}", SV_ERR_FORMAT, "\\ud83d", 0, "a string with a \\u escape "
	"of a high surrogate"},
    /* yajl's own errors: the offset where it stopped */
    {"unknown escape", EV "\"\\q\"}]]}", SV_ERR_FORMAT, "\"\\q", 2,
	"not valid JSON: lexical error: inside a string, '\\' occurs"},
    {"bad UTF-8", EV "\"\xff\xfe\"}]]}", SV_ERR_FORMAT, "\"\xff", 2,
	"not valid JSON: lexical error: invalid bytes in UTF8 string"},
    {"number of 401 characters", NULL, SV_ERR_LIMIT, NULL, 0,
	"a number of more than 400 characters"},
    {"a key twice", "{\"segments\": [], \"device_traces\": [], "
	"\"segments\": []}", SV_ERR_FORMAT, "\"segments\": []}", 9,
	"the key \"segments\" twice in one object"},
    {"a key twice, once escaped", EV "\"alloc\", \"\\u0061ction\": "
	"\"free\"}]]}", SV_ERR_FORMAT, "\"\\u0061ction\"", 12,
	"the key \"action\" twice in one object"},
    {"trailing bytes", "{\"segments\": []} {}", SV_ERR_FORMAT, " {}", 2,
	"not valid JSON: parse error: trailing garbage"},
    {"a top-level list of numbers", "[1, 2]", SV_ERR_FORMAT, "]", 0,
	"not a memory snapshot: a list that holds no segment dicts"},
    {"no snapshot keys", "{\"a\": {\"b\": null}}", SV_ERR_FORMAT, NULL,
	-1, "not a memory snapshot: no 'segments' or 'device_traces' key"},
};

START_TEST(test_json_hostile)
{
	const struct hostile *h = &hostile[_i];
	struct snapshot *s = NULL;
	struct sv_error err;
	char *text = NULL;
	uint64_t want;

	if (h->text == NULL) {	/* the long number */
		size_t n = strlen(EV) + 600;

		text = xmalloc(n);
		snprintf(text, n, "%s\"alloc\", \"x\": 1.%0400d}]]}", EV, 0);
	} else {
		text = xstrdup(h->text);
	}
	if (h->text == NULL)	/* its last byte */
		want = strlen(EV) + strlen("\"alloc\", \"x\": ") + 401;
	else if (h->at == NULL)
		want = strlen(text) + (uint64_t)(int64_t)h->plus;
	else
		want = (uint64_t)(strstr(text, h->at) - text) +
		    (uint64_t)h->plus;
	ck_assert_msg(load(text, strlen(text), &s, &err) == -1, "%s: loaded",
	    h->name);
	ck_assert_ptr_null(s);
	ck_assert_msg(err.code == h->code, "%s: code %d", h->name, err.code);
	ck_assert_msg(strncmp(err.msg, h->msg, strlen(h->msg)) == 0,
	    "%s: message \"%s\"", h->name, err.msg);
	ck_assert_msg(strchr(err.msg, '\n') == NULL, "%s: two lines",
	    h->name);
	ck_assert_msg(err.offset == want, "%s: byte %llu, not %llu", h->name,
	    (unsigned long long)err.offset, (unsigned long long)want);
	free(text);
}
END_TEST

/* Every prefix of the good document loads or fails with a message. */
START_TEST(test_json_prefixes)
{
	struct snapshot *s = NULL;
	struct sv_error err;
	size_t n, len = strlen(good), loaded = 0;

	for (n = 0; n <= len; n++) {
		char *p = xmalloc(n + 1);

		memcpy(p, good, n);
		if (load(p, n, &s, &err) == 0) {
			loaded++;
			snap_free(s);
		} else {
			ck_assert_msg(err.msg[0] != '\0', "prefix %zu", n);
			ck_assert_ptr_null(s);
		}
		free(p);
	}
	/* the whole, and with its last newline cut */
	ck_assert_uint_eq(loaded, 2);
}
END_TEST

static Suite *
json_suite(void)
{
	Suite *s = suite_create("json");
	TCase *tc = tcase_create("json");

	tcase_add_test(tc, test_json_values);
	tcase_add_test(tc, test_json_depth);
	tcase_add_loop_test(tc, test_json_hostile, 0,
	    (int)(sizeof hostile / sizeof hostile[0]));
	tcase_add_test(tc, test_json_prefixes);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(json_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
