ks_small <- kernel_set(rbf_kernel(c(0.5, 1, 2)), poly_kernel(1:2), features = c("all", "each"))

test_that("matrix, data frame and formula interfaces give the same fit", {
  d <- two_class(60, 3, seed = 8)
  f1 <- mkl(d$x, d$y, kernels = ks_small, C = old_C(2, 60))
  f2 <- mkl(as.data.frame(d$x), d$y, kernels = ks_small, C = old_C(2, 60))
  df <- data.frame(d$x, y = factor(ifelse(d$y > 0, "yes", "no")))
  f3 <- mkl(y ~ ., data = df, kernels = ks_small, C = old_C(2, 60))
  expect_equal(f1$fitted, f2$fitted)
  expect_equal(unname(f1$fitted), unname(f3$fitted))
  expect_s3_class(predict(f3, df), "factor")
  expect_identical(levels(predict(f3, df)), c("no", "yes"))
  expect_equal(as.character(predict(f3, df[1:5, ])),
               ifelse(predict(f1, d$x[1:5, ]) > 0, "yes", "no"))
})

test_that("formula interface expands factors and re-applies them at predict", {
  set.seed(9)
  df <- data.frame(a = rnorm(50), g = factor(sample(c("u", "v", "w"), 50, TRUE)))
  df$y <- ifelse(df$a + (df$g == "u") > 0.3, 1, 0)
  fit <- mkl(y ~ a + g, data = df, kernels = kernel_set(rbf_kernel(1), linear_kernel()))
  expect_identical(fit$xnames, c("a", "gv", "gw"))
  p <- predict(fit, df[1:3, c("a", "g")])
  expect_true(all(p %in% c(0, 1)))
})

test_that("y coding: {0,1}, {-1,1}, factors and two-level characters", {
  d <- two_class(50, 2, seed = 10)
  f1 <- mkl(d$x, d$y, kernels = ks_small)
  f2 <- mkl(d$x, (d$y + 1) / 2, kernels = ks_small)
  f3 <- mkl(d$x, factor(d$y), kernels = ks_small)
  expect_equal(f1$fitted, f2$fitted)
  expect_equal(f1$fitted, f3$fitted)
  expect_true(all(predict(f2, d$x) %in% c(0, 1)))
  expect_identical(f3$task, "classification")
})

test_that("precomputed kernels (array or list) give the same model as the kernel set", {
  d <- two_class(40, 3, seed = 11)
  z <- matrix(rnorm(15), 5, dimnames = list(NULL, colnames(d$x)))
  ks <- kernel_set(rbf_kernel(c(1, 2)), features = "each", normalize = "none", jitter = 0)
  K <- gram(ks, d$x)
  Kt <- gram(ks, d$x, z)
  f1 <- mkl(d$x, d$y, kernels = ks, standardize = FALSE, C = 4)
  f2 <- mkl(NULL, d$y, kernels = K, C = 4)
  f3 <- mkl(NULL, d$y, kernels = lapply(1:6, function(m) K[, , m]), C = 4)
  expect_equal(unname(f1$fitted), unname(f2$fitted), tolerance = 1e-10)
  expect_equal(unname(f2$fitted), unname(f3$fitted))
  expect_equal(unname(predict(f2, newkernels = Kt, type = "link")),
               unname(predict(f1, z, type = "link")), tolerance = 1e-10)
  expect_error(predict(f2, z), "newkernels")
  expect_error(predict(f2, newkernels = Kt[, 1:10, ]), "test by train")
})

test_that("standardisation is stored and re-applied at predict", {
  d <- two_class(50, 3, seed = 12)
  x2 <- sweep(d$x * 100, 2, c(5, -3, 1000), "+")
  f1 <- mkl(d$x, d$y, kernels = ks_small, C = old_C(1, 50))
  f2 <- mkl(x2, d$y, kernels = ks_small, C = old_C(1, 50))
  expect_equal(f1$fitted, f2$fitted, tolerance = 1e-8)
  z <- d$x[1:7, ]
  expect_equal(predict(f1, z, type = "link"),
               predict(f2, sweep(z * 100, 2, c(5, -3, 1000), "+"), type = "link"),
               tolerance = 1e-8)
})

test_that("a vector of C fits a warm-started path", {
  d <- two_class(60, 3, seed = 13)
  path <- mkl(d$x, d$y, kernels = ks_small, C = old_C(c(10, 1, 0.1), 60))
  expect_s3_class(path, "mkl_path")
  single <- mkl(d$x, d$y, kernels = ks_small, C = old_C(1, 60))
  expect_equal(path$fits[[2]]$objective, single$objective, tolerance = 1e-5)
  expect_equal(coef(path, s = old_C(1, 60)), coef(single), tolerance = 1e-12)
  expect_equal(dim(coef(path)), c(single$M, 3L))
  expect_equal(predict(path, d$x[1:4, ], s = old_C(1.1, 60), type = "link"),
               predict(path$fits[[2]], d$x[1:4, ], type = "link"))
  expect_output(print(path), "Path of 3")
  expect_error(mkl(d$x, d$y, kernels = ks_small, C = c(1, 10)), "strictly decreasing")
})

test_that("bad input gets a specific error", {
  d <- two_class(30, 3, seed = 14)
  x <- d$x; y <- d$y
  xna <- x; xna[2, 2] <- NA
  xinf <- x; xinf[1, 1] <- Inf
  expect_error(mkl(xna, y, kernels = ks_small), "missing values")
  expect_error(mkl(xinf, y, kernels = ks_small), "infinite")
  expect_error(mkl(x, c(y[-1], NA), kernels = ks_small), "missing values")
  expect_error(mkl(x, y[-1], kernels = ks_small), "length 29 but 'x' has 30 rows")
  expect_error(mkl(x, rep(1, 30), kernels = ks_small, task = "classification"), "single class")
  expect_error(mkl(x, factor(rep("a", 30)), kernels = ks_small), "single class")
  expect_error(mkl(x, rep(1:3, 10), kernels = ks_small, task = "classification"),
               "\\{0, 1\\}; give more than two classes as a factor")
  xc <- cbind(x, const = 1)
  expect_error(mkl(xc, y, kernels = ks_small), "constant column\\(s\\): const")
  df <- data.frame(x, f = factor(rep(c("p", "q"), 15)))
  expect_error(mkl(df, y, kernels = ks_small), "non-numeric column\\(s\\): f")
  expect_error(mkl(letters[1:30], y, kernels = ks_small), "numeric matrix")
  expect_error(mkl(x, y, kernels = ks_small, C = 0), "'C' must be positive")
  expect_error(mkl(x, y, kernels = ks_small, C = -1), "'C' must be positive")
  expect_error(mkl(x, y, kernels = ks_small, C = NA), "'C' must be positive")
  expect_error(mkl(x, y, kernels = array(0, c(30, 30, 0))), "holds no kernels")
  expect_error(mkl(x, y, kernels = list()), "empty list")
  Kns <- array(rnorm(30 * 30), c(30, 30, 1))
  expect_error(mkl(NULL, y, kernels = Kns), "not symmetric")
  Kneg <- array(-diag(30), c(30, 30, 1))
  expect_error(mkl(NULL, y, kernels = Kneg), "not positive semidefinite")
  expect_error(mkl(NULL, y, kernels = array(diag(29), c(29, 29, 1))), "29 x 29 but")
  expect_error(mkl(x, y, kernels = ks_small, method = "uniform", loss = "logistic"),
               "supports loss 'hinge'")
  expect_error(mkl(x, y, kernels = ks_small, lambda = 2), "'lambda'")
  expect_error(mkl(x, y, kernels = ks_small, control = list()), "mkl_control")
  expect_error(mkl(x, y, kernels = ks_small, bogus = 1), "unused argument")
  expect_error(mkl_control(tol = -1), "'tol'")
  expect_error(mkl_control(nthreads = -2), "'nthreads'")
  fit <- mkl(x, y, kernels = ks_small)
  expect_error(predict(fit, x[, 1:2]), "lacks column")
  expect_error(predict(fit, unname(x[, 1:2])), "2 column\\(s\\) but the model was fitted on 3")
  expect_error(predict(fit, x, type = "prob"), "should be one of")
  expect_error(mkl(x, y, kernels = ks_small, init = list()), "previous mkl fit")
})

test_that("a failed call changes nothing", {
  d <- two_class(30, 3, seed = 15)
  x <- d$x; x0 <- x
  expect_error(mkl(cbind(x, 0), d$y, kernels = ks_small))
  expect_identical(x, x0)
  K <- gram(ks_small, d$x); K0 <- K
  fit <- mkl(NULL, d$y, kernels = K)
  expect_identical(K, K0)
})

test_that("the model survives saveRDS/readRDS and still predicts", {
  d <- two_class(40, 3, seed = 16)
  fit <- mkl(d$x, d$y, kernels = ks_small)
  f <- tempfile(fileext = ".rds")
  saveRDS(fit, f)
  fit2 <- readRDS(f)
  expect_identical(predict(fit2, d$x[1:10, ], type = "link"),
                   predict(fit, d$x[1:10, ], type = "link"))
})

test_that("the memory budget chooses the kernel store; a dense array over budget is refused", {
  d <- two_class(40, 3)
  fd <- mkl(d$x, d$y, kernels = ks_small)
  ff <- mkl(d$x, d$y, kernels = ks_small, control = mkl_control(memory = 1e5))
  expect_identical(fd$store, "dense")
  expect_identical(ff$store, "fly")
  expect_equal(ff$alpha, fd$alpha, tolerance = 1e-10)
  expect_equal(predict(ff, d$x, type = "link"), predict(fd, d$x, type = "link"),
               tolerance = 1e-10)
  expect_error(mkl(d$x, d$y, kernels = ks_small,
                   control = mkl_control(memory = 1e5, store = "dense")),
               "needs .*KB.*\\(dense store.*above the memory budget.*store = \"fly\"")
  old <- options(mklearn.max_bytes = 1e5)
  on.exit(options(old))
  expect_identical(mkl(d$x, d$y, kernels = ks_small)$store, "fly")
  expect_error(gram(ks_small, d$x), "would need 256 KB")
})

test_that("unknown methods are refused with the list of the registry's", {
  expect_true(all(c("uniform", "spicy", "simple", "hessian", "lp") %in% mkl_methods()))
  d <- two_class(20, 2)
  expect_error(mkl(d$x, d$y, method = "bogus"), "should be one of.*uniform.*mwu")
})

test_that("non-convergence is a warning, and the fit records it", {
  d <- two_class(60, 3, seed = 19)
  expect_warning(fit <- mkl(d$x, d$y, kernels = ks_small, C = old_C(100, 60),
                            control = mkl_control(svm_maxiter = 3)), "did not converge")
  expect_false(fit$converged)
  expect_output(print(fit), "Converged: NO")
})

test_that("a fit keeps alpha once and still warm-starts from itself", {
  d <- two_class(60, 3, seed = 23)
  f1 <- mkl(d$x, d$y, kernels = ks_small, method = "spicy", C = old_C(0.1, 60, "spicy"),
            control = mkl_control(tol = 1e-4))
  expect_null(f1$state[["alpha"]])
  expect_true(isTRUE(f1$state$restore_alpha))
  st <- mklearn:::restore_state(f1)
  expect_identical(dim(st$alpha), dim(f1$alpha))
  f2 <- mkl(d$x, d$y, kernels = ks_small, method = "spicy", C = old_C(0.05, 60, "spicy"), init = f1,
            control = mkl_control(tol = 1e-4))
  cold <- mkl(d$x, d$y, kernels = ks_small, method = "spicy", C = old_C(0.05, 60, "spicy"),
              control = mkl_control(tol = 1e-4))
  expect_true(f2$converged)
  expect_equal(f2$objective, cold$objective, tolerance = 2e-4)
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

test_that("precomputed kernels need no 'x': mkl(y = y, kernels = K) in any argument order", {
  d <- two_class(40, 3, seed = 31)
  K <- gram(kernel_set(rbf_kernel(c(1, 2))), d$x)
  f0 <- mkl(NULL, d$y, kernels = K, C = 2)
  f1 <- mkl(y = d$y, kernels = K, C = 2)
  f2 <- mkl(kernels = K, y = d$y, C = 2)
  expect_s3_class(f1, "mkl")
  expect_equal(f1$alpha, f0$alpha)
  expect_equal(f2$alpha, f0$alpha)
  expect_identical(f1$call, quote(mkl(y = d$y, kernels = K, C = 2)))
  p <- mkl(y = d$y, kernels = K, C = c(4, 1))
  expect_s3_class(p, "mkl_path")
  expect_identical(p$fits[[2]]$call, p$call)
  # the stored call refits
  expect_equal(update(f1, C = 4)$alpha, p$fits[[1]]$alpha)
})

test_that("the stored call reads mkl(...), so update() refits a matrix, formula or path fit", {
  d <- two_class(40, 3, seed = 32)
  ks <- kernel_set(rbf_kernel(c(1, 2)))
  fit <- mkl(d$x, d$y, kernels = ks)
  expect_identical(fit$call[[1L]], as.name("mkl"))
  u <- update(fit, C = 10)
  expect_identical(u$C, 10)
  expect_equal(u$alpha, mkl(d$x, d$y, kernels = ks, C = 10)$alpha)
  df <- data.frame(d$x, cls = factor(ifelse(d$y > 0, "yes", "no")))
  ff <- mkl(cls ~ ., data = df, kernels = ks)
  expect_identical(ff$call[[1L]], as.name("mkl"))
  uf <- update(ff, C = 10)
  expect_identical(uf$C, 10)
  expect_equal(unname(uf$fitted), unname(u$fitted))
  path <- mkl(d$x, d$y, kernels = ks, C = c(10, 1))
  expect_identical(path$call[[1L]], as.name("mkl"))
  up <- update(path, C = c(5, 0.5))
  expect_s3_class(up, "mkl_path")
  expect_identical(up$C, c(5, 0.5))
  fpath <- mkl(cls ~ ., data = df, kernels = ks, C = c(10, 1))
  expect_identical(update(fpath, C = c(3, 2))$C, c(3, 2))
})

test_that("Platt scaling reaches the minimum of its likelihood (zero gradient, no worse than BFGS)", {
  set.seed(7)
  n <- 400
  y <- ifelse(runif(n) < 0.4, 1, -1)
  f <- y * 0.8 + rnorm(n)
  ab <- mklearn:::platt_fit(f, y, "hinge")
  np <- sum(y > 0); nn <- sum(y < 0)
  t <- ifelse(y > 0, (np + 1) / (np + 2), 1 / (nn + 2))
  nll <- function(par) {
    z <- par[1] * f + par[2]
    sum(-t * plogis(z, log.p = TRUE) - (1 - t) * plogis(-z, log.p = TRUE))
  }
  p <- plogis(ab[["A"]] * f + ab[["B"]])
  expect_lt(max(abs(c(sum((p - t) * f), sum(p - t)))), 1e-6)
  expect_lte(nll(c(ab[["A"]], ab[["B"]])), optim(c(1, 0), nll, method = "BFGS")$value + 1e-10)
  expect_identical(mklearn:::platt_fit(f, y, "logistic"), c(A = 1, B = 0))
})
