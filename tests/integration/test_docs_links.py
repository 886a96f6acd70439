"""The docs stand alone: every relative link of a Markdown file in the
repository resolves to a file inside the repository, no file points to the
retired outside reference (../shared/FORMULATIONS.md), and docs/math.md holds
what the code comments refer to: forms (1) primal, (2) dual, (3) relative,
(4) the square change of variables, the methods and the KKT certificate."""
import os
import re
import unittest

from gsd_harness import SOURCE_DIR

ROOT = os.path.realpath(SOURCE_DIR)
SKIP = {".git", "build", "build-test", "data", "node_modules", "__pycache__"}
LINK = re.compile(r"\]\(([^)\s]+)\)")


def files(exts):
    for d, dirs, names in os.walk(ROOT):
        dirs[:] = [x for x in dirs if x not in SKIP and not x.startswith("build")]
        for n in names:
            if n.endswith(exts):
                yield os.path.join(d, n)


class DocsStandAlone(unittest.TestCase):
    def test_relative_links_stay_inside(self):
        bad = []
        for path in files((".md",)):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for target in LINK.findall(text):
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue  # URLs and anchors
                t = os.path.realpath(os.path.join(os.path.dirname(path), target.split("#")[0]))
                if not t.startswith(ROOT + os.sep) or not os.path.exists(t):
                    bad.append("%s: %s" % (os.path.relpath(path, ROOT), target))
        self.assertEqual(bad, [])

    def test_no_reference_outside(self):
        bad = []
        for path in files((".c", ".h", ".md", ".py", ".js", ".txt")):
            if os.path.basename(path) == "test_docs_links.py":
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                for i, line in enumerate(f, 1):
                    if "FORMULATIONS.md" in line or "../shared" in line:
                        bad.append("%s:%d" % (os.path.relpath(path, ROOT), i))
        self.assertEqual(bad, [])

    def test_error_codes_agree(self):
        # the library's codes (core/gs_error.c) and the HTTP layer's (api.md)
        # are the codes docs/python.md lists for GapsimError
        with open(os.path.join(ROOT, "core", "gs_error.c"), encoding="utf-8") as f:
            lib = set(re.findall(r'\] = \{"([a-z_]+)"', f.read())) - {"ok"}  # GS_OK: no error
        self.assertIn("dimension_mismatch", lib)
        with open(os.path.join(ROOT, "docs", "api.md"), encoding="utf-8") as f:
            api = f.read()
        para = api[api.index("The library's codes"):api.index("Match on the status first")]
        lib_doc, http_doc = para.split("the HTTP")
        self.assertEqual(set(re.findall(r"`([a-z_]+)`", lib_doc)), lib)
        codes = lib | set(re.findall(r"`([a-z_]+)`", http_doc))
        with open(os.path.join(ROOT, "docs", "python.md"), encoding="utf-8") as f:
            row = [ln for ln in f if ln.startswith("| `code` |")][0]
        listed = set(re.findall(r"`([a-z_]+)`", row))
        self.assertEqual(codes - listed, set())
        client_side = {"connection", "timeout", "job_failed"}  # the client's own codes
        self.assertEqual(listed - codes - client_side - {"code", "status", "wait_assembly"}, set())

    def test_math_page_has_the_forms(self):
        with open(os.path.join(ROOT, "docs", "math.md"), encoding="utf-8") as f:
            text = f.read()
        heads = re.findall(r"^## (.+)$", text, re.M)
        for want in ("(1) Primal", "(2) Dual", "(3) Relative", "(4) Primal with a square constraint matrix",
                     "Methods", "The KKT certificate"):
            self.assertIn(want, heads)
        for word in ("Q = A'K⁻¹A", "K̃ = (A'K⁻¹A)⁻¹", "LCP", "split preconditioner", "Goldfarb-Idnani",
                     "Newton projection", "Lemke", "primal_infeas", "complementarity"):
            self.assertIn(word, text)


if __name__ == "__main__":
    unittest.main()
