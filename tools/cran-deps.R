# Usage: Rscript tools/cran-deps.R LIB PKG...
# Installs from CRAN into LIB the packages PKG that are missing, with every dependency
# (Depends, Imports, LinkingTo, recursively) that is missing or older than a version one of
# them requires: install.packages() installs missing dependencies but does not update
# outdated ones (the r-cran-* packages of a Debian release can be older than what the current
# tidymodels packages require). Fails when a package PKG cannot be loaded afterwards.
args <- commandArgs(TRUE)
lib <- args[1L]
pkgs <- args[-1L]
repos <- "https://cloud.r-project.org"
.libPaths(c(lib, .libPaths()))
# (presence without loading: a namespace loaded here would hold its old version)
present <- function(p) length(find.package(p, quiet = TRUE)) > 0L
want <- pkgs[!vapply(pkgs, present, TRUE)]
if (!length(want)) quit(status = 0)
ap <- available.packages(repos = repos)
ip <- installed.packages(.libPaths())
installed_version <- function(p) {
  v <- ip[rownames(ip) == p, "Version"]
  if (length(v)) max(package_version(v)) else NULL
}
requirements <- function(p) {
  f <- ap[p, c("Depends", "Imports", "LinkingTo")]
  r <- trimws(unlist(strsplit(gsub("\\s+", " ", f[!is.na(f)]), ",")))
  r[nzchar(r)]
}
todo <- character()
visit <- function(p, need = NULL) {
  if (p %in% todo || !(p %in% rownames(ap))) return(invisible())
  v <- installed_version(p)
  if (!is.null(v) && (is.null(need) || v >= need)) return(invisible())
  todo <<- c(todo, p)
  for (r in requirements(p)) {
    m <- regmatches(r, regexec(">=\\s*([0-9.-]+)", r))[[1L]]
    visit(sub("[ (].*", "", r), if (length(m)) package_version(m[2L]))
  }
}
for (p in want) visit(p)
message("installing from CRAN into ", lib, ": ", paste(todo, collapse = ", "))
install.packages(todo, lib = lib, repos = repos, dependencies = FALSE,
                 Ncpus = max(1L, parallel::detectCores()))
# loaded in a new R process, with the updated dependencies
check <- sprintf(paste0(".libPaths(c('%s', .libPaths())); p <- c(%s); ",
                        "bad <- p[!vapply(p, requireNamespace, TRUE, quietly = TRUE)]; ",
                        "if (length(bad)) { message('could not install: ', ",
                        "paste(bad, collapse = ', ')); quit(status = 1) }"),
                 lib, paste0("'", want, "'", collapse = ", "))
quit(status = system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(check))))
