# Benchmark: SpicyMKL (hinge, block 1-norm), SimpleMKL and HessianMKL on the same problems,
# all stopped at the same relative duality gap (0.01).
#
#   Rscript bench-svm-family.R              # full run (long: SimpleMKL is slow on 918 kernels)
#   MKL_BENCH_QUICK=1 Rscript bench-svm-family.R   # reduced grid
#   MKL_BENCH_MAXSEC=300   # time limit of one SVM-family run; a method that hits it (or a SpicyMKL
#                          # run longer than that) is skipped at larger sizes
#   MKL_BENCH_THREADS=0, MKL_BENCH_OUT=results.csv
#   MKL_BENCH_TARGETS=1 [MKL_BENCH_BASE=<library of a reference build>]: only the targets
#                          (SimpleMKL at M = 6000), with ratios to the references
#
# (a) Ionosphere (351 x 33, V2 dropped), 27 (d + 1) = 918 kernels (Gaussian widths 0.1, 0.25, 0.5,
#     0.75, 1, ..., 20 and polynomials of degree 1-3, on all variables and on each variable),
#     centred in feature space, unit trace. SpicyMKL at C = 0.005, 0.05, 0.5; SimpleMKL and
#     HessianMKL at the mapped C_svm = sum_m ||f*_m|| / C (the same optimum, see
#     inst/notes/NOTES-svm-family.md). Also the HessianMKL paper's setting C_svm = 100.
# (b) Ringnorm, N = 200 (mlbench.ringnorm, 20 variables), M = 50 ... 6000 Gaussian kernels on random
#     feature subsets with width 5 chi^2_1 + 0.1, centred, unit trace.
suppressPackageStartupMessages(library(mklearn))
quick <- nzchar(Sys.getenv("MKL_BENCH_QUICK"))
maxsec <- as.numeric(Sys.getenv("MKL_BENCH_MAXSEC", "300"))
nthreads <- as.integer(Sys.getenv("MKL_BENCH_THREADS", "0"))
fit_simple <- get("fit_simple", asNamespace("mklearn"))
fit_hessian <- get("fit_hessian", asNamespace("mklearn"))
fit_spicy <- if (exists("fit_spicy", asNamespace("mklearn"))) get("fit_spicy", asNamespace("mklearn"))

# One pass over the whole kernel array (K_m a_m for every m, a dense): a floor for any method
# that certifies the duality gap, which needs a'K_m a for every kernel at least once.
sweep_time <- function(K) {
  dk <- dim(K)
  A <- matrix(1, dk[1L], dk[3L])
  st <- mklearn:::as_store(K)
  st$nthreads <- nthreads
  t <- replicate(3, system.time(.Call(mklearn:::C_store_decision, st, NULL, A))[["elapsed"]])
  min(t)
}

# kernels from the package: centred in feature space, unit trace, 1e-8 jitter
iono_kernels <- function() {
  data("Ionosphere", package = "mlbench", envir = environment())
  X <- Ionosphere[, -c(2, 35)]
  X$V1 <- as.numeric(as.character(X$V1))
  X <- scale(as.matrix(X))
  y <- ifelse(Ionosphere$Class == "good", 1, -1)
  ks <- kernel_set(rbf_kernel(sigma = c(0.1, 0.25, 0.5, 0.75, 1:20)), poly_kernel(degree = 1:3),
                   features = c("all", "each"), normalize = "center_trace")
  list(K = unname(gram(ks, X, nthreads = nthreads)), y = y)
}

ringnorm_kernels <- function(M, N = 200, seed = 1) {
  set.seed(seed)
  rn <- mlbench::mlbench.ringnorm(N, d = 20)
  X <- scale(rn$x)
  y <- ifelse(rn$classes == levels(rn$classes)[1], 1, -1)
  ks <- random_kernels(M, p = ncol(X), normalize = "center_trace")
  list(K = unname(gram(ks, X, nthreads = nthreads)), y = y)
}

timed <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  r <- tryCatch(expr, error = function(e) e)
  t <- proc.time()[["elapsed"]] - t0
  if (inherits(r, "error")) {
    message("  failed: ", conditionMessage(r))
    return(NULL)
  }
  list(fit = r, time = t)
}

row_svm <- function(setting, method, r, Csvm) {
  if (is.null(r)) return(NULL)
  f <- r$fit
  data.frame(setting = setting, method = method, C_svm = signif(Csvm, 5),
             time = round(r$time, 3), objective = signif(f$objective, 8),
             gap = signif(f$info$gap, 3), iterations = f$iterations,
             svm_solves = f$info$svm_solves, grad_evals = f$info$grad_evals,
             hessian_evals = f$info$hessian_evals, n_active = sum(f$weights > 0),
             t_svm = round(f$info$times[["svm"]], 3), t_grad = round(f$info$times[["gradient"]], 3),
             t_dir = round(f$info$times[["direction"]], 3), smo_iter = f$info$smo_iterations,
             converged = f$converged,
             stop = f$info$stop_reason)
}
row_spicy <- function(setting, r, C) {
  if (is.null(r)) return(NULL)
  f <- r$fit
  data.frame(setting = setting, method = "spicy", C_svm = NA_real_,
             time = round(r$time, 3), objective = signif(f$objective, 8),
             gap = signif(utils::tail(f$history$gap, 1), 3), iterations = f$iterations,
             svm_solves = NA_integer_, grad_evals = NA_integer_, hessian_evals = NA_integer_,
             n_active = sum(f$weights > 0), t_svm = NA_real_, t_grad = NA_real_, t_dir = NA_real_,
             smo_iter = NA_real_, converged = f$converged, stop = NA_character_)
}

## Targets (MKL_BENCH_TARGETS=1 runs only this section): SimpleMKL at M = 6000, solver
## C = 100, gap 0.01 (target 3 s), on bench-spicy.R's data (ringnorm N = 200, seed 20091,
## unit trace), timed as the solver (fit_simple) and as the whole call mkl(NULL, y, kernels = K)
## (user C = 100 / n, the same box constant; it includes the checks of precomputed kernels).
## References in the same run: HessianMKL on the same kernels, and with MKL_BENCH_BASE=<library>
## the same calls on another build (e.g. an earlier commit) in a child process.
targets_svm <- function() {
  role_ref <- nzchar(Sys.getenv("MKL_BENCH_ROLE"))
  set.seed(20091)
  rn <- mlbench::mlbench.ringnorm(200, d = 20)
  X <- rn$x; y <- ifelse(rn$classes == levels(rn$classes)[1], 1, -1)
  K <- unname(gram(random_kernels(6000, p = ncol(X)), X))
  ctl <- list(tol = 0.01, newton_tol = 0, nthreads = nthreads)
  tm <- function(expr) { t0 <- proc.time()[["elapsed"]]; r <- expr; list(r = r, t = proc.time()[["elapsed"]] - t0) }
  out <- list()
  for (meth in c("simple", "hessian")) {
    f <- tm(get(paste0("fit_", meth), asNamespace("mklearn"))(K, y, "classification", 100, ctl, NULL))
    w <- tm(suppressWarnings(mkl(NULL, y, kernels = K, method = meth, C = 100 / nrow(X),
                                 control = mkl_control(tol = 0.01, nthreads = nthreads))))
    out[[meth]] <- c(solver = f$t, whole = w$t, gap = f$r$info$gap, iter = f$r$iterations,
                     svm = f$r$info$svm_solves)
  }
  rm(K); invisible(gc())
  # Ionosphere, 918 centred kernels, C_svm = 100 (the HessianMKL paper's setting): solver only
  iono <- iono_kernels()
  for (meth in c("simple", "hessian")) {
    f <- tm(get(paste0("fit_", meth), asNamespace("mklearn"))(iono$K, iono$y, "classification", 100,
                                                                ctl, NULL))
    out[[paste0("iono_", meth)]] <- c(solver = f$t, whole = NA, gap = f$r$info$gap,
                                      iter = f$r$iterations, svm = f$r$info$svm_solves)
  }
  if (role_ref) { for (m in names(out)) cat("REF", m, out[[m]], "\n"); return(invisible()) }
  ref <- NULL
  base <- Sys.getenv("MKL_BENCH_BASE")
  if (nzchar(base)) {
    me <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
    lines <- system2(file.path(R.home("bin"), "Rscript"), me, stdout = TRUE,
                     env = c(paste0("R_LIBS=", base), "MKL_BENCH_TARGETS=1", "MKL_BENCH_ROLE=ref",
                             paste0("MKL_BENCH_THREADS=", nthreads)))
    ref <- lapply(strsplit(grep("^REF", lines, value = TRUE), " +"), function(z)
      setNames(suppressWarnings(as.numeric(z[3:7])), c("solver", "whole", "gap", "iter", "svm")))
    names(ref) <- vapply(strsplit(grep("^REF", lines, value = TRUE), " +"), `[`, "", 2)
  }
  cat("\n== target: SimpleMKL, ringnorm N = 200, M = 6000, C = 100, gap 0.01 ==\n")
  for (part in c("solver", "whole")) {
    s <- out$simple[[part]]
    cat(sprintf("  %-6s SimpleMKL %7.2f s (target 3 s: %s)  vs HessianMKL %6.2f s (ratio %.2f)%s\n",
                part, s, if (s < 3) "met" else "missed", out$hessian[[part]], s / out$hessian[[part]],
                if (!is.null(ref)) sprintf("  vs base SimpleMKL %6.2f s (ratio %.2f)", ref$simple[[part]],
                                           s / ref$simple[[part]]) else ""))
  }
  cat(sprintf("  SimpleMKL gap %.3g in %d iterations, %d SVM solves%s\n", out$simple[["gap"]],
              as.integer(out$simple[["iter"]]), as.integer(out$simple[["svm"]]),
              if (!is.null(ref)) sprintf(" (base: gap %.3g, %d iterations, %d SVM solves)", ref$simple[["gap"]],
                                         as.integer(ref$simple[["iter"]]), as.integer(ref$simple[["svm"]])) else ""))
  cat(sprintf("  HessianMKL gap %.3g in %d iterations, %d SVM solves\n", out$hessian[["gap"]],
              as.integer(out$hessian[["iter"]]), as.integer(out$hessian[["svm"]])))
  cat("\n== Ionosphere, 918 centred kernels, C_svm = 100, gap 0.01 (should not get slower) ==\n")
  si <- out$iono_simple; he <- out$iono_hessian; ri <- if (!is.null(ref)) ref$iono_simple
  cat(sprintf("  solver SimpleMKL %6.2f s (gap %.3g, %d iterations, %d SVM solves)  vs HessianMKL %6.2f s (ratio %.2f)%s\n",
              si[["solver"]], si[["gap"]], as.integer(si[["iter"]]), as.integer(si[["svm"]]), he[["solver"]],
              si[["solver"]] / he[["solver"]],
              if (!is.null(ri)) sprintf("  vs base SimpleMKL %6.2f s (ratio %.2f; %d SVM solves)", ri[["solver"]],
                                        si[["solver"]] / ri[["solver"]], as.integer(ri[["svm"]])) else ""))
}
if (nzchar(Sys.getenv("MKL_BENCH_TARGETS"))) { targets_svm(); quit(save = "no") }

# SVM-family runs are stopped after maxsec seconds (reported with converged = FALSE and their gap)
# newton_tol = 0: HessianMKL's Newton decrement never asks for a tighter SVM solve; every method
# stops on the certified gap only
ctl <- list(tol = 0.01, nthreads = nthreads, max_time = maxsec, maxiter = 1000000L,
            newton_tol = 0)
results <- list()
slow <- character(0)

## (a) Ionosphere
cat("building the Ionosphere kernels ...\n")
dat <- iono_kernels()
sweeps <- c(ionosphere = sweep_time(dat$K))
Cs <- if (quick) 0.05 else c(0.005, 0.05, 0.5)
for (C in Cs) {
  setting <- sprintf("ionosphere C=%g", C)
  if (is.null(fit_spicy)) { cat("SpicyMKL not available: skipped\n"); break }
  sp <- timed(fit_spicy(dat$K, dat$y, "classification", C,
                        list(loss = "hinge", penalty = "l1", tol = 0.01, nthreads = nthreads), NULL))
  results[[length(results) + 1L]] <- row_spicy(setting, sp, C)
  if (is.null(sp)) next
  Csvm <- sp$fit$info$sum_norms / C
  if (!(Csvm > 0)) next
  for (meth in c("hessian", "simple")) {
    fitf <- if (meth == "hessian") fit_hessian else fit_simple
    r <- timed(fitf(dat$K, dat$y, "classification", Csvm, ctl, NULL))
    results[[length(results) + 1L]] <- row_svm(setting, meth, r, Csvm)
  }
  print(do.call(rbind, results))
}
# the HessianMKL paper's setting
for (meth in c("hessian", "simple")) {
  fitf <- if (meth == "hessian") fit_hessian else fit_simple
  r <- timed(fitf(dat$K, dat$y, "classification", 100, ctl, NULL))
  results[[length(results) + 1L]] <- row_svm("ionosphere C_svm=100", meth, r, 100)
}
rm(dat); invisible(gc())

## (b) Ringnorm, N = 200
Ms <- if (quick) c(50, 200, 1000) else c(50, 200, 1000, 3000, 6000)
Cr <- 0.05
for (M in Ms) {
  setting <- sprintf("ringnorm M=%d", M)
  rk <- ringnorm_kernels(M)
  sweeps[[setting]] <- sweep_time(rk$K)
  Csvm <- NA
  if (!is.null(fit_spicy) && !("spicy" %in% slow)) {
    sp <- timed(fit_spicy(rk$K, rk$y, "classification", Cr,
                          list(loss = "hinge", penalty = "l1", tol = 0.01, nthreads = nthreads), NULL))
    results[[length(results) + 1L]] <- row_spicy(setting, sp, Cr)
    if (is.null(sp) || sp$time > maxsec) slow <- c(slow, "spicy")
    if (!is.null(sp)) Csvm <- sp$fit$info$sum_norms / Cr
  }
  if (!is.finite(Csvm) || !(Csvm > 0)) Csvm <- 10
  for (meth in c("hessian", "simple")) {
    if (meth %in% slow) next
    fitf <- if (meth == "hessian") fit_hessian else fit_simple
    r <- timed(fitf(rk$K, rk$y, "classification", Csvm, ctl, NULL))
    results[[length(results) + 1L]] <- row_svm(setting, meth, r, Csvm)
    if (is.null(r) || r$time > maxsec) slow <- c(slow, meth)
  }
  rm(rk); invisible(gc())
  print(utils::tail(do.call(rbind, results), 3))
}

res <- do.call(rbind, results)
cat("\n== all runs ==\n")
print(res, row.names = FALSE)
cat("\n== time ratios at the same gap (a '>' marks a run stopped by the time limit: a lower bound),",
    "\n   and each time in units of one pass over the kernel array ==\n")
ratio <- function(num, den) {
  if (!nrow(num) || !nrow(den)) return(NA_character_)
  sprintf("%s%.1f", if (!num$converged) ">" else "", num$time / den$time)
}
tab <- do.call(rbind, lapply(unique(res$setting), function(s) {
  r <- res[res$setting == s, ]
  sp <- r[r$method == "spicy", ]; he <- r[r$method == "hessian", ]; si <- r[r$method == "simple", ]
  sw <- sweeps[[if (startsWith(s, "ionosphere")) "ionosphere" else s]]
  passes <- function(x) if (nrow(x)) sprintf("%.1f", x$time / sw) else NA_character_
  data.frame(setting = s, pass_s = round(sw, 3),
             spicy_passes = passes(sp), hessian_passes = passes(he), simple_passes = passes(si),
             hessian_over_spicy = ratio(he, sp), simple_over_spicy = ratio(si, sp),
             simple_over_hessian = ratio(si, he),
             svm_solves_simple_over_hessian = if (nrow(si) && nrow(he))
               round(si$svm_solves / he$svm_solves, 1) else NA_real_)
}))
print(tab, row.names = FALSE)
out <- Sys.getenv("MKL_BENCH_OUT")
if (nzchar(out)) utils::write.csv(res, out, row.names = FALSE)
