"""Clouds and jobs: POST /v1/assemblies/{id}/clouds (JSON and raw .npy with
query options), GET /v1/jobs[/{id}], DELETE (cancel), results (paged JSON,
.npy by Accept or ?format=npy, field=lambda), summary checked against the
statistics computed here from the results, cloud warm start, gaps_from."""
import json
import math
import os
import re
import subprocess
import threading
import time
import unittest
import urllib.parse

from api_common import ApiCase, gaps_rows, metric, model, npy_bytes, p95, upload_json
import gsd_harness as h


class CloudTest(ApiCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # one JSON cloud shared by several tests: 40 gaps shifted so that
        # some pairs interpenetrate (contact without load) plus all fasteners
        cls.rows = [[x - 0.05 for x in g] for g in cls.G]
        r = cls.d.post("/v1/assemblies/%s/clouds" % cls.aid,
                       {"gaps": cls.rows, "fasteners": "all", "solver": "gi"})
        assert r.status == 202, (r.status, r.body)
        cls.job = r.json()
        cls.final = cls.d.wait_job(cls.job["id"])

    def test_submit_and_get(self):
        j = self.job
        self.assertTrue(j["id"].startswith("j_"))
        self.assertEqual(j["assembly_id"], self.aid)
        self.assertEqual(j["total"], 40)
        self.assertIn(j["status"], ("queued", "running", "done"))
        self.assertEqual(j["options"]["solver"], "gi")
        self.assertEqual(j["options"]["fasteners"], "all")
        self.assertEqual(j["links"]["results"], "/v1/jobs/%s/results" % j["id"])
        f = self.final
        self.assertEqual(f["status"], "done")
        self.assertEqual((f["done"], f["failed"], f["total"]), (40, 0, 40))
        self.assertEqual(f["progress"], 1.0)
        self.assertEqual(f["eta_s"], 0)
        self.assertGreater(f["solves_per_s"], 0)
        self.assertGreaterEqual(f["finished_at"], f["started_at"])
        self.assertGreaterEqual(f["started_at"], f["created_at"])
        g = self.d.get("/v1/jobs/" + j["id"])
        self.assertEqual(g.status, 200)
        self.assertEqual(g.json()["done"], 40)

    def test_job_list(self):
        r = self.d.get("/v1/jobs")
        self.assertEqual(r.status, 200)
        self.assertIn(self.job["id"], [j["id"] for j in r.json()["jobs"]])
        r = self.d.get("/v1/jobs?assembly=%s&status=done" % self.aid)
        jobs = r.json()["jobs"]
        self.assertIn(self.job["id"], [j["id"] for j in jobs])
        self.assertTrue(all(j["status"] == "done" and j["assembly_id"] == self.aid for j in jobs))
        r = self.d.get("/v1/jobs?status=cancelled&assembly=%s" % self.aid)
        self.assertNotIn(self.job["id"], [j["id"] for j in r.json()["jobs"]])

    def test_results_paged(self):
        jid = self.job["id"]
        r = self.d.get("/v1/jobs/%s/results?offset=0&limit=15" % jid)
        self.assertEqual(r.status, 200)
        p = r.json()
        self.assertEqual((p["job_id"], p["total"], p["offset"], p["limit"]), (jid, 40, 0, 15))
        self.assertEqual(p["next_offset"], 15)
        self.assertEqual([x["job_index"] for x in p["results"]], list(range(15)))
        # default fields: w and kkt, not lambda
        self.assertIn("w", p["results"][0])
        self.assertNotIn("lambda", p["results"][0])
        self.assertIn("kkt", p["results"][0])
        p = self.d.get("/v1/jobs/%s/results?offset=30&limit=15&fields=lambda" % jid).json()
        self.assertIsNone(p["next_offset"])
        self.assertEqual([x["job_index"] for x in p["results"]], list(range(30, 40)))
        self.assertIn("lambda", p["results"][0])
        self.assertNotIn("w", p["results"][0])
        p = self.d.get("/v1/jobs/%s/results?offset=40&fields=none" % jid).json()
        self.assertEqual(p["results"], [])
        self.assertIsNone(p["next_offset"])
        p = self.d.get("/v1/jobs/%s/results?limit=1000&fields=none" % jid).json()
        self.assertEqual(len(p["results"]), 40)
        self.assertNotIn("w", p["results"][0])
        self.assertEqual(p["results"][0]["job_id"], jid)
        # every page concatenated = the whole cloud, every result certified
        res = self.all_results(jid, limit=7)
        self.assertEqual([x["job_index"] for x in res], list(range(40)))
        for x in res:
            self.assertEqual(x["status"], "optimal")
            self.assertTrue(x["kkt"]["pass"], x)
            self.assert_complementary(x)
        # bad paging parameters: 422 naming them, as any query value refused
        self.assert_error(self.d.get("/v1/jobs/%s/results?limit=0" % jid), 422, "limit")
        self.assert_error(self.d.get("/v1/jobs/%s/results?offset=41" % jid), 422, "offset")
        self.assert_error(self.d.get("/v1/jobs/%s/results?offset=x" % jid), 422, "offset")
        self.assert_error(self.d.get("/v1/jobs/%s/results?fields=x" % jid), 422, "fields")
        self.assert_error(self.d.get("/v1/jobs/%s/results?format=npy&field=x" % jid), 422,
                          "field")

    def test_results_equal_individual_solves(self):
        res = self.all_results(self.job["id"])
        for i in (0, 7, 19, 39):
            # x asked: never from the cache, really solved again (other solver too)
            s = self.solve(self.rows[i], fasteners="all", solver="lemke",
                           **{"return": ["w", "lambda", "x", "kkt"]})
            self.assertFalse(s["cached"])
            self.assert_close(res[i]["w"], s["w"], 1e-7, "w %d" % i)
            self.assert_close(res[i]["lambda"], s["lambda"], 1e-7 * max(1.0, max(s["lambda"])),
                              "lambda %d" % i)
            self.assertEqual(res[i]["n_act"], s["n_act"])
            # and the individual solve without x is a stored result (cache): the
            # cloud's or the one just solved, the same numbers
            c = self.solve(self.rows[i], fasteners="all")
            self.assertTrue(c["cached"])
            self.assertIn(c["id"], (res[i]["id"], s["id"]))
            self.assert_close(c["w"], res[i]["w"], 1e-7)
            r = self.d.get("/v1/results/" + res[i]["id"]).json()
            self.assertEqual(r["job_id"], self.job["id"])
            self.assertEqual(r["job_index"], i)
            self.assertEqual(r["w"], res[i]["w"])

    def test_results_npy(self):
        jid = self.job["id"]
        res = self.all_results(jid)
        W = [x for r in res for x in r["w"]]
        L = [x for r in res for x in r["lambda"]]
        r = self.d.get("/v1/jobs/%s/results" % jid, headers={"Accept": "application/x-npy"})
        self.assertEqual(r.status, 200)
        self.assertEqual(r.headers["Content-Type"], "application/x-npy")
        shape, flat = h.read_npy(r.body)
        self.assertEqual(shape, (40, self.m))
        self.assertEqual(flat, W)
        r = self.d.get("/v1/jobs/%s/results?format=npy" % jid)
        self.assertEqual(h.read_npy(r.body), ((40, self.m), W))
        r = self.d.get("/v1/jobs/%s/results?format=npy&field=lambda" % jid)
        self.assertEqual(h.read_npy(r.body), ((40, self.m), L))
        r = self.d.get("/v1/jobs/%s/results?field=lambda" % jid,
                       headers={"Accept": "application/x-npy"})
        self.assertEqual(h.read_npy(r.body), ((40, self.m), L))

    def test_summary(self):
        jid = self.job["id"]
        res = self.all_results(jid)
        n, m = len(res), self.m
        W = [[max(0.0, x) for x in r["w"]] for r in res]
        for thr in (0.1, 0.02):
            r = self.d.get("/v1/jobs/%s/summary?threshold=%g&bins=10" % (jid, thr))
            self.assertEqual(r.status, 200)
            s = r.json()
            self.assertEqual((s["count"], s["total"], s["m"], s["status"]), (n, n, m, "done"))
            self.assertEqual(s["threshold"], thr)
            pairs = s["pairs"]
            for k in range(m):
                col = [W[i][k] for i in range(n)]
                mean = sum(col) / n
                self.assertAlmostEqual(pairs["mean"][k], mean, delta=1e-12)
                std = math.sqrt(max(0.0, sum((c - mean) ** 2 for c in col) / (n - 1)))
                self.assertAlmostEqual(pairs["std"][k], std, delta=1e-9)
                self.assertEqual(pairs["max"][k], max(col))
                self.assertEqual(pairs["p95"][k], p95(col))
                self.assertAlmostEqual(pairs["share_above"][k],
                                       sum(c > thr for c in col) / n, delta=1e-15)
            self.assertTrue(pairs["p95_exact"])
            gmax = [max(row) for row in W]
            share = sum(g > thr for g in gmax) / n
            self.assertAlmostEqual(s["share_gaps_above"], share, delta=1e-15)
            self.assertGreater(s["share_gaps_above"], 0)  # the check is not vacuous
            self.assertAlmostEqual(s["share_values_above"],
                                   sum(v > thr for row in W for v in row) / (n * m), delta=1e-15)
            self.assertEqual(s["max_residual"]["max"], max(gmax))
            self.assertEqual(s["max_residual"]["p95"], p95(gmax))
            self.assertEqual(sum(s["max_residual"]["histogram"]["counts"]), n)
            self.assertEqual(len(s["residual_histogram"]["counts"]), 10)
            # zeros apart: pairs in contact are not in the bins
            in_contact = sum(l > 0 for r in res for l in r["lambda"])
            self.assertGreater(in_contact, 0)
            self.assertEqual(s["residual_histogram"]["in_contact"], in_contact)
            self.assertEqual(sum(s["residual_histogram"]["counts"]) + in_contact, n * m)
            # pairs opened under fastening: w > g + threshold, per pair and per gap
            G = self.rows
            opened = [[res[i]["w"][k] > G[i][k] + thr for k in range(m)] for i in range(n)]
            for k in range(m):
                self.assertAlmostEqual(pairs["opened"][k], sum(o[k] for o in opened) / n, delta=1e-15)
            op = s["opened"]
            self.assertEqual(op["gaps"], sum(any(o) for o in opened))
            self.assertEqual(op["pairs"], sum(any(o[k] for o in opened) for k in range(m)))
            if thr < 0.05:  # all fasteners on shifted gaps: some pairs pry open
                self.assertGreater(op["pairs"], 0)
            if op["pairs"]:
                self.assertIn("prying", op["why"])
            # solve times on log-spaced bins
            h = s["time_ms"]["histogram"]
            self.assertTrue(h["log"])
            e = h["edges"]
            self.assertEqual((e[0], e[-1]), (s["time_ms"]["min"], s["time_ms"]["max"]))
            ratios = [e[i + 1] / e[i] for i in range(len(e) - 1)]
            self.assertLess(max(ratios) - min(ratios), 1e-9 * max(ratios))
            self.assertEqual(sum(h["counts"]), n)
            self.assertFalse(s["max_residual"]["histogram"]["log"])
            nact = [r["n_act"] for r in res]
            self.assertEqual(s["n_act"]["max"], max(nact))
            self.assertAlmostEqual(s["n_act"]["mean"], sum(nact) / n, delta=1e-12)
            self.assertEqual(s["statuses"], {"optimal": n})
            self.assertEqual(s["failures"], 0)
            self.assertEqual(sum(s["solvers"].values()), n)
        # an ended job's summary is computed once per (threshold, bins), then
        # served from memory, the same bytes; the exports use it too
        url = "/v1/jobs/%s/summary?threshold=0.02&bins=10" % jid
        first, hits = self.d.get(url).body, metric(self.d, "gapsim_summary_cache_hits_total")
        self.assertEqual(self.d.get(url).body, first)
        self.assertEqual(metric(self.d, "gapsim_summary_cache_hits_total"), hits + 1)
        other = self.d.get("/v1/jobs/%s/summary?threshold=0.02&bins=11" % jid).json()
        self.assertEqual(len(other["residual_histogram"]["counts"]), 11)
        self.assertEqual(metric(self.d, "gapsim_summary_cache_hits_total"), hits + 1)
        csv = [self.d.get("/v1/jobs/%s/summary?format=csv&threshold=0.03" % jid).body
               for _ in range(2)]
        self.assertEqual(csv[0], csv[1])
        self.assertEqual(metric(self.d, "gapsim_summary_cache_hits_total"), hits + 2)
        self.assert_error(self.d.get("/v1/jobs/%s/summary?threshold=-1" % jid), 422, "threshold")
        self.assert_error(self.d.get("/v1/jobs/%s/summary?threshold=abc" % jid), 422, "threshold")
        self.assert_error(self.d.get("/v1/jobs/%s/summary?bins=0" % jid), 422, "bins")

    def test_summary_pairs_filter(self):
        # ?pairs= keeps only the per-pair arrays asked for (p95_exact goes with
        # p95); everything else is the full summary's, the same values
        jid = self.job["id"]
        full = self.d.get("/v1/jobs/%s/summary?threshold=0.02" % jid).json()
        for q, keep in (("p95", ["p95", "p95_exact"]), ("max,mean", ["mean", "max"]),
                        ("opened,lambda_mean,std,share_above",
                         ["std", "share_above", "lambda_mean", "opened"]),
                        ("none", []), ("", []),
                        ("mean,std,max,p95,share_above,lambda_mean,opened",
                         list(full["pairs"].keys()))):
            r = self.d.get("/v1/jobs/%s/summary?threshold=0.02&pairs=%s" % (jid, q))
            self.assertEqual(r.status, 200, q)
            s = r.json()
            self.assertEqual(list(s["pairs"].keys()), keep, q)
            for k in keep:
                self.assertEqual(s["pairs"][k], full["pairs"][k])
            self.assertEqual({k: v for k, v in s.items() if k != "pairs"},
                             {k: v for k, v in full.items() if k != "pairs"})
            if not keep:
                self.assertEqual(s["pairs"], {})
        small = self.d.get("/v1/jobs/%s/summary?threshold=0.02&pairs=p95" % jid).body
        self.assertLess(len(small), len(self.d.get("/v1/jobs/%s/summary?threshold=0.02"
                                                   % jid).body))
        for bad in ("p99", "p95,", ",p95", "mean;std", "P95"):
            if bad == "p95,":  # a trailing comma lists nothing more
                self.assertEqual(self.d.get("/v1/jobs/%s/summary?pairs=%s" % (jid, bad)).status,
                                 200)
                continue
            self.assert_error(self.d.get("/v1/jobs/%s/summary?pairs=%s" % (jid, bad)), 422,
                              "pairs")
        self.assert_error(self.d.get("/v1/jobs/%s/summary?format=csv&pairs=p95" % jid), 422,
                          "pairs")

    def test_npy_body_with_query_options(self):
        rows = [[x - 0.02 for x in g] for g in self.G[:12]]
        body = npy_bytes(rows)
        r = self.d.post("/v1/assemblies/%s/clouds?solver=lemke&fasteners=0,2,4,6" % self.aid, body,
                        headers={"Content-Type": "application/x-npy"})
        self.assertEqual(r.status, 202, r.body[:300])
        j = r.json()
        self.assertEqual(j["total"], 12)
        self.assertEqual(j["options"]["solver"], "lemke")
        self.assertEqual(j["options"]["fasteners"], [0, 2, 4, 6])
        f = self.d.wait_job(j["id"])
        self.assertEqual((f["status"], f["done"]), ("done", 12))
        res = self.all_results(j["id"])
        for i in (0, 11):
            s = self.solve(rows[i], fasteners=[0, 2, 4, 6], **{"return": ["w", "lambda", "x"]})
            self.assert_close(res[i]["w"], s["w"], 1e-7)
            self.assert_close(res[i]["lambda"], s["lambda"], 1e-7 * max(1.0, max(s["lambda"])))
        # the stored input is exactly what was sent
        p = self.d.get("/v1/jobs/%s/results?format=npy" % j["id"])
        self.assertEqual(h.read_npy(p.body)[0], (12, self.m))
        # application/octet-stream is taken as .npy too, and a 1-D array is one gap
        one = npy_bytes([rows[3]])
        hdr_len = int.from_bytes(one[8:10], "little")
        header = one[10:10 + hdr_len].decode("latin1").replace("(1, %d)" % self.m, "(%d,)" % self.m)
        header = header.rstrip("\n")
        header = header + " " * (hdr_len - len(header) - 1) + "\n"
        one1d = one[:10] + header.encode("latin1") + one[10 + hdr_len:]
        r = self.d.post("/v1/assemblies/%s/clouds?fasteners=0,2,4,6" % self.aid, one1d,
                        headers={"Content-Type": "application/octet-stream"})
        self.assertEqual(r.status, 202, r.body[:300])
        f = self.d.wait_job(r.json()["id"])
        self.assertEqual((f["total"], f["done"]), (1, 1))
        self.assertEqual(self.all_results(f["id"])[0]["w"], res[3]["w"])

    def test_query_numbers_mean_what_json_numbers_mean(self):
        # An .npy upload's query options read their numbers as JSON does: an
        # index list once went through strtod, so "0x9" installed candidate
        # 9 and "%2B0x3,%200x4" installed [3, 4], where the JSON body refuses
        # those values (docs/python.md: the same job or the same error). A
        # query value that is a JSON number token stands for that number,
        # anything else for the string it spells.
        row = [0.1] * self.m
        npy = npy_bytes([row])
        number = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?\Z")

        def as_json(value, is_list):
            tok = lambda t: t if number.match(t) else json.dumps(t)
            if not is_list:
                return tok(value)
            return "[%s]" % ",".join(tok(t) for t in value.split(",")) if value else "[]"

        def both(key, value):
            is_list = key in ("fasteners", "fixed_pairs")
            q = self.d.post("/v1/assemblies/%s/clouds?%s=%s" % (
                self.aid, key, urllib.parse.quote(value, safe=",")), npy,
                headers={"Content-Type": "application/x-npy"})
            body = '{"gaps": [%s], "%s": %s}' % (json.dumps(row), key, as_json(value, is_list))
            j = self.d.post("/v1/assemblies/%s/clouds" % self.aid, body.encode(),
                            headers={"Content-Type": "application/json"})
            return q, j

        bad = {"fasteners": ["0x9", "+3", " 4", "3,0x4", "+0x3, 0x4", "03", "-1", "3.5", "inf",
                             "nan", "4,", "1,1e400"],
               "fixed_pairs": ["0x10", "1,+2", "1, 2", "0x1p4", "1,-0x2"],
               "tol": ["0x1p-30", " 1e-8", "+1e-8", "1e-8 ", ".5", "1.", "inf", "nan", "1e400",
                       "1e-8x", ""],
               "max_iter": ["0x10", "+5", "05", "5.5", "1e9", " 5"],
               "fastener_fraction": ["0x0.8p0", ".5", "+0.5", "0.5 ", "5e-1.0", "2"],
               "timeout_s": ["0x10", "+10", "1e1e1", "-1", "infinity"]}
        for key, values in bad.items():
            for value in values:
                q, j = both(key, value)
                what = "%s=%r" % (key, value)
                self.assertIn(j.status, (400, 422), what + ": " + j.body.decode()[:300])
                je = j.json()["error"]
                qe = self.assert_error(q, j.status, je["field"], je["code"])
                self.assertIn(key, qe["field"], what)
        good = {"fasteners": ["9", "0,3,7", "9.0", "1e0", "-0", ""],
                "fixed_pairs": ["0,1,2", "10", "2E0"],
                "tol": ["1e-8", "1E-8", "0.001", "2.5e-3"], "max_iter": ["500", "5e2", "0"],
                "fastener_fraction": ["0.5", "5e-1", "1", "0"],
                "timeout_s": ["10", "1.5e1", "1e+1"]}
        for key, values in good.items():
            for value in values:
                q, j = both(key, value)
                what = "%s=%r" % (key, value)
                self.assertEqual(j.status, 202, what + ": " + j.body.decode()[:300])
                self.assertEqual(q.status, 202, what + ": " + q.body.decode()[:300])
                self.assertEqual(q.json()["options"], j.json()["options"], what)
        q, _ = both("fasteners", "0x9")  # the report's case: no candidate 9 installed
        self.assert_error(q, 422, "fasteners[0]", "out_of_range")

    def test_cloud_warm_start(self):
        rows = [[x - 0.1 for x in g] for g in self.G[10:22]]
        cold = self.cloud(rows, fasteners=[0, 1, 2, 3, 4], solver="auto")
        self.d.wait_job(cold["id"])
        cold_res = self.all_results(cold["id"])
        # the warm cloud runs on a second daemon: here every gap would be a
        # cache hit of the cold cloud (same QP), never warm-started
        d2 = h.Daemon(workers=2).start()
        try:
            a2 = upload_json(d2, self.model_json).json()["id"]
            p2 = d2.post("/v1/assemblies/%s/clouds" % a2, {"gaps": rows, "fasteners": [0, 1, 2, 3]})
            self.assertEqual(p2.status, 202)
            prev = p2.json()["id"]
            d2.wait_job(prev)
            w2 = d2.post("/v1/assemblies/%s/clouds" % a2,
                         {"gaps": rows, "fasteners": [0, 1, 2, 3, 4], "warm_start": prev})
            self.assertEqual(w2.status, 202, w2.body[:300])
            self.assertEqual(w2.json()["options"]["warm_start"], prev)
            f = d2.wait_job(w2.json()["id"])
            self.assertEqual((f["status"], f["done"], f["failed"]), ("done", 12, 0))
            warm_res = self.all_results(f["id"], d=d2)
            for i in range(12):
                self.assertTrue(warm_res[i]["warm_start_used"], i)
                self.assertFalse(cold_res[i]["warm_start_used"], i)
                self.assertTrue(warm_res[i]["kkt"]["pass"])
                self.assert_close(warm_res[i]["w"], cold_res[i]["w"], 1e-7, "w %d" % i)
                self.assert_close(warm_res[i]["lambda"], cold_res[i]["lambda"],
                                  1e-7 * max(1.0, max(cold_res[i]["lambda"])), "lambda %d" % i)
            s = d2.get("/v1/jobs/%s/summary" % f["id"]).json()
            self.assertEqual(s["warm_started"], 12)
            # warm_start naming a job of another size, an unknown job, a result id: 422
            for bad in ({"gaps": rows[:3], "warm_start": prev},
                        {"gaps": rows, "warm_start": "j_0000000000000000"},
                        {"gaps": rows, "warm_start": "r_0000000000000000"},
                        {"gaps": rows, "warm_start": 5}):
                self.assert_error(d2.post("/v1/assemblies/%s/clouds" % a2, bad), 422,
                                  "warm_start")
            # a job of another assembly
            self.assert_error(self.d.post("/v1/assemblies/%s/clouds" % self.aid,
                                          {"gaps": rows, "warm_start": prev}), 422, "warm_start")
        finally:
            d2.cleanup()

    def test_factor_cache_warm_moves(self):
        # the moves of a pattern search: clouds warm from the same job. The
        # first builds each gap's contact-set factor and the factor cache
        # keeps it; the others copy it (gapsim_factor_cache_hits_total). A
        # daemon without the cache gives the same answers.
        mj, gp = model("sandwich", small=True, inline=True, gaps=12)
        rows = gaps_rows(gp)
        outs = []
        for extra in ([], ["--factor-cache-mb", "0"]):
            d = h.Daemon(workers=2, extra=extra).start()
            try:
                aid = upload_json(d, mj).json()["id"]
                base = self.cloud(rows, d=d, aid=aid, fastener_fraction=0.5, solver="gi")
                inst = d.wait_job(base["id"])["options"]["installed"]
                free = [c for c in range(40) if c not in inst]
                res = []
                for mv in range(3):  # swap one installed fastener for a free one
                    pat = [c for c in inst if c != inst[mv]] + [free[mv]]
                    j = d.post("/v1/assemblies/%s/clouds" % aid,
                               {"gaps_from": base["id"], "fasteners": sorted(pat),
                                "warm_start": base["id"], "solver": "gi"})
                    self.assertEqual(j.status, 202, j.body[:300])
                    f = d.wait_job(j.json()["id"])
                    self.assertEqual((f["status"], f["done"]), ("done", 12))
                    res.append(self.all_results(f["id"], d=d))
                hits = metric(d, "gapsim_factor_cache_hits_total")
                misses = metric(d, "gapsim_factor_cache_misses_total")
                if extra:
                    self.assertEqual((hits, misses), (0, 0))
                else:  # 12 gaps built once, copied by the two later moves
                    self.assertGreaterEqual(misses, 12)
                    self.assertGreaterEqual(hits, 12)
                    self.assertGreater(metric(d, "gapsim_factor_cache_bytes"), 0)
                outs.append(res)
            finally:
                d.cleanup()
        for mv in range(3):
            for i in range(12):
                a, b = outs[0][mv][i], outs[1][mv][i]
                self.assertTrue(a["warm_start_used"] and a["kkt"]["pass"] and b["kkt"]["pass"])
                self.assert_close(a["w"], b["w"], 1e-9, "w move %d gap %d" % (mv, i))

    def test_sibling_clouds_paced_within_the_cache(self):
        # three move clouds of 300 gaps warm from one job, a 1 MiB factor
        # cache (about 120 factors of these sets): claimed first-in
        # first-out, gap i of the next cloud would come 300 gaps later, after
        # its factor was evicted. The clouds are paced to stay within the
        # factors the cache holds, so the later two mostly copy.
        mj, gp = model("sandwich", small=True, inline=True, gaps=300)
        rows = gaps_rows(gp)
        d = h.Daemon(workers=2, extra=["--factor-cache-mb", "1"]).start()
        try:
            aid = upload_json(d, mj).json()["id"]
            base = self.cloud(rows, d=d, aid=aid, fastener_fraction=0.5, solver="gi")
            inst = d.wait_job(base["id"])["options"]["installed"]
            free = [c for c in range(40) if c not in inst]
            h0 = metric(d, "gapsim_factor_cache_hits_total")
            # a cold cloud holds both workers while the three are posted, so
            # that they are queued together: without it the first could run
            # alone while the next request is on its way (a busy CI machine),
            # and get further ahead than the cache holds before pacing applies.
            # The hold is the slow IPM with Jacobi PCG (about 1.5 s for the 300
            # gaps in the sanitized build): a GI cloud was done with 225-300 of
            # them by the time the three were posted (0.1 s), and a suite
            # running beside it once let it end first (126 hits)
            hold = d.post("/v1/assemblies/%s/clouds" % aid,
                          {"gaps_from": base["id"], "fastener_fraction": 0.25, "solver": "ipm",
                           "ipm_linear": "jacobi"})
            self.assertEqual(hold.status, 202, hold.body[:300])
            jobs = []
            for mv in range(3):  # queued behind the cold cloud: all three at once
                pat = [c for c in inst if c != inst[mv]] + [free[mv]]
                j = d.post("/v1/assemblies/%s/clouds" % aid,
                           {"gaps_from": base["id"], "fasteners": sorted(pat),
                            "warm_start": base["id"], "solver": "gi"})
                self.assertEqual(j.status, 202, j.body[:300])
                jobs.append(j.json()["id"])
            r = d.delete("/v1/jobs/" + hold.json()["id"])
            # 409 would say it ended before the three were queued: the test's premise
            self.assertEqual(r.status, 200, r.body[:300])
            for jid in jobs:
                f = d.wait_job(jid)
                self.assertEqual((f["status"], f["done"], f["failed"]), ("done", 300, 0))
            hits = metric(d, "gapsim_factor_cache_hits_total") - h0
            misses = metric(d, "gapsim_factor_cache_misses_total")
            self.assertGreaterEqual(hits, 300, (hits, misses))  # 600 at best
            self.assertLessEqual(metric(d, "gapsim_factor_cache_bytes"), 1 << 20)
        finally:
            d.cleanup()

    def test_gaps_from(self):
        # the gaps of an earlier job solved again under another pattern, warm
        # from that job: nothing uploaded, the file shared (a hard link)
        src = self.job["id"]
        r = self.d.post("/v1/assemblies/%s/clouds" % self.aid,
                        {"gaps_from": src, "fasteners": [0, 1, 2], "warm_start": src})
        self.assertEqual(r.status, 202, r.body[:300])
        j = r.json()
        self.assertEqual((j["total"], j["options"]["gaps_from"]), (40, src))
        f = self.d.wait_job(j["id"])
        self.assertEqual((f["status"], f["done"], f["failed"]), ("done", 40, 0))
        for i in (0, 17, 39):
            g = self.d.get("/v1/jobs/%s/gaps?index=%d" % (j["id"], i)).json()["g"]
            self.assertEqual(g, self.rows[i], i)  # bit for bit
        path = os.path.join(self.d.data_dir, "jobs", j["id"], "gaps.npy")
        self.assertTrue(os.path.samefile(path, os.path.join(self.d.data_dir, "jobs", src,
                                                            "gaps.npy")))
        res = self.all_results(j["id"])
        self.assertTrue(all(x["kkt"]["pass"] and x["warm_start_used"] for x in res))
        for i in (3, 30):
            s = self.solve(self.rows[i], fasteners=[0, 1, 2], solver="lemke")
            self.assert_close(res[i]["w"], s["w"], 1e-7, "w %d" % i)
        # a job whose gaps came from another job lends them on
        r2 = self.d.post("/v1/assemblies/%s/clouds" % self.aid, {"gaps_from": j["id"]})
        self.assertEqual(r2.status, 202, r2.body[:300])
        self.assertEqual(self.d.wait_job(r2.json()["id"])["done"], 40)
        # errors name the field
        with open(self.model_json) as fh:
            other = json.load(fh)
        other["fasteners"]["load"] = [2 * x for x in other["fasteners"]["load"]]
        a2 = self.d.post("/v1/assemblies?wait=1", other)
        self.assertEqual(a2.status, 201, a2.body[:300])
        self.assertNotEqual(a2.json()["id"], self.aid)
        url = "/v1/assemblies/%s/clouds" % self.aid
        for bad in ({"gaps_from": src, "gaps": self.rows[:2]},
                    {"gaps_from": src, "generate": {"count": 2}},
                    {"gaps_from": "j_0000000000000000"},
                    {"gaps_from": "r_0000000000000000"},
                    {"gaps_from": 5}):
            self.assert_error(self.d.post(url, bad), 422, "gaps_from")
        self.assert_error(self.d.post("/v1/assemblies/%s/clouds" % a2.json()["id"],
                                      {"gaps_from": src}), 422, "gaps_from")
        self.assert_error(self.d.post(url + "?gaps_from=" + src, npy_bytes(self.rows[:2]),
                                      headers={"Content-Type": "application/x-npy"}),
                          422, "gaps_from")
        # a single solve has none
        self.assert_error(self.d.post("/v1/assemblies/%s/solve" % self.aid,
                                      {"g": self.rows[0], "gaps_from": src}), 422, "gaps_from")

    def test_chained_cloud(self):
        # similar gaps (one shape plus a tenth of each row's own): chained
        # warm starts pay; each result is an optimum within round-off of an
        # independent solve, stored under its own index
        base = self.G[0]
        rows = [[0.9 * b + 0.1 * x - 0.037 for b, x in zip(base, g)] for g in self.G[1:17]]
        on = self.cloud(rows, fasteners="all", solver="gi", chain="on")
        self.assertEqual(on["options"]["chain"], "on")
        f = self.d.wait_job(on["id"])
        self.assertEqual((f["status"], f["done"], f["failed"]), ("done", 16, 0))
        res = self.all_results(on["id"])
        warm = sum(1 for r in res if r["warm_start_used"])
        # every gap warm but the first of each worker (or of a cache hit)
        self.assertGreaterEqual(warm, 16 - self.workers - 1)
        for i in (0, 5, 15):
            s = self.solve(rows[i], fasteners="all", solver="lemke",
                           **{"return": ["w", "lambda", "x", "kkt"]})
            self.assertFalse(s["cached"])
            self.assert_close(res[i]["w"], s["w"], 1e-9, "w %d" % i)
        self.assertTrue(all(r["kkt"]["pass"] for r in res))
        # auto in the query string of an .npy upload; the same numbers
        rows2 = [[x + 0.0011 for x in g] for g in rows]
        r = self.d.post("/v1/assemblies/%s/clouds?fasteners=all&chain=auto" % self.aid,
                        npy_bytes(rows2), headers={"Content-Type": "application/x-npy"})
        self.assertEqual(r.status, 202, r.body[:300])
        self.assertEqual(r.json()["options"]["chain"], "auto")
        f = self.d.wait_job(r.json()["id"])
        self.assertEqual((f["status"], f["done"]), ("done", 16))
        for i, x in enumerate(self.all_results(f["id"])):
            s = self.solve(rows2[i], fasteners="all", solver="lemke", **{"return": ["w", "x"]})
            self.assert_close(x["w"], s["w"], 1e-9, "auto w %d" % i)
        # off is the default and not echoed; a bad value names the field
        plain = self.cloud(rows[:2], fasteners=[1])
        self.assertNotIn("chain", plain["options"])
        for bad in ("sometimes", 1):
            self.assert_error(self.d.post("/v1/assemblies/%s/clouds" % self.aid,
                                          {"gaps": rows[:2], "chain": bad}), 422, "chain")
        # a single solve has no chain
        self.assert_error(self.d.post("/v1/assemblies/%s/solve" % self.aid,
                                      {"g": rows[0], "chain": "on"}), 422, "chain")

    def test_crossover_reported(self):
        # The small lap-fine joint, cloud seed 695, 10% of the fasteners: NPM
        # primal cycles between two contact sets on one of the two gaps here
        # (docs/solvers.md) and GI relative finishes it. Whether it cycles
        # depends on rounding, so the test checks that every place reporting
        # it agrees with gapsim-batch, which runs the same code in-process,
        # and that every answer is right.
        mj, gn = model("lap-fine", small=True, inline=True, gaps=2, extra=["--seed", "695"])
        rows = gaps_rows(gn)
        r = upload_json(self.d, mj)
        self.assertEqual(r.status, 201, r.body[:300])
        aid = r.json()["id"]
        before = self.crossovers_metric()
        j = self.cloud(rows, aid=aid, fastener_fraction=0.1, solver="npm", formulation="primal")
        f = self.d.wait_job(j["id"])
        self.assertEqual((f["status"], f["done"], f["failed"]), ("done", 2, 0))
        res = self.all_results(j["id"])
        flags = [x["crossover"] for x in res]
        self.assertTrue(all(isinstance(c, bool) for c in flags))
        for i, a in enumerate(res):
            self.assertEqual((a["status"], a["solver"], a["formulation"]),
                             ("optimal", "npm", "primal"))
            self.assertTrue(a["kkt"]["pass"])
            # GI relative on the same gap ("x" returned: solved, not the cache)
            b = self.d.post("/v1/assemblies/%s/solve" % aid,
                            {"g": rows[i], "fastener_fraction": 0.1, "solver": "gi",
                             "return": ["w", "x"]}).json()
            self.assertEqual((b["solver"], b["cached"], b["crossover"]), ("gi", False, False))
            self.assert_close(a["w"], b["w"], 1e-7, "w against GI, gap %d" % i)
        s = self.d.get("/v1/jobs/%s/summary" % j["id"]).json()
        self.assertEqual(s["crossovers"], sum(flags))
        self.assertEqual(self.crossovers_metric() - before, sum(flags))
        out = subprocess.run([h.binary("gapsim-batch"), mj, "--gaps", gn, "--fraction", "0.1",
                              "--method", "npm", "--form", "primal", "--threads", "1"],
                             check=True, capture_output=True, text=True).stdout
        m = re.search(r"finished by GI\s+(\d+) of 2 gaps", out)
        self.assertEqual(int(m.group(1)) if m else 0, sum(flags), out)
        print("  crossovers: %d of 2 (npm primal, lap-fine seed 695, 10%%)" % sum(flags))

    def crossovers_metric(self):
        try:
            return metric(self.d, "gapsim_solve_crossovers_total", 'solver="npm"')
        except AssertionError:  # no line until the first one
            return 0

    def test_cache_in_clouds(self):
        rows = [[x + 0.01 for x in g] for g in self.G[:5]]
        hits0 = metric(self.d, "gapsim_cache_hits_total")
        a = self.cloud(rows + rows, fasteners=[1, 3])  # each gap twice
        self.d.wait_job(a["id"])
        ra = self.all_results(a["id"])
        self.assertEqual(len(ra), 10)
        for i in range(5):
            self.assertEqual(ra[i]["w"], ra[i + 5]["w"])
        b = self.cloud(rows, fasteners=[1, 3])
        self.d.wait_job(b["id"])
        rb = self.all_results(b["id"])
        for i in range(5):
            self.assertEqual(rb[i]["w"], ra[i]["w"])
            self.assertEqual(rb[i]["lambda"], ra[i]["lambda"])
        # the second cloud hit the cache for every gap (and the repeats in the
        # first one may have, depending on worker order)
        self.assertGreaterEqual(metric(self.d, "gapsim_cache_hits_total"), hits0 + 5)

    def test_cache_false_in_clouds(self):
        """A cloud with "cache": false solves every gap with its own method
        although the cache holds GI's answers (JSON body, and the .npy
        upload's query string cache=0), keeps the option in options, and
        agrees with GI; a query value that is not a boolean is 422."""
        rows = [[x + 0.02 for x in g] for g in self.G[:4]]
        a = self.cloud(rows, fasteners=[0, 2], solver="gi")
        self.d.wait_job(a["id"])
        ra = self.all_results(a["id"], fields="w")
        b = self.cloud(rows, fasteners=[0, 2], solver="lemke", cache=False)
        self.assertIs(b["options"]["cache"], False)
        r = self.d.post("/v1/assemblies/%s/clouds?solver=npm&fasteners=0,2&cache=0" % self.aid,
                        npy_bytes(rows), headers={"Content-Type": "application/x-npy"})
        self.assertEqual(r.status, 202, r.body[:300])
        c = r.json()
        self.assertIs(c["options"]["cache"], False)
        for job, solver in ((b, "lemke"), (c, "npm")):
            self.assertEqual(self.d.wait_job(job["id"])["status"], "done")
            res = self.all_results(job["id"], fields="w")
            self.assertEqual([x["solver"] for x in res], [solver] * len(rows))
            for x, y in zip(res, ra):
                self.assertLess(max(abs(p - q) for p, q in zip(x["w"], y["w"])), 1e-7)
        self.assertNotIn("cache", a["options"])
        r = self.d.post("/v1/assemblies/%s/clouds?cache=no" % self.aid, npy_bytes(rows),
                        headers={"Content-Type": "application/x-npy"})
        self.assert_error(r, 422, "cache")

    LONG = 50000  # gaps of long_cloud: ~9 s of solving on the 2026-11 machines

    def long_cloud(self, seed):
        """A cloud long enough to be cancelled while it runs on any machine:
        LONG generated gaps (~1 s to generate, 21 MB), the interior point
        method, no cache (3,000 JSON rows were solved in 0.6 s by the
        sanitized daemon's two workers on a Zen 5, and had ended before the
        cancel)."""
        r = self.d.post("/v1/assemblies/%s/clouds" % self.aid,
                        {"generate": {"count": self.LONG, "seed": seed}, "fasteners": "all",
                         "solver": "ipm", "cache": False})
        self.assertEqual(r.status, 202, r.body[:400])
        return r.json()

    def test_cancel(self):
        j = self.long_cloud(seed=101)
        rows = [[x - 0.1 - 0.001 * i for x in self.G[i % 40]] for i in range(5)]
        # a job queued behind it, cancelled before its first gap: its
        # summary and exports say "no result" (the sanitized daemon aborted
        # on the empty statistics)
        q = self.cloud(rows)
        g = self.d.get("/v1/jobs/" + q["id"]).json()  # queued: no rate yet (it read 0)
        if g["status"] == "queued":
            self.assertEqual((g["solves_per_s"], g["eta_s"], g["started_at"]), (None, None, None))
        r = self.d.delete("/v1/jobs/" + q["id"])
        self.assertEqual((r.status, r.json()["status"], r.json()["done"]), (200, "cancelled", 0))
        s = self.d.get("/v1/jobs/%s/summary" % q["id"])
        self.assertEqual(s.status, 200, s.body[:300])
        # no result: no statistic (null, not 0), counts 0
        self.assertEqual((s.json()["count"], s.json()["share_gaps_above"],
                          s.json()["time_ms"]["median"], s.json()["iterations"]["total"]),
                         (0, None, None, 0))
        for fmt in ("csv", "vtp", "html"):
            s = self.d.get("/v1/jobs/%s/summary?format=%s&threshold=0.2" % (q["id"], fmt))
            self.assertEqual(s.status, 200, (fmt, s.body[:300]))
        r = self.d.delete("/v1/jobs/" + j["id"])
        self.assertEqual(r.status, 200, r.body[:300])
        c = r.json()
        self.assertEqual(c["status"], "cancelled")
        self.assertLess(c["done"], self.LONG)
        time.sleep(0.3)
        c2 = self.d.get("/v1/jobs/" + j["id"]).json()
        self.assertEqual(c2["status"], "cancelled")
        self.assertLess(c2["done"], self.LONG)
        # no more work is done once the running chunks have been stored
        time.sleep(0.3)
        c3 = self.d.get("/v1/jobs/" + j["id"]).json()
        self.assertEqual(c3["done"], c2["done"])
        got = self.all_results(j["id"], fields="none")
        self.assertEqual(len(got), c3["done"])
        self.assertEqual(len(set(x["job_index"] for x in got)), c3["done"])
        # cancelling again, or cancelling a finished job: 409
        self.assert_error(self.d.delete("/v1/jobs/" + j["id"]), 409, "id", "conflict")
        self.assert_error(self.d.delete("/v1/jobs/" + self.job["id"]), 409, "id", "conflict")
        self.assertEqual(self.d.get("/v1/jobs/" + self.job["id"]).json()["status"], "done")

    def test_wait_for_the_end(self):
        """GET /v1/jobs/{id}?wait=S: held until the job ends (done or
        cancelled) or S seconds pass; bad values 422 naming "wait"."""
        # an ended job: answered at once, as without wait
        r = self.d.get("/v1/jobs/%s?wait=30" % self.job["id"])
        self.assertEqual(r.status, 200, r.body[:300])
        self.assertEqual((r.json()["status"], r.json()["done"]), ("done", 40))
        # a short cloud: the held request comes back with its end
        j = self.cloud(self.rows[:20], fasteners="all", solver="gi")
        r = self.d.get("/v1/jobs/%s?wait=30" % j["id"], timeout=60)
        self.assertEqual(r.status, 200, r.body[:300])
        self.assertEqual((r.json()["status"], r.json()["done"]), ("done", 20))
        # a long one (that of test_cancel): S passes first, the answer is
        # the state at that moment
        j = self.long_cloud(seed=102)
        r = self.d.get("/v1/jobs/%s?wait=0.3" % j["id"])
        self.assertEqual(r.status, 200, r.body[:300])
        self.assertIn(r.json()["status"], ("queued", "running"))
        self.assertLess(r.json()["done"], self.LONG)
        # a request held for 60 s is answered when the job is cancelled
        out = {}
        th = threading.Thread(target=lambda: out.update(
            r=self.d.get("/v1/jobs/%s?wait=60" % j["id"], timeout=120)))
        th.start()
        time.sleep(0.3)
        self.assertEqual(self.d.delete("/v1/jobs/" + j["id"]).status, 200)
        th.join(20)  # well before the 60 s: woken by the cancel, not by its deadline
        self.assertFalse(th.is_alive(), "the held request was not answered at the cancel")
        self.assertEqual(out["r"].status, 200, out["r"].body[:300])
        held = out["r"].json()
        self.assertEqual(held["status"], "cancelled")
        # answered once the running chunks had committed their gaps: the final
        # counts (they used to grow after the held answer), as is a wait
        # asked now
        time.sleep(0.5)
        later = self.d.get("/v1/jobs/%s?wait=5" % j["id"]).json()
        self.assertEqual((held["done"], held["failed"], held["iterations"]),
                         (later["done"], later["failed"], later["iterations"]))
        for bad in ("-1", "61", "abc", "nan", "inf"):
            self.assert_error(self.d.get("/v1/jobs/%s?wait=%s" % (j["id"], bad)), 422, "wait",
                              "invalid")
        self.assert_error(self.d.get("/v1/jobs/j_0123456789abcdef?wait=1"), 404, "id",
                          "not_found")


if __name__ == "__main__":
    unittest.main()
