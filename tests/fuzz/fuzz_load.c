/*
 * Fuzz target: the snapshot loader (src/snapshot/snap_load.c over the
 * pickle reader), then everything a command does with a loaded model:
 * the timeline pairing and stats of each device, and the escaping of
 * every string. It also checks the escaping contract: sv_escape() output
 * never holds a C0/C1 control, DEL or ESC, and is valid to print.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats.h"
#include "fuzz.h"
#include "index/idx_timeline.h"
#include "snapshot/snap_load.h"
#include "util/escape.h"

/* Devices looked at per input: enough to cover multi-device files
 * without making an input with a trace list at index 65535 slow. */
#define MAX_DEVICES 8

static void
check_escaped(const char *s)
{
	static char buf[8192];
	const unsigned char *p = (const unsigned char *)buf;
	size_t i;

	sv_escape(buf, sizeof buf, s, strlen(s));
	for (i = 0; p[i] != '\0'; i++) {
		if (p[i] < 0x20 || p[i] == 0x7f)
			abort();
		/* U+0080..U+009F in UTF-8 is C2 80..C2 9F */
		if (p[i] == 0xc2 && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f)
			abort();
	}
}

static void
use_model(const struct snapshot *s)
{
	uint32_t d, i, n;

	for (i = 0; i < s->strs.n; i++)
		check_escaped(snap_str(s, i));
	n = snap_device_count(s);
	if (n > MAX_DEVICES)
		n = MAX_DEVICES;
	for (d = 0; d < n; d++) {
		struct idx_timeline tl;
		struct an_stats st;
		struct sv_error err;

		if (idx_timeline_build(s, d, &tl, &err) != 0)
			continue;
		an_stats(s, d, &tl, &st);
		idx_timeline_destroy(&tl);
	}
	(void)snap_format_label(s);
	(void)snap_default_device(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snapshot *s = NULL;
	struct sv_error err;

	sv_error_clear(&err);
	if (snap_load_buffer(data, size, NULL, &s, &err) != 0) {
		if (s != NULL || err.code == SV_OK || err.msg[0] == '\0')
			abort();
		return 0;
	}
	use_model(s);
	snap_free(s);
	return 0;
}
