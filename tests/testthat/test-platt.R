test_that("Platt's sigmoid weights rows by their case weights", {
  set.seed(3)
  f <- rnorm(30)
  y <- ifelse(f + rnorm(30) > 0, 1, -1)
  w <- rep(c(2, 1, 0), 10)
  dup <- rep(seq_along(f), w)                  # weight 2 = the row twice, weight 0 = absent
  expect_equal(mklearn:::platt_fit(f, y, "hinge", w), mklearn:::platt_fit(f[dup], y[dup], "hinge"),
               tolerance = 1e-8)
  expect_identical(mklearn:::platt_fit(f, y, "hinge", rep(1, 30)),
                   mklearn:::platt_fit(f, y, "hinge"))
})

test_that("rows of case weight 0 do not enter the calibration, by training or by CV", {
  d <- two_class(80, 3, seed = 21)
  ks <- kernel_set(rbf_kernel(c(1, 3)), poly_kernel(1))
  w <- rep(1, 80)
  w[1:20] <- 0
  y2 <- d$y
  y2[1:20] <- -y2[1:20]                        # labels that only weight-0 rows carry
  for (m in c("hessian", "spicy", "uniform")) for (pl in c("train", "cv")) {
    ctl <- mkl_control(platt = pl)
    f1 <- suppressWarnings(mkl(d$x, d$y, kernels = ks, method = m, C = 1, weights = w,
                               control = ctl))
    f2 <- suppressWarnings(mkl(d$x, y2, kernels = ks, method = m, C = 1, weights = w,
                               control = ctl))
    lab <- paste(m, pl)
    expect_identical(f1$platt_method, pl, label = lab)   # the CV's fold fits take the weights
    expect_equal(fitted(f1), fitted(f2), tolerance = 1e-7, label = lab)
    expect_equal(f1$platt, f2$platt, tolerance = 1e-6, label = lab)
  }
  # the sigmoid of the training values is that of the rows of positive weight
  ft <- suppressWarnings(mkl(d$x, d$y, kernels = ks, method = "hessian", C = 1, weights = w,
                             control = mkl_control(platt = "train")))
  expect_identical(ft$platt, mklearn:::platt_fit(fitted(ft)[-(1:20)], d$y[-(1:20)], "hinge"))
})

test_that("the probabilities' folds fit on every store a method has (no fallback to training)", {
  set.seed(7)
  n <- 80
  x <- matrix(rnorm(n * 3), n)
  y <- factor(ifelse(x[, 1] + x[, 2]^2 + rnorm(n, sd = 0.5) > 1, "a", "b"))
  info <- mkl_methods(details = TRUE)
  for (m in c("uniform", "hessian", "l01")) {
    stores <- intersect(c("fly", "lowrank"), strsplit(info$stores[info$method == m], ", ")[[1]])
    for (s in stores) {
      f <- suppressWarnings(mkl(x, y, method = m, control = mkl_control(store = s)))
      expect_identical(f$platt_method, "cv", info = paste(m, s))
    }
  }
})

test_that("at large n the sigmoid is fitted on the held-out rows of the first folds only", {
  d <- two_class(100, 3, seed = 5)
  ks <- kernel_set(rbf_kernel(c(1, 3)))
  ns <- asNamespace("mklearn")
  old <- get(".platt_heldout", ns)
  unlockBinding(".platt_heldout", ns)
  on.exit({ assign(".platt_heldout", old, ns); lockBinding(".platt_heldout", ns) })
  cal <- function(h) {
    assign(".platt_heldout", h, ns)
    f <- mkl(d$x, d$y, kernels = ks, method = "hessian", C = 1)
    expect_identical(f$platt_method, "cv")
    f$platt
  }
  # folds of about 20 rows: 25 and 35 stop after the second fold, 45 after the third
  expect_identical(cal(25L), cal(35L))
  expect_false(isTRUE(all.equal(cal(35L), cal(45L))))
  expect_false(isTRUE(all.equal(cal(45L), cal(old))))
  expect_identical(cal(100L), cal(old))          # all five folds below the cap
})

test_that("a low-rank fit with 50 rows per factor column calibrates on its training values", {
  d <- two_class(600, 3, seed = 8)
  ks <- kernel_set(rbf_kernel(2))
  ctl <- mkl_control(store = "lowrank", rank = 10L, lowrank_tol = 0)
  f <- mkl(d$x, d$y, kernels = ks, method = "uniform", control = ctl)
  expect_identical(sum(f$lowrank$rank), 10L)
  expect_identical(f$platt_method, "train (at least 50 rows per factor column)")
  y <- ifelse(d$y == levels(factor(d$y))[2], 1, -1)
  expect_identical(f$platt, mklearn:::platt_fit(fitted(f), y, "hinge"))
  expect_identical(mkl_memory(600, 1, "uniform", "lowrank", control = ctl)$platt, 0)
  # 400 rows: 40 per column, the folds as before
  g <- mkl(d$x[1:400, ], d$y[1:400], kernels = ks, method = "uniform", control = ctl)
  expect_identical(g$platt_method, "cv")
  expect_gt(mkl_memory(400, 1, "uniform", "lowrank", control = ctl)$platt, 0)
})

test_that("the held-out summary reads the held-out rows only, with their case weights", {
  dv <- c(1, -1, 2, NA, -3, 0.5)
  fitted <- c(1, -1, 1, 1, -1, -1)
  y <- c(1, 1, 1, -1, -1, -1)
  h <- mklearn:::heldout_summary(dv, fitted, y)
  expect_equal(h[c("n", "accuracy", "train_accuracy", "majority")],
               list(n = 5L, accuracy = 0.6, train_accuracy = 0.8, majority = 0.6))
  expect_equal(h$recall, c(1 / 2, 2 / 3))
  expect_equal(h$predicted, c(2L, 3L))
  expect_equal(h$labels, c(2L, 3L))
  # a row of weight 0 does not count; a row of weight 2 counts twice in the rates
  h <- mklearn:::heldout_summary(dv, fitted, y, cw = c(1, 1, 1, 1, 0, 2))
  expect_equal(h[c("n", "accuracy", "train_accuracy", "majority")],
               list(n = 4L, accuracy = 0.4, train_accuracy = 0.8, majority = 0.6))
  expect_equal(h$recall, c(0, 2 / 3))
  expect_equal(h$predicted, c(1L, 3L))
})

test_that("the majority class of the held-out note is the one the case weights make it", {
  # three positive rows against two negative ones, the negatives weighing three times as much
  dv <- c(1, 1, -1, 1, -1)
  y <- c(1, 1, 1, -1, -1)
  h <- mklearn:::heldout_summary(dv, dv, y, cw = c(1, 1, 1, 3, 3))
  expect_equal(h$majority, 2 / 3)
  expect_identical(h$majority_class, 1L)
  fit <- list(heldout = h, classes = c("neg", "pos"), method = "uniform", C = 1)
  note <- mklearn:::heldout_degenerate(fit)
  expect_match(note, "majority class 'neg' \\(0.667")
  expect_identical(mklearn:::heldout_summary(dv, dv, y)$majority_class, 2L)
})

test_that("MKL-L0/1's probability folds start from the fit's iterate on their rows, and stop P-stationary", {
  n <- 80
  d <- two_class(n, 3, seed = 3)
  X <- scale(d$x)
  K <- array(0, c(n, n, 3))
  for (k in 1:3) K[, , k] <- rbf_R(X, X, c(0.5, 1, 2)[k])
  ctl <- mkl_control(tol = 1e-5)
  f <- mklearn:::fit_l01(K, d$y, "classification", 1, ctl, NULL)
  tr <- which(seq_len(n) %% 5 != 0)
  st <- mklearn:::platt_warm(list(method = "l01", nobs = n, state = f$state), tr)
  for (v in c("w", "lambda", "u", "T")) expect_identical(st[[v]], f$state[[v]][tr], info = v)
  for (v in c("d", "z", "b", "a", "free")) expect_identical(st[[v]], f$state[[v]], info = v)
  Kt <- K[tr, tr, , drop = FALSE]
  yt <- d$y[tr]
  warm <- mklearn:::fit_l01(Kt, yt, "classification", 1, ctl, st)
  cold <- mklearn:::fit_l01(Kt, yt, "classification", 1, ctl, NULL)
  expect_true(warm$converged)
  expect_lt(warm$iterations, cold$iterations)
  # the warm fold fit's exit is P-stationary: u is the L0/1 proximal point of s on the final
  # working set, lambda vanishes outside it, w = -Y lambda, d on the simplex
  s <- warm$state
  rho1 <- warm$info$rho[1]
  kdw <- drop(combine_R(Kt, s$d) %*% s$w)
  sv <- 1 - yt * kdw - s$b * yt - s$lambda / rho1
  expect_equal(s$u, ifelse(sv > 0 & sv <= sqrt(2 * warm$info$C_scaled / rho1), 0, sv),
               tolerance = 1e-3)
  expect_identical(s$T, sv > 0 & sv <= sqrt(2 * warm$info$C_scaled / rho1))
  expect_true(all(s$lambda[!s$T] == 0))
  expect_lt(max(abs(s$w + yt * s$lambda)), 1e-3 * max(abs(s$w)))
  expect_equal(sum(warm$weights), 1, tolerance = 1e-12)
})
