/*
 * sv_error: the one error type of every library layer.
 */
#include "config.h"

#include "util/err.h"

#include <stdio.h>
#include <string.h>

static const int errcode_status[] = {
#define SV_ERR_ROW(id, status, name) status,
    SV_ERRCODE_INFO(SV_ERR_ROW)
#undef SV_ERR_ROW
};

void
sv_error_clear(struct sv_error *err)
{
	err->code = SV_OK;
	err->offset = SV_NO_OFFSET;
	err->msg[0] = '\0';
}

int
sv_error_vset(struct sv_error *err, enum sv_errcode code, uint64_t offset,
    const char *fmt, va_list ap)
{
	if (err == NULL)
		return -1;
	err->code = code;
	err->offset = offset;
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	return -1;
}

int
sv_error_set(struct sv_error *err, enum sv_errcode code, uint64_t offset,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sv_error_vset(err, code, offset, fmt, ap);
	va_end(ap);
	return -1;
}

int
sv_errcode_status(enum sv_errcode code)
{
	if ((unsigned)code >= sizeof errcode_status / sizeof errcode_status[0])
		return 2;
	return errcode_status[code];
}
