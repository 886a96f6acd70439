"""The checks every request passes (server/guard.h), on a real daemon:
- framing: conflicting Content-Length, Content-Length with
  Transfer-Encoding, a NUL in the path (/web/app.js%00.html must not serve
  app.js) or the query, a query parameter given twice: 400 naming it;
  HEAD is answered like GET without a body;
- Host: a name that is not an IP literal, localhost or --allow-host is
  refused (403, DNS rebinding); Origin: a write from another site's page is
  refused (403, CSRF), the daemon's own origin is accepted;
- tokens (--token-file): 401 with WWW-Authenticate without a known token,
  403 for a write with a read token, /healthz and the page stay public;
  the CLI sends GAPSIM_TOKEN;
- capacity: with 2,000 idle sockets open, /healthz is still answered (the
  p99 latency is printed), and above --max-connections new requests get
  503 with Retry-After; sockets that never send their headers are closed
  after --header-timeout;
- a 500 (here: the data directory's jobs/ replaced by a file) answers an
  error id, never a path; the log has the details under that id;
- memory: a 64 MiB JSON cloud body raises the daemon's peak RSS by at most
  3x its size (the gaps are parsed into doubles without a JSON tree), and
  RSS comes back within 10% of the body's size after it is stored.
"""
import os
import resource
import socket
import subprocess
import tempfile
import time
import unittest

import gsd_harness as h
from api_common import (ApiCase, DaemonCase, TokenFileMixin, model, raw_request, status_of,
                        upload_json)


def raw(d, data, timeout=10):
    """Send raw bytes; the whole answer (until the server closes or 1 s idle)."""
    return raw_request(d, data, timeout, idle=1.0)


class Guard(ApiCase):
    def test_framing(self):
        a = raw(self.d, b"POST /v1/assemblies HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        b"Content-Length: 2\r\nContent-Length: 5\r\n\r\n{}")
        self.assertIn(status_of(a), (400, None), a[:200])  # MHD may refuse it itself
        a = raw(self.d, b"POST /v1/assemblies HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}")
        self.assertIn(status_of(a), (400, None), a[:200])
        r = self.d.get("/web/app.js%00.html")
        self.assertEqual(r.status, 400, r.body[:200])
        self.assertEqual(r.json()["error"]["field"], "path")
        r = self.d.get("/v1/jobs?status=done%00x")
        self.assertEqual(r.status, 400, r.body[:200])
        r = self.d.get("/v1/jobs?limit=1&limit=2")
        self.assertEqual(r.status, 400, r.body[:200])
        self.assertEqual(r.json()["error"]["field"], "limit")

    def test_head_is_get_without_body(self):
        a = raw(self.d, b"HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        self.assertEqual(status_of(a), 200, a[:200])
        head, _, body = a.partition(b"\r\n\r\n")
        self.assertEqual(body, b"")
        self.assertIn(b"application/json", head)

    def test_host_and_origin(self):
        r = self.d.get("/healthz", headers={"Host": "evil.example:8600"})
        self.assertEqual(r.status, 403, r.body[:200])
        self.assertEqual(r.json()["error"]["field"], "Host")
        for host in ("localhost:1", "127.0.0.1", "[::1]:80"):
            self.assertEqual(self.d.get("/healthz", headers={"Host": host}).status, 200, host)
        g = [0.5] * self.m
        r = self.d.post("/v1/assemblies/%s/solve" % self.aid, {"g": g},
                        headers={"Origin": "http://evil.example"})
        self.assertEqual(r.status, 403, r.body[:200])
        self.assertEqual(r.json()["error"]["field"], "Origin")
        own = "http://" + self.d.url[len("http://"):]
        r = self.d.post("/v1/assemblies/%s/solve" % self.aid, {"g": g}, headers={"Origin": own})
        self.assertEqual(r.status, 200, r.body[:200])
        # a read from another origin is not a write: allowed
        r = self.d.get("/v1/assemblies", headers={"Origin": "http://evil.example"})
        self.assertEqual(r.status, 200, r.body[:200])


class Tokens(TokenFileMixin, DaemonCase):
    workers = 1

    def test_scopes(self):
        self.assertEqual(self.d.get("/healthz").status, 200)
        r = self.d.get("/v1/assemblies")
        self.assertEqual(r.status, 401)
        self.assertEqual(r.headers.get("WWW-Authenticate"), 'Bearer realm="gapsimd"')
        bad = {"Authorization": "Bearer " + self.READ[:-1] + "x"}
        self.assertEqual(self.d.get("/v1/assemblies", headers=bad).status, 401)
        rd = {"Authorization": "Bearer " + self.READ}
        wr = {"Authorization": "Bearer " + self.WRITE}
        self.assertEqual(self.d.get("/v1/assemblies", headers=rd).status, 200)
        r = self.d.delete("/v1/jobs/j_0123456789abcdef", headers=rd)
        self.assertEqual(r.status, 403, r.body[:200])
        r = self.d.delete("/v1/jobs/j_0123456789abcdef", headers=wr)
        self.assertEqual(r.status, 404, r.body[:200])  # authorized: the job does not exist

    def test_cli_sends_the_token(self):
        env = dict(os.environ, GAPSIM_SERVER=self.d.url)
        p = subprocess.run([h.binary("gapsim"), "assembly", "list"], env=env,
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 1, p.stderr)  # the server answered 401
        self.assertIn("token", p.stderr)
        env["GAPSIM_TOKEN"] = self.READ
        p = subprocess.run([h.binary("gapsim"), "assembly", "list"], env=env,
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_bad_token_file_refused_at_start(self):
        fd, bad = tempfile.mkstemp(dir=h.TMP, suffix=".tokens")
        os.write(fd, b"read short\n")
        os.close(fd)
        p = subprocess.run([h.binary("gapsimd"), "--port", "0", "--data-dir",
                            tempfile.mkdtemp(dir=h.TMP), "--token-file", bad],
                           capture_output=True, text=True, timeout=30)
        os.unlink(bad)
        self.assertEqual(p.returncode, 2)
        self.assertIn("line 1", p.stderr)
        self.assertNotIn("short", p.stderr)  # a token is never printed

    def test_bad_option_values_named(self):
        """A bad number exits 2 naming the option, the value and the range."""
        for opt, val, rng in (("--port", "80x", "[0, 65535]"), ("--workers", "0", "[1, 256]"),
                              ("--max-loaded-mb", "1e3", "[0, 1099511627776]"),
                              ("--retain-solves-age", "-1", "[0, 36500]")):
            p = subprocess.run([h.binary("gapsimd"), "--data-dir", tempfile.mkdtemp(dir=h.TMP),
                                opt, val], capture_output=True, text=True, timeout=30)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("gapsimd: %s: '%s' is not a number in %s" % (opt, val, rng), p.stderr)

    def test_bad_option_words_named(self):
        """A word that is not an option, a missing or unexpected value, an
        abbreviation: exit 2 naming the word, before anything is made."""
        d = tempfile.mkdtemp(dir=h.TMP)
        for words, said in ((["--port=80x"], "--port: '80x' is not a number in [0, 65535]"),
                            (["--data", d], "unknown option '--data'"),
                            (["--reset=1"], "--reset takes no value"),
                            (["--port"], "--port needs a value"),
                            (["stray"], "unexpected argument 'stray'"),
                            (["--addr\n1"], "unknown option '--addr?1'")):
            p = subprocess.run([h.binary("gapsimd"), "--data-dir", d] + words,
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("gapsimd: " + said, p.stderr)
        self.assertEqual(os.listdir(d), [])  # refused before the data directory is touched
        p = subprocess.run([h.binary("gapsimd"), "--port=0", "-h"], capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("--name=value", p.stdout)


class Capacity(unittest.TestCase):
    IDLE = 2000

    def test_idle_flood_and_limit(self):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = self.IDLE + 512
        if soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
        if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < want:
            self.skipTest("cannot open %d sockets here" % want)
        d = h.Daemon(workers=1, extra=["--max-connections", "2100", "--header-timeout", "2"]).start()
        socks = []
        try:
            host, port = d.url[len("http://"):].split(":")
            for _ in range(self.IDLE):
                socks.append(socket.create_connection((host, int(port))))
            lat = []
            for _ in range(100):
                t0 = time.time()
                r = d.get("/healthz", timeout=10)
                lat.append(time.time() - t0)
                self.assertEqual(r.status, 200)
            lat.sort()
            print("\n  %d idle sockets: /healthz median %.1f ms, p99 %.1f ms"
                  % (self.IDLE, 1e3 * lat[50], 1e3 * lat[98]))
            # fill up to the limit: the next requests are answered 503
            for _ in range(120):
                socks.append(socket.create_connection((host, int(port))))
            a = raw(d, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            self.assertEqual(status_of(a), 503, a[:200])
            self.assertIn(b"Retry-After: 1", a)
            # sockets without headers are closed after --header-timeout (2 s)
            time.sleep(3.5)
            closed = 0
            for s in socks[:50]:
                s.settimeout(0.5)
                try:
                    closed += s.recv(1) == b""
                except (socket.timeout, ConnectionResetError):
                    pass
            self.assertGreater(closed, 40)
            self.assertEqual(d.get("/healthz").status, 200)
        finally:
            for s in socks:
                s.close()
            d.cleanup()


class ErrorIds(ApiCase):
    def test_500_shows_an_error_id_not_a_path(self):
        jobs = os.path.join(self.d.data_dir, "jobs")
        os.rename(jobs, jobs + ".keep")
        try:
            with open(jobs, "w") as f:
                f.write("not a directory")
            r = self.d.post("/v1/assemblies/%s/clouds" % self.aid, {"gaps": [[0.5] * self.m]})
            self.assertEqual(r.status, 500, r.body[:300])
            err = r.json()["error"]
            self.assertRegex(err["error_id"], "^[0-9a-f]{8}$")
            self.assertIn(err["error_id"], err["message"])
            self.assertNotIn(self.d.data_dir, r.body.decode())
            with open(self.d.log_path, errors="replace") as f:
                log = f.read()
            self.assertIn("error %s:" % err["error_id"], log)
        finally:
            os.unlink(jobs)
            os.rename(jobs + ".keep", jobs)


def vm(pid, field):
    """VmRSS / VmHWM of a process, bytes."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise AssertionError(field)


class Memory(DaemonCase):
    """Measured on the Release gapsimd: ASan's allocator keeps freed memory in
    quarantine and pads every block, TSan keeps shadow memory, so a sanitized
    daemon says nothing about memory. Skipped when no Release build is there."""

    @classmethod
    def daemon_options(cls):
        exe = h.binary("gapsimd")
        if h.sanitized(exe):
            exe = h.release_binary("gapsimd")
        if exe is None:
            raise unittest.SkipTest("no Release gapsimd to measure memory with")
        return dict(super().daemon_options(), exe=exe)

    @classmethod
    def prepare(cls):
        cls.model_json, _ = model("lap", small=True, inline=True, gaps=2)
        r = upload_json(cls.d, cls.model_json)
        assert r.status == 201, r.body[:300]
        cls.aid, cls.m = r.json()["id"], r.json()["m"]

    def test_big_json_body(self):
        m = self.m
        row = ", ".join("%.15f" % (0.1 + 1e-3 * j) for j in range(m))
        line = "[" + row + "]"
        k = (64 << 20) // (len(line) + 2) + 1
        body = ('{"fastener_fraction": 0.5, "gaps": [' + ", ".join([line] * k) + "]}").encode()
        pid = self.d.proc.pid
        rss0 = vm(pid, "VmRSS")
        with open("/proc/%d/clear_refs" % pid, "w") as f:  # reset VmHWM to the current RSS
            f.write("5")
        r = self.d.post("/v1/assemblies/%s/clouds" % self.aid, body,
                        headers={"Content-Type": "application/json"}, timeout=300)
        self.assertEqual(r.status, 202, r.body[:300])
        jid = r.json()["id"]
        hwm = vm(pid, "VmHWM")
        self.d.delete("/v1/jobs/" + jid)
        time.sleep(0.5)
        rss1 = vm(pid, "VmRSS")
        print("\n  %.1f MiB JSON body (%d gaps): peak RSS +%.1f MiB (%.2fx the body), RSS after "
              "%+.1f MiB" % (len(body) / 2**20, k, (hwm - rss0) / 2**20, (hwm - rss0) / len(body),
                             (rss1 - rss0) / 2**20))
        self.assertLessEqual(hwm - rss0, 3 * len(body))
        self.assertLessEqual(rss1 - rss0, 0.1 * len(body) + (16 << 20))


if __name__ == "__main__":
    unittest.main()
