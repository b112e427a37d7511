#' Fit a multiple kernel learning model
#'
#' The single entry point of the package. `mkl()` validates its arguments, builds the
#' normalised kernel matrices in C, and hands them to the solver selected by `method`.
#' Every solver returns the same kind of object (class `"mkl"`), with [print()],
#' [summary()], [predict()], [coef()] and [plot()] methods.
#'
#' @section Methods:
#' * `"uniform"`: equal kernel weights \eqn{1/M}; an SVM (hinge loss) for classification,
#'   kernel ridge regression (squared loss, ridge \eqn{1/C}) for a numeric response.
#' * `"spicy"`: SpicyMKL (Suzuki and Tomioka 2009), block 1-norm or elastic-net penalty; its
#'   solver internals are set by [spicy_tuning()].
#' * `"simple"`, `"hessian"`, `"lp"`: SimpleMKL, HessianMKL and lp-norm MKL on the SMO SVM.
#' * `"l01"`: MKL-L0/1-SVM (Shi and Zhu), the 0/1 loss by ADMM, classification; `C` and the
#'   penalties `rho1`-`rho3` are on the scale of kernels with unit mean diagonal (whatever the
#'   normalisation), and `fit$info$n_sv` is the number of support vectors (the working set).
#' * `"bayes"`: Empirical Bayesian MKL (Tomioka and Suzuki): Gaussian-process regression with
#'   kernel variances \eqn{d_m} and noise variance \eqn{\sigma^2} that maximise the marginal
#'   likelihood, by MacKay's update and, near the optimum, projected Fisher-scoring steps
#'   (safeguarded so that the negative log marginal likelihood, `fit$objective`, never
#'   increases); squared loss, classification by the sign of the fit.
#'   It has no regularisation constant: a `C` given with it is an error (the fit records
#'   `C = NA`). `fit$info$d` and `fit$info$sigma2` are the learned variances; `weights` are
#'   `d / sum(d)`. Settings: `sigma2`, `bias`, `prune`, `update`, `safeguard` in
#'   [mkl_control()].
#' * `"mwu"`: MWUMKL (Moeller et al. 2014): matrix multiplicative weights on the 2-norm
#'   soft-margin MKL dual (hard margin with `C = Inf`), `epsilon` (default 0.2) its
#'   approximation parameter, `ceiling(2 * log(n) / epsilon^2)` iterations that each read two
#'   columns of every kernel, so kernels are computed on the fly by default in O(nM) memory
#'   (about `8 * n * M` bytes, where polynomial and linear kernels on one column do not count:
#'   they need a few numbers each; a million kernels on 200 points take 1.7 GB, or 1.25 GB
#'   when a quarter are such polynomial kernels as in `random_kernels(design = "mwu")`; 12
#'   kernels on 20,000 points 2 MB). Classification only. The sample coefficients are kept as
#'   the two factors of their outer product ([mkl_outer]). The weights it learns on unit-trace
#'   kernels stay close to uniform (within a few percent) unless a kernel's
#'   \eqn{\sqrt{\alpha' G_m \alpha}} is large; `mkl_control(refit = TRUE)` refits the hinge SVM
#'   on the learned combination (the paper's two-stage use; better accuracy when the kernels
#'   are many and weak, at the cost of an n x n kernel). See `vignette("mwu")`.
#'
#' @section Kernel storage:
#' With a [kernel_set()], `mkl()` builds the normalised n x n x M kernel array when it fits the
#' memory budget `mkl_control(memory = )` (default: half of the machine's memory) and otherwise
#' computes kernel columns on the fly from the data, in O(nM) memory but with more arithmetic
#' (each pass over the kernels re-evaluates them); `mkl_control(store = "dense")` or `"fly"`
#' forces either. `fit$store` says which was used. Predictions are always computed on the fly,
#' for the kernels with non-zero weight only. Precomputed kernels are used as given (dense).
#'
#' [mkl_methods()] lists the methods; `mkl_methods(details = TRUE)` says what each supports (tasks,
#' losses, penalties, stores, warm starts, multiclass, the conversion of C).
#'
#' @section Multiclass:
#' A factor (or character) response of more than two classes is fitted by every
#' classification method as binary problems, each with its own kernel weights: one per class
#' against the rest (`multiclass = "ovr"`, the default: K problems on all n rows, and the
#' weights say which kernels each class uses) or one per pair of classes (`"ovo"`: K(K - 1) / 2
#' smaller problems on the rows of the pair, which pays for solvers whose cost grows faster
#' than linearly in n, as the SVM-based ones do; but with a dense store each pair's rows and
#' columns of the kernel array are copied, which costs about as much as a fast solver's fit).
#' The kernels are built once: every problem reads the same store (one-vs-one: the principal
#' submatrix of the pair's points, copied from a dense array or computed on the fly from their
#' rows, never rebuilt), with the normalisation of all the training data, and `C` is converted
#' with the scale of these kernels (their mean diagonal on all the training data) for every
#' problem, so a one-vs-one problem equals `mkl()` on the pair's submatrix of precomputed
#' kernels when the kernels have a constant diagonal (Gaussian kernels).
#' The binary problems run one after the other (with the store's threads); on a store computed
#' on the fly they run through `future.apply` when the `future` plan has several workers. A
#' binary fit that does not converge warns, naming its class(es). The result is an
#' `"mkl_multi"` object ([predict.mkl_multi()]: classes, decision values, class
#' probabilities; [coef.mkl_multi()]: a kernel-by-problem weight matrix); a vector `C` gives
#' an `"mkl_path"` of them, each problem warm-started along the path. `init` is for binary and
#' regression fits.
#'
#' @section The meaning of C:
#' `C` has one meaning for every method: the SVM box constant on the scale of kernels with
#' unit mean diagonal (the scale on which `e1071::svm()` and `kernlab::ksvm()` use `C = 1`), so
#' larger C regularises less and the default `C = 1` is useful whatever n. The solvers work
#' on the kernels as stored (unit trace by default, entries of order 1/n), and `mkl()`
#' converts C for them in one place, with `kscale`, the mean diagonal of the stored kernels
#' (about 1/n for unit-trace kernels; `fit$kscale`):
#' * box constant (uniform, simple, hessian, lp; and the ridge constant of uniform
#'   regression): `C / kscale`, about `C n` for unit-trace kernels;
#' * SpicyMKL's penalty weight: `sqrt(n kscale) / (2 C)`, that is `1 / (2 C)` for unit-trace
#'   kernels. SpicyMKL then solves the SVM-family problem whose box constant is
#'   `fit$info$C_svm` (from `sum_m ||f_m|| / C_spicy`, the block norms of its solution).
#' * l01: its front end converts C and its penalties with the same `kscale`.
#' * mwu: `C` is the 2-norm soft-margin constant (squared hinge) on the same scale; MWUMKL
#'   renormalises each kernel to unit trace, so its constant is `C n`. `C = Inf` is the hard
#'   margin.
#'
#' The solver constant used is `fit$info$C_solver`. Earlier versions of mklearn passed C
#' to the solvers unchanged; to reproduce such a fit on unit-trace kernels of n points, give
#' `C = C_old / n` (box constants, more exactly `C_old * (1/n + jitter)`) or
#' `C = 1 / (2 C_old)` (SpicyMKL).
#'
#' @param x a numeric matrix or data frame of numeric columns (n x p); may be `NULL` (or omitted)
#'   when `kernels` are precomputed. For the formula method, a formula.
#' @param y the response: a two-level factor, a numeric vector in \{-1, 1\} or \{0, 1\}
#'   (classification), or a numeric vector (regression).
#' @param kernels a [kernel_set()], or precomputed training kernels: an n x n x M array or a
#'   list of n x n matrices (symmetric, positive semidefinite; used as given). They are
#'   checked at the cost of one pass over the array by default; `mkl_control(check_kernels =
#'   "full")` adds an eigenvalue check (see [mkl_control()]).
#' @param method the solver, one of [mkl_methods()] (default `"uniform"`), see Methods.
#' @param C regularisation constant(s) (positive): the SVM box constant on the scale of
#'   kernels with unit mean diagonal, for every method (larger C, less regularisation; see
#'   "The meaning of C"); `Inf` (the hard margin) with `method = "mwu"`. Default 1, and 10 for
#'   a regression (fitted on the standardised response, see `task`). A strictly decreasing
#'   vector fits the whole path with warm starts and returns an `"mkl_path"`.
#' @param loss `"hinge"` or `"logistic"` (classification), `"squared"` or `"epsilon"`
#'   (regression). Default: hinge for classification, squared for regression.
#' @param penalty `"l1"` (block 1-norm) or `"elasticnet"` (SpicyMKL).
#' @param lambda elastic-net mixing parameter in \[0, 1\].
#' @param p the norm of lp-norm MKL (`method = "lp"`), `p >= 1`.
#' @param epsilon SpicyMKL (`loss = "epsilon"`): the width of the epsilon-insensitive loss
#'   (default 0.1), in units of the response's standard deviation; MWUMKL: the approximation
#'   parameter in (0, 1) (default 0.2; smaller is more accurate and takes \eqn{1/\epsilon^2}
#'   times longer). The `2 log(n) / epsilon^2` steps
#'   each put weight on two training points, so with thousands of points 0.2 can leave too few
#'   of them in the classifier: the paper chose 0.07 or 0.05 by cross-validation for its
#'   large sets (on 8,000 points of a nearly linear problem, training accuracy 0.74 at 0.2,
#'   0.88 at 0.1 and 0.05, against 0.87 for the uniform SVM).
#' @param standardize how the columns of `x` are scaled before the kernels are computed
#'   (stored and re-applied by `predict`): `TRUE` or `"zscore"` (mean 0, sd 1), `"range"`
#'   (to \[0, 1\] on the training data, as in the MWUMKL paper), `FALSE` (as given).
#' @param task `"classification"` or `"regression"`; guessed from `y` when `NULL`. A regression
#'   is fitted on the standardised response (mean 0, standard deviation 1) and reported on the
#'   response's scale (`fitted`, `b`, `alpha`, predictions; `fit$info$y_center` and
#'   `fit$info$y_scale` record the transformation; `objective` and `history` are those of the
#'   standardised problem, except for `"bayes"`), so scaling `y` scales every prediction alike.
#' @param control settings from [mkl_control()]; a setting the chosen method does not read is
#'   an error.
#' @param init a previous fit of the same method on the same data, to warm-start from.
#' @param multiclass for a response of more than two classes: `"ovr"` (one-vs-rest, the
#'   default) or `"ovo"` (one-vs-one); see Multiclass. An error for other responses.
#' @param ... for the formula method, arguments passed to the default method.
#' @return An object of class `"mkl"` (or `"mkl_path"` for a vector `C`; `"mkl_multi"` for
#'   more than two classes, see [mkl_multi]), a list with
#'   `call`, `method`, `task`, `loss`, `penalty`, `C`, `kscale` (the mean diagonal of the
#'   training kernels, see "The meaning of C"), `learned_nothing` (`NULL`, or why the model
#'   is constant), `weights` (named kernel weights, on
#'   the simplex), `alpha` (n x M sample coefficients: \eqn{f(x) = \sum_m K_m(x, X)
#'   \alpha_m + b}; MWUMKL keeps them as the two factors of an outer product, see
#'   [mkl_outer], and `as.matrix()` gives the matrix), `b`, `converged`, `iterations`,
#'   `history` (a data frame per iteration), `objective`, `fitted` (training decision values),
#'   `timing`, `store` (`"dense"` or `"fly"`), and what `predict` needs to rebuild the test
#'   kernels (the kernel set, the training data and normalisation).
#' @seealso [kernel_set()], [predict.mkl()], [mkl_control()]
#' @examples
#' data(iris)
#' d <- iris[iris$Species != "setosa", ]
#' d$Species <- droplevels(d$Species)
#' ks <- kernel_set(rbf_kernel(sigma = c(0.5, 1, 2)), poly_kernel(1:2),
#'                  features = c("all", "each"))
#' fit <- mkl(Species ~ ., data = d, kernels = ks, method = "uniform")
#' fit
#' mean(predict(fit, d) == d$Species)
#' head(coef(fit))
#' @export
mkl <- function(x, ...) {
  # precomputed kernels need no 'x': mkl(y = y, kernels = K) is mkl(NULL, y, kernels = K)
  if (missing(x)) {
    cl <- match.call()
    fit <- mkl.default(x = NULL, ...)
    fit$call <- cl
    if (inherits(fit, "mkl_path"))
      for (i in seq_along(fit$fits)) fit$fits[[i]]$call <- cl
    return(fit)
  }
  UseMethod("mkl")
}

#' @rdname mkl
#' @param data a data frame for the formula method.
#' @export
mkl.formula <- function(x, data, ...) {
  formula <- x
  cl <- match.call()
  cl[[1L]] <- as.name("mkl")      # so that update() calls the generic
  if (missing(data)) stop("the formula interface needs 'data'", call. = FALSE)
  des <- formula_design(formula, data)
  fit <- mkl.default(des$x, des$y, ...)
  tt <- des$terms
  attr(tt, ".Environment") <- NULL
  add_formula <- function(f) {
    f$call <- cl
    f$terms <- stats::delete.response(tt)
    f$xlevels <- stats::.getXlevels(tt, des$frame)
    f$contrasts <- attr(des$x, "contrasts")
    f
  }
  if (inherits(fit, "mkl_path")) {
    fit$fits <- lapply(fit$fits, add_formula)
    fit$call <- cl
    fit
  } else add_formula(fit)
}

#' @rdname mkl
#' @export
mkl.default <- function(x = NULL, y, kernels = kernel_set(rbf_kernel(c(0.5, 1, 2, 5)),
                                                   poly_kernel(1:2)),
                        method = mkl_methods(), C = 1,
                        loss = NULL, penalty = c("l1", "elasticnet"), lambda = 0.5, p = 2,
                        epsilon = NULL, standardize = TRUE, task = NULL,
                        control = mkl_control(), init = NULL, multiclass = c("ovr", "ovo"),
                        ...) {
  cl <- match.call()
  cl[[1L]] <- as.name("mkl")      # so that update() calls the generic
  given <- c(p = !missing(p), lambda = !missing(lambda), epsilon = !missing(epsilon),
             multiclass = !missing(multiclass))
  if (length(list(...)))
    stop(sprintf("unused argument(s): %s", paste(names(list(...)), collapse = ", ")),
         call. = FALSE)
  if (inherits(kernels, "mkl_kernel"))
    stop(family_not_set("kernels"), call. = FALSE)
  method <- match.arg(method)
  penalty <- match.arg(penalty)
  fitfun <- response_fit(method)   # regression: on the standardised response (R/response.R)
  check_method_C(method, C, !missing(C))
  if (!is.null(task)) task <- match.arg(task, c("classification", "regression"))
  lambda <- check_scalar(lambda, "lambda", 0, 1)
  p <- check_scalar(p, "p", 1)
  epsilon <- check_method_epsilon(method, epsilon)
  standardize <- check_standardize(standardize)
  if (!inherits(control, "mkl_control"))
    stop("'control' must be a list made by mkl_control()", call. = FALSE)
  multiclass <- check_multiclass(multiclass, given[["multiclass"]])
  ctl <- method_control(method, control)

  precomputed <- !inherits(kernels, "kernel_set")
  if (!precomputed && is.null(x))
    stop("'x' is needed to build the kernels of a kernel_set", call. = FALSE)
  if (!precomputed && !is.null(unclass(control)[["check_kernels"]]))
    stop(paste0("'check_kernels' is for precomputed kernels; the kernels of a kernel_set are ",
                "positive semidefinite by construction"), call. = FALSE)
  t0 <- proc.time()[["elapsed"]]
  if (precomputed) {
    if (!is.null(x)) x <- check_x(x)
    Karr <- as_kernel_array(kernels, NULL, check = ctl$check_kernels, nthreads = ctl$nthreads)
    n <- dim(Karr)[1]
    if (NROW(y) != n)
      stop(sprintf("precomputed kernels are %d x %d but there are %d observations in 'y'",
                   n, n, NROW(y)), call. = FALSE)
    if (!is.null(x) && nrow(x) != n)
      stop(sprintf("'x' has %d rows but the precomputed kernels are %d x %d", nrow(x), n, n),
           call. = FALSE)
  } else {
    x <- check_x(x)
    n <- nrow(x)
  }
  yc <- check_y(y, n, task, multiclass = TRUE)
  task <- yc$task
  if (missing(C) && task == "regression" && takes_C(method)) C <- regression_C  # R/response.R
  multi <- isTRUE(yc$multi)
  if (given[["multiclass"]] && !multi)
    stop(sprintf(paste0("'multiclass' is for a response of more than two classes; this one %s"),
                 if (task == "regression") "is numeric (regression)" else "has two"),
         call. = FALSE)
  loss <- check_method_model(method, task, loss, penalty, given[c("p", "lambda", "epsilon")])
  if (multi && !method_info(method)$multiclass)
    stop(sprintf("method '%s' does not fit more than two classes", method), call. = FALSE)
  if (!is.null(init) && !inherits(init, "mkl"))
    stop("'init' must be a previous mkl fit", call. = FALSE)
  if (!is.null(init) && !method_info(method)$warm_start)
    stop(sprintf("method '%s' has no warm start: %s", method, method_info(method)$no_warm_start),
         call. = FALSE)
  if (!is.null(init) && multi)
    stop(paste0("'init' warm-starts a binary or regression fit; a multiclass fit warm-starts ",
                "each binary problem along a path (a decreasing vector 'C') instead"),
         call. = FALSE)

  # --- kernels: the store (dense array, or columns computed on the fly); the time of the
  # kernels includes the checks of precomputed kernels
  if (!precomputed) t0 <- proc.time()[["elapsed"]]
  std <- NULL
  if (precomputed) {
    M <- dim(Karr)[3]
    labels <- dimnames(Karr)[[3]]
    if (is.null(labels)) labels <- paste0("K", seq_len(M))
    store <- as_store(Karr)      # used as given: no copy, no normalisation
    store$nthreads <- ctl$nthreads
    store$scale <- rep(1, M)
    rm(Karr)
    rk <- NULL
    kset <- "precomputed"
  } else {
    if (standardize != "none") {
      std <- standardize_x(x, standardize)
      xs <- std$x
    } else xs <- x
    rk <- resolve_kernels(kernels, ncol(x), colnames(x))
    M <- nrow(rk$table)
    labels <- rk$labels
    check_chisq_data(rk, xs, seq_len(M))
    kind <- choose_store(ctl$store, kernel_bytes(n, n, M), ctl$memory, method, n, M)
    store <- if (kind == "dense") dense_store(rk, xs, ctl$nthreads) else
      fly_store(rk, xs, ctl$nthreads)
    kset <- kernels
  }
  t_kernels <- proc.time()[["elapsed"]] - t0
  if (!is.null(init)) {
    if (init$method != method || nrow(init$alpha) != n || ncol(init$alpha) != M)
      stop("'init' must be a fit of the same method on data of the same size and kernels",
           call. = FALSE)
  }

  ctl$loss <- loss; ctl$penalty <- penalty; ctl$lambda <- lambda; ctl$p <- p
  ctl$epsilon <- epsilon
  e <- method_info(method)
  base <- list(method = method, task = task, loss = loss,
               penalty = if (!is.null(e$penalties)) penalty,
               lambda = if (!is.null(e$args$lambda) && penalty == "elasticnet") lambda,
               p = if (!is.null(e$args$p)) p,
               epsilon = if (reads_epsilon(method, loss)) epsilon,
               kernels = kset, kernel_info = rk, labels = labels,
               store = if (precomputed) "dense" else code_name("store", store$kind),
               normalization = list(scale = store$scale, colmeans = store$colmeans,
                                    grandmean = store$grandmean),
               x = if (precomputed) NULL else xs,
               xnames = if (is.null(x)) NULL else colnames(x),
               p_x = if (is.null(x)) NA_integer_ else ncol(x),
               standardize = if (is.null(std)) NULL else std[c("center", "scale")],
               y = yc$y, classes = yc$classes, nobs = n, M = M)
  state <- if (is.null(init)) NULL else restore_state(init)
  # C on the scale of unit-diagonal kernels, converted for the solver in one place (R/cscale.R)
  kscale <- kernel_scale(store)
  base$kscale <- kscale
  if (multi)
    return(fit_multiclass(fitfun, store, yc, C, ctl, base, cl, t_kernels, multiclass))
  fits <- fit_store_path(fitfun, store, yc$y, C, ctl, base, state, cl, t_kernels,
                         tick = mk_progressor(length(C)))
  if (length(C) == 1L) return(fits[[1L]])
  structure(list(call = cl, method = method, C = C, fits = fits), class = "mkl_path")
}

# One binary or regression problem along the C path on a training store (shared by every
# problem of a multiclass fit): the solver per C, warm-started from the previous C, each result
# an "mkl" object. 'what' names the problem in warnings; 'tick' reports progress per C.
# quiet: the fits report no progress of their own (a path, or a problem of a multiclass fit,
# reports a step per fit instead: R/progress.R).
fit_store_path <- function(fitfun, store, y, C, ctl, base, state, cl, t_kernels, what = "",
                           tick = NULL, quiet = length(C) > 1L) {
  force(tick)   # a progressor made at the caller's depth, before the fits are quieted
  if (quiet) {
    old <- progress_quiet()
    on.exit(progress_restore(old))
  }
  method <- base$method
  task <- base$task
  kscale <- base$kscale
  n <- length(y)
  fits <- vector("list", length(C))
  for (k in seq_along(C)) {
    t1 <- proc.time()[["elapsed"]]
    Cs <- solver_C(method, C[k], kscale, n)
    res <- fitfun(store, y, task, Cs, ctl, state)
    t_fit <- proc.time()[["elapsed"]] - t1
    if (is.matrix(res$alpha) && ncol(res$alpha) == base$M)
      colnames(res$alpha) <- base$labels   # in place: the result is not shared yet
    state <- res$state
    res$info$C_solver <- Cs
    finish <- method_info(method)$finish
    if (!is.null(finish)) res$info <- finish(res$info, base, Cs)
    fits[[k]] <- new_mkl(res, base, if (takes_C(method)) C[k] else NA_real_, store, cl,
                         c(kernels = t_kernels, fit = t_fit))
    if (!isTRUE(res$converged))
      warning(sprintf("%s did not converge%s%s within %d iterations (last relative gap %s): %s",
                      method, at_C(method, C[k]), what, as.integer(res$iterations),
                      format(signif(utils::tail(res$history$gap, 1L), 3)),
                      nonconvergence_advice(method, res, ctl)), call. = FALSE)
    if (!is.null(fits[[k]]$learned_nothing))
      warning(sprintf("%s%s%s learned nothing: %s", method, at_C(method, C[k]), what,
                      fits[[k]]$learned_nothing), call. = FALSE)
    if (!is.null(tick)) tick(sprintf("%s%s%s", method, at_C(method, C[k]), what))
  }
  fits
}

new_mkl <- function(res, base, C, store, call, timing) {
  M <- base$M
  w <- as.double(res$weights)
  if (length(w) != M || anyNA(w)) stop("internal: solver returned malformed weights", call. = FALSE)
  names(w) <- base$labels
  alpha <- res$alpha
  if (!(is.matrix(alpha) || is_outer_alpha(alpha)) || nrow(alpha) != base$nobs ||
      ncol(alpha) != M)
    stop("internal: solver returned malformed alpha", call. = FALSE)
  if (is_outer_alpha(alpha)) alpha$v <- w   # the weights, named
  # (fit_store_path names the columns in place: renaming here would copy an n x M matrix that
  # the caller's result still holds, 1.6 GB for MWUMKL with 10^6 kernels)
  if (is.matrix(alpha) && !identical(colnames(alpha), base$labels))
    colnames(alpha) <- base$labels
  # a solver may give its active kernels and training decision values (mwu: every kernel is
  # active and a pass over all of them would cost O(n^2 M))
  act <- if (!is.null(res$active)) res$active else alpha_cols_nonzero(alpha)
  fitted <- if (!is.null(res$fitted_decision)) res$fitted_decision else if (length(act))
    store_decision(store, alpha_columns(alpha, act), act, base$kernel_info, act,
                   "the training data") + res$b else rep(res$b, base$nobs)
  # the fit keeps alpha once: a solver state that holds it (warm starts) gets it back from
  # the fit's alpha (restore_state)
  state <- res$state
  if (is.matrix(state$alpha)) {
    state$alpha <- NULL
    state$restore_alpha <- TRUE
  }
  # a fit that learned nothing: every kernel dropped, or (classification) a constant decision
  # function on two-class data; print(), summary() and mkl() say so
  fconst <- length(act) == 0L ||
    max(abs(fitted - res$b)) <= 1e-10 * max(1, abs(res$b), max(abs(fitted)))
  nothing <- if (fconst && (length(act) == 0L || base$task == "classification"))
    sprintf(paste0("%s; the model predicts %s for every point. Raise C (now %s; larger C ",
                   "regularises less) or use other kernels."),
            if (length(act) == 0L) "every kernel was dropped (all block norms are zero)" else
              "the decision function is constant on the training data",
            if (base$task == "classification")
              paste0("the class '", base$classes[if (res$b > 0) 2L else 1L], "'") else
                "a constant", format(C))
  obj <- c(list(call = call), base,
           list(C = C, weights = w, alpha = alpha, b = as.double(res$b),
                objective = res$objective, converged = isTRUE(res$converged),
                iterations = as.integer(res$iterations), history = as.data.frame(res$history),
                fitted = fitted, state = state, info = res$info, timing = timing,
                learned_nothing = nothing))
  if (obj$task == "classification") obj$platt <- platt_fit(fitted, base$y, obj$loss)
  class(obj) <- "mkl"
  obj
}

at_C <- function(method, C) if (takes_C(method)) sprintf(" at C = %s", format(C)) else ""

# What to change when a fit did not converge, naming only settings the method reads.
nonconvergence_advice <- function(method, res, ctl) {
  info <- res$info
  if (method_info(method)$control == "uniform")
    return(sprintf(paste0("the SMO solver stopped at its iteration cap; raise ",
                          "mkl_control(svm_maxiter = ) (now %d)"),
                   as.integer(ctl[["svm_maxiter"]])))
  tips <- character()
  hits <- info[["svm_maxiter_hits"]]
  if (!is.null(hits) && hits > 0L)
    tips <- c(tips, sprintf(paste0("the inner SVM stopped at its iteration cap in %d solve(s): ",
                                   "raise mkl_control(svm_maxiter = ) (now %d)"),
                            as.integer(hits), as.integer(ctl[["svm_maxiter"]])))
  if (identical(info[["stop_reason"]], "limit") && is.finite(ctl[["max_time"]]) &&
      res$iterations < ctl[["maxiter"]])
    tips <- c(tips, sprintf("the time limit was reached: raise mkl_control(max_time = ) (now %s)",
                            format(ctl[["max_time"]])))
  else if (is.null(hits) || hits == 0L || res$iterations >= ctl[["maxiter"]])
    tips <- c(tips, sprintf(paste0("raise mkl_control(maxiter = ) (now %d) or loosen ",
                                   "mkl_control(tol = ) (now %s)"),
                            as.integer(ctl[["maxiter"]]), format(ctl[["tol"]])))
  if (!is.null(info[["nonconvergence"]])) tips <- c(tips, info[["nonconvergence"]])
  paste(tips, collapse = "; ")
}

restore_state <- function(fit) {
  st <- fit$state
  if (isTRUE(st$restore_alpha)) {
    st$restore_alpha <- NULL
    st$alpha <- unname(fit$alpha)
  }
  st
}
