"""POST /v1/assemblies with a whole model folder as one .tar, .tar.gz or .zip
body: subdirectories, a block in an Abaqus text format, a wrapper directory,
?model=, and every refusal (4xx naming the entry): '..', absolute paths,
links, hidden files, entry and size caps, missing files, not an archive.
The same model content uploaded as an archive and inline gets the same
content hash, so the FE format path is checked end to end. The small lap
joint uncondensed (each part's whole plate as a sparse Nastran DMIG matrix,
condensed by the daemon with CHOLMOD) solves to the condensed model's
residual gaps within 1e-9 mm, after a restart too (its sparse factors made
once, by the first solves that need K), and --max-fe-dofs refuses it with
413."""
import io
import json
import os
import re
import struct
import tarfile
import time
import unittest
import zipfile

import gsd_harness as h
from api_common import ApiCase, model


def folder_files():
    """The small lap model as a folder: lap.json, blocks/lap.part0.npy and
    blocks/k1.inp (part 1 in Abaqus MATRIX INPUT text, exact %.17g values)."""
    path, _ = model("lap", small=True, inline=False, gaps=2)
    base = os.path.dirname(path)
    with open(path) as f:
        doc = json.load(f)
    with open(os.path.join(base, "lap.part0.npy"), "rb") as f:
        p0 = f.read()
    with open(os.path.join(base, "lap.part1.npy"), "rb") as f:
        raw = f.read()
    hl = struct.unpack("<H", raw[8:10])[0]
    header = raw[10:10 + hl].decode()
    nd = int(re.search(r"'shape': \((\d+),", header).group(1))
    nd2 = nd  # a symmetric block: C or Fortran order alike
    flat = struct.unpack("<%dd" % (nd * nd), raw[10 + hl:])
    lines = []
    for i in range(nd):          # node label 100 + i, DOF 3: rows in order
        for j in range(i + 1):   # lower triangle
            v = flat[i * nd2 + j]
            if v != 0.0:
                lines.append("%d, 3, %d, 3, %.17g\n" % (100 + i, 100 + j, v))
    doc["parts"][0]["K"] = "blocks/lap.part0.npy"
    doc["parts"][1]["K"] = {"file": "blocks/k1.inp", "format": "abaqus-matrix-input"}
    files = {"lap.json": json.dumps(doc).encode(), "blocks/lap.part0.npy": p0,
             "blocks/k1.inp": "".join(lines).encode()}
    if "f" in doc and isinstance(doc["f"], str):
        with open(os.path.join(base, doc["f"]), "rb") as f:
            files[doc["f"]] = f.read()
    return files


def tar_bytes(files, prefix="", gz=False, extra=None):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if gz else "w") as t:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(prefix + name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
        for info, data in extra or []:
            t.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def zip_bytes(files, prefix=""):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in sorted(files.items()):
            z.writestr(prefix + name, data)
    return buf.getvalue()


class ArchiveUpload(ApiCase):
    def post(self, body, ctype, query="", d=None):
        return (d or self.d).post("/v1/assemblies?wait=1" + query, body,
                                  headers={"Content-Type": ctype})

    def assert_error(self, r, status, code, needle):
        self.assertEqual(r.status, status, r.body[:400])
        err = r.json()["error"]
        self.assertEqual(err["code"], code, err)
        self.assertIn(needle, err["message"])

    def test_tar_zip_targz_same_assembly_as_inline(self):
        files = folder_files()
        cases = [(tar_bytes(files), "application/x-tar", ""),
                 (tar_bytes(files, prefix="lap/", gz=True), "application/gzip", ""),
                 (zip_bytes(files, prefix="lap/"), "application/zip", "&model=lap.json")]
        for body, ctype, query in cases:
            r = self.post(body, ctype, query)
            # the inline upload of the same content exists: same hash, same id
            self.assertEqual(r.status, 200, (ctype, r.body[:400]))
            self.assertEqual(r.json()["id"], self.aid)
            self.assertEqual(r.json()["content_hash"], self.asm["content_hash"])

    def test_fresh_daemon_stores_the_folder(self):
        d = h.Daemon(workers=1).start()
        try:
            r = self.post(tar_bytes(folder_files(), prefix="./"), "application/x-tar", d=d)
            self.assertEqual(r.status, 201, r.body[:400])
            a = r.json()
            self.assertEqual(a["status"], "ready")
            self.assertEqual(a["content_hash"], self.asm["content_hash"])
            stored = os.path.join(d.data_dir, "assemblies", a["id"])
            self.assertTrue(os.path.isfile(os.path.join(stored, "model.json")))
            self.assertTrue(os.path.isfile(os.path.join(stored, "blocks", "k1.inp")))
            self.assertFalse(os.path.exists(os.path.join(stored, "lap.json")))
            g = [x - 0.2 for x in self.G[3]]
            s1 = d.post("/v1/assemblies/%s/solve" % a["id"], {"g": g}).json()
            s2 = self.solve(g)
            self.assert_close(s1["w"], s2["w"])
        finally:
            d.cleanup()

    def sparse_folder(self):
        """The small lap joint, uncondensed, its parts as DMIG punch files."""
        path, _ = model("lap", small=True, inline=False, gaps=1,
                        extra=["--uncondensed", "--matrix-format", "nastran-dmig"])
        base = os.path.dirname(path)
        files = {}
        for name in os.listdir(base):
            if name.endswith((".json", ".pch")):
                with open(os.path.join(base, name), "rb") as f:
                    files[name] = f.read()
        self.assertIn(b'"storage": "sparse"', files["lap.json"])
        return files

    def test_whole_mesh_parts_condensed_by_the_daemon(self):
        r = self.post(tar_bytes(self.sparse_folder()), "application/x-tar", "&model=lap.json")
        self.assertIn(r.status, (200, 201), r.body[:400])
        a = r.json()
        self.assertEqual(a["status"], "ready", a)
        self.assertEqual(a["m"], self.m)
        self.assertGreater(a["n"], 3 * self.asm["n"])  # every FE DOF, not the junction
        for k in (0, 5, 11):
            g = self.G[k]
            s1 = self.d.post("/v1/assemblies/%s/solve" % a["id"],
                             {"g": g, "fasteners": [0, 4, 9]}).json()
            s2 = self.solve(g, fasteners=[0, 4, 9])
            self.assertEqual(s1["status"], "optimal", s1)
            self.assert_close(s1["w"], s2["w"], tol=1e-9, what="residual gaps, gap %d" % k)

    def test_whole_mesh_factors_on_demand_after_restart(self):
        """After a restart the stored factors load without the sparse parts'
        factors (factors.bin holds none); GI relative solves at once, and
        the first solves that need K (x, GI on the primal form), asked
        side by side, factor them once and get the same x as before."""
        d = h.Daemon(workers=2).start()
        try:
            r = self.post(tar_bytes(self.sparse_folder()), "application/x-tar",
                          "&model=lap.json", d=d)
            self.assertIn(r.status, (200, 201), r.body[:400])
            aid = r.json()["id"]
            self.assertTrue(d.wait_factors_saved(aid, 120)["factors_saved"])
            url = "/v1/assemblies/%s/solve" % aid
            body = {"g": self.G[5], "fasteners": [0, 4, 9], "return": ["w", "x"]}
            before = d.post(url, body).json()
            self.assertEqual(before["status"], "optimal", before)
            d.restart()
            off = os.path.getsize(d.log_path)
            s = d.post(url, {"g": self.G[7], "fasteners": [0, 4, 9]}).json()
            self.assertEqual(s["status"], "optimal", s)
            self.assert_close(s["w"], self.solve(self.G[7], fasteners=[0, 4, 9])["w"], tol=1e-9)
            job = d.post("/v1/assemblies/%s/clouds" % aid,
                         {"gaps": self.G[:6], "solver": "gi", "formulation": "primal"}).json()
            after = d.post(url, body).json()
            self.assertEqual(d.wait_job(job["id"])["status"], "done")
            self.assertEqual(after["x"], before["x"])  # the same factors: the same bits
            self.assert_close(after["w"], before["w"], tol=0.0)
            res = d.get("/v1/jobs/%s/results?fields=w" % job["id"]).json()["results"]
            for k in range(6):
                self.assert_close(res[k]["w"], self.solve(self.G[k])["w"], tol=1e-9,
                                  what="GI primal, gap %d" % k)
            with open(d.log_path, "rb") as f:
                f.seek(off)
                log = f.read().decode(errors="replace")
            self.assertIn("sparse parts factored when a solve needs K", log)
            self.assertEqual(log.count("sparse parts factored for a solve with K"), 1, log)
        finally:
            d.cleanup()

    def test_whole_mesh_over_max_fe_dofs(self):
        d = h.Daemon(workers=1, extra=["--max-fe-dofs", "100"]).start()
        try:
            r = self.post(tar_bytes(self.sparse_folder()), "application/x-tar",
                          "&model=lap.json", d=d)
            self.assert_error(r, 413, "too_large", "--max-fe-dofs")
        finally:
            d.cleanup()

    def test_refused_entries_name_the_entry(self):
        files = folder_files()
        dotdot = tarfile.TarInfo("../evil.npy")
        dotdot.size = 1
        absolute = tarfile.TarInfo("/etc/evil.npy")
        absolute.size = 1
        link = tarfile.TarInfo("blocks/out.npy")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        hard = tarfile.TarInfo("blocks/hard.npy")
        hard.type = tarfile.LNKTYPE
        hard.linkname = "lap.json"
        hidden = tarfile.TarInfo("blocks/.hidden")
        hidden.size = 1
        for info, needle in [(dotdot, "entry '../evil.npy': a '..' component"),
                             (absolute, "an absolute path"),
                             (link, "entry 'blocks/out.npy': links are not accepted"),
                             (hard, "entry 'blocks/hard.npy': links are not accepted"),
                             (hidden, "entry 'blocks/.hidden': a component starting with '.'")]:
            data = b"x" if info.size else None
            r = self.post(tar_bytes(files, extra=[(info, data)]), "application/x-tar")
            self.assert_error(r, 422, "invalid", needle)
        # a duplicated entry
        dup = tarfile.TarInfo("lap.json")
        dup.size = 2
        r = self.post(tar_bytes(files, extra=[(dup, b"{}")]), "application/x-tar")
        self.assert_error(r, 422, "duplicate", "entry 'lap.json' appears twice")

    def test_model_choice_and_missing_files(self):
        files = folder_files()
        two = dict(files)
        two["other.json"] = b"{}"
        r = self.post(tar_bytes(two), "application/x-tar")
        self.assert_error(r, 422, "invalid", "more than one .json file")
        r = self.post(tar_bytes(files), "application/x-tar", "&model=nope.json")
        self.assert_error(r, 422, "invalid", "no file 'nope.json'")
        r = self.post(tar_bytes(files), "application/x-tar", "&model=../lap.json")
        self.assert_error(r, 422, "invalid", "the model query names")
        missing = dict(files)
        del missing["blocks/k1.inp"]
        r = self.post(tar_bytes(missing), "application/x-tar")
        self.assert_error(r, 422, "io_error", "must be in the archive")
        self.assertNotIn(self.d.data_dir, r.body.decode())  # no server paths
        r = self.post(b"not an archive at all" * 10, "application/x-tar")
        self.assert_error(r, 400, "bad_format", "not a readable")
        r = self.post(tar_bytes({}), "application/x-tar")
        self.assertEqual(r.status // 100, 4, r.body[:300])
        # damaged after a good entry: the answer names the last one read
        body = bytearray(tar_bytes({"a.json": b"{}", "b.json": b"{}"}))
        body[1024 + 148:1024 + 156] = b"7777777\0"  # the second header's checksum
        r = self.post(bytes(body), "application/x-tar")
        self.assert_error(r, 400, "bad_format", "damaged archive after entry 1 ('a.json')")

    def test_caps(self):
        d = h.Daemon(workers=1, extra=["--max-archive-entries", "2",
                                       "--max-upload", "150000"]).start()
        try:
            r = self.post(tar_bytes(folder_files()), "application/x-tar", d=d)
            self.assert_error(r, 413, "too_large", "more than 2 entries")
            big = {"model.json": b"{}", "blob.bin": b"\0" * 400000}  # compresses well
            r = self.post(tar_bytes(big, gz=True), "application/gzip", d=d)
            self.assert_error(r, 413, "too_large", "entry 'blob.bin'")
            # staging is emptied after refusals (when the request completes)
            staging = os.path.join(d.data_dir, "staging")
            for _ in range(100):
                if not os.listdir(staging):
                    break
                time.sleep(0.05)
            self.assertEqual(os.listdir(staging), [])
        finally:
            d.cleanup()


if __name__ == "__main__":
    unittest.main()
