test_that("cv.mkl computes held-out losses that match a hand-made split", {
  d <- two_class(90, 3, seed = 21)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)))
  Cs <- c(50, 5, 0.5)
  foldid <- rep(1:3, 30)
  cv <- cv.mkl(d$x, d$y, kernels = ks, C = Cs, foldid = foldid)
  expect_s3_class(cv, "cv.mkl")
  # recompute fold 2's error at C = 5 by hand
  tr <- foldid != 2
  f <- mkl(d$x[tr, ], d$y[tr], kernels = ks, C = 5)
  err2 <- mean(sign(predict(f, d$x[!tr, ], type = "link")) != d$y[!tr])
  errs <- sapply(1:3, function(k) {
    tr <- foldid != k
    f <- mkl(d$x[tr, ], d$y[tr], kernels = ks, C = 5)
    mean(sign(predict(f, d$x[!tr, ], type = "link")) != d$y[!tr])
  })
  expect_equal(errs[2], err2)
  expect_equal(cv$cvm[2], mean(errs), tolerance = 1e-6)
  expect_equal(cv$cvsd[2], sd(errs) / sqrt(3), tolerance = 1e-6)
  expect_true(cv$C.min %in% Cs && cv$C.1se %in% Cs)
  expect_lte(cv$C.1se, cv$C.min)
  expect_output(print(cv), "C.min")
  expect_equal(coef(cv, s = "C.min"), coef(cv$fit, s = cv$C.min))
  expect_equal(predict(cv, d$x[1:3, ], s = 5, type = "link"),
               predict(cv$fit$fits[[2]], d$x[1:3, ], type = "link"))
  pdf(NULL); on.exit(dev.off())
  expect_invisible(plot(cv))
})

test_that("cv.mkl for regression and its errors", {
  set.seed(22)
  x <- matrix(runif(120), 60)
  y <- sin(3 * x[, 1]) + 0.1 * rnorm(60)
  cv <- cv.mkl(x, y, kernels = kernel_set(rbf_kernel(0.5)), C = c(100, 1, 0.01), nfolds = 3,
               type.measure = "mae")
  expect_identical(cv$name, "mae")
  expect_lt(cv$cvm[1], cv$cvm[3])            # the heavily regularised fit is worse
  expect_error(cv.mkl(x, y, C = 1), "at least two")
  expect_error(cv.mkl(x, y, C = c(2, 1), type.measure = "class"), "'mse' or 'mae'")
  expect_error(cv.mkl(x, y, C = c(2, 1), foldid = rep(1, 60)), "at least two fold")
  expect_error(cv.mkl(NULL, y, kernels = array(diag(60), c(60, 60, 1)), C = c(2, 1)),
               "kernel_set")
})

test_that("cv.mkl's C.1se is the smallest C within one standard error for every method", {
  d <- two_class(60, 3, seed = 4)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)))
  for (m in c("uniform", "spicy")) {
    # (a path may reach a C at which SpicyMKL drops every kernel: that warns)
    cv <- suppressWarnings(cv.mkl(d$x, d$y, kernels = ks, method = m,
                                  C = c(100, 30, 10, 3, 1, 0.3), nfolds = 3))
    within <- cv$C[cv$cvm <= min(cv$cvm) + cv$cvsd[which.min(cv$cvm)]]
    expect_gte(length(within), 2L)
    expect_identical(cv$C.1se, min(within), label = m)
  }
})
