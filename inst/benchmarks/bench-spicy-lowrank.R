# SpicyMKL (hinge) on the low-rank store: one fit with its counts, for the measurements of
# inst/notes/NOTES-spicy.md ("Low-rank store at n = 20,000 and 100,000"). twonorm (mlbench,
# seed 1, 20 features), n training points and 10,000 held out, the 10 Gaussian kernels of
# bench-lowrank.R (sigma = 2^(1, 1.5, ..., 5.5)), rank cap 200, lowrank_tol = 1e-3.
# Usage: Rscript bench-spicy-lowrank.R n [threads] [platt] [verbose] [tuning]
#   platt: "cv" (mkl()'s default, the probabilities' folds) or "train"; verbose 1 prints the
#   solver's timers and Woodbury counts, 2 a line per Newton step; tuning: spicy_tuning()
#   knobs as name=value pairs separated by commas (e.g. gamma_scale=0.5,inner_maxiter=20;
#   several values joined by "+": row_start=2000+20000).
# Prints the whole call's elapsed and CPU time, the last gap, the objective, the held-out
# accuracy, the outer iterations, Newton steps, model rounds, CG iterations and the peak memory.
a <- commandArgs(trailingOnly = TRUE)
n <- as.integer(a[1L])
nt <- if (length(a) >= 2L) as.integer(a[2L]) else 1L
platt <- if (length(a) >= 3L) a[3L] else "train"
verbose <- if (length(a) >= 4L) as.integer(a[4L]) else 1L
tun <- if (length(a) >= 5L) {
  kv <- strsplit(strsplit(a[5L], ",", fixed = TRUE)[[1L]], "=", fixed = TRUE)
  stats::setNames(lapply(kv, function(p)
    utils::type.convert(strsplit(p[2L], "+", fixed = TRUE)[[1L]], as.is = TRUE)),
                  vapply(kv, `[`, "", 1L))
}
suppressPackageStartupMessages(library(mklearn))
set.seed(1)
d <- mlbench::mlbench.twonorm(n + 10000, d = 20)
y <- ifelse(d$classes == 1, -1, 1)
tr <- seq_len(n)
te <- n + seq_len(10000)
ks <- kernel_set(rbf_kernel(2^seq(1, 5.5, by = 0.5)))
ctl <- mkl_control(nthreads = nt, store = "lowrank", rank = 200L, lowrank_tol = 1e-3,
                   verbose = verbose, platt = platt,
                   tuning = if (length(tun)) do.call(spicy_tuning, tun))
cpu <- function() sum(proc.time()[c("user.self", "sys.self")])
t0 <- proc.time()[["elapsed"]]
c0 <- cpu()
fit <- suppressWarnings(mkl(d$x[tr, ], y[tr], kernels = ks, method = "spicy", control = ctl,
                            loss = "hinge"))
el <- proc.time()[["elapsed"]] - t0
cf <- cpu() - c0
acc <- mean(predict(fit, d$x[te, ]) == y[te])
i <- fit$info
peak <- grep("^VmHWM:", readLines("/proc/self/status"), value = TRUE)
cat(sprintf(paste0("n %d threads %d platt %s: elapsed %.2f s, cpu %.2f s, gap %.3g, objective ",
                   "%.10g, accuracy %.4f, outer %d, newton %d, model rounds %d, cg %d, active %d, ",
                   "peak %s\n"),
            n, nt, platt, el, cf, utils::tail(fit$history$gap, 1L), fit$objective, acc,
            fit$iterations, i$newton_steps, i$model_rounds, i$cg_iterations, i$n_active,
            gsub("[^0-9a-zA-Z ]|VmHWM", "", peak)))
cat("newton steps by outer iteration:", fit$history$newton, "\n")
if (!is.null(i$row_start))
  with(i$row_start, cat(sprintf(paste0("row start: %d rows, C %.4g, outer %d, newton %d, model ",
                                       "rounds %d, cg %d, gap %.3g\n"),
                                rows, C, iterations, newton_steps, model_rounds, cg_iterations,
                                gap)))
