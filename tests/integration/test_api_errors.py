"""Every error status with its JSON body {"error": {"code", "message",
"field"}}: 400 malformed bodies, 404 unknown paths and ids, 405 wrong
methods, 409 conflicts, 413 limits (--max-body, --max-gaps), 415 content
types, 422 wrong values (dimensions, NaN, options, indices, warm starts).
A rejected request leaves nothing behind (no job, no assembly)."""
import http.client
import json
import os
import unittest
import urllib.parse

import gsd_harness as h
from api_common import ApiCase, model, npy_bytes, upload_json, upload_multipart


class ErrorTest(ApiCase):

    def count_jobs(self):
        return len(self.d.get("/v1/jobs").json()["jobs"])

    def count_assemblies(self):
        return len(self.d.get("/v1/assemblies").json()["assemblies"])

    def post_raw(self, path, body, ct="application/json", d=None):
        return (d or self.d).post(path, body, headers={"Content-Type": ct})

    # ---- 400 ----
    def test_400_malformed_json(self):
        sp = "/v1/assemblies/%s/solve" % self.aid
        cp = "/v1/assemblies/%s/clouds" % self.aid
        jobs0, asm0 = self.count_jobs(), self.count_assemblies()
        err = self.assert_error(self.post_raw(sp, b'{"g": [1, 2,'), 400, "body", "bad_format")
        self.assertIn("invalid JSON", err["message"])
        err = self.assert_error(self.post_raw(sp, b'{"g": [1]} {"x": 1}'), 400, "body")
        self.assertIn("after the JSON value", err["message"])
        self.assert_error(self.post_raw(sp, b'{"g": [1]}xyz'), 400, "body")
        self.assert_error(self.post_raw(sp, b'[1, 2, 3]'), 400, "body")
        self.assert_error(self.post_raw(sp, b'"text"'), 400, "body")
        self.assert_error(self.post_raw(cp, b'{"gaps": [[1, 2]'), 400, "body")
        self.assert_error(self.post_raw(cp, b'{"gaps": []} ]'), 400, "body")
        self.assert_error(self.post_raw("/v1/assemblies", b'{"parts": ['), 400)
        # no body at all
        self.assert_error(self.d.post(sp, b""), 400, "body")
        self.assert_error(self.d.post(cp, b""), 400, "body")
        self.assert_error(self.d.post("/v1/assemblies", b""), 400, "body")
        self.assertEqual((self.count_jobs(), self.count_assemblies()), (jobs0, asm0))

    # ---- 404 ----
    def test_404_unknown_path(self):
        for p in ("/nope", "/v1", "/v1/assemblies/%s/nope" % self.aid, "/v2/assemblies",
                  "/v1/jobs/j_0000000000000000/nope", "/healthz/x"):
            self.assert_error(self.d.get(p), 404, "", "not_found")

    def test_404_unknown_ids(self):
        ids = {"a": ("a_0123456789abcdef", "a_XYZ", "zzz", "a_" + "0" * 200, "j_0123456789abcdef"),
               "j": ("j_0123456789abcdef", "j_1", "x" * 300, "a_0123456789abcdef"),
               "r": ("r_0123456789abcdef", "r_!", "r_0123456789abcdeg")}
        for i in ids["a"]:
            q = urllib.parse.quote(i)
            self.assert_error(self.d.get("/v1/assemblies/" + q), 404, "id", "not_found")
            self.assert_error(self.d.delete("/v1/assemblies/" + q), 404, "id")
            self.assert_error(self.d.get("/v1/assemblies/%s/geometry" % q), 404, "id")
            self.assert_error(self.d.get("/v1/assemblies/%s/jobs" % q), 404, "id")
            self.assert_error(self.d.post("/v1/assemblies/%s/solve" % q, {"g": [0.0]}), 404, "id")
            self.assert_error(self.d.post("/v1/assemblies/%s/clouds" % q, {"gaps": [[0.0]]}),
                              404, "id")
        for i in ids["j"]:
            q = urllib.parse.quote(i)
            self.assert_error(self.d.get("/v1/jobs/" + q), 404, "id", "not_found")
            self.assert_error(self.d.delete("/v1/jobs/" + q), 404, "id")
            self.assert_error(self.d.get("/v1/jobs/%s/results" % q), 404, "id")
            self.assert_error(self.d.get("/v1/jobs/%s/results?format=npy" % q), 404, "id")
            self.assert_error(self.d.get("/v1/jobs/%s/summary" % q), 404, "id")
        for i in ids["r"]:
            self.assert_error(self.d.get("/v1/results/" + urllib.parse.quote(i)), 404, "id")

    # ---- 405 ----
    def test_405_wrong_method(self):
        for method, path in (("PUT", "/v1/assemblies"), ("DELETE", "/v1/assemblies"),
                             ("PATCH", "/v1/assemblies/" + self.aid),
                             ("GET", "/v1/assemblies/%s/solve" % self.aid),
                             ("DELETE", "/v1/assemblies/%s/clouds" % self.aid),
                             ("POST", "/v1/jobs"), ("POST", "/v1/jobs/j_0123456789abcdef"),
                             ("DELETE", "/v1/results/r_0123456789abcdef"),
                             ("POST", "/healthz"), ("DELETE", "/metrics")):
            err = self.assert_error(self.d.request(method, path), 405, "", "method_not_allowed")
            self.assertIn(method, err["message"])

    # ---- 409 ----
    def test_409_cancel_finished(self):
        j = self.cloud(self.G[:2])
        self.d.wait_job(j["id"])
        err = self.assert_error(self.d.delete("/v1/jobs/" + j["id"]), 409, "id", "conflict")
        self.assertIn("done", err["message"])

    # ---- 413 ----
    def test_413_limits(self):
        d = h.Daemon(workers=1, extra=["--max-body", "6000", "--max-gaps", "5"]).start()
        try:
            r = upload_multipart(d, self.small_model())
            self.assertEqual(r.status, 201, r.body[:300])
            aid = r.json()["id"]
            big = upload_json(d, self.model_json)  # ~100 kB > 6000
            self.assert_error(big, 413, "body", "too_large")
            self.assertEqual(len(d.get("/v1/assemblies").json()["assemblies"]), 1)
            m = r.json()["m"]
            sp = "/v1/assemblies/%s/solve" % aid
            g = [0.1] * m
            self.assertEqual(d.post(sp, {"g": g}).status, 200)
            # a body over max_body, announced by Content-Length
            self.assert_error(d.post(sp, {"g": g, "pad": "x" * 7000}), 413, "body", "too_large")
            # ... and one sent chunked (no Content-Length): counted while received
            u = urllib.parse.urlparse(d.url)
            c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
            chunks = [b'{"g": [', b"0.1, " * 2000, b"0.1]}"]
            c.request("POST", sp, body=iter(chunks), encode_chunked=True,
                      headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
            resp = c.getresponse()
            body = resp.read()
            c.close()
            self.assertEqual(resp.status, 413, body)
            self.assertEqual(h.Response(413, {}, body).json()["error"]["field"], "body")
            # clouds over --max-gaps: JSON and .npy
            cp = "/v1/assemblies/%s/clouds" % aid
            self.assert_error(d.post(cp, {"gaps": [[0.1] * m] * 6}), 413, "gaps", "too_large")
            self.assertEqual(d.post(cp, {"gaps": [[0.1] * m] * 5}).status, 202)
            self.assert_error(d.post(cp, npy_bytes([[0.1] * m] * 6),
                                     headers={"Content-Type": "application/x-npy"}), 413, "body")
            jobs = d.get("/v1/jobs").json()["jobs"]
            self.assertEqual(len(jobs), 1)
            self.assertEqual(jobs[0]["total"], 5)
        finally:
            d.cleanup()

    def small_model(self):
        """The small lap model with its blocks in .npy files: a ~4 kB JSON."""
        path, _ = model("lap", small=True, inline=False, gaps=2)
        self.assertLess(os.path.getsize(path), 6000)
        return path

    # ---- 415 ----
    def test_415_content_type(self):
        sp = "/v1/assemblies/%s/solve" % self.aid
        cp = "/v1/assemblies/%s/clouds" % self.aid
        body = ('{"g": %s}' % ([0.1] * self.m)).encode()
        for ct in ("text/plain", "application/x-www-form-urlencoded", "application/x-npy",
                   "multipart/form-data; boundary=x", "application/jsonx"):
            err = self.assert_error(self.post_raw(sp, body, ct), 415, "body", "unsupported_media_type")
            self.assertIn("application/json", err["message"])
        self.assert_error(self.d.post(sp, body, headers={}), 415, "body")  # none given
        self.assert_error(self.post_raw(cp, body, "text/csv"), 415, "body")
        self.assert_error(self.post_raw(cp, body, "multipart/form-data; boundary=x"), 415, "body")
        self.assert_error(self.post_raw("/v1/assemblies", b"\x93NUMPY", "application/x-npy"), 415,
                          "body")
        # a body where none is taken
        self.assert_error(self.d.request("GET", "/v1/assemblies", body=b"{}",
                                         headers={"Content-Type": "application/json"}), 415, "body")
        self.assert_error(self.d.request("DELETE", "/v1/jobs/j_0123456789abcdef", body=b"{}",
                                         headers={"Content-Type": "application/json"}), 415, "body")

    # ---- 422: solve ----
    def test_422_solve_values(self):
        m = self.m
        g = [0.1] * m
        sp = "/v1/assemblies/%s/solve" % self.aid
        cases = [
            ({}, "g", "invalid"),
            ({"g": g[:-1]}, "g", "dimension_mismatch"),
            ({"g": g + [0.0]}, "g", "dimension_mismatch"),
            ({"g": 0.1}, "g", "dimension_mismatch"),
            ({"g": [g]}, "g", "dimension_mismatch"),
            ({"g": g[:3] + ["x"] + g[4:]}, "g[3]", "not_finite"),
            ({"g": g[:7] + [None] + g[8:]}, "g[7]", "not_finite"),
            ({"g": g, "frobnicate": 1}, "frobnicate", None),
            ({"g": g, "Solver": "gi"}, "Solver", None),
            ({"g": g, "solver": "magic"}, "solver", None),
            ({"g": g, "solver": 3}, "solver", None),
            ({"g": g, "formulation": "upside-down"}, "formulation", None),
            ({"g": g, "fasteners": [0, 10]}, "fasteners[1]", None),
            ({"g": g, "fasteners": [0, -1]}, "fasteners[1]", None),
            ({"g": g, "fasteners": [0, 1.5]}, "fasteners[1]", None),
            ({"g": g, "fasteners": [3, 4, 3]}, "fasteners[2]", None),
            ({"g": g, "fasteners": "some"}, "fasteners", None),
            ({"g": g, "fasteners": list(range(11))}, "fasteners", None),
            ({"g": g, "fasteners": [1], "fastener_fraction": 0.5}, "fastener_fraction", None),
            ({"g": g, "fastener_fraction": 1.5}, "fastener_fraction", None),
            ({"g": g, "fixed_pairs": [m]}, "fixed_pairs[0]", None),
            ({"g": g, "tol": 0}, "tol", None),
            ({"g": g, "tol": "tiny"}, "tol", None),
            ({"g": g, "max_iter": -1}, "max_iter", None),
            ({"g": g, "return": ["w", "y"]}, "return", None),
            ({"g": g, "return": "w"}, "return", None),
            ({"g": g, "warm_start": "r_nope"}, "warm_start", None),
            ({"g": g, "warm_start": "j_0123456789abcdef"}, "warm_start", None),
            ({"g": g, "warm_start": "r_0123456789abcdef"}, "warm_start", None),  # unknown
            ({"g": g, "warm_start": 12}, "warm_start", None),
        ]
        for body, field, code in cases:
            with self.subTest(body={k: v for k, v in body.items() if k != "g"}, field=field):
                self.assert_error(self.d.post(sp, body), 422, field, code)
        # a number too large for a double parses as inf: not finite
        raw = ('{"g": [%s]}' % ", ".join(["0.1"] * 7 + ["1e400"] + ["0.1"] * (m - 8))).encode()
        self.assert_error(self.post_raw(sp, raw), 422, "g[7]", "not_finite")
        # a result of another assembly is no warm start here
        d2 = h.Daemon(workers=1).start()
        try:
            path, _ = model("sandwich", small=True, inline=True, gaps=2)
            r = upload_json(d2, path)
            self.assertEqual(r.status, 201)
            a2 = r.json()
            upload_json(d2, self.model_json)
            res = d2.post("/v1/assemblies/%s/solve" % a2["id"], {"g": [0.1] * a2["m"]}).json()
            lap2 = [a for a in d2.get("/v1/assemblies").json()["assemblies"]
                    if a["id"] != a2["id"]][0]["id"]
            self.assert_error(d2.post("/v1/assemblies/%s/solve" % lap2,
                                      {"g": g, "warm_start": res["id"]}), 422, "warm_start")
        finally:
            d2.cleanup()

    # ---- 422: clouds ----
    def test_422_cloud_values(self):
        m = self.m
        cp = "/v1/assemblies/%s/clouds" % self.aid
        jobs0 = self.count_jobs()
        row = [0.1] * m
        for body, field, code in [
            ({}, "gaps", "invalid"),
            ({"gaps": []}, "gaps", "invalid"),
            ({"gaps": row}, "gaps", "dimension_mismatch"),
            ({"gaps": [row, row[:-1]]}, "gaps", "dimension_mismatch"),
            ({"gaps": [row, row + [1.0]]}, "gaps", "dimension_mismatch"),
            ({"gaps": [row, row[:5] + ["a"] + row[6:]]}, "gaps[1][5]", "not_finite"),
            ({"gaps": [row], "return": ["w"]}, "return", None),  # solve-only option
            ({"gaps": [row], "warm_start": "r_0123456789abcdef"}, "warm_start", None),
            ({"gaps": [row], "fasteners": [99]}, "fasteners[0]", None),
            ({"gaps": [row], "bogus": True}, "bogus", None),
        ]:
            with self.subTest(field=field):
                self.assert_error(self.d.post(cp, body), 422, field, code)
        # .npy bodies: NaN / inf named by index, wrong width, garbage
        rows = [list(row) for _ in range(4)]
        rows[2][17] = float("nan")
        err = self.assert_error(self.post_raw(cp, npy_bytes(rows), "application/x-npy"), 422,
                                "gaps[2][17]", "not_finite")
        rows[2][17] = 0.0
        rows[3][0] = float("-inf")
        self.assert_error(self.post_raw(cp, npy_bytes(rows), "application/x-npy"), 422,
                          "gaps[3][0]")
        self.assert_error(self.post_raw(cp, npy_bytes([row[:-1]] * 3), "application/x-npy"), 422,
                          "body", "dimension_mismatch")
        # a body that is not a (complete) .npy is malformed: 400, like invalid JSON
        err = self.assert_error(self.post_raw(cp, b"not an npy file at all", "application/x-npy"),
                                400, "body", "bad_format")
        self.assertNotIn("staging", err["message"])  # no server paths in messages
        self.assertTrue(err["message"].startswith("not a .npy file"), err["message"])
        good = npy_bytes([row] * 3)
        self.assert_error(self.post_raw(cp, good[:-8], "application/x-npy"), 400, "body",
                          "bad_format")
        # query options of an .npy cloud are checked like JSON ones
        self.assert_error(self.post_raw(cp + "?fasteners=0,99", good, "application/x-npy"), 422,
                          "fasteners[1]")
        self.assert_error(self.post_raw(cp + "?solver=nope", good, "application/x-npy"), 422,
                          "solver")
        self.assert_error(self.post_raw(cp + "?tol=abc", good, "application/x-npy"), 422, "tol")
        self.assert_error(self.post_raw(cp + "?colour=red", good, "application/x-npy"), 422,
                          "colour")
        self.assertEqual(self.count_jobs(), jobs0)  # nothing half-made

    # ---- 422: assemblies ----
    def test_422_bad_models(self):
        with open(self.model_json) as f:
            mdl = json.load(f)
        asm0 = self.count_assemblies()
        bad = json.loads(json.dumps(mdl))
        bad["pairs"]["i"][0] = 10 ** 6
        r = self.post_raw("/v1/assemblies?wait=1", json.dumps(bad).encode())
        self.assertEqual(r.status, 422, r.body[:300])
        self.assertTrue(r.json()["error"]["field"].startswith("pairs"), r.json())
        bad = json.loads(json.dumps(mdl))
        del bad["parts"]
        r = self.post_raw("/v1/assemblies", json.dumps(bad).encode())
        self.assertEqual(r.status // 100, 4, r.body[:300])
        self.assertIn("field", r.json()["error"])
        self.assertEqual(self.count_assemblies(), asm0)


if __name__ == "__main__":
    unittest.main()
