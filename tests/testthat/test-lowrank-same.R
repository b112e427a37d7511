# The same answer on the low-rank store as on the dense one: the linear SVM of src/lsvm.c that
# the SVM family calls once per trial point (SimpleMKL's descent and line search warm-start it
# from the last alpha at nearby weights). Every method at full rank against the dense fit:
# test-store-lowrank.R; the study at n = 2000: inst/benchmarks/bench-lowrank-same.R.

test_that("the linear SVM warm-started at nearby weights converges to the cold start's optimum", {
  skip_if_not_installed("mlbench")
  set.seed(2)
  tr <- mlbench::mlbench.twonorm(300)
  x <- scale(tr$x)
  y <- ifelse(tr$classes == 1, 1, -1)
  n <- 300; M <- 20
  rk <- mklearn:::resolve_kernels(kernel_set(rbf_kernel(1), features = "each"), ncol(x), NULL)
  st <- mklearn:::lowrank_train(rk, x, 1e-3, 200L, 1L)
  a0 <- .Call(mklearn:::C_lsvm, st, y, n, rep(1 / M, M), numeric(n), 1e-5, 100000L)$alpha
  # one weight tripled, as in a SimpleMKL line search: from a0, a multiplier step of the bias
  # rounds left y'a far from 0 on a shrunk set, and later rounds never moved it (passes ran
  # out at any cap, with an infeasible alpha and a wrong objective)
  d <- c(0.1368, 0.0457, 0.0457, 0.0449, 0.0437, 0.0477, 0.045, 0.0474, 0.0441, 0.0446,
         0.0453, 0.047, 0.0444, 0.0461, 0.0457, 0.0447, 0.0441, 0.0442, 0.0475, 0.0455)
  warm <- .Call(mklearn:::C_lsvm, st, y, n, d, a0, 1e-5, 20000L)
  cold <- .Call(mklearn:::C_lsvm, st, y, n, d, numeric(n), 1e-5, 20000L)
  expect_true(cold$converged)
  expect_true(warm$converged)
  expect_lt(warm$iterations, 2000)
  expect_lt(abs(sum(y * warm$alpha)), 1e-8 * n)
  expect_lt(abs(warm$objective - cold$objective) / cold$objective, 1e-6)
})
