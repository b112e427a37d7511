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
#' @param kernels a [kernel_set()] (kernels are rebuilt on every resample); `NULL` for the
#'   default of [mkl()].
#' @param method the mklearn method, one of [mkl_methods()].
#' @param ... further arguments of [mkl()] fixed for every fit (e.g. `loss`, `multiclass`,
#'   `control`); arguments given to `caret::train(...)` are passed on as well.
#' @return A list with `label`, `library`, `type`, `parameters`, `grid`, `loop` (`NULL`),
#'   `fit`, `predict`, `prob`, `sort`, `levels` and `tags`: caret's custom model format.
#' @examples
#' \donttest{
#' if (requireNamespace("caret", quietly = TRUE)) {
#'   ks <- kernel_set(rbf_kernel(c(0.5, 2)), linear_kernel())
#'   set.seed(1)
#'   tr <- caret::train(iris[, 1:4], iris$Species, method = mkl_caret(ks, "uniform"),
#'                      tuneGrid = data.frame(C = c(0.1, 1, 10)),
#'                      trControl = caret::trainControl(method = "cv", number = 3))
#'   tr$bestTune
#' }
#' }
#' @export
mkl_caret <- function(kernels = NULL, method = "uniform", ...) {
  if (!is.null(kernels) && !inherits(kernels, "kernel_set"))
    stop(paste0("mkl_caret() needs a kernel_set (caret resamples the rows, so the kernels are ",
                "rebuilt for each resample)"), call. = FALSE)
  if (!is.character(method) || length(method) != 1L || !(method %in% mkl_methods()))
    stop(sprintf("'method' must be one of %s", paste(mkl_methods(), collapse = ", ")),
         call. = FALSE)
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
  list(label = sprintf("Multiple kernel learning (mklearn, method '%s')", method),
       library = "mklearn", type = type, loop = NULL,
       parameters = data.frame(parameter = "C", class = "numeric",
                               label = "Regularisation constant C"),
       grid = function(x, y, len = NULL, search = "grid") {
         if (search == "grid") data.frame(C = 10^seq(-1, 2, length.out = len))
         else data.frame(C = sort(10^stats::runif(len, -2, 3)))
       },
       fit = fit_one, predict = predict_one, prob = prob_one,
       sort = function(x) x[order(x$C), , drop = FALSE],
       levels = function(x) as.character(x$classes),
       tags = c("Kernel Method", "Multiple Kernel Learning", "Support Vector Machines"))
}
