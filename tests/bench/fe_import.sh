#!/usr/bin/env bash
# tests/bench/fe_import.sh -- the whole-mesh import benchmark (docs/fe-import.md).
#
# Builds the generator's lap joint twice with the same mesh: uncondensed (the
# sparse stiffness of each part's whole plate, written as Matrix Market, the
# way an FE tool exports it) and condensed by the generator; runs gapsim-batch
# on both with the same 20 gaps and prints: DOFs, pairs, read and
# precomputation times, wall time and peak RSS of the sparse run, and the
# largest difference of the residual gaps between the two paths.
#
# Usage: tests/bench/fe_import.sh [BUILD_DIR] [--small]
#   default: 200,568 DOFs per part, 2,603 pairs (about 1 minute, 2 GB);
#   --small: the default lap mesh (15,618 + 9,864 DOFs), a few seconds.
set -euo pipefail
build=${1:-build}
size=(--hy 2.5 --far 1180,1180)
if [[ "${2:-}" == --small || "${1:-}" == --small ]]; then
  [[ "${1:-}" == --small ]] && build=build
  size=()
fi
gen=$build/gapsim-gen
batch=$build/gapsim-batch
for exe in "$gen" "$batch"; do
  [[ -x $exe ]] || { echo "fe_import.sh: $exe not built (cmake --build $build)" >&2; exit 2; }
done
# The comparison reads the .npy results with numpy: the python3 on PATH if it
# has numpy, else Debian's /usr/bin/python3 (scripts/setup python3-numpy), as
# tests/integration/test_exports.py looks for its vtk module.
py=
for exe in python3 /usr/bin/python3; do
  if "$exe" -c 'import numpy' 2>/dev/null; then py=$exe; break; fi
done
[[ -n $py ]] || { echo "fe_import.sh: no python3 with numpy (scripts/setup python3-numpy)" >&2; exit 2; }
tmp=$(mktemp -d /tmp/gapsim-fe-import.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

"$gen" --kind lap --no-cond --gaps 20 --out "$tmp/sparse" --uncondensed "${size[@]}" \
  | grep -E '^(n |m |  part)'
"$gen" --kind lap --no-cond --gaps 0 --out "$tmp/dense" "${size[@]}" | grep -E '^time'
echo "files      $(du -sh "$tmp/sparse" | cut -f1) of Matrix Market"

run() { # run NAME MODEL: gapsim-batch on the shared gaps, /usr/bin/time figures
  /usr/bin/time -f "wall       %e s, peak RSS %M KB" "$batch" "$2" \
    --gaps "$tmp/sparse/lap.gaps.npy" --fraction 0.5 --out "$tmp/$1.npy" 2>&1 \
    | grep -E '^(model|precompute|wall)' | sed "s/^/$1: /"
}
run sparse "$tmp/sparse/lap.json"
run dense "$tmp/dense/lap.json"
"$py" - "$tmp/sparse.npy" "$tmp/dense.npy" <<'EOF'
import sys
import numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
print("residual gaps: max |w_sparse - w_condensed| = %.3g mm over %d x %d" % (abs(a - b).max(), *a.shape))
EOF
