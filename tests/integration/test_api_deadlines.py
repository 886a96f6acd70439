"""Deadlines and cancellation on the full lap model (n = 5,206, m = 2,603),
where an interior-point solve with every fastener takes a minute or more:
- timeout_s = 1 ends the solve with status "time_limit" (200) in about a
  second; timeout_s and max_iter out of range are refused naming the field;
- a client that hangs up cancels its solve (metrics: status "cancelled");
- DELETE of a running cloud stops its running solve at once (nothing
  stored for it); DELETE of the assembly under a running solve answers
  that solve 404 (its result has nothing left to belong to);
- SIGTERM during a slow solve exits in a few seconds (the waiting client
  gets 503 or a closed connection), and so does a request held waiting for
  a job's end (GET /v1/jobs/{id}?wait=60);
- three slow solves on two workers leave one worker for a gi solve (the
  slow lane: at most workers - 1 slow solves run at once); an upload's
  precomputation does not wait for a running slow solve, nor make the gi
  solves wait for it.
The measured times are printed (they are figures, not assertions: the
assertions only bound them far above the expected values, so that a solve
that is not stopped fails the test)."""
import socket
import threading
import time
import unittest
import json
import os
import re

import gsd_harness as h
from api_common import DaemonCase, gaps_rows, metric, model, upload_multipart

SLOW = {"solver": "ipm", "fasteners": "all"}


def cancelled(d):
    """ipm solves that ended cancelled so far (the sample appears with the first)."""
    try:
        return metric(d, "gapsim_solves_total", 'solver="ipm",status="cancelled"')
    except AssertionError:
        return 0


class DeadlineTest(DaemonCase):
    daemon_extra = ["--max-timeout", "100", "--default-timeout", "60"]

    @classmethod
    def prepare(cls):
        path, gaps = model("lap", small=False, inline=False, gaps=4, extra=["--no-cond"])
        cls.G = gaps_rows(gaps)
        cls.model_path = path
        cls.aid = cls.upload(cls.d)

    @classmethod
    def upload(cls, d):
        """Upload and wait for L_Q too (it comes after "ready", with the saved
        factors), then run one short interior-point solve: the primal form
        reads the stiffness blocks, which the daemon releases once factored,
        again from the data directory (docs/operations.md). The solves here
        must be running, not waiting for L_Q or the blocks, when they are
        cut short."""
        r = upload_multipart(d, cls.model_path, wait=True)
        assert r.status == 201, (r.status, r.body[:300])
        aid = r.json()["id"]
        assert d.wait_factors_saved(aid, 120, poll=0.05)["factors_saved"], \
            "factors not saved after 120 s"
        r = d.post("/v1/assemblies/%s/solve" % aid, dict(SLOW, g=cls.G[0], timeout_s=0.1))
        assert r.status == 200 and r.json()["status"] == "time_limit", (r.status, r.body[:300])
        return aid

    def test_timeout_s_ends_a_slow_solve(self):
        t0 = time.time()
        r = self.d.post("/v1/assemblies/%s/solve" % self.aid,
                        dict(SLOW, g=self.G[0], timeout_s=1))
        dt = time.time() - t0
        print("\n  timeout_s = 1: answered in %.2f s" % dt)
        self.assertEqual(r.status, 200, r.body[:300])
        self.assertEqual(r.json()["status"], "time_limit")
        self.assertLess(dt, 30)
        # not a cache entry: the same request runs again (and stops again)
        r = self.d.post("/v1/assemblies/%s/solve" % self.aid,
                        dict(SLOW, g=self.G[0], timeout_s=0.5))
        self.assertEqual(r.json()["status"], "time_limit")
        self.assertFalse(r.json().get("cached", False))

    def test_limits_name_the_field(self):
        for body, field in ((dict(timeout_s=0), "timeout_s"), (dict(timeout_s=101), "timeout_s"),
                            (dict(timeout_s="1"), "timeout_s"), (dict(max_iter=1e9), "max_iter")):
            r = self.d.post("/v1/assemblies/%s/solve" % self.aid, dict(body, g=self.G[0]))
            self.assertIn(r.status, (400, 422), r.body[:300])
            self.assertEqual(r.json()["error"]["field"], field, body)
        r = self.d.post("/v1/assemblies/%s/clouds" % self.aid, dict(gaps=self.G[:1], timeout_s=101))
        self.assertIn(r.status, (400, 422), r.body[:300])
        self.assertEqual(r.json()["error"]["field"], "timeout_s")

    def test_hang_up_cancels_the_solve(self):
        before = cancelled(self.d)
        host, port = re.match(r"http://([0-9.]+):([0-9]+)", self.d.url).groups()
        body = json.dumps(dict(SLOW, g=self.G[1])).encode()
        s = socket.create_connection((host, int(port)))
        s.sendall(b"POST /v1/assemblies/%s/solve HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                  % (self.aid.encode(), len(body)) + body)
        time.sleep(0.5)
        s.close()
        t0 = time.time()
        while cancelled(self.d) <= before and time.time() - t0 < 30:
            time.sleep(0.02)
        dt = time.time() - t0
        print("\n  hang-up: solve cancelled %.2f s after the client closed" % dt)
        self.assertGreater(cancelled(self.d), before)

    def raw_solve(self, body):
        """Send a solve on a raw socket and return the socket (not read)."""
        host, port = re.match(r"http://([0-9.]+):([0-9]+)", self.d.url).groups()
        data = json.dumps(body).encode()
        s = socket.create_connection((host, int(port)))
        s.sendall(b"POST /v1/assemblies/%s/solve HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                  % (self.aid.encode(), len(data)) + data)
        return s

    def test_slow_solves_leave_a_worker(self):
        # without the lane both workers would run ipm for a minute and the gi
        # solve would wait for one of them
        before = cancelled(self.d)
        socks = [self.raw_solve(dict(SLOW, g=self.G[i], timeout_s=90)) for i in range(3)]
        try:
            time.sleep(0.5)
            t0 = time.time()
            r = self.d.post("/v1/assemblies/%s/solve" % self.aid,
                            {"g": self.G[3], "fasteners": "all", "solver": "gi", "return": ["kkt"]})
            dt = time.time() - t0
            print("\n  gi solve beside three ipm solves on two workers: %.3f s" % dt)
            self.assertEqual(r.status, 200, r.body[:300])
            self.assertEqual(r.json()["status"], "optimal")
            for s in socks:  # the slow ones are still running or queued: no answer yet
                s.setblocking(False)
                with self.assertRaises(BlockingIOError):
                    s.recv(1)
        finally:
            for s in socks:
                s.close()
        t0 = time.time()
        while cancelled(self.d) < before + 3 and time.time() - t0 < 60:
            time.sleep(0.05)
        self.assertEqual(cancelled(self.d), before + 3)

    def test_upload_beside_a_slow_solve_keeps_gi_solves_going(self):
        # the precomputation of an upload is an exclusive task; it waited for
        # every running task to end, the slow solve too, and held the other
        # worker idle meanwhile: gi solves waited for the ipm solve. Now the
        # gi solve and the upload end before the ipm solve (about 2 s here;
        # its own tol: a cache key of its own, so no other test meets it)
        out = {}

        def slow():
            out["r"] = self.d.post("/v1/assemblies/%s/solve" % self.aid,
                                   dict(SLOW, g=self.G[0], timeout_s=90, tol=1e-9), timeout=120)
            out["t"] = time.time()
        th = threading.Thread(target=slow)
        th.start()
        try:
            time.sleep(0.3)
            path, _ = model("lap", small=True, inline=False, gaps=2)
            r = upload_multipart(self.d, path, wait=False)
            self.assertIn(r.status, (200, 202), r.body[:300])
            new = r.json()["id"]
            t0 = time.time()
            r = self.d.post("/v1/assemblies/%s/solve" % self.aid,
                            {"g": self.G[1], "fasteners": "all", "solver": "gi"}, timeout=120)
            t_gi = time.time()
            a = self.d.wait_assembly(new, lambda a: a["status"] != "precomputing", timeout=120)
            t_up = time.time()
        finally:
            th.join(120)
        print("\n  beside an ipm solve (%.2f s): a gi solve %.3f s, an upload ready after %.2f s"
              % (out["t"] - t0 + 0.3, t_gi - t0, t_up - t0))
        self.assertEqual(r.status, 200, r.body[:300])
        self.assertEqual(r.json()["status"], "optimal")
        self.assertEqual(a["status"], "ready")
        self.assertEqual(out["r"].status, 200, out["r"].body[:300])
        self.assertLess(t_gi, out["t"])  # answered while the ipm solve ran
        self.assertLess(t_up, out["t"])
        self.d.delete("/v1/assemblies/" + new)

    def test_delete_stops_a_running_cloud(self):
        r = self.d.post("/v1/assemblies/%s/clouds" % self.aid, dict(SLOW, gaps=self.G[:2]))
        self.assertEqual(r.status, 202, r.body[:300])
        jid = r.json()["id"]
        t0 = time.time()
        while self.d.get("/v1/jobs/" + jid).json()["status"] != "running" and time.time() - t0 < 30:
            time.sleep(0.02)
        time.sleep(0.3)
        before = cancelled(self.d)
        t0 = time.time()
        r = self.d.delete("/v1/jobs/" + jid)
        self.assertIn(r.status, (200, 202, 204), r.body[:300])
        while cancelled(self.d) <= before and time.time() - t0 < 30:
            time.sleep(0.02)
        dt = time.time() - t0
        print("\n  DELETE: running cloud solve stopped %.2f s after the request" % dt)
        self.assertGreater(cancelled(self.d), before)
        j = self.d.get("/v1/jobs/" + jid).json()
        self.assertEqual((j["status"], j["done"]), ("cancelled", 0))

    def test_delete_the_assembly_during_a_solve(self):
        # the solve goes on (DELETE cancels jobs, not a solve in flight) and
        # its result has no assembly left to belong to: 404, not a 500
        d = h.Daemon(workers=2).start()
        try:
            aid = self.upload(d)
            out = {}
            th = threading.Thread(target=lambda: out.setdefault("r", d.post(
                "/v1/assemblies/%s/solve" % aid, dict(SLOW, g=self.G[3], timeout_s=3))))
            th.start()
            time.sleep(1.0)
            r = d.delete("/v1/assemblies/" + aid)
            self.assertEqual(r.status, 204, r.body[:300])
            th.join(60)
            r = out["r"]
            self.assertEqual(r.status, 404, r.body[:300])
            err = r.json()["error"]
            self.assertEqual(err["code"], "not_found")
            self.assertIn("was deleted while this request ran", err["message"])
        finally:
            d.cleanup()

    def sigterm_while_held(self, request, what):
        """SIGTERM while request(d, aid) is held by a 1-worker daemon: the
        daemon exits in seconds and the request gets 503 (or its connection
        closes)."""
        d = h.Daemon(workers=1).start()
        try:
            aid = self.upload(d)
            out = {}

            def client():
                try:
                    out["r"] = request(d, aid)
                except Exception as e:  # the connection closed: also an answer
                    out["e"] = e
            th = threading.Thread(target=client)
            th.start()
            time.sleep(1.0)
            t0 = time.time()
            rc = d.stop()
            dt = time.time() - t0
            th.join(30)
            print("\n  SIGTERM %s: exit %r after %.2f s" % (what, rc, dt))
            self.assertEqual(rc, 0)
            self.assertLess(dt, 20)
            self.assertFalse(th.is_alive())
            if "r" in out:
                self.assertEqual(out["r"].status, 503, out["r"].body[:300])
        finally:
            d.cleanup()

    def test_sigterm_during_a_slow_solve(self):
        self.sigterm_while_held(
            lambda d, aid: d.post("/v1/assemblies/%s/solve" % aid, dict(SLOW, g=self.G[2])),
            "during a solve")

    def test_sigterm_while_a_request_waits_for_a_job(self):
        # GET /v1/jobs/{id}?wait=60 held for a cloud of minute-long solves
        def wait_for_job(d, aid):
            r = d.post("/v1/assemblies/%s/clouds" % aid, dict(SLOW, gaps=self.G[:2]))
            assert r.status == 202, (r.status, r.body[:300])
            return d.get("/v1/jobs/%s?wait=60" % r.json()["id"], timeout=120)
        self.sigterm_while_held(wait_for_job, "while a request waits for a job")

    def test_sigterm_during_a_precomputation(self):
        # a precomputation cannot stop inside a BLAS call: the daemon exits
        # without it after its grace time, and the next start precomputes
        # again. Its threads are left running by design: under ThreadSanitizer
        # (scripts/tsan) this daemon alone does not report them as leaked.
        tsan = os.environ.get("TSAN_OPTIONS", "")
        d = h.Daemon(workers=2, env={"TSAN_OPTIONS": (tsan + ":" if tsan else "") +
                                     "report_thread_leaks=0"}).start()
        try:
            r = upload_multipart(d, self.model_path, wait=False)
            self.assertEqual(r.status, 202, r.body[:300])
            aid = r.json()["id"]
            time.sleep(0.3)
            busy = d.get("/v1/assemblies/" + aid).json()["status"] == "precomputing"
            t0 = time.time()
            rc = d.stop()
            dt = time.time() - t0
            print("\n  SIGTERM during a precomputation (%s): exit %r after %.2f s"
                  % ("in flight" if busy else "already done", rc, dt))
            self.assertEqual(rc, 0)
            self.assertLess(dt, 20)
            d.start()
            a = d.wait_assembly(aid, lambda a: a["status"] != "precomputing", 300, 0.1)
            self.assertEqual(a["status"], "ready", a)
            s = d.post("/v1/assemblies/%s/solve" % aid, {"g": self.G[0], "return": ["kkt"]})
            self.assertEqual((s.status, s.json()["status"]), (200, "optimal"))
        finally:
            d.cleanup()


if __name__ == "__main__":
    unittest.main()
