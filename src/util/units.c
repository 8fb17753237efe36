/*
 * Number formatting for text output.
 */
#include "config.h"

#include "util/units.h"

#include <inttypes.h>
#include <stdio.h>

char *
sv_fmt_size(char *buf, size_t size, uint64_t bytes)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB",
					   "PiB", "EiB"};
	double v = (double)bytes;
	int k = 0;

	if (bytes < 1024) {
		snprintf(buf, size, "%" PRIu64 " B", bytes);
		return buf;
	}
	while (v >= 1024.0 && k < 6) {
		v /= 1024.0;
		k++;
	}
	if (v >= 1023.95 && k < 6) {
		v /= 1024.0;
		k++;
	}
	snprintf(buf, size, "%.1f %s", v, unit[k]);
	return buf;
}

char *
sv_fmt_count(char *buf, size_t size, uint64_t n)
{
	char tmp[32];
	int len = snprintf(tmp, sizeof tmp, "%" PRIu64, n), i, o = 0;

	for (i = 0; i < len && (size_t)o + 2 < size; i++) {
		if (i > 0 && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}

char *
sv_fmt_vz_bytes(char *buf, size_t size, uint64_t bytes)
{
	static const char *const unit[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi",
	    "Ei"};
	double x = (double)bytes;
	int u = 0;

	while (x >= 1024.0 && u < 6) {
		x /= 1024.0;
		u++;
	}
	snprintf(buf, size, "%3.1f%sB", x, unit[u]);
	return buf;
}
