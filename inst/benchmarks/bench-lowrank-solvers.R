#!/usr/bin/env Rscript
# SpicyMKL (hinge) and Empirical Bayes MKL on a low-rank store, beside e1071's RBF SVM in the
# same run. Gaussian kernels of spread widths (squared widths the median squared distance times
# 2^(-2, -1.5, ..., 2.5)), factored by a pivoted incomplete Cholesky written here in R (greedy on
# the largest residual diagonal; stops at a relative trace error or a rank cap), with the test
# factors K(Z, pivots) L^{-T} (Nystroem), so that the fit and its predictions read only factors.
#
# Usage: Rscript bench-lowrank-solvers.R [spicy|bayes] [n] [rank cap] [trace tol]
#   spicy: mlbench.twonorm, n training and 5000 test points, C = 1 (C_spicy = sqrt(n) / 2),
#          tol 1e-3 (the default); accuracy against the Bayes rule's 0.977.
#   bayes: mlbench.friedman1 (sd 1), n training and 2000 test points; test RMSE.
# Prints factorisation time, solver time, the solver's peak resident memory (VmHWM reset before
# the solver), the relative trace error of the factors, gap / fixed point, accuracy, and the
# same for e1071::svm on the middle width. Results: inst/notes/NOTES-spicy.md, NOTES-bayes.md.
suppressPackageStartupMessages(library(mklearn))
args <- commandArgs(trailingOnly = TRUE)
what <- if (length(args) >= 1L) args[1L] else "spicy"
n <- if (length(args) >= 2L) as.integer(args[2L]) else 10000L
rcap <- if (length(args) >= 3L) as.integer(args[3L]) else 100L
ttol <- if (length(args) >= 4L) as.numeric(args[4L]) else 1e-3
ns <- asNamespace("mklearn")

# pivoted incomplete Cholesky of exp(-|x_i - x_j|^2 / (2 s2)) (unit diagonal)
pchol <- function(x, s2, rcap, ttol) {
  n <- nrow(x); xx <- rowSums(x^2)
  G <- matrix(0, n, rcap); d <- rep(1, n); piv <- integer(0)
  for (k in seq_len(rcap)) {
    j <- which.max(d)
    if (sum(d) <= ttol * n) break
    kc <- exp(-pmax(xx + xx[j] - 2 * drop(x %*% x[j, ]), 0) / (2 * s2))
    g <- (kc - if (k > 1) drop(G[, 1:(k - 1), drop = FALSE] %*% G[j, 1:(k - 1)]) else 0) /
      sqrt(d[j])
    G[, k] <- g; d <- pmax(d - g^2, 0); d[j] <- 0; piv <- c(piv, j)
  }
  r <- length(piv)
  list(G = G[, seq_len(r), drop = FALSE], piv = piv, err = sum(d) / n)
}
# test factors: K(Z, pivots) L^{-T}, L = G[pivots, ] (lower triangular)
ptest <- function(z, x, s2, f) {
  P <- x[f$piv, , drop = FALSE]
  Kz <- exp(-pmax(outer(rowSums(z^2), rowSums(P^2), "+") - 2 * z %*% t(P), 0) / (2 * s2))
  t(backsolve(f$G[f$piv, , drop = FALSE], t(Kz), upper.tri = FALSE))
}
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
sub <- x[sample(n, min(n, 1000)), ]
d2 <- median(as.vector(dist(sub))^2)
s2 <- d2 * 2^seq(-2, 2.5, by = 0.5)
t0 <- proc.time()[["elapsed"]]
fs <- lapply(s2, function(s) pchol(x, s, rcap, ttol))
tfac <- proc.time()[["elapsed"]] - t0
G <- lapply(fs, `[[`, "G")
Gz <- Map(function(s, f) ptest(z, x, s, f), s2, fs)
st <- ns$lowrank_store(G, jitter = 0)
stz <- ns$lowrank_store(G, jitter = 0, Gz = Gz)
ranks <- vapply(G, ncol, 1L)
cat(sprintf("%s n = %d: ranks %s (R = %d), trace error max %.2e, factors %.1f s\n", what, n,
            paste(ranks, collapse = " "), sum(ranks), max(vapply(fs, `[[`, 0, "err")), tfac))
rm(fs); invisible(gc())

peak_reset()
t0 <- proc.time()[["elapsed"]]; c0 <- proc.time()[["user.self"]]
if (what == "spicy") {
  fit <- ns$fit_spicy(st, y, "classification", sqrt(n) / 2, list(nthreads = 1L), NULL)
} else {
  fit <- ns$fit_bayes(st, y, "regression", NA, list(nthreads = 1L), NULL)
}
tfit <- proc.time()[["elapsed"]] - t0; cfit <- proc.time()[["user.self"]] - c0
pk <- peak()
f <- ns$store_decision(stz, fit$alpha, seq_along(G)) + fit$b
if (what == "spicy") {
  acc <- mean(sign(f) == yt)
  cat(sprintf(paste0("spicy lowrank: solver %.1f s (CPU %.1f s), peak %.0f MB, gap %.2e (%s), ",
                     "iterations %d, active %d, accuracy %.4f\n"),
              tfit, cfit, pk, fit$info$gap, if (fit$converged) "converged" else "not converged",
              fit$iterations, sum(fit$weights > 0), acc))
} else {
  cat(sprintf(paste0("bayes lowrank: solver %.1f s (CPU %.1f s), peak %.0f MB, J %.6f, ",
                     "max|dJ/dlog theta| %.2e (%s), steps %d, test RMSE %.4f\n"),
              tfit, cfit, pk, fit$objective, fit$info$gradient_max, fit$info$stop, fit$iterations,
              sqrt(mean((f - yt)^2))))
}
if (requireNamespace("e1071", quietly = TRUE)) {
  peak_reset()
  t0 <- proc.time()[["elapsed"]]; c0 <- proc.time()[["user.self"]]
  sv <- if (what == "spicy")
    e1071::svm(x, factor(y), kernel = "radial", gamma = 1 / (2 * s2[5]), cost = 1) else
    e1071::svm(x, y, kernel = "radial", gamma = 1 / (2 * s2[5]), cost = 1)
  tsv <- proc.time()[["elapsed"]] - t0; csv <- proc.time()[["user.self"]] - c0
  pv <- predict(sv, z)
  q <- if (what == "spicy") sprintf("accuracy %.4f", mean(as.numeric(as.character(pv)) == yt)) else
    sprintf("test RMSE %.4f", sqrt(mean((pv - yt)^2)))
  cat(sprintf("e1071 svm (one kernel, middle width): %.1f s (CPU %.1f s), peak %.0f MB, %s\n",
              tsv, csv, peak(), q))
}
