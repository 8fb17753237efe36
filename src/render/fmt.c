/*
 * Human-readable numbers for the TUI: sizes, addresses, counts, times.
 * Sizes and counts are util/units.c's, so the screen and the commands
 * write them alike; only the compact axis form is the screen's own.
 */
#include "config.h"

#include "render/fmt.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/units.h"

char *
fmt_size(char *buf, size_t size, uint64_t bytes)
{
	return sv_fmt_size(buf, size, bytes);
}

char *
fmt_size_short(char *buf, size_t size, uint64_t bytes)
{
	uint64_t t;
	int e = sv_size_tenths(bytes, &t);

	if (e == 0)
		snprintf(buf, size, "%" PRIu64 "B", bytes);
	else if (t >= 1000)
		snprintf(buf, size, "%" PRIu64 "%c", (t + 5) / 10,
		    sv_size_unit(e)[0]);
	else
		snprintf(buf, size, "%" PRIu64 ".%" PRIu64 "%c", t / 10,
		    t % 10, sv_size_unit(e)[0]);
	return buf;
}

char *
fmt_size_short_delta(char *buf, size_t size, uint64_t a, uint64_t b)
{
	char t[FMT_BUF];

	snprintf(buf, size, "%s%s", a == b ? "" : b > a ? "+" : "-",
	    fmt_size_short(t, sizeof t, b > a ? b - a : a - b));
	return buf;
}

char *
fmt_addr(char *buf, size_t size, uint64_t addr)
{
	snprintf(buf, size, "0x%" PRIx64, addr);
	return buf;
}

char *
fmt_count(char *buf, size_t size, uint64_t n)
{
	return sv_fmt_count(buf, size, n);
}

char *
fmt_event(char *buf, size_t size, int64_t ev)
{
	char tmp[FMT_BUF];

	if (ev < 0)
		snprintf(buf, size, "start");
	else
		snprintf(buf, size, "#%s", fmt_count(tmp, sizeof tmp,
		    (uint64_t)ev));
	return buf;
}

char *
fmt_duration(char *buf, size_t size, int64_t us)
{
	const char *sign = "+";
	uint64_t u;

	if (us < 0) {
		sign = "-";
		u = (uint64_t)0 - (uint64_t)us;
	} else
		u = (uint64_t)us;
	/* the start of the axis: no sign, no unit */
	if (u == 0)
		snprintf(buf, size, "0");
	else if (u < 1000)
		snprintf(buf, size, "%s%" PRIu64 "us", sign, u);
	else if (u < 60000000)
		snprintf(buf, size, "%s%" PRIu64 ".%03" PRIu64 "s", sign,
		    u / 1000000, u / 1000 % 1000);
	else
		snprintf(buf, size, "%s%" PRIu64 "m%02" PRIu64 ".%" PRIu64
		    "s", sign, u / 60000000, u / 1000000 % 60,
		    u / 100000 % 10);
	return buf;
}

int
fmt_parse_u64(const char *s, uint64_t *out)
{
	const char *p;
	char *end;
	int base = 10;
	unsigned long long v;

	while (isspace((unsigned char)*s))
		s++;
	if (*s == '#')
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		base = 16;
	for (p = s; *p != '\0' && base == 10; p++)
		if (isxdigit((unsigned char)*p) && !isdigit((unsigned char)*p))
			base = 16;
	if (*s == '\0' || *s == '-')
		return -1;
	errno = 0;
	/* Commas as typed from the screen ("1,204,551") are skipped. */
	{
		char clean[64];
		size_t n = 0;

		for (p = s; *p != '\0' && n + 1 < sizeof clean; p++)
			if (*p != ',')
				clean[n++] = *p;
		clean[n] = '\0';
		v = strtoull(clean, &end, base);
		if (errno != 0 || end == clean || *end != '\0')
			return -1;
	}
	*out = v;
	return 0;
}
