# The stats generics on mkl fits: residuals(), deviance(), weights() (case weights),
# kernel_weights(), logLik() (Empirical Bayes only), nobs(). Every one answers or refuses with
# a reason; none returns NULL silently (weights() is NULL by definition when no case weights).

#' Residuals, deviance, likelihood and number of observations of an mkl fit
#'
#' The generics of the stats package on [mkl()] fits, for every method, binary, multiclass and
#' regression, on a [kernel_set()] or precomputed kernels.
#'
#' @section Residuals and deviance:
#' Regression (every loss): `"response"`, `"working"` and `"deviance"` residuals are all
#' \eqn{y - f(x)} (the identity link; the Gaussian deviance), and `deviance()` is the residual
#' sum of squares, as for `lm()`.
#'
#' Classification: the residuals are those of the fit's class probabilities \eqn{p} (of the
#' second class, `predict(type = "response")`: Platt's sigmoid of the decision values, or the
#' logistic link for the logistic loss), as `glm()` defines them for a binomial model with
#' \eqn{y \in \{0, 1\}}: `"response"` \eqn{y - p}, `"working"` \eqn{(y - p) / (p (1 - p))},
#' `"deviance"` \eqn{\mathrm{sign}(y - p) \sqrt{-2 \log p_y}} (\eqn{p_y} the probability of
#' the observed class). `"hinge"` (hinge-loss fits only: uniform, SpicyMKL with the hinge
#' loss, SimpleMKL, HessianMKL, lp-norm) is the hinge loss of each point,
#' \eqn{\max(0, 1 - y f(x))} with \eqn{y \in \{-1, 1\}}: zero outside the margin. It is refused
#' for other losses (their decision values are not on the scale of a unit margin, or their
#' loss is not the hinge). `deviance()` is the binomial deviance \eqn{-2 \sum \log p_y}, the
#' sum of the squared deviance residuals.
#'
#' Multiclass (`"mkl_multi"`): `"response"` residuals are the matrix of class indicators minus
#' the class probabilities (observations x classes), `"deviance"` residuals
#' \eqn{\sqrt{-2 \log p_y}} (of the coupled class probabilities), and `deviance()` the
#' multinomial deviance \eqn{-2 \sum \log p_y}; `"working"` and `"hinge"` residuals belong to
#' the binary problems (`residuals(fit$fits[[k]], type)`) and are refused. A path
#' (`"mkl_path"`) gives `deviance()` per C.
#'
#' With a formula fit made with `na.action = na.exclude`, residuals are padded with `NA` at
#' the rows dropped (as for `lm()`).
#'
#' @section Likelihood:
#' Only Empirical Bayesian MKL (`method = "bayes"`) fits a likelihood: its objective
#' (`fit$objective`) is the negative log marginal likelihood of the response (of the centred
#' response with `bias = "center"`, on the response's scale for a regression) without the
#' constant \eqn{n \log(2\pi) / 2}. `logLik()` adds the constant back:
#' \eqn{\log p(y) = -\mathrm{objective} - n \log(2\pi) / 2}. Its `df` counts the parameters
#' estimated by maximising the marginal likelihood: the kernel variances \eqn{d_m} that are
#' positive (kernels pruned to zero do not count), the noise variance \eqn{\sigma^2} unless
#' fixed by `mkl_control(sigma2 = )`, and one for the bias (the mean of the response with
#' `bias = "center"`, the variance of the constant kernel with `bias = "kernel"`). `AIC()` and
#' `BIC()` work through it. A classification fit of `"bayes"` is the same Gaussian-process
#' regression on \eqn{y \in \{-1, 1\}}, and its likelihood is that of these numbers. Every
#' other method minimises a regularised loss, not a likelihood with a known number of
#' parameters, and `logLik()` refuses it with an error, as it refuses multiclass fits (their
#' binary problems are different codings of the same labels) and paths.
#'
#' @param object an `"mkl"` fit (`"mkl_multi"`, `"mkl_path"` where said).
#' @param type the type of residuals: `"deviance"` (the default, as for `glm()`),
#'   `"response"`, `"working"` or `"hinge"`; see Residuals and deviance.
#' @param ... unused.
#' @return `residuals()`: a numeric vector (a matrix for multiclass `"response"`);
#'   `deviance()`: a number (a vector per C for a path); `logLik()`: an object of class
#'   `"logLik"` with attributes `df` and `nobs`; `nobs()`: the number of training
#'   observations used by the fit (after `na.action` and `subset`).
#' @examples
#' fit <- mkl(mpg ~ ., data = mtcars, kernels = kernel_set(rbf_kernel(c(1, 3))))
#' head(residuals(fit))
#' deviance(fit)
#' fb <- mkl(mpg ~ ., data = mtcars, kernels = kernel_set(rbf_kernel(c(1, 3))),
#'           method = "bayes")
#' logLik(fb)
#' AIC(fb)
#' @name mkl_residuals
NULL

#' @rdname mkl_residuals
#' @export
residuals.mkl <- function(object, type = c("deviance", "response", "working", "hinge"), ...) {
  type <- match_arg(type)
  f <- object$fitted
  y <- object$y
  r <- if (object$task == "regression") {
    if (type == "hinge")
      stop("type = 'hinge' is for classification fits; a regression has y - f(x)",
           call. = FALSE)
    y - f
  } else if (type == "hinge") {
    if (!identical(object$loss, "hinge"))
      stop(sprintf(paste0("type = 'hinge' is for hinge-loss fits; this fit's loss is '%s' ",
                          "(use 'deviance', 'response' or 'working')"), object$loss),
           call. = FALSE)
    pmax(0, 1 - y * f)
  } else {
    p <- predict_decision(object, f, "response")
    y01 <- as.double(y > 0)
    switch(type, response = y01 - p,
           working = (y01 - p) / pmax(p * (1 - p), .Machine$double.xmin),
           deviance = sign(y01 - p) * sqrt(-2 * log(pmax(ifelse(y > 0, p, 1 - p),
                                                         .Machine$double.xmin))))
  }
  stats::naresid(object$na.action, unname(r))
}

#' @rdname mkl_residuals
#' @export
residuals.mkl_multi <- function(object, type = c("deviance", "response", "working", "hinge"),
                                ...) {
  type <- match_arg(type)
  if (type %in% c("working", "hinge"))
    stop(sprintf(paste0("type = '%s' residuals belong to the binary problems of a multiclass ",
                        "fit: residuals(fit$fits[[k]], type = '%s')"), type, type),
         call. = FALSE)
  P <- multi_prob(object, object$fitted)
  Y <- outer(as.character(object$y), colnames(P), "==") * 1
  r <- if (type == "response") {
    dimnames(Y) <- list(NULL, colnames(P))
    Y - unname(P)
  } else sqrt(-2 * log(pmax(rowSums(Y * P), .Machine$double.xmin)))
  stats::naresid(object$na.action, r)
}

#' @rdname mkl_residuals
#' @export
deviance.mkl <- function(object, ...) {
  object$na.action <- NULL      # no padding
  sum(residuals.mkl(object, "deviance")^2)
}

#' @rdname mkl_residuals
#' @export
deviance.mkl_multi <- function(object, ...) {
  o <- object
  o$na.action <- NULL
  sum(residuals.mkl_multi(o, "deviance")^2)
}

#' @rdname mkl_residuals
#' @export
deviance.mkl_path <- function(object, ...) {
  out <- vapply(object$fits, stats::deviance, 1)
  names(out) <- format(object$C)
  out
}

#' @rdname mkl_residuals
#' @export
logLik.mkl <- function(object, ...) {
  if (!identical(object$method, "bayes"))
    stop(sprintf(paste0("logLik() needs a likelihood: method '%s' minimises a regularised ",
                        "'%s' loss, not a negative log-likelihood with a known number of ",
                        "parameters; only method = \"bayes\" (whose objective is the negative ",
                        "log marginal likelihood) has one. deviance() gives this fit's ",
                        "deviance"), object$method, object$loss), call. = FALSE)
  info <- object$info
  n <- length(object$y)
  df <- sum(info$d > 0) + (if (isTRUE(info$sigma2_fixed)) 0L else 1L) + 1L
  structure(-as.double(object$objective) - n * log(2 * pi) / 2, df = as.integer(df),
            nobs = n, class = "logLik")
}

#' @rdname mkl_residuals
#' @export
logLik.mkl_multi <- function(object, ...)
  stop(sprintf(paste0("logLik() has no likelihood for a multiclass fit: its binary problems ",
                      "(method '%s') are different codings of the same labels; ",
                      "deviance() gives the multinomial deviance"), object$method),
       call. = FALSE)

#' @rdname mkl_residuals
#' @export
logLik.mkl_path <- function(object, ...)
  stop(sprintf(paste0("logLik() has no likelihood for a path of '%s' fits over C: only ",
                      "method = \"bayes\", which has no C, has one"), object$method),
       call. = FALSE)

#' @rdname mkl_residuals
#' @export
nobs.mkl <- function(object, ...) as.integer(length(object$y))

#' @rdname mkl_residuals
#' @export
nobs.mkl_multi <- function(object, ...) as.integer(object$nobs)

#' @rdname mkl_residuals
#' @export
nobs.mkl_path <- function(object, ...) stats::nobs(object$fits[[1L]])

#' Case weights and kernel weights of an mkl fit
#'
#' `weights()` gives the case weights of the fit (the `weights` given to [mkl()]), as for
#' other R models: `NULL` when the fit has none (every observation weighs one). The kernel
#' weights that MKL learns are given by `kernel_weights()` (the same as `coef(fit)`).
#'
#' @param object an `"mkl"`, `"mkl_multi"` or `"mkl_path"` fit (`kernel_weights()`: also a
#'   [cv.mkl()] result).
#' @param nonzero keep only the kernels with non-zero weight (used by some problem, for a
#'   multiclass fit).
#' @param s for a path or a cross-validation: the value(s) of C, as for [coef.mkl()] and
#'   [coef.cv.mkl()] (default: every C of a path; `"C.min"` of a cross-validation).
#' @param ... unused.
#' @return `weights()`: a numeric vector of case weights, or `NULL`. `kernel_weights()`: the
#'   named kernel weights (a kernel-by-problem matrix for a multiclass fit; for a path, a
#'   kernel-by-C matrix, or what [coef.mkl_path()] gives).
#' @examples
#' x <- as.matrix(mtcars[, -1])
#' fit <- mkl(x, mtcars$mpg, kernels = kernel_set(rbf_kernel(c(1, 3)), linear_kernel()),
#'            method = "spicy")
#' kernel_weights(fit, nonzero = TRUE)
#' weights(fit)
#' @name kernel_weights
NULL

#' @rdname kernel_weights
#' @export
weights.mkl <- function(object, ...) object$case_weights

#' @rdname kernel_weights
#' @export
weights.mkl_multi <- weights.mkl

#' @rdname kernel_weights
#' @export
weights.mkl_path <- function(object, ...) {
  if (!is.null(object$case_weights)) object$case_weights else object$fits[[1L]]$case_weights
}

#' @rdname kernel_weights
#' @export
kernel_weights <- function(object, ...) UseMethod("kernel_weights")

#' @rdname kernel_weights
#' @export
kernel_weights.mkl <- function(object, nonzero = FALSE, ...)
  coef.mkl(object, type = "weights", nonzero = nonzero)

#' @rdname kernel_weights
#' @export
kernel_weights.mkl_multi <- function(object, nonzero = FALSE, ...)
  coef.mkl_multi(object, type = "weights", nonzero = nonzero)

#' @rdname kernel_weights
#' @export
kernel_weights.mkl_path <- function(object, s = NULL, ...)
  coef.mkl_path(object, s = s, type = "weights")

#' @rdname kernel_weights
#' @export
kernel_weights.cv.mkl <- function(object, s = "C.min", ...)
  coef.cv.mkl(object, s = s, type = "weights")
