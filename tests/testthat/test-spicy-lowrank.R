# SpicyMKL on a low-rank store: the Woodbury preconditioner of the Newton operator
# (src/spicy_lowrank.c) takes many of the hinge's solves, although the model rounds leave
# rounding noise on the operator's diagonal (values equal but for the last bits), and solves
# them without CG.

test_that("the Woodbury preconditioner takes the hinge's solves on a low-rank store", {
  set.seed(1)
  n <- 1000
  y <- rep(c(-1, 1), length.out = n)
  x <- matrix(rnorm(n * 20), n) + y * 2 / sqrt(20)    # twonorm
  ctl <- mkl_control(store = "lowrank", rank = 200L, lowrank_tol = 1e-3, verbose = 1L,
                     platt = "train", nthreads = 1L)
  out <- capture.output(fit <- suppressWarnings(
    mkl(x, y, kernels = kernel_set(rbf_kernel(2^seq(1, 5.5, by = 0.5))), method = "spicy",
        loss = "hinge", control = ctl)))
  line <- grep("Woodbury solves", out, value = TRUE)
  expect_length(line, 1L)
  used <- as.integer(sub(".*Woodbury solves ([0-9]+),.*", "\\1", line))
  solves <- fit$info$newton_steps + fit$info$model_rounds
  expect_gt(used, 0.25 * solves)
  # those solves take no CG iteration: H d = b - (wd - dh) d from the Woodbury solve alone
  direct <- as.integer(sub(".*without CG ([0-9]+) .*", "\\1", line))
  expect_identical(direct, used)
  # the model rounds move the diagonal on few coordinates: the capacitance's Cholesky factor
  # takes a rank-one update per coordinate instead of a refactoring, and none is refused
  upd <- as.integer(sub(".*updates ([0-9]+) .*", "\\1", line))
  fup <- as.integer(sub(".*factor updated ([0-9]+), refused ([0-9]+).*", "\\1", line))
  expect_gt(fup, 0.5 * upd)
  expect_identical(sub(".*refused ([0-9]+)\\).*", "\\1", line), "0")
  # the model's line minimum ends once a Newton step on its slope moves t by rounding only:
  # a few passes of the loss per round (about 10 when it ran until its bracket closed)
  slopes <- as.integer(sub(".*model line slopes ([0-9]+).*", "\\1", line))
  expect_lt(slopes, 7 * (fit$info$model_rounds + fit$info$newton_steps))
  # the last inner loop stops once the gap it would certify is within tol (checked every second
  # Newton step), and the outer iteration certifies that gap
  early <- as.integer(sub(".*stopped at the gap ([0-9]+).*", "\\1", line))
  expect_gte(early, 1L)
  expect_lte(fit$info$gap, 0.9 * 0.01)   # the default tol
  expect_true(fit$converged)
})

test_that("the blocked Gram product of linalg.c equals crossprod() at every edge tile", {
  set.seed(2)
  gram <- function(A, B, sym) .Call(mklearn:::C_gram, A, B, sym)
  # rows not a multiple of the 256-row blocks, columns not of the 2 x 4 tiles
  for (n in c(1L, 7L, 300L, 513L)) for (ra in c(1L, 2L, 5L)) for (rb in c(1L, 3L, 4L, 6L)) {
    A <- matrix(rnorm(n * ra), n)
    B <- matrix(rnorm(n * rb), n)
    expect_equal(gram(A, B, FALSE), crossprod(A, B), tolerance = 1e-13)
  }
  A <- matrix(rnorm(600 * 9), 600)
  expect_equal(gram(A, A, TRUE), crossprod(A), tolerance = 1e-13)
  expect_error(gram(A, A[, 1:3], TRUE), "sym needs B = A")
  expect_error(gram(A, A[1:5, ], FALSE), "as many rows")
})

test_that("the capacitance's Cholesky factor takes rank-one updates and downdates", {
  set.seed(3)
  up <- function(R, X, sg) .Call(mklearn:::C_spicy_cholup, R, X, sg)
  for (k in c(1L, 2L, 9L, 40L)) {
    A <- crossprod(matrix(rnorm(2 * k * k), 2 * k)) + diag(k)
    X <- matrix(rnorm(5 * k), 5)
    X[2, ] <- 0.2 * X[2, ]
    if (k > 1L) X[3, 1L] <- 0   # a zero leading entry: its rotation is skipped
    sg <- c(1, -1, 1, 1, -1)
    X[5, ] <- 0.1 * X[5, ]
    B <- A
    for (i in 1:5) B <- B + sg[i] * tcrossprod(X[i, ])
    R <- up(chol(A), X, sg)
    expect_equal(R, chol(B), tolerance = 1e-12)
    expect_equal(crossprod(R), B, tolerance = 1e-12)
  }
  # a downdate that would leave a pivot (almost) zero is refused: the solver refactors instead
  expect_null(up(chol(diag(3)), matrix(c(1, 0, 0), 1), -1))
  expect_null(up(chol(diag(3)), matrix(c(0, 2, 0), 1), -1))
  expect_error(up(chol(diag(3)), matrix(1, 1, 2), 1), "X with its columns")
})
