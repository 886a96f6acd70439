"""test_api_contract -- the query string and the lost-gaps answer as docs/api.md
describes them:

- every API endpoint refuses a query parameter it does not take, and a value
  it does not accept, with 422 `invalid` naming the parameter in `field`, as
  a cloud's .npy upload refuses an unknown option (the web page's own URL,
  `/` and `/web/...`, is not checked: its query is the page's state);
- a cloud with a JSON body refuses query parameters (its options go in the
  body) instead of ignoring them;
- GET .../results refuses a parameter of another format than the one
  answered (`limit` with the .npy, `field` with the JSON page);
- POST /v1/assemblies?wait= takes 1, true, 0 or false;
- GET /v1/assemblies/{id}/jobs takes the filters of GET /v1/jobs?assembly=;
- a job whose stored gaps file is lost: GET .../gaps, ?index=i and
  results?format=vtp&index=i answer the same 409 `conflict` naming the
  job's lost gaps.
"""
import os
import sqlite3
import tempfile
import unittest

import gsd_harness as h
from api_common import ApiCase, npy_bytes


class QueryString(ApiCase):

    @classmethod
    def prepare(cls):
        super().prepare()
        r = cls.d.post("/v1/assemblies/%s/clouds" % cls.aid, {"gaps": cls.G[:3]})
        assert r.status == 202, (r.status, r.body)
        cls.jid = r.json()["id"]
        assert cls.d.wait_job(cls.jid)["status"] == "done"
        page = cls.d.get("/v1/jobs/%s/results?limit=1&fields=none" % cls.jid).json()
        cls.rid = page["results"][0]["id"]

    def refused(self, r, field):
        """r is the 422 invalid answer naming field."""
        return self.assert_error(r, 422, field, "invalid")

    def test_unknown_parameter_on_every_endpoint(self):
        a, j = self.aid, self.jid
        gets = ["/healthz", "/metrics", "/v1/assemblies", "/v1/assemblies/" + a,
                "/v1/assemblies/%s/geometry" % a, "/v1/assemblies/%s/jobs" % a, "/v1/jobs",
                "/v1/jobs/" + j, "/v1/jobs/%s/results" % j, "/v1/jobs/%s/gaps" % j,
                "/v1/jobs/%s/summary" % j, "/v1/results/" + self.rid]
        for path in gets:
            with self.subTest(path=path):
                err = self.refused(self.d.get(path + "?bogus=1"), "bogus")
                self.assertIn("bogus", err["message"])
                self.refused(self.d.get(path + "?bogus"), "bogus")  # no value: the same
        # beside parameters the endpoint takes
        self.refused(self.d.get("/v1/jobs/%s/results?limit=2&bogus=1" % j), "bogus")
        self.refused(self.d.get("/v1/jobs?assembly=%s&Status=done" % a), "Status")
        # writes: refused before anything is stored or changed
        jobs0 = len(self.d.get("/v1/jobs").json()["jobs"])
        with open(self.model_json, "rb") as f:
            model = f.read()
        self.refused(self.d.post("/v1/assemblies?bogus=1", model,
                                 headers={"Content-Type": "application/json"}), "bogus")
        self.refused(self.d.post("/v1/assemblies/%s/solve?solver=gi" % a, {"g": self.G[0]}),
                     "solver")
        err = self.refused(self.d.post("/v1/assemblies/%s/clouds?solver=gi" % a,
                                       {"gaps": self.G[:1]}), "solver")
        self.assertIn("body", err["message"])  # where the option goes instead
        self.refused(self.d.post("/v1/assemblies/%s/clouds?bogus=1" % a, npy_bytes(self.G[:1]),
                                 headers={"Content-Type": "application/x-npy"}), "bogus")
        self.refused(self.d.delete("/v1/jobs/j_0000000000000000?force=1"), "force")
        self.refused(self.d.delete("/v1/assemblies/%s?force=1" % a), "force")
        self.assertEqual(self.d.get("/v1/assemblies/" + a).status, 200)
        self.assertEqual(len(self.d.get("/v1/jobs").json()["jobs"]), jobs0)
        # the page's URL carries the page's own state
        self.assertEqual(self.d.get("/?assembly=%s&job=%s&mode=residual" % (a, j)).status, 200)
        self.assertEqual(self.d.get("/web/app.js?v=2").status, 200)

    def test_bad_value_answers_as_an_unknown_parameter(self):
        a, j = self.aid, self.jid
        cases = [("/v1/jobs?status=DONE", "status"),
                 ("/v1/assemblies/%s/jobs?status=finished" % a, "status"),
                 ("/v1/jobs/%s?wait=x" % j, "wait"),
                 ("/v1/jobs/%s?wait=61" % j, "wait"),
                 ("/v1/jobs/%s/results?limit=0" % j, "limit"),
                 ("/v1/jobs/%s/results?offset=x" % j, "offset"),
                 ("/v1/jobs/%s/results?fields=x" % j, "fields"),
                 ("/v1/jobs/%s/results?format=csv" % j, "format"),
                 ("/v1/jobs/%s/results?format=npy&field=x" % j, "field"),
                 ("/v1/jobs/%s/results?format=vtp" % j, "index"),
                 ("/v1/jobs/%s/gaps?index=3" % j, "index"),
                 ("/v1/jobs/%s/summary?threshold=-1" % j, "threshold"),
                 ("/v1/jobs/%s/summary?bins=0" % j, "bins"),
                 ("/v1/jobs/%s/summary?format=xls" % j, "format"),
                 ("/v1/jobs/%s/summary?pairs=p99" % j, "pairs")]
        for path, field in cases:
            with self.subTest(path=path):
                self.refused(self.d.get(path), field)
        self.refused(self.d.post("/v1/assemblies/%s/clouds?tol=x" % a, npy_bytes(self.G[:1]),
                                 headers={"Content-Type": "application/x-npy"}), "tol")

    def test_results_parameters_follow_the_format(self):
        j = self.jid
        for path, field in (("results?format=npy&limit=2", "limit"),
                            ("results?field=w", "field"),
                            ("results?offset=1&index=0", "index"),
                            ("results?format=vtp&index=0&fields=w", "fields")):
            with self.subTest(path=path):
                err = self.refused(self.d.get("/v1/jobs/%s/%s" % (j, path)), field)
                self.assertIn("format", err["message"])
        r = self.d.get("/v1/jobs/%s/results?limit=2" % j, headers={"Accept": "application/x-npy"})
        self.refused(r, "limit")  # the .npy, chosen by Accept
        for path in ("results?format=npy&field=lambda", "results?offset=1&limit=1&fields=w",
                     "results?format=vtp&index=0&threshold=0.2"):
            with self.subTest(path=path):
                self.assertEqual(self.d.get("/v1/jobs/%s/%s" % (j, path)).status, 200)

    def test_upload_wait_values(self):
        asm0 = self.d.get("/v1/assemblies").json()["assemblies"]
        out = tempfile.mkdtemp(prefix="wait-", dir=h.TMP)
        models = []
        for k in range(4):  # new content each: 201 / 202 tell a wait from none
            path, _ = h.gen_model(os.path.join(out, str(k)), small=True, inline=True, gaps=0,
                                  extra=["--fast-load", str(700 + k)])
            with open(path, "rb") as f:
                models.append(f.read())
        hdr = {"Content-Type": "application/json"}
        for bad in ("yes", "2", "TRUE", "", "1.0"):
            with self.subTest(wait=bad):
                self.refused(self.d.post("/v1/assemblies?wait=" + bad, models[0], headers=hdr),
                             "wait")
        self.assertEqual(self.d.get("/v1/assemblies").json()["assemblies"], asm0)
        for body, wait, status in zip(models, ("1", "true", "0", "false"), (201, 201, 202, 202)):
            with self.subTest(wait=wait):
                r = self.d.post("/v1/assemblies?wait=" + wait, body, headers=hdr)
                self.assertEqual(r.status, status, r.body[:300])

    def test_assembly_jobs_filter_like_jobs(self):
        a = self.aid
        for status in (None, "queued", "running", "done", "cancelled", "failed"):
            with self.subTest(status=status):
                q = "" if status is None else "status=" + status
                mine = self.d.get("/v1/assemblies/%s/jobs%s" % (a, "?" + q if q else ""))
                every = self.d.get("/v1/jobs?assembly=%s%s" % (a, "&" + q if q else ""))
                self.assertEqual((mine.status, every.status), (200, 200))
                self.assertEqual(mine.json(), every.json())
                if status == "failed":
                    self.assertEqual(mine.json(), {"jobs": []})
                if status == "done":
                    self.assertIn(self.jid, [x["id"] for x in mine.json()["jobs"]])


class LostGaps(ApiCase):

    def test_lost_gaps_file_answers_the_same_everywhere(self):
        job = self.cloud(self.G[:4])
        jid = job["id"]
        self.assertEqual(self.d.wait_job(jid)["status"], "done")
        # as after a kill -9 mid-cloud: the job still running in the store, and
        # its gaps file lost: it cannot resume and ends failed
        self.assertIn(self.d.stop(), (0, None))
        con = sqlite3.connect(os.path.join(self.d.data_dir, "gapsim.db"))
        con.execute("UPDATE jobs SET status='running', finished_at=NULL WHERE id=?", (jid,))
        con.commit()
        con.close()
        os.unlink(os.path.join(self.d.data_dir, "jobs", jid, "gaps.npy"))
        self.d.start()
        self.assertEqual(self.d.get("/v1/jobs/" + jid).json()["status"], "failed")
        base = "/v1/jobs/%s/" % jid
        errs = [self.assert_error(self.d.get(base + p), 409, "id", "conflict")
                for p in ("gaps", "gaps?index=0", "results?format=vtp&index=0")]
        for err in errs:
            self.assertEqual(err, errs[0])
        self.assertIn(jid, errs[0]["message"])
        self.assertIn("gaps", errs[0]["message"])
        self.assertIn("lost", errs[0]["message"])
        self.assertNotIn(self.d.data_dir, errs[0]["message"])


if __name__ == "__main__":
    unittest.main()
