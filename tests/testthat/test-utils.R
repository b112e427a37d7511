# The runtime thread rule (src/utils.c, mk_threads) and the argument checks of R/utils.R.

threads_in <- function(env, requested) {
  # a fresh R process, so that the OpenMP runtime reads the environment at start-up
  rs <- file.path(R.home("bin"), "Rscript")
  code <- sprintf("cat(.Call(mklearn:::C_threads, %dL))", as.integer(requested))
  out <- system2(rs, c("-e", shQuote(code)), stdout = TRUE, stderr = FALSE,
                 env = c(env, sprintf("R_LIBS=%s", paste(.libPaths(), collapse = ":"))))
  as.integer(utils::tail(out, 1L))
}

test_that("the thread count respects OMP_NUM_THREADS, OMP_THREAD_LIMIT and the processors", {
  skip_on_cran()
  skip_if(.Call(mklearn:::C_threads, 2L) < 2L, "built without OpenMP or on one processor")
  expect_identical(threads_in("OMP_NUM_THREADS=1", 0L), 1L)
  expect_identical(threads_in("OMP_THREAD_LIMIT=1", 0L), 1L)
  expect_identical(threads_in("OMP_THREAD_LIMIT=1", 2L), 1L)
  expect_identical(threads_in("OMP_NUM_THREADS=2", 0L), 2L)
  np <- parallel::detectCores(logical = TRUE)
  expect_lte(.Call(mklearn:::C_threads, 1000L), np)
})

test_that("a forked child runs on one thread", {
  skip_on_os("windows")
  skip_if(.Call(mklearn:::C_threads, 2L) < 2L, "built without OpenMP or on one processor")
  child <- parallel::mclapply(1:2, function(i) .Call(mklearn:::C_threads, 2L), mc.cores = 2L)
  expect_identical(unlist(child), c(1L, 1L))
  expect_identical(.Call(mklearn:::C_threads, 2L), 2L)
})

test_that("thread arguments are checked", {
  expect_error(mklearn:::check_threads(-1), "'nthreads' must be one non-negative integer")
  expect_error(mklearn:::check_threads(1.5), "'nthreads'")
  # a valid count is kept, up to the processors available (more: capped, with a message)
  expect_identical(suppressMessages(mklearn:::check_threads(3)),
                   min(3L, mklearn:::max_threads()))
})

test_that("standardisation that overflows is an error naming the column", {
  d <- two_class(30, 3, seed = 10)
  x <- d$x
  x[, "v3"] <- x[, "v3"] * 1e300
  expect_error(mkl(x, d$y, kernels = kernel_set(rbf_kernel(1))), "overflows.*v3")
})

test_that("nthreads is capped at the processors available, with a message", {
  expect_message(ctl <- mkl_control(nthreads = 1000), "processor")
  expect_lte(ctl$nthreads, mklearn:::max_threads())
  expect_message(gram(kernel_set(rbf_kernel(1)), matrix(1:6, 3), nthreads = 1000), "processor")
})

# ---- checks of precomputed kernels (as_kernel_array, C_check_kernels)
kernel_case <- function(n = 30, seed = 3) {
  set.seed(seed)
  x <- matrix(rnorm(2 * n), n)
  list(D = as.matrix(stats::dist(x)), y = rep(c(-1, 1), length.out = n), x = x)
}

test_that("the fast check refuses what it can see in one pass, with its own message", {
  kc <- kernel_case()
  y <- kc$y
  # a distance matrix: zero diagonal, positive off-diagonal -> a negative 2 x 2 minor
  expect_error(mkl(NULL, y, kernels = kc$D, method = "uniform"),
               "sqrt\\(K\\[i, i\\] K\\[j, j\\]\\).*kernel 1: i = [0-9]+, j = [0-9]+.*distance")
  # the pair named is a real violation
  msg <- tryCatch(mkl(NULL, y, kernels = kc$D), error = conditionMessage)
  ij <- regmatches(msg, regexpr("i = [0-9]+, j = [0-9]+", msg))
  ij <- as.integer(strsplit(gsub("[^0-9,]", "", ij), ",")[[1]])
  expect_gt(kc$D[ij[1], ij[2]]^2, kc$D[ij[1], ij[1]] * kc$D[ij[2], ij[2]])
  # a negative diagonal entry (kernel 2 of a list)
  G <- exp(-kc$D^2 / 2)
  Gneg <- G; Gneg[4, 4] <- -0.5
  expect_error(mkl(NULL, y, kernels = list(G, Gneg)),
               "kernel\\(s\\) 2 not positive semidefinite: a negative diagonal entry")
  # strongly indefinite with unit diagonal and |K_ij| < 1: a test vector finds v'Kv < 0
  set.seed(1)
  A <- matrix(sample(c(-0.9, 0.9), 900, TRUE), 30)
  A[lower.tri(A)] <- t(A)[lower.tri(A)]
  diag(A) <- 1
  expect_error(mkl(NULL, y, kernels = A), "v'Kv < 0 for a test vector")
  # asymmetry, and non-finite values named by kernel
  Gas <- G; Gas[1, 2] <- Gas[1, 2] + 1e-3
  expect_error(mkl(NULL, y, kernels = list(G, G, Gas)), "kernel\\(s\\) 3 not symmetric")
  Gna <- G; Gna[3, 5] <- NA
  expect_error(mkl(NULL, y, kernels = list(G, Gna)), "NA or infinite values \\(kernel\\(s\\) 2\\)")
  Ginf <- G; Ginf[2, 2] <- Inf
  expect_error(mkl(NULL, y, kernels = list(Ginf, G)), "NA or infinite values \\(kernel\\(s\\) 1\\)")
  # a valid kernel passes (and kernels that differ by rounding only are symmetric enough)
  expect_s3_class(mkl(NULL, y, kernels = list(G, G + 1e-17 * upper.tri(G))), "mkl")
})

test_that("a kernel that passes the fast check but is not PSD is caught by check_kernels = 'full'", {
  kc <- kernel_case()
  # a neighbourhood graph (1 where points are within 1.2): unit diagonal, entries in {0, 1},
  # every 2 x 2 minor >= 0, but indefinite
  A <- 1 * (kc$D < 1.2)
  expect_lt(min(eigen(A, symmetric = TRUE, only.values = TRUE)$values), -1)
  expect_s3_class(mkl(NULL, kc$y, kernels = A, method = "uniform"), "mkl")
  expect_error(mkl(NULL, kc$y, kernels = A, method = "uniform",
                   control = mkl_control(check_kernels = "full")),
               "kernel\\(s\\) 1 not positive semidefinite \\(smallest eigenvalue -[0-9.]+")
  # every fast-check certificate is an upper bound on the smallest eigenvalue
  Ks <- array(c(A, exp(-kc$D^2 / 2), kc$D), c(30, 30, 3))
  r <- .Call(mklearn:::C_check_kernels, Ks, 2L, 1L)
  ev <- apply(Ks, 3, function(K) min(eigen(K, symmetric = TRUE, only.values = TRUE)$values)) /
    apply(abs(Ks), 3, max)
  expect_equal(r$min_eigen, ev, tolerance = 1e-10)
  # (min_minor is 0 when no 2 x 2 minor is negative)
  expect_true(all(r$min_diag >= r$min_eigen - 1e-12))
  expect_true(all(r$min_rayleigh >= r$min_eigen - 1e-12))
  expect_true(all(r$min_minor >= pmin(r$min_eigen, 0) - 1e-12))
  expect_identical(r$min_minor < -1e-8, c(FALSE, FALSE, TRUE))
  # "none" checks finiteness only
  G <- exp(-kc$D^2 / 2)
  Gas <- G; Gas[1, 2] <- Gas[1, 2] + 1e-6
  expect_error(mkl(NULL, kc$y, kernels = Gas, method = "uniform"), "not symmetric")
  expect_s3_class(mkl(NULL, kc$y, kernels = Gas, method = "uniform",
                      control = mkl_control(check_kernels = "none")), "mkl")
  Dna <- kc$D; Dna[1, 1] <- NaN
  expect_error(mkl(NULL, kc$y, kernels = Dna, control = mkl_control(check_kernels = "none")),
               "NA or infinite values")
})

test_that("the fast check gives the same answer on one thread and two, at any size", {
  skip_if(.Call(mklearn:::C_threads, 2L) < 2L, "built without OpenMP or on one processor")
  set.seed(5)
  n <- 150                       # three tile columns, a partial last one
  x <- matrix(rnorm(3 * n), n)
  G <- exp(-as.matrix(stats::dist(x))^2 / 4)
  K <- array(c(G, 1 * (G > 0.3), as.matrix(stats::dist(x))), c(n, n, 3))
  K[n, n - 1, 2] <- K[n, n - 1, 2] + 1   # asymmetric in the last tile
  r1 <- .Call(mklearn:::C_check_kernels, K, 1L, 1L)
  r2 <- .Call(mklearn:::C_check_kernels, K, 1L, 2L)
  expect_identical(r1[c("nonfinite", "asymmetry", "min_diag", "minor_pair")],
                   r2[c("nonfinite", "asymmetry", "min_diag", "minor_pair")])
  expect_equal(r1$min_rayleigh, r2$min_rayleigh, tolerance = 1e-12)
  expect_equal(r1$asymmetry, c(0, 0.5, 0))
  expect_equal(r1$min_diag, c(1, 0.5, 0))
  expect_identical(.Call(mklearn:::C_check_kernels, K[1:5, , , drop = FALSE], 0L, 1L)$nonfinite,
                   rep(FALSE, 3))
})

test_that("constant columns are judged relative to the column's magnitude, named or numbered", {
  x <- as.matrix(iris[1:100, 1:4])
  s <- mklearn:::standardize_x(x * 1e-13)
  expect_equal(s$x, mklearn:::standardize_x(x)$x, tolerance = 1e-10)
  s <- mklearn:::standardize_x(x * 1e-300)          # squares underflow
  expect_equal(s$x, mklearn:::standardize_x(x)$x, tolerance = 1e-10)
  xc <- cbind(x, 5 + 1e-15 * (1:100))
  expect_error(mklearn:::standardize_x(xc), "constant column\\(s\\): column 5")
  colnames(xc)[2] <- ""
  xc[, 2] <- 0
  expect_error(mklearn:::standardize_x(xc),
               "constant column\\(s\\): column 2, column 5\\. Remove them")
  expect_error(mklearn:::standardize_x(xc, "range"), "constant column\\(s\\): column 2")
})
