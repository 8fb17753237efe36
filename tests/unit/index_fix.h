#ifndef SNAPVIEW_INDEX_FIX_H
#define SNAPVIEW_INDEX_FIX_H
/*
 * What the index's unit tests share (check_index.c and the
 * check_index_*.c files it runs): a temporary directory per test with the
 * cache inside it (setup(), teardown(), tpath()), files, builder-made
 * snapshots, a loader that counts its loads, and the comparisons of an
 * index with the direct loader. Each check_index_*.c file adds its
 * tests to the one test case with the function declared last here.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <msgpack.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>
#include "index/idx.h"
#include "index/idx_format.h"
#include "snapshot/snap_stripe.h"
#include "snapshot/snap_load.h"
#include "util/xalloc.h"

/* Collected warnings. */
struct warns {
	int n;
	char last[512];
	char all[4096];
};

/* A section of an index's TOC (read_toc()). */
struct tsec {
	char name[64];
	uint64_t off, len;
};

extern char tmpdir[256];
void rm_rf(const char *path);
void setup(void);
void teardown(void);
char *tpath(const char *name);
void write_file(const char *path, const void *data, size_t n);
uint8_t *read_file(const char *path, size_t *n);
void copy_file(const char *from, const char *to);
int exists(const char *path);
/* A builder-made snapshot: two devices, address reuse, a free without
 * alloc, segments, ghosts, times, compile context, annotations. */
struct snapshot *make_snap(uint64_t n_events);
extern uint64_t model_events;
extern int n_loads;
int model_load(const char *path, const struct snap_load_opts *lo,
    struct snapshot **out, struct sv_error *err);
void collect_warn(void *ctx, const char *msg);
void opts_init(struct idx_opts *o, struct warns *w, int model);
struct sv_index *open_ok(const char *src, const struct idx_opts *o);
void assert_same_snapshot(const struct snapshot *a, const struct snapshot *b);
void assert_same_timelines(const struct sv_index *ix,
    const struct snapshot *ref);
void brute(const struct idx_timeline *tl, uint64_t from, uint64_t to,
    struct idx_lod_bucket *b);
/* Builds the index of a fresh copy of a fixture; returns its path. */
char *built_fixture(const char *name, struct idx_opts *o, struct warns *w);
/* Opens src expecting a warning containing what and a rebuild at the
 * beside path. */
void expect_rebuild(const char *src, struct idx_opts *o, struct warns *w,
    const char *what);
/* Reads the TOC of an index file with msgpack (independently of
 * src/index) into out, at most max sections; returns their number. */
int read_toc(const char *ipath, struct tsec *out, int max);
void flip_bit(const char *path, uint64_t off, int bit);
/* Reads every value of every device of ix through the accessors (which
 * decodes every chunk of every stripe). */
void walk_all(const struct sv_index *ix);
/* Sections name (offset, length) of the index at ipath. */
void find_section(const char *ipath, const char *name, uint64_t *off,
    uint64_t *len);
/* The tests of check_index_stale.c. */
void index_stale_tests(TCase *tc);
/* The tests of check_index_build.c. */
void index_build_tests(TCase *tc);
/* The tests of check_index_ext.c. */
void index_ext_tests(TCase *tc);

#endif
