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
    expect_equal(ff$alpha, fd$alpha, tolerance = 1e-9)
    expect_equal(ff$b, fd$b, tolerance = 1e-9)
    expect_equal(ff$objective, fd$objective, tolerance = 1e-9)
    expect_equal(ff$fitted, fd$fitted, tolerance = 1e-9)
  }
  # the combined kernel is not formed: the memory has no n x n buffer on the fly
  expect_identical(mkl_memory(20000, 10, "uniform", "fly", nthreads = 1)$buffers, 0)
})
