# Full-scale paper Fig. 3 for MKL-L0/1-SVM: the three largest kernel weights along the ADMM
# iterations on each of the paper's six sets (Ionosphere, Sonar, Wpbc, Pima, Liver (ILPD),
# Haberman; the paper's text names only Ionosphere), one 70/30 split per set (set.seed(1), the
# split of the vignette's live Ionosphere run), the 10 Gaussian kernels of
# inst/benchmarks/bench-l01.R on z-scored features, one cold run per setting: "default" (C = 1,
# tol 3e-3), "tol 1e-3" (the same at the authors' tol) and "authors" (their demo's settings as in
# bench-l01.R part 3: C = 4, i.e. C = 8 on mkl()'s scale, rho = 4, 8, 8, their start w = 0, b = 1,
# d = 1/M, tol 1e-3). Writes inst/l01/fig3-results.csv: set, setting, C, tol, iteration,
# d_1 >= d_2 >= d_3 (the three largest weights at that iteration, from fit$history: the run
# kept, when a collapsed run was run again), and per fit the final largest weight and its
# kernel's sigma, the kernels non-zero, iterations, converged, test accuracy, whether mkl()
# warned (the overfit flag), the
# penalty rho2 = rho3 of the run kept over rho1 n (0.3 by default, 3 when a collapsed run was run
# again with grown penalties; 2 / n for the authors' rho, 20 / n grown), the near-identity
# kernels held out after a second collapse, and the CPU seconds of mkl(); date and machine.
# Values are rounded to 4 significant digits. A fit's iterations are thinned to at most 40 rows,
# evenly spaced on a log scale (the vignette's axis): iterations 1-10, then 30 points from 10 to
# the last iteration (an even thinning, every k-th, missed the climbs in the first 30).
#   Rscript inst/l01/fig3.R [sets]        # from the repository root
suppressPackageStartupMessages(library(mklearn))
source(file.path("inst", "benchmarks", "l01-data.R"))
args <- commandArgs(TRUE)
sets <- if (length(args) >= 1L) strsplit(args[1], ",")[[1]] else
  c("ionosphere", "sonar", "wpbc", "pima", "liver_ilpd", "haberman")
sigmas <- c(0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.2, 1.5, 1.7, 2)
ks <- kernel_set(rbf_kernel(sigmas))
settings <- list(
  default = list(C = 1, tol = 3e-3, control = mkl_control(platt = "train")),
  `tol 1e-3` = list(C = 1, tol = 1e-3, control = mkl_control(tol = 1e-3, platt = "train")),
  authors = list(C = 8, tol = 1e-3,
                 control = mkl_control(tol = 1e-3, rho1 = 4, rho2 = 8, rho3 = 8,
                                       start = "reference", b0 = 1, platt = "train")))
rows_per_fit <- 30
sig <- function(v) signif(v, 4)

out <- NULL
for (set in sets) {
  ds <- load_set(set)
  if (is.null(ds)) { cat(sprintf("%s: data not found, skipped\n", set)); next }
  set.seed(1)
  tr <- sample(nrow(ds$x), floor(0.7 * nrow(ds$x)))
  for (st in names(settings)) {
    C <- settings[[st]]$C
    tol <- settings[[st]]$tol
    t0 <- proc.time()
    # a warning of the fit (the overfit flag: kernels with a handful of neighbours) is counted
    warned <- 0L
    fit <- withCallingHandlers(
      mkl(ds$x[tr, ], ds$y[tr], kernels = ks, method = "l01", C = C,
          control = settings[[st]]$control),
      warning = function(w) { warned <<- warned + 1L; invokeRestart("muffleWarning") })
    cpu <- sum((proc.time() - t0)[c("user.self", "sys.self")])
    h <- fit$history
    n_h <- nrow(h)
    keep <- sort(unique(c(seq_len(min(10L, n_h)), n_h, if (n_h > 10L)
      round(exp(seq(log(10), log(n_h), length.out = rows_per_fit))))))
    acc <- mean(as.numeric(as.character(predict(fit, ds$x[-tr, ]))) == ds$y[-tr])
    out <- rbind(out, data.frame(
      set = set, setting = st, C = C, tol = tol, iteration = h$iteration[keep],
      d_1 = sig(h$d_1[keep]),
      d_2 = sig(h$d_2[keep]), d_3 = sig(h$d_3[keep]), final_largest = sig(max(fit$weights)),
      largest_sigma = sigmas[which.max(fit$weights)], nonzero = sum(fit$weights > 0),
      iterations = fit$iterations, converged = fit$converged, accuracy = sig(acc),
      warned = warned > 0L, rho2_n = sig(fit$info$rho[2] / (fit$info$rho[1] * length(tr))),
      held_out = length(fit$info$held_out), cpu_s = sig(cpu)))
    cat(sprintf(paste0("%-10s %-8s: %4d iterations (converged %s), largest weight %.3f (sigma ",
                       "%.1f), %d non-zero, accuracy %.3f, warned %s, rho2 / (rho1 n) %.3g, ",
                       "held out %d, %.2f CPU s\n"),
                set, st, fit$iterations, fit$converged, max(fit$weights),
                sigmas[which.max(fit$weights)], sum(fit$weights > 0), acc, warned > 0L,
                fit$info$rho[2] / (fit$info$rho[1] * length(tr)), length(fit$info$held_out), cpu))
  }
}
out$date <- format(Sys.time(), "%Y-%m-%d %H:%M")
out$machine <- sprintf("%s, %s, %d cores, R %s", Sys.info()[["nodename"]],
                       Sys.info()[["machine"]], parallel::detectCores(), getRversion())
utils::write.csv(out, file.path("inst", "l01", "fig3-results.csv"), row.names = FALSE)
