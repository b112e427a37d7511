# Solver internals a user rarely touches, apart from the settings of mkl_control(): SpicyMKL's
# tuning knobs, their defaults and checks. mkl_control(tuning = spicy_tuning(...)) carries them
# to method_control(), which puts them, flat, beside the method's settings (R/control.R).

# SpicyMKL's knobs with their defaults (measurements behind them: inst/notes/NOTES-spicy.md).
.spicy_tuning <- list(inner_tol = 1e-6, inner_maxiter = 100L, cg = NA, cg_threshold = 250L,
                      newton_cache = FALSE, model_rounds = NA_integer_, cg_deflate = 32L,
                      newton_float = TRUE, slack_ratio = 0.01, inner_rel = 0.1, svm_dual = TRUE,
                      box_fraction = 0.5, screening = TRUE, lazy_screening = TRUE,
                      gamma = NA_real_, gamma_scale = 5, gamma_b = 1, gamma_mult = 10,
                      gamma_max = 1e8, warm_shrink = 100, row_start = NA_integer_,
                      row_gamma = 10)

# The tuning tables, by control family, with the function that makes them.
.control_tuning <- list(spicy = list(fun = "spicy_tuning", defaults = .spicy_tuning))

#' Tuning of the SpicyMKL solver
#'
#' The internals of SpicyMKL's proximal-point and Newton iterations, for experiments and
#' benchmarks; the defaults are what the package's measurements chose, and a fit's certified
#' duality gap (`mkl_control(tol = )`) holds whatever they are. Give them per call as
#' `mkl(..., method = "spicy", control = mkl_control(tuning = spicy_tuning(...)))`; another
#' method refuses them. Like [mkl_control()], `spicy_tuning()` records only what you set.
#'
#' @param inner_tol,inner_maxiter tolerance (1e-6) and iteration bound (100) of the inner Newton
#'   loop. The tolerance is relaxed while the certified gap is large (see `inner_rel`).
#' @param cg conjugate-gradient Newton solve: `TRUE`, `FALSE`, or `NA` (the default) from
#'   `cg_threshold` (250) observations on.
#' @param cg_threshold see `cg`.
#' @param newton_cache keep the kernel part of the Newton matrix between Newton steps and
#'   rebuild it only when the kernels' weights in it have moved by more than a tenth of their
#'   sum: one more n x n matrix in memory, and a Newton step reads the active kernels only at a
#'   rebuild. `FALSE` (the default: the relaxed inner tolerance makes the inner loops so short
#'   that it was rebuilt at most steps), `TRUE`, or `NA` with the conjugate-gradient solve.
#' @param model_rounds hinge loss with the conjugate-gradient solve: the Newton direction is
#'   refined by up to this many rounds of an active-set method on a model of the inner
#'   objective that keeps the hinge's slack pieces exact, so that coordinates crossing a slack
#'   kink no longer cut the Newton steps short; each round is one conjugate-gradient solve and
#'   reads no kernel. `NA` (the default): 5, and 20 on the low-rank store (where a round is one
#'   Woodbury solve); 0 for the plain Newton direction.
#' @param cg_deflate the rounds' conjugate-gradient solves start from, and stay conjugate to,
#'   the span of up to this many search directions of the Newton step's earlier solves (whose
#'   matrices differ from theirs only on the diagonal). 32, and 0 for plain solves.
#' @param newton_float with the conjugate-gradient solve from 512 observations, the Newton
#'   matrix is kept in single precision, its diagonal and the bias term in double: half the
#'   memory and half the bytes per product; gradient, line search and duality gap stay in
#'   double, so the certified optimum is the same. `TRUE`, and `FALSE` for a double-precision
#'   matrix.
#' @param slack_ratio hinge loss with the conjugate-gradient solve: the proximal parameter of
#'   the slack variables is `slack_ratio` times the kernels' `gamma` (0.01; softer slack walls
#'   cut fewer Newton steps short; 1 gives them the kernels' parameter).
#' @param inner_rel an inner Newton loop stops once the gradient norm is below
#'   `max(inner_tol, inner_rel * (P - D) / n) * sqrt(n)` (from its second Newton step on), with
#'   `P - D` the absolute duality gap of the previous outer iteration or of the starting point:
#'   far from the optimum the inner problems need not be solved to `inner_tol`. 0.1, tightened
#'   tenfold after any outer iteration that does not reduce the gap, and 0 for the fixed
#'   `inner_tol`.
#' @param svm_dual hinge loss with the block 1-norm: when the certified gap is above `tol` by at
#'   most a factor of 2, a second dual point is tried, the SVM dual on the kernels combined with
#'   the current weights, and the better one certifies (`TRUE`).
#' @param box_fraction hinge loss with the conjugate-gradient solve and the model direction:
#'   from the second outer iteration on, once at most this fraction of the dual coordinates lies
#'   strictly inside the hinge's box, the inner problems keep the dual variables in the box
#'   instead of using slack variables, and each Newton direction solves its model on the box by
#'   an active-set method on the coordinates not held at a bound; the switch costs one pass over
#'   the kernels. 0.5, and 0 for never; a Newton step whose active-set loop does not settle
#'   makes the fit leave the box for good. `info$box_from` and `info$box_left` give the outer
#'   iterations of the switch and of the leaving (0 if none, `NA` where the box does not apply).
#' @param screening,lazy_screening kernel screening (`TRUE`; `FALSE` is for testing).
#'   `lazy_screening`: kernels outside the working set are screened on the step the line search
#'   accepts, not on the whole Newton step.
#' @param gamma,gamma_b initial proximal parameters of the kernels and of the bias. `gamma = NA`
#'   (the default) starts at `gamma_scale / C`, times `(n / 500)^0.75` above 500 observations,
#'   so that large problems need about as many outer iterations as small ones; `gamma_b` 1.
#' @param gamma_scale see `gamma` (5).
#' @param gamma_mult the growth factor of the proximal parameters (10), applied after each
#'   outer iteration whose inner Newton loop converged, and after at most two unconverged ones
#'   in a row.
#' @param gamma_max their cap (1e8). Each outer iteration whose inner loop was solved before its
#'   first Newton step and that still did not reduce the gap tightens `inner_tol` tenfold, down
#'   to `1e-6 * inner_tol`; the first two such iterations of a fit also step the parameters back
#'   by `gamma_mult` and cap them there (`info$gamma_backoffs`).
#' @param warm_shrink a warm start resumes at the previous final `gamma` divided by this (100).
#' @param row_start on the low-rank store, first fit this many training rows (spread over each
#'   class, `C` scaled to them) and start the fit on all rows from their solution, when there
#'   are at least twice as many rows. Several increasing sizes nest: each subsample's fit starts
#'   from the next smaller one. `NA` (the default): from 5000 rows on the low-rank store, sizes
#'   growing from 1000 rows by equal factors of at most 10 (1000 at 5000 rows; 1000 and 4472 at
#'   20,000; 1000 and 10,000 at 100,000), else none; 0 starts cold. The counts of the subsample
#'   fits are in `fit$info$row_start` (a value per size, smallest first); the duality gap is
#'   that of the fit on all rows. With `mkl_control(store = "dense")` or `"fly"` a positive value
#'   is an error.
#' @param row_gamma with a row start, every fit of the chain (the subsamples' and the fit on
#'   all rows) begins with its `gamma` (the default or the one given) times this (10).
#' @return A list of class `"mkl_tuning"` holding the settings given, for
#'   `mkl_control(tuning = )`.
#' @seealso [mkl_control()] for the settings of every method.
#' @examples
#' spicy_tuning(box_fraction = 0)
#' ctl <- mkl_control(tol = 1e-3, tuning = spicy_tuning(model_rounds = 0, cg = TRUE))
#' @export
spicy_tuning <- function(inner_tol = NULL, inner_maxiter = NULL, cg = NULL, cg_threshold = NULL,
                         newton_cache = NULL, model_rounds = NULL, cg_deflate = NULL,
                         newton_float = NULL, slack_ratio = NULL, inner_rel = NULL,
                         svm_dual = NULL, box_fraction = NULL, screening = NULL,
                         lazy_screening = NULL, gamma = NULL, gamma_b = NULL, gamma_scale = NULL,
                         gamma_mult = NULL, gamma_max = NULL, warm_shrink = NULL,
                         row_start = NULL, row_gamma = NULL) {
  set <- mget(names(formals(spicy_tuning)), environment())
  set <- set[!vapply(set, is.null, logical(1))]
  structure(check_spicy_tuning(set), class = "mkl_tuning", family = "spicy")
}

#' @export
print.mkl_tuning <- function(x, ...) {
  cat(sprintf("<%s>", .control_tuning[[attr(x, "family")]]$fun),
      if (length(x)) "" else "(all defaults)", "\n")
  if (length(x)) utils::str(unclass(x)[names(x)], no.list = TRUE, give.head = FALSE)
  invisible(x)
}

# The checks of SpicyMKL's knobs (for spicy_tuning(), and for the plain lists of internal calls).
check_spicy_tuning <- function(s) {
  flag <- function(nm, na_ok = FALSE) if (!is.null(s[[nm]])) {
    v <- s[[nm]]
    if (!is.logical(v) || length(v) != 1L || (!na_ok && is.na(v)))
      stop(sprintf("'%s' must be TRUE or FALSE%s", nm, if (na_ok) " (or NA)" else ""),
           call. = FALSE)
  }
  for (nm in c("inner_tol", "gamma_scale", "gamma_b", "warm_shrink", "gamma_max", "slack_ratio",
              "row_gamma"))
    if (!is.null(s[[nm]])) s[[nm]] <- check_scalar(s[[nm]], nm, 0, lower_open = TRUE)
  if (!is.null(s[["inner_rel"]]))
    s[["inner_rel"]] <- check_scalar(s[["inner_rel"]], "inner_rel", 0)   # 0: inner_tol only
  if (!is.null(s[["box_fraction"]]))
    s[["box_fraction"]] <- check_scalar(s[["box_fraction"]], "box_fraction", 0, 1)   # 0: never
  if (!is.null(s[["row_start"]])) s[["row_start"]] <- check_row_start(s[["row_start"]])
  for (nm in c("inner_maxiter", "cg_threshold")) if (!is.null(s[[nm]]))
    s[[nm]] <- check_count(s[[nm]], nm)
  if (identical(s[["model_rounds"]], NA) || identical(s[["model_rounds"]], NA_integer_))
    s[["model_rounds"]] <- NA_integer_   # the default by the store (R/spicy.R)
  for (nm in c("model_rounds", "cg_deflate")) {
    v <- s[[nm]]
    if (is.null(v) || (nm == "model_rounds" && identical(v, NA_integer_))) next
    if (!is.numeric(v) || length(v) != 1L || is.na(v) || v < 0 || v > 1000 || v != round(v))
      stop(sprintf("'%s' must be a whole number from 0 to 1000", nm), call. = FALSE)
    s[[nm]] <- as.integer(v)
  }
  for (nm in c("screening", "lazy_screening", "svm_dual", "newton_float")) flag(nm)
  flag("cg", na_ok = TRUE)
  flag("newton_cache", na_ok = TRUE)
  if (!is.null(s[["gamma_mult"]]))
    s[["gamma_mult"]] <- check_scalar(s[["gamma_mult"]], "gamma_mult", 1)
  if (!is.null(s[["gamma"]]) && !(length(s[["gamma"]]) == 1L && is.na(s[["gamma"]])))
    s[["gamma"]] <- check_scalar(s[["gamma"]], "gamma", 0, lower_open = TRUE)
  s
}

# row_start: NA (the default by the store and n), one subsample size (0: none), or increasing
# sizes of nested subsamples
check_row_start <- function(v) {
  if (identical(v, NA) || identical(v, NA_integer_) || identical(v, NA_real_)) return(NA_integer_)
  if (length(v) <= 1L) return(check_count(v, "row_start", lower = 0))
  v <- vapply(v, check_count, 1L, name = "row_start", lower = 1)
  if (is.unsorted(v, strictly = TRUE))
    stop("'row_start' with several sizes must be increasing", call. = FALSE)
  v
}

# The knobs of a tuning table given to mkl_control(): refused, saying where they went.
refuse_tuning_names <- function(nms) {
  for (fam in names(.control_tuning)) {
    moved <- intersect(nms, names(.control_tuning[[fam]]$defaults))
    if (length(moved) == 0L) next
    fun <- .control_tuning[[fam]]$fun
    stop(sprintf(paste0("%s: tuning of method %s, set by %s(), not by mkl_control(); give ",
                        "mkl_control(tuning = %s(%s))"),
                 paste0("'", moved, "'", collapse = ", "),
                 paste0("'", methods_where(function(e) e$control == fam), "'", collapse = ", "),
                 fun, fun, paste0(moved, " = ...", collapse = ", ")), call. = FALSE)
  }
}
