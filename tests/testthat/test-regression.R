# The defaults of a regression: SpicyMKL's kernel set (default_kernels() with Gaussians on
# each feature), checked on small seeded data (accuracy: inst/benchmarks/bench-regression.R).

reg_data <- function(n = 60, p = 3, seed = 5) {
  set.seed(seed)
  x <- matrix(runif(n * p), n, p, dimnames = list(NULL, paste0("v", seq_len(p))))
  list(x = x, y = 10 * sin(pi * x[, 1]) + 5 * x[, 2] + rnorm(n))
}

test_that("a SpicyMKL regression's default kernels add Gaussians on each feature", {
  d <- reg_data()
  ctl <- mkl_control(nthreads = 1)
  fit <- mkl(d$x, d$y, method = "spicy", control = ctl)
  w <- c(0.5, 1, 2)
  # 4 Gaussians and 2 polynomials on all the features, 3 Gaussians on each of the 3 features
  expect_length(fit$weights, 6L + 3L * 3L)
  expect_true(all(sprintf("rbf(sigma=%s)[v2]", w) %in% names(fit$weights)))
  expect_true("poly(degree=2)[all]" %in% names(fit$weights))
  expect_equal(fit$kernels, default_kernels(fit$x, each = w))
  # the kernels on one feature are the unit-trace Gaussians of its standardised column
  K <- gram(fit$kernels, fit$x)
  xs <- fit$x[, "v2", drop = FALSE]
  k2 <- rbf_R(xs, xs, w[1L])
  k2 <- k2 / sum(diag(k2))
  diag(k2) <- diag(k2) + 1e-8
  expect_equal(unname(K[, , "rbf(sigma=0.5)[v2]"]), k2, tolerance = 1e-10)
  expect_equal(unname(predict(fit, d$x[1:5, ])), unname(fitted(fit)[1:5]), tolerance = 1e-8)
  # kernel ridge, Empirical Bayes and classification keep the set on all the features
  for (m in c("uniform", "bayes"))
    expect_length(mkl(d$x, d$y, method = m, control = ctl)$weights, 6L)
  cls <- mkl(d$x, ifelse(d$y > median(d$y), 1, -1), method = "spicy", control = ctl)
  expect_length(cls$weights, 6L)
  expect_equal(cls$kernels, default_kernels(cls$x))
  # one feature: its kernels on all the features are those on it
  expect_length(mkl(d$x[, 1, drop = FALSE], d$y, method = "spicy", control = ctl)$weights, 6L)
})

test_that("default_kernels() prints and fills in the kernels on each feature; 'each' is checked", {
  d <- reg_data()
  expect_output(print(default_kernels()), "for a SpicyMKL regression, Gaussian kernels of widths")
  ks <- default_kernels(d$x, each = c(0.5, 1))
  expect_output(print(ks), "and on each feature: rbf\\(sigma=0.5\\), rbf\\(sigma=1\\)")
  expect_equal(n_kernels(ks, d$x), 6L + 2L * 3L)
  expect_equal(default_kernels(d$x, each = NULL), default_kernels(d$x))
  expect_error(default_kernels(d$x, each = -1), "'each' must be a non-empty vector of positive")
})

test_that("every regression method at the default kernels is equivariant to y's units", {
  d <- reg_data(n = 40)
  expect_y_equivariant(d$x, d$y, method = "uniform")
  for (loss in c("squared", "epsilon"))
    expect_y_equivariant(d$x, d$y, method = "spicy", loss = loss)
  expect_y_equivariant(d$x, d$y, method = "bayes")
})

test_that("cv.mkl's fold fits of a SpicyMKL regression add the kernels on each feature", {
  d <- reg_data()
  set.seed(1)
  cv <- suppressMessages(suppressWarnings(
    cv.mkl(d$x, d$y, method = "spicy", nfolds = 3, C = c(10, 1),
           control = mkl_control(nthreads = 1))))
  expect_length(cv$fit$fits[[1L]]$weights, 6L + 3L * 3L)
  p <- predict(cv, d$x[1:5, ])
  expect_length(p, 5L)
  expect_true(all(is.finite(p)))
})
