# SpicyMKL and Empirical Bayes on a low-rank store (src/spicy_lowrank.c, src/bayes_lowrank.c):
# exact factors give the dense answer; truncated factors give the answer on G G', certified by
# a duality gap (SpicyMKL) or the fixed point of Eq. 23 (Empirical Bayes) recomputed here from
# the factors.

lr_data <- function(n = 120, seed = 3) {
  set.seed(seed)
  x <- matrix(rnorm(n * 3), n)
  yc <- ifelse(x[, 1] + x[, 2]^2 - 1 + rnorm(n, sd = 0.3) > 0, 1, -1)
  yr <- sin(x[, 1]) + x[, 2]^2 / 3 + rnorm(n, sd = 0.2)
  D <- as.matrix(dist(x))^2
  K <- array(0, c(n, n, 3))
  for (m in 1:3) K[, , m] <- exp(-D / (2 * m^2))
  list(K = K, yc = yc, yr = yr, n = n)
}

# factors of a kernel from its eigenvalues above rel (of the largest), at most rmax of them
lr_factor <- function(A, rel = 1e-13, rmax = ncol(A)) {
  e <- eigen(A, symmetric = TRUE)
  k <- which(e$values > rel * e$values[1])
  k <- k[seq_len(min(length(k), rmax))]
  e$vectors[, k, drop = FALSE] %*% diag(sqrt(e$values[k]), length(k))
}

# the dense array of the factors (what the low-rank store holds)
lr_dense <- function(G) {
  K <- array(0, c(nrow(G[[1]]), nrow(G[[1]]), length(G)))
  for (m in seq_along(G)) K[, , m] <- tcrossprod(G[[m]])
  K
}

test_that("SpicyMKL on exact factors gives the dense answer", {
  d <- lr_data()
  G <- lapply(1:3, function(m) lr_factor(d$K[, , m]))
  Kx <- lr_dense(G)
  st <- lowrank_store(G)
  for (loss in c("hinge", "logistic", "squared")) {
    reg <- loss == "squared"
    y <- if (reg) d$yr else d$yc
    task <- if (reg) "regression" else "classification"
    ctl <- list(loss = loss, tol = 1e-8)
    a <- fit_spicy(Kx, y, task, 1, ctl, NULL)
    b <- fit_spicy(st, y, task, 1, ctl, NULL)
    expect_true(b$converged, info = loss)
    expect_equal(b$objective, a$objective, tolerance = 1e-6, info = loss)
    expect_equal(unname(b$weights), unname(a$weights), tolerance = 1e-5, info = loss)
    fa <- store_decision(as_store(Kx), a$alpha, 1:3) + a$b
    fb <- store_decision(st, b$alpha, 1:3) + b$b
    expect_lt(max(abs(fa - fb)), 1e-4 * max(1, max(abs(fa))))
    if (!reg) expect_identical(sign(fa), sign(fb))
  }
})

# Primal and dual values of SpicyMKL's block 1-norm problem on the kernels tcrossprod(G[[m]]),
# from the fit's coefficients and its dual variable rho projected to a feasible point here.
spicy_gap_r <- function(G, y, loss, C, fit) {
  K <- lapply(G, tcrossprod)
  z <- fit$b + Reduce(`+`, lapply(seq_along(K), function(m) K[[m]] %*% fit$alpha[, m]))
  nrm <- vapply(seq_along(K), function(m)
    sqrt(max(0, sum(fit$alpha[, m] * (K[[m]] %*% fit$alpha[, m])))), 0)
  loss_val <- switch(loss, hinge = sum(pmax(0, 1 - y * z)),
                     logistic = sum(log1p(exp(-y * z))), squared = sum((y - z)^2) / 2)
  primal <- loss_val + C * sum(nrm)
  u <- fit$state$rho
  if (loss == "squared") {
    u <- u - mean(u)
  } else {
    t <- pmin(pmax(y * u, 0), 1)
    if (loss == "logistic") t <- pmin(pmax(t, 1e-300), 1 - 1e-16)
    u <- y * t
    sp <- sum(u[u > 0]); sn <- -sum(u[u < 0])   # balance: shrink the heavier side
    if (sp > sn) u[u > 0] <- u[u > 0] * sn / sp else u[u < 0] <- u[u < 0] * sp / sn
  }
  un <- vapply(K, function(k) sqrt(max(0, sum(u * (k %*% u)))), 0)
  u <- u * min(1, C / max(un))
  dual <- switch(loss, hinge = sum(y * u),
                 logistic = {
                   t <- y * u
                   -sum(ifelse(t > 0, t * log(t), 0) + ifelse(t < 1, (1 - t) * log1p(-t), 0))
                 },
                 squared = sum(u * y) - sum(u^2) / 2)
  c(primal = primal, dual = dual, gap = (primal - dual) / primal)
}

test_that("SpicyMKL on truncated factors: the gap recomputed from the factors holds", {
  d <- lr_data(seed = 4)
  G <- lapply(1:3, function(m) lr_factor(d$K[, , m], rel = 1e-3, rmax = 15))
  expect_true(all(vapply(G, ncol, 1L) < d$n))
  st <- lowrank_store(G)
  for (loss in c("hinge", "logistic", "squared")) {
    reg <- loss == "squared"
    y <- if (reg) d$yr else d$yc
    fit <- fit_spicy(st, y, if (reg) "regression" else "classification", 1,
                     list(loss = loss, tol = 1e-6), NULL)
    g <- spicy_gap_r(G, y, loss, 1, fit)
    expect_equal(unname(g["primal"]), fit$objective, tolerance = 1e-8, info = loss)
    expect_lte(unname(g["dual"]), unname(g["primal"]) * (1 + 1e-12))
    expect_lt(unname(g["gap"]), 1e-5)
  }
})

test_that("SpicyMKL's start from a subsample of the rows reaches the cold fit's optimum", {
  # row_start: a fit on 100 spread rows (C scaled to them) starts the fit on all 400 rows; the
  # gap, recomputed here from the factors, is that of all the rows
  d <- lr_data(n = 400, seed = 5)
  G <- lapply(1:3, function(m) lr_factor(d$K[, , m], rel = 1e-3, rmax = 20))
  st <- lowrank_store(G)
  for (loss in c("hinge", "logistic", "squared")) {
    reg <- loss == "squared"
    y <- if (reg) d$yr else d$yc
    task <- if (reg) "regression" else "classification"
    cold <- fit_spicy(st, y, task, 1, list(loss = loss, tol = 1e-6), NULL)
    warm <- fit_spicy(st, y, task, 1, list(loss = loss, tol = 1e-6, row_start = 100L), NULL)
    rs <- warm$info$row_start
    expect_identical(rs$rows, 100L, info = loss)
    expect_equal(rs$C, 100 / 400, info = loss)
    expect_gt(rs$newton_steps, 0L)
    expect_true(warm$converged, info = loss)
    g <- spicy_gap_r(G, y, loss, 1, warm)
    expect_equal(unname(g["primal"]), warm$objective, tolerance = 1e-8, info = loss)
    expect_lt(unname(g["gap"]), 1e-5)
    expect_lt(abs(warm$objective - cold$objective), 1e-6 * cold$objective)
    expect_null(cold$info$row_start)
  }
  # fewer than twice the rows, or a dense store: a cold start
  small <- fit_spicy(st, d$yc, "classification", 1, list(tol = 1e-6, row_start = 201L), NULL)
  expect_null(small$info$row_start)
  expect_null(fit_spicy(lr_dense(G), d$yc, "classification", 1,
                        list(tol = 1e-6, row_start = 100L), NULL)$info$row_start)
  expect_error(spicy_tuning(row_start = -1), "'row_start'")
  expect_error(spicy_tuning(row_start = 2.5), "'row_start' must be a whole number")
})

test_that("SpicyMKL's nested row starts: each subsample fit starts from the next smaller one", {
  # row_start = c(50, 100): a fit on 50 rows starts the fit on 100, which starts the fit on all
  # 400; the counts of both subsample fits are reported, the gap is that of all the rows
  d <- lr_data(n = 400, seed = 5)
  G <- lapply(1:3, function(m) lr_factor(d$K[, , m], rel = 1e-3, rmax = 20))
  st <- lowrank_store(G)
  problems <- list(hinge = list(d$yc, "classification"), squared = list(d$yr, "regression"))
  for (loss in names(problems)) {
    y <- problems[[loss]][[1L]]
    fit <- function(rs) fit_spicy(st, y, problems[[loss]][[2L]], 1,
                                  list(loss = loss, tol = 1e-6, row_start = rs), NULL)
    cold <- fit(0L)
    warm <- fit(c(50L, 100L))
    rs <- warm$info$row_start
    expect_identical(rs$rows, c(50L, 100L), info = loss)
    expect_equal(rs$C, c(50, 100) / 400, info = loss)
    expect_true(all(rs$newton_steps > 0L), info = loss)
    expect_true(warm$converged, info = loss)
    g <- spicy_gap_r(G, y, loss, 1, warm)
    expect_equal(unname(g["primal"]), warm$objective, tolerance = 1e-8, info = loss)
    expect_lt(unname(g["gap"]), 1e-5)
    expect_lt(abs(warm$objective - cold$objective), 1e-6 * cold$objective)
  }
  # sizes too large for their level are skipped: 300 > 400 / 2 leaves the start from 100
  one <- fit_spicy(st, d$yc, "classification", 1, list(tol = 1e-6, row_start = c(100L, 300L)),
                   NULL)
  expect_identical(one$info$row_start$rows, 100L)
  # row_gamma: every fit of the chain starts at that multiple of its gamma; the same optimum
  rg <- fit_spicy(st, d$yc, "classification", 1,
                  list(tol = 1e-6, row_start = c(50L, 100L), row_gamma = 10), NULL)
  expect_true(rg$converged)
  expect_lt(unname(spicy_gap_r(G, d$yc, "hinge", 1, rg)["gap"]), 1e-5)
  expect_error(spicy_tuning(row_gamma = 0), "'row_gamma' must be one finite number > 0")
  expect_identical(spicy_tuning(row_start = c(2000, 20000))$row_start, c(2000L, 20000L))
  expect_error(spicy_tuning(row_start = c(100, 50)),
               "'row_start' with several sizes must be increasing")
  expect_error(spicy_tuning(row_start = c(0, 50)), "'row_start' must be one finite number >= 1")
})

test_that("SpicyMKL's default row start: nested sizes from 1000 rows by factors up to 10", {
  auto <- function(n, lr = TRUE) mklearn:::spicy_row_auto(n, lr)
  expect_identical(auto(4999), 0L)
  expect_identical(auto(5000), 1000L)
  expect_identical(auto(20000), c(1000L, 4472L))
  expect_identical(auto(1e5), c(1000L, 10000L))
  expect_identical(auto(1e6), c(1000L, 10000L, 100000L))
  expect_identical(auto(1e5, FALSE), 0L)
  expect_identical(spicy_tuning(row_start = NA)$row_start, NA_integer_)
  # below 5000 rows the default is a cold start
  d <- lr_data(n = 400, seed = 5)
  G <- lapply(1:3, function(m) lr_factor(d$K[, , m], rel = 1e-3, rmax = 20))
  expect_null(fit_spicy(lowrank_store(G), d$yc, "classification", 1,
                        list(tol = 1e-6, row_start = NA), NULL)$info$row_start)
})

test_that("SpicyMKL on a low-rank store: the Woodbury solve alone for each Newton system", {
  # the preconditioner is H itself when every coordinate has loss curvature (logistic, squared)
  d <- lr_data(n = 300, seed = 4)
  G <- lapply(1:3, function(m) lr_factor(d$K[, , m], rel = 1e-3, rmax = 15))
  st <- lowrank_store(G)
  for (loss in c("logistic", "squared")) {
    reg <- loss == "squared"
    y <- if (reg) d$yr else d$yc
    fit <- fit_spicy(st, y, if (reg) "regression" else "classification", 1,
                     list(loss = loss, tol = 1e-6), NULL)
    expect_true(fit$converged, info = loss)
    expect_lte(fit$info$cg_iterations, 2L)   # the Woodbury solve alone, no CG iteration
    g <- spicy_gap_r(G, y, loss, 1, fit)
    expect_equal(unname(g["primal"]), fit$objective, tolerance = 1e-8, info = loss)
    expect_lt(unname(g["gap"]), 1e-5)
  }
})

test_that("Empirical Bayes on exact factors gives the dense answer with every update", {
  d <- lr_data(n = 100, seed = 5)
  G <- lapply(1:3, function(m) lr_factor(d$K[, , m]))
  Kx <- lr_dense(G)
  st <- lowrank_store(G)
  for (upd in c("scoring", "mackay", "mm")) for (bias in c("center", "kernel")) {
    ctl <- list(update = upd, bias = bias, tol = 1e-6, maxiter = 3000)
    a <- fit_bayes(Kx, d$yr, "regression", NA, ctl, NULL)
    b <- fit_bayes(st, d$yr, "regression", NA, ctl, NULL)
    lab <- paste(upd, bias)
    expect_equal(b$objective, a$objective, tolerance = 1e-9, info = lab)
    expect_equal(b$weights, a$weights, tolerance = 1e-7, info = lab)
    expect_equal(b$info$sigma2, a$info$sigma2, tolerance = 1e-7, info = lab)
    fa <- store_decision(as_store(Kx), a$alpha, 1:3) + a$b
    fb <- store_decision(st, b$alpha, 1:3) + b$b
    expect_lt(max(abs(fa - fb)), 1e-7 * max(abs(fa)), label = lab)
  }
})

test_that("Empirical Bayes on truncated factors: the fixed point recomputed from the factors", {
  d <- lr_data(n = 100, seed = 6)
  G <- lapply(1:3, function(m) lr_factor(d$K[, , m], rel = 1e-3, rmax = 12))
  st <- lowrank_store(G, jitter = 1e-3)
  y <- d$yr - mean(d$yr)
  for (upd in c("scoring", "mackay")) {
    fit <- fit_bayes(st, d$yr, "regression", NA, list(update = upd, tol = 1e-7), NULL)
    expect_true(fit$converged)
    dd <- fit$info$d; s2 <- fit$info$sigma2
    K <- lapply(G, function(g) tcrossprod(g) + diag(1e-3, nrow(g)))
    Kbar <- diag(s2, d$n) + Reduce(`+`, Map(`*`, dd, K))
    Ki <- solve(Kbar)
    beta <- drop(Ki %*% y)
    J <- 0.5 * sum(y * beta) + 0.5 * determinant(Kbar)$modulus[[1]]
    expect_equal(fit$objective, J, tolerance = 1e-10)
    tm <- vapply(K, function(k) sum(Ki * k), 0)
    qm <- vapply(K, function(k) sum(beta * (k %*% beta)), 0)
    grad <- c(dd * abs(tm - qm), s2 * abs(sum(diag(Ki)) - sum(beta^2))) / 2
    expect_lt(max(grad), 1e-6)
    k <- which.max(dd)
    expect_equal(fit$alpha[, k] / dd[k], beta, tolerance = 1e-8)
  }
})

test_that("Empirical Bayes' scoring steps on a low-rank store read no factor rows", {
  # Q of the scoring system from the Gram matrix [G, 1]'[G, 1] (src/bayes_lowrank.c): the factors'
  # n rows are read once per factorisation (beta) and once per statistics pass ([G, 1]'beta),
  # where a product with Kbar^{-1} per free variance read them twice more each step
  d <- lr_data(n = 100, seed = 6)
  G <- lapply(1:3, function(m) lr_factor(d$K[, , m], rel = 1e-3, rmax = 12))
  st <- lowrank_store(G, jitter = 1e-3)
  for (bias in c("center", "kernel")) {
    fit <- fit_bayes(st, d$yr, "regression", NA, list(update = "scoring", tol = 1e-7, bias = bias),
                     NULL)
    expect_true(fit$converged, info = bias)
    expect_gt(fit$info$scoring_steps, 3L)
    # statistics passes: the start, the scoring phase's start and one per step
    expect_lte(fit$info$factor_passes, fit$info$factorizations + fit$iterations + 2L)
  }
  a <- fit_bayes(lr_dense(G), d$yr, "regression", NA, list(update = "scoring"), NULL)
  expect_identical(a$info$factor_passes, NA_integer_)
})

test_that("MKL-L0/1 on exact factors gives the dense iterates, with either w-step", {
  d <- lr_data(n = 80)
  G <- lapply(1:3, function(m) lr_factor(d$K[, , m]))
  Kx <- lr_dense(G)
  st <- lowrank_store(G)
  for (ws in c("cg", "chol")) {
    ctl <- list(wstep = ws, tol = 1e-6, cg_tol = 1e-12)
    a <- fit_l01(Kx, d$yc, "classification", 1, ctl, NULL)
    b <- fit_l01(st, d$yc, "classification", 1, ctl, NULL)
    expect_true(b$converged, info = ws)
    expect_identical(b$iterations, a$iterations)
    expect_identical(b$state$T, a$state$T)
    expect_lt(abs(b$objective - a$objective) / a$objective, 1e-10)
    expect_lt(max(abs(b$state$w - a$state$w)), 1e-10 * max(abs(a$state$w)))
    expect_lt(max(abs(b$state$d - a$state$d)), 1e-10)
    expect_lt(abs(b$b - a$b), 1e-10)
    expect_identical(b$info$chol_factorizations > 0L, ws == "chol")
  }
  # the "svm" start solves its SVM on the factors (src/lsvm.c): the same point
  ctl <- list(start = "svm", tol = 1e-6, cg_tol = 1e-12)
  a <- fit_l01(Kx, d$yc, "classification", 1, ctl, NULL)
  b <- fit_l01(st, d$yc, "classification", 1, ctl, NULL)
  expect_identical(b$state$T, a$state$T)
  expect_lt(abs(b$objective - a$objective) / a$objective, 1e-6)
})

test_that("MKL-L0/1's Woodbury step on exact factors with kernels held out or at weight 0", {
  # the joint (w, b) step in two passes over the free kernels' factors (src/l01_lowrank.c):
  # Gram matrix of the free kernels only, a free kernel at d = 0, the jitter
  d <- lr_data(n = 90, seed = 5)
  set.seed(5)
  z <- matrix(rnorm(d$n * 2), d$n)
  K <- array(0, c(d$n, d$n, 5))
  K[, , 1:3] <- d$K
  K[, , 4] <- tcrossprod(z[, 1])
  K[, , 5] <- exp(-as.matrix(dist(z))^2 / 2)
  G <- lapply(1:5, function(m) lr_factor(K[, , m]))
  Kx <- lr_dense(G)
  for (m in 1:5) Kx[, , m] <- Kx[, , m] + diag(1e-3, d$n)
  st <- lowrank_store(G, jitter = 1e-3)
  for (sel in c(3, 5)) for (C in c(0.1, 10)) {
    ctl <- list(wstep = "chol", tol = 1e-6, select = sel)
    a <- fit_l01(Kx, d$yc, "classification", C, ctl, NULL)
    b <- fit_l01(st, d$yc, "classification", C, ctl, NULL)
    lab <- paste("select", sel, "C", C)
    expect_identical(b$iterations, a$iterations, label = lab)
    expect_identical(b$state$T, a$state$T, label = lab)
    expect_lt(max(abs(b$state$w - a$state$w)), 1e-10 * max(abs(a$state$w)), label = lab)
    expect_lt(max(abs(b$state$d - a$state$d)), 1e-10, label = lab)
    expect_lt(abs(b$b - a$b), 1e-10, label = lab)
    # some iterations ran with fewer kernels at d > 0 than let in
    expect_lt(min(b$history$n_active), min(sel, 5), label = lab)
  }
})

test_that("MKL-L0/1 on truncated factors: P-stationarity recomputed from the factors", {
  d <- lr_data(n = 100, seed = 9)
  G <- lapply(1:3, function(m) lr_factor(d$K[, , m], rel = 1e-3, rmax = 10))
  st <- lowrank_store(G, jitter = 1e-4)
  y <- d$yc
  Kx <- lr_dense(G)
  for (m in 1:3) Kx[, , m] <- Kx[, , m] + diag(1e-4, d$n)
  for (ws in c("cg", "chol")) {
    ctl <- list(wstep = ws, tol = 1e-6, cg_tol = 1e-12)
    fit <- fit_l01(st, y, "classification", 1, ctl, NULL)
    expect_true(fit$converged)
    # the dense fit on G G' + jitter I: the same iterates
    fd <- fit_l01(Kx, y, "classification", 1, ctl, NULL)
    expect_identical(fit$state$T, fd$state$T)
    expect_lt(max(abs(fit$state$w - fd$state$w)), 1e-8 * max(abs(fd$state$w)))
    s <- fit$state; rho1 <- fit$info$rho[1]; Cs <- fit$info$C_scaled
    # K(d) w = sum_m d_m (G_m (G_m' w) + jitter w)
    kdw <- Reduce(`+`, Map(function(g, dm) dm * (drop(g %*% crossprod(g, s$w)) + 1e-4 * s$w),
                           G, s$d))
    r <- s$u + y * kdw + s$b * y - 1
    expect_lt(sqrt(mean(r^2)), 1e-3)
    sv <- 1 - y * kdw - s$b * y - s$lambda / rho1
    # u is the proximal point of sv on the final working set T (frozen here: it cycled)
    expect_gt(fit$info$T_frozen_at, 0L)
    expect_lt(max(abs(s$u - ifelse(s$T, 0, sv))), 1e-5)
    expect_true(all(s$lambda[!s$T] == 0))
    expect_lt(max(abs(s$w + y * s$lambda)), 1e-3 * max(abs(s$w)))
    expect_true(all(s$d >= 0))
    expect_equal(sum(s$d), 1, tolerance = 1e-12)
    expect_equal(fit$objective, 0.5 * sum(s$w * kdw) + Cs * sum(s$u > 0), tolerance = 1e-10)
  }
})

test_that("the registry marks SpicyMKL, Empirical Bayes and L0/1 low rank; memory O(n R)", {
  expect_true(method_info("spicy")$lowrank)
  expect_true(method_info("bayes")$lowrank)
  expect_true(method_info("l01")$lowrank)
  n <- 1e5; M <- 10; R <- 1000
  for (m in c("spicy", "bayes", "l01")) {
    p <- memory_parts(m, n, M, "lowrank", 1L, method_control(m, list(rank = R / M)), R = R)
    expect_equal(sum(p$bytes[p$kind == "buffers"]), 0, info = m)
    expect_lt(sum(p$bytes), 8 * n * (3 * R + 100 * M), label = m)   # O(n (R + M)), not n^2
  }
})

test_that("mkl() on the full-rank low-rank store predicts as the dense fit (spicy, bayes, l01)", {
  set.seed(8)
  n <- 80
  x <- matrix(rnorm(n * 3), n); z <- matrix(rnorm(40 * 3), 40)
  yc <- factor(ifelse(x[, 1] + x[, 2]^2 > 1, "a", "b")); yr <- sin(x[, 1]) + x[, 3]
  ks <- kernel_set(rbf_kernel(c(1, 3)), poly_kernel(2))
  for (method in c("spicy", "bayes", "l01")) {
    y <- if (method == "bayes") yr else yc
    tol <- c(spicy = 1e-8, bayes = 1e-5, l01 = 1e-4)[[method]]   # bayes: rounding near 1e-6
    run <- function(store, ...) mkl(x, y, kernels = ks, method = method,
                                    control = mkl_control(store = store, tol = tol, ...))
    fd <- run("dense")
    fl <- run("lowrank", rank = n, lowrank_tol = 0)
    expect_identical(fl$store, "lowrank")
    expect_equal(fl$objective, fd$objective, tolerance = 1e-6, label = method)
    pd <- predict(fd, z, type = "link"); pl <- predict(fl, z, type = "link")
    expect_lt(max(abs(pd - pl)), 1e-4 * max(1, abs(pd)), label = method)
  }
})

test_that("MKL-L0/1's default w-step: Woodbury on a low-rank store of small total rank", {
  expect_identical(l01_wstep("auto", TRUE, 100, 200), "chol")     # 100^2 = 50 x 200
  expect_identical(l01_wstep("auto", TRUE, 101, 200), "cg")
  expect_identical(l01_wstep("auto", TRUE, 4097, 1e6), "cg")      # G'G and factor too large
  expect_identical(l01_wstep("auto", FALSE, 10, 1e6), "cg")       # dense, on the fly: n x n
  expect_identical(l01_wstep("cg", TRUE, 10, 1e6), "cg")
  expect_identical(l01_wstep("chol", FALSE, 10, 10), "chol")
  set.seed(5)
  n <- 300
  x <- matrix(rnorm(n * 3), n); z <- matrix(rnorm(200 * 3), 200)
  y <- factor(ifelse(x[, 1] + x[, 2]^2 - 1 + rnorm(n, sd = 0.3) > 0, "a", "b"))
  ks <- kernel_set(rbf_kernel(c(1, 3)))
  run <- function(...) mkl(x, y, kernels = ks, method = "l01",
                           control = mkl_control(nthreads = 1, platt = "train", ...))
  fa <- run(store = "lowrank", rank = 20)                  # R <= 40: 40^2 <= 50 x 300
  expect_identical(fa$info$wstep, "chol")
  expect_gt(fa$info$chol_factorizations, 0L)
  expect_identical(fa$info$cg_iterations, 0L)
  # the same fit as the Woodbury step asked for by name; CG reaches its fixed point
  fc <- run(store = "lowrank", rank = 20, wstep = "chol")
  expect_identical(fa$state, fc$state)
  fg <- run(store = "lowrank", rank = 20, wstep = "cg")
  expect_identical(fg$info$wstep, "cg")
  expect_gt(fg$info$cg_iterations, 0L)
  expect_gte(mean(predict(fa, z) == predict(fg, z)), 0.99)
  expect_identical(run(store = "dense")$info$wstep, "cg")
  # the memory check counts Woodbury's G'G and factor when "auto" takes it
  p <- memory_parts("l01", n, 2, "lowrank", 1L, method_control("l01", list(rank = 20)),
                    R = 40)
  expect_true(any(grepl("G'G", p$part)))
  p <- memory_parts("l01", n, 2, "lowrank", 1L, method_control("l01", list(rank = 100)),
                    R = 200)
  expect_false(any(grepl("G'G", p$part)))
})

test_that("MKL-L0/1 on a low-rank store with more kernels than `select` lets in `select`", {
  set.seed(5)
  n <- 150
  x <- matrix(rnorm(n * 3), n)
  y <- ifelse(x[, 1] + x[, 2]^2 - 1 + rnorm(n, sd = 0.3) > 0, 1, -1)
  ks <- kernel_set(rbf_kernel(sigma = c(0.5, 1, 2, 4, 8)), poly_kernel(degree = 1:2),
                   features = c("all", "each"))
  fit <- mkl(x, y, kernels = ks, method = "l01",
             control = mkl_control(store = "lowrank", select = 10, nthreads = 1))
  expect_identical(fit$store, "lowrank")
  expect_gte(length(fit$info$held_out), 28 - 10)
  expect_true(all(fit$weights[fit$info$held_out] == 0))
  expect_gt(mean(predict(fit, x) == y), 0.8)
})
