# caret::train() over a 10-value C grid (log-spaced, 0.01 to 100) with mkl_caret()'s submodel
# loop (one warm-started path per resample) and without it (every C fitted from scratch):
# Sonar (mlbench, 208 x 60), 5-fold cross-validation, the same seed for both, single-threaded
# (mkl_control(nthreads = 1)). Kernels: Gaussians of widths 2, 5 and 10 (the data are
# standardised) and polynomials of degree 1 and 2, on all the features and on each one
# (305 kernels). Each variant runs `reps` times, alternating, after one untimed warm-up (caret's
# first train() loads its packages); the best time is reported.
# Usage: Rscript bench-caret-loop.R [methods ...]   (default: uniform simple)
# MKL_BENCH_TOL=<tol> sets mkl_control(tol = ) for the methods other than uniform (default
# 0.01, SimpleMKL's relative duality gap); MKL_BENCH_REPS=<k> the repetitions (default 2).
# Prints per method both times, their ratio, the chosen C of each, the best mean accuracies,
# the largest difference between the two mean accuracies of a C, and the number of (C, fold)
# pairs (of 50) whose accuracies differ.
Sys.setenv(TZ = Sys.getenv("TZ", "UTC"))   # caret asks the system for its time zone
suppressPackageStartupMessages(library(mklearn))
methods <- commandArgs(trailingOnly = TRUE)
if (!length(methods)) methods <- c("uniform", "simple")
reps <- as.integer(Sys.getenv("MKL_BENCH_REPS", "2"))
tol <- as.numeric(Sys.getenv("MKL_BENCH_TOL", NA))
data("Sonar", package = "mlbench", envir = environment())
x <- as.matrix(Sonar[, -61])
y <- Sonar$Class
ks <- kernel_set(rbf_kernel(c(2, 5, 10)), poly_kernel(1:2), features = c("all", "each"))
grid <- data.frame(C = 10^seq(-2, 2, length.out = 10))

run <- function(method, loop) {
  ctl <- if (is.na(tol) || method == "uniform") mkl_control(nthreads = 1) else
    mkl_control(nthreads = 1, tol = tol)
  set.seed(2024)
  t0 <- proc.time()[["elapsed"]]
  tr <- suppressWarnings(caret::train(
    x, y, method = mkl_caret(ks, method, control = ctl, loop = loop), tuneGrid = grid,
    trControl = caret::trainControl(method = "cv", number = 5, returnResamp = "all")))
  list(time = proc.time()[["elapsed"]] - t0, fit = tr)
}

invisible(run("uniform", FALSE))    # warm-up
out <- NULL
for (m in methods) {
  res <- list(`TRUE` = list(), `FALSE` = list())
  for (r in seq_len(reps)) for (lp in if (r %% 2L) c(FALSE, TRUE) else c(TRUE, FALSE))
    res[[as.character(lp)]][[r]] <- run(m, lp)
  best <- function(lp) min(vapply(res[[lp]], `[[`, 1, "time"))
  a <- res[["TRUE"]][[1L]]$fit
  b <- res[["FALSE"]][[1L]]$fit
  acc_diff <- max(abs(a$results$Accuracy - b$results$Accuracy))
  # the accuracy of every C on every fold
  key <- function(r) r[order(r$C, r$Resample), "Accuracy"]
  fold_diff <- sum(key(a$resample) != key(b$resample))
  out <- rbind(out, data.frame(
    method = m, seconds_loop = best("TRUE"), seconds_no_loop = best("FALSE"),
    speedup = best("FALSE") / best("TRUE"), C_loop = a$bestTune$C, C_no_loop = b$bestTune$C,
    acc_loop = max(a$results$Accuracy), acc_no_loop = max(b$results$Accuracy),
    max_acc_diff = acc_diff, folds_differ = fold_diff))
  print(out[nrow(out), ], digits = 4, row.names = FALSE)
}
cat("\n")
print(out, digits = 4, row.names = FALSE)
