"""gapsim-batch as a user runs it (docs/scale-out.md, "gapsim-batch"): a gap
cloud in Fortran order (numpy's G.T of an m x k array) gives the same
residual gaps as the C-order file; a NaN names its row and pair; outputs
that cannot be written are refused before the model is read or a gap is
solved, and leave no file behind; outputs naming a device node or a FIFO
are written into, never replaced (a full device is an error naming its
reason); an output that is an input (the same file, through a link or
not) or another output is refused before the model is read; an answer whose
KKT certificate fails at tol (the model's scale) is reported, exit 3; gaps
that contradict are infeasible, counted by status, exit 3. Every run's
stderr is checked for sanitizer reports. Device nodes are made in the
test's directory (mknod, root), never the system's."""
import json
import os
import shutil
import stat
import struct
import subprocess
import tempfile
import unittest

from api_common import model
import gsd_harness as h


def write_npy_fortran(path, rows):
    """rows (k x m) stored column by column: 'fortran_order': True."""
    k, m = len(rows), len(rows[0])
    header = "{'descr': '<f8', 'fortran_order': True, 'shape': (%d, %d), }" % (k, m)
    header += " " * (64 - (10 + len(header) + 1) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        for j in range(m):
            f.write(struct.pack("<%dd" % k, *[rows[i][j] for i in range(k)]))


class BatchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mj, cls.gaps = model("lap", small=True, inline=True, gaps=12)
        shape, flat = h.read_npy(cls.gaps)
        cls.k, cls.m = shape
        cls.rows = [flat[i * cls.m:(i + 1) * cls.m] for i in range(cls.k)]

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="batch-", dir=h.TMP)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def batch(self, *args, model=None):
        """gapsim-batch on model (default: the small lap), its stderr checked."""
        p = subprocess.run([h.binary("gapsim-batch"), model or self.mj, "--no-progress",
                            "--threads", "2"] + list(args), capture_output=True, text=True,
                           timeout=120)
        for key in h.SANITIZER_KEYS:
            self.assertNotIn(key, p.stderr)
        return p

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_fortran_order_cloud_gives_the_c_order_results(self):
        f = self.path("gaps_f.npy")
        write_npy_fortran(f, self.rows)
        a, b = self.path("a.npy"), self.path("b.npy")
        for gaps, out in ((self.gaps, a), (f, b)):
            p = self.batch("--gaps", gaps, "--fraction", "0.5", "--out", out)
            self.assertEqual(p.returncode, 0, p.stderr)
        sa, wa = h.read_npy(a)
        sb, wb = h.read_npy(b)
        self.assertEqual(sa, (self.k, self.m))
        self.assertEqual(sb, sa)
        self.assertEqual(wa, wb)  # the same gaps in the same order: the same bits
        self.assertGreater(max(wa), 0.0)

    def test_a_nan_names_its_row_and_pair(self):
        rows = [list(r) for r in self.rows]
        rows[7][3] = float("nan")
        for order, write in (("C", h.write_npy), ("Fortran", write_npy_fortran)):
            g = self.path("nan_%s.npy" % order)
            write(g, rows)
            for chain in ("off", "on"):
                p = self.batch("--gaps", g, "--chain", chain, "--out", self.path("w.npy"))
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertIn("not_finite at gaps[7][3]", p.stderr, order)
                self.assertIn("gap 7, pair 3", p.stderr)
                self.assertFalse(os.path.exists(self.path("w.npy")))

    def test_unwritable_outputs_are_refused_before_the_work(self):
        sub = self.path("sub")
        os.mkdir(sub)
        cases = [("--out", os.path.join(self.dir, "missing", "w.npy"), "cannot create"),
                 ("--out", sub, "is a directory"),
                 ("--summary", os.path.join(self.dir, "missing", "s.json"), "cannot create")]
        for opt, target, why in cases:
            p = self.batch("--gaps", self.gaps, opt, target)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn(why, p.stderr)
            self.assertIn(target, p.stderr)
            self.assertNotIn("model ", p.stdout)  # refused before the model was read
            self.assertNotIn("cloud ", p.stdout)
        # one good and one bad output: the good one is not left behind either
        good = self.path("w.npy")
        p = self.batch("--gaps", self.gaps, "--out", good, "--summary",
                       os.path.join(self.dir, "missing", "s.json"))
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(sorted(os.listdir(self.dir)), ["sub"])
        self.assertEqual(os.listdir(sub), [])

    def test_devices_and_fifos_are_written_into(self):
        # An output naming an existing device or FIFO was replaced by a
        # regular file (the write went to a temporary file renamed over it:
        # as root, /dev/full itself). Now it is written into: the null
        # device discards, a FIFO's reader gets the summary, a full device
        # is an error with its reason, exit 1; each stays what it was.
        null = h.char_device(self, self.path("mynull"), 3)
        full = h.char_device(self, self.path("myfull"), 7)
        fifo = self.path("myfifo")
        os.mkfifo(fifo)
        reader = subprocess.Popen(["cat", fifo], stdout=subprocess.PIPE)
        try:
            p = self.batch("--gaps", self.gaps, "--out", null, "--summary", fifo)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertTrue(stat.S_ISCHR(os.lstat(null).st_mode), "the device was replaced")
            self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced")
            self.assertEqual(json.loads(reader.communicate(timeout=30)[0])["count"], self.k)
        finally:
            if reader.poll() is None:
                reader.kill()
                reader.wait()
        for opt in ("--out", "--summary"):
            p = self.batch("--gaps", self.gaps, opt, full)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("cannot write '%s': No space left on device" % full, p.stderr)
            self.assertTrue(stat.S_ISCHR(os.lstat(full).st_mode))
        self.assertEqual(sorted(os.listdir(self.dir)), ["myfifo", "myfull", "mynull"])

    def test_an_output_that_is_an_input_is_refused(self):
        # --out naming the gaps file (directly, by a hard link or a symlink)
        # wrote the results over the gaps; --summary over the model; two
        # outputs under one name kept only the last. Refused before the model
        # is read, naming both options; nothing is written.
        g, mj = self.path("g.npy"), self.path("m.json")
        shutil.copy(self.gaps, g)
        shutil.copy(self.mj, mj)  # inline: the JSON is the whole model
        os.link(g, self.path("hard.npy"))
        os.symlink("g.npy", self.path("sym.npy"))
        w = self.path("w.npy")
        with open(g, "rb") as f:
            before = f.read()
        cases = ((["--out", g], "--out '%s' is the same file as --gaps" % g),
                 (["--out", self.path("hard.npy")], "is the same file as --gaps"),
                 (["--out", self.path("sym.npy")], "is the same file as --gaps"),
                 (["--summary", g], "--summary '%s' is the same file as --gaps" % g),
                 (["--summary", mj], "is the same file as MODEL.json '%s'" % mj),
                 (["--out", w, "--summary", w], "--summary '%s' is the same file as --out" % w),
                 (["--out", w, "--factors", w], "--factors '%s' is the same file as --out" % w))
        for args, why in cases:
            p = self.batch("--gaps", g, *args, model=mj)
            self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
            self.assertIn(why, p.stderr)
            self.assertNotIn("model ", p.stdout)  # refused before the model was read
        with open(g, "rb") as f:
            self.assertEqual(f.read(), before)
        self.assertEqual(sorted(os.listdir(self.dir)), ["g.npy", "hard.npy", "m.json", "sym.npy"])
        # a saved factor file is an input: --out over it is refused too
        fac = self.path("f.bin")
        p = self.batch("--gaps", g, "--method", "gi", "--factors", fac, model=mj)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = self.batch("--gaps", g, "--method", "gi", "--factors", fac, "--out", fac, model=mj)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("--out '%s' is the same file as --factors" % fac, p.stderr)

    def test_an_output_that_is_a_file_of_the_model_is_refused(self):
        # --out naming a stiffness block MODEL.json references: the results
        # replaced the block (the check knew MODEL.json itself only). Refused
        # once the model is read, before any work; nothing written.
        subprocess.run([h.binary("gapsim-gen"), "--kind", "lap", "--small", "--no-cond",
                        "--gaps", "2", "--out", self.dir, "--name", "m"], check=True,
                       stdout=subprocess.DEVNULL, timeout=120)
        mj, g = self.path("m.json"), self.path("m.gaps.npy")
        part0, part1 = self.path("m.part0.npy"), self.path("m.part1.npy")
        os.link(part1, self.path("hard.npy"))
        blocks = {}
        for f in (part0, part1):
            with open(f, "rb") as fh:
                blocks[f] = fh.read()
        listing = sorted(os.listdir(self.dir))
        for args, bad in ((["--out", part0], "--out '%s'" % part0),
                          (["--summary", self.path("hard.npy")], "--summary")):
            p = self.batch("--gaps", g, *args, model=mj)
            self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
            self.assertIn(bad, p.stderr)
            self.assertIn("is the same file as a file of MODEL.json", p.stderr)
            self.assertNotIn("precompute", p.stdout)
        for f, data in blocks.items():
            with open(f, "rb") as fh:
                self.assertEqual(fh.read(), data, f)
        self.assertEqual(sorted(os.listdir(self.dir)), listing)

    def test_the_gaps_are_checked_before_the_precomputation(self):
        # a missing file or one of another model: refused before any factorization
        wrong = h.write_npy(self.path("wrong.npy"), [[0.1] * (self.m + 1)] * 2)
        for gaps, why in ((self.path("missing.npy"), "io_error"),
                          (wrong, "dimension_mismatch")):
            p = self.batch("--gaps", gaps)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn(why, p.stderr)
            self.assertIn("model ", p.stdout)
            self.assertNotIn("precompute", p.stdout)

    def test_an_answer_the_model_scale_cannot_certify_is_reported(self):
        # A part whose stiffness is singular to 1e-10 (cond_1(K) ~ 1e11) under a
        # fastener load of 500 N: displacements of ~1e12 mm, so w = Q lam - p
        # is exact only to ~1e-3 mm, whatever the method or the BLAS kernel.
        # The solver's status is optimal at the tolerance its rounding allows;
        # the KKT certificate at tol fails, and the run says so (exit 3).
        mj = self.path("scale.json")
        with open(mj, "w") as f:
            json.dump({"format": "gapsim-model", "version": 1, "name": "scale",
                       "parts": [{"name": "panel", "ndof": 3,
                                  "K": [[4, 1, 0], [1, 4, 1], [0, 1, 4]]},
                                 {"name": "flange", "ndof": 2,
                                  "K": [[1, 1], [1, 1.0000000001]]}],
                       "nodes": {"part": [0, 0, 1, 1], "dof": [0, 2, 0, 1]},
                       "pairs": {"i": [0, 1], "j": [2, -1]},
                       "fasteners": {"pair": [0], "load": [500.0]},
                       "f": [0, 0, 0, 0, 1.5]}, f)
        g = h.write_npy(self.path("g.npy"), [[0.1, 0.2], [0.0, 0.0], [1.0, 0.5]])
        summary = self.path("s.json")
        p = self.batch("--gaps", g, "--fraction", "1", "--summary", summary, model=mj)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("fail it at tol 1e-10", p.stdout)
        with open(summary) as f:
            s = json.load(f)
        self.assertGreaterEqual(s["kkt_failed"], 1)
        self.assertEqual(s["failures"], 0)  # every status optimal: only the certificate says it
        # the residual gaps known to ~1e-3 mm: a tolerance of 0.1 certifies them
        p = self.batch("--gaps", g, "--fraction", "1", "--summary", summary, "--tol", "0.1",
                       model=mj)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(summary) as f:
            self.assertEqual(json.load(f)["kkt_failed"], 0)
        p = self.batch("--gaps", g, "--tol", "0")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--tol: '0' is not a number in (0, 1)", p.stderr)
        # a well-scaled model: every answer certified, exit 0
        p = self.batch("--gaps", self.gaps, "--fraction", "0.5", "--summary", summary)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertNotIn("KKT certificate", p.stdout)
        with open(summary) as f:
            self.assertEqual(json.load(f)["kkt_failed"], 0)


    def test_gaps_that_contradict_are_infeasible(self):
        # Three one-DOF parts whose pairs close a loop (x0 - x1, x1 - x2,
        # x2 - x0: their columns of A sum to zero) and a jig pair: gaps summing
        # to -0.1 mm around the loop have no answer. GI (auto) proves it:
        # status infeasible, printed with the others and counted in the
        # summary, exit 3; the residual gaps of such a row are those of the
        # parts under their loads without contact, g - A'K^-1 f (docs/solvers.md).
        mj = self.path("loop.json")
        with open(mj, "w") as f:
            json.dump(h.loop_model(), f)
        rows = [[0.1, 0.1, -0.3, 0.5], [0.1, 0.1, 0.3, 0.5], [0.2, -0.25, 0.0, 0.5]]
        g = h.write_npy(self.path("g.npy"), rows)
        summary, out = self.path("s.json"), self.path("w.npy")
        p = self.batch("--gaps", g, "--summary", summary, "--out", out, model=mj)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("statuses             infeasible 2, optimal 1", p.stdout)
        with open(summary) as f:
            s = json.load(f)
        self.assertEqual(s["statuses"], {"infeasible": 2, "optimal": 1})
        self.assertEqual(s["failures"], 2)
        # only contradicting gaps: no answer, and the summary lines say so
        # instead of the placeholder zeros of the residual and contact figures
        g1 = h.write_npy(self.path("g1.npy"), [rows[0]])
        p1 = self.batch("--gaps", g1, model=mj)
        self.assertEqual(p1.returncode, 3, p1.stdout + p1.stderr)
        self.assertIn("no answer            none of the 1 gaps is optimal", p1.stdout)
        for placeholder in ("residual gap ", "max residual per gap", "pairs in contact"):
            self.assertNotIn(placeholder, p1.stdout)
        shape, w = h.read_npy(out)
        self.assertEqual(list(shape), [3, 4])
        atx = [1.0, 0.25, -1.25, 1.0]  # A'K^-1 f, K^-1 f = (1, 0, -1/4)
        for r in (0, 2):
            for k in range(4):
                self.assertAlmostEqual(w[4 * r + k], rows[r][k] - atx[k], delta=1e-14)
        self.assertTrue(all(v >= -1e-10 for v in w[4:8]))  # the optimal row


if __name__ == "__main__":
    unittest.main()
