/*
 * Key names and the keymaps, all generated from ACTION_INFO; the keys of
 * an action as the help screens and status lines show them.
 */
#include "config.h"

#include "tui/keys.h"

#include <curses.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct {
	const char *name, *k1, *k2;
	unsigned km;
	const char *help;
} actions[] = {
    {"", "", "", 0, ""},
#define ACTION_ROW(id, name, k1, k2, km, help) {name, k1, k2, km, help},
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
	return keys_action_in(k, KM_VIEW);
}

enum action
keys_action_in(int k, unsigned km)
{
	size_t i, len;

	if (k == KEY_ENTER || k == '\r')
		k = '\n';
	for (i = 1; i < ACT_COUNT; i++) {
		if ((actions[i].km & km) == 0)
			continue;
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

unsigned
keys_action_keymaps(enum action a)
{
	return a < ACT_COUNT ? actions[a].km : 0;
}

const char *
keys_action_shown(enum action a, char *buf, size_t size)
{
	const char *k = keys_action_key(a, 0), *k2 = keys_action_key(a, 1);
	size_t n;

	if (k[0] == '<' && k2[0] != '\0' && k2[0] != '<')
		k = k2;
	n = strlen(k);
	if (k[0] == '<' && n > 2)
		snprintf(buf, size, "%.*s", (int)(n - 2), k + 1);
	else
		snprintf(buf, size, "%s", k);
	return buf;
}

void
keys_list(FILE *f)
{
	static const struct {
		unsigned km;
		const char *name;
	} maps[] = {
	    {KM_VIEW, "view"}, {KM_RANKS, "ranks"}, {KM_COMPARE, "compare"},
	};
	size_t i, m;
	const char *sep;

	for (i = 1; i < ACT_COUNT; i++) {
		fprintf(f, "%s\t%s\t%s\t", actions[i].name, actions[i].k1,
		    actions[i].k2);
		sep = "";
		for (m = 0; m < sizeof maps / sizeof maps[0]; m++)
			if (actions[i].km & maps[m].km) {
				fprintf(f, "%s%s", sep, maps[m].name);
				sep = ",";
			}
		fprintf(f, "\t%s\n", actions[i].help);
	}
}

void
keys_hint(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	size_t len = 0;
	char k[16];

	if (size == 0)
		return;
	buf[0] = '\0';
	va_start(ap, fmt);
	for (; *fmt != '\0' && len + 1 < size; fmt++) {
		if (fmt[0] == '%' && fmt[1] == 'k') {
			keys_action_shown((enum action)va_arg(ap, int), k,
			    sizeof k);
			snprintf(buf + len, size - len, "%s", k);
			len += strlen(buf + len);
			fmt++;
			continue;
		}
		buf[len++] = *fmt;
		buf[len] = '\0';
	}
	va_end(ap);
}
