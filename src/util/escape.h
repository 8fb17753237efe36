#ifndef SNAPVIEW_UTIL_ESCAPE_H
#define SNAPVIEW_UTIL_ESCAPE_H
/*
 * Making strings from a snapshot safe to show. A file is untrusted: a
 * frame name could hold ESC sequences that drive the terminal. Every
 * string from a file goes through one of these before it is printed.
 */
#include <stddef.h>
#include <stdio.h>

/* Writes s[0..len) into buf (size bytes, always NUL-terminated) with C0
 * controls, DEL, C1 controls (U+0080..U+009F) and invalid UTF-8 bytes
 * shown as \xNN (and \n, \t, \r, \e, \\ as such); invisible format
 * characters (bidi controls, zero-width characters, BOM, soft hyphen) as
 * \u{XXXX}. Other valid printable UTF-8 passes through. Returns the
 * length the full result would need (like snprintf), so a caller can
 * detect truncation. */
size_t sv_escape(char *buf, size_t size, const char *s, size_t len);

/* Same, written to f. */
void sv_escape_fputs(FILE *f, const char *s);

/* Writes s as a JSON string literal (with quotes) to f: \" \\ \uXXXX for
 * controls and the invisible format characters above; invalid UTF-8
 * bytes become U+FFFD. */
void sv_json_string(FILE *f, const char *s, size_t len);

#endif
