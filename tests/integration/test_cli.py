"""test_cli -- the `gapsim` command end to end against a real gapsimd.

Every command (assembly upload/list/show/delete, solve, cloud submit/list/
status/cancel/summary/results, gen, health) on small generated models: exit
codes (0 ok, 1 server error, 2 usage, 3 cannot connect, 4 job failed or
cancelled, 5 local file error), human output, --json output that parses, and
numbers checked against the JSON API (solve -o w.npy equals the API's w;
cloud results -o equals the JSON results).
"""
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import time
import unittest

from api_common import DaemonCase
from gsd_harness import BIN_DIR, TMP, Daemon, binary, gen_model, loop_model, read_npy, write_npy

GAPSIM = os.path.join(BIN_DIR, "gapsim")


class CliTest(DaemonCase):
    @classmethod
    def setUpClass(cls):
        cls.gapsim = binary("gapsim")
        cls.dir = tempfile.mkdtemp(prefix="cli-", dir=TMP)
        cls.model, cls.gaps = gen_model(cls.dir, "lap", gaps=12, name="lap")
        cls.inline_model, cls.inline_gaps = gen_model(cls.dir, "sandwich", gaps=4, name="sw",
                                                      inline=True)
        super().setUpClass()

    @classmethod
    def prepare(cls):
        r = cls.run_cli(["assembly", "upload", cls.model, "--wait", "-q"])
        assert r.returncode == 0, r.stderr
        cls.asm = r.stdout.strip()
        _, cls.G = read_npy(cls.gaps)
        cls.m = json.loads(cls.run_cli(["--json", "assembly", "show", cls.asm]).stdout)["m"]

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def run_cli(cls, args, server=True, env=None, stdin=None, timeout=300):
        e = dict(os.environ)
        e.pop("GAPSIM_SERVER", None)
        if server:
            e["GAPSIM_SERVER"] = cls.d.url
        e.update(env or {})
        return subprocess.run([GAPSIM] + list(args), env=e, input=stdin, capture_output=True,
                              text=True, timeout=timeout)

    def cli(self, args, rc=0, **kw):
        r = self.run_cli(args, **kw)
        self.assertEqual(r.returncode, rc, "gapsim %s -> %d\nstdout: %s\nstderr: %s" %
                         (" ".join(args), r.returncode, r.stdout, r.stderr))
        return r

    def cli_json(self, args, **kw):
        return json.loads(self.cli(["--json"] + list(args), **kw).stdout)

    def test_summary_without_answers(self):
        """A cloud with no optimal result (GI stopped after one iteration):
        the summary says so instead of printing the server's placeholder
        zeros as residual, contact and n_act figures."""
        r = self.d.post("/v1/assemblies/%s/clouds" % self.asm,
                        {"gaps": [self.G[i * self.m:(i + 1) * self.m] for i in range(3)],
                         "solver": "gi", "max_iter": 1, "fastener_fraction": 1, "cache": False})
        self.assertEqual(r.status, 202, r.body[:300])
        job = self.d.wait_job(r.json()["id"])["id"]
        self.assertEqual(self.d.get("/v1/jobs/%s/summary" % job).json()["answers"], 0)
        out = self.cli(["cloud", "summary", job]).stdout
        self.assertRegex(out, r"answers:\s+none of 3 gaps has an optimal result: no residual, "
                              r"contact or n_act figures")
        for placeholder in ("gaps_above", "max_residual", "n_act:", "  ["):
            self.assertNotIn(placeholder, out)
        self.assertRegex(out, r"statuses:\s+max_iter 3")

    def test_assembly_show_without_l_q(self):
        """A model whose pairs close a loop (Q singular) stays ready; show
        names the dependent pair on an L_Q line."""
        path = self.tmp("loop.json")
        with open(path, "w") as f:
            json.dump(loop_model(), f)
        aid = self.cli(["assembly", "upload", path, "--wait", "-q"]).stdout.strip()
        try:
            a = self.d.wait_assembly(aid, lambda a: a["precompute"]["lq_error"])
            self.assertEqual(a["status"], "ready")
            out = self.cli(["assembly", "show", aid]).stdout
            self.assertRegex(out, r"(?m)^L_Q: +none, singular at pairs\[2\]: ")
            self.assertRegex(out, r"(?m)^factors: +not saved \(a saved file holds L_Q\): the "
                                  r"first solve after each start of the daemon computes them")
            self.assertIn("status:           ready", out)
        finally:
            self.cli(["assembly", "delete", aid])

    def test_assembly_show_unsaved_factors_after_a_restart(self):
        """A daemon stopped after "ready" but before the factors were saved:
        after the restart the assembly is neither in memory nor being saved
        (factors_saved false), and show says only what that JSON says (it
        said "in memory, being saved")."""
        d = Daemon(workers=1).start()
        try:
            env = {"GAPSIM_SERVER": d.url}
            aid = self.cli(["assembly", "upload", self.model, "--wait", "-q"],
                           env=env).stdout.strip()
            self.assertEqual(d.stop(), 0)
            # the save waits for 2 s of idle workers: make sure it had not
            # happened (test_api_restart.test_unsaved_factors does the same)
            db = sqlite3.connect(os.path.join(d.data_dir, "gapsim.db"))
            db.execute("UPDATE assemblies SET factor_checksum='' WHERE id=?", (aid,))
            db.commit()
            db.close()
            fac = os.path.join(d.data_dir, "assemblies", aid, "factors.bin")
            if os.path.exists(fac):
                os.unlink(fac)
            d.start()
            env = {"GAPSIM_SERVER": d.url}  # another port: the harness's daemons take any
            a = self.cli_json(["assembly", "show", aid], env=env)
            self.assertEqual((a["status"], a["factors_saved"]), ("ready", False))
            out = self.cli(["assembly", "show", aid], env=env).stdout
            self.assertRegex(out, r"(?m)^factors: +not saved yet: saved once the workers are "
                                  r"idle; if the daemon stops first, the first solve after the "
                                  r"restart computes them again$")
            self.assertNotIn("in memory", out)
        finally:
            d.cleanup()

    def row(self, k):
        return self.G[k * self.m:(k + 1) * self.m]

    def tmp(self, name):
        return os.path.join(self.dir, name)

    # ---- help, version, usage errors ------------------------------------------------
    COMMANDS = {"assembly": ["upload", "list", "show", "delete"],
                "cloud": ["submit", "list", "status", "cancel", "summary", "results", "export"],
                "solve": [], "gen": [], "pair": [], "health": []}

    def test_help_everywhere(self):
        """Every command has its help, and gapsim --help names each one."""
        top = self.cli(["--help"], server=False).stdout
        self.assertTrue(top.startswith("usage: gapsim"), top[:80])
        for group, subs in self.COMMANDS.items():
            lines = [ln for ln in top.splitlines() if ln.strip().startswith(group + " ")]
            self.assertTrue(lines, "gapsim --help does not name %s" % group)
            for args in [[group]] + [[group, sub] for sub in subs]:
                r = self.cli(args + ["--help"], server=False)
                self.assertTrue(r.stdout.startswith("usage: gapsim"), (args, r.stdout[:80]))
            for sub in subs:
                self.assertTrue(any(re.search(r"\b%s\b" % sub, ln) for ln in lines),
                                "gapsim --help does not name %s %s" % (group, sub))
        r = self.cli(["--version"], server=False)
        self.assertRegex(r.stdout, r"^gapsim \d+\.\d+\.\d+")

    def test_usage_errors_exit_2(self):
        cases = [[], ["frobnicate"], ["assembly"], ["assembly", "nope"], ["cloud", "nope"],
                 ["assembly", "list", "--bogus"], ["assembly", "show"],
                 ["assembly", "show", "a", "b"],
                 ["solve", "--gaps", self.gaps],                        # no --assembly
                 ["solve", "--assembly", self.asm],                     # no gap
                 ["solve", "--assembly", self.asm, "--gaps", self.gaps, "--g-json", "x"],
                 ["solve", "--assembly", self.asm, "--gaps", self.gaps, "--tol", "2"],
                 ["solve", "--assembly", self.asm, "--gaps", self.gaps, "--tol", "abc"],
                 ["solve", "--assembly", self.asm, "--gaps", self.gaps, "--solver", "magic"],
                 ["solve", "--assembly", self.asm, "--gaps", self.gaps, "--fasteners", "1,x"],
                 ["solve", "--assembly", self.asm, "--gaps", self.gaps, "--fasteners", "all",
                  "--fraction", "0.5"],
                 ["solve", "--assembly", self.asm, "--gaps", self.gaps, "--row", "12"],
                 ["solve", "--assembly", self.asm, "--gaps", self.gaps, "--row"],
                 ["cloud", "submit", "--assembly", self.asm],
                 ["cloud", "summary", "j_0123456789abcdef", "--bins", "0"],
                 ["cloud", "results", "j_0123456789abcdef", "--field", "x"],
                 ["gen", "--kind", "nope"], ["gen", "--bogus"]]
        for args in cases:
            r = self.cli(args, rc=2)
            self.assertTrue(r.stderr.strip(), args)
            self.assertEqual(r.stdout, "", args)

    def test_cannot_connect_exit_3(self):
        dead = "http://127.0.0.1:1"
        r = self.cli(["--server", dead, "health"], rc=3, server=False)
        self.assertIn("cannot connect", r.stderr)
        self.cli(["assembly", "list"], rc=3, server=False, env={"GAPSIM_SERVER": dead})
        self.cli(["assembly", "list", "--server", dead], rc=3)  # after the command too
        self.cli(["solve", "--assembly", self.asm, "--gaps", self.gaps, "--server=" + dead], rc=3)

    def test_local_file_errors_exit_5(self):
        r = self.cli(["assembly", "upload", self.tmp("missing.json")], rc=5)
        self.assertIn("missing.json", r.stderr)
        # a model whose .npy block is not next to it
        lonely = os.path.join(self.dir, "lonely")
        os.makedirs(lonely, exist_ok=True)
        shutil.copy(self.model, lonely)
        r = self.cli(["assembly", "upload", os.path.join(lonely, "lap.json")], rc=5)
        self.assertIn("lap.part0.npy", r.stderr)
        with open(self.tmp("bad.json"), "w") as f:
            f.write('{"format": ')
        self.cli(["assembly", "upload", self.tmp("bad.json")], rc=5)
        self.cli(["solve", "--assembly", self.asm, "--gaps", self.tmp("missing.npy")], rc=5)
        self.cli(["solve", "--assembly", self.asm, "--gaps", self.model], rc=5)  # not a .npy
        self.cli(["solve", "--assembly", self.asm, "--g-json", self.tmp("missing.json")], rc=5)
        self.cli(["cloud", "submit", "--assembly", self.asm, "--gaps", self.tmp("missing.npy")],
                 rc=5)
        r = self.cli(["solve", "--assembly", self.asm, "--gaps", self.gaps, "-o",
                      self.tmp("no/such/dir/w.npy")], rc=5)
        self.assertIn("w.npy", r.stderr)

    # ---- server errors -------------------------------------------------------------------
    def test_server_errors_exit_1(self):
        r = self.cli(["assembly", "show", "a_0123456789abcdef"], rc=1)
        self.assertIn("no assembly a_0123456789abcdef", r.stderr)
        self.assertIn("not_found", r.stderr)
        r = self.cli(["solve", "--assembly", "a_0123456789abcdef", "--gaps", self.gaps], rc=1)
        self.assertIn("no assembly a_0123456789abcdef", r.stderr)
        r = self.cli(["cloud", "status", "j_0123456789abcdef"], rc=1)
        self.assertIn("no job j_0123456789abcdef", r.stderr)
        self.cli(["cloud", "summary", "j_0123456789abcdef"], rc=1)
        self.cli(["cloud", "results", "j_0123456789abcdef", "-o", self.tmp("never.npy")], rc=1)
        self.assertFalse(os.path.exists(self.tmp("never.npy")))
        # the server's field is printed: a gap of the wrong length
        with open(self.tmp("short.json"), "w") as f:
            json.dump([0.1, 0.2], f)
        r = self.cli(["solve", "--assembly", self.asm, "--g-json", self.tmp("short.json")], rc=1)
        self.assertIn("at g:", r.stderr)
        # a warm start that is not a result id
        r = self.cli(["solve", "--assembly", self.asm, "--gaps", self.gaps, "--warm-start",
                      "j_0123456789abcdef"], rc=1)
        self.assertIn("warm_start", r.stderr)
        # --json: the error body as is on stdout
        r = self.cli(["--json", "assembly", "show", "a_0123456789abcdef"], rc=1)
        self.assertEqual(json.loads(r.stdout)["error"]["code"], "not_found")
        # a JSON file that is not a model: rejected by the server
        with open(self.tmp("notmodel.json"), "w") as f:
            json.dump({"format": "something-else"}, f)
        r = self.cli(["assembly", "upload", self.tmp("notmodel.json")], rc=1)
        self.assertIn("format", r.stderr)

    # ---- assemblies ------------------------------------------------------------------------
    def test_health(self):
        r = self.cli(["health"])
        self.assertIn("status:", r.stdout)
        hz = self.cli_json(["health"])
        self.assertEqual(hz["status"], "ok")
        kernel = [ln.split(None, 1)[1] for ln in r.stdout.splitlines()
                  if ln.startswith("blas_kernel:")]
        want = hz["blas"]["kernel"] + (" (chosen by OPENBLAS_CORETYPE)" if hz["blas"]["pinned"] else "")
        self.assertEqual(kernel, [want])
        self.assertNotIn("degraded:", r.stdout)

    def test_assembly_commands(self):
        a = self.cli_json(["assembly", "show", self.asm])
        deadline = time.time() + 30  # the factors are saved after "ready"
        while not a["factors_saved"] and time.time() < deadline:
            time.sleep(0.02)
            a = self.cli_json(["assembly", "show", self.asm])
        r = self.cli(["assembly", "show", self.asm])
        self.assertRegex(r.stdout, r"status:\s+ready")
        self.assertRegex(r.stdout, r"m:\s+%d contact pairs" % self.m)
        self.assertRegex(r.stdout, r"factors:\s+saved in the data directory")
        api = self.d.get("/v1/assemblies/" + self.asm).json()
        self.assertEqual(a, api)
        # the same content again: the existing assembly
        again = self.cli_json(["assembly", "upload", self.model])
        self.assertEqual(again["id"], self.asm)
        r = self.cli(["assembly", "list"])
        self.assertTrue(r.stdout.startswith("ID "))
        self.assertIn(self.asm, r.stdout)
        ids = [x["id"] for x in self.cli_json(["assembly", "list"])["assemblies"]]
        self.assertIn(self.asm, ids)

    def test_upload_files_named_by_objects(self):
        # "K": {"file": ..., "format": ...} (any FE format) is a file reference
        # too: sent as a part of the multipart upload, like "K": "x.npy"
        d = tempfile.mkdtemp(prefix="cli-obj-", dir=TMP)
        for fmt in ("matrix-market", "nastran-dmig"):
            mp, _ = gen_model(d, "lap", gaps=2, name="u_" + fmt.replace("-", "_"),
                              extra=["--uncondensed", "--matrix-format", fmt])
            with open(mp) as f:
                doc = json.load(f)
            self.assertEqual(doc["parts"][0]["K"]["format"], fmt)
            a = self.cli_json(["assembly", "upload", mp, "--wait"])
            self.assertEqual(a["status"], "ready", fmt)
            self.assertEqual(a["m"], self.m, fmt)
            self.assertEqual(a["n"], sum(p["ndof"] for p in doc["parts"]), fmt)
            self.cli(["assembly", "delete", a["id"]])

    def test_upload_inline_then_delete(self):
        r = self.cli(["assembly", "upload", self.inline_model, "--wait"])
        self.assertRegex(r.stdout, r"status:\s+ready")
        self.assertRegex(r.stdout, r"joint:\s+sandwich")
        aid = [ln.split()[1] for ln in r.stdout.splitlines() if ln.startswith("id:")][0]
        with open(self.inline_model) as f:
            self.assertIsInstance(json.load(f)["parts"][0]["K"], list)  # really inline
        # no --wait: accepted, then ready by polling show
        r = self.cli(["assembly", "delete", aid])
        self.assertEqual(r.stdout.strip(), "deleted " + aid)
        r = self.cli(["assembly", "show", aid], rc=1)
        self.assertIn("no assembly " + aid, r.stderr)
        a = self.cli_json(["assembly", "upload", self.inline_model])
        self.assertIn(a["status"], ("queued", "loading", "precomputing", "ready"))
        self.assertEqual(self.cli_json(["assembly", "delete", a["id"]]),
                         {"id": a["id"], "deleted": True})

    # ---- solve -------------------------------------------------------------------------------
    def test_solve_matches_api(self):
        out = self.tmp("w2.npy")
        r = self.cli(["solve", "--assembly", self.asm, "--gaps", self.gaps, "--row", "2",
                      "--fasteners", "all", "-o", out])
        self.assertRegex(r.stdout, r"status:\s+optimal")
        self.assertRegex(r.stdout, r"kkt:\s+pass")
        rid = [ln.split()[1] for ln in r.stdout.splitlines() if ln.startswith("result:")][0]
        shape, w = read_npy(out)
        self.assertEqual(shape, (self.m,))
        api = self.d.post("/v1/assemblies/%s/solve" % self.asm,
                          {"g": self.row(2), "fasteners": "all"}).json()
        self.assertEqual(w, api["w"])
        self.assertEqual(rid, api["id"])  # the same solve: the cached result
        # another method asked: the cached answer, and the table says whose it is
        r = self.cli(["solve", "--assembly", self.asm, "--gaps", self.gaps, "--row", "2",
                      "--fasteners", "all", "--solver", "lemke"])
        self.assertRegex(r.stdout, r"cached:\s+yes \(computed by %s; --no-cache solves with "
                         r"lemke\)" % api["solver"])
        r = self.cli(["solve", "--assembly", self.asm, "--gaps", self.gaps, "--row", "2",
                      "--fasteners", "all", "--solver", api["solver"]])
        self.assertRegex(r.stdout, r"cached:\s+yes\n")
        stored = self.d.get("/v1/results/" + rid).json()
        self.assertEqual(w, stored["w"])
        # --json: the server's answer as is; -o --field lambda
        lam_out = self.tmp("lam2.npy")
        j = self.cli_json(["solve", "--assembly", self.asm, "--gaps", self.gaps, "--row", "2",
                           "--fasteners", "all", "-o", lam_out, "--field", "lambda"])
        self.assertEqual(j["w"], api["w"])
        self.assertEqual(read_npy(lam_out)[1], api["lambda"])

    def test_solve_g_json_options_and_warm_start(self):
        g = self.row(5)
        with open(self.tmp("g5.json"), "w") as f:
            json.dump({"g": g}, f)
        j = self.cli_json(["solve", "--assembly", self.asm, "--g-json", self.tmp("g5.json"),
                           "--solver", "npm", "--formulation", "dual", "--tol", "1e-9",
                           "--fasteners", "0,2,4"])
        self.assertEqual(j["solver"], "npm")
        self.assertEqual(j["formulation"], "dual")
        api = self.d.post("/v1/assemblies/%s/solve" % self.asm,
                          {"g": g, "solver": "npm", "formulation": "dual", "tol": 1e-9,
                           "fasteners": [0, 2, 4]}).json()
        self.assertEqual(j["w"], api["w"])
        # a bare array from stdin, a warm start from that result, x written
        x_out = self.tmp("x5.npy")
        j2 = self.cli_json(["solve", "--assembly", self.asm, "--g-json", "-", "--solver", "npm",
                            "--fasteners", "0,2,4", "--warm-start", j["id"], "-o", x_out,
                            "--field", "x"], stdin=json.dumps(g))
        self.assertTrue(j2["warm_start_used"])
        self.assertEqual(read_npy(x_out)[1], j2["x"])
        r = self.cli(["solve", "--assembly", self.asm, "--gaps", self.gaps, "--fraction", "0.5",
                      "--fixed-pairs", "0,1"])
        self.assertRegex(r.stdout, r"status:\s+optimal")

    def test_method_options(self):
        # --ipm-linear / --ipm-start / --npm-linear / --linesearch reach the server: in the JSON
        # body of a solve (a gap of its own: the result cache answers any solver), in the query
        # string of an .npy cloud and in the body of a generated one
        g = [1.001 * v for v in self.row(7)]
        with open(self.tmp("g7.json"), "w") as f:
            json.dump({"g": g}, f)
        j = self.cli_json(["solve", "--assembly", self.asm, "--g-json", self.tmp("g7.json"),
                           "--solver", "ipm", "--ipm-linear", "direct", "--ipm-start", "feasible"])
        self.assertEqual((j["solver"], j["status"]), ("ipm", "optimal"))
        self.assertIs(j["cached"], False)
        ref = self.d.post("/v1/assemblies/%s/solve" % self.asm, {"g": g, "solver": "lemke"}).json()
        self.assertLess(max(abs(a - b) for a, b in zip(j["w"], ref["w"])), 1e-7)
        # --no-cache: the same gap solved again by the method asked, not the cached IPM result
        n = self.cli_json(["solve", "--assembly", self.asm, "--g-json", self.tmp("g7.json"),
                           "--solver", "lemke", "--no-cache"])
        self.assertEqual((n["solver"], n["cached"]), ("lemke", False))
        self.assertNotEqual(n["id"], j["id"])
        u = self.cli_json(["cloud", "submit", "--assembly", self.asm, "--gaps", self.gaps,
                           "--solver", "npm", "--npm-linear", "cg", "--linesearch", "armijo",
                           "--fraction", "0.5", "--wait"])
        self.assertEqual((u["status"], u["options"]["npm_linear"], u["options"]["linesearch"]),
                         ("done", "cg", "armijo"))
        c = self.cli_json(["cloud", "submit", "--assembly", self.asm, "--generate", "2",
                           "--solver", "ipm", "--ipm-linear", "split", "--wait"])
        self.assertEqual((c["status"], c["options"]["ipm_linear"]), ("done", "split"))
        n = self.cli_json(["cloud", "submit", "--assembly", self.asm, "--gaps", self.gaps,
                           "--solver", "lemke", "--fraction", "0.5", "--no-cache", "--wait"])
        self.assertEqual((n["status"], n["options"]["cache"]), ("done", False))
        rows = self.d.get("/v1/jobs/%s/results?fields=none" % n["id"]).json()["results"]
        self.assertEqual({x["solver"] for x in rows}, {"lemke"})  # not the npm cloud's copies
        for flag, words in (("--ipm-linear", "mixed, split, jacobi or direct"),
                            ("--ipm-start", "auto, feasible or infeasible"),
                            ("--npm-linear", "combined, chol or cg"),
                            ("--linesearch", "exact, golden or armijo")):
            r = self.cli(["solve", "--assembly", self.asm, "--gaps", self.gaps, flag, "float"],
                         rc=2)
            self.assertIn(words, r.stderr)

    # ---- clouds --------------------------------------------------------------------------------
    def test_cloud_flow(self):
        r = self.cli(["cloud", "submit", "--assembly", self.asm, "--gaps", self.gaps,
                      "--fasteners", "all", "--wait"])
        self.assertRegex(r.stdout, r"status:\s+done")
        self.assertRegex(r.stdout, r"progress:\s+12/12 done, 0 failed")
        # not a terminal: plain progress lines on stderr, the last one final
        self.assertIn("done: 12/12 done", r.stderr.strip().splitlines()[-1])
        job = [ln.split()[1] for ln in r.stdout.splitlines() if ln.startswith("job:")][0]

        st = self.cli_json(["cloud", "status", job])
        self.assertEqual(st["status"], "done")
        self.assertEqual(st["options"]["fasteners"], "all")
        r = self.cli(["cloud", "status", job, "--wait"])  # already ended: returns at once
        self.assertRegex(r.stdout, r"status:\s+done")
        self.assertIn(job, self.cli(["cloud", "list", "--assembly", self.asm]).stdout)
        self.assertIn(job, [x["id"] for x in self.cli_json(["cloud", "list", "--status",
                                                            "done"])["jobs"]])

        # summary: human and JSON (equal to the API's)
        r = self.cli(["cloud", "summary", job, "--threshold", "0.05", "--bins", "5"])
        self.assertRegex(r.stdout, r"solved:\s+12 of 12 gaps")
        self.assertRegex(r.stdout, r"threshold:\s+0.05 mm")
        self.assertEqual(len([ln for ln in r.stdout.splitlines() if ln.startswith("  [")]), 5)
        s = self.cli_json(["cloud", "summary", job, "--threshold", "0.05", "--bins", "5"])
        api = self.d.get("/v1/jobs/%s/summary?threshold=0.05&bins=5" % job).json()
        self.assertEqual(s, api)

        # results -o: the .npy equals the JSON results
        page = self.d.get("/v1/jobs/%s/results?limit=1000&fields=w,lambda" % job).json()
        by_index = {x["job_index"]: x for x in page["results"]}
        for field in ("w", "lambda"):
            out = self.tmp("W_%s.npy" % field)
            args = ["cloud", "results", job, "-o", out] + (["--field", field] if field != "w"
                                                           else [])
            r = self.cli(args)
            self.assertEqual(r.stdout.strip(), "wrote %s: 12 x %d (%s)" % (out, self.m, field))
            shape, v = read_npy(out)
            self.assertEqual(shape, (12, self.m))
            for i in range(12):
                self.assertEqual(v[i * self.m:(i + 1) * self.m], by_index[i][field])
        # results without -o: a table, or every result as JSON
        r = self.cli(["cloud", "results", job])
        self.assertEqual(len(r.stdout.strip().splitlines()), 13)
        allr = self.cli_json(["cloud", "results", job])
        self.assertEqual(allr["total"], 12)
        self.assertIsNone(allr["next_offset"])
        self.assertEqual([x["w"] for x in sorted(allr["results"], key=lambda x: x["job_index"])],
                         [by_index[i]["w"] for i in range(12)])

        # cancelling an ended job: the server's 409
        r = self.cli(["cloud", "cancel", job], rc=1)
        self.assertIn("conflict", r.stderr)

        # warm start from that job
        r = self.cli(["cloud", "submit", "--assembly", self.asm, "--gaps", self.gaps,
                      "--fasteners", "all", "--warm-start", job, "--wait", "-q"])
        job2 = r.stdout.strip()
        self.assertRegex(job2, r"^j_[0-9a-f]{16}$")
        st2 = self.cli_json(["cloud", "status", job2])
        self.assertEqual((st2["status"], st2["options"]["warm_start"]), ("done", job))
        # a warm start with another number of gaps: the server says why
        write_npy(self.tmp("g3.npy"), [self.row(i) for i in range(3)])
        r = self.cli(["cloud", "submit", "--assembly", self.asm, "--gaps", self.tmp("g3.npy"),
                      "--warm-start", job], rc=1)
        self.assertIn("warm_start", r.stderr)

    def test_cloud_submit_json_no_wait(self):
        j = self.cli_json(["cloud", "submit", "--assembly", self.asm, "--gaps", self.gaps,
                           "--fraction", "0.5", "--solver", "gi"])
        self.assertIn(j["status"], ("queued", "running", "done"))
        self.assertEqual(j["total"], 12)
        self.assertEqual(j["options"]["solver"], "gi")
        self.assertEqual(j["options"]["fastener_fraction"], 0.5)
        final = self.cli_json(["cloud", "status", j["id"], "--wait"])
        self.assertEqual(final["status"], "done")
        self.assertEqual(final["done"], 12)

    def test_cloud_generate_and_label(self):
        # --generate: the server's gaps are gapsim-gen's for the seed (gen_model used seed 1)
        j = self.cli_json(["cloud", "submit", "--assembly", self.asm, "--generate", "12",
                           "--seed", "1", "--label", "line 3", "--fraction", "0.5", "--wait"])
        self.assertEqual((j["status"], j["total"]), ("done", 12))
        self.assertEqual(j["options"]["generate"], {"count": 12, "seed": 1})
        self.assertEqual(j["options"]["label"], "line 3")
        g = self.d.get("/v1/jobs/%s/gaps?index=5" % j["id"]).json()["g"]
        self.assertEqual(g, self.row(5))
        # a label on an .npy upload goes in the query string
        u = self.cli_json(["cloud", "submit", "--assembly", self.asm, "--gaps", self.gaps,
                           "--label", "a&b c", "--chain", "auto"])
        self.assertEqual(u["options"]["label"], "a&b c")
        self.assertEqual(u["options"]["chain"], "auto")
        c = self.cli_json(["cloud", "submit", "--assembly", self.asm, "--generate", "4",
                           "--scatter", "0.1", "--chain", "on", "--fraction", "0.5", "--wait"])
        self.assertEqual((c["status"], c["options"]["chain"]), ("done", "on"))
        self.assertEqual(c["options"]["generate"], {"count": 4, "seed": 1, "scatter": 0.1})
        listing = self.cli(["cloud", "list", "--assembly", self.asm]).stdout
        self.assertIn("LABEL", listing.splitlines()[0])
        self.assertTrue(any(l.endswith("line 3") for l in listing.splitlines()), listing)
        # --gaps-from: the generated gaps again, under another pattern, warm
        f = self.cli_json(["cloud", "submit", "--assembly", self.asm, "--gaps-from", j["id"],
                           "--fasteners", "0,1", "--warm-start", j["id"], "--wait"])
        self.assertEqual((f["status"], f["total"], f["failed"]), ("done", 12, 0))
        self.assertEqual(f["options"]["gaps_from"], j["id"])
        g = self.d.get("/v1/jobs/%s/gaps?index=5" % f["id"]).json()["g"]
        self.assertEqual(g, self.row(5))
        one = "give one of --gaps GAPS.npy, --generate K or --gaps-from JOB"
        for args, words in ((["--gaps", self.gaps, "--generate", "3"], one),
                            ([], one), (["--generate", "3", "--gaps-from", j["id"]], one),
                            (["--generate", "0"], "--generate must be an integer in [1, "),
                            (["--generate", "3", "--seed", "-1"], "--seed must be an integer in [0, "),
                            (["--gaps", self.gaps, "--seed", "2"], "--seed goes with --generate"),
                            (["--generate", "3", "--chain", "often"], "--chain must be off, on or auto"),
                            (["--gaps", self.gaps, "--scatter", "0.1"], "--scatter goes with --generate"),
                            (["--generate", "3", "--scatter", "2"], "--scatter must be a number in [0, 1]")):
            r = self.cli(["cloud", "submit", "--assembly", self.asm] + args, rc=2)
            self.assertIn(words, r.stderr)
        r = self.cli(["cloud", "submit", "--assembly", self.asm, "--generate", "3", "--label",
                      "x" * 121], rc=1)
        self.assertIn("label", r.stderr)

    def test_cloud_results_json_of_many_pages(self):
        # --json merges the result pages (1,000 a page) into one document,
        # streamed page by page: the server's page format with every result
        j = self.cli_json(["cloud", "submit", "--assembly", self.asm, "--generate", "2100",
                           "--seed", "2", "--fraction", "0.5", "--wait"], timeout=600)
        self.assertEqual((j["status"], j["done"]), ("done", 2100))
        doc = self.cli_json(["cloud", "results", j["id"], "--field", "lambda"])
        self.assertEqual((doc["total"], doc["limit"], doc["next_offset"]), (2100, 2100, None))
        self.assertEqual(sorted(r["job_index"] for r in doc["results"]), list(range(2100)))
        pages = []
        for off in (0, 1000, 2000):
            pages += self.d.get("/v1/jobs/%s/results?offset=%d&limit=1000&fields=lambda"
                                % (j["id"], off)).json()["results"]
        self.assertEqual(doc["results"], pages)

    def test_npy_submit_sends_the_numbers_typed(self):
        # an .npy upload carries its options in the query string, whose numbers
        # the server reads as JSON's: the CLI sends the values it parsed, so
        # ".5", "1.e-9" and "03" mean there what they mean in a JSON body
        u = self.cli_json(["cloud", "submit", "--assembly", self.asm, "--gaps", self.gaps,
                           "--fraction", ".5", "--tol", "1.e-9", "--max-iter", "0500",
                           "--wait"])
        self.assertEqual(u["status"], "done")
        o = u["options"]
        self.assertEqual((o["fastener_fraction"], o["tol"], o["max_iter"]), (0.5, 1e-9, 500))
        v = self.cli_json(["cloud", "submit", "--assembly", self.asm, "--gaps", self.gaps,
                           "--fasteners", "03,1", "--fixed-pairs", "007"])
        self.assertEqual((v["options"]["fasteners"], v["options"]["fixed_pairs"]), ([3, 1], [7]))

    def test_cloud_cancelled_wait_exit_4(self):
        # a cloud slow enough to cancel on any machine: 50,000 generated gaps
        # with the interior point method, seconds of work (3,000 rows of 12
        # distinct gaps with the reference solver: 12 solves and the cache)
        job = self.cli(["cloud", "submit", "--assembly", self.asm, "--generate", "50000",
                        "--seed", "11", "--solver", "ipm", "-q"]).stdout.strip()
        r = self.cli(["cloud", "cancel", job])
        self.assertRegex(r.stdout, r"status:\s+cancel")
        r = self.cli(["cloud", "status", job, "--wait"], rc=4)
        self.assertIn("cancelled", r.stderr)
        self.assertRegex(r.stdout, r"status:\s+cancelled")

    # ---- output files, stdout, signals ----------------------------------------------------------
    def done_job(self):
        """A finished 12-gap job of the class's assembly (made once)."""
        cls = type(self)
        if not getattr(cls, "_done_job", None):
            r = self.cli(["cloud", "submit", "--assembly", self.asm, "--gaps", self.gaps,
                          "--fraction", "0.5", "--wait", "-q"])
            cls._done_job = r.stdout.strip()
        return cls._done_job

    def scratch(self, name):
        d = os.path.join(self.dir, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        return d

    def test_output_through_a_dangling_symlink(self):
        """-o onto a symlink that names no file yet writes the file it names,
        as the shell's > does, and keeps the link (it was replaced by a
        regular file, the file it named never written); through a chain of
        two links as well; a link into a missing directory is an error that
        leaves the link as it was."""
        job = self.done_job()
        d = self.scratch("dangling")
        csv = self.d.get("/v1/jobs/%s/summary?format=csv" % job).body
        os.symlink("target.csv", os.path.join(d, "dl.csv"))
        self.cli(["cloud", "export", job, "--format", "csv", "-o", os.path.join(d, "dl.csv")])
        self.assertEqual(os.readlink(os.path.join(d, "dl.csv")), "target.csv")
        with open(os.path.join(d, "target.csv"), "rb") as f:
            self.assertEqual(f.read(), csv)
        # cloud results -o, through a chain: l1 -> sub/l2 -> w.npy (sub/w.npy)
        os.makedirs(os.path.join(d, "sub"))
        os.symlink("sub/l2", os.path.join(d, "l1"))
        os.symlink("w.npy", os.path.join(d, "sub", "l2"))
        self.cli(["cloud", "results", job, "-o", os.path.join(d, "l1")])
        self.assertEqual(os.readlink(os.path.join(d, "l1")), "sub/l2")
        self.assertEqual(os.readlink(os.path.join(d, "sub", "l2")), "w.npy")
        shape, _ = read_npy(os.path.join(d, "sub", "w.npy"))
        self.assertEqual(shape, (12, self.m))
        # solve -o
        os.symlink("w0.npy", os.path.join(d, "w0link.npy"))
        self.cli(["solve", "--assembly", self.asm, "--gaps", self.gaps, "-o",
                  os.path.join(d, "w0link.npy")])
        self.assertEqual(os.readlink(os.path.join(d, "w0link.npy")), "w0.npy")
        self.assertEqual(read_npy(os.path.join(d, "w0.npy"))[0], (self.m,))
        # a link whose file cannot be made: exit 5, the link untouched
        os.symlink("no/such/dir/x.csv", os.path.join(d, "bad.csv"))
        r = self.cli(["cloud", "export", job, "--format", "csv", "-o",
                      os.path.join(d, "bad.csv")], rc=5)
        self.assertIn("the symlink", r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertEqual(os.readlink(os.path.join(d, "bad.csv")), "no/such/dir/x.csv")
        self.assertEqual(sorted(os.listdir(d)),
                         ["bad.csv", "dl.csv", "l1", "sub", "target.csv", "w0.npy", "w0link.npy"])
        self.assertEqual(sorted(os.listdir(os.path.join(d, "sub"))), ["l2", "w.npy"])

    def test_output_link_to_a_closed_stdout(self):
        """mystdout -> /proc/self/fd/1 with fd 1 closed (as /dev/stdout is
        then): the file cannot be made, exit 5 with the reason, and the link
        stays a link (it was replaced by a regular file: over /dev/stdout,
        the system's own link)."""
        job = self.done_job()
        d = self.scratch("closed-stdout")
        link = os.path.join(d, "mystdout")
        os.symlink("/proc/self/fd/1", link)
        e = dict(os.environ, GAPSIM_SERVER=self.d.url)
        for args in (["cloud", "export", job, "--format", "csv", "-o", link],
                     ["cloud", "results", job, "-o", link]):
            p = subprocess.run([GAPSIM] + args, env=e, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, timeout=60,
                               preexec_fn=lambda: os.close(1))
            self.assertTrue(os.path.islink(link), "the link was replaced: " + p.stderr)
            self.assertEqual(os.readlink(link), "/proc/self/fd/1")
            self.assertEqual(os.listdir(d), ["mystdout"])
            self.assertEqual(p.returncode, 5, p.stderr)
            self.assertIn("cannot create '/proc/self/fd/1'", p.stderr)

    def test_results_into_a_fifo_and_dev_stdout(self):
        """cloud results -o FIFO delivers the .npy and ends (it hung reading
        the FIFO back for the shape); -o /dev/stdout on a pipe is exit 0 with
        the .npy on stdout and the 'wrote' line on stderr (it was exit 1, "is
        not a regular file")."""
        job = self.done_job()
        d = self.scratch("fifo")
        ref = os.path.join(d, "w.npy")
        self.cli(["cloud", "results", job, "-o", ref])
        with open(ref, "rb") as f:
            want = f.read()
        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)
        got = []

        def reader():
            with open(fifo, "rb") as f:
                got.append(f.read())
        import threading
        t = threading.Thread(target=reader, daemon=True)
        t.start()
        r = self.cli(["cloud", "results", job, "-o", fifo], timeout=30)
        t.join(10)
        self.assertEqual(r.stdout.strip(), "wrote %s: 12 x %d (w)" % (fifo, self.m))
        self.assertEqual(got, [want])
        e = dict(os.environ, GAPSIM_SERVER=self.d.url)
        p = subprocess.run([GAPSIM, "cloud", "results", job, "-o", "/dev/stdout"], env=e,
                           capture_output=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, want)
        self.assertIn(b"wrote /dev/stdout: 12 x %d (w)" % self.m, p.stderr)
        p = subprocess.run([GAPSIM, "--json", "cloud", "export", job, "--format", "csv", "-o",
                            "/dev/stdout"], env=e, capture_output=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, self.d.get("/v1/jobs/%s/summary?format=csv" % job).body)
        self.assertEqual(json.loads(p.stderr)["path"], "/dev/stdout")

    def test_signal_removes_the_temporary_file(self):
        """^C (SIGINT) or SIGTERM during an -o download: the temporary file
        X.tmp.XXXXXX is removed (it was left, as large as what had arrived)
        and the command ends by the signal. The server here sends the
        headers and a part of the body, then stalls."""
        import socket
        import threading
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)
        port = srv.getsockname()[1]
        conns = []

        def serve():
            while True:
                try:
                    c, _ = srv.accept()
                except OSError:
                    return
                conns.append(c)
                c.recv(65536)
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\n"
                          b"Content-Length: 50000000\r\n\r\n" + b"x" * 200000)
        threading.Thread(target=serve, daemon=True).start()
        d = self.scratch("signal")
        out = os.path.join(d, "big.csv")
        try:
            for sig in (signal.SIGINT, signal.SIGTERM):
                p = subprocess.Popen([GAPSIM, "--server", "http://127.0.0.1:%d" % port, "cloud",
                                      "export", "j_0123456789abcdef", "--format", "csv", "-o",
                                      out], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                t0 = time.time()
                tmp = []
                while time.time() - t0 < 30:  # the temporary file has the bytes sent
                    tmp = [f for f in os.listdir(d) if f.startswith("big.csv.tmp.")]
                    if tmp and os.path.getsize(os.path.join(d, tmp[0])) >= 200000:
                        break
                    time.sleep(0.05)
                self.assertTrue(tmp, "no temporary file")
                p.send_signal(sig)
                p.communicate(timeout=30)
                self.assertEqual(p.returncode, -sig)
                self.assertEqual(os.listdir(d), [])
        finally:
            srv.close()
            for c in conns:
                c.close()

    def test_nothing_on_stdout_after_errors(self):
        """Exit 3 and 5 (and 1 without --json) print nothing on stdout: solve
        writes -o before its result block, cloud results prints the table's
        header with the first page, gapsim gen its report once the files are
        written (and a directory it made is removed when writing fails)."""
        r = self.cli(["solve", "--assembly", self.asm, "--gaps", self.gaps, "-o",
                      self.tmp("no/such/dir/w.npy")], rc=5)
        self.assertEqual(r.stdout, "")
        r = self.cli(["--json", "solve", "--assembly", self.asm, "--gaps", self.gaps, "-o",
                      self.tmp("no/such/dir/w.npy")], rc=5)
        self.assertEqual(r.stdout, "")
        r = self.cli(["cloud", "results", "j_0123456789abcdef"], rc=3, server=False,
                     env={"GAPSIM_SERVER": "http://127.0.0.1:1"})
        self.assertEqual(r.stdout, "")
        r = self.cli(["cloud", "results", "j_0123456789abcdef"], rc=1)
        self.assertEqual(r.stdout, "")
        d = self.scratch("gen-fails")
        out = os.path.join(d, "new", "sub")
        # a name too long for its temporary file: the first write fails
        r = self.cli(["gen", "--kind", "lap", "--small", "--out", out, "--name", "x" * 240,
                      "--gaps", "3", "--no-cond"], rc=5, server=False)
        self.assertIn("cannot create a temporary file", r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertEqual(os.listdir(d), [])
        # ... and a directory that was there stays
        os.makedirs(out)
        self.cli(["gen", "--kind", "lap", "--small", "--out", out, "--name", "x" * 240,
                  "--gaps", "3", "--no-cond"], rc=5, server=False)
        self.assertEqual(os.listdir(out), [])
        # ... also reached through "..": a failed run deleted every file of
        # the directory that was there (it took "new/.." for a new directory)
        mine = self.scratch("gen-mine")
        for name in ("thesis.tex", "data.csv"):
            with open(os.path.join(mine, name), "w") as f:
                f.write(name)
        os.mkdir(os.path.join(mine, "m.gaps.npy"))  # the gap file cannot be written
        for via in ("new/..", "new/../../gen-mine"):
            self.cli(["gen", "--kind", "lap", "--small", "--out", os.path.join(mine, via),
                      "--name", "m", "--gaps", "3", "--no-cond"], rc=5, server=False)
            for name in ("thesis.tex", "data.csv"):
                with open(os.path.join(mine, name)) as f:
                    self.assertEqual(f.read(), name, via)
            self.assertNotIn("new", os.listdir(mine), via)  # made by the run: taken back

    def test_json_lines_escape_paths(self):
        """The --json lines the command builds itself (export -o, --series,
        results -o) are JSON whatever the path holds (a quote and a backslash
        made them invalid)."""
        job = self.done_job()
        d = self.scratch("json-paths")
        weird = os.path.join(d, 'we"ird\\name')
        j = self.cli_json(["cloud", "export", job, "--format", "csv", "-o", weird + ".csv"])
        self.assertEqual(j, {"job_id": job, "format": "csv", "path": weird + ".csv"})
        j = self.cli_json(["cloud", "results", job, "-o", weird + ".npy"])
        self.assertEqual(j, {"job_id": job, "field": "w", "path": weird + ".npy",
                             "shape": [12, self.m]})
        j = self.cli_json(["cloud", "export", job, "--format", "vtk", "--series", weird + "-vtk"])
        self.assertEqual(j, {"job_id": job, "format": "vtk", "files": 12,
                             "path": "%s-vtk/%s.pvd" % (weird, job)})

    def test_global_option_forms(self):
        """--opt=VALUE before the command, and the global options between a
        group and its command (gapsim cloud --json list)."""
        url = self.d.url
        self.assertEqual(self.cli_json(["--token=abc", "--server", url, "health"],
                                       server=False)["status"], "ok")
        self.assertEqual(self.cli_json(["--cacert=/nonexistent.pem", "--server=" + url, "health"],
                                       server=False)["status"], "ok")
        self.assertIn("jobs", json.loads(self.cli(["cloud", "--json", "list"]).stdout))
        r = self.cli(["assembly", "--server", url, "list"], server=False)
        self.assertIn(self.asm, r.stdout)
        r = self.cli(["assembly", "--server=" + url, "--json", "show", self.asm], server=False)
        self.assertEqual(json.loads(r.stdout)["id"], self.asm)
        r = self.cli(["--server"], rc=2, server=False)
        self.assertIn("--server needs a value", r.stderr)
        r = self.cli(["cloud", "--bogus", "list"], rc=2)
        self.assertIn("unknown option --bogus", r.stderr)
        self.assertEqual(r.stdout, "")

    def test_threshold_values_are_url_escaped(self):
        """--threshold 1e20 goes as threshold=1e%2B20 (its '+' was read as a
        space: 422)."""
        job = self.done_job()
        r = self.cli(["cloud", "summary", job, "--threshold", "1e20"])
        self.assertRegex(r.stdout, r"threshold:\s+1e\+20 mm")
        self.assertEqual(self.cli_json(["cloud", "summary", job, "--threshold", "1e20",
                                        "--bins", "3"])["threshold"], 1e20)
        out = self.tmp("thr.csv")
        self.cli(["cloud", "export", job, "--format", "csv", "--threshold", "1e300", "-o", out])
        self.assertTrue(os.path.getsize(out) > 0)

    def test_help_says_what_the_commands_do(self):
        """cloud list is oldest first (as the API); the summary's histogram
        is of the open pairs' residuals."""
        r = self.cli(["cloud", "list", "--help"], server=False)
        self.assertIn("oldest first", r.stdout)
        self.assertNotIn("newest first", r.stdout)
        r = self.cli(["cloud", "summary", "--help"], server=False)
        self.assertNotIn("histogram of all residuals", r.stdout)
        self.assertIn("open pairs", r.stdout)

    def test_quiet_wait_prints_only_the_id(self):
        """cloud submit --wait -q: the id on stdout, no progress on stderr."""
        r = self.cli(["cloud", "submit", "--assembly", self.asm, "--gaps", self.gaps,
                      "--fraction", "0.3", "--wait", "-q"])
        self.assertRegex(r.stdout, r"^j_[0-9a-f]{16}\n$")
        self.assertEqual(r.stderr, "")

    def test_wait_on_a_job_deleted_meanwhile(self):
        """The job goes away during --wait (its assembly deleted): the
        command says so, not that the job goes on and how to reattach."""
        mp, _ = gen_model(self.dir, "lap", gaps=1, name="gone", extra=["--fast-load", "600"])
        aid = self.cli(["assembly", "upload", mp, "--wait", "-q"]).stdout.strip()
        self.assertNotEqual(aid, self.asm)
        job = self.cli(["cloud", "submit", "--assembly", aid, "--generate", "50000", "--seed",
                        "13", "--solver", "ipm", "-q"]).stdout.strip()
        e = dict(os.environ, GAPSIM_SERVER=self.d.url)
        p = subprocess.Popen([GAPSIM, "cloud", "status", job, "--wait"], env=e,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        self.assertEqual(self.d.delete("/v1/assemblies/" + aid).status, 204)
        out, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 1, err)
        self.assertIn("stopped waiting: job %s was deleted on the server" % job, err)
        self.assertNotIn("Reattach", err)
        self.assertEqual(out, "")

    def test_ids_and_messages(self):
        """An id too long for any request is a usage error (it was cut to
        the wrong URL); a file's message names it once; --row's error names
        the command's help."""
        for args in (["cloud", "status", "j_" + "0" * 600], ["assembly", "show", "a_" + "f" * 600],
                     ["cloud", "results", "j_" + "0" * 600, "-o", self.tmp("long.npy")],
                     ["solve", "--assembly", "a_" + "0" * 600, "--gaps", self.gaps]):
            r = self.cli(args, rc=2)
            self.assertIn("is no id", r.stderr)
        r = self.cli(["solve", "--assembly", self.asm, "--gaps", self.model], rc=5)
        self.assertEqual(r.stderr.count(self.model), 1, r.stderr)
        r = self.cli(["solve", "--assembly", self.asm, "--gaps", self.gaps, "--row", "12"], rc=2)
        self.assertIn("(see gapsim solve --help)", r.stderr)

    # ---- gen ------------------------------------------------------------------------------------
    def test_wait_interrupted_on_a_terminal(self):
        # the server goes away while `cloud status --wait` draws its bar on a
        # terminal: the bar's line is ended before the error, and the command
        # says how to reattach
        import pty
        import select
        import time
        d = Daemon(workers=1).start()
        try:
            r = self.run_cli(["assembly", "upload", self.model, "--wait", "-q"],
                             env={"GAPSIM_SERVER": d.url})
            self.assertEqual(r.returncode, 0, r.stderr)
            # running until the kill on any machine: 50,000 generated gaps
            # (40,000 rows of 12 distinct gaps were mostly cache hits)
            r = self.run_cli(["cloud", "submit", "--assembly", r.stdout.strip(), "--generate",
                              "50000", "--seed", "12", "--solver", "ipm", "-q"],
                             env={"GAPSIM_SERVER": d.url})
            self.assertEqual(r.returncode, 0, r.stderr)
            job = r.stdout.strip()
            master, slave = pty.openpty()
            e = dict(os.environ, GAPSIM_SERVER=d.url)
            p = subprocess.Popen([GAPSIM, "cloud", "status", "--wait", job], env=e,
                                 stdout=subprocess.PIPE, stderr=slave, text=True)
            os.close(slave)
            out = b""
            t0 = time.time()
            while b"solves/s" not in out and time.time() - t0 < 30:  # the bar is drawn
                if select.select([master], [], [], 0.5)[0]:
                    out += os.read(master, 4096)
            self.assertIn(b"solves/s", out, "no progress bar on the terminal")
            d.kill9()
            p.wait(timeout=60)
            p.stdout.close()
            while select.select([master], [], [], 0.2)[0]:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            os.close(master)
            text = out.decode(errors="replace").replace("\r\n", "\n")
            self.assertEqual(p.returncode, 3, text)  # cannot connect
            err_line = [ln for ln in text.split("\n") if "cannot" in ln and "connect" in ln]
            self.assertTrue(err_line, text)
            self.assertTrue(err_line[0].startswith("gapsim cloud status: cannot"),
                            "the error shares the bar's line: %r" % err_line[0])
            self.assertIn("Reattach with: gapsim cloud status --wait %s" % job, text)
        finally:
            d.cleanup()

    def test_gen_same_as_gapsim_gen(self):
        a = os.path.join(self.dir, "gen-a")
        b = os.path.join(self.dir, "gen-b")
        r = self.cli(["gen", "--kind", "lap", "--small", "--out", a, "--name", "x", "--gaps", "3",
                      "--no-cond"], server=False)
        self.assertIn("files", r.stdout)
        subprocess.run([binary("gapsim-gen"), "--kind", "lap", "--small", "--out", b, "--name",
                        "x", "--gaps", "3", "--no-cond"], check=True, stdout=subprocess.DEVNULL)
        for name in ("x.json", "x.part0.npy", "x.part1.npy", "x.gaps.npy"):
            with open(os.path.join(a, name), "rb") as fa, open(os.path.join(b, name), "rb") as fb:
                self.assertEqual(fa.read(), fb.read(), name)
        r = self.cli(["gen", "--kind", "lap", "--out", "/proc/nope/x"], rc=5, server=False)
        self.assertIn("gapsim gen: cannot create directory", r.stderr)


if __name__ == "__main__":
    unittest.main()
