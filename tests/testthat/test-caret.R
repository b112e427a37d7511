# The caret model specification (R/caret.R).

test_that("caret::train tunes C over a small grid with mkl_caret()", {
  # (loading caret asks the system for its time zone, which warns on machines without one)
  if (!nzchar(Sys.getenv("TZ"))) {
    Sys.setenv(TZ = "UTC")
    on.exit(Sys.unsetenv("TZ"))
  }
  skip_if_not_installed("caret")
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), linear_kernel())
  spec <- mkl_caret(ks, "uniform")
  expect_true(all(c("label", "library", "type", "parameters", "grid", "fit", "predict", "prob",
                    "sort", "levels") %in% names(spec)))
  expect_identical(spec$type, c("Classification", "Regression"))
  expect_identical(mkl_caret(ks, "simple")$type, "Classification")
  expect_equal(spec$grid(NULL, NULL, len = 4)$C, c(0.1, 1, 10, 100))
  expect_identical(spec$sort(data.frame(C = c(10, 0.1, 1)))$C, c(0.1, 1, 10))
  set.seed(7)
  suppressWarnings(suppressMessages(  # caret's own start-up chatter
    tr <- caret::train(iris[, 1:4], iris$Species, method = spec,
                       tuneGrid = data.frame(C = c(0.1, 10)),
                       trControl = caret::trainControl(method = "cv", number = 3,
                                                       classProbs = TRUE))))
  expect_identical(nrow(tr$results), 2L)
  expect_true(tr$bestTune$C %in% c(0.1, 10))
  expect_gt(max(tr$results$Accuracy), 0.9)
  # the final model is mkl() at the chosen C on all the data
  ref <- mkl(iris[, 1:4], iris$Species, kernels = ks, method = "uniform", C = tr$bestTune$C)
  expect_s3_class(tr$finalModel, "mkl_multi")
  expect_equal(tr$finalModel$fitted, ref$fitted)
  expect_identical(as.character(predict(tr, iris[, 1:4])), as.character(predict(ref, iris[, 1:4])))
  P <- predict(tr, iris[1:5, 1:4], type = "prob")
  expect_identical(names(P), levels(iris$Species))
  expect_equal(unname(rowSums(P)), rep(1, 5))
  # binary probabilities: two columns named by the classes
  d <- iris[51:150, ]
  d$Species <- droplevels(d$Species)
  fb <- spec$fit(d[, 1:4], d$Species, NULL, data.frame(C = 1), levels(d$Species), TRUE, TRUE)
  pb <- spec$prob(fb, d[1:3, 1:4])
  expect_identical(names(pb), c("versicolor", "virginica"))
  expect_equal(pb$virginica, unname(predict(fb, d[1:3, 1:4], type = "response")))
  expect_identical(spec$levels(fb), c("versicolor", "virginica"))
  # regression
  fr <- spec$fit(mtcars[, -1], mtcars$mpg, NULL, data.frame(C = 1), NULL, TRUE, FALSE)
  expect_equal(spec$predict(fr, mtcars[1:3, -1]), predict(fr, mtcars[1:3, -1]))
  # caret's case weights are mkl()'s weights
  wts <- rep(c(2, 1), 50)
  fw <- spec$fit(d[, 1:4], d$Species, wts, data.frame(C = 1), NULL, TRUE, FALSE)
  expect_identical(fw$case_weights, wts)
  expect_equal(fw$fitted, mkl(d[, 1:4], d$Species, kernels = ks, C = 1, weights = wts)$fitted)
  expect_error(mkl_caret(ks, "mwu")$fit(d[, 1:4], d$Species, wts, data.frame(C = 1), NULL,
                                        TRUE, FALSE),
               "method 'mwu' does not take case weights")
  # errors
  expect_error(mkl_caret(gram(ks, as.matrix(iris[1:5, 1:4]))), "needs a kernel_set")
  expect_error(mkl_caret(ks, "bogus"), "'method' must be one of uniform")
  expect_error(mkl_caret(ks, "uniform", C = 2), "sets C itself")
  expect_error(mkl_caret(ks, "uniform", 2), "must be named")
})

test_that("the submodel loop fits one warm-started path and predicts every C from it", {
  if (!nzchar(Sys.getenv("TZ"))) {
    Sys.setenv(TZ = "UTC")
    on.exit(Sys.unsetenv("TZ"))
  }
  skip_if_not_installed("caret")
  d <- iris[51:150, ]
  d$Species <- droplevels(d$Species)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), linear_kernel(), features = c("all", "each"))
  spec <- mkl_caret(ks, "simple")
  grid <- data.frame(C = c(0.1, 1, 10, 100))
  info <- spec$loop(grid)
  expect_identical(info$loop, data.frame(C = 100))
  expect_identical(info$submodels, list(data.frame(C = c(10, 1, 0.1))))
  # a resample: one path over the grid, from the largest C down
  fp <- spec$fit(d[, 1:4], d$Species, NULL, info$loop, levels(d$Species), FALSE, TRUE)
  expect_s3_class(fp, "mkl_path")
  expect_identical(fp$C, c(100, 10, 1, 0.1))
  # (a resample's fits take Platt's sigmoid on their training values, as cv.mkl's folds)
  ref <- mkl(d[, 1:4], d$Species, kernels = ks, method = "simple", C = c(100, 10, 1, 0.1),
             control = mkl_control(platt = "train"))
  expect_equal(fp$fits[[4]]$weights, ref$fits[[4]]$weights)
  pr <- spec$predict(fp, d[1:6, 1:4], info$submodels[[1]])
  expect_length(pr, 4L)
  for (k in 1:4)
    expect_identical(pr[[k]], as.character(predict(ref$fits[[k]], d[1:6, 1:4])))
  pp <- spec$prob(fp, d[1:6, 1:4], info$submodels[[1]])
  expect_length(pp, 4L)
  expect_equal(pp[[3]]$virginica, unname(predict(ref$fits[[3]], d[1:6, 1:4], type = "response")))
  expect_error(spec$predict(fp, d[1:2, 1:4], data.frame(C = 3)), "no fit at C = 3")
  expect_identical(spec$predict(fp, d[1:6, 1:4]), pr[[1]])
  # the final model is one fit at the chosen C; so is a fit at a C that is not the loop's
  expect_s3_class(spec$fit(d[, 1:4], d$Species, NULL, info$loop, NULL, TRUE, TRUE), "mkl")
  expect_s3_class(spec$fit(d[, 1:4], d$Species, NULL, data.frame(C = 10), NULL, FALSE, TRUE),
                  "mkl")
  expect_null(mkl_caret(ks, "simple", loop = FALSE)$loop)
  expect_error(mkl_caret(ks, loop = NA), "'loop' must be TRUE or FALSE")
  # train() with and without the loop: the same resampled accuracies and chosen C
  run <- function(lp) {
    set.seed(11)
    suppressWarnings(suppressMessages(
      caret::train(d[, 1:4], d$Species, method = mkl_caret(ks, "simple", loop = lp),
                   tuneGrid = grid, trControl = caret::trainControl(method = "cv", number = 3))))
  }
  with_loop <- run(TRUE)
  without <- run(FALSE)
  expect_equal(with_loop$results, without$results)
  expect_identical(with_loop$bestTune, without$bestTune)
  expect_equal(with_loop$finalModel$weights, without$finalModel$weights)
})

test_that("varImp() shares each kernel's weight among the columns of its feature group", {
  if (!nzchar(Sys.getenv("TZ"))) {
    Sys.setenv(TZ = "UTC")
    on.exit(Sys.unsetenv("TZ"))
  }
  d <- two_class(60, 4)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), features = list("all", "each", c("v1", "v3")))
  fit <- mkl(d$x, d$y, kernels = ks, method = "simple", C = 10)
  w <- fit$weights
  grp <- rep(c("all", paste0("v", 1:4), "v13"), each = 2)
  by_group <- tapply(w, grp, sum)
  ref <- by_group[["all"]] / 4 + c(by_group[["v1"]], by_group[["v2"]], by_group[["v3"]],
                                    by_group[["v4"]]) + c(1, 0, 1, 0) * by_group[["v13"]] / 2
  spec <- mkl_caret(ks, "simple")
  imp <- spec$varImp(fit)
  expect_identical(rownames(imp), colnames(d$x))
  expect_equal(imp$Overall, unname(ref))
  expect_equal(sum(imp$Overall), 1)
  expect_gt(imp["v1", "Overall"], imp["v4", "Overall"])
  # multiclass: the mean over the binary problems
  fm <- mkl(iris[, 1:4], iris$Species, kernels = kernel_set(rbf_kernel(1), features = "each"),
            method = "simple")
  expect_equal(spec$varImp(fm)$Overall, unname(rowMeans(fm$weights)))
  expect_error(spec$varImp(mkl(y = d$y, kernels = gram(ks, d$x))),
               "feature importance needs an mkl\\(\\) fit on a kernel_set")
  skip_if_not_installed("caret")
  set.seed(3)
  tr <- suppressWarnings(suppressMessages(
    caret::train(d$x, factor(d$y), method = spec, tuneGrid = data.frame(C = c(1, 10)),
                 trControl = caret::trainControl(method = "cv", number = 3))))
  vi <- caret::varImp(tr, scale = FALSE)$importance
  expect_equal(vi$Overall, spec$varImp(tr$finalModel)$Overall)
  expect_identical(rownames(vi), colnames(d$x))
})

test_that("caret's resample fits use the training sigmoid, its final fit the cross-validated one", {
  ks <- kernel_set(rbf_kernel(c(0.5, 2)), linear_kernel())
  d <- iris[iris$Species != "setosa", ]
  d$Species <- droplevels(d$Species)
  spec <- mkl_caret(ks, "uniform")
  res <- spec$fit(d[, 1:4], d$Species, NULL, data.frame(C = 1), levels(d$Species),
                  last = FALSE, classProbs = TRUE)
  fin <- spec$fit(d[, 1:4], d$Species, NULL, data.frame(C = 1), levels(d$Species),
                  last = TRUE, classProbs = TRUE)
  expect_identical(res$platt_method, "train")
  expect_identical(fin$platt_method, "cv")
  # the same model, only the sigmoid differs
  expect_equal(res$fitted, fin$fitted)
})
