# SpicyMKL (Suzuki & Tomioka 2009): the R side of the solver in src/spicy.c.
#
# Problem: minimise sum_i loss(y_i, z_i) + sum_m psi(||alpha_m||_{K_m}), z = sum_m K_m alpha_m + b,
# psi(x) = C x (penalty "l1", block 1-norm) or C (1 - lambda) x + (C lambda / 2) x^2 ("elasticnet").
# Losses: "hinge", "logistic" (classification, y in {-1, +1}), "squared" ((y - z)^2 / 2) and
# "epsilon" (max(|y - z| - epsilon, 0)) for regression.

# fit_spicy(store, y, task, C, control, init): see DEVELOPERS.md for the contract.
# store: a kernel store or a plain n x n x M array (wrapped as a dense store).
# control: the settings (R/control.R) and tuning knobs (spicy_tuning(), R/tuning.R, whose help
#   page says what each does), flat as method_control() returns them, plus the model: loss
#   (default hinge for classification, squared for regression), penalty ("l1"), lambda
#   (elastic-net mixing, 0.5), epsilon (epsilon-insensitive loss, 0.1).
# Initial gamma: with alpha = 0 a kernel is active when ||rho||_{K_m} > C1, and the first Newton
# problems penalise the excess with weight gamma: gamma C1 sets how far rho overshoots the
# C1-balls, hence the size of the first active set, so gamma starts at gamma_scale / C1 (10
# without a threshold, C1 = 0), times (n / spicy_gamma_n0)^spicy_gamma_pow above
# spicy_gamma_n0 observations, so that large problems need about as many outer iterations as
# small ones (the measurements: inst/notes/NOTES-spicy.md).
# Warm start: `init` is the `state` of a previous fit_spicy() result with the same loss and sizes
# (alpha, b, rho, slack variables, gamma); any C or penalty may differ.
# info$kernel_bounds (M x 2): the screening constants of each kernel from the solver's first
# sweep, sqrt(1'K_m 1) and an upper bound of sqrt(lambda_max(P K_m P)) (P the centring projection:
# the smallest of the trace, the Frobenius norm and the Gershgorin bound of P K_m P).
# Kernel weights: block 1-norm d_m = ||alpha_m||_{K_m} / sum_l ||alpha_l||_{K_l}; elastic net
# d_m proportional to ||f_m|| / ((1 - lambda) + lambda ||f_m||) (Tomioka & Suzuki, Table 1),
# normalised to sum 1. If every block is zero, the weights are uniform (1 / M).
spicy_gamma_n0 <- 500
spicy_gamma_pow <- 0.75
spicy_gamma_size <- function(n) max(1, n / spicy_gamma_n0)^spicy_gamma_pow

# The initial kernel proximal parameter: control$gamma, unless NA (the default above).
spicy_gamma0 <- function(control, n, C1) {
  gamma <- as.double(control[["gamma"]])
  if (is.na(gamma)) gamma <- if (C1 > 0) control[["gamma_scale"]] * spicy_gamma_size(n) / C1 else 10
  gamma
}

# The default model rounds (model_rounds = NA): 5, and 20 on a low-rank store, where a round is
# one Woodbury solve (inst/notes/NOTES-spicy.md).
spicy_model_rounds <- function(v, lowrank) {
  if (is.na(v)) if (lowrank) 20L else 5L else as.integer(v)
}

# The default row start (row_start = NA) on a low-rank store of n >= spicy_row_n rows: nested
# subsamples growing geometrically from spicy_row_n0 rows by a factor of at most 10 (5000 rows:
# 1000; 20,000: 1000, 4472; 100,000: 1000, 10,000); none on other stores or fewer rows. The
# measurements behind it: inst/notes/NOTES-spicy.md.
spicy_row_n <- 5000
spicy_row_n0 <- 1000
spicy_row_auto <- function(n, lowrank) {
  if (!lowrank || n < spicy_row_n) return(0L)
  lev <- ceiling(log10(n / spicy_row_n0))
  as.integer(round(spicy_row_n0 * (n / spicy_row_n0)^((seq_len(lev) - 1) / lev)))
}

# Case weights (control$case_weights): the loss sum_i w_i loss_i (src/spicy_loss.c); rows of
# weight 0 are left out (the principal submatrix of the store, subset_store()) and get zero
# coefficients, so that weight 0 is the row dropped.
fit_spicy <- function(store, y, task, C, control = list(), init = NULL) {
  store <- as_store(store)
  cw <- control$case_weights
  if (!is.null(cw) && any(cw == 0)) return(spicy_dropping_zero_weights(store, y, task, C,
                                                                       control, init))
  control <- method_control("spicy", control)
  if (is.null(control[["loss"]]))
    control[["loss"]] <- if (identical(task, "regression")) "squared" else "hinge"
  if (is.null(control[["penalty"]])) control[["penalty"]] <- "l1"
  if (is.null(control[["lambda"]])) control[["lambda"]] <- 0.5
  if (is.null(control[["epsilon"]])) control[["epsilon"]] <- 0.1
  d <- store_dims(store)
  if (d[1L] != d[2L]) stop("SpicyMKL needs a square (training) kernel store")
  n <- d[2L]; M <- d[3L]
  y <- as.double(y)
  if (length(y) != n) stop("length(y) must equal the number of rows of the kernels")
  loss <- match.arg(control[["loss"]], names(.mk_codes$loss))
  penalty <- match.arg(control[["penalty"]], c("l1", "elasticnet"))
  lambda <- if (penalty == "l1") 0 else as.double(control[["lambda"]])
  if (!is.numeric(C) || length(C) != 1L || !(C > 0)) stop("C must be a positive scalar")
  C1 <- C * (1 - lambda)
  C2 <- if (penalty == "l1") 0 else C * lambda
  rs <- control[["row_start"]]
  lowrank <- store$kind == .mk_codes$store[["lowrank"]]
  if (length(rs) == 1L && is.na(rs)) rs <- spicy_row_auto(n, lowrank)
  rs <- rs[rs > 0 & 2 * rs <= n]
  if (is.null(init) && length(rs) && lowrank) {
    # continuation over the rows: fit a spread subsample first (itself started from the smaller
    # sizes of row_start), start from its f_m (NOTES-spicy.md)
    st <- spicy_row_start(store, y, task, C, C1, control, loss, as.integer(rs))
    control[["row_start"]] <- 0
    # every fit of the chain starts at row_gamma times its gamma (NOTES-spicy.md)
    control[["gamma"]] <- spicy_gamma0(control, n, C1) * control[["row_gamma"]]
    res <- fit_spicy(store, y, task, C, control, init = st$init)
    res$info$row_start <- st$info
    return(res)
  }
  gamma <- spicy_gamma0(control, n, C1)
  cg <- control[["cg"]]
  cache <- control[["newton_cache"]]
  ctl <- list(loss = .mk_codes$loss[[loss]], C1 = C1, C2 = C2,
              eps = as.double(control[["epsilon"]]), tol = control[["tol"]],
              maxiter = as.integer(control[["maxiter"]]), inner_tol = control[["inner_tol"]],
              inner_maxiter = as.integer(control[["inner_maxiter"]]),
              nthreads = as.integer(control[["nthreads"]]),
              verbose = as.integer(control[["verbose"]]),
              cg = if (is.na(cg)) -1L else as.integer(isTRUE(cg)),
              cg_threshold = as.integer(control[["cg_threshold"]]),
              newton_cache = if (is.na(cache)) -1L else as.integer(isTRUE(cache)),
              model_rounds = spicy_model_rounds(control[["model_rounds"]], lowrank),
              cg_deflate = as.integer(control[["cg_deflate"]]),
              newton_float = as.integer(isTRUE(control[["newton_float"]])),
              slack_ratio = as.double(control[["slack_ratio"]]),
              inner_rel = as.double(control[["inner_rel"]]),
              box_fraction = as.double(control[["box_fraction"]]),
              svm_dual = as.integer(isTRUE(control[["svm_dual"]])),
              screening = as.integer(isTRUE(control[["screening"]])),
              lazy_screening = as.integer(isTRUE(control[["lazy_screening"]])),
              gamma0 = gamma, gamma_b = as.double(control[["gamma_b"]]),
              gamma_mult = as.double(control[["gamma_mult"]]),
              gamma_max = as.double(control[["gamma_max"]]),
              progress_fun = fit_progress(control, method_info("spicy")$label))
  if (!is.null(cw)) ctl$case_weights <- as.double(cw)

  cinit <- NULL
  if (!is.null(init) && identical(init$method, "spicy") && identical(init$loss, loss) &&
      identical(as.integer(init$dim), as.integer(c(n, M)))) {
    # resume the proximal parameters, but not at their final (huge) values: a new C moves the
    # solution, and a moderate gamma keeps the first Newton problems well conditioned
    cinit <- list(alpha = as.double(init$alpha), b = as.double(init$b),
                  rho = as.double(init$rho), aux = as.double(init$aux),
                  gamma = pmax(c(gamma, ctl$gamma_b),
                               as.double(init$gamma) / control[["warm_shrink"]]))
  }
  r <- .Call(C_spicy, store, y, ctl, cinit)

  alpha <- r$alpha
  norms <- r$norms
  w <- if (penalty == "l1") norms else norms / ((1 - lambda) + lambda * norms)
  weights <- if (sum(w) > 0) w / sum(w) else rep(1 / M, M)
  names(weights) <- if (is_dense(store)) dimnames(store$K)[[3L]]

  it <- r$iterations
  h <- r$history
  history <- data.frame(iteration = seq_len(it), time = h$time, objective = h$objective,
                        dual = h$dual, gap = h$gap, n_active = as.integer(h$n_active),
                        newton = as.integer(h$newton))
  state <- list(method = "spicy", loss = loss, penalty = penalty, C = C, dim = c(n, M),
                alpha = alpha, b = r$b, rho = r$rho, aux = r$aux, gamma = r$gamma)
  list(weights = weights, alpha = alpha, b = r$b, objective = r$primal,
       converged = isTRUE(r$converged), iterations = it, history = history, state = state,
       info = list(gap = r$gap, primal = r$primal, dual = r$dual, n_active = r$n_active,
                   loss = loss, penalty = penalty, lambda = lambda, C1 = C1, C2 = C2,
                   sum_norms = r$sumnorm, block_norms = norms,
                   newton_steps = r$newton, cg_iterations = r$cg_iter, cg_block = r$cg_block,
                   kernel_sweeps = r$kernel_sweeps, inner_unsolved = r$rejected,
                   inner_floor = r$floor, gamma_backoffs = r$backoff,
                   box_from = r$box, box_left = r$box_left,
                   newton_rebuilds = r$rebuilds,
                   model_rounds = r$model, cg_deflated = r$deflated,
                   svm_dual = stats::setNames(r$svm_dual, c("tried", "better")),
                   newton_float = r$single,
                   kernel_bounds = structure(r$kernel_bounds,
                                             dimnames = list(NULL, c("sqrt_1K1", "sqrt_lmax")))))
}

# SpicyMKL on the rows of positive case weight: the fit's coefficients (and its warm-start
# state's) on all n rows, zero on the rows of weight 0.
spicy_dropping_zero_weights <- function(store, y, task, C, control, init) {
  pos <- which(control$case_weights > 0)
  n <- length(y)
  control$case_weights <- control$case_weights[pos]
  if (is.matrix(init$alpha) && nrow(init$alpha) == n) init$alpha <- init$alpha[pos, , drop = FALSE]
  res <- fit_spicy(subset_store(store, pos), y[pos], task, C, control, init)
  full <- function(a) {
    out <- matrix(0, n, ncol(a), dimnames = dimnames(a))
    out[pos, ] <- a
    out
  }
  res$alpha <- full(res$alpha)
  res$state$alpha <- res$alpha
  res
}

# Continuation over the rows on a low-rank store: with K_m = G_m G_m' the function f_m = K_m alpha_m
# of any subset's fit is defined on every row, so a fit on `ns` rows spread over each class (over
# all rows in regression), with C and the case weights scaled to them (the same problem per row),
# gives the fit on all rows its start: alpha zero off the subsample (the same f_m), b,
# rho = -loss'(z) (the subsample's own rho on its rows), the slack variables from z as at a cold
# start, rho then balanced and scaled into every C1-ball; gamma starts as at a cold start.
# C1: the block-norm part of C (fit_spicy()). ns: increasing subsample sizes; the fit on the
# largest starts from the next smaller one, and so on (nested starts). Returns the init for
# fit_spicy() and the subsample fits' counts (fit$info$row_start: a value per size, smallest
# first).
spicy_row_start <- function(store, y, task, C, C1, control, loss, ns) {
  n <- length(y)
  inner <- ns[-length(ns)]
  ns <- ns[length(ns)]
  M <- store_dims(store)[3L]
  cls <- if (identical(task, "regression")) list(seq_len(n)) else split(seq_len(n), y)
  rows <- sort(unlist(lapply(cls, function(ix)
    ix[spread_rows(length(ix), max(1L, round(ns * length(ix) / n)))]), use.names = FALSE))
  cw <- control$case_weights
  frac <- if (is.null(cw)) length(rows) / n else sum(cw[rows]) / sum(cw)
  sctl <- control
  sctl[["row_start"]] <- if (length(inner)) inner else 0L
  if (!length(inner)) {
    # the first fit of the chain (cold) starts at row_gamma times its gamma as well
    if (is.na(sctl[["gamma"]])) sctl[["gamma_scale"]] <- sctl[["gamma_scale"]] * sctl[["row_gamma"]]
    else sctl[["gamma"]] <- sctl[["gamma"]] * sctl[["row_gamma"]]
  }
  if (!is.null(cw)) sctl$case_weights <- cw[rows]
  sub <- fit_spicy(subset_store(store, rows), y[rows], task, C * frac, sctl)
  alpha <- matrix(0, n, M)
  alpha[rows, ] <- sub$alpha
  z <- rep(sub$b, n)
  for (m in which(colSums(sub$alpha != 0) > 0))
    z <- z + drop(.Call(C_store_mv, store, m, alpha[, m]))
  # rho = -loss'(z) (the solver moves it inside the loss's box); aux as the solver's cold start
  v <- 1 - y * z
  r <- y - z
  eps <- as.double(control[["epsilon"]])
  rho <- switch(loss, hinge = ifelse(v > 0, y, 0), logistic = y / (1 + exp(y * z)),
                squared = r, epsilon = ifelse(abs(r) > eps, sign(r), 0))
  if (!is.null(cw)) rho <- rho * cw
  rho[rows] <- sub$state$rho
  if (loss != "squared" && loss != "epsilon") {
    # balanced (the bias) and inside every C1-ball: the dual point of the certificate, not a rho
    # that the first inner problem's gamma penalises on every kernel (NOTES-spicy.md)
    sp <- sum(rho[rho > 0]); sn <- -sum(rho[rho < 0])
    if (sp > sn) rho[rho > 0] <- rho[rho > 0] * sn / sp else rho[rho < 0] <- rho[rho < 0] * sp / sn
  } else rho <- rho - mean(rho)
  qn <- sqrt(pmax(.Call(C_store_quad, store, seq_len(M), rho), 0))
  if (C1 > 0 && max(qn) > C1) rho <- rho * (C1 / max(qn))
  aux <- switch(loss, hinge = c(pmax(v, 0), pmax(-v, 0)), epsilon = c(z, numeric(n)),
                numeric(2L * n))
  list(init = list(method = "spicy", loss = loss, dim = c(n, M), alpha = alpha, b = sub$b,
                   rho = rho, aux = aux, gamma = c(0, 0)),
       info = spicy_row_info(sub$info$row_start,
                             list(rows = length(rows), C = C * frac, iterations = sub$iterations,
                                  gap = sub$info$gap, newton_steps = sub$info$newton_steps,
                                  model_rounds = sub$info$model_rounds,
                                  cg_iterations = sub$info$cg_iterations)))
}

# the counts of the nested subsample fits (smaller sizes first, NULL: none) and of the last one
spicy_row_info <- function(before, last) {
  if (is.null(before)) return(last)
  Map(c, before[names(last)], last)
}
