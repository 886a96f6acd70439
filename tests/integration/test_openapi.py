"""test_openapi -- schema/openapi.json and schema/json/*.schema.json against the code
and a real daemon.

1. Every route of server/api.c's gsd_routes table is a path + method of
   openapi.json, and every path + method of openapi.json is a route.
2. The components of openapi.json are the JSON Schema files converted to the
   OpenAPI 3.0 dialect (so the two descriptions cannot drift apart).
3. Every operation lists the answers the daemon's guard and router give any
   request (400 bad framing or a repeated query parameter, 401 / 403 of the
   token, Host and Origin checks, 405, 422 for a query parameter the
   operation does not take, 500, 503), 415 where it takes no body, 507 where
   it stores new data; every GET has its HEAD; each operation's query
   parameters are those its route in server/api.c takes (a cloud's: the
   options of cloud_request.schema.json).
4. Real gapsimd daemons (gsd_harness) are driven through every endpoint, with
   tokens, another Host and a lost data directory; each answer's status must
   be listed in openapi.json for that operation (for a method the path does
   not take, by every operation of the path), and its JSON body must
   validate against the schema file the operation names for that status.
   Request bodies the test sends validate against the request schemas.

The validator below implements only the keywords the schemas use and fails on
any other constraining keyword, so an unchecked keyword cannot pass silently.
Standard library only.
"""
import json
import os
import re
import struct
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gsd_harness as H  # noqa: E402
from api_common import DaemonCase, TokenFileMixin  # noqa: E402

SRC = os.path.abspath(H.SOURCE_DIR)
SCHEMA_DIR = os.path.join(SRC, "schema")
JSON_DIR = os.path.join(SCHEMA_DIR, "json")


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def load_schemas():
    """{file name: schema} and {component name (title): file name}."""
    files, by_title = {}, {}
    for name in sorted(os.listdir(JSON_DIR)):
        if name.endswith(".schema.json"):
            files[name] = load_json(os.path.join(JSON_DIR, name))
            by_title[files[name]["title"]] = name
    return files, by_title


# ---------------------------------------------------------------- validator

ANNOTATIONS = {"$schema", "$id", "title", "description", "default", "format"}
TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


class Validator:
    """JSON Schema 2020-12 subset: type (string or array), required, properties,
    additionalProperties (bool or schema), items, enum, pattern, minimum, maximum,
    exclusiveMinimum, exclusiveMaximum, minItems, maxLength (bytes of UTF-8, as the server
    counts), oneOf, $ref (to a sibling file)."""

    KNOWN = ANNOTATIONS | {"type", "required", "properties", "additionalProperties", "items",
                           "enum", "pattern", "minimum", "maximum", "exclusiveMinimum",
                           "exclusiveMaximum", "minItems", "maxLength", "oneOf", "$ref"}

    def __init__(self, files):
        self.files = files

    def errors(self, schema, v, path="$"):
        out = []
        unknown = set(schema) - self.KNOWN
        if unknown:
            raise AssertionError("validator does not implement %s (at %s)" % (sorted(unknown), path))
        if "$ref" in schema:
            out += self.errors(self.files[schema["$ref"]], v, path)
        if "type" in schema:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(TYPES[t](v) for t in types):
                return out + ["%s: %r is not of type %s" % (path, _short(v), types)]
        if "enum" in schema and v not in schema["enum"]:
            out.append("%s: %r not in %s" % (path, v, schema["enum"]))
        if "oneOf" in schema:
            ok = [s for s in schema["oneOf"] if not self.errors(s, v, path)]
            if len(ok) != 1:
                out.append("%s: %r matches %d of oneOf" % (path, _short(v), len(ok)))
        if isinstance(v, str) and "pattern" in schema and not re.search(schema["pattern"], v):
            out.append("%s: %r does not match %s" % (path, v, schema["pattern"]))
        if TYPES["number"](v):
            if "minimum" in schema and v < schema["minimum"]:
                out.append("%s: %r < minimum %r" % (path, v, schema["minimum"]))
            if "maximum" in schema and v > schema["maximum"]:
                out.append("%s: %r > maximum %r" % (path, v, schema["maximum"]))
            if "exclusiveMinimum" in schema and v <= schema["exclusiveMinimum"]:
                out.append("%s: %r <= exclusiveMinimum" % (path, v))
            if "exclusiveMaximum" in schema and v >= schema["exclusiveMaximum"]:
                out.append("%s: %r >= exclusiveMaximum" % (path, v))
        if isinstance(v, dict):
            props = schema.get("properties", {})
            for k in schema.get("required", []):
                if k not in v:
                    out.append("%s: missing required %r" % (path, k))
            extra = schema.get("additionalProperties", True)
            for k, x in v.items():
                if k in props:
                    out += self.errors(props[k], x, "%s.%s" % (path, k))
                elif extra is False:
                    out.append("%s: unexpected property %r" % (path, k))
                elif isinstance(extra, dict):
                    out += self.errors(extra, x, "%s.%s" % (path, k))
        if isinstance(v, str) and "maxLength" in schema:
            if len(v.encode("utf-8")) > schema["maxLength"]:
                out.append("%s: longer than %d bytes" % (path, schema["maxLength"]))
        if isinstance(v, list):
            if "minItems" in schema and len(v) < schema["minItems"]:
                out.append("%s: fewer than %d items" % (path, schema["minItems"]))
            if "items" in schema:
                for i, x in enumerate(v):
                    out += self.errors(schema["items"], x, "%s[%d]" % (path, i))
        return out


def _short(v):
    s = repr(v)
    return s if len(s) < 80 else s[:77] + "..."


def to_openapi30(s, names):
    """The conversion the components of openapi.json are made with."""
    if isinstance(s, list):
        return [to_openapi30(x, names) for x in s]
    if not isinstance(s, dict):
        return s
    out = {}
    for k, v in s.items():
        if k in ("$schema", "$id", "title"):
            continue
        if k == "$ref":
            out[k] = "#/components/schemas/" + names[v]
        elif k == "type" and isinstance(v, list):
            out["type"] = [x for x in v if x != "null"][0]
            if "null" in v:
                out["nullable"] = True
        elif k in ("exclusiveMinimum", "exclusiveMaximum"):
            out[k.replace("exclusiveM", "m")] = v
            out[k] = True
        elif k == "properties":
            out[k] = {pk: to_openapi30(pv, names) for pk, pv in v.items()}
        elif k == "oneOf" and any(x.get("type") == "null" for x in v):
            rest = [to_openapi30(x, names) for x in v if x.get("type") != "null"]
            out.update(rest[0])
            out["nullable"] = True
        else:
            out[k] = to_openapi30(v, names)
    if "$ref" in out and len(out) > 1:
        out = {"allOf": [{"$ref": out.pop("$ref")}], **out}
    return out


def c_route_table():
    """{(METHOD, openapi path): the query parameters its gsd_routes entry in
    server/api.c takes (a set), or None (the handler reads the query)}."""
    with open(os.path.join(SRC, "server", "api.c"), encoding="utf-8") as f:
        text = f.read()
    table = re.search(r"gsd_routes\[\]\s*=\s*\{(.*?)\n\};", text, re.S)
    assert table, "gsd_routes table not found in server/api.c"
    routes = re.findall(r'\{\s*"([A-Z]+)"\s*,\s*"([^"]+)"\s*,[^"{}]*?(NULL|"[^"]*")\s*\}',
                        table.group(1))
    assert routes, "no routes parsed"
    return {(m, p.replace("/*", "/{path}")):
            None if q == "NULL" else {x for x in re.split(r"[,\s]+", q.strip('"')) if x}
            for m, p, q in routes}


def c_routes():
    """(METHOD, openapi path) of every entry of gsd_routes in server/api.c."""
    return set(c_route_table())


OPERATIONS = ("get", "head", "post", "put", "patch", "delete")
PUBLIC = {"/healthz", "/", "/web/{path}"}       # no token asked (docs/api.md)
PAGE = {"/", "/web/{path}"}                     # the query is the page's own state
WRITES = {("post", "/v1/assemblies"), ("post", "/v1/assemblies/{id}/solve"),
          ("post", "/v1/assemblies/{id}/clouds")}  # store new data: 507 when no room


def operations(api):
    """(method, path, operation) of openapi.json."""
    return [(m, p, op) for p, item in api["paths"].items() for m, op in item.items()
            if m in OPERATIONS]


def query_params(api, method, path):
    """The names of an operation's query parameters (path-level ones too)."""
    item = api["paths"][path]
    params = item.get("parameters", []) + item[method].get("parameters", [])
    return {x["name"] for x in params if x["in"] == "query"}


class StaticTest(unittest.TestCase):
    def test_routes_match_openapi(self):
        api = load_json(os.path.join(SCHEMA_DIR, "openapi.json"))
        self.assertEqual(api["openapi"], "3.0.3")
        documented = {(m.upper(), p) for p, item in api["paths"].items()
                      for m in item if m in ("get", "post", "put", "patch", "delete")}
        code = c_routes()
        self.assertEqual(sorted(code - documented), [], "routes missing in openapi.json")
        self.assertEqual(sorted(documented - code), [], "openapi.json paths that are no route")
        # HEAD is answered wherever GET is (as GET without the body)
        heads = {p for p, item in api["paths"].items() if "head" in item}
        gets = {p for p, item in api["paths"].items() if "get" in item}
        self.assertEqual(sorted(heads ^ gets), [], "a GET without its HEAD, or the reverse")
        for p in heads:
            get, head = api["paths"][p]["get"], api["paths"][p]["head"]
            self.assertEqual(sorted(head["responses"]), sorted(get["responses"]), p)
            self.assertEqual(head.get("parameters"), get.get("parameters"), p)
            for st, resp in head["responses"].items():
                self.assertNotIn("content", resp, "HEAD %s %s has no body" % (p, st))

    def test_common_answers_listed(self):
        """What the guard and the router answer any request is listed by every
        operation it can reach (docs/api.md, Errors)."""
        api = load_json(os.path.join(SCHEMA_DIR, "openapi.json"))
        for m, p, op in operations(api):
            with self.subTest(op="%s %s" % (m, p)):
                want = {"400", "403", "405", "500", "503"}
                want |= set() if p in PUBLIC else {"401"}
                want |= set() if p in PAGE else {"422"}  # a query parameter not taken
                want |= set() if "requestBody" in op else {"415"}  # a body where none is taken
                want |= {"507"} if (m, p) in WRITES else set()
                self.assertEqual(sorted(want - set(op["responses"])), [])
                if (m, p) not in WRITES:
                    self.assertNotIn("507", op["responses"])

    def test_query_parameters_are_the_routes(self):
        """The query parameters of each operation are those its route takes:
        the route table's list, a cloud's .npy options (the JSON body's
        options), none on the page."""
        api = load_json(os.path.join(SCHEMA_DIR, "openapi.json"))
        table = c_route_table()
        cloud = load_json(os.path.join(JSON_DIR, "cloud_request.schema.json"))
        npy_options = set(cloud["properties"]) - {"gaps", "generate", "gaps_from"}
        for (method, path), taken in sorted(table.items()):
            with self.subTest(op="%s %s" % (method, path)):
                documented = query_params(api, method.lower(), path)
                if taken is None:
                    want = npy_options if path.endswith("/clouds") else set()
                    self.assertEqual(sorted(documented ^ want), [])
                else:
                    self.assertEqual(sorted(documented ^ taken), [])

    def test_components_are_the_schema_files(self):
        api = load_json(os.path.join(SCHEMA_DIR, "openapi.json"))
        files, by_title = load_schemas()
        names = {f: t for t, f in by_title.items()}
        self.assertEqual(sorted(api["components"]["schemas"]), sorted(by_title))
        for title, f in by_title.items():
            self.assertEqual(files[f]["$schema"], "https://json-schema.org/draft/2020-12/schema")
            self.assertEqual(api["components"]["schemas"][title], to_openapi30(files[f], names),
                             "component %s differs from json/%s" % (title, f))
        # every $ref of the document resolves
        refs = re.findall(r'"\$ref": "#/components/schemas/([A-Za-z]+)"', json.dumps(api))
        self.assertTrue(refs)
        for r in refs:
            self.assertIn(r, api["components"]["schemas"])

    def test_validator_rejects(self):
        files, _ = load_schemas()
        v = Validator(files)
        err = {"error": {"code": "x", "message": "y", "field": ""}}
        self.assertEqual(v.errors(files["error.schema.json"], err), [])
        self.assertTrue(v.errors(files["error.schema.json"], {"error": {"code": "x"}}))
        self.assertTrue(v.errors(files["error.schema.json"], dict(err, extra=1)))
        self.assertTrue(v.errors(files["solve_request.schema.json"], {"g": [1, "a"]}))
        self.assertTrue(v.errors(files["solve_request.schema.json"], {"g": [1], "solver": "x"}))
        self.assertTrue(v.errors(files["solve_request.schema.json"], {"g": [1], "fasteners": "some"}))
        self.assertEqual(v.errors(files["solve_request.schema.json"], {"g": [1], "fasteners": [0, 2]}), [])
        self.assertTrue(v.errors(files["job.schema.json"], {"id": "j_1"}))


def read(path):
    with open(path, "rb") as f:
        return f.read()


def npy_bytes(rows):
    k, m = len(rows), len(rows[0])
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }" % (k, m)
    header += " " * (64 - (10 + len(header) + 1) % 64) + "\n"
    body = b"".join(struct.pack("<%dd" % m, *r) for r in rows)
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") + body


class DescribedCase(DaemonCase):
    """A daemon whose answers are checked against openapi.json (call)."""

    @classmethod
    def prepare(cls):
        cls.api = load_json(os.path.join(SCHEMA_DIR, "openapi.json"))
        cls.files, cls.by_title = load_schemas()
        cls.v = Validator(cls.files)
        cls.seen = set()

    # -- one call, checked against the description
    def call(self, method, template, path, status, body=None, headers=None):
        op = self.api["paths"][template][method.lower()]
        valid = isinstance(body, dict) and status < 300  # accepted bodies fit the request schemas
        if valid and template.endswith("/solve"):
            self.check("solve_request.schema.json", body)
        if valid and template.endswith("/clouds"):
            self.check("cloud_request.schema.json", body)
        t0 = time.time()
        r = self.d.request(method, path, body, headers=headers)
        if os.environ.get("GS_TIMING"):
            print("%6.2fs %s %s" % (time.time() - t0, method, path[:60]), file=sys.stderr)
        if isinstance(status, tuple):  # several documented outcomes (races)
            self.assertIn(r.status, status, "%s %s: %s" % (method, path, r.body[:300]))
            status = r.status
        self.assertEqual(r.status, status, "%s %s: %s" % (method, path, r.body[:300]))
        self.assertIn(str(status), op["responses"], "%s %s: %d not documented" % (method, template, status))
        self.seen.add((method, template, status))
        if method == "HEAD":  # the headers of the GET answer, no body
            self.assertEqual(r.body, b"")
            op = self.api["paths"][template]["get"]
        content = self.response(op, status).get("content", {})
        rtype = (r.headers.get("Content-Type") or "").split(";")[0]
        if status == 204:
            self.assertEqual(r.body, b"")
            return r
        if "*/*" not in content:
            self.assertIn(rtype, content,
                          "%s %s %d: %s not documented" % (method, template, status, rtype))
        if rtype == "application/json" and method != "HEAD":
            doc = r.json()
            ref = content["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
            self.check(self.by_title[ref], doc)
            return doc
        return r

    def response(self, op, status):
        """The operation's response object for status ($ref to a shared one followed)."""
        resp = op["responses"][str(status)]
        if "$ref" in resp:
            resp = self.api["components"]["responses"][resp["$ref"].rsplit("/", 1)[1]]
        return resp

    def call_other_method(self, method, template, path, status):
        """A method the path does not take: its answer is listed by every
        operation of the path (an error document)."""
        r = self.d.request(method, path)
        self.assertEqual(r.status, status, r.body[:300])
        for m, op in self.api["paths"][template].items():
            if m in OPERATIONS:
                self.assertIn(str(status), op["responses"], "%s %s: %d not documented"
                              % (m.upper(), template, status))
        self.check("error.schema.json", r.json())
        return r

    def check(self, schema_file, doc):
        errs = self.v.errors(self.files[schema_file], doc)
        self.assertEqual(errs, [], "%s: %s" % (schema_file, errs[:5]))


class LiveTest(DescribedCase):
    """Every endpoint of a real daemon against openapi.json and the schemas."""

    daemon_extra = ["--max-body", "400000", "--max-gaps", "2000"]

    @classmethod
    def prepare(cls):
        super().prepare()
        tmp = os.path.join(cls.d.data_dir + "-models")
        cls.inline_json, cls.gaps_npy = H.gen_model(os.path.join(tmp, "inline"), small=True,
                                                    inline=True, gaps=3)
        cls.file_json, _ = H.gen_model(os.path.join(tmp, "files"), small=True, gaps=0,
                                       extra=["--fast-load", "400"])  # other content

    def wait_ready(self, aid, timeout=300):
        deadline = time.time() + timeout
        while time.time() < deadline:
            a = self.call("GET", "/v1/assemblies/{id}", "/v1/assemblies/" + aid, 200)
            if a["status"] != "precomputing":
                return a
            time.sleep(0.05)
        self.fail("assembly %s not ready" % aid)

    def wait_job(self, jid, timeout=300):
        deadline = time.time() + timeout
        while time.time() < deadline:
            j = self.call("GET", "/v1/jobs/{id}", "/v1/jobs/" + jid, 200)
            if j["status"] in ("done", "cancelled", "failed"):
                return j
            time.sleep(0.05)
        self.fail("job %s did not finish" % jid)

    def test_endpoints(self):
        c = self.call
        h = c("GET", "/healthz", "/healthz", 200)
        self.assertEqual(h["status"], "ok")
        self.assertEqual(c("GET", "/v1/assemblies", "/v1/assemblies", 200), {"assemblies": []})

        # -- assemblies: inline JSON (async), duplicate, multipart with wait, failed
        model = read(self.inline_json)
        json_hdr = {"Content-Type": "application/json"}
        a = c("POST", "/v1/assemblies", "/v1/assemblies", 202, model, json_hdr)
        self.assertEqual(a["status"], "precomputing")
        aid = a["id"]
        a = self.wait_ready(aid)
        self.assertEqual(a["status"], "ready")
        self.assertIn("precompute", a)
        self.assertEqual(c("POST", "/v1/assemblies", "/v1/assemblies", 200, model, json_hdr)["id"], aid)
        m, nf = a["m"], a["n_fasteners"]

        base = os.path.dirname(self.file_json)
        fields = [("model", "lap.json", read(self.file_json))]
        for name in ("lap.part0.npy", "lap.part1.npy"):
            fields.append(("file", name, read(os.path.join(base, name))))
        ct, mp = H.multipart(fields)
        b = c("POST", "/v1/assemblies", "/v1/assemblies?wait=1", 201, mp, {"Content-Type": ct})
        self.assertEqual(b["status"], "ready")
        bid = b["id"]

        bad = {"format": "gapsim-model", "version": 1, "name": "not-spd",
               "parts": [{"ndof": 2, "K": [[1, 2], [2, 1]]}],
               "nodes": {"part": [0, 0], "dof": [0, 1]}, "pairs": {"i": [0, 1], "j": [-1, -1]}}
        e = c("POST", "/v1/assemblies", "/v1/assemblies?wait=1", 422, bad)
        self.assertEqual(e["error"]["code"], "not_spd")
        fid = e["assembly"]["id"]
        self.assertEqual(c("GET", "/v1/assemblies/{id}", "/v1/assemblies/" + fid, 200)["status"], "failed")
        c("POST", "/v1/assemblies", "/v1/assemblies", 422, dict(bad, partz=1))
        c("POST", "/v1/assemblies", "/v1/assemblies", 400, b"{", json_hdr)
        c("POST", "/v1/assemblies", "/v1/assemblies", 400, dict(bad, format="other"))
        c("POST", "/v1/assemblies", "/v1/assemblies", 422, dict(bad, version=2))
        c("POST", "/v1/assemblies", "/v1/assemblies", 415, b"x", {"Content-Type": "text/plain"})
        c("POST", "/v1/assemblies", "/v1/assemblies", 413, b" " * 400001, json_hdr)
        ct, mp = H.multipart(fields[:1])
        c("POST", "/v1/assemblies", "/v1/assemblies", 422, mp, {"Content-Type": ct})
        ct, mp = H.multipart(fields[1:])
        c("POST", "/v1/assemblies", "/v1/assemblies", 400, mp, {"Content-Type": ct})

        lst = c("GET", "/v1/assemblies", "/v1/assemblies", 200)
        self.assertEqual([x["id"] for x in lst["assemblies"]], [aid, bid, fid])
        g = c("GET", "/v1/assemblies/{id}/geometry", "/v1/assemblies/%s/geometry" % aid, 200)
        self.assertEqual(len(g["pairs"]["x"]), m)
        c("GET", "/v1/assemblies/{id}", "/v1/assemblies/a_0000000000000000", 404)
        c("GET", "/v1/assemblies/{id}", "/v1/assemblies/nope", 404)

        # -- solve
        shape, vals = H.read_npy(self.gaps_npy)
        gaps = [vals[i * m:(i + 1) * m] for i in range(shape[0])]
        sp = "/v1/assemblies/%s/solve" % aid
        r1 = c("POST", "/v1/assemblies/{id}/solve", sp, 200, {"g": gaps[0], "fasteners": "all"})
        self.assertIs(r1["cached"], False)
        self.assertEqual(len(r1["w"]), m)
        r2 = c("POST", "/v1/assemblies/{id}/solve", sp, 200, {"g": gaps[0], "fasteners": "all", "solver": "lemke"})
        self.assertIs(r2["cached"], True)
        self.assertEqual(r2["id"], r1["id"])
        r3 = c("POST", "/v1/assemblies/{id}/solve", sp, 200,
               {"g": gaps[1], "fasteners": list(range(0, nf, 2)), "solver": "gi", "formulation": "primal",
                "warm_start": r1["id"], "return": ["x", "kkt"], "fixed_pairs": [0]})
        self.assertEqual(len(r3["x"]), a["n"])
        self.assertNotIn("w", r3)
        c("POST", "/v1/assemblies/{id}/solve", sp, 200, {"g": gaps[2], "fastener_fraction": 0.5,
                                                          "solver": "npm", "npm_linear": "cg",
                                                          "linesearch": "armijo", "tol": 1e-8,
                                                          "max_iter": 10000})
        c("POST", "/v1/assemblies/{id}/solve", sp, 200, {"g": gaps[2], "solver": "ipm",
                                                          "ipm_linear": "direct", "ipm_start": "feasible"})
        rm = c("POST", "/v1/assemblies/{id}/solve", sp, 200,
               {"g": [1.01 * v for v in gaps[2]], "solver": "ipm", "ipm_linear": "mixed"})
        self.assertIs(rm["cached"], False)
        e = c("POST", "/v1/assemblies/{id}/solve", sp, 422, {"g": gaps[2], "solver": "ipm",
                                                              "ipm_linear": "float"})
        self.assertEqual(e["error"]["field"], "ipm_linear")
        self.assertIn("mixed", e["error"]["message"])
        c("POST", "/v1/assemblies/{id}/solve", sp, 400, b"{", json_hdr)
        c("POST", "/v1/assemblies/{id}/solve", sp, 400)
        c("POST", "/v1/assemblies/{id}/solve", sp, 415, b"{}", {"Content-Type": "text/plain"})
        c("POST", "/v1/assemblies/{id}/solve", sp, 422, {"g": gaps[0], "solver": "lemke", "formulation": "primal"})
        c("POST", "/v1/assemblies/{id}/solve", sp, 413, b" " * 400001, json_hdr)
        self.assertEqual(c("POST", "/v1/assemblies/{id}/solve", sp, 422, {"g": [1.0]})["error"]["code"], "dimension_mismatch")
        c("POST", "/v1/assemblies/{id}/solve", sp, 422, b'{"solver": "gi"}', json_hdr)
        c("POST", "/v1/assemblies/{id}/solve", sp, 422, b'{"g": [1], "bogus": 1}', json_hdr)
        c("POST", "/v1/assemblies/{id}/solve", sp, 422, {"g": gaps[0], "fasteners": [nf]})
        c("POST", "/v1/assemblies/{id}/solve", sp, 422, {"g": gaps[0], "warm_start": "r_0000000000000000"})
        c("POST", "/v1/assemblies/{id}/solve", "/v1/assemblies/%s/solve" % fid, 409, {"g": [0.1, 0.1]})
        c("POST", "/v1/assemblies/{id}/solve", "/v1/assemblies/a_0000000000000000/solve", 404, {"g": [0.1]})
        res = c("GET", "/v1/results/{id}", "/v1/results/" + r3["id"], 200)
        self.assertNotIn("cached", res)
        self.assertEqual(len(res["lambda"]), m)
        c("GET", "/v1/results/{id}", "/v1/results/r_0000000000000000", 404)

        # -- clouds: JSON body and raw .npy body
        cp = "/v1/assemblies/%s/clouds" % aid
        j1 = c("POST", "/v1/assemblies/{id}/clouds", cp, 202,
               {"gaps": gaps, "fasteners": "none", "solver": "gi", "fixed_pairs": [1, 2]})
        self.assertEqual(j1["status"], "queued")
        j2 = c("POST", "/v1/assemblies/{id}/clouds",
               cp + "?solver=auto&fastener_fraction=0.5&label=line%203&chain=auto", 202,
               npy_bytes(gaps), {"Content-Type": "application/x-npy"})
        self.assertEqual(j2["options"]["fastener_fraction"], 0.5)
        self.assertEqual((j2["options"]["label"], j2["options"]["chain"]), ("line 3", "auto"))
        j1 = self.wait_job(j1["id"])
        j2 = self.wait_job(j2["id"])
        self.assertEqual((j1["status"], j1["done"]), ("done", 3))
        j3 = c("POST", "/v1/assemblies/{id}/clouds", cp + "?fasteners=0,1&warm_start=" + j2["id"], 202,
               npy_bytes(gaps), {"Content-Type": "application/x-npy"})
        self.wait_job(j3["id"])
        c("POST", "/v1/assemblies/{id}/clouds", cp, 400, b"[", json_hdr)
        c("POST", "/v1/assemblies/{id}/clouds", cp, 400)
        c("POST", "/v1/assemblies/{id}/clouds", cp, 415, b"x", {"Content-Type": "text/csv"})
        c("POST", "/v1/assemblies/{id}/clouds", cp, 413, {"gaps": [[0] * m] * 2001})
        c("POST", "/v1/assemblies/{id}/clouds", cp, 422, {"gaps": []})
        c("POST", "/v1/assemblies/{id}/clouds", cp, 422, {"gaps": [[1.0, 2.0]]})
        c("POST", "/v1/assemblies/{id}/clouds", cp, 422, npy_bytes([[1.0, 2.0]]),
          {"Content-Type": "application/x-npy"})
        c("POST", "/v1/assemblies/{id}/clouds", cp + "?tol=x", 422, npy_bytes(gaps),
          {"Content-Type": "application/x-npy"})
        c("POST", "/v1/assemblies/{id}/clouds", cp, 422, {"gaps": gaps, "warm_start": "j_0000000000000000"})
        c("POST", "/v1/assemblies/{id}/clouds", "/v1/assemblies/%s/clouds" % fid, 409, {"gaps": [[0.1, 0.1]]})

        # -- jobs
        jl = c("GET", "/v1/jobs", "/v1/jobs", 200)
        self.assertEqual(len(jl["jobs"]), 3)
        self.assertEqual(len(c("GET", "/v1/jobs", "/v1/jobs?assembly=%s&status=done" % aid, 200)["jobs"]), 3)
        self.assertEqual(len(c("GET", "/v1/assemblies/{id}/jobs", "/v1/assemblies/%s/jobs" % aid, 200)["jobs"]), 3)
        c("GET", "/v1/jobs/{id}", "/v1/jobs/j_0000000000000000", 404)
        c("DELETE", "/v1/jobs/{id}", "/v1/jobs/" + j1["id"], 409)
        page = c("GET", "/v1/jobs/{id}/results", "/v1/jobs/%s/results?limit=2&fields=w,lambda" % j1["id"], 200)
        self.assertEqual((len(page["results"]), page["next_offset"]), (2, 2))
        self.assertEqual(len(page["results"][0]["lambda"]), m)
        page = c("GET", "/v1/jobs/{id}/results", "/v1/jobs/%s/results?offset=2&fields=none" % j1["id"], 200)
        self.assertIsNone(page["next_offset"])
        self.assertNotIn("w", page["results"][0])
        r = c("GET", "/v1/jobs/{id}/results", "/v1/jobs/%s/results" % j2["id"], 200,
              headers={"Accept": "application/x-npy"})
        self.assertEqual(H.read_npy(r.body)[0], (3, m))
        r = c("GET", "/v1/jobs/{id}/results", "/v1/jobs/%s/results?format=npy&field=lambda" % j2["id"], 200)
        self.assertEqual(r.headers["Content-Type"], "application/x-npy")
        c("GET", "/v1/jobs/{id}/results", "/v1/jobs/%s/results?limit=0" % j1["id"], 422)
        c("GET", "/v1/jobs/{id}/results", "/v1/jobs/%s/results?format=npy&field=x" % j1["id"], 422)
        r = c("GET", "/v1/jobs/{id}/gaps", "/v1/jobs/%s/gaps" % j2["id"], 200)
        self.assertEqual(H.read_npy(r.body), ((3, m), [x for row in gaps for x in row]))
        gj = c("GET", "/v1/jobs/{id}/gaps", "/v1/jobs/%s/gaps?index=1" % j1["id"], 200)
        self.assertEqual(gj["g"], gaps[1])
        c("GET", "/v1/jobs/{id}/gaps", "/v1/jobs/%s/gaps?index=3" % j1["id"], 422)
        c("GET", "/v1/jobs/{id}/gaps", "/v1/jobs/j_0000000000000000/gaps", 404)
        s = c("GET", "/v1/jobs/{id}/summary", "/v1/jobs/%s/summary?threshold=0.05&bins=7" % j2["id"], 200)
        self.assertEqual((s["count"], len(s["residual_histogram"]["counts"]), len(s["pairs"]["p95"])), (3, 7, m))
        sp = c("GET", "/v1/jobs/{id}/summary", "/v1/jobs/%s/summary?pairs=p95" % j2["id"], 200)
        self.assertEqual(sorted(sp["pairs"]), ["p95", "p95_exact"])
        c("GET", "/v1/jobs/{id}/summary", "/v1/jobs/%s/summary?pairs=p99" % j2["id"], 422)
        c("GET", "/v1/jobs/{id}/summary", "/v1/jobs/%s/summary?threshold=-1" % j2["id"], 422)
        c("GET", "/v1/jobs/{id}/summary", "/v1/jobs/nope/summary", 404)

        # cancel: a large cloud, cancelled at once (queued or running -> 200; if it
        # already finished on a fast machine -> 409; both are documented)
        big = npy_bytes([gaps[i % 3] for i in range(1000)])
        j4 = c("POST", "/v1/assemblies/{id}/clouds", "/v1/assemblies/%s/clouds?solver=lemke&fasteners=all" % bid,
               202, big, {"Content-Type": "application/x-npy"})
        r = c("DELETE", "/v1/jobs/{id}", "/v1/jobs/" + j4["id"], (200, 409))
        if "error" not in r:
            self.assertEqual(r["status"], "cancelled")

        # -- misc
        r = c("GET", "/metrics", "/metrics", 200)
        self.assertIn(b"gapsim_solves_total{", r.body)
        c("GET", "/", "/", 200)
        c("GET", "/web/{path}", "/web/index.html", 200)
        c("GET", "/web/{path}", "/web/no-such-file.js", 404)
        e = self.d.request("GET", "/v2/nothing")
        self.assertEqual(e.status, 404)
        self.check("error.schema.json", e.json())
        self.call_other_method("PUT", "/v1/assemblies", "/v1/assemblies", 405)
        self.call_other_method("POST", "/v1/jobs/{id}", "/v1/jobs/" + j1["id"], 405)
        c("GET", "/v1/assemblies", "/v1/assemblies", 415, b"{}", json_hdr)
        c("DELETE", "/v1/jobs/{id}", "/v1/jobs/" + j1["id"], 415, b"{}", json_hdr)

        # -- the query string: a parameter given twice (400), one not taken (422)
        c("GET", "/v1/assemblies", "/v1/assemblies?x=1&x=2", 400)
        c("GET", "/v1/jobs", "/v1/jobs?status=done&status=done", 400)
        solve_path = "/v1/assemblies/%s/solve" % aid
        c("POST", "/v1/assemblies/{id}/solve", solve_path + "?a=1&a=2", 400, {"g": gaps[0]})
        c("GET", "/v1/assemblies", "/v1/assemblies?bogus=1", 422)
        c("GET", "/healthz", "/healthz?bogus=1", 422)
        c("GET", "/v1/assemblies/{id}/jobs", "/v1/assemblies/%s/jobs?status=failed" % aid, 200)
        c("GET", "/v1/assemblies/{id}/jobs", "/v1/assemblies/%s/jobs?bogus=1" % aid, 422)
        c("POST", "/v1/assemblies", "/v1/assemblies?wait=yes", 422, model, json_hdr)
        c("POST", "/v1/assemblies/{id}/solve", solve_path + "?solver=gi", 422, {"g": gaps[0]})
        c("POST", "/v1/assemblies/{id}/clouds", cp + "?solver=gi", 422, {"gaps": gaps})
        c("DELETE", "/v1/jobs/{id}", "/v1/jobs/%s?force=1" % j1["id"], 422)

        # -- HEAD: every GET's answer without the body
        heads = [("/healthz", "/healthz"), ("/metrics", "/metrics"), ("/", "/"),
                 ("/web/{path}", "/web/index.html"), ("/v1/assemblies", "/v1/assemblies"),
                 ("/v1/assemblies/{id}", "/v1/assemblies/" + aid),
                 ("/v1/assemblies/{id}/geometry", "/v1/assemblies/%s/geometry" % aid),
                 ("/v1/assemblies/{id}/jobs", "/v1/assemblies/%s/jobs" % aid),
                 ("/v1/jobs", "/v1/jobs"), ("/v1/jobs/{id}", "/v1/jobs/" + j1["id"]),
                 ("/v1/jobs/{id}/results", "/v1/jobs/%s/results" % j1["id"]),
                 ("/v1/jobs/{id}/gaps", "/v1/jobs/%s/gaps" % j1["id"]),
                 ("/v1/jobs/{id}/summary", "/v1/jobs/%s/summary" % j1["id"]),
                 ("/v1/results/{id}", "/v1/results/" + r3["id"])]
        for template, path in heads:
            c("HEAD", template, path, 200)
        c("HEAD", "/v1/jobs/{id}", "/v1/jobs/j_0000000000000000", 404)
        c("HEAD", "/v1/jobs/{id}/results", "/v1/jobs/%s/results?limit=0" % j1["id"], 422)

        # -- delete
        c("DELETE", "/v1/assemblies/{id}", "/v1/assemblies/" + bid, 204)
        c("GET", "/v1/assemblies/{id}", "/v1/assemblies/" + bid, 404)
        c("GET", "/v1/jobs/{id}", "/v1/jobs/" + j4["id"], 404)
        c("DELETE", "/v1/assemblies/{id}", "/v1/assemblies/" + bid, 404)

        # every operation was exercised with at least one documented success
        ops = {(m.upper(), p) for p, item in self.api["paths"].items() for m in item if m != "parameters"}
        ok = {(m, p) for m, p, st in self.seen if st < 300}
        self.assertEqual(sorted(ops - ok), [], "operations without a checked success")


class GuardLiveTest(TokenFileMixin, DescribedCase):
    """The guard's answers (401, 403) on every operation they can reach: a
    daemon with --token-file."""

    workers = 1

    def test_guard_answers_documented(self):
        read = {"Authorization": "Bearer " + self.READ}
        write = {"Authorization": "Bearer " + self.WRITE}
        a, j = "a_0123456789abcdef", "j_0123456789abcdef"
        for m, p, op in operations(self.api):
            path = p.replace("{id}", j if "/jobs/" in p else a).replace("{path}", "app.js")
            body = {"g": [0.1]} if "requestBody" in op else None
            with self.subTest(op="%s %s" % (m, p)):
                # another site's name for the daemon (DNS rebinding): 403 everywhere
                self.call(m.upper(), p, path, 403, body, dict(write, Host="evil.example"))
                if p not in PUBLIC:
                    self.call(m.upper(), p, path, 401, body)
                if m in ("post", "delete"):
                    self.call(m.upper(), p, path, 403, body, read)
                    self.call(m.upper(), p, path, 403, body,
                              dict(write, Origin="http://evil.example"))


class StorageLiveTest(DescribedCase):
    """507 on the operations that store new data: the data directory lost
    under the running daemon (docs/operations.md)."""

    workers = 1

    def test_writes_answer_507(self):
        model_json, gaps_npy = H.gen_model(os.path.join(self.d.data_dir + "-models", "m"),
                                           small=True, inline=True, gaps=2)
        model = read(model_json)
        hdr = {"Content-Type": "application/json"}
        a = self.call("POST", "/v1/assemblies", "/v1/assemblies?wait=1", 201, model, hdr)
        shape, vals = H.read_npy(gaps_npy)
        g = vals[:shape[1]]
        moved = self.d.data_dir + ".gone"
        os.rename(self.d.data_dir, moved)
        try:
            self.call("POST", "/v1/assemblies", "/v1/assemblies", 507, model, hdr)
            self.call("POST", "/v1/assemblies/{id}/solve", "/v1/assemblies/%s/solve" % a["id"],
                      507, {"g": g})
            self.call("POST", "/v1/assemblies/{id}/clouds", "/v1/assemblies/%s/clouds" % a["id"],
                      507, {"gaps": [g]})
        finally:
            os.rename(moved, self.d.data_dir)


if __name__ == "__main__":
    unittest.main()
