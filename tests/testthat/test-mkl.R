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
  expect_error(predict(fit, x, type = "probability"), "should be one of")
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
  ff <- mkl(d$x, d$y, kernels = ks_small, control = mkl_control(memory = 4e5))
  expect_identical(fd$store, "dense")
  expect_identical(ff$store, "fly")
  expect_equal(ff$alpha, fd$alpha, tolerance = 1e-10)
  expect_equal(predict(ff, d$x, type = "link"), predict(fd, d$x, type = "link"),
               tolerance = 1e-10)
  expect_error(mkl(d$x, d$y, kernels = ks_small,
                   control = mkl_control(memory = 4e5, store = "dense")),
               "needs .*KB.*\\(dense store.*above the memory budget.*store = \"fly\"")
  old <- options(mklearn.max_bytes = 4e5)
  on.exit(options(old))
  expect_identical(mkl(d$x, d$y, kernels = ks_small)$store, "fly")
  options(mklearn.max_bytes = 1e5)
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

test_that("duplicated column names are refused at fit time, by name", {
  d <- two_class(40, 4, seed = 41)
  x <- d$x
  colnames(x) <- c("a", "a", "b", "c")
  expect_error(mkl(x, d$y, kernels = ks_small), "duplicated column names: a \\(columns 1, 2\\)")
  expect_error(mkl(as.data.frame(x), d$y, kernels = ks_small), "duplicated column names: a")
  expect_error(gram(ks_small, x), "duplicated column names: a")
  # unnamed columns, or some empty names, are fine (matched by position)
  colnames(x) <- c("a", "", "b", "")
  fit <- mkl(x, d$y, kernels = ks_small)
  expect_equal(predict(fit, x, type = "link"), fitted(fit), tolerance = 1e-6,
               ignore_attr = TRUE)
})

test_that("the formula interface drops rows with missing values (na.action), saying how many", {
  d <- two_class(60, 3, seed = 42)
  df <- data.frame(d$x, cls = factor(d$y))
  df$v1[c(3, 7)] <- NA
  df$v3[10] <- NA
  expect_message(fit <- mkl(cls ~ ., data = df, kernels = ks_small),
                 "3 of 60 rows have missing values \\(in v1, v3\\) and were dropped")
  expect_identical(fit$nobs, 57L)
  expect_identical(as.integer(fit$na.action), c(3L, 7L, 10L))
  expect_error(mkl(cls ~ ., data = df, kernels = ks_small, na.action = na.fail),
               "3 of 60 rows have missing values \\(in v1, v3\\) and na.action refuses them")
  ref <- mkl(cls ~ ., data = df[-c(3, 7, 10), ], kernels = ks_small)
  expect_equal(fitted(fit), fitted(ref))
  expect_message(cv <- cv.mkl(cls ~ ., data = df, kernels = ks_small, C = c(1, 0.1),
                              nfolds = 2), "3 of 60 rows", all = FALSE)
  expect_identical(cv$fit$fits[[1L]]$nobs, 57L)
})

test_that("update() changes the formula of a formula fit; a default fit says it has none", {
  d <- two_class(50, 3, seed = 43)
  df <- data.frame(d$x, cls = factor(d$y))
  fit <- mkl(cls ~ ., data = df, kernels = ks_small)
  up <- update(fit, . ~ . - v1)
  expect_identical(up$xnames, c("v2", "v3"))
  expect_equal(fitted(up), fitted(mkl(cls ~ v2 + v3, data = df, kernels = ks_small)))
  path <- mkl(cls ~ ., data = df, kernels = ks_small, C = c(10, 1))
  expect_identical(update(path, . ~ . - v3)$fits[[1L]]$xnames, c("v1", "v2"))
  f0 <- mkl(d$x, d$y, kernels = ks_small)
  expect_identical(update(f0, C = 10)$C, 10)
  expect_error(update(f0, . ~ . - v1), "made without a formula.*update\\(fit, C = 10\\)")
})

test_that("a numeric response of a few whole values is fitted as a regression, with a message", {
  d <- two_class(60, 3, seed = 44)
  set.seed(44)
  y <- sample(1:3, 60, replace = TRUE)
  expect_message(fit <- mkl(d$x, y, kernels = ks_small), "3 distinct whole values.*factor")
  expect_identical(fit$task, "regression")
  expect_silent(mkl(d$x, y, kernels = ks_small, task = "regression"))
  expect_silent(mkl(d$x, d$x[, 1], kernels = ks_small))        # a continuous response
  expect_silent(mkl(d$x, d$y, kernels = ks_small))             # -1/+1: classification
  # once per cross-validation, not once per fold
  msgs <- character()
  withCallingHandlers(cv.mkl(d$x, y, kernels = ks_small, C = c(1, 0.1), nfolds = 3),
                      message = function(m) {
                        msgs <<- c(msgs, conditionMessage(m))
                        invokeRestart("muffleMessage")
                      })
  expect_identical(sum(grepl("distinct whole values", msgs)), 1L)
})

test_that("match.arg errors of mkl() name the argument and the value given", {
  d <- two_class(30, 3, seed = 45)
  expect_error(mkl(d$x, d$y, method = "svm"), "'method' should be one of.*uniform.*got \"svm\"")
  expect_error(mkl(d$x, d$y, penalty = "l3"), "'penalty' should be one of.*got \"l3\"")
  expect_error(mkl(d$x, d$y, task = "clustering"), "'task' should be one of")
})

test_that("a fit whose kernels were all dropped has zero weights and 0 selected everywhere", {
  d <- two_class(40, 2, seed = 5)
  ks <- kernel_set(rbf_kernel(c(0.5, 1, 2, 4)))
  expect_warning(fit <- mkl(d$x, d$y, kernels = ks, method = "spicy", C = 0.01),
                 "every kernel was dropped")
  expect_identical(unname(coef(fit)), rep(0, 4))
  expect_length(coef(fit, nonzero = TRUE), 0L)
  expect_identical(dim(coef(fit, type = "alpha", nonzero = TRUE)), c(40L, 0L))
  expect_identical(nrow(summary(fit)$kernels), 0L)
  expect_output(print(summary(fit)), "Selected kernels \\(0 of 4\\)")
  expect_identical(mklearn:::n_selected(fit), 0L)
  # paths count the same kernels; a fit that selects some has weights summing to one
  path <- suppressWarnings(mkl(d$x, d$y, kernels = ks, method = "spicy", C = c(10, 0.01)))
  expect_identical(summary(path)$table$kernels,
                   c(length(coef(path$fits[[1]], nonzero = TRUE)), 0L))
  expect_gt(summary(path)$table$kernels[1], 0L)
  expect_equal(sum(coef(path$fits[[1]])), 1)
  expect_output(print(path), "0.01 +0 ")
})

test_that("fitted values are predict() on the training data, for every method and store", {
  d <- two_class(50, 3, seed = 41)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(1:2), features = c("all", "each"))
  for (m in mkl_methods()) for (store in c("dense", "fly")) {
    f <- suppressWarnings(mkl(d$x, d$y, kernels = ks, method = m,
                              control = mkl_control(store = store)))
    lab <- paste(m, store)
    expect_equal(f$fitted, predict(f, d$x, type = "link"), tolerance = 1e-10, label = lab)
    expect_equal(summary(f)$train[["error"]], mean(predict(f, d$x) != d$y), label = lab)
    w <- coef(f)
    expect_true(all(w >= 0) && abs(sum(w) - 1) < 1e-12, label = lab)
    expect_setequal(names(coef(f, nonzero = TRUE)), summary(f)$kernels$kernel)
    expect_identical(length(coef(f, nonzero = TRUE)), mklearn:::n_selected(f), label = lab)
  }
  # centred kernels and regression
  ksc <- kernel_set(rbf_kernel(c(0.5, 2)), normalize = "center_trace")
  for (m in c("uniform", "spicy", "bayes")) {
    f <- mkl(d$x, d$x[, 1]^2, kernels = ksc, method = m)
    expect_equal(f$fitted, predict(f, d$x), tolerance = 1e-10, label = m)
  }
})

test_that("a constant decision function learned nothing, whatever the jitter adds", {
  set.seed(42)
  z <- matrix(rnorm(120), 30)
  x <- matrix(rnorm(120), 40)
  y <- ifelse(x[, 1] + rnorm(40) > 0, 1, -1)
  cases <- list(
    duplicated = function(m) mkl(rbind(z, z), factor(rep(c("a", "b"), each = 30)), method = m),
    constant = function(m) mkl(matrix(1, 40, 3), y, method = m, standardize = FALSE),
    rbf_wide = function(m) mkl(x, y, kernels = kernel_set(rbf_kernel(1e300)), method = m),
    laplace_wide = function(m) mkl(x, y, kernels = kernel_set(laplace_kernel(1e300)),
                                   method = m),
    tiny = function(m) mkl(x * 1e-300, y, method = m, standardize = FALSE))
  for (cs in names(cases)) for (m in c("uniform", "hessian", "mwu")) {
    expect_warning(f <- cases[[cs]](m), "learned nothing: the decision function is constant",
                   label = paste(cs, m))
    expect_match(f$learned_nothing, "predicts the class", label = paste(cs, m))
    expect_lte(diff(range(f$fitted)), 1e-12)
    # the training error is that of predict(), not of a jitter that separates duplicates
    expect_equal(summary(f)$train[["error"]],
                 mean(ifelse(predict(f, type = "link") > 0, 1, -1) != f$y))
  }
  f <- suppressWarnings(cases$duplicated("uniform"))
  expect_equal(summary(f)$train[["error"]], 0.5)
})

test_that("a fit that predicts one class or memorises its training points is flagged", {
  # one class on its own training data: heavily regularised, imbalanced labels
  set.seed(43)
  x <- matrix(rnorm(180), 60)
  y <- rep(c(1, -1), c(45, 15))
  expect_warning(f <- mkl(x, y, C = 0.001), "generalises nothing: it predicts the class '1'")
  expect_match(f$degenerate, "15 of the 60 labels are the other class")
  expect_output(print(f), "NOTE: this model generalises nothing")
  expect_output(print(summary(f)), "NOTE: this model generalises nothing")
  # kernels nearly the identity: every method memorises the training points
  set.seed(2)
  xn <- matrix(rnorm(300), 60)
  yn <- factor(ifelse(xn[, 1] + rnorm(60, sd = 0.3) > 0, "a", "b"))
  for (m in c("uniform", "hessian", "spicy", "l01")) {
    expect_warning(fl <- mkl(xn, yn, method = m, kernels = kernel_set(rbf_kernel(c(0.01, 0.02)))),
                   "generalises nothing: .*nearly the identity", label = m)
    expect_match(fl$degenerate, "Drop the narrow kernel widths", label = m)
  }
  # many kernels on BreastCancer (which once made MKL-L0/1 collapse): good fits, not flagged
  data("BreastCancer", package = "mlbench", envir = environment())
  bc <- BreastCancer[stats::complete.cases(BreastCancer), ]
  xb <- sapply(bc[, 2:10], function(v) as.numeric(as.character(v)))
  set.seed(1)
  i <- sample(nrow(xb), 120)
  ks <- kernel_set(rbf_kernel(sigma = c(0.1, 0.25, 0.5, 0.75, 1:20)), poly_kernel(degree = 1:3),
                   features = c("all", "each"))
  fl <- mkl(xb[i, ], bc$Class[i], method = "l01", kernels = ks)
  expect_null(fl$degenerate)
  expect_gt(mean(predict(fl, xb[-i, ]) == bc$Class[-i]), 0.9)
  fs <- mkl(xb[i, ], bc$Class[i], method = "spicy", kernels = ks)
  expect_null(fs$degenerate)
  expect_gt(mean(predict(fs, xb[-i, ]) == bc$Class[-i]), 0.9)
})

test_that("a fit that predicts one class on its held-out points is flagged, with the evidence", {
  # labels independent of the features (3 to 1): the fit predicts both classes on its training
  # points, only the majority class on the held-out points of the probabilities' folds
  set.seed(2)
  x <- matrix(rnorm(320), 80)
  y <- rep(c(1, -1), c(60, 20))
  ks <- kernel_set(rbf_kernel(sigma = 1), poly_kernel(degree = 1))
  expect_warning(f <- mkl(x, y, method = "simple", kernels = ks,
                          control = mkl_control(nthreads = 1)),
                 paste0("generalises nothing: on the 80 held-out points .* predicts the class ",
                        "'1' for every one, while 20 of them are the other class .*Use other ",
                        "kernels"), class = "mkl_degenerate")
  expect_length(unique(sign(f$fitted)), 2L)
  expect_equal(f$heldout$predicted, c(0L, 80L))
  expect_output(print(f), "NOTE: this model generalises nothing: on the 80 held-out points")
  # without held-out values the training data's rules alone apply, and they do not see it
  ft <- mkl(x, y, method = "simple", kernels = ks,
            control = mkl_control(nthreads = 1, platt = "train"))
  expect_null(ft$degenerate)
  expect_null(ft$heldout)
})

test_that("the formula interface takes subset, evaluated in the data, as lm() does", {
  d <- two_class(60, 3, seed = 81)
  df <- data.frame(d$x, cls = factor(d$y))
  fit <- mkl(cls ~ ., data = df, kernels = ks_small, subset = v1 > -1)
  ref <- mkl(cls ~ ., data = df[df$v1 > -1, ], kernels = ks_small)
  expect_identical(fit$nobs, sum(df$v1 > -1))
  expect_equal(fitted(fit), fitted(ref))
  expect_equal(coef(fit), coef(ref))
  expect_equal(fitted(mkl(cls ~ ., data = df, kernels = ks_small, subset = 1:40)),
               fitted(mkl(cls ~ ., data = df[1:40, ], kernels = ks_small)))
  # update() keeps the subset; a level absent from the subset is dropped
  expect_identical(update(fit, C = 2)$nobs, fit$nobs)
  df3 <- data.frame(d$x, cls = factor(ifelse(d$x[, 3] > 1, "c", ifelse(d$y > 0, "a", "b"))))
  f2 <- mkl(cls ~ ., data = df3, kernels = ks_small, subset = cls != "c")
  expect_s3_class(f2, "mkl")
  expect_identical(levels(predict(f2, df3)), c("a", "b"))
})

test_that("na.exclude pads residuals and fitted values; print and summary report dropped rows", {
  ks <- kernel_set(rbf_kernel(c(1, 3)))
  d <- mtcars
  d$wt[c(2, 5)] <- NA
  expect_message(fe <- mkl(mpg ~ ., data = d, kernels = ks, na.action = na.exclude),
                 "2 of 32 rows .* dropped \\(na.action = na.exclude")
  fo <- suppressMessages(mkl(mpg ~ ., data = d, kernels = ks))
  expect_length(residuals(fo), 30L)
  expect_length(fitted(fo), 30L)
  r <- residuals(fe)
  expect_length(r, 32L)
  expect_identical(which(is.na(r)), c(2L, 5L))
  expect_equal(unname(r[-c(2, 5)]), residuals(fo), ignore_attr = TRUE)
  expect_identical(which(is.na(fitted(fe))), c(2L, 5L))
  expect_identical(which(is.na(predict(fe))), c(2L, 5L))
  expect_equal(deviance(fe), deviance(fo))
  expect_identical(nobs(fe), 30L)
  expect_output(print(fe), "2 observations deleted due to missingness")
  expect_output(print(summary(fo)), "2 observations deleted due to missingness")
  expect_silent(capture.output(print(mkl(mpg ~ ., data = mtcars, kernels = ks))))
  out <- capture.output(print(mkl(mpg ~ ., data = mtcars, kernels = ks)))
  expect_false(any(grepl("deleted", out)))
  di <- iris
  di$Sepal.Width[c(1, 60)] <- NA
  fm <- suppressMessages(mkl(Species ~ ., data = di, kernels = ks, na.action = na.exclude))
  expect_identical(dim(fitted(fm)), c(150L, 3L))
  expect_output(print(fm), "2 observations deleted")
  expect_output(print(summary(fm)), "2 observations deleted")
})

test_that("predict() handles missing values in new data by na.action", {
  d <- two_class(50, 3, seed = 82)
  df <- data.frame(d$x, cls = factor(d$y, labels = c("neg", "pos")))
  fit <- mkl(cls ~ ., data = df, kernels = ks_small)
  nd <- df[1:6, ]
  nd$v2[c(2, 5)] <- NA
  ref <- predict(fit, df[c(1, 3, 4, 6), ])
  p <- predict(fit, nd)
  expect_length(p, 6L)
  expect_identical(unname(which(is.na(p))), c(2L, 5L))
  expect_identical(unname(p[-c(2, 5)]), unname(ref))
  expect_identical(unname(predict(fit, nd, na.action = na.omit)), unname(ref))
  expect_identical(unname(predict(fit, nd, na.action = na.exclude)), unname(p))
  P <- predict(fit, nd, type = "prob")
  expect_identical(dim(P), c(6L, 2L))
  expect_true(all(is.na(P[c(2, 5), ])) && !anyNA(P[-c(2, 5), ]))
  expect_error(predict(fit, nd, na.action = na.fail),
               "'newx' contains missing values \\(2 of 6 rows\\) and na.action refuses them")
  expect_error(predict(fit, nd, na.action = "na.fail"), "na.action refuses them")
  expect_error(predict(fit, nd, na.action = 3), "'na.action' must be a function")
  # a matrix fit alike
  fx <- mkl(d$x, d$y, kernels = ks_small)
  z <- d$x[1:4, ]
  z[3, 1] <- NA
  f <- predict(fx, z, type = "link")
  expect_identical(which(is.na(f)), 3L)
  expect_equal(f[-3], predict(fx, z[-3, ], type = "link"))
  # multiclass (one-vs-one coupling needs complete rows)
  di <- iris[c(1:5, 51:55, 101:105), ]
  di$Petal.Length[c(2, 7)] <- NA
  fm <- mkl(Species ~ ., data = iris, kernels = ks_small, multiclass = "ovo")
  pm <- predict(fm, di, type = "prob")
  expect_identical(unname(which(is.na(pm[, 1]))), c(2L, 7L))
  expect_length(predict(fm, di, na.action = na.omit), 13L)
})

test_that("weights in the formula interface are evaluated in the data, subset with the rows", {
  d <- two_class(40, 3, seed = 83)
  df <- data.frame(d$x, cls = factor(d$y), w = seq(0.5, 2, length.out = 40))
  df$v1[4] <- NA
  rec <- new.env()
  # what mkl.default receives as `weights` (an argument it gains with case weights)
  suppressMessages(trace("mkl.default", bquote(assign("w", if (exists("weights",
                                                                    inherits = FALSE))
    weights else list(...)[["weights"]], envir = .(rec))), print = FALSE,
    where = asNamespace("mklearn")))
  on.exit(suppressMessages(untrace("mkl.default", where = asNamespace("mklearn"))))
  try(suppressMessages(mkl(cls ~ v1 + v2, data = df, kernels = ks_small, weights = w,
                           subset = v3 > -1)), silent = TRUE)
  keep <- df$v3 > -1 & !is.na(df$v1)
  expect_equal(unname(rec$w), df$w[keep])
  rec$w <- "unset"
  suppressMessages(mkl(cls ~ v1 + v2, data = df, kernels = ks_small))
  expect_null(rec$w)
  if ("weights" %in% names(formals(mklearn:::mkl.default))) {
    fw <- suppressMessages(mkl(cls ~ v1 + v2, data = df, kernels = ks_small, weights = w))
    ref <- mkl(df[-4, c("v1", "v2")], df$cls[-4], kernels = ks_small, weights = df$w[-4])
    expect_equal(fitted(fw), fitted(ref), ignore_attr = TRUE)
  }
})

test_that("probabilities: Platt's sigmoid on cross-validated decision values by default", {
  set.seed(84)
  n <- 60
  x <- matrix(rnorm(n * 3), n)
  y <- ifelse(x[, 1] + 0.5 * x[, 2]^2 + 0.5 * rnorm(n) > 0.5, 1, -1)
  K <- array(c(rbf_R(x, x, 1), rbf_R(x, x, 3)), c(n, n, 2))
  set.seed(1)
  before <- runif(1)
  set.seed(1)
  fit <- mkl(y = y, kernels = K, C = 5)
  expect_identical(runif(1), before)            # the session's random numbers untouched
  expect_identical(fit$platt_method, "cv")
  # the held-out decision values of the internal folds, refitted here by mkl() itself
  foldid <- mklearn:::with_seed(5L, mklearn:::make_folds(y, 5L, TRUE))
  dv <- numeric(n)
  for (k in 1:5) {
    tr <- foldid != k
    fk <- mkl(y = y[tr], kernels = K[tr, tr, ], C = 5, control = mkl_control(platt = "train"))
    dv[!tr] <- predict(fk, newkernels = K[!tr, tr, ], type = "link")
  }
  expect_equal(fit$platt, mklearn:::platt_fit(dv, y, "hinge"), tolerance = 1e-6)
  ft <- mkl(y = y, kernels = K, C = 5, control = mkl_control(platt = "train"))
  expect_identical(ft$platt_method, "train")
  expect_identical(ft$platt, mklearn:::platt_fit(fitted(ft), y, "hinge"))
  expect_identical(fitted(ft), fitted(fit))
  # the training values are optimistic: a steeper sigmoid
  expect_gt(ft$platt[["A"]], fit$platt[["A"]])
  # reproducible, whatever the seed of the session
  set.seed(99)
  expect_identical(mkl(y = y, kernels = K, C = 5)$platt, fit$platt)
  expect_error(mkl_control(platt = "holdout"), "'platt' should be one of \"cv\", \"train\"")
  # too few points of a class for five folds: the training values, saying why
  y6 <- rep(-1, n)
  y6[1:4] <- 1
  f6 <- suppressWarnings(mkl(y = y6, kernels = K, C = 5))
  expect_identical(f6$platt_method, "train (fewer than 5 points of a class)")
  expect_identical(mkl(y = y, kernels = K, loss = "logistic", method = "spicy")$platt_method,
                   "logistic")
})

test_that("cross-validated probabilities: warm-started methods, multiclass, cv.mkl folds", {
  d <- two_class(60, 3, seed = 85)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(1))
  for (m in c("simple", "spicy", "bayes", "l01")) {
    f <- suppressWarnings(mkl(d$x, d$y, kernels = ks, method = m))
    expect_identical(f$platt_method, "cv", label = m)
    expect_true(all(is.finite(f$platt)) && f$platt[["A"]] > 0, label = m)
  }
  fm <- mkl(Species ~ ., data = iris, kernels = ks, multiclass = "ovo")
  expect_identical(unname(vapply(fm$fits, `[[`, "", "platt_method")), rep("cv", 3))
  path <- mkl(d$x, d$y, kernels = ks, method = "simple", C = c(10, 1))
  expect_identical(vapply(path$fits, `[[`, "", "platt_method"), c("cv", "cv"))
  expect_false(identical(path$fits[[1]]$platt, path$fits[[2]]$platt))
  # the folds of cv.mkl calibrate on their training values; the path on all the data by cv
  expect_identical(mklearn:::fold_control(NULL)[["platt"]], "train")
  expect_identical(mklearn:::fold_control(mkl_control(tol = 1e-3))[["tol"]], 1e-3)
  rec <- new.env()
  rec$n <- 0L
  suppressMessages(trace("platt_cv_values", bquote(assign("n", .(rec)$n + 1L, envir = .(rec))),
                         print = FALSE, where = asNamespace("mklearn")))
  on.exit(suppressMessages(untrace("platt_cv_values", where = asNamespace("mklearn"))))
  cv <- cv.mkl(d$x, d$y, kernels = ks, C = c(10, 1), nfolds = 3)
  expect_identical(rec$n, 0L)                  # the path on all the data: on cv.mkl's folds
  expect_identical(cv$fit$fits[[1]]$platt_method, "cv")
})

test_that("a fit whose held-out accuracy is at the majority rate generalises nothing", {
  set.seed(2)
  x <- matrix(rnorm(200 * 3), 200)
  y <- factor(ifelse(runif(200) < 0.6, "a", "b"))   # labels that the features do not predict
  ks <- kernel_set(rbf_kernel(1))
  expect_warning(f <- mkl(x, y, kernels = ks, method = "uniform", C = 10),
                 paste0("generalises nothing: on the 200 held-out points .* its accuracy, ",
                        "0.605, is less than 2 points above always predicting the majority ",
                        "class 'a' \\(0.630; training accuracy 0.750\\)"))
  expect_true(all(f$heldout$predicted > 0))          # both classes held out: not a collapse
  expect_match(f$degenerate, "majority class")
  # the training values alone cannot tell (no held-out values): no note
  g <- mkl(x, y, kernels = ks, method = "uniform", C = 10,
           control = mkl_control(platt = "train"))
  expect_null(g$degenerate)
})

test_that("a fit below the majority rate on its own training data is said to generalise nothing", {
  # both classes predicted, 40 of 100 training points right against 70 for the constant model
  y <- rep(c(1, -1), c(30, 70))
  fitted <- c(rep(-1, 30), rep(1, 30), rep(-1, 40))
  base <- list(y = y, task = "classification", classes = c("a", "b"), method = "l01")
  note <- mklearn:::degenerate_note(fitted, integer(0), numeric(0), NULL, NULL, base, 1)
  expect_match(note, paste0("its training accuracy, 0.400, is below always predicting the ",
                            "majority class 'a' \\(0.700\\).*Change C \\(now 1\\)"))
  expect_false(isTRUE(attr(note, "overfit")))
  # the case weights count in both rates: negatives weighing twice, 80 of 170 against 140
  base$case_weights <- ifelse(y > 0, 1, 2)
  expect_match(mklearn:::degenerate_note(fitted, integer(0), numeric(0), NULL, NULL, base, 1),
               "training accuracy, 0.471, .* majority class 'a' \\(0.824\\)")
})
