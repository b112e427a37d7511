# mkl_compare(): the regularisation strategies of Tomioka and Suzuki (Table 1) fitted
# on the same data and kernels, with print and plot methods (the paper's Figs. 1-3).

# The strategies mkl_compare() knows: label, mkl() arguments, and whether it fits mkl_compare()'s
# loss (what an mkl() method supports, and whether it takes C, is in its registry entry).
.compare_methods <- list(
  uniform = list(label = "Uniform", args = list(method = "uniform")),
  l1 = list(label = "Block 1-norm", args = list(method = "spicy", penalty = "l1"), loss = TRUE),
  elastic = list(label = "Elastic (lambda)", args = list(method = "spicy",
                                                         penalty = "elasticnet"), loss = TRUE),
  elastic_cv = list(label = "Elastic (CV)", args = list(method = "spicy",
                                                        penalty = "elasticnet"), loss = TRUE),
  l2 = list(label = "l2-norm", args = list(method = "lp", p = 2)),
  bayes = list(label = "EB", args = list(method = "bayes"))
)

#' Default regularisation constants of mkl_compare()
#'
#' Every value is on [mkl()]'s scale of `C` (the SVM box constant on kernels with unit mean
#' diagonal; larger C, less regularisation), for every method; `"bayes"` has none. The
#' defaults were the best of a grid on Sonar (60 Gaussian kernels per width on single features
#' and all features, 100 training points): box constants 10, 100, 1000 on unit-trace kernels
#' for uniform and l2-norm (here 10 and 1), SpicyMKL penalties 0.01-10 with the logistic loss
#' (here C = 5, i.e. a penalty of 0.1 on unit-trace kernels). Give a vector to choose the value
#' by cross-validation on each training set.
#' @param ... values to override, by method name.
#' @return A named list of C values (one or several per method).
#' @examples
#' mkl_compare_C(uniform = c(0.1, 1, 10))
#' @export
mkl_compare_C <- function(...) {
  C <- list(uniform = 10, l1 = 5, elastic = 5, elastic_cv = 5, l2 = 1)
  user <- list(...)
  bad <- setdiff(names(user), names(C))
  if (length(user) && (is.null(names(user)) || length(bad)))
    stop(sprintf("mkl_compare_C() takes values named %s", paste(names(C), collapse = ", ")),
         call. = FALSE)
  C[names(user)] <- user
  C
}

#' Compare MKL regularisation strategies on the same data and kernels
#'
#' Fits uniform weights, block 1-norm MKL, elastic-net MKL (fixed `lambda` and `lambda` chosen
#' by cross-validation), l2-norm MKL and Empirical Bayesian MKL (Tomioka and Suzuki, Table 1
#' and Section 4) on the same training data with the same kernels, and records the test
#' accuracy (classification) or test RMSE (regression), the number of kernels selected and the
#' kernel weights. With `n_train`, it repeats this over training-set sizes and random splits:
#' the paper's Figures 1-3 on your data.
#'
#' @param x,y data as for [mkl()] (a matrix or data frame; a factor, \{-1, 1\} or numeric
#'   response).
#' @param kernels a [kernel_set()].
#' @param methods any of `"uniform"`, `"l1"` (block 1-norm, SpicyMKL), `"elastic"` (elastic
#'   net at `lambda`), `"elastic_cv"` (elastic net, lambda from `lambda_grid` by
#'   cross-validation), `"l2"` (lp-norm MKL with p = 2, SVM; classification only) and
#'   `"bayes"` (Empirical Bayes).
#' @param C regularisation constants per method, see [mkl_compare_C()]; a vector for a method
#'   chooses its C by `nfolds`-fold cross-validation on each training set.
#' @param lambda the elastic-net parameter of `"elastic"` (0.5 in the paper).
#' @param lambda_grid the candidates of `"elastic_cv"` (the paper: 0, 0.2, ..., 1).
#' @param loss the loss of the SpicyMKL methods: `"logistic"` (the paper) or `"hinge"` for
#'   classification, `"squared"` for regression (default by task). Uniform and l2-norm use the
#'   hinge loss (uniform: kernel ridge for regression); Empirical Bayes the squared loss.
#' @param test the test rows: indices or a logical vector; with `n_train = NULL` the other rows
#'   train, and `test = NULL` fits on all rows without a test measure.
#' @param n_train training-set sizes (per class for classification, in all for regression);
#'   the training rows are drawn at random (stratified) from the rows not in `test`, and the
#'   test measure is taken on `test` if given, otherwise on all rows not used for training.
#' @param splits number of random training sets per size.
#' @param nfolds folds of the cross-validations (lambda, vector C).
#' @param threshold a kernel counts as selected when its weight exceeds this (and its sample
#'   coefficients are not all zero).
#' @param control settings passed to every fit (see [mkl_control()]; a setting must be read by
#'   every method compared, so mostly `nthreads`, `memory`, `store`).
#' @param seed optional seed for the splits and folds.
#' @param keep_fits keep the fitted models (memory: n x M per fit).
#' @param ... further arguments of [mkl()] for every fit, e.g. `standardize = FALSE` (needed
#'   for chi-square kernels on histograms).
#' @return An object of class `"mkl_compare"`: `results` (a data frame with `size`, `split`,
#'   `method`, `label`, `measure` (test accuracy or RMSE), `selected`, `C`, `lambda`, `time`,
#'   `converged`; non-convergence warnings of the fits are collected here, not raised),
#'   `weights` (kernels x methods: the weights averaged over the splits of the largest size),
#'   `measure` (`"accuracy"` or `"rmse"`), `task`, `labels` (kernel labels), `train` (the
#'   training rows of each size and split, in the order of `results`), `fits` (if kept).
#' @examples
#' \donttest{
#' data(Sonar, package = "mlbench")
#' ks <- kernel_set(rbf_kernel(c(1, 5)), features = c("all", "each"))
#' cmp <- mkl_compare(Sonar[, 1:60], Sonar$Class, ks, n_train = c(20, 40), splits = 2,
#'                    methods = c("uniform", "l1", "elastic", "bayes"), seed = 1)
#' cmp
#' plot(cmp)
#' plot(cmp, type = "weights")
#' }
#' @export
mkl_compare <- function(x, y, kernels,
                        methods = c("uniform", "l1", "elastic", "elastic_cv", "l2", "bayes"),
                        C = mkl_compare_C(), lambda = 0.5, lambda_grid = seq(0, 1, by = 0.2),
                        loss = NULL, test = NULL, n_train = NULL, splits = 1L, nfolds = 4L,
                        threshold = 1e-4, control = mkl_control(), seed = NULL,
                        keep_fits = FALSE, ...) {
  cl <- match.call()
  if (!inherits(kernels, "kernel_set"))
    stop("mkl_compare() needs a kernel_set (kernels are rebuilt on each training set)",
         call. = FALSE)
  methods <- unique(match_arg(methods, names(.compare_methods), several.ok = TRUE))
  if (!is.list(C)) C <- as.list(C)
  C <- utils::modifyList(mkl_compare_C(), C)
  x <- check_x(x)
  n <- nrow(x)
  yc <- check_y(y, n, NULL)
  task <- yc$task
  for (m in methods) {
    mm <- .compare_methods[[m]]$args$method
    tasks <- method_tasks(method_info(mm))
    if (!(task %in% tasks))
      stop(sprintf("%s (method '%s') does %s only; drop \"%s\" from 'methods'",
                   method_info(mm)$label, mm, paste(tasks, collapse = " and "), m), call. = FALSE)
  }
  if (is.null(loss)) loss <- if (task == "classification") "logistic" else "squared"
  lambda <- check_scalar(lambda, "lambda", 0, 1)
  if (!is.numeric(lambda_grid) || length(lambda_grid) < 2L || anyNA(lambda_grid) ||
      any(lambda_grid < 0 | lambda_grid > 1))
    stop("'lambda_grid' must hold at least two values in [0, 1]", call. = FALSE)
  if (!is.null(seed)) set.seed(seed)
  test_idx <- if (is.null(test)) integer() else if (is.logical(test)) which(test) else
    as.integer(test)
  if (length(test_idx) && (anyNA(test_idx) || any(test_idx < 1L | test_idx > n)))
    stop("'test' must index rows of 'x'", call. = FALSE)
  pool <- setdiff(seq_len(n), test_idx)
  designs <- if (is.null(n_train)) {
    list(list(size = length(pool), split = 1L, train = pool))
  } else {
    splits <- check_count(splits, "splits")
    out <- list()
    for (s in sort(unique(as.integer(n_train)))) for (k in seq_len(splits))
      out[[length(out) + 1L]] <- list(size = s, split = k,
                                      train = draw_train(yc$y[pool], pool, s, task))
    out
  }
  M <- NA_integer_
  rows <- list()
  wsum <- NULL
  fits <- list()
  big <- max(vapply(designs, function(d) d$size, 1))
  for (ds in designs) {
    tr <- ds$train
    te <- if (length(test_idx)) test_idx else setdiff(seq_len(n), tr)
    if (is.null(n_train) && !length(test_idx)) te <- integer()
    for (m in methods) {
      r <- compare_fit(m, x[tr, , drop = FALSE], y[tr], kernels, C[[m]], lambda, lambda_grid,
                       loss, task, nfolds, control, list(...))
      f <- r$fit
      if (is.na(M)) { M <- f$M; labels <- f$labels }
      meas <- if (!length(te)) NA_real_ else if (task == "classification")
        mean(predict(f, x[te, , drop = FALSE], type = "class") == y[te])
      else sqrt(mean((predict(f, x[te, , drop = FALSE]) - yc$y[te])^2))
      sel <- sum(f$weights[active_kernels(f)] > threshold)
      w <- f$weights
      rows[[length(rows) + 1L]] <- data.frame(
        size = ds$size, split = ds$split, method = m,
        label = if (m == "elastic") sprintf("Elastic (%s)", format(lambda)) else
          .compare_methods[[m]]$label,
        measure = meas, selected = sel, C = r$C, lambda = r$lambda, time = r$time,
        converged = isTRUE(f$converged), stringsAsFactors = FALSE)
      if (ds$size == big) {
        if (is.null(wsum)) wsum <- matrix(0, M, length(methods),
                                          dimnames = list(labels, methods))
        wsum[, m] <- wsum[, m] + w
      }
      if (keep_fits) fits[[length(fits) + 1L]] <- f
    }
  }
  res <- do.call(rbind, rows)
  nbig <- sum(vapply(designs, function(d) d$size == big, TRUE))
  structure(list(results = res, weights = wsum / nbig, methods = methods,
                 measure = if (task == "classification") "accuracy" else "rmse", task = task,
                 labels = labels, M = M, n_train = n_train, largest = big,
                 train = lapply(designs, function(d) d$train),
                 test = if (length(test_idx)) test_idx else NULL,
                 fits = if (keep_fits) fits else NULL, call = cl),
            class = "mkl_compare")
}

# Training rows: s per class (classification) or s in all (regression), from 'pool'.
draw_train <- function(ypool, pool, s, task) {
  if (task == "regression") {
    if (s > length(pool)) stop(sprintf("n_train = %d exceeds the %d available rows", s,
                                       length(pool)), call. = FALSE)
    return(sort(pool[sample.int(length(pool), s)]))
  }
  out <- integer()
  for (cls in c(-1, 1)) {
    idx <- pool[ypool == cls]
    if (s >= length(idx))
      stop(sprintf(paste0("n_train = %d per class leaves no test row of a class with %d ",
                          "rows"), s, length(idx)), call. = FALSE)
    out <- c(out, idx[sample.int(length(idx), s)])
  }
  sort(out)
}

# One method on one training set: list(fit, C, lambda, time).
compare_fit <- function(m, x, y, kernels, C, lambda, lambda_grid, loss, task, nfolds,
                        control, dots = list()) {
  spec <- .compare_methods[[m]]
  args <- c(spec$args, dots)
  if (isTRUE(spec$loss)) args$loss <- loss
  t0 <- proc.time()[["elapsed"]]
  lam <- NA_real_
  call_mkl <- function(extra) do.call(mkl, c(list(x = x, y = y, kernels = kernels,
                                                  control = control), args, extra))
  if (!takes_C(args$method)) {
    fit <- suppressWarnings(call_mkl(list()))
    Cv <- NA_real_
  } else if (m == "elastic_cv") {
    Cs <- sort(as.double(C), decreasing = TRUE)
    cv <- quiet_cv(c(list(x = x, y = y, kernels = kernels, control = control, C = Cs,
                          lambda = lambda_grid, nfolds = nfolds), args))
    lam <- cv$lambda.min
    Cv <- cv$C.min
    fit <- suppressWarnings(call_mkl(list(C = Cv, lambda = lam)))
  } else {
    if (m == "elastic") lam <- lambda
    extra <- if (m == "elastic") list(lambda = lambda) else list()
    if (length(C) > 1L) {
      Cs <- sort(as.double(C), decreasing = TRUE)
      cv <- quiet_cv(c(list(x = x, y = y, kernels = kernels, control = control, C = Cs,
                            nfolds = nfolds), args, extra))
      Cv <- cv$C.min
    } else Cv <- as.double(C)
    fit <- suppressWarnings(call_mkl(c(list(C = Cv), extra)))
  }
  list(fit = fit, C = Cv, lambda = lam, time = proc.time()[["elapsed"]] - t0)
}

#' @export
print.mkl_compare <- function(x, digits = 3L, ...) {
  cat("\nCall:  ", paste(deparse(x$call, width.cutoff = 80L), collapse = "\n"), "\n\n", sep = "")
  r <- x$results
  cat(sprintf("%d kernels; test %s (mean over splits) and kernels selected:\n\n", x$M,
              if (x$measure == "accuracy") "accuracy" else "RMSE"))
  agg <- stats::aggregate(cbind(measure, selected, time) ~ size + label, data = r,
                          FUN = mean, na.action = stats::na.pass)
  agg$label <- factor(agg$label, levels = unique(r$label))
  agg <- agg[order(agg$size, agg$label), ]
  names(agg)[names(agg) == "measure"] <- x$measure
  names(agg)[names(agg) == "size"] <- if (x$task == "classification" && !is.null(x$n_train))
    "n_per_class" else "n_train"
  print(agg, digits = digits, row.names = FALSE)
  if (any(!r$converged)) {
    bad <- table(r$label[!r$converged])
    cat(sprintf("\nNot converged (fits at the final C; see $results$converged): %s\n",
                paste(sprintf("%s %d", names(bad), bad), collapse = ", ")))
  }
  cat("\n")
  invisible(x)
}

#' Plot an mkl_compare result
#'
#' `type = "measure"`: the test accuracy (or RMSE) against the training-set size, mean and
#' standard error over the splits, one line per method (the paper's panels (a)).
#' `type = "weights"`: the kernel weights of each method at the largest size, one panel per
#' method, kernels in their order in the kernel set (panels (b)); the weights are averaged over
#' the splits, and a panel's count is of the kernels with a non-zero weight in any split.
#' @param x an `"mkl_compare"` object.
#' @param type `"measure"` or `"weights"`.
#' @param ... passed to the plotting functions.
#' @export
plot.mkl_compare <- function(x, type = c("measure", "weights"), ...) {
  type <- match_arg(type)
  r <- x$results
  labs <- unique(r$label)
  cols <- seq_along(labs) + 1L
  if (type == "measure") {
    sizes <- sort(unique(r$size))
    mu <- sapply(labs, function(l) sapply(sizes, function(s)
      mean(r$measure[r$label == l & r$size == s])))
    se <- sapply(labs, function(l) sapply(sizes, function(s) {
      v <- r$measure[r$label == l & r$size == s]
      if (length(v) > 1L) stats::sd(v) / sqrt(length(v)) else 0
    }))
    mu <- matrix(mu, length(sizes)); se <- matrix(se, length(sizes))
    graphics::matplot(sizes, mu, type = "b", pch = 15 + seq_along(labs) %% 5, lty = 1,
                      col = cols, ylim = range(c(mu - se, mu + se), na.rm = TRUE),
                      xlab = if (x$task == "classification") "training samples per class" else
                        "training samples",
                      ylab = if (x$measure == "accuracy") "test accuracy" else "test RMSE", ...)
    for (k in seq_along(labs)) {
      ok <- is.finite(se[, k]) & se[, k] > 0
      if (any(ok))
        graphics::arrows(sizes[ok], (mu[, k] - se[, k])[ok], sizes[ok], (mu[, k] + se[, k])[ok],
                         angle = 90, code = 3, length = 0.02, col = cols[k])
    }
    graphics::legend("bottomright", legend = labs, col = cols, lty = 1,
                     pch = 15 + seq_along(labs) %% 5, bty = "n", cex = 0.8)
  } else {
    W <- x$weights
    k <- ncol(W)
    op <- graphics::par(mfrow = c(k, 1L), mar = c(1.5, 4, 1.2, 1), oma = c(2, 0, 0, 0))
    on.exit(graphics::par(op))
    lab_of <- stats::setNames(r$label[match(colnames(W), r$method)], colnames(W))
    for (j in seq_len(k)) {
      graphics::plot(seq_len(nrow(W)), W[, j], type = "h", xlab = "", ylab = "weight",
                     ylim = c(0, max(W[, j], 1e-12)),
                     main = sprintf("%s: %d kernels", lab_of[j], sum(W[, j] > 0)),
                     cex.main = 0.9, col = cols[j], ...)
    }
    graphics::mtext("kernel (order of the kernel set)", side = 1, outer = TRUE, line = 0.5,
                    cex = 0.8)
  }
  invisible(x)
}

# cv.mkl inside a comparison: its convergence warnings are collected in the results, and its
# note about a C at the edge of the grid would repeat for every split
quiet_cv <- function(args) suppressMessages(suppressWarnings(do.call(cv.mkl, args)))
