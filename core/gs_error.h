/*
 * gs_error.h -- API errors of gapsim (bad data, I/O, out of memory ...).
 *
 * Owns: the gs_err enum (system / input errors, never algorithmic outcomes:
 * those are gs_status in gs_status.h), its message table, and gs_error, the
 * detail record every fallible function fills: which field of the input is at
 * fault ("pairs[12].node[1]", "parts[0].K"), a human message, and the LAPACK
 * info code where one was involved. The library never prints or exits; it
 * returns a gs_err and fills the record, and callers (CLI, daemon) report it.
 */
#ifndef GS_ERROR_H
#define GS_ERROR_H

typedef enum {
    GS_OK = 0,
    GS_ERR_NOMEM,         /* allocation failed */
    GS_ERR_IO,            /* file could not be read or written */
    GS_ERR_FORMAT,        /* malformed file / JSON / header */
    GS_ERR_UNSUPPORTED,   /* well-formed but not supported (dtype, big endian...) */
    GS_ERR_LIMIT,         /* a size limit was exceeded */
    GS_ERR_INVALID,       /* missing or invalid value */
    GS_ERR_DIM,           /* dimension mismatch */
    GS_ERR_RANGE,         /* index out of range */
    GS_ERR_DUPLICATE,     /* duplicated pair, dof or fastener */
    GS_ERR_NONFINITE,     /* NaN or Inf in the data */
    GS_ERR_NOT_SYMMETRIC, /* stiffness block not symmetric */
    GS_ERR_NOT_SPD,       /* Cholesky failed: not positive definite (lapack_info) */
    GS_ERR_SINGULAR,      /* singular system (e.g. linearly dependent contact pairs) */
    GS_ERR_CHECK,         /* a computed result failed its check (precomp_check.h) */
    GS_ERR__COUNT
} gs_err;

typedef struct {
    gs_err code;
    int lapack_info;   /* LAPACK info when a LAPACK routine failed, else 0 */
    int sys_errno;     /* errno of a failed write (ENOSPC: no room left, the
                          daemon answers 507), else 0 */
    char field[96];    /* path of the offending input field, "" if none */
    char msg[320];     /* human-readable explanation */
} gs_error;

/* Short stable identifier ("not_spd") for machine consumers (JSON errors). */
const char *gs_err_name(gs_err code);
/* One-line description of the error class. */
const char *gs_err_str(gs_err code);

/* Fill *e (may be NULL) and return code. printf-style message. */
gs_err gs_errorf(gs_error *e, gs_err code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Reset *e to GS_OK. */
void gs_error_clear(gs_error *e);
/* Prefix the field path of an already-filled error ("parts[1]" + ".K"). */
void gs_error_prefix_field(gs_error *e, const char *prefix);

#endif
