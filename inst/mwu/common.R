# Shared by the full-scale MWUMKL scripts (fullscale.R, adult.R, mushroom.R): the date and machine
# stamped on every row, the process's CPU time, and one timed fit with its test accuracy.
suppressPackageStartupMessages(library(mklearn))

stamp <- list(date = format(Sys.time(), "%Y-%m-%d %H:%M"),
              machine = sprintf("%s, %d cores, R %s", Sys.info()[["nodename"]],
                                parallel::detectCores(), getRversion()))
cpu <- function() sum(proc.time()[c("user.self", "sys.self", "user.child", "sys.child")],
                      na.rm = TRUE)

# The whole mkl() call on the training rows `tr` (C = 1, no standardisation: the scripts scale
# the features themselves; the sigmoid on the training values, as only classes are predicted),
# timed in elapsed and CPU seconds, and its accuracy on the rows `te`. `store`: the kernel store
# (mkl_control()); `warnings = FALSE` silences the fit's warnings (constant kernels of a part).
timed_fit <- function(x, y, ks, method, tr, te, memory, store = "auto", warnings = TRUE, ...) {
  invisible(gc())
  c0 <- cpu(); t0 <- proc.time()[["elapsed"]]
  ctl <- mkl_control(platt = "train", nthreads = 1, memory = memory, store = store,
                     progress = FALSE)
  call <- function() suppressMessages(mkl(x[tr, ], y[tr], ks, method = method, C = 1,
                                          standardize = "none", control = ctl, ...))
  f <- if (warnings) call() else suppressWarnings(call())
  el <- proc.time()[["elapsed"]] - t0; cp <- cpu() - c0
  data.frame(N = length(tr), method = method, store = f$store, M = length(f$weights),
             seconds = el, cpu = cp, solver = f$timing[["fit"]], T = f$iterations,
             accuracy = mean(predict(f, x[te, ]) == y[te]), stamp)
}
