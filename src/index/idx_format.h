#ifndef SNAPVIEW_INDEX_IDX_FORMAT_H
#define SNAPVIEW_INDEX_IDX_FORMAT_H
/*
 * Constants of the on-disk snapshot index (.snapidx). Constants only: the
 * layout is described in doc/FORMAT.md; the code is in idx_*.c.
 *
 *   [0, 64)          prelude (fixed, below), written last
 *   [64, header_off) sections, each starting on an IDX_ALIGN boundary
 *   [header_off, +header_len)  msgpack header: key, counts, TOC
 *
 * All integers are little-endian; fixed-width records are the in-memory
 * structs of snap_model.h / snap_stripe.h / idx_lod.h / idx_int.h, whose
 * sizes are recorded in the header ("abi") and checked on open.
 */
#include <stddef.h>
#include <stdint.h>

/* Prelude: magic, then the fields at these byte offsets (little-endian). */
#define IDX_MAGIC "SNAPIDX\x1a"
#define IDX_MAGIC_LEN 8
#define IDX_VERSION 4u
#define IDX_PRELUDE_LEN 64
#define IDX_OFF_VERSION 8      /* u32 */
#define IDX_OFF_FLAGS 12       /* u32, 0 */
#define IDX_OFF_HEADER_OFF 16  /* u64 */
#define IDX_OFF_HEADER_LEN 24  /* u64 */
#define IDX_OFF_HEADER_HASH 32 /* u64, XXH3_64bits of the header bytes */
#define IDX_OFF_PRELUDE_HASH 40 /* u64, XXH3_64bits of bytes [0, 40) */

/* Every section starts at a multiple of this (so columns map in place). */
#define IDX_ALIGN 64

/* Largest header accepted. A header holds the source key, the counts
 * and the TOC: a few hundred bytes, plus about 60 per extension
 * section. Unpacked, each msgpack item takes 24 bytes or more, so the
 * bound also bounds what a header can cost (idx_mp_bounded). */
#define IDX_MAX_HEADER (1u << 20)

/* Section compression (TOC field "comp"): none, LZ4 (LZ4's raw format,
 * no frame), or LZ4 in pieces: [u32 stored length, u32 raw length, LZ4
 * data] until the raw length, each piece at most IDX_LZ4_PIECE raw bytes
 * (sections over it). The writer makes pieces of IDX_LZ4_WPIECE raw
 * bytes (the last one shorter): small enough that a reader after a few
 * bytes (idx_reader_open()) decodes little more than it needs; LZ4's
 * window is 64 KiB, so the ratio hardly changes. */
#define IDX_COMP_NONE 0u
#define IDX_COMP_LZ4 1u
#define IDX_COMP_LZ4P 2u
#define IDX_LZ4_PIECE (4u << 20)
#define IDX_LZ4_WPIECE (256u << 10)

/* Written in the header's abi list; a reader on another byte order sees
 * a different value and rebuilds. */
#define IDX_ENDIAN_MARK 0x01020304u

/* Source key: XXH3_64bits over the first and the last IDX_KEY_SPAN bytes
 * of the source (the whole file when shorter than 2 spans). */
#define IDX_KEY_SPAN (1u << 20)

/* Level-of-detail pyramid: level j has buckets of 2^(IDX_LOD_MIN_SHIFT+j)
 * events. */
#define IDX_LOD_MIN_SHIFT 8
#define IDX_LOD_MAX_LEVELS 60

/* Devices a file can name (trace lists, segment devices): the loader
 * refuses more, and so does the index reader. */
#define IDX_MAX_DEVICES 65536u

/* Section names (TOC). Extension sections get the prefix "x.". */
#define IDX_SEC_COLDATA "coldata"       /* stripe payloads (not hashed
					   on a quick open) */
#define IDX_SEC_STRS_DATA "strs.data"   /* NUL-terminated strings */
#define IDX_SEC_STRS_OFF "strs.off"     /* u64 offset per string */
#define IDX_SEC_FRAMES "frames"         /* LZ4: struct snap_frame[] */
#define IDX_SEC_STACK_OFF "stack.off"   /* LZ4: u32[n_stacks + 1] */
#define IDX_SEC_STACK_FRAMES "stack.frames" /* LZ4: u32 frame ids */
#define IDX_SEC_SEGMENTS "segments"     /* struct snap_segment[] */
#define IDX_SEC_BLOCKS "blocks"         /* struct snap_block[] */
#define IDX_SEC_ANNOTATIONS "annotations" /* struct snap_annotation[] */
#define IDX_SEC_SETTINGS "settings"     /* LZ4: struct snap_setting[] */
#define IDX_SEC_DEVICES "devices"       /* struct idx_devrec[] */
#define IDX_SEC_EVDIR "evdir"           /* struct snap_stripedir[], events */
#define IDX_SEC_ELDIR "eldir"           /* struct snap_stripedir[], elements */
#define IDX_SEC_LATE "late"             /* u64 (element, free event) */
#define IDX_SEC_LOD "lod"               /* struct idx_lod_cum[] */
#define IDX_SEC_EXT_PREFIX "x."
#define IDX_MAX_SECTION_NAME 48

/* Extension sections without a bound of their own get this one:
 * IDX_EXT_BASE bytes plus IDX_EXT_PER bytes per event, segment and
 * (allocator) block of the snapshot. */
#define IDX_EXT_BASE (16u << 20)
#define IDX_EXT_PER 64u

/* Index file names. */
#define IDX_SUFFIX ".snapidx"
#define IDX_TMP_INFIX ".tmp."
#define IDX_CACHE_SUBDIR "snapview"

/* 0 when the msgpack bytes [p, p + len) hold one object whose every
 * array and map count fits in the bytes left (each item takes at least one
 * byte), so unpacking it allocates O(len); -1 otherwise. msgpack-c
 * allocates a container's items before reading them, so a 5-byte map32
 * header claiming 2^32 entries would ask for 128 GiB. (idx_map.c) */
int idx_mp_bounded(const uint8_t *p, size_t len);

#endif
