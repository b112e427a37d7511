# What summary() counts as support vectors of hinge-loss fits, against the count at a tight
# tolerance. Data: mlbench's Ionosphere, 250 rows drawn at random (seed 1); kernels
# kernel_set(rbf_kernel(c(0.5, 1, 2, 5)), poly_kernel(1:2), features = c("all", "each"))
# (44 kernels); C = 1 and 10. Per method and tolerance: the non-zero sample coefficients,
# the points whose largest coefficient exceeds 1e-3 of the largest (summary()'s rule), and the
# points within the margin y f(x) <= 1 + t for t = 1e-3, 1e-2. One thread.
# Results: inst/notes/NOTES-model.md.
library(mklearn)
data("Ionosphere", package = "mlbench")
x <- Ionosphere[, -c(2, 35)]
x$V1 <- as.numeric(as.character(x$V1))
x <- as.matrix(x)
y <- Ionosphere$Class
set.seed(1)
i <- sample(nrow(x), 250)
ks <- kernel_set(rbf_kernel(c(0.5, 1, 2, 5)), poly_kernel(1:2), features = c("all", "each"))
runs <- expand.grid(tol = c(0.01, 1e-4, 1e-6), method = c("spicy", "hessian", "mwu"),
                    C = c(1, 10), stringsAsFactors = FALSE)
runs <- runs[runs$method == "spicy" | runs$tol == 0.01, ]
rows <- list()
for (r in seq_len(nrow(runs))) {
  m <- runs$method[r]
  ctl <- if (m == "mwu") mkl_control(nthreads = 1) else
    mkl_control(nthreads = 1, tol = runs$tol[r], maxiter = 5000)
  f <- suppressWarnings(mkl(x[i, ], y[i], method = m, C = runs$C[r], kernels = ks,
                            control = ctl))
  a <- abs(as.matrix(f$alpha))
  a <- apply(a, 1L, max)
  mg <- f$y * f$fitted
  rows[[r]] <- data.frame(method = m, C = runs$C[r], tol = if (m == "mwu") NA else runs$tol[r],
                          nonzero = sum(a > 0), rel_1e3 = sum(a > 1e-3 * max(a)),
                          summary_n_sv = summary(f)$n_sv, margin_1e3 = sum(mg <= 1 + 1e-3),
                          margin_1e2 = sum(mg <= 1 + 1e-2))
}
print(do.call(rbind, rows), row.names = FALSE)
