# Benchmark: uniform and the SVM family (HessianMKL, SimpleMKL, lp-norm) on the low-rank store
# (src/lsvm.c, src/svmfam_lr.c) beside e1071's one-kernel RBF SVM (libsvm) on the same data.
#
#   MKL_BENCH_N=10000 Rscript bench-lowrank-svm.R
#   MKL_BENCH_METHODS=uniform,hessian   MKL_BENCH_THREADS=1,2   MKL_BENCH_C=1
#   MKL_BENCH_RANK=200 MKL_BENCH_LRTOL=1e-3 (the low-rank store's cap and tolerance)
#   MKL_BENCH_E1071=1 (0: skip e1071)
#
# Twonorm (mlbench.twonorm, 20 variables, Bayes rate 0.977), n training rows and 20,000 test
# rows, 10 Gaussian kernels on all variables with widths sqrt(20) 2^(-1.5 .. 3) / 2 (trace
# normalised, mkl()'s default), the user's C. Every fit runs in its own R process, so that its
# peak resident memory (VmHWM) is its own; printed per fit: seconds of the whole mkl() call
# (kernels, factorisation and solver), peak memory, the certified relative gap, outer
# iterations, linear-SVM passes, held-out accuracy, total rank and the largest relative
# residual trace of the factors, and the CPU seconds of the call (user + system, all threads:
# on a shared machine the elapsed time says more about the load than about the fit).
# Results: inst/notes/NOTES-svm-family.md, "Low rank".
args <- commandArgs(trailingOnly = TRUE)
env <- function(k, d) Sys.getenv(k, d)
n <- as.integer(env("MKL_BENCH_N", "10000"))
C <- as.numeric(env("MKL_BENCH_C", "1"))
rank <- as.integer(env("MKL_BENCH_RANK", "200"))
lrtol <- as.numeric(env("MKL_BENCH_LRTOL", "1e-3"))

peak_mb <- function() {
  s <- readLines("/proc/self/status")
  as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep("^VmHWM", s, value = TRUE))) / 1024
}

twonorm <- function(n, seed) {
  set.seed(seed)
  d <- mlbench::mlbench.twonorm(n)
  list(x = d$x, y = ifelse(d$classes == 1, 1, -1))
}

if (length(args) >= 2L && args[1L] == "--child") {
  suppressPackageStartupMessages(library(mklearn))
  method <- args[2L]
  nt <- as.integer(args[3L])
  tr <- twonorm(n, 1)
  te <- twonorm(20000, 2)
  cpu <- function() sum(proc.time()[c("user.self", "sys.self")])
  t0 <- proc.time()[["elapsed"]]
  c0 <- cpu()
  if (method == "e1071") {
    f <- e1071::svm(tr$x, factor(tr$y), kernel = "radial", cost = C)
    sec <- proc.time()[["elapsed"]] - t0
    acc <- mean(as.character(predict(f, te$x)) == as.character(te$y))
    cat(sprintf("RESULT %s %d %d %.2f %.0f NA NA NA %.4f NA NA %.2f\n", method, n, nt, sec,
                peak_mb(), acc, cpu() - c0))
    quit(save = "no")
  }
  ks <- kernel_set(rbf_kernel(sigma = sqrt(20) * 2^seq(-1.5, 3, by = 0.5) / 2))
  ctl <- mkl_control(store = "lowrank", rank = rank, lowrank_tol = lrtol, nthreads = nt)
  f <- mkl(tr$x, tr$y, kernels = ks, method = method, C = C, control = ctl)
  sec <- proc.time()[["elapsed"]] - t0
  cs <- cpu() - c0
  acc <- mean(predict(f, te$x) == te$y)
  gap <- tail(f$history$gap, 1L)
  passes <- if (is.null(f$info$smo_iterations)) f$info$svm_iterations else f$info$smo_iterations
  cat(sprintf("RESULT %s %d %d %.2f %.0f %.2e %d %.0f %.4f %d %.2e %.2f\n", method, n, nt,
              sec, peak_mb(), gap, f$iterations, passes, acc, sum(f$lowrank$rank),
              max(f$lowrank$error), cs))
  quit(save = "no")
}

methods <- strsplit(env("MKL_BENCH_METHODS", "uniform,hessian"), ",")[[1L]]
threads <- as.integer(strsplit(env("MKL_BENCH_THREADS", "1,2"), ",")[[1L]])
if (env("MKL_BENCH_E1071", "1") == "1") methods <- c(methods, "e1071")
me <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
cat(paste("method n threads seconds peak_MB gap iterations svm_passes accuracy rank max_error",
          "cpu_seconds\n"))
for (m in methods) for (nt in if (m == "e1071") 1L else threads) {
  out <- system2(file.path(R.home("bin"), "Rscript"), c(me, "--child", m, nt), stdout = TRUE,
                 stderr = FALSE)
  cat(sub("^RESULT ", "", grep("^RESULT", out, value = TRUE)), sep = "\n")
}
