# Paper Table 2's third row for MKL-L0/1-SVM: SimpleMKL with the 10 Gaussian kernels on all
# features and the same 10 on every single feature (10 (d + 1) kernels), on the splits, data,
# z-scoring and C of inst/benchmarks/bench-l01.R (10 random 70/30 splits, C = 1); its rows are
# added to inst/l01/table2-results.csv as method "simple_perfeature" after each set (rows of
# the same set, split and method are replaced). Only classes are predicted, so Platt's sigmoid
# is fitted on the training values: time_mkl has no 5-fold refit, unlike bench-l01.R's rows.
#   Rscript inst/l01/table2-perfeature.R [splits = 10] [sets]   # from the repository root
suppressPackageStartupMessages(library(mklearn))
source(file.path("inst", "benchmarks", "l01-data.R"))
args <- commandArgs(TRUE)
nsplit <- if (length(args) >= 1L) as.integer(args[1]) else 10L
sets <- if (length(args) >= 2L) strsplit(args[2], ",")[[1]] else
  c("ionosphere", "sonar", "wpbc", "pima", "liver_ilpd", "haberman")
sigmas <- c(0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.2, 1.5, 1.7, 2)
ks <- kernel_set(rbf_kernel(sigmas), features = c("all", "each"))
# stamp the rows and put them into the table's CSV in place of earlier rows of theirs
write_rows <- function(out) {
  out$date <- format(Sys.time(), "%Y-%m-%d %H:%M")
  out$machine <- sprintf("%s, %s, %d cores, R %s", Sys.info()[["nodename"]],
                         Sys.info()[["machine"]], parallel::detectCores(), getRversion())
  f <- file.path("inst", "l01", "table2-results.csv")
  old <- utils::read.csv(f, stringsAsFactors = FALSE)
  old <- old[old$method != "simple_perfeature" | !paste(old$set, old$split) %in%
               paste(out$set, out$split), names(out)]
  utils::write.csv(rbind(old, out), f, row.names = FALSE)
}
out <- NULL
for (set in sets) {
  ds <- load_set(set)
  if (is.null(ds)) next
  for (s in seq_len(nsplit)) {
    set.seed(1000 + s)                                   # the splits of bench-l01.R
    tr <- sample(nrow(ds$x), floor(0.7 * nrow(ds$x)))
    t0 <- proc.time()[["elapsed"]]
    fit <- suppressWarnings(mkl(ds$x[tr, ], ds$y[tr], kernels = ks, method = "simple", C = 1,
                                control = mkl_control(platt = "train")))
    t_mkl <- proc.time()[["elapsed"]] - t0
    pred <- as.numeric(as.character(predict(fit, ds$x[-tr, ])))
    out <- rbind(out, data.frame(
      set = set, split = s, method = "simple_perfeature", acc = mean(pred == ds$y[-tr]),
      kernels = sum(fit$weights > 0), dmax = max(fit$weights),
      nsv = sum(rowSums(fit$alpha != 0) > 0), time_mkl = t_mkl,
      time_fit = unname(fit$timing[["fit"]]), converged = fit$converged,
      iterations = fit$iterations))
  }
  write_rows(out)
  r <- out[out$set == set, ]
  cat(sprintf(paste("%-10s M = %4d  kernels %5.1f  acc %.3f +- %.3f  time %.2f s  NSV %.1f",
                    "converged %d/%d\n"), set, length(fit$weights), mean(r$kernels),
              mean(r$acc), stats::sd(r$acc), mean(r$time_mkl), mean(r$nsv), sum(r$converged),
              nrow(r)))
}
