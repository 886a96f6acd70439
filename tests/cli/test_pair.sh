#!/usr/bin/env bash
# test_pair.sh -- `gapsim pair` end to end: two node CSV files of a 4 x 4
# junction (10 mm pitch, the upper surface 0.3 mm above the lower one, one
# upper node far away) give 16 pairs with normal +z and nominal gaps 0.3 mm,
# the report names the unpaired node, the JSON parses and its nodes / pairs
# keys have the model JSON's shape; bad input gives the documented exit codes;
# an output that cannot be written (/dev/full) leaves neither output, nothing
# on stdout.
# Usage: test_pair.sh BIN_DIR TMP_DIR
. "$(dirname "$0")/lib.sh"
cli_start cli_pair "$1" "$2"

{ echo "label,x,y,z"; for i in 0 1 2 3; do for j in 0 1 2 3; do
    echo "$((100 + 4 * i + j)),$((10 * i)),$((10 * j)),0"; done; done; } > "$TMP/lower.csv"
{ echo "# upper surface"; for i in 0 1 2 3; do for j in 0 1 2 3; do
    echo "$((200 + 4 * i + j)) $((10 * i)).02 $((10 * j)) 0.3"; done; done
  echo "999 500 500 0.3"; } > "$TMP/upper.csv"

"$BIN/gapsim" pair --upper "$TMP/upper.csv" --lower "$TMP/lower.csv" --tol 0.5 \
  --upper-part 1 --lower-part 0 -o "$TMP/pairs.json" --gaps-out "$TMP/g0.npy" 2> "$TMP/err.txt"
check "pair exit 0" test $? -eq 0
check "report: 16 pairs" grep -q "16 pairs (16 upper-lower of 17 upper and 16 lower nodes, 0 jig)" "$TMP/err.txt"
check "report names the unpaired node" grep -q "1 upper node unpaired: 999" "$TMP/err.txt"
python3 - "$TMP/pairs.json" "$TMP/g0.npy" <<'PY'
import json, struct, sys
doc = json.load(open(sys.argv[1]))
nodes, pairs = doc["nodes"], doc["pairs"]
assert set(doc) == {"nodes", "pairs"}, doc.keys()
assert len(nodes["label"]) == 32 and len(pairs["i"]) == 16
for k in range(16):
    i, j = pairs["i"][k], pairs["j"][k]
    assert nodes["part"][i] == 1 and nodes["part"][j] == 0
    assert nodes["label"][i] - 200 == nodes["label"][j] - 100, (i, j)
    assert (pairs["ci"][k], pairs["cj"][k]) == (-1, 1)
    assert (pairs["nx"][k], pairs["ny"][k], pairs["nz"][k]) == (0, 0, 1), k
raw = open(sys.argv[2], "rb").read()
hl = struct.unpack("<H", raw[8:10])[0]
g = struct.unpack("<16d", raw[10 + hl:])
assert all(abs(x - 0.3) < 1e-12 for x in g), g
PY
check "JSON nodes/pairs and nominal gaps" test $? -eq 0

"$BIN/gapsim" pair --upper "$TMP/upper.csv" > /dev/null 2>&1
check "missing --lower exits 2" test $? -eq 2
printf '1,0,0,0\n2,zero,0,0\n' > "$TMP/bad.csv"
"$BIN/gapsim" pair --upper "$TMP/upper.csv" --lower "$TMP/bad.csv" > /dev/null 2> "$TMP/bad.txt"
check "bad CSV exits 5" test $? -eq 5
check "bad CSV names the file and line" grep -q "bad.csv: line 2: field 2 'zero'" "$TMP/bad.txt"
printf '1,0,0,0\n2,10,0,0\n3,20,0,0\n' > "$TMP/line.csv"
"$BIN/gapsim" pair --upper "$TMP/upper.csv" --lower "$TMP/line.csv" > /dev/null 2> "$TMP/line.txt"
check "collinear lower surface exits 2" test $? -eq 2
check "collinear: names the node" grep -q "lower node 1" "$TMP/line.txt"
"$BIN/gapsim" pair --upper "$TMP/upper.csv" --lower "$TMP/line.csv" --normal 0,0,1 > /dev/null 2>&1
check "collinear with --normal exits 0" test $? -eq 0

# an output that cannot be written (/dev/full: ENOSPC) leaves neither file
# and prints nothing: -o was committed before the .npy failed, and without
# -o the JSON went to stdout first
rm -f "$TMP/p2.json"
"$BIN/gapsim" pair --upper "$TMP/upper.csv" --lower "$TMP/lower.csv" -o "$TMP/p2.json" \
  --gaps-out /dev/full > "$TMP/full.out" 2> "$TMP/full.txt"
check "gaps-out /dev/full exits 5" test $? -eq 5
check "gaps-out /dev/full: no -o file" test ! -e "$TMP/p2.json"
check "gaps-out /dev/full: the reason" grep -q "No space left on device" "$TMP/full.txt"
"$BIN/gapsim" pair --upper "$TMP/upper.csv" --lower "$TMP/lower.csv" \
  --gaps-out /dev/full > "$TMP/full2.out" 2> /dev/null
check "gaps-out /dev/full without -o exits 5" test $? -eq 5
check "gaps-out /dev/full without -o: nothing on stdout" test ! -s "$TMP/full2.out"
"$BIN/gapsim" pair --upper "$TMP/upper.csv" --lower "$TMP/lower.csv" -o /dev/full \
  --gaps-out "$TMP/g2.npy" > /dev/null 2>&1
check "-o /dev/full exits 5, no --gaps-out file" test $? -eq 5 -a ! -e "$TMP/g2.npy"
# without -o the JSON goes to stdout: a stdout that cannot take it (a full
# disk) leaves no --gaps-out file (it was committed first), no report
"$BIN/gapsim" pair --upper "$TMP/upper.csv" --lower "$TMP/lower.csv" \
  --gaps-out "$TMP/g3.npy" > /dev/full 2> "$TMP/full3.txt"
check "stdout /dev/full exits 5, no --gaps-out file" test $? -eq 5 -a ! -e "$TMP/g3.npy"
check "stdout /dev/full: the reason, no report" \
  test "$(grep -c 'No space left on device' "$TMP/full3.txt")" -ge 1 -a \
       "$(grep -c 'pairs' "$TMP/full3.txt")" -eq 0
# -o and --gaps-out naming one file: the gaps were lost under the JSON
"$BIN/gapsim" pair --upper "$TMP/upper.csv" --lower "$TMP/lower.csv" -o "$TMP/same" \
  --gaps-out "$TMP/same" > /dev/null 2> "$TMP/same.txt"
check "-o and --gaps-out the same file exits 2" test $? -eq 2
check "-o and --gaps-out the same file: said, nothing written" \
  test "$(grep -c 'are the same file' "$TMP/same.txt")" -eq 1 -a ! -e "$TMP/same"
# a FIFO without a reader: the open waits, and ^C must still end it (the
# signals were blocked around the open: only kill -9 ended it)
mkfifo "$TMP/ff"
OPENBLAS_NUM_THREADS=1 timeout -s INT -k 5 1 "$BIN/gapsim" pair --upper "$TMP/upper.csv" \
  --lower "$TMP/lower.csv" -o "$TMP/ff" > /dev/null 2>&1
check "-o FIFO without a reader: ^C ends it (124, not killed: 137)" test $? -eq 124
rm -f "$TMP/ff"
check "no temporary file left" test -z "$(ls "$TMP" | grep '\.tmp\.')"

cli_finish
