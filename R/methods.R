# S3 methods shared by every solver's "mkl" object, and by "mkl_path".

# The kernels a fit selects: those whose sample coefficients are not all zero, which predict()
# combines. new_mkl() gives exactly these a positive weight, so every count of selected
# kernels (print, summary, coef, plot, paths, cv.mkl, multiclass, mkl_compare) reads this or
# n_selected().
active_kernels <- function(object) alpha_cols_nonzero(object$alpha)

# The number of kernels a fit selects ("mkl_multi": the kernels some binary problem selects).
n_selected <- function(f) {
  if (inherits(f, "mkl_multi")) return(sum(rowSums(f$weights > 0) > 0))
  length(active_kernels(f))
}

# The class (-1 or +1) of decision values, as predict() assigns it.
decision_class <- function(f) ifelse(f > 0, 1, -1)

# The sample coefficients of a fit: an n x M matrix, or, for MWUMKL (whose alpha_m are one
# vector times the kernel weights: alpha = outer(u, v)), the two factors (10^6 kernels on 208
# points: 1.7 GB as a matrix, 8 MB as factors). The factored form answers dim(), dimnames(),
# `[` and as.matrix() as the matrix would; these helpers serve both forms.
outer_alpha <- function(u, v) structure(list(u = as.double(u), v = v), class = "mkl_outer")
is_outer_alpha <- function(a) inherits(a, "mkl_outer")
alpha_cols_nonzero <- function(a) {
  if (is_outer_alpha(a)) {
    if (any(a$u != 0)) which(a$v != 0) else integer(0)
  } else which(colSums(a != 0) > 0)
}
alpha_rows_nonzero <- function(a) {
  if (is_outer_alpha(a)) {
    if (any(a$v != 0)) which(a$u != 0) else integer(0)
  } else which(rowSums(a != 0) > 0)
}
# columns j, in the same form
alpha_columns <- function(a, j) {
  if (is_outer_alpha(a)) outer_alpha(a$u, a$v[j]) else a[, j, drop = FALSE]
}

#' The factored sample coefficients of an MWUMKL fit
#'
#' MWUMKL's sample coefficients are one vector times the kernel weights; fits keep the two
#' factors instead of the n x M matrix. `dim()`, `dimnames()`, `[` and `as.matrix()` give what
#' the matrix would.
#' @param x the `alpha` element of an MWUMKL fit.
#' @param i,j,drop as for a matrix.
#' @param ... unused.
#' @return `as.matrix()` and `[`: the (sub)matrix; `dim()`, `dimnames()`: those of the matrix.
#' @name mkl_outer
#' @keywords internal
NULL

#' @rdname mkl_outer
#' @export
dim.mkl_outer <- function(x) c(length(x$u), length(x$v))
#' @rdname mkl_outer
#' @export
dimnames.mkl_outer <- function(x) list(NULL, names(x$v))
#' @rdname mkl_outer
#' @export
as.matrix.mkl_outer <- function(x, ...) x[, , drop = FALSE]
#' @rdname mkl_outer
#' @export
`[.mkl_outer` <- function(x, i, j, drop = TRUE) {
  x <- unclass(x)
  u <- if (missing(i)) x$u else x$u[i]
  v <- if (missing(j)) x$v else x$v[j]
  a <- outer(u, unname(v))
  colnames(a) <- names(v)
  if (drop) drop(a) else a
}
#' @rdname mkl_outer
#' @export
print.mkl_outer <- function(x, ...) {
  d <- dim(x)
  cat(sprintf("<%d x %d sample coefficients kept as outer(u, v); as.matrix() gives the matrix>\n",
              d[1L], d[2L]))
  invisible(x)
}

#' @export
print.mkl <- function(x, digits = max(3L, getOption("digits") - 3L), top = 5L, ...) {
  cat("\nCall:  ", paste(deparse(x$call), sep = "\n", collapse = "\n"), "\n\n", sep = "")
  cat(sprintf("Multiple kernel learning: method '%s', %s, loss '%s'%s\n", x$method, x$task,
              x$loss, if (!is.null(x$penalty)) paste0(", penalty '", x$penalty, "'") else ""))
  cat(sprintf("Data: %d observations%s%s\n", x$nobs,
              if (is.na(x$p_x)) ", precomputed kernels" else paste0(" x ", x$p_x, " features"),
              if (takes_C(x$method)) paste("; C =", format(x$C, digits = digits)) else ""))
  print_dropped(x$na.action)
  print_extras(x, digits)
  if (!is.null(x$lowrank)) cat(lowrank_line(x$lowrank), "\n", sep = "")
  cat(sprintf("Kernels selected: %d of %d\n", n_selected(x), x$M))
  print_fit_notes(x)
  cat(sprintf("Converged: %s after %d iteration(s)", if (x$converged) "yes" else "NO",
              x$iterations))
  g <- utils::tail(x$history$gap, 1L)
  if (length(g) && !is.na(g)) cat(sprintf(", relative gap %s", format(g, digits = 3)))
  cat("\n")
  w <- sort(x$weights[active_kernels(x)], decreasing = TRUE)
  if (length(w) && is.null(x$learned_nothing)) {
    cat(sprintf("\nTop kernel weights:\n"))
    print(round(utils::head(w, top), digits))
  }
  cat("\n")
  invisible(x)
}

#' Summarise an mkl fit
#'
#' @param object an `"mkl"` fit.
#' @param ... unused.
#' @return An object of class `"summary.mkl"`: the selected kernels (those with non-zero
#'   sample coefficients, the kernels `predict` combines) with their weights, the training
#'   error (of the classes `predict` gives on the training data), the number of support vectors
#'   `n_sv` and what it counts (`sv_rule`, see Details), convergence, the last row of the
#'   history, the notes `learned_nothing` and `degenerate` (`NULL`, or why), and the method's
#'   own figures (`extras`: SpicyMKL's equivalent SVM box constant `C_svm`, lp-norm MKL's `p`,
#'   Empirical Bayes' noise variance `sigma2`, MKL-L0/1-SVM's support vectors `n_sv`, MWUMKL's
#'   `epsilon`), `na.action` (the rows a formula fit dropped for missing values), and on the
#'   low-rank store `lowrank` (each kernel's `rank` and `error`, its residual trace relative to
#'   its trace, the `tol` and rank `cap` used).
#' @details The support vectors of a hinge-loss fit (`"hinge"`: uniform, SpicyMKL, SimpleMKL,
#'   HessianMKL, lp-norm; MWUMKL's squared hinge) are the training points whose largest sample
#'   coefficient (over the kernels) exceeds `1e-3` times the largest of all points. At the
#'   optimum the points outside the margin have coefficients exactly zero and those inside it
#'   the largest (the box constant), so this counts the points on or inside the margin; it
#'   also holds for iterates that are never exactly zero (SpicyMKL's proximal ones) and for
#'   decision values not on the scale of a unit margin (MWUMKL's). MKL-L0/1-SVM's support
#'   vectors are its working set. For the other losses (logistic, squared) every point has a
#'   non-zero coefficient in general; `n_sv` counts the non-zero sample coefficients.
#' @examples
#' set.seed(2)
#' x <- matrix(rnorm(200), 50)
#' y <- factor(ifelse(x[, 1]^2 + x[, 2] > 1, "a", "b"))
#' fit <- mkl(x, y, kernels = kernel_set(rbf_kernel(c(0.5, 2)), features = c("all", "each")))
#' summary(fit)
#' @export
summary.mkl <- function(object, ...) {
  act <- active_kernels(object)
  tab <- data.frame(kernel = names(object$weights)[act], weight = unname(object$weights[act]),
                    stringsAsFactors = FALSE)
  tab <- tab[order(-tab$weight), , drop = FALSE]
  rownames(tab) <- NULL
  train <- if (object$task == "classification")
    c(error = mean(decision_class(object$fitted) != object$y))
  else c(rmse = sqrt(mean((object$fitted - object$y)^2)),
         r2 = 1 - sum((object$fitted - object$y)^2) / sum((object$y - mean(object$y))^2))
  sv <- support_vectors(object)
  structure(list(call = object$call, method = object$method, task = object$task,
                 loss = object$loss, penalty = object$penalty, C = object$C,
                 nobs = object$nobs, M = object$M, kernels = tab,
                 n_sv = sv$n, sv_rule = sv$rule, train = train,
                 converged = object$converged, iterations = object$iterations,
                 last = utils::tail(object$history, 1L), timing = object$timing,
                 learned_nothing = object$learned_nothing, degenerate = object$degenerate,
                 extras = method_extras(object), na.action = object$na.action,
                 lowrank = object$lowrank[c("rank", "error", "tol", "cap")]),
            class = "summary.mkl")
}

# A support vector of a hinge-loss fit has a sample coefficient above this fraction of the
# largest (see ?summary.mkl; the measurements in inst/notes/NOTES-model.md).
.sv_rel <- 1e-3

# The support vectors of a fit and what is counted (see ?summary.mkl): list(n, rule).
support_vectors <- function(object) {
  if (object$loss %in% c("hinge", "squared_hinge")) {
    a <- object$alpha
    a <- if (is_outer_alpha(a)) abs(a$u) * max(abs(a$v)) else {
      a <- abs(a)
      a[cbind(seq_len(nrow(a)), max.col(a, ties.method = "first"))]
    }
    return(list(n = if (any(a > 0)) sum(a > .sv_rel * max(a)) else 0L,
                rule = sprintf(paste0("support vectors (sample coefficient above %g of the ",
                                      "largest: on or inside the margin)"), .sv_rel)))
  }
  if (!is.null(object$info$n_sv))
    return(list(n = as.integer(object$info$n_sv), rule = "support vectors (the working set)"))
  list(n = length(alpha_rows_nonzero(object$alpha)), rule = "non-zero sample coefficients")
}

# The rows a formula fit's na.action dropped, for print and summary (nothing when none).
print_dropped <- function(na.action) {
  if (length(na.action))
    cat(sprintf("  (%s; fit$na.action lists them)\n", stats::naprint(na.action)))
}

# The notes of a fit that learned nothing or generalises nothing (print and summary).
print_fit_notes <- function(x) {
  if (!is.null(x$learned_nothing))
    cat(strwrap(paste("NOTE: this model learned nothing:", x$learned_nothing), exdent = 2),
        sep = "\n")
  if (!is.null(x$degenerate))
    cat(strwrap(paste0("NOTE: this model ", degenerate_verb(x$degenerate), ": ", x$degenerate),
                exdent = 2), sep = "\n")
}

#' @export
print.summary.mkl <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nCall:  ", paste(deparse(x$call), sep = "\n", collapse = "\n"), "\n\n", sep = "")
  cat(sprintf("Method '%s' (%s, loss '%s')%s, %d observations, %d kernels\n",
              x$method, x$task, x$loss,
              if (takes_C(x$method)) paste(", C =", format(x$C, digits = digits)) else "",
              x$nobs, x$M))
  print_dropped(x$na.action)
  print_extras(x, digits)
  cat(sprintf("Converged: %s, %d iteration(s); kernel build %.3g s, fit %.3g s\n",
              if (x$converged) "yes" else "NO", x$iterations, x$timing[["kernels"]],
              x$timing[["fit"]]))
  if (!is.null(x$lowrank)) cat(lowrank_line(x$lowrank), "\n", sep = "")
  rule <- if (is.null(x$sv_rule)) "non-zero sample coefficients" else x$sv_rule
  cat(sprintf("%s%s: %d of %d\n", toupper(substr(rule, 1L, 1L)), substring(rule, 2L), x$n_sv,
              x$nobs))
  print_fit_notes(x)
  if (x$task == "classification")
    cat(sprintf("Training error: %.4g\n", x$train[["error"]]))
  else cat(sprintf("Training RMSE: %.4g, R^2: %.4g\n", x$train[["rmse"]], x$train[["r2"]]))
  cat("\nLast iteration:\n")
  print(x$last, digits = digits, row.names = FALSE)
  cat(sprintf("\nSelected kernels (%d of %d):\n", nrow(x$kernels), x$M))
  print(utils::head(x$kernels, 20L), digits = digits, row.names = FALSE)
  if (nrow(x$kernels) > 20L) cat(sprintf("... and %d more\n", nrow(x$kernels) - 20L))
  invisible(x)
}

#' Kernel weights of an mkl fit
#'
#' @param object an `"mkl"` fit or an `"mkl_path"`.
#' @param type `"weights"` (the kernel weights on the simplex), `"alpha"` (the n x M
#'   sample coefficients) or `"bias"`.
#' @param nonzero keep only the kernels with non-zero weight.
#' @param s for a path: the value(s) of C to use: the fit of the nearest fitted C on the log
#'   scale, without interpolation (a message names a value that is not a fitted C).
#' @param ... unused.
#' @return A named numeric vector (or matrix for `type = "alpha"`, or for a path several
#'   values of `s`; for a path of multiclass fits, a list over `s` of what
#'   [coef.mkl_multi()] returns).
#' @examples
#' x <- as.matrix(mtcars[, -1])
#' fit <- mkl(x, mtcars$mpg, kernels = kernel_set(rbf_kernel(c(1, 3)), linear_kernel()))
#' coef(fit)
#' @export
coef.mkl <- function(object, type = c("weights", "alpha", "bias"), nonzero = FALSE, ...) {
  type <- match_arg(type)
  switch(type,
         weights = if (nonzero) object$weights[active_kernels(object)] else object$weights,
         alpha = if (nonzero) as.matrix(alpha_columns(object$alpha, active_kernels(object))) else
           as.matrix(object$alpha),
         bias = object$b)
}

# The figures a method's registry entry adds to print() and summary() (a named numeric vector).
method_extras <- function(fit) {
  f <- method_info(fit$method)$extras
  v <- if (is.null(f)) NULL else f(fit)
  if (length(v)) v else NULL
}

print_extras <- function(x, digits) {
  v <- if (inherits(x, "summary.mkl")) x$extras else method_extras(x)
  if (length(v))
    cat(sprintf("%s: %s\n", method_info(x$method)$label,
                paste(names(v), format(v, digits = digits), sep = " = ", collapse = ", ")))
}

# The design matrix of new data for a formula fit (other data are returned as they are).
formula_newx <- function(object, newx) {
  if (!is.null(object$terms) && is.data.frame(newx)) {
    miss <- setdiff(all.vars(object$terms), names(newx))
    if (length(miss))
      stop(sprintf("the new data lack variable(s) of the model formula: %s",
                   paste(miss, collapse = ", ")), call. = FALSE)
    # missing values pass, so that check_newx() names them as for a matrix
    mf <- stats::model.frame(object$terms, newx, xlev = object$xlevels, na.action = stats::na.pass)
    X <- stats::model.matrix(object$terms, mf, contrasts.arg = object$contrasts)
    newx <- X[, colnames(X) != "(Intercept)", drop = FALSE]
  }
  newx
}

prepare_newx <- function(object, newx) {
  newx <- formula_newx(object, newx)
  newx <- check_newx(newx, if (is.null(object$xnames)) seq_len(object$p_x) else object$xnames)
  if (!is.null(object$standardize))
    newx <- apply_standardize(newx, object$standardize$center, object$standardize$scale)
  newx
}

#' Predict with an mkl fit
#'
#' Computes only the test kernels with non-zero weight, normalised with the training
#' statistics, column by column on the fly (in blocks of 10,000 new rows, so memory does not
#' grow with the number of rows), and combines them with the fitted coefficients.
#'
#' @param object an `"mkl"` fit.
#' @param newx new data (matrix or data frame; for a formula fit, a data frame), matched to the
#'   training columns by name when both have column names (the training names complete),
#'   otherwise by position. A plain vector is one column: give one observation as a one-row
#'   matrix, `x[i, , drop = FALSE]`. Zero rows give a zero-length answer. Missing (fits on a
#'   [kernel_set()]): the fitted training decision values (the same as the training data given
#'   as `newx`). Fits on precomputed kernels read no `newx`: they need `newkernels`, also for
#'   the training points.
#' @param type `"class"` (classification: labels as in the training response), `"link"`
#'   (the decision value \eqn{f(x)}), `"response"` (classification: the probability of the
#'   second class, from the logistic link for the logistic loss and otherwise from Platt's
#'   sigmoid, fitted on cross-validated decision values by default, see `platt` in
#'   [mkl_control()]; regression: \eqn{f(x)}) or `"prob"` (classification: the class
#'   probabilities as a matrix with one column per class, named by the class labels, the shape
#'   caret and tidymodels expect; the second column is `"response"`).
#' @param newkernels for precomputed kernels: the test-by-train kernels, an n_new x n x M
#'   array or a list of M matrices, un-normalised like the training kernels. When the training
#'   kernels and these both have names (the third dimnames of an array, the names of a list),
#'   they are matched by name, and a missing, extra or duplicated name is an error; otherwise
#'   they are taken in the order of the training kernels.
#' @param newdata the same as `newx` (the name other R models use); give one of the two.
#' @param na.action what to do with rows of the new data that have missing values (in the
#'   variables of the model): [stats::na.pass()] (the default, as `predict.lm()`) and
#'   [stats::na.exclude()] predict `NA` for them, keeping every row in place;
#'   [stats::na.omit()] drops them; [stats::na.fail()] makes them an error. Without new data,
#'   the fitted values of a formula fit made with `na.action = na.exclude` are padded with `NA`
#'   at the rows it dropped, as `lm()` does.
#' @param ... nothing: any other argument is an error.
#' @return A vector of predictions: a factor (or the training label values) for
#'   `type = "class"`, a matrix for `type = "prob"`, numeric otherwise.
#' @examples
#' set.seed(3)
#' x <- matrix(rnorm(300), 100)
#' y <- ifelse(x[, 1] * x[, 2] > 0, 1, -1)
#' fit <- mkl(x[1:70, ], y[1:70], kernels = kernel_set(rbf_kernel(c(0.5, 1, 2))))
#' mean(predict(fit, x[71:100, ]) == y[71:100])
#' head(predict(fit, x[71:100, ], type = "response"))
#' @export
predict.mkl <- function(object, newx, type = c("class", "link", "response", "prob"),
                        newkernels = NULL, newdata = NULL, na.action = stats::na.pass, ...) {
  check_dots_empty(list(...), "predict()")
  newx <- newx_or_newdata(if (missing(newx)) NULL else newx, newdata)
  type <- if (missing(type) && object$task == "regression") "link" else match_arg(type)
  if (object$task == "regression" && type %in% c("class", "prob"))
    stop(sprintf("type = '%s' is for classification fits; use 'link' or 'response'", type),
         call. = FALSE)
  if (!is.null(newx) && !is.null(object$x)) {
    newx <- formula_newx(object, newx)
    if (!all_complete(newx))
      return(predict_complete(newx, na.action, function(z)
        predict.mkl(object, z, type = type, na.action = na.action)))
  }
  if (is.null(newx) && !is.null(object$x) && is.null(newkernels))
    return(stats::napredict(object$na.action, predict_decision(object, object$fitted, type)))
  act <- active_kernels(object)
  nthreads <- check_threads(NULL)
  alpha <- alpha_columns(object$alpha, act)
  if (is.null(object$x)) {
    if (is.null(newkernels))
      stop("this model was fitted on precomputed kernels: supply 'newkernels'", call. = FALSE)
    Kt <- as_kernel_array(newkernels, name = "newkernels", test = TRUE)
    Kt <- match_newkernels(Kt, object$labels, object$kernels_named)
    if (dim(Kt)[2] != object$nobs || dim(Kt)[3] != object$M)
      stop(sprintf("'newkernels' must be n_new x %d x %d (test by train, all kernels)",
                   object$nobs, object$M), call. = FALSE)
    if (dim(Kt)[1] == 0L) {
      f <- numeric(0)
    } else {
      st <- as_store(Kt)
      st$nthreads <- nthreads
      f <- if (length(act)) object$b + store_decision(st, alpha, act) else
        rep(object$b, dim(Kt)[1L])
    }
  } else {
    if (!is.null(newkernels)) stop("'newkernels' is only for precomputed-kernel fits",
                                   call. = FALSE)
    if (missing(newx) || is.null(newx)) {
      f <- object$fitted
    } else {
      z <- prepare_newx(object, newx)
      f <- rep(object$b, nrow(z))
      names(f) <- rownames(z)
      if (length(act) && nrow(z) && !is.null(object$lowrank)) {
        # the low-rank store's kernels: r_m evaluations per new row and kernel
        check_chisq_data(object$kernel_info, z, act)
        for (i0 in seq(1L, nrow(z), by = 100000L)) {
          rows <- i0:min(nrow(z), i0 + 99999L)
          f[rows] <- f[rows] + lowrank_decision(object, z[rows, , drop = FALSE], act, nthreads)
        }
      } else if (length(act) && nrow(z)) {
        # test kernels computed on the fly, block by block of rows: memory O(block x kernels)
        check_chisq_data(object$kernel_info, z, act)
        for (i0 in seq(1L, nrow(z), by = 10000L)) {
          rows <- i0:min(nrow(z), i0 + 9999L)
          st <- test_store(object$kernel_info, object$x, z[rows, , drop = FALSE],
                           object$normalization, act, nthreads)
          f[rows] <- f[rows] + store_decision(st, alpha, seq_along(act), object$kernel_info,
                                              act, "the new data")
        }
      }
    }
  }
  predict_decision(object, f, type)
}

# Predictions of the given type from decision values f (binary or regression fits).
predict_decision <- function(object, f, type) {
  if (type == "link" || object$task == "regression") return(f)
  if (type %in% c("response", "prob")) {
    p <- stats::plogis(object$platt[["A"]] * f + object$platt[["B"]])
    if (type == "response") return(p)
    return(matrix(c(1 - p, p), length(p), 2L,
                  dimnames = list(names(f), as.character(object$classes))))
  }
  cls <- object$classes
  out <- cls[ifelse(f > 0, 2L, 1L)]
  names(out) <- names(f)
  out
}

# Whether new data (a matrix or data frame) have no missing value; other objects are left to
# check_newx(), which names what is wrong with them.
all_complete <- function(newx) {
  if (!(is.matrix(newx) || is.data.frame(newx))) return(TRUE)
  !anyNA(newx)
}

# Predictions of new data with missing values: `predict_rows` on the complete rows, and the
# others as na.action says (na.pass, na.exclude: NA in place; na.omit: dropped; na.fail: an
# error).
predict_complete <- function(newx, na.action, predict_rows) {
  cc <- stats::complete.cases(newx)
  fun <- if (is.character(na.action)) get(na.action, mode = "function") else na.action
  if (!is.function(fun))
    stop("'na.action' must be a function such as na.pass, na.omit or na.exclude",
         call. = FALSE)
  r <- tryCatch(fun(newx), error = function(e)
    stop(sprintf(paste0("'newx' contains missing values (%d of %d rows) and na.action ",
                        "refuses them; na.action = na.pass predicts NA for them, na.omit ",
                        "drops them"), sum(!cc), length(cc)), call. = FALSE))
  out <- predict_rows(newx[cc, , drop = FALSE])
  if (inherits(attr(r, "na.action"), "omit")) return(out)
  idx <- rep(NA_integer_, length(cc))
  idx[cc] <- seq_len(sum(cc))
  rn <- rownames(newx)
  if (is.matrix(out)) {
    out <- out[idx, , drop = FALSE]
    rownames(out) <- rn
  } else {
    out <- out[idx]
    names(out) <- rn
  }
  out
}

#' @export
fitted.mkl <- function(object, ...) stats::napredict(object$na.action, object$fitted)

#' Plot an mkl fit
#'
#' @param x an `"mkl"` fit.
#' @param type `"weights"`: the non-zero kernel weights, labelled; `"history"`: the relative
#'   duality gap (log scale) and the number of active kernels against time, when the solver
#'   recorded them.
#' @param top at most this many kernels are shown.
#' @param ... passed to the plotting functions.
#' @return `x`, invisibly.
#' @examples
#' set.seed(2)
#' x <- matrix(rnorm(200), 50)
#' y <- ifelse(x[, 1] + x[, 3] > 0, 1, -1)
#' fit <- mkl(x, y, kernels = kernel_set(rbf_kernel(c(0.5, 2)), features = c("all", "each")))
#' plot(fit)
#' @export
plot.mkl <- function(x, type = c("weights", "history"), top = 30L, ...) {
  type <- match_arg(type)
  if (type == "weights") {
    w <- sort(x$weights[active_kernels(x)], decreasing = TRUE)
    w <- rev(utils::head(w, top))
    op <- graphics::par(mar = c(4, max(4, min(20, max(nchar(names(w))) * 0.55)), 3, 1))
    on.exit(graphics::par(op))
    graphics::barplot(w, horiz = TRUE, las = 1, cex.names = 0.7, xlab = "kernel weight",
                      main = sprintf("%s: %d of %d kernels selected", x$method,
                                     n_selected(x), x$M), ...)
  } else {
    h <- x$history
    ok <- !is.na(h$gap) & h$gap > 0
    if (nrow(h) < 2L || !any(ok)) {
      message("this fit recorded no iteration history to plot")
      return(invisible(x))
    }
    op <- graphics::par(mfrow = c(1, 2))
    on.exit(graphics::par(op))
    graphics::plot(h$time[ok], h$gap[ok], log = "y", type = "b", pch = 20,
                   xlab = "time (s)", ylab = "relative duality gap", main = x$method, ...)
    graphics::plot(h$time, h$n_active, type = "b", pch = 20, xlab = "time (s)",
                   ylab = "active kernels", main = x$method, ...)
  }
  invisible(x)
}

# ------------------------------------------------------------------ paths over C

# Per-fit quantities of a path's fits, binary, regression or multiclass ("mkl_multi": the
# kernels some problem uses, the largest last gap of its binary fits, the multiclass error).
fit_nkernels <- function(f) n_selected(f)
fit_last_gap <- function(f) {
  if (inherits(f, "mkl_multi")) return(max(vapply(f$fits, fit_last_gap, 1)))
  g <- utils::tail(f$history$gap, 1L)
  if (length(g)) as.double(g) else NA_real_
}
fit_train_error <- function(f) {
  if (inherits(f, "mkl_multi")) return(mean(multi_class(f, f$fitted) != f$y))
  mean(decision_class(f$fitted) != f$y)
}

# The fits of a path at the values s of C: the nearest fitted C on the log scale (an MKL path is
# not piecewise linear in C, so fits are not interpolated); a message names any s not fitted.
path_index <- function(object, s) {
  if (is.null(s)) return(seq_along(object$C))
  if (!is.numeric(s) || anyNA(s) || any(s <= 0)) stop("'s' must be positive values of C",
                                                      call. = FALSE)
  idx <- vapply(s, function(v) which.min(abs(log(object$C) - log(v))), integer(1))
  off <- abs(log(object$C[idx]) - log(s)) > 1e-8
  if (any(off))
    message(sprintf(paste0("s = %s: not a fitted C; the nearest fit on the log scale is used ",
                           "(C = %s), without interpolation. mkl() at that C fits it exactly"),
                    paste(format(s[off]), collapse = ", "),
                    paste(format(object$C[idx[off]]), collapse = ", ")))
  idx
}

#' @export
print.mkl_path <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nCall:  ", paste(deparse(x$call), sep = "\n", collapse = "\n"), "\n\n", sep = "")
  tab <- data.frame(C = x$C,
                    kernels = vapply(x$fits, fit_nkernels, 1L),
                    iterations = vapply(x$fits, `[[`, 1L, "iterations"),
                    converged = vapply(x$fits, `[[`, TRUE, "converged"),
                    objective = vapply(x$fits, function(f) as.double(f$objective), 1),
                    gap = vapply(x$fits, fit_last_gap, 1))
  cat(sprintf("Path of %d '%s' fits (warm-started%s):\n", length(x$C), x$method,
              if (inherits(x$fits[[1L]], "mkl_multi"))
                paste0("; multiclass, ", multi_scheme_label(x$fits[[1L]])) else ""))
  print(tab, digits = digits, row.names = FALSE)
  invisible(x)
}

#' Summarise a path of mkl fits
#'
#' @param object an `"mkl_path"` (from [mkl()] with a vector `C`).
#' @param ... unused.
#' @return An object of class `"summary.mkl_path"`: `call`, `method`, `task` and `table`, a
#'   data frame with one row per C: `C`, `kernels` (the number selected), `converged`,
#'   `iterations`, `gap` (the last relative duality gap, `NA` when the solver records none),
#'   `objective`, and the training error (`error`, classification) or `rmse` (regression).
#' @examples
#' set.seed(2)
#' x <- matrix(rnorm(200), 50)
#' y <- ifelse(x[, 1]^2 + x[, 2] > 1, 1, -1)
#' path <- mkl(x, y, kernels = kernel_set(rbf_kernel(c(0.5, 2))), C = c(10, 1, 0.1))
#' summary(path)
#' @export
summary.mkl_path <- function(object, ...) {
  fits <- object$fits
  task <- fits[[1L]]$task
  tab <- data.frame(C = object$C,
                    kernels = vapply(fits, fit_nkernels, 1L),
                    converged = vapply(fits, function(f) isTRUE(f[["converged"]]), TRUE),
                    iterations = vapply(fits, function(f) as.integer(f[["iterations"]]), 1L),
                    gap = vapply(fits, fit_last_gap, 1),
                    objective = vapply(fits, function(f) as.double(f[["objective"]])[1L], 1))
  if (task == "classification")
    tab$error <- vapply(fits, fit_train_error, 1)
  else tab$rmse <- vapply(fits, function(f) sqrt(mean((f$fitted - f$y)^2)), 1)
  structure(list(call = object$call, method = object$method, task = task,
                 nobs = fits[[1L]]$nobs, M = fits[[1L]]$M, table = tab),
            class = "summary.mkl_path")
}

#' @export
print.summary.mkl_path <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nCall:  ", paste(deparse(x$call), sep = "\n", collapse = "\n"), "\n\n", sep = "")
  cat(sprintf("Path of %d '%s' fits (%s), %d observations, %d kernels\n", nrow(x$table),
              x$method, x$task, x$nobs, x$M))
  cat(sprintf("Training %s per C:\n", if (x$task == "classification") "error" else "RMSE"))
  print(x$table, digits = digits, row.names = FALSE)
  nc <- sum(!x$table$converged)
  if (nc) cat(sprintf("\n%d of %d fits did NOT converge\n", nc, nrow(x$table)))
  invisible(x)
}

#' @rdname coef.mkl
#' @export
coef.mkl_path <- function(object, s = NULL, type = c("weights", "alpha", "bias"), ...) {
  type <- match_arg(type)
  idx <- path_index(object, s)
  if (length(idx) == 1L) return(coef(object$fits[[idx]], type = type))
  if (type == "alpha" || inherits(object$fits[[1L]], "mkl_multi")) {
    out <- lapply(object$fits[idx], coef, type = type)
    names(out) <- format(object$C[idx])
    return(out)
  }
  out <- sapply(object$fits[idx], coef, type = type)
  if (is.matrix(out)) colnames(out) <- format(object$C[idx]) else
    names(out) <- format(object$C[idx])
  out
}

#' @rdname predict.mkl
#' @param s for a path: the value(s) of C to predict with (default: every fitted C). Each
#'   value takes the fit of the nearest fitted C on the log scale, without interpolation (an
#'   MKL path is not piecewise linear in C); a message names a value that is not a fitted C.
#'   One value gives what the fit's `predict` gives; several give a matrix with one column
#'   per value (named by the C used; `type = "class"` gives the labels as a character matrix,
#'   as glmnet does), or, for predictions that are matrices (`"prob"`, multiclass `"link"` and
#'   `"response"`), an array with the values of `s` as its third dimension.
#' @export
predict.mkl_path <- function(object, newx, s = NULL, ...) {
  if (missing(newx)) newx <- NULL
  idx <- path_index(object, s)
  if (length(idx) == 1L) return(predict(object$fits[[idx]], newx, ...))
  out <- lapply(object$fits[idx], function(f) predict(f, newx, ...))
  path_stack(out, format(object$C[idx], trim = TRUE))
}

# Predictions at several C side by side: vectors as the columns of a matrix (factors as
# character), matrices as the slices of an array.
path_stack <- function(out, labels) {
  first <- out[[1L]]
  if (is.matrix(first))
    return(array(unlist(out, use.names = FALSE), c(dim(first), length(out)),
                 dimnames = c(dimnames(first), list(labels))))
  if (is.factor(first)) out <- lapply(out, as.character)
  m <- do.call(cbind, out)
  dimnames(m) <- list(names(first), labels)
  m
}

#' @rdname plot.mkl
#' @export
plot.mkl_path <- function(x, ...) {
  if (inherits(x$fits[[1L]], "mkl_multi")) {
    # one panel per binary problem
    probs <- colnames(x$fits[[1L]]$weights)
    nc <- ceiling(sqrt(length(probs)))
    op <- graphics::par(mfrow = c(ceiling(length(probs) / nc), nc))
    on.exit(graphics::par(op))
    for (b in probs) {
      W <- sapply(x$fits, function(f) f$weights[, b])
      keep <- rowSums(W) > 0
      if (!any(keep)) next
      graphics::matplot(log10(x$C), t(W[keep, , drop = FALSE]), type = "l", lty = 1,
                        xlab = "log10(C)", ylab = "kernel weight",
                        main = sprintf("%s: %s", x$method, b), ...)
    }
    return(invisible(x))
  }
  W <- sapply(x$fits, `[[`, "weights")
  keep <- rowSums(W) > 0
  graphics::matplot(log10(x$C), t(W[keep, , drop = FALSE]), type = "l", lty = 1,
                    xlab = "log10(C)", ylab = "kernel weight",
                    main = sprintf("%s: kernel weights along the path", x$method), ...)
  invisible(x)
}

# Probabilities for hinge-loss classifiers: Platt's sigmoid on the training decision values,
# with his smoothed targets (which keep it finite on separable data). Case weights w weight
# each row's term and the class counts (a row of weight 2 counts as two; weight 0 as none).
platt_fit <- function(f, y, loss, w = NULL) {
  if (loss == "logistic") return(c(A = 1, B = 0))
  if (!is.null(w)) {
    keep <- w > 0
    f <- f[keep]
    y <- y[keep]
    w <- w[keep]
  } else w <- rep(1, length(f))
  np <- sum(w[y > 0]); nn <- sum(w[y < 0])
  t <- ifelse(y > 0, (np + 1) / (np + 2), 1 / (nn + 2))
  f <- as.double(f)
  wc <- if (all(w == 1)) NULL else as.double(w)
  # the likelihood and its derivatives in one pass in C (src/front.c; R's arithmetic, the
  # same bits): R's vectors here were O(n) garbage at every step (NOTES-store.md)
  nll <- function(par) .Call(C_platt_pass, f, t, wc, as.double(par), FALSE)
  # Newton's method with a halving line search (Lin, Lin and Weng 2007): a handful of O(n)
  # passes, where BFGS on numerical gradients took 0.4 s at n = 50,000
  par <- c(1, 0)
  val <- nll(par)
  for (it in seq_len(100L)) {
    d <- .Call(C_platt_pass, f, t, wc, par, TRUE)
    g <- d[1:2]
    H <- matrix(d[c(3L, 4L, 4L, 5L)], 2L) + diag(1e-12, 2L)
    step <- tryCatch(solve(H, g), error = function(e) g)
    if (!all(is.finite(step))) break
    a <- 1
    repeat {
      cand <- par - a * step
      v <- nll(cand)
      if (is.finite(v) && v <= val - 1e-4 * a * sum(g * step)) break
      a <- a / 2
      if (a < 1e-10) break
    }
    if (a < 1e-10) break
    par <- cand
    done <- abs(val - v) <= 1e-12 * max(1, abs(v))
    val <- v
    if (done || max(abs(g)) < 1e-10 * length(f)) break
  }
  if (!all(is.finite(par))) par <- stats::optim(c(1, 0), nll, method = "BFGS")$par
  c(A = par[1], B = par[2])
}
