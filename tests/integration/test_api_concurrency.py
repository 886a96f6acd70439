"""Concurrent clients: 8 threads x 50 solves (mixed gaps and patterns, some
repeated, some asking for x so they are always solved) all answered 200 and
equal to the single-threaded answers of another daemon; a cloud running at
the same time is not disturbed."""
import threading
import unittest

import gsd_harness as h
from api_common import ApiCase, max_diff, metric, upload_json

THREADS, PER_THREAD = 8, 50
PATTERNS = ["all", [0, 2, 4, 6, 8], "none"]


class ConcurrencyTest(ApiCase):

    def request_of(self, t, j):
        """Request j of thread t: 60 distinct (gap, pattern) problems, each asked
        ~6-7 times across the threads; every 4th request asks for x."""
        p = (t * 13 + j * 7) % 60
        gi, pat = p % 20, PATTERNS[p // 20]
        return p, {"g": [x - 0.05 for x in self.G[gi]], "fasteners": pat,
                   "return": ["w", "lambda", "x"] if (t + j) % 4 == 0 else ["w", "lambda"]}

    def test_8_threads_x_50_solves(self):
        # reference answers, one at a time, on a separate daemon (1 worker)
        ref_d = h.Daemon(workers=1).start()
        try:
            ra = upload_json(ref_d, self.model_json).json()["id"]
            ref = {}
            for t in range(THREADS):
                for j in range(PER_THREAD):
                    p, body = self.request_of(t, j)
                    if p not in ref:
                        body = dict(body, **{"return": ["w", "lambda", "x"]})
                        r = ref_d.post("/v1/assemblies/%s/solve" % ra, body)
                        self.assertEqual(r.status, 200, r.body[:300])
                        ref[p] = r.json()
        finally:
            ref_d.cleanup()
        self.assertEqual(len(ref), 60)
        self.assertGreater(sum(r["n_act"] for r in ref.values()), 0)

        hits0 = metric(self.d, "gapsim_cache_hits_total")
        cloud = self.cloud([[x - 0.07 for x in g] for g in self.G], fasteners="all")
        out = [[None] * PER_THREAD for _ in range(THREADS)]
        errors = []

        def worker(t):
            try:
                for j in range(PER_THREAD):
                    _, body = self.request_of(t, j)
                    r = self.d.post("/v1/assemblies/%s/solve" % self.aid, body, timeout=300)
                    out[t][j] = (r.status, r.json())
            except Exception as e:  # reported below
                errors.append(repr(e))

        threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(errors, [])
        n_cached = 0
        for t in range(THREADS):
            for j in range(PER_THREAD):
                p, body = self.request_of(t, j)
                status, res = out[t][j]
                self.assertEqual(status, 200, res)
                want = ref[p]
                self.assertEqual(res["status"], "optimal")
                self.assertLessEqual(max_diff(res["w"], want["w"]), 1e-7, (t, j))
                self.assertLessEqual(max_diff(res["lambda"], want["lambda"]),
                                     1e-7 * max(1.0, max(want["lambda"])), (t, j))
                self.assertEqual(res["contact"], want["contact"], (t, j))
                if "x" in body["return"]:
                    self.assertFalse(res["cached"])
                    self.assertEqual(len(res["x"]), self.asm["n"])
                    self.assertLessEqual(max_diff(res["x"], want["x"]), 1e-7, (t, j))
                n_cached += res["cached"]
        # 60 problems, 400 requests of which 100 ask for x: at least 300 - 60
        # answers come from the cache
        self.assertGreaterEqual(n_cached, 300 - 60)
        self.assertGreaterEqual(metric(self.d, "gapsim_cache_hits_total"), hits0 + n_cached)
        j = self.d.wait_job(cloud["id"])
        self.assertEqual((j["status"], j["done"], j["failed"]), ("done", 40, 0))
        res = self.all_results(cloud["id"])
        self.assertEqual([r["job_index"] for r in res], list(range(40)))
        self.assertTrue(all(r["kkt"]["pass"] for r in res))


if __name__ == "__main__":
    unittest.main()
