# MWUMKL's hard margin (C = Inf): the certificate n * objective (the squared bound on the margin
# relative to the points' norm) and the training points misclassified, on classes that cannot
# be separated and on separable ones (inst/notes/NOTES-mwu.md). A few seconds.
#
#   Rscript bench-mwu-margin.R
suppressPackageStartupMessages(library(mklearn))
ks6 <- kernel_set(rbf_kernel(sigma = c(0.5, 1, 2, 5)), poly_kernel(degree = 1:2))
lin <- kernel_set(poly_kernel(1))
row <- function(label, x, y, ks, eps = 0.2) {
  f <- suppressWarnings(suppressMessages(
    mkl(x, y, kernels = ks, method = "mwu", C = Inf, epsilon = eps,
        control = mkl_control(nthreads = 1))))
  yy <- ifelse(y == levels(y)[2], 1, -1)
  cat(sprintf("%-44s eps %.2f  n*objective %9.2e  misclassified %5.1f %%  status %s\n", label,
              eps, nrow(x) * f$objective, 100 * mean(yy * f$fitted <= 0),
              if (is.null(f$info$status)) "-" else f$info$status))
}
set.seed(1)
z <- matrix(rnorm(50 * 4), 50, 4)
Z <- rbind(z, z)
Y <- factor(rep(c("a", "b"), each = 50))
for (eps in c(0.2, 0.1, 0.05)) row("duplicated rows, opposite labels", Z, Y, ks6, eps)
row("duplicated rows, jitter 0", Z, Y,
    kernel_set(rbf_kernel(sigma = c(0.5, 1, 2, 5)), poly_kernel(degree = 1:2), jitter = 0))
set.seed(2)
x1 <- matrix(rnorm(100), 100, 1)
y1 <- factor(ifelse(x1[, 1] + rnorm(100) > 0, "a", "b"))
for (eps in c(0.5, 0.2, 0.05)) row("1-D overlapping classes, linear kernel", x1, y1, lin, eps)
for (eps in c(0.5, 0.2, 0.05)) row("1-D overlapping classes, 6 kernels", x1, y1, ks6, eps)
sets <- list()
utils::data("Sonar", package = "mlbench", envir = environment())
sets$Sonar <- list(x = as.matrix(Sonar[, 1:60]), y = Sonar$Class)
utils::data("Ionosphere", package = "mlbench", envir = environment())
io <- Ionosphere[, -2]
io$V1 <- as.numeric(as.character(io$V1))
sets$Ionosphere <- list(x = as.matrix(io[, 1:33]), y = io$Class)
utils::data("PimaIndiansDiabetes", package = "mlbench", envir = environment())
sets$`Pima rows 1-300` <- list(x = as.matrix(PimaIndiansDiabetes[1:300, 1:8]),
                               y = PimaIndiansDiabetes$diabetes[1:300])
for (nm in names(sets)) {
  row(paste(nm, "linear kernel"), sets[[nm]]$x, sets[[nm]]$y, lin)
  row(paste(nm, "6 kernels"), sets[[nm]]$x, sets[[nm]]$y, ks6)
}
set.seed(1)
xs <- matrix(rnorm(200), 50, 4)
row("4-D sign of the first feature, 6 kernels", xs, factor(ifelse(xs[, 1] > 0, "a", "b")), ks6)
