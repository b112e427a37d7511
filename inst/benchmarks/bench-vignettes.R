# CPU time of each vignette and of its chunks: renders the vignettes given (default: all in
# vignettes/) with rmarkdown against the installed package, timing every chunk with a knitr
# hook (user + system CPU, the process and its children, beside wall time).
# Usage: Rscript inst/benchmarks/bench-vignettes.R [vignettes/x.Rmd ...]
#        (results: inst/notes/NOTES-runtime.md, "Vignette build time")
files <- commandArgs(trailingOnly = TRUE)
if (!length(files)) files <- Sys.glob(file.path("vignettes", "*.Rmd"))
out <- file.path(tempdir(), "vignettes")
dir.create(out, showWarnings = FALSE)
cpu <- function(d) d[["user.self"]] + d[["sys.self"]] + d[["user.child"]] + d[["sys.child"]]
times <- list()
t0 <- NULL
knitr::knit_hooks$set(time_it = function(before, options) {
  if (before) t0 <<- proc.time() else {
    d <- proc.time() - t0
    times[[options$label]] <<- c(cpu = cpu(d), wall = d[["elapsed"]])
  }
})
knitr::opts_chunk$set(time_it = TRUE)
for (f in files) {
  times <- list()
  start <- proc.time()
  rmarkdown::render(f, output_dir = out, intermediates_dir = out, quiet = TRUE,
                    envir = new.env())
  d <- proc.time() - start
  cat(sprintf("== %s: CPU %.1f s, wall %.1f s\n", basename(f), cpu(d), d[["elapsed"]]))
  tt <- do.call(rbind, times)
  print(round(tt[order(-tt[, "cpu"]), , drop = FALSE][seq_len(min(6L, nrow(tt))), ,
                                                      drop = FALSE], 2))
}
