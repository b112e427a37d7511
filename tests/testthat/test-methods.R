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
