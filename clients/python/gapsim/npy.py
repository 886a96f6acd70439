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
import math
import struct
from typing import Any, List, Mapping, Optional, Sequence, Tuple, Union

try:  # optional
    import numpy as _np  # type: ignore
except ImportError:  # pragma: no cover - depends on the machine
    _np = None

__all__ = ["HAVE_NUMPY", "encode", "decode", "as_rows", "as_cloud", "first_nonfinite",
           "shape_of", "jsonable", "plain", "find_nonfinite", "arrays"]

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


def plain(x: Any) -> Any:
    """A numpy scalar as the Python number (bool, int, float, str) it holds, an
    ndarray or a tuple as a list (elements converted too); x itself otherwise."""
    if _np is not None:
        if isinstance(x, _np.ndarray):
            return x.tolist()
        if isinstance(x, _np.generic):
            return x.item()
    if isinstance(x, tuple):
        return [plain(v) for v in x]
    return x


def find_nonfinite(doc: Any, path: str = "") -> Any:
    """The JSON path (``g[3]``, ``gaps[0][3]``, ``parts[0].K[2][5]``) of the first
    NaN or infinity in doc (dicts, lists, tuples, numbers, ndarrays), or None."""
    if isinstance(doc, float):
        return None if math.isfinite(doc) else path
    if _np is not None:
        if isinstance(doc, _np.ndarray):
            if doc.dtype.kind in "fc":
                bad = ~_np.isfinite(doc)
                if bad.any():
                    return path + "".join("[%d]" % i for i in _np.argwhere(bad)[0])
                return None
            if doc.dtype.kind != "O":
                return None
            doc = doc.tolist()
        elif isinstance(doc, _np.generic):
            return find_nonfinite(doc.item(), path)
    if isinstance(doc, dict):
        for k, v in doc.items():
            p = find_nonfinite(v, "%s.%s" % (path, k) if path else str(k))
            if p is not None:
                return p
    elif isinstance(doc, (list, tuple)):
        for i, v in enumerate(doc):
            p = find_nonfinite(v, "%s[%d]" % (path, i))
            if p is not None:
                return p
    return None


FLOAT, INT = "float", "int"


def arrays(doc: Any, types: Mapping[str, str]) -> Any:
    """The lists doc[key] of the keys present, typed by the key (``types``:
    key -> FLOAT or INT), never by their values: with numpy, float64 or int64
    ndarrays (an empty list or one of whole numbers too; a JSON null, a
    non-finite number, is NaN); without numpy, lists of Python floats or
    ints. In place; returns doc (anything but a dict: unchanged)."""
    if not isinstance(doc, dict):
        return doc
    for k, kind in types.items():
        v = doc.get(k)
        if not isinstance(v, list):
            continue
        if _np is not None:
            doc[k] = _np.asarray(v, dtype=_np.int64 if kind == INT else _np.float64)
        elif kind == INT:
            doc[k] = [int(e) for e in v]
        else:
            doc[k] = [math.nan if e is None else float(e) for e in v]
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


def as_cloud(data: Any) -> Any:
    """A k x m cloud of gap vectors: a 2-D float64 ndarray for an ndarray (numpy
    installed), else a list of row lists of floats (:func:`as_rows`). One flat
    row (1-D) is a cloud of one: 1 x m. Raises ValueError (or TypeError) for
    ragged or non-numeric input or more than two dimensions."""
    if is_ndarray(data):
        arr = _np.asarray(data, dtype=_np.float64)
        if arr.ndim == 1:
            arr = arr.reshape(1, -1)
        if arr.ndim != 2:
            raise ValueError("expected a 1-D or 2-D array, got %d-D" % arr.ndim)
        return arr
    return as_rows(data)


def first_nonfinite(rows: Any) -> Optional[Tuple[int, int]]:
    """(i, j) of the first NaN or infinity of a k x m cloud (ndarray or row lists), or None."""
    if is_ndarray(rows):
        bad = ~_np.isfinite(rows)
        if not bad.any():
            return None
        i, j = _np.argwhere(bad)[0]
        return int(i), int(j)
    for i, row in enumerate(rows):
        for j, v in enumerate(row):
            if not math.isfinite(v):
                return i, j
    return None


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

