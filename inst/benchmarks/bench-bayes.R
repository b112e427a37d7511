# Empirical Bayes MKL at its defaults: CPU time per fit, steps and held-out error over random
# 80/20 splits, beside another build of the package timed in the same run (NOTES-bayes.md).
#
# Data: mlbench's BostonHousing (506 rows), friedman1 and friedman3 (n = 500, sd 1 and 0.1,
# seeds 11 and 13), PimaIndiansDiabetes (538 rows, seed 2024; classification). Splits: seeds
# 101, 102, ...; mkl()'s default kernels, mkl_control(nthreads = 1), every other setting at its
# default. Classification is timed twice: at the defaults (Platt's sigmoid on cross-validated
# decision values: five fold fits) and with platt = "train" (the one fit, as builds before the
# cross-validated sigmoid did). CPU is user + system seconds of the mkl() call.
#   Rscript bench-bayes.R                     # this build
#   MKL_BENCH_OLDLIB=<library> Rscript bench-bayes.R   # and the build installed there
# MKL_BENCH_SPLITS (10), MKL_BENCH_SETS (all, comma separated), MKL_BENCH_MAXIT_OLD (the
# reference build's maxiter: its MacKay iteration on friedman1 takes minutes per fit);
# MKL_BENCH_UPDATES=1 instead compares update = "mackay" and "scoring" in this build.
args <- commandArgs(trailingOnly = TRUE)
child <- length(args) && args[1L] == "--child"
if (child) .libPaths(c(args[2L], .libPaths()))
suppressMessages(library(mklearn))
data("BostonHousing", package = "mlbench", envir = environment())
data("PimaIndiansDiabetes", package = "mlbench", envir = environment())
simulated <- function(generator, seed, ...) {
  set.seed(seed)
  d <- generator(500, ...)
  list(x = d$x, y = d$y)
}
set.seed(2024)
ip <- sample(768, 538)
sets <- list(BostonHousing = list(x = data.matrix(BostonHousing[, -14]) -
                                    outer(rep(1, 506), c(0, 0, 0, 1, rep(0, 9))),
                                  y = BostonHousing$medv),
             friedman1 = simulated(mlbench::mlbench.friedman1, 11, sd = 1),
             friedman3 = simulated(mlbench::mlbench.friedman3, 13, sd = 0.1),
             Pima = list(x = as.matrix(PimaIndiansDiabetes[ip, 1:8]),
                         y = PimaIndiansDiabetes$diabetes[ip]))
pick <- Sys.getenv("MKL_BENCH_SETS", "")
if (nzchar(pick)) sets <- sets[strsplit(pick, ",")[[1]]]
nsplit <- as.integer(Sys.getenv("MKL_BENCH_SPLITS", "10"))

cpu <- function(expr) {
  t <- system.time(expr)
  t[["user.self"]] + t[["sys.self"]]
}

# One row per set, split and setting: CPU s, steps, factorisations, converged, test error
# (RMSE, or the misclassification rate).
run_splits <- function(maxiter = NULL) {
  has_platt <- tryCatch({ mkl_control(platt = "train"); TRUE }, error = function(e) FALSE)
  out <- list()
  for (nm in names(sets)) {
    s <- sets[[nm]]
    n <- nrow(s$x)
    cls <- is.factor(s$y)
    settings <- if (cls && has_platt) c("default", "train") else "default"
    for (k in seq_len(nsplit)) {
      set.seed(100 + k)
      tr <- sample(n, round(0.8 * n))
      for (st in settings) {
        ctl <- mkl_control(nthreads = 1)
        if (st == "train") ctl <- mkl_control(nthreads = 1, platt = "train")
        if (!is.null(maxiter)) ctl$maxiter <- maxiter
        t <- cpu(f <- suppressWarnings(mkl(s$x[tr, ], s$y[tr], method = "bayes",
                                             control = ctl)))
        p <- predict(f, s$x[-tr, ])
        err <- if (cls) mean(p != s$y[-tr]) else sqrt(mean((p - s$y[-tr])^2))
        out[[length(out) + 1L]] <- data.frame(
          set = nm, split = k, setting = if (cls && !has_platt) "train" else st, cpu = t,
          steps = f$iterations, factorizations = f$info$factorizations,
          converged = f$converged, error = err)
      }
    }
  }
  do.call(rbind, out)
}

if (child) {
  mi <- Sys.getenv("MKL_BENCH_MAXIT_OLD", "")
  saveRDS(run_splits(if (nzchar(mi)) as.integer(mi)), args[3L])
  quit(save = "no")
}

if (Sys.getenv("MKL_BENCH_UPDATES") == "1") {
  # the scoring update (the default) against MacKay's iteration, on all rows of each set
  for (nm in names(sets)) {
    for (upd in c("mackay", "scoring")) {
      ctl <- mkl_control(nthreads = 1, update = upd)
      t <- cpu(f <- suppressWarnings(mkl(sets[[nm]]$x, sets[[nm]]$y, method = "bayes",
                                          control = ctl)))
      cat(sprintf("%-13s n=%d %-8s %7.2fs steps %4d factorisations %4d conv %s J %.10f\n",
                  nm, nrow(sets[[nm]]$x), upd, t, f$iterations, f$info$factorizations,
                  f$converged, f$objective))
    }
  }
  quit(save = "no")
}

summarise <- function(r) {
  a <- aggregate(cbind(cpu, steps, factorizations, converged, error) ~ set + setting, r, mean)
  a[order(a$set, a$setting), ]
}
new <- run_splits()
old_lib <- Sys.getenv("MKL_BENCH_OLDLIB", "")
if (nzchar(old_lib)) {
  me <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  tmp <- tempfile(fileext = ".rds")
  system2(file.path(R.home("bin"), "Rscript"), c(me, "--child", old_lib, tmp))
  old <- readRDS(tmp)
  a <- summarise(new)
  b <- summarise(old)
  m <- merge(b, a, by = c("set", "setting"), suffixes = c(".old", ".new"), all = TRUE)
  m$ratio <- m$cpu.old / m$cpu.new
  # the reference build has one classification setting (its sigmoid on the training values):
  # its time is the reference of both settings of this build
  for (i in which(is.na(m$cpu.old))) {
    j <- which(m$set == m$set[i] & !is.na(m$cpu.old))
    if (length(j)) m$ratio[i] <- m$cpu.old[j[1L]] / m$cpu.new[i]
  }
  print(m, digits = 4, row.names = FALSE)
} else print(summarise(new), digits = 4, row.names = FALSE)
