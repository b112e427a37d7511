# The low-rank store backend (src/store_lowrank.c, src/store_lowrank_chol.c, R/store.R): factors
# at full rank read as the dense store in every primitive, truncated factors report their
# residual trace, and every method but MWUMKL fits on it.

store_call <- function(name, ...) .Call(getFromNamespace(paste0("C_", name), "mklearn"), ...)

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

# Data and a kernel set in three normalisations. On all features its kernels are well
# conditioned at n = 40 or of exact low rank, so that full-rank test rows are exact to rounding
# too; the one-feature Gaussians are numerically rank deficient (their pivots stop at the
# rounding floor, and test rows are exact only to about the square root of it).
lr_data <- function(n = 40, p = 3, seed = 3) {
  set.seed(seed)
  x <- matrix(rnorm(n * p), n, p)
  list(x = x, z = matrix(rnorm(15 * p), 15, p))
}
lr_set <- function(norm, features = c("all", "each"))
  kernel_set(rbf_kernel(c(0.5, 1)), poly_kernel(1:2), laplace_kernel(1), features = features,
             normalize = norm)
resolve <- function(ks, x) mklearn:::resolve_kernels(ks, ncol(x), colnames(x))
rel <- function(a, b) max(abs(a - b)) / max(abs(b))

test_that("at full rank the low-rank store equals the dense store to 1e-10 in every primitive", {
  d <- lr_data()
  n <- nrow(d$x)
  for (norm in c("trace", "center_trace", "none")) {
    rk <- resolve(lr_set(norm), d$x)
    M <- nrow(rk$table)
    ds <- mklearn:::dense_store(rk, d$x)
    lr <- mklearn:::lowrank_train(rk, d$x, tol = 0, rank = n)
    expect_identical(mklearn:::store_dims(lr), c(n, n, M))
    expect_true(all(lr$factors$rank <= n))
    expect_lt(rel(lr$scale, ds$scale), 1e-12, label = norm)
    set.seed(4)
    v <- rnorm(n)
    a <- matrix(rnorm(n * M), n)
    idx <- c(M, 1:(M - 1))
    for (j in c(1L, 17L, n))
      expect_lt(rel(store_call("store_cols", lr, 1:M, j), store_call("store_cols", ds, 1:M, j)),
                1e-10, label = paste(norm, j))
    expect_lt(rel(store_call("store_mv", lr, idx, v), store_call("store_mv", ds, idx, v)), 1e-10,
              label = norm)
    expect_lt(rel(store_call("store_quad", lr, idx, v), store_call("store_quad", ds, idx, v)),
              1e-10, label = norm)
    expect_lt(rel(store_call("store_decision", lr, idx, a),
                  store_call("store_decision", ds, idx, a)), 1e-10, label = norm)
    w <- seq_len(M) / M
    expect_lt(rel(store_call("store_combine", lr, w), store_call("store_combine", ds, w)), 1e-10,
              label = norm)
    expect_lt(rel(lr$diag_mean, store_call("store_stats", ds)$diag_mean), 1e-10, label = norm)
    # G_m' x, the factors' product the solvers read
    tm <- store_call("store_factor_tmul", lr, 2L, v)
    G2 <- lr$G[, lr$goff[2] + seq_len(lr$factors$rank[[2]]), drop = FALSE]
    expect_equal(tm, drop(crossprod(G2, v)), tolerance = 1e-12)

    # test rows: the test factors against the training factors give the dense test kernels
    # (kernels on all features: see lr_data)
    rk <- resolve(lr_set(norm, "all"), d$x)
    M <- nrow(rk$table)
    ds <- mklearn:::dense_store(rk, d$x)
    lr <- mklearn:::lowrank_train(rk, d$x, tol = 0, rank = n)
    Gz <- mklearn:::lowrank_test_factors(lr, rk, d$x, d$z)
    te <- mklearn:::test_store(rk, d$x, d$z, ds, seq_len(M))
    Kt <- store_call("store_dense", te)
    lt <- mklearn:::lowrank_store(lapply(seq_len(M), function(m)
      lr$G[, lr$goff[m] + seq_len(lr$factors$rank[[m]]), drop = FALSE]), 0,
      Gz = lapply(seq_len(M), function(m)
        Gz[, lr$goff[m] + seq_len(lr$factors$rank[[m]]), drop = FALSE]))
    at <- matrix(rnorm(n * M), n)
    expect_lt(rel(store_call("store_decision", lt, 1:M, at),
                  store_call("store_decision", mklearn:::as_store(Kt), 1:M, at)), 1e-10,
              label = norm)
    for (j in c(2L, 30L))
      expect_lt(rel(store_call("store_cols", lt, 1:M, j),
                    store_call("store_cols", mklearn:::as_store(Kt), 1:M, j)), 1e-10,
                label = paste(norm, "test", j))
  }
})

test_that("truncated factors report the residual trace of each kernel and meet the stopping rule", {
  d <- lr_data(n = 60)
  rk <- resolve(lr_set("trace"), d$x)
  M <- nrow(rk$table)
  ds <- mklearn:::dense_store(rk, d$x)
  for (tol in c(1e-2, 1e-4)) {
    lr <- mklearn:::lowrank_train(rk, d$x, tol = tol, rank = 25L)
    f <- lr$factors
    for (m in seq_len(M)) {
      G <- lr$G[, f$goff[m] + seq_len(f$rank[[m]]), drop = FALSE]
      K <- ds$K[, , m] - diag(rk$jitter, nrow(d$x))
      # the reported error is trace(K - G G') / trace(K), computed here from the dense kernel
      expect_equal(f$error[[m]], sum(diag(K - tcrossprod(G))) / sum(diag(K)), tolerance = 1e-9,
                   label = paste(tol, m))
      expect_true(f$rank[[m]] <= 25L)
      # it stops at the tolerance or at the cap, whichever comes first
      expect_true(f$error[[m]] <= tol || f$rank[[m]] == 25L, label = paste(tol, m))
      if (f$rank[[m]] > 1L) {   # one pivot fewer would not have met the tolerance
        G1 <- G[, -ncol(G), drop = FALSE]
        expect_gt(sum(diag(K - tcrossprod(G1))) / sum(diag(K)), tol)
      }
    }
  }
  # the centred normalisation: the error is that of the raw kernel
  rk <- resolve(lr_set("center_trace"), d$x)
  lr <- mklearn:::lowrank_train(rk, d$x, tol = 1e-3, rank = 60L)
  raw <- mklearn:::lowrank_train(resolve(lr_set("none"), d$x), d$x, tol = 1e-3, rank = 60L)
  expect_equal(lr$factors$error, raw$factors$error)
  expect_equal(lr$factors$piv, raw$factors$piv)
})

test_that("every method but MWUMKL fits on the low-rank store at full rank with the dense answer", {
  set.seed(7)
  n <- 50
  x <- matrix(rnorm(n * 3), n)
  y <- ifelse(x[, 1] - x[, 2]^2 + 0.8 + 0.4 * rnorm(n) > 0, 1, -1)
  yr <- x[, 1] - x[, 2]^2 + 0.2 * rnorm(n)
  z <- matrix(rnorm(30), 10)
  ks <- kernel_set(rbf_kernel(c(0.5, 1)), poly_kernel(1), features = c("all", "each"))
  fits <- list(uniform = list(), spicy = list(), simple = list(), hessian = list(),
               lp = list(p = 2), bayes = list(), l01 = list(),
               uniform_reg = list(method = "uniform", y = yr),
               spicy_reg = list(method = "spicy", y = yr))
  for (nm in names(fits)) {
    a <- fits[[nm]]
    method <- if (is.null(a$method)) nm else a$method
    yy <- if (is.null(a$y)) y else a$y
    a$method <- NULL; a$y <- NULL
    tol <- if (method == "l01") 1e-6 else 1e-8
    run <- function(store, ...) suppressWarnings(do.call(mkl, c(list(x, yy, kernels = ks,
      method = method, control = mkl_control(store = store, tol = tol, ...)), a)))
    fd <- run("dense")
    fl <- run("lowrank", rank = n, lowrank_tol = 0)
    expect_identical(fl$store, "lowrank")
    expect_lt(max(fl$lowrank$error), 1e-12)
    expect_equal(fl$objective, fd$objective, tolerance = 1e-6, label = nm)
    expect_equal(unname(fl$weights), unname(fd$weights), tolerance = 1e-4, label = nm)
    pd <- predict(fd, z, type = "link")
    pl <- predict(fl, z, type = "link")
    expect_lt(max(abs(pl - pd)) / max(abs(pd)), 1e-3, label = nm)
    expect_lt(max(abs(fl$fitted - fd$fitted)) / max(abs(fd$fitted)), 1e-3, label = nm)
  }
})

test_that("predict on the low-rank store equals the dense one to 1e-10 for the same coefficients", {
  d <- lr_data(n = 40)
  y <- ifelse(d$x[, 1] > 0, 1, -1)
  ks <- lr_set("center_trace", "all")
  fl <- suppressWarnings(mkl(d$x, y, kernels = ks, method = "uniform", standardize = FALSE,
                             control = mkl_control(store = "lowrank", rank = 40, lowrank_tol = 0)))
  # the same model read through dense test kernels
  rk <- fl$kernel_info
  ds <- mklearn:::dense_store(rk, fl$x)
  act <- which(fl$weights > 0)
  te <- mklearn:::test_store(rk, fl$x, d$z, ds, act)
  f_dense <- fl$b + store_call("store_decision", mklearn:::as_store(store_call("store_dense", te)),
                               seq_along(act), fl$alpha[, act, drop = FALSE])
  expect_lt(max(abs(predict(fl, d$z, type = "link") - f_dense)), 1e-10)
  # training rows: predict gives the fitted values
  expect_lt(max(abs(predict(fl, d$x, type = "link") - fl$fitted)), 1e-10)
  expect_output(print(fl), "low-rank kernels \\(pivoted Cholesky\\): rank")
  expect_output(print(summary(fl)), "relative residual trace at most")
  expect_identical(names(fl$lowrank$rank), fl$labels)
})

test_that("a multiclass fit on the low-rank store predicts as on the dense store", {
  set.seed(9)
  x <- matrix(rnorm(90 * 2), 90)
  y <- factor(c("a", "b", "c")[1 + (x[, 1] > 0.4) + (x[, 2] > 0.4)])
  ks <- kernel_set(rbf_kernel(c(0.7, 2)))
  for (mc in c("ovr", "ovo")) {
    fd <- suppressWarnings(mkl(x, y, kernels = ks, method = "uniform", multiclass = mc,
                               control = mkl_control(store = "dense", tol = 1e-8)))
    fl <- suppressWarnings(mkl(x, y, kernels = ks, method = "uniform", multiclass = mc,
                               control = mkl_control(store = "lowrank", rank = 90,
                                                     lowrank_tol = 0, tol = 1e-8)))
    expect_identical(predict(fl, x), predict(fd, x))
  }
})

test_that("the low-rank settings and the methods that refuse the store are refused by name", {
  expect_error(mkl_control(rank = 0), "'rank' must be one whole number >= 1")
  expect_error(mkl_control(rank = 2.5), "'rank' must be one whole number >= 1")
  expect_error(mkl_control(lowrank_tol = 1), "'lowrank_tol' must be one number in \\[0, 1\\)")
  expect_error(mkl_control(lowrank_tol = -1e-3), "'lowrank_tol' must be one number")
  expect_error(mkl_control(store = "sparse"), "'store'")
  set.seed(1)
  x <- matrix(rnorm(60), 30)
  y <- rep(c(-1, 1), 15)
  expect_error(mkl(x, y, method = "mwu", control = mkl_control(store = "lowrank")),
               "method 'mwu' does not run on the low-rank store .*two exact kernel columns")
  K <- array(diag(30), c(30, 30, 1))
  expect_error(mkl(kernels = K, y = y, control = mkl_control(store = "lowrank")),
               "store = \"lowrank\" factors kernels computed from 'x'")
  expect_error(mkl_memory(100, 3, store = "low"), "'store' must be among")
  m <- mkl_memory(1000, 10, method = c("uniform", "spicy"), store = c("dense", "lowrank"),
                  nthreads = 1, control = mkl_control(rank = 50))
  expect_identical(m$store, c("dense", "lowrank", "dense", "lowrank"))
  expect_false("mwu" %in% mkl_memory(1000, 10, store = "lowrank", nthreads = 1)$method)
  # the factors once (normalised in place, handed to R), plus one kernel's while gathered
  expect_equal(m$kernels[m$method == "uniform" & m$store == "lowrank"], 8 * 1000 * 50 * 11)
})

test_that("store = 'auto' picks the low-rank store for a method registered on it, with a message", {
  reg <- mklearn:::.mkl_registry
  on.exit(assignInNamespace(".mkl_registry", reg, "mklearn"))
  r2 <- reg
  r2$uniform$lowrank <- TRUE
  r2$l01$lowrank <- FALSE   # the method that stays on the fly below
  assignInNamespace(".mkl_registry", r2, "mklearn")
  set.seed(2)
  # (n large enough that the dense need passes the low-rank one with its R garbage, 7.9 MB
  # against 21.4 MB)
  n <- 600
  x <- matrix(rnorm(n * 3), n)
  y <- ifelse(x[, 1] > 0, 1, -1)
  ks <- kernel_set(rbf_kernel(c(1, 3)), poly_kernel(1))
  ctl <- mklearn:::method_control("uniform", mkl_control(memory = 15e6, rank = 20))
  expect_identical(mklearn:::choose_store(ctl, "uniform", n, 3), "lowrank")
  ctl$memory <- 1e8
  expect_identical(mklearn:::choose_store(ctl, "uniform", n, 3), "dense")
  expect_message(fit <- mkl(x, y, kernels = ks, method = "uniform",
                            control = mkl_control(memory = 15e6, rank = 20)),
                 "low-rank kernels \\(pivoted Cholesky\\): rank .* relative residual trace")
  expect_identical(fit$store, "lowrank")
  # a method not registered as scaling on it stays on the fly
  # (on the fly the column cache takes what the budget leaves: costed at a budget below dense)
  ctl <- mklearn:::method_control("l01", mkl_control(rank = 20, nthreads = 1))
  dense <- mklearn:::store_need(ctl, "l01", n, 3, "dense", 1L, "classification", NULL)
  ctl$memory <- 0.9 * dense
  fly <- mklearn:::store_need(ctl, "l01", n, 3, "fly", 1L, "classification", NULL)
  expect_lt(fly, ctl$memory)
  expect_identical(mklearn:::choose_store(ctl, "l01", n, 3), "fly")
})

test_that("case weights are refused on the low-rank store", {
  set.seed(5)
  x <- matrix(rnorm(80 * 3), 80)
  y <- factor(ifelse(x[, 1] + rnorm(80, sd = 0.3) > 0, "a", "b"))
  ks <- kernel_set(rbf_kernel(c(1, 3)))
  w <- rep(c(1, 2), 40)
  expect_error(mkl(x, y, kernels = ks, method = "simple", weights = w,
                   control = mkl_control(store = "lowrank")),
               "case weights .* not supported on the low-rank store")
})

test_that("the factors handed to R (src/store_lowrank_chol.c) behave as any R matrix", {
  set.seed(9)
  x <- matrix(rnorm(300 * 2), 300)
  rk <- mklearn:::resolve_kernels(kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(1)), 2, NULL)
  lr <- mklearn:::lowrank_train(rk, x, tol = 0, rank = 300L)
  G <- lr$G
  G2 <- G
  G2[1, 1] <- G2[1, 1] + 1
  expect_identical(dim(G), c(300L, sum(lr$factors$rank)))
  expect_equal(G2[1, 1] - G[1, 1], 1)
  rm(lr, G2)
  invisible(gc())
  expect_true(identical(G, mklearn:::lowrank_train(rk, x, tol = 0, rank = 300L)$G))
})

test_that("the neighbours of a low-rank combination equal its columns', sampled rows nearly", {
  set.seed(4)
  x <- matrix(rnorm(300 * 3), 300)
  rk <- mklearn:::resolve_kernels(kernel_set(rbf_kernel(c(0.5, 2))), 3, NULL)
  st <- mklearn:::lowrank_train(rk, x, 1e-3, 60L, 1L)
  w <- c(0.3, 0.7)
  js <- unique(round(seq(1, 300, length.out = 50)))
  by_cols <- mean(vapply(js, function(j) {
    k <- drop(.Call(mklearn:::C_store_cols, st, 1:2, as.integer(j)) %*% w)
    sum(k^2) / k[j]^2
  }, 0))
  # every row (n <= rows): the columns' value; 100 of the 300 rows: an estimate within 5 %
  expect_equal(mklearn:::lowrank_combined_neighbours(st, 1:2, w, js), by_cols, tolerance = 1e-10)
  expect_equal(mklearn:::lowrank_combined_neighbours(st, 1:2, w, js, rows = 100L), by_cols,
               tolerance = 0.05)
  expect_false(isTRUE(all.equal(mklearn:::lowrank_combined_neighbours(st, 1:2, w, js,
                                                                      rows = 100L), by_cols,
                                tolerance = 1e-10)))
  # a narrow kernel (a few neighbours, which a sample of rows misses): summed over every row
  rn <- mklearn:::resolve_kernels(kernel_set(rbf_kernel(0.3)), 3, NULL)
  sn <- mklearn:::lowrank_train(rn, x, 1e-3, 300L, 1L)
  col_nb <- mean(vapply(js, function(j) {
    k <- .Call(mklearn:::C_store_cols, sn, 1L, as.integer(j))[, 1L]
    sum(k^2) / k[j]^2
  }, 0))
  expect_lt(col_nb, mklearn:::.neighbour_exact)
  expect_equal(mklearn:::lowrank_combined_neighbours(sn, 1L, 1, js, rows = 20L), col_nb,
               tolerance = 1e-10)
  expect_equal(mklearn:::kernel_neighbours(sn, 1L, cols = 50L), col_nb, tolerance = 1e-10)
  is <- mklearn:::spread_rows(300, 20)
  off <- mklearn:::lowrank_offdiag(sn, 1L, 1, js, is)
  d <- vapply(js, function(j) .Call(mklearn:::C_store_cols, sn, 1L, as.integer(j))[j, 1L], 0)
  sampled <- mean((d^2 + off * 299 / (length(is) - (js %in% is))) / d^2)
  expect_gt(abs(sampled / col_nb - 1), 0.2)       # what the sample alone would have said
})

test_that("a subset of a low-rank store counts its kernels' neighbours on its own rows", {
  set.seed(6)
  x <- matrix(rnorm(200 * 2), 200)
  rk <- mklearn:::resolve_kernels(kernel_set(rbf_kernel(0.5)), 2, NULL)
  st <- mklearn:::lowrank_train(rk, x, 1e-6, 200L, 1L)
  st$neighbours <- mklearn:::neighbour_cache(1L)
  all_rows <- mklearn:::store_neighbours(st, 1L)
  sub <- mklearn:::subset_store(st, 1:50)
  expect_equal(mklearn:::store_neighbours(sub, 1L), mklearn:::kernel_neighbours(sub, 1L),
               tolerance = 1e-12)
  expect_lt(mklearn:::store_neighbours(sub, 1L), 0.5 * all_rows)   # a quarter of the rows
})

test_that("the memory check counts a kernel on one binary feature at its rank, not the cap", {
  set.seed(11)
  x <- matrix(rbinom(300 * 20, 1, 0.4), 300, 20, dimnames = list(NULL, paste0("f", 1:20)))
  y <- ifelse(x[, 1] + x[, 2] + rnorm(300, sd = 0.5) > 0.8, 1, -1)
  ks <- kernel_set(rbf_kernel(1), poly_kernel(2), linear_kernel(), features = "each")
  rk <- mklearn:::resolve_kernels(ks, 20, colnames(x))
  b <- mklearn:::lowrank_rank_bound(rk, x, 1e-3)
  expect_equal(b, rep(c(2, 2, 1), 20))
  expect_equal(mklearn:::lowrank_rank_bound(rk, x, 0), rep(300, 60))
  # kernel sets given by their table (random_kernels()): single columns bound by their values
  set.seed(3)
  rr <- mklearn:::resolve_kernels(random_kernels(8, 20, size = 1, design = "mwu"), 20, NULL)
  br <- mklearn:::lowrank_rank_bound(rr, x, 1e-3)
  expect_false(anyNA(br))
  expect_true(all(br <= 2))
  # a budget between the need at these ranks and the need at the rank cap (200 columns each)
  ctl <- mklearn:::method_control("uniform", mkl_control(store = "lowrank", platt = "train"))
  need <- function(bound) {
    ctl$rank_bound <- bound
    sum(mklearn:::memory_parts("uniform", 300, 60, "lowrank", 1, ctl)$bytes)
  }
  lo <- need(b); hi <- need(NULL)
  expect_lt(lo, hi / 2)
  f <- mkl(x, y, ks, method = "uniform", standardize = "none",
           control = mkl_control(store = "lowrank", platt = "train", nthreads = 1,
                                 memory = (lo + hi) / 2))
  expect_identical(f$store, "lowrank")
  expect_equal(unname(f$lowrank$rank), b)   # the bound is the rank the factorisation finds
  # the bound is computed only once a low-rank need is costed: not when the dense store fits
  calls <- 0L
  counted <- function() { calls <<- calls + 1L; b }
  ctl <- mklearn:::method_control("uniform", mkl_control(platt = "train", memory = 1e9))
  expect_identical(mklearn:::choose_store(ctl, "uniform", 300, 60, rank_bound = counted), "dense")
  expect_identical(calls, 0L)
  # at n = 2000 (the same bounds) the dense store refused, the bounded factors fit
  dense <- mklearn:::store_need(ctl, "uniform", 2000, 60, "dense", 1L, "classification", NULL)
  ctl$memory <- 0.9 * dense
  expect_identical(mklearn:::choose_store(ctl, "uniform", 2000, 60, rank_bound = counted),
                   "lowrank")
  expect_identical(calls, 1L)
})

test_that("the squares off the diagonal in C are the R formula's, to the bit, by blocks of rows", {
  # lowrank_offdiag() (src/kstats.c) replaced R's matrices of rows x columns per block: the
  # same dgemm entries, the squares summed per column in long double as colSums(), the blocks
  # added in order from 0
  ref <- function(st, which, w, js, is) {
    A <- matrix(0, length(is), length(js))
    for (k in seq_along(which)) {
      cols <- mklearn:::factor_cols(st, which[k])
      A <- A + w[k] * tcrossprod(st$G[is, cols, drop = FALSE], st$G[js, cols, drop = FALSE])
    }
    hit <- match(js, is)
    off <- colSums(A^2)
    on <- !is.na(hit)
    off[on] <- off[on] - A[cbind(hit[on], which(on))]^2
    off
  }
  set.seed(8)
  n <- 777L
  x <- matrix(rnorm(n * 3), n)
  rk <- mklearn:::resolve_kernels(kernel_set(rbf_kernel(c(0.05, 0.3, 2))), 3, NULL)
  st <- mklearn:::lowrank_train(rk, x, 1e-4, 150L, 1L)
  js <- mklearn:::spread_rows(n, 200)
  is <- mklearn:::spread_rows(n, 250)
  for (wh in list(1L, 3L, 1:3, c(3L, 1L))) {
    w <- if (length(wh) == 1L) 1 else runif(length(wh))
    expect_identical(mklearn:::lowrank_offdiag(st, wh, w, js, is), ref(st, wh, w, js, is))
    blocks <- split(seq_len(n), ceiling(seq_len(n) / 300))
    expect_identical(mklearn:::lowrank_offdiag(st, wh, w, js, NULL, 300L),
                     Reduce(`+`, lapply(blocks, function(b) ref(st, wh, w, js, b)), 0))
  }
})
