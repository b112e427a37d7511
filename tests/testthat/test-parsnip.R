test_that("a missing suggested package is named", {
  expect_error(mklearn:::need_package("notapackage.mklearn", "mkl_svm()"),
               "mkl_svm\\(\\) needs the notapackage.mklearn package")
})

skip_if_not_installed("parsnip")

ks_pars <- function()
  kernel_set(rbf_kernel(c(0.5, 2)), linear_kernel(), features = c("all", "each"))

sonar_small <- function() {
  data("Sonar", package = "mlbench", envir = environment())
  set.seed(11)
  Sonar[sample(nrow(Sonar), 90), c(1:8, 61)]
}

test_that("mkl_svm() is a parsnip model with engine 'mklearn' whose cost is C", {
  spec <- mkl_svm(cost = 3, method = "simple")
  expect_s3_class(spec, c("mkl_svm", "model_spec"))
  expect_true("mkl_svm" %in% parsnip::get_model_env()$models)
  spec <- parsnip::set_mode(parsnip::set_engine(spec, "mklearn", kernels = ks_pars()),
                            "classification")
  tr <- parsnip::translate(spec)
  expect_identical(rlang::quo_get_expr(tr$method$fit$args$C), 3)
  expect_identical(rlang::quo_get_expr(tr$method$fit$args$method), "simple")
  expect_identical(tr$method$fit$func, c(pkg = "mklearn", fun = "mkl"))
  expect_error(mkl_svm(mode = "survival"), "mode")
  up <- stats::update(spec, cost = 10)
  expect_identical(rlang::quo_get_expr(up$args$cost), 10)
  # cost is tunable, with dials::cost() as its parameter
  tn <- parsnip::set_engine(mkl_svm(cost = parsnip::tune()), "mklearn")
  tb <- generics::tunable(tn)
  expect_identical(tb$call_info[[match("cost", tb$name)]], list(pkg = "dials", fun = "cost"))
  skip_if_not_installed("dials")
  ps <- parsnip::extract_parameter_set_dials(tn)
  expect_identical(ps$id, "cost")
})

test_that("a classification fit equals mkl() at the same C; class and probability predictions", {
  d <- sonar_small()
  spec <- parsnip::set_mode(parsnip::set_engine(mkl_svm(cost = 2, method = "simple"),
                                                "mklearn", kernels = ks_pars()),
                            "classification")
  pf <- parsnip::fit(spec, Class ~ ., data = d[1:70, ])
  ref <- mkl(as.matrix(d[1:70, 1:8]), d$Class[1:70], kernels = ks_pars(), method = "simple",
             C = 2)
  expect_equal(coef(pf$fit), coef(ref))
  new <- d[71:90, ]
  pc <- predict(pf, new)
  expect_named(pc, ".pred_class")
  expect_identical(as.character(pc$.pred_class),
                   as.character(predict(ref, as.matrix(new[, 1:8]))))
  pp <- predict(pf, new, type = "prob")
  expect_named(pp, paste0(".pred_", levels(d$Class)))
  expect_equal(pp[[2]], unname(predict(ref, as.matrix(new[, 1:8]), type = "response")))
  expect_equal(pp[[1]] + pp[[2]], rep(1, 20))
  # more than two classes: one probability column per class
  mf <- parsnip::fit(parsnip::set_mode(parsnip::set_engine(mkl_svm(), "mklearn"),
                                       "classification"), Species ~ ., data = iris)
  mp <- predict(mf, iris[c(1, 51, 101), ], type = "prob")
  expect_named(mp, paste0(".pred_", levels(iris$Species)))
  expect_equal(rowSums(as.matrix(mp)), rep(1, 3))
  expect_identical(as.character(predict(mf, iris[c(1, 51, 101), ])$.pred_class),
                   c("setosa", "versicolor", "virginica"))
})

test_that("a regression fit equals mkl(task = 'regression') and predicts numbers", {
  spec <- parsnip::set_mode(parsnip::set_engine(mkl_svm(cost = 5), "mklearn",
                                                kernels = ks_pars()), "regression")
  pf <- parsnip::fit(spec, mpg ~ ., data = mtcars[1:25, ])
  ref <- mkl(as.matrix(mtcars[1:25, -1]), mtcars$mpg[1:25], kernels = ks_pars(), C = 5,
             task = "regression")
  pn <- predict(pf, mtcars[26:32, ])
  expect_named(pn, ".pred")
  expect_equal(pn$.pred, unname(predict(ref, as.matrix(mtcars[26:32, -1]))))
})

test_that("mkl_method_param() is a dials parameter of mklearn methods", {
  skip_if_not_installed("dials")
  p <- mkl_method_param(c("uniform", "simple"))
  expect_s3_class(p, "qual_param")
  expect_identical(p$values, c("uniform", "simple"))
  expect_error(mkl_method_param("svm"), "'values' must be methods of mkl_methods\\(\\)")
})

test_that("tune_grid() tunes cost over rsample folds in a workflow with a recipe", {
  # (tune's dependencies read the time zone when loaded: without TZ, Sys.timezone() may warn)
  if (!nzchar(Sys.getenv("TZ"))) {
    Sys.setenv(TZ = "UTC")
    on.exit(Sys.unsetenv("TZ"))
  }
  for (p in c("tune", "dials", "workflows", "rsample", "yardstick", "recipes"))
    skip_if_not_installed(p)
  d <- sonar_small()
  rec <- recipes::step_normalize(recipes::recipe(Class ~ ., data = d),
                                 recipes::all_numeric_predictors())
  spec <- parsnip::set_mode(parsnip::set_engine(mkl_svm(cost = tune::tune(), method = "simple"),
                                                "mklearn", kernels = ks_pars()),
                            "classification")
  wf <- workflows::add_model(workflows::add_recipe(workflows::workflow(), rec), spec)
  set.seed(12)
  folds <- rsample::vfold_cv(d, v = 3, strata = Class)
  res <- tune::tune_grid(wf, resamples = folds, grid = data.frame(cost = c(1, 10)),
                         metrics = yardstick::metric_set(yardstick::accuracy,
                                                         yardstick::roc_auc))
  m <- tune::collect_metrics(res)
  expect_equal(nrow(m), 4L)
  expect_setequal(m$.metric, c("accuracy", "roc_auc"))
  expect_true(all(m$n == 3L))
  # the accuracy of the first fold at cost = 10 is that of mkl() on the same rows
  sp <- rsample::get_rsplit(folds, 1L)
  tr <- recipes::prep(rec, rsample::analysis(sp))
  xa <- recipes::bake(tr, NULL)
  xb <- recipes::bake(tr, rsample::assessment(sp))
  ref <- mkl(as.matrix(xa[, 1:8]), xa$Class, kernels = ks_pars(), method = "simple", C = 10)
  acc <- mean(predict(ref, as.matrix(xb[, 1:8])) == xb$Class)
  per <- tune::collect_metrics(res, summarize = FALSE)
  per <- per[per$cost == 10 & per$.metric == "accuracy" & per$id == "Fold1", ]
  expect_equal(per$.estimate, acc)
  best <- tune::select_best(res, metric = "accuracy")
  fin <- tune::finalize_workflow(wf, best)
  expect_identical(rlang::quo_get_expr(workflows::extract_spec_parsnip(fin)$args$cost),
                   best$cost)
})
