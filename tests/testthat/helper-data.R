# Seeded data shared by the tests.

# The C that mkl() takes for a former C (the solver's constant, before C was put on the scale
# of unit-diagonal kernels; R/cscale.R) on unit-trace kernels of n points with the default
# jitter: a box constant C_old is C_old (1/n + 1e-8); a SpicyMKL penalty weight C_old is
# 1 / (2 C_old) (times sqrt(1 + n 1e-8)).
old_C <- function(C, n, method = "uniform", jitter = 1e-8)
  mklearn:::user_C(method, C, 1 / n + jitter, n)
two_class <- function(n = 80, p = 4, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(n * p), n, p, dimnames = list(NULL, paste0("v", seq_len(p))))
  y <- ifelse(x[, 1]^2 + x[, 2] + 0.3 * rnorm(n) > 1, 1, -1)
  list(x = x, y = y)
}
ionosphere_xy <- function() {
  data("Ionosphere", package = "mlbench", envir = environment())
  x <- Ionosphere[, -c(2, 35)]
  x$V1 <- as.numeric(as.character(x$V1))
  list(x = as.matrix(x), y = ifelse(Ionosphere$Class == "bad", 1, -1))
}
rbf_R <- function(a, b, sigma) {
  d2 <- outer(rowSums(a^2), rowSums(b^2), "+") - 2 * tcrossprod(a, b)
  exp(-pmax(d2, 0) / (2 * sigma^2))
}

# A kernel matrix centred in feature space, scaled to unit trace, with 1e-8 on the diagonal,
# in plain R (independent of the package's kernel code).
centre_unit_trace <- function(A) {
  rm <- rowMeans(A)
  A <- A - outer(rm, rm, "+") + mean(rm)
  A <- (A + t(A)) / 2
  A <- A / sum(diag(A))
  diag(A) <- diag(A) + 1e-8
  A
}

# Gaussian kernels, one per (feature set, width), through centre_unit_trace().
centred_rbf_kernels <- function(X, sigmas, feats = list(seq_len(ncol(X)))) {
  out <- list()
  for (f in feats) {
    D2 <- as.matrix(stats::dist(X[, f, drop = FALSE]))^2
    for (s in sigmas) out[[length(out) + 1L]] <- centre_unit_trace(exp(-D2 / (2 * s^2)))
  }
  array(unlist(out), c(nrow(X), nrow(X), length(out)))
}

# sum_m d_m K_m in plain R
combine_R <- function(K, d) {
  out <- matrix(0, dim(K)[1], dim(K)[2])
  for (m in which(d > 0)) out <- out + d[m] * K[, , m]
  out
}

# The SVM dual solved by a general-purpose QP solver (quadprog, Goldfarb-Idnani), independent
# of the package's SMO. (kernlab::ksvm was tried first: on centred unit-trace kernels at
# C = 100 it returns a clearly suboptimal alpha whose reported obj does not match it.)
qp_svm <- function(K, y, C) {
  n <- length(y)
  Q <- K * outer(y, y)
  Qr <- Q
  diag(Qr) <- diag(Qr) + 1e-10 * mean(diag(Q))
  s <- quadprog::solve.QP(Qr, rep(1, n), cbind(y, diag(n), -diag(n)),
                          c(0, rep(0, n), rep(-C, n)), meq = 1)
  a <- pmin(pmax(s$solution, 0), C)
  list(a = a, J = sum(a) - 0.5 * drop(crossprod(a, Q %*% a)))
}

# A regression fit is equivariant to the units of y: y * a gives predictions (and b, alpha)
# times a, to rounding, on the dense and the on-the-fly store (R/response.R).
expect_y_equivariant <- function(x, y, ..., scales = c(0.1, 10, 1e4), tol = 1e-8) {
  newx <- x[seq_len(min(10, nrow(x))), , drop = FALSE] + 0.1
  for (store in c("dense", "fly")) {
    ctl <- mkl_control(store = store, nthreads = 1)
    f1 <- suppressWarnings(mkl(x, y, ..., control = ctl))
    p1 <- predict(f1, newx)
    for (a in scales) {
      fa <- suppressWarnings(mkl(x, y * a, ..., control = ctl))
      expect_equal(predict(fa, newx) / a, p1, tolerance = tol)
      expect_equal(fa$fitted / a, f1$fitted, tolerance = tol)
      expect_equal(fa$b / a, f1$b, tolerance = tol)
    }
  }
}
