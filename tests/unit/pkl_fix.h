#ifndef SNAPVIEW_PKL_FIX_H
#define SNAPVIEW_PKL_FIX_H
/*
 * What the pickle reader's unit tests share (check_pickle.c and
 * check_records.c, whose tests of records read whole it runs): a value
 * described as text, and pickles built byte by byte.
 */
#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "pickle/pkl_reader.h"

/* Appends s to the string in buf[size] while it fits. */
void app(char *buf, size_t size, const char *s);
/* Appends v as text (Python's way, ids as #N) to the string in buf. */
void describe(struct pkl_reader *r, const struct pkl_value *v, char *buf,
    size_t size);

/* A pickle being built. */
struct pb {
	uint8_t *b;
	size_t n, cap;
};
void pb_bytes(struct pb *p, const void *s, size_t n);
#define PB_LIT(p, s) pb_bytes((p), (s), sizeof(s) - 1)
void pb_byte(struct pb *p, uint8_t c);
void pb_u32(struct pb *p, uint32_t v);
/* A new string of len copies of c: SHORT_BINUNICODE or BINUNICODE. */
void pb_str(struct pb *p, size_t len, char c);
void pb_put(struct pb *p, uint32_t idx); /* LONG_BINPUT idx, POP */
void pb_get(struct pb *p, uint32_t idx); /* LONG_BINGET idx */
void pb_int(struct pb *p, int32_t v);    /* BININT v */

/* Adds the tests of records read whole (check_records.c) to tc. */
void pkl_records_tests(TCase *tc);

#endif
