# Multiclass accuracy where a tuned single Gaussian wins: mlbench's Vehicle (846 x 18, four
# classes), Glass (214 x 9, six classes) and iris, 80/20 splits (seeded). Beside each other in
# the same run, on the same training rows:
#  - e1071::tune.svm over its 72-point grid (gamma 2^(-8:0), cost 2^(-1:6); 10-fold CV);
#  - cv.mkl() of an MKL method (default "hessian") over the C grid 10^(2:0 by -0.5), once per
#    screening threshold (options(mklearn.screen = t): kernels with fewer effective neighbours
#    than t on the training data are left out, R/screen.R), five folds shared by all; the
#    threshold and C of the smallest CV error are kept (CV over the kernel choice);
#  - the same method at its default C = 1 (no screening, the default).
# Times are CPU seconds of the single-threaded process.
# Kernels: Gaussian widths c(0.1, 0.25, 0.5, 0.75, 1:20) and polynomial degrees 1-3 on the
# feature groups MKL_BENCH_FEATURES ("all,each": 513 kernels on Vehicle, the set of the
# accuracy study in NOTES-kernels.md; default "all": 27). Single-threaded.
# Usage: MKL_BENCH_SPLITS=5 MKL_BENCH_FEATURES=all Rscript bench-vehicle.R [method] [data ...]
suppressPackageStartupMessages({
  library(mklearn)
  library(e1071)
})
args <- commandArgs(trailingOnly = TRUE)
method <- if (length(args)) args[1L] else "hessian"
sets_run <- if (length(args) > 1L) args[-1L] else c("Vehicle", "Glass", "iris")
nsplit <- as.integer(Sys.getenv("MKL_BENCH_SPLITS", "5"))
feat <- strsplit(Sys.getenv("MKL_BENCH_FEATURES", "all"), ",")[[1L]]
ks <- kernel_set(rbf_kernel(sigma = c(0.1, 0.25, 0.5, 0.75, 1:20)), poly_kernel(degree = 1:3),
                 features = feat)
thresholds <- c(3, 40, 150, 250)
Cgrid <- 10^seq(2, 0, by = -0.5)
ctl <- mkl_control(nthreads = 1)

load_data <- function(nm) {
  e <- environment()
  switch(nm,
         Vehicle = {
           data("Vehicle", package = "mlbench", envir = e)
           list(x = as.matrix(Vehicle[, -19]), y = Vehicle$Class)
         },
         Glass = {
           data("Glass", package = "mlbench", envir = e)
           list(x = as.matrix(Glass[, -10]), y = droplevels(Glass$Type))
         },
         iris = list(x = as.matrix(iris[, 1:4]), y = iris$Species))
}
quiet <- function(expr) suppressMessages(suppressWarnings(expr))
# CPU seconds (user + system) of this single-threaded process: on a shared machine the elapsed
# time depends on the other load, the CPU time hardly
cpu <- function() sum(proc.time()[c("user.self", "sys.self")])

res <- NULL
for (nm in sets_run) {
  d <- load_data(nm)
  for (s in seq_len(nsplit)) {
    set.seed(s)
    tr <- sample(nrow(d$x), round(0.8 * nrow(d$x)))
    te <- setdiff(seq_len(nrow(d$x)), tr)
    acc <- function(pred) mean(as.character(pred) == as.character(d$y[te]))
    t0 <- cpu()
    tu <- tune.svm(d$x[tr, ], d$y[tr], gamma = 2^(-8:0), cost = 2^(-1:6))
    t_tune <- cpu() - t0
    a_tune <- acc(predict(tu$best.model, d$x[te, ]))
    t0 <- cpu()
    fdef <- quiet(mkl(d$x[tr, ], d$y[tr], kernels = ks, method = method, control = ctl))
    t_def <- cpu() - t0
    a_def <- acc(predict(fdef, d$x[te, ]))
    set.seed(100 + s)
    fid <- sample(rep(seq_len(5L), length.out = length(tr)))
    t0 <- cpu()
    cvs <- lapply(thresholds, function(th) {
      old <- options(mklearn.screen = th)
      on.exit(options(old))
      quiet(cv.mkl(d$x[tr, ], d$y[tr], kernels = ks, method = method, C = Cgrid,
                   foldid = fid, control = ctl))
    })
    t_cv <- cpu() - t0
    err <- vapply(cvs, function(cv) min(cv$cvm), 1)
    best <- which.min(err)
    a_th <- vapply(cvs, function(cv) acc(predict(cv, d$x[te, ])), 1)
    row <- data.frame(data = nm, split = s, tune_svm = round(a_tune, 3),
                      t_tune = round(t_tune, 1), default = round(a_def, 3),
                      t_default = round(t_def, 1), cv = round(a_th[best], 3),
                      threshold = thresholds[best], C = signif(cvs[[best]]$C.min, 3),
                      t_cv = round(t_cv, 1),
                      per_threshold = paste(sprintf("%g:%.3f", thresholds, a_th), collapse = " "))
    print(row, row.names = FALSE)
    res <- rbind(res, row)
  }
}
cat(sprintf("\nmeans over %d split(s), method %s, features %s\n", nsplit, method,
            paste(feat, collapse = "+")))
print(stats::aggregate(cbind(tune_svm, default, cv, t_tune, t_default, t_cv) ~ data, res, mean),
      digits = 3)
