/*
 * test_cancel.c -- cancellation and deadlines through the solver interface
 * (solver.h: opts.cancel, opts.deadline; statuses cancelled / time_limit).
 *
 * Asserts, for every method x formulation (and auto) on the small sandwich
 * joint with half the fasteners: a cancel flag already set gives status
 * cancelled and no iteration; a deadline already past gives time_limit; a
 * clear flag and a deadline an hour away change nothing (lam bit-identical
 * to a solve without them); and on the default lap joint with every
 * fastener (hundreds of iterations), a deadline 1 ms after the start stops
 * GI relative with time_limit before it finishes (fewer
 * iterations than the full solve) - the check inside the iteration loops. Statuses are named
 * "cancelled" and "time_limit".
 */
#include <stdio.h>
#include <string.h>

#include "gs_test.h"
#include "linalg.h"
#include "test_models.h"
#include "test_solver_support.h"

static void check_variant(ts_fixture *f, gs_method m, gs_form form)
{
    gs_problem pb = ts_fx_problem(f, 0);
    gs_solve_opts o = ts_opts(m, form);
    gs_solve_info info, ref;
    gs_error e;
    double *lam0 = malloc(sizeof(double) * (size_t)f->m);
    GS_CHECK_INT(gs_solve(f->sv, &pb, &o, lam0, f->w, f->x, &ref, &e), GS_OK);
    GS_CHECK_INT(ref.status, GS_STATUS_OPTIMAL);

    atomic_int flag = 1;
    o.cancel = &flag;
    GS_CHECK_INT(gs_solve(f->sv, &pb, &o, f->lam, f->w, f->x, &info, &e), GS_OK);
    GS_CHECK_MSG(info.status == GS_STATUS_CANCELLED && info.iterations == 0, "%s/%s: %s",
                 gs_method_name(m), gs_form_name(form), gs_status_name(info.status));
    atomic_store(&flag, 0);
    o.deadline = gs_now() - 1.0;
    GS_CHECK_INT(gs_solve(f->sv, &pb, &o, f->lam, f->w, f->x, &info, &e), GS_OK);
    GS_CHECK_INT(info.status, GS_STATUS_TIME_LIMIT);
    o.deadline = gs_now() + 3600.0;
    GS_CHECK_INT(gs_solve(f->sv, &pb, &o, f->lam, f->w, f->x, &info, &e), GS_OK);
    GS_CHECK_MSG(info.status == GS_STATUS_OPTIMAL &&
                     memcmp(f->lam, lam0, sizeof(double) * (size_t)f->m) == 0,
                 "%s/%s: a far deadline changed the result", gs_method_name(m),
                 gs_form_name(form));
    free(lam0);
}

GS_TEST(cancel_and_deadline_every_variant)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_SANDWICH, 0, 1, 5, 0.5);
    for (int m = GS_METHOD_AUTO; m < GS_METHOD__COUNT; m++)
        for (int form = GS_FORM_DEFAULT; form < GS_FORM__COUNT; form++)
            if (m != GS_METHOD_REF && gs_method_supports((gs_method)m, (gs_form)form))
                check_variant(&f, (gs_method)m, (gs_form)form);
    GS_CHECK_STR(gs_status_name(GS_STATUS_CANCELLED), "cancelled");
    GS_CHECK_STR(gs_status_name(GS_STATUS_TIME_LIMIT), "time_limit");
    ts_fx_free(&f);
}

GS_TEST(deadline_stops_inside_the_iterations)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_LAP, 1.0, 1, 9, 1.0);
    const gs_form forms[1] = {GS_FORM_RELATIVE}; /* dual, primal: seconds on this model */
    for (int k = 0; k < 1; k++) {
        gs_problem pb = ts_fx_problem(&f, 0);
        gs_solve_opts o = ts_opts(GS_METHOD_GI, forms[k]);
        o.want_x = 0;
        gs_solve_info full, cut;
        gs_error e;
        GS_CHECK_INT(gs_solve(f.sv, &pb, &o, f.lam, f.w, NULL, &full, &e), GS_OK);
        GS_CHECK_INT(full.status, GS_STATUS_OPTIMAL);
        o.deadline = gs_now() + 1e-3;
        GS_CHECK_INT(gs_solve(f.sv, &pb, &o, f.lam, f.w, NULL, &cut, &e), GS_OK);
        GS_CHECK_MSG(cut.status == GS_STATUS_TIME_LIMIT && cut.iterations < full.iterations,
                     "%s: %s after %d of %d iterations (%.2f ms of %.2f)",
                     gs_form_name(forms[k]), gs_status_name(cut.status), cut.iterations,
                     full.iterations, 1e3 * cut.time, 1e3 * full.time);
        GS_CHECK(!gs_kkt_pass(&cut.kkt, 1e-7)); /* an iterate, not the optimum */
        fprintf(stderr, "  gi/%s: time_limit after %d of %d iterations, %.2f ms of %.2f ms\n",
                gs_form_name(forms[k]), cut.iterations, full.iterations, 1e3 * cut.time,
                1e3 * full.time);
    }
    ts_fx_free(&f);
}

GS_TEST_MAIN()
