/*
 * Key script reader for headless runs (tests, the latency bench).
 */
#include "config.h"

#include "tui/script.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/keys.h"
#include "tui/mouse.h"
#include "util/xalloc.h"

static struct script_item *
push(struct script *sc, enum script_kind k)
{
	struct script_item *it;

	XGROW(sc->items, sc->cap, sc->n + 1);
	it = &sc->items[sc->n++];
	memset(it, 0, sizeof *it);
	it->kind = k;
	return it;
}

static int
parse_command(struct script *sc, const char *l)
{
	enum action act;
	const char *sp = strchr(l, ' ');
	size_t n = sp != NULL ? (size_t)(sp - l) : strlen(l);
	int c, r;

	if (n == 11 && strncmp(l, "dump-screen", n) == 0 && sp != NULL) {
		push(sc, SCR_DUMP)->arg = xstrdup(sp + 1);
		return 1;
	}
	if (n == 6 && strncmp(l, "resize", n) == 0 && sp != NULL &&
	    sscanf(sp + 1, "%d %d", &c, &r) == 2) {
		struct script_item *it = push(sc, SCR_RESIZE);

		it->cols = c;
		it->rows = r;
		return 1;
	}
	if (((n == 5 && strncmp(l, "click", n) == 0) ||
	    (n == 8 && strncmp(l, "wheel-up", n) == 0) ||
	    (n == 10 && strncmp(l, "wheel-down", n) == 0)) && sp != NULL &&
	    sscanf(sp + 1, "%d %d", &c, &r) == 2 && c >= 0 && r >= 0) {
		struct script_item *it = push(sc, SCR_MOUSE);

		it->key = l[0] == 'c' ? MOUSE_CLICK : n == 8 ? MOUSE_WHEEL_UP :
		    MOUSE_WHEEL_DOWN;
		it->cols = c;
		it->rows = r;
		return 1;
	}
	if (n == 4 && strncmp(l, "wait", n) == 0 && sp != NULL &&
	    (strcmp(sp + 1, "on") == 0 || strcmp(sp + 1, "off") == 0 ||
	    strcmp(sp + 1, "samples") == 0)) {
		push(sc, SCR_WAIT)->key = sp[1] == 's' ? SCR_WAIT_SAMPLES :
		    sp[2] == 'n' ? SCR_WAIT_BUILT : SCR_WAIT_NONE;
		return 1;
	}
	if (n == 10 && strncmp(l, "wait-modes", n) == 0 && sp == NULL) {
		push(sc, SCR_WAIT_MODES);
		return 1;
	}
	if (n == 4 && strncmp(l, "quit", n) == 0 && sp == NULL) {
		push(sc, SCR_QUIT);
		return 1;
	}
	act = sp == NULL ? keys_action_by_name(l, n) : ACT_NONE;
	if (act != ACT_NONE) {
		push(sc, SCR_ACTION)->key = act;
		return 1;
	}
	return 0;
}

static int
parse_keys(struct script *sc, const char *l, char *msg, size_t size,
    int lineno)
{
	size_t len;
	int k;

	while (*l != '\0') {
		k = keys_parse(l, &len);
		if (k < 0) {
			snprintf(msg, size, "line %d: bad key at '%.20s'",
			    lineno, l);
			return -1;
		}
		push(sc, SCR_KEY)->key = k;
		l += len;
	}
	return 0;
}

int
script_load(struct script *sc, const char *path, char *msg, size_t size)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int lineno = 0;

	memset(sc, 0, sizeof *sc);
	if (f == NULL) {
		snprintf(msg, size, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof line, f) != NULL) {
		size_t n = strcspn(line, "\r\n");

		lineno++;
		line[n] = '\0';
		if (line[0] == '\0' || line[0] == '#')
			continue;
		if (line[0] == ':' && parse_command(sc, line + 1))
			continue;
		if (parse_keys(sc, line, msg, size, lineno) != 0) {
			fclose(f);
			script_free(sc);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

void
script_free(struct script *sc)
{
	size_t i;

	for (i = 0; i < sc->n; i++)
		free(sc->items[i].arg);
	free(sc->items);
	memset(sc, 0, sizeof *sc);
}

const struct script_item *
script_next(struct script *sc)
{
	return sc->pos < sc->n ? &sc->items[sc->pos++] : NULL;
}
