/*
 * export.h -- a cloud's results in files other tools read.
 *
 * Owns: rendering a job's summary (the JSON document of summary.c, parsed)
 * on the junction geometry of its model as
 *   CSV   one row per contact pair: coordinates, interface, statistics of w,
 *         share above the threshold, mean contact force;
 *   VTK   a PolyData file (.vtp, VTK XML, ASCII; an array with a NaN or Inf
 *         inline binary): one vertex per pair at its
 *         first node, the cloud statistics and, for one gap, g, w and lambda
 *         as point data (ParaView, the vtk Python module);
 *   HTML  a one-page report: summary table, pattern, SVG figures (per-interface
 *         maps of the share above the threshold with the installed fasteners,
 *         histograms).
 * The statistics are computed once, by summary.c; this file only formats.
 * Cost: O(m) per file (plus O(bins)).
 */
#ifndef GSD_EXPORT_H
#define GSD_EXPORT_H

#include <cjson/cJSON.h>

#include "buf.h"
#include "model.h"
#include "store.h"

/* One gap of a cloud (any pointer may be NULL: that array is left out). */
typedef struct {
    int index;
    const double *g, *w, *lam; /* m each */
} gsd_export_gap;

/* Name of the interface of pair k: "<part i>/<part j>" or "<part i>/fixed",
 * an unnamed part as "part <index>". */
void gsd_export_iface_name(const gs_model *mdl, int k, char *out, size_t cap);
void gsd_export_csv(const gs_model *mdl, const cJSON *summary, gs_buf *b);
void gsd_export_vtp(const gs_model *mdl, const cJSON *summary, const gsd_export_gap *gap,
                    gs_buf *b);
void gsd_export_html(const gs_model *mdl, const cJSON *summary, const gsd_job_row *job,
                     const int *installed, int n_installed, gs_buf *b);

#endif
