"""Errors raised by the gapsim client.

Every non-2xx answer of gapsimd carries ``{"error": {"code", "message",
"field"}}``; :class:`GapsimError` holds those, plus the HTTP status.
An error answer that is not gapsimd's JSON error (a proxy's HTML page) keeps
its status, with code ``"bad_format"``; so does a 2xx answer that is not the
JSON or .npy expected. Failures on the client side are GapsimErrors too, with
``status=None``: ``"connection"`` (server not reachable, timeout of a request,
connection broken before the whole answer arrived), ``"bad_format"`` (an
answer that is not HTTP, a model file that is not JSON, a CA file that is not
PEM), ``"io_error"`` (a local file cannot be read or written), ``"invalid"``
(a bad argument or option, the server URL), ``"not_finite"`` (NaN or infinity
in gaps or a model: field as the daemon names it, ``g[3]``, ``gaps[0][3]``),
``"out_of_range"`` (an index list entry that is not a number),
``"timeout"`` (waiting for an assembly or a job), ``"job_failed"``.
GapsimError is a ValueError, so code that caught ValueError still does.
"""
from __future__ import annotations

import json
from typing import Any, Dict, Optional

__all__ = ["GapsimError"]


class GapsimError(ValueError):
    """An error answer of the daemon, or a failure to reach it.

    Attributes:
        status: HTTP status (e.g. 404, 422), or None when no answer came.
        code: the daemon's error code ("not_found", "invalid", "dimension_mismatch", ...).
        message: human-readable explanation.
        field: the offending request field ("g", "fasteners[3]", "id", ...),
            "" when the error is not about one field.
        body: the decoded error document (dict), when there was one.
    """

    def __init__(self, status: Optional[int], code: str, message: str, field: str = "",
                 body: Optional[Dict[str, Any]] = None) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.field = field or ""
        self.body = body
        where = " (field %s)" % self.field if self.field else ""
        prefix = "HTTP %d " % status if status is not None else ""
        super().__init__("%s%s: %s%s" % (prefix, code, message, where))

    @classmethod
    def from_response(cls, status: int, data: bytes) -> "GapsimError":
        """Build the exception from an error response body (JSON or not)."""
        try:
            doc = json.loads(data.decode("utf-8"))
            err = doc.get("error") if isinstance(doc, dict) else None
        except (ValueError, UnicodeDecodeError):
            doc, err = None, None
        if isinstance(err, dict):
            return cls(status, str(err.get("code") or "error"), str(err.get("message") or ""),
                       str(err.get("field") or ""), doc)
        # not gapsimd's error document (a proxy's 502 page, a text 503): the
        # status stays, the code says the answer is not the daemon's JSON
        text = data[:200].decode("utf-8", "replace").strip()
        return cls(status, "bad_format", "HTTP status %d, not a gapsimd error answer: %s"
                   % (status, text or "(empty body)"), "", None)
