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
