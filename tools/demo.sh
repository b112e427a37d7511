#!/usr/bin/env bash
# Install mklearn (built tarball, with its vignettes) with its dependencies and run a real fit
# on Ionosphere. Non-root users get everything in their own library (R_LIBS_USER); the build
# and install logs go to files of their own (mktemp).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
. tools/lib.sh
work=$(mktemp -d "${TMPDIR:-/tmp}/mklearn-demo.XXXXXX")
log="$work/install.log"
echo "building and installing mklearn into $MKLEARN_LIB (log: $log)"
src=$(pwd)
(cd "$work" && R CMD build --no-manual "$src" && R CMD INSTALL -l "$MKLEARN_LIB" mklearn_*.tar.gz) \
  >"$log" 2>&1 || { cat "$log"; exit 1; }
Rscript -e 'demo("ionosphere", package = "mklearn", ask = FALSE, echo = FALSE)'
