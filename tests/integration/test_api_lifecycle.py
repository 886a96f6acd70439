"""Job lifecycle across cancels, crashes and restarts on the small lap model.

The crash states are recreated deterministically: with the daemon stopped,
gapsim.db is edited with sqlite3 (and files planted in the data directory)
the way a kill -9 at the wrong moment leaves them, then the daemon starts:
  - an ended job keeps its end (a cancel is never undone by a late
    "running" write; the race itself is the unit test
    store_job_end_is_never_overwritten, here a short loop of cancels);
  - a job whose every gap is stored but whose "done" write was lost ends at
    the start (done, finished_at, waiters answered), with no error;
  - a job resumed after an interrupted assembly delete (some results gone,
    done unchanged) counts done from its stored results: done never passes
    total;
  - temporary files of interrupted atomic writes (<name>.tmp.XXXXXX) are
    removed at the start;
  - one daemon per data directory: a second one exits 1 naming the
    directory and the holder's pid, touching nothing; after a kill -9 of the
    first a new one starts;
  - a cancelled job has its log line ("job J cancelled: D of T gaps solved,
    F not optimal") with the counts its document ends with, whether chunks
    were running when it was cancelled or not.
"""
import json
import os
import sqlite3
import subprocess
import time
import unittest

import gsd_harness as h
from api_common import ApiCase


class LifecycleTest(ApiCase):

    @classmethod
    def prepare(cls):
        super().prepare()
        # the tests stop the daemon: its factors saved first (no save in flight)
        assert cls.d.wait_factors_saved(cls.aid)["factors_saved"]

    # ---- helpers ----
    def db_edit(self, *sql):
        """Stop the daemon (SIGTERM, exit 0), run sql on gapsim.db, start it again."""
        rc = self.d.stop()
        self.assertIn(rc, (0, None))
        con = sqlite3.connect(os.path.join(self.d.data_dir, "gapsim.db"))
        try:
            for s in sql:
                con.execute(s[0], s[1:]) if isinstance(s, tuple) else con.execute(s)
            con.commit()
        finally:
            con.close()
        off = os.path.getsize(self.d.log_path)
        self.d.start()
        return off

    def log_since(self, off):
        with open(self.d.log_path, "rb") as f:
            f.seek(off)
            return f.read().decode(errors="replace")

    def done_cloud(self, rows, **opts):
        jid = self.cloud(rows, **opts)["id"]
        j = self.d.wait_job(jid, timeout=120)
        self.assertEqual((j["status"], j["done"], j["total"]), ("done", len(rows), len(rows)))
        return j

    def job(self, jid, wait=None):
        q = "?wait=%g" % wait if wait else ""
        r = self.d.get("/v1/jobs/%s%s" % (jid, q), timeout=(wait or 0) + 60)
        self.assertEqual(r.status, 200, r.body[:300])
        return r.json()

    # ---- defect: a cancel could be lost ----
    def test_cancel_right_after_submit_stays_cancelled(self):
        rows = (self.G * 10)[:400]
        jids = []
        for _ in range(25):
            jid = self.cloud(rows, solver="gi", cache=False)["id"]
            r = self.d.delete("/v1/jobs/" + jid)
            self.assertEqual(r.status, 200, r.body[:300])
            self.assertEqual(r.json()["status"], "cancelled")
            jids.append(jid)
        # the workers let go of the cancelled chunks
        deadline = time.time() + 30
        while time.time() < deadline and self.d.get("/v1/jobs?status=running").json()["jobs"]:
            time.sleep(0.05)
        self.assertEqual(self.d.get("/v1/jobs?status=running").json()["jobs"], [])
        for jid in jids:
            self.assertEqual(self.job(jid)["status"], "cancelled", jid)
        # and after a restart nothing of them resumes
        self.d.restart()
        for jid in jids:
            j = self.job(jid)
            self.assertEqual((j["status"], j["error"]), ("cancelled", None), jid)

    # ---- defect: a cancel left no log line ----
    def test_cancel_is_logged_with_final_counts(self):
        off = os.path.getsize(self.d.log_path)

        def submit(count, solver):
            r = self.d.post("/v1/assemblies/%s/clouds" % self.aid,
                            {"generate": {"count": count, "seed": 7}, "solver": solver,
                             "cache": False})
            self.assertEqual(r.status, 202, r.body[:300])
            return r.json()["id"]

        # the second job waits behind the first (claims go to the oldest job
        # with work left): cancelled with no chunk running; the first (seconds
        # of work) while its chunks run
        running = submit(20000, "ipm")
        queued = submit(100, "gi")
        cancelled = [queued, running]
        self.assertEqual(self.d.delete("/v1/jobs/" + queued).status, 200)
        deadline = time.time() + 30
        while self.job(running)["done"] == 0 and time.time() < deadline:
            time.sleep(0.01)
        r = self.d.delete("/v1/jobs/" + running)
        self.assertEqual(r.status, 200, r.body[:300])
        for jid in cancelled:
            j = self.job(jid, wait=10)  # answered once its chunks have stored their gaps
            self.assertEqual(j["status"], "cancelled")
            want = "job %s cancelled: %d of %d gaps solved, %d not optimal" % (
                jid, j["done"], j["total"], j["failed"])
            deadline = time.time() + 10
            while want not in self.log_since(off) and time.time() < deadline:
                time.sleep(0.02)
            lines = [ln for ln in self.log_since(off).splitlines() if "job %s cancelled" % jid in ln]
            self.assertEqual(len(lines), 1, lines)
            self.assertIn(want, lines[0])
            self.assertRegex(lines[0], r" gapsimd info: ")
        self.assertEqual(self.job(queued)["done"], 0)
        self.assertGreater(self.job(running)["done"], 0)

    # ---- defect: the lost final "done" write ----
    def test_all_gaps_stored_but_running_ends_at_start(self):
        j = self.done_cloud(self.G[:12], solver="gi")
        jid = j["id"]
        off = self.db_edit(("UPDATE jobs SET status='running', finished_at=NULL, "
                            "error='io_error (error 0badf00d): disk I/O error' WHERE id=?", jid))
        w = self.job(jid, wait=10)  # answered at once (not after 10 s) when it ended
        self.assertEqual((w["status"], w["done"], w["total"], w["error"]),
                         ("done", 12, 12, None))
        self.assertIsNotNone(w["finished_at"])
        self.assertIn("job %s resumed: 12 of 12 gaps done; it is done" % jid,
                      self.log_since(off))
        self.assertEqual(self.d.get("/v1/jobs?status=running").json()["jobs"], [])

    def test_done_job_carries_no_error(self):
        jid = self.done_cloud(self.G[:3])["id"]
        self.db_edit(("UPDATE jobs SET error='io_error (error 0badf00d): x' WHERE id=?", jid))
        j = self.job(jid)
        self.assertEqual((j["status"], j["error"]), ("done", None))

    # ---- defect: done > total after an interrupted assembly delete ----
    def test_resume_counts_done_from_stored_results(self):
        n = 40
        jid = self.done_cloud(self.G[:n], solver="gi", cache=False)["id"]
        # what a kill -9 between the result batches of DELETE /v1/assemblies
        # leaves: part of the results gone, the job row (done = 40) intact
        self.db_edit(("UPDATE jobs SET status='running', finished_at=NULL WHERE id=?", jid),
                     ("DELETE FROM results WHERE job_id=? AND job_index % 3 = 0", jid))
        j = self.d.wait_job(jid, timeout=120)
        self.assertEqual((j["status"], j["done"], j["failed"], j["total"]),
                         ("done", n, 0, n))
        self.assertLessEqual(j["progress"], 1.0)
        res = self.all_results(jid, fields="none")
        self.assertEqual([r["job_index"] for r in res], list(range(n)))

    # ---- defect: temporary files of interrupted atomic writes ----
    def test_atomic_write_leftovers_removed_at_start(self):
        jid = self.done_cloud(self.G[:2])["id"]
        adir = os.path.join(self.d.data_dir, "assemblies", self.aid)
        jdir = os.path.join(self.d.data_dir, "jobs", jid)
        self.d.stop()
        planted = [os.path.join(adir, "factors.bin.tmp.Ab12Cd"),
                   os.path.join(jdir, "gaps.npy.tmp.x9Y8z7")]
        kept = [os.path.join(adir, "notes.tmp.txt"), os.path.join(adir, "f.bin.tmp.abc")]
        for p in planted + kept:
            with open(p, "wb") as f:
                f.write(b"\0" * 4096)
        self.d.start()
        try:
            for p in planted:
                self.assertFalse(os.path.exists(p), p)
            for p in kept:  # not the atomic-write pattern: not ours to remove
                self.assertTrue(os.path.exists(p), p)
        finally:
            for p in kept:
                if os.path.exists(p):
                    os.remove(p)
        self.assertEqual(self.solve(self.G[0])["status"], "optimal")  # factors intact

    # ---- defect: two daemons on one data directory ----
    def test_second_daemon_on_the_same_data_dir_refused(self):
        marker = os.path.join(self.d.data_dir, "staging", "u_upload_in_progress")
        with open(marker, "wb") as f:
            f.write(b"x")
        cmd = [h.binary("gapsimd"), "--port", "0", "--data-dir", self.d.data_dir,
               "--workers", "1"]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
        err = p.stderr.decode(errors="replace")
        self.assertEqual(p.returncode, 1, err)
        self.assertIn(self.d.data_dir, err)
        self.assertIn("pid %d" % self.d.proc.pid, err)
        self.assertTrue(os.path.exists(marker), "the refused daemon emptied staging/")
        self.assertEqual(self.d.get("/healthz").status, 200)
        # a kill -9 leaves no stale lock
        self.d.kill9()
        self.d.start()
        self.assertEqual(self.d.get("/v1/assemblies/" + self.aid).json()["status"], "ready")
        self.assertFalse(os.path.exists(marker))  # this start cleared staging/


if __name__ == "__main__":
    unittest.main()
