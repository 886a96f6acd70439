"""HTTPS (gapsimd --tls-cert / --tls-key, libmicrohttpd with GnuTLS).

A self-signed certificate for 127.0.0.1 made with openssl (Debian's openssl
package; the test fails, not skips, without it). Checks:
- the daemon says https:// and serves the API and the page over TLS to a
  client that trusts the certificate; an upload and a solve work end to end;
- a client that does not trust it gets a certificate error, plain HTTP to
  the port gets no answer;
- the CLI (--cacert, $GAPSIM_CACERT) and the Python client (cafile=,
  $GAPSIM_CACERT) reach it; without the certificate they report it;
- bad options are refused at start: --tls-cert without --tls-key, a file
  that is not PEM, a key that does not match the certificate.
"""
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import unittest
import urllib.request

import gsd_harness as h
from api_common import DaemonCase

sys.path.insert(0, os.path.join(h.SOURCE_DIR, "clients", "python"))
from gapsim import Client, GapsimError  # noqa: E402


def make_cert(d, name):
    key, cert = os.path.join(d, name + ".key"), os.path.join(d, name + ".pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return cert, key


class TlsTest(DaemonCase):
    @classmethod
    def setUpClass(cls):
        if not shutil.which("openssl"):
            raise RuntimeError("test_api_tls needs the openssl command (Debian package openssl)")
        os.makedirs(h.TMP, exist_ok=True)
        cls.dir = tempfile.mkdtemp(prefix="tls-", dir=h.TMP)
        cls.cert, cls.key = make_cert(cls.dir, "a")
        super().setUpClass()

    @classmethod
    def daemon_options(cls):
        return {"extra": ["--tls-cert", cls.cert, "--tls-key", cls.key,
                          "--web-dir", os.path.join(h.SOURCE_DIR, "clients", "web")],
                "cafile": cls.cert}

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            shutil.rmtree(cls.dir, ignore_errors=True)

    def test_api_over_tls(self):
        self.assertTrue(self.d.url.startswith("https://127.0.0.1:"), self.d.url)
        r = self.d.get("/healthz")
        self.assertEqual((r.status, r.json()["status"]), (200, "ok"))
        self.assertIn(b"<html", self.d.get("/").body)
        model, gaps = h.gen_model(self.dir, kind="lap", small=True, inline=True, gaps=2)
        with open(model, "rb") as f:
            r = self.d.post("/v1/assemblies?wait=1", f.read(), headers={"Content-Type": "application/json"})
        self.assertEqual(r.status, 201, r.body[:300])
        aid = r.json()["id"]
        shape, flat = h.read_npy(gaps)
        r = self.d.post("/v1/assemblies/%s/solve" % aid, {"g": flat[:shape[1]], "return": ["kkt"]})
        self.assertEqual((r.status, r.json()["status"]), (200, "optimal"))

    def test_untrusted_and_plain_clients_fail(self):
        with self.assertRaises(urllib.error.URLError) as cm:
            urllib.request.urlopen(self.d.url + "/healthz", timeout=10)
        self.assertIsInstance(cm.exception.reason, ssl.SSLCertVerificationError)
        plain = "http://" + self.d.url[len("https://"):]
        with self.assertRaises((urllib.error.URLError, ConnectionError, socket.timeout, OSError)):
            urllib.request.urlopen(plain + "/healthz", timeout=5).read()
        # the daemon still serves after both
        self.assertEqual(self.d.get("/healthz").status, 200)

    def test_cli_and_python_client(self):
        cli = h.binary("gapsim")
        env = dict(os.environ)
        env.pop("GAPSIM_CACERT", None)
        p = subprocess.run([cli, "--server", self.d.url, "--cacert", self.cert, "--json", "health"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(b'"status":"ok"', p.stdout)
        p = subprocess.run([cli, "--server", self.d.url, "health"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=env, timeout=60)
        self.assertEqual(p.returncode, 3)  # cannot connect
        self.assertIn(b"certificate", p.stderr)
        p = subprocess.run([cli, "--server", self.d.url, "health"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=dict(env, GAPSIM_CACERT=self.cert), timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(Client(self.d.url, cafile=self.cert).health()["status"], "ok")
        with self.assertRaises(GapsimError) as cm:
            Client(self.d.url).health()
        self.assertIn("certificate", str(cm.exception))

    def test_bad_tls_options_refused_at_start(self):
        other_cert, other_key = make_cert(self.dir, "b")
        not_pem = os.path.join(self.dir, "not.pem")
        with open(not_pem, "w") as f:
            f.write("hello\n")
        for extra, words in ((["--tls-cert", self.cert], b"go together"),
                             (["--tls-cert", not_pem, "--tls-key", self.key], b"not a PEM certificate"),
                             (["--tls-cert", self.cert, "--tls-key", not_pem], b"not a PEM private key"),
                             (["--tls-cert", self.cert, "--tls-key", other_key], b"does not match"),
                             (["--tls-cert", os.path.join(self.dir, "absent.pem"), "--tls-key", self.key],
                              b"absent.pem")):
            p = subprocess.run([h.binary("gapsimd"), "--port", "0", "--data-dir",
                                os.path.join(self.dir, "refused")] + extra,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
            self.assertIn(p.returncode, (1, 2), (extra, p.stderr))
            self.assertIn(words, p.stderr, extra)
        self.assertTrue(os.path.exists(other_cert))


if __name__ == "__main__":
    unittest.main()
