#' Cross-validation over C
#'
#' Fits the path of `C` values on each training fold (kernels, normalisation and
#' standardisation rebuilt from the fold's training part, so nothing leaks from the held-out
#' part), evaluates the held-out loss, and refits the path on all the data.
#'
#' Without `foldid`, the folds are drawn at random, stratified by class for classification
#' (each class spread evenly over the folds). Fold fits that did not converge are counted:
#' `print()` shows them per C and `cv.mkl()` gives one warning. Fits that learned nothing (see
#' `learned_nothing` in [mkl()]), in the folds and on all the data, are counted too (`print()`
#' shows the folds' per C), and so are the fits on all the data that generalise nothing
#' (`degenerate` in [mkl()]; fold fits are not checked for it: their held-out loss is the
#' evidence); when C.min or C.1se has such fits, `cv.mkl()` gives one warning. Fold fits keep
#' Platt's sigmoid only where `type.measure` reads probabilities. When `C.min` is the largest or
#' the smallest C of the grid, a message says so (the best C may lie beyond the grid).
#'
#' @section Parallel folds:
#' With the `future.apply` package installed, the folds run through
#' [future.apply::future_lapply()], so whatever [future::plan()] the session sets runs them:
#' `plan(multisession, workers = 2)` on one machine, a PSOCK cluster, or a scheduler through
#' `future.batchtools`; without it (or under the default `plan(sequential)`, by [lapply()] on
#' the random-number streams `future_lapply()` would give them), one after the other. The
#' results are the same either way for a fixed `foldid` (and, without `foldid`,
#' for a fixed seed: the folds are drawn before the fits, and every fold gets its own
#' parallel-safe random-number stream). Each worker receives the data, the fold assignment and
#' the arguments of [mkl()], with a [kernel_set()] (a description of the kernels), and builds
#' the kernels of its training part itself: no kernel array is sent. (Precomputed kernels are
#' the exception: they are the data, so each worker receives a copy of the user's array.) On
#' several workers a fold fit uses one thread unless `mkl_control(nthreads = )` says otherwise.
#'
#' @section Progress:
#' With the `progressr` package installed, `cv.mkl()` reports a step per fold (and one for the
#' path on all the data) through [progressr::progressor()]; what is shown, if anything, is up
#' to the handlers the user sets (e.g. `progressr::handlers(global = TRUE)` or
#' `progressr::with_progress()`): without handlers nothing is printed. Paths (a vector `C`)
#' and multiclass fits of [mkl()] report a step per C and binary problem the same way;
#' `mkl_control(verbose = )` keeps the solvers' per-iteration trace.
#'
#' @section Multiclass:
#' A response of more than two classes is cross-validated with multiclass fits (see [mkl()]).
#' `"class"` is the multiclass misclassification rate, `"deviance"` the multinomial deviance
#' \eqn{-2 \log p_{y}} of the coupled class probabilities, and `"auc"` the multiclass AUC of
#' Hand and Till (2001): the mean over pairs of classes of the pairwise AUCs of the class
#' probabilities.
#'
#' @param x,y,... data and arguments as for [mkl()] (`kernels`, `method`, `loss`,
#'   `multiclass`, ...).
#'   With precomputed kernels (an n x n x M array or a list of matrices, used as given), `x`
#'   may be omitted; a fold trains on the rows and columns of its training part and predicts
#'   with the held-out-by-training block. Formula method: `x` is a formula and
#'   `data` (in `...`) a data frame, as in `cv.mkl(y ~ ., data = df)`, without `y`; factors
#'   are expanded once on all the data, and `fit` is a formula fit.
#' @param C a strictly decreasing vector of C values (at least two; with a vector `lambda`, one
#'   value is allowed and kept fixed), on the scale of [mkl()] (the SVM box constant on
#'   unit-diagonal kernels; larger C, less regularisation). Default: 21 values log-spaced from
#'   1000 down to 0.01, four per decade; for a regression from 10^4 down to 0.1.
#' @param lambda `NULL` (the `lambda` of `...`'s elastic net, if any), or a vector of elastic-net
#'   mixing parameters in \[0, 1\] (`method = "spicy", penalty = "elasticnet"`): each is
#'   cross-validated over the C path on the same folds and the pair (C, lambda) with the
#'   smallest mean held-out loss is chosen (of tied pairs, the smallest C, then the first
#'   lambda). Tomioka and Suzuki take lambda from
#'   `seq(0, 1, by = 0.2)`.
#' @param screen `"auto"` (the default), `NULL` (the kernels as `options(mklearn.screen)` leaves
#'   them: no kernel choice by CV), or a vector of
#'   screening thresholds (effective neighbours per training point; 0 keeps every kernel; see
#'   `kernels` in [mkl()]): for a [kernel_set()], the kernel choice is cross-validated with C.
#'   Each threshold leaves out, on each fold's training part, the kernels that are nearly the
#'   identity there (so a larger threshold leaves only wider Gaussians); the C path is fitted
#'   for every threshold on the same folds, and the pair (C, threshold) with the smallest mean
#'   held-out loss is chosen (of tied pairs, the smallest C, then the largest threshold).
#'   MKL solvers put their weight on the narrowest Gaussian they are offered, so this is how
#'   held-out data choose its width (see `inst/notes/NOTES-kernels.md`). The result then also
#'   holds `screen`, `screen.min`, `cvm_screen` (C x threshold), `kernels_screen` (the
#'   number of kernels left on all the data per threshold) and `screened` (the kernels left
#'   out on all the data at `screen.min`); `fit` is the path at `screen.min`.
#'
#'   `"auto"`: for a classification with a [kernel_set()] (or the default kernels; not with
#'   precomputed kernels, a vector `lambda` or `options(mklearn.screen)` set), the thresholds
#'   0, 20% and 35% of a fold's training rows, tried in this order: a threshold that
#'   leaves out no further kernel on all the data is skipped, and the search stops after the
#'   second in a row that does not lower the best held-out loss so far, or after one whose
#'   loss is above the best so far by more than its standard error. A threshold
#'   above 0 is taken only when its best loss is lower than that of every kernel (threshold 0)
#'   by more than one standard error; otherwise the result is the CV over C of every kernel.
#'   Every fit of this search first merges the near-duplicates of the set into the narrowest
#'   of them: kernels of the same type on the same features (neighbouring widths of a
#'   Gaussian) whose centred columns on the fit's training data have a mean cosine of at least
#'   0.99 (they are listed in `screened`; threshold 0 is then every kernel but these).
#' @param nfolds number of folds, a whole number >= 2; ignored when `foldid` is given.
#' @param foldid optional fold assignment, integers 1..K, one per observation.
#' @param type.measure for classification `"class"` (misclassification rate), `"deviance"`
#'   (binomial deviance of the `response` probabilities; multiclass: multinomial) or `"auc"`
#'   (area under the ROC curve of the held-out decision values, per fold; multiclass: see
#'   Multiclass; it is maximised, so `C.min` has the largest and `C.1se` is the smallest C
#'   within one standard error of it; every held-out fold needs two classes); for regression
#'   `"mse"` or `"mae"`. Default: `"class"` or `"mse"`. Every measure is averaged within each
#'   fold, then over the folds. With case weights (`weights =` in `...`, one per observation),
#'   each fold is fitted with the weights of its training part and its measure is the
#'   weighted mean over its held-out part (`"auc"` is not weighted); `class.weights` is passed
#'   to every fit.
#' @return An object of class `"cv.mkl"`: `C`, `cvm` (mean held-out loss), `cvsd` (its
#'   standard error), `cvup`, `cvlo`, `C.min` (the C of the smallest mean held-out loss; of
#'   several C with the same loss, the most regularised, as glmnet does: the smallest C, since
#'   a smaller C regularises more for every method), `C.1se` (the most regularised C whose loss
#'   is within one standard error of the minimum: the smallest such C), `fit`
#'   (the path on all data; its call is the [mkl()] call that refits it; with `platt = "cv"`
#'   in [mkl_control()], its probabilities are Platt's sigmoid on the held-out decision values
#'   of these folds rather than of internal ones, so the refit's differ), `foldid`, `name`,
#'   `nonconverged` (per C, the number of folds whose fit did not converge), `learned_nothing`
#'   (per C, the number of folds whose fit learned nothing), `path_flags` (per C, whether the
#'   fit on all the data learned nothing or generalises nothing), `n_foldfits`
#'   (the number of fold fits), `C_default` (whether `C` was the default grid). With a vector
#'   `lambda`, also `lambda`,
#'   `lambda.min` (the chosen value), `cvm_grid` (mean held-out loss, C x lambda); `cvm`, `fit`
#'   etc. are those of `lambda.min`.
#' @examples
#' set.seed(4)
#' x <- matrix(rnorm(300), 100)
#' y <- ifelse(x[, 1]^2 + x[, 2] > 1, 1, -1)
#' cv <- cv.mkl(x, y, kernels = kernel_set(rbf_kernel(c(0.5, 2))), C = c(100, 10, 1, 0.1),
#'              nfolds = 3)
#' cv
#' predict(cv, x[1:5, ], s = "C.min")
#' @export
cv.mkl <- function(x, y, ..., C, lambda = NULL, screen = "auto", nfolds = 5L, foldid = NULL,
                   type.measure = NULL) {
  cl <- match.call()
  grid_default <- missing(C)
  formula <- NULL
  data <- NULL
  dots <- list(...)
  if (!missing(x) && inherits(x, "formula")) {
    # the formula method: the design matrix of all the data (factors expanded once, so every
    # fold has the same columns); the path on all the data is a formula fit
    if (!missing(y))
      stop("the formula method of cv.mkl takes the response from the formula; do not give 'y'",
           call. = FALSE)
    data <- dots[["data"]]
    if (is.null(data)) stop("the formula interface needs 'data'", call. = FALSE)
    formula <- x
    dots[["data"]] <- NULL
    if (!is.null(dots[["subset"]]))
      stop("the formula method of cv.mkl takes no 'subset': give the rows as 'data[rows, ]'",
           call. = FALSE)
    des <- formula_design(formula, data, if (is.null(dots[["na.action"]])) stats::na.omit else
      dots[["na.action"]])
    dots[["na.action"]] <- NULL
    # the rows na.action dropped (said once, here) are dropped from the data of the refit too
    if (is.numeric(des$na.action)) {
      data <- data[-des$na.action, , drop = FALSE]
      # case weights given per row of the data: those of the kept rows
      if (is.numeric(dots[["weights"]]) && length(dots[["weights"]]) == length(des$y) +
          length(des$na.action))
        dots[["weights"]] <- dots[["weights"]][-des$na.action]
    }
    x <- des$x
    y <- des$y
  } else if (missing(x)) x <- NULL
  if (grid_default) C <- default_C_grid(y, dots[["task"]])
  m <- dots[["method"]]
  if (is.character(m) && length(m) == 1L && m %in% mkl_methods() && !takes_C(m))
    stop(sprintf("cv.mkl cross-validates C, and method '%s' has none (%s): fit it with mkl()",
                 m, method_info(m)$no_C), call. = FALSE)
  if (identical(screen, "auto")) screen <- if (screen_auto(x, y, dots, lambda)) "auto"
  common <- list(nfolds = nfolds, foldid = foldid, type.measure = type.measure,
                 formula = formula, data = data)
  # the search's training stores reuse one array (with_store_pool(), R/store.R)
  out <- with_store_pool(if (!is.null(screen))
    do.call(cv_screen, c(list(x, y), dots, list(C = C, lambda = lambda, screen = screen),
                         common))
  else if (length(lambda) > 1L)
    do.call(cv_lambda, c(list(x, y), dots, list(C = C, lambda = lambda), common))
  else if (length(lambda) == 1L)
    do.call(cv_path, c(list(x, y), dots, list(lambda = lambda, C = C), common))
  else do.call(cv_path, c(list(x, y), dots, list(C = C), common)))
  out$call <- cl
  out$C_default <- grid_default
  # the path on all the data records the mkl() call that refits it (so update() works)
  fc <- cl
  fc[[1L]] <- as.name("mkl")
  fc <- fc[!(names(fc) %in% c("nfolds", "foldid", "type.measure", "lambda", "screen"))]
  fc[["C"]] <- out$C
  if (!is.null(out$lambda.min)) fc[["lambda"]] <- out$lambda.min
  out$fit$call <- fc
  for (i in seq_along(out$fit$fits)) out$fit$fits[[i]]$call <- fc
  nc <- out$nonconverged
  if (!is.null(nc) && sum(nc) > 0L)
    warning(sprintf(paste0("%d of %d fold fits did not converge (at C = %s); the held-out ",
                           "losses at these C rest on unconverged fits. mkl() on the training ",
                           "part of a fold warns which mkl_control() settings to change."),
                    sum(nc), out$n_foldfits,
                    paste(signif(out$C[nc > 0], 3), collapse = ", ")), call. = FALSE)
  report_fit_notes(out)
  if (length(C) > 1L) {
    edge <- if (out$C.min == max(out$C)) "largest" else if (out$C.min == min(out$C)) "smallest"
    if (!is.null(edge))
      message(sprintf(paste0("C.min = %s is the %s C of the grid (%s): the best C may lie ",
                             "beyond it; extend the grid with %s values"),
                      format(out$C.min, digits = 3), edge,
                      if (edge == "largest") "the least regularised" else "the most regularised",
                      if (edge == "largest") "larger" else "smaller"))
  }
  out
}

# Whether a fit (any binary fit of a multiclass one) has the note `kind`: "learned_nothing"
# or "degenerate" (new_mkl()).
fit_flag <- function(f, kind) {
  if (inherits(f, "mkl_multi")) return(any(vapply(f$fits, fit_flag, TRUE, kind)))
  !is.null(f[[kind]])
}

# Evaluates expr without the warnings of its fits that learned or generalise nothing (cv.mkl
# counts them from the fits and reports them once).
muffle_fit_notes <- function(expr) {
  muffle <- function(w) invokeRestart("muffleWarning")
  withCallingHandlers(expr, mkl_learned_nothing = muffle, mkl_degenerate = muffle)
}

# One warning per cv.mkl() call when the chosen C (C.min or C.1se) has fits (in the folds or on
# all the data) that learned nothing, or fits on all the data that generalise nothing (fold fits
# are not checked for that), counting them at every C. At other C they are expected (the ends of
# the grid) and print() shows the folds' per C.
report_fit_notes <- function(cv) {
  what <- c(learned_nothing = "learned nothing", degenerate = "generalise nothing or overfit")
  bad <- rep(FALSE, length(cv$C))
  parts <- character()
  for (kind in names(what)) {
    np <- cv$path_flags[, kind]
    nf <- cv[[kind]]
    folds <- if (is.null(nf)) "" else sprintf("%d of %d fold fits and ", sum(nf), cv$n_foldfits)
    if (is.null(nf)) nf <- 0L
    if (sum(nf) == 0L && !any(np)) next
    at <- nf > 0L | np
    bad <- bad | at
    parts <- c(parts, sprintf("%s%d of %d fits on all the data %s (at C = %s)", folds,
                              sum(np), length(np), what[[kind]],
                              paste(signif(cv$C[at], 3), collapse = ", ")))
  }
  if (!any(bad[cv$C %in% c(cv$C.min, cv$C.1se)])) return(invisible())
  warning(paste0(paste(parts, collapse = "; "), ", among them C.min or C.1se: mkl() at that ",
                 "C says why and what to change"), call. = FALSE)
}

# The default C grid of cv.mkl: log-spaced and decreasing, on mkl()'s scale of C (the SVM box
# constant on unit-diagonal kernels, where C = 1 is a useful default whatever n): from 1000
# (hardly regularised) to 0.01 (so regularised that the model is close to constant), four
# values per decade; for a regression (task as mkl() guesses it from y) regression_C_grid()
# (R/response.R). An unusable y gets the classification grid: mkl() refuses it.
default_C_grid <- function(y = NULL, task = NULL) {
  if (identical(guess_task(y, task), "regression")) regression_C_grid()
  else 10^seq(3, -2, by = -0.25)
}

# The task mkl() guesses from y ("classification" or "regression"; `task` as given to mkl()),
# quietly; NULL for a y that mkl() refuses (it says why when it is called).
guess_task <- function(y, task = NULL)
  tryCatch(suppressMessages(suppressWarnings(check_y(y, NROW(y), task, multiclass = TRUE)$task)),
           error = function(e) NULL)

# Fold numbers 1..nfolds; for classification, stratified: each class is spread evenly over
# the folds (the classes in random order within, the folds continuing from class to class).
make_folds <- function(y, nfolds, classification) {
  n <- length(y)
  if (!classification) return(sample(rep_len(seq_len(nfolds), n)))
  idx <- unlist(lapply(split(seq_len(n), as.character(y)),
                       function(i) i[sample.int(length(i))]), use.names = FALSE)
  foldid <- integer(n)
  foldid[idx] <- sample(nfolds)[rep_len(seq_len(nfolds), n)]
  foldid
}

# Cross-validation of one C path (the lambda of an elastic net, if any, is in '...'). With a
# formula, 'x' is its design matrix and 'y' its response, and the path on all the data is
# fitted by the formula method. The folds run through mk_lapply() (future.apply when
# installed): each receives the data, the fold assignment and mkl()'s arguments (a kernel
# description, not kernels), fits the path on its training part and returns its held-out
# measure per C.
cv_path <- function(x, y, ..., C, nfolds, foldid, type.measure, formula = NULL, data = NULL,
                    screen = NULL) {
  if (is.null(C) || !is.numeric(C) || length(C) < 2L)
    stop("cv.mkl needs a vector 'C' of at least two values", call. = FALSE)
  args <- list(...)
  if (inherits(args[["kernels"]], "mkl_kernel")) stop(family_not_set("kernels"), call. = FALSE)
  K <- NULL
  if (!is.null(args[["kernels"]]) && !inherits(args[["kernels"]], "kernel_set")) {
    # precomputed kernels: split by rows and columns in the folds (validated by mkl() below)
    K <- args[["kernels"]]
    args[["kernels"]] <- NULL
  }
  n <- NROW(y)
  if (is.null(foldid)) {
    nfolds <- check_count(nfolds, "nfolds", 2, n)
  } else {
    if (!is.numeric(foldid) || length(foldid) != n || anyNA(foldid) ||
        any(foldid != round(foldid)) || length(unique(foldid)) < 2L)
      stop("'foldid' must hold at least two fold numbers, one per observation", call. = FALSE)
  }
  tick <- mk_progressor(1L + if (is.null(foldid)) nfolds else length(unique(foldid)))
  old <- progress_quiet()
  # the path's probabilities are calibrated below on the folds' held-out decision values
  fit <- with_screen(screen, tryCatch(muffle_fit_notes(with_platt_deferred(if (is.null(formula))
    mkl(x, y, C = C, ...) else mkl(formula, data = data, C = C, ...))),
    finally = progress_restore(old)))
  calibrate <- platt_deferred(fit)
  warm <- fold_warm_states(fit)
  if (!is.null(K)) K <- as_kernel_array(K, test = TRUE)
  tick("the path on all the data")
  f1 <- fit$fits[[1]]
  task <- f1$task
  measures <- if (task == "classification") c("class", "deviance", "auc") else c("mse", "mae")
  if (is.null(type.measure)) type.measure <- measures[1L]
  if (!is.character(type.measure) || length(type.measure) != 1L ||
      !(type.measure %in% measures))
    stop(sprintf("type.measure for %s must be %s", task,
                 paste0("'", measures, "'", collapse = " or ")), call. = FALSE)
  yv <- f1$y            # coded: -1/+1, numeric, or (multiclass) the factor
  if (is.null(foldid)) foldid <- make_folds(yv, nfolds, task == "classification")
  folds <- sort(unique(foldid))
  if (task == "classification")    # named by the user's labels, not the internal -1/+1
    check_fold_classes(if (is.factor(yv)) yv else f1$classes[ifelse(yv > 0, 2L, 1L)], foldid,
                       folds, type.measure)
  xm <- if (is.null(x) || is.data.frame(x)) x else as.matrix(x)
  args$control <- worker_control(args$control)
  res <- mk_lapply(folds, cv_fold, x = xm, y = y, yv = yv, foldid = foldid, C = C,
                   args = args, measure = type.measure, tick = tick, K = K, screen = screen,
                   link = calibrate, warm = warm)
  if (calibrate) {     # held-out decision values per C: rows by fold, a column per problem
    dv <- lapply(seq_along(C), function(j) {
      m <- matrix(NA_real_, n, NCOL(res[[1L]]$link[[j]]))
      for (i in seq_along(folds)) m[foldid == folds[i], ] <- res[[i]]$link[[j]]
      m
    })
    fit <- platt_from_folds(fit, dv)
  }
  per_fold <- matrix(vapply(res, `[[`, numeric(length(C)), "measure"), nrow = length(C))
  conv <- matrix(vapply(res, `[[`, logical(length(C)), "converged"), nrow = length(C))
  nonconv <- as.integer(rowSums(!conv))    # per C, the folds whose fit did not converge
  # per C, the folds whose fit learned nothing or generalises nothing; and the fits on all data
  # (fold fits are not checked for degeneracy: with_fold_fit())
  flags <- lapply(c(learned_nothing = "learned_nothing", degenerate = "degenerate"),
                  function(kind) list(
                    folds = if (kind == "learned_nothing")
                      as.integer(rowSums(matrix(vapply(res, `[[`, logical(length(C)), kind),
                                                nrow = length(C)))),
                    path = vapply(fit$fits, fit_flag, TRUE, kind)))
  cvm <- rowMeans(per_fold)
  cvsd <- apply(per_fold, 1L, stats::sd) / sqrt(length(folds))
  # AUC is maximised, the losses minimised. C is decreasing along the path, and for every
  # method a smaller C regularises more: ties for the best value go to the most regularised C
  # (the last, as glmnet does), and C.1se is the most regularised C within one standard error.
  if (type.measure == "auc") {
    imin <- max(which(cvm == max(cvm, na.rm = TRUE)))
    within <- which(cvm >= cvm[imin] - cvsd[imin])
  } else {
    imin <- max(which(cvm == min(cvm, na.rm = TRUE)))
    within <- which(cvm <= cvm[imin] + cvsd[imin])
  }
  i1se <- max(within)
  structure(list(C = C, cvm = cvm, cvsd = cvsd, cvup = cvm + cvsd, cvlo = cvm - cvsd,
                 C.min = C[imin], C.1se = C[i1se], fit = fit, foldid = foldid,
                 name = type.measure, nonconverged = nonconv,
                 learned_nothing = flags$learned_nothing$folds,
                 path_flags = cbind(learned_nothing = flags$learned_nothing$path,
                                    degenerate = flags$degenerate$path),
                 n_foldfits = length(C) * length(folds)), class = "cv.mkl")
}

# Every training part must hold every class (a fit needs them all); AUC needs, in every
# held-out fold, both classes (binary) or at least two (multiclass: the pairs present count).
check_fold_classes <- function(yv, foldid, folds, measure) {
  cls <- unique(as.character(yv))
  for (k in folds) {
    miss <- setdiff(cls, as.character(yv[foldid != k]))
    if (length(miss))
      stop(sprintf(paste0("the training part of fold %s has no observation of class(es) %s; ",
                          "every class needs observations outside each fold"),
                   format(k), paste(miss, collapse = ", ")), call. = FALSE)
    held <- unique(as.character(yv[foldid == k]))
    if (measure == "auc" && length(held) < 2L)
      stop(sprintf(paste0("type.measure = 'auc' needs at least two classes in every held-out ",
                          "fold; fold %s has only '%s'"), format(k), held), call. = FALSE)
  }
}

# One fold: the path fitted on the training part, the held-out measure, convergence and the
# notes (learned nothing, generalises nothing) per C. Warnings of the fold fits are not passed
# on one by one: they are counted (and reported once by cv.mkl).
cv_fold <- function(k, x, y, yv, foldid, C, args, measure, tick, K = NULL, screen = NULL,
                    link = FALSE, warm = NULL) {
  old <- progress_quiet()
  on.exit(progress_restore(old))
  out <- foldid == k
  Kt <- NULL
  if (!is.null(K)) {
    args$kernels <- K[!out, !out, , drop = FALSE]
    Kt <- K[out, !out, , drop = FALSE]
  }
  xt <- if (is.null(x)) NULL else x[!out, , drop = FALSE]
  xo <- if (is.null(x)) NULL else x[out, , drop = FALSE]
  # fold fits need no calibrated probabilities: Platt's sigmoid on their training values
  args$control <- fold_control(args$control)
  # case weights: the training part's for the fit, the held-out part's for the measure
  wo <- NULL
  if (!is.null(args[["weights"]])) {
    if (length(args[["weights"]]) != length(foldid))
      stop(sprintf("'weights' has %d values for %d observations", length(args[["weights"]]),
                   length(foldid)), call. = FALSE)
    wo <- args[["weights"]][out]
    args[["weights"]] <- args[["weights"]][!out]
  }
  # the regression-on-whole-numbers message was given once, by the fit on all the data; the
  # sigmoid only where the measure reads probabilities
  sigmoid <- measure == "deviance" || (measure == "auc" && is.factor(yv))
  fk <- with_screen(screen, withCallingHandlers(
    suppressWarnings(with_fold_fit(sigmoid, with_fold_warm(warm, do.call(mkl, c(list(
      xt, y[!out], C = C), args))))),
    mklearn_task_message = function(m) invokeRestart("muffleMessage")))
  # the held-out decision values, once per fit: the measure and the probabilities of the path
  dv <- lapply(fk$fits, function(f) stats::predict(f, xo, type = "link", newkernels = Kt))
  res <- list(measure = vapply(seq_along(dv), function(j)
                fold_measure(fk$fits[[j]], xo, yv[out], measure, Kt, wo, link = dv[[j]]), 1),
              converged = vapply(fk$fits, function(f) isTRUE(f[["converged"]]), TRUE),
              learned_nothing = vapply(fk$fits, fit_flag, TRUE, "learned_nothing"))
  if (link) res$link <- lapply(dv, as.matrix)
  tick(sprintf("fold %s", format(k)))
  res
}

# Inside a fold fit (with_fold_fit()), new_mkl() (R/mkl.R) skips the degenerate check and,
# with `sigmoid` FALSE, new_mkl() and platt_path() (R/platt.R) skip Platt's sigmoid: a fold
# fit gives held-out decision values only (the check needs its own held-out evidence).
.fold_fit <- new.env(parent = emptyenv())
.fold_fit$check <- TRUE
.fold_fit$sigmoid <- TRUE

with_fold_fit <- function(sigmoid, expr) {
  old <- list(check = .fold_fit$check, sigmoid = .fold_fit$sigmoid)
  .fold_fit$check <- FALSE
  .fold_fit$sigmoid <- sigmoid
  on.exit({
    .fold_fit$check <- old$check
    .fold_fit$sigmoid <- old$sigmoid
  })
  expr
}

# The first fit of each fold's path starts from the kernel weights of the path on all the data
# at the same C (SVM family: a fit from uniform weights takes most of a fold's time; see
# NOTES-model.md). States per binary problem by name ("binary" for a binary fit), read by
# fold_warm_state() when a fit has no other start.
.fold_warm <- new.env(parent = emptyenv())

fold_warm_states <- function(fit) {
  f1 <- fit$fits[[1L]]
  if (!(f1$method %in% c("simple", "hessian", "lp"))) return(NULL)
  bins <- if (inherits(f1, "mkl_multi")) f1$fits else list(binary = f1)
  lapply(bins, function(b) {
    w <- restore_state(b)$weights
    if (length(w) && all(is.finite(w)) && sum(w) > 0) list(weights = w, labels = b$labels)
  })
}

with_fold_warm <- function(warm, expr) {
  old <- .fold_warm$states
  .fold_warm$states <- warm
  on.exit(.fold_warm$states <- old)
  expr
}

# The start of the first fit of problem `name` on the kernels `labels` inside a fold (NULL:
# none, or none of the weighted kernels is in the fold's set, as screening may leave it).
fold_warm_state <- function(name, labels) {
  st <- .fold_warm$states[[name]]
  if (is.null(st)) return(NULL)
  if (identical(st$labels, labels)) return(list(weights = st$weights))
  # screening left the fold another kernel set: the weights of its kernels, rescaled
  w <- st$weights[match(labels, st$labels)]
  w[is.na(w)] <- 0
  if (sum(w) > 0) list(weights = w / sum(w))
}

# The control of a fold fit: Platt's sigmoid on the training decision values (mkl_control(platt
# = "train")), so that a fold does not run the internal cross-validation of probabilities.
fold_control <- function(control) {
  if (is.null(control)) control <- mkl_control()
  if (inherits(control, "mkl_control")) control[["platt"]] <- "train"
  control
}

# The held-out measure of one fit: misclassification rate, deviance (binomial or multinomial,
# of the 'response' probabilities), AUC (binary: of the decision values; multiclass: Hand and
# Till's mean over pairs of classes of the pairwise AUCs of the class probabilities), MSE, MAE.
# With case weights `w` of the held-out rows, the weighted mean of the per-row losses (AUC is
# not weighted). `link`: the fit's decision values on newx (predict(type = "link")), from which
# classes and multiclass probabilities are derived as predict() derives them.
fold_measure <- function(f, newx, yv, measure, newkernels = NULL, w = NULL, link = NULL) {
  predict <- function(f, newx, type) {
    if (type == "link" && !is.null(link)) return(link)
    stats::predict(f, newx, type = type, newkernels = newkernels)
  }
  mean <- function(v) if (is.null(w)) base::mean(v) else sum(w * v) / sum(w)
  if (inherits(f, "mkl_multi")) {
    Fm <- predict(f, newx, type = "link")
    if (measure == "class") return(mean(as.character(multi_class(f, Fm)) != as.character(yv)))
    P <- multi_prob(f, Fm)
    if (measure == "auc") return(multiclass_auc(P, yv))
    p <- P[cbind(seq_along(yv), match(as.character(yv), colnames(P)))]
    return(mean(-2 * log(pmax(p, 1e-12))))
  }
  if (f$task == "classification") {
    if (measure == "class")
      return(mean(decision_class(predict(f, newx, type = "link")) != yv))
    if (measure == "auc") return(auc_score(predict(f, newx, type = "link"), yv > 0))
    pr <- pmin(pmax(predict(f, newx, type = "response"), 1e-12), 1 - 1e-12)
    return(mean(-2 * ifelse(yv > 0, log(pr), log(1 - pr))))
  }
  r <- yv - predict(f, newx, type = "link")
  if (measure == "mse") mean(r^2) else mean(abs(r))
}

# The area under the ROC curve of 'score' for the labels 'pos' (TRUE: positive): the
# Mann-Whitney statistic, ties counting one half.
auc_score <- function(score, pos) {
  np <- sum(pos)
  nn <- sum(!pos)
  if (np == 0L || nn == 0L) return(NA_real_)
  r <- rank(score)
  (sum(r[pos]) - np * (np + 1) / 2) / (np * nn)
}

# Hand and Till's (2001) multiclass AUC: the mean over the pairs of classes present of
# (A(i|j) + A(j|i)) / 2, A(i|j) the AUC of the probability of class i separating i from j.
multiclass_auc <- function(P, y) {
  y <- as.character(y)
  lv <- intersect(colnames(P), unique(y))
  if (length(lv) < 2L) return(NA_real_)
  pr <- utils::combn(length(lv), 2L)
  a <- apply(pr, 2L, function(ij) {
    i <- lv[ij[1L]]
    j <- lv[ij[2L]]
    s <- y == i | y == j
    (auc_score(P[s, i], y[s] == i) + auc_score(P[s, j], y[s] == j)) / 2
  })
  mean(a)
}

# Elastic net's lambda (and C) by cross-validation: the C path on the same folds for every
# lambda; the pair with the smallest mean held-out loss wins. A single C is fitted as the path
# c(C, C / 2) (cv.mkl needs a path) and only C is considered.
cv_lambda <- function(x, y, ..., C, lambda, nfolds, foldid, type.measure, formula = NULL,
                      data = NULL) {
  args <- list(...)
  en <- methods_where(function(e) "elasticnet" %in% e$penalties)
  if (!identical(args[["penalty"]], "elasticnet") || !isTRUE(args[["method"]] %in% en))
    stop(sprintf("a vector 'lambda' needs method = %s and penalty = \"elasticnet\"",
                 paste0("\"", en, "\"", collapse = " or ")), call. = FALSE)
  if (!is.numeric(lambda) || anyNA(lambda) || any(lambda < 0 | lambda > 1))
    stop("'lambda' must lie in [0, 1]", call. = FALSE)
  single <- length(C) == 1L
  Cp <- if (single) c(C, C / 2) else C
  if (is.null(foldid)) {
    n <- NROW(y)
    nfolds <- check_count(nfolds, "nfolds", 2, n)
    yc <- check_y(y, n, args[["task"]], multiclass = TRUE)
    foldid <- make_folds(yc$y, nfolds, yc$task == "classification")
  }
  cvs <- lapply(seq_along(lambda), function(i) withCallingHandlers(
    cv_path(x, y, ..., C = Cp, lambda = lambda[i], nfolds = nfolds, foldid = foldid,
            type.measure = type.measure, formula = formula, data = data),
    mklearn_task_message = function(m) if (i > 1L) invokeRestart("muffleMessage")))
  grid <- vapply(cvs, function(cv) if (single) cv$cvm[1L] else cv$cvm, numeric(if (single) 1L
                                                                             else length(C)))
  grid <- matrix(grid, ncol = length(lambda),
                 dimnames = list(C = format(C), lambda = format(lambda)))
  # ties: the most regularised C (the last row), then the first lambda
  best <- which(grid == (if (cvs[[1L]]$name == "auc") max(grid) else min(grid)),
                arr.ind = TRUE)
  best <- best[order(-best[, 1L], best[, 2L]), , drop = FALSE][1L, ]
  out <- cvs[[best[2L]]]
  out$lambda <- lambda
  out$lambda.min <- lambda[best[2L]]
  out$cvm_grid <- grid
  out$nonconverged <- Reduce(`+`, lapply(cvs, `[[`, "nonconverged"))
  out$learned_nothing <- Reduce(`+`, lapply(cvs, `[[`, "learned_nothing"))
  out$path_flags <- Reduce(`|`, lapply(cvs, `[[`, "path_flags"))
  out$n_foldfits <- sum(vapply(cvs, `[[`, 1, "n_foldfits"))
  if (single) {
    out$C.min <- C
    out$C.1se <- C
  }
  out
}

# Evaluates expr with the screening threshold `screen` (NULL: the option as it is; or a list of
# `threshold` and the tolerance of merged `duplicates`), without the screening messages
# (cv_screen() reports the choice). They travel as an argument, not as options, so that fold
# fits on parallel workers use them too.
with_screen <- function(screen, expr) {
  if (is.null(screen)) return(expr)
  if (!is.list(screen)) screen <- list(threshold = screen, duplicates = 0)
  op <- options(mklearn.screen = screen$threshold, mklearn.duplicates = screen$duplicates)
  on.exit(options(op))
  withCallingHandlers(expr, mklearn_screen_message = function(m) invokeRestart("muffleMessage"))
}

# The kernel choice by cross-validation: the screening threshold (R/screen.R) of every value
# of `screen` with the C path on the same folds; the pair with the smallest mean held-out loss
# wins (ties: the most regularised C, then the largest threshold, the smaller kernel set).
# `screen = "auto"`: the thresholds of cv_screen_auto(), chosen by screen_choice().
cv_screen <- function(x, y, ..., C, lambda, screen, nfolds, foldid, type.measure,
                      formula = NULL, data = NULL) {
  args <- list(...)
  auto <- identical(screen, "auto")
  if (!auto && (!is.numeric(screen) || !length(screen) || anyNA(screen) || any(screen < 0) ||
                any(!is.finite(screen))))
    stop(paste0("'screen' must be \"auto\", NULL or non-negative numbers (effective neighbours ",
                "per point; 0: none)"), call. = FALSE)
  if (length(lambda) > 1L)
    stop("cross-validate either 'screen' or a vector 'lambda', not both", call. = FALSE)
  if (!is.null(args[["kernels"]]) && !inherits(args[["kernels"]], "kernel_set"))
    stop(paste0("'screen' chooses among the kernels of a kernel_set; precomputed kernels ",
                "are used as given"), call. = FALSE)
  if (is.null(foldid)) {
    n <- NROW(y)
    nfolds <- check_count(nfolds, "nfolds", 2, n)
    yc <- check_y(y, n, args[["task"]], multiclass = TRUE)
    foldid <- make_folds(yc$y, nfolds, yc$task == "classification")
  }
  # a kernel has at most as many effective neighbours as training rows: a threshold that high
  # would leave out every kernel (screen_kernels() then keeps the widest alone)
  ntrain <- length(foldid) - max(table(foldid))
  if (auto) {
    screen <- c(0, unique(round(.screen_auto_fractions * ntrain)))
  } else if (any(screen >= ntrain))
    stop(sprintf(paste0("'screen' thresholds must be below %d, the training rows of the ",
                        "smallest training part of a fold: a larger threshold leaves out ",
                        "every kernel"), ntrain), call. = FALSE)
  run <- function(i) withCallingHandlers(
    do.call(cv_path, c(list(x, y), args, list(lambda = lambda)[!is.null(lambda)],
                       list(C = C, nfolds = nfolds, foldid = foldid,
                            type.measure = type.measure, formula = formula, data = data,
                            screen = list(threshold = screen[i],
                                          duplicates = if (auto) .screen_duplicates else 0)))),
    mklearn_task_message = function(m) if (i > 1L) invokeRestart("muffleMessage"))
  cvs <- with_screen_memo(if (auto) cv_screen_auto(run, screen, ntrain / length(foldid),
                                                   args[["control"]])
                          else lapply(seq_along(screen), run))
  ran <- !vapply(cvs, is.null, TRUE)
  cvs <- cvs[ran]
  screen <- screen[ran]
  grid <- matrix(vapply(cvs, `[[`, numeric(length(C)), "cvm"), ncol = length(screen),
                 dimnames = list(C = format(C), screen = format(screen)))
  maximise <- cvs[[1L]]$name == "auc"
  if (auto) {
    best <- screen_choice(grid, cvs[[1L]]$cvsd, maximise)
  } else {
    best <- which(grid == (if (maximise) max(grid) else min(grid)), arr.ind = TRUE)
    best <- best[order(-best[, 1L], -screen[best[, 2L]]), , drop = FALSE][1L, ]
  }
  out <- cvs[[best[2L]]]
  out$screen <- screen
  out$screen.min <- screen[best[2L]]
  out$screen_auto <- auto
  out$screened <- fit_screened(out$fit)
  out$cvm_screen <- grid
  out$kernels_screen <- vapply(cvs, function(cv) fit_M(cv$fit), 1L)
  out$nonconverged <- Reduce(`+`, lapply(cvs, `[[`, "nonconverged"))
  out$learned_nothing <- Reduce(`+`, lapply(cvs, `[[`, "learned_nothing"))
  out$path_flags <- Reduce(`|`, lapply(cvs, `[[`, "path_flags"))
  out$n_foldfits <- sum(vapply(cvs, `[[`, 1, "n_foldfits"))
  out
}

# The screening thresholds of cv.mkl(screen = "auto") besides 0, as fractions of the training
# rows of a fold (NOTES-model.md, "Multiclass: a tuned single Gaussian against MKL").
.screen_auto_fractions <- c(0.2, 0.35)

# The tolerance of cv.mkl(screen = "auto")'s merging of near-duplicate kernels in every fit
# (merge_duplicates(), R/screen.R; NOTES-model.md).
.screen_duplicates <- 0.01

# Whether cv.mkl(screen = "auto") cross-validates the kernel choice: a classification with the
# kernels of a kernel_set (or the default kernels) computed from x, no vector lambda, and no
# screening already set by options(mklearn.screen).
screen_auto <- function(x, y, dots, lambda) {
  k <- dots[["kernels"]]
  if (is.null(x) || length(lambda) > 1L || screen_threshold() > 0 ||
      !(is.null(k) || inherits(k, "kernel_set"))) return(FALSE)
  identical(guess_task(y, dots[["task"]]), "classification")
}

# The CVs of cv.mkl(screen = "auto") (run(i): the C path at threshold screen[i]; NULL where not
# run): threshold 0 (every kernel), then the larger ones in increasing order, skipping those
# that leave out no kernel beyond the previous one, or every kernel (judged on all the data,
# the neighbours scaled by `ratio`, a fold's training rows over all rows), and stopping after
# two in a row that do not lower the best held-out loss so far (with many kernels on single
# features, leaving out the near-identity ones alone may not help where wider ones do), or
# after one whose loss is above the best so far by more than its own standard error (leaving
# out more kernels clearly hurts; NOTES-model.md).
cv_screen_auto <- function(run, screen, ratio, control) {
  cvs <- vector("list", length(screen))
  cvs[[1L]] <- run(1L)
  f1 <- first_binary(cvs[[1L]]$fit)
  nt <- if (is.null(control[["nthreads"]])) 0L else control[["nthreads"]]
  nb <- set_neighbours(f1$kernel_info, f1$x, nt) * ratio
  best <- cv_best(cvs[[1L]])
  kept <- rep(TRUE, length(nb))
  misses <- 0L
  for (i in seq_along(screen)[-1L]) {
    keep <- is.na(nb) | nb >= screen[i]
    if (!any(keep) || identical(keep, kept)) next
    kept <- keep
    cvs[[i]] <- run(i)
    b <- cv_best(cvs[[i]])
    if (b[1L] < best[1L]) {
      best <- b
      misses <- 0L
    } else if ((misses <- misses + 1L) == 2L || b[1L] - b[2L] > best[1L]) break
  }
  cvs
}

# The best held-out loss of a CV (AUC negated) at its C.min, and its standard error.
cv_best <- function(cv) {
  i <- match(cv$C.min, cv$C)
  c(if (cv$name == "auc") -cv$cvm[i] else cv$cvm[i], cv$cvsd[i])
}

# The (row, column) of the C x threshold grid of mean held-out losses that cv.mkl(screen =
# "auto") takes, column 1 being threshold 0 (every kernel): the best larger threshold only when
# its loss is below the best of threshold 0 by more than that one's standard error (se0, per
# C); otherwise threshold 0 at its C.min. Ties: the most regularised C, the larger threshold.
screen_choice <- function(grid, se0, maximise = FALSE) {
  g <- if (maximise) -grid else grid
  best_in <- function(j) c(max(which(g[, j] == min(g[, j], na.rm = TRUE))), j)
  b0 <- best_in(1L)
  if (ncol(g) < 2L) return(b0)
  m <- apply(g[, -1L, drop = FALSE], 2L, min, na.rm = TRUE)
  if (min(m) < g[b0[1L], 1L] - se0[b0[1L]]) best_in(1L + max(which(m == min(m)))) else b0
}

# The first binary fit of a path (of its first multiclass fit, if any).
first_binary <- function(path) {
  f <- path$fits[[1L]]
  if (inherits(f, "mkl_multi")) f$fits[[1L]] else f
}

# The kernels that screening left out of a path's fits (character(0): none).
fit_screened <- function(path) {
  s <- first_binary(path)$kernel_info$screened
  if (is.null(s)) character(0) else s
}

# The number of kernels of a fit or path (after screening).
fit_M <- function(f) as.integer(if (inherits(f, "mkl_path")) f$fits[[1L]]$M else f$M)

cv_s <- function(object, s) {
  if (is.character(s)) {
    s <- match_arg(s, c("C.min", "C.1se"), name = "s")
    return(object[[s]])
  }
  s
}

#' @export
print.cv.mkl <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nCall:  ", paste(deparse(x$call), sep = "\n", collapse = "\n"), "\n\n", sep = "")
  cat(sprintf("%d-fold cross-validation of '%s' over %d values of C, measure '%s'\n\n",
              length(unique(x$foldid)), x$fit$method, length(x$C), x$name))
  tab <- data.frame(C = x$C, cvm = x$cvm, cvsd = x$cvsd,
                    kernels = vapply(x$fit$fits, fit_nkernels, 1L))
  nc <- x[["nonconverged"]]
  if (!is.null(nc) && sum(nc) > 0L) tab$not_converged <- nc
  if (sum(x[["learned_nothing"]]) > 0L) tab$learned_nothing <- x[["learned_nothing"]]
  print(tab, digits = digits, row.names = FALSE)
  if (!is.null(nc) && sum(nc) > 0L)
    cat(sprintf(paste0("\nWARNING: %d of %d fold fits did not converge (column ",
                       "'not_converged': folds per C)\n"), sum(nc), x[["n_foldfits"]]))
  if (sum(x[["learned_nothing"]]) > 0L)
    cat("\nColumn 'learned_nothing': fold fits per C that learned nothing (see ?mkl)\n")
  cat(sprintf("\nC.min = %s, C.1se = %s\n", format(x$C.min, digits = digits),
              format(x$C.1se, digits = digits)))
  if (!is.null(x$screen.min)) {
    cat(sprintf(paste0("screen.min = %s (kernels: %s); mean held-out loss over C x screening ",
                       "threshold:\n"), format(x$screen.min),
                paste(sprintf("%s: %d", format(x$screen, trim = TRUE), x$kernels_screen),
                      collapse = ", ")))
    print(x$cvm_screen, digits = digits)
    if (isTRUE(x$screen_auto))
      cat(paste0("(screen = \"auto\": a threshold above 0 is taken only when its loss is lower ",
                 "than every kernel's by more than one standard error)\n"))
    if (length(x$screened))
      cat(sprintf("Kernels left out at screen.min: %s%s\n",
                  paste(utils::head(x$screened, 6L), collapse = ", "),
                  if (length(x$screened) > 6L) sprintf(" and %d more",
                                                       length(x$screened) - 6L) else ""))
  }
  if (!is.null(x$lambda.min)) {
    cat(sprintf("lambda.min = %s; mean held-out loss over C x lambda:\n",
                format(x$lambda.min, digits = digits)))
    print(x$cvm_grid, digits = digits)
  }
  invisible(x)
}

#' @rdname cv.mkl
#' @param object,s for `coef` and `predict`: the `"cv.mkl"` object and the C to use,
#'   `"C.min"`, `"C.1se"` or a number.
#' @export
coef.cv.mkl <- function(object, s = "C.min", ...) coef(object$fit, s = cv_s(object, s), ...)

#' @rdname cv.mkl
#' @param newx new data for `predict`.
#' @export
predict.cv.mkl <- function(object, newx, s = "C.min", ...)
  predict(object$fit, newx, s = cv_s(object, s), ...)

#' @rdname cv.mkl
#' @export
plot.cv.mkl <- function(x, ...) {
  lc <- log10(x$C)
  graphics::plot(lc, x$cvm, ylim = range(c(x$cvlo, x$cvup)), pch = 20, col = "red",
                 xlab = "log10(C)", ylab = x$name, main = sprintf("cross-validation: %s",
                                                                  x$fit$method), ...)
  graphics::arrows(lc, x$cvlo, lc, x$cvup, angle = 90, code = 3, length = 0.03, col = "grey50")
  graphics::abline(v = log10(c(x$C.min, x$C.1se)), lty = 3)
  invisible(x)
}
