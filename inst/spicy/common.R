# Shared by the full-scale SpicyMKL scripts (fig1.R, fig3.R, fig4.R) and inst/hessian/fig1.R: the
# four methods of the SpicyMKL paper on one problem, the paper's C converted, results stamped with
# the date and the machine, and results merged into a CSV so that a figure can be run in chunks.
suppressPackageStartupMessages(library(mklearn))

# The paper's SpicyMKL penalty C (0.005, 0.05, 0.5 on unit-trace kernels) is mkl()'s
# C = 1 / (2 C) (R/cscale.R); SimpleMKL and HessianMKL then solve the same problem at the box
# constant C_svm = sum_m ||f_m|| / C of the SpicyMKL hinge solution (fit$info$C_svm, Eq. 13).
four_methods <- function(x, y, ks, C_paper, max_time = 300, test = NULL) {
  C <- 1 / (2 * C_paper)
  one <- function(method, Cm, loss = NULL) {
    # SimpleMKL may need more than its default 200 iterations (Pima and Ionosphere in Fig. 1
    # stopped there with gaps up to 0.09); max_time still bounds a call. Only classes are
    # predicted, so Platt's sigmoid is fitted on the training values (no 5-fold refit)
    ctl <- if (method %in% c("simple", "hessian"))
      mkl_control(maxiter = 5000, max_time = max_time, platt = "train") else
      mkl_control(platt = "train")
    settle(ks, x)
    # elapsed and CPU time (user + system over all threads) of the whole call
    t0 <- proc.time()
    fit <- suppressWarnings(mkl(x, y, kernels = ks, method = method, C = Cm, loss = loss,
                                control = ctl))
    dt <- proc.time() - t0
    whole <- dt[["elapsed"]]
    acc <- if (is.null(test)) NA_real_ else
      mean(predict(fit, test$x) == test$y)
    list(fit = fit, row = data.frame(
      method = paste0(c(spicy = "SpicyMKL", simple = "SimpleMKL", hessian = "HessianMKL")[[method]],
                      if (!is.null(loss) && method == "spicy") paste0(" (", loss, ")") else ""),
      C_paper = C_paper, C = Cm, whole_s = whole,
      whole_cpu_s = dt[["user.self"]] + dt[["sys.self"]], kernels_s = fit$timing[["kernels"]],
      solver_s = fit$timing[["fit"]], iterations = fit$iterations, converged = fit$converged,
      gap = utils::tail(fit$history$gap, 1L), n_selected = sum(fit$weights > 0),
      svm_solves = if (is.null(fit$info$svm_solves)) NA_integer_ else fit$info$svm_solves,
      grad_evals = if (is.null(fit$info$grad_evals)) NA_integer_ else fit$info$grad_evals,
      accuracy = acc))
  }
  h <- one("spicy", C, "hinge")
  C_svm <- h$fit$info$C_svm
  rows <- list(h$row, one("spicy", C, "logistic")$row)
  h$fit <- NULL; gc()
  rows <- c(rows, list(one("simple", C_svm)$row, one("hessian", C_svm)$row))
  do.call(rbind, rows)
}

# Every timed call starts from the same state of the process's memory: the problem's kernels
# built once, untimed, and freed. Otherwise the call before it sets that state, and here it
# matters: after a HessianMKL fit at N = 1500 the next build of 20 kernels at N = 2000 took
# 0.45-0.62 s against 0.30-0.33 s after a SpicyMKL fit or a kernel build (first touches of
# huge-page-advised memory; without the advice every build took 0.40-0.55 s whatever came
# before). In four_methods() SpicyMKL (hinge) follows the HessianMKL fit of the
# previous cell, so its whole-call time paid for that step up in memory.
# MKLEARN_SETTLE=0 skips it: it costs a build per call, about half the CPU of a Splice cell at
# 2000 kernels, and the figures plot the solvers' time (NOTES-spicy.md, Figs. 3 and 4).
settle <- function(ks, x) {
  if (Sys.getenv("MKLEARN_SETTLE", "1") == "0") return(invisible(NULL))
  invisible(gram(ks, x))
  invisible(gc())
}

stamp <- function(df) {
  df$date <- format(Sys.time(), "%Y-%m-%d %H:%M")
  df$machine <- sprintf("%s, %s, %d cores, R %s, threads %d", Sys.info()[["nodename"]],
                        Sys.info()[["machine"]], parallel::detectCores(), getRversion(),
                        .Call(mklearn:::C_threads, 0L))
  df
}

# Write df to file, replacing the rows of an earlier run that have the same values in `key`.
merge_csv <- function(df, file, key) {
  if (file.exists(file)) {
    # rows of a key already there are replaced where they stand, so that a chunk rerun keeps
    # the file's order (the vignette's panels follow it); new keys are appended
    old <- utils::read.csv(file, stringsAsFactors = FALSE)
    old[setdiff(names(df), names(old))] <- NA      # columns added since (e.g. whole_cpu_s)
    old <- old[names(df)]
    ko <- do.call(paste, old[key]); kn <- do.call(paste, df[key])
    hit <- match(ko, kn)
    old[!is.na(hit), ] <- df[hit[!is.na(hit)], ]
    df <- rbind(old, df[!(kn %in% ko), , drop = FALSE])
  }
  utils::write.csv(df, file, row.names = FALSE)
  invisible(df)
}

out_dir <- function(sub) if (file.exists(file.path("inst", sub))) file.path("inst", sub) else "."

# The five sets of the SpicyMKL and HessianMKL papers' Figs. 1, read from the data folder beside the
# repository (MKLEARN_DATA overrides): x without constant columns, y a factor with levels -1, 1.
fig1_files <- c(liver = "liver_ilpd.csv", pima = "pima.csv", ionosphere = "ionosphere.csv",
                wpbc = "wpbc.csv", sonar = "sonar.csv")
data_dir <- Sys.getenv("MKLEARN_DATA", NA)
if (is.na(data_dir))       # the data folder beside the repository (or beside its parent)
  data_dir <- Filter(dir.exists, file.path(c("..", file.path("..", "..")), "shared", "data"))[1]
read_set <- function(s) {
  d <- utils::read.csv(file.path(data_dir, fig1_files[[s]]))
  x <- as.matrix(d[, -1])
  if (s == "wpbc") x <- x[, -1]                        # the recurrence time leaks the label
  x <- x[, apply(x, 2, stats::sd) > 0, drop = FALSE]   # constant columns carry nothing
  list(x = x, y = factor(d$y, levels = c(-1, 1)))
}
