# Empirical Bayesian MKL (method "bayes"): certificates computed in plain R from the returned
# variances, independently of src/bayes.c.

# Eq. 19 in plain R: (1/2) y' Kbar^{-1} y + (1/2) log |Kbar|, Kbar = s2 I + sum_m d_m K_m
nlml_R <- function(d, s2, K, y) {
  n <- length(y)
  Kb <- diag(s2, n)
  for (m in seq_along(d)) if (d[m] > 0) Kb <- Kb + d[m] * K[, , m]
  L <- tryCatch(chol(Kb), error = function(e) NULL)
  if (is.null(L)) return(1e10)          # outside the positive definite cone (for optim)
  a <- backsolve(L, forwardsolve(t(L), y))
  0.5 * sum(y * a) + sum(log(diag(L)))
}

# t_m = tr(Kbar^{-1} K_m), q_m = beta' K_m beta and the noise's t = tr(Kbar^{-1}), q = beta'beta
mackay_R <- function(d, s2, K, y) {
  n <- length(y)
  Kb <- diag(s2, n)
  for (m in seq_along(d)) if (d[m] > 0) Kb <- Kb + d[m] * K[, , m]
  Ki <- solve(Kb)
  beta <- drop(Ki %*% y)
  M <- dim(K)[3]
  list(t = vapply(seq_len(M), function(m) sum(Ki * K[, , m]), 1),
       q = vapply(seq_len(M), function(m) sum(beta * (K[, , m] %*% beta)), 1),
       t_noise = sum(diag(Ki)), q_noise = sum(beta^2), beta = beta)
}

# Gaussian kernels on single features of x (unit diagonal), in plain R.
feature_kernels <- function(x, sigma = 1) {
  n <- nrow(x)
  K <- array(0, c(n, n, ncol(x)))
  for (j in seq_len(ncol(x))) K[, , j] <- exp(-outer(x[, j], x[, j], "-")^2 / (2 * sigma^2))
  K
}

eb_regression <- function(n = 60, p = 5, seed = 1, sd = 0.2) {
  set.seed(seed)
  x <- matrix(rnorm(n * p), n, p)
  y <- sin(2 * x[, 1]) + 0.7 * x[, 3]^2 - 0.5 + rnorm(n, sd = sd)
  list(x = x, y = y, K = feature_kernels(x))
}

test_that("one kernel: EB's weight and noise variance maximise the marginal likelihood (optim)", {
  for (seed in 1:3) {
    dat <- eb_regression(n = 50, seed = seed)
    K <- dat$K[, , 1, drop = FALSE]
    y <- dat$y - mean(dat$y)
    fit <- mklearn:::fit_bayes(K, y, "regression", 1, mkl_control(tol = 1e-9), NULL)
    expect_true(fit$converged)
    # the reported objective is Eq. 19 at the reported variances
    expect_equal(fit$objective, nlml_R(fit$info$d, fit$info$sigma2, K, y), tolerance = 1e-10)
    # an independent optimiser over (log d, log sigma2), from several starts
    f <- function(p) nlml_R(exp(p[1]), exp(p[2]), K, y)
    best <- NULL
    for (st in list(c(0, 0), c(3, -3), c(-2, 1))) {
      o <- stats::optim(st, f, method = "BFGS", control = list(reltol = 1e-14, maxit = 1000))
      if (is.null(best) || o$value < best$value) best <- o
    }
    expect_lte(fit$objective, best$value + 1e-8)
    expect_equal(log(c(fit$info$d, fit$info$sigma2)), best$par, tolerance = 1e-3)
    # and a fine grid around EB's point finds nothing better
    g <- expand.grid(a = log(fit$info$d) + seq(-0.05, 0.05, length.out = 11),
                     b = log(fit$info$sigma2) + seq(-0.05, 0.05, length.out = 11))
    vals <- mapply(function(a, b) f(c(a, b)), g$a, g$b)
    expect_gte(min(vals), fit$objective - 1e-10)
  }
})

test_that("at exit the MacKay fixed point (Eq. 23) holds for every active kernel and the noise", {
  dat <- eb_regression(n = 70, seed = 4)
  y <- dat$y - mean(dat$y)
  tol <- 1e-6
  fit <- mklearn:::fit_bayes(dat$K, y, "regression", 1, mkl_control(tol = tol), NULL)
  expect_true(fit$converged)
  d <- fit$info$d
  act <- which(d > 0)
  expect_gt(length(act), 0)
  s <- mackay_R(d, fit$info$sigma2, dat$K, y)
  # d_m = d_m q_m / t_m (Eq. 23) in the solver's scaled form |dJ / dlog d_m| =
  # d_m |t_m - q_m| / 2 <= tol, recomputed in R, for the kernels and the noise
  expect_lt(max(0.5 * d[act] * abs(s$t[act] - s$q[act])), tol * 1.01)
  expect_lt(0.5 * fit$info$sigma2 * abs(s$t_noise - s$q_noise), tol * 1.01)
  # and the ratio itself is 1 to within tol / (share of the fit) for every active kernel
  expect_true(all(abs(s$q[act] / s$t[act] - 1) <= 2 * tol / (d[act] * s$t[act]) * 1.01))
  # the solver's own q / t agree with R's
  expect_equal(fit$info$fixed_point_ratio[act], s$q[act] / s$t[act], tolerance = 1e-8)
  # pruned kernels: the gradient of Eq. 19 at d_m = 0 is non-negative (t_m >= q_m), so zero is
  # a local boundary optimum in their coordinate
  off <- which(d == 0)
  expect_true(all(s$t[off] >= s$q[off]))
  # alpha = d_m beta, and the fitted values are the GP posterior mean plus the bias
  expect_equal(unname(fit$alpha[, act]), outer(s$beta, d[act]), tolerance = 1e-8)
})

test_that("the blocked inverse of Kbar: J, beta and the traces match R at n = 203", {
  # four blocks of the sweep and a ragged edge, with the bias kernel (a constant added to Kbar)
  set.seed(7)
  n <- 203
  x <- matrix(rnorm(n * 3), n, 3)
  y <- sin(2 * x[, 1]) + x[, 2]^2 + rnorm(n, sd = 0.3)
  K <- feature_kernels(x)
  fit <- mklearn:::fit_bayes(K, y, "regression", 1, mkl_control(maxiter = 3L, bias = "kernel"),
                             NULL)
  d <- fit$info$d
  d0 <- fit$info$bias_variance
  expect_gt(d0, 0)
  K1 <- array(c(K, rep(1, n * n)), c(n, n, 4))
  s <- mackay_R(c(d, d0), fit$info$sigma2, K1, y)
  expect_equal(fit$objective, nlml_R(c(d, d0), fit$info$sigma2, K1, y), tolerance = 1e-10)
  act <- which(d > 0)
  expect_equal(fit$info$gradient[act], 0.5 * (s$t[act] - s$q[act]), tolerance = 1e-8)
  expect_equal(fit$info$noise_ratio, s$q_noise / s$t_noise, tolerance = 1e-10)
  expect_equal(unname(fit$alpha[, act]), outer(s$beta, d[act]), tolerance = 1e-8)
})

test_that("the marginal likelihood never decreases along the history, with each update rule", {
  dat <- eb_regression(n = 60, seed = 2)
  y <- dat$y - mean(dat$y)
  for (ctl in list(mkl_control(), mkl_control(accelerate = 1),
                   mkl_control(update = "mm", tol = 1e-3, maxiter = 3000L))) {
    fit <- expect_silent(mklearn:::fit_bayes(dat$K, y, "regression", 1, ctl, NULL))
    h <- fit$history$objective
    expect_gt(length(h), 5)
    expect_true(all(diff(h) <= 1e-12 * (abs(h[-1]) + 1)))
    expect_true(fit$converged)
  }
  # a classification run on a real data set (many kernels, the noise at its floor)
  d <- ionosphere_xy()
  set.seed(1)
  i <- sample(nrow(d$x), 120)
  fit <- mkl(d$x[i, ], d$y[i], method = "bayes",
             kernels = kernel_set(rbf_kernel(c(1, 5)), features = c("all", "each")))
  h <- fit$history$objective
  expect_true(all(diff(h) <= 1e-12 * (abs(h[-1]) + 1)))
  expect_true(fit$converged)
  # the check behind the warning
  expect_warning(mklearn:::bayes_check_history(c(3, 2, 2.5, 1)), "increased")
  expect_silent(mklearn:::bayes_check_history(c(3, 2, 2, 1)))
})

test_that("weights are non-negative and on the simplex; info$d are the learned variances", {
  dat <- eb_regression(n = 60, seed = 5)
  fit <- mkl(dat$x, dat$y, method = "bayes",
             kernels = kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(2), features = c("all", "each")))
  expect_true(all(fit$weights >= 0))
  expect_equal(sum(fit$weights), 1, tolerance = 1e-12)
  expect_true(all(fit$info$d >= 0))
  expect_equal(unname(fit$weights), fit$info$d / sum(fit$info$d))
  expect_gt(fit$info$sigma2, 0)
  expect_true(is.na(fit$C))
  # predictions on the training data are the fitted values (without the training kernels'
  # jitter, 1e-8 on their diagonal)
  expect_equal(unname(fit$fitted), unname(predict(fit, dat$x)), tolerance = 1e-10)
})

test_that("regression on a known sparse combination of kernels recovers its support", {
  for (seed in 1:3) {
    set.seed(seed)
    n <- 100; p <- 6
    x <- matrix(runif(n * p, -2, 2), n, p)
    K <- feature_kernels(x)
    # y from the GP with kernels 2 and 5 only
    Ktrue <- 1.5 * K[, , 2] + 1 * K[, , 5] + diag(1e-8, n)
    y <- drop(t(chol(Ktrue)) %*% rnorm(n)) + rnorm(n, sd = 0.1)
    fit <- mkl(NULL, y, kernels = K, method = "bayes")
    expect_true(fit$converged)
    sel <- which(fit$weights > 1e-3)
    expect_identical(as.integer(sel), c(2L, 5L))
    expect_equal(fit$info$sigma2, 0.01, tolerance = 0.5)
  }
})

test_that("the dense and on-the-fly stores give the same fit; warm start resumes at the optimum", {
  dat <- eb_regression(n = 50, seed = 6)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), features = c("all", "each"))
  f1 <- mkl(dat$x, dat$y, method = "bayes", kernels = ks, control = mkl_control(store = "dense"))
  f2 <- mkl(dat$x, dat$y, method = "bayes", kernels = ks, control = mkl_control(store = "fly"))
  expect_identical(f2$store, "fly")
  expect_equal(f1$weights, f2$weights, tolerance = 1e-8)
  expect_equal(f1$objective, f2$objective, tolerance = 1e-10)
  f3 <- mkl(dat$x, dat$y, method = "bayes", kernels = ks, init = f1)
  expect_lte(f3$iterations, 2L)
  expect_equal(f3$objective, f1$objective, tolerance = 1e-8)
})

test_that("fixed noise variance, the constant bias kernel, and C refused", {
  dat <- eb_regression(n = 60, seed = 7)
  fit <- mkl(NULL, dat$y, kernels = dat$K, method = "bayes", control = mkl_control(sigma2 = 0.3))
  expect_identical(fit$info$sigma2, 0.3)
  expect_true(fit$converged)
  # with sigma2 fixed the kernels' fixed point still holds
  yc <- dat$y - mean(dat$y)
  s <- mackay_R(fit$info$d, 0.3, dat$K, yc)
  act <- fit$info$d > 0
  expect_lt(max(0.5 * fit$info$d[act] * abs(s$t[act] - s$q[act])), 1e-4 * 1.01)
  # bias = "kernel": the constant kernel's variance is learned; b = d0 sum(beta)
  fk <- mkl(NULL, dat$y + 5, kernels = dat$K, method = "bayes",
            control = mkl_control(bias = "kernel", tol = 1e-6))
  expect_true(fk$converged)
  K1 <- array(c(dat$K, rep(1, 60 * 60)), c(60, 60, 6))
  d1 <- c(fk$info$d, fk$info$bias_variance)
  s1 <- mackay_R(d1, fk$info$sigma2, K1, dat$y + 5)
  expect_lt(0.5 * d1[6] * abs(s1$t[6] - s1$q[6]), 1e-6 * 1.01)
  expect_equal(fk$b, fk$info$bias_variance * sum(s1$beta), tolerance = 1e-8)
  expect_equal(fk$objective, nlml_R(d1, fk$info$sigma2, K1, dat$y + 5), tolerance = 1e-10)
  # C has no meaning for EB
  expect_error(mkl(NULL, dat$y, kernels = dat$K, method = "bayes", C = 10),
               "no regularisation constant")
  expect_error(mkl_control(bias = "none"))
  expect_error(mkl(NULL, dat$y, kernels = dat$K, method = "bayes",
                   control = mkl_control(svm_tol = 1e-3)), "does not use")
})

test_that("classification by the sign of the fit", {
  d <- two_class(n = 120, seed = 3)
  tr <- 1:80
  fit <- mkl(d$x[tr, ], d$y[tr], method = "bayes",
             kernels = kernel_set(rbf_kernel(c(0.5, 1, 2)), features = c("all", "each")))
  expect_identical(fit$loss, "squared")
  pr <- predict(fit, d$x[-tr, ])
  expect_identical(as.numeric(pr), as.numeric(sign(predict(fit, d$x[-tr, ], type = "link"))))
  expect_gt(mean(pr == d$y[-tr]), 0.75)
})

test_that("scoring steps reach the MacKay iteration's optimum in a fraction of the steps", {
  dat <- eb_regression(n = 80, seed = 11)
  ks <- kernel_set(rbf_kernel(c(0.5, 1, 2, 5)), poly_kernel(1:2))
  tight <- function(update) mkl(dat$x, dat$y, method = "bayes", kernels = ks,
                                control = mkl_control(tol = 1e-8, update = update))
  fm <- tight("mackay")
  fs <- tight("scoring")
  expect_true(fm$converged && fs$converged)
  expect_gt(fs$info$scoring_steps, 0L)
  expect_equal(fs$objective, fm$objective, tolerance = 1e-10)
  expect_equal(fs$fitted, fm$fitted, tolerance = 1e-5)
  expect_lt(fs$iterations, fm$iterations / 3)
  # at the optimum: the fixed point for every kernel with positive variance; at zero the
  # gradient points outwards (t >= q)
  on <- fs$info$d > 0
  expect_lt(max(abs(fs$info$fixed_point_ratio[on] - 1)), 1e-3)
  expect_true(all(fs$info$gradient[!on] >= -1e-8))
  expect_identical(mkl_control(update = "scoring")$update, "scoring")
  expect_error(mkl_control(update = "newton"),
               "'update' should be one of \"mackay\", \"mm\", \"scoring\"; got \"newton\"")
})

test_that("regression is equivariant to the units of y; sigma2 is on the response's scale", {
  dat <- eb_regression(n = 50, seed = 12)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(1))
  expect_y_equivariant(dat$x, dat$y, method = "bayes", kernels = ks)
  f1 <- mkl(dat$x, dat$y, method = "bayes", kernels = ks)
  f2 <- mkl(dat$x, 100 * dat$y, method = "bayes", kernels = ks)
  expect_equal(f2$info$sigma2, 1e4 * f1$info$sigma2, tolerance = 1e-8)
  expect_equal(f2$info$d, 1e4 * f1$info$d, tolerance = 1e-8)
  expect_equal(f2$objective, f1$objective + 50 * log(100), tolerance = 1e-10)
  # a fixed noise variance is the user's: the same model in other units
  g1 <- mkl(dat$x, dat$y, method = "bayes", kernels = ks, control = mkl_control(sigma2 = 0.05))
  g2 <- mkl(dat$x, 100 * dat$y, method = "bayes", kernels = ks,
            control = mkl_control(sigma2 = 500))
  expect_identical(g1$info$sigma2, 0.05)
  expect_equal(g2$fitted, 100 * g1$fitted, tolerance = 1e-8)
})
