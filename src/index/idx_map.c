/*
 * Mapping an index file and validating it (layout in doc/FORMAT.md,
 * constants in idx_format.h): the prelude and header are checked (magic,
 * version, checksums, struct sizes, the source key: size, mtime, XXH3 of
 * its first and last MiB), every section's XXH3 is verified, small LZ4
 * sections are decompressed to the heap and the big columns are used in
 * place. Also the handle's accessors and the helpers the other index
 * files share.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <lz4.h>
#include <msgpack.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "index/idx_int.h"
#include "util/fatal.h"
#include "util/fdio.h"
#include "util/hash.h"
#include "util/tape.h"
#include "util/xalloc.h"

/* ---- small helpers ---------------------------------------------------- */

void
idx_warnf(const struct idx_opts *o, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (o == NULL || o->warn == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	o->warn(o->warn_ctx, buf);
}

/* Big-endian integer of w bytes (msgpack's byte order). */
static uint64_t
be_n(const uint8_t *p, unsigned w)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < w; i++)
		v = v << 8 | p[i];
	return v;
}

/* See idx_format.h. */
int
idx_mp_bounded(const uint8_t *p, size_t len)
{
	uint64_t pending = 1, pos = 0, n, skip;
	unsigned b, w;

	while (pending > 0) {
		if (pos >= len)
			return -1;
		b = p[pos++];
		pending--;
		n = 0;
		skip = 0;
		w = 0;
		if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 ||
		    b == 0xc3)
			continue;
		if (b >= 0x80 && b <= 0x8f)
			n = 2 * (uint64_t)(b & 0x0f);
		else if (b >= 0x90 && b <= 0x9f)
			n = b & 0x0f;
		else if (b >= 0xa0 && b <= 0xbf)
			skip = b & 0x1f;
		else
			switch (b) {
			case 0xc4: case 0xd9: w = 1; break; /* bin8, str8 */
			case 0xc5: case 0xda: w = 2; break;
			case 0xc6: case 0xdb: w = 4; break;
			case 0xc7: w = 1; skip = 1; break;  /* ext: + type */
			case 0xc8: w = 2; skip = 1; break;
			case 0xc9: w = 4; skip = 1; break;
			case 0xca: skip = 4; break;
			case 0xcb: skip = 8; break;
			case 0xcc: case 0xd0: skip = 1; break;
			case 0xcd: case 0xd1: skip = 2; break;
			case 0xce: case 0xd2: skip = 4; break;
			case 0xcf: case 0xd3: skip = 8; break;
			case 0xd4: skip = 2; break;
			case 0xd5: skip = 3; break;
			case 0xd6: skip = 5; break;
			case 0xd7: skip = 9; break;
			case 0xd8: skip = 17; break;
			case 0xdc: case 0xdd: case 0xde: case 0xdf:
				w = b == 0xdc || b == 0xde ? 2 : 4;
				if (w > len - pos)
					return -1;
				n = be_n(p + pos, w);
				if (b >= 0xde)
					n *= 2;
				pos += w;
				w = 0;
				break;
			default:
				return -1; /* 0xc1 */
			}
		if (w > 0) {
			if (w > len - pos)
				return -1;
			skip += be_n(p + pos, w);
			pos += w;
		}
		if (skip > len - pos)
			return -1;
		pos += skip;
		if (n > len - pos || pending + n > len - pos)
			return -1;
		pending += n;
	}
	return 0;
}

static const msgpack_object *
mp_get(const msgpack_object *map, const char *key)
{
	uint32_t i;
	size_t n = strlen(key);

	if (map == NULL || map->type != MSGPACK_OBJECT_MAP)
		return NULL;
	for (i = 0; i < map->via.map.size; i++) {
		const msgpack_object *k = &map->via.map.ptr[i].key;

		if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == n &&
		    memcmp(k->via.str.ptr, key, n) == 0)
			return &map->via.map.ptr[i].val;
	}
	return NULL;
}

static int
mp_u64(const msgpack_object *o, uint64_t *v)
{
	if (o == NULL || o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return -1;
	*v = o->via.u64;
	return 0;
}

static int
mp_key_u64(const msgpack_object *map, const char *key, uint64_t *v)
{
	return mp_u64(mp_get(map, key), v);
}

/* ---- sections ------------------------------------------------------------ */

static int
cmp_toc(const void *a, const void *b)
{
	return strcmp(((const struct toc_ent *)a)->name,
	    ((const struct toc_ent *)b)->name);
}

/* The TOC is sorted by name at open (parse_toc): a lookup is a binary
 * search, whatever a file puts in it. */
static const struct toc_ent *
toc_find(const struct sv_index *ix, const char *name)
{
	struct toc_ent key;

	snprintf(key.name, sizeof key.name, "%s", name);
	return bsearch(&key, ix->toc, ix->n_toc, sizeof *ix->toc, cmp_toc);
}

/* Every unmapping of an index goes through here: a mapping stays
 * registered with util/fatal.h only while it exists. */
static void
unmap(void *p, size_t len)
{
	sv_fatal_unguard(p);
	munmap(p, len);
}

static void
backing_keep(struct idx_backing *b, void *p)
{
	XGROW(b->bufs, b->cap_bufs, b->n_bufs + 1);
	b->bufs[b->n_bufs++] = p;
}

static void
backing_release(struct snapshot *s)
{
	struct idx_backing *b = s->backing;
	size_t i;

	if (b == NULL)
		return;
	for (i = 0; i < b->n_bufs; i++)
		free(b->bufs[i]);
	free(b->bufs);
	if (b->map != NULL)
		unmap(b->map, b->len);
	free(b->mem);
	free(s->traces);
	free(b);
	s->backing = NULL;
}

/* The most raw bytes LZ4 can make of len stored bytes: a match's length
 * grows by 255 per byte, so no LZ4 data, whole or a piece, expands
 * beyond 255 to 1 plus a few bytes of framing; this bound leaves room to
 * spare. A raw length past it is refused before anything is allocated
 * for it. */
static int
raw_possible(const struct toc_ent *t)
{
	if (t->comp == IDX_COMP_NONE)
		return t->raw == t->len;
	return t->len <= (UINT64_MAX - 4096) / 1024 &&
	    t->raw <= t->len * 1024 + 4096 && t->raw <= SIZE_MAX / 2;
}

/* Gives back the pages of [p, p + n) of a file mapping (whole pages
 * only): read once, they need not stay in the process. */
static void
drop_read(const uint8_t *p, uint64_t n)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t lo, hi;

	if (pg <= 0)
		return;
	lo = ((uintptr_t)p + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
	hi = ((uintptr_t)p + (uintptr_t)n) & ~((uintptr_t)pg - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* Is ix's map a file's (not an index image in memory)? */
int
idx_map_is_file(const struct sv_index *ix)
{
	const struct idx_backing *b = ix->snap != NULL ? ix->snap->backing
	    : NULL;

	return b != NULL && b->map != NULL && b->map == ix->map;
}

/* The file's pages given back this many bytes at a time (each madvise()
 * flushes the TLB). */
#define DROP_EVERY (8u << 20)

int
idx_sec_pieces(const uint8_t *map, int file, const struct toc_ent *t,
    int copy, int (*each)(void *ctx, uint64_t at, const uint8_t *piece,
	size_t take, uint32_t rl), void *ctx, int *why_hash)
{
	size_t bound = (size_t)LZ4_compressBound(IDX_LZ4_PIECE) + 8;
	uint8_t *piece = xmalloc(bound);
	const uint8_t *src = map + t->off, *p;
	struct sv_xxh3_stream *h = sv_xxh3_stream_new();
	uint64_t at = 0, done = 0, dropped = 0;
	int bad = h == NULL;

	*why_hash = 0;
	while (h != NULL && at < t->len) {
		uint64_t take = t->len - at < bound ? t->len - at : bound;
		uint32_t sl = 0, rl = 0;

		if (!bad && t->len - at >= 8) {
			memcpy(piece, src + at, 8);
			sl = sv_le32_get(piece);
			rl = sv_le32_get(piece + 4);
			if (sl > t->len - at - 8 || rl == 0 ||
			    rl > IDX_LZ4_PIECE || rl > t->raw - done ||
			    sl > (uint32_t)LZ4_compressBound((int)rl))
				bad = 1;
			else
				take = 8 + (uint64_t)sl;
		} else {
			bad = 1;
		}
		p = src + at;
		if (copy) {
			memcpy(piece, p, (size_t)take);
			p = piece;
		}
		sv_xxh3_stream_update(h, p, (size_t)take);
		if (!bad && each(ctx, at, p, (size_t)take, rl) != 0)
			bad = 1;
		if (!bad)
			done += rl;
		at += take;
		if (file && (at - dropped >= DROP_EVERY || at == t->len)) {
			drop_read(src + dropped, at - dropped);
			dropped = at;
		}
	}
	free(piece);
	if (h == NULL || sv_xxh3_stream_digest(h) != t->hash) {
		*why_hash = h != NULL;
		bad = 1;
	}
	sv_xxh3_stream_free(h);
	return bad || done != t->raw ? -1 : 0;
}

struct unpieces {
	uint8_t *buf;
	uint64_t done;
};

/* idx_sec_pieces()'s each for sec_unpieces: decodes a piece after the
 * ones before it. */
static int
unpiece(void *ctx, uint64_t at, const uint8_t *piece, size_t take,
    uint32_t rl)
{
	struct unpieces *u = ctx;

	(void)at;
	if (LZ4_decompress_safe((const char *)piece + 8,
	    (char *)u->buf + u->done, (int)(take - 8), (int)rl) != (int)rl)
		return -1;
	u->done += rl;
	return 0;
}

/* A section stored in LZ4 pieces (t->comp IDX_COMP_LZ4P), read from map a
 * piece at a time (idx_sec_pieces()): neither the stored section nor
 * (when map is a file's, file) its pages are ever held whole. NULL as
 * sec_unpack says. */
static uint8_t *
sec_unpieces(const uint8_t *map, int file, const struct toc_ent *t,
    int *why_hash)
{
	struct unpieces u;

	u.buf = xmalloc(t->raw ? (size_t)t->raw : 1);
	u.done = 0;
	if (idx_sec_pieces(map, file, t, 1, unpiece, &u, why_hash) != 0) {
		free(u.buf);
		return NULL;
	}
	return u.buf;
}

/* The stored bytes of section t, copied out of map into a heap buffer
 * and hashed there, then decompressed (or, stored as is, kept): a new
 * heap buffer of t->raw bytes, decoded from the very bytes that were
 * hashed, so that whoever may write the mapped file cannot change them
 * between the check and the use. NULL, with *why_hash set to 1 when the
 * hash is wrong (else 0), when it does not check or decode. file: map is
 * a file's mapping (not an index image in memory), whose pages may be
 * given back once read. */
static uint8_t *
sec_unpack(const uint8_t *map, int file, const struct toc_ent *t,
    int *why_hash)
{
	uint8_t *stored, *buf;

	*why_hash = 0;
	if (!raw_possible(t) || t->len > SIZE_MAX / 2)
		return NULL;
	if (t->comp == IDX_COMP_LZ4P)
		return sec_unpieces(map, file, t, why_hash);
	stored = xmalloc(t->len ? (size_t)t->len : 1);
	memcpy(stored, map + t->off, (size_t)t->len);
	if (sv_xxh3(stored, (size_t)t->len) != t->hash) {
		*why_hash = 1;
		free(stored);
		return NULL;
	}
	if (t->comp == IDX_COMP_NONE)
		return stored;
	buf = xmalloc(t->raw ? (size_t)t->raw : 1);
	if (t->comp == IDX_COMP_LZ4 && t->raw <= INT_MAX &&
	    t->len <= INT_MAX && LZ4_decompress_safe((const char *)stored,
		(char *)buf, (int)t->len, (int)t->raw) == (int)t->raw)
		goto done;
	free(buf);
	buf = NULL;
done:
	free(stored);
	return buf;
}

/* Section contents, a private heap copy kept by the backing (never a
 * view into the shared map: see sec_unpack), NULL with *n = 0 when
 * empty. Returns 0, or -1 with why set when the section is missing, does
 * not check or decode, or its length is not a multiple of rec. *n is the
 * record count. */
static int
sec_get(const struct sv_index *ix, struct idx_backing *b, const char *name,
    size_t rec, void **data, uint64_t *n, char *why, size_t wl)
{
	const struct toc_ent *t = toc_find(ix, name);
	uint8_t *buf;
	int bad_hash;

	*data = NULL;
	*n = 0;
	if (t == NULL) {
		snprintf(why, wl, "section %s missing", name);
		return -1;
	}
	if (t->raw % rec != 0 || !raw_possible(t))
		goto bad;
	buf = sec_unpack(ix->map, idx_map_is_file(ix), t, &bad_hash);
	if (buf == NULL) {
		if (bad_hash) {
			snprintf(why, wl, "section %s: checksum mismatch",
			    name);
			return -1;
		}
		goto bad;
	}
	*n = t->raw / rec;
	if (t->raw == 0) {
		free(buf);
		return 0;
	}
	backing_keep(b, buf);
	*data = buf;
	return 0;
bad:
	snprintf(why, wl, "section %s cannot be decoded", name);
	return -1;
}

/* Sections an open reads through the map in place: the column data
 * (every chunk copied and hashed where it is read, snap_stripe_chunk()) and
 * the pyramid, which holds figures only (no count, offset or length):
 * a rewrite of it changes what is drawn, never what memory is read.
 * Every other section is copied (sec_get). */
static int
used_in_place(const char *name)
{
	return strcmp(name, IDX_SEC_COLDATA) == 0 ||
	    strcmp(name, IDX_SEC_LOD) == 0;
}

int
idx_sec_is_ext(const char *name)
{
	return strncmp(name, IDX_SEC_EXT_PREFIX,
	    strlen(IDX_SEC_EXT_PREFIX)) == 0;
}

/* A name of the TOC this reader knows: its sections and x.* */
static int
known_section(const char *name)
{
	static const char *const known[] = {IDX_SEC_COLDATA,
	    IDX_SEC_STRS_DATA, IDX_SEC_STRS_OFF, IDX_SEC_FRAMES,
	    IDX_SEC_STACK_OFF, IDX_SEC_STACK_FRAMES, IDX_SEC_SEGMENTS,
	    IDX_SEC_BLOCKS, IDX_SEC_ANNOTATIONS, IDX_SEC_SETTINGS,
	    IDX_SEC_DEVICES, IDX_SEC_EVDIR, IDX_SEC_ELDIR, IDX_SEC_LATE,
	    IDX_SEC_LOD};
	size_t i;

	if (idx_sec_is_ext(name))
		return 1;
	for (i = 0; i < sizeof known / sizeof known[0]; i++)
		if (strcmp(name, known[i]) == 0)
			return 1;
	return 0;
}

static int
cmp_toc_off(const void *a, const void *b)
{
	const struct toc_ent *x = *(const struct toc_ent *const *)a;
	const struct toc_ent *y = *(const struct toc_ent *const *)b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* 0 when no two sections of the TOC share a byte: each byte of the file
 * is then hashed (and copied) at most once per open, whatever the TOC
 * says. */
static int
toc_disjoint(const struct sv_index *ix)
{
	const struct toc_ent **by = xcalloc(ix->n_toc + 1, sizeof *by);
	size_t i;
	int r = 0;

	for (i = 0; i < ix->n_toc; i++)
		by[i] = &ix->toc[i];
	qsort(by, ix->n_toc, sizeof *by, cmp_toc_off);
	for (i = 1; i < ix->n_toc; i++)
		if (by[i - 1]->off + by[i - 1]->len > by[i]->off)
			r = -1;
	free(by);
	return r;
}

static int
parse_toc(struct sv_index *ix, const msgpack_object *toc, uint64_t data_end,
    char *why, size_t wl)
{
	uint32_t i;

	if (toc == NULL || toc->type != MSGPACK_OBJECT_ARRAY)
		goto bad;
	ix->n_toc = toc->via.array.size;
	ix->toc = xcalloc(ix->n_toc ? ix->n_toc : 1, sizeof *ix->toc);
	for (i = 0; i < toc->via.array.size; i++) {
		const msgpack_object *e = &toc->via.array.ptr[i];
		struct toc_ent *t = &ix->toc[i];
		uint64_t comp;

		if (e->type != MSGPACK_OBJECT_ARRAY || e->via.array.size != 6)
			goto bad;
		e = e->via.array.ptr;
		if (e[0].type != MSGPACK_OBJECT_STR ||
		    e[0].via.str.size >= sizeof t->name ||
		    memchr(e[0].via.str.ptr, '\0', e[0].via.str.size) != NULL)
			goto bad;
		memcpy(t->name, e[0].via.str.ptr, e[0].via.str.size);
		t->name[e[0].via.str.size] = '\0';
		if (mp_u64(&e[1], &t->off) || mp_u64(&e[2], &t->len) ||
		    mp_u64(&e[3], &t->raw) || mp_u64(&e[4], &comp) ||
		    mp_u64(&e[5], &t->hash) || comp > IDX_COMP_LZ4P)
			goto bad;
		t->comp = (uint32_t)comp;
		if (t->off < IDX_PRELUDE_LEN || t->off % IDX_ALIGN != 0 ||
		    t->off > data_end || t->len > data_end - t->off) {
			snprintf(why, wl, "section %s lies outside the file",
			    t->name);
			return -1;
		}
		if (!known_section(t->name))
			goto bad;
	}
	qsort(ix->toc, ix->n_toc, sizeof *ix->toc, cmp_toc);
	for (i = 1; i < ix->n_toc; i++)
		if (strcmp(ix->toc[i - 1].name, ix->toc[i].name) == 0)
			goto bad;
	if (toc_disjoint(ix) != 0) {
		snprintf(why, wl, "sections overlap");
		return -1;
	}
	return 0;
bad:
	snprintf(why, wl, "bad table of contents");
	return -1;
}

/* XXH3 of a stored section: through the map when small or when fd < 0,
 * else through pread into a small buffer, so that a full check does not
 * fault in (and keep resident) every page of the file. */
static uint64_t
sec_hash(const struct sv_index *ix, int fd, const struct toc_ent *t)
{
	size_t bufsz = 1u << 20;
	uint8_t *buf;
	XXH3_state_t *h;
	uint64_t done, got;

	if (t->len <= bufsz || fd < 0)
		return sv_xxh3(ix->map + t->off, t->len);
	buf = xmalloc(bufsz);
	h = XXH3_createState();
	XXH3_64bits_reset(h);
	for (done = 0; done < t->len; done += bufsz) {
		size_t n = t->len - done < bufsz ? (size_t)(t->len - done)
		    : bufsz;

		if (sv_pread_all(fd, buf, n, t->off + done) != 0)
			break;
		XXH3_64bits_update(h, buf, n);
	}
	got = done >= t->len ? XXH3_64bits_digest(h) : ~t->hash;
	XXH3_freeState(h);
	free(buf);
	return got;
}

/* Hands back the pages of the map wholly inside t: what they hold stays
 * in the page cache, and a later read maps it again. */
static void
sec_unmap_pages(const struct sv_index *ix, const struct toc_ent *t)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)(ix->map + t->off);
	uintptr_t hi = lo + t->len;

	lo = (lo + pg - 1) & ~(pg - 1);
	hi &= ~(pg - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* Verifies the XXH3 of the sections that are not copied at open (those
 * are hashed as they are copied, sec_get): QUICK, the pyramid, through
 * the map, whose pages then go back (a reopen keeps no more of it
 * resident than through pread); FULL, the column data and the extension
 * sections too, through pread. A quick open checks the column data chunk
 * by chunk as it is read, and an extension section when first used. */
static int
check_sections(const struct sv_index *ix, int fd, int quick, char *why,
    size_t wl)
{
	size_t i;

	for (i = 0; i < ix->n_toc; i++) {
		const struct toc_ent *t = &ix->toc[i];

		if (!used_in_place(t->name) && !idx_sec_is_ext(t->name))
			continue;
		if (quick && strcmp(t->name, IDX_SEC_LOD) != 0)
			continue;
		if (sec_hash(ix, quick ? -1 : fd, t) != t->hash) {
			snprintf(why, wl, "section %s: checksum mismatch",
			    t->name);
			return -1;
		}
		if (quick && fd >= 0)
			sec_unmap_pages(ix, t);
	}
	return 0;
}

static int
check_abi(const msgpack_object *abi)
{
	static const uint64_t want[] = {IDX_ENDIAN_MARK,
	    sizeof(struct snap_frame), sizeof(struct snap_segment),
	    sizeof(struct snap_block), sizeof(struct snap_annotation),
	    sizeof(struct snap_setting), sizeof(struct idx_lod_cum),
	    sizeof(struct snap_stripedir), sizeof(struct idx_devrec)};
	uint32_t i;

	if (abi == NULL || abi->type != MSGPACK_OBJECT_ARRAY ||
	    abi->via.array.size != sizeof want / sizeof want[0])
		return -1;
	for (i = 0; i < abi->via.array.size; i++) {
		uint64_t v;

		if (mp_u64(&abi->via.array.ptr[i], &v) || v != want[i])
			return -1;
	}
	return 0;
}

/* ---- the snapshot view ------------------------------------------------- */

static int
view_header(struct snapshot *s, const msgpack_object *snap)
{
	const msgpack_object *ua;
	uint64_t v, i;

	if (mp_key_u64(snap, "features", &v) || v > UINT32_MAX)
		return -1;
	s->features = (uint32_t)v;
	if (mp_key_u64(snap, "protocol", &v) || v > 255)
		return -1;
	s->protocol = (int)v;
	if (mp_key_u64(snap, "source_size", &s->source_size) ||
	    mp_key_u64(snap, "unknown_keys", &s->unknown_keys) ||
	    mp_key_u64(snap, "n_traces", &v) || v > IDX_MAX_DEVICES)
		return -1;
	s->n_traces = (uint32_t)v;
	ua = mp_get(snap, "unknown_actions");
	if (ua == NULL || ua->type != MSGPACK_OBJECT_ARRAY ||
	    ua->via.array.size > SNAP_MAX_UNKNOWN_ACTIONS)
		return -1;
	for (i = 0; i < ua->via.array.size; i++) {
		if (mp_u64(&ua->via.array.ptr[i], &v) || v > UINT32_MAX)
			return -1;
		s->unknown_actions[i] = (uint32_t)v;
	}
	s->n_unknown_actions = ua->via.array.size;
	return 0;
}

static int
view_strings(struct sv_index *ix, struct idx_backing *b, char *why,
    size_t wl)
{
	struct snapshot *s = ix->snap;
	void *p;
	uint64_t n, i;

	if (sec_get(ix, b, IDX_SEC_STRS_DATA, 1, &p, &n, why, wl) != 0)
		return -1;
	s->strs.data = p;
	s->strs.len = n;
	if (n == 0 || s->strs.data[n - 1] != '\0')
		return -1;
	if (sec_get(ix, b, IDX_SEC_STRS_OFF, 8, &p, &n, why, wl) != 0)
		return -1;
	if (n == 0 || n > UINT32_MAX)
		return -1;
	s->strs.off = p;
	s->strs.n = (uint32_t)n;
	for (i = 0; i < n; i++)
		if (s->strs.off[i] >= s->strs.len)
			return -1;
	for (i = 0; i < s->n_unknown_actions; i++)
		if (s->unknown_actions[i] >= s->strs.n)
			return -1;
	return 0;
}

static int
view_stacks(struct sv_index *ix, struct idx_backing *b, char *why,
    size_t wl)
{
	struct snapshot *s = ix->snap;
	void *p;
	uint64_t n, i;

	if (sec_get(ix, b, IDX_SEC_FRAMES, sizeof(struct snap_frame), &p, &n,
		why, wl) != 0 || n > UINT32_MAX)
		return -1;
	s->frames = p;
	s->n_frames = (uint32_t)n;
	for (i = 0; i < n; i++)
		if (s->frames[i].name >= s->strs.n ||
		    s->frames[i].filename >= s->strs.n)
			return -1;
	if (sec_get(ix, b, IDX_SEC_STACK_OFF, 4, &p, &n, why, wl) != 0)
		return -1;
	if (n == 0 || n - 1 > UINT32_MAX)
		return -1;
	s->stack_off = p;
	s->n_stacks = (uint32_t)(n - 1);
	if (sec_get(ix, b, IDX_SEC_STACK_FRAMES, 4, &p, &s->n_stack_frames,
		why, wl) != 0)
		return -1;
	s->stack_frames = p;
	if (s->stack_off[0] != 0 || s->stack_off[s->n_stacks] !=
	    s->n_stack_frames)
		return -1;
	for (i = 0; i < s->n_stacks; i++)
		if (s->stack_off[i] > s->stack_off[i + 1])
			return -1;
	for (i = 0; i < s->n_stack_frames; i++)
		if (s->stack_frames[i] >= s->n_frames)
			return -1;
	return 0;
}

/* Segments (grouped by device), blocks, annotations and settings, with
 * every id and count they hold in range. */
static int
view_state(struct sv_index *ix, struct idx_backing *b, char *why,
    size_t wl)
{
	struct snapshot *s = ix->snap;
	void *p;
	uint64_t n, i;

	if (sec_get(ix, b, IDX_SEC_SEGMENTS, sizeof(struct snap_segment), &p,
		&n, why, wl) != 0 || n > UINT32_MAX)
		return -1;
	s->segments = p;
	s->n_segments = (uint32_t)n;
	if (sec_get(ix, b, IDX_SEC_BLOCKS, sizeof(struct snap_block), &p, &n,
		why, wl) != 0 || n > UINT32_MAX)
		return -1;
	s->blocks = p;
	s->n_blocks = (uint32_t)n;
	s->segs_by_device = 1;
	for (i = 0; i < s->n_segments; i++) {
		const struct snap_segment *g = &s->segments[i];

		if ((uint64_t)g->first_block + g->n_blocks > s->n_blocks ||
		    g->device >= IDX_MAX_DEVICES || g->stack >= s->n_stacks ||
		    (i > 0 && g->device < s->segments[i - 1].device))
			return -1;
	}
	for (i = 0; i < s->n_blocks; i++)
		if (s->blocks[i].stack >= s->n_stacks ||
		    s->blocks[i].state > SNAP_BLOCK_UNKNOWN_STATE)
			return -1;
	if (sec_get(ix, b, IDX_SEC_ANNOTATIONS, sizeof(struct snap_annotation),
		&p, &n, why, wl) != 0 || n > UINT32_MAX)
		return -1;
	s->annotations = p;
	s->n_annotations = (uint32_t)n;
	for (i = 0; i < n; i++)
		if (s->annotations[i].name >= s->strs.n ||
		    s->annotations[i].device >= IDX_MAX_DEVICES ||
		    s->annotations[i].stage > SNAP_STAGE_OTHER)
			return -1;
	if (sec_get(ix, b, IDX_SEC_SETTINGS, sizeof(struct snap_setting), &p,
		&n, why, wl) != 0 || n > UINT32_MAX)
		return -1;
	s->settings = p;
	s->n_settings = (uint32_t)n;
	for (i = 0; i < n; i++)
		if (s->settings[i].key >= s->strs.n ||
		    s->settings[i].value >= s->strs.n)
			return -1;
	return 0;
}

/* The devices: their records, directories, late frees and pyramids, bound
 * to the column data. */
static int
view_devices(struct sv_index *ix, struct idx_backing *b, char *why,
    size_t wl)
{
	struct idx_devsrc src;
	const struct toc_ent *cd = toc_find(ix, IDX_SEC_COLDATA), *lod;
	void *p;
	uint64_t n;

	memset(&src, 0, sizeof src);
	if (cd == NULL || cd->comp != IDX_COMP_NONE || cd->len != cd->raw) {
		snprintf(why, wl, "section %s missing", IDX_SEC_COLDATA);
		return -1;
	}
	src.data = ix->map + cd->off;
	src.data_len = cd->len;
	if (sec_get(ix, b, IDX_SEC_DEVICES, sizeof(struct idx_devrec), &p, &n,
		why, wl) != 0)
		return -1;
	src.recs = p;
	src.n_recs = n;
	if (sec_get(ix, b, IDX_SEC_EVDIR, sizeof(struct snap_stripedir), &p, &n,
		why, wl) != 0)
		return -1;
	src.evdir = p;
	src.n_evdir = n;
	if (sec_get(ix, b, IDX_SEC_ELDIR, sizeof(struct snap_stripedir), &p, &n,
		why, wl) != 0)
		return -1;
	src.eldir = p;
	src.n_eldir = n;
	if (sec_get(ix, b, IDX_SEC_LATE, 16, &p, &n, why, wl) != 0)
		return -1;
	src.late = p;
	src.n_late = n;
	lod = toc_find(ix, IDX_SEC_LOD);
	if (lod == NULL || lod->comp != IDX_COMP_NONE ||
	    lod->len != lod->raw || lod->raw % sizeof(struct idx_lod_cum)) {
		snprintf(why, wl, "section %s missing", IDX_SEC_LOD);
		return -1;
	}
	/* figures only, read in place (used_in_place) */
	src.lod = lod->raw > 0 ? (const void *)(ix->map + lod->off) : NULL;
	src.n_lod = lod->raw / sizeof(struct idx_lod_cum);
	return idx_bind_devices(ix, &src, why, wl);
}

/* ---- extension sections ---------------------------------------------- */

int
idx_section_name_ok(const char *name)
{
	size_t i, n = strlen(name);

	if (n == 0 || n > 40)
		return 0;
	for (i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
			(name[i] >= 'A' && name[i] <= 'Z') ||
			(name[i] >= '0' && name[i] <= '9') ||
			strchr("_.-", name[i]) != NULL))
			return 0;
	return 1;
}

static uint64_t
ext_bound(const struct snapshot *s, const struct idx_section_builder *sb)
{
	uint64_t items = (uint64_t)s->n_segments + s->n_blocks;
	uint32_t d;

	if (sb->max_len != NULL)
		return sb->max_len(s, sb->arg);
	for (d = 0; d < s->n_traces; d++)
		items += s->traces[d].n;
	return IDX_EXT_BASE + IDX_EXT_PER * items;
}

void
idx_ext_register(struct sv_index *ix, const struct idx_opts *o)
{
	size_t i;
	char name[IDX_MAX_SECTION_NAME + 8];

	if (o == NULL)
		return;
	for (i = 0; i < o->n_sections; i++) {
		const struct idx_section_builder *sb = &o->sections[i];
		const struct toc_ent *t;
		struct idx_ext *e;

		if (!idx_section_name_ok(sb->name))
			continue;
		snprintf(name, sizeof name, "%s%s", IDX_SEC_EXT_PREFIX,
		    sb->name);
		t = ix->toc != NULL ? toc_find(ix, name) : NULL;
		if (t == NULL || t->raw > ext_bound(ix->snap, sb) ||
		    t->raw > SIZE_MAX / 2)
			continue; /* absent, or too big: built again */
		ix->ext = xreallocarray(ix->ext, ix->n_ext + 1,
		    sizeof *ix->ext);
		e = &ix->ext[ix->n_ext++];
		memset(e, 0, sizeof *e);
		snprintf(e->name, sizeof e->name, "%s", sb->name);
		e->toc = *t;
		e->len = (size_t)t->raw;
	}
}

/* Loads e (a registered section of the mapped index) on first use. */
static void
ext_load(const struct sv_index *ix, struct idx_ext *e)
{
	int bad_hash;

	if ((e->data = sec_unpack(ix->map, idx_map_is_file(ix), &e->toc,
	    &bad_hash)) == NULL) {
		e->state = -1;
		__atomic_store_n(&ix->mut->damaged, 1, __ATOMIC_RELAXED);
		return;
	}
	e->state = 1;
}

/* ---- opening ------------------------------------------------------------ */

void
idx_index_free(struct sv_index *ix)
{
	size_t i;

	if (ix == NULL)
		return;
	idx_unbind_devices(ix);
	for (i = 0; i < ix->n_ext; i++) {
		free(ix->ext[i].data);
		free(ix->ext[i].pieces);
		idx_free_tape(ix->ext[i].tape);
	}
	free(ix->ext);
	free(ix->toc);
	free(ix->path);
	snap_free(ix->snap); /* unmaps a mapped index */
	pthread_mutex_destroy(&ix->mut->ext_lock);
	free(ix->mut);
	free(ix);
}

struct sv_index *
idx_index_new(void)
{
	struct sv_index *ix = xcalloc(1, sizeof *ix);

	ix->mut = xcalloc(1, sizeof *ix->mut);
	pthread_mutex_init(&ix->mut->ext_lock, NULL);
	return ix;
}

/* The prelude of map (size bytes), read once into a private copy:
 * IDX_OK with the header's place, or why not. */
static enum idx_why
check_prelude(const uint8_t *map, uint64_t size, uint64_t *hoff,
    uint64_t *hlen, uint64_t *hhash, char *why, size_t wl)
{
	uint8_t pre[IDX_PRELUDE_LEN];

	if (size < IDX_MAGIC_LEN ||
	    memcmp(map, IDX_MAGIC, IDX_MAGIC_LEN) != 0) {
		snprintf(why, wl, "not an index");
		return IDX_FOREIGN;
	}
	if (size < IDX_PRELUDE_LEN) {
		snprintf(why, wl, "truncated");
		return IDX_CORRUPT;
	}
	memcpy(pre, map, sizeof pre);
	if (memcmp(pre, IDX_MAGIC, IDX_MAGIC_LEN) != 0 ||
	    sv_xxh3(pre, IDX_OFF_PRELUDE_HASH) !=
	    sv_le64_get(pre + IDX_OFF_PRELUDE_HASH)) {
		snprintf(why, wl, "incomplete or damaged");
		return IDX_CORRUPT;
	}
	if (sv_le32_get(pre + IDX_OFF_VERSION) != IDX_VERSION) {
		snprintf(why, wl, "index format version %u, this program "
				  "reads version %u",
		    sv_le32_get(pre + IDX_OFF_VERSION), IDX_VERSION);
		return IDX_STALE;
	}
	*hoff = sv_le64_get(pre + IDX_OFF_HEADER_OFF);
	*hlen = sv_le64_get(pre + IDX_OFF_HEADER_LEN);
	*hhash = sv_le64_get(pre + IDX_OFF_HEADER_HASH);
	if (*hoff < IDX_PRELUDE_LEN || *hoff > size || *hlen > size - *hoff) {
		snprintf(why, wl, "truncated");
		return IDX_CORRUPT;
	}
	if (*hlen > IDX_MAX_HEADER) {
		snprintf(why, wl, "header too large");
		return IDX_CORRUPT;
	}
	return IDX_OK;
}

/* The prelude and the header of map, checked and unpacked into res from
 * a private copy of the header bytes (*hdr, which the caller frees after
 * res: res's strings point into it), so that nothing unpacked is read
 * twice from the shared map. IDX_OK with *hoff set, or why not. */
static enum idx_why
header_open(const uint8_t *map, uint64_t size, msgpack_unpacked *res,
    uint8_t **hdr, uint64_t *hoff, char *why, size_t wl)
{
	uint64_t hlen = 0, hhash = 0;
	size_t moff = 0;
	enum idx_why r;

	*hdr = NULL;
	r = check_prelude(map, size, hoff, &hlen, &hhash, why, wl);
	if (r != IDX_OK)
		return r;
	*hdr = xmalloc(hlen ? (size_t)hlen : 1);
	memcpy(*hdr, map + *hoff, (size_t)hlen);
	if (sv_xxh3(*hdr, (size_t)hlen) != hhash) {
		snprintf(why, wl, "header checksum mismatch");
		return IDX_CORRUPT;
	}
	if (idx_mp_bounded(*hdr, (size_t)hlen) != 0 ||
	    msgpack_unpack_next(res, (const char *)*hdr, (size_t)hlen,
		&moff) != MSGPACK_UNPACK_SUCCESS || moff != hlen) {
		snprintf(why, wl, "bad header");
		return IDX_CORRUPT;
	}
	return IDX_OK;
}

static enum idx_why
check_source(struct sv_index *ix, const msgpack_object *src,
    const struct src_key *key, char *why, size_t wl)
{
	struct src_key k;

	if (mp_key_u64(src, "size", &k.size) ||
	    mp_key_u64(src, "mtime_ns", &k.mtime_ns) ||
	    mp_key_u64(src, "hash", &k.hash)) {
		snprintf(why, wl, "bad header");
		return IDX_CORRUPT;
	}
	ix->source_size = k.size;
	if (key == NULL)
		return IDX_OK;
	if (k.size != key->size || k.hash != key->hash) {
		snprintf(why, wl, "made for another file or an older version "
				  "of it");
		return IDX_STALE;
	}
	if (k.mtime_ns != key->mtime_ns) {
		snprintf(why, wl, "stale (the snapshot was modified)");
		return IDX_STALE;
	}
	return IDX_OK;
}

enum idx_why
idx_map_index(int fd, const char *name, uint8_t *mem, size_t len,
    const struct src_key *key, int quick, const struct idx_opts *o,
    struct sv_index **out, char *why, size_t wl)
{
	struct stat st;
	struct sv_index *ix;
	struct idx_backing *b;
	uint8_t *map, *hdr = NULL;
	uint64_t size, hoff = 0;
	msgpack_unpacked res;
	const msgpack_object *root;
	uint64_t v;
	enum idx_why r;

	*out = NULL;
	why[0] = '\0';
	if (fd >= 0) {
		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
			snprintf(why, wl, "not a regular file");
			return IDX_FOREIGN;
		}
		size = (uint64_t)st.st_size;
		if (size < IDX_MAGIC_LEN || size > SIZE_MAX) {
			snprintf(why, wl, "not an index");
			return IDX_FOREIGN;
		}
		map = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED) {
			snprintf(why, wl, "cannot map: %s", strerror(errno));
			return IDX_FOREIGN;
		}
		/* from here a SIGBUS (the file truncated by its owner while
		 * we read it) is an error line naming it, not a crash */
		sv_fatal_guard(map, (size_t)size, name);
	} else {
		/* an index image in memory (taken over) */
		map = mem;
		size = len;
	}
	ix = idx_index_new();
	ix->snap = xcalloc(1, sizeof *ix->snap);
	b = xcalloc(1, sizeof *b);
	if (fd >= 0) {
		b->map = map;
		b->len = (size_t)size;
	} else {
		b->mem = map;
	}
	ix->snap->backing = b;
	ix->snap->backing_free = backing_release;
	ix->map = map;
	ix->map_len = (size_t)size;
	ix->file_size = size;

	msgpack_unpacked_init(&res);
	r = header_open(map, size, &res, &hdr, &hoff, why, wl);
	if (r != IDX_OK)
		goto fail;
	root = &res.data;
	if (mp_key_u64(root, "version", &v) || v != IDX_VERSION ||
	    check_abi(mp_get(root, "abi")) != 0) {
		snprintf(why, wl, "written for another machine or version");
		r = IDX_STALE;
		goto fail;
	}
	r = check_source(ix, mp_get(root, "source"), key, why, wl);
	if (r != IDX_OK)
		goto fail;
	r = IDX_CORRUPT;
	if (parse_toc(ix, mp_get(root, "toc"), hoff, why, wl) != 0 ||
	    check_sections(ix, fd, quick, why, wl) != 0)
		goto fail;
	if (view_header(ix->snap, mp_get(root, "snap")) != 0) {
		snprintf(why, wl, "bad header");
		goto fail;
	}
	ix->snap->traces = xcalloc(ix->snap->n_traces + 1,
	    sizeof *ix->snap->traces);
	for (v = 0; v < ix->snap->n_traces; v++)
		ix->snap->traces[v].device = (uint32_t)v;
	if (view_strings(ix, b, why, wl) != 0 ||
	    view_stacks(ix, b, why, wl) != 0 ||
	    view_state(ix, b, why, wl) != 0 ||
	    view_devices(ix, b, why, wl) != 0) {
		if (why[0] == '\0')
			snprintf(why, wl, "inconsistent sections");
		goto fail;
	}
	idx_ext_register(ix, o);
	msgpack_unpacked_destroy(&res);
	free(hdr);
	*out = ix;
	return IDX_OK;
fail:
	msgpack_unpacked_destroy(&res);
	free(hdr);
	idx_index_free(ix);
	return r;
}

/* ---- one section, without the model ------------------------------------ */

enum idx_why
idx_peek_fd(int fd, const char *name, const struct src_key *key,
    const char *section, uint64_t max_len, uint8_t **data, size_t *len,
    char *why, size_t wl)
{
	struct stat st;
	struct sv_index ix;
	const struct toc_ent *t;
	msgpack_unpacked res;
	const msgpack_object *root;
	uint8_t *map, *hdr = NULL;
	uint64_t size, hoff = 0, v;
	enum idx_why r;
	int bad_hash;

	*data = NULL;
	*len = 0;
	why[0] = '\0';
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size < IDX_MAGIC_LEN ||
	    (uint64_t)st.st_size > SIZE_MAX) {
		snprintf(why, wl, "not an index");
		return IDX_FOREIGN;
	}
	size = (uint64_t)st.st_size;
	map = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		snprintf(why, wl, "cannot map: %s", strerror(errno));
		return IDX_FOREIGN;
	}
	sv_fatal_guard(map, (size_t)size, name);
	memset(&ix, 0, sizeof ix);
	ix.map = map;
	ix.map_len = (size_t)size;
	msgpack_unpacked_init(&res);
	r = header_open(map, size, &res, &hdr, &hoff, why, wl);
	if (r != IDX_OK)
		goto out;
	root = &res.data;
	if (mp_key_u64(root, "version", &v) || v != IDX_VERSION ||
	    check_abi(mp_get(root, "abi")) != 0) {
		snprintf(why, wl, "written for another machine or version");
		r = IDX_STALE;
		goto out;
	}
	ix.snap = NULL;
	r = check_source(&ix, mp_get(root, "source"), key, why, wl);
	if (r != IDX_OK)
		goto out;
	r = IDX_CORRUPT;
	if (parse_toc(&ix, mp_get(root, "toc"), hoff, why, wl) != 0)
		goto out;
	t = toc_find(&ix, section);
	if (t == NULL || t->raw > max_len || t->raw > SIZE_MAX / 2) {
		snprintf(why, wl, "no section %s", section);
		r = IDX_STALE;
		goto out;
	}
	if ((*data = sec_unpack(map, 1, t, &bad_hash)) == NULL) {
		snprintf(why, wl, "section %s damaged", section);
		goto out;
	}
	*len = (size_t)t->raw;
	r = IDX_OK;
out:
	msgpack_unpacked_destroy(&res);
	free(hdr);
	free(ix.toc);
	unmap(map, (size_t)size);
	return r;
}

/* ---- the handle --------------------------------------------------------- */

void
idx_close(struct sv_index *ix)
{
	if (ix == NULL)
		return;
	if (idx_damaged(ix) && ix->path != NULL && !ix->in_memory &&
	    ix->file_known) {
		/* remove a damaged index, so that the next open builds a good
		 * one; only ours: the path (not followed) still names the
		 * file it was mapped from, the invoking user's, and it still
		 * starts with our magic */
		uint8_t m[IDX_MAGIC_LEN];
		struct stat st;
		int fd = open(ix->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
		    O_NONBLOCK);

		if (fd >= 0) {
			if (lstat(ix->path, &st) == 0 && S_ISREG(st.st_mode) &&
			    st.st_dev == ix->file_dev &&
			    st.st_ino == ix->file_ino &&
			    st.st_uid == geteuid() &&
			    sv_pread_all(fd, m, sizeof m, 0) == 0 &&
			    memcmp(m, IDX_MAGIC, IDX_MAGIC_LEN) == 0)
				unlink(ix->path);
			close(fd);
		}
	}
	idx_index_free(ix);
}

const struct snapshot *
idx_snapshot(const struct sv_index *ix)
{
	return ix->snap;
}

static const struct idx_dev *
dev_of(const struct sv_index *ix, uint32_t d)
{
	uint32_t lo = 0, hi = ix->n_devs, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (ix->devs[mid].rec.device < d)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->n_devs && ix->devs[lo].rec.device == d
	    ? &ix->devs[lo] : NULL;
}

const struct idx_timeline *
idx_timeline(const struct sv_index *ix, uint32_t d)
{
	const struct idx_dev *v = dev_of(ix, d);

	return v != NULL ? &v->tl : NULL;
}

const struct idx_lod *
idx_lod(const struct sv_index *ix, uint32_t d)
{
	const struct idx_dev *v = dev_of(ix, d);

	return v != NULL ? &v->lod : NULL;
}

const struct idx_ev_tally *
idx_ev_tally(const struct sv_index *ix, uint32_t d)
{
	const struct idx_dev *v = dev_of(ix, d);

	return v != NULL ? v->tally : NULL;
}

void
idx_free_tape(struct tape *t)
{
	if (t != NULL) {
		tape_free(t);
		free(t);
	}
}

/* A section built onto a tape, read into memory for a reader (after a
 * rewrite that added it, the index goes on being used). */
static void
ext_untape(struct idx_ext *e)
{
	uint8_t *p = xmalloc(e->len + 1);

	if (tape_read(e->tape, 0, p, e->len) != 0) {
		free(p);
		e->state = -1;
		return;
	}
	e->data = p;
	idx_free_tape(e->tape);
	e->tape = NULL;
}

struct idx_ext *
idx_ext_find(const struct sv_index *ix, const char *name)
{
	size_t i;

	for (i = 0; i < ix->n_ext; i++)
		if (strcmp(ix->ext[i].name, name) == 0)
			return &ix->ext[i];
	return NULL;
}

int
idx_section(const struct sv_index *ix, const char *name,
    const uint8_t **data, size_t *len)
{
	struct idx_ext *e = idx_ext_find(ix, name);
	int st;

	*data = NULL;
	*len = 0;
	if (e == NULL)
		return -1;
	pthread_mutex_lock(&ix->mut->ext_lock);
	if (e->state == 0)
		ext_load(ix, e);
	else if (e->state == 1 && e->data == NULL && e->tape != NULL)
		ext_untape(e);
	st = e->state;
	pthread_mutex_unlock(&ix->mut->ext_lock);
	if (st != 1)
		return -1;
	*data = e->data;
	*len = e->len;
	return 0;
}

void
idx_get_info(const struct sv_index *ix, struct idx_info *info)
{
	memset(info, 0, sizeof *info);
	info->path = ix->in_memory ? NULL : ix->path;
	info->size = ix->in_memory ? 0 : ix->file_size;
	info->source_size = ix->source_size;
	info->built = ix->built;
	info->in_memory = ix->in_memory;
	info->parse_s = ix->parse_s;
	info->sections_s = ix->sections_s;
}

int
idx_damaged(const struct sv_index *ix)
{
	return __atomic_load_n(&ix->mut->damaged, __ATOMIC_RELAXED) != 0;
}
