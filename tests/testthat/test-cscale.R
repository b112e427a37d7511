# The one meaning of C (R/cscale.R): C is the SVM box constant on unit-diagonal kernels for
# every method; larger C, less regularisation.

test_that("default mkl(x, y) learns on Ionosphere for every SVM-type method and SpicyMKL", {
  skip_if_not_installed("mlbench")
  io <- ionosphere_xy()
  set.seed(1)
  tr <- sample(nrow(io$x), 246)
  for (m in c("uniform", "simple", "hessian", "lp", "spicy")) {
    fit <- mkl(io$x[tr, ], io$y[tr], method = m)
    acc <- mean(predict(fit, io$x[-tr, ]) == io$y[-tr])
    # the majority class alone scores 0.64; e1071::svm() with its defaults 0.94 here
    expect_gt(acc, 0.9, label = sprintf("%s test accuracy %.3f", m, acc))
    expect_null(fit$learned_nothing)
  }
})

test_that("C means less regularisation when larger, for SpicyMKL as for the SVM family", {
  d <- two_class(80, 3, seed = 3)
  ks <- kernel_set(rbf_kernel(c(1, 2)), features = c("all", "each"))
  norms <- vapply(c(0.5, 5, 50), function(C)
    mkl(d$x, d$y, kernels = ks, method = "spicy", C = C)$info$sum_norms, 1)
  expect_true(all(diff(norms) > 0))
  sp <- mkl(d$x, d$y, kernels = ks, method = "spicy", C = 5,
            control = mkl_control(tol = 1e-4))
  # the SVM-family problem with C = fit$info$C_svm has the same solution
  sm <- mkl(d$x, d$y, kernels = ks, method = "simple", C = sp$info$C_svm,
            control = mkl_control(tol = 1e-4))
  expect_gt(cor(sp$fitted, sm$fitted), 0.99)
})
