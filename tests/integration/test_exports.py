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
  - errors: an unknown format, format=vtp without index, an unsolved index;
  - a model of 18 unnamed parts (36 pairs against the jig, fasteners on pairs
    0, 34, 35): one map per interface, all 18 (there were at most 16, and the
    unnamed parts' interfaces read alike), labels "part <index>"; a
    non-finite statistic (a gap of 1.7e308: the mean of its pair overflows)
    written as a binary DataArray, parsed with base64 + struct; a re-upload
    with other part names says so; the series of a cancelled job;
  - the summary's statistics cover the answers only (GI stopped at
    max_iter = 15: its iterates' penetrations and forces are left out, the
    exports follow); at threshold 0 the round-off residuals of pairs in
    contact are closed (all-zero gaps: share 0); pairs held by fixed_pairs
    (lambda < 0) are in contact, as n_act counts them.
"""
import base64
import csv
import io
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
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


def data_array(root, a):
    """The values of a DataArray: ASCII, or VTK inline binary (an array with a
    NaN or Inf): base64 of a byte count (the file's header_type) then the
    values, in the file's byte_order."""
    if a.get("format") == "ascii":
        return [float(v) for v in a.text.split()]
    assert a.get("format") == "binary" and a.get("type") == "Float64", a.attrib
    assert root.get("byte_order") == "LittleEndian" and root.get("header_type") == "UInt64"
    raw = base64.b64decode("".join(a.text.split()), validate=True)
    (nbytes,) = struct.unpack_from("<Q", raw)
    assert nbytes == len(raw) - 8 and nbytes % 8 == 0, (nbytes, len(raw))
    return list(struct.unpack_from("<%dd" % (nbytes // 8), raw, 8))


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
        vals = data_array(root, a)
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
        with open(model("sandwich", small=True, inline=True, gaps=5)[0]) as f:
            a = json.load(f)
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
        # it counts the open pairs' residuals: titled so, the in-contact ones said apart
        texts = {t.get("class"): t.text for t in hists[0] if t.tag.endswith("text")}
        self.assertEqual(texts["t"], "residual gaps of open pairs (count, log)")
        n_in = want["residual_histogram"]["in_contact"]
        self.assertGreater(n_in, 0)
        self.assertEqual(texts["l note"], "%d residuals of pairs in contact (w = 0) counted apart" % n_in)
        self.assertEqual(sum(want["residual_histogram"]["counts"]) + n_in, want["answers"] * self.msw)
        self.assertNotIn("all pairs", text)
        self.assertIn("share of gaps with a residual above the threshold", text)
        rows = {th.text: tr.find("td").text for tr in root.iter("tr") for th in tr.findall("th")}
        for label, key in (("warm started", "warm_started"),
                           ("finished by GI relative (the method's own loop did not finish)", "crossovers")):
            self.assertEqual(float(rows[label]), want[key], label)

    def test_errors(self):
        self.assert_error(self.d.get("/v1/jobs/%s/summary?format=xls" % self.jid), 422, "format")
        self.assert_error(self.d.get("/v1/jobs/%s/results?format=vtp" % self.jid), 422, "index")
        self.assert_error(self.d.get("/v1/jobs/%s/results?format=vtp&index=5" % self.jid), 422, "index")

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


    # ---- 18 unnamed parts of 2 DOFs each, every node against the jig ----
    PARTS = 18

    def jig_model(self, names=None):
        P = self.PARTS
        return {"format": "gapsim-model", "version": 1,
                "parts": [dict({"ndof": 2, "K": [[2, 0], [0, 2]]},
                               **({"name": names[p]} if names else {})) for p in range(P)],
                "nodes": {"part": [p for p in range(P) for _ in (0, 1)], "dof": [0, 1] * P,
                          "x": [10.0 * v for v in range(2 * P)], "y": [float(v % 2) for v in range(2 * P)]},
                "pairs": {"i": list(range(2 * P)), "j": [-1] * (2 * P)},
                "fasteners": {"pair": [0, 34, 35], "load": [1.0, 1.0, 1.0]}}

    def jig_cloud(self, rows, **opts):
        """A cloud of rows on the jig model (uploaded once), every fastener
        installed; opts: more cloud options."""
        if not hasattr(type(self), "jig"):
            r = self.d.post("/v1/assemblies?wait=1", json.dumps(self.jig_model()).encode(),
                            headers={"Content-Type": "application/json"})
            self.assertEqual(r.status, 201, r.body[:300])
            type(self).jig = r.json()["id"]
        r = self.d.post("/v1/assemblies/%s/clouds" % self.jig,
                        dict({"gaps": rows, "fasteners": "all"}, **opts))
        self.assertEqual(r.status, 202, r.body[:300])
        job = self.d.wait_job(r.json()["id"])
        self.assertEqual((job["status"], job["done"]), ("done", len(rows)))
        return job["id"]

    def test_every_interface_of_unnamed_parts(self):
        m = 2 * self.PARTS
        jid = self.jig_cloud([[0.1 + 0.01 * k + 0.001 * i for k in range(m)] for i in range(3)])
        r = self.d.get("/v1/jobs/%s/summary?format=html" % jid)
        self.assertEqual(r.status, 200)
        text = r.body.decode()
        self.assertEqual(text.count("<figcaption>interface"), 18)
        self.assertEqual(text.count('class="fast"'), 3)
        root = ET.fromstring(text.split("\n", 1)[1])
        maps = [f for f in root.iter("figure") if f.find("figcaption") is not None]
        self.assertEqual([f.find("figcaption").text.split(":")[0] for f in maps],
                         ["interface part %d/fixed" % p for p in range(18)])
        dots = [len([c for c in f[1] if c.get("class") is None]) for f in maps]
        rings = [[int(c.get("data-i")) for c in f[1] if c.get("class") == "fast"] for f in maps]
        self.assertEqual(dots, [2] * 18)  # each part's own two pairs, none overlaid
        self.assertEqual(rings, [[0]] + [[]] * 16 + [[1, 2]])  # fasteners on pairs 0, 34, 35
        rows = list(csv.DictReader(io.StringIO(
            self.d.get("/v1/jobs/%s/summary?format=csv" % jid).body.decode())))
        self.assertEqual([x["interface"] for x in rows], ["part %d/fixed" % (k // 2) for k in range(m)])

    def test_vtp_non_finite_statistic_binary(self):
        m = 2 * self.PARTS
        rows = [[0.1 + 0.01 * k for k in range(m)] for _ in range(2)]
        rows[0][5] = rows[1][5] = 1.7e308  # open: w = g, whose sum over the gaps overflows
        jid = self.jig_cloud(rows)
        s = self.d.get("/v1/jobs/%s/summary" % jid).json()
        self.assertIsNone(s["pairs"]["mean"][5])  # not finite: null in JSON
        self.assertEqual(s["pairs"]["max"][5], 1.7e308)
        for path in ("summary?format=vtp", "results?format=vtp&index=1"):
            r = self.d.get("/v1/jobs/%s/%s" % (jid, path))
            self.assertEqual(r.status, 200, r.body[:300])
            root = ET.fromstring(r.body)
            fmt = {a.get("Name"): a.get("format") for a in root.find("PolyData/Piece/PointData")}
            self.assertEqual(fmt["w_mean"], "binary")  # holds a NaN
            self.assertEqual(fmt["w_max"], "ascii")  # all finite: as before
            got = strict_vtp(r.body, m)["arrays"]
            self.assertTrue(math.isnan(got["w_mean"][5]), got["w_mean"][5])
            self.assertEqual(got["w_mean"][:5] + got["w_mean"][6:],
                             s["pairs"]["mean"][:5] + s["pairs"]["mean"][6:])
            self.assertEqual(got["w_max"], s["pairs"]["max"])
            if "index" in path:
                self.assertEqual((fmt["g"], got["g"]), ("ascii", rows[1]))
            if self.vtk_py:  # and VTK reads every point, the NaN in place
                f = os.path.join(self.tmp, "nonfinite.vtp")
                with open(f, "wb") as fp:
                    fp.write(r.body)
                p = subprocess.run([self.vtk_py, "-c", VTK_READER, f], capture_output=True)
                self.assertEqual(p.returncode, 0, p.stderr.decode()[-2000:])
                v = json.loads(p.stdout)
                self.assertEqual(v["n_points"], m)
                self.assertTrue(math.isnan(v["arrays"]["w_mean"][5]))
                self.assertEqual(v["arrays"]["w_max"][5], 1.7e308)

    def test_reupload_other_part_names_noticed(self):
        jid = self.jig_cloud([[0.2] * (2 * self.PARTS)])
        names = [""] * self.PARTS
        names[3], names[7] = "skin", "spar"
        r = self.d.post("/v1/assemblies?wait=1", json.dumps(self.jig_model(names)).encode(),
                        headers={"Content-Type": "application/json"})
        self.assertEqual(r.status, 200, r.body[:300])
        doc = r.json()
        self.assertEqual((doc["id"], doc["existing"]), (self.jig, True))
        self.assertEqual(doc["notice"],
                         "same content as assembly %s: the existing assembly is used; the part "
                         "names differ (2 of 18 parts, first part 3: \"\" there, \"skin\" in this "
                         "upload): the existing assembly keeps its part names, which label the "
                         "interfaces of its exports" % self.jig)
        rows = list(csv.DictReader(io.StringIO(
            self.d.get("/v1/jobs/%s/summary?format=csv" % jid).body.decode())))
        self.assertEqual(rows[6]["interface"], "part 3/fixed")  # the names kept
        # the same names: the notice as before
        r = self.d.post("/v1/assemblies?wait=1", json.dumps(self.jig_model()).encode(),
                        headers={"Content-Type": "application/json"})
        self.assertEqual(r.json()["notice"],
                         "same content as assembly %s: the existing assembly is used" % self.jig)

    def test_cli_series_of_cancelled_job(self):
        gapsim = binary("gapsim")
        run = lambda job, sdir: subprocess.run(
            [gapsim, "--server", self.d.url, "cloud", "export", job, "--format", "vtk", "--series", sdir],
            capture_output=True, text=True)
        # a long cloud, cancelled once it has results: the series holds those
        r = self.d.post("/v1/assemblies/%s/clouds" % self.sw,
                        {"generate": {"count": 50000, "seed": 5}, "solver": "ipm", "cache": False})
        self.assertEqual(r.status, 202, r.body[:300])
        jid = r.json()["id"]
        t0 = time.time()
        while self.d.get("/v1/jobs/" + jid).json()["done"] < 1 and time.time() - t0 < 60:
            time.sleep(0.01)
        self.assertEqual(self.d.delete("/v1/jobs/" + jid).status, 200)
        job = self.d.wait_job(jid)
        self.assertEqual(job["status"], "cancelled")
        # the running chunks' gaps are stored after the cancel's answer: wait for the last
        while True:
            time.sleep(0.3)
            again = self.d.get("/v1/jobs/" + jid).json()
            if again["done"] == job["done"]:
                break
            job = again
        solved, off = [], 0
        while off is not None:
            page = self.d.get("/v1/jobs/%s/results?offset=%d&limit=1000&fields=none" % (jid, off)).json()
            solved += [x["job_index"] for x in page["results"]]
            off = page["next_offset"]
        self.assertEqual(len(solved), job["done"])
        self.assertLess(len(solved), 50000)
        sdir = os.path.join(self.tmp, "cancelled")
        p = run(jid, sdir)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "gapsim cloud export: job %s was cancelled with %d of 50000 gaps "
                         "solved: the series holds those %d (timestep = gap index)\n"
                         % (jid, len(solved), len(solved)))
        self.assertEqual(p.stdout, "wrote %s/%s.pvd: %d gaps (.vtp each, open the .pvd in ParaView)\n"
                         % (sdir, jid, len(solved)))
        pvd = ET.parse(os.path.join(sdir, jid + ".pvd")).getroot()
        self.assertEqual([int(d.get("timestep")) for d in pvd.iter("DataSet")], solved)
        last = solved[-1]
        with open(os.path.join(sdir, "%s_%05d.vtp" % (jid, last)), "rb") as f:
            g = self.d.get("/v1/jobs/%s/gaps?index=%d" % (jid, last)).json()["g"]
            self.assertEqual(strict_vtp(f.read(), self.msw)["arrays"]["g"], g)
        # cancelled before its first gap: nothing to export, exit 4 (not "wait for it")
        r = self.d.post("/v1/assemblies/%s/clouds" % self.sw,
                        {"generate": {"count": 50000, "seed": 6}, "solver": "ipm", "cache": False})
        long_id = r.json()["id"]
        q = self.d.post("/v1/assemblies/%s/clouds" % self.sw, {"gaps": self.SG[:2]}).json()["id"]
        self.assertEqual(self.d.delete("/v1/jobs/" + q).json()["done"], 0)
        self.assertEqual(self.d.delete("/v1/jobs/" + long_id).status, 200)
        p = run(q, os.path.join(self.tmp, "none"))
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertEqual(p.stderr, "gapsim cloud export: job %s was cancelled with no gap solved "
                         "(0 of 2): there is nothing to export\n" % q)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "none")))


    # ---- which results the statistics cover, and what counts as open ----

    def cloud_results(self, body):
        """Run a cloud on the lap model; (job id, its results with w and lambda)."""
        r = self.d.post("/v1/assemblies/%s/clouds" % self.aid, body)
        self.assertEqual(r.status, 202, r.body[:300])
        jid = self.d.wait_job(r.json()["id"])["id"]
        res = self.d.get("/v1/jobs/%s/results?offset=0&limit=1000&fields=w,lambda" % jid).json()
        return jid, res["results"]

    def test_statistics_cover_answers_only(self):
        # GI stopped early: most gaps end max_iter, whose iterates penetrate
        # (w < 0 by up to 0.5 mm, which w < 0 -> 0 would read as closed) and
        # whose forces are no answer's. The limit: the third fewest active-set
        # changes any of the 12 gaps needs, so that a few finish and most
        # stop (the counts depend on the generator's model)
        _, full = self.cloud_results({"gaps": self.G[:12], "solver": "gi",
                                      "fastener_fraction": 0.5})
        limit = sorted(r["iterations"] for r in full)[2]
        jid, res = self.cloud_results({"gaps": self.G[:12], "solver": "gi", "max_iter": limit,
                                       "fastener_fraction": 0.5, "cache": False})
        ans = [r for r in res if r["status"] == "optimal"]
        self.assertTrue(0 < len(ans) < len(res), [r["status"] for r in res])
        self.assertLess(min(min(r["w"]) for r in res if r["status"] == "max_iter"), -1e-3)
        m, n = self.m, len(ans)
        s = self.d.get("/v1/jobs/%s/summary?threshold=0.02" % jid).json()
        for k in range(m):
            col = [max(0.0, r["w"][k]) for r in ans]
            self.assertAlmostEqual(s["pairs"]["mean"][k], sum(col) / n, delta=1e-12)
            self.assertEqual(s["pairs"]["max"][k], max(col))
            lam = sum(r["lambda"][k] for r in ans) / n
            self.assertAlmostEqual(s["pairs"]["lambda_mean"][k], lam, delta=1e-9 * (1 + abs(lam)))
        in_contact = sum(l != 0 for r in ans for l in r["lambda"])
        self.assertEqual((s["count"], s["answers"], s["failures"]), (len(res), n, len(res) - n))
        self.assertEqual(sum(s["statuses"].values()), len(res))
        self.assertEqual(s["statuses"]["optimal"], n)
        self.assertEqual(s["residual_histogram"]["in_contact"], in_contact)
        self.assertEqual(sum(s["residual_histogram"]["counts"]) + in_contact, n * m)
        self.assertEqual(sum(s["max_residual"]["histogram"]["counts"]), n)
        self.assertEqual(s["max_residual"]["max"], max(max(0.0, v) for r in ans for v in r["w"]))
        self.assertAlmostEqual(s["n_act"]["mean"], sum(r["n_act"] for r in ans) / n, delta=1e-12)
        self.assertEqual(sum(s["time_ms"]["histogram"]["counts"]), len(res))  # every solve's time
        # the exports are of the same statistics
        rows = list(csv.DictReader(io.StringIO(
            self.d.get("/v1/jobs/%s/summary?format=csv&threshold=0.02" % jid).body.decode())))
        self.assertEqual([float(x["w_mean_mm"]) for x in rows], s["pairs"]["mean"])
        self.assertEqual([float(x["lambda_mean_N"]) for x in rows], s["pairs"]["lambda_mean"])

    def test_no_answer_statistics_are_null(self):
        # every gap stopped at max_iter: no answer. The statistics of w,
        # lambda and n_act were 0 (read as "every pair closed"); now null,
        # the counts 0, the times still of every result; the HTML report
        # says there is no answer instead of printing nan or empty maps
        jid, res = self.cloud_results({"gaps": self.G[:3], "solver": "gi", "max_iter": 1,
                                       "fastener_fraction": 1, "cache": False})
        self.assertEqual({r["status"] for r in res}, {"max_iter"})
        s = self.d.get("/v1/jobs/%s/summary" % jid).json()
        self.assertEqual((s["count"], s["answers"], s["failures"]), (3, 0, 3))
        for key in ("share_gaps_above", "share_values_above"):
            self.assertIsNone(s[key], key)
        for dist in ("max_residual", "n_act"):
            for key in ("min", "mean", "median", "p95", "max"):
                self.assertIsNone(s[dist][key], (dist, key))
            self.assertEqual(set(s[dist]["histogram"]["edges"]), {None}, dist)
            self.assertEqual(sum(s[dist]["histogram"]["counts"]), 0, dist)
        for key in ("mean", "std", "max", "p95", "share_above", "lambda_mean", "opened"):
            self.assertEqual(s["pairs"][key], [None] * self.m, key)
        self.assertEqual((s["opened"]["gaps"], s["opened"]["pairs"], s["opened"]["share_gaps"]),
                         (0, 0, None))
        self.assertGreater(s["time_ms"]["median"], 0)  # every result's time
        self.assertEqual(sum(s["time_ms"]["histogram"]["counts"]), 3)
        html = self.d.get("/v1/jobs/%s/summary?format=html" % jid).body.decode()
        self.assertIn('id="no-answer"', html)
        self.assertNotIn("nan", html)
        self.assertNotIn("Where gaps stay open", html)
        ET.fromstring(html.split("\n", 1)[1])  # well-formed

    def test_threshold_zero_roundoff_is_closed(self):
        # all-zero gaps under half the fasteners: every residual is 0 up to
        # round-off (some positive, below 1e-13 mm), so nothing is above 0
        jid, res = self.cloud_results({"gaps": [[0.0] * self.m] * 2, "fastener_fraction": 0.5})
        self.assertEqual({r["status"] for r in res}, {"optimal"})
        self.assertLess(max(v for r in res for v in r["w"]), 1e-9)
        self.assertTrue(any(v > 0 for r in res for v in r["w"]))  # the round-off is there
        for thr in (0, 1e-12):
            s = self.d.get("/v1/jobs/%s/summary?threshold=%g" % (jid, thr)).json()
            self.assertEqual((s["share_gaps_above"], s["share_values_above"]), (0, 0), thr)
            self.assertEqual(max(s["pairs"]["share_above"]), 0, thr)

    def test_fixed_pairs_pulling_are_in_contact(self):
        # pairs 1, 2, 5 held shut on gaps of 0.2 mm: w = 0 and lambda < 0
        jid = self.jig_cloud([[0.2] * (2 * self.PARTS), [0.1 + 0.01 * k for k in range(2 * self.PARTS)]],
                             fixed_pairs=[1, 2, 5])
        res = self.d.get("/v1/jobs/%s/results?offset=0&limit=10&fields=w,lambda" % jid).json()["results"]
        self.assertTrue(all(r["lambda"][k] < 0 for r in res for k in (1, 2, 5)))
        s = self.d.get("/v1/jobs/%s/summary?threshold=0.1" % jid).json()
        h = s["residual_histogram"]
        self.assertEqual(h["in_contact"], sum(r["n_act"] for r in res))
        self.assertEqual(sum(h["counts"]), sum(l == 0 for r in res for l in r["lambda"]))


if __name__ == "__main__":
    unittest.main()
