"""The gapsimd client: assemblies, single solves, gap clouds (jobs).

Example::

    from gapsim import Client
    c = Client()                                   # $GAPSIM_SERVER or http://127.0.0.1:8600
    a = c.upload_assembly("data/demo/lap.json")    # multipart with its .npy files
    r = c.solve(a, g, fasteners="all")             # one gap vector -> result dict
    job = c.submit_cloud(a, gaps, fastener_fraction=0.5)
    job.wait(progress=True)                        # progress line on stderr
    s = c.summary(job)["max_residual"]["p95"]
    w = c.results(job)                             # k x m residual gaps (.npy)
"""
from __future__ import annotations

import json
import math
import os
import sys
import time
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

from . import npy
from .errors import GapsimError
from .transport import FilePart, Transport, default_url, dumps, multipart

__all__ = ["Client", "Job", "AssemblyRef", "JobRef"]

AssemblyRef = Union[str, Dict[str, Any]]
"""An assembly id ("a_...") or an assembly dict as returned by the client."""
JobRef = Union[str, "Job", Dict[str, Any]]
"""A job id ("j_..."), a Job, or a job dict."""

TERMINAL = ("done", "failed", "cancelled")


def _id(ref: Any, what: str) -> str:
    if isinstance(ref, Job):
        return ref.id
    if isinstance(ref, dict):
        ref = ref.get("id")
    if not isinstance(ref, str) or not ref:
        raise GapsimError(None, "invalid", "expected %s id or object, got %r" % (what, ref), what)
    return ref


# The arrays of the daemon's documents and their types (ndarrays of that dtype
# when numpy is present, lists of that Python type otherwise): by the field,
# never guessed from the values (an all-zero w is still float, an empty
# contact list still int).
F, I = npy.FLOAT, npy.INT
RESULT_ARRAYS = {"w": F, "lambda": F, "x": F, "contact": I}
PAIR_ARRAYS = {"mean": F, "std": F, "max": F, "p95": F, "share_above": F, "lambda_mean": F,
               "opened": F}
GEOMETRY_PAIR_ARRAYS = {"x": F, "y": F, "z": F, "fixed": I, "part_i": I, "part_j": I}
GEOMETRY_FASTENER_ARRAYS = {"pair": I, "load": F}


def _result_arrays(doc: Any) -> Any:
    return npy.arrays(doc, RESULT_ARRAYS)


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise GapsimError(None, "io_error", "cannot read %s: %s" % (path, e.strerror or e),
                          path) from None


# Request options by the type the daemon reads (docs/api.md, "Solve options").
NUMBER_OPTIONS = ("tol", "max_iter", "timeout_s", "fastener_fraction")
STRING_OPTIONS = ("solver", "formulation", "npm_linear", "linesearch", "ipm_linear",
                  "ipm_start", "chain", "label", "warm_start")
INDEX_OPTIONS = ("fasteners", "fixed_pairs")


def _is_number(v: Any) -> bool:
    """A JSON number: an int or a finite float (not a bool)."""
    if isinstance(v, bool):
        return False
    return isinstance(v, int) or (isinstance(v, float) and math.isfinite(v))


def _options(options: Dict[str, Any]) -> Dict[str, Any]:
    """The request options as the JSON values the daemon reads, the same for a
    JSON body and for the query string of an ``.npy`` upload
    (transport.query_value), so that both encodings mean the same.

    Values are never changed: numpy scalars become the Python number they
    hold, tuples, sets (sorted) and ndarrays lists, a Job or dict warm start
    its id; a non-integer index (``fasteners=[1.7]``) is sent as it is and the
    daemon refuses it (422 ``out_of_range``). What a query string could not
    tell apart from another value (``label=5`` would arrive as the string
    "5", ``fasteners="0,3"`` as a list) is refused here, on either encoding,
    with the daemon's code and field: GapsimError ``status=None``.
    None values are dropped.
    """
    out: Dict[str, Any] = {}
    for key, value in options.items():
        value = npy.plain(value)
        if value is None:
            continue
        if isinstance(value, (set, frozenset)):
            try:
                value = sorted(value)
            except TypeError:
                value = list(value)
        if isinstance(value, list):
            value = [npy.plain(v) for v in value]
        if key == "warm_start" and isinstance(value, (Job, dict)):
            value = _id(value, "job or result")
        if key in NUMBER_OPTIONS and not _is_number(value):
            raise GapsimError(None, "invalid", "%s must be a finite number" % key, key)
        if key in STRING_OPTIONS and not isinstance(value, str):
            raise GapsimError(None, "invalid", "%s must be a string" % key, key)
        if key == "cache" and not isinstance(value, bool):
            raise GapsimError(None, "invalid", "cache must be true or false", key)
        if key in INDEX_OPTIONS:
            if key == "fasteners" and isinstance(value, str):
                if value not in ("all", "none"):
                    raise GapsimError(None, "invalid", 'fasteners must be "all", "none" or an '
                                      "array of candidate indices", key)
            elif not isinstance(value, list):
                raise GapsimError(None, "invalid", "%s must be an array of indices" % key, key)
            else:
                for i, v in enumerate(value):
                    if not _is_number(v):
                        field = "%s[%d]" % (key, i)
                        raise GapsimError(None, "out_of_range", "%s must be an integer (an "
                                          "index), not %r" % (field, v), field)
        out[key] = value
    return out


def _ref_file(v: Any) -> Optional[str]:
    """The file a model field names: "name" or {"file": "name", "format": ...}."""
    if isinstance(v, dict):
        v = v.get("file")
    return v if isinstance(v, str) else None


def _model_refs(model: Dict[str, Any]) -> List[str]:
    """File names a model JSON references (parts[b].K and f: a name, or an
    object with "file")."""
    refs = [_ref_file(p.get("K")) for p in model.get("parts") or [] if isinstance(p, dict)]
    refs.append(_ref_file(model.get("f")))
    seen: List[str] = []
    for r in refs:
        if r is not None and r not in seen:
            seen.append(r)
    return seen


class Client:
    """A connection to one gapsimd.

    Args:
        url: base URL; default ``$GAPSIM_SERVER`` or ``http://127.0.0.1:8600``.
        timeout: seconds per HTTP request (a synchronous upload includes the
            precomputation, so keep this generous).
        token: bearer token for a daemon started with ``--token-file``;
            default ``$GAPSIM_TOKEN`` (none if unset).
        cafile: PEM certificate(s) to trust for an ``https://`` daemon
            (``gapsimd --tls-cert`` with a self-signed or private-CA
            certificate); default ``$GAPSIM_CACERT``, else the system's CAs.

    Every method raises :class:`GapsimError` for an error answer, and for
    every other failure: no answer or one cut short, an answer that is not
    HTTP, a bad argument, a file that cannot be read. The constructor raises
    it for a URL that is not http(s)://HOST[:PORT] and, for an https:// URL,
    a CA file that cannot be read or is not PEM (it is not read for http://).
    """

    def __init__(self, url: Optional[str] = None, timeout: float = 300.0,
                 token: Optional[str] = None, cafile: Optional[str] = None) -> None:
        self.url = (url or default_url()).rstrip("/")
        self.http = Transport(self.url, timeout, token or os.environ.get("GAPSIM_TOKEN"),
                              cafile or os.environ.get("GAPSIM_CACERT") or None)

    def __repr__(self) -> str:
        return "Client(%r)" % self.url

    # ---- service ------------------------------------------------------------------
    def health(self) -> Dict[str, Any]:
        """GET /healthz."""
        return self.http.request("GET", "/healthz").json()

    # ---- assemblies ---------------------------------------------------------------
    def upload_assembly(self, model: Union[str, os.PathLike, Dict[str, Any]], wait: bool = True,
                        base_dir: Optional[str] = None) -> Dict[str, Any]:
        """Upload a model and return its assembly (dict with "id", "status", "n", "m", ...).

        Args:
            model: path of a model JSON, or the model as a dict. A model that
                references files (``"K": "lap.part0.npy"`` or ``"K": {"file":
                "k.pch", "format": "nastran-dmig"}``) is sent as
                multipart/form-data with one part per referenced file, read
                from the model's directory (or ``base_dir`` for a dict). A fully
                inline model is sent as application/json.
            wait: True: the call returns when the precomputation is done
                (status "ready"; a model that fails it raises GapsimError 422).
                False: returns at once (status "queued"/"precomputing"); see
                :meth:`wait_assembly`.
            base_dir: directory of the referenced files for a dict model.

        Uploading the same content again returns the existing assembly.
        """
        query = {"wait": 1} if wait else None
        if isinstance(model, dict):  # numpy arrays (blocks, f, coordinates) are fine
            raw = dumps(model, "model")  # NaN/Inf: not_finite naming it (parts[0].K[3][4])
            doc = model
            base = base_dir or "."
        elif not isinstance(model, (str, os.PathLike)):
            raise GapsimError(None, "invalid", "model must be the path of a model JSON or the "
                              "model as a dict, not %s" % type(model).__name__, "model")
        else:
            path = os.fspath(model)
            raw = _read(path)
            try:
                doc = json.loads(raw.decode("utf-8"))
            except (ValueError, UnicodeDecodeError) as e:
                raise GapsimError(None, "bad_format", "%s is not a JSON model: %s" % (path, e),
                                  path) from None
            base = base_dir or os.path.dirname(os.path.abspath(path))
        refs = _model_refs(doc) if isinstance(doc, dict) else []
        if not refs:
            r = self.http.request("POST", "/v1/assemblies", raw,
                                  {"Content-Type": "application/json"}, query)
        else:
            fields: list = [("model", "model.json", raw)]
            for ref in refs:  # streamed from the file while the request is written
                fields.append(("file", os.path.basename(ref), FilePart(os.path.join(base, ref))))
            ctype, body = multipart(fields)
            r = self.http.request("POST", "/v1/assemblies", body, {"Content-Type": ctype}, query)
        asm = r.json()
        # the same content uploaded before answers with the existing assembly, which may
        # still be precomputing (another upload) or have failed: honour wait=True for it too
        if wait and asm.get("status") != "ready":
            asm = self.wait_assembly(asm)
        return asm

    def wait_assembly(self, assembly: AssemblyRef, timeout: float = 600.0,
                      poll: float = 0.2) -> Dict[str, Any]:
        """Poll until the assembly is "ready" (returned) or "failed" (GapsimError).

        The first poll is after 20 ms, each next one 1.5 times later, at most
        ``poll`` seconds apart: a precomputation of a fraction of a second is
        seen done within a few tens of ms, a long one costs a poll per ``poll``.
        (``upload_assembly(wait=True)`` needs no polling: the daemon answers
        when the precomputation ends.)"""
        aid = _id(assembly, "assembly")
        deadline = time.time() + timeout
        delay = min(0.02, poll)
        while True:
            a = self.assembly(aid)
            if a["status"] == "ready":
                return a
            if a["status"] == "failed":
                err = a.get("error") or {}
                raise GapsimError(422, err.get("code", "failed"), err.get("message", ""),
                                  err.get("field", ""), a)
            if time.time() > deadline:  # worded as Job.wait's: the timeout as passed
                raise GapsimError(None, "timeout", "assembly %s not done after %g s (still %s)"
                                  % (aid, timeout, a["status"]))
            time.sleep(delay)
            delay = min(poll, delay * 1.5)

    def assemblies(self) -> List[Dict[str, Any]]:
        """All assemblies (GET /v1/assemblies)."""
        return self.http.request("GET", "/v1/assemblies").json()["assemblies"]

    def assembly(self, assembly: AssemblyRef) -> Dict[str, Any]:
        """One assembly by id (GET /v1/assemblies/{id})."""
        return self.http.request("GET", "/v1/assemblies/" + _id(assembly, "assembly")).json()

    def delete_assembly(self, assembly: AssemblyRef) -> None:
        """Delete an assembly, its factors, jobs and results."""
        self.http.request("DELETE", "/v1/assemblies/" + _id(assembly, "assembly"))

    def geometry(self, assembly: AssemblyRef) -> Dict[str, Any]:
        """Pair coordinates (mm), fixed flags, fastener candidates (pair, load) and the box.

        With numpy, ``pairs`` x/y/z/fixed/part_i/part_j and ``fasteners``
        pair/load are ndarrays."""
        g = self.http.request("GET", "/v1/assemblies/%s/geometry"
                              % _id(assembly, "assembly")).json()
        npy.arrays(g.get("pairs"), GEOMETRY_PAIR_ARRAYS)
        npy.arrays(g.get("fasteners"), GEOMETRY_FASTENER_ARRAYS)
        return g

    # ---- single solves ------------------------------------------------------------
    def solve(self, assembly: AssemblyRef, g: Any, **options: Any) -> Dict[str, Any]:
        """Solve one gap vector (POST /v1/assemblies/{id}/solve).

        Args:
            assembly: id or assembly dict.
            g: the m initial gaps in mm (list or 1-D ndarray).
            **options: solver, formulation, tol, max_iter, fasteners ("all",
                "none" or candidate indices), fastener_fraction, fixed_pairs,
                warm_start (a result id "r_..." or result dict), return
                (list of "w", "lambda", "x", "kkt"), cache (False: solve
                even when the result cache has the answer), and the solver
                tunables.

        Returns:
            The result dict as the daemon sends it: "id", "status", "w",
            "lambda", "contact", "n_act", "iterations", "time_ms", "cached",
            "warm_start_used", "crossover", "max_residual", "kkt", ...; the
            vectors w, lambda, x (float) and contact (int) as ndarrays with
            numpy, else lists.

        A NaN or infinite gap raises GapsimError "not_finite" naming it
        (``g[3]``) before anything is sent.
        """
        body = _options(options)
        try:
            body["g"] = [float(v) for v in (g.tolist() if npy.is_ndarray(g) else g)]
        except (TypeError, ValueError) as e:
            raise GapsimError(None, "invalid", "g must be m numbers (mm): %s" % e, "g") from None
        for j, v in enumerate(body["g"]):
            if not math.isfinite(v):
                raise GapsimError(None, "not_finite", "g[%d] is not a finite number" % j,
                                  "g[%d]" % j)
        return _result_arrays(self.http.request(
            "POST", "/v1/assemblies/%s/solve" % _id(assembly, "assembly"), body).json())

    def result(self, result: Union[str, Dict[str, Any]]) -> Dict[str, Any]:
        """A stored result by id (GET /v1/results/{id}), with w and lambda."""
        return _result_arrays(self.http.request("GET", "/v1/results/" + _id(result, "result")).json())

    # ---- clouds (jobs) ------------------------------------------------------------
    def submit_cloud(self, assembly: AssemblyRef, gaps: Any, encoding: str = "npy",
                     **options: Any) -> "Job":
        """Submit a cloud of gap vectors; returns a :class:`Job` (status "queued").

        Args:
            assembly: id or assembly dict.
            gaps: k x m gaps in mm: a 2-D ndarray, a list of rows, or one row
                (a cloud of one, sent as 1 x m); or
                a previous job of the assembly (Job or "j_..."): the cloud solves
                that job's gaps again (sent as ``gaps_from``, nothing uploaded), as
                an optimization loop does for each new fastener pattern.
            encoding: "npy" (default: a binary body, options in the query) or
                "json" (``{"gaps": [...], options}``); the options mean the same
                either way (see ``_options``), and a NaN or infinite gap raises
                GapsimError "not_finite" naming it (``gaps[0][3]``) before
                anything is sent.
            **options: as for :meth:`solve` (no "return"), and ``label``, ``chain``
                ("off", "on", "auto": chained warm starts, docs/solvers.md); ``warm_start`` is a
                previous job (Job or "j_...") with the same number of gaps:
                gap i starts from that job's result i.
        """
        aid = _id(assembly, "assembly")
        opts = _options(options)
        path = "/v1/assemblies/%s/clouds" % aid
        if encoding not in ("json", "npy"):
            raise GapsimError(None, "invalid", "encoding must be 'npy' or 'json'", "encoding")
        if isinstance(gaps, Job) or (isinstance(gaps, str) and gaps.startswith("j_")):
            body = dict(opts)
            body["gaps_from"] = _id(gaps, "job")
            return Job(self, self.http.request("POST", path, body).json())
        try:
            rows = npy.as_cloud(gaps)  # always k x m: one flat row is 1 x m
        except (TypeError, ValueError) as e:
            raise GapsimError(None, "invalid", "gaps must be k x m numbers (mm): %s" % e,
                              "gaps") from None
        bad = npy.first_nonfinite(rows)
        if bad is not None:  # JSON cannot carry it, the daemon refuses it in a .npy
            field = "gaps[%d][%d]" % bad
            raise GapsimError(None, "not_finite", "%s is not a finite number" % field, field)
        if encoding == "json":
            body = dict(opts)
            body["gaps"] = rows.tolist() if npy.is_ndarray(rows) else rows
            r = self.http.request("POST", path, body)
        else:
            data = npy.encode(rows)
            r = self.http.request("POST", path, data, {"Content-Type": "application/x-npy"}, opts)
        return Job(self, r.json())

    def generate_cloud(self, assembly: AssemblyRef, count: int, seed: int = 1,
                       scatter: float = 1.0, **options: Any) -> "Job":
        """Submit a cloud whose ``count`` gaps the server generates (gapsim-gen's
        gap cloud generator: the same seed and scatter give the same gaps as
        ``gapsim-gen --seed --scatter``); the job keeps them (:meth:`job_gaps`).
        ``scatter`` < 1 makes the gaps similar (one production line).
        **options as for :meth:`submit_cloud`, e.g. ``label="line 3"``."""
        aid = _id(assembly, "assembly")
        body = dict(_options(options))
        # as given (numpy scalars as Python numbers): the daemon refuses a count of 2.5
        body["generate"] = {"count": npy.plain(count), "seed": npy.plain(seed)}
        if scatter != 1.0:
            body["generate"]["scatter"] = npy.plain(scatter)
        r = self.http.request("POST", "/v1/assemblies/%s/clouds" % aid, body)
        return Job(self, r.json())

    def job(self, job: JobRef) -> "Job":
        """A Job handle for an existing job id (its status fetched)."""
        j = Job(self, {"id": _id(job, "job")})
        j.status()
        return j

    def jobs(self, assembly: Optional[AssemblyRef] = None,
             status: Optional[str] = None) -> List[Dict[str, Any]]:
        """Job dicts (GET /v1/jobs), optionally of one assembly and/or one status."""
        query = {"assembly": _id(assembly, "assembly") if assembly is not None else None,
                 "status": status}
        return self.http.request("GET", "/v1/jobs", query=query).json()["jobs"]

    def job_status(self, job: JobRef, wait: Optional[float] = None) -> Dict[str, Any]:
        """GET /v1/jobs/{id}: status, done, total, failed, solves_per_s, eta_s, iterations.

        wait: seconds (at most 60): the daemon answers when the job ends or when
        they have passed, whichever is first (a job that already ended: at once).
        """
        query = {"wait": "%.3f" % wait} if wait else None
        timeout = self.http.timeout + wait if wait else None
        return self.http.request("GET", "/v1/jobs/" + _id(job, "job"), query=query,
                                 timeout=timeout).json()

    def cancel(self, job: JobRef) -> Dict[str, Any]:
        """Cancel a queued or running job (409 GapsimError if it already ended)."""
        return self.http.request("DELETE", "/v1/jobs/" + _id(job, "job")).json()

    def summary(self, job: JobRef, threshold: Optional[float] = None,
                bins: Optional[int] = None,
                pairs: Optional[Sequence[str]] = None) -> Dict[str, Any]:
        """Cloud statistics (GET /v1/jobs/{id}/summary).

        Keys include "count", "max_residual" (min/mean/median/p95/max of the
        per-gap largest residual, mm, with a histogram), "share_gaps_above"
        (``threshold``, default 0.1 mm), "pairs" (per-pair mean/std/max/p95/
        share_above/lambda_mean/opened), "n_act", "time_ms", "statuses",
        "iterations", "warm_started". ``pairs``: the per-pair arrays to
        return (names as above; ``[]`` or ``"none"``, the API's word, for
        none; default all): m numbers each, most of the document for a large
        assembly.
        """
        if isinstance(pairs, str):
            pairs = [] if pairs == "none" else [pairs]
        if pairs is not None:
            bad = [p for p in pairs if p not in PAIR_ARRAYS]
            if bad:
                raise GapsimError(None, "invalid", "pairs: unknown array %r (one of %s)"
                                  % (bad[0], ", ".join(PAIR_ARRAYS)), "pairs")
        s = self.http.request("GET", "/v1/jobs/%s/summary" % _id(job, "job"),
                              query={"threshold": threshold, "bins": bins,
                                     "pairs": None if pairs is None
                                     else (",".join(pairs) or "none")}).json()
        npy.arrays(s.get("pairs"), PAIR_ARRAYS)
        return s

    def export(self, job: JobRef, format: str, path: Optional[str] = None,
               gap: Optional[int] = None, threshold: Optional[float] = None) -> bytes:
        """A job's results as a file (docs/api.md, "Exports").

        ``format``: "csv" (one row per contact pair: x, y, z, interface,
        mean / std / p95 / max residual, share above ``threshold``, mean
        contact force), "html" (one-page report with SVG figures) or "vtk"
        (VTK XML PolyData for ParaView: the cloud statistics on the junction;
        with ``gap`` also g, w and lambda of that gap). Returns the bytes and
        writes them to ``path`` when given.
        """
        if format not in ("csv", "html", "vtk"):
            raise GapsimError(None, "invalid", "format must be 'csv', 'html' or 'vtk'", "format")
        if gap is not None and format != "vtk":
            raise GapsimError(None, "invalid", "gap goes with format='vtk'", "gap")
        jid = _id(job, "job")
        if gap is not None:
            r = self.http.request("GET", "/v1/jobs/%s/results" % jid,
                                  query={"format": "vtp", "index": gap,
                                         "threshold": threshold})
        else:
            r = self.http.request("GET", "/v1/jobs/%s/summary" % jid,
                                  query={"format": "vtp" if format == "vtk" else format,
                                         "threshold": threshold})
        if path is not None:
            try:
                with open(path, "wb") as f:
                    f.write(r.body)
            except OSError as e:
                raise GapsimError(None, "io_error", "cannot write %s: %s" % (path, e.strerror or e),
                                  path) from None
        return r.body

    def results(self, job: JobRef, field: str = "w") -> Any:
        """All results of a job as a k x m array (the .npy download, decoded).

        ``field`` is "w" (residual gaps, mm) or "lambda" (contact forces, N).
        Rows of gaps not (yet) solved are NaN. Returns an ndarray with numpy,
        else a list of row lists of floats.
        """
        r = self.http.request("GET", "/v1/jobs/%s/results" % _id(job, "job"),
                              headers={"Accept": "application/x-npy"}, query={"field": field})
        try:
            return npy.decode(r.body)
        except ValueError as e:
            raise GapsimError(r.status, "bad_format", "the results are not a .npy: %s" % e) from None

    def job_gaps(self, job: JobRef, index: Optional[int] = None) -> Any:
        """A job's input gaps (mm): all k x m (the stored .npy, decoded; a cloud
        of one gap uploaded as a 1-D array, e.g. by curl, is 1 x m too) or,
        with ``index``, gap vector ``index`` alone (m values). An ndarray with
        numpy, else lists."""
        jid = _id(job, "job")
        if index is not None:
            doc = self.http.request("GET", "/v1/jobs/%s/gaps" % jid,
                                    query={"index": index}).json()
            return npy.arrays(doc, {"g": npy.FLOAT})["g"]
        r = self.http.request("GET", "/v1/jobs/%s/gaps" % jid)
        try:
            gaps = npy.decode(r.body)
        except ValueError as e:
            raise GapsimError(r.status, "bad_format", "the gaps are not a .npy: %s" % e) from None
        if npy.is_ndarray(gaps):
            return gaps.reshape(1, -1) if gaps.ndim == 1 else gaps
        return [gaps] if gaps and not isinstance(gaps[0], list) else gaps

    def result_rows(self, job: JobRef, fields: str = "none",
                    page: int = 1000) -> Iterator[Dict[str, Any]]:
        """Iterate over a job's per-gap result dicts (paged JSON).

        ``fields`` is "none" (metadata only: status, n_act, iterations,
        time_ms, max_residual, kkt), "w", "lambda" or "w,lambda". ``page``:
        gaps per request, 1 to 1000 (the daemon's largest ``limit``; another
        value raises GapsimError 422 naming ``limit``).
        """
        jid = _id(job, "job")
        offset: Optional[int] = 0
        while offset is not None:
            doc = self.http.request("GET", "/v1/jobs/%s/results" % jid,
                                    query={"offset": offset, "limit": page,
                                           "fields": fields}).json()
            for row in doc["results"]:
                yield _result_arrays(row)
            offset = doc["next_offset"]


class Job:
    """A cloud job. ``info`` is the last job document fetched from the daemon."""

    def __init__(self, client: Client, info: Dict[str, Any]) -> None:
        self.client = client
        self.info = info
        self.id: str = info["id"]

    def __repr__(self) -> str:
        return "Job(%s, %s %s/%s)" % (self.id, self.info.get("status"), self.info.get("done"),
                                      self.info.get("total"))

    def status(self, wait: Optional[float] = None) -> Dict[str, Any]:
        """Refresh and return the job document (wait: see Client.job_status)."""
        self.info = self.client.job_status(self.id, wait=wait)
        return self.info

    @property
    def done(self) -> bool:
        """True once the job is done, failed or cancelled (as of the last refresh)."""
        return self.info.get("status") in TERMINAL

    def cancel(self) -> Dict[str, Any]:
        """Cancel the job; returns the job document."""
        self.info = self.client.cancel(self.id)
        return self.info

    def wait(self, progress: bool = False, timeout: Optional[float] = None,
             poll: float = 0.1, stream: Any = None) -> Dict[str, Any]:
        """Block until the job ends; return its final document.

        Args:
            progress: print a progress line on stderr (rewritten in place on a
                terminal, a line every few seconds otherwise): done/total,
                solves/s, ETA.
            timeout: seconds before GapsimError(code="timeout"); None waits forever.
            poll: how often to ask a daemon that cannot wait for a job's end
                (one older than this client): seconds between requests while
                the end is not in sight (grows to 1 s), then at the job's ETA
                (at least 20 ms later). A current daemon holds each request
                until the job ends (GET /v1/jobs/{id}?wait=S: S is 1 s with a
                progress line on a terminal, 5 s otherwise, within the
                timeout), so the end is seen as it happens, without polling.
            stream: where progress goes (default sys.stderr).

        Raises:
            GapsimError: code "job_failed" if the job ends "failed".
        """
        out = stream or sys.stderr
        tty = hasattr(out, "isatty") and out.isatty()
        start = time.time()
        last_print = 0.0
        delay = poll
        can_wait = True  # the daemon holds ?wait requests (else: poll)
        while True:
            span = 1.0 if (progress and tty) else 5.0
            if timeout is not None:
                span = min(span, max(0.0, timeout - (time.time() - start)))
            asked = time.time()
            info = self.status(wait=span if can_wait and span > 0.01 else None)
            now = time.time()
            # an answer well before the span that is not the job's end: the
            # daemon did not wait (an older one ignores the parameter)
            waited = can_wait and span > 0.01 and now - asked >= 0.5 * span
            can_wait = can_wait and (waited or info["status"] in TERMINAL or span <= 0.01)
            if progress and (tty or now - last_print >= 5.0 or info["status"] in TERMINAL):
                line = self.progress_line(info)
                out.write(("\r\x1b[K" + line) if tty else line + "\n")
                out.flush()
                last_print = now
            if info["status"] in TERMINAL:
                break
            if timeout is not None and now - start >= timeout:
                raise GapsimError(None, "timeout", "job %s not done after %g s"
                                  % (self.id, timeout))
            if waited:
                continue
            eta = info.get("eta_s")
            if isinstance(eta, (int, float)) and eta >= 0:
                time.sleep(min(1.0, max(0.02, eta)))
            else:
                time.sleep(delay)
                delay = min(1.0, delay * 1.2)
        if progress and tty:
            out.write("\n")
            out.flush()
        if info["status"] == "failed":
            raise GapsimError(None, "job_failed", "job %s failed" % self.id, "", info)
        return info

    @staticmethod
    def progress_line(info: Dict[str, Any]) -> str:
        """'job j_...: 120/200 gaps (0 failed), 385.2 solves/s, ETA 0.2 s [running]'."""
        rate = info.get("solves_per_s")
        eta = info.get("eta_s")
        return "job %s: %d/%d gaps (%d failed), %s solves/s, ETA %s [%s]" % (
            info.get("id"), info.get("done", 0), info.get("total", 0), info.get("failed", 0),
            "%.1f" % rate if isinstance(rate, (int, float)) else "-",
            "%.1f s" % eta if isinstance(eta, (int, float)) else "-", info.get("status"))

    def summary(self, **kw: Any) -> Dict[str, Any]:
        """Client.summary of this job."""
        return self.client.summary(self.id, **kw)

    def export(self, format: str, path: Optional[str] = None, **kw: Any) -> bytes:
        """Client.export of this job."""
        return self.client.export(self.id, format, path, **kw)

    def results(self, field: str = "w") -> Any:
        """Client.results of this job."""
        return self.client.results(self.id, field)
