# SpicyMKL (Suzuki & Tomioka 2009): the R side of the solver in src/spicy.c.
#
# Problem: minimise sum_i loss(y_i, z_i) + sum_m psi(||alpha_m||_{K_m}), z = sum_m K_m alpha_m + b,
# psi(x) = C x (penalty "l1", block 1-norm) or C (1 - lambda) x + (C lambda / 2) x^2 ("elasticnet").
# Losses: "hinge", "logistic" (classification, y in {-1, +1}), "squared" ((y - z)^2 / 2) and
# "epsilon" (max(|y - z| - epsilon, 0)) for regression.

spicy_loss_codes <- c(hinge = 0L, logistic = 1L, squared = 2L, epsilon = 3L)

# Defaults for the control entries fit_spicy() uses (the front end normally supplies them).
spicy_control_defaults <- function(task) {
  list(loss = if (identical(task, "regression")) "squared" else "hinge",
       penalty = "l1", lambda = 0.5, epsilon = 0.1,
       tol = 0.01, maxiter = 500L, inner_tol = 1e-6, inner_maxiter = 100L,
       nthreads = 1L, verbose = FALSE,
       cg = NA, cg_threshold = 250L, screening = TRUE, lazy_screening = TRUE,
       gamma = NA, gamma_scale = 5, gamma_b = 1, gamma_mult = 10, gamma_max = 1e8, warm_shrink = 100)
}

# fit_spicy(K, y, task, C, control, init): see DEVELOPERS.md for the contract.
# control entries used (defaults in spicy_control_defaults()):
#   loss, penalty, lambda (elastic-net mixing), epsilon (epsilon-insensitive loss), tol (relative
#   duality gap), maxiter (outer iterations), inner_tol (RMS of the gradient of the augmented
#   Lagrangian at which a Newton loop stops), inner_maxiter, nthreads, verbose,
#   cg (TRUE/FALSE: conjugate-gradient Newton solve; NA = automatic, used when n >= cg_threshold;
#   the default threshold 250 was measured: from n ~ 300 on, a Cholesky factorisation per Newton
#   step (n^3 / 3 flops with the reference BLAS R ships with) costs 5-15 times the truncated CG
#   solve (hinge, logistic, squared loss), although the inexact CG steps need up to ~1.8 times
#   more Newton steps; below 250 both take the same time),
#   gamma, gamma_b (initial proximal parameters), gamma_mult (their growth factor), gamma_max (cap),
#   gamma_scale (gamma = NA, the default, starts at gamma_scale / C1; see below),
#   warm_shrink (a warm start resumes at the previous fit's final gamma divided by this),
#   screening (FALSE keeps every kernel in the Newton working set: for testing only),
#   lazy_screening (TRUE: kernels outside the working set are screened on the step the line
#   search accepts, not on the whole Newton step; FALSE: the whole step; same iterates up to
#   rounding, FALSE is for testing).
# Initial gamma: a kernel is active when ||alpha_m + gamma rho||_{K_m} > gamma C1, so with
# alpha = 0 the first Newton problems penalise ||rho||_{K_m} - C1 with weight gamma; the relative
# overshoot of rho beyond the C1-balls, hence the first active set, depends on gamma C1. The
# reference toolbox's fixed gamma0 = 10 made 3163 of 6000 kernels active in the first outer
# iteration on ringnorm (N = 200, C = 0.05), which then cost most of the fit (gamma0 = 100: 515).
# gamma_scale = 5 was the best compromise of 2, 5, 10, 20 over ringnorm with 200 / 1000 / 6000
# kernels and Ionosphere (918 kernels) at C = 0.005, 0.05, 0.5 (Ionosphere at C = 0.5 keeps
# gamma0 = 10; larger values were slower there).
# With C1 = 0 (elastic net, lambda = 1) there is no threshold and gamma0 stays 10.
# Warm start: `init` is the `state` of a previous fit_spicy() result with the same loss and sizes
# (alpha, b, rho, slack variables, gamma); any C or penalty may differ.
# Kernel weights: block 1-norm d_m = ||alpha_m||_{K_m} / sum_l ||alpha_l||_{K_l}; elastic net
# d_m proportional to ||f_m|| / ((1 - lambda) + lambda ||f_m||) (Tomioka & Suzuki, Table 1),
# normalised to sum 1. If every block is zero, the weights are uniform (1 / M).
fit_spicy <- function(K, y, task, C, control = list(), init = NULL) {
  if (is.null(control)) control <- list()
  def <- spicy_control_defaults(task)
  for (nm in names(def)) if (is.null(control[[nm]])) control[[nm]] <- def[[nm]]
  d <- dim(K)
  if (!is.double(K)) storage.mode(K) <- "double"
  if (length(d) == 2L) d <- c(d, 1L)
  if (length(d) != 3L || d[1L] != d[2L]) stop("K must be an n x n x M array")
  n <- d[1L]; M <- d[3L]
  y <- as.double(y)
  if (length(y) != n) stop("length(y) must equal dim(K)[1]")
  loss <- match.arg(control$loss, names(spicy_loss_codes))
  penalty <- match.arg(control$penalty, c("l1", "elasticnet"))
  lambda <- if (penalty == "l1") 0 else as.double(control$lambda)
  if (!is.numeric(C) || length(C) != 1L || !(C > 0)) stop("C must be a positive scalar")
  C1 <- C * (1 - lambda)
  C2 <- C * lambda
  if (penalty == "l1") C2 <- 0
  cg <- control$cg
  cgcode <- if (is.na(cg)) -1L else as.integer(isTRUE(cg))
  iopt <- as.integer(c(spicy_loss_codes[[loss]], control$maxiter, control$inner_maxiter,
                       control$nthreads, as.integer(control$verbose), cgcode,
                       control$cg_threshold, isTRUE(control$screening),
                       isTRUE(control$lazy_screening)))
  # initial kernel proximal parameter, unless given: gamma0 = gamma_scale / C1 (the kernel
  # threshold is gamma C1, see the comment on the defaults); 10 without a threshold (C1 = 0)
  gamma <- as.double(control$gamma)
  if (is.na(gamma)) gamma <- if (C1 > 0) control$gamma_scale / C1 else 10
  dopt <- as.double(c(C1, C2, control$epsilon, control$tol, control$inner_tol,
                      gamma, control$gamma_b, control$gamma_mult, control$gamma_max))

  alpha0 <- b0 <- rho0 <- aux0 <- gamma0 <- NULL
  if (!is.null(init) && identical(init$method, "spicy") && identical(init$loss, loss) &&
      identical(as.integer(init$dim), as.integer(c(n, M)))) {
    alpha0 <- as.double(init$alpha)
    b0 <- as.double(init$b)
    rho0 <- as.double(init$rho)
    aux0 <- as.double(init$aux)
    # resume the proximal parameters, but not at their final (huge) values: a new C moves the
    # solution, and a moderate gamma keeps the first Newton problems well conditioned
    gamma0 <- pmax(c(gamma, control$gamma_b),
                   as.double(init$gamma) / control$warm_shrink)
  }
  r <- .Call(C_spicy, K, y, iopt, dopt, alpha0, b0, rho0, aux0, gamma0)

  alpha <- r$alpha
  norms <- r$norms
  w <- if (penalty == "l1") norms else norms / ((1 - lambda) + lambda * norms)
  weights <- if (sum(w) > 0) w / sum(w) else rep(1 / M, M)
  names(weights) <- dimnames(K)[[3L]]

  it <- r$iterations
  h <- r$history
  history <- data.frame(iteration = seq_len(it), time = h$time, objective = h$objective,
                        dual = h$dual, gap = h$gap, n_active = h$n_active, newton = h$newton)
  state <- list(method = "spicy", loss = loss, penalty = penalty, C = C, dim = c(n, M),
                alpha = alpha, b = r$b, rho = r$rho, aux = r$aux, gamma = r$gamma)
  list(weights = weights, alpha = alpha, b = r$b, objective = r$primal,
       converged = isTRUE(r$converged), iterations = it, history = history, state = state,
       info = list(gap = r$gap, primal = r$primal, dual = r$dual, n_active = r$n_active,
                   loss = loss, penalty = penalty, lambda = lambda, C1 = C1, C2 = C2,
                   sum_norms = r$sumnorm, block_norms = norms,
                   newton_steps = r$newton, cg_iterations = r$cg_iter,
                   kernel_sweeps = r$kernel_sweeps, inner_unsolved = r$rejected))
}
