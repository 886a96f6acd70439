"""The daemon's answers keep the rules of HTTP, JSON, CSV and UTF-8, and what
docs/api.md and schema/openapi.json say:

- a GET /v1/jobs/{id}?wait=S held on a job is answered (404) as soon as the
  job's assembly is deleted, not after S seconds;
- a cloud label that is not UTF-8 is 422 naming "label" (JSON body and
  query string); every JSON answer is valid UTF-8, also when it echoes
  bytes of a path or id, or shows bytes stored before the check (invalid
  sequences become U+FFFD);
- the CSV export quotes an interface whose part names hold a comma or a
  quote (RFC 4180), and a summary of no result has empty statistic cells;
- GET /v1/jobs?status= of another value is 400 naming "status";
- a JSON number of any length is read whole and exactly (g, gaps, options);
  the tokens JSON does not have (.5, +1, 1., 000, NaN, Infinity) are 400
  invalid JSON wherever they stand;
- GET .../results?format= takes json, npy, vtp (400 naming "format"
  otherwise); the Accept header's q values count (q=0: not acceptable);
- what a request sends cannot forge or split a log line;
- a 405 lists the allowed methods in its Allow header;
- messages keep an over-long id (clipped) and name the real timeout limit;
  results?fields=none carries max_residual and contact.
"""
import csv
import io
import json
import os
import sqlite3
import threading
import time
import unittest

import gsd_harness as h
from api_common import ApiCase, npy_bytes, upload_json

OPENAPI = os.path.join(h.SOURCE_DIR, "schema", "openapi.json")


def documented(method, path, status):
    """True if openapi.json lists status for the operation."""
    with open(OPENAPI, encoding="utf-8") as f:
        api = json.load(f)
    return str(status) in api["paths"][path][method.lower()]["responses"]


class ConformanceTest(ApiCase):

    LONG = 50000  # generated gaps, the interior point method: seconds of work

    def long_cloud(self, aid=None, seed=7, d=None):
        r = (d or self.d).post("/v1/assemblies/%s/clouds" % (aid or self.aid),
                        {"generate": {"count": self.LONG, "seed": seed}, "fasteners": "all",
                         "solver": "ipm", "cache": False})
        self.assertEqual(r.status, 202, r.body[:400])
        return r.json()

    def raw(self, method, path, body, ct="application/json", headers=None):
        hdrs = {"Content-Type": ct}
        hdrs.update(headers or {})
        return self.d.request(method, path, body, headers=hdrs)

    def utf8_json(self, r):
        """The body of r decoded strictly as UTF-8 and parsed."""
        return json.loads(r.body.decode("utf-8", errors="strict"))

    # ---- 1: a held wait and the deletion of the job's assembly ----
    def test_wait_answered_when_assembly_deleted(self):
        d = h.Daemon(workers=1).start()  # its own assembly, deleted here
        try:
            r = upload_json(d, self.model_json)
            self.assertEqual(r.status, 201, r.body[:300])
            aid = r.json()["id"]
            j = self.long_cloud(aid, d=d)
            out = {}

            def held():
                t0 = time.monotonic()
                out["r"] = d.get("/v1/jobs/%s?wait=20" % j["id"], timeout=60)
                out["dt"] = time.monotonic() - t0

            th = threading.Thread(target=held)
            th.start()
            time.sleep(0.5)  # the request is held (the job runs for seconds)
            t0 = time.monotonic()
            self.assertEqual(d.delete("/v1/assemblies/" + aid).status, 204)
            t_delete = time.monotonic() - t0
            th.join(30)
            self.assertFalse(th.is_alive())
            # answered with the deletion, not at its 20 s deadline
            self.assertLess(out["dt"], 0.5 + t_delete + 2.0, out)
            self.assertEqual(out["r"].status, 404, out["r"].body[:300])
            self.assertEqual(out["r"].json()["error"]["field"], "id")
        finally:
            d.cleanup()

    # ---- 2: UTF-8 ----
    def test_label_must_be_utf8(self):
        cp = "/v1/assemblies/%s/clouds" % self.aid
        row = [0.1] * self.m
        body = b'{"gaps": [%s], "label": "\xff\xfe"}' % json.dumps(row).encode()
        self.assert_error(self.raw("POST", cp, body), 422, "label", "invalid")
        body = b'{"gaps": [%s], "label": "caf\xc3"}' % json.dumps(row).encode()  # cut short
        self.assert_error(self.raw("POST", cp, body), 422, "label", "invalid")
        self.assert_error(self.raw("POST", cp + "?label=%FF", npy_bytes([row]),
                                   "application/x-npy"), 422, "label", "invalid")
        self.assert_error(self.raw("POST", cp + "?label=%ED%A0%80", npy_bytes([row]),
                                   "application/x-npy"), 422, "label")  # a surrogate
        # valid UTF-8 is kept byte for byte
        label = "Flügel – Los 7 ✓"
        r = self.raw("POST", cp, json.dumps({"gaps": [row], "label": label}).encode())
        self.assertEqual(r.status, 202, r.body[:300])
        self.assertEqual(r.json()["options"]["label"], label)
        q = self.raw("POST", cp + "?label=%C3%BC", npy_bytes([row]), "application/x-npy")
        self.assertEqual(q.status, 202, q.body[:300])
        self.assertEqual(q.json()["options"]["label"], "ü")
        self.d.wait_job(r.json()["id"])
        self.d.wait_job(q.json()["id"])

    def test_echoed_bytes_are_utf8(self):
        for path, field in (("/v1/assemblies/a_%FF%FE", "id"), ("/v1/jobs/j_%C3%28", "id"),
                            ("/v1/results/%80", "id"), ("/no%FFsuch", "")):
            with self.subTest(path=path):
                r = self.d.get(path)
                self.assertEqual(r.status, 404)
                err = self.utf8_json(r)["error"]
                self.assertEqual(err["field"], field)
                self.assertIn("\ufffd", err["message"])
        r = self.d.request("PUT", "/v1/jobs/j_%FF")
        self.assertEqual(r.status, 405)
        self.assertIn("\ufffd", self.utf8_json(r)["error"]["message"])

    def test_stored_bytes_are_repaired(self):
        """Bytes stored before the checks (a label, an assembly name that
        are not UTF-8) come back as U+FFFD, in every JSON answer."""
        d = h.Daemon(workers=1).start()
        try:
            r = upload_json(d, self.model_json)
            self.assertEqual(r.status, 201, r.body[:300])
            aid = r.json()["id"]
            j = d.post("/v1/assemblies/%s/clouds" % aid,
                       {"gaps": [[0.1] * self.m], "label": "old"}).json()
            d.wait_job(j["id"])
            self.assertEqual(d.stop(), 0)
            con = sqlite3.connect(os.path.join(d.data_dir, "gapsim.db"))
            opts = con.execute("SELECT options_json FROM jobs WHERE id = ?",
                               (j["id"],)).fetchone()[0]
            bad = opts.encode().replace(b'"label":"old"', b'"label":"o\xffld\xc3"')
            self.assertNotEqual(bad, opts.encode())
            con.execute("UPDATE jobs SET options_json = CAST(? AS TEXT) WHERE id = ?",
                        (bad, j["id"]))
            con.execute("UPDATE assemblies SET name = CAST(? AS TEXT) WHERE id = ?",
                        (b"lap\xfe", aid))
            con.commit()
            con.close()
            d.start()
            for path in ("/v1/jobs", "/v1/jobs/" + j["id"], "/v1/jobs/%s?wait=1" % j["id"],
                         "/v1/assemblies/%s/jobs" % aid):
                with self.subTest(path=path):
                    r = d.get(path)
                    self.assertEqual(r.status, 200)
                    doc = self.utf8_json(r)
                    jobs = doc["jobs"] if "jobs" in doc else [doc]
                    self.assertEqual([x["options"]["label"] for x in jobs],
                                     ["o\ufffdld\ufffd"])
            for path in ("/v1/assemblies", "/v1/assemblies/" + aid):
                with self.subTest(path=path):
                    r = d.get(path)
                    self.assertEqual(r.status, 200)
                    self.assertIn("lap\ufffd", r.body.decode("utf-8", errors="strict"))
        finally:
            d.cleanup()

    # ---- 3: CSV ----
    CSV_MODEL = {"format": "gapsim-model", "version": 1, "name": "csvtest",
                 "parts": [{"name": "skin, upper", "ndof": 2, "K": [[5, 0], [0, 5]]},
                           {"name": "spar \"A\"", "ndof": 1, "K": [[4]]}],
                 "nodes": {"part": [0, 0, 1], "dof": [0, 1, 0]},
                 "pairs": {"i": [0, 1], "j": [2, -1]}}

    def test_csv_quotes_part_names(self):
        r = self.d.post("/v1/assemblies?wait=1", json.dumps(self.CSV_MODEL).encode(),
                        headers={"Content-Type": "application/json"})
        self.assertEqual(r.status, 201, r.body[:300])
        aid = r.json()["id"]
        r = self.d.post("/v1/assemblies/%s/clouds" % aid, {"gaps": [[0.1, 0.2]]})
        self.assertEqual(r.status, 202, r.body[:300])
        jid = r.json()["id"]
        self.d.wait_job(jid)
        r = self.d.get("/v1/jobs/%s/summary?format=csv" % jid)
        self.assertEqual(r.status, 200)
        text = r.body.decode("utf-8")
        rows = list(csv.reader(io.StringIO(text, newline="")))
        self.assertEqual(len(rows), 3, text)
        self.assertEqual([len(x) for x in rows], [11, 11, 11], text)
        self.assertEqual(rows[0][4], "interface")
        self.assertEqual([x[0] for x in rows[1:]], ["0", "1"])
        self.assertEqual([x[4] for x in rows[1:]], ['skin, upper/spar "A"', "skin, upper/fixed"])
        # the exact bytes: quoted, quotes doubled
        self.assertIn(',"skin, upper/spar ""A""",', text)
        summary = self.d.get("/v1/jobs/%s/summary" % jid).json()
        self.assertEqual([float(x[5]) for x in rows[1:]], summary["pairs"]["mean"])
        self.d.delete("/v1/assemblies/" + aid)
        # a line break in a name, where the model reader takes one
        doc = json.loads(json.dumps(self.CSV_MODEL))
        doc["parts"][0]["name"] = "skin\r\nupper"
        r = self.d.post("/v1/assemblies?wait=1", json.dumps(doc).encode(),
                        headers={"Content-Type": "application/json"})
        if r.status == 422:
            self.skipTest("the model reader refuses control characters in part names")
        self.assertEqual(r.status, 201, r.body[:300])
        aid = r.json()["id"]
        jid = self.d.post("/v1/assemblies/%s/clouds" % aid, {"gaps": [[0.1, 0.2]]}).json()["id"]
        self.d.wait_job(jid)
        text = self.d.get("/v1/jobs/%s/summary?format=csv" % jid).body.decode("utf-8")
        rows = list(csv.reader(io.StringIO(text, newline="")))
        self.assertEqual([len(x) for x in rows], [11, 11, 11], text)
        self.assertEqual([x[4] for x in rows[1:]], ['skin\r\nupper/spar "A"', "skin\r\nupper/fixed"])
        self.d.delete("/v1/assemblies/" + aid)

    def test_csv_of_no_result(self):
        j = self.long_cloud(seed=11)
        q = self.cloud([[0.1] * self.m] * 3)  # queued behind it
        r = self.d.delete("/v1/jobs/" + q["id"])
        self.assertEqual((r.status, r.json()["done"]), (200, 0))
        self.assertEqual(self.d.delete("/v1/jobs/" + j["id"]).status, 200)
        r = self.d.get("/v1/jobs/%s/summary?format=csv" % q["id"])
        self.assertEqual(r.status, 200)
        rows = list(csv.reader(io.StringIO(r.body.decode(), newline="")))
        self.assertEqual(len(rows), 1 + self.m)
        for row in rows[1:]:
            self.assertEqual(len(row), 11)
            self.assertTrue(row[1] and row[4])  # coordinates and interface stay
            self.assertEqual(row[5:], [""] * 6, row)  # no statistic, not zeros

    # ---- 4: the status filter ----
    def test_status_filter(self):
        for bad in ("bogus", "DONE", ""):
            with self.subTest(status=bad):
                err = self.assert_error(self.d.get("/v1/jobs?status=" + bad), 422, "status",
                                        "invalid")
                for s in ("queued", "running", "done", "cancelled", "failed"):
                    self.assertIn(s, err["message"])
        self.assertTrue(documented("GET", "/v1/jobs", 422))
        r = self.d.get("/v1/jobs?status=done&assembly=a_0000000000000000")
        self.assertEqual((r.status, r.json()), (200, {"jobs": []}))

    # ---- 5: numbers ----
    def test_long_numbers(self):
        sp = "/v1/assemblies/%s/solve" % self.aid
        g = [0.1 + 0.01 * k for k in range(self.m)]
        long_g0 = "0." + "1" * 62  # 64 characters
        exact = float(long_g0)
        tail = ", ".join(repr(x) for x in g[1:])
        tol = "0.0000000001" + "0" * 60  # 1e-10 in 72 characters
        body = ('{"g": [%s, %s], "solver": "gi", "tol": %s}' % (long_g0, tail, tol)).encode()
        r = self.raw("POST", sp, body)
        self.assertEqual(r.status, 200, r.body[:300])
        first = r.json()
        # the same bits written in 17 digits: the result cache's key matches
        r = self.raw("POST", sp, ('{"g": [%r, %s], "solver": "gi", "tol": 1e-10}'
                                  % (exact, tail)).encode())
        self.assertEqual(r.status, 200, r.body[:300])
        self.assertEqual((r.json()["cached"], r.json()["id"]), (True, first["id"]))
        # a cloud: the stored gap is the double of the long literal
        longer = "-0." + "0" * 300 + "12345678901234567890123"
        body = ('{"gaps": [[%s, %s], [%s, %s]]}' % (long_g0, tail, longer, tail)).encode()
        r = self.raw("POST", "/v1/assemblies/%s/clouds" % self.aid, body)
        self.assertEqual(r.status, 202, r.body[:300])
        jid = r.json()["id"]
        self.assertEqual(self.d.get("/v1/jobs/%s/gaps?index=0" % jid).json()["g"][0], exact)
        self.assertEqual(self.d.get("/v1/jobs/%s/gaps?index=1" % jid).json()["g"][0],
                         float(longer))
        self.d.wait_job(jid)

    def test_invalid_number_tokens(self):
        sp = "/v1/assemblies/%s/solve" % self.aid
        tail = ", ".join(["0.1"] * (self.m - 1))
        for tok in (".5", "+1", "1.", "000", "01", "-.5", "1.e3", "NaN", "Infinity",
                    "-Infinity", "0x10"):
            with self.subTest(tok=tok):
                body = '{"g": [%s, %s]}' % (tok, tail)
                err = self.assert_error(self.raw("POST", sp, body.encode()), 400, "body",
                                        "bad_format")
                self.assertEqual(err["message"], "invalid JSON at byte %d" % body.index(tok))
                # elsewhere in the body too (cJSON alone would take ".5")
                body = '{"g": [%s], "tol": %s}' % (tail + ", 0.1", tok)
                err = self.assert_error(self.raw("POST", sp, body.encode()), 400, "body",
                                        "bad_format")
                self.assertEqual(err["message"], "invalid JSON at byte %d" % body.rindex(tok))
        body = '{"gaps": [[%s, NaN]]}' % tail
        self.assert_error(self.raw("POST", "/v1/assemblies/%s/clouds" % self.aid, body.encode()),
                          400, "body", "bad_format")
        # well-formed values that are no finite number stay 422, named
        body = '{"g": [%s, 1e999]}' % tail
        self.assert_error(self.raw("POST", sp, body.encode()), 422, "g[%d]" % (self.m - 1),
                          "not_finite")

    # ---- 6: results formats and Accept ----
    def test_results_format(self):
        j = self.cloud([[0.1] * self.m] * 2)
        self.d.wait_job(j["id"])
        base = "/v1/jobs/%s/results" % j["id"]
        for bad in ("csv", "xml", "NPY", "Json", "", "vtk"):
            with self.subTest(format=bad):
                err = self.assert_error(self.d.get(base + "?format=" + bad), 422, "format",
                                        "invalid")
                self.assertEqual(err["message"], "format is json, npy or vtp")
        self.assertTrue(documented("GET", "/v1/jobs/{id}/results", 422))
        r = self.d.get(base + "?format=json")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.json()["total"], 2)
        r = self.d.get(base + "?format=npy")
        self.assertEqual((r.status, r.headers["Content-Type"]), (200, "application/x-npy"))
        r = self.d.get(base + "?format=json", headers={"Accept": "application/x-npy"})
        self.assertTrue(r.headers["Content-Type"].startswith("application/json"))

        def kind(accept):
            r = self.d.get(base, headers={"Accept": accept})
            self.assertEqual(r.status, 200)
            return "npy" if r.headers["Content-Type"] == "application/x-npy" else "json"

        for accept, want in (("application/x-npy", "npy"),
                             ("application/json, application/x-npy;q=0", "json"),
                             ("application/x-npy;q=0", "json"),
                             ("application/x-npy; q=0.0, */*", "json"),
                             ("application/json, application/x-npy;q=0.5", "json"),
                             ("application/json;q=0.4, application/x-npy;q=0.5", "npy"),
                             ("application/x-npy, application/json", "npy"),
                             ("Application/X-NPY", "npy"),
                             ("*/*", "json"), ("application/*", "json"),
                             ("text/html, application/x-npy;q=0.9", "npy"),
                             ("application/x-npy-other", "json")):
            with self.subTest(accept=accept):
                self.assertEqual(kind(accept), want)

    def test_vtp_of_unsolved_gap_documented(self):
        j = self.long_cloud(seed=12)
        r = self.d.get("/v1/jobs/%s/results?format=vtp&index=%d" % (j["id"], self.LONG - 1))
        self.d.delete("/v1/jobs/" + j["id"])
        self.assert_error(r, 409, "index", "not_ready")
        self.assertTrue(documented("GET", "/v1/jobs/{id}/results", 409))

    # ---- 7: the log ----
    def test_log_lines_cannot_be_forged(self):
        d = h.Daemon(workers=1, log_level=2).start()
        try:
            forged = "2026-01-01T00:00:00Z gapsimd info: injected"
            r = d.get("/v1/jobs/x%0d%0a2026-01-01T00:00:00Z%20gapsimd%20info:%20injected")
            self.assertEqual(r.status, 404)
            d.get("/v1/assemblies/a_%1b%5b31m%FF%C2%9Bx")
            d.request("PUT", "/v1/jobs%0aforged%20line")
        finally:
            d.stop()
            with open(d.log_path, "rb") as f:
                log = f.read()
            d.cleanup()
        lines = log.split(b"\n")
        self.assertFalse([x for x in lines if x.startswith(forged.encode())], log[-2000:])
        self.assertFalse([x for x in lines if x.startswith(b"forged")], log[-2000:])
        hit = [x for x in lines if b"injected" in x]
        self.assertEqual(len(hit), 1, hit)
        self.assertIn(b"GET /v1/jobs/x\\x0d\\x0a2026-01-01T00:00:00Z gapsimd info: injected -> 404",
                      hit[0])
        esc = [x for x in lines if b"/v1/assemblies/a_" in x]
        self.assertEqual(len(esc), 1, esc)
        self.assertIn(b"a_\\x1b[31m\\xff\\xc2\\x9bx -> 404", esc[0])
        self.assertNotIn(b"\x1b", log)
        log.decode("utf-8", errors="strict")  # every byte of it

    # ---- 8: Allow ----
    def test_405_allow_header(self):
        for method, path, allow in (
                ("PUT", "/v1/assemblies", {"GET", "HEAD", "POST"}),
                ("DELETE", "/v1/jobs", {"GET", "HEAD"}),
                ("PATCH", "/v1/jobs/j_0123456789abcdef", {"GET", "HEAD", "DELETE"}),
                ("POST", "/v1/assemblies/%s" % self.aid, {"GET", "HEAD", "DELETE"}),
                ("GET", "/v1/assemblies/%s/solve" % self.aid, {"POST"}),
                ("POST", "/healthz", {"GET", "HEAD"})):
            with self.subTest(method=method, path=path):
                r = self.d.request(method, path)
                err = self.assert_error(r, 405, "", "method_not_allowed")
                self.assertEqual(set(r.headers["Allow"].split(", ")), allow, r.headers)
                for m in allow:
                    self.assertIn(m, err["message"])

    # ---- 9: messages that tell the truth ----
    def test_long_id_in_message(self):
        long_id = "a_" + "0123456789abcdef" * 3
        err = self.assert_error(self.d.get("/v1/assemblies/" + long_id), 404, "id", "not_found")
        self.assertIn("no assembly %s... (ids look like" % long_id[:32], err["message"])
        err = self.assert_error(self.d.get("/v1/jobs/j_0123456789abcdef0/summary"), 404, "id")
        self.assertIn("no job j_0123456789abcdef0 (", err["message"])
        err = self.assert_error(self.d.get("/v1/results/" + "r" * 100), 404, "id")
        self.assertIn("r" * 32 + "...", err["message"])

    def test_timeout_messages(self):
        sp = "/v1/assemblies/%s/solve" % self.aid
        g = [0.1] * self.m
        for t in (0, -1):
            err = self.assert_error(self.d.post(sp, {"g": g, "timeout_s": t}), 422, "timeout_s")
            self.assertNotIn("86400", err["message"])
            self.assertIn("--max-timeout", err["message"])
        for t in (5000, 100000):
            err = self.assert_error(self.d.post(sp, {"g": g, "timeout_s": t}), 422, "timeout_s")
            self.assertIn("limit of 3600 s", err["message"])

    def test_query_list_with_an_empty_entry(self):
        # "?fasteners=,3" and "?fasteners=3," alike: an empty entry is refused,
        # naming it; "1,3" is a list of two
        npy = npy_bytes([[0.1] * self.m])
        for q, field in (("fasteners=,3", "fasteners[0]"), ("fasteners=3,", "fasteners[1]"),
                         ("fixed_pairs=0,", "fixed_pairs[1]")):
            r = self.raw("POST", "/v1/assemblies/%s/clouds?%s" % (self.aid, q), npy,
                         ct="application/x-npy")
            self.assert_error(r, 422, field)
        r = self.raw("POST", "/v1/assemblies/%s/clouds?fasteners=1,3" % self.aid, npy,
                     ct="application/x-npy")
        self.assertEqual(r.status, 202, r.body[:300])
        self.assertEqual(r.json()["options"]["fasteners"], [1, 3])

    def test_fields_none(self):
        j = self.cloud([[0.1] * self.m] * 2)
        self.d.wait_job(j["id"])
        p = self.d.get("/v1/jobs/%s/results?fields=none" % j["id"]).json()
        for res in p["results"]:
            self.assertNotIn("w", res)
            self.assertNotIn("lambda", res)
            self.assertIn("max_residual", res)  # as docs/api.md says
            self.assertIn("contact", res)
            self.assertIn("kkt", res)


if __name__ == "__main__":
    unittest.main()
