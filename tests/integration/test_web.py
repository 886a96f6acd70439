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
  6. the exceedance view and the summary's statistics; gap controls hidden
     (and [hidden] wins over a class's display); bins outside 1..1000 clamped;
  7. the contact-force view and the initial-vs-residual scatter; the job
     label and the job filter; results that are not answers (an infeasible
     gap, a cloud stopped at max_iter) said to be what they are, in grey,
     and a summary of no answer without invented figures;
  8. screenshots of every view (GS_BIN_DIR/web-<view>.png, 1400 x 1000; the
     ones in docs/ are the same views on the full-size demo models, made by
     scripts/web-screenshots);
  9. a link to a cloud opens its assembly; clouds followed while they run
     (?steps=ID,filter:TEXT,... a test hook clicking rows of the assembly
     and cloud lists, typing into the filter): a selected queued cloud's
     view, summary and row follow it to its end, the progress bar keeps
     following when another assembly is selected, a failed cloud says why
     (row, progress line, gap line), an assembly with dependent pairs says
     which methods are unavailable, quick clicks show the last clicked
     cloud's summary, the filter counts the clouds that match; a failed
     assembly leaves nothing of the one before on screen and shows the
     server's reason. Also: the page's icon (no /favicon.ico request), and
     docs/web.md quotes panel titles as the page writes them.

Chromium (Debian package chromium; scripts/test installs it) is required: if it
is missing the test fails and says so, it is not skipped. GS_WEB_DIR serves
another copy of the page (default: the source tree's clients/web), e.g. an
older one to see which checks it fails.
"""
import os
import re
import shutil
import struct
import subprocess
import tempfile
import time
import unittest
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser

from api_common import DaemonCase
from gsd_harness import BIN_DIR, SOURCE_DIR, TMP, gen_model, loop_model, read_npy

K = 12          # demo gaps the page submits
SEED = 3        # demo seed
GAP = 5         # gap shown
BINS = 12       # histogram bins asked through the URL
THRESHOLD = 0.05
LABEL = "page run"
WEB_DIR = os.environ.get("GS_WEB_DIR") or os.path.join(SOURCE_DIR, "clients", "web")

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
    daemon_extra = ["--web-dir", WEB_DIR]

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
    def load(self, query, screenshot=None, message=False, profile=None):
        """Load /?query headless; returns the DOM after the page settled (which
        must show no message unless message is true). A page that follows a
        running cloud settles when the cloud ends."""
        url = self.d.url + "/?" + query
        args = [self.browser, "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--disable-dev-shm-usage",
                "--no-first-run", "--user-data-dir=" + (profile or self.profile), "--hide-scrollbars",
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

    def load_many(self, queries):
        """Load the pages of queries at once (each its own browser profile);
        their DOMs, in order."""
        profiles = [os.path.join(self.work, "profile-%d" % i) for i in range(len(queries))]
        with ThreadPoolExecutor(len(queries)) as ex:
            futs = [ex.submit(self.load, q, profile=p) for q, p in zip(queries, profiles)]
            return [f.result() for f in futs]

    def upload(self, model):
        """POST a model (a dict, or the path of a JSON file) with ?wait=1; the assembly."""
        if isinstance(model, dict):
            r = self.d.post("/v1/assemblies?wait=1", model)
        else:
            with open(model, "rb") as f:
                r = self.d.post("/v1/assemblies?wait=1", f.read(), headers={"Content-Type": "application/json"})
        self.assertIn(r.status, (200, 201), r.body[:300])
        return r.json()

    def cloud(self, aid, body):
        r = self.d.post("/v1/assemblies/%s/clouds" % aid, body)
        self.assertEqual(r.status, 202, r.body[:300])
        return r.json()

    def node_values(self, dom):
        """The map's values (data-v), by pair; None for a dot without one."""
        nodes = sorted(dom.by_id("map").find_all("circle", "node"), key=lambda c: int(c.attrs["data-k"]))
        return [float(c.attrs["data-v"]) if "data-v" in c.attrs else None for c in nodes]

    def rows(self, dom):
        return [r.attrs["data-id"] for r in dom.by_id("jobs").find_all("tr", "job-row")]

    def text(self, dom, ident):
        n = dom.by_id(ident)
        self.assertIsNotNone(n, "no #%s" % ident)
        return n.all_text() if n else ""

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
        # an icon of its own: the browser asks for no /favicon.ico (a 404 in
        # the console on every load, a 401 with tokens)
        icons = [n for n in dom.root.find_all("link") if "icon" in (n.attrs.get("rel") or "").split()]
        self.assertEqual(len(icons), 1, "no <link rel=icon>: the browser asks for /favicon.ico")
        self.assertTrue(icons[0].attrs.get("href", "").startswith("data:"), icons[0].attrs)

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
            # docs/web.md quotes panel titles as the page writes them
            title_re = r"^.+ – .+ at z = -?[\d.]+ mm \(\d+ pairs\)$"
            for t in titles:
                self.assertRegex(t, title_re)
            with open(os.path.join(SOURCE_DIR, "docs", "web.md"), encoding="utf-8") as f:
                quoted = re.findall(r'["`]([^"`]* at z = [^"`]*\(\d+ pairs\))["`]', f.read())
            self.assertTrue(quoted, "docs/web.md quotes no panel title")
            for q in quoted:
                self.assertRegex(q, title_re, "docs/web.md: a panel title the page does not write")
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
        # ... and the attribute hides them: no class's display (.gap-pick is
        # inline-flex) wins over [hidden]
        css = self.d.get("/web/style.css").body.decode()
        self.assertRegex(css, r"\[hidden\]\s*\{[^}]*display:\s*none\s*!important",
                         "style.css: a class with a display shows elements that are [hidden]")
        self.assertIn("hidden", dom.by_id("bins-note").attrs)  # bins in range: no note

    def test_6b_bins_out_of_range(self):
        # the API takes bins 1..1000 (422 otherwise): the page clamps the
        # URL's value and says so next to the field
        job = self.submit_from_page()
        for asked, used in ((0, 1), (1001, 1000)):
            dom = self.load("assembly=%s&job=%s&bins=%d&mode=p95" % (self.asm["id"], job["id"], asked))
            self.assertEqual(dom.by_id("bins").attrs["value"], str(used))
            self.assertNotIn("hidden", dom.by_id("bins-note").attrs)
            self.assertIn("%d is outside 1–1000: %d used" % (asked, used), self.text(dom, "bins-note"))
            s = self.d.get("/v1/jobs/%s/summary?bins=%d" % (job["id"], used)).json()
            bars = dom.by_id("hist-maxres").find_all("rect", "hist-bar")
            self.assertEqual([int(b.attrs["data-count"]) for b in bars], s["max_residual"]["histogram"]["counts"])

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
            self.assertIn("no initial-vs-residual scatter", info)
            # its w is no residual gap: grey, and the colour bar says so
            dom = self.load("assembly=%s&job=%s&gap=0&mode=residual" % (aid, job["id"]))
            title = dom.by_id("colorbar").find_all("text", "cb-title")[0].all_text()
            self.assertIn("status infeasible: not an answer", title)
            self.assertNotIn("residual gap w after fastening", title)
            self.assertIn("infeasible: the gaps contradict", self.text(dom, "gap-info"))
            # the feasible gap of the same cloud: forces in N and its scatter
            dom = self.load("assembly=%s&job=%s&gap=1&mode=force" % (aid, job["id"]))
            self.assertIn("contact forces", dom.by_id("gap-info").all_text())
            self.assertNotIn("hidden", dom.by_id("scatter-panel").attrs)
        finally:
            self.d.delete("/v1/assemblies/" + aid)

    def test_7c_results_that_are_not_answers(self):
        """A cloud stopped at max_iter: every result an iterate. The page says
        so (gap line, colour bar, grey colours, no scatter and why) and its
        summary has no answer to give figures of (the API's are null)."""
        job = self.d.wait_job(self.cloud(self.asm["id"], {
            "generate": {"count": 2, "seed": 21}, "max_iter": 1, "fastener_fraction": 0.5,
            "label": "stopped"})["id"])
        try:
            res = self.d.get("/v1/jobs/%s/results?fields=none" % job["id"]).json()["results"]
            self.assertEqual([r["status"] for r in res], ["max_iter", "max_iter"])
            s = self.d.get("/v1/jobs/%s/summary" % job["id"]).json()
            self.assertEqual((s["count"], s["answers"]), (2, 0))
            dom = self.load("assembly=%s&job=%s&gap=0&mode=residual" % (self.asm["id"], job["id"]))
            info = self.text(dom, "gap-info")
            self.assertIn("stopped at max_iter: an iterate, not an answer", info)
            self.assertNotIn("pairs in contact", info)
            self.assertNotIn("contact forces", info)
            self.assertIn("no initial-vs-residual scatter", info)
            self.assertIn("hidden", dom.by_id("scatter-panel").attrs)
            title = dom.by_id("colorbar").find_all("text", "cb-title")[0].all_text()
            self.assertIn("status max_iter: an iterate, not an answer", title)
            fills = [c.attrs["fill"] for c in dom.by_id("map").find_all("circle", "node")]
            self.assertTrue(fills and all(f[1:3] == f[3:5] == f[5:7] for f in fills), fills[:5])  # grey
            # the summary: no figures, the reason instead
            self.assertEqual(float(dom.by_id("stat-answers").attrs["data-value"]), 0)
            self.assertIn("No optimal result", self.text(dom, "summary-none"))
            self.assertIn("max_iter 2", self.text(dom, "summary-none"))
            for ident in ("stat-maxres-p95", "stat-nact-median", "stat-share-gaps"):
                self.assertIsNone(dom.by_id(ident), ident)
            self.assertIn("hidden", dom.by_id("summary-charts").attrs)
            # the per-cloud views have nothing to colour
            dom = self.load("assembly=%s&job=%s&mode=p95" % (self.asm["id"], job["id"]))
            self.assertEqual(set(self.node_values(dom)), {None})
            info = self.text(dom, "gap-info")
            self.assertIn("no optimal result", info)
            self.assertNotIn("over 2 gaps", info)
        finally:
            self.d.delete("/v1/jobs/" + job["id"])

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

    def test_9b_running_clouds_are_followed(self):
        """Clouds queued behind a long one (a lap joint of m = 370 by IPM):
        the page follows the one it shows to its end, and the one its
        progress bar follows when another assembly is selected; a cloud that
        needs L_Q on an assembly with dependent pairs fails, and says why.
        Then, on the same clouds: quick clicks, and the filter's count."""
        self.submit_from_page()  # the first assembly has a cloud to show
        big_dir = os.path.join(self.work, "big")
        os.makedirs(big_dir, exist_ok=True)
        model, _ = gen_model(big_dir, kind="lap", small=True, inline=True, gaps=1, name="big",
                             extra=["--scale", "3"])
        big_asm = self.upload(model)["id"]
        loop = loop_model()
        loop["name"] = "loop followed"
        lp = None
        try:
            big = self.cloud(big_asm, {"generate": {"count": 500, "seed": 5}, "solver": "ipm",
                                       "label": "big cloud"})
            lp = self.upload(loop)["id"]
            # queued behind the big cloud: NPM reads L_Q, which a loop of pairs has none of
            npm = self.cloud(lp, {"gaps": [[0.1, 0.1, 0.3, 0.5]], "solver": "npm", "label": "needs L_Q"})
            small = self.cloud(big_asm, {"generate": {"count": K, "seed": 6}, "label": "small cloud"})
            queued = [self.d.get("/v1/jobs/" + j["id"]).json()["status"] for j in (npm, small)]
            # two pages at once: (a) the failing cloud, then the first assembly
            # selected while it waits; (c) the small cloud, queued, and its last gap
            dom_a, dom_c = self.load_many([
                "job=%s&steps=%s" % (npm["id"], self.asm["id"]),
                "assembly=%s&job=%s&gap=%d&mode=residual" % (big_asm, small["id"], K - 1)])
            npm = self.d.wait_job(npm["id"])
            self.assertEqual(npm["status"], "failed", npm)
            self.assertIn("singular", npm["error"])
            small = self.d.wait_job(small["id"])
            self.assertEqual((small["status"], small["done"]), ("done", K))
            print("\nnpm and small cloud when the pages were opened: %s" % queued)
            # (a) the progress bar kept following the cloud after the switch
            # of assembly, to its end, and says why it failed
            sel = [t.attrs["data-id"] for t in dom_a.by_id("assemblies").find_all("tr", "asm-row")
                   if "selected" in t.classes]
            self.assertEqual(sel, [self.asm["id"]])
            prog = dom_a.by_id("progress").attrs
            self.assertEqual((prog.get("data-job"), prog.get("data-status")), (npm["id"], "failed"))
            self.assertIn(npm["error"], self.text(dom_a, "progress-text"))
            # (c) the queued cloud's end without a reload: its row, its gap, its summary
            row = [r for r in dom_c.by_id("jobs").find_all("tr", "job-row") if r.attrs["data-id"] == small["id"]]
            self.assertEqual(len(row), 1)
            self.assertIn("selected", row[0].classes)
            self.assertEqual(row[0].find_all("span", "badge")[0].all_text(), "done")
            info = self.text(dom_c, "gap-info")
            self.assertNotIn("not solved", info)
            self.assertIn("gap %d of cloud %s: optimal" % (K - 1, small["id"]), info)
            w = self.d.get("/v1/jobs/%s/results?offset=%d&limit=1&fields=w" % (small["id"], K - 1)).json()
            self.assertEqual(self.node_values(dom_c), w["results"][0]["w"])
            s = self.d.get("/v1/jobs/%s/summary" % small["id"]).json()
            self.assertEqual(float(dom_c.by_id("stat-count").attrs["data-value"]), K)
            self.assertEqual(float(dom_c.by_id("stat-maxres-p95").attrs["data-value"]), s["max_residual"]["p95"])
            self.assertEqual(dom_c.by_id("progress").attrs.get("data-status"), "done")

            # three pages at once: quick clicks (the big cloud, then the small
            # one); the filter "big" with the small cloud selected (kept in
            # the list); "big" typed with the small cloud selected, then the
            # big one selected
            s = self.d.get("/v1/jobs/%s/summary?threshold=0.07&bins=20" % small["id"]).json()
            dom, dom_f, dom_g = self.load_many([
                "assembly=%s&job=%s&mode=p95&threshold=0.07&steps=%s,%s"
                % (big_asm, small["id"], big["id"], small["id"]),
                "assembly=%s&job=%s&filter=big" % (big_asm, small["id"]),
                "assembly=%s&job=%s&steps=filter:big,%s" % (big_asm, small["id"], big["id"])])
            # the summary and the p95 map are the small cloud's, whichever
            # answer came last (the big cloud's summary at this threshold is
            # computed, the small one's is in the cache)
            self.assertEqual([r.attrs["data-id"] for r in dom.by_id("jobs").find_all("tr", "job-row")
                              if "selected" in r.classes], [small["id"]])
            self.assertEqual(float(dom.by_id("stat-count").attrs["data-value"]), K)
            self.assertEqual(self.node_values(dom), s["pairs"]["p95"])
            # the filter counts the clouds that match; the selected one is
            # listed too while it is selected (f), not after (g)
            self.assertEqual(self.rows(dom_f), [small["id"], big["id"]])  # newest first
            self.assertEqual(self.text(dom_f, "jobs-filtered"),
                             '1 of 2 clouds match "big" (and the selected cloud)')
            self.assertEqual(self.rows(dom_g), [big["id"]])
            self.assertEqual(self.text(dom_g, "jobs-filtered"), '1 of 2 clouds match "big"')

            # the failed cloud selected: why, in its row, the gap line and
            # the progress line; no figures in its summary; and the assembly
            # line says which methods its dependent pairs rule out
            # (the factor of Q is made once the workers have been idle for 2 s)
            a = self.d.wait_assembly(lp, lambda a: (a.get("precompute") or {}).get("lq_error"), timeout=60, poll=0.2)
            lq = a["precompute"]["lq_error"]
            self.assertIsNotNone(lq, "no precompute.lq_error: %s" % a)
            dom = self.load("assembly=%s&job=%s" % (lp, npm["id"]))
            row = dom.by_id("jobs").find_all("tr", "job-row")[0]
            self.assertEqual(row.attrs["data-id"], npm["id"])
            self.assertIn(npm["error"], row.attrs.get("title", ""))
            self.assertIn(npm["error"], " ".join(n.all_text() for n in row.find_all("div", "job-error")))
            self.assertIn("cloud %s failed: %s" % (npm["id"], npm["error"]), self.text(dom, "job-state"))
            self.assertIn(npm["error"], self.text(dom, "progress-text"))
            self.assertIn("No answer", self.text(dom, "summary-none"))
            self.assertIsNone(dom.by_id("stat-maxres-p95"))
            lq_line = self.text(dom, "assembly-lq")
            self.assertIn(lq["message"], lq_line)
            self.assertIn("NPM", lq_line)
            self.assertIn("unavailable", lq_line)
            self.assertNotIn("cond(Q) –", self.text(dom, "assembly-info"))
        finally:
            self.d.delete("/v1/assemblies/" + big_asm)
            if lp:
                self.d.delete("/v1/assemblies/" + lp)

    def test_9c_failed_assembly_leaves_nothing_of_the_one_before(self):
        bad = loop_model()
        bad["name"] = "not spd"
        bad["parts"][0]["K"] = [[-1]]
        r = self.d.post("/v1/assemblies", bad)
        self.assertEqual(r.status, 202, r.body[:300])
        a = self.d.wait_assembly(r.json()["id"], lambda a: a["status"] != "precomputing")
        try:
            self.assertEqual(a["status"], "failed", a)
            err = a["error"]
            job = self.submit_from_page()
            dom = self.load("assembly=%s&job=%s&steps=%s" % (self.asm["id"], job["id"], a["id"]),
                            message=True)
            sel = [t.attrs["data-id"] for t in dom.by_id("assemblies").find_all("tr", "asm-row")
                   if "selected" in t.classes]
            self.assertEqual(sel, [a["id"]])
            self.assertIn("%s (%s)" % (err["message"], err["field"]), self.text(dom, "message"))
            self.assertEqual(self.rows(dom), [])
            self.assertIn("the assembly is failed", self.text(dom, "jobs-empty"))
            self.assertEqual(dom.by_id("map").find_all("circle"), [])
            self.assertEqual(dom.by_id("map-legend").children, [])
            self.assertEqual(self.text(dom, "gap-info").strip(), "")
            self.assertIn("hidden", dom.by_id("gap-controls").attrs)
            self.assertIn("hidden", dom.by_id("summary").attrs)
            self.assertIn("hidden", dom.by_id("scatter-panel").attrs)
            self.assertIn("disabled", dom.by_id("demo-submit").attrs)
        finally:
            self.d.delete("/v1/assemblies/" + a["id"])


if __name__ == "__main__":
    unittest.main()
