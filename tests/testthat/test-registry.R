# The method registry (R/registry.R): every entry complete and consistent with what mkl(),
# method_control() and cv.mkl() do, and mkl_methods() its user-facing view.

reg <- mklearn:::.mkl_registry
entry <- function(m) mklearn:::method_info(m)
fields <- c("label", "paper", "losses", "penalties", "args", "C", "no_C", "C_inf", "stores",
            "store_default", "lowrank", "no_lowrank", "warm_start", "no_warm_start", "multiclass",
            "case_weights", "no_case_weights", "control", "fit", "finish", "extras")

test_that("mkl_methods() lists exactly the registry, and describes it on request", {
  expect_identical(mkl_methods(), names(reg))
  expect_identical(eval(formals(mklearn:::mkl.default)$method), names(reg))
  expect_setequal(names(reg), c("uniform", "spicy", "simple", "hessian", "lp", "l01", "bayes",
                                "mwu"))
  tab <- mkl_methods(details = TRUE)
  expect_s3_class(tab, "data.frame")
  expect_identical(tab$method, names(reg))
  expect_identical(tab$label[tab$method == "spicy"], "SpicyMKL")
  expect_identical(tab$regression[tab$method == "spicy"], "squared, epsilon")
  expect_identical(tab$regression[tab$method == "simple"], "")
  expect_identical(tab$C[tab$method == "mwu"], "mwu (or Inf)")
  expect_false(tab$warm_start[tab$method == "mwu"])
  expect_identical(tab$case_weights, vapply(reg, `[[`, NA, "case_weights", USE.NAMES = FALSE))
  expect_error(mkl_methods(details = NA), "'details' must be TRUE or FALSE")
  expect_error(mklearn:::method_info("bogus"), "no method 'bogus'")
})

test_that("every entry is complete and consistent", {
  for (m in names(reg)) {
    e <- reg[[m]]
    lab <- function(what) paste(m, what)
    expect_identical(names(e), fields, label = lab("fields"))
    expect_true(is.character(e$label) && nzchar(e$label), label = lab("label"))
    expect_true(is.character(e$paper) && nzchar(e$paper), label = lab("paper"))
    expect_identical(names(e$losses), c("classification", "regression"), label = lab("losses"))
    expect_gt(length(unlist(e$losses)), 0L)
    expect_true(is.function(get0(e$fit, envir = asNamespace("mklearn"))), label = lab("fit"))
    expect_identical(names(formals(mklearn:::method_fit(m))),
                     c("store", "y", "task", "C", "control", "init"), label = lab("contract"))
    expect_true(e$control %in% names(mklearn:::.control_methods), label = lab("control"))
    expect_true(e$C %in% names(mklearn:::.C_scales), label = lab("C"))
    expect_identical(e$C == "none", !is.null(e$no_C), label = lab("no_C"))
    expect_true(all(e$stores %in% c("dense", "fly", "lowrank")) && length(e$stores) > 0L)
    expect_true(isTRUE(e$lowrank) || isFALSE(e$lowrank), label = lab("lowrank"))
    expect_false(isTRUE(e$lowrank) && !"lowrank" %in% e$stores, label = lab("lowrank store"))
    expect_identical("lowrank" %in% e$stores, is.null(e$no_lowrank), label = lab("no_lowrank"))
    expect_true(e$store_default %in% c("auto", e$stores), label = lab("store_default"))
    expect_identical(isFALSE(e$warm_start), !is.null(e$no_warm_start), label = lab("warm"))
    expect_identical(e$multiclass, length(e$losses$classification) > 0L, label = lab("multi"))
    expect_true(isTRUE(e$case_weights) || isFALSE(e$case_weights), label = lab("case_weights"))
    expect_identical(isFALSE(e$case_weights), is.character(e$no_case_weights) &&
                       nzchar(e$no_case_weights), label = lab("no_case_weights"))
    expect_true(all(names(e$args) %in% c("p", "lambda", "epsilon")), label = lab("args"))
    for (a in e$args) expect_true(is.character(a$what) && nzchar(a$what))
    expect_true(is.null(e$finish) || is.function(e$finish))
    expect_true(is.null(e$extras) || is.function(e$extras))
    # the C conversion and its inverse agree
    if (e$C != "none")
      expect_equal(mklearn:::user_C(m, mklearn:::solver_C(m, 3, 0.01, 100), 0.01, 100), 3)
    # every method has its default settings from method_control()
    expect_type(mklearn:::method_control(m), "list")
  }
})

test_that("mkl() accepts exactly the tasks and losses of each entry", {
  d <- two_class(n = 30, p = 3, seed = 2)
  r <- d$x[, 1] + rnorm(30, sd = 0.1)
  ks <- kernel_set(rbf_kernel(1))
  for (m in names(reg)) {
    e <- reg[[m]]
    Carg <- if (e$C == "none") list() else list(C = 1)
    for (task in c("classification", "regression")) {
      yy <- if (task == "classification") d$y else r
      call <- function(...) suppressWarnings(do.call(mkl, c(list(d$x, yy, kernels = ks,
                                                                 method = m), Carg, list(...))))
      allowed <- e$losses[[task]]
      if (length(allowed) == 0L) {
        expect_error(call(), sprintf("method '%s' does not do %s", m, task))
        next
      }
      f <- call()
      expect_identical(f$loss, allowed[1L], label = paste(m, task, "default loss"))
      expect_identical(f$task, task)
      for (l in setdiff(unique(unlist(lapply(reg, function(x) x$losses[[task]]))), allowed))
        expect_error(call(loss = l), "supports loss", label = paste(m, task, l))
    }
  }
})

test_that("mkl() reads C, warm starts, model arguments and stores from the entry", {
  d <- two_class(n = 30, p = 3, seed = 2)
  ks <- kernel_set(rbf_kernel(1))
  for (m in names(reg)) {
    e <- reg[[m]]
    fit <- function(...) suppressWarnings(mkl(d$x, d$y, kernels = ks, method = m, ...))
    if (e$C == "none") {
      expect_error(fit(C = 1), sprintf("method '%s' has no regularisation constant C", m))
      expect_error(cv.mkl(d$x, d$y, kernels = ks, method = m), sprintf("method '%s' has none", m))
      expect_identical(fit()$C, NA_real_)
    }
    if (!e$C_inf && e$C != "none")
      expect_error(fit(C = Inf), "C = Inf, the hard margin, is available with method = 'mwu'")
    if (!e$warm_start)
      expect_error(fit(init = fit()), sprintf("method '%s' has no warm start: %s", m,
                                              e$no_warm_start), fixed = TRUE)
    for (a in setdiff(c("p", "lambda", "epsilon"), names(e$args)))
      expect_error(do.call(fit, setNames(list(c(p = 3, lambda = 0.5, epsilon = 0.5)[[a]]), a)),
                   sprintf("'%s' is .*; method '%s' does not use it", a, m))
    if (is.null(e$penalties))
      expect_error(fit(penalty = "elasticnet"),
                   "penalty = 'elasticnet' is available with method = 'spicy' only")
    if (e$store_default == "fly") expect_identical(fit()$store, "fly")
  }
  expect_error(mkl(d$x, d$y, method = "simple", epsilon = 0.3),
               "'epsilon' is the width of SpicyMKL's epsilon-insensitive loss and MWUMKL's")
  expect_error(mkl(d$x, d$y, method = "mwu", epsilon = 1), "'epsilon'")
  expect_error(cv.mkl(d$x, d$y, method = "uniform", C = c(2, 1), lambda = c(0.1, 0.5)),
               "a vector 'lambda' needs method = \"spicy\" and penalty = \"elasticnet\"")
})

test_that("print() and summary() show a method's extras", {
  d <- two_class(n = 40, p = 3, seed = 5)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)))
  sp <- mkl(d$x, d$y, kernels = ks, method = "spicy")
  expect_output(print(sp), sprintf("SpicyMKL: C_svm = %s", format(sp$info$C_svm, digits = 4)))
  expect_output(print(summary(sp)), "SpicyMKL: C_svm = ")
  expect_named(summary(sp)$extras, "C_svm")
  # the logistic loss has no SVM box constant to report
  sl <- mkl(d$x, d$y, kernels = ks, method = "spicy", loss = "logistic")
  expect_null(sl$info$C_svm)
  expect_false(any(grepl("C_svm", capture.output(print(sl)))))
  by <- suppressWarnings(mkl(d$x, d$x[, 1], kernels = ks, method = "bayes"))
  expect_output(print(by), "Empirical Bayes MKL: sigma2 = ")
  out <- capture.output(print(by))
  expect_false(any(grepl("C = NA", out)))
  un <- mkl(d$x, d$y, kernels = ks, method = "uniform")
  expect_null(summary(un)$extras)
  expect_output(print(un), "C = 1")
})

test_that("a new method is one entry: mkl() and mkl_methods() pick it up", {
  d <- two_class(n = 30, p = 3, seed = 2)
  ks <- kernel_set(rbf_kernel(1))
  toy <- mklearn:::method_entry(label = "toy", paper = "none",
                                losses = list(classification = "hinge"), control = "uniform",
                                fit = "fit_uniform", multiclass = FALSE)
  ns <- asNamespace("mklearn")
  unlockBinding(".mkl_registry", ns)
  assign(".mkl_registry", c(reg, list(toy = toy)), envir = ns)
  on.exit({
    assign(".mkl_registry", reg, envir = ns)
    lockBinding(".mkl_registry", ns)
  }, add = TRUE)
  expect_true("toy" %in% mkl_methods())
  f <- mkl(d$x, d$y, kernels = ks, method = "toy")
  expect_identical(f$method, "toy")
  expect_identical(f$weights, mkl(d$x, d$y, kernels = ks, method = "uniform")$weights)
  expect_error(mkl(d$x, rnorm(30), kernels = ks, method = "toy"),
               "method 'toy' does not do regression")
  expect_error(mkl(iris[, 1:4], iris$Species, kernels = ks, method = "toy"),
               "method 'toy' does not fit more than two classes")
})
