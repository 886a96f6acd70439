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

# ---- gapsim-gen's defects of the 2026-11-28 review ---------------------------
# the clamped lap panel with the optional support points (refused for any N):
# built, the points there (the panel's block changes, the flange's does not),
# and the model solves
"$BIN/gapsim-gen" --kind lap --small --out "$TMP/s0" --gaps 20 > /dev/null 2>&1
"$BIN/gapsim-gen" --kind lap --small --supports 3 --out "$TMP/s3" --gaps 20 > "$TMP/s3.out" 2>&1
check "lap --supports 3 with the clamped edge exit 0" test $? -eq 0
check "lap --supports 3: three w fewer in the panel" grep -Eq "part 0 +wing_panel .* FE +309 free DOFs" "$TMP/s3.out"
check "lap --supports 3: the panel's block changed" bash -c "! cmp -s '$TMP/s0/lap.part0.npy' '$TMP/s3/lap.part0.npy'"
check "lap --supports 3: the flange's block did not" cmp -s "$TMP/s0/lap.part1.npy" "$TMP/s3/lap.part1.npy"
"$BIN/gapsim-batch" "$TMP/s3/lap.json" --gaps "$TMP/s3/lap.gaps.npy" --fraction 0.5 --threads 2 \
  > "$TMP/s3b.out" 2>&1
check "lap --supports 3 solves, all optimal" grep -q "gaps solved          20 (20 optimal)" "$TMP/s3b.out"

# usage errors (exit 2, nothing on stdout, no directory made) naming the option
gen_usage() { # NAME WORDS ARGS...: exit 2, WORDS on stderr, nothing on stdout or in never/
  local name=$1 words=$2; shift 2
  "$BIN/gapsim-gen" "$@" --out "$TMP/never" > "$TMP/u.out" 2> "$TMP/u.err"
  local rc=$?
  check "$name exits 2" test $rc -eq 2
  check "$name names $words" grep -qF -- "$words" "$TMP/u.err"
  check "$name: nothing on stdout, nothing made" test ! -s "$TMP/u.out" -a ! -e "$TMP/never"
}
gen_usage "--uncondensed --matrix-format npy" "--matrix-format npy writes dense blocks, and --uncondensed" \
  --kind lap --small --uncondensed --matrix-format npy
gen_usage "abaqus-user-element of a point-supported plate" "--matrix-format abaqus-user-element cannot hold part 2" \
  --kind sandwich --small --clamp 1 --uncondensed --matrix-format abaqus-user-element
gen_usage "--nx 1" "bad value for --nx: '1' (an integer within [3, 20000])" --kind lap --small --nx 1
gen_usage "--thickness 0" "bad value for --thickness: '0'" --kind lap --small --thickness 0
gen_usage "--thickness 1e300" "bad value for --thickness: '1e300'" --kind lap --small --thickness 1e300
gen_usage "--far -1" "bad value for --far: '-1'" --kind lap --small --far -1
gen_usage "--far 1e300" "bad value for --far: '1e300'" --kind lap --small --far 1e300
gen_usage "--hy 1e-300" "bad value for --hy: '1e-300'" --kind lap --small --hy 1e-300
gen_usage "--length 1e-300" "bad value for --length: '1e-300'" --kind lap --small --length 1e-300
gen_usage "--length 1e-5" "bad value for --length: '1e-5'" --kind lap --small --length 1e-5
gen_usage "elements of aspect 40" "--hy 0.5: the elements would be 20 x 0.5 mm" --kind lap --small --hy 0.5
gen_usage "too thin for its elements" "--thickness 0.01: the wing panel (part 0) would be 0.01 mm thick" \
  --kind lap --small --thickness 0.01
gen_usage "--clamp 0 without supports" "--clamp 0 leaves the wing panel on support points only: give --supports" \
  --kind lap --small --clamp 0
gen_usage "sandwich --supports 0" "--supports 0: the sandwich's buttstraps" --kind sandwich --small --supports 0
gen_usage "sandwich --scale 0.2" "--scale 0.2 is too small for the sandwich kind" --kind sandwich --scale 0.2
gen_usage "lap --scale 0.05" "--scale 0.05 is too small for the lap kind" --kind lap --scale 0.05
gen_usage "--far 4,40" "--far 4,40: the wing panel (part 0) extends 4 mm beyond the junction" \
  --kind lap --small --far 4,40
gen_usage "--corr 1e300" "bad value for --corr: '1e300'" --kind lap --small --corr 1e300
gen_usage "--fast-load 1e308" "bad value for --fast-load: '1e308'" --kind lap --small --fast-load 1e308
gen_usage "--name ." "--name must be non-empty without '/', and not '.' or '..'" --kind lap --small --name .
gen_usage "--name .." "--name must be non-empty" --kind lap --small --name ..
"$BIN/gapsim-gen" --kind lap --small --out= > "$TMP/u.out" 2> "$TMP/u.err"
check "--out= exits 2" test $? -eq 2
check "--out= says it is empty" grep -q "^gapsim-gen: --out must not be empty" "$TMP/u.err"
"$BIN/gapsim-gen" --kind lap --small --out "$TMP/$(printf 'd%.0s' $(seq 4100))" > "$TMP/u.out" 2> "$TMP/u.err"
check "a 4100-byte --out exits 2" test $? -eq 2
check "a 4100-byte --out is too long" grep -q "^gapsim-gen: --out is too long" "$TMP/u.err"
touch "$TMP/afile"
for d in "$TMP/afile" /dev/full; do
  "$BIN/gapsim-gen" --kind lap --small --gaps 1 --out "$d" > "$TMP/u.out" 2> "$TMP/u.err"
  check "--out $d (a file) exits 1" test $? -eq 1
  check "--out $d: not a directory" grep -q "^gapsim-gen: --out $d: not a directory" "$TMP/u.err"
done
# a model too large for the memory is refused before it is built, naming the options
"$BIN/gapsim-gen" --kind lap --nx 20000 --ny 2000 --length 100000 --hy 5 --gaps 1 --out "$TMP/huge" \
  > "$TMP/u.out" 2> "$TMP/u.err"
check "a model beyond the memory exits 1" test $? -eq 1
check "a model beyond the memory: too_large naming --nx" grep -q "^gapsim-gen: too_large: building this model needs about .*(--nx, --ny" "$TMP/u.err"
check "a model beyond the memory: nothing made" test ! -e "$TMP/huge" -a ! -s "$TMP/u.out"

# a failed write leaves none of the files, and no report on stdout: a full
# device as the gap file, a directory where the JSON or the pattern goes
nothing_left() { # DIR KEEP: DIR holds KEEP only (no model file, no temporary file)
  test "$(ls -A "$1")" = "$2"
}
mkdir -p "$TMP/df" "$TMP/dj/lap.json" "$TMP/dp/lap.pattern.npy"
ln -s /dev/full "$TMP/df/lap.gaps.npy"
"$BIN/gapsim-gen" --kind lap --small --out "$TMP/df" > "$TMP/df.out" 2> "$TMP/df.err"
check "gap file on /dev/full exits 1" test $? -eq 1
check "gap file on /dev/full: no space" grep -q "No space left on device" "$TMP/df.err"
check "gap file on /dev/full: no model file left, no report" nothing_left "$TMP/df" lap.gaps.npy -a ! -s "$TMP/df.out"
check "gap file on /dev/full: the link stays" test -L "$TMP/df/lap.gaps.npy"
"$BIN/gapsim-gen" --kind lap --small --out "$TMP/dj" > "$TMP/dj.out" 2> "$TMP/dj.err"
check "JSON name a directory exits 1" test $? -eq 1
check "JSON name a directory: nothing left" nothing_left "$TMP/dj" lap.json
"$BIN/gapsim-gen" --kind lap --small --fraction 0.5 --out "$TMP/dp" > "$TMP/dp.out" 2> "$TMP/dp.err"
check "pattern name a directory exits 1" test $? -eq 1
check "pattern name a directory: nothing left" nothing_left "$TMP/dp" lap.pattern.npy
# a signal removes the temporary files: the gap file is a FIFO nobody reads,
# the run waits in its open with the model's files written to temporaries
mkdir -p "$TMP/ff"
mkfifo "$TMP/ff/lap.gaps.npy"
"$BIN/gapsim-gen" --kind lap --small --out "$TMP/ff" > /dev/null 2>&1 &
pid=$!
for _ in $(seq 300); do
  compgen -G "$TMP/ff/lap.json.tmp.*" > /dev/null && break
  sleep 0.1
done
has_files() { compgen -G "$1" > /dev/null; }
check "waiting on the FIFO, the model is in temporary files" has_files "$TMP/ff/lap.json.tmp.*"
kill -TERM "$pid"
wait "$pid"
check "SIGTERM ends the run by the signal" test $? -eq 143
check "SIGTERM leaves no file, no temporary file" nothing_left "$TMP/ff" lap.gaps.npy
# the report's failure (stdout on a full device) is exit 1
"$BIN/gapsim-gen" --kind lap --small --gaps 2 --out "$TMP/so" > /dev/full 2> "$TMP/so.err"
check "stdout on /dev/full exits 1" test $? -eq 1
check "stdout on /dev/full is named" grep -q "cannot write the report to stdout" "$TMP/so.err"
# a thickness below 0.1 mm is printed as it is (was "t 0.0 mm")
"$BIN/gapsim-gen" --kind lap --small --gaps 2 --thickness 0.04 --hy 20 --out "$TMP/thin" > "$TMP/thin.out" 2>&1
check "thickness 0.04 reported as 0.04" grep -q "wing_panel .* t 0.04 mm" "$TMP/thin.out"

cli_finish
