"""Hostile and malformed requests the daemon must answer (or cut) on time:

- a client that sends its request headers one byte at a time is cut
  --header-timeout after it connected (a deadline, not an inactivity
  timeout), so such sockets cannot hold --max-connections and make
  /healthz answer 503; a kept-alive connection's next headers are due
  --timeout after the previous answer; a slow body keeps --timeout (an
  inactivity timeout), however long it takes in all;
- a Transfer-Encoding other than "chunked" alone is 400 naming it
  (RFC 9112 6.3), at once rather than never;
- "%2500" is an encoded "%00", not a NUL: the normal answer; a real %00
  is still 400;
- a query parameter given twice is 400 also after 64 others; more than 64
  query parameters are 400 naming "query";
- the options of an .npy cloud upload given without '=' are not ignored:
  422 naming them (an unknown one: unknown option);
- an inline model upload that is no JSON object is 400 bad_format naming
  "body"; a multipart upload with two "model" parts is 400 duplicate.
"""
import json
import time
import unittest

import gsd_harness as h
from api_common import (ApiCase, DaemonCase, npy_bytes, raw_connect, raw_request, read_answer,
                        status_of)

SLOW = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a" * 200 + b"\r\n\r\n"


connect = raw_connect


def closed_by_peer(s):
    """True if the server closed (or reset) s; False if it is still open."""
    s.setblocking(False)
    try:
        return s.recv(65536) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        s.setblocking(True)


def answer(s, timeout=5.0):
    """Read one whole answer from s (until the server closes, or `timeout`)."""
    return read_answer(s, timeout, mark_timeout=True)


def error_of(a):
    return json.loads(a.partition(b"\r\n\r\n")[2].decode())["error"]


class SlowHeaders(DaemonCase):
    """Slowloris: a deadline for the headers."""

    daemon_extra = ["--max-connections", "20", "--header-timeout", "1", "--timeout", "2"]

    def dribble(self, socks, data, until, period=0.3):
        """Send data one byte per period on each socket until `until`
        (monotonic) or every socket is closed; the time each one was seen
        closed (None: still open)."""
        t0 = time.monotonic()
        gone = [None] * len(socks)
        i = 0
        while time.monotonic() < until and None in gone:
            for j, s in enumerate(socks):
                if gone[j] is not None:
                    continue
                if closed_by_peer(s):
                    gone[j] = time.monotonic() - t0
                    continue
                try:
                    s.send(data[i:i + 1])
                except OSError:
                    gone[j] = time.monotonic() - t0
            i = min(i + 1, len(data) - 5)  # never the final blank line
            time.sleep(period)
        return gone

    def test_slow_headers_are_cut(self):
        socks = [connect(self.d) for _ in range(25)]
        try:
            gone = self.dribble(socks, SLOW, time.monotonic() + 3.0)
            self.assertNotIn(None, gone, "sockets still open after 3 s: %s" % gone)
            # cut at the deadline (1 s after the connect), not before it
            self.assertGreaterEqual(min(gone), 0.7, gone)
        finally:
            for s in socks:
                s.close()
        self.assertEqual(self.d.get("/healthz").status, 200)

    def test_next_request_headers_of_a_kept_alive_connection(self):
        s = connect(self.d)
        try:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            s.settimeout(5)
            got = b""
            while b"\r\n\r\n" not in got or not got.rstrip().endswith(b"}"):
                got += s.recv(65536)
            self.assertEqual(status_of(got), 200, got[:200])
            gone = self.dribble([s], SLOW, time.monotonic() + 4.0)
            # --timeout (2 s) after the answer, not for ever
            self.assertIsNotNone(gone[0], "a kept-alive connection dribbling its next "
                                          "headers is never cut")
            self.assertGreaterEqual(gone[0], 1.5, gone)
        finally:
            s.close()

    def test_slow_body_keeps_the_inactivity_timeout(self):
        s = connect(self.d)
        try:
            body = b'{"format": "gapsim-model", ' + b" " * 6  # 2.4 s at 0.3 s a byte
            s.sendall(b"POST /v1/assemblies HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      b"Content-Type: application/json\r\nConnection: close\r\n"
                      b"Content-Length: %d\r\n\r\n" % (len(body) + 1))
            for i in range(0, len(body), 4):
                s.sendall(body[i:i + 4])
                time.sleep(0.3)
            s.sendall(b"}")
            a = answer(s)
            # the body took longer than --header-timeout: still answered
            self.assertIn(status_of(a), (400, 422), a[:300])
        finally:
            s.close()


class Hostile(ApiCase):

    def raw(self, data, timeout=5.0):
        return raw_request(self.d, data, timeout, mark_timeout=True)

    def test_transfer_encoding_other_than_chunked(self):
        for te in (b"gzip, chunked", b"identity", b"gzip", b"chunked, chunked"):
            t0 = time.monotonic()
            a = self.raw(b"POST /v1/assemblies HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         b"Content-Type: application/json\r\nTransfer-Encoding: " + te +
                         b"\r\n\r\n2\r\n{}\r\n0\r\n\r\n")
            self.assertEqual(status_of(a), 400, (te, a[:300]))
            err = error_of(a)
            self.assertEqual((err["code"], err["field"]), ("bad_request", "Transfer-Encoding"), err)
            self.assertLess(time.monotonic() - t0, 3.0)
        # chunked alone is read
        a = self.raw(b"POST /v1/assemblies HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                     b"Connection: close\r\n\r\n1\r\n{\r\n0\r\n\r\n")
        self.assertEqual(status_of(a), 400, a[:300])
        self.assertEqual(error_of(a)["field"], "body", a[:300])

    def test_encoded_percent_00_is_no_nul(self):
        r = self.d.get("/v1/jobs?status=done%2500")
        self.assert_error(r, 422, field="status", code="invalid")
        r = self.d.get("/web/a%2500b")
        self.assert_error(r, 404, code="not_found")
        r = self.d.get("/v1/jobs?status=done%00")  # a real one
        self.assert_error(r, 400, field="status", code="bad_request")
        r = self.d.get("/v1/jobs?x%2500=1&status=done%00")
        self.assert_error(r, 400, field="status", code="bad_request")
        r = self.d.get("/web/a%00b?status=%2500")
        self.assert_error(r, 400, field="path", code="bad_request")

    def test_duplicate_after_many_parameters(self):
        many = "&".join("a%d=1" % i for i in range(64))
        r = self.d.get("/v1/jobs?" + many + "&status=done&status=bogus")
        self.assert_error(r, 400, code="bad_request")
        r = self.d.get("/v1/jobs?" + many + "&status=done")
        self.assert_error(r, 400, field="query", code="bad_request")
        r = self.d.get("/v1/jobs?" + "&".join("a%d=1" % i for i in range(62)) +
                       "&status=done&status=bogus")
        self.assert_error(r, 400, field="status", code="bad_request")
        # 64 parameters are fine where the route takes any (the page's URL
        # state); an API route names the first one it does not take
        self.assertEqual(self.d.get("/?" + many).status, 200)
        self.assert_error(self.d.get("/v1/jobs?" + many), 422, field="a0", code="invalid")

    def test_npy_options_without_value(self):
        body = npy_bytes(self.G[:2])
        for q, field in (("foo", "foo"), ("tol", "tol"), ("gaps_from", "gaps_from"),
                         ("fixed_pairs", "fixed_pairs"), ("label", "label"),
                         ("solver=gi&fasteners", "fasteners"), ("max_iter", "max_iter")):
            r = self.d.post("/v1/assemblies/%s/clouds?%s" % (self.aid, q), body,
                            headers={"Content-Type": "application/x-npy"})
            err = self.assert_error(r, 422, field=field)
            if q == "foo":
                self.assertIn("unknown option", err["message"])

    def test_model_that_is_no_json_object(self):
        for body in (b"{", b"NaN", b"[1]", b"{} x"):
            r = self.d.post("/v1/assemblies", body, headers={"Content-Type": "application/json"})
            self.assert_error(r, 400, field="body", code="bad_format")
        with open(self.model_json, "rb") as f:
            text = f.read()
        ct, mp = h.multipart([("model", None, text), ("model", None, text)])
        r = self.d.post("/v1/assemblies", mp, headers={"Content-Type": ct})
        err = self.assert_error(r, 400, code="duplicate")
        self.assertIn("model", err["message"])


if __name__ == "__main__":
    unittest.main()
