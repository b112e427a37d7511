# The method registry: one entry per method, saying what it supports and how it is fitted.
# mkl(), method_control(), cv.mkl(), mkl_methods(), print and summary read it; adding a method
# is one entry here plus its fit_<method>() file, its control table (R/control.R) and its C.

# One entry, every field filled (the defaults are those of most methods):
# * label, paper: the solver's name (progress, print) and its reference.
# * losses: per task, the losses it fits, the default first (an empty task is not supported).
# * penalties: the values of mkl(penalty = ) it reads; NULL: none (the default "l1" is accepted).
# * args: the model arguments of mkl() it reads ("p", "lambda", "epsilon"), each with `what`
#   (for the message refusing it elsewhere) and, for epsilon, `default`, `below` (an upper
#   bound) and `loss` (the loss that reads it; NULL: every loss).
# * C: its conversion of the user's C (a name in .C_scales, R/cscale.R); "none": it takes no C,
#   and no_C says why. C_inf: C = Inf (the hard margin) is accepted.
# * stores: the kernel stores it reads; store_default: "auto" (dense when it fits the memory
#   budget) or "fly". lowrank: it scales on the low-rank store (O(n r) per kernel and pass, no
#   n x n buffer), so store = "auto" picks that store when the dense array does not fit;
#   no_lowrank: why a method without "lowrank" in its stores cannot run on it.
# * warm_start: it resumes from mkl(init = ); no_warm_start says why not.
# * multiclass: one-vs-rest and one-vs-one over its binary fits.
# * case_weights: it takes case weights (mkl(weights = , class.weights = ), passed to the fit
#   as control$case_weights); no_case_weights says why not. tests/testthat/test-common.R checks
#   that weights of 2 equal duplicated rows for the methods that set it.
# * control: its control family (a table of .control_methods, R/control.R).
# * fit: the name of its fit function (the solver contract in DEVELOPERS.md).
# * finish: NULL or function(info, base, C_solver) returning info with derived extras.
# * extras: NULL or function(fit) giving named values that print() and summary() show.
method_entry <- function(label, paper, losses, control, fit, penalties = NULL, args = list(),
                         C = "box", no_C = NULL, C_inf = FALSE,
                         stores = c("dense", "fly", "lowrank"), store_default = "auto",
                         lowrank = FALSE, no_lowrank = NULL, warm_start = TRUE,
                         no_warm_start = NULL,
                         multiclass = length(losses$classification) > 0L,
                         case_weights = FALSE, no_case_weights = NULL, finish = NULL,
                         extras = NULL) {
  list(label = label, paper = paper,
       losses = list(classification = as.character(losses$classification),
                     regression = as.character(losses$regression)),
       penalties = penalties, args = args, C = C, no_C = no_C, C_inf = C_inf, stores = stores,
       store_default = store_default, lowrank = lowrank, no_lowrank = no_lowrank,
       warm_start = warm_start, no_warm_start = no_warm_start,
       multiclass = multiclass, case_weights = case_weights,
       no_case_weights = no_case_weights, control = control, fit = fit,
       finish = finish, extras = extras)
}

svm_only <- list(classification = "hinge", regression = character())

.mkl_registry <- list(
  uniform = method_entry(
    label = "uniform", paper = "equal kernel weights 1/M",
    losses = list(classification = "hinge", regression = "squared"),
    case_weights = TRUE, lowrank = TRUE, control = "uniform", fit = "fit_uniform"),
  spicy = method_entry(
    label = "SpicyMKL", paper = "Suzuki and Tomioka 2009",
    losses = list(classification = c("hinge", "logistic"),
                  regression = c("squared", "epsilon")),
    penalties = c("l1", "elasticnet"),
    args = list(lambda = list(what = "the elastic-net mixing parameter of method 'spicy'"),
                epsilon = list(what = "the width of SpicyMKL's epsilon-insensitive loss",
                               default = 0.1, loss = "epsilon")),
    C = "spicy", case_weights = TRUE, control = "spicy", fit = "fit_spicy", lowrank = TRUE,
    finish = function(info, base, C_solver) {
      # the SVM's box constant: the hinge loss only (the map holds for the loss it is given, and
      # other losses have no SVM to compare with)
      if (identical(base$penalty, "l1") && identical(base$loss, "hinge") &&
          !is.null(info$sum_norms))
        info$C_svm <- spicy_C_svm(info$sum_norms, C_solver, base$kscale)
      info
    },
    extras = function(fit) c(C_svm = fit$info$C_svm)),
  simple = method_entry(
    label = "SimpleMKL", paper = "Rakotomamonjy et al. 2008", losses = svm_only,
    case_weights = TRUE, lowrank = TRUE, control = "svmfam", fit = "fit_simple"),
  hessian = method_entry(
    label = "HessianMKL", paper = "Chapelle and Rakotomamonjy 2008", losses = svm_only,
    case_weights = TRUE, lowrank = TRUE, control = "svmfam", fit = "fit_hessian"),
  lp = method_entry(
    label = "lp-norm MKL", paper = "Kloft et al. 2011", losses = svm_only,
    args = list(p = list(what = "the norm of method 'lp'")),
    case_weights = TRUE, lowrank = TRUE, control = "svmfam", fit = "fit_lp",
    extras = function(fit) c(p = fit$p)),
  bayes = method_entry(
    label = "Empirical Bayes MKL", paper = "Tomioka and Suzuki 2010",
    losses = list(classification = "squared", regression = "squared"),
    C = "none",
    no_C = paste0("the kernel variances and the noise variance are learned by maximising the ",
                  "marginal likelihood (mkl_control(sigma2 = ) fixes the noise variance)"),
    no_case_weights = paste0("its objective, the marginal likelihood of a Gaussian process, ",
                             "couples the observations through the noise variance and does not ",
                             "split into a loss per observation"),
    control = "bayes", fit = "fit_bayes", extras = function(fit) c(sigma2 = fit$info$sigma2),
    lowrank = TRUE),
  l01 = method_entry(
    label = "MKL-L0/1-SVM", paper = "Shi and Zhu",
    losses = list(classification = "l01", regression = character()),
    C = "l01", control = "l01", fit = "fit_l01", lowrank = TRUE,
    no_case_weights = paste0("its ADMM on the non-convex (0,1) loss is a heuristic whose ",
                             "iterates depend on each row's own variables, so a weighted count ",
                             "would not equal repeated rows"),
    extras = function(fit) c(n_sv = fit$info$n_sv)),
  mwu = method_entry(
    label = "MWUMKL", paper = "Moeller et al. 2014",
    losses = list(classification = "squared_hinge", regression = character()),
    args = list(epsilon = list(what = "MWUMKL's approximation parameter", default = 0.2,
                               below = 1)),
    C = "mwu", C_inf = TRUE, stores = c("dense", "fly"), store_default = "fly",
    no_lowrank = "it reads two exact kernel columns per step (its store is \"fly\")",
    warm_start = FALSE,
    no_warm_start = "it always runs its T iterations from alpha = 0",
    no_case_weights = paste0("its matrix multiplicative weights update the points' dual ",
                             "variables a fixed number of times (2 log(n) / epsilon^2), which ",
                             "per-point boxes would change"),
    control = "mwu", fit = "fit_mwu", extras = function(fit) c(epsilon = fit$epsilon))
)

# The entry of one method (an error for a name that is not one).
method_info <- function(method) {
  e <- .mkl_registry[[method]]
  if (is.null(e)) stop(sprintf("internal: no method '%s' in the registry", method), call. = FALSE)
  e
}

# The fit function of a method.
method_fit <- function(method) get(method_info(method)$fit, envir = asNamespace("mklearn"))

# The methods whose entry satisfies pred(entry).
methods_where <- function(pred) names(Filter(pred, .mkl_registry))

# The tasks a method fits.
method_tasks <- function(e) names(Filter(length, e$losses))

# Whether a method takes a C (a fit of one that does not records C = NA).
takes_C <- function(method) method_info(method)$C != "none"

#' The methods of mklearn
#'
#' Lists the values of `method` that [mkl()] accepts, from the package's method registry (one
#' entry per method, read by [mkl()], [cv.mkl()], [mkl_control()] and the print methods).
#' @param details `FALSE`: the method names; `TRUE`: a data frame with one row per method
#'   saying what it supports.
#' @return A character vector of method names, or (`details = TRUE`) a data frame with columns
#'   `method`, `label` (the solver's name), `paper`, `classification` and `regression` (the
#'   losses, the default first; empty: the task is not supported), `penalties`, `args` (the
#'   model arguments of [mkl()] it reads besides `C`), `C` (how the user's C reaches the
#'   solver: `"box"` the SVM box constant, `"spicy"` SpicyMKL's penalty weight, `"l01"`,
#'   `"mwu"` (also `Inf`, the hard margin), `"none"` (no C)), `stores` (kernel stores it reads,
#'   `"dense"`, `"fly"`, `"lowrank"`), `warm_start` (resumes from `init`), `multiclass`,
#'   `case_weights` (takes `weights` and `class.weights` of [mkl()]), `control` (the family of
#'   [mkl_control()] settings it reads).
#' @examples
#' mkl_methods()
#' mkl_methods(details = TRUE)[, c("method", "label", "classification", "regression")]
#' @export
mkl_methods <- function(details = FALSE) {
  if (!isTRUE(details) && !isFALSE(details))
    stop("'details' must be TRUE or FALSE", call. = FALSE)
  if (!details) return(names(.mkl_registry))
  join <- function(v) paste(v, collapse = ", ")
  col <- function(f) vapply(.mkl_registry, f, character(1L), USE.NAMES = FALSE)
  data.frame(method = names(.mkl_registry), label = col(function(e) e$label),
             paper = col(function(e) e$paper),
             classification = col(function(e) join(e$losses$classification)),
             regression = col(function(e) join(e$losses$regression)),
             penalties = col(function(e) join(e$penalties)),
             args = col(function(e) join(names(e$args))),
             C = col(function(e) if (e$C_inf) paste(e$C, "(or Inf)") else e$C),
             stores = col(function(e) join(e$stores)),
             warm_start = vapply(.mkl_registry, `[[`, logical(1L), "warm_start",
                                 USE.NAMES = FALSE),
             multiclass = vapply(.mkl_registry, `[[`, logical(1L), "multiclass",
                                 USE.NAMES = FALSE),
             case_weights = vapply(.mkl_registry, `[[`, logical(1L), "case_weights",
                                   USE.NAMES = FALSE),
             control = col(function(e) e$control), stringsAsFactors = FALSE)
}

# mkl()'s checks of C against the entry: none for a method without C, positive, finite unless
# the method has a hard margin, strictly decreasing for a path.
check_method_C <- function(method, C, C_given) {
  e <- method_info(method)
  if (e$C == "none" && C_given)
    stop(sprintf("method '%s' has no regularisation constant C: %s", method, e$no_C),
         call. = FALSE)
  if (!is.numeric(C) || length(C) == 0L || anyNA(C) || any(C <= 0))
    stop("'C' must be positive and finite", call. = FALSE)
  if (any(!is.finite(C)) && !e$C_inf)
    stop(sprintf("'C' must be positive and finite (C = Inf, the hard margin, is available with %s)",
                 paste0("method = '", methods_where(function(x) x$C_inf), "'", collapse = " or ")),
         call. = FALSE)
  if (length(C) > 1L && any(diff(C) >= 0))
    stop("a vector 'C' must be strictly decreasing (it is fitted as a warm-started path)",
         call. = FALSE)
  invisible(C)
}

# The epsilon passed on to the fit: the method's default and range where it reads one; a method
# without it still passes the common default on (its solver does not read it).
check_method_epsilon <- function(method, epsilon) {
  eps <- method_info(method)$args$epsilon
  if (is.null(epsilon)) epsilon <- if (is.null(eps)) 0.1 else eps$default
  if (is.null(eps$below)) return(check_scalar(epsilon, "epsilon", 0))
  epsilon <- check_scalar(epsilon, "epsilon", 0, eps$below, lower_open = TRUE)
  if (epsilon >= eps$below)
    stop(sprintf("'epsilon' of method '%s' must be below %s", method, format(eps$below)),
         call. = FALSE)
  epsilon
}

# mkl()'s checks of the model against the entry once the task is known: the task's loss (the
# default when NULL), the penalty, and the model arguments given (a named logical), which a
# method that does not read them refuses. Returns the loss.
check_method_model <- function(method, task, loss, penalty, given) {
  e <- method_info(method)
  allowed <- e$losses[[task]]
  if (length(allowed) == 0L)
    stop(sprintf("method '%s' does not do %s", method, task), call. = FALSE)
  if (is.null(loss)) loss <- allowed[1L]
  if (!is.character(loss) || length(loss) != 1L || !(loss %in% allowed))
    stop(sprintf("method '%s' with a %s response supports loss %s", method, task,
                 paste0("'", allowed, "'", collapse = " or ")), call. = FALSE)
  if (!(penalty %in% if (is.null(e$penalties)) "l1" else e$penalties))
    stop(sprintf("penalty = '%s' is available with %s only", penalty,
                 paste0("method = '", methods_where(function(x) penalty %in% x$penalties), "'",
                        collapse = " or ")), call. = FALSE)
  for (nm in names(given)[given]) if (is.null(e$args[[nm]])) {
    what <- unlist(lapply(.mkl_registry, function(x) x$args[[nm]]$what), use.names = FALSE)
    stop(sprintf("'%s' is %s; method '%s' does not use it", nm, paste(what, collapse = " and "),
                 method), call. = FALSE)
  }
  loss
}

# Whether a fit records its epsilon: the method reads it with this loss.
reads_epsilon <- function(method, loss) {
  eps <- method_info(method)$args$epsilon
  !is.null(eps) && (is.null(eps$loss) || loss %in% eps$loss)
}
