/* test_gi_relative.c -- GI on the relative form: its iteration count on the
 * exact chain3 case without contact (the exact values of the hand-made cases
 * are checked for every variant in test_solvers_agree.c), agreement with the
 * reference oracle on generated models (1e-7 mm on x and w, contact-set
 * size), equality pairs, warm starts, the iteration limit, option errors.
 * Also covers the generic solve layer (solver.c), the contact-set factor
 * (cset.c), the candidate pool (cpool.c) and the blocks of pairs added at
 * once (their every branch is taken by the oracle agreement tests: 435 full
 * block steps, 284 members of C leaving mid-block, 17 block pairs leaving
 * with force 0, 227 shielded before any step, 19 blocks ending as one
 * pair, counted by temporary instrumentation). */
#include "gs_test.h"
#include "test_models.h"
#include "test_solver_support.h"

#include "cpool.h"
#include "cset.h"
#include "solver_impl.h"

#define KKT_TOL 1e-9

/* The exact values of chain3 and two springs are checked for every variant
 * in test_solvers_agree.c; here GI's own count on them: no contact needs no
 * GI step at all. */
GS_TEST(chain3_no_contact_no_iteration)
{
    ts_fixture f;
    ts_fx_open(&f, tm_chain3(), 1);
    gs_solve_opts o = ts_opts(GS_METHOD_GI, GS_FORM_RELATIVE);
    gs_solve_info info;
    ts_chain3_solve(&f, &o, TS_C3_NO_CONTACT, &info);
    GS_CHECK_INT(info.iterations, 0);
    GS_CHECK_INT(info.n_act, 0);
    ts_fx_free(&f);
}

/* Solve a cloud on a generated model with GI and the oracle: x and w agree to
 * 1e-7 mm, and so do the contact-set sizes. */
static void agree_on(gs_gen_kind kind, double fraction, int ngaps, int with_eq)
{
    ts_fixture f;
    ts_fx_generate(&f, kind, 0, ngaps, 7, fraction);
    if (with_eq) /* permanently fasten two candidates that carry no load */
        ts_fx_fasten_uninstalled(&f, 2);
    gs_solve_opts o = ts_opts(GS_METHOD_GI, GS_FORM_RELATIVE);
    for (int r = 0; r < ngaps; r++) {
        static char what[64];
        snprintf(what, sizeof what, "%s fraction %.1f gap %d", gs_gen_kind_name(kind), fraction, r);
        ts_what = what;
        gs_problem pb = ts_fx_problem(&f, r);
        pb.eq = with_eq ? f.eq : NULL;
        gs_solve_info info;
        ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, KKT_TOL);
        gs_ref_info ri = ts_fx_reference(&f, &pb);
        ts_check_matches_ref(&f, what);
        GS_CHECK_INT(info.n_act, ri.n_act);
    }
    ts_what = "";
    ts_fx_free(&f);
}

GS_TEST(agrees_with_oracle_lap)
{
    double fr[4] = {0.0, 0.1, 0.5, 1.0};
    for (int f = 0; f < 4; f++)
        agree_on(GS_GEN_LAP, fr[f], 6, 0);
}

GS_TEST(agrees_with_oracle_sandwich)
{
    double fr[4] = {0.0, 0.1, 0.5, 1.0};
    for (int f = 0; f < 4; f++)
        agree_on(GS_GEN_SANDWICH, fr[f], 6, 0);
}

GS_TEST(agrees_with_oracle_equality_pairs)
{
    agree_on(GS_GEN_LAP, 0.5, 4, 1);
    agree_on(GS_GEN_SANDWICH, 0.5, 4, 1);
}

/* The certificate of a GI relative solve takes its w from GI's last refresh
 * when that was made at exactly the returned multipliers (solver.c,
 * w_lam): the solver hands it over on these gaps (cold and warm), the
 * returned w is that refresh to the bit, and it matches an independent
 * certificate of the returned multipliers (w summed over the support in pair
 * order) to rounding, measures and objectives alike. */
GS_TEST(certificate_from_last_refresh)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_LAP, 0, 4, 11, 0.5);
    const int m = f.m;
    double *wi = malloc(m * sizeof *wi), *l0 = malloc(m * sizeof *l0);
    gs_solve_opts o = ts_opts(GS_METHOD_GI, GS_FORM_RELATIVE);
    o.want_x = 0;
    int handed = 0;
    for (int r = 0; r < 4; r++)
        for (int warm = 0; warm < 2; warm++) {
            gs_problem pb = ts_fx_problem(&f, r);
            gs_warm wm = {.n_act = 0, .act = f.act, .lam = l0};
            if (warm) { /* from gap r - 1's solution */
                wm.n_act = ts_contact_set(l0, NULL, m, f.act);
                o.warm = &wm;
            }
            gs_solve_info info;
            ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, NULL, &info, KKT_TOL);
            o.warm = NULL;
            if (f.sv->w_lam) {
                handed++;
                GS_CHECK(memcmp(f.w, f.sv->w_lam, (size_t)m * sizeof *f.w) == 0);
            }
            gs_kkt ki;
            GS_CHECK_INT(gs_kkt_dual(&pb, f.lam, wi, &ki, NULL), GS_OK);
            double wmax = 0.0;
            for (int i = 0; i < m; i++)
                wmax = fmax(wmax, fabs(wi[i]));
            GS_CHECK(ts_max_diff(f.w, wi, m) <= 1e-13 * (1 + wmax));
            GS_CHECK_INT(info.kkt.n_act, ki.n_act);
            GS_CHECK_NEAR(info.kkt.primal_infeas, ki.primal_infeas, 1e-13 * (1 + wmax));
            GS_CHECK_NEAR(info.kkt.complementarity, ki.complementarity,
                          1e-13 * (1 + wmax) * (1 + ki.norm_lam));
            GS_CHECK_NEAR(info.kkt.obj_dual, ki.obj_dual, 1e-12 * (1 + fabs(ki.obj_dual)));
            GS_CHECK_NEAR(info.kkt.gap, ki.gap, 1e-12 * (1 + fabs(ki.obj_dual)));
            memcpy(l0, f.lam, (size_t)m * sizeof *l0);
        }
    GS_CHECK_MSG(handed >= 6, "w handed over in %d of 8 solves", handed);
    free(wi);
    free(l0);
    ts_fx_free(&f);
}

/* Warm start from the solution of a neighbouring problem (one more fastener)
 * gives the cold answer in fewer iterations; from the same problem's own
 * solution it needs no GI step at all. */
GS_TEST(warm_start)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_SANDWICH, 0, 1, 3, 0.5);
    const int m = f.m;
    double *l0 = malloc(m * sizeof *l0), *l1 = malloc(m * sizeof *l1), *l2 = malloc(m * sizeof *l2);
    gs_solve_opts o = ts_opts(GS_METHOD_GI, GS_FORM_RELATIVE);
    o.want_x = 0;
    gs_problem pb = ts_fx_problem(&f, 0);
    gs_solve_info i0, i1, i2;
    ts_solve_ok(f.sv, &pb, &o, l0, f.w, NULL, &i0, KKT_TOL);
    int na = ts_contact_set(l0, NULL, m, f.act);
    GS_CHECK_INT(na, i0.n_act);
    /* same problem, warm: zero GI steps, same multipliers */
    gs_warm warm = {.n_act = na, .act = f.act, .lam = l0};
    o.warm = &warm;
    ts_solve_ok(f.sv, &pb, &o, l1, f.w, NULL, &i1, KKT_TOL);
    GS_CHECK_INT(i1.warm_used, 1);
    GS_CHECK_INT(i1.warm_kept, na);
    GS_CHECK_INT(i1.iterations, 0);
    for (int k = 0; k < m; k++)
        GS_CHECK_NEAR(l1[k], l0[k], 1e-9 * (1 + fabs(l0[k])));
    /* neighbouring problem: one more fastener installed */
    for (int i = 0; i < f.mdl->n_fast; i++)
        if (!f.inst[i]) {
            f.inst[i] = 1;
            break;
        }
    gs_model_pattern_load(f.mdl, f.inst, f.load);
    o.warm = NULL;
    ts_solve_ok(f.sv, &pb, &o, l1, f.w, NULL, &i1, KKT_TOL);
    o.warm = &warm;
    ts_solve_ok(f.sv, &pb, &o, l2, f.w, NULL, &i2, KKT_TOL);
    for (int k = 0; k < m; k++)
        GS_CHECK_NEAR(l2[k], l1[k], 1e-8 * (1 + fabs(l1[k])));
    GS_CHECK_MSG(2 * i2.iterations <= i1.iterations, "warm %d vs cold %d iterations",
                 i2.iterations, i1.iterations);
    free(l0); free(l1); free(l2);
    ts_fx_free(&f);
}

GS_TEST(iteration_limit_and_option_errors)
{
    ts_fixture f;
    ts_fx_open(&f, tm_chain3(), 1);
    gs_solve_opts o = ts_opts(GS_METHOD_GI, GS_FORM_RELATIVE);
    gs_solve_info info;
    gs_error e;
    double *lam = f.lam;
    gs_problem pb = ts_chain3_problem(f.pc, TS_C3_ALL_CONTACT);
    o.max_iter = 1;
    GS_CHECK_INT(ts_solve(f.sv, &pb, &o, lam, NULL, NULL, &info), GS_STATUS_MAX_ITER);
    GS_CHECK(!gs_kkt_pass(&info.kkt, 1e-9));
    o = ts_opts(GS_METHOD_GI, GS_FORM_RELATIVE);
    o.tol = 0.0;
    GS_CHECK_INT(gs_solve(f.sv, &pb, &o, lam, NULL, NULL, &info, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "tol");
    o = ts_opts(GS_METHOD_GI, GS_FORM_RELATIVE);
    o.form = (gs_form)17;
    GS_CHECK_INT(gs_solve(f.sv, &pb, &o, lam, NULL, NULL, &info, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "form");
    o = ts_opts(GS_METHOD_GI, GS_FORM_RELATIVE);
    int bad = 5;
    gs_warm warm = {.n_act = 1, .act = &bad};
    o.warm = &warm;
    GS_CHECK_INT(gs_solve(f.sv, &pb, &o, lam, NULL, NULL, &info, &e), GS_ERR_RANGE);
    GS_CHECK_STR(e.field, "warm_start");
    gs_method me;
    gs_form fo;
    GS_CHECK_INT(gs_method_parse("gi", &me), 0);
    GS_CHECK_INT(me, GS_METHOD_GI);
    GS_CHECK_INT(gs_form_parse("relative", &fo), 0);
    GS_CHECK_INT(gs_method_parse("nope", &me), -1);
    ts_fx_free(&f);
}

/* The contact-set factor after appends and removals equals a fresh Cholesky
 * of Q_CC. */
GS_TEST(cset_updates_match_fresh_factor)
{
    gs_model *mdl = tm_random(2, 12, 3, 77);
    gs_precomp *pc = ts_build(mdl);
    gs_cset cs;
    GS_CHECK_INT(gs_cset_init(&cs, pc, NULL), GS_OK);
    double l[32];
    int order[8] = {3, 7, 1, 12, 0, 9, 14, 5};
    for (int a = 0; a < 8; a++) {
        double s = gs_cset_schur(&cs, order[a], l);
        GS_CHECK(s > 0);
        gs_cset_append(&cs, order[a], l, s);
    }
    gs_cset_remove(&cs, 2);
    gs_cset_remove(&cs, 0);
    gs_cset_remove(&cs, 5);
    GS_CHECK_INT(cs.k, 5);
    int expect[5] = {7, 12, 0, 9, 14};
    for (int c = 0; c < 5; c++) {
        GS_CHECK_INT(cs.idx[c], expect[c]);
        GS_CHECK_INT(cs.pos[expect[c]], c);
    }
    GS_CHECK_INT(cs.pos[3], -1);
    /* L L' == Q_CC */
    int m = pc->m;
    for (int a = 0; a < 5; a++)
        for (int b = 0; b <= a; b++) {
            double acc = 0;
            for (int c = 0; c <= b; c++)
                acc += cs.f.L[a + c * cs.f.cap] * cs.f.L[b + c * cs.f.cap];
            GS_CHECK_NEAR(acc, pc->Q[(size_t)expect[b] * m + expect[a]], 1e-13);
        }
    /* the residual reads the members' columns of Q in position order (one
     * block of four and one left over), with and without the shift p */
    GS_CHECK(m <= 64);
    double v[5] = {1, -2, 0.5, 3, -1}, wv[64], pv[64];
    for (int i = 0; i < m; i++)
        pv[i] = 0.25 * i - 1.0;
    for (int shift = 0; shift < 2; shift++) {
        gs_cset_residual(&cs, v, shift ? pv : NULL, wv);
        for (int i = 0; i < m; i++) {
            double acc = shift ? -pv[i] : 0.0;
            for (int c = 0; c < 5; c++)
                acc += pc->Q[(size_t)expect[c] * m + i] * v[c];
            GS_CHECK_NEAR(wv[i], acc, 1e-13);
        }
    }
    gs_cset_free(&cs);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* L L' == Q_CC in position order, and idx/pos agree (O(k^3), small sets). */
static void check_factor(const gs_cset *cs, const gs_precomp *pc)
{
    const int m = pc->m;
    for (int c = 0; c < cs->k; c++)
        GS_CHECK_INT(cs->pos[cs->idx[c]], c);
    for (int a = 0; a < cs->k; a++)
        for (int b = 0; b <= a; b++) {
            double acc = 0;
            for (int c = 0; c <= b; c++)
                acc += cs->f.L[a + c * cs->f.cap] * cs->f.L[b + c * cs->f.cap];
            GS_CHECK_NEAR(acc, pc->Q[(size_t)cs->idx[b] * m + cs->idx[a]], 1e-12);
        }
}

/* gs_cset_travel: a near set is reached by updates (the update counter
 * moves, the members are exactly the list's, the factor is Q_CC's), a far
 * one by a fresh build (counter reset); solving on the travelled set gives
 * what a fresh factor gives; nothing stays marked. */
GS_TEST(cset_travel_updates_or_builds)
{
    gs_model *mdl = tm_random(2, 12, 3, 78);
    gs_precomp *pc = ts_build(mdl);
    const int m = pc->m;
    GS_CHECK(m >= 16);
    gs_cset cs, fresh;
    GS_CHECK_INT(gs_cset_init(&cs, pc, NULL), GS_OK);
    GS_CHECK_INT(gs_cset_init(&fresh, pc, NULL), GS_OK);
    int a_set[10] = {0, 2, 3, 5, 7, 9, 11, 12, 14, 15};
    GS_CHECK_INT(gs_cset_travel(&cs, a_set, 10, NULL, NULL), GS_OK); /* empty: builds */
    GS_CHECK(cs.updates == 0);
    int b_set[10] = {0, 2, 3, 5, 7, 9, 11, 12, 14, 13}; /* 15 -> 13 */
    GS_CHECK_INT(gs_cset_travel(&cs, b_set, 10, NULL, NULL), GS_OK);
    GS_CHECK(cs.updates == 2); /* one removal, one append */
    GS_CHECK_INT(cs.k, 10);
    for (int a = 0; a < 10; a++)
        GS_CHECK(cs.pos[b_set[a]] >= 0);
    GS_CHECK_INT(cs.pos[15], -1);
    check_factor(&cs, pc);
    /* the same solution as a fresh factor of the same set */
    GS_CHECK_INT(gs_cset_build(&fresh, b_set, 10, NULL), GS_OK);
    double z1[16], z2[16];
    for (int c = 0; c < 10; c++) {
        z1[c] = 1.0 + cs.idx[c];
        z2[c] = 1.0 + fresh.idx[c];
    }
    gs_cset_solve(&cs, z1);
    gs_cset_solve(&fresh, z2);
    for (int c = 0; c < 10; c++)
        GS_CHECK_NEAR(z1[c], z2[fresh.pos[cs.idx[c]]], 1e-12 * (1 + fabs(z2[fresh.pos[cs.idx[c]]])));
    /* far: a disjoint set is built fresh */
    int c_set[4] = {1, 4, 6, 8};
    GS_CHECK_INT(gs_cset_travel(&cs, c_set, 4, NULL, NULL), GS_OK);
    GS_CHECK(cs.updates == 0);
    GS_CHECK_INT(cs.k, 4);
    check_factor(&cs, pc);
    /* nothing left marked between calls */
    for (int i = 0; i < m; i++)
        GS_CHECK_INT(cs.mark[i], 0);
    gs_cset_free(&cs);
    gs_cset_free(&fresh);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* Removal carries l = L^-1 Q[C, j] to the smaller set (GI's partial step):
 * on a hand-made factor whose removed column has a zero below the diagonal
 * (no rotation for that column) and one rotation, against the hand-computed
 * solve; and on Q_CC at the first, a middle and the last position against a
 * fresh triangular solve on the smaller set. */
GS_TEST(cset_remove_carries_l)
{
    /* L = [2 0 0; 0 3 0; 1 1 4], L v = b with v = (1, 1, 1): b = (2, 3, 6).
     * Without member 0: S' = [9 3; 3 18], L' = [3 0; 1 sqrt(17)], so
     * L'^-1 (3, 6) = (1, 5 / sqrt(17)). */
    gs_cholup ch = {0};
    ch.max = 3;
    GS_CHECK_INT(gs_cholup_reserve(&ch, 3, NULL), GS_OK);
    const double L0[9] = {2, 0, 1, 0, 3, 1, 0, 0, 4}; /* column-major */
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++)
            ch.L[i + (size_t)j * ch.cap] = L0[i + 3 * j];
    ch.k = 3;
    double v[3] = {1, 1, 1};
    gs_cholup_remove_carry(&ch, 0, v);
    GS_CHECK_INT(ch.k, 2);
    GS_CHECK_NEAR(ch.L[0], 3.0, 1e-15);
    GS_CHECK_NEAR(ch.L[1], 1.0, 1e-15);
    GS_CHECK_NEAR(ch.L[1 + ch.cap], sqrt(17.0), 1e-14);
    GS_CHECK_NEAR(v[0], 1.0, 1e-15);
    GS_CHECK_NEAR(v[1], 5.0 / sqrt(17.0), 1e-15);
    gs_cholup_free(&ch);

    gs_model *mdl = tm_random(2, 12, 3, 79);
    gs_precomp *pc = ts_build(mdl);
    GS_CHECK(pc->m > 10);
    const int order[8] = {3, 7, 1, 2, 0, 9, 6, 5}, j = 10, at[3] = {0, 3, 7};
    for (int t = 0; t < 3; t++) {
        gs_cset cs;
        GS_CHECK_INT(gs_cset_init(&cs, pc, NULL), GS_OK);
        double l[16], l2[16];
        for (int a = 0; a < 8; a++) {
            double s = gs_cset_schur(&cs, order[a], l);
            GS_CHECK(s > 0);
            gs_cset_append(&cs, order[a], l, s);
        }
        double s8 = gs_cset_schur(&cs, j, l);
        gs_cset_remove_carry(&cs, at[t], l);
        GS_CHECK_INT(cs.k, 7);
        double s7 = gs_cset_schur(&cs, j, l2), dot = 0;
        for (int c = 0; c < 7; c++) {
            GS_CHECK_NEAR(l[c], l2[c], 1e-12 * (1 + fabs(l2[c])));
            dot += l[c] * l[c];
        }
        GS_CHECK_NEAR(pc->Q[(size_t)j * pc->m + j] - dot, s7, 1e-12 * pc->qdiag[j]);
        GS_CHECK(s7 >= s8 - 1e-12 * pc->qdiag[j]); /* fewer members: no smaller complement */
        gs_cset_free(&cs);
    }
    /* three vectors carried at once (a block of pairs being added) round
     * exactly as each carried alone */
    for (int t = 0; t < 3; t++) {
        gs_cset cs;
        double V[3 * 16], v1[16];
        GS_CHECK_INT(gs_cset_init(&cs, pc, NULL), GS_OK);
        for (int a = 0; a < 8; a++) {
            double s = gs_cset_schur(&cs, order[a], v1);
            gs_cset_append(&cs, order[a], v1, s);
        }
        for (int q = 0; q < 3; q++)
            gs_cset_schur(&cs, 10 + q, V + 16 * q);
        gs_cset_remove_carry_n(&cs, at[t], V, 16, 3);
        for (int q = 0; q < 3; q++) {
            gs_cset c1;
            GS_CHECK_INT(gs_cset_init(&c1, pc, NULL), GS_OK);
            for (int a = 0; a < 8; a++) {
                double s = gs_cset_schur(&c1, order[a], v1);
                gs_cset_append(&c1, order[a], v1, s);
            }
            gs_cset_schur(&c1, 10 + q, v1);
            gs_cset_remove_carry(&c1, at[t], v1);
            GS_CHECK(memcmp(v1, V + 16 * q, 7 * sizeof *v1) == 0);
            gs_cset_free(&c1);
        }
        GS_CHECK_INT(cs.k, 7);
        gs_cset_free(&cs);
    }
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* The factor grows past its capacities (72, 136: leading dimensions 2^j +
 * 8) with its contents kept: 150 appends of a tridiagonal SPD matrix, then
 * L L' == S checked on every entry and the capacity not a power of two. */
GS_TEST(cholup_grows_and_keeps_factor)
{
    enum { K = 150 };
    gs_cholup ch = {0};
    ch.max = 1000;
    double l[K];
    for (int k = 0; k < K; k++) {
        GS_CHECK_INT(gs_cholup_reserve(&ch, k + 1, NULL), GS_OK);
        for (int c = 0; c < k; c++) /* column k of S above the diagonal */
            l[c] = c == k - 1 ? 0.5 : 0.0;
        gs_cholup_solve_L(&ch, l);
        double ll = 0;
        for (int c = 0; c < k; c++)
            ll += l[c] * l[c];
        gs_cholup_append(&ch, l, sqrt(2.0 - ll));
    }
    GS_CHECK_INT(ch.k, K);
    GS_CHECK_INT(ch.cap, 264);
    for (int a = 0; a < K; a++)
        for (int b = 0; b <= a; b++) {
            double acc = 0;
            for (int c = 0; c <= b; c++)
                acc += ch.L[a + (size_t)c * ch.cap] * ch.L[b + (size_t)c * ch.cap];
            GS_CHECK_NEAR(acc, a == b ? 2.0 : (a == b + 1 ? 0.5 : 0.0), 1e-14);
        }
    gs_cholup_free(&ch);
}

/* The rotation's norm: exact on Pythagorean triples, hypot's answer where
 * a square would overflow or underflow (finite, not 0), signs ignored. */
GS_TEST(cholup_norm2_guards_the_range)
{
    GS_CHECK(gs_cholup_norm2(3.0, 4.0) == 5.0);
    GS_CHECK(gs_cholup_norm2(-3.0, 4.0) == 5.0);
    GS_CHECK(gs_cholup_norm2(0.0, -2.0) == 2.0);
    GS_CHECK(gs_cholup_norm2(0.0, 0.0) == 0.0);
    const double big = 3e300, small = 3e-300;
    GS_CHECK(gs_cholup_norm2(big, 4e300) == hypot(big, 4e300));
    GS_CHECK(isfinite(gs_cholup_norm2(big, big)));
    GS_CHECK(gs_cholup_norm2(small, 4e-300) == hypot(small, 4e-300));
    GS_CHECK(gs_cholup_norm2(small, 4e-300) > 0.0);
    GS_CHECK(gs_cholup_norm2(1.0, small) == hypot(1.0, small));
    GS_CHECK_NEAR(gs_cholup_norm2(0.3, 0.7), hypot(0.3, 0.7), 2.3e-16);
}

/* gs_cset_settle_lazy: on a set whose w is current with a margin of 0.5 mm
 * outside C, multipliers exact to rounding are left alone (no refinement, w
 * current); multipliers off by more than rounding are refined and the
 * product is skipped (w untouched, no longer current); with a pair exactly
 * at -tol_w (no margin) the product is made; a member whose force is zero
 * leaves (as gs_cset_settle), and w is made for the smaller set. */
GS_TEST(cset_settle_lazy_skips_only_when_safe)
{
    gs_model *mdl = tm_random(2, 12, 3, 80);
    gs_precomp *pc = ts_build(mdl);
    const int m = pc->m;
    GS_CHECK(m >= 12 && m <= 64);
    const int C[5] = {1, 4, 6, 9, 11};
    const double tol_w = 1e-6, qmax = gs_qdiag_max(pc), tol_lam = gs_zero_force(qmax, tol_w);
    gs_problem pb = {.pc = pc};
    for (int variant = 0; variant < 4; variant++) {
        double lstar[5] = {1, 2, 3, 4, variant == 2 ? 0.0 : 5}, p[64], lc[5], r[5], w[64], w0[64];
        double lc0[5];
        int out[64], current = -1;
        gs_cset cs;
        GS_CHECK_INT(gs_cset_init(&cs, pc, NULL), GS_OK);
        GS_CHECK_INT(gs_cset_build(&cs, C, 5, NULL), GS_OK);
        /* p_C = Q_CC lstar, outside C w = Q_iC lstar - p_i = 0.5 */
        gs_cset_residual(&cs, lstar, NULL, p);
        for (int i = 0; i < m; i++)
            if (cs.pos[i] < 0)
                p[i] -= 0.5;
        if (variant == 1)
            p[0] += 0.5 + tol_w; /* w_0 = -tol_w: no margin */
        for (int c = 0; c < 5; c++) /* variant 3: exact; else an updated solve's round-off */
            lc[c] = variant == 3 ? lstar[c] : lstar[c] * (1 + 1e-9 * (c + 1));
        gs_cset_residual(&cs, lc, p, w);
        memcpy(w0, w, sizeof w0);
        memcpy(lc0, lc, sizeof lc0);
        int removed =
            gs_cset_settle_lazy(&cs, &pb, p, tol_lam, tol_w, qmax, lc, r, w, out, &current);
        GS_CHECK_INT(removed, variant == 2 ? 1 : 0);
        GS_CHECK_INT(cs.k, variant == 2 ? 4 : 5);
        GS_CHECK_INT(current, variant == 0 ? 0 : 1);
        for (int c = 0; c < cs.k; c++)
            GS_CHECK_NEAR(lc[c], lstar[cs.pos[C[c]]], 1e-10);
        if (variant == 0 || variant == 3) {
            GS_CHECK(memcmp(w, w0, sizeof w0) == 0); /* skipped */
            if (variant == 3) /* w_C is rounding: no refinement */
                GS_CHECK(memcmp(lc, lc0, sizeof lc0) == 0);
            else
                GS_CHECK(memcmp(lc, lc0, sizeof lc0) != 0);
        }
        if (current) {
            double wr[64];
            gs_cset_residual(&cs, lc, p, wr);
            for (int i = 0; i < m; i++)
                GS_CHECK(w[i] == wr[i]); /* Q[:, C] lc - p for the final set and lc */
        }
        if (variant == 1)
            GS_CHECK(memcmp(w, w0, sizeof w0) != 0);
        gs_cset_free(&cs);
    }
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* gs_cset_solve_refined: lc = Q_CC^-1 p_C plus one refinement step whose
 * residual p_C - Q_CC lc comes from a gather of Q_CC for a small set and
 * from the full product Q[:, C] lc for a large one (k > m / 14, cset.c):
 * both bitwise equal to the refinement written out here with the gather
 * (each residual summed from p_c in position order), and Q_CC lc = p_C. */
GS_TEST(cset_refined_solve_gather_or_product)
{
    gs_model *mdl = tm_random(2, 100, 3, 82);
    gs_precomp *pc = ts_build(mdl);
    const int m = pc->m;
    GS_CHECK(m > 100 && m <= 128);
    for (int large = 0; large < 2; large++) {
        const int k = large ? 40 : 6; /* 40 * 14 > m >= 6 * 14 */
        int C[40];
        for (int c = 0; c < k; c++) /* not in pair order */
            C[c] = (37 * c + 11) % m;
        gs_cset cs;
        GS_CHECK_INT(gs_cset_init(&cs, pc, NULL), GS_OK);
        GS_CHECK_INT(gs_cset_build(&cs, C, k, NULL), GS_OK);
        double p[128], w[128], lc[40], r[40], lr[40], rr[40];
        for (int i = 0; i < m; i++)
            p[i] = sin(0.7 * i) + 0.5;
        gs_cset_solve_refined(&cs, p, lc, r, w);
        for (int c = 0; c < k; c++)
            lr[c] = p[C[c]];
        gs_cset_solve(&cs, lr);
        for (int c = 0; c < k; c++)
            rr[c] = p[C[c]];
        for (int c2 = 0; c2 < k; c2++)
            for (int c = 0; c < k; c++)
                rr[c] -= pc->Q[(size_t)C[c2] * m + C[c]] * lr[c2];
        gs_cset_solve(&cs, rr);
        double pmax = 0.0;
        for (int c = 0; c < k; c++) {
            GS_CHECK(lc[c] == lr[c] + rr[c]);
            pmax = fmax(pmax, fabs(p[C[c]]));
        }
        for (int c = 0; c < k; c++) /* w = Q[:, C] lc - p: zero on C */
            GS_CHECK_NEAR(w[C[c]], 0.0, 1e-12 * pmax);
        gs_cset_free(&cs);
    }
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* gs_cset_settle on a set where ten members have negative forces, from -40
 * down to -4e-8 (1e-9 of the largest): the same members leave as by the zero
 * rule applied to a refined solve of a freshly factored set after every
 * removal (written out here), the multipliers agree to 1e-10 relative, all
 * >= tol_lam, and w is Q[:, C] lc - p, zero on C. */
GS_TEST(cset_settle_removes_what_refined_solves_would)
{
    gs_model *mdl = tm_random(2, 100, 3, 83);
    gs_precomp *pc = ts_build(mdl);
    const int m = pc->m;
    GS_CHECK(m > 100 && m <= 128);
    const int k0 = 30;
    int C[30];
    double lstar[30], p[128], w[128], lc[30], r[30];
    for (int c = 0; c < k0; c++) {
        C[c] = (41 * c + 7) % m;
        lstar[c] = c % 3 == 1 ? -40.0 * pow(10.0, -(double)(c % 10)) : 1.0 + c % 4;
    }
    gs_problem pb = {.pc = pc};
    const double tol_w = 1e-9, tol_lam = gs_zero_force(gs_qdiag_max(pc), tol_w);
    gs_cset cs;
    GS_CHECK_INT(gs_cset_init(&cs, pc, NULL), GS_OK);
    GS_CHECK_INT(gs_cset_build(&cs, C, k0, NULL), GS_OK);
    gs_cset_residual(&cs, lstar, NULL, p); /* p_C = Q_CC lstar */
    int out[128];
    const int removed = gs_cset_settle(&cs, &pb, p, tol_lam, lc, r, w, out);

    /* the reference: a fresh factor and a refined solve after each removal */
    gs_cset ref;
    GS_CHECK_INT(gs_cset_init(&ref, pc, NULL), GS_OK);
    int list[30], k = k0, nref = 0;
    double lr[30], rr[30], wr[128];
    memcpy(list, C, sizeof list);
    for (;;) {
        GS_CHECK_INT(gs_cset_build(&ref, list, k, NULL), GS_OK);
        gs_cset_solve_refined(&ref, p, lr, rr, wr);
        const int n = gs_zero_rule(k, list, lr, &pb, tol_lam, out);
        if (n == 0)
            break;
        for (int q = 0; q < n; q++) { /* decreasing positions */
            memmove(list + out[q], list + out[q] + 1, (size_t)(k - out[q] - 1) * sizeof *list);
            k--;
        }
        nref += n;
    }
    GS_CHECK(nref >= 8);
    GS_CHECK_INT(removed, nref);
    GS_CHECK_INT(cs.k, k);
    double lmax = 0.0;
    for (int c = 0; c < k; c++)
        lmax = fmax(lmax, fabs(lr[c]));
    for (int c = 0; c < k; c++) {
        const int q = cs.pos[list[c]];
        GS_CHECK(q >= 0);
        if (q >= 0) {
            GS_CHECK_NEAR(lc[q], lr[c], 1e-10 * lmax);
            GS_CHECK(lc[q] >= tol_lam);
            GS_CHECK_NEAR(w[list[c]], 0.0, 1e-11 * lmax * gs_qdiag_max(pc));
        }
    }
    double wc[128];
    gs_cset_residual(&cs, lc, p, wc);
    for (int i = 0; i < m; i++)
        GS_CHECK(w[i] == wc[i]);
    gs_cset_free(&ref);
    gs_cset_free(&cs);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* B == Q[C, pool] entry for entry (copies of Q: exact) in position order. */
static void check_pool(const gs_cpool *pl, const gs_cset *cs, const gs_precomp *pc)
{
    for (int s = 0; s < pl->n; s++) {
        GS_CHECK_INT(cs->pos[pl->pair[s]], -1);
        for (int c = 0; c < cs->k; c++)
            GS_CHECK(pl->B[(size_t)s * pl->ld + c] ==
                     pc->Q[(size_t)pl->pair[s] * pc->m + cs->idx[c]]);
    }
}

/* The candidate pool: filled from a list, its columns follow C through
 * appends (past the capacity it was filled with) and removals; a pick
 * returns the most violated pairs by exact w (against w computed from Q),
 * loaded pairs first, ties by pair index; taken pairs leave with their
 * columns and the others keep theirs. */
GS_TEST(cpool_follows_the_set_and_picks_most_violated)
{
    gs_model *mdl = tm_random(2, 100, 3, 81);
    gs_precomp *pc = ts_build(mdl);
    const int m = pc->m;
    GS_CHECK(m > 100 && m <= 128);
    gs_cset cs;
    GS_CHECK_INT(gs_cset_init(&cs, pc, NULL), GS_OK);
    const int C[4] = {2, 5, 8, 11};
    GS_CHECK_INT(gs_cset_build(&cs, C, 4, NULL), GS_OK);
    gs_cpool pl;
    gs_cpool_init(&pl);
    const int list[6] = {0, 3, 7, 13, 17, 19};
    GS_CHECK_INT(gs_cpool_fill(&pl, &cs, list, 6), GS_OK);
    GS_CHECK_INT(pl.n, 6);
    const size_t ld0 = pl.ld;
    check_pool(&pl, &cs, pc);
    /* appends until C outgrows the rows the pool was filled with */
    double l[128];
    for (int j = 20; j < m && (size_t)cs.k <= ld0 + 1; j++) {
        if (cs.pos[j] >= 0)
            continue;
        GS_CHECK_INT(gs_cset_reserve(&cs, cs.k + 1, NULL), GS_OK);
        double sch = gs_cset_schur(&cs, j, l);
        if (!(sch > GS_CSET_DEP_TOL * pc->qdiag[j]))
            continue;
        gs_cset_append(&cs, j, l, sch);
        GS_CHECK_INT(gs_cpool_appended(&pl, &cs, j), GS_OK);
    }
    GS_CHECK((size_t)cs.k > ld0 && pl.ld >= (size_t)cs.k);
    check_pool(&pl, &cs, pc);
    const int k0 = cs.k;
    gs_cpool_removed(&pl, 1, cs.k);
    gs_cset_remove(&cs, 1);
    gs_cpool_removed(&pl, cs.k - 1, cs.k);
    gs_cset_remove(&cs, cs.k - 1);
    GS_CHECK_INT(cs.k, k0 - 2);
    check_pool(&pl, &cs, pc);

    /* multipliers and p such that w_pool = (-1, -3, +1, -3, -2, -0.5) for
     * pairs (0, 3, 7, 13, 17, 19): 3 and 13 tie at -3 */
    double lc[128], p[128], wq[128];
    for (int c = 0; c < cs.k; c++)
        lc[c] = 0.01 * (c % 5);
    memset(wq, 0, sizeof wq);
    gs_cset_qmul(&cs, lc, wq);
    const double want[6] = {-1, -3, 1, -3, -2, -0.5};
    for (int i = 0; i < m; i++)
        p[i] = wq[i];
    for (int s = 0; s < 6; s++)
        p[list[s]] = wq[list[s]] - want[s];
    int slots[4];
    const int b = gs_cpool_pick(&pl, &cs, lc, p, NULL, 1e-6, slots, 4);
    GS_CHECK_INT(b, 4);
    const int order[4] = {3, 13, 17, 0}; /* -3 (pair 3 before 13), -2, -1 */
    for (int i = 0; i < b; i++) {
        GS_CHECK_INT(pl.pair[slots[i]], order[i]);
        GS_CHECK_NEAR(pl.w[slots[i]], want[i == 0 ? 1 : i == 1 ? 3 : i == 2 ? 4 : 0], 1e-12);
    }
    /* a loaded pair is taken first, and only loaded pairs with it */
    double load[128] = {0};
    load[19] = 1.0;
    load[7] = 1.0; /* loaded but not violated */
    GS_CHECK_INT(gs_cpool_pick(&pl, &cs, lc, p, load, 1e-6, slots, 4), 1);
    GS_CHECK_INT(pl.pair[slots[0]], 19);
    /* nothing violated beyond tol_w */
    GS_CHECK_INT(gs_cpool_pick(&pl, &cs, lc, p, NULL, 5.0, slots, 4), 0);
    /* take two: their columns and w leave, the others keep their columns */
    GS_CHECK_INT(gs_cpool_pick(&pl, &cs, lc, p, NULL, 1e-6, slots, 2), 2);
    int pairs[2];
    double w2[2], X[2 * 128];
    gs_cpool_take(&pl, slots, 2, cs.k, pairs, w2, X, 128);
    GS_CHECK_INT(pairs[0], 3);
    GS_CHECK_INT(pairs[1], 13);
    GS_CHECK_NEAR(w2[0], -3.0, 1e-12);
    for (int q = 0; q < 2; q++)
        for (int c = 0; c < cs.k; c++)
            GS_CHECK(X[q * 128 + c] == pc->Q[(size_t)pairs[q] * m + cs.idx[c]]);
    GS_CHECK_INT(pl.n, 4);
    for (int s = 0; s < pl.n; s++)
        GS_CHECK(pl.pair[s] != 3 && pl.pair[s] != 13);
    check_pool(&pl, &cs, pc);
    gs_cpool_free(&pl);
    gs_cset_free(&cs);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* Two pairs violated together whose constraints are dependent within GI's
 * tolerance (rows of A' (1, 0) and (1, 5e-7), K = I: the Schur complement
 * of the second is 2.5e-13 of its Q_jj, above the precomputation's 1e-13
 * and below GI's 1e-12): the block of both finds the second
 * dependent before any step and lets GI's single step decide about it, as
 * it decides when the pairs come one at a time; the answer is certified
 * and the same whichever order the pairs come in. */
GS_TEST(dependent_pair_in_a_block)
{
    const double eps = 5e-7;
    gs_model *mdl = tm_near_dependent(eps, 1.0, 0.0);
    ts_fixture f;
    ts_fx_open(&f, mdl, 1);
    gs_solve_opts o = ts_opts(GS_METHOD_GI, GS_FORM_RELATIVE);
    double lam[2][2];
    for (int c = 0; c < 2; c++) {
        /* x0 = f0 = 1 without contact: both gaps closed by 0.5, the second
         * (c = 0) or the first (c = 1) slightly more */
        f.G[0] = c == 0 ? 0.5 : 0.4;
        f.G[1] = c == 0 ? 0.4 : 0.5;
        gs_problem pb = ts_fx_problem(&f, 0);
        gs_solve_info info;
        ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, KKT_TOL);
        GS_CHECK_NEAR(f.x[0], 0.4, 1e-9); /* the tighter gap holds */
        memcpy(lam[c], f.lam, sizeof lam[c]);
    }
    GS_CHECK_NEAR(lam[0][0] + lam[0][1], 0.6, 1e-6); /* the force that holds x0 */
    GS_CHECK_NEAR(lam[1][0] + lam[1][1], 0.6, 1e-6);
    ts_fx_free(&f);
}

GS_TEST_MAIN()
