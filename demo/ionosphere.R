# mklearn demo: multiple kernel learning on the Ionosphere radar data (mlbench).
library(mklearn)
if (!requireNamespace("mlbench", quietly = TRUE)) stop("this demo needs the mlbench package")
data("Ionosphere", package = "mlbench")
x <- Ionosphere[, -c(2, 35)]               # V2 is constant; column 35 is the class
x$V1 <- as.numeric(as.character(x$V1))
y <- Ionosphere$Class
set.seed(1)
train <- sample(nrow(x), 250)

# 27 kernels (24 Gaussian widths, polynomial degrees 1-3) on all columns and on each column
ks <- kernel_set(rbf_kernel(sigma = c(0.1, 0.25, 0.5, 0.75, 1:20)), poly_kernel(degree = 1:3),
                 features = c("all", "each"))
cat(sprintf("Ionosphere: %d training and %d test points, %d features, %d kernels\n\n",
            length(train), nrow(x) - length(train), ncol(x), n_kernels(ks, x)))
for (m in intersect(c("uniform", "spicy", "hessian"), mkl_methods())) {
  # C on the unit-diagonal scale (see ?mkl): uniform 40 and hessian 0.4 are the SVM constants
  # 1e4 and 100 on these 250 unit-trace kernels; spicy 10 is the penalty weight 1/(2C) = 0.05
  C <- switch(m, uniform = 40, spicy = 10, hessian = 0.4)
  t <- system.time(fit <- mkl(x[train, ], y[train], kernels = ks, method = m, C = C))
  acc <- mean(predict(fit, x[-train, ]) == y[-train])
  cat(sprintf("method %-8s C = %-5s test accuracy %.3f  kernels selected %3d of %d  (%.2f s)\n",
              m, format(C), acc, sum(coef(fit) > 0), fit$M, t[["elapsed"]]))
  top <- utils::head(sort(coef(fit, nonzero = TRUE), decreasing = TRUE), 5)
  print(round(top, 4))
  cat("\n")
}
