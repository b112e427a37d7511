# Empirical Bayesian MKL (Tomioka & Suzuki, Section 3): the R front end of
# src/bayes.c.
#
# Model: y = sum_m f_m + b + e, f_m ~ GP(0, d_m K_m), e ~ N(0, sigma2 I). The kernel variances
# d_m and the noise variance sigma2 maximise the marginal likelihood of y (Eq. 19) by MacKay's
# update (Eq. 23), safeguarded: a step that would increase the negative log marginal likelihood
# is replaced by the bound-minimisation step d_m <- d_m sqrt(q_m / t_m), which cannot; near the
# optimum (update = "scoring", the default) by projected Fisher-scoring steps (src/bayes.c).
#
# Bias: the paper omits it. bias = "center" (default) fits the centred response and b = mean(y);
# bias = "kernel" adds the constant kernel 1 1' with its own learned variance d0 (a Gaussian
# prior on b), and b = d0 * sum(beta).
#
# C: the marginal likelihood has no regularisation constant. In Eq. 3 the constant C only
# rescales the kernel weights (C / d_m), which are learned here, so mkl() refuses a C given
# with method = "bayes" and records C = NA; the noise variance sigma2 plays the role of the
# ridge (mkl_control(sigma2 = ) fixes it).
#
# Classification: the same regression on y in {-1, +1}; the class is the sign of the fit, as in
# the paper.
#
# Output: weights = d / sum(d) (the simplex, like the other methods); info$d the learned prior
# variances, info$sigma2, info$bias_variance; alpha[, m] = d_m beta with beta = Kbar^{-1} y.
# The objective is Eq. 19 without the constant n log(2 pi) / 2, for the centred response when
# bias = "center".

fit_bayes <- function(store, y, task, C, control, init) {
  store <- as_store(store)
  control <- method_control("bayes", control)
  store$nthreads <- control$nthreads
  dims <- store_dims(store)
  if (dims[1L] != dims[2L]) stop("method 'bayes' needs a square (training) kernel store")
  n <- dims[2L]; M <- dims[3L]
  y <- as.double(y)
  if (length(y) != n) stop("length(y) must equal the number of rows of the kernels")
  bias <- control[["bias"]]
  b0 <- if (bias == "center") mean(y) else 0
  yc <- y - b0
  v <- mean(yc^2)
  if (!(v > 0))
    stop("the response is constant: there is nothing for the kernels to explain",
         call. = FALSE)
  fixed <- !is.na(control[["sigma2"]])
  sigma2 <- if (fixed) control[["sigma2"]] else v / 2
  start <- list(d = rep(NA_real_, M), sigma2 = sigma2,
                d0 = if (bias == "kernel") max(mean(y)^2, v / 2) else 0,
                prior_variance = v / 2)
  if (!is.null(init) && length(init[["d"]]) == M && !is.null(init[["sigma2"]])) {
    # warm start: the previous variances (kernels pruned there stay out)
    start$d <- as.double(init[["d"]])
    if (!fixed) start$sigma2 <- as.double(init[["sigma2"]])
    if (bias == "kernel" && !is.null(init[["d0"]]) && init[["d0"]] > 0)
      start$d0 <- as.double(init[["d0"]])
  }
  ctl <- list(tol = control[["tol"]], maxiter = as.integer(control[["maxiter"]]),
              prune = control[["prune"]], accelerate = control[["accelerate"]],
              sigma2_floor = control[["sigma2_floor"]] * v,
              fix_sigma2 = as.integer(fixed), bias_kernel = as.integer(bias == "kernel"),
              update = .mk_codes$bayes_update[[control[["update"]]]],
              safeguard = as.integer(isTRUE(control[["safeguard"]])),
              nthreads = as.integer(control[["nthreads"]]),
              verbose = as.integer(control[["verbose"]]),
              progress_fun = fit_progress(control, method_info("bayes")$label))
  r <- .Call(C_bayes, store, yc, ctl, start)
  stop_reason <- code_name("bayes_stop", r$stop)

  h <- as.data.frame(r$history)
  h$iteration <- as.integer(h$iteration)
  h$n_active <- as.integer(h$n_active)
  h$step <- c("start", "mackay", "mm", "accelerated", "scoring")[h$step + 1L]
  if (bias != "kernel") h$bias_variance <- NULL
  bayes_check_history(h$objective, isTRUE(control[["safeguard"]]))
  d <- r$d
  weights <- if (sum(d) > 0) d / sum(d) else rep(1 / M, M)
  alpha <- outer(r$beta, d)
  b <- b0 + if (bias == "kernel") r$d0 * sum(r$beta) else 0
  ratio <- r$q / r$t
  info <- list(d = d, sigma2 = r$sigma2, bias_variance = if (bias == "kernel") r$d0 else NULL,
               bias = bias, sigma2_fixed = fixed, stop = stop_reason,
               gradient_max = r$grad_max,
               fixed_point = h$residual[nrow(h)], fixed_point_ratio = ratio,
               gradient = 0.5 * (r$t - r$q), noise_ratio = r$q_noise / r$t_noise,
               kernel_scale = r$scale, pruned_at = ifelse(r$pruned_at == 0L, NA_integer_,
                                                          r$pruned_at),
               mm_steps = r$mm_steps, mackay_rejected = r$mackay_rejected,
               accelerated_rejected = r$accel_rejected, scoring_steps = r$scoring_steps,
               scoring_rejected = r$scoring_rejected,
               factorizations = r$factorizations,
               # low-rank store: the passes over the factors' n rows (NA on other stores)
               factor_passes = r$passes, solver_time = r$time)
  converged <- stop_reason == "fixed_point"
  if (!converged)
    info$nonconvergence <- switch(stop_reason,
      limit = sprintf("max |dJ/dlog d| = %s after %d steps (tol %s)",
                      format(signif(r$grad_max, 3)), r$iterations, format(control[["tol"]])),
      stalled = sprintf(paste0("the marginal likelihood stopped increasing at ",
                               "max |dJ/dlog d| = %s (tol %s): rounding level"),
                        format(signif(r$grad_max, 3)), format(control[["tol"]])),
      not_pd = paste0("the covariance sigma2 I + sum d_m K_m could not be factorised; fix the ",
                      "noise variance (mkl_control(sigma2 = )) or raise sigma2_floor"))
  list(weights = weights, alpha = alpha, b = b, objective = r$objective,
       converged = converged, iterations = as.integer(r$iterations), history = h,
       state = list(method = "bayes", d = d, sigma2 = r$sigma2, d0 = r$d0),
       info = info)
}

# A regression is fitted on the standardised response (R/response.R): a fixed noise variance is
# given on the response's scale, so it is divided by the response's variance s^2 for the fit.
bayes_control_standard <- function(control, s) {
  if (!is.na(control[["sigma2"]])) control[["sigma2"]] <- control[["sigma2"]] / s^2
  control
}

# ... and the learned variances are reported on the response's scale (times s^2; a fixed
# sigma2 as given), with the negative log marginal likelihood of the response as given (Eq. 19
# plus n log s).
bayes_response_scale <- function(res, s, n, control) {
  v <- s^2
  for (nm in c("d", "sigma2", "bias_variance"))
    if (!is.null(res$info[[nm]])) res$info[[nm]] <- res$info[[nm]] * v
  if (!is.na(control[["sigma2"]])) res$info$sigma2 <- control[["sigma2"]]
  res$info$gradient <- res$info$gradient / v
  res$objective <- res$objective + n * log(s)
  h <- res$history
  h$objective <- h$objective + n * log(s)
  h$sigma2 <- h$sigma2 * v
  if (!is.null(h$bias_variance)) h$bias_variance <- h$bias_variance * v
  res$history <- h
  res
}

# The negative log marginal likelihood must not increase along the iterations (beyond
# rounding): a warning if it does.
bayes_check_history <- function(objective, safeguard = TRUE) {
  inc <- diff(objective)
  bad <- inc > 1e-9 * (abs(objective[-1L]) + 1)
  if (length(inc) && any(bad))
    warning(sprintf(paste0("the negative log marginal likelihood increased along the ",
                           "iterations (%d time(s), by up to %s)%s"), sum(bad),
                    format(signif(max(inc), 3)),
                    if (safeguard) "" else "; mkl_control(safeguard = TRUE) prevents it"),
            call. = FALSE)
  invisible(!any(bad))
}

# Validation of the bayes settings (called by check_control_values()).
check_bayes_control <- function(s) {
  if (!is.null(s[["sigma2"]]) && !(length(s[["sigma2"]]) == 1L && is.na(s[["sigma2"]])))
    s[["sigma2"]] <- check_scalar(s[["sigma2"]], "sigma2", 0, lower_open = TRUE)
  if (!is.null(s[["sigma2_floor"]]))
    s[["sigma2_floor"]] <- check_scalar(s[["sigma2_floor"]], "sigma2_floor", 0,
                                        lower_open = TRUE)
  if (!is.null(s[["prune"]])) {
    s[["prune"]] <- check_scalar(s[["prune"]], "prune", 0)
    if (s[["prune"]] >= 1) stop("'prune' must be in [0, 1)", call. = FALSE)
  }
  if (!is.null(s[["accelerate"]]))
    s[["accelerate"]] <- check_scalar(s[["accelerate"]], "accelerate", 1)
  if (!is.null(s[["bias"]]))
    s[["bias"]] <- match_arg(s[["bias"]], c("center", "kernel"), name = "bias")
  if (!is.null(s[["update"]]))
    s[["update"]] <- match_arg(s[["update"]], names(.mk_codes$bayes_update), name = "update")
  if (!is.null(s[["safeguard"]]) && !(is.logical(s[["safeguard"]]) &&
                                      length(s[["safeguard"]]) == 1L &&
                                      !is.na(s[["safeguard"]])))
    stop("'safeguard' must be TRUE or FALSE", call. = FALSE)
  s
}
