# SVM-family MKL solvers: SimpleMKL, HessianMKL and lp-norm MKL (C code in src/simple.c,
# src/hessian.c, src/lpnorm.c). Binary classification with the hinge loss.
#
# All three minimise J(d), the optimal C-SVM dual value on K(d) = sum_m d_m K_m, over
# d >= 0 with sum(d) = 1 (simple, hessian) or ||d||_p = 1 (lp). The stopping rule is the
# relative duality gap (J(d) - [sum(a) - ||(a'YK_mYa)_m||_* / 2]) / J(d) <= control$tol.

# Control entries (defaults filled in here so that direct calls work):
#   tol          relative duality gap at which to stop (0.01, the papers' value)
#   maxiter      outer iterations (200): gradient steps / Newton steps / weight updates
#   svm_tol      KKT tolerance of the inner SMO (1e-5; use ~1e-8 for gaps below 1e-4)
#   svm_maxiter  SMO iterations per solve (1e6)
#   p            lp-norm exponent, >= 1 (2; method "lp" only)
#   nthreads     threads for the combined kernel, the gradients and the Hessian (0 = default)
#   verbose      print one line per outer iteration (FALSE)
#   newton_tol   HessianMKL also stops when the predicted decrease is below newton_tol * J
#                (reference: 1e-5 at tol = 0.01; default 1e-5 * min(1, (tol / 0.01)^2))
#   line_search  HessianMKL step length: "halving" (default: halve t from 1 while J keeps
#                decreasing, keep the best) or "first" (the reference: first t with a decrease)
#   gold_tol     SimpleMKL golden-section width relative to the largest feasible step (0.1)
#   max_time     seconds after which the outer loop stops (Inf); reported as not converged
svmfam_control <- function(control) {
  if (is.null(control)) control <- list()
  def <- list(tol = 0.01, maxiter = 200L, svm_tol = 1e-5, svm_maxiter = 1000000L,
              p = 2, nthreads = 0L, verbose = FALSE, newton_tol = 1e-5, gold_tol = 0.1,
              line_search = "halving", max_time = Inf)
  # the reference's Newton-decrement stop (1e-5 J) is tied to its gap target 0.01; tighten it
  # with tighter targets so that it does not stop HessianMKL before the gap is reached
  if (is.null(control$newton_tol) && !is.null(control$tol))
    control$newton_tol <- 1e-5 * min(1, (control$tol / 0.01)^2)
  for (nm in names(def)) if (is.null(control[[nm]])) control[[nm]] <- def[[nm]]
  control$line_search <- match.arg(control$line_search, c("halving", "first"))
  control
}

svmfam_fit <- function(method, K, y, task, C, control, init) {
  if (!identical(task, "classification"))
    stop(sprintf("method '%s' supports classification only", method), call. = FALSE)
  if (!is.null(control$loss) && !identical(control$loss, "hinge"))
    stop(sprintf("method '%s' supports the hinge loss only", method), call. = FALSE)
  control <- svmfam_control(control)
  dk <- dim(K)
  if (length(dk) == 2L) dk <- c(dk, 1L)
  n <- dk[1L]; M <- dk[3L]
  y <- as.double(y)
  if (length(y) != n) stop("length(y) must match the kernel dimension", call. = FALSE)
  if (!all(y %in% c(-1, 1))) stop("y must be coded -1/+1", call. = FALSE)
  if (!is.double(K)) storage.mode(K) <- "double"
  d0 <- rep(1 / M, M)
  a0 <- rep(0, n)
  if (!is.null(init)) {
    if (length(init$weights) == M && all(is.finite(init$weights)) &&
        all(init$weights >= 0) && sum(init$weights) > 0)
      d0 <- as.double(init$weights)
    if (length(init$alpha_svm) == n && all(is.finite(init$alpha_svm)))
      a0 <- as.double(init$alpha_svm)
  }
  # SimpleMKL / HessianMKL work on the simplex; lp normalises to ||d||_p = 1 in C.
  if (method != "lp") d0 <- d0 / sum(d0)
  code <- c(simple = 0L, hessian = 1L, lp = 2L)[[method]]
  p <- if (method == "lp") as.double(control$p) else 1
  if (!(p >= 1)) stop("control$p must be >= 1", call. = FALSE)
  dpar <- c(control$tol, control$svm_tol, p, control$newton_tol, control$gold_tol,
            if (is.finite(control$max_time)) control$max_time else .Machine$double.xmax)
  ipar <- c(as.integer(control$maxiter), as.integer(min(control$svm_maxiter, .Machine$integer.max)),
            as.integer(control$nthreads), as.integer(isTRUE(control$verbose)),
            match(control$line_search, c("first", "halving")) - 1L)
  storage.mode(dpar) <- "double"
  res <- switch(code + 1L,
    .Call(C_simple, K, y, as.double(C), d0, a0, dpar, ipar),
    .Call(C_hessian, K, y, as.double(C), d0, a0, dpar, ipar),
    .Call(C_lpnorm, K, y, as.double(C), d0, a0, dpar, ipar))

  d <- res$weights          # simplex (simple, hessian) or unit lp sphere (lp)
  a <- res$alpha
  alpha <- outer(y * a, d)  # alpha[, m] = d_m y a: f = sum_m K_m alpha[, m] + b
  h <- res$history
  colnames(h) <- c("iteration", "time", "objective", "gap", "n_active",
                   "svm_solves", "grad_evals", "hessian_evals", "step")
  history <- as.data.frame(h)
  history$iteration <- as.integer(history$iteration)
  history$n_active <- as.integer(history$n_active)
  wp <- res$weights_path
  dimnames(wp) <- list(NULL, dimnames(K)[[3L]])
  reason <- c("gap", "limit", "stalled", "newton_decrement")[res$reason + 1L]
  names(res$times) <- c("total", "svm", "gradient", "direction")
  list(
    weights = d / sum(d),
    alpha = alpha,
    b = res$b,
    objective = res$objective,
    converged = res$converged,
    iterations = res$iterations,
    history = history,
    state = list(alpha_svm = a, weights = d),
    info = list(
      method = method,
      p = p,
      weights_raw = d,               # for lp: the weights with ||d||_p = 1 that define K(d)
      gap = res$gap,
      stop_reason = reason,
      svm_solves = as.integer(res$counts[[1L]]),
      grad_evals = as.integer(res$counts[[2L]]),
      hessian_evals = as.integer(res$counts[[3L]]),
      svm_maxiter_hits = as.integer(res$counts[[4L]]),
      smo_iterations = res$counts[[5L]],
      weights_path = wp,
      times = res$times,
      alpha_svm = a
    )
  )
}

fit_simple <- function(K, y, task, C, control, init) {
  svmfam_fit("simple", K, y, task, C, control, init)
}

fit_hessian <- function(K, y, task, C, control, init) {
  svmfam_fit("hessian", K, y, task, C, control, init)
}

fit_lp <- function(K, y, task, C, control, init) {
  svmfam_fit("lp", K, y, task, C, control, init)
}
