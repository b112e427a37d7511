# MWUMKL's 2-norm soft margin at small C (inst/notes/NOTES-mwu.md): for each n and C, the fit's
# objective U = max_m s_m against the dual at its weights, L = min over a >= 0, sum(a) = 1,
# y'a = 0 of a' (sum_m mu_m G_m) a (quadprog), so that L <= optimum <= U; "stop k" is an
# oracle failure at iteration k. Two kernel sets on random data with balanced and one-positive
# labels, each from the dense store (precomputed) and on the fly ("fly - U": the difference of
# the objectives); the second set has the polynomials on single columns (the feature-map path
# on the fly). epsilon = 0.2. Under a minute.
#
#   Rscript bench-mwu-softmargin.R          (R_LIBS=<library> to run another build)
suppressPackageStartupMessages(library(mklearn))
ctl <- mkl_control(nthreads = 1)
sets <- list(rbf_poly = kernel_set(rbf_kernel(c(1, 3)), poly_kernel(1:2)),
             each = kernel_set(poly_kernel(1:2), rbf_kernel(1), features = "each"))
dual_at <- function(K, y, mu, Cs) {
  n <- length(y)
  G <- diag(sum(mu) / Cs, n)
  for (m in seq_along(mu)) G <- G + mu[m] * outer(y, y) * K[, , m] / sum(diag(K[, , m]))
  sc <- max(diag(G))   # quadprog on a matrix of unit scale
  sc * quadprog::solve.QP(2 * G / sc + diag(1e-14, n), rep(0, n),
                          cbind(rep(1, n), y, diag(n)), c(1, 0, rep(0, n)), meq = 2)$value
}
fit <- function(...) tryCatch(withCallingHandlers(
  mkl(..., method = "mwu", epsilon = 0.2, standardize = FALSE, control = ctl),
  warning = function(w) invokeRestart("muffleWarning")), error = function(e) e)
what <- function(f) if (inherits(f, "error"))
  sprintf("stop %s", sub(".*iteration ([0-9]+) .*", "\\1", conditionMessage(f))) else "fit"
cat(sprintf("%-8s %4s %4s %7s %6s %11s %9s %9s\n", "kernels", "n", "npos", "C", "fit",
            "U", "U/L - 1", "fly - U"))
for (nm in names(sets)) for (n in c(2, 4, 10, 50, 200)) for (npos in unique(c(1, n %/% 2))) {
  set.seed(n + npos)
  x <- matrix(rnorm(3 * n), n, 3)
  y <- rep(c(1, -1), c(npos, n - npos))
  K <- gram(sets[[nm]], x)
  for (C in c(1e-8, 1e-6, 1e-4, 1e-2, 0.1, 1, 10)) {
    f <- fit(y = factor(y, c(-1, 1)), kernels = K, C = C)
    ff <- fit(x, factor(y, c(-1, 1)), sets[[nm]], C = C)
    if (inherits(f, "error")) {
      cat(sprintf("%-8s %4d %4d %7.0e %6s\n", nm, n, npos, C, what(f)))
      next
    }
    L <- dual_at(K, y, f$info$mu, C * n)
    dfly <- if (inherits(ff, "error")) NA else ff$objective - f$objective
    cat(sprintf("%-8s %4d %4d %7.0e %6s %11.4e %9.2e %9.1e\n", nm, n, npos, C, what(f),
                f$objective, f$objective / L - 1, dfly))
  }
}
