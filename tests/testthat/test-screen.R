test_that("screening drops kernels that are nearly the identity and keeps the useful ones", {
  op <- options(mklearn.screen = 3)
  on.exit(options(op), add = TRUE)
  d <- two_class(120, p = 6, seed = 2)
  ks <- kernel_set(rbf_kernel(c(0.1, 2, 5)), poly_kernel(1), features = c("all", "each"))
  expect_message(fit <- mkl(d$x, d$y, kernels = ks, method = "uniform"),
                 "1 kernel\\(s\\) nearly the identity .* rbf\\(sigma=0.1\\)\\[all\\]")
  expect_equal(fit$kernel_info$screened, "rbf(sigma=0.1)[all]")
  expect_false(any("rbf(sigma=0.1)[all]" %in% names(fit$weights)))
  expect_true(all(c("rbf(sigma=2)[all]", "rbf(sigma=0.1)[v1]") %in% names(fit$weights)))
  expect_equal(fit$M, n_kernels(ks, d$x) - 1L)
  expect_equal(predict(fit, d$x, type = "link"), fit$fitted, tolerance = 1e-4)
  # on one column the same width has several neighbours per point (kept); on all six, one
  nb <- mklearn:::kernel_neighbours(mklearn:::as_store(gram(ks, scale(d$x))))
  expect_true(nb[1] < 1.5 && all(nb[-1] > 5))
  options(mklearn.screen = 0)
  expect_silent(fit0 <- mkl(d$x, d$y, kernels = ks, method = "uniform"))
  expect_equal(fit0$M, n_kernels(ks, d$x))
})

test_that("screening keeps the widest kernel when every one memorises, and checks its option", {
  op <- options(mklearn.screen = 3)
  on.exit(options(op), add = TRUE)
  d <- two_class(80, p = 8, seed = 4)
  ks <- kernel_set(rbf_kernel(c(0.01, 0.5)))
  expect_message(fit <- mkl(d$x, d$y, kernels = ks, method = "uniform"), "1 kernel")
  expect_equal(names(fit$weights), "rbf(sigma=0.5)[all]")
  options(mklearn.screen = "yes")
  expect_error(mkl(d$x, d$y, kernels = ks), "option 'mklearn.screen' must be one non-negative")
})

test_that("a multiclass MKL fit no longer collapses onto a near-identity kernel", {
  # three classes from a noisy sum of two of twelve features; a Gaussian of width 0.3 on all
  # twelve is the identity on these points, and HessianMKL puts its weight there unscreened
  set.seed(7)
  x <- matrix(rnorm(150 * 12), 150, 12)
  s <- x[, 1] + x[, 2] + 0.8 * rnorm(150)
  y <- cut(s, quantile(s, c(0, 1 / 3, 2 / 3, 1)), include.lowest = TRUE,
           labels = c("a", "b", "c"))
  ks <- kernel_set(rbf_kernel(c(0.3, 4)))
  tr <- 1:100
  f0 <- mkl(x[tr, ], y[tr], kernels = ks, method = "hessian", C = 10)   # no screening
  expect_true(all(f0$weights["rbf(sigma=0.3)[all]", ] > 0.5))
  op <- options(mklearn.screen = 3)
  on.exit(options(op), add = TRUE)
  expect_message(f1 <- mkl(x[tr, ], y[tr], kernels = ks, method = "hessian", C = 10),
                 "rbf\\(sigma=0.3\\)\\[all\\]")
  expect_equal(rownames(f1$weights), "rbf(sigma=4)[all]")
  acc <- function(f) mean(predict(f, x[-tr, ]) == y[-tr])
  expect_gt(acc(f1), acc(f0))
})
