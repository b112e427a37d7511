# Full-scale HessianMKL paper Fig. 1: time, number of SVM evaluations and number of
# gradient (SimpleMKL) or Hessian (HessianMKL) evaluations, SimpleMKL beside HessianMKL, over
# random splits (the paper: 20) on the UCI sets of the SimpleMKL experiments: Liver (ILPD,
# 579 x 9: the BUPA set is not available), Pima, Ionosphere, Wpbc (without its first column)
# and Sonar, read from a data folder beside the repository (or MKLEARN_DATA). As in the paper:
# the SimpleMKL kernels (Gaussians of 24 widths and polynomials of degree 1-3 on all variables
# and on each one, 27 (d + 1) kernels), centred in feature space and scaled to unit trace,
# C = 100 on those kernels (C = 100 / n on mkl()'s scale), relative duality gap 0.01, 70% of
# the points for training; SimpleMKL may take up to 5000 iterations. The paper's mixed strategy
# (one SimpleMKL iteration, then HessianMKL) is a one-iteration SimpleMKL fit whose state (the
# weights and the SVM's alpha, shared by the two strategies of one driver) warm-starts HessianMKL.
# Run from the repository root, in chunks if you like (rows of the same set, split and method
# are replaced; MKLEARN_METHODS names the methods to run, default simple,hessian; MKLEARN_OUT
# the CSV, default fig1-results.csv):
#   Rscript inst/hessian/fig1.R [splits] [set ...]
#   MKLEARN_METHODS=mixed,hessian MKLEARN_OUT=fig1-mixed.csv Rscript inst/hessian/fig1.R 10
# (the mixed strategy beside a HessianMKL reference timed in the same run: fig1-mixed.csv).
# Every fit calibrates Platt's sigmoid by 5-fold refits (in whole_s) unless MKLEARN_PLATT=train.
# writes the CSV in inst/hessian/ and appends to inst/hessian/fig1-console.txt.
suppressPackageStartupMessages(library(mklearn))
source(file.path(if (file.exists("inst/spicy")) "inst/spicy" else "../spicy", "common.R"))
options(width = 150)
args <- commandArgs(TRUE)
splits <- if (length(args)) as.integer(args[1]) else 20L
sets <- if (length(args) > 1L) args[-1] else names(fig1_files)
methods <- strsplit(Sys.getenv("MKLEARN_METHODS", "simple,hessian"), ",")[[1]]
out_csv <- Sys.getenv("MKLEARN_OUT", "fig1-results.csv")
platt <- Sys.getenv("MKLEARN_PLATT", "cv")
labels <- c(simple = "SimpleMKL", hessian = "HessianMKL", mixed = "Mixed")
# one fit of the figure; "mixed": one SimpleMKL iteration, then HessianMKL from its state
fit_one <- function(method, x, y) {
  C <- 100 / nrow(x)
  ctl <- mkl_control(maxiter = 5000, max_time = 300, platt = platt)
  if (method != "mixed")
    return(list(suppressWarnings(mkl(x, y, kernels = ks, method = method, C = C,
                                     control = ctl))))
  s1 <- suppressWarnings(mkl(x, y, kernels = ks, method = "simple", C = C,
                             control = mkl_control(maxiter = 1, platt = "train")))
  s1$method <- "hessian"
  list(s1, suppressWarnings(mkl(x, y, kernels = ks, method = "hessian", C = C, init = s1,
                                control = ctl)))
}
ks <- kernel_set(rbf_kernel(sigma = c(0.1, 0.25, 0.5, 0.75, 1:20)), poly_kernel(degree = 1:3),
                 features = c("all", "each"), normalize = "center_trace")
dir <- out_dir("hessian")
con <- file(file.path(dir, "fig1-console.txt"), open = "a")
sink(con, split = TRUE)
cat(sprintf("== fig1.R %s, %d splits, sets %s, methods %s, to %s\n", format(Sys.time()),
            splits, paste(sets, collapse = ", "), paste(methods, collapse = ", "), out_csv))
res <- NULL
for (s in sets) {
  d <- read_set(s)
  n <- nrow(d$x)
  for (sp in seq_len(splits)) {
    set.seed(200 * sp + 7)
    tr <- sample(n, round(0.7 * n))
    for (method in methods) {
      gc()
      t0 <- proc.time()[["elapsed"]]
      fits <- fit_one(method, d$x[tr, ], d$y[tr])
      whole <- proc.time()[["elapsed"]] - t0
      fit <- fits[[length(fits)]]
      sumof <- function(f) sum(vapply(fits, function(g) as.numeric(f(g)), 0))
      first <- list(simple = TRUE, hessian = FALSE, mixed = c(TRUE, FALSE))[[method]]
      res <- rbind(res, data.frame(
        set = s, split = sp, n_train = length(tr), M = n_kernels(ks, d$x),
        method = labels[[method]], whole_s = whole,
        solver_s = sumof(function(f) f$timing[["fit"]]),
        iterations = sumof(function(f) f$iterations),
        svm_solves = sumof(function(f) f$info$svm_solves),
        grad_evals = sum(mapply(function(f, g) if (g) f$info$grad_evals else
                                  f$info$hessian_evals, fits, first)),
        converged = fit$converged, gap = utils::tail(fit$history$gap, 1L),
        objective = fit$objective, n_selected = sum(fit$weights > 0),
        accuracy = mean(predict(fit, d$x[-tr, ]) == d$y[-tr])))
    }
  }
  a <- stats::aggregate(cbind(solver_s, svm_solves, grad_evals) ~ method, res[res$set == s, ],
                        function(v) c(mean = mean(v), sd = stats::sd(v)))
  cat(sprintf("-- %s (n = %d, M = %d, %d splits)\n", s, n, n_kernels(ks, d$x), splits))
  print(do.call(data.frame, a), digits = 3, row.names = FALSE)
}
merge_csv(stamp(res), file.path(dir, out_csv), c("set", "split", "method"))
sink(); close(con)
