/* gs_error.c -- message table and formatting of gapsim API errors. */
#include "gs_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct { const char *name, *text; } gs_err_table[GS_ERR__COUNT] = {
    [GS_OK] = {"ok", "success"},
    [GS_ERR_NOMEM] = {"out_of_memory", "out of memory"},
    [GS_ERR_IO] = {"io_error", "input/output error"},
    [GS_ERR_FORMAT] = {"bad_format", "malformed input"},
    [GS_ERR_UNSUPPORTED] = {"unsupported", "unsupported input"},
    [GS_ERR_LIMIT] = {"too_large", "size limit exceeded"},
    [GS_ERR_INVALID] = {"invalid", "invalid value"},
    [GS_ERR_DIM] = {"dimension_mismatch", "dimension mismatch"},
    [GS_ERR_RANGE] = {"out_of_range", "index out of range"},
    [GS_ERR_DUPLICATE] = {"duplicate", "duplicated entry"},
    [GS_ERR_NONFINITE] = {"not_finite", "NaN or Inf in data"},
    [GS_ERR_NOT_SYMMETRIC] = {"not_symmetric", "matrix not symmetric"},
    [GS_ERR_NOT_SPD] = {"not_spd", "matrix not positive definite"},
    [GS_ERR_SINGULAR] = {"singular", "singular system"},
    [GS_ERR_CHECK] = {"check_failed", "a computed result failed its check"},
};

const char *gs_err_name(gs_err code)
{
    return (code >= 0 && code < GS_ERR__COUNT) ? gs_err_table[code].name : "unknown";
}

const char *gs_err_str(gs_err code)
{
    return (code >= 0 && code < GS_ERR__COUNT) ? gs_err_table[code].text : "unknown error";
}

gs_err gs_errorf(gs_error *e, gs_err code, const char *field, const char *fmt, ...)
{
    if (!e)
        return code;
    e->code = code;
    e->lapack_info = 0;
    e->sys_errno = 0;
    snprintf(e->field, sizeof e->field, "%s", field ? field : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return code;
}

void gs_error_clear(gs_error *e)
{
    if (e)
        memset(e, 0, sizeof *e);
}

void gs_error_prefix_field(gs_error *e, const char *prefix)
{
    if (!e || !prefix || !*prefix)
        return;
    char tmp[2 * sizeof e->field + 2];
    const char *sep = (e->field[0] && e->field[0] != '[') ? "." : "";
    snprintf(tmp, sizeof tmp, "%.*s%s%s", (int)(sizeof e->field - 1), prefix, sep, e->field);
    snprintf(e->field, sizeof e->field, "%.*s", (int)(sizeof e->field - 1), tmp);
}
