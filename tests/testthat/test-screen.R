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
  # (the kernel left is the identity too: the fit generalises nothing)
  expect_warning(expect_message(fit <- mkl(d$x, d$y, kernels = ks, method = "uniform"),
                                "1 kernel"), "generalises nothing")
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
  expect_warning(f0 <- mkl(x[tr, ], y[tr], kernels = ks, method = "hessian", C = 10),
                 "generalises nothing")                                  # no screening
  expect_true(all(f0$weights["rbf(sigma=0.3)[all]", ] > 0.5))
  op <- options(mklearn.screen = 3)
  on.exit(options(op), add = TRUE)
  expect_message(f1 <- mkl(x[tr, ], y[tr], kernels = ks, method = "hessian", C = 10),
                 "rbf\\(sigma=0.3\\)\\[all\\]")
  expect_equal(rownames(f1$weights), "rbf(sigma=4)[all]")
  acc <- function(f) mean(predict(f, x[-tr, ]) == y[-tr])
  expect_gt(acc(f1), acc(f0))
})

# three classes from a noisy sum of two of twelve features (as above): a Gaussian of width 0.3
# on all twelve is the identity on 100 of these points
collapse_data <- function() {
  set.seed(7)
  x <- matrix(rnorm(150 * 12), 150, 12)
  s <- x[, 1] + x[, 2] + 0.8 * rnorm(150)
  y <- cut(s, quantile(s, c(0, 1 / 3, 2 / 3, 1)), include.lowest = TRUE,
           labels = c("a", "b", "c"))
  list(x = x, y = y)
}

test_that("cv.mkl(screen = ) cross-validates the screening threshold jointly with C", {
  d <- collapse_data()
  ks <- kernel_set(rbf_kernel(c(0.3, 4)))
  fid <- rep(1:3, length.out = 100)
  C <- c(10, 1)
  # (only the screening messages are looked for: C.min is at an end of this short grid)
  others <- function(expr) withCallingHandlers(expr, message = function(m)
    if (!inherits(m, "mklearn_screen_message")) invokeRestart("muffleMessage"))
  expect_no_message(cv <- others(suppressWarnings(
    cv.mkl(d$x[1:100, ], d$y[1:100], kernels = ks, method = "hessian", C = C,
           screen = c(0, 3), foldid = fid))), class = "mklearn_screen_message")
  # each column of the grid is the cross-validation at that threshold on the same folds
  cv0 <- suppressMessages(suppressWarnings(
    cv.mkl(d$x[1:100, ], d$y[1:100], kernels = ks, method = "hessian", C = C, foldid = fid,
           screen = NULL)))
  expect_equal(unname(cv$cvm_screen[, 1]), cv0$cvm)
  op <- options(mklearn.screen = 3)
  on.exit(options(op), add = TRUE)
  cv3 <- suppressMessages(suppressWarnings(
    cv.mkl(d$x[1:100, ], d$y[1:100], kernels = ks, method = "hessian", C = C, foldid = fid)))
  options(op)
  expect_equal(unname(cv$cvm_screen[, 2]), cv3$cvm)
  # the near-identity Gaussian loses on held-out data: threshold 3 is chosen, and the path on
  # all the data is that threshold's (one kernel left)
  expect_equal(cv$screen.min, 3)
  expect_equal(cv$kernels_screen, c(2L, 1L))
  expect_equal(cv$cvm, cv3$cvm)
  expect_equal(rownames(coef(cv)), "rbf(sigma=4)[all]")
  expect_lt(min(cv$cvm_screen[, 2]), min(cv$cvm_screen[, 1]))
  expect_output(print(cv), "screen.min = 3 \\(kernels: 0: 2, 3: 1\\)")
  # the option is left as it was
  expect_equal(getOption("mklearn.screen", 0), 0)
})

test_that("cv.mkl(screen = ) refuses what it cannot screen", {
  d <- two_class(40, p = 3, seed = 1)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)))
  expect_error(cv.mkl(d$x, d$y, kernels = ks, screen = -1, C = c(1, 0.1), nfolds = 2),
               "'screen' must be \"auto\", NULL or non-negative numbers")
  expect_error(cv.mkl(d$x, d$y, kernels = ks, screen = NA_real_, C = c(1, 0.1), nfolds = 2),
               "'screen' must be \"auto\", NULL or non-negative numbers")
  expect_error(cv.mkl(d$x, d$y, kernels = ks, screen = "yes", C = c(1, 0.1), nfolds = 2),
               "'screen' must be \"auto\", NULL or non-negative numbers")
  expect_error(cv.mkl(d$x, d$y, kernels = gram(ks, d$x), screen = 3, C = c(1, 0.1),
                      nfolds = 2), "'screen' chooses among the kernels of a kernel_set")
  expect_error(cv.mkl(d$x, d$y, kernels = ks, method = "spicy", penalty = "elasticnet",
                      lambda = c(0, 1), screen = 3, C = c(1, 0.1), nfolds = 2),
               "either 'screen' or a vector 'lambda'")
  # 40 rows in two folds: 20 training rows, so no kernel has 20 effective neighbours
  expect_error(cv.mkl(d$x, d$y, kernels = ks, screen = c(3, 20), C = c(1, 0.1), nfolds = 2),
               "'screen' thresholds must be below 20")
})

test_that("a store's kernel neighbours are computed once and equal kernel_neighbours()", {
  d <- two_class(60, p = 4, seed = 3)
  ks <- kernel_set(rbf_kernel(c(0.1, 1, 3)), poly_kernel(1))
  st <- mklearn:::as_store(gram(ks, scale(d$x)))
  nb <- mklearn:::kernel_neighbours(st)
  st$neighbours <- mklearn:::neighbour_cache(4L)
  expect_identical(mklearn:::store_neighbours(st, c(3L, 1L)), nb[c(3L, 1L)])
  expect_identical(st$neighbours$done, c(TRUE, FALSE, TRUE, FALSE))
  st$neighbours$nb[1L] <- -1     # a memo is read, not recomputed
  expect_identical(mklearn:::store_neighbours(st, 1:2), c(-1, nb[2L]))
  # one-vs-one problems get a memo of their own rows
  sub <- mklearn:::subset_store(st, 1:30)
  expect_false(identical(sub$neighbours, st$neighbours))
  expect_identical(mklearn:::store_neighbours(sub, 1L),
                   mklearn:::kernel_neighbours(mklearn:::subset_store(st, 1:30), 1L))
})

test_that("cv.mkl screens by default, names the kernels it left out; screen = NULL keeps all", {
  d <- collapse_data()
  ks <- kernel_set(rbf_kernel(c(0.3, 4)))
  fid <- rep(1:3, length.out = 100)
  quiet <- function(expr) suppressMessages(suppressWarnings(expr))
  cv <- quiet(cv.mkl(d$x[1:100, ], d$y[1:100], kernels = ks, method = "hessian", C = c(10, 1),
                     foldid = fid))
  # the near-identity Gaussian loses on held-out data by more than one standard error
  expect_true(cv$screen_auto)
  expect_gt(cv$screen.min, 0)
  expect_identical(cv$screened, "rbf(sigma=0.3)[all]")
  expect_identical(rownames(coef(cv)), "rbf(sigma=4)[all]")
  expect_output(print(cv), "Kernels left out at screen.min: rbf\\(sigma=0.3\\)\\[all\\]")
  # thresholds that leave out nothing more than a smaller one are not run
  expect_identical(cv$kernels_screen, c(2L, 1L))
  cv0 <- quiet(cv.mkl(d$x[1:100, ], d$y[1:100], kernels = ks, method = "hessian", C = c(10, 1),
                      foldid = fid, screen = NULL))
  expect_null(cv0$screen.min)
  expect_identical(rownames(coef(cv0)), c("rbf(sigma=0.3)[all]", "rbf(sigma=4)[all]"))
  acc <- function(cv) mean(predict(cv, d$x[101:150, ]) == d$y[101:150])
  expect_gt(acc(cv), acc(cv0))
  # threshold 0 of the search is the CV over C of every kernel
  expect_equal(unname(cv$cvm_screen[, 1]), cv0$cvm)
})

test_that("the default kernel choice takes a threshold only when it wins by one standard error", {
  grid <- matrix(c(0.20, 0.18, 0.19, 0.17), 2, 2)
  expect_identical(mklearn:::screen_choice(grid, c(0.02, 0.02)), c(2L, 1L))
  expect_identical(mklearn:::screen_choice(grid, c(0.005, 0.005)), c(2L, 2L))
  # AUC is maximised; ties go to the most regularised C and the larger threshold
  expect_identical(mklearn:::screen_choice(1 - grid, c(0.005, 0.005), maximise = TRUE),
                   c(2L, 2L))
  tie <- matrix(c(0.3, 0.3, 0.1, 0.2, 0.1, 0.1), 2, 3)
  expect_identical(mklearn:::screen_choice(tie, c(0.01, 0.01)), c(2L, 3L))
  expect_identical(mklearn:::screen_choice(grid[, 1, drop = FALSE], 0), c(2L, 1L))
})

test_that("screening custom kernels checks the memory of their dense store before building it", {
  d <- two_class(40, 3)
  cosine <- function(x, z) sum(x * z) / sqrt(sum(x^2) * sum(z^2))
  ks <- kernel_set(rbf_kernel(0.1), cosine)
  op <- options(mklearn.screen = 3)
  on.exit(options(op), add = TRUE)
  expect_error(mkl(d$x, d$y, kernels = ks, control = mkl_control(memory = 20000)),
               paste0("screening the kernels .* needs the dense store of the custom kernels: ",
                      "25.6 KB for 2 kernels on 40 rows, above the memory budget of 20 KB"))
})

test_that("near-duplicate kernels are merged into the narrower one, and the option is checked", {
  d <- two_class(100, p = 4, seed = 3)
  ks <- kernel_set(rbf_kernel(c(0.5, 2, 10, 11, 12)), poly_kernel(1:2))
  op <- options(mklearn.duplicates = 0.01)
  on.exit(options(op), add = TRUE)
  fit <- mkl(d$x, d$y, kernels = ks, method = "uniform")
  # wide Gaussians of neighbouring widths are alike up to a constant; other types are apart
  expect_identical(fit$kernel_info$screened, c("rbf(sigma=11)[all]", "rbf(sigma=12)[all]"))
  expect_identical(names(fit$weights), c("rbf(sigma=0.5)[all]", "rbf(sigma=2)[all]",
                                         "rbf(sigma=10)[all]", "poly(degree=1)[all]",
                                         "poly(degree=2)[all]"))
  options(mklearn.duplicates = 0)
  expect_equal(mkl(d$x, d$y, kernels = ks, method = "uniform")$M, 7L)
  options(mklearn.duplicates = 1)
  expect_error(mkl(d$x, d$y, kernels = ks), "option 'mklearn.duplicates' must be one number")
})

test_that("cv.mkl(screen = \"auto\") merges near-duplicate kernels in its fits; NULL does not", {
  d <- two_class(100, p = 4, seed = 3)
  ks <- kernel_set(rbf_kernel(c(0.5, 2, 10, 11, 12)), poly_kernel(1:2))
  fid <- rep(1:3, length.out = 100)
  quiet <- function(expr) suppressMessages(suppressWarnings(expr))
  cv <- quiet(cv.mkl(d$x, d$y, kernels = ks, method = "hessian", C = c(10, 1), foldid = fid))
  expect_identical(cv$kernels_screen[1], 5L)
  expect_true(all(c("rbf(sigma=11)[all]", "rbf(sigma=12)[all]") %in% cv$screened))
  expect_null(getOption("mklearn.duplicates"))
  cv0 <- quiet(cv.mkl(d$x, d$y, kernels = ks, method = "hessian", C = c(10, 1), foldid = fid,
                      screen = NULL))
  expect_equal(cv0$fit$fits[[1]]$M, 7L)
})

test_that("the kernel choice stops after two thresholds not improving or one worse by > se", {
  d <- two_class(60, p = 8, seed = 5)
  ks <- kernel_set(rbf_kernel(c(0.5, 1, 2, 4, 8)))
  cv0 <- suppressMessages(suppressWarnings(
    cv.mkl(d$x, d$y, kernels = ks, method = "uniform", C = c(10, 1), nfolds = 3, screen = NULL)))
  f1 <- mklearn:::first_binary(cv0$fit)
  nb <- sort(mklearn:::set_neighbours(f1$kernel_info, f1$x))
  screen <- c(0, nb[1:4] + 1e-6)        # each threshold leaves out one more kernel
  loss <- c(NA, 0.1, -0.01, 0.1, 0.1)   # the second threshold does not improve, the third does
  fake <- function(i) list(C = c(10, 1), cvm = rep(min(cv0$cvm) + loss[i], 2), cvsd = c(1, 1),
                           C.min = 1, name = "class")
  ran <- integer(0)
  run <- function(i) {
    ran <<- c(ran, i)
    if (i == 1L) cv0 else fake(i)
  }
  mklearn:::cv_screen_auto(run, screen, 1, NULL)
  expect_identical(ran, 1:5)
  loss <- c(NA, 0.1, 0, -0.01, -0.01)   # two in a row that do not improve: the search stops
  ran <- integer(0)
  mklearn:::cv_screen_auto(run, screen, 1, NULL)
  expect_identical(ran, 1:3)
  # one above the best so far by more than its own standard error: the search stops there
  se <- c(NA, 0.05, 0.05, 0.05, 0.05)
  fake <- function(i) list(C = c(10, 1), cvm = rep(min(cv0$cvm) + loss[i], 2),
                           cvsd = rep(se[i], 2), C.min = 1, name = "class")
  search <- function(l) {
    loss <<- l
    ran <<- integer(0)
    mklearn:::cv_screen_auto(run, screen, 1, NULL)
    ran
  }
  expect_identical(search(c(NA, 0.1, -0.1, -0.1, -0.1)), 1:2)
  expect_identical(search(c(NA, 0.03, -0.1, -0.1, -0.1)), 1:5)   # within its se: go on
})

test_that("the default kernel choice tries 0, 20% and 35% of a fold's training rows", {
  d <- two_class(60, p = 8, seed = 5)
  ks <- kernel_set(rbf_kernel(c(0.1, 0.5, 1, 2, 4, 8)))
  quiet <- function(expr) suppressMessages(suppressWarnings(expr))
  cv <- quiet(cv.mkl(d$x, d$y, kernels = ks, method = "uniform", C = c(10, 1),
                     foldid = rep(1:3, 20)))
  # 40 training rows per fold: thresholds 8 and 14; none below 20% (the near-identity
  # kernels alone, 5%, was never the one taken)
  expect_true(all(cv$screen %in% c(0, 8, 14)))
  expect_gt(length(cv$screen), 1L)
})

test_that("the kernel choice screens each training part once for all its thresholds", {
  d <- two_class(60, p = 4, seed = 5)
  ks <- kernel_set(rbf_kernel(c(0.1, 0.5, 1, 2, 4, 8)))
  rec <- new.env()
  rec$columns <- rec$neighbours <- 0
  count <- function(what) bquote(assign(.(what), get(.(what), envir = .(rec)) + 1,
                                        envir = .(rec)))
  suppressMessages({
    trace("duplicate_columns", count("columns"), print = FALSE,
          where = asNamespace("mklearn"))
    trace("set_neighbours", count("neighbours"), print = FALSE, where = asNamespace("mklearn"))
  })
  on.exit(suppressMessages({
    untrace("duplicate_columns", where = asNamespace("mklearn"))
    untrace("set_neighbours", where = asNamespace("mklearn"))
  }))
  cv <- suppressMessages(suppressWarnings(cv.mkl(d$x, d$y, kernels = ks, method = "uniform",
                                                 C = c(10, 1), foldid = rep(1:3, 20))))
  expect_identical(cv$screen, c(0, 8, 14))
  # all the data and three folds: their columns once (12 fits), their neighbours once (8 fits
  # with a threshold), besides the search's own neighbours on all the data
  expect_identical(c(rec$columns, rec$neighbours), c(4, 5))
  # what a subset reads from the memo is what it computes alone
  rk <- mklearn:::resolve_kernels(ks, ncol(d$x), colnames(d$x))
  op <- options(mklearn.duplicates = 0.3)
  on.exit(options(op), add = TRUE)
  sub <- mklearn:::drop_kernels(rk, 1:2)
  memo <- mklearn:::with_screen_memo({
    mklearn:::merge_duplicates(rk, d$x)
    mklearn:::merge_duplicates(sub, d$x)
  })
  expect_identical(memo$labels, mklearn:::merge_duplicates(sub, d$x)$labels)
  expect_lt(length(memo$labels), length(sub$labels))
})

