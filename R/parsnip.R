# The parsnip model mkl_svm() (engine "mklearn"), registered with parsnip when parsnip is
# loaded (R/zzz.R), so that tidymodels (workflows, tune, dials) fit and tune mklearn models.

#' A parsnip model for multiple kernel learning
#'
#' `mkl_svm()` specifies a multiple kernel learning model for the `parsnip` package, fitted by
#' [mkl()] (engine `"mklearn"`), for classification (two or more classes) and regression.
#' `cost` is [mkl()]'s `C` (the SVM box constant on kernels with unit mean diagonal) and is
#' tunable with `tune::tune()`: its `dials` parameter is `dials::cost()`. `method` is the
#' mklearn method (see [mkl_methods()]); as a tuning parameter, `mkl_method_param()`. Other
#' arguments of [mkl()] (`kernels`, `loss`, `control`, ...) are engine arguments:
#' `set_engine("mklearn", kernels = ks)`. The model is registered with `parsnip` when both
#' packages are loaded, whichever comes first.
#'
#' Predictions: `type = "class"`, `"prob"` (the class probabilities of
#' `predict(fit, type = "response")`: Platt's sigmoid for the hinge loss, the logistic link
#' for the logistic loss; for more than two classes see [mkl_multi]) and `"numeric"`
#' (regression). The predictors reach [mkl()] as a numeric matrix (factors as indicator
#' columns); a regression is fitted with `task = "regression"`.
#'
#' @param mode `"unknown"`, `"classification"` or `"regression"`.
#' @param engine `"mklearn"`.
#' @param cost a positive number, [mkl()]'s `C` (default: that of [mkl()]), or `tune()`.
#' @param method an mklearn method, one of [mkl_methods()] (default `"uniform"`), or `tune()`.
#' @param object,parameters,fresh,... for `update()`: the specification, a one-row data frame
#'   or list of new values, whether to replace all the arguments, and the new values.
#' @param values the methods the tuning parameter takes.
#' @return `mkl_svm()` and `update()`: a `parsnip` model specification of class `"mkl_svm"`.
#'   `mkl_method_param()`: a qualitative `dials` parameter.
#' @examples
#' \donttest{
#' if (requireNamespace("parsnip", quietly = TRUE) &&
#'     requireNamespace("tune", quietly = TRUE) &&
#'     requireNamespace("rsample", quietly = TRUE) &&
#'     requireNamespace("workflows", quietly = TRUE) &&
#'     requireNamespace("recipes", quietly = TRUE) &&
#'     requireNamespace("yardstick", quietly = TRUE)) {
#'   d <- iris[iris$Species != "setosa", ]
#'   d$Species <- droplevels(d$Species)
#'   ks <- kernel_set(rbf_kernel(c(0.5, 2)), linear_kernel(), features = c("all", "each"))
#'   spec <- parsnip::set_engine(mkl_svm(cost = tune::tune(), method = "simple"), "mklearn",
#'                               kernels = ks)
#'   spec <- parsnip::set_mode(spec, "classification")
#'   rec <- recipes::step_normalize(recipes::recipe(Species ~ ., data = d),
#'                                  recipes::all_numeric_predictors())
#'   wf <- workflows::add_model(workflows::add_recipe(workflows::workflow(), rec), spec)
#'   set.seed(1)
#'   res <- tune::tune_grid(wf, resamples = rsample::vfold_cv(d, v = 3, strata = Species),
#'                          grid = data.frame(cost = c(0.1, 1, 10)),
#'                          metrics = yardstick::metric_set(yardstick::accuracy,
#'                                                          yardstick::roc_auc))
#'   tune::collect_metrics(res)
#'   tune::select_best(res, metric = "roc_auc")
#' }
#' }
#' @export
mkl_svm <- function(mode = "unknown", engine = "mklearn", cost = NULL, method = NULL) {
  need_package("parsnip", "mkl_svm()")
  args <- list(cost = rlang::enquo(cost), method = rlang::enquo(method))
  parsnip::new_model_spec("mkl_svm", args = args, eng_args = NULL, mode = mode,
                          user_specified_mode = !missing(mode), method = NULL, engine = engine,
                          user_specified_engine = !missing(engine))
}

# An error unless the suggested package pkg is installed.
need_package <- function(pkg, what) {
  if (!requireNamespace(pkg, quietly = TRUE))
    stop(sprintf("%s needs the %s package: install.packages(\"%s\")", what, pkg, pkg),
         call. = FALSE)
}

#' @rdname mkl_svm
#' @export
update.mkl_svm <- function(object, parameters = NULL, cost = NULL, method = NULL,
                           fresh = FALSE, ...) {
  need_package("parsnip", "update() of an mkl_svm specification")
  args <- list(cost = rlang::enquo(cost), method = rlang::enquo(method))
  parsnip::update_spec(object = object, parameters = parameters, args_enquo_list = args,
                       fresh = fresh, cls = "mkl_svm", ...)
}

#' @rdname mkl_svm
#' @export
mkl_method_param <- function(values = c("uniform", "simple", "hessian", "spicy")) {
  need_package("dials", "mkl_method_param()")
  bad <- setdiff(values, mkl_methods())
  if (!is.character(values) || !length(values) || length(bad))
    stop(sprintf("'values' must be methods of mkl_methods(): %s",
                 paste(mkl_methods(), collapse = ", ")), call. = FALSE)
  dials::new_qual_param(type = "character", values = values,
                        label = c(method = "MKL method"))
}

# The class probabilities of predict(type = "response"), one column per class named by the
# training levels, as parsnip expects them.
mkl_svm_prob <- function(x, object) {
  if (!is.matrix(x)) x <- cbind(1 - x, x)
  x <- as.data.frame(unname(x))
  names(x) <- object$lvl
  x
}

# The model's definition in parsnip's registry (once per session).
register_mkl_svm <- function() {
  env <- parsnip::get_model_env()
  if ("mkl_svm" %in% env$models) return(invisible())
  parsnip::set_new_model("mkl_svm")
  for (mode in c("classification", "regression")) {
    parsnip::set_model_mode("mkl_svm", mode)
    parsnip::set_model_engine("mkl_svm", mode = mode, eng = "mklearn")
    parsnip::set_dependency("mkl_svm", eng = "mklearn", pkg = "mklearn", mode = mode)
    parsnip::set_fit("mkl_svm", eng = "mklearn", mode = mode,
                     value = list(interface = "matrix", protect = c("x", "y"),
                                  func = c(pkg = "mklearn", fun = "mkl"),
                                  defaults = list(task = mode)))
    parsnip::set_encoding("mkl_svm", eng = "mklearn", mode = mode,
                          options = list(predictor_indicators = "traditional",
                                         compute_intercept = FALSE, remove_intercept = TRUE,
                                         allow_sparse_x = FALSE))
  }
  parsnip::set_model_arg("mkl_svm", eng = "mklearn", parsnip = "cost", original = "C",
                         func = list(pkg = "dials", fun = "cost"), has_submodel = FALSE)
  parsnip::set_model_arg("mkl_svm", eng = "mklearn", parsnip = "method", original = "method",
                         func = list(pkg = "mklearn", fun = "mkl_method_param"),
                         has_submodel = FALSE)
  pred <- function(type, post = NULL)
    list(pre = NULL, post = post, func = c(fun = "predict"),
         args = list(object = quote(object$fit), newx = quote(new_data), type = type))
  parsnip::set_pred("mkl_svm", eng = "mklearn", mode = "classification", type = "class",
                    value = pred("class"))
  parsnip::set_pred("mkl_svm", eng = "mklearn", mode = "classification", type = "prob",
                    value = pred("response", mkl_svm_prob))
  parsnip::set_pred("mkl_svm", eng = "mklearn", mode = "regression", type = "numeric",
                    value = pred("link"))
  invisible()
}
