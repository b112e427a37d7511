# ggplot2's autoplot() for fits, paths and cross-validations, registered when ggplot2 is loaded
# (R/zzz.R); the data come from the tidy() methods (R/tidy.R).

#' ggplot2 plots of mkl fits, paths and cross-validations
#'
#' Methods of `ggplot2::autoplot()`, registered when `ggplot2` is installed; each returns a
#' `ggplot` object, which can be modified like any other.
#'
#' * A fit (`"mkl"`), `type = "weights"`: the weights of the `top` selected kernels of largest
#'   weight, coloured by kernel family (a multiclass fit: one panel per binary problem);
#'   `type = "history"`: the relative duality gap (log scale) and the number of active kernels
#'   against time, when the solver recorded them.
#' * A path (`"mkl_path"`), `type = "weights"`: the weight of each kernel along C (log scale),
#'   for the `top` kernels of largest weight at some C (a multiclass path: one panel per
#'   binary problem); `type = "error"`: the training error (classification) or RMSE
#'   (regression) and the number of kernels selected along C.
#' * A cross-validation (`"cv.mkl"`): the mean held-out loss along C (log scale) with error
#'   bars of one standard error, and `C.min` (dashed) and `C.1se` (dotted) marked.
#'
#' @param object an `"mkl"` or `"mkl_multi"` fit, an `"mkl_path"` or a `"cv.mkl"` object.
#' @param type what to plot (see Details).
#' @param top at most this many kernels are shown.
#' @param ... unused.
#' @return A `ggplot` object.
#' @examples
#' if (requireNamespace("ggplot2", quietly = TRUE)) {
#'   set.seed(4)
#'   x <- matrix(rnorm(300), 100)
#'   y <- ifelse(x[, 1]^2 + x[, 2] > 1, 1, -1)
#'   ks <- kernel_set(rbf_kernel(c(0.5, 2)), linear_kernel(), features = c("all", "each"))
#'   cv <- cv.mkl(x, y, kernels = ks, method = "simple", C = c(100, 10, 1, 0.1), nfolds = 3)
#'   ggplot2::autoplot(cv)
#'   ggplot2::autoplot(cv$fit)
#'   ggplot2::autoplot(cv$fit$fits[[2]])
#' }
#' @name autoplot.mkl
NULL

# The `top` rows of a tidy kernel table by weight, the kernel a factor in that order.
top_kernels <- function(tab, top) {
  top <- check_count(top, "top")
  keep <- unique(tab$kernel[order(-tab$weight)][seq_len(min(top, nrow(tab)))])
  tab <- tab[tab$kernel %in% keep, , drop = FALSE]
  tab$kernel <- factor(tab$kernel, levels = rev(keep))
  tab
}

#' @rdname autoplot.mkl
#' @method autoplot mkl
autoplot.mkl <- function(object, type = c("weights", "history"), top = 30L, ...) {
  type <- match_arg(type)
  if (type == "history") return(autoplot_history(object))
  multi <- inherits(object, "mkl_multi")
  tab <- as.data.frame(if (multi) tidy.mkl_multi(object, norms = FALSE, selected = TRUE) else
    tidy.mkl(object, norms = FALSE, selected = TRUE))
  tab$family[is.na(tab$family)] <- "precomputed"
  if (multi) {
    tab <- do.call(rbind, lapply(split(tab, tab$problem), top_kernels, top = top))
    tab$kernel <- factor(as.character(tab$kernel), levels = rev(unique(
      as.character(tab$kernel[order(-tab$weight)]))))
  } else tab <- top_kernels(tab, top)
  p <- ggplot2::ggplot(tab, ggplot2::aes(x = .data$weight, y = .data$kernel,
                                         fill = .data$family)) +
    ggplot2::geom_col() +
    ggplot2::labs(x = "kernel weight", y = NULL, fill = "family",
                  title = sprintf("%s: %d of %d kernels selected", object$method,
                                  n_selected(object), object$M))
  if (multi) p <- p + ggplot2::facet_wrap(ggplot2::vars(.data$problem), scales = "free_y")
  p
}

#' @rdname autoplot.mkl
#' @method autoplot mkl_multi
autoplot.mkl_multi <- autoplot.mkl

# The relative duality gap and the active kernels against time (a binary or regression fit).
autoplot_history <- function(object) {
  if (inherits(object, "mkl_multi"))
    stop("type = \"history\" is for a binary or regression fit: plot one of object$fits",
         call. = FALSE)
  h <- object$history
  ok <- !is.na(h$gap) & h$gap > 0
  if (nrow(h) < 2L || !any(ok))
    stop("this fit recorded no iteration history to plot", call. = FALSE)
  d <- rbind(data.frame(time = h$time[ok], value = h$gap[ok], what = "relative duality gap"),
             data.frame(time = h$time, value = h$n_active, what = "active kernels"))
  d <- d[!is.na(d$value), , drop = FALSE]
  ggplot2::ggplot(d, ggplot2::aes(x = .data$time, y = .data$value)) +
    ggplot2::geom_line() + ggplot2::geom_point(size = 1) +
    ggplot2::facet_wrap(ggplot2::vars(.data$what), scales = "free_y") +
    ggplot2::labs(x = "time (s)", y = NULL, title = sprintf("%s: iteration history",
                                                           object$method))
}

#' @rdname autoplot.mkl
#' @method autoplot mkl_path
autoplot.mkl_path <- function(object, type = c("weights", "error"), top = 10L, ...) {
  type <- match_arg(type)
  if (type == "error") {
    tab <- summary.mkl_path(object)$table
    err <- if ("error" %in% names(tab)) "training error" else "training RMSE"
    d <- rbind(data.frame(C = tab$C, value = if ("error" %in% names(tab)) tab$error else tab$rmse,
                          what = err),
               data.frame(C = tab$C, value = tab$kernels, what = "kernels selected"))
    return(ggplot2::ggplot(d, ggplot2::aes(x = .data$C, y = .data$value)) +
             ggplot2::geom_line() + ggplot2::geom_point() + ggplot2::scale_x_log10() +
             ggplot2::facet_wrap(ggplot2::vars(.data$what), scales = "free_y") +
             ggplot2::labs(x = "C", y = NULL,
                           title = sprintf("%s: training fit along the path", object$method)))
  }
  tab <- as.data.frame(tidy.mkl_path(object, norms = FALSE))
  multi <- "problem" %in% names(tab)
  # the kernels of largest weight at some C (per binary problem)
  keep <- function(t) {
    w <- tapply(t$weight, t$kernel, max)
    w <- w[w > 0]
    t[t$kernel %in% names(w)[order(-w)][seq_len(min(top, length(w)))], , drop = FALSE]
  }
  top <- check_count(top, "top")
  tab <- if (multi) do.call(rbind, lapply(split(tab, tab$problem), keep)) else keep(tab)
  p <- ggplot2::ggplot(tab, ggplot2::aes(x = .data$C, y = .data$weight,
                                         colour = .data$kernel)) +
    ggplot2::geom_line() + ggplot2::geom_point(size = 1) + ggplot2::scale_x_log10() +
    ggplot2::labs(x = "C", y = "kernel weight", colour = "kernel",
                  title = sprintf("%s: kernel weights along the path", object$method))
  if (multi) p <- p + ggplot2::facet_wrap(ggplot2::vars(.data$problem))
  p
}

#' @rdname autoplot.mkl
#' @method autoplot cv.mkl
autoplot.cv.mkl <- function(object, ...) {
  tab <- as.data.frame(tidy.cv.mkl(object))
  marks <- data.frame(C = c(object$C.min, object$C.1se), which = c("C.min", "C.1se"))
  ggplot2::ggplot(tab, ggplot2::aes(x = .data$C, y = .data$estimate)) +
    ggplot2::geom_errorbar(ggplot2::aes(ymin = .data$conf.low, ymax = .data$conf.high),
                           colour = "grey50", width = 0.05) +
    ggplot2::geom_point(colour = "red") +
    ggplot2::geom_vline(data = marks, ggplot2::aes(xintercept = .data$C,
                                                   linetype = .data$which)) +
    ggplot2::scale_linetype_manual(values = c(C.min = "dashed", C.1se = "dotted")) +
    ggplot2::scale_x_log10() +
    ggplot2::labs(x = "C", y = object$name, linetype = NULL,
                  title = sprintf("cross-validation: %s", object$fit$method))
}
