"""test_api_upgrade -- a data directory written by an older gapsimd whose
stored model the current reader refuses.

Releases before 0.6 accepted number tokens such as `500.` in a model JSON
(the reader is stricter now); an assembly stored then has the same content
hash as the corrected model. Its stored model.json is edited here the way
such a release left it. The assembly must not take its results with it:
  - the first request that needs the model says why (no data-directory
    path), the assembly turns failed with that reason, and its job, results
    and summary stay readable;
  - the geometry and the exports answer 409 with the reason, not a bare 500;
  - uploading the corrected model makes a new assembly and keeps the old
    one with its job (a re-upload deleted a failed assembly with the same
    content hash, and with it every job and result).
"""
import os
import re
import unittest

import gsd_harness as h
from api_common import gaps_rows, model, upload_json


class OldStoredModel(unittest.TestCase):

    def test_unreadable_stored_model_keeps_its_results(self):
        d = h.Daemon(workers=1).start()
        try:
            path, gaps = model("lap", small=True, inline=True, gaps=3)
            r = upload_json(d, path)
            self.assertEqual(r.status, 201, r.body[:300])
            aid = r.json()["id"]
            r = d.post("/v1/assemblies/%s/clouds" % aid,
                       {"gaps": gaps_rows(gaps), "fastener_fraction": 0.5})
            self.assertEqual(r.status, 202, r.body[:300])
            jid = r.json()["id"]
            self.assertEqual(d.wait_job(jid)["status"], "done")
            summary = d.get("/v1/jobs/%s/summary" % jid).json()
            self.assertEqual(d.stop(), 0)
            stored = os.path.join(d.data_dir, "assemblies", aid, "model.json")
            with open(stored) as f:
                text = f.read()
            old, n = re.subn(r'("load": \[)(\d+)(,)', r"\g<1>\g<2>.\3", text, count=1)
            self.assertEqual(n, 1)  # "500." as an older release accepted it
            with open(stored, "w") as f:
                f.write(old)
            d.start()
            # the geometry: 409 with the reason, no path of the data directory
            r = d.get("/v1/assemblies/%s/geometry" % aid)
            self.assertEqual(r.status, 409, r.body[:400])
            err = r.json()["error"]
            self.assertEqual((err["code"], err["field"]), ("bad_format", "model"), err)
            self.assertIn("cannot be read by this gapsimd (model.json:", err["message"])
            self.assertNotIn(d.data_dir, r.body.decode())
            # a solve: the server's failure, then the assembly is failed with it
            r = d.post("/v1/assemblies/%s/solve" % aid, {"g": gaps_rows(gaps)[0]})
            self.assertEqual(r.status, 500, r.body[:400])
            self.assertNotIn(d.data_dir, r.body.decode())
            a = d.get("/v1/assemblies/" + aid).json()
            self.assertEqual(a["status"], "failed")
            self.assertEqual(a["error"]["field"], "model")
            r = d.post("/v1/assemblies/%s/solve" % aid, {"g": gaps_rows(gaps)[0]})
            self.assertEqual(r.status, 409, r.body[:400])
            self.assertIn("failed its precomputation (model: the stored model",
                          r.json()["error"]["message"])
            # its job answers as before; the CSV export says why it cannot
            self.assertEqual(d.get("/v1/jobs/%s/summary" % jid).json(), summary)
            r = d.get("/v1/jobs/%s/summary?format=csv" % jid)
            self.assertEqual(r.status, 409, r.body[:400])
            # the corrected model: a new assembly; the old one keeps its job
            r = upload_json(d, path)
            self.assertEqual(r.status, 201, r.body[:300])
            self.assertNotEqual(r.json()["id"], aid)
            self.assertEqual(d.get("/v1/jobs/" + jid).json()["status"], "done")
            self.assertEqual(d.get("/v1/assemblies/" + aid).status, 200)
            page = d.get("/v1/jobs/%s/results?limit=10" % jid).json()
            self.assertEqual(len(page["results"]), 3)
        finally:
            d.cleanup()


if __name__ == "__main__":
    unittest.main()
