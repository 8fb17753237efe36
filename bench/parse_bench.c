/*
 * Parse benchmark driver: loads a snapshot (the pickle reader and the
 * schema sink, nothing else) and prints the thread's CPU time, the wall
 * time and the events loaded, so a change to the parse can be measured
 * without the index build around it.
 *
 * With --walk it only reads the file's opcodes and their operands, as
 * the reader must, and does nothing else (no values, containers or
 * memo): the floor under any one-thread parse, to set beside the parse.
 * usage: parse_bench [--walk] FILE [RUNS]
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pickle/pkl_ops.h"
#include "snapshot/snap_load.h"
#include "util/mapfile.h"
#include "util/xalloc.h"

static double
clock_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t
le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Bytes of operand after opcode op at p (len bytes left), or -1. */
static int64_t
operand_len(uint8_t op, const uint8_t *p, size_t len)
{
	int lb;

	switch (op) {
	case PKL_OP_BININT1:
	case PKL_OP_BINGET:
	case PKL_OP_BINPUT:
	case PKL_OP_PROTO:
		return 1;
	case PKL_OP_BININT2:
		return 2;
	case PKL_OP_BININT:
	case PKL_OP_LONG_BINGET:
	case PKL_OP_LONG_BINPUT:
		return 4;
	case PKL_OP_BINFLOAT:
	case PKL_OP_FRAME:
		return 8;
	case PKL_OP_LONG1:
	case PKL_OP_SHORT_BINUNICODE:
	case PKL_OP_SHORT_BINBYTES:
	case PKL_OP_SHORT_BINSTRING:
		lb = 1;
		break;
	case PKL_OP_LONG4:
	case PKL_OP_BINUNICODE:
	case PKL_OP_BINBYTES:
	case PKL_OP_BINSTRING:
		lb = 4;
		break;
	case PKL_OP_BINUNICODE8:
	case PKL_OP_BINBYTES8:
	case PKL_OP_BYTEARRAY8:
		lb = 8;
		break;
	case PKL_OP_MARK:
	case PKL_OP_STOP:
	case PKL_OP_POP:
	case PKL_OP_POP_MARK:
	case PKL_OP_DUP:
	case PKL_OP_NONE:
	case PKL_OP_APPEND:
	case PKL_OP_DICT:
	case PKL_OP_APPENDS:
	case PKL_OP_LIST:
	case PKL_OP_SETITEM:
	case PKL_OP_TUPLE:
	case PKL_OP_SETITEMS:
	case PKL_OP_EMPTY_TUPLE:
	case PKL_OP_EMPTY_LIST:
	case PKL_OP_EMPTY_DICT:
	case PKL_OP_TUPLE1:
	case PKL_OP_TUPLE2:
	case PKL_OP_TUPLE3:
	case PKL_OP_NEWTRUE:
	case PKL_OP_NEWFALSE:
	case PKL_OP_EMPTY_SET:
	case PKL_OP_ADDITEMS:
	case PKL_OP_FROZENSET:
	case PKL_OP_MEMOIZE:
		return 0;
	default:
		return -1; /* text protocols and code: not in a snapshot */
	}
	if (len < (size_t)lb)
		return -1;
	{
		uint64_t n = le(p, lb);

		if (n > len - (size_t)lb)
			return -1;
		return (int64_t)(lb + n);
	}
}

/* The opcode walk of --walk: prints the opcodes and the time per one. */
static int
walk(const char *path, int runs)
{
	struct mapfile m;
	struct sv_error err;
	int i;

	if (mapfile_open(&m, path, &err) != 0) {
		fprintf(stderr, "parse_bench: %s: %s\n", path, err.msg);
		return 1;
	}
	for (i = 0; i < runs; i++) {
		const uint8_t *buf = m.data;
		size_t pos = 0, len = m.len;
		uint64_t ops = 0, marks = 0, memo = 0;
		double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
		double w0 = clock_s(CLOCK_MONOTONIC);
		double c1, w1;

		while (pos < len) {
			uint8_t op = buf[pos++];
			int64_t n = operand_len(op, buf + pos, len - pos);

			if (n < 0) {
				fprintf(stderr, "parse_bench: %s: byte %zu: "
				    "opcode 0x%02x not walked\n", path,
				    pos - 1, op);
				mapfile_close(&m);
				return 1;
			}
			pos += (size_t)n;
			ops++;
			marks += op == PKL_OP_MARK;
			memo += op == PKL_OP_MEMOIZE;
			if (op == PKL_OP_STOP)
				break;
		}
		c1 = clock_s(CLOCK_THREAD_CPUTIME_ID);
		w1 = clock_s(CLOCK_MONOTONIC);
		printf("walk: cpu %.3f s  wall %.3f s  %" PRIu64 " opcodes "
		    "(%" PRIu64 " MARK, %" PRIu64 " MEMOIZE), %.2f ns per "
		    "opcode\n", c1 - c0, w1 - w0, ops, marks, memo,
		    (c1 - c0) * 1e9 / (double)(ops ? ops : 1));
	}
	mapfile_close(&m);
	return 0;
}

int
main(int argc, char **argv)
{
	struct snapshot *s;
	struct sv_error err;
	int runs, i;

	if (argc > 1 && strcmp(argv[1], "--walk") == 0) {
		if (argc < 3) {
			fprintf(stderr,
			    "usage: parse_bench [--walk] FILE [RUNS]\n");
			return 2;
		}
		return walk(argv[2], argc > 3 ? atoi(argv[3]) : 1);
	}
	if (argc < 2) {
		fprintf(stderr, "usage: parse_bench [--walk] FILE [RUNS]\n");
		return 2;
	}
	xalloc_tune(); /* as src/main.c */
	runs = argc > 2 ? atoi(argv[2]) : 1;
	for (i = 0; i < runs; i++) {
		double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
		double w0 = clock_s(CLOCK_MONOTONIC);
		uint64_t ev = 0;
		uint32_t d;

		if (snap_load_file(argv[1], NULL, &s, &err) != 0) {
			fprintf(stderr, "parse_bench: %s\n", err.msg);
			return 1;
		}
		for (d = 0; d < s->n_traces; d++)
			ev += s->traces[d].n;
		printf("parse: cpu %.3f s  wall %.3f s  %" PRIu64 " events\n",
		    clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0,
		    clock_s(CLOCK_MONOTONIC) - w0, ev);
		snap_free(s);
	}
	return 0;
}
