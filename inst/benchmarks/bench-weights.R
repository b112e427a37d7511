# Case weights: how closely a weighted fit matches the fit on repeated rows (integer weights,
# weight 0 as a dropped row) for every method that takes weights, and the uniform SVM with
# class weights against e1071::svm(class.weights = ) on one Gaussian kernel.
# Prints the largest relative differences of objective, kernel weights and decision values.
# Rscript inst/benchmarks/bench-weights.R   (about a minute on one thread)
suppressPackageStartupMessages(library(mklearn))
ctl <- function(...) mkl_control(nthreads = 1, ...)
rel <- function(a, b) max(abs(a - b)) / max(1, abs(a), abs(b))
fit <- function(...) suppressWarnings(mkl(...))

set.seed(1)
n <- 60
x <- matrix(rnorm(n * 3), n)
y <- ifelse(x[, 1]^2 + x[, 2] + 0.3 * rnorm(n) > 1, 1, -1)
r <- x[, 1] + sin(x[, 2]) + 0.1 * rnorm(n)
K <- gram(kernel_set(rbf_kernel(c(0.5, 2)), poly_kernel(1:2)), x)
w <- rep(c(3, 0, 1, 2), c(10, 5, 30, 15))
idx <- rep(seq_len(n), w)
first <- match(which(w > 0), idx)

cases <- list(
  list("uniform", "hinge", y), list("uniform", "squared", r), list("simple", "hinge", y),
  list("hessian", "hinge", y), list("lp", "hinge", y), list("spicy", "hinge", y),
  list("spicy", "logistic", y), list("spicy", "squared", r), list("spicy", "epsilon", r))
tab <- do.call(rbind, lapply(cases, function(cs) {
  m <- cs[[1]]; loss <- cs[[2]]; yy <- cs[[3]]
  fw <- fit(NULL, yy, kernels = K, method = m, loss = loss, weights = w, control = ctl())
  fd <- fit(NULL, yy[idx], kernels = K[idx, idx, ], method = m, loss = loss, control = ctl())
  data.frame(method = m, loss = loss, tol = mklearn:::method_control(m)$tol,
             objective = rel(fw$objective, fd$objective), weights = rel(fw$weights, fd$weights),
             decision = rel(fitted(fw)[w > 0], fitted(fd)[first]))
}))
cat("weights 3, 0, 1, 2 against repeated rows (n = 60, 4 kernels, default settings):\n")
print(tab, digits = 3, row.names = FALSE)

if (requireNamespace("e1071", quietly = TRUE)) {
  yf <- factor(ifelse(y > 0, "b", "a"))
  Kr <- exp(-0.5 * as.matrix(stats::dist(x))^2)
  cw <- c(a = 1, b = 3)
  f <- fit(NULL, yf, kernels = array(Kr, c(n, n, 1)), C = 2, class.weights = cw,
           control = ctl(svm_tol = 1e-8))
  s <- e1071::svm(x, yf, kernel = "radial", gamma = 0.5, cost = 2, scale = FALSE,
                  class.weights = cw, tolerance = 1e-8)
  dv <- attr(predict(s, x, decision.values = TRUE), "decision.values")
  sgn <- if (colnames(dv) == "a/b") -1 else 1
  cat(sprintf(paste0("\nuniform against e1071::svm(class.weights = c(a = 1, b = 3)), one ",
                     "Gaussian kernel, C = 2: largest difference of decision values %.2e\n"),
              max(abs(fitted(f) - sgn * drop(dv)))))
}
