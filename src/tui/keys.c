/*
 * Key names and the default keymap, both generated from ACTION_INFO.
 */
#include "config.h"

#include "tui/keys.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

static const struct {
	const char *name, *k1, *k2, *help;
} actions[] = {
    {"", "", "", ""},
#define ACTION_ROW(id, name, k1, k2, help) {name, k1, k2, help},
    ACTION_INFO(ACTION_ROW)
#undef ACTION_ROW
};

static const struct {
	const char *name;
	int code;
} named[] = {
    {"Left", KEY_LEFT}, {"Right", KEY_RIGHT}, {"Up", KEY_UP},
    {"Down", KEY_DOWN}, {"PgUp", KEY_PPAGE}, {"PgDn", KEY_NPAGE},
    {"Home", KEY_HOME}, {"End", KEY_END}, {"Enter", '\n'},
    {"Tab", '\t'}, {"BTab", KEY_BTAB}, {"Esc", 27}, {"Space", ' '},
    {"Backspace", KEY_BACKSPACE}, {"Resize", KEY_RESIZE},
};

int
keys_parse(const char *s, size_t *len)
{
	const char *end;
	size_t i, n;
	int f;

	if (s[0] == '\0')
		return -1;
	if (s[0] != '<' || (end = strchr(s, '>')) == NULL || end == s + 1) {
		const unsigned char *u = (const unsigned char *)s;

		*len = u[0] < 0x80 ? 1 : u[0] < 0xe0 ? 2 : u[0] < 0xf0 ? 3 : 4;
		for (i = 1; i < *len; i++)
			if (s[i] == '\0')
				return -1;
		return u[0] < 0x80 ? u[0] : -1;
	}
	n = (size_t)(end - s - 1);
	*len = n + 2;
	for (i = 0; i < sizeof named / sizeof named[0]; i++)
		if (strlen(named[i].name) == n &&
		    strncmp(named[i].name, s + 1, n) == 0)
			return named[i].code;
	if (n == 3 && s[1] == 'C' && s[2] == '-')
		return s[3] & 0x1f;
	if ((n == 2 || n == 3) && s[1] == 'F' && sscanf(s + 2, "%d", &f) == 1 &&
	    f >= 1 && f <= 12)
		return KEY_F(f);
	return -1;
}

const char *
keys_name(int k)
{
	static char buf[16];
	size_t i;

	for (i = 0; i < sizeof named / sizeof named[0]; i++)
		if (named[i].code == k) {
			snprintf(buf, sizeof buf, "<%s>", named[i].name);
			return buf;
		}
	if (k >= KEY_F(1) && k <= KEY_F(12))
		snprintf(buf, sizeof buf, "<F%d>", k - KEY_F(0));
	else if (k > 0 && k < 32)
		snprintf(buf, sizeof buf, "<C-%c>", k + 'a' - 1);
	else if (k >= 32 && k < 127)
		snprintf(buf, sizeof buf, "%c", k);
	else
		snprintf(buf, sizeof buf, "<%d>", k);
	return buf;
}

enum action
keys_action(int k)
{
	size_t i, len;

	if (k == KEY_ENTER || k == '\r')
		k = '\n';
	for (i = 1; i < ACT_COUNT; i++) {
		if (actions[i].k1[0] != '\0' &&
		    keys_parse(actions[i].k1, &len) == k)
			return (enum action)i;
		if (actions[i].k2[0] != '\0' &&
		    keys_parse(actions[i].k2, &len) == k)
			return (enum action)i;
	}
	return ACT_NONE;
}

enum action
keys_action_by_name(const char *name, size_t len)
{
	size_t i;

	for (i = 1; i < ACT_COUNT; i++)
		if (strlen(actions[i].name) == len &&
		    strncmp(actions[i].name, name, len) == 0)
			return (enum action)i;
	return ACT_NONE;
}

const char *
keys_action_name(enum action a)
{
	return a < ACT_COUNT ? actions[a].name : "";
}

const char *
keys_action_key(enum action a, int which)
{
	if (a >= ACT_COUNT)
		return "";
	return which == 0 ? actions[a].k1 : actions[a].k2;
}

const char *
keys_action_help(enum action a)
{
	return a < ACT_COUNT ? actions[a].help : "";
}
