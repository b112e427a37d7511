# SimpleMKL (and its agreement with HessianMKL and lp-norm MKL at p = 1), checked against
# an independent QP solver and against the optimality conditions of the MKL problem.


sf_data <- function(which) {
  if (which == "sonar") {
    set.seed(1)
    data("Sonar", package = "mlbench", envir = environment())
    X <- scale(as.matrix(Sonar[, 1:60])); y <- ifelse(Sonar$Class == "M", 1, -1)
    idx <- sample(nrow(X), 120)
    list(K = centred_rbf_kernels(X[idx, ], c(0.5, 1, 2, 5, 10, 20),
                        feats = list(1:60, 1:20, 21:40, 41:60)), y = y[idx], C = 100)
  } else {
    set.seed(20261123)
    data("PimaIndiansDiabetes", package = "mlbench", envir = environment())
    X <- scale(as.matrix(PimaIndiansDiabetes[, 1:8]))
    y <- ifelse(PimaIndiansDiabetes$diabetes == "pos", 1, -1)
    idx <- sample(nrow(X), 150)
    list(K = centred_rbf_kernels(X[idx, ], c(0.5, 2, 8), feats = c(list(1:8), as.list(1:8))),
         y = y[idx], C = 100)
  }
}


# a tight gap so that agreement to 1e-4 in J is meaningful (gap <= tol bounds J - J* by tol J)
tight <- list(tol = 5e-5, svm_tol = 1e-8, newton_tol = 1e-12, maxiter = 3000, p = 1)

test_that("SimpleMKL, HessianMKL and lp-norm (p = 1) reach the same J(d) on two data sets", {
  skip_if_not_installed("mlbench")
  for (ds in c("sonar", "pima")) {
    dat <- sf_data(ds)
    fs <- mklearn:::fit_simple(dat$K, dat$y, "classification", dat$C, tight, NULL)
    fh <- mklearn:::fit_hessian(dat$K, dat$y, "classification", dat$C, tight, NULL)
    fl <- mklearn:::fit_lp(dat$K, dat$y, "classification", dat$C, tight, NULL)
    for (f in list(fs, fh, fl)) {
      expect_true(f$converged)
      expect_true(all(f$weights >= 0))
      expect_equal(sum(f$weights), 1, tolerance = 1e-12)
      expect_gte(f$info$gap, -1e-12)
      expect_lte(f$info$gap, tight$tol)
      # NA: a row of HessianMKL's kernel working set, which did not read every kernel
      expect_true(all(f$history$gap >= -1e-12, na.rm = TRUE))
      expect_false(is.na(utils::tail(f$history$gap, 1L)))
      expect_equal(ncol(f$info$weights_path), dim(dat$K)[3])
      expect_equal(nrow(f$info$weights_path), nrow(f$history))
    }
    # three different algorithms, one optimum
    expect_lt(abs(fs$objective - fh$objective) / fs$objective, 1e-4)
    expect_lt(abs(fs$objective - fl$objective) / fs$objective, 1e-4)
    # J decreases monotonically for the descent methods
    expect_true(all(diff(fs$history$objective) <= 1e-9 * fs$objective))
    expect_true(all(diff(fh$history$objective) <= 1e-9 * fh$objective))
    # the returned alpha reproduces the SVM: alpha[, m] = d_m y a
    expect_equal(fs$alpha, outer(dat$y * fs$state$alpha_svm, fs$weights))
  }
})


test_that("SimpleMKL optimum is certified by an independent QP solver and the KKT conditions", {
  skip_if_not_installed("mlbench")
  skip_if_not_installed("quadprog")
  for (ds in c("sonar", "pima")) {
    dat <- sf_data(ds)
    f <- mklearn:::fit_simple(dat$K, dat$y, "classification", dat$C, tight, NULL)
    d <- f$weights
    Kd <- combine_R(dat$K, d)
    Jk <- qp_svm(Kd, dat$y, dat$C)$J
    expect_lt(abs(Jk - f$objective) / f$objective, 1e-6)
    # reduced-gradient (KKT) conditions of min_d J(d) on the simplex, with the gradient
    # g_m = -(1/2) v_m, v_m = (ya)' K_m (ya) recomputed here in R from the SVM solution
    ya <- dat$y * f$state$alpha_svm
    v <- vapply(seq_len(dim(dat$K)[3]), function(m) drop(crossprod(ya, dat$K[, , m] %*% ya)), 0)
    vmax <- max(v)
    # J(d) = sum(a) - (1/2) sum_m d_m v_m must be the SVM value the QP solver found
    expect_lt(abs(sum(f$state$alpha_svm) - 0.5 * sum(d * v) - Jk) / Jk, 1e-5)
    # the duality gap recomputed here: sum_m d_m (vmax - v_m) / 2 <= tol J ...
    expect_lte(0.5 * sum(d * (vmax - v)) / Jk, tight$tol * (1 + 1e-6))
    # ... so kernels with substantial weight share the (maximal) gradient magnitude ...
    act <- d > 0.05
    expect_lt(max(vmax - v[act]) / vmax, 5e-3)
    # ... and no unused kernel has a more negative gradient than the used ones
    expect_true(all(v[d == 0] <= max(v[d > 0]) * (1 + 1e-4)))
    # and J(d*) is no larger than J at perturbed weights on the simplex
    set.seed(7)
    for (r in 1:3) {
      d2 <- pmax(d + stats::runif(length(d), 0, 0.05) * (stats::runif(length(d)) < 0.3), 0)
      d2 <- d2 / sum(d2)
      expect_gte(qp_svm(combine_R(dat$K, d2), dat$y, dat$C)$J, f$objective * (1 - 1e-7))
    }
  }
})

test_that("SimpleMKL warm start from its own state converges at once; defaults work", {
  skip_if_not_installed("mlbench")
  dat <- sf_data("sonar")
  f1 <- mklearn:::fit_simple(dat$K, dat$y, "classification", dat$C, list(tol = 1e-3), NULL)
  expect_true(f1$converged)
  expect_lte(f1$info$gap, 1e-3)
  f2 <- mklearn:::fit_simple(dat$K, dat$y, "classification", dat$C, list(tol = 1e-3), f1$state)
  expect_equal(f2$iterations, 0L)
  expect_equal(f2$objective, f1$objective, tolerance = 1e-6)
  expect_equal(f2$info$svm_solves, 1L)
  expect_true(all(c("iteration", "time", "objective", "gap", "n_active", "svm_solves",
                    "grad_evals") %in% names(f1$history)))
  expect_error(mklearn:::fit_simple(dat$K, dat$y, "regression", 1, list(), NULL))
})

test_that("many kernels: line-search kernels and the QP working-set updates stay exact", {
  # 240 kernels for 80 points: SimpleMKL's feasible-step loop drops dozens of weights per
  # iteration (each solve on K(d) + t K_D, carried between iterations) and HessianMKL's
  # first QP grows and shrinks a large working set (updated Cholesky factor). The SVM value
  # at the returned weights, recomputed from scratch by quadprog, must equal the objective.
  skip_if_not_installed("mlbench")
  skip_if_not_installed("quadprog")
  set.seed(11)
  rn <- mlbench::mlbench.ringnorm(80, d = 10)
  X <- scale(rn$x)
  y <- ifelse(rn$classes == levels(rn$classes)[1], 1, -1)
  feats <- replicate(40, sort(sample(10, sample(1:4, 1))), simplify = FALSE)
  K <- centred_rbf_kernels(X, c(0.5, 1, 2, 4, 8, 16), feats)
  ctl <- list(tol = 1e-3, svm_tol = 1e-8, maxiter = 5000)
  fs <- mklearn:::fit_simple(K, y, "classification", 100, ctl, NULL)
  fh <- mklearn:::fit_hessian(K, y, "classification", 100, ctl, NULL)
  for (f in list(fs, fh)) {
    expect_true(f$converged)
    expect_lte(f$info$gap, 1e-3)
    Jq <- qp_svm(combine_R(K, f$weights), y, 100)$J
    expect_lt(abs(Jq - f$objective) / Jq, 1e-6)
  }
  expect_lt(sum(fs$weights > 0), dim(K)[3] / 4)
  expect_lt(abs(fs$objective - fh$objective) / fh$objective, 2e-3)
})

test_that("converged means a certified gap <= tol, for every method (Pima grid over C)", {
  # 3 data sets x 4 C x 3 methods at the default settings. Whatever ends a run (gap, limit,
  # a stalled line search, HessianMKL's Newton decrement), converged must be gap <= tol and
  # the reported gap that of the last history row. Seed 1 at C = 1000 is a run where the
  # Newton decrement falls below newton_tol while the gap is still above tol.
  skip_if_not_installed("mlbench")
  data("PimaIndiansDiabetes", package = "mlbench", envir = environment())
  tol <- 0.01
  for (seed in 1:3) {
    set.seed(seed)
    i <- sample(nrow(PimaIndiansDiabetes), 120)
    X <- scale(as.matrix(PimaIndiansDiabetes[i, 1:8]))
    y <- ifelse(PimaIndiansDiabetes$diabetes[i] == "pos", 1, -1)
    K <- centred_rbf_kernels(X, c(0.5, 1, 2, 5, 10), list(1:8, 1:4, 5:8))
    for (C in c(1, 10, 100, 1000)) for (meth in c("simple", "hessian", "lp")) {
      fit <- get(paste0("fit_", meth), asNamespace("mklearn"))
      f <- fit(K, y, "classification", C, list(tol = tol), NULL)
      lab <- sprintf("%s, seed %d, C = %g", meth, seed, C)
      expect_identical(f$info$gap, utils::tail(f$history$gap, 1L), label = lab)
      expect_identical(f$converged, f$info$gap <= tol, label = lab)
      if (f$converged) expect_identical(f$info$stop_reason, "gap", label = lab)
      else expect_false(identical(f$info$stop_reason, "gap"), label = lab)
      expect_true(all(is.finite(f$weights)) && all(f$weights >= 0), label = lab)
      # at the default settings every one of these fits reaches the gap
      expect_true(f$converged, label = lab)
    }
  }
})

test_that("SVM family on an on-the-fly kernel store: same fit as on the dense array", {
  dat <- two_class(n = 70, p = 4, seed = 5)
  ks <- kernel_set(rbf_kernel(c(0.5, 1, 2)), poly_kernel(1:2), features = c("all", "each"))
  for (meth in c("simple", "hessian", "lp")) {
    ctl <- list(tol = 1e-4, svm_tol = 1e-8, maxiter = 2000L)
    fd <- mkl(dat$x, dat$y, ks, method = meth, C = old_C(10, 70),
              control = do.call(mkl_control, c(ctl, store = "dense")))
    ff <- mkl(dat$x, dat$y, ks, method = meth, C = old_C(10, 70),
              control = do.call(mkl_control, c(ctl, store = "fly")))
    expect_identical(ff$store, "fly")
    expect_true(fd$converged && ff$converged)
    expect_equal(ff$objective, fd$objective, tolerance = 1e-8)
    expect_equal(unname(ff$weights), unname(fd$weights), tolerance = 1e-5)
    expect_equal(ff$fitted, fd$fitted, tolerance = 1e-5)
  }
})

test_that("SVM family on the fly through a column cache of 4 points: the dense fit", {
  # the line kept as weights and every SVM column from a 4-entry cache (src/kcache.c), far
  # below the 70 points: entries leave and are computed again all the time
  dat <- two_class(n = 70, p = 4, seed = 5)
  ks <- kernel_set(rbf_kernel(c(0.5, 1, 2)), poly_kernel(1:2), features = c("all", "each"))
  for (meth in c("simple", "hessian", "lp")) {
    ctl <- list(tol = 1e-6, svm_tol = 1e-8, maxiter = 2000L, platt = "train", nthreads = 1L)
    fd <- mkl(dat$x, dat$y, ks, method = meth, C = old_C(10, 70),
              control = do.call(mkl_control, c(ctl, store = "dense")))
    ff <- mkl(dat$x, dat$y, ks, method = meth, C = old_C(10, 70),
              control = do.call(mkl_control, c(ctl, store = "fly", kcache = 4L)))
    expect_identical(ff$store, "fly")
    expect_true(fd$converged && ff$converged, label = meth)
    expect_lte(ff$info$gap, 1e-6)
    expect_equal(unname(ff$weights), unname(fd$weights), tolerance = 1e-5, label = meth)
    expect_equal(ff$alpha, fd$alpha, tolerance = 1e-5, label = meth)
    expect_equal(ff$b, fd$b, tolerance = 1e-5, label = meth)
    expect_equal(ff$objective, fd$objective, tolerance = 1e-8, label = meth)
  }
  # case weights: the per-point box reaches the cached SMO
  w <- rep(c(1, 0.5), 35)
  fd <- mkl(dat$x, dat$y, ks, method = "hessian", C = old_C(10, 70), weights = w,
            control = mkl_control(store = "dense", tol = 1e-6, platt = "train", nthreads = 1))
  ff <- mkl(dat$x, dat$y, ks, method = "hessian", C = old_C(10, 70), weights = w,
            control = mkl_control(store = "fly", kcache = 4L, tol = 1e-6, platt = "train",
                                  nthreads = 1))
  # both within the gap 1e-6 of the optimum, not on the same iterates: HessianMKL's working set
  # reads every kernel when its gap is within tol, a test the two stores' rounding passed at
  # different iterations here (alpha 2e-5 apart in mean relative difference; without the
  # case weights: 0.6)
  expect_equal(ff$objective, fd$objective, tolerance = 1e-6)
  expect_equal(ff$alpha, fd$alpha, tolerance = 1e-3)
  expect_error(mkl_control(kcache = 0), "'kcache'")
})

test_that("an inner SVM at its iteration cap makes the SVM-family fit not converged", {
  d <- two_class(60, 3, seed = 7)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), features = c("all", "each"))
  for (m in c("simple", "hessian", "lp")) {
    expect_warning(fit <- mkl(d$x, d$y, kernels = ks, method = m,
                              control = mkl_control(svm_maxiter = 1)),
                   "svm_maxiter", label = m)
    expect_false(fit$converged, label = m)
    expect_gt(fit$info$svm_maxiter_hits, 0L)
  }
})

# M centred random kernels on n ringnorm points (20 features, scaled), labels in {-1, +1}.
ringnorm_kernels <- function(n, M, seed) {
  set.seed(seed)
  rn <- mlbench::mlbench.ringnorm(n, d = 20)
  X <- scale(rn$x)
  list(K = unname(gram(random_kernels(M, p = 20, normalize = "center_trace"), X)),
       y = ifelse(rn$classes == levels(rn$classes)[1], 1, -1))
}

test_that("SimpleMKL's gradient screening: kernels are screened, the optimum and the gap are those of the full gradient", {
  skip_if_not_installed("mlbench")
  d <- ringnorm_kernels(80, 300, seed = 12)
  K <- d$K; y <- d$y
  ctl <- list(tol = 1e-4, svm_tol = 1e-8, maxiter = 3000)
  fs <- mklearn:::fit_simple(K, y, "classification", 10, ctl, NULL)
  ff <- mklearn:::fit_simple(K, y, "classification", 10, c(ctl, gradient_screening = FALSE), NULL)
  fh <- mklearn:::fit_hessian(K, y, "classification", 10, c(ctl, newton_tol = 1e-12), NULL)
  expect_true(fs$converged && ff$converged && fh$converged)
  expect_gt(fs$info$screened, 0)          # the bound did replace quadratic forms
  expect_equal(ff$info$screened, 0)
  expect_lte(fs$info$gap, 1e-4)
  # the same optimum (each J within tol of J*): objectives agree to 2e-4 relative
  expect_equal(fs$objective, ff$objective, tolerance = 2e-4)
  expect_equal(fs$objective, fh$objective, tolerance = 2e-4)
  # the certificate is exact, not a bound: recompute the gap from every v_m at the solution
  ya <- y * fs$state$alpha_svm
  v <- apply(K, 3, function(Km) drop(crossprod(ya, Km %*% ya)))
  gap <- (fs$objective - (sum(fs$state$alpha_svm) - max(v) / 2)) / fs$objective
  expect_equal(fs$info$gap, gap, tolerance = 1e-8)
  # KKT of the MKL problem: every kernel's v_m is at most the largest one on the support
  expect_true(all(v <= max(v[fs$weights > 0]) * (1 + 1e-3)))
})

test_that("SimpleMKL's descent visits the breakpoints of its path by galloping and bisection", {
  # From the uniform start on 400 kernels the first steps drop hundreds of weights. The path
  # (weights leaving one at a time while J decreases) is searched with O(log M) SVM solves per
  # step, not one per weight that leaves; every accepted point must still be exact: the SVM
  # value at the returned weights, recomputed from scratch, equals the objective.
  skip_if_not_installed("mlbench")
  skip_if_not_installed("quadprog")
  d <- ringnorm_kernels(60, 400, seed = 13)
  K <- d$K; y <- d$y
  ctl <- list(tol = 1e-3, svm_tol = 1e-8, maxiter = 3000)
  fs <- mklearn:::fit_simple(K, y, "classification", 10, ctl, NULL)
  h <- fs$history
  dropped <- -diff(h$n_active)
  solves <- diff(h$svm_solves)
  big <- which(dropped >= 50)
  expect_gt(length(big), 0)
  # a step that drops k >= 50 weights: at most 2 log2(k) + 40 solves (search + line search)
  expect_true(all(solves[big] <= 2 * log2(dropped[big]) + 40))
  expect_true(fs$converged)
  Jq <- qp_svm(combine_R(K, fs$weights), y, 10)$J
  expect_lt(abs(Jq - fs$objective) / Jq, 1e-6)
  fh <- mklearn:::fit_hessian(K, y, "classification", 10, c(ctl, newton_tol = 1e-12), NULL)
  expect_equal(fs$objective, fh$objective, tolerance = 2e-3)
})

test_that("SimpleMKL keeps its weights on the simplex when every kernel but one leaves at once", {
  # Pima rows 1-300 at C = 1/n: the first step's path ends with every weight but the largest
  # at zero; the running sum of the direction then leaves a rounding residue that used to send
  # the last weight to zero as well ("malformed weights"). The fit must reach HessianMKL's
  # optimum.
  skip_if_not_installed("mlbench")
  data("PimaIndiansDiabetes", package = "mlbench", envir = environment())
  x <- as.matrix(PimaIndiansDiabetes[1:300, 1:8]); y <- PimaIndiansDiabetes$diabetes[1:300]
  ks <- kernel_set(rbf_kernel(sigma = c(0.5, 1, 2, 5, 10)), poly_kernel(degree = 1:2),
                   features = c("all", "each"), normalize = "center_trace")
  ctl <- mkl_control(nthreads = 1)
  fs <- mkl(x, y, kernels = ks, method = "simple", C = 1 / 300, control = ctl)
  fh <- mkl(x, y, kernels = ks, method = "hessian", C = 1 / 300, control = ctl)
  expect_true(all(fs$weights >= 0))
  expect_equal(sum(fs$weights), 1)
  expect_true(all(fs$history$n_active >= 1L))
  expect_true(fs$converged)
  expect_lt(abs(fs$objective - fh$objective) / fh$objective, 0.01)
})

test_that("all-zero kernels are refused at once by the SVM family", {
  set.seed(2)
  n <- 30
  y <- factor(rep(c("a", "b"), each = 15))
  K <- array(0, c(n, n, 3))
  for (m in c("simple", "hessian", "lp")) {
    # refused by the checks before any SVM solve
    expect_error(mkl(y = y, kernels = K, method = m),
                 sprintf("every training kernel is zero.*method '%s'", m))
  }
  expect_error(mklearn:::check_box_C(Inf, mklearn:::as_store(array(diag(3), c(3, 3, 1))),
                                     "simple"), "method 'simple' needs a finite C")
})

test_that("SimpleMKL's default maxiter reaches the default tolerance on the papers' kernel set", {
  # 120 Ionosphere points, Gaussian widths 0.5-10 and polynomial degrees 1-2 on all features
  # and each (238 kernels), C n = 2000: SimpleMKL needs about 250 iterations to reach gap 0.01
  # (inst/benchmarks/bench-maxiter.R measures the papers' sets)
  skip_if_not_installed("mlbench")
  d <- ionosphere_xy()
  set.seed(4)
  i <- sample(nrow(d$x), 120)
  ks <- kernel_set(rbf_kernel(sigma = c(0.5, 1, 2, 5, 10)), poly_kernel(degree = 1:2),
                   features = c("all", "each"), normalize = "center_trace")
  expect_no_warning(f <- mkl(d$x[i, ], d$y[i], kernels = ks, method = "simple", C = 2000 / 120,
                             control = mkl_control(nthreads = 1)))
  expect_true(f$converged)
  expect_gt(f$iterations, 200L)
  expect_lte(f$info$gap, 0.01)
})
