# Case weights (mkl(weights = , class.weights = )): a per-point box C w_i in the SMO of the
# SVM family and uniform, weighted ridge for uniform regression, weighted losses in SpicyMKL.
# Certificates: integer weights equal repeated rows, weight 0 equals a dropped row, e1071's
# class weights on one kernel.

wt_data <- function(n = 30, seed = 1) {
  d <- two_class(n = n, p = 3, seed = seed)
  d$r <- d$x[, 1] + sin(d$x[, 2]) + 0.1 * rnorm(n)
  d$K <- gram(kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(1:2)), d$x)
  d
}
wt_fit <- function(...) suppressWarnings(mkl(...))
rel <- function(a, b) max(abs(a - b)) / max(1, abs(a), abs(b))
box_methods <- c("uniform", "simple", "hessian", "lp")

test_that("the SMO with a box per point reaches quadprog's optimum; weighted ridge its system", {
  skip_if_not_installed("quadprog")
  d <- wt_data(n = 40, seed = 11)
  K <- d$K[, , 1] * 40
  set.seed(3)
  box <- 2 * runif(40)^2
  box[c(3, 7)] <- 0
  s <- .Call(mklearn:::C_smo, K, d$y, box, numeric(40), 1e-10, 1e7L)
  Q <- K * outer(d$y, d$y)
  qp <- quadprog::solve.QP(Q + diag(1e-10 * mean(diag(Q)), 40), rep(1, 40),
                           cbind(d$y, diag(40), -diag(40)), c(0, rep(0, 40), -box), meq = 1)
  a <- pmin(pmax(qp$solution, 0), box)
  J <- sum(a) - 0.5 * drop(crossprod(a, Q %*% a))
  expect_true(all(s$alpha >= 0 & s$alpha <= box))
  expect_lt(abs(sum(s$alpha * d$y)), 1e-10)
  expect_lt(abs(s$objective - J) / J, 1e-6)
  expect_identical(svm_smo(K, d$y, C = box, tol = 1e-10), s)
  expect_error(svm_smo(K, d$y, C = c(-1, box[-1])),
               "a box per point 'C' must be finite, non-negative and not all zero")
  # the same box everywhere is the scalar C, bit for bit
  expect_identical(.Call(mklearn:::C_smo, K, d$y, rep(0.7, 40), numeric(40), 1e-6, 1e7L),
                   .Call(mklearn:::C_smo, K, d$y, 0.7, numeric(40), 1e-6, 1e7L))
  # weighted kernel ridge: (K + W^-1 / C) beta = y - b, sum(beta) = 0, solved in R
  w <- runif(40) + 0.5
  r <- .Call(mklearn:::C_kridge, K, d$r, (1 / 3) / w)
  A <- rbind(cbind(K + diag(1 / (3 * w)), 1), c(rep(1, 40), 0))
  ref <- solve(A, c(d$r, 0))
  expect_equal(c(r$beta, r$b), ref, tolerance = 1e-8)
})

test_that("integer case weights equal repeated rows, on every method that takes them", {
  d <- wt_data()
  w <- rep(c(3, 0, 1, 2), c(5, 3, 15, 7))
  idx <- rep(seq_along(w), w)
  first <- match(which(w > 0), idx)
  for (m in box_methods) {
    fw <- wt_fit(NULL, d$y, kernels = d$K, method = m, weights = w)
    fd <- wt_fit(NULL, d$y[idx], kernels = d$K[idx, idx, ], method = m)
    expect_lt(rel(fw$objective, fd$objective), 1e-6)
    expect_lt(rel(fw$weights, fd$weights), 1e-4)
    expect_lt(rel(fitted(fw)[w > 0], fitted(fd)[first]), 1e-3)
    expect_identical(fw$case_weights, w)
  }
  fw <- wt_fit(NULL, d$r, kernels = d$K, method = "uniform", weights = w)
  fd <- wt_fit(NULL, d$r[idx], kernels = d$K[idx, idx, ], method = "uniform")
  expect_lt(rel(fw$objective, fd$objective), 1e-10)
  expect_lt(rel(fitted(fw)[w > 0], fitted(fd)[first]), 1e-10)
})

test_that("SpicyMKL's weighted losses equal repeated rows, for every loss, with a valid gap", {
  d <- wt_data(seed = 8)
  w <- rep(c(3, 0, 1, 2), c(5, 3, 15, 7))
  idx <- rep(seq_along(w), w)
  first <- match(which(w > 0), idx)
  ctl <- mkl_control(tol = 1e-6)
  for (loss in c("hinge", "logistic", "squared", "epsilon")) {
    yy <- if (loss %in% c("hinge", "logistic")) d$y else d$r
    fw <- wt_fit(NULL, yy, kernels = d$K, method = "spicy", loss = loss, weights = w,
                 control = ctl)
    fd <- wt_fit(NULL, yy[idx], kernels = d$K[idx, idx, ], method = "spicy", loss = loss,
                 control = ctl)
    expect_true(fw$converged, label = loss)
    expect_gte(fw$info$gap, 0)
    expect_lt(rel(fw$objective, fd$objective), 1e-5)
    expect_lt(rel(fw$weights, fd$weights), 1e-5)
    expect_lt(rel(fitted(fw)[w > 0], fitted(fd)[first]), 1e-5)
    expect_true(all(fw$alpha[w == 0, ] == 0), label = loss)
  }
  # the elastic net and a warm-started path keep the rows of weight 0 out
  p <- wt_fit(NULL, d$y, kernels = d$K, method = "spicy", penalty = "elasticnet",
              lambda = 0.3, C = c(3, 1), weights = w, control = ctl)
  q <- wt_fit(NULL, d$y[idx], kernels = d$K[idx, idx, ], method = "spicy",
              penalty = "elasticnet", lambda = 0.3, C = c(3, 1), control = ctl)
  expect_lt(rel(fitted(p$fits[[2]])[w > 0], fitted(q$fits[[2]])[first]), 1e-5)
  # the CG solve with the model direction (the box phase is off with weights)
  d2 <- two_class(n = 60, p = 3, seed = 9)
  K2 <- gram(kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(2)), d2$x)
  w2 <- rep(c(2, 1), 30)
  i2 <- rep(1:60, w2)
  cg <- mkl_control(tol = 1e-5, tuning = spicy_tuning(cg = TRUE, cg_threshold = 2L))
  fw <- wt_fit(NULL, d2$y, kernels = K2, method = "spicy", weights = w2, control = cg)
  fd <- wt_fit(NULL, d2$y[i2], kernels = K2[i2, i2, ], method = "spicy", control = cg)
  expect_lt(rel(fw$objective, fd$objective), 1e-4)
  expect_lt(rel(fitted(fw), fitted(fd)[match(1:60, i2)]), 1e-3)
})

test_that("weight 0 equals dropping the row; no weights store NULL", {
  d <- wt_data(seed = 2)
  w <- rep(1, 30)
  w[c(2, 9, 17)] <- 0
  keep <- w > 0
  for (m in box_methods) {
    fw <- wt_fit(NULL, d$y, kernels = d$K, method = m, weights = w)
    fd <- wt_fit(NULL, d$y[keep], kernels = d$K[keep, keep, ], method = m)
    expect_lt(rel(fw$objective, fd$objective), 1e-6)
    expect_lt(rel(fitted(fw)[keep], fitted(fd)), 1e-3)
    # a point of weight 0 has no coefficient
    expect_true(all(fw$alpha[!keep, ] == 0))
  }
  fr <- wt_fit(NULL, d$r, kernels = d$K, method = "uniform", weights = w)
  fd <- wt_fit(NULL, d$r[keep], kernels = d$K[keep, keep, ], method = "uniform")
  expect_lt(rel(fitted(fr)[keep], fitted(fd)), 1e-10)
  expect_null(wt_fit(NULL, d$y, kernels = d$K, method = "uniform")$case_weights)
})

test_that("class weights equal repeated rows of the class and compose with weights", {
  d <- wt_data(seed = 3)
  yf <- factor(ifelse(d$y > 0, "up", "down"), levels = c("down", "up"))
  w <- rep(c(1, 2), 15)
  for (m in c("uniform", "simple")) {
    fc <- wt_fit(NULL, yf, kernels = d$K, method = m, class.weights = c(up = 3),
                 weights = w)
    expect_identical(fc$case_weights, w * ifelse(yf == "up", 3, 1))
    expect_identical(fc$class_weights, c(up = 3))
    idx <- rep(1:30, fc$case_weights)
    fd <- wt_fit(NULL, yf[idx], kernels = d$K[idx, idx, ], method = m)
    expect_lt(rel(fc$objective, fd$objective), 1e-6)
    expect_lt(rel(fitted(fc), fitted(fd)[match(1:30, idx)]), 1e-3)
  }
  # numeric labels are named as they print
  f1 <- wt_fit(NULL, d$y, kernels = d$K, class.weights = c("-1" = 2))
  expect_identical(f1$case_weights, ifelse(d$y > 0, 1, 2))
})

test_that("uniform with class weights agrees with e1071::svm(class.weights = ) on one kernel", {
  skip_if_not_installed("e1071")
  d <- two_class(n = 60, p = 2, seed = 4)
  yf <- factor(ifelse(d$y > 0, "b", "a"))
  g <- 0.5
  K <- exp(-g * as.matrix(stats::dist(d$x))^2)
  cw <- c(a = 1, b = 3)
  f <- wt_fit(NULL, yf, kernels = array(K, c(60, 60, 1)), method = "uniform", C = 2,
              class.weights = cw, control = mkl_control(svm_tol = 1e-8))
  s <- e1071::svm(d$x, yf, kernel = "radial", gamma = g, cost = 2, scale = FALSE,
                  class.weights = cw, tolerance = 1e-8)
  dv <- drop(attr(predict(s, d$x, decision.values = TRUE), "decision.values"))
  # e1071's decision value is positive for its first level
  sgn <- if (colnames(attr(predict(s, d$x, decision.values = TRUE),
                           "decision.values")) == "a/b") -1 else 1
  expect_lt(max(abs(fitted(f) - sgn * dv)), 1e-5)
  # without the class weights the fits differ: the check can fail
  f0 <- wt_fit(NULL, yf, kernels = array(K, c(60, 60, 1)), method = "uniform", C = 2,
               control = mkl_control(svm_tol = 1e-8))
  expect_gt(max(abs(fitted(f0) - sgn * dv)), 1e-2)
})

test_that("dense and fly stores agree with case weights; multiclass subsets them", {
  d <- two_class(n = 40, p = 3, seed = 5)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(2))
  w <- rep(c(0.5, 2, 1, 0), each = 10)
  for (m in c("uniform", "simple", "spicy")) {
    fd <- wt_fit(d$x, d$y, kernels = ks, method = m, weights = w,
                 control = mkl_control(store = "dense"))
    ff <- wt_fit(d$x, d$y, kernels = ks, method = m, weights = w,
                 control = mkl_control(store = "fly"))
    expect_equal(ff$kscale, fd$kscale, tolerance = 1e-12)
    expect_lt(rel(ff$objective, fd$objective), 1e-6)
    expect_lt(rel(fitted(ff), fitted(fd)), 1e-4)
  }
  # one-vs-one: each pair's problem gets its rows' weights (weight 2 = the rows repeated)
  y3 <- factor(c("a", "b", "c")[1 + (d$x[, 1] > 0) + (d$x[, 2] > 0.5)])
  K <- gram(ks, d$x)
  w3 <- rep(c(2, 1), 20)
  idx <- rep(1:40, w3)
  for (scheme in c("ovo", "ovr")) {
    fw <- wt_fit(NULL, y3, kernels = K, method = "uniform", weights = w3, multiclass = scheme)
    fr <- wt_fit(NULL, y3[idx], kernels = K[idx, idx, ], method = "uniform",
                 multiclass = scheme)
    expect_identical(fw$case_weights, w3)
    expect_lt(rel(fw$fitted, fr$fitted[match(1:40, idx), ]), 1e-3)
  }
  # class weights of a multiclass response: rows of class 'b' counted twice
  fc <- wt_fit(NULL, y3, kernels = K, method = "simple", class.weights = c(b = 2))
  ib <- rep(1:40, ifelse(y3 == "b", 2, 1))
  fb <- wt_fit(NULL, y3[ib], kernels = K[ib, ib, ], method = "simple")
  expect_lt(rel(fc$fitted, fb$fitted[match(1:40, ib), ]), 1e-3)
})

test_that("cv.mkl fits the folds with their weights and weights the held-out measure", {
  d <- wt_data(n = 24, seed = 6)
  w <- rep(c(2, 1), 12)
  idx <- rep(1:24, w)
  foldid <- rep(1:3, 8)
  cw <- suppressMessages(suppressWarnings(cv.mkl(NULL, d$r, kernels = d$K, C = c(10, 1),
                                                 foldid = foldid, weights = w)))
  cd <- suppressMessages(suppressWarnings(cv.mkl(NULL, d$r[idx], kernels = d$K[idx, idx, ],
                                                 C = c(10, 1), foldid = foldid[idx])))
  expect_equal(cw$cvm, cd$cvm, tolerance = 1e-8)
  cu <- suppressMessages(suppressWarnings(cv.mkl(NULL, d$r, kernels = d$K, C = c(10, 1),
                                                 foldid = foldid)))
  expect_false(isTRUE(all.equal(cu$cvm, cw$cvm)))
  expect_identical(cw$fit$fits[[1]]$case_weights, w)
})

test_that("case weights are refused with a reason, and checked", {
  d <- wt_data(n = 20, seed = 7)
  expect_error(wt_fit(NULL, d$y, kernels = d$K, method = "bayes", weights = rep(1, 20)),
               "method 'bayes' does not take case weights .*marginal likelihood")
  expect_error(wt_fit(NULL, d$y, kernels = d$K, method = "l01", class.weights = c("1" = 2)),
               "method 'l01' does not take case weights .*ADMM")
  expect_error(wt_fit(NULL, d$y, kernels = d$K, method = "mwu", weights = rep(1, 20)),
               "method 'mwu' does not take case weights .*multiplicative weights")
  expect_error(wt_fit(NULL, d$y, kernels = d$K, weights = rep(1, 19)),
               "'weights' has 19 values for 20 observations")
  expect_error(wt_fit(NULL, d$y, kernels = d$K, weights = c(-1, rep(1, 19))),
               "'weights' must be finite and non-negative")
  expect_error(wt_fit(NULL, d$y, kernels = d$K, weights = c(NA, rep(1, 19))),
               "'weights' contains missing values")
  expect_error(wt_fit(NULL, d$y, kernels = d$K, weights = "a"),
               "'weights' must be a numeric vector")
  expect_error(wt_fit(NULL, d$y, kernels = d$K, weights = rep(0, 20)),
               "the case weights are all zero")
  expect_error(wt_fit(NULL, d$y, kernels = d$K, weights = ifelse(d$y > 0, 0, 1)),
               "the case weights of class\\(es\\) '1' are all zero")
  expect_error(wt_fit(NULL, d$y, kernels = d$K, class.weights = c(up = 2)),
               "'class.weights' names class\\(es\\) 'up'; the classes are '-1', '1'")
  expect_error(wt_fit(NULL, d$y, kernels = d$K, class.weights = 2),
               "'class.weights' must be a numeric vector named by class label")
  expect_error(wt_fit(NULL, d$y, kernels = d$K, class.weights = c("1" = Inf)),
               "'class.weights' must be finite and non-negative")
  expect_error(wt_fit(NULL, d$r, kernels = d$K, class.weights = c("1" = 2)),
               "'class.weights' is for classification")
  expect_error(suppressWarnings(cv.mkl(NULL, d$y, kernels = d$K, C = c(2, 1), nfolds = 2,
                                       weights = rep(1, 19))),
               "'weights' has 19 values for 20 observations")
})
