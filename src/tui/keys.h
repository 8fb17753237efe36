#ifndef SNAPVIEW_TUI_KEYS_H
#define SNAPVIEW_TUI_KEYS_H
/*
 * Key names and the keymap built from actions.h. Key codes are curses
 * codes (characters, KEY_*); this header does not need curses.
 */
#include <stddef.h>

#include "tui/actions.h"

/* Parses one key at s: a "<Name>" (Left, Right, Up, Down, PgUp, PgDn,
 * Home, End, Enter, Tab, BTab, Esc, Space, Backspace, F1..F12, C-x) or a
 * single UTF-8 character. Stores its length in *len; returns the code, or
 * -1 when s does not start with a key. */
int keys_parse(const char *s, size_t *len);

/* Name of key code k for display ("<Left>", "q"); static buffer. */
const char *keys_name(int k);

/* Action bound to key k, or ACT_NONE. */
enum action keys_action(int k);

/* Action with script name name (length len), or ACT_NONE. */
enum action keys_action_by_name(const char *name, size_t len);

/* Script name, keys and help of an action. */
const char *keys_action_name(enum action a);
const char *keys_action_key(enum action a, int which);
const char *keys_action_help(enum action a);

#endif
