#!/usr/bin/env bash
# The whole test suite: install dependencies, build the tarball, R CMD check --as-cran.
# Fails on any ERROR or WARNING, and prints the testthat totals.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
. tools/lib.sh
out=$(mktemp -d)
R CMD build --no-manual . >"$out/build.log" 2>&1 || { cat "$out/build.log"; exit 1; }
tarball=$(ls -t mklearn_*.tar.gz | head -n 1)
mv "$tarball" "$out/"
# run every certificate test, including the slower ones marked skip_on_cran()
export NOT_CRAN=true
export _R_CHECK_CRAN_INCOMING_=false _R_CHECK_CRAN_INCOMING_REMOTE_=false
export _R_CHECK_FUTURE_FILE_TIMESTAMPS_=false _R_CHECK_SYSTEM_CLOCK_=false
status=0
(cd "$out" && R CMD check --as-cran --no-manual "$tarball") || status=$?
log="$out/mklearn.Rcheck/00check.log"
rout="$out/mklearn.Rcheck/tests/testthat.Rout"
[ -f "$rout" ] || rout="$out/mklearn.Rcheck/tests/testthat.Rout.fail"
if [ -f "$rout" ]; then
  tail -n 25 "$rout"
  totals=$(grep -E '^\[ FAIL [0-9]+ \| WARN [0-9]+ \| SKIP [0-9]+ \| PASS [0-9]+ \]' "$rout" | tail -n 1 || true)
  if [ -n "$totals" ]; then
    fail=$(sed -E 's/.*FAIL ([0-9]+).*/\1/' <<<"$totals")
    skip=$(sed -E 's/.*SKIP ([0-9]+).*/\1/' <<<"$totals")
    pass=$(sed -E 's/.*PASS ([0-9]+).*/\1/' <<<"$totals")
    echo "testthat: $pass passed, $fail failed, $skip skipped"
  fi
fi
if [ "$status" -ne 0 ] || grep -qE '^Status: .*(ERROR|WARNING)' "$log"; then
  echo "R CMD check reported an ERROR or WARNING (log: $log)"
  exit 1
fi
grep -E '^Status:' "$log"
