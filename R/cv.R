#' Cross-validation over C
#'
#' Fits the path of `C` values on each training fold (kernels, normalisation and
#' standardisation rebuilt from the fold's training part, so nothing leaks from the held-out
#' part), evaluates the held-out loss, and refits the path on all the data.
#'
#' Without `foldid`, the folds are drawn at random, stratified by class for classification
#' (each class spread evenly over the folds). Fold fits that did not converge are counted:
#' `print()` shows them per C and `cv.mkl()` gives one warning. When `C.min` is the largest or
#' the smallest C of the grid, a message says so (the best C may lie beyond the grid).
#'
#' @param x,y,... data and arguments as for [mkl()] (`kernels`, `method`, `loss`, ...).
#'   Precomputed kernels are not supported here. Formula method: `x` is a formula and
#'   `data` (in `...`) a data frame, as in `cv.mkl(y ~ ., data = df)`, without `y`; factors
#'   are expanded once on all the data, and `fit` is a formula fit.
#' @param C a strictly decreasing vector of C values (at least two; with a vector `lambda`, one
#'   value is allowed and kept fixed), on the scale of [mkl()] (the SVM box constant on
#'   unit-diagonal kernels; larger C, less regularisation). Default: 21 values log-spaced from
#'   1000 down to 0.01, four per decade.
#' @param lambda `NULL` (the `lambda` of `...`'s elastic net, if any), or a vector of elastic-net
#'   mixing parameters in \[0, 1\] (`method = "spicy", penalty = "elasticnet"`): each is
#'   cross-validated over the C path on the same folds and the pair (C, lambda) with the
#'   smallest mean held-out loss is chosen. Tomioka and Suzuki take lambda from
#'   `seq(0, 1, by = 0.2)`.
#' @param nfolds number of folds (>= 2); ignored when `foldid` is given.
#' @param foldid optional fold assignment, integers 1..K, one per observation.
#' @param type.measure `"class"` (misclassification rate) or `"deviance"` (binomial deviance
#'   of the `response` probabilities) for classification; `"mse"` or `"mae"` for regression.
#'   Default: `"class"` or `"mse"`.
#' @return An object of class `"cv.mkl"`: `C`, `cvm` (mean held-out loss), `cvsd` (its
#'   standard error), `cvup`, `cvlo`, `C.min`, `C.1se` (the most regularised C whose loss is
#'   within one standard error of the minimum: the smallest such C, for every method), `fit`
#'   (the path on all data; its call is the [mkl()] call that refits it), `foldid`, `name`,
#'   `nonconverged` (per C, the number of folds whose fit did not converge), `n_foldfits`
#'   (the number of fold fits), `C_default` (whether `C` was the default grid). With a vector `lambda`, also `lambda`,
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
cv.mkl <- function(x, y, ..., C, lambda = NULL, nfolds = 5L, foldid = NULL,
                   type.measure = NULL) {
  cl <- match.call()
  grid_default <- missing(C)
  if (grid_default) C <- default_C_grid()
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
    des <- formula_design(formula, data)
    x <- des$x
    y <- des$y
  } else if (missing(x)) x <- NULL
  if (identical(dots[["method"]], "bayes"))
    stop(paste0("cv.mkl cross-validates C, and method 'bayes' has none (it learns the kernel ",
                "variances by maximising the marginal likelihood): fit it with mkl()"),
         call. = FALSE)
  common <- list(nfolds = nfolds, foldid = foldid, type.measure = type.measure,
                 formula = formula, data = data)
  out <- if (length(lambda) > 1L)
    do.call(cv_lambda, c(list(x, y), dots, list(C = C, lambda = lambda), common))
  else if (length(lambda) == 1L)
    do.call(cv_path, c(list(x, y), dots, list(lambda = lambda, C = C), common))
  else do.call(cv_path, c(list(x, y), dots, list(C = C), common))
  out$call <- cl
  out$C_default <- grid_default
  # the path on all the data records the mkl() call that refits it (so update() works)
  fc <- cl
  fc[[1L]] <- as.name("mkl")
  fc <- fc[!(names(fc) %in% c("nfolds", "foldid", "type.measure", "lambda"))]
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

# The default C grid of cv.mkl: log-spaced and decreasing, on mkl()'s scale of C (the SVM box
# constant on unit-diagonal kernels, where C = 1 is a useful default whatever n): from 1000
# (hardly regularised) to 0.01 (so regularised that the model is close to constant), four
# values per decade.
default_C_grid <- function() 10^seq(3, -2, by = -0.25)

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
# fitted by the formula method.
cv_path <- function(x, y, ..., C, nfolds, foldid, type.measure, formula = NULL, data = NULL) {
  if (is.null(C) || !is.numeric(C) || length(C) < 2L)
    stop("cv.mkl needs a vector 'C' of at least two values", call. = FALSE)
  args <- list(...)
  if (inherits(args[["kernels"]], "mkl_kernel")) stop(family_not_set("kernels"), call. = FALSE)
  if (!is.null(args[["kernels"]]) && !inherits(args[["kernels"]], "kernel_set"))
    stop("cv.mkl needs a kernel_set (precomputed kernels cannot be split into folds here)",
         call. = FALSE)
  fit <- if (is.null(formula)) mkl(x, y, C = C, ...) else
    mkl(formula, data = data, C = C, ...)
  task <- fit$fits[[1]]$task
  n <- fit$fits[[1]]$nobs
  measures <- if (task == "classification") c("class", "deviance") else c("mse", "mae")
  if (is.null(type.measure)) type.measure <- measures[1L]
  if (!is.character(type.measure) || length(type.measure) != 1L ||
      !(type.measure %in% measures))
    stop(sprintf("type.measure for %s must be %s", task,
                 paste0("'", measures, "'", collapse = " or ")), call. = FALSE)
  if (is.null(foldid)) {
    nfolds <- as.integer(check_scalar(nfolds, "nfolds", 2, n))
    foldid <- make_folds(fit$fits[[1]]$y, nfolds, task == "classification")
  } else {
    if (!is.numeric(foldid) || length(foldid) != n || anyNA(foldid) ||
        any(foldid != round(foldid)) || length(unique(foldid)) < 2L)
      stop("'foldid' must hold at least two fold numbers, one per observation", call. = FALSE)
  }
  folds <- sort(unique(foldid))
  xm <- if (is.data.frame(x)) x else as.matrix(x)
  yv <- fit$fits[[1]]$y            # coded: -1/+1 or numeric
  loss <- matrix(NA_real_, n, length(C))
  nonconv <- integer(length(C))    # per C, the folds whose fit did not converge
  for (k in folds) {
    out <- foldid == k
    yk <- y[!out]
    # a fold fit's warnings are not passed on one by one: the fits that did not converge are
    # counted (and reported once by cv.mkl)
    fk <- suppressWarnings(mkl(xm[!out, , drop = FALSE], yk, C = C, ...))
    for (j in seq_along(C)) {
      fj <- fk$fits[[j]]
      if (!isTRUE(fj[["converged"]])) nonconv[j] <- nonconv[j] + 1L
      if (task == "classification") {
        if (type.measure == "class") {
          f <- predict(fj, xm[out, , drop = FALSE], type = "link")
          loss[out, j] <- as.double(sign(f) != yv[out])
        } else {
          pr <- predict(fj, xm[out, , drop = FALSE], type = "response")
          pr <- pmin(pmax(pr, 1e-12), 1 - 1e-12)
          loss[out, j] <- -2 * ifelse(yv[out] > 0, log(pr), log(1 - pr))
        }
      } else {
        r <- yv[out] - predict(fj, xm[out, , drop = FALSE], type = "link")
        loss[out, j] <- if (type.measure == "mse") r^2 else abs(r)
      }
    }
  }
  per_fold <- sapply(folds, function(k) colMeans(loss[foldid == k, , drop = FALSE]))
  per_fold <- matrix(per_fold, nrow = length(C))
  cvm <- rowMeans(per_fold)
  cvsd <- apply(per_fold, 1L, stats::sd) / sqrt(length(folds))
  imin <- which.min(cvm)
  # the most regularised C within one standard error: C is decreasing along the path, and
  # for every method a smaller C regularises more
  within <- which(cvm <= cvm[imin] + cvsd[imin])
  i1se <- max(within)
  structure(list(C = C, cvm = cvm, cvsd = cvsd, cvup = cvm + cvsd, cvlo = cvm - cvsd,
                 C.min = C[imin], C.1se = C[i1se], fit = fit, foldid = foldid,
                 name = type.measure, nonconverged = nonconv,
                 n_foldfits = length(C) * length(folds)), class = "cv.mkl")
}

# Elastic net's lambda (and C) by cross-validation: the C path on the same folds for every
# lambda; the pair with the smallest mean held-out loss wins. A single C is fitted as the path
# c(C, C / 2) (cv.mkl needs a path) and only C is considered.
cv_lambda <- function(x, y, ..., C, lambda, nfolds, foldid, type.measure, formula = NULL,
                      data = NULL) {
  args <- list(...)
  if (!identical(args[["penalty"]], "elasticnet") || !identical(args[["method"]], "spicy"))
    stop("a vector 'lambda' needs method = \"spicy\" and penalty = \"elasticnet\"",
         call. = FALSE)
  if (!is.numeric(lambda) || anyNA(lambda) || any(lambda < 0 | lambda > 1))
    stop("'lambda' must lie in [0, 1]", call. = FALSE)
  single <- length(C) == 1L
  Cp <- if (single) c(C, C / 2) else C
  if (is.null(foldid)) {
    n <- NROW(y)
    nfolds <- as.integer(check_scalar(nfolds, "nfolds", 2, n))
    yc <- check_y(y, n, args[["task"]])
    foldid <- make_folds(yc$y, nfolds, yc$task == "classification")
  }
  cvs <- lapply(lambda, function(l) cv_path(x, y, ..., C = Cp, lambda = l, nfolds = nfolds,
                                            foldid = foldid, type.measure = type.measure,
                                            formula = formula, data = data))
  grid <- vapply(cvs, function(cv) if (single) cv$cvm[1L] else cv$cvm, numeric(if (single) 1L
                                                                             else length(C)))
  grid <- matrix(grid, ncol = length(lambda), dimnames = list(C = format(C), lambda = format(lambda)))
  best <- which(grid == min(grid), arr.ind = TRUE)[1L, ]
  out <- cvs[[best[2L]]]
  out$lambda <- lambda
  out$lambda.min <- lambda[best[2L]]
  out$cvm_grid <- grid
  out$nonconverged <- Reduce(`+`, lapply(cvs, `[[`, "nonconverged"))
  out$n_foldfits <- sum(vapply(cvs, `[[`, 1, "n_foldfits"))
  if (single) {
    out$C.min <- C
    out$C.1se <- C
  }
  out
}

cv_s <- function(object, s) {
  if (is.character(s)) {
    s <- match.arg(s, c("C.min", "C.1se"))
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
                    kernels = vapply(x$fit$fits, function(f) sum(f$weights > 0), 1L))
  nc <- x[["nonconverged"]]
  if (!is.null(nc) && sum(nc) > 0L) tab$not_converged <- nc
  print(tab, digits = digits, row.names = FALSE)
  if (!is.null(nc) && sum(nc) > 0L)
    cat(sprintf(paste0("\nWARNING: %d of %d fold fits did not converge (column ",
                       "'not_converged': folds per C)\n"), sum(nc), x[["n_foldfits"]]))
  cat(sprintf("\nC.min = %s, C.1se = %s\n", format(x$C.min, digits = digits),
              format(x$C.1se, digits = digits)))
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
