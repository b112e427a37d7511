# The low-rank store backend (src/store_lowrank.c): a store built from exact factors of two
# kernels must read as the dense store of the same kernels.

lr_pair <- function(n = 30, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(n * 3), n)
  K <- list(exp(-as.matrix(dist(x))^2 / 4), tcrossprod(x))
  fac <- function(A) {
    e <- eigen(A, symmetric = TRUE)
    e$vectors %*% diag(sqrt(pmax(e$values, 0)))
  }
  list(K = K, G = lapply(K, fac))
}

test_that("a low-rank store of exact factors reads as the dense store", {
  p <- lr_pair()
  n <- nrow(p$G[[1]])
  jit <- 1e-8
  lr <- mklearn:::lowrank_store(p$G, jitter = jit)
  K <- array(unlist(lapply(p$K, function(A) A + diag(jit, n))), c(n, n, 2))
  de <- mklearn:::as_store(K)
  expect_equal(mklearn:::store_dims(lr), c(n, n, 2L))
  set.seed(2)
  a <- matrix(rnorm(2 * n), n)
  expect_equal(.Call(mklearn:::C_store_decision, lr, 1:2, a),
               .Call(mklearn:::C_store_decision, de, 1:2, a), tolerance = 1e-12)
  expect_equal(.Call(mklearn:::C_store_cols, lr, 1:2, 5L),
               .Call(mklearn:::C_store_cols, de, 1:2, 5L), tolerance = 1e-12)
  v <- rnorm(n)
  expect_equal(.Call(mklearn:::C_store_mv, lr, 1:2, v), .Call(mklearn:::C_store_mv, de, 1:2, v),
               tolerance = 1e-12)
  expect_equal(.Call(mklearn:::C_store_quad, lr, 1:2, v),
               .Call(mklearn:::C_store_quad, de, 1:2, v), tolerance = 1e-12)
  expect_equal(.Call(mklearn:::C_store_stats, lr)$diag_mean,
               .Call(mklearn:::C_store_stats, de)$diag_mean, tolerance = 1e-12)
})
