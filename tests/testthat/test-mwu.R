# MWUMKL (R/mwu.R, src/mwu.c): certificates against an independent QP solver, the SVM refit,
# the dense backend, and memory.

mwu_paper_kernels <- function()
  kernel_set(poly_kernel(1:3), rbf_kernel(sigma = 1 / sqrt(2 * 2^seq(0, 4, 0.5))),
             features = "each")

sonar_xy <- function() {
  data("Sonar", package = "mlbench", envir = environment())
  list(x = as.matrix(Sonar[, 1:60]), y = Sonar$Class)
}

# The same MWUMKL fit on the fly and from the dense store.
fly_and_dense <- function(x, y, ks, ...)
  list(a = mkl(x, y, ks, method = "mwu", ...),
       b = mkl(x, y, ks, method = "mwu", ..., control = mkl_control(store = "dense")))

test_that("with one kernel, MWUMKL's objective is within (1 + epsilon) of the QP optimum", {
  skip_if_not_installed("quadprog")
  skip_if_not_installed("mlbench")
  d <- sonar_xy()
  set.seed(3)
  i <- sample(nrow(d$x), 100)
  x <- d$x[i, ]; y <- d$y[i]
  ks <- kernel_set(rbf_kernel(sigma = 4))
  K <- gram(ks, scale(x))[, , 1]
  yy <- ifelse(y == levels(y)[2], 1, -1)
  n <- length(yy)
  for (C in c(1, Inf)) for (eps in c(0.1, 0.3)) {
    f <- mkl(x, y, ks, method = "mwu", C = C, epsilon = eps)
    # the 2-norm soft-margin (hard margin: C = Inf) dual on the unit-trace kernel, solved
    # independently: min a' G a over a >= 0, sum(a) = 1, y'a = 0
    G <- outer(yy, yy) * K / sum(diag(K)) + if (is.finite(C)) diag(1 / (C * n), n) else 0
    qp <- quadprog::solve.QP(2 * G + diag(1e-12, n), rep(0, n),
                             cbind(rep(1, n), yy, diag(n)), c(1, 0, rep(0, n)), meq = 2)
    expect_gte(f$info$s, qp$value * (1 - 1e-8))            # feasible: never below the optimum
    expect_lte(f$info$s, qp$value * (1 + eps))             # the epsilon guarantee
    expect_equal(f$iterations, as.integer(ceiling(2 * log(n) / eps^2)))
    expect_true(f$converged)
  }
})

test_that("the closed-form classifier agrees with an SVM refit on the learned weights", {
  skip_on_cran()
  skip_if_not_installed("mlbench")
  ks <- mwu_paper_kernels()
  ion <- ionosphere_xy()
  sets <- list(sonar = sonar_xy(), ionosphere = list(x = ion$x, y = factor(ion$y)))
  for (nm in names(sets)) {
    d <- sets[[nm]]
    set.seed(11)
    te <- sample(nrow(d$x), round(0.3 * nrow(d$x)))
    f1 <- mkl(d$x[-te, ], d$y[-te], ks, method = "mwu", C = 100, standardize = "range")
    f2 <- mkl(d$x[-te, ], d$y[-te], ks, method = "mwu", C = 100, standardize = "range",
              control = mkl_control(refit = TRUE))
    expect_equal(f1$weights, f2$weights)
    a1 <- mean(predict(f1, d$x[te, ]) == d$y[te])
    a2 <- mean(predict(f2, d$x[te, ]) == d$y[te])
    expect_gt(a1, 0.7)
    expect_lt(abs(a1 - a2), 0.02 + 1e-12)
    expect_true(f2$info$two_stage)
  }
})

test_that("on-the-fly, dense and precomputed kernels give the same weights", {
  d <- two_class(90, 4, seed = 2)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(1:2), features = c("all", "each"))
  ff <- mkl(d$x, d$y, ks, method = "mwu", C = 10)
  fd <- mkl(d$x, d$y, ks, method = "mwu", C = 10, control = mkl_control(store = "dense"))
  expect_equal(ff$store, "fly")
  expect_equal(fd$store, "dense")
  expect_equal(fd$weights, ff$weights, tolerance = 1e-10)
  expect_equal(fd$b, ff$b, tolerance = 1e-10)
  K <- gram(ks, scale(d$x))
  fp <- mkl(NULL, d$y, K, method = "mwu", C = 10)
  expect_equal(unname(fp$weights), unname(ff$weights), tolerance = 1e-10)
  # training decision values from the solver equal those recomputed from alpha
  f_re <- Reduce(`+`, lapply(seq_len(dim(K)[3L]), function(m) drop(K[, , m] %*% fp$alpha[, m]))) +
    fp$b
  expect_equal(unname(fp$fitted), f_re, tolerance = 1e-8)
  # predict() rebuilds the kernels without the training jitter (1e-8 on the diagonal)
  expect_equal(unname(ff$fitted), unname(predict(ff, d$x, type = "link")), tolerance = 1e-5)
})

test_that("few kernels on many points: the same fit with one thread and two (rows shared)", {
  # M <= 32 shares the rows among the threads, and the team size adapts to the machine's load
  # every 32 steps: the result must not depend on it (sums over kernels in a fixed order)
  set.seed(12)
  n <- 8000
  x <- matrix(rnorm(n * 5), n, 5)
  y <- ifelse(x[, 1] + 0.5 * x[, 2] + rnorm(n, sd = 0.5) > 0, 1, -1)
  ks <- kernel_set(rbf_kernel(c(1, 3)), poly_kernel(1))
  fit <- function(nt) mkl(x, y, ks, method = "mwu", C = 1, epsilon = 0.1,
                          control = mkl_control(nthreads = nt, progress = FALSE))
  f1 <- fit(1)
  f2 <- fit(2)
  expect_identical(f2$weights, f1$weights)
  expect_identical(f2$alpha, f1$alpha)
  expect_identical(f2$b, f1$b)
  expect_gt(mean(sign(f1$fitted) == y), 0.85)   # the Bayes rule: about 0.86
})

test_that("weights on unit-trace kernels stay near uniform; history and model object", {
  d <- two_class(120, 5, seed = 4)
  ks <- kernel_set(rbf_kernel(c(0.5, 1, 2)), poly_kernel(1:3), features = "each")
  f <- mkl(d$x, d$y, ks, method = "mwu", C = 10)
  M <- length(f$weights)
  expect_equal(sum(f$weights), 1)
  expect_true(all(f$weights > 0))
  expect_lt(max(abs(f$weights * M - 1)), 0.1)
  h <- f$history
  expect_true(all(c("iteration", "time", "objective", "max_s", "entropy") %in% names(h)))
  expect_equal(max(h$iteration), f$iterations)
  expect_true(all(h$entropy <= log(M) + 1e-12))
  expect_gt(mean(predict(f, d$x) == f$classes[(d$y > 0) + 1L]), 0.75)
  expect_output(print(f), "mwu")
  expect_output(print(summary(f)), "mwu")
  expect_equal(dim(coef(f, type = "alpha")), c(120L, M))
})

test_that("standardize = 'range' scales to [0, 1] and predict re-applies it", {
  d <- two_class(60, 3, seed = 5)
  ks <- kernel_set(rbf_kernel(1))
  f <- mkl(d$x, d$y, ks, method = "mwu", standardize = "range")
  expect_equal(range(f$x), c(0, 1))
  lo <- apply(d$x, 2, min); sp <- apply(d$x, 2, max) - lo
  xs <- sweep(sweep(d$x, 2, lo), 2, sp, "/")
  f2 <- mkl(xs, d$y, ks, method = "mwu", standardize = FALSE)
  expect_equal(predict(f, d$x, type = "link"), predict(f2, xs, type = "link"), tolerance = 1e-10)
  expect_error(mkl(d$x, d$y, ks, standardize = "minmax"), "'standardize' must be")
})

test_that("MWUMKL's arguments are checked", {
  d <- two_class(40, 3, seed = 6)
  ks <- kernel_set(rbf_kernel(1))
  expect_error(mkl(d$x, d$y, ks, method = "mwu", epsilon = 1), "epsilon")
  expect_error(mkl(d$x, d$y, ks, method = "mwu", epsilon = 0), "epsilon")
  expect_error(mkl(d$x, d$y, ks, method = "uniform", C = Inf), "C = Inf, the hard margin")
  expect_error(mkl(d$x, d$y, ks, method = "uniform", epsilon = 0.2), "MWUMKL's approximation")
  expect_error(mkl(d$x, d$x[, 1], ks, method = "mwu", task = "regression"),
               "does not do regression")
  expect_error(mkl(d$x, d$y, ks, method = "mwu", control = mkl_control(tol = 1e-3)),
               "does not use the setting\\(s\\) tol")
  expect_error(mkl(d$x, d$y, ks, method = "mwu", C = Inf, control = mkl_control(refit = TRUE)),
               "needs a finite C")
  expect_error(mkl_control(ratio = -1), "'ratio' must be")
  expect_error(mkl_control(refit = NA), "'refit' must be TRUE or FALSE")
  f <- mkl(d$x, d$y, ks, method = "mwu")
  expect_error(mkl(d$x, d$y, ks, method = "mwu", init = f), "no warm start")
})

test_that("an oracle without a step is a clear error naming the kernels and C", {
  # unreachable with positive semidefinite kernels at any C (the paper's footnote 3 and the
  # oracle's floor): the message itself, then a kernel with a negative eigenvalue
  expect_match(mklearn:::mwu_infeasible(0.2, 5L, 267L, Inf, 208),
               "5 of 267 \\(epsilon = 0.2, hard margin\\).*not positive semidefinite.*a finite C")
  expect_match(mklearn:::mwu_infeasible(0.2, 5L, 267L, 2080, 208),
               "\\(epsilon = 0.2, C = 10\\).*not positive semidefinite.*a smaller C")
  n <- 20
  y <- rep(c(-1, 1), each = 10)
  K <- array(outer(y, y) - 0.99 * diag(n), c(n, n, 1))   # eigenvalues -0.99 and 19.01
  ctl <- mkl_control(check_kernels = "none", nthreads = 1)
  expect_error(mkl(y = factor(y), kernels = K, method = "mwu", C = Inf, control = ctl),
               paste0("MWUMKL stopped at iteration [0-9]+ of 150 \\(epsilon = 0.2, hard ",
                      "margin\\).*oracle found no step.*not positive semidefinite.*a finite C"))
  expect_error(mkl(y = factor(y), kernels = K, method = "mwu", C = 1, control = ctl),
               "C = 1\\).*not positive semidefinite.*a smaller C")
  # the advice holds: a ridge 1/C large enough makes G positive semidefinite and the fit runs
  f <- suppressWarnings(mkl(y = factor(y), kernels = K, method = "mwu", C = 1e-4, control = ctl))
  expect_true(f$converged)
})

test_that("random kernel designs are compact and resolve without per-kernel objects", {
  set.seed(1)
  ks <- random_kernels(1e5, 60, size = 1, design = "mwu")
  expect_lt(as.numeric(utils::object.size(ks)), 5e6)
  rk <- mklearn:::resolve_kernels(ks, 60, NULL)
  expect_equal(nrow(rk$table), 1e5)
  expect_equal(length(rk$gstart), 61L)      # single columns: one group per column
  expect_true(all(rk$table$type %in% c("rbf", "poly")))
  expect_equal(mean(rk$table$type == "poly"), 0.25, tolerance = 0.02)
  expect_false(anyDuplicated(rk$labels) > 0)
  ks2 <- random_kernels(30, 10, size = 2:4)
  rk2 <- mklearn:::resolve_kernels(ks2, 10, NULL)
  expect_true(all(diff(rk2$gstart) %in% 2:4))
  expect_error(mklearn:::resolve_kernels(ks, 20, NULL), "more columns than the data have")
  # a fly fit on a random design equals the dense fit
  d <- two_class(50, 6, seed = 7)
  set.seed(2)
  ab <- fly_and_dense(d$x, d$y, random_kernels(40, 6, size = 1, design = "mwu"),
                      standardize = "range")
  expect_equal(ab$a$weights, ab$b$weights, tolerance = 1e-10)
})

test_that("mapped polynomial kernels and chained Gaussian columns give the dense store's fit", {
  # on the fly, single-column polynomial and linear kernels keep no O(n) state (G_m alpha from
  # moments of the column's powers) and Gaussians on one column, in increasing gamma, take their
  # columns from one exponential and Taylor links; the dense store does neither
  d <- two_class(70, 5, seed = 11)
  set.seed(3)
  ab <- fly_and_dense(d$x, d$y, random_kernels(2000, 5, size = 1, design = "mwu"),
                      standardize = "range")
  a <- ab$a; b <- ab$b
  expect_gt(a$info$kernels_mapped, 400)
  expect_gt(a$info$kernels_chained, 1000)
  expect_equal(c(b$info$kernels_mapped, b$info$kernels_chained), c(0L, 0L))
  expect_equal(a$weights, b$weights, tolerance = 1e-10)
  expect_equal(a$b, b$b, tolerance = 1e-10)
  expect_equal(a$fitted, b$fitted, tolerance = 1e-9)
  expect_equal(a$info$s, b$info$s, tolerance = 1e-10)
  # chains and moments on centred kernels
  set.seed(3)
  ab <- fly_and_dense(d$x, d$y, random_kernels(600, 5, size = 1, design = "mwu",
                                                normalize = "center_trace"),
                      standardize = "range")
  a <- ab$a; b <- ab$b
  expect_gt(a$info$kernels_chained, 200)
  expect_equal(a$weights, b$weights, tolerance = 1e-10)
  expect_equal(a$fitted, b$fitted, tolerance = 1e-9)
  # every normalisation; linear kernels; a set of polynomial kernels only (no state at all)
  for (nz in c("none", "center_trace")) {
    ks2 <- kernel_set(poly_kernel(1:3), linear_kernel(), rbf_kernel(c(0.7, 1.5)),
                      features = c("all", "each"), normalize = nz)
    ab <- fly_and_dense(d$x, d$y, ks2, C = 10)
    a <- ab$a; b <- ab$b
    expect_equal(a$info$kernels_mapped, 20L)
    expect_equal(a$weights, b$weights, tolerance = 1e-10)
    expect_equal(a$fitted, b$fitted, tolerance = 1e-9)
  }
  ks3 <- kernel_set(poly_kernel(1:2), features = "each")
  ab <- fly_and_dense(d$x, d$y, ks3, C = 10)
  a <- ab$a; b <- ab$b
  expect_equal(a$info$kernels_mapped, 10L)
  expect_equal(a$weights, b$weights, tolerance = 1e-10)
  expect_equal(predict(a, d$x, type = "link"), predict(b, d$x, type = "link"), tolerance = 1e-9)
})

test_that("the sample coefficients are kept as the factors of an outer product", {
  d <- two_class(80, 4, seed = 13)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(2), features = c("all", "each"))
  f <- mkl(d$x, d$y, ks, method = "mwu", C = 10)
  expect_s3_class(f$alpha, "mkl_outer")
  A <- as.matrix(f$alpha)
  expect_equal(dim(A), c(80L, 15L))
  expect_equal(dim(f$alpha), dim(A))
  expect_identical(colnames(A), names(f$weights))
  expect_identical(dimnames(f$alpha), dimnames(A))
  # a rank-one matrix: every column is the weight times one vector
  expect_equal(A, outer(A[, 1] / f$weights[[1]], unname(f$weights)), tolerance = 1e-12,
               ignore_attr = TRUE)
  expect_equal(f$alpha[3:5, c(2, 7)], A[3:5, c(2, 7)])
  expect_equal(f$alpha[, 4], A[, 4])
  expect_identical(coef(f, type = "alpha"), A)
  # predictions through the factored form equal those from the matrix, block by block
  st <- mklearn:::fly_store(f$kernel_info, f$x)
  expect_equal(mklearn:::store_decision(st, f$alpha, seq_len(15)),
               mklearn:::store_decision(st, A, seq_len(15)), tolerance = 1e-12)
  # the fitted values leave out the training kernels' jitter (1e-8 on the diagonal), as
  # predict() does
  expect_equal(unname(mklearn:::store_decision(st, f$alpha, seq_len(15)) + f$b -
                        1e-8 * rowSums(A)), unname(f$fitted), tolerance = 1e-8)
  expect_equal(unname(predict(f, d$x, type = "link")), unname(f$fitted), tolerance = 1e-10)
  expect_equal(summary(f)$n_sv, sum(rowSums(A != 0) > 0))
  expect_output(print(f$alpha), "80 x 15 sample coefficients")
  # three classes, one-vs-one: each pair's factor is expanded to all rows
  set.seed(14)
  x3 <- rbind(d$x, matrix(rnorm(120, 2), 30))
  y3 <- factor(c(ifelse(d$y > 0, "a", "b"), rep("c", 30)))
  m3 <- mkl(x3, y3, ks, method = "mwu", C = 10, multiclass = "ovo")
  expect_true(all(vapply(m3$fits, function(g) inherits(g$alpha, "mkl_outer"), logical(1))))
  expect_equal(nrow(m3$fits[[1]]$alpha), 110L)
  expect_gt(mean(predict(m3, x3) == y3), 0.8)
})

test_that("the kernel loop by row blocks gives the one-pass loop's fit", {
  # n > 8192 reads kernels by row blocks of 4096; an internal block size exercises that path
  d <- two_class(300, 4, seed = 12)
  set.seed(4)
  rk <- mklearn:::resolve_kernels(random_kernels(400, 4, size = 1, design = "mwu"), 4, NULL)
  x <- apply(d$x, 2, function(v) (v - min(v)) / diff(range(v)))
  st <- mklearn:::fly_store(rk, x)
  ctl <- c(unclass(mklearn:::method_control("mwu", mkl_control())), epsilon = 0.3)
  f1 <- mklearn:::fit_mwu(st, d$y, "classification", 100, ctl, NULL)
  expect_gt(f1$info$kernels_chained, 100)
  for (extra in list(list(block = 64L), list(block = 50L, chain = FALSE, fmap = FALSE))) {
    f2 <- mklearn:::fit_mwu(st, d$y, "classification", 100, c(ctl, extra), NULL)
    expect_equal(f2$weights, f1$weights, tolerance = 1e-10)
    expect_equal(f2$b, f1$b, tolerance = 1e-10)
    expect_equal(f2$fitted_decision, f1$fitted_decision, tolerance = 1e-9)
  }
})

test_that("a fit with N = 20,000 and 12 kernels stays below 10% of an N x N matrix's memory", {
  skip_on_cran()
  skip_if_not(file.exists("/proc/self/status"))
  lib <- dirname(system.file(package = "mklearn"))
  script <- tempfile(fileext = ".R")
  writeLines(c(
    sprintf(".libPaths(c(%s, .libPaths()))", deparse(lib)),
    "library(mklearn)",
    "set.seed(1)",
    "n <- 20000",
    "x <- matrix(rnorm(n * 10), n, 10); y <- ifelse(x[, 1] + x[, 2]^2 + rnorm(n) > 1, 1, -1)",
    "hwm0 <- as.numeric(gsub('[^0-9]', '', grep('VmHWM', readLines('/proc/self/status'), value = TRUE)))",
    "ks <- kernel_set(rbf_kernel(c(0.5, 1, 2, 4, 8, 16)), poly_kernel(1:3), laplace_kernel(c(1, 4, 16)))",
    "f <- mkl(x, y, ks, method = 'mwu', C = 10, control = mkl_control(nthreads = 1))",
    "hwm <- as.numeric(gsub('[^0-9]', '', grep('VmHWM', readLines('/proc/self/status'), value = TRUE)))",
    "cat(hwm0 * 1024, hwm * 1024, length(f$weights), f$store, '\\n')"), script)
  out <- system2(file.path(R.home("bin"), "Rscript"), script, stdout = TRUE, stderr = TRUE)
  v <- strsplit(trimws(utils::tail(out, 1L)), " +")[[1]]
  expect_equal(v[3:4], c("12", "fly"))
  nn <- 8 * 20000^2
  # the whole process (R itself included) peaks below a tenth of one N x N matrix
  expect_lt(as.numeric(v[2]), 0.1 * nn)
})

test_that("the hard margin on classes that coincide is reported infeasible, with a warning", {
  # duplicated rows with opposite labels: no kernel combination separates them
  set.seed(1)
  z <- matrix(rnorm(50 * 4), 50, 4)
  Z <- rbind(z, z); Y <- factor(rep(c("a", "b"), each = 50))
  ctl <- mkl_control(nthreads = 1)
  # where rounding breaks the tie between a point and its twin, the final alpha splits them and
  # the certificate bounds the margin at 0.0036 of the norm instead of the jitter's level (an
  # AVX-512 machine, NOTES-mwu.md): the fit then says that its classifier misclassifies half
  # the points. Either way: not converged, a warning that names the hard margin and a finite C
  expect_warning(f <- mkl(Z, Y, method = "mwu", C = Inf, control = ctl),
                 paste0("(hard margin \\(C = Inf\\) is infeasible|hard-margin classifier found ",
                        "misclassifies 50 of 100).*finite C"))
  expect_false(f$converged)
  expect_true(f$info$status %in% c("infeasible", "not_separated"))
  expect_match(f$info$nonconvergence, "bounds (the margin|it by)")
  # without the jitter the margin is exactly 0: the classifier is the constant 0, not NaN
  ks0 <- kernel_set(rbf_kernel(sigma = c(1, 2)), poly_kernel(1), jitter = 0)
  f0 <- suppressWarnings(mkl(Z, Y, kernels = ks0, method = "mwu", C = Inf, control = ctl))
  expect_false(f0$converged)
  expect_true(is.finite(f0$b) && all(is.finite(f0$fitted)))
  # a soft margin on the same data, and the hard margin on separable data, are not infeasible
  f1 <- mkl(Z, Y, method = "mwu", C = 1, control = ctl)
  expect_true(f1$converged)
  expect_identical(f1$info$status, "done")
  x <- matrix(rnorm(200), 50, 4)
  ys <- factor(ifelse(x[, 1] > 0, "a", "b"))
  expect_no_warning(fs <- mkl(x, ys, method = "mwu", C = Inf, control = ctl))
  expect_true(fs$converged)
  expect_identical(fs$info$status, "done")
  expect_null(mklearn:::mwu_no_margin(1e-3, 50, 0L, 0.2))
  # overlapping classes: the certificate falls slowly, the classifier does not separate them
  set.seed(2)
  x1 <- matrix(rnorm(100), 100, 1)
  y1 <- factor(ifelse(x1[, 1] + rnorm(100) > 0, "a", "b"))
  expect_warning(f2 <- mkl(x1, y1, kernel_set(poly_kernel(1)), method = "mwu", C = Inf,
                           control = ctl),
                 "misclassifies [0-9]+ of 100 training points.*epsilon = 0.2.*smaller epsilon")
  expect_false(f2$converged)
  expect_identical(f2$info$status, "not_separated")
  # the two-stage refit at its SMO cap names svm_maxiter
  expect_warning(mkl(x, ys, method = "mwu", C = 1,
                     control = mkl_control(refit = TRUE, svm_maxiter = 2, nthreads = 1)),
                 "refit stopped at its iteration cap.*svm_maxiter = \\) \\(now 2\\)")
})

test_that("a large iteration count is announced up front; a zero kernel is refused at once", {
  set.seed(4)
  x <- matrix(rnorm(100), 50, 2)
  y <- factor(ifelse(x[, 1] + 0.5 * rnorm(50) > 0, "a", "b"))
  ks <- kernel_set(rbf_kernel(sigma = 1))
  ctl <- mkl_control(nthreads = 1)
  # T = ceiling(2 log(50) / 0.0085^2) = 108,292 iterations
  expect_message(mkl(x, y, ks, method = "mwu", epsilon = 0.0085, control = ctl),
                 "108,292 iterations at epsilon = 0.0085.*epsilon = 0.05 needs 3,130")
  expect_no_message(mkl(x, y, ks, method = "mwu", control = ctl))
  expect_match(mklearn:::mwu_cost_note(50, 6, 1e-3, 1, 7823578L),
               "7,823,578 iterations.*6 kernel\\(s\\).*1 / epsilon\\^2")
  K <- array(0, c(50, 50, 2))
  K[, , 2] <- gram(ks, x)[, , 1]
  # refused by the kernel checks, before MWUMKL's iterations (a solver's error would name it)
  expect_error(mkl(y = y, kernels = K, method = "mwu", control = ctl),
               "kernel 1 is zero on the training data")
})

test_that("every finite C gives a fit, bracketed by the dual at the returned weights", {
  # The 2-norm soft-margin optimum exceeds 1 at a small C on few points, where the oracle's
  # floor of the hard margin stopped the fit as infeasible. The dual at the returned weights mu,
  # L = min over a >= 0, sum(a) = 1, y'a = 0 of a' (sum_m mu_m G_m) a, is at most the optimum,
  # and MWUMKL's objective max_m s_m at least: within (1 + epsilon) of each other.
  skip_if_not_installed("quadprog")
  ctl <- mkl_control(nthreads = 1)
  eps <- 0.2
  muffle_degenerate <- function(w) if (inherits(w, "mkl_degenerate")) invokeRestart("muffleWarning")
  for (n in c(2, 3, 4, 6, 10)) for (npos in unique(c(1, n %/% 2))) {
    set.seed(10 * n + npos)
    x <- matrix(rnorm(3 * n), n, 3)
    y <- rep(c(1, -1), c(npos, n - npos))
    K <- gram(kernel_set(rbf_kernel(c(1, 3))), x)
    for (C in c(1e-6, 1e-4, 0.01, 0.05, 0.1)) {
      lab <- sprintf("n = %d, %d positive, C = %g", n, npos, C)
      f <- withCallingHandlers(
        mkl(y = factor(y), kernels = K, method = "mwu", C = C, epsilon = eps, control = ctl),
        warning = muffle_degenerate)
      G <- Reduce(`+`, lapply(1:2, function(m)
        f$info$mu[m] * (outer(y, y) * K[, , m] / sum(diag(K[, , m])) + diag(1 / (C * n), n))))
      qp <- quadprog::solve.QP(2 * G, rep(0, n), cbind(rep(1, n), y, diag(n)),
                               c(1, 0, rep(0, n)), meq = 2)
      expect_true(f$converged, label = lab)
      expect_gte(f$objective, qp$value * (1 - 1e-8), label = lab)
      expect_lte(f$objective, qp$value * (1 + eps), label = lab)
      expect_true(all(is.finite(f$fitted)) && is.finite(f$b), label = lab)
    }
  }
})

test_that("too few iterations for the overlapping points: a warning naming the ratio", {
  # twonorm (Bayes error 2.3 %) at a large epsilon: T = 24 steps give at most 48 support points,
  # fewer than the overlapping points the margin needs; the advised ratio restores the fit
  set.seed(3)
  d <- mlbench::mlbench.twonorm(4000, d = 20)
  y <- ifelse(d$classes == 1, -1, 1)
  tr <- 1:2000
  ks <- kernel_set(rbf_kernel(c(4, 8)))
  ctl <- mkl_control(nthreads = 1)
  expect_warning(f <- mkl(d$x[tr, ], y[tr], kernels = ks, method = "mwu", epsilon = 0.8,
                          control = ctl),
                 paste0("misclassifies [0-9]+ training points outside its [0-9]+ support points.*",
                        "T = 24 iterations.*mkl_control\\(ratio = [0-9]+\\)"))
  expect_false(f$converged)
  expect_identical(f$info$status, "uncovered")
  expect_gt(f$info$uncovered, 10)
  r2 <- as.numeric(sub(".*ratio = ([0-9]+).*", "\\1", f$info$nonconvergence))
  expect_no_warning(f2 <- mkl(d$x[tr, ], y[tr], kernels = ks, method = "mwu", epsilon = 0.8,
                              control = mkl_control(nthreads = 1, ratio = r2)))
  expect_identical(f2$info$status, "done")
  acc <- function(f) mean(predict(f, d$x[-tr, ]) == y[-tr])
  expect_gt(acc(f2), acc(f) + 0.01)
  expect_null(mklearn:::mwu_uncovered(10, 100, 2000, 50, 1))
})
