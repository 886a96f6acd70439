"""The memory budget of the loaded assemblies (gapsimd --max-loaded-mb): an
upload that would not fit in it is refused (413, before any precomputation);
with a budget (7 MiB) that holds either of two assemblies (3.6 and 5.1 MiB)
but not both, using the second unloads the first once its factors are saved
(log line, /metrics counter, /healthz figure); the first then answers from
its saved factors, loaded again, with the same bits as before, and keeps
its model meanwhile (a cache hit needs no load, the reload reads no
model.json); a cloud on
one while the other is solved over and over (unloads between its chunks)
still gives the single solves' answers; an assembly whose model cannot be
read, or whose precomputation failed, leaves nothing in memory. Once its
factors are built, an assembly holds no dense stiffness block: the first
solve that reads K (the primal form) reads them again from the data
directory, exactly their bytes, once."""
import json
import os
import struct
import threading
import unittest

import gsd_harness as h
from api_common import DaemonCase, gaps_rows, metric, model, upload_multipart

RET = ["w", "lambda", "x"]  # x: never answered from the result cache


def log_text(d):
    with open(d.log_path, "rb") as f:
        return f.read().decode(errors="replace")


class MemoryBudget(DaemonCase):
    # one worker: a cloud chunk yields to each solve beside it, so the
    # assembly would be idle between chunks but for the job's own hold
    workers = 1
    daemon_extra = ["--max-loaded-mb", "7"]

    @classmethod
    def prepare(cls):
        cls.ids, cls.G = [], {}
        # 3.6 and 5.1 MiB in memory once precomputed (their stiffness blocks
        # released): either fits in 7 MiB, both do not
        for kind, scale in (("lap", "0.35"), ("sandwich", "0.3")):
            path, gaps = model(kind, small=False, inline=False, gaps=6,
                               extra=["--scale", scale, "--no-cond"])
            r = upload_multipart(cls.d, path)
            assert r.status == 201, (r.status, r.body[:300])
            aid = r.json()["id"]
            assert cls.d.wait_factors_saved(aid)["factors_saved"]
            cls.ids.append(aid)
            cls.G[aid] = gaps_rows(gaps)

    def log(self):
        return log_text(self.d)

    def solve(self, aid, i):
        r = self.d.post("/v1/assemblies/%s/solve" % aid,
                        {"g": self.G[aid][i], "fastener_fraction": 0.5, "return": RET})
        self.assertEqual(r.status, 200, r.body[:300])
        s = r.json()
        self.assertEqual(s["status"], "optimal")
        return [s[k] for k in ("w", "lambda", "x")]

    def test_unload_and_load_again(self):
        lap, sandwich = self.ids
        before = self.solve(lap, 0)  # lap is the one used last
        unloaded0 = metric(self.d, "gapsim_assemblies_unloaded_total")
        self.solve(sandwich, 1)      # ... now sandwich: lap goes
        self.assertEqual(metric(self.d, "gapsim_assemblies_unloaded_total"), unloaded0 + 1)
        self.assertIn("assembly %s: unloaded" % lap, self.log())
        health = self.d.get("/healthz").json()
        self.assertGreater(health["assemblies_mb"], 0)
        self.assertAlmostEqual(metric(self.d, "gapsim_assemblies_bytes") / 1048576.0,
                               health["assemblies_mb"], delta=0.001)
        loads = self.log().count("assembly %s: factors loaded" % lap)
        # the unloaded assembly kept its model (no stiffness in it): neither
        # a cache hit nor the reload of the factors reads model.json
        mj = os.path.join(self.d.data_dir, "assemblies", lap, "model.json")
        os.rename(mj, mj + ".away")
        try:
            r = self.d.post("/v1/assemblies/%s/solve" % lap,
                            {"g": self.G[lap][0], "fastener_fraction": 0.5, "return": ["w"]})
            self.assertEqual(r.status, 200, r.body[:300])
            self.assertTrue(r.json()["cached"])
            self.assertEqual(r.json()["w"], before[0])
            self.assertEqual(self.log().count("assembly %s: factors loaded" % lap), loads)
            after = self.solve(lap, 0)   # loaded again from factors.bin (x: not cached)
        finally:
            os.rename(mj + ".away", mj)
        self.assertEqual(self.log().count("assembly %s: factors loaded" % lap), loads + 1)
        self.assertEqual(after, before)  # the same bits (JSON's 17 digits)
        a = self.d.get("/v1/assemblies/" + lap).json()
        self.assertEqual(a["status"], "ready")

    def test_too_large_refused(self):
        path, _ = model("lap", small=False, inline=False, gaps=1,
                        extra=["--scale", "0.5", "--no-cond"])
        r = upload_multipart(self.d, path)
        self.assertEqual(r.status, 413, r.body[:300])
        err = r.json()["error"]
        self.assertEqual((err["code"], err["field"]), ("too_large", "parts"))
        self.assertIn("more than this server's --max-loaded-mb 7", err["message"])
        self.assertEqual(len(self.d.get("/v1/assemblies").json()["assemblies"]), 2)

    def test_cloud_beside_unloads(self):
        """A cloud on lap while sandwich is solved over and over: the cloud
        holds lap from its first chunk to its end, so lap is loaded at most
        once meanwhile (before that chunk) and sandwich is what goes; the
        cloud's answers are those of single solves."""
        lap, sandwich = self.ids
        rows = self.G[lap] * 400
        start = len(self.log())
        r = self.d.post("/v1/assemblies/%s/clouds" % lap,
                        {"gaps": rows, "fastener_fraction": 0.5})
        self.assertEqual(r.status, 202, r.body[:300])
        jid = r.json()["id"]
        i = 0
        while self.d.get("/v1/jobs/" + jid).json()["status"] in ("queued", "running"):
            self.solve(sandwich, i % len(self.G[sandwich]))
            i += 1
        job = self.d.wait_job(jid)
        self.assertEqual((job["status"], job["done"], job["failed"]), ("done", len(rows), 0))
        during = self.log()[start:]
        self.assertLessEqual(during.count("assembly %s: factors loaded" % lap), 1, during[-2000:])
        print("  %d sandwich solves beside the cloud" % i)
        self.assertGreater(i, 3)  # the solves beside it did run
        page = self.d.get("/v1/jobs/%s/results?offset=0&limit=%d&fields=w"
                          % (jid, len(self.G[lap]))).json()["results"]
        self.assertEqual(len(page), len(self.G[lap]))
        for res in page:
            w = self.solve(lap, res["job_index"] % len(self.G[lap]))[0]  # rows repeat G
            self.assertLessEqual(max(abs(a - b) for a, b in zip(res["w"], w)), 1e-9)


def upload_lap(d, scale, gaps):
    """A generated lap joint at scale, uploaded, its factors saved:
    (assembly id, model path, gap rows)."""
    path, gpath = model("lap", small=False, inline=False, gaps=gaps,
                        extra=["--scale", scale, "--no-cond"])
    r = upload_multipart(d, path)
    assert r.status == 201, (r.status, r.body[:300])
    aid = r.json()["id"]
    assert d.wait_factors_saved(aid)["factors_saved"]
    return aid, path, gaps_rows(gpath)


class StiffnessReleased(DaemonCase):
    workers = 2

    @classmethod
    def prepare(cls):
        cls.aid, path, cls.G = upload_lap(cls.d, "0.3", 2)
        with open(path) as f:
            cls.ndof = [p["ndof"] for p in json.load(f)["parts"]]

    def solve(self, **opts):
        body = {"g": self.G[0], "fastener_fraction": 0.5, "return": ["w"], "cache": False}
        body.update(opts)
        r = self.d.post("/v1/assemblies/%s/solve" % self.aid, body)
        self.assertEqual(r.status, 200, r.body[:300])
        s = r.json()
        self.assertEqual(s["status"], "optimal")
        return s["w"]

    def test_blocks_read_again_by_the_primal_form(self):
        blocks = sum(8 * nb * nb for nb in self.ndof)
        w_rel = self.solve()  # GI relative: the factors only
        released = metric(self.d, "gapsim_assemblies_bytes")
        self.assertEqual(log_text(self.d).count("stiffness blocks read again"), 0)
        w_primal = self.solve(solver="ipm", formulation="primal")
        self.assertEqual(metric(self.d, "gapsim_assemblies_bytes") - released, blocks)
        self.assertEqual(log_text(self.d).count(
            "assembly %s: stiffness blocks read again" % self.aid), 1)
        self.assertLessEqual(max(abs(a - b) for a, b in zip(w_rel, w_primal)), 1e-7)
        self.solve(solver="npm", formulation="primal")  # they stay
        self.assertEqual(log_text(self.d).count("stiffness blocks read again"), 1)
        self.assertEqual(self.solve(), w_rel)  # the same bits as before

    def test_concurrent_primal_solves_read_once(self):
        """Six primal-form solves at once on a new assembly, two workers:
        one reads the blocks, the others wait for it; all answer."""
        aid, _, G = upload_lap(self.d, "0.28", 4)
        out = []

        def go(i):
            body = {"g": G[i % 4], "solver": ("ipm", "npm", "gi")[i % 3],
                    "formulation": "primal", "cache": False, "timeout_s": 30}
            out.append(self.d.post("/v1/assemblies/%s/solve" % aid, body))

        threads = [threading.Thread(target=go, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        self.assertEqual([r.status for r in out], [200] * 6, [r.body[:200] for r in out])
        self.assertEqual([r.json()["status"] for r in out], ["optimal"] * 6)
        self.assertEqual(log_text(self.d).count(
            "assembly %s: stiffness blocks read again" % aid), 1)

    def test_changed_files_refused(self):
        """Blocks whose stored file changed since the upload (here doubled:
        still symmetric positive definite) are not taken: 500 (the log names
        the content hash), the primal forms refused, the others unaffected."""
        aid, _, _ = upload_lap(self.d, "0.25", 1)
        adir = os.path.join(self.d.data_dir, "assemblies", aid)
        block = sorted(f for f in os.listdir(adir) if f.endswith(".npy"))[0]
        with open(os.path.join(adir, block), "r+b") as f:
            data = bytearray(f.read())
            off = 10 + struct.unpack("<H", data[8:10])[0]
            n = (len(data) - off) // 8
            vals = struct.unpack("<%dd" % n, data[off:])
            f.seek(off)
            f.write(struct.pack("<%dd" % n, *(2.0 * v for v in vals)))
        m = self.d.get("/v1/assemblies/" + aid).json()["m"]
        body = {"g": [0.1] * m, "solver": "ipm", "formulation": "primal", "cache": False}
        for _ in range(2):  # the failure is kept: the second request is refused alike
            r = self.d.post("/v1/assemblies/%s/solve" % aid, body)
            self.assertEqual(r.status, 500, r.body[:300])
            err = r.json()["error"]
            self.assertEqual((err["code"], err["field"]), ("bad_format", "parts"))
            self.assertIn("error %s: POST" % err["error_id"], log_text(self.d))
        log = log_text(self.d)
        self.assertEqual(log.count("assembly %s: stiffness blocks not read" % aid), 1)
        self.assertIn("its files changed", log)
        r = self.d.post("/v1/assemblies/%s/solve" % aid, {"g": [0.1] * m, "cache": False})
        self.assertEqual(r.status, 200, r.body[:300])
        self.assertEqual(r.json()["status"], "optimal")


class NothingLeftBehind(unittest.TestCase):
    """An assembly whose files cannot be read (here: its model removed after
    a restart) answers an error, and leaves nothing in memory: the empty
    entry the request made is freed with the request."""

    def test_unreadable_model(self):
        d = h.Daemon(workers=1).start()
        try:
            path, gaps = model("lap")
            r = upload_multipart(d, path)
            self.assertEqual(r.status, 201, r.body[:300])
            aid = r.json()["id"]
            self.assertTrue(d.wait_factors_saved(aid)["factors_saved"])
            self.assertEqual(metric(d, "gapsim_assemblies_in_memory"), 1)
            d.restart()  # nothing loaded until used
            self.assertEqual(metric(d, "gapsim_assemblies_in_memory"), 0)
            os.remove(os.path.join(d.data_dir, "assemblies", aid, "model.json"))
            for _ in range(3):
                r = d.get("/v1/assemblies/%s/geometry" % aid)
                self.assertEqual(r.status, 500, r.body[:300])
                self.assertEqual(r.json()["error"]["code"], "io_error")
                r = d.post("/v1/assemblies/%s/solve" % aid,
                           {"g": gaps_rows(gaps)[0], "fastener_fraction": 0.5})
                self.assertEqual(r.status, 500, r.body[:300])  # the server's failure
                self.assertNotIn("model.json", r.json()["error"]["message"])  # no path out
            self.assertEqual(metric(d, "gapsim_assemblies_in_memory"), 0)
            self.assertEqual(metric(d, "gapsim_assemblies_bytes"), 0)
            self.assertEqual(d.delete("/v1/assemblies/" + aid).status, 204)
        finally:
            d.cleanup()

    def test_failed_precomputation(self):
        """An upload whose precomputation fails (a stiffness that is not
        positive definite) keeps nothing in memory: no solve will read it."""
        d = h.Daemon(workers=1).start()
        try:
            path, _ = model("lap", inline=True, gaps=1, extra=["--fast-load", "360"])
            with open(path) as f:
                m = json.load(f)
            K = m["parts"][0]["K"]
            for i in range(len(K)):
                K[i][i] = -abs(K[i][i])
            r = d.post("/v1/assemblies?wait=1", json.dumps(m).encode(),
                       headers={"Content-Type": "application/json"})
            self.assertEqual(r.status, 422, r.body[:300])
            self.assertEqual(r.json()["error"]["code"], "not_spd")
            self.assertEqual(metric(d, "gapsim_assemblies_in_memory"), 0)
            self.assertEqual(metric(d, "gapsim_assemblies_bytes"), 0)
            aid = d.get("/v1/assemblies").json()["assemblies"][0]["id"]
            for _ in range(2):  # its geometry is still read, and not kept either
                self.assertEqual(d.get("/v1/assemblies/%s/geometry" % aid).status, 200)
                self.assertEqual(metric(d, "gapsim_assemblies_in_memory"), 0)
        finally:
            d.cleanup()


if __name__ == "__main__":
    unittest.main()
