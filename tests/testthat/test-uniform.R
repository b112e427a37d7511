test_that("uniform classification is the SVM on the averaged kernel (checked against ksvm)", {
  skip_if_not_installed("kernlab")
  d <- two_class(100, 4, seed = 6)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(2), features = c("all", "each"))
  fit <- mkl(d$x, d$y, kernels = ks, method = "uniform", C = old_C(3, 100), standardize = FALSE,
             control = mkl_control(svm_tol = 1e-9))
  K <- gram(ks, d$x)
  Kbar <- apply(K, c(1, 2), mean)
  k <- kernlab::ksvm(kernlab::as.kernelMatrix(Kbar), d$y, type = "C-svc", C = 3, tol = 1e-9,
                     scaled = FALSE)
  a <- numeric(100); a[kernlab::alphaindex(k)[[1]]] <- kernlab::coef(k)[[1]]   # a_i y_i
  fk <- drop(Kbar %*% a) - kernlab::b(k)
  expect_gt(cor(fit$fitted, fk), 0.99999)
  expect_equal(fit$fitted, fk, tolerance = 1e-4)
  expect_equal(unname(fit$weights), rep(1 / dim(K)[3], dim(K)[3]))
  expect_true(fit$converged)
  expect_lt(fit$history$gap, 1e-6)
  expect_gte(fit$history$gap, -1e-10)
})

test_that("uniform regression is kernel ridge regression in closed form", {
  set.seed(7)
  x <- matrix(runif(120), 60)
  y <- sin(4 * x[, 1]) + x[, 2]^2 + 0.1 * rnorm(60)
  ks <- kernel_set(rbf_kernel(c(0.3, 1)), linear_kernel())
  fit <- mkl(x, y, kernels = ks, method = "uniform", C = old_C(20, 60), standardize = FALSE)
  expect_identical(fit$task, "regression")
  Kbar <- apply(gram(ks, x), c(1, 2), mean)
  # [Kbar + I/C, 1; 1', 0] [beta; b] = [y; 0]
  A <- rbind(cbind(Kbar + diag(60) / 20, 1), c(rep(1, 60), 0))
  sol <- solve(A, c(y, 0))
  # (the fitted values leave out the jitter on the diagonal of the training kernels)
  expect_equal(fit$fitted, drop(Kbar %*% sol[1:60]) + sol[61] - 1e-8 * sol[1:60],
               tolerance = 1e-8)
  expect_equal(fit$b, sol[61], tolerance = 1e-8)
  newx <- matrix(runif(10), 5)
  Kt <- apply(gram(ks, x, newx), c(1, 2), mean)
  expect_equal(unname(predict(fit, newx)), drop(Kt %*% sol[1:60]) + sol[61], tolerance = 1e-8)
})

test_that("the uniform fit at the SMO cap names svm_maxiter, not maxiter", {
  d <- two_class(60, 3, seed = 8)
  w <- NULL
  withCallingHandlers(mkl(d$x, d$y, kernels = kernel_set(rbf_kernel(1)),
                          control = mkl_control(svm_maxiter = 2)),
                      warning = function(c) {
                        w <<- c(w, conditionMessage(c)); invokeRestart("muffleWarning")
                      })
  expect_true(any(grepl("svm_maxiter", w)))
  expect_false(any(grepl("maxiter = )|control\\$maxiter", sub("svm_maxiter", "", w))))
})

test_that("an all-zero kernel is refused at once, not solved to the SMO's iteration cap", {
  set.seed(3)
  n <- 40
  y <- factor(sample(c("a", "b"), n, TRUE))
  for (M in 1:2) {
    t <- system.time(expect_error(mkl(y = y, kernels = array(0, c(n, n, M)), method = "uniform"),
                                  "every training kernel is zero.*method 'uniform'"))
    expect_lt(t[["elapsed"]], 5)
  }
  yr <- rnorm(n)
  expect_error(mkl(y = yr, kernels = array(0, c(n, n, 1)), method = "uniform"),
               "every training kernel is zero")
})

test_that("uniform regression: equivariant to the units of y, default C 10", {
  set.seed(21)
  x <- matrix(runif(150), 50)
  y <- 20 * sin(4 * x[, 1]) + 5 * x[, 2]^2 + rnorm(50) + 300
  ks <- kernel_set(rbf_kernel(c(0.3, 1)), linear_kernel())
  expect_y_equivariant(x, y, kernels = ks, method = "uniform")
  f <- mkl(x, y, kernels = ks)
  expect_identical(f$C, 10)
  expect_equal(f$fitted, mkl(x, y, kernels = ks, C = 10)$fitted)
  expect_equal(f$info$y_center, mean(y))
  expect_equal(f$info$y_scale, sqrt(mean((y - mean(y))^2)))
  # the fit is kernel ridge on the standardised response, reported on y's scale
  ys <- (y - mean(y)) / f$info$y_scale
  g <- mklearn:::fit_uniform(mklearn:::as_store(gram(ks, scale(x))), ys, "regression",
                             mklearn:::solver_C("uniform", 10, f$kscale, 50), mkl_control(),
                             NULL)
  expect_equal(f$b, g$b * f$info$y_scale + mean(y), tolerance = 1e-8)
  # classification keeps C = 1
  expect_identical(mkl(x, ifelse(y > 300, 1, -1), kernels = ks)$C, 1)
})

test_that("uniform classification on the fly reads K(d) through a column cache", {
  d <- two_class(n = 90, p = 3, seed = 2)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(2))
  ctl <- list(platt = "train", nthreads = 1L, svm_tol = 1e-8)
  fd <- mkl(d$x, d$y, kernels = ks, control = do.call(mkl_control, c(ctl, store = "dense")))
  for (k in list(4L, NA_integer_)) {   # 4 points' columns, and the cache from the budget
    ff <- mkl(d$x, d$y, kernels = ks,
              control = do.call(mkl_control, c(ctl, store = "fly", kcache = k)))
    expect_identical(ff$store, "fly")
    # the two stores' kernels agree to rounding (their code paths differ by machine: SIMD
    # clones), which the SMO at svm_tol = 1e-8 can amplify in alpha (3.9e-8 relative measured
    # with AVX-512); the objective and b stay within 1e-9
    expect_equal(ff$alpha, fd$alpha, tolerance = 1e-6)
    expect_equal(ff$b, fd$b, tolerance = 1e-9)
    expect_equal(ff$objective, fd$objective, tolerance = 1e-9)
    expect_equal(ff$fitted, fd$fitted, tolerance = 1e-6)
  }
  # the combined kernel is not formed: the memory has no n x n buffer on the fly
  expect_identical(mkl_memory(20000, 10, "uniform", "fly", nthreads = 1)$buffers, 0)
})

test_that("kernel ridge on the fly runs CG through a 4-entry column cache: the dense ridge", {
  set.seed(11)
  n <- 80
  x <- matrix(runif(3 * n), n)
  y <- sin(4 * x[, 1]) + x[, 2]^2 + 0.1 * rnorm(n)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(2))
  wz <- rep(c(1, 0, 2.5, 0.4), length.out = n)   # case weights, a quarter of them 0
  for (w in list(NULL, wz)) {
    fd <- mkl(x, y, kernels = ks, method = "uniform", weights = w,
              control = mkl_control(store = "dense", nthreads = 1))
    # K(d)'s products: through the cache alone (0 summed columns), partly from 30 summed
    # columns, all from them (the budget's choice at this size)
    for (cols in list(0L, 30L, NA_integer_)) {
      ff <- mkl(x, y, kernels = ks, method = "uniform", weights = w,
                control = mkl_control(store = "fly", nthreads = 1, kcache = 4L, kcols = cols,
                                      cg_tol = 1e-13))
      lab <- paste(is.null(w), cols)
      expect_identical(ff$store, "fly")
      expect_gt(ff$info$cg_iterations, 0L)
      expect_identical(ff$info$kcache, 4L)
      expect_identical(ff$info$kcols, if (is.na(cols)) as.integer(n) else cols)
      expect_equal(ff$alpha, fd$alpha, tolerance = 1e-8, label = lab)
      expect_equal(ff$b, fd$b, tolerance = 1e-8, label = lab)
      expect_equal(ff$objective, fd$objective, tolerance = 1e-8, label = lab)
      expect_equal(ff$fitted, fd$fitted, tolerance = 1e-8, label = lab)
      if (!is.null(w)) expect_true(all(ff$alpha[w == 0, ] == 0))
    }
  }
})

test_that("kernel ridge on the fly: a CG stopped at cg_maxiter warns; the CG settings", {
  set.seed(12)
  x <- matrix(runif(120), 60)
  y <- sin(4 * x[, 1]) + 0.1 * rnorm(60)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)))
  expect_warning(f <- mkl(x, y, kernels = ks, method = "uniform",
                          control = mkl_control(store = "fly", cg_maxiter = 2)),
                 "did not converge.*conjugate gradients stopped at mkl_control\\(cg_maxiter = \\)")
  expect_false(f$converged)
  expect_identical(f$info$cg_iterations, 2L)
  expect_gt(f$info$cg_residual, 1e-6)
  # at the defaults CG reaches cg_tol
  f <- mkl(x, y, kernels = ks, method = "uniform", control = mkl_control(store = "fly"))
  expect_true(f$converged)
  expect_lte(f$info$cg_residual, 1e-6)
  expect_error(mkl_control(cg_maxiter = 0), "'cg_maxiter'")
  expect_error(mkl_control(cg_maxiter = 2.5), "'cg_maxiter' must be a whole number")
  expect_error(mkl_control(cg_tol = -1), "'cg_tol'")
  # read by kernel ridge only: refused for a classification, and by the other methods
  yc <- ifelse(y > 0, 1, -1)
  expect_error(mkl(x, yc, kernels = ks, method = "uniform",
                   control = mkl_control(store = "fly", cg_maxiter = 5)),
               "method 'uniform' reads the setting\\(s\\) cg_maxiter for a regression only")
  expect_error(mkl(x, yc, kernels = ks, method = "uniform", control = mkl_control(kcols = 5)),
               "reads the setting\\(s\\) kcols for a regression only")
  expect_error(mkl(x, y, kernels = ks, method = "spicy", control = mkl_control(cg_maxiter = 5)),
               "method 'spicy' does not use the setting\\(s\\) cg_maxiter")
})
