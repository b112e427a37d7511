#!/usr/bin/env Rscript
# SpicyMKL (hinge) and Empirical Bayes MKL on the low-rank store, beside e1071's RBF SVM in the
# same run: the whole call mkl(x, y, kernels, method, control = mkl_control(store = "lowrank",
# rank, lowrank_tol, nthreads = 1)), which factors each kernel by pivoted incomplete Cholesky and
# fits on the factors. Gaussian kernels of spread widths: sigma^2 = the median squared distance
# of the (standardised) rows times 2^(-2, -1.5, ..., 2.5).
#
# Usage: Rscript bench-lowrank-solvers.R [spicy|bayes] [n] [rank cap] [trace tol]
#   spicy: mlbench.twonorm, n training and 5000 test points, the default C (1), the default
#          tol; accuracy against the Bayes rule's 0.977.
#   bayes: mlbench.friedman1 (sd 1), n training and 2000 test points; test RMSE.
# Prints the whole call's time (elapsed and CPU: user + system), its parts (kernel factors, fit,
# Platt's cross-validated sigmoid: five more fits, elapsed), its peak resident memory (VmHWM,
# reset before the call), the ranks and the largest relative residual trace, gap / fixed point
# and accuracy, SpicyMKL's Newton steps, model rounds and CG iterations, and the same for
# e1071::svm on the middle width. Results: inst/notes/NOTES-spicy.md,
# NOTES-bayes.md.
suppressPackageStartupMessages(library(mklearn))
args <- commandArgs(trailingOnly = TRUE)
what <- if (length(args) >= 1L) args[1L] else "spicy"
n <- if (length(args) >= 2L) as.integer(args[2L]) else 10000L
rcap <- if (length(args) >= 3L) as.integer(args[3L]) else 100L
ttol <- if (length(args) >= 4L) as.numeric(args[4L]) else 1e-3

cpu <- function() sum(proc.time()[c("user.self", "sys.self")])
peak_reset <- function() try(cat("5", file = "/proc/self/clear_refs"), silent = TRUE)
peak <- function() {
  s <- readLines("/proc/self/status")
  as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep("^VmHWM", s, value = TRUE))) / 1024
}

set.seed(1)
if (what == "spicy") {
  tr <- mlbench::mlbench.twonorm(n); te <- mlbench::mlbench.twonorm(5000)
  x <- tr$x; y <- ifelse(tr$classes == 1, -1, 1); z <- te$x; yt <- ifelse(te$classes == 1, -1, 1)
} else {
  tr <- mlbench::mlbench.friedman1(n, sd = 1); te <- mlbench::mlbench.friedman1(2000, sd = 1)
  x <- tr$x; y <- tr$y; z <- te$x; yt <- te$y
}
sub <- scale(x)[sample(n, min(n, 1000)), ]
d2 <- median(as.vector(dist(sub))^2)
s2 <- d2 * 2^seq(-2, 2.5, by = 0.5)
ks <- do.call(kernel_set, lapply(sqrt(s2), rbf_kernel))
ctl <- mkl_control(store = "lowrank", rank = rcap, lowrank_tol = ttol, nthreads = 1L)
peak_reset()
t0 <- proc.time()[["elapsed"]]; c0 <- cpu()
fit <- if (what == "spicy") mkl(x, factor(y), kernels = ks, method = "spicy", control = ctl) else
  mkl(x, y, kernels = ks, method = "bayes", control = ctl)
tfit <- proc.time()[["elapsed"]] - t0; cfit <- cpu() - c0
pk <- peak()
lr <- fit$lowrank
cat(sprintf("%s n = %d: ranks %s (R = %d), largest relative residual trace %.2e\n", what, n,
            paste(lr$rank, collapse = " "), sum(lr$rank), max(lr$error)))
if (what == "spicy") {
  acc <- mean(as.character(predict(fit, z, type = "class")) == as.character(yt))
  cat(sprintf(paste0("spicy lowrank: whole call %.1f s (CPU %.1f s, solver %.1f s), peak %.0f MB, ",
                     "gap %.2e (%s), active %d, accuracy %.4f\n"),
              tfit, cfit, fit$timing[["fit"]], pk, fit$info$gap,
              if (fit$converged) "converged" else "not converged", sum(fit$weights > 0), acc))
  cat(sprintf(paste0("spicy lowrank: elapsed parts %s; Newton steps %d, model rounds %d, ",
                     "CG iterations %d\n"),
              paste(names(fit$timing), sprintf("%.1f s", fit$timing), collapse = ", "),
              fit$info$newton_steps, fit$info$model_rounds, fit$info$cg_iterations))
} else {
  f <- predict(fit, z)
  cat(sprintf(paste0("bayes lowrank: whole call %.1f s (CPU %.1f s, solver %.1f s), peak %.0f MB, ",
                     "J %.6f, max|dJ/dlog theta| %.2e (%s), steps %d, test RMSE %.4f\n"),
              tfit, cfit, fit$timing[["fit"]], pk, fit$objective, fit$info$gradient_max,
              fit$info$stop, fit$iterations, sqrt(mean((f - yt)^2))))
}
if (requireNamespace("e1071", quietly = TRUE)) {
  peak_reset()
  t0 <- proc.time()[["elapsed"]]; c0 <- cpu()
  sv <- if (what == "spicy")
    e1071::svm(x, factor(y), kernel = "radial", gamma = 1 / (2 * s2[5]), cost = 1) else
    e1071::svm(x, y, kernel = "radial", gamma = 1 / (2 * s2[5]), cost = 1)
  tsv <- proc.time()[["elapsed"]] - t0; csv <- cpu() - c0
  pv <- predict(sv, z)
  q <- if (what == "spicy") sprintf("accuracy %.4f", mean(as.numeric(as.character(pv)) == yt)) else
    sprintf("test RMSE %.4f", sqrt(mean((pv - yt)^2)))
  cat(sprintf("e1071 svm (one kernel, middle width): %.1f s (CPU %.1f s), peak %.0f MB, %s\n",
              tsv, csv, peak(), q))
}
