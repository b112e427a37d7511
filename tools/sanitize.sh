#!/usr/bin/env bash
# The whole testthat suite under AddressSanitizer and UndefinedBehaviorSanitizer.
#
# Builds the package's C code with -fsanitize=address,undefined (through a temporary
# R_MAKEVARS_USER file: src/Makevars is not touched), installs it into a private library and
# runs every test file (NOT_CRAN=true) in R with the sanitizer runtime preloaded (R itself is
# not instrumented), then the Empirical Bayes fits under valgrind (below). Exits non-zero on any
# sanitizer or valgrind report, crash or test failure; the last line says which. Logs are kept
# in the work directory it prints (SANITIZE_DIR to choose it).
#
#   bash tools/sanitize.sh                 # everything
#   bash tools/sanitize.sh store           # only test files matching a testthat filter
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
filter=${1:-}

bash tools/install-deps.sh

work=${SANITIZE_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/mklearn-sanitize.XXXXXX")}
mkdir -p "$work/lib" "$work/build"
echo "sanitize: work directory $work"

# the compiler R builds packages with, and its ASan runtime (needed first in the library list)
cc=$(R CMD config CC)
cc1=${cc%% *}
libasan=$($cc1 -print-file-name=libasan.so)
if [ ! -e "$libasan" ]; then
  echo "sanitizers: FAILED, no libasan.so for $cc1 (install the compiler's sanitizer runtime," \
       "e.g. Debian's libasan8)"
  exit 2
fi

# a clean copy of the sources (no objects from earlier builds): R CMD build drops them
(cd "$work/build" && R CMD build --no-build-vignettes --no-manual "$root" >build.log 2>&1) || {
  cat "$work/build/build.log"; echo "sanitizers: FAILED, R CMD build failed"; exit 1; }
tarball=$(ls -t "$work"/build/mklearn_*.tar.gz | head -n 1)

flags="-fsanitize=address,undefined -fno-omit-frame-pointer"
cat >"$work/Makevars" <<EOF
CFLAGS = -g -O1 $flags
LDFLAGS = $flags
EOF
# --no-test-load: loading the instrumented library needs the preloaded runtime (below)
R_MAKEVARS_USER="$work/Makevars" R CMD INSTALL --no-test-load --preclean -l "$work/lib" \
  "$tarball" >"$work/install.log" 2>&1 || {
  cat "$work/install.log"; echo "sanitizers: FAILED, the instrumented build did not install"; exit 1; }
grep -q -- "-fsanitize=address,undefined" "$work/install.log" || {
  echo "sanitizers: FAILED, the build did not use the sanitizer flags (see $work/install.log)"
  exit 1; }

cat >"$work/run.R" <<'EOF'
args <- commandArgs(TRUE)
.libPaths(c(args[1], .libPaths()))
library(testthat)
library(mklearn, lib.loc = args[1])
res <- test_dir(args[2], filter = if (nzchar(args[3])) args[3] else NULL, package = "mklearn",
                load_package = "installed", reporter = "summary", stop_on_failure = FALSE)
df <- as.data.frame(res)
cat(sprintf("\nTESTTHAT passed=%d failed=%d errors=%d skipped=%d\n", sum(df$passed),
            sum(df$failed), sum(df$error), sum(df$skipped)))
EOF

status=0
(
  export NOT_CRAN=true
  export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:print_summary=1"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:print_summary=1"
  export LD_PRELOAD="$libasan"
  Rscript "$work/run.R" "$work/lib" "$root/tests/testthat" "$filter"
) >"$work/tests.log" 2>&1 || status=$?
tail -n 40 "$work/tests.log"

reports=$(grep -cE "ERROR: AddressSanitizer|runtime error:|SUMMARY: (AddressSanitizer|UndefinedBehaviorSanitizer)" \
  "$work/tests.log" || true)
if [ "$reports" -gt 0 ]; then
  echo "--- sanitizer reports (full log: $work/tests.log):"
  grep -nE -A3 "ERROR: AddressSanitizer|runtime error:" "$work/tests.log" | head -n 60 || true
fi
totals=$(grep -E "^TESTTHAT passed=" "$work/tests.log" | tail -n 1 || true)
if [ "$reports" -gt 0 ]; then
  echo "sanitizers: FAILED, $reports sanitizer report line(s) (log: $work/tests.log)"
  exit 1
fi
if grep -q "caught segfault" "$work/tests.log"; then
  echo "sanitizers: FAILED, R caught a segfault (log: $work/tests.log)"
  exit 1
fi
if [ -z "$totals" ] || [ "$status" -ne 0 ]; then
  echo "sanitizers: FAILED, the test run ended abnormally with status $status (log: $work/tests.log)"
  exit 1
fi
# AddressSanitizer does not see reads of uninitialised memory: valgrind's memcheck does, on a
# plain build, for the Empirical Bayes fits (dense and on the fly, regression, classification,
# the bias kernel, both update rules), whatever the filter. SANITIZE_VALGRIND=0 skips it.
vg_reports=0
if [ "${SANITIZE_VALGRIND:-1}" != "0" ] && command -v valgrind >/dev/null 2>&1; then
  mkdir -p "$work/lib-plain"
  R CMD INSTALL --no-test-load -l "$work/lib-plain" "$tarball" >"$work/install-plain.log" 2>&1 || {
    cat "$work/install-plain.log"
    echo "sanitizers: FAILED, the plain build did not install"
    exit 1; }
  cat >"$work/bayes.R" <<'EOF'
library(mklearn, lib.loc = commandArgs(TRUE)[1])
set.seed(1)
x <- matrix(rnorm(200), 50)
y <- sin(x[, 1]) + rnorm(50, sd = 0.1)
ks <- kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(1))
for (store in c("dense", "fly")) for (update in c("scoring", "mackay")) {
  mkl(x, y, method = "bayes", kernels = ks, control = mkl_control(store = store, update = update))
  mkl(x, sign(y), method = "bayes", kernels = ks, control = mkl_control(store = store))
  mkl(x, y, method = "bayes", kernels = ks, control = mkl_control(bias = "kernel", update = update))
}
cat("valgrind bayes fits done\n")
EOF
  R -d valgrind --vanilla -f "$work/bayes.R" --args "$work/lib-plain" >"$work/valgrind.log" 2>&1 ||
    true
  if ! grep -q "valgrind bayes fits done" "$work/valgrind.log"; then
    echo "sanitizers: FAILED, the valgrind run of the bayes fits did not finish" \
      "($work/valgrind.log)"
    exit 1
  fi
  vg_reports=$(grep -cE "uninitialised|Invalid (read|write)|Invalid free|Mismatched free" \
    "$work/valgrind.log" || true)
  echo "valgrind (bayes fits): $vg_reports report line(s) (log: $work/valgrind.log)"
fi
if [ "$vg_reports" -gt 0 ]; then
  grep -nE -A6 "uninitialised|Invalid (read|write)" "$work/valgrind.log" | head -n 40 || true
  echo "sanitizers: FAILED, valgrind reported $vg_reports line(s) on the bayes fits"
  exit 1
fi
read -r passed failed errors skipped < <(sed -E 's/.*passed=([0-9]+) failed=([0-9]+) errors=([0-9]+) skipped=([0-9]+).*/\1 \2 \3 \4/' <<<"$totals")
if [ "$failed" -gt 0 ] || [ "$errors" -gt 0 ]; then
  echo "sanitizers: clean, but tests FAILED: $failed failed, $errors errored, $passed passed (log: $work/tests.log)"
  exit 1
fi
echo "sanitizers: clean, $passed tests passed ($skipped skipped)"
