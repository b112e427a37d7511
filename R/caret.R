#' A caret model specification for mklearn
#'
#' Returns the list that [caret::train()] takes as a custom `method`, so that caret tunes `C`
#' of an mklearn model by its resampling schemes, like any of its own models: `train(x, y,
#' method = mkl_caret(kernels = ks, method = "simple"), tuneGrid = data.frame(C = ...))`.
#' Binary and multiclass classification (factor response; class probabilities with
#' `trainControl(classProbs = TRUE)`) and, for methods that do it, regression.
#'
#' The tuned parameter is `C` (on [mkl()]'s scale: the SVM box constant on kernels with unit
#' mean diagonal). caret's default grid of `tuneLength` values is log-spaced from 0.1 to 100;
#' `search = "random"` draws `log10(C)` uniformly from \[-2, 3\]. caret sorts the candidates
#' from the most regularised (smallest C) up. caret's case weights (`train(weights = )`) are
#' passed to [mkl()] as `weights` (an error for a method that does not take them).
#'
#' With `loop = TRUE` (the default), caret's submodel `loop` fits the whole C grid as one
#' path per resample, as [cv.mkl()] does: `mkl()` with the grid's C values in decreasing
#' order, the kernels built once and each fit warm-started from the previous C, and the
#' predictions of every C read from that path. The chosen C and the resampled accuracies are
#' those of separate fits up to the solver's tolerance (a warm-started fit may stop at another
#' point within it, and a held-out point change sides; a smaller `mkl_control(tol = )` makes
#' them agree); `loop = FALSE` fits every C of every resample from scratch. The final model is
#' one fit at the chosen C on all the data.
#'
#' caret's `varImp()` on the result ranks the features by the kernel weights of the final
#' model: each kernel's weight is shared equally among the columns of its feature group and
#' summed per column (for a multiclass fit, averaged over its binary problems), so with
#' `features = "each"` a column's importance is the weight of the kernels on it alone; with
#' only `features = "all"` every column has the same importance (which caret's default scaling
#' to 0-100 turns into `NaN`: use `varImp(fit, scale = FALSE)`).
#'
#' @param kernels a [kernel_set()] (kernels are rebuilt on every resample); `NULL` for the
#'   default of [mkl()].
#' @param method the mklearn method, one of [mkl_methods()].
#' @param ... further arguments of [mkl()] fixed for every fit (e.g. `loss`, `multiclass`,
#'   `control`); arguments given to `caret::train(...)` are passed on as well.
#' @param loop `TRUE` (the default) to fit the C grid as one warm-started path per resample
#'   (caret's submodel loop), `FALSE` to fit each C separately.
#' @return A list with `label`, `library`, `type`, `parameters`, `grid`, `loop` (a function,
#'   or `NULL` with `loop = FALSE`), `fit`, `predict`, `prob`, `varImp`, `sort`, `levels`
#'   and `tags`: caret's custom model format.
#' @examples
#' \donttest{
#' if (requireNamespace("caret", quietly = TRUE)) {
#'   ks <- kernel_set(rbf_kernel(c(0.5, 2)), linear_kernel())
#'   set.seed(1)
#'   tr <- caret::train(iris[, 1:4], iris$Species, method = mkl_caret(ks, "uniform"),
#'                      tuneGrid = data.frame(C = c(0.1, 1, 10)),
#'                      trControl = caret::trainControl(method = "cv", number = 3))
#'   tr$bestTune
#'   caret::varImp(tr)
#' }
#' }
#' @export
mkl_caret <- function(kernels = NULL, method = "uniform", ..., loop = TRUE) {
  if (!is.null(kernels) && !inherits(kernels, "kernel_set"))
    stop(paste0("mkl_caret() needs a kernel_set (caret resamples the rows, so the kernels are ",
                "rebuilt for each resample)"), call. = FALSE)
  if (!is.character(method) || length(method) != 1L || !(method %in% mkl_methods()))
    stop(sprintf("'method' must be one of %s", paste(mkl_methods(), collapse = ", ")),
         call. = FALSE)
  if (!is.logical(loop) || length(loop) != 1L || is.na(loop))
    stop("'loop' must be TRUE or FALSE", call. = FALSE)
  fixed <- list(...)
  if (length(fixed) && (is.null(names(fixed)) || any(!nzchar(names(fixed)))))
    stop("the arguments in '...' of mkl_caret() must be named", call. = FALSE)
  taken <- intersect(names(fixed), c("x", "y", "C", "kernels", "method", "data"))
  if (length(taken))
    stop(sprintf(paste0("mkl_caret() sets %s itself (caret passes the data and tunes C); do ",
                        "not give them in '...'"), paste(taken, collapse = ", ")), call. = FALSE)
  type <- c(classification = "Classification",
            regression = "Regression")[method_tasks(method_info(method))]
  type <- unname(type)
  fit_one <- function(x, y, wts, param, lev, last, classProbs, ...) {
    args <- c(list(x = x, y = y, method = method, C = param$C, weights = wts),
              if (!is.null(kernels)) list(kernels = kernels), fixed, list(...))
    # resample fits: Platt's sigmoid on their training values, as cv.mkl's folds (R/cv.R)
    if (!last) args$control <- fold_control(args$control)
    do.call(mkl, args)
  }
  predict_one <- function(modelFit, newdata, submodels = NULL) {
    if (modelFit$task == "regression") return(predict(modelFit, newdata, type = "link"))
    as.character(predict(modelFit, newdata, type = "class"))
  }
  prob_one <- function(modelFit, newdata, submodels = NULL) {
    p <- predict(modelFit, newdata, type = "response")
    if (!is.matrix(p)) {
      p <- cbind(1 - p, p)
      colnames(p) <- as.character(modelFit$classes)
    }
    as.data.frame(p)
  }
  # the submodel loop: loop() records the grid's path (its largest C is the loop's value, the
  # others its submodels); fit_path() fits that path in a resample, one mkl() call
  path <- new.env(parent = emptyenv())
  loop_grid <- function(grid) {
    C <- sort(unique(grid$C), decreasing = TRUE)
    path$C <- C
    list(loop = data.frame(C = C[1L]), submodels = list(data.frame(C = C[-1L])))
  }
  fit_path <- function(x, y, wts, param, lev, last, classProbs, ...) {
    if (!last && length(path$C) > 1L && identical(param$C, path$C[1L]))
      param <- list(C = path$C)
    fit_one(x, y, wts, param, lev, last, classProbs, ...)
  }
  # predictions (or probabilities) of the loop's fit, then of each submodel's, from the path
  on_path <- function(one) function(modelFit, newdata, submodels = NULL) {
    if (!inherits(modelFit, "mkl_path")) return(one(modelFit, newdata))
    if (is.null(submodels)) return(one(modelFit$fits[[1L]], newdata))
    Cs <- c(modelFit$C[1L], submodels$C)
    k <- match(Cs, modelFit$C)
    if (anyNA(k))
      stop(sprintf("the fitted path has no fit at C = %s", format(Cs[is.na(k)][1L])),
           call. = FALSE)
    lapply(modelFit$fits[k], one, newdata = newdata)
  }
  list(label = sprintf("Multiple kernel learning (mklearn, method '%s')", method),
       library = "mklearn", type = type, loop = if (loop) loop_grid,
       parameters = data.frame(parameter = "C", class = "numeric",
                               label = "Regularisation constant C"),
       grid = function(x, y, len = NULL, search = "grid") {
         if (search == "grid") data.frame(C = 10^seq(-1, 2, length.out = len))
         else data.frame(C = sort(10^stats::runif(len, -2, 3)))
       },
       fit = fit_path, predict = on_path(predict_one), prob = on_path(prob_one),
       varImp = function(object, ...) feature_importance(object),
       sort = function(x) x[order(x$C), , drop = FALSE],
       levels = function(x) as.character(x$classes),
       tags = c("Kernel Method", "Multiple Kernel Learning", "Support Vector Machines"))
}

# The importance of each feature from a fit's kernel weights: each kernel's weight shared
# equally among the columns of its feature group, summed per column (averaged over the binary
# problems of a multiclass fit); caret's varImp() format, a data frame with column Overall.
feature_importance <- function(object) {
  one <- if (inherits(object, "mkl_multi")) object$fits[[1L]] else object
  rk <- one$kernel_info
  if (!inherits(object, c("mkl", "mkl_multi")) || is.null(rk))
    stop("feature importance needs an mkl() fit on a kernel_set", call. = FALSE)
  W <- as.matrix(object$weights)
  gw <- rowsum(W, rk$table$group, reorder = TRUE)    # weight per feature group
  gid <- sort(unique(rk$table$group))
  size <- diff(rk$gstart)
  entry <- rep(seq_along(size), size)                  # the group of each (group, column) pair
  keep <- entry %in% gid
  share <- gw[match(entry[keep], gid), , drop = FALSE] / size[entry[keep]]
  imp <- matrix(0, one$p_x, ncol(W))
  sums <- rowsum(share, rk$gfeat[keep] + 1L, reorder = TRUE)
  imp[as.integer(rownames(sums)), ] <- sums
  nm <- if (is.null(one$xnames)) paste0("x", seq_len(one$p_x)) else one$xnames
  data.frame(Overall = rowMeans(imp), row.names = nm)
}
