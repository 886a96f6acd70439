"""test_web -- the web page (clients/web) in headless Chromium against a real gapsimd.

One daemon serving the page, one small lap-joint assembly. Page loads,
each selected by URL parameters so no clicks are needed:
  1. /?assembly=A&submit_demo=K&seed=S&fraction=0.5&label=L: the page asks the
     server to generate K gaps ({"generate": {"count", "seed"}}, labelled) and
     shows the job's progress (the DOM names the job);
  2. /?assembly=A&job=J&gap=G&mode=residual&threshold=T&bins=B: heat map,
     color bar, summary and histograms, checked against the API;
  3. the same with mode=initial: the initial gaps the page shows (from
     GET /v1/jobs/{id}/gaps) are the gaps gapsim-gen makes with the same seed,
     and solving them again gives the job's residuals; initial and residual
     share one colour scale (scale=auto: each its own);
  4. a small sandwich joint, whose stacked interfaces share (x, y): one panel
     per layer titled with its parts' names, all with the same y axis, no dot
     hidden under another;
  5. ?click=i,j (a test hook dispatching click events on the candidate rings)
     with submit_demo: the cloud is submitted with the clicked pattern; with
     submit_again: the shown cloud's gaps again under it (gaps_from, warm);
  6. the exceedance view and the summary's statistics; gap controls hidden;
  7. the contact-force view and the initial-vs-residual scatter; the job
     label and the job filter;
  8. screenshots of every view (GS_BIN_DIR/web-<view>.png, 1400 x 1000; the
     ones in docs/ are copies).

Chromium (Debian package chromium; scripts/test installs it) is required: if it
is missing the test fails and says so, it is not skipped.
"""
import os
import re
import shutil
import struct
import subprocess
import tempfile
import unittest
from html.parser import HTMLParser

from api_common import DaemonCase
from gsd_harness import BIN_DIR, SOURCE_DIR, TMP, gen_model, loop_model, read_npy

K = 12          # demo gaps the page submits
SEED = 3        # demo seed
GAP = 5         # gap shown
BINS = 12       # histogram bins asked through the URL
THRESHOLD = 0.05
LABEL = "page run"

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag = tag
        self.attrs = dict(attrs)
        self.parent = parent
        self.children = []
        self.text = ""

    @property
    def classes(self):
        return (self.attrs.get("class") or "").split()

    def iter(self):
        yield self
        for c in self.children:
            yield from c.iter()

    def find_all(self, tag=None, cls=None):
        return [n for n in self.iter() if (tag is None or n.tag == tag) and (cls is None or cls in n.classes)]

    def all_text(self):
        return self.text + "".join(c.all_text() for c in self.children)


class Dom(HTMLParser):
    """The dumped DOM as a small tree (stdlib only)."""

    def __init__(self, html):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {}, None)
        self.cur = self.root
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.text += data

    def by_id(self, ident):
        for n in self.root.iter():
            if n.attrs.get("id") == ident:
                return n
        return None


def find_chromium():
    for name in (os.environ.get("GS_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", head[16:24])


class WebPage(DaemonCase):
    daemon_extra = ["--web-dir", os.path.join(SOURCE_DIR, "clients", "web")]

    @classmethod
    def setUpClass(cls):
        cls.browser = find_chromium()
        if not cls.browser:
            raise RuntimeError(
                "test_web needs headless Chromium and none was found (chromium, chromium-browser, "
                "google-chrome or $GS_CHROMIUM): install the Debian package chromium "
                "(scripts/test does it: scripts/setup chromium)")
        os.makedirs(TMP, exist_ok=True)
        cls.work = tempfile.mkdtemp(prefix="web-", dir=TMP)
        cls.profile = os.path.join(cls.work, "chromium-profile")
        super().setUpClass()

    @classmethod
    def prepare(cls):
        model, cls.gaps_npy = gen_model(cls.work, kind="lap", small=True, inline=True, gaps=K,
                                        extra=["--seed", str(SEED)])
        with open(model, "rb") as f:
            r = cls.d.post("/v1/assemblies?wait=1", f.read(), headers={"Content-Type": "application/json"})
        assert r.status in (200, 201), r.body
        cls.asm = r.json()
        assert cls.asm["status"] == "ready", cls.asm
        cls.geo = cls.d.get("/v1/assemblies/%s/geometry" % cls.asm["id"]).json()
        cls.m = cls.asm["m"]

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            shutil.rmtree(cls.work, ignore_errors=True)

    # ---- helpers
    def load(self, query, screenshot=None, message=False):
        """Load /?query headless; returns the DOM after the page settled (which
        must show no message unless message is true)."""
        url = self.d.url + "/?" + query
        args = [self.browser, "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--disable-dev-shm-usage",
                "--no-first-run", "--user-data-dir=" + self.profile, "--hide-scrollbars",
                "--virtual-time-budget=10000"]
        if screenshot:
            args += ["--screenshot=" + screenshot, "--window-size=1400,1000", url]
        else:
            args += ["--window-size=1400,1000", "--dump-dom", url]
        p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        self.assertEqual(p.returncode, 0, "chromium failed: %s" % p.stderr.decode(errors="replace")[-2000:])
        if screenshot:
            return None
        html = p.stdout.decode("utf-8")
        self.assertIn('data-ready="1"', html, "the page did not finish loading:\n" + html[:3000])
        dom = Dom(html)
        msg = dom.by_id("message")
        self.assertIsNotNone(msg)
        if not message:
            self.assertIn("hidden", msg.attrs, "the page shows an error: %s" % msg.all_text())
        return dom

    def submit_from_page(self):
        if hasattr(type(self), "job"):
            return type(self).job
        dom = self.load("assembly=%s&submit_demo=%d&seed=%d&fraction=0.5&label=%s"
                        % (self.asm["id"], K, SEED, LABEL.replace(" ", "+")))
        prog = dom.by_id("progress")
        job_id = prog.attrs.get("data-job")
        self.assertTrue(job_id and job_id.startswith("j_"), "the page did not submit a cloud: %r" % prog.attrs)
        self.assertNotIn("hidden", prog.attrs, "the progress bar is not shown")
        self.assertEqual(int(prog.attrs["data-total"]), K)
        job = self.d.wait_job(job_id)
        self.assertEqual(job["status"], "done")
        self.assertEqual((job["total"], job["done"], job["failed"]), (K, K, 0))
        self.assertEqual(job["options"].get("fastener_fraction"), 0.5)
        self.assertEqual(job["assembly_id"], self.asm["id"])
        self.assertEqual(job["options"]["generate"], {"count": K, "seed": SEED})
        self.assertEqual(job["options"]["label"], LABEL)
        type(self).job = job
        return job

    def view(self, mode):
        job = self.submit_from_page()
        return self.load("assembly=%s&job=%s&gap=%d&mode=%s&threshold=%g&bins=%d"
                         % (self.asm["id"], job["id"], GAP, mode, THRESHOLD, BINS))

    # ---- tests
    def test_1_residual_view(self):
        job = self.submit_from_page()
        dom = self.view("residual")
        m = self.m
        # heat map: one circle per contact pair, at the geometry's coordinates
        svg = dom.by_id("map")
        nodes = svg.find_all("circle", "node")
        self.assertEqual(len(nodes), m)
        nodes.sort(key=lambda c: int(c.attrs["data-k"]))
        self.assertEqual([int(c.attrs["data-k"]) for c in nodes], list(range(m)))
        fast = svg.find_all("circle", "fastener")
        nf = len(self.geo["fasteners"]["pair"])
        self.assertEqual(len(fast), nf)
        self.assertEqual([int(c.attrs["data-pair"]) for c in fast], self.geo["fasteners"]["pair"])
        installed = [c for c in fast if "installed" in c.classes]
        self.assertEqual(len(installed), int(round(0.5 * nf)))
        texts = [t.all_text() for t in svg.find_all("text")]
        self.assertIn("x (mm)", texts)
        self.assertIn("y (mm)", texts)
        # aspect ratio kept: node spacing in x and y in pixels per mm agree
        xs, ys = self.geo["pairs"]["x"], self.geo["pairs"]["y"]
        k0 = 0
        kx = max(range(m), key=lambda k: (xs[k] - xs[k0]) ** 2)
        ky = max(range(m), key=lambda k: (ys[k] - ys[k0]) ** 2)
        sx = (float(nodes[kx].attrs["cx"]) - float(nodes[k0].attrs["cx"])) / (xs[kx] - xs[k0])
        sy = -(float(nodes[ky].attrs["cy"]) - float(nodes[k0].attrs["cy"])) / (ys[ky] - ys[k0])
        self.assertAlmostEqual(sx / sy, 1.0, delta=0.01)
        # colors are the residual gaps of the chosen gap
        res = self.d.get("/v1/jobs/%s/results?offset=%d&limit=1&fields=w" % (job["id"], GAP)).json()
        w = res["results"][0]["w"]
        self.assertEqual(res["results"][0]["job_index"], GAP)
        self.assertEqual([float(c.attrs["data-v"]) for c in nodes], w)
        self.assertTrue(all(c.attrs.get("fill", "").startswith("#") for c in nodes))
        self.assertGreater(len({c.attrs["fill"] for c in nodes}), 3, "the heat map has no color variation")
        # color bar labeled in mm
        cb = dom.by_id("colorbar")
        ticks = [t.all_text() for t in cb.find_all("text", "cb-tick")]
        self.assertGreaterEqual(len(ticks), 3, ticks)
        self.assertTrue(all(t.endswith(" mm") for t in ticks), ticks)
        self.assertEqual(float(ticks[0].split()[0]), 0.0)
        self.assertGreaterEqual(float(ticks[-1].split()[0]) * 1.3, max(w))
        self.assertIn("(mm)", cb.find_all("text", "cb-title")[0].all_text())
        # the gap picker covers the cloud
        self.assertEqual(dom.by_id("gap-slider").attrs["max"], str(K - 1))
        self.assertEqual(dom.by_id("gap-index").attrs["value"], str(GAP))
        self.assertNotIn("disabled", dom.by_id("mode-initial").attrs)
        # summary: the API's numbers for the same threshold and bins
        s = self.d.get("/v1/jobs/%s/summary?threshold=%g&bins=%d" % (job["id"], THRESHOLD, BINS)).json()

        def val(ident):
            n = dom.by_id(ident)
            self.assertIsNotNone(n, ident)
            return float(n.attrs["data-value"])

        self.assertEqual(val("stat-count"), s["count"])
        self.assertEqual(val("stat-share-gaps"), s["share_gaps_above"])
        self.assertEqual(val("stat-share-values"), s["share_values_above"])
        self.assertEqual(val("stat-maxres-p95"), s["max_residual"]["p95"])
        self.assertEqual(val("stat-maxres-max"), s["max_residual"]["max"])
        self.assertEqual(val("stat-nact-median"), s["n_act"]["median"])
        self.assertEqual(val("stat-time-median"), s["time_ms"]["median"])
        for ident, hist in (("hist-residual", s["residual_histogram"]),
                            ("hist-maxres", s["max_residual"]["histogram"]),
                            ("hist-nact", s["n_act"]["histogram"]),
                            ("hist-time", s["time_ms"]["histogram"])):
            bars = dom.by_id(ident).find_all("rect", "hist-bar")
            self.assertEqual(len(bars), BINS, ident)
            self.assertEqual([int(b.attrs["data-count"]) for b in bars], hist["counts"], ident)
        self.assertEqual(sum(int(b.attrs["data-count"]) for b in dom.by_id("hist-residual").find_all("rect", "hist-bar")),
                         K * m - s["residual_histogram"]["in_contact"])
        # assemblies and jobs lists
        rows = dom.by_id("assemblies").find_all("tr", "asm-row")
        self.assertEqual([r.attrs["data-id"] for r in rows], [self.asm["id"]])
        self.assertIn(str(m), rows[0].all_text())
        jobs = dom.by_id("jobs").find_all("tr", "job-row")
        self.assertEqual([r.attrs["data-id"] for r in jobs], [job["id"]])
        self.assertIn("selected", jobs[0].classes)

    def test_2_initial_view_is_the_solved_cloud(self):
        dom = self.view("initial")
        nodes = sorted(dom.by_id("map").find_all("circle", "node"), key=lambda c: int(c.attrs["data-k"]))
        self.assertEqual([int(c.attrs["data-k"]) for c in nodes], list(range(self.m)))
        g_page = [float(c.attrs["data-v"]) for c in nodes]
        shape, flat = read_npy(self.gaps_npy)
        self.assertEqual(shape, (K, self.m))
        g_gen = flat[GAP * self.m:(GAP + 1) * self.m]
        # the server's generator is gapsim-gen's: the same gaps, to the bit
        self.assertEqual(g_page, g_gen)
        # and they are what the daemon solved: solving them again gives the job's residuals
        job = self.submit_from_page()
        r = self.d.post("/v1/assemblies/%s/solve" % self.asm["id"],
                        {"g": g_page, "fastener_fraction": 0.5, "return": ["w"]})
        self.assertEqual(r.status, 200, r.body)
        w_solve = r.json()["w"]
        w_job = self.d.get("/v1/jobs/%s/results?offset=%d&limit=1&fields=w" % (job["id"], GAP)).json()["results"][0]["w"]
        self.assertLess(max(abs(a - b) for a, b in zip(w_solve, w_job)), 1e-9)
        ticks = [t.all_text() for t in dom.by_id("colorbar").find_all("text", "cb-tick")]
        self.assertTrue(ticks and all(t.endswith(" mm") for t in ticks), ticks)
        self.assertIn("initial gap", dom.by_id("colorbar").find_all("text", "cb-title")[0].all_text())
        # one colour scale for the initial and residual views of a gap: the
        # larger maximum, rounded up (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^k)
        top = float(dom.by_id("colorbar").attrs["data-top"])
        self.assertGreaterEqual(top, max(max(g_page), max(w_job)))
        self.assertLessEqual(top, 1.25 * max(max(g_page), max(w_job)))
        dom_r = self.view("residual")
        self.assertEqual(float(dom_r.by_id("colorbar").attrs["data-top"]), top)
        self.assertIn("scale shared", dom_r.by_id("colorbar").find_all("text", "cb-title")[0].all_text())
        # own scale per view (scale=auto): the residual view's top follows max w
        dom_a = self.load("assembly=%s&job=%s&gap=%d&mode=residual&scale=auto" % (self.asm["id"], job["id"], GAP))
        top_a = float(dom_a.by_id("colorbar").attrs["data-top"])
        self.assertGreaterEqual(top_a, max(w_job))
        self.assertLessEqual(top_a, 1.25 * max(w_job))
        self.assertIn("checked", dom_a.by_id("scale-auto").attrs)

    def test_4_stacked_interfaces_get_panels(self):
        # the sandwich joint: interfaces stacked in z share (x, y) positions
        sw_dir = os.path.join(self.work, "sandwich")
        os.makedirs(sw_dir, exist_ok=True)
        model, gaps = gen_model(sw_dir, kind="sandwich", small=True, inline=True, gaps=2)
        with open(model, "rb") as f:
            asm = self.d.post("/v1/assemblies?wait=1", f.read(), headers={"Content-Type": "application/json"}).json()
        self.assertEqual(asm["status"], "ready", asm)
        with open(gaps, "rb") as f:
            r = self.d.post("/v1/assemblies/%s/clouds?fastener_fraction=1" % asm["id"], f.read(),
                            headers={"Content-Type": "application/x-npy"})
        self.assertEqual(r.status, 202, r.body)
        job = self.d.wait_job(r.json()["id"])
        try:
            dom = self.load("assembly=%s&job=%s&gap=1&mode=initial" % (asm["id"], job["id"]))
            svg = dom.by_id("map")
            nodes = svg.find_all("circle", "node")
            self.assertEqual(len(nodes), asm["m"])
            p = self.d.get("/v1/assemblies/%s/geometry" % asm["id"]).json()["pairs"]
            layers = {(f, z) for f, z in zip(p["fixed"], p["z"])}
            titles = [t.all_text() for t in svg.find_all("text", "layer-title")]
            self.assertEqual(len(titles), len(layers), titles)
            self.assertGreater(len(layers), 1)
            # each title names its interfaces by the model's part names
            names = self.d.get("/v1/assemblies/%s/geometry" % asm["id"]).json()["parts"]
            for t in titles:
                self.assertTrue(any(n in t for n in names), t)
            self.assertTrue(any("fixed jig" in t for t in titles) == any(p["fixed"]), titles)
            # every panel has the same y axis: the same tick labels, as many as panels
            yt = [t.all_text() for t in svg.find_all("text", "y-tick")]
            per = len(yt) // len(titles)
            self.assertEqual(len(yt), per * len(titles))
            self.assertEqual([yt[i * per:(i + 1) * per] for i in range(len(titles))], [yt[:per]] * len(titles))
            spots = {(c.attrs["cx"], c.attrs["cy"]) for c in nodes}
            self.assertEqual(len(spots), len(nodes), "dots drawn over each other")
            # initial view of an uploaded cloud: the server's gaps (GET /v1/jobs/{id}/gaps?index=i)
            shape, flat = read_npy(gaps)
            m = asm["m"]
            v = [float(c.attrs["data-v"]) for c in sorted(nodes, key=lambda c: int(c.attrs["data-k"]))]
            self.assertEqual(v, flat[m:2 * m])
            self.assertTrue(all("installed" in c.classes for c in svg.find_all("circle", "fastener")))
            out_dir = BIN_DIR if os.path.isdir(BIN_DIR) else TMP
            path = os.path.join(out_dir, "web-sandwich.png")
            self.load("assembly=%s&job=%s&gap=1&mode=residual" % (asm["id"], job["id"]), screenshot=path)
            self.assertEqual(png_size(path), (1400, 1000))
        finally:
            self.d.delete("/v1/assemblies/%s" % asm["id"])

    def test_5_clicked_pattern_is_submitted(self):
        # clicking candidates (the ?click= hook dispatches real click events on
        # the rings) toggles them in the shown job's pattern; the demo cloud is
        # submitted with the result
        base = self.submit_from_page()
        nf = len(self.geo["fasteners"]["pair"])
        clicks = [0, 3, nf - 1]
        picked = sorted(set(base["options"]["installed"]) ^ set(clicks))
        dom = self.load("assembly=%s&job=%s&click=%s,5,5&submit_demo=2&seed=9"
                        % (self.asm["id"], base["id"], ",".join(map(str, clicks))))
        info = dom.by_id("pattern-info")
        self.assertEqual(info.attrs.get("data-pattern"), "", "the pattern is reset after submission")
        job_id = dom.by_id("progress").attrs.get("data-job")
        self.assertTrue(job_id and job_id.startswith("j_"))
        job = self.d.wait_job(job_id)
        self.assertEqual(job["options"]["fasteners"], picked)  # 5 clicked twice: off again
        self.assertEqual(job["options"]["installed"], picked)
        self.assertNotIn("fastener_fraction", job["options"])
        # the job's page marks exactly those rings installed
        dom = self.load("assembly=%s&job=%s&gap=0&mode=residual" % (self.asm["id"], job_id))
        fast = dom.by_id("map").find_all("circle", "fastener")
        self.assertEqual([int(c.attrs["data-i"]) for c in fast if "installed" in c.classes], picked)
        # clicks without submitting: the picked pattern is shown and announced
        dom = self.load("assembly=%s&job=%s&click=1,2" % (self.asm["id"], job_id))
        self.assertEqual(dom.by_id("pattern-info").attrs.get("data-pattern"),
                         ",".join(map(str, sorted(set(picked) ^ {1, 2}))))
        self.d.delete("/v1/jobs/%s" % job_id)

    def test_5b_same_gaps_other_pattern(self):
        # "same gaps, this pattern" (?submit_again=1 with clicks): a cloud of
        # the shown job's gaps (gaps_from), warm from it, under the clicked
        # pattern; the button is enabled with a job shown
        base = self.submit_from_page()
        dom = self.load("assembly=%s&job=%s" % (self.asm["id"], base["id"]))
        self.assertNotIn("disabled", dom.by_id("again-submit").attrs)
        clicks = [1, 2]
        picked = sorted(set(base["options"]["installed"]) ^ set(clicks))
        dom = self.load("assembly=%s&job=%s&click=%s&submit_again=1&label=again"
                        % (self.asm["id"], base["id"], ",".join(map(str, clicks))))
        job_id = dom.by_id("progress").attrs.get("data-job")
        self.assertTrue(job_id and job_id.startswith("j_") and job_id != base["id"])
        job = self.d.wait_job(job_id)
        self.assertEqual((job["status"], job["total"], job["failed"]), ("done", K, 0))
        opts = job["options"]
        self.assertEqual((opts["gaps_from"], opts["warm_start"]), (base["id"], base["id"]))
        self.assertEqual((opts["fasteners"], opts["label"]), (picked, "again"))
        self.assertNotIn("generate", opts)
        for i in (0, K - 1):
            self.assertEqual(self.d.get("/v1/jobs/%s/gaps?index=%d" % (job_id, i)).json()["g"],
                             self.d.get("/v1/jobs/%s/gaps?index=%d" % (base["id"], i)).json()["g"])
        s = self.d.get("/v1/jobs/%s/summary" % job_id).json()
        self.assertEqual(s["warm_started"], K)
        self.d.delete("/v1/jobs/%s" % job_id)
        # without a job shown (an empty job= selects none) there is nothing
        # to take the gaps from
        dom = self.load("assembly=%s&job=" % self.asm["id"])
        self.assertIn("disabled", dom.by_id("again-submit").attrs)

    def test_6_statistics_views(self):
        # exceedance map (share of gaps above the threshold per pair), zeros
        # apart in the residual histogram, pairs opened by fastening, solve
        # times on a log axis: all the API's numbers
        job = self.submit_from_page()
        dom = self.view("exceed")
        s = self.d.get("/v1/jobs/%s/summary?threshold=%g&bins=%d" % (job["id"], THRESHOLD, BINS)).json()
        nodes = sorted(dom.by_id("map").find_all("circle", "node"), key=lambda c: int(c.attrs["data-k"]))
        self.assertEqual([float(c.attrs["data-v"]) for c in nodes], s["pairs"]["share_above"])
        self.assertIn("share of the cloud's gaps", dom.by_id("colorbar").find_all("text", "cb-title")[0].all_text())
        self.assertFalse(any(t.all_text().endswith("mm") for t in dom.by_id("colorbar").find_all("text", "cb-tick")))
        self.assertEqual(float(dom.by_id("stat-in-contact").attrs["data-value"]), s["residual_histogram"]["in_contact"])
        self.assertIn("%d pair residuals in contact" % s["residual_histogram"]["in_contact"],
                      dom.by_id("cap-residual").all_text().replace(",", ""))
        self.assertEqual(float(dom.by_id("stat-opened").attrs["data-value"]), s["opened"]["pairs"])
        self.assertEqual(dom.by_id("opened-why").all_text(), s["opened"]["why"])
        for sid, key in (("stat-warm", "warm_started"), ("stat-crossovers", "crossovers")):
            self.assertEqual(float(dom.by_id(sid).attrs["data-value"]), s[key])
            self.assertEqual(dom.by_id(sid).all_text(), "%d of %d" % (s[key], s["count"]))
        h = s["time_ms"]["histogram"]
        self.assertTrue(h["log"])
        bars = dom.by_id("hist-time").find_all("rect", "hist-bar")
        self.assertEqual([int(b.attrs["data-count"]) for b in bars], h["counts"])
        widths = [float(b.attrs["width"]) for b in bars]  # equal widths: log-spaced edges on a log axis
        self.assertLess(max(widths) - min(widths), 0.01)
        # per-cloud views: the gap controls do not apply and are hidden
        self.assertIn("hidden", dom.by_id("gap-controls").attrs)
        self.assertIn("hidden", dom.by_id("scale-pick").attrs)
        self.assertNotIn("hidden", self.view("residual").by_id("gap-controls").attrs)

    def test_7_force_view_scatter_labels(self):
        job = self.submit_from_page()
        dom = self.view("force")
        res = self.d.get("/v1/jobs/%s/results?offset=%d&limit=1&fields=w,lambda" % (job["id"], GAP)).json()["results"][0]
        nodes = sorted(dom.by_id("map").find_all("circle", "node"), key=lambda c: int(c.attrs["data-k"]))
        self.assertEqual([float(c.attrs["data-v"]) for c in nodes], res["lambda"])
        self.assertGreater(max(res["lambda"]), 0)
        ticks = [t.all_text() for t in dom.by_id("colorbar").find_all("text", "cb-tick")]
        self.assertTrue(ticks and all(t.endswith(" N") for t in ticks), ticks)
        self.assertNotIn("hidden", dom.by_id("gap-controls").attrs)
        # the scatter: one dot per pair at (g, w), classes by contact / prying
        g = self.d.get("/v1/jobs/%s/gaps?index=%d" % (job["id"], GAP)).json()["g"]
        w = res["w"]
        pts = sorted(dom.by_id("scatter").find_all("circle", "sc-pt"), key=lambda c: int(c.attrs["data-k"]))
        self.assertEqual(len(pts), self.m)
        self.assertEqual([float(c.attrs["data-g"]) for c in pts], g)
        self.assertEqual([float(c.attrs["data-w"]) for c in pts], w)
        contact = sum(1 for v in res["lambda"] if v > 0)  # in contact: a force, w ~ 0
        self.assertEqual(contact, res["n_act"])
        opened = sum(1 for a, b in zip(g, w) if b > a + THRESHOLD)
        self.assertEqual(sum("contact" in c.classes for c in pts), contact)
        self.assertEqual(sum("opened" in c.classes for c in pts), opened)
        info = dom.by_id("scatter-info").attrs
        self.assertEqual((int(info["data-contact"]), int(info["data-opened"])), (contact, opened))
        # the label names the job in the list; the filter keeps matching jobs (and the selected one)
        rows = dom.by_id("jobs").find_all("tr", "job-row")
        row = [r for r in rows if r.attrs["data-id"] == job["id"]][0]
        self.assertIn(LABEL, row.all_text())
        st = dom.by_id("server-status")
        self.assertEqual(int(st.attrs["data-jobs-active"]), self.d.get("/healthz").json()["jobs_active"])
        self.assertIn("running", st.all_text())
        health = self.d.get("/healthz").json()
        self.assertEqual(int(st.attrs["data-assemblies-loaded"]), health["assemblies_loaded"])
        self.assertGreater(health["assemblies_loaded"], 0)
        self.assertIn("%d assembl" % health["assemblies_loaded"], st.all_text())
        mib = re.search(r"\((\d+) MiB\)", st.all_text())
        self.assertIsNotNone(mib, st.all_text())
        self.assertLessEqual(abs(int(mib.group(1)) - health["assemblies_mb"]), 1)
        # its title (shown on hover): the reasons when degraded (none here), the BLAS kernel
        self.assertEqual(st.attrs.get("title"), "BLAS kernel %s%s" % (
            health["blas"]["kernel"], " (OPENBLAS_CORETYPE)" if health["blas"]["pinned"] else ""))
        other = self.d.post("/v1/assemblies/%s/clouds" % self.asm["id"],
                            {"generate": {"count": 1, "seed": 99}, "label": "other"})
        self.assertEqual(other.status, 202, other.body)
        oid = other.json()["id"]
        self.d.wait_job(oid)
        try:
            dom = self.load("assembly=%s&job=%s&filter=other" % (self.asm["id"], oid))
            self.assertEqual([r.attrs["data-id"] for r in dom.by_id("jobs").find_all("tr", "job-row")], [oid])
            self.assertIn("1 of", dom.by_id("jobs-filtered").all_text())
            dom = self.load("assembly=%s&job=%s&filter=PAGE" % (self.asm["id"], job["id"]))
            ids = [r.attrs["data-id"] for r in dom.by_id("jobs").find_all("tr", "job-row")]
            self.assertIn(job["id"], ids)
            self.assertNotIn(oid, ids)
        finally:
            self.d.delete("/v1/jobs/%s" % oid)
        # scatter and chain from the URL reach the request; the gaps are
        # gapsim-gen's with the same seed and scatter
        dom = self.load("assembly=%s&submit_demo=3&seed=4&scatter=0.2&chain=auto&label=chained"
                        % self.asm["id"])
        cid = dom.by_id("progress").attrs.get("data-job")
        self.assertTrue(cid and cid.startswith("j_"), dom.by_id("progress").attrs)
        cj = self.d.wait_job(cid)
        try:
            self.assertEqual(cj["options"]["generate"], {"count": 3, "seed": 4, "scatter": 0.2})
            self.assertEqual(cj["options"]["chain"], "auto")
            sdir = tempfile.mkdtemp(prefix="web-scatter-", dir=TMP)
            _, sg = gen_model(sdir, kind="lap", small=True, gaps=3,
                                extra=["--seed", "4", "--scatter", "0.2"])
            shape, flat = read_npy(sg)
            g1 = self.d.get("/v1/jobs/%s/gaps?index=1" % cid).json()["g"]
            self.assertEqual(g1, flat[shape[1]:2 * shape[1]])
        finally:
            self.d.delete("/v1/jobs/%s" % cid)

    def test_7b_infeasible_gap_shows_its_proof(self):
        """A gap whose gaps contradict (pairs closing a loop, Q singular: the
        assembly stays ready without L_Q) is shown as what it is: lambda
        holds proof weights (no unit), not forces, and there is no
        residual-gap scatter for it."""
        loop = loop_model()
        r = self.d.post("/v1/assemblies?wait=1", loop)
        self.assertEqual(r.status, 201, r.body[:300])
        aid = r.json()["id"]
        try:
            r = self.d.post("/v1/assemblies/%s/clouds" % aid,
                            {"gaps": [[0.1, 0.1, -0.3, 0.5], [0.1, 0.1, 0.3, 0.5]]})
            self.assertEqual(r.status, 202, r.body[:300])
            job = self.d.wait_job(r.json()["id"])
            res = self.d.get("/v1/jobs/%s/results?fields=w,lambda" % job["id"]).json()["results"]
            self.assertEqual([x["status"] for x in res], ["infeasible", "optimal"])
            dom = self.load("assembly=%s&job=%s&gap=0&mode=force" % (aid, job["id"]))
            info = dom.by_id("gap-info").all_text()
            self.assertIn("the gaps contradict", info)
            self.assertIn("name 3 pairs, largest 1", info)
            self.assertNotIn("contact forces", info)
            self.assertNotIn("pairs in contact", info)
            ticks = [t.all_text() for t in dom.by_id("colorbar").find_all("text", "cb-tick")]
            self.assertTrue(ticks and not any(t.endswith(" N") for t in ticks), ticks)
            self.assertIn("hidden", dom.by_id("scatter-panel").attrs)
            # the cloud's statistics cover the one answer
            self.assertEqual(float(dom.by_id("stat-answers").attrs["data-value"]), 1)
            self.assertEqual(float(dom.by_id("stat-count").attrs["data-value"]), 2)
            # the feasible gap of the same cloud: forces in N and its scatter
            dom = self.load("assembly=%s&job=%s&gap=1&mode=force" % (aid, job["id"]))
            self.assertIn("contact forces", dom.by_id("gap-info").all_text())
            self.assertNotIn("hidden", dom.by_id("scatter-panel").attrs)
        finally:
            self.d.delete("/v1/assemblies/" + aid)

    def test_8_screenshots(self):
        job = self.submit_from_page()
        out_dir = BIN_DIR if os.path.isdir(BIN_DIR) else TMP
        for mode in ("residual", "initial", "force", "p95", "exceed"):
            path = os.path.join(out_dir, "web-%s.png" % mode)
            if os.path.exists(path):
                os.remove(path)
            self.load("assembly=%s&job=%s&gap=%d&mode=%s&threshold=%g" % (self.asm["id"], job["id"], GAP, mode, THRESHOLD),
                      screenshot=path)
            self.assertTrue(os.path.exists(path), "no screenshot written")
            self.assertEqual(png_size(path), (1400, 1000))
            self.assertGreater(os.path.getsize(path), 20000)
            print("\nscreenshot: %s" % os.path.abspath(path))


    def test_9_job_link_opens_its_assembly(self):
        # a link to a cloud (?job=J, with no or another assembly=) opens J with
        # J's own assembly (GET /v1/jobs/{id} names it), whichever assembly
        # the page would otherwise select (the first ready one)
        other_dir = os.path.join(self.work, "other")
        os.makedirs(other_dir, exist_ok=True)
        model, _ = gen_model(other_dir, kind="lap", small=True, inline=True, gaps=1, name="other",
                             extra=["--fast-load", "420"])  # another content: another assembly
        with open(model, "rb") as f:
            r = self.d.post("/v1/assemblies?wait=1", f.read(), headers={"Content-Type": "application/json"})
        self.assertIn(r.status, (200, 201), r.body)
        other = r.json()
        self.assertNotEqual(other["id"], self.asm["id"])
        try:
            r = self.d.post("/v1/assemblies/%s/clouds" % other["id"],
                            {"generate": {"count": 2, "seed": 7}, "label": "other asm"})
            self.assertEqual(r.status, 202, r.body)
            ojob = self.d.wait_job(r.json()["id"])
            job = self.submit_from_page()
            ids = [a["id"] for a in self.d.get("/v1/assemblies").json()["assemblies"]]
            self.assertEqual(sorted(ids), sorted([self.asm["id"], other["id"]]))
            for query, aid, jid in (("job=%s&gap=1" % ojob["id"], other["id"], ojob["id"]),
                                    ("job=%s&gap=1" % job["id"], self.asm["id"], job["id"]),
                                    ("assembly=%s&job=%s" % (self.asm["id"], ojob["id"]),
                                     other["id"], ojob["id"])):
                dom = self.load(query)  # fails if the page shows a message ("no job ...")
                sel = [t.attrs["data-id"] for t in dom.by_id("assemblies").find_all("tr", "asm-row")
                       if "selected" in t.classes]
                self.assertEqual(sel, [aid], query)
                rows = dom.by_id("jobs").find_all("tr", "job-row")
                self.assertIn(jid, [t.attrs["data-id"] for t in rows], query)
                self.assertEqual([t.attrs["data-id"] for t in rows if "selected" in t.classes], [jid],
                                 query)
                self.assertEqual(len(dom.by_id("map").find_all("circle", "node")), self.m, query)
            # an unknown job: the first ready assembly, and the page says there is no such job
            dom = self.load("job=j_0000000000000000", message=True)
            self.assertIn("no job j_0000000000000000", dom.by_id("message").all_text())
        finally:
            self.d.delete("/v1/assemblies/%s" % other["id"])


if __name__ == "__main__":
    unittest.main()
