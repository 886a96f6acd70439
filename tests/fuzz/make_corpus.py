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


if __name__ == "__main__":
    main()
