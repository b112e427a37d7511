# Predicted (mkl_memory()) against measured peak memory of mkl() for every method: twonorm
# (mlbench::mlbench.twonorm, seed 1), 10 Gaussian kernels (rbf_kernel(2^(-5:4))), store
# "auto" (what mkl() chooses under the budget: dense, low rank, on the fly) unless given,
# nthreads = 1 unless given, maxiter = 1 where the method has one (peaks are reached at
# allocation; buffers a solver allocates later in a fit are counted by the prediction and may be
# missed by the measure). Each case runs in a fresh Rscript under /usr/bin/time -v (its maximum
# resident set size and CPU time), niced, with a timeout, one at a time, and waits while less
# than 12 GB (--free) is free. Case "none" loads the package and makes the data without
# fitting: the R process's baseline. Run it under the shared memory lock (flock) on a shared
# machine.
# Usage: Rscript bench-memory.R [n ...] [--methods=a,b] [--threads=k] [--store=s] [--timeout=s]
#        [--maxiter=k] [--memory=bytes (default: half the machine)] [--lock=file (each case
#        runs under flock on it)] [--free=GB (a case waits while less is available; 12)]
#        Rscript bench-memory.R trace <n> <method> [store] [live]: one fit in this process,
#        the resident set at the entry and exit of every function of the package wherever it
#        moved by more than 4 MB, with the peak since the previous reading (reset through
#        /proc/self/clear_refs): where the peak is reached. "live": also R's live heap after a
#        collection at each reading (the collections change what is resident).
#        Rscript bench-memory.R cpu <n> <method> [maxiter] [kcache] [kcols] [threads]: one fit
#        on the fly in this process (platt = "train", one thread unless given), its CPU time,
#        objective and SMO iterations: the column cache against another build of the package
#        (run it with R_LIBS pointing there); kcache, kcols: MKL-L0/1's cache entries and
#        combined columns (NA: from the budget).
# Prints one row per case: n, method, threads, chosen store, predicted bytes, measured peak RSS
# minus the baseline, CPU seconds, and the fit's outcome (fitted, or the error message: a clear
# stop; a case stopped by the timeout reports the store mkl() chose before fitting), and the
# case's CPU seconds when the probabilities' folds started (the fit's share). The script nices
# each case itself (nice -n 10): run it without nice.
args <- commandArgs(trailingOnly = TRUE)

# Rscript reads a script while it runs it: a run whose file changes meanwhile (an edit, a
# checkout) read on at its old offset in the new text once its loop ended, and evaluated what it
# found there (a line of val() below: "object 'key' not found"). So the script runs from a copy,
# started from one expression that ends the process.
if (!nzchar(Sys.getenv("MKL_BENCH_COPY"))) {
  self <- sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE))
  copy <- tempfile("bench-memory", fileext = ".R")
  file.copy(self, copy)
  Sys.setenv(MKL_BENCH_COPY = "1")
  st <- system2(file.path(R.home("bin"), "Rscript"), c(shQuote(copy), shQuote(args)))
  unlink(copy)
  quit(save = "no", status = st)
}

if (length(args) && args[1L] == "trace") {
  n <- as.integer(args[2L]); method <- args[3L]
  store <- if (length(args) > 3L) args[4L] else "auto"
  live <- "live" %in% args
  suppressPackageStartupMessages(library(mklearn))
  set.seed(1)
  d <- mlbench::mlbench.twonorm(n)
  x <- d$x; y <- ifelse(d$classes == 1, -1, 1)
  ks <- kernel_set(rbf_kernel(2^(-5:4)))
  status <- function() {
    l <- readLines("/proc/self/status")
    v <- function(k) as.double(gsub("[^0-9]", "", grep(k, l, value = TRUE))) / 1024^2
    c(rss = v("^VmRSS"), hwm = v("^VmHWM"))
  }
  reset <- function() invisible(try(cat("5", file = "/proc/self/clear_refs"), silent = TRUE))
  invisible(gc()); reset()
  pr <- new.env(); pr$base <- status()[["rss"]]; pr$last <- pr$base; pr$max <- 0
  cat(sprintf("R process with the data %.3f GB (GB below: above it)\n", pr$base))
  probe <- function(where) {
    s <- status()
    if (s[["hwm"]] - pr$last > 0.004 || abs(s[["rss"]] - pr$last) > 0.004)
      cat(sprintf("%-40s resident %+.3f  peak since the last reading %+.3f%s\n", where,
                  s[["rss"]] - pr$base, s[["hwm"]] - pr$base,
                  if (live) sprintf("  R's live %.3f", sum(gc()[, 2L]) / 1024) else ""))
    pr$max <- max(pr$max, s[["hwm"]] - pr$base); pr$last <- status()[["rss"]]; reset()
  }
  ns <- asNamespace("mklearn")
  fns <- Filter(function(f) is.function(get(f, ns)) && !is.primitive(get(f, ns)),
                ls(ns, all.names = TRUE))
  for (f in fns) suppressMessages(trace(f, where = ns, print = FALSE,
                                        tracer = bquote(probe(paste("enter", .(f)))),
                                        exit = bquote(probe(paste("exit ", .(f))))))
  ctl <- if (method %in% c("uniform", "mwu")) mkl_control(nthreads = 1, store = store) else
    mkl_control(nthreads = 1, store = store, maxiter = 1)
  fit <- suppressWarnings(mkl(x, y, kernels = ks, method = method, control = ctl))
  probe("end")
  cat(sprintf("store %s: peak %.3f GB, predicted %.3f GB\n", fit$store, pr$max,
              mkl_memory(n, 10, method, fit$store, nthreads = 1, control = ctl,
                         p = ncol(x))$total / 1e9))
  quit(save = "no")
}

if (length(args) && args[1L] == "cpu") {
  n <- as.integer(args[2L]); method <- args[3L]
  maxiter <- if (length(args) > 3L) as.integer(args[4L]) else 3L
  kc <- if (length(args) > 4L) as.integer(args[5L]) else NULL
  kcols <- if (length(args) > 5L) as.integer(args[6L]) else NULL
  nth <- if (length(args) > 6L) as.integer(args[7L]) else 1L
  suppressPackageStartupMessages(library(mklearn))
  set.seed(1)
  d <- mlbench::mlbench.twonorm(n)
  x <- d$x; y <- ifelse(d$classes == 1, -1, 1)
  ks <- kernel_set(rbf_kernel(2^(-5:4)))
  ctl <- list(nthreads = nth, store = "fly", platt = "train")
  ctl$kcache <- kc   # (absent when not given: a build without the cache has no such setting)
  ctl$kcols <- kcols
  if (method != "uniform") ctl$maxiter <- maxiter
  tm <- system.time(fit <- suppressWarnings(mkl(x, y, kernels = ks, method = method,
                                                control = do.call(mkl_control, ctl))))
  # the inner iterations: the SVMs' SMO, MKL-L0/1's ADMM and conjugate gradients
  inner <- if (method == "l01")
    sprintf("ADMM %d, CG %d", fit$iterations, fit$info$cg_iterations) else
    paste("SMO", format(if (is.null(fit$info$smo_iterations)) fit$info$svm_iterations else
      fit$info$smo_iterations))
  cat(sprintf("n = %d %-8s cpu %7.1f s (elapsed %6.1f s)  objective %.10g  iterations: %s\n",
              n, method, tm[["user.self"]] + tm[["sys.self"]], tm[["elapsed"]], fit$objective,
              inner))
  quit(save = "no")
}

if (length(args) && args[1L] == "case") {
  # one case: case <n> <method> <threads> <store> <maxiter> <memory>
  n <- as.integer(args[2L]); method <- args[3L]; nt <- as.integer(args[4L])
  store <- args[5L]; maxiter <- as.integer(args[6L])
  memory <- if (args[7L] == "default") NULL else as.double(args[7L])
  suppressPackageStartupMessages(library(mklearn))
  set.seed(1)
  d <- mlbench::mlbench.twonorm(n)
  x <- d$x; y <- ifelse(d$classes == 1, -1, 1)
  if (method == "none") { cat("RESULT\tnone\t-\tNA\tbaseline\n"); quit(save = "no") }
  ks <- kernel_set(rbf_kernel(2^(-5:4)))
  has_maxiter <- !method %in% c("uniform", "mwu")
  ctl <- if (has_maxiter) mkl_control(nthreads = nt, store = store, maxiter = maxiter,
                                      memory = memory) else
    mkl_control(nthreads = nt, store = store, memory = memory)
  # the store mkl() will choose and its prediction, before the fit (a timeout keeps this line)
  mc <- mklearn:::method_control(method, ctl)
  mc$xcols <- ncol(x)   # as mkl() sets it: the front end's copies of x
  ch <- tryCatch(mklearn:::choose_store(mc, method, n, 10),
                 error = function(e) NA_character_)
  if (!is.na(ch)) cat(sprintf("CHOICE\t%s\t%.0f\n", ch,
                              mkl_memory(n, 10, method, ch, nthreads = nt, control = ctl,
                                         p = ncol(x))$total))
  # a mark when the fit is done and the cross-validation of the probabilities starts (the
  # process's CPU seconds then: the fit's share of the case's cpu)
  suppressMessages(trace("platt_cv_values", where = asNamespace("mklearn"), print = FALSE,
                         tracer = quote(cat(sprintf("PLATT\t%.1f\n",
                                                    sum(proc.time()[1:2]))))))
  t0 <- proc.time()[["elapsed"]]
  fit <- tryCatch(suppressWarnings(mkl(x, y, kernels = ks, method = method, control = ctl)),
                  error = function(e) conditionMessage(e))
  el <- proc.time()[["elapsed"]] - t0
  if (is.character(fit)) {
    # the smaller need of the stores tried (the one the stop message names)
    mm <- mkl_memory(n, 10, method, if (store == "auto") c("dense", "lowrank", "fly") else
                       store, nthreads = nt, control = ctl, p = ncol(x))
    cat(sprintf("RESULT\t%s\t%s\t%.0f\tstop after %.1f s: %s\n", method, "-",
                min(mm$total), el, gsub("[\t\n]", " ", fit)))
  } else {
    pred <- mkl_memory(n, 10, method, fit$store, nthreads = nt, control = ctl, p = ncol(x))$total
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
maxiter <- opt("maxiter", "1")
memory <- opt("memory", "default")
lock <- opt("lock", "")
free_min <- as.double(opt("free", "12"))
script <- normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)))

free_gb <- function() {
  l <- grep("^MemAvailable:", readLines("/proc/meminfo"), value = TRUE)
  as.double(gsub("[^0-9]", "", l)) / 1024^2
}
run_case <- function(n, method) {
  while (free_gb() < free_min) Sys.sleep(20)
  log <- tempfile()
  cmd <- c("-v", "-o", log, "timeout", tmo, "nice", "-n", "10", "Rscript", script, "case", n,
           method, nt, store, maxiter, memory)
  out <- suppressWarnings(if (nzchar(lock)) system2("flock", c(lock, "/usr/bin/time", cmd),
                                                    stdout = TRUE, stderr = FALSE) else
    system2("/usr/bin/time", cmd, stdout = TRUE, stderr = FALSE))
  tv <- readLines(log)
  val <- function(key) as.double(sub(".*: ", "", grep(key, tv, value = TRUE, fixed = TRUE)))
  kb <- val("Maximum resident set size")
  cpu <- val("User time (seconds)") + val("System time (seconds)")
  res <- strsplit(grep("^RESULT", out, value = TRUE), "\t")
  pl <- grep("^PLATT", out, value = TRUE)
  folds <- if (length(pl)) sprintf(" (folds from %s s of cpu)", sub("^PLATT\t", "", pl[1L])) else ""
  if (!length(res)) {
    # stopped by the timeout while fitting: the store mkl() chose and its prediction
    # (no choice line: stopped before mkl() was reached)
    ch <- c(strsplit(grep("^CHOICE", out, value = TRUE), "\t"), list(rep(NA, 3)))[[1L]]
    where <- if (length(pl)) "in the Platt folds" else "while fitting"
    return(list(store = ch[2L], predicted = as.double(ch[3L]), peak = kb * 1024, cpu = cpu,
                outcome = sprintf("stopped by the timeout (%d s) %s%s", tmo, where, folds)))
  }
  res <- res[[1L]]
  list(store = res[3L], predicted = as.double(res[4L]), peak = kb * 1024, cpu = cpu,
       outcome = paste0(res[5L], folds))
}
gb <- function(b) ifelse(is.na(b), "-", sprintf("%.2f GB", b / 1e9))
for (n in ns) {
  base <- suppressWarnings(run_case(n, "none"))$peak
  cat(sprintf(paste0("\ntwonorm n = %d, M = 10, nthreads = %d, store = \"%s\"; R process ",
                     "baseline %s (subtracted)\n"), n, nt, store, gb(base)))
  cat(sprintf("%-8s %-7s %10s %10s %7s  %s\n", "method", "store", "predicted", "measured",
              "cpu", "outcome"))
  for (m in methods) {
    r <- run_case(n, m)
    cat(sprintf("%-8s %-7s %10s %10s %6.0fs  %s\n", m, r$store, gb(r$predicted),
                gb(r$peak - base), r$cpu, r$outcome))
  }
}
