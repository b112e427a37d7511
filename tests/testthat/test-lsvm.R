# The linear SVM on low-rank factors (src/lsvm.c) and the methods that run on it (uniform, the
# SVM family through src/svmfam_lr.c): exact factors give the dense answer, truncated factors a
# certificate recomputed here from the factors.

lsvm_data <- function(n = 90, seed = 3, sig = c(0.7, 1.5, 3)) {
  set.seed(seed)
  x <- matrix(rnorm(n * 4), n)
  y <- ifelse(x[, 1] - 0.8 * x[, 2]^2 + 0.4 * rnorm(n) > -0.6, 1, -1)
  Ks <- lapply(sig, function(s) {
    K <- exp(-as.matrix(dist(x))^2 / (2 * s^2))
    K / mean(diag(K))
  })
  full <- lapply(Ks, function(K) {
    e <- eigen(K, symmetric = TRUE)
    e$vectors %*% diag(sqrt(pmax(e$values, 0)))
  })
  list(x = x, y = y, r = x[, 1] + sin(x[, 2]) + 0.1 * rnorm(n), Ks = Ks, full = full,
       trunc = lapply(full, function(G) G[, 1:12]))
}

dense_of <- function(Ks, jitter) {
  n <- nrow(Ks[[1L]])
  K <- array(unlist(Ks), c(n, n, length(Ks)))
  for (m in seq_along(Ks)) K[, , m] <- K[, , m] + jitter * diag(n)
  K
}

# v_m = x'K_m x = |G_m'x|^2 + jitter |x|^2, from the factors
lr_quad <- function(G, jitter, x) vapply(G, function(g) sum(crossprod(g, x)^2), 1) +
  jitter * sum(x^2)

test_that("the linear SVM on exact factors is the dense SMO's solution", {
  dt <- lsvm_data()
  jit <- 1e-8
  st <- mklearn:::lowrank_store(dt$full, jitter = jit)
  d <- c(0.2, 0.5, 0.3)
  Kd <- Reduce(`+`, Map(`*`, dt$Ks, d)) + jit * diag(length(dt$y))
  for (C in c(0.3, 30)) {
    s <- svm_smo(Kd, dt$y, C = C, tol = 1e-10)
    l <- .Call(mklearn:::C_lsvm, st, dt$y, C, d, numeric(length(dt$y)), 1e-10, 1000000L)
    expect_true(l$converged)
    expect_lt(abs(l$objective - s$objective) / s$objective, 1e-8)
    expect_lt(max(abs(l$alpha - s$alpha)) / C, 1e-6)
    expect_equal(l$b, s$b, tolerance = 1e-6)
    # feasibility and the KKT test recomputed from the factors
    a <- l$alpha
    expect_true(all(a >= 0 & a <= C))
    expect_lt(abs(sum(dt$y * a)), 1e-10 * C)
    G <- dt$y * drop(Kd %*% (dt$y * a)) - 1
    up <- (dt$y > 0 & a < C) | (dt$y < 0 & a > 0)
    low <- (dt$y > 0 & a > 0) | (dt$y < 0 & a < C)
    expect_lt(max(-dt$y[up] * G[up]) + max(dt$y[low] * G[low]), 1e-10)
  }
})

test_that("the linear SVM's long tail on few coordinates reads their block, not the factors", {
  # at a large C the free alphas take many passes after shrinking has left few coordinates:
  # their block F_c F_c' is formed once and the passes read it, so the factor rows read stay
  # far below one per free alpha and pass (what every pass read before), with the dense SMO's
  # solution
  dt <- lsvm_data(n = 150)
  jit <- 1e-8
  st <- mklearn:::lowrank_store(dt$full, jitter = jit)
  d <- c(0.2, 0.5, 0.3)
  Kd <- Reduce(`+`, Map(`*`, dt$Ks, d)) + jit * diag(length(dt$y))
  C <- 1000
  s <- svm_smo(Kd, dt$y, C = C, tol = 1e-10)
  l <- .Call(mklearn:::C_lsvm, st, dt$y, C, d, numeric(length(dt$y)), 1e-10, 1000000L)
  expect_true(l$converged)
  expect_lt(abs(l$objective - s$objective) / s$objective, 1e-8)
  nfree <- sum(l$alpha > 0 & l$alpha < C)
  expect_gt(l$iterations * nfree, 20 * length(dt$y))
  expect_lt(l$row_reads, 0.1 * l$iterations * nfree)
})

test_that("the linear SVM refuses a store that is not low rank", {
  dt <- lsvm_data(n = 20)
  expect_error(.Call(mklearn:::C_lsvm, mklearn:::as_store(dense_of(dt$Ks, 0)), dt$y, 1, rep(1, 3),
                     numeric(20), 1e-6, 100L), "must be a low-rank training store")
})

test_that("uniform on exact factors equals the dense fit", {
  dt <- lsvm_data()
  jit <- 1e-8
  st <- mklearn:::lowrank_store(dt$full, jitter = jit)
  K <- dense_of(dt$Ks, jit)
  ctl <- list(svm_tol = 1e-10)
  for (task in c("classification", "regression")) {
    yy <- if (task == "classification") dt$y else dt$r
    fd <- mklearn:::fit_uniform(K, yy, task, 10, ctl, NULL)
    fl <- mklearn:::fit_uniform(st, yy, task, 10, ctl, NULL)
    expect_lt(abs(fl$objective - fd$objective) / fd$objective, 1e-8)
    expect_lt(max(abs(fl$alpha - fd$alpha)), 1e-6)
    expect_equal(fl$b, fd$b, tolerance = 1e-6)
    # the same decision values on the training rows
    fv <- function(f, store) drop(.Call(mklearn:::C_store_decision, store, 1:3, f$alpha)) + f$b
    expect_lt(max(abs(fv(fl, st) - fv(fd, mklearn:::as_store(K)))), 1e-6)
  }
})

test_that("SimpleMKL, HessianMKL and lp-norm MKL on exact factors equal the dense fits", {
  dt <- lsvm_data(n = 70)
  jit <- 1e-8
  st <- mklearn:::lowrank_store(dt$full, jitter = jit)
  K <- dense_of(dt$Ks, jit)
  for (m in c("simple", "hessian", "lp")) {
    f <- get(paste0("fit_", m), asNamespace("mklearn"))
    fd <- f(K, dt$y, "classification", 10, list(tol = 1e-8), NULL)
    fl <- f(st, dt$y, "classification", 10, list(tol = 1e-8), NULL)
    expect_true(fl$converged)
    expect_lt(abs(fl$objective - fd$objective) / fd$objective, 1e-7)
    expect_lt(max(abs(fl$weights - fd$weights)), 1e-4)
    pd <- drop(.Call(mklearn:::C_store_decision, mklearn:::as_store(K), 1:3, fd$alpha)) + fd$b
    pl <- drop(.Call(mklearn:::C_store_decision, st, 1:3, fl$alpha)) + fl$b
    expect_lt(max(abs(pl - pd)), 1e-3)
    expect_identical(sign(pl), sign(pd))
  }
})

test_that("on truncated factors the duality gap recomputed from the factors holds", {
  dt <- lsvm_data(n = 120)
  jit <- 1e-8
  st <- mklearn:::lowrank_store(dt$trunc, jitter = jit)
  C <- 5
  for (m in c("simple", "hessian", "lp")) {
    f <- get(paste0("fit_", m), asNamespace("mklearn"))
    fl <- f(st, dt$y, "classification", C, list(tol = 1e-4), NULL)
    expect_true(fl$converged)
    a <- fl$info$alpha_svm
    d <- fl$info$weights_raw
    expect_true(all(a >= 0 & a <= C))
    expect_lt(abs(sum(dt$y * a)), 1e-9 * C)
    v <- lr_quad(dt$trunc, jit, dt$y * a)
    J <- sum(a) - 0.5 * sum(d * v)
    expect_lt(abs(J - fl$objective) / J, 1e-9)
    dual_norm <- if (m == "lp") { ps <- 2; sqrt(sum(v^ps)) } else max(v)
    expect_lte((J - (sum(a) - 0.5 * dual_norm)) / J, 1e-4)
    # a is the SVM on K(d): its KKT violation, from the factors, within the SVM tolerance
    Kya <- Reduce(`+`, Map(function(g, dm) dm * drop(g %*% crossprod(g, dt$y * a)),
                           dt$trunc, d)) + jit * sum(d) * dt$y * a
    G <- dt$y * Kya - 1
    up <- (dt$y > 0 & a < C) | (dt$y < 0 & a > 0)
    low <- (dt$y > 0 & a > 0) | (dt$y < 0 & a < C)
    expect_lt(max(-dt$y[up] * G[up]) + max(dt$y[low] * G[low]), 1e-5)
  }
})

test_that("a warm start on low-rank factors gives the same optimum", {
  dt <- lsvm_data(n = 120)
  st <- mklearn:::lowrank_store(dt$trunc, jitter = 1e-8)
  for (m in c("hessian", "simple")) {
    f <- get(paste0("fit_", m), asNamespace("mklearn"))
    f1 <- f(st, dt$y, "classification", 5, list(tol = 1e-6), NULL)
    f2 <- f(st, dt$y, "classification", 5, list(tol = 1e-6), f1$state)
    expect_lt(abs(f2$objective - f1$objective) / f1$objective, 1e-6)
    expect_lte(f2$iterations, f1$iterations)
    expect_lte(f2$info$smo_iterations, f1$info$smo_iterations)
  }
  u1 <- mklearn:::fit_uniform(st, dt$y, "classification", 5, list(svm_tol = 1e-8), NULL)
  u2 <- mklearn:::fit_uniform(st, dt$y, "classification", 5, list(svm_tol = 1e-8), u1$state)
  expect_lt(abs(u2$objective - u1$objective) / u1$objective, 1e-9)
  expect_lte(u2$iterations, u1$iterations)
})

test_that("mkl() fits the SVM family and uniform on the low-rank store", {
  set.seed(7)
  n <- 200
  x <- matrix(rnorm(n * 3), n)
  y <- ifelse(x[, 1] + x[, 2]^2 > 1, 1, -1)
  ks <- kernel_set(rbf_kernel(sigma = c(0.5, 1, 2)))
  ctl <- mkl_control(store = "lowrank", rank = 40, nthreads = 1)
  for (m in c("uniform", "hessian")) {
    fl <- mkl(x, y, kernels = ks, method = m, control = ctl)
    fd <- mkl(x, y, kernels = ks, method = m, control = mkl_control(store = "dense",
                                                                    nthreads = 1))
    expect_identical(fl$store, "lowrank")
    expect_gte(mean(predict(fl, x) == predict(fd, x)), 0.95)
  }
  expect_true(all(mkl_methods(details = FALSE) %in% names(mklearn:::.mkl_registry)))
  lr <- vapply(mklearn:::.mkl_registry, function(e) isTRUE(e$lowrank), TRUE)
  expect_true(all(lr[c("uniform", "simple", "hessian", "lp")]))
  mem <- mkl_memory(1e5, 10, method = c("uniform", "hessian"), store = "lowrank",
                    control = mkl_control(rank = 100), nthreads = 1)
  expect_true(all(mem$buffers == 0))
  expect_lt(max(mem$total), 5e9)   # with the Platt folds' copy of 0.8 of the factors
})

test_that("kernel_neighbours() of a low-rank store equals the sum over its kernel columns", {
  dt <- lsvm_data(n = 60)
  st <- mklearn:::lowrank_store(dt$trunc, jitter = 1e-3)
  js <- unique(round(seq(1, 60, length.out = 25)))
  by_cols <- vapply(1:3, function(m) {
    r <- vapply(js, function(j) {
      k <- .Call(mklearn:::C_store_cols, st, m, as.integer(j))[, 1L]
      sum(k^2) / k[j]^2
    }, 0)
    mean(r)
  }, 0)
  expect_equal(mklearn:::kernel_neighbours(st, 1:3, cols = 25L), by_cols, tolerance = 1e-12)
})

test_that("the linear SVM stopped by maxiter reports a feasible point and its own objective", {
  # at the pass cap after a loose round, alpha, the bias, the objective and the violation are
  # those of the point returned (y'a = 0), not of the last exact check
  dt <- lsvm_data(n = 90, seed = 1)
  jit <- 1e-8
  st <- mklearn:::lowrank_store(dt$trunc, jitter = jit)
  d <- c(0.2, 0.5, 0.3)
  G <- do.call(cbind, Map(function(g, dm) sqrt(dm) * g, dt$trunc, d))
  y <- dt$y
  for (mi in c(5L, 6L, 9L, 21L, 38L)) {
    l <- .Call(mklearn:::C_lsvm, st, y, 1, d, numeric(length(y)), 1e-12, mi)
    expect_false(l$converged)
    a <- l$alpha
    expect_true(all(a >= 0 & a <= 1))
    expect_lt(abs(sum(y * a)), 1e-9)
    ya <- y * a
    Qa <- y * drop(G %*% crossprod(G, ya)) + jit * a
    expect_equal(l$objective, sum(a) - 0.5 * sum(a * Qa), tolerance = 1e-10)
    g <- Qa - 1
    up <- (y > 0 & a < 1) | (y < 0 & a > 0)
    low <- (y > 0 & a > 0) | (y < 0 & a < 1)
    expect_equal(l$violation, max(-y[up] * g[up]) + max(y[low] * g[low]), tolerance = 1e-8)
  }
})
