# Common checks: the same checks on every method of the registry (mkl_methods()), each
# method's capabilities (tasks, stores, whether it takes C, case weights) read from its entry
# (R/registry.R), so a new method is checked without new tests. Then a randomised run of the
# same invariants over random problems: a short one here (fixed seed); a long one on request,
# MKLEARN_FUZZ_N=<problems> (and MKLEARN_FUZZ_SEED=<seed>) with the filter "common".

# Checks that fail today because of defects being fixed elsewhere. A check named here that
# fails is counted instead of failing the test; the last test of this file lists, as a skip,
# how often each one failed. Remove an entry once its fix is in: the check is then strict.
.pending_checks <- character()
pending_log <- new.env()
checks_run <- new.env()

# A strict check: a failure is a test failure labelled with its case, unless the check is
# pending (then it is counted).
expect_check <- function(check, ok, label) {
  ok <- isTRUE(ok)
  checks_run[[check]] <- TRUE
  if (!ok && check %in% names(.pending_checks)) {
    pending_log[[check]] <- c(pending_log[[check]], label)
    ok <- TRUE
  }
  expect_true(ok, label = paste0(check, ": ", label))
}

entry <- function(m) mklearn:::method_info(m)
tasks_of <- function(m) mklearn:::method_tasks(entry(m))
has_C <- function(m) entry(m)$C != "none"
# Case weights: the capability flag of the entry and mkl()'s argument.
case_weight_methods <- function()
  Filter(function(m) isTRUE(entry(m)$case_weights) &&
           "weights" %in% names(formals(mklearn:::mkl.default)), mkl_methods())
# The solver's own tolerance (its gap or change tolerance, else its SMO tolerance): two fits
# that should agree are compared to it, relative to the scale of what is compared.
solver_tol <- function(m) {
  ctl <- mklearn:::method_control(m)
  for (nm in c("tol", "svm_tol")) if (!is.null(ctl[[nm]])) return(ctl[[nm]])
  1e-6
}
close_to <- function(a, b, tol) {
  a <- as.double(a); b <- as.double(b)
  length(a) == length(b) && all(is.finite(a)) && all(is.finite(b)) &&
    max(abs(a - b), 0) <= tol * max(1, abs(a), abs(b))
}
maxdiff <- function(a, b) format(signif(max(abs(as.double(a) - as.double(b))), 3))

# mkl() with the method's C (none for a method without one), quiet about the warnings every
# method may give (no convergence, nothing learned: checked separately); others surface.
fit_m <- function(x, y, m, C = 1, ...) {
  args <- c(list(x, y, method = m), if (has_C(m)) list(C = C), list(...))
  if (is.null(args$kernels)) args$kernels <- common_ks
  withCallingHandlers(do.call(mkl, args), warning = function(w)
    if (inherits(w, "mkl_degenerate") ||
        grepl("did not converge|learned nothing", conditionMessage(w)))
      invokeRestart("muffleWarning"))
}
common_ks <- kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(1:2))
common_data <- function(task, n = 40, p = 3, seed = 1) {
  d <- two_class(n = n, p = p, seed = seed)
  if (task == "regression") d$y <- d$x[, 1] + sin(d$x[, 2]) + 0.1 * rnorm(n)
  d
}
base_cache <- new.env()
base_fit <- function(m, task) {
  key <- paste(m, task)
  if (is.null(base_cache[[key]])) {
    d <- common_data(task)
    base_cache[[key]] <- fit_m(d$x, d$y, m)
  }
  base_cache[[key]]
}
cases <- do.call(rbind, lapply(mkl_methods(), function(m)
  data.frame(method = m, task = tasks_of(m), stringsAsFactors = FALSE)))
case_label <- function(m, task) paste0("method '", m, "', ", task)

# Without times, the call and solver timings, a fit is a function of its input.
strip_times <- function(f) {
  f$timing <- NULL
  f$call <- NULL
  f$history$time <- NULL
  f$info <- f$info[!grepl("time", names(f$info))]
  f
}
# A relative gap below zero by more than rounding (kernels updated along a line accumulate it)
# is a certificate that cannot hold.
gap_rounding <- 1e-8
# The invariants of any fit: weights on the simplex, or all zero exactly when the model learned
# nothing (then its predictions are constant); finite fitted values; a certified convergence.
check_fit_invariants <- function(f, lab, newx = NULL) {
  w <- f$weights
  nothing <- !is.null(f$learned_nothing)
  expect_true(all(is.finite(fitted(f))), label = paste("finite fitted values:", lab))
  expect_check("weights_simplex", all(is.finite(w)) && all(w >= 0) &&
                 (all(w == 0) || abs(sum(w) - 1) <= 1e-10), lab)
  expect_check("learned_nothing_weights", !nothing || all(w == 0), lab)
  expect_check("zero_weights_learned_nothing", !all(w == 0) || nothing, lab)
  if (nothing && !is.null(newx)) {
    pr <- predict(f, newx, type = "link")
    expect_check("learned_nothing_constant", all(pr == pr[1L]), lab)
  }
  gap <- utils::tail(f$history$gap, 1L)
  tol <- mklearn:::method_control(f$method)[["tol"]]
  if (length(gap) && !is.na(gap)) {
    glab <- sprintf("%s (gap %s, tol %s)", lab, format(signif(gap, 3)), format(tol))
    expect_check("gap_nonnegative", gap >= -gap_rounding, glab)
    if (f$converged && !is.null(tol)) expect_check("converged_gap", gap <= tol, glab)
  }
}
# A certificate that cannot hold makes comparisons of the fit meaningless: they are then
# counted under that check.
sound <- function(f) {
  gap <- utils::tail(f$history$gap, 1L)
  !length(gap) || is.na(gap) || gap >= -gap_rounding
}
compare_check <- function(check, fits, ok, label)
  expect_check(if (all(vapply(fits, sound, NA))) check else "gap_nonnegative", ok, label)

test_that("the checks run on every method of the registry and its tasks", {
  expect_setequal(unique(cases$method), mkl_methods())
  for (m in mkl_methods()) expect_true(length(tasks_of(m)) > 0L, label = m)
  expect_true(all(nzchar(.pending_checks)))
})

test_that("one sample and one class are refused; two points give a sensible fit", {
  for (i in seq_len(nrow(cases))) {
    m <- cases$method[i]; task <- cases$task[i]; lab <- case_label(m, task)
    d <- common_data(task)
    two <- c(which(d$y == max(d$y))[1L], which(d$y == min(d$y))[1L])
    if (task == "classification") {
      expect_error(fit_m(d$x[1L, , drop = FALSE], d$y[1L], m), "'y' has a single class",
                   label = lab)
      up <- d$y == 1
      expect_error(fit_m(d$x[up, ], d$y[up], m), "'y' has a single class \\(1\\)", label = lab)
      yf <- factor(c("a", "b")[(d$y > 0) + 1L], levels = c("a", "b"))
      expect_error(fit_m(d$x[up, ], yf[up], m), "'y' has a single class \\('b'\\)",
                   label = lab)
      f <- fit_m(d$x[two, ], d$y[two], m)
      # two distinct points of opposite classes at C = 1: both classified right
      expect_identical(sign(fitted(f)), d$y[two], label = paste(lab, "two points, fitted"))
      expect_identical(predict(f, d$x[two, ]), d$y[two], label = paste(lab, "two points"))
    } else {
      expect_error(fit_m(d$x[1L, , drop = FALSE], d$y[1L], m, task = task),
                   "'y' is constant; there is nothing to learn", label = lab)
      f <- fit_m(d$x[two, ], d$y[two], m, task = task)
      # a fit that follows the two responses, or a constant model that says so
      ok <- !is.null(f$learned_nothing) ||
        diff(predict(f, d$x[two, ])) * diff(d$y[two]) > 0
      expect_true(ok, label = paste(lab, "two points"))
    }
    check_fit_invariants(f, paste(lab, "two points"), d$x)
  }
})

test_that("NaN and Inf are refused in x, y, new data, precomputed kernels and C", {
  for (i in seq_len(nrow(cases))) {
    m <- cases$method[i]; task <- cases$task[i]; lab <- case_label(m, task)
    d <- common_data(task, n = 20)
    for (v in c(NaN, NA)) {
      x <- d$x; x[3, 2] <- v
      expect_error(fit_m(x, d$y, m), "'x' contains missing values", label = lab)
      y <- d$y; y[4] <- v
      expect_error(fit_m(d$x, y, m), "'y' contains missing values", label = lab)
    }
    for (v in c(Inf, -Inf)) {
      x <- d$x; x[3, 2] <- v
      expect_error(fit_m(x, d$y, m), "'x' contains infinite values", label = lab)
      y <- d$y; y[4] <- v
      expect_error(fit_m(d$x, y, m), "'y' contains infinite values", label = lab)
    }
    f <- base_fit(m, task)
    for (v in c(NaN, Inf)) {
      z <- d$x[1:3, ]; z[2, 1] <- v
      expect_error(predict(f, z, na.action = na.fail),
                   "'newx' contains (missing|infinite) values", label = lab)
    }
    K <- gram(common_ks, d$x)
    fk <- fit_m(NULL, d$y, m, kernels = K)
    for (v in c(NaN, Inf)) {
      Kb <- K; Kb[1, 2, 2] <- Kb[2, 1, 2] <- v
      expect_error(fit_m(NULL, d$y, m, kernels = Kb),
                   "'kernels' contains NA or infinite values \\(kernel\\(s\\) 2\\)", label = lab)
      expect_error(predict(fk, newkernels = Kb[1:3, , , drop = FALSE]),
                   "'newkernels' contains NA or infinite values", label = lab)
    }
    if (has_C(m)) {
      expect_error(fit_m(d$x, d$y, m, C = NaN), "'C' must be positive and finite", label = lab)
      expect_error(fit_m(d$x, d$y, m, C = -Inf), "'C' must be positive and finite", label = lab)
      if (entry(m)$C_inf && task == "classification") {
        expect_s3_class(fit_m(d$x, d$y, m, C = Inf), "mkl")
      } else {
        expect_error(fit_m(d$x, d$y, m, C = Inf), "'C' must be positive and finite", label = lab)
      }
    } else {
      for (C in c(1, NaN, Inf))
        expect_error(mkl(d$x, d$y, kernels = common_ks, method = m, C = C),
                     sprintf("method '%s' has no regularisation constant C", m), label = lab)
    }
  }
})

test_that("predictions on a subset are the subset of the predictions", {
  idx <- c(5L, 2L, 17L, 30L, 2L)
  for (i in seq_len(nrow(cases))) {
    m <- cases$method[i]; task <- cases$task[i]; lab <- case_label(m, task)
    d <- common_data(task)
    f <- base_fit(m, task)
    types <- if (task == "classification") c("link", "class", "response") else "link"
    for (type in types) {
      all_rows <- predict(f, d$x, type = type)
      expect_equal(predict(f, d$x[idx, ], type = type), all_rows[idx], tolerance = 1e-12,
                   label = paste(lab, type))
      expect_equal(predict(f, d$x[7, , drop = FALSE], type = type), all_rows[7],
                   tolerance = 1e-12, label = paste(lab, type, "one row"))
    }
    K <- gram(common_ks, d$x)
    fk <- fit_m(NULL, d$y, m, kernels = K)
    pk <- predict(fk, newkernels = K, type = "link")
    expect_equal(predict(fk, newkernels = K[idx, , , drop = FALSE], type = "link"), pk[idx],
                 tolerance = 1e-12, label = paste(lab, "precomputed"))
  }
})

test_that("predict(fit, x_train) equals fitted(fit)", {
  for (i in seq_len(nrow(cases))) {
    m <- cases$method[i]; task <- cases$task[i]; lab <- case_label(m, task)
    d <- common_data(task)
    f <- base_fit(m, task)
    p <- predict(f, d$x, type = "link")
    expect_check("fitted_equals_predict", close_to(p, fitted(f), 1e-10),
                 paste(lab, "max difference", maxdiff(p, fitted(f))))
    expect_identical(predict(f, type = "link"), fitted(f), label = lab)
    if (task == "classification") {
      err <- mean(predict(f, d$x) != d$y)
      expect_check("fitted_equals_predict", summary(f)$train[["error"]] == err,
                   paste(lab, "training error"))
    }
    K <- gram(common_ks, d$x)
    fk <- fit_m(NULL, d$y, m, kernels = K)
    pk <- predict(fk, newkernels = K, type = "link")
    expect_check("fitted_equals_predict", close_to(pk, fitted(fk), 1e-10),
                 paste(lab, "precomputed, max difference", maxdiff(pk, fitted(fk))))
  }
})

test_that("fitting twice gives identical results", {
  for (i in seq_len(nrow(cases))) {
    m <- cases$method[i]; task <- cases$task[i]; lab <- case_label(m, task)
    d <- common_data(task)
    f1 <- base_fit(m, task)
    f2 <- fit_m(d$x, d$y, m)
    expect_identical(strip_times(f2), strip_times(f1), label = lab)
    if ("fly" %in% entry(m)$stores) {
      ctl <- mkl_control(store = "fly")
      expect_identical(strip_times(fit_m(d$x, d$y, m, control = ctl)),
                       strip_times(fit_m(d$x, d$y, m, control = ctl)), label = paste(lab, "fly"))
    }
  }
})

test_that("the input is not modified, by mkl() or by predict()", {
  for (i in seq_len(nrow(cases))) {
    m <- cases$method[i]; task <- cases$task[i]; lab <- case_label(m, task)
    d <- common_data(task)
    x <- d$x; x0 <- x + 0
    y <- d$y; y0 <- y + 0
    xd <- as.data.frame(x); xd0 <- as.data.frame(x0)
    f <- fit_m(x, y, m)
    fit_m(xd, y, m, standardize = FALSE)
    expect_identical(x, x0, label = lab)
    expect_identical(y, y0, label = lab)
    expect_identical(xd, xd0, label = lab)
    if (task == "classification") {
      yf <- factor(ifelse(y > 0, "b", "a")); yf0 <- factor(as.character(yf))
      fit_m(x, yf, m)
      expect_identical(yf, yf0, label = lab)
    }
    K <- gram(common_ks, x); K0 <- K + 0
    fk <- fit_m(NULL, y, m, kernels = K)
    expect_identical(K, K0, label = paste(lab, "precomputed kernels"))
    keep <- c("weights", "alpha", "b", "x", "fitted", "normalization", "standardize", "state")
    snap <- unserialize(serialize(unclass(f)[keep], NULL))
    z <- x[1:5, ]; z0 <- z + 0
    predict(f, z, type = "link")
    predict(f, z)
    predict(fk, newkernels = K[1:5, , , drop = FALSE])
    expect_identical(z, z0, label = paste(lab, "newx"))
    expect_identical(K, K0, label = paste(lab, "newkernels"))
    expect_identical(unclass(f)[keep], snap, label = paste(lab, "the fit, by predict()"))
  }
})

test_that("column order and names are handled by mkl() as by predict()", {
  for (i in seq_len(nrow(cases))) {
    m <- cases$method[i]; task <- cases$task[i]; lab <- case_label(m, task)
    d <- common_data(task)
    x <- d$x
    f <- base_fit(m, task)
    p <- predict(f, x, type = "link")
    # new data: matched by name when both sides have names, by position otherwise
    expect_identical(predict(f, x[, 3:1], type = "link"), p, label = paste(lab, "reordered"))
    expect_identical(predict(f, as.data.frame(x), type = "link"), p, label = paste(lab, "df"))
    expect_identical(unname(predict(f, unname(x), type = "link")), unname(p),
                     label = paste(lab, "unnamed newx"))
    expect_error(predict(f, x[, -2]), "'newx' lacks column\\(s\\) the model was fitted on: v2",
                 label = lab)
    fu <- fit_m(unname(x), d$y, m)
    expect_identical(unname(predict(fu, x[, 3:1], type = "link")),
                     unname(predict(fu, unname(x[, 3:1]), type = "link")),
                     label = paste(lab, "unnamed fit, named newx: by position"))
    # fitting: a data frame is its matrix; columns in another order give the same model on
    # kernels of all features (up to rounding, so to the solver's tolerance)
    expect_identical(strip_times(fit_m(as.data.frame(x), d$y, m))[c("weights", "fitted")],
                     strip_times(f)[c("weights", "fitted")], label = paste(lab, "df fit"))
    fr <- fit_m(x[, 3:1], d$y, m)
    pr <- predict(fr, x, type = "link")
    expect_true(close_to(pr, p, solver_tol(m)),
                label = paste(lab, "columns reordered, max difference", maxdiff(pr, p)))
    # duplicated names: refused, or matched by position (the fit on the same data with unique
    # names predicts the same)
    xd <- x; colnames(xd) <- c("a", "a", "b")
    fd <- tryCatch(fit_m(xd, d$y, m), error = function(e) e)
    ok <- if (inherits(fd, "error")) grepl("duplicate", conditionMessage(fd)) else
      identical(unname(predict(fd, xd, type = "link")), unname(p))
    expect_check("duplicated_names", ok, lab)
    # precomputed kernels: new kernels matched by kernel name, or a mismatch refused
    K <- gram(common_ks, x)
    fk <- fit_m(NULL, d$y, m, kernels = K)
    pk <- predict(fk, newkernels = K, type = "link")
    rev_k <- K[, , 4:1, drop = FALSE]
    pr <- tryCatch(predict(fk, newkernels = rev_k, type = "link"), error = function(e) e)
    ok <- if (inherits(pr, "error")) grepl("newkernels", conditionMessage(pr)) else
      close_to(pr, pk, 1e-12)
    expect_check("newkernels_names", ok, lab)
  }
})

test_that("a fit reported converged has a certified gap within its tolerance", {
  for (i in seq_len(nrow(cases))) {
    m <- cases$method[i]; task <- cases$task[i]; lab <- case_label(m, task)
    d <- common_data(task, seed = 4)
    for (C in if (has_C(m)) c(0.05, 1, 20) else 1) {
      f <- fit_m(d$x, d$y, m, C = C)
      check_fit_invariants(f, paste(lab, "C =", C), d$x[1:5, ])
    }
  }
})

test_that("weights: on the simplex, or all zero exactly when the model learned nothing", {
  set.seed(3)
  z <- matrix(rnorm(30 * 3), 30, 3)
  zz <- rbind(z, z)                        # every point twice, with opposite labels
  yy <- rep(c(1, -1), each = 30)
  Kzz <- gram(common_ks, zz)
  for (i in seq_len(nrow(cases))) {
    m <- cases$method[i]; task <- cases$task[i]; lab <- case_label(m, task)
    check_fit_invariants(base_fit(m, task), lab, common_data(task)$x)
    # the best model of these data is constant: every method must say it learned nothing
    f <- fit_m(zz, yy, m, task = task)
    check_fit_invariants(f, paste(lab, "opposite duplicates"), zz)
    # (MWUMKL's decision values are exact only to its epsilon: the coefficients of a point and
    # of its twin split where rounding breaks the tie between them, which differs between
    # machines, so its fitted values may vary within epsilon; it must then say that it
    # generalises nothing, NOTES-mwu.md)
    said <- !is.null(f$learned_nothing) || (m == "mwu" && !is.null(f$degenerate) &&
                                              diff(range(f$fitted)) < f$info$epsilon)
    expect_check("learned_nothing_detected", said, paste(lab, "opposite duplicates"))
    if (task == "classification") {
      acc <- mean(predict(f, zz) == yy)
      expect_check("fitted_equals_predict", summary(f)$train[["error"]] == 1 - acc,
                   paste(lab, "opposite duplicates, training error"))
    }
    # the same on precomputed kernels: one prediction per new row, whatever was learned
    fk <- fit_m(NULL, yy, m, kernels = Kzz, task = task)
    check_fit_invariants(fk, paste(lab, "opposite duplicates, precomputed"))
    for (type in if (task == "classification") c("link", "class") else "link")
      expect_check("predict_length",
                   length(predict(fk, newkernels = Kzz[1:7, , , drop = FALSE], type = type)) == 7L,
                   paste(lab, "opposite duplicates, precomputed,", type))
  }
})

test_that("dense and on-the-fly stores give the same model", {
  for (i in seq_len(nrow(cases))) {
    m <- cases$method[i]; task <- cases$task[i]; lab <- case_label(m, task)
    if (!all(c("dense", "fly") %in% entry(m)$stores)) next
    d <- common_data(task)
    fd <- fit_m(d$x, d$y, m, control = mkl_control(store = "dense"))
    ff <- fit_m(d$x, d$y, m, control = mkl_control(store = "fly"))
    expect_identical(c(fd$store, ff$store), c("dense", "fly"))
    tol <- solver_tol(m)
    expect_true(close_to(fd$weights, ff$weights, tol),
                label = paste(lab, "weights, max difference", maxdiff(fd$weights, ff$weights)))
    expect_true(close_to(fitted(fd), fitted(ff), tol),
                label = paste(lab, "fitted, max difference", maxdiff(fitted(fd), fitted(ff))))
    pd <- predict(fd, d$x[1:10, ], type = "link")
    pf <- predict(ff, d$x[1:10, ], type = "link")
    expect_true(close_to(pd, pf, tol), label = paste(lab, "predict, max difference",
                                                     maxdiff(pd, pf)))
    expect_true(close_to(fd$objective, ff$objective, tol), label = paste(lab, "objective"))
  }
})

test_that("swapping the two classes (or negating a numeric response) mirrors the model", {
  for (i in seq_len(nrow(cases))) {
    m <- cases$method[i]; task <- cases$task[i]; lab <- case_label(m, task)
    d <- common_data(task)
    f <- base_fit(m, task)
    fm <- fit_m(d$x, -d$y, m)
    tol <- solver_tol(m)
    expect_true(close_to(fm$weights, f$weights, tol),
                label = paste(lab, "weights, max difference", maxdiff(fm$weights, f$weights)))
    expect_true(close_to(fitted(fm), -fitted(f), tol),
                label = paste(lab, "fitted, max difference", maxdiff(fitted(fm), -fitted(f))))
    expect_true(close_to(fm$b, -f$b, tol), label = paste(lab, "bias"))
    if (task == "classification") {
      yl <- c("no", "yes")[(d$y > 0) + 1L]
      fa <- fit_m(d$x, factor(yl, levels = c("no", "yes")), m)
      fb <- fit_m(d$x, factor(yl, levels = c("yes", "no")), m)
      expect_true(close_to(fitted(fb), -fitted(fa), tol), label = paste(lab, "factor levels"))
      pa <- predict(fa, d$x[1:20, ])
      pb <- predict(fb, d$x[1:20, ])
      expect_identical(as.character(pb), as.character(pa), label = paste(lab, "classes"))
    }
  }
})

test_that("multiclass fits (methods whose entry has multiclass): the same checks", {
  set.seed(5)
  x <- matrix(rnorm(45 * 3), 45, 3, dimnames = list(NULL, c("a", "b", "c")))
  y <- factor(c("p", "q", "r")[1L + (x[, 1] > 0) + (x[, 2] > 0.5)])
  strip_multi <- function(f) {
    f$timing <- NULL
    f$call <- NULL
    f$fits <- lapply(f$fits, strip_times)
    f
  }
  idx <- c(9L, 2L, 30L)
  for (m in Filter(function(m) entry(m)$multiclass, mkl_methods()))
    for (scheme in c("ovr", "ovo")) {
      lab <- sprintf("method '%s', multiclass '%s'", m, scheme)
      f <- fit_m(x, y, m, multiclass = scheme)
      expect_s3_class(f, "mkl_multi")
      for (k in seq_along(f$fits))
        check_fit_invariants(f$fits[[k]], paste(lab, names(f$fits)[k]))
      p <- predict(f, x, type = "link")
      expect_check("fitted_equals_predict", close_to(p, fitted(f), 1e-10),
                   paste(lab, "max difference", maxdiff(p, fitted(f))))
      expect_equal(predict(f, x[idx, ], type = "link"), p[idx, , drop = FALSE],
                   tolerance = 1e-12, label = paste(lab, "subset"))
      expect_identical(predict(f, x[idx, ]), predict(f, x)[idx], label = paste(lab, "classes"))
      expect_identical(predict(f, x[, 3:1]), predict(f, x), label = paste(lab, "reordered"))
      expect_identical(strip_multi(fit_m(x, y, m, multiclass = scheme)), strip_multi(f),
                       label = paste(lab, "twice"))
    }
})

test_that("case weights of 2 equal duplicated rows, for the methods that take case weights", {
  ms <- case_weight_methods()
  expect_true(length(ms) > 0L)
  # on the kernels of the n rows (precomputed), so that only the weights differ: a row of
  # weight 2 and the same row twice give the same objective, kernel weights and decision values
  for (m in ms) for (task in tasks_of(m)) {
    lab <- case_label(m, task)
    d <- common_data(task, n = 30)
    K <- gram(common_ks, d$x)
    w <- rep(c(2, 1), c(10, 20))
    idx <- rep(1:30, w)
    fw <- fit_m(NULL, d$y, m, kernels = K, weights = w)
    fdup <- fit_m(NULL, d$y[idx], m, kernels = K[idx, idx, ])
    tol <- solver_tol(m)
    expect_check("case_weights_objective", close_to(fw$objective, fdup$objective, tol),
                 paste(lab, "objective", maxdiff(fw$objective, fdup$objective)))
    expect_check("case_weights_weights", close_to(fw$weights, fdup$weights, sqrt(tol)),
                 paste(lab, "weights", maxdiff(fw$weights, fdup$weights)))
    expect_check("case_weights_fitted",
                 close_to(fitted(fw), fitted(fdup)[match(1:30, idx)], sqrt(tol)),
                 paste(lab, "fitted", maxdiff(fitted(fw), fitted(fdup)[match(1:30, idx)])))
    expect_identical(fw$case_weights, w, label = lab)
  }
  # the other methods refuse them, naming the method
  for (m in setdiff(mkl_methods(), ms))
    expect_error(fit_m(NULL, common_data(tasks_of(m)[1L], n = 10)$y, m,
                       kernels = gram(common_ks, common_data(tasks_of(m)[1L], n = 10)$x),
                       weights = rep(1, 10)),
                 sprintf("method '%s' does not take case weights", m), label = m)
})

# --- randomised invariants ------------------------------------------------------------------
# A random problem: n, p, kernel set (or its arrays as precomputed kernels), task, loss,
# method, C, store, standardisation; its label (number and seed) rebuilds it.
random_problem <- function(i, seed) {
  set.seed((seed * 100003 + i) %% .Machine$integer.max)
  m <- sample(mkl_methods(), 1L)
  e <- entry(m)
  task <- sample(tasks_of(m), 1L)
  loss <- sample(e$losses[[task]], 1L)
  n <- sample(c(2:6, 10L, 25L, 50L), 1L)
  p <- sample(1:5, 1L)
  x <- matrix(rnorm(n * p), n, p) * sample(c(0.01, 1, 100), 1L)
  colnames(x) <- paste0("c", seq_len(p))
  y <- if (task == "classification") {
    y <- sample(c(-1, 1), n, replace = TRUE)
    y[sample.int(n, 2L)] <- c(-1, 1)
    y
  } else x[, 1L] + rnorm(n)
  fams <- list(rbf_kernel(sort(unique(sample(c(0.2, 0.5, 1, 3, 10), 2L)))),
               poly_kernel(sample(1:3, 1L)), linear_kernel(), laplace_kernel(1))
  fams <- fams[sort(sample.int(4L, sample(1:3, 1L)))]
  feats <- sample(list("all", "each", c("all", "each")), 1L)[[1L]]
  ks <- do.call(kernel_set, c(fams, list(features = feats,
                                         normalize = sample(c("trace", "center_trace"), 1L))))
  C <- if (e$C == "none") NA else if (e$C_inf && task == "classification" && runif(1) < 0.1)
    Inf else signif(10^runif(1, -2, 2), 2)
  store <- sample(intersect(e$stores, c("dense", "fly")), 1L)   # exact stores (low rank: its tests)
  standardize <- sample(list(TRUE, FALSE, "range"), 1L)[[1L]]
  # one problem in five fits the kernel set's arrays as precomputed kernels
  K <- if (runif(1) < 0.2) gram(ks, x)
  list(i = i, seed = seed, method = m, task = task, loss = loss, n = n, p = p, x = x, y = y,
       kernels = ks, C = C, store = if (is.null(K)) store else "dense",
       standardize = standardize, K = K,
       label = sprintf(paste0("random problem %d (seed %d): method '%s', %s, loss '%s', ",
                              "n = %d, p = %d, C = %s%s"), i, seed, m, task, loss, n, p,
                       format(C), if (is.null(K)) "" else ", precomputed"))
}
fit_problem <- function(pb, y = pb$y, store = pb$store) {
  if (!is.null(pb$K))
    return(fit_m(NULL, y, pb$method, C = pb$C, kernels = pb$K, task = pb$task, loss = pb$loss))
  fit_m(pb$x, y, pb$method, C = pb$C, kernels = pb$kernels, task = pb$task, loss = pb$loss,
        standardize = pb$standardize, control = mkl_control(store = store))
}
# decision values of a problem's fit on some of its training rows
predict_rows <- function(f, pb, rows = seq_len(pb$n)) {
  if (is.null(pb$K)) predict(f, pb$x[rows, , drop = FALSE], type = "link") else
    predict(f, newkernels = pb$K[rows, , , drop = FALSE], type = "link")
}

# The check a random problem's error fails: a pending defect, or "random_fit" (every random
# problem is valid, so it must have a fit).
error_check <- function(pb, msg) {
  if (grepl("MWUMKL found the problem infeasible", msg) && is.finite(pb$C))
    "mwu_soft_margin_feasible"
  else if (pb$method == "simple" && grepl("solver returned malformed weights", msg))
    "simple_malformed_weights"
  else "random_fit"
}
# Two fits of one problem that should agree (other store, mirrored labels): their objectives to
# the solver's tolerance, which the certificates guarantee (both within it of the optimum); the
# weights and decision values, at a flat optimum, only to its square root.
agree <- function(f, g, sgn, tol)
  close_to(f$objective, g$objective, tol) && close_to(g$weights, f$weights, sqrt(tol)) &&
  close_to(fitted(g), sgn * fitted(f), sqrt(tol))

check_problem <- function(pb) {
  lab <- pb$label
  f <- fit_problem(pb)
  check_fit_invariants(f, lab, if (is.null(pb$K)) pb$x)
  p <- predict_rows(f, pb)
  expect_check("predict_length", length(p) == pb$n, paste(lab, "predictions", length(p)))
  if (length(p) != pb$n) return(invisible())
  expect_check("fitted_equals_predict", close_to(p, fitted(f), 1e-10),
               paste(lab, "max difference", maxdiff(p, fitted(f))))
  idx <- rev(seq_len(pb$n))[seq_len(min(3L, pb$n))]
  expect_equal(predict_rows(f, pb, idx), p[idx], tolerance = 1e-12, label = paste(lab, "subset"))
  expect_identical(strip_times(fit_problem(pb)), strip_times(f), label = paste(lab, "twice"))
  tol <- solver_tol(pb$method)
  other <- if (is.null(pb$K)) setdiff(intersect(entry(pb$method)$stores, c("dense", "fly")),
                                       pb$store)
  if (length(other)) {
    g <- fit_problem(pb, store = other[1L])
    compare_check("dense_fly", list(f, g), agree(f, g, 1, tol),
                  paste(lab, "dense and fly, max differences", maxdiff(g$objective, f$objective),
                        maxdiff(g$weights, f$weights), maxdiff(fitted(g), fitted(f))))
  }
  g <- fit_problem(pb, y = -pb$y)
  compare_check("mirror", list(f, g), agree(f, g, -1, tol),
                paste(lab, "mirrored, max differences", maxdiff(g$objective, f$objective),
                      maxdiff(g$weights, f$weights), maxdiff(fitted(g), -fitted(f))))
}

test_that("randomised invariants over random problems", {
  n_fuzz <- as.integer(Sys.getenv("MKLEARN_FUZZ_N", "30"))
  seed <- as.integer(Sys.getenv("MKLEARN_FUZZ_SEED", "20240"))
  for (i in seq_len(n_fuzz)) {
    pb <- random_problem(i, seed)
    # an error (not a failed expectation) ends this problem, reported, and the run goes on
    withRestarts(withCallingHandlers(check_problem(pb), error = function(e) {
      if (inherits(e, "expectation")) return()
      expect_check(error_check(pb, conditionMessage(e)), FALSE,
                   paste(pb$label, conditionMessage(e)))
      invokeRestart("next_problem")
    }), next_problem = function() NULL)
  }
})

# --- regressions found by the randomised run ----------------------------------------------
test_that("SimpleMKL's descent sets weights whose SVM value is the J it accepted", {
  # found by the randomised run: four points, six kernels; the step to the vertex on
  # linear[c2] accepted a probed J of 2.93, while the SVM on that kernel has 3.18
  x <- cbind(c1 = c(0.8651272, 0.9950608, 1.0215118, 1.2987457),
             c2 = c(2.380224, -1.318139, 1.580443, -1.050919))
  y <- c(1, -1, 1, -1)
  ks <- kernel_set(poly_kernel(2), linear_kernel(), laplace_kernel(1), features = "each")
  f <- fit_m(x, y, "simple", C = 5.6, kernels = ks, standardize = FALSE)
  fm <- fit_m(x, -y, "simple", C = 5.6, kernels = ks, standardize = FALSE)
  fh <- fit_m(x, y, "hessian", C = 5.6, kernels = ks, standardize = FALSE)
  check_fit_invariants(f, "simple, four points")
  expect_check("gap_nonnegative", close_to(f$objective, fh$objective, 1e-6),
               paste("simple, four points: objective", f$objective, "HessianMKL", fh$objective))
  expect_check("gap_nonnegative", close_to(fitted(fm), -fitted(f), 1e-6),
               paste("simple, four points, mirrored:", maxdiff(fitted(fm), -fitted(f))))
  expect_identical(sign(fitted(fh)), y)
})

test_that("SimpleMKL keeps a kernel on two points", {
  # found by the randomised run: the descent step drives every weight to zero
  # (to the last bit: rounded to 15 digits, the data fit)
  x <- cbind(c1 = c(-0.024229580671896556, -0.15711725862088385),
             c2 = c(-1.2618330917964886, 0.87183722814320208),
             c3 = c(1.5511207473501247, -0.4347381496054083),
             c4 = c(0.71526495290285452, -1.6819785979077626))
  ks <- kernel_set(rbf_kernel(c(0.5, 3)), linear_kernel(), features = c("all", "each"))
  f <- tryCatch(fit_m(x, c(-1, 1), "simple", C = 9.3, kernels = ks, standardize = FALSE),
                error = function(e) e)
  if (inherits(f, "error")) {
    expect_match(conditionMessage(f), "solver returned malformed weights")
    expect_check("simple_malformed_weights", FALSE, "simple, two points, C = 9.3")
  } else {
    expect_check("simple_malformed_weights", TRUE, "simple, two points, C = 9.3")
    check_fit_invariants(f, "simple, two points, C = 9.3", x)
    expect_identical(sign(fitted(f)), c(-1, 1))
  }
})

test_that("MWUMKL fits a soft margin at a small C on a few points", {
  # found by the randomised run; the 2-norm soft-margin problem is feasible for every C
  d <- two_class(n = 4, p = 3, seed = 2)
  ks <- kernel_set(rbf_kernel(c(1, 3)))
  for (C in c(0.01, 0.05)) {
    f <- tryCatch(fit_m(d$x, d$y, "mwu", C = C, kernels = ks), error = function(e) e)
    lab <- paste("mwu, four points, C =", C)
    if (inherits(f, "error")) {
      expect_match(conditionMessage(f), "MWUMKL stopped at iteration")
      expect_check("mwu_soft_margin_feasible", FALSE, paste(lab, conditionMessage(f)))
    } else check_fit_invariants(f, lab, d$x)
  }
  expect_s3_class(fit_m(d$x, d$y, "mwu", C = 0.3, kernels = ks), "mkl")
})

test_that("pending checks (failing today for defects fixed elsewhere)", {
  # every pending entry names a check this file runs
  expect_true(all(names(.pending_checks) %in% ls(checks_run)),
              label = paste(setdiff(names(.pending_checks), ls(checks_run)), collapse = ", "))
  hit <- intersect(names(.pending_checks), ls(pending_log))
  if (nzchar(Sys.getenv("MKLEARN_FUZZ_N")))   # a long run lists every case
    for (k in hit) message(k, ":\n  ", paste(pending_log[[k]], collapse = "\n  "))
  if (length(hit) == 0L) succeed() else
    skip(paste(vapply(hit, function(k) sprintf("%s (%d cases: %s)", k, length(pending_log[[k]]),
                                               .pending_checks[[k]]), ""), collapse = "; "))
})
