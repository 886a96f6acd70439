"""Python client (clients/python/gapsim): failures of the connection and of
the answer are GapsimErrors.

A daemon that dies in the middle of an answer, an answer that is not HTTP,
an error page of a proxy, a server URL that cannot be used, a CA file that
cannot be read: every one must raise GapsimError (a ValueError) with a code
of docs/python.md, never an http.client, ssl or OS exception. The answers
come from a small fake HTTP server in this file (a thread and a socket that
answers every request with the bytes a test sets), so each broken answer is
exact and repeatable; no gapsimd is needed. Standard library only.
"""
import os
import socket
import sys
import tempfile
import threading
import unittest

import gsd_harness as h

CLIENT_DIR = os.path.join(h.SOURCE_DIR, "clients", "python")
sys.path.insert(0, CLIENT_DIR)

from gapsim import Client, GapsimError  # noqa: E402


class FakeServer:
    """Answers every request on 127.0.0.1 with ``self.answer`` (bytes), then
    closes the connection: a cut answer is one whose bytes stop early."""

    def __init__(self):
        self.answer = b""
        self.requests = []
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed
            with conn:
                conn.settimeout(10)
                try:
                    data = b""
                    while b"\r\n\r\n" not in data:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                    head, _, body = data.partition(b"\r\n\r\n")
                    length = 0
                    for line in head.split(b"\r\n")[1:]:
                        name, _, value = line.partition(b":")
                        if name.strip().lower() == b"content-length":
                            length = int(value)
                    while len(body) < length:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        body += chunk
                    self.requests.append(head.split(b"\r\n")[0].decode())
                    conn.sendall(self.answer)
                    conn.shutdown(socket.SHUT_WR)
                except OSError:
                    pass

    def close(self):
        self.sock.close()


def response(status_line, headers, body):
    head = status_line + b"\r\n" + b"".join(b"%s: %s\r\n" % kv for kv in headers) + b"\r\n"
    return head + body


class TransportFailures(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fake = FakeServer()

    @classmethod
    def tearDownClass(cls):
        cls.fake.close()

    def fails(self, fn, status, code, field=None):
        with self.assertRaises(GapsimError) as cm:
            fn()
        e = cm.exception
        self.assertEqual((e.status, e.code), (status, code), str(e))
        self.assertIsInstance(e, ValueError)
        if field is not None:
            self.assertEqual(e.field, field, str(e))
        return e

    def test_answer_cut_short(self):
        c = Client(self.fake.url, timeout=10)
        # a JSON answer whose Content-Length promises more than arrives (the
        # daemon killed while it wrote): not http.client.IncompleteRead
        self.fake.answer = response(b"HTTP/1.1 200 OK", [(b"Content-Type", b"application/json"),
                                                          (b"Content-Length", b"100")],
                                    b'{"status": "o')
        e = self.fails(c.health, None, "connection")
        self.assertIn("13 bytes", e.message)
        # a chunked .npy download (GET /v1/jobs/{id}/results) cut in a chunk
        self.fake.answer = response(b"HTTP/1.1 200 OK", [(b"Content-Type", b"application/x-npy"),
                                                          (b"Transfer-Encoding", b"chunked")],
                                    b"1000\r\n\x93NUMPY\x01\x00")
        self.fails(lambda: c.results("j_0123456789abcdef"), None, "connection")
        # the connection closed before any answer (RemoteDisconnected)
        self.fake.answer = b""
        self.fails(lambda: c.assembly("a_0123456789abcdef"), None, "connection")
        # a cut error answer: the 422 never arrives whole
        self.fake.answer = response(b"HTTP/1.1 422 Unprocessable Entity",
                                    [(b"Content-Type", b"application/json"),
                                     (b"Content-Length", b"500")], b'{"error": {"code"')
        self.fails(lambda: c.solve("a_0123456789abcdef", [0.0]), None, "connection")

    def test_answer_not_http(self):
        c = Client(self.fake.url, timeout=10)
        self.fake.answer = b"garbage\r\n\r\n"  # http.client.BadStatusLine
        e = self.fails(c.health, None, "bad_format")
        self.assertIn("BadStatusLine", e.message)
        self.fake.answer = b"HTTP/1.1 200 OK\r\n" + b"X-Long: " + b"a" * 70000 + b"\r\n\r\n"
        self.fails(c.health, None, "bad_format")  # LineTooLong

    def test_error_page_not_json(self):
        c = Client(self.fake.url, timeout=10)
        page = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
        self.fake.answer = response(b"HTTP/1.1 502 Bad Gateway", [
            (b"Content-Type", b"text/html"), (b"Content-Length", b"%d" % len(page))], page)
        e = self.fails(c.assemblies, 502, "bad_format", "")
        self.assertIn("502 Bad Gateway", e.message)
        self.assertIsNone(e.body)
        text = b"Service Unavailable"
        self.fake.answer = response(b"HTTP/1.1 503 Service Unavailable", [
            (b"Content-Type", b"text/plain"), (b"Content-Length", b"%d" % len(text))], text)
        e = self.fails(c.health, 503, "bad_format", "")
        self.assertIn("Service Unavailable", e.message)
        # JSON, but not gapsimd's error document
        doc = b'{"detail": "no route"}'
        self.fake.answer = response(b"HTTP/1.1 404 Not Found", [
            (b"Content-Type", b"application/json"), (b"Content-Length", b"%d" % len(doc))], doc)
        self.fails(c.health, 404, "bad_format")
        # a gapsimd error document: its code and field, as before
        doc = b'{"error": {"code": "not_found", "message": "no such job", "field": "id"}}'
        self.fake.answer = response(b"HTTP/1.1 404 Not Found", [
            (b"Content-Type", b"application/json"), (b"Content-Length", b"%d" % len(doc))], doc)
        self.fails(c.health, 404, "not_found", "id")
        # a success answer that is not JSON
        self.fake.answer = response(b"HTTP/1.1 200 OK", [(b"Content-Length", b"5")], b"hello")
        self.fails(c.health, 200, "bad_format")

    def test_bad_url(self):
        for url in ("http://127.0.0.1:x", "http://127.0.0.1:99999", "127.0.0.1:8600",
                    "ftp://127.0.0.1/", "http://", "http://:8600"):
            self.fails(lambda: Client(url, timeout=5).health(), None, "invalid", "url")
        old = os.environ.get("GAPSIM_SERVER")
        os.environ["GAPSIM_SERVER"] = "http://127.0.0.1:x"
        try:
            self.fails(lambda: Client().health(), None, "invalid", "url")
        finally:
            if old is None:
                os.environ.pop("GAPSIM_SERVER", None)
            else:
                os.environ["GAPSIM_SERVER"] = old

    def test_ca_file(self):
        d = tempfile.mkdtemp(prefix="pyt-ca-", dir=h.TMP)
        missing = os.path.join(d, "nope.pem")
        not_pem = os.path.join(d, "not.pem")
        with open(not_pem, "w") as f:
            f.write("hello\n")
        doc = b'{"status": "ok"}'
        self.fake.answer = response(b"HTTP/1.1 200 OK", [
            (b"Content-Type", b"application/json"), (b"Content-Length", b"%d" % len(doc))], doc)
        old = os.environ.get("GAPSIM_CACERT")
        try:
            # http://: the CA file is not used, not even read
            os.environ["GAPSIM_CACERT"] = missing
            self.assertEqual(Client(self.fake.url, timeout=10).health(), {"status": "ok"})
            os.environ["GAPSIM_CACERT"] = not_pem
            self.assertEqual(Client(self.fake.url, timeout=10).health(), {"status": "ok"})
            os.environ.pop("GAPSIM_CACERT")
            self.assertEqual(Client(self.fake.url, cafile=missing, timeout=10).health(),
                             {"status": "ok"})
            # https://: a file that cannot be read, a file that is not PEM
            https = "https://127.0.0.1:1"
            self.fails(lambda: Client(https, cafile=missing), None, "io_error", missing)
            self.fails(lambda: Client(https, cafile=not_pem), None, "bad_format", not_pem)
            self.fails(lambda: Client(https, cafile=d), None, "io_error", d)  # a directory
            os.environ["GAPSIM_CACERT"] = missing
            e = self.fails(lambda: Client(https), None, "io_error", missing)
            self.assertIn("nope.pem", e.message)
        finally:
            if old is None:
                os.environ.pop("GAPSIM_CACERT", None)
            else:
                os.environ["GAPSIM_CACERT"] = old


if __name__ == "__main__":
    unittest.main()
