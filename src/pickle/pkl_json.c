/*
 * The JSON front end of the reader (pkl_reader.h): a JSON snapshot, as
 * `json.dump()` of the pickled value writes it, parsed as a stream of
 * libyajl callbacks into the values, containers and sink calls the pickle
 * VM makes, so the snapshot layer cannot tell the two apart. No document
 * tree: each container is classified when it opens and handed to the
 * sink when it closes, records (a trace event) through take_record().
 *
 * Strings stay offsets into the input, as a pickle's: yajl passes a
 * string without escapes as a pointer into the buffer. One with escapes
 * is checked here (a \u escape that is half of a surrogate pair is an
 * error) and kept as the offset of its raw text, flagged F_JSON_ESC;
 * pkl_str() decodes it again into a small ring of buffers
 * (pkl_json_str()). Numbers come as text (yajl's number callback), so a
 * 64-bit address is exact: integers up to 2^64 - 1 are PKL_INT (the top
 * half flagged PKL_F_UNSIGNED), wider ones PKL_BIGINT with their sign,
 * as the pickle VM gives them; a number with a fraction or an exponent
 * whose value is a whole number within 2^53 is PKL_INT (JSON does not
 * tell 1.0 from 1), any other PKL_FLOAT.
 *
 * Limits: objects and arrays nested PKL_JSON_DEPTH deep (Python's json
 * module cannot go deeper), numbers of a fraction or exponent up to 400
 * characters, a key repeated in one object an error (among its first
 * JSON_DUP_KEYS keys). yajl checks the grammar and the UTF-8; its one
 * allocation that grows with the input is the buffer it decodes a string
 * with escapes into (the longest such string).
 */
#include "config.h"

#include "pickle/pkl_int.h"

#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "util/xalloc.h"

#define PROGRESS_STEP (1u << 20)
#define JSON_DUP_KEYS 64   /* keys of an object checked for repeats */
#define JSON_NUM_MAX 400   /* characters of a number with a fraction */

/*
 * Short strings without escapes (keys, actions) are given the offset of
 * an earlier copy of the same text, the last one this direct-mapped table
 * saw: the loader caches what a string means by its offset, which in a
 * pickle the memo shares, and a key looked up again at every event took
 * a fifth of the parse. Any offset names its own text, so a copy the
 * table has forgotten only costs a lookup.
 */
#define CANON_BITS 12
#define CANON_MAX 24
struct canon {
	uint64_t off1;       /* offset + 1; 0: empty */
	uint32_t len;
	char text[CANON_MAX];
};

/* An open object or array: its container (one reference) and, in an
 * object, the key of the value to come. */
struct jframe {
	struct pkl_value cont;
	struct pkl_value key;
};

struct jparse {
	struct pkl_reader *r;
	struct sv_error *err;
	yajl_handle h;
	struct jframe *fr;
	size_t n_fr, cap_fr;
	int failed;          /* err set by a callback */
	int root_done;
	struct canon *canon;   /* 1 << CANON_BITS entries */
	uint64_t next_progress;
	size_t prev_end;     /* end of the token before this one */
};

int
pkl_json_is(const uint8_t *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' ||
		    buf[i] == '\r')
			continue;
		return buf[i] == '{' || buf[i] == '[';
	}
	return 0;
}

/* ---- strings with escapes ------------------------------------------------ */

static int
hex4(const uint8_t *p, unsigned *out)
{
	unsigned v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		uint8_t c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	*out = v;
	return 0;
}

/*
 * Decodes the raw text of a string (between its quotes, n bytes at p)
 * into out, which has room for n bytes: never more is written, as every
 * escape is longer than what it stands for; out NULL only checks it.
 * Returns the decoded length, or -1 with *bad the offset in p of an
 * escape that is not valid (half a surrogate pair, a bad hex digit, an
 * unknown letter) and *why its kind.
 */
#define PUT(c) do { if (out != NULL) out[o] = (char)(c); o++; } while (0)

static long
unescape(const uint8_t *p, size_t n, char *out, size_t *bad,
    const char **why)
{
	size_t i = 0, o = 0;
	unsigned cp, lo;

	while (i < n) {
		if (p[i] != '\\') {
			PUT(p[i]);
			i++;
			continue;
		}
		*bad = i;
		if (n - i < 2) {
			*why = "a backslash at the end of a string";
			return -1;
		}
		switch (p[i + 1]) {
		case '"': PUT('"'); i += 2; continue;
		case '\\': PUT('\\'); i += 2; continue;
		case '/': PUT('/'); i += 2; continue;
		case 'b': PUT('\b'); i += 2; continue;
		case 'f': PUT('\f'); i += 2; continue;
		case 'n': PUT('\n'); i += 2; continue;
		case 'r': PUT('\r'); i += 2; continue;
		case 't': PUT('\t'); i += 2; continue;
		case 'u': break;
		default:
			*why = "an unknown escape";
			return -1;
		}
		if (n - i < 6 || hex4(p + i + 2, &cp) != 0) {
			*why = "a \\u escape without four hex digits";
			return -1;
		}
		i += 6;
		if (cp >= 0xdc00 && cp <= 0xdfff) {
			*why = "a \\u escape of a low surrogate with no high "
			    "surrogate before it";
			return -1;
		}
		if (cp >= 0xd800 && cp <= 0xdbff) {
			if (n - i < 6 || p[i] != '\\' || p[i + 1] != 'u' ||
			    hex4(p + i + 2, &lo) != 0 || lo < 0xdc00 ||
			    lo > 0xdfff) {
				*why = "a \\u escape of a high surrogate with "
				    "no low surrogate after it";
				return -1;
			}
			i += 6;
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			PUT(0xf0 | cp >> 18);
			PUT(0x80 | (cp >> 12 & 0x3f));
			PUT(0x80 | (cp >> 6 & 0x3f));
			PUT(0x80 | (cp & 0x3f));
		} else if (cp < 0x80) {
			PUT((char)cp);
		} else if (cp < 0x800) {
			PUT(0xc0 | cp >> 6);
			PUT(0x80 | (cp & 0x3f));
		} else {
			PUT(0xe0 | cp >> 12);
			PUT(0x80 | (cp >> 6 & 0x3f));
			PUT(0x80 | (cp & 0x3f));
		}
	}
	return (long)o;
}
#undef PUT

const char *
pkl_json_str(const struct pkl_reader *r, const struct pkl_value *v,
    size_t *len)
{
	struct pkl_jring *g = r->jring;
	size_t bad, slot;
	const char *why;
	long n;

	*len = 0;
	if (g == NULL || v->v.off > r->len || v->len > r->len - v->v.off)
		return "";
	slot = g->next++ % PKL_JSON_RING;
	if (g->cap[slot] < (size_t)v->len + 1) {
		g->cap[slot] = (size_t)v->len + 1;
		g->buf[slot] = xreallocarray(g->buf[slot], g->cap[slot], 1);
	}
	/* checked when it was read; "" if the file changed since */
	n = unescape(r->buf + v->v.off, v->len, g->buf[slot], &bad, &why);
	if (n < 0)
		return "";
	*len = (size_t)n;
	return g->buf[slot];
}

/* Any string value's text: a pointer into the input, or decoded. */
static const char *
str_any(const struct pkl_reader *r, const struct pkl_value *v, size_t *len)
{
	if (v->flags & F_JSON_ESC)
		return pkl_json_str(r, v, len);
	if (v->v.off > r->len || v->len > r->len - v->v.off) {
		*len = 0;
		return "";
	}
	*len = v->len;
	return (const char *)r->buf + v->v.off;
}

/* ---- errors and offsets -------------------------------------------------- */

static int
fail(struct jparse *J, enum sv_errcode code, uint64_t off, const char *fmt,
    ...) __attribute__((format(printf, 4, 5)));

static int
fail(struct jparse *J, enum sv_errcode code, uint64_t off, const char *fmt,
    ...)
{
	va_list ap;

	va_start(ap, fmt);
	sv_error_vset(J->err, code, off, fmt, ap);
	va_end(ap);
	J->failed = 1;
	return 0; /* stops yajl */
}

/* At each callback: the token's last byte is the offset errors name;
 * the sink hears of the progress every PROGRESS_STEP bytes. */
static int
at_token(struct jparse *J)
{
	size_t end = yajl_get_bytes_consumed(J->h);
	struct pkl_reader *r = J->r;

	r->op_pos = end > 0 ? end - 1 : 0;
	if (end >= J->next_progress) {
		J->next_progress = end + PROGRESS_STEP;
		if (r->sink->progress != NULL &&
		    r->sink->progress(r->ctx, end) != 0) {
			fail(J, SV_ERR_CANCELLED, end, "cancelled");
			return -1;
		}
	}
	return 0;
}

/* ---- values into containers ---------------------------------------------- */

static void
cont_push1(struct cont *c, const struct pkl_value *v)
{
	pkl_cont_push_run(c, v, 1);
	if (is_cont(v))
		c->n_cont++;
}

/* The container of the innermost open frame. */
static struct cont *
top_cont(struct jparse *J)
{
	return cont_of(J->r, &J->fr[J->n_fr - 1].cont);
}

/* A scalar (or an id) v as the next item of the innermost container. */
static void
put_value(struct jparse *J, const struct pkl_value *v)
{
	struct jframe *f = &J->fr[J->n_fr - 1];
	struct cont *c = top_cont(J);

	if (c->kind == PKL_DICT) {
		cont_push1(c, &f->key);
		memset(&f->key, 0, sizeof f->key);
	}
	cont_push1(c, v);
	c->count++;
}

static int
scalar(struct jparse *J, const struct pkl_value *v)
{
	if (at_token(J) != 0)
		return 0;
	if (J->n_fr == 0)	/* cannot be: the input starts with { or [ */
		return fail(J, SV_ERR_FORMAT, J->r->op_pos,
		    "not a memory snapshot: the top level is not a dict or "
		    "a list");
	put_value(J, v);
	J->prev_end = yajl_get_bytes_consumed(J->h);
	return 1;
}

static int
cb_null(void *ctx)
{
	struct pkl_value v;

	memset(&v, 0, sizeof v);
	v.kind = PKL_NONE;
	return scalar(ctx, &v);
}

static int
cb_boolean(void *ctx, int b)
{
	struct pkl_value v;

	memset(&v, 0, sizeof v);
	v.kind = PKL_BOOL;
	v.v.u = b != 0;
	return scalar(ctx, &v);
}

/* A number with a fraction or an exponent (s, n characters). */
static int
number_float(struct jparse *J, const char *s, size_t n,
    struct pkl_value *v)
{
	const char *dp = localeconv()->decimal_point;
	char buf[JSON_NUM_MAX + 8];
	double f;
	size_t i;

	if (n > JSON_NUM_MAX)
		return fail(J, SV_ERR_LIMIT, J->r->op_pos,
		    "a number of more than %d characters", JSON_NUM_MAX);
	/* strtod() reads the locale's decimal point, which the viewer
	 * sets from the environment */
	for (i = 0; i < n; i++)
		buf[i] = s[i] == '.' && dp != NULL && dp[0] != '\0' &&
		    dp[1] == '\0' ? dp[0] : s[i];
	buf[n] = '\0';
	f = strtod(buf, NULL);
	if (isfinite(f) && f == trunc(f) && fabs(f) <= 9007199254740992.0) {
		v->kind = PKL_INT;
		v->v.i = (int64_t)f;
	} else {
		v->kind = PKL_FLOAT;
		v->v.f = f;
	}
	return 1;
}

static int
cb_number(void *ctx, const char *s, size_t n)
{
	struct jparse *J = ctx;
	struct pkl_value v;
	uint64_t u = 0;
	size_t i;
	int neg, wide = 0;

	memset(&v, 0, sizeof v);
	if (at_token(J) != 0)
		return 0;
	if (n == 0)
		return fail(J, SV_ERR_FORMAT, J->r->op_pos, "an empty number");
	if (memchr(s, '.', n) != NULL || memchr(s, 'e', n) != NULL ||
	    memchr(s, 'E', n) != NULL) {
		if (number_float(J, s, n, &v) == 0)
			return 0;
		return scalar(J, &v);
	}
	neg = s[0] == '-';
	for (i = (size_t)neg; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (d > 9)
			return fail(J, SV_ERR_FORMAT, J->r->op_pos,
			    "a malformed number");
		if (u > (UINT64_MAX - d) / 10)
			wide = 1;
		else
			u = u * 10 + d;
	}
	v.kind = PKL_INT;
	if (wide || (neg && u > (uint64_t)INT64_MAX + 1)) {
		v.kind = PKL_BIGINT;	/* as the pickle VM gives it */
		v.v.i = neg ? -1 : 1;
	} else if (neg) {
		v.v.u = u == (uint64_t)INT64_MAX + 1 ? (uint64_t)INT64_MIN :
		    (uint64_t)-(int64_t)u;
	} else {
		v.v.u = u;
		if (u > (uint64_t)INT64_MAX)
			v.flags = PKL_F_UNSIGNED;
	}
	return scalar(J, &v);
}

/* v (a string of at most CANON_MAX bytes at s) at the offset of the
 * table's copy of its text, or made the table's copy. */
static void
canonical(struct jparse *J, const char *s, struct pkl_value *v)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ v->len;
	struct canon *c;
	uint32_t i;

	for (i = 0; i < v->len; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001B3ull;
	c = &J->canon[(h * 0x9E3779B97F4A7C15ull) >> (64 - CANON_BITS)];
	if (c->off1 != 0 && c->len == v->len &&
	    (v->len == 0 || memcmp(c->text, s, v->len) == 0)) {
		v->v.off = c->off1 - 1;
		return;
	}
	c->off1 = v->v.off + 1;
	c->len = v->len;
	if (v->len > 0)
		memcpy(c->text, s, v->len);
}

/*
 * A string's value: s (n bytes) is yajl's, a pointer into the input when
 * the string had no escape; else its raw text is found after the token
 * before it and checked.
 */
static int
string_value(struct jparse *J, const unsigned char *s, size_t n,
    struct pkl_value *v)
{
	struct pkl_reader *r = J->r;
	size_t end = yajl_get_bytes_consumed(J->h), i, bad;
	const char *why;
	long dn;

	memset(v, 0, sizeof *v);
	v->kind = PKL_STR;
	if (n > UINT32_MAX)
		return fail(J, SV_ERR_LIMIT, r->op_pos,
		    "string longer than 4 GiB");
	if ((uintptr_t)s >= (uintptr_t)r->buf &&
	    (uintptr_t)s - (uintptr_t)r->buf <= r->len &&
	    n <= r->len - ((uintptr_t)s - (uintptr_t)r->buf)) {
		v->v.off = (uint64_t)((uintptr_t)s - (uintptr_t)r->buf);
		v->len = (uint32_t)n;
		if (n <= CANON_MAX)
			canonical(J, (const char *)s, v);
		return 1;
	}
	/* with escapes: from the end of the previous token, past blanks,
	 * commas and colons, to the opening quote; the closing one ends
	 * the token */
	i = J->prev_end;
	while (i < end && r->buf[i] != '"')
		i++;
	if (i >= end || end - i < 2 || r->buf[end - 1] != '"')
		return fail(J, SV_ERR_FORMAT, r->op_pos,
		    "a string that cannot be found in the input");
	if (end - i - 2 > UINT32_MAX)
		return fail(J, SV_ERR_LIMIT, i, "string longer than 4 GiB");
	v->v.off = i + 1;
	v->len = (uint32_t)(end - i - 2);
	v->flags = F_JSON_ESC;
	dn = unescape(r->buf + v->v.off, v->len, NULL, &bad, &why);
	if (dn < 0)
		return fail(J, SV_ERR_FORMAT, v->v.off + bad,
		    "a string with %s", why);
	return 1;
}

static int
cb_string(void *ctx, const unsigned char *s, size_t n)
{
	struct jparse *J = ctx;
	struct pkl_value v;

	if (at_token(J) != 0 || string_value(J, s, n, &v) == 0)
		return 0;
	return scalar(J, &v);
}

/* Whether keys a and b of one object hold the same text. */
static int
same_key(const struct pkl_reader *r, const struct pkl_value *a,
    const struct pkl_value *b)
{
	const char *pa, *pb;
	size_t la, lb;

	if (!(a->flags & F_JSON_ESC) && !(b->flags & F_JSON_ESC)) {
		if (a->len != b->len)
			return 0;
		if (a->v.off == b->v.off)
			return 1;
	}
	pa = str_any(r, a, &la);
	pb = str_any(r, b, &lb);
	return la == lb && (la == 0 || memcmp(pa, pb, la) == 0);
}

/* key, printable, into buf (for the message of a repeated key). */
static void
key_text(const struct pkl_reader *r, const struct pkl_value *k, char *buf,
    size_t size)
{
	size_t n, i, o = 0;
	const char *p = str_any(r, k, &n);

	for (i = 0; i < n && o + 4 < size; i++)
		buf[o++] = p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '?';
	if (i < n)
		buf[o++] = '.', buf[o++] = '.', buf[o++] = '.';
	buf[o] = '\0';
}

static int
cb_map_key(void *ctx, const unsigned char *s, size_t n)
{
	struct jparse *J = ctx;
	struct jframe *f = &J->fr[J->n_fr - 1];
	struct cont *c = top_cont(J);
	struct pkl_value k;
	size_t i;

	if (at_token(J) != 0 || string_value(J, s, n, &k) == 0)
		return 0;
	for (i = 0; i + 1 < c->n && i < 2 * JSON_DUP_KEYS; i += 2)
		if (same_key(J->r, &c->items[i], &k)) {
			char t[48];

			key_text(J->r, &k, t, sizeof t);
			return fail(J, SV_ERR_FORMAT, J->r->op_pos,
			    "the key \"%s\" twice in one object", t);
		}
	f->key = k;
	J->prev_end = yajl_get_bytes_consumed(J->h);
	return 1;
}

/* ---- containers ---------------------------------------------------------- */

static int
open_cont(struct jparse *J, uint8_t kind)
{
	struct pkl_reader *r = J->r;
	const struct pkl_value *key = NULL;
	uint64_t index = 0;
	uint8_t pcls = 0, cls;

	if (at_token(J) != 0)
		return 0;
	if (J->n_fr >= PKL_JSON_DEPTH)
		return fail(J, SV_ERR_LIMIT, r->op_pos,
		    "objects and arrays nested deeper than %d",
		    PKL_JSON_DEPTH);
	if (J->n_fr > 0) {
		struct cont *pc = top_cont(J);

		pcls = pc->cls;
		if (pc->kind == PKL_DICT)
			key = &J->fr[J->n_fr - 1].key;
		else
			index = pc->count;
	}
	cls = r->sink->classify(r->ctx, r, pcls, key, index, kind);
	XGROW(J->fr, J->cap_fr, J->n_fr + 1);
	J->fr[J->n_fr].cont = pkl_cont_new(r, kind, cls);
	memset(&J->fr[J->n_fr].key, 0, sizeof J->fr[J->n_fr].key);
	J->n_fr++;
	J->prev_end = yajl_get_bytes_consumed(J->h);
	return 1;
}

static int
cb_start_map(void *ctx)
{
	return open_cont(ctx, PKL_DICT);
}

static int
cb_start_array(void *ctx)
{
	return open_cont(ctx, PKL_LIST);
}

static int
is_record_class(const struct pkl_reader *r, uint8_t cls)
{
	return r->sink->take_record != NULL && cls < 32 &&
	       (r->sink->record_classes >> cls & 1);
}

/*
 * The child just closed (one reference, the frame's) goes to its parent
 * (the innermost open frame; none: the root), as the pickle VM's
 * APPEND(S) and SETITEM(S) give it: the sink takes it, keeps it, or
 * makes it an id. A list counts the child before the sink sees it, a
 * dict after, as there.
 */
static int
give(struct jparse *J, struct pkl_value *child)
{
	struct pkl_reader *r = J->r;
	struct cont *c = cont_of(r, child), *pc = NULL;
	struct pkl_value *parent = NULL, *key = NULL, none;
	uint64_t id = 0, index = 0;
	uint8_t id_cls = 0, pcls = 0;
	int t;

	memset(&none, 0, sizeof none);
	if (J->n_fr > 0) {
		struct jframe *f = &J->fr[J->n_fr - 1];

		parent = &f->cont;
		pc = cont_of(r, parent);
		pcls = pc->cls;
		if (pc->kind == PKL_DICT) {
			key = &f->key;
			cont_push1(pc, key);
		} else {
			index = pc->count++;
		}
	}
	if (child->kind == PKL_DICT && is_record_class(r, child->cls) &&
	    parent != NULL) {
		if (r->sink->take_record(r->ctx, r, child->cls, c->items,
		    c->n / 2, J->err) != 0)
			goto failed;
		pkl_consume(r, c, child, PKL_DROP, 0, 0);
		pkl_decref(r, child);
		set_taken(&none);
		t = PKL_DROP;
		goto stored;
	}
	t = r->sink->take(r->ctx, r, pcls, parent, key, index, child, &id,
	    &id_cls, J->err);
	if (t < 0)
		goto failed;
	if (t == PKL_KEEP && pc != NULL) {
		cont_push1(pc, child);
		goto counted;
	}
	if (t == PKL_KEEP || t == PKL_SKIP) {
		pkl_decref(r, child);
	} else {
		pkl_consume(r, c, child, t, id, id_cls);
		pkl_decref(r, child);
	}
stored:
	if (pc != NULL) {
		pc = cont_of(r, parent);
		if (t == PKL_ID_REPLACE) {
			none.kind = PKL_ID;
			none.cls = id_cls;
			none.v.id = id;
			cont_push1(pc, &none);
		} else if (pc->kind == PKL_DICT) {
			cont_push1(pc, &none); /* keep the pair shape */
		}
	}
counted:
	if (pc != NULL && pc->kind == PKL_DICT) {
		pc->count++;
		memset(key, 0, sizeof *key);
	}
	return 1;
failed:
	if (J->err != NULL && J->err->offset == SV_NO_OFFSET)
		J->err->offset = r->op_pos;
	pkl_decref(r, child);
	J->failed = 1;
	return 0;
}

static int
close_cont(struct jparse *J)
{
	struct pkl_value child;

	if (at_token(J) != 0)
		return 0;
	child = J->fr[--J->n_fr].cont;
	if (J->n_fr == 0)
		J->root_done = 1;
	if (give(J, &child) == 0)
		return 0;
	J->prev_end = yajl_get_bytes_consumed(J->h);
	return 1;
}

static int
cb_end(void *ctx)
{
	return close_cont(ctx);
}

static const yajl_callbacks callbacks = {
	cb_null, cb_boolean, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_map_key, cb_end, cb_start_array, cb_end
};

/* yajl's message (one line, its trailing blanks cut) into err. */
static void
yajl_message(struct jparse *J, const uint8_t *buf, size_t len)
{
	unsigned char *m = yajl_get_error(J->h, 0, buf, len);
	size_t n, at = yajl_get_bytes_consumed(J->h);

	if (m == NULL) {
		sv_error_set(J->err, SV_ERR_FORMAT, at, "not valid JSON");
		return;
	}
	n = strcspn((char *)m, "\n");
	while (n > 0 && (m[n - 1] == ' ' || m[n - 1] == '.'))
		n--;
	sv_error_set(J->err, SV_ERR_FORMAT, at, "not valid JSON: %.*s",
	    (int)n, (char *)m);
	yajl_free_error(J->h, m);
}

int
pkl_json_parse(struct pkl_reader *r, struct sv_error *err)
{
	struct jparse J;
	yajl_status st;
	int rc = -1, eof = 0;
	size_t i;

	memset(&J, 0, sizeof J);
	J.r = r;
	J.err = err;
	J.next_progress = PROGRESS_STEP;
	r->jring = xcalloc(1, sizeof *r->jring);
	J.canon = xcalloc((size_t)1 << CANON_BITS, sizeof *J.canon);
	J.h = yajl_alloc(&callbacks, NULL, &J);
	st = yajl_parse(J.h, r->buf, r->len);
	if (st == yajl_status_ok) {
		st = yajl_complete_parse(J.h);
		/* all of it read, and no error but that it stops short */
		eof = st == yajl_status_error && !J.failed;
	}
	if (st == yajl_status_ok && J.root_done) {
		r->pos = r->len;
		rc = 0;
	} else if (J.failed) {
		/* err set by a callback */
	} else if (eof) {
		sv_error_set(err, SV_ERR_FORMAT, r->len, "%s: the JSON ends "
		    "with %zu %s still open", PKL_CUT_OFF, J.n_fr,
		    J.n_fr == 1 ? "object or array" : "objects or arrays");
	} else {
		yajl_message(&J, r->buf, r->len);
	}
	yajl_free(J.h);
	for (i = 0; i < J.n_fr; i++)
		pkl_decref(r, &J.fr[i].cont);
	free(J.fr);
	free(J.canon);
	return rc;
}
