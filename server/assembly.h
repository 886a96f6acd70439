/*
 * assembly.h -- the life of an assembly in the daemon.
 *
 * Owns: creating an assembly from an adopted upload directory (store row,
 * registry entry, precompute task), the precomputation task (exclusive in
 * the pool: all cores to OpenBLAS), saving and reloading the factors
 * (data/assemblies/<id>/factors.bin with its checksum in the store; a missing
 * or damaged file is recomputed from the stored model), releasing the dense
 * stiffness blocks once factored and reading them again for a solve that
 * needs K, deletion, restart of interrupted precomputations, and the JSON
 * view of an assembly.
 */
#ifndef GSD_ASSEMBLY_H
#define GSD_ASSEMBLY_H

#include "http.h"
#include "model_json.h"
#include "pool.h"
#include "registry.h"
#include "store.h"

/* Register a new assembly: mdl (validated, taken) whose files are already in
 * data/assemblies/<row->id>/model.json; row filled by the caller with id,
 * hash, name and sizes. Queues the precomputation; when it ends, waiter (a
 * suspended request, or NULL) is answered with the assembly (201) or its
 * error (422). */
gs_err gsd_asm_create(gsd_app *app, gs_model *mdl, gsd_assembly_row *row, gsd_req *waiter,
                      gs_error *err);
/* Make a ready assembly usable on this thread: load the model and the
 * factors if needed (or recompute them). st: the caller's connection. */
gs_err gsd_asm_ensure(gsd_app *app, gsd_asm *a, gsd_store *st, gs_error *err);
/* Make sure a's precomputation (ensured) has L_Q, which the upload defers
 * past "ready": compute it on this thread (one core, O(m^3 / 3)) unless
 * another thread is doing so, then wait for that one. For the methods that
 * read it (gs_method_needs_lq). Its failure (GS_ERR_SINGULAR: dependent
 * pairs) is returned to every caller. */
gs_err gsd_asm_need_lq(gsd_asm *a, gs_error *err);
/* Make sure a's precomputation (ensured) has what a solve with opts needs
 * beyond "ready" (gs_run_precomp_flags: the one rule): L_Q (gsd_asm_need_lq);
 * after a restart's load, the sparse parts' factors for x, the primal
 * certificate and the primal forms; and for the primal forms and the primal
 * certificate the dense stiffness blocks, which the assembly releases once
 * its factors are built or loaded (read again from the data directory).
 * Each is computed by the first caller, the others wait; the solves that
 * need none of them go on meanwhile. */
gs_err gsd_asm_need(const gsd_app *app, gsd_asm *a, const gs_solve_opts *opts, gs_error *err);
/* Load only the model (geometry queries), not the factors. */
gs_err gsd_asm_model(gsd_app *app, gsd_asm *a, gs_error *err);
/* Re-queue the precomputations a stop interrupted (at start). */
gs_err gsd_asm_resume(gsd_app *app, gs_error *err);
/* Cancel its jobs, delete rows and files, then forget it in the registry. */
gs_err gsd_asm_delete(gsd_app *app, const char *id, gs_error *err);
/* JSON object of an assembly row. */
void gsd_asm_row_json(const gsd_assembly_row *row, gs_buf *b);
/* The same, and for a precomputing assembly its progress from the registry
 * entry: "progress": {"stage" (gs_precomp_stage_name), "elapsed_s" since the
 * precomputation began (0 while queued)}. */
void gsd_asm_row_json_live(gsd_app *app, const gsd_assembly_row *row, gs_buf *b);
/* Model limits of this daemon's options. */
void gsd_asm_limits(const gsd_app *app, gs_model_limits *lim);

#endif
