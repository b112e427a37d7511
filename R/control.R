# Solver settings: every default lives here, in one table per control family (a method's entry in
# R/registry.R names its family; tuning tables are in R/tuning.R). mkl_control() records what the
# user set; method_control() fills the rest for one method and refuses settings that method does
# not read. The solvers' R front ends turn the complete list into the named list C reads.

# Settings every method reads.
# progress: NA = automatic (fits that run longer than a couple of seconds), TRUE, FALSE
# platt: the decision values Platt's sigmoid is fitted on (R/platt.R)
.control_common <- list(tol = 0.01, nthreads = 0L, verbose = FALSE, memory = NA_real_,
                        store = "auto", check_kernels = "fast", progress = NA, platt = "cv",
                        rank = 200L, lowrank_tol = 1e-3)

# Method-specific settings with their defaults (NULL entries are derived, see method_control()).
# kcache (internal, undocumented: tests force a small cache with it): entries of the SVMs' column
# cache on the fly (src/kcache.c); NA: from the memory budget (kcache_entries(), R/memory.R).
# hess_free_max (internal, undocumented: tests force HessianMKL's step without curvature with
# it): most free SVs whose Gram matrix is formed, at most and by default (NA) C's limit.
# uniform cg_tol, cg_maxiter: kernel ridge on the fly (CG to relative residual cg_tol, at most
# cg_maxiter products; NOTES-store.md, "Kernel ridge on the fly"); kcols (internal, as kcache):
# K(d)'s summed columns there, NA from the budget (kcols_split(), R/memory.R)
.control_methods <- list(
  uniform = list(svm_tol = 1e-4, svm_maxiter = 10000000L, kcache = NA_integer_,
                 cg_tol = 1e-6, cg_maxiter = 1000L, kcols = NA_integer_),
  spicy = list(maxiter = 500L),   # and its tuning knobs, spicy_tuning() (R/tuning.R)
  # svmfam maxiter: SimpleMKL needs up to ~450 iterations at tol 0.01 on the papers' sets
  # (inst/notes/NOTES-svm-family.md); HessianMKL and lp-norm stop within 20
  svmfam = list(maxiter = 1000L, svm_tol = 1e-5, svm_maxiter = 10000000L, newton_tol = NULL,
                gold_tol = 0.1, line_search = "halving", max_time = Inf, kcache = NA_integer_,
                hess_free_max = NA_integer_),
  # l01: tol is the largest relative change of the eight ADMM blocks; C, rho1-3 are on the
  # scale of kernels with unit mean diagonal (R/l01.R); rho2 = rho3 = NULL:
  # 0.3 rho1 n max(1, M / 10)^1.25 over the M kernels let in (identity_cut, select: R/l01.R);
  # cg_tol = NULL: min(1e-6, tol / 10), below the block changes tol asks for (R/l01.R)
  l01 = list(tol = 3e-3, maxiter = 20000L, rho1 = 4, rho2 = NULL, rho3 = NULL,
             identity_cut = 1.5, start = "reference", svm_C = 1,
             b0 = 1, a0 = 0, warmup = 5L, warmup_size = NA_integer_, wstep = "auto",
             cg_tol = NULL, joint_wb = TRUE, freeze_T = 1000L,
             restarts = 0L, select = NULL, kcache = NA_integer_, kcols = NA_integer_),
  # bayes: tol bounds max_m |dJ / d log d_m| = d_m |t_m - q_m| / 2 (nats), Eq. 23's fixed point
  # scaled by each kernel's share of the fit; sigma2 = NA: the noise variance is estimated
  bayes = list(tol = 1e-4, maxiter = 2000L, sigma2 = NA_real_, bias = "center", prune = 1e-8,
               update = "scoring", accelerate = 64, safeguard = TRUE, sigma2_floor = 1e-10),
  # mwu: T = ceil(2 ratio log(n) / epsilon^2) iterations, no tolerance; cutoff: the overflow
  # cutoff of the closed-form exponential; refit: the two-stage SVM (svm_tol, svm_maxiter)
  mwu = list(ratio = 1, cutoff = 20, refit = FALSE, svm_tol = 1e-4, svm_maxiter = 10000000L)
)
# Common settings a method does not read (refused like any other unused setting).
.control_not_read <- list(mwu = c("tol", "rank", "lowrank_tol"))
# A family's settings read for one task only, refused by mkl() for the other.
.control_task_only <- list(uniform = c(cg_tol = "regression", cg_maxiter = "regression",
                                       kcols = "regression"))

# mkl()'s refusal, once the task is known, of a setting the method reads for the other task only.
check_control_task <- function(method, task, control) {
  only <- .control_task_only[[method_info(method)$control]]
  bad <- names(only)[only != task & names(only) %in% names(unclass(control))]
  if (length(bad))
    stop(sprintf("method '%s' reads the setting(s) %s for a %s only (kernel ridge on the fly)",
                 method, paste(bad, collapse = ", "), only[[bad[1L]]]), call. = FALSE)
  invisible()
}

# mkl()'s refusal of SpicyMKL's row start with a store it is not read on (the low-rank store
# only; "auto" may pick it).
check_row_start_store <- function(control) {
  rs <- unclass(control)$tuning[["row_start"]]
  st <- unclass(control)$store
  if (!is.null(rs) && isTRUE(any(rs > 0)) && !is.null(st) && !(st %in% c("auto", "lowrank")))
    stop(sprintf(paste0("spicy_tuning(row_start = ) starts a fit on the low-rank store only, and ",
                        "this call sets mkl_control(store = \"%s\"): use store = \"lowrank\" or ",
                        "\"auto\", or leave row_start at 0"), st), call. = FALSE)
  invisible()
}

#' Solver settings
#'
#' Every setting has one default, kept in one table per method; `mkl_control()` records only
#' what you set, and [mkl()] refuses a setting the chosen method does not read.
#'
#' @param tol relative duality-gap tolerance of the MKL solvers (the papers use 0.01). A fit
#'   is reported converged only when its certified gap is at most `tol`.
#' @param maxiter maximum number of outer iterations (SpicyMKL 500; SimpleMKL, HessianMKL,
#'   lp-norm 1000: SimpleMKL needs several hundred at the default `tol` on some data sets).
#' @param svm_tol KKT tolerance of the inner SMO SVM (uniform 1e-4; SVM family 1e-5, tightened
#'   automatically when the outer loop needs more accuracy).
#' @param svm_maxiter maximum number of SMO iterations per SVM solve (1e7).
#' @param nthreads number of threads (0: the OpenMP default, `OMP_NUM_THREADS`, capped by
#'   `OMP_THREAD_LIMIT` and the number of processors; one thread in a forked process); defaults
#'   to `getOption("mklearn.threads", 0)`. A number above the processors available is capped
#'   at them, with a message.
#' @param verbose print a trace: `TRUE` (or 1) one line per outer iteration; larger whole
#'   numbers print more detail where a solver has it (SpicyMKL: 2, 3). See `progress` for a
#'   progress bar instead.
#' @param progress report the progress of a single fit, for every method: `NA` (the default)
#'   reports a fit once it has run for two seconds (and not when `verbose` prints the trace),
#'   `TRUE` from its start, `FALSE` never. Reports go through the `progressr` package when it
#'   is installed, so the handlers you set decide what is shown (e.g.
#'   `progressr::handlers(global = TRUE)` or [progressr::with_progress()]); as progressr
#'   shows nothing in a non-interactive session unless enabled
#'   (`options(progressr.enable = TRUE)`), nothing is printed there. Without progressr, a
#'   text bar appears in interactive sessions only. The fraction shown is the larger of the
#'   outer iterations done out of `maxiter` and how far the solver's convergence measure has
#'   fallen, on a log scale, from its first value to `tol` (MWUMKL: its fixed number of
#'   iterations; the uniform method: two steps, the combined kernel and the solve); it never
#'   goes back and reaches the end when the fit ends, converged or not. Paths (a vector `C`),
#'   [cv.mkl()] and multiclass fits report one step per C value, fold or binary problem
#'   instead, and the fits inside them report nothing of their own.
#' @param memory bytes a fit may take: the kernel store and the solver's own buffers, counted
#'   by [mkl_memory()] before anything is allocated (default: half of the machine's memory, or
#'   `getOption("mklearn.max_bytes")` when set). Above it, a fit that fits on the fly is
#'   computed so; otherwise it stops with an error naming the need and the remedies.
#' @param store `"auto"` (dense array when the fit fits `memory`; otherwise the low-rank store
#'   for the methods that scale on it, else kernels on the fly), `"dense"`, `"fly"` (kernel
#'   columns computed from the data when needed; O(n M) memory, more arithmetic) or
#'   `"lowrank"`: each kernel replaced by a factor G_m (n x r_m) with \eqn{K_m \approx G_m G_m'}
#'   from pivoted incomplete Cholesky, greedy on the largest residual diagonal, stopping when the
#'   residual trace is at most `lowrank_tol` (1e-3) of the kernel's trace or at `rank` (200)
#'   columns; the normalisation is applied to the factors. A fit on it solves the problem on
#'   the approximated kernels (its objective and duality gap are theirs) and records each
#'   kernel's rank and relative residual trace in `fit$lowrank` (`print()` shows them);
#'   `predict()` evaluates each kernel at its r_m pivots only. MWUMKL does not run on it.
#' @param check_kernels how [mkl()] checks precomputed kernels (an array or a list of matrices;
#'   a [kernel_set()] is positive semidefinite by construction and giving this setting with one
#'   is an error). Every level refuses NA, NaN and infinite entries.
#'   * `"fast"` (the default) reads each kernel once, in parallel C code, and refuses a kernel
#'     that is not symmetric (relative tolerance 1e-10), has a negative diagonal entry, has a
#'     pair with \eqn{|K_{ij}| > \sqrt{K_{ii} K_{jj}}} (a negative 2 x 2 principal minor), or
#'     gives \eqn{v'Kv < 0} for one of four fixed random sign vectors. These are necessary
#'     conditions for positive semidefiniteness: they catch distance or dissimilarity matrices
#'     (zero diagonal), negated kernels, rows and columns scaled inconsistently, and strongly
#'     indefinite similarities, but can miss a similarity matrix with small negative
#'     eigenvalues (e.g. \eqn{1 - D / \max D} for distances D).
#'   * `"full"` adds the smallest eigenvalue of each kernel (LAPACK, about \eqn{n^3} work per
#'     kernel) and refuses it below \eqn{-10^{-8}} times the largest entry: it catches every
#'     kernel that is not positive semidefinite up to that tolerance.
#'   * `"none"` checks only that the entries are finite (for kernels known to be valid).
#'
#'   Each test bounds the smallest eigenvalue from above, and all use the same tolerance, so a
#'   kernel that `"full"` accepts is never refused by `"fast"`.
#' @param ... method-specific settings (unknown names are an error):
#'   * Kernel ridge (`"uniform"` with a numeric response) on the fly (`store = "fly"`), solved
#'     by conjugate gradients without an n x n matrix: `cg_tol` (1e-6: the relative residual
#'     at which CG stops) and `cg_maxiter` (1000: a CG stopped there is reported as not
#'     converged, with a warning). A classification refuses them.
#'   * SimpleMKL, HessianMKL, lp-norm: `newton_tol` (HessianMKL: a predicted decrease below
#'     `newton_tol * J` that the line search cannot realise makes the driver tighten the SVM
#'     tolerance; default `1e-5 * min(1, (tol / 0.01)^2)`), `gold_tol` (SimpleMKL's golden-section
#'     width relative to the largest feasible step, 0.1), `line_search` (HessianMKL:
#'     `"halving"` keeps halving the step while the objective decreases, `"first"` takes the
#'     first decrease as the reference code does), `max_time` (seconds after which the outer
#'     loop stops, reported as not converged; `Inf`).
#'   * MKL-L0/1-SVM (`"l01"`, where `tol` (3e-3) bounds the largest relative change of the
#'     eight ADMM blocks and `maxiter` is 20000): the penalties `rho1` (4), `rho2`, `rho3`
#'     (default `0.3 * rho1 * n * max(1, M / 10)^1.25`, M the kernels let in), on the scale of
#'     kernels with unit mean diagonal; `identity_cut` (1.5: a kernel whose effective number of
#'     neighbours of a training point, the mean over columns of
#'     \eqn{\sum_i K_{ij}^2 / K_{jj}^2}, is below it is nearly the identity on the training
#'     set; a fit that puts 90% of its weight on such kernels, or predicts one class on its
#'     training data, is run again with `rho2` and `rho3` ten times larger, and if that one
#'     collapses too, with them held at weight 0; 0 never does); `start`
#'     (`"reference"`: w = 0, b = `b0` (1), d = 1/M, multipliers 0 with the sum-to-one
#'     multiplier at `a0` (0); `"svm"`: the hinge SVM on the uniform combination at box constant
#'     `svm_C` (1)); `warmup` (5) iterations on a class-balanced working set of `warmup_size`
#'     samples (NA: all); `wstep` (`"cg"`: warm-started conjugate gradients to relative residual
#'     `cg_tol` (default `min(1e-6, tol / 10)`); `"chol"`: a Cholesky factor reused while d
#'     does not change, of an n x n matrix on a dense or on-the-fly store, of an R x R one by
#'     Woodbury on a low-rank store, R the total rank of the kernels let in; `"auto"`, the
#'     default: `"chol"` on a low-rank store when \eqn{R^2 \le 50 n} and \eqn{R \le 4096},
#'     `"cg"` otherwise); `joint_wb`
#'     (TRUE: w and b as one ADMM block; FALSE: the paper's w-then-b order); `freeze_T` (1000:
#'     the iteration after which the working set stops changing; it also stops after three
#'     2-cycles); `restarts` (0: chained warm restarts of the authors' protocol); `select`
#'     (how many kernels the ADMM runs on: the `select` most aligned with the SVM on the uniform
#'     combination, \eqn{w'K_m w / \|K_m\|_F} with \eqn{w = Y\alpha}, the others held at
#'     weight 0; NULL: every kernel when M <= 20, else \eqn{\max(10, \lceil\sqrt{M}/2\rceil)};
#'     a number at least M lets every kernel in).
#'   * Empirical Bayes (`"bayes"`, where `tol` (1e-4) bounds the largest derivative of the
#'     negative log marginal likelihood J with respect to a log-variance,
#'     \eqn{\max_m d_m |t_m - q_m| / 2} with \eqn{t_m = tr(\bar K^{-1} K_m)},
#'     \eqn{q_m = \beta' K_m \beta}: Eq. 23's fixed point \eqn{q_m = t_m} scaled by the
#'     kernel's share \eqn{d_m t_m} of the fit, in nats; the noise variance counts alike; and
#'     `maxiter` is 2000): `sigma2` (the noise variance; `NA`, the default, estimates
#'     it, a number fixes it), `sigma2_floor` (the estimate's lower bound relative to the
#'     response's variance, 1e-10), `bias` (`"center"`: centre the response, b = its mean;
#'     `"kernel"`: a constant kernel with a learned variance), `prune` (a kernel whose share
#'     \eqn{d_m \bar K_m / (\sigma^2 + \sum_l d_l \bar K_l)} of the prior variance falls below
#'     it, 1e-8, leaves the active set (for good, except under `"scoring"`);
#'     \eqn{\bar K_m} is its mean diagonal), `update` (`"scoring"`, the default: MacKay's
#'     steps until the largest derivative is below 3, then projected Fisher-scoring steps, about
#'     ten times fewer steps to the same optimum; `"mackay"`: Eq. 23 throughout; `"mm"`: the
#'     bound-minimisation update \eqn{d_m \sqrt{q_m / t_m}}, slower, never increases the
#'     objective), `sigma2` is on the response's scale, `safeguard` (TRUE: a
#'     MacKay step that would increase the negative log marginal likelihood is replaced by the
#'     MM step from the same point).
#'   * MWUMKL (`"mwu"`, which runs a fixed number of iterations and reads no `tol`): `ratio`
#'     (1: the iteration count is `ceiling(2 * ratio * log(n) / epsilon^2)`), `cutoff` (20: above
#'     it the closed-form exponential is rescaled against overflow), `refit` (`FALSE`; `TRUE`
#'     refits the hinge SVM on the learned combined kernel, the paper's two-stage use, with
#'     `svm_tol` (1e-4) and `svm_maxiter`).
#' @param platt how the probabilities of a classification fit (`predict(type = "response")`,
#'   `"prob"`) are calibrated, for every loss but the logistic (whose link gives them):
#'   Platt's sigmoid \eqn{1 / (1 + \exp(-(A f + B)))} of the decision value \eqn{f}, fitted
#'   on `"cv"` (the default, as libsvm does) the held-out decision values of an internal 5-fold
#'   cross-validation at the fit's C and kernels (folds stratified by class and drawn with a
#'   fixed internal seed, so the fit is reproducible and leaves the session's random numbers
#'   untouched; each fold fit is warm-started from the fit on all the data where the method
#'   allows it), or on `"train"` the training decision values, which are optimistic
#'   (over-confident probabilities) but cost no refit. Above 5,000 rows only the first folds
#'   are fitted, until 5,000 rows are held out. With fewer than 5 points of a class, or on the
#'   low-rank store with at least 50 rows per factor column (where the training values are as
#'   well calibrated), `"cv"` falls back to `"train"`; `fit$platt_method` says which was used.
#'   The folds of [cv.mkl()] use `"train"` (only the fits on all the data need calibrated
#'   probabilities).
#' @param tuning SpicyMKL's solver internals, from [spicy_tuning()] (`NULL`: its defaults);
#'   a method other than SpicyMKL refuses it. A tuning knob given to `mkl_control()` itself is
#'   an error that names [spicy_tuning()].
#' @return A list of class `"mkl_control"` holding the settings given.
#' @examples
#' mkl_control(tol = 1e-3)
#' mkl_control(maxiter = 100, tuning = spicy_tuning(box_fraction = 0))
#' @export
mkl_control <- function(tol = NULL, maxiter = NULL, svm_tol = NULL, svm_maxiter = NULL,
                        nthreads = NULL, verbose = NULL, memory = NULL, store = NULL, ...,
                        check_kernels = NULL, progress = NULL, tuning = NULL, platt = NULL) {
  set <- c(list(tol = tol, maxiter = maxiter, svm_tol = svm_tol, svm_maxiter = svm_maxiter,
                nthreads = nthreads, verbose = verbose, memory = memory, store = store,
                check_kernels = check_kernels, progress = progress, platt = platt), list(...))
  if (length(list(...)) && (is.null(names(list(...))) || any(!nzchar(names(list(...))))))
    stop("settings in '...' must be named", call. = FALSE)
  refuse_tuning_names(names(set))
  if (!is.null(tuning) && !inherits(tuning, "mkl_tuning"))
    stop("'tuning' must be made by spicy_tuning()", call. = FALSE)
  set$tuning <- tuning
  known <- unique(c(names(.control_common), unlist(lapply(.control_methods, names)), "tuning"))
  bad <- setdiff(names(set), known)
  if (length(bad))
    stop(sprintf("unknown setting(s) in mkl_control(): %s. Known settings: %s",
                 paste(bad, collapse = ", "), paste(sort(known), collapse = ", ")),
         call. = FALSE)
  set <- set[!vapply(set, is.null, logical(1))]
  structure(check_control_values(set), class = "mkl_control")
}

#' @export
print.mkl_control <- function(x, ...) {
  cat("<mkl_control>", if (length(x)) "" else "(all defaults)", "\n")
  if (length(x)) utils::str(unclass(x), no.list = TRUE, give.head = FALSE)
  invisible(x)
}

check_control_values <- function(s) {
  pos <- function(nm) if (!is.null(s[[nm]])) s[[nm]] <<- check_scalar(s[[nm]], nm, 0,
                                                                       lower_open = TRUE)
  count <- function(nm) if (!is.null(s[[nm]])) s[[nm]] <<- check_count(s[[nm]], nm)
  flag <- function(nm, na_ok = FALSE) if (!is.null(s[[nm]])) {
    v <- s[[nm]]
    if (!is.logical(v) || length(v) != 1L || (!na_ok && is.na(v)))
      stop(sprintf("'%s' must be TRUE or FALSE%s", nm, if (na_ok) " (or NA)" else ""),
           call. = FALSE)
  }
  for (nm in c("tol", "svm_tol", "gold_tol", "ratio", "cutoff")) pos(nm)
  flag("refit")
  flag("progress", na_ok = TRUE)
  if (!is.null(s[["newton_tol"]]))
    s[["newton_tol"]] <- check_scalar(s[["newton_tol"]], "newton_tol", 0)   # 0: never
  for (nm in c("maxiter", "svm_maxiter", "cg_maxiter")) count(nm)
  for (nm in c("kcache", "hess_free_max"))
    if (!is.null(s[[nm]]) && !identical(s[[nm]], NA_integer_)) s[[nm]] <- check_count(s[[nm]], nm)
  if (!is.null(s[["verbose"]])) {
    v <- s[["verbose"]]
    if (!(is.logical(v) || is.numeric(v)) || length(v) != 1L || is.na(v) || v < 0 || v != round(v))
      stop("'verbose' must be TRUE, FALSE or a trace level 0, 1, 2, ...", call. = FALSE)
  }
  if (!is.null(s[["nthreads"]])) s[["nthreads"]] <- check_threads(s[["nthreads"]])
  if (!is.null(s[["max_time"]]) && !(is.numeric(s[["max_time"]]) && length(s[["max_time"]]) == 1L &&
                                !is.na(s[["max_time"]]) && s[["max_time"]] > 0))
    stop("'max_time' must be one positive number of seconds (Inf: no limit)", call. = FALSE)
  if (!is.null(s[["memory"]]) && !(is.numeric(s[["memory"]]) && length(s[["memory"]]) == 1L &&
                              !is.na(s[["memory"]]) && s[["memory"]] > 0))
    stop("'memory' must be one positive number of bytes", call. = FALSE)
  if (!is.null(s[["store"]]))
    s[["store"]] <- match_arg(s[["store"]], c("auto", "dense", "fly", "lowrank"), name = "store")
  if (!is.null(s[["platt"]]))
    s[["platt"]] <- match_arg(s[["platt"]], c("cv", "train"), name = "platt")
  if (!is.null(s[["rank"]])) {
    v <- s[["rank"]]
    if (!is.numeric(v) || length(v) != 1L || is.na(v) || v < 1 || v != round(v))
      stop("'rank' must be one whole number >= 1: the largest rank of a kernel's low-rank factor",
           call. = FALSE)
    s[["rank"]] <- as.integer(min(v, .Machine$integer.max))
  }
  if (!is.null(s[["lowrank_tol"]])) {
    v <- s[["lowrank_tol"]]
    if (!is.numeric(v) || length(v) != 1L || is.na(v) || v < 0 || v >= 1)
      stop(paste0("'lowrank_tol' must be one number in [0, 1): the residual trace of a kernel's ",
                  "low-rank factor relative to the kernel's trace"), call. = FALSE)
    s[["lowrank_tol"]] <- as.double(v)
  }
  if (!is.null(s[["check_kernels"]])) {
    v <- s[["check_kernels"]]
    if (!is.character(v) || length(v) != 1L || !(v %in% c("fast", "full", "none")))
      stop("'check_kernels' must be \"fast\", \"full\" or \"none\"", call. = FALSE)
  }
  s <- check_l01_control(s)
  s <- check_bayes_control(s)
  s <- check_spicy_tuning(s)   # the knobs, flat in the plain lists of internal calls
  if (!is.null(s[["line_search"]]))
    s[["line_search"]] <- match_arg(s[["line_search"]], c("halving", "first"),
                                    name = "line_search")
  s
}

# The complete settings of one method: the user's (a list from mkl_control(), or a plain list
# for internal calls, where tuning knobs are flat), then the method's defaults and tuning
# defaults, then the common ones. A setting the user gave that the method does not read is an
# error; the result is flat (method_control() is idempotent).
method_control <- function(method, control = NULL) {
  fam <- method_info(method)$control
  user <- if (is.null(control)) list() else unclass(control)
  if (inherits(control, "mkl_control")) {
    tuning <- user$tuning
    user$tuning <- NULL
    unused <- setdiff(names(user), c(setdiff(names(.control_common), .control_not_read[[fam]]),
                                     names(.control_methods[[fam]])))
    if (length(unused))
      stop(sprintf("method '%s' does not use the setting(s) %s", method,
                   paste(unused, collapse = ", ")), call. = FALSE)
    if (!is.null(tuning)) {
      if (!identical(attr(tuning, "family"), fam))
        stop(sprintf("%s() tunes method %s; method '%s' does not read it",
                     .control_tuning[[attr(tuning, "family")]]$fun,
                     paste0("'", methods_where(function(e) e$control == attr(tuning, "family")),
                            "'", collapse = ", "), method), call. = FALSE)
      user <- c(user, unclass(tuning)[names(tuning)])
    }
  } else user <- check_control_values(user[!vapply(user, is.null, logical(1))])
  # a method's table may override a common default (l01: tol)
  out <- c(.control_common[setdiff(names(.control_common), c(names(.control_methods[[fam]]),
                                                             .control_not_read[[fam]]))],
           .control_methods[[fam]], .control_tuning[[fam]]$defaults)
  for (nm in names(user)) out[[nm]] <- user[[nm]]
  if (is.null(user[["nthreads"]])) out$nthreads <- check_threads(NULL)
  if (fam == "svmfam" && is.null(out[["newton_tol"]]))
    # the reference's Newton-decrement threshold (1e-5 J) belongs to its gap target 0.01;
    # tighter gap targets tighten it (it triggers a tighter SVM solve, never a stop)
    out$newton_tol <- 1e-5 * min(1, (out[["tol"]] / 0.01)^2)
  if (is.na(out[["memory"]])) out$memory <- default_memory()
  out
}

# Half of the machine's memory (Linux: /proc/meminfo), or the option mklearn.max_bytes.
default_memory <- function() {
  opt <- getOption("mklearn.max_bytes")
  if (!is.null(opt)) return(as.double(opt))
  total <- tryCatch({
    l <- grep("^MemTotal:", readLines("/proc/meminfo", n = 5L, warn = FALSE), value = TRUE)
    as.double(gsub("[^0-9]", "", l)) * 1024
  }, error = function(e) NA_real_, warning = function(w) NA_real_)
  if (length(total) != 1L || is.na(total) || total <= 0) 4e9 else total / 2
}
