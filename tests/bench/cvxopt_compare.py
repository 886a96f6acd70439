#!/usr/bin/env python3
"""cvxopt_compare.py -- gapsim's solvers against CVXOPT on the same dual problems.

Runs gapsim-bench on a generated joint (single thread, thread CPU time, the
reference oracle on), has it write each fraction's dual problems
(--dump-qp: Q, p = u0 + Q load - g per gap, the oracle's multipliers), then
solves the same problems with CVXOPT's dense interior point
(cvxopt.solvers.qp on min 1/2 lam'Q lam - p'lam, lam >= 0, the bounds as a
sparse G = -I: CVXOPT then factors one m x m matrix per iteration, as
gapsim's IPM does; a dense G costs it a dense G'W^-1 G product besides and
4x the time; Debian's python3-cvxopt on the same OpenBLAS, 1 thread) at its
default tolerances and
at tight ones, and prints per fraction: median CPU time, the largest
residual-gap error max|w - w_ref| (mm, w = Q lam - p against the oracle),
and the ratio of CVXOPT's median to each gapsim variant's. Figures, not
assertions (speed is measured by benchmark programs, never by tests).

Usage (from the source tree, after a Release build):
  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 tests/bench/cvxopt_compare.py \\
      [--bench build/tests/gapsim-bench] [--kind lap] [--ngaps 5] [--cvx-gaps 3] \\
      [--fractions 0.1,0.5,1] [--methods gi:relative,ipm:mixed,ipm:direct,ipm:split,npm:dual]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
try:
    from cvxopt import matrix, solvers, spmatrix
except ImportError:
    sys.exit("cvxopt_compare: needs Debian's python3-cvxopt (apt-get install python3-cvxopt) "
             "and /usr/bin/python3")


def cvx_solve(Q, p, tight):
    """CVXOPT qp on the dual; returns (lam, CPU seconds, status)."""
    m = Q.shape[0]
    P, q = matrix(Q), matrix(-p)
    G, h = spmatrix(-1.0, range(m), range(m)), matrix(np.zeros(m))
    solvers.options.clear()
    solvers.options["show_progress"] = False
    if tight:
        solvers.options.update(abstol=1e-14, reltol=1e-14, feastol=1e-12, maxiters=200)
    t0 = time.process_time()
    sol = solvers.qp(P, q, G, h)
    return np.array(sol["x"]).ravel(), time.process_time() - t0, sol["status"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    ap.add_argument("--bench", default=os.path.join(root, "build", "tests", "gapsim-bench"))
    ap.add_argument("--kind", default="lap")
    ap.add_argument("--ngaps", type=int, default=5)
    ap.add_argument("--cvx-gaps", type=int, default=3, help="gaps solved by CVXOPT (slow)")
    ap.add_argument("--fractions", default="0.1,0.5,1")
    ap.add_argument("--methods", default="gi:relative,ipm:mixed,ipm:direct,ipm:split,npm:dual")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="cvxcmp-") as d:
        js = os.path.join(d, "bench.json")
        cmd = [a.bench, "--kind", a.kind, "--ngaps", str(a.ngaps), "--fractions", a.fractions,
               "--methods", a.methods, "--clock", "cpu", "--dump-qp", d, "--json", js]
        print("$ " + " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(js) as f:
            bench = json.load(f)
        Q = np.load(os.path.join(d, "Q.npy"))
        print("model %s: n = %d, m = %d; CVXOPT %s on %d gaps per fraction, gapsim on %d"
              % (bench["model"], bench["n"], bench["m"], sys.modules["cvxopt"].__version__,
                 a.cvx_gaps, a.ngaps))
        for frac in [float(x) for x in a.fractions.split(",")]:
            tag = "%.2f" % frac
            P = np.load(os.path.join(d, "p_%s.npy" % tag))
            L = np.load(os.path.join(d, "lam_%s.npy" % tag))
            print("\nfraction %s" % tag)
            print("  %-28s %12s %14s %s" % ("solver", "median ms", "max|dw| mm", "status"))
            cvx = {}
            for tight in (False, True):
                times, dws, stats = [], [], []
                for r in range(min(a.cvx_gaps, P.shape[0])):
                    lam, t, st = cvx_solve(Q, P[r], tight)
                    w, wref = Q @ lam - P[r], Q @ L[r] - P[r]
                    times.append(t)
                    dws.append(float(np.max(np.abs(w - wref))))
                    stats.append(st)
                name = "cvxopt (%s)" % ("tight tolerances" if tight else "default tolerances")
                cvx[tight] = statistics.median(times)
                print("  %-28s %12.1f %14.2e %s" % (name, 1e3 * cvx[tight], max(dws),
                                                    ",".join(sorted(set(stats)))))
            for row in bench["rows"]:
                if abs(row["fraction"] - frac) > 1e-9:
                    continue
                print("  %-28s %12.1f %14.2e optimal %d/%d; cvxopt default / this = %.1fx, "
                      "tight / this = %.1fx"
                      % ("gapsim " + row["variant"], row["median_ms"], row["max_dw_mm"],
                         row["optimal"], row["gaps"], 1e3 * cvx[False] / row["median_ms"],
                         1e3 * cvx[True] / row["median_ms"]))


if __name__ == "__main__":
    main()
