/*
 * Number formatting for text output.
 */
#include "config.h"

#include "util/units.h"

#include <inttypes.h>
#include <stdio.h>

#define SV_UNITS 7

static const char *const size_unit[SV_UNITS] = {"B", "KiB", "MiB", "GiB",
    "TiB", "PiB", "EiB"};

/*
 * Integers only: printf("%.1f") of a double rounds a tie such as 1.25 to
 * even ("1.2") while the viewer rounded it up ("1.3"), so the same size
 * read differently in a command and on the screen. bytes = q * d + r with
 * d = 1024^unit; the tenths are q * 10 plus r * 10 / d rounded half up.
 * r * 10 + d / 2 < 10.5 * 2^60 fits in 64 bits for every unit up to EiB.
 */
int
sv_size_tenths(uint64_t bytes, uint64_t *tenths)
{
	int unit;

	*tenths = 0;
	if (bytes < 1024)
		return 0;
	for (unit = 1; unit < SV_UNITS; unit++) {
		uint64_t d = (uint64_t)1 << (10 * unit);

		*tenths = bytes / d * 10 + (bytes % d * 10 + d / 2) / d;
		if (*tenths < 10240)
			break;
	}
	return unit < SV_UNITS ? unit : SV_UNITS - 1;
}

const char *
sv_size_unit(int unit)
{
	return unit >= 0 && unit < SV_UNITS ? size_unit[unit] : "?";
}

char *
sv_fmt_size(char *buf, size_t size, uint64_t bytes)
{
	uint64_t t;
	int unit = sv_size_tenths(bytes, &t);

	if (unit == 0)
		snprintf(buf, size, "%" PRIu64 " B", bytes);
	else
		snprintf(buf, size, "%" PRIu64 ".%" PRIu64 " %s", t / 10,
		    t % 10, size_unit[unit]);
	return buf;
}

char *
sv_fmt_size_delta(char *buf, size_t size, uint64_t a, uint64_t b)
{
	char t[32];

	snprintf(buf, size, "%s%s", a == b ? "" : b > a ? "+" : "-",
	    sv_fmt_size(t, sizeof t, b > a ? b - a : a - b));
	return buf;
}

char *
sv_fmt_count(char *buf, size_t size, uint64_t n)
{
	char tmp[32];
	int len, i;
	size_t o = 0;

	if (size == 0)
		return buf;
	len = snprintf(tmp, sizeof tmp, "%" PRIu64, n);
	for (i = 0; i < len && o + 1 < size; i++) {
		if (i > 0 && (len - i) % 3 == 0) {
			buf[o++] = ',';
			if (o + 1 >= size)
				break;
		}
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
