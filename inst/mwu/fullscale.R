# MWUMKL at the paper's scale (Moeller et al. 2014): Fig. 2 (median misclassification of
# MWUMKL, the uniform combination and LIBLINEAR+ on the small sets, 12 kernels per feature,
# 80/20 splits),
# Fig. 3 (training time against N, twonorm, 3 Gaussian kernels on all features, MWUMKL beside
# UNIFORM on the default store) and Table 2
# (Sonar with many random kernels computed on the fly). Writes mwu-fig2.csv, mwu-fig3.csv,
# mwu-table2.csv beside this script (or in the directory given as the first argument), each
# row stamped with the date and the machine.
#   Rscript inst/mwu/fullscale.R [outdir] [splits = 30] [maxN = 50000] [maxM = 1e6] [parts]
#                                [methods = mwu,uniform,liblinear] [sets = all] [first = 1]
# parts: a comma-separated subset of fig2,fig3,table2 (default all three). Fig. 3 and Table 2 are
# timings: run them on a quiet machine. methods (comma-separated) restrict Figs. 2 and 3, sets
# (comma-separated) Fig. 2, and first its splits to first..splits: the rows of the sets, methods
# and splits run replace theirs in an existing mwu-fig2.csv, the others are kept. LIBLINEAR+
# ("liblinear", common.R) needs the LiblineaR package, WDBC the dslabs package.
source(file.path(if (file.exists("inst/mwu")) "inst/mwu" else ".", "common.R"))
a <- commandArgs(TRUE)
outdir <- if (length(a) >= 1) a[1] else "inst/mwu"
splits <- if (length(a) >= 2) as.integer(a[2]) else 30L
maxN <- if (length(a) >= 3) as.numeric(a[3]) else 50000
maxM <- if (length(a) >= 4) as.numeric(a[4]) else 1e6
parts <- if (length(a) >= 5) strsplit(a[5], ",")[[1]] else c("fig2", "fig3", "table2")
methods <- if (length(a) >= 6) strsplit(a[6], ",")[[1]] else c("mwu", "uniform", "liblinear")
only <- if (length(a) >= 7 && a[7] != "all") strsplit(a[7], ",")[[1]]
first <- if (length(a) >= 8) as.integer(a[8]) else 1L
if ("fig2" %in% parts && "liblinear" %in% methods) {
  if (!requireNamespace("LiblineaR", quietly = TRUE))
    stop("LIBLINEAR+ needs the LiblineaR package (or leave 'liblinear' out of methods)",
         call. = FALSE)
  cat(liblinear_note(), "\n")
}
ks12 <- kernel_set(poly_kernel(1:3), rbf_kernel(sigma = 1 / sqrt(2 * 2^seq(0, 4, 0.5))),
                   features = "each")
# LIBLINEAR+'s kernels: the same, unnormalised and without the diagonal jitter (common.R)
ks12n <- kernel_set(poly_kernel(1:3), rbf_kernel(sigma = 1 / sqrt(2 * 2^seq(0, 4, 0.5))),
                    features = "each", normalize = "none", jitter = 0)

# ---- Fig. 2: the small sets (mlbench; heart and wpbc from the data folder beside the repository)
sets <- list()
data("Sonar", "Ionosphere", "PimaIndiansDiabetes", "BreastCancer", "HouseVotes84",
     package = "mlbench")
io <- Ionosphere[, -c(2, 35)]; io$V1 <- as.numeric(as.character(io$V1))
sets$Ionosphere <- list(x = as.matrix(io), y = Ionosphere$Class)
sets$Sonar <- list(x = as.matrix(Sonar[, 1:60]), y = Sonar$Class)
sets$Pima <- list(x = as.matrix(PimaIndiansDiabetes[, 1:8]), y = PimaIndiansDiabetes$diabetes)
bc <- na.omit(BreastCancer[, -1])
sets$BreastCancer <- list(x = sapply(bc[, 1:9], function(v) as.numeric(as.character(v))),
                          y = bc$Class)
hv <- na.omit(HouseVotes84)
sets$Vote <- list(x = sapply(hv[, -1], function(v) as.numeric(v == "y")), y = hv$Class)
# WDBC (Wisconsin Diagnostic Breast Cancer, 569 x 30) from dslabs, when installed
if (requireNamespace("dslabs", quietly = TRUE)) {
  brca <- NULL
  utils::data("brca", package = "dslabs", envir = environment())
  sets$WDBC <- list(x = brca$x, y = brca$y)
}
for (nm in c("heart", "wpbc")) {
  f <- file.path("..", "shared", "data", paste0(nm, ".csv"))
  if (file.exists(f)) {
    d <- utils::read.csv(f)
    x <- as.matrix(d[, -1])
    # wpbc's first feature is the recurrence time, which gives the label away (SOURCES.md)
    if (nm == "wpbc") x <- x[, colnames(x) != "x1", drop = FALSE]
    x <- x[, apply(x, 2, function(v) length(unique(v)) > 1), drop = FALSE]
    sets[[nm]] <- list(x = x, y = factor(d$y))
  }
}
if (!is.null(only)) sets <- sets[intersect(only, names(sets))]
f2file <- file.path(outdir, "mwu-fig2.csv")
fig2 <- NULL
if ("fig2" %in% parts) for (nm in names(sets)) {
  s <- sets[[nm]]
  keep <- apply(s$x, 2, function(v) length(unique(v)) > 1)
  x <- s$x[, keep, drop = FALSE]
  for (k in seq(first, splits)) {
    set.seed(k)
    te <- sample(nrow(x), round(0.2 * nrow(x)))
    for (m in intersect(c("mwu", "uniform"), methods)) {
      # C by 3-fold CV on the training part (MWUMKL: the 2-norm constant; uniform: the box)
      Cs <- c(1000, 100, 10, 1)
      cv <- suppressWarnings(suppressMessages(
        cv.mkl(x[-te, ], s$y[-te], kernels = ks12, method = m, C = Cs, nfolds = 3,
               standardize = "range")))
      c0 <- cpu(); t0 <- proc.time()[["elapsed"]]
      f <- mkl(x[-te, ], s$y[-te], ks12, method = m, C = cv$C.min, standardize = "range",
               control = if (m == "mwu") mkl_control(progress = FALSE) else mkl_control())
      el <- proc.time()[["elapsed"]] - t0; cp <- cpu() - c0
      err <- mean(predict(f, x[te, ]) != s$y[te])
      fig2 <- rbind(fig2, data.frame(set = nm, split = k, method = m, C = cv$C.min,
                                     error = err, time = el, M = length(f$weights), stamp,
                                     cpu = cp, features = NA, note = NA))
    }
    if ("liblinear" %in% methods) {
      # LIBLINEAR+ (common.R) on the features scaled to [0, 1] by the training part's range,
      # as standardize = "range"; C by 3-fold CV on the training part
      tr <- setdiff(seq_len(nrow(x)), te)
      lo <- apply(x[tr, , drop = FALSE], 2, min)
      rg <- apply(x[tr, , drop = FALSE], 2, function(v) diff(range(v)))
      xs <- sweep(sweep(x, 2, lo), 2, ifelse(rg > 0, rg, 1), "/")
      r <- run_liblinear_plus(ks12n, xs, s$y, tr, te, Cs = 10^(-3:1), seed = 100000 + k)
      fig2 <- rbind(fig2, data.frame(set = nm, split = k, method = "liblinear", C = r$C,
                                     error = r$error, time = r$time, M = r$M, stamp,
                                     cpu = r$cpu, features = r$features,
                                     note = liblinear_note()))
    }
    # after every split (a run cut short keeps its splits): the rows of this run replace those
    # of the same set, method and split in an existing file
    old <- if (file.exists(f2file)) utils::read.csv(f2file)
    if (!is.null(old)) {
      for (v in setdiff(names(fig2), names(old))) old[[v]] <- NA
      key <- function(d) paste(d$set, d$method, d$split)
      old <- old[!(key(old) %in% key(fig2)), names(fig2)]
    }
    utils::write.csv(rbind(old, fig2), f2file, row.names = FALSE)
  }
  cat(nm, "done\n")
}

# ---- Fig. 3: time against N (twonorm, 3 Gaussian kernels on all 20 features), MWUMKL (eps =
# 0.07) beside UNIFORM (C = 1, the default store "auto": the dense kernels while the fit fits the
# memory budget, then the low-rank store; its total rank and largest relative residual trace are
# recorded, and the memory budget). The whole mkl() call as the first MWUMKL rows had it (default
# threads, budget and sigmoid: Platt's cross-validated, whose fold fits came to the default after
# those rows; `platt` says how it was fitted, `platt_time` its elapsed seconds), elapsed (`time`,
# as older readers expect) and CPU seconds.
# The Bayes rule of twonorm (the sign of the sum of the features) on the same held-out points
# is the accuracy no classifier exceeds in expectation (0.9772 on the population).
# A dense UNIFORM near the budget takes several GB: run this part alone on a quiet machine.
fig3 <- NULL
if ("fig3" %in% parts) for (N in c(1000, 2000, 5000, 10000, 20000, 50000)) {
  if (N > maxN) break
  set.seed(1)
  d <- mlbench::mlbench.twonorm(N + 10000, d = 20)
  tr <- seq_len(N)
  ks <- kernel_set(rbf_kernel(sigma = c(1, 3, 10)))
  bayes <- mean((rowSums(d$x[-tr, ]) > 0) == (d$classes[-tr] == levels(d$classes)[1L]))
  for (m in intersect(c("mwu", "uniform"), methods)) {
    invisible(gc())
    c0 <- cpu(); t0 <- proc.time()[["elapsed"]]
    f <- if (m == "mwu")
      mkl(d$x[tr, ], d$classes[tr], ks, method = "mwu", epsilon = 0.07, C = 1,
          control = mkl_control(progress = FALSE)) else
      mkl(d$x[tr, ], d$classes[tr], ks, method = "uniform", C = 1,
          control = mkl_control(progress = FALSE))
    el <- proc.time()[["elapsed"]] - t0; cp <- cpu() - c0
    lr <- f$lowrank
    fig3 <- rbind(fig3, data.frame(N = N, time = el, solver = f$timing[["fit"]],
                                   T = f$iterations,
                                   accuracy = mean(predict(f, d$x[-tr, ]) == d$classes[-tr]),
                                   bayes = bayes, stamp, method = m, cpu = cp, store = f$store,
                                   rank = if (is.null(lr)) NA else sum(lr$rank),
                                   residual = if (is.null(lr)) NA else max(lr$error),
                                   budget = attr(mkl_memory(N, 3, m), "budget"),
                                   platt = f$platt_method,
                                   platt_time = if ("platt" %in% names(f$timing))
                                     f$timing[["platt"]] else NA))
    cat("N", N, m, f$store, "elapsed", el, "cpu", cp, "s\n")
    rm(f); invisible(gc())
  }
}
if ("fig3" %in% parts) utils::write.csv(fig3, file.path(outdir, "mwu-fig3.csv"), row.names = FALSE)

# ---- Table 2: Sonar with many random single-feature kernels, computed on the fly
tab2 <- NULL
if ("table2" %in% parts) for (M in c(1e3, 1e4, 1e5, 1e6)) {
  if (M > maxM) break
  set.seed(1)
  t0 <- proc.time()[["elapsed"]]
  f <- mkl(sets$Sonar$x, sets$Sonar$y, random_kernels(M, 60, size = 1, design = "mwu"),
           method = "mwu", C = 100, standardize = "range", control = mkl_control(progress = FALSE))
  el <- proc.time()[["elapsed"]] - t0
  tab2 <- rbind(tab2, data.frame(M = M, time = el, solver = f$timing[["fit"]], T = f$iterations,
                                 us_per_kernel_iteration = 1e6 * el / (M * f$iterations),
                                 stamp))
  cat("M", M, el, "s\n")
  rm(f); invisible(gc())
}
if ("table2" %in% parts) utils::write.csv(tab2, file.path(outdir, "mwu-table2.csv"), row.names = FALSE)
