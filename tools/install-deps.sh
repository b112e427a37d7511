#!/usr/bin/env bash
# Installs what building, checking and demonstrating mklearn needs.
# Debian/Ubuntu as root: prebuilt r-cran-* packages through apt-get (fast), and from CRAN the
# tidymodels packages that Debian does not package (cran_pkgs) with the dependencies they need
# newer than Debian's (tools/cran-deps.R); anyone else: the missing R packages from CRAN into
# their own library (R_LIBS_USER), never apt-get. (pandoc and qpdf, for the vignettes and the
# check, come from the system.)
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/lib.sh
apt_pkgs="r-base-dev r-cran-kernlab r-cran-mlbench r-cran-quadprog r-cran-testthat r-cran-knitr
          r-cran-rmarkdown r-cran-e1071 r-cran-future r-cran-future.apply r-cran-progressr
          r-cran-caret r-cran-generics r-cran-broom r-cran-ggplot2 r-cran-tibble r-cran-rlang
          r-cran-recipes pandoc qpdf"
cran_pkgs="parsnip tune dials workflows rsample yardstick"
r_pkgs="kernlab mlbench quadprog testthat knitr rmarkdown e1071 future future.apply progressr
        caret generics broom ggplot2 tibble rlang recipes $cran_pkgs"
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  need=""
  for p in $apt_pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need="$need $p"
  done
  if [ -n "$need" ]; then
    echo "installing with apt-get:$need"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null
  fi
  Rscript tools/cran-deps.R "$MKLEARN_LIB" $cran_pkgs
else
  Rscript tools/cran-deps.R "$MKLEARN_LIB" $r_pkgs
  command -v pandoc >/dev/null 2>&1 || echo "note: pandoc is missing; building the vignettes needs it"
fi
