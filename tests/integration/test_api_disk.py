"""The store's disk use (server/upkeep.h, server/store.h):
- --retain-solves-max keeps the newest single solves and deletes the oldest;
  cloud job results are never deleted;
- --store-quota-mb: single solves are deleted (oldest first) to make room,
  so solves go on; when the assemblies' files alone exceed the quota,
  uploads, clouds and new solves get 507 insufficient_storage naming the
  option, /healthz is degraded with the reason; a DELETE gives the room back;
- a full disk (a 16 MiB tmpfs holding the data directory; root only): a cloud
  that runs out of space fails with the reason in its "error", an upload
  that meets the full disk is 507 insufficient_storage, the daemon
  restarts on the full disk, DELETE of the assembly succeeds (the disk
  reserve is released for it), and after that solves work again.
"""
import os
import subprocess
import tempfile
import time
import unittest

import gsd_harness as h
from api_common import metric, model, upload_json


def gaps(i, m):
    """A distinct gap vector per i (no cache hits)."""
    return [0.05 + 1e-4 * i + 1e-3 * ((i * 31 + j) % 17) for j in range(m)]


def wait_for(pred, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return False


class Retention(unittest.TestCase):
    def setUp(self):
        self.d = h.Daemon(workers=1, extra=["--retain-solves-max", "3"]).start()

    def tearDown(self):
        self.d.cleanup()

    def test_newest_single_solves_kept_cloud_results_never(self):
        mj, _ = model("lap", small=True, inline=True, gaps=2)
        r = upload_json(self.d, mj)
        self.assertEqual(r.status, 201, r.body[:300])
        aid, m = r.json()["id"], r.json()["m"]
        c = self.d.post("/v1/assemblies/%s/clouds" % aid, {"gaps": [gaps(100 + i, m) for i in range(5)]})
        self.assertEqual(c.status, 202, c.body[:300])
        job = self.d.wait_job(c.json()["id"])
        self.assertEqual(job["status"], "done")
        ids = []
        for i in range(7):
            r = self.d.post("/v1/assemblies/%s/solve" % aid, {"g": gaps(i, m)})
            self.assertEqual(r.status, 200, r.body[:300])
            ids.append(r.json()["id"])
        gone = lambda: all(self.d.get("/v1/results/" + x).status == 404 for x in ids[:4])
        self.assertTrue(wait_for(gone), "the 4 oldest single solves were not deleted")
        for x in ids[4:]:
            self.assertEqual(self.d.get("/v1/results/" + x).status, 200, x)
        self.assertEqual(metric(self.d, "gapsim_results_retained_total"), 4)
        res = self.d.get("/v1/jobs/%s/results?limit=100" % job["id"]).json()
        self.assertEqual(len(res["results"]), 5)


class Quota(unittest.TestCase):
    def setUp(self):
        self.d = h.Daemon(workers=1, extra=["--store-quota-mb", "1"]).start()

    def tearDown(self):
        self.d.cleanup()

    def test_retention_makes_room_then_507(self):
        mj, _ = model("lap", small=True, inline=True, gaps=2)
        r = upload_json(self.d, mj)
        self.assertEqual(r.status, 201, r.body[:300])
        aid, m = r.json()["id"], r.json()["m"]
        # ~400 bytes a result: 3,000 solves would take ~1.2 MiB more than the
        # model's 0.26 MiB; the oldest are deleted to stay under 1 MiB
        first = last = None
        for i in range(3000):
            r = self.d.post("/v1/assemblies/%s/solve" % aid, {"g": gaps(i, m)})
            self.assertEqual(r.status, 200, r.body[:300])
            first = first or r.json()["id"]
            last = r.json()["id"]
        self.assertGreater(metric(self.d, "gapsim_results_retained_total"), 0)
        self.assertEqual(self.d.get("/v1/results/" + first).status, 404)
        self.assertEqual(self.d.get("/v1/results/" + last).status, 200)
        hz = self.d.get("/healthz").json()
        self.assertLessEqual(hz["store_mb"], 1.0)
        self.assertEqual(hz["status"], "ok", hz)

        # assemblies' files alone above the quota: nothing left to delete
        out = tempfile.mkdtemp(prefix="gsd-quota-", dir=h.TMP)
        refused = None
        aids = [aid]
        for k in range(12):
            path, _ = h.gen_model(out, kind="lap", small=True, inline=True, gaps=1,
                                  name="q%d" % k, extra=["--fast-load", str(600 + k)])
            r = upload_json(self.d, path)
            if r.status == 507:
                refused = r
                break
            self.assertEqual(r.status, 201, r.body[:300])
            aids.append(r.json()["id"])
        self.assertIsNotNone(refused, "the quota never refused an upload")
        err = refused.json()["error"]
        self.assertEqual(err["code"], "insufficient_storage")
        self.assertIn("--store-quota-mb", err["message"])
        hz = self.d.get("/healthz").json()
        self.assertEqual(hz["status"], "degraded")
        self.assertTrue(any("--store-quota-mb" in x for x in hz["reasons"]), hz)
        self.assertGreater(hz["store_mb"], 1.0)
        # `gapsim health` says why, one line per reason
        cli = subprocess.run([h.binary("gapsim"), "--server", self.d.url, "health"],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(cli.returncode, 0, cli.stderr)
        said = [ln.split(None, 1)[1] for ln in cli.stdout.splitlines() if ln.startswith("degraded:")]
        self.assertEqual(said, hz["reasons"])
        s = self.d.post("/v1/assemblies/%s/solve" % aid, {"g": gaps(5000, m)})
        self.assertEqual(s.status, 507, s.body[:300])
        c = self.d.post("/v1/assemblies/%s/clouds" % aid, {"gaps": [gaps(6000, m)]})
        self.assertEqual(c.status, 507, c.body[:300])
        self.assertEqual(self.d.get("/v1/results/" + last).status, 404)  # made room first
        # deleting gives the room back
        for a in aids[1:]:
            self.assertEqual(self.d.delete("/v1/assemblies/" + a).status, 204)
        self.assertEqual(self.d.get("/healthz").json()["status"], "ok")
        s = self.d.post("/v1/assemblies/%s/solve" % aid, {"g": gaps(5000, m)})
        self.assertEqual(s.status, 200, s.body[:300])


class FullDisk(unittest.TestCase):
    """A real full disk: a 16 MiB tmpfs mounted over a scratch directory."""

    def setUp(self):
        self.d = None
        if os.geteuid() != 0:
            self.skipTest("needs root to mount a tmpfs (the full-disk test)")
        self.mnt = tempfile.mkdtemp(prefix="gsd-tmpfs-", dir=h.TMP)
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", self.mnt],
                           capture_output=True, text=True)
        if p.returncode != 0:
            os.rmdir(self.mnt)
            self.skipTest("cannot mount a tmpfs here: %s" % p.stderr.strip())

    def tearDown(self):
        if self.d:
            self.d.stop()
            subprocess.run(["umount", self.mnt], check=False)
            os.rmdir(self.mnt)
            self.d.cleanup()  # its log is outside the tmpfs: still read

    def df_free(self):
        st = os.statvfs(self.mnt)
        return st.f_bavail * st.f_frsize

    def test_full_disk_fail_delete_restart(self):
        data = os.path.join(self.mnt, "data")
        self.d = h.Daemon(data_dir=data, workers=1, extra=["--min-free", "0"])
        self.d.log_path = self.mnt + ".log"  # not on the full disk
        self.d.start()
        reserve = os.path.join(data, "reserve")
        self.assertEqual(os.path.getsize(reserve), 4 << 20)
        mj, _ = model("lap", small=True, inline=True, gaps=2)
        r = upload_json(self.d, mj)
        self.assertEqual(r.status, 201, r.body[:300])
        aid, m = r.json()["id"], r.json()["m"]
        # 20,000 gaps: 8.3 MB of input, then results until the disk is full
        body = h.write_npy(os.path.join(h.TMP, "gsd-full.npy"), [gaps(i, m) for i in range(20000)])
        with open(body, "rb") as f:
            npy = f.read()
        os.unlink(body)
        c = self.d.post("/v1/assemblies/%s/clouds" % aid, npy,
                        headers={"Content-Type": "application/x-npy"})
        self.assertEqual(c.status, 202, c.body[:300])
        job = self.d.wait_job(c.json()["id"], timeout=600)
        self.assertEqual(job["status"], "failed", job)
        self.assertIn("disk is full", job["error"])
        self.assertLess(job["done"], 20000)
        # full: what is free is at most the 4 MiB reserve, released to write
        # the failure (whether it was depends on which write met the full disk)
        self.assertLess(self.df_free(), (4 << 20) + (1 << 20))
        self.assertEqual(self.d.get("/healthz").status, 200)
        # the same 8.3 MB cloud again: its upload meets the full disk, 507
        # insufficient_storage with the reason (it was 500 io_error)
        c = self.d.post("/v1/assemblies/%s/clouds" % aid, npy,
                        headers={"Content-Type": "application/x-npy"})
        self.assertEqual(c.status, 507, c.body[:300])
        err = c.json()["error"]
        self.assertEqual((err["code"], err["field"]), ("insufficient_storage", "body"))
        self.assertIn("disk is full", err["message"])
        with open(self.d.log_path, encoding="utf-8", errors="replace") as f:  # the details
            self.assertRegex(f.read(), r"error %s: .* -> 507 insufficient_storage at body: "
                             r"cannot write the upload: No space left on device" % err["error_id"])
        # the daemon restarts on the full disk and the job keeps its reason
        self.assertEqual(self.d.stop(), 0)
        self.d.start()
        j = self.d.get("/v1/jobs/" + job["id"]).json()
        self.assertEqual((j["status"], j["error"]), ("failed", job["error"]))
        size = lambda path: os.path.getsize(path) if os.path.exists(path) else 0
        wal = os.path.join(data, "gapsim.db-wal")
        # room: free blocks, plus the reserve (the sweep may put it back at any
        # time) and the WAL (the delete's batches write into it; it is reused,
        # not shrunk, after each checkpoint)
        room = lambda: self.df_free() + size(reserve) + size(wal)
        room_before = room()
        r = self.d.delete("/v1/assemblies/" + aid)
        self.assertEqual(r.status, 204, r.body[:300])
        self.assertEqual(self.d.get("/v1/jobs/" + job["id"]).status, 404)
        # the job's 8.3 MB of gaps are gone: its directory at once, its blocks
        # once the daemon has closed the file (a runner may still hold it for a
        # moment; measured after the stop)
        self.assertFalse(os.path.exists(os.path.join(data, "jobs", job["id"])))
        # room again: a restart, a new assembly, solves
        self.assertEqual(self.d.stop(), 0)
        self.assertGreater(room() - room_before, 6 << 20)
        self.d.start()
        self.assertEqual(os.path.getsize(reserve), 4 << 20)
        r = upload_json(self.d, mj)
        self.assertEqual(r.status, 201, r.body[:300])
        s = self.d.post("/v1/assemblies/%s/solve" % r.json()["id"], {"g": gaps(1, m)})
        self.assertEqual(s.status, 200, s.body[:300])
        self.assertEqual(s.json()["status"], "optimal")


if __name__ == "__main__":
    unittest.main()
