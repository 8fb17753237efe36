#include "config.h"

#include "snapshot/snap_load.h"

int
snap_load_buffer(const uint8_t *buf, size_t len,
    const struct snap_load_opts *opts, struct snapshot **out,
    struct sv_error *err)
{
	(void)buf;
	(void)len;
	(void)opts;
	*out = NULL;
	return sv_error_set(err, SV_ERR_UNSUPPORTED, SV_NO_OFFSET,
	    "loader not written yet");
}

int
snap_load_file(const char *path, const struct snap_load_opts *opts,
    struct snapshot **out, struct sv_error *err)
{
	(void)path;
	return snap_load_buffer(NULL, 0, opts, out, err);
}
