# MKL-L0/1-SVM over kernel counts: does the default fit collapse when many kernels are offered?
#
#   Rscript inst/benchmarks/bench-l01-kernels.R [splits] [sets] [kernel sets] [out.csv] [first]
#                                               [methods]
#
# From the repository root. Environment: MKLEARN_LIB, the library holding the mklearn to test
# (default: the installed one). Data: Pima, Ionosphere, Sonar and BreastCancer (complete cases,
# numeric) from mlbench; heart (Statlog), banknote (400 rows drawn once, seed 7), Wpbc (without
# its first column, the recurrence time), Liver (ILPD) and Haberman from the CSVs of a data
# folder beside the repository (or beside its parent; or MKLEARN_DATA), skipped when absent.
#
# Kernel sets: "paper" the 10 Gaussians of the paper's Table 2 (sigma 0.1 ... 2, all features,
# M = 10); "mid" Gaussians sigma 0.1, 0.25, 0.5, 0.75, 1:20 and polynomials of degree 1-3 on
# all features (M = 27); "large" the same families on all features and on each feature
# (M = 27 (p + 1): 135 on banknote, 243 on Pima, 270 on BreastCancer, 378 on heart, 918 on
# Ionosphere, 1647 on Sonar).
# Every fit: mkl() at its defaults (C = 1, mkl_control(nthreads = 1)), stratified 80/20 splits
# (seed = split number), l01 beside SimpleMKL and SpicyMKL on the same kernels and splits.
# Per fit: held-out accuracy, kernels selected, the whole mkl() time (elapsed, and CPU: user +
# system; the table's ratios are of CPU time), and "flagged": the fit predicts one class on its
# training data, or at least 90% of its weight sits on kernels that are nearly the identity on
# the training set (kernel_neighbours() below 1.5). "test1": the fit
# predicts one class on the held-out data (the collapse). Also per fit: the training accuracy,
# `degenerate` (mkl() reported it), "profile" (weight:neighbours of each selected kernel) and
# "nb_rest", the effective neighbours of the combination of its kernels with 2 or more
# neighbours, which mkl()'s check of fits on a handful of neighbours compares with log(n) / 2.
# From the probabilities' internal 5-fold cross-validation (fit$heldout): "cv_acc" its held-out
# accuracy, "cv_train_acc" the training accuracy on the same rows, "majority" their majority
# rate, "cv1" one class predicted on its held-out rows, "cv_bal" the mean of the two classes'
# held-out recalls, "cv_minority" the share of held-out rows predicted the minority class;
# "overfit" mkl() reported the fit as overfitting a handful of neighbours, "ntr" the training
# rows.
# Rows are appended to the CSV as they come, and a table of mean (sd) over the splits is
# printed at the end.
args <- commandArgs(TRUE)
lib <- Sys.getenv("MKLEARN_LIB")
suppressMessages(library(mklearn, lib.loc = if (nzchar(lib)) lib else NULL))

nsplit <- if (length(args) >= 1L) as.integer(args[1]) else 10L
sets <- if (length(args) >= 2L) strsplit(args[2], ",")[[1]] else
  c("heart", "breastcancer", "banknote", "pima", "ionosphere", "sonar", "wpbc", "liver_ilpd",
    "haberman")
ksets <- if (length(args) >= 3L) strsplit(args[3], ",")[[1]] else c("paper", "mid", "large")
out <- if (length(args) >= 4L) args[4] else "bench-l01-kernels-results.csv"
first <- if (length(args) >= 5L) as.integer(args[5]) else 1L     # splits first..splits
methods <- c("l01", "simple", "spicy")
# a subset of the methods (e.g. "l01" after a change to l01 only: the rows of the others for
# the same splits still apply); the table reads every method's rows from the CSV
run_methods <- if (length(args) >= 6L) strsplit(args[6], ",")[[1]] else methods

kernel_sets <- list(
  paper = kernel_set(rbf_kernel(c(0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.2, 1.5, 1.7, 2))),
  mid = kernel_set(rbf_kernel(sigma = c(0.1, 0.25, 0.5, 0.75, 1:20)), poly_kernel(degree = 1:3)),
  large = kernel_set(rbf_kernel(sigma = c(0.1, 0.25, 0.5, 0.75, 1:20)),
                     poly_kernel(degree = 1:3), features = c("all", "each")))

# the data sets, from the helper beside this script
source(file.path(dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE),
                                                                 value = TRUE)))), "l01-data.R"))

split_of <- function(y, s) {
  set.seed(s)
  unlist(lapply(split(seq_along(y), y), function(i) sample(i, floor(0.8 * length(i)))))
}

# The share of a fit's weight on kernels nearly the identity on its (standardised) training set.
identity_share <- function(fit, ks, xtr) {
  w <- fit$weights
  sel <- which(w > 0)
  if (!length(sel)) return(0)
  xs <- mklearn:::standardize_x(xtr)$x
  rk <- mklearn:::resolve_kernels(ks, ncol(xtr), colnames(xtr))
  st <- mklearn:::fly_store(rk, xs, 1L)
  nb <- mklearn:::kernel_neighbours(st, sel)
  sum(w[sel][!is.na(nb) & nb < 1.5])
}

# The selected kernels' weights and effective neighbours on the (standardised) training set,
# "weight:neighbours" separated by ";", and the effective neighbours of the combination of the
# selected kernels with 2 or more neighbours (weights renormalised; NA when none): what the
# check of fits on kernels with few neighbours reads.
neighbour_profile <- function(fit, ks, xtr) {
  w <- fit$weights
  sel <- which(w > 0)
  if (!length(sel)) return(list(profile = "", rest = NA_real_))
  xs <- mklearn:::standardize_x(xtr)$x
  rk <- mklearn:::resolve_kernels(ks, ncol(xtr), colnames(xtr))
  st <- mklearn:::fly_store(rk, xs, 1L)
  nb <- mklearn:::kernel_neighbours(st, sel)
  rest <- sel[!is.na(nb) & nb >= 2]
  nr <- if (length(rest)) mklearn:::combined_neighbours(st, rest, w[rest]) else NA_real_
  list(profile = paste(sprintf("%.4g:%.4g", w[sel], nb), collapse = ";"), rest = nr)
}

`%||%` <- function(a, b) if (is.null(a)) b else a

run_one <- function(ds, tr, ks, method) {
  t0 <- proc.time()
  fit <- tryCatch(withCallingHandlers(
    mkl(ds$x[tr, ], ds$y[tr], kernels = ks, method = method,
        control = mkl_control(nthreads = 1)),
    warning = function(w) invokeRestart("muffleWarning")), error = function(e) e)
  dt <- proc.time() - t0
  tm <- dt[["elapsed"]]
  cpu <- dt[["user.self"]] + dt[["sys.self"]]
  if (inherits(fit, "error"))     # counted apart: a fit that stops with an error
    return(data.frame(method = method, M = NA, acc = NA, kernels = NA, time = tm, cpu = cpu,
                      converged = FALSE, train1 = NA, identity_share = NA, flagged = NA,
                      test1 = NA, train_acc = NA, nb_rest = NA, degenerate = NA, profile = "",
                      error = conditionMessage(fit), ntr = length(tr), cv_acc = NA,
                      cv_train_acc = NA, majority = NA, cv1 = NA, cv_bal = NA,
                      cv_minority = NA, overfit = NA))
  pred <- as.numeric(as.character(predict(fit, ds$x[-tr, ])))
  train1 <- length(unique(sign(fit$fitted))) == 1L
  ish <- identity_share(fit, ks, ds$x[tr, ])
  np <- neighbour_profile(fit, ks, ds$x[tr, ])
  h <- fit$heldout     # the probabilities' internal cross-validation (NULL: none)
  data.frame(method = method, M = length(fit$weights), acc = mean(pred == ds$y[-tr]),
             kernels = sum(fit$weights > 0), time = tm, cpu = cpu, converged = fit$converged,
             train1 = train1, identity_share = ish, flagged = train1 || ish >= 0.9,
             test1 = length(unique(pred)) == 1L,
             train_acc = mean(sign(fit$fitted) == ds$y[tr]), nb_rest = np$rest,
             degenerate = !is.null(fit$degenerate), profile = np$profile, error = "",
             ntr = length(tr), cv_acc = h$accuracy %||% NA, cv_train_acc = h$train_accuracy %||% NA,
             majority = h$majority %||% NA, cv1 = if (is.null(h)) NA else min(h$predicted) == 0,
             cv_bal = if (is.null(h)) NA else mean(h$recall),
             cv_minority = if (is.null(h)) NA else h$predicted[which.min(h$labels)] / h$n,
             overfit = isTRUE(attr(fit$degenerate, "overfit")))
}

cat(sprintf("mklearn %s, R %s; %d split(s); results appended to %s\n",
            utils::packageVersion("mklearn"), getRversion(), nsplit, out))
for (kn in ksets) for (set in sets) {
  ds <- load_set(set)
  if (is.null(ds)) { cat(sprintf("%s: data not found, skipped\n", set)); next }
  for (s in seq(first, nsplit)) {
    tr <- split_of(ds$y, s)
    for (m in run_methods) {
      r <- cbind(set = set, kset = kn, split = s, run_one(ds, tr, kernel_sets[[kn]], m))
      utils::write.table(r, out, sep = ",", row.names = FALSE, append = file.exists(out),
                         col.names = !file.exists(out))
      cat(sprintf("%-12s %-5s %2d %-6s M %4d acc %.3f k %4d time %7.2f flagged %d test1 %d\n",
                  set, kn, s, m, r$M, r$acc, r$kernels, r$time, r$flagged, r$test1))
    }
  }
}

# The table: mean (sd) accuracy, mean kernels, time relative to SimpleMKL's, the fits mkl()
# flagged (degenerate), and the fits that predict one class on the held-out data (in brackets:
# how many of those were not flagged).
res <- utils::read.csv(out)
fmt <- function(v) sprintf("%.3f (%.3f)", mean(v), if (length(v) > 1L) stats::sd(v) else NA)
cat("\n| data | kernels (M) | splits | l01 acc | SimpleMKL acc | SpicyMKL acc |",
    "l01 / SimpleMKL / SpicyMKL kernels | time l01 : Simple : Spicy | flagged |",
    "test one class (unflagged) |\n")
for (key in unique(paste(res$set, res$kset))) {
  r <- res[paste(res$set, res$kset) == key, ]
  nerr <- vapply(methods, function(m) sum(r$method == m & !is.na(r$error) & r$error != ""), 0L)
  r <- r[is.na(r$error) | r$error == "", ]
  g <- lapply(methods, function(m) r[r$method == m, ])
  ran <- vapply(g, nrow, 1L) > 0L
  if (!ran[1L]) next
  ts <- vapply(g, function(x) if (nrow(x)) mean(if (is.null(x$cpu)) x$time else x$cpu) else NA, 0)
  per <- function(f) paste(vapply(g, function(x) if (nrow(x)) f(x) else "-", ""), collapse = " / ")
  cat(sprintf("| %s | %s (%d) | %d | %s | %s | %s | %s | %s | %s | %s |\n", r$set[1], r$kset[1],
              r$M[1], nrow(g[[1]]),
              if (ran[1]) fmt(g[[1]]$acc) else "-", if (ran[2]) fmt(g[[2]]$acc) else "-",
              if (ran[3]) fmt(g[[3]]$acc) else "-",
              per(function(x) sprintf("%.1f", mean(x$kernels))),
              paste(sprintf("%.2g", ts / ts[2]), collapse = " : "),
              per(function(x) sprintf("%d", sum(x$degenerate))),
              per(function(x) sprintf("%d (%d)", sum(x$test1), sum(x$test1 & !x$degenerate)))))
  if (any(nerr > 0L))
    cat(sprintf("  (%s: fits stopped with an error, left out)\n",
                paste(sprintf("%s %d", methods, nerr)[nerr > 0L], collapse = ", ")))
}
