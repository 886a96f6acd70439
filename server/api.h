/*
 * api.h -- the REST API v1 handlers and their shared request helpers.
 *
 * Handlers run on MHD connection threads with the request body complete.
 * Each either answers (gsd_reply_*) or suspends the request and hands it to
 * the worker pool (solves) or the readers (summaries). Files:
 * api_assemblies.c, api_solve.c, api_clouds.c, api_jobs.c, api_summary.c,
 * api_gaps.c, api_misc.c; the route table is in api.c. The API is documented
 * in docs/api.md and schema/openapi.json.
 */
#ifndef GSD_API_H
#define GSD_API_H

#include <cjson/cJSON.h>

#include "http.h"
#include "solver.h"
#include "store.h"

/* The JSON body (object), or NULL after answering 400. */
cJSON *gsd_api_body(gsd_req *r);
/* The assembly row of r->id; 0 after answering 404 / 500. */
int gsd_api_assembly(gsd_req *r, gsd_assembly_row *row);
/* The job row of r->id (release with gsd_job_row_free); 0 after answering
 * 404 / 500. */
int gsd_api_job(gsd_req *r, gsd_job_row *row);
/* Answer r with the document of job r->id (GET /v1/jobs/{id} without waiting;
 * 404 when it is gone). */
void gsd_api_job_reply(gsd_req *r);
/* Answer {"jobs": [...]} of an assembly (NULL: any), filtered by the
 * request's ?status= (GET /v1/jobs and /v1/assemblies/{id}/jobs alike);
 * 422 naming status for another value than a job status. */
void gsd_api_reply_jobs(gsd_req *r, const char *assembly_id);
/* The assembly must be ready; 0 after answering 409. */
int gsd_api_ready(gsd_req *r, const gsd_assembly_row *row);
/* 1 if a ready assembly can run these options; else 409 with the reason
 * it has no L_Q (precompute.lq_error: linearly dependent pairs, code
 * singular naming the pair) for a method that needs L_Q
 * (gs_method_needs_lq), and 0. */
int gsd_api_lq_usable(gsd_req *r, const gsd_assembly_row *row, const gs_solve_opts *o);
/* 1 if new data may be stored: the data directory has --min-free MiB free
 * and the store is within --store-quota-mb (after retention made room);
 * else 507 answered, 0 (upkeep.h). */
int gsd_api_room(gsd_req *r);
/* The same with the quota only (a single solve's result), on store st. */
int gsd_api_quota(gsd_req *r, gsd_store *st);
/* The query helpers answer a bad value with gsd_reply_bad_query (422
 * naming key), as the router answers a parameter the route does not take. */
/* Integer query parameter in [lo, hi] (default def); 0 after answering. */
int gsd_api_query_int(gsd_req *r, const char *key, long def, long lo, long hi, long *out);
/* Numeric query parameter (default def); 0 after answering. */
int gsd_api_query_num(gsd_req *r, const char *key, double def, double *out);
/* Query parameter key as one of names[0..n): its index into *out (def when
 * absent); 0 after answering with the names ("format is json, npy or vtp"). */
int gsd_api_query_enum(gsd_req *r, const char *key, const char *const *names, int n, int def,
                       int *out);
/* Remove the server-side directory dir (and its '/') from an error message:
 * clients see the names they sent, not the daemon's staging paths. */
void gsd_api_scrub(gs_error *e, const char *dir);
/* Gap vector `index` (m values) of a job's stored cloud into g; 0 after
 * answering 409 conflict when the job's gaps file is lost, else 500
 * (api_gaps.c). */
int gsd_api_gap_row(gsd_req *r, const gsd_job_row *row, long index, double *g, int m);
/* The assembly row of a job; 0 after answering 404 (row released then). */
int gsd_api_job_assembly(gsd_req *r, gsd_job_row *row, gsd_assembly_row *arow);
/* GET .../results?format=vtp&index=i[&threshold=]: gap i (g, w, lambda) and
 * the cloud statistics on the junction, one .vtp (api_summary.c). Takes row. */
void gsd_api_gap_vtp(gsd_req *r, gsd_job_row *row, int m);
/* Store failure: answer 500 with the message. */
void gsd_api_store_error(gsd_req *r, const gs_error *e);
/* After a failure that a DELETE of assembly id running at the same time
 * can cause (its files or its row gone while the request read or wrote
 * them): if the assembly is gone, answer 404 and return 1; else 0 (the
 * caller answers its failure). st: the caller's store connection. */
int gsd_api_asm_gone(gsd_req *r, gsd_store *st, const char *id);
/* Answer a request that needed the model of assembly asm_id and could not
 * load it (gsd_asm_model's error e): 404 if the assembly is gone, 503 for
 * want of memory, 500 (logged with the reason) for an I/O error, 409 with
 * e's code and message for a stored model this gapsimd refuses. */
void gsd_api_model_unreadable(gsd_req *r, const char *asm_id, const gs_error *e);

void gsd_h_healthz(gsd_req *r);
void gsd_h_metrics(gsd_req *r);
void gsd_h_static(gsd_req *r);
void gsd_h_index(gsd_req *r);
void gsd_h_asm_create(gsd_req *r);
void gsd_h_asm_list(gsd_req *r);
void gsd_h_asm_get(gsd_req *r);
void gsd_h_asm_delete(gsd_req *r);
void gsd_h_asm_geometry(gsd_req *r);
void gsd_h_asm_jobs(gsd_req *r);
void gsd_h_solve(gsd_req *r);
void gsd_h_cloud_create(gsd_req *r);
void gsd_h_job_list(gsd_req *r);
void gsd_h_job_get(gsd_req *r);
void gsd_h_job_cancel(gsd_req *r);
void gsd_h_job_results(gsd_req *r);
void gsd_h_job_summary(gsd_req *r);
void gsd_h_job_gaps(gsd_req *r);
void gsd_h_result_get(gsd_req *r);

#endif
