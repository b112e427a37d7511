# Benchmark: outer iterations the SVM family needs to reach the default tolerance (relative
# duality gap 0.01), to size the default maxiter (inst/notes/NOTES-svm-family.md).
#
#   Rscript bench-maxiter.R
#   MKL_BENCH_DATA=<directory of ionosphere.csv, sonar.csv, pima.csv (first column y in -1/+1)>:
#       read the sets there instead of from mlbench
#   MKL_BENCH_METHODS=simple,hessian,lp   MKL_BENCH_MAXSEC=600 (time limit of one fit)
#   MKL_BENCH_OUT=bench-maxiter.csv   MKL_BENCH_NORMALIZE=center_trace (or trace: uncentred)
#   MKL_BENCH_SUBSETS=1: instead, SimpleMKL on random subsets of Ionosphere (n = 120, 150; seeds
#       2-4; C n = 1000, 2000), where some draws need more iterations than the whole set
#
# Data: Ionosphere (351 x 33, V2 dropped), Sonar (208 x 60), Pima (768 x 8), standardised by
# mkl(). Kernels: Gaussian widths 0.5, 1, 2, 5, 10 and polynomial degrees 1, 2 on all features
# and on each feature, centred in feature space, unit trace (238, 427 and 63 kernels). C on the
# user's scale with C n in {1, 10, 100, 1000}. Each fit: tol = 0.01, maxiter = 20000 (no
# practical limit), one thread. Reported: the iterations to reach the gap (NA when the time limit
# stopped the fit first), the gap after 200 iterations, seconds, SVM solves.
suppressPackageStartupMessages(library(mklearn))
methods <- strsplit(Sys.getenv("MKL_BENCH_METHODS", "simple,hessian,lp"), ",")[[1]]
maxsec <- as.numeric(Sys.getenv("MKL_BENCH_MAXSEC", "600"))
out <- Sys.getenv("MKL_BENCH_OUT", "bench-maxiter.csv")
ddir <- Sys.getenv("MKL_BENCH_DATA")
norm <- Sys.getenv("MKL_BENCH_NORMALIZE", "center_trace")

read_set <- function(name) {
  if (nzchar(ddir)) {
    d <- utils::read.csv(file.path(ddir, paste0(tolower(name), ".csv")))
    return(list(x = as.matrix(d[, -1]), y = factor(d[, 1])))
  }
  e <- environment()
  if (name == "Pima") {
    utils::data("PimaIndiansDiabetes", package = "mlbench", envir = e)
    return(list(x = as.matrix(PimaIndiansDiabetes[, 1:8]), y = PimaIndiansDiabetes$diabetes))
  }
  utils::data(list = name, package = "mlbench", envir = e)
  d <- get(name, envir = e)
  if (name == "Ionosphere") {
    d <- d[, -2]
    d$V1 <- as.numeric(as.character(d$V1))
  }
  list(x = as.matrix(d[, -ncol(d)]), y = d$Class)
}

ks <- kernel_set(rbf_kernel(sigma = c(0.5, 1, 2, 5, 10)), poly_kernel(degree = 1:2),
                 features = c("all", "each"), normalize = norm)
if (nzchar(Sys.getenv("MKL_BENCH_SUBSETS"))) {
  d <- read_set("Ionosphere")
  for (seed in 2:4) for (n in c(120, 150)) for (Cn in c(1000, 2000)) {
    set.seed(seed)
    i <- sample(nrow(d$x), n)
    t0 <- proc.time()[["elapsed"]]
    f <- suppressWarnings(mkl(d$x[i, ], d$y[i], kernels = ks, method = "simple", C = Cn / n,
                              control = mkl_control(maxiter = 3000, nthreads = 1,
                                                    progress = FALSE)))
    cat(sprintf("seed %d  n %d  C n %4d  iterations %4d  converged %s  %.1f s\n", seed, n, Cn,
                f$iterations, f$converged, proc.time()[["elapsed"]] - t0))
  }
  quit(save = "no")
}
rows <- list()
for (name in c("Ionosphere", "Sonar", "Pima")) {
  d <- read_set(name)
  n <- nrow(d$x)
  for (method in methods) for (Cn in c(1, 10, 100, 1000)) {
    ctl <- mkl_control(tol = 0.01, maxiter = 20000, max_time = maxsec, nthreads = 1,
                       progress = FALSE)
    t0 <- proc.time()[["elapsed"]]
    f <- suppressWarnings(mkl(d$x, d$y, kernels = ks, method = method, C = Cn / n,
                              control = ctl))
    secs <- proc.time()[["elapsed"]] - t0
    h <- f$history
    g200 <- if (nrow(h) > 200) h$gap[h$iteration == 200][1] else NA_real_
    r <- data.frame(data = name, n = n, M = length(f$weights), normalize = norm,
                    method = method, Cn = Cn,
                    iterations = if (f$converged) f$iterations else NA_integer_,
                    gap = signif(f$info$gap, 3), gap_at_200 = signif(g200, 3),
                    seconds = round(secs, 1), svm_solves = f$info$svm_solves,
                    objective = signif(f$objective, 8))
    print(r, row.names = FALSE)
    rows[[length(rows) + 1L]] <- r
    utils::write.csv(do.call(rbind, rows), out, row.names = FALSE)
  }
}
print(do.call(rbind, rows), row.names = FALSE)
