# Kernel construction and the inner SVM, timed beside kernlab in the same run.
#   Rscript inst/benchmarks/bench-kernels.R
# 1. The 27 (d + 1) = 918-kernel set on Ionosphere (mlbench; 351 x 33 numeric columns):
#    gram() against a loop of kernlab::kernelMatrix filling the same n x n x M array.
# 2. One Gaussian kernel on all features at N = 2000 (mlbench ringnorm and twonorm with 20
#    features, twonorm with 120): gram() and the kernel part of the whole mkl() call against
#    kernlab::kernelMatrix (target: mklearn at least as fast, ratio >= 1).
# 3. The SMO SVM (svm_smo) against kernlab::ksvm on a precomputed kernel, N = 2000.
suppressPackageStartupMessages({
  library(mklearn); library(kernlab); library(mlbench)
})
reps <- as.integer(Sys.getenv("MKLEARN_BENCH_REPS", "5"))
data(Ionosphere)
x <- Ionosphere[, -c(2, 35)]                     # V2 is constant; 35 is the class
x$V1 <- as.numeric(as.character(x$V1))
x <- as.matrix(x)
sig <- c(0.1, 0.25, 0.5, 0.75, 1:20)
ks <- kernel_set(rbf_kernel(sigma = sig), poly_kernel(degree = 1:3),
                 features = c("all", "each"), normalize = "none", jitter = 0)
M <- n_kernels(ks, x); n <- nrow(x)
groups <- c(list(seq_len(ncol(x))), as.list(seq_len(ncol(x))))
kernlab_loop <- function() {
  K <- array(0, c(n, n, M)); m <- 0L
  for (g in groups) {
    xg <- x[, g, drop = FALSE]
    for (s in sig) { m <- m + 1L; K[, , m] <- kernelMatrix(rbfdot(sigma = 1 / (2 * s^2)), xg) }
    for (d in 1:3) { m <- m + 1L; K[, , m] <- kernelMatrix(polydot(degree = d, scale = 1, offset = 1), xg) }
  }
  K
}
time_min <- function(f, reps) {
  t <- numeric(reps)
  for (r in seq_len(reps)) { gc(); t[r] <- system.time(out <- f())[["elapsed"]] }
  list(time = min(t), median = stats::median(t), value = out)
}
a <- time_min(function() gram(ks, x), reps)
b <- time_min(kernlab_loop, max(1L, reps %/% 2L))
err <- 0
for (m in seq_len(M)) {
  ref <- b$value[, , m]
  err <- max(err, max(abs(a$value[, , m] - ref)) / max(abs(ref)))
}
cat(sprintf("Kernels: Ionosphere %d x %d, M = %d (%.0f MB), threads = %d\n", n, ncol(x), M,
            8 * n * n * M / 1e6, .Call(mklearn:::C_threads, 0L)))
cat(sprintf("  mklearn gram()        : %.3f s (median %.3f)\n", a$time, a$median))
cat(sprintf("  kernlab kernelMatrix  : %.3f s (median %.3f)\n", b$time, b$median))
cat(sprintf("  speed-up ratio        : %.1f x (target >= 20)  max relative difference %.2e\n",
            b$time / a$time, err))
rm(a, b); invisible(gc())

# ---- one kernel on all features at large N (the feature group's products by BLAS dgemm)
set.seed(1)
N <- 2000
big <- list(ringnorm_20 = mlbench.ringnorm(N, d = 20), twonorm_20 = mlbench.twonorm(N, d = 20),
            twonorm_120 = mlbench.twonorm(N, d = 120))
cat(sprintf("One Gaussian kernel on all features, N = %d (sigma^2 = p, unnormalised)\n", N))
for (nm in names(big)) {
  xb <- big[[nm]]$x; yb <- big[[nm]]$classes; p <- ncol(xb)
  ksb <- kernel_set(rbf_kernel(sigma = sqrt(p)), normalize = "none", jitter = 0)
  a <- time_min(function() gram(ksb, xb), reps)
  b <- time_min(function() kernelMatrix(rbfdot(sigma = 1 / (2 * p)), xb), reps)
  err <- max(abs(a$value[, , 1] - b$value)) / max(abs(b$value))
  # the whole user call's kernel part (standardising, building, normalising)
  wt <- min(vapply(seq_len(reps), function(r) {
    gc(); mkl(xb, yb, kernels = kernel_set(rbf_kernel(sigma = sqrt(p))),
              method = "uniform")$timing[["kernels"]]
  }, numeric(1)))
  wk <- min(vapply(seq_len(reps), function(r) {
    gc(); system.time(kernelMatrix(rbfdot(sigma = 1 / (2 * p)), scale(xb)))[["elapsed"]]
  }, numeric(1)))
  cat(sprintf(paste0("  %-12s gram() %.3f s, kernelMatrix %.3f s, ratio %.2f (target >= 1); ",
                     "mkl() kernels %.3f s vs scale() + kernelMatrix %.3f s, ratio %.2f; ",
                     "max rel. diff %.1e\n"),
              nm, a$time, b$time, b$time / a$time, wt, wk, wk / wt, err))
}
rm(a, b, big); invisible(gc())

# ---- SMO against ksvm at N = 2000 (kernel from mlbench.twonorm)
set.seed(1)
N <- 2000
d2 <- mlbench.twonorm(N, d = 20)
yy <- ifelse(d2$classes == 1, 1, -1)
Ks <- gram(kernel_set(rbf_kernel(sigma = 4), normalize = "none", jitter = 0), d2$x)[, , 1]
Kk <- as.kernelMatrix(Ks)
for (C in c(0.1, 1, 10)) {
  s <- time_min(function() svm_smo(Ks, yy, C = C, tol = 1e-3), reps)
  k <- time_min(function() ksvm(Kk, yy, type = "C-svc", C = C, tol = 1e-3, scaled = FALSE,
                                shrinking = TRUE), reps)
  a <- numeric(N); a[alphaindex(k$value)[[1]]] <- abs(coef(k$value)[[1]])
  ka <- a * yy
  dk <- sum(a) - 0.5 * sum(ka * (Ks %*% ka))
  cat(sprintf(paste0("SMO N = %d, C = %-4s: mklearn %.3f s, ksvm %.3f s, ratio %.2f; ",
                     "dual objective %.8g vs %.8g (rel. diff %.1e)\n"),
              N, format(C), s$time, k$time, k$time / s$time, s$value$objective, dk,
              abs(s$value$objective - dk) / abs(dk)))
}
