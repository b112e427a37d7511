# mkl_compare() and cv.mkl() over elastic net's lambda.

cmp_data <- function(n = 120, seed = 11) {
  d <- two_class(n = n, p = 4, seed = seed)
  list(x = d$x, y = factor(ifelse(d$y > 0, "pos", "neg")))
}
cmp_kernels <- kernel_set(rbf_kernel(c(0.5, 2)), features = c("all", "each"))

test_that("mkl_compare fits every method on the same stratified training sets and measures them", {
  d <- cmp_data()
  meths <- c("uniform", "l1", "elastic", "l2", "bayes")
  cmp <- mkl_compare(d$x, d$y, cmp_kernels, methods = meths, n_train = c(10, 20), splits = 2,
                     seed = 3, keep_fits = TRUE)
  r <- cmp$results
  expect_identical(nrow(r), 2L * 2L * length(meths))
  expect_identical(unique(r$method), meths)
  expect_true(all(r$measure >= 0 & r$measure <= 1))
  expect_length(cmp$train, 4L)
  # stratified: 'size' rows of each class; every method of a design saw the same rows
  for (k in seq_along(cmp$train)) {
    tr <- cmp$train[[k]]
    expect_equal(as.vector(table(d$y[tr])), rep(r$size[(k - 1) * length(meths) + 1], 2))
  }
  # the recorded accuracy is that of the kept fit on the rows outside its training set
  for (i in seq_len(nrow(r))) {
    f <- cmp$fits[[i]]
    tr <- cmp$train[[(i - 1) %/% length(meths) + 1]]
    te <- setdiff(seq_len(nrow(d$x)), tr)
    expect_equal(r$measure[i], mean(predict(f, d$x[te, ]) == d$y[te]))
    expect_identical(f$nobs, length(tr))
  }
  # ... and a refit outside mkl_compare gives the same number (uniform, first design)
  tr <- cmp$train[[1]]
  te <- setdiff(seq_len(nrow(d$x)), tr)
  f <- mkl(d$x[tr, ], d$y[tr], kernels = cmp_kernels, method = "uniform",
           C = mkl_compare_C()$uniform)
  expect_equal(r$measure[1], mean(predict(f, d$x[te, ]) == d$y[te]))
  # the weights: uniform 1/M everywhere, every column on the simplex, block 1-norm sparser
  M <- cmp$M
  expect_equal(unname(cmp$weights[, "uniform"]), rep(1 / M, M))
  expect_equal(unname(colSums(cmp$weights)), rep(1, length(meths)), tolerance = 1e-10)
  expect_true(all(r$selected[r$method == "uniform"] == M))
  expect_lt(mean(r$selected[r$method == "l1"]), M)
  out <- capture.output(print(cmp))
  expect_true(any(grepl("Elastic \\(0.5\\)", out)))
  pdf(NULL)
  expect_silent(plot(cmp))
  expect_silent(plot(cmp, type = "weights"))
  dev.off()
})

test_that("mkl_compare with a fixed test set, regression, and its argument checks", {
  d <- cmp_data()
  cmp <- mkl_compare(d$x, d$y, cmp_kernels, methods = c("uniform", "bayes"), test = 81:120)
  expect_identical(cmp$results$size, c(80L, 80L))
  expect_identical(cmp$train[[1]], 1:80)
  set.seed(1)
  x <- matrix(rnorm(200), 100)
  y <- sin(x[, 1]) + rnorm(100, sd = 0.1)
  expect_error(mkl_compare(x, y, cmp_kernels, methods = c("l2", "bayes")), "classification only")
  cr <- mkl_compare(x, y, cmp_kernels, methods = c("uniform", "l1", "bayes"), n_train = 50,
                    seed = 2, C = mkl_compare_C(uniform = 2, l1 = 50))   # the former 100 and 0.01 at n = 50
  expect_identical(cr$measure, "rmse")
  expect_true(all(cr$results$measure < sd(y)))
  expect_identical(cr$results$C[1:2], c(2, 50))
  expect_error(mkl_compare_C(spicy = 1), "takes values named")
  expect_error(mkl_compare(d$x, d$y, cmp_kernels, methods = "simple"))
})

test_that("cv.mkl chooses elastic net's lambda: the grid is the per-lambda CV on the same folds", {
  d <- cmp_data(n = 80, seed = 5)
  set.seed(9)
  foldid <- sample(rep(1:3, length.out = 80))
  lam <- c(0, 0.5, 1)
  Cs <- c(5, 0.5)     # SpicyMKL penalties 0.1 and 1 on unit-trace kernels
  cv <- cv.mkl(d$x, d$y, kernels = cmp_kernels, method = "spicy", penalty = "elasticnet",
               loss = "logistic", C = Cs, lambda = lam, foldid = foldid)
  expect_identical(dim(cv$cvm_grid), c(2L, 3L))
  for (k in seq_along(lam)) {
    one <- cv.mkl(d$x, d$y, kernels = cmp_kernels, method = "spicy", penalty = "elasticnet",
                  loss = "logistic", C = Cs, lambda = lam[k], foldid = foldid, screen = NULL)
    expect_equal(unname(cv$cvm_grid[, k]), one$cvm)
  }
  best <- which(cv$cvm_grid == min(cv$cvm_grid), arr.ind = TRUE)[1, ]
  expect_identical(cv$lambda.min, lam[best[2]])
  expect_identical(cv$C.min, Cs[best[1]])
  expect_identical(cv$fit$fits[[1]]$lambda, if (cv$lambda.min > 0) cv$lambda.min else 0)
  expect_true(any(grepl("lambda.min", capture.output(print(cv)))))
  # one C: lambda alone is chosen
  cv1 <- cv.mkl(d$x, d$y, kernels = cmp_kernels, method = "spicy", penalty = "elasticnet",
                loss = "logistic", C = 5, lambda = lam, foldid = foldid)
  expect_identical(cv1$C.min, 5)
  expect_identical(dim(cv1$cvm_grid), c(1L, 3L))
  expect_error(cv.mkl(d$x, d$y, kernels = cmp_kernels, method = "uniform", C = c(10, 1),
                      lambda = lam), "elasticnet")
})
