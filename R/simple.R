# SVM-family MKL solvers: SimpleMKL, HessianMKL and lp-norm MKL (C: the driver src/svmfam.c and
# its step strategies src/simple.c, src/hessian.c, src/lpnorm.c). Binary classification with
# the hinge loss.
#
# All three minimise J(d), the optimal C-SVM dual value on K(d) = sum_m d_m K_m, over
# d >= 0 with sum(d) = 1 (simple, hessian) or ||d||_p = 1 (lp). A fit has converged when the
# relative duality gap (J(d) - [sum(a) - ||(a'YK_mYa)_m||_* / 2]) / J(d) is at most
# control$tol; the defaults of every setting are in R/control.R (.control_methods$svmfam).
# Case weights (control$case_weights) give point i the box C w_i in every SVM solve; the gap
# above holds for any alpha in these boxes.

svmfam_fit <- function(method, store, y, task, C, control, init) {
  if (!identical(task, "classification"))
    stop(sprintf("method '%s' supports classification only", method), call. = FALSE)
  if (!is.null(control$loss) && !identical(control$loss, "hinge"))
    stop(sprintf("method '%s' supports the hinge loss only", method), call. = FALSE)
  store <- as_store(store)
  check_box_C(C, store, method)
  control <- method_control(method, control)
  # the model's p: the lp exponent (2 unless given); SimpleMKL and HessianMKL live on the simplex
  p <- if (method == "lp") { if (is.null(control[["p"]])) 2 else control[["p"]] } else 1
  if (!is.numeric(p) || length(p) != 1L || is.na(p) || p < 1)
    stop("control$p must be one number >= 1", call. = FALSE)
  control$p <- as.double(p)
  # SimpleMKL's gradient screening and HessianMKL's kernel working set on a dense store
  # (src/svmfam.c; info$screened counts the v_m not computed): FALSE computes every v_m at
  # every iteration (for testing)
  control$gradient_screening <- as.integer(!isFALSE(control[["gradient_screening"]]))
  # the inner SMO's shrinking on a dense store (src/svm.c; info$smo_work counts the points its
  # selections passed over, on the low-rank store the factor rows read): FALSE passes over
  # every point (for testing)
  control$svm_shrinking <- as.integer(!isFALSE(control[["svm_shrinking"]]))
  store$nthreads <- as.integer(control$nthreads)
  dk <- store_dims(store)
  n <- dk[2L]; M <- dk[3L]
  y <- as.double(y)
  if (length(y) != n) stop("length(y) must match the kernel dimension", call. = FALSE)
  if (!all(y %in% c(-1, 1))) stop("y must be coded -1/+1", call. = FALSE)
  if (!is.null(control$case_weights)) control$case_weights <- as.double(control$case_weights)
  # on the fly: the entries of the SMO's column cache, from the budget (R/memory.R)
  control$kcache <- fit_kcache(method, store, n, M, control)
  code <- .mk_codes$svmfam[[method]]
  control["progress_fun"] <- list(fit_progress(control, method_info(method)$label))
  res <- .Call(C_svmfam, code, store, y, as.double(C), control, init)

  d <- res$weights          # simplex (simple, hessian) or unit lp sphere (lp)
  a <- res$alpha
  alpha <- outer(y * a, d)  # alpha[, m] = d_m y a: f = sum_m K_m alpha[, m] + b
  history <- as.data.frame(res$history)
  history$iteration <- as.integer(history$iteration)
  history$n_active <- as.integer(history$n_active)
  wp <- res$weights_path
  if (is_dense(store)) dimnames(wp) <- list(NULL, dimnames(store$K)[[3L]])
  reason <- code_name("svmfam_stop", res$reason)
  names(res$times) <- c("total", "svm", "gradient", "direction")
  out <- list(
    weights = d / sum(d),
    alpha = alpha,
    b = res$b,
    objective = res$objective,
    # an inner SVM that stopped at its iteration cap leaves the certificate unreliable
    converged = isTRUE(res$converged) && as.integer(res$counts[[4L]]) == 0L,
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
      smo_work = res$counts[[8L]],
      screened = res$counts[[6L]],
      hessian_flat = as.integer(res$counts[[7L]]),
      weights_path = wp,
      times = res$times,
      alpha_svm = a
    )
  )
  # HessianMKL above its free-SV limit steps without curvature, which may stall short of tol
  # (inst/notes/NOTES-svm-family.md, "Above the free-SV limit")
  flat <- out$info$hessian_flat
  if (!out$converged && flat > 0L)
    out$info$nonconvergence <- sprintf(paste0(
      "%d of %d steps had more free support vectors than the %d whose Gram matrix is formed ",
      "and were taken without curvature; the low-rank store forms it at any number ",
      "(mkl_control(store = \"lowrank\"))"), flat, out$info$hessian_evals,
      hess_free_limit(control))
  out
}

fit_simple <- function(store, y, task, C, control, init) {
  svmfam_fit("simple", store, y, task, C, control, init)
}

fit_hessian <- function(store, y, task, C, control, init) {
  svmfam_fit("hessian", store, y, task, C, control, init)
}

fit_lp <- function(store, y, task, C, control, init) {
  svmfam_fit("lp", store, y, task, C, control, init)
}
