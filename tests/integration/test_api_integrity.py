"""The data directory at startup and its free space (server/integrity.h):
- a zero-length or missing gapsim.db next to stored assemblies is refused
  with a clear message (exit 1), the data directory left as it was;
  --reset discards the data and starts empty;
- a database damaged mid-file is refused (quick_check) instead of serving
  500s, staging/ left as it was;
- directories of assemblies and jobs the store does not know are reported
  and removed;
- below --min-free, /healthz says degraded with the reason, and uploads and
  clouds are refused with 507 (code insufficient_storage);
- a store of a newer gapsimd (user_version above the last migration) is
  refused, exit 1, and the refused start leaves the data directory exactly
  as it found it (the clean mark, the reserve, staging/, the lock file: it
  deleted the first three before), also when the newer version is still in
  a WAL a crash left;
- a start that migrates the store says so in the log (from, to, which
  migrations); after --reset the store is called new, not unclean.
"""
import glob
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import unittest

import gsd_harness as h
from api_common import model, upload_json


def start_fails(data_dir, extra=()):
    """gapsimd on data_dir must refuse to start: (exit code, stderr)."""
    p = subprocess.run([h.binary("gapsimd"), "--port", "0", "--data-dir", data_dir] + list(extra),
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stderr


def snapshot(root):
    """Every entry under root: relative path -> (kind, size, sha256 of the
    content) for files, "dir" for directories. The -shm file is SQLite's
    shared memory index, rewritten by any reader: its size only."""
    out = {}
    for base, dirs, files in os.walk(root):
        for n in dirs:
            out[os.path.relpath(os.path.join(base, n), root)] = "dir"
        for n in files:
            p = os.path.join(base, n)
            with open(p, "rb") as f:
                digest = "" if n.endswith("-shm") else hashlib.sha256(f.read()).hexdigest()
            out[os.path.relpath(p, root)] = ("file", os.path.getsize(p), digest)
    return out


def latest_migration():
    return len(glob.glob(os.path.join(h.SOURCE_DIR, "schema", "[0-9][0-9][0-9]_*.sql")))


class Integrity(unittest.TestCase):
    def setUp(self):
        self.model_json, _ = model("lap", small=True, inline=True, gaps=2)
        self.d = h.Daemon(workers=1).start()
        r = upload_json(self.d, self.model_json)
        self.assertEqual(r.status, 201, r.body[:300])
        self.aid = r.json()["id"]
        self.assertEqual(self.d.stop(), 0)
        self.db = os.path.join(self.d.data_dir, "gapsim.db")

    def tearDown(self):
        self.d.cleanup()

    def test_empty_database_refused_then_reset(self):
        for suffix in ("-wal", "-shm"):
            if os.path.exists(self.db + suffix):
                os.unlink(self.db + suffix)
        open(self.db, "w").close()
        with open(os.path.join(self.d.data_dir, "staging", "u_upload_in_progress"), "wb") as f:
            f.write(b"x")  # emptied by a start that went on
        before = snapshot(self.d.data_dir)
        self.assertIn("reserve", before)
        rc, err = start_fails(self.d.data_dir)
        self.assertEqual(rc, 1, err)
        self.assertIn("is empty but", err)
        self.assertIn("--reset", err)
        # the refusal changed nothing but the pid in the lock it took
        unlocked = lambda snap: {k: v for k, v in snap.items() if k != "gapsimd.lock"}
        self.assertEqual(unlocked(snapshot(self.d.data_dir)), unlocked(before))
        os.unlink(self.db)
        rc, err = start_fails(self.d.data_dir)
        self.assertEqual(rc, 1, err)
        self.assertIn("is missing but", err)
        del before["gapsim.db"]
        self.assertEqual(unlocked(snapshot(self.d.data_dir)), unlocked(before))
        open(self.db, "w").close()
        self.d.extra = ["--reset"]
        off = os.path.getsize(self.d.log_path)
        self.d.start()
        with open(self.d.log_path, "rb") as f:
            f.seek(off)
            log = f.read().decode(errors="replace")
        self.assertRegex(log, r"quick_check ok in [0-9.]+ s \(a new store\)")
        self.assertNotIn("did not close the store cleanly", log)
        self.assertEqual(self.d.get("/v1/assemblies").json()["assemblies"], [])
        self.assertEqual(os.listdir(os.path.join(self.d.data_dir, "assemblies")), [])
        self.d.extra = []

    def test_damaged_database_refused(self):
        size = os.path.getsize(self.db)
        with open(self.db, "r+b") as f:
            f.seek(16)
            page = int.from_bytes(f.read(2), "big") or 65536
            # the b-tree page headers of the middle third of the file: garbage
            for off in range(page * max(1, size // page // 3), 2 * size // 3, page):
                f.seek(off)
                f.write(b"\xee" * 12)
        marker = os.path.join(self.d.data_dir, "staging", "u_upload_in_progress")
        with open(marker, "wb") as f:
            f.write(b"x")
        rc, err = start_fails(self.d.data_dir)
        self.assertNotEqual(rc, 0, err)
        self.assertRegex(err, "damaged|malformed|not a database")
        # the refusal leaves staging/ (the reserve goes: the open may need its room)
        self.assertTrue(os.path.exists(marker), "the refused start emptied staging/")

    def test_orphans_removed(self):
        for sub, oid in (("assemblies", "a_0123456789abcdef"), ("jobs", "j_0123456789abcdef"),
                         ("jobs", "not-an-id")):
            os.makedirs(os.path.join(self.d.data_dir, sub, oid))
        self.d.start()
        self.assertEqual(os.listdir(os.path.join(self.d.data_dir, "jobs")), [])
        self.assertEqual(os.listdir(os.path.join(self.d.data_dir, "assemblies")), [self.aid])
        with open(self.d.log_path, errors="replace") as f:
            log = f.read()
        self.assertIn("a_0123456789abcdef: no assembly of that id", log)
        self.assertEqual(self.d.get("/v1/assemblies/" + self.aid).json()["status"], "ready")

    def test_changed_model_files_fail_the_assembly(self):
        # the stored model.json edited between two runs (one stiffness value):
        # no solve answers another model under this id; the assembly says
        # failed instead of ready, and stays so with the file put back
        path = os.path.join(self.d.data_dir, "assemblies", self.aid, "model.json")
        with open(path) as f:
            text = f.read()
        doc = json.loads(text)
        doc["parts"][0]["K"][0][0] *= 1.5
        with open(path, "w") as f:
            json.dump(doc, f)
        self.d.start()
        r = self.d.post("/v1/assemblies/%s/solve" % self.aid, {"g": [0.1] * 52})
        self.assertEqual(r.status, 500, r.body[:300])  # details in the log (an id in both)
        a = self.d.get("/v1/assemblies/" + self.aid).json()
        self.assertEqual(a["status"], "failed")
        self.assertIn("changed since the upload", a["error"]["message"])
        self.assertEqual(self.d.stop(), 0)
        with open(path, "w") as f:
            f.write(text)
        self.d.start()
        self.assertEqual(self.d.get("/v1/assemblies/" + self.aid).json()["status"], "failed")

    def test_cut_model_file_fails_the_assembly(self):
        path = os.path.join(self.d.data_dir, "assemblies", self.aid, "model.json")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text[:len(text) // 2])
        self.d.start()
        r = self.d.post("/v1/assemblies/%s/solve" % self.aid, {"g": [0.1] * 52})
        self.assertEqual(r.status, 500, r.body[:300])
        a = self.d.get("/v1/assemblies/" + self.aid).json()
        self.assertEqual(a["status"], "failed")
        self.assertEqual(a["error"]["code"], "bad_format")

    def assert_refused_untouched(self, version):
        """The daemon refuses the store of schema `version` and changes nothing."""
        data = self.d.data_dir
        with open(os.path.join(data, "staging", "u_upload_in_progress"), "wb") as f:
            f.write(b"x")  # emptied by a start that went on
        before = snapshot(data)
        for name in ("gapsim.db-clean", "reserve", "gapsimd.lock"):
            self.assertIn(name, before)
        rc, err = start_fails(data)
        self.assertEqual(rc, 1, err)
        self.assertIn("schema version %d is newer than this gapsimd supports (%d)"
                      % (version, latest_migration()), err)
        self.assertEqual(snapshot(data), before)

    def test_newer_store_refused_untouched(self):
        con = sqlite3.connect(self.db)
        con.execute("PRAGMA user_version=%d" % (latest_migration() + 1))
        con.commit()
        con.close()
        self.assertFalse(os.path.exists(self.db + "-wal"))
        self.assert_refused_untouched(latest_migration() + 1)

    def test_newer_store_in_a_wal_refused_untouched(self):
        # a newer gapsimd that crashed right after its migration: the new
        # version is in the WAL, the database file's header still says the old one
        v = latest_migration() + 2
        code = ("import os, sqlite3; c = sqlite3.connect(%r); "
                "c.execute('PRAGMA wal_autocheckpoint=0'); c.execute('PRAGMA user_version=%d'); "
                "c.commit(); os._exit(0)" % (self.db, v))
        subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
        self.assertGreater(os.path.getsize(self.db + "-wal"), 0)
        with open(self.db, "rb") as f:
            self.assertLess(int.from_bytes(f.read(100)[60:64], "big"), v)
        self.assert_refused_untouched(v)

    def test_migration_logged(self):
        # the store as migration 4 left it: the columns of 5 and 6 not there yet
        con = sqlite3.connect(self.db)
        con.executescript("ALTER TABLE results DROP COLUMN crossover; "
                          "ALTER TABLE assemblies DROP COLUMN deleting; PRAGMA user_version=4;")
        con.close()
        off = os.path.getsize(self.d.log_path)
        self.d.start()
        with open(self.d.log_path, "rb") as f:
            f.seek(off)
            log = f.read().decode(errors="replace")
        names = sorted(os.path.basename(p) for p in
                       glob.glob(os.path.join(h.SOURCE_DIR, "schema", "[0-9][0-9][0-9]_*.sql")))
        self.assertIn("gapsimd info: store: schema 4 -> %d (migrations %s)"
                      % (latest_migration(), ", ".join(names[4:])), log)
        self.assertEqual(self.d.get("/v1/assemblies/" + self.aid).json()["status"], "ready")
        # the next start has nothing to migrate: no such line
        off = os.path.getsize(self.d.log_path)
        self.d.restart()
        with open(self.d.log_path, "rb") as f:
            f.seek(off)
            self.assertNotIn("store: schema", f.read().decode(errors="replace"))

    def test_low_disk(self):
        self.d.extra = ["--min-free", str(1 << 30)]  # more than any test disk has
        self.d.start()
        hz = self.d.get("/healthz").json()
        self.assertEqual(hz["status"], "degraded")
        self.assertIn("--min-free", hz["reasons"][0])
        self.assertGreaterEqual(hz["disk_free_mb"], 0)
        r = self.d.post("/v1/assemblies/%s/clouds" % self.aid, {"gaps": [[0.5] * 52]})
        self.assertEqual(r.status, 507, r.body[:300])
        self.assertEqual(r.json()["error"]["code"], "insufficient_storage")
        # reads still work
        self.assertEqual(self.d.get("/v1/assemblies/" + self.aid).status, 200)
        self.d.extra = []


if __name__ == "__main__":
    unittest.main()
