"""Restart safety on the full lap model (5,206 unknowns, m = 2,603): a cloud
interrupted by kill -9 or SIGTERM resumes at the next start and completes
with exactly one result per gap, equal to fresh solves; the assembly comes
back ready from its stored factors (no precomputation), and from its model
when factors.bin is damaged or missing."""
import os
import time
import unittest

from api_common import DaemonCase, gaps_rows, max_diff, model, upload_multipart
from gsd_harness import loop_model

N_GAPS = 240
OPTS = {"fastener_fraction": 0.5}


class RestartTest(DaemonCase):

    @classmethod
    def prepare(cls):
        cls.model_json, gaps = model("lap", small=False, inline=False, gaps=N_GAPS,
                                    extra=["--no-cond"])
        cls.G = gaps_rows(gaps)
        # the large-file path: multipart with .npy blocks, asynchronous
        r = upload_multipart(cls.d, cls.model_json, wait=False)
        assert r.status == 202, (r.status, r.body[:300])
        cls.asm = r.json()
        cls.aid = cls.asm["id"]
        # still precomputing: a solve is refused with 409
        s = cls.d.post("/v1/assemblies/%s/solve" % cls.aid, {"g": cls.G[0]})
        cls.early = (s.status, s.json())
        deadline = time.time() + 300
        cls.asm = cls.d.wait_assembly(cls.aid, lambda a: a["status"] != "precomputing", 300,
                                      0.1)
        assert cls.asm["status"] == "ready", cls.asm
        # the factors are saved after "ready" (a task of its own): the
        # tests that kill the daemon expect them on disk
        cls.asm = cls.d.wait_factors_saved(cls.aid, max(0.0, deadline - time.time()), 0.05)
        assert cls.asm["factors_saved"], cls.asm
        cls.ref = {}

    # ---- helpers ----
    def log_since(self, offset):
        with open(self.d.log_path, "rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")

    def log_size(self):
        return os.path.getsize(self.d.log_path)

    def fresh(self, i):
        """Gap i solved now (x asked: never from the cache); memoized per class."""
        if i not in self.ref:
            body = dict(OPTS, g=self.G[i], solver="gi")
            body["return"] = ["w", "lambda", "x"]
            r = self.d.post("/v1/assemblies/%s/solve" % self.aid, body)
            self.assertEqual(r.status, 200, r.body[:300])
            s = r.json()
            self.assertEqual(s["status"], "optimal")
            self.ref[i] = (s["w"], s["lambda"])
        return self.ref[i]

    def submit(self, solver):
        self.row_before = self.d.get("/v1/assemblies/" + self.aid).json()
        r = self.d.post("/v1/assemblies/%s/clouds" % self.aid,
                        dict(OPTS, gaps=self.G, solver=solver))
        self.assertEqual(r.status, 202, r.body[:300])
        return r.json()["id"]

    def wait_some(self, jid, at_least=8):
        deadline = time.time() + 120
        while time.time() < deadline:
            j = self.d.get("/v1/jobs/" + jid).json()
            if j["done"] >= at_least:
                self.assertLess(j["done"], N_GAPS, "the cloud finished before the interruption")
                return j
            time.sleep(0.02)
        self.fail("no progress")

    def results(self, jid, fields="w,lambda"):
        out, off = [], 0
        while off is not None:
            p = self.d.get("/v1/jobs/%s/results?offset=%d&limit=1000&fields=%s"
                           % (jid, off, fields)).json()
            out += p["results"]
            off = p["next_offset"]
        return out

    def check_complete(self, jid, compare):
        j = self.d.wait_job(jid, timeout=600)
        self.assertEqual((j["status"], j["done"], j["failed"], j["total"]),
                         ("done", N_GAPS, 0, N_GAPS))
        res = self.results(jid)
        self.assertEqual([r["job_index"] for r in res], list(range(N_GAPS)))  # one per index
        self.assertEqual(len(set(r["id"] for r in res)), N_GAPS)
        for r in res:
            self.assertTrue(r["kkt"]["pass"], r["job_index"])
        for i in compare:
            w, lam = self.fresh(i)
            self.assertLessEqual(max_diff(res[i]["w"], w), 1e-7, i)
            self.assertLessEqual(max_diff(res[i]["lambda"], lam), 1e-7 * max(1.0, max(lam)), i)
        s = self.d.get("/v1/jobs/%s/summary" % jid).json()
        self.assertEqual((s["count"], s["failures"]), (N_GAPS, 0))
        return res

    def restart_ready(self):
        """Start again; the assembly is ready at once, as stored before the stop
        (no precomputation queued)."""
        off = self.log_size()
        self.d.start()
        a = self.d.get("/v1/assemblies/" + self.aid).json()
        self.assertEqual(a["status"], "ready")
        self.assertEqual(a["precompute"], self.row_before["precompute"])
        self.assertEqual(a["ready_at"], self.row_before["ready_at"])
        return off

    # ---- tests ----
    def test_0_early_solve_refused(self):
        status, body = self.early
        self.assertEqual(status, 409, body)
        self.assertEqual((body["error"]["code"], body["error"]["field"]), ("not_ready", "id"))
        self.assertIn("precomputing", body["error"]["message"])
        self.assertEqual((self.asm["n"], self.asm["m"]), (5206, 2603))

    def test_kill9_mid_cloud(self):
        jid = self.submit("auto")
        self.wait_some(jid)
        self.d.kill9()
        off = self.restart_ready()
        stored = self.results(jid, fields="none")
        n0 = len(stored)
        before = {r["job_index"]: r["id"] for r in stored}
        res = self.check_complete(jid, compare=range(0, N_GAPS, 6))
        log = self.log_since(off)
        self.assertIn("assembly %s: factors loaded" % self.aid, log)
        self.assertNotIn("recomputing", log)
        self.assertNotIn("precomputation", log)
        self.assertIn("job %s resumed: " % jid, log)
        self.assertIn("job %s done" % jid, log)
        self.assertGreater(n0, 0)
        # results stored before the kill are kept as they were
        for i, rid in before.items():
            self.assertEqual(res[i]["id"], rid)

    def test_corrupt_factors(self):
        jid = self.submit("gi")
        self.wait_some(jid)
        self.d.kill9()
        path = os.path.join(self.d.data_dir, "assemblies", self.aid, "factors.bin")
        size = os.path.getsize(path)
        with open(path, "r+b") as f:  # flip bytes in the middle of the factors
            f.seek(size // 2)
            chunk = f.read(64)
            f.seek(size // 2)
            f.write(bytes(b ^ 0x5A for b in chunk))
        off = self.restart_ready()
        self.check_complete(jid, compare=range(1, N_GAPS, 12))
        log = self.log_since(off)
        self.assertIn("assembly %s: factors unusable" % self.aid, log)
        self.assertNotIn("factors loaded", log)
        self.assertEqual(os.path.getsize(path), size)  # rewritten

    def test_missing_factors(self):
        w0, lam0 = self.fresh(5)
        self.row_before = self.d.get("/v1/assemblies/" + self.aid).json()
        self.d.stop()
        path = os.path.join(self.d.data_dir, "assemblies", self.aid, "factors.bin")
        os.unlink(path)
        off = self.restart_ready()
        self.ref.pop(5)
        w1, lam1 = self.fresh(5)
        self.assertLessEqual(max_diff(w0, w1), 1e-9)
        self.assertLessEqual(max_diff(lam0, lam1), 1e-9 * max(1.0, max(lam0)))
        self.assertIn("assembly %s: factors unusable" % self.aid, self.log_since(off))
        # saved by the task that saves an upload's factors, after the solve
        self.assertTrue(self.d.wait_factors_saved(self.aid, 60, 0.05)["factors_saved"])
        self.assertTrue(os.path.exists(path))

    def test_unsaved_factors(self):
        # stopped after "ready" but before the factors were saved: the row
        # has no checksum and there is no factors.bin; the first use
        # computes them again, saves them, and answers the same
        w0, lam0 = self.fresh(7)
        self.row_before = self.d.get("/v1/assemblies/" + self.aid).json()
        self.d.stop()
        import sqlite3
        db = sqlite3.connect(os.path.join(self.d.data_dir, "gapsim.db"))
        db.execute("UPDATE assemblies SET factor_checksum='' WHERE id=?", (self.aid,))
        db.commit()
        db.close()
        path = os.path.join(self.d.data_dir, "assemblies", self.aid, "factors.bin")
        os.unlink(path)
        off = self.restart_ready()
        self.assertFalse(self.d.get("/v1/assemblies/" + self.aid).json()["factors_saved"])
        self.ref.pop(7)
        w1, lam1 = self.fresh(7)
        self.assertLessEqual(max_diff(w0, w1), 1e-9)
        self.assertLessEqual(max_diff(lam0, lam1), 1e-9 * max(1.0, max(lam0)))
        log = self.log_since(off)
        self.assertIn("assembly %s: factors not saved; recomputing" % self.aid, log)
        self.assertNotIn("factors unusable", log)
        # saved by the task that saves an upload's factors, after the solve
        self.assertTrue(self.d.wait_factors_saved(self.aid, 60, 0.05)["factors_saved"])
        self.assertTrue(os.path.exists(path))

    def test_dependent_pairs_after_restart(self):
        """An assembly whose pairs are dependent (no L_Q, so no factors.bin)
        is built again from its model after a restart, without L_Q: it stays
        ready with its lq_error and solves as before the restart (every
        cloud and GI solve failed 'singular' after one)."""
        r = self.d.post("/v1/assemblies?wait=1", loop_model())
        self.assertEqual(r.status, 201, r.body[:300])
        aid = r.json()["id"]
        a = self.d.wait_assembly(aid, lambda a: a["precompute"].get("lq_error"))
        g = [0.1, 0.1, 0.3, 0.5]
        before = self.d.post("/v1/assemblies/%s/solve" % aid, {"g": g, "solver": "gi"}).json()
        self.assertEqual(before["status"], "optimal", before)
        self.d.stop()
        self.d.start()
        after = self.d.get("/v1/assemblies/" + aid).json()
        self.assertEqual((after["status"], after["precompute"]["lq_error"]),
                         ("ready", a["precompute"]["lq_error"]))
        for solver in ("gi", "lemke", "auto"):
            body = {"g": g, "solver": solver, "return": ["w", "lambda", "x"]}  # x: not cached
            r = self.d.post("/v1/assemblies/%s/solve" % aid, body)
            self.assertEqual(r.status, 200, r.body[:300])
            self.assertEqual(r.json()["status"], "optimal", (solver, r.json()))
            self.assertLessEqual(max_diff(r.json()["w"], before["w"]), 1e-12)
        r = self.d.post("/v1/assemblies/%s/clouds" % aid, {"gaps": [g, [0.1, 0.1, -0.3, 0.5]]})
        self.assertEqual(r.status, 202, r.body[:300])
        j = self.d.wait_job(r.json()["id"])
        self.assertEqual((j["status"], j["done"]), ("done", 2), j)
        statuses = [x["status"] for x in self.results(j["id"])]
        self.assertEqual(statuses, ["optimal", "infeasible"])
        r = self.d.post("/v1/assemblies/%s/solve" % aid, {"g": g, "solver": "npm"})
        self.assertEqual((r.status, r.json()["error"]["code"], r.json()["error"]["field"]),
                         (409, "singular", "pairs[2]"), r.body[:300])
        time.sleep(0.5)  # the save task has tried L_Q again: still ready, still not saved
        after = self.d.get("/v1/assemblies/" + aid).json()
        self.assertEqual((after["status"], after["factors_saved"]), ("ready", False))

    def test_sigterm_mid_cloud(self):
        jid = self.submit("gi")
        self.wait_some(jid)
        off = self.log_size()
        t0 = time.time()
        rc = self.d.stop()
        self.assertEqual(rc, 0)
        self.assertLess(time.time() - t0, 20)
        log = self.log_since(off)
        self.assertIn("stopping", log)
        self.assertIn("stopped", log)
        import sqlite3
        db = sqlite3.connect(os.path.join(self.d.data_dir, "gapsim.db"))
        d0 = db.execute("SELECT done FROM jobs WHERE id=?", (jid,)).fetchone()[0]
        db.close()
        self.assertGreater(d0, 0)
        t_restart = time.time()
        self.restart_ready()
        j = self.d.get("/v1/jobs/" + jid).json()
        self.assertIn(j["status"], ("running", "done"))
        self.check_complete(jid, compare=range(2, N_GAPS, 12))
        # the rate counts only the gaps solved since the restart, over the time since it
        j = self.d.get("/v1/jobs/" + jid).json()
        if d0 < N_GAPS:
            self.assertGreaterEqual(j["started_at"], t_restart - 1)
            dt = j["finished_at"] - j["started_at"]
            want = (N_GAPS - d0) / dt
            # the times are written to the millisecond
            self.assertAlmostEqual(j["solves_per_s"], want, delta=want * 0.0011 / dt + 1e-9)
            self.assertLess(j["solves_per_s"], N_GAPS / dt * (1 - 0.5 * d0 / N_GAPS))


if __name__ == "__main__":
    unittest.main()
