"""Assemblies: create (inline ?wait=1, async + polling with the progress of
the precomputation, multipart with .npy blocks, duplicate content), list,
get, geometry, jobs, delete; healthz (with the BLAS kernel) and metrics; a
precomputation that fails (non-SPD block; a miscomputing LAPACK preloaded:
the build's check); L_Q after "ready" and dependent pairs found then."""
import json
import os
import platform
import re
import subprocess
import threading
import time
import unittest

import gsd_harness as h
from api_common import ApiCase, model, upload_json, upload_multipart, metric, npy_bytes


class AssemblyTest(ApiCase):

    def test_healthz(self):
        r = self.d.get("/healthz")
        self.assertEqual(r.status, 200)
        b = r.json()
        self.assertEqual(b["status"], "ok")
        self.assertEqual(b["workers"], 2)
        self.assertGreaterEqual(b["uptime_s"], 0)
        self.assertGreaterEqual(b["assemblies_loaded"], 1)
        for k in ("version", "queue_depth", "jobs_active"):
            self.assertIn(k, b)

    def test_healthz_names_the_blas_kernel(self):
        """/healthz and the start line name the OpenBLAS kernel and whether
        OPENBLAS_CORETYPE chose it: this daemon's as its environment says, and
        one started with Prescott (every x86-64 CPU runs it) says Prescott."""
        b = self.d.get("/healthz").json()["blas"]
        env = os.environ.get("OPENBLAS_CORETYPE", "")
        self.assertEqual(b["pinned"], env.lower() == b["kernel"].lower())
        self.assertIn("OpenBLAS", b["build"])
        self.assertIn(b["kernel"], b["build"])
        self.assertIn("BLAS kernel %s" % b["kernel"], self.d.start_line)
        if platform.machine() != "x86_64":
            self.skipTest("the rest needs an x86-64 kernel name (Prescott); this is %s"
                          % platform.machine())
        d = h.Daemon(workers=1, env={"OPENBLAS_CORETYPE": "prescott"}).start()
        try:
            b = d.get("/healthz").json()["blas"]
            self.assertEqual((b["kernel"], b["pinned"]), ("Prescott", True))
            self.assertIn("Prescott", b["build"])
            self.assertTrue(d.start_line.endswith("1 worker, BLAS kernel Prescott, chosen by OPENBLAS_CORETYPE)"),
                            d.start_line)
        finally:
            d.cleanup()

    def test_miscomputing_lapack_fails_the_build(self):
        """A LAPACK whose dpotri miscomputes (tests/fault/fault_dpotri.c,
        preloaded: every inverse scaled by 1.001, as a kernel that computes
        wrong results on some CPU would) fails the upload's precomputation by
        its check (core/precomp_check.h): 500 check_failed naming the pairs,
        the assembly "failed" with that error; no solve is served from it."""
        fault = os.path.join(h.BIN_DIR, "tests", "libgs_fault_dpotri.so")
        self.assertTrue(os.path.exists(fault), fault)
        env = {"LD_PRELOAD": fault,
               "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"}
        d = h.Daemon(workers=1, env=env).start()
        try:
            r = upload_json(d, self.model_json)
            self.assertEqual(r.status, 500, r.body[:400])
            err = r.json()["error"]
            self.assertEqual((err["code"], err["field"]), ("check_failed", "pairs"), err)
            self.assertIn("does not agree with the factors of K", err["message"])
            self.assertIn("OpenBLAS kernel", err["message"])
            a = r.json()["assembly"]
            self.assertEqual(a["status"], "failed")
            self.assertEqual(a["error"]["code"], "check_failed")
            g = self.G[0]
            s = d.post("/v1/assemblies/%s/solve" % a["id"], {"g": g})
            self.assertEqual(s.status, 409, s.body[:300])
            # the CLI's --wait follows the new attempt to the same end: exit 1, the error
            cli = subprocess.run([h.binary("gapsim"), "--server", d.url, "assembly", "upload",
                                  self.model_json, "--wait"], capture_output=True, text=True,
                                 timeout=120)
            self.assertEqual(cli.returncode, 1, cli.stderr)
            self.assertIn("error check_failed at pairs: Q = A'K^-1 A does not agree", cli.stderr)
            self.assertEqual(cli.stdout, "")
        finally:
            d.cleanup()

    def test_metrics_counters(self):
        r = self.d.get("/metrics")
        self.assertEqual(r.status, 200)
        self.assertTrue(r.headers["Content-Type"].startswith("text/plain"))
        text = r.body.decode()
        for name in ("gapsim_solves_total", "gapsim_solve_seconds_bucket", "gapsim_cache_hits_total",
                     "gapsim_cache_misses_total", "gapsim_queue_depth", "gapsim_jobs_active",
                     "gapsim_summary_queue_depth",
                     "gapsim_http_responses_total", "gapsim_assemblies_created_total",
                     "gapsim_summary_cache_hits_total", "gapsim_summaries_computed_total",
                     "gapsim_factor_cache_hits_total", "gapsim_factor_cache_misses_total",
                     "gapsim_factor_cache_bytes"):
            self.assertIn("# TYPE " + name.replace("_bucket", ""), text)
        self.assertGreaterEqual(metric(self.d, "gapsim_assemblies_created_total"), 1)
        self.assertEqual(metric(self.d, "gapsim_summary_queue_depth"), 0)  # idle readers
        n0 = metric(self.d, "gapsim_solve_seconds_count")
        s0 = metric(self.d, "gapsim_solves_total", 'solver="gi",status="optimal"') \
            if 'solver="gi",status="optimal"' in text else 0.0
        g = [x - 0.3 for x in self.G[3]]
        res = self.solve(g, solver="gi", fasteners="all", **{"return": ["w", "x"]})
        self.assertEqual(res["solver"], "gi")
        self.assertEqual(metric(self.d, "gapsim_solve_seconds_count"), n0 + 1)
        self.assertEqual(metric(self.d, "gapsim_solves_total", 'solver="gi",status="optimal"'),
                         s0 + 1)
        self.assertGreaterEqual(metric(self.d, "gapsim_http_responses_total", 'class="2xx"'), 2)

    def test_get_and_list(self):
        r = self.d.get("/v1/assemblies/" + self.aid)
        self.assertEqual(r.status, 200)
        a = r.json()
        self.assertEqual(a["id"], self.aid)
        self.assertEqual(a["status"], "ready")
        self.assertEqual((a["n"], a["m"], a["n_parts"], a["n_nodes"], a["n_fasteners"]),
                         (104, 52, 2, 104, 10))
        self.assertEqual(a["joint"], "simple")
        self.assertEqual(len(a["content_hash"]), 32)
        self.assertGreater(a["precompute"]["cond_K"], 1e4)
        self.assertGreater(a["precompute"]["times_s"]["total"], 0)
        self.assertGreaterEqual(a["ready_at"], a["created_at"])
        self.assertEqual(a["links"]["solve"], "/v1/assemblies/%s/solve" % self.aid)
        r = self.d.get("/v1/assemblies")
        self.assertEqual(r.status, 200)
        listed = {x["id"]: x for x in r.json()["assemblies"]}
        self.assertIn(self.aid, listed)
        self.assertEqual(listed[self.aid]["content_hash"], a["content_hash"])

    def test_geometry(self):
        with open(self.model_json) as f:
            mdl = json.load(f)
        r = self.d.get("/v1/assemblies/%s/geometry" % self.aid)
        self.assertEqual(r.status, 200)
        geo = r.json()
        self.assertEqual(geo["m"], 52)
        nodes, pairs = mdl["nodes"], mdl["pairs"]
        for axis in "xyz":
            want = [float(nodes[axis][i]) for i in pairs["i"]]
            self.assertEqual(geo["pairs"][axis], want)
            self.assertEqual(geo["bbox"]["min"]["xyz".index(axis)], min(want))
            self.assertEqual(geo["bbox"]["max"]["xyz".index(axis)], max(want))
        self.assertEqual(geo["fasteners"]["pair"], mdl["fasteners"]["pair"])
        self.assertEqual(geo["fasteners"]["load"], [float(x) for x in mdl["fasteners"]["load"]])
        self.assertEqual(geo["pairs"]["fixed"], [0] * 52)

    def test_assembly_jobs(self):
        job = self.cloud(self.G[:3])
        self.d.wait_job(job["id"])
        r = self.d.get("/v1/assemblies/%s/jobs" % self.aid)
        self.assertEqual(r.status, 200)
        jobs = {j["id"]: j for j in r.json()["jobs"]}
        self.assertIn(job["id"], jobs)
        self.assertEqual(jobs[job["id"]]["total"], 3)
        self.assertEqual(jobs[job["id"]]["done"], 3)
        self.assertTrue(all(j["assembly_id"] == self.aid for j in jobs.values()))

    def test_async_create_then_poll(self):
        path, _ = model("sandwich", small=True, inline=True, gaps=2)
        r = upload_json(self.d, path, wait=False)
        self.assertIn(r.status, (200, 202), r.body[:300])
        a = r.json()
        if r.status == 202:
            self.assertIn(a["status"], ("precomputing", "ready"))
        a = self.d.wait_assembly(a["id"], lambda a: a["status"] == "ready", 120, 0.05)
        self.assertEqual(a["status"], "ready")
        self.assertEqual(a["joint"], "sandwich")
        self.assertGreater(a["n"], 0)
        self.assertIn("precompute", a)
        # the same content again: 200 with the existing id, not a new assembly
        r2 = upload_json(self.d, path, wait=False)
        self.assertEqual(r2.status, 200)
        self.assertEqual(r2.json()["id"], a["id"])

    def test_progress_while_precomputing(self):
        """A precomputing assembly says its stage and the seconds since it
        began (GET, the list, `gapsim assembly show`): the stages come in the
        build's order, the seconds do not go back, "progress" is gone once
        ready. The full lap joint (m = 2,603: a build of about a second,
        more under the sanitizers), on a daemon of its own."""
        path, _ = model("lap", small=False, inline=False, gaps=1)
        order = ["queued", "factor_K", "build_Q", "check", "loads", "factor_Q"]
        d = h.Daemon(workers=1).start()
        try:
            r = upload_multipart(d, path, wait=False)
            self.assertEqual(r.status, 202, r.body[:300])
            aid, seen, last = r.json()["id"], [], 0.0
            shown = None
            while True:
                a = d.get("/v1/assemblies/" + aid).json()
                if a["status"] != "precomputing":
                    break
                p = a["progress"]
                self.assertIn(p["stage"], order)
                self.assertGreaterEqual(p["elapsed_s"], last)
                last = p["elapsed_s"]
                if not seen or seen[-1] != p["stage"]:
                    seen.append(p["stage"])
                listed = [x for x in d.get("/v1/assemblies").json()["assemblies"] if x["id"] == aid]
                if listed[0]["status"] == "precomputing":
                    self.assertIn(listed[0]["progress"]["stage"], order)
                if shown is None:
                    cli = subprocess.run([h.binary("gapsim"), "--server", d.url, "assembly", "show",
                                          aid], capture_output=True, text=True, timeout=60)
                    shown = cli.stdout
                time.sleep(0.01)
            self.assertEqual(a["status"], "ready")
            self.assertNotIn("progress", a)
            self.assertTrue(seen, "never seen precomputing")
            self.assertEqual(seen, sorted(seen, key=order.index), seen)
            self.assertTrue({"factor_K", "build_Q"} & set(seen), seen)
            if "status:           precomputing" in shown:
                self.assertRegex(shown, r"\nprogress: +(%s), " % "|".join(order))
            # the CLI's --wait says each stage on stderr as it follows it
            self.assertEqual(d.delete("/v1/assemblies/" + aid).status, 204)
            cli = subprocess.run([h.binary("gapsim"), "--server", d.url, "assembly", "upload",
                                  path, "--wait"], capture_output=True, text=True, timeout=300)
            self.assertEqual(cli.returncode, 0, cli.stderr)
            self.assertIn("status:           ready", cli.stdout)
            said = re.findall(r"precomputing: (\w+) \(", cli.stderr)
            self.assertTrue(said, cli.stderr)
            self.assertEqual(said, sorted(set(said), key=order.index), cli.stderr)
        finally:
            d.cleanup()

    def test_multipart_same_hash_as_inline(self):
        path_files, _ = model("lap", small=True, inline=False, gaps=2)
        with open(path_files) as f:
            self.assertIn("lap.part0.npy", f.read())  # really references block files
        n_before = len(self.d.get("/v1/assemblies").json()["assemblies"])
        r = upload_multipart(self.d, path_files)
        # the inline upload of the same content exists: same hash, same id, 200
        self.assertEqual(r.status, 200, r.body[:300])
        b = r.json()
        self.assertEqual(b["id"], self.aid)
        self.assertEqual(b["content_hash"], self.asm["content_hash"])
        self.assertEqual(len(self.d.get("/v1/assemblies").json()["assemblies"]), n_before)

    def test_same_content_other_name_says_so(self):
        with open(self.model_json) as f:
            doc = json.load(f)
        old = doc["name"]
        doc["name"] = "renamed copy"
        r = self.d.post("/v1/assemblies?wait=1", json.dumps(doc).encode(),
                        headers={"Content-Type": "application/json"})
        self.assertEqual(r.status, 200, r.body)
        a = r.json()
        self.assertEqual((a["id"], a["name"]), (self.aid, old))  # the stored name is kept
        self.assertTrue(a["existing"])
        self.assertIn('uploaded as "%s"' % old, a["notice"])
        self.assertIn('named "renamed copy"', a["notice"])
        self.assertIn("Names are labels, not content", a["notice"])
        # same name: existing, without the naming remark
        r = upload_json(self.d, self.model_json)
        self.assertEqual(r.status, 200)
        self.assertTrue(r.json()["existing"])
        self.assertNotIn("labels", r.json()["notice"])
        # a new upload carries neither field
        self.assertNotIn("existing", self.asm)

    def test_multipart_fresh_then_duplicate(self):
        d = h.Daemon(workers=1).start()
        try:
            path_files, _ = model("lap", small=True, inline=False, gaps=2)
            r = upload_multipart(d, path_files)
            self.assertEqual(r.status, 201, r.body[:300])
            a = r.json()
            self.assertEqual(a["status"], "ready")
            self.assertEqual(a["content_hash"], self.asm["content_hash"])
            stored = os.path.join(d.data_dir, "assemblies", a["id"])
            self.assertTrue(os.path.exists(os.path.join(stored, "lap.part0.npy")))
            self.assertTrue(os.path.exists(os.path.join(stored, "model.json")))
            r2 = upload_multipart(d, path_files)
            self.assertEqual(r2.status, 200)
            self.assertEqual(r2.json()["id"], a["id"])
            # and the inline form of the same model too
            r3 = upload_json(d, self.model_json)
            self.assertEqual(r3.status, 200)
            self.assertEqual(r3.json()["id"], a["id"])
            # solve on the multipart assembly equals the inline one
            g = [x - 0.2 for x in self.G[5]]
            s1 = d.post("/v1/assemblies/%s/solve" % a["id"], {"g": g, "fasteners": "all"}).json()
            s2 = self.solve(g, fasteners="all", **{"return": ["w", "lambda", "x"]})
            self.assert_close(s1["w"], s2["w"])
            self.assert_close(s1["lambda"], s2["lambda"], 1e-6 * max(1, max(s2["lambda"])))
        finally:
            d.cleanup()

    def test_delete(self):
        d = h.Daemon(workers=1).start()
        try:
            r = upload_json(d, self.model_json)
            self.assertEqual(r.status, 201)
            aid = r.json()["id"]
            job = d.post("/v1/assemblies/%s/clouds" % aid, {"gaps": self.G[:4]}).json()
            d.wait_job(job["id"])
            res = d.post("/v1/assemblies/%s/solve" % aid, {"g": self.G[0]}).json()
            adir = os.path.join(d.data_dir, "assemblies", aid)
            jdir = os.path.join(d.data_dir, "jobs", job["id"])
            self.assertTrue(os.path.isdir(adir) and os.path.isdir(jdir))
            d.wait_factors_saved(aid)  # saved after "ready", by a task of its own
            self.assertTrue(os.path.exists(os.path.join(adir, "factors.bin")))
            r = d.delete("/v1/assemblies/" + aid)
            self.assertEqual(r.status, 204)
            self.assertEqual(r.body, b"")
            self.assert_error(d.get("/v1/assemblies/" + aid), 404, "id", "not_found")
            self.assert_error(d.delete("/v1/assemblies/" + aid), 404, "id")
            self.assert_error(d.post("/v1/assemblies/%s/solve" % aid, {"g": self.G[0]}), 404, "id")
            self.assert_error(d.get("/v1/jobs/" + job["id"]), 404, "id")
            self.assert_error(d.get("/v1/results/" + res["id"]), 404, "id")
            self.assertFalse(os.path.exists(adir))
            self.assertFalse(os.path.exists(jdir))
            self.assertNotIn(aid, [a["id"] for a in d.get("/v1/assemblies").json()["assemblies"]])
            # uploading it again makes a new assembly
            r = upload_json(d, self.model_json)
            self.assertEqual(r.status, 201)
            self.assertNotEqual(r.json()["id"], aid)
        finally:
            d.cleanup()

    def test_delete_while_precomputing_answers_the_waiting_upload_404(self):
        """An upload with ?wait=1 whose assembly is deleted while it
        precomputes is answered 404 when the build ends, not 201 "ready" for
        an assembly that is gone (the full lap joint: a build of a second or
        more, so the delete lands in factor_K or build_Q)."""
        path, _ = model("lap", small=False, inline=False, gaps=1)
        d = h.Daemon(workers=1).start()
        try:
            out = {}
            t = threading.Thread(target=lambda: out.update(r=upload_multipart(d, path)))
            t.start()
            aid, stage = None, None
            t0 = time.time()
            while t.is_alive() and time.time() - t0 < 60:
                listed = d.get("/v1/assemblies").json()["assemblies"]
                if listed and listed[0]["status"] == "precomputing":
                    aid, stage = listed[0]["id"], listed[0]["progress"]["stage"]
                    if stage in ("factor_K", "build_Q"):
                        break
                time.sleep(0.005)
            self.assertIn(stage, ("factor_K", "build_Q"), "never seen building")
            self.assertEqual(d.delete("/v1/assemblies/" + aid).status, 204)
            t.join(120)
            self.assert_error(out["r"], 404, "", "not_found")
            self.assertIn("deleted", out["r"].json()["error"]["message"])
            self.assertEqual(d.get("/v1/assemblies/" + aid).status, 404)
            self.assertFalse(os.path.exists(os.path.join(d.data_dir, "assemblies", aid)))
        finally:
            d.cleanup()

    def test_failed_precompute_non_spd(self):
        with open(self.model_json) as f:
            mdl = json.load(f)
        K = mdl["parts"][1]["K"]
        mdl["parts"][1]["K"] = [[-v for v in row] for row in K]  # negative definite
        body = json.dumps(mdl).encode()
        r = self.d.post("/v1/assemblies?wait=1", body, headers={"Content-Type": "application/json"})
        self.assertEqual(r.status, 422, r.body[:400])
        b = r.json()
        self.assertEqual(b["error"]["field"], "parts[1].K")
        self.assertEqual(b["assembly"]["status"], "failed")
        aid = b["assembly"]["id"]
        a = self.d.get("/v1/assemblies/" + aid).json()
        self.assertEqual(a["status"], "failed")
        self.assertEqual(a["error"]["field"], "parts[1].K")
        self.assertNotIn("precompute", a)
        err = self.assert_error(self.d.post("/v1/assemblies/%s/solve" % aid, {"g": self.G[0]}),
                                409, "id", "not_ready")
        self.assertIn("failed", err["message"])
        self.assert_error(self.d.post("/v1/assemblies/%s/clouds" % aid, {"gaps": self.G[:2]}),
                          409, "id", "not_ready")
        # the async form: 202 (or 200 for the same content), then polls to failed
        mdl["parts"][0]["K"] = [[-v for v in row] for row in mdl["parts"][0]["K"]]
        r = self.d.post("/v1/assemblies", json.dumps(mdl).encode(),
                        headers={"Content-Type": "application/json"})
        self.assertEqual(r.status, 202, r.body[:300])
        aid2 = r.json()["id"]
        a2 = self.d.wait_assembly(aid2, lambda a: a["status"] != "precomputing", 60, 0.05)
        self.assertEqual(a2["status"], "failed")
        self.assertEqual(a2["error"]["field"], "parts[0].K")

    def test_lq_after_ready(self):
        """The upload is "ready" before L_Q (what GI relative needs is there):
        cond_Q null and no factor_Q time in the answer; the task that saves
        the factors computes L_Q, then cond_Q and its time appear. A solve by
        a method that reads L_Q (NPM) at once after the upload computes it or
        waits for it, and agrees with GI; so does IPM on the dual form, which
        reads none (test_ipm: it solves on a deferred L_Q)."""
        d = h.Daemon(workers=2).start()
        try:
            r = upload_json(d, self.model_json)
            self.assertEqual(r.status, 201, r.body[:300])
            a = r.json()
            self.assertEqual(a["status"], "ready")
            self.assertIsNone(a["precompute"]["cond_Q"])
            self.assertGreater(a["precompute"]["cond_K"], 1)
            self.assertEqual(a["precompute"]["times_s"]["factor_Q"], 0)
            ipm = d.post("/v1/assemblies/%s/solve" % a["id"],  # another gap: a result cache
                         {"g": self.G[1], "solver": "ipm", "formulation": "dual"})
            self.assertEqual(ipm.status, 200, ipm.body[:300])
            npm = d.post("/v1/assemblies/%s/solve" % a["id"], {"g": self.G[0], "solver": "npm"})
            self.assertEqual(npm.status, 200, npm.body[:300])
            gi = d.post("/v1/assemblies/%s/solve" % a["id"], {"g": self.G[0], "solver": "gi"})
            self.assertEqual(gi.status, 200, gi.body[:300])
            self.assertEqual(npm.json()["solver"], "npm")
            self.assertLess(max(abs(x - y) for x, y in zip(npm.json()["w"], gi.json()["w"])), 1e-7)
            gi1 = d.post("/v1/assemblies/%s/solve" % a["id"],  # x: solved, not the cached one
                         {"g": self.G[1], "solver": "gi", "return": ["x", "w"]})
            self.assertEqual(gi1.status, 200, gi1.body[:300])
            self.assertEqual((ipm.json()["solver"], gi1.json()["solver"]), ("ipm", "gi"))
            self.assertLess(max(abs(x - y) for x, y in zip(ipm.json()["w"], gi1.json()["w"])), 1e-7)
            a = d.wait_factors_saved(a["id"])
            self.assertTrue(a["factors_saved"])
            self.assertGreater(a["precompute"]["cond_Q"], 1)
            self.assertGreater(a["precompute"]["times_s"]["factor_Q"], 0)
        finally:
            d.cleanup()

    def test_factors_saved_when_the_workers_are_idle(self):
        """The task that computes L_Q and saves the factors waits in the pool's
        idle lane (2 s without other work): a cloud submitted right after
        the upload has both workers and the factors are not saved while it
        runs; they are within seconds of its end."""
        rows = [[g + 1e-6 * c for g in row] for c in range(150) for row in self.G]
        body = npy_bytes(rows)  # ready before the upload: the cloud follows at once
        d = h.Daemon(workers=2).start()
        try:
            r = upload_json(d, self.model_json)
            self.assertEqual(r.status, 201, r.body[:300])
            a = r.json()
            r = d.post("/v1/assemblies/%s/clouds?solver=lemke" % a["id"], body,
                       headers={"Content-Type": "application/x-npy"})
            self.assertEqual(r.status, 202, r.body[:300])
            job = r.json()
            seen_running = 0
            while True:
                j = d.get("/v1/jobs/" + job["id"]).json()
                if j["status"] not in ("queued", "running"):
                    break
                saved = d.get("/v1/assemblies/" + a["id"]).json()["factors_saved"]
                if j["status"] == "running" and j["done"] < j["total"] - 100:
                    started = j["started_at"] - a["ready_at"]
                    self.assertLess(started, 1.5, "the cloud started %.2f s after ready: the "
                                    "pool was idle long enough to save first" % started)
                    self.assertFalse(saved, "factors saved while the cloud runs (%d of %d)"
                                     % (j["done"], j["total"]))
                    seen_running += 1
                time.sleep(0.05)
            self.assertEqual(j["status"], "done")
            self.assertGreater(seen_running, 2, "the cloud ended before it could be watched")
            t_end = time.time()
            a = d.wait_factors_saved(a["id"], poll=0.05)
            self.assertTrue(a["factors_saved"])
            self.assertLess(time.time() - t_end, 10)
            self.assertGreater(a["precompute"]["cond_Q"], 1)
        finally:
            d.cleanup()

    def test_dependent_pairs_stay_ready_without_l_q(self):
        """Linearly dependent pairs (Q singular) show when L_Q is computed,
        just after "ready": the assembly stays ready (GI, Lemke, the dual
        IPM and auto do not read L_Q, and prove contradicting gaps
        infeasible), precompute.lq_error names the pair, and the methods
        that need L_Q are refused at once with that error."""
        loop = h.loop_model()  # Q singular: weights d = (1, 1, 1, 0)
        r = self.d.post("/v1/assemblies?wait=1", loop)
        self.assertEqual(r.status, 201, r.body[:300])
        aid = r.json()["id"]
        self.assertEqual(r.json()["precompute"]["lq_error"], None)  # not known yet
        a = self.d.wait_assembly(aid, lambda a: a.get("precompute", {}).get("lq_error"))
        self.assertEqual(a["status"], "ready", a)
        lq = a["precompute"]["lq_error"]
        self.assertEqual((lq["code"], lq["field"]), ("singular", "pairs[2]"), lq)
        self.assertFalse(a["factors_saved"])
        self.assertIsNone(a["precompute"]["cond_Q"])
        time.sleep(0.3)  # still ready a moment later
        self.assertEqual(self.d.get("/v1/assemblies/" + aid).json()["status"], "ready")
        # contradicting gaps (sum -0.1 mm around the loop): the proof
        r = self.d.post("/v1/assemblies/%s/solve" % aid, {"g": [0.1, 0.1, -0.3, 0.5]})
        self.assertEqual(r.status, 200, r.body[:300])
        res = r.json()
        self.assertEqual(res["status"], "infeasible", res)
        self.assertEqual(res["contact"], [0, 1, 2])
        for k, d in enumerate([1.0, 1.0, 1.0, 0.0]):
            self.assertAlmostEqual(res["lambda"][k], d, delta=1e-12)
        # consistent gaps: an answer, by every method that does not read L_Q
        for solver in ("auto", "gi", "lemke"):
            r = self.d.post("/v1/assemblies/%s/solve" % aid,
                            {"g": [0.1, 0.1, 0.3, 0.5], "solver": solver})
            self.assertEqual(r.status, 200, r.body[:300])
            self.assertEqual(r.json()["status"], "optimal", (solver, r.json()))
        # the methods that need L_Q: refused at once, naming the pair
        for opts in ({"solver": "npm"}, {"solver": "ipm"},
                     {"solver": "gi", "formulation": "dual"}):
            self.assert_error(self.d.post("/v1/assemblies/%s/solve" % aid,
                                          dict(opts, g=[0.1, 0.1, 0.3, 0.5])),
                              409, "pairs[2]", "singular")
            self.assert_error(self.d.post("/v1/assemblies/%s/clouds" % aid,
                                          dict(opts, gaps=[[0.1, 0.1, 0.3, 0.5]])),
                              409, "pairs[2]", "singular")
        self.assertEqual(self.d.get("/v1/jobs?assembly=" + aid).json()["jobs"], [])


if __name__ == "__main__":
    unittest.main()
