# Issue 14: no silent failures. One test per row of the issue's table.

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

test_that("a fit that learned nothing says so: warning, print and summary", {
  d <- two_class(40, 2, seed = 5)
  ks <- kernel_set(rbf_kernel(c(0.5, 1, 2, 4)))
  expect_warning(fit <- mkl(d$x, d$y, kernels = ks, method = "spicy", C = 0.01),
                 "learned nothing.*Raise C")
  expect_output(print(fit), "Kernels selected: 0 of 4")
  expect_output(print(fit), "learned nothing")
  expect_output(print(summary(fit)), "learned nothing")
  expect_match(fit$learned_nothing, "every kernel was dropped")
})

test_that("predict() takes newdata and refuses arguments it does not read", {
  d <- two_class(50, 3, seed = 6)
  fit <- mkl(d$x[1:40, ], d$y[1:40], kernels = kernel_set(rbf_kernel(1)))
  xn <- d$x[41:50, ]
  expect_length(predict(fit, newdata = xn), 10L)
  expect_identical(predict(fit, newdata = xn, type = "link"), predict(fit, xn, type = "link"))
  expect_error(predict(fit, xn, newdata = xn), "not both")
  expect_error(predict(fit, xn, tpye = "link"), "unused argument.*tpye")
})

test_that("an inner SVM at its iteration cap makes the SVM-family fit not converged", {
  d <- two_class(60, 3, seed = 7)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), features = c("all", "each"))
  for (m in c("simple", "hessian", "lp")) {
    expect_warning(fit <- mkl(d$x, d$y, kernels = ks, method = m,
                              control = mkl_control(svm_maxiter = 1)),
                   "svm_maxiter", label = m)
    expect_false(fit$converged, label = m)
    expect_gt(fit$info$svm_maxiter_hits, 0L)
  }
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

test_that("non-finite kernels are an error naming the kernel, in training and prediction", {
  d <- two_class(30, 3, seed = 9)
  big <- d$x
  big[, 2] <- big[, 2] * 1e200
  for (st in c("dense", "fly")) {
    expect_error(mkl(big, d$y, kernels = kernel_set(linear_kernel(), rbf_kernel(1)),
                     standardize = FALSE, control = mkl_control(store = st)),
                 "linear\\[all\\].*non-finite", label = st)
    expect_error(mkl(d$x * 3, d$y, kernels = kernel_set(poly_kernel(500)), standardize = FALSE,
                     control = mkl_control(store = st)),
                 "poly\\(degree=500\\)\\[all\\].*non-finite", label = st)
  }
  expect_error(gram(kernel_set(poly_kernel(500)), d$x * 3), "poly\\(degree=500\\)")
  fit <- mkl(d$x, d$y, kernels = kernel_set(poly_kernel(3), rbf_kernel(1)), standardize = FALSE)
  z <- d$x[1:3, ]
  z[2, 1] <- 1e300
  expect_error(predict(fit, z), "poly\\(degree=3\\)\\[all\\].*non-finite.*new data")
})

test_that("standardisation that overflows is an error naming the column", {
  d <- two_class(30, 3, seed = 10)
  x <- d$x
  x[, "v3"] <- x[, "v3"] * 1e300
  expect_error(mkl(x, d$y, kernels = kernel_set(rbf_kernel(1))), "overflows.*v3")
})

test_that("misspelt settings and model arguments the method does not read are refused", {
  d <- two_class(30, 2, seed = 11)
  expect_error(mkl_control(maxiters = 1), "unknown setting.*maxiters")
  expect_error(mkl(d$x, d$y, method = "simple", p = 3), "'p'.*method 'lp'")
  expect_error(mkl(d$x, d$y, method = "uniform", lambda = 0.2), "'lambda'")
  expect_error(mkl(d$x, d$y, method = "uniform", epsilon = 0.2), "'epsilon'")
  expect_error(mkl(d$x, d$y, method = "uniform", control = mkl_control(maxiter = 5)),
               "does not use the setting.*maxiter")
})

test_that("nthreads is capped at the processors available, with a message", {
  expect_message(ctl <- mkl_control(nthreads = 1000), "processor")
  expect_lte(ctl$nthreads, mklearn:::max_threads())
  expect_message(gram(kernel_set(rbf_kernel(1)), matrix(1:6, 3), nthreads = 1000), "processor")
})

test_that("predict() on 20,000 new rows works block by block within a small memory budget", {
  set.seed(12)
  x <- matrix(rnorm(30 * 4), 30)
  y <- ifelse(x[, 1] > 0, 1, -1)
  ks <- kernel_set(rbf_kernel(c(0.5, 1, 2)), features = c("all", "each"))
  fit <- mkl(x, y, kernels = ks)
  z <- matrix(rnorm(20000 * 4), 20000)
  # the whole test array (20,000 x 30 x 15 doubles, 72 MB) is far above this budget
  old <- options(mklearn.max_bytes = 5e7)
  on.exit(options(old))
  f <- predict(fit, z, type = "link")
  expect_length(f, 20000L)
  expect_equal(f[19999:20000], predict(fit, z[19999:20000, ], type = "link"))
})

test_that("a kernel family where a set is expected points to kernel_set()", {
  d <- two_class(20, 2, seed = 13)
  expect_error(mkl(d$x, d$y, kernels = rbf_kernel(1:2)), "kernel_set\\(")
  expect_error(gram(rbf_kernel(1), d$x), "kernel_set\\(")
  expect_error(cv.mkl(d$x, d$y, kernels = rbf_kernel(1), C = c(2, 1)), "kernel_set\\(")
})
