"""Python client (clients/python/gapsim) against a real gapsimd.

Every client method is called on small generated models and its answer is
compared with the raw HTTP answer (gsd_harness); error answers must raise
GapsimError with the daemon's status, code and field. The fastener
optimization example runs on a small model and must not worsen its objective
and must print the warm-start saving. Standard library only: the tests run
without numpy (the client's list path); the numpy path is tested when numpy
is importable.
"""
import io
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

import gsd_harness as h
from api_common import DaemonCase

CLIENT_DIR = os.path.join(h.SOURCE_DIR, "clients", "python")
sys.path.insert(0, CLIENT_DIR)

from gapsim import Client, GapsimError, Job, npy  # noqa: E402

EXAMPLE = os.path.join(CLIENT_DIR, "examples", "fastener_optimization.py")


def rows_of(path):
    shape, flat = h.read_npy(path)
    k, m = shape
    return [flat[i * m:(i + 1) * m] for i in range(k)]


def load_json(path):
    with open(path) as f:
        return json.load(f)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def as_list(x):
    """Client arrays as lists: ndarrays (numpy installed) or lists already."""
    return x.tolist() if hasattr(x, "tolist") else x


def plain(doc):
    """A client document with its ndarrays as lists (to compare with raw JSON)."""
    if isinstance(doc, dict):
        return {k: plain(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [plain(v) for v in doc]
    return as_list(doc)


PAIRS = ("mean", "std", "max", "p95", "share_above", "lambda_mean", "opened")


def max_abs_diff(a, b):
    a, b = as_list(a), as_list(b)
    fa = [v for r in a for v in r] if a and isinstance(a[0], list) else list(a)
    fb = [v for r in b for v in r] if b and isinstance(b[0], list) else list(b)
    assert len(fa) == len(fb), (len(fa), len(fb))
    return max((abs(x - y) for x, y in zip(fa, fb)), default=0.0)


class ClientTest(DaemonCase):
    @classmethod
    def prepare(cls):
        cls.dir = tempfile.mkdtemp(prefix="pyc-", dir=h.TMP)
        cls.model, cls.gaps_path = h.gen_model(cls.dir, kind="lap", small=True, gaps=8)
        cls.gaps = rows_of(cls.gaps_path)
        cls.c = Client(cls.d.url)
        cls.asm = cls.c.upload_assembly(cls.model)

    # ---- construction, transport ------------------------------------------------
    def test_default_url(self):
        old = os.environ.pop("GAPSIM_SERVER", None)
        try:
            self.assertEqual(Client().url, "http://127.0.0.1:8600")
            os.environ["GAPSIM_SERVER"] = self.d.url + "/"
            c = Client()
            self.assertEqual(c.url, self.d.url)
            self.assertEqual(c.health()["status"], "ok")
        finally:
            os.environ.pop("GAPSIM_SERVER", None)
            if old is not None:
                os.environ["GAPSIM_SERVER"] = old

    def test_connection_error(self):
        with self.assertRaises(GapsimError) as cm:
            Client("http://127.0.0.1:9", timeout=5).assemblies()
        self.assertIsNone(cm.exception.status)
        self.assertEqual(cm.exception.code, "connection")

    def test_package_has_no_required_dependencies(self):
        code = ("import sys; sys.modules['numpy'] = None; sys.path.insert(0, %r); "
                "import gapsim; print(gapsim.HAVE_NUMPY, gapsim.__version__)" % CLIENT_DIR)
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                             text=True).stdout
        self.assertEqual(out.split()[0], "False")

    # ---- assemblies ----------------------------------------------------------------
    def test_upload_multipart(self):
        a = self.asm
        model = load_json(self.model)
        self.assertEqual(a["status"], "ready")
        self.assertEqual(a["m"], len(model["pairs"]["i"]))
        self.assertEqual(a["n"], sum(p["ndof"] for p in model["parts"]))
        self.assertEqual(a["n_fasteners"], len(model["fasteners"]["pair"]))
        self.assertTrue(isinstance(model["parts"][0]["K"], str))  # really multipart
        # the same content again: the same assembly
        self.assertEqual(self.c.upload_assembly(self.model)["id"], a["id"])
        # GET equals the raw answer
        self.assertEqual(self.c.assembly(a["id"]), self.d.get("/v1/assemblies/" + a["id"]).json())
        self.assertEqual(self.c.assembly(a)["id"], a["id"])  # a dict works as reference
        ids = [x["id"] for x in self.c.assemblies()]
        self.assertIn(a["id"], ids)
        self.assertEqual(self.c.assemblies(), self.d.get("/v1/assemblies").json()["assemblies"])

    def test_upload_inline_dict_and_base_dir(self):
        d = tempfile.mkdtemp(prefix="pyc-inl-", dir=h.TMP)
        mp, _ = h.gen_model(d, kind="lap", small=True, gaps=2, inline=True, name="inl",
                            extra=["--fast-load", "450"])  # another model than the class's
        model = load_json(mp)
        a = self.c.upload_assembly(model)  # application/json
        self.assertEqual(a["status"], "ready")
        self.assertEqual(a["m"], len(model["pairs"]["i"]))
        # a dict that references files needs base_dir
        ref = load_json(self.model)
        b = self.c.upload_assembly(ref, base_dir=os.path.dirname(self.model))
        self.assertEqual(b["status"], "ready")
        self.assertEqual(b["m"], self.asm["m"])
        with self.assertRaises(GapsimError) as cm:
            self.c.upload_assembly(ref, base_dir=d)
        self.assertEqual((cm.exception.status, cm.exception.code), (None, "io_error"))

    def test_upload_files_named_by_objects(self):
        # "K": {"file": ..., "format": ...} is a file reference too
        d = tempfile.mkdtemp(prefix="pyc-obj-", dir=h.TMP)
        mp, _ = h.gen_model(d, kind="lap", small=True, gaps=2, name="uobj",
                            extra=["--uncondensed", "--matrix-format", "abaqus-coordinate"])
        doc = load_json(mp)
        self.assertEqual(doc["parts"][1]["K"]["format"], "abaqus-coordinate")
        a = self.c.upload_assembly(mp)
        self.assertEqual(a["status"], "ready")
        self.assertEqual((a["m"], a["n"]), (self.asm["m"], sum(p["ndof"] for p in doc["parts"])))
        b = self.c.upload_assembly(doc, base_dir=d)  # a dict: the same content
        self.assertEqual(b["id"], a["id"])
        self.c.delete_assembly(a["id"])

    def test_multipart_streams_files(self):
        # a referenced file is read in chunks while the request is written:
        # the body is byte for byte the one built in memory, its length the
        # Content-Length; a file that changes size meanwhile is an io_error
        from gapsim.transport import FilePart, multipart
        d = tempfile.mkdtemp(prefix="pyc-mp-", dir=h.TMP)
        path = os.path.join(d, "k.npy")
        data = bytes(range(256)) * (3 * FilePart.CHUNK // 256 + 7)
        with open(path, "wb") as f:
            f.write(data)
        ctype, body = multipart([("model", "model.json", b"{}"), ("file", "k.npy", FilePart(path))])
        raw = b"".join(bytes(c) for c in body)  # the file's chunks share one buffer
        boundary = ctype.split("boundary=")[1].encode()
        want = (b"--" + boundary + b'\r\nContent-Disposition: form-data; name="model"; '
                b'filename="model.json"\r\nContent-Type: application/json\r\n\r\n{}\r\n' +
                b"--" + boundary + b'\r\nContent-Disposition: form-data; name="file"; '
                b'filename="k.npy"\r\nContent-Type: application/octet-stream\r\n\r\n' + data +
                b"\r\n--" + boundary + b"--\r\n")
        self.assertEqual(raw, want)
        self.assertEqual(body.length, len(want))
        with open(path, "ab") as f:
            f.write(b"more")
        with self.assertRaises(GapsimError) as cm:
            b"".join(bytes(c) for c in body)
        self.assertEqual(cm.exception.code, "io_error")

    def test_client_side_failures_are_gapsim_errors(self):
        d = tempfile.mkdtemp(dir=h.TMP)
        bad = os.path.join(d, "bad.json")
        with open(bad, "w") as f:
            f.write("{not json")
        cases = [
            (lambda: self.c.upload_assembly(os.path.join(d, "missing.json")), "io_error"),
            (lambda: self.c.upload_assembly(bad), "bad_format"),
            (lambda: self.c.upload_assembly({"name": object()}), "invalid"),
            (lambda: self.c.upload_assembly([1]), "invalid"),  # not a path: not a TypeError
            (lambda: self.c.upload_assembly(42), "invalid"),
            (lambda: self.c.solve(None, [0.0]), "invalid"),
            (lambda: self.c.solve(self.asm, ["x"]), "invalid"),
            (lambda: self.c.submit_cloud(self.asm, [[1.0, 2.0], [3.0]]), "invalid"),
            (lambda: self.c.submit_cloud(self.asm, self.gaps, encoding="xml"), "invalid"),
            (lambda: self.c.submit_cloud(self.asm, "gaps.npy"), "invalid"),  # not a job id
            (lambda: self.c.export("j_0", "pdf"), "invalid"),
            (lambda: Client("http://127.0.0.1:1").health(), "connection"),
        ]
        for fn, code in cases:
            with self.assertRaises(GapsimError, msg=code) as cm:
                fn()
            self.assertEqual(cm.exception.code, code)
            self.assertIsNone(cm.exception.status)
            self.assertIsInstance(cm.exception, ValueError)  # code catching ValueError still works

    def test_upload_no_wait_then_wait_assembly(self):
        d = tempfile.mkdtemp(prefix="pyc-nw-", dir=h.TMP)
        mp, _ = h.gen_model(d, kind="sandwich", small=True, gaps=2, name="sw")
        a = self.c.upload_assembly(mp, wait=False)
        self.assertIn(a["status"], ("queued", "precomputing", "ready"))
        r = self.c.wait_assembly(a, timeout=120)
        self.assertEqual(r["status"], "ready")
        self.assertEqual(r["joint"], "sandwich")

    def test_upload_errors(self):
        model = load_json(self.model)
        bad = dict(model, format="not-gapsim")
        with self.assertRaises(GapsimError) as cm:
            self.c.upload_assembly(bad, base_dir=os.path.dirname(self.model))
        e = cm.exception
        raw = h.multipart([("model", "model.json", json.dumps(bad).encode())] +
                          [("file", p["K"], read_bytes(os.path.join(self.dir, p["K"])))
                           for p in model["parts"]])
        r = self.d.post("/v1/assemblies?wait=1", raw[1], headers={"Content-Type": raw[0]})
        self.assertEqual(e.status, r.status)
        self.assertEqual((e.code, e.field), (r.json()["error"]["code"], r.json()["error"]["field"]))
        self.assertEqual(e.field, "format")
        self.assertTrue(400 <= e.status < 500)
        # an inline model whose stiffness is not positive definite fails the precomputation
        d = tempfile.mkdtemp(prefix="pyc-spd-", dir=h.TMP)
        mp, _ = h.gen_model(d, kind="lap", small=True, gaps=1, inline=True, name="spd",
                            extra=["--fast-load", "350"])
        m2 = load_json(mp)
        K = m2["parts"][0]["K"]
        for i in range(len(K)):
            K[i][i] = -abs(K[i][i])
        with self.assertRaises(GapsimError) as cm:
            self.c.upload_assembly(m2)
        self.assertEqual(cm.exception.status, 422)
        self.assertEqual(cm.exception.code, "not_spd")
        self.assertEqual(cm.exception.field, "parts[0].K")
        # the same content again: the daemon answers 200 with the failed assembly; the
        # client raises the same error
        with self.assertRaises(GapsimError) as cm2:
            self.c.upload_assembly(m2)
        self.assertEqual((cm2.exception.status, cm2.exception.code, cm2.exception.field),
                         (422, "not_spd", "parts[0].K"))

    def test_geometry_and_delete(self):
        g = self.c.geometry(self.asm)
        self.assertEqual(plain(g), self.d.get("/v1/assemblies/%s/geometry" % self.asm["id"]).json())
        self.assertEqual(len(g["pairs"]["x"]), self.asm["m"])
        self.assertEqual(len(g["fasteners"]["pair"]), self.asm["n_fasteners"])
        d = tempfile.mkdtemp(prefix="pyc-del-", dir=h.TMP)
        mp, _ = h.gen_model(d, kind="lap", small=True, gaps=1, name="del",
                            extra=["--fast-load", "300"])  # not the class's model
        a = self.c.upload_assembly(mp)
        self.assertIsNone(self.c.delete_assembly(a["id"]))
        with self.assertRaises(GapsimError) as cm:
            self.c.assembly(a["id"])
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.field),
                         (404, "not_found", "id"))
        with self.assertRaises(GapsimError) as cm:
            self.c.delete_assembly("a_0000000000000000")
        self.assertEqual(cm.exception.status, 404)

    # ---- solves -----------------------------------------------------------------
    def test_solve_equals_raw(self):
        g = self.gaps[0]
        r = self.c.solve(self.asm, g, fasteners=[0, 2, 4], solver="gi")
        raw = self.d.post("/v1/assemblies/%s/solve" % self.asm["id"],
                          {"g": g, "fasteners": [0, 2, 4], "solver": "gi"}).json()
        self.assertEqual(r["status"], "optimal")
        self.assertTrue(r["kkt"]["pass"])
        self.assertEqual(len(r["w"]), self.asm["m"])
        self.assertEqual(raw["id"], r["id"])  # the raw call is answered from the cache
        self.assertTrue(raw["cached"])
        for key in ("w", "lambda", "contact", "n_act", "iterations", "max_residual", "status"):
            self.assertEqual(plain(r[key]), raw[key], key)
        self.assertAlmostEqual(max(r["w"]), r["max_residual"], places=12)
        # "return" picks the vectors; x has n entries
        r2 = self.c.solve(self.asm, g, fasteners=(0, 2, 4), solver="gi", **{"return": ["x"]})
        self.assertEqual(len(r2["x"]), self.asm["n"])
        self.assertNotIn("w", r2)

    def test_solve_warm_start_and_result(self):
        g = self.gaps[1]
        cold = self.c.solve(self.asm, g, fasteners=[1, 3, 5, 7])
        warm = self.c.solve(self.asm, g, fasteners=[1, 3, 5, 7, 8], warm_start=cold)
        self.assertTrue(warm["warm_start_used"])
        self.assertFalse(cold["warm_start_used"])
        ref = self.c.solve(self.asm, g, fasteners=[1, 3, 5, 7, 8], tol=1e-11)  # cold, not cached
        self.assertLess(max_abs_diff(warm["w"], ref["w"]), 1e-7)
        stored = self.c.result(warm["id"])
        self.assertEqual(plain(stored), self.d.get("/v1/results/" + warm["id"]).json())
        self.assertEqual(as_list(stored["w"]), as_list(warm["w"]))

    def test_solve_errors(self):
        g = self.gaps[0]
        cases = [
            ({"g": g[:-1]}, 422, "dimension_mismatch", "g"),
            ({"g": g, "solver": "magic"}, 422, "invalid", "solver"),
            ({"g": g, "fasteners": [0, 10 ** 6]}, 422, "out_of_range", "fasteners[1]"),
            ({"g": g, "fasteners": [1, 1]}, 422, "duplicate", "fasteners[1]"),
            ({"g": g, "tol": 2.0}, 422, "out_of_range", "tol"),
            ({"g": g, "warm_start": "r_0000000000000000"}, 422, "invalid", "warm_start"),
            ({"g": g, "bogus": 1}, 422, "invalid", "bogus"),
        ]
        for body, status, code, field in cases:
            opts = {k: v for k, v in body.items() if k != "g"}
            with self.assertRaises(GapsimError, msg=str(opts)) as cm:
                self.c.solve(self.asm, body["g"], **opts)
            raw = self.d.post("/v1/assemblies/%s/solve" % self.asm["id"], body)
            e = cm.exception
            err = raw.json()["error"]
            self.assertEqual((e.status, e.code, e.field, e.message),
                             (raw.status, err["code"], err["field"], err["message"]), str(opts))
            self.assertEqual(e.status, status, str(opts))
            self.assertEqual(e.field, field, str(opts))
            self.assertEqual(e.code, code, str(opts))
        with self.assertRaises(GapsimError) as cm:
            self.c.solve("a_0123456789abcdef", g)
        self.assertEqual((cm.exception.status, cm.exception.field), (404, "id"))

    # ---- clouds ------------------------------------------------------------------
    def test_cloud_results_summary_equal_raw(self):
        job = self.c.submit_cloud(self.asm, self.gaps, fasteners=[0, 3, 6, 9])
        self.assertIsInstance(job, Job)
        self.assertEqual(job.info["total"], len(self.gaps))
        info = job.wait()
        self.assertEqual(info["status"], "done")
        self.assertEqual(info["done"], len(self.gaps))
        self.assertTrue(job.done)
        self.assertEqual(info["options"]["fasteners"], [0, 3, 6, 9])
        # status equals the raw job document
        self.assertEqual(job.status(), self.d.get("/v1/jobs/" + job.id).json())
        # results: .npy download decoded == raw .npy == JSON pages
        w = as_list(self.c.results(job))
        lam = as_list(job.results("lambda"))
        raw = self.d.get("/v1/jobs/%s/results" % job.id, headers={"Accept": "application/x-npy"})
        shape, flat = h.read_npy(raw.body)
        self.assertEqual(shape, (len(self.gaps), self.asm["m"]))
        self.assertEqual([v for r in w for v in r], flat)
        pages = self.d.get("/v1/jobs/%s/results?fields=w,lambda&limit=1000" % job.id).json()
        by_index = {p["job_index"]: p for p in pages["results"]}
        for i in range(len(self.gaps)):
            self.assertEqual(list(w[i]), by_index[i]["w"])
            self.assertEqual(list(lam[i]), by_index[i]["lambda"])
        # each gap equals a single solve with the same options
        for i in (0, len(self.gaps) - 1):
            s = self.c.solve(self.asm, self.gaps[i], fasteners=[0, 3, 6, 9], tol=1e-11)
            self.assertLess(max_abs_diff(w[i], s["w"]), 1e-7)
        # summary equals the raw summary and the results
        s = self.c.summary(job)
        self.assertEqual(plain(s), self.d.get("/v1/jobs/%s/summary" % job.id).json())
        self.assertEqual(s["count"], len(self.gaps))
        gmax = sorted(max(r) for r in w)
        self.assertAlmostEqual(s["max_residual"]["max"], gmax[-1], places=12)
        self.assertAlmostEqual(s["max_residual"]["min"], gmax[0], places=12)
        # only the per-pair arrays asked for, the same values
        s3 = self.c.summary(job, pairs=["p95", "max"])
        self.assertEqual(sorted(s3["pairs"]), ["max", "p95", "p95_exact"])
        self.assertEqual(plain(s3["pairs"]["p95"]), plain(s["pairs"]["p95"]))
        self.assertEqual(plain(s3["max_residual"]), plain(s["max_residual"]))
        self.assertEqual(job.summary(pairs=[])["pairs"], {})
        self.assertEqual(job.summary(pairs="none")["pairs"], {})  # the API's word for []
        self.assertEqual(sorted(job.summary(pairs="opened")["pairs"]), ["opened"])
        with self.assertRaises(GapsimError) as cm:
            self.c.summary(job, pairs=["p99"])
        self.assertEqual(cm.exception.field, "pairs")
        s2 = job.summary(threshold=0.5, bins=5)
        self.assertEqual(len(s2["max_residual"]["histogram"]["counts"]), 5)
        self.assertAlmostEqual(s2["share_gaps_above"],
                               sum(v > 0.5 for v in gmax) / len(gmax), places=12)
        # paged metadata rows
        rows = list(self.c.result_rows(job, page=3))
        self.assertEqual(sorted(r["job_index"] for r in rows), list(range(len(self.gaps))))
        self.assertEqual(sum(r["iterations"] for r in rows), info["iterations"])
        self.assertNotIn("w", rows[0])
        # listings
        self.assertIn(job.id, [j["id"] for j in self.c.jobs(self.asm)])
        self.assertIn(job.id, [j["id"] for j in self.c.jobs(status="done")])
        self.assertEqual(self.c.job(job.id).info["id"], job.id)

    def test_cloud_json_equals_npy_encoding(self):
        a = self.c.submit_cloud(self.asm, self.gaps, encoding="npy", fastener_fraction=0.3,
                                solver="lemke")
        b = self.c.submit_cloud(self.asm, self.gaps, encoding="json", fastener_fraction=0.3,
                                solver="lemke", tol=1e-11)
        a.wait()
        b.wait()
        self.assertEqual(a.info["options"]["solver"], "lemke")
        self.assertEqual(a.info["options"]["fastener_fraction"], 0.3)
        self.assertLess(max_abs_diff(a.results(), b.results()), 1e-7)
        # cache=False (a query string's 0, a JSON false): every gap solved by npm,
        # none copied from the lemke clouds above
        for enc in ("npy", "json"):
            n = self.c.submit_cloud(self.asm, self.gaps, encoding=enc, fastener_fraction=0.3,
                                    solver="npm", cache=False)
            n.wait()
            self.assertIs(n.info["options"]["cache"], False)
            self.assertEqual({r["solver"] for r in self.c.result_rows(n)}, {"npm"})
            self.assertLess(max_abs_diff(a.results(), n.results()), 1e-7)
        # one row as a flat list is a cloud of one gap
        one = self.c.submit_cloud(self.asm, self.gaps[2], fasteners="all")
        self.assertEqual(one.wait()["total"], 1)

    def test_generated_cloud_is_gapsim_gen_s(self):
        # the server's generator is gapsim-gen's: seed 1 (gen_model's) gives the same gaps, bitwise
        job = self.c.generate_cloud(self.asm, len(self.gaps), seed=1, label="generated",
                                    fastener_fraction=0.5)
        info = job.wait()
        self.assertEqual(info["options"]["generate"], {"count": len(self.gaps), "seed": 1})
        self.assertEqual(info["options"]["label"], "generated")
        self.assertEqual(as_list(self.c.job_gaps(job)), self.gaps)
        self.assertEqual(as_list(self.c.job_gaps(job, index=3)), self.gaps[3])
        # and the results are those of the same gaps uploaded
        up = self.c.submit_cloud(self.asm, self.gaps, fastener_fraction=0.5)
        up.wait()
        self.assertLess(max_abs_diff(job.results(), up.results()), 1e-9)
        # scatter: the same gaps as gapsim-gen --scatter on the same model
        sdir = tempfile.mkdtemp(prefix="scatter-", dir=h.TMP)
        _, sgaps = h.gen_model(sdir, kind="lap", small=True, gaps=6, extra=["--scatter", "0.2"])
        sj = self.c.generate_cloud(self.asm, 6, seed=1, scatter=0.2, chain="auto")
        sinfo = sj.wait()
        self.assertEqual(sinfo["options"]["generate"], {"count": 6, "seed": 1, "scatter": 0.2})
        self.assertEqual(sinfo["options"]["chain"], "auto")
        self.assertEqual(as_list(self.c.job_gaps(sj)), rows_of(sgaps))
        for body, field in (({"generate": {"count": 0}}, "generate.count"),
                            ({"generate": {"count": 2, "seed": -1}}, "generate.seed"),
                            ({"generate": {"count": 2, "scatter": 1.5}}, "generate.scatter"),
                            ({"generate": {"count": 2, "scatter": "x"}}, "generate.scatter"),
                            ({"generate": {"count": 2, "what": 1}}, "generate"),
                            ({"generate": {"count": 2}, "gaps": [[0.0] * self.asm["m"]]}, "generate"),
                            ({"generate": {"count": 2}, "label": "x" * 121}, "label")):
            r = self.d.post("/v1/assemblies/%s/clouds" % self.asm["id"], body)
            self.assertIn(r.status, (413, 422), body)
            self.assertEqual(r.json()["error"]["field"], field, body)
        with self.assertRaises(GapsimError) as cm:
            self.c.generate_cloud(self.asm, 10 ** 7)
        self.assertEqual((cm.exception.status, cm.exception.field), (413, "generate.count"))

    def test_cloud_warm_start(self):
        cold = self.c.submit_cloud(self.asm, self.gaps, fasteners=[1, 3, 5, 7, 9])
        cold.wait()
        warm = self.c.submit_cloud(self.asm, self.gaps, fasteners=[1, 3, 5, 7, 8],
                                   warm_start=cold)
        info = warm.wait()
        self.assertEqual(info["options"]["warm_start"], cold.id)
        self.assertEqual(warm.summary()["warm_started"], len(self.gaps))
        ref = self.c.submit_cloud(self.asm, self.gaps, fasteners=[1, 3, 5, 7, 8], tol=1e-11)
        ref.wait()
        self.assertLess(max_abs_diff(warm.results(), ref.results()), 1e-7)
        # a warm start with another number of gaps is refused
        with self.assertRaises(GapsimError) as cm:
            self.c.submit_cloud(self.asm, self.gaps[:3], warm_start=cold.id)
        self.assertEqual((cm.exception.status, cm.exception.field), (422, "warm_start"))
        # the cold job's gaps (a Job or its id instead of the array): the same
        # answers as the uploaded cloud, nothing sent but the id
        again = self.c.submit_cloud(self.asm, cold, fasteners=[1, 3, 5, 7, 8], warm_start=cold)
        self.assertEqual(again.wait()["options"]["gaps_from"], cold.id)
        self.assertLess(max_abs_diff(again.results(), ref.results()), 1e-7)
        self.assertEqual(self.c.submit_cloud(self.asm, cold.id).wait()["total"], len(self.gaps))
        with self.assertRaises(GapsimError) as cm:
            self.c.submit_cloud(self.asm, "j_0000000000000000")
        self.assertEqual((cm.exception.status, cm.exception.field), (422, "gaps_from"))

    def test_cloud_errors(self):
        m = self.asm["m"]
        cases = [
            ({"gaps": [[0.0] * (m - 1)]}, "json", 422, "dimension_mismatch"),
            ({"gaps": [[0.0] * m], "fasteners": [99]}, "json", 422, "out_of_range"),
            ({"gaps": [[0.0] * m], "fasteners": [99]}, "npy", 422, "out_of_range"),
            ({"gaps": [[0.0] * m], "warm_start": "r_0123456789abcdef"}, "npy", 422, "invalid"),
        ]
        for body, enc, status, code in cases:
            opts = {k: v for k, v in body.items() if k != "gaps"}
            with self.assertRaises(GapsimError, msg=str(body)[:80]) as cm:
                self.c.submit_cloud(self.asm, body["gaps"], encoding=enc, **opts)
            self.assertEqual((cm.exception.status, cm.exception.code), (status, code))
            raw = self.d.post("/v1/assemblies/%s/clouds" % self.asm["id"], body).json()["error"]
            self.assertEqual(cm.exception.field, raw["field"])
        # NaN: refused before sending, with the daemon's code and field
        # (test_nonfinite_refused_before_sending)
        with self.assertRaises(GapsimError) as cm:
            self.c.submit_cloud(self.asm, [[float("nan")] + [0.0] * (m - 1)])
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.field),
                         (None, "not_finite", "gaps[0][0]"))
        with self.assertRaises(GapsimError) as cm:
            self.c.summary("j_0123456789abcdef")
        self.assertEqual((cm.exception.status, cm.exception.field), (404, "id"))
        job = self.c.submit_cloud(self.asm, self.gaps[:1])
        job.wait()
        with self.assertRaises(GapsimError) as cm:
            self.c.results(job, field="x")
        self.assertEqual((cm.exception.status, cm.exception.field), (422, "field"))
        with self.assertRaises(ValueError):
            self.c.submit_cloud(self.asm, self.gaps, encoding="csv")

    def test_wait_progress_and_cancel(self):
        job = self.c.submit_cloud(self.asm, self.gaps, fasteners="none")
        buf = io.StringIO()
        info = job.wait(progress=True, stream=buf)
        last = buf.getvalue().strip().splitlines()[-1]
        self.assertIn("%d/%d gaps" % (len(self.gaps), len(self.gaps)), last)
        self.assertIn("solves/s", last)
        self.assertIn("ETA", last)
        self.assertIn("[done]", last)
        self.assertEqual(info["status"], "done")
        # a finished job cannot be cancelled: 409 conflict on field id
        with self.assertRaises(GapsimError) as cm:
            job.cancel()
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.field),
                         (409, "conflict", "id"))
        # a long cloud is cancelled while it runs (or queued): 50,000
        # generated gaps, many seconds of interior-point solves on any machine
        # (20,000 JSON rows with Lemke had ended first on a fast one)
        job = self.c.generate_cloud(self.asm, 50000, seed=5, fasteners="all", solver="ipm",
                                    cache=False)
        doc = job.cancel()
        self.assertEqual((doc["id"], doc["status"]), (job.id, "cancelled"))
        final = job.wait(timeout=120)
        self.assertEqual(final["status"], "cancelled")
        self.assertLess(final["done"], final["total"])

    def test_wait_holds_requests_at_the_daemon(self):
        """Job.wait asks the daemon to hold each request until the job ends
        (?wait=5 s, the span shrunk to what a timeout leaves) and never sleeps
        while the daemon does: a stub client whose answers take the span on a
        fake clock."""
        import gapsim.client as gc
        clock = [1000.0]
        docs, asked, slept = [], [], []

        class Stub:
            def job_status(self, _id, wait=None):
                asked.append(wait)
                doc = docs.pop(0)
                clock[0] += 0.3 if doc["status"] == "done" else (wait or 0.0)
                return doc

        def sleep(s):
            slept.append(s)
            clock[0] += s
        real = (gc.time.time, gc.time.sleep)
        gc.time.time, gc.time.sleep = (lambda: clock[0]), sleep
        try:
            docs[:] = [{"status": "running", "eta_s": 3.0}, {"status": "running", "eta_s": 1.0},
                       {"status": "done", "eta_s": 0}]
            info = Job(Stub(), {"id": "j_0", "status": "queued"}).wait()
            self.assertEqual(info["status"], "done")
            self.assertEqual((asked, slept), ([5.0, 5.0, 5.0], []))
            # timeout 7 s: held 5 s, then for the 2 s left, then it gives up
            docs[:] = [{"status": "running", "eta_s": 9.0}] * 2
            asked[:] = []
            with self.assertRaises(GapsimError) as cm:
                Job(Stub(), {"id": "j_0", "status": "queued"}).wait(timeout=7)
            self.assertEqual(cm.exception.code, "timeout")
            self.assertEqual(asked, [5.0, 2.0])
        finally:
            gc.time.time, gc.time.sleep = real

    def test_wait_sleeps_until_the_eta(self):
        """A daemon that does not hold requests (an older one: the first
        answer comes back at once without the job's end): Job.wait polls at
        the daemon's ETA (20 ms to 1 s), and while there is none at the
        growing interval: a stub client and a recorded sleep."""
        docs = [{"status": "queued", "eta_s": None},
                {"status": "running", "eta_s": None},
                {"status": "running", "eta_s": 0.35},
                {"status": "running", "eta_s": 7.0},
                {"status": "running", "eta_s": 0.0},
                {"status": "done", "eta_s": 0}]

        asked = []

        class Stub:
            def job_status(self, _id, wait=None):
                asked.append(wait)
                return docs.pop(0)

        slept = []
        import gapsim.client as gc
        real = gc.time.sleep
        gc.time.sleep = slept.append
        try:
            info = Job(Stub(), {"id": "j_0", "status": "queued"}).wait(poll=0.1)
        finally:
            gc.time.sleep = real
        self.assertEqual(info["status"], "done")
        self.assertEqual(len(slept), 5)
        self.assertAlmostEqual(slept[0], 0.1)
        self.assertAlmostEqual(slept[1], 0.12)
        self.assertEqual(slept[2:], [0.35, 1.0, 0.02])
        self.assertEqual(asked, [5.0] + [None] * 5)  # asked to wait once, then polled

    def test_wait_assembly_backs_off(self):
        """wait_assembly polls after 20 ms, then 1.5 times later each time, at
        most poll apart: a stub client (Client without __init__) and a
        recorded sleep."""
        docs = [{"status": "queued"}] + [{"status": "precomputing"}] * 6 + \
            [{"status": "ready", "id": "a_0"}]
        stub = Client.__new__(Client)
        stub.assembly = lambda _id: docs.pop(0)
        slept = []
        import gapsim.client as gc
        real = gc.time.sleep
        gc.time.sleep = slept.append
        try:
            a = stub.wait_assembly("a_0", poll=0.1)
        finally:
            gc.time.sleep = real
        self.assertEqual(a["status"], "ready")
        want = [0.02, 0.03, 0.045, 0.0675, 0.1, 0.1, 0.1]
        self.assertEqual(len(slept), len(want))
        for got, w in zip(slept, want):
            self.assertAlmostEqual(got, w)


    # ---- what the client sends ---------------------------------------------------
    def test_nonfinite_refused_before_sending(self):
        """NaN and infinities cannot travel in JSON (json.dumps would write NaN,
        which the daemon refuses as invalid JSON): the client refuses them on
        every path before a request, with the code and field the daemon gives
        for one in a .npy cloud."""
        m = self.asm["m"]
        jobs_before = len(self.c.jobs(self.asm))
        g = list(self.gaps[0])
        g[3] = float("nan")
        with self.assertRaises(GapsimError) as cm:
            self.c.solve(self.asm, g)
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.field),
                         (None, "not_finite", "g[3]"))
        g[3] = float("-inf")
        with self.assertRaises(GapsimError) as cm:
            self.c.solve(self.asm, g, fasteners="all")
        self.assertEqual((cm.exception.code, cm.exception.field), ("not_finite", "g[3]"))
        rows = [list(r) for r in self.gaps[:3]]
        rows[1][5] = float("inf")
        raw = self.d.post("/v1/assemblies/%s/clouds" % self.asm["id"], npy.encode(rows),
                          headers={"Content-Type": "application/x-npy"})
        self.assertEqual(raw.status, 422)
        daemon = raw.json()["error"]
        for enc in ("npy", "json"):
            with self.assertRaises(GapsimError, msg=enc) as cm:
                self.c.submit_cloud(self.asm, rows, encoding=enc, fastener_fraction=0.5)
            e = cm.exception
            self.assertEqual((e.status, e.code, e.field), (None, "not_finite", "gaps[1][5]"), enc)
            self.assertEqual((e.code, e.field), (daemon["code"], daemon["field"]), enc)
            self.assertIn("gaps[1][5] is not a finite number", e.message)
        self.assertEqual(len(self.c.jobs(self.asm)), jobs_before)  # nothing was submitted
        # a model dict: the path of the value
        model = load_json(self.model)
        model["pairs"]["gap0"] = [0.0] * m
        model["pairs"]["gap0"][7] = float("nan")
        with self.assertRaises(GapsimError) as cm:
            self.c.upload_assembly(model, base_dir=os.path.dirname(self.model))
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.field),
                         (None, "not_finite", "pairs.gap0[7]"))
        # an option: refused as the daemon refuses ?tol=nan
        for enc in ("npy", "json"):
            with self.assertRaises(GapsimError) as cm:
                self.c.submit_cloud(self.asm, self.gaps[:1], encoding=enc, tol=float("nan"))
            self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.field),
                             (None, "invalid", "tol"), enc)

    def cloud_outcome(self, enc, gaps=None, **opts):
        """What a cloud submission with these options comes to: ("ok", options
        as the daemon understood them) or (status, code, field) of the error."""
        try:
            job = self.c.submit_cloud(self.asm, self.gaps[:2] if gaps is None else gaps,
                                      encoding=enc, **opts)
        except GapsimError as e:
            return (e.status, e.code, e.field)
        got = dict(job.info["options"])
        got.pop("installed", None)
        return ("ok", got)

    def test_options_mean_the_same_in_both_encodings(self):
        """One option encoder for the JSON body and the .npy query string: the
        same options give the same job or the same error either way, values are
        never rounded (fasteners=[1.7] is refused by the daemon, not read as 1),
        and what a query string would change (label=5 arriving as "5") is
        refused on both, as the daemon refuses it in JSON."""
        cases = [
            ({"return": ["w"]}, (422, "invalid", "return")),      # not a cloud option
            ({"label": ["a", "b"]}, (None, "invalid", "label")),  # was a bare ValueError
            ({"label": 5}, (None, "invalid", "label")),           # was "5" with npy
            ({"fasteners": [1.7, 2.2]}, (422, "out_of_range", "fasteners[0]")),  # was [1, 2]
            ({"fasteners": [1, 2.5]}, (422, "out_of_range", "fasteners[1]")),
            ({"fasteners": "0,3"}, (None, "invalid", "fasteners")),  # was a list with npy
            ({"fasteners": ["1"]}, (None, "out_of_range", "fasteners[0]")),
            ({"fixed_pairs": "all"}, (None, "invalid", "fixed_pairs")),
            ({"cache": 0}, (None, "invalid", "cache")),           # was accepted with npy
            ({"tol": "1e-9"}, (None, "invalid", "tol")),
            ({"solver": 5}, (None, "invalid", "solver")),
            ({"chain": True}, (None, "invalid", "chain")),
        ]
        for opts, want in cases:
            got = [self.cloud_outcome(enc, **opts) for enc in ("npy", "json")]
            self.assertEqual(got, [want, want], opts)
        # the client's own refusals are those of the daemon for the same JSON
        for opts in ({"label": 5}, {"fasteners": "0,3"}, {"cache": 0}, {"tol": "1e-9"}):
            body = dict(opts, gaps=self.gaps[:1])
            raw = self.d.post("/v1/assemblies/%s/clouds" % self.asm["id"], body).json()["error"]
            with self.assertRaises(GapsimError) as cm:
                self.c.submit_cloud(self.asm, self.gaps[:1], **opts)
            self.assertEqual((cm.exception.code, cm.exception.field, cm.exception.message),
                             (raw["code"], raw["field"], raw["message"]), opts)
        # single solves: fasteners=[1.7] is not [1]
        with self.assertRaises(GapsimError) as cm:
            self.c.solve(self.asm, self.gaps[0], fasteners=[1.7, 2.2])
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.field),
                         (422, "out_of_range", "fasteners[0]"))
        # accepted options: the same options understood either way
        for opts in ({"fasteners": (3, 1), "fixed_pairs": [0, 1], "max_iter": 5000.0,
                      "label": "x,y", "cache": False, "tol": 1e-9},
                     {"fasteners": {4, 2}, "chain": "auto", "timeout_s": 60},
                     {"fastener_fraction": 0.3, "solver": "gi"}):
            a, b = (self.cloud_outcome(enc, **opts) for enc in ("npy", "json"))
            self.assertEqual(a[0], "ok", (opts, a))
            self.assertEqual(a, b, opts)
        self.assertEqual(a[1]["fastener_fraction"], 0.3)
        # an option a query string cannot carry: a GapsimError naming it, not a ValueError
        with self.assertRaises(GapsimError) as cm:
            self.c.submit_cloud(self.asm, self.gaps[:1], bogus={"a": 1})
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.field),
                         (None, "invalid", "bogus"))
        with self.assertRaises(GapsimError) as cm:
            self.c.submit_cloud(self.asm, self.gaps[:1], encoding="json", bogus={"a": 1})
        self.assertEqual((cm.exception.status, cm.exception.field), (422, "bogus"))

    def test_flat_row_is_a_cloud_of_one(self):
        """One flat row is a 1 x m cloud whatever the encoding: job_gaps and
        results are 1 x m (a 1-D .npy stored by the daemon included)."""
        m = self.asm["m"]
        for enc in ("npy", "json"):
            job = self.c.submit_cloud(self.asm, self.gaps[2], encoding=enc, fasteners="all")
            job.wait()
            self.assertEqual(as_list(self.c.job_gaps(job)), [self.gaps[2]], enc)
            w = as_list(job.results())
            self.assertEqual((len(w), len(w[0])), (1, m), enc)
        # a 1-D .npy body (curl --data-binary @g.npy): the daemon keeps it 1-D,
        # the client still answers 1 x m
        one = npy.encode(self.gaps[3])
        raw = self.d.post("/v1/assemblies/%s/clouds" % self.asm["id"], one,
                          headers={"Content-Type": "application/x-npy"})
        self.assertEqual(raw.status, 202, raw.body)
        self.assertEqual(h.read_npy(self.d.get("/v1/jobs/%s/gaps" % raw.json()["id"]).body)[0],
                         (m,))
        self.assertEqual(as_list(self.c.job_gaps(raw.json()["id"])), [self.gaps[3]])

    def test_wait_timeout_message(self):
        class Stub:
            def job_status(self, _id, wait=None):
                return {"id": "j_0", "status": "running", "eta_s": None}
        with self.assertRaises(GapsimError) as cm:
            Job(Stub(), {"id": "j_0", "status": "queued"}).wait(timeout=0.7, poll=0.05)
        self.assertEqual(cm.exception.code, "timeout")
        self.assertIn("not done after 0.7 s", cm.exception.message)

    def test_wait_assembly_timeout_message(self):
        """wait_assembly's timeout says it as Job.wait does: the timeout as passed."""
        stub = Client.__new__(Client)
        stub.assembly = lambda _id: {"id": "a_0", "status": "precomputing"}
        with self.assertRaises(GapsimError) as cm:
            stub.wait_assembly("a_0", timeout=0.05, poll=0.01)
        self.assertEqual((cm.exception.status, cm.exception.code), (None, "timeout"))
        self.assertIn("not done after 0.05 s", cm.exception.message)
        self.assertIn("a_0", cm.exception.message)

    # ---- npy codec -------------------------------------------------------------
    def test_npy_codec(self):
        rows = [[1.0, -2.5, 3e-300], [4.0, 5.0, float("inf")]]
        data = npy.encode(rows)
        path = os.path.join(self.dir, "codec.npy")
        with open(path, "wb") as f:
            f.write(data)
        self.assertEqual(h.read_npy(path), ((2, 3), [v for r in rows for v in r]))
        self.assertEqual(as_list(npy.decode(data)), rows)
        self.assertEqual(len(npy.encode([1.0, 2.0])) % 64, 16 % 64)  # header aligned to 64
        self.assertEqual(as_list(npy.decode(npy.encode([1.0, 2.0]))), [1.0, 2.0])
        # Fortran order and big-endian files (written by hand)
        import struct
        hdr = "{'descr': '>f8', 'fortran_order': True, 'shape': (2, 3), }"
        hdr += " " * (64 - (10 + len(hdr) + 1) % 64) + "\n"
        raw = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode()
        raw += struct.pack(">6d", 1, 4, 2, 5, 3, 6)  # column-major
        self.assertEqual(as_list(npy.decode(raw)), [[1, 2, 3], [4, 5, 6]])
        with self.assertRaises(ValueError):
            npy.decode(b"not an npy file")
        with self.assertRaises(ValueError):
            npy.encode([[1.0, 2.0], [3.0]])

    @unittest.skipUnless(npy.HAVE_NUMPY, "numpy not installed")
    def test_numpy_path(self):  # pragma: no cover - only where numpy exists
        import numpy as np
        G = np.array(self.gaps)
        job = self.c.submit_cloud(self.asm, G, fasteners=[0, 1])
        job.wait()
        w = job.results()
        self.assertIsInstance(w, np.ndarray)
        self.assertEqual(w.shape, G.shape)
        r = self.c.solve(self.asm, G[0], fasteners=np.array([0, 1]))
        for k in ("w", "lambda", "contact"):
            self.assertIsInstance(r[k], np.ndarray, k)
        self.assertEqual(r["contact"].dtype.kind, "i")
        self.assertLess(np.max(np.abs(r["w"] - w[0])), 1e-7)
        self.assertIsInstance(self.c.result(r["id"])["lambda"], np.ndarray)
        s = self.c.summary(job)
        for k in ("mean", "std", "max", "p95", "share_above", "lambda_mean", "opened"):
            self.assertIsInstance(s["pairs"][k], np.ndarray, k)
            self.assertEqual(s["pairs"][k].shape, (G.shape[1],), k)
        self.assertEqual(s["pairs"]["max"].tolist(), np.maximum(w, 0).max(axis=0).tolist())
        geo = self.c.geometry(self.asm)
        for k in ("x", "y", "z", "part_i"):
            self.assertIsInstance(geo["pairs"][k], np.ndarray, k)
        self.assertIsInstance(geo["fasteners"]["pair"], np.ndarray)
        rows = list(self.c.result_rows(job, fields="w"))
        self.assertIsInstance(rows[0]["w"], np.ndarray)
        # a model dict with numpy arrays is accepted (the same content: the same assembly)
        d = tempfile.mkdtemp(prefix="pyc-np-", dir=h.TMP)
        mp, _ = h.gen_model(d, kind="lap", small=True, gaps=1, inline=True, name="np",
                            extra=["--fast-load", "470"])
        plain = self.c.upload_assembly(load_json(mp))
        model = load_json(mp)
        converted = 0
        for part in model["parts"]:
            if isinstance(part.get("K"), list):
                part["K"] = np.array(part["K"])
                converted += 1
        self.assertGreater(converted, 0)
        a = self.c.upload_assembly(model)
        self.assertEqual((a["id"], a["content_hash"]), (plain["id"], plain["content_hash"]))


    @unittest.skipUnless(npy.HAVE_NUMPY, "numpy not installed")
    def test_numpy_types_by_field(self):  # pragma: no cover - only where numpy exists
        """The dtype of every array is that of its field, not of its values:
        an all-zero w is float, an empty contact list int, integer coordinates
        float, a fully closed cloud's statistics float."""
        import numpy as np
        m = self.asm["m"]
        f8, i8 = np.dtype(np.float64), np.dtype(np.int64)
        for g, opts in ((np.zeros(m), {"fasteners": "none"}),   # w, lambda all 0
                        (np.full(m, 5.0), {}),                  # nothing in contact
                        (np.zeros(m), {"return": ["w", "lambda", "x"]})):
            r = self.c.solve(self.asm, g, **opts)
            for k, want in (("w", f8), ("lambda", f8), ("x", f8), ("contact", i8)):
                if k in r:
                    self.assertEqual(r[k].dtype, want, (k, opts))
            self.assertEqual(self.c.result(r["id"])["w"].dtype, f8)
        self.assertEqual(r["x"].dtype, f8)
        self.assertEqual(self.c.solve(self.asm, np.full(m, 5.0))["contact"].shape, (0,))
        geo = self.c.geometry(self.asm)  # the small lap's coordinates are whole mm
        for k, want in (("x", f8), ("y", f8), ("z", f8), ("fixed", i8), ("part_i", i8),
                        ("part_j", i8)):
            self.assertEqual(geo["pairs"][k].dtype, want, k)
        self.assertEqual((geo["fasteners"]["pair"].dtype, geo["fasteners"]["load"].dtype),
                         (i8, f8))
        job = self.c.submit_cloud(self.asm, np.zeros((2, m)), fasteners="none")  # all closed
        job.wait()
        s = self.c.summary(job)
        for k in PAIRS:
            self.assertEqual(s["pairs"][k].dtype, f8, k)
        self.assertEqual(self.c.job_gaps(job, index=0).dtype, f8)
        rows = list(self.c.result_rows(job, fields="w,lambda"))
        self.assertEqual((rows[0]["w"].dtype, rows[0]["contact"].dtype), (f8, i8))
        # numpy values as options: the same job either way, the values unchanged
        G = np.array(self.gaps)
        opts = {"cache": np.False_, "label": np.str_("np"), "fasteners": np.array([3, 1]),
                "tol": np.float64(1e-9), "max_iter": np.int64(5000)}
        a, b = (self.cloud_outcome(enc, gaps=G[:2], **opts) for enc in ("npy", "json"))
        self.assertEqual(a, b)
        self.assertEqual(a[0], "ok", a)
        self.assertEqual((a[1]["cache"], a[1]["label"], a[1]["fasteners"], a[1]["max_iter"]),
                         (False, "np", [3, 1], 5000))
        with self.assertRaises(GapsimError) as cm:
            self.c.submit_cloud(self.asm, G[:2], fasteners=np.array([1.7, 2.0]))
        self.assertEqual((cm.exception.status, cm.exception.field), (422, "fasteners[0]"))
        # NaN in an ndarray: refused before sending (npy and JSON alike)
        bad = G[:3].copy()
        bad[2, 4] = np.nan
        for enc in ("npy", "json"):
            with self.assertRaises(GapsimError) as cm:
                self.c.submit_cloud(self.asm, bad, encoding=enc)
            self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.field),
                             (None, "not_finite", "gaps[2][4]"), enc)
        with self.assertRaises(GapsimError) as cm:
            self.c.solve(self.asm, bad[2])
        self.assertEqual((cm.exception.code, cm.exception.field), ("not_finite", "g[4]"))
        # a flat ndarray row is 1 x m
        job = self.c.submit_cloud(self.asm, G[0])
        job.wait()
        self.assertEqual(self.c.job_gaps(job).shape, (1, m))
        self.assertEqual(job.results().shape, (1, m))

    # ---- the example -----------------------------------------------------------
    def test_installed_list_is_fastener_fraction(self):
        # the example starts from the job's options.installed: that list is the
        # fastener_fraction pattern (same results, round(f n) candidates)
        n = self.asm["n_fasteners"]
        for f in (0.0, 0.3, 0.5, 1.0):
            a = self.c.submit_cloud(self.asm, self.gaps[:2], fastener_fraction=f)
            inst = a.info["options"]["installed"]
            b = self.c.submit_cloud(self.asm, self.gaps[:2], fasteners=inst)
            a.wait()
            b.wait()
            self.assertEqual(as_list(a.results()), as_list(b.results()), f)
            self.assertEqual(len(inst), int(math.floor(f * n + 0.5)))

    def test_example_improves(self):
        out_json = os.path.join(self.dir, "opt.json")
        env = dict(os.environ, GAPSIM_SERVER=self.d.url, PYTHONPATH=CLIENT_DIR)
        p = subprocess.run([sys.executable, EXAMPLE, "--model", self.model, "--gaps", "8",
                            "--max-steps", "3", "--moves", "3", "--json-out", out_json],
                           env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr + p.stdout)
        res = load_json(out_json)
        self.assertLessEqual(res["objective_best"], res["objective_start"])
        self.assertEqual(len(res["best"]), len(res["start"]))
        self.assertEqual(res["solves"], 8 * res["clouds"])
        self.assertLessEqual(res["clouds"], 1 + 3 * 3)
        self.assertIn("warm start saved", p.stdout)
        self.assertIn("p95 of the max residual gap: start", p.stdout)
        self.assertRegex(p.stdout, r"step 1: .*iterations/gap \(-?\d+% saved\)")
        self.assertGreater(res["cold_iterations"], 0)
        # the reported objectives are the daemon's summaries of those patterns
        job = self.c.submit_cloud(self.asm, self.gaps, fasteners=res["best"])
        job.wait()
        self.assertAlmostEqual(job.summary()["max_residual"]["p95"], res["objective_best"],
                               places=9)


    def test_example_refuses_bad_arguments(self):
        """Usage errors exit 2 with argparse's message, a missing or mismatched
        gap cloud exits 1 with a message: never a traceback, never a cloud of
        the wrong gaps."""
        env = dict(os.environ, GAPSIM_SERVER=self.d.url, PYTHONPATH=CLIENT_DIR)

        def run(*args):
            p = subprocess.run([sys.executable, EXAMPLE] + list(args), env=env,
                               capture_output=True, text=True, timeout=120)
            self.assertNotIn("Traceback", p.stderr, args)
            return p
        jobs_before = len(self.c.jobs(self.asm))
        # --assembly without --gaps-file: the default gaps are the default model's
        p = run("--assembly", self.asm["id"], "--gaps", "4", "--max-steps", "1")
        self.assertEqual(p.returncode, 2, p.stderr + p.stdout)
        self.assertIn("--gaps-file", p.stderr)
        for args, word in ((["--moves", "0"], "--moves"), (["--gaps", "0"], "--gaps"),
                           (["--start", "1,x"], "--start")):
            p = run("--model", self.model, "--max-steps", "1", *args)
            self.assertEqual(p.returncode, 2, (args, p.stderr + p.stdout))
            self.assertIn(word, p.stderr)
        # a model without its .gaps.npy next to it
        d = tempfile.mkdtemp(prefix="pyc-nogaps-", dir=h.TMP)
        mp, gp = h.gen_model(d, kind="lap", small=True, gaps=1, name="nogaps")
        os.remove(gp)
        p = run("--model", mp, "--max-steps", "1")
        self.assertEqual(p.returncode, 1, p.stderr + p.stdout)
        self.assertIn("cannot read the gap cloud", p.stderr)
        self.assertIn("nogaps.gaps.npy", p.stderr)
        # gaps of another width than the assembly's m
        narrow = h.write_npy(os.path.join(d, "narrow.npy"),
                             [r[:-1] for r in self.gaps[:2]])
        p = run("--assembly", self.asm["id"], "--gaps-file", narrow, "--max-steps", "1")
        self.assertEqual(p.returncode, 1, p.stderr + p.stdout)
        self.assertIn("m = %d" % self.asm["m"], p.stderr)
        self.assertEqual(len(self.c.jobs(self.asm)), jobs_before)  # no cloud submitted


if __name__ == "__main__":
    unittest.main()
