"""HTTP transport with the standard library (urllib), and multipart encoding."""
from __future__ import annotations

import json
import os
import ssl
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

from . import npy
from .errors import GapsimError

__all__ = ["FilePart", "Response", "StreamBody", "Transport", "multipart", "query_string"]


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


def query_string(params: Optional[Mapping[str, Any]]) -> str:
    """Encode query parameters; lists become comma lists, None values are dropped."""
    if not params:
        return ""
    items = []
    for key, value in params.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "1" if value else "0"
        elif isinstance(value, (list, tuple)):
            value = ",".join(str(int(v)) for v in value)
        elif isinstance(value, float):
            value = repr(value)
        items.append((key, str(value)))
    return ("?" + urllib.parse.urlencode(items)) if items else ""


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


class Transport:
    """Sends requests to one base URL; raises GapsimError for non-2xx answers."""

    def __init__(self, url: str, timeout: float = 300.0, token: Optional[str] = None,
                 cafile: Optional[str] = None) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.token = token
        # https:// with a private CA or a self-signed gapsimd --tls-cert: trust cafile
        self.context = ssl.create_default_context(cafile=cafile) if cafile else None

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
            try:
                data = json.dumps(body, default=npy.jsonable).encode("utf-8")
            except (TypeError, ValueError) as e:
                raise GapsimError(None, "invalid", "the request body cannot be sent as JSON: %s"
                                  % e, "body") from None
            hdrs.setdefault("Content-Type", "application/json")
        req = urllib.request.Request(self.url + path + query_string(query), data=data,
                                     method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(req, timeout=timeout or self.timeout,
                                        context=self.context) as r:
                return Response(r.status, dict(r.headers), r.read())
        except urllib.error.HTTPError as e:
            raise GapsimError.from_response(e.code, e.read()) from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise GapsimError(None, "connection",
                              "cannot reach %s: %s" % (self.url, reason)) from None


def default_url() -> str:
    """GAPSIM_SERVER from the environment, else http://127.0.0.1:8600."""
    return os.environ.get("GAPSIM_SERVER") or "http://127.0.0.1:8600"
