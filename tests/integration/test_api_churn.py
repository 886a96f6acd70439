"""Churn: three client threads for 25 s against a daemon whose memory budget
(--max-loaded-mb 7) holds one of three assemblies at a time, mixing every
endpoint family: solves by every method and formulation (cold and warm),
clouds (JSON gaps, .npy, generated, gaps_from with warm starts; chained or
not), cancelled clouds, results pages, summaries and their CSV / VTK / HTML
exports, gap downloads, listings, and deletes with re-uploads of the same
model. Assemblies are unloaded and loaded again all the time, and requests
race deletes. Every answer must be one a client can act on: a solve or a
cloud result equal to the reference answer (1e-7 mm), or 404 / 409 when its
assembly or job is gone or not ready, or 422 naming warm_start / gaps_from
when the result or job it names went with a deleted assembly (the same
model uploaded again has the same id); never a 5xx; the daemon exits cleanly
with no sanitizer report; at the end, with every assembly deleted, nothing
stays in memory. (Written after stress runs of this kind found solves and
cloud submits answering 500 when a DELETE removed their assembly under them,
and the daemon aborting on the summary of a cloud cancelled before its first
gap.)"""
import random
import threading
import time
import traceback
import unittest

import gsd_harness as h
from api_common import gaps_rows, metric, model, npy_bytes, upload_multipart

SECONDS = 25
PATTERN = {"fastener_fraction": 0.5}
METHODS = [("gi", "relative"), ("gi", "dual"), ("gi", "primal"), ("npm", "dual"),
           ("npm", "relative"), ("ipm", "primal"), ("ipm", "dual"), ("lemke", "dual"),
           ("auto", "default")]
GONE = (404, 409)  # the assembly or job went, or is not ready


class Churn(unittest.TestCase):

    def test_churn(self):
        d = h.Daemon(workers=2, extra=["--max-loaded-mb", "7"]).start()
        try:
            self.run_churn(d)
        finally:
            d.cleanup()

    def run_churn(self, d):
        paths, G, ids, ref = {}, {}, {}, {}
        for kind, scale in (("lap", "0.3"), ("sandwich", "0.3"), ("lap-fine", "0.2")):
            paths[kind], gaps = model(kind, small=False, inline=False, gaps=4,
                                      extra=["--scale", scale, "--no-cond"])
            G[kind] = gaps_rows(gaps)

        def upload(kind):
            r = upload_multipart(d, paths[kind])
            self.assertIn(r.status, (200, 201), r.body[:300])
            aid = r.json()["id"]
            self.assertTrue(d.wait_factors_saved(aid, 60)["factors_saved"])
            return aid

        for kind in paths:
            ids[kind] = upload(kind)
            for i in range(4):  # the reference: the oracle
                r = d.post("/v1/assemblies/%s/solve" % ids[kind],
                           dict(PATTERN, g=G[kind][i], solver="ref"))
                self.assertEqual(r.status, 200, r.body[:300])
                ref[(kind, i)] = r.json()["w"]

        errors, counts, lock = [], {}, threading.Lock()
        # (assembly, result id, life); (assembly, job id, gaps, generated, life): life
        # counts the deletes of that assembly, whose results and jobs go with it
        results, jobs, lives = [], [], {kind: 0 for kind in paths}
        stop = time.time() + SECONDS

        def count(what):
            with lock:
                counts[what] = counts.get(what, 0) + 1

        def acceptable(what, r, allowed=GONE, gone_refs=()):
            """True for a 2xx; a 404 / 409 (allowed) is an answer too, and so is
            a 422 naming one of gone_refs: a reference to a result or job that
            a delete of its assembly removed."""
            if r.status == 422 and r.json()["error"]["field"] in gone_refs:
                return False
            if r.status >= 300 and r.status not in allowed:
                errors.append("%s: %d %s" % (what, r.status, r.body[:300]))
            return r.status < 300

        def check_w(what, w, kind, i):
            if max(abs(a - b) for a, b in zip(w, ref[(kind, i % 4)])) > 1e-7:
                errors.append("%s gap %d: another answer" % (what, i))

        def solve(rnd, kind, aid):
            i = rnd.randrange(4)
            method, form = rnd.choice(METHODS)
            body = dict(PATTERN, g=G[kind][i], solver=method, formulation=form,
                        cache=rnd.random() < 0.5,
                        **{"return": rnd.choice([["w"], ["w", "x"], ["w", "lambda", "kkt"]])})
            with lock:
                life = lives[kind]
                mine = [rid for a, rid, lf in results if a == aid and lf == life]
            if mine and rnd.random() < 0.3:
                body["warm_start"] = rnd.choice(mine)
            r = d.post("/v1/assemblies/%s/solve" % aid, body)
            what = "solve %s %s:%s" % (kind, method, form)
            count("solve")
            if acceptable(what, r, gone_refs=("warm_start",) if lives[kind] != life else ()):
                s = r.json()
                if s["status"] != "optimal":
                    errors.append("%s: %s" % (what, s["status"]))
                check_w(what, s["w"], kind, i)
                with lock:
                    results.append((aid, s["id"], life))
                acceptable("result", d.get("/v1/results/" + s["id"]))

        def cloud(rnd, kind, aid):
            k = rnd.choice([4, 8, 40])
            rows = [G[kind][i % 4] for i in range(k)]
            method, form = rnd.choice(METHODS[:2] + METHODS[3:4] + METHODS[-1:])
            opts = dict(PATTERN, solver=method, formulation=form,
                        chain=rnd.choice(["off", "auto", "on"]))
            with lock:
                life = lives[kind]
                same = [j for j in jobs if j[0] == aid and j[2] == k and j[4] == life]
            how = rnd.random()
            if how < 0.15 and same:
                src = rnd.choice(same)
                body = dict(opts, gaps_from=src[1])
                if rnd.random() < 0.5:
                    body["warm_start"] = src[1]
                rows = None if src[3] else rows
                r = d.post("/v1/assemblies/%s/clouds" % aid, body)
            elif how < 0.3:
                query = "&".join("%s=%s" % kv for kv in opts.items())
                r = d.post("/v1/assemblies/%s/clouds?%s" % (aid, query), npy_bytes(rows),
                           headers={"Content-Type": "application/x-npy"})
            elif how < 0.4:
                rows = None
                r = d.post("/v1/assemblies/%s/clouds" % aid,
                           dict(opts, generate={"count": k, "seed": rnd.randrange(100),
                                                "scatter": 0.1}))
            else:
                r = d.post("/v1/assemblies/%s/clouds" % aid, dict(opts, gaps=rows))
            count("cloud")
            gone = ("gaps_from", "warm_start") if lives[kind] != life else ()  # with its assembly
            if not acceptable("cloud %s" % kind, r, gone_refs=gone):
                return
            jid = r.json()["id"]
            with lock:
                jobs.append((aid, jid, k, rows is None, life))
            if rnd.random() < 0.15:  # cancelled, perhaps before its first gap
                time.sleep(rnd.random() * 0.3)
                acceptable("cancel", d.delete("/v1/jobs/" + jid))
                count("cancel")
                return
            status = None
            while time.time() < stop + 60:
                j = d.get("/v1/jobs/%s?wait=5" % jid, timeout=60)
                if not acceptable("job", j):
                    return  # deleted with its assembly
                status = j.json()["status"]
                if status in ("done", "cancelled", "failed"):
                    break
            if status == "failed":
                errors.append("cloud %s failed: %s" % (kind, j.body[:300]))
            if status != "done":
                return
            res = d.get("/v1/jobs/%s/results?offset=0&limit=%d&fields=w" % (jid, k))
            if acceptable("results", res) and rows is not None:
                for x in res.json()["results"]:
                    check_w("cloud %s %s" % (kind, method), x["w"], kind, x["job_index"])

        def read(rnd, kind, aid):
            with lock:
                mine = [j for j in jobs if j[0] == aid]
            if not mine or rnd.random() < 0.2:
                for path in ("/v1/assemblies/%s/geometry" % aid, "/v1/assemblies/%s/jobs" % aid,
                             "/v1/assemblies", "/v1/jobs"):
                    acceptable(path, d.get(path))
                count("lists")
                return
            _, jid, k, _, _ = rnd.choice(mine)
            path = rnd.choice([
                "/v1/jobs/%s/summary?threshold=%g" % (jid, rnd.choice([0.1, 0.05, 0.2])),
                "/v1/jobs/%s/summary?format=csv&threshold=0.05" % jid,
                "/v1/jobs/%s/summary?format=vtp" % jid,
                "/v1/jobs/%s/summary?format=html&threshold=0.2" % jid,
                "/v1/jobs/%s/results?format=vtp&index=%d" % (jid, rnd.randrange(k)),
                "/v1/jobs/%s/results?offset=%d&limit=3" % (jid, rnd.randrange(k)),
                "/v1/jobs/%s/gaps" % jid])
            acceptable(path, d.get(path, timeout=120))
            count("reads")

        def delete(kind, aid):
            with lock:  # one re-upload at a time
                lives[kind] += 1  # first: a reference may fail as soon as the delete runs
                r = d.delete("/v1/assemblies/" + aid)
                acceptable("delete %s" % kind, r, (404,))
                ids[kind] = upload(kind)
            count("delete")

        def one(rnd):
            kind = rnd.choice(sorted(paths))
            aid = ids[kind]
            op = rnd.random()
            if op < 0.45:
                solve(rnd, kind, aid)
            elif op < 0.65:
                cloud(rnd, kind, aid)
            elif op < 0.97:
                read(rnd, kind, aid)
            else:
                delete(kind, aid)

        def client(seed):
            rnd = random.Random(seed)
            while time.time() < stop:
                try:
                    one(rnd)
                except Exception as e:  # noqa: BLE001 - every failure is reported, with where
                    errors.append("%r in %s" % (e, " < ".join(
                        "%s:%d" % (f.name, f.lineno)
                        for f in reversed(traceback.extract_tb(e.__traceback__)[1:]))))

        threads = [threading.Thread(target=client, args=(s,)) for s in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        unloaded = metric(d, "gapsim_assemblies_unloaded_total")
        print("\n  churn: %s, %d unloads" % (counts, unloaded))
        self.assertEqual(errors, [])
        self.assertGreater(unloaded, 0)
        for what in ("solve", "cloud", "reads", "lists"):
            self.assertGreater(counts.get(what, 0), 0, counts)
        # nothing left behind: with every assembly deleted and no request
        # running, no entry stays in memory (an entry a request made for an
        # assembly deleted under it used to stay, empty or loaded, for good)
        for aid in ids.values():
            self.assertEqual(d.delete("/v1/assemblies/" + aid).status, 204)
        deadline, left = time.time() + 30, None
        while time.time() < deadline:
            left = metric(d, "gapsim_assemblies_in_memory")
            if left == 0:
                break
            time.sleep(0.2)
        self.assertEqual(left, 0)
        self.assertEqual(metric(d, "gapsim_assemblies_bytes"), 0)


if __name__ == "__main__":
    unittest.main()
