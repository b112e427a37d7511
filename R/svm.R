#' The inner SVM: SMO on a precomputed kernel
#'
#' Solves the C-SVM dual \eqn{\max_a \sum_i a_i - \frac12 a^\top Y K Y a},
#' \eqn{0 \le a_i \le C_i}, \eqn{y^\top a = 0} by sequential minimal optimisation with the
#' second-order working-set selection of Fan, Chen and Lin (2005), in C. It is the inner
#' solver of SimpleMKL, HessianMKL and lp-norm MKL, exposed for checking and reuse.
#'
#' @param K an n x n kernel matrix (symmetric positive semidefinite).
#' @param y labels in \{-1, +1\}.
#' @param C the box constant, or one box per point (non-negative, not all zero: case weights
#'   times C, as [mkl()] uses them; a point of box 0 is left out).
#' @param alpha optional warm start (projected onto the feasible set if needed).
#' @param tol KKT tolerance (maximal violating pair).
#' @param maxiter maximum number of SMO iterations.
#' @return A list: `alpha`, `b` (decision function \eqn{\sum_i a_i y_i K(x, x_i) + b}),
#'   `objective` (the dual value), `violation` (KKT violation at exit), `iterations`,
#'   `converged`.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(80), 40)
#' y <- ifelse(x[, 1] + x[, 2] > 0, 1, -1)
#' K <- exp(-as.matrix(dist(x))^2 / 2)
#' s <- svm_smo(K, y, C = 1)
#' s$objective
#' @export
svm_smo <- function(K, y, C = 1, alpha = NULL, tol = 1e-6, maxiter = 10000000L) {
  if (!is.matrix(K) || !is.numeric(K) || nrow(K) != ncol(K))
    stop("'K' must be a square numeric matrix", call. = FALSE)
  n <- nrow(K)
  if (!is.numeric(y) || length(y) != n || !all(y %in% c(-1, 1)))
    stop("'y' must be a vector of -1/+1 labels, one per row of 'K'", call. = FALSE)
  if (length(unique(y)) < 2L) stop("'y' has a single class", call. = FALSE)
  if (length(C) == n && n > 1L) {
    if (!is.numeric(C) || anyNA(C) || any(!is.finite(C)) || any(C < 0) || !any(C > 0))
      stop("a box per point 'C' must be finite, non-negative and not all zero", call. = FALSE)
    C <- as.double(C)
  } else C <- check_scalar(C, "C", 0, lower_open = TRUE)
  tol <- check_scalar(tol, "tol", 0, lower_open = TRUE)
  maxiter <- check_count(maxiter, "maxiter")
  if (is.null(alpha)) alpha <- numeric(n)
  if (!is.numeric(alpha) || length(alpha) != n || anyNA(alpha))
    stop("'alpha' must be a numeric vector of length nrow(K)", call. = FALSE)
  storage.mode(K) <- "double"
  .Call(C_smo, K, as.double(y), C, as.double(alpha), tol, maxiter)
}

# The box constant C / kscale (R/cscale.R) of a store whose kernels are all zero on the training
# data (mean diagonal 0; a positive semidefinite kernel with a zero diagonal is zero) is
# infinite, and the SMO would run to its iteration cap on an unbounded dual: refuse it at once.
check_box_C <- function(C, store, method) {
  if (is.finite(C)) return(invisible(C))
  if (!(kernel_scale(store) > 0))
    stop(sprintf(paste0("every training kernel is zero (all diagonal entries are 0): method '%s' ",
                        "has nothing to learn from; check the precomputed kernels"), method),
         call. = FALSE)
  stop(sprintf("method '%s' needs a finite C", method), call. = FALSE)
}
