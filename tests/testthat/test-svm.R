ksvm_dual <- function(fit, K, y) {
  a <- numeric(length(y))
  a[kernlab::alphaindex(fit)[[1]]] <- abs(kernlab::coef(fit)[[1]])
  list(a = a, obj = sum(a) - 0.5 * sum((a * y) * (K %*% (a * y))))
}

test_that("SMO matches kernlab::ksvm on fixed kernels: dual objective and predictions", {
  skip_if_not_installed("kernlab")
  skip_if_not_installed("mlbench")
  d <- ionosphere_xy()
  ks <- kernel_set(rbf_kernel(c(1, 5)), poly_kernel(2), normalize = "none", jitter = 0)
  K3 <- gram(ks, d$x)
  # (at C = 10 on these unnormalised kernels ksvm's returned coefficients give a negative
  # dual value, i.e. it stops early; that case is covered by the certificate test below)
  for (m in 1:3) for (C in c(0.1, 1)) {
    K <- K3[, , m]
    s <- svm_smo(K, d$y, C = C, tol = 1e-9)
    k <- kernlab::ksvm(kernlab::as.kernelMatrix(K), d$y, type = "C-svc", C = C, tol = 1e-9,
                       scaled = FALSE)
    r <- ksvm_dual(k, K, d$y)
    expect_true(s$converged)
    expect_equal(s$objective, r$obj, tolerance = 1e-6)
    f <- drop(K %*% (s$alpha * d$y)) + s$b
    fk <- drop(K %*% (r$a * d$y)) - kernlab::b(k)
    expect_gt(cor(f, fk), 0.99999)
    expect_equal(sign(f)[abs(fk) > 1e-3], sign(fk)[abs(fk) > 1e-3])
  }
})

test_that("SMO solution is a certified optimum: duality gap and KKT conditions", {
  d <- two_class(120, 4, seed = 4)
  K <- rbf_R(d$x, d$x, 1.5)
  for (C in c(2, 10, 100)) {
  s <- svm_smo(K, d$y, C = C, tol = 1e-8)
  a <- s$alpha; y <- d$y
  expect_true(all(a >= 0 & a <= C))
  expect_lt(abs(sum(a * y)), 1e-10)
  f <- drop(K %*% (a * y)) + s$b
  primal <- 0.5 * sum((a * y) * (K %*% (a * y))) + C * sum(pmax(0, 1 - y * f))
  expect_lt((primal - s$objective) / primal, 1e-6)
  expect_gte(primal - s$objective, -1e-8)
  free <- a > 1e-8 & a < C - 1e-8
  expect_lt(max(abs(y[free] * f[free] - 1)), 1e-6)
  expect_true(all(y[a < 1e-12] * f[a < 1e-12] >= 1 - 1e-6))
  expect_true(all(y[a > C - 1e-12] * f[a > C - 1e-12] <= 1 + 1e-6))
  }
})

test_that("warm starts reach the same optimum with fewer iterations; infeasible starts are repaired", {
  d <- two_class(150, 3, seed = 5)
  K <- rbf_R(d$x, d$x, 1)
  cold <- svm_smo(K, d$y, C = 1, tol = 1e-8)
  warm <- svm_smo(K, d$y, C = 1, alpha = cold$alpha, tol = 1e-8)
  expect_lte(warm$iterations, 1L)
  expect_equal(warm$objective, cold$objective, tolerance = 1e-10)
  # start from the solution for another C: clipped and rebalanced, then solved
  other <- svm_smo(K, d$y, C = 5, tol = 1e-8)
  w2 <- svm_smo(K, d$y, C = 1, alpha = other$alpha, tol = 1e-8)
  expect_equal(w2$objective, cold$objective, tolerance = 1e-7)
  expect_lt(w2$iterations, cold$iterations)
})

test_that("svm_smo() validates its arguments", {
  K <- diag(4)
  expect_error(svm_smo(K[, 1:3], c(1, -1, 1, -1)), "square")
  expect_error(svm_smo(K, c(1, -1, 1)), "one per row")
  expect_error(svm_smo(K, c(1, 2, 1, 2)), "-1/\\+1")
  expect_error(svm_smo(K, c(1, 1, 1, 1)), "single class")
  expect_error(svm_smo(K, c(1, -1, 1, -1), C = 0), "'C'")
  expect_error(svm_smo(K, c(1, -1, 1, -1), alpha = 1:3), "'alpha'")
})

test_that("the SMO through the column cache solves the SVM on the combined kernel", {
  d <- two_class(n = 60, p = 3, seed = 4)
  rk <- mklearn:::resolve_kernels(kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(1:2)), 3,
                                  colnames(d$x))
  st <- mklearn:::fly_store(rk, d$x, 1L)
  M <- nrow(rk$table)
  w <- c(0.5, 0, 0.2, 0.3)[seq_len(M)]
  K <- .Call(mklearn:::C_store_combine, st, w)
  box <- rep(c(1, 0.3, 0), 20)
  ref <- .Call(mklearn:::C_smo, K, d$y, box, numeric(60), 1e-9, 1e7L)
  # 4 entries (columns leave and return), 59 and all 60 (0: whole)
  for (k in c(4L, 59L, 0L)) {
    s <- .Call(mklearn:::C_smo_store, st, d$y, box, w, numeric(60), 1e-9, 1e7L, k)
    expect_equal(s$alpha, ref$alpha, tolerance = 1e-12)
    expect_equal(s$b, ref$b, tolerance = 1e-12)
    expect_identical(s$iterations, ref$iterations)
  }
  expect_error(.Call(mklearn:::C_smo_store, st, d$y, 1, w, numeric(60), 1e-9, 1e7L, -1L),
               "invalid C, tol, maxiter or cache")
  expect_error(.Call(mklearn:::C_smo_store, st, d$y, 1, w[-1], numeric(60), 1e-9, 1e7L, 4L),
               "dimension mismatch")
  expect_error(.Call(mklearn:::C_smo_store, st, d$y, c(1, 2), w, numeric(60), 1e-9, 1e7L, 4L),
               "'C' must be one number or one per point")
  expect_error(.Call(mklearn:::C_smo_store, st, d$y, 1L, w, numeric(60), 1e-9, 1e7L, 4L),
               "must be double")
  st$z <- d$x[1:5, , drop = FALSE]
  expect_error(.Call(mklearn:::C_smo_store, st, d$y, 1, w, numeric(60), 1e-9, 1e7L, 4L),
               "needs a square training store")
})
