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
#' With a [kernel_set()], `mkl()` builds the normalised n x n x M kernel array when the fit (the
#' array and the solver's own buffers, [mkl_memory()]) fits the memory budget
#' `mkl_control(memory = )` (default: half of the machine's memory) and otherwise computes
#' kernel columns on the fly from the data, in O(nM) memory but with more arithmetic (each pass
#' over the kernels re-evaluates them); `mkl_control(store = "dense")` or `"fly"` forces either.
#' Methods that scale on the low-rank store take it, when the dense array does not fit, before
#' the on-the-fly store (with a message naming the ranks and the approximation error);
#' `mkl_control(store = "lowrank")` forces it (see [mkl_control()]). When none fits, `mkl()`
#' stops before allocating, naming the need, the budget and the
#' remedies. `fit$store` says which was used. Predictions are always computed on the fly,
#' for the kernels with non-zero weight only. Precomputed kernels are used as given (dense).
#' Custom kernels (R functions and some kernlab kernels, see [kernel_set()]) are computed in R
#' into the dense store, which `"auto"` then chooses; `store = "fly"` is refused for them.
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
#'   kernels. SpicyMKL with the hinge loss then solves the SVM-family problem whose box
#'   constant is `fit$info$C_svm` (from `sum_m ||f_m|| / C_spicy`, the block norms of its
#'   solution; other losses have no such constant).
#' * l01: its front end converts C and its penalties with the same `kscale`.
#' * mwu: `C` is the 2-norm soft-margin constant (squared hinge) on the same scale; MWUMKL
#'   renormalises each kernel to unit trace, so its constant is `C n`. `C = Inf` is the hard
#'   margin.
#'
#' @section Case weights:
#' `weights` (one per observation, finite, non-negative) and `class.weights` (named by class
#' label, as in `e1071::svm()`; classes not named keep weight 1) multiply: observation i has
#' the case weight \eqn{w_i} = `weights[i] * class.weights[y[i]]`, kept as `fit$case_weights`
#' (`NULL` without weights) and `fit$class_weights`. A weight multiplies the observation's loss,
#' so an integer weight k fits as k copies of the row, and weight 0 as the row left out:
#' * uniform (classification), simple, hessian, lp: the SVM box of point i is
#'   \eqn{C_i = C_{solver} w_i}{C_i = C_solver w_i}, with \eqn{C_{solver}}{C_solver} the box
#'   constant of "The meaning of C" (`fit$info$C_solver`); the duality gap of the SVM family
#'   holds with these boxes. uniform regression: kernel ridge with the squared residuals
#'   weighted, \eqn{(C/2) \sum_i w_i r_i^2}.
#' * spicy: the loss \eqn{\sum_i w_i \ell(y_i, z_i)} (every loss; the dual box of point i is
#'   scaled by \eqn{w_i}, and the duality gap is that of the weighted problem); rows of weight
#'   0 are left out of the solver. The penalty weight is converted with the total weight
#'   \eqn{\sum_i w_i} in place of n. With weights the hinge's box phase
#'   (`spicy_tuning(box_fraction = )`) is not used.
#' * The kernel scale `kscale` that converts C is the weighted mean diagonal, and a regression
#'   response is standardised by its weighted mean and standard deviation, so that weights equal
#'   repeated rows there too. The kernels themselves (the standardisation of `x`, the widths of
#'   [default_kernels()], the trace normalisation of a [kernel_set()]) are computed from the
#'   rows as given, not weighted: with precomputed kernels, or kernels whose construction does
#'   not depend on how often a row appears, weight k is exactly k copies of the row.
#' * `"bayes"`, `"l01"` and `"mwu"` refuse case weights with an error saying why
#'   (`mkl_methods(details = TRUE)$case_weights`).
#'
#' Multiclass fits give each binary problem the weights of its rows; [cv.mkl()] fits each fold
#' with the weights of its training part and weights the held-out measure.
#'
#' The solver constant used is `fit$info$C_solver`. Earlier versions of mklearn passed C
#' to the solvers unchanged; to reproduce such a fit on unit-trace kernels of n points, give
#' `C = C_old / n` (box constants, more exactly `C_old * (1/n + jitter)`) or
#' `C = 1 / (2 C_old)` (SpicyMKL).
#'
#' @param x a numeric matrix or data frame of numeric columns (n x p); may be `NULL` (or omitted)
#'   when `kernels` are precomputed. Column names, if any, must be unique: [predict.mkl()]
#'   matches new data to the columns by name. For the formula method, a formula.
#' @param y the response: a two-level factor, a numeric vector in \{-1, 1\} or \{0, 1\}
#'   (classification), or a numeric vector (regression; when it holds a few whole values, such
#'   as class numbers 1, 2, 3, a message says that a regression is fitted: give a factor for
#'   classification).
#' @param kernels a [kernel_set()], or precomputed training kernels: an n x n x M array or a
#'   list of n x n matrices (symmetric, positive semidefinite; used as given). They are
#'   checked at the cost of one pass over the array by default; `mkl_control(check_kernels =
#'   "full")` adds an eigenvalue check (see [mkl_control()]). Their names (an array's third
#'   dimnames, a list's names) must be unique; when every kernel has one, `predict()` matches
#'   the test kernels to them by name. The default, [default_kernels()], is four Gaussian
#'   kernels whose widths are set from the distances between the (standardised) training rows
#'   and polynomial kernels of degree 1 and 2; a SpicyMKL regression adds Gaussian kernels of
#'   widths 0.5, 1 and 2 on each (standardised) feature. With
#'   `options(mklearn.screen = 3)`, the kernels of a set that are nearly the identity on the
#'   training data (fewer than 3 effective neighbours per point) are left out, with a message;
#'   `cv.mkl(screen = )` chooses the threshold (and so the narrowest width) by cross-validation.
#' @param method the solver, one of [mkl_methods()] (default `"uniform"`), see Methods.
#' @param C regularisation constant(s) (positive): the SVM box constant on the scale of
#'   kernels with unit mean diagonal, for every method (larger C, less regularisation; see
#'   "The meaning of C"); `Inf` (the hard margin) with `method = "mwu"`. Default 1, and 10 for
#'   a regression (fitted on the standardised response, see `task`). A strictly decreasing
#'   vector fits the whole path with warm starts and returns an `"mkl_path"`.
#' @param loss `"hinge"` or `"logistic"` (classification), `"squared"` or `"epsilon"`
#'   (regression). Default: hinge for classification, squared for regression.
#' @param penalty `"l1"` (block 1-norm) or `"elasticnet"` (SpicyMKL).
#' @param lambda elastic-net mixing parameter in \[0, 1\] (`penalty = "elasticnet"`): the
#'   penalty on each kernel's block norm is
#'   \eqn{C_1 \|f_m\| + (C_2 / 2) \|f_m\|^2}{C1 ||f_m|| + (C2 / 2) ||f_m||^2} with
#'   \eqn{C_1 = c (1 - \lambda)}{C1 = c (1 - lambda)} and \eqn{C_2 = c \lambda}{C2 = c lambda}
#'   (\eqn{c} the penalty weight that `C` converts to), so `lambda = 0` is the block 1-norm
#'   (sparse kernel weights) and `lambda = 1` the squared l2 norm (no kernel dropped). This
#'   is the opposite of glmnet's `alpha`, where 1 is the lasso and 0 the ridge.
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
#' @param weights case weights: `NULL` (none), or one finite non-negative number per
#'   observation (see Case weights); not every class may have weight zero. For the formula
#'   method they are evaluated in `data` (a column name or an expression of its columns);
#'   rows dropped by `subset` or `na.action` are dropped from them too.
#' @param class.weights classification: weights of the classes, a numeric vector named by class
#'   label (e.g. `c(yes = 2)`; for numeric labels their printed form, `c("-1" = 2)`), multiplying
#'   `weights`; see Case weights.
#' @param ... for the formula method, arguments passed to the default method.
#' @return An object of class `"mkl"` (or `"mkl_path"` for a vector `C`; `"mkl_multi"` for
#'   more than two classes, see [mkl_multi]), a list with
#'   `call`, `method`, `task`, `loss`, `penalty`, `C`, `kscale` (the mean diagonal of the
#'   training kernels, see "The meaning of C"), `learned_nothing` (`NULL`, or why the model
#'   is constant: every kernel dropped, or a decision function constant on the training
#'   data), `degenerate` (`NULL`, or why a classification model generalises nothing or overfits: it
#'   predicts one class on its own training data while the labels have two, or its weight
#'   sits mostly on kernels that are nearly the identity on the training data, with fewer
#'   than 2 effective neighbours per point, and without each point's contribution to its own
#'   decision value through them it predicts one class, or its other kernels by their weights
#'   give each training point fewer than log(n) / 2 effective neighbours (all its kernels when
#'   every one is nearly the identity): it predicts new points from a handful of training
#'   points. With held-out decision values (the internal cross-validation of `platt = "cv"` in
#'   [mkl_control()]) a fit that predicts one class on every held-out point while their labels
#'   have two, or whose held-out accuracy is less than 2 points above always predicting the
#'   majority class, generalises nothing, and a fit on a handful of neighbours is said to
#'   overfit only if its held-out accuracy is at least 0.1 below its training accuracy;
#'   without them (`platt = "train"`, the logistic loss, fewer than 5
#'   points of a class, the fits of [cv.mkl()]) the training data's rules alone apply),
#'   `weights` (named kernel weights, on
#'   the simplex over the selected kernels, those whose sample coefficients are not all zero;
#'   all zero when every kernel was dropped), `alpha` (n x M sample coefficients:
#'   \eqn{f(x) = \sum_m K_m(x, X) \alpha_m + b}; MWUMKL keeps them as the two factors of an
#'   outer product, see [mkl_outer], and `as.matrix()` gives the matrix), `b`, `converged`,
#'   `iterations`,
#'   `history` (a data frame per iteration), `objective`, `fitted` (training decision values,
#'   equal to `predict(fit, x, type = "link")` on the training data),
#'   `timing` (seconds: `kernels`, `fit`, and `platt`, the cross-validation of the
#'   probabilities, see `platt` in [mkl_control()]), `platt` (the sigmoid's `A` and `B`) and
#'   `platt_method` (classification), `heldout` (with `platt = "cv"`: `n` the points held out
#'   by its cross-validation, their `accuracy`, the `train_accuracy` on them, the `majority`
#'   rate of their labels and its class `majority_class` (1 or 2, as in `classes`), each
#'   class's `recall`, and the counts of each class `predicted` and in `labels`),
#'   `na.action` (formula fits: the rows dropped for missing
#'   values), `store` (`"dense"`, `"fly"` or `"lowrank"`), `lowrank` (on the low-rank store:
#'   `rank` and `error`, each kernel's rank and residual trace relative to its trace, the
#'   `tol` and rank `cap` used, and what `predict` needs; `NULL` otherwise), `case_weights` and
#'   `class_weights` (see Case weights; `NULL` without), and what `predict` needs to rebuild
#'   the test kernels (the kernel set, the training data and normalisation).
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
#' @param subset for the formula method: the rows of `data` to fit on (a logical or index
#'   vector, evaluated in `data`, as for `lm()`).
#' @param na.action for the formula method: what to do with rows that have missing values in
#'   the variables of the formula (and in `weights`). [stats::na.omit()] (the default, as in
#'   `e1071::svm()`) drops them, with a message giving their number; [stats::na.exclude()]
#'   drops them too, and `residuals()`, `fitted()` and `predict()` without new data pad their
#'   results with `NA` at these rows (as for `lm()`); [stats::na.fail()] makes them an error.
#'   The rows dropped are `fit$na.action` (their number is printed by `print()` and
#'   `summary()`).
#' @export
mkl.formula <- function(x, data, ..., subset, weights, na.action = stats::na.omit) {
  formula <- x
  cl <- match.call()
  cl[[1L]] <- as.name("mkl")      # so that update() calls the generic
  if (missing(data)) stop("the formula interface needs 'data'", call. = FALSE)
  # the model frame built as lm() does, so that subset and weights are evaluated in the data
  mf <- match.call(expand.dots = FALSE)
  mf <- mf[c(1L, match(c("x", "data", "subset", "weights"), names(mf), 0L))]
  names(mf)[names(mf) == "x"] <- "formula"
  mf$na.action <- quote(stats::na.pass)      # missing values: frame_design()
  mf$drop.unused.levels <- TRUE
  mf[[1L]] <- quote(stats::model.frame)
  des <- frame_design(eval(mf, parent.frame()), na.action)
  fit <- if (is.null(des$weights)) mkl.default(des$x, des$y, ...) else
    mkl.default(des$x, des$y, weights = des$weights, ...)
  tt <- des$terms
  fml <- stats::formula(tt)       # with '.' expanded: update(fit, . ~ . - v) needs no data
  attr(tt, ".Environment") <- NULL
  environment(fml) <- NULL
  add_formula <- function(f) {
    f$call <- cl
    f$formula <- fml
    f$terms <- stats::delete.response(tt)
    f$xlevels <- stats::.getXlevels(tt, des$frame)
    f$contrasts <- attr(des$x, "contrasts")
    f$na.action <- des$na.action
    f
  }
  if (inherits(fit, "mkl_path")) {
    fit$fits <- lapply(fit$fits, add_formula)
    fit$call <- cl
    fit
  } else add_formula(fit)
}

# The model formula of a formula fit ('.' expanded; kept without its environment, it gets the
# caller's), NULL for other fits.
#' @export
formula.mkl <- function(x, ...) {
  f <- if (inherits(x, "mkl_path")) x$fits[[1L]]$formula else x$formula
  if (!is.null(f)) environment(f) <- parent.frame()
  f
}

#' @export
formula.mkl_path <- formula.mkl

#' @export
formula.mkl_multi <- formula.mkl

#' @export
update.mkl <- function(object, formula., ..., evaluate = TRUE) {
  call <- object$call
  if (is.null(call)) stop("this fit records no call to update", call. = FALSE)
  if (!missing(formula.)) {
    old <- formula.mkl(object)
    if (is.null(old))
      stop(paste0("this fit was made without a formula (mkl(x, y)): update() changes its ",
                  "arguments, e.g. update(fit, C = 10), or fit mkl(y ~ ., data = ) to update ",
                  "the formula"), call. = FALSE)
    new <- stats::update(old, formula.)
    environment(new) <- parent.frame()
    call$x <- new
  }
  extras <- match.call(expand.dots = FALSE)$...
  if (length(extras)) {         # as update.default()
    existing <- !is.na(match(names(extras), names(call)))
    for (a in names(extras)[existing]) call[[a]] <- extras[[a]]
    if (any(!existing)) call <- as.call(c(as.list(call), extras[!existing]))
  }
  if (evaluate) eval(call, parent.frame()) else call
}

#' @export
update.mkl_path <- update.mkl

#' @export
update.mkl_multi <- update.mkl

#' @rdname mkl
#' @export
mkl.default <- function(x = NULL, y, kernels = default_kernels(),
                        method = mkl_methods(), C = 1,
                        loss = NULL, penalty = c("l1", "elasticnet"), lambda = 0.5, p = 2,
                        epsilon = NULL, standardize = TRUE, task = NULL,
                        control = mkl_control(), init = NULL, multiclass = c("ovr", "ovo"),
                        weights = NULL, class.weights = NULL, ...) {
  cl <- match.call()
  cl[[1L]] <- as.name("mkl")      # so that update() calls the generic
  given <- c(p = !missing(p), lambda = !missing(lambda), epsilon = !missing(epsilon),
             multiclass = !missing(multiclass))
  if (length(list(...)))
    stop(sprintf("unused argument(s): %s", paste(names(list(...)), collapse = ", ")),
         call. = FALSE)
  if (is_kernel_family(kernels))
    stop(family_not_set("kernels"), call. = FALSE)
  method <- match_arg(method)
  penalty <- match_arg(penalty)
  fitfun <- response_fit(method)   # regression: on the standardised response (R/response.R)
  check_method_C(method, C, !missing(C))
  if (!is.null(task)) task <- match_arg(task, c("classification", "regression"))
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
    kernels_named <- check_kernel_names(dimnames(Karr)[[3]])
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
  if (is.null(task)) note_numeric_labels(y, yc)
  task <- yc$task
  if (missing(C) && task == "regression" && takes_C(method)) C <- regression_C  # R/response.R
  multi <- isTRUE(yc$multi)
  if (given[["multiclass"]] && !multi)
    stop(sprintf(paste0("'multiclass' is for a response of more than two classes; this one %s"),
                 if (task == "regression") "is numeric (regression)" else "has two"),
         call. = FALSE)
  loss <- check_method_model(method, task, loss, penalty, given[c("p", "lambda", "epsilon")])
  check_control_task(method, task, control)
  check_row_start_store(control)
  cw <- check_case_weights(weights, class.weights, yc, n, method)
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
    if (ctl$store == "lowrank")
      stop(paste0("store = \"lowrank\" factors kernels computed from 'x'; precomputed kernels ",
                  "are used as given"), call. = FALSE)
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
    # default_kernels(): widths from the data; a SpicyMKL regression adds kernels on each feature
    kernels <- data_kernels(kernels, xs, if (task == "regression") regression_each_widths(method))
    rk <- resolve_kernels(kernels, ncol(x), colnames(x))
    rk <- screen_kernels(rk, xs, ctl$nthreads, ctl$memory)   # kernels that memorise (R/screen.R)
    M <- nrow(rk$table)
    labels <- rk$labels
    check_chisq_data(rk, xs, seq_len(M))
    pair <- if (multi && multiclass == "ovo") sum(sort(table(yc$y), decreasing = TRUE)[1:2])
    ctl$xcols <- ncol(x)   # the front end's copies of x (memory_front(), R/memory.R)
    sctl <- custom_store_control(ctl, rk)
    kind <- choose_store(sctl, method, n, M, task, loss, pair, weighted = !is.null(cw),
                         rank_bound = function() lowrank_rank_bound(rk, xs, ctl$lowrank_tol))
    store <- switch(kind, dense = dense_store(rk, xs, ctl$nthreads),
                    fly = fly_store(rk, xs, ctl$nthreads),
                    lowrank = lowrank_train(rk, xs, ctl$lowrank_tol, ctl$rank, ctl$nthreads))
    if (kind == "lowrank" && ctl$store == "auto")
      message(sprintf("mkl(): the dense kernels do not fit the memory budget; %s",
                      lowrank_line(store$factors)))
    kset <- kernels
  }
  t_kernels <- proc.time()[["elapsed"]] - t0
  store$neighbours <- neighbour_cache(M)   # shared by every fit on this store
  if (!is.null(init)) {
    if (init$method != method || nrow(init$alpha) != n || ncol(init$alpha) != M)
      stop("'init' must be a fit of the same method on data of the same size and kernels",
           call. = FALSE)
  }

  ctl$loss <- loss; ctl$penalty <- penalty; ctl$lambda <- lambda; ctl$p <- p
  ctl$epsilon <- epsilon
  ctl["case_weights"] <- list(cw)
  e <- method_info(method)
  base <- list(method = method, task = task, loss = loss,
               penalty = if (!is.null(e$penalties)) penalty,
               lambda = if (!is.null(e$args$lambda) && penalty == "elasticnet") lambda,
               p = if (!is.null(e$args$p)) p,
               epsilon = if (reads_epsilon(method, loss)) epsilon,
               kernels = kset, kernel_info = rk, labels = labels,
               kernels_named = precomputed && kernels_named,
               store = if (precomputed) "dense" else code_name("store", store$kind),
               normalization = list(scale = store$scale, colmeans = store$colmeans,
                                    grandmean = store$grandmean),
               x = if (precomputed) NULL else xs,
               xnames = if (is.null(x)) NULL else colnames(x),
               p_x = if (is.null(x)) NA_integer_ else ncol(x),
               standardize = if (is.null(std)) NULL else std[c("center", "scale")],
               y = yc$y, classes = yc$classes, nobs = n, M = M, case_weights = cw,
               class_weights = if (!is.null(class.weights)) class.weights)
  state <- if (is.null(init)) fold_warm_state("binary", base$labels) else restore_state(init)
  # C on the scale of unit-diagonal kernels, converted for the solver in one place (R/cscale.R)
  # with case weights, the weighted mean diagonal: a row of weight 2 counts as two rows
  kscale <- if (is.null(cw)) kernel_scale(store) else .Call(C_case_kscale, store, cw)
  base$kscale <- kscale
  if (multi)
    return(fit_multiclass(fitfun, store, yc, C, ctl, base, cl, t_kernels, multiclass))
  fits <- fit_store_path(fitfun, store, yc$y, C, ctl, base, state, cl, t_kernels,
                         tick = mk_progressor(length(C)))
  if (length(C) == 1L) return(fits[[1L]])
  structure(list(call = cl, method = method, C = C, fits = fits), class = "mkl_path")
}

# The case weights of a fit (NULL without any): `weights` (one per observation, finite, >= 0)
# times the weight of each observation's class in `class.weights` (named by class label, as
# e1071::svm(); a class not named has weight 1). Refused by a method whose entry does not take
# them. Every class (classification) needs a positive total weight.
check_case_weights <- function(weights, class.weights, yc, n, method) {
  if (is.null(weights) && is.null(class.weights)) return(NULL)
  e <- method_info(method)
  if (!isTRUE(e$case_weights))
    stop(sprintf("method '%s' does not take case weights ('weights', 'class.weights'): %s",
                 method, e$no_case_weights), call. = FALSE)
  w <- rep(1, n)
  if (!is.null(weights)) {
    if (!is.numeric(weights) || length(dim(weights)) > 1L && ncol(weights) != 1L)
      stop("'weights' must be a numeric vector, one weight per observation", call. = FALSE)
    if (length(weights) != n)
      stop(sprintf("'weights' has %d values for %d observations", length(weights), n),
           call. = FALSE)
    if (anyNA(weights)) stop("'weights' contains missing values", call. = FALSE)
    if (any(!is.finite(weights)) || any(weights < 0))
      stop("'weights' must be finite and non-negative", call. = FALSE)
    w <- as.double(weights)
  }
  classes <- as.character(yc$classes)
  lab <- if (yc$task == "classification")
    if (is.factor(yc$y)) as.character(yc$y) else classes[ifelse(yc$y > 0, 2L, 1L)]
  if (!is.null(class.weights)) {
    if (yc$task != "classification")
      stop("'class.weights' is for classification; this response is numeric (regression)",
           call. = FALSE)
    cwn <- names(class.weights)
    if (!is.numeric(class.weights) || is.null(cwn) || any(!nzchar(cwn)) || anyDuplicated(cwn))
      stop(paste0("'class.weights' must be a numeric vector named by class label, e.g. ",
                  sprintf("c('%s' = 2)", classes[1L])), call. = FALSE)
    bad <- setdiff(cwn, classes)
    if (length(bad))
      stop(sprintf("'class.weights' names class(es) %s; the classes are %s",
                   paste0("'", bad, "'", collapse = ", "),
                   paste0("'", classes, "'", collapse = ", ")), call. = FALSE)
    if (anyNA(class.weights) || any(!is.finite(class.weights)) || any(class.weights < 0))
      stop("'class.weights' must be finite and non-negative", call. = FALSE)
    cwf <- stats::setNames(rep(1, length(classes)), classes)
    cwf[cwn] <- as.double(class.weights)
    w <- w * unname(cwf[lab])
  }
  if (!(sum(w) > 0)) stop("the case weights are all zero", call. = FALSE)
  if (yc$task == "classification") {
    tot <- tapply(w, factor(lab, levels = classes), sum)
    if (any(!(tot > 0)))
      stop(sprintf("the case weights of class(es) %s are all zero; every class needs weight",
                   paste0("'", classes[!(tot > 0)], "'", collapse = ", ")), call. = FALSE)
  }
  w
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
  # the number of observations C's conversion reads: the total case weight, if any
  n <- if (is.null(ctl$case_weights)) length(y) else sum(ctl$case_weights)
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
      fit_warning("learned_nothing", sprintf("%s%s%s learned nothing: %s", method,
                                             at_C(method, C[k]), what,
                                             fits[[k]]$learned_nothing))
    if (!is.null(tick)) tick(sprintf("%s%s%s", method, at_C(method, C[k]), what))
  }
  fits <- platt_path(fits, fitfun, store, y, C, ctl, base)   # probabilities (R/platt.R)
  # the degenerate note read against the probabilities' held-out decision values, if any
  for (k in seq_along(fits)) {
    fits[[k]]$degenerate <- heldout_degenerate(fits[[k]])
    if (!is.null(fits[[k]]$degenerate))
      fit_warning("degenerate", sprintf("%s%s%s %s: %s", method, at_C(method, C[k]), what,
                                        degenerate_verb(fits[[k]]$degenerate),
                                        fits[[k]]$degenerate))
  }
  fits
}

new_mkl <- function(res, base, C, store, call, timing) {
  M <- base$M
  w <- as.double(res$weights)
  if (length(w) != M || anyNA(w)) stop("internal: solver returned malformed weights", call. = FALSE)
  alpha <- res$alpha
  if (!(is.matrix(alpha) || is_outer_alpha(alpha)) || nrow(alpha) != base$nobs ||
      ncol(alpha) != M)
    stop("internal: solver returned malformed alpha", call. = FALSE)
  # the selected kernels: those whose sample coefficients are not all zero (predict() combines
  # exactly these); every other kernel gets weight zero, and none selected, all weights zero
  act <- alpha_cols_nonzero(alpha)
  w <- selected_weights(w, act)
  names(w) <- base$labels
  if (is_outer_alpha(alpha)) alpha$v <- w   # the weights, named
  # (fit_store_path names the columns in place: renaming here would copy an n x M matrix that
  # the caller's result still holds, 1.6 GB for MWUMKL with 10^6 kernels)
  if (is.matrix(alpha) && !identical(colnames(alpha), base$labels))
    colnames(alpha) <- base$labels
  # training decision values as predict() gives them on the training data: a solver may give
  # its own (mwu: a pass over all of its kernels would cost O(n^2 M)); either way without the
  # diagonal jitter of the training kernels, which test kernels do not carry
  fitted <- if (!is.null(res$fitted_decision))
    res$fitted_decision - jitter_decision(alpha, act, base$kernel_info$jitter) else
      train_decision(store, alpha, act, base$kernel_info, res$b)
  nothing <- learned_nothing_note(fitted, act, base, C, as.double(res$b))
  # a decision function constant to rounding is the constant model it stands for: no kernel
  # selected, predict() gives b everywhere, as the note says (the warm-start state keeps the
  # solver's coefficients)
  zeroed <- !is.null(nothing) && length(act) > 0L
  if (zeroed) {
    if (is_outer_alpha(alpha)) alpha$u[] <- 0 else alpha[] <- 0
    act <- integer(0)
    w[] <- 0
    if (is_outer_alpha(alpha)) alpha$v <- w
    fitted <- rep(as.double(res$b), base$nobs)
  }
  # a fit on the low-rank store: the approximation and what predict() needs (R/store.R)
  lowrank <- if (!is.null(store$factors)) lowrank_fit(store, alpha, act)
  # the fit keeps alpha once: a solver state that holds it (warm starts) gets it back from
  # the fit's alpha (restore_state)
  state <- res$state
  if (is.matrix(state$alpha) && !zeroed) {
    state$alpha <- NULL
    state$restore_alpha <- TRUE
  }
  obj <- c(list(call = call), base,
           list(C = C, weights = w, alpha = alpha, b = as.double(res$b),
                objective = res$objective, converged = isTRUE(res$converged),
                iterations = as.integer(res$iterations), history = as.data.frame(res$history),
                fitted = fitted, state = state, info = res$info, timing = timing,
                learned_nothing = nothing, lowrank = lowrank,
                degenerate = if (is.null(nothing) && .fold_fit$check)
                  degenerate_note(fitted, act, w, alpha, store, base, C)))
  if (obj$task == "classification" && .fold_fit$sigmoid)   # off in cv.mkl's folds (R/cv.R)
    obj$platt <- platt_fit(fitted, base$y, obj$loss, base$case_weights)
  class(obj) <- "mkl"
  obj
}

# The weights of a fit on the simplex over its selected kernels `act` (all zero when none is
# selected). A selected kernel that the solver gave weight zero (its coefficients are used by
# predict()) keeps the smallest positive weight, so that weight > 0 means selected.
selected_weights <- function(w, act) {
  if (!length(act)) return(numeric(length(w)))
  w[-act] <- 0
  w[act] <- pmax(w[act], 0)
  if (any(w[act] == 0)) w[act] <- pmax(w[act], .Machine$double.xmin * length(act))
  w / sum(w)
}

# The contribution of the diagonal jitter J of the training kernels to the decision values
# through the selected kernels `act`: J sum_m alpha_m.
jitter_decision <- function(alpha, act, jitter) {
  if (is.null(jitter) || jitter == 0 || !length(act)) return(0)
  if (is_outer_alpha(alpha)) jitter * alpha$u * sum(alpha$v[act]) else
    jitter * rowSums(alpha[, act, drop = FALSE])
}

# The decision values f(x_i) = sum_m K_m(x_i, X) alpha_m + b on the training points of the
# store, as predict() computes them on these points: without the jitter on the diagonal.
train_decision <- function(store, alpha, act, rk, b) {
  if (!length(act)) return(rep(b, nrow(alpha)))
  store_decision(store, alpha_columns(alpha, act), act, rk, act, "the training data") + b -
    jitter_decision(alpha, act, rk$jitter)
}

# A fit that learned nothing: every kernel dropped, or a decision function that is constant
# on the training data (kernels that do not tell the points apart: constant columns, widths
# far from the distances between points, identical rows with different labels). Judged on
# the jitter-free decision values, relative to the scale of the response and of the fit.
learned_nothing_note <- function(fitted, act, base, C, b) {
  scale <- max(abs(base$y), abs(fitted))
  if (length(act) && diff(range(fitted)) > 1e-9 * scale) return(NULL)
  # the constant model stands for b (new_mkl drops the rounding-level rest)
  what <- if (base$task == "classification")
    sprintf("the class '%s'", base$classes[if (b > 0) 2L else 1L]) else
      sprintf("a constant (%s)", format(signif(b, 4)))
  if (!length(act))
    return(sprintf(paste0("every kernel was dropped (all sample coefficients are zero); the ",
                          "model predicts %s for every point. Raise C (now %s; larger C ",
                          "regularises less) or use other kernels."), what, format(C)))
  sprintf(paste0("the decision function is constant on the training data: its kernels do not ",
                 "tell the training points apart (constant columns, kernel widths far from the ",
                 "distances between the points, or identical rows with different labels); ",
                 "the model predicts %s for every point. Use other kernels, or check the data."),
          what)
}

# Kernels with fewer effective neighbours per training point (kernel_neighbours(), R/store.R)
# are nearly the identity on the training data (inst/notes/NOTES-model.md).
.near_identity <- 2

# A classification fit that generalises nothing, though its decision function is not
# constant: it predicts one class on its own training data while the labels have two, or gets
# fewer of its training points right than the constant model of the majority class, or its
# weight sits mostly on kernels that are nearly the identity on the training data and, without
# the contribution of each training point to its own decision value through these kernels
# (which no new point receives), it predicts one class; or it predicts new points from a handful
# of training points (few_neighbours_note()). NULL, or why.
degenerate_note <- function(fitted, act, w, alpha, store, base, C) {
  y <- base$y
  if (base$task != "classification" || length(unique(y)) < 2L) return(NULL)
  cls <- function(f) sprintf("'%s'", base$classes[if (f > 0) 2L else 1L])
  one <- function(f) all(f > 0) || !any(f > 0)
  if (one(fitted))
    return(sprintf(paste0("it predicts the class %s for every training point, while %d of the ",
                          "%d labels are the other class. %sdrop kernel widths much narrower ",
                          "than the distances between the points, or choose C with cv.mkl()."),
                   cls(fitted[1L]), sum(decision_class(fitted[1L]) != y), length(y),
                   if (takes_C(base$method)) sprintf(paste0("Raise C (now %s) if it is too ",
                                                            "regularised, "), format(C))
                   else "Use other kernels: "))
  # worse than the constant model on its own training data (a local minimiser of MKL-L0/1 on
  # imbalanced classes can be, inst/notes/NOTES-l01.md)
  tr <- heldout_summary(fitted, fitted, y, base$case_weights)   # every row (R/platt.R)
  if (tr$train_accuracy < tr$majority)
    return(sprintf(paste0("its training accuracy, %.3f, is below always predicting the majority ",
                          "class '%s' (%.3f) on its own training data. %suse other kernels, or ",
                          "choose C with cv.mkl()."),
                   tr$train_accuracy, base$classes[tr$majority_class], tr$majority,
                   if (takes_C(base$method)) sprintf("Change C (now %s), ", format(C))
                   else "Use another method, "))
  near <- near_identity_kernels(store, act, w)
  share <- sum(w[near$which])
  few <- function() few_neighbours_note(store, act, w, near, base)
  if (share <= 0.5) return(few())
  self <- kernel_diagonals(store, near$which, base$kernel_info$jitter) *
    as.matrix(alpha_columns(alpha, near$which))
  rest <- fitted - rowSums(self)
  if (!one(rest)) return(few())
  sprintf(paste0("%.0f%% of its kernel weight is on kernels that are nearly the identity on ",
                 "the training data (%s, with %s effective neighbours per point), and without ",
                 "the contribution of each training point to its own decision value it ",
                 "predicts the class %s for every training point: it memorises the training ",
                 "points and predicts %s for new points. Drop the narrow kernel widths, %sor ",
                 "choose C with cv.mkl()."),
          100 * share, format_kernel_list(names(w)[near$which]),
          paste(format(signif(near$neighbours, 3)), collapse = ", "), cls(rest[1L]),
          cls(rest[1L]),
          if (takes_C(base$method)) sprintf("change C (now %s), ", format(C)) else "")
}

# A fit that predicts new points from a handful of training points: the combination of its
# selected kernels that are not nearly the identity (those act as a ridge and reach no new
# point; all of them when every one is), by their weights, gives fewer than log(n) / 2
# effective neighbours per training point (inst/notes/NOTES-l01.md). NULL, or why.
few_neighbours_note <- function(store, act, w, near, base, top = 100L) {
  n <- length(base$y)
  cand <- utils::head(act[order(-w[act])], top)
  pred <- setdiff(cand, near$which)
  if (!length(pred)) pred <- cand
  nb <- combined_neighbours(store, pred, w[pred])
  if (is.na(nb) || nb >= log(n) / 2) return(NULL)
  note <- sprintf(paste0("%.0f%% of its kernel weight is on %s, which give each training ",
                         "point %s effective neighbours%s, fewer than log(n) / 2 = %.2g: it ",
                         "predicts each new point from a handful of training points. Add wider ",
                         "kernels (larger sigma) or drop the narrow widths, or choose the ",
                         "kernels with cv.mkl()."),
                  100 * sum(w[pred]), format_kernel_list(names(w)[pred]), format(signif(nb, 3)),
                  if (length(near$which) && !identical(pred, cand))
                    " (beside kernels nearly the identity)" else "", log(n) / 2)
  structure(note, overfit = TRUE)
}

# The degenerate note of a classification fit with held-out decision values (fit$heldout, from
# the probabilities' internal cross-validation, R/platt.R), which decide two cases the training
# data cannot (inst/notes/NOTES-l01.md): held-out values of one class while the held-out labels
# have two, or a held-out accuracy less than .majority_margin above the majority rate,
# generalise nothing; a fit on a handful of neighbours (few_neighbours_note()) is said to
# overfit only if its held-out accuracy is .overfit_gap below its training accuracy. Without
# held-out values the note is the training data's.
heldout_degenerate <- function(fit) {
  note <- fit$degenerate
  h <- fit$heldout
  if (is.null(h) || !is.null(fit$learned_nothing) || h$n == 0L) return(note)
  overfit <- isTRUE(attr(note, "overfit"))
  if (!is.null(note) && !overfit) return(note)   # the training data's own evidence stands
  # what the held-out points show, then the remedy both cases share
  said <- function(what) {
    sprintf(paste0("on the %d held-out points of its internal %d-fold cross-validation (the ",
                   "probabilities' folds) %s. Use other kernels (wider widths, fewer kernels), ",
                   "%schoose the kernels with cv.mkl(), or check that the features predict the ",
                   "labels."),
            h$n, .platt_nfolds, what,
            if (takes_C(fit$method)) sprintf("change C (now %s), ", format(fit$C)) else "")
  }
  if (min(h$labels) > 0L && min(h$predicted) == 0L) {
    cls <- sprintf("'%s'", fit$classes[if (h$predicted[2L] > 0L) 2L else 1L])
    return(said(sprintf(paste0("it predicts the class %s for every one, while %d of them are ",
                               "the other class (held-out accuracy %.3f, the majority rate ",
                               "%.3f; training accuracy %.3f): it does not tell the classes ",
                               "apart on new points"),
                        cls, min(h$labels), h$accuracy, h$majority, h$train_accuracy)))
  }
  if (h$accuracy < h$majority + .majority_margin) {
    maj <- sprintf("'%s'", fit$classes[h$majority_class])
    return(said(sprintf(paste0("its accuracy, %.3f, is less than %g points above always ",
                               "predicting the majority class %s (%.3f; training accuracy ",
                               "%.3f): what it learned does not carry to new points"),
                        h$accuracy, 100 * .majority_margin, maj, h$majority,
                        h$train_accuracy)))
  }
  if (!overfit) return(note)
  if (h$train_accuracy - h$accuracy < .overfit_gap) return(NULL)
  structure(sprintf(paste0("%s On the %d held-out points of its internal cross-validation its ",
                           "accuracy is %.3f against %.3f in training (majority rate %.3f)."),
                    note, h$n, h$accuracy, h$train_accuracy, h$majority), overfit = TRUE)
}

# A fit on a handful of neighbours overfits when its held-out accuracy is this far below its
# training accuracy; any fit whose held-out accuracy is less than .majority_margin above the
# majority rate generalises nothing (inst/notes/NOTES-l01.md).
.overfit_gap <- 0.1
.majority_margin <- 0.02

# How a warning and print() name a degenerate fit: one that overfits a handful of neighbours
# (few_neighbours_note()) still predicts, so it is not said to generalise nothing.
degenerate_verb <- function(note) {
  if (isTRUE(attr(note, "overfit"))) "overfits" else "generalises nothing"
}

# The selected kernels that are nearly the identity (fewer than .near_identity effective
# neighbours), among the `top` selected kernels of largest weight (MWUMKL may select 10^6).
near_identity_kernels <- function(store, act, w, top = 500L) {
  cand <- utils::head(act[order(-w[act])], top)
  nb <- store_neighbours(store, cand)
  keep <- !is.na(nb) & nb < .near_identity
  list(which = cand[keep], neighbours = nb[keep])
}

# A memo of kernel_neighbours() for the kernels of one store (NULL: none), which depends only on
# the store: the fits along a C path and the problems of a multiclass fit read it once.
neighbour_cache <- function(M) {
  e <- new.env(parent = emptyenv())
  e$nb <- rep(NA_real_, M)
  e$done <- logical(M)
  e
}

# kernel_neighbours(store, which), each kernel computed once per store when it has a memo.
store_neighbours <- function(store, which) {
  memo <- store$neighbours
  if (!is.environment(memo)) return(kernel_neighbours(store, which))
  need <- which[!memo$done[which]]
  if (length(need)) {
    memo$nb[need] <- kernel_neighbours(store, need)
    memo$done[need] <- TRUE
  }
  memo$nb[which]
}

# The diagonals of the training kernels `which` (n x length(which)), without the jitter. Off
# the dense array, by the store's diagonal in C: a whole column per point (n^2 kernel values
# per kernel, and their garbage up to R's trigger) cost MWUMKL 0.04-0.06 GB above its
# prediction (NOTES-store.md, "The table at 10,000 and 20,000 again").
kernel_diagonals <- function(store, which, jitter) {
  n <- store_dims(store)[2L]
  J <- if (is.null(jitter)) 0 else jitter
  if (is_dense(store)) {
    i <- seq_len(n)
    return(vapply(which, function(m) store$K[cbind(i, i, m)], numeric(n)) - J)
  }
  .Call(C_store_diag, store, as.integer(which)) - J
}

# At most five kernel labels, and how many more.
format_kernel_list <- function(labels) {
  k <- length(labels)
  paste0(paste(utils::head(labels, 5L), collapse = ", "),
         if (k > 5L) sprintf(" and %d more", k - 5L) else "")
}

# A warning about a fit, of class "mkl_<kind>" (kind: learned_nothing, degenerate), so that
# cv.mkl() can count those of its fits and report them once.
fit_warning <- function(kind, msg)
  warning(structure(class = c(paste0("mkl_", kind), "warning", "condition"),
                    list(message = msg, call = NULL)))

at_C <- function(method, C) if (takes_C(method)) sprintf(" at C = %s", format(C)) else ""

# What to change when a fit did not converge, naming only settings the method reads.
nonconvergence_advice <- function(method, res, ctl) {
  info <- res$info
  # a method without maxiter (mwu) knows the reason itself
  if (is.null(ctl[["maxiter"]]) && !is.null(info[["nonconvergence"]]))
    return(info[["nonconvergence"]])
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
