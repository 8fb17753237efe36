#ifndef SNAPVIEW_TUI_KEYS_H
#define SNAPVIEW_TUI_KEYS_H
/*
 * Key names and the keymap built from actions.h. Key codes are curses
 * codes (characters, KEY_*); this header does not need curses.
 */
#include <stddef.h>
#include <stdio.h>

#include "tui/actions.h"

/* Parses one key at s: a "<Name>" (Left, Right, Up, Down, PgUp, PgDn,
 * Home, End, Enter, Tab, BTab, Esc, Space, Backspace, F1..F12, C-x) or a
 * single UTF-8 character. Stores its length in *len; returns the code, or
 * -1 when s does not start with a key. */
int keys_parse(const char *s, size_t *len);

/* Name of key code k for display ("<Left>", "q"); static buffer. */
const char *keys_name(int k);

/* Action bound to key k in the viewer's keymap, or ACT_NONE. */
enum action keys_action(int k);

/* Action bound to key k in keymap km (KM_*, actions.h), or ACT_NONE. */
enum action keys_action_in(int k, unsigned km);

/* Action with script name name (length len), or ACT_NONE. */
enum action keys_action_by_name(const char *name, size_t len);

/* Script name, keys, help and keymaps (KM_*) of an action. */
const char *keys_action_name(enum action a);
const char *keys_action_key(enum action a, int which);
const char *keys_action_help(enum action a);
unsigned keys_action_keymaps(enum action a);

/* The key of a as the help and the status lines show it, in buf: a
 * printable key rather than an arrow ("h", not "<Left>"), a named one
 * without its brackets ("Enter"). */
const char *keys_action_shown(enum action a, char *buf, size_t size);

/* Writes the action table to f, for snapview --list-table actions: one
 * line per action, in the table's order, of five fields separated by
 * tabs: the script name, the first key, the second key (empty when
 * none), the keymaps it is bound in (view, ranks, compare, separated by
 * commas) and the help text, all as actions.h spells them. */
void keys_list(FILE *f);

/* A status line's hint into buf: fmt with each "%k" replaced by the key
 * of the next argument, an enum action, as keys_action_shown() gives it
 * ("%k/%k move", ACT_LEFT, ACT_RIGHT: "h/l move"). */
void keys_hint(char *buf, size_t size, const char *fmt, ...);

#endif
