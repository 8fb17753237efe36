#ifndef SNAPVIEW_UTIL_ESCAPE_H
#define SNAPVIEW_UTIL_ESCAPE_H
/*
 * Making strings from a snapshot safe to show. A file is untrusted: a
 * frame name could hold ESC sequences that drive the terminal. Every
 * string from a file goes through one of these before it is printed.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The one UTF-8 decoder: the length (1..4) of the valid sequence at
 * s[0..n) and its code point in *cp, or 0 when it is not valid UTF-8
 * (a stray byte, a truncated sequence, an overlong form, a surrogate,
 * past U+10FFFF). */
size_t sv_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/* The length of s[0..len) without a UTF-8 sequence cut at its end (a
 * lead byte followed by fewer continuation bytes than it announces):
 * where text cut to fit a buffer may end so that no character is cut.
 * Bytes that cannot start a valid sequence stay (they are escaped one by
 * one). */
size_t sv_utf8_fit(const char *s, size_t len);

/* After n = snprintf(buf, size, ...): when the text did not fit, ends
 * buf at a code point boundary (sv_utf8_fit). Returns buf. */
char *sv_utf8_mend(char *buf, size_t size, int n);

/* Terminal cells of s, text already escaped (valid UTF-8 without wide
 * or combining characters): one per code point, that is one per byte
 * that does not continue a sequence. */
int sv_utf8_cells(const char *s);

/* Writes code point cp (at most U+10FFFF) as UTF-8 into out (room for 4
 * bytes); returns its length. The inverse of sv_utf8_decode(). */
int sv_utf8_encode(uint32_t cp, char *out);

/* 1 for a code point that draws nothing or nothing like itself, which
 * the functions below escape: Unicode's Default_Ignorable_Code_Point set,
 * format characters (Cf), line and paragraph separators, spaces other
 * than U+0020, U+2800, private-use characters (Co) and noncharacters
 * (the table: invisible.h, from Unicode 15.0). */
int sv_is_invisible(uint32_t cp);

/* Writes s[0..len) into buf (size bytes, always NUL-terminated) with C0
 * controls (ESC, newline and tab too), DEL, C1 controls (U+0080..U+009F)
 * and invalid UTF-8 bytes shown as \xNN, invisible code points
 * (sv_is_invisible) as \u{XXXX}: the only two escapes. Other valid UTF-8
 * passes through, a backslash too (a Windows path reads as in the file),
 * except one followed by x and two hex digits or by u{, which is \x5c:
 * read from the left, \xHH and \u{...} are escapes and any other
 * backslash is itself. Returns the length the full result would need
 * (like snprintf), so a caller can detect truncation; a result cut to
 * fit ends after a whole character or escape. */
size_t sv_escape(char *buf, size_t size, const char *s, size_t len);

/* Same, written to f. */
void sv_escape_fputs(FILE *f, const char *s);

/* Writes s as a JSON string literal (with quotes) to f: \" \\ \uXXXX for
 * controls and invisible code points (a surrogate pair \uXXXX\uXXXX past
 * U+FFFF); invalid UTF-8 bytes become U+FFFD. */
void sv_json_string(FILE *f, const char *s, size_t len);

#endif
