"""Minimal NumPy ``.npy`` (format 1.0/2.0/3.0) codec for float64 arrays.

Works without numpy: :func:`decode` then returns nested lists of floats
(a list for 1-D data, a list of row lists for 2-D data). When numpy is
importable, :func:`decode` returns a ``numpy.ndarray`` and :func:`encode`
accepts any array-like numpy understands. Only little- and big-endian
float64 (and, for input, int32/int64/float32 converted to float) are handled:
that is what gapsimd reads and writes.
"""
from __future__ import annotations

import ast
import struct
from typing import Any, List, Sequence, Tuple, Union

try:  # optional
    import numpy as _np  # type: ignore
except ImportError:  # pragma: no cover - depends on the machine
    _np = None

__all__ = ["HAVE_NUMPY", "encode", "decode", "as_rows", "shape_of", "jsonable", "arrays"]

HAVE_NUMPY = _np is not None
MAGIC = b"\x93NUMPY"

_FMT = {"f8": "d", "f4": "f", "i8": "q", "i4": "i", "u1": "B", "i1": "b"}


def jsonable(x: Any) -> Any:
    """json.dumps default=: numpy arrays and scalars as lists and numbers."""
    if _np is not None:
        if isinstance(x, _np.ndarray):
            return x.tolist()
        if isinstance(x, _np.generic):
            return x.item()
    raise TypeError("%s is not JSON serializable" % type(x).__name__)


def arrays(doc: Any, keys: Sequence[str]) -> Any:
    """With numpy: the lists doc[key] (for the keys present) as float ndarrays
    (int arrays for lists of ints); doc itself otherwise. In place; returns doc."""
    if _np is None or not isinstance(doc, dict):
        return doc
    for k in keys:
        v = doc.get(k)
        if isinstance(v, list):
            ints = bool(v) and all(isinstance(e, int) and not isinstance(e, bool) for e in v)
            doc[k] = _np.asarray(v, dtype=_np.int64 if ints else float)
    return doc


def is_ndarray(x: Any) -> bool:
    """True if x is a numpy array (False when numpy is absent)."""
    return _np is not None and isinstance(x, _np.ndarray)


def as_rows(data: Any) -> List[List[float]]:
    """A 2-D list of floats from a list of rows, one row, or an ndarray.

    A flat sequence of numbers is one row. Raises ValueError for ragged input.
    """
    if is_ndarray(data):
        arr = _np.asarray(data, dtype=float)
        if arr.ndim == 1:
            arr = arr.reshape(1, -1)
        if arr.ndim != 2:
            raise ValueError("expected a 1-D or 2-D array, got %d-D" % arr.ndim)
        return arr.tolist()
    rows = list(data)
    if rows and not isinstance(rows[0], (list, tuple)) and not is_ndarray(rows[0]):
        rows = [rows]
    out = [[float(v) for v in r] for r in rows]
    if out and any(len(r) != len(out[0]) for r in out):
        raise ValueError("rows of different lengths")
    return out


def shape_of(data: Any) -> Tuple[int, ...]:
    """Shape of an ndarray or of nested lists (1-D or 2-D)."""
    if is_ndarray(data):
        return tuple(data.shape)
    if data and isinstance(data[0], (list, tuple)):
        return (len(data), len(data[0]))
    return (len(data),)


def _header(shape: Sequence[int]) -> bytes:
    dims = ", ".join(str(int(s)) for s in shape) + ("," if len(shape) == 1 else "")
    text = "{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }" % dims
    pad = 64 - (10 + len(text) + 1) % 64
    text = text + " " * (pad % 64) + "\n"
    return MAGIC + b"\x01\x00" + struct.pack("<H", len(text)) + text.encode("latin1")


def encode(data: Any) -> bytes:
    """Encode an array (ndarray, list of rows or flat list) as C-order float64 .npy."""
    if is_ndarray(data):
        arr = _np.ascontiguousarray(data, dtype="<f8")
        return _header(arr.shape) + arr.tobytes()
    shape = shape_of(data)
    flat = [float(v) for row in data for v in row] if len(shape) == 2 else [float(v) for v in data]
    if len(shape) == 2 and len(flat) != shape[0] * shape[1]:
        raise ValueError("rows of different lengths")
    return _header(shape) + struct.pack("<%dd" % len(flat), *flat)


def parse_header(data: bytes) -> Tuple[dict, int]:
    """Parse the header of an .npy buffer: (header dict, data offset)."""
    if data[:6] != MAGIC or len(data) < 10:
        raise ValueError("not an .npy file")
    major = data[6]
    if major == 1:
        (hlen,) = struct.unpack("<H", data[8:10])
        start = 10
    elif major in (2, 3):
        (hlen,) = struct.unpack("<I", data[8:12])
        start = 12
    else:
        raise ValueError("unsupported .npy version %d" % major)
    head = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    if not isinstance(head, dict) or not {"descr", "fortran_order", "shape"} <= set(head):
        raise ValueError("malformed .npy header")
    return head, start + hlen


def decode(data: bytes) -> Union["Any", List[float], List[List[float]]]:
    """Decode an .npy buffer: an ndarray with numpy, else (nested) lists of floats."""
    head, off = parse_header(data)
    shape = tuple(int(s) for s in head["shape"])
    if _np is not None:
        arr = _np.frombuffer(data, dtype=_np.dtype(head["descr"]), offset=off,
                             count=_prod(shape))
        arr = arr.reshape(shape, order="F" if head["fortran_order"] else "C")
        return arr.astype(float)
    descr = head["descr"]
    order = {"<": "<", ">": ">", "|": "<", "=": "<"}[descr[0]]
    code = _FMT.get(descr[1:])
    if code is None:
        raise ValueError("unsupported dtype %s without numpy" % descr)
    count = _prod(shape)
    size = struct.calcsize(code)
    if len(data) < off + count * size:
        raise ValueError("truncated .npy data")
    flat = [float(v) for v in struct.unpack("%s%d%s" % (order, count, code),
                                            data[off:off + count * size])]
    if len(shape) == 0:
        return flat
    if len(shape) == 1:
        return flat
    if len(shape) != 2:
        raise ValueError("only 1-D and 2-D arrays are supported without numpy")
    k, m = shape
    if head["fortran_order"]:
        return [[flat[j * k + i] for j in range(m)] for i in range(k)]
    return [flat[i * m:(i + 1) * m] for i in range(k)]


def _prod(shape: Sequence[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n

