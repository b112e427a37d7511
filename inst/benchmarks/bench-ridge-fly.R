# Kernel ridge (method "uniform", regression) on the fly: one fit of mkl() on friedman1
# (mlbench::mlbench.friedman1, sd 1, seed 1; n training rows and 2,000 test rows), 10 Gaussian
# kernels (rbf_kernel(2^(-5:4))), store = "fly", one thread, the default C. Prints the CPU
# seconds of the mkl() call, the objective, CG iterations (NA for the Cholesky of the
# combined kernel in builds before CG), the test RMSE and mkl_memory()'s prediction; run it
# under /usr/bin/time -v for the peak resident set, with R_LIBS pointing at the build to measure.
# Usage: Rscript bench-ridge-fly.R <n> [--memory=bytes] [--cg_tol=t] [--cg_maxiter=k] [--kcols=k]
#        [--C=c]
args <- commandArgs(trailingOnly = TRUE)
`%or%` <- function(a, b) if (is.null(a)) b else a
n <- as.integer(args[1L])
opt <- function(k, default = NULL) {
  a <- grep(sprintf("^--%s=", k), args, value = TRUE)
  if (length(a)) as.numeric(sub("^[^=]*=", "", a[1L])) else default
}
suppressPackageStartupMessages(library(mklearn))
set.seed(1)
d <- mlbench::mlbench.friedman1(n + 2000, sd = 1)
tr <- seq_len(n)
x <- d$x[tr, ]; y <- d$y[tr]
ks <- kernel_set(rbf_kernel(2^(-5:4)), features = "all")
ctl <- list(store = "fly", nthreads = 1)
if (!is.null(opt("memory"))) ctl$memory <- opt("memory")
if (!is.null(opt("cg_tol"))) ctl$cg_tol <- opt("cg_tol")
if (!is.null(opt("kcols"))) ctl$kcols <- opt("kcols")
if (!is.null(opt("cg_maxiter"))) ctl$cg_maxiter <- opt("cg_maxiter")
ctl <- do.call(mkl_control, ctl)
Cv <- opt("C")
t0 <- proc.time()
# (a CG stopped at cg_maxiter warns: reported as converged=FALSE below)
fit <- suppressWarnings(
  if (is.null(Cv)) mkl(x, y, kernels = ks, method = "uniform", control = ctl) else
    mkl(x, y, kernels = ks, method = "uniform", C = Cv, control = ctl))
t1 <- proc.time() - t0
pred <- predict(fit, d$x[-tr, ])
rmse <- sqrt(mean((pred - d$y[-tr])^2))
mm <- mkl_memory(n, 10, "uniform", "fly", nthreads = 1, control = ctl, task = "regression",
                 p = ncol(x))
cat(sprintf(paste0("RESULT n=%d cpu=%.1f elapsed=%.1f objective=%.15g cg_iterations=%s ",
                   "cg_residual=%s kcache=%s kcols=%s converged=%s rmse=%.5f predicted_GB=%.3f\n"),
            n, t1[["user.self"]] + t1[["sys.self"]], t1[["elapsed"]], fit$objective,
            format(fit$info$cg_iterations %or% NA), format(signif(fit$info$cg_residual %or% NA, 3)),
            format(fit$info$kcache %or% NA), format(fit$info$kcols %or% NA), fit$converged, rmse,
            mm$total / 1e9))
