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
#include <limits.h>
#include <lz4.h>
#include <msgpack.h>
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

int
idx_read_full(int fd, uint8_t *buf, size_t n, uint64_t off)
{
	while (n > 0) {
		ssize_t r = pread(fd, buf, n, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		buf += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
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
mp_i64(const msgpack_object *o, int64_t *v)
{
	if (o == NULL)
		return -1;
	if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
		*v = o->via.i64;
	else if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
	    o->via.u64 <= INT64_MAX)
		*v = (int64_t)o->via.u64;
	else
		return -1;
	return 0;
}

static int
mp_key_u64(const msgpack_object *map, const char *key, uint64_t *v)
{
	return mp_u64(mp_get(map, key), v);
}

static const struct toc_ent *
toc_find(const struct sv_index *ix, const char *name)
{
	size_t i;

	for (i = 0; i < ix->n_toc; i++)
		if (strcmp(ix->toc[i].name, name) == 0)
			return &ix->toc[i];
	return NULL;
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
	free(s->traces);
	free(b);
	s->backing = NULL;
}

/* Section contents: a view into the map (uncompressed) or a heap copy
 * (LZ4), kept by the backing. *len is the raw length. Absent sections
 * give NULL/0 and return 1 when required is 0, -1 when required. */
static int
sec_get(const struct sv_index *ix, struct idx_backing *b, const char *name,
    int required, const void **data, uint64_t *len, char *why, size_t wl)
{
	const struct toc_ent *t = toc_find(ix, name);
	uint8_t *buf;

	*data = NULL;
	*len = 0;
	if (t == NULL) {
		if (required) {
			snprintf(why, wl, "section %s missing", name);
			return -1;
		}
		return 1;
	}
	*len = t->raw;
	if (t->raw == 0)
		return 0;
	if (t->comp == IDX_COMP_NONE) {
		if (t->len != t->raw)
			goto bad;
		*data = ix->map + t->off;
		return 0;
	}
	if (t->comp != IDX_COMP_LZ4 || t->raw > INT_MAX || t->len > INT_MAX)
		goto bad;
	buf = xmalloc(t->raw);
	if (LZ4_decompress_safe((const char *)ix->map + t->off, (char *)buf,
		(int)t->len, (int)t->raw) != (int)t->raw) {
		free(buf);
		goto bad;
	}
	backing_keep(b, buf);
	*data = buf;
	return 0;
bad:
	snprintf(why, wl, "section %s cannot be decoded", name);
	return -1;
}

/* Array section of n records of size rec: checks the length divides. */
static int
sec_array(const struct sv_index *ix, struct idx_backing *b, const char *name,
    size_t rec, int required, const void **data, uint64_t *n, char *why,
    size_t wl)
{
	uint64_t len;
	int r = sec_get(ix, b, name, required, data, &len, why, wl);

	if (r < 0)
		return r;
	if (len % rec != 0) {
		snprintf(why, wl, "section %s has a bad length", name);
		return -1;
	}
	*n = len / rec;
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
		    e[0].via.str.size >= sizeof t->name)
			goto bad;
		memcpy(t->name, e[0].via.str.ptr, e[0].via.str.size);
		t->name[e[0].via.str.size] = '\0';
		if (mp_u64(&e[1], &t->off) || mp_u64(&e[2], &t->len) ||
		    mp_u64(&e[3], &t->raw) || mp_u64(&e[4], &comp) ||
		    mp_u64(&e[5], &t->hash) || comp > IDX_COMP_LZ4)
			goto bad;
		t->comp = (uint32_t)comp;
		if (t->off < IDX_PRELUDE_LEN || t->off % IDX_ALIGN != 0 ||
		    t->off > data_end || t->len > data_end - t->off) {
			snprintf(why, wl, "section %s lies outside the file",
			    t->name);
			return -1;
		}
	}
	return 0;
bad:
	snprintf(why, wl, "bad table of contents");
	return -1;
}

/* Verifies the XXH3 of every section. Big uncompressed sections are read
 * with pread into a small buffer rather than through the map, so a
 * reopen does not fault in (and keep resident) every page of the file.
 * With quick, those big column sections are skipped. */
static int
check_sections(const struct sv_index *ix, int fd, int quick, char *why,
    size_t wl)
{
	size_t i, bufsz = 1u << 20;
	uint8_t *buf = NULL;
	XXH3_state_t *h = NULL;
	int r = 0;

	for (i = 0; i < ix->n_toc && r == 0; i++) {
		const struct toc_ent *t = &ix->toc[i];
		uint64_t got, done;

		if (t->len <= bufsz || t->comp != IDX_COMP_NONE) {
			got = XXH3_64bits(ix->map + t->off, t->len);
		} else if (quick) {
			continue;
		} else {
			if (buf == NULL) {
				buf = xmalloc(bufsz);
				h = XXH3_createState();
			}
			XXH3_64bits_reset(h);
			for (done = 0; done < t->len; done += bufsz) {
				size_t n = t->len - done < bufsz
				    ? (size_t)(t->len - done) : bufsz;

				if (idx_read_full(fd, buf, n, t->off + done) != 0)
					break;
				XXH3_64bits_update(h, buf, n);
			}
			got = done >= t->len ? XXH3_64bits_digest(h) : ~t->hash;
		}
		if (got != t->hash) {
			snprintf(why, wl, "section %s: checksum mismatch",
			    t->name);
			r = -1;
		}
	}
	free(buf);
	if (h != NULL)
		XXH3_freeState(h);
	return r;
}

static int
check_abi(const msgpack_object *abi)
{
	static const uint64_t want[] = {IDX_ENDIAN_MARK,
	    sizeof(struct snap_frame), sizeof(struct snap_segment),
	    sizeof(struct snap_block), sizeof(struct snap_annotation),
	    sizeof(struct snap_setting), sizeof(struct idx_elem),
	    sizeof(struct idx_lod_bucket)};
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

/* Builds the snapshot view: strings, frames, stacks, segments, blocks,
 * annotations, settings, trace columns. */
static int
view_snapshot(struct sv_index *ix, struct idx_backing *b,
    const msgpack_object *snap, const msgpack_object *traces, char *why,
    size_t wl)
{
	struct snapshot *s = ix->snap;
	const void *p;
	uint64_t n, i, v;
	const msgpack_object *ua;

	if (mp_key_u64(snap, "features", &v))
		goto bad;
	s->features = (uint32_t)v;
	if (mp_key_u64(snap, "protocol", &v))
		goto bad;
	s->protocol = (int)v;
	if (mp_key_u64(snap, "source_size", &s->source_size) ||
	    mp_key_u64(snap, "unknown_keys", &s->unknown_keys))
		goto bad;
	ua = mp_get(snap, "unknown_actions");
	if (ua == NULL || ua->type != MSGPACK_OBJECT_ARRAY ||
	    ua->via.array.size > SNAP_MAX_UNKNOWN_ACTIONS)
		goto bad;
	for (i = 0; i < ua->via.array.size; i++) {
		if (mp_u64(&ua->via.array.ptr[i], &v))
			goto bad;
		s->unknown_actions[i] = (uint32_t)v;
	}
	s->n_unknown_actions = ua->via.array.size;

	/* strings */
	if (sec_get(ix, b, IDX_SEC_STRS_DATA, 1, &p, &n, why, wl) < 0)
		return -1;
	s->strs.data = (char *)p;
	s->strs.len = n;
	if (n == 0 || s->strs.data[n - 1] != '\0')
		goto bad;
	if (sec_array(ix, b, IDX_SEC_STRS_OFF, 8, 1, &p, &n, why, wl) < 0)
		return -1;
	if (n == 0 || n > UINT32_MAX)
		goto bad;
	s->strs.off = (uint64_t *)p;
	s->strs.n = (uint32_t)n;
	for (i = 0; i < n; i++)
		if (s->strs.off[i] >= s->strs.len)
			goto bad;

	/* frames and stacks */
	if (sec_array(ix, b, IDX_SEC_FRAMES, sizeof(struct snap_frame), 1, &p,
		&n, why, wl) < 0)
		return -1;
	s->frames = (struct snap_frame *)p;
	s->n_frames = (uint32_t)n;
	for (i = 0; i < n; i++)
		if (s->frames[i].name >= s->strs.n ||
		    s->frames[i].filename >= s->strs.n)
			goto bad;
	if (sec_array(ix, b, IDX_SEC_STACK_OFF, 4, 1, &p, &n, why, wl) < 0)
		return -1;
	if (n == 0 || n - 1 > UINT32_MAX)
		goto bad;
	s->stack_off = (uint32_t *)p;
	s->n_stacks = (uint32_t)(n - 1);
	if (sec_array(ix, b, IDX_SEC_STACK_FRAMES, 4, 1, &p,
		&s->n_stack_frames, why, wl) < 0)
		return -1;
	s->stack_frames = (uint32_t *)p;
	if (s->stack_off[0] != 0 || s->stack_off[s->n_stacks] !=
	    s->n_stack_frames)
		goto bad;
	for (i = 0; i < s->n_stacks; i++)
		if (s->stack_off[i] > s->stack_off[i + 1])
			goto bad;
	for (i = 0; i < s->n_stack_frames; i++)
		if (s->stack_frames[i] >= s->n_frames)
			goto bad;

	/* segments and blocks */
	if (sec_array(ix, b, IDX_SEC_SEGMENTS, sizeof(struct snap_segment), 1,
		&p, &n, why, wl) < 0)
		return -1;
	s->segments = (struct snap_segment *)p;
	s->n_segments = (uint32_t)n;
	if (sec_array(ix, b, IDX_SEC_BLOCKS, sizeof(struct snap_block), 1, &p,
		&n, why, wl) < 0)
		return -1;
	s->blocks = (struct snap_block *)p;
	s->n_blocks = (uint32_t)n;
	s->segs_by_device = 1;
	for (i = 0; i < s->n_segments; i++) {
		if ((uint64_t)s->segments[i].first_block +
			s->segments[i].n_blocks > s->n_blocks)
			goto bad;
		if (i > 0 && s->segments[i].device < s->segments[i - 1].device)
			s->segs_by_device = 0;
	}
	if (sec_array(ix, b, IDX_SEC_ANNOTATIONS,
		sizeof(struct snap_annotation), 1, &p, &n, why, wl) < 0)
		return -1;
	s->annotations = (struct snap_annotation *)p;
	s->n_annotations = (uint32_t)n;
	if (sec_array(ix, b, IDX_SEC_SETTINGS, sizeof(struct snap_setting), 1,
		&p, &n, why, wl) < 0)
		return -1;
	s->settings = (struct snap_setting *)p;
	s->n_settings = (uint32_t)n;

	/* trace columns */
	if (traces == NULL || traces->type != MSGPACK_OBJECT_ARRAY)
		goto bad;
	s->n_traces = traces->via.array.size;
	s->traces = xcalloc(s->n_traces ? s->n_traces : 1,
	    sizeof *s->traces);
	for (i = 0; i < s->n_traces; i++) {
		const msgpack_object *to = &traces->via.array.ptr[i];
		struct snap_trace *t = &s->traces[i];
		uint64_t cols, cn;
		char name[IDX_MAX_SECTION_NAME];
		int c;
		static const struct {
			const char *col;
			size_t rec;
			uint32_t need; /* HDR_COL_* or 0 = always */
		} cdef[] = {{IDX_COL_ACTION, 1, 0}, {IDX_COL_ADDR, 8, 0},
		    {IDX_COL_SIZE, 8, 0}, {IDX_COL_STREAM, 8, 0},
		    {IDX_COL_STACK, 4, 0}, {IDX_COL_TIME, 8, HDR_COL_TIME},
		    {IDX_COL_CTX, 4, HDR_COL_CTX},
		    {IDX_COL_META, 4, HDR_COL_META}};
		void **dst[8];

		t->device = (uint32_t)i;
		if (mp_key_u64(to, "n", &t->n) || mp_key_u64(to, "cols", &cols))
			goto bad;
		dst[0] = (void **)&t->action;
		dst[1] = (void **)&t->addr;
		dst[2] = (void **)&t->size;
		dst[3] = (void **)&t->stream;
		dst[4] = (void **)&t->stack;
		dst[5] = (void **)&t->time_us;
		dst[6] = (void **)&t->compile_context;
		dst[7] = (void **)&t->user_metadata;
		for (c = 0; c < 8; c++) {
			if (cdef[c].need != 0 && !(cols & cdef[c].need))
				continue;
			snprintf(name, sizeof name, IDX_SEC_DEV_FMT,
			    (unsigned)i, cdef[c].col);
			if (sec_array(ix, b, name, cdef[c].rec, 1, &p, &cn,
				why, wl) < 0)
				return -1;
			if (cn != t->n)
				goto bad;
			*dst[c] = (void *)p;
		}
	}
	return 0;
bad:
	if (why[0] == '\0')
		snprintf(why, wl, "inconsistent snapshot sections");
	return -1;
}

static int
view_timelines(struct sv_index *ix, struct idx_backing *b,
    const msgpack_object *tls, char *why, size_t wl)
{
	uint32_t d;

	if (tls == NULL || tls->type != MSGPACK_OBJECT_ARRAY)
		goto bad;
	ix->n_devs = tls->via.array.size;
	ix->devs = xcalloc(ix->n_devs ? ix->n_devs : 1, sizeof *ix->devs);
	for (d = 0; d < ix->n_devs; d++) {
		const msgpack_object *o = &tls->via.array.ptr[d];
		struct idx_timeline *tl = &ix->devs[d].tl;
		const void *p;
		uint64_t n;
		char name[IDX_MAX_SECTION_NAME];

		tl->device = d;
		if (mp_key_u64(o, "n", &tl->n_events) ||
		    mp_key_u64(o, "base_total", &tl->base_total) ||
		    mp_key_u64(o, "base_reserved", &tl->base_reserved) ||
		    mp_key_u64(o, "peak", &tl->peak) ||
		    mp_i64(mp_get(o, "peak_ev"), &tl->peak_ev) ||
		    mp_key_u64(o, "n_pre", &tl->n_pre) ||
		    mp_key_u64(o, "n_ghost", &tl->n_ghost))
			goto bad;
		if (tl->n_events != (d < ix->snap->n_traces
			? ix->snap->traces[d].n : 0))
			goto bad;
#define TL_COL(col, rec, field, count)                                         \
	snprintf(name, sizeof name, IDX_SEC_DEV_FMT, (unsigned)d, col);        \
	if (sec_array(ix, b, name, rec, 1, &p, &n, why, wl) < 0)               \
		return -1;                                                     \
	if (count != UINT64_MAX && n != count)                                 \
		goto bad;                                                      \
	tl->field = (void *)p;
		TL_COL(IDX_COL_ELEMS, sizeof(struct idx_elem), elems,
		    UINT64_MAX);
		tl->n_elems = n;
		TL_COL(IDX_COL_EV_ELEM, 8, ev_elem, tl->n_events);
		TL_COL(IDX_COL_TOTAL, 8, total, tl->n_events);
		TL_COL(IDX_COL_RESERVED, 8, reserved, tl->n_events);
#undef TL_COL
		snprintf(name, sizeof name, IDX_SEC_DEV_FMT, (unsigned)d,
		    IDX_COL_LOD);
		if (sec_array(ix, b, name, sizeof(struct idx_lod_bucket), 1,
			&p, &n, why, wl) < 0)
			return -1;
		if (n != idx_lod_count(tl->n_events, NULL))
			goto bad;
		idx_lod_init(&ix->devs[d].lod, tl->n_events, p);
	}
	return 0;
bad:
	if (why[0] == '\0')
		snprintf(why, wl, "inconsistent timeline sections");
	return -1;
}

static int
view_extensions(struct sv_index *ix)
{
	size_t i, pl = strlen(IDX_SEC_EXT_PREFIX);

	for (i = 0; i < ix->n_toc; i++) {
		const struct toc_ent *t = &ix->toc[i];
		struct idx_ext *e;

		if (strncmp(t->name, IDX_SEC_EXT_PREFIX, pl) != 0)
			continue;
		ix->ext = xreallocarray(ix->ext, ix->n_ext + 1,
		    sizeof *ix->ext);
		e = &ix->ext[ix->n_ext++];
		snprintf(e->name, sizeof e->name, "%s", t->name + pl);
		e->len = t->raw;
		e->data = xmalloc(t->raw ? t->raw : 1);
		if (t->raw == 0)
			continue;
		if (t->comp == IDX_COMP_NONE && t->len == t->raw) {
			memcpy(e->data, ix->map + t->off, t->raw);
		} else if (t->comp != IDX_COMP_LZ4 || t->raw > INT_MAX ||
		    t->len > INT_MAX ||
		    LZ4_decompress_safe((const char *)ix->map + t->off,
			(char *)e->data, (int)t->len, (int)t->raw) !=
			(int)t->raw) {
			return -1;
		}
	}
	return 0;
}

void
idx_index_free(struct sv_index *ix)
{
	uint32_t d;
	size_t i;

	if (ix == NULL)
		return;
	for (d = 0; d < ix->n_devs; d++) {
		idx_lod_destroy(&ix->devs[d].lod);
		idx_timeline_destroy(&ix->devs[d].tl);
	}
	free(ix->devs);
	for (i = 0; i < ix->n_ext; i++)
		free(ix->ext[i].data);
	free(ix->ext);
	free(ix->toc);
	free(ix->path);
	snap_free(ix->snap); /* unmaps a mapped index */
	free(ix);
}

/* Maps the index in fd (the file called name) and checks it against key.
 * Returns IDX_OK with *out set, or the reason with why filled. */
enum idx_why
idx_map_index(int fd, const char *name, const struct src_key *key, int quick,
    struct sv_index **out, char *why, size_t wl)
{
	struct stat st;
	struct sv_index *ix;
	struct idx_backing *b;
	uint8_t *map;
	uint64_t size, hoff, hlen;
	msgpack_unpacked res;
	size_t moff = 0;
	const msgpack_object *root, *src;
	uint64_t v;
	enum idx_why r = IDX_CORRUPT;

	*out = NULL;
	why[0] = '\0';
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, wl, "not a regular file");
		return IDX_FOREIGN;
	}
	size = (uint64_t)st.st_size;
	if (size < IDX_MAGIC_LEN) {
		snprintf(why, wl, "not an index");
		return size == 0 ? IDX_FOREIGN : IDX_FOREIGN;
	}
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		snprintf(why, wl, "cannot map: %s", strerror(errno));
		return IDX_FOREIGN;
	}
	/* from here a SIGBUS (the file truncated by its owner while we
	 * read it) is an error line naming it, not a crash */
	sv_fatal_guard(map, size, name);
	if (memcmp(map, IDX_MAGIC, IDX_MAGIC_LEN) != 0) {
		unmap(map, size);
		snprintf(why, wl, "not an index");
		return IDX_FOREIGN;
	}
	if (size < IDX_PRELUDE_LEN) {
		unmap(map, size);
		snprintf(why, wl, "truncated");
		return IDX_CORRUPT;
	}
	if (XXH3_64bits(map, IDX_OFF_PRELUDE_HASH) !=
	    get_u64(map + IDX_OFF_PRELUDE_HASH)) {
		unmap(map, size);
		snprintf(why, wl, "incomplete or damaged");
		return IDX_CORRUPT;
	}
	if (get_u32(map + IDX_OFF_VERSION) != IDX_VERSION) {
		snprintf(why, wl, "index format version %u, this program "
				  "reads version %u",
		    get_u32(map + IDX_OFF_VERSION), IDX_VERSION);
		unmap(map, size);
		return IDX_STALE;
	}
	hoff = get_u64(map + IDX_OFF_HEADER_OFF);
	hlen = get_u64(map + IDX_OFF_HEADER_LEN);
	if (hoff < IDX_PRELUDE_LEN || hlen > IDX_MAX_HEADER || hoff > size ||
	    hlen > size - hoff) {
		unmap(map, size);
		snprintf(why, wl, "truncated");
		return IDX_CORRUPT;
	}
	if (XXH3_64bits(map + hoff, hlen) !=
	    get_u64(map + IDX_OFF_HEADER_HASH)) {
		unmap(map, size);
		snprintf(why, wl, "header checksum mismatch");
		return IDX_CORRUPT;
	}

	ix = xcalloc(1, sizeof *ix);
	ix->snap = xcalloc(1, sizeof *ix->snap);
	b = xcalloc(1, sizeof *b);
	b->map = map;
	b->len = size;
	ix->snap->backing = b;
	ix->snap->backing_free = backing_release;
	ix->map = map;
	ix->map_len = size;
	ix->file_size = size;

	msgpack_unpacked_init(&res);
	if (idx_mp_bounded(map + hoff, hlen) != 0 ||
	    msgpack_unpack_next(&res, (const char *)map + hoff, hlen, &moff) !=
	    MSGPACK_UNPACK_SUCCESS || moff != hlen) {
		snprintf(why, wl, "bad header");
		goto fail;
	}
	root = &res.data;
	if (mp_key_u64(root, "version", &v) || v != IDX_VERSION ||
	    check_abi(mp_get(root, "abi")) != 0) {
		snprintf(why, wl, "written for another machine or version");
		r = IDX_STALE;
		goto fail;
	}
	src = mp_get(root, "source");
	{
		struct src_key k;

		if (mp_key_u64(src, "size", &k.size) ||
		    mp_key_u64(src, "mtime_ns", &k.mtime_ns) ||
		    mp_key_u64(src, "hash", &k.hash)) {
			snprintf(why, wl, "bad header");
			goto fail;
		}
		if (k.size != key->size || k.hash != key->hash) {
			snprintf(why, wl, "made for another file or an older "
					  "version of it");
			r = IDX_STALE;
			goto fail;
		}
		if (k.mtime_ns != key->mtime_ns) {
			snprintf(why, wl, "stale (the snapshot was modified)");
			r = IDX_STALE;
			goto fail;
		}
		ix->source_size = k.size;
	}
	if (parse_toc(ix, mp_get(root, "toc"), hoff, why, wl) != 0 ||
	    check_sections(ix, fd, quick, why, wl) != 0 ||
	    view_snapshot(ix, b, mp_get(root, "snap"), mp_get(root, "traces"),
		why, wl) != 0 ||
	    view_timelines(ix, b, mp_get(root, "timelines"), why, wl) != 0)
		goto fail;
	if (view_extensions(ix) != 0) {
		snprintf(why, wl, "extension section cannot be decoded");
		goto fail;
	}
	msgpack_unpacked_destroy(&res);
	*out = ix;
	return IDX_OK;
fail:
	msgpack_unpacked_destroy(&res);
	idx_index_free(ix);
	return r;
}

void
idx_close(struct sv_index *ix)
{
	idx_index_free(ix);
}

const struct snapshot *
idx_snapshot(const struct sv_index *ix)
{
	return ix->snap;
}

const struct idx_timeline *
idx_timeline(const struct sv_index *ix, uint32_t d)
{
	return d < ix->n_devs ? &ix->devs[d].tl : NULL;
}

const struct idx_lod *
idx_lod(const struct sv_index *ix, uint32_t d)
{
	return d < ix->n_devs ? &ix->devs[d].lod : NULL;
}

int
idx_section(const struct sv_index *ix, const char *name,
    const uint8_t **data, size_t *len)
{
	size_t i;

	for (i = 0; i < ix->n_ext; i++)
		if (strcmp(ix->ext[i].name, name) == 0) {
			*data = ix->ext[i].data;
			*len = ix->ext[i].len;
			return 0;
		}
	*data = NULL;
	*len = 0;
	return -1;
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
}
