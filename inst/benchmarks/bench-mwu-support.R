# MWUMKL's soft margin when many training points overlap: T steps give at most 2 T support
# points, and at the optimum every margin violator is one. twonorm (mlbench, seed 1, 20
# features, Bayes error about 2.3 %), 10 Gaussian kernels sigma = 2^(1, 1.5, ..., 5.5) on the
# standardised features, on the fly, one thread, 5,000 held-out points. Prints per case T, the
# support (alpha > 0), the training points misclassified outside it ("uncovered"), the status
# (fit$info$status: "uncovered" with the warning), the held-out accuracy and the training points
# the Bayes rule misclassifies. Measurements: inst/notes/NOTES-mwu.md.
# Usage: Rscript bench-mwu-support.R [n=epsilon:ratio:C ...] (default: the cases of the notes)
suppressPackageStartupMessages(library(mklearn))
args <- commandArgs(trailingOnly = TRUE)
if (!length(args))
  args <- c("5000=0.2:1:1", "5000=0.5:1:1", "5000=0.8:1:1", "5000=0.5:1:0.1", "5000=0.5:1:10",
            "5000=0.5:3:1", "2000=0.8:1:1", "2000=0.8:2:1", "2000=0.8:4:1")
cat(sprintf("%-6s %-5s %-5s %-4s %6s %7s %9s %9s %8s %11s %7s\n", "n", "eps", "ratio", "C", "T",
            "support", "uncovered", "status", "accuracy", "bayes_wrong", "cpu"))
ks <- kernel_set(rbf_kernel(2^seq(1, 5.5, by = 0.5)))
cpu <- function() sum(proc.time()[c("user.self", "sys.self")])
for (a in args) {
  n <- as.integer(sub("=.*", "", a))
  v <- as.double(strsplit(sub(".*=", "", a), ":")[[1L]])
  set.seed(1)
  d <- mlbench::mlbench.twonorm(n + 5000, d = 20)
  y <- ifelse(d$classes == 1, -1, 1)
  tr <- seq_len(n)
  bw <- sum(ifelse(rowSums(d$x[tr, ]) > 0, -1, 1) != y[tr])
  c0 <- cpu()
  fit <- suppressWarnings(mkl(d$x[tr, ], y[tr], kernels = ks, method = "mwu", epsilon = v[1L],
                              C = v[3L], control = mkl_control(nthreads = 1, store = "fly",
                                                               ratio = v[2L])))
  c1 <- cpu() - c0
  acc <- mean(predict(fit, d$x[-tr, ]) == y[-tr])
  cat(sprintf("%-6d %-5g %-5g %-4g %6d %7d %9d %9s %8.4f %11d %6.1fs\n", n, v[1L], v[2L], v[3L],
              fit$info$T, fit$info$support, fit$info$uncovered, fit$info$status, acc, bw, c1))
}
