#ifndef SNAPVIEW_UTIL_GUNZIP_H
#define SNAPVIEW_UTIL_GUNZIP_H
/*
 * A gzip-compressed snapshot (`.pickle.gz`) read in bounded memory: the
 * compressed mapping is inflated as a stream (zlib) into an unlinked
 * temporary file, which is then mapped in its place, so the reader sees
 * the pickle's bytes as it sees any file's, and memory holds what the
 * page cache keeps, not the whole document.
 */
#include "util/err.h"
#include "util/mapfile.h"

/* Whether m's bytes start as gzip does (1f 8b). */
int mapfile_is_gzip(const struct mapfile *m);

/*
 * Replaces m, a mapping of gzip data (one member or several, as gzip
 * concatenates them), by a read-only mapping of what it inflates to,
 * written to an unlinked file in $TMPDIR (else /tmp); the caller closes
 * it with mapfile_close() as before. Returns 0, or -1 with err set: the
 * compressed input's byte offset and "cut off (the dump did not
 * finish?)" for a stream that ends early, "gzip: ..." for damaged data,
 * SV_ERR_IO for a temporary file that cannot be written (a full disk).
 * m is left as it was on failure.
 */
int mapfile_gunzip(struct mapfile *m, struct sv_error *err);

#endif
