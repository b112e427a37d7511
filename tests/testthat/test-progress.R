# Progress of a single fit (R/progress.R; the C hook mk_progress in src/utils.c).

ks_prog <- kernel_set(rbf_kernel(c(0.5, 2)), linear_kernel())

# The progressr conditions signalled while evaluating expr, with progress enabled as in an
# interactive session (unless enable = FALSE, a non-interactive session's default) and the C
# loops' reports unthrottled (every = 0) unless given: a data frame of type, amount, steps and
# message, one row per condition.
progress_rows <- function(expr, enable = TRUE, every = 0, delay = NULL) {
  op <- options(progressr.enable = enable, mklearn.progress_every = every,
                mklearn.progress_delay = delay)
  on.exit(options(op))
  rows <- list()
  withCallingHandlers(expr, progression = function(c)
    rows[[length(rows) + 1L]] <<- data.frame(
      type = c$type, amount = if (is.null(c$amount)) NA_real_ else as.double(c$amount),
      steps = if (is.null(c$steps)) NA_real_ else as.double(c$steps),
      message = paste(conditionMessage(c), collapse = ""), stringsAsFactors = FALSE))
  if (length(rows)) do.call(rbind, rows) else
    data.frame(type = character(), amount = numeric(), steps = numeric(), message = character())
}
# the fit of method m on d with the given progress setting (and other settings)
prog_fit <- function(m, d, progress, ...) {
  args <- list(d$x, d$y, kernels = ks_prog, method = m,
               control = mkl_control(progress = progress, ...))
  if (m != "bayes") args$C <- 10
  suppressWarnings(do.call(mkl, args))
}
# the update amounts of a log, checked to start with "initiate" (100 steps) and end with
# "finish"
updates <- function(log) {
  expect_identical(log$type[1L], "initiate")
  expect_identical(log$steps[1L], 100)
  expect_identical(log$type[nrow(log)], "finish")
  log$amount[log$type == "update"]
}

test_that("every method reports a fit with progress = TRUE up to the total, and fits alike", {
  skip_if_not_installed("progressr")
  d <- two_class(60, 3, seed = 7)
  for (m in mkl_methods()) {
    log <- progress_rows(on <- prog_fit(m, d, TRUE))
    a <- updates(log)
    expect_gte(length(a), 1L)
    expect_true(all(a > 0), label = m)
    expect_identical(sum(a), 100, label = m)
    log0 <- progress_rows(off <- prog_fit(m, d, FALSE))
    expect_identical(nrow(log0), 0L, label = m)
    for (nm in c("weights", "alpha", "b", "objective", "iterations", "fitted", "converged"))
      expect_identical(on[[nm]], off[[nm]], label = paste(m, nm))
  }
  # through a progressr handler, as a user would
  expect_silent(f <- progressr::with_progress(prog_fit("spicy", d, TRUE), enable = TRUE,
                                              handlers = progressr::handler_void()))
  expect_identical(f$weights, prog_fit("spicy", d, FALSE)$weights)
})

test_that("the fraction reported follows the iterations and the certified gap", {
  skip_if_not_installed("progressr")
  d <- two_class(60, 3, seed = 8)
  # SimpleMKL: one report per outer iteration but the last, at the larger of it / maxiter and
  # log(g0 / g) / log(g0 / tol) (g0 the first gap above tol), never decreasing, then 100
  tol <- 1e-5
  log <- progress_rows(f <- prog_fit("simple", d, TRUE, tol = tol))
  h <- f$history
  expect_gt(nrow(h), 3L)
  g <- h$gap[-nrow(h)]
  it <- h$iteration[-nrow(h)]
  g0 <- g[g > tol][1L]
  frac <- pmin(0.999, cummax(pmax(it / 200, log(g0 / g) / log(g0 / tol))))
  expect_identical(cumsum(updates(log)),
                   c(setdiff(unique(floor(100 * frac + 1e-9)), 0), 100))
  # MWUMKL: t of T iterations, so every percent once
  log <- progress_rows(f <- prog_fit("mwu", d, TRUE))
  expect_gt(f$info$T, 100L)
  expect_identical(updates(log), rep(1, 100))
  # uniform: the combined kernel, then the solve
  expect_identical(updates(progress_rows(prog_fit("uniform", d, TRUE))), c(50, 50))
  # MKL-L0/1 with a chained restart: the first run fills the first half
  log <- progress_rows(f <- prog_fit("l01", d, TRUE, restarts = 1L))
  expect_identical(f$info$runs, 2L)
  cs <- cumsum(updates(log))
  expect_true(50 %in% cs)
  expect_identical(cs[length(cs)], 100)
  expect_true(all(diff(cs) > 0))
})

test_that("the default reports nothing in a non-interactive session or for a short fit", {
  skip_if_not_installed("progressr")
  d <- two_class(60, 3, seed = 9)
  # progressr is off in a non-interactive session unless the user enables it
  expect_identical(nrow(progress_rows(prog_fit("spicy", d, TRUE), enable = FALSE)), 0L)
  expect_identical(nrow(progress_rows(prog_fit("spicy", d, NA), enable = FALSE, delay = 0)), 0L)
  expect_identical(nrow(progress_rows(suppressWarnings(mkl(d$x, d$y, kernels = ks_prog)),
                                      enable = FALSE, delay = 0)), 0L)
  # NA: only a fit that has run for the delay (2 s) is reported
  for (m in c("spicy", "simple", "bayes")) {
    expect_identical(nrow(progress_rows(prog_fit(m, d, NA))), 0L, label = m)
    expect_identical(sum(updates(progress_rows(prog_fit(m, d, NA), delay = 0))), 100,
                     label = m)
  }
  # ... and not when the per-iteration trace is printed
  out <- capture_output(log <- progress_rows(prog_fit("simple", d, NA, verbose = TRUE),
                                             delay = 0))
  expect_match(out, "iter +0 +J = ")
  expect_identical(nrow(log), 0L)
  # without handlers nothing is printed, even with progress enabled
  op <- options(progressr.enable = TRUE, mklearn.progress_every = 0)
  on.exit(options(op))
  expect_silent(prog_fit("spicy", d, TRUE))
})

test_that("paths, cross-validation and multiclass fits report their steps, not their fits'", {
  skip_if_not_installed("progressr")
  d <- two_class(60, 3, seed = 10)
  ctl <- mkl_control(progress = TRUE)
  log <- progress_rows(mkl(d$x, d$y, kernels = ks_prog, method = "simple", C = c(10, 1),
                           control = ctl))
  expect_identical(paste0(log$type, ": ", log$message),
                   c("initiate: ", "update: simple at C = 10", "update: simple at C = 1",
                     "finish: "))
  log <- progress_rows(suppressMessages(
    cv.mkl(d$x, d$y, kernels = ks_prog, C = c(10, 1), foldid = rep(1:3, 20), control = ctl,
           screen = NULL)))
  expect_identical(log$message[log$type == "update"],
                   c("the path on all the data", paste("fold", 1:3)))
  log <- progress_rows(mkl(as.matrix(iris[, 1:4]), iris$Species, kernels = ks_prog,
                           method = "simple", control = ctl))
  expect_identical(sum(log$type == "update"), 3L)
  expect_true(all(grepl("^simple at C = 1 \\(class", log$message[log$type == "update"])))
  # the depth is restored: a single fit afterwards reports again
  expect_identical(sum(updates(progress_rows(prog_fit("simple", d, TRUE)))), 100)
})

test_that("progress is a setting of every method, validated", {
  expect_error(mkl_control(progress = "yes"), "'progress' must be TRUE or FALSE \\(or NA\\)")
  expect_error(mkl_control(progress = c(TRUE, FALSE)), "'progress' must be TRUE or FALSE")
  for (m in mkl_methods())
    expect_identical(mklearn:::method_control(m, mkl_control(progress = FALSE))$progress, FALSE)
  expect_identical(mklearn:::method_control("spicy")$progress, NA)
  # the C hook refuses anything but NULL or a function
  d <- two_class(30, 3, seed = 11)
  st <- mklearn:::as_store(gram(ks_prog, d$x))
  ctl <- mklearn:::method_control("bayes")
  bad <- list(tol = 1e-4, maxiter = 10L, prune = 1e-8, accelerate = 1, sigma2_floor = 1e-10,
              fix_sigma2 = 0L, bias_kernel = 0L, update = 0L, safeguard = 1L, nthreads = 1L,
              verbose = 0L, progress_fun = TRUE)
  expect_error(.Call(mklearn:::C_bayes, st, d$y, bad,
                     list(d = rep(NA_real_, 3), sigma2 = 0.5, d0 = 0, prior_variance = 0.5)),
               "'progress_fun' must be NULL or a function")
})
