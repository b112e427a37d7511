# MWUMKL (Moeller, Raman, Saha & Venkatasubramanian 2014, Algorithms 2-4): the R front end of
# src/mwu.c.
#
# Problem: the 2-norm soft-margin MKL dual of the paper's Eq. 4.1 on unit-trace kernels,
#   min over alpha >= 0, sum(alpha) = 1, y'alpha = 0 of max_m alpha' G_m alpha,
#   G_m = Y K_m Y / r_m + I / C_s (r_m the trace of the stored kernel m),
# solved to a (1 + epsilon) approximation by T = ceil(2 ratio log(n) / epsilon^2) matrix
# multiplicative-weight steps. Each step adds 1/2 to two coordinates of alpha and reads two
# columns of every kernel through the store, so memory is O(M n) (the vectors G_m alpha; none
# for polynomial and linear kernels on one column, whose G_m alpha comes from moments of the
# column's powers). On the fly, Gaussian kernels on one feature group share one exponential per
# run of up to 16 (store.c, mk_store_pair_runs).
#
# C: the user's C is the 2-norm soft-margin constant on the scale of unit-diagonal kernels (the
# package's one scale, R/cscale.R); C = Inf is the hard margin. MWUMKL renormalises every kernel
# to unit trace itself, so C_s = C n whatever the store's normalisation (solver_C()).
#
# Output: weights sigma_m = mu_m / r_m on the stored kernels (normalised to sum 1 in the model
# object), alpha[, m] = sigma_m * y * a with the paper's final scaled alpha a (kept as the
# factors of the outer product, outer_alpha()), and the bias of
# the spec. fitted values come from the solver's G_m alpha (no second pass over the kernels).
# refit = TRUE replaces a and b by the hinge SVM (SMO) on the learned combination at box
# constant C: the paper's "two-stage" use.

# The number of iterations of the spec.
mwu_iterations <- function(n, epsilon, ratio) as.integer(ceiling(2 * ratio * log(n) / epsilon^2))

# Above this many iterations a fit says up front what epsilon costs (the count grows as
# 1 / epsilon^2; each iteration reads two columns of every kernel).
.mwu_many_iterations <- 1e5

mwu_cost_note <- function(n, M, eps, ratio, T) {
  e2 <- max(eps, 0.05)
  if (e2 == eps) e2 <- min(0.5, 2 * eps)
  sprintf(paste0("MWUMKL runs T = ceiling(2 ratio log(n) / epsilon^2) = %s iterations at ",
                 "epsilon = %s (n = %d), each reading two columns of each of the %d kernel(s); ",
                 "the count grows as 1 / epsilon^2: epsilon = %s needs %s"),
          format(T, big.mark = ","), format(eps), as.integer(n), as.integer(M), format(e2),
          format(mwu_iterations(n, e2, ratio), big.mark = ","))
}

fit_mwu <- function(store, y, task, C, control, init) {
  store <- as_store(store)
  control <- method_control("mwu", control)
  store$nthreads <- control$nthreads
  if (task != "classification") stop("method 'mwu' does classification only", call. = FALSE)
  if (!is.null(init))
    stop("method 'mwu' has no warm start: it always runs its T iterations from alpha = 0",
         call. = FALSE)
  dims <- store_dims(store)
  if (dims[1L] != dims[2L]) stop("method 'mwu' needs a square (training) kernel store")
  n <- dims[2L]; M <- dims[3L]
  y <- as.double(y)
  eps <- if (is.null(control[["epsilon"]])) 0.2 else control[["epsilon"]]
  if (!is.numeric(eps) || length(eps) != 1L || !(eps > 0 && eps < 1))
    stop("'epsilon' of method 'mwu' must be one number in (0, 1)", call. = FALSE)
  T <- mwu_iterations(n, eps, control[["ratio"]])
  if (is.na(T) || T > .Machine$integer.max / 2)
    stop("'epsilon' is too small: the number of iterations overflows", call. = FALSE)
  if (T > .mwu_many_iterations) message(mwu_cost_note(n, M, eps, control[["ratio"]], T))
  ctl <- list(epsilon = eps, invC = if (is.finite(C)) 1 / C else 0,
              cutoff = control[["cutoff"]], T = T, nthreads = as.integer(control$nthreads),
              verbose = as.integer(control$verbose),
              hist_every = max(1L, as.integer(ceiling(T / 1000))),
              fmap = as.integer(!isFALSE(control[["fmap"]])),
              chain = as.integer(!isFALSE(control[["chain"]])),
              block = as.integer(if (is.null(control[["block"]])) 0L else control[["block"]]),
              progress_fun = fit_progress(control, method_info("mwu")$label))
  trace <- if (!is_dense(store) && !is.null(store$diag_mean)) n * store$diag_mean else NULL
  t0 <- proc.time()[["elapsed"]]
  r <- .Call(C_mwu, store, y, ctl, trace)
  if (r$status != .mk_codes$mwu_status[["done"]])
    stop(mwu_infeasible(eps, r$iterations + 1L, T, C, n), call. = FALSE)
  sigma <- r$sigma
  ssum <- sum(sigma)
  w <- sigma / ssum
  a <- r$alpha
  b <- r$b
  # the training decision values without a second pass over the kernels: with
  # h = sum_m mu_m G_m alpha / T, f(x_j) = y_j (h_j - alpha_j / C) / scale + b; recomputed
  # below from the combined kernel only when refitting
  refit <- isTRUE(control[["refit"]])
  info <- list(epsilon = eps, T = T, ratio = control[["ratio"]], mu = r$mu, trace = r$trace,
               s = r$s, objective = max(r$s), C_solver = C, two_stage = refit,
               kernels_mapped = r$kernels[1L], kernels_chained = r$kernels[2L])
  fitted <- NULL
  if (refit) {
    if (!is.finite(C))
      stop("refit = TRUE fits the hinge SVM on the learned kernel: it needs a finite C",
           call. = FALSE)
    bytes <- 8 * as.double(n)^2
    if (bytes > control$memory)
      stop(sprintf(paste0("refit = TRUE needs the %d x %d combined kernel (%s), above the memory ",
                          "budget (mkl_control(memory = ))"), n, n, format_bytes(bytes)),
           call. = FALSE)
    Kc <- .Call(C_store_combine, store, w)
    # the box constant on the user's scale (unit mean diagonal): C / n is the user's C
    kscale <- mean(diag(Kc))
    s <- .Call(C_smo, Kc, y, (C / n) / kscale, numeric(n), control$svm_tol, control$svm_maxiter)
    a_svm <- s$alpha * y
    b <- s$b
    fitted <- drop(Kc %*% a_svm) + b
    coef_y <- a_svm
    info$svm_converged <- s$converged
    info$svm_iterations <- s$iterations
    info$mwu_alpha <- a
    info$mwu_b <- r$b
    conv <- isTRUE(s$converged)
    if (!conv)
      info$nonconvergence <- sprintf(paste0("the SVM refit stopped at its iteration cap; raise ",
                                            "mkl_control(svm_maxiter = ) (now %d)"),
                                     as.integer(control$svm_maxiter))
  } else {
    coef_y <- a * y * ssum
    fitted <- y * r$h / r$scale - (if (is.finite(C)) y * a / C else 0) + b
    conv <- TRUE
  }
  info$status <- code_name("mwu_status", r$status)
  # training points the classifier misclassifies outside its support (KKT violations: at the
  # optimum every point with y f < 1 has alpha > 0); only the final alpha has a support
  info$support <- sum(a > 0)
  info$uncovered <- if (refit) NA_integer_ else sum(y * fitted <= 0 & a == 0)
  if (is.finite(C) && !refit) {
    why <- mwu_uncovered(info$uncovered, info$support, n, T, control[["ratio"]])
    if (!is.null(why)) {
      conv <- FALSE
      info$status <- "uncovered"
      info$nonconvergence <- why
    }
  }
  if (!is.finite(C)) {
    why <- mwu_no_margin(max(r$s), n, sum(y * fitted <= 0), eps)
    if (!is.null(why)) {
      conv <- FALSE
      info$status <- why$status
      info$nonconvergence <- why$message
    }
  }
  if (M * as.double(n) > 5e7) gc(verbose = FALSE)   # release the solver's O(M n) state first
  h <- as.data.frame(r$history)
  h$gap <- NA_real_
  h$n_active <- M
  list(weights = w, alpha = outer_alpha(coef_y, w), b = b, objective = max(r$s), converged = conv,
       iterations = r$iterations, history = h[, c("iteration", "time", "objective", "gap",
                                                  "n_active", "max_s", "entropy")],
       state = NULL, info = info, fitted_decision = fitted, active = seq_len(M))
}

# The error when the oracle finds no pair satisfying the step's condition (g_j+ + g_j- >=
# -2 sqrt(omega), src/mwu.c). With positive semidefinite kernels this cannot happen at any C or
# epsilon (the paper's footnote 3, and omega bounds the soft-margin optimum); kernels that are
# not (precomputed ones that passed a cheap check) can trigger it, and a large enough ridge 1/C
# removes it (inst/notes/NOTES-mwu.md).
mwu_infeasible <- function(eps, it, T, C, n) {
  sprintf(paste0("MWUMKL stopped at iteration %d of %d (epsilon = %s, %s): its oracle found no ",
                 "step, which cannot happen with positive semidefinite kernels at any C. A kernel ",
                 "is not positive semidefinite on the training points: check the kernels ",
                 "(mkl_control(check_kernels = \"full\") tests precomputed ones by their smallest ",
                 "eigenvalue), or use %s"),
          as.integer(it), as.integer(T), format(eps),
          if (is.finite(C)) sprintf("C = %s", format(C / n)) else "hard margin",
          if (is.finite(C)) "a smaller C (a larger ridge 1/C on the kernels' diagonal)" else
            "a finite C (the 2-norm soft margin adds a ridge 1/C to the kernels' diagonal)")
}

# The soft margin's classifier from T steps has at most 2 T support points. At the optimum every
# training point with y_j f(x_j) < 1 is a support point, so training points misclassified
# outside the support (more than 0.5 % of n) mean T was too few for the points the margin needs
# (many overlapping points at large n: inst/notes/NOTES-mwu.md). Returns NULL or the message,
# with the ratio that gives room for the support and those points.
mwu_uncovered <- function(uncovered, support, n, T, ratio) {
  if (uncovered <= max(5, 0.005 * n)) return(NULL)
  r2 <- ceiling(ratio * (support + uncovered) / max(1, support))
  sprintf(paste0("the classifier misclassifies %d training points outside its %d support ",
                 "points, which an optimum cannot (every margin violator has alpha > 0): ",
                 "T = %s iterations, each adding at most two support points, are too few for ",
                 "n = %d. mkl_control(ratio = %s) (or a smaller epsilon) gives more; or fit a ",
                 "method on the low-rank store (mkl_control(store = \"lowrank\"))"),
          as.integer(uncovered), as.integer(support), format(T, big.mark = ","), as.integer(n),
          format(r2))
}

# The hard margin (C = Inf) asks for a kernel combination that separates the training classes.
# MWUMKL's final alpha (sum 1, y'alpha = 0) bounds how far that is possible: any classifier with
# y_j f(x_j) >= 1 has margin at most sqrt(max_m alpha' G_m alpha), i.e. sqrt(n * objective) of
# the points' root mean square norm on unit-trace kernels. "infeasible": that bound is at the
# level of the diagonal jitter (n * objective <= 1e-6); "not_separated": the classifier found
# misclassifies nerr > 0 training points. Returns NULL or list(status, message);
# inst/notes/NOTES-mwu.md has the measurements.
mwu_no_margin <- function(objective, n, nerr, eps) {
  rel <- format(signif(sqrt(max(0, n * objective)), 2))
  if (n * objective <= 1e-6)
    return(list(status = "infeasible", message = sprintf(paste0(
      "the hard margin (C = Inf) is infeasible: MWUMKL's certificate bounds the margin of every ",
      "kernel combination by %s of the points' norm. Use a finite C (the 2-norm soft margin)"),
      rel)))
  if (nerr == 0L) return(NULL)
  list(status = "not_separated", message = sprintf(paste0(
    "the hard-margin classifier found misclassifies %d of %d training points: the classes ",
    "overlap or their margin is too narrow for epsilon = %s (MWUMKL's certificate bounds it by ",
    "%s of the points' norm). Use a finite C (the 2-norm soft margin) or a smaller epsilon"),
    as.integer(nerr), as.integer(n), format(eps), rel))
}
