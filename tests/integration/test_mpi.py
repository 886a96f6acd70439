"""gapsim-mpi on loopback (mpirun --oversubscribe, 1 to 3 ranks): results
bit-identical to gapsim-batch and to a gapsimd cloud, summary equal to the
daemon's, pattern sweeps, saved and shared factors, a rank killed mid-run and
the rerun that completes the output, bad input on one rank (clean error exit,
no hang), usage errors; outputs that are devices or FIFOs, or that are an
input, and output directories that cannot be written, refused or handled
before the work; a results file written by another program, and a full disk,
met by a rerun. docs/scale-out.md. Device nodes are made in the test's
directory (mknod, root), never the system's; full and read-only disks are
tmpfs mounted by the test (root; skipped otherwise)."""
import contextlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import time
import unittest

from api_common import model, upload_json
import gsd_harness as h

MPIRUN = shutil.which("mpirun")
HAVE_MPI = MPIRUN is not None and os.path.exists(os.path.join(h.BIN_DIR, "gapsim-mpi"))
TIMEOUT = 120  # s: any hang fails the test instead of blocking the suite

# Open MPI's own allocations outlive MPI_Finalize: in the sanitized build,
# leaks whose stack passes through Open MPI are suppressed, leak checking
# stays on for ours. That needs full stacks (Open MPI is built without frame
# pointers), which makes each mpirun ~5x slower: the leak check runs in the
# bit-identity test (every rank count, the whole path); the others run ASan
# and UBSan without it.
SUPP = os.path.join(h.TMP, "lsan_openmpi.supp")


def mpi_env(leaks=False):
    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OPENBLAS_NUM_THREADS="1", OMPI_MCA_btl="self,vader,tcp",
               OMPI_MCA_btl_tcp_if_include="lo", OMPI_MCA_oob_tcp_if_include="lo",
               OMPI_MCA_rmaps_base_oversubscribe="1",
               # keep Open MPI's plugins loaded so that their frames have names
               OMPI_MCA_mca_base_component_disable_dlclose="1")
    with open(SUPP, "w") as f:
        for lib in ("libmpi", "libopen-pal", "libopen-rte", "libhwloc", "libevent", "libpmix",
                    "libucp", "libucs", "libfabric", "mca_", "libmca"):
            f.write("leak:%s\n" % lib)
    env["LSAN_OPTIONS"] = "suppressions=%s:print_suppressions=0" % SUPP
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + (
        ":fast_unwind_on_malloc=0" if leaks else ":detect_leaks=0")
    return env


def mpirun(np_args, timeout=TIMEOUT, leaks=False):
    """np_args: list of (np, [gapsim-mpi args]) (several: MPMD). Returns CompletedProcess."""
    cmd = [MPIRUN, "--oversubscribe"]
    for i, (np, args) in enumerate(np_args):
        if i:
            cmd.append(":")
        cmd += ["-np", str(np), h.binary("gapsim-mpi")] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env=mpi_env(leaks))


def read_text(path):
    with open(path) as f:
        return f.read()


def npy_data(path):
    """The raw data bytes of an .npy file (after its header)."""
    with open(path, "rb") as f:
        data = f.read()
    hl = int.from_bytes(data[8:10], "little")
    return data[10 + hl:]


def write_empty_npy(path, m):
    """A 0 x m float64 .npy: a cloud without a gap."""
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (0, %d), }" % m
    header += " " * (64 - (10 + len(header) + 1) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
    return path


@contextlib.contextmanager
def tmpfs(test, parent, size, ro=False):
    """A tmpfs of size bytes mounted on a new directory in parent (root;
    the test is skipped where it cannot be mounted), unmounted at the end."""
    d = tempfile.mkdtemp(prefix="tmpfs-", dir=parent)
    opts = "size=%d%s" % (size, ",ro" if ro else "")
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", d], capture_output=True,
                       text=True)
    if p.returncode != 0:
        os.rmdir(d)
        test.skipTest("cannot mount a tmpfs here: %s" % p.stderr.strip())
    try:
        yield d
    finally:
        subprocess.run(["umount", d], check=False)
        os.rmdir(d)


def without_run_fields(s):
    """A summary without what differs between runs (ids and solve times) and
    without what needs the contact forces, which gapsim-mpi does not write
    (the residual histogram, its in_contact count, pairs.lambda_mean)."""
    s = dict(s)
    for k in ("job_id", "assembly_id", "time_ms", "residual_histogram"):
        s.pop(k)
    s["pairs"] = {k: v for k, v in s["pairs"].items() if k != "lambda_mean"}
    return s


@unittest.skipUnless(HAVE_MPI, "gapsim-mpi or mpirun missing (scripts/setup installs Open MPI)")
class MpiTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="mpi-", dir=h.TMP)
        cls.model_json, cls.gaps = model("lap", small=True, inline=True, gaps=45)
        cls.m = h.read_npy(cls.gaps)[0][1]
        cls.batch = os.path.join(cls.tmp, "batch.npy")
        subprocess.run([h.binary("gapsim-batch"), cls.model_json, "--gaps", cls.gaps,
                        "--method", "gi", "--fraction", "0.5", "--threads", "2",
                        "--out", cls.batch], check=True, stdout=subprocess.DEVNULL,
                       timeout=TIMEOUT)

    def out(self, name):
        return os.path.join(self.tmp, name)

    def run_ok(self, np_args, leaks=False):
        r = mpirun(np_args, leaks=leaks)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return r

    def test_ranks_bit_identical_to_batch_and_daemon(self):
        outs = {}
        # (ranks, threads per rank, rows per chunk); chunks of 1 stress the queues
        for np, threads, chunk in ((1, 2, 3), (2, 1, 3), (3, 1, 3), (2, 2, 1)):
            w = self.out("w%d_%d_%d.npy" % (np, threads, chunk))
            r = self.run_ok([(np, [self.model_json, "--gaps", self.gaps, "--method", "gi",
                                   "--fraction", "0.5", "--chunk", str(chunk), "--threads",
                                   str(threads), "--out", w])], leaks=True)
            self.assertIn("%d ranks x %d threads" % (np, threads), r.stdout)
            self.assertIn("45 rows solved", r.stdout)
            self.assertRegex(r.stdout, r"\nblas +OpenBLAS kernel \w+")
            self.assertEqual(npy_data(w), npy_data(self.batch), "np %d" % np)
            self.assertEqual(h.read_npy(w)[0], (45, self.m))
            with open(w + ".summary.json") as f:
                outs[np, threads] = json.load(f)
        d = h.Daemon(workers=2).start()
        try:
            aid = upload_json(d, self.model_json).json()["id"]
            rows = [list(x) for x in zip(*[iter(h.read_npy(self.gaps)[1])] * self.m)]
            j = d.post("/v1/assemblies/%s/clouds" % aid,
                       {"gaps": rows, "solver": "gi", "fastener_fraction": 0.5}).json()
            self.assertEqual(d.wait_job(j["id"])["status"], "done")
            shape, W = h.read_npy(d.get("/v1/jobs/%s/results?format=npy" % j["id"]).body)
            self.assertEqual(shape, (45, self.m))
            self.assertEqual(W, h.read_npy(self.batch)[1])  # exact equality of every double
            summary = d.get("/v1/jobs/%s/summary" % j["id"]).json()
        finally:
            d.stop()
            d.cleanup()
        self.assertEqual(summary["count"], 45)
        for s in outs.values():
            self.assertRegex(s["job_id"], r"^j_[0-9a-f]{16}$")
            self.assertRegex(s["assembly_id"], r"^a_[0-9a-f]{16}$")
            self.assertEqual(without_run_fields(s), without_run_fields(summary))
            self.assertEqual(len(s["time_ms"]["histogram"]["counts"]), 20)

    def test_chained_runs_agree_to_round_off(self):
        # --chain: each worker's chunk in nearest-neighbour order, warm from
        # the gap before; not bit-identical, within round-off of the cold run
        ref = h.read_npy(self.batch)[1]
        w = self.out("chain.npy")
        r = self.run_ok([(2, [self.model_json, "--gaps", self.gaps, "--method", "gi",
                              "--fraction", "0.5", "--chunk", "15", "--chain", "on",
                              "--out", w])])
        self.assertIn("45 rows solved", r.stdout)
        wb = self.out("chain_batch.npy")
        b = subprocess.run([h.binary("gapsim-batch"), self.model_json, "--gaps", self.gaps,
                            "--method", "gi", "--fraction", "0.5", "--threads", "2",
                            "--chain", "auto", "--window", "15", "--out", wb],
                           capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(b.returncode, 0, b.stdout + b.stderr)
        self.assertRegex(b.stdout, r"warm started +\d+ of 45 gaps")
        for path in (w, wb):
            got = h.read_npy(path)[1]
            self.assertEqual(len(got), len(ref))
            self.assertLessEqual(max(abs(x - y) for x, y in zip(got, ref)), 1e-9, path)
        # a bad value is a usage error
        bad = mpirun([(1, [self.model_json, "--gaps", self.gaps, "--out", w, "--chain", "x"])])
        self.assertEqual(bad.returncode, 2, bad.stderr)
        self.assertIn("--chain", bad.stderr)

    def test_pattern_sweep(self):
        pats = self.out("patterns.json")
        with open(pats, "w") as f:
            json.dump([{"fastener_fraction": 0.5}, {"fasteners": "all"}, {}, {"fasteners": [0, 2]}], f)
        w = self.out("sweep.npy")
        r = self.run_ok([(2, [self.model_json, "--gaps", self.gaps, "--method", "gi",
                              "--patterns", pats, "--out", w, "--chunk", "7"])])
        self.assertIn("45 gaps x 4 patterns = 180 rows", r.stdout)
        shape, W = h.read_npy(w)
        self.assertEqual(shape, (180, self.m))
        n = 45 * self.m
        self.assertEqual(npy_data(w)[:8 * n], npy_data(self.batch))  # pattern 0 = the batch run
        with open(w + ".summary.json") as f:
            sums = json.load(f)
        self.assertEqual(len(sums), 4)
        self.assertEqual([s["count"] for s in sums], [45] * 4)
        # more fasteners close more gaps: "all" has the smallest mean residual
        means = [sum(W[p * n:(p + 1) * n]) / n for p in range(4)]
        self.assertLess(means[1], means[0])
        self.assertLess(means[0], means[2])
        for p in range(4):
            self.assertAlmostEqual(sums[p]["pairs"]["mean"][0],
                                   sum(max(W[p * n + i * self.m], 0) for i in range(45)) / 45,
                                   places=12)
        # chained: chunks hold each gap's patterns side by side (gap-major), each
        # pattern warm from the one before; rows stay where they were, within
        # round-off of the unchained sweep
        wc = self.out("sweep_chain.npy")
        r = self.run_ok([(2, [self.model_json, "--gaps", self.gaps, "--method", "gi",
                              "--patterns", pats, "--out", wc, "--chunk", "10", "--chain", "on"])])
        self.assertIn("gap-major", r.stdout)
        shape_c, Wc = h.read_npy(wc)
        self.assertEqual(shape_c, (180, self.m))
        self.assertLessEqual(max(abs(a - b) for a, b in zip(W, Wc)), 1e-9)
        with open(wc + ".summary.json") as f:
            sums_c = json.load(f)
        self.assertEqual([s["count"] for s in sums_c], [45] * 4)
        self.assertGreater(sum(s["warm_started"] for s in sums_c), 90)
        bad = self.out("bad_patterns.json")
        with open(bad, "w") as f:
            f.write('[{"fasteners": [0, 999]}]')
        r = mpirun([(2, [self.model_json, "--gaps", self.gaps, "--patterns", bad,
                         "--out", self.out("bad.npy")])])
        self.assertEqual(r.returncode, 1)
        self.assertIn("patterns[0].fasteners[1]", r.stderr)

    def test_lq_broadcast_only_to_methods_that_read_it(self):
        # GI relative never reads L_Q: rank 0 leaves it out and broadcasts
        # m^2 doubles fewer; GI on the dual form reads it: built, broadcast,
        # and the results bit-identical to gapsim-batch's
        def mb(stdout):
            return float(re.search(r"broadcast [0-9.]+ s \(([0-9.]+) MB to 1 ranks", stdout)
                         .group(1))
        base = [self.model_json, "--gaps", self.gaps, "--fraction", "0.5"]
        r_rel = self.run_ok([(2, base + ["--method", "gi", "--out", self.out("lq_rel.npy")])])
        self.assertIn("L_Q not needed by this method", r_rel.stdout)
        self.assertEqual(npy_data(self.out("lq_rel.npy")), npy_data(self.batch))
        w = self.out("lq_dual.npy")
        r_dual = self.run_ok([(2, base + ["--method", "gi", "--form", "dual", "--out", w])])
        self.assertNotIn("L_Q not needed", r_dual.stdout)
        self.assertAlmostEqual(mb(r_dual.stdout) - mb(r_rel.stdout), 8e-6 * self.m ** 2,
                               delta=0.11)
        wb = self.out("lq_dual_batch.npy")
        b = subprocess.run([h.binary("gapsim-batch")] + base +
                           ["--method", "gi", "--form", "dual", "--threads", "2", "--out", wb],
                           capture_output=True, text=True, timeout=TIMEOUT, env=mpi_env())
        self.assertEqual(b.returncode, 0, b.stdout + b.stderr)
        self.assertIn("cond_1(Q)", b.stdout)
        self.assertEqual(npy_data(w), npy_data(wb))
        # and the dual form's answers are GI relative's within round-off
        got, ref = h.read_npy(w)[1], h.read_npy(self.batch)[1]
        self.assertLessEqual(max(abs(x - y) for x, y in zip(got, ref)), 1e-7)

    def test_sparse_parts_factored_only_where_k_is_solved(self):
        # a whole-mesh (sparse) model: GI relative never solves with K, so the
        # other ranks do not factor the plates; results bit-identical to
        # gapsim-batch; GI primal solves with K: every rank factors them, and
        # its answers are GI relative's within round-off
        d = self.out("sparse-model")
        subprocess.run([h.binary("gapsim-gen"), "--kind", "lap", "--small", "--uncondensed",
                        "--no-cond", "--gaps", "6", "--out", d], check=True,
                       stdout=subprocess.DEVNULL, timeout=TIMEOUT)
        mj, gaps = os.path.join(d, "lap.json"), os.path.join(d, "lap.gaps.npy")
        base = [mj, "--gaps", gaps, "--fraction", "0.5", "--method", "gi"]
        wb = self.out("sparse_batch.npy")
        subprocess.run([h.binary("gapsim-batch")] + base + ["--threads", "2", "--out", wb],
                       check=True, stdout=subprocess.DEVNULL, timeout=TIMEOUT, env=mpi_env())
        w_rel, fac = self.out("sparse_rel.npy"), self.out("sparse.factors")
        r = self.run_ok([(2, base + ["--factors", fac, "--out", w_rel])])
        self.assertIn("sparse parts factored on rank 0 only", r.stdout)
        self.assertEqual(npy_data(w_rel), npy_data(wb))
        # rank 0's load of the saved factors leaves them unfactored too (the
        # line said "factored on rank 0 only")
        w_load = self.out("sparse_load.npy")
        r = self.run_ok([(2, base + ["--factors", fac, "--out", w_load])])
        self.assertIn("sparse parts not factored: this method does not solve with K", r.stdout)
        self.assertEqual(npy_data(w_load), npy_data(wb))
        w_pri = self.out("sparse_pri.npy")
        r = self.run_ok([(2, base + ["--form", "primal", "--out", w_pri])])
        self.assertNotIn("sparse parts factored", r.stdout)
        got, ref = h.read_npy(w_pri)[1], h.read_npy(w_rel)[1]
        self.assertLessEqual(max(abs(x - y) for x, y in zip(got, ref)), 1e-7)

    def test_factors_saved_loaded_and_shared(self):
        fac = self.out("lap.factors")
        args = [self.model_json, "--gaps", self.gaps, "--method", "gi", "--fraction", "0.5",
                "--factors", fac]
        # the factors line says where they came from: built and saved, then
        # loaded (with the load's time, not the file's stored build time;
        # both said "ready on rank 0 (precomputation 0.01 s)"), then loaded
        # by every rank itself (it said "0.0 MB to 0 ranks")
        r = self.run_ok([(2, args + ["--out", self.out("f1.npy")])])
        self.assertRegex(r.stdout, r"(?m)^factors    computed and saved to %s \(precomputation "
                                   r"[0-9.]+ s\), broadcast" % re.escape(fac))
        self.assertTrue(os.path.getsize(fac) > 8 * self.m * self.m)
        r = self.run_ok([(2, args + ["--out", self.out("f2.npy")])])
        self.assertRegex(r.stdout, r"(?m)^factors    loaded from %s in [0-9.]+ s, broadcast "
                                   r"[0-9.]+ s \([0-9.]+ MB to 1 ranks; L_Q not needed by this "
                                   r"method\)$" % re.escape(fac))
        # GI relative does not read L_Q: rank 0 loads the file without it (above)
        r = self.run_ok([(3, args + ["--shared-factors", "--out", self.out("f3.npy")])])
        self.assertRegex(r.stdout, r"(?m)^factors    every rank loaded %s itself \(the slowest "
                                   r"in [0-9.]+ s\), no broadcast \(L_Q not needed by this "
                                   r"method\)$" % re.escape(fac))
        b = subprocess.run([h.binary("gapsim-batch"), self.model_json, "--gaps", self.gaps,
                            "--method", "gi", "--fraction", "0.5", "--factors", fac,
                            "--out", self.out("fb.npy")], capture_output=True, text=True,
                           timeout=TIMEOUT)
        self.assertEqual(b.returncode, 0, b.stderr)
        self.assertIn("factors    loaded from " + fac, b.stdout)
        for name in ("f1.npy", "f2.npy", "f3.npy", "fb.npy"):
            self.assertEqual(npy_data(self.out(name)), npy_data(self.batch), name)
        with open(fac, "r+b") as f:  # a damaged factor file is an error, not a recompute
            f.seek(200)
            f.write(b"\xff" * 8)
        r = mpirun([(2, args + ["--out", self.out("f4.npy")])])
        self.assertEqual(r.returncode, 1)
        self.assertIn("rank 0: the factors", r.stderr)
        self.assertIn("corrupted", r.stderr)

    def test_summary_none_still_explains_exit_3(self):
        # --tol 1e-15: the KKT certificate fails on most rows, exit 3; with
        # --summary none the count and the results line are printed all the
        # same (stdout ended at the run line), and the count is the one a
        # summary gives (the rerun resumes: nothing left to solve)
        w = self.out("sn.npy")
        args = [self.model_json, "--gaps", self.gaps, "--method", "gi", "--fraction", "0.5",
                "--tol", "1e-15", "--limit", "20", "--out", w]
        count = r"(\d+) rows, (\d+) not optimal or not certified$"
        r = mpirun([(2, args + ["--summary", "none"])])
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        m = re.search(r"(?m)^summary    not written \(--summary none\): " + count, r.stdout)
        self.assertTrue(m, r.stdout)
        self.assertEqual(m.group(1), "20")
        self.assertGreater(int(m.group(2)), 0)
        self.assertRegex(r.stdout, r"(?m)^results    %s \(20 x %d\), completion map %s\.run; "
                         % (re.escape(w), self.m, re.escape(w)))
        r = mpirun([(2, args)])
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        m2 = re.search(r"(?m)^summary    %s\.summary\.json: " % re.escape(w) + count, r.stdout)
        self.assertTrue(m2, r.stdout)
        self.assertEqual(m2.groups(), m.groups())

    def test_kill_one_rank_then_rerun_completes(self):
        # k gaps with half the fasteners: two seconds of GI solves (the
        # sanitized build, 2 cores), so that the kill comes long before the
        # end: 850-862 of the 3,000 chunks were complete when the other rank
        # had gone down too (2026-11-28; without fasteners every gap was
        # open, and a fast machine had finished all 750 chunks of 1,500 gaps)
        k = 6000
        n_chunks = k // 2
        mj, gaps = model("lap", small=False, inline=False, gaps=k,
                         extra=["--scale", "0.4", "--no-cond", "--seed", "9"])
        ref = self.out("kill_ref.npy")
        subprocess.run([h.binary("gapsim-batch"), mj, "--gaps", gaps, "--method", "gi",
                        "--fraction", "0.5", "--threads", "2", "--out", ref], check=True,
                       stdout=subprocess.DEVNULL, timeout=TIMEOUT)
        w = self.out("killed.npy")
        args = [mj, "--gaps", gaps, "--method", "gi", "--fraction", "0.5", "--chunk", "2",
                "--out", w]
        p = subprocess.Popen([MPIRUN, "--oversubscribe", "-np", "2", h.binary("gapsim-mpi")] + args,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=mpi_env())
        side, done, victim = w + ".run", 0, None
        deadline = time.time() + TIMEOUT
        while time.time() < deadline and p.poll() is None:
            try:
                with open(side, "rb") as f:
                    f.seek(128)
                    done = f.read(n_chunks).count(1)
            except OSError:
                done = 0
            if done >= 20:
                with open("/proc/%d/task/%d/children" % (p.pid, p.pid)) as f:
                    kids = [int(x) for x in f.read().split()]
                ranks = [k for k in kids if "gapsim-mpi" in read_text("/proc/%d/cmdline" % k)]
                victim = ranks[-1]
                os.kill(victim, signal.SIGKILL)  # one rank (a child of our mpirun) dies
                break
            time.sleep(0.002)
        out, err = p.communicate(timeout=TIMEOUT)
        self.assertIsNotNone(victim, "the run ended before a rank could be killed:\n" + out)
        self.assertNotEqual(p.returncode, 0)
        with open(side, "rb") as f:
            f.seek(128)
            done = f.read(n_chunks).count(1)
        self.assertGreaterEqual(done, 20)
        self.assertLess(done, n_chunks)
        # --sync and --progress are not inputs: it resumes
        r = self.run_ok([(2, args + ["--sync", "--progress"])])
        m = re.search(r"(\d+) chunks already complete", r.stdout)
        self.assertGreaterEqual(int(m.group(1)), done)
        solved = int(re.search(r"(\d+) rows solved", r.stdout).group(1))
        self.assertEqual(solved, k - 2 * int(m.group(1)))
        # rank 0's progress: rows done count the resumed ones, the last line is the whole
        lines = [x for x in r.stderr.splitlines() if x.startswith("cloud ")]
        self.assertRegex(lines[-1], r"^cloud done: %d/%d done, [0-9.]+ solves/s$" % (k, k))
        for x in lines[:-1]:
            n = int(re.match(r"cloud running: (\d+)/%d done" % k, x).group(1))
            self.assertTrue(2 * int(m.group(1)) < n <= k, x)
        self.assertEqual(npy_data(w), npy_data(ref))
        with open(w + ".summary.json") as f:
            self.assertEqual(json.load(f)["count"], k)
        os.unlink(w + ".summary.json")
        r = self.run_ok([(3, args + ["--summary", "none"])])  # complete: nothing left to do
        self.assertIn("%d chunks already complete" % n_chunks, r.stdout)
        self.assertIn(" 0 rows solved", r.stdout)
        self.assertFalse(os.path.exists(w + ".summary.json"))
        r = self.run_ok([(2, args + ["--limit", "1000"])])  # other inputs: a fresh run
        self.assertIn("0 chunks already complete", r.stdout)
        self.assertEqual(npy_data(w), npy_data(ref)[:1000 * 8 * h.read_npy(w)[0][1]])

    def test_a_changed_middle_gap_starts_over(self):
        # The sidecar's fingerprint covers every gap the run reads: it once
        # sampled the first and the last gap only, and a rerun after a change
        # in the middle of the file reported every chunk complete and kept
        # the stale rows (0.46 mm off on row 10 of a 20-gap lap cloud)
        shape, flat = h.read_npy(self.gaps)
        k, m = shape
        rows = [flat[i * m:(i + 1) * m] for i in range(k)]
        gaps = h.write_npy(self.out("middle.npy"), rows)
        w = self.out("middle_w.npy")
        args = [self.model_json, "--gaps", gaps, "--method", "gi", "--fraction", "0.5",
                "--chunk", "4", "--out", w]
        n_chunks = (k + 3) // 4
        self.run_ok([(2, args)])
        self.assertEqual(npy_data(w), npy_data(self.batch))
        r = self.run_ok([(2, args)])  # the same file: nothing to do
        self.assertIn("%d chunks already complete" % n_chunks, r.stdout)
        self.assertIn(" 0 rows solved", r.stdout)
        # one gap in the middle changed in place: same shape, same size
        mid = k // 2
        rows[mid] = [x - 0.1 for x in rows[mid]]
        h.write_npy(gaps, rows)
        r = self.run_ok([(2, args)])
        self.assertIn(" 0 chunks already complete", r.stdout)
        self.assertIn("%d rows solved" % k, r.stdout)
        ref = self.out("middle_ref.npy")
        subprocess.run([h.binary("gapsim-batch"), self.model_json, "--gaps", gaps, "--method",
                        "gi", "--fraction", "0.5", "--threads", "2", "--out", ref], check=True,
                       stdout=subprocess.DEVNULL, timeout=TIMEOUT)
        self.assertEqual(npy_data(w), npy_data(ref))
        self.assertNotEqual(npy_data(ref), npy_data(self.batch))
        # with --limit only the gaps read count: a change past them resumes
        args += ["--limit", str(mid)]
        self.run_ok([(2, args)])
        rows[k - 2] = [x + 0.1 for x in rows[k - 2]]
        h.write_npy(gaps, rows)
        r = self.run_ok([(2, args)])
        self.assertIn("%d chunks already complete" % ((mid + 3) // 4), r.stdout)
        self.assertIn(" 0 rows solved", r.stdout)

    def test_bad_input_on_one_rank_stops_all(self):
        good = [self.model_json, "--gaps", self.gaps, "--out", self.out("e.npy")]
        bad_gaps = [self.model_json, "--gaps", self.out("missing.npy"), "--out", self.out("e.npy")]
        t0 = time.time()
        r = mpirun([(1, good), (1, bad_gaps), (1, good)])
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("gapsim-mpi: rank 1: %s: io_error" % self.out("missing.npy"), r.stderr)
        self.assertNotIn("rank 0:", r.stderr)
        self.assertNotIn("rows solved", r.stdout)
        self.assertLess(time.time() - t0, TIMEOUT)
        # a model file that is not a model on the last rank
        r = mpirun([(2, good), (1, [self.gaps, "--gaps", self.gaps, "--out", self.out("e.npy")])])
        self.assertEqual(r.returncode, 1)
        self.assertIn("gapsim-mpi: rank 2: %s: bad_format" % self.gaps, r.stderr)
        # gaps of another model
        other_json, other_gaps = model("sandwich", small=True, inline=True, gaps=5)
        r = mpirun([(2, [self.model_json, "--gaps", other_gaps, "--out", self.out("e.npy")])])
        self.assertEqual(r.returncode, 1)
        self.assertIn("dimension_mismatch", r.stderr)
        # usage: every rank exits 2, rank 0 explains
        r = mpirun([(2, [self.model_json, "--gaps", self.gaps])])
        self.assertEqual(r.returncode, 2)
        self.assertIn("--out is missing", r.stderr)
        r = mpirun([(1, good + ["--method", "nope"])])
        self.assertEqual(r.returncode, 2)
        r = mpirun([(1, good + ["--fraction", "0.5x"])])  # not read as 0.5
        self.assertEqual(r.returncode, 2)
        self.assertIn("--fraction: '0.5x' is not a number in [0, 1]", r.stderr)
        r = mpirun([(1, good + ["--limit", "0"])])
        self.assertEqual(r.returncode, 2)
        self.assertIn("--limit: '0' is not a number of gaps in [1, 2147483647]", r.stderr)

    def test_limit_and_an_empty_cloud_as_gapsim_batch(self):
        # --limit -1 and --limit 99999999999 ran the whole cloud here while
        # gapsim-batch refused them; an empty cloud had its own message here
        empty = write_empty_npy(self.out("empty.npy"), self.m)
        w = self.out("lim.npy")
        for extra, code, why in ((["--limit", "-1"], 2,
                                  "--limit: '-1' is not a number of gaps in [1, 2147483647]"),
                                 (["--limit", "99999999999"], 2, "--limit: '99999999999' is not"),
                                 (["--gaps", empty], 1,
                                  "invalid at gaps: %s holds no gap vector" % empty)):
            r = mpirun([(2, [self.model_json, "--gaps", self.gaps, "--out", w] + extra)])
            b = subprocess.run([h.binary("gapsim-batch"), self.model_json, "--gaps", self.gaps] +
                               extra, capture_output=True, text=True, timeout=TIMEOUT)
            self.assertEqual(r.returncode, code, r.stdout + r.stderr)
            self.assertEqual(b.returncode, code, b.stdout + b.stderr)
            self.assertIn("gapsim-mpi: " if code == 2 else "gapsim-mpi: rank 0: ", r.stderr)
            self.assertIn(why, r.stderr)
            self.assertIn(why, b.stderr)
            self.assertNotIn("rows solved", r.stdout)
        self.assertFalse(os.path.exists(w))

    def test_outputs_that_are_not_regular_files(self):
        # --summary naming a device or a FIFO was replaced by a regular file
        # (as root, /dev/full itself): now written into, the full device an
        # error with its reason. --out must be a regular file (written in
        # place with MPI-IO, resumed from): another kind is refused at once.
        d = tempfile.mkdtemp(prefix="nodes-", dir=self.tmp)
        null = h.char_device(self, os.path.join(d, "mynull"), 3)
        full = h.char_device(self, os.path.join(d, "myfull"), 7)
        fifo = os.path.join(d, "myfifo")
        os.mkfifo(fifo)
        base = [self.model_json, "--gaps", self.gaps, "--method", "gi", "--fraction", "0.5",
                "--out", os.path.join(d, "w.npy")]
        self.run_ok([(2, base + ["--summary", null])])
        self.assertTrue(stat.S_ISCHR(os.lstat(null).st_mode), "the device was replaced")
        reader = subprocess.Popen(["cat", fifo], stdout=subprocess.PIPE)
        try:
            self.run_ok([(2, base + ["--summary", fifo])])
            self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced")
            self.assertEqual(json.loads(reader.communicate(timeout=30)[0])["count"], 45)
        finally:
            if reader.poll() is None:
                reader.kill()
                reader.wait()
        r = mpirun([(2, base + ["--summary", full])])
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("cannot write '%s': No space left on device" % full, r.stderr)
        self.assertTrue(stat.S_ISCHR(os.lstat(full).st_mode))
        for out in (null, fifo):
            r = mpirun([(2, [self.model_json, "--gaps", self.gaps, "--out", out])])
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn("--out '%s' is not a regular file" % out, r.stderr)
            self.assertNotIn("model ", r.stdout)  # before the model is read
        self.assertTrue(stat.S_ISCHR(os.lstat(null).st_mode))
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        self.assertEqual(sorted(os.listdir(d)), ["myfifo", "myfull", "mynull", "w.npy",
                                                 "w.npy.run"])

    def test_an_output_that_is_an_input_is_refused(self):
        # --out naming the gaps file: rank 0 truncated it after the ranks had
        # opened it, the workers read zeros and the run ended "successfully".
        # Any output (--out, its completion map, --summary, a --factors file
        # to be saved) that is an input (MODEL.json, --gaps, --patterns, a
        # --factors file to be loaded) or another output, by name, hard link
        # or symlink, is refused before the model is read.
        d = tempfile.mkdtemp(prefix="same-", dir=self.tmp)
        g, mj, w = (os.path.join(d, x) for x in ("g.npy", "m.json", "w.npy"))
        shutil.copy(self.gaps, g)
        shutil.copy(self.model_json, mj)  # inline: the JSON is the whole model
        os.link(g, os.path.join(d, "hard.npy"))
        os.symlink("g.npy", os.path.join(d, "sym.npy"))
        pats = os.path.join(d, "p.json")
        with open(pats, "w") as f:
            json.dump([{}], f)
        with open(g, "rb") as f:
            before = f.read()
        cases = ((["--out", g], "--out '%s' is the same file as --gaps '%s'" % (g, g)),
                 (["--out", os.path.join(d, "hard.npy")], "is the same file as --gaps"),
                 (["--out", os.path.join(d, "sym.npy")], "is the same file as --gaps"),
                 (["--out", pats, "--patterns", pats], "is the same file as --patterns"),
                 (["--out", w, "--summary", g], "--summary '%s' is the same file as --gaps" % g),
                 (["--out", w, "--summary", mj], "is the same file as MODEL.json '%s'" % mj),
                 (["--out", w, "--summary", w], "--summary '%s' is the same file as --out" % w),
                 (["--out", w, "--summary", w + ".run"],
                  "is the same file as --out's completion map"),
                 (["--out", w, "--factors", w], "--factors '%s' is the same file as --out" % w))
        for args, why in cases:
            r = mpirun([(2, [mj, "--gaps", g] + args)])
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn(why, r.stderr)
            self.assertNotIn("model ", r.stdout)
        with open(g, "rb") as f:
            self.assertEqual(f.read(), before)
        self.assertEqual(sorted(os.listdir(d)), ["g.npy", "hard.npy", "m.json", "p.json",
                                                 "sym.npy"])

    def test_an_output_that_is_a_file_of_the_model_is_refused(self):
        # --out naming a stiffness block MODEL.json references was written in
        # place over the block; refused once the model is read, before any work
        d = tempfile.mkdtemp(prefix="same-model-", dir=self.tmp)
        subprocess.run([h.binary("gapsim-gen"), "--kind", "lap", "--small", "--no-cond",
                        "--gaps", "4", "--out", d, "--name", "m"], check=True,
                       stdout=subprocess.DEVNULL, timeout=TIMEOUT)
        mj, g, part1 = (os.path.join(d, x) for x in ("m.json", "m.gaps.npy", "m.part1.npy"))
        with open(part1, "rb") as f:
            before = f.read()
        listing = sorted(os.listdir(d))
        for args in (["--out", part1], ["--out", os.path.join(d, "w.npy"), "--summary", part1]):
            r = mpirun([(2, [mj, "--gaps", g] + args)])
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn("is the same file as a file of MODEL.json '%s'" % part1, r.stderr)
            self.assertNotIn("factors ", r.stdout)
        with open(part1, "rb") as f:
            self.assertEqual(f.read(), before)
        self.assertEqual(sorted(os.listdir(d)), listing)

    def test_bad_output_paths_are_reported_before_the_work(self):
        # A missing or read-only --out directory was reported after the model
        # read, the precomputation and the hash of the gaps; a bad --summary
        # directory after the whole solve. Both now before the model is read.
        good = self.out("bo.npy")
        cases = ((["--out", self.out("missing/w.npy")], "cannot create"),
                 (["--out", self.tmp], "is a directory"),
                 (["--out", good, "--summary", self.out("nodir/s.json")], "cannot create"))
        for args, why in cases:
            r = mpirun([(2, [self.model_json, "--gaps", self.gaps] + args)])
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn(why, r.stderr)
            self.assertNotIn("model ", r.stdout)
        self.assertFalse(os.path.exists(good))
        with tmpfs(self, self.tmp, 1 << 20, ro=True) as ro:
            r = mpirun([(2, [self.model_json, "--gaps", self.gaps, "--out",
                             os.path.join(ro, "w.npy")])])
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn("Read-only file system", r.stderr)
            self.assertNotIn("model ", r.stdout)

    def test_a_results_file_written_by_another_program_is_solved_again(self):
        # The sidecar once trusted any W.npy of the right size: gapsim-batch
        # with another fraction writing the same --out, then the first
        # command again: "12 chunks already complete" and every row wrong.
        # Each chunk's checksum in the sidecar is checked against the file.
        w = self.out("other.npy")
        args = [self.model_json, "--gaps", self.gaps, "--method", "gi", "--fraction", "0.5",
                "--chunk", "4", "--out", w]
        self.run_ok([(2, args)])
        self.assertEqual(npy_data(w), npy_data(self.batch))
        b = subprocess.run([h.binary("gapsim-batch"), self.model_json, "--gaps", self.gaps,
                            "--method", "gi", "--fraction", "0.2", "--threads", "2", "--out", w],
                           capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(b.returncode, 0, b.stderr)
        self.assertNotEqual(npy_data(w), npy_data(self.batch))
        r = self.run_ok([(2, args)])
        self.assertIn(" 0 chunks already complete", r.stdout)
        self.assertIn("12 chunks marked complete in %s.run do not match %s" % (w, w), r.stdout)
        self.assertIn("45 rows solved", r.stdout)
        self.assertEqual(npy_data(w), npy_data(self.batch))
        # one row changed in place: only its chunk runs again
        with open(w, "r+b") as f:
            f.seek(-8 * self.m * 40, os.SEEK_END)  # row 5: chunk 1
            f.write(b"\0" * 8)
        r = self.run_ok([(2, args)])
        self.assertIn(" 11 chunks already complete", r.stdout)
        self.assertIn("1 chunk marked complete in %s.run does not match %s" % (w, w), r.stdout)
        self.assertIn(" 4 rows solved", r.stdout)
        self.assertEqual(npy_data(w), npy_data(self.batch))

    def test_a_full_disk_is_named_and_the_rerun_resumes(self):
        # A write that met a full disk said "short write (28752 of 41648)";
        # it now says why, and after space is freed the rerun completes the
        # file bit for bit.
        with tmpfs(self, self.tmp, 1 << 20) as mnt:
            w = os.path.join(mnt, "w.npy")
            filler = os.path.join(mnt, "filler")
            with open(filler, "wb") as f:  # leaves 3 pages: the headers and one of rows
                st = os.statvfs(mnt)
                f.write(b"\1" * (st.f_bavail * st.f_frsize - 3 * 4096))
            args = [self.model_json, "--gaps", self.gaps, "--method", "gi", "--fraction", "0.5",
                    "--chunk", "4", "--out", w]
            r = mpirun([(2, args)])
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn("%s: No space left on device" % w, r.stderr)
            self.assertNotIn("short write", r.stderr)
            os.unlink(filler)
            r = self.run_ok([(2, args)])
            self.assertRegex(r.stdout, r" \d+ chunks already complete")
            self.assertEqual(npy_data(w), npy_data(self.batch))

    def test_a_nan_gap_stops_every_rank(self):
        # A NaN in the cloud fails the row that reads it. With one thread a
        # rank's only worker ended on it while the chunk queue was full, and
        # rank 0 waited for workers that were gone (it hung for good); every
        # layout of ranks and threads must stop with the row named.
        shape, flat = h.read_npy(self.gaps)
        k, m = shape
        rows = [flat[i * m:(i + 1) * m] for i in range(k)]
        rows[3][5] = float("nan")
        nan_gaps = h.write_npy(self.out("nan.npy"), rows)
        for ranks, threads in ((1, 1), (2, 1), (2, 2)):
            r = mpirun([(ranks, [self.model_json, "--gaps", nan_gaps, "--out",
                                 self.out("nan_w.npy"), "--threads", str(threads), "--fresh"])],
                       timeout=60)
            self.assertEqual(r.returncode, 1, "%d ranks x %d threads: %s" %
                             (ranks, threads, r.stdout + r.stderr))
            self.assertIn("not_finite at gaps[3][5]", r.stderr)
            self.assertNotIn("rows solved", r.stdout)


if __name__ == "__main__":
    unittest.main()
