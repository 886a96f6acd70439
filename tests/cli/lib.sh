# lib.sh -- sourced by the tests/cli/test_*.sh scripts (not a test itself):
# their arguments, scratch directory and check counting.
# cli_start NAME BIN_DIR TMP_DIR: BIN = BIN_DIR, TMP = TMP_DIR/NAME (emptied).
# check NAME CONDITION...: runs CONDITION, prints ok / FAIL NAME, counts.
# cli_finish: prints the counts; its status is the script's (0: all passed).
set -u
cli_start() {
  BIN=$2
  TMP=$3/$1
  rm -rf "$TMP" && mkdir -p "$TMP"
  pass=0 fail=0
}
check() {
  local name=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok   $name"; else fail=$((fail + 1)); echo "FAIL $name"; fi
}
cli_finish() {
  echo "$pass passed, $fail failed"
  test "$fail" -eq 0
}
