"""api_common -- shared pieces of the REST API integration tests (test_api_*.py).

Built on gsd_harness: generated models cached per process, a test case base
class that starts one daemon per class and uploads the small lap model, and
assertion helpers for the error body and for vectors compared to a
tolerance. Standard library only.
"""
import json
import math
import os
import re
import socket
import tempfile
import unittest

import gsd_harness as h

_MODELS = {}


def model(kind="lap", small=True, inline=True, gaps=10, extra=None):
    """Generate (once per process) a model; returns (json path, gaps path)."""
    key = (kind, small, inline, gaps, tuple(extra or ()))
    if key not in _MODELS:
        os.makedirs(h.TMP, exist_ok=True)
        out = tempfile.mkdtemp(prefix="model-%s-" % kind, dir=h.TMP)
        _MODELS[key] = h.gen_model(out, kind=kind, small=small, inline=inline, gaps=gaps,
                                   extra=extra)
    return _MODELS[key]


def gaps_rows(npy_path):
    """The gap cloud of a generated model as a list of rows."""
    shape, flat = h.read_npy(npy_path)
    k, m = shape
    return [flat[i * m:(i + 1) * m] for i in range(k)]


def npy_bytes(rows):
    path = os.path.join(tempfile.mkdtemp(dir=h.TMP), "g.npy")
    h.write_npy(path, rows)
    with open(path, "rb") as f:
        return f.read()


def upload_json(d, path, wait=True):
    with open(path, "rb") as f:
        body = f.read()
    return d.post("/v1/assemblies" + ("?wait=1" if wait else ""), body,
                  headers={"Content-Type": "application/json"})


def upload_multipart(d, json_path, wait=True):
    """The model JSON as part "model" plus every block file it references."""
    with open(json_path, "rb") as f:
        text = f.read()
    base = os.path.dirname(json_path)
    names = sorted(set(re.findall(rb'"([A-Za-z0-9_.-]+\.npy)"', text)))
    fields = [("model", None, text)]
    for n in names:
        with open(os.path.join(base, n.decode()), "rb") as f:
            fields.append(("file", n.decode(), f.read()))
    ct, body = h.multipart(fields)
    return d.post("/v1/assemblies" + ("?wait=1" if wait else ""), body,
                  headers={"Content-Type": ct})


def metric(d, name, labels=None):
    """The value of one Prometheus sample (labels: exact label string)."""
    text = d.get("/metrics").body.decode()
    want = name + ("{%s}" % labels if labels else "")
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        parts = line.rsplit(" ", 1)
        if len(parts) == 2 and parts[0] == want:
            return float(parts[1])
    raise AssertionError("no metric %s in:\n%s" % (want, text))


def max_diff(a, b):
    assert len(a) == len(b), (len(a), len(b))
    return max((abs(x - y) for x, y in zip(a, b)), default=0.0)


def p95(values):
    """Nearest-rank 95th percentile (the daemon's rule)."""
    v = sorted(values)
    i = int(math.ceil(0.95 * len(v))) - 1
    return v[max(0, min(i, len(v) - 1))]


class DaemonCase(unittest.TestCase):
    """One daemon per class (workers, daemon_extra, or daemon_options() for
    more), prepared by the class's prepare() (the daemon is removed if that
    fails) and removed after the class (Daemon.cleanup: it fails on an
    exit code other than 0 or a sanitizer report in the log). A class with files of its own makes them
    before calling this setUpClass and removes them after this
    tearDownClass."""

    workers = 2
    daemon_extra = None

    @classmethod
    def daemon_options(cls):
        """The keyword arguments of the class's gsd_harness.Daemon."""
        return {"workers": cls.workers, "extra": cls.daemon_extra}

    @classmethod
    def prepare(cls):
        pass

    @classmethod
    def setUpClass(cls):
        cls.d = h.Daemon(**cls.daemon_options()).start()
        try:
            cls.prepare()
        except Exception:
            cls.d.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.d.cleanup()


def raw_connect(d, timeout=5.0):
    """A plain socket to daemon d, for requests no HTTP client would send."""
    host, port = d.url[len("http://"):].split(":")
    return socket.create_connection((host, int(port)), timeout=timeout)


def read_answer(s, timeout=5.0, mark_timeout=False):
    """Read from s until the server closes it, or `timeout` seconds pass with
    nothing more (then b"<<timeout>>" is appended if mark_timeout); a reset
    ends the answer too."""
    s.settimeout(timeout)
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except socket.timeout:
        if mark_timeout:
            out += b"<<timeout>>"
    except OSError:
        pass
    return out


def raw_request(d, data, timeout=5.0, idle=None, mark_timeout=False):
    """Send raw bytes to d; the answer read_answer gets (waiting `idle`
    seconds for more, default `timeout`)."""
    s = raw_connect(d, timeout)
    try:
        s.sendall(data)
        return read_answer(s, idle if idle is not None else timeout, mark_timeout)
    finally:
        s.close()


def status_of(answer):
    """The status code of a raw answer, None if it is not HTTP."""
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.") else None


class TokenFileMixin:
    """Before a DaemonCase in the bases: its daemon runs with --token-file,
    a file (with a comment line) granting READ the read scope and WRITE the
    write scope."""

    READ, WRITE = "r" * 20 + "-read-token", "w" * 20 + "-write-token"

    @classmethod
    def setUpClass(cls):
        os.makedirs(h.TMP, exist_ok=True)
        fd, cls.token_path = tempfile.mkstemp(dir=h.TMP, suffix=".tokens")
        os.write(fd, ("# scopes\nread %s\nwrite %s\n" % (cls.READ, cls.WRITE)).encode())
        os.close(fd)
        cls.daemon_extra = ["--token-file", cls.token_path]
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            os.unlink(cls.token_path)


class ApiCase(DaemonCase):
    """One daemon per class with the small inline lap model uploaded (ready)."""

    @classmethod
    def prepare(cls):
        cls.model_json, cls.gaps_npy = model("lap", small=True, inline=True, gaps=40)
        cls.G = gaps_rows(cls.gaps_npy)
        r = upload_json(cls.d, cls.model_json)
        assert r.status == 201, (r.status, r.body)
        cls.asm = r.json()
        cls.aid = cls.asm["id"]
        cls.m = cls.asm["m"]

    # ---- helpers ----
    def solve(self, g, status=200, d=None, **opts):
        body = dict(opts)
        body["g"] = g
        r = (d or self.d).post("/v1/assemblies/%s/solve" % self.aid, body)
        self.assertEqual(r.status, status, r.body[:400])
        return r.json()

    def cloud(self, rows, d=None, aid=None, **opts):
        body = dict(opts)
        body["gaps"] = rows
        r = (d or self.d).post("/v1/assemblies/%s/clouds" % (aid or self.aid), body)
        self.assertEqual(r.status, 202, r.body[:400])
        return r.json()

    def all_results(self, job_id, fields="w,lambda", d=None, limit=1000):
        out, off = [], 0
        while off is not None:
            r = (d or self.d).get("/v1/jobs/%s/results?offset=%d&limit=%d&fields=%s"
                                  % (job_id, off, limit, fields))
            self.assertEqual(r.status, 200, r.body[:400])
            page = r.json()
            out += page["results"]
            off = page["next_offset"]
        return out

    def assert_error(self, r, status, field=None, code=None):
        """r is an error response with the JSON error body; field/code checked if given."""
        self.assertEqual(r.status, status, r.body[:400])
        self.assertTrue(r.headers.get("Content-Type", "").startswith("application/json"),
                        r.headers)
        body = json.loads(r.body.decode())
        self.assertEqual(set(body), {"error"}, body)
        err = body["error"]
        self.assertEqual(set(err), {"code", "message", "field"}, err)
        self.assertIsInstance(err["message"], str)
        self.assertTrue(err["message"], err)
        if field is not None:
            self.assertEqual(err["field"], field, err)
        if code is not None:
            self.assertEqual(err["code"], code, err)
        return err

    def assert_close(self, a, b, tol=1e-7, what=""):
        self.assertLessEqual(max_diff(a, b), tol, what)

    def assert_complementary(self, res, g=None, tol=1e-7):
        """w >= 0, lambda >= 0, w . lambda = 0; contact/n_act/max_residual consistent."""
        w, lam = res["w"], res["lambda"]
        self.assertEqual(len(w), self.m)
        self.assertEqual(len(lam), self.m)
        self.assertGreaterEqual(min(w), -tol)
        self.assertGreaterEqual(min(lam), 0.0)
        scale = max(1.0, max(lam))
        for wi, li in zip(w, lam):
            self.assertLessEqual(abs(wi * li), tol * scale)
        self.assertEqual(res["contact"], [k for k in range(self.m) if lam[k] != 0.0])
        self.assertEqual(res["n_act"], len(res["contact"]))
        self.assertAlmostEqual(res["max_residual"], max(0.0, max(w)), delta=1e-15)
        self.assertTrue(res["kkt"]["pass"], res["kkt"])
