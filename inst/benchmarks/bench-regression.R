# Regression at its defaults against tuned e1071 (inst/notes/NOTES-regression.md).
#
# Data: mlbench's BostonHousing (506 x 13, chas as 0/1), friedman1 (n = 500, sd = 1, seed 11)
# and friedman3 (n = 500, sd = 0.1, seed 13); random 80/20 splits (seed 100 + split); test RMSE.
# Kernels: mkl()'s default set (a SpicyMKL regression adds Gaussians of widths 0.5, 1, 2 on
# each feature). Settings: mkl_control(nthreads = 1), everything else default.
# Parts (run each niced, in its own process; each writes <out>/<part>.rds):
#   new:   uniform (C = 10, the default), spicy squared and epsilon (C = 10), bayes (default),
#          and cv.mkl over its default grid (uniform; spicy squared when MKL_BENCH_CV_SPICY=1)
#   kernels: candidate default sets for every regression model, each at the C path 1000, 100,
#          31.6, 10, 3.16, 1 (bayes: no C): "base" (mkl()'s set on all the features), "narrow"
#          (base plus half its narrowest width), "each" (base plus Gaussians of widths 0.5, 1, 2
#          on each standardised feature), "each_narrow" (both); meant for 3 splits
#   old:   the same model calls at the former defaults (C = 1; bayes' MacKay iteration), meant
#          for a reference build: MKL_BENCH_BASE=<library>
#   e1071: tune.svm (eps-regression, 10-fold CV, RMSE) over gamma = 2^(-2:2) / p and
#          cost = 2^(-1:7), and svm() at its defaults
#   table: the mean RMSE of every part side by side
#   Rscript bench-regression.R <part> <out directory> [splits, default 10]
#   MKL_BENCH_SETS (e.g. "friedman1") and MKL_BENCH_MODELS (e.g. "spicy,spicy_eps") run a part
#   on some data sets or models only (the file is then <part>-<sets>.rds), to run sets apart.
args <- commandArgs(TRUE)
part <- args[1]
out <- args[2]
nsplit <- if (length(args) > 2L) as.integer(args[3]) else 10L
dir.create(out, showWarnings = FALSE, recursive = TRUE)
out_file <- function(p) {
  sets <- Sys.getenv("MKL_BENCH_SETS")
  file.path(out, paste0(p, if (nzchar(sets)) paste0("-", gsub(",", "-", sets)), ".rds"))
}

bench_sets <- function() {
  data("BostonHousing", package = "mlbench", envir = environment())
  d <- BostonHousing
  d$chas <- as.numeric(d$chas) - 1
  set.seed(11)
  f1 <- mlbench::mlbench.friedman1(500)
  set.seed(13)
  f3 <- mlbench::mlbench.friedman3(500)
  list(BostonHousing = list(x = as.matrix(d[, -14]), y = d$medv),
       friedman1 = list(x = f1$x, y = f1$y), friedman3 = list(x = f3$x, y = f3$y))
}

rmse <- function(p, y) sqrt(mean((p - y)^2))

# One row per (set, split, model): test RMSE and fit time (user CPU seconds); a model that
# predicts along a C path gives a row per C ("<model> C=<C>", the time of the whole path).
run_models <- function(models) {
  sets <- bench_sets()
  only <- Sys.getenv("MKL_BENCH_SETS")
  if (nzchar(only)) sets <- sets[strsplit(only, ",")[[1L]]]
  only <- Sys.getenv("MKL_BENCH_MODELS")
  if (nzchar(only)) models <- models[strsplit(only, ",")[[1L]]]
  rows <- list()
  for (nm in names(sets)) {
    x <- sets[[nm]]$x
    y <- sets[[nm]]$y
    n <- nrow(x)
    for (sp in seq_len(nsplit)) {
      set.seed(100 + sp)
      tr <- sample(n, round(0.8 * n))
      for (mod in names(models)) {
        set.seed(sp)
        t <- system.time(pr <- models[[mod]](x[tr, ], y[tr], x[-tr, ]))[["user.self"]]
        r <- if (is.matrix(pr)) apply(pr, 2L, rmse, y[-tr]) else rmse(pr, y[-tr])
        lab <- if (is.matrix(pr)) paste0(mod, " C=", colnames(pr)) else mod
        rows[[length(rows) + 1L]] <- data.frame(set = nm, split = sp, model = lab, rmse = r,
                                                time = t)
        cat(sprintf("%-13s %2d %-16s %s %6.2fs\n", nm, sp, mod,
                    paste(sprintf("%.4f", r), collapse = " "), t))
      }
    }
  }
  do.call(rbind, rows)
}

mkl_model <- function(...) function(x, y, newx) {
  f <- suppressWarnings(mklearn::mkl(x, y, ..., control = mklearn::mkl_control(nthreads = 1)))
  predict(f, newx)
}
mkl_model_ctl <- function(ctl, ...) function(x, y, newx) {
  f <- suppressWarnings(mklearn::mkl(x, y, ..., control = ctl))
  predict(f, newx)
}
cv_model <- function(...) function(x, y, newx) {
  cv <- suppressMessages(suppressWarnings(
    mklearn::cv.mkl(x, y, ..., control = mklearn::mkl_control(nthreads = 1))))
  predict(cv, newx)
}

if (part == "new") {
  library(mklearn)
  models <- list(uniform = mkl_model(method = "uniform"),
                 spicy = mkl_model(method = "spicy"),
                 spicy_eps = mkl_model(method = "spicy", loss = "epsilon"),
                 bayes = mkl_model(method = "bayes"),
                 cv_uniform = cv_model(method = "uniform"))
  if (identical(Sys.getenv("MKL_BENCH_CV_SPICY"), "1"))
    models$cv_spicy <- cv_model(method = "spicy")
  saveRDS(run_models(models), out_file("new"))
} else if (part == "kernels") {
  library(mklearn)
  # the candidate set filled in from the standardised training rows (as mkl() standardises)
  cand_set <- function(cand, xs) {
    q <- rbf_widths(xs)
    w <- signif(c(if (cand %in% c("narrow", "each_narrow")) q[1] / 2, q, 2 * max(q)), 4)
    fams <- list(rbf_kernel(w), poly_kernel(1:2))
    if (cand %in% c("base", "narrow")) return(kernel_set(rbf_kernel(w), poly_kernel(1:2)))
    mklearn:::each_kernels(fams, rbf_kernel(c(0.5, 1, 2)), ncol(xs), "trace", 1e-8)
  }
  Cs <- c(1000, 100, 31.6, 10, 3.16, 1)
  path_model <- function(cand, ...) {
    force(cand)      # the loop's candidate, not the last one
    function(x, y, newx) {
      f <- suppressWarnings(mklearn::mkl(x, y, kernels = cand_set(cand, scale(x)), ...,
                                         control = mklearn::mkl_control(nthreads = 1)))
      predict(f, newx)
    }
  }
  models <- list()
  for (cand in c("base", "narrow", "each", "each_narrow")) {
    models[[paste(cand, "uniform")]] <- path_model(cand, method = "uniform", C = Cs)
    models[[paste(cand, "spicy")]] <- path_model(cand, method = "spicy", C = Cs)
    models[[paste(cand, "spicy_eps")]] <- path_model(cand, method = "spicy", loss = "epsilon",
                                                     C = Cs)
    models[[paste(cand, "bayes")]] <- path_model(cand, method = "bayes")
  }
  saveRDS(run_models(models), out_file("kernels"))
} else if (part == "old") {
  base <- Sys.getenv("MKL_BENCH_BASE")
  library(mklearn, lib.loc = if (nzchar(base)) base else NULL)
  models <- list(uniform = mkl_model(method = "uniform", C = 1),
                 spicy = mkl_model(method = "spicy", C = 1),
                 spicy_eps = mkl_model(method = "spicy", loss = "epsilon", C = 1),
                 bayes = mkl_model_ctl(mklearn::mkl_control(nthreads = 1), method = "bayes"))
  if (identical(Sys.getenv("MKL_BENCH_OLD_BAYES"), "0")) models$bayes <- NULL
  saveRDS(run_models(models), out_file("old"))
} else if (part == "e1071") {
  models <- list(
    e1071_tuned = function(x, y, newx) {
      tt <- e1071::tune.svm(x, y, gamma = 2^(-2:2) / ncol(x), cost = 2^(-1:7),
                            type = "eps-regression")
      predict(tt$best.model, newx)
    },
    e1071_default = function(x, y, newx) predict(e1071::svm(x, y), newx))
  saveRDS(run_models(models), out_file("e1071"))
} else if (part == "table") {
  parts <- c("old", "new", "e1071", "kernels")
  res <- do.call(rbind, lapply(parts, function(p) {
    fs <- list.files(out, paste0("^", p, "(-.*)?[.]rds$"), full.names = TRUE)
    if (!length(fs)) return(NULL)
    r <- do.call(rbind, lapply(fs, readRDS))
    r$model <- paste(p, r$model, sep = ":")
    r
  }))
  tab <- stats::aggregate(cbind(rmse, time) ~ model + set, res, mean)
  splits <- stats::aggregate(split ~ model + set, res, length)
  tab$splits <- splits$split
  print(stats::reshape(tab[, c("model", "set", "rmse")], idvar = "model", timevar = "set",
                       direction = "wide"), digits = 4, row.names = FALSE)
  print(stats::reshape(tab[, c("model", "set", "time")], idvar = "model", timevar = "set",
                       direction = "wide"), digits = 3, row.names = FALSE)
} else stop("part must be new, kernels, old, e1071 or table")
