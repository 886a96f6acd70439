"""HTTP transport with the standard library (urllib), and multipart encoding."""
from __future__ import annotations

import http.client
import json
import math
import os
import ssl
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

from . import npy
from .errors import GapsimError

__all__ = ["FilePart", "Response", "StreamBody", "Transport", "check_url", "dumps", "multipart",
           "query_string", "query_value", "tls_context"]


class Response:
    """A decoded HTTP answer: status, headers (lower-case keys) and body bytes."""

    def __init__(self, status: int, headers: Mapping[str, str], body: bytes) -> None:
        self.status = status
        self.headers = {k.lower(): v for k, v in headers.items()}
        self.body = body

    def json(self) -> Any:
        """The body as JSON (None for an empty body); GapsimError "bad_format" if it is not."""
        try:
            return json.loads(self.body.decode("utf-8")) if self.body else None
        except (ValueError, UnicodeDecodeError):
            raise GapsimError(self.status, "bad_format", "the answer is not JSON: %.120r"
                              % self.body[:120]) from None


def query_value(key: str, value: Any) -> str:
    """One query parameter's text: a bool is true/false, an int its digits, a
    float its shortest round-trip form (1.7 stays 1.7), a string itself, a list
    (tuple, ndarray) the comma list of its entries; numpy scalars are their
    Python values. Nothing is rounded or converted: a value the daemon cannot
    take is sent as it is and refused there. GapsimError "invalid" (naming key)
    for a non-finite number and for what a query string cannot carry (a dict,
    an object, nested lists)."""
    value = npy.plain(value)
    if isinstance(value, (set, frozenset)):
        value = list(value)
    if isinstance(value, list):
        parts = [npy.plain(v) for v in value]
        if any(isinstance(v, (list, tuple, dict, set, frozenset)) for v in parts):
            raise GapsimError(None, "invalid", "%s: a list of lists cannot be sent in a query "
                              "string" % key, key)
        return ",".join(query_value(key, v) for v in parts)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise GapsimError(None, "invalid", "%s must be a finite number" % key, key)
        return repr(value)
    if isinstance(value, str):
        return value
    raise GapsimError(None, "invalid", "%s: a %s cannot be sent in a query string"
                      % (key, type(value).__name__), key)


def query_string(params: Optional[Mapping[str, Any]]) -> str:
    """Encode query parameters (:func:`query_value`); None values are dropped."""
    if not params:
        return ""
    items = [(key, query_value(key, value)) for key, value in params.items() if value is not None]
    return ("?" + urllib.parse.urlencode(items)) if items else ""


def dumps(doc: Any, what: str = "body") -> bytes:
    """doc as JSON bytes (numpy arrays and scalars as lists and numbers).
    GapsimError "not_finite" naming the first NaN or infinity as the daemon
    names it (``g[3]``, ``gaps[0][3]``): JSON has no such numbers, and a body
    with one would be refused as invalid JSON; "invalid" naming ``what`` for
    what JSON cannot hold."""
    try:
        return json.dumps(doc, default=npy.jsonable, allow_nan=False).encode("utf-8")
    except ValueError:
        path = npy.find_nonfinite(doc)
        if path is None:
            raise GapsimError(None, "invalid", "the %s cannot be sent as JSON" % what,
                              what) from None
        raise GapsimError(None, "not_finite", "%s is not a finite number" % (path or what),
                          path or what) from None
    except (TypeError, RecursionError) as e:
        raise GapsimError(None, "invalid", "the %s cannot be sent as JSON: %s" % (what, e),
                          what) from None


class FilePart:
    """The contents of a file, sent as one multipart part read in chunks
    while the request is written (never held in memory whole). The chunks
    are views of one reused buffer: each is valid until the next is asked
    for (a fresh 1 MiB object per chunk cost twice the reading)."""

    CHUNK = 1 << 20

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            self.size = os.path.getsize(path)
        except OSError as e:
            raise GapsimError(None, "io_error", "cannot read %s: %s" % (path, e.strerror or e),
                              path) from None

    def chunks(self) -> Iterator[Union[bytes, memoryview]]:
        sent = 0
        buf = bytearray(self.CHUNK)
        view = memoryview(buf)
        try:
            with open(self.path, "rb", buffering=0) as f:
                while True:
                    n = f.readinto(buf)
                    if not n:
                        break
                    sent += n
                    yield view[:n]
        except OSError as e:
            raise GapsimError(None, "io_error", "cannot read %s: %s"
                              % (self.path, e.strerror or e), self.path) from None
        if sent != self.size:  # the Content-Length sent would be wrong
            raise GapsimError(None, "io_error", "%s changed while it was sent" % self.path,
                              self.path)


class StreamBody:
    """A request body of known length produced piece by piece (urllib sends
    an iterable body chunk by chunk, with the Content-Length given). A
    piece is valid until the next is asked for: copy it to keep it."""

    def __init__(self, pieces: List[Union[bytes, bytearray, FilePart]]) -> None:
        self.pieces = pieces
        self.length = sum(p.size if isinstance(p, FilePart) else len(p) for p in pieces)

    def __iter__(self) -> Iterator[Union[bytes, bytearray, memoryview]]:
        for p in self.pieces:
            if isinstance(p, FilePart):
                yield from p.chunks()
            else:
                yield p


def multipart(fields: Iterable[Tuple[str, Optional[str], Union[bytes, bytearray, FilePart]]]
              ) -> Tuple[str, StreamBody]:
    """A multipart/form-data body from (name, filename or None, data) fields;
    data is bytes or a FilePart (streamed from its file). Transport.request
    sends the body; b"".join(bytes(c) for c in body) makes it bytes.

    Returns (content type with the boundary, body).
    """
    boundary = ("gapsim-" + uuid.uuid4().hex).encode()
    pieces: List[Union[bytes, bytearray, FilePart]] = []
    for name, filename, data in fields:
        disp = 'form-data; name="%s"' % name
        if filename:
            disp += '; filename="%s"' % filename
        ctype = "application/json" if name == "model" else "application/octet-stream"
        pieces.append(b"--" + boundary + b"\r\n" + ("Content-Disposition: %s\r\nContent-Type: "
                                                   "%s\r\n\r\n" % (disp, ctype)).encode())
        pieces.append(data)
        pieces.append(b"\r\n")
    pieces.append(b"--" + boundary + b"--\r\n")
    return "multipart/form-data; boundary=" + boundary.decode(), StreamBody(pieces)


def check_url(url: str) -> str:
    """The base URL without its trailing slash; GapsimError "invalid" (field
    ``url``) unless it is http:// or https:// with a host and a valid port."""
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # ValueError for a port that is not a number in [0, 65535]
    except ValueError as e:
        raise GapsimError(None, "invalid", "bad server URL %r: %s" % (url, e), "url") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise GapsimError(None, "invalid", "bad server URL %r: expected http://HOST[:PORT] or "
                          "https://HOST[:PORT]" % url, "url")
    return url.rstrip("/")


def tls_context(cafile: str) -> ssl.SSLContext:
    """A TLS context trusting the PEM certificates of cafile. GapsimError
    "io_error" if the file cannot be read, "bad_format" if it holds no PEM
    certificate (field: the path)."""
    try:
        return ssl.create_default_context(cafile=cafile)
    except ssl.SSLError as e:  # before OSError: an SSLError is one
        raise GapsimError(None, "bad_format", "the CA file %s holds no PEM certificate: %s"
                          % (cafile, e.reason or e), cafile) from None
    except OSError as e:
        raise GapsimError(None, "io_error", "cannot read the CA file %s: %s"
                          % (cafile, e.strerror or e), cafile) from None


class Transport:
    """Sends requests to one base URL; raises GapsimError for non-2xx answers
    and for every failure to get a whole HTTP answer."""

    def __init__(self, url: str, timeout: float = 300.0, token: Optional[str] = None,
                 cafile: Optional[str] = None) -> None:
        self.url = check_url(url)
        self.timeout = timeout
        self.token = token
        # https:// with a private CA or a self-signed gapsimd --tls-cert: trust
        # cafile; read only for https (an http:// daemon never uses it)
        https = urllib.parse.urlsplit(self.url).scheme == "https"
        self.context = tls_context(cafile) if cafile and https else None

    def request(self, method: str, path: str, body: Any = None,
                headers: Optional[Dict[str, str]] = None,
                query: Optional[Mapping[str, Any]] = None,
                timeout: Optional[float] = None) -> Response:
        """Send a request. A dict/list body is sent as JSON; bytes as they are; a
        StreamBody piece by piece."""
        hdrs = dict(headers or {})
        if self.token:
            hdrs.setdefault("Authorization", "Bearer " + self.token)
        data: Any
        if isinstance(body, StreamBody):
            data = body
            hdrs["Content-Length"] = str(body.length)
        elif body is None or isinstance(body, (bytes, bytearray)):
            data = bytes(body) if body is not None else None
        else:
            data = dumps(body)
            hdrs.setdefault("Content-Type", "application/json")
        req = urllib.request.Request(self.url + path + query_string(query), data=data,
                                     method=method, headers=hdrs)
        try:
            try:
                with urllib.request.urlopen(req, timeout=timeout or self.timeout,
                                            context=self.context) as r:
                    return Response(r.status, dict(r.headers), r.read())
            except urllib.error.HTTPError as e:
                try:
                    data = e.read()
                finally:
                    e.close()
                raise GapsimError.from_response(e.code, data) from None
        except GapsimError:
            raise
        except (http.client.IncompleteRead, http.client.RemoteDisconnected) as e:
            # the daemon died or hung up in the middle of the answer (before it)
            raise GapsimError(None, "connection", "the connection to %s broke before the whole "
                              "answer arrived: %s" % (self.url, _why(e))) from None
        except http.client.InvalidURL as e:  # what check_url let through (a bad host)
            raise GapsimError(None, "invalid", "cannot send to %s: %s" % (self.url, e),
                              "url") from None
        except http.client.HTTPException as e:  # a status line or header that is not HTTP
            raise GapsimError(None, "bad_format", "%s did not answer with HTTP: %s"
                              % (self.url, _why(e))) from None
        except urllib.error.URLError as e:  # before sending: refused, no route, TLS
            raise GapsimError(None, "connection",
                              "cannot reach %s: %s" % (self.url, e.reason)) from None
        except OSError as e:  # reset or timed out while the answer was awaited or read
            raise GapsimError(None, "connection", "no whole answer from %s: %s"
                              % (self.url, e)) from None
        except ValueError as e:  # urllib's own refusals (a URL it cannot send to)
            raise GapsimError(None, "invalid", "cannot send to %s: %s" % (self.url, e),
                              "url") from None


def _why(e: Exception) -> str:
    """An http.client exception in words (IncompleteRead's repr shows counts)."""
    if isinstance(e, http.client.IncompleteRead):
        got = len(e.partial or b"")
        return "%d bytes of the answer received%s" % (
            got, ", %d more expected" % e.expected if e.expected is not None else "")
    return "%s %s" % (type(e).__name__, str(e)[:120] or "")


def default_url() -> str:
    """GAPSIM_SERVER from the environment, else http://127.0.0.1:8600."""
    return os.environ.get("GAPSIM_SERVER") or "http://127.0.0.1:8600"
