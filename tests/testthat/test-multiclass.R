# Multiclass fits (R/multiclass.R): one-vs-rest and one-vs-one over the binary solvers.

ks_iris <- kernel_set(rbf_kernel(c(0.5, 2)), linear_kernel(), features = c("all", "each"))

iris_split <- function(seed = 1) {
  set.seed(seed)
  tr <- sort(unlist(lapply(split(seq_len(150), iris$Species), sample, 35)))
  list(x = as.matrix(iris[, 1:4]), y = iris$Species, tr = tr, te = setdiff(seq_len(150), tr))
}

# the classification methods of this build (a new method gets multiclass through mkl())
class_methods <- function()
  Filter(function(m) mklearn:::method_info(m)$multiclass, mkl_methods())

test_that("one-vs-rest equals the binary fits done by hand, for every classification method", {
  d <- iris_split(1)
  x <- d$x[d$tr, ]; y <- d$y[d$tr]
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), linear_kernel())
  for (m in class_methods()) {
    fit <- suppressWarnings(mkl(x, y, kernels = ks, method = m))
    expect_s3_class(fit, "mkl_multi")
    expect_identical(colnames(fit$weights), levels(iris$Species))
    Fte <- predict(fit, d$x[d$te, ], type = "link")
    for (k in levels(y)) {
      b <- suppressWarnings(mkl(x, ifelse(y == k, 1, -1), kernels = ks, method = m))
      expect_equal(fit$weights[, k], b$weights, tolerance = 1e-12, label = paste(m, k))
      expect_equal(fit$fitted[, k], b$fitted, tolerance = 1e-12, label = paste(m, k))
      expect_equal(unname(Fte[, k]), unname(predict(b, d$x[d$te, ], type = "link")),
                   tolerance = 1e-12, label = paste(m, k))
    }
    # classes: the largest decision value; a wide margin over the majority class (1/3)
    pred <- predict(fit, d$x[d$te, ])
    expect_identical(levels(pred), levels(iris$Species))
    expect_identical(as.integer(pred), max.col(Fte, ties.method = "first"))
    expect_gt(mean(pred == d$y[d$te]), 0.85, label = paste(m, "test accuracy"))
  }
})

test_that("one-vs-one equals the binary fits on the pairs' rows of the shared kernels", {
  d <- iris_split(2)
  x <- scale(d$x[d$tr, ]); y <- d$y[d$tr]
  # constant-diagonal kernels: a pair's submatrix has the scale of the whole, so mkl() on it by
  # hand converts C as the multiclass fit does (it uses the scale of all the training kernels)
  ks <- kernel_set(rbf_kernel(c(0.5, 1, 2)), features = c("all", "each"))
  K <- gram(ks, x)
  fo <- mkl(NULL, y, kernels = K, method = "simple", multiclass = "ovo", C = 2)
  fk <- mkl(x, y, kernels = ks, method = "simple", multiclass = "ovo", C = 2,
            standardize = FALSE)
  expect_identical(fo$problems$problem,
                   c("setosa vs versicolor", "setosa vs virginica", "versicolor vs virginica"))
  # the fitted values of precomputed kernels carry their diagonal jitter (they are the kernels
  # as given); those of a kernel set are what predict() gives, without it
  jit <- 1e-8 * vapply(fo$fits, function(f) rowSums(f$alpha), numeric(nrow(x)))
  expect_equal(fk$fitted, fo$fitted - jit, tolerance = 1e-10)
  for (b in seq_len(3)) {
    pr <- fo$problems[b, ]
    rows <- which(y %in% c(pr$positive, pr$negative))
    h <- mkl(NULL, ifelse(y[rows] == pr$positive, 1, -1), kernels = K[rows, rows, ],
             method = "simple", C = 2)
    expect_equal(unname(fo$weights[, b]), unname(h$weights), tolerance = 1e-12)
    expect_equal(fo$fits[[b]]$fitted, h$fitted, tolerance = 1e-12)
    expect_identical(fo$fits[[b]]$rows, rows)
    expect_true(all(fo$fits[[b]]$alpha[-rows, ] == 0))
    # decision values on every training row (the votes of predict())
    expect_equal(unname(fo$fitted[, b]),
                 unname(predict(h, newkernels = K[, rows, , drop = FALSE], type = "link")),
                 tolerance = 1e-12)
  }
  expect_gt(mean(predict(fk, scale(d$x[d$te, ], attr(x, "scaled:center"),
                                   attr(x, "scaled:scale"))) == d$y[d$te]), 0.85)
})

test_that("the kernels are built once for all the binary problems", {
  d <- iris_split(3)
  ns <- asNamespace("mklearn")
  cnt <- new.env()
  count <- bquote(assign("n", get("n", envir = .(cnt)) + 1L, envir = .(cnt)))
  suppressMessages({
    trace("dense_store", tracer = count, where = ns, print = FALSE)
    trace("fly_store", tracer = count, where = ns, print = FALSE)
  })
  on.exit(suppressMessages({
    untrace("dense_store", where = ns)
    untrace("fly_store", where = ns)
  }))
  for (sc in c("ovr", "ovo")) for (st in c("dense", "fly")) {
    cnt$n <- 0L
    fit <- mkl(d$x, d$y, kernels = ks_iris, method = "simple", multiclass = sc,
               control = mkl_control(store = st))
    expect_identical(cnt$n, 1L, label = paste(sc, st))
    expect_identical(fit$store, st)
  }
  # dense and on-the-fly stores give the same one-vs-rest fit
  a <- mkl(d$x, d$y, kernels = ks_iris, method = "uniform", control = mkl_control(store = "dense"))
  b <- mkl(d$x, d$y, kernels = ks_iris, method = "uniform", control = mkl_control(store = "fly"))
  expect_equal(a$fitted, b$fitted, tolerance = 1e-8)
})

test_that("multiclass on DNA (3 classes) beats the majority class and equals one-vs-rest by hand", {
  skip_if_not_installed("mlbench")
  data("DNA", package = "mlbench", envir = environment())
  set.seed(13)
  idx <- sample(nrow(DNA), 600)
  tr <- idx[1:300]; te <- idx[301:600]
  # the 20 positions around the splice junction (3 indicator columns each)
  x <- sapply(DNA[, 61:120], function(v) as.numeric(as.character(v)))
  y <- DNA$Class
  majority <- max(table(y[te])) / length(te)
  ks <- kernel_set(rbf_kernel(c(2, 5, 10)), linear_kernel())
  for (sc in c("ovr", "ovo")) {
    fit <- mkl(x[tr, ], y[tr], kernels = ks, method = "simple", multiclass = sc,
               standardize = FALSE)
    acc <- mean(predict(fit, x[te, ]) == y[te])
    expect_gt(acc, majority + 0.3, label = paste(sc, "test accuracy"))
  }
  fit <- mkl(x[tr, ], y[tr], kernels = ks, method = "simple", standardize = FALSE)
  for (k in levels(y)) {
    b <- mkl(x[tr, ], ifelse(y[tr] == k, 1, -1), kernels = ks, method = "simple",
             standardize = FALSE)
    expect_equal(fit$weights[, k], b$weights, tolerance = 1e-12)
    expect_equal(fit$fitted[, k], b$fitted, tolerance = 1e-12)
  }
})

test_that("predict: original levels, probability matrices, decision values, new data", {
  d <- iris_split(4)
  df <- iris[d$tr, ]
  for (sc in c("ovr", "ovo")) {
    fit <- mkl(Species ~ ., data = df, kernels = ks_iris, method = "uniform", multiclass = sc)
    p <- predict(fit, iris[d$te, ])
    expect_s3_class(p, "factor")
    expect_identical(levels(p), levels(iris$Species))
    P <- predict(fit, iris[d$te, ], type = "response")
    expect_identical(dim(P), c(length(d$te), 3L))
    expect_identical(colnames(P), levels(iris$Species))
    expect_equal(unname(rowSums(P)), rep(1, length(d$te)), tolerance = 1e-12)
    expect_true(all(P >= 0))
    expect_gt(mean(colnames(P)[max.col(P)] == as.character(p)), 0.9)
    Fm <- predict(fit, iris[d$te, ], type = "link")
    expect_identical(ncol(Fm), if (sc == "ovr") 3L else 3L)
    expect_identical(colnames(Fm), fit$problems$problem)
    expect_identical(predict(fit, newdata = iris[d$te, ]), p)
    expect_equal(predict(fit, type = "link"), fit$fitted)
    expect_identical(unname(predict(fit)), unname(predict(fit, df)))
    expect_error(predict(fit, iris[d$te, -1]),
                 "lack variable\\(s\\) of the model formula: Sepal.Length")
    expect_error(predict(fit, iris[d$te, ], type = "probability"), "should be one of")
    expect_error(predict(fit, iris[d$te, ], s = 1), "unused argument")
  }
  # one-vs-one classes are the majority votes of the pairwise decisions
  fit <- mkl(d$x[d$tr, ], d$y[d$tr], kernels = ks_iris, method = "uniform", multiclass = "ovo")
  Fm <- predict(fit, d$x, type = "link")
  win <- cbind(ifelse(Fm[, 1] > 0, "setosa", "versicolor"),
               ifelse(Fm[, 2] > 0, "setosa", "virginica"),
               ifelse(Fm[, 3] > 0, "versicolor", "virginica"))
  votes <- t(apply(win, 1, function(w) table(factor(w, levels(iris$Species)))))
  clear <- apply(votes, 1, max) == 2
  expect_identical(as.character(predict(fit, d$x))[clear],
                   levels(iris$Species)[max.col(votes)][clear])
  # one-vs-rest probabilities: each class's Platt probability, normalised
  fr <- mkl(d$x[d$tr, ], d$y[d$tr], kernels = ks_iris, method = "uniform")
  Fr <- predict(fr, d$x, type = "link")
  pb <- sapply(1:3, function(k) predict(fr$fits[[k]], d$x, type = "response"))
  expect_equal(unname(predict(fr, d$x, type = "response")), unname(pb / rowSums(pb)),
               tolerance = 1e-12)
})

test_that("pairwise coupling recovers consistent pairwise probabilities", {
  pos <- c(1L, 1L, 2L); neg <- c(2L, 3L, 3L)
  p <- rbind(c(0.6, 0.3, 0.1), c(0.2, 0.2, 0.6))
  r <- t(apply(p, 1, function(q) q[pos] / (q[pos] + q[neg])))
  expect_equal(mklearn:::couple_pairs(r, pos, neg, 3L), p, tolerance = 1e-10)
  # two classes: the pairwise probability itself
  expect_equal(mklearn:::couple_pairs(matrix(c(0.8, 0.3)), 1L, 2L, 2L),
               cbind(c(0.8, 0.3), c(0.2, 0.7)), tolerance = 1e-10)
})

test_that("coef, print, summary and plot say which classes use which kernels", {
  d <- iris_split(5)
  fit <- mkl(d$x[d$tr, ], d$y[d$tr], kernels = ks_iris, method = "simple")
  W <- coef(fit)
  expect_identical(dim(W), c(15L, 3L))
  expect_identical(dimnames(W), list(names(fit$fits[[1]]$weights), levels(iris$Species)))
  expect_equal(unname(colSums(W)), rep(1, 3), tolerance = 1e-12)
  for (k in 1:3) expect_identical(W[, k], coef(fit$fits[[k]]))
  Wn <- coef(fit, nonzero = TRUE)
  expect_identical(rownames(Wn), rownames(W)[rowSums(W > 0) > 0])
  expect_identical(coef(fit, type = "bias"), vapply(fit$fits, `[[`, 1, "b"))
  expect_length(coef(fit, type = "alpha"), 3L)
  out <- capture_output(print(fit))
  expect_match(out, "one-vs-rest, 3 binary problems")
  expect_match(out, "Kernel weights by class")
  expect_match(out, "setosa +versicolor +virginica")
  expect_match(out, "Converged: yes \\(all 3 binary fits\\)")
  top <- names(which.max(W[, "setosa"]))
  expect_match(out, top, fixed = TRUE)
  s <- summary(fit)
  expect_s3_class(s, "summary.mkl_multi")
  expect_identical(s$problems$kernels, unname(colSums(W > 0)))
  expect_equal(s$train[["error"]], mean(predict(fit) != d$y[d$tr]))
  expect_output(print(s), "Binary problems")
  expect_output(print(s), "Training error")
  pdf(NULL); on.exit(dev.off())
  expect_invisible(plot(fit))
})

test_that("a binary fit that does not converge warns naming its class", {
  d <- iris_split(6)
  ws <- capture_warnings(fit <- mkl(d$x, d$y, kernels = ks_iris, method = "simple", C = 100,
                                    control = mkl_control(svm_maxiter = 3)))
  expect_true(any(grepl("did not converge at C = 100 \\(class 'versicolor' against the rest\\)",
                        ws)))
  expect_false(fit$converged)
  expect_output(print(fit), "Converged: NO for [0-9] of 3 binary fits \\(.*versicolor")
  ws <- capture_warnings(mkl(d$x, d$y, kernels = ks_iris, method = "simple", C = 100,
                             multiclass = "ovo", control = mkl_control(svm_maxiter = 3)))
  expect_true(any(grepl("\\(class 'versicolor' against 'virginica'\\)", ws)))
})

test_that("a multiclass path: one mkl_multi per C, warm-started per problem", {
  d <- iris_split(7)
  x <- d$x[d$tr, ]; y <- d$y[d$tr]
  path <- mkl(x, y, kernels = ks_iris, method = "uniform", C = c(10, 1))
  expect_s3_class(path, "mkl_path")
  expect_s3_class(path$fits[[2]], "mkl_multi")
  one <- mkl(x, y, kernels = ks_iris, method = "uniform", C = 10)
  expect_equal(path$fits[[1]]$fitted, one$fitted)
  expect_identical(predict(path, d$x[d$te, ], s = 10), predict(one, d$x[d$te, ]))
  expect_identical(dim(coef(path, s = 1)), c(15L, 3L))
  expect_length(coef(path), 2L)
  expect_output(print(path), "multiclass, one-vs-rest")
  s <- summary(path)
  expect_equal(s$table$error[1], mean(predict(one) != y))
  pdf(NULL); on.exit(dev.off())
  expect_invisible(plot(path))
})

test_that("the formula interface and update() work for multiclass fits", {
  fit <- mkl(Species ~ ., data = iris, kernels = ks_iris, method = "uniform")
  expect_s3_class(fit, "mkl_multi")
  expect_identical(fit$call[[1L]], as.name("mkl"))
  u <- update(fit, C = 10, multiclass = "ovo")
  expect_identical(u$C, 10)
  expect_identical(u$multiclass, "ovo")
  expect_gt(mean(predict(u, iris) == iris$Species), 0.9)
})

test_that("bad multiclass arguments get a specific error", {
  d <- iris_split(8)
  d2 <- two_class(40, 3, seed = 3)
  expect_error(mkl(d$x, d$y, kernels = ks_iris, multiclass = "all"),
               "'multiclass' must be \"ovr\" \\(one-vs-rest\\) or \"ovo\"")
  expect_error(mkl(d$x, d$y, kernels = ks_iris, multiclass = c("ovr", "ovo")),
               "'multiclass' must be")
  expect_error(mkl(d2$x, d2$y, multiclass = "ovo"),
               "'multiclass' is for a response of more than two classes; this one has two")
  expect_error(mkl(d2$x, d2$x[, 1], multiclass = "ovr"), "this one is numeric \\(regression\\)")
  f0 <- mkl(d$x, d$y, kernels = ks_iris, method = "uniform")
  expect_error(mkl(d$x, d$y, kernels = ks_iris, method = "uniform", init = f0),
               "'init' must be a previous mkl fit")
  fb <- mkl(d$x, ifelse(d$y == "setosa", 1, -1), kernels = ks_iris, method = "uniform")
  expect_error(mkl(d$x, d$y, kernels = ks_iris, method = "uniform", init = fb),
               "a multiclass fit warm-starts each binary problem along a path")
  expect_error(mkl(d$x, as.integer(d$y), kernels = ks_iris, task = "classification"),
               "give more than two classes as a factor")
  expect_error(mkl(d$x, d$y, kernels = ks_iris, task = "regression"),
               "a factor 'y' cannot be used for regression")
  expect_error(mkl_compare(d$x, d$y, ks_iris, methods = "uniform"),
               "'y' has 3 classes; this function takes two")
})
