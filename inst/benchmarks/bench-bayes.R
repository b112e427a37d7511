# Empirical Bayes MKL: the scoring update (the default) against the MacKay iteration
# (update = "mackay", the former default) in the same build and process (NOTES-bayes.md).
#
# Data (n = 500 or close): mlbench's friedman1 and friedman3 (n = 500, seeds 11 and 13),
# BostonHousing (all 506 rows), PimaIndiansDiabetes (538 rows, seed 2024; classification).
# Kernels: mkl()'s default set. Settings: mkl_control(nthreads = 1), tol 1e-4 (the default)
# and 1e-7 (to compare the optima). Reports user CPU seconds, steps, factorisations, the
# objective (negative log marginal likelihood) and the largest difference of fitted values.
#   Rscript bench-bayes.R
library(mklearn)
data("BostonHousing", package = "mlbench", envir = environment())
data("PimaIndiansDiabetes", package = "mlbench", envir = environment())
simulated <- function(generator, seed) {
  set.seed(seed)
  d <- generator(500)
  list(x = d$x, y = d$y)
}
set.seed(2024)
ip <- sample(768, 538)
sets <- list(friedman1 = simulated(mlbench::mlbench.friedman1, 11),
             friedman3 = simulated(mlbench::mlbench.friedman3, 13),
             BostonHousing = list(x = data.matrix(BostonHousing[, -14]) -
                                    outer(rep(1, 506), c(0, 0, 0, 1, rep(0, 9))),
                                  y = BostonHousing$medv),
             Pima = list(x = as.matrix(PimaIndiansDiabetes[ip, 1:8]),
                         y = PimaIndiansDiabetes$diabetes[ip]))
tols <- Sys.getenv("MKL_BENCH_TOLS", "1e-4,1e-7")   # e.g. "1e-4" for the timings alone
tols <- as.numeric(strsplit(tols, ",")[[1]])
for (tol in tols) for (nm in names(sets)) {
  fits <- list()
  for (upd in c("mackay", "scoring")) {
    ctl <- mkl_control(nthreads = 1, tol = tol, update = upd)
    t <- system.time(f <- suppressWarnings(mkl(sets[[nm]]$x, sets[[nm]]$y, method = "bayes",
                                                control = ctl)))[["user.self"]]
    fits[[upd]] <- f
    cat(sprintf("%-13s n=%d tol=%g %-8s %7.2fs steps %4d factorisations %4d conv %s J %.10f\n",
                nm, nrow(sets[[nm]]$x), tol, upd, t, f$iterations, f$info$factorizations,
                f$converged, f$objective))
  }
  cat(sprintf("%-13s max |fitted difference| %.2e (sd of y %.3g)\n", nm,
              max(abs(fits$mackay$fitted - fits$scoring$fitted)),
              stats::sd(as.numeric(fits$mackay$y))))
}
