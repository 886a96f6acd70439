/*
 * precomp_io.c -- the precomputation file: streamed, checksummed save and a
 * load that checks every size against the model and the file length before
 * allocating (format in precomp_io.h).
 */
#include "precomp_io.h"
#include "linalg.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "fileio.h"
#include "hash.h"

#define PIO_MAGIC "GSPRECMP"
#define PIO_TRAILER_MAGIC "GSPCDONE"
#define PIO_ENDIAN 0x0102030405060708ULL
#define PIO_FIXED 96      /* header bytes before the ndof table */
#define PIO_TRAILER 16    /* checksum + trailer magic */
#define PIO_SCALARS GS_PRECOMP_SCALARS /* doubles at the start of the payload */
#define PIO_CHUNK (1u << 20) /* bytes per I/O + hashing step */

/* Header words after the magic (index into the u64 words of the header). */
enum { W_ENDIAN = 1, W_VERSION, W_HDR_BYTES, W_N, W_M, W_NPARTS, W_PAYLOAD, W_HASH };

#if UINTPTR_MAX == 0xffffffffffffffffULL
/* Tripwire: a new gs_precomp field must be saved and loaded here (and the
 * format version bumped); then update this size. lq_ready is not saved: a
 * saved precomputation always has L_Q (gs_precomp_save refuses one without);
 * nor is parts_ready (it sat in lq_ready's padding): the sparse factors are
 * recomputed at load, or later (GS_PRECOMP_DEFER_SPARSE); nor taken (set
 * during gs_precomp_build_taken only), nor kdiag (during a build only). */
_Static_assert(sizeof(gs_precomp) == 176, "gs_precomp changed: update precomp_io.c");
#endif

/* ---- layout shared by save and load ----------------------------------------- */

static int pio_mul(uint64_t a, uint64_t b, uint64_t *r)
{
    return __builtin_mul_overflow(a, b, r) ? -1 : 0;
}

static int pio_add(uint64_t a, uint64_t b, uint64_t *r)
{
    return __builtin_add_overflow(a, b, r) ? -1 : 0;
}

/* Payload bytes the model implies: 8 (10 + n_parts + 2m + sum ndof_b^2 + 2m^2);
 * -1 on overflow. O(n_parts). */
static int pio_payload_bytes(const gs_model *mdl, uint64_t *bytes)
{
    uint64_t m = (uint64_t)mdl->m, d = PIO_SCALARS + (uint64_t)mdl->n_parts, t;
    if (pio_mul(m, 2, &t) || pio_add(d, t, &d))
        return -1;
    for (int b = 0; b < mdl->n_parts; b++) {
        uint64_t nb = mdl->parts[b].Ksp ? 0 : (uint64_t)mdl->parts[b].ndof;
        if (pio_mul(nb, nb, &t) || pio_add(d, t, &d))
            return -1;
    }
    if (pio_mul(m, m, &t) || pio_mul(t, 2, &t) || pio_add(d, t, &d))
        return -1;
    return pio_mul(d, sizeof(double), bytes);
}

/* Segment i of the payload after the scalars: cond_block, qdiag, u0, the
 * factors L_b of the dense parts in part order (a sparse part's CHOLMOD
 * factor is not stored: gs_precomp_factor_sparse recomputes it), Q, L_Q.
 * Returns 0 past the last one. O(n_parts). */
int gs_precomp_segment(const gs_precomp *pc, int i, double **ptr, size_t *count)
{
    const gs_model *mdl = pc->mdl;
    const size_t m = (size_t)pc->m;
    if (i == 0) {
        *ptr = pc->cond_block;
        *count = (size_t)mdl->n_parts;
        return 1;
    }
    if (i == 1 || i == 2) {
        *ptr = i == 1 ? pc->qdiag : pc->u0;
        *count = m;
        return 1;
    }
    int k = i - 3;
    for (int b = 0; b < mdl->n_parts; b++) {
        if (mdl->parts[b].Ksp)
            continue;
        if (k-- == 0) {
            const size_t nb = (size_t)mdl->parts[b].ndof;
            *ptr = pc->L[b];
            *count = nb * nb;
            return 1;
        }
    }
    if (k == 0 || (k == 1 && pc->LQ)) {
        *ptr = k == 0 ? pc->Q : pc->LQ;
        *count = m * m;
        return 1;
    }
    return 0;
}

void gs_precomp_pack_scalars(const gs_precomp *pc, double s[PIO_SCALARS])
{
    const double v[PIO_SCALARS] = {pc->s0,         pc->cond_K,    pc->cond_Q,  pc->normK1,
                                   pc->t.factor_K, pc->t.build_Q, pc->t.loads, pc->t.factor_Q,
                                   pc->t.cond,     pc->t.total};
    memcpy(s, v, sizeof v);
}

void gs_precomp_unpack_scalars(gs_precomp *pc, const double s[PIO_SCALARS])
{
    pc->s0 = s[0];
    pc->cond_K = s[1];
    pc->cond_Q = pc->LQ ? s[2] : NAN; /* shaped without L_Q: its estimate comes with it */
    pc->normK1 = s[3];
    pc->t.factor_K = s[4];
    pc->t.build_Q = s[5];
    pc->t.loads = s[6];
    pc->t.factor_Q = s[7];
    pc->t.cond = s[8];
    pc->t.total = s[9];
}

static void pio_put_word(unsigned char *hdr, int w, uint64_t v)
{
    memcpy(hdr + 8 * (size_t)w, &v, sizeof v);
}

static uint64_t pio_get_word(const unsigned char *hdr, int w)
{
    uint64_t v;
    memcpy(&v, hdr + 8 * (size_t)w, sizeof v);
    return v;
}

/* ---- save ------------------------------------------------------------------- */

/* Hash and write len bytes in PIO_CHUNK steps. O(len). */
static gs_err pio_put(gs_wfile *wf, XXH3_state_t *st, const void *buf, size_t len, gs_error *err)
{
    const unsigned char *p = buf;
    for (size_t off = 0; off < len; off += PIO_CHUNK) {
        size_t c = len - off < PIO_CHUNK ? len - off : PIO_CHUNK;
        if (XXH3_64bits_update(st, p + off, c) != XXH_OK)
            return gs_errorf(err, GS_ERR_IO, "", "checksum update failed for '%s'", wf->path);
        gs_err e = gs_wfile_write(wf, p + off, c, err);
        if (e != GS_OK)
            return e;
    }
    return GS_OK;
}

/* The header (PIO_FIXED + 8 n_parts bytes) of pc. */
static gs_err pio_write_header(gs_wfile *wf, const gs_precomp *pc, uint64_t payload,
                               gs_error *err)
{
    const gs_model *mdl = pc->mdl;
    unsigned char fixed[PIO_FIXED] = {0};
    memcpy(fixed, PIO_MAGIC, 8);
    pio_put_word(fixed, W_ENDIAN, PIO_ENDIAN);
    pio_put_word(fixed, W_VERSION, GS_PRECOMP_FORMAT_VERSION);
    pio_put_word(fixed, W_HDR_BYTES, PIO_FIXED + 8 * (uint64_t)mdl->n_parts);
    pio_put_word(fixed, W_N, (uint64_t)pc->n);
    pio_put_word(fixed, W_M, (uint64_t)pc->m);
    pio_put_word(fixed, W_NPARTS, (uint64_t)mdl->n_parts);
    pio_put_word(fixed, W_PAYLOAD, payload);
    char h[GS_HASH_HEX];
    gs_model_hash(mdl, h);
    memcpy(fixed + 8 * W_HASH, h, 32);
    gs_err e = gs_wfile_write(wf, fixed, sizeof fixed, err);
    for (int b = 0; b < mdl->n_parts && e == GS_OK; b++) { /* O(n_parts) */
        uint64_t nb = (uint64_t)mdl->parts[b].ndof;
        e = gs_wfile_write(wf, &nb, sizeof nb, err);
    }
    return e;
}

/* Scalars and segments through the hash into the file. O(payload). */
static gs_err pio_write_payload(gs_wfile *wf, XXH3_state_t *st, const gs_precomp *pc,
                                gs_error *err)
{
    double s[PIO_SCALARS];
    gs_precomp_pack_scalars(pc, s);
    gs_err e = pio_put(wf, st, s, sizeof s, err);
    double *p;
    size_t count;
    for (int i = 0; e == GS_OK && gs_precomp_segment(pc, i, &p, &count); i++) /* 5 + n_parts */
        e = pio_put(wf, st, p, count * sizeof *p, err);
    return e;
}

gs_err gs_precomp_save(const gs_precomp *pc, const char *path, unsigned long long *checksum,
                       gs_error *err)
{
    gs_error_clear(err);
    if (!gs_precomp_has_lq(pc)) /* a deferred build (precompute.h): finish it first */
        return gs_errorf(err, GS_ERR_INVALID, "", "the precomputation has no L_Q yet");
    uint64_t payload;
    if (pio_payload_bytes(pc->mdl, &payload) != 0)
        return gs_errorf(err, GS_ERR_LIMIT, "", "precomputation too large to save");
    XXH3_state_t *st = XXH3_createState();
    if (!st)
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the checksum state");
    gs_wfile wf;
    gs_err e = gs_wfile_open(&wf, path, err);
    if (e != GS_OK) {
        XXH3_freeState(st);
        return e;
    }
    if (XXH3_64bits_reset(st) != XXH_OK)
        e = gs_errorf(err, GS_ERR_IO, "", "checksum reset failed for '%s'", path);
    if (e == GS_OK)
        e = pio_write_header(&wf, pc, payload, err);
    if (e == GS_OK)
        e = pio_write_payload(&wf, st, pc, err);
    uint64_t sum = XXH3_64bits_digest(st);
    if (e == GS_OK)
        e = gs_wfile_write(&wf, &sum, sizeof sum, err);
    if (e == GS_OK)
        e = gs_wfile_write(&wf, PIO_TRAILER_MAGIC, 8, err);
    XXH3_freeState(st);
    if (e != GS_OK) {
        gs_wfile_abort(&wf);
        return e;
    }
    if ((e = gs_wfile_commit_unsynced(&wf, err)) != GS_OK) /* checksummed: see fileio.h */
        return e;
    if (checksum)
        *checksum = sum;
    return GS_OK;
}

/* ---- load ------------------------------------------------------------------- */

/* An open precomputation file being read. */
typedef struct {
    int fd;
    const char *path;
    uint64_t size; /* file length (fstat) */
} pio_file;

/* Read exactly len bytes; a short file (shrunk after fstat) is GS_ERR_FORMAT. */
static gs_err pio_read(pio_file *f, void *buf, size_t len, gs_error *err)
{
    unsigned char *p = buf;
    size_t got = 0;
    while (got < len) { /* O(len) */
        ssize_t r = read(f->fd, p + got, len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return gs_errorf(err, GS_ERR_IO, "", "cannot read '%s': %s", f->path,
                             strerror(errno));
        if (r == 0)
            return gs_errorf(err, GS_ERR_FORMAT, "", "'%s' is truncated (ended while reading)",
                             f->path);
        got += (size_t)r;
    }
    return GS_OK;
}

/* Read len bytes into buf in PIO_CHUNK steps, hashing each step. O(len). */
static gs_err pio_get(pio_file *f, XXH3_state_t *st, void *buf, size_t len, gs_error *err)
{
    unsigned char *p = buf;
    for (size_t off = 0; off < len; off += PIO_CHUNK) {
        size_t c = len - off < PIO_CHUNK ? len - off : PIO_CHUNK;
        gs_err e = pio_read(f, p + off, c, err);
        if (e != GS_OK)
            return e;
        if (XXH3_64bits_update(st, p + off, c) != XXH_OK)
            return gs_errorf(err, GS_ERR_IO, "", "checksum update failed for '%s'", f->path);
    }
    return GS_OK;
}

static gs_err pio_bad(gs_error *err, const pio_file *f, const char *what, uint64_t got,
                      uint64_t want)
{
    return gs_errorf(err, GS_ERR_FORMAT, "", "'%s': %s is %llu, expected %llu", f->path, what,
                     (unsigned long long)got, (unsigned long long)want);
}

/* Fixed header: magic, byte order, version, sizes against mdl and the file
 * length, the model's content hash. Nothing is trusted before it is compared
 * with a value known independently of the file. */
static gs_err pio_check_fixed(pio_file *f, const gs_model *mdl, uint64_t payload,
                              gs_error *err)
{
    unsigned char h[PIO_FIXED];
    if (f->size < PIO_FIXED)
        return gs_errorf(err, GS_ERR_FORMAT, "",
                         "'%s' is truncated: %llu bytes, shorter than the %d-byte header",
                         f->path, (unsigned long long)f->size, PIO_FIXED);
    gs_err e = pio_read(f, h, sizeof h, err);
    if (e != GS_OK)
        return e;
    if (memcmp(h, PIO_MAGIC, 8) != 0)
        return gs_errorf(err, GS_ERR_FORMAT, "",
                         "'%s' is not a gapsim precomputation file (bad magic)", f->path);
    if (pio_get_word(h, W_ENDIAN) != PIO_ENDIAN)
        return gs_errorf(err, GS_ERR_FORMAT, "",
                         "'%s': byte-order mark mismatch (written on a host of another byte "
                         "order, or corrupted)", f->path);
    if (pio_get_word(h, W_VERSION) != GS_PRECOMP_FORMAT_VERSION)
        return pio_bad(err, f, "the format version", pio_get_word(h, W_VERSION),
                       GS_PRECOMP_FORMAT_VERSION);
    const uint64_t np = (uint64_t)mdl->n_parts, hdr = PIO_FIXED + 8 * np;
    if (pio_get_word(h, W_NPARTS) != np)
        return pio_bad(err, f, "the number of parts", pio_get_word(h, W_NPARTS), np);
    if (pio_get_word(h, W_N) != (uint64_t)mdl->n)
        return pio_bad(err, f, "n (total DOFs)", pio_get_word(h, W_N), (uint64_t)mdl->n);
    if (pio_get_word(h, W_M) != (uint64_t)mdl->m)
        return pio_bad(err, f, "m (contact pairs)", pio_get_word(h, W_M), (uint64_t)mdl->m);
    if (pio_get_word(h, W_HDR_BYTES) != hdr)
        return pio_bad(err, f, "the header size", pio_get_word(h, W_HDR_BYTES), hdr);
    if (pio_get_word(h, W_PAYLOAD) != payload)
        return pio_bad(err, f, "the payload size", pio_get_word(h, W_PAYLOAD), payload);
    uint64_t total = hdr + payload + PIO_TRAILER; /* no overflow: payload < 2^61 checked */
    if (f->size != total)
        return gs_errorf(err, GS_ERR_FORMAT, "", "'%s' is %s: %llu bytes, expected %llu",
                         f->path, f->size < total ? "truncated" : "too long (trailing bytes)",
                         (unsigned long long)f->size, (unsigned long long)total);
    char mh[GS_HASH_HEX];
    gs_model_hash(mdl, mh);
    if (memcmp(h + 8 * W_HASH, mh, 32) != 0)
        return gs_errorf(err, GS_ERR_FORMAT, "",
                         "'%s' was saved for a different model (model content hash %.32s, "
                         "file %.32s)", f->path, mh, (const char *)(h + 8 * W_HASH));
    return GS_OK;
}

/* ndof table against the model's blocks. O(n_parts). */
static gs_err pio_check_ndof(pio_file *f, const gs_model *mdl, gs_error *err)
{
    for (int b = 0; b < mdl->n_parts; b++) {
        uint64_t nb;
        gs_err e = pio_read(f, &nb, sizeof nb, err);
        if (e != GS_OK)
            return e;
        if (nb != (uint64_t)mdl->parts[b].ndof)
            return gs_errorf(err, GS_ERR_FORMAT, "", "'%s': ndof of part %d is %llu, expected %d",
                             f->path, b, (unsigned long long)nb, mdl->parts[b].ndof);
    }
    return GS_OK;
}

/* count doubles, at least one allocated (malloc(0) may be NULL); the
 * large ones in huge pages (gs_alloc_matrix). */
static double *pio_alloc(size_t count)
{
    return gs_alloc_matrix(count, sizeof(double), 0);
}

/* A precomputation shaped like gs_precomp_build's (so gs_precomp_free works),
 * arrays uninitialized: the payload fills them. Sizes were checked to fit. */
gs_precomp *gs_precomp_alloc(const gs_model *mdl, unsigned flags)
{
    const int with_lq = !(flags & GS_PRECOMP_DEFER_LQ);
    gs_precomp *pc = calloc(1, sizeof *pc);
    if (!pc)
        return NULL;
    const size_t np = (size_t)mdl->n_parts, m = (size_t)mdl->m;
    pc->mdl = mdl;
    pc->n = mdl->n;
    pc->m = mdl->m;
    pc->L = calloc(np ? np : 1, sizeof *pc->L);
    pc->F = calloc(np ? np : 1, sizeof *pc->F);
    pc->cond_block = pio_alloc(np);
    pc->Q = pio_alloc(m * m);
    pc->LQ = with_lq ? pio_alloc(m * m) : NULL;
    pc->qdiag = pio_alloc(m);
    pc->u0 = pio_alloc(m);
    int ok = pc->L && pc->F && pc->cond_block && pc->Q && (pc->LQ || !with_lq) && pc->qdiag &&
             pc->u0;
    atomic_store(&pc->lq_ready, with_lq); /* every segment is filled before use */
    atomic_store(&pc->parts_ready, !gs_model_has_sparse(mdl)); /* gs_precomp_factor_sparse */
    for (size_t b = 0; ok && b < np; b++) { /* O(n_parts) allocations */
        const size_t nb = (size_t)mdl->parts[b].ndof;
        ok = mdl->parts[b].Ksp || (pc->L[b] = pio_alloc(nb * nb)) != NULL;
    }
    if (!ok) {
        gs_precomp_free(pc);
        return NULL;
    }
    return pc;
}

/* Hash len bytes of the file without keeping them (a deferred load's L_Q),
 * through one PIO_CHUNK buffer. O(len). */
static gs_err pio_skip(pio_file *f, XXH3_state_t *st, size_t len, gs_error *err)
{
    unsigned char *buf = malloc(PIO_CHUNK);
    if (!buf)
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory to read '%s'", f->path);
    gs_err e = GS_OK;
    for (size_t off = 0; e == GS_OK && off < len; off += PIO_CHUNK)
        e = pio_get(f, st, buf, len - off < PIO_CHUNK ? len - off : PIO_CHUNK, err);
    free(buf);
    return e;
}

/* Payload into pc (L_Q only hashed when pc has no room for it), then the
 * trailer against the computed checksum and expect. */
static gs_err pio_read_payload(pio_file *f, XXH3_state_t *st, gs_precomp *pc,
                               unsigned long long expect, gs_error *err)
{
    double s[PIO_SCALARS];
    gs_err e = pio_get(f, st, s, sizeof s, err);
    if (e != GS_OK)
        return e;
    gs_precomp_unpack_scalars(pc, s);
    double *p;
    size_t count;
    for (int i = 0; gs_precomp_segment(pc, i, &p, &count); i++) /* 5 + n_parts */
        if ((e = pio_get(f, st, p, count * sizeof *p, err)) != GS_OK)
            return e;
    if (!pc->LQ && /* deferred (gs_precomp_load_ex): L_Q through the checksum only */
        (e = pio_skip(f, st, (size_t)pc->m * (size_t)pc->m * sizeof(double), err)) != GS_OK)
        return e;
    const uint64_t sum = XXH3_64bits_digest(st);
    unsigned char tr[PIO_TRAILER];
    if ((e = pio_read(f, tr, sizeof tr, err)) != GS_OK)
        return e;
    uint64_t stored = pio_get_word(tr, 0);
    if (memcmp(tr + 8, PIO_TRAILER_MAGIC, 8) != 0)
        return gs_errorf(err, GS_ERR_FORMAT, "", "'%s': bad trailer magic", f->path);
    if (stored != sum)
        return gs_errorf(err, GS_ERR_FORMAT, "",
                         "'%s' is corrupted: payload checksum %016llx, trailer says %016llx",
                         f->path, (unsigned long long)sum, (unsigned long long)stored);
    if (expect != 0 && sum != expect)
        return gs_errorf(err, GS_ERR_FORMAT, "",
                         "'%s' is not the expected file: payload checksum %016llx, expected "
                         "%016llx", f->path, (unsigned long long)sum, expect);
    return GS_OK;
}

/* Open and stat: missing / unreadable / not a regular file -> GS_ERR_IO. */
static gs_err pio_open(pio_file *f, const char *path, gs_error *err)
{
    f->path = path;
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0)
        return gs_errorf(err, GS_ERR_IO, "", "cannot open '%s': %s", path, strerror(errno));
    struct stat sb;
    if (fstat(f->fd, &sb) != 0)
        return gs_errorf(err, GS_ERR_IO, "", "cannot stat '%s': %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode) || sb.st_size < 0)
        return gs_errorf(err, GS_ERR_IO, "", "'%s' is not a regular file", path);
    f->size = (uint64_t)sb.st_size;
    return GS_OK;
}

gs_err gs_precomp_load(const gs_model *mdl, const char *path, unsigned long long expect,
                       gs_precomp **out, gs_error *err)
{
    return gs_precomp_load_ex(mdl, path, expect, 0, out, err);
}

gs_err gs_precomp_load_ex(const gs_model *mdl, const char *path, unsigned long long expect,
                          unsigned flags, gs_precomp **out, gs_error *err)
{
    *out = NULL;
    gs_error_clear(err);
    if (!mdl->validated)
        return gs_errorf(err, GS_ERR_INVALID, "", "model must be validated before loading");
    uint64_t payload;
    if (pio_payload_bytes(mdl, &payload) != 0 || payload > (UINT64_MAX >> 3) ||
        payload > SIZE_MAX / 2)
        return gs_errorf(err, GS_ERR_LIMIT, "", "model too large for a precomputation");
    pio_file f = {.fd = -1};
    gs_precomp *pc = NULL;
    XXH3_state_t *st = NULL;
    gs_err e = pio_open(&f, path, err);
    if (e == GS_OK)
        e = pio_check_fixed(&f, mdl, payload, err);
    if (e == GS_OK)
        e = pio_check_ndof(&f, mdl, err);
    if (e == GS_OK && (!(pc = gs_precomp_alloc(mdl, flags)) || !(st = XXH3_createState())))
        e = gs_errorf(err, GS_ERR_NOMEM, "", "no memory to load '%s' (m = %d)", path, mdl->m);
    if (e == GS_OK && XXH3_64bits_reset(st) != XXH_OK)
        e = gs_errorf(err, GS_ERR_IO, "", "checksum reset failed for '%s'", path);
    if (e == GS_OK)
        e = pio_read_payload(&f, st, pc, expect, err);
    if (e == GS_OK && !(flags & GS_PRECOMP_DEFER_SPARSE)) /* not stored: recomputed */
        e = gs_precomp_factor_sparse(pc, 0, err);
    XXH3_freeState(st);
    if (f.fd >= 0)
        close(f.fd);
    if (e != GS_OK) {
        gs_precomp_free(pc);
        return e;
    }
    *out = pc;
    return GS_OK;
}
