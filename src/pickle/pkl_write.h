#ifndef SNAPVIEW_PICKLE_PKL_WRITE_H
#define SNAPVIEW_PICKLE_PKL_WRITE_H
/*
 * A pickle emitter, protocol 4: the opcodes Python's pickler writes for
 * dicts, lists, tuples, strings, numbers and booleans, in its shapes
 * (EMPTY_DICT MEMOIZE MARK keys and values SETITEMS, lists appended in
 * batches of 1000), so that what it writes reads back in snapview's
 * record fast path and in Python's pickle.load. Objects can be
 * memoized: pkl_w_memoize() returns the memo index of the object just
 * written, pkl_w_get() writes it again by reference.
 *
 * Writes to the FILE * the caller hands it; nothing else is touched.
 * Errors stick in the stream (ferror) and are the caller's to test.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pkl_writer {
	FILE *f;
	uint32_t memo;          /* memo entries so far */
};

void pkl_w_init(struct pkl_writer *w, FILE *f);
void pkl_w_proto(struct pkl_writer *w);  /* PROTO 4 */
void pkl_w_stop(struct pkl_writer *w);   /* STOP */
/* Memoizes the object on top of the stack; returns its memo index. */
uint32_t pkl_w_memoize(struct pkl_writer *w);
void pkl_w_get(struct pkl_writer *w, uint32_t memo);
void pkl_w_mark(struct pkl_writer *w);
void pkl_w_empty_dict(struct pkl_writer *w);
void pkl_w_empty_list(struct pkl_writer *w);
void pkl_w_setitems(struct pkl_writer *w);
void pkl_w_appends(struct pkl_writer *w);
void pkl_w_tuple2(struct pkl_writer *w);
void pkl_w_str(struct pkl_writer *w, const char *s, size_t len);
void pkl_w_i64(struct pkl_writer *w, int64_t v);
void pkl_w_u64(struct pkl_writer *w, uint64_t v);
void pkl_w_double(struct pkl_writer *w, double v);
void pkl_w_bool(struct pkl_writer *w, int v);
void pkl_w_none(struct pkl_writer *w);

#endif
