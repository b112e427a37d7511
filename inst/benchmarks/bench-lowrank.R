# The low-rank store at large n: each method registered as scaling on it
# (mkl_methods(details = TRUE), registry field lowrank) fitted on store = "lowrank", beside
# e1071's RBF SVM (libsvm, one kernel) and MWUMKL (on the fly) in the same run, on the same split.
# twonorm / ringnorm: mlbench, seed 1, 20 features, n training points and 10,000 held out (or
# --test=k); Adult (see adult_data()): fairmodels' copy of the UCI training file (32,561 rows)
# for training and of the UCI test file (16,281 rows) held out, or without fairmodels arules'
# AdultUCI's 32,561 labelled rows split 2/3 : 1/3. Kernels: 10 Gaussians of spread widths on
# all (standardised) features, sigma = 2^(1, 1.5, ..., 5.5); on Adult 30 kernels: a linear
# kernel and Gaussians sigma = 2^(1, 1.5, ..., 5) on each of the numeric features (z-scores),
# the categorical ones (one-hot 0/1) and all of them (`standardize = FALSE`).
# Each case runs in a fresh Rscript, niced, with nthreads = 1 unless given, and prints: the whole
# mkl() call's elapsed and CPU time (the CPU time is what a shared machine does not distort;
# the fit's, without predict), the peak memory of its process (VmHWM, /proc/self/status, the R
# process included), the last relative duality gap, the held-out accuracy, and the low-rank store's
# approximation (the largest relative residual trace over the kernels, the total rank), and the
# fit's iterations and whether it converged.
# Usage: Rscript bench-lowrank.R [n ...] [--data=twonorm|ringnorm|adult] [--methods=a,b]
#          [--rank=r] [--tol=t] [--threads=k] [--timeout=s] [--kernels=k] [--memory=bytes]
#          [--test=k]
# --kernels=k: k Gaussian widths sigma = 2^seq(1, 5.5, length.out = k) instead of the 10;
# --memory: mkl_control(memory = ) (the budget the fit's predicted peak is checked against).
# "e1071-tuned": e1071's RBF SVM with cost and gamma chosen on a hold-out third of the training
# split (tune.svm, cost 1, 4, gamma 0.5, 2 times 1 / p), refitted on all of it; its time is the
# tuning's and the refit's. SpicyMKL runs with the hinge loss. "<method>-tuned" (e.g.
# spicy-tuned): the method with C chosen from c(1, 4) on a stratified hold-out third of the
# training rows, then fitted on all of them (the selection's CPU counted).
# "l01-tuned": the same with MKL-L0/1's own grid and settings (see the case below).
# Defaults: n = 10000 100000, twonorm, "store" (the factorisation alone), the registered
# methods, e1071 and mwu. Methods not registered on the low-rank store may be named in
# --methods: they run on it through the generic (n x n) paths. Measurements:
# inst/notes/NOTES-store.md.
args <- commandArgs(trailingOnly = TRUE)

# Adult: fairmodels' adult (the UCI training file, 32,561 rows) for training and its adult_test
# (the UCI test file, 16,281 rows) held out; without fairmodels, arules::AdultUCI's 32,561
# labelled rows (its test rows carry no label) split 2/3 : 1/3 at random. The five numeric
# features (fnlwgt dropped) z-scored on the training rows, the categoricals one-hot 0/1 (a
# missing category a level of its own), so that one set of widths suits every feature group.
adult_data <- function() {
  fm <- requireNamespace("fairmodels", quietly = TRUE)
  if (!fm && !requireNamespace("arules", quietly = TRUE)) return(NULL)
  e <- new.env()
  if (fm) {
    utils::data("adult", "adult_test", package = "fairmodels", envir = e)
    a <- rbind(e$adult, e$adult_test)   # the test file's levels follow the training file's
    y <- ifelse(grepl(">50K", c(as.character(e$adult$salary),
                                as.character(e$adult_test$salary)), fixed = TRUE), 1, -1)
    a$salary <- NULL
    tr <- seq_len(nrow(e$adult))
  } else {
    utils::data("AdultUCI", package = "arules", envir = e)
    a <- e$AdultUCI[!is.na(e$AdultUCI$income), ]
    y <- ifelse(a$income == "large", 1, -1)
    a$income <- NULL
    names(a) <- gsub("-", "_", names(a))
    tr <- sample.int(nrow(a), round(2 * nrow(a) / 3))
  }
  a$fnlwgt <- NULL
  num <- c("age", "education_num", "capital_gain", "capital_loss", "hours_per_week")
  for (v in names(a)) if (is.factor(a[[v]]))
    a[[v]] <- addNA(factor(a[[v]], ordered = FALSE), ifany = TRUE)
  xn <- as.matrix(a[num])
  xn <- sweep(sweep(xn, 2L, colMeans(xn[tr, ])), 2L, apply(xn[tr, ], 2L, stats::sd), "/")
  xc <- stats::model.matrix(~ . - 1, data = a[setdiff(names(a), num)])
  x <- cbind(xn, xc[, colSums(xc[tr, ]) > 0, drop = FALSE])   # levels seen in training
  list(x = x[tr, ], y = y[tr], xt = x[-tr, ], yt = y[-tr], bayes = NA,
       groups = list(numeric = seq_along(num), categorical = seq(length(num) + 1L, ncol(x)),
                     all = seq_len(ncol(x))))
}

make_data <- function(data, n, ntest = 10000L) {
  set.seed(1)
  if (data == "adult") return(adult_data())
  gen <- switch(data, twonorm = mlbench::mlbench.twonorm, ringnorm = mlbench::mlbench.ringnorm,
                stop("unknown data set ", data))
  d <- gen(n + ntest, d = 20)
  y <- ifelse(d$classes == 1, -1, 1)
  tr <- seq_len(n)
  te <- n + seq_len(ntest)
  # twonorm's Bayes rule: the sign of the sum of the features (class 1 has mean +a, y = -1)
  bayes <- if (data == "twonorm") mean(ifelse(rowSums(d$x[te, ]) > 0, -1, 1) == y[te]) else NA
  list(x = d$x[tr, ], y = y[tr], xt = d$x[te, ], yt = y[te], bayes = bayes)
}

vmhwm <- function() {
  l <- grep("^VmHWM:", readLines("/proc/self/status"), value = TRUE)
  as.double(gsub("[^0-9]", "", l)) * 1024
}

if (length(args) && args[1L] == "case") {
  # one case: case <data> <n> <method> <threads> <rank> <tol> <kernels> <memory> [<test>]
  data <- args[2L]; n <- as.integer(args[3L]); method <- args[4L]; nt <- as.integer(args[5L])
  rank <- as.integer(args[6L]); tol <- as.double(args[7L]); nk <- as.integer(args[8L])
  mem <- as.double(args[9L])
  ntest <- if (length(args) >= 10L) as.integer(args[10L]) else 10000L
  suppressPackageStartupMessages(library(mklearn))
  d <- make_data(data, n, ntest)
  if (is.null(d)) { cat("RESULT\tskipped: arules is not installed\n"); quit(save = "no") }
  sig <- if (nk == 10L) 2^seq(1, 5.5, by = 0.5) else 2^seq(1, 5.5, length.out = nk)
  t0 <- proc.time()[["elapsed"]]
  cpu <- function() sum(proc.time()[c("user.self", "sys.self")])
  c0 <- cpu()
  if (method %in% c("e1071", "e1071-tuned")) {
    keep <- apply(d$x, 2L, stats::sd) > 0   # constant one-hot columns: scale() would divide by 0
    d$x <- d$x[, keep, drop = FALSE]; d$xt <- d$xt[, keep, drop = FALSE]
    fit <- if (method == "e1071") e1071::svm(d$x, factor(d$y), kernel = "radial", cost = 1) else {
      p <- ncol(d$x)
      tn <- e1071::tune.svm(d$x, factor(d$y), kernel = "radial", cost = c(1, 4),
                            gamma = c(0.5, 2) / p,
                            tunecontrol = e1071::tune.control(sampling = "fix", fix = 2 / 3))
      e1071::svm(d$x, factor(d$y), kernel = "radial", cost = tn$best.parameters$cost,
                 gamma = tn$best.parameters$gamma)
    }
    el <- proc.time()[["elapsed"]] - t0
    acc <- mean(as.character(predict(fit, d$xt)) == as.character(d$yt))
    cat(sprintf("RESULT\t%.2f\t%.0f\tNA\t%.4f\tNA\tNA\t%.4f\tNA\t%.2f\n", el, vmhwm(), acc,
                d$bayes, cpu() - c0))
    quit(save = "no")
  }
  # Adult: a linear kernel and 9 Gaussians on each of the numeric, the categorical and all
  # features (30 kernels), on the features as adult_data() scales them
  ks <- if (data == "adult")
    kernel_set(linear_kernel(), rbf_kernel(2^seq(1, 5, by = 0.5)), features = unname(d$groups)) else
      kernel_set(rbf_kernel(sig))
  std <- data != "adult"
  if (method == "store") {
    # the low-rank store alone: standardisation as mkl() does it, then the factorisation
    xs <- if (std) scale(d$x) else d$x
    rk <- mklearn:::resolve_kernels(ks, ncol(xs), colnames(xs))
    st <- mklearn:::lowrank_train(rk, xs, tol, rank, nt)
    el <- proc.time()[["elapsed"]] - t0
    cat(sprintf("RESULT\t%.2f\t%.0f\tNA\tNA\t%s\t%d\t%.4f\tNA\t%.2f\n", el, vmhwm(),
                format(signif(max(st$factors$error), 2)), sum(st$factors$rank), d$bayes,
                cpu() - c0))
    quit(save = "no")
  }
  # "<method>-tuned": C from c(1, 4) (e1071-tuned's costs, on the method's own scale of C) by
  # the accuracy on a third of the training rows held out (stratified, set.seed(1)), then the
  # fit on all of them; the selection's CPU is counted
  tuned <- endsWith(method, "-tuned")
  method <- sub("-tuned$", "", method)
  # "l01-tuned": MKL-L0/1 with the Cholesky w-step (the CG one does not finish on Adult), rho1 =
  # 64 and C from c(16, 64) (at C = 1, rho1 = 4 it gives up most of the minority class),
  # classes only in every fit (platt = "train": e1071's fit has no probabilities either)
  l01t <- tuned && method == "l01"
  grid <- if (l01t) c(16, 64) else c(1, 4)
  l01ctl <- if (l01t) list(wstep = "chol", rho1 = 64) else list()
  ctl <- if (method == "mwu") mkl_control(nthreads = nt, store = "fly") else
    do.call(mkl_control, c(list(nthreads = nt, store = "lowrank", rank = rank, lowrank_tol = tol,
                                platt = if (l01t) "train"), l01ctl))
  if (!is.na(mem)) ctl$memory <- mem
  loss <- if (method == "spicy") "hinge" else NULL
  fit_at <- function(rows, C = NULL, ctl) {
    xr <- d$x[rows, , drop = FALSE]
    suppressWarnings(if (is.null(C))
      mkl(xr, d$y[rows], kernels = ks, method = method, control = ctl, loss = loss,
          standardize = std) else
      mkl(xr, d$y[rows], kernels = ks, method = method, control = ctl, loss = loss,
          standardize = std, C = C))
  }
  Ct <- NULL
  if (tuned) {
    set.seed(1)
    hold <- unlist(lapply(split(seq_along(d$y), d$y), function(i) i[sample.int(length(i),
                                                                               length(i) %/% 3L)]))
    part <- setdiff(seq_along(d$y), hold)
    ctl_hold <- do.call(mkl_control, c(list(nthreads = nt, store = "lowrank", rank = rank,
                                            lowrank_tol = tol, platt = "train"), l01ctl))
    hacc <- vapply(grid, function(C)
      mean(predict(fit_at(part, C, ctl_hold), d$x[hold, , drop = FALSE]) == d$y[hold]), 0)
    Ct <- grid[which.max(hacc)]
  }
  fit <- tryCatch(fit_at(seq_along(d$y), Ct, ctl), error = function(e) conditionMessage(e))
  el <- proc.time()[["elapsed"]] - t0
  cf <- cpu() - c0
  if (is.character(fit)) {
    cat(sprintf("RESULT\tstop after %.1f s: %s\n", el, gsub("[\t\n]", " ", fit)))
    quit(save = "no")
  }
  t1 <- proc.time()[["elapsed"]]
  c1 <- cpu()
  acc <- mean(predict(fit, d$xt) == d$yt)
  tp <- proc.time()[["elapsed"]] - t1
  cp <- cpu() - c1
  gap <- utils::tail(fit$history$gap, 1L)
  lr <- fit$lowrank
  # MWUMKL: its status, support and training points misclassified outside it
  num <- function(v) if (is.null(v)) NA_integer_ else as.integer(v)
  note <- if (method == "mwu") sprintf("status %s, T = %d, support %d, uncovered %d",
                                       fit$info$status, fit$info$T, num(fit$info$support),
                                       num(fit$info$uncovered)) else ""
  if (tuned) note <- sprintf("C = %g chosen (hold-out accuracy %s)", Ct,
                             paste(format(hacc, digits = 4), collapse = " / "))
  note <- sprintf("%s%d iterations, %sconverged; predict of %d points: %.2f s cpu",
                  if (nzchar(note)) paste0(note, "; ") else "", as.integer(fit$iterations),
                  if (isTRUE(fit$converged)) "" else "not ", nrow(d$xt), cp)
  # the fit's own notes (the warnings are suppressed above): learned nothing, generalises nothing
  flag <- c(fit$learned_nothing, fit$degenerate)
  if (length(flag)) note <- sprintf("%s; NOTE: %s", note, gsub("[\t\n]", " ", flag[1L]))
  cat(sprintf("RESULT\t%.2f\t%.0f\t%s\t%.4f\t%s\t%s\t%.4f\t%.2f\t%.2f\t%s\n", el, vmhwm(),
              format(signif(gap, 2)), acc,
              if (is.null(lr)) "NA" else format(signif(max(lr$error), 2)),
              if (is.null(lr)) "NA" else sum(lr$rank), d$bayes, tp, cf, note))
  quit(save = "no")
}

opt <- function(name, default) {
  a <- grep(sprintf("^--%s=", name), args, value = TRUE)
  if (length(a)) sub("^--[a-z]+=", "", a[1L]) else default
}
ns <- as.integer(grep("^--", args, value = TRUE, invert = TRUE))
if (!length(ns)) ns <- c(10000L, 100000L)
data <- opt("data", "twonorm")
if (data == "adult") ns <- NA_integer_
registered <- mklearn::mkl_methods()[vapply(mklearn::mkl_methods(), function(m)
  isTRUE(mklearn:::method_info(m)$lowrank), logical(1))]
methods <- strsplit(opt("methods", paste(c("store", registered, "e1071", "mwu"), collapse = ",")),
                    ",")[[1L]]
nt <- as.integer(opt("threads", "1"))
rank <- as.integer(opt("rank", "200"))
tol <- as.double(opt("tol", "1e-3"))
tmo <- as.integer(opt("timeout", "900"))
nk <- as.integer(opt("kernels", "10"))
mem <- opt("memory", "NA")
ntest <- as.integer(opt("test", "10000"))
script <- normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)))

cat(sprintf(paste0("%s, %s, low-rank store rank <= %d, ",
                   "lowrank_tol = %g, %d thread(s); registered on the low-rank store: %s\n"),
            data, if (data == "adult") "30 kernels (linear, 9 Gaussians; 3 feature groups)" else
              sprintf("%d Gaussian kernels", nk), rank, tol, nt,
            if (length(registered)) paste(registered, collapse = ", ") else "none"))
cat(sprintf("%-8s %-8s %9s %9s %9s %9s %8s %9s %7s %7s %9s\n", "n", "method", "time", "cpu",
            "peak", "gap", "accuracy", "lr_error", "rank", "bayes", "predict"))
for (n in ns) for (m in methods) {
  cc <- sum(proc.time()[c("user.child", "sys.child")])
  out <- suppressWarnings(system2("timeout", c(tmo, "nice", "-n", "10", "Rscript", script, "case",
                                               data, if (is.na(n)) 0L else n, m, nt, rank, tol, nk,
                                               mem, ntest),
                                  stdout = TRUE, stderr = FALSE))
  res <- grep("^RESULT", out, value = TRUE)
  if (!length(res)) {
    # the case's CPU up to then (its whole process, data and start-up included)
    cat(sprintf("%-8s %-8s stopped by the timeout (%d s elapsed, %.1f s of CPU)\n", n, m, tmo,
                sum(proc.time()[c("user.child", "sys.child")]) - cc))
    next
  }
  r <- strsplit(res[1L], "\t")[[1L]][-1L]
  if (length(r) < 7L) { cat(sprintf("%-8s %-8s %s\n", n, m, r[1L])); next }
  cat(sprintf("%-8s %-8s %8ss %8ss %8.2fG %9s %8s %9s %7s %7s %9s\n", n, m, r[1L], r[9L],
              as.double(r[2L]) / 1e9, r[3L], r[4L], r[5L], r[6L], r[7L],
              if (r[8L] != "NA") paste0(r[8L], "s") else "-"))
  if (length(r) >= 10L && nzchar(r[10L])) cat(sprintf("%-8s %-8s %s\n", "", "", r[10L]))
}
