# SpicyMKL's tuning knobs (spicy_tuning(), R/tuning.R): validated like mkl_control(), carried by
# mkl_control(tuning = ), read by SpicyMKL only, refused by mkl_control() itself.

mc <- function(method, control = NULL) mklearn:::method_control(method, control)

test_that("spicy_tuning() records what was set and checks every value", {
  expect_s3_class(spicy_tuning(), "mkl_tuning")
  expect_identical(length(spicy_tuning()), 0L)
  tu <- spicy_tuning(box_fraction = 1L, model_rounds = 3, inner_maxiter = 1e12)
  expect_identical(names(tu), c("inner_maxiter", "model_rounds", "box_fraction"))
  expect_identical(tu$box_fraction, 1)
  expect_identical(tu$model_rounds, 3L)
  expect_identical(tu$inner_maxiter, .Machine$integer.max)
  expect_error(spicy_tuning(boxfraction = 0), "unused argument")
  expect_error(spicy_tuning(inner_tol = -1e-6), "'inner_tol' must be one finite number > 0")
  expect_error(spicy_tuning(inner_maxiter = NA), "'inner_maxiter' must be one finite number >= 1")
  expect_error(spicy_tuning(cg_threshold = 0.5), "'cg_threshold'")
  expect_error(spicy_tuning(screening = 1), "'screening' must be TRUE or FALSE")
  expect_error(spicy_tuning(lazy_screening = c(TRUE, FALSE)), "'lazy_screening'")
  expect_error(spicy_tuning(svm_dual = NA), "'svm_dual' must be TRUE or FALSE")
  expect_identical(spicy_tuning(cg = NA)$cg, NA)
  expect_error(spicy_tuning(cg = "no"), "'cg' must be TRUE or FALSE \\(or NA\\)")
  expect_error(spicy_tuning(newton_cache = 1),
               "'newton_cache' must be TRUE or FALSE \\(or NA\\)")
  for (bad in list(NA, 1, "yes", c(TRUE, FALSE)))
    expect_error(spicy_tuning(newton_float = bad), "'newton_float' must be TRUE or FALSE")
  for (nm in c("model_rounds", "cg_deflate")) {
    for (bad in c(list(-1, 2.5, "5", 1001, c(1, 2)), if (nm == "cg_deflate") list(NA)))
      expect_error(do.call(spicy_tuning, setNames(list(bad), nm)),
                   sprintf("'%s' must be a whole number from 0 to 1000", nm))
    expect_identical(do.call(spicy_tuning, setNames(list(0), nm))[[nm]], 0L)
  }
  # model_rounds NA (the default): 5, and 20 on the low-rank store
  expect_identical(spicy_tuning(model_rounds = NA)$model_rounds, NA_integer_)
  expect_identical(mklearn:::spicy_model_rounds(NA_integer_, TRUE), 20L)
  expect_identical(mklearn:::spicy_model_rounds(NA_integer_, FALSE), 5L)
  expect_identical(mklearn:::spicy_model_rounds(3L, TRUE), 3L)
  for (bad in list(0, -0.1, NA, "0.1", Inf, c(0.1, 1)))
    expect_error(spicy_tuning(slack_ratio = bad), "'slack_ratio' must be one finite number > 0")
  expect_identical(spicy_tuning(slack_ratio = 1L)$slack_ratio, 1)
  for (bad in list(-1, NA, "0.1", Inf, c(0, 1)))
    expect_error(spicy_tuning(inner_rel = bad), "'inner_rel' must be one finite number >= 0")
  expect_identical(spicy_tuning(inner_rel = 0)$inner_rel, 0)
  for (bad in list(-0.1, 1.5, NA, "0.5", Inf, c(0, 1)))
    expect_error(spicy_tuning(box_fraction = bad),
                 "'box_fraction' must be one finite number >= 0 and <= 1")
  expect_identical(spicy_tuning(box_fraction = 0)$box_fraction, 0)
  expect_identical(spicy_tuning(gamma = NA)$gamma, NA)
  expect_error(spicy_tuning(gamma = -1), "'gamma' must be one finite number > 0")
  expect_error(spicy_tuning(gamma_b = 0), "'gamma_b' must be one finite number > 0")
  expect_error(spicy_tuning(gamma_scale = NA), "'gamma_scale' must be one finite number > 0")
  expect_error(spicy_tuning(gamma_max = -1), "'gamma_max' must be one finite number > 0")
  expect_error(spicy_tuning(warm_shrink = 0), "'warm_shrink' must be one finite number > 0")
  expect_error(spicy_tuning(gamma_mult = 0.5), "'gamma_mult' must be one finite number >= 1")
  # every knob of the table is an argument, and its default is accepted
  tab <- mklearn:::.spicy_tuning
  expect_setequal(names(formals(spicy_tuning)), names(tab))
  for (nm in names(tab))
    expect_s3_class(do.call(spicy_tuning, tab[nm]), "mkl_tuning")
  expect_output(print(spicy_tuning()), "spicy_tuning.*all defaults")
  expect_output(print(spicy_tuning(box_fraction = 0)), "box_fraction")
})

test_that("mkl_control() refuses a knob, naming spicy_tuning(), and checks 'tuning'", {
  expect_error(mkl_control(box_fraction = 0),
               paste0("'box_fraction': tuning of method 'spicy', set by spicy_tuning\\(\\), not ",
                      "by mkl_control\\(\\); give mkl_control\\(tuning = ",
                      "spicy_tuning\\(box_fraction = ...\\)\\)"))
  expect_error(mkl_control(tol = 1e-3, inner_tol = 1e-8, model_rounds = 0),
               "'inner_tol', 'model_rounds': tuning of method 'spicy'")
  for (nm in names(mklearn:::.spicy_tuning))
    expect_error(do.call(mkl_control, setNames(list(1), nm)), "set by spicy_tuning\\(\\)")
  expect_error(mkl_control(tuning = list(box_fraction = 0)),
               "'tuning' must be made by spicy_tuning\\(\\)")
  ctl <- mkl_control(tol = 1e-3, tuning = spicy_tuning(box_fraction = 0))
  expect_identical(names(ctl), c("tol", "tuning"))
  expect_output(print(ctl), "box_fraction")
})

test_that("method_control() puts the knobs flat beside the settings; other methods refuse them", {
  old <- options(mklearn.max_bytes = 1e9, mklearn.threads = 0L)
  on.exit(options(old), add = TRUE)
  full <- mc("spicy", mkl_control(maxiter = 9,
                                  tuning = spicy_tuning(gamma_mult = 20, cg_threshold = 100)))
  expect_identical(full$maxiter, 9L)
  expect_identical(full$gamma_mult, 20)
  expect_identical(full$cg_threshold, 100L)
  expect_identical(full$gamma, NA_real_)
  expect_identical(full$cg, NA)
  expect_null(full$tuning)
  # the same list as the flat plain list of an internal call, and idempotent
  expect_identical(full, mc("spicy", list(maxiter = 9, gamma_mult = 20, cg_threshold = 100)))
  expect_identical(mc("spicy", full), full)
  # the defaults: an empty spicy_tuning() is no tuning
  expect_identical(mc("spicy", mkl_control(tuning = spicy_tuning())), mc("spicy"))
  for (m in setdiff(mkl_methods(), "spicy"))
    expect_error(mc(m, mkl_control(tuning = spicy_tuning(box_fraction = 0))),
                 sprintf(paste0("spicy_tuning\\(\\) tunes method 'spicy'; method '%s' does ",
                                "not read it"), m))
  d <- two_class(n = 30, p = 3)
  expect_error(mkl(d$x, d$y, method = "hessian",
                   control = mkl_control(tuning = spicy_tuning(slack_ratio = 1))),
               "method 'hessian' does not read it")
})

test_that("a knob reaches the solver as the flat setting of an internal call", {
  d <- two_class(n = 60, p = 3, seed = 4)
  K <- centred_rbf_kernels(d$x, c(0.5, 2))
  tuned <- mkl_control(nthreads = 1, tuning = spicy_tuning(inner_tol = 1e-8, gamma_scale = 2))
  a <- mkl(y = d$y, kernels = K, method = "spicy", control = tuned)
  b <- mklearn:::fit_spicy(K, d$y, "classification", a$info$C_solver,
                           list(nthreads = 1, inner_tol = 1e-8, gamma_scale = 2), NULL)
  expect_identical(unname(a$weights), unname(b$weights))
  expect_identical(a$objective, b$objective)
  plain <- mkl(y = d$y, kernels = K, method = "spicy", control = mkl_control(nthreads = 1))
  expect_false(identical(a$history$objective, plain$history$objective))
})
