#!/usr/bin/env bash
# test_gen_batch.sh -- end-to-end check of the offline commands: gapsim-gen
# writes a small sandwich model and a cloud, gapsim-batch solves it; plus the
# documented exit codes on bad input. Usage: test_gen_batch.sh BIN_DIR TMP_DIR
. "$(dirname "$0")/lib.sh"
cli_start cli_gen_batch "$1" "$2"

"$BIN/gapsim-gen" --kind sandwich --small --out "$TMP" --name sw --gaps 12 --seed 3 > "$TMP/gen.out" 2>&1
check "gen exit 0" test $? -eq 0
check "gen wrote model, blocks, gaps" test -f "$TMP/sw.json" -a -f "$TMP/sw.part0.npy" -a -f "$TMP/sw.gaps.npy"
check "gen reports nodes in two pairs" grep -Eq "two pairs +39 nodes" "$TMP/gen.out"

"$BIN/gapsim-batch" "$TMP/sw.json" --gaps "$TMP/sw.gaps.npy" --fraction 0.5 --threads 2 \
  --out "$TMP/w.npy" > "$TMP/batch.out" 2>&1
check "batch exit 0" test $? -eq 0
check "batch solved all 12 optimally" grep -q "gaps solved          12 (12 optimal)" "$TMP/batch.out"
check "batch wrote residuals" test -s "$TMP/w.npy"
check "auto leaves L_Q out" grep -q "Cholesky of Q 0.00 s (not needed by this method)" "$TMP/batch.out"
# L_Q only where read: GI without it and GI from a saved factor file (which
# has it) give the same residuals bit for bit; NPM gets it
"$BIN/gapsim-batch" "$TMP/sw.json" --gaps "$TMP/sw.gaps.npy" --fraction 0.5 --threads 2 \
  --method gi --out "$TMP/wgi.npy" > "$TMP/gi.out" 2>&1
check "gi without L_Q exit 0" test $? -eq 0
check "gi without L_Q says so" grep -q "(not needed by this method)" "$TMP/gi.out"
"$BIN/gapsim-batch" "$TMP/sw.json" --gaps "$TMP/sw.gaps.npy" --fraction 0.5 --threads 2 \
  --method gi --factors "$TMP/f.bin" --out "$TMP/wgif.npy" > "$TMP/gif.out" 2>&1
check "gi with a saved factor file exit 0" test $? -eq 0
check "a saved factor file has L_Q" grep -q "cond_1(Q) ~" "$TMP/gif.out"
check "gi bit-identical with and without L_Q" cmp -s "$TMP/wgi.npy" "$TMP/wgif.npy"
# loading the file: GI leaves its L_Q there (checked, not kept), NPM takes it
"$BIN/gapsim-batch" "$TMP/sw.json" --gaps "$TMP/sw.gaps.npy" --fraction 0.5 --threads 2 \
  --method gi --factors "$TMP/f.bin" --out "$TMP/wgif2.npy" > "$TMP/gif2.out" 2>&1
check "gi loads the factor file" grep -q "factors    loaded from" "$TMP/gif2.out"
check "gi loads it without L_Q" grep -q "(not needed by this method)" "$TMP/gif2.out"
check "gi bit-identical from the loaded file" cmp -s "$TMP/wgi.npy" "$TMP/wgif2.npy"
"$BIN/gapsim-batch" "$TMP/sw.json" --gaps "$TMP/sw.gaps.npy" --fraction 0.5 --threads 1 \
  --method npm --limit 3 --factors "$TMP/f.bin" > "$TMP/npmf.out" 2>&1
check "npm loads L_Q from the factor file" grep -q "cond_1(Q) ~" "$TMP/npmf.out"
check "npm from the file solved 3" grep -q "gaps solved          3 (3 optimal)" "$TMP/npmf.out"
# a whole-mesh (sparse) model's factor file: GI loads it without factoring
# the meshes (bit-identical), GI primal solves with K and factors them
"$BIN/gapsim-gen" --kind lap --small --uncondensed --no-cond --out "$TMP/sp" --gaps 4 > /dev/null 2>&1
check "gen writes an uncondensed model" test -f "$TMP/sp/lap.json"
"$BIN/gapsim-batch" "$TMP/sp/lap.json" --gaps "$TMP/sp/lap.gaps.npy" --fraction 0.5 --method gi \
  --factors "$TMP/sp.bin" --out "$TMP/sp1.npy" > "$TMP/sp1.out" 2>&1
"$BIN/gapsim-batch" "$TMP/sp/lap.json" --gaps "$TMP/sp/lap.gaps.npy" --fraction 0.5 --method gi \
  --factors "$TMP/sp.bin" --out "$TMP/sp2.npy" > "$TMP/sp2.out" 2>&1
check "gi loads a sparse model's file without factoring the meshes" \
  grep -q "loaded from .*sparse parts not factored" "$TMP/sp2.out"
check "gi bit-identical from that file" cmp -s "$TMP/sp1.npy" "$TMP/sp2.npy"
"$BIN/gapsim-batch" "$TMP/sp/lap.json" --gaps "$TMP/sp/lap.gaps.npy" --fraction 0.5 --method gi \
  --form primal --factors "$TMP/sp.bin" --out "$TMP/sp3.npy" > "$TMP/sp3.out" 2>&1
check "gi primal from that file exit 0" test $? -eq 0
check "gi primal factors the meshes" bash -c "! grep -q 'sparse parts not factored' '$TMP/sp3.out'"
check "gi primal agrees with gi relative within 1e-7 mm" python3 -c "
import array, sys
def data(path):  # the float64 data of an .npy file (after its header)
    b = open(path, 'rb').read()
    return array.array('d', b[10 + int.from_bytes(b[8:10], 'little'):])
a, b = data(sys.argv[1]), data(sys.argv[2])
assert len(a) == len(b) > 0 and max(abs(x - y) for x, y in zip(a, b)) <= 1e-7
" "$TMP/sp1.npy" "$TMP/sp3.npy"
"$BIN/gapsim-batch" "$TMP/sw.json" --gaps "$TMP/sw.gaps.npy" --fraction 0.5 --threads 1 \
  --method npm --limit 3 > "$TMP/npm.out" 2>&1
check "npm computes L_Q" grep -Eq "Cholesky of Q [0-9.]+ s, condition" "$TMP/npm.out"
check "npm solved 3" grep -q "gaps solved          3 (3 optimal)" "$TMP/npm.out"
# --summary: gapsimd's summary object, and the printed lines are its figures
"$BIN/gapsim-batch" "$TMP/sw.json" --gaps "$TMP/sw.gaps.npy" --fraction 0.5 --threads 1 \
  --threshold 2.5 --summary "$TMP/s.json" > "$TMP/sum.out" 2>&1
check "batch --summary exit 0" test $? -eq 0
check "summary file: 12 results of 156 pairs, all optimal, threshold 2.5" python3 -c "
import json, sys
s = json.load(open(sys.argv[1]))
assert (s['count'], s['total'], s['m'], s['threshold']) == (12, 12, 156, 2.5), s['count']
assert s['statuses'] == {'optimal': 12} and s['failures'] == 0, s['statuses']
assert len(s['pairs']['p95']) == 156 and sum(s['n_act']['histogram']['counts']) == 12
" "$TMP/s.json"
check "printed gaps above the threshold are the file's share" python3 -c "
import json, re, sys
s = json.load(open(sys.argv[1]))
n = int(re.search(r'gaps with max > 2.5 mm (\d+)', open(sys.argv[2]).read()).group(1))
assert n == round(s['share_gaps_above'] * 12), (n, s['share_gaps_above'])
mr = s['max_residual']
line = re.search(r'median ([0-9.]+) mm, p95 ([0-9.]+) mm', open(sys.argv[2]).read())
assert abs(float(line.group(1)) - mr['median']) < 1e-4 and abs(float(line.group(2)) - mr['p95']) < 1e-4
" "$TMP/s.json" "$TMP/sum.out"
# 12 x 156 doubles + header: exactly 12*156*8 bytes of data after a 64-byte-aligned header
size=$(stat -c %s "$TMP/w.npy")
check "residual file size" test $(( (size - 12 * 156 * 8) % 64 )) -eq 0 -a "$size" -gt $((12 * 156 * 8))

"$BIN/gapsim-batch" "$TMP/sw.json" --gaps "$TMP/sw.gaps.npy" --fraction 0.5 --method ref \
  --threads 1 --out "$TMP/wref.npy" > "$TMP/ref.out" 2>&1
check "batch with the oracle exit 0" test $? -eq 0
check "oracle named in the summary" grep -q "solver               ref: ref/dual x12" "$TMP/ref.out"
check "default solver is auto and says what it ran" \
  grep -Eq "solver               auto:( [a-z]+/[a-z]+ x[0-9]+)+$" "$TMP/batch.out"
check "gi and the oracle give identical residual files in size" \
  test "$(stat -c %s "$TMP/w.npy")" -eq "$(stat -c %s "$TMP/wref.npy")"
"$BIN/gapsim-batch" "$TMP/sw.json" --gaps "$TMP/sw.gaps.npy" --method gi --form sideways \
  > "$TMP/e3.out" 2>&1
check "unknown formulation exits 2" test $? -eq 2
"$BIN/gapsim-batch" "$TMP/sw.json" --gaps "$TMP/sw.gaps.npy" --method ref --form relative \
  > "$TMP/e4.out" 2>&1
check "unsupported method/formulation exits 2" test $? -eq 2
check "unsupported combination explained" grep -q "does not support the relative formulation" "$TMP/e4.out"

"$BIN/gapsim-batch" "$TMP/missing.json" --gaps "$TMP/sw.gaps.npy" > "$TMP/e1.out" 2>&1
check "missing model exits 1" test $? -eq 1
check "missing model names the file" grep -q "missing.json" "$TMP/e1.out"

"$BIN/gapsim-gen" --kind lap --small --out "$TMP" --name lap --gaps 3 > /dev/null 2>&1
"$BIN/gapsim-batch" "$TMP/sw.json" --gaps "$TMP/lap.gaps.npy" > "$TMP/e2.out" 2>&1
check "gaps of another model exit 1" test $? -eq 1
check "dimension mismatch reported" grep -q "dimension_mismatch" "$TMP/e2.out"

# a cloud of similar gaps, solved chained: warm starts reported, the same
# residual file size; bad --chain / --window / --scatter values exit 2
"$BIN/gapsim-gen" --kind sandwich --small --out "$TMP" --name sim --gaps 12 --seed 3 \
  --scatter 0.1 > /dev/null 2>&1
check "gen --scatter exit 0" test $? -eq 0
check "scattered cloud differs from the independent one" \
  bash -c "! cmp -s '$TMP/sim.gaps.npy' '$TMP/sw.gaps.npy'"
"$BIN/gapsim-batch" "$TMP/sw.json" --gaps "$TMP/sim.gaps.npy" --fraction 0.5 --method gi \
  --threads 1 --chain on --window 6 --out "$TMP/wchain.npy" > "$TMP/chain.out" 2>&1
check "chained batch exit 0" test $? -eq 0
check "chained batch reports its warm starts" grep -Eq "warm started +11 of 12 gaps" "$TMP/chain.out"
check "chained batch names the chain" grep -q "chain on" "$TMP/chain.out"
# progress on stderr: none by default off a terminal, with --progress a line
# a second at most and the last one at the end (--threads 1: the total is 12)
"$BIN/gapsim-batch" "$TMP/sw.json" --gaps "$TMP/sim.gaps.npy" --threads 1 \
  > /dev/null 2> "$TMP/p0.err"
check "no progress off a terminal by default" test ! -s "$TMP/p0.err"
"$BIN/gapsim-batch" "$TMP/sw.json" --gaps "$TMP/sim.gaps.npy" --threads 1 --progress \
  > /dev/null 2> "$TMP/p1.err"
check "--progress ends with the whole cloud done" \
  bash -c "tail -n 1 '$TMP/p1.err' | grep -Eq '^cloud done: 12/12 done, [0-9.]+ solves/s$'"
"$BIN/gapsim-batch" "$TMP/sw.json" --gaps "$TMP/sim.gaps.npy" --chain sometimes > "$TMP/e5.out" 2>&1
check "bad --chain exits 2" test $? -eq 2
check "bad --chain explained" grep -q "is not off, auto or on" "$TMP/e5.out"
"$BIN/gapsim-batch" "$TMP/sw.json" --gaps "$TMP/sim.gaps.npy" --window 0 > /dev/null 2>&1
check "bad --window exits 2" test $? -eq 2
"$BIN/gapsim-gen" --kind lap --small --out "$TMP" --scatter 1.5 > /dev/null 2>&1
check "bad --scatter exits 2" test $? -eq 2

"$BIN/gapsim-batch" "$TMP/sw.json" --bogus > /dev/null 2>&1
check "unknown option exits 2" test $? -eq 2
# a number must be wholly a number in its range (atof read '0.5x' as 0.5 and
# 'abc' as 0; --limit 0 said the file held no gap vector)
for bad in "--fraction 0.5x" "--fraction 1.5" "--limit 0" "--limit abc" "--threads 2x" \
           "--threshold -1"; do
  # shellcheck disable=SC2086 # the option and its value, split on purpose
  "$BIN/gapsim-batch" "$TMP/sw.json" --gaps "$TMP/sim.gaps.npy" $bad > "$TMP/e6.out" 2>&1
  check "gapsim-batch $bad exits 2" test $? -eq 2
  check "gapsim-batch $bad names the option and the value" \
    grep -q "^gapsim-batch: ${bad% *}: '${bad#* }' is not " "$TMP/e6.out"
done
# one option table for gapsim-batch and gapsim-mpi: an option of gapsim-mpi
# only is unknown here, a second model is named, no word prints the usage
"$BIN/gapsim-batch" "$TMP/sw.json" --gaps "$TMP/sim.gaps.npy" --chunk 4 > "$TMP/e7.out" 2>&1
check "gapsim-mpi's --chunk exits 2 in gapsim-batch" test $? -eq 2
check "gapsim-mpi's --chunk is unknown to gapsim-batch" \
  grep -q "^gapsim-batch: unknown option '--chunk'" "$TMP/e7.out"
"$BIN/gapsim-batch" "$TMP/sw.json" other.json --gaps "$TMP/sim.gaps.npy" > "$TMP/e8.out" 2>&1
check "a second model exits 2" test $? -eq 2
check "a second model is named" grep -q "unexpected argument 'other.json'" "$TMP/e8.out"
"$BIN/gapsim-batch" > "$TMP/e9.out" 2>&1
check "no word exits 2" test $? -eq 2
check "no word prints the usage" grep -q "^usage: gapsim-batch MODEL.json" "$TMP/e9.out"
"$BIN/gapsim-gen" --kind nope > /dev/null 2>&1
check "unknown kind exits 2" test $? -eq 2

cli_finish
