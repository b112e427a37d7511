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
  expect_error(cv.mkl(NULL, y, kernels = array(diag(59), c(59, 59, 1)), C = c(2, 1)),
               "59 x 59 but there are 60 observations")
})

test_that("cv.mkl with precomputed kernels splits them by rows and columns", {
  set.seed(22)
  x <- matrix(runif(120), 60)
  y <- sin(3 * x[, 1]) + 0.1 * rnorm(60)
  # un-normalised kernels: a fold's kernels rebuilt from its rows equal the full kernels' block
  ks <- kernel_set(rbf_kernel(c(0.3, 1)), normalize = "none", jitter = 0)
  K <- gram(ks, x)
  foldid <- rep(1:3, 20)
  cvk <- cv.mkl(y = y, kernels = K, C = c(10, 1, 0.1), foldid = foldid)
  cvx <- cv.mkl(x, y, kernels = ks, standardize = FALSE, C = c(10, 1, 0.1), foldid = foldid)
  expect_equal(cvk$cvm, cvx$cvm, tolerance = 1e-8)
  expect_equal(cvk$cvsd, cvx$cvsd, tolerance = 1e-8)
  expect_identical(cvk$C.min, cvx$C.min)
  # multiclass with precomputed kernels
  xi <- scale(as.matrix(iris[, 1:4]))
  Ki <- gram(kernel_set(rbf_kernel(c(0.5, 2)), normalize = "none", jitter = 0), xi)
  cvi <- cv.mkl(y = iris$Species, kernels = Ki, method = "uniform", C = c(10, 1),
                foldid = rep(1:3, 50), multiclass = "ovo")
  errs <- sapply(1:3, function(k) {
    tr <- rep(1:3, 50) != k
    f <- mkl(NULL, iris$Species[tr], kernels = Ki[tr, tr, ], method = "uniform", C = 10,
             multiclass = "ovo")
    mean(predict(f, newkernels = Ki[!tr, tr, ]) != iris$Species[!tr])
  })
  expect_s3_class(cvi$fit$fits[[1]], "mkl_multi")
  expect_equal(cvi$cvm[1], mean(errs), tolerance = 1e-12)
  expect_lt(max(cvi$cvm), 0.15)
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

test_that("cv.mkl without C uses a decreasing log-spaced default grid", {
  set.seed(1)
  x <- matrix(rnorm(160), 40)
  y <- ifelse(x[, 1] + x[, 2] > 0, 1, -1)
  ks <- kernel_set(rbf_kernel(1))
  cv <- cv.mkl(x, y, kernels = ks, nfolds = 3)
  expect_equal(cv$C, 10^seq(3, -2, by = -0.25))
  expect_true(cv$C_default)
  expect_true(all(diff(log10(cv$C)) < 0))
  expect_equal(cv$fit$C, cv$C)
  expect_false(cv.mkl(x, y, kernels = ks, C = c(3, 1, 0.3), nfolds = 3)$C_default)
  expect_output(print(cv), "over 21 values of C")
  expect_error(cv.mkl(x, y, kernels = ks, method = "bayes"), "method 'bayes' has none")
})

test_that("cv.mkl says when C.min is at the edge of the grid, and not otherwise", {
  set.seed(22)
  x <- matrix(runif(120), 60)
  y <- sin(3 * x[, 1]) + 0.1 * rnorm(60)
  ks <- kernel_set(rbf_kernel(0.5))
  expect_message(cv <- cv.mkl(x, y, kernels = ks, C = c(0.01, 0.001, 1e-4), nfolds = 3),
                 "C.min = 0.01 is the largest C of the grid .*larger values")
  expect_identical(cv$C.min, 0.01)
  foldid <- rep(1:3, 20)
  expect_message(cv <- cv.mkl(x, y, kernels = ks, C = c(1e6, 1e5), foldid = foldid),
                 "is the smallest C of the grid .*smaller values")
  expect_identical(cv$C.min, 1e5)
  expect_no_message(cv <- cv.mkl(x, y, kernels = ks, C = c(1e4, 100, 1, 0.01), foldid = foldid))
  expect_identical(cv$C.min, 100)
})

test_that("cv.mkl has a formula method equal to the matrix interface on the design matrix", {
  d <- two_class(60, 3, seed = 23)
  set.seed(25)
  df <- data.frame(d$x, g = factor(sample(c("p", "q", "r"), 60, replace = TRUE)),
                   cls = factor(ifelse(d$y > 0, "yes", "no")))
  X <- model.matrix(cls ~ ., df)[, -1]
  ks <- kernel_set(rbf_kernel(c(0.5, 2)))
  foldid <- rep(1:3, 20)
  cvf <- cv.mkl(cls ~ ., data = df, kernels = ks, C = c(10, 1, 0.1), foldid = foldid)
  cvm <- cv.mkl(X, df$cls, kernels = ks, C = c(10, 1, 0.1), foldid = foldid)
  expect_s3_class(cvf, "cv.mkl")
  expect_equal(cvf$cvm, cvm$cvm)
  expect_equal(cvf$cvsd, cvm$cvsd)
  expect_false(is.null(cvf$fit$fits[[1]]$terms))
  expect_identical(predict(cvf, df[1:5, ], s = 1), predict(cvm, X[1:5, ], s = 1))
  # the path on all the data carries the mkl() call that refits it
  expect_identical(cvf$fit$call[[1L]], as.name("mkl"))
  expect_equal(update(cvf$fit, C = 10)$alpha, cvf$fit$fits[[1]]$alpha)
  expect_error(cv.mkl(cls ~ ., kernels = ks, C = c(2, 1)), "needs 'data'")
  expect_error(cv.mkl(cls ~ ., df$cls, data = df, C = c(2, 1)), "do not give 'y'")
})

test_that("fold fits that did not converge are counted, printed and warned about once", {
  d <- two_class(60, 3, seed = 19)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)))
  ctl <- mkl_control(svm_maxiter = 3)
  ws <- capture_warnings(cv <- cv.mkl(d$x, d$y, kernels = ks, C = c(100, 10), nfolds = 3,
                                      control = ctl, screen = NULL))
  expect_identical(cv$nonconverged, c(3L, 3L))
  expect_identical(cv$n_foldfits, 6L)
  fw <- grep("fold fits", ws, value = TRUE)
  expect_length(fw, 1L)
  expect_match(fw, "^6 of 6 fold fits did not converge \\(at C = 100, 10\\).*mkl_control")
  expect_output(print(cv), "not_converged")
  expect_output(print(cv), "WARNING: 6 of 6 fold fits did not converge")
  # converged folds: no column, no warning
  cv2 <- cv.mkl(d$x, d$y, kernels = ks, C = c(10, 1), nfolds = 3)
  expect_identical(cv2$nonconverged, c(0L, 0L))
  expect_false(any(grepl("not_converged", capture_output(print(cv2)))))
})

test_that("folds are stratified by class for classification when foldid is not given", {
  d <- two_class(60, 3, seed = 24)
  y <- ifelse(seq_len(60) <= 15, 1, -1)           # 15 against 45
  ks <- kernel_set(rbf_kernel(1))
  # (labels unrelated to x: fits on all the data generalise nothing, C.min is at the grid's end)
  set.seed(5)
  suppressMessages(expect_warning(cv <- cv.mkl(d$x, y, kernels = ks, C = c(2, 1), nfolds = 5),
                                  "generalise nothing"))
  tab <- table(cv$foldid, y)
  expect_identical(unname(tab[, "1"]), rep(3L, 5))
  expect_identical(unname(tab[, "-1"]), rep(9L, 5))
  # unequal class sizes: per class, fold counts differ by at most one
  y2 <- ifelse(seq_len(60) <= 17, 1, -1)
  set.seed(6)
  cv <- suppressMessages(suppressWarnings(cv.mkl(d$x, y2, kernels = ks, C = c(2, 1),
                                                 nfolds = 4)))
  tab <- table(cv$foldid, y2)
  expect_lte(max(apply(tab, 2, function(v) diff(range(v)))), 1L)
  expect_lte(diff(range(table(cv$foldid))), 1L)
})

test_that("cv.mkl of a multiclass response: misclassification by hand, deviance and AUC", {
  x <- as.matrix(iris[, 1:4]); y <- iris$Species
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), linear_kernel())
  foldid <- rep(1:3, 50)
  Cs <- c(10, 1, 0.1)
  cv <- cv.mkl(x, y, kernels = ks, method = "uniform", C = Cs, foldid = foldid)
  expect_s3_class(cv$fit$fits[[1]], "mkl_multi")
  errs <- sapply(1:3, function(k) {
    f <- mkl(x[foldid != k, ], y[foldid != k], kernels = ks, method = "uniform", C = 1)
    mean(predict(f, x[foldid == k, ]) != y[foldid == k])
  })
  expect_equal(cv$cvm[2], mean(errs), tolerance = 1e-12)
  expect_lt(min(cv$cvm), 0.1)
  expect_output(print(cv), "measure 'class'")
  expect_s3_class(predict(cv, x[1:3, ]), "factor")
  # multinomial deviance: -2 log of the coupled probability of the true class
  cvd <- cv.mkl(x, y, kernels = ks, method = "uniform", C = Cs, foldid = foldid,
                type.measure = "deviance", multiclass = "ovo")
  dev1 <- sapply(1:3, function(k) {
    f <- mkl(x[foldid != k, ], y[foldid != k], kernels = ks, method = "uniform", C = 10,
             multiclass = "ovo", control = mkl_control(platt = "train"))   # as cv.mkl folds
    P <- predict(f, x[foldid == k, ], type = "response")
    mean(-2 * log(P[cbind(seq_len(50), as.integer(y[foldid == k]))]))
  })
  expect_equal(cvd$cvm[1], mean(dev1), tolerance = 1e-12)
  # Hand and Till's multiclass AUC: maximised
  cva <- cv.mkl(x, y, kernels = ks, method = "uniform", C = Cs, foldid = foldid,
                type.measure = "auc")
  expect_true(all(cva$cvm > 0.9 & cva$cvm <= 1))
  expect_identical(cva$C.min, Cs[which.max(cva$cvm)])
})

test_that("AUC: per fold, the Mann-Whitney statistic of the held-out decision values", {
  d <- two_class(90, 3, seed = 26)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)))
  foldid <- rep(1:3, 30)
  Cs <- c(30, 3, 0.3)
  cv <- cv.mkl(d$x, d$y, kernels = ks, C = Cs, foldid = foldid, type.measure = "auc")
  pair_auc <- function(s, yy) {
    sp <- s[yy > 0]; sn <- s[yy < 0]
    mean(outer(sp, sn, ">") + 0.5 * outer(sp, sn, "=="))
  }
  aucs <- sapply(1:3, function(k) {
    f <- mkl(d$x[foldid != k, ], d$y[foldid != k], kernels = ks, C = 3)
    pair_auc(predict(f, d$x[foldid == k, ], type = "link"), d$y[foldid == k])
  })
  expect_equal(cv$cvm[2], mean(aucs), tolerance = 1e-12)
  expect_equal(cv$cvsd[2], sd(aucs) / sqrt(3), tolerance = 1e-12)
  expect_identical(cv$C.min, Cs[which.max(cv$cvm)])
  within <- Cs[cv$cvm >= max(cv$cvm) - cv$cvsd[which.max(cv$cvm)]]
  expect_identical(cv$C.1se, min(within))
  expect_identical(cv$name, "auc")
  # a held-out fold of one class has no AUC; a training part without a class cannot fit
  y1 <- d$y
  fid <- ifelse(y1 > 0, 1, 2)
  fid[1:2] <- 3
  expect_error(cv.mkl(d$x, y1, kernels = ks, C = Cs, foldid = fid, type.measure = "auc"),
               "no observation of class|at least two classes in every held-out fold")
  fid2 <- rep(1:3, 30)
  fid2[y1 > 0] <- 1
  expect_error(cv.mkl(d$x, y1, kernels = ks, C = Cs, foldid = fid2),
               "training part of fold 1 has no observation of class\\(es\\) 1")
  fid3 <- rep(c(1, 2), 45)
  fid3[which(y1 < 0)[1:3]] <- 3
  expect_error(cv.mkl(d$x, y1, kernels = ks, C = Cs, foldid = fid3, type.measure = "auc"),
               "type.measure = 'auc' needs at least two classes in every held-out fold; fold 3")
  expect_error(cv.mkl(d$x, d$y, kernels = ks, C = Cs, foldid = foldid, type.measure = "mse"),
               "'class' or 'deviance' or 'auc'")
})

test_that("cv.mkl names classes by the user's labels in its messages", {
  d <- two_class(40, 3, seed = 50)
  y <- factor(ifelse(d$y > 0, "pos", "neg"))
  foldid <- ifelse(y == "neg", 1L, 2L)
  expect_error(cv.mkl(d$x, y, kernels = kernel_set(rbf_kernel(1)), C = c(1, 0.1),
                      foldid = foldid), "no observation of class\\(es\\) neg")
  foldid <- rep(1:3, length.out = 40)
  foldid[y == "pos" & foldid == 2L] <- 1L
  expect_error(cv.mkl(d$x, y, kernels = kernel_set(rbf_kernel(1)), C = c(1, 0.1),
                      foldid = foldid, type.measure = "auc"), "fold 2 has only 'neg'")
})

test_that("cv.mkl breaks ties towards the most regularised (smallest) C", {
  set.seed(51)
  x <- matrix(rnorm(120), 40)
  y <- ifelse(x[, 1] > 0, 1, -1)
  x[, 1] <- x[, 1] + 3 * y          # separable: every C gives no held-out error
  cv <- suppressMessages(cv.mkl(x, y, kernels = kernel_set(linear_kernel()),
                                C = c(100, 10, 1), nfolds = 2))
  expect_identical(cv$cvm, c(0, 0, 0))
  expect_identical(cv$C.min, 1)
  expect_identical(cv$C.1se, 1)
})

test_that("cv.mkl refuses a fractional nfolds and names 's'", {
  d <- two_class(30, 3, seed = 52)
  ks <- kernel_set(rbf_kernel(1))
  expect_error(cv.mkl(d$x, d$y, kernels = ks, C = c(1, 0.1), nfolds = 2.5),
               "'nfolds' must be a whole number; got 2.5")
  cv <- suppressMessages(cv.mkl(d$x, d$y, kernels = ks, C = c(1, 0.1), nfolds = 2))
  expect_error(predict(cv, d$x, s = "C.best"), "'s' should be one of.*C.min")
})

test_that("fold fits that learned nothing are counted and reported once per cv.mkl call", {
  d <- two_class(60, 3, seed = 45)
  ks <- kernel_set(rbf_kernel(c(0.5, 1, 2, 4)))
  foldid <- rep(1:3, 20)
  # flagged fits at C that were not chosen: counted and printed, no warning
  expect_no_warning(cv <- cv.mkl(d$x, d$y, kernels = ks, method = "spicy",
                                 C = c(10, 1, 0.01, 0.001), foldid = foldid, screen = NULL))
  expect_identical(cv$learned_nothing, c(0L, 0L, 3L, 3L))
  expect_identical(unname(cv$path_flags[, "learned_nothing"]), c(FALSE, FALSE, TRUE, TRUE))
  expect_output(print(cv), "learned_nothing")
  expect_identical(vapply(cv$fit$fits, mklearn:::n_selected, 1L)[3:4], c(0L, 0L))
  # at the chosen C: one warning for the whole call
  notes <- character()
  cv2 <- withCallingHandlers(
    cv.mkl(d$x, d$y, kernels = ks, method = "spicy", C = c(0.01, 0.001), foldid = foldid,
           screen = NULL),
    warning = function(w) {
      notes <<- c(notes, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
  about <- grep("learned nothing", notes, value = TRUE)
  expect_length(about, 1L)
  expect_match(about, "6 of 6 fold fits and 2 of 2 fits on all the data learned nothing")
  expect_match(about, "among them C.min or C.1se")
})

test_that("the default C grid of a regression runs from 1e4 down to 0.1", {
  set.seed(41)
  x <- matrix(runif(120), 40)
  y <- 100 * sin(4 * x[, 1]) + 10 * rnorm(40)
  cv <- cv.mkl(x, y, kernels = kernel_set(rbf_kernel(1)), nfolds = 3)
  expect_true(cv$C_default)
  expect_equal(range(cv$C), c(0.1, 1e4))
  expect_length(cv$C, 21L)
  expect_equal(mklearn:::default_C_grid(c(-1, 1, 1, -1)), 10^seq(3, -2, by = -0.25))
  expect_equal(mklearn:::default_C_grid(factor(c("a", "b", "c"))), 10^seq(3, -2, by = -0.25))
  expect_equal(mklearn:::default_C_grid(c(1, 1, 2), task = "regression"), cv$C)
  # the default grid and the default kernel choice read one guess of the task; a y that mkl()
  # refuses gets the classification grid and no kernel choice
  expect_identical(mklearn:::guess_task(y), "regression")
  expect_null(mklearn:::guess_task(c(NA, NA)))
  expect_equal(mklearn:::default_C_grid(c(NA, NA)), 10^seq(3, -2, by = -0.25))
  expect_false(mklearn:::screen_auto(x, c(NA, NA), list(), NULL))
  expect_false(mklearn:::screen_auto(x, y, list(), NULL))
  expect_true(mklearn:::screen_auto(x, y > 0, list(), NULL))
  # a formula gets the grid of its response
  d <- data.frame(y = y, x)
  expect_equal(cv.mkl(y ~ ., data = d, kernels = kernel_set(rbf_kernel(1)), nfolds = 3)$C, cv$C)
})

test_that("cv.mkl's formula method drops the weights of rows with missing values, refuses subset", {
  set.seed(11)
  d <- data.frame(a = rnorm(60), b = rnorm(60))
  d$y <- factor(ifelse(d$a + d$b + rnorm(60, sd = 0.5) > 0, "p", "n"))
  w <- rep(c(1, 2), 30)
  dn <- d
  dn$a[c(3, 10)] <- NA
  ks <- kernel_set(rbf_kernel(1), linear_kernel())
  foldid <- rep(1:3, 20)[-c(3, 10)]
  cv1 <- suppressMessages(cv.mkl(y ~ a + b, data = dn, kernels = ks, method = "uniform",
                                 C = c(1, 0.1), weights = w, foldid = foldid))
  cv2 <- cv.mkl(y ~ a + b, data = d[-c(3, 10), ], kernels = ks, method = "uniform",
                C = c(1, 0.1), weights = w[-c(3, 10)], foldid = foldid)
  expect_equal(cv1$cvm, cv2$cvm)
  expect_error(cv.mkl(y ~ a + b, data = d, kernels = ks, method = "uniform", subset = 1:40),
               "formula method of cv.mkl takes no 'subset'")
})

test_that("cv.mkl calibrates the path on all the data with its own folds' decision values", {
  x <- as.matrix(iris[, 1:4])
  y <- iris$Species
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(1))
  C <- c(10, 1)
  set.seed(7)
  foldid <- sample(rep(1:3, length.out = 150))
  train <- mkl_control(platt = "train")
  for (mc in c("ovr", "ovo")) {
    cv <- cv.mkl(x, y, kernels = ks, C = C, foldid = foldid, multiclass = mc, screen = NULL)
    # the held-out decision values of the same folds, refitted here by mkl() itself
    dv <- lapply(C, function(c) matrix(NA_real_, 150, 3))   # three problems either way
    for (k in 1:3) {
      fk <- mkl(x[foldid != k, ], y[foldid != k], kernels = ks, C = C, multiclass = mc,
                control = train)
      for (j in 1:2) dv[[j]][foldid == k, ] <- predict(fk$fits[[j]], x[foldid == k, ],
                                                       type = "link")
    }
    for (j in 1:2) for (b in 1:3) {
      f <- cv$fit$fits[[j]]$fits[[b]]
      rows <- if (is.null(f$rows)) 1:150 else f$rows
      expect_identical(f$platt_method, "cv")
      expect_equal(f$platt, mklearn:::platt_fit(dv[[j]][rows, b], f$y, "hinge"),
                   tolerance = 1e-6, label = paste(mc, j, b))
    }
  }
  # binary, with case weights; platt = "train" is kept as asked
  d <- two_class(60, 3, seed = 9)
  w <- rep(1:2, 30)
  fid <- rep(1:3, 20)
  cvb <- cv.mkl(d$x, d$y, kernels = ks, C = C, foldid = fid, weights = w)
  dvb <- numeric(60)
  for (k in 1:3) {
    fk <- mkl(d$x[fid != k, ], d$y[fid != k], kernels = ks, C = C, weights = w[fid != k],
              control = train)
    dvb[fid == k] <- predict(fk$fits[[2]], d$x[fid == k, ], type = "link")
  }
  expect_equal(cvb$fit$fits[[2]]$platt, mklearn:::platt_fit(dvb, d$y, "hinge", w),
               tolerance = 1e-6)
  cvt <- cv.mkl(d$x, d$y, kernels = ks, C = C, foldid = fid, control = train)
  expect_identical(cvt$fit$fits[[1]]$platt_method, "train")
})

test_that("each fold's first fit starts from the weights of the path on all the data", {
  x <- as.matrix(iris[, 1:4])
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(1:2))
  C <- c(10, 1)
  foldid <- rep(1:3, 50)
  rec <- new.env()
  rec$starts <- list()
  suppressMessages(trace("fold_warm_state", exit = bquote(assign(
    "starts", c(.(rec)$starts, list(returnValue())), envir = .(rec))), print = FALSE,
    where = asNamespace("mklearn")))
  on.exit(suppressMessages(untrace("fold_warm_state", where = asNamespace("mklearn"))))
  cv <- cv.mkl(x, iris$Species, kernels = ks, method = "hessian", C = C, foldid = foldid,
               screen = NULL)
  starts <- Filter(Negate(is.null), rec$starts)
  expect_length(starts, 9L)                    # three folds, three problems
  full <- lapply(cv$fit$fits[[1]]$fits, function(f) mklearn:::restore_state(f)$weights)
  expect_equal(lapply(starts[1:3], `[[`, "weights"), unname(full))
  # the same held-out losses as cold-started folds, fitted here by mkl() itself
  err <- sapply(1:3, function(k) {
    f <- mkl(x[foldid != k, ], iris$Species[foldid != k], kernels = ks, method = "hessian",
             C = C, control = mkl_control(platt = "train"))
    sapply(f$fits, function(fj) mean(predict(fj, x[foldid == k, ]) != iris$Species[foldid == k]))
  })
  expect_equal(cv$cvm, rowMeans(err))
  # binary: one start per fold; SpicyMKL's state is per row: no start
  d <- two_class(60, 3, seed = 4)
  rec$starts <- list()
  cvb <- cv.mkl(d$x, d$y, kernels = ks, method = "simple", C = C, foldid = rep(1:3, 20),
                screen = NULL)
  expect_length(Filter(Negate(is.null), rec$starts), 3L)
  rec$starts <- list()
  cvs <- cv.mkl(d$x, d$y, kernels = ks, method = "spicy", C = C, foldid = rep(1:3, 20),
                screen = NULL)
  expect_length(Filter(Negate(is.null), rec$starts), 0L)
})

test_that("a fold whose screening left other kernels starts from the weights of those it kept", {
  st <- list(a = list(weights = c(0.5, 0.25, 0.25), labels = c("k1", "k2", "k3")))
  start <- function(labels) mklearn:::with_fold_warm(st, mklearn:::fold_warm_state("a", labels))
  expect_identical(start(c("k1", "k2", "k3"))$weights, c(0.5, 0.25, 0.25))
  expect_equal(start(c("k2", "k3"))$weights, c(0.5, 0.5))
  expect_equal(start(c("k3", "k4"))$weights, c(1, 0))
  expect_null(start("k4"))                       # none of the weighted kernels: a cold start
})

test_that("fold fits skip the degenerate check and, unless asked, the sigmoid; nothing else", {
  d <- two_class(60, 3, seed = 24)
  y <- ifelse(seq_len(60) <= 15, 1, -1)           # labels unrelated to x
  ks <- kernel_set(rbf_kernel(c(0.5, 2)))
  ctl <- mkl_control(platt = "train")
  full <- suppressWarnings(mkl(d$x, y, kernels = ks, method = "hessian", C = c(1, 0.1),
                               control = ctl))
  expect_false(is.null(full$fits[[2]]$degenerate))
  bare <- suppressWarnings(mklearn:::with_fold_fit(FALSE, mkl(d$x, y, kernels = ks,
    method = "hessian", C = c(1, 0.1), control = ctl)))
  sig <- suppressWarnings(mklearn:::with_fold_fit(TRUE, mkl(d$x, y, kernels = ks,
    method = "hessian", C = c(1, 0.1), control = ctl)))
  for (j in 1:2) {
    expect_null(bare$fits[[j]]$degenerate)
    expect_null(bare$fits[[j]]$platt)
    expect_identical(sig$fits[[j]]$platt, full$fits[[j]]$platt)
    for (el in c("alpha", "b", "weights", "fitted"))
      expect_identical(bare$fits[[j]][[el]], full$fits[[j]][[el]])
    expect_identical(predict(bare$fits[[j]], d$x[1:7, ], type = "link"),
                     predict(full$fits[[j]], d$x[1:7, ], type = "link"))
  }
  # the switch is off again outside
  expect_true(mklearn:::.fold_fit$check && mklearn:::.fold_fit$sigmoid)
  again <- suppressWarnings(mkl(d$x, y, kernels = ks, method = "hessian", C = 0.1,
                                control = ctl))
  expect_false(is.null(again$degenerate))
  # cv.mkl: degeneracy is judged on the path on all the data only
  cv <- suppressMessages(suppressWarnings(cv.mkl(d$x, y, kernels = ks, method = "hessian",
                                                 C = c(1, 0.1), foldid = rep(1:3, 20))))
  expect_null(cv$degenerate)
  expect_true(cv$path_flags[2, "degenerate"])
})
