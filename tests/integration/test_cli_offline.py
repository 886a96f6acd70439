"""test_cli_offline -- the offline commands of `gapsim` (pair, gen) and gapsim-gen.

No daemon: the binaries of GS_BIN_DIR on files in GS_TEST_TMP.

gapsim pair: a node in a surface pair and a jig pair is one node of the
model, and the pairs file, completed with two parts whose matrices name
their rows (Abaqus matrix input), loads and solves with gapsim-batch; a jig
normal across the surface's is refused (a node carries one normal); labels
outside [0, 2^53] and NUL bytes are refused naming the file and line (exit
5); no upper-lower pair is exit 2; on every refusal neither output file is
written.

gapsim gen / gapsim-gen: `--opt=VALUE`, the global options anywhere (and
before the command), the same files as gapsim-gen; usage errors exit 2 with
nothing on stdout and nothing written: a peak/mean ratio the gap cloud cannot
meet (the message names the options and the largest ratio, which then
works and meets the mean), --inline with --matrix-format or --uncondensed, a
--thickness list of the wrong length; --uncondensed says its condition
numbers are not estimated instead of printing zeros.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from gsd_harness import TMP, binary, read_npy
from test_python_transport import FakeServer, response

UP = "1,0,0,1\n2,10,0,1\n3,0,10,1\n"
LO = "11,0,0,0.7\n12,10,0,0.7\n13,0,10,0.7\n"


def run(args, timeout=300, **kw):
    e = dict(os.environ)
    e.pop("GAPSIM_SERVER", None)
    return subprocess.run(args, env=e, capture_output=True, text=True, timeout=timeout, **kw)


class OfflineCase(unittest.TestCase):
    def setUp(self):
        os.makedirs(TMP, exist_ok=True)
        self.dir = tempfile.mkdtemp(prefix="cli-offline-", dir=TMP)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, text, mode="w"):
        with open(self.path(name), mode) as f:
            f.write(text)
        return self.path(name)

    def check(self, args, rc):
        r = run(args)
        self.assertEqual(r.returncode, rc, "%s -> %d\nstdout: %s\nstderr: %s" %
                         (" ".join(args), r.returncode, r.stdout, r.stderr))
        if rc == 2:
            self.assertEqual(r.stdout, "", args)
        return r


class PairTest(OfflineCase):
    def pair(self, extra, rc=0, up=UP, lo=LO):
        args = [binary("gapsim"), "pair", "--upper", self.write("up.csv", up), "--lower",
                self.write("lo.csv", lo), "-o", self.path("p.json"), "--gaps-out",
                self.path("g0.npy")] + extra
        r = self.check(args, rc)
        if rc:
            self.assertFalse(os.path.exists(self.path("p.json")), "a refusal wrote -o")
            self.assertFalse(os.path.exists(self.path("g0.npy")), "a refusal wrote --gaps-out")
        return r

    def model_from_pairs(self):
        """The pairs file with format, version and two parts whose Abaqus matrix
        input files carry the three translations of every node (diagonal K)."""
        with open(self.path("p.json")) as f:
            doc = json.load(f)
        parts = []
        for b, labels in enumerate(([1, 2, 3], [11, 12, 13])):
            lines = ["%d, %d, %d, %d, 1000.0\n" % (n, c, n, c) for n in labels for c in (1, 2, 3)]
            self.write("k%d.inp" % b, "".join(lines))
            parts.append({"name": "p%d" % b, "ndof": 9,
                          "K": {"file": "k%d.inp" % b, "format": "abaqus-matrix-input"}})
        doc.update({"format": "gapsim-model", "version": 1, "parts": parts})
        with open(self.path("model.json"), "w") as f:
            json.dump(doc, f)
        return self.path("model.json")

    def test_node_in_surface_and_jig_pair_is_one_node(self):
        jig = self.write("jig.csv", "1,0,0,1\n")  # upper node 1 is against the jig too
        r = self.pair(["--jig", jig, "--jig-normal", "0,0,-1"])
        with open(self.path("p.json")) as f:
            doc = json.load(f)
        self.assertEqual(doc["nodes"]["label"], [1, 11, 2, 12, 3, 13])
        self.assertEqual(doc["nodes"]["part"], [0, 1, 0, 1, 0, 1])
        self.assertEqual(doc["pairs"]["i"], [0, 2, 4, 0])
        self.assertEqual(doc["pairs"]["j"], [1, 3, 5, -1])
        self.assertEqual(read_npy(self.path("g0.npy"))[0], (1, 4))
        # the model loads (node 1 in two pairs: a sandwich joint) and solves
        b = self.check([binary("gapsim-batch"), self.model_from_pairs(), "--gaps",
                        self.path("g0.npy"), "--threads", "1", "--no-progress"], 0)
        self.assertRegex(b.stdout, r"m = 4 pairs, 2 parts.*sandwich joint")
        self.assertRegex(b.stdout, r"gaps solved\s+1 \(1 optimal\)")
        self.assertIn("4 pairs (3 upper-lower of 3 upper and 3 lower nodes, 1 jig)", r.stderr)
        self.assertIn("1 node in two pairs", r.stderr)

    def test_node_with_two_normals_refused(self):
        jig = self.write("jig.csv", "1,0,0,1\n")
        r = self.pair(["--jig", jig, "--jig-normal", "1,0,0"], rc=2)
        self.assertIn("node 1 of part 0 is in pair 0", r.stderr)
        self.assertIn("a node carries one contact normal", r.stderr)
        # the same label against the jig elsewhere: two nodes under one label
        jig = self.write("jig.csv", "1,50,0,1\n")
        r = self.pair(["--jig", jig, "--jig-normal", "0,0,-1"], rc=2)
        self.assertIn("one label for two nodes", r.stderr)

    def test_bad_labels_and_nul_bytes_name_file_and_line(self):
        r = self.pair([], rc=5, up="1,0,0,1\n-5,10,0,1\n3,0,10,1\n")
        self.assertIn("up.csv: line 2: node label -5 out of range [0, 2^53]", r.stderr)
        r = self.pair([], rc=5, lo="11,0,0,0.7\n12,10,0,0.7\n9007199254740993,0,10,0.7\n")
        self.assertIn("lo.csv: line 3: node label 9007199254740993 out of range", r.stderr)
        r = self.pair(["--tol", "6"], rc=5, up="1,0,0,1\n2,5\0junk,0,1\n3,0,10,1\n")
        self.assertIn("up.csv: line 2: a NUL byte", r.stderr)

    def test_no_pairs_refused(self):
        r = self.pair(["--tol", "0.1"], rc=2)  # the surfaces are 0.3 mm apart
        self.assertIn("no pairs", r.stderr)
        self.assertIn("--tol 0.1", r.stderr)

    def test_outputs_written_together(self):
        # --gaps-out cannot be written: the JSON is not left behind either
        args = [binary("gapsim"), "pair", "--upper", self.write("up.csv", UP), "--lower",
                self.write("lo.csv", LO), "--normal", "0,0,1", "-o", self.path("p.json"),
                "--gaps-out", self.path("no/such/dir/g0.npy")]
        r = self.check(args, 5)
        self.assertIn("g0.npy", r.stderr)
        self.assertFalse(os.path.exists(self.path("p.json")))


class GenTest(OfflineCase):
    def files(self, d):
        out = {}
        for name in sorted(os.listdir(d)):
            with open(os.path.join(d, name), "rb") as f:
                out[name] = f.read()
        return out

    def test_gen_reads_options_like_every_command(self):
        ref = self.path("ref")
        self.check([binary("gapsim-gen"), "--kind", "lap", "--small", "--out", ref, "--gaps",
                    "3", "--no-cond"], 0)
        cases = {
            "eq": ["gen", "--kind=lap", "--small", "--out=" + self.path("eq"), "--gaps=3",
                   "--no-cond"],
            "globals": ["gen", "--kind", "lap", "--json", "--small", "--server",
                        "http://127.0.0.1:1", "--out", self.path("globals"), "--token", "t",
                        "--gaps", "3", "--no-cond", "--server=http://127.0.0.1:2"],
            "before": ["--json", "--server", "http://127.0.0.1:1", "gen", "--kind", "lap",
                       "--small", "--out", self.path("before"), "--gaps", "3", "--no-cond"],
        }
        for name, args in cases.items():
            r = self.check([binary("gapsim")] + args, 0)
            self.assertIn("files", r.stdout, name)
            self.assertEqual(self.files(self.path(name)), self.files(ref), name)
        # gapsim-gen reads --opt=VALUE too
        self.check([binary("gapsim-gen"), "--kind=lap", "--small", "--out=" + self.path("gg"),
                    "--gaps=3", "--no-cond"], 0)
        self.assertEqual(self.files(self.path("gg")), self.files(ref))
        for prog in (["gapsim", "gen"], ["gapsim-gen"]):
            exe = [binary(prog[0])] + prog[1:]
            for args, words in ((["--kind=lap", "--no-cond=1"], "--no-cond takes no value"),
                                (["--kind"], "--kind needs a value"),
                                (["--kind", "lap", "stray"], "unexpected argument 'stray'"),
                                (["--kind=lap", "--bogus=1"], "unknown option --bogus"),
                                # a seed is decimal digits: " -5" was 2^64 - 5, "010" octal 8
                                (["--kind=lap", "--seed", " -5"], "--seed"),
                                (["--kind=lap", "--seed=010x"], "--seed"),
                                (["--kind=lap", "--seed=0x10"], "--seed"),
                                (["--kind=lap", "--seed=+5"], "--seed"),
                                (["--kind=lap", "--seed=18446744073709551616"], "--seed")):
                r = self.check(exe + ["--out", self.path("never")] + args, 2)
                self.assertIn(words, r.stderr, (prog, args))
        self.assertFalse(os.path.exists(self.path("never")))
        r = self.check([binary("gapsim"), "gen", "--help"], 0)
        self.assertTrue(r.stdout.startswith("usage: gapsim gen --kind"), r.stdout[:80])

    def test_peak_mean_out_of_reach_refused(self):
        for exe in ([binary("gapsim-gen")], [binary("gapsim"), "gen"]):
            out = self.path("peak")
            r = self.check(exe + ["--kind", "lap", "--small", "--peak", "100", "--gaps", "50",
                                  "--out", out], 2)
            m = re.search(r"--peak 100 / --mean 0.5 = 200 cannot be met: .* peak/mean ratio of "
                          r"at most ([0-9.]+) on this model", r.stderr)
            self.assertTrue(m, r.stderr)
            self.assertIn("lower --peak or raise --mean", r.stderr)
            self.assertFalse(os.path.exists(out), "a refusal created --out")
            rmax = float(m.group(1))
            self.assertTrue(10 < rmax < 52 * 1.2 / 0.8, rmax)  # 52 pairs, spread 20%
        # the largest ratio named works, and every vector's mean is within the
        # +-20% spread of --mean (before: 1.99 mm for --mean 0.5)
        peak = "%.6g" % (0.5 * rmax)
        self.check([binary("gapsim-gen"), "--kind", "lap", "--small", "--peak", peak, "--gaps",
                    "50", "--out", out], 0)
        shape, g = read_npy(os.path.join(out, "lap.gaps.npy"))
        self.assertEqual(shape, (50, 52))
        for r in range(50):
            row = g[52 * r:52 * (r + 1)]
            self.assertTrue(0.4 - 1e-9 <= sum(row) / 52 <= 0.6 + 1e-9, (r, sum(row) / 52))
        # too flat: the sandwich's small interfaces need some peak/mean
        r = self.check([binary("gapsim-gen"), "--kind", "sandwich", "--small", "--peak", "0.52",
                        "--out", self.path("flat")], 2)
        self.assertRegex(r.stderr, r"peak/mean ratio of at least [0-9.]+ on this model")

    def test_option_combinations(self):
        gen = [binary("gapsim-gen"), "--kind", "lap", "--small", "--gaps", "1", "--no-cond"]
        for extra, words in ((["--inline", "--matrix-format", "nastran-dmig"], "--matrix-format"),
                             (["--inline", "--uncondensed"], "--uncondensed parts are sparse"),
                             (["--thickness", "5,3,4"],
                              "--thickness '5,3,4' has 3 values, the lap model has 2 parts"),
                             (["--far", "40,40,40,40"], "--far '40,40,40,40' has 4 values")):
            r = self.check(gen + extra + ["--out", self.path("never")], 2)
            self.assertIn(words, r.stderr, extra)
            self.assertFalse(os.path.exists(self.path("never")))
        r = self.check([binary("gapsim-gen"), "--kind", "sandwich", "--small", "--gaps", "1",
                        "--thickness", "4,3", "--out", self.path("never")], 2)
        self.assertIn("the sandwich model has 4 parts", r.stderr)
        # one value for every part, or one per part
        r = self.check(gen + ["--thickness", "4", "--out", self.path("t1")], 0)
        self.assertEqual(len(re.findall(r"t 4\.0 mm", r.stdout)), 2, r.stdout)
        r = self.check(gen + ["--thickness", "6,2", "--out", self.path("t2")], 0)
        self.assertRegex(r.stdout, r"part 0 .* t 6\.0 mm")
        self.assertRegex(r.stdout, r"part 1 .* t 2\.0 mm")

    def test_uncondensed_condition_not_estimated(self):
        r = self.check([binary("gapsim-gen"), "--kind", "lap", "--small", "--uncondensed",
                        "--gaps", "1", "--out", self.path("u")], 0)
        self.assertEqual(r.stdout.count("cond_1 not estimated"), 2, r.stdout)
        self.assertIn("cond(K)    not estimated", r.stdout)
        self.assertNotIn("0.000e+00", r.stdout)
        r = self.check([binary("gapsim-gen"), "--kind", "lap", "--small", "--gaps", "1",
                        "--out", self.path("c")], 0)
        self.assertEqual(len(re.findall(r"cond_1 [0-9.]+e\+0[1-9]", r.stdout)), 2, r.stdout)
        self.assertRegex(r.stdout, r"cond\(K\)    [0-9.]+e\+0[1-9]")


    def test_gen_bad_values_name_the_option(self):
        # a value out of its range, or options the generator cannot build
        # together, is a usage error naming the option (was exit 1 naming an
        # internal field, or a LAPACK failure): gapsim gen and gapsim-gen alike
        cases = ((["--kind", "lap", "--small", "--nx", "1"], "bad value for --nx: '1'"),
                 (["--kind", "lap", "--small", "--thickness", "1e300"], "bad value for --thickness"),
                 (["--kind", "lap", "--small", "--length", "1e-5"], "bad value for --length"),
                 (["--kind", "lap", "--small", "--clamp", "0"], "--clamp 0 leaves the wing panel"),
                 (["--kind", "sandwich", "--scale", "0.2"], "--scale 0.2 is too small"),
                 (["--kind", "lap", "--small", "--far", "4,40"], "--far 4,40: the wing panel"),
                 (["--kind", "lap", "--small", "--corr", "1e300"], "bad value for --corr"),
                 (["--kind", "lap", "--small", "--uncondensed", "--matrix-format", "npy"],
                  "--matrix-format npy writes dense blocks"),
                 (["--kind", "lap", "--small", "--name", ".."], "--name must be non-empty"))
        for exe in ([binary("gapsim-gen")], [binary("gapsim"), "gen"]):
            for args, words in cases:
                r = self.check(exe + args + ["--out", self.path("never")], 2)
                self.assertIn(words, r.stderr, (exe, args))
            self.assertFalse(os.path.exists(self.path("never")))

    def test_gen_failure_leaves_no_file(self):
        # the gap file cannot be written (a symlink to /dev/full): none of the
        # run's files is left and nothing is printed (gapsim gen: exit 5)
        for exe, rc in (([binary("gapsim-gen")], 1), ([binary("gapsim"), "gen"], 5)):
            d = self.path("full-%d" % rc)
            os.makedirs(d)
            os.symlink("/dev/full", os.path.join(d, "lap.gaps.npy"))
            r = self.check(exe + ["--kind", "lap", "--small", "--out", d], rc)
            self.assertIn("No space left on device", r.stderr)
            self.assertEqual(r.stdout, "")
            self.assertEqual(sorted(os.listdir(d)), ["lap.gaps.npy"], exe)

    def test_gen_signal_removes_temporary_files(self):
        # the gap file is a FIFO nobody reads: the run waits in its open with
        # the model written to temporary files; SIGTERM removes them all
        import signal
        import time
        for exe in ([binary("gapsim-gen")], [binary("gapsim"), "gen"]):
            d = tempfile.mkdtemp(prefix="sig-", dir=self.dir)
            os.mkfifo(os.path.join(d, "lap.gaps.npy"))
            p = subprocess.Popen(exe + ["--kind", "lap", "--small", "--out", d],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                for _ in range(300):
                    if any(n.startswith("lap.json.tmp") for n in os.listdir(d)):
                        break
                    time.sleep(0.1)
                self.assertTrue(any(n.startswith("lap.json.tmp") for n in os.listdir(d)),
                                os.listdir(d))
                p.send_signal(signal.SIGTERM)
                self.assertEqual(p.wait(timeout=60), -signal.SIGTERM, exe)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            self.assertEqual(os.listdir(d), ["lap.gaps.npy"], exe)


class PagingTest(unittest.TestCase):
    """`gapsim cloud results` reads a job's results page after page, going
    where each page's next_offset says: an answer whose next_offset does not
    move on (the same offset again, a number beyond any index) ends the
    listing instead of asking for the same page forever or casting 1e300 to
    an integer (undefined behaviour)."""

    def test_next_offset_that_does_not_move_on(self):
        srv = FakeServer()
        try:
            for nxt in ("0", "1e300", "-5", "0.5", "\"2\""):
                page = ('{"job_id":"j_0123456789abcdef","total":2,"offset":0,"limit":1000,'
                        '"results":[{"job_index":0,"id":"r_0123456789abcdef","status":"optimal",'
                        '"solver":"gi","n_act":1,"iterations":1,"time_ms":0.1,"max_residual":0}],'
                        '"next_offset":%s}' % nxt).encode()
                srv.answer = response(b"HTTP/1.1 200 OK", [(b"Content-Type", b"application/json"),
                                                           (b"Content-Length", b"%d" % len(page))],
                                      page)
                for json_out in ([], ["--json"]):
                    with self.subTest(next_offset=nxt, json=bool(json_out)):
                        n = len(srv.requests)
                        p = run([binary("gapsim"), "--server", srv.url] + json_out +
                                ["cloud", "results", "j_0123456789abcdef"], timeout=20)
                        self.assertEqual(p.returncode, 0, p.stderr)
                        self.assertEqual(len(srv.requests) - n, 1, srv.requests[n:])
                        self.assertIn("r_0123456789abcdef", p.stdout)
        finally:
            srv.close()


if __name__ == "__main__":
    unittest.main()
