/*
 * The snapshot index: locating, validating, mapping and building the
 * .snapidx file (layout in doc/FORMAT.md, constants in idx_format.h).
 *
 * Build: the loader parses the snapshot into heap columns; extension
 * sections are built from it; then, device by device, the timeline is
 * computed and the trace columns, timeline arrays and LOD pyramid are
 * written straight from their arrays (no copies) and freed, which keeps
 * the builder's own memory near one device's worth. The header (msgpack
 * TOC) goes last, then the fixed prelude at offset 0. The temp file is
 * created with O_EXCL, mapped and checked like any index, and renamed
 * over the index path only when that path is absent or holds an index.
 *
 * Open: the prelude and header are checked (magic, version, checksums,
 * struct sizes, the source key: size, mtime, XXH3 of its first and last
 * MiB), every section's XXH3 is verified, small LZ4 sections are
 * decompressed to the heap and the big columns are used in place.
 */
#include "config.h"

#include "index/idx.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
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
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "index/idx_format.h"
#include "util/xalloc.h"

struct src_key {
	uint64_t size;
	uint64_t mtime_ns;
	uint64_t hash;
};

struct toc_ent {
	char name[IDX_MAX_SECTION_NAME];
	uint64_t off, len, raw, hash;
	uint32_t comp;
};

struct idx_dev {
	struct idx_timeline tl;
	struct idx_lod lod;
};

struct idx_ext {
	char name[IDX_MAX_SECTION_NAME];
	uint8_t *data; /* heap, owned */
	size_t len;
};

struct sv_index {
	struct snapshot *snap;
	struct idx_dev *devs;
	uint32_t n_devs;
	struct idx_ext *ext;
	size_t n_ext;
	char *path;          /* index file, NULL in memory */
	uint64_t file_size;
	uint64_t source_size;
	int built;
	int in_memory;
	/* mapped file (shared with the snapshot's backing) */
	const uint8_t *map;
	size_t map_len;
	struct toc_ent *toc;
	size_t n_toc;
};

/* What the snapshot's backing_free releases for a mapped index. */
struct idx_backing {
	void *map;
	size_t len;
	void **bufs;
	size_t n_bufs, cap_bufs;
};

/* Why an existing file was not usable. */
enum idx_why {
	IDX_OK,
	IDX_FOREIGN,   /* not written by us: never replace */
	IDX_STALE,     /* our index, other source or other version */
	IDX_CORRUPT    /* our magic, damaged */
};

/* Per-device numbers of the header. */
struct hdr_trace {
	uint64_t n;
	uint32_t cols; /* HDR_COL_* */
};
#define HDR_COL_TIME 1u
#define HDR_COL_CTX 2u
#define HDR_COL_META 4u

struct hdr_tl {
	uint64_t n_events, n_elems, base_total, base_reserved, peak;
	int64_t peak_ev;
	uint64_t n_pre, n_ghost;
};

/* ---- small helpers ---------------------------------------------------- */

static void
warnf(const struct idx_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
warnf(const struct idx_opts *o, const char *fmt, ...)
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

static void
put_u32(uint8_t *p, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void
put_u64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t
get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static uint64_t
get_u64(const uint8_t *p)
{
	return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static int
read_full(int fd, uint8_t *buf, size_t n, uint64_t off)
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

/* See idx_format.h. */
static uint64_t
be_n(const uint8_t *p, unsigned w)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < w; i++)
		v = v << 8 | p[i];
	return v;
}

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

/* Source key of an open snapshot: size, mtime, XXH3 of its two ends. */
static int
source_key(const char *path, struct src_key *k, struct sv_error *err)
{
	struct stat st;
	XXH3_state_t *h;
	uint8_t *buf;
	uint64_t head, tail_off;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
		    strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET,
		    "not a regular file");
	}
	k->size = (uint64_t)st.st_size;
	k->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u +
	    (uint64_t)st.st_mtim.tv_nsec;
	buf = xmalloc(IDX_KEY_SPAN);
	h = XXH3_createState();
	XXH3_64bits_reset(h);
	head = k->size < IDX_KEY_SPAN ? k->size : IDX_KEY_SPAN;
	if (read_full(fd, buf, head, 0) != 0)
		goto fail;
	XXH3_64bits_update(h, buf, head);
	tail_off = k->size > 2 * (uint64_t)IDX_KEY_SPAN
	    ? k->size - IDX_KEY_SPAN : head;
	if (tail_off < k->size) {
		if (read_full(fd, buf, k->size - tail_off, tail_off) != 0)
			goto fail;
		XXH3_64bits_update(h, buf, k->size - tail_off);
	}
	k->hash = XXH3_64bits_digest(h);
	XXH3_freeState(h);
	free(buf);
	close(fd);
	return 0;
fail:
	XXH3_freeState(h);
	free(buf);
	close(fd);
	return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET,
	    "cannot read the file");
}

/* ---- locations -------------------------------------------------------- */

int
idx_path_beside(const char *path, char **out, struct sv_error *err)
{
	(void)err;
	xasprintf(out, "%s%s", path, IDX_SUFFIX);
	return 0;
}

static char *
default_cache_dir(void)
{
	const char *x = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char *d;

	if (x != NULL && x[0] == '/')
		xasprintf(&d, "%s/%s", x, IDX_CACHE_SUBDIR);
	else if (home != NULL && home[0] != '\0')
		xasprintf(&d, "%s/.cache/%s", home, IDX_CACHE_SUBDIR);
	else
		return NULL;
	return d;
}

int
idx_path_cache(const char *path, const char *cache_dir, char **out,
    struct sv_error *err)
{
	char *abs = realpath(path, NULL), *dir;
	const char *base;

	if (abs == NULL)
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
		    strerror(errno));
	base = strrchr(abs, '/');
	base = base != NULL ? base + 1 : abs;
	dir = cache_dir != NULL ? xstrdup(cache_dir) : default_cache_dir();
	if (dir == NULL) {
		free(abs);
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET,
		    "no cache directory (neither XDG_CACHE_HOME nor HOME)");
	}
	xasprintf(out, "%s/%016llx-%.64s%s", dir,
	    (unsigned long long)XXH3_64bits(abs, strlen(abs)), base,
	    IDX_SUFFIX);
	free(dir);
	free(abs);
	return 0;
}

/* mkdir -p of the directory part of file (mode 0700 for new ones). */
static int
mkdir_parents(const char *file)
{
	char *p = xstrdup(file), *s;
	int r = 0;

	s = strrchr(p, '/');
	if (s == NULL || s == p) {
		free(p);
		return 0;
	}
	*s = '\0';
	for (s = p + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) != 0 && errno != EEXIST)
			r = -1;
		*s = '/';
	}
	if (mkdir(p, 0700) != 0 && errno != EEXIST)
		r = -1;
	free(p);
	return r;
}

static int
dir_writable(const char *file)
{
	char *p = xstrdup(file), *s = strrchr(p, '/');
	int ok;

	if (s == NULL)
		ok = access(".", W_OK) == 0;
	else if (s == p)
		ok = access("/", W_OK) == 0;
	else {
		*s = '\0';
		ok = access(p, W_OK) == 0;
	}
	free(p);
	return ok;
}

/* 1 when path is absent, or a regular file starting with our magic (so
 * this program wrote it and may replace it). */
static int
may_replace(const char *path)
{
	struct stat st;
	uint8_t m[IDX_MAGIC_LEN];
	int fd, ok;

	if (lstat(path, &st) != 0)
		return errno == ENOENT;
	if (!S_ISREG(st.st_mode))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	ok = read_full(fd, m, sizeof m, 0) == 0 &&
	    memcmp(m, IDX_MAGIC, IDX_MAGIC_LEN) == 0;
	close(fd);
	return ok;
}

/* ---- mapped index: reading -------------------------------------------- */

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
		munmap(b->map, b->len);
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

				if (read_full(fd, buf, n, t->off + done) != 0)
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

static void
index_free(struct sv_index *ix)
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

/* Maps the index in fd and checks it against key. Returns IDX_OK with
 * *out set, or the reason with why filled. */
static enum idx_why
map_index(int fd, const struct src_key *key, int quick, struct sv_index **out,
    char *why, size_t wl)
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
	if (memcmp(map, IDX_MAGIC, IDX_MAGIC_LEN) != 0) {
		munmap(map, size);
		snprintf(why, wl, "not an index");
		return IDX_FOREIGN;
	}
	if (size < IDX_PRELUDE_LEN) {
		munmap(map, size);
		snprintf(why, wl, "truncated");
		return IDX_CORRUPT;
	}
	if (XXH3_64bits(map, IDX_OFF_PRELUDE_HASH) !=
	    get_u64(map + IDX_OFF_PRELUDE_HASH)) {
		munmap(map, size);
		snprintf(why, wl, "incomplete or damaged");
		return IDX_CORRUPT;
	}
	if (get_u32(map + IDX_OFF_VERSION) != IDX_VERSION) {
		snprintf(why, wl, "index format version %u, this program "
				  "reads version %u",
		    get_u32(map + IDX_OFF_VERSION), IDX_VERSION);
		munmap(map, size);
		return IDX_STALE;
	}
	hoff = get_u64(map + IDX_OFF_HEADER_OFF);
	hlen = get_u64(map + IDX_OFF_HEADER_LEN);
	if (hoff < IDX_PRELUDE_LEN || hlen > IDX_MAX_HEADER || hoff > size ||
	    hlen > size - hoff) {
		munmap(map, size);
		snprintf(why, wl, "truncated");
		return IDX_CORRUPT;
	}
	if (XXH3_64bits(map + hoff, hlen) !=
	    get_u64(map + IDX_OFF_HEADER_HASH)) {
		munmap(map, size);
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
	index_free(ix);
	return r;
}

/* ---- writing ------------------------------------------------------------ */

struct writer {
	int fd;
	uint64_t off;
	int err; /* errno of the first failure */
	struct toc_ent *toc;
	size_t n_toc, cap_toc;
	/* progress over the write phase */
	const struct idx_opts *o;
	uint64_t src_size, est, cancelled;
};

static int
w_raw(struct writer *w, const void *p, size_t n)
{
	const uint8_t *c = p;

	while (n > 0 && w->err == 0) {
		ssize_t r = write(w->fd, c, n > (1u << 30) ? (1u << 30) : n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			w->err = r < 0 ? errno : EIO;
			break;
		}
		c += r;
		n -= (size_t)r;
		w->off += (uint64_t)r;
	}
	return w->err == 0 ? 0 : -1;
}

static int
w_align(struct writer *w)
{
	static const uint8_t zero[IDX_ALIGN];
	size_t pad = (size_t)((IDX_ALIGN - w->off % IDX_ALIGN) % IDX_ALIGN);

	return w_raw(w, zero, pad);
}

static void
w_progress(struct writer *w)
{
	uint64_t part = w->src_size / 10, done;

	if (w->o == NULL || w->o->progress == NULL)
		return;
	done = w->est ? (uint64_t)((double)part * (double)w->off /
			    (double)w->est)
		      : part;
	if (done > part)
		done = part;
	if (w->o->progress(w->o->progress_ctx, w->src_size - part + done,
		w->src_size) != 0)
		w->cancelled = 1;
}

/* Writes one section of raw bytes (stored as is, or LZ4 when comp). */
static int
w_section(struct writer *w, const char *name, const void *data, uint64_t n,
    uint32_t comp)
{
	struct toc_ent *t;
	const void *out = data;
	uint64_t outlen = n;
	char *z = NULL;

	if (w->err != 0 || w->cancelled)
		return -1;
	if (comp == IDX_COMP_LZ4 && (n == 0 || n > (uint64_t)LZ4_MAX_INPUT_SIZE))
		comp = IDX_COMP_NONE;
	if (comp == IDX_COMP_LZ4) {
		int bound = LZ4_compressBound((int)n), zl;

		z = xmalloc((size_t)bound);
		zl = LZ4_compress_default(data, z, (int)n, bound);
		if (zl <= 0) {
			comp = IDX_COMP_NONE;
		} else {
			out = z;
			outlen = (uint64_t)zl;
		}
	}
	if (w_align(w) != 0) {
		free(z);
		return -1;
	}
	XGROW(w->toc, w->cap_toc, w->n_toc + 1);
	t = &w->toc[w->n_toc++];
	memset(t, 0, sizeof *t);
	snprintf(t->name, sizeof t->name, "%s", name);
	t->off = w->off;
	t->len = outlen;
	t->raw = n;
	t->comp = comp;
	t->hash = outlen ? XXH3_64bits(out, outlen) : XXH3_64bits(NULL, 0);
	w_raw(w, out, outlen);
	free(z);
	w_progress(w);
	return w->err == 0 && !w->cancelled ? 0 : -1;
}

/* Copies a stored section from another mapped index as is. */
static int
w_copy(struct writer *w, const struct toc_ent *src, const uint8_t *map)
{
	struct toc_ent *t;

	if (w_align(w) != 0)
		return -1;
	XGROW(w->toc, w->cap_toc, w->n_toc + 1);
	t = &w->toc[w->n_toc++];
	*t = *src;
	t->off = w->off;
	return w_raw(w, map + src->off, src->len);
}

static void
pk_str(msgpack_packer *pk, const char *s)
{
	size_t n = strlen(s);

	msgpack_pack_str(pk, n);
	msgpack_pack_str_body(pk, s, n);
}

static void
pk_u64(msgpack_packer *pk, const char *key, uint64_t v)
{
	pk_str(pk, key);
	msgpack_pack_uint64(pk, v);
}

/* Header: msgpack map (doc/FORMAT.md). */
static void
pack_header(msgpack_sbuffer *sb, const struct src_key *key,
    const char *src_path, const struct snapshot *s,
    const struct hdr_trace *tr, const struct hdr_tl *tl, uint32_t n_tl,
    const struct toc_ent *toc, size_t n_toc)
{
	msgpack_packer pk;
	uint32_t i;

	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 8);
	pk_str(&pk, "format");
	pk_str(&pk, "snapview-index");
	pk_u64(&pk, "version", IDX_VERSION);
	pk_str(&pk, "abi");
	msgpack_pack_array(&pk, 8);
	msgpack_pack_uint64(&pk, IDX_ENDIAN_MARK);
	msgpack_pack_uint64(&pk, sizeof(struct snap_frame));
	msgpack_pack_uint64(&pk, sizeof(struct snap_segment));
	msgpack_pack_uint64(&pk, sizeof(struct snap_block));
	msgpack_pack_uint64(&pk, sizeof(struct snap_annotation));
	msgpack_pack_uint64(&pk, sizeof(struct snap_setting));
	msgpack_pack_uint64(&pk, sizeof(struct idx_elem));
	msgpack_pack_uint64(&pk, sizeof(struct idx_lod_bucket));

	pk_str(&pk, "source");
	msgpack_pack_map(&pk, 4);
	pk_u64(&pk, "size", key->size);
	pk_u64(&pk, "mtime_ns", key->mtime_ns);
	pk_u64(&pk, "hash", key->hash);
	pk_str(&pk, "path");
	pk_str(&pk, src_path);

	pk_str(&pk, "snap");
	msgpack_pack_map(&pk, 5);
	pk_u64(&pk, "features", s->features);
	pk_u64(&pk, "protocol", (uint64_t)(s->protocol < 0 ? 0 : s->protocol));
	pk_u64(&pk, "source_size", s->source_size);
	pk_u64(&pk, "unknown_keys", s->unknown_keys);
	pk_str(&pk, "unknown_actions");
	msgpack_pack_array(&pk, s->n_unknown_actions);
	for (i = 0; i < s->n_unknown_actions; i++)
		msgpack_pack_uint64(&pk, s->unknown_actions[i]);

	pk_str(&pk, "traces");
	msgpack_pack_array(&pk, s->n_traces);
	for (i = 0; i < s->n_traces; i++) {
		msgpack_pack_map(&pk, 2);
		pk_u64(&pk, "n", tr[i].n);
		pk_u64(&pk, "cols", tr[i].cols);
	}
	pk_str(&pk, "timelines");
	msgpack_pack_array(&pk, n_tl);
	for (i = 0; i < n_tl; i++) {
		msgpack_pack_map(&pk, 8);
		pk_u64(&pk, "n", tl[i].n_events);
		pk_u64(&pk, "n_elems", tl[i].n_elems);
		pk_u64(&pk, "base_total", tl[i].base_total);
		pk_u64(&pk, "base_reserved", tl[i].base_reserved);
		pk_u64(&pk, "peak", tl[i].peak);
		pk_str(&pk, "peak_ev");
		msgpack_pack_int64(&pk, tl[i].peak_ev);
		pk_u64(&pk, "n_pre", tl[i].n_pre);
		pk_u64(&pk, "n_ghost", tl[i].n_ghost);
	}
	pk_str(&pk, "toc");
	msgpack_pack_array(&pk, (uint32_t)n_toc);
	for (i = 0; i < n_toc; i++) {
		msgpack_pack_array(&pk, 6);
		pk_str(&pk, toc[i].name);
		msgpack_pack_uint64(&pk, toc[i].off);
		msgpack_pack_uint64(&pk, toc[i].len);
		msgpack_pack_uint64(&pk, toc[i].raw);
		msgpack_pack_uint64(&pk, toc[i].comp);
		msgpack_pack_uint64(&pk, toc[i].hash);
	}
}

/* Writes the header and then the prelude at offset 0. */
static int
w_finish(struct writer *w, const struct src_key *key, const char *src_path,
    const struct snapshot *s, const struct hdr_trace *tr,
    const struct hdr_tl *tl, uint32_t n_tl)
{
	msgpack_sbuffer sb;
	uint8_t pre[IDX_PRELUDE_LEN];
	uint64_t hoff;
	ssize_t r;

	if (w->err != 0 || w->cancelled || w_align(w) != 0)
		return -1;
	hoff = w->off;
	msgpack_sbuffer_init(&sb);
	pack_header(&sb, key, src_path, s, tr, tl, n_tl, w->toc, w->n_toc);
	w_raw(w, sb.data, sb.size);
	memset(pre, 0, sizeof pre);
	memcpy(pre, IDX_MAGIC, IDX_MAGIC_LEN);
	put_u32(pre + IDX_OFF_VERSION, IDX_VERSION);
	put_u64(pre + IDX_OFF_HEADER_OFF, hoff);
	put_u64(pre + IDX_OFF_HEADER_LEN, sb.size);
	put_u64(pre + IDX_OFF_HEADER_HASH, XXH3_64bits(sb.data, sb.size));
	put_u64(pre + IDX_OFF_PRELUDE_HASH, XXH3_64bits(pre,
	    IDX_OFF_PRELUDE_HASH));
	msgpack_sbuffer_destroy(&sb);
	if (w->err != 0)
		return -1;
	r = pwrite(w->fd, pre, sizeof pre, 0);
	if (r != (ssize_t)sizeof pre) {
		w->err = r < 0 ? errno : EIO;
		return -1;
	}
	return 0;
}

/* Creates target.tmp.PID.N exclusively; returns the fd, or -1 with errno. */
static int
create_temp(const char *target, char **tmp)
{
	static unsigned counter;
	struct timespec ts;
	int i, fd;

	for (i = 0; i < 100; i++) {
		clock_gettime(CLOCK_REALTIME, &ts);
		xasprintf(tmp, "%s%s%ld.%u.%lx", target, IDX_TMP_INFIX,
		    (long)getpid(), counter++,
		    (unsigned long)(ts.tv_nsec ^ (long)ts.tv_sec));
		fd = open(*tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0)
			return fd;
		free(*tmp);
		*tmp = NULL;
		if (errno != EEXIST)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

/* A temp file of a killed build is removed by a later build into the same
 * target once it is this old and its builder is gone. */
#define IDX_TMP_STALE_S (10 * 60)

/* Removes TARGET.tmp.PID.N.RAND files (create_temp's names) whose
 * builder PID is no longer running, that are older than IDX_TMP_STALE_S
 * and that start with our magic: never a file this program did not
 * create, nor one a live build is writing. */
static void
clean_stale_temps(const char *target)
{
	char *dir = xstrdup(target), *slash = strrchr(dir, '/');
	const char *base = slash != NULL ? slash + 1 : target;
	size_t bl;
	DIR *dp;
	struct dirent *de;
	time_t now = time(NULL);

	if (slash != NULL)
		*slash = '\0';
	dp = opendir(slash == NULL ? "." : slash == dir ? "/" : dir);
	bl = strlen(base);
	while (dp != NULL && (de = readdir(dp)) != NULL) {
		const char *p = de->d_name;
		char *end, *path;
		long pid;
		struct stat st;

		if (strncmp(p, base, bl) != 0 ||
		    strncmp(p + bl, IDX_TMP_INFIX, strlen(IDX_TMP_INFIX)) != 0)
			continue;
		p += bl + strlen(IDX_TMP_INFIX);
		errno = 0;
		pid = strtol(p, &end, 10);
		if (end == p || *end != '.' || pid <= 0 || errno != 0)
			continue;
		if (pid == (long)getpid() ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue; /* its builder may still be at work */
		xasprintf(&path, "%s/%s", slash == NULL ? "." : slash == dir
		    ? "" : dir, de->d_name);
		if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		    now - st.st_mtime > IDX_TMP_STALE_S && may_replace(path))
			unlink(path);
		free(path);
	}
	if (dp != NULL)
		closedir(dp);
	free(dir);
}

/* ---- building --------------------------------------------------------- */

struct load_progress {
	const struct idx_opts *o;
};

static int
load_progress_cb(void *ctx, uint64_t done, uint64_t total)
{
	const struct idx_opts *o = ((struct load_progress *)ctx)->o;

	/* The parse is the first 90% of the work. */
	return o->progress(o->progress_ctx, done - done / 10, total);
}

static int
load_snapshot(const char *path, const struct idx_opts *o,
    struct snapshot **out, struct sv_error *err)
{
	struct snap_load_opts lo;
	struct load_progress lp = {o};

	memset(&lo, 0, sizeof lo);
	if (o->progress != NULL) {
		lo.progress = load_progress_cb;
		lo.progress_ctx = &lp;
	}
	if (o->load != NULL)
		return o->load(path, &lo, out, err);
	return snap_load_file(path, &lo, out, err);
}

static int
valid_section_name(const char *name)
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

/* Builds the extension sections opts asks for and ix lacks. */
static int
build_extensions(struct sv_index *ix, const struct snapshot *s,
    const struct idx_opts *o, struct sv_error *err)
{
	size_t i;

	for (i = 0; i < o->n_sections; i++) {
		const struct idx_section_builder *sb = &o->sections[i];
		const uint8_t *d;
		size_t n;
		struct idx_ext *e;
		uint8_t *data = NULL;
		size_t len = 0;

		if (!valid_section_name(sb->name))
			return sv_error_set(err, SV_ERR_USAGE, SV_NO_OFFSET,
			    "bad section name '%s'", sb->name);
		if (idx_section(ix, sb->name, &d, &n) == 0)
			continue;
		if (sb->build(s, sb->arg, &data, &len, err) != 0)
			return -1;
		ix->ext = xreallocarray(ix->ext, ix->n_ext + 1,
		    sizeof *ix->ext);
		e = &ix->ext[ix->n_ext++];
		snprintf(e->name, sizeof e->name, "%s", sb->name);
		e->data = data != NULL ? data : xmalloc(1);
		e->len = len;
	}
	return 0;
}

static int
missing_extensions(const struct sv_index *ix, const struct idx_opts *o)
{
	size_t i;
	const uint8_t *d;
	size_t n;

	for (i = 0; i < o->n_sections; i++)
		if (idx_section(ix, o->sections[i].name, &d, &n) != 0)
			return 1;
	return 0;
}

static int
w_extensions(struct writer *w, const struct sv_index *ix)
{
	size_t i;
	char name[IDX_MAX_SECTION_NAME + 8];

	for (i = 0; i < ix->n_ext; i++) {
		snprintf(name, sizeof name, "%s%s", IDX_SEC_EXT_PREFIX,
		    ix->ext[i].name);
		if (w_section(w, name, ix->ext[i].data, ix->ext[i].len,
			IDX_COMP_LZ4) != 0)
			return -1;
	}
	return 0;
}

static void
hdr_from_tl(struct hdr_tl *h, const struct idx_timeline *tl)
{
	h->n_events = tl->n_events;
	h->n_elems = tl->n_elems;
	h->base_total = tl->base_total;
	h->base_reserved = tl->base_reserved;
	h->peak = tl->peak;
	h->peak_ev = tl->peak_ev;
	h->n_pre = tl->n_pre;
	h->n_ghost = tl->n_ghost;
}

static uint32_t
trace_cols(const struct snap_trace *t)
{
	return (t->time_us != NULL ? HDR_COL_TIME : 0) |
	    (t->compile_context != NULL ? HDR_COL_CTX : 0) |
	    (t->user_metadata != NULL ? HDR_COL_META : 0);
}

static int
w_col(struct writer *w, uint32_t d, const char *col, const void *p,
    uint64_t n, size_t rec)
{
	char name[IDX_MAX_SECTION_NAME];

	snprintf(name, sizeof name, IDX_SEC_DEV_FMT, (unsigned)d, col);
	return w_section(w, name, p, n * rec, IDX_COMP_NONE);
}

/* Writes the whole-snapshot sections. */
static int
w_snapshot(struct writer *w, const struct snapshot *s)
{
	/* strings and annotations are stored as they are and used in place:
	 * decompressing them cost a reopen more than all else (a few MB
	 * next to hundreds of MB of columns) */
	w_section(w, IDX_SEC_STRS_DATA, s->strs.data, s->strs.len,
	    IDX_COMP_NONE);
	w_section(w, IDX_SEC_STRS_OFF, s->strs.off, (uint64_t)s->strs.n * 8,
	    IDX_COMP_NONE);
	w_section(w, IDX_SEC_FRAMES, s->frames,
	    (uint64_t)s->n_frames * sizeof *s->frames, IDX_COMP_LZ4);
	w_section(w, IDX_SEC_STACK_OFF, s->stack_off,
	    ((uint64_t)s->n_stacks + 1) * 4, IDX_COMP_LZ4);
	w_section(w, IDX_SEC_STACK_FRAMES, s->stack_frames,
	    s->n_stack_frames * 4, IDX_COMP_LZ4);
	w_section(w, IDX_SEC_SEGMENTS, s->segments,
	    (uint64_t)s->n_segments * sizeof *s->segments, IDX_COMP_NONE);
	w_section(w, IDX_SEC_BLOCKS, s->blocks,
	    (uint64_t)s->n_blocks * sizeof *s->blocks, IDX_COMP_NONE);
	w_section(w, IDX_SEC_ANNOTATIONS, s->annotations,
	    (uint64_t)s->n_annotations * sizeof *s->annotations,
	    IDX_COMP_NONE);
	return w_section(w, IDX_SEC_SETTINGS, s->settings,
	    (uint64_t)s->n_settings * sizeof *s->settings, IDX_COMP_LZ4);
}

static int
w_trace(struct writer *w, uint32_t d, const struct snap_trace *t)
{
	w_col(w, d, IDX_COL_ACTION, t->action, t->n, 1);
	w_col(w, d, IDX_COL_ADDR, t->addr, t->n, 8);
	w_col(w, d, IDX_COL_SIZE, t->size, t->n, 8);
	w_col(w, d, IDX_COL_STREAM, t->stream, t->n, 8);
	w_col(w, d, IDX_COL_STACK, t->stack, t->n, 4);
	if (t->time_us != NULL)
		w_col(w, d, IDX_COL_TIME, t->time_us, t->n, 8);
	if (t->compile_context != NULL)
		w_col(w, d, IDX_COL_CTX, t->compile_context, t->n, 4);
	if (t->user_metadata != NULL)
		w_col(w, d, IDX_COL_META, t->user_metadata, t->n, 4);
	return w->err == 0 && !w->cancelled ? 0 : -1;
}

static int
w_timeline(struct writer *w, uint32_t d, const struct idx_timeline *tl,
    const struct idx_lod_bucket *lod)
{
	w_col(w, d, IDX_COL_ELEMS, tl->elems, tl->n_elems,
	    sizeof *tl->elems);
	w_col(w, d, IDX_COL_EV_ELEM, tl->ev_elem, tl->n_events, 8);
	w_col(w, d, IDX_COL_TOTAL, tl->total, tl->n_events, 8);
	w_col(w, d, IDX_COL_RESERVED, tl->reserved, tl->n_events, 8);
	return w_col(w, d, IDX_COL_LOD, lod, idx_lod_count(tl->n_events, NULL),
	    sizeof *lod);
}

static uint64_t
estimate_size(const struct snapshot *s)
{
	uint64_t e = s->strs.len + (uint64_t)s->n_blocks * 40, i;

	for (i = 0; i < s->n_traces; i++)
		e += s->traces[i].n * (1 + 8 * 3 + 4 + 24 + 3 + 56 / 2 +
		    (s->traces[i].time_us != NULL ? 8 : 0));
	return e;
}

/*
 * A build overlaps its phases on a second thread (the first open is what
 * the user waits for). Both jobs only read the snapshot, as the main
 * thread does meanwhile (timelines); each is joined before anything it
 * reads is freed, and the writer is used by one thread at a time (the
 * trace job is joined before the main thread writes again). Without a
 * thread, a job runs in place.
 */
struct ext_job {
	pthread_t th;
	int running;             /* started and not joined */
	struct sv_index ext;     /* the sections built */
	const struct snapshot *s;
	const struct idx_opts *o;
	struct sv_error err;
	int rc;
};

static void *
ext_job_run(void *arg)
{
	struct ext_job *j = arg;

	j->rc = build_extensions(&j->ext, j->s, j->o, &j->err);
	return NULL;
}

static void
ext_job_start(struct ext_job *j, const struct snapshot *s,
    const struct idx_opts *o)
{
	memset(j, 0, sizeof *j);
	j->s = s;
	j->o = o;
	sv_error_clear(&j->err);
	if (o->n_sections == 0)
		return;
	if (pthread_create(&j->th, NULL, ext_job_run, j) == 0)
		j->running = 1;
	else
		ext_job_run(j);
}

/* Waits for the job (again: a no-op); -1 with err set if it failed. */
static int
ext_job_join(struct ext_job *j, struct sv_error *err)
{
	if (j->running) {
		pthread_join(j->th, NULL);
		j->running = 0;
	}
	if (j->rc != 0) {
		if (err != NULL)
			*err = j->err;
		return -1;
	}
	return 0;
}

static void
ext_job_free(struct ext_job *j)
{
	ext_job_join(j, NULL);
	while (j->ext.n_ext > 0)
		free(j->ext.ext[--j->ext.n_ext].data);
	free(j->ext.ext);
	j->ext.ext = NULL;
}

static int w_trace(struct writer *w, uint32_t d, const struct snap_trace *t);

/* Writes one device's trace columns (w_trace). */
struct trace_job {
	pthread_t th;
	int running;
	struct writer *w;
	uint32_t d;
	const struct snap_trace *t;
};

static void *
trace_job_run(void *arg)
{
	struct trace_job *j = arg;

	(void)w_trace(j->w, j->d, j->t); /* failures stay in w */
	return NULL;
}

static void
trace_job_start(struct trace_job *j, struct writer *w, uint32_t d,
    const struct snap_trace *t)
{
	memset(j, 0, sizeof *j);
	j->w = w;
	j->d = d;
	j->t = t;
	if (t == NULL)
		return;
	if (pthread_create(&j->th, NULL, trace_job_run, j) == 0)
		j->running = 1;
	else
		trace_job_run(j);
}

static void
trace_job_join(struct trace_job *j)
{
	if (j->running) {
		pthread_join(j->th, NULL);
		j->running = 0;
	}
}

/* Streams s (heap, consumed: trace columns are freed as written) into the
 * open temp file. Extension sections come from the job, joined here
 * before the first trace column is freed. */
static int
write_index(struct writer *w, struct snapshot *s, const struct src_key *key,
    const char *src_path, struct ext_job *job, struct sv_error *err)
{
	uint32_t n_dev = snap_device_count(s), d;
	struct hdr_trace *tr;
	struct hdr_tl *tl;
	uint8_t pre[IDX_PRELUDE_LEN];
	int r = -1;

	tr = xcalloc(s->n_traces + 1, sizeof *tr);
	tl = xcalloc(n_dev + 1, sizeof *tl);
	for (d = 0; d < s->n_traces; d++) {
		tr[d].n = s->traces[d].n;
		tr[d].cols = trace_cols(&s->traces[d]);
	}
	w->est = estimate_size(s);
	/* A prelude that fails its checksum until the real one is written:
	 * the magic says the file is ours, the zero hash that it is not
	 * complete. */
	memset(pre, 0, sizeof pre);
	memcpy(pre, IDX_MAGIC, IDX_MAGIC_LEN);
	w_raw(w, pre, sizeof pre);
	w_snapshot(w, s);
	for (d = 0; d < n_dev && w->err == 0 && !w->cancelled; d++) {
		struct idx_timeline t;
		struct idx_lod_bucket *lod;
		struct trace_job tj;
		int tl_rc;

		/* the trace columns are written while the timeline is
		 * computed from them */
		trace_job_start(&tj, w, d,
		    d < s->n_traces ? &s->traces[d] : NULL);
		tl_rc = idx_timeline_build(s, d, &t, err);
		trace_job_join(&tj);
		if (tl_rc != 0)
			goto out;
		if (ext_job_join(job, err) != 0) {
			idx_timeline_destroy(&t);
			goto out;
		}
		if (d < s->n_traces)
			snap_trace_free_columns(&s->traces[d]);
		if (w->err != 0 || w->cancelled) {
			idx_timeline_destroy(&t);
			break;
		}
		lod = xmalloc((idx_lod_count(t.n_events, NULL) + 1) *
		    sizeof *lod);
		idx_lod_fill(&t, lod);
		w_timeline(w, d, &t, lod);
		hdr_from_tl(&tl[d], &t);
		free(lod);
		idx_timeline_destroy(&t);
	}
	for (; d < s->n_traces && w->err == 0; d++) {
		/* empty traces past the last device with data */
		w_trace(w, d, &s->traces[d]);
	}
	if (ext_job_join(job, err) != 0)
		goto out;
	w_extensions(w, &job->ext);
	if (w_finish(w, key, src_path, s, tr, tl, n_dev) == 0)
		r = 0;
out:
	if (r != 0 && w->cancelled)
		sv_error_set(err, SV_ERR_CANCELLED, SV_NO_OFFSET, "cancelled");
	else if (r != 0 && w->err != 0)
		sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
		    strerror(w->err));
	free(tr);
	free(tl);
	return r;
}

/* Rewrites a mapped index with its sections plus the extensions it
 * lacked (held in ix->ext, heap). */
static int
rewrite_index(struct writer *w, const struct sv_index *ix,
    const struct src_key *key, const char *src_path, struct sv_error *err)
{
	const struct snapshot *s = ix->snap;
	struct hdr_trace *tr;
	struct hdr_tl *tl;
	size_t i, pl = strlen(IDX_SEC_EXT_PREFIX);
	uint8_t pre[IDX_PRELUDE_LEN];
	uint32_t d;
	int r;

	tr = xcalloc(s->n_traces + 1, sizeof *tr);
	tl = xcalloc(ix->n_devs + 1, sizeof *tl);
	for (d = 0; d < s->n_traces; d++) {
		tr[d].n = s->traces[d].n;
		tr[d].cols = trace_cols(&s->traces[d]);
	}
	for (d = 0; d < ix->n_devs; d++)
		hdr_from_tl(&tl[d], &ix->devs[d].tl);
	memset(pre, 0, sizeof pre);
	memcpy(pre, IDX_MAGIC, IDX_MAGIC_LEN);
	w_raw(w, pre, sizeof pre);
	for (i = 0; i < ix->n_toc; i++)
		if (strncmp(ix->toc[i].name, IDX_SEC_EXT_PREFIX, pl) != 0)
			w_copy(w, &ix->toc[i], ix->map);
	w_extensions(w, ix);
	r = w_finish(w, key, src_path, s, tr, tl, ix->n_devs);
	if (r != 0)
		sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
		    strerror(w->err ? w->err : EIO));
	free(tr);
	free(tl);
	return r;
}

/* In-memory index: the loaded snapshot plus heap timelines. */
static int
build_memory(const char *path, const struct idx_opts *o,
    struct sv_index **out, struct sv_error *err)
{
	struct sv_index *ix = xcalloc(1, sizeof *ix);
	uint32_t d;

	if (load_snapshot(path, o, &ix->snap, err) != 0) {
		free(ix);
		return -1;
	}
	ix->in_memory = 1;
	ix->built = 1;
	ix->source_size = ix->snap->source_size;
	ix->n_devs = snap_device_count(ix->snap);
	ix->devs = xcalloc(ix->n_devs + 1, sizeof *ix->devs);
	for (d = 0; d < ix->n_devs; d++) {
		if (idx_timeline_build(ix->snap, d, &ix->devs[d].tl, err) != 0)
			goto fail;
		idx_lod_build(&ix->devs[d].lod, &ix->devs[d].tl);
	}
	if (build_extensions(ix, ix->snap, o, err) != 0)
		goto fail;
	*out = ix;
	return 0;
fail:
	index_free(ix);
	return -1;
}

/* Finishes a written temp file: maps it, checks it, renames it to target
 * (when target is absent or ours). On success *out is the mapped index. */
static int
publish(int fd, const char *tmp, const char *target,
    const struct src_key *key, const struct idx_opts *o,
    struct sv_index **out, struct sv_error *err)
{
	char why[256];

	if (map_index(fd, key, 1, out, why, sizeof why) != IDX_OK) {
		unlink(tmp);
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET,
		    "index just written does not read back: %s", why);
	}
	if (!may_replace(target)) {
		/* Someone put a file there meanwhile: leave it alone and
		 * keep using our (now unlinked) mapping. */
		warnf(o, "%s: not an index, left alone; index kept in memory",
		    target);
		unlink(tmp);
		(*out)->in_memory = 1;
		return 0;
	}
	if (rename(tmp, target) != 0) {
		int e = errno;

		unlink(tmp);
		idx_close(*out);
		*out = NULL;
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET,
		    "cannot rename %s: %s", tmp, strerror(e));
	}
	(*out)->path = xstrdup(target);
	return 0;
}

/* Builds the index into target. Returns 0 with *out set; -1 with err set.
 * *consumed says whether a reload is needed to build in memory. */
static int
build_file(const char *path, const char *target, const struct src_key *key,
    const struct idx_opts *o, struct sv_index **out, struct sv_error *err)
{
	struct snapshot *s = NULL;
	struct ext_job job;
	struct writer w;
	char *tmp = NULL, *abs;
	int fd, r = -1;

	memset(&job, 0, sizeof job);
	memset(&w, 0, sizeof w);
	clean_stale_temps(target);
	fd = create_temp(target, &tmp);
	if (fd < 0)
		return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
		    strerror(errno));
	{
		/* the magic from the start, so a build killed while parsing
		 * leaves a file that a later one knows as ours */
		uint8_t pre[IDX_PRELUDE_LEN];

		memset(pre, 0, sizeof pre);
		memcpy(pre, IDX_MAGIC, IDX_MAGIC_LEN);
		if (pwrite(fd, pre, sizeof pre, 0) != (ssize_t)sizeof pre) {
			int e = errno;

			unlink(tmp);
			close(fd);
			free(tmp);
			return sv_error_set(err, SV_ERR_IO, SV_NO_OFFSET, "%s",
			    strerror(e ? e : EIO));
		}
	}
	if (load_snapshot(path, o, &s, err) == 0) {
		/* the extension sections are built meanwhile */
		ext_job_start(&job, s, o);
		w.fd = fd;
		w.o = o;
		w.src_size = key->size;
		abs = realpath(path, NULL);
		r = write_index(&w, s, key, abs != NULL ? abs : path, &job,
		    err);
		free(abs);
		ext_job_join(&job, NULL); /* before s goes */
	}
	snap_free(s);
	if (r == 0) {
		r = publish(fd, tmp, target, key, o, out, err);
		if (r == 0)
			(*out)->built = 1;
	} else {
		unlink(tmp);
	}
	ext_job_free(&job);
	free(w.toc);
	close(fd);
	free(tmp);
	return r;
}

/* Adds missing extension sections to a mapped index by rewriting it. */
static int
extend_file(struct sv_index **ixp, const char *target, const char *path,
    const struct src_key *key, const struct idx_opts *o, struct sv_error *err)
{
	struct sv_index *ix = *ixp, *nix = NULL;
	struct writer w;
	char *tmp = NULL, *abs;
	int fd, r;

	if (build_extensions(ix, ix->snap, o, err) != 0)
		return -1;
	fd = create_temp(target, &tmp);
	if (fd < 0) {
		warnf(o, "%s: cannot add sections (%s); kept in memory",
		    target, strerror(errno));
		return 0;
	}
	memset(&w, 0, sizeof w);
	w.fd = fd;
	abs = realpath(path, NULL);
	r = rewrite_index(&w, ix, key, abs != NULL ? abs : path, err);
	free(abs);
	free(w.toc);
	if (r == 0)
		r = publish(fd, tmp, target, key, o, &nix, err);
	else
		unlink(tmp);
	close(fd);
	free(tmp);
	if (r != 0) {
		warnf(o, "%s: cannot add sections (%s); kept in memory",
		    target, err->msg);
		sv_error_clear(err);
		return 0;
	}
	nix->built = 1;
	idx_close(ix);
	*ixp = nix;
	return 0;
}

/* Tries the index at ipath. 0: *out opened; 1: absent or unusable
 * (why/kind set). */
static int
try_open(const char *ipath, const struct src_key *key, int quick,
    struct sv_index **out, enum idx_why *kind, char *why, size_t wl)
{
	int fd = open(ipath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	*kind = IDX_OK;
	if (fd < 0) {
		if (errno == ENOENT)
			return 1;
		snprintf(why, wl, "%s", strerror(errno));
		*kind = errno == ELOOP ? IDX_FOREIGN : IDX_CORRUPT;
		return 1;
	}
	*kind = map_index(fd, key, quick, out, why, wl);
	close(fd);
	return *kind == IDX_OK ? 0 : 1;
}

int
idx_open(const char *path, const struct idx_opts *opts,
    struct sv_index **out, struct sv_error *err)
{
	struct idx_opts dflt;
	const struct idx_opts *o = opts;
	struct src_key key;
	char *cand[2] = {NULL, NULL}, why[256];
	int usable[2] = {1, 1}, n = 0, i, r, failed;
	struct sv_error e2;

	*out = NULL;
	if (o == NULL) {
		memset(&dflt, 0, sizeof dflt);
		o = &dflt;
	}
	if (o->no_cache)
		return build_memory(path, o, out, err);
	if (source_key(path, &key, err) != 0)
		return -1;

	/* Candidate locations, the preferred one first. */
	if (o->cache_dir != NULL) {
		if (idx_path_cache(path, o->cache_dir, &cand[n], err) != 0)
			return -1;
		n++;
	} else {
		char *beside = NULL, *cache = NULL;

		idx_path_beside(path, &beside, err);
		sv_error_clear(&e2);
		idx_path_cache(path, NULL, &cache, &e2);
		if (dir_writable(beside) || cache == NULL) {
			cand[n++] = beside;
			if (cache != NULL)
				cand[n++] = cache;
		} else {
			cand[n++] = cache;
			cand[n++] = beside;
		}
	}

	for (i = 0; i < n && !o->force_rebuild; i++) {
		enum idx_why kind;

		if (try_open(cand[i], &key, o->verify == IDX_VERIFY_QUICK, out,
			&kind, why, sizeof why) == 0) {
			r = 0;
			(*out)->path = xstrdup(cand[i]);
			if (missing_extensions(*out, o))
				r = extend_file(out, cand[i], path, &key, o,
				    err);
			goto done;
		}
		if (kind == IDX_FOREIGN) {
			warnf(o, "%s: %s, left alone", cand[i],
			    why);
			usable[i] = 0;
		} else if (kind != IDX_OK) {
			warnf(o, "%s: %s; rebuilding", cand[i], why);
		}
	}
	for (i = 0; i < n && o->force_rebuild; i++)
		if (!may_replace(cand[i])) {
			warnf(o, "%s: not an index, left alone", cand[i]);
			usable[i] = 0;
		}

	/* Build into the first location that takes a file. A location that
	 * fails is told about once: on its own line when a later one takes
	 * the index, else in the one "working in memory" line. */
	failed = -1;
	for (i = 0; i < n; i++) {
		if (!usable[i])
			continue;
		mkdir_parents(cand[i]);
		sv_error_clear(&e2);
		r = build_file(path, cand[i], &key, o, out, &e2);
		if (r == 0) {
			if (failed >= 0)
				warnf(o, "%s: cannot write the index (%s)",
				    cand[failed], why);
			goto done;
		}
		if (e2.code != SV_ERR_IO) {
			/* bad input or cancelled: no point elsewhere */
			*err = e2;
			goto done;
		}
		snprintf(why, sizeof why, "%s", e2.msg);
		failed = i;
	}
	if (failed >= 0)
		warnf(o, "%s: cannot write the index (%s); working in memory",
		    cand[failed], why);
	else
		warnf(o, "%s: no index written; working in memory", path);
	r = build_memory(path, o, out, err);
done:
	free(cand[0]);
	free(cand[1]);
	return r;
}

void
idx_close(struct sv_index *ix)
{
	index_free(ix);
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
