# MWUMKL benchmarks (issue targets; paper 003 Table 2 and Fig. 3). Run from the package root or
# anywhere with mklearn installed:
#   Rscript inst/benchmarks/bench-mwu.R            # reduced: Sonar 10^4 and 10^5 kernels,
#                                                  # twonorm N = 10,000 and 50,000
#   Rscript inst/benchmarks/bench-mwu.R full       # also Sonar with 10^6 kernels
# Each line prints the whole mkl() call (kernel description, training statistics, solver,
# model object) and the solver inside it, with the target and the ratio to it. The reference
# is the authors' C++ core (single-threaded) measured on this machine: 2.2 us of CPU per kernel
# per iteration on Sonar (61 s for 10^5 kernels, about 10 minutes for 10^6) and 11.3 s for
# twonorm with 3 Gaussian kernels at N = 50,000, eps = 0.07 (accuracy 0.978).
suppressPackageStartupMessages(library(mklearn))
args <- commandArgs(TRUE)
full <- "full" %in% args
cat(sprintf("mklearn %s, %d threads, %s\n", packageVersion("mklearn"),
            mklearn:::check_threads(NULL), format(Sys.time())))

peak_mb <- function() {
  l <- grep("^VmHWM", readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", l)) / 1024
}

data(Sonar, package = "mlbench")
xs <- as.matrix(Sonar[, 1:60]); ys <- Sonar$Class
ref_us <- 2.2                       # the authors' CPU microseconds per kernel per iteration
Ms <- c(1e4, 1e5, if (full) 1e6)
for (M in Ms) {
  set.seed(1)
  t0 <- proc.time()
  ks <- random_kernels(M, 60, size = 1, design = "mwu")
  f <- mkl(xs, ys, ks, method = "mwu", C = 100, epsilon = 0.2, standardize = "range",
           control = mkl_control(progress = FALSE))
  el <- (proc.time() - t0)[["elapsed"]]
  ref <- ref_us * 1e-6 * M * f$iterations
  target <- if (M >= 1e6) 120 else if (M >= 1e5) 12 else 12 * M / 1e5
  cat(sprintf(paste0("Sonar, %7.0f kernels, T = %d: whole call %7.2f s (solver %7.2f s); target %5.1f s ",
                     "(ratio %.2f); authors' core %6.1f s CPU (speed-up %.1fx); ",
                     "training accuracy %.3f; peak memory %.0f MB (O(MN) state %.0f MB)\n"),
              M, f$iterations, el, f$timing[["fit"]], target, el / target, ref, ref / el,
              mean(f$fitted * ifelse(ys == levels(ys)[2], 1, -1) > 0), peak_mb(),
              8 * M * nrow(xs) / 2^20))
  rm(f); invisible(gc())
}

for (N in c(10000, 50000)) {
  set.seed(1)
  d <- mlbench::mlbench.twonorm(N + 10000, d = 20)
  tr <- seq_len(N)
  ks <- kernel_set(rbf_kernel(sigma = c(1, 3, 10)))
  t0 <- proc.time()
  f <- mkl(d$x[tr, ], d$classes[tr], ks, method = "mwu", epsilon = 0.07, C = 1,
           control = mkl_control(progress = FALSE))
  el <- (proc.time() - t0)[["elapsed"]]
  acc <- mean(predict(f, d$x[-tr, ]) == d$classes[-tr])
  target <- 4 * N / 50000
  cat(sprintf(paste0("twonorm N = %d, 3 Gaussian kernels, eps = 0.07, T = %d: whole call %6.2f s ",
                     "(solver %6.2f s); target %.1f s (ratio %.2f); held-out accuracy %.4f ",
                     "(authors 0.978)\n"),
              N, f$iterations, el, f$timing[["fit"]], target, el / target, acc))
}
