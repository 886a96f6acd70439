"""gsd_harness -- start a real gapsimd on a loopback port for integration tests.

Shared by every test under tests/integration (and the client tests): one
Daemon per test class or test, each with its own data directory under
GS_TEST_TMP, on a free port chosen by the kernel (--port 0; the daemon prints
the URL it bound). Helpers for HTTP calls with the standard library only, and
for generating models with gapsim-gen.

Environment (set by ctest, see tests/CMakeLists.txt):
  GS_BIN_DIR    build directory holding gapsimd and gapsim-gen
  GS_TEST_TMP   scratch directory
  GS_SOURCE_DIR source tree (clients/, tests/)
"""
import json
import os
import re
import shutil
import signal
import stat
import ssl
import struct
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

BIN_DIR = os.environ.get("GS_BIN_DIR", os.path.join(os.path.dirname(__file__), "../../build"))
TMP = os.environ.get("GS_TEST_TMP", tempfile.gettempdir())
SOURCE_DIR = os.environ.get("GS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "../.."))


def binary(name):
    path = os.path.join(BIN_DIR, name)
    if not os.path.exists(path):
        raise RuntimeError("missing %s (build it first)" % path)
    return path


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body.decode("utf-8"))


SANITIZER_KEYS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                  "WARNING: ThreadSanitizer")


class Daemon:
    """A gapsimd process. data_dir persists across restart()/kill9().
    Every stop but kill9() is checked: restart() and cleanup() fail (assert)
    when the daemon exited non-zero, and cleanup() when its log (appended to
    by every run on this data directory) holds a sanitizer report."""

    def __init__(self, data_dir=None, workers=2, extra=None, log_level=1, exe=None, cafile=None,
                 env=None):
        os.makedirs(TMP, exist_ok=True)
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="gsd-", dir=TMP)
        self.workers = workers
        self.extra = list(extra or [])
        self.log_level = log_level
        self.exe = exe  # another gapsimd binary (default: the one of GS_BIN_DIR)
        self.env = env  # variables to set for the daemon, over this process's
        self.start_line = None
        # https (gapsimd --tls-cert): the certificate to trust
        self.context = ssl.create_default_context(cafile=cafile) if cafile else None
        self.proc = None
        self.url = None
        self.log_path = os.path.join(self.data_dir, "..", os.path.basename(self.data_dir) + ".log")

    def start(self, timeout=30):
        cmd = [self.exe or binary("gapsimd"), "--port", "0", "--data-dir", self.data_dir,
               "--workers", str(self.workers), "--log-level", str(self.log_level)] + self.extra
        self.log = open(self.log_path, "ab")
        env = dict(os.environ, **self.env) if self.env else None
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.log, env=env)
        deadline = time.time() + timeout
        line = b""
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            m = re.search(rb"listening on (https?://[0-9.]+:[0-9]+)", line)
            if m:
                self.url = m.group(1).decode()
                self.start_line = line.decode(errors="replace").strip()
                return self
        self.stop()
        raise RuntimeError("gapsimd did not start: %r (log %s)" % (line, self.log_path))

    def stop(self, timeout=30):
        """SIGTERM and wait; returns the exit code."""
        if not self.proc:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.proc.stdout.close()
        self.log.close()
        self.proc = None
        return rc

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.proc.stdout.close()
        self.log.close()
        self.proc = None

    def restart(self):
        rc = self.stop()
        assert rc in (0, None), "gapsimd exited with %r (log %s)" % (rc, self.log_path)
        return self.start()

    def sanitizer_report(self):
        """The first lines of an ASan/UBSan/LSan/TSan report in the log, or None."""
        try:
            with open(self.log_path, "rb") as f:
                text = f.read().decode(errors="replace")
        except OSError:
            return None
        for key in SANITIZER_KEYS:
            i = text.find(key)
            if i >= 0:
                return "%s: %s" % (self.log_path, text[max(0, i - 200):i + 2000])
        return None

    def cleanup(self):
        """Stop (SIGTERM), remove the data directory, then fail if the
        daemon exited non-zero or its log holds a sanitizer report (None:
        it was not running, e.g. after kill9())."""
        rc = self.stop()
        report = self.sanitizer_report()
        shutil.rmtree(self.data_dir, ignore_errors=True)
        assert report is None, report
        assert rc in (0, None), "gapsimd exited with %r (log %s)" % (rc, self.log_path)

    # ---- HTTP ----
    def request(self, method, path, body=None, headers=None, timeout=120):
        data = body
        hdrs = dict(headers or {})
        if body is not None and not isinstance(body, (bytes, bytearray)):
            data = json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(req, timeout=timeout, context=self.context) as r:
                return Response(r.status, dict(r.headers), r.read())
        except urllib.error.HTTPError as e:
            return Response(e.code, dict(e.headers), e.read())

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, body, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)

    def wait_job(self, job_id, timeout=300):
        deadline = time.time() + timeout
        while time.time() < deadline:
            # held by the daemon until the job ends (or 10 s pass)
            span = min(10.0, max(0.05, deadline - time.time()))
            j = self.get("/v1/jobs/%s?wait=%.2f" % (job_id, span), timeout=span + 120).json()
            if j["status"] in ("done", "cancelled", "failed"):
                return j
        raise RuntimeError("job %s did not finish" % job_id)

    def wait_assembly(self, assembly_id, until, timeout=30, poll=0.02):
        """The assembly once until(assembly) holds, or as it is at the
        timeout: the caller checks what it waited for."""
        deadline = time.time() + timeout
        a = self.get("/v1/assemblies/" + assembly_id).json()
        while not until(a) and time.time() < deadline:
            time.sleep(poll)
            a = self.get("/v1/assemblies/" + assembly_id).json()
        return a

    def wait_factors_saved(self, assembly_id, timeout=30, poll=0.02):
        """wait_assembly until the factors are saved (a task that runs after
        "ready", when the workers are idle)."""
        return self.wait_assembly(assembly_id, lambda a: a.get("factors_saved"), timeout, poll)


def sanitized(path):
    """True if the executable was built with AddressSanitizer (its allocator
    keeps freed memory in quarantine) or ThreadSanitizer (its shadow memory
    and history): memory figures mean nothing there."""
    with open(path, "rb") as f:
        data = f.read()
    return b"__asan_init" in data or b"__tsan_init" in data


def release_binary(name):
    """The Release build's executable (SOURCE_DIR/build, which scripts/test
    builds next to the sanitized one), or None."""
    path = os.path.join(SOURCE_DIR, "build", name)
    return path if os.path.exists(path) and not sanitized(path) else None


def char_device(case, path, minor):
    """A character device of a test's own at path (major 1: minor 3 discards
    like /dev/null, 7 is full like /dev/full), for outputs that must be
    written into, never replaced; skips the test case where mknod is not
    allowed (it needs root)."""
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
    except OSError as e:
        case.skipTest("mknod needs root: %s" % e)
    return path


def loop_model():
    """Three one-DOF parts a, b, c (K 1, 2, 4 N/mm, loads f = (1, 0, -1))
    whose pairs close a loop (x0 - x1, x1 - x2, x2 - x0: their columns of A
    sum to zero, so Q is singular and weights d = (1, 1, 1, 0) prove gaps
    summing to less than 0 around the loop infeasible) and a jig pair on
    part a; nodes at x = 0, 10, 20 mm. The model of the tests of
    linearly dependent pairs."""
    return {"format": "gapsim-model", "version": 1, "name": "loop",
            "parts": [{"name": "a", "ndof": 1, "K": [[1]]},
                      {"name": "b", "ndof": 1, "K": [[2]]},
                      {"name": "c", "ndof": 1, "K": [[4]]}],
            "nodes": {"part": [0, 1, 2], "dof": [0, 0, 0],
                      "x": [0, 10, 20], "y": [0, 0, 0], "z": [0, 0, 0]},
            "pairs": {"i": [0, 1, 2, 0], "j": [1, 2, 0, -1],
                      "ci": [1, 1, 1, 1], "cj": [-1, -1, -1, 0]},
            "f": [1, 0, -1]}


def gen_model(out_dir, kind="lap", small=True, inline=False, gaps=10, name=None, extra=None):
    """Run gapsim-gen; returns (model json path, gaps .npy path)."""
    name = name or kind
    cmd = [binary("gapsim-gen"), "--kind", kind, "--out", out_dir, "--name", name,
           "--gaps", str(gaps)] + (["--small"] if small else []) + (["--inline"] if inline else [])
    cmd += list(extra or [])
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return os.path.join(out_dir, name + ".json"), os.path.join(out_dir, name + ".gaps.npy")


def read_npy(path_or_bytes):
    """Minimal float64 .npy reader: returns (shape, flat list) without numpy."""
    if isinstance(path_or_bytes, (bytes, bytearray)):
        data = path_or_bytes
    else:
        with open(path_or_bytes, "rb") as f:
            data = f.read()
    assert data[:6] == b"\x93NUMPY", "not an npy file"
    major = data[6]
    if major == 1:
        hl = struct.unpack("<H", data[8:10])[0]
        off = 10 + hl
    else:
        hl = struct.unpack("<I", data[8:12])[0]
        off = 12 + hl
    header = data[off - hl:off].decode("latin1")
    assert "'<f8'" in header and "'fortran_order': False" in header, header
    shape = tuple(int(x) for x in re.search(r"\(([^)]*)\)", header).group(1).split(",") if x.strip())
    n = 1
    for s in shape:
        n *= s
    values = list(struct.unpack("<%dd" % n, data[off:off + 8 * n]))
    return shape, values


def write_npy(path, rows):
    """Write a list of equal-length float lists as a C-order float64 .npy."""
    k, m = len(rows), len(rows[0])
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }" % (k, m)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        for r in rows:
            f.write(struct.pack("<%dd" % m, *r))
    return path


def multipart(fields):
    """fields: list of (name, filename or None, bytes). Returns (content_type, body)."""
    boundary = "gapsimBoundary%x" % int(time.time() * 1e6)
    out = bytearray()
    for name, filename, data in fields:
        out += b"--" + boundary.encode() + b"\r\n"
        disp = 'form-data; name="%s"' % name
        if filename:
            disp += '; filename="%s"' % filename
        out += ("Content-Disposition: %s\r\nContent-Type: application/octet-stream\r\n\r\n" % disp).encode()
        out += data + b"\r\n"
    out += b"--" + boundary.encode() + b"--\r\n"
    return "multipart/form-data; boundary=" + boundary, bytes(out)
