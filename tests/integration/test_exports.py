"""Exports of a cloud (small sandwich, 5 gaps, 50% pattern) from the API, the
CLI and the Python client:
  - CSV: one row per pair; coordinates, interface names and every statistic
    equal to the geometry and to the JSON summary (same threshold), the mean
    contact force equal to the mean of the .npy forces;
  - VTK (.vtp): read back with the vtk module of Debian's python3-vtk9 (any
    python3 that has it; scripts/test installs it), else a strict XML check of
    the same structure; the point data equal the API's g, w, lambda and
    summary; the CLI's --series writes a .pvd time series of k files;
  - HTML: one page with the summary table, the pattern (the job's installed
    list) and SVG figures whose histogram bars carry the summary's counts;
  - errors: an unknown format, format=vtp without index, an unsolved index.
"""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

from api_common import ApiCase, gaps_rows, model, upload_json
from gsd_harness import SOURCE_DIR, TMP, binary

sys.path.insert(0, os.path.join(SOURCE_DIR, "clients", "python"))
from gapsim import Client  # noqa: E402

THR = 0.05

VTK_READER = r"""
import json, sys
from vtkmodules.vtkIOXML import vtkXMLPolyDataReader
r = vtkXMLPolyDataReader()
r.SetFileName(sys.argv[1])
r.Update()
o = r.GetOutput()
pd = o.GetPointData()
arrays = {}
for i in range(pd.GetNumberOfArrays()):
    a = pd.GetArray(i)
    arrays[pd.GetArrayName(i)] = [a.GetValue(k) for k in range(a.GetNumberOfTuples())]
print(json.dumps({"n_points": o.GetNumberOfPoints(), "n_verts": o.GetNumberOfVerts(),
                  "points": [list(o.GetPoint(k)) for k in range(o.GetNumberOfPoints())],
                  "arrays": arrays}))
"""


def vtk_python():
    """A python3 with the vtk module (Debian's python3-vtk9 is for /usr/bin/python3)."""
    for exe in (sys.executable, "/usr/bin/python3"):
        if exe and os.path.exists(exe) and subprocess.run(
                [exe, "-c", "import vtkmodules.vtkIOXML"], capture_output=True).returncode == 0:
            return exe
    return None


def strict_vtp(data, m):
    """Parse a .vtp without vtk: the structure ParaView needs, every array of m values."""
    root = ET.fromstring(data)
    assert root.tag == "VTKFile" and root.get("type") == "PolyData", root.attrib
    piece = root.find("PolyData/Piece")
    assert int(piece.get("NumberOfPoints")) == m and int(piece.get("NumberOfVerts")) == m
    pts = [float(v) for v in piece.find("Points/DataArray").text.split()]
    assert len(pts) == 3 * m
    conn = [int(v) for v in piece.find("Verts/DataArray[@Name='connectivity']").text.split()]
    offs = [int(v) for v in piece.find("Verts/DataArray[@Name='offsets']").text.split()]
    assert conn == list(range(m)) and offs == list(range(1, m + 1))
    arrays = {}
    for a in piece.find("PointData"):
        vals = [float(v) for v in a.text.split()]
        assert len(vals) == m, (a.get("Name"), len(vals))
        arrays[a.get("Name")] = vals
    return {"n_points": m, "n_verts": m, "points": [pts[3 * k:3 * k + 3] for k in range(m)],
            "arrays": arrays}


class ExportTest(ApiCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        js, gp = model("sandwich", small=True, inline=True, gaps=5)
        r = upload_json(cls.d, js)
        assert r.status in (200, 201), (r.status, r.body)
        cls.sw = r.json()["id"]
        cls.SG = gaps_rows(gp)
        cls.geo = cls.d.get("/v1/assemblies/%s/geometry" % cls.sw).json()
        cls.msw = len(cls.geo["pairs"]["x"])
        r = cls.d.post("/v1/assemblies/%s/clouds" % cls.sw,
                       {"gaps": cls.SG, "fastener_fraction": 0.5})
        cls.job = cls.d.wait_job(r.json()["id"])
        cls.jid = cls.job["id"]
        cls.sum = cls.d.get("/v1/jobs/%s/summary?threshold=%g" % (cls.jid, THR)).json()
        cls.tmp = tempfile.mkdtemp(prefix="export-", dir=TMP)
        cls.vtk_py = vtk_python()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)
        super().tearDownClass()

    def read_vtp(self, data):
        parsed = strict_vtp(data, self.msw)  # always: the strict structure
        if self.vtk_py:
            path = os.path.join(self.tmp, "check.vtp")
            with open(path, "wb") as f:
                f.write(data)
            p = subprocess.run([self.vtk_py, "-c", VTK_READER, path], capture_output=True)
            self.assertEqual(p.returncode, 0, p.stderr.decode()[-2000:])
            got = json.loads(p.stdout)
            self.assertEqual(got["n_points"], self.msw)
            self.assertEqual(got["n_verts"], self.msw)
            for name, vals in parsed["arrays"].items():
                self.assertEqual(got["arrays"][name], vals, name)
            return got
        return parsed

    def part_names(self):
        a = json.loads(open(model("sandwich", small=True, inline=True, gaps=5)[0]).read())
        return [p["name"] for p in a["parts"]]

    def test_csv(self):
        r = self.d.get("/v1/jobs/%s/summary?format=csv&threshold=%g" % (self.jid, THR))
        self.assertEqual(r.status, 200)
        self.assertTrue(r.headers["Content-Type"].startswith("text/csv"), r.headers)
        rows = list(csv.DictReader(io.StringIO(r.body.decode())))
        self.assertEqual(len(rows), self.msw)
        p, s = self.geo["pairs"], self.sum["pairs"]
        names = self.part_names()
        lam = Client(self.d.url).results(self.jid, "lambda")
        for k, row in enumerate(rows):
            self.assertEqual(int(row["pair"]), k)
            self.assertEqual([float(row[c]) for c in ("x_mm", "y_mm", "z_mm")],
                             [p["x"][k], p["y"][k], p["z"][k]])
            pj = p["part_j"][k]
            self.assertEqual(row["interface"], "%s/%s" % (names[p["part_i"][k]],
                                                          names[pj] if pj >= 0 else "fixed"))
            for col, key in (("w_mean_mm", "mean"), ("w_std_mm", "std"), ("w_p95_mm", "p95"),
                             ("w_max_mm", "max"), ("share_above", "share_above"),
                             ("lambda_mean_N", "lambda_mean")):
                self.assertEqual(float(row[col]), s[key][k], (k, col))
            want = sum(rw[k] for rw in lam) / len(lam)
            self.assertAlmostEqual(float(row["lambda_mean_N"]), want, delta=1e-9 * (1 + abs(want)))

    def test_vtk_one_gap_and_statistics(self):
        gi = 2
        r = self.d.get("/v1/jobs/%s/results?format=vtp&index=%d&threshold=%g" % (self.jid, gi, THR))
        self.assertEqual(r.status, 200, r.body[:300])
        got = self.read_vtp(r.body)
        res = self.d.get("/v1/jobs/%s/results?offset=%d&limit=1&fields=w,lambda"
                         % (self.jid, gi)).json()["results"][0]
        self.assertEqual(got["arrays"]["g"], self.SG[gi])
        self.assertEqual(got["arrays"]["w"], res["w"])
        self.assertEqual(got["arrays"]["lambda"], res["lambda"])
        for name, key in (("w_mean", "mean"), ("w_p95", "p95"), ("share_above", "share_above"),
                          ("lambda_mean", "lambda_mean")):
            self.assertEqual(got["arrays"][name], self.sum["pairs"][key], name)
        p = self.geo["pairs"]
        self.assertEqual(got["points"][7], [p["x"][7], p["y"][7], p["z"][7]])
        self.assertEqual(got["arrays"]["part_j"], [float(v) for v in p["part_j"]])
        # statistics only
        r = self.d.get("/v1/jobs/%s/summary?format=vtp&threshold=%g" % (self.jid, THR))
        got = self.read_vtp(r.body)
        self.assertNotIn("w", got["arrays"])
        self.assertEqual(got["arrays"]["w_max"], self.sum["pairs"]["max"])

    def test_html(self):
        r = self.d.get("/v1/jobs/%s/summary?format=html&threshold=%g&bins=7" % (self.jid, THR))
        self.assertEqual(r.status, 200)
        self.assertTrue(r.headers["Content-Type"].startswith("text/html"))
        text = r.body.decode()
        root = ET.fromstring(text.split("\n", 1)[1].replace("&nbsp;", " "))  # well-formed
        inst = self.job["options"]["installed"]
        pat = [e for e in root.iter("td") if e.get("id") == "pattern"][0].text
        self.assertTrue(pat.startswith("%d of %d installed: " % (len(inst), len(self.geo["fasteners"]["pair"]))), pat)
        self.assertEqual([int(v) for v in pat.split(": ")[1].split(", ")], inst)
        svgs = [e for e in root.iter() if e.tag.endswith("svg")]
        maps = [s for s in svgs if s.get("class") == "map"]
        self.assertGreaterEqual(len(maps), 3)  # one per interface
        rings = [int(c.get("data-i")) for s in maps for c in s if c.get("class") == "fast"]
        self.assertEqual(sorted(rings), inst)
        hists = [s for s in svgs if s.get("class") == "hist"]
        want = self.d.get("/v1/jobs/%s/summary?threshold=%g&bins=7" % (self.jid, THR)).json()
        self.assertEqual([int(float(b.get("data-count"))) for b in hists[0] if b.get("class") == "bar"],
                         want["residual_histogram"]["counts"])
        self.assertIn("share of gaps with a residual above the threshold", text)
        rows = {th.text: tr.find("td").text for tr in root.iter("tr") for th in tr.findall("th")}
        for label, key in (("warm started", "warm_started"),
                           ("finished by GI relative (the method's own loop did not finish)", "crossovers")):
            self.assertEqual(float(rows[label]), want[key], label)

    def test_errors(self):
        self.assert_error(self.d.get("/v1/jobs/%s/summary?format=xls" % self.jid), 400, "format")
        self.assert_error(self.d.get("/v1/jobs/%s/results?format=vtp" % self.jid), 400, "index")
        self.assert_error(self.d.get("/v1/jobs/%s/results?format=vtp&index=5" % self.jid), 400, "index")

    def test_cli_and_python(self):
        gapsim = binary("gapsim")
        run = lambda *a: subprocess.run([gapsim, "--server", self.d.url, "cloud", "export", self.jid] + list(a),
                                        capture_output=True, text=True)
        api = {f: self.d.get("/v1/jobs/%s/summary?format=%s&threshold=%g" % (self.jid, f, THR)).body
               for f in ("csv", "html", "vtp")}
        for fmt, key in (("csv", "csv"), ("html", "html"), ("vtk", "vtp")):
            out = os.path.join(self.tmp, "x." + key)
            p = run("--format", fmt, "-o", out, "--threshold", str(THR))
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out, "rb") as f:
                self.assertEqual(f.read(), api[key], fmt)
            self.assertEqual(Client(self.d.url).export(self.jid, fmt, threshold=THR), api[key], fmt)
        # one gap, and the time series
        p = run("--format", "vtk", "--gap", "1", "-o", os.path.join(self.tmp, "g1.vtp"))
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(self.tmp, "g1.vtp"), "rb") as f:
            self.assertEqual(f.read(), Client(self.d.url).export(self.jid, "vtk", gap=1))
        sdir = os.path.join(self.tmp, "series")
        p = run("--format", "vtk", "--series", sdir)
        self.assertEqual(p.returncode, 0, p.stderr)
        pvd = ET.parse(os.path.join(sdir, self.jid + ".pvd")).getroot()
        files = [d.get("file") for d in pvd.iter("DataSet")]
        self.assertEqual([int(d.get("timestep")) for d in pvd.iter("DataSet")], list(range(5)))
        for i, fn in enumerate(files):
            with open(os.path.join(sdir, fn), "rb") as f:
                self.assertEqual(self.read_vtp(f.read())["arrays"]["g"], self.SG[i])
        # usage errors
        self.assertEqual(run("--format", "pdf", "-o", "x").returncode, 2)
        self.assertEqual(run("--format", "csv", "--gap", "1", "-o", "x").returncode, 2)
        self.assertEqual(run("--format", "csv").returncode, 2)
        with self.assertRaises(ValueError):
            Client(self.d.url).export(self.jid, "pdf")


if __name__ == "__main__":
    unittest.main()
