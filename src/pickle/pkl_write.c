/*
 * The pickle emitter (pkl_write.h): protocol 4 opcodes, little-endian
 * operands, integers in the smallest form Python's pickler picks.
 */
#include "config.h"

#include "pickle/pkl_write.h"

#include <string.h>

#include "pickle/pkl_ops.h"

static void
op(struct pkl_writer *w, int code)
{
	putc(code, w->f);
}

static void
le(struct pkl_writer *w, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		putc((int)((v >> (8 * i)) & 0xff), w->f);
}

void
pkl_w_init(struct pkl_writer *w, FILE *f)
{
	w->f = f;
	w->memo = 0;
}

void
pkl_w_proto(struct pkl_writer *w)
{
	op(w, PKL_OP_PROTO);
	putc(4, w->f);
}

void
pkl_w_stop(struct pkl_writer *w)
{
	op(w, PKL_OP_STOP);
}

uint32_t
pkl_w_memoize(struct pkl_writer *w)
{
	op(w, PKL_OP_MEMOIZE);
	return w->memo++;
}

void
pkl_w_get(struct pkl_writer *w, uint32_t memo)
{
	if (memo < 256) {
		op(w, PKL_OP_BINGET);
		putc((int)memo, w->f);
	} else {
		op(w, PKL_OP_LONG_BINGET);
		le(w, memo, 4);
	}
}

void
pkl_w_mark(struct pkl_writer *w)
{
	op(w, PKL_OP_MARK);
}

void
pkl_w_empty_dict(struct pkl_writer *w)
{
	op(w, PKL_OP_EMPTY_DICT);
}

void
pkl_w_empty_list(struct pkl_writer *w)
{
	op(w, PKL_OP_EMPTY_LIST);
}

void
pkl_w_setitems(struct pkl_writer *w)
{
	op(w, PKL_OP_SETITEMS);
}

void
pkl_w_appends(struct pkl_writer *w)
{
	op(w, PKL_OP_APPENDS);
}

void
pkl_w_tuple2(struct pkl_writer *w)
{
	op(w, PKL_OP_TUPLE2);
}

void
pkl_w_str(struct pkl_writer *w, const char *s, size_t len)
{
	if (len < 256) {
		op(w, PKL_OP_SHORT_BINUNICODE);
		putc((int)len, w->f);
	} else if (len <= UINT32_MAX) {
		op(w, PKL_OP_BINUNICODE);
		le(w, len, 4);
	} else {
		op(w, PKL_OP_BINUNICODE8);
		le(w, len, 8);
	}
	if (len > 0)
		fwrite(s, 1, len, w->f);
}

/* LONG1: the shortest little-endian two's complement form of v, the
 * high 64 bits given apart (0 or -1 for an int64, 0 for a uint64). */
static void
long1(struct pkl_writer *w, uint64_t lo, int neg)
{
	unsigned char b[9];
	int n = 0, i;

	for (i = 0; i < 8; i++)
		b[i] = (unsigned char)(lo >> (8 * i));
	b[8] = neg ? 0xff : 0;
	/* drop bytes that only repeat the sign */
	for (n = 9; n > 1; n--) {
		int top = b[n - 1], next = b[n - 2] & 0x80;

		if (!((top == 0 && next == 0) || (top == 0xff && next)))
			break;
	}
	op(w, PKL_OP_LONG1);
	putc(n, w->f);
	fwrite(b, 1, (size_t)n, w->f);
}

void
pkl_w_i64(struct pkl_writer *w, int64_t v)
{
	if (v >= 0 && v < 256) {
		op(w, PKL_OP_BININT1);
		putc((int)v, w->f);
	} else if (v >= 0 && v < 65536) {
		op(w, PKL_OP_BININT2);
		le(w, (uint64_t)v, 2);
	} else if (v >= INT32_MIN && v <= INT32_MAX) {
		op(w, PKL_OP_BININT);
		le(w, (uint64_t)(uint32_t)(int32_t)v, 4);
	} else
		long1(w, (uint64_t)v, v < 0);
}

void
pkl_w_u64(struct pkl_writer *w, uint64_t v)
{
	if (v <= INT32_MAX)
		pkl_w_i64(w, (int64_t)v);
	else
		long1(w, v, 0);
}

void
pkl_w_double(struct pkl_writer *w, double v)
{
	uint64_t bits;
	int i;

	memcpy(&bits, &v, sizeof bits);
	op(w, PKL_OP_BINFLOAT);
	for (i = 7; i >= 0; i--)	/* big-endian */
		putc((int)((bits >> (8 * i)) & 0xff), w->f);
}

void
pkl_w_bool(struct pkl_writer *w, int v)
{
	op(w, v ? PKL_OP_NEWTRUE : PKL_OP_NEWFALSE);
}

void
pkl_w_none(struct pkl_writer *w)
{
	op(w, PKL_OP_NONE);
}
