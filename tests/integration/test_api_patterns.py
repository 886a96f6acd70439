"""Fastener patterns in space: fastener_fraction on the small sandwich gives
every interface its share (floor or ceil of fraction x its candidates), the
job says which candidates it installed ("options.installed"), explicit lists
and "all" are echoed the same way, the results equal single solves with the
installed list, and a request's "installed" key is ignored (it is an output)."""
import math
import unittest

from api_common import ApiCase, model, gaps_rows, upload_json


class PatternTest(ApiCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        js, gp = model("sandwich", small=True, inline=True, gaps=6)
        r = upload_json(cls.d, js)
        assert r.status in (200, 201), (r.status, r.body)
        cls.sw = r.json()["id"]
        cls.SG = gaps_rows(gp)
        cls.geo = cls.d.get("/v1/assemblies/%s/geometry" % cls.sw).json()

    def interfaces(self):
        p = self.geo["pairs"]
        by = {}
        for i, k in enumerate(self.geo["fasteners"]["pair"]):
            by.setdefault((p["part_i"][k], p["part_j"][k]), []).append(i)
        return by

    def test_fraction_shares_every_interface(self):
        by = self.interfaces()
        self.assertGreaterEqual(len(by), 3)
        nf = len(self.geo["fasteners"]["pair"])
        for f in (0.5, 0.25, 0.1):
            r = self.d.post("/v1/assemblies/%s/clouds" % self.sw,
                            {"gaps": self.SG[:2], "fastener_fraction": f})
            self.assertEqual(r.status, 202, r.body)
            inst = r.json()["options"]["installed"]
            self.assertEqual(inst, sorted(set(inst)))
            self.assertEqual(len(inst), int(math.floor(f * nf + 0.5)))
            for key, cands in by.items():
                on = len(set(cands) & set(inst))
                self.assertGreaterEqual(on, math.floor(f * len(cands)), (f, key))
                self.assertLessEqual(on, math.ceil(f * len(cands)), (f, key))
                if f == 0.5:
                    self.assertGreater(on, 0, key)
            self.d.wait_job(r.json()["id"])
            # the stored job says the same (GET re-reads the stored options)
            j = self.d.get("/v1/jobs/" + r.json()["id"]).json()
            self.assertEqual(j["options"]["installed"], inst)
            self.assertEqual(j["options"]["fastener_fraction"], f)

    def test_fraction_equals_its_installed_list(self):
        r = self.d.post("/v1/assemblies/%s/clouds" % self.sw,
                        {"gaps": self.SG[:3], "fastener_fraction": 0.5, "solver": "gi"})
        inst = r.json()["options"]["installed"]
        a = self.all_results(self.d.wait_job(r.json()["id"])["id"])
        r2 = self.d.post("/v1/assemblies/%s/clouds" % self.sw,
                         {"gaps": self.SG[:3], "fasteners": inst, "solver": "gi",
                          "installed": [0]})  # an output: ignored in a request
        self.assertEqual(r2.status, 202, r2.body)
        self.assertEqual(r2.json()["options"]["installed"], inst)
        self.assertEqual(r2.json()["options"]["fasteners"], inst)
        b = self.all_results(self.d.wait_job(r2.json()["id"])["id"])
        for x, y in zip(a, b):
            self.assert_close(x["w"], y["w"], 1e-7, "w")

    def test_all_and_none(self):
        nf = len(self.geo["fasteners"]["pair"])
        r = self.d.post("/v1/assemblies/%s/clouds" % self.sw, {"gaps": self.SG[:1], "fasteners": "all"})
        self.assertEqual(r.json()["options"]["installed"], list(range(nf)))
        r = self.d.post("/v1/assemblies/%s/clouds" % self.sw, {"gaps": self.SG[:1]})
        self.assertEqual(r.json()["options"]["installed"], [])


if __name__ == "__main__":
    unittest.main()
