/*
 * Walks every Unicode scalar value through sv_escape() and
 * sv_json_string() against a list of the code points that must be shown
 * escaped as invisible (tests/harden/invisible_set.py derives it from
 * Unicode's own data; the program's table is src/util/invisible.h):
 *
 *   listed:      text \u{xxxx} (at least 4 hex digits), JSON \uXXXX or
 *                a surrogate pair \uXXXX\uXXXX past U+FFFF;
 *   not listed:  passes through both unchanged (controls, '\\' and '"'
 *                aside), unless the list is marked partial;
 *   surrogates:  never valid UTF-8: text \xNN per byte, JSON U+FFFD.
 *
 * usage: escape_walk LIST     (exit 0 all agree, 1 a mismatch, 2 usage)
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/escape.h"

#define N_CP 0x110000

static const char *
json(const char *s, size_t len)
{
	static char out[64];
	FILE *f = fmemopen(out, sizeof out, "w");

	if (f == NULL)
		exit(2);
	sv_json_string(f, s, len);
	fclose(f);
	return out;
}

static int
is_control(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0);
}

int
main(int argc, char **argv)
{
	static uint8_t listed[N_CP];
	char line[64], in[8], want[64], got[64];
	unsigned long n_listed = 0, n_bad = 0, n_walked = 0;
	int partial = 0, k;
	uint32_t cp;
	FILE *f;

	if (argc != 2 || (f = fopen(argv[1], "r")) == NULL) {
		fprintf(stderr, "usage: escape_walk LIST\n");
		return 2;
	}
	while (fgets(line, sizeof line, f) != NULL) {
		unsigned long v;

		if (line[0] == '#') {
			partial |= strstr(line, "partial") != NULL;
			continue;
		}
		v = strtoul(line, NULL, 16);
		if (v >= N_CP)
			return 2;
		listed[v] = 1;
		n_listed++;
	}
	fclose(f);
	for (cp = 0; cp < N_CP; cp++) {
		const char *j;

		if (cp >= 0xd800 && cp <= 0xdfff) {
			/* the three bytes a surrogate would be: invalid */
			k = sv_utf8_encode(cp, in);
			sv_escape(got, sizeof got, in, (size_t)k);
			snprintf(want, sizeof want, "\\x%02x\\x%02x\\x%02x",
			    (unsigned char)in[0], (unsigned char)in[1],
			    (unsigned char)in[2]);
			j = json(in, (size_t)k);
			if (strcmp(got, want) != 0 ||
			    strcmp(j, "\"\\ufffd\\ufffd\\ufffd\"") != 0) {
				printf("U+%04X: text %s, JSON %s\n", cp, got,
				    j);
				n_bad++;
			}
			continue;
		}
		if (is_control(cp) || cp == '\\' || cp == '"')
			continue;
		n_walked++;
		k = sv_utf8_encode(cp, in);
		sv_escape(got, sizeof got, in, (size_t)k);
		j = json(in, (size_t)k);
		if (listed[cp]) {
			char jw[32];

			snprintf(want, sizeof want, "\\u{%04x}", cp);
			if (cp > 0xffff)
				snprintf(jw, sizeof jw, "\"\\u%04x\\u%04x\"",
				    0xd800 + ((cp - 0x10000) >> 10),
				    0xdc00 + ((cp - 0x10000) & 0x3ff));
			else
				snprintf(jw, sizeof jw, "\"\\u%04x\"", cp);
			if (strcmp(got, want) != 0 || strcmp(j, jw) != 0) {
				printf("U+%04X invisible: text %s, "
				    "JSON %s\n", cp, got, j);
				n_bad++;
			}
		} else if (!partial) {
			in[k] = '\0';
			snprintf(want, sizeof want, "\"%s\"", in);
			if (strcmp(got, in) != 0 || strcmp(j, want) != 0) {
				printf("U+%04X escaped, not in the list: "
				    "text %s, JSON %s\n", cp, got, j);
				n_bad++;
			}
		}
		if (n_bad > 50)
			break;
	}
	printf("%lu code points walked, %lu listed invisible%s, %lu wrong\n",
	    n_walked, n_listed, partial ? " (partial list)" : "", n_bad);
	return n_bad == 0 ? 0 : 1;
}
