#!/usr/bin/env bash
# Install mklearn with its dependencies and run a real fit on Ionosphere.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
R CMD INSTALL --no-test-load . >/tmp/mklearn-install.log 2>&1 || { cat /tmp/mklearn-install.log; exit 1; }
Rscript -e 'demo("ionosphere", package = "mklearn", ask = FALSE, echo = FALSE)'
