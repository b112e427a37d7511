skip_if_not_installed("ggplot2")

ks_plot <- function() kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(1), features = c("all", "each"))

test_that("autoplot() is registered for fits, multiclass fits, paths and cross-validations", {
  for (cl in c("mkl", "mkl_multi", "mkl_path", "cv.mkl"))
    expect_true(is.function(utils::getS3method("autoplot", cl, envir = asNamespace("ggplot2"),
                                               optional = TRUE)), info = cl)
})

test_that("autoplot() of a fit: the selected kernel weights, and the iteration history", {
  d <- two_class(60, 3, seed = 31)
  fit <- mkl(d$x, d$y, kernels = ks_plot(), method = "spicy", C = 2)
  p <- ggplot2::autoplot(fit)
  expect_s3_class(p, "ggplot")
  ld <- ggplot2::layer_data(p)
  w <- coef(fit)
  expect_equal(sort(ld$xmax), sort(unname(w[w > 0])))
  expect_match(p$labels$title, sprintf("%d of 12 kernels selected", sum(w > 0)))
  p2 <- ggplot2::autoplot(fit, top = 2)
  expect_equal(sort(ggplot2::layer_data(p2)$xmax), utils::tail(sort(unname(w)), 2))
  expect_error(ggplot2::autoplot(fit, top = 0), "'top' must be")
  h <- ggplot2::autoplot(fit, type = "history")
  hd <- ggplot2::layer_data(h)
  gaps <- fit$history$gap[!is.na(fit$history$gap) & fit$history$gap > 0]
  expect_equal(sort(hd$y[hd$PANEL == "2"]), sort(gaps))
  un <- mkl(d$x, d$y, kernels = ks_plot())
  expect_error(ggplot2::autoplot(un, type = "history"), "no iteration history")
  expect_error(ggplot2::autoplot(fit, type = "gap"), "'type'")
})

test_that("autoplot() of a multiclass fit: one panel per binary problem", {
  mc <- mkl(Species ~ ., data = iris, kernels = kernel_set(rbf_kernel(c(1, 3)), linear_kernel()),
            method = "simple")
  p <- ggplot2::autoplot(mc)
  ld <- ggplot2::layer_data(p)
  expect_equal(length(unique(ld$PANEL)), 3L)
  W <- coef(mc)
  expect_equal(sort(ld$xmax), sort(W[W > 0]))
  expect_error(ggplot2::autoplot(mc, type = "history"), "plot one of object\\$fits")
})

test_that("autoplot() of a path: weights and training error along C", {
  d <- two_class(60, 3, seed = 32)
  Cs <- c(10, 1, 0.3)
  path <- mkl(d$x, d$y, kernels = ks_plot(), method = "simple", C = Cs)
  p <- ggplot2::autoplot(path, top = 3)
  ld <- ggplot2::layer_data(p)
  expect_equal(length(unique(ld$colour)), 3L)
  expect_equal(sort(unique(ld$x)), sort(log10(Cs)))
  W <- coef(path, s = Cs)
  top3 <- names(sort(apply(W, 1, max), decreasing = TRUE))[1:3]
  expect_equal(sort(ld$y), sort(as.vector(W[top3, ])))
  e <- ggplot2::autoplot(path, type = "error")
  ed <- ggplot2::layer_data(e)
  tab <- summary(path)$table
  expect_equal(ed$y[ed$PANEL == "2"][order(ed$x[ed$PANEL == "2"])], rev(tab$error))
  expect_equal(ed$y[ed$PANEL == "1"][order(ed$x[ed$PANEL == "1"])], rev(tab$kernels))
})

test_that("autoplot() of a cross-validation: the curve, its error bars, C.min and C.1se", {
  d <- two_class(80, 3, seed = 33)
  set.seed(7)
  Cs <- c(100, 10, 1, 0.1)
  cv <- suppressMessages(cv.mkl(d$x, d$y, kernels = ks_plot(), C = Cs, nfolds = 3))
  p <- ggplot2::autoplot(cv)
  eb <- ggplot2::layer_data(p, 1L)
  expect_equal(eb$ymin[order(-eb$x)], cv$cvlo)
  expect_equal(eb$ymax[order(-eb$x)], cv$cvup)
  pt <- ggplot2::layer_data(p, 2L)
  expect_equal(pt$y[order(-pt$x)], cv$cvm)
  vl <- ggplot2::layer_data(p, 3L)
  expect_equal(sort(vl$xintercept), sort(log10(c(cv$C.min, cv$C.1se))))
  expect_identical(p$labels$y, "class")
})
