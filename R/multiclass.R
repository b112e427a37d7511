# Multiclass classification for every method, built on the binary solvers: one-vs-rest (a
# binary problem per class, on all the rows) or one-vs-one (a binary problem per pair of
# classes, on the rows of the pair). Every binary problem reads the one kernel store that mkl()
# built: one-vs-rest passes it as it is; one-vs-one passes the principal submatrix of the pair's
# rows (a dense store: the rows and columns of the array copied, no kernel evaluated; a store on
# the fly: the pair's rows of the data and of the training normalisation). The kernels keep the
# normalisation of all the training data, so every binary fit lives on the same kernels, C is
# converted with the same kernel scale, and predict() builds the test kernels with the same
# statistics for every problem. A one-vs-one fit keeps its coefficients on all the training
# rows (zero outside the pair), so it predicts like any binary fit.

check_multiclass <- function(multiclass, given) {
  if (!given) return("ovr")
  if (!is.character(multiclass) || length(multiclass) != 1L || is.na(multiclass) ||
      !(multiclass %in% c("ovr", "ovo")))
    stop("'multiclass' must be \"ovr\" (one-vs-rest) or \"ovo\" (one-vs-one)", call. = FALSE)
  multiclass
}

# The binary problems: name, positive and negative class, rows (NULL: all), y coded -1/+1
# (+1: the positive class), and how warnings name the problem.
multiclass_problems <- function(y, scheme) {
  lv <- levels(y)
  if (scheme == "ovr")
    return(lapply(lv, function(k)
      list(name = k, positive = k, negative = paste("not", k), rows = NULL,
           y = ifelse(y == k, 1, -1), what = sprintf(" (class '%s' against the rest)", k))))
  pairs <- utils::combn(length(lv), 2L)
  lapply(seq_len(ncol(pairs)), function(j) {
    a <- lv[pairs[1L, j]]
    b <- lv[pairs[2L, j]]
    rows <- which(y == a | y == b)
    list(name = paste(a, "vs", b), positive = a, negative = b, rows = rows,
         y = ifelse(y[rows] == a, 1, -1), what = sprintf(" (class '%s' against '%s')", a, b))
  })
}

# The store of the rows 'rows' (a principal submatrix of every kernel), with the normalisation
# of the full training data.
subset_store <- function(store, rows) {
  M <- store_dims(store)[3L]
  if (is_dense(store))
    return(structure(list(kind = .mk_codes$store[["dense"]],
                          K = store$K[rows, rows, , drop = FALSE],
                          nthreads = store$nthreads, neighbours = neighbour_cache(M)),
                     class = "mk_store"))
  st <- store
  if (store$kind == .mk_codes$store[["lowrank"]]) {   # the factors' rows
    st$G <- store$G[rows, , drop = FALSE]
    st$diag_mean <- NULL
    st$neighbours <- neighbour_cache(M)   # as on the fly: the memo of all the rows is not theirs
    return(st)
  }
  st$x <- store$x[rows, , drop = FALSE]
  if (!is.null(store$colmeans)) st$colmeans <- store$colmeans[rows, , drop = FALSE]
  st$diag_mean <- NULL
  st$neighbours <- neighbour_cache(M)   # the pair's rows: not the memo of all the rows
  st
}

# One binary problem along the C path: a list of "mkl" fits (one per C).
fit_multiclass_problem <- function(pb, fitfun, store, C, ctl, base, cl, t_kernels, tick) {
  b <- base
  b$y <- pb$y
  b$classes <- factor(c(pb$negative, pb$positive), levels = c(pb$negative, pb$positive))
  warm <- fold_warm_state(pb$name, base$labels)   # inside cv.mkl()'s folds (R/cv.R)
  if (is.null(pb$rows))
    return(fit_store_path(fitfun, store, pb$y, C, ctl, b, warm, cl, t_kernels, pb$what, tick,
                          quiet = TRUE))
  b$nobs <- length(pb$rows)
  if (!is.null(ctl$case_weights)) {     # the pair's rows of the case weights
    ctl$case_weights <- ctl$case_weights[pb$rows]
    b$case_weights <- ctl$case_weights
  }
  fits <- fit_store_path(fitfun, subset_store(store, pb$rows), pb$y, C, ctl, b, warm, cl,
                         t_kernels, pb$what, tick, quiet = TRUE)
  lapply(fits, function(f) {
    if (is_outer_alpha(f$alpha)) {
      u <- numeric(base$nobs)
      u[pb$rows] <- f$alpha$u
      f$alpha$u <- u
    } else {
      a <- matrix(0, base$nobs, ncol(f$alpha), dimnames = list(NULL, colnames(f$alpha)))
      a[pb$rows, ] <- f$alpha
      f$alpha <- a
    }
    f$nobs <- base$nobs
    f$rows <- pb$rows
    f
  })
}

# The multiclass fit (or path) on the store mkl() built. The binary problems run one after the
# other on the shared store; on a store computed on the fly (small: the data and the kernel
# description) they run through future.apply when the plan has several workers.
fit_multiclass <- function(fitfun, store, yc, C, ctl, base, cl, t_kernels, scheme) {
  probs <- multiclass_problems(yc$y, scheme)
  tick <- mk_progressor(length(probs) * length(C))
  if (!is_dense(store) && length(probs) > 1L && parallel_workers() > 1) {
    if (ctl$nthreads == 0L) ctl$nthreads <- 1L     # one thread per worker unless set
    # (a call object among the arguments would be evaluated on the worker: the fits get the
    # call back here)
    res <- mk_lapply(probs, fit_multiclass_problem, fitfun = fitfun, store = store, C = C,
                     ctl = ctl, base = base, cl = NULL, t_kernels = t_kernels, tick = tick)
    res <- lapply(res, lapply, function(f) {
      f$call <- cl
      f
    })
  } else
    res <- lapply(probs, fit_multiclass_problem, fitfun = fitfun, store = store, C = C,
                  ctl = ctl, base = base, cl = cl, t_kernels = t_kernels, tick = tick)
  fits <- lapply(seq_along(C), function(k) {
    fk <- lapply(res, `[[`, k)
    names(fk) <- vapply(probs, `[[`, "", "name")
    new_mkl_multi(fk, probs, store, base, scheme, cl, t_kernels)
  })
  if (length(C) == 1L) return(fits[[1L]])
  structure(list(call = cl, method = base$method, C = C, fits = fits), class = "mkl_path")
}

new_mkl_multi <- function(fits, probs, store, base, scheme, cl, t_kernels) {
  n <- base$nobs
  # training decision values of every problem on every training row (as predict() gives them);
  # not for a fold fit of cv.mkl(), which gives held-out decision values only (R/cv.R)
  Fm <- NULL
  if (.fold_fit$check) {
    Fm <- vapply(fits, function(f) {
      if (is.null(f$rows)) return(as.double(f$fitted))
      train_decision(store, f$alpha, active_kernels(f), base$kernel_info, f$b)
    }, numeric(n))
    Fm <- matrix(Fm, n, length(fits), dimnames = list(NULL, names(fits)))
  }
  W <- vapply(fits, `[[`, numeric(base$M), "weights")
  W <- matrix(W, base$M, length(fits), dimnames = list(base$labels, names(fits)))
  problems <- data.frame(problem = names(fits),
                         positive = vapply(probs, `[[`, "", "positive"),
                         negative = vapply(probs, `[[`, "", "negative"),
                         n = vapply(probs, function(p) length(p$y), 1L),
                         stringsAsFactors = FALSE)
  structure(list(call = cl, method = base$method, task = "classification", multiclass = scheme,
                 loss = base$loss, penalty = base$penalty, lambda = base$lambda, p = base$p,
                 C = fits[[1L]]$C, classes = base$classes, problems = problems, fits = fits,
                 weights = W, converged = all(vapply(fits, `[[`, TRUE, "converged")),
                 iterations = sum(vapply(fits, `[[`, 1L, "iterations")),
                 objective = sum(vapply(fits, function(f) as.double(f$objective)[1L], 1)),
                 fitted = Fm, y = base$y, nobs = n, case_weights = base$case_weights,
                 class_weights = base$class_weights, M = base$M, labels = base$labels,
                 p_x = base$p_x, xnames = base$xnames, store = base$store,
                 kernels = base$kernels, kscale = base$kscale,
                 timing = c(kernels = t_kernels,
                            fit = sum(vapply(fits, function(f) f$timing[["fit"]], 1)))),
            class = "mkl_multi")
}

# ------------------------------------------------------------------ predictions

multi_link <- function(object, newx, newkernels) {
  if (is.null(newx) && is.null(newkernels)) return(object$fitted)
  if (!is.null(newx)) newx <- formula_newx(object, newx)
  Fm <- lapply(object$fits, function(f) predict.mkl(f, newx, type = "link",
                                                    newkernels = newkernels))
  out <- matrix(unlist(Fm, use.names = FALSE), ncol = length(Fm),
                dimnames = list(names(Fm[[1L]]), names(object$fits)))
  out
}

# Classes from the decision values: one-vs-rest, the largest decision value; one-vs-one, the
# most votes (a positive decision value votes for the pair's first class), ties broken by the
# sum of the decision values in favour of each class, then by the order of the levels.
multi_class <- function(object, Fm) {
  lv <- levels(object$classes)
  if (object$multiclass == "ovr") {
    idx <- max.col(Fm, ties.method = "first")
  } else {
    pos <- match(object$problems$positive, lv)
    neg <- match(object$problems$negative, lv)
    votes <- score <- matrix(0, nrow(Fm), length(lv))
    for (b in seq_along(pos)) {
      w <- Fm[, b] > 0
      votes[, pos[b]] <- votes[, pos[b]] + w
      votes[, neg[b]] <- votes[, neg[b]] + !w
      score[, pos[b]] <- score[, pos[b]] + Fm[, b]
      score[, neg[b]] <- score[, neg[b]] - Fm[, b]
    }
    score[votes < apply(votes, 1L, max)] <- -Inf
    idx <- max.col(score, ties.method = "first")
  }
  out <- factor(lv[idx], levels = lv)
  names(out) <- rownames(Fm)
  out
}

# Class probabilities from the binary probabilities (each binary fit's Platt sigmoid, or the
# logistic link): one-vs-rest, normalised to sum one; one-vs-one, pairwise coupling.
multi_prob <- function(object, Fm) {
  lv <- levels(object$classes)
  Pb <- Fm
  for (b in seq_along(object$fits)) {
    pl <- object$fits[[b]]$platt
    Pb[, b] <- stats::plogis(pl[["A"]] * Fm[, b] + pl[["B"]])
  }
  if (object$multiclass == "ovr") {
    P <- Pb / pmax(rowSums(Pb), .Machine$double.xmin)
  } else {
    P <- couple_pairs(Pb, match(object$problems$positive, lv),
                      match(object$problems$negative, lv), length(lv))
  }
  dimnames(P) <- list(rownames(Fm), lv)
  P
}

# Pairwise coupling (Wu, Lin and Weng 2004, their second method): given r[, b], the probability
# that the pair's first class (pos[b]) wins against its second (neg[b]), the class
# probabilities p minimise sum_a sum_{c != a} (r_ca p_a - r_ac p_c)^2 subject to sum(p) = 1, a
# (K + 1) x (K + 1) linear system per row.
couple_pairs <- function(r, pos, neg, K) {
  r <- pmin(pmax(r, 1e-7), 1 - 1e-7)
  out <- matrix(0, nrow(r), K)
  rhs <- c(rep(0, K), 1)
  for (i in seq_len(nrow(r))) {
    R <- matrix(0, K, K)            # R[a, c]: the probability that a wins against c
    R[cbind(pos, neg)] <- r[i, ]
    R[cbind(neg, pos)] <- 1 - r[i, ]
    Q <- -t(R) * R
    diag(Q) <- colSums(R^2)
    p <- solve(rbind(cbind(Q, 1), c(rep(1, K), 0)), rhs)[seq_len(K)]
    p <- pmax(p, 0)
    out[i, ] <- p / sum(p)
  }
  out
}

# ------------------------------------------------------------------ S3 methods

#' Multiclass mkl fits
#'
#' With a response of more than two classes (a factor, or a character vector), [mkl()] fits
#' one binary model per class against the rest (`multiclass = "ovr"`, the default) or per pair
#' of classes (`"ovo"`), with any classification method, and returns an `"mkl_multi"` object
#' (or, for a vector `C`, an `"mkl_path"` of them). These are its methods.
#'
#' Every binary problem has its own kernel weights; all of them use the kernel store built
#' once by [mkl()] (see "Multiclass" there). `fits` holds the binary `"mkl"` fits, named by
#' problem (one-vs-rest: the class; one-vs-one: `"a vs b"`, whose positive class is `a`);
#' `problems` describes them (`positive`, `negative`, `n` rows); `weights` is the kernel-by-
#' problem weight matrix; `fitted` the training decision values (observations x problems);
#' `converged` is `TRUE` when every binary fit converged.
#'
#' @param object,x an `"mkl_multi"` fit.
#' @param newx,newdata new data as for [predict.mkl()]; neither: the training data.
#' @param type for `predict`: `"class"` (a factor with the training levels), `"link"` (the
#'   decision values, observations x problems), `"response"` or `"prob"` (the same: class
#'   probabilities,
#'   observations x classes: one-vs-rest, each class's binary probability normalised to sum
#'   one; one-vs-one, the pairwise probabilities coupled by the second method of Wu, Lin and
#'   Weng (2004)). The binary probabilities come from each fit's Platt sigmoid (hinge loss) or
#'   logistic link. One-vs-rest classes go to the largest decision value; one-vs-one classes
#'   to the most pairwise votes, ties broken by the sum of the decision values in favour of
#'   each class. The class with the largest probability may differ from `"class"` in rare
#'   cases. For `coef`: `"weights"` (kernels x problems), `"alpha"` (a list of n x M sample
#'   coefficient matrices) or `"bias"` (one per problem).
#' @param newkernels for precomputed kernels: the test-by-train kernels of all training rows.
#' @param na.action rows of the new data with missing values, as for [predict.mkl()].
#' @param nonzero for `coef`: keep only the kernels some problem uses.
#' @param top at most this many kernels are printed or plotted (those of largest weight).
#' @param digits significant digits.
#' @param ... nothing (an error for `predict`).
#' @return `predict`: a factor or a matrix; `coef`: a matrix (or list); `summary`: an object
#'   of class `"summary.mkl_multi"` with one row per binary problem (`kernels` selected,
#'   `converged`, `iterations`, `gap`, binary training `error`), the weight matrix, the
#'   training error and confusion table; `print` and `plot`: `x`, invisibly.
#' @examples
#' ks <- kernel_set(rbf_kernel(c(0.5, 2)), linear_kernel(), features = c("all", "each"))
#' fit <- mkl(Species ~ ., data = iris, kernels = ks, method = "simple")
#' fit
#' coef(fit, nonzero = TRUE)
#' table(predict(fit, iris), iris$Species)
#' head(predict(fit, iris, type = "response"))
#' @name mkl_multi
NULL

#' @rdname mkl_multi
#' @export
predict.mkl_multi <- function(object, newx, type = c("class", "link", "response", "prob"),
                              newkernels = NULL, newdata = NULL, na.action = stats::na.pass,
                              ...) {
  check_dots_empty(list(...), "predict()")
  newx <- newx_or_newdata(if (missing(newx)) NULL else newx, newdata)
  type <- match_arg(type)
  if (!is.null(newx) && !is.null(object$fits[[1L]]$x)) {
    newx <- formula_newx(object, newx)
    if (!all_complete(newx))
      return(predict_complete(newx, na.action, function(z)
        predict.mkl_multi(object, z, type = type, na.action = na.action)))
  }
  Fm <- multi_link(object, newx, newkernels)
  out <- switch(type, link = Fm, class = multi_class(object, Fm),
                response = , prob = multi_prob(object, Fm))
  if (is.null(newx) && is.null(newkernels)) stats::napredict(object$na.action, out) else out
}

#' @export
fitted.mkl_multi <- function(object, ...) stats::napredict(object$na.action, object$fitted)

#' @rdname mkl_multi
#' @export
coef.mkl_multi <- function(object, type = c("weights", "alpha", "bias"), nonzero = FALSE,
                           ...) {
  type <- match_arg(type)
  switch(type,
         weights = if (nonzero) object$weights[rowSums(object$weights > 0) > 0, , drop = FALSE]
                   else object$weights,
         alpha = lapply(object$fits, coef, type = "alpha", nonzero = nonzero),
         bias = vapply(object$fits, `[[`, 1, "b"))
}

# The kernels used by some problem, the largest first, at most 'top'.
multi_top_weights <- function(W, top) {
  W <- W[rowSums(W > 0) > 0, , drop = FALSE]
  utils::head(W[order(-apply(W, 1L, max)), , drop = FALSE], top)
}

multi_scheme_label <- function(x)
  sprintf("%s, %d binary problems", if (x$multiclass == "ovr") "one-vs-rest" else "one-vs-one",
          length(x$fits))

# A weight table with "." for kernels a problem does not use.
format_weights <- function(W, digits) {
  out <- formatC(W, digits = digits, format = "fg")
  out[W <= 0] <- "."
  noquote(out)
}

#' @rdname mkl_multi
#' @export
print.mkl_multi <- function(x, digits = max(3L, getOption("digits") - 3L), top = 10L, ...) {
  cat("\nCall:  ", paste(deparse(x$call), sep = "\n", collapse = "\n"), "\n\n", sep = "")
  cat(sprintf("Multiclass multiple kernel learning: method '%s' (%s), loss '%s'\n", x$method,
              multi_scheme_label(x), x$loss))
  tab <- table(x$y)
  cat(sprintf("Data: %d observations%s, %d classes (%s); C = %s\n", x$nobs,
              if (is.na(x$p_x)) ", precomputed kernels" else paste0(" x ", x$p_x, " features"),
              length(tab), paste(names(tab), tab, collapse = ", "), format(x$C, digits = digits)))
  print_dropped(x$na.action)
  conv <- vapply(x$fits, `[[`, TRUE, "converged")
  cat(if (all(conv)) sprintf("Converged: yes (all %d binary fits)\n", length(conv)) else
    sprintf("Converged: NO for %d of %d binary fits (%s)\n", sum(!conv), length(conv),
            paste(names(conv)[!conv], collapse = ", ")))
  for (kind in c("learned_nothing", "degenerate")) {
    bad <- names(x$fits)[vapply(x$fits, fit_flag, TRUE, kind)]
    if (length(bad))
      cat(sprintf("NOTE: %d binary fit(s) %s: %s (print the fit in 'fits' for why)\n",
                  length(bad), if (kind == "degenerate") "generalise nothing or overfit" else
                    "learned nothing", paste(bad, collapse = ", ")))
  }
  used <- rowSums(x$weights > 0) > 0
  cat(sprintf("Kernels used: %d of %d (per problem: %s)\n", n_selected(x), x$M,
              paste(vapply(x$fits, n_selected, 1L), collapse = ", ")))
  if (any(used)) {
    cat(sprintf("\nKernel weights by %s ('.': not used)%s:\n",
                if (x$multiclass == "ovr") "class" else "pair of classes",
                if (sum(used) > top) sprintf(", the %d largest", top) else ""))
    print(format_weights(multi_top_weights(x$weights, top), digits))
  }
  cat("\n")
  invisible(x)
}

#' @rdname mkl_multi
#' @export
summary.mkl_multi <- function(object, ...) {
  last_gap <- function(f) {
    g <- utils::tail(f$history$gap, 1L)
    if (length(g)) as.double(g) else NA_real_
  }
  tab <- data.frame(problem = names(object$fits), n = object$problems$n,
                    kernels = vapply(object$fits, function(f) as.double(n_selected(f)), 1),
                    converged = vapply(object$fits, `[[`, TRUE, "converged"),
                    iterations = vapply(object$fits, `[[`, 1L, "iterations"),
                    gap = vapply(object$fits, last_gap, 1),
                    error = vapply(object$fits, fit_train_error, 1),
                    stringsAsFactors = FALSE)
  rownames(tab) <- NULL
  pred <- multi_class(object, object$fitted)
  structure(list(call = object$call, method = object$method, scheme = multi_scheme_label(object),
                 loss = object$loss, C = object$C, nobs = object$nobs, M = object$M,
                 problems = tab, weights = object$weights,
                 train = c(error = mean(pred != object$y)),
                 confusion = table(predicted = pred, truth = object$y), timing = object$timing,
                 na.action = object$na.action),
            class = "summary.mkl_multi")
}

#' @export
print.summary.mkl_multi <- function(x, digits = max(3L, getOption("digits") - 3L), top = 20L,
                                    ...) {
  cat("\nCall:  ", paste(deparse(x$call), sep = "\n", collapse = "\n"), "\n\n", sep = "")
  cat(sprintf("Method '%s' (%s, loss '%s'), C = %s, %d observations, %d kernels\n",
              x$method, x$scheme, x$loss, format(x$C, digits = digits), x$nobs, x$M))
  print_dropped(x$na.action)
  cat(sprintf("Kernel build %.3g s, binary fits %.3g s in all\n", x$timing[["kernels"]],
              x$timing[["fit"]]))
  cat("\nBinary problems (error: binary training error):\n")
  print(x$problems, digits = digits, row.names = FALSE)
  nc <- sum(!x$problems$converged)
  if (nc) cat(sprintf("%d of %d binary fits did NOT converge\n", nc, nrow(x$problems)))
  cat(sprintf("\nTraining error: %.4g\n", x$train[["error"]]))
  print(x$confusion)
  used <- sum(rowSums(x$weights > 0) > 0)
  cat(sprintf("\nKernels used (%d of %d) and their weight per problem ('.': not used):\n",
              used, x$M))
  if (used) print(format_weights(multi_top_weights(x$weights, top), digits))
  if (used > top) cat(sprintf("... and %d more\n", used - top))
  invisible(x)
}

#' @rdname mkl_multi
#' @export
plot.mkl_multi <- function(x, top = 20L, ...) {
  W <- multi_top_weights(x$weights, top)
  if (!nrow(W)) {
    message("no problem uses any kernel")
    return(invisible(x))
  }
  W <- W[rev(seq_len(nrow(W))), , drop = FALSE]
  op <- graphics::par(mar = c(4, max(4, min(20, max(nchar(rownames(W))) * 0.55)), 3, 1))
  on.exit(graphics::par(op))
  graphics::barplot(t(W), beside = TRUE, horiz = TRUE, las = 1, cex.names = 0.7,
                    col = seq_len(ncol(W)) + 1L, xlab = "kernel weight",
                    legend.text = colnames(W), args.legend = list(cex = 0.7),
                    main = sprintf("%s (%s): kernel weights", x$method,
                                   if (x$multiclass == "ovr") "one-vs-rest" else "one-vs-one"),
                    ...)
  invisible(x)
}
