# Folds and binary problems through future.apply, progress through progressr (R/parallel.R).

ks_par <- kernel_set(rbf_kernel(c(0.5, 2)), linear_kernel())

# the progressr conditions signalled while evaluating expr (progress enabled, as in an
# interactive session), as "type: message"
progress_log <- function(expr) {
  op <- options(progressr.enable = TRUE)
  on.exit(options(op))
  log <- character()
  withCallingHandlers(expr, progression = function(c)
    log <<- c(log, paste0(c$type, ": ", conditionMessage(c))))
  log
}

test_that("cv.mkl gives identical results sequentially and on two multisession workers", {
  skip_if_not_installed("future.apply")
  skip_on_cran()      # starts R processes
  d <- two_class(90, 3, seed = 41)
  x <- as.matrix(iris[, 1:4]); y <- iris$Species
  foldid <- rep(1:3, 30)
  fid3 <- rep(1:3, 50)
  oplan <- future::plan(future::sequential)
  on.exit(future::plan(oplan), add = TRUE)
  seq_bin <- suppressMessages(cv.mkl(d$x, d$y, kernels = ks_par, method = "simple",
                                     C = c(30, 3, 0.3), foldid = foldid))
  seq_nc <- suppressMessages(suppressWarnings(
    cv.mkl(d$x, d$y, kernels = ks_par, C = c(100, 10),
                                    foldid = foldid, control = mkl_control(svm_maxiter = 3),
           screen = NULL)))
  seq_mc <- cv.mkl(x, y, kernels = ks_par, method = "uniform", C = c(10, 1, 0.1),
                   foldid = fid3, type.measure = "deviance", multiclass = "ovo")
  expect_null(mklearn:::worker_control(mkl_control())$nthreads)
  seq_fly <- mkl(x, y, kernels = ks_par, method = "simple", control = mkl_control(store = "fly"))
  set.seed(3)
  seq_rand <- suppressMessages(cv.mkl(d$x, d$y, kernels = ks_par, C = c(30, 3, 0.3),
                                      nfolds = 3))
  future::plan(future::multisession, workers = 2)
  expect_equal(as.numeric(future::nbrOfWorkers()), 2)
  expect_equal(mklearn:::parallel_workers(), 2)
  expect_identical(mklearn:::worker_control(mkl_control())$nthreads, 1L)
  expect_identical(mklearn:::worker_control(mkl_control(nthreads = 2))$nthreads, 2L)
  par_bin <- suppressMessages(cv.mkl(d$x, d$y, kernels = ks_par, method = "simple",
                                     C = c(30, 3, 0.3), foldid = foldid))
  par_nc <- suppressMessages(suppressWarnings(
    cv.mkl(d$x, d$y, kernels = ks_par, C = c(100, 10),
                                    foldid = foldid, control = mkl_control(svm_maxiter = 3),
           screen = NULL)))
  par_mc <- cv.mkl(x, y, kernels = ks_par, method = "uniform", C = c(10, 1, 0.1),
                   foldid = fid3, type.measure = "deviance", multiclass = "ovo")
  # a multiclass fit on a store computed on the fly runs its problems on the workers
  par_fly <- mkl(x, y, kernels = ks_par, method = "simple", control = mkl_control(store = "fly"))
  set.seed(3)
  par_rand <- suppressMessages(cv.mkl(d$x, d$y, kernels = ks_par, C = c(30, 3, 0.3),
                                      nfolds = 3))
  for (nm in c("cvm", "cvsd", "C.min", "C.1se", "nonconverged")) {
    expect_identical(par_bin[[nm]], seq_bin[[nm]], label = nm)
    expect_identical(par_mc[[nm]], seq_mc[[nm]], label = nm)
    expect_identical(par_nc[[nm]], seq_nc[[nm]], label = nm)
  }
  expect_identical(par_nc$nonconverged, c(3L, 3L))
  expect_identical(par_rand$foldid, seq_rand$foldid)
  expect_identical(par_rand$cvm, seq_rand$cvm)
  expect_identical(par_fly$weights, seq_fly$weights)
  expect_identical(par_fly$fitted, seq_fly$fitted)
})

test_that("cv.mkl and paths report progress through progressr, and print nothing by themselves", {
  skip_if_not_installed("progressr")
  d <- two_class(60, 3, seed = 42)
  foldid <- rep(1:3, 20)
  log <- progress_log(cv.mkl(d$x, d$y, kernels = ks_par, C = c(100, 10, 1, 0.1),
                             foldid = foldid, screen = NULL))
  expect_identical(log, c("initiate: ", "update: the path on all the data", "update: fold 1",
                          "update: fold 2", "update: fold 3", "finish: "))
  log <- progress_log(mkl(d$x, d$y, kernels = ks_par, C = c(10, 1)))
  expect_identical(log, c("initiate: ", "update: uniform at C = 10", "update: uniform at C = 1",
                          "finish: "))
  log <- progress_log(mkl(as.matrix(iris[, 1:4]), iris$Species, kernels = ks_par,
                          method = "uniform", multiclass = "ovo"))
  expect_identical(grep("update", log, value = TRUE),
                   paste0("update: uniform at C = 1 (class '",
                          c("setosa' against 'versicolor", "setosa' against 'virginica",
                            "versicolor' against 'virginica"), "')"))
  # a single binary fit reports nothing
  expect_length(progress_log(mkl(d$x, d$y, kernels = ks_par)), 0L)
  # without handlers nothing is printed, even with progress enabled
  op <- options(progressr.enable = TRUE)
  on.exit(options(op))
  expect_silent(mkl(d$x, d$y, kernels = ks_par, C = c(10, 1)))
  expect_silent(cv.mkl(d$x, d$y, kernels = ks_par, C = c(100, 10, 1, 0.1), foldid = foldid,
                       screen = NULL))
  # the solvers' per-iteration trace stays with control$verbose
  out <- capture_output(log <- progress_log(
    mkl(d$x, d$y, kernels = ks_par, method = "simple", C = c(10, 1),
        control = mkl_control(verbose = TRUE))))
  expect_match(out, "iter +0 +J = ")
  expect_length(grep("update", log), 2L)
})

test_that("a sequential plan runs the folds by lapply on future_lapply's random streams", {
  skip_if_not_installed("future.apply")
  oplan <- future::plan(future::sequential)
  on.exit(future::plan(oplan), add = TRUE)
  f <- function(i, a) c(i, stats::runif(2) + a)
  for (kind in c("Mersenne-Twister", "L'Ecuyer-CMRG")) {
    okind <- RNGkind(kind)[1L]
    set.seed(7)
    ref <- future.apply::future_lapply(1:4, f, a = 1, future.seed = TRUE)
    after_ref <- stats::runif(3)
    set.seed(7)
    got <- mklearn:::mk_lapply(1:4, f, a = 1)
    expect_identical(got, ref)
    expect_identical(stats::runif(3), after_ref)     # the caller's stream left alike
    expect_identical(RNGkind()[1L], kind)
    RNGkind(okind)
  }
})
