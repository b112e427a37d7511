# Regression on the standardised response. Every regression fit solves its problem for
# (y - mean(y)) / sd(y) (sd with divisor n) and reports on the user's scale:
# f(x) = sd (sum_m K_m(x, X) alpha_m + b) + mean, so scaling y by any positive constant (or
# shifting it) scales (shifts) every prediction alike, and C, epsilon (in units of sd(y), as
# e1071's svm with scale = TRUE) and the defaults mean the same whatever the units of y.
# Measurements: inst/notes/NOTES-regression.md.
#
# response_fit(method): the fit function of a method (the solver contract of DEVELOPERS.md),
# standardising the response of a regression and passing classification through. What a
# solver reports on the standardised scale and the user sees: alpha, b and fitted values (on
# the user's scale); the objective and history stay those of the problem solved; info$y_center
# and info$y_scale record the transformation; a state keeps alpha on the user's scale (as
# restore_state() gives it back) and its y_scale, so a warm start divides it out again.
response_fit <- function(method) {
  fitfun <- method_fit(method)
  function(store, y, task, C, control, init) {
    if (task != "regression") return(fitfun(store, y, task, C, control, init))
    w <- control$case_weights
    # case weights: the weighted mean and sd (a row of weight 2 counts as two rows)
    s <- if (is.null(w)) sqrt(mean((y - mean(y))^2)) else
      sqrt(sum(w * (y - sum(w * y) / sum(w))^2) / sum(w))
    # bayes' constant kernel is a zero-mean prior on b: its response is only scaled
    mu <- if (method == "bayes" && identical(control[["bias"]], "kernel")) 0 else
      if (is.null(w)) mean(y) else sum(w * y) / sum(w)
    if (!(is.finite(s) && s > 0)) s <- 1      # a constant response: only centred
    if (is.matrix(init$alpha) && !is.null(init$y_scale))
      init$alpha <- init$alpha / init$y_scale
    ctl <- if (method == "bayes") bayes_control_standard(control, s) else control
    # rounded to multiples of 2^-36 (sd units): responses that differ only in their units give
    # the solver the same bits, hence the same iterations, whatever its tolerance
    ys <- round((y - mu) / s * 2^36) / 2^36
    res <- fitfun(store, ys, task, C, ctl, init)
    res$alpha <- res$alpha * s
    res$b <- res$b * s + mu
    if (!is.null(res$fitted_decision)) res$fitted_decision <- res$fitted_decision * s + mu
    if (is.matrix(res$state$alpha)) res$state$alpha <- res$state$alpha * s
    res$state$y_scale <- s
    if (method == "bayes") res <- bayes_response_scale(res, s, length(y), control)
    res$info$y_center <- mu
    res$info$y_scale <- s
    res
  }
}

# The default C of a regression (mkl()) and the default grid of cv.mkl() for one: on the
# standardised response kernel ridge (uniform) is best near C = 10-30 and SpicyMKL near 3-10
# on the sets of inst/benchmarks/bench-regression.R, so the default is 10 and the grid runs
# from 10^4 (nearly interpolating) down to 0.1 (NOTES-regression.md).
regression_C <- 10
regression_C_grid <- function() 10^seq(4, -1, by = -0.25)

# The widths of the Gaussian kernels that default_kernels() adds on each standardised feature
# for a regression by SpicyMKL, whose sparse weights keep the features that matter; kernel
# ridge (uniform) cannot leave out those of irrelevant features, and Empirical Bayes gains
# little for several times the time (NOTES-regression.md).
regression_each_widths <- function(method) if (identical(method, "spicy")) c(0.5, 1, 2)

