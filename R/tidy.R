# broom-style summaries of fits, paths and cross-validations: methods of the generics
# package's tidy(), glance() and augment(), registered when generics is loaded (R/zzz.R).

#' Tidy summaries of mkl fits, paths and cross-validations
#'
#' Methods of the `generics` package's `tidy()`, `glance()` and `augment()` (re-exported by
#' `broom`), registered when that package is installed. They return tibbles (data frames when
#' `tibble` is not installed).
#'
#' * `tidy()` of a fit: one row per kernel: `kernel` (its label), `family` (`"rbf"`,
#'   `"poly"`, ...; `NA` for precomputed kernels), `parameter` (the family's first parameter:
#'   the width of a Gaussian or Laplace kernel, the degree of a polynomial), `group` (the
#'   feature group, `NA` for precomputed kernels), `weight`, `norm` (the block norm
#'   \eqn{\|f_m\| = \sqrt{\alpha_m' K_m \alpha_m}}{||f_m|| = sqrt(alpha_m' K_m alpha_m)} of the
#'   kernel's part of the decision function (on the training kernel without its diagonal
#'   jitter), zero for a kernel not selected; `NA` for
#'   precomputed kernels, which the fit does not keep) and `selected`. A multiclass fit adds
#'   `problem` (one block of rows per binary problem); a path adds `C` (one block per C).
#'   A cross-validation: one row per C with `estimate` (the mean held-out loss `cvm`),
#'   `std.error` (`cvsd`), `conf.low`, `conf.high` (`cvlo`, `cvup`) and `kernels` (selected by
#'   the fit on all the data).
#' * `glance()`: one row. A fit: `method`, `task`, `C`, `nobs`, `kernels` (selected), `M`
#'   (all kernels), `objective`, `gap` (the last relative duality gap, `NA` when the solver
#'   records none), `converged`, `iterations`, `train_error` (the training misclassification
#'   rate; `NA` for a regression), `train_rmse` (`NA` for a classification) and `time`
#'   (seconds: kernels and fit). A path: `method`, `task`, `nobs`, `M`, `n_C`, `C_max`,
#'   `C_min`, `converged` (all fits) and `time`. A cross-validation: `method`, `measure`,
#'   `C.min`, `C.1se`, `estimate.min` (the mean held-out loss at `C.min`), `nfolds`, `nobs`
#'   (and `lambda.min` for an elastic net cross-validated over `lambda`).
#' * `augment()`: `data` (the training data) or `newdata` with the predictions added:
#'   for a classification `.pred_class`, one probability column `.pred_<class>` per class
#'   (from `predict(type = "response")`) and, for two classes, `.fitted` (the decision value);
#'   for a regression `.fitted` and, when the response is known (the training data, or a
#'   formula fit's response column in `newdata`), `.resid`. Without `data` and `newdata`, the
#'   prediction columns on the training rows alone. A path or a cross-validation is augmented
#'   at one C (`s`).
#'
#' @param x an `"mkl"` or `"mkl_multi"` fit, an `"mkl_path"` or a `"cv.mkl"` object.
#' @param norms compute the kernels' block norms (the training kernels of the selected kernels
#'   are recomputed from the data the fit keeps: about one kernel matrix's arithmetic per
#'   selected kernel); `FALSE` leaves `norm` `NA`.
#' @param selected keep only the selected kernels (those with non-zero weight).
#' @param data the training data (the rows the model was fitted on; for a formula fit with
#'   rows dropped by `na.action`, all the rows of the data given to [mkl()] also do), or
#'   `NULL`.
#' @param newdata new data to predict, or `NULL` (the training rows).
#' @param s for a path: the one value of C to use (the nearest fitted value); for a
#'   cross-validation: `"C.min"` (default), `"C.1se"` or a number.
#' @param ... for `augment()`: passed to `predict()` (e.g. `newkernels` for a fit on
#'   precomputed kernels); otherwise unused.
#' @return A tibble (see Details).
#' @examples
#' if (requireNamespace("generics", quietly = TRUE)) {
#'   set.seed(1)
#'   x <- matrix(rnorm(200), 50, dimnames = list(NULL, paste0("v", 1:4)))
#'   y <- factor(ifelse(x[, 1]^2 + x[, 2] > 1, "a", "b"))
#'   ks <- kernel_set(rbf_kernel(c(0.5, 2)), linear_kernel(), features = c("all", "each"))
#'   fit <- mkl(x, y, kernels = ks, method = "simple")
#'   generics::tidy(fit, selected = TRUE)
#'   generics::glance(fit)
#'   head(generics::augment(fit, data = as.data.frame(x)))
#' }
#' @name tidy.mkl
NULL

# A tibble when the tibble package is installed, otherwise the data frame.
tidy_frame <- function(df) {
  rownames(df) <- NULL
  if (requireNamespace("tibble", quietly = TRUE)) tibble::as_tibble(df) else df
}

# Each kernel's family, first parameter and feature group (NA for precomputed kernels).
kernel_descriptions <- function(fit) {
  rk <- fit$kernel_info
  if (is.null(rk))
    return(data.frame(family = rep(NA_character_, fit$M), parameter = NA_real_,
                      group = NA_character_, stringsAsFactors = FALSE))
  tab <- rk$table
  data.frame(family = as.character(tab$type), parameter = as.double(tab$par1),
             group = rk$group_labels[tab$group], stringsAsFactors = FALSE)
}

# The block norms sqrt(alpha_m' K_m alpha_m) of a binary or regression fit, zero for the
# kernels not selected, NA for precomputed kernels (the fit does not keep them). The training
# kernels of the selected kernels are recomputed as predict() computes kernels: the training
# rows as new data (the training normalisation, without the diagonal jitter).
kernel_norms <- function(fit) {
  out <- numeric(fit$M)
  act <- active_kernels(fit)
  if (!length(act)) return(out)
  if (is.null(fit$x)) {
    out[act] <- NA_real_
    return(out)
  }
  st <- test_store(fit$kernel_info, fit$x, fit$x, fit$normalization, act, check_threads(NULL))
  a <- fit$alpha
  q <- if (is_outer_alpha(a)) {
    # alpha_m = u v_m: one quadratic form u' K_m u per kernel
    .Call(C_store_quad, st, seq_along(act), a$u) * a$v[act]^2
  } else vapply(seq_along(act), function(k)
    .Call(C_store_quad, st, k, as.double(a[, act[k]])), 1)
  out[act] <- sqrt(pmax(q, 0))
  out
}

# One row per kernel of a binary or regression fit.
tidy_kernels <- function(fit, norms) {
  d <- kernel_descriptions(fit)
  data.frame(kernel = fit$labels, d, weight = unname(fit$weights),
             norm = if (norms) kernel_norms(fit) else NA_real_,
             selected = unname(fit$weights) > 0, stringsAsFactors = FALSE)
}

check_flag <- function(v, name) {
  if (!is.logical(v) || length(v) != 1L || is.na(v))
    stop(sprintf("'%s' must be TRUE or FALSE", name), call. = FALSE)
  v
}

#' @rdname tidy.mkl
#' @method tidy mkl
tidy.mkl <- function(x, norms = TRUE, selected = FALSE, ...) {
  norms <- check_flag(norms, "norms")
  selected <- check_flag(selected, "selected")
  tab <- tidy_kernels(x, norms)
  tidy_frame(if (selected) tab[tab$selected, , drop = FALSE] else tab)
}

#' @rdname tidy.mkl
#' @method tidy mkl_multi
tidy.mkl_multi <- function(x, norms = TRUE, selected = FALSE, ...) {
  norms <- check_flag(norms, "norms")
  selected <- check_flag(selected, "selected")
  tab <- do.call(rbind, lapply(names(x$fits), function(b)
    data.frame(problem = b, tidy_kernels(x$fits[[b]], norms), stringsAsFactors = FALSE)))
  tidy_frame(if (selected) tab[tab$selected, , drop = FALSE] else tab)
}

#' @rdname tidy.mkl
#' @method tidy mkl_path
tidy.mkl_path <- function(x, norms = TRUE, selected = FALSE, ...) {
  tab <- do.call(rbind, lapply(seq_along(x$fits), function(k)
    data.frame(C = x$C[k], as.data.frame(tidy_any(x$fits[[k]], norms, selected)),
               stringsAsFactors = FALSE)))
  tidy_frame(tab)
}

tidy_any <- function(fit, norms, selected) {
  if (inherits(fit, "mkl_multi")) tidy.mkl_multi(fit, norms, selected) else
    tidy.mkl(fit, norms, selected)
}

#' @rdname tidy.mkl
#' @method tidy cv.mkl
tidy.cv.mkl <- function(x, ...) {
  tidy_frame(data.frame(C = x$C, estimate = x$cvm, std.error = x$cvsd, conf.low = x$cvlo,
                        conf.high = x$cvup, kernels = vapply(x$fit$fits, fit_nkernels, 1L)))
}

# The training RMSE of a regression fit.
fit_train_rmse <- function(f) sqrt(mean((f$fitted - f$y)^2))

#' @rdname tidy.mkl
#' @method glance mkl
glance.mkl <- function(x, ...) {
  cls <- x$task == "classification"
  tidy_frame(data.frame(
    method = x$method, task = x$task, C = as.double(x$C), nobs = as.integer(x$nobs),
    kernels = as.integer(n_selected(x)), M = as.integer(x$M),
    objective = as.double(x$objective)[1L], gap = fit_last_gap(x), converged = x$converged,
    iterations = as.integer(x$iterations),
    train_error = if (cls) fit_train_error(x) else NA_real_,
    train_rmse = if (cls) NA_real_ else fit_train_rmse(x),
    time = sum(x$timing), stringsAsFactors = FALSE))
}

#' @rdname tidy.mkl
#' @method glance mkl_multi
glance.mkl_multi <- glance.mkl

#' @rdname tidy.mkl
#' @method glance mkl_path
glance.mkl_path <- function(x, ...) {
  f1 <- x$fits[[1L]]
  tidy_frame(data.frame(
    method = x$method, task = f1$task, nobs = as.integer(f1$nobs), M = as.integer(f1$M),
    n_C = length(x$C), C_max = max(x$C), C_min = min(x$C),
    converged = all(vapply(x$fits, function(f) isTRUE(f$converged), TRUE)),
    time = f1$timing[["kernels"]] + sum(vapply(x$fits, function(f) f$timing[["fit"]], 1)),
    stringsAsFactors = FALSE))
}

#' @rdname tidy.mkl
#' @method glance cv.mkl
glance.cv.mkl <- function(x, ...) {
  out <- data.frame(method = x$fit$method, measure = x$name, C.min = x$C.min, C.1se = x$C.1se,
                    estimate.min = x$cvm[match(x$C.min, x$C)],
                    nfolds = length(unique(x$foldid)), nobs = length(x$foldid),
                    stringsAsFactors = FALSE)
  if (!is.null(x$lambda.min)) out$lambda.min <- x$lambda.min
  tidy_frame(out)
}

# The response of a formula fit in new data (NULL when absent or not a formula fit).
newdata_response <- function(fit, newdata) {
  fml <- fit$formula
  if (is.null(fml) || length(fml) < 3L || !is.data.frame(newdata)) return(NULL)
  v <- tryCatch(eval(fml[[2L]], newdata, baseenv()), error = function(e) NULL)
  if (length(v) == NROW(newdata)) v else NULL
}

# The prediction columns of augment() for a binary, multiclass or regression fit.
augment_columns <- function(x, newdata, ...) {
  pr <- function(type) if (is.null(newdata)) stats::predict(x, type = type, ...) else
    stats::predict(x, newdata, type = type, ...)
  if (x$task == "regression") {
    f <- unname(pr("link"))
    y <- if (is.null(newdata)) x$y else newdata_response(x, newdata)
    out <- data.frame(.fitted = f)
    if (!is.null(y)) out$.resid <- as.double(y) - f
    return(out)
  }
  # probabilities: predict(type = "response"), a matrix (multiclass) or the second class's
  cls <- pr("class")
  p <- pr("response")
  lv <- as.character(if (is.factor(x$classes)) levels(x$classes) else x$classes)
  if (!is.matrix(p)) p <- cbind(1 - p, p)
  p <- as.data.frame(unname(p))
  names(p) <- paste0(".pred_", lv)
  out <- data.frame(.pred_class = unname(cls), p, check.names = FALSE)
  if (!inherits(x, "mkl_multi")) out$.fitted <- unname(pr("link"))
  out
}

#' @rdname tidy.mkl
#' @method augment mkl
augment.mkl <- function(x, data = NULL, newdata = NULL, ...) {
  cols <- augment_columns(x, newdata, ...)
  base <- if (!is.null(newdata)) newdata else data
  if (!is.null(base)) {
    base <- as.data.frame(base, stringsAsFactors = FALSE)
    if (is.null(newdata)) base <- training_rows(x, base)
    cols <- cbind(base, cols)
  }
  tidy_frame(cols)
}

#' @rdname tidy.mkl
#' @method augment mkl_multi
augment.mkl_multi <- augment.mkl

# The training rows of 'data' for augment(): all of them, or those left after na.action.
training_rows <- function(x, data) {
  n <- x$nobs
  na <- x$na.action
  if (nrow(data) != n && length(na) && nrow(data) == n + length(na))
    data <- data[-as.integer(na), , drop = FALSE]
  if (nrow(data) != n)
    stop(sprintf("'data' must have the %d rows the model was fitted on (it has %d)", n,
                 nrow(data)), call. = FALSE)
  data
}

# The fit of a path at one value of C.
path_fit_at <- function(x, s) {
  if (is.null(s) || length(s) != 1L)
    stop("'s' must be one value of C (the path's fit nearest to it is used)", call. = FALSE)
  x$fits[[path_index(x, s)]]
}

#' @rdname tidy.mkl
#' @method augment mkl_path
augment.mkl_path <- function(x, s = NULL, data = NULL, newdata = NULL, ...)
  augment.mkl(path_fit_at(x, s), data = data, newdata = newdata, ...)

#' @rdname tidy.mkl
#' @method augment cv.mkl
augment.cv.mkl <- function(x, s = "C.min", data = NULL, newdata = NULL, ...)
  augment.mkl_path(x$fit, s = cv_s(x, s), data = data, newdata = newdata, ...)
