# lp-norm MKL (closed-form weight update alternating with the SVM), p >= 1.

lp_data <- function() {
  set.seed(3)
  data("Sonar", package = "mlbench", envir = environment())
  X <- scale(as.matrix(Sonar[, 1:60])); y <- ifelse(Sonar$Class == "M", 1, -1)
  idx <- sample(nrow(X), 100)
  list(K = centred_rbf_kernels(X[idx, ], c(1, 3, 10), list(1:60, 1:15, 16:30, 31:45, 46:60)),
       y = y[idx], C = 100)
}

test_that("lp-norm MKL (p = 2, 4/3) is certified: lp-dual gap, fixed point, no better d on the sphere", {
  skip_if_not_installed("mlbench")
  skip_if_not_installed("quadprog")
  dat <- lp_data()
  M <- dim(dat$K)[3]
  for (p in c(2, 4 / 3)) {
    f <- mklearn:::fit_lp(dat$K, dat$y, "classification", dat$C,
                          list(p = p, tol = 1e-5, svm_tol = 1e-8), NULL)
    expect_true(f$converged)
    expect_lte(f$info$gap, 1e-5)
    expect_gte(min(f$history$gap), -1e-12)
    d <- f$info$weights_raw
    expect_equal(sum(d^p), 1, tolerance = 1e-10)               # on the unit lp sphere
    expect_equal(f$weights, d / sum(d))                        # reported weights sum to 1
    expect_equal(f$state$weights, d)
    # J(d) from the independent QP solver on K(d)
    qs <- qp_svm(combine_R(dat$K, d), dat$y, dat$C)
    expect_lt(abs(qs$J - f$objective) / f$objective, 1e-6)
    # the lp-dual bound from the QP solver's alpha: sum(a) - ||v(a)||_{p*} / 2 <= J* <= J(d)
    ya <- dat$y * qs$a
    v <- vapply(seq_len(M), function(m) drop(crossprod(ya, dat$K[, , m] %*% ya)), 0)
    ps <- p / (p - 1)
    D <- sum(qs$a) - 0.5 * sum(v^ps)^(1 / ps)
    expect_gte(qs$J - D, -1e-9 * qs$J)
    expect_lt((qs$J - D) / qs$J, 1e-4)
    # fixed point of the closed-form update: d_m proportional to (d_m^2 v_m)^(1/(p+1))
    dn <- (d^2 * v)^(1 / (p + 1))
    dn <- dn / sum(dn^p)^(1 / p)
    expect_lt(max(abs(dn - d)), 1e-3)
    # no better point on the unit lp sphere among random perturbations
    set.seed(11)
    for (r in 1:3) {
      d2 <- d * exp(stats::rnorm(M, 0, 0.2))
      d2 <- d2 / sum(d2^p)^(1 / p)
      expect_gte(qp_svm(combine_R(dat$K, d2), dat$y, dat$C)$J, f$objective * (1 - 1e-7))
    }
    # the decision function is that of the SVM on K(d)
    fx <- rep(f$b, length(dat$y))
    for (m in seq_len(M)) fx <- fx + drop(dat$K[, , m] %*% f$alpha[, m])
    expect_equal(fx, drop(combine_R(dat$K, d) %*% (dat$y * f$state$alpha_svm)) + f$b,
                 tolerance = 1e-10)
  }
})

test_that("lp-norm MKL: larger p gives less sparse, more uniform weights; p = 1 is the simplex", {
  skip_if_not_installed("mlbench")
  dat <- lp_data()
  f1 <- mklearn:::fit_lp(dat$K, dat$y, "classification", dat$C, list(p = 1, tol = 1e-4, maxiter = 5000), NULL)
  f2 <- mklearn:::fit_lp(dat$K, dat$y, "classification", dat$C, list(p = 2, tol = 1e-4), NULL)
  f8 <- mklearn:::fit_lp(dat$K, dat$y, "classification", dat$C, list(p = 8, tol = 1e-4), NULL)
  expect_true(f1$converged && f2$converged && f8$converged)
  ent <- function(w) -sum(w[w > 0] * log(w[w > 0]))
  expect_lt(ent(f1$weights), ent(f2$weights))
  expect_lt(ent(f2$weights), ent(f8$weights))
  expect_equal(sum(f1$info$weights_raw), 1, tolerance = 1e-12)
  # the p = 1 solution agrees with SimpleMKL's
  fs <- mklearn:::fit_simple(dat$K, dat$y, "classification", dat$C, list(tol = 1e-4, maxiter = 5000), NULL)
  expect_true(fs$converged)
  expect_lt(abs(fs$objective - f1$objective) / fs$objective, 2e-4)
  # ||d||_p = 1 is a larger set for larger p, so J(d*) decreases with p
  expect_lt(f2$objective, f1$objective)
  expect_lt(f8$objective, f2$objective)
  # warm start from its own state: converged at once
  f2b <- mklearn:::fit_lp(dat$K, dat$y, "classification", dat$C, list(p = 2, tol = 1e-4), f2$state)
  expect_equal(f2b$iterations, 0L)
})
