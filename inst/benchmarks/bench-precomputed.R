# mkl() on precomputed kernels: the whole call against the solver inside it, with the default
# one-pass kernel check (check_kernels = "fast"), beside the eigenvalue check ("full") and a
# plain read of the array (one pass, the C finiteness scan) timed in the same run.
# Target: whole call <= 1.5 x solver + one pass.
#   Rscript inst/benchmarks/bench-precomputed.R            (MKLEARN_BENCH_FULL=0 skips "full")
# 1. 6000 precomputed 200 x 200 kernels (the SpicyMKL paper's Fig. 3 largest M; ringnorm, random
#    Gaussian kernels on feature subsets, unit trace), SpicyMKL hinge at the paper's C = 0.005,
#    0.05 and 0.5 (mkl()'s C = 1 / (2 C) = 100, 10, 1), and HessianMKL at each problem's box
#    constant (the checks are the same for every C; the solver gets faster as C grows, so C = 0.5
#    has the thinnest margin).
# 2. 20 precomputed 2000 x 2000 kernels (Fig. 4's largest N), the same fits.
suppressPackageStartupMessages({library(mklearn); library(mlbench)})
full <- Sys.getenv("MKLEARN_BENCH_FULL", "1") != "0"
one_pass <- function(K) min(replicate(3, system.time(
  .Call(mklearn:::C_check_kernels, K, 0L, 0L))[["elapsed"]]))
check_time <- function(K, level) system.time(
  .Call(mklearn:::C_check_kernels, K, level, 0L))[["elapsed"]]
run <- function(K, y, label) {
  pass <- one_pass(K)
  fast <- min(replicate(3, check_time(K, 1L)))
  cat(sprintf("%s: %.2f GB; one pass %.3f s, fast check %.3f s (%.1f passes)\n", label,
              8 * length(K) / 1e9, pass, fast, fast / pass))
  for (Cp in c(0.005, 0.05, 0.5)) for (method in c("spicy", "hessian")) {
    C <- if (method == "spicy") 1 / (2 * Cp) else C_svm
    gc()
    t <- system.time(fit <- suppressWarnings(mkl(NULL, y, kernels = K, method = method,
                                                 C = C)))[["elapsed"]]
    if (method == "spicy") C_svm <<- fit$info$C_svm
    s <- fit$timing[["fit"]]
    target <- 1.5 * s + pass
    cat(sprintf(paste0("  C = %-5g %-8s whole call %.3f s, solver %.3f s, checks %.3f s; target ",
                       "1.5 x solver + one pass = %.3f s: ratio %.2f (<= 1 meets it)\n"),
                Cp, method, t, s, fit$timing[["kernels"]], target, t / target))
  }
  if (full) {
    m <- min(dim(K)[3], if (dim(K)[1] > 1000) 2L else 200L)
    tf <- check_time(K[, , seq_len(m), drop = FALSE], 2L)
    cat(sprintf("  full eigenvalue check: %.3f s per kernel (%d timed), about %.1f s for all\n",
                tf / m, m, tf / m * dim(K)[3]))
  }
}
C_svm <- NA
set.seed(1)
d <- mlbench.ringnorm(200, d = 20)
K <- gram(random_kernels(6000, 20), d$x)
run(K, d$classes, "6000 kernels, N = 200")
rm(K); invisible(gc())
set.seed(2)
d <- mlbench.ringnorm(2000, d = 20)
K <- gram(random_kernels(20, 20), d$x)
run(K, d$classes, "20 kernels, N = 2000")
