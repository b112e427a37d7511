test_that("print, summary, coef, fitted and plot work on a fit", {
  d <- two_class(60, 3, seed = 17)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(1:2), features = c("all", "each"))
  fit <- mkl(d$x, d$y, kernels = ks, C = old_C(2, 60))
  expect_output(print(fit), "Kernels selected: 16 of 16")
  expect_output(print(fit), "Top kernel weights")
  s <- summary(fit)
  expect_s3_class(s, "summary.mkl")
  expect_equal(s$train[["error"]], mean(sign(fitted(fit)) != d$y))
  expect_output(print(s), "Training error")
  w <- coef(fit)
  expect_named(w, dimnames(gram(ks, d$x))[[3]])
  expect_equal(sum(w), 1)
  expect_equal(dim(coef(fit, type = "alpha")), c(60L, 16L))
  expect_equal(coef(fit, type = "bias"), fit$b)
  pdf(NULL)
  on.exit(dev.off())
  expect_invisible(plot(fit))
  expect_message(plot(fit, type = "history"), "no iteration history")
})

test_that("predict types: class, link and response are consistent", {
  d <- two_class(80, 3, seed = 18)
  fit <- mkl(d$x[1:60, ], factor(d$y[1:60], labels = c("neg", "pos")),
             kernels = kernel_set(rbf_kernel(1)), C = old_C(5, 60))
  z <- d$x[61:80, ]
  f <- predict(fit, z, type = "link")
  cl <- predict(fit, z)
  pr <- predict(fit, z, type = "response")
  expect_identical(as.character(cl), ifelse(f > 0, "pos", "neg"))
  expect_true(all(pr > 0 & pr < 1))
  expect_equal(order(pr), order(f))            # monotone in the decision value
  expect_identical(predict(fit, type = "link"), fitted(fit))
  # the training points as new data differ only by the diagonal jitter (1e-8)
  expect_equal(unname(predict(fit, d$x[1:60, ], type = "link")), unname(fitted(fit)),
               tolerance = 1e-6)
  reg <- mkl(d$x, d$x[, 1] + d$x[, 2]^2, kernels = kernel_set(rbf_kernel(1)), C = old_C(1, 80))
  expect_equal(predict(reg, z, type = "response"), predict(reg, z, type = "link"))
  expect_error(predict(reg, z, type = "class"), "classification fits")
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

test_that("predict() on a formula fit names the variables missing from the new data", {
  d <- two_class(40, 3, seed = 33)
  df <- data.frame(d$x, cls = factor(ifelse(d$y > 0, "yes", "no")))
  ff <- mkl(cls ~ ., data = df, kernels = kernel_set(rbf_kernel(1)))
  expect_error(predict(ff, df[, c("v2", "cls")]),
               "the new data lack variable\\(s\\) of the model formula: v1, v3")
  expect_error(predict(ff, newdata = df[, -2]), "formula: v2$")
  # the response is not needed
  expect_length(predict(ff, df[1:5, c("v1", "v2", "v3")]), 5L)
})

test_that("summary() of a path: one row per C, with a print method", {
  d <- two_class(50, 3, seed = 34)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), features = c("all", "each"))
  path <- mkl(d$x, d$y, kernels = ks, C = c(10, 1, 0.1))
  s <- summary(path)
  expect_s3_class(s, "summary.mkl_path")
  tab <- s$table
  expect_named(tab, c("C", "kernels", "converged", "iterations", "gap", "objective", "error"))
  expect_identical(tab$C, path$C)
  for (j in 1:3) {
    f <- path$fits[[j]]
    expect_identical(tab$kernels[j], sum(f$weights > 0))
    expect_identical(tab$converged[j], f$converged)
    expect_identical(tab$iterations[j], f$iterations)
    expect_equal(tab$objective[j], as.double(f$objective))
    expect_equal(tab$gap[j], as.double(utils::tail(f$history$gap, 1L)))
    expect_equal(tab$error[j], summary(f)$train[["error"]])
  }
  expect_output(print(s), "Path of 3 'uniform' fits")
  expect_output(print(s), "Training error per C")
  reg <- mkl(d$x, d$x[, 1]^2, kernels = ks, C = c(10, 1))
  sr <- summary(reg)
  expect_true("rmse" %in% names(sr$table))
  expect_equal(sr$table$rmse[2], summary(reg$fits[[2]])$train[["rmse"]])
  expect_output(print(sr), "Training RMSE per C")
  sn <- suppressWarnings(summary(mkl(d$x, d$y, kernels = ks, C = c(10, 1),
                                     control = mkl_control(svm_maxiter = 3))))
  expect_output(print(sn), "2 of 2 fits did NOT converge")
})

test_that("newkernels are matched to the training kernels by name; a mismatch is refused", {
  d <- two_class(60, 3, seed = 46)
  K <- gram(kernel_set(rbf_kernel(c(0.3, 1)), poly_kernel(2)), d$x)
  dimnames(K)[[3]] <- c("k1", "k2", "k3")
  fit <- suppressWarnings(mkl(y = d$y, kernels = K, method = "spicy", C = 10))
  expect_gt(diff(range(fit$weights)), 0.01)     # unequal weights: the order matters
  ref <- predict(fit, newkernels = K, type = "link")
  expect_equal(predict(fit, newkernels = K[, , 3:1], type = "link"), ref)
  Kl <- lapply(c(k3 = 3, k1 = 1, k2 = 2), function(m) K[, , m])
  expect_equal(predict(fit, newkernels = Kl, type = "link"), ref)
  Kb <- K
  dimnames(Kb)[[3]] <- c("k1", "k2", "k4")
  expect_error(predict(fit, newkernels = Kb), "missing: k3; not in the fit: k4")
  dimnames(Kb)[[3]] <- c("k1", "k2", "k2")
  expect_error(predict(fit, newkernels = Kb), "missing: k3; duplicated: k2")
  expect_error(predict(fit, newkernels = K[, , 1:2]), "missing: k3")
  # unnamed test kernels are taken in order
  expect_equal(predict(fit, newkernels = unname(K), type = "link"), ref, ignore_attr = TRUE)
  Kd <- K
  dimnames(Kd)[[3]] <- c("k1", "k1", "k3")
  expect_error(mkl(y = d$y, kernels = Kd), "duplicated names: k1")
})

test_that("predict() on zero rows gives a zero-length answer; a vector row gets a hint", {
  d <- two_class(50, 3, seed = 47)
  fit <- mkl(d$x, factor(d$y, labels = c("neg", "pos")),
             kernels = kernel_set(rbf_kernel(c(0.5, 2))))
  cl <- predict(fit, d$x[0, , drop = FALSE])
  expect_s3_class(cl, "factor")
  expect_length(cl, 0L)
  expect_identical(levels(cl), c("neg", "pos"))
  expect_identical(predict(fit, d$x[0, , drop = FALSE], type = "link"), numeric(0))
  expect_length(predict(fit, as.data.frame(d$x)[0, ], type = "response"), 0L)
  expect_error(predict(fit, unname(d$x[0, 1:2, drop = FALSE])), "has 2 column")
  K <- gram(kernel_set(rbf_kernel(1)), d$x)
  fk <- mkl(y = d$y, kernels = K)
  expect_length(predict(fk, newkernels = K[0, , , drop = FALSE]), 0L)
  expect_error(predict(fit, d$x[1, ]), "vector \\(length 3\\).*x\\[i, , drop = FALSE\\]")
  expect_identical(length(predict(fit, d$x[1, , drop = FALSE])), 1L)
})

test_that("new data with a duplicated column name of the model are refused", {
  d <- two_class(40, 3, seed = 48)
  fit <- mkl(d$x, d$y, kernels = kernel_set(rbf_kernel(1)))
  z <- cbind(d$x, v1 = 0)
  expect_error(predict(fit, z), "several columns named v1")
  # some training columns without a name: matched by position, the named ones must agree
  x <- d$x
  colnames(x) <- c("a", "", "c")
  f2 <- mkl(x, d$y, kernels = kernel_set(rbf_kernel(1)))
  z <- x
  colnames(z) <- c("c", "", "a")
  expect_error(predict(f2, z), "matched by position.*column\\(s\\) 1, 3 \\(c, a\\)")
  expect_equal(predict(f2, unname(x), type = "link"), fitted(f2), tolerance = 1e-6,
               ignore_attr = TRUE)
})

test_that("match.arg errors of the methods name the argument", {
  d <- two_class(40, 3, seed = 49)
  fit <- mkl(d$x, d$y, kernels = kernel_set(rbf_kernel(1)))
  expect_error(predict(fit, d$x, type = "probability"),
               "'type' should be one of.*got \"probability\"")
  expect_error(coef(fit, type = "beta"), "'type' should be one of")
  expect_error(plot(fit, type = "pie"), "'type' should be one of")
})

test_that("missing values in the new data of a formula fit are named like those of a matrix", {
  d <- two_class(40, 3, seed = 53)
  df <- data.frame(d$x, cls = factor(d$y))
  fit <- mkl(cls ~ ., data = df, kernels = kernel_set(rbf_kernel(1)))
  df$v2[2] <- NA
  expect_error(predict(fit, df[1:3, ], na.action = na.fail), "'newx' contains missing values")
  expect_identical(dim(gram(kernel_set(rbf_kernel(1)), d$x, d$x[0, , drop = FALSE])),
                   c(0L, 40L, 1L))
  expect_identical(formula(fit), cls ~ v1 + v2 + v3, ignore_attr = TRUE)
})

test_that("summary() counts support vectors, not the never-zero iterates of SpicyMKL", {
  io <- ionosphere_xy()
  set.seed(1)
  i <- sample(nrow(io$x), 250)
  ks <- kernel_set(rbf_kernel(c(0.5, 1, 2, 5)), poly_kernel(1:2), features = c("all", "each"))
  f <- mkl(io$x[i, ], io$y[i], kernels = ks, method = "spicy", C = 10)
  expect_identical(length(mklearn:::alpha_rows_nonzero(f$alpha)), 250L)  # never exactly zero
  s <- summary(f)
  ref <- summary(mkl(io$x[i, ], io$y[i], kernels = ks, method = "spicy", C = 10,
                     control = mkl_control(tol = 1e-4, maxiter = 5000)))
  expect_lt(s$n_sv, 225L)
  expect_lte(abs(s$n_sv - ref$n_sv), 0.05 * ref$n_sv)
  expect_output(print(s), "Support vectors \\(sample coefficient above 0.001 of the largest")
  # the SVM family's SMO coefficients are exact zeros off the support vectors: the same count
  h <- mkl(io$x[i, ], io$y[i], kernels = ks, method = "hessian", C = 10)
  expect_identical(summary(h)$n_sv, length(mklearn:::alpha_rows_nonzero(h$alpha)))
  # other losses count the non-zero coefficients, and say so
  g <- mkl(io$x[i, ], io$y[i], kernels = ks, method = "spicy", loss = "logistic", C = 10)
  expect_match(summary(g)$sv_rule, "non-zero sample coefficients")
})

test_that("print, coef, summary and plot count the same selected kernels", {
  d <- two_class(50, 3, seed = 44)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(1:2), features = c("all", "each"))
  f <- mkl(d$x, d$y, kernels = ks, method = "spicy")
  k <- length(mklearn:::active_kernels(f))
  expect_lt(k, f$M)
  expect_length(coef(f, nonzero = TRUE), k)
  expect_identical(sum(coef(f) > 0), k)
  expect_identical(nrow(summary(f)$kernels), k)
  expect_output(print(f), sprintf("Kernels selected: %d of %d", k, f$M))
  rec <- new.env()
  suppressMessages(trace("barplot.default", bquote(assign("main", main, envir = .(rec))),
                         print = FALSE, where = asNamespace("graphics")))
  on.exit(suppressMessages(untrace("barplot.default", where = asNamespace("graphics"))))
  pdf(NULL)
  plot(f)
  dev.off()
  expect_match(rec$main, sprintf("%d of %d kernels selected", k, f$M), fixed = TRUE)
})

test_that("residuals() and deviance() of a regression are y - f(x) and its sum of squares", {
  ks <- kernel_set(rbf_kernel(c(1, 3)))
  fit <- mkl(mpg ~ ., data = mtcars, kernels = ks)
  r <- mtcars$mpg - fitted(fit)
  for (type in c("deviance", "response", "working"))
    expect_equal(residuals(fit, type = type), unname(r), label = type)
  expect_equal(residuals(fit), unname(r))
  expect_equal(deviance(fit), sum(r^2))
  expect_identical(nobs(fit), 32L)
  expect_error(residuals(fit, type = "hinge"), "'hinge' is for classification fits")
  sp <- mkl(mpg ~ ., data = mtcars, kernels = ks, method = "spicy", loss = "epsilon")
  expect_equal(deviance(sp), sum((mtcars$mpg - fitted(sp))^2))
})

test_that("classification residuals are those of the probabilities; hinge residuals the loss", {
  d <- two_class(60, 3, seed = 71)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(1))
  fit <- mkl(d$x, factor(d$y, labels = c("neg", "pos")), kernels = ks, method = "simple")
  p <- predict(fit, type = "response")
  y01 <- as.double(d$y > 0)
  expect_equal(residuals(fit, "response"), y01 - p)
  expect_equal(residuals(fit, "working"), (y01 - p) / (p * (1 - p)))
  py <- ifelse(d$y > 0, p, 1 - p)
  expect_equal(residuals(fit), sign(y01 - p) * sqrt(-2 * log(py)))
  expect_equal(deviance(fit), -2 * sum(log(py)))
  expect_equal(residuals(fit, "hinge"), pmax(0, 1 - d$y * fitted(fit)))
  expect_true(any(residuals(fit, "hinge") == 0) && any(residuals(fit, "hinge") > 1))
  lg <- mkl(d$x, d$y, kernels = ks, method = "spicy", loss = "logistic")
  expect_equal(residuals(lg, "response"), y01 - plogis(fitted(lg)))
  expect_error(residuals(lg, "hinge"),
               "'hinge' is for hinge-loss fits; this fit's loss is 'logistic'")
  expect_error(residuals(fit, "pearson"), "'type' should be one of")
})

test_that("multiclass residuals and deviance come from the class probabilities", {
  ks <- kernel_set(rbf_kernel(c(0.5, 2)))
  fit <- mkl(Species ~ ., data = iris, kernels = ks, multiclass = "ovo")
  P <- predict(fit, type = "prob")
  Y <- outer(as.character(iris$Species), levels(iris$Species), "==") * 1
  expect_equal(unname(residuals(fit, "response")), unname(Y - P))
  py <- P[cbind(seq_len(150), as.integer(iris$Species))]
  expect_equal(residuals(fit), sqrt(-2 * log(py)))
  expect_equal(deviance(fit), -2 * sum(log(py)))
  expect_identical(nobs(fit), 150L)
  expect_error(residuals(fit, "working"), "belong to the binary problems.*fit\\$fits\\[\\[k\\]\\]")
  expect_error(logLik(fit), "no likelihood for a multiclass fit")
})

test_that("weights() are case weights (none: NULL); kernel_weights() the kernel weights", {
  d <- two_class(50, 3, seed = 72)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(1:2))
  fit <- mkl(d$x, d$y, kernels = ks, method = "spicy")
  expect_null(weights(fit))
  expect_identical(kernel_weights(fit), coef(fit))
  expect_identical(kernel_weights(fit, nonzero = TRUE), coef(fit, nonzero = TRUE))
  fit$case_weights <- rep(2, 50)
  expect_identical(weights(fit), rep(2, 50))
  path <- mkl(d$x, d$y, kernels = ks, C = c(10, 1))
  expect_null(weights(path))
  expect_identical(kernel_weights(path), coef(path))
  expect_identical(kernel_weights(path, s = 1), coef(path$fits[[2]]))
  fm <- mkl(Species ~ ., data = iris, kernels = ks)
  expect_null(weights(fm))
  expect_identical(kernel_weights(fm), fm$weights)
})

test_that("logLik() of Empirical Bayes is its log marginal likelihood; others refuse", {
  set.seed(3)
  n <- 40
  x <- matrix(rnorm(n * 3), n)
  y <- x[, 1] + sin(2 * x[, 2]) + 0.3 * rnorm(n)
  K <- gram(kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(1)), x)
  loglik_R <- function(fit, yc, d0 = 0) {     # log N(yc; 0, sigma2 I + d0 11' + sum d_m K_m)
    Kb <- diag(fit$info$sigma2, n) + d0 + combine_R(K, fit$info$d)
    -0.5 * sum(yc * solve(Kb, yc)) - 0.5 * c(determinant(Kb)$modulus) - n / 2 * log(2 * pi)
  }
  fb <- mkl(y = y, kernels = K, method = "bayes")
  ll <- logLik(fb)
  expect_s3_class(ll, "logLik")
  expect_equal(as.double(ll), loglik_R(fb, y - mean(y)), tolerance = 1e-10)
  expect_equal(as.double(ll), -fb$objective - n / 2 * log(2 * pi))
  # df: the positive kernel variances, the noise variance, the bias
  expect_identical(attr(ll, "df"), sum(fb$info$d > 0) + 2L)
  expect_lt(sum(fb$info$d > 0), 3L)                 # a pruned kernel does not count
  expect_identical(nobs(fb), 40L)
  expect_equal(AIC(fb), -2 * as.double(ll) + 2 * attr(ll, "df"))
  expect_equal(BIC(fb), -2 * as.double(ll) + log(n) * attr(ll, "df"))
  fs <- mkl(y = y, kernels = K, method = "bayes", control = mkl_control(sigma2 = 0.1))
  expect_identical(attr(logLik(fs), "df"), sum(fs$info$d > 0) + 1L)
  expect_equal(as.double(logLik(fs)), loglik_R(fs, y - mean(y)), tolerance = 1e-10)
  fk <- mkl(y = y, kernels = K, method = "bayes", control = mkl_control(bias = "kernel"))
  expect_equal(as.double(logLik(fk)), loglik_R(fk, y, fk$info$bias_variance), tolerance = 1e-10)
  yb <- ifelse(y > 0, 1, -1)
  fc <- mkl(y = factor(yb), kernels = K, method = "bayes")
  expect_equal(as.double(logLik(fc)), loglik_R(fc, yb - mean(yb)), tolerance = 1e-10)
  # a regression on a kernel set: the likelihood of y on its own scale
  fr <- mkl(x, y * 10, kernels = kernel_set(rbf_kernel(c(0.5, 2))), method = "bayes")
  fr1 <- mkl(x, y, kernels = kernel_set(rbf_kernel(c(0.5, 2))), method = "bayes")
  expect_equal(as.double(logLik(fr)), as.double(logLik(fr1)) - n * log(10), tolerance = 1e-6)
  fu <- mkl(y = y, kernels = K)
  expect_error(logLik(fu), "logLik\\(\\) needs a likelihood: method 'uniform' minimises")
  expect_error(AIC(fu), "only method = \"bayes\"")
  expect_error(logLik(mkl(y = y, kernels = K, C = c(10, 1))), "no likelihood for a path")
})

test_that("residuals, deviance and nobs answer for every method and task", {
  for (m in mkl_methods()) for (task in mklearn:::method_tasks(mklearn:::method_info(m))) {
    d <- two_class(40, 3, seed = 73)
    y <- if (task == "regression") d$x[, 1] + d$x[, 2]^2 else d$y
    fit <- suppressWarnings(mkl(d$x, y, method = m,
                                kernels = kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(1))))
    lab <- paste(m, task)
    for (type in c("deviance", "response", "working")) {
      r <- residuals(fit, type = type)
      expect_true(is.numeric(r) && length(r) == 40L && all(is.finite(r)), label = lab)
    }
    dv <- deviance(fit)
    expect_true(is.numeric(dv) && length(dv) == 1L && is.finite(dv) && dv >= 0, label = lab)
    expect_identical(nobs(fit), 40L, label = lab)
    if (m != "bayes") expect_error(logLik(fit), "needs a likelihood", label = lab)
    else expect_true(is.finite(logLik(fit)), label = lab)
  }
})

test_that("type = 'prob' is a matrix with one column per class, named by the labels", {
  d <- two_class(60, 3, seed = 74)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)))
  fit <- mkl(d$x[1:45, ], factor(d$y[1:45], labels = c("neg", "pos")), kernels = ks)
  P <- predict(fit, d$x[46:60, ], type = "prob")
  expect_true(is.matrix(P))
  expect_identical(colnames(P), c("neg", "pos"))
  expect_equal(P[, "pos"], predict(fit, d$x[46:60, ], type = "response"))
  expect_equal(rowSums(P), rep(1, 15))
  expect_identical(dim(predict(fit, type = "prob")), c(45L, 2L))
  f01 <- mkl(d$x, d$y, kernels = ks)
  expect_identical(colnames(predict(f01, d$x[1:3, ], type = "prob")), c("-1", "1"))
  fm <- mkl(Species ~ ., data = iris, kernels = ks)
  Pm <- predict(fm, iris[c(1, 51, 101), ], type = "prob")
  expect_identical(colnames(Pm), levels(iris$Species))
  expect_identical(Pm, predict(fm, iris[c(1, 51, 101), ], type = "response"))
  reg <- mkl(d$x, d$x[, 1], kernels = ks)
  expect_error(predict(reg, d$x, type = "prob"), "type = 'prob' is for classification fits")
})

test_that("a path predicts at several s as a matrix; s between fits takes the nearest, saying so", {
  d <- two_class(60, 3, seed = 75)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(1))
  path <- suppressWarnings(mkl(d$x[1:45, ], factor(d$y[1:45], labels = c("neg", "pos")),
                               kernels = ks, method = "spicy", C = c(10, 1, 0.1)))
  z <- d$x[46:60, ]
  F <- predict(path, z, s = c(10, 1), type = "link")
  expect_true(is.matrix(F))
  expect_identical(dim(F), c(15L, 2L))
  expect_identical(colnames(F), c("10", "1"))
  expect_equal(F[, 2], predict(path$fits[[2]], z, type = "link"))
  cl <- predict(path, z, s = c(10, 0.1))
  expect_identical(cl[, 2], as.character(predict(path$fits[[3]], z)))
  A <- predict(path, z, s = c(10, 1, 0.1), type = "prob")
  expect_identical(dim(A), c(15L, 2L, 3L))
  expect_equal(A[, , 3], predict(path$fits[[3]], z, type = "prob"))
  expect_identical(dim(predict(path, z)), c(15L, 3L))
  expect_message(w <- coef(path, s = 2), "s = 2: not a fitted C; the nearest fit .*\\(C = 1\\)")
  expect_identical(w, coef(path$fits[[2]]))
  expect_message(p2 <- predict(path, z, s = 2, type = "link"), "without interpolation")
  expect_identical(p2, predict(path$fits[[2]], z, type = "link"))
  expect_silent(coef(path, s = 1))
  expect_equal(deviance(path), vapply(path$fits, deviance, 1), ignore_attr = TRUE)
})
