# SpicyMKL on a low-rank store: the Woodbury preconditioner of the Newton operator
# (src/spicy_lowrank.c) takes the hinge's solves once few kernels are active, although the
# model rounds leave rounding noise on the operator's diagonal.

test_that("the Woodbury preconditioner takes most hinge solves on a low-rank store", {
  set.seed(5)
  n <- 800
  x <- matrix(rnorm(n * 5), n)
  y <- ifelse(rowSums(x[, 1:2]) + rnorm(n, sd = 0.5) > 0, 1, -1)
  D <- as.matrix(dist(x))^2
  G <- lapply(c(2, 4), function(s) {
    e <- eigen(exp(-D / (2 * s^2)), symmetric = TRUE)
    e$vectors[, 1:100] %*% diag(sqrt(pmax(e$values[1:100], 0)))
  })
  st <- lowrank_store(G)
  out <- capture.output(fit <- fit_spicy(st, y, "classification", 1,
                                         list(loss = "hinge", verbose = 1L), NULL))
  line <- grep("Woodbury solves", out, value = TRUE)
  expect_length(line, 1L)
  used <- as.integer(sub(".*Woodbury solves ([0-9]+),.*", "\\1", line))
  solves <- fit$info$newton_steps + fit$info$model_rounds
  expect_gt(used, 0.5 * solves)
  expect_true(fit$converged)
})
