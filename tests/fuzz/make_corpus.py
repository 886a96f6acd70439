#!/usr/bin/env python3
"""Regenerate the fuzz seed corpus in tests/fuzz/corpus/ (no numpy needed).

Seeds are small valid inputs of every accepted variant plus a few invalid
ones per error class, so mutation starts close to every branch. The files are
committed; rerun this script only to change them: python3 make_corpus.py
"""
import bz2
import gzip
import io
import lzma
import os
import shutil
import struct
import subprocess
import tarfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


def npy(d, data=(), major=1, fmt="<d"):
    d = d.encode()
    pl = 10 if major == 1 else 12
    total = (pl + len(d) + 1 + 63) // 64 * 64
    hl = total - pl
    head = b"\x93NUMPY" + bytes([major, 0])
    head += struct.pack("<H", hl) if major == 1 else struct.pack("<I", hl)
    body = d + b" " * (total - pl - len(d) - 1) + b"\n"
    return head + body + b"".join(struct.pack(fmt, v) for v in data)


def dct(shape, fortran=False, descr="<f8"):
    return "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)


def write(sub, name, data):
    os.makedirs(os.path.join(CORPUS, sub), exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(CORPUS, sub, name), "wb") as f:
        f.write(data)


def main():
    v6 = [1.5, -2.0, 0.1, 0.0, 1e-300, 7.0]
    write("npy", "c_2x3.npy", npy(dct("(2, 3)"), v6))
    write("npy", "f_2x3.npy", npy(dct("(2, 3)", True), v6))
    write("npy", "v2_1d.npy", npy(dct("(3,)"), [1, 2, 3], major=2))
    write("npy", "v3_1d.npy", npy(dct("(2,)"), [4, 5], major=3))
    write("npy", "empty_0x3.npy", npy(dct("(0, 3)")))
    write("npy", "long_3L.npy", npy(dct("(3L,)"), [1, 2, 3]))
    write("npy", "ws_keys.npy",
          npy("{ \"shape\" : ( 1 ,2 ) , 'fortran_order':False,'descr':'<f8'}", [8, 9]))
    write("npy", "f4.npy", npy(dct("(2,)", descr="<f4"), [1, 2], fmt="<f"))
    write("npy", "be.npy", npy(dct("(2,)", descr=">f8"), [1, 2], fmt=">d"))
    write("npy", "shape3d.npy", npy(dct("(1, 1, 2)"), [1, 2]))
    write("npy", "huge.npy", npy(dct("(4000000000, 4000000000)")))
    write("npy", "truncated.npy", npy(dct("(4,)"), [1, 2, 3]))
    write("npy", "trailing.npy", npy(dct("(1,)"), [1, 2]))

    write("mmio", "array_general.mtx",
          "%%MatrixMarket matrix array real general\n% comment\n2 3\n1\n4\n2\n5\n3\n6\n")
    write("mmio", "array_symmetric.mtx",
          "%%MatrixMarket matrix array real symmetric\n3 3\n4\n1\n0\n4\n1\n4\n")
    write("mmio", "coord_general.mtx",
          "%%MatrixMarket matrix coordinate real general\n%\n3 2 4\n1 1 1.5\n3 2 -2e-3\n\n"
          "1 1 0.25\n2 1 7\n")
    write("mmio", "coord_symmetric.mtx",
          "%%MatrixMarket matrix coordinate double symmetric\n3 3 4\n1 1 4\n2 1 -1\n3 3 2.5\n"
          "3 2 0.125\n")
    write("mmio", "integer.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 -7\n2 1 3")
    write("mmio", "crlf.mtx", "%%MATRIXMARKET MATRIX ARRAY REAL GENERAL\r\n1 2\r\n-inf\r\nnan\r\n")
    write("mmio", "pattern.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1\n")
    write("mmio", "complex.mtx", "%%MatrixMarket matrix array complex general\n1 1\n1 0\n")
    write("mmio", "out_of_range.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n")
    write("mmio", "too_few.mtx", "%%MatrixMarket matrix array real general\n2 1\n1\n")
    write("mmio", "huge.mtx", "%%MatrixMarket matrix array real general\n4000000000 4000000000\n")

    small = """{
  "format": "gapsim-model", "version": 1, "name": "lap-small",
  "units": {"length": "mm", "force": "N"},
  "parts": [
    {"name": "panel", "ndof": 3, "K": [[4, 1, 0], [1, 4, 1], [0, 1, 4]]},
    {"name": "flange", "ndof": 2, "K": [[3, -1], [-1, 3]]}
  ],
  "nodes": {"part": [0, 0, 1, 1], "dof": [0, 2, 0, 1],
            "x": [0, 10, 0, 10], "y": [0, 0, 0, 0], "z": [1, 1, 0, 0]},
  "pairs": {"i": [0, 1], "j": [2, -1], "cj": [2.5, 1]},
  "fasteners": {"pair": [0], "load": [500.0]},
  "f": [0, 0, 0, 0, 1.5]
}
"""
    write("model_json", "small.json", small)
    write("model_json", "minimal.json",
          '{"format":"gapsim-model","version":1,"parts":[{"ndof":1,"K":[[2]]}],'
          '"nodes":{"part":[0],"dof":[0]},"pairs":{"i":[0],"j":[-1]}}')
    write("model_json", "sandwich.json", """{"format": "gapsim-model", "version": 1,
 "name": "sandwich-3", "joint": "sandwich", "comment": "three parts, node 1 in two pairs",
 "parts": [{"name": "skin", "ndof": 2, "K": [[4, -1], [-1, 4]]},
           {"name": "strap", "ndof": 2, "K": [[5, 1], [1, 5]]},
           {"name": "rib", "ndof": 2, "K": [[3, 0.5], [0.5, 3]]}],
 "nodes": {"part": [0, 1, 2, 0, 1], "dof": [0, 0, 0, 1, 1],
           "x": [0, 0, 0, 20, 20], "y": [0, 0, 0, 0, 0], "z": [2, 1, 0, 2, 1]},
 "pairs": {"i": [0, 1, 3, 4], "j": [1, 2, 4, -1], "ci": [-1, -1, -1, -1], "cj": [1, 1, 1, 1]},
 "fasteners": {"pair": [0, 2], "load": [250, 250]},
 "f": [0, 0, 0, 0, 0, 0]}
""")
    write("model_json", "files.json", """{"format": "gapsim-model", "version": 1, "name": "files",
 "parts": [{"ndof": 2, "K": "k2.npy"}, {"ndof": 3, "K": "k3.mtx"}],
 "nodes": {"part": [0, 1, 1], "dof": [0, 0, 2]},
 "pairs": {"i": [0, 2], "j": [1, -1]},
 "f": "f5.npy"}
""")
    write("model_json", "bad_key.json", small.replace('"pairs"', '"pairz"'))
    write("model_json", "bad_range.json", small.replace('"j": [2, -1]', '"j": [2, 9]'))
    write("model_json", "bad_symmetry.json", small.replace("[[3, -1], [-1, 3]]", "[[3, -1], [1, 3]]"))
    write("model_json", "file_objects.json", """{"format": "gapsim-model", "version": 1,
 "parts": [{"ndof": 2, "K": {"file": "k2.npy", "format": "npy"}},
           {"ndof": 3, "K": {"file": "k3.mtx", "format": "matrix-market"}}],
 "nodes": {"part": [0, 1, 1], "dof": [0, 0, 2]},
 "pairs": {"i": [0, 2], "j": [1, -1]},
 "f": {"file": "f5.npy"}}
""")
    write("model_json", "labels.json", """{"format": "gapsim-model", "version": 1,
 "parts": [{"ndof": 2, "K": {"file": "k2.pch", "format": "nastran-dmig", "matrix": "KAAX"}},
           {"ndof": 2, "K": "k2.pch"}],
 "nodes": {"part": [0, 0, 1], "label": [9, 7, 7], "component": [3, 3, 3]},
 "pairs": {"i": [0, 1], "j": [2, -1]}}
""")
    fe_corpus()
    archive_corpus()
    vecenc_corpus()
    factors_corpus()
    numarg_corpus()
    http_corpus()
    cli_corpus()
    gencli_corpus()
    memlimit_corpus()
    http_gaps_corpus()
    mpi_side_corpus()
    runargs_corpus()
    daemon_opts_corpus()


def npz(members, compress=True):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED) as z:
        for name, data in members:  # fixed dates: the seeds are reproducible
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
            z.writestr(info, data)
    return buf.getvalue()


def fe_corpus():
    """Seeds of the FE matrix readers: the 3 x 3 K = [[4,-1,0],[-1,4,-1],[0,-1,4]]."""
    write("abaqus", "uel.mtx", "** substructure\n*USER ELEMENT, NODES=3, TYPE=U1, LINEAR\n1\n"
          "*ELEMENT, TYPE=U1\n1, 11, 12, 13\n*MATRIX, TYPE=STIFFNESS\n4., -1., 4., 0.\n-1., 4.\n"
          "*MATRIX, TYPE=MASS\n1., 0., 1., 0., 0., 1.\n")
    write("abaqus", "uel_dof_change.mtx", "*User Element, Nodes=2, Linear\n1, 3\n2, 2\n"
          "*Matrix, Type=Stiffness\n4.0D0, -1.0D0, 4.0D0\n0.0, -1.0, 4.0\n")
    write("abaqus", "matrix_input.mtx", "11,1,11,1, 4.000000000000000e+00\n12,1,11,1,-1.\n"
          "12,1,12,1,4.\n13,1,12,1,-1.\n13,1,13,1,4.\n")
    write("abaqus", "matrix_input_square.mtx", "1,2,1,2,4\n1,2,2,2,-1\n2,2,1,2,-1\n2,2,2,2,4\n")
    write("abaqus", "coordinate.mtx", "1,1,4.\r\n2,1,-1.\r\n2,2,4.\r\n3,2,-1.\r\n3,3,4.\r\n")
    write("abaqus", "coordinate_upper.mtx", "1, 1, 4\n1, 2, -1\n2, 2, 4\n2, 3, -1\n3, 3, 4\n")
    write("abaqus", "bad_mirror.mtx", "1,1,4\n1,2,-1\n2,1,-2\n2,2,4\n")
    write("abaqus", "unsymm.mtx", "*USER ELEMENT, NODES=1, LINEAR, UNSYMM\n1\n")
    write("dmig", "small.pch",
          "$ punch\n"
          "DMIG    KAAX           0       6       2       0                       3\n"
          "DMIG    KAAX          11       1              11       1      4.        +A1\n"
          "+A1           12       1     -1.\n"
          "DMIG    KAAX          12       1              12       1    .4+1\n"
          "              13       1     -1.\n"
          "DMIG    KAAX          13       1              13       1  4.0E+0\n")
    write("dmig", "large.pch",
          "DMIG*   KAAX                           0               6               2\n"
          "*                      0\n"
          "DMIG*   KAAX                          11               1\n"
          "*                     11               1 4.000000000D+00\n"
          "*                     12               1-1.000000000D+00\n"
          "DMIG*   KAAX                          12               1\n"
          "*                     12               1 4.000000000D+00\n"
          "*                     13               1-1.000000000D+00\n"
          "DMIG*   KAAX                          13               1\n"
          "*                     13               1 4.000000000D+00\n")
    write("dmig", "free_two.bdf",
          "BEGIN BULK\nDMIG,MAAX,0,6,2,0\nDMIG,MAAX,11,1,,11,1,1.\n"
          "DMIG,KAAX,0,1,2,0,,,3\nDMIG,KAAX,11,1,,11,1,4.,,+\n+,12,1,-1.\n"
          "DMIG,KAAX,12,1,,11,1,-1.,,+B\n+B,12,1,4.,,13,1,-1.\nDMIG,KAAX,13,1,,12,1,-1.\n"
          ",13,1,4.\nENDDATA\n")
    write("dmig", "tabs.dat", "DMIG\tKAAX\t0\t6\t1\nDMIG\tKAAX\t5\t0\t\t5\t0\t2.5\n")
    write("dmig", "complex.pch", "DMIG,K,0,6,3,0\nDMIG,K,1,1,,1,1,4.,0.5\n")
    ptr, ind, dat = [0, 2, 5, 7], [0, 1, 0, 1, 2, 1, 2], [4., -1., -1., 4., -1., -1., 4.]

    def arr(descr, shape, fmt, values):
        return npy(dct(shape, descr=descr), values, fmt=fmt)

    fmt_s3 = npy(dct("()", descr="|S3"), []) + b"csr"
    shape = arr("<i8", "(2,)", "<q", [3, 3])
    write("npz", "csr.npz", npz([("format.npy", fmt_s3), ("shape.npy", shape),
                                 ("data.npy", arr("<f8", "(7,)", "<d", dat)),
                                 ("indices.npy", arr("<i4", "(7,)", "<i", ind)),
                                 ("indptr.npy", arr("<i4", "(4,)", "<i", ptr))]))
    fmt_u3 = npy(dct("()", descr="<U3"), []) + "csc".encode("utf-32-le")
    write("npz", "csc_u3_stored.npz", npz([("format.npy", fmt_u3), ("shape.npy", shape),
                                           ("data.npy", arr("<f8", "(7,)", "<d", dat)),
                                           ("indices.npy", arr("<i8", "(7,)", "<q", ind)),
                                           ("indptr.npy", arr("<i8", "(4,)", "<q", ptr)),
                                           ("_is_array.npy", npy(dct("()", descr="|b1"), []) +
                                            b"\x01")], compress=False))
    rows = [0, 0, 1, 1, 1, 2, 2]
    write("npz", "coo.npz", npz([("format.npy", npy(dct("()", descr="|S3"), []) + b"coo"),
                                 ("shape.npy", shape), ("data.npy", arr("<f8", "(7,)", "<d", dat)),
                                 ("row.npy", arr("<i4", "(7,)", "<i", rows)),
                                 ("col.npy", arr("<i4", "(7,)", "<i", ind))]))
    write("npz", "dia.npz", npz([("format.npy", npy(dct("()", descr="|S3"), []) + b"dia"),
                                 ("shape.npy", shape)]))
    write("npz", "bad_index.npz", npz([("format.npy", fmt_s3), ("shape.npy", shape),
                                       ("data.npy", arr("<f8", "(7,)", "<d", dat)),
                                       ("indices.npy", arr("<i4", "(7,)", "<i", [0, 1, 0, 9, 2, 1, 2])),
                                       ("indptr.npy", arr("<i4", "(4,)", "<i", ptr))]))

    # pattern sweep files (runner/pattern.h)
    write("patterns", "sweep.json",
          '[{"fasteners": [0, 4, 9]}, {"fasteners": "all"}, {"fastener_fraction": 0.5}, {}]\n')
    write("patterns", "no_indices.json",
          '[{"fasteners": "all"}, {"fastener_fraction": 0.25}, {"fasteners": []}]\n')
    write("patterns", "duplicate.json", '[{"fasteners": [1, 1]}]')
    write("patterns", "both.json", '[{"fasteners": "none", "fastener_fraction": 0.2}]')
    write("patterns", "range.json", '[{"fastener_fraction": 1.5}]')
    write("patterns", "object.json", '{"patterns": []}')
    write("patterns", "many.json", '[{"fasteners": [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]}, '
                                   '{"fasteners": [20]}]')
    write("patterns", "unknown_key.json", '[{"bolts": [1]}]')


def tar(members, fmt=tarfile.USTAR_FORMAT):
    """members: (name, data bytes | None for a directory | (type, linkname))."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.mtime = 1577836800  # fixed: the seeds are reproducible
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                t.addfile(info)
            elif isinstance(data, tuple):
                info.type, info.linkname = data
                t.addfile(info)
            else:
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def archive_corpus():
    """Seeds of the upload unpacker (server/upload_archive.h): model folders
    as tar, compressed tar and zip, and one archive per refused entry."""
    model = b'{"format": "gapsim-model", "version": 1, "parts": []}\n'
    block = npy(dct("(2, 2)"), [2, -1, -1, 2])
    folder = [("lap", None), ("lap/lap.json", model), ("lap/data", None),
              ("lap/data/lap.part0.npy", block)]
    write("archive", "folder.tar", tar(folder))
    write("archive", "flat_pax.tar", tar([(".", None), ("./model.json", model),
                                          ("./k.npy", block)], tarfile.PAX_FORMAT))
    write("archive", "longname_gnu.tar", tar([("d" * 120 + "/m.json", model)], tarfile.GNU_FORMAT))
    write("archive", "folder.tar.gz", gzip.compress(tar(folder), mtime=0))
    write("archive", "folder.tar.bz2", bz2.compress(tar(folder)))
    write("archive", "folder.tar.xz", lzma.compress(tar(folder)))
    write("archive", "folder.zip", npz([(n, d) for n, d in folder if d is not None]))
    write("archive", "folder_stored.zip", npz([("lap/", b""), ("lap/lap.json", model)], False))
    write("archive", "zip_dotdot.zip", npz([("../evil.json", model)]))
    write("archive", "dotdot.tar", tar([("a/../../evil", model)]))
    write("archive", "absolute.tar", tar([("/tmp/evil", model)]))
    write("archive", "symlink.tar", tar([("link", (tarfile.SYMTYPE, "/etc")),
                                         ("link/passwd", model)]))
    write("archive", "hardlink.tar", tar([("m.json", model), ("h", (tarfile.LNKTYPE, "m.json"))]))
    write("archive", "fifo.tar", tar([("m.json", model), ("p", (tarfile.FIFOTYPE, ""))]))
    write("archive", "hidden.tar", tar([(".git/config", model)]))
    write("archive", "duplicate.tar", tar([("m.json", model), ("m.json", model)]))
    write("archive", "file_as_dir.tar", tar([("m.json", model), ("m.json/x", model)]))
    write("archive", "dir_name_file.tar", tar([("a/", model)]))
    write("archive", "deep.tar", tar([("/".join(["d"] * 17) + "/m.json", model)]))
    write("archive", "many.tar", tar([("f%d" % k, b"x") for k in range(10)]))
    write("archive", "big.tar", tar([("big.npy", b"0" * 5000)]))
    write("archive", "empty.tar", tar([(".", None)]))
    write("archive", "bad_chars.tar", tar([("a\\b;c", model)]))


def vecenc_corpus():
    """Seeds of the stored result vectors (server/vecenc.h): flags byte, m - 1
    (u16), then the BLOB: raw w and lam, their zstd frames of the shuffled
    bytes (made with the zstd command, skipped without it), encode mode."""
    w = [0.25, -0.0, 1e-310, float("inf"), 3.5, 0.0, -2.0, 1.0]
    lam = [(1, 10.5), (4, -0.0), (7, 2e-300)]
    raw_w = b"".join(struct.pack("<d", v) for v in w)
    raw_lam = b"".join(struct.pack("<id", i, v) for i, v in lam)
    head = lambda flags, m: bytes([flags]) + struct.pack("<H", m - 1)
    write("vecenc", "w_raw", head(0, 8) + raw_w)
    write("vecenc", "lam_raw", head(1, 8) + raw_lam)
    write("vecenc", "lam_raw_unordered", head(1, 8) + raw_lam[12:24] + raw_lam[:12])
    write("vecenc", "unknown_enc", head(4, 8) + raw_w)
    write("vecenc", "encode_mode", bytes([8, 0, 0]) + raw_w)
    if not shutil.which("zstd"):
        print("make_corpus.py: no zstd command, the vecenc zstd seeds are left as they are")
        return
    def shuffled_zstd(raw, size):
        n = len(raw) // size
        sh = bytes(raw[i * size + b] for b in range(size) for i in range(n))
        return subprocess.run(["zstd", "-q", "-c", "-1", "--stream-size=%d" % len(sh)],
                              input=sh, stdout=subprocess.PIPE, check=True).stdout
    write("vecenc", "w_zstd", head(2, 8) + shuffled_zstd(raw_w, 8))
    write("vecenc", "lam_zstd", head(3, 8) + shuffled_zstd(raw_lam, 12))


def factors_corpus():
    """Seeds of the saved precomputation (fuzz_factors.c): a flags byte, then
    the length the valid 1,040-byte file is cut or extended to and
    (offset, byte) edits of it; or flag 1 and a whole file."""
    valid = 1040
    for flags, name in ((0, "valid"), (2, "valid_expect"), (4, "valid_defer_lq"),
                        (6, "valid_expect_defer_lq")):
        write("factors", name, bytes([flags]))
    for n in (0, 8, 16, 95, 111, 112, 200, 1023, 1024, 1032, 1039, 1048):
        write("factors", "cut_%d" % n, bytes([0]) + struct.pack("<H", n))
    # magic, endianness, version, header bytes, n, m, n_parts, payload bytes,
    # model hash, ndof of part 0, payload, trailer checksum, trailer magic
    edits = {"magic": (0, 88), "endian": (8, 9), "version": (16, 2), "header_bytes": (24, 1),
             "n": (32, 7), "m": (40, 5), "n_parts": (48, 1), "payload_bytes": (56, 0),
             "hash": (70, 48), "ndof": (96, 4), "ndof_last": (111, 1), "payload": (600, 1),
             "checksum": (1024, 0), "checksum_last": (1031, 1), "done": (1032, 88),
             "done_last": (1039, 88)}
    for name, (off, val) in edits.items():
        write("factors", "edit_" + name,
              bytes([0]) + struct.pack("<H", valid) + struct.pack("<H", off) + bytes([val]))
    write("factors", "raw_empty", bytes([1]))
    write("factors", "raw_magic_only", bytes([1]) + b"GSPRECMP" + bytes(120))


def numarg_corpus():
    """Seeds of the numbers of command-line options (core/numarg.h): a range
    byte (ranges[b % 5] of fuzz_numarg.c), then the text."""
    seeds = {"int": (0, "42"), "neg": (4, "-3"), "blank": (2, "  7"), "frac": (0, "0.5"),
             "exp": (1, "1e-10"), "hex": (2, "0x1p3"), "nan": (0, "nan"), "inf": (2, "-inf"),
             "overflow": (2, "9223372036854775808"), "huge": (0, "1e999"),
             "trailing": (1, "4x"), "empty": (3, "")}
    for name, (rng, text) in seeds.items():
        write("numarg", name, bytes([rng]) + text.encode())



def argv(*words):
    """argv words of fuzz_cli / fuzz_gencli: one a line (fuzz_argv.h)."""
    return "\n".join(words).encode()


def cli_corpus():
    """Seeds of the `gapsim` command's parsers (fuzz_cli.c): a mode byte
    (b % 3: 0 argv of `cloud submit`, least positionals b / 3 % 3; 1 an index
    list; 2 a .npy file), then the input."""
    a = {"submit": argv("--assembly", "a1", "--gaps", "g.npy", "--wait", "--solver", "lemke",
                        "--tol=1e-9", "--max-iter", "500", "--fasteners", "0,3,7"),
         "all_opts": argv("--solver=ipm", "--formulation", "dual", "--tol", ".5", "--max-iter=0",
                          "--timeout", "2.5", "--fraction", "0.25", "--fixed-pairs", "03,1",
                          "--warm-start", "job-1 #2", "--npm-linear", "cg", "--linesearch",
                          "armijo", "--ipm-linear", "split", "--ipm-start", "feasible",
                          "--no-cache", "--json", "--server", "http://h:1", "--token", "t"),
         "fast_all": argv("--fasteners", "all", "-o", "out.npy", "x", "--", "-y"),
         "help": argv("--assembly", "a", "--help"),
         "both": argv("--fasteners", "1", "--fraction", "0.5"),
         "bad_tol": argv("--tol", "1"),
         "bad_list": argv("--fixed-pairs", "1,,2"),
         "no_value": argv("--gaps"),
         "flag_value": argv("--wait=1"),
         "unknown": argv("--frobnicate"),
         "too_many": argv("a", "b", "c"),
         "empty_server": argv("--server="),
         "status": argv("optimal", "max_iter", "ray_termination", "unknown")}
    for name, data in a.items():
        write("cli", "argv_" + name, bytes([0]) + data)
    write("cli", "argv_min2", bytes([6]) + argv("one"))
    lists = {"one": "0", "three": "0,3,7", "zeros": "007,0", "max": "2147483647",
             "over": "2147483648", "neg": "-1", "empty_field": "1,,2", "trailing": "1,",
             "space": " 1", "plus": "+1", "empty": "", "status": "numerical_breakdown"}
    for name, text in lists.items():
        write("cli", "list_" + name, bytes([1]) + text.encode())
    v6 = [1.5, -2.0, 0.1, 0.0, 1e-300, 7.0]
    npys = {"c_2x3": npy(dct("(2, 3)"), v6), "f_2x3": npy(dct("(2, 3)", True), v6),
            "f_3x2": npy(dct("(3, 2)", True), v6), "1d": npy(dct("(3,)"), [1, 2, 3]),
            "0x3": npy(dct("(0, 3)")), "3x0": npy(dct("(3, 0)")), "0": npy(dct("(0,)")),
            "f4": npy(dct("(2,)", descr="<f4"), [1, 2], fmt="<f"),
            "truncated": npy(dct("(4,)"), [1, 2, 3]), "v2": npy(dct("(1, 2)"), [4, 5], major=2)}
    for name, data in npys.items():
        write("cli", "npy_" + name, bytes([2]) + data)


def gencli_corpus():
    """Seeds of the generator's options (fuzz_gencli.c): argv words of
    gapsim-gen, one a line."""
    seeds = {
        "lap": argv("--kind", "lap", "--small"),
        "sandwich": argv("--kind=sandwich", "--small", "--thickness", "1,2,3,4", "--far=5",
                         "--nyc", "2", "--supports", "3"),
        "full": argv("--kind", "lap-fine", "--scale", "1.5", "--nx", "9", "--ny", "3",
                     "--length", "120", "--hy", "2.5", "--thickness", "2,3", "--far", "10,20",
                     "--clamp", "0", "--fast-every", "2", "--fast-lines", "2", "--fast-load",
                     "250", "--no-cond", "--uncondensed", "--matrix-format", "nastran-dmig",
                     "--out", "o/d", "--name", "n", "--gaps", "0", "--seed", "0x10", "--mean",
                     "0.4", "--peak", "2", "--corr", "100", "--scatter", "0.2", "--fraction",
                     "0.5", "--element", "mitc4", "--"),
        "inline": argv("--kind", "lap", "--inline", "--seed", "18446744073709551615"),
        "help": argv("--kind", "lap", "-h"),
        "no_kind": argv("--small"),
        "bad_kind": argv("--kind", "t"),
        "bad_list": argv("--kind", "lap", "--thickness", "1,2,3"),
        "bad_seed": argv("--kind", "lap", "--seed", "-1"),
        "peak_mean": argv("--kind", "lap", "--mean", "3"),
        "inline_fmt": argv("--kind", "lap", "--inline", "--matrix-format", "npy"),
        "flag_value": argv("--small=1"),
        "no_value": argv("--kind"),
        "extra": argv("--kind", "lap", "--", "x"),
        "positional": argv("lap"),
        "element_sri": argv("--kind", "sandwich", "--small", "--element=sri"),
        "bad_element": argv("--kind", "lap", "--element", "full"),
    }
    for name, data in seeds.items():
        write("gencli", name, data)


def runargs_corpus():
    """Seeds of the runners' options (fuzz_runargs.c): a byte (even:
    gapsim-batch, odd: gapsim-mpi), then argv words, one a line."""
    batch, mpi = b"\x00", b"\x01"
    seeds = {
        "batch": batch + argv("m.json", "--gaps", "g.npy", "--fraction", "0.5", "--out", "w.npy",
                              "--summary", "s.json", "--factors", "f.bin", "--threshold", "0.2",
                              "--tol", "1e-9", "--limit", "10", "--threads", "2", "--method",
                              "gi", "--form", "relative", "--chain", "auto", "--window", "32",
                              "--progress"),
        "mpi": mpi + argv("m.json", "--gaps", "g.npy", "--out", "w.npy", "--patterns", "p.json",
                          "--chunk", "8", "--bins", "10", "--shared-factors", "--factors", "f",
                          "--fresh", "--sync", "--no-progress", "--method", "npm"),
        "help": batch + argv("m.json", "-h"),
        "mpi_no_out": mpi + argv("m.json", "--gaps", "g.npy"),
        "other_runner": batch + argv("m.json", "--gaps", "g.npy", "--chunk", "4"),
        "path_value": batch + argv("m.json", "--gaps", "--chunk"),
        "bad_tol": batch + argv("m.json", "--gaps", "g.npy", "--tol", "1"),
        "two_models": mpi + argv("a.json", "b.json", "--gaps", "g", "--out", "w"),
        "both_patterns": mpi + argv("m", "--gaps", "g", "--out", "w", "--patterns", "p",
                                    "--fraction", "0.5"),
        "bad_combo": batch + argv("m", "--gaps", "g", "--method", "ref", "--form", "relative"),
    }
    for name, data in seeds.items():
        write("runargs", name, data)


def daemon_opts_corpus():
    """Seeds of gapsimd's options (fuzz_daemon_opts.c): argv words, one a line."""
    seeds = {
        "all": argv("--addr", "0.0.0.0", "--port=0", "--data-dir", "d", "--web-dir=", "--workers",
                    "2", "--http-threads", "4", "--max-body", "1024", "--max-upload=2048",
                    "--max-m", "5", "--max-n", "9", "--max-gaps", "3", "--timeout", "5",
                    "--log-level", "2", "--max-archive-entries", "7", "--max-fe-dofs", "8",
                    "--default-timeout", "10", "--max-timeout", "20", "--header-timeout", "3",
                    "--max-connections", "9", "--max-per-ip", "0", "--allow-host", "a,b",
                    "--allow-host=*", "--token-file", "t", "--min-free", "0", "--reset",
                    "--store-quota-mb", "100", "--retain-solves-age", "0.5",
                    "--retain-solves-max", "3", "--tls-cert", "c.pem", "--tls-key", "k.pem",
                    "--summary-cache-mb", "0", "--factor-cache-mb", "1", "--max-loaded-mb", "0"),
        "help": argv("--port", "1", "-h"),
        "bad_port": argv("--port", "65536"),
        "abbrev": argv("--data", "d"),
        "flag_value": argv("--reset=1"),
        "no_value": argv("--workers"),
        "tls_half": argv("--tls-cert", "c.pem"),
        "timeouts": argv("--default-timeout", "700", "--max-timeout", "600"),
        "stray": argv("x"),
    }
    for name, data in seeds.items():
        write("daemon_opts", name, data)


def memlimit_corpus():
    """Seeds of the cgroup limit reader (fuzz_memlimit.c): /proc/self/cgroup
    text, then "\n@PATH\nCONTENT" records of the fake v2/ and v1/ trees."""
    seeds = {
        "v2_walk": "0::/user.slice/job\n@v2/user.slice/job/memory.max\nmax\n"
                   "@v2/user.slice/memory.max\n1073741824\n",
        "v2_top": "0::/\n@v2/memory.max\n268435456\n",
        "v2_both": "0::/a/b\n@v2/a/b/memory.max\n536870912\n@v2/a/memory.max\n1073741824\n"
                   "@v2/memory.max\n2147483648\n",
        "v1": "12:pids:/docker/abc\n4:cpu,memory:/docker/abc\n0::/docker/abc\n"
              "@v1/memory.limit_in_bytes\n9223372036854771712\n"
              "@v1/docker/abc/memory.limit_in_bytes\n2147483648\n"
              "@v2/docker/abc/memory.max\n4294967296\n",
        "v1_memoryx": "4:cpu,memoryx:/docker/abc\n@v1/docker/abc/memory.limit_in_bytes\n4096\n",
        "garbage": "0::/x\n@v2/x/memory.max\n12abc\n",
        "dots": "0::/../x/..\n@v2/memory.max\n4096\n",
        "elsewhere": "0::/elsewhere/y\n@v2/memory.max\n8192\n",
        "no_slash": "0::x\n1:memory:y\n",
        "empty": "",
    }
    for name, text in seeds.items():
        write("memlimit", name, text)


def http_corpus():
    """Seeds of the daemon's request-side parsers (server/http_impl.h,
    guard_impl.h, api_query_impl.h): URLs of the route table with percent
    escapes (http_url: a method byte, methods[b % 8] of fuzz_http_url.c,
    then the target), requests with framing, Host, Origin and token headers
    and a token file (http_guard), Content-Type / Content-Length /
    Transfer-Encoding and multipart part names (http_body: a byte of
    accepted kinds and present headers, a byte of present part names, then
    the values one a line), Accept headers, ?fields= and ?pairs= values
    (http_query)."""
    a, j, r = "a_0123456789abcdef", "j_0123456789abcdef", "r_0123456789abcdef"
    urls = {
        "healthz": (0, "/healthz"), "metrics": (0, "/metrics"), "root": (1, "/"),
        "web": (0, "/web/app.js"), "web_nul": (0, "/web/app.js%00.html"),
        "web_dotdot": (0, "/web/../../etc/passwd"), "web_long": (0, "/web/" + "x" * 300),
        "asm_list": (0, "/v1/assemblies?status=ready&limit=10"),
        "asm_post": (2, "/v1/assemblies?wait=1"), "asm_get": (0, "/v1/assemblies/" + a),
        "asm_delete": (4, "/v1/assemblies/" + a), "asm_put": (3, "/v1/assemblies/" + a),
        "geometry": (0, "/v1/assemblies/%s/geometry" % a), "asm_jobs": (0, "/v1/assemblies/%s/jobs" % a),
        "solve": (2, "/v1/assemblies/%s/solve?wait=true" % a),
        "clouds": (2, "/v1/assemblies/%s/clouds?label=x%%20y" % a),
        "jobs": (0, "/v1/jobs?status=done"), "job": (1, "/v1/jobs/" + j),
        "job_delete": (4, "/v1/jobs/" + j), "results": (0, "/v1/jobs/%s/results?format=npy" % j),
        "results_fields": (0, "/v1/jobs/%s/results?offset=0&limit=5&fields=w,lambda" % j),
        "summary": (0, "/v1/jobs/%s/summary?pairs=mean,p95&format=json" % j),
        "gaps": (0, "/v1/jobs/%s/gaps" % j), "result": (0, "/v1/results/" + r),
        "id_long": (0, "/v1/jobs/" + "j" * 40 + "/results"), "id_empty": (0, "/v1/jobs//results"),
        "id_escaped": (0, "/v1/jobs/j_%30123456789abcdef"), "slash_escaped": (0, "/v1/jobs%2Fj_1"),
        "pct25": (0, "/v1/jobs?x=%2500&y=%25"), "nul_query": (0, "/v1/jobs?a%00=1&b=%00"),
        "bad_escapes": (0, "/v1/%zz/%4/%"), "high_bytes": (0, "/v1/jobs/%ff%fe%C3%A9"),
        "unknown": (0, "/v2/nothing"), "method_lower": (7, "/v1/jobs"),
        "options": (6, "/v1/assemblies"), "patch": (5, "/v1/jobs/" + j),
        "trailing_slash": (0, "/v1/jobs/"), "query_only": (0, "?a=b"),
    }
    for name, (m, url) in urls.items():
        write("http_url", name, bytes([m]) + url.encode())

    tw, tr = "w" * 4 + "0123456789abcdef", "r" * 4 + "fedcba9876543210"
    toks = "# tokens\nwrite %s\nread\t%s\n" % (tw, tr)
    guard = {
        "get_plain": "GET /v1/jobs\nHost: localhost:8080\n",
        "post_json": "POST /v1/assemblies?wait=1\nHost: 127.0.0.1:8080\nContent-Length: 42\n"
                     "Content-Type: application/json\n",
        "chunked": "POST /v1/assemblies\nHost: [::1]:8080\nTransfer-Encoding: chunked\n",
        "te_gzip": "POST /v1/assemblies\nTransfer-Encoding: gzip, chunked\n",
        "te_twice": "POST /v1/assemblies\nTransfer-Encoding: chunked\nTransfer-Encoding: chunked\n",
        "cl_te": "POST /v1/assemblies\nContent-Length: 5\nTransfer-Encoding: chunked\n",
        "cl_conflict": "POST /v1/assemblies\nContent-Length: 5\ncontent-length: 6\n",
        "cl_same": "POST /v1/assemblies\nContent-Length: 5\nContent-Length: 5\n",
        "nul_path": "GET /web/app.js%00.html\n", "nul_query": "GET /v1/jobs?a=%00&b=1\n",
        "pct2500": "GET /v1/jobs?a=%2500\n", "dup_arg": "GET /v1/jobs?a=1&a=2\n",
        "many_args": "GET /v1/jobs?" + "&".join("k%d=1" % i for i in range(70)) + "\n",
        "host_other": "GET /v1/jobs\nHost: evil.example\n",
        "host_allowed": "GET /v1/jobs\nHost: gapsim.example:443\n",
        "origin_same": "POST /v1/assemblies\nHost: localhost:8080\nOrigin: http://localhost:8080\n",
        "origin_cross": "DELETE /v1/jobs/j_1\nHost: localhost:8080\nOrigin: https://evil.example\n",
        "origin_null": "POST /v1/assemblies\nHost: localhost\nOrigin: null\n",
        "origin_get": "GET /v1/jobs\nHost: localhost\nOrigin: https://evil.example\n",
        "token_write": "DELETE /v1/jobs/j_1\nHost: localhost\nAuthorization: Bearer %s\n\n%s" % (tw, toks),
        "token_read_write": "POST /v1/assemblies\nAuthorization: Bearer %s\n\n%s" % (tr, toks),
        "token_read": "GET /v1/jobs\nAuthorization: bearer   %s\n\n%s" % (tr, toks),
        "token_missing": "GET /v1/jobs\n\n%s" % toks,
        "token_public": "GET /healthz\n\n%s" % toks,
        "token_wrong": "GET /v1/jobs\nAuthorization: Bearer %s\n\n%s" % ("x" * 20, toks),
        "tokens_bad_short": "GET /v1/jobs\n\nread short\n",
        "tokens_bad_scope": "GET /v1/jobs\n\nadmin %s\n" % tw,
        "tokens_three": "GET /v1/jobs\n\nread %s extra\n" % tw,
        "tokens_empty": "GET /v1/jobs\n\n# nothing\n\n",
        "tokens_crlf": "GET /v1/jobs\nAuthorization: Bearer %s\n\nwrite %s\r\nread %s\r\n" % (tw, tw, tw),
    }
    for name, text in guard.items():
        write("http_guard", name, text)

    JSON, NPY, MP, ARC = 2, 4, 8, 16
    CT, CL, TE = 32, 64, 128
    body = {
        "json": (JSON | CT | CL, 0, ["application/json", "42", "", "", ""]),
        "json_charset": (JSON | CT | CL, 0, ["Application/JSON; charset=utf-8", "10", "", "", ""]),
        "json_big": (JSON | CT | CL, 0, ["application/json", "1001", "", "", ""]),
        "json_huge": (JSON | CT | CL, 0, ["application/json", "18446744073709551616", "", "", ""]),
        "json_neg": (JSON | CT | CL, 0, ["application/json", "-1", "", "", ""]),
        "npy": (NPY | MP | CT | CL, 4, ["application/x-npy", "128", "", "", ""]),
        "octet_chunked": (NPY | CT | TE, 0, ["application/octet-stream", "", "chunked", "", ""]),
        "npy_too_large": (NPY | CT | CL, 0, ["application/x-npy", "11", "", "", ""]),
        "multipart": (MP | JSON | CT | CL, 7, ["multipart/form-data; boundary=xyz", "300", "",
                                               "gaps", "gaps.npy"]),
        "mp_path": (MP | CT | CL, 7, ["multipart/form-data;boundary=b", "9", "", "file",
                                      "../../etc/passwd"]),
        "mp_dotfile": (MP | CT | TE, 3, ["multipart/form-data", "", "chunked", "f", "dir/.hidden"]),
        "mp_key_only": (MP | CT | CL, 1, ["multipart/form-data", "5", "", "model.json", ""]),
        "mp_trailing_slash": (MP | CT | CL, 3, ["multipart/form-data", "5", "", "k", "a/b/"]),
        "mp_space": (MP | CT | CL, 3, ["multipart/form-data", "5", "", "k", "my file.npy"]),
        "mp_long": (MP | CT | CL, 3, ["multipart/form-data", "5", "", "k", "n" * 130]),
        "tar": (ARC | CT | CL, 4, ["application/x-tar", "512", "", "", ""]),
        "gzip": (ARC | CT | CL, 4, ["application/gzip", "512", "", "", ""]),
        "zip_wrong_route": (JSON | CT | CL, 0, ["application/zip", "512", "", "", ""]),
        "no_body_route": (CT | CL, 0, ["application/json", "3", "", "", ""]),
        "cl_zero": (CT | CL, 0, ["application/json", "0", "", "", ""]),
        "no_headers": (JSON, 0, ["", "", "", "", ""]),
        "no_ct": (JSON | CL, 0, ["", "3", "", "", ""]),
        "ct_prefix": (JSON | CT | CL, 0, ["application/jsonx", "3", "", "", ""]),
        "ct_space": (JSON | CT | CL, 0, ["application/json ; q=1", "3", "", "", ""]),
        "cl_hex": (JSON | CT | CL, 0, ["application/json", "0x10", "", "", ""]),
        "cl_blank": (JSON | CT | CL, 0, ["application/json", " 7", "", "", ""]),
    }
    for name, (b0, b1, vals) in body.items():
        write("http_body", name, bytes([b0, b1]) + "\n".join(vals).encode())

    query = {
        "npy": "application/x-npy", "json": "application/json",
        "npy_q": "application/json;q=0.9, application/x-npy", "npy_q0": "application/x-npy;q=0",
        "both_equal": "application/x-npy;q=0.5,application/json;q=0.5",
        "wild": "*/*", "app_wild": "application/*;q=0.2, application/x-npy; q=0.1",
        "browser": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        "q_bad": "application/x-npy;q=abc", "q_big": "application/x-npy;Q=7, application/json;q=nan",
        "q_neg": "application/x-npy;q=-1", "case": "APPLICATION/X-NPY\t;\tq=1",
        "fields_w": "w", "fields_both": "w,lambda", "fields_none": "none", "fields_bad": "w,x",
        "fields_commas": ",,w,,", "fields_long": "w," * 40 + "bogus",
        "pairs_all": "mean,std,max,p95,share_above,lambda_mean,opened", "pairs_one": "p95",
        "pairs_trailing": "mean,", "pairs_empty_name": "mean,,std", "pairs_bad": "mean,median",
        "empty": "",
    }
    for name, text in query.items():
        write("http_query", name, text)


def http_gaps_corpus():
    """Seeds of fuzz_http_gaps.c: a first byte (bits 0-1 m - 1, 2-4 max_gaps - 1,
    5-6 0 solve body, 1 cloud body, 2 .npy body, 3 query string), the rest."""
    def hb(m, max_gaps, mode):
        return bytes([(m - 1) | (max_gaps - 1) << 2 | mode << 5])
    solve = {
        "g": '{"g": [1.5, -2, 0]}', "g_opts": '{"solver": "gi", "g": [0, 1e-3, 2E2], "tol": 1e-9}',
        "g_short": '{"g": [1, 2]}', "g_nested": '{"g": [[1, 2, 3]]}', "g_missing": '{"x": 1}',
        "g_string": '{"g": [1, "2", 3]}', "g_null": '{"g": [1, null, 3]}',
        "g_big": '{"g": [1, 1e309, 3]}', "g_obj": '{"g": {"a": 1}}', "g_num": '{"g": 3}',
        "g_dup": '{"g": [1, 2, 3], "g": [4, 5, 6]}', "g_gaps": '{"gaps": [[1, 2, 3]], "g": 1}',
        "g_escape": '{"\\u0067": [1, 2, 3]}', "not_obj": '[1, 2, 3]', "trailing": '{"g": [1,2,3]} x',
    }
    for name, text in solve.items():
        write("http_gaps", "solve_" + name, hb(3, 4, 0) + text.encode())
    write("http_gaps", "solve_nested_m1", hb(1, 4, 0) + b'{"g": [[1, 2, 3]]}')
    write("http_gaps", "solve_malformed_null", hb(3, 3, 0) + b'{"g": [1, null, 3], ')
    write("http_gaps", "cloud_malformed_string", hb(3, 3, 1) + b'{"gaps": [[1, 2], [3, "4"]] ]')
    cloud = {
        "gaps": '{"gaps": [[1, 2], [3, 4], [5, 6]]}', "one": '{"gaps": [[1, 2]], "solver": "ipm"}',
        "too_many": '{"gaps": [[1, 2], [3, 4], [5, 6], [7, 8], [9, 0]]}',
        "flat": '{"gaps": [1, 2]}', "empty": '{"gaps": []}', "empty_rows": '{"gaps": [[], []]}',
        "ragged": '{"gaps": [[1, 2], [3]]}', "wide": '{"gaps": [[1, 2, 3]]}',
        "mixed": '{"gaps": [[1, 2], 3]}', "nonfinite": '{"gaps": [[1, 2], [3, -1e400000]]}',
        "string": '{"gaps": [[1, 2], [3, "4"]]}', "not_array": '{"gaps": "a"}',
        "with_g": '{"g": [1, "x"], "gaps": [[1, 2]]}', "generate": '{"generate": {"count": 2}}',
    }
    for name, text in cloud.items():
        write("http_gaps", "cloud_" + name, hb(2, 4, 1) + text.encode())
    v6 = [1.5, -2.0, 0.1, 0.0, 1e-300, 7.0]
    npys = {
        "c_3x2": npy(dct("(3, 2)"), v6), "f_3x2": npy(dct("(3, 2)", True), v6),
        "f_1x2": npy(dct("(1, 2)", True), [1, 2]), "1d": npy(dct("(2,)"), [1, 2]),
        "1d_wrong": npy(dct("(3,)"), [1, 2, 3]), "wide": npy(dct("(2, 3)"), v6),
        "zero_rows": npy(dct("(0, 2)")), "too_many": npy(dct("(5, 2)"), v6 + [1, 2, 3, 4]),
        "nan": npy(dct("(3, 2)"), v6[:3] + [float("nan")] + v6[4:]),
        "inf_1d": npy(dct("(2,)"), [1, float("inf")]),
        "f4": npy(dct("(2,)", descr="<f4"), [1, 2], fmt="<f"), "truncated": npy(dct("(3, 2)"), v6[:5]),
        "be": npy(dct("(1, 2)", descr=">f8"), [1, 2], fmt=">d"),
    }
    for name, data in npys.items():
        write("http_gaps", "npy_" + name, hb(2, 4, 2) + data)
    queries = {
        "opts": "solver=gi&tol=1e-9&max_iter=50&fasteners=0,3,7&cache=false",
        "lists": "fasteners=all&fixed_pairs=1,,2,&fastener_fraction=0.5",
        "bad_nums": "tol=0x9&max_iter= 4&timeout_s=+1&fastener_fraction=01",
        "bare": "tol&label&cache=1", "unknown": "frob=1&warm_start=j_0123456789abcdef",
        "empty_list": "fasteners=&fixed_pairs=none&cache=yes", "eq_in_value": "label=a=b&=x&",
        "big": "tol=1e999&timeout_s=-0&max_iter=9007199254740993",
    }
    for name, text in queries.items():
        write("http_gaps", "query_" + name, hb(1, 1, 3) + text.encode())


def mpi_side_corpus():
    """Seeds of fuzz_mpi_side.c: the chunk count n, a byte whose bit 0 stamps
    the run's header, then the sidecar's bytes (host order: little-endian)."""
    def words(n, version=2):
        return [0x0102030405060708, version, n * 3 + 1, 7, n + 1, 3, 4, n,
                0x9e3779b97f4a7c15, 128]

    def side(n, marks=(), version=2, extra=b""):
        head = b"GSMPIRUN" + b"".join(struct.pack("<Q", w) for w in words(n, version))
        head += bytes(128 - len(head))
        m = bytes(marks) + bytes(n - len(marks))
        m += bytes((n + 7) // 8 * 8 - n)
        sums = b"".join(struct.pack("<Q", 0x1111 * (c + 1)) for c in range(n))
        return head + m + sums + extra
    seeds = {
        "empty_run": bytes([0, 0]) + side(0), "three": bytes([3, 0]) + side(3, [1, 0, 2]),
        "stamped": bytes([5, 1]) + bytes(128) + bytes([1, 1, 1, 1, 1, 0, 0, 0]) + bytes(40),
        "records": bytes([2, 0]) + side(2, [1, 1], extra=bytes(64)),
        "short": bytes([9, 0]) + side(9, [1] * 9)[:-1], "version1": bytes([1, 0]) + side(1, [1], 1),
        "other_n": bytes([4, 0]) + side(5, [1] * 5), "many": bytes([200, 0]) + side(200, [1, 0] * 100),
        "header_only": bytes([1, 1]) + bytes(64), "garbage": bytes([7, 0]) + b"GSMPIRUN" + bytes(30),
    }
    for name, data in seeds.items():
        write("mpi_side", name, data)


if __name__ == "__main__":
    main()
