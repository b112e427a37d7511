# The kernel store (R/store.R, src/store.c): the on-the-fly backend must give the products of
# the dense one, and the dense one must give R's own products.

store_call <- function(name, ...) .Call(getFromNamespace(paste0("C_", name), "mklearn"), ...)

# Largest error of a against b, per column, relative to a per-column scale (the largest entry
# of the kernel involved, times the size of the vector it was applied to).
rel_err <- function(a, b, scale) {
  a <- as.matrix(a); b <- as.matrix(b)
  stopifnot(identical(dim(a), dim(b)), length(scale) == ncol(b))
  max(abs(a - b) / rep(scale, each = nrow(b)))
}
kmax <- function(K, idx = seq_len(dim(K)[3])) vapply(idx, function(m) max(abs(K[, , m])), 1)

# Non-negative data (the chi-square kernel needs them), no standardisation.
store_data <- function(n = 37, p = 5, seed = 11) {
  set.seed(seed)
  x <- abs(matrix(rnorm(n * p), n, p))
  x[3, 2] <- 0; x[5, 2] <- 0                  # a zero pair: chi-square terms with x + x' = 0
  x
}
all_types <- function() list(rbf_kernel(c(0.7, 3)), poly_kernel(2:3, offset = 0.5),
                             linear_kernel(), laplace_kernel(1.5), chisq_kernel(0.4))
feature_kinds <- function(p) {
  list(all = "all", each = "each", subset = list(c(1, 3), c(2, 4, 5), 4),
       random = "random")
}
make_set <- function(kind, norm, p) {
  if (kind == "random") {
    set.seed(5)
    return(random_kernels(6, p, normalize = norm))
  }
  do.call(kernel_set, c(all_types(), list(features = feature_kinds(p)[[kind]],
                                          normalize = norm)))
}
resolve <- function(ks, x) mklearn:::resolve_kernels(ks, ncol(x), colnames(x))

test_that("fly and dense training stores agree to 1e-12 for every kernel, group kind and normalisation", {
  x <- store_data()
  n <- nrow(x)
  set.seed(21)
  v <- rnorm(n)
  for (norm in c("none", "trace", "center_trace")) for (kind in names(feature_kinds(5))) {
    what <- paste(norm, kind)
    rk <- resolve(make_set(kind, norm, ncol(x)), x)
    M <- nrow(rk$table)
    fs <- mklearn:::fly_store(rk, x)
    ds <- mklearn:::dense_store(rk, x)
    expect_identical(fs$kind, 1L)
    expect_identical(ds$kind, 0L)
    expect_identical(mklearn:::store_dims(fs), c(n, n, M))
    expect_identical(mklearn:::store_dims(ds), c(n, n, M))
    K <- ds$K
    km <- kmax(K)

    # training statistics
    expect_lt(max(abs(fs$scale - ds$scale) / abs(ds$scale)), 1e-12, label = what)
    if (norm == "center_trace") {
      expect_lt(rel_err(fs$colmeans, ds$colmeans, apply(abs(ds$colmeans), 2, max)), 1e-12,
                label = what)
      expect_lt(max(abs(fs$grandmean - ds$grandmean) / pmax(abs(ds$grandmean), km)), 1e-12,
                label = what)
    } else {
      expect_null(fs$colmeans)
      expect_null(ds$colmeans)
    }
    if (norm == "none") expect_equal(ds$scale, rep(1, M))

    # products: all kernels in order, and a permuted subset with a repeat
    sub <- c(M, 1L, if (M > 2) 2L, 1L)
    for (idx in list(seq_len(M), sub)) {
      a <- store_call("store_mv", fs, idx, v)
      b <- store_call("store_mv", ds, idx, v)
      expect_identical(dim(a), c(n, length(idx)))
      expect_lt(rel_err(a, b, km[idx] * sum(abs(v))), 1e-12, label = paste(what, "mv"))
      q1 <- store_call("store_quad", fs, idx, v)
      q2 <- store_call("store_quad", ds, idx, v)
      expect_lt(max(abs(q1 - q2) / (km[idx] * sum(abs(v))^2)), 1e-12, label = paste(what, "quad"))
      alpha <- matrix(rnorm(n * length(idx)), n)
      alpha[sample(length(alpha), length(alpha) %/% 3)] <- 0     # zeros are skipped
      d1 <- store_call("store_decision", fs, idx, alpha)
      d2 <- store_call("store_decision", ds, idx, alpha)
      expect_lt(max(abs(d1 - d2)) / sum(km[idx] * colSums(abs(alpha))), 1e-12,
                label = paste(what, "decision"))
      for (j in c(1L, n %/% 2L, n)) {
        c1 <- store_call("store_cols", fs, idx, j)
        c2 <- store_call("store_cols", ds, idx, j)
        expect_lt(rel_err(c1, c2, km[idx]), 1e-12, label = paste(what, "cols", j))
        # the column is the kernel's own column (jitter included on the diagonal)
        expect_identical(c2, matrix(K[, j, idx], n))
      }
    }
    d <- rep(0, M)
    d[sub] <- runif(length(sub))
    c1 <- store_call("store_combine", fs, d)
    c2 <- store_call("store_combine", ds, d)
    expect_lt(max(abs(c1 - c2)) / sum(d * km), 1e-12, label = paste(what, "combine"))
    # and the dense combination is the weighted sum of the array's slices
    expect_equal(c2, Reduce(`+`, lapply(which(d != 0), function(m) d[m] * K[, , m])),
                 tolerance = 1e-13)
  }
})

test_that("store normalisations equal plain-R ones (training and test by train)", {
  # independent of the package's kernel code: rbf_R() and centre_unit_trace() (helper-data.R)
  x <- store_data()
  set.seed(6)
  z <- abs(matrix(rnorm(9 * ncol(x)), 9))
  n <- nrow(x)
  sig <- c(0.7, 3)
  for (norm in c("none", "trace", "center_trace")) {
    ks <- kernel_set(rbf_kernel(sig), features = list(c(2, 5)), normalize = norm)
    rk <- resolve(ks, x)
    fs <- mklearn:::fly_store(rk, x)
    ds <- mklearn:::dense_store(rk, x)
    for (m in 1:2) {
      A <- rbf_R(x[, c(2, 5)], x[, c(2, 5)], sig[m])
      B <- rbf_R(z[, c(2, 5)], x[, c(2, 5)], sig[m])
      if (norm == "center_trace") {
        ref <- centre_unit_trace(A)
        cm <- colMeans(A)
        Bc <- B - outer(rowMeans(B), cm, "+") + mean(A)
        tref <- Bc / sum(diag(A - outer(cm, cm, "+") + mean(A)))
      } else {
        s <- if (norm == "trace") sum(diag(A)) else 1
        ref <- A / s
        diag(ref) <- diag(ref) + 1e-8
        tref <- B / s
      }
      kfly <- vapply(seq_len(n), function(j) store_call("store_cols", fs, m, j)[, 1], numeric(n))
      expect_equal(ds$K[, , m], ref, tolerance = 1e-12, label = paste(norm, "dense"))
      expect_equal(kfly, ref, tolerance = 1e-12, label = paste(norm, "fly"))
      ts <- mklearn:::test_store(rk, x, z, fs, m)
      tfly <- vapply(seq_len(n), function(j) store_call("store_cols", ts, 1L, j)[, 1], numeric(9))
      expect_equal(tfly, tref, tolerance = 1e-12, label = paste(norm, "test"))
      expect_equal(gram(ks, x, z)[, , m], tref, tolerance = 1e-12, ignore_attr = TRUE)
    }
  }
})

test_that("the fly normalisation is checked: statistics off by 1e-3 show", {
  x <- store_data()
  rk <- resolve(make_set("all", "center_trace", ncol(x)), x)
  fs <- mklearn:::fly_store(rk, x)
  ds <- mklearn:::dense_store(rk, x)
  v <- rnorm(nrow(x))
  M <- nrow(rk$table)
  km <- kmax(ds$K)
  bad <- fs
  bad$scale <- bad$scale * (1 + 1e-3)
  a <- store_call("store_mv", bad, NULL, v)
  b <- store_call("store_mv", ds, NULL, v)
  expect_gt(rel_err(a, b, km * sum(abs(v))), 1e-6)
  bad <- fs
  bad$grandmean <- bad$grandmean * (1 + 1e-3)
  a <- store_call("store_cols", bad, seq_len(M), 2L)
  expect_gt(rel_err(a, store_call("store_cols", ds, seq_len(M), 2L), km), 1e-7)
})

test_that("test-by-train stores agree with gram(ks, x, z) for every kernel, group kind and normalisation", {
  x <- store_data()
  set.seed(4)
  z <- abs(matrix(rnorm(23 * ncol(x)), 23))
  n <- nrow(x); nz <- nrow(z)
  for (norm in c("none", "trace", "center_trace")) for (kind in names(feature_kinds(5))) {
    what <- paste(norm, kind)
    ks <- make_set(kind, norm, ncol(x))
    rk <- resolve(ks, x)
    M <- nrow(rk$table)
    fs <- mklearn:::fly_store(rk, x)
    for (which in list(seq_len(M), c(M, 1L))) {
      Kt <- gram(ks, x, z, which = which)
      expect_identical(dim(Kt), c(nz, n, length(which)))
      ds <- mklearn:::as_store(Kt)
      ts <- mklearn:::test_store(rk, x, z, fs, which)
      expect_identical(mklearn:::store_dims(ts), c(nz, n, length(which)))
      km <- kmax(Kt)
      k <- length(which)
      v <- rnorm(n)
      expect_lt(rel_err(store_call("store_mv", ts, NULL, v), store_call("store_mv", ds, NULL, v),
                        km * sum(abs(v))), 1e-12, label = paste(what, "mv"))
      alpha <- matrix(rnorm(n * k), n)
      d1 <- mklearn:::store_decision(ts, alpha, seq_len(k))
      d2 <- mklearn:::store_decision(ds, alpha, seq_len(k))
      expect_identical(length(d1), nz)
      expect_lt(max(abs(d1 - d2)) / sum(km * colSums(abs(alpha))), 1e-12,
                label = paste(what, "decision"))
      for (j in c(1L, n)) expect_lt(rel_err(store_call("store_cols", ts, seq_len(k), j),
                                            store_call("store_cols", ds, seq_len(k), j), km),
                                    1e-12, label = paste(what, "cols"))
      d <- runif(k)
      expect_lt(max(abs(store_call("store_combine", ts, d) - store_call("store_combine", ds, d))) /
                  sum(d * km), 1e-12, label = paste(what, "combine"))
      # the statistics of the dense training store serve as well as the fly ones
      ts2 <- mklearn:::test_store(rk, x, z, mklearn:::dense_store(rk, x), which)
      expect_lt(rel_err(store_call("store_cols", ts2, seq_len(k), 3L),
                        store_call("store_cols", ds, seq_len(k), 3L), km), 1e-12)
    }
    # a test store is not square: no quadratic forms
    expect_error(store_call("store_quad", mklearn:::test_store(rk, x, z, fs, 1L), NULL, rnorm(n)),
                 "square")
  }
})

test_that("decision values of chained Gaussian kernels equal the dense arrays'", {
  # many Gaussians on one column: the fly store computes a group's Gaussians in increasing
  # gamma, each from the one before (a Taylor link) unless its coefficient is zero; more than
  # 2048 kernels are summed by ranges, the same values for one thread and two
  set.seed(21)
  x <- matrix(runif(40 * 3), 40)
  z <- matrix(runif(25 * 3, -0.2, 1.2), 25)
  for (norm in c("trace", "center_trace")) {
    ks <- random_kernels(2600, 3, size = 1, design = "mwu", normalize = norm)
    rk <- mklearn:::resolve_kernels(ks, 3, NULL)
    fs <- mklearn:::fly_store(rk, x)
    idx <- sample(2600, 2300)
    A <- matrix(rnorm(40 * 2300), 40)
    A[sample(length(A), length(A) %/% 3)] <- 0
    A[7, ] <- 0
    ds <- mklearn:::as_store(gram(ks, x))
    d1 <- mklearn:::store_decision(fs, A, idx)
    d2 <- mklearn:::store_decision(ds, A, idx)
    expect_lt(max(abs(d1 - d2)) / max(abs(d2)), 1e-12, label = paste(norm, "training"))
    ts <- mklearn:::test_store(rk, x, z, fs, idx)
    d1 <- mklearn:::store_decision(ts, A, seq_along(idx))
    d2 <- mklearn:::store_decision(mklearn:::as_store(gram(ks, x, z, which = idx)), A,
                                   seq_along(idx))
    expect_lt(max(abs(d1 - d2)) / max(abs(d2)), 1e-12, label = paste(norm, "test by train"))
    ts$nthreads <- 1L
    expect_identical(mklearn:::store_decision(ts, A, seq_along(idx)), d1)
  }
})

test_that("a dense array wrapped by as_store gives R's own products", {
  set.seed(8)
  n <- 30; M <- 4
  # small integers: every product and sum is exact in any order, so equality is exact
  K <- array(sample(-5:5, n * n * M, replace = TRUE), c(n, n, M))
  for (m in seq_len(M)) K[, , m] <- K[, , m] + t(K[, , m])
  v <- as.double(sample(-3:3, n, replace = TRUE))
  st <- mklearn:::as_store(K)
  expect_true(is.double(st$K))
  idx <- c(3L, 1L, 4L)
  expect_identical(store_call("store_mv", st, idx, v),
                   vapply(idx, function(m) drop(K[, , m] %*% v), numeric(n)))
  expect_identical(store_call("store_quad", st, idx, v),
                   vapply(idx, function(m) drop(v %*% K[, , m] %*% v), 1))
  d <- c(0.5, 0, 2, -1)
  expect_identical(store_call("store_combine", st, d),
                   0.5 * K[, , 1] + 2 * K[, , 3] - K[, , 4])
  alpha <- matrix(as.double(sample(-2:2, n * 3, replace = TRUE)), n)
  expect_identical(mklearn:::store_decision(st, alpha, idx),
                   drop(K[, , 3] %*% alpha[, 1] + K[, , 1] %*% alpha[, 2] +
                          K[, , 4] %*% alpha[, 3]))
  expect_identical(store_call("store_cols", st, idx, 7L), K[, 7, idx] + 0)
  # real-valued, non-square (test by train) blocks, up to rounding order
  Kt <- array(rnorm(11 * n * M), c(11, n, M))
  st <- mklearn:::as_store(Kt)
  v <- rnorm(n)
  expect_equal(store_call("store_mv", st, NULL, v),
               vapply(seq_len(M), function(m) drop(Kt[, , m] %*% v), numeric(11)),
               tolerance = 1e-13)
  alpha <- matrix(rnorm(n * 2), n)
  expect_equal(mklearn:::store_decision(st, alpha, c(2L, 4L)),
               drop(Kt[, , 2] %*% alpha[, 1] + Kt[, , 4] %*% alpha[, 2]), tolerance = 1e-13)
  # a matrix is one kernel; out-of-range indices are refused
  st1 <- mklearn:::as_store(K[, , 2])
  expect_identical(mklearn:::store_dims(st1), c(30L, 30L, 1L))
  expect_error(store_call("store_mv", st1, 2L, v[seq_len(n)]), "out of range")
  expect_error(store_call("store_mv", st1, 1L, v[1:3]), "'v'")
})

test_that("the kernel scale of a dense store is the mean of its diagonals, as the fly store's", {
  # small integers on the diagonals: the mean is exact in any summation order
  set.seed(9)
  n <- 12; M <- 5
  K <- array(rnorm(n * n * M), c(n, n, M))
  for (m in seq_len(M)) diag(K[, , m]) <- sample(1:9, n, replace = TRUE)
  expect_identical(mklearn:::kernel_scale(mklearn:::as_store(K)),
                   mean(vapply(seq_len(M), function(m) mean(diag(K[, , m])), 1)))
  expect_identical(store_call("store_stats", mklearn:::as_store(K))$diag_mean,
                   vapply(seq_len(M), function(m) mean(diag(K[, , m])), 1))
  x <- store_data()
  for (norm in c("none", "trace", "center_trace")) {
    rk <- resolve(make_set("all", norm, ncol(x)), x)
    fly <- mklearn:::fly_store(rk, x)
    dense <- mklearn:::as_store(gram(make_set("all", norm, ncol(x)), x))
    expect_equal(mklearn:::kernel_scale(dense), mklearn:::kernel_scale(fly), tolerance = 1e-13)
  }
  # a constant diagonal gives its value exactly, so a kernel and the submatrix of some of its
  # rows (a one-vs-one problem) share their scale (a plain double sum gives 1/150 + 1e-8 with
  # an error in the last bits, and a different one for each number of rows)
  Kc <- array(0.5, c(150, 150, 3))
  for (m in 1:3) diag(Kc[, , m]) <- 1 / 150 + 1e-8
  expect_identical(mklearn:::kernel_scale(mklearn:::as_store(Kc)), 1 / 150 + 1e-8)
  expect_identical(mklearn:::kernel_scale(mklearn:::as_store(Kc[1:70, 1:70, ])), 1 / 150 + 1e-8)
  expect_error(store_call("store_stats", mklearn:::as_store(K[1:3, , ])),
               "statistics need a training store")
})

test_that("mkl() gives the same uniform fit with store = 'fly' and 'dense', and records it", {
  d <- two_class(n = 90, p = 4, seed = 3)
  xt <- two_class(n = 25, p = 4, seed = 4)$x
  for (norm in c("trace", "center_trace")) {
    ks <- kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(2), laplace_kernel(1),
                     features = list(1:4, c(1, 2), 3:4), normalize = norm)
    fits <- lapply(c("fly", "dense"), function(s)
      mkl(d$x, d$y, kernels = ks, method = "uniform", C = 10,
          control = mkl_control(store = s, svm_tol = 1e-8)))
    expect_identical(fits[[1]]$store, "fly")
    expect_identical(fits[[2]]$store, "dense")
    expect_equal(fits[[1]]$weights, fits[[2]]$weights, tolerance = 1e-10)
    expect_equal(fits[[1]]$alpha, fits[[2]]$alpha, tolerance = 1e-10)
    expect_equal(fits[[1]]$b, fits[[2]]$b, tolerance = 1e-10)
    expect_equal(fits[[1]]$fitted, fits[[2]]$fitted, tolerance = 1e-10)
    expect_equal(predict(fits[[1]], xt, type = "link"), predict(fits[[2]], xt, type = "link"),
                 tolerance = 1e-10)
    expect_identical(predict(fits[[1]], xt), predict(fits[[2]], xt))
    expect_equal(fits[[1]]$normalization$scale, fits[[2]]$normalization$scale,
                 tolerance = 1e-12)
  }
  # regression (kernel ridge) too (on the fly by CG, here to a residual of 1e-13)
  yr <- d$x[, 1] - d$x[, 2]^2
  fr <- lapply(c("fly", "dense"), function(s)
    mkl(d$x, yr, kernels = ks, method = "uniform", C = 5,
        control = mkl_control(store = s, cg_tol = 1e-13)))
  expect_identical(vapply(fr, `[[`, "", "store"), c("fly", "dense"))
  expect_equal(fr[[1]]$alpha, fr[[2]]$alpha, tolerance = 1e-10)
  expect_equal(predict(fr[[1]], xt), predict(fr[[2]], xt), tolerance = 1e-10)
  # "auto" picks by the memory budget (the fly fit's own need fits, the dense one's not)
  # (the least need on the fly: its column cache at 4 entries, as under a tiny budget)
  fly_need <- mkl_memory(nrow(d$x), n_kernels(ks, d$x), "uniform", "fly",
                         control = mkl_control(memory = 1e6))$total
  fa <- mkl(d$x, d$y, kernels = ks, method = "uniform", C = 10,
            control = mkl_control(memory = fly_need))
  expect_identical(fa$store, "fly")
  fa <- mkl(d$x, d$y, kernels = ks, method = "uniform", C = 10, control = mkl_control(memory = 1e9))
  expect_identical(fa$store, "dense")
  # precomputed kernels are used as given: a dense store
  fp <- mkl(NULL, d$y, kernels = gram(ks, d$x), method = "uniform", C = 10)
  expect_identical(fp$store, "dense")
})

test_that("kernel_neighbours is 1 for the identity, n for a constant kernel, and agrees across stores", {
  n <- 30
  K <- array(c(diag(n), matrix(1, n, n)), c(n, n, 2))
  expect_equal(mklearn:::kernel_neighbours(mklearn:::as_store(K)), c(1, n))
  set.seed(3)
  x <- matrix(rnorm(n * 4), n)
  rk <- mklearn:::resolve_kernels(kernel_set(rbf_kernel(c(0.05, 1, 100))), 4, NULL)
  dn <- mklearn:::kernel_neighbours(mklearn:::dense_store(rk, x))
  expect_equal(mklearn:::kernel_neighbours(mklearn:::fly_store(rk, x)), dn, tolerance = 1e-10)
  expect_lt(dn[1], 1.01)
  expect_true(dn[1] < dn[2] && dn[2] < dn[3])
  expect_gt(dn[3], 0.99 * n)
})

test_that("kernels streamed by blocks of columns give SpicyMKL's and SimpleMKL's dense fits", {
  # n = 2900: n^2 doubles exceed the bound, so the fly sweeps stream four columns at a time
  # (their start statistics compute each kernel twice); one outer iteration suffices. About
  # 15 s of CPU: not on CRAN
  skip_on_cran()
  d <- two_class(n = 2900, p = 2, seed = 7)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)))
  expect_match(attr(mkl_memory(2900, 2, "spicy", "fly"), "parts")[[1]]$part, "columns \\(4 n\\)",
               all = FALSE)
  for (m in c("spicy", "simple")) {
    fits <- lapply(c("fly", "dense"), function(s) suppressWarnings(
      mkl(d$x, d$y, kernels = ks, method = m, C = 1,
          control = mkl_control(store = s, maxiter = 1L, nthreads = 1))))
    expect_identical(vapply(fits, `[[`, "", "store"), c("fly", "dense"))
    expect_equal(fits[[1]]$weights, fits[[2]]$weights, tolerance = 1e-8)
    # SimpleMKL's SVM on the fly reads the column cache: its line search may take other steps
    # at rounding level, and its alphas agree to the SMO's tolerance
    expect_equal(fits[[1]]$alpha, fits[[2]]$alpha, tolerance = if (m == "simple") 1e-2 else 1e-8)
    expect_equal(fits[[1]]$objective, fits[[2]]$objective,
                 tolerance = if (m == "simple") 1e-7 else 1e-10)
  }
})

test_that("the neighbour checks in C equal R's formula on dense and on-the-fly stores", {
  # kernel_neighbours(), combined_neighbours() (R/store.R, src/kstats.c): per column j,
  # sum_i K[i, j]^2 / K[j, j]^2, averaged; NA where a diagonal entry read is <= 0
  x <- store_data(53)
  rk <- resolve(kernel_set(rbf_kernel(c(0.3, 2)), poly_kernel(2), features = c("all", "each")), x)
  by_r <- function(K, which, js, w = NULL) {
    one <- function(Kj, j) if (Kj[j] > 0) sum(Kj^2) / Kj[j]^2 else NA_real_
    if (is.null(w)) return(vapply(which, function(m)
      mean(vapply(js, function(j) one(K[, j, m], j), 0)), 0))
    mean(vapply(js, function(j) one(drop(K[, j, which, drop = FALSE][, 1, ] %*% w), j), 0))
  }
  ds <- mklearn:::dense_store(rk, x)
  fs <- mklearn:::fly_store(rk, x)
  K <- ds$K
  M <- dim(K)[3L]
  which <- c(5L, 1L, M)
  w <- c(0.5, 0.2, 0.3)
  for (st in list(ds, fs)) for (cols in c(7L, 200L)) {
    js <- mklearn:::spread_rows(53L, cols)
    expect_equal(mklearn:::kernel_neighbours(st, cols = cols), by_r(K, seq_len(M), js),
                 tolerance = 1e-13)
    expect_equal(mklearn:::combined_neighbours(st, which, w, cols = cols),
                 by_r(K, which, js, w), tolerance = 1e-13)
  }
  # the dense store gives the values of the former R code bit for bit (the same sums in the
  # same order), so the checks' choices do not move
  js <- mklearn:::spread_rows(53L, 200L)
  acc <- double(M)
  for (j in js) {
    Kj <- K[, j, ]
    acc <- acc + ifelse(Kj[j, ] > 0, colSums(Kj^2) / Kj[j, ]^2, NA_real_)
  }
  expect_identical(mklearn:::kernel_neighbours(ds), acc / length(js))
  acc <- 0
  for (j in js) {
    k <- drop(K[, j, which] %*% w)
    acc <- acc + if (k[j] > 0) sum(k^2) / k[j]^2 else NA_real_
  }
  expect_identical(mklearn:::combined_neighbours(ds, which, w), acc / length(js))
  # a non-positive diagonal entry makes the kernel's value NA, not the others'
  K0 <- K
  K0[9, 9, 2] <- 0
  st0 <- mklearn:::as_store(K0)
  nb <- mklearn:::kernel_neighbours(st0)
  expect_true(is.na(nb[2L]))
  expect_identical(nb[-2L], mklearn:::kernel_neighbours(ds)[-2L])
  expect_true(is.na(mklearn:::combined_neighbours(st0, 2L, 1)))
  expect_error(.Call(mklearn:::C_store_neighbours, ds, 1L, 0L, NULL), "out of range")
  expect_error(.Call(mklearn:::C_store_neighbours, ds, 1:2, 1L, 1), "one weight per kernel")
})

test_that("a search's training arrays reuse one block and keep their bits", {
  # with_store_pool() (R/store.R): a freed training array's block is kept for the next one
  # that fits (a garbage collection first frees those no longer referenced); the counts say
  # how many arrays were built in the pool and how many reused its block
  ks <- kernel_set(rbf_kernel(sigma = c(0.5, 2)), poly_kernel(degree = 2))
  d <- two_class(60)
  ref <- gram(ks, d$x[1:50, ])
  b <- mklearn:::with_store_pool(min_bytes = 0, {
    a <- gram(ks, d$x)
    rm(a)
    gram(ks, d$x[1:50, ])             # in the block of the larger array, over its values
  })
  expect_identical(b, ref)
  expect_identical(mklearn:::.store_pool$counts, c(built = 2L, reused = 1L))
  # cv.mkl() runs in the pool (here small arrays are built in it too): every store after the
  # first reuses the block, and the search gives the bits it gives without it (the pool held
  # off by marking it as already on); by default arrays this small are not built in it
  args <- list(d$x, d$y, kernels = ks, method = "hessian", C = c(10, 1), nfolds = 3L,
               screen = NULL, control = mkl_control(store = "dense"))
  set.seed(3)
  cv1 <- mklearn:::with_store_pool(min_bytes = 0, suppressMessages(do.call(cv.mkl, args)))
  expect_identical(mklearn:::.store_pool$counts, c(built = 4L, reused = 3L))
  set.seed(3)
  cv2 <- suppressMessages(do.call(cv.mkl, args))
  expect_identical(mklearn:::.store_pool$counts, c(built = 0L, reused = 0L))
  expect_identical(cv2$cvm, cv1$cvm)
  pool <- mklearn:::.store_pool
  pool$on <- TRUE
  set.seed(3)
  cv0 <- tryCatch(suppressMessages(do.call(cv.mkl, args)), finally = pool$on <- FALSE)
  expect_identical(cv1$cvm, cv0$cvm)
  expect_identical(cv1$fit$fits[[1L]]$weights, cv0$fit$fits[[1L]]$weights)
  expect_identical(predict(cv1, d$x, type = "link"), predict(cv0, d$x, type = "link"))
  expect_error(.Call(mklearn:::C_store_pool, NA, 0), "TRUE or FALSE")
  expect_error(.Call(mklearn:::C_store_pool, TRUE, -1), "number >= 0")
})
