# Predicted (mkl_memory()) against measured peak memory of mkl() for every method: twonorm
# (mlbench::mlbench.twonorm, seed 1), 10 Gaussian kernels (rbf_kernel(2^(-5:4))), store
# "auto" (what mkl() chooses under the default budget, half the machine's memory), nthreads = 1
# unless given, maxiter = 2 where the method has one (peaks are reached at allocation; buffers a
# solver allocates later in a fit are counted by the prediction and may be missed by the
# measure). Each case runs in a fresh Rscript under /usr/bin/time -v (its maximum resident set
# size), niced, with a timeout, one at a time, and waits while less than 12 GB is free.
# Case "none" loads the package and makes the data without fitting: the R process's baseline.
# Usage: Rscript bench-memory.R [n ...] [--methods=a,b] [--threads=k] [--store=s] [--timeout=s]
# Prints one row per case: n, method, threads, chosen store, predicted bytes, measured peak RSS
# minus the baseline, and the fit's outcome (fitted, or the error message: a clear stop).
args <- commandArgs(trailingOnly = TRUE)

if (length(args) && args[1L] == "case") {
  # one case: case <n> <method> <threads> [<store>]
  n <- as.integer(args[2L]); method <- args[3L]; nt <- as.integer(args[4L])
  store <- if (length(args) >= 5L) args[5L] else "auto"
  suppressPackageStartupMessages(library(mklearn))
  set.seed(1)
  d <- mlbench::mlbench.twonorm(n)
  x <- d$x; y <- ifelse(d$classes == 1, -1, 1)
  if (method == "none") { cat("RESULT\tnone\t-\tNA\tbaseline\n"); quit(save = "no") }
  ks <- kernel_set(rbf_kernel(2^(-5:4)))
  has_maxiter <- !method %in% c("uniform", "mwu")
  ctl <- if (has_maxiter) mkl_control(nthreads = nt, store = store, maxiter = 2L) else
    mkl_control(nthreads = nt, store = store)
  t0 <- proc.time()[["elapsed"]]
  fit <- tryCatch(suppressWarnings(mkl(x, y, kernels = ks, method = method, control = ctl)),
                  error = function(e) conditionMessage(e))
  el <- proc.time()[["elapsed"]] - t0
  if (is.character(fit)) {
    # the smaller need of the stores tried (the one the stop message names)
    mm <- mkl_memory(n, 10, method, if (store == "auto") c("dense", "fly") else store,
                     nthreads = nt)
    cat(sprintf("RESULT\t%s\t%s\t%.0f\tstop after %.1f s: %s\n", method, "-",
                min(mm$total), el, gsub("[\t\n]", " ", fit)))
  } else {
    pred <- mkl_memory(n, 10, method, fit$store, nthreads = nt)$total
    cat(sprintf("RESULT\t%s\t%s\t%.0f\tfitted in %.1f s\n", method, fit$store, pred, el))
  }
  quit(save = "no")
}

opt <- function(name, default) {
  a <- grep(sprintf("^--%s=", name), args, value = TRUE)
  if (length(a)) sub("^--[a-z]+=", "", a[1L]) else default
}
ns <- as.integer(grep("^--", args, value = TRUE, invert = TRUE))
if (!length(ns)) ns <- c(10000L, 20000L)
methods <- strsplit(opt("methods", "uniform,spicy,simple,hessian,lp,bayes,l01,mwu"), ",")[[1L]]
nt <- as.integer(opt("threads", "1"))
tmo <- as.integer(opt("timeout", "300"))
store <- opt("store", "auto")
script <- normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)))

free_gb <- function() {
  l <- grep("^MemAvailable:", readLines("/proc/meminfo"), value = TRUE)
  as.double(gsub("[^0-9]", "", l)) / 1024^2
}
run_case <- function(n, method) {
  while (free_gb() < 12) Sys.sleep(20)
  log <- tempfile()
  out <- suppressWarnings(system2("/usr/bin/time",
    c("-v", "-o", log, "timeout", tmo, "nice", "-n", "10", "Rscript", script, "case", n, method,
      nt, store), stdout = TRUE, stderr = FALSE))
  tv <- readLines(log)
  kb <- as.double(sub(".*: ", "", grep("Maximum resident set size", tv, value = TRUE)))
  res <- strsplit(grep("^RESULT", out, value = TRUE), "\t")
  if (!length(res)) {
    # stopped by the timeout while fitting: the store mkl() chose and its prediction
    mm <- mklearn::mkl_memory(n, 10, method, if (store == "auto") c("dense", "fly") else store,
                              nthreads = nt)
    r <- if (store != "auto" || (method != "mwu" && mm$fits[1L])) 1L else 2L
    return(list(store = mm$store[r], predicted = mm$total[r], peak = kb * 1024,
                outcome = sprintf("stopped by the timeout (%d s) while fitting", tmo)))
  }
  res <- res[[1L]]
  list(store = res[3L], predicted = as.double(res[4L]), peak = kb * 1024, outcome = res[5L])
}
gb <- function(b) ifelse(is.na(b), "-", sprintf("%.2f GB", b / 1e9))
for (n in ns) {
  base <- suppressWarnings(run_case(n, "none"))$peak
  cat(sprintf(paste0("\ntwonorm n = %d, M = 10, nthreads = %d, store = \"%s\"; R process ",
                     "baseline %s (subtracted)\n"), n, nt, store, gb(base)))
  cat(sprintf("%-8s %-6s %10s %10s  %s\n", "method", "store", "predicted", "measured",
              "outcome"))
  for (m in methods) {
    r <- run_case(n, m)
    cat(sprintf("%-8s %-6s %10s %10s  %s\n", m, r$store, gb(r$predicted), gb(r$peak - base),
                r$outcome))
  }
}
