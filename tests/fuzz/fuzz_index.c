/*
 * Fuzz target: the index reader (src/index/idx_map.c). The input is the bytes
 * of an index file for one of three fixed small snapshots
 * (tests/data/fixtures/), written where idx_open() looks for it (under a
 * private --cache-dir), then opened; the resulting snapshot, timelines
 * and level-of-detail pyramid are walked the way the commands and the TUI
 * read them. A rejected index is rebuilt, which is fine; any crash,
 * sanitizer report or leak is a finding.
 *
 * The fixture is the one whose source hash the input names (the header
 * holds it as a msgpack u64), else the first. The source key's mtime is
 * pinned, so the seeds (built by this program, see below) stay valid.
 *
 * Every section, every chunk of a stripe and the header carry a hash, so
 * nearly every mutation would be refused by a hash check. When the header
 * still parses as msgpack, the harness recomputes the chunk hashes of the
 * stripe directories, the section hashes in its TOC, the header hash and
 * the prelude hash (in a copy), so that mutations reach the decoders and
 * the model/timeline views behind them. An input whose header does not
 * parse is opened as it is.
 *
 * SNAPVIEW_FUZZ_INDEX_SEEDS=DIR: write the index of each fixture to
 * DIR/seed-N (how tests/fuzz/corpus/index/ was seeded).
 * SNAPVIEW_FUZZ_INDEX_VERBOSE: say per input whether it was reused.
 */
#include "config.h"

#include <fcntl.h>
#include <msgpack.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "../unit/idx_forge.h"
#include "fuzz.h"
#include "fuzz_files.h"
#include "idx_walk.h"
#include "index/idx.h"
#include "index/idx_format.h"
#include "index/idx_lod.h"
#include "index/idx_timeline.h"
#include "snapshot/snap_stripe.h"
#include "snapshot/snap_model.h"
#include "util/err.h"

#define N_FIX 3
#define MAX_DEVICES 8
#define PINNED_MTIME 1000000000 /* 2001-09-09 */
/* struct idx_devrec (src/index/idx_int.h, private to the index): its
 * size and the places of flags and n_lod, as its abi entry checks them */
#define IDX_DEVREC_SIZE 136
#define IDX_DEVREC_FLAGS 4
#define IDX_DEVREC_N_LOD 128

static const char *const fixtures[N_FIX] = {
	"newest.pickle", "small_p4.pickle", "two_traces.pickle",
};

static char dir[256];
static char src[N_FIX][300];
static char cache[300];
static char *ipath[N_FIX];
static uint64_t src_hash[N_FIX];
static volatile uint64_t sink; /* keeps walk() from being optimised out */

static void
cleanup(void)
{
	int i;
	char cmd[400];

	(void)sink;
	for (i = 0; i < N_FIX; i++)
		free(ipath[i]);
	if (dir[0] != '\0') {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "fuzz_index: cannot remove %s\n", dir);
	}
}




static void
opts(struct idx_opts *o)
{
	memset(o, 0, sizeof *o);
	o->cache_dir = cache;
	o->warn = fuzz_quiet;
}

static void
setup(void)
{
	const char *tmp = getenv("TMPDIR");
	struct timespec ts[2];
	struct sv_error err;
	int i;

	snprintf(dir, sizeof dir, "%s/fuzz_index.XXXXXX",
	    tmp != NULL ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL)
		abort();
	atexit(cleanup);
	snprintf(cache, sizeof cache, "%s/cache", dir);
	if (mkdir(cache, 0700) != 0)
		abort();
	ts[0].tv_sec = ts[1].tv_sec = PINNED_MTIME;
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	for (i = 0; i < N_FIX; i++) {
		char from[1024];
		uint8_t *b;
		size_t n;

		snprintf(from, sizeof from, "%s/tests/data/fixtures/%s",
		    TOP_SRCDIR, fixtures[i]);
		b = fuzz_slurp(from, &n);
		snprintf(src[i], sizeof src[i], "%s/%s", dir, fixtures[i]);
		fuzz_put(src[i], b, n);
		if (utimensat(AT_FDCWD, src[i], ts, 0) != 0)
			abort();
		src_hash[i] = XXH3_64bits(b, n);
		free(b);
		if (idx_path_cache(src[i], cache, &ipath[i], &err) != 0)
			abort();
	}
}

/* The forgeries of doc/SECURITY.md's second review, made from the index
 * of fixture i (its checksums made right): TOC entries aliasing one
 * section, a raw length of 2^62, stripes sharing one payload, every
 * device made WRAP (no pyramid, exact sums). */
static void
write_forged(const char *out, int i)
{
	struct forge fg;
	struct forge_sec *t, copy;
	char to[1024], name[32];
	uint64_t off, len;
	int k;

	forge_load(&fg, ipath[i]);
	for (k = 0; k < 64; k++) {
		copy = *forge_find(&fg, IDX_SEC_STRS_DATA);
		snprintf(name, sizeof name, "x.alias%d", k);
		t = forge_add(&fg, name);
		*t = copy;
		snprintf(t->name, sizeof t->name, "%s", name);
	}
	snprintf(to, sizeof to, "%s/forged-alias-%d", out, i);
	forge_write(&fg, to);
	forge_free(&fg);

	forge_load(&fg, ipath[i]);
	forge_find(&fg, IDX_SEC_STACK_FRAMES)->raw = (uint64_t)1 << 62;
	snprintf(to, sizeof to, "%s/forged-raw-%d", out, i);
	forge_write(&fg, to);
	forge_free(&fg);

	forge_load(&fg, ipath[i]);
	t = forge_find(&fg, IDX_SEC_EVDIR);
	off = t->off;
	len = t->len;
	for (k = 1; (uint64_t)(k + 1) * sizeof(struct snap_stripedir) <= len;
	    k++)
		memcpy(fg.f + off +
		    (uint64_t)k * sizeof(struct snap_stripedir) +
		    offsetof(struct snap_stripedir, off), fg.f + off +
		    offsetof(struct snap_stripedir, off), 8);
	snprintf(to, sizeof to, "%s/forged-shared-%d", out, i);
	forge_write(&fg, to);
	forge_free(&fg);

	forge_load(&fg, ipath[i]);
	t = forge_find(&fg, IDX_SEC_DEVICES);
	for (off = 0; off + IDX_DEVREC_SIZE <= t->len;
	    off += IDX_DEVREC_SIZE) {
		uint8_t *rec = fg.f + t->off + off;

		rec[IDX_DEVREC_FLAGS + 1] |= 0x01;	/* IDX_DEV_WRAP */
		memset(rec + IDX_DEVREC_N_LOD, 0, 8);
	}
	snprintf(to, sizeof to, "%s/forged-wrap-%d", out, i);
	forge_write(&fg, to);
	forge_free(&fg);
}

static void
write_seeds(const char *out)
{
	int i;

	for (i = 0; i < N_FIX; i++) {
		struct idx_opts o;
		struct sv_index *ix;
		struct sv_error err;
		char to[1024];
		uint8_t *b;
		size_t n;

		opts(&o);
		o.force_rebuild = 1;
		if (idx_open(src[i], &o, &ix, &err) != 0) {
			fprintf(stderr, "fuzz_index: %s: %s\n", src[i],
			    err.msg);
			abort();
		}
		idx_close(ix);
		b = fuzz_slurp(ipath[i], &n);
		snprintf(to, sizeof to, "%s/seed-%d", out, i);
		fuzz_put(to, b, n);
		free(b);
		write_forged(out, i);
	}
}

static uint64_t
rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void
wr64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* The fixture whose source hash the input holds as a msgpack u64. */
static int
pick_fixture(const uint8_t *d, size_t n)
{
	int i;
	size_t j;

	for (i = 0; i < N_FIX; i++) {
		uint8_t pat[9];
		int k;

		pat[0] = 0xcf;
		for (k = 0; k < 8; k++)
			pat[1 + k] = (uint8_t)(src_hash[i] >> (56 - 8 * k));
		for (j = 0; j + sizeof pat <= n; j++)
			if (d[j] == 0xcf && memcmp(d + j, pat, sizeof pat) == 0)
				return i;
	}
	return 0;
}

/* The TOC entry named name (offset and length inside n bytes), or -1. */
static int
toc_entry(const msgpack_object *toc, const char *name, size_t n,
    uint64_t *off, uint64_t *len)
{
	uint32_t i;
	size_t nl = strlen(name);

	for (i = 0; toc != NULL && i < toc->via.array.size; i++) {
		const msgpack_object *e = &toc->via.array.ptr[i];

		if (e->type != MSGPACK_OBJECT_ARRAY || e->via.array.size < 6 ||
		    e->via.array.ptr[0].type != MSGPACK_OBJECT_STR ||
		    e->via.array.ptr[0].via.str.size != nl ||
		    memcmp(e->via.array.ptr[0].via.str.ptr, name, nl) != 0 ||
		    e->via.array.ptr[1].type !=
		    MSGPACK_OBJECT_POSITIVE_INTEGER ||
		    e->via.array.ptr[2].type !=
		    MSGPACK_OBJECT_POSITIVE_INTEGER)
			continue;
		*off = e->via.array.ptr[1].via.u64;
		*len = e->via.array.ptr[2].via.u64;
		return *off <= n && *len <= n - *off ? 0 : -1;
	}
	return -1;
}

/* Makes the chunk hashes of the stripe directories in d (a copy) right,
 * so that mutated column data reaches the stripe decoders. */
static void
fix_chunks(uint8_t *d, size_t n, const msgpack_object *toc)
{
	static const char *const dirs[2] = {IDX_SEC_EVDIR, IDX_SEC_ELDIR};
	uint64_t cd_off, cd_len, off, len, b;
	int k;

	if (toc_entry(toc, IDX_SEC_COLDATA, n, &cd_off, &cd_len) != 0)
		return;
	for (k = 0; k < 2; k++) {
		if (toc_entry(toc, dirs[k], n, &off, &len) != 0)
			continue;
		for (b = 0; b + 1 <= len / sizeof(struct snap_stripedir); b++) {
			struct snap_stripedir bd;
			uint64_t at;
			unsigned c;

			memcpy(&bd, d + off + b * sizeof bd, sizeof bd);
			if (bd.off > cd_len)
				continue;
			at = cd_off + bd.off;
			for (c = 0; c < SNAP_STRIPE_NCHUNK; c++) {
				if (bd.clen[c] > n - at)
					break;
				bd.chash[c] = snap_chunk_hash(d + at,
				    bd.clen[c]);
				at += bd.clen[c];
			}
			memcpy(d + off + b * sizeof bd, &bd, sizeof bd);
		}
	}
}

/* A copy of d with the chunk, TOC, header and prelude hashes made right,
 * or NULL when the header cannot be found or parsed. */
static uint8_t *
fix_hashes(const uint8_t *d, size_t n, size_t *out_n)
{
	uint64_t hoff, hlen;
	msgpack_unpacked res;
	msgpack_sbuffer sb;
	msgpack_packer pk;
	const msgpack_object *root, *toc = NULL;
	uint8_t *out = NULL, *work;
	size_t off = 0;
	uint32_t i;

	if (n < IDX_PRELUDE_LEN)
		return NULL;
	hoff = rd64(d + IDX_OFF_HEADER_OFF);
	hlen = rd64(d + IDX_OFF_HEADER_LEN);
	if (hoff < IDX_PRELUDE_LEN || hoff > n || hlen > n - hoff)
		return NULL;
	if (idx_mp_bounded(d + hoff, hlen) != 0)
		return NULL;
	msgpack_unpacked_init(&res);
	if (msgpack_unpack_next(&res, (const char *)d + hoff, hlen, &off) !=
	    MSGPACK_UNPACK_SUCCESS) {
		msgpack_unpacked_destroy(&res);
		return NULL;
	}
	root = &res.data;
	if (root->type == MSGPACK_OBJECT_MAP)
		for (i = 0; i < root->via.map.size; i++) {
			const msgpack_object_kv *kv = &root->via.map.ptr[i];

			if (kv->key.type == MSGPACK_OBJECT_STR &&
			    kv->key.via.str.size == 3 &&
			    memcmp(kv->key.via.str.ptr, "toc", 3) == 0 &&
			    kv->val.type == MSGPACK_OBJECT_ARRAY)
				toc = &kv->val;
		}
	work = malloc(n);
	if (work == NULL)
		abort();
	memcpy(work, d, n);
	fix_chunks(work, n, toc);
	d = work;
	for (i = 0; toc != NULL && i < toc->via.array.size; i++) {
		msgpack_object *e = &toc->via.array.ptr[i];
		uint64_t so, sl;

		if (e->type != MSGPACK_OBJECT_ARRAY || e->via.array.size < 6 ||
		    e->via.array.ptr[1].type !=
		    MSGPACK_OBJECT_POSITIVE_INTEGER ||
		    e->via.array.ptr[2].type !=
		    MSGPACK_OBJECT_POSITIVE_INTEGER ||
		    e->via.array.ptr[5].type !=
		    MSGPACK_OBJECT_POSITIVE_INTEGER)
			continue;
		so = e->via.array.ptr[1].via.u64;
		sl = e->via.array.ptr[2].via.u64;
		if (so > n || sl > n - so)
			continue;
		e->via.array.ptr[5].via.u64 = XXH3_64bits(d + so, sl);
	}
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_object(&pk, *root);
	msgpack_unpacked_destroy(&res);
	/* the header is rewritten in place when it fits, else appended */
	*out_n = sb.size <= hlen ? n : (size_t)hoff + sb.size;
	if (*out_n < n)
		*out_n = n;
	out = malloc(*out_n);
	if (out == NULL)
		abort();
	memcpy(out, d, n);
	memcpy(out + hoff, sb.data, sb.size);
	wr64(out + IDX_OFF_HEADER_LEN, sb.size);
	wr64(out + IDX_OFF_HEADER_HASH, XXH3_64bits(sb.data, sb.size));
	wr64(out + 40, XXH3_64bits(out, 40));
	msgpack_sbuffer_destroy(&sb);
	free(work);
	return out;
}

static void
open_one(int k, const uint8_t *d, size_t n)
{
	struct idx_opts o;
	struct sv_index *ix = NULL;
	struct sv_error err;

	fuzz_put(ipath[k], d, n);
	opts(&o);
	sv_error_clear(&err);
	if (idx_open(src[k], &o, &ix, &err) != 0) {
		/* the fixture is good: it must open, rebuilt if need be */
		fprintf(stderr, "fuzz_index: %s: %s\n", src[k], err.msg);
		abort();
	}
	sink += idx_walk(ix, MAX_DEVICES, 1);
	if (getenv("SNAPVIEW_FUZZ_INDEX_VERBOSE") != NULL) {
		struct idx_info info;

		idx_get_info(ix, &info);
		fprintf(stderr, "fuzz_index: fixture %d: %s\n", k,
		    info.built ? "rebuilt" : "reused");
	}
	idx_close(ix);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	uint8_t *fixed;
	size_t fixed_n;
	int k;

	if (!ready) {
		const char *seeds = getenv("SNAPVIEW_FUZZ_INDEX_SEEDS");

		setup();
		ready = 1;
		if (seeds != NULL)
			write_seeds(seeds);
	}
	k = pick_fixture(data, size);
	fixed = fix_hashes(data, size, &fixed_n);
	if (fixed != NULL) {
		open_one(k, fixed, fixed_n);
		free(fixed);
	} else {
		open_one(k, data, size);
	}
	return 0;
}
