# MKL-L0/1-SVM benchmark (paper Table 2 and the w-step choice).
#
#   Rscript inst/benchmarks/bench-l01.R [splits] [sets]      # from the repository root
#
# Environment: MKLEARN_LIB, the library holding the mklearn to test (default: the installed
# one); MKLEARN_REF_LIB, a library whose mklearn runs the SimpleMKL reference when the tested
# build has no working SimpleMKL (it then runs in a separate R process on the same splits and
# kernels). Data: Ionosphere, Sonar and Pima from mlbench; Wpbc, Liver (ILPD) and Haberman from
# the CSVs of a data folder beside the repository (or beside its parent; or MKLEARN_DATA) when
# present, skipped otherwise.
#
# Parts
#  1. Table 2: per set, 10 Gaussian kernels (sigma 0.1 ... 2) on z-scored features, 10 random
#     70/30 splits: kernels selected, test accuracy, time (the whole mkl() call and the solver)
#     and support vectors, MKL-L0/1-SVM (one cold run from the default start) beside SimpleMKL
#     and SpicyMKL (hinge) on the same kernels and splits at the same C, with time ratios.
#  2. w-step: warm-started CG against a Cholesky factor reused while d does not move, and the
#     joint (w, b) block against the spec's w-then-b order (solver time, min and median of 5).
#  3. The authors' protocol on Pima and Ionosphere: their demo settings (C = 4, rho = 4, 8, 8,
#     their start), one cold run against 10 runs chained across splits (each warm-started from
#     the previous split's iterate), beside the default.
args <- commandArgs(TRUE)
worker <- length(args) >= 1L && args[1] == "--worker"
lib <- Sys.getenv(if (worker) "MKLEARN_REF_LIB" else "MKLEARN_LIB")
suppressMessages(library(mklearn, lib.loc = if (nzchar(lib)) lib else NULL))

sigmas <- c(0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.2, 1.5, 1.7, 2)
ks <- kernel_set(rbf_kernel(sigmas))

# the data sets, from the helper beside this script
source(file.path(dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE),
                                                                 value = TRUE)))), "l01-data.R"))

splits_of <- function(n, nsplit) lapply(seq_len(nsplit), function(s) {
  set.seed(1000 + s)
  sample(n, floor(0.7 * n))
})

# One method on one split: accuracy, kernels, support vectors, times.
run_one <- function(ds, tr, method, C, control = mkl_control(), init = NULL) {
  t0 <- proc.time()[["elapsed"]]
  fit <- withCallingHandlers(
    mkl(ds$x[tr, ], ds$y[tr], kernels = ks, method = method, C = C, control = control,
        init = init),
    warning = function(w) invokeRestart("muffleWarning"))
  t_mkl <- proc.time()[["elapsed"]] - t0
  pred <- as.numeric(as.character(predict(fit, ds$x[-tr, ])))
  data.frame(method = method, acc = mean(pred == ds$y[-tr]),
             kernels = sum(fit$weights > 0), dmax = max(fit$weights),
             nsv = if (method == "l01") fit$info$n_sv else sum(rowSums(fit$alpha != 0) > 0),
             time_mkl = t_mkl, time_fit = unname(fit$timing[["fit"]]),
             converged = fit$converged, iterations = fit$iterations)
}

simple_works <- function() {
  ok <- tryCatch({
    d <- list(x = matrix(rnorm(40), 20), y = rep(c(-1, 1), 10))
    run_one(d, 1:14, "simple", 1)
    TRUE
  }, error = function(e) FALSE)
  ok
}

# SimpleMKL at the same C (on unit-diagonal kernels, C_svm = C n at unit trace; SpicyMKL too, on
# mkl()'s one scale of C), in this
# process or, with MKLEARN_REF_LIB, in a worker process.
simple_rows <- function(ds, splits, C) {
  one <- function(tr) run_one(ds, tr, "simple", C)   # the same scale for every method
  if (simple_works()) return(do.call(rbind, lapply(splits, one)))
  ref <- Sys.getenv("MKLEARN_REF_LIB")
  if (!nzchar(ref)) return(NULL)
  inp <- tempfile(fileext = ".rds"); out <- tempfile(fileext = ".rds")
  saveRDS(list(ds = ds, splits = splits, C = C), inp)
  me <- normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)))
  system2(file.path(R.home("bin"), "Rscript"), c(me, "--worker", inp, out))
  if (file.exists(out)) readRDS(out) else NULL
}

if (worker) {
  inp <- readRDS(args[2])
  res <- do.call(rbind, lapply(inp$splits, function(tr)
    run_one(inp$ds, tr, "simple", inp$C)))
  saveRDS(res, args[3])
  quit(save = "no")
}

nsplit <- if (length(args) >= 1L) as.integer(args[1]) else 10L
sets <- if (length(args) >= 2L) strsplit(args[2], ",")[[1]] else
  c("ionosphere", "sonar", "wpbc", "pima", "liver_ilpd", "haberman")
C <- 1

fmt <- function(v, d = 3) sprintf(paste0("%.", d, "f +- %.", d, "f"), mean(v), stats::sd(v))

# ---------------------------------------------------------------- 1. Table 2
cat(sprintf("mklearn %s, R %s, %s; %d core(s); %d split(s)\n",
            utils::packageVersion("mklearn"), getRversion(), Sys.info()[["machine"]],
            parallel::detectCores(), nsplit))
all <- NULL
for (set in sets) {
  ds <- load_set(set)
  if (is.null(ds)) { cat(sprintf("%s: data not found, skipped\n", set)); next }
  splits <- splits_of(nrow(ds$x), nsplit)
  l01 <- do.call(rbind, lapply(splits, function(tr) run_one(ds, tr, "l01", C)))
  sim <- simple_rows(ds, splits, C)
  spi <- do.call(rbind, lapply(splits, function(tr) run_one(ds, tr, "spicy", C)))
  tab <- rbind(cbind(set = set, split = seq_along(splits), l01),
               if (!is.null(sim)) cbind(set = set, split = seq_along(splits), sim),
               cbind(set = set, split = seq_along(splits), spi))
  all <- rbind(all, tab)
  cat(sprintf("\n%s (n = %d, p = %d)\n", set, nrow(ds$x), ncol(ds$x)))
  for (m in unique(tab$method)) {
    r <- tab[tab$method == m, ]
    cat(sprintf("  %-7s kernels %s  acc %s  mkl() %s s (median %.3f)  solver %s s  NSV %s  converged %d/%d\n",
                m, fmt(r$kernels, 1), fmt(r$acc), fmt(r$time_mkl), stats::median(r$time_mkl),
                fmt(r$time_fit), fmt(r$nsv, 1), sum(r$converged), nrow(r)))
  }
  if (!is.null(sim))
    cat(sprintf("  l01 - simple accuracy: %+.3f; time ratio l01/simple: mkl() %.2f, solver %.2f\n",
                mean(l01$acc) - mean(sim$acc), stats::median(l01$time_mkl / sim$time_mkl),
                stats::median(l01$time_fit / sim$time_fit)))
  cat(sprintf("  l01 - spicy accuracy: %+.3f; time ratio l01/spicy: mkl() %.2f, solver %.2f\n",
              mean(l01$acc) - mean(spi$acc), stats::median(l01$time_mkl / spi$time_mkl),
              stats::median(l01$time_fit / spi$time_fit)))
}
assign("table2", all, envir = globalenv())

# ---------------------------------------------------------------- 2. the w-step
ds <- load_set("pima")
tr <- splits_of(nrow(ds$x), 1L)[[1]]
cat("\nw-step on Pima (n = 537, M = 10), solver seconds over 5 runs\n")
for (cfg in list(list(wstep = "cg", joint_wb = TRUE), list(wstep = "chol", joint_wb = TRUE),
                 list(wstep = "cg", joint_wb = FALSE))) {
  t <- sapply(1:5, function(i) {
    r <- run_one(ds, tr, "l01", C, control = do.call(mkl_control, cfg))
    c(r$time_fit, r$acc, r$iterations)
  })
  cat(sprintf("  wstep = %-4s joint_wb = %-5s min %.3f median %.3f  (iterations %d, acc %.3f)\n",
              cfg$wstep, cfg$joint_wb, min(t[1, ]), stats::median(t[1, ]), t[3, 1], t[2, 1]))
}

# ---------------------------------------------------------------- 3. the authors' protocol
authors <- mkl_control(rho1 = 4, rho2 = 8, rho3 = 8, start = "reference", b0 = 1)
cat("\nThe authors' protocol: their settings (C = 4, rho = 4, 8, 8, start w = 0, b = 1, d = 1/M)\n")
for (set in intersect(c("pima", "ionosphere"), sets)) {
  ds <- load_set(set)
  splits <- splits_of(nrow(ds$x), nsplit)
  # their C = 4 is C = 8 on mkl()'s scale (the (0,1)-loss weight is C / 2, R/cscale.R)
  cold <- do.call(rbind, lapply(splits, function(tr) run_one(ds, tr, "l01", 8, authors)))
  chain <- NULL
  prev <- NULL
  for (tr in splits) {
    fit <- withCallingHandlers(
      mkl(ds$x[tr, ], ds$y[tr], kernels = ks, method = "l01", C = 8, control = authors,
          init = prev), warning = function(w) invokeRestart("muffleWarning"))
    pred <- as.numeric(as.character(predict(fit, ds$x[-tr, ])))
    chain <- c(chain, mean(pred == ds$y[-tr]))
    prev <- fit
  }
  def <- all[all$set == set & all$method == "l01", ]
  cat(sprintf("  %-10s authors, cold: acc %s (largest weight %s)\n", set, fmt(cold$acc),
              fmt(cold$dmax)))
  cat(sprintf("  %-10s authors, chained over %d splits: acc %s (last half %s)\n", set,
              length(chain), fmt(chain), fmt(chain[-seq_len(length(chain) %/% 2)])))
  if (nrow(def)) cat(sprintf("  %-10s default, cold: acc %s\n", set, fmt(def$acc)))
}
