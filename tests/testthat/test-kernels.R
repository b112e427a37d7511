test_that("gram() equals kernlab::kernelMatrix to 1e-12 relative", {
  skip_if_not_installed("kernlab")
  skip_if_not_installed("mlbench")
  d <- ionosphere_xy()
  x <- d$x[1:120, ]
  sig <- c(0.1, 0.5, 1, 5, 20)
  ks <- kernel_set(rbf_kernel(sigma = sig), poly_kernel(degree = 1:3), linear_kernel(),
                   laplace_kernel(sigma = c(0.5, 2)), features = c("all", "each"),
                   normalize = "none", jitter = 0)
  K <- gram(ks, x)
  expect_equal(dim(K), c(120L, 120L, 11L * 34L))
  groups <- c(list(1:33), as.list(1:33))
  m <- 0L; err <- 0
  for (g in groups) {
    xg <- x[, g, drop = FALSE]
    refs <- c(lapply(sig, function(s) kernlab::rbfdot(sigma = 1 / (2 * s^2))),
              lapply(1:3, function(dd) kernlab::polydot(degree = dd, scale = 1, offset = 1)),
              list(kernlab::vanilladot()))
    for (kf in refs) {
      m <- m + 1L
      ref <- kernlab::kernelMatrix(kf, xg)
      err <- max(err, max(abs(K[, , m] - ref)) / max(abs(ref)))
    }
    # kernlab's laplacedot takes a square root of an expanded, cancelling distance, which is
    # accurate to ~1e-8 only; compare the Laplace kernels with the exact distances instead
    D <- as.matrix(dist(xg))
    for (s in c(0.5, 2)) {
      m <- m + 1L
      err <- max(err, max(abs(K[, , m] - exp(-D / s))))
    }
  }
  expect_lt(err, 1e-12)
  expect_identical(dimnames(K)[[3]][1], "rbf(sigma=0.1)[all]")
  expect_identical(dimnames(K)[[3]][12], "rbf(sigma=0.1)[V1]")
})

test_that("the chi-square kernel matches its definition", {
  set.seed(3)
  x <- matrix(rexp(40), 10)
  x[1, 2] <- 0; x[2, 2] <- 0
  K <- gram(kernel_set(chisq_kernel(gamma = c(0.5, 2)), normalize = "none", jitter = 0), x)
  ref <- outer(1:10, 1:10, Vectorize(function(i, j) {
    a <- x[i, ]; b <- x[j, ]; s <- a + b
    sum(ifelse(s > 0, (a - b)^2 / s, 0))
  }))
  expect_equal(K[, , 1], exp(-0.5 * ref), tolerance = 1e-13)
  expect_equal(K[, , 2], exp(-2 * ref), tolerance = 1e-13)
  expect_error(gram(kernel_set(chisq_kernel()), x - 1), "non-negative")
})

test_that("normalisation: unit trace, centring, jitter, and test kernels use training statistics", {
  d <- two_class(30, 3)
  z <- matrix(rnorm(12), 4, 3, dimnames = list(NULL, colnames(d$x)))
  s <- 1.3
  Kraw <- rbf_R(d$x, d$x, s); Ktz <- rbf_R(z, d$x, s)
  K <- gram(kernel_set(rbf_kernel(s), jitter = 1e-8), d$x)
  expect_equal(K[, , 1], Kraw / sum(diag(Kraw)) + diag(1e-8, 30), tolerance = 1e-12)
  expect_equal(gram(kernel_set(rbf_kernel(s)), d$x, z)[, , 1], Ktz / sum(diag(Kraw)),
               tolerance = 1e-12)
  H <- diag(30) - 1 / 30
  Kc <- H %*% Kraw %*% H
  ksc <- kernel_set(rbf_kernel(s), normalize = "center_trace", jitter = 0)
  expect_equal(gram(ksc, d$x)[, , 1], Kc / sum(diag(Kc)), tolerance = 1e-12)
  Ktc <- Ktz - rowMeans(Ktz) - matrix(colMeans(Kraw), 4, 30, byrow = TRUE) + mean(Kraw)
  expect_equal(gram(ksc, d$x, z)[, , 1], Ktc / sum(diag(Kc)), tolerance = 1e-12)
  # a subset of kernels gives the same matrices as the full set
  ks2 <- kernel_set(rbf_kernel(c(0.5, 1, 2)), poly_kernel(2), features = c("all", "each"))
  full <- gram(ks2, d$x, z)
  sub <- gram(ks2, d$x, z, which = c(2, 7, 16))
  expect_equal(unname(sub), unname(full[, , c(2, 7, 16)]))
  expect_identical(dimnames(sub)[[3]], dimnames(full)[[3]][c(2, 7, 16)])
})

test_that("threads do not change the result", {
  d <- two_class(50, 5)
  ks <- kernel_set(rbf_kernel(c(0.5, 1)), poly_kernel(1:2), features = c("all", "each"))
  expect_identical(gram(ks, d$x, nthreads = 1), gram(ks, d$x, nthreads = 2))
})

test_that("feature subsets by index and by name, and labels", {
  d <- two_class(20, 4)
  ks <- kernel_set(rbf_kernel(1), features = list(1:2, c("v3", "v4"), "all"))
  K <- gram(ks, d$x)
  expect_identical(dimnames(K)[[3]], c("rbf(sigma=1)[v1,v2]", "rbf(sigma=1)[v3,v4]",
                                       "rbf(sigma=1)[all]"))
  expect_equal(K[, , 2] * sum(diag(rbf_R(d$x[, 3:4], d$x[, 3:4], 1))),
               rbf_R(d$x[, 3:4], d$x[, 3:4], 1) + diag(1e-8, 20) *
                 sum(diag(rbf_R(d$x[, 3:4], d$x[, 3:4], 1))), tolerance = 1e-12)
  expect_error(gram(kernel_set(rbf_kernel(1), features = list("zz")), d$x), "unknown column")
  expect_error(gram(kernel_set(rbf_kernel(1), features = list(9)), d$x), "between 1 and 4")
})

test_that("random_kernels() follows the SpicyMKL design", {
  set.seed(10)
  ks <- random_kernels(200, p = 20)
  expect_s3_class(ks, "kernel_set")
  expect_equal(n_kernels(ks, matrix(0, 3, 20)), 200L)
  expect_true(all(ks$explicit$par1 >= 0.1))
  expect_gt(mean(ks$explicit$par1), 3)   # E[5 chi^2_1 + 0.1] = 5.1
  expect_true(all(lengths(ks$features) >= 1 & lengths(ks$features) <= 20))
  set.seed(10)
  expect_identical(random_kernels(200, p = 20), ks)
})

test_that("kernel descriptions reject bad input", {
  expect_error(rbf_kernel(-1), "positive finite")
  expect_error(rbf_kernel(c(1, NA)), "positive finite")
  expect_error(poly_kernel(1.5), "positive integers")
  expect_error(poly_kernel(2, offset = -1), "non-negative")
  expect_error(kernel_set(), "at least one kernel family")
  expect_error(kernel_set(1), "kernel family")
  expect_error(kernel_set(rbf_kernel(1), features = "some"), "'features'")
  expect_error(kernel_set(rbf_kernel(1), normalize = "max"), "should be one of")
  expect_error(gram(list(), matrix(1, 2, 2)), "kernel_set")
  expect_error(random_kernels(0, 3), "'M'")
})

test_that("the memory guard names the size and the alternative", {
  old <- options(mklearn.max_bytes = 1e4)
  on.exit(options(old))
  d <- two_class(40, 2)
  expect_error(gram(kernel_set(rbf_kernel(1:2)), d$x), "25.6 KB \\(40 x 40 x 2 doubles\\).*on the fly")
})

test_that("non-finite kernels are an error naming the kernel, in training and prediction", {
  d <- two_class(30, 3, seed = 9)
  big <- d$x
  big[, 2] <- big[, 2] * 1e200
  for (st in c("dense", "fly")) {
    expect_error(mkl(big, d$y, kernels = kernel_set(linear_kernel(), rbf_kernel(1)),
                     standardize = FALSE, control = mkl_control(store = st)),
                 "linear\\[all\\].*non-finite", label = st)
    expect_error(mkl(d$x * 3, d$y, kernels = kernel_set(poly_kernel(500)), standardize = FALSE,
                     control = mkl_control(store = st)),
                 "poly\\(degree=500\\)\\[all\\].*non-finite", label = st)
  }
  expect_error(gram(kernel_set(poly_kernel(500)), d$x * 3), "poly\\(degree=500\\)")
  fit <- mkl(d$x, d$y, kernels = kernel_set(poly_kernel(3), rbf_kernel(1)), standardize = FALSE)
  z <- d$x[1:3, ]
  z[2, 1] <- 1e300
  expect_error(predict(fit, z), "poly\\(degree=3\\)\\[all\\].*non-finite.*new data")
})

test_that("a kernel family where a set is expected points to kernel_set()", {
  d <- two_class(20, 2, seed = 13)
  expect_error(mkl(d$x, d$y, kernels = rbf_kernel(1:2)), "kernel_set\\(")
  expect_error(gram(rbf_kernel(1), d$x), "kernel_set\\(")
  expect_error(cv.mkl(d$x, d$y, kernels = rbf_kernel(1), C = c(2, 1)), "kernel_set\\(")
})

test_that("a large feature group (BLAS products) gives the feature-by-feature values", {
  # 300 x 60: above the BLAS threshold (8 features, 4e6 multiply-adds); rows far from the
  # origin and duplicated rows, where |a|^2 + |b|^2 - 2 <a, b> cancels
  set.seed(11)
  x <- matrix(rnorm(240 * 60), 240) + 50
  x <- rbind(x, x[1:60, ])
  d2 <- as.matrix(stats::dist(x))^2
  ks <- kernel_set(rbf_kernel(c(0.5, 8)), laplace_kernel(3), poly_kernel(2), linear_kernel(),
                   normalize = "none", jitter = 0)
  K <- gram(ks, x)
  ref <- list(exp(-d2 / (2 * 0.25)), exp(-d2 / 128), exp(-sqrt(d2) / 3),
              (tcrossprod(x) + 1)^2, tcrossprod(x))
  for (m in seq_along(ref))
    expect_lt(max(abs(K[, , m] - ref[[m]])) / max(abs(ref[[m]])), 1e-12)
  # duplicated points are at distance exactly 0: the narrow Gaussian is exactly 1 there
  expect_identical(K[cbind(1:60, 241:300, 1L)], rep(1, 60))
  expect_identical(diag(K[, , 3]), rep(1, 300))
  # test-by-train kernels: the same values as the training kernel's rows
  Kt <- gram(ks, x[1:200, ], x[201:300, ])
  Kr <- gram(ks, x[1:200, ])
  d2t <- outer(rowSums(x[201:300, ]^2), rowSums(x[1:200, ]^2), "+") - 2 * tcrossprod(x[201:300, ], x[1:200, ])
  expect_lt(max(abs(Kt[, , 2] - exp(-pmax(d2t, 0) / 128))), 1e-10)
  expect_identical(Kt[cbind(41:100, 1:60, 1L)], rep(1, 60))
  expect_equal(dim(Kt), c(100L, 200L, 5L))
  expect_lt(max(abs(Kt[, , 4] - (tcrossprod(x[201:300, ], x[1:200, ]) + 1)^2)) /
              max(Kt[, , 4]), 1e-12)
  # one thread and two give the same array
  expect_identical(gram(ks, x, nthreads = 1L), K)
})

test_that("widths whose kernel scale overflows are refused by name at construction", {
  expect_error(rbf_kernel(1e-200), "rbf_kernel\\(\\): 'sigma' = 1e-200 is too small.*identity")
  expect_error(rbf_kernel(c(1, 1e-160)), "'sigma' = 1e-160")
  expect_error(laplace_kernel(1e-310), "laplace_kernel\\(\\): 'sigma' = 1e-310 is too small")
  expect_error(mkl(matrix(rnorm(20), 10), rep(c(-1, 1), 5),
                   kernels = kernel_set(rbf_kernel(c(1, 1e-200)))), "'sigma' = 1e-200")
  # the smallest widths whose scale is finite still give a finite (identity) kernel
  x <- matrix(c(0, 1, 3, 0, 2, 1), 3)
  for (ks in list(kernel_set(rbf_kernel(1e-154), normalize = "none", jitter = 0),
                  kernel_set(laplace_kernel(1e-307), normalize = "none", jitter = 0)))
    expect_equal(gram(ks, x)[, , 1], diag(3), ignore_attr = TRUE)
})

test_that("random_kernels() drawn for another number of columns is refused", {
  set.seed(8)
  x <- matrix(rnorm(80), 20)
  ks <- random_kernels(5, p = 2)
  expect_error(gram(ks, x), "drawn for p = 2 columns but the data have 4.*only the first 2")
  expect_error(mkl(x, rep(c(-1, 1), 10), kernels = ks), "random_kernels\\(M, p = 4\\)")
  expect_identical(dim(gram(ks, x[, 1:2])), c(20L, 20L, 5L))
})

test_that("match.arg errors of the kernel constructors name the argument", {
  expect_error(kernel_set(rbf_kernel(1), normalize = "max"), "'normalize' should be one of")
  expect_error(random_kernels(3, 2, design = "x"), "'design' should be one of.*got \"x\"")
})

test_that("the default Gaussian widths follow the data's scale: none is near the identity", {
  data("Sonar", package = "mlbench", envir = environment())
  x <- as.matrix(Sonar[, -61])
  fit <- mkl(x, Sonar$Class, method = "uniform")
  expect_s3_class(fit$kernels, "kernel_set")
  sig <- fit$kernels$families[[1L]]$par1
  expect_length(sig, 4L)
  # Sonar has 60 columns: the earlier fixed widths 0.5, 1, 2 gave about one neighbour
  nb <- mklearn:::kernel_neighbours(mklearn:::as_store(gram(kernel_set(rbf_kernel(sig)),
                                                            fit$x)))
  expect_true(all(nb > 5))
  expect_equal(length(fit$weights), 6L)
  expect_equal(fit$kernels, default_kernels(fit$x))
})

test_that("rbf_widths() are quantiles of squared distances on evenly spaced rows, no RNG", {
  set.seed(3)
  x <- matrix(rnorm(500 * 3), 500, 3)
  seed <- .Random.seed
  w <- rbf_widths(x, c(0.2, 0.5))
  expect_identical(.Random.seed, seed)
  rows <- unique(round(seq(1, 500, length.out = 300)))
  d2 <- as.vector(dist(x[rows, ]))^2
  expect_equal(w, sqrt(unname(quantile(d2, c(0.2, 0.5))) / 2))
  expect_equal(rbf_widths(matrix(1, 4, 2)), c(1, 1, 1))
  expect_error(rbf_widths(x, 2), "'probs' must be probabilities")
  ks <- default_kernels(x)
  expect_equal(ks$families[[1L]]$par1, signif(c(rbf_widths(x), 2 * max(rbf_widths(x))), 4))
  expect_error(gram(default_kernels(), x), "default_kernels\\(x\\)")
  expect_output(print(default_kernels()), "widths from the data")
})
