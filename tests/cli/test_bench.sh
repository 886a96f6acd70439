#!/usr/bin/env bash
# test_bench.sh -- gapsim-bench runs end to end on the small lap joint: the
# acceptance check (every variant within 1e-7 mm of the oracle) with the
# variants interleaved gap by gap, the warm-start sequences from every gap
# and the chained cloud; then its files (CSV and JSON valid, at full
# precision, nothing left by a failed run), its statistics (the median of an
# even count, nearest-rank deciles), auto's comparison on its own gaps, @K in
# --warm-seq and --moves, --gaps read whole, --methods all, and the refusal
# of every bad option value with a message naming it (exit 2) or of a bad
# input file (exit 1). Also tests/bench/fe_import.sh --small. Timing figures
# are printed, not asserted: the checks compare the printed figures with the
# per-solve times of --times. Files are read with /usr/bin/python3 (its
# json, csv). Usage: test_bench.sh BIN_DIR TMP_DIR
. "$(dirname "$0")/lib.sh"
cli_start cli_bench "$1" "$2"
export OPENBLAS_NUM_THREADS=1
BENCH=$BIN/tests/gapsim-bench
PY=/usr/bin/python3
small=(--kind lap --small)

"$BENCH" "${small[@]}" --ngaps 4 --fractions 0.2,0.6 --clock cpu \
  --methods gi:relative,lemke,npm:dual,auto --check 1e-7 --interleave --warm-seq --cloud \
  > "$TMP/bench.out" 2>&1
check "bench exit 0" test $? -eq 0
check "every row within 1e-7 mm of the oracle" grep -q "check (optimal, |dx|, |dw| <= 1e-07 mm): 8 of 8 rows pass" "$TMP/bench.out"
check "interleaving said" grep -q "variants interleaved gap by gap" "$TMP/bench.out"
check "warm sequences from every gap" \
  grep -q "warm start on sequences (one fastener added per step, up to 20 steps from each gap the variant runs on)" "$TMP/bench.out"
check "a warm-sequence row per variant and fraction" \
  test "$(grep -Ec '^    (gi:relative|lemke:dual|npm:dual:combined:exact|auto) +[0-9]+ steps from 4 gaps: iterations cold' "$TMP/bench.out")" -eq 8
check "chained cloud rows optimal" \
  test "$(grep -c 'cloud in order .*optimal 4/4' "$TMP/bench.out")" -eq 8
check "chained cloud: the ratio to the bound next to the median, not the mean" \
  test "$(grep -Ec 'cloud in order .*: median [0-9.]+ ms = [0-9.]+ x bound, [0-9.]+ x cold median; mean [0-9.]+ ms;' "$TMP/bench.out")" -eq 8

# refused CODE TEXT ARGS...: gapsim-bench ARGS exits with CODE and says TEXT on stderr
refused() {
  local code=$1 text=$2
  shift 2
  "$BENCH" "$@" > "$TMP/refused.out" 2> "$TMP/refused.err"
  local rc=$?
  test "$rc" -eq "$code" && grep -qF -- "$text" "$TMP/refused.err"
}
# prints PATTERN ARGS...: gapsim-bench ARGS prints a line matching the extended regex PATTERN
prints() {
  local pat=$1
  shift
  "$BENCH" "$@" 2>&1 | grep -Eq -- "$pat"
}
# lacks TEXT FILE: FILE does not hold TEXT
lacks() { ! grep -qF -- "$1" "$2"; }
"$BENCH" "${small[@]}" --methods gi:sideways > "$TMP/bad.out" 2>&1
check "unknown variant exits 2" test $? -eq 2
check "unknown variant option: the token and why" \
  refused 2 "'gi:sideways': unknown option 'sideways' of gi" "${small[@]}" --methods gi:sideways
check "form the method lacks: the token and why" \
  refused 2 "'lemke:relative': the relative formulation is not available for lemke" \
  "${small[@]}" --methods gi:relative,lemke:relative
check "@0: the token and why" refused 2 "'gi@0': @K needs a gap count K >= 1" \
  "${small[@]}" --methods gi@0
check "unknown method: the token and why" refused 2 "'foo': unknown method 'foo'" \
  "${small[@]}" --methods foo
for t in 'gi:' 'gi::dual' ':gi'; do
  check "empty field in '$t' refused" refused 2 "'$t': an empty field between ':'" \
    "${small[@]}" --methods "$t"
done
for v in 0 -1e-7 abc; do
  check "--check $v refused" refused 2 "--check: '$v' is not" "${small[@]}" --check "$v"
done
for v in 1.5 -0.2 abc 1e300; do
  check "--fraction $v refused" refused 2 "--fraction: '$v' is not" "${small[@]}" --fraction "$v"
done
check "--fractions nan refused" refused 2 "--fractions: 'nan' is not" "${small[@]}" --fractions nan
for ov in "--ngaps abc" "--ngaps 2.5" "--repeat 0" "--seed -1" "--scatter 2" "--moves 0" \
          "--clock foo" "--kind foo"; do
  set -- $ov
  check "$1 $2 refused, saying why" refused 2 "$1: '$2' is not" "${small[@]}" "$1" "$2"
done
check "--ngaps 2000000000: refused before allocating, naming the memory" \
  refused 1 "more than the" "${small[@]}" --ngaps 2000000000 --no-ref --methods gi:relative
check "missing --model: the reader's message, no empty field" \
  refused 1 "No such file" --model "$TMP/none.json"
check "missing --model: no empty ' at :'" lacks " at :" "$TMP/refused.err"

# gap files: a model and a cloud of 60 gaps, the same model renamed with quotes
"$BIN/gapsim-gen" "${small[@]}" --gaps 60 --out "$TMP/m" --name lap > "$TMP/gen.out" 2>&1
check "gapsim-gen wrote the model" test -s "$TMP/m/lap.gaps.npy"
model=(--model "$TMP/m/lap.json")
check "--gaps: every row of the file (60 gaps, not 50)" prints '^  gi:relative +60 ' \
  "${model[@]}" --gaps "$TMP/m/lap.gaps.npy" --no-ref --methods gi:relative
check "--gaps with --ngaps 7: the first 7" prints '^  gi:relative +7 ' \
  "${model[@]}" --gaps "$TMP/m/lap.gaps.npy" --ngaps 7 --no-ref --methods gi:relative
$PY - "$TMP" <<'PY'
import numpy as np, sys
t = sys.argv[1]
np.save(t + "/empty.npy", np.zeros((0, 52)))
np.save(t + "/f4.npy", np.zeros((3, 52), dtype=np.float32))
PY
check "--gaps without a row: exit 1, no gap vector" \
  refused 1 "holds no gap vector" "${model[@]}" --gaps "$TMP/empty.npy" --methods gi:relative
check "--gaps of float32: the reader's message names the dtype" \
  refused 1 "dtype '<f4'" "${model[@]}" --gaps "$TMP/f4.npy" --methods gi:relative
check "--gaps missing: the reader's message" \
  refused 1 "No such file" "${model[@]}" --gaps "$TMP/none.npy" --methods gi:relative

# --json under --no-ref, a model name with quotes and a backslash
name='lap "quoted" \ name'
$PY - "$TMP/m/lap.json" "$TMP/m/quoted.json" "$name" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["name"] = sys.argv[3]
json.dump(d, open(sys.argv[2], "w"))
PY
"$BENCH" --model "$TMP/m/quoted.json" --gaps "$TMP/m/lap.gaps.npy" --ngaps 3 --no-ref \
  --methods gi:relative,auto --json "$TMP/nr.json" > "$TMP/nr.out" 2>&1
check "--no-ref --json run exit 0" test $? -eq 0
check "--json is valid JSON: the model name escaped, not finite numbers null" $PY -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d['model'] == sys.argv[2], d['model']
assert len(d['rows']) == 2
for r in d['rows']:
    assert r['max_dx_mm'] is None and r['max_dw_mm'] is None, r
    assert r['bound_ms'] is None and r['ratio'] is None, r
" "$TMP/nr.json" "$name"

# 2 gaps with the reference: medians, full precision, the ratio; --check as given
"$BENCH" "${small[@]}" --ngaps 2 --methods gi:relative,auto --check 2.5e-7 --csv "$TMP/two.csv" \
  --json "$TMP/two.json" --times "$TMP/two_times.csv" > "$TMP/two.out" 2>&1
check "2-gap run exit 0" test $? -eq 0
check "--check prints the tolerance as given" grep -q "<= 2.5e-07 mm): 2 of 2 rows pass" "$TMP/two.out"
check "median of 2 gaps = their midpoint (CSV against --times)" $PY -c "
import csv, sys
t = {}
for r in csv.DictReader(open(sys.argv[2])):
    t.setdefault(r['variant'], []).append(float(r['time_ms']))
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 2
for r in rows:
    a, b = t[r['variant']]
    assert abs(float(r['median_ms']) - (a + b) / 2) <= 1e-12 * (a + b), (r['median_ms'], a, b)
" "$TMP/two.csv" "$TMP/two_times.csv"
check "CSV: ratio = median_ms / bound_median_ms at full precision" $PY -c "
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    q = float(r['median_ms']) / float(r['bound_median_ms'])
    assert abs(float(r['ratio']) - q) <= 1e-12 * q, (r['ratio'], q)
" "$TMP/two.csv"
check "JSON: the ratio to the bound per row, = median_ms / bound_ms" $PY -c "
import json, sys
rows = json.load(open(sys.argv[1]))['rows']
assert len(rows) == 2
for r in rows:
    q = r['median_ms'] / r['bound_ms']
    assert abs(r['ratio'] - q) <= 1e-12 * q, (r['ratio'], q)
" "$TMP/two.json"

# --dist on 10 gaps: the deciles are nearest ranks of the kept times
"$BENCH" "${small[@]}" --ngaps 10 --no-ref --methods gi:relative --dist \
  --times "$TMP/ten_times.csv" > "$TMP/ten.out" 2>&1
check "--dist deciles of 10 gaps: the d-th smallest time" $PY -c "
import csv, re, sys
t = sorted(float(r['time_ms']) for r in csv.DictReader(open(sys.argv[2])))
assert len(t) == 10
line = [l for l in open(sys.argv[1]) if 'distribution ms:' in l][0]
got = dict(re.findall(r'p(\d+) ([0-9.]+)', line))
for d in range(1, 10):
    assert got[str(10 * d)] == '%.3f' % t[d - 1], (d, got, t)
" "$TMP/ten.out" "$TMP/ten_times.csv"

# auto@2 on 4 gaps: compared with the single variants on its 2 gaps, per fraction and in total
"$BENCH" "${small[@]}" --ngaps 4 --fractions 0.2,0.6 --no-ref --methods gi:relative,npm:dual,auto@2 \
  --times "$TMP/auto_times.csv" > "$TMP/auto.out" 2>&1
check "auto@2 run exit 0" test $? -eq 0
check "auto against the best single variant and the per-gap best on auto's gaps" $PY -c "
import csv, re, sys
T = {}
for r in csv.DictReader(open(sys.argv[2])):
    T.setdefault(r['fraction'], {}).setdefault(r['variant'], []).append(float(r['time_ms']))
lines = re.findall(r'auto mean / best single variant mean \((\S+)\) = ([0-9.]+); / per-gap best '
                   r'of the variants = ([0-9.]+)', open(sys.argv[1]).read())
assert len(lines) == 2, lines
tot = [0, 0, 0]
for (name, r1, r2), f in zip(lines, sorted(T)):
    v = T[f]
    mean = lambda x: sum(x[:2]) / 2
    single = {k: mean(x) for k, x in v.items() if k != 'auto'}
    best = min(single, key=single.get)
    gapbest = sum(min(v[k][r] for k in single) for r in range(2)) / 2
    assert name == best, (name, best)
    assert abs(float(r1) - mean(v['auto']) / single[best]) <= 0.0051, (r1, v)
    assert abs(float(r2) - mean(v['auto']) / gapbest) <= 0.0051, (r2, v)
    tot = [tot[0] + mean(v['auto']), tot[1] + single[best], tot[2] + gapbest]
s = re.search(r'over the 2 fractions: auto mean / best single variant mean = ([0-9.]+); / per-gap '
              r'best = ([0-9.]+)', open(sys.argv[1]).read())
assert abs(float(s.group(1)) - tot[0] / tot[1]) <= 0.0051, (s.group(1), tot)
assert abs(float(s.group(2)) - tot[0] / tot[2]) <= 0.0051, (s.group(2), tot)
" "$TMP/auto.out" "$TMP/auto_times.csv"

# --warm-seq and --moves: each variant on its own @K gaps, labelled with its options
"$BENCH" "${small[@]}" --ngaps 2 --fraction 0.5 --no-ref --methods 'gi:relative,npm:dual:chol:*@1' \
  --warm-seq --moves 1 > "$TMP/seq.out" 2>&1
check "--warm-seq/--moves run exit 0" test $? -eq 0
check "--warm-seq: npm:dual:chol:* rows on their 1 gap, told apart" \
  test "$(grep -Ec '^    npm:dual:chol:(exact|golden|armijo) +5 steps from 1 gap:' "$TMP/seq.out")" -eq 3
check "--warm-seq: gi:relative on its 2 gaps" grep -Eq '^    gi:relative +10 steps from 2 gaps:' "$TMP/seq.out"
check "--moves: npm:dual:chol:* rows on their 1 gap, told apart" \
  test "$(grep -Ec '^    npm:dual:chol:(exact|golden|armijo) +1 moves x 1 gap:' "$TMP/seq.out")" -eq 3
check "--moves: gi:relative on its 2 gaps" grep -Eq '^    gi:relative +1 moves x 2 gaps:' "$TMP/seq.out"

# --methods all: every variant of every method and formulation, as many as --help says
"$BENCH" "${small[@]}" --ngaps 1 --no-ref --methods all > "$TMP/all.out" 2>&1
check "--methods all exit 0" test $? -eq 0
check "--methods all: ipm:dual's variants too, the count --help gives" $PY -c "
import re, subprocess, sys
rows = re.findall(r'^  (\S+) +1 +[0-9.]+ ', open(sys.argv[1]).read(), re.M)
help = subprocess.run([sys.argv[2], '--help'], capture_output=True, text=True).stdout
n = int(re.search(r'\((\d+) variants\)', help).group(1))
assert len(rows) == len(set(rows)) == n, (len(rows), n)
assert 'ipm:dual:split:infeasible' in rows and 'ipm:primal:direct:feasible' in rows, rows
" "$TMP/all.out" "$BENCH"

# a run that fails half-way (--dump-qp into a missing directory) leaves no partial file
printf 'previous\n' > "$TMP/keep.csv"
"$BENCH" "${small[@]}" --ngaps 1 --methods gi:relative --csv "$TMP/keep.csv" --json "$TMP/new.json" \
  --times "$TMP/new_times.csv" --dump-qp "$TMP/no/such/dir" > "$TMP/fail.out" 2>&1
check "failed run: exit 1" test $? -eq 1
check "failed run: the previous CSV kept" test "$(cat "$TMP/keep.csv")" = previous
check "failed run: no JSON or times file" test ! -e "$TMP/new.json" -a ! -e "$TMP/new_times.csv"
check "failed run: no temporary file left" test -z "$(ls "$TMP" | grep -F .tmp.)"

# --opt=VALUE; --dump-qp under --no-ref; the help's conventions
check "--opt=VALUE accepted" prints '^  gi:relative +1 ' --kind=lap --small --ngaps=1 \
  --methods=gi:relative --no-ref --fraction=0.5
"$BENCH" "${small[@]}" --ngaps 1 --no-ref --methods gi:relative --dump-qp "$TMP" > "$TMP/qp.out" 2>&1
check "--no-ref --dump-qp: Q and p written, no lam_F.npy" \
  test -s "$TMP/Q.npy" -a -s "$TMP/p_0.50.npy" -a ! -e "$TMP/lam_0.50.npy"
check "--no-ref --dump-qp says it writes no lam_F.npy" grep -q "no lam_F.npy" "$TMP/qp.out"
"$BENCH" --help > "$TMP/help.out"
check "--help: the median of an even count is the midpoint" \
  grep -q "count the midpoint of the two middle values" "$TMP/help.out"
check "--help: --times has one row per gap (with --repeat the kept solve)" \
  grep -q "one row per variant and gap (with --repeat the kept" "$TMP/help.out"

# tests/bench/fe_import.sh --small: finds a python with numpy for its comparison
if python3 -c 'import numpy' 2>/dev/null || $PY -c 'import numpy' 2>/dev/null; then
  bash "$(dirname "$0")/../bench/fe_import.sh" "$BIN" --small > "$TMP/fe.out" 2>&1
  check "fe_import.sh --small exit 0" test $? -eq 0
  check "fe_import.sh --small compares the residual gaps" grep -q "residual gaps: max" "$TMP/fe.out"
else
  echo "skip fe_import.sh --small (no python3 with numpy)"
fi

cli_finish
