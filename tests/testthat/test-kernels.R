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

test_that("kernlab's rbfdot, polydot, laplacedot and vanilladot are the C kernels, to 1e-12", {
  skip_if_not_installed("kernlab")
  skip_if_not_installed("mlbench")
  x <- ionosphere_xy()$x[1:100, ]
  z <- ionosphere_xy()$x[101:130, ]
  sig <- c(0.01, 0.1, 0.5, 2)
  rbfs <- lapply(sig, function(s) kernlab::rbfdot(sigma = s))
  polys <- list(kernlab::polydot(degree = 1), kernlab::polydot(degree = 3, offset = 2),
                kernlab::polydot(degree = 2, offset = 0))
  refs <- c(rbfs, polys, list(kernlab::vanilladot()))
  ks <- do.call(kernel_set, c(refs, list(features = list("all", 1:5, 7), normalize = "none",
                                         jitter = 0)))
  # mapped to the C kernels, not computed in R
  expect_identical(vapply(ks$families, `[[`, "", "type"), rep(c("rbf", "poly", "linear"),
                                                              c(4, 3, 1)))
  K <- gram(ks, x)
  Kt <- gram(ks, x, z)
  err <- 0; m <- 0L
  for (g in list(seq_len(ncol(x)), 1:5, 7)) for (kf in refs) {
    m <- m + 1L
    ref <- kernlab::kernelMatrix(kf, x[, g, drop = FALSE])
    reft <- kernlab::kernelMatrix(kf, z[, g, drop = FALSE], x[, g, drop = FALSE])
    err <- max(err, max(abs(K[, , m] - ref)) / max(abs(ref)),
               max(abs(Kt[, , m] - reft)) / max(abs(reft)))
  }
  expect_lt(err, 1e-12)
  expect_identical(dimnames(K)[[3]][c(1, 5, 8, 9)],
                   c("rbfdot(sigma=0.01)[all]", "polydot(degree=1,scale=1,offset=1)[all]",
                     "vanilladot()[all]", "rbfdot(sigma=0.01)[V1,V3,...(5)]"))
  # laplacedot(sigma = s) is exp(-s ||x - z||): laplace_kernel(1 / s). kernlab rounds its
  # squared distances to 9 digits, so the exact distances are the 1e-12 reference
  kl <- kernlab::laplacedot(sigma = 0.3)
  KL <- gram(kernel_set(kl, normalize = "none", jitter = 0), x, z)[, , 1]
  Dx <- as.matrix(dist(rbind(z, x)))[seq_len(nrow(z)), nrow(z) + seq_len(nrow(x))]
  expect_lt(max(abs(KL - exp(-0.3 * Dx))), 1e-12)
  expect_lt(max(abs(KL - kernlab::kernelMatrix(kl, z, x))), 1e-7)
  expect_equal(gram(kernel_set(kl), x), gram(kernel_set(laplace_kernel(1 / 0.3)), x),
               ignore_attr = TRUE, tolerance = 1e-14)
  # polydot(scale != 1) is scale^degree times the C kernel: equal once normalised; with
  # normalize = "none" it is computed in R (kernlab's own values)
  pd <- kernlab::polydot(degree = 2, scale = 0.25, offset = 1)
  Kp <- kernlab::kernelMatrix(pd, x)
  expect_identical(kernel_set(pd)$families[[1]]$type, "poly")
  expect_lt(max(abs(gram(kernel_set(pd, jitter = 0), x)[, , 1] - Kp / sum(diag(Kp)))),
            1e-12 * max(Kp / sum(diag(Kp))))
  ksn <- kernel_set(pd, normalize = "none", jitter = 0)
  expect_identical(ksn$families[[1]]$type, "custom")
  expect_equal(gram(ksn, x)[, , 1], Kp, ignore_attr = TRUE, tolerance = 1e-14)
})

test_that("rbf_kernel(gamma = ) is the exp(-gamma d^2) convention and says so", {
  skip_if_not_installed("kernlab")
  d <- two_class(30, 3)
  g <- c(0.05, 0.7)
  K <- gram(kernel_set(rbf_kernel(gamma = g), normalize = "none", jitter = 0), d$x)
  for (k in 1:2)
    expect_lt(max(abs(K[, , k] - kernlab::kernelMatrix(kernlab::rbfdot(g[k]), d$x))), 1e-13)
  expect_equal(unname(K), unname(gram(kernel_set(rbf_kernel(sigma = 1 / sqrt(2 * g)),
                                                 normalize = "none", jitter = 0), d$x)),
               tolerance = 1e-14)
  expect_identical(dimnames(K)[[3]], c("rbf(gamma=0.05)[all]", "rbf(gamma=0.7)[all]"))
  expect_output(print(rbf_kernel(gamma = 2)), "exp\\(-gamma \\|\\|x - z\\|\\|\\^2\\)")
  expect_output(print(rbf_kernel(sigma = 2)), "2 sigma\\^2.*rbf_kernel\\(gamma = s\\)")
  expect_output(print(laplace_kernel(2)), "laplacedot\\(sigma = s\\) is laplace_kernel")
  expect_error(rbf_kernel(1, gamma = 2), "give 'sigma' .* or 'gamma' .*, not both")
  expect_error(rbf_kernel(gamma = -1), "'gamma' must be a non-empty vector of positive")
  expect_error(rbf_kernel(gamma = 1e308 * 10), "'gamma' must be")
  expect_error(rbf_kernel(gamma = 1e308), "'gamma' = 1e\\+308 is too large")
})

test_that("R functions and other kernlab kernels are custom kernels computed in R", {
  skip_if_not_installed("kernlab")
  d <- two_class(40, 3)
  z <- two_class(7, 3, seed = 5)$x
  cosine <- function(x, z) sum(x * z) / sqrt(sum(x^2) * sum(z^2))
  others <- list(kernlab::tanhdot(scale = 0.2, offset = 0.1), kernlab::besseldot(),
                 kernlab::anovadot(sigma = 0.5, degree = 2), kernlab::splinedot())
  ks <- kernel_set(cosine, my = function(a, b) exp(-sum(abs(a - b))), others[[1]], others[[2]],
                   others[[3]], others[[4]], normalize = "none", jitter = 0)
  expect_identical(vapply(ks$families, `[[`, "", "type"), rep("custom", 6))
  K <- gram(ks, d$x)
  Kt <- gram(ks, d$x, z)
  expect_identical(dimnames(K)[[3]][1:3], c("cosine[all]", "my[all]",
                                            "tanhdot(scale=0.2,offset=0.1)[all]"))
  cos_ref <- tcrossprod(d$x) / sqrt(outer(rowSums(d$x^2), rowSums(d$x^2)))
  expect_lt(max(abs(K[, , 1] - cos_ref)), 1e-12)
  expect_lt(max(abs(Kt[, , 2] - exp(-as.matrix(dist(rbind(z, d$x), "manhattan"))[1:7, -(1:7)]))),
            1e-12)
  expect_lt(max(abs(Kt[, , 3] - tanh(0.2 * tcrossprod(z, d$x) + 0.1))), 1e-12)
  for (k in 2:4) {
    expect_lt(max(abs(K[, , k + 2] - kernlab::kernelMatrix(others[[k]], d$x))), 1e-12)
    expect_lt(max(abs(Kt[, , k + 2] - kernlab::kernelMatrix(others[[k]], z, d$x))), 1e-12)
  }
  expect_output(print(ks$families[[1]]), "an R function, computed in R \\(slower\\)")
  # custom_kernel() computes in R a kernel C has: the same normalised training and test
  # kernels under every normalisation, and the same fit and predictions
  rb <- kernlab::rbfdot(sigma = 0.4)
  expect_identical(custom_kernel(rb)$label, "rbfdot(sigma=0.4)")
  expect_identical(custom_kernel(cosine)$label, "cosine")
  for (nm in c("trace", "center_trace", "none")) {
    kc <- kernel_set(custom_kernel(rb), linear_kernel(), features = c("all", "each"),
                     normalize = nm)
    k0 <- kernel_set(rb, linear_kernel(), features = c("all", "each"), normalize = nm)
    expect_equal(gram(kc, d$x), gram(k0, d$x), tolerance = 1e-12, ignore_attr = TRUE)
    expect_equal(attr(gram(kc, d$x), "normalization"), attr(gram(k0, d$x), "normalization"),
                 tolerance = 1e-12)
    expect_equal(gram(kc, d$x, z), gram(k0, d$x, z), tolerance = 1e-12)
  }
  kc <- kernel_set(custom_kernel(rb), linear_kernel(), features = c("all", "each"))
  k0 <- kernel_set(rb, linear_kernel(), features = c("all", "each"))
  ctl <- mkl_control(svm_tol = 1e-10)     # the two SMO runs stop at the same point
  f1 <- mkl(d$x, d$y, kernels = kc, C = 10, control = ctl)
  f0 <- mkl(d$x, d$y, kernels = k0, C = 10, control = ctl)
  expect_identical(f1$store, "dense")
  expect_equal(f1$weights, f0$weights, tolerance = 1e-6)
  expect_equal(predict(f1, z, type = "link"), predict(f0, z, type = "link"), tolerance = 1e-6)
  expect_equal(predict(f1, z), predict(f0, z))
  expect_identical(names(coef(f1))[1], "rbfdot(sigma=0.4)[all]")
  # the training fitted values are predict() on the training data
  expect_equal(predict(f1, d$x, type = "link"), f1$fitted, tolerance = 1e-10)
})

test_that("custom kernels take the dense store: 'auto' picks it, fly is refused by name", {
  d <- two_class(30, 3)
  cosine <- function(x, z) sum(x * z) / sqrt(sum(x^2) * sum(z^2))
  ks <- kernel_set(rbf_kernel(1), cosine)
  # MWUMKL computes kernels on the fly by default: a set with a custom kernel is dense
  fm <- mkl(d$x, d$y, kernels = ks, method = "mwu")
  expect_identical(fm$store, "dense")
  expect_length(predict(fm, d$x[1:3, ]), 3L)
  # cross-validation and one-vs-one multiclass fits read the same dense store
  cv <- suppressMessages(suppressWarnings(cv.mkl(d$x, d$y, kernels = ks, C = c(10, 1),
                                                 nfolds = 3)))
  expect_true(all(is.finite(cv$cvm)))
  fo <- mkl(iris[, 1:4], iris$Species, kernels = ks, multiclass = "ovo")
  expect_gt(mean(predict(fo, iris[, 1:4]) == iris$Species), 0.9)
  expect_error(mkl(d$x, d$y, kernels = ks, control = mkl_control(store = "fly")),
               "store = \"fly\"\\) cannot compute the custom kernel\\(s\\) cosine\\[all\\]")
  expect_error(mklearn:::fly_store(mklearn:::resolve_kernels(ks, 3, NULL), d$x),
               "cannot compute the custom kernel\\(s\\) cosine\\[all\\]")
  # kernel screening (options(mklearn.screen)) reads a dense store
  old <- options(mklearn.screen = 3)
  on.exit(options(old))
  expect_s3_class(mkl(d$x, d$y, kernels = ks), "mkl")
})

test_that("custom kernels and kernlab kernels: the refusals name the problem", {
  skip_if_not_installed("kernlab")
  d <- two_class(20, 3)
  expect_error(kernel_set(kernlab::stringdot()), "stringdot\\(\\) works on character strings")
  expect_error(custom_kernel(kernlab::stringdot()), "stringdot\\(\\) works on character")
  expect_error(kernel_set("rbf"), "a kernlab kernel such as kernlab::rbfdot\\(\\), or a function")
  expect_error(custom_kernel(1), "'fun' must be a function k\\(x, z\\) or a kernlab kernel")
  expect_error(custom_kernel(function(x, z) 1, name = ""), "'name' must be one non-empty")
  expect_error(kernel_set(function(x) 1), "'custom' must be a function of two rows")
  two <- function(x, z) c(1, 2)
  expect_error(gram(kernel_set(two), d$x),
               "'two\\[all\\]' must return one number for two rows; it returned 2")
  chr <- function(x, z) "a"
  expect_error(gram(kernel_set(chr), d$x), "returned an object of class character")
  bad <- function(x, z) if (max(abs(x - z)) > 20) Inf else exp(-sum((x - z)^2))
  expect_error(mkl(d$x * c(1, 100), d$y, kernels = kernel_set(bad), standardize = FALSE),
               "kernel\\(s\\) bad\\[all\\] give non-finite values .* on the training data")
  fb <- mkl(d$x, d$y, kernels = kernel_set(bad, rbf_kernel(1)))
  expect_error(predict(fb, d$x[1:2, ] + 100),
               "kernel\\(s\\) bad\\[all\\] give non-finite values .* on the new data")
  expect_error(mkl(d$x, d$y, kernels = kernlab::rbfdot(1)),
               "is a kernel family, not a kernel set")
  cosine <- function(x, z) sum(x * z)
  expect_error(gram(cosine, d$x), "is a kernel family, not a kernel set")
  expect_error(n_kernels(kernlab::vanilladot(), d$x), "is a kernel family, not a kernel set")
  expect_error(kernel_set(kernlab::rbfdot(1e308)), "rbfdot\\(\\): 'sigma' = 1e\\+308 is too large")
})
