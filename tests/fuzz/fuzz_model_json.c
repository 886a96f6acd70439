/*
 * fuzz_model_json.c -- fuzz target for the gapsim-model JSON reader (and,
 * through round trips, the writer).
 * Every input is parsed as untrusted text (base_dir NULL, small limits), the
 * way the HTTP daemon parses request bodies. Properties:
 *   - no crash; errors carry a code, a message, and a bounded field path;
 *   - an accepted model is validated and self-consistent (n = sum of ndof,
 *     offsets, A's rows inside [0, n));
 *   - 1 accepted input in 4 (by hash) is written (inline or with .npy
 *     blocks) and read back bit-identical;
 *   - 1 input in 4 is also parsed with a base directory holding small valid
 *     .npy/.mtx fixtures, so file references ("k2.npy") are exercised.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gs_fuzz.h"
#include "mmio.h"
#include "model_json.h"
#include "npy.h"

const char *const gs_fuzz_target = "model_json";
const char *const gs_fuzz_dict[] = {
    "\"format\"", "\"gapsim-model\"", "\"version\"", "\"name\"", "\"joint\"", "\"simple\"",
    "\"sandwich\"", "\"units\"", "\"parts\"", "\"ndof\"", "\"K\"", "\"nodes\"", "\"part\"",
    "\"dof\"", "\"x\"", "\"pairs\"", "\"i\"", "\"j\"", "\"ci\"", "\"cj\"", "\"fasteners\"",
    "\"pair\"", "\"load\"", "\"f\"", "\"comment\"", "\"k2.npy\"", "\"k3.mtx\"", "\"f5.npy\"",
    "\"../k2.npy\"", "\"/k2.npy\"", "\"k2.txt\"", "\"k2.pch\"", "\"label\"",
    "\"component\"", "\"file\"", "\"format\"", "\"matrix\"", "\"nastran-dmig\"", "\"npy\"",
    "\"abaqus-coordinate\"", "\"KAAX\"", "[", "]", "{", "}", ",", ":", "null", "true",
    "-1", "1e999", "0.5", "[[1]]", "[[2, 1], [1, 2]]", "\"\\u0000\"", "\"\\\"\"", NULL};

static const char *scratch_dir(void)
{
    const char *dir = getenv("GS_TEST_TMP");
    return dir && *dir ? dir : "/tmp";
}

/* Small valid files for file references; created once per process. */
static const char *fixtures(void)
{
    static char dir[512];
    static int done;
    if (done)
        return dir;
    snprintf(dir, sizeof dir, "%s/fuzz_model_json_fixtures", scratch_dir());
    mkdir(dir, 0755);
    char path[600];
    gs_error e;
    const double k2[4] = {2, 1, 1, 2}, k3[9] = {4, 1, 0, 1, 4, 1, 0, 1, 4}, f5[5] = {0, 1, 0, 0, 2};
    size_t s2[2] = {2, 2}, s5[1] = {5};
    snprintf(path, sizeof path, "%s/k2.npy", dir);
    GS_FUZZ_ASSERT(gs_npy_write_file(path, k2, 2, s2, &e) == GS_OK);
    snprintf(path, sizeof path, "%s/k3.mtx", dir);
    GS_FUZZ_ASSERT(gs_mm_write_file(path, k3, 3, 3, &e) == GS_OK);
    snprintf(path, sizeof path, "%s/f5.npy", dir);
    GS_FUZZ_ASSERT(gs_npy_write_file(path, f5, 1, s5, &e) == GS_OK);
    snprintf(path, sizeof path, "%s/k2.pch", dir); /* grids 7, 9, component 3: K = k2 */
    FILE *fp = fopen(path, "w");
    GS_FUZZ_ASSERT(fp != NULL);
    fputs("DMIG,KAAX,0,6,2,0\nDMIG,KAAX,7,3,,7,3,2.\n,9,3,1.\nDMIG,KAAX,9,3,,9,3,2.\n", fp);
    GS_FUZZ_ASSERT(fclose(fp) == 0);
    done = 1;
    return dir;
}

static void check_error(gs_err rc, const gs_error *e)
{
    GS_FUZZ_ASSERT(rc > GS_OK && rc < GS_ERR__COUNT);
    GS_FUZZ_ASSERT(e->code == rc);
    GS_FUZZ_ASSERT(e->msg[0] != '\0');
    GS_FUZZ_ASSERT(memchr(e->field, '\0', sizeof e->field) != NULL);
    for (const char *c = e->field; *c; c++) /* field paths are printable ASCII */
        GS_FUZZ_ASSERT(*c >= 0x20 && *c < 0x7f);
}

static void check_model(const gs_model *mdl)
{
    GS_FUZZ_ASSERT(mdl->validated);
    GS_FUZZ_ASSERT(mdl->joint == GS_JOINT_SIMPLE || mdl->joint == GS_JOINT_SANDWICH);
    int n = 0;
    for (int b = 0; b < mdl->n_parts; b++) {
        GS_FUZZ_ASSERT(mdl->parts[b].offset == n && mdl->parts[b].K && mdl->parts[b].ndof > 0);
        n += mdl->parts[b].ndof;
    }
    GS_FUZZ_ASSERT(n == mdl->n && mdl->m >= 1);
    for (int k = 0; k < 2 * mdl->m; k++)
        GS_FUZZ_ASSERT(mdl->a_row[k] >= -1 && mdl->a_row[k] < n);
    for (int k = 0; k < mdl->m; k++)
        GS_FUZZ_ASSERT(mdl->a_row[2 * k] >= 0);
    for (int i = 0; i < mdl->n_fast; i++)
        GS_FUZZ_ASSERT(mdl->fast[i].pair >= 0 && mdl->fast[i].pair < mdl->m);
}

static void check_roundtrip(const gs_model *mdl, const gs_model_limits *lim, int inline_blocks)
{
    char base[64], path[600];
    gs_error e;
    snprintf(base, sizeof base, "fuzz_mj_%ld", (long)getpid());
    if (gs_model_write_json(mdl, scratch_dir(), base, inline_blocks, &e) != GS_OK) {
        fprintf(stderr, "fuzz_model_json: write failed: %s %s\n", e.field, e.msg);
        abort(); /* a validated model must be writable */
    }
    snprintf(path, sizeof path, "%s/%s.json", scratch_dir(), base);
    gs_model *back = NULL;
    gs_err rc = gs_model_read_json(path, lim, &back, &e);
    if (rc != GS_OK)
        fprintf(stderr, "fuzz_model_json: read back failed: %s %s\n", e.field, e.msg);
    GS_FUZZ_ASSERT(rc == GS_OK);
    GS_FUZZ_ASSERT(gs_model_equal(mdl, back));
    gs_model_free(back);
    unlink(path);
    for (int b = 0; !inline_blocks && b < mdl->n_parts; b++) {
        snprintf(path, sizeof path, "%s/%s.part%d.npy", scratch_dir(), base, b);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/%s.f.npy", scratch_dir(), base);
    unlink(path);
}

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    gs_model_limits lim = {.max_block_elems = 400, .max_parts = 4, .max_nodes = 64,
                           .max_pairs = 64};
    const uint32_t h = gs_fuzz_hash(data, size);
    gs_model *mdl = (gs_model *)1;
    gs_error e;
    gs_err rc = gs_model_parse_json((const char *)data, size, NULL, &lim, &mdl, &e);
    if (rc != GS_OK) {
        check_error(rc, &e);
        GS_FUZZ_ASSERT(mdl == NULL);
    } else {
        check_model(mdl);
        if (h % 4 == 0)
            check_roundtrip(mdl, &lim, (h >> 2) & 1);
        gs_model_free(mdl);
    }
    if (h % 4 == 1) {
        gs_model *m2 = (gs_model *)1;
        gs_err r2 = gs_model_parse_json((const char *)data, size, fixtures(), &lim, &m2, &e);
        if (r2 != GS_OK) {
            check_error(r2, &e);
            GS_FUZZ_ASSERT(m2 == NULL);
        } else {
            check_model(m2);
            gs_model_free(m2);
        }
        if (rc == GS_OK) /* without references, the base directory changes nothing */
            GS_FUZZ_ASSERT(r2 == GS_OK);
    }
    return rc == GS_OK;
}
