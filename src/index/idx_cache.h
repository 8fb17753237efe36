#ifndef SNAPVIEW_INDEX_IDX_CACHE_H
#define SNAPVIEW_INDEX_IDX_CACHE_H
/*
 * The index cache directory ($XDG_CACHE_HOME/snapview, or --cache-dir):
 * its size limit, least-recently-used eviction, listing and clearing.
 *
 * An entry is a file whose name has the cache's pattern (16 hex digits,
 * '-', a name, ".snapidx"), that is a regular file owned by the invoking
 * user and that starts with the index magic: nothing else in the
 * directory is counted, listed or removed. "Last used" is the entry's
 * modification time: idx_open() sets it to now each time it opens a cache
 * entry, and a build writes a new file.
 *
 * Eviction is safe beside other snapview processes: one that has an
 * entry mapped keeps a valid mapping after the name is unlinked (the
 * pages stay until it unmaps), and an entry is unlinked only if the name
 * still refers to the very file that was checked (same device and inode,
 * compared right before the unlink). Two evictors racing at most unlink
 * what the other had already chosen.
 */
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* Default size limit: 10 GiB (doc/snapview.1 says why). */
#define IDX_CACHE_MAX_DEFAULT (10ull << 30)
#define IDX_CACHE_MAX_ENV "SNAPVIEW_CACHE_MAX"

struct idx_cache_entry {
	char *name;       /* file name in the cache directory (untrusted) */
	uint64_t size;    /* bytes */
	int64_t used;     /* last use: seconds since the epoch */
};

/* $XDG_CACHE_HOME/snapview, else $HOME/.cache/snapview; NULL when neither
 * is set (heap string). */
char *idx_cache_default_dir(void);

/* The size limit: SNAPVIEW_CACHE_MAX (bytes, or with a K, M, G or T
 * suffix, powers of 1024; 0 keeps only the index in use) or the default.
 * Returns 0, or -1 with err set for a value that does not parse (*max is
 * then the default). */
int idx_cache_limit(uint64_t *max, struct sv_error *err);

/* Parses a size like "10G", "512M", "1048576". Returns 0 or -1. */
int idx_cache_parse_size(const char *s, uint64_t *out);

/* The entries of dir, most recently used first. A missing directory has
 * none. Returns 0, or -1 with err set when dir cannot be read. */
int idx_cache_list(const char *dir, struct idx_cache_entry **out, size_t *n,
    struct sv_error *err);
void idx_cache_list_free(struct idx_cache_entry *e, size_t n);

/* Evicts entries of dir, least recently used first, until they take at
 * most max bytes; keep (a path, or NULL) is never evicted, even when it
 * alone is over the limit. Adds what went to *n_removed and *bytes (either
 * may be NULL). Returns 0, or -1 with err set when dir cannot be read. */
int idx_cache_trim(const char *dir, uint64_t max, const char *keep,
    uint64_t *n_removed, uint64_t *bytes, struct sv_error *err);

/* Removes every entry of dir (an index another process has mapped stays
 * valid for it), and temp files of builds whose process is gone. */
int idx_cache_clear(const char *dir, uint64_t *n_removed, uint64_t *bytes,
    struct sv_error *err);

#endif
