/*
 * test_pairing.c -- node CSV files and the pairing of two contact surfaces
 * (core/pairing.h, `gapsim pair`).
 *
 * Asserts: the CSV reader takes a header, comments, blank lines, comma or
 * blank separators and optional normals, and names the line of every bad
 * input (field count, number, mixed widths, non-unit normal, duplicate
 * label); on a tilted 6 x 5 grid (normal n0, no axis-aligned) whose upper
 * copy is moved 0.3 mm along n0 and jittered tangentially, every node pairs
 * with its twin, the surface normal equals n0 (lower -> upper) to 1e-12 and
 * the nominal gap is 0.3 mm to 1e-12; a far node and a too-small tolerance
 * leave nodes unpaired, reported; two upper nodes near one lower node give
 * one pair (mutual nearest); CSV and given normals take precedence; jig pairs
 * need a normal; a lone lower node cannot give a surface normal (an error
 * naming it). The reader refuses labels outside the model's [0, 2^53] and NUL
 * bytes, naming the line. The model's node table numbers a node once when it
 * is in two sets (an upper node against the jig, a lower node with the jig
 * part), pairs' nodes in order otherwise, and refuses what a model could not
 * load: two positions or two normals for one node, a pair joining a node to
 * itself, two pairs on the same nodes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_test.h"
#include "pairing.h"

static gs_err parse(const char *text, gs_pnode **v, int *n, gs_error *e)
{
    return gs_pnodes_parse(text, strlen(text), 1000, v, n, e);
}

GS_TEST(pnodes_csv_accepts_and_names_bad_lines)
{
    gs_pnode *v = NULL;
    int n = 0;
    gs_error e;
    GS_CHECK_INT(parse("label,x,y,z\n# a comment\n\n 101, 1.5, -2, 3e1\n102 0 0 0\n", &v, &n, &e),
                 GS_OK);
    GS_CHECK_INT(n, 2);
    GS_CHECK(v[0].label == 101 && v[0].xyz[0] == 1.5 && v[0].xyz[1] == -2 && v[0].xyz[2] == 30);
    GS_CHECK(v[1].label == 102 && !v[1].has_n);
    free(v);
    GS_CHECK_INT(parse("7,0,0,0,0,0.6,0.8\n", &v, &n, &e), GS_OK);
    GS_CHECK(v[0].has_n && v[0].n[1] == 0.6 && v[0].n[2] == 0.8);
    free(v);
    const struct {
        const char *text;
        gs_err code;
        const char *needle;
    } bad[] = {
        {"1,0,0\n", GS_ERR_FORMAT, "line 1: expected label,x,y,z"},
        {"h\n1,0,0,0\n2,0,x,0\n", GS_ERR_FORMAT, "line 3: field 3 'x' is not a finite number"},
        {"1,0,0,0\n2.5,0,0,0\n", GS_ERR_FORMAT, "line 2: field 1 '2.5' is not a node label"},
        {"1,0,0,0\n2,0,0,0,0,0,1\n", GS_ERR_FORMAT, "line 2: 7 fields, the lines before have 4"},
        {"1,0,0,0,0,0,2\n", GS_ERR_INVALID, "line 1: the normal"},
        {"1,0,0,0\n1,1,1,1\n", GS_ERR_DUPLICATE, "node 1 is listed twice"},
        {"1,0,0,inf\n", GS_ERR_FORMAT, "not a finite number"},
        {"# only a comment\n", GS_ERR_FORMAT, "no nodes"},
        {"1,0,0,0\n-5,0,0,1\n", GS_ERR_RANGE, "line 2: node label -5 out of range [0, 2^53]"},
        {"label,x,y,z\n9007199254740993,0,0,0\n", GS_ERR_RANGE, "line 2: node label"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        v = NULL;
        GS_CHECK_MSG(parse(bad[k].text, &v, &n, &e) == bad[k].code, "case %zu: %s", k, e.msg);
        GS_CHECK_MSG(strstr(e.msg, bad[k].needle) != NULL, "case %zu: %s", k, e.msg);
        GS_CHECK(v == NULL);
    }
    /* the largest label a model takes */
    GS_CHECK_INT(parse("9007199254740992,0,0,0\n0,1,0,0\n", &v, &n, &e), GS_OK);
    GS_CHECK(n == 2 && v[0].label == GS_PNODE_LABEL_MAX && v[1].label == 0);
    free(v);
}

/* A NUL byte ends the number scanners' copy of a field: "5\0junk" would read as 5. */
GS_TEST(pnodes_csv_refuses_nul_bytes)
{
    const struct {
        const char *text;
        size_t len;
        const char *needle;
    } bad[] = {
        {"1,0,0,0\n2,5\0junk,0,0\n", 22, "line 2: a NUL byte"},
        {"1,0,0,0\n2\0,5,0,0\n", 18, "line 2: a NUL byte"},
        {"# a\0comment\n1,0,0,0\n", 21, "line 1: a NUL byte"},
        {"1,0,0,0\n2,1,0,0\0\n", 18, "line 2: a NUL byte"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        gs_pnode *v = NULL;
        int n = 0;
        gs_error e;
        GS_CHECK_MSG(gs_pnodes_parse(bad[k].text, bad[k].len, 1000, &v, &n, &e) ==
                         GS_ERR_FORMAT, "case %zu: %s", k, e.msg);
        GS_CHECK_MSG(strstr(e.msg, bad[k].needle) != NULL, "case %zu: %s", k, e.msg);
        GS_CHECK(v == NULL);
    }
}

/* A 6 x 5 grid on the plane through c with unit normal n0: lower nodes at
 * c + a t1 + b t2 (10 mm pitch), upper nodes moved by gap n0 plus a
 * tangential jitter below 0.05 mm. Labels 1.. and 101... */
static const double N0[3] = {0.36, -0.48, 0.8}; /* unit: 0.1296 + 0.2304 + 0.64 */
static void tilted_grid(gs_pnode *lo, gs_pnode *up, double gap)
{
    const double t1[3] = {0.8, 0.6, 0.0}; /* t1.n0 = 0.288 - 0.288 + 0 = 0 */
    const double t2[3] = {N0[1] * t1[2] - N0[2] * t1[1], N0[2] * t1[0] - N0[0] * t1[2],
                          N0[0] * t1[1] - N0[1] * t1[0]}; /* n0 x t1 */
    for (int a = 0, k = 0; a < 6; a++)
        for (int b = 0; b < 5; b++, k++) {
            const double ja = 0.04 * sin(1.3 * k), jb = 0.04 * cos(0.7 * k);
            memset(&lo[k], 0, sizeof lo[k]);
            memset(&up[k], 0, sizeof up[k]);
            lo[k].label = k + 1;
            up[k].label = k + 101;
            for (int c = 0; c < 3; c++) {
                lo[k].xyz[c] = 100.0 * N0[c] + 10.0 * a * t1[c] + 10.0 * b * t2[c];
                up[k].xyz[c] = lo[k].xyz[c] + gap * N0[c] + ja * t1[c] + jb * t2[c];
            }
        }
}

GS_TEST(pairing_tilted_surfaces)
{
    gs_pnode lo[31], up[31];
    tilted_grid(lo, up, 0.3);
    gs_pairing pr;
    gs_error e;
    gs_pairing_opts o = {.tol = 0.5};
    GS_CHECK_INT(gs_pair_surfaces(up, 30, lo, 30, &o, &pr, &e), GS_OK);
    GS_CHECK_INT(pr.np, 30);
    GS_CHECK(pr.n_up == 0 && pr.n_lo == 0);
    GS_CHECK_NEAR(pr.radius, 25.0, 1e-9); /* 2.5 x the 10 mm pitch */
    double dn = 0.0, dg = 0.0;
    for (int k = 0; k < pr.np; k++) {
        GS_CHECK_INT(pr.pairs[k].i, pr.pairs[k].j); /* twins */
        for (int c = 0; c < 3; c++)
            dn = fmax(dn, fabs(pr.pairs[k].n[c] - N0[c]));
        dg = fmax(dg, fabs(pr.pairs[k].gap - 0.3));
        GS_CHECK(pr.pairs[k].dist >= 0.3 && pr.pairs[k].dist < 0.31);
    }
    GS_CHECK_MSG(dn <= 1e-12 && dg <= 1e-12, "normal off by %.3g, gap by %.3g", dn, dg);
    gs_pairing_free(&pr);

    /* a far upper node is unpaired; so is every node when tol < the distance */
    up[30] = up[0];
    up[30].label = 999;
    up[30].xyz[0] += 50.0;
    GS_CHECK_INT(gs_pair_surfaces(up, 31, lo, 30, &o, &pr, &e), GS_OK);
    GS_CHECK(pr.np == 30 && pr.n_up == 1 && up[pr.unpaired_up[0]].label == 999);
    gs_pairing_free(&pr);
    o.tol = 0.2;
    GS_CHECK_INT(gs_pair_surfaces(up, 30, lo, 30, &o, &pr, &e), GS_OK);
    GS_CHECK(pr.np == 0 && pr.n_up == 30 && pr.n_lo == 30);
    gs_pairing_free(&pr);

    /* two upper nodes within tol of one lower node: one pair, the nearer */
    o.tol = 0.5;
    up[30] = up[4];
    up[30].label = 998;
    for (int c = 0; c < 3; c++)
        up[30].xyz[c] = lo[4].xyz[c] + 0.31 * N0[c];
    GS_CHECK_INT(gs_pair_surfaces(up, 31, lo, 30, &o, &pr, &e), GS_OK);
    GS_CHECK_INT(pr.np, 30);
    GS_CHECK_INT(pr.n_up, 1);
    GS_CHECK(up[pr.unpaired_up[0]].label == 998 || up[pr.unpaired_up[0]].label == 105);
    gs_pairing_free(&pr);

    /* a given normal, and a CSV normal on a lower node, take precedence */
    const double ez[3] = {0, 0, 1};
    o.normal = ez;
    lo[7].has_n = 1;
    memcpy(lo[7].n, N0, sizeof N0);
    GS_CHECK_INT(gs_pair_surfaces(up, 30, lo, 30, &o, &pr, &e), GS_OK);
    for (int k = 0; k < pr.np; k++)
        GS_CHECK(!memcmp(pr.pairs[k].n, pr.pairs[k].j == 7 ? N0 : ez, sizeof ez));
    GS_CHECK_NEAR(pr.pairs[0].gap, 0.3 * N0[2] + (up[0].xyz[2] - lo[0].xyz[2] - 0.3 * N0[2]),
                  1e-12);
    /* jig pairs: the given normal; without one, an error naming the node */
    gs_pnode jig[1] = {{.label = 55, .xyz = {0, 0, -5}}};
    GS_CHECK_INT(gs_pair_jig(jig, 1, NULL, &pr, &e), GS_ERR_INVALID);
    GS_CHECK(strstr(e.msg, "jig node 55") != NULL);
    GS_CHECK_INT(gs_pair_jig(jig, 1, ez, &pr, &e), GS_OK);
    GS_CHECK(pr.np == 31 && pr.pairs[30].j == -1 && pr.pairs[30].n[2] == 1.0);
    gs_pairing_free(&pr);
}

GS_TEST(pairing_errors)
{
    gs_pnode lo[3] = {{.label = 1}, {.label = 2, .xyz = {10, 0, 0}}, {.label = 3, .xyz = {20, 0, 0}}};
    gs_pnode up[1] = {{.label = 9, .xyz = {0, 0, 0.1}}};
    gs_pairing pr;
    gs_error e;
    gs_pairing_opts o = {.tol = 0.0};
    GS_CHECK_INT(gs_pair_surfaces(up, 1, lo, 3, &o, &pr, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "tol");
    o.tol = 1.0; /* three collinear lower nodes: no surface normal */
    GS_CHECK_INT(gs_pair_surfaces(up, 1, lo, 3, &o, &pr, &e), GS_ERR_INVALID);
    GS_CHECK_MSG(strstr(e.msg, "lower node 1") != NULL, "%s", e.msg);
    const double bad[3] = {0, 0, 2};
    o.normal = bad;
    GS_CHECK_INT(gs_pair_surfaces(up, 1, lo, 3, &o, &pr, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "normal");
}

/* Upper nodes 1, 2, 3 at z = 1, lower nodes 11, 12, 13 at z = 0.7 below them:
 * three pairs with normal +z (given), nominal gaps 0.3. */
static void three_pairs(gs_pnode up[3], gs_pnode lo[3], gs_pairing *pr)
{
    const double xy[3][2] = {{0, 0}, {10, 0}, {0, 10}};
    for (int k = 0; k < 3; k++) {
        up[k] = (gs_pnode){.label = 1 + k, .xyz = {xy[k][0], xy[k][1], 1.0}};
        lo[k] = (gs_pnode){.label = 11 + k, .xyz = {xy[k][0], xy[k][1], 0.7}};
    }
    const double ez[3] = {0, 0, 1};
    gs_pairing_opts o = {.tol = 0.5, .normal = ez};
    gs_error e;
    GS_CHECK_INT(gs_pair_surfaces(up, 3, lo, 3, &o, pr, &e), GS_OK);
    GS_CHECK_INT(pr->np, 3);
}

GS_TEST(pair_nodes_numbering)
{
    gs_pnode up[3], lo[3], jig[2];
    gs_pairing pr;
    gs_pair_nodes pn;
    gs_error e;
    three_pairs(up, lo, &pr);
    const gs_pnode *set[3] = {up, lo, jig};
    int part[3] = {0, 1, 0};
    /* no node in two sets: pair k's i and j are nodes 2k and 2k + 1, as before */
    jig[0] = (gs_pnode){.label = 50, .xyz = {5, 5, 1}};
    const double down[3] = {0, 0, -1};
    GS_CHECK_INT(gs_pair_jig(jig, 1, down, &pr, &e), GS_OK);
    GS_CHECK_INT(gs_pair_nodes_build(set, part, &pr, 0.5, &pn, &e), GS_OK);
    GS_CHECK_INT(pn.n_nodes, 7);
    for (int k = 0; k < 3; k++)
        GS_CHECK(pn.pi[k] == 2 * k && pn.pj[k] == 2 * k + 1 && pn.node[2 * k].set == 0 &&
                 pn.node[2 * k + 1].set == 1 && pn.node[2 * k + 1].idx == pr.pairs[k].j);
    GS_CHECK(pn.pi[3] == 6 && pn.pj[3] == -1 && pn.node[6].set == 2 && pn.node[6].idx == 0);
    gs_pair_nodes_free(&pn);
    gs_pairing_free(&pr);

    /* the reviewer's case: upper node 1 also against the jig (antiparallel
     * normal): one node in two pairs, not node 1 written twice */
    three_pairs(up, lo, &pr);
    jig[0] = up[0];
    GS_CHECK_INT(gs_pair_jig(jig, 1, down, &pr, &e), GS_OK);
    GS_CHECK_INT(gs_pair_nodes_build(set, part, &pr, 0.5, &pn, &e), GS_OK);
    GS_CHECK_INT(pn.n_nodes, 6);
    GS_CHECK(pn.pi[3] == pn.pi[0] && pn.pj[3] == -1);
    GS_CHECK(pn.node[pn.pi[0]].set == 0 && up[pn.node[pn.pi[0]].idx].label == 1);
    gs_pair_nodes_free(&pn);
    gs_pairing_free(&pr);

    /* a jig of part 1: lower node 12 against it is the lower node */
    three_pairs(up, lo, &pr);
    jig[0] = lo[1];
    part[2] = 1;
    GS_CHECK_INT(gs_pair_jig(jig, 1, down, &pr, &e), GS_OK);
    GS_CHECK_INT(gs_pair_nodes_build(set, part, &pr, 0.5, &pn, &e), GS_OK);
    GS_CHECK_INT(pn.n_nodes, 6);
    int k12 = -1;
    for (int k = 0; k < 3; k++)
        k12 = lo[pr.pairs[k].j].label == 12 ? k : k12;
    GS_CHECK(k12 >= 0 && pn.pi[3] == pn.pj[k12]);
    gs_pair_nodes_free(&pn);
    gs_pairing_free(&pr);
}

GS_TEST(pair_nodes_refuses_what_a_model_cannot_load)
{
    gs_pnode up[3], lo[3], jig[1];
    gs_pairing pr;
    gs_pair_nodes pn;
    gs_error e;
    const gs_pnode *set[3] = {up, lo, jig};
    int part[3] = {0, 1, 0};
    /* one node, two normals that are not parallel */
    three_pairs(up, lo, &pr);
    jig[0] = up[2];
    const double ex[3] = {1, 0, 0};
    GS_CHECK_INT(gs_pair_jig(jig, 1, ex, &pr, &e), GS_OK);
    GS_CHECK_INT(gs_pair_nodes_build(set, part, &pr, 0.5, &pn, &e), GS_ERR_INVALID);
    GS_CHECK_MSG(strstr(e.msg, "node 3 of part 0 is in pair 2") &&
                     strstr(e.msg, "a node carries one contact normal"), "%s", e.msg);
    GS_CHECK(pn.node == NULL && pn.pi == NULL);
    gs_pairing_free(&pr);
    /* one label, two positions */
    three_pairs(up, lo, &pr);
    jig[0] = up[1];
    jig[0].xyz[0] += 3.0;
    const double down[3] = {0, 0, -1};
    GS_CHECK_INT(gs_pair_jig(jig, 1, down, &pr, &e), GS_OK);
    GS_CHECK_INT(gs_pair_nodes_build(set, part, &pr, 0.5, &pn, &e), GS_ERR_INVALID);
    GS_CHECK_MSG(strstr(e.msg, "node 2 of part 0 is at") && strstr(e.msg, "3 mm apart"), "%s",
                 e.msg);
    GS_CHECK_STR(e.field, "jig");
    gs_pairing_free(&pr);
    /* upper and lower of one part sharing a label: a pair of a node with itself */
    three_pairs(up, lo, &pr);
    lo[0].label = 1;
    part[1] = 0;
    GS_CHECK_INT(gs_pair_nodes_build(set, part, &pr, 0.5, &pn, &e), GS_ERR_INVALID);
    GS_CHECK_MSG(strstr(e.msg, "joins node 1 of part 0 to itself"), "%s", e.msg);
    /* ... or labels crossed: two positions 10 mm apart per label, and with a
     * position tolerance beyond that, two pairs on the same two nodes */
    lo[0].label = 2;
    lo[1].label = 1;
    GS_CHECK_INT(gs_pair_nodes_build(set, part, &pr, 0.5, &pn, &e), GS_ERR_INVALID);
    GS_CHECK_MSG(strstr(e.msg, "one label for two nodes"), "%s", e.msg);
    GS_CHECK_INT(gs_pair_nodes_build(set, part, &pr, 20.0, &pn, &e), GS_ERR_DUPLICATE);
    GS_CHECK_MSG(strstr(e.msg, "join the same nodes"), "%s", e.msg);
    gs_pairing_free(&pr);
}

GS_TEST_MAIN()
