# The uniform combination: d_m = 1/M, one SVM (hinge) or one kernel ridge fit (squared).
# Progress (control$progress) in two steps: the combined kernel (half), then the solve.
# Case weights (control$case_weights): the SVM's box C w_i per point, the ridge's squared
# residuals weighted by w_i (rows of weight 0 left out of the system, their beta 0).
# On the fly both read K(d) through the column cache (src/kcache.c), never formed: the SVM's
# columns, the ridge's products in CG (src/uniform.c; a CG stopped at cg_maxiter warns).
fit_uniform <- function(store, y, task, C, control, init) {
  store <- as_store(store)
  control <- method_control("uniform", control)
  store$nthreads <- control$nthreads
  check_box_C(C, store, "uniform")
  M <- store_dims(store)[3L]
  n <- length(y)
  w <- control$case_weights
  if (!is.null(w) && length(w) != n) stop("length(case_weights) must equal length(y)")
  d <- rep(1 / M, M)
  prog <- fit_progress(control, method_info("uniform")$label)
  t0 <- proc.time()[["elapsed"]]
  lr <- store$kind == .mk_codes$store[["lowrank"]]
  kc <- fit_kcache("uniform", store, n, M, control, task)
  # K(d) v: the combined kernel (dense), or kernel by kernel in O(n) memory (fly SVM)
  Kc <- if (!lr && kc == 0L) .Call(C_store_combine, store, d)
  Kv <- if (is.null(Kc)) function(v) drop(.Call(C_store_mv, store, NULL, as.double(v)) %*% d) else
    function(v) drop(Kc %*% v)
  if (!is.null(prog)) prog(0.5)
  if (task == "classification") {
    a0 <- if (!is.null(init$alpha_svm) && length(init$alpha_svm) == n) init$alpha_svm else
      numeric(n)
    box <- if (is.null(w)) C else C * w
    s <- if (lr) .Call(C_lsvm, store, y, C, d, as.double(a0), control$svm_tol,
                       control$svm_maxiter) else if (kc > 0L)
      .Call(C_smo_store, store, y, box, d, as.double(a0), control$svm_tol, control$svm_maxiter,
            kc) else
      .Call(C_smo, Kc, y, box, as.double(a0), control$svm_tol, control$svm_maxiter)
    coef <- s$alpha * y
    b <- s$b
    obj <- s$objective
    conv <- s$converged
    it <- s$iterations
    Kcoef <- Kv(coef)
    f <- Kcoef + b
    primal <- 0.5 * sum(coef * Kcoef) + sum(box * pmax(0, 1 - y * f))
    gap <- (primal - obj) / max(abs(primal), .Machine$double.eps)
    state <- list(alpha_svm = s$alpha)
    info <- list(svm_violation = s$violation, svm_iterations = s$iterations,
                 n_sv = sum(s$alpha > 0))
  } else {
    if (lr) {
      r <- kridge_lowrank(store, d, y, 1 / C)
      coef <- r$beta
    } else if (kc > 0L) {
      # on the fly: rows of weight 0 get an infinite ridge (left out, beta 0)
      lam <- if (is.null(w)) rep(1 / C, n) else ifelse(w > 0, (1 / C) / w, Inf)
      r <- .Call(C_kridge_fly, store, y, as.double(lam), d,
                 list(kcache = as.integer(kc), kcols = attr(kc, "kcols"),
                      cg_tol = control$cg_tol, cg_maxiter = control$cg_maxiter))
      coef <- r$beta
    } else if (is.null(w)) {
      r <- .Call(C_kridge, Kc, y, 1 / C)
      coef <- r$beta
    } else {
      pos <- which(w > 0)
      r <- .Call(C_kridge, Kc[pos, pos, drop = FALSE], y[pos], (1 / C) / w[pos])
      coef <- numeric(n)
      coef[pos] <- r$beta
    }
    b <- r$b
    Kcoef <- if (is.null(r$kbeta)) Kv(coef) else r$kbeta
    res <- y - Kcoef - b
    obj <- C / 2 * sum((if (is.null(w)) 1 else w) * res^2) + 0.5 * sum(coef * Kcoef)
    conv <- TRUE
    it <- 1L
    gap <- 0
    state <- NULL
    info <- list()
    if (!is.null(r$cg_iterations)) {   # on the fly: CG's relative residual stands for the gap
      gap <- r$cg_residual
      info <- list(cg_iterations = r$cg_iterations, cg_residual = r$cg_residual,
                   kcache = as.integer(kc), kcols = attr(kc, "kcols"))
      # mkl() warns with this (a CG stopped at its cap is not the ridge's solution)
      conv <- !isTRUE(r$cg_capped)
      if (!conv)
        info$nonconvergence <- sprintf(paste0(
          "kernel ridge on the fly: conjugate gradients stopped at mkl_control(cg_maxiter = ) ",
          "(now %d) with relative residual %s above cg_tol (now %s); raise cg_maxiter"),
          as.integer(control$cg_maxiter), format(signif(r$cg_residual, 3)),
          format(control$cg_tol))
    }
  }
  if (!is.null(prog)) prog(1)
  list(weights = d, alpha = outer(coef, d), b = b, objective = obj, converged = conv,
       iterations = it,
       history = data.frame(iteration = 1L, time = proc.time()[["elapsed"]] - t0,
                            objective = obj, gap = gap, n_active = M),
       state = state, info = info)
}

# Kernel ridge (src/uniform.c's problem) on a low-rank store, K(d) = F F' + jitter sum(d) I with
# F = [sqrt(d_m) G_m]: (F F' + mu I)^{-1} by Woodbury, an R x R Cholesky (R = sum r_m).
kridge_lowrank <- function(store, d, y, lambda) {
  cols <- rep(sqrt(d), diff(store$goff))
  Fm <- sweep(store$G, 2L, cols, `*`)
  mu <- store$jitter * sum(d) + lambda
  B <- cbind(y, 1)
  A <- crossprod(Fm)
  diag(A) <- diag(A) + mu
  B <- (B - Fm %*% chol2inv(chol(A)) %*% crossprod(Fm, B)) / mu
  b <- sum(B[, 1L]) / sum(B[, 2L])
  list(beta = B[, 1L] - b * B[, 2L], b = b)
}
