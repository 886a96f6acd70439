#!/usr/bin/env bash
# test_bench.sh -- gapsim-bench runs end to end on the small lap joint: the
# acceptance check (every variant within 1e-7 mm of the oracle) with the
# variants interleaved gap by gap, the warm-start sequences from every gap
# and the chained cloud; a bad option exits 2. Timing figures are printed,
# not asserted. Usage: test_bench.sh BIN_DIR TMP_DIR
. "$(dirname "$0")/lib.sh"
cli_start cli_bench "$1" "$2"

"$BIN/tests/gapsim-bench" --kind lap --small --ngaps 4 --fractions 0.2,0.6 --clock cpu \
  --methods gi:relative,lemke,npm:dual,auto --check 1e-7 --interleave --warm-seq --cloud \
  > "$TMP/bench.out" 2>&1
check "bench exit 0" test $? -eq 0
check "every row within 1e-7 mm of the oracle" grep -q "check (optimal, |dx|, |dw| <= 1e-07 mm): 8 of 8 rows pass" "$TMP/bench.out"
check "interleaving said" grep -q "variants interleaved gap by gap" "$TMP/bench.out"
check "warm sequences from every gap" \
  grep -q "warm start on sequences (one fastener added per step, up to 20 steps from each of the 4 gaps)" "$TMP/bench.out"
check "a warm-sequence row per variant and fraction" \
  test "$(grep -Ec '^    (gi|lemke|npm|auto) +[a-z]+ +[0-9]+ steps: iterations cold' "$TMP/bench.out")" -eq 8
check "chained cloud rows optimal" \
  test "$(grep -c 'cloud in order .*optimal 4/4' "$TMP/bench.out")" -eq 8

"$BIN/tests/gapsim-bench" --kind lap --small --methods gi:sideways > "$TMP/bad.out" 2>&1
check "unknown variant exits 2" test $? -eq 2

cli_finish
