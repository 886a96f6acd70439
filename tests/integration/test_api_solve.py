"""POST /v1/assemblies/{id}/solve and GET /v1/results/{id}: the numbers,
the solvers agreeing, the returned fields, the result cache, warm starts."""
import unittest

from api_common import ApiCase, metric


class SolveTest(ApiCase):

    def test_open_gaps_without_load(self):
        # no fasteners, all gaps >= 0: nothing closes, w = g, lambda = 0
        g = self.G[0]
        self.assertGreaterEqual(min(g), 0)
        res = self.solve(g, fasteners="none")
        self.assertEqual(res["status"], "optimal")
        self.assertEqual(res["n_act"], 0)
        self.assertEqual(res["contact"], [])
        self.assert_close(res["w"], g, 1e-12)
        self.assertEqual(res["lambda"], [0.0] * self.m)
        self.assertEqual(res["assembly_id"], self.aid)
        self.assertIsNone(res["job_id"])
        self.assertTrue(res["id"].startswith("r_"))
        self.assertFalse(res["cached"])

    def test_fasteners_close_gaps(self):
        g = self.G[1]
        res = self.solve(g, fasteners="all")
        self.assertEqual(res["status"], "optimal")
        self.assertGreater(res["n_act"], 0)
        self.assert_complementary(res)
        # the fastener pulls the parts together: residuals shrink
        self.assertLess(sum(res["w"]), sum(g))
        self.assertGreater(sum(res["lambda"]), 0)
        for k in ("primal_infeas", "dual_infeas", "complementarity", "stationarity"):
            self.assertLess(res["kkt"][k], 1e-6, res["kkt"])

    def test_solvers_agree(self):
        g = [x - 0.1 for x in self.G[2]]  # some pairs interpenetrate: contact without load
        ref = None
        for solver, form in (("gi", "default"), ("lemke", "default"), ("npm", "default"),
                             ("ipm", "default"), ("ipm", "dual"), ("ref", "default")):
            res = self.solve(g, solver=solver, formulation=form, fasteners=[0, 2, 5, 7],
                             **{"return": ["w", "lambda", "kkt", "x"]})
            self.assertEqual(res["solver"], solver)
            if form != "default":
                self.assertEqual(res["formulation"], form)
            self.assertFalse(res["cached"])  # x asked: always solved
            self.assertEqual(res["status"], "optimal")
            self.assert_complementary(res, tol=1e-6)
            if ref is None:
                ref = res
                self.assertGreater(ref["n_act"], 0)
                continue
            self.assert_close(res["w"], ref["w"], 1e-6, solver)
            self.assert_close(res["lambda"], ref["lambda"], 1e-6 * max(ref["lambda"]), solver)
            self.assertEqual(res["contact"], ref["contact"], solver)

    def test_return_fields(self):
        g = self.G[3]
        res = self.solve(g, fasteners="all", **{"return": ["w"]})
        self.assertIn("w", res)
        self.assertNotIn("lambda", res)
        self.assertNotIn("kkt", res)
        self.assertNotIn("x", res)
        res = self.solve(g, fasteners="all", **{"return": ["lambda", "x", "kkt"]})
        self.assertNotIn("w", res)
        self.assertEqual(len(res["lambda"]), self.m)
        self.assertEqual(len(res["x"]), self.asm["n"])
        self.assertTrue(res["kkt"]["pass"])
        full = self.solve(g, fasteners="all")
        self.assertEqual(full["lambda"], res["lambda"])

    def test_result_get(self):
        res = self.solve(self.G[4], fasteners=[1, 3])
        r = self.d.get("/v1/results/" + res["id"])
        self.assertEqual(r.status, 200)
        got = r.json()
        self.assertEqual(got["id"], res["id"])
        self.assertEqual(got["w"], res["w"])
        self.assertEqual(got["lambda"], res["lambda"])
        self.assertEqual(got["n_act"], res["n_act"])
        self.assertEqual(got["kkt"], res["kkt"])
        self.assertNotIn("cached", got)

    def test_cache_hit(self):
        g = [x - 0.05 for x in self.G[5]]
        hits0 = metric(self.d, "gapsim_cache_hits_total")
        first = self.solve(g, fasteners="all")
        self.assertFalse(first["cached"])
        self.assertEqual(metric(self.d, "gapsim_cache_hits_total"), hits0)
        again = self.solve(g, fasteners="all")
        self.assertTrue(again["cached"])
        self.assertEqual(again["id"], first["id"])
        for k in ("w", "lambda", "n_act", "contact", "kkt", "status", "solver"):
            self.assertEqual(again[k], first[k], k)
        # another solver asked: the QP is the same, so the result is the same
        other = self.solve(g, fasteners=list(range(10)), solver="ipm")
        self.assertTrue(other["cached"])
        self.assertEqual(other["w"], first["w"])
        self.assertEqual(metric(self.d, "gapsim_cache_hits_total"), hits0 + 2)
        # a different gap is not a hit
        g2 = list(g)
        g2[0] += 1e-3
        self.assertFalse(self.solve(g2, fasteners="all")["cached"])
        # a different pattern is not a hit
        self.assertFalse(self.solve(g, fasteners=[0, 1])["cached"])
        self.assertEqual(metric(self.d, "gapsim_cache_hits_total"), hits0 + 2)

    def test_cache_false_solves_and_becomes_the_cached_answer(self):
        """"cache": false solves with the method asked even when the cache
        holds the answer (the cached one was GI's), stores the new result,
        and the cache answers with it (the newest of the key) from then on;
        a cache that is not a boolean is 422 naming it."""
        g = [x - 0.07 for x in self.G[8]]
        hits0 = metric(self.d, "gapsim_cache_hits_total")
        first = self.solve(g, fasteners="all", solver="gi")
        self.assertEqual((first["cached"], first["solver"]), (False, "gi"))
        ipm = self.solve(g, fasteners="all", solver="ipm", formulation="dual", cache=False)
        self.assertEqual((ipm["cached"], ipm["solver"], ipm["formulation"]),
                         (False, "ipm", "dual"))
        self.assertNotEqual(ipm["id"], first["id"])
        self.assertEqual(ipm["n_act"], first["n_act"])
        self.assertLess(max(abs(a - b) for a, b in zip(ipm["w"], first["w"])), 1e-7)
        self.assertEqual(metric(self.d, "gapsim_cache_hits_total"), hits0)
        again = self.solve(g, fasteners="all", cache=True)
        self.assertEqual((again["cached"], again["id"], again["solver"]), (True, ipm["id"], "ipm"))
        self.assertEqual(metric(self.d, "gapsim_cache_hits_total"), hits0 + 1)
        for bad in ("false", 0, None):
            r = self.d.post("/v1/assemblies/%s/solve" % self.aid,
                            {"g": g, "fasteners": "all", "cache": bad})
            self.assert_error(r, 422, "cache")

    def test_warm_start(self):
        g = [x - 0.1 for x in self.G[6]]
        prev = self.solve(g, fasteners=[0, 1, 2, 3, 4])
        for solver, form in (("auto", "default"), ("npm", "default"), ("ipm", "default"),
                             ("ipm", "dual"), ("lemke", "default"), ("gi", "default")):
            cold = self.solve(g, fasteners=[0, 1, 2, 3, 4, 5], solver=solver, formulation=form,
                              **{"return": ["w", "lambda", "kkt", "x"]})
            warm = self.solve(g, fasteners=[0, 1, 2, 3, 4, 5], solver=solver, formulation=form,
                              warm_start=prev["id"], **{"return": ["w", "lambda", "kkt", "x"]})
            self.assertFalse(cold["warm_start_used"], solver)
            self.assertFalse(warm["cached"])
            self.assertEqual(warm["status"], "optimal", solver)
            self.assert_close(warm["w"], cold["w"], 1e-7, solver)
            self.assert_close(warm["lambda"], cold["lambda"], 1e-7 * max(1.0, max(cold["lambda"])),
                              solver)
            self.assertEqual(warm["contact"], cold["contact"], solver)
            if solver == "auto" or form == "dual":  # the primal IPM ignores warm starts
                self.assertTrue(warm["warm_start_used"], warm)
        # a cached answer for the warm-started QP is the cold one's (unique solution)
        hit = self.solve(g, fasteners=[0, 1, 2, 3, 4, 5], warm_start=prev["id"])
        self.assertTrue(hit["cached"])


if __name__ == "__main__":
    unittest.main()
