"""test_ops_failure -- operational failures reported, not hidden.

- a store the daemon cannot write (the database read-only to its user)
  refuses to start, exit 1 naming the read-only store, instead of serving
  500s behind a healthy /healthz;
- a job that cannot resume after a restart (its gaps.npy truncated) ends
  failed saying why in `error`, and the log names no empty field;
- the data directory removed under a running daemon: /healthz degraded
  naming it, new data refused (507), and the daemon still stops cleanly;
- single solves deleted to keep the store under --store-quota-mb are
  logged, one line per pass (the sweep's, a request's making room) with how
  many and the MiB freed, not only counted in /metrics;
- `gapsim` writing to a full stdout (/dev/full) exits 5 with the reason
  (health, assembly list, cloud status / summary / results), as -o does;
- `gapsim-batch`: a full stdout is exit 1 and leaves no output file; SIGINT
  and SIGTERM remove the temporary output files; a model too large for the
  address space left by `ulimit -v` is refused before any BLAS call (an
  unsanitized build only: the sanitizers' shadow takes terabytes of it).
"""
import glob
import os
import re
import resource
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import time
import unittest

import gsd_harness as h
from api_common import ApiCase, metric, model

FULL = "/dev/full"


def no_dev_full():
    """True unless /dev/full is there and refuses writes with ENOSPC."""
    try:
        with open(FULL, "wb") as f:
            f.write(b"x")
            f.flush()
    except OSError as e:
        return e.errno != 28
    return True


class ReadonlyStore(unittest.TestCase):
    """gapsim.db not writable by the daemon's user: SQLite would open it
    read-only without a word."""

    def test_readonly_store_refused(self):
        d = h.Daemon().start()
        d.stop()
        data = d.data_dir
        db = os.path.join(data, "gapsim.db")
        try:
            self.assertFalse(os.path.exists(db + "-wal"))
            os.chmod(db, 0o444)
            cmd = [h.binary("gapsimd"), "--port", "0", "--data-dir", data]
            if os.geteuid() == 0:
                # root writes any file: run as nobody over a root-owned
                # store, the directory and the lock open to it
                if not shutil.which("setpriv"):
                    self.skipTest("running as root without setpriv")
                for p in [data] + [os.path.join(data, x) for x in os.listdir(data)]:
                    if os.path.isdir(p):
                        os.chmod(p, 0o777)
                os.chmod(os.path.join(data, "gapsimd.lock"), 0o666)
                if not os.stat(os.path.dirname(data)).st_mode & 0o001:
                    self.skipTest("uid 65534 cannot reach %s" % data)
                cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + cmd
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 1, (p.stdout, p.stderr))
            self.assertNotIn("listening", p.stdout)
            self.assertIn("read-only", p.stderr)
            self.assertIn("gapsim.db", p.stderr)
            # writable again: it starts
            os.chmod(db, 0o644)
            d.start()
            self.assertEqual(d.get("/healthz").json()["status"], "ok")
        finally:
            d.cleanup()


class ResumeFailure(ApiCase):
    def test_job_that_cannot_resume_says_why(self):
        job = self.cloud(self.G[:12])
        self.assertEqual(self.d.wait_job(job["id"])["status"], "done")
        # as after a kill -9 mid-cloud: the job still running in the store,
        # its gaps file damaged
        self.assertIn(self.d.stop(), (0, None))
        con = sqlite3.connect(os.path.join(self.d.data_dir, "gapsim.db"))
        con.execute("UPDATE jobs SET status='running', finished_at=NULL WHERE id=?",
                    (job["id"],))
        con.commit()
        con.close()
        gaps = os.path.join(self.d.data_dir, "jobs", job["id"], "gaps.npy")
        with open(gaps, "r+b") as f:
            f.truncate(100)
        off = os.path.getsize(self.d.log_path)
        self.d.start()
        j = self.d.get("/v1/jobs/" + job["id"]).json()
        self.assertEqual(j["status"], "failed", j)
        self.assertIsNotNone(j["error"], j)
        self.assertRegex(j["error"], r"^[a-z_]+ \(error [0-9a-f]{8}\): \S", j)
        self.assertNotIn(self.d.data_dir, j["error"])
        self.assertIsNotNone(j["finished_at"])
        with open(self.d.log_path, "rb") as f:
            f.seek(off)
            log = f.read().decode(errors="replace")
        eid = re.search(r"\(error ([0-9a-f]{8})\)", j["error"]).group(1)
        line = [ln for ln in log.splitlines() if eid in ln]
        self.assertTrue(line and "cannot resume" in line[0], log)
        self.assertNotIn("(: ", log)
        # ?wait answers at once: the job has ended
        t0 = time.time()
        self.assertEqual(self.d.get("/v1/jobs/%s?wait=5" % job["id"]).json()["status"], "failed")
        self.assertLess(time.time() - t0, 3)
        # the CLI's status says why too (it did only with --json)
        cli = subprocess.run([h.binary("gapsim"), "--server", self.d.url, "cloud", "status",
                              job["id"]], capture_output=True, text=True, timeout=60)
        self.assertEqual(cli.returncode, 0, cli.stderr)
        self.assertRegex(cli.stdout, r"\nerror: +%s\n" % re.escape(j["error"]))


class LostDataDir(ApiCase):
    def test_removed_data_dir_is_degraded_and_refuses_writes(self):
        hz = self.d.get("/healthz").json()
        self.assertEqual(hz["status"], "ok", hz)
        moved = self.d.data_dir + ".gone"
        os.rename(self.d.data_dir, moved)  # as rm -rf, but restorable for the cleanup
        try:
            hz = self.d.get("/healthz").json()
            self.assertEqual(hz["status"], "degraded", hz)
            self.assertEqual(hz["disk_free_mb"], -1)
            self.assertTrue(any("data directory" in r for r in hz["reasons"]), hz)
            # no new data into a store that is no longer there
            r = self.d.post("/v1/assemblies/%s/solve" % self.aid, {"g": self.G[1]})
            self.assert_error(r, 507, code="insufficient_storage")
            self.assertIn("data directory", r.json()["error"]["message"])
            r = self.d.post("/v1/assemblies/%s/clouds" % self.aid, {"gaps": self.G[:2]})
            self.assert_error(r, 507, code="insufficient_storage")
        finally:
            os.rename(moved, self.d.data_dir)
        self.assertEqual(self.d.get("/healthz").json()["status"], "ok")
        self.solve(self.G[1])


class QuotaDeletesLogged(ApiCase):
    daemon_extra = ["--store-quota-mb", "1"]

    def plant_single_solves(self, first, n=120):
        """n old single solves of 16 KiB each (2 MiB in all: the store goes
        over its 1 MiB quota), written beside the daemon as a store of an
        older run would hold them."""
        con = sqlite3.connect(os.path.join(self.d.data_dir, "gapsim.db"), timeout=30)
        con.executemany(
            "INSERT INTO results (id, assembly_id, job_id, job_index, cache_key, status, m, "
            "created_at, w, w_enc) VALUES (?, ?, NULL, -1, ?, 'optimal', 2048, ?, "
            "randomblob(16384), 0)",
            [("r_%016x" % (first + i), self.aid, "planted%d" % (first + i), 1.0 + first + i)
             for i in range(n)])
        con.commit()
        con.close()

    def quota_lines(self, off, who):
        with open(self.d.log_path, "rb") as f:
            f.seek(off)
            log = f.read().decode(errors="replace")
        pat = (r"gapsimd info: store quota: %s deleted the (\d+) oldest single-solve results, "
               r"([0-9.]+) MiB freed, the store now ([0-9.]+) MiB \(--store-quota-mb 1\)" % who)
        return [(int(n), float(freed), float(now)) for n, freed, now in re.findall(pat, log)]

    def test_quota_deletes_are_logged(self):
        # the sweep at the start of the next run (the factors saved first: a
        # save after the restart would wake the sweep again, and it would
        # take the request's part below)
        self.assertTrue(self.d.wait_factors_saved(self.aid)["factors_saved"])
        self.assertIn(self.d.stop(), (0, None))
        self.plant_single_solves(0)
        off = os.path.getsize(self.d.log_path)
        self.d.start()
        deadline = time.time() + 10
        while not self.quota_lines(off, "the sweep") and time.time() < deadline:
            time.sleep(0.05)
        lines = self.quota_lines(off, "the sweep")
        self.assertEqual(len(lines), 1, lines)
        n, freed, now = lines[0]
        self.assertGreater(n, 0)
        self.assertGreater(freed, 0.5)
        self.assertLessEqual(now, 1.0)
        self.assertEqual(metric(self.d, "gapsim_results_retained_total"), n)
        # a request that makes room before it stores
        self.plant_single_solves(1000)
        off = os.path.getsize(self.d.log_path)
        self.solve(self.G[3])
        lines = self.quota_lines(off, "a request making room")
        self.assertEqual(len(lines), 1, lines)
        self.assertGreater(lines[0][0], 0)
        self.assertGreater(lines[0][1], 0.5)


@unittest.skipIf(no_dev_full(), "no /dev/full")
class CliFullStdout(ApiCase):
    def run_cli(self, args, stdout=None):
        e = dict(os.environ, GAPSIM_SERVER=self.d.url)
        with open(stdout or os.devnull, "wb") as out:
            return subprocess.run([h.binary("gapsim")] + args, env=e, stdout=out,
                                  stderr=subprocess.PIPE, text=True, timeout=120)

    def test_full_stdout_is_exit_5(self):
        job = self.cloud(self.G[:6])["id"]
        self.assertEqual(self.d.wait_job(job)["status"], "done")
        cmds = [["health"], ["--json", "health"], ["assembly", "list"],
                ["--json", "assembly", "list"], ["cloud", "status", job],
                ["cloud", "summary", job], ["--json", "cloud", "summary", job],
                ["cloud", "results", job, "--json"]]
        for args in cmds:
            ok = self.run_cli(args)
            self.assertEqual(ok.returncode, 0, (args, ok.stderr))
            p = self.run_cli(args, FULL)
            self.assertEqual(p.returncode, 5, (args, p.stderr))
            self.assertIn("cannot write the answer: No space left on device", p.stderr, args)


def batch_model():
    return model("lap", small=True, inline=False, gaps=40)


class BatchFailures(unittest.TestCase):
    def setUp(self):
        os.makedirs(h.TMP, exist_ok=True)
        self.dir = tempfile.mkdtemp(prefix="batchfail-", dir=h.TMP)
        self.model_json, self.gaps = batch_model()
        self.out = os.path.join(self.dir, "w.npy")
        self.summary = os.path.join(self.dir, "s.json")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def batch(self, gaps, **kw):
        return [h.binary("gapsim-batch"), self.model_json, "--gaps", gaps, "--threads", "1",
                "--out", self.out, "--summary", self.summary, "--no-progress"]

    @unittest.skipIf(no_dev_full(), "no /dev/full")
    def test_full_stdout_fails_and_leaves_no_output(self):
        with open(FULL, "wb") as out:
            p = subprocess.run(self.batch(self.gaps), stdout=out, stderr=subprocess.PIPE,
                               text=True, timeout=120)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("cannot write the report to stdout: No space left on device", p.stderr)
        self.assertEqual(os.listdir(self.dir), [])
        p = subprocess.run(self.batch(self.gaps), capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(os.listdir(self.dir)), ["s.json", "w.npy"])

    def test_signal_removes_temporary_outputs(self):
        fifo = os.path.join(self.dir, "gaps.fifo")
        os.mkfifo(fifo)  # nobody writes it: the run waits in its open, outputs opened
        for sig in (signal.SIGINT, signal.SIGTERM):
            p = subprocess.Popen(self.batch(fifo), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
            try:
                deadline = time.time() + 30
                while len(glob.glob(os.path.join(self.dir, "*.tmp.*"))) < 2:
                    self.assertLess(time.time(), deadline, "no temporary outputs")
                    self.assertIsNone(p.poll())
                    time.sleep(0.01)
                p.send_signal(sig)
                rc = p.wait(30)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
                p.stderr.close()
            self.assertEqual(rc, -sig)  # ended by the signal, as before (a shell's 130 for ^C)
            self.assertEqual(sorted(os.listdir(self.dir)), ["gaps.fifo"], sig)

    def test_address_space_limit_refused_before_blas(self):
        exe = h.binary("gapsim-batch")
        if h.sanitized(exe):
            self.skipTest("sanitized build: ulimit -v leaves it no room to start")
        mj, gaps = model("lap", small=False, inline=False, gaps=4, extra=["--no-cond"])
        limit = 420 << 20  # the lap joint's blocks, factors and Q need more

        def lower():
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        p = subprocess.run([exe, mj, "--gaps", gaps, "--threads", "1", "--out", self.out],
                           capture_output=True, text=True, timeout=120, preexec_fn=lower,
                           env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("too_large", p.stderr)
        self.assertIn("RLIMIT_AS (ulimit -v)", p.stderr)
        self.assertIn("MiB", p.stderr)
        self.assertEqual(os.listdir(self.dir), [])


if __name__ == "__main__":
    unittest.main()
