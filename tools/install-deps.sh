#!/usr/bin/env bash
# Installs what building, checking and demonstrating mklearn needs.
# Debian/Ubuntu as root: prebuilt r-cran-* packages through apt-get (fast);
# elsewhere: the R packages from CRAN into the user library.
set -euo pipefail
apt_pkgs="r-base-dev r-cran-kernlab r-cran-mlbench r-cran-quadprog r-cran-testthat r-cran-knitr
          r-cran-rmarkdown pandoc qpdf"
r_pkgs='c("kernlab", "mlbench", "quadprog", "testthat", "knitr", "rmarkdown")'
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
else
  Rscript -e "p <- $r_pkgs; p <- p[!vapply(p, requireNamespace, TRUE, quietly = TRUE)];
              if (length(p)) install.packages(p, repos = 'https://cloud.r-project.org')"
fi
